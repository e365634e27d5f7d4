package pairwise

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"sync"
	"unsafe"
)

// A concrete PCG-DXSM for the specialized loops.
//
// rand.Rand draws every number through its Source interface: an indirect
// call per draw that the compiler cannot inline, about a fifth of an sgd-prev
// step. When the *rand.Rand a run receives is backed by a *rand.PCG (every
// seeded rng in pairfed is rand.New(rand.NewPCG(a, b))), the loops copy the
// PCG's 128-bit state into a pcg, draw from it — the same numbers, inlined —
// and write the state back before anything else can use the rng, so the
// caller's generator is exactly where rand's own draws would have left it.
// Any other source takes the interface path.
//
// The generator is the public PCG-DXSM algorithm (M. E. O'Neill, "PCG: A
// family of simple fast space-efficient statistically good algorithms for
// random number generation", 2014, with the "double xorshift multiply"
// output function of her pcg-cpp library, also NumPy's PCG64DXSM): a 128-bit
// linear congruential state s ← s·M + C (mod 2¹²⁸) with the default 128-bit
// multiplier and increment of pcg-cpp, and the output computed from the new
// state's high half h and low half l:
//
//	h ^= h >> 32; h *= 0xda942042e4dd58b5; h ^= h >> 48; h *= l | 1.
//
// This is the generator math/rand/v2 documents as PCG; pcgSelfCheck compares
// the two at first use (and the tests over many seeds), and any difference
// turns the concrete path off.
type pcg struct{ hi, lo uint64 }

// The LCG's multiplier M and increment C, as high and low 64-bit halves, and
// the DXSM output multiplier.
const (
	pcgMulHi = 0x2360ed051fc65da4
	pcgMulLo = 0x4385df649fccf645
	pcgIncHi = 0x5851f42d4c957f2d
	pcgIncLo = 0x14057b7ef767814f
	pcgDXSM  = 0xda942042e4dd58b5
)

// Uint64 advances the state and returns the DXSM output of the new state.
func (p *pcg) Uint64() uint64 {
	// (hi·2⁶⁴ + lo)·(mHi·2⁶⁴ + mLo) mod 2¹²⁸: the full product lo·mLo plus
	// the low halves of the two cross products in the high word.
	h, l := bits.Mul64(p.lo, pcgMulLo)
	h += p.hi*pcgMulLo + p.lo*pcgMulHi
	l, c := bits.Add64(l, pcgIncLo, 0)
	h += pcgIncHi + c
	p.hi, p.lo = h, l
	h ^= h >> 32
	h *= pcgDXSM
	h ^= h >> 48
	return h * (l | 1)
}

// randLayoutOK is whether rand.Rand is, as in every Go release with
// math/rand/v2, a struct holding only its Source: then the source of a
// *rand.Rand can be read through a pointer to that field. Checked by
// reflection; otherwise pcgSource always reports none.
var randLayoutOK = func() bool {
	t, s := reflect.TypeFor[rand.Rand](), reflect.TypeFor[rand.Source]()
	return t.NumField() == 1 && t.Field(0).Type == s && t.Field(0).Offset == 0 && t.Size() == s.Size()
}()

// pcgSource returns the *rand.PCG behind rng, or nil when rng draws from any
// other source (or the concrete path is off).
func pcgSource(rng *rand.Rand) *rand.PCG {
	if !randLayoutOK || rng == nil || !pcgSelfCheck() {
		return nil
	}
	p, _ := (*(*rand.Source)(unsafe.Pointer(rng))).(*rand.PCG)
	return p
}

// load copies src's state into p, through src's documented binary encoding
// ("pcg:", then the high and low state halves big-endian). It reports false,
// leaving p unchanged, for an encoding it does not recognize.
func (p *pcg) load(src *rand.PCG) bool {
	var buf [20]byte
	b, err := src.AppendBinary(buf[:0])
	if err != nil || len(b) != 20 || string(b[:4]) != "pcg:" {
		return false
	}
	p.hi = binary.BigEndian.Uint64(b[4:])
	p.lo = binary.BigEndian.Uint64(b[12:])
	return true
}

// store writes p's state back into src, the inverse of load: rand.PCG's
// Seed(a, b) sets the state NewPCG(a, b) starts from, whose encoding is a
// and b (pcgSelfCheck checks the round trip).
func (p *pcg) store(src *rand.PCG) { src.Seed(p.hi, p.lo) }

// pcgSelfCheck reports whether pcg, load and store reproduce rand.PCG: the
// outputs from a few states, and the state after a round trip. Run once.
var pcgSelfCheck = sync.OnceValue(func() bool {
	for _, s := range [][2]uint64{{0, 0}, {1, 2}, {^uint64(0), 0x9e3779b97f4a7c15}} {
		ref := rand.NewPCG(s[0], s[1])
		var p pcg
		if !p.load(ref) {
			return false
		}
		for k := 0; k < 4; k++ {
			if p.Uint64() != ref.Uint64() {
				return false
			}
		}
		back := rand.NewPCG(0, 0)
		p.store(back)
		if back.Uint64() != ref.Uint64() {
			return false
		}
	}
	return true
})

// drawIndices sets dst[t] = rng.IntN(n) for t = 0, 1, … on the stream of
// p, n ≥ 1: math/rand/v2's reduction of a 64-bit draw x to [0, n) — the
// mask x & (n−1) when n is a power of two, otherwise Lemire's
// multiply-shift ⌊x·n / 2⁶⁴⌋, drawing again while the low half of x·n is
// below 2⁶⁴ mod n (which makes it exactly uniform). Go computes the same
// values on 32-bit systems. The state stays in registers.
func (p *pcg) drawIndices(dst []int, n int) {
	g := *p
	nn := uint64(n)
	if nn&(nn-1) == 0 {
		for t := range dst {
			dst[t] = int(g.Uint64() & (nn - 1))
		}
	} else {
		for t := range dst {
			hi, lo := bits.Mul64(g.Uint64(), nn)
			if lo < nn { // rare: lo < n has probability n/2⁶⁴
				g, hi = g.reject(hi, lo, nn)
			}
			dst[t] = int(hi)
		}
	}
	*p = g
}

// reject finishes a draw of drawIndices whose first product had lo < n:
// it draws again while lo < 2⁶⁴ mod n.
func (g pcg) reject(hi, lo, n uint64) (pcg, uint64) {
	thresh := -n % n
	for lo < thresh {
		hi, lo = bits.Mul64(g.Uint64(), n)
	}
	return g, hi
}
