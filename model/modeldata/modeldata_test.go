package modeldata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/model"
)

func readModel(t *testing.T) *model.Model {
	t.Helper()
	f, err := os.Open("../testdata/v1-train.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := model.Decode(f, "v1-train.json")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLoadTrainingFile reads the bundled diabetes file the model was
// trained on: every record, the model's dimension, real labels, and
// every record within the model's radius after its map (bounds scaling,
// then division by √d: norm "divide", radius 1).
func TestLoadTrainingFile(t *testing.T) {
	m := readModel(t)
	tab, ds, why, err := Load(m, "../../datasets/diabetes", "", 0, NeedLabels)
	if err != nil {
		t.Fatal(err)
	}
	if why != "" {
		t.Errorf("placeholder reason %q for a labelled file", why)
	}
	if tab.N != 768 || ds.N != 768 || ds.D != 8 {
		t.Fatalf("got table n = %d, records n = %d d = %d; want 768 records of 8 features", tab.N, ds.N, ds.D)
	}
	pos := 0
	for _, y := range ds.Y {
		if y > 0 {
			pos++
		}
	}
	if mx := ds.MaxNorm(); mx > 1+1e-12 || mx < 0.1 {
		t.Fatalf("largest record norm %g after the model's map; its radius is 1 and bounds scaling keeps records near it", mx)
	}
	if pos == 0 || pos == ds.N {
		t.Errorf("%d of %d records positive: the labels were not read", pos, ds.N)
	}
}

// TestLoadRefusesOtherFeatures: a file with a ninth feature is not the
// model's input, and the error says which dimension the model reads.
func TestLoadRefusesOtherFeatures(t *testing.T) {
	m := readModel(t)
	p := filepath.Join(t.TempDir(), "nine")
	if err := os.WriteFile(p, []byte("+1 1:1 9:2\n-1 2:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, _, err := Load(m, p, "", 0, NeedLabels)
	if err == nil {
		t.Fatal("a file with feature 9 was read for a model of d = 8")
	}
	if !strings.Contains(err.Error(), "8") {
		t.Errorf("error %q does not name the model's dimension 8", err)
	}
}

func TestContainsFold(t *testing.T) {
	v := []string{"Glucose", "BMI"}
	if !ContainsFold(v, "glucose") || !ContainsFold(v, "bmi") || ContainsFold(v, "age") {
		t.Error("ContainsFold is not a case-insensitive membership test")
	}
}
