package transport

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
)

// Health is implemented by a transport whose connection to its hub can go
// down and come back (NATS: the server restarts, the network breaks). The
// run loops ask it on every tick: while their own transport is down they
// hear no one, which says nothing about the peers, so they freeze every
// liveness clock (site silence, phase and job timeouts) instead of
// counting the outage against the peers, and a site joins again when its
// connection is back.
//
// A transport without Health (Mem, whose endpoints cannot be cut from
// their own hub) is always connected: see Status.
type Health interface {
	// Connected reports whether the transport is connected to its hub.
	Connected() bool
	// Reconnects counts the reconnections since the transport was made:
	// a change between two looks means the connection went down and came
	// back in between, however briefly.
	Reconnects() uint64
}

// Status returns t's connection state (Health), or connected with no
// reconnection for a transport that cannot lose its hub.
func Status(t Transport) (connected bool, reconnects uint64) {
	if h, ok := t.(Health); ok {
		return h.Connected(), h.Reconnects()
	}
	return true, 0
}

// Failer is implemented by a transport that can tell when its connection
// will not come back by itself: it was closed, or the server refuses its
// credentials (a wrong or expired --creds, --nkey or URL token — retrying
// for ever would keep a process running that can never take part).
type Failer interface {
	// Failure returns why the connection cannot come back, or nil.
	Failure() error
}

// ErrCredentials is wrapped by the Failure of a transport whose server
// refuses its credentials.
var ErrCredentials = errors.New("the NATS server refuses this process's credentials")

// Failure returns t's Failure (Failer), or nil.
func Failure(t Transport) error {
	if f, ok := t.(Failer); ok {
		return f.Failure()
	}
	return nil
}

// Failure is Failer's Failure of the NATS connection: closed, or down
// with the server's last answer an authorization error.
func (t *NATS) Failure() error {
	if t.nc.IsConnected() {
		return nil
	}
	last := t.nc.LastError()
	if credentialError(last) {
		return fmt.Errorf("transport: %w (%v): check this process's --creds or --nkey file, or the user or token in its NATS URL, against the server's configuration", ErrCredentials, last)
	}
	if t.nc.IsClosed() {
		if last != nil {
			return fmt.Errorf("transport: the NATS connection was closed: %v: %w", last, ErrClosed)
		}
		return ErrClosed
	}
	return nil
}

// credentialError reports whether err is the server refusing the
// client's credentials.
func credentialError(err error) bool {
	return errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) ||
		errors.Is(err, nats.ErrAuthRevoked) || errors.Is(err, nats.ErrAccountAuthExpired)
}

// CredentialError reports whether err is (or wraps) a NATS server's
// refusal of the client's credentials.
func CredentialError(err error) bool { return errors.Is(err, ErrCredentials) || credentialError(err) }

// Link follows a transport's connection for a run loop: Poll, called on
// every tick, says whether the loop may advance its clocks and whether
// the connection came back since the last poll.
type Link struct {
	t          Transport
	down       bool
	reconnects uint64
	failing    int // consecutive polls that saw a Failure
	failure    error
}

// NewLink follows t from its current state.
func NewLink(t Transport) *Link {
	_, n := Status(t)
	return &Link{t: t, reconnects: n}
}

// Poll returns up (the transport is connected now) and back (it is
// connected and was down, or reconnected, since the last poll; true once
// per outage).
func (l *Link) Poll() (up, back bool) {
	up, n := Status(l.t)
	if !up {
		l.down = true
		if l.failure = Failure(l.t); l.failure != nil {
			l.failing++
		} else {
			l.failing = 0
		}
		return false, false
	}
	back = l.down || n != l.reconnects
	l.down, l.reconnects, l.failing, l.failure = false, n, 0, nil
	return true, back
}

// Failed returns the transport's Failure once the last polls saw it
// polls times in a row (a grace for a server that is being reconfigured),
// else nil.
func (l *Link) Failed(polls int) error {
	if l.failure != nil && l.failing >= max(1, polls) {
		return l.failure
	}
	return nil
}

// Connected is Health's Connected of the NATS connection.
func (t *NATS) Connected() bool { return t.nc.IsConnected() }

// Reconnects is Health's Reconnects of the NATS connection.
func (t *NATS) Reconnects() uint64 { return t.nc.Stats().Reconnects }

// Connected forwards to the wrapped transport (Status).
func (c *ChunkedTransport) Connected() bool { up, _ := Status(c.inner); return up }

// Reconnects forwards to the wrapped transport (Status).
func (c *ChunkedTransport) Reconnects() uint64 { _, n := Status(c.inner); return n }

// Connected forwards to the wrapped transport (Status).
func (c *Counter) Connected() bool { up, _ := Status(c.inner); return up }

// Reconnects forwards to the wrapped transport (Status).
func (c *Counter) Reconnects() uint64 { _, n := Status(c.inner); return n }

// Failure forwards to the wrapped transport (Failer).
func (c *ChunkedTransport) Failure() error { return Failure(c.inner) }

// Failure forwards to the wrapped transport (Failer).
func (c *Counter) Failure() error { return Failure(c.inner) }

var (
	_ Failer = (*NATS)(nil)
	_ Failer = (*ChunkedTransport)(nil)
	_ Failer = (*Counter)(nil)
	_ Health = (*NATS)(nil)
	_ Health = (*ChunkedTransport)(nil)
	_ Health = (*Counter)(nil)
)
