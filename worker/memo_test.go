package worker

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pairfed/pairfed/protocol"
)

// The announcement memo hands a repeated announcement out as an equal
// message of its own, decodes any other bytes in full (a changed
// byte is checked as strictly as ever) and leaves other kinds alone.
func TestBroadcastMemo(t *testing.T) {
	a := &protocol.JobAnnounce{Job: "j", Algo: "fed-avg", Task: "auc", Loss: "hinge", Params: 3, Phases: 2,
		LocalPasses: 1, Eta: 0.1, ParamRadius: 1, Sites: []string{"s1", "s2", "s3"}, Instances: []string{"i1", "", "i3"}}
	b, err := protocol.Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	var d BroadcastMemo
	m1, err := d.decode(b)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := d.decode(bytes.Clone(b))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m1, a) || !reflect.DeepEqual(m2, a) {
		t.Fatalf("decoded %+v and %+v, want %+v", m1, m2, a)
	}
	j1, j2 := m1.(*protocol.JobAnnounce), m2.(*protocol.JobAnnounce)
	if j1 == j2 {
		t.Fatal("a repeated announcement was handed out as the same message")
	}
	j2.Job, j2.Sites = "other", nil
	if m3, _ := d.decode(b); j1.Job != "j" || !reflect.DeepEqual(m3, a) {
		t.Fatal("a change to one handed-out announcement reached another")
	}

	// Another announcement (a site renamed) is decoded in full, and so is
	// a corrupted copy of the remembered one: rejected like any bad input.
	a2 := *a
	a2.Sites = []string{"s1", "s2", "s4"}
	b2, _ := protocol.Encode(&a2)
	if m, err := d.decode(b2); err != nil || !reflect.DeepEqual(m, &a2) {
		t.Fatalf("second announcement: %+v, %v", m, err)
	}
	bad := bytes.Clone(b2)
	bad[bytes.Index(bad, []byte("s4"))+1] = '1' // lists s1 twice
	if _, err := d.decode(bad); err == nil {
		t.Fatal("an announcement listing a site twice decoded")
	}
	if _, err := d.decode(b2[:len(b2)-1]); err == nil {
		t.Fatal("a truncated announcement decoded")
	}

	// A repeated result is an equal message with its own Model and Sites.
	r := &protocol.Result{Job: "j", Phases: 2, Model: []float64{1, 2, 3}, Sites: []string{"s1", "s2"}}
	rb, _ := protocol.Encode(r)
	r1, err := d.decode(rb)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := d.decode(bytes.Clone(rb))
	if err != nil || !reflect.DeepEqual(r1, r) || !reflect.DeepEqual(r2, r) {
		t.Fatalf("results %+v and %+v (%v), want %+v", r1, r2, err, r)
	}
	r2.(*protocol.Result).Model[0], r2.(*protocol.Result).Sites[0] = 9, "x"
	if !reflect.DeepEqual(r1, r) {
		t.Fatal("a change to one handed-out result reached another")
	}
	if m, err := d.decode(rb[:len(rb)-1]); err == nil {
		t.Fatalf("a truncated result decoded: %+v", m)
	}
	p := &protocol.PhaseStart{Job: "j", Phase: 1, Model: []float64{1, 2, 3}}
	pb, _ := protocol.Encode(p)
	if m, err := d.decode(pb); err != nil || !reflect.DeepEqual(m, p) {
		t.Fatalf("phase start: %+v, %v", m, err)
	}
}

// Run hands Step announcements that protocol.Decode validated, and setup
// does not validate those a second time; an announcement given to Step
// directly (not decoded by Run) is still validated in full: a site
// listed twice, which only Validate catches, is refused.
func TestStepValidatesAnnouncementsNotDecodedByRun(t *testing.T) {
	ctx := context.Background()
	w := newWorker(t)
	w.Start()
	w.decoded = dpAnnounce("s1", "s2") // another message than the one stepped
	outs := w.Step(ctx, dpAnnounce("s1", "s1"))
	if len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAbort || w.Err() == nil || !strings.Contains(w.Err().Error(), "invalid announcement") {
		t.Fatalf("an announcement listing s1 twice: outputs %v, error %v", outs, w.Err())
	}
}

// One memo shared by the sites of a process (Config.Broadcasts): sites
// decoding two announcements at once, on their own goroutines, each get
// an equal message of their own, whichever the memo remembered last.
func TestBroadcastMemoShared(t *testing.T) {
	var anns [2]*protocol.JobAnnounce
	var raws [2][]byte
	for i := range anns {
		anns[i] = &protocol.JobAnnounce{Job: "j", Algo: "fed-avg", Task: "auc", Loss: "hinge", Params: 3, Phases: 2,
			LocalPasses: 1, Eta: 0.1, ParamRadius: 1, Sites: []string{"s1", "s2", "s3"}}
		anns[i].Eta += float64(i)
		b, err := protocol.Encode(anns[i])
		if err != nil {
			t.Fatal(err)
		}
		raws[i] = b
	}
	var d BroadcastMemo
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for k := range 50 {
				i := (g + k) % 2
				m, err := d.decode(bytes.Clone(raws[i]))
				if err != nil || !reflect.DeepEqual(m, anns[i]) {
					errs <- fmt.Errorf("goroutine %d, announcement %d: %+v, %v", g, i, m, err)
					return
				}
				m.(*protocol.JobAnnounce).Job = "changed" // its own copy
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
