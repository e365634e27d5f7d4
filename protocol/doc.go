// Package protocol is the wire format of a pairfed federation: the messages
// a coordinator and its workers (sites) exchange, their encoding, the
// validation every received message goes through, and the subject layout
// on the message bus.
//
// It is what the coordinator and the workers share besides the federated
// algorithms (package fedalgo) and the learning core (package pairwise);
// both import it, neither imports the other, and neither imports a
// transport: transports carry opaque bytes.
//
// # Algorithms
//
// The protocol knows no federated algorithm by name. A job's messages
// carry the algorithm's name (Algo) and its parameters: the ones every
// algorithm shares as fields, the algorithm-specific ones (LocalAlgo so
// far) as optional fields, so that older encodings still decode. Each
// algorithm registers a validator for its parameters (RegisterAlgorithm,
// called by fedalgo.Register), which Validate — and so Encode and
// Decode — applies to every JobSubmit and JobAnnounce naming it.
//
// # Encoding
//
// A message is one Kind byte followed by a MessagePack body
// (github.com/vmihailenco/msgpack/v5): a two-element array
// [version, message] whose message is a map from the field names of the
// msgpack tags below to their values (the hashicorp/memberlist layout of
// one type byte + msgpack, with the protocol version inside the body).
// Kind values are append-only. Decode rejects unknown versions and kinds,
// unknown fields, trailing bytes, oversized input, non-finite floats,
// models over MaxParams, and empty or malformed ids, so a state machine
// only ever sees well-formed messages.
//
// # Subjects
//
//	pairfed.<federation>.coord.<site>  one site → coordinator (Join, Heartbeat, Accept, SiteUpdate, Leave, Refuse, Abort);
//	                                   the coordinator subscribes to pairfed.<federation>.coord.* and drops
//	                                   a message whose sender is not <site> (CheckSender)
//	pairfed.<federation>.sites         coordinator → every site (JobAnnounce, PhaseStart, Result, Abort)
//	pairfed.<federation>.site.<site>   coordinator → one site (JobAnnounce, PhaseStart: catch-up after a repeated Join)
//	pairfed.<federation>.jobs          clients → coordinator (JobSubmit; JobQuery and JobList, which never start a job; JobCancel)
//	pairfed.<federation>.client.<id>   coordinator → one client (JobStatus)
//
// Sites send Refuse on their coord subject when they decline a job and
// Accept when they take it: the coordinator starts no phase before every
// participant answered (the accept round), so a refused job charges no one.
//
// Federation and site names are subject tokens: 1–64 characters of
// [A-Za-z0-9_-].
//
// # Size
//
// An encoded message must fit MaxMessageSize (64 MiB); a model is at most
// MaxParams floats. Messages above the NATS server's max_payload (1 MiB by
// default) are split into chunks and reassembled by the transport
// (transport.Chunked), which checks each message's SHA-256.
//
// # What crosses the wire
//
// Raw records never do. A site sends its name, its record count n and the
// dimension d (Join), then per phase one model vector, its aggregation
// weight (n, or the size of the phase's partition) and, for private jobs,
// the σ it added and the (ε, δ) it claims.
package protocol
