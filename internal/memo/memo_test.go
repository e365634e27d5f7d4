package memo

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// Concurrent callers of one key share one computation and all get its
// value; distinct keys compute separately; the map stays within its bound;
// a panicking computation is not remembered and its waiters compute
// themselves. Run under -race.
func TestCacheConcurrent(t *testing.T) {
	c := New[int, string](8)
	var calls atomic.Int64
	release := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]string, 32)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = c.Get(i%2, func() string {
				calls.Add(1)
				<-release // hold the computation until every caller has arrived
				return fmt.Sprint("v", i%2)
			})
		}()
	}
	close(release)
	wg.Wait()
	// Each key is computed at least once; callers that found the entry in
	// flight waited for it. All see the value of their key.
	for i, g := range got {
		if g != fmt.Sprint("v", i%2) {
			t.Fatalf("caller %d got %q", i, g)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d computations for 2 keys and 32 callers, want 2", n)
	}
	for k := range 100 {
		c.Get(k, func() string { return "" })
		if c.Len() > 8 {
			t.Fatalf("%d entries, bound 8", c.Len())
		}
	}
	var boom atomic.Int64
	func() {
		defer func() { recover() }()
		c.Get(-1, func() string { boom.Add(1); panic("boom") })
	}()
	if v := c.Get(-1, func() string { boom.Add(1); return "ok" }); v != "ok" || boom.Load() != 2 {
		t.Errorf("after a panic: %q, %d computations", v, boom.Load())
	}
}
