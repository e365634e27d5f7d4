package transport

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Action is what a Filter decides for one message.
type Action struct {
	// Drop discards the message.
	Drop bool
	// Delay holds the message back: it is skipped by the next Delay
	// deliveries (it is delivered after up to Delay later messages).
	Delay int
}

// Envelope is a message in flight on a Mem hub.
type Envelope struct {
	From    string // name of the publishing endpoint
	Subject string
	Data    []byte
}

// Filter decides the fate of every published message; it is called under
// the hub's lock, in publish order, and must not call the hub.
type Filter func(Envelope) Action

// Mem is an in-memory hub. Endpoints (Connect) publish into one FIFO
// queue; delivery happens only in Step/Flush (deterministic, the caller's
// goroutine) or in Serve (one goroutine, same order). With the same
// sequence of publishes and the same filter, delivery order is the same.
//
// The hub has no frame limit: it carries messages up to MaxMessage whole,
// unframed, so a Filter sees the bytes that were published. Wrap an
// endpoint with Chunked (both ends) to run the NATS framing over it.
type Mem struct {
	mu       sync.Mutex
	cond     *sync.Cond
	queue    []*pending
	subs     map[string][]*memSub
	wild     []string // subjects with a wildcard and a subscription, sorted
	nextSub  int
	filter   Filter
	isolated map[string]bool
	// Published counts accepted publishes; Dropped those a filter or
	// isolation discarded.
	published, dropped int
}

type pending struct {
	env  Envelope
	hold int
}

type memSub struct {
	id       int
	endpoint string
	h        func(string, []byte)
	readOnly bool // SubscribeRead: h only reads the bytes while it runs
}

// NewMem returns an empty hub.
func NewMem() *Mem {
	m := &Mem{subs: map[string][]*memSub{}, isolated: map[string]bool{}}
	m.cond = sync.NewCond(&m.mu)
	return m
}

// SetFilter installs f (nil removes it).
func (m *Mem) SetFilter(f Filter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.filter = f
}

// Isolate cuts endpoint off: messages from and to it are dropped until
// Heal. This is a network partition of one endpoint against the rest.
func (m *Mem) Isolate(endpoint string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.isolated[endpoint] = true
}

// Heal reconnects every isolated endpoint.
func (m *Mem) Heal() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.isolated)
}

// Stats returns how many messages were published and dropped.
func (m *Mem) Stats() (published, dropped int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.published, m.dropped
}

// Connect returns a Transport endpoint named name (the From of its
// messages, and what Isolate refers to).
func (m *Mem) Connect(name string) Transport { return &memEndpoint{hub: m, name: name} }

// Pending returns the number of queued messages.
func (m *Mem) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.queue)
}

// Step delivers the first deliverable message and reports whether one was
// delivered. A held message (Delay) is skipped and its hold decremented;
// when only held messages remain, their holds are decremented until one is
// deliverable, so Step always makes progress while the queue is non-empty.
func (m *Mem) Step() bool {
	m.mu.Lock()
	env, subs, ok := m.popLocked()
	m.mu.Unlock()
	if !ok {
		return false
	}
	for _, s := range subs {
		data := env.Data // the hub's own copy (Publish): read-only handlers share it
		if !s.readOnly {
			data = append([]byte(nil), data...)
		}
		s.h(env.Subject, data)
	}
	return true
}

// matching returns the subscriptions whose subject matches subject, as
// NATS matches them ("*" one token, a final ">" one or more), exact
// subscriptions first, then wildcards by pattern; each list in
// subscription order.
func (m *Mem) matching(subject string) []*memSub {
	out := append([]*memSub(nil), m.subs[subject]...)
	for _, p := range m.wild { // sorted: patterns in order
		if p != subject && SubjectMatches(p, subject) {
			out = append(out, m.subs[p]...)
		}
	}
	return out
}

// SubjectMatches reports whether subject matches pattern under NATS rules:
// tokens are separated by ".", "*" matches one token and a final ">"
// matches one or more. It walks both strings token by token without
// splitting them (the hub matches every message against every wildcard
// subscription).
func SubjectMatches(pattern, subject string) bool {
	// pHas and sHas: the pattern and the subject still have a token (a
	// string of n dots has n+1 tokens, the empty string one).
	pHas, sHas := true, true
	for pHas {
		p, prest, pMore := strings.Cut(pattern, ".")
		if p == ">" && !pMore {
			return sHas
		}
		if !sHas {
			return false
		}
		tok, srest, sMore := strings.Cut(subject, ".")
		if p != "*" && p != tok {
			return false
		}
		pattern, subject = prest, srest
		pHas, sHas = pMore, sMore
	}
	return !sHas
}

func (m *Mem) popLocked() (Envelope, []*memSub, bool) {
	for len(m.queue) > 0 {
		for i, p := range m.queue {
			if p.hold > 0 {
				p.hold--
				continue
			}
			if i == 0 {
				// The usual case: O(1), not a copy of the whole queue
				// (which made a federation of K sites O(K²) per phase).
				m.queue[0] = nil
				m.queue = m.queue[1:]
			} else {
				m.queue = append(m.queue[:i], m.queue[i+1:]...)
			}
			var subs []*memSub
			for _, s := range m.matching(p.env.Subject) {
				if m.isolated[s.endpoint] {
					m.dropped++
					continue
				}
				subs = append(subs, s)
			}
			return p.env, subs, true
		}
	}
	return Envelope{}, nil, false
}

// Flush delivers until the queue is empty (including messages published by
// handlers meanwhile) and returns the number delivered. It gives up after
// limit deliveries (limit ≤ 0: no limit) to stop livelocks in tests.
func (m *Mem) Flush(limit int) int {
	n := 0
	for (limit <= 0 || n < limit) && m.Step() {
		n++
	}
	return n
}

// Serve delivers messages as they are published, on the calling goroutine,
// until ctx is done. Use it with the run loops; tests that want
// determinism call Step/Flush instead.
func (m *Mem) Serve(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() {
		m.mu.Lock()
		m.cond.Broadcast()
		m.mu.Unlock()
	})
	defer stop()
	for {
		m.mu.Lock()
		for len(m.queue) == 0 && ctx.Err() == nil {
			m.cond.Wait()
		}
		m.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		m.Step()
	}
}

type memEndpoint struct {
	hub    *Mem
	name   string
	mu     sync.Mutex
	closed bool
	mine   []memSubRef // this endpoint's subscriptions, for Close
}

// memSubRef names one subscription: its subject and id.
type memSubRef struct {
	subject string
	id      int
}

var (
	_ Transport      = (*memEndpoint)(nil)
	_ ReadSubscriber = (*memEndpoint)(nil)
)

func (e *memEndpoint) Publish(subject string, data []byte) error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if len(data) > MaxMessage {
		return fmt.Errorf("transport: publish of %d bytes on %s exceeds %d: %w", len(data), subject, MaxMessage, ErrTooLarge)
	}
	m := e.hub
	m.mu.Lock()
	defer m.mu.Unlock()
	m.published++
	env := Envelope{From: e.name, Subject: subject, Data: append([]byte(nil), data...)}
	var act Action
	if m.filter != nil {
		act = m.filter(env)
	}
	if act.Drop || m.isolated[e.name] {
		m.dropped++
		return nil
	}
	m.queue = append(m.queue, &pending{env: env, hold: act.Delay})
	m.cond.Broadcast()
	return nil
}

func (e *memEndpoint) Subscribe(subject string, h func(string, []byte)) (func(), error) {
	return e.subscribe(subject, h, false)
}

// SubscribeRead is Subscribe for a handler that only reads the bytes
// while it runs (ReadSubscriber): it is handed the hub's copy of each
// message, shared with every other such handler, instead of one of its
// own.
func (e *memEndpoint) SubscribeRead(subject string, h func(string, []byte)) (func(), error) {
	return e.subscribe(subject, h, true)
}

func (e *memEndpoint) subscribe(subject string, h func(string, []byte), readOnly bool) (func(), error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	m := e.hub
	m.mu.Lock()
	m.nextSub++
	s := &memSub{id: m.nextSub, endpoint: e.name, h: h, readOnly: readOnly}
	m.subs[subject] = append(m.subs[subject], s)
	if strings.ContainsAny(subject, "*>") {
		if i, found := slices.BinarySearch(m.wild, subject); !found {
			m.wild = slices.Insert(m.wild, i, subject)
		}
	}
	m.mu.Unlock()
	e.mine = append(e.mine, memSubRef{subject, s.id})
	var once sync.Once
	return func() { once.Do(func() { m.unsubscribe(subject, s.id) }) }, nil
}

func (m *Mem) unsubscribe(subject string, id int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.removeLocked(subject, id)
}

// removeLocked removes subscription id from subject's list (the others
// keep their order; an emptied list is deleted).
func (m *Mem) removeLocked(subject string, id int) {
	list := m.subs[subject]
	for i, s := range list {
		if s.id == id {
			if len(list) == 1 {
				// No subscriber left: forget the subject, and a
				// wildcard's pattern (every message is matched against
				// each; a simulation's runs subscribe one per run).
				delete(m.subs, subject)
				if i, found := slices.BinarySearch(m.wild, subject); found {
					m.wild = slices.Delete(m.wild, i, i+1)
				}
			} else {
				m.subs[subject] = append(list[:i:i], list[i+1:]...)
			}
			return
		}
	}
}

// Close removes the endpoint's own subscriptions: O(its subscriptions),
// not a scan of the hub's every subject (which made closing K sites
// O(K²)).
func (e *memEndpoint) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	m := e.hub
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range e.mine {
		m.removeLocked(r.subject, r.id)
	}
	e.mine = nil
	return nil
}
