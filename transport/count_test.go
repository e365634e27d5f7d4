package transport

import (
	"errors"
	"testing"
)

// Counter counts what its endpoint published (successfully) and what its
// subscriptions delivered, in messages and payload bytes.
func TestCounter(t *testing.T) {
	hub := NewMem()
	a, b := Count(hub.Connect("a")), Count(hub.Connect("b"))
	var got []string
	if _, err := b.Subscribe("s", func(_ string, d []byte) { got = append(got, string(d)) }); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"hello", "pairwise", ""} {
		if err := a.Publish("s", []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Publish("other", []byte("xyz")); err != nil {
		t.Fatal(err)
	}
	hub.Flush(0)
	if len(got) != 3 || got[1] != "pairwise" {
		t.Fatalf("delivered %q", got)
	}
	if tr := a.Traffic(); tr != (Traffic{PublishedMessages: 3, PublishedBytes: 13}) {
		t.Errorf("a: %+v", tr)
	}
	if tr := b.Traffic(); tr != (Traffic{PublishedMessages: 1, PublishedBytes: 3, ReceivedMessages: 3, ReceivedBytes: 13}) {
		t.Errorf("b: %+v", tr)
	}
	// A failed publish is not counted.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Publish("s", []byte("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("publish after close: %v", err)
	}
	if tr := a.Traffic(); tr.PublishedMessages != 3 {
		t.Errorf("a after a failed publish: %+v", tr)
	}
}
