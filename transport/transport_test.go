package transport

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMemOrderDropDelayIsolate(t *testing.T) {
	hub := NewMem()
	a, b, c := hub.Connect("a"), hub.Connect("b"), hub.Connect("c")
	var got []string
	for _, e := range []Transport{b, c} {
		name := map[Transport]string{b: "b", c: "c"}[e]
		if _, err := e.Subscribe("s", func(_ string, d []byte) { got = append(got, name+":"+string(d)) }); err != nil {
			t.Fatal(err)
		}
	}
	hub.SetFilter(func(e Envelope) Action {
		switch string(e.Data) {
		case "drop":
			return Action{Drop: true}
		case "late":
			return Action{Delay: 2}
		}
		return Action{}
	})
	for _, m := range []string{"1", "late", "2", "drop", "3", "4"} {
		if err := a.Publish("s", []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	hub.Flush(0)
	want := []string{"b:1", "c:1", "b:2", "c:2", "b:3", "c:3", "b:late", "c:late", "b:4", "c:4"}
	if !slices.Equal(got, want) {
		t.Fatalf("delivery %v\nwant     %v", got, want)
	}
	got = nil
	hub.Isolate("c")
	_ = a.Publish("s", []byte("5"))
	_ = c.Publish("s", []byte("from-c"))
	hub.Flush(0)
	if !slices.Equal(got, []string{"b:5"}) {
		t.Fatalf("isolated delivery %v", got)
	}
	hub.Heal()
	got = nil
	_ = a.Publish("s", []byte("6"))
	hub.Flush(0)
	if len(got) != 2 {
		t.Fatalf("after heal %v", got)
	}
	if p, d := hub.Stats(); p != 9 || d != 3 {
		t.Errorf("stats: %d published, %d dropped", p, d)
	}
	if err := a.Publish("s", make([]byte, MaxMessage+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized: %v", err)
	}
	_ = b.Close()
	if err := b.Publish("s", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
}

func TestEmbeddedNATS(t *testing.T) {
	s, err := StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	pub, err := ConnectInProcess(s, "pub")
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	sub, err := ConnectInProcess(s, "sub")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	unsub, err := sub.Subscribe("pairfed.t.coord", func(subj string, d []byte) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(d))
		if len(got) == 100 {
			close(done)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	for i := 0; i < 100; i++ {
		if err := pub.Publish("pairfed.t.coord", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("timeout")
	}
	for i, g := range got {
		if g != fmt.Sprint(i) {
			t.Fatalf("message %d is %q: one publisher's order must be kept", i, g)
		}
	}
	if err := pub.Publish("x", make([]byte, MaxMessage+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized: %v", err)
	}
}

func TestSubjectMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, subject string
		want             bool
	}{
		{"a.b.c", "a.b.c", true},
		{"a.b.*", "a.b.c", true},
		{"a.b.*", "a.b", false},
		{"a.b.*", "a.b.c.d", false},
		{"a.*.c", "a.x.c", true},
		{"a.>", "a.b.c", true},
		{"a.>", "a", false},
		{"a.b.c", "a.b.x", false},
	} {
		if got := SubjectMatches(c.pattern, c.subject); got != c.want {
			t.Errorf("SubjectMatches(%q, %q) = %v", c.pattern, c.subject, got)
		}
	}
}

// SubjectMatches walks the tokens without splitting; it answers as the
// token lists of strings.Split do, for every pattern and subject of up to
// four tokens over a, b, the empty token and the wildcards.
func TestSubjectMatchesSplitReference(t *testing.T) {
	ref := func(pattern, subject string) bool {
		pt, st := strings.Split(pattern, "."), strings.Split(subject, ".")
		for i, p := range pt {
			if p == ">" && i == len(pt)-1 {
				return len(st) > i
			}
			if i >= len(st) || (p != "*" && p != st[i]) {
				return false
			}
		}
		return len(pt) == len(st)
	}
	var strs []string
	var gen func(prefix []string)
	gen = func(prefix []string) {
		if len(prefix) > 0 {
			strs = append(strs, strings.Join(prefix, "."))
		}
		if len(prefix) == 4 {
			return
		}
		for _, tok := range []string{"a", "b", "", "*", ">"} {
			gen(append(prefix, tok))
		}
	}
	gen(nil)
	n, matches := 0, 0
	for _, p := range strs {
		for _, s := range strs {
			want := ref(p, s)
			if got := SubjectMatches(p, s); got != want {
				t.Fatalf("SubjectMatches(%q, %q) = %v, the split reference says %v", p, s, got, want)
			}
			n++
			if want {
				matches++
			}
		}
	}
	if matches == 0 || matches == n {
		t.Fatalf("degenerate cases: %d matches of %d", matches, n)
	}
}

// Closing an endpoint removes its own subscriptions only: the others'
// stay, in subscription order, exact and wildcard alike.
func TestMemCloseRemovesOwnSubscriptions(t *testing.T) {
	hub := NewMem()
	a, b, c := hub.Connect("a"), hub.Connect("b"), hub.Connect("c")
	var got []string
	sub := func(e Transport, name, subject string) {
		if _, err := e.Subscribe(subject, func(s string, _ []byte) { got = append(got, name+":"+s) }); err != nil {
			t.Fatal(err)
		}
	}
	sub(a, "a", "s")
	sub(b, "b", "s")
	sub(a, "a2", "s")
	sub(c, "c", "s")
	sub(b, "bw", "p.*")
	sub(a, "aw", "p.*")
	sub(a, "ap", "p.x")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	_ = c.Publish("s", nil)
	_ = c.Publish("p.x", nil)
	hub.Flush(100)
	if want := []string{"b:s", "c:s", "bw:p.x"}; !slices.Equal(got, want) {
		t.Fatalf("after a closed: delivered %v, want %v", got, want)
	}
	got = nil
	_ = b.Close()
	_ = c.Close()
	_ = c.Close() // closing twice is a no-op
	if _, err := c.Subscribe("s", func(string, []byte) {}); !errors.Is(err, ErrClosed) {
		t.Errorf("subscribe after close: %v", err)
	}
	d := hub.Connect("d")
	_ = d.Publish("s", nil)
	_ = d.Publish("p.x", nil)
	hub.Flush(100)
	if len(got) != 0 {
		t.Fatalf("after every subscriber closed: delivered %v", got)
	}
	// Nothing is left to match a message against (a simulation's runs
	// each subscribe a wildcard of their own).
	if len(hub.subs) != 0 || len(hub.wild) != 0 {
		t.Fatalf("after every subscriber closed: %d subjects, wildcards %v", len(hub.subs), hub.wild)
	}
}

// The in-memory transport delivers to wildcard subscriptions as NATS
// does, after the exact ones.
func TestMemWildcard(t *testing.T) {
	hub := NewMem()
	a, b := hub.Connect("a"), hub.Connect("b")
	var got []string
	a.Subscribe("p.coord.*", func(s string, _ []byte) { got = append(got, "wild:"+s) })
	a.Subscribe("p.coord.x", func(s string, _ []byte) { got = append(got, "exact:"+s) })
	b.Publish("p.coord.x", nil)
	b.Publish("p.coord", nil)
	b.Publish("p.coord.y.z", nil)
	hub.Flush(100)
	if want := []string{"exact:p.coord.x", "wild:p.coord.x"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}
}

// A subscription whose handler is busy absorbs a burst larger than
// nats.go's default pending limit (64 MiB) without dropping frames: the
// coordinator's subject receives one secure aggregation step's messages
// of every site at once (≈ 133 MB of share ciphertexts at 1024 sites).
// With the default limit the burst below loses ≈ 30 MiB of it.
func TestNATSBurstBeyondDefaultPending(t *testing.T) {
	s, err := StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	pub, err := ConnectInProcess(s, "pub")
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	sub, err := ConnectInProcess(s, "sub")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	const n, size = 160, 600 << 10 // 96 MiB in frames under MaxPayload
	release := make(chan struct{})
	var mu sync.Mutex
	got := 0
	unsub, err := sub.Subscribe("pairfed.t.coord.x", func(_ string, d []byte) {
		<-release // the consumer is busy until the whole burst is queued
		mu.Lock()
		if len(d) == size {
			got++
		}
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	msg := make([]byte, size)
	for i := 0; i < n; i++ {
		if err := pub.Publish("pairfed.t.coord.x", msg); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	// The subscriber's PING is answered after everything the server
	// queued for it before: once it returns, every frame sits in the
	// subscription's pending list (or was dropped).
	if err := sub.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	close(release)
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		g := got
		mu.Unlock()
		if g == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d of %d messages of %d bytes: the subscription dropped part of the burst (slow consumer)", g, n, size)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SubscribeRead: the hub's read-only subscribers of a message share one
// copy of its bytes (not the publisher's), an owning subscriber gets its
// own, and a transport without SubscribeRead falls back to Subscribe.
func TestMemSubscribeRead(t *testing.T) {
	hub := NewMem()
	pub, r1, r2, own := hub.Connect("pub"), hub.Connect("r1"), hub.Connect("r2"), hub.Connect("own")
	var got [3][]byte
	for i, e := range []Transport{r1, r2} {
		if _, err := SubscribeRead(e, "s", func(_ string, d []byte) { got[i] = d }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := own.Subscribe("s", func(_ string, d []byte) { got[2] = d; d[0] = 'X' }); err != nil {
		t.Fatal(err)
	}
	msg := []byte("hello")
	if err := pub.Publish("s", msg); err != nil {
		t.Fatal(err)
	}
	msg[0] = 'J' // the publisher reuses its buffer: the hub holds a copy
	if n := hub.Flush(0); n != 1 {
		t.Fatalf("delivered %d messages, want 1", n)
	}
	if string(got[0]) != "hello" || &got[0][0] != &got[1][0] {
		t.Fatalf("read-only subscribers got %q and %q, want one shared copy of hello", got[0], got[1])
	}
	if string(got[2]) != "Xello" || &got[2][0] == &got[0][0] {
		t.Fatalf("the owning subscriber got %q, want its own copy (which it changed to Xello)", got[2])
	}

	// A transport without SubscribeRead: Subscribe.
	var plain []byte
	if _, err := SubscribeRead(plainTransport{r1}, "p", func(_ string, d []byte) { plain = d }); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish("p", []byte("x")); err != nil {
		t.Fatal(err)
	}
	hub.Flush(0)
	if string(plain) != "x" {
		t.Fatalf("fallback subscriber got %q", plain)
	}
}

// plainTransport hides everything but Transport's methods.
type plainTransport struct{ Transport }
