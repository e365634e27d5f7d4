// Command table1 regenerates [Y21a] Table 1 with pairfed: for each dataset
// and algorithm it runs the authors' code protocol (experiment.Paper, which
// selects hyperparameters on the test folds) and the honest validation
// protocol (experiment.Run with 5 folds × 5 repeats, selection on a split of
// each training fold), and prints a Markdown table beside the paper's numbers.
//
//	go run ./scripts/table1 [-data $PAIRFED_DATASETS] [-algos sgd-prev,sgd-pair] [-datasets diabetes,german.numer]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/pairwise"
)

// paper holds [Y21a] Table 1 (mean ± std), keyed by algorithm then dataset.
var paper = map[string]map[string]string{
	"sgd-prev": {"diabetes": ".831 ± .030", "german.numer": ".793 ± .021", "ijcnn1.trn.bz2": ".934 ± .002"},
	"sgd-pair": {"diabetes": ".830 ± .028", "german.numer": ".794 ± .023", "ijcnn1.trn.bz2": ".934 ± .003"},
	"olp":      {"diabetes": ".825 ± .028", "german.numer": ".787 ± .028", "ijcnn1.trn.bz2": ".916 ± .003"},
	"oam-gra":  {"diabetes": ".828 ± .026", "german.numer": ".785 ± .029", "ijcnn1.trn.bz2": ".930 ± .003"},
	"spauc":    {"diabetes": ".828 ± .031", "german.numer": ".799 ± .026", "ijcnn1.trn.bz2": ".932 ± .002"},
}

func lossOf(algo string) string {
	if algo == "spauc" {
		return "square"
	}
	return "hinge"
}

func main() {
	dir := flag.String("data", os.Getenv("PAIRFED_DATASETS"), "folder of the datasets")
	algos := flag.String("algos", "sgd-prev,sgd-pair,olp,oam-gra,spauc", "algorithms")
	sets := flag.String("datasets", "diabetes,german.numer,ijcnn1.trn.bz2", "dataset files")
	honest := flag.Bool("honest", true, "also run the honest validation protocol")
	seed := flag.Uint64("seed", 1, "seed")
	honestRuns := flag.Int("honest-runs", 5, "repeats of 5-fold evaluation in the honest protocol")
	flag.Parse()
	ctx := context.Background()
	fmt.Println("| algorithm | dataset | paper | ours, code protocol | s/run | ours, honest protocol | s/run | η, β (code protocol) |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, ds := range strings.Split(*sets, ",") {
		tab, err := data.Load(filepath.Join(*dir, ds), data.Options{Binarize: "halves"})
		if err != nil {
			log.Fatal(err)
		}
		for _, a := range strings.Split(*algos, ",") {
			res, err := experiment.Paper(ctx, experiment.PaperSpec{Algo: a, Loss: lossOf(a), Seed: *seed}, tab)
			if err != nil {
				log.Fatalf("%s on %s: %v", a, ds, err)
			}
			h := "—"
			hs := "—"
			if *honest {
				rep, err := experiment.Run(ctx, experiment.Spec{Task: pairwise.TaskAUC, Algo: a, Loss: lossOf(a), Folds: 5, Runs: *honestRuns,
					Scale: "minmax", Passes: 10, Seed: *seed}, tab, nil)
				if err != nil {
					log.Fatalf("%s on %s (honest): %v", a, ds, err)
				}
				h = fmt.Sprintf("%.3f ± %.3f", rep.AUC.Mean, rep.AUC.Std)
				hs = fmt.Sprintf("%.4f", rep.SecondsPerRun)
			}
			fmt.Printf("| %s | %s | %s | %.3f ± %.3f | %.4f | %s | %s | %g, %g |\n", a, strings.TrimSuffix(ds, ".trn.bz2"),
				paper[a][ds], res.AUC, res.Std, res.SecondsPerRun, h, hs, res.Eta, res.Beta)
			os.Stdout.Sync()
		}
	}
}
