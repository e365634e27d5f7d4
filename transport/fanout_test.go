package transport

import (
	"slices"
	"testing"
)

// subCounter counts the inner subscriptions a Fanout makes and ends.
type subCounter struct {
	Transport
	subs, unsubs int
}

func (c *subCounter) Subscribe(subject string, h func(string, []byte)) (func(), error) {
	c.subs++
	unsub, err := c.Transport.Subscribe(subject, h)
	return func() { c.unsubs++; unsub() }, err
}

// Fanout: endpoints subscribing one subject share one inner subscription;
// every message reaches each handler in subscription order (read-only
// handlers share one copy, an owning one gets its own); an unsubscribed
// or closed endpoint gets nothing more, and the inner subscription ends
// with the last handler.
func TestFanout(t *testing.T) {
	hub := NewMem()
	pub := hub.Connect("pub")
	inner := &subCounter{Transport: hub.Connect("shared")}
	f := NewFanout(inner)
	e1, e2, e3 := f.Connect(), f.Connect(), f.Connect()
	var order []string
	var got [3][]byte
	sub := func(i int, e Transport, read bool) func() {
		h := func(_ string, d []byte) { order = append(order, string(rune('1'+i))); got[i] = d }
		var u func()
		var err error
		if read {
			u, err = SubscribeRead(e, "s", h)
		} else {
			u, err = e.Subscribe("s", func(s string, d []byte) { h(s, d); d[0] = 'X' })
		}
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	u1 := sub(0, e1, true)
	sub(1, e2, true)
	sub(2, e3, false)
	if inner.subs != 1 {
		t.Fatalf("%d inner subscriptions for one subject, want 1", inner.subs)
	}
	publish := func(msg string) {
		t.Helper()
		order = nil
		if err := pub.Publish("s", []byte(msg)); err != nil {
			t.Fatal(err)
		}
		hub.Flush(0)
	}
	publish("hello")
	if !slices.Equal(order, []string{"1", "2", "3"}) || string(got[0]) != "hello" || &got[0][0] != &got[1][0] ||
		string(got[2]) != "Xello" || &got[2][0] == &got[0][0] {
		t.Fatalf("delivery order %v, got %q %q %q", order, got[0], got[1], got[2])
	}
	u1()
	u1() // twice: once
	publish("again")
	if !slices.Equal(order, []string{"2", "3"}) {
		t.Fatalf("after e1 unsubscribed: delivered to %v", order)
	}
	if err := e1.Publish("s", []byte("from e1")); err != nil {
		t.Fatal(err)
	}
	order = nil
	hub.Flush(0)
	if !slices.Equal(order, []string{"2", "3"}) || string(got[1]) != "from e1" {
		t.Fatalf("a publication of an endpoint: delivered to %v, %q", order, got[1])
	}
	e2.Close()
	e3.Close()
	if inner.unsubs != 1 {
		t.Fatalf("inner subscription ended %d times after the last handler left, want 1", inner.unsubs)
	}
	publish("gone")
	if len(order) != 0 {
		t.Fatalf("closed endpoints got %v", order)
	}
	if err := e2.Publish("s", nil); err != ErrClosed {
		t.Fatalf("publish on a closed endpoint: %v", err)
	}
	if _, err := e3.Subscribe("s", func(string, []byte) {}); err != ErrClosed {
		t.Fatalf("subscribe on a closed endpoint: %v", err)
	}
	// A new subscription after the subject was forgotten subscribes again.
	sub(0, f.Connect(), true)
	publish("back")
	if inner.subs != 2 || !slices.Equal(order, []string{"1"}) || string(got[0]) != "back" {
		t.Fatalf("resubscribed: %d inner subscriptions, delivered to %v (%q)", inner.subs, order, got[0])
	}
}
