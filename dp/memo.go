package dp

import (
	"sync"
	"sync/atomic"
)

// Memoized accountant searches.
//
// The accountant's searches (the subsampled-RDP curve of a (q, z) pair,
// the ε it certifies, the noise multiplier of a request) are pure
// functions of public numbers, and a job asks them the same questions
// many times: every site of a federated job calibrates the same (q,
// steps, ε, δ) and certifies every round's charge with the same (q, z);
// in a simulation the sites are goroutines of one process asking at the
// same moment. memo remembers results by their complete list of
// arguments (the key must hold every input of the computation, floats
// compared by value: a NaN key never hits and is recomputed), so a hit
// returns exactly the value the computation returned — the same bits —
// and callers that arrive while the first caller is still computing wait
// for its result instead of computing it again (one search per question,
// not one per site). The map is bounded: at max entries it is cleared
// (the next questions recompute). Values must be treated as read-only by
// every caller (slices are shared).

// memo is a bounded, concurrency-safe, duplicate-suppressing cache of a
// pure function's results. The zero value is not usable: give max.
type memo[K comparable, V any] struct {
	mu  sync.Mutex
	max int
	m   map[K]*memoEntry[V]
}

type memoEntry[V any] struct {
	done chan struct{} // closed when v is set (or the computation panicked)
	v    V
	ok   bool // v is the result (false: the computation panicked)
}

func newMemo[K comparable, V any](max int) *memo[K, V] {
	return &memo[K, V]{max: max, m: map[K]*memoEntry[V]{}}
}

// get returns f() for the key k, computing it at most once while the
// entry stays in the map; concurrent callers of the same key wait for the
// first one's result. If f panics, the entry is dropped and the panic
// propagates to the caller that ran f; waiting callers then run f
// themselves.
func (c *memo[K, V]) get(k K, f func() V) V {
	if memoBypass.Load() {
		return f()
	}
	c.mu.Lock()
	if e, hit := c.m[k]; hit {
		c.mu.Unlock()
		<-e.done
		if e.ok {
			return e.v
		}
		return f()
	}
	if len(c.m) >= c.max {
		clear(c.m) // waiters of in-flight entries hold them; they still get their value
	}
	e := &memoEntry[V]{done: make(chan struct{})}
	c.m[k] = e
	c.mu.Unlock()
	defer func() {
		if !e.ok {
			c.mu.Lock()
			if c.m[k] == e {
				delete(c.m, k)
			}
			c.mu.Unlock()
		}
		close(e.done)
	}()
	e.v = f()
	e.ok = true
	return e.v
}

// memoBypass makes every memo compute (tests: the uncached reference).
var memoBypass atomic.Bool

// len returns the number of entries (tests).
func (c *memo[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// reset empties the cache (tests: compare cached with uncached results).
func (c *memo[K, V]) reset() {
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
}
