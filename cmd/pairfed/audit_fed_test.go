package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The federated audit's JSON: the algorithm, secure aggregation's
// parameters and one object per view (the sum of t − κ shares, one
// share), each with its claim and ε lower bound.
func TestFederatedAuditJSON(t *testing.T) {
	out, err := runCLI(t, "audit", "--algo", "fed-dp-lda", "--secure-aggregation", "--trials", "50", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var m struct {
		Algorithm         string  `json:"algorithm"`
		SecureAggregation bool    `json:"secure_aggregation"`
		Threshold         int     `json:"threshold"`
		ClaimedEpsilon    float64 `json:"claimed_epsilon"`
		Views             []struct {
			View              string   `json:"view"`
			ClaimedEpsilon    float64  `json:"claimed_epsilon"`
			EpsilonLowerBound *float64 `json:"epsilon_lower_bound"`
			Consistent        *bool    `json:"consistent"`
		} `json:"views"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	if m.Algorithm != "fed-dp-lda" || !m.SecureAggregation || m.Threshold != 3 || m.ClaimedEpsilon != 1 || len(m.Views) != 2 {
		t.Fatalf("unexpected result: %+v", m)
	}
	for i, want := range []string{"secagg-sum", "secagg-one-share"} {
		v := m.Views[i]
		if v.View != want || v.EpsilonLowerBound == nil || v.Consistent == nil || !(v.ClaimedEpsilon >= 1) {
			t.Errorf("view %d: %+v, want %s with a claim and a bound", i, v, want)
		}
	}
}

// Refusals name the problem and the fix.
func TestFederatedAuditRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"audit", "--algo", "fed-avg"}, "not private"},
		{[]string{"audit", "--algo", "fed-oneshot", "--secure-aggregation"}, "without --secure-aggregation"},
		{[]string{"audit", "--algo", "fed-dp-lda", "--tamper", "sensitivity"}, "give --secure-aggregation"},
		{[]string{"audit", "--algo", "fed-dp-lda", "--mode", "blackbox"}, "--mode applies to single-site algorithms"},
		{[]string{"audit", "--algo", "dpegd", "--epsilon", "1", "--secure-aggregation"}, "--secure-aggregation applies to federated algorithms"},
		{[]string{"audit", "--algo", "dpegd"}, "give --epsilon"},
		{[]string{"audit"}, "give --algo"},
	} {
		out, err := runCLI(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v (output %q), want an error containing %q", c.args, err, out, c.want)
		}
	}
}
