package secagg

import (
	"crypto/ed25519"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

func testConfig(k, th, bits, dim int, seed uint64) Config {
	id := make([]byte, roundIDLen)
	testRand(seed).Read(id)
	sites := make([]uint32, k)
	for i := range sites {
		sites[i] = uint32(10 + 3*i)
	}
	return Config{RoundID: id, Sites: sites, Threshold: th, Bits: bits, Dim: dim}
}

// withSigners gives cfg (active) a roster of fresh keys drawn from seed,
// and returns the sites' private keys.
func withSigners(t testing.TB, cfg Config, seed uint64) (Config, map[uint32]ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := NewSigners(cfg.Sites, testRand(seed))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Roster = pub
	return cfg, priv
}

func randomInputs(cfg Config, rng *rand.Rand) map[uint32][]uint64 {
	in := map[uint32][]uint64{}
	for _, id := range cfg.Sites {
		x := make([]uint64, cfg.Dim)
		for i := range x {
			x[i] = rng.Uint64() & cfg.mask()
		}
		in[id] = x
	}
	return in
}

// Every round either returns exactly Σ_{u∈U3} x_u mod 2^b, with U3 the
// sites that sent masked inputs, or aborts with ErrTooFewSurvivors exactly
// when some step had fewer than t survivors: in the active variant (five
// steps, the consistency check among them) and the honest-but-curious one
// (four). The default run draws the first 40 of the 120 trials per
// variant (the same seeds); the build tag long runs all 120
// (TestLongRoundSumWithRandomDropouts: the rounds are synchronous, and
// under the race detector the 240 took 44 s of checked nothing).
func TestRoundSumWithRandomDropouts(t *testing.T) { roundSumWithRandomDropoutsBoth(t, 40) }

func roundSumWithRandomDropoutsBoth(t *testing.T, trials int) {
	for _, hbc := range []bool{false, true} {
		t.Run(map[bool]string{false: "active", true: "honest-but-curious"}[hbc], func(t *testing.T) { roundSumWithRandomDropouts(t, hbc, trials) })
	}
}

func roundSumWithRandomDropouts(t *testing.T, hbc bool, trials int) {
	rng := rand.New(rand.NewPCG(7, 8))
	rnd := testRand(7)
	steps := NumDropSteps
	if hbc {
		steps = DropAfterCheck // no consistency check: four steps
	}
	completed, aborted := 0, 0
	for trial := 0; trial < trials; trial++ {
		k := 3 + rng.IntN(10)
		th := k/2 + 1 + rng.IntN(k-k/2)
		bits := []int{1, 8, 17, 32, 63, 64}[rng.IntN(6)]
		cfg := testConfig(k, th, bits, 1+rng.IntN(40), uint64(trial))
		cfg.HonestButCurious = hbc
		inputs := randomInputs(cfg, rng)
		dropAt := map[uint32]int{}
		pDrop := rng.Float64() * 0.4
		for _, id := range cfg.Sites {
			if rng.Float64() < pDrop {
				dropAt[id] = rng.IntN(steps)
			}
		}
		// Survivors of each step, and hence the expected outcome.
		count := func(step int) int {
			n := 0
			for _, id := range cfg.Sites {
				if d, ok := dropAt[id]; !ok || d > step {
					n++
				}
			}
			return n
		}
		wantAbort := false
		for step := 0; step < steps; step++ {
			if count(step) < th {
				wantAbort = true
			}
		}
		res, _, err := RunInMemory(cfg, inputs, dropAt, rnd)
		if wantAbort {
			if !errors.Is(err, ErrTooFewSurvivors) {
				t.Fatalf("trial %d: want abort, got err=%v", trial, err)
			}
			aborted++
			continue
		}
		if err != nil {
			t.Fatalf("trial %d (K=%d t=%d drops %v): %v", trial, k, th, dropAt, err)
		}
		want := make([]uint64, cfg.Dim)
		var included []uint32
		for _, id := range cfg.Sites {
			if d, ok := dropAt[id]; ok && d <= DropMasked {
				continue
			}
			included = append(included, id)
			for i, w := range inputs[id] {
				want[i] += w
			}
		}
		for i := range want {
			want[i] &= cfg.mask()
		}
		if !slices.Equal(res.Sum, want) {
			t.Fatalf("trial %d (K=%d t=%d b=%d drops %v): sum %v, want %v", trial, k, th, bits, dropAt, res.Sum, want)
		}
		if !slices.Equal(res.Included, included) {
			t.Fatalf("trial %d: included %v, want %v", trial, res.Included, included)
		}
		completed++
	}
	if completed < trials/4 || aborted < trials/12 {
		t.Fatalf("trial mix too narrow to test both outcomes: %d completed, %d aborted", completed, aborted)
	}
	t.Logf("%d rounds completed exactly, %d aborted cleanly", completed, aborted)
}

// A site never reveals both secrets of one site, and never answers an
// unmask request twice or out of order (the honest-but-curious variant;
// active_test.go has the active one's).
func TestClientRefusesToRevealBothSecrets(t *testing.T) {
	cfg := testConfig(5, 3, 32, 4, 99)
	cfg.HonestButCurious = true
	rnd := testRand(99)
	inputs := randomInputs(cfg, rand.New(rand.NewPCG(1, 1)))
	srv, _ := NewServer(cfg)
	cs := map[uint32]*Client{}
	for _, id := range cfg.Sites {
		cs[id], _ = NewClient(cfg, id, nil, rnd)
		m, _ := cs[id].Advertise()
		if err := srv.HandleAdvertise(m); err != nil {
			t.Fatal(err)
		}
	}
	list, _ := srv.EndAdvertise()
	for _, id := range cfg.Sites {
		m, err := cs[id].ShareKeys(list)
		if err != nil {
			t.Fatal(err)
		}
		srv.HandleShares(m)
	}
	fwd, _ := srv.EndShares()
	for _, id := range cfg.Sites {
		if _, err := cs[id].MaskedInput(fwd[id], inputs[id]); err != nil {
			t.Fatal(err)
		}
	}
	a, b := cfg.Sites[0], cfg.Sites[1]
	// First request: site b survived. Second request (a lying server): b
	// dropped. The second answer would reveal b's key share too.
	first, err := cs[a].Unmask(UnmaskRequest{Survivors: cfg.Sites})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := first.SeedOf[b]; !ok || len(first.KeyOf) != 0 {
		t.Fatalf("first answer %+v", first)
	}
	if _, err := cs[a].Unmask(UnmaskRequest{Survivors: []uint32{a, cfg.Sites[2], cfg.Sites[3]}}); err == nil {
		t.Fatal("second unmask request answered")
	}
	// A request that omits the site itself, or names an unknown site, is refused.
	if _, err := cs[b].Unmask(UnmaskRequest{Survivors: []uint32{a, cfg.Sites[2], cfg.Sites[3]}}); err == nil {
		t.Fatal("survivor list without the site answered")
	}
	if _, err := cs[cfg.Sites[2]].Unmask(UnmaskRequest{Survivors: []uint32{a, cfg.Sites[2], 999}}); err == nil {
		t.Fatal("survivor list with an unknown site answered")
	}
}

// Tampered or misdirected ciphertexts fail authentication. In the
// honest-but-curious variant the recipient refuses the sender (names it,
// does not mask with it). In the active variant the ciphertext is signed
// by its dealer (commit.go): one the server altered or redirected does
// not match the dealer's signed evidence, so the recipient knows the
// server lied — ErrInconsistent, nothing sent, and above all no
// accusation, which would reveal the pair's key (dleq.go).
func TestSharesAreAuthenticated(t *testing.T) {
	for _, active := range []bool{false, true} {
		cfg := testConfig(3, 2, 16, 2, 5)
		var keys map[uint32]ed25519.PrivateKey
		if active {
			cfg, keys = withSigners(t, cfg, 5)
		} else {
			cfg.HonestButCurious = true
		}
		rnd := testRand(5)
		srv, _ := NewServer(cfg)
		cs := map[uint32]*Client{}
		for _, id := range cfg.Sites {
			cs[id], _ = NewClient(cfg, id, keys[id], rnd)
			m, _ := cs[id].Advertise()
			srv.HandleAdvertise(m)
		}
		list, _ := srv.EndAdvertise()
		for _, id := range cfg.Sites {
			m, _ := cs[id].ShareKeys(list)
			if err := srv.HandleShares(m); err != nil {
				t.Fatal(err)
			}
		}
		fwd, _ := srv.EndShares()
		to := cfg.Sites[0]
		bad := fwd[to]
		bad.Shares = slices.Clone(bad.Shares)
		ct := slices.Clone(bad.Shares[0].CT)
		ct[len(ct)-1] ^= 1
		bad.Shares[0].CT = ct
		mi, err := cs[to].MaskedInput(bad, make([]uint64, cfg.Dim))
		if active {
			if !errors.Is(err, ErrInconsistent) || mi.Y != nil || mi.Accusations != nil {
				t.Fatalf("active: ciphertext altered by the server: %v, accusations %v; want ErrInconsistent and nothing sent", err, mi.Accusations)
			}
		} else {
			// The tampered ciphertext's sender is refused (named in the
			// masked input, not masked with); the round goes on.
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(mi.Rejected, []uint32{bad.Shares[0].From}) || len(cs[to].Rejected) != 1 {
				t.Fatalf("tampered share from %d: rejected %v (%v)", bad.Shares[0].From, mi.Rejected, cs[to].Rejected)
			}
		}
		// Re-address site 1's ciphertext from site 2 to site 3: wrong key/AD.
		x := fwd[cfg.Sites[1]]
		e := x.Shares[0]
		e.To = cfg.Sites[2]
		redirect := SharesFor{To: cfg.Sites[2], Shares: []EncryptedShare{e}}
		_, err = cs[cfg.Sites[2]].MaskedInput(redirect, make([]uint64, cfg.Dim))
		if active && !errors.Is(err, ErrInconsistent) {
			t.Fatalf("active: redirected share: %v, want ErrInconsistent", err)
		}
		// Site 3 then holds valid shares of no peer: below t = 2, it sends nothing.
		if !active && !errors.Is(err, ErrTooFewSurvivors) {
			t.Fatalf("redirected share: %v, want too few survivors", err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	good, _ := withSigners(t, testConfig(5, 3, 32, 4, 1), 1)
	for name, mut := range map[string]func(*Config){
		"no roster":                      func(c *Config) { c.Roster = nil },
		"roster misses one":              func(c *Config) { delete(c.Roster, c.Sites[0]) },
		"short roster key":               func(c *Config) { c.Roster[c.Sites[1]] = c.Roster[c.Sites[1]][:31] },
		"shared roster key":              func(c *Config) { c.Roster[c.Sites[1]] = c.Roster[c.Sites[2]] },
		"roster with honest-but-curious": func(c *Config) { c.HonestButCurious = true },
		"short round id":                 func(c *Config) { c.RoundID = c.RoundID[:8] },
		"one site":                       func(c *Config) { c.Sites = c.Sites[:1]; c.Threshold = 1 },
		"minority t":                     func(c *Config) { c.Threshold = 2 },
		"t above K":                      func(c *Config) { c.Threshold = 6 },
		"duplicate site":                 func(c *Config) { c.Sites = []uint32{1, 2, 2, 3, 4} },
		"site zero":                      func(c *Config) { c.Sites = []uint32{0, 1, 2, 3, 4} },
		"zero bits":                      func(c *Config) { c.Bits = 0 },
		"65 bits":                        func(c *Config) { c.Bits = 65 },
		"empty dimension":                func(c *Config) { c.Dim = 0 },
	} {
		c := good
		c.Sites = slices.Clone(good.Sites)
		c.Roster = maps.Clone(good.Roster)
		mut(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for k := 2; k < 100; k++ {
		c := testConfig(k, DefaultThreshold(k), 8, 1, 1)
		c.HonestButCurious = true
		if err := c.Validate(); err != nil {
			t.Fatalf("default threshold for K=%d: %v", k, err)
		}
	}
}
