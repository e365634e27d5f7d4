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

// SubPendingBytes and SubPendingMsgs bound the frames a NATS
// subscription holds received but not yet handed to its handler (nats.go's
// pending limits; over either, frames are dropped and the connection's
// error handler reports a slow consumer). nats.go's defaults (64 MiB,
// 500 000 messages) are below what one subscription must absorb: the
// coordinator's subject receives, in one secure aggregation step, every
// site's message at once — at protocol.MaxSites = 1024 sites the share
// step alone is 1024 messages of ≈ 130 KB (1023 share ciphertexts each),
// ≈ 133 MB, arriving while the coordinator's loop may still be busy (in a
// simulation the 1024 sites' key agreements take the same cores). That
// burst overflowed the default and dropped sites' shares. The byte bound
// is the chunk layer's own (DefaultChunkLimits.MaxBuffered = 4·MaxMessage,
// 256 MiB): a subscription may hold as much in frames awaiting delivery as
// in partial messages, so one MaxMessage payload in flight never starves
// the rest. Memory a peer can make a subscription hold stays bounded by
// these two (plus the chunk layer's MaxBuffered).
const (
	SubPendingMsgs  = 1 << 20
	SubPendingBytes = 4 * MaxMessage
)

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
	if err := sub.SetPendingLimits(SubPendingMsgs, SubPendingBytes); err != nil {
		_ = sub.Unsubscribe()
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
//
// Its clients share the process's CPU with the server: in a simulation
// of K sites the sites' secure aggregation work (K − 1 key agreements and
// share encryptions each, ≈ 1 min of CPU in all at K = 1024 on two
// cores) keeps every core busy while the server pushes the step's
// messages through in-process pipes, whose writes complete only when the
// reading goroutine runs. The server's default write deadline (10 s)
// then took busy sites for slow consumers and cut them (1024 sites:
// "Slow Consumer Detected: WriteDeadline of 10s exceeded" for sites being
// sent the 150 KB key list). The embedded server waits EmbeddedWriteDeadline
// instead, and queues up to SubPendingBytes per client (nats-server's
// max_pending, 64 MiB by default), the same bound as a subscription's.
func StartEmbedded() (*server.Server, error) {
	opts := &server.Options{
		ServerName:    "pairfed-embedded",
		DontListen:    true,
		NoLog:         true,
		NoSigs:        true,
		MaxPayload:    MaxPayload,
		MaxPending:    SubPendingBytes,
		WriteDeadline: EmbeddedWriteDeadline,
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

// EmbeddedWriteDeadline is how long the embedded server's write to one
// in-process client may block before it drops the client as a slow
// consumer, and how long an in-process (re)connection's handshake may take
// (nats.go's 2 s timed out reconnections in a loaded 1024-site
// simulation): in one process a slow reader is a busy CPU, not a dead peer.
const EmbeddedWriteDeadline = 2 * time.Minute

// ConnectInProcess connects to an embedded server without TCP
// (nats.InProcessServer) and returns a Transport that owns the connection.
func ConnectInProcess(s *server.Server, name string, opts ...nats.Option) (*NATS, error) {
	opts = append([]nats.Option{nats.Name(name), nats.InProcessServer(s), nats.Timeout(EmbeddedWriteDeadline)}, opts...)
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
	return startListening(host, port, func(o *server.Options) { o.Authorization = token })
}

// ListenUser is one login of an embedded server (StartListeningUsers):
// a name, its password, and the subjects it may publish and subscribe to
// (NATS wildcards; nothing else is allowed).
type ListenUser struct {
	Name, Password     string
	Publish, Subscribe []string
}

// StartListeningUsers is StartListening with one login per user instead
// of a shared token: a client presents its name and password
// (nats://NAME:PASSWORD@host:port or nats.UserInfo) and may publish and
// subscribe only to its user's subjects; the server refuses every other
// publication and subscription (the client sees a permissions violation).
func StartListeningUsers(host string, port int, users []ListenUser) (*server.Server, error) {
	if len(users) == 0 {
		return nil, fmt.Errorf("transport: StartListeningUsers needs at least one user")
	}
	us := make([]*server.User, len(users))
	for i, u := range users {
		if u.Name == "" || u.Password == "" {
			return nil, fmt.Errorf("transport: user %d has an empty name or password", i)
		}
		us[i] = &server.User{Username: u.Name, Password: u.Password, Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: u.Publish},
			Subscribe: &server.SubjectPermission{Allow: u.Subscribe},
		}}
	}
	return startListening(host, port, func(o *server.Options) { o.Users = us })
}

func startListening(host string, port int, auth func(*server.Options)) (*server.Server, error) {
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName: "pairfed-coordinator",
		Host:       host,
		Port:       port,
		NoLog:      true,
		NoSigs:     true,
		MaxPayload: MaxPayload,
	}
	auth(opts)
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
