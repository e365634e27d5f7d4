package coordinator

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg/round"
)

// secJob returns a one-job coordinator of a secure aggregation job over
// sites a..d (threshold 3 of 4, quorum 2: the job goes on with 2), announced, and the sites' signing keys
// (testSecRoster's seeds).
func secJob(t *testing.T) (*Coordinator, map[string]ed25519.PrivateKey) {
	t.Helper()
	sites := []string{"a", "b", "c", "d"}
	keys := map[string]ed25519.PrivateKey{}
	for i, s := range sites {
		keys[s] = ed25519.NewKeyFromSeed(append(make([]byte, 31), byte(i+1)))
	}
	c, err := New(Config{Federation: "f", MinSites: 4, Quorum: 2, PhaseTimeout: 50, SecAggRoster: testSecRoster(sites...),
		Job: JobConfig{ID: "j", Algo: fedalgo.FedDPSSP, Epsilon: 1, Delta: 1e-3, Seed: 7,
			Options: protocol.Options{{Name: fedalgo.OptSecAgg, Value: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sites {
		c.Step(&protocol.Join{Site: s, Records: 40, Dim: 3})
	}
	if c.job == nil || c.sec == nil {
		t.Fatalf("no secure job announced: %v", c.Err())
	}
	return c, keys
}

// sendKeys delivers the first message of the running round from each of
// sites, returning the coordinator's outputs.
func sendKeys(t *testing.T, c *Coordinator, keys map[string]ed25519.PrivateKey, sites ...string) []Output {
	t.Helper()
	p := round.Params{Federation: "f", Job: c.job.Job, Phase: c.phase, Sites: c.job.Sites, Threshold: c.sec.Threshold,
		Bits: c.ddg.Bits, Dim: c.ddg.D, Roster: c.cfg.SecAggRoster}
	var outs []Output
	for _, s := range sites {
		_, m, err := round.NewSite(p, s, keys[s], make([]uint64, c.ddg.D), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, c.Step(m)...)
	}
	return outs
}

func hasKeyList(outs []Output) bool {
	for _, o := range outs {
		if _, ok := o.Msg.(*protocol.SecAggKeyList); ok {
			return true
		}
	}
	return false
}

// Issue 28, finding 16: after a site left, every later secure round
// waited its whole step timeout for it (a 40-round job took 46–84 s
// instead of ≈ 2 s). A round awaits only the active sites: once the
// three that remain sent their keys the key list goes out at once, with
// no tick — whether the site left before the round started (at the
// accept round) or during it; and a round whose active sites are below
// the threshold aborts when it would start, nothing released.
func TestSecureRoundSkipsSitesThatLeft(t *testing.T) {
	t.Run("left before the round", func(t *testing.T) {
		c, keys := secJob(t)
		c.Step(&protocol.Leave{Site: "d", Reason: "shutting down"})
		acceptJob(c)
		if c.round == nil || c.phase != 1 {
			t.Fatalf("phase 1's round not running: phase %d, err %v", c.phase, c.Err())
		}
		if outs := sendKeys(t, c, keys, "a", "b", "c"); !hasKeyList(outs) {
			t.Fatalf("the 3 active sites sent their keys: no key list without the timeout (outputs %v)", outs)
		}
	})
	t.Run("left during the round", func(t *testing.T) {
		c, keys := secJob(t)
		acceptJob(c)
		if outs := sendKeys(t, c, keys, "a", "b", "c"); hasKeyList(outs) {
			t.Fatal("key list before d answered or left")
		}
		if outs := c.Step(&protocol.Leave{Site: "d", Reason: "silent"}); !hasKeyList(outs) {
			t.Fatalf("d left, the others had answered: no key list (outputs %v, err %v)", outs, c.Err())
		}
	})
	t.Run("below the threshold", func(t *testing.T) {
		c, _ := secJob(t)
		c.Step(&protocol.Leave{Site: "c", Reason: "silent"})
		c.Step(&protocol.Leave{Site: "d", Reason: "silent"})
		outs := acceptJob(c)
		if !c.Done() || c.Err() == nil || len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAbort {
			t.Fatalf("2 active sites, threshold 3: done %v, err %v, outputs %v", c.Done(), c.Err(), outs)
		}
		t.Logf("aborted: %v", c.Err())
	})
}
