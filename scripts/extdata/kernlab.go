package main

import (
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
)

// convertKernlab writes spam.libsvm and ticdata.libsvm from Debian's
// r-cran-kernlab (GPL-2) data/spam.rda and data/ticdata.rda, decompressed
// by fetch.sh into dir as spam.rdx and ticdata.rdx:
//
//   - spam.libsvm: UCI Spambase, 4 601 e-mails, 57 features in the file's
//     order (48 word and 6 character frequencies in percent, then the
//     average, longest and total run lengths of capital letters); the
//     label 1 for spam, 0 for not spam.
//   - ticdata.libsvm: the CoIL 2000 insurance data (9 822 customers, the
//     challenge's training and test parts together), 132 features: the
//     nominal customer subtype (39 levels) and main type (10 levels)
//     one-hot in the frame's column places, every other factor as its
//     level's position 1 … L in the factor's declared level order (the
//     data dictionary's code + 1), numbers as they are; the label 1 for a
//     caravan policy, 0 for none.
//
// Only the factors' declared levels (metadata) decide the coding, never
// the values found in the records.
func convertKernlab(dir, out string) error {
	if err := convertSpam(dir, out); err != nil {
		return err
	}
	return convertTicdata(dir, out)
}

// readFrame reads the data frame called name from dir/file (a
// decompressed .rda): its column names and columns, every column of the
// same length.
func readFrame(dir, file, name string) ([]string, []*rObj, error) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil, nil, err
	}
	objs, err := parseRDA(b)
	if err != nil {
		return nil, nil, fmt.Errorf("extdata: %s: %w", file, err)
	}
	names, cols, err := frameColumns(objs[name])
	if err != nil {
		return nil, nil, fmt.Errorf("extdata: %s: %s: %w", file, name, err)
	}
	rows := -1
	for j, c := range cols {
		n := len(c.ints) + len(c.reals)
		if rows >= 0 && n != rows {
			return nil, nil, fmt.Errorf("extdata: %s: column %s has %d rows, the first %d", file, names[j], n, rows)
		}
		rows = n
	}
	return names, cols, nil
}

// kernlabLabelled reads data frame obj from dir/obj.rdx, which must hold
// d feature columns and then the two-level factor label, and returns the
// labels (1 for level pos).
func kernlabLabelled(dir, obj string, d int, label, pos string) ([]string, []*rObj, []int, error) {
	names, cols, err := readFrame(dir, obj+".rdx", obj)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(names) != d+1 || names[d] != label {
		return nil, nil, nil, fmt.Errorf("extdata: %s: %d columns, want %d features and the label %s last", obj, len(names), d, label)
	}
	y, err := binaryLabels(label, cols[d], pos)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("extdata: %s: %w", obj, err)
	}
	return names, cols, y, nil
}

// binaryLabels maps a two-level factor to 1 (level pos) and 0 (the other).
func binaryLabels(name string, c *rObj, pos string) ([]int, error) {
	lv, err := factorLabels(name, c)
	if err != nil {
		return nil, err
	}
	levels := c.attr["levels"].strs
	if len(levels) != 2 || (levels[0] != pos && levels[1] != pos) {
		return nil, fmt.Errorf("column %s: levels %q, want two levels one of which is %q", name, levels, pos)
	}
	y := make([]int, len(lv))
	for i, s := range lv {
		if s == pos {
			y[i] = 1
		}
	}
	return y, nil
}

func convertSpam(dir, out string) error {
	names, cols, y, err := kernlabLabelled(dir, "spam", 57, "type", "spam")
	if err != nil {
		return err
	}
	x := make([][]float64, len(y))
	for i := range x {
		x[i] = make([]float64, 57)
	}
	for j := 0; j < 57; j++ {
		if cols[j].typ != rReal {
			return fmt.Errorf("extdata: spam: column %s is not numeric", names[j])
		}
		for i, v := range cols[j].reals {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("extdata: spam row %d column %s: %v is not a finite non-negative number", i+1, names[j], v)
			}
			x[i][j] = v
		}
	}
	if err := write(filepath.Join(out, "spam.libsvm"), x, y); err != nil {
		return err
	}
	log.Printf("extdata: spam.libsvm: %d records, 57 features", len(x))
	return nil
}

// ticOneHot are ticdata's nominal columns (the data dictionary's L0
// customer subtype and L2 customer main type): one indicator per level.
var ticOneHot = map[string]bool{"STYPE": true, "MOSHOOFD": true}

func convertTicdata(dir, out string) error {
	names, cols, y, err := kernlabLabelled(dir, "ticdata", 85, "CARAVAN", "insurance")
	if err != nil {
		return err
	}
	x := make([][]float64, len(y))
	for j := 0; j < 85; j++ {
		c, nm := cols[j], names[j]
		switch {
		case ticOneHot[nm]:
			lv := c.attr["levels"]
			if c.typ != rInt || lv == nil {
				return fmt.Errorf("extdata: ticdata: column %s is not a factor", nm)
			}
			L := len(lv.strs)
			for i, v := range c.ints {
				if v < 1 || int(v) > L {
					return fmt.Errorf("extdata: ticdata row %d column %s: factor code %d outside its %d levels", i+1, nm, v, L)
				}
				ind := make([]float64, L)
				ind[v-1] = 1
				x[i] = append(x[i], ind...)
			}
		case c.typ == rInt && c.attr["levels"] != nil:
			L := len(c.attr["levels"].strs)
			for i, v := range c.ints {
				if v < 1 || int(v) > L {
					return fmt.Errorf("extdata: ticdata row %d column %s: factor code %d outside its %d levels", i+1, nm, v, L)
				}
				x[i] = append(x[i], float64(v))
			}
		case c.typ == rReal:
			for i, v := range c.reals {
				if math.IsNaN(v) || v < 0 || v != math.Trunc(v) {
					return fmt.Errorf("extdata: ticdata row %d column %s: %v is not a count", i+1, nm, v)
				}
				x[i] = append(x[i], v)
			}
		default:
			return fmt.Errorf("extdata: ticdata: column %s has R type %d, not numbers or a factor", nm, c.typ)
		}
	}
	if d := len(x[0]); d != 132 {
		return fmt.Errorf("extdata: ticdata: %d features after one-hot coding, want 132", d)
	}
	if err := write(filepath.Join(out, "ticdata.libsvm"), x, y); err != nil {
		return err
	}
	log.Printf("extdata: ticdata.libsvm: %d records, 132 features", len(x))
	return nil
}
