// Package transport carries encoded protocol messages between the
// coordinator and the workers of a federation. It moves opaque bytes on
// subjects and knows nothing of the protocol beyond the size limit.
//
// Two implementations: Mem, an in-memory hub with deterministic delivery
// and hooks that drop, delay or cut messages (the synchronous test network
// of etcd raft and hashicorp raft's InmemTransport), and NATS, over a
// nats.go connection, which splits messages over a frame (MaxPayload)
// into chunks and reassembles them (see Chunked). StartEmbedded runs a
// nats-server in-process without a network listener, for `pairfed
// simulate` and tests.
//
// Only the run loops (coordinator.Run, worker.Run) and cmd/ use a
// Transport; the state machines never see one.
package transport

import "errors"

// Transport publishes to and subscribes on subjects.
//
// Handlers for one subscription are called one at a time, in the order the
// messages were published by any one publisher; a handler must not block
// for long (run loops hand the bytes to their own goroutine). data is
// owned by the handler. Publish does not retain data after it returns.
type Transport interface {
	// Publish sends data on subject. It may return before delivery.
	Publish(subject string, data []byte) error
	// Subscribe calls h for every message published on subject (an exact
	// subject, no wildcards) from now on, until unsubscribe is called.
	Subscribe(subject string, h func(subject string, data []byte)) (unsubscribe func(), err error)
	// Close releases the transport; later calls fail with ErrClosed.
	Close() error
}

// ReadSubscriber is implemented by a transport that can hand one
// message's bytes to several subscribers without a copy for each.
// SubscribeRead is Subscribe for a handler that only reads data while it
// runs: it must neither modify data nor keep it, or any part of it, after
// it returns (protocol.Decode copies what it keeps). A broadcast to K such
// handlers then costs no copy instead of K (Mem: a K-site simulation's
// every announcement and phase start).
type ReadSubscriber interface {
	SubscribeRead(subject string, h func(subject string, data []byte)) (unsubscribe func(), err error)
}

// SubscribeRead subscribes h, a handler that only reads data while it
// runs (see ReadSubscriber), to subject on t: by t's SubscribeRead when t
// is a ReadSubscriber, else by Subscribe (h then owns a copy it ignores).
func SubscribeRead(t Transport, subject string, h func(subject string, data []byte)) (unsubscribe func(), err error) {
	if r, ok := t.(ReadSubscriber); ok {
		return r.SubscribeRead(subject, h)
	}
	return t.Subscribe(subject, h)
}

// ErrClosed is returned by a closed Transport.
var ErrClosed = errors.New("transport: closed")

// MaxPayload is the largest frame the transports put on the wire: the
// NATS default max_payload (1 MiB). The NATS transport splits larger
// messages into chunks of at most this size (see Chunked).
const MaxPayload = 1 << 20

// MaxMessage is the largest message the transports accept: the NATS
// transport reassembles chunked messages up to this size, and the Mem hub
// carries messages up to it whole.
const MaxMessage = 64 << 20

// ErrTooLarge is wrapped by Publish errors for data over the limit.
var ErrTooLarge = errors.New("transport: message too large")
