// Package worker is a site of a pairfed federation: it holds one site's
// records, joins the coordinator, and for each phase the coordinator starts
// runs the local computation and replies with one model vector.
//
// Raw records never leave a worker: the only data-dependent values it
// sends are its record count and dimension (Join) and its phase outputs
// (SiteUpdate). For private jobs the noise is added here, before anything
// is sent, and the release is charged to the worker's ledger before the
// update is returned (charge before release); a phase is released at most
// once — a repeated PhaseStart gets the same bytes again, never a fresh
// noisy value.
//
// Worker is a pure state machine like coordinator.Coordinator: Start, Step
// and Tick return the messages to send; all randomness (sampling and
// privacy noise) is injected through Config. Run wraps it with a transport.
//
// # Its place
//
// The worker is the job state machine of one site: joining, the job it
// takes part in, its privacy ledger and budget, the durable job state
// that lets a restarted site resume, and heartbeats. It knows no
// federated algorithm: the site's half of the job — checks, partition and
// the release of each phase with its ledger entry — comes from the
// algorithm's registered implementation in package fedalgo. It speaks
// package protocol; package coordinator is the other side; cmd/pairfed
// and simulate wire it to a transport.
package worker
