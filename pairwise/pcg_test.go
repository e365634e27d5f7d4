package pairwise

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/pairwise/internal/kernel"
)

// pcg must be math/rand/v2's PCG, output for output, from any state.
func TestPCGMatchesRandPCG(t *testing.T) {
	seeds := [][2]uint64{{0, 0}, {1, 2}, {^uint64(0), ^uint64(0)}, {0, ^uint64(0)}, {1 << 63, 1}}
	meta := rand.New(rand.NewPCG(2026, 11))
	for len(seeds) < 300 {
		seeds = append(seeds, [2]uint64{meta.Uint64(), meta.Uint64()})
	}
	for _, s := range seeds {
		ref := rand.NewPCG(s[0], s[1])
		var p pcg
		if !p.load(ref) {
			t.Fatalf("seed %v: load refused rand.PCG's encoding", s)
		}
		if p != (pcg{s[0], s[1]}) {
			t.Fatalf("seed %v: loaded state %v", s, p)
		}
		for k := 0; k < 1000; k++ {
			if g, w := p.Uint64(), ref.Uint64(); g != w {
				t.Fatalf("seed %v draw %d: %#x, rand.PCG %#x", s, k, g, w)
			}
		}
		// store then load is the identity, and the stored generator
		// continues p's stream.
		back := rand.NewPCG(0, 0)
		p.store(back)
		var q pcg
		if !q.load(back) || q != p {
			t.Fatalf("seed %v: round trip %v → %v", s, p, q)
		}
		if back.Uint64() != p.Uint64() {
			t.Fatalf("seed %v: stored generator diverged", s)
		}
	}
	if !pcgSelfCheck() {
		t.Fatal("pcgSelfCheck failed")
	}
}

// countingSource counts the 64-bit draws taken from src.
type countingSource struct {
	src   rand.Source
	draws int
}

func (c *countingSource) Uint64() uint64 { c.draws++; return c.src.Uint64() }

// pcg.drawIndices must be rand.Rand.IntN on the same PCG, draw for draw,
// and leave the generator where IntN leaves it: over seeds and bounds that
// take the mask (powers of two), the multiply-shift, and its rejection loop
// (which redraws with probability (2⁶⁴ mod n)/2⁶⁴: about 1/4 for
// n = 2⁶² + 12345, 1/16 for 3·2⁶⁰; the test checks it was reached).
func TestPCGDrawIndicesIsIntN(t *testing.T) {
	testPCGDrawIndicesIsIntN(t)
	if kernel.UseAVX512 {
		// the Go check of every group of eight (otherwise reached with
		// probability < 8n/2⁶⁴ per group), then the one-state path
		pcgCheckEveryGroup = true
		testPCGDrawIndicesIsIntN(t)
		pcgCheckEveryGroup = false
		kernel.UseAVX512 = false
		defer func() { kernel.UseAVX512 = true }()
		testPCGDrawIndicesIsIntN(t)
	}
}

func testPCGDrawIndicesIsIntN(t *testing.T) {
	bounds := []int64{1, 2, 3, 5, 7, 64, 100, 1000, 4097, 49990, 1 << 20, 1<<31 - 1, 1 << 40, 3 << 60, 1<<62 + 12345, 1<<63 - 1<<40, math.MaxInt64}
	redraws := 0
	for _, n64 := range bounds {
		n := int(n64)
		if int64(n) != n64 {
			continue // beyond int on 32-bit systems
		}
		for seed := uint64(0); seed < 20; seed++ {
			cs := &countingSource{src: rand.NewPCG(seed, uint64(n))}
			ref := rand.New(cs)
			var p pcg
			p.load(rand.NewPCG(seed, uint64(n)))
			got := make([]int, 1+int(seed)*37%300)
			raw := make([]uint64, len(got)+int(seed))
			for rep := 0; rep < 3; rep++ {
				p.drawIndices(got, raw, n)
				for k, g := range got {
					if w := ref.IntN(n); g != w {
						t.Fatalf("n %d seed %d rep %d draw %d: %d, IntN %d", n, seed, rep, k, g, w)
					}
				}
				redraws += cs.draws - len(got)
				cs.draws = 0
			}
			back := rand.NewPCG(0, 0)
			p.store(back)
			if back.Uint64() != ref.Uint64() {
				t.Fatalf("n %d seed %d: streams diverged", n, seed)
			}
		}
	}
	if redraws < 100 {
		t.Fatalf("the rejection loop redrew %d times; the test does not exercise it", redraws)
	}
}

// pcgSource finds the PCG behind a rand.Rand and nothing else.
func TestPCGSource(t *testing.T) {
	p := rand.NewPCG(3, 4)
	if got := pcgSource(rand.New(p)); got != p {
		t.Fatalf("pcgSource(rand.New(PCG)) = %p, want %p", got, p)
	}
	if got := pcgSource(rand.New(rand.NewChaCha8([32]byte{}))); got != nil {
		t.Fatalf("pcgSource(ChaCha8) = %p", got)
	}
	if got := pcgSource(nil); got != nil {
		t.Fatalf("pcgSource(nil) = %p", got)
	}
	if !randLayoutOK {
		t.Log("rand.Rand's layout changed: the concrete PCG path is off")
	}
}

// fill must be Uint64 repeated, for every length around its eight-lane
// loop's edges, and leave the state after the last draw.
func TestPCGFill(t *testing.T) {
	for _, m := range []int{0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 255, 256, 257} {
		for seed := uint64(0); seed < 20; seed++ {
			ref := rand.NewPCG(seed*0x9e3779b97f4a7c15, ^seed)
			p := pcg{seed * 0x9e3779b97f4a7c15, ^seed}
			dst := make([]uint64, m)
			p.fill(dst)
			for k, g := range dst {
				if w := ref.Uint64(); g != w {
					t.Fatalf("len %d seed %d draw %d: %#x, rand.PCG %#x", m, seed, k, g, w)
				}
			}
			if p.Uint64() != ref.Uint64() {
				t.Fatalf("len %d seed %d: state after fill differs", m, seed)
			}
		}
	}
}
