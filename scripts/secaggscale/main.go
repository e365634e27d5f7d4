// Command secaggscale measures one secure aggregation round's CPU per
// party as the number of sites K grows: every site's and the server's
// calls run one after the other on one locked OS thread, each timed by the
// thread's CPU clock (getrusage RUSAGE_THREAD), so the numbers are CPU
// seconds, not wall time, and do not depend on the machine's load. Sites
// drop out at the masked-input step (-drop, a fraction of K), so the
// unmasking removes dropped sites' masks.
//
// It uses only package secagg's public API (Config, NewClient, NewServer,
// NewSigners), so scripts/bench-secagg.sh runs the same file against an
// older tree (the 2017 shape with math/big Shamir) for the baseline column.
//
// Usage: go run ./scripts/secaggscale -k 16,64,256,1024 -d 100 -drop 0.05
package main

import (
	"crypto/rand"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pairfed/pairfed/secagg"
)

var (
	flagK     = flag.String("k", "16,64,256,1024", "comma-separated numbers of sites K")
	flagD     = flag.Int("d", 100, "vector length d")
	flagDrop  = flag.Float64("drop", 0.05, "fraction of the sites that drop out before sending their masked input")
	flagLabel = flag.String("label", "current", "label of this tree in the output")
	// configure, when set (sparse.go: not in trees before SecAgg+, to
	// which bench-secagg.sh copies only this file), adjusts the round's
	// configuration and returns the row's label.
	configure func(*secagg.Config) (string, error)
)

func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		log.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	flag.Parse()
	runtime.LockOSThread()
	fmt.Printf("# %s: d=%d, dropout %.0f%% at the masked-input step, t = ⌊2K/3⌋+1, active variant; CPU seconds per round\n", *flagLabel, *flagD, 100**flagDrop)
	fmt.Printf("%-8s %6s %6s %12s %12s %12s %10s\n", "tree", "K", "t", "site_mean_s", "site_max_s", "server_s", "dropped")
	for _, ks := range strings.Split(*flagK, ",") {
		k, err := strconv.Atoi(ks)
		if err != nil {
			log.Fatal(err)
		}
		run(k)
	}
}

func run(k int) {
	ids := make([]uint32, k)
	for i := range ids {
		ids[i] = uint32(i + 1)
	}
	roster, signers, err := secagg.NewSigners(ids, rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	rid := make([]byte, 32)
	rand.Read(rid)
	t := secagg.DefaultThreshold(k)
	cfg := secagg.Config{RoundID: rid, Sites: ids, Threshold: t, Bits: 32, Dim: *flagD, Roster: roster}
	label := *flagLabel
	if configure != nil {
		if label, err = configure(&cfg); err != nil {
			log.Fatalf("K=%d: %v", k, err)
		}
	}
	site := map[uint32]time.Duration{}
	var server time.Duration
	timeSite := func(id uint32, f func()) { c := cpu(); f(); site[id] += cpu() - c }
	timeServer := func(f func()) { c := cpu(); f(); server += cpu() - c }
	must := func(err error) {
		if err != nil {
			log.Fatalf("K=%d: %v", k, err)
		}
	}
	var srv *secagg.Server
	timeServer(func() { srv, err = secagg.NewServer(cfg) })
	must(err)
	cs := map[uint32]*secagg.Client{}
	nDrop := int(*flagDrop * float64(k))
	for _, id := range ids {
		var m secagg.AdvertiseKeys
		timeSite(id, func() {
			cs[id], err = secagg.NewClient(cfg, id, signers[id], rand.Reader)
			if err == nil {
				m, err = cs[id].Advertise()
			}
		})
		must(err)
		timeServer(func() { err = srv.HandleAdvertise(m) })
		must(err)
	}
	var list secagg.KeyList
	timeServer(func() { list, err = srv.EndAdvertise() })
	must(err)
	for _, id := range ids {
		var m secagg.ShareKeys
		timeSite(id, func() { m, err = cs[id].ShareKeys(list) })
		must(err)
		timeServer(func() { err = srv.HandleShares(m) })
		must(err)
	}
	var fwd map[uint32]secagg.SharesFor
	timeServer(func() { fwd, err = srv.EndShares() })
	must(err)
	x := make([]uint64, *flagD)
	for i, id := range ids {
		if i < nDrop {
			continue // drops out: never sends its masked input
		}
		var m secagg.MaskedInput
		timeSite(id, func() { m, err = cs[id].MaskedInput(fwd[id], x) })
		must(err)
		timeServer(func() { err = srv.HandleMasked(m) })
		must(err)
	}
	var req secagg.UnmaskRequest
	timeServer(func() { req, err = srv.EndMasked() })
	must(err)
	for _, id := range req.Survivors {
		var m secagg.ConsistencySig
		timeSite(id, func() { m, err = cs[id].ConsistencyCheck(req) })
		must(err)
		timeServer(func() { err = srv.HandleCheck(m) })
		must(err)
	}
	var sigs secagg.ConsistencySigs
	timeServer(func() { sigs, err = srv.EndCheck() })
	must(err)
	for _, id := range req.Survivors {
		var m secagg.UnmaskShares
		timeSite(id, func() { m, err = cs[id].UnmaskSigned(sigs) })
		must(err)
		timeServer(func() { err = srv.HandleUnmask(m) })
		must(err)
	}
	var res secagg.Result
	timeServer(func() { res, err = srv.EndUnmask() })
	must(err)
	var total, mx time.Duration
	var all []time.Duration
	for _, d := range site {
		total += d
		mx = max(mx, d)
		all = append(all, d)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	fmt.Printf("%-8s %6d %6d %12.4f %12.4f %12.4f %10d\n", label, k, t, (total / time.Duration(len(site))).Seconds(), mx.Seconds(), server.Seconds(), len(res.Dropped))
	os.Stdout.Sync()
}
