package secagg

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Dealt-share commitments: shares that decrypt but are inconsistent
// (issue 28). Without them a rogue member could, after everyone was
// charged, abort the unmasking (key shares that do not reconstruct its
// advertised key) or silently corrupt the sum (seed shares that do not
// reconstruct the seed it masked with; a responder returning a wrong
// share of an honest site's seed).
//
// The dealer j, in its ShareKeys (active variant), signs with its
// long-term key a commitment list (Commitments):
//
//	Seed              = H(labelCommitB, round, j, b_j)
//	for each i ∈ U1:  Key_i  = H(labelCommitKey,  round, j, i, n_i, share_i(s_j^SK))
//	                  Seed_i = H(labelCommitSeed, round, j, i, n_i, share_i(b_j))
//	Sig               = Sign_j(labelCommits, round, j, Seed, [(i, Key_i, Seed_i)])
//
// n_i is a fresh 32-byte nonce sent to i with its shares (inside the
// AEAD ciphertext). s_j^SK is bound by j's signed advertisement S_j; b_j
// by Seed. H is SHA-256 over the length-free concatenation: every field
// has a fixed length, so the encoding is injective.
//
//   - The server checks the signature and that the list names exactly U1
//     (HandleShares; a bad list excludes the dealer as a bad advertisement
//     does) and forwards to each recipient i its entry (Key_i, Seed_i).
//   - Recipient i checks its decrypted shares and nonce against its entry;
//     a mismatch is treated as an unopenable share: i holds no share of
//     j's secrets, names j in MaskedInput.Rejected, and j is dropped from
//     U3 (the existing path). So every share an honest site holds matches
//     the dealer's signed list.
//   - At unmasking every revealed share carries its nonce; the server
//     checks it against the dealer's entry for the responder (HandleUnmask)
//     and ignores every share of a responder with one that does not match
//     (Result.Ignored): it reconstructs from verified shares only.
//   - It checks each reconstruction: H(b_v) against v's Seed, s_v^SK
//     against S_v. Verified shares that do not reconstruct are a proof
//     that the dealer v cheated (CheatProof: v's signed list and t shares
//     matching it — transferable: anyone with the roster checks it). A
//     survivor v with such seed shares is expelled: the server sends the
//     proofs (ExpelRequest) to the sites that answered the unmasking; each
//     checks every proof itself (Client.Expel) and only then reveals, for
//     each proven cheater j, its pairwise key s_uj and its share of
//     s_j^SK; the server removes y_j from the sum and the pairwise masks
//     with j from the other survivors' inputs (Server.EndExpel). With
//     fewer than t survivors left, or a dropped cheater's key shares
//     inconsistent while some survivor's pairwise key with it is missing,
//     the round aborts.
//
// Why an honest dealer cannot be framed. A proof needs a list that
// verifies under j's roster key for this round (only j can sign; Ed25519
// is unforgeable and the label and round id keep the signature from
// verifying elsewhere) and t shares with nonces whose hashes are that
// list's entries (so, unless SHA-256 collides, exactly the shares j
// dealt). An honest j signs one list per round, of shares of polynomials
// of degree t − 1 whose constant term is b_j: any t of them interpolate
// to b_j, whose hash is the list's Seed. No proof against it exists, so
// no survivor reveals a pairwise key with it: a lying coordinator cannot
// obtain s_uj for honest u, j (which with b_u's shares, revealed because
// u survived, would unmask x_u). A responder whose share the server
// ignores is not named by a transferable proof (its unmask message is not
// signed): it is named in the result, but its input stays in the sum
// (its self mask is reconstructed from the other responders' verified
// shares); a lying coordinator could name anyone so, but gains nothing by
// it that it did not have (it can always leave a site's answer out).
//
// What the coordinator learns. With no cheater, nothing more than before:
// the commitments are hashes of values of ≥ 256 bits of entropy given its
// view (with fewer than t shares of a secret, the secret is uniform; the
// nonces add 256 more for each share not revealed), and the revealed
// nonces only open the shares it is given anyway. With a proven cheater
// j: y_j, every survivor's s_uj and j's key and seed shares — it may learn
// x_j (j cheated; its privacy is its own to lose) — and the sum over
// U3 \ {j}, still of at least t sites, none of whose other masks was
// revealed. An honest site's input is protected as before.
//
// What it does not stop: a member's input itself is unconstrained (a rogue
// can add anything to its masked vector, or mask with another seed than
// the one it committed to: the sum then holds its chosen value in its
// place). Bounding a member's contribution needs a zero-knowledge proof
// of its norm (deploy/README.md, threat model): not implemented.

const (
	nonceLen  = 32
	commitLen = sha256.Size
)

// ErrExcluded wraps a Handle* error that removes its sender from the
// round's step (a bad advertisement, a bad commitment list, an unmask
// answer holding a share that does not match its dealer's commitment):
// the caller stops waiting for it.
var ErrExcluded = errors.New("secagg: sender excluded from the round")

// Commitments is dealer j's signed commitment list (active variant).
type Commitments struct {
	Seed   []byte        // H(labelCommitB, round, j, b_j)
	Shares []ShareCommit // one per member of U1, sorted by To, the dealer included
	Sig    []byte        // Sign_j(commitsSigned(round, j, ·))
}

// ShareCommit is a dealer's commitment to the two shares it dealt to To.
type ShareCommit struct {
	To   uint32
	Key  []byte // H(labelCommitKey, round, dealer, To, nonce, key share)
	Seed []byte // H(labelCommitSeed, round, dealer, To, nonce, seed share)
}

func (c ShareCommit) clone() ShareCommit {
	return ShareCommit{To: c.To, Key: slices.Clone(c.Key), Seed: slices.Clone(c.Seed)}
}

func (c Commitments) clone() Commitments {
	out := Commitments{Seed: slices.Clone(c.Seed), Sig: slices.Clone(c.Sig), Shares: make([]ShareCommit, len(c.Shares))}
	for i, e := range c.Shares {
		out.Shares[i] = e.clone()
	}
	return out
}

// entry returns the commitment to the shares dealt to to.
func (c Commitments) entry(to uint32) (ShareCommit, bool) {
	i, ok := slices.BinarySearchFunc(c.Shares, to, func(e ShareCommit, t uint32) int {
		switch {
		case e.To < t:
			return -1
		case e.To > t:
			return 1
		}
		return 0
	})
	if !ok {
		return ShareCommit{}, false
	}
	return c.Shares[i], true
}

// shareCommit is H(label, round, dealer, to, nonce, y).
func shareCommit(label string, roundID []byte, dealer, to uint32, nonce, y []byte) []byte {
	h := sha256.New()
	h.Write([]byte(label))
	h.Write(roundID)
	var b [8]byte
	binary.BigEndian.PutUint32(b[:4], dealer)
	binary.BigEndian.PutUint32(b[4:], to)
	h.Write(b[:])
	h.Write(nonce)
	h.Write(y)
	return h.Sum(nil)
}

// seedCommit is H(labelCommitB, round, dealer, b).
func seedCommit(roundID []byte, dealer uint32, seed []byte) []byte {
	h := sha256.New()
	h.Write([]byte(labelCommitB))
	h.Write(roundID)
	h.Write(binary.BigEndian.AppendUint32(nil, dealer))
	h.Write(seed)
	return h.Sum(nil)
}

// commitsSigned is what dealer signs: its seed commitment and every
// entry of its list, in order, bound to the round.
func commitsSigned(roundID []byte, dealer uint32, c Commitments) []byte {
	m := make([]byte, 0, len(labelCommits)+len(roundID)+8+commitLen+len(c.Shares)*(4+2*commitLen))
	m = append(append(m, labelCommits...), roundID...)
	m = binary.BigEndian.AppendUint32(m, dealer)
	m = append(m, c.Seed...)
	m = binary.BigEndian.AppendUint32(m, uint32(len(c.Shares)))
	for _, e := range c.Shares {
		m = binary.BigEndian.AppendUint32(m, e.To)
		m = append(append(m, e.Key...), e.Seed...)
	}
	return m
}

// SignCommitments sets c.Sig to dealer's signature of its commitment list
// for the round roundID under its long-term key (what Client.ShareKeys
// does; exported for tests that play a rogue dealer over the wire).
func SignCommitments(roundID []byte, dealer uint32, c *Commitments, key ed25519.PrivateKey) {
	c.Sig = ed25519.Sign(key, commitsSigned(roundID, dealer, *c))
}

// checkCommits checks dealer's list: a commitment of the right size to
// every member of u1 exactly (sorted), and its signature under the
// dealer's roster key for this round.
func (cfg Config) checkCommits(dealer uint32, c *Commitments, u1 []uint32) error {
	if c == nil {
		return fmt.Errorf("site %d sent no commitments to its shares", dealer)
	}
	if len(c.Seed) != commitLen || len(c.Shares) != len(u1) {
		return fmt.Errorf("site %d's commitment list has a %d-byte seed commitment and %d entries, want %d and %d", dealer, len(c.Seed), len(c.Shares), commitLen, len(u1))
	}
	for i, e := range c.Shares {
		if e.To != u1[i] || len(e.Key) != commitLen || len(e.Seed) != commitLen {
			return fmt.Errorf("site %d's commitment list entry %d (to site %d) does not match U1 %v or has the wrong size", dealer, i, e.To, u1)
		}
	}
	if !verifySig(cfg.Roster[dealer], commitsSigned(cfg.RoundID, dealer, *c), c.Sig) {
		return fmt.Errorf("site %d's commitment list is not signed by its roster key for this round", dealer)
	}
	return nil
}

// shareMatches reports whether sh (a share dealt by dealer to sh.X, with
// its nonce) is the one dealer committed to in c (seed or key share).
func (cfg Config) shareMatches(dealer uint32, c *Commitments, sh Share, seed bool) bool {
	if c == nil || len(sh.Nonce) != nonceLen || !validShare(sh.Y) {
		return false
	}
	e, ok := c.entry(sh.X)
	if !ok {
		return false
	}
	if seed {
		return bytes.Equal(shareCommit(labelCommitSeed, cfg.RoundID, dealer, sh.X, sh.Nonce, sh.Y), e.Seed)
	}
	return bytes.Equal(shareCommit(labelCommitKey, cfg.RoundID, dealer, sh.X, sh.Nonce, sh.Y), e.Key)
}

// CheatProof proves that survivor Dealer dealt self-mask seed shares that
// are not points of one polynomial through the seed it committed to: its
// signed commitment list and t seed shares that match it and do not
// interpolate to a secret whose commitment is the list's Seed.
type CheatProof struct {
	Dealer  uint32
	Commits Commitments
	Shares  []Share // exactly t, distinct holders (X), with nonces
}

// ExpelRequest (active variant, server → the sites that answered the
// unmasking): proofs against survivors that dealt inconsistent seed
// shares. Each site checks them (Client.Expel) before revealing anything.
type ExpelRequest struct {
	Proofs []CheatProof
}

// verifyProof checks a proof against the roster: nil if it proves that
// p.Dealer cheated.
func (cfg Config) verifyProof(p CheatProof) error {
	if !cfg.invited(p.Dealer) {
		return fmt.Errorf("a proof against uninvited site %d", p.Dealer)
	}
	c := p.Commits
	if len(c.Seed) != commitLen {
		return fmt.Errorf("site %d's seed commitment is %d bytes", p.Dealer, len(c.Seed))
	}
	for i, e := range c.Shares {
		if (i > 0 && e.To <= c.Shares[i-1].To) || len(e.Key) != commitLen || len(e.Seed) != commitLen {
			return fmt.Errorf("site %d's commitment list is not sorted or has an entry of the wrong size", p.Dealer)
		}
	}
	if !verifySig(cfg.Roster[p.Dealer], commitsSigned(cfg.RoundID, p.Dealer, c), c.Sig) {
		return fmt.Errorf("the commitment list is not signed by site %d for this round", p.Dealer)
	}
	if len(p.Shares) != cfg.Threshold {
		return fmt.Errorf("%d shares of site %d's seed, want exactly t = %d", len(p.Shares), p.Dealer, cfg.Threshold)
	}
	xs := make([]uint32, len(p.Shares))
	for i, sh := range p.Shares {
		if !cfg.shareMatches(p.Dealer, &c, sh, true) {
			return fmt.Errorf("the share held by site %d does not match site %d's signed commitment", sh.X, p.Dealer)
		}
		xs[i] = sh.X
	}
	if err := checkXs(xs); err != nil {
		return err
	}
	b, err := shamirCombine(p.Shares)
	if err == nil && bytes.Equal(seedCommit(cfg.RoundID, p.Dealer, b), c.Seed) {
		return fmt.Errorf("site %d's committed shares reconstruct its committed seed: no proof", p.Dealer)
	}
	return nil // t committed shares that are not of the committed seed
}
