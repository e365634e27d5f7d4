package dpalgo

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// The privacy-loss bound of the proof, checked against the exact loss:
// for small datasets D and D' that differ in one record (label flips,
// z' = ±z, random), at random θ of every scale, the log density ratio
// ln p_D(θ) − ln p_{D'}(θ) = [‖b_{D'}‖² − ‖b_D‖²]/(2σ²) + ln det ∇²F_D − ln det ∇²F_{D'}
// (b_D = −∇F_D(θ), computed by the algorithm's own gradient and Hessian)
// never exceeds ε_J + max(2|A| + a², 2|B| + b²)/(2σ²), A = b_Dᵀ(z − z'),
// B = b_Dᵀ(z + z'), a = ‖z − z'‖, b = ‖z + z'‖ — in both directions.
func TestObjPertPrivacyLossBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const sigma, lam = 2.5, 1.7
	epsJ := math.Log1p(opBeta / lam)
	d, n := 2, 6
	p := d + 1
	grad := func(ds *pairwise.Dataset, th []float64) ([]float64, float64) {
		o := &opRows{ds: ds, scale: opFeat, p: p}
		g := make([]float64, p)
		H := mat.NewSymDense(p, nil)
		opGradHess(o, lam, make([]float64, p), th, g, H, make([]float64, p), make([]float64, opBlock*p))
		var ch mat.Cholesky
		if !ch.Factorize(H) {
			t.Fatal("Hessian not positive definite")
		}
		for j := range g {
			g[j] = -g[j]
		}
		return g, ch.LogDet()
	}
	z := func(ds *pairwise.Dataset, i int) []float64 {
		return (&opRows{ds: ds, scale: opFeat, p: p}).row(make([]float64, p), i)
	}
	worst := 0.0
	for trial := 0; trial < 3000; trial++ {
		x := make([]float64, n*d)
		y := make([]float64, n)
		for i := range y {
			y[i] = float64(2*r.IntN(2) - 1)
			a, rad := 2*math.Pi*r.Float64(), math.Sqrt(r.Float64())
			x[i*d], x[i*d+1] = rad*math.Cos(a), rad*math.Sin(a)
		}
		D := pairwise.NewDense(x, y, d)
		x2 := append([]float64(nil), x...)
		y2 := append([]float64(nil), y...)
		switch trial % 4 {
		case 0: // the label flipped, the record unchanged
			y2[0] = -y[0]
		case 1: // the opposite point, the label flipped
			x2[0], x2[1], y2[0] = -x[0], -x[1], -y[0]
		case 2: // the opposite point, same label
			x2[0], x2[1] = -x[0], -x[1]
		default:
			a := 2 * math.Pi * r.Float64()
			x2[0], x2[1], y2[0] = math.Cos(a), math.Sin(a), float64(2*r.IntN(2)-1)
		}
		D2 := pairwise.NewDense(x2, y2, d)
		th := make([]float64, p)
		scale := math.Pow(10, 3*r.Float64()-1)
		for j := range th {
			th[j] = scale * r.NormFloat64()
		}
		for _, pair := range [][2]*pairwise.Dataset{{D, D2}, {D2, D}} {
			b1, ld1 := grad(pair[0], th)
			b2, ld2 := grad(pair[1], th)
			var n1, n2 float64
			for j := range b1 {
				n1 += b1[j] * b1[j]
				n2 += b2[j] * b2[j]
			}
			L := (n2-n1)/(2*sigma*sigma) + ld1 - ld2
			z1, z2 := z(pair[0], 0), z(pair[1], 0)
			var A, B, a2, bb2 float64
			for j := range z1 {
				A += b1[j] * (z1[j] - z2[j])
				B += b1[j] * (z1[j] + z2[j])
				a2 += (z1[j] - z2[j]) * (z1[j] - z2[j])
				bb2 += (z1[j] + z2[j]) * (z1[j] + z2[j])
			}
			bound := epsJ + math.Max(2*math.Abs(A)+a2, 2*math.Abs(B)+bb2)/(2*sigma*sigma)
			if L > bound+1e-9*(1+math.Abs(bound)) {
				t.Fatalf("trial %d: privacy loss %.6g above the bound %.6g (θ scale %g)", trial, L, bound, scale)
			}
			worst = math.Max(worst, L/bound)
		}
	}
	t.Logf("largest loss ÷ bound over the trials: %.4f", worst)
	if worst < 0.5 {
		t.Errorf("the bound is never approached (%.3f): the trials miss the worst cases", worst)
	}
}

// bigExp returns e^x to about prec bits: e^{x/2^k} by its series (|x/2^k|
// ≤ 1/16), squared k times.
func bigExp(x *big.Float, prec uint) *big.Float {
	xf, _ := x.Float64()
	k := 12
	if a := math.Abs(xf); a > 1 {
		k += int(math.Ceil(math.Log2(a)))
	}
	y := new(big.Float).SetPrec(prec).SetMantExp(x, -k)
	sum := new(big.Float).SetPrec(prec).SetFloat64(1)
	term := new(big.Float).SetPrec(prec).SetFloat64(1)
	for j := 1; j < 60; j++ {
		term.Mul(term, y)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64(j)))
		sum.Add(sum, term)
	}
	for i := 0; i < k; i++ {
		sum.Mul(sum, sum)
	}
	return sum
}

// The solver's certificate is a true upper bound: ‖∇J_b(θ)‖ recomputed
// at 300 bits from the same float records, θ and b is below what
// opCertify states, at the solver's output and at points off the
// optimum; the output's certificate is below γ, and a θ moved by 10⁻⁶
// is not certified. Twice: ordinary data, and separable data with a tiny
// ridge (10⁻³, below the mechanism's Λ ≥ 1), whose optimum is far out
// (‖θ‖ ≈ 6.6·10³) — the allowance does not grow with ‖θ‖, and the
// certificate still holds with room.
func TestObjPertCertificate(t *testing.T) {
	for _, c := range []struct {
		name string
		mu   float64
		lam  float64
	}{{"ordinary", 1, 2.4}, {"separable, tiny ridge", 12, 1e-3}} {
		t.Run(c.name, func(t *testing.T) { objPertCertificate(t, c.mu, c.lam) })
	}
}

func objPertCertificate(t *testing.T, mu, lam float64) {
	const prec = 300
	ds := toyAUC(1500, 6, mu, 5)
	R := ds.MaxNorm()
	p := ds.D + 1
	o := &opRows{ds: ds, scale: opFeat / R, p: p}
	r := rand.New(rand.NewPCG(9, 1))
	b := make([]float64, p)
	for j := range b {
		b[j] = 8 * r.NormFloat64()
	}
	gamma := 1e-11*float64(ds.N) + 1e-9
	th, steps, cert, err := opSolve(context.Background(), o, lam, b, gamma)
	if err != nil {
		t.Fatal(err)
	}
	exact := func(th []float64) float64 {
		g := make([]*big.Float, p)
		for j := range g {
			g[j] = new(big.Float).SetPrec(prec).Mul(new(big.Float).SetFloat64(lam), new(big.Float).SetFloat64(th[j]))
			g[j].Add(g[j], new(big.Float).SetFloat64(b[j]))
		}
		z := make([]float64, p)
		for i := 0; i < ds.N; i++ {
			o.row(z, i)
			m := new(big.Float).SetPrec(prec)
			for k := range z {
				m.Add(m, new(big.Float).SetPrec(prec).Mul(new(big.Float).SetFloat64(th[k]), new(big.Float).SetFloat64(z[k])))
			}
			m.Mul(m, new(big.Float).SetFloat64(ds.Y[i]))
			// c = −y/(1 + e^m)
			c := new(big.Float).SetPrec(prec).Add(new(big.Float).SetPrec(prec).SetFloat64(1), bigExp(m, prec))
			c.Quo(new(big.Float).SetPrec(prec).SetFloat64(-ds.Y[i]), c)
			for k := range z {
				g[k].Add(g[k], new(big.Float).SetPrec(prec).Mul(c, new(big.Float).SetFloat64(z[k])))
			}
		}
		var s float64
		for _, v := range g {
			f, _ := v.Float64()
			s += f * f
		}
		return math.Sqrt(s)
	}
	if e := exact(th); !(e <= cert) || !(cert <= gamma) {
		t.Fatalf("output after %d steps: exact ‖∇J‖ = %.4g, certified %.4g, γ = %.4g", steps, e, cert, gamma)
	} else {
		t.Logf("output after %d Newton steps, ‖θ‖ = %.3g: exact ‖∇J‖ = %.3g, certified %.3g, γ = %.3g", steps, pairwise.Norm2(th), e, cert, gamma)
	}
	off := append([]float64(nil), th...)
	off[0] += 1e-6
	if c := opCertify(o, lam, b, off); c <= gamma {
		t.Errorf("θ moved by 10⁻⁶ certified at %.3g ≤ γ", c)
	}
	for k := 0; k < 5; k++ {
		pt := append([]float64(nil), th...)
		for j := range pt {
			pt[j] += math.Pow(10, -float64(3+2*k)) * r.NormFloat64()
		}
		if e, c := exact(pt), opCertify(o, lam, b, pt); !(e <= c) {
			t.Errorf("off the optimum (10^-%d): exact ‖∇J‖ = %.6g above the certificate %.6g", 3+2*k, e, c)
		}
	}
}

// At ε = 1 on 20 000 records dp-objpert comes within 0.01 AUC of the
// noise-free ridge-logistic fit (the same code with b = 0, Λ = 10⁻⁶) on
// a held-out set, for each of 5 seeded runs; the report certifies the
// request; sparse and dense records give the same bits.
func TestObjPertLearns(t *testing.T) {
	train, test := toyAUC(20000, 8, 0.6, 21), toyAUC(4000, 8, 0.6, 22)
	R := math.Max(train.MaxNorm(), test.MaxNorm())
	obj, err := pairwise.NewObjective(train, pairwise.ObjectiveConfig{Loss: pairwise.AUCLogistic{}, Radius: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	o := &opRows{ds: train, scale: opFeat / R, p: train.D + 1}
	th, _, _, err := opSolve(context.Background(), o, 1e-6, make([]float64, o.p), 1e-11*float64(train.N)+1e-9)
	if err != nil {
		t.Fatal(err)
	}
	ceiling := pairwise.LinearAUC(th[:train.D], test)
	for seed := uint64(1); seed <= 5; seed++ {
		priv := &pairwise.Privacy{Epsilon: 1, Delta: 1e-5, FeatureRadius: R, Noise: dp.NewSeededNoise(seed)}
		res, err := objPertAlg.Run(context.Background(), obj, pairwise.RunConfig{Privacy: priv}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := pairwise.LinearAUC(res.W, test)
		if got < ceiling-0.01 {
			t.Errorf("seed %d: AUC %.4f, noise-free fit %.4f", seed, got, ceiling)
		}
		rep := res.Privacy
		if rep.Mechanism != "objective-perturbation" || rep.CertifiedEpsilon != 1 || !(rep.CertifiedDelta <= 1e-5 && rep.CertifiedDelta > 0.9e-5) || rep.Private {
			t.Errorf("report: %s, certified (%v, %v), private %v (seeded noise: not private)", rep.Mechanism, rep.CertifiedEpsilon, rep.CertifiedDelta, rep.Private)
		}
		if seed == 1 {
			t.Logf("AUC %.4f vs noise-free %.4f; %s", got, ceiling, rep.Formula)
			sp, err := pairwise.NewObjective(toSparse(train), pairwise.ObjectiveConfig{Loss: pairwise.AUCLogistic{}, Radius: 1e6})
			if err != nil {
				t.Fatal(err)
			}
			priv.Noise = dp.NewSeededNoise(seed)
			res2, err := objPertAlg.Run(context.Background(), sp, pairwise.RunConfig{Privacy: priv}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !sameBits(res.W, res2.W) {
				t.Error("sparse records gave other bits than dense ones")
			}
		}
	}
}

// Requests the proof does not cover are refused before any noise is drawn.
func TestObjPertRefuses(t *testing.T) {
	ds := toyAUC(50, 3, 1, 1)
	obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: pairwise.AUCLogistic{}, Radius: 1})
	if err != nil {
		t.Fatal(err)
	}
	R := ds.MaxNorm()
	for name, c := range map[string]struct {
		cfg  pairwise.RunConfig
		want string
	}{
		"paper calibration": {pairwise.RunConfig{Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-5, FeatureRadius: R, Calibration: pairwise.CalibrationPaper}}, "--calibration paper"},
		"steps":             {pairwise.RunConfig{Steps: 5, Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-5, FeatureRadius: R}}, "--steps"},
		"pure DP":           {pairwise.RunConfig{Privacy: &pairwise.Privacy{Epsilon: 1, FeatureRadius: R}}, "δ"},
		"radius":            {pairwise.RunConfig{Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-5, FeatureRadius: R / 2}}, "radius"},
	} {
		src := dp.NewSeededNoise(1)
		c.cfg.Privacy.Noise = src
		_, err := objPertAlg.Run(context.Background(), obj, c.cfg, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one naming %q", name, err, c.want)
		}
	}
	if _, err := NewObjPertPlan(1, 3, 1, 1e-5); err == nil {
		t.Error("n = 1 accepted")
	}
	if _, err := NewObjPertPlan(100, 3, 1, 1e-300); err == nil {
		t.Error("δ below the discrete noise's allowance accepted")
	}
}
