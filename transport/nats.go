package transport

import (
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// NATS is a Transport over one nats.go connection. Core NATS delivery is
// at most once: the protocol tolerates loss by retrying (joins, phase
// starts) and by idempotent replies.
//
// Messages are chunked (see Chunked): a message up to MaxMessage is split
// into frames that fit the server's max_payload (at most MaxPayload), and
// subscriptions reassemble them. Every peer of a subject must be chunked,
// which every NATS of this package is.
type NATS struct {
	nc  *nats.Conn
	own bool
	ch  *ChunkedTransport
}

var _ Transport = (*NATS)(nil)

// NewNATS wraps an established connection; Close closes it when own is true.
func NewNATS(nc *nats.Conn, own bool) *NATS {
	t := &NATS{nc: nc, own: own}
	t.ch = newChunked(natsWire{t}, t.frameLimit, DefaultChunkLimits)
	return t
}

// Conn returns the underlying connection.
func (t *NATS) Conn() *nats.Conn { return t.nc }

// ChunkStats returns the chunking counters of this connection.
func (t *NATS) ChunkStats() ChunkStats { return t.ch.Stats() }

// frameLimit is the largest frame: MaxPayload, or the server's
// max_payload if smaller (0 before the first connect).
func (t *NATS) frameLimit() int {
	limit := int64(MaxPayload)
	if mp := t.nc.MaxPayload(); mp > 0 && mp < limit {
		limit = mp
	}
	return int(limit)
}

func (t *NATS) Publish(subject string, data []byte) error { return t.ch.Publish(subject, data) }

func (t *NATS) Subscribe(subject string, h func(string, []byte)) (func(), error) {
	return t.ch.Subscribe(subject, h)
}

// natsWire moves frames on the connection; NATS chunks over it.
type natsWire struct{ t *NATS }

func (w natsWire) Publish(subject string, data []byte) error {
	t := w.t
	if limit := t.frameLimit(); len(data) > limit {
		return fmt.Errorf("transport: frame of %d bytes on %s exceeds the server's max payload %d: %w", len(data), subject, limit, ErrTooLarge)
	}
	if t.nc.IsClosed() {
		return ErrClosed
	}
	if err := t.nc.Publish(subject, data); err != nil {
		return fmt.Errorf("transport: publish on %s: %w", subject, err)
	}
	return nil
}

func (w natsWire) Subscribe(subject string, h func(string, []byte)) (func(), error) {
	t := w.t
	if t.nc.IsClosed() {
		return nil, ErrClosed
	}
	sub, err := t.nc.Subscribe(subject, func(m *nats.Msg) { h(m.Subject, m.Data) })
	if err != nil {
		return nil, fmt.Errorf("transport: subscribe to %s: %w", subject, err)
	}
	// The subscription must be registered at the server before the caller
	// relies on it (e.g. before announcing itself).
	if err := t.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("transport: subscribe to %s: %w", subject, err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}

func (w natsWire) Close() error { return nil }

func (t *NATS) Close() error {
	if !t.own {
		return nil
	}
	// Flush what was published, then close synchronously (an async Drain
	// could outlive an embedded server being shut down). Only a connected
	// connection is flushed: one that is down (its server unreachable)
	// would hold a stopping process for the whole flush timeout.
	var err error
	if t.nc.IsConnected() {
		if ferr := t.nc.FlushTimeout(5 * time.Second); ferr != nil {
			err = fmt.Errorf("transport: flush: %w", ferr)
		}
	}
	t.nc.Close()
	return err
}

// StartEmbedded starts a nats-server in this process with no network
// listener (server.Options.DontListen): clients reach it only through
// ConnectInProcess. Call Shutdown (and WaitForShutdown) on the result.
func StartEmbedded() (*server.Server, error) {
	opts := &server.Options{
		ServerName: "pairfed-embedded",
		DontListen: true,
		NoLog:      true,
		NoSigs:     true,
		MaxPayload: MaxPayload,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("transport: embedded nats-server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("transport: embedded nats-server not ready after 10s")
	}
	return s, nil
}

// ConnectInProcess connects to an embedded server without TCP
// (nats.InProcessServer) and returns a Transport that owns the connection.
func ConnectInProcess(s *server.Server, name string, opts ...nats.Option) (*NATS, error) {
	opts = append([]nats.Option{nats.Name(name), nats.InProcessServer(s)}, opts...)
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, fmt.Errorf("transport: in-process connect: %w", err)
	}
	return NewNATS(nc, true), nil
}

// StartListening starts a nats-server in this process that listens for
// clients on TCP host:port (port 0 picks a free port); ClientURL of the
// result is the URL to give remote workers. Call Shutdown on the result.
//
// token, when not empty, is required from every client (the server's
// authorization token; clients put it in their URL, nats://TOKEN@host:port,
// or pass nats.Token).
func StartListening(host string, port int, token string) (*server.Server, error) {
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName:    "pairfed-coordinator",
		Host:          host,
		Port:          port,
		NoLog:         true,
		NoSigs:        true,
		MaxPayload:    MaxPayload,
		Authorization: token,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("transport: nats-server on %s:%d: %w", host, port, err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("transport: nats-server on %s:%d not ready after 10s", host, port)
	}
	return s, nil
}

// Connect dials the NATS server at url. The connection retries the first
// dial and reconnects for ever (a site outlives coordinator restarts);
// name identifies the client in the server's monitoring.
func Connect(url, name string, opts ...nats.Option) (*NATS, error) {
	opts = append([]nats.Option{nats.Name(name), nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond)}, opts...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("transport: connect to %s: %w", url, err)
	}
	return NewNATS(nc, true), nil
}
