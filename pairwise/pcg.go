package pairwise

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"sync"
	"unsafe"

	"github.com/pairfed/pairfed/pairwise/internal/kernel"
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
	p.hi, p.lo = pcgAffine(p.hi, p.lo, pcgMulHi, pcgMulLo, pcgIncHi, pcgIncLo)
	return pcgOutput(p.hi, p.lo)
}

// pcgAffine returns s·m + c mod 2¹²⁸ for s = hi·2⁶⁴ + lo and m, c given as
// halves: the full product lo·mLo plus the low halves of the two cross
// products in the high word.
func pcgAffine(hi, lo, mHi, mLo, cHi, cLo uint64) (uint64, uint64) {
	h, l := bits.Mul64(lo, mLo)
	h += hi*mLo + lo*mHi
	l, c := bits.Add64(l, cLo, 0)
	return h + cHi + c, l
}

// pcgOutput is the DXSM output of the state hi·2⁶⁴ + lo.
func pcgOutput(hi, lo uint64) uint64 {
	hi ^= hi >> 32
	hi *= pcgDXSM
	hi ^= hi >> 48
	return hi * (lo | 1)
}

// pcgJump8 is the LCG's step taken eight times, s ↦ s·M⁸ + C·(M⁷+…+M+1)
// (mod 2¹²⁸), as {M⁸ high, M⁸ low, C⁸ high, C⁸ low}: kernel.PCGFill8 moves eight
// states side by side with it.
var pcgJump8 = func() [4]uint64 {
	mh, ml, ch, cl := uint64(0), uint64(1), uint64(0), uint64(0) // s ↦ s
	for range 8 {
		// (s·m + c)·M + C = s·(m·M) + (c·M + C)
		mh, ml = pcgAffine(mh, ml, pcgMulHi, pcgMulLo, 0, 0)
		ch, cl = pcgAffine(ch, cl, pcgMulHi, pcgMulLo, pcgIncHi, pcgIncLo)
	}
	return [4]uint64{mh, ml, ch, cl}
}()

// fill sets dst[k] to the k-th next output, k = 0, 1, …, and advances p
// by len(dst): p.Uint64() len(dst) times. With AVX-512 (kernel.UseAVX512) eight
// states run side by side: the multiplies of one draw no longer wait for
// the previous draw's, and eight go in one instruction.
func (p *pcg) fill(dst []uint64) {
	k := 0
	if kernel.UseAVX512 && len(dst) >= 16 {
		var lanes [16]uint64 // the states after 1…8 steps: high halves, then low
		h, l := p.hi, p.lo
		for i := range 8 {
			h, l = pcgAffine(h, l, pcgMulHi, pcgMulLo, pcgIncHi, pcgIncLo)
			lanes[i], lanes[8+i] = h, l
		}
		k = len(dst) &^ 7
		kernel.PCGFill8(&lanes, dst[:k], &pcgJump8)
		p.hi, p.lo = lanes[7], lanes[15] // the state after k steps
	}
	for ; k < len(dst); k++ {
		dst[k] = p.Uint64()
	}
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
// values on 32-bit systems. raw (len(raw) ≥ len(dst)) holds the batch's
// 64-bit draws when fill takes them eight at a time (kernel.UseAVX512); otherwise
// the state stays in registers, one draw at a time.
func (p *pcg) drawIndices(dst []int, raw []uint64, n int) {
	nn := uint64(n)
	if kernel.UseAVX512 && len(dst) >= 16 && nn&(nn-1) != 0 && nn < 1<<32 {
		// eight states side by side, reduced in the same instructions
		var lanes [16]uint64
		h, l := p.hi, p.lo
		for i := range 8 {
			h, l = pcgAffine(h, l, pcgMulHi, pcgMulLo, pcgIncHi, pcgIncLo)
			lanes[i], lanes[8+i] = h, l
		}
		m := len(dst) &^ 7
		limit := nn
		if pcgCheckEveryGroup {
			limit = ^uint64(0)
		}
		k := kernel.PCGDraw8(&lanes, dst[:m], raw[:m], &pcgJump8, nn, limit)
		p.hi, p.lo = lanes[7], lanes[15] // the state after the groups drawn
		if k < m {
			// a group with a possible redraw: reduce its draws here
			for t, x := range raw[k : k+8] {
				hi, lo := bits.Mul64(x, nn)
				if lo < -nn%nn {
					p.drawRest(dst[k+t:], raw[k+t+1:k+8], nn)
					return
				}
				dst[k+t] = int(hi)
			}
			m = k + 8
		}
		if m < len(dst) {
			p.drawIndices(dst[m:], raw[m:], n)
		}
		return
	}
	if kernel.UseAVX512 && len(dst) >= 16 {
		raw = raw[:len(dst)]
		p.fill(raw)
		if nn&(nn-1) == 0 {
			for t, x := range raw {
				dst[t] = int(x & (nn - 1))
			}
			return
		}
		for t, x := range raw {
			hi, lo := bits.Mul64(x, nn)
			if lo < nn && lo < -nn%nn { // a redraw: probability < n/2⁶⁴
				p.drawRest(dst[t:], raw[t+1:], nn)
				return
			}
			dst[t] = int(hi)
		}
		return
	}
	g := *p
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

// pcgCheckEveryGroup makes kernel.PCGDraw8 hand every group of eight to the Go
// check for redraws (which it otherwise sees with probability < 8n/2⁶⁴):
// for the tests of that path.
var pcgCheckEveryGroup = false

// reject finishes a draw of drawIndices whose first product had lo < n:
// it draws again while lo < 2⁶⁴ mod n.
func (g pcg) reject(hi, lo, n uint64) (pcg, uint64) {
	thresh := -n % n
	for lo < thresh {
		hi, lo = bits.Mul64(g.Uint64(), n)
	}
	return g, hi
}

// drawRest finishes drawIndices from dst[0], whose first candidate (the
// draw before rest) was rejected: the candidates are the rest of the
// batch's draws, then p's next outputs.
func (p *pcg) drawRest(dst []int, rest []uint64, n uint64) {
	thresh := -n % n
	for t := range dst {
		for {
			var x uint64
			if len(rest) > 0 {
				x, rest = rest[0], rest[1:]
			} else {
				x = p.Uint64()
			}
			if hi, lo := bits.Mul64(x, n); lo >= thresh {
				dst[t] = int(hi)
				break
			}
		}
	}
}
