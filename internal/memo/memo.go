// Package memo remembers the results of pure functions of public numbers.
//
// An accountant's search, a calibration or a composition is a pure
// function of its arguments, and a job asks the same question many times:
// every site of a federated job calibrates the same (q, steps, ε, δ) and
// certifies every round's charge with the same numbers; in a simulation
// the sites are goroutines of one process asking at the same moment. A
// Cache remembers results by their complete list of arguments (the key
// must hold every input of the computation, floats compared by value: a
// NaN key never hits and is recomputed), so a hit returns exactly the
// value the computation returned — the same bits — and callers that
// arrive while the first caller is still computing wait for its result
// instead of computing it again (one computation per question, not one
// per site). The map is bounded: at max entries it is cleared (the next
// questions recompute). Values must be treated as read-only by every
// caller (slices are shared): a caller that hands a slice on copies it.
package memo

import (
	"sync"
	"sync/atomic"
)

// Cache is a bounded, concurrency-safe, duplicate-suppressing cache of a
// pure function's results. The zero value is not usable: use New.
type Cache[K comparable, V any] struct {
	mu  sync.Mutex
	max int
	m   map[K]*entry[V]
}

type entry[V any] struct {
	done chan struct{} // closed when v is set (or the computation panicked)
	v    V
	ok   bool // v is the result (false: the computation panicked)
}

// New returns a Cache of at most max entries.
func New[K comparable, V any](max int) *Cache[K, V] {
	return &Cache[K, V]{max: max, m: map[K]*entry[V]{}}
}

// Get returns f() for the key k, computing it at most once while the
// entry stays in the map; concurrent callers of the same key wait for the
// first one's result. If f panics, the entry is dropped and the panic
// propagates to the caller that ran f; waiting callers then run f
// themselves.
func (c *Cache[K, V]) Get(k K, f func() V) V {
	if Bypass.Load() {
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
	e := &entry[V]{done: make(chan struct{})}
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

// Bypass makes every Cache compute (tests: the uncached reference).
var Bypass atomic.Bool

// Len returns the number of entries (tests).
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Reset empties the cache (tests: compare cached with uncached results).
func (c *Cache[K, V]) Reset() {
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
}
