package worker

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
)

// Run drives w over t until the job ends or ctx is done: it subscribes to
// the federation's broadcast subject and this site's subject, sends the
// first Join, then hands decoded messages to Step and ticks to Tick, and
// publishes every output. On cancellation it sends a best-effort Leave.
// Local phases run on this goroutine (Step); ctx cancels them.
func Run(ctx context.Context, w *Worker, t transport.Transport, tick time.Duration) (*protocol.Result, error) {
	if tick <= 0 {
		return nil, fmt.Errorf("worker: tick %v must be > 0", tick)
	}
	inbox := make(chan protocol.Message, 64)
	dec := w.cfg.Broadcasts
	if dec == nil {
		dec = new(BroadcastMemo)
	}
	handler := func(subject string, data []byte) {
		m, err := dec.decode(data)
		if err != nil {
			w.cfg.Logf("worker %s: dropped message on %s: %v", w.cfg.Site, subject, err)
			return
		}
		select {
		case inbox <- m:
		case <-ctx.Done():
		}
	}
	// The handler only reads the bytes (the memo and protocol.Decode copy
	// what they keep): a hub may share one copy of a broadcast among the
	// sites that receive it.
	for _, subj := range []string{protocol.SitesSubject(w.cfg.Federation), protocol.SiteSubject(w.cfg.Federation, w.cfg.Site)} {
		unsub, err := transport.SubscribeRead(t, subj, handler)
		if err != nil {
			return nil, fmt.Errorf("worker %s: %w", w.cfg.Site, err)
		}
		defer unsub()
	}
	if err := publish(t, w.Start()); err != nil {
		return nil, err
	}
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	link := newLinkWatch(t, w.cfg.Site, w.cfg.Logf, tick)
	for !w.Done() {
		var outs []Output
		select {
		case <-ctx.Done():
			leave := []Output{w.toCoord(&protocol.Leave{Site: w.cfg.Site, Reason: "shutting down", Instance: w.cfg.Instance})}
			_ = publish(t, leave)
			return nil, ctx.Err()
		case m := <-inbox:
			// Every message of the inbox came through dec.decode:
			// protocol.Decode validated it (or the announcement it is
			// a copy of) in full.
			w.decoded, _ = m.(*protocol.JobAnnounce)
			outs = w.Step(ctx, m)
			w.decoded = nil
		case <-ticker.C:
			up, back, err := link.poll()
			if err != nil {
				return nil, err
			}
			if !up {
				continue // the job's clocks stand still while the hub is out of reach
			}
			outs = w.Tick()
			if back && !w.Done() {
				outs = append(outs, w.join()) // the coordinator catches this site up
			}
		}
		if err := publish(t, outs); err != nil {
			return nil, err
		}
	}
	if err := w.Err(); err != nil {
		return nil, err
	}
	return w.Result(), nil
}

// BroadcastMemo decodes the messages a site receives, remembering the
// last job announcement and the last result it decoded: the two
// broadcasts that list every participant. The coordinator repeats its
// announcement with every phase start and in every catch-up and accept
// retry: with K sites each of them would decode K names again for every
// repeat (O(K²) per phase). Bytes equal to the remembered ones were
// decoded and validated in full by protocol.Decode already, so they get a
// copy of that message after one comparison of the bytes; any other input
// is decoded in full, as strictly as ever. An announcement's copies share
// their lists (Sites, Instances, Options) with the remembered message: a
// site only reads an announcement, never writes into its lists (copying
// 1024 names per repeat cost as much as the comparison saved). A result's
// copies have their own Model and Sites (a site hands its result on to
// its caller). It is safe for concurrent use: a transport may call the
// handlers of the site's two subscriptions on two goroutines, and the
// sites of one process may share one (Config.Broadcasts): a simulation's
// K sites then decode each announcement and the result once, not K times.
//
// Sharing one between sites shares no trust: the memo's key is the whole
// encoding (compared byte for byte, not hashed), decoding and validating
// are functions of those bytes alone, and a site handed a remembered
// message gets exactly what decoding its own copy of the same bytes
// would give it. Everything a site checks against its own state (its
// name among the sites, its plan and σ, its records) is still checked by
// that site in Step.
type BroadcastMemo struct {
	mu     sync.Mutex
	ann    memoEntry // the last announcement decoded
	result memoEntry // the last result decoded
}

// memoEntry is a remembered message and its encoding.
type memoEntry struct {
	raw []byte
	msg protocol.Message
}

func (d *BroadcastMemo) decode(data []byte) (protocol.Message, error) {
	var e *memoEntry
	switch {
	case len(data) == 0:
	case protocol.Kind(data[0]) == protocol.KindJobAnnounce:
		e = &d.ann
	case protocol.Kind(data[0]) == protocol.KindResult:
		e = &d.result
	}
	if e == nil {
		return protocol.Decode(data)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if e.msg == nil || !bytes.Equal(data, e.raw) {
		m, err := protocol.Decode(data)
		if err != nil {
			return nil, err
		}
		e.raw, e.msg = append(e.raw[:0], data...), m
	}
	switch m := e.msg.(type) {
	case *protocol.JobAnnounce:
		c := *m
		return &c, nil
	case *protocol.Result:
		c := *m
		c.Model, c.Sites = slices.Clone(m.Model), slices.Clone(m.Sites)
		return &c, nil
	}
	return nil, fmt.Errorf("worker: memo holds a %v", e.msg.Kind()) // unreachable
}

func publish(t transport.Transport, outs []Output) error {
	for _, o := range outs {
		b, err := protocol.Encode(o.Msg)
		if err != nil {
			return fmt.Errorf("worker: %w", err)
		}
		if err := t.Publish(o.Subject, b); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
	}
	return nil
}

// ServeOptions tune Serve. The zero value is the production setting.
type ServeOptions struct {
	// UpdateDelay holds every SiteUpdate (and secure aggregation masked
	// vector) back this long before it is published (tests use it to
	// kill a site in the middle of a job).
	UpdateDelay time.Duration
}

// Serve drives a Service over t until ctx is done, serving job after job.
// On cancellation it sends a best-effort Leave.
func Serve(ctx context.Context, s *Service, t transport.Transport, tick time.Duration, opt ServeOptions) error {
	if tick <= 0 {
		return fmt.Errorf("worker: tick %v must be > 0", tick)
	}
	cfg := &s.cfg.Worker
	inbox := make(chan protocol.Message, 64)
	// A phase runs on this goroutine with its own context, which the
	// subscription handlers cancel as soon as a message says the
	// coordinator gave up on the phase's job (its Abort or Result) or
	// moved on to another job that lists this site: the site abandons
	// the computation (nothing is released or charged) and is free for
	// the next job.
	var phaseMu sync.Mutex
	var phaseJob string
	var phaseCancel context.CancelFunc
	var dec BroadcastMemo
	handler := func(subject string, data []byte) {
		m, err := dec.decode(data)
		if err != nil {
			cfg.Logf("worker %s: dropped message on %s: %v", cfg.Site, subject, err)
			return
		}
		phaseMu.Lock()
		if phaseCancel != nil && abandons(m, phaseJob, cfg.Site) {
			cfg.Logf("worker %s: %v about job %s: abandoning its running phase", cfg.Site, m.Kind(), phaseJob)
			phaseCancel()
			phaseCancel = nil
		}
		phaseMu.Unlock()
		select {
		case inbox <- m:
		case <-ctx.Done():
		}
	}
	for _, subj := range []string{protocol.SitesSubject(cfg.Federation), protocol.SiteSubject(cfg.Federation, cfg.Site)} {
		unsub, err := t.Subscribe(subj, handler)
		if err != nil {
			return fmt.Errorf("worker %s: %w", cfg.Site, err)
		}
		defer unsub()
	}
	if err := publish(t, s.Start()); err != nil {
		return err
	}
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	link := newLinkWatch(t, cfg.Site, cfg.Logf, tick)
	for {
		var outs []Output
		select {
		case <-ctx.Done():
			leave := Output{Subject: protocol.SiteToCoordSubject(cfg.Federation, cfg.Site), Msg: &protocol.Leave{Site: cfg.Site, Reason: "shutting down", Instance: cfg.Instance}}
			_ = publish(t, []Output{leave})
			return ctx.Err()
		case m := <-inbox:
			if ps, ok := m.(*protocol.PhaseStart); ok {
				pctx, cancel := context.WithCancel(ctx)
				phaseMu.Lock()
				phaseJob, phaseCancel = ps.Job, cancel
				phaseMu.Unlock()
				// A long phase keeps the site live at the coordinator:
				// heartbeats go on beside the computation (the loop that
				// usually sends them is busy), so the site is not dropped
				// as silent while it computes.
				hbDone := heartbeatDuring(pctx, t, cfg, tick)
				outs = s.Step(pctx, m)
				cancel()
				<-hbDone
				phaseMu.Lock()
				phaseJob, phaseCancel = "", nil
				phaseMu.Unlock()
			} else if _, ok := m.(*protocol.JobAnnounce); ok {
				// Accepting a job computes too (its plan and calibration
				// are checked here, never taken from the coordinator: an
				// RDP search can take seconds on a small host): the site
				// heartbeats beside it and keeps its membership.
				actx, cancel := context.WithCancel(ctx)
				hbDone := heartbeatDuring(actx, t, cfg, tick)
				outs = s.Step(ctx, m)
				cancel()
				<-hbDone
			} else {
				outs = s.Step(ctx, m)
			}
		case <-ticker.C:
			up, back, err := link.poll()
			if err != nil {
				return err
			}
			if !up {
				continue // the job timeout stands still while the hub is out of reach
			}
			outs = s.Tick()
			if back && !slices.ContainsFunc(outs, func(o Output) bool { return o.Msg.Kind() == protocol.KindJoin }) {
				// Join again at once: the coordinator learns the site is
				// there and repeats the running job's announcement and
				// phase to it, whatever it missed during the outage.
				outs = append(outs, s.join())
			}
		}
		if opt.UpdateDelay > 0 && slices.ContainsFunc(outs, func(o Output) bool {
			k := o.Msg.Kind()
			return k == protocol.KindSiteUpdate || k == protocol.KindSecAggMasked
		}) {
			select {
			case <-time.After(opt.UpdateDelay):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := publishLogged(t, outs, cfg.Logf); err != nil {
			return err
		}
	}
}

// linkWatch follows a site's own transport (transport.Link). While the
// site is cut from its hub it hears nothing about its job, which says
// nothing about the job: counting that silence made every site give up
// its job after a hub outage longer than the job timeout, or sit in a job
// the coordinator had aborted (issue 28, finding 14). So the loop does not
// tick while the transport is down (the job timeout, heartbeats and the
// worker's own round clocks stand still) and joins again when it is back.
//
// A connection that cannot come back (transport.Failer: the server
// refuses the site's credentials, for 2 s of ticks in a row) ends the
// loop with that error: the site could never take part again.
type linkWatch struct {
	l     *transport.Link
	site  string
	logf  func(string, ...any)
	down  bool
	grace int // polls
}

// failureGrace is how long a transport failure (refused credentials) must
// persist before a run loop gives up.
const failureGrace = 2 * time.Second

func newLinkWatch(t transport.Transport, site string, logf func(string, ...any), tick time.Duration) *linkWatch {
	return &linkWatch{l: transport.NewLink(t), site: site, logf: logf, grace: int(failureGrace/tick) + 1}
}

// poll is Link.Poll, logging each change; an error when the transport
// cannot come back.
func (w *linkWatch) poll() (up, back bool, err error) {
	up, back = w.l.Poll()
	if err := w.l.Failed(w.grace); err != nil {
		return false, false, fmt.Errorf("worker %s: %w", w.site, err)
	}
	switch {
	case !up && !w.down:
		w.down = true
		w.logf("worker %s: lost the connection to the message hub: the job timeout is paused until it is back", w.site)
	case back:
		w.down = false
		w.logf("worker %s: connection to the message hub is back: joining again", w.site)
	}
	return up, back, nil
}

// abandons reports whether m tells a site that is computing a phase of
// job that the coordinator no longer waits for it: the job's Abort or
// Result, or the announcement of another job that lists site.
func abandons(m protocol.Message, job, site string) bool {
	switch m := m.(type) {
	case *protocol.Abort:
		return m.Job == job
	case *protocol.Result:
		return m.Job == job
	case *protocol.JobAnnounce:
		return m.Job != job && slices.Contains(m.Sites, site)
	}
	return false
}

// publishLogged is publish for a long-running site: a message that does
// not encode (it fails the protocol's validation) is logged and dropped —
// a bad value must not stop the site — while a transport error still ends
// the loop.
func publishLogged(t transport.Transport, outs []Output, logf func(string, ...any)) error {
	for _, o := range outs {
		b, err := protocol.Encode(o.Msg)
		if err != nil {
			logf("worker: not sent (%v on %s): %v", o.Msg.Kind(), o.Subject, err)
			continue
		}
		if err := t.Publish(o.Subject, b); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
	}
	return nil
}

// heartbeatDuring publishes a Heartbeat every cfg.HeartbeatEvery ticks
// until ctx is done, then closes the returned channel. Its sequence
// numbers start at 2³² so as not to repeat the worker's own.
func heartbeatDuring(ctx context.Context, t transport.Transport, cfg *Config, tick time.Duration) <-chan struct{} {
	done := make(chan struct{})
	if cfg.HeartbeatEvery <= 0 {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		tk := time.NewTicker(tick * time.Duration(cfg.HeartbeatEvery))
		defer tk.Stop()
		seq := uint64(1) << 32
		subject := protocol.SiteToCoordSubject(cfg.Federation, cfg.Site)
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
				seq++
				if b, err := protocol.Encode(&protocol.Heartbeat{Site: cfg.Site, Seq: seq}); err == nil {
					_ = t.Publish(subject, b)
				}
			}
		}
	}()
	return done
}
