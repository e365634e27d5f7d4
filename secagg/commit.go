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
//	                  CT_i   = H(ciphertext j → i)   (32 zero bytes for i = j)
//	                  L_i    = H(0, labelLeaf, round, j, i, Key_i, Seed_i, CT_i)
//	Sig               = Sign_j(labelCommits, round, j, Seed, |U1|, MerkleRoot(L_i))
//
// The entries are the leaves of a Merkle tree (merkleRoot: interior node
// H(1, left, right), an odd last node promoted), so that the server can
// forward to recipient i, with j's ciphertext, a proof that D signed it —
// the entry, its path and Sig (EncryptedShare) — in O(log K) bytes
// instead of the whole list. A recipient that refuses j's shares can then
// prove it (a verifiable accusation, dleq.go) without a lying server being
// able to provoke one: what i refuses is signed by j.
//
// n_i is a fresh 32-byte nonce sent to i with its shares (inside the
// AEAD ciphertext). s_j^SK is bound by j's signed advertisement S_j; b_j
// by Seed. H is SHA-256 over the length-free concatenation: every field
// has a fixed length, so the encoding is injective.
//
//   - The server checks the signature, that the list names exactly U1 and
//     that each CT_i is the hash of the ciphertext j sent to i
//     (HandleShares; a bad list excludes the dealer as a bad advertisement
//     does) and forwards to each recipient i its entry with its Merkle
//     path, Seed and Sig.
//   - Recipient i checks that evidence (a failure is a lie of the
//     server's: ErrInconsistent), then its decrypted shares and nonce
//     against its entry; a ciphertext that does not open or a mismatch:
//     i holds no share of j's secrets, names j in MaskedInput.Rejected
//     with a proof (dleq.go), and j is dropped from U3 once the server
//     checked it. So every share an honest site holds matches the
//     dealer's signed list.
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
	CT   []byte // H(the ciphertext dealer → To); 32 zero bytes when To is the dealer
}

func (c ShareCommit) clone() ShareCommit {
	return ShareCommit{To: c.To, Key: slices.Clone(c.Key), Seed: slices.Clone(c.Seed), CT: slices.Clone(c.CT)}
}

// ctHash is the commitment to a share ciphertext.
func ctHash(ct []byte) []byte {
	h := sha256.Sum256(ct)
	return h[:]
}

// merkleLeaf is entry e's leaf in dealer's tree.
func merkleLeaf(roundID []byte, dealer uint32, e ShareCommit) []byte {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write([]byte(labelLeaf))
	h.Write(roundID)
	var b [8]byte
	binary.BigEndian.PutUint32(b[:4], dealer)
	binary.BigEndian.PutUint32(b[4:], e.To)
	h.Write(b[:])
	h.Write(e.Key)
	h.Write(e.Seed)
	h.Write(e.CT)
	return h.Sum(nil)
}

func merkleNode(l, r []byte) []byte {
	h := sha256.New()
	h.Write([]byte{1})
	h.Write(l)
	h.Write(r)
	return h.Sum(nil)
}

// merkleLevels returns the tree over the leaves (n ≥ 1), bottom up: each
// level pairs neighbours, an odd last node is promoted unchanged. The
// last level holds the root.
func merkleLevels(leaves [][]byte) [][][]byte {
	levels := [][][]byte{leaves}
	for level := leaves; len(level) > 1; {
		next := make([][]byte, 0, (len(level)+1)/2)
		for i := 0; i < len(level); i += 2 {
			if i+1 < len(level) {
				next = append(next, merkleNode(level[i], level[i+1]))
			} else {
				next = append(next, level[i])
			}
		}
		levels = append(levels, next)
		level = next
	}
	return levels
}

// merkleRoot is the root over the leaves; with the path of leaf i
// (merklePath) it is recomputed by merkleFromPath.
func merkleRoot(leaves [][]byte) []byte {
	l := merkleLevels(leaves)
	return l[len(l)-1][0]
}

// merklePath returns the siblings of leaf i in the tree levels, bottom up
// (none where the node is promoted).
func merklePath(levels [][][]byte, i int) [][]byte {
	var path [][]byte
	for _, level := range levels[:len(levels)-1] {
		if j := i ^ 1; j < len(level) {
			path = append(path, level[j])
		}
		i /= 2
	}
	return path
}

// merkleFromPath recomputes the root of n leaves from leaf i and its
// path; nil when the path has the wrong length for (i, n).
func merkleFromPath(leaf []byte, i, n int, path [][]byte) []byte {
	if i < 0 || i >= n {
		return nil
	}
	h := leaf
	for n > 1 {
		if j := i ^ 1; j < n {
			if len(path) == 0 || len(path[0]) != commitLen {
				return nil
			}
			if i&1 == 0 {
				h = merkleNode(h, path[0])
			} else {
				h = merkleNode(path[0], h)
			}
			path = path[1:]
		}
		i, n = i/2, (n+1)/2
	}
	if len(path) != 0 {
		return nil
	}
	return h
}

// leaves returns the Merkle leaves of dealer's list.
func leaves(roundID []byte, dealer uint32, c Commitments) [][]byte {
	ls := make([][]byte, len(c.Shares))
	for i, e := range c.Shares {
		ls[i] = merkleLeaf(roundID, dealer, e)
	}
	return ls
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

// commitsSigned is what dealer signs: its seed commitment, the number of
// entries and the Merkle root over them (in order), bound to the round.
func commitsSigned(roundID []byte, dealer uint32, c Commitments) []byte {
	if len(c.Shares) == 0 {
		return nil // never signed nor verified (lists have ≥ 2 entries)
	}
	return rootSigned(roundID, dealer, c.Seed, len(c.Shares), merkleRoot(leaves(roundID, dealer, c)))
}

func rootSigned(roundID []byte, dealer uint32, seed []byte, n int, root []byte) []byte {
	m := make([]byte, 0, len(labelCommits)+len(roundID)+8+2*commitLen)
	m = append(append(m, labelCommits...), roundID...)
	m = binary.BigEndian.AppendUint32(m, dealer)
	m = append(m, seed...)
	m = binary.BigEndian.AppendUint32(m, uint32(n))
	return append(m, root...)
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
		if e.To != u1[i] || len(e.Key) != commitLen || len(e.Seed) != commitLen || len(e.CT) != commitLen {
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
	if len(c.Shares) == 0 {
		return fmt.Errorf("site %d's commitment list is empty", p.Dealer)
	}
	for i, e := range c.Shares {
		if (i > 0 && e.To <= c.Shares[i-1].To) || len(e.Key) != commitLen || len(e.Seed) != commitLen || len(e.CT) != commitLen {
			return fmt.Errorf("site %d's commitment list is not sorted or has an entry of the wrong size", p.Dealer)
		}
	}
	if !verifySig(cfg.Roster[p.Dealer], commitsSigned(cfg.RoundID, p.Dealer, c), c.Sig) {
		return fmt.Errorf("the commitment list is not signed by site %d for this round", p.Dealer)
	}
	if len(p.Shares) != cfg.shareThreshold() {
		return fmt.Errorf("%d shares of site %d's seed, want exactly %d (the share threshold)", len(p.Shares), p.Dealer, cfg.shareThreshold())
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

// checkEvidence checks that dealer e.From signed the ciphertext e.CT and
// the commitment e.Commit forwarded to recipient to, the i-th of the n
// members of U1: the entry with the hash of e.CT is a leaf, e.Path its
// path, of the tree whose root e.From signed with e.Seed (e.Sig). An
// honest server forwards exactly what it checked at HandleShares, so a
// failure here is the server's lie.
func (cfg Config) checkEvidence(e EncryptedShare, to uint32, i, n int) error {
	if e.Commit == nil || e.Commit.To != to || len(e.Commit.Key) != commitLen || len(e.Commit.Seed) != commitLen || len(e.Seed) != commitLen {
		return fmt.Errorf("the shares from site %d come without its signed commitment to them", e.From)
	}
	leaf := merkleLeaf(cfg.RoundID, e.From, ShareCommit{To: to, Key: e.Commit.Key, Seed: e.Commit.Seed, CT: ctHash(e.CT)})
	root := merkleFromPath(leaf, i, n, e.Path)
	if root == nil || !verifySig(cfg.Roster[e.From], rootSigned(cfg.RoundID, e.From, e.Seed, n, root), e.Sig) {
		return fmt.Errorf("the ciphertext and commitment forwarded from site %d are not the ones site %d signed for this site in this round (altered or replayed)", e.From, e.From)
	}
	return nil
}

// openDealt opens dealer's ciphertext ct to site to under the pair's key
// and, in the active variant, checks the shares and nonce against the
// dealer's commitment entry for to: what a recipient accepts, and what
// the server redoes to judge an accusation (Server.HandleMasked).
func (cfg Config) openDealt(key []byte, dealer, to uint32, ct []byte, entry *ShareCommit) (heldShare, error) {
	pt, err := open(key, cfg.RoundID, dealer, to, ct)
	if err != nil {
		return heldShare{}, err
	}
	ptLen := 2 * shareLen
	if cfg.Active() {
		ptLen += nonceLen
	}
	if len(pt) != ptLen || !validShare(pt[:shareLen]) || !validShare(pt[shareLen:2*shareLen]) {
		return heldShare{}, fmt.Errorf("secagg: share from site %d has %d bytes or values outside the field", dealer, len(pt))
	}
	h := heldShare{Share{X: to, Y: pt[:shareLen]}, Share{X: to, Y: pt[shareLen : 2*shareLen]}}
	if !cfg.Active() {
		return h, nil
	}
	h.key.Nonce, h.seed.Nonce = pt[2*shareLen:], pt[2*shareLen:]
	// A share that decrypts but is not the one its dealer signed a
	// commitment to: held, it would be refused at unmasking, or prove
	// nothing. Refused now, as a share that does not open.
	if entry == nil || entry.To != to {
		return heldShare{}, fmt.Errorf("secagg: the shares from site %d come without its commitment to them", dealer)
	}
	if cm := (Commitments{Shares: []ShareCommit{*entry}}); !cfg.shareMatches(dealer, &cm, h.key, false) || !cfg.shareMatches(dealer, &cm, h.seed, true) {
		return heldShare{}, fmt.Errorf("secagg: the shares from site %d do not match its signed commitments (inconsistent dealing)", dealer)
	}
	return h, nil
}
