package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rcol is one column of a hand-built data frame: reals, or factor codes
// with their levels (ordered: an ordered factor's class).
type rcol struct {
	name    string
	reals   []float64
	codes   []int32
	levels  []string
	ordered bool
}

// frameRDA serializes a data frame named obj with the given columns (the
// format of frame() in rda_test.go, without the row names).
func frameRDA(obj string, cols []rcol) []byte {
	w := &xdr{b: []byte("RDX2\nX\n")}
	w.i(2).i(0x40003).i(0x20300)
	w.i(rList | 1<<10).sym(obj)
	w.i(rVec | 1<<8 | 1<<9).i(int32(len(cols)))
	for _, c := range cols {
		if c.levels == nil {
			w.i(rReal).i(int32(len(c.reals)))
			for _, v := range c.reals {
				w.b = binary.BigEndian.AppendUint64(w.b, math.Float64bits(v))
			}
			continue
		}
		w.i(rInt | 1<<8 | 1<<9).i(int32(len(c.codes)))
		for _, v := range c.codes {
			w.i(v)
		}
		w.i(rList | 1<<10).sym("levels").strs(c.levels...)
		class := []string{"factor"}
		if c.ordered {
			class = []string{"ordered", "factor"}
		}
		w.i(rList | 1<<10).sym("class").strs(class...)
		w.i(rNil)
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	w.i(rList | 1<<10).sym("names").strs(names...)
	w.i(rList | 1<<10).sym("class").strs("data.frame")
	w.i(rNil)
	w.i(rNil)
	return w.b
}

func levels(prefix string, k int) []string {
	out := make([]string, k)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// ticdata: the two nominal columns one-hot in their places, every other
// factor as its level's position, counts as they are, the label 1 for
// "insurance" — 132 features — and a count that is not one refused.
func TestConvertTicdata(t *testing.T) {
	var cols []rcol
	cols = append(cols, rcol{name: "STYPE", codes: []int32{3, 39}, levels: levels("s", 39)})
	cols = append(cols, rcol{name: "MAANTHUI", reals: []float64{1, 10}}, rcol{name: "MGEMOMV", reals: []float64{2, 6}})
	cols = append(cols, rcol{name: "MGEMLEEF", codes: []int32{1, 6}, levels: levels("a", 6), ordered: true})
	cols = append(cols, rcol{name: "MOSHOOFD", codes: []int32{10, 1}, levels: levels("m", 10)})
	for i := 0; i < 38+21; i++ {
		cols = append(cols, rcol{name: fmt.Sprintf("L%d", i), codes: []int32{1, 10}, levels: levels("l", 10), ordered: true})
	}
	for i := 0; i < 21; i++ {
		cols = append(cols, rcol{name: fmt.Sprintf("A%d", i), reals: []float64{0, 12}})
	}
	cols = append(cols, rcol{name: "CARAVAN", codes: []int32{2, 1}, levels: []string{"noinsurance", "insurance"}})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ticdata.rdx"), frameRDA("ticdata", cols), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := convertTicdata(dir, dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ticdata.libsvm"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	// row 1: label 1 (insurance); STYPE level 3 → feature 3; MAANTHUI 1 →
	// 40; MGEMOMV 2 → 41; MGEMLEEF 1 → 42; MOSHOOFD level 10 → 43 + 9 = 52;
	// the 59 coded factors (1) → 53 … 111; the counts (0) omitted.
	want := []string{"1", "3:1", "40:1", "41:2", "42:1", "52:1"}
	for i := 53; i <= 111; i++ {
		want = append(want, fmt.Sprintf("%d:1", i))
	}
	if lines[0] != strings.Join(want, " ") {
		t.Errorf("row 1:\n got %s\nwant %s", lines[0], strings.Join(want, " "))
	}
	f := strings.Fields(lines[1])
	if f[0] != "0" || f[1] != "39:1" || f[len(f)-1] != "132:12" {
		t.Errorf("row 2 %v: want label 0, STYPE's last indicator 39, the last count at feature 132", f)
	}
	// a count of 1.5 is refused, naming the row and column
	cols[len(cols)-2].reals[1] = 1.5
	os.WriteFile(filepath.Join(dir, "ticdata.rdx"), frameRDA("ticdata", cols), 0o644)
	if err := convertTicdata(dir, dir); err == nil || !strings.Contains(err.Error(), "row 2 column A20: 1.5 is not a count") {
		t.Errorf("error %v, want the non-count named", err)
	}
}

// spam: 57 numeric columns and the two-level label; a negative frequency
// and a label without "spam" are refused.
func TestConvertSpam(t *testing.T) {
	var cols []rcol
	for i := 0; i < 57; i++ {
		cols = append(cols, rcol{name: fmt.Sprintf("f%d", i), reals: []float64{0, float64(i)}})
	}
	cols = append(cols, rcol{name: "type", codes: []int32{2, 1}, levels: []string{"nonspam", "spam"}})
	dir := t.TempDir()
	write := func() { os.WriteFile(filepath.Join(dir, "spam.rdx"), frameRDA("spam", cols), 0o644) }
	write()
	if err := convertSpam(dir, dir); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "spam.libsvm"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != "1" || !strings.HasPrefix(lines[1], "0 2:1 3:2 ") || !strings.HasSuffix(lines[1], " 57:56") {
		t.Errorf("rows %q", lines)
	}
	cols[3].reals[1] = -1
	write()
	if err := convertSpam(dir, dir); err == nil || !strings.Contains(err.Error(), "row 2 column f3: -1 is not a finite non-negative number") {
		t.Errorf("error %v, want the negative value named", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "spam.rdx"), frameRDA("spam", nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := convertSpam(dir, dir); err == nil || !strings.Contains(err.Error(), "0 columns, want 57 features and the label type last") {
		t.Errorf("an empty frame: error %v", err)
	}
	cols[3].reals[1] = 3
	cols[57].levels = []string{"ham", "junk"}
	write()
	if err := convertSpam(dir, dir); err == nil || !strings.Contains(err.Error(), `want two levels one of which is "spam"`) {
		t.Errorf("error %v, want the label levels refused", err)
	}
}
