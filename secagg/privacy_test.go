package secagg

import (
	"encoding/binary"
	"slices"
	"testing"
)

// chiSquareBytes is Pearson's statistic of the byte frequencies of ws
// (little-endian bytes) against the uniform distribution on 256 values.
func chiSquareBytes(ws []uint64) float64 {
	var counts [256]float64
	var b [8]byte
	for _, w := range ws {
		binary.LittleEndian.PutUint64(b[:], w)
		for _, x := range b {
			counts[x]++
		}
	}
	exp := float64(8*len(ws)) / 256
	chi := 0.0
	for _, c := range counts {
		chi += (c - exp) * (c - exp) / exp
	}
	return chi
}

// chiCrit is the 1 − 10⁻⁶ quantile of χ² with 255 degrees of freedom
// (Wilson–Hilferty: 255·(1 − 2/2295 + 4.753·√(2/2295))³ = 377.2, rounded
// up). Each comparison fails falsely with probability ≈ 10⁻⁶; the test
// makes 2K = 16 of them, so a false failure has probability < 2·10⁻⁵
// (and the seeds are fixed, so it is deterministic).
const chiCrit = 378

// Everything the server receives, and everything it can compute from it,
// reveals no single site's input: we run a round with K = 8 sites whose
// inputs are maximally structured (all zero but one site, whose input is
// a constant), one site dropping after sharing keys. The server
// reconstructs the self masks of every survivor and the dropped site's
// key (as the protocol lets it) and removes them; each survivor's vector
// is still uniform-looking — the pairwise masks with the other survivors
// remain, and the server never holds t shares of a survivor's mask key —
// while the sum of all of them equals the plain sum exactly.
func TestServerViewRevealsOnlyTheSum(t *testing.T) {
	const k, dim = 8, 4096
	cfg := testConfig(k, 5, 64, dim, 42)
	rnd := testRand(42)
	inputs := map[uint32][]uint64{}
	for _, id := range cfg.Sites {
		inputs[id] = make([]uint64, dim)
	}
	secret := cfg.Sites[3]
	for i := range inputs[secret] {
		inputs[secret][i] = 0x0123456789abcdef
	}
	dropped := cfg.Sites[6]
	res, tr, err := RunInMemory(cfg, inputs, map[uint32]int{dropped: DropMasked}, rnd)
	if err != nil {
		t.Fatal(err)
	}
	// The server's view: masked inputs and the unmask shares.
	if len(tr.Masked) != k-1 {
		t.Fatalf("%d masked inputs recorded", len(tr.Masked))
	}
	for _, m := range tr.Masked {
		if chi := chiSquareBytes(m.Y); chi > chiCrit {
			t.Errorf("masked input of site %d is not uniform-looking: χ² = %.1f > %d", m.From, chi, chiCrit)
		}
	}
	// Strip what the server can strip: self masks of survivors.
	responders := tr.Unmask[:cfg.Threshold]
	partial := map[uint32][]uint64{}
	for _, m := range tr.Masked {
		shares := make([]Share, 0, len(responders))
		for _, r := range responders {
			if _, has := r.KeyOf[m.From]; has {
				t.Fatalf("site %d revealed a share of survivor %d's mask key", r.From, m.From)
			}
			shares = append(shares, r.SeedOf[m.From])
		}
		seed, err := shamirCombine(shares)
		if err != nil {
			t.Fatal(err)
		}
		z := slices.Clone(m.Y)
		sk, _ := selfKey(seed, cfg.RoundID)
		addMask(z, sk, -1)
		partial[m.From] = z
		if chi := chiSquareBytes(z); chi > chiCrit {
			t.Errorf("site %d's input with its self mask removed is not uniform-looking: χ² = %.1f", m.From, chi)
		}
		if slices.Equal(z, inputs[m.From]) {
			t.Errorf("site %d's input recovered", m.From)
		}
	}
	// No survivor's mask key share was ever revealed, and nothing was
	// revealed about the dropped site's self-mask seed.
	for _, r := range tr.Unmask {
		if _, ok := r.SeedOf[dropped]; ok {
			t.Fatalf("site %d revealed the dropped site's seed share", r.From)
		}
		for v := range r.KeyOf {
			if v != dropped {
				t.Fatalf("site %d revealed survivor %d's key share", r.From, v)
			}
		}
	}
	// The sum decodes: exactly the plain sum (here: the one non-zero input).
	if !slices.Equal(res.Sum, inputs[secret]) {
		t.Fatal("sum is not the plain sum of the inputs")
	}
}

// Distinct sites' masked inputs are independent-looking: the XOR of two
// masked inputs of equal plain inputs is uniform too (a mask reused
// between sites or rounds would show here as structure).
func TestMasksAreFreshAcrossSitesAndRounds(t *testing.T) {
	const dim = 2048
	inputs := func(cfg Config) map[uint32][]uint64 {
		in := map[uint32][]uint64{}
		for _, id := range cfg.Sites {
			in[id] = make([]uint64, dim)
		}
		return in
	}
	cfg := testConfig(4, 3, 64, dim, 1)
	_, tr1, err := RunInMemory(cfg, inputs(cfg), nil, testRand(11))
	if err != nil {
		t.Fatal(err)
	}
	cfg2 := testConfig(4, 3, 64, dim, 2) // a new round id
	_, tr2, err := RunInMemory(cfg2, inputs(cfg2), nil, testRand(12))
	if err != nil {
		t.Fatal(err)
	}
	x := make([]uint64, dim)
	for i := range x {
		x[i] = tr1.Masked[0].Y[i] ^ tr1.Masked[1].Y[i]
	}
	if chi := chiSquareBytes(x); chi > chiCrit {
		t.Errorf("two sites' masks are correlated: χ² = %.1f", chi)
	}
	for i := range x {
		x[i] = tr1.Masked[0].Y[i] ^ tr2.Masked[0].Y[i]
	}
	if chi := chiSquareBytes(x); chi > chiCrit {
		t.Errorf("one site's masks in two rounds are correlated: χ² = %.1f", chi)
	}
}

// The χ² check has power: a structured vector fails it.
func TestChiSquareDetectsStructure(t *testing.T) {
	x := make([]uint64, 4096)
	for i := range x {
		x[i] = uint64(i) // low bytes cycle, high bytes zero
	}
	if chi := chiSquareBytes(x); chi <= chiCrit {
		t.Fatalf("structured vector passes: χ² = %.1f", chi)
	}
}
