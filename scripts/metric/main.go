// Command metric regenerates the metric-learning table of
// docs/results/papers-nonprivate.md: KNN-3
// accuracy of non-private pgd and sgd-prev (metric logistic loss of
// [H20]/[X21] Example 1) on Diabetes and Diabetic Retinopathy (messidor) at
// training sizes 128, 256, 512, beside [X21] Table 2's non-private rows.
//
//	go run ./scripts/metric [-runs 5] [-sizes 128,256,512]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"strconv"
	"strings"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/pairwise"
)

// x21 is [X21] Table 2, non-private rows ("strongly convex δ≠0" /
// "general convex δ≠0"), by dataset and n.
var x21 = map[string]map[int]string{
	"diabetes":               {128: "71.40 / 71.73", 256: "72.39 / 72.52", 512: "72.88 / 72.97"},
	"messidor_features.arff": {128: "62.82 / 61.57", 256: "63.84 / 63.86", 512: "65.01 / 65.03"},
}

func main() {
	dir := flag.String("data", "datasets", "folder with diabetes and messidor_features.arff")
	runs := flag.Int("runs", 5, "runs per cell")
	sizes := flag.String("sizes", "128,256,512", "training sizes")
	flag.Parse()
	fmt.Println("| dataset | n | [X21] non-private (SC / C) | pgd | sgd-prev |")
	fmt.Println("|---|---|---|---|---|")
	for _, ds := range []string{"diabetes", "messidor_features.arff"} {
		tab, err := data.Load(*dir+"/"+ds, data.Options{})
		if err != nil {
			log.Fatal(err)
		}
		for _, s := range strings.Split(*sizes, ",") {
			n, _ := strconv.Atoi(s)
			cells := []string{}
			for _, algo := range []string{"pgd", "sgd-prev"} {
				spec := experiment.Spec{Task: pairwise.TaskMetric, Algo: algo, Loss: "logistic", Runs: *runs, TrainSize: n,
					Scale: "standard", FeatureRadius: 1, Seed: 1}
				if algo == "pgd" {
					spec.Steps = 100
				} else {
					spec.Passes = 30
				}
				rep, err := experiment.Run(context.Background(), spec, tab, nil)
				if err != nil {
					log.Fatal(err)
				}
				cells = append(cells, fmt.Sprintf("%.2f ± %.2f", 100*rep.KNN3.Mean, 100*rep.KNN3.Std))
			}
			fmt.Printf("| %s | %d | %s | %s | %s |\n", strings.TrimSuffix(ds, "_features.arff"), n, x21[ds][n], cells[0], cells[1])
		}
	}
}
