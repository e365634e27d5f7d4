package transport

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

// Link follows a transport's connection for a run loop: Poll, called on
// every tick, says whether the loop may advance its clocks and whether
// the connection came back since the last poll.
type Link struct {
	t          Transport
	down       bool
	reconnects uint64
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
		return false, false
	}
	back = l.down || n != l.reconnects
	l.down, l.reconnects = false, n
	return true, back
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

var (
	_ Health = (*NATS)(nil)
	_ Health = (*ChunkedTransport)(nil)
	_ Health = (*Counter)(nil)
)
