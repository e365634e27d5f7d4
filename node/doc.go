// Package node runs a federation's long-lived processes as a library: a
// coordinator (Coordinator.Run) and a site's worker (Worker.Run). It is
// the I/O shell around the pure state machines coordinator.Service and
// worker.Service: it owns the state directories (recovery: everything is
// read and checked before anything is written), the NATS connection
// (Connect; an embedded server for Coordinator.Listen), the clock, the
// monitor (ServeHTTP) and the site's records.
//
// # The one rule for a site's records
//
// A site prepares its records for each job by experiment.SiteMap of the
// job's public facts (private or not, centring privately or not, the
// feature-bounds schema or a fitted scaling, R), applied by
// experiment.PrepareModelRecords: the worker's Prepare hook, the
// coordinator's test evaluator (NewEvaluator), `pairfed simulate`
// (simulate.Spec.PrepMap) and the model artefacts all call it, so a
// record is mapped the same way wherever it is read.
//
// # Its place
//
// node sits above coordinator, worker, store, transport, monitor and
// experiment, and below cmd/pairfed, which only turns flags into the
// plain Coordinator and Worker values, prints, and maps UsageError to its
// exit status 2. Every blocking call takes a context; signals stay in
// cmd/pairfed.
package node
