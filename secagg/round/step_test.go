package round

import (
	"testing"

	"github.com/pairfed/pairfed/protocol"
)

// A site whose advertisement the server refuses (here: replayed from
// another phase) is out of the round: once the others have sent theirs the
// key list goes out with no tick, instead of after the step's timeout (a
// rogue site cannot stall every round by its timeout); a second
// advertisement of a site is refused without that effect.
func TestRefusedAdvertisementIsNotAwaited(t *testing.T) {
	old := newWireRound(t, 4, 1)
	oldAdv := old.start(t, 42)
	r := newWireRound(t, 4, 2)
	adv := r.start(t, 42)
	replay := *oldAdv[1].(*protocol.SecAggKeys)
	replay.Phase = 2
	srv, err := NewServer(r.p, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 2} {
		if outs, _, err := srv.Deliver(r.p.Sites[i], adv[i]); err != nil || len(outs) != 0 {
			t.Fatalf("site %d: %v %v", i, outs, err)
		}
	}
	if _, _, err := srv.Deliver(r.p.Sites[0], adv[0]); err == nil {
		t.Fatal("a second advertisement accepted")
	}
	if _, _, err := srv.Deliver("site-1", &replay); err == nil {
		t.Fatal("replayed advertisement accepted")
	}
	outs, _, err := srv.Deliver(r.p.Sites[3], adv[3])
	if err != nil || len(outs) != 1 {
		t.Fatalf("the last honest advertisement: outputs %v, %v", outs, err)
	}
	l, ok := outs[0].Msg.(*protocol.SecAggKeyList)
	if !ok || len(l.Keys) != 3 {
		t.Fatalf("key list %+v: want the 3 honest sites", outs[0].Msg)
	}
}

func TestStepTimeoutScalesWithK(t *testing.T) {
	for _, c := range []struct{ base, k, want int }{{50, 2, 50}, {50, 16, 50}, {50, 17, 100}, {50, 256, 800}, {50, 1024, 3200}} {
		if got := StepTimeout(c.base, c.k); got != c.want {
			t.Errorf("StepTimeout(%d, %d) = %d, want %d", c.base, c.k, got, c.want)
		}
	}
}
