package dp

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
)

// Removable noise copies (the idea of Dordis's XNoise: Jiang et al.,
// "Dordis: Efficient Federated Learning with Dropout-Resilient
// Differential Privacy", EuroSys 2024).
//
// A site whose sum tolerates dropouts must add the noise that t − κ honest
// survivors need between them; when nobody drops, the sum holds K/(t − κ)
// times the noise the guarantee needs. So each site splits its noise into
// Copies iid draws of N_ℤ(0, s²): `keep` from its secure source, the other
// m − keep from a ChaCha8 stream keyed by a fresh 256-bit seed
// (RemovableNoise). It reveals the seed only after it has checked that the
// survivor set of the round holds every participant (secagg: the signed,
// consistent U3 with |U3| = K); the coordinator rebuilds those draws from
// the seed and subtracts them (DDG.Remove). What the sum holds, counted
// in copies of one scale s:
//
//   - every participant in the sum and every honest site revealed: the
//     K − κ honest sites' `keep` copies each, (K − κ)·keep;
//   - otherwise no honest site reveals (each checks |U3| = K before it
//     does), and the ≥ t − κ honest survivors hold all m copies each,
//     (t − κ)·m.
//
// Both are sums of iid discrete Gaussians of scale s, so [KLS21] Prop 14
// certifies them with n = the smaller count (extra independent noise is
// post-processing); the plan chooses m and keep so that (K − κ)·keep ≥
// (t − κ)·m. Whether a site is in a full set is decided by signatures on
// one U3 that no two different sets can both gather (2t > K + κ, the
// secagg argument), so a coordinator that lies about U3 gets either the
// full set — and then every honest site's input and `keep` copies are in
// the only sum it can unmask — or no seed. The removed copies protect
// nothing once revealed; until then their secrecy is computational
// (ChaCha8, as secagg's masks), the `keep` copies' is not.

// RemovableSeed is the secret key of a site's removable noise copies.
type RemovableSeed [32]byte

// NewRemovableSeed draws a fresh seed from n's randomness: crypto/rand for
// the secure source, the seeded stream for a seeded (non-private,
// reproducible) one, crypto/rand for any other IntegerNoise.
func NewRemovableSeed(n IntegerNoise) RemovableSeed {
	var s RemovableSeed
	if m, ok := n.(*Mechanism); ok {
		m.mu.Lock()
		for i := 0; i < 4; i++ {
			binary.LittleEndian.PutUint64(s[8*i:], m.r.src.Uint64())
		}
		m.mu.Unlock()
		return s
	}
	_, _ = crand.Read(s[:]) // never fails since Go 1.24
	return s
}

// RemovableNoise returns the deterministic integer noise keyed by seed:
// the site draws its removable copies from it, and the coordinator, given
// the revealed seed, the same values. Not Secure(): anyone with the seed
// has the values.
func RemovableNoise(seed RemovableSeed) IntegerNoise {
	return newMechanism(rand.NewChaCha8(seed), false, "removable (ChaCha8 keyed by a seed revealed only when every site is in the sum)")
}

// RemovableMaxCopies bounds the copies RemovableSplit gives a site: the
// draws cost ≈ 0.3 µs per copy and coordinate, and 16 copies leave the
// full-set noise within 1/16 of its floor for every (K, t, κ).
const RemovableMaxCopies = 16

// RemovableSplit returns, for a round of k sites with threshold t and κ
// colluders (k ≥ t > κ ≥ 0), each site's number of noise copies m and how
// many of them it keeps from its secure source (keep ≤ m; the m − keep
// others are removable). keep = ⌈m·(t − κ)/(k − κ)⌉, so the K − κ honest
// sites' kept copies are at least the (t − κ)·m copies of t − κ honest
// survivors: both sums the guarantee counts hold ≥ (t − κ)·m copies. m is
// the one in [1, min(k − κ, RemovableMaxCopies)] that makes keep/m
// smallest (the full-set noise is K·keep/m of one site's), the smallest
// such m on ties; (1, 1) — nothing removable — when no m gains, as with
// t = k.
func RemovableSplit(k, t, colluders int) (copies, keep int) {
	h, n := t-colluders, k-colluders
	if h < 1 || n < h {
		return 1, 1
	}
	copies, keep = 1, 1
	for m := 1; m <= min(n, RemovableMaxCopies); m++ {
		kp := (m*h + n - 1) / n
		if kp*copies < keep*m { // kp/m < keep/copies
			copies, keep = m, kp
		}
	}
	return copies, keep
}
