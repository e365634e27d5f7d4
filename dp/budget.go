package dp

import (
	"math"
	"math/big"
)

// BudgetRest returns what is left of a privacy budget total (an ε or a δ)
// after the shares parts: the float total − Σ parts, moved down one ulp at
// a time until parts + rest ≤ total holds in exact arithmetic. A plan
// that composes its shares by basic composition and prints total needs
// that inequality exactly; the float difference alone can exceed it by an
// ulp (ε − ε/50 + ε/50 > ε for about 2 % of ε). total and the parts must
// be finite and ≥ 0; rest is ≥ 0 when Σ parts < total exactly, else the
// result is negative (the caller refuses it).
func BudgetRest(total float64, parts ...float64) float64 {
	rest := total
	for _, p := range parts {
		rest -= p
	}
	for !exactSumLE(total, rest, parts) {
		rest = math.Nextafter(rest, math.Inf(-1))
	}
	return rest
}

// exactSumLE reports rest + Σ parts ≤ total in exact arithmetic (the
// float64 values as reals: big.Float with enough precision to hold any
// sum of a few float64s exactly).
func exactSumLE(total, rest float64, parts []float64) bool {
	const prec = 2200 // > 2·1074 + 53 + a few carry bits: exact for float64 sums
	s := new(big.Float).SetPrec(prec).SetFloat64(rest)
	for _, p := range parts {
		s.Add(s, new(big.Float).SetPrec(prec).SetFloat64(p))
	}
	return s.Cmp(new(big.Float).SetPrec(prec).SetFloat64(total)) <= 0
}
