package data

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// fuzzRead reads data in two halves (to exercise partial reads) and
// checks the contract: no panic, a nil error implies a valid dataset, and
// an error names the file.
func fuzzRead(t *testing.T, data []byte, split int, opt Options) {
	if split < 0 {
		split = -split
	}
	split %= len(data) + 1
	r := io.MultiReader(bytes.NewReader(data[:split]), bytes.NewReader(data[split:]))
	opt.MaxBytes = 1 << 20
	tab, err := Read(r, "fuzz", opt)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "data: fuzz") || strings.Contains(err.Error(), "internal error") {
			t.Fatalf("error without position: %v", err)
		}
		return
	}
	if err := tab.Validate(); err != nil {
		t.Fatalf("Read returned an invalid dataset: %v", err)
	}
	if tab.NumPositive() == 0 || tab.NumPositive() == tab.N {
		t.Fatalf("single class accepted")
	}
	if len(tab.Classes) != len(tab.Counts) {
		t.Fatalf("classes %v counts %v", tab.Classes, tab.Counts)
	}
	total := 0
	for _, c := range tab.Counts {
		total += c
	}
	if total != tab.N {
		t.Fatalf("counts %v sum to %d, N=%d", tab.Counts, total, tab.N)
	}
}

func addSeeds(f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s), len(s)/2)
	}
	for _, c := range malformed {
		f.Add([]byte(c.in), len(c.in)/3)
	}
}

func FuzzLoadLIBSVM(f *testing.F) {
	addSeeds(f,
		"+1 1:0.5 3:2\n-1 2:1\n",
		"# c\n1.0  1:1e-3\t2:0 \r\n\n-1 4:-2 # tail\n",
		"1\n-1 1:1\n",
		"1 2147483647:1\n-1 1:1\n",
	)
	// Compressed seeds lead the fuzzer into the decompressors.
	small := "+1 1:0.5 3:2\n-1 2:1\n"
	f.Add(gzipBytes(f, small), 7)
	f.Add(xzBytes(f, small), 7)
	if bz, err := os.ReadFile("testdata/tiny.libsvm.bz2"); err == nil {
		f.Add(bz, 7)
	}
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		fuzzRead(t, data, split, Options{Format: FormatLIBSVM})
		fuzzRead(t, data, split, Options{Format: FormatLIBSVM, Representation: Sparse, Dim: 5})
		fuzzRead(t, data, split, Options{MaxMemory: minMaxMemory})
	})
}

// categoricalOptions are the options of a schema whose first feature
// column is categorical (with a catch-all) and second numeric, and
// whose impute mode is mode.
func categoricalOptions(mode string) Options {
	s, err := ReadSchema(strings.NewReader(`{"features": [{"name": "a", "categories": ["x", "y"], "other": true}, {"name": "b", "lo": 0, "hi": 1}]}`), "fuzz-schema")
	if err != nil {
		panic(err)
	}
	o := Options{Impute: mode}
	if _, err := s.Apply(&o); err != nil {
		panic(err)
	}
	return o
}

func FuzzLoadCSV(f *testing.F) {
	catSchema, catMean := categoricalOptions("schema"), categoricalOptions("mean")
	addSeeds(f,
		"a,b,y\nx,2,0\nz,4,1\n?,1,1\n",
		"a,b,y\n1,2,0\n3,4,1\n",
		"1;2;x\n3;4;y\n",
		"\"q\"\"\",2,\"m\nl\"\n3,4,z\n",
		"1,?,0\n,2,1\n3,4,1\n",
	)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		fuzzRead(t, data, split, Options{Format: FormatCSV})
		fuzzRead(t, data, split, Options{Format: FormatCSV, Impute: "mean", Representation: Sparse})
		fuzzRead(t, data, split, Options{Impute: "drop", Binarize: "halves", LabelColumn: "1"})
		fuzzRead(t, data, split, catSchema)
		fuzzRead(t, data, split, catMean)
	})
}

func FuzzLoadARFF(f *testing.F) {
	catSchema := categoricalOptions("schema")
	addSeeds(f,
		"@relation r\n@attribute a {x,y}\n@attribute b real\n@attribute class {0,1}\n@data\nx,1,0\n'y',?,1\nw,0,1\n",
		"@relation r\n@attribute x numeric\n@attribute class {0,1}\n@data\n1,0\n2,1\n",
		"% c\n@RELATION r\n@attribute 'a b' real\n@attribute s string\n@attribute Class{'x',y}\n@data\n1,'s',x\n?,t,y\n",
	)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		fuzzRead(t, data, split, Options{Format: FormatARFF})
		fuzzRead(t, data, split, Options{Format: FormatARFF, Impute: "mean", IgnoreColumns: []string{"2"}})
		fuzzRead(t, data, split, Options{})
		fuzzRead(t, data, split, catSchema)
	})
}

func FuzzLoadDense(f *testing.F) {
	addSeeds(f,
		"6.0000 -1.0000 -0.733333 0.5\n2.0000 0.25 1.0000 -0.5\n",
		"  6\t-1 \t 0.5  \r\n\t2 0.25\t\t1\r\n\n",
		"# c\ny a b\n1 0.5 2\n0 ? 3\n",
		"1 2\n-1\n",
		"1|2|a\n3|4|b\n",
	)
	small := "6.0000 -1 0.5\n2.0000 0.25 1\n"
	f.Add(gzipBytes(f, small), 5)
	f.Add(xzBytes(f, small), 5)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		fuzzRead(t, data, split, Options{Format: FormatDense})
		fuzzRead(t, data, split, Options{Sep: "space", LabelColumn: "2", Impute: "drop", Representation: Sparse})
		fuzzRead(t, data, split, Options{Format: FormatCSV, Sep: "tab", Impute: "mean"})
		fuzzRead(t, data, split, Options{Sep: "|", Header: "yes"})
		// The smallest budget: every refusal is still a positioned error.
		fuzzRead(t, data, split, Options{MaxMemory: minMaxMemory})
	})
}
