// Command ldaprobe measures the ceiling of dp-lda's estimator family on a
// data set: the ridge Fisher direction w = (Σ + λI)⁻¹(μ₊ − μ₋) computed
// WITHOUT noise (exact centre, exact statistics) over a path of ridges λ,
// from λ ≈ 0 (dp-lda's regime at large n) to λ = ∞ (the class-mean
// difference), both on the records' spatial signs around the centre (what
// dp-lda releases) and on the centred records themselves. No
// post-processing of dp-lda's release — a shrinkage intensity, an
// eigenvalue floor, a different budget split — can give a direction
// outside this family, so its best test AUC over λ bounds what such a
// change can reach on the data (issue 25: docs/results/regret-failing.md).
// Not a private computation: a diagnostic on public benchmark files.
//
//	go run ./scripts/ldaprobe -data <shared datasets> -ds ijcnn1
//	go run ./scripts/ldaprobe -data DIR -file spam.libsvm -schema DIR/spam.json
//
// Scaling: the public schema (schemas/<ds>.json), divided so that ‖x‖ ≤ 1
// (dp-lda's --bounds-norm divide), then clipped to the unit ball, as
// `pairfed train --feature-bounds` prepares dp-lda's records; features the
// schema leaves unknown (messidor) get their training minimum and maximum.
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"path/filepath"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
)

var files = map[string][2]string{
	"ijcnn1":   {"ijcnn1.trn.bz2", "ijcnn1.tst.bz2"},
	"a9a":      {"a9a", "a9a.t"},
	"diabetes": {"diabetes", ""},
	"messidor": {"messidor_features.arff", ""},
}

func main() {
	dir := flag.String("data", "", "folder with the dataset files (see its README)")
	name := flag.String("ds", "ijcnn1", "data set: ijcnn1, a9a (their own test files) or diabetes, messidor (a stratified 80/20 split, seed 1)")
	file := flag.String("file", "", "a file under -data instead of -ds (a stratified 80/20 split, seed 1), with -schema")
	schemaPath := flag.String("schema", "", "with -file: its feature-bounds schema")
	flag.Parse()
	fl, ok := files[*name]
	sp := filepath.Join("schemas", *name+".json")
	if *file != "" {
		if *schemaPath == "" {
			log.Fatal("ldaprobe: -file needs -schema")
		}
		fl, ok, sp, *name = [2]string{*file, ""}, true, *schemaPath, *file
	}
	if !ok {
		log.Fatalf("ldaprobe: unknown data set %q (known: ijcnn1, a9a, diabetes, messidor)", *name)
	}
	schema, err := data.LoadSchema(sp)
	if err != nil {
		log.Fatal(err)
	}
	var opt data.Options
	if _, err := schema.Apply(&opt); err != nil {
		log.Fatal(err)
	}
	tr, err := data.Load(filepath.Join(*dir, fl[0]), opt)
	if err != nil {
		log.Fatal(err)
	}
	var trainDS, testDS *pairwise.Dataset
	if fl[1] != "" {
		te, err := data.Load(filepath.Join(*dir, fl[1]), opt)
		if err != nil {
			log.Fatal(err)
		}
		if err := data.Align(tr, te); err != nil {
			log.Fatal(err)
		}
		trainDS, testDS = tr.Dataset, te.Dataset
	} else {
		trainDS, testDS = split(tr.Dataset)
	}
	// features the schema does not bound (messidor): their training
	// min/max (a diagnostic, not a private run)
	u := schema.Unknown()
	lo, hi := make([]float64, len(u)), make([]float64, len(u))
	row := make([]float64, trainDS.D)
	for k := range u {
		lo[k], hi[k] = math.Inf(1), math.Inf(-1)
	}
	for i := 0; i < trainDS.N; i++ {
		trainDS.DenseRowTo(row, i)
		for k, j := range u {
			lo[k], hi[k] = math.Min(lo[k], row[j]), math.Max(hi[k], row[j])
		}
	}
	sc := schema.ScalerWith(lo, hi).Divide(1)
	train, test := sc.Apply(trainDS), sc.Apply(testDS)
	data.ClipNormsInPlace(train, 1)
	data.ClipNormsInPlace(test, 1)
	c := make([]float64, train.D)
	for i := 0; i < train.N; i++ {
		train.AddScaled(c, i, 1/float64(train.N))
	}
	lams := []float64{1e-6, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1, math.Inf(1)}
	fmt.Printf("| %s (n = %d, d = %d) | ", *name, train.N, train.D)
	for _, l := range lams {
		fmt.Printf("λ = %g | ", l)
	}
	fmt.Println()
	for _, kind := range []string{"signs", "records"} {
		var st *dpalgo.SSPStats
		if kind == "signs" {
			st = dpalgo.LDASignStats(train, c, 1)
		} else {
			st = centred(train, c)
		}
		fmt.Printf("| %s | ", kind)
		for _, l := range lams {
			w, _, err := dpalgo.SolveSSP(st, l)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Printf("%.4f | ", pairwise.LinearAUC(w, test))
		}
		fmt.Println()
	}
}

// centred returns the pooled statistics of the records x − c themselves
// (LDASignStats without the projection onto the sphere).
func centred(ds *pairwise.Dataset, c []float64) *dpalgo.SSPStats {
	d := ds.D
	st := dpalgo.LDASignStats(ds, c, 1) // for the layout and counts
	clear(st.SumPos)
	clear(st.SumNeg)
	clear(st.Mom)
	row := make([]float64, d)
	for i := 0; i < ds.N; i++ {
		ds.DenseRowTo(row, i)
		for k := range row {
			row[k] -= c[k]
		}
		s := st.SumNeg
		if ds.Y[i] > 0 {
			s = st.SumPos
		}
		p := 0
		for k := 0; k < d; k++ {
			s[k] += row[k]
			for l := k; l < d; l++ {
				st.Mom[p] += row[k] * row[l]
				p++
			}
		}
	}
	return st
}

// split is a stratified 80/20 split with a fixed seed (every 5th record of
// each class, in file order, to the test part: deterministic).
func split(ds *pairwise.Dataset) (train, test *pairwise.Dataset) {
	var tr, te []int
	seen := map[bool]int{}
	for i := 0; i < ds.N; i++ {
		k := ds.Y[i] > 0
		if seen[k]%5 == 4 {
			te = append(te, i)
		} else {
			tr = append(tr, i)
		}
		seen[k]++
	}
	return ds.Subset(tr), ds.Subset(te)
}
