package transport

import (
	"slices"
	"sync"
)

// Fanout lets the endpoints of one process share a transport the way they
// share its connection: a subject that several endpoints subscribe to is
// subscribed once on the inner transport, and each message it brings is
// handed to the endpoints' handlers in turn, in subscription order (each
// an own copy, or, for a handler subscribed with SubscribeRead, one copy
// they share). Publishing goes straight to the inner transport. It is the
// in-process multiplexing of `pairfed simulate`'s sites over NATS: a
// broadcast to K sites crosses the server once instead of K times, and is
// then delivered as the Mem hub delivers it, one handler after another on
// the delivering goroutine (a handler must not block for long, as
// Transport says).
//
// Close on an endpoint drops its own subscriptions; the inner transport
// stays open (its owner closes it). An endpoint reports the inner
// transport's Health and Failure.
type Fanout struct {
	inner Transport
	mu    sync.Mutex
	subs  map[string]*fanSubject
	next  int
}

type fanSubject struct {
	unsub    func()
	handlers []fanHandler // in subscription order
}

type fanHandler struct {
	id       int
	h        func(string, []byte)
	readOnly bool
}

// NewFanout shares inner among the endpoints Connect returns.
func NewFanout(inner Transport) *Fanout {
	return &Fanout{inner: inner, subs: map[string]*fanSubject{}}
}

// Connect returns a new endpoint on f.
func (f *Fanout) Connect() Transport { return &fanEndpoint{f: f} }

func (f *Fanout) subscribe(subject string, h func(string, []byte), readOnly bool) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.subs[subject]
	if s == nil {
		s = &fanSubject{}
		unsub, err := f.inner.Subscribe(subject, func(subj string, data []byte) { f.deliver(s, subj, data) })
		if err != nil {
			return nil, err
		}
		s.unsub = unsub
		f.subs[subject] = s
	}
	f.next++
	id := f.next
	s.handlers = append(s.handlers, fanHandler{id: id, h: h, readOnly: readOnly})
	var once sync.Once
	return func() { once.Do(func() { f.unsubscribe(subject, id) }) }, nil
}

func (f *Fanout) unsubscribe(subject string, id int) {
	f.mu.Lock()
	s := f.subs[subject]
	if s == nil {
		f.mu.Unlock()
		return
	}
	s.handlers = slices.DeleteFunc(slices.Clone(s.handlers), func(h fanHandler) bool { return h.id == id })
	// An emptied subject is forgotten and its inner subscription ends: a
	// message still in flight on it finds no handler (s.handlers), and a
	// later subscription to the subject starts afresh.
	var unsub func()
	if len(s.handlers) == 0 {
		delete(f.subs, subject)
		unsub = s.unsub
	}
	f.mu.Unlock()
	if unsub != nil {
		unsub()
	}
}

// deliver hands data (owned by f: the inner handler's) to every handler
// of s at the time it arrived.
func (f *Fanout) deliver(s *fanSubject, subj string, data []byte) {
	f.mu.Lock()
	hs := s.handlers // never written in place (unsubscribe clones it)
	f.mu.Unlock()
	for _, h := range hs {
		d := data
		if !h.readOnly {
			d = append([]byte(nil), data...)
		}
		h.h(subj, d)
	}
}

type fanEndpoint struct {
	f      *Fanout
	mu     sync.Mutex
	closed bool
	unsubs []func()
}

var (
	_ Transport      = (*fanEndpoint)(nil)
	_ ReadSubscriber = (*fanEndpoint)(nil)
	_ Health         = (*fanEndpoint)(nil)
	_ Failer         = (*fanEndpoint)(nil)
)

func (e *fanEndpoint) Publish(subject string, data []byte) error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return e.f.inner.Publish(subject, data)
}

func (e *fanEndpoint) Subscribe(subject string, h func(string, []byte)) (func(), error) {
	return e.subscribe(subject, h, false)
}

// SubscribeRead: h shares one copy of each message with the other
// read-only handlers of the subject (ReadSubscriber).
func (e *fanEndpoint) SubscribeRead(subject string, h func(string, []byte)) (func(), error) {
	return e.subscribe(subject, h, true)
}

func (e *fanEndpoint) subscribe(subject string, h func(string, []byte), readOnly bool) (func(), error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	unsub, err := e.f.subscribe(subject, h, readOnly)
	if err != nil {
		return nil, err
	}
	e.unsubs = append(e.unsubs, unsub)
	return unsub, nil
}

// Close drops the endpoint's subscriptions.
func (e *fanEndpoint) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	unsubs := e.unsubs
	e.unsubs = nil
	e.mu.Unlock()
	for _, u := range unsubs {
		u()
	}
	return nil
}

func (e *fanEndpoint) Connected() bool {
	c, _ := Status(e.f.inner)
	return c
}

func (e *fanEndpoint) Reconnects() uint64 {
	_, r := Status(e.f.inner)
	return r
}

func (e *fanEndpoint) Failure() error { return Failure(e.f.inner) }
