package coordinator

import (
	"context"
	"fmt"
	"time"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
)

// Run drives c over t until the job is done, aborted, or ctx ends: it
// subscribes to the federation's coordinator subject, hands decoded
// messages to Step, calls Tick every tick, and publishes every output.
// It is the only goroutine that touches c (the transport's handler only
// decodes and queues). Undecodable messages are logged and dropped.
func Run(ctx context.Context, c *Coordinator, t transport.Transport, tick time.Duration) (*protocol.Result, error) {
	return RunWith(ctx, c, t, tick, RunOptions{})
}

// RunOptions are the hooks of RunWith's loop, each called from the loop's
// goroutine (so they see a consistent Coordinator).
type RunOptions struct {
	// Observe, when set, is called once before the loop starts and after
	// every step and tick, before that step's outputs are published, with
	// the coordinator (read only; it must not retain it): e.g. to publish
	// c.View() for an HTTP status page.
	Observe func(*Coordinator)
}

// RunWith is Run with the hooks of opt.
func RunWith(ctx context.Context, c *Coordinator, t transport.Transport, tick time.Duration, opt RunOptions) (*protocol.Result, error) {
	if tick <= 0 {
		return nil, fmt.Errorf("coordinator: tick %v must be > 0", tick)
	}
	inbox := make(chan protocol.Message, 256)
	unsub, err := t.Subscribe(protocol.CoordWildcard(c.cfg.Federation), func(subject string, data []byte) {
		m, err := receive(c.cfg.Federation, subject, data)
		if err != nil {
			c.cfg.Logf("coordinator: dropped message on %s: %v", subject, err)
			return
		}
		select {
		case inbox <- m:
		case <-ctx.Done():
		}
	})
	if err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	defer unsub()
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	if opt.Observe != nil {
		opt.Observe(c)
	}
	var enc encoder
	link := newLinkWatch(t, c.cfg.Logf, tick)
	for !c.Done() {
		var outs []Output
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case m := <-inbox:
			outs = c.Step(m)
		case <-ticker.C:
			if up, err := link.up(); err != nil {
				return nil, err
			} else if !up {
				continue // the clocks stand still while the hub is out of reach
			}
			outs = c.Tick()
		}
		if opt.Observe != nil {
			opt.Observe(c)
		}
		if err := enc.publish(t, outs); err != nil {
			return nil, err
		}
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return c.Result(), nil
}

// linkWatch follows the run loop's own transport (transport.Link). While
// the coordinator is cut from its hub (a NATS server restarting) it hears
// no site, which says nothing about the sites: counting that silence
// against them dropped every site of the running job after SiteTimeout
// and aborted it, and the sites, who never heard the abort, waited for
// their job timeout (issue 28, finding 14). So the loop does not tick
// while the transport is down: site silence, phase, accept and secure
// aggregation step timeouts all stand still and resume where they were
// when the connection is back (the sites join again then: worker.Serve).
//
// A connection that cannot come back (transport.Failer: the server
// refuses the coordinator's credentials, for 2 s of ticks in a row) ends
// the loop with that error instead.
type linkWatch struct {
	l     *transport.Link
	logf  func(string, ...any)
	down  bool
	grace int // polls
}

// failureGrace is how long a transport failure (refused credentials) must
// persist before a run loop gives up: a server being reconfigured, or
// nats.go's own retry, gets that long.
const failureGrace = 2 * time.Second

func newLinkWatch(t transport.Transport, logf func(string, ...any), tick time.Duration) *linkWatch {
	return &linkWatch{l: transport.NewLink(t), logf: logf, grace: int(failureGrace/tick) + 1}
}

// up reports whether the loop may tick now, logging each change; an error
// when the transport cannot come back.
func (w *linkWatch) up() (bool, error) {
	up, back := w.l.Poll()
	if err := w.l.Failed(w.grace); err != nil {
		return false, fmt.Errorf("coordinator: %w", err)
	}
	switch {
	case !up && !w.down:
		w.down = true
		w.logf("coordinator: lost the connection to the message hub: site silence and phase timeouts are paused until it is back")
	case back:
		w.down = false
		w.logf("coordinator: connection to the message hub is back: timeouts resume")
	}
	return up, nil
}

// receive decodes a message the coordinator received on subject and checks
// that it may arrive there: job submissions and queries on the jobs subject, and on
// site s's subject only messages that site s sends about itself
// (protocol.CheckSender) — a site cannot speak for another.
func receive(fed, subject string, data []byte) (protocol.Message, error) {
	jobs := subject == protocol.JobsSubject(fed)
	if jobs && len(data) > 0 {
		// The kind first: a Result on the jobs subject was dropped as
		// "phase 0 outside [1, 65536]", its body's check, not as a message
		// of the wrong kind (probe 4 of issue 28).
		switch k := protocol.Kind(data[0]); k {
		case protocol.KindJobSubmit, protocol.KindJobQuery, protocol.KindJobList, protocol.KindJobCancel:
		default:
			return nil, fmt.Errorf("a %v message on the jobs subject %s, which takes only job-submit, job-query, job-list and job-cancel (a client or site publishing on the wrong subject?)", k, subject)
		}
	}
	m, err := protocol.Decode(data)
	if err != nil {
		return nil, err
	}
	if jobs {
		switch m.(type) {
		case *protocol.JobSubmit, *protocol.JobQuery, *protocol.JobList, *protocol.JobCancel:
			return m, nil
		}
		return nil, fmt.Errorf("%v on the jobs subject", m.Kind())
	}
	if err := protocol.CheckSender(fed, subject, m); err != nil {
		return nil, err
	}
	return m, nil
}

// encoder encodes a run loop's outputs, remembering the encoding of the
// last job announcement it encoded. The coordinator sends its announcement
// (one *protocol.JobAnnounce, never modified once announced: see
// Coordinator.job) with every phase start and to every site that joins
// again while the job runs; with K sites each encoding validated and wrote
// K names again, and a storm of K re-joins cost O(K²).
type encoder struct {
	ann *protocol.JobAnnounce
	b   []byte // ann's encoding; transports do not retain or modify it
}

func (e *encoder) encode(m protocol.Message) ([]byte, error) {
	a, isAnn := m.(*protocol.JobAnnounce)
	if isAnn && a == e.ann {
		return e.b, nil
	}
	b, err := protocol.Encode(m)
	if err == nil && isAnn {
		e.ann, e.b = a, b
	}
	return b, err
}

func (e *encoder) publish(t transport.Transport, outs []Output) error {
	for _, o := range outs {
		b, err := e.encode(o.Msg)
		if err != nil {
			return fmt.Errorf("coordinator: %w", err)
		}
		if err := t.Publish(o.Subject, b); err != nil {
			return fmt.Errorf("coordinator: %w", err)
		}
	}
	return nil
}

// ServeOptions are the hooks of Serve's run loop, each called from the
// loop's goroutine (so they see a consistent Service).
type ServeOptions struct {
	// Persist, when set, receives every job that ended; Serve publishes
	// the outputs of that step only after it returned nil, so a final
	// status is durable before any client sees it. An error stops Serve.
	Persist func(*protocol.JobStatus) error
	// Ledger, when set, receives the privacy charges of every step
	// (Service.TakeCharges) before its outputs are published: a job is
	// charged durably before it is announced. An error does not stop
	// Serve: see Service.SetStorageError (the same for Persist and
	// Checkpoint).
	Ledger func([]Charge) error
	// Checkpoint, when set, receives Service.Checkpoint after every step
	// and tick that queued, started or finished a job or started a phase,
	// before its outputs are published, so that a restarted coordinator
	// (RestoreService, Resume) resumes from the last phase any site saw.
	// It is called once before the first message, too. An error stops
	// Serve.
	Checkpoint func(*Checkpoint) error
	// Observe, when set, is called after every step and tick with the
	// service (read only; it must not retain it): e.g. to publish a
	// snapshot for an HTTP status page.
	Observe func(*Service)
}

// Serve drives a Service over t until ctx ends: it subscribes to the
// federation's coordinator and jobs subjects, hands decoded messages to
// Step and ticks to Tick, runs the hooks of opt, and only then publishes
// the outputs.
func Serve(ctx context.Context, s *Service, t transport.Transport, tick time.Duration, opt ServeOptions) error {
	if tick <= 0 {
		return fmt.Errorf("coordinator: tick %v must be > 0", tick)
	}
	inbox := make(chan protocol.Message, 256)
	handler := func(subject string, data []byte) {
		m, err := receive(s.cfg.Federation, subject, data)
		if err != nil {
			s.cfg.Logf("coordinator: dropped message on %s: %v", subject, err)
			return
		}
		select {
		case inbox <- m:
		case <-ctx.Done():
		}
	}
	for _, subj := range []string{protocol.CoordWildcard(s.cfg.Federation), protocol.JobsSubject(s.cfg.Federation)} {
		unsub, err := t.Subscribe(subj, handler)
		if err != nil {
			return fmt.Errorf("coordinator: %w", err)
		}
		defer unsub()
	}
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	last := ""
	var pend pendingWrites
	var enc encoder
	link := newLinkWatch(t, s.cfg.Logf, tick)
	outs := s.Resume()
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case m := <-inbox:
				outs = s.Step(m)
			case <-ticker.C:
				if up, err := link.up(); err != nil {
					return err
				} else if !up {
					continue // the clocks stand still while the hub is out of reach
				}
				outs = s.Tick()
			}
		}
		// Durable before visible: charges, then finished jobs, then the
		// checkpoint, and only then the outputs. A write that fails (a
		// full disk) does not stop the coordinator: what was not written
		// is kept and written again on every later step and tick, in the
		// same order; the failing step's outputs are not published (they
		// depend on what is not durable), and the service aborts the
		// running job and refuses new ones until the writes succeed
		// (Service.SetStorageError).
		pend.charges = append(pend.charges, s.TakeCharges()...)
		pend.finished = append(pend.finished, s.TakeFinished()...)
		if err := pend.flush(s, opt, &last); err != nil {
			if s.StorageError() == nil {
				outs = s.SetStorageError(err)
				pend.charges = s.Unreserve(pend.charges)
				// The abort's own status and checkpoint are retried with
				// the rest; the abort itself needs no durability.
				pend.finished = append(pend.finished, s.TakeFinished()...)
			} else {
				// No job runs while the error holds: what a step returns
				// then (refusals, replies) needs no durability.
				s.SetStorageError(err)
			}
		} else if s.StorageError() != nil {
			s.SetStorageError(nil)
		}
		if opt.Observe != nil {
			opt.Observe(s)
		}
		if err := enc.publish(t, outs); err != nil {
			return err
		}
	}
}

// pendingWrites is what a Serve loop has yet to make durable, in the
// order it must be written: charges, finished jobs, the checkpoint.
type pendingWrites struct {
	charges  []Charge
	finished []*protocol.JobStatus
}

// flush writes what is pending, in order, stopping at the first error
// (what was written is dropped from the pending lists); the checkpoint is
// written when the service's progress differs from *last.
func (p *pendingWrites) flush(s *Service, opt ServeOptions, last *string) error {
	if len(p.charges) > 0 && opt.Ledger != nil {
		if err := opt.Ledger(p.charges); err != nil {
			return fmt.Errorf("coordinator: ledger: %w", err)
		}
	}
	p.charges = nil
	for len(p.finished) > 0 {
		if opt.Persist != nil {
			if err := opt.Persist(p.finished[0]); err != nil {
				return fmt.Errorf("coordinator: persist job %s: %w", p.finished[0].Job, err)
			}
		}
		p.finished = p.finished[1:]
	}
	if pr := s.progress(); opt.Checkpoint != nil && pr != *last {
		if err := opt.Checkpoint(s.Checkpoint()); err != nil {
			return fmt.Errorf("coordinator: checkpoint: %w", err)
		}
		*last = pr
	}
	return nil
}
