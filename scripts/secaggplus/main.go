// Command secaggplus prints the parameters of secagg's sparse variant
// (SecAgg+, secagg/graph.go) as pairfed runs it, against a malicious
// coordinator with κ colluders: for each number of sites K, colluders κ
// and expected degree k, the local threshold ℓ and withheld bound w of the
// rule secagg.SparseRule, the noise floor n of secagg.SparseFloor (every
// unmasked sum holds at least n honest noise shares, except with
// probability 2⁻¹²⁸ over the graph), the complete graph's floor t − κ, the
// per-site noise variance the sparse graph costs, (t − κ)/n, its liveness
// bound at 5 % dropout, and the share of the complete graph's per-pair
// work (key agreements, share encryptions, mask streams) a site keeps,
// k/(K − 1). The proof is in secagg/sparsefloor.go; its checks in
// secagg/sparsefloor_test.go.
//
// Usage:
//
//	go run ./scripts/secaggplus -k 256,1024,4096,16384 -degree 64,128,256,512,1024 -colluders 0,0.05,0.33
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"

	"github.com/pairfed/pairfed/secagg"
)

var (
	flagK      = flag.String("k", "256,1024,4096,16384", "comma-separated numbers of sites K")
	flagColl   = flag.String("colluders", "0,0.05,0.33", "colluding sites κ as fractions of K (rounded down, kept below 2t − K)")
	flagDegree = flag.String("degree", "64,128,256,512,1024", "expected degrees k (values above K − 2 are skipped)")
)

func main() {
	flag.Parse()
	ks, err := ints(*flagK)
	if err != nil {
		log.Fatalf("-k: %v", err)
	}
	degs, err := ints(*flagDegree)
	if err != nil {
		log.Fatalf("-degree: %v", err)
	}
	var fracs []float64
	for _, f := range strings.Split(*flagColl, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 || v >= 1 {
			log.Fatalf("-colluders: %q is not a fraction in [0, 1)", f)
		}
		fracs = append(fracs, v)
	}
	w := os.Stdout
	fmt.Fprintln(w, "| K | t | κ | k | ℓ | w | floor n (sparse) | floor t − κ (complete) | noise variance × | P[round fails] ≤ (5 % dropout) | per-pair work × |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, K := range ks {
		t := secagg.DefaultThreshold(K)
		for _, f := range fracs {
			kappa := min(int(f*float64(K)), 2*t-K-1)
			for _, k := range degs {
				if k > K-2 {
					continue
				}
				r, err := secagg.SparseRule(K, kappa, k, t)
				if err != nil {
					fmt.Fprintf(w, "| %d | %d | %d | %d | — | — | none (no ℓ keeps the round live and the floor above 1) | %d | — | — | %.3f |\n", K, t, kappa, k, t-kappa, float64(k)/float64(K-1))
					continue
				}
				live := secagg.SparseLiveness(K, kappa, k, r.Local, secagg.SparseDrop) + secagg.SparseWithheld(K, k, r.Withheld, secagg.SparseDrop)
				fmt.Fprintf(w, "| %d | %d | %d | %d | %d | %d | %d | %d | %.2f | %.1e | %.3f |\n", K, t, kappa, k, r.Local, r.Withheld, r.Floor, t-kappa,
					float64(t-kappa)/float64(r.Floor), live, float64(k)/float64(K-1))
			}
		}
	}
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 2 {
			return nil, fmt.Errorf("%q is not a whole number ≥ 2", f)
		}
		out = append(out, v)
	}
	return out, nil
}
