package main

import (
	"flag"
	"fmt"

	"github.com/pairfed/pairfed/secagg"
)

// -degree k runs secagg's sparse variant (SecAgg+) with expected degree k
// and the local threshold ℓ and withheld bound w of secagg.SparseRule
// (κ = 0); its rows are labelled "k=…,ℓ=…,w=…,floor=…".
var flagDegree = flag.Int("degree", 0, "run the sparse variant (SecAgg+) with this expected degree (0: the complete graph)")

func init() {
	configure = func(cfg *secagg.Config) (string, error) {
		if *flagDegree == 0 {
			return *flagLabel, nil
		}
		k := len(cfg.Sites)
		r, err := secagg.SparseRule(k, 0, *flagDegree, cfg.Threshold)
		if err != nil {
			return "", err
		}
		cfg.Degree, cfg.Local, cfg.Withheld = r.Degree, r.Local, r.Withheld
		return fmt.Sprintf("k=%d,ℓ=%d,w=%d,floor=%d", r.Degree, r.Local, r.Withheld, r.Floor), nil
	}
}
