// Command secaggwire measures one secure aggregation round's CPU per
// party as the number of sites K grows, with the round's messages going
// over a transport as in `pairfed simulate`: protocol kinds 32–40 encoded,
// published on the federation's subjects, decoded and checked
// (protocol.CheckSender) — over the embedded nats-server (-transport
// nats, what `pairfed simulate` uses) or the in-memory hub (mem).
//
// Every party (the server, each site) runs its own goroutine locked to
// its own OS thread; the transport's handler only queues the bytes (as the
// run loops of coordinator/ and worker/ do), and each party's decode,
// round step, encode and publish is timed by its thread's CPU clock
// (getrusage RUSAGE_THREAD): CPU seconds, not wall time, so the machine's
// load does not inflate them. The process's whole CPU (getrusage
// RUSAGE_SELF) over the round is printed beside: the rest is the
// transport (nats-server, the clients' read loops, chunking) and the
// runtime. The coordinator's traffic is counted (messages and bytes in and
// out, whole messages before chunking; the largest received): one
// message per site per step in, one per recipient out. The signature cache is off, so every site verifies every
// signature itself, as in its own process.
//
// Sites drop out after sharing their keys (-drop, a fraction of K: the
// last ⌊f·K⌋, as `pairfed simulate --secagg-dropout`): they never send
// their masked input, the server forgets them (round.Server.Forget, what
// the coordinator does for a site it saw leave), and the unmasking removes
// their masks. A step closes when every awaited site answered, or at its
// timeout (round.StepTimeout of -timeout ticks): on a loaded host the K
// sites of one process finish their share step together, after about
// K × their CPU ÷ the cores available, so raise -timeout there.
//
// Usage: go run ./scripts/secaggwire -k 16,64,256,1024 -d 100 -drop 0.05 -transport nats
package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
	"github.com/pairfed/pairfed/secagg/round"
	"github.com/pairfed/pairfed/transport"
)

var (
	flagK     = flag.String("k", "16,64,256,1024", "comma-separated numbers of sites K")
	flagD     = flag.Int("d", 100, "vector length d")
	flagDrop  = flag.Float64("drop", 0.05, "fraction of the sites that drop out after sharing their keys")
	flagTrans = flag.String("transport", "nats", "nats (embedded nats-server, in-process connections) or mem (in-memory hub)")
	flagTick  = flag.Duration("tick", 20*time.Millisecond, "the server's tick")
	flagTO    = flag.Int("timeout", 50, "ticks a step waits after its last answer, per 16 sites (round.StepTimeout; pairfed's --secagg-timeout)")
)

func cpu(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		log.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const (
	rusageSelf   = 0
	rusageThread = 1
)

func main() {
	flag.Parse()
	secagg.DisableSignatureCache()
	fmt.Printf("# transport %s: d=%d, %.0f%% of the sites drop after sharing keys, t = ⌊2K/3⌋+1, active variant; CPU seconds of one round (thread clocks; process = all goroutines incl. the transport)\n", *flagTrans, *flagD, 100**flagDrop)
	fmt.Printf("%-9s %6s %6s %12s %12s %10s %11s %9s %8s %8s %9s %9s %9s %9s %8s\n", "transport", "K", "t", "site_mean_s", "site_max_s", "server_s", "process_s", "wall_s", "dropped", "summed",
		"srv_in", "srv_in_MB", "srv_out", "srv_outMB", "max_KB")
	for _, ks := range strings.Split(*flagK, ",") {
		k, err := strconv.Atoi(ks)
		if err != nil {
			log.Fatal(err)
		}
		if err := run(k); err != nil {
			log.Fatalf("K=%d: %v", k, err)
		}
	}
}

// party is one participant's inbox and CPU account.
type party struct {
	inbox chan []byte
	cpu   time.Duration
}

func run(k int) error {
	const fed = "bench"
	var connect func(string) (transport.Transport, error)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch *flagTrans {
	case "nats":
		s, err := transport.StartEmbedded()
		if err != nil {
			return err
		}
		defer func() { s.Shutdown(); s.WaitForShutdown() }()
		connect = func(name string) (transport.Transport, error) { return transport.ConnectInProcess(s, name) }
	case "mem":
		hub := transport.NewMem()
		go hub.Serve(ctx)
		connect = func(name string) (transport.Transport, error) { return hub.Connect(name), nil }
	default:
		return fmt.Errorf("unknown transport %q", *flagTrans)
	}
	sites := make([]string, k)
	for i := range sites {
		sites[i] = fmt.Sprintf("site-%d", i)
	}
	roster, signers := map[string]ed25519.PublicKey{}, map[string]ed25519.PrivateKey{}
	for _, s := range sites {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return err
		}
		roster[s], signers[s] = pub, priv
	}
	rid := make([]byte, 4)
	rand.Read(rid)
	p := round.Params{Federation: fed, Job: fmt.Sprintf("j%x", rid), Phase: 1, Sites: sites, Bits: 32, Dim: *flagD, Roster: roster}
	nDrop := int(*flagDrop * float64(k))
	dropped := map[string]bool{}
	for _, s := range sites[k-nDrop:] {
		dropped[s] = true
	}

	// Connections and subscriptions first (not timed: a deployment's sites
	// are connected before a job starts).
	queue := func(inbox chan []byte) func(string, []byte) {
		return func(_ string, b []byte) {
			select {
			case inbox <- b:
			case <-ctx.Done():
			}
		}
	}
	raw, err := connect("coordinator")
	if err != nil {
		return err
	}
	defer raw.Close()
	ct := transport.Count(raw) // the coordinator's messages and bytes
	srvParty := &party{inbox: make(chan []byte, 256)}
	var largest atomic.Int64 // the largest message the coordinator received
	q := queue(srvParty.inbox)
	if _, err := ct.Subscribe(protocol.CoordWildcard(fed), func(s string, b []byte) {
		if n := int64(len(b)); n > largest.Load() {
			largest.Store(n)
		}
		q(s, b)
	}); err != nil {
		return err
	}
	ts := make([]transport.Transport, k)
	ps := make([]*party, k)
	for i, s := range sites {
		if ts[i], err = connect(s); err != nil {
			return err
		}
		defer ts[i].Close()
		ps[i] = &party{inbox: make(chan []byte, 64)}
		for _, subj := range []string{protocol.SiteSubject(fed, s), protocol.SitesSubject(fed)} {
			if _, err := ts[i].Subscribe(subj, queue(ps[i].inbox)); err != nil {
				return err
			}
		}
	}

	runtime.GC()
	wall, proc := time.Now(), cpu(rusageSelf)
	var wg sync.WaitGroup
	errs := make(chan error, k+1)
	left := make(chan string, k) // dropped sites, for the server to forget
	for i, s := range sites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := siteLoop(ctx, p, s, signers[s], dropped[s], ts[i], ps[i]); err != nil {
				errs <- fmt.Errorf("%s: %w", s, err)
			} else if dropped[s] {
				left <- s
			}
		}()
	}
	res, err := serverLoop(ctx, p, ct, srvParty, k, left)
	procCPU, wallTime := cpu(rusageSelf)-proc, time.Since(wall)
	cancel()
	wg.Wait()
	if err != nil {
		return err
	}
	select {
	case err := <-errs:
		return err
	default:
	}
	var total, mx time.Duration
	for _, q := range ps {
		total += q.cpu
		mx = max(mx, q.cpu)
	}
	tr := ct.Traffic()
	fmt.Printf("%-9s %6d %6d %12.4f %12.4f %10.4f %11.2f %9.1f %8d %8d %9d %9.1f %9d %9.1f %8.1f\n", *flagTrans, k, secagg.DefaultThreshold(k),
		(total / time.Duration(k)).Seconds(), mx.Seconds(), srvParty.cpu.Seconds(), procCPU.Seconds(), wallTime.Seconds(), len(res.Dropped), k-len(res.Dropped)-len(res.Excluded),
		tr.ReceivedMessages, float64(tr.ReceivedBytes)/1e6, tr.PublishedMessages, float64(tr.PublishedBytes)/1e6, float64(largest.Load())/1e3)
	os.Stdout.Sync()
	return nil
}

// serverLoop runs the coordinator's side: the transport's messages and the
// ticks, on one locked thread, until the round's result.
func serverLoop(ctx context.Context, p round.Params, t transport.Transport, me *party, k int, left <-chan string) (*secagg.Result, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fed := p.Federation
	var srv *round.Server
	var err error
	timed(me, func() { srv, err = round.NewServer(p, round.StepTimeout(*flagTO, k)) })
	if err != nil {
		return nil, err
	}
	ticker := time.NewTicker(*flagTick)
	defer ticker.Stop()
	send := func(outs []round.Outgoing) error {
		for _, o := range outs {
			subj := protocol.SitesSubject(fed)
			if o.To != "" {
				subj = protocol.SiteSubject(fed, o.To)
			}
			b, err := protocol.Encode(o.Msg)
			if err != nil {
				return err
			}
			if err := t.Publish(subj, b); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		var outs []round.Outgoing
		var res *secagg.Result
		var rerr, serr error
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case b := <-me.inbox:
			timed(me, func() {
				m, err := protocol.Decode(b)
				if err != nil {
					rerr = err
					return
				}
				from, _ := protocol.Sender(m)
				if err := protocol.CheckSender(fed, protocol.SiteToCoordSubject(fed, from), m); err != nil {
					rerr = err
					return
				}
				outs, res, rerr = srv.Deliver(from, m)
				serr = send(outs)
			})
		case s := <-left:
			timed(me, func() {
				outs, res, rerr = srv.Forget(s)
				serr = send(outs)
			})
		case <-ticker.C:
			timed(me, func() {
				outs, res, rerr = srv.Tick()
				serr = send(outs)
			})
		}
		if serr != nil {
			return nil, serr
		}
		if rerr != nil && srv.Done() {
			return nil, rerr
		}
		if res != nil {
			return res, nil
		}
	}
}

// siteLoop runs one site on its own locked thread: keys at once, then one
// answer per coordinator message; a dropped site stops after its shares.
func siteLoop(ctx context.Context, p round.Params, name string, key ed25519.PrivateKey, drop bool, t transport.Transport, me *party) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fed := p.Federation
	input := make([]uint64, p.Dim)
	var site *round.Site
	var out protocol.Message
	var err error
	publish := func(m protocol.Message) error {
		b, err := protocol.Encode(m)
		if err != nil {
			return err
		}
		return t.Publish(protocol.SiteToCoordSubject(fed, name), b)
	}
	timed(me, func() {
		site, out, err = round.NewSite(p, name, key, input, rand.Reader)
		if err == nil {
			err = publish(out)
		}
	})
	if err != nil {
		return err
	}
	sent := 1
	for {
		select {
		case <-ctx.Done():
			return nil
		case b := <-me.inbox:
			if drop && sent == 2 {
				// Crashed after sharing its keys: it never answers the
				// shares forwarded to it (the step after the share step, so
				// the server forgets it there, not before its shares).
				return nil
			}
			timed(me, func() {
				var m protocol.Message
				if m, err = protocol.Decode(b); err != nil {
					return
				}
				if out, err = site.Deliver(m); err != nil || out == nil {
					return
				}
				err = publish(out)
				sent++
			})
			if err != nil {
				return err
			}
		}
	}
}

func timed(me *party, f func()) {
	c := cpu(rusageThread)
	f()
	me.cpu += cpu(rusageThread) - c
}
