package data

import (
	"strings"
	"testing"
)

// A file of one class loads only with AllowOneClass (a federation's
// site): the class's side follows its label (1 → +1; 0, −1 → −1) or
// PositiveClasses; another single label without PositiveClasses is an
// error naming the fix. Without the option the error is unchanged.
func TestAllowOneClass(t *testing.T) {
	for _, c := range []struct {
		in, pos string
		want    float64
		err     string
	}{
		{in: "1 1:0.5\n1 1:0.2\n", want: 1},
		{in: "+1 1:0.5\n+1 1:0.2\n", want: 1},
		{in: "-1 1:0.5\n-1 1:0.2\n", want: -1},
		{in: "0 1:0.5\n0 1:0.2\n", want: -1},
		{in: "0.5,1\n0.2,1\n", want: 1},
		{in: "0.5,M\n0.2,M\n", pos: "M", want: 1},
		{in: "0.5,B\n0.2,B\n", pos: "M", want: -1},
		{in: "0.5,M\n0.2,M\n", err: "--positive-classes M"},
		{in: "0.5,4\n0.2,4\n", err: "its side is unknown"},
	} {
		_, err := Read(strings.NewReader(c.in), "f", Options{PositiveClasses: c.pos})
		if err == nil || !strings.Contains(err.Error(), "class") {
			t.Errorf("%q without AllowOneClass: %v", c.in, err)
		}
		tab, err := Read(strings.NewReader(c.in), "f", Options{PositiveClasses: c.pos, AllowOneClass: true})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		for i, y := range tab.Y {
			if y != c.want {
				t.Errorf("%q: y[%d] = %v, want %v", c.in, i, y, c.want)
			}
		}
		if !strings.Contains(strings.Join(tab.Notes, "\n"), "one class only") {
			t.Errorf("%q: no note: %v", c.in, tab.Notes)
		}
	}
	// Two classes: the option changes nothing.
	tab, err := Read(strings.NewReader("1 1:0.5\n-1 1:0.2\n"), "f", Options{AllowOneClass: true})
	if err != nil || tab.Y[0] != 1 || tab.Y[1] != -1 {
		t.Fatalf("two classes: %v %v", tab, err)
	}
}
