package dpalgo

import (
	"math"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// The [H20] σ tests use n = 256, d = 8, ε = 0.5, δ = 1/256 (x21N, x21D,
// x21Eps, x21Delta) with the records scaled to R = 0.1 and the unit ℓ2 ball,
// so that T₁ < n. Objective.Props for the logistic AUC loss:
// G = 4R + λB, L = 4R² + λ, α = λ.
func gigaTestData() *pairwise.Dataset { return scaledToyAUC(x21N, x21D, 0.1, 5) }

// [H20] Alg 1 step 3: ρ + 2√(ρ log(1/δ)) = ε. With l = ln 256,
// ρ = (√(l + ε) − √l)² = 0.010789851704111966 for ε = 0.5.
func TestZCDPRhoSolvesAlg1Step3(t *testing.T) {
	rho := zcdpRho(0.5, 1.0/256)
	wantClose(t, "ρ", rho, 0.010789851704111966)
	if got := rho + 2*math.Sqrt(rho*math.Log(256)); math.Abs(got-0.5) > 1e-15 {
		t.Fatalf("ρ + 2√(ρ ln 256) = %.17g, want 0.5", got)
	}
	// tiny ε: no cancellation (ρ ≈ ε²/(4 ln(1/δ)))
	if r := zcdpRho(1e-9, 1e-5); math.Abs(r/(1e-18/(4*math.Log(1e5)))-1) > 1e-6 {
		t.Fatalf("ρ(ε = 1e-9) = %g", r)
	}
}

func TestOnPairStrCSigmasAreAlg1Step12(t *testing.T) {
	// --calibration paper: the printed σ's (certified by the exact accountant).
	// λ = 0.1: G = 0.4 + 0.1 = 0.5, L = 0.04 + 0.1 = 0.14, α = 0.1;
	// T₁ = max{⌈16·0.14²/0.1²⌉, 7} = ⌈31.36⌉ = 32, so n − T₁ = 224 releases.
	// Step 12: σ_t² = 32G²(n − T₁)/(α²t²ρ) = 32·0.25·224/(0.01·t²·0.010789851704111966):
	//   σ_33 = 123.49441719056088, σ_256 = 15.919202215970738.
	// Lemma 4: Δ_t = 8G/(αt) = 40/t.
	obj := lossObjective(t, gigaTestData(), pairwise.AUCLogistic{}, 0.1, 1)
	rec := &recNoise{}
	res, err := runPrivateCal(t, "on-pair-strc", obj, pairwise.RunConfig{}, x21Eps, x21Delta, 0.1, rec, pairwise.CalibrationPaper)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 224 || res.Steps != 224 || res.Privacy.Releases != 224 {
		t.Fatalf("%d draws, %d steps, %d releases; want 224", len(rec.calls), res.Steps, res.Privacy.Releases)
	}
	rho := 0.010789851704111966
	for k, c := range rec.calls {
		tt := float64(33 + k)
		if c.kind != "gaussian" || c.n != x21D {
			t.Fatalf("call %+v", c)
		}
		wantClose(t, "σ_t", c.scale, math.Sqrt(32*0.25*224/(0.01*tt*tt*rho)))
		wantClose(t, "Δ_t", res.Privacy.PaperSensitivity[k], 40/tt)
	}
	wantClose(t, "σ_33", rec.calls[0].scale, 123.49441719056088)
	wantClose(t, "σ_256", rec.calls[223].scale, 15.919202215970738)
	rep := res.Privacy
	if !strings.Contains(rep.Accountant, "zCDP composition") || !strings.Contains(rep.Formula, "Alg 1") ||
		rep.G != 0.5 || math.Abs(rep.L-0.14) > 1e-15 || rep.Alpha != 0.1 {
		t.Fatalf("report %+v", rep)
	}
	// Pairwise GIGA work: Σ_{t=33}^{256} (t − 1) pair gradients.
	if want := int64((255*256 - 31*32) / 2); res.PairGrads != want {
		t.Fatalf("pair gradients %d, want %d", res.PairGrads, want)
	}
}

func TestOffPairStrCSigmaIsAlg3Step9(t *testing.T) {
	// --calibration paper: the printed σ's (certified by the exact accountant).
	// Same G = 0.5, α = 0.1. Step 9: σ² = 128G² ln²n ln(1.25/δ)/(α²n²ε²)
	//   = 128·0.25·ln²256·ln 320/(0.01·65536·0.25): σ = 5.8857956213208311;
	// Δ = 8G ln n/(αn) = 40·ln 256/256 = 0.86643397569993152.
	obj := lossObjective(t, gigaTestData(), pairwise.AUCLogistic{}, 0.1, 1)
	rec := &recNoise{}
	res, err := runPrivateCal(t, "off-pair-strc", obj, pairwise.RunConfig{}, x21Eps, x21Delta, 0.1, rec, pairwise.CalibrationPaper)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 1 || rec.calls[0].kind != "gaussian" || rec.calls[0].n != x21D {
		t.Fatalf("calls %+v", rec.calls)
	}
	wantClose(t, "σ", rec.calls[0].scale, 5.8857956213208311)
	wantClose(t, "Δ", res.Privacy.PaperSensitivity[0], 0.86643397569993152)
	if !strings.Contains(res.Privacy.Formula, "Alg 3 step 9") || !strings.Contains(res.Privacy.Accountant, "single Gaussian release") {
		t.Fatalf("report %+v", res.Privacy)
	}
}

func TestOnPairCSigmasUseAlphaOneOverSqrtN(t *testing.T) {
	// --calibration paper: the printed σ's (certified by the exact accountant).
	// λ = 0: Alg 2 picks α = 1/√256 = 0.0625 (Thm 3: α = O(1/√n)); ℓ̃ = ℓ + (α/2)‖w‖²
	// has G̃ = 0.4 + 0.0625 = 0.4625, L̃ = 0.04 + 0.0625 = 0.1025;
	// T₁ = ⌈16·0.1025²/0.0625²⌉ = ⌈43.03⌉ = 44: 212 releases,
	// σ_45 = 130.3930331096708, σ_256 = 22.92065035130932.
	obj := lossObjective(t, gigaTestData(), pairwise.AUCLogistic{}, 0, 1)
	rec := &recNoise{}
	res, err := runPrivateCal(t, "on-pair-c", obj, pairwise.RunConfig{}, x21Eps, x21Delta, 0.1, rec, pairwise.CalibrationPaper)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 212 {
		t.Fatalf("%d draws, want 212", len(rec.calls))
	}
	wantClose(t, "σ_45", rec.calls[0].scale, 130.3930331096708)
	wantClose(t, "σ_256", rec.calls[211].scale, 22.92065035130932)
	rep := res.Privacy
	wantClose(t, "α", rep.Alpha, 0.0625)
	wantClose(t, "G̃", rep.G, 0.4625)
	wantClose(t, "L̃", rep.L, 0.1025)
	if !hasNote(rep, "α = 0.0625 from 1/√n", "w₀ = 0") {
		t.Fatalf("notes %q", rep.Notes)
	}
	// --lambda sets α instead: then on-pair-c is on-pair-strc on the same loss.
	rec2 := &recNoise{}
	objL := lossObjective(t, gigaTestData(), pairwise.AUCLogistic{}, 0.1, 1)
	res2, err := runPrivateCal(t, "on-pair-c", objL, pairwise.RunConfig{}, x21Eps, x21Delta, 0.1, rec2, pairwise.CalibrationPaper)
	if err != nil {
		t.Fatal(err)
	}
	res3, err := runPrivateCal(t, "on-pair-strc", objL, pairwise.RunConfig{}, x21Eps, x21Delta, 0.1, &recNoise{}, pairwise.CalibrationPaper)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec2.calls) != 224 || res2.Privacy.Alpha != 0.1 {
		t.Fatalf("α from --lambda: %d draws, α = %g", len(rec2.calls), res2.Privacy.Alpha)
	}
	for k := range res2.W {
		if res2.W[k] != res3.W[k] {
			t.Fatal("on-pair-c with --lambda differs from on-pair-strc")
		}
	}
}

func TestOffPairCSigmaIsAlg4(t *testing.T) {
	// --calibration paper: the printed σ's (certified by the exact accountant).
	// α = 1/16, G̃ = 0.4625: σ² = 128G̃² ln²256 ln 320/(α²·65536·0.25), σ = 8.7109775195548327.
	obj := lossObjective(t, gigaTestData(), pairwise.AUCLogistic{}, 0, 1)
	rec := &recNoise{}
	if _, err := runPrivateCal(t, "off-pair-c", obj, pairwise.RunConfig{}, x21Eps, x21Delta, 0.1, rec, pairwise.CalibrationPaper); err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 1 {
		t.Fatalf("calls %+v", rec.calls)
	}
	wantClose(t, "σ", rec.calls[0].scale, 8.7109775195548327)
}

// R = 1, logistic, λ = 1e-3 (the papers' setting): T₁ = ⌈16·4.001²/1e-6⌉ ≈ 2.6·10⁸ ≥ n.
// Alg 1 as printed makes no update and releases nothing: w̄ = w_0.
func TestOnPairStrCInertWhenT1AtLeastN(t *testing.T) {
	obj := lossObjective(t, sigmaTestData(), pairwise.AUCLogistic{}, 1e-3, 1)
	rec := &recNoise{}
	res, err := runPrivate(t, "on-pair-strc", obj, pairwise.RunConfig{}, x21Eps, x21Delta, 1, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 0 || res.Steps != 0 || res.PairGrads != 0 || res.Privacy.Releases != 0 {
		t.Fatalf("inert run drew %d noises, made %d steps", len(rec.calls), res.Steps)
	}
	for _, v := range res.W {
		if v != 0 {
			t.Fatalf("inert run output %v, want w_0 = 0", res.W)
		}
	}
	if !hasNote(res.Privacy, "T₁ = max{⌈16L²/α²⌉, 7} = 2.56", "≥ n = 256", "random/initial point") {
		t.Fatalf("notes %q lack the inert explanation", res.Privacy.Notes)
	}
	// The initial point is cfg.Init projected onto C.
	init := make([]float64, x21D)
	init[0] = 3
	res, err = runPrivate(t, "on-pair-strc", obj, pairwise.RunConfig{Init: init}, x21Eps, x21Delta, 1, rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.W[0] != 1 {
		t.Fatalf("output %v, want Π_C(init) = e_0", res.W)
	}
}

// Alg 3 still perturbs w̃ = w_0 once when T₁ ≥ n: the output is the noisy initial point.
func TestOffPairStrCInertOutputsNoisyInitialPoint(t *testing.T) {
	// --calibration paper: the printed σ's (certified by the exact accountant).
	obj := lossObjective(t, sigmaTestData(), pairwise.AUCLogistic{}, 1e-3, 1)
	rec := &recNoise{shift: 0.25}
	res, err := runPrivateCal(t, "off-pair-strc", obj, pairwise.RunConfig{}, x21Eps, x21Delta, 1, rec, pairwise.CalibrationPaper)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 1 || res.Steps != 0 || res.PairGrads != 0 {
		t.Fatalf("%d draws, %d steps", len(rec.calls), res.Steps)
	}
	for _, v := range res.W { // Π_C(0 + 0.25·1): ‖·‖ = 0.25·√8 < 1, unchanged
		if v != 0.25 {
			t.Fatalf("output %v, want the shifted initial point", res.W)
		}
	}
	if !hasNote(res.Privacy, "≥ n = 256", "random/initial point plus noise") {
		t.Fatalf("notes %q", res.Privacy.Notes)
	}
	// The default exact calibration: w̃ = w_0 reads no record (Δ = 0), so no
	// noise is needed and none is drawn; the output is w_0 itself.
	rec = &recNoise{}
	res, err = runPrivate(t, "off-pair-strc", obj, pairwise.RunConfig{}, x21Eps, x21Delta, 1, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 0 || res.Privacy.Sensitivity[0] != 0 || !hasNote(res.Privacy, "WARNING", "does not train") {
		t.Fatalf("exact inert run: %d draws, Δ = %v, notes %q", len(rec.calls), res.Privacy.Sensitivity, res.Privacy.Notes)
	}
	for _, v := range res.W {
		if v != 0 {
			t.Fatalf("exact inert output %v, want w_0 = 0", res.W)
		}
	}
}

// Alg 3 with zero noise equals a direct transcription of its box for the
// logistic AUC loss: w_t = 0 for t ≤ T₁; for t > T₁,
// η_t = (t−1)/(t−2)·2/(αt), ∇L̂_t = 1/(t−1) Σ_{i<t} −c(x_t − x_i)/(1 + e^{c·wᵀ(x_t − x_i)}) + λw
// with c = y_t − y_i, w ← Π_{‖w‖≤B}(w − η_t∇L̂_t); w̃ = (w_1 + … + w_n)/n.
func TestOffPairStrCMatchesAlg3Box(t *testing.T) {
	const n, d, lambda, B = 60, 3, 0.1, 1.0
	ds := scaledToyAUC(n, d, 0.1, 8)
	obj := lossObjective(t, ds, pairwise.AUCLogistic{}, lambda, B)
	res, err := runPrivate(t, "off-pair-strc", obj, pairwise.RunConfig{}, 1, 0.01, 0.1, &recNoise{})
	if err != nil {
		t.Fatal(err)
	}
	const T1 = 32 // ⌈16·0.14²/0.1²⌉
	w := make([]float64, d)
	sum := make([]float64, d)
	for tt := T1 + 1; tt <= n; tt++ {
		eta := float64(tt-1) / float64(tt-2) * 2 / (lambda * float64(tt))
		g := make([]float64, d)
		xt := ds.X[(tt-1)*d : tt*d]
		for i := 1; i < tt; i++ {
			xi := ds.X[(i-1)*d : i*d]
			c := ds.Y[tt-1] - ds.Y[i-1]
			var h float64
			for k := range w {
				h += w[k] * (xt[k] - xi[k])
			}
			for k := range g {
				g[k] += -c * (xt[k] - xi[k]) / (1 + math.Exp(c*h)) / float64(tt-1)
			}
		}
		var nrm float64
		for k := range w {
			w[k] -= eta * (g[k] + lambda*w[k])
			nrm += w[k] * w[k]
		}
		if nrm = math.Sqrt(nrm); nrm > B {
			for k := range w {
				w[k] *= B / nrm
			}
		}
		for k := range w {
			sum[k] += w[k]
		}
	}
	for k := range sum {
		if want := sum[k] / n; math.Abs(res.W[k]-want) > 1e-12 {
			t.Fatalf("coordinate %d: %.17g, want %.17g", k, res.W[k], want)
		}
	}
}

// Alg 1 perturbs only the released copy: with noise that shifts every
// coordinate by u (and no projection binding), the returned average moves by
// exactly u·(n − 1 − T₁)/(n − 1) — the noise-free trajectory is unchanged.
func TestOnPairStrCNoiseIsNotFedBack(t *testing.T) {
	const n = 80
	ds := scaledToyAUC(n, 3, 0.1, 9)
	obj := lossObjective(t, ds, pairwise.AUCLogistic{}, 0.1, 10) // B = 10: no projection binds
	base, err := runPrivate(t, "on-pair-strc", obj, pairwise.RunConfig{}, 1, 0.01, 0.1, &recNoise{})
	if err != nil {
		t.Fatal(err)
	}
	// G = 0.4 + 0.1·10 = 1.4 does not enter T₁ = ⌈16·0.14²/0.01⌉ = 32.
	const u = 0.01
	shifted, err := runPrivate(t, "on-pair-strc", obj, pairwise.RunConfig{}, 1, 0.01, 0.1, &recNoise{shift: u})
	if err != nil {
		t.Fatal(err)
	}
	want := u * float64(n-1-32) / float64(n-1)
	for k := range base.W {
		if math.Abs(shifted.W[k]-base.W[k]-want) > 1e-12 {
			t.Fatalf("coordinate %d moved by %.17g, want %.17g", k, shifted.W[k]-base.W[k], want)
		}
	}
}

// gigaSensitivities (the tight per-iterate bound): never above Lemma 4's
// 8G/(αt) for Γ ≤ 2G, near 2Γ/(αt) once t ≫ T₁ (the fixed point of
// B_t = (1 − 2/t)B_{t−1} + 2Γ/(αt²) is 2Γ/(αt)), capped by the diameter,
// and the bound an exact-calibration run reports and calibrates to.
func TestGIGASensitivityRecursion(t *testing.T) {
	const n, T1, alpha, L, gamma = 20000, 32, 0.1, 0.14, 0.4
	G := 0.5
	b := gigaSensitivities(n, T1, alpha, L, gamma, math.Inf(1))
	if len(b) != n-T1 {
		t.Fatalf("%d bounds, want %d", len(b), n-T1)
	}
	for k, v := range b {
		tt := float64(T1 + 1 + k)
		if !(v > 0) || v > 8*G/(alpha*tt) {
			t.Fatalf("t = %v: B_t = %g not in (0, 8G/(αt) = %g]", tt, v, 8*G/(alpha*tt))
		}
	}
	// B_{T₁+1} = η_{T₁+1}Γ exactly (the replaced record is the current one).
	t0 := float64(T1 + 1)
	wantClose(t, "B_{T₁+1}", b[0], (t0-1)/(t0-2)*2/(alpha*t0)*gamma*(1+1e-12))
	if r := b[n-T1-1] * alpha * n / gamma; r < 1.95 || r > 2.05 {
		t.Fatalf("B_n·αn/Γ = %g, want ≈ 2", r)
	}
	capped := gigaSensitivities(n, T1, alpha, L, gamma, 0.05)
	if capped[0] != 0.05 {
		t.Fatalf("B_{T₁+1} = %g with diam 0.05, want the diameter", capped[0])
	}
	for k := range capped {
		if capped[k] > 0.05 || capped[k] > b[k] {
			t.Fatalf("t = %d: capped %g above min{diam = 0.05, uncapped %g}", T1+1+k, capped[k], b[k])
		}
	}
	if got := gigaSensitivities(10, 10, alpha, L, gamma, 1); len(got) != 0 {
		t.Fatalf("T₁ = n: %v, want no releases", got)
	}

	// The exact run uses it: n = 256, R = 0.1, λ = 0.1 (G = 0.5, L = 0.14,
	// α = 0.1, T₁ = 32, Γ = 4R = 0.4).
	obj := lossObjective(t, gigaTestData(), pairwise.AUCLogistic{}, 0.1, 1)
	res, err := runPrivateCal(t, "on-pair-strc", obj, pairwise.RunConfig{}, x21Eps, x21Delta, 0.1, &recNoise{}, pairwise.CalibrationExact)
	if err != nil {
		t.Fatal(err)
	}
	want := gigaSensitivities(256, 32, 0.1, 0.14, 0.4, paramDiameter(obj))
	rep := res.Privacy
	if len(rep.Sensitivity) != len(want) {
		t.Fatalf("%d sensitivities, want %d", len(rep.Sensitivity), len(want))
	}
	for k := range want {
		wantClose(t, "Δ_t", rep.Sensitivity[k], math.Min(want[k], rep.PaperSensitivity[k]))
		if rep.Sensitivity[k] > rep.PaperSensitivity[k]/3 {
			t.Fatalf("t = %d: Δ_t = %g is not 3× below Lemma 4's %g", 33+k, rep.Sensitivity[k], rep.PaperSensitivity[k])
		}
	}
	off, err := runPrivateCal(t, "off-pair-strc", obj, pairwise.RunConfig{}, x21Eps, x21Delta, 0.1, &recNoise{}, pairwise.CalibrationExact)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, v := range want {
		sum += v
	}
	wantClose(t, "offline Δ", off.Privacy.Sensitivity[0], sum/256*(1+1e-12))
}
