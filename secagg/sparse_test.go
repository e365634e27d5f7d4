package secagg

import (
	"crypto/ed25519"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// sparseConfig is testConfig with the sparse variant's degree and local
// threshold.
func sparseConfig(k, degree, local, bits, dim int, seed uint64) Config {
	cfg := testConfig(k, DefaultThreshold(k), bits, dim, seed)
	cfg.Degree, cfg.Local = degree, local
	if degree > 0 {
		cfg.Withheld = local / 2 // lenient: these tests drop sites at every step
	}
	return cfg
}

// The sparse variant (SecAgg+) either returns exactly the sum of the
// inputs of the sites it names as included — which are the sites whose
// masked inputs the server received, less none — or aborts cleanly with
// ErrTooFewSurvivors, under random dropouts at every step, in both
// variants. Every trial is a fresh graph.
// The default run draws the first 12 of the 40 trials (the same seeds);
// the build tag long runs all 40 (TestLongSparseRoundSums).
func TestSparseRoundSumWithRandomDropouts(t *testing.T) { sparseRoundSums(t, 12) }

func sparseRoundSums(t *testing.T, trials int) {
	rng := rand.New(rand.NewPCG(17, 18))
	rnd := testRand(17)
	completed, aborted := 0, 0
	for trial := range trials {
		hbc := trial%2 == 1
		k := 12 + rng.IntN(40)
		degree := k/4 + rng.IntN(k/4)
		local := max(2, degree/2+rng.IntN(degree/4+1)-degree/8)
		bits := []int{8, 32, 64}[rng.IntN(3)]
		cfg := sparseConfig(k, degree, local, bits, 1+rng.IntN(20), uint64(100+trial))
		cfg.HonestButCurious = hbc
		inputs := randomInputs(cfg, rng)
		steps := NumDropSteps
		if hbc {
			steps = DropAfterCheck
		}
		dropAt := map[uint32]int{}
		pDrop := rng.Float64() * 0.15
		for _, id := range cfg.Sites {
			if rng.Float64() < pDrop {
				dropAt[id] = rng.IntN(steps)
			}
		}
		res, tr, err := RunInMemory(cfg, inputs, dropAt, rnd)
		if err != nil {
			if !errors.Is(err, ErrTooFewSurvivors) {
				t.Fatalf("trial %d (K=%d k=%d ℓ=%d): %v", trial, k, degree, local, err)
			}
			aborted++
			continue
		}
		var sent []uint32
		for _, m := range tr.Masked {
			sent = append(sent, m.From)
		}
		slices.Sort(sent)
		if !slices.Equal(res.Included, sent) {
			t.Fatalf("trial %d: included %v, masked inputs from %v", trial, res.Included, sent)
		}
		want := make([]uint64, cfg.Dim)
		for _, id := range res.Included {
			for i, w := range inputs[id] {
				want[i] += w
			}
		}
		for i := range want {
			want[i] &= cfg.mask()
		}
		if !slices.Equal(res.Sum, want) {
			t.Fatalf("trial %d (K=%d k=%d ℓ=%d drops %v): sum %v, want %v", trial, k, degree, local, dropAt, res.Sum, want)
		}
		completed++
	}
	if completed < trials/2 {
		t.Fatalf("only %d of %d sparse rounds completed (%d aborted)", completed, trials, aborted)
	}
	t.Logf("%d sparse rounds completed exactly, %d aborted cleanly", completed, aborted)
}

// In the sparse variant a site deals shares to its neighbours only, and
// the graph has about the degree asked for.
func TestSparseGraphDegree(t *testing.T) {
	cfg := sparseConfig(100, 30, 15, 32, 1, 5)
	cfg.HonestButCurious = true // the graph and the dealing are the same; no signatures to check
	srv, cs, list := advertised(t, cfg, nil, 5)
	total := 0
	for _, id := range cfg.Sites {
		m, err := cs[id].ShareKeys(list)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range m.Shares {
			if !srv.g.adjacent(id, e.To) || !srv.g.adjacent(e.To, id) {
				t.Fatalf("site %d dealt to non-neighbour %d", id, e.To)
			}
		}
		total += len(m.Shares)
	}
	// Mean degree 30 over 100 sites: Σ deg ~ 2·Bin(4950, 30/99), mean
	// 3 000, sd ≈ 2·32.3; ±450 is ≈ 7 sd (false-failure rate < 1e-11).
	if total < 3000-450 || total > 3000+450 {
		t.Fatalf("Σ degrees %d, want ≈ 3 000", total)
	}
}

// advertised runs round 0 of cfg (signers' keys priv, nil in the
// honest-but-curious variant): the server, the clients and the key list.
func advertised(t *testing.T, cfg Config, priv map[uint32]ed25519.PrivateKey, seed uint64) (*Server, map[uint32]*Client, KeyList) {
	t.Helper()
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rnd := testRand(seed)
	cs := map[uint32]*Client{}
	for _, id := range cfg.Sites {
		if cs[id], err = NewClient(cfg, id, priv[id], rnd); err != nil {
			t.Fatal(err)
		}
		m, _ := cs[id].Advertise()
		if err := srv.HandleAdvertise(m); err != nil {
			t.Fatal(err)
		}
	}
	list, err := srv.EndAdvertise()
	if err != nil {
		t.Fatal(err)
	}
	return srv, cs, list
}

// sparseRound drives a sparse round of k sites up to the forwarded shares:
// the clients, the server and what it forwards.
func sparseRound(t *testing.T, k, degree, local int, hbc bool, seed uint64) (Config, *Server, map[uint32]*Client, map[uint32]SharesFor) {
	t.Helper()
	cfg := sparseConfig(k, degree, local, 32, 3, seed)
	cfg.HonestButCurious = hbc
	var priv map[uint32]ed25519.PrivateKey
	if !hbc {
		cfg, priv = withSigners(t, cfg, seed)
	}
	srv, cs, list := advertised(t, cfg, priv, seed)
	for _, id := range cfg.Sites {
		m, err := cs[id].ShareKeys(list)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.HandleShares(m); err != nil {
			t.Fatal(err)
		}
	}
	fwd, err := srv.EndShares()
	if err != nil {
		t.Fatal(err)
	}
	return cfg, srv, cs, fwd
}

// A lying server that withholds from site i the shares of one of its
// neighbours j — so that i does not mask with j — and keeps both in U3
// (to cut i's component of survivors below what the graph gives) is
// caught by i: it refuses to sign or answer (ErrInconsistent in the active
// variant) and sends no unmask share. Without the check the server would
// hold y_i with one mask fewer than the floor's argument counts.
func TestSparseWithheldNeighbourRefused(t *testing.T) {
	for _, hbc := range []bool{false, true} {
		cfg, srv, cs, fwd := sparseRound(t, 30, 12, 6, hbc, 41)
		i := cfg.Sites[0]
		f := fwd[i]
		j := f.Shares[0].From
		if !srv.g.adjacent(i, j) {
			t.Fatalf("site %d got shares from non-neighbour %d", i, j)
		}
		f.Shares = f.Shares[1:]
		fwd[i] = f
		x := make([]uint64, cfg.Dim)
		for _, id := range cfg.Sites {
			m, err := cs[id].MaskedInput(fwd[id], x)
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.HandleMasked(m); err != nil {
				t.Fatal(err)
			}
		}
		req, err := srv.EndMasked()
		if err != nil {
			t.Fatal(err)
		}
		if hbc {
			if _, err := cs[i].Unmask(req); err == nil || !strings.Contains(err.Error(), "U3 ⊄ U2") {
				t.Fatalf("honest-but-curious: site %d answered an unmask request naming neighbour %d it did not mask with: %v", i, j, err)
			}
			continue
		}
		if _, err := cs[i].ConsistencyCheck(req); !errors.Is(err, ErrInconsistent) {
			t.Fatalf("site %d signed a U3 naming neighbour %d it did not mask with: %v", i, j, err)
		}
		if _, err := cs[i].UnmaskSigned(ConsistencySigs{}); err == nil {
			t.Fatal("site answered the unmasking after refusing the check")
		}
	}
}

// Shares go to neighbours only: the server refuses a dealer's share to a
// non-neighbour, and a site refuses a forwarded share from one.
func TestSparseNonNeighbourShareRefused(t *testing.T) {
	cfg, srv, cs, fwd := sparseRound(t, 30, 12, 6, true, 43)
	i := cfg.Sites[0]
	var stranger uint32
	for _, v := range cfg.Sites[1:] {
		if !srv.g.adjacent(i, v) {
			stranger = v
			break
		}
	}
	if stranger == 0 {
		t.Fatal("no non-neighbour of site 0 in a graph of degree 12 on 30 sites")
	}
	f := fwd[i]
	e := f.Shares[0]
	e.From = stranger
	f.Shares = append(f.Shares, e)
	if _, err := cs[i].MaskedInput(f, make([]uint64, cfg.Dim)); err == nil || !strings.Contains(err.Error(), "unexpected share") {
		t.Fatalf("site accepted a share from non-neighbour %d: %v", stranger, err)
	}
	// The honest server's own check: a dealer's share readdressed to a
	// non-neighbour.
	cfg2 := sparseConfig(30, 12, 6, 32, 3, 44)
	cfg2.HonestButCurious = true
	srv2, cs2, list := advertised(t, cfg2, nil, 44)
	d := cfg2.Sites[0]
	m, err := cs2[d].ShareKeys(list)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range cfg2.Sites[1:] {
		if !srv2.g.adjacent(d, v) {
			m.Shares[0].To = v
			break
		}
	}
	if err := srv2.HandleShares(m); err == nil || !strings.Contains(err.Error(), "not its neighbour") {
		t.Fatalf("server took a share to a non-neighbour: %v", err)
	}
}

// In the sparse variant a site checks the signed advertisements of its
// neighbours (whose keys it uses) and of no one else: a forged
// neighbour's advertisement is ErrInconsistent, a forged stranger's is
// never read.
func TestSparseAdvertChecks(t *testing.T) {
	cfg := sparseConfig(30, 12, 6, 32, 3, 45)
	cfg, priv := withSigners(t, cfg, 45)
	srv, cs, list := advertised(t, cfg, priv, 45)
	rnd := testRand(46)
	i := cfg.Sites[0]
	for _, want := range []bool{true, false} { // neighbour, stranger
		l := KeyList{Keys: slices.Clone(list.Keys)}
		for n := range l.Keys {
			if v := l.Keys[n].From; v != i && srv.g.adjacent(i, v) == want {
				l.Keys[n].Sig = slices.Clone(l.Keys[n].Sig)
				l.Keys[n].Sig[0] ^= 1
				break
			}
		}
		c, _ := NewClient(cfg, i, priv[i], rnd)
		c.Advertise()
		c.cKey, c.sKey = cs[i].cKey, cs[i].sKey // the keys the list carries for i
		_, err := c.ShareKeys(l)
		if want && !errors.Is(err, ErrInconsistent) {
			t.Fatalf("a forged neighbour's advertisement: %v, want ErrInconsistent", err)
		}
		if !want && err != nil {
			t.Fatalf("a forged stranger's advertisement (unused): %v", err)
		}
	}
}

// The active variant's defences against a rogue dealer hold in the sparse
// variant: a survivor whose seed shares are off its committed seed is
// expelled on a proof its neighbours check, each revealing its pairwise
// key with it and nothing else (a non-neighbour reveals nothing), and the
// sum of the others is exact; a responder that returns a wrong share is
// ignored and the sum still exact.
func TestSparseCheatExpelled(t *testing.T) {
	allOff := func(key, seed []Share) {
		for i := range seed {
			seed[i].Y = bump(seed[i].Y)
		}
	}
	r := runCheat(t, cheat{k: 24, th: 17, degree: 12, local: 6, seed: 60, rogue: rogueID, deal: allOff})
	r.exact(t, r.without(rogueID))
	if !slices.Equal(r.res.Cheated, []uint32{rogueID}) {
		t.Fatalf("cheated %v, want the rogue", r.res.Cheated)
	}
	neighbours := 0
	for _, m := range r.tr.Expel {
		adj := r.srv.g.adjacent(m.From, rogueID)
		if adj {
			neighbours++
		}
		if len(m.SeedOf) != 0 || (adj && (len(m.PairOf) != 1 || m.PairOf[rogueID] == nil)) || (!adj && len(m.PairOf)+len(m.KeyOf) != 0) {
			t.Fatalf("site %d (neighbour of the rogue: %v) revealed %d pairwise keys, %d key and %d seed shares", m.From, adj, len(m.PairOf), len(m.KeyOf), len(m.SeedOf))
		}
	}
	if neighbours == 0 || neighbours == len(r.tr.Expel) {
		t.Fatalf("%d of %d expel answers from the rogue's neighbours: the graph should separate them", neighbours, len(r.tr.Expel))
	}
	// A responder (the rogue) returning a wrong share of a neighbour's
	// seed: ignored; every self mask is rebuilt from the others.
	r = runCheat(t, cheat{k: 24, th: 17, degree: 12, local: 6, seed: 61, rogue: rogueID, unmask: func(m *UnmaskShares) {
		for v, sh := range m.SeedOf {
			if v != rogueID {
				sh.Y = bump(sh.Y)
				m.SeedOf[v] = sh
				return
			}
		}
	}})
	r.exact(t, r.cfg.Sites)
	if _, ok := r.res.Ignored[rogueID]; !ok {
		t.Fatalf("ignored %v, want the rogue responder", r.res.Ignored)
	}
}

// graph.place (popcounts over a row) gives what searching graph.holders
// gives, for every pair of a sparse graph restricted to a random U1, and
// for the complete graph.
func TestGraphPlaceMatchesHolders(t *testing.T) {
	for _, degree := range []int{0, 9, 40} {
		cfg := sparseConfig(150, degree, max(2, degree/2), 32, 1, 9)
		if degree == 0 {
			cfg.Local, cfg.Withheld = 0, 0
		}
		g, err := cfg.newGraph()
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(9, uint64(degree)))
		var u1 []uint32
		for _, id := range g.ids {
			if rng.Float64() < 0.8 {
				u1 = append(u1, id)
			}
		}
		m := g.mask(u1)
		for _, d := range u1 {
			hs := g.holders(d, u1)
			for _, me := range hs {
				i, n := g.place(d, me, u1, m)
				if j, _ := slices.BinarySearch(hs, me); i != j || n != len(hs) {
					t.Fatalf("degree %d: place(%d, %d) = %d of %d, holders say %d of %d", degree, d, me, i, n, j, len(hs))
				}
			}
		}
	}
}

// The attack the withheld bound stops (sparsefloor.go): a server that
// forwards to site i the shares of only a few neighbours — so that i masks
// with them alone — could declare those dropped, ignore i's signature and
// rebuild i's self mask from its other neighbours' answers: x_i alone. A
// site missing more than w neighbours' shares sends no masked input; at w
// or fewer (what honest dropouts cause) it does.
func TestSparseWithholdingRefused(t *testing.T) {
	for _, cut := range []int{3, 4} { // w = 3
		cfg, _, cs, fwd := sparseRound(t, 30, 12, 6, false, 47)
		if cfg.Withheld != 3 {
			t.Fatalf("w = %d, want 3", cfg.Withheld)
		}
		i := cfg.Sites[0]
		f := fwd[i]
		if len(f.Shares) < cfg.Local+cut {
			t.Fatalf("site %d has %d neighbours: too few for the test", i, len(f.Shares))
		}
		f.Shares = f.Shares[cut:]
		m, err := cs[i].MaskedInput(f, make([]uint64, cfg.Dim))
		if cut > cfg.Withheld {
			if !errors.Is(err, ErrTooFewSurvivors) || m.Y != nil {
				t.Fatalf("%d neighbours' shares withheld (w = %d): masked input %v, err %v", cut, cfg.Withheld, m.Y != nil, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%d withheld (w = %d): %v", cut, cfg.Withheld, err)
		}
	}
}
