// Command probe decomposes dp-ssp-mean's error on a digit task at small n
// (issue 25, docs/results/extdata.md "Why"): on the same splits and the
// same Gaussian draws it scores the class-mean direction
//
//	A  w = Ŝ₊/n̂₊ − Ŝ₋/n̂₋   (dp-ssp-mean: noisy sums, noisy count)
//	B  w = Ŝ₊/n₊ − Ŝ₋/n₋   (noisy sums, exact counts)
//	C  w = S₊/n̂₊ − S₋/n̂₋   (exact sums, noisy count)
//	F  w = S₊/n₊ − S₋/n₋   (the non-private floor)
//	U  w = Ŝ₊ − Ŝ₋         (the unweighted difference, what a first
//	                        logistic gradient step from w = 0 estimates)
//	U0 w = S₊ − S₋
//
// with the σ dp-ssp-mean uses (Δ = 2 on (S₊/R, S₋/R, √2·n₊), σ = Δ/μ, μ
// the Gaussian-DP parameter of (ε, δ = 1/(10n))), on records mapped as
// `pairfed train --feature-bounds` maps them for an algorithm that does not
// centre privately (the box onto [−1, 1]^d, then clipped to ‖x‖ ≤ 1). It
// prints the norms that decide: ‖b‖ of the class-mean difference, the
// noise's expected norm on b, and ‖m‖ of the records' mean. A diagnostic,
// seeded: NOT a private run.
//
//	go run ./scripts/extdata/probe -file DIR/mnist16.libsvm -schema DIR/mnist16-0.json -n 256 -eps 0.5
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
)

func main() {
	file := flag.String("file", "", "LIBSVM file")
	schemaPath := flag.String("schema", "", "the task's schema (positive_class, one [lo, hi] for every pixel)")
	n := flag.Int("n", 256, "training records")
	eps := flag.Float64("eps", 0.5, "ε")
	runs := flag.Int("runs", 200, "runs")
	mode := flag.String("mode", "mean", "mean: dp-ssp-mean's decomposition; lda: dp-lda's (below)")
	flag.Parse()
	sch, err := data.LoadSchema(*schemaPath)
	if err != nil {
		log.Fatal(err)
	}
	var opt data.Options
	if _, err := sch.Apply(&opt); err != nil {
		log.Fatal(err)
	}
	t, err := data.Load(*file, opt)
	if err != nil {
		log.Fatal(err)
	}
	lo, hi := *sch.Features[0].Lo, *sch.Features[0].Hi
	d := t.D
	if *mode == "lda" {
		probeLDA(t, lo, hi, *n, *eps, *runs)
		return
	}
	X := make([][]float64, t.N)
	for i := range X {
		row := make([]float64, d)
		t.DenseRowTo(row, i)
		for j := range row {
			row[j] = 2*(row[j]-lo)/(hi-lo) - 1
		}
		if nr := pairwise.Norm2(row); nr > 1 {
			pairwise.Scale(1/nr, row)
		}
		X[i] = row
	}
	rec, err := dpalgo.RecommendPrivate(pairwise.TaskAUC, *n, d, *eps, 1/(10*float64(*n)), "")
	if err != nil {
		log.Fatal(err)
	}
	sigma := 2 / rec.Mu
	fmt.Printf("%s n=%d d=%d ε=%g: μ=%.4f t=%.2f rule=%s σ=%.2f\n", *schemaPath, *n, d, *eps, rec.Mu, rec.Score, rec.Algo, sigma)
	rng := rand.New(rand.NewPCG(1, 2))
	var aucs [6][]float64
	var nb, nm, nnoise float64
	for r := 0; r < *runs; r++ {
		perm := rng.Perm(t.N)
		nte := t.N / 5
		te, tr := perm[:nte], perm[nte:nte+*n]
		S := [2][]float64{make([]float64, d), make([]float64, d)}
		var np float64
		for _, i := range tr {
			k := 0
			if t.Y[i] > 0 {
				k, np = 1, np+1
			}
			pairwise.Axpy(1, X[i], S[k])
		}
		if np == 0 || np == float64(*n) {
			continue
		}
		nneg := float64(*n) - np
		noisy := [2][]float64{slices.Clone(S[0]), slices.Clone(S[1])}
		for k := range noisy {
			for j := range noisy[k] {
				noisy[k][j] += sigma * rng.NormFloat64()
			}
		}
		npHat := math.Min(math.Max(np+sigma/math.Sqrt2*rng.NormFloat64(), 1), float64(*n)-1)
		dir := func(s [2][]float64, p, q float64) []float64 {
			w := make([]float64, d)
			pairwise.Axpy(1/p, s[1], w)
			pairwise.Axpy(-1/q, s[0], w)
			return w
		}
		ws := [6][]float64{dir(noisy, npHat, float64(*n)-npHat), dir(noisy, np, nneg), dir(S, npHat, float64(*n)-npHat), dir(S, np, nneg), dir(noisy, 1, 1), dir(S, 1, 1)}
		for k, w := range ws {
			aucs[k] = append(aucs[k], auc(w, X, t.Y, te))
		}
		b := ws[3]
		nb += pairwise.Norm2(b)
		m := make([]float64, d)
		pairwise.Axpy(1/float64(*n), S[0], m)
		pairwise.Axpy(1/float64(*n), S[1], m)
		nm += pairwise.Norm2(m)
		nnoise += sigma * math.Sqrt(float64(d)*(1/(np*np)+1/(nneg*nneg)))
	}
	k := float64(len(aucs[0]))
	fmt.Printf("  ‖b‖ = %.3f, ‖m‖ = %.3f, E‖noise on b‖ ≈ %.3f (exact counts)\n", nb/k, nm/k, nnoise/k)
	for i, name := range []string{"A dp-ssp-mean (noisy sums, noisy count)", "B noisy sums, exact counts", "C exact sums, noisy count", "F non-private class-mean", "U Ŝ₊ − Ŝ₋ (noisy, unweighted)", "U0 S₊ − S₋ (exact, unweighted)"} {
		m, se := meanSE(aucs[i])
		fmt.Printf("  %-42s AUC %.3f ± %.3f\n", name, m, se)
	}
}

// auc is the test AUC of the linear scorer w over the records idx
// (pairwise.AUC: ties count one half).
func auc(w []float64, X [][]float64, y []float64, idx []int) float64 {
	scores, labels := make([]float64, len(idx)), make([]float64, len(idx))
	for k, i := range idx {
		scores[k], labels[k] = pairwise.Dot(w, X[i]), y[i]
	}
	return pairwise.AUC(scores, labels)
}

func meanSE(v []float64) (float64, float64) {
	var m, s float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s/float64(len(v)-1)) / math.Sqrt(float64(len(v)))
}

// probeLDA decomposes dp-lda's error (-mode lda): records mapped as dp-lda
// reads them (the box onto [−1, 1]^d, divided by M = √d), then on the same
// split and the same draws
//
//	full    noisy centre, noisy sums, count and second moment, dp-lda's λ
//	centre  the exact centre, the statistics noisy as in full
//	mom     noisy centre; only the second moment noisy
//	sums    noisy centre; only the sums and count noisy
//	ridge   noisy centre, no noise on the statistics, dp-lda's λ
//	fisher  noisy centre, no noise, λ = 10⁻⁶ (the signs' Fisher direction)
//	        and no noise at λ/4 and 4λ; noisy at λ/4 and λ/2
//
// σ_A = 2/(μ/2), σ_B = 2/(√(3/4)·μ) (dp-lda's split, without the secure
// sampler's snapping allowance); noise per coordinate σ_B/a on the sums
// (a = 1/R), σ_B/b on a diagonal moment entry (b = 1/(√2R²)) and σ_B/(√2b)
// off it (sspVector's weights), σ_B on the count (c = 1).
func probeLDA(t *data.Table, lo, hi float64, n int, eps float64, runs int) {
	d := t.D
	M := math.Sqrt(float64(d))
	X := make([]float64, 0, t.N*d)
	row := make([]float64, d)
	for i := 0; i < t.N; i++ {
		t.DenseRowTo(row, i)
		for j := range row {
			row[j] = (2*(row[j]-lo)/(hi-lo) - 1) / M
		}
		X = append(X, row...)
	}
	if n <= 0 {
		n = t.N - t.N/5 // the full training side
	}
	rec, err := dpalgo.RecommendPrivate(pairwise.TaskAUC, n, d, eps, 1/(10*float64(n)), "")
	if err != nil {
		log.Fatal(err)
	}
	mu := rec.Mu
	sA, sB := 2/(mu/2), 2/(math.Sqrt(0.75)*mu)
	fmt.Printf("dp-lda decomposition n=%d d=%d ε=%g: μ=%.4f t=%.2f s=μn/d^1.5=%.3f rule=%s σ_A=%.2f σ_B=%.2f\n", n, d, eps, mu, rec.Score, mu*float64(n)/math.Pow(float64(d), 1.5), rec.Algo, sA, sB)
	names := []string{"full (≈ dp-lda)", "centre exact", "only the moment noisy", "only the sums and count noisy", "no noise, dp-lda's λ", "no noise, λ = 1e-6 (Fisher on signs)", "no noise, λ/4", "no noise, 4λ", "noisy, λ/4", "noisy, λ/2"}
	aucs := make([][]float64, len(names))
	rng := rand.New(rand.NewPCG(3, 4))
	var lam float64
	for r := 0; r < runs; r++ {
		perm := rng.Perm(t.N)
		nte := t.N / 5
		te, tr := perm[:nte], perm[nte:]
		tr = tr[:min(n, len(tr))]
		xs := make([]float64, 0, len(tr)*d)
		ys := make([]float64, 0, len(tr))
		for _, i := range tr {
			xs = append(xs, X[i*d:(i+1)*d]...)
			ys = append(ys, t.Y[i])
		}
		ds := pairwise.NewDense(xs, ys, d)
		nt := float64(ds.N)
		exactC := make([]float64, d)
		vA := dpalgo.LDACentreVector(ds, 1)
		for j := range vA {
			exactC[j] = vA[j] / nt
			vA[j] += sA * rng.NormFloat64()
		}
		noisyC := dpalgo.LDACentre(vA, nt, 1)
		stN := dpalgo.LDASignStats(ds, noisyC, 1)
		stE := dpalgo.LDASignStats(ds, exactC, 1)
		noise := func(st *dpalgo.SSPStats, sums, mom bool) *dpalgo.SSPStats {
			o := st.Clone()
			if sums {
				for j := 0; j < d; j++ {
					o.SumPos[j] += sB * rng.NormFloat64()
					o.SumNeg[j] += sB * rng.NormFloat64()
				}
				o.NPos += sB * rng.NormFloat64()
			}
			if mom {
				p := 0
				for k := 0; k < d; k++ {
					for l := k; l < d; l++ {
						s := sB // off-diagonal: weight √2·b = 1/R²
						if l == k {
							s *= math.Sqrt2 // diagonal: weight b = 1/(√2R²)
						}
						o.Mom[p] += s * rng.NormFloat64()
						p++
					}
				}
			}
			return o
		}
		lam = 2*sB*math.Sqrt(float64(d))/nt + 1e-6
		cases := []struct {
			st  *dpalgo.SSPStats
			lam float64
		}{
			{noise(stN, true, true), lam}, {noise(stE, true, true), lam}, {noise(stN, false, true), lam},
			{noise(stN, true, false), lam}, {stN, lam}, {stN, 1e-6}, {stN, lam / 4}, {stN, 4 * lam}, {noise(stN, true, true), lam / 4}, {noise(stN, true, true), lam / 2},
		}
		for k, c := range cases {
			w, _, err := dpalgo.SolveSSP(c.st, c.lam)
			if err != nil {
				log.Fatal(err)
			}
			Xte := make([][]float64, t.N)
			for _, i := range te {
				Xte[i] = X[i*d : (i+1)*d]
			}
			aucs[k] = append(aucs[k], auc(w, Xte, t.Y, te))
		}
	}
	fmt.Printf("  λ = %.4g\n", lam)
	for k, name := range names {
		m, se := meanSE(aucs[k])
		fmt.Printf("  %-40s AUC %.3f ± %.3f\n", name, m, se)
	}
}
