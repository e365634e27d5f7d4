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

func auc(w []float64, X [][]float64, y []float64, idx []int) float64 {
	type sc struct {
		s   float64
		pos bool
	}
	var v []sc
	for _, i := range idx {
		v = append(v, sc{pairwise.Dot(w, X[i]), y[i] > 0})
	}
	slices.SortFunc(v, func(a, b sc) int {
		switch {
		case a.s < b.s:
			return -1
		case a.s > b.s:
			return 1
		}
		return 0
	})
	var rank, pos, neg float64
	for i := 0; i < len(v); {
		j := i
		for j < len(v) && v[j].s == v[i].s {
			j++
		}
		avg := float64(i+j+1) / 2
		for k := i; k < j; k++ {
			if v[k].pos {
				rank += avg
				pos++
			} else {
				neg++
			}
		}
		i = j
	}
	return (rank - pos*(pos+1)/2) / (pos * neg)
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
