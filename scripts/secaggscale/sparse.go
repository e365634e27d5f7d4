package main

import (
	"flag"
	"fmt"

	"github.com/pairfed/pairfed/secagg"
)

// -degree k runs secagg's sparse variant (SecAgg+) with expected degree k
// and the local threshold ℓ of secagg.SparseLocal (κ = 0); its rows are
// labelled "k=…,ℓ=…,floor=…".
var flagDegree = flag.Int("degree", 0, "run the sparse variant (SecAgg+) with this expected degree (0: the complete graph)")

func init() {
	configure = func(cfg *secagg.Config) (string, error) {
		if *flagDegree == 0 {
			return *flagLabel, nil
		}
		k := len(cfg.Sites)
		local, floor, err := secagg.SparseLocal(k, 0, *flagDegree, cfg.Threshold)
		if err != nil {
			return "", err
		}
		cfg.Degree, cfg.Local = *flagDegree, local
		return fmt.Sprintf("k=%d,ℓ=%d,floor=%d", *flagDegree, local, floor), nil
	}
}
