package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// simulate --http 127.0.0.1:0 logs where it serves; after the runs it
// prints its report, then serves the finished federation (both runs'
// jobs, with the AUC of the report) for --hold, which an interrupt (the
// context) ends.
func TestSimulateHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- runApp(t, ctx, &stdout, &stderr, "--log-format", "json", "simulate", "--data", "../../datasets/diabetes", "--sites", "3",
			"--rounds", "4", "--runs", "2", "--transport", "mem", "--http", "127.0.0.1:0", "--hold", "1m", "--json")
	}()
	re := regexp.MustCompile(`"url":"(http://127\.0\.0\.1:\d+/)"`)
	var base string
	var health struct{ Status string }
	deadline := time.Now().Add(time.Minute)
	for health.Status != "finished" {
		if time.Now().After(deadline) {
			t.Fatalf("not finished: %q, stderr:\n%s", health.Status, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
		if base == "" {
			if m := re.FindStringSubmatch(stderr.String()); m != nil {
				base = m[1]
			}
			continue
		}
		code, body := httpGet(t, base+"healthz")
		if err := json.Unmarshal([]byte(body), &health); err != nil || (code != 200 && code != 503) {
			t.Fatalf("/healthz %d %q: %v", code, body, err)
		}
	}
	var rep struct {
		Phases int `json:"phases"`
		AUC    struct {
			Values []float64 `json:"values"`
		} `json:"auc"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil || rep.Phases != 4 || len(rep.AUC.Values) != 2 {
		t.Fatalf("report printed before the hold: %v\n%s", err, stdout.String())
	}
	_, body := httpGet(t, base+"api/state")
	var st struct {
		Federation string `json:"federation"`
		Health     string `json:"health"`
		Sites      []struct {
			Site string `json:"site"`
		} `json:"sites"`
		Finished []struct {
			Job        string  `json:"job"`
			Status     string  `json:"status"`
			PhasesDone int     `json:"phases_done"`
			AUC        float64 `json:"auc"`
		} `json:"finished"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if st.Federation != "sim1" || st.Health != "finished" || len(st.Sites) != 3 || len(st.Finished) != 2 {
		t.Fatalf("/api/state %s", body)
	}
	for i, j := range st.Finished {
		if j.Job != []string{"run-0", "run-1"}[i] || j.Status != "completed" || j.PhasesDone != 4 || j.AUC != rep.AUC.Values[i] {
			t.Errorf("finished job %d: %+v, report AUC %v", i, j, rep.AUC.Values)
		}
	}
	if code, metrics := httpGet(t, base+"metrics"); code != 200 || !strings.Contains(metrics, "\npairfed_phases_completed_total 8\n") {
		t.Errorf("/metrics %d:\n%s", code, metrics)
	}
	select {
	case err := <-done:
		t.Fatalf("returned during --hold: %v", err)
	default:
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("--hold did not end with the context")
	}
	if _, err := http.Get(base + "healthz"); err == nil {
		t.Error("still serving after the command returned")
	}
}

func TestHoldNeedsHTTP(t *testing.T) {
	var o, e lockedBuffer
	err := runApp(t, context.Background(), &o, &e, "simulate", "--data", "../../datasets/diabetes", "--hold", "1s")
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--hold needs --http") {
		t.Fatalf("%v", err)
	}
}
