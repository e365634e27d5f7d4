package data

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pairfed/pairfed/internal/publicdata"
	"github.com/pairfed/pairfed/pairwise"
)

// sharedFile is a public benchmark file (publicdata: $PAIRFED_DATASETS).
func sharedFile(t testing.TB, name string) string {
	t.Helper()
	return publicdata.File(t, name)
}

var sharedCache struct {
	sync.Mutex
	tabs map[string]*sharedEntry
}

type sharedEntry struct {
	once sync.Once
	tab  *Table
	err  error
}

// loadShared loads a shared file once per test binary; callers must not
// modify the result.
func loadShared(t *testing.T, file string, opt Options) *Table {
	t.Helper()
	path := sharedFile(t, file)
	key := fmt.Sprintf("%s %+v", file, opt)
	sharedCache.Lock()
	if sharedCache.tabs == nil {
		sharedCache.tabs = map[string]*sharedEntry{}
	}
	e := sharedCache.tabs[key]
	if e == nil {
		e = &sharedEntry{}
		sharedCache.tabs[key] = e
	}
	sharedCache.Unlock()
	e.once.Do(func() { e.tab, e.err = Load(path, opt) })
	if e.err != nil {
		t.Fatal(e.err)
	}
	return e.tab
}

// sharedCases are the rows, features and label counts of the README table.
var sharedCases = []struct {
	file     string
	opt      Options
	n, d     int
	format   string
	classes  []string
	counts   []int
	positive []string
	imputed  int
	dropped  int
}{
	{file: "diabetes", n: 768, d: 8, format: FormatLIBSVM,
		classes: []string{"+1", "-1"}, counts: []int{500, 268}, positive: []string{"+1"}},
	{file: "pima-indians-diabetes.csv", n: 768, d: 8, format: FormatCSV,
		classes: []string{"1", "0"}, counts: []int{268, 500}, positive: []string{"1"}},
	{file: "german.numer", n: 1000, d: 24, format: FormatLIBSVM,
		classes: []string{"-1", "+1"}, counts: []int{700, 300}, positive: []string{"+1"}},
	{file: "ijcnn1.trn.bz2", n: 49990, d: 22, format: FormatLIBSVM,
		classes: []string{"-1.0", "1.0"}, counts: []int{45137, 4853}, positive: []string{"1.0"}},
	{file: "ijcnn1.tst.bz2", n: 91701, d: 22, format: FormatLIBSVM,
		classes: []string{"-1", "1"}, counts: []int{82989, 8712}, positive: []string{"1"}},
	{file: "a9a", n: 32561, d: 123, format: FormatLIBSVM,
		classes: []string{"-1", "+1"}, counts: []int{24720, 7841}, positive: []string{"+1"}},
	{file: "a9a.t", opt: Options{Dim: 123}, n: 16281, d: 123, format: FormatLIBSVM,
		classes: []string{"-1", "+1"}, counts: []int{12435, 3846}, positive: []string{"+1"}},
	{file: "messidor_features.arff", n: 1151, d: 19, format: FormatARFF,
		classes: []string{"0", "1"}, counts: []int{540, 611}, positive: []string{"1"}},
	{file: "wdbc.data", n: 569, d: 30, format: FormatCSV,
		classes: []string{"M", "B"}, counts: []int{212, 357}, positive: []string{"M"}},
	{file: "breast-cancer-wisconsin.data", opt: Options{Impute: "drop"}, n: 683, d: 9, format: FormatCSV,
		classes: []string{"2", "4"}, counts: []int{444, 239}, positive: []string{"4"}, dropped: 16},
	{file: "hepatitis.data", opt: Options{Impute: "mean"}, n: 155, d: 19, format: FormatCSV,
		classes: []string{"2", "1"}, counts: []int{123, 32}, positive: []string{"1"}, imputed: 167},
}

func TestLoadSharedDatasets(t *testing.T) {
	for _, c := range sharedCases {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			tab := loadShared(t, c.file, c.opt)
			if err := tab.Validate(); err != nil {
				t.Fatal(err)
			}
			if tab.N != c.n || tab.D != c.d {
				t.Errorf("shape %d×%d, want %d×%d", tab.N, tab.D, c.n, c.d)
			}
			if tab.Format != c.format {
				t.Errorf("format %s, want %s", tab.Format, c.format)
			}
			if !slices.Equal(tab.Classes, c.classes) || !slices.Equal(tab.Counts, c.counts) {
				t.Errorf("classes %v %v, want %v %v", tab.Classes, tab.Counts, c.classes, c.counts)
			}
			if !slices.Equal(tab.Positive, c.positive) {
				t.Errorf("positive %v, want %v", tab.Positive, c.positive)
			}
			wantPos := 0
			for k, cl := range c.classes {
				if slices.Contains(c.positive, cl) {
					wantPos += c.counts[k]
				}
			}
			if got := tab.NumPositive(); got != wantPos {
				t.Errorf("%d positive records, want %d", got, wantPos)
			}
			if tab.Imputed != c.imputed || tab.Dropped != c.dropped {
				t.Errorf("imputed %d dropped %d, want %d %d", tab.Imputed, tab.Dropped, c.imputed, c.dropped)
			}
			// The auto rule: CSR when it needs at most a quarter of the
			// dense bytes (sparseSmaller), e.g. a9a.
			nnz := 0
			for i := 0; i < tab.N; i++ {
				for _, v := range tab.DenseRowTo(make([]float64, tab.D), i) {
					if v != 0 {
						nnz++
					}
				}
			}
			want := Dense
			if sparseSmaller(tab.N, tab.D, nnz) {
				want = Sparse
			}
			if tab.Representation != want || tab.IsSparse() != (want == Sparse) {
				t.Errorf("representation %s, want %s (n = %d, d = %d, %d nonzeros)", tab.Representation, want, tab.N, tab.D, nnz)
			}
			if len(tab.Notes) == 0 && c.format != FormatLIBSVM {
				t.Errorf("no notes")
			}
		})
	}
}

// TestLoadSharedDetails checks values and decisions the table cannot.
func TestLoadSharedDetails(t *testing.T) {
	t.Run("wdbc first record", func(t *testing.T) {
		tab, err := Load(sharedFile(t, "wdbc.data"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		// 842302,M,17.99,10.38,...,0.1189
		row := tab.Row(0)
		if row[0] != 17.99 || row[1] != 10.38 || row[29] != 0.1189 || tab.Y[0] != 1 {
			t.Errorf("first record %v… %v, label %v", row[:2], row[29], tab.Y[0])
		}
		if !hasNote(tab, "preset for wdbc.data") {
			t.Errorf("preset not noted: %q", tab.Notes)
		}
	})
	t.Run("wdbc without preset", func(t *testing.T) {
		// Without the preset the last column is the label and the
		// diagnosis column is taken for a feature.
		_, err := Load(sharedFile(t, "wdbc.data"), Options{NoPresets: true})
		want := `wdbc.data:1:2: bad feature value "M" in column 2`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want …%s", err, want)
		}
		// With the columns given but no positive class, the minority
		// rule must pick M as well.
		tab, err := Load(sharedFile(t, "wdbc.data"), Options{NoPresets: true, LabelColumn: "2", IgnoreColumns: []string{"1"}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tab.Positive, []string{"M"}) || tab.NumPositive() != 212 ||
			!hasNote(tab, "positive class = minority class M (212 of 569)") {
			t.Errorf("positive %v (%d), notes %q", tab.Positive, tab.NumPositive(), tab.Notes)
		}
	})
	t.Run("breast-cancer missing values refused by default", func(t *testing.T) {
		_, err := Load(sharedFile(t, "breast-cancer-wisconsin.data"), Options{})
		// Line 24 is 1057013,8,4,5,1,2,?,7,3,1,4: field 7.
		want := "breast-cancer-wisconsin.data:24:7: missing value in column 7 (use --impute constant:V or schema, which keep a run private, or mean|drop, which do not)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want …%s", err, want)
		}
	})
	t.Run("hepatitis imputation uses column means", func(t *testing.T) {
		tab, err := Load(sharedFile(t, "hepatitis.data"), Options{Impute: "mean"})
		if err != nil {
			t.Fatal(err)
		}
		// Record 1 has "?" for protime (field 19, feature 18); its value
		// must be the mean of the other records' values.
		raw, err := os.ReadFile(sharedFile(t, "hepatitis.data"))
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		cnt := 0
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			f := strings.Split(line, ",")
			if f[18] != "?" {
				var v float64
				fmt.Sscan(f[18], &v)
				sum += v
				cnt++
			}
		}
		if got, want := tab.Row(0)[17], sum/float64(cnt); math.Abs(got-want) > 1e-9 {
			t.Errorf("imputed %v, want mean %v over %d values", got, want, cnt)
		}
	})
	t.Run("diabetes LIBSVM equals pima CSV", func(t *testing.T) {
		// README cross-check: same multiset of rows, UCI class 1 = LIBSVM −1.
		a, err := Load(sharedFile(t, "diabetes"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Load(sharedFile(t, "pima-indians-diabetes.csv"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		key := func(ds *pairwise.Dataset, i int, flip float64) string {
			var sb strings.Builder
			for _, v := range ds.Row(i) {
				fmt.Fprintf(&sb, "%.3f,", v)
			}
			fmt.Fprintf(&sb, "%v", ds.Y[i]*flip)
			return sb.String()
		}
		var ka, kb []string
		for i := 0; i < a.N; i++ {
			ka = append(ka, key(a.Dataset, i, -1))
			kb = append(kb, key(b.Dataset, i, 1))
		}
		slices.Sort(ka)
		slices.Sort(kb)
		if !slices.Equal(ka, kb) {
			t.Errorf("row multisets differ")
		}
	})
	t.Run("a9a.t aligned to a9a", func(t *testing.T) {
		train, err := Load(sharedFile(t, "a9a"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		test, err := Load(sharedFile(t, "a9a.t"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if test.D != 122 {
			t.Fatalf("a9a.t without Dim has d=%d, want 122 (index 123 never occurs)", test.D)
		}
		before := test.Dataset
		if err := Align(train, test); err != nil {
			t.Fatal(err)
		}
		if test.D != 123 || before.D != 122 || !hasNote(test, "padded from 122 to 123") {
			t.Errorf("after Align d=%d (old %d), notes %q", test.D, before.D, test.Notes)
		}
		if err := test.Validate(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < test.N; i += 997 {
			got, was := test.DenseRowTo(make([]float64, 123), i), before.DenseRowTo(make([]float64, 122), i)
			if !slices.Equal(got[:122], was) || got[122] != 0 {
				t.Fatalf("record %d changed by padding", i)
			}
		}
	})
	t.Run("sparse representation keeps explicit zeros out", func(t *testing.T) {
		tab, err := Load(sharedFile(t, "ijcnn1.trn.bz2"), Options{Representation: Sparse})
		if err != nil {
			t.Fatal(err)
		}
		if !tab.IsSparse() || tab.Representation != Sparse {
			t.Fatalf("not sparse")
		}
		for _, v := range tab.Val {
			if v == 0 {
				t.Fatal("explicit zero stored")
			}
		}
		// Record 1: "-1.0 6:1 11:-0.731854 12:0.173431 13:0.0 14:0.00027 …"
		idx, val := tab.SparseRow(0)
		if idx[0] != 5 || idx[1] != 10 || val[1] != -0.731854 || idx[3] != 13 || val[3] != 0.00027 {
			t.Errorf("record 1 = %v %v", idx[:4], val[:4])
		}
	})
	t.Run("messidor feature names", func(t *testing.T) {
		tab, err := Load(sharedFile(t, "messidor_features.arff"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(tab.FeatureNames) != 19 || tab.FeatureNames[0] != "0" || tab.FeatureNames[18] != "18" {
			t.Errorf("feature names %q", tab.FeatureNames)
		}
	})
}

// TestClipSharedDatasets checks the DP precondition on every real file:
// after clipping, no record has norm above R.
func TestClipSharedDatasets(t *testing.T) {
	for _, c := range sharedCases {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			tab := loadShared(t, c.file, c.opt)
			for _, kind := range []string{"none", "minmax", "standard"} {
				sc, err := FitScaler(kind, tab.Dataset)
				if err != nil {
					t.Fatal(err)
				}
				ds := sc.Apply(tab.Dataset)
				for _, R := range []float64{1e-3, 1} {
					out, clipped := ClipNorms(ds, R)
					if err := out.Validate(); err != nil {
						t.Fatal(err)
					}
					over := 0
					for i := 0; i < out.N; i++ {
						if n := math.Sqrt(out.SqNorm(i)); n > R+1e-12 {
							t.Fatalf("%s R=%v: record %d has norm %v", kind, R, i, n)
						}
						if ds.SqNorm(i) > R*R {
							over++
						}
					}
					if clipped < over-out.N/1000 || clipped > over+out.N/1000 {
						t.Errorf("%s R=%v: clipped %d, %d records had norm > R", kind, R, clipped, over)
					}
				}
			}
		})
	}
}

func hasNote(t *Table, s string) bool {
	for _, n := range t.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}
