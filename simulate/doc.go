// Package simulate runs a whole pairfed federation in one process: it
// splits a dataset into a test split and per-site training shards, prepares
// each shard the way a real site would (scaling fitted on the site's own
// records, clipping to R), starts an embedded NATS server, runs one
// coordinator and one worker per site over it, and evaluates the final
// model. It is what `pairfed simulate` calls.
//
// Unlike the coordinator and worker packages it is wiring, not a pure
// core: it owns goroutines, the clock, crypto/rand seeding and the server.
//
// # Its place
//
// simulate sits above coordinator, worker, transport and data, and below
// cmd/pairfed and sweep. It knows no federated algorithm by name: it asks
// package fedalgo whether a job is private and how its guarantee arises.
// Its tests hold the golden runs of every federated algorithm
// (testdata/golden) and a toy algorithm added in one test file.
package simulate
