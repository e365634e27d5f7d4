package secagg

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// The sparse variant (SecAgg+, Bell et al., "Secure Single-Server
// Aggregation with (Poly)Logarithmic Overhead", CCS 2020), chosen by
// Config.Degree > 0. Each site agrees keys with, masks against and shares
// its two secrets among its neighbours in a random graph of expected
// degree k = Degree instead of all K − 1 others; a site's secrets are
// shared among its neighbours in U1 and itself with a fixed threshold
// ℓ = Config.Local. Everything else is the complete-graph protocol: the
// survivor sets U1 … U4 are global, at least t sites survive every step,
// the consistency round signs one U3 for everyone (2t > K + κ).
//
// # The graph, and why the coordinator cannot steer it
//
// The graph is on the K invited sites, a public function of the round id
// alone. Order the ids; the row key of the a-th is
// g_a = SHA-256(labelGraph, round, id_a)[:16], and for positions a < b the
// edge {a, b} is present iff the 64-bit word at offset 8(b − a − 1) of the
// AES-128-CTR keystream under g_a (zero IV), big-endian, is below p·2⁶⁴,
// with p = Degree/(K − 1). So:
//
//   - in the ideal-cipher model every edge is a coin of bias p, the coins
//     independent: what the union bound of SparseFloor needs;
//   - U1 … U4 never move an edge: the coordinator's choice of who
//     survives only removes vertices, and every party computes the same
//     graph without trusting any message (a site verifies the
//     advertisements of its neighbours only: no other key enters its
//     computation);
//   - the round id is fixed by the job (round.Params: federation, job and
//     phase), so whoever names a job can draw graphs offline until one
//     suits them; each draw has a self-sufficient set below the floor with
//     probability at most 2⁻¹²⁸, so 2⁶⁴ draws leave 2⁻⁶⁴. Colluders are
//     counted as adjacent to every honest site (the worst case), so
//     choosing them after seeing the graph gains nothing either.
//
// # What a lying coordinator learns, and the noise floor
//
// See SparseFloor: only sums over sets S of honest survivors in which
// every member has at least ℓ − 1 neighbours in S or among the
// colluders, and the probability over the graph that such a set has fewer
// than n members is below 2⁻¹²⁸ (a union bound with Chernoff tails): each
// site's share of the distributed discrete Gaussian is calibrated for n
// honest shares (fedalgo/secure.go), where the complete graph uses t − κ.
//
// # Cost
//
// Per site: 2·deg key agreements, deg encryptions, deg mask streams and
// Shamir sharing over deg + 1 points, against K − 1 each in the complete
// graph; the graph itself is K(K − 1)/2 AES blocks, computed once per
// party and round, and the t signatures on U3 stay O(K).

const labelGraph = "pairfed/secagg+/v1 graph"

// graph is the round's neighbour relation on the invited sites (ids
// sorted). adj nil is the complete graph.
type graph struct {
	ids   []uint32
	dense bool       // ids are 1 … K
	adj   [][]uint64 // adj[a] is a bitset over positions in ids
}

// Sparse reports whether the round runs the sparse variant (SecAgg+).
func (c Config) Sparse() bool { return c.Degree > 0 }

// shareThreshold is the number of shares that rebuild one site's secret:
// t in the complete graph, ℓ in the sparse one.
func (c Config) shareThreshold() int {
	if c.Sparse() {
		return c.Local
	}
	return c.Threshold
}

// edgeCut is ⌊p·2⁶⁴⌋ for p = Degree/(K − 1): the edge test's threshold.
func (c Config) edgeCut() uint64 {
	hi, lo := bits.Mul64(uint64(c.Degree), math.MaxUint64)
	q, _ := bits.Div64(hi, lo, uint64(len(c.Sites)-1))
	return q
}

// newGraph returns the round's graph on its invited sites.
func (c Config) newGraph() (*graph, error) {
	ids := slices.Sorted(slices.Values(c.Sites))
	g := &graph{ids: ids, dense: ids[0] == 1 && int(ids[len(ids)-1]) == len(ids)}
	if !c.Sparse() {
		return g, nil
	}
	n := len(ids)
	words := (n + 63) / 64
	g.adj = make([][]uint64, n)
	flat := make([]uint64, n*words)
	for a := range g.adj {
		g.adj[a] = flat[a*words : (a+1)*words]
	}
	cut := c.edgeCut()
	stream := make([]byte, 8*n)
	iv := make([]byte, aes.BlockSize)
	for a := range n - 1 {
		h := sha256.New()
		h.Write([]byte(labelGraph))
		h.Write(c.RoundID)
		h.Write(binary.BigEndian.AppendUint32(nil, ids[a]))
		blk, err := aes.NewCipher(h.Sum(nil)[:16])
		if err != nil {
			return nil, err
		}
		row := stream[:8*(n-a-1)]
		clear(row)
		cipher.NewCTR(blk, iv).XORKeyStream(row, row)
		for b := a + 1; b < n; b++ {
			if binary.BigEndian.Uint64(row[8*(b-a-1):]) < cut {
				g.adj[a][b/64] |= 1 << (b % 64)
				g.adj[b][a/64] |= 1 << (a % 64)
			}
		}
	}
	return g, nil
}

func (g *graph) pos(id uint32) (int, bool) {
	if g.dense { // ids 1 … K, as secagg/round numbers the participants
		return int(id) - 1, id >= 1 && int(id) <= len(g.ids)
	}
	return slices.BinarySearch(g.ids, id)
}

// adjacent reports whether u and v (members of U1) are neighbours; a site
// is its own neighbour here (it holds a share of its own secrets).
func (g *graph) adjacent(u, v uint32) bool {
	if g.adj == nil || u == v {
		return true
	}
	a, ok1 := g.pos(u)
	b, ok2 := g.pos(v)
	return ok1 && ok2 && g.adj[a][b/64]&(1<<(b%64)) != 0
}

// holders returns, sorted, the sites that hold a share of id's secrets:
// its neighbours that are in u1 (sorted) and itself — all of u1 in the
// complete graph.
func (g *graph) holders(id uint32, u1 []uint32) []uint32 {
	if g.adj == nil {
		return u1
	}
	a, ok := g.pos(id)
	if !ok {
		return nil
	}
	var hs []uint32
	for _, v := range u1 {
		if b, ok := g.pos(v); ok && (b == a || g.adj[a][b/64]&(1<<(b%64)) != 0) {
			hs = append(hs, v)
		}
	}
	return hs
}

// mask is the bitset, over the graph's positions, of the ids of u1.
func (g *graph) mask(u1 []uint32) []uint64 {
	m := make([]uint64, (len(g.ids)+63)/64)
	for _, v := range u1 {
		if b, ok := g.pos(v); ok {
			m[b/64] |= 1 << (b % 64)
		}
	}
	return m
}

// place returns site me's position in dealer d's holder list within the
// members of u1 (their bitset m, from mask; both in u1) and the list's
// length: popcounts of d's row, in O(K/64) — what holders would give by
// searching. u1 is the sorted list behind m (used by the complete graph).
func (g *graph) place(d, me uint32, u1 []uint32, m []uint64) (int, int) {
	if g.adj == nil {
		i, _ := slices.BinarySearch(u1, me)
		return i, len(u1)
	}
	a, _ := g.pos(d)
	b, _ := g.pos(me)
	idx, n := 0, 0
	for w, row := range g.adj[a] {
		h := row & m[w]
		if w == a/64 {
			h |= 1 << (a % 64) // the dealer holds a share of its own
		}
		n += bits.OnesCount64(h)
		switch {
		case w < b/64:
			idx += bits.OnesCount64(h)
		case w == b/64:
			idx += bits.OnesCount64(h & (1<<(b%64) - 1))
		}
	}
	return idx, n
}

// validateSparse checks the sparse variant's parameters (Validate).
func (c Config) validateSparse() error {
	k := len(c.Sites)
	if c.Degree < 0 || c.Degree > k-2 {
		return fmt.Errorf("secagg: degree %d for %d sites must be 0 (the complete graph) or in [1, %d]: at %d or more the graph is complete", c.Degree, k, k-2, k-1)
	}
	if c.Degree == 0 {
		if c.Local != 0 || c.Withheld != 0 {
			return fmt.Errorf("secagg: a local threshold %d or withheld bound %d without a degree: the complete graph's threshold is t = %d", c.Local, c.Withheld, c.Threshold)
		}
		return nil
	}
	if c.Local < 2 || c.Local > c.Degree {
		return fmt.Errorf("secagg: local threshold %d must be in [2, degree %d] (a site's secrets are shared among its ≈ %d neighbours and itself)", c.Local, c.Degree, c.Degree)
	}
	if c.Withheld < 0 || c.Withheld >= c.Local {
		return fmt.Errorf("secagg: withheld bound %d must be in [0, ℓ − 1 = %d]", c.Withheld, c.Local-1)
	}
	return nil
}
