// Command siteprep measures how a non-private federated job's records
// should be brought within ‖x‖ ≤ R after a public feature-bounds schema's
// box map (experiment.SiteMap, experiment.BoundsNorm): clipped to R (what
// `pairfed worker` did) or multiplied by R/M, M the box's largest norm
// (what `pairfed simulate` did, and `pairfed train`'s default for
// non-private algorithms until both took SiteMap's rule). A private job's map is not in question: its
// clip is part of its sensitivity argument.
//
// For every dataset, loss and seed it runs the same federated job twice on
// the same split and partition — fed-avg, in process over the in-memory
// transport, with the coordinator and workers `pairfed simulate` runs
// (simulate.Federate) — once on records prepared by each map
// (experiment.PrepareModelRecords, the function every site, the
// simulation and the evaluator apply), and scores the final model's test
// AUC on test records prepared by the same map. It prints a Markdown
// table: mean test AUC of each map, the paired difference divide − clip
// with its standard error, and how often each map wins.
//
//	GOMAXPROCS=1 nice -n 19 go run ./scripts/siteprep -shared "$PAIRFED_DATASETS" -out docs/results/site-prep.md
//
// Without -shared only the bundled datasets (datasets/diabetes,
// datasets/messidor_features.arff) are measured; with it also a9a and
// ijcnn1 from that folder (its README), subsampled by -max-train.
//
// With -train it measures the same choice for single-site `pairfed train`
// instead (experiment.Run, the function `pairfed train` calls): the
// non-private default algorithm sgd-prev with the schema, R = 1 and η, B
// selected on a validation split as `pairfed train` does, -runs splits of
// -seed, each run once with --bounds-norm clip and once with divide on
// the same split; it writes its own section at the end of -out, keeping
// the federated table above it (and the federated mode keeps it):
//
//	GOMAXPROCS=1 nice -n 19 go run ./scripts/siteprep -train -out docs/results/site-prep.md
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/simulate"
)

type dataset struct {
	name, path, schema, test string
}

// fileRanges are the min and max over t of the schema's unknown features:
// a non-private stand-in for the public bounds a federated job needs
// (federated jobs refuse unknown features; this measurement is not private).
func fileRanges(schema *data.Schema, t *data.Table) *model.Ranges {
	u := schema.Unknown()
	if len(u) == 0 {
		return nil
	}
	r := &model.Ranges{Source: "fitted", Lo: make([]float64, len(u)), Hi: make([]float64, len(u))}
	row := make([]float64, t.D)
	for k := range u {
		r.Lo[k], r.Hi[k] = math.Inf(1), math.Inf(-1)
	}
	for i := range t.N {
		t.DenseRowTo(row, i)
		for k, j := range u {
			r.Lo[k], r.Hi[k] = min(r.Lo[k], row[j]), max(r.Hi[k], row[j])
		}
	}
	for k := range u {
		if !(r.Hi[k] > r.Lo[k]) {
			r.Hi[k] = r.Lo[k] + 1
		}
	}
	return r
}

func main() {
	seeds := flag.Int("seeds", 10, "seeds (splits, partitions and the job's sampling) per dataset and loss")
	sites := flag.Int("sites", 4, "sites K (iid partition)")
	shared := flag.String("shared", "", "the shared datasets folder: adds a9a and ijcnn1")
	maxTrain := flag.Int("max-train", 8000, "subsample the training split of the shared datasets to this many records (0: all)")
	losses := flag.String("losses", "hinge,logistic", "fed-avg losses")
	roundsList := flag.String("rounds", "10,40", "fed-avg rounds (10: the default)")
	out := flag.String("out", "", "write the table here (default stdout)")
	trainMode := flag.Bool("train", false, "measure single-site `pairfed train` (sgd-prev) instead of fed-avg")
	runs := flag.Int("runs", 20, "-train: splits per dataset and loss")
	seed := flag.Uint64("seed", 1, "-train: the splits' seed")
	flag.Parse()
	sets := []dataset{
		{"diabetes", "datasets/diabetes", "schemas/diabetes.json", ""},
		{"messidor", "datasets/messidor_features.arff", "schemas/messidor.json", ""},
	}
	if *shared != "" {
		sets = append(sets,
			dataset{"a9a", filepath.Join(*shared, "a9a"), "schemas/a9a.json", filepath.Join(*shared, "a9a.t")},
			dataset{"ijcnn1", filepath.Join(*shared, "ijcnn1.trn.bz2"), "schemas/ijcnn1.json", filepath.Join(*shared, "ijcnn1.tst.bz2")})
	}
	var buf strings.Builder
	var w io.Writer = &buf
	defer func() { writeOut(*out, buf.String(), *trainMode) }()
	if *trainMode {
		trainTable(w, sets, *shared, *losses, *runs, *seed, *maxTrain)
		return
	}
	cmd := "GOMAXPROCS=1 nice -n 19 go run ./scripts/siteprep"
	if *shared != "" {
		cmd += ` -shared "$PAIRFED_DATASETS"`
	}
	if *seeds != 10 || *sites != 4 || *maxTrain != 8000 || *losses != "hinge,logistic" || *roundsList != "10,40" {
		cmd += fmt.Sprintf(" -seeds %d -sites %d -max-train %d -losses %s -rounds %s", *seeds, *sites, *maxTrain, *losses, *roundsList)
	}
	fmt.Fprintf(w, "# Preparing a non-private job's records: clip to R or multiply by R/M\n\n")
	fmt.Fprintf(w, "    %s -out docs/results/site-prep.md\n\n", cmd)
	fmt.Fprintf(w, "fed-avg (the job's defaults otherwise: 1 local pass, η = 10, B; R = 1), %d sites, iid partition, %d seeds per row;\n", *sites, *seeds)
	fmt.Fprintf(w, "records mapped by the dataset's public schema (`schemas/`), then clipped to R (`clip`) or multiplied by R/M, M the box's largest norm (`divide`);\n")
	fmt.Fprintf(w, "the same split, partition and sampling for both maps; the test records by the same map. Δ = divide − clip, paired, ± its standard error.\n\n")
	fmt.Fprintf(w, "| dataset | loss | rounds | n train / test | d | AUC clip | AUC divide | Δ ± se | divide wins | s |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, ds := range sets {
		train, test, schema, err := load(ds)
		if err != nil {
			log.Fatalf("%s: %v", ds.name, err)
		}
		ranges := fileRanges(schema, train)
		name := ds.name
		if ranges != nil {
			name += fmt.Sprintf(" (%d unknown features: the file's min and max)", len(ranges.Lo))
		}
		for _, loss := range strings.Split(*losses, ",") {
			for _, rs := range strings.Split(*roundsList, ",") {
				rounds, err := strconv.Atoi(rs)
				if err != nil {
					log.Fatalf("-rounds %q: %v", rs, err)
				}
				start := time.Now()
				var clip, divide []float64
				var nTrain, nTest int
				for s := range *seeds {
					r, err := run(train, test, schema, ranges, loss, rounds, uint64(s), *sites, *maxTrain)
					if err != nil {
						log.Fatalf("%s %s seed %d: %v", ds.name, loss, s, err)
					}
					clip, divide = append(clip, r.clip), append(divide, r.divide)
					nTrain, nTest = r.nTrain, r.nTest
				}
				diff := make([]float64, len(clip))
				wins := 0
				for i := range clip {
					diff[i] = divide[i] - clip[i]
					if diff[i] > 0 {
						wins++
					}
				}
				mc, _ := meanSD(clip)
				md, _ := meanSD(divide)
				mdiff, sdiff := meanSD(diff)
				fmt.Fprintf(w, "| %s | %s | %d | %d / %d | %d | %.4f | %.4f | %+.4f ± %.4f | %d/%d | %.0f |\n", name, loss, rounds, nTrain, nTest, train.D, mc, md,
					mdiff, sdiff/math.Sqrt(float64(len(diff))), wins, len(diff), time.Since(start).Seconds())
				log.Printf("%s %s %d: clip %.4f divide %.4f", ds.name, loss, rounds, mc, md)
			}
		}
	}
	fmt.Fprint(w, `
The rule chosen on this table (experiment.SiteMap): a non-private job's box-scaled records are clipped to R,
as a private job's are (whose clip is part of its sensitivity argument and was never in question); only an
algorithm that centres privately reads them multiplied by R/M. Before, `+"`pairfed simulate`"+` divided a non-private
job's records while `+"`pairfed worker`"+` and the coordinator's evaluator clipped them; now the simulation, the
workers, the evaluator and the model artefacts apply one map (node.TestSimulationAndWorkersAgree checks it bit
for bit). Clip is ahead in every seed on messidor and ijcnn1 (M grows as √d: R/M shrinks every record well below
R at the default step size), divide on diabetes (d = 8) by less, level on a9a (its one-hot records nearly fill
the box). Single-site `+"`pairfed train`"+` applies the same rule (experiment.BoundsNorm): see the next section.
`)
}

// trainHeading starts the -train section of the output file.
const trainHeading = "## Single-site pairfed train"

// writeOut writes body to path (stdout when path is empty). The federated
// table (train false) replaces the file up to the -train section and
// keeps that section; the -train section replaces the file's own, or is
// appended.
func writeOut(path, body string, train bool) {
	if path == "" {
		fmt.Print(body)
		return
	}
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		log.Fatal(err)
	}
	head, tail := string(old), ""
	if i := strings.Index(head, "\n"+trainHeading); i >= 0 {
		head, tail = head[:i+1], head[i+1:]
	}
	if train {
		body = strings.TrimRight(head, "\n") + "\n\n" + body
	} else if tail != "" {
		body = strings.TrimRight(body, "\n") + "\n\n" + tail
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		log.Fatal(err)
	}
}

// trainTable measures single-site `pairfed train`'s two maps of box-scaled
// records: sgd-prev (non-private), the dataset's schema, R = 1, η and B
// selected on a validation split, runs stratified 80/20 splits of seed
// (a test file's data, subsampled to maxTrain records, otherwise), each
// run with --bounds-norm clip and divide on the same split and selection
// grid. Δ = divide − clip per run, paired.
func trainTable(w io.Writer, sets []dataset, shared, losses string, runs int, seed uint64, maxTrain int) {
	cmd := "GOMAXPROCS=1 nice -n 19 go run ./scripts/siteprep -train"
	if shared != "" {
		cmd += ` -shared "$PAIRFED_DATASETS"`
	}
	if runs != 20 || seed != 1 || losses != "hinge,logistic" || maxTrain != 8000 {
		cmd += fmt.Sprintf(" -runs %d -seed %d -losses %s -max-train %d", runs, seed, losses, maxTrain)
	}
	fmt.Fprintf(w, "%s\n\n", trainHeading)
	fmt.Fprintf(w, "    %s -out docs/results/site-prep.md\n\n", cmd)
	fmt.Fprintf(w, "`pairfed train --algo sgd-prev --feature-bounds schemas/<dataset>.json --radius 1 --bounds-norm clip|divide --runs %d --seed %d` (the non-private default algorithm; η and B selected on a validation split, as `pairfed train` does),\n", runs, seed)
	fmt.Fprintf(w, "called in process (experiment.Run); the same splits for both maps; unknown schema features take the training split's min and max (as `pairfed train` does for a non-private run).\n")
	fmt.Fprintf(w, "Δ = divide − clip per split, paired, ± its standard error. R = 0 (the non-private default of `--radius`) neither clips nor divides: the default run is unchanged.\n\n")
	fmt.Fprintf(w, "| dataset | loss | n train / test | d | AUC clip | AUC divide | Δ ± se | divide wins | s |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, ds := range sets {
		train, test, schema, err := load(ds)
		if err != nil {
			log.Fatalf("%s: %v", ds.name, err)
		}
		if test != nil && maxTrain > 0 && train.N > maxTrain {
			rng := rand.New(rand.NewPCG(seed, 1))
			train.Dataset = train.Subset(rng.Perm(train.N)[:maxTrain])
		}
		name := ds.name
		if u := schema.Unknown(); len(u) > 0 {
			name += fmt.Sprintf(" (%d unknown features)", len(u))
		}
		for _, loss := range strings.Split(losses, ",") {
			start := time.Now()
			auc := map[string][]float64{}
			var rep *experiment.Report
			for _, norm := range []string{experiment.NormClip, experiment.NormDivide} {
				spec := experiment.Spec{Task: pairwise.TaskAUC, Algo: "sgd-prev", Loss: loss, Bounds: schema, Scale: "bounds",
					FeatureRadius: 1, BoundsNorm: norm, Runs: runs, Seed: seed}
				if err := spec.Validate(); err != nil {
					log.Fatalf("%s %s: %v", ds.name, loss, err)
				}
				rep, err = experiment.Run(context.Background(), spec, train, test)
				if err != nil {
					log.Fatalf("%s %s %s: %v", ds.name, loss, norm, err)
				}
				auc[norm] = rep.AUC.Values
			}
			clip, divide := auc[experiment.NormClip], auc[experiment.NormDivide]
			diff := make([]float64, len(clip))
			wins := 0
			for i := range clip {
				diff[i] = divide[i] - clip[i]
				if diff[i] > 0 {
					wins++
				}
			}
			mc, _ := meanSD(clip)
			md, _ := meanSD(divide)
			mdiff, sdiff := meanSD(diff)
			fmt.Fprintf(w, "| %s | %s | %d / %d | %d | %.4f | %.4f | %+.4f ± %.4f | %d/%d | %.0f |\n", name, loss, rep.NTrain, rep.NTest, rep.D, mc, md,
				mdiff, sdiff/math.Sqrt(float64(len(diff))), wins, len(diff), time.Since(start).Seconds())
			log.Printf("train %s %s: clip %.4f divide %.4f", ds.name, loss, mc, md)
		}
	}
	fmt.Fprint(w, `
The rule taken (experiment.BoundsNorm, a federated site's rule): single-site `+"`pairfed train`"+` clips box-scaled records
to R, private or not; it multiplies them by R/M only for an algorithm that centres privately (dp-lda) or when asked
(`+"`--bounds-norm divide`"+`). Before, a non-private run with `+"`--radius`"+` R > 0 divided by default. As with fed-avg above:
clip is ahead on messidor and ijcnn1 in (nearly) every split, divide on diabetes (d = 8) by about as much, level
on a9a. Runs at the non-private default R = 0 are unchanged.
`)
}

func load(ds dataset) (train, test *data.Table, schema *data.Schema, err error) {
	schema, err = data.LoadSchema(ds.schema)
	if err != nil {
		return nil, nil, nil, err
	}
	var opt data.Options
	if _, err := schema.Apply(&opt); err != nil {
		return nil, nil, nil, err
	}
	if train, err = data.Load(ds.path, opt); err != nil {
		return nil, nil, nil, err
	}
	if err := schema.Check(train); err != nil {
		return nil, nil, nil, err
	}
	if ds.test != "" {
		if test, err = data.Load(ds.test, opt); err != nil {
			return nil, nil, nil, err
		}
		if err := schema.Check(test); err != nil {
			return nil, nil, nil, err
		}
	}
	return train, test, schema, nil
}

type result struct {
	clip, divide  float64
	nTrain, nTest int
}

// run is one seed: the split (a stratified 20 % test split without a test
// file), the subsample, the iid partition, then the job under each map.
func run(train, test *data.Table, schema *data.Schema, ranges *model.Ranges, loss string, rounds int, seed uint64, sites, maxTrain int) (*result, error) {
	rng := rand.New(rand.NewPCG(seed, 0))
	tr, te := train.Dataset, (*pairwise.Dataset)(nil)
	if test != nil {
		te = test.Dataset
		if maxTrain > 0 && tr.N > maxTrain {
			tr = tr.Subset(rng.Perm(tr.N)[:maxTrain])
		}
		if maxTrain > 0 && te.N > 2*maxTrain {
			te = te.Subset(rng.Perm(te.N)[:2*maxTrain])
		}
	} else {
		trIdx, teIdx, err := data.StratifiedSplit(train.Y, 0.2, rng)
		if err != nil {
			return nil, err
		}
		tr, te = train.Subset(trIdx), train.Subset(teIdx)
	}
	parts, err := simulate.PartitionIID(tr.N, sites, rng)
	if err != nil {
		return nil, err
	}
	res := &result{nTrain: tr.N, nTest: te.N}
	for _, norm := range []string{experiment.NormClip, experiment.NormDivide} {
		m := &model.Preprocessing{Scale: "bounds", Schema: schema, Ranges: ranges, Norm: norm, Radius: 1}
		ss := make([]simulate.Site, len(parts))
		for k, idx := range parts {
			d, err := experiment.PrepareModelRecords(m, tr.Subset(idx))
			if err != nil {
				return nil, err
			}
			ss[k] = simulate.Site{Name: fmt.Sprintf("site-%d", k), Data: d}
		}
		tp, err := experiment.PrepareModelRecords(m, te)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		out, err := simulate.Federate(ctx, simulate.FederationConfig{Name: "siteprep", Job: coordinator.JobConfig{ID: "j", Algo: fedalgo.FedAvg, Loss: loss, Rounds: rounds, FeatureRadius: 1},
			Sites: ss, Connect: simulate.MemConnect(ctx), Seed: seed, Tick: 5 * time.Millisecond})
		cancel()
		if err != nil {
			return nil, err
		}
		auc := pairwise.LinearAUC(out.Result.Model, tp)
		if norm == experiment.NormClip {
			res.clip = auc
		} else {
			res.divide = auc
		}
	}
	return res, nil
}

func meanSD(x []float64) (float64, float64) {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	if len(x) < 2 {
		return m, 0
	}
	return m, math.Sqrt(s / float64(len(x)-1))
}
