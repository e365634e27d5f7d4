package worker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/protocol"
)

// A private job whose δ exceeds 1/(10·n) for this site's n records runs,
// and the site logs a warning saying so; δ ≤ 1/(10·n) (and non-private
// jobs) log none.
func TestWorkerWarnsDeltaAboveOneOverN(t *testing.T) {
	for _, c := range []struct {
		delta float64
		warn  bool
	}{{1e-3, false}, {1.0 / 640, false}, {1.0 / 64, true}, {0.05, true}} {
		var log []string
		w, err := New(Config{Federation: "f", Site: "s1", Data: toyData(64, 3), Rand: rand.New(rand.NewPCG(3, 4)), Noise: dp.NewSeededNoise(5),
			Logf: func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) }})
		if err != nil {
			t.Fatal(err)
		}
		a := dpAnnounce("s1")
		a.Delta = c.delta
		if outs := w.Step(context.Background(), a); len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAccept || w.Err() != nil {
			t.Fatalf("δ = %v: job not joined: %v %v", c.delta, outs, w.Err())
		}
		all := strings.Join(log, "\n")
		got := strings.Contains(all, "warning") && strings.Contains(all, "exceeds 1/(10·n)") && strings.Contains(all, "n = 64")
		if got != c.warn {
			t.Errorf("δ = %v: warning %v, want %v; log:\n%s", c.delta, got, c.warn, all)
		}
	}
}
