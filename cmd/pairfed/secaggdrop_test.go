package main

import (
	"strings"
	"testing"
)

// --secagg-dropout is refused without --secure-aggregation and outside
// [0, 1); with it, 2 of 6 sites (t = 4) drop out of the round after sharing
// keys and the job completes with the others' sum.
func TestSimulateSecAggDropout(t *testing.T) {
	base := []string{"simulate", "--data", "../../datasets/diabetes", "--feature-bounds", "../../schemas/diabetes.json", "--sites", "6", "--algo", "fed-dp-ssp", "--epsilon", "1"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--secagg-dropout", "0.2"}, "without --secure-aggregation"},
		{[]string{"--secure-aggregation", "--secagg-dropout", "1.5"}, "outside [0, 1)"},
	} {
		out, err := runCLI(t, append(append([]string{}, base...), c.args...)...)
		if err == nil || !strings.Contains(out+err.Error(), c.want) {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
	}
	out, err := runCLI(t, append(append([]string{}, base...), "--secure-aggregation", "--secagg-threshold", "4", "--secagg-timeout", "25", "--secagg-dropout", "0.34")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := strings.Count(out, "σ []"); n != 2 {
		t.Fatalf("%d sites without a release, want the 2 dropped:\n%s", n, out)
	}
}
