package data

import (
	"strings"
	"testing"
)

// TestLabelNotesSortedShortest: the notes list positive classes in sorted
// order and numeric labels in their shortest exact form (issue 16 item 6),
// whatever order and spelling the file uses; Table.Positive keeps the
// spellings of Table.Classes.
func TestLabelNotesSortedShortest(t *testing.T) {
	in := "6.0000,1\n4.0000,2\n26.0000,3\n4.0000,4\n1.5000,5\n"
	tab := mustRead(t, in, "l.csv", Options{LabelColumn: "1", PositiveClasses: "4,6,26"})
	joined := strings.Join(tab.Notes, "\n")
	if !strings.Contains(joined, "positive classes 4,6,26 (4 of 5 records)") {
		t.Errorf("notes %q: want the positive classes sorted as 4,6,26", joined)
	}
	if strings.Contains(joined, "4.0000") {
		t.Errorf("notes %q print a label in a long form", joined)
	}
	tab = mustRead(t, in, "l.csv", Options{LabelColumn: "1", Binarize: "halves"})
	if joined = strings.Join(tab.Notes, "\n"); !strings.Contains(joined, "positive classes 1.5,4 (") {
		t.Errorf("halves notes %q: want positive classes 1.5,4", joined)
	}
}
