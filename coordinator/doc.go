// Package coordinator is the coordinator of a pairfed federation: it holds
// the global model, admits sites, fixes a job's parameters, starts each
// phase by broadcasting the model, collects one update per site and
// aggregates them, and finally publishes the result.
//
// Coordinator is a pure state machine in the style of etcd raft's RawNode:
// no goroutines, clock, randomness or I/O. Input arrives through Step
// (a decoded protocol message) and Tick (one unit of abstract time); each
// returns the messages to send. Run is the thin concurrent wrapper that
// owns a transport, a ticker and one goroutine.
//
// The coordinator never sees a record: sites send their record count and
// dimension (Join) and, per phase, one model vector and its weight.
//
// # Its place
//
// The coordinator is the job state machine of the federation's hub:
// membership, the job queue (Service), phases, timeouts and quorum, the
// privacy ledger, budgets, checkpoints and resume. It knows no federated
// algorithm: a job's defaults, validation, plan (phases, η, what each site
// is charged), the combination of each phase's updates and the final
// model come from the algorithm's registered implementation in package
// fedalgo, and its ledger records only what the plan and the sites'
// releases say. It speaks package protocol; package worker is the other
// side; cmd/pairfed and simulate wire it to a transport.
package coordinator
