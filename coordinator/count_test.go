package coordinator

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// The cached participant counts (numParticipants) equal a fresh count
// after every message and tick of random runs: joins, accepts, leaves,
// updates and timeouts (accept-round and phase) in random order.
func TestParticipantCountCache(t *testing.T) {
	recount := func(c *Coordinator, active bool) int {
		n := 0
		for _, s := range c.sites {
			if s.participant && !(active && s.left) {
				n++
			}
		}
		return n
	}
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 1))
		k := 2 + rng.IntN(6)
		c, err := New(Config{Federation: "f", Job: JobConfig{Algo: fedalgo.FedAvg, Rounds: 3}, MinSites: k, PhaseTimeout: 1 + rng.IntN(3), Quorum: 1})
		if err != nil {
			t.Fatal(err)
		}
		site := func() string { return fmt.Sprintf("s%d", rng.IntN(k+1)) }
		for step := 0; step < 200 && !c.Done(); step++ {
			var m protocol.Message
			switch rng.IntN(5) {
			case 0:
				m = &protocol.Join{Site: site(), Records: 10, Dim: 2}
			case 1:
				if c.Job() != nil {
					m = &protocol.Accept{Job: c.Job().Job, Site: site()}
				}
			case 2:
				if rng.IntN(4) == 0 {
					m = &protocol.Leave{Site: site(), Reason: "test"}
				}
			case 3:
				if c.Job() != nil {
					m = &protocol.SiteUpdate{Job: c.Job().Job, Site: site(), Phase: c.Phase(), Model: []float64{0.5, 0.5}, Weight: 10}
				}
			}
			if m != nil {
				c.Step(m)
			} else {
				c.Tick()
			}
			for _, active := range []bool{false, true} {
				if got, want := c.numParticipants(active), recount(c, active); got != want {
					t.Fatalf("seed %d step %d after %v: numParticipants(%v) = %d, recount %d", seed, step, m, active, got, want)
				}
			}
		}
	}
}
