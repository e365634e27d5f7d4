package secagg

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ed25519"
	"fmt"
	"io"
	"maps"
	"slices"
)

// Client steps: the next expected call.
const (
	stepAdvertise = iota
	stepShare
	stepMasked
	stepCheck  // active: ConsistencyCheck; honest-but-curious: Unmask
	stepUnmask // active: UnmaskSigned
	stepExpel  // active: Expel (proofs against cheating survivors), after UnmaskSigned
	stepDone
)

// Client is one site's side of a round (Bonawitz et al., "Practical Secure
// Aggregation for Privacy-Preserving Machine Learning", CCS 2017). By
// default it runs the active variant of Fig. 5: rounds 0 AdvertiseKeys
// (signed), 1 ShareKeys, 2 MaskedInputCollection, 3 ConsistencyCheck
// (sign the survivor set U3), 4 Unmasking (only after ≥ t valid
// signatures on the same U3); with Config.HonestButCurious, Fig. 4 without
// signatures and without round 3. It is a pure state machine: each method
// takes the server's message and returns the site's answer; a method
// called out of order, or a second time, is an error and releases nothing,
// and any error ends the site's round.
type Client struct {
	cfg  Config
	id   uint32
	rnd  io.Reader
	sign ed25519.PrivateKey // long-term key (active variant)
	step int                // next expected call (stepAdvertise … stepDone)
	u3   []uint32           // the survivor set this site signed (active)

	cKey *encKey          // share encryption (edwards25519, dleq.go)
	sKey *ecdh.PrivateKey // pairwise masks (X25519)
	seed []byte           // b_u

	u1 map[uint32]AdvertiseKeys // advertised keys (from the server's list)
	xs []uint32                 // the holders of this site's shares, sorted: U1, or in the sparse variant its neighbours in U1 and itself
	// evid[d] is this site's position in dealer d's commitment list and
	// the list's length (d's holders: all of U1 in the complete graph).
	evid map[uint32][2]int
	u2   []uint32             // senders of the shares we received, with us
	held map[uint32]heldShare // shares other sites gave us
	enc  map[uint32][]byte    // share-encryption keys, by peer

	// Test hooks (nil in every deployment; set only by this package's
	// tests to play a rogue dealer): dealHook alters the shares just
	// dealt, before they are committed to; commitHook alters the
	// commitment list before it is signed.
	dealHook   func(key, seed []Share)
	commitHook func(*Commitments)
	// falseAccuse (tests only) are dealers this site refuses although
	// their shares are good: a rogue accuser, with a genuine proof.
	falseAccuse []uint32

	// reveal is sent with the unmask shares when every site is in U3
	// (RevealWhenAll).
	reveal []byte

	// Rejected names the peers whose share ciphertexts this site refused
	// (MaskedInput), with the reason: the caller records them (the
	// site's ledger note).
	Rejected []RejectedPeer
}

// RejectedPeer is a peer whose shares a site refused.
type RejectedPeer struct {
	Site   uint32
	Reason string
}

// heldShare is a peer's shares dealt to this site (X = this site; in the
// active variant each carries the dealer's nonce for this site's
// commitments).
type heldShare struct{ key, seed Share }

// NewClient returns the state machine of site id for the round cfg. rnd is
// the source of every secret (crypto/rand.Reader in production). sign is
// the site's long-term Ed25519 key, whose public half must be the
// roster's entry for id (active variant); nil with HonestButCurious.
func NewClient(cfg Config, id uint32, sign ed25519.PrivateKey, rnd io.Reader) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.invited(id) {
		return nil, fmt.Errorf("secagg: site %d is not among the round's sites %v", id, cfg.Sites)
	}
	if cfg.Active() {
		if len(sign) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("secagg: site %d has no Ed25519 signing key (%d bytes): the active variant signs its keys and its view of the survivors", id, len(sign))
		}
		if !bytes.Equal(sign.Public().(ed25519.PublicKey), cfg.Roster[id]) {
			return nil, fmt.Errorf("secagg: site %d's signing key is not the one the roster lists for it", id)
		}
	} else if sign != nil {
		return nil, fmt.Errorf("secagg: a signing key for the honest-but-curious variant, which signs nothing")
	}
	return &Client{cfg: cfg, id: id, rnd: rnd, sign: sign}, nil
}

func (c *Client) expect(step int, what string) error {
	if c.step != step {
		return fmt.Errorf("secagg: site %d: %s out of order (step %d, want %d)", c.id, what, c.step, step)
	}
	return nil
}

// Advertise draws the site's fresh key pairs and returns its public keys.
func (c *Client) Advertise() (AdvertiseKeys, error) {
	if err := c.expect(stepAdvertise, "advertise"); err != nil {
		return AdvertiseKeys{}, err
	}
	c.step = stepDone
	var err error
	if c.cKey, err = newEncKey(c.rnd); err != nil {
		return AdvertiseKeys{}, err
	}
	if c.sKey, err = newKeyPair(c.rnd); err != nil {
		return AdvertiseKeys{}, err
	}
	m := AdvertiseKeys{From: c.id, C: c.cKey.Bytes(), S: c.sKey.PublicKey().Bytes()}
	if c.cfg.Active() {
		m.Sig = ed25519.Sign(c.sign, advertSigned(c.cfg.RoundID, c.id, m.C, m.S))
	}
	c.step = stepShare
	return m, nil
}

// ShareKeys checks the key list U1 (≥ t invited sites, distinct ids and
// keys, our own keys unchanged; in the active variant every entry signed
// for this round under its site's roster key — one that is not means the
// server forged or replayed it, ErrInconsistent), draws the self-mask seed
// b_u, shares s_u^SK and b_u t-of-|U1| and encrypts each other member's
// shares to it.
func (c *Client) ShareKeys(list KeyList) (ShareKeys, error) {
	if err := c.expect(stepShare, "share keys"); err != nil {
		return ShareKeys{}, err
	}
	c.step = stepDone // any failure below ends this client's round
	if len(list.Keys) < c.cfg.Threshold {
		return ShareKeys{}, fmt.Errorf("%w: %d keys advertised, threshold %d", ErrTooFewSurvivors, len(list.Keys), c.cfg.Threshold)
	}
	g, err := c.cfg.newGraph() // public: from the round id alone (graph.go)
	if err != nil {
		return ShareKeys{}, err
	}
	c.u1 = make(map[uint32]AdvertiseKeys, len(list.Keys))
	seenKey := map[string]bool{}
	xs := make([]uint32, 0, len(list.Keys))
	for _, k := range list.Keys {
		if !c.cfg.invited(k.From) {
			return ShareKeys{}, fmt.Errorf("secagg: site %d: key list names uninvited site %d", c.id, k.From)
		}
		if _, dup := c.u1[k.From]; dup {
			return ShareKeys{}, fmt.Errorf("secagg: site %d: key list names site %d twice", c.id, k.From)
		}
		// A non-neighbour's keys enter none of this site's computations
		// in the sparse variant: only its neighbours' are checked.
		if c.cfg.Active() && g.adjacent(c.id, k.From) && !verifySig(c.cfg.Roster[k.From], advertSigned(c.cfg.RoundID, k.From, k.C, k.S), k.Sig) {
			return ShareKeys{}, fmt.Errorf("%w: site %d: the key list's entry for site %d is not signed by site %d for this round (unsigned, forged or replayed from another round)", ErrInconsistent, c.id, k.From, k.From)
		}
		if seenKey[string(k.C)] || seenKey[string(k.S)] || bytes.Equal(k.C, k.S) {
			return ShareKeys{}, fmt.Errorf("secagg: site %d: key list repeats a public key (site %d)", c.id, k.From)
		}
		seenKey[string(k.C)], seenKey[string(k.S)] = true, true
		c.u1[k.From] = k
		xs = append(xs, k.From)
	}
	slices.Sort(xs)
	mine, ok := c.u1[c.id]
	if !ok || !bytes.Equal(mine.C, c.cKey.Bytes()) || !bytes.Equal(mine.S, c.sKey.PublicKey().Bytes()) {
		return ShareKeys{}, fmt.Errorf("secagg: site %d: key list omits or alters this site's keys", c.id)
	}
	// The holders of this site's shares (the order of its commitment
	// list), and its place in each neighbour's list (graph.go).
	u1 := xs
	xs = g.holders(c.id, u1)
	if len(xs) < c.cfg.shareThreshold() {
		return ShareKeys{}, fmt.Errorf("%w: site %d has %d neighbours in U1, and its secrets need ℓ = %d holders (itself included): it leaves the round", ErrTooFewSurvivors, c.id, len(xs)-1, c.cfg.shareThreshold())
	}
	c.xs = xs
	c.evid = make(map[uint32][2]int, len(xs))
	m := g.mask(u1)
	for _, d := range xs {
		i, n := g.place(d, c.id, u1, m)
		c.evid[d] = [2]int{i, n}
	}
	c.seed = make([]byte, secretLen)
	if _, err := io.ReadFull(c.rnd, c.seed); err != nil {
		return ShareKeys{}, fmt.Errorf("secagg: randomness: %w", err)
	}
	keyShares, err := shamirSplit(c.sKey.Bytes(), xs, c.cfg.shareThreshold(), c.rnd)
	if err != nil {
		return ShareKeys{}, err
	}
	seedShares, err := shamirSplit(c.seed, xs, c.cfg.shareThreshold(), c.rnd)
	if err != nil {
		return ShareKeys{}, err
	}
	if c.dealHook != nil {
		c.dealHook(keyShares, seedShares)
	}
	out := ShareKeys{From: c.id}
	c.held = map[uint32]heldShare{}
	c.enc = map[uint32][]byte{}
	var nonces [][]byte
	if c.cfg.Active() {
		nonces = make([][]byte, len(xs))
		for i := range xs {
			nonces[i] = make([]byte, nonceLen)
			if _, err := io.ReadFull(c.rnd, nonces[i]); err != nil {
				return ShareKeys{}, fmt.Errorf("secagg: randomness: %w", err)
			}
			keyShares[i].Nonce, seedShares[i].Nonce = nonces[i], nonces[i]
		}
	}
	cts := make([][]byte, len(xs))
	for i, v := range xs {
		if v == c.id {
			c.held[c.id] = heldShare{keyShares[i], seedShares[i]}
			continue
		}
		key, err := encAgree(c.cKey, c.u1[v].C, c.cfg.RoundID)
		if err != nil {
			return ShareKeys{}, err
		}
		c.enc[v] = key
		pt := append(append([]byte{}, keyShares[i].Y...), seedShares[i].Y...)
		if nonces != nil {
			pt = append(pt, nonces[i]...)
		}
		if cts[i], err = seal(key, c.cfg.RoundID, c.id, v, pt, c.rnd); err != nil {
			return ShareKeys{}, err
		}
		out.Shares = append(out.Shares, EncryptedShare{From: c.id, To: v, CT: cts[i]})
	}
	if c.cfg.Active() {
		// Commitments to every dealt share, its ciphertext and b_u,
		// signed (commit.go).
		cm := Commitments{Seed: seedCommit(c.cfg.RoundID, c.id, c.seed)}
		for i, v := range xs {
			ct := make([]byte, commitLen) // the dealer's own entry: no ciphertext
			if v != c.id {
				ct = ctHash(cts[i])
			}
			cm.Shares = append(cm.Shares, ShareCommit{To: v,
				Key:  shareCommit(labelCommitKey, c.cfg.RoundID, c.id, v, nonces[i], keyShares[i].Y),
				Seed: shareCommit(labelCommitSeed, c.cfg.RoundID, c.id, v, nonces[i], seedShares[i].Y),
				CT:   ct})
		}
		if c.commitHook != nil {
			c.commitHook(&cm)
		}
		SignCommitments(c.cfg.RoundID, c.id, &cm, c.sign)
		out.Commits = &cm
	}
	c.step = stepMasked
	return out, nil
}

// MaskedInput decrypts the shares the server forwarded (their senders and
// this site form U2; ≥ t), and returns x masked by the self mask and the
// pairwise masks with every other member of U2, modulo 2^b. x is not
// modified; its entries are reduced mod 2^b first.
func (c *Client) MaskedInput(in SharesFor, x []uint64) (MaskedInput, error) {
	if err := c.expect(stepMasked, "masked input"); err != nil {
		return MaskedInput{}, err
	}
	if len(x) != c.cfg.Dim {
		return MaskedInput{}, fmt.Errorf("secagg: site %d: input has %d entries, the round's dimension is %d", c.id, len(x), c.cfg.Dim)
	}
	c.step = stepDone
	if in.To != c.id {
		return MaskedInput{}, fmt.Errorf("secagg: site %d: received shares addressed to site %d", c.id, in.To)
	}
	u2 := []uint32{c.id}
	var rejected []uint32
	var accusations []Accusation
	shares := slices.SortedFunc(slices.Values(in.Shares), func(a, b EncryptedShare) int { return cmpID(a.From, b.From) })
	for _, e := range shares {
		_, ok := c.enc[e.From]
		if !ok || e.From == c.id || e.To != c.id {
			return MaskedInput{}, fmt.Errorf("secagg: site %d: unexpected share %d → %d", c.id, e.From, e.To)
		}
		if _, dup := c.held[e.From]; dup || slices.Contains(rejected, e.From) {
			return MaskedInput{}, fmt.Errorf("secagg: site %d: two shares from site %d", c.id, e.From)
		}
		if c.cfg.Active() {
			// The dealer's signature on this ciphertext and commitment
			// (commit.go): an honest server forwards only what it checked,
			// so evidence that does not verify is its lie — and this site
			// must not accuse (and reveal the pair's key) on it.
			ev := c.evid[e.From]
			if err := c.cfg.checkEvidence(e, c.id, ev[0], ev[1]); err != nil {
				return MaskedInput{}, fmt.Errorf("%w: site %d: %w", ErrInconsistent, c.id, err)
			}
		}
		h, err := c.cfg.openDealt(c.enc[e.From], e.From, c.id, e.CT, e.Commit)
		if err == nil && slices.Contains(c.falseAccuse, e.From) {
			err = fmt.Errorf("secagg: a false accusation (test hook)")
		}
		if err != nil {
			// A rogue dealer: garbage, a ciphertext replayed from another
			// round or pair, or shares it did not commit to — signed by it
			// (active variant). This site holds no share of e.From's
			// secrets: e.From leaves this site's U2 (no pairwise mask with
			// it) and is named to the server, with the pair's key and its
			// proof (dleq.go), which drops it from the round. Nothing
			// derived from the data has left yet.
			if c.cfg.Active() {
				y, perr := parsePoint(c.u1[e.From].C)
				if perr != nil {
					return MaskedInput{}, fmt.Errorf("secagg: site %d: site %d's encryption key %w", c.id, e.From, perr)
				}
				a, aerr := c.cKey.accuse(c.cfg.RoundID, c.id, e.From, y, c.rnd)
				if aerr != nil {
					return MaskedInput{}, aerr
				}
				accusations = append(accusations, a)
			}
			rejected = append(rejected, e.From)
			c.Rejected = append(c.Rejected, RejectedPeer{Site: e.From, Reason: err.Error()})
			continue
		}
		c.held[e.From] = h
		u2 = append(u2, e.From)
	}
	if len(u2) < c.cfg.shareThreshold() {
		return MaskedInput{}, fmt.Errorf("%w: %d sites shared valid keys with site %d (%d rejected), threshold %d", ErrTooFewSurvivors, len(u2), c.id, len(rejected), c.cfg.shareThreshold())
	}
	if missing := len(c.xs) - len(u2); c.cfg.Sparse() && missing > c.cfg.Withheld {
		// More neighbours than w sent no shares (dropped, refused, or
		// withheld by the server): masking with the rest would let their
		// answers rebuild this site's self mask outside its masking
		// partners (sparsefloor.go). It leaves the round, unmasked input
		// unsent.
		return MaskedInput{}, fmt.Errorf("%w: %d of the %d neighbours site %d dealt to sent it no shares, more than w = %d", ErrTooFewSurvivors, missing, len(c.xs)-1, c.id, c.cfg.Withheld)
	}
	slices.Sort(u2)
	c.u2 = u2
	y := make([]uint64, len(x))
	copy(y, x)
	sk, err := selfKey(c.seed, c.cfg.RoundID)
	if err != nil {
		return MaskedInput{}, err
	}
	addMask(y, sk, +1)
	for _, v := range u2 {
		if v == c.id {
			continue
		}
		k, err := agree(c.sKey, c.u1[v].S, c.cfg.RoundID, labelMask)
		if err != nil {
			return MaskedInput{}, err
		}
		addMask(y, k, pairSign(c.id, v))
	}
	m := c.cfg.mask()
	for i := range y {
		y[i] &= m
	}
	c.step = stepCheck
	return MaskedInput{From: c.id, Y: y, Rejected: rejected, Accusations: accusations}, nil
}

func cmpID(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pairSign is +1 when u < v and −1 otherwise: the two masks of a pair cancel.
func pairSign(u, v uint32) int {
	if u < v {
		return +1
	}
	return -1
}

// survivors checks the server's survivor set U3: containing this site
// (else the site just leaves), a subset of U2 (the sites that shared keys
// with this site), without repetitions, of size ≥ t (else, in the active
// variant, ErrInconsistent: an honest server never sends it). It returns
// U3 sorted.
func (c *Client) survivors(req UnmaskRequest) ([]uint32, error) {
	if len(req.Survivors) < c.cfg.Threshold {
		err := fmt.Errorf("%w: %d masked inputs, threshold %d", ErrTooFewSurvivors, len(req.Survivors), c.cfg.Threshold)
		if c.cfg.Active() {
			// An honest server aborts instead of asking.
			err = fmt.Errorf("%w (%w)", ErrInconsistent, err)
		}
		return nil, err
	}
	if !slices.Contains(req.Survivors, c.id) {
		// Not a lie by itself: this site's masked input did not arrive in
		// time (the request is broadcast). It has nothing to sign or
		// reveal, and leaves the round.
		return nil, fmt.Errorf("secagg: site %d: not among the survivors %v (its masked input did not arrive in time): nothing to answer", c.id, req.Survivors)
	}
	bad := func(format string, args ...any) error {
		err := fmt.Errorf("secagg: site %d: "+format, append([]any{c.id}, args...)...)
		if c.cfg.Active() {
			err = fmt.Errorf("%w: %w", ErrInconsistent, err)
		}
		return err
	}
	u3 := map[uint32]bool{}
	for _, v := range req.Survivors {
		if u3[v] {
			return nil, bad("survivor %d listed twice", v)
		}
		// Every survivor this site holds shares of (all of U3 in the
		// complete graph; its neighbours in the sparse one) must be one
		// it masked with: a survivor left out of this site's masks would
		// leave this site's component of survivors smaller than the
		// graph says (graph.go, SparseFloor).
		if _, in := slices.BinarySearch(c.xs, v); in {
			if _, ok := slices.BinarySearch(c.u2, v); !ok {
				return nil, bad("survivor %d never shared its keys with this site (U3 ⊄ U2)", v)
			}
		} else if _, ok := c.u1[v]; !ok {
			return nil, bad("survivor %d never advertised keys (U3 ⊄ U1)", v)
		}
		u3[v] = true
	}
	return slices.Sorted(maps.Keys(u3)), nil
}

// shares returns this site's unmask shares for U3: for every site of
// U2 \ U3 (dropped after sharing) its share of that site's mask key; for
// every site of U3 its share of the self-mask seed. Every site falls in
// exactly one of the two sets, so this site never reveals both secrets of
// one site.
func (c *Client) shares(u3 []uint32) UnmaskShares {
	out := UnmaskShares{From: c.id, KeyOf: map[uint32]Share{}, SeedOf: map[uint32]Share{}, PairOf: map[uint32][]byte{}}
	for _, v := range c.u2 {
		h := c.held[v]
		if slices.Contains(u3, v) {
			out.SeedOf[v] = h.seed
			continue
		}
		out.KeyOf[v] = h.key
		if k, err := agree(c.sKey, c.u1[v].S, c.cfg.RoundID, labelMask); err == nil {
			out.PairOf[v] = k // the same key MaskedInput masked with
		}
	}
	return out
}

// Unmask (honest-but-curious variant only) answers the server's list of
// survivors U3 (checked by survivors) with this site's unmask shares. The
// call is answered at most once per round. In the active variant the
// survivor set goes to ConsistencyCheck instead.
func (c *Client) Unmask(req UnmaskRequest) (UnmaskShares, error) {
	if c.cfg.Active() {
		c.step = stepDone
		return UnmaskShares{}, fmt.Errorf("secagg: site %d: an unmask request without the consistency check: the active variant unmasks only after ConsistencyCheck and UnmaskSigned", c.id)
	}
	if err := c.expect(stepCheck, "unmask"); err != nil {
		return UnmaskShares{}, err
	}
	c.step = stepDone
	u3, err := c.survivors(req)
	if err != nil {
		return UnmaskShares{}, err
	}
	return c.shares(u3), nil
}

// RevealWhenAll sets a secret (32 bytes: a site's removable noise seed,
// dp/ddg_removable.go) that the site sends with its unmask shares if, and
// only if, the survivor set it signed and saw t consistent signatures on
// holds every site of the round: then every site's input is in the one
// sum the server can unmask. It needs the active variant's complete graph
// (in the honest-but-curious variant no signature fixes U3; in the sparse
// one the floor's argument, sparsefloor.go, was made without it) and must
// be called before the site answers the consistency check.
func (c *Client) RevealWhenAll(secret []byte) error {
	switch {
	case !c.cfg.Active() || c.cfg.Degree > 0:
		return fmt.Errorf("secagg: site %d: a secret revealed when every site survives needs the active variant's complete graph", c.id)
	case len(secret) != RevealLen:
		return fmt.Errorf("secagg: site %d: a revealed secret of %d bytes, want %d", c.id, len(secret), RevealLen)
	case c.step > stepCheck:
		return fmt.Errorf("secagg: site %d: a secret to reveal set after the consistency check", c.id)
	}
	c.reveal = bytes.Clone(secret)
	return nil
}

// RevealLen is the length of a secret revealed when every site survives.
const RevealLen = 32

// ConsistencyCheck (active variant, round 3) checks the server's survivor
// set U3 (survivors: a subset of U2, ≥ t, no repetition, else
// ErrInconsistent; this site among them, else it leaves) and returns this site's signature on it. The site
// signs one survivor set per round: a second request is refused.
func (c *Client) ConsistencyCheck(req UnmaskRequest) (ConsistencySig, error) {
	if !c.cfg.Active() {
		return ConsistencySig{}, fmt.Errorf("secagg: site %d: a consistency check in the honest-but-curious variant", c.id)
	}
	if err := c.expect(stepCheck, "consistency check"); err != nil {
		return ConsistencySig{}, err
	}
	c.step = stepDone
	u3, err := c.survivors(req)
	if err != nil {
		return ConsistencySig{}, err
	}
	c.u3 = u3
	c.step = stepUnmask
	return ConsistencySig{From: c.id, Sig: ed25519.Sign(c.sign, checkSigned(c.cfg.RoundID, u3))}, nil
}

// UnmaskSigned (active variant, round 4) answers the server's consistency
// signatures: every one must come from a distinct member of the U3 this
// site signed and verify, under that member's roster key, on that same
// U3 — and there must be at least t of them. Only then does the site
// send its unmask shares (for U3, as in shares). A signature on another
// set means the server showed different survivor sets to different sites
// (equivocation): ErrInconsistent, and nothing is sent. Since every
// honest site signs one set per round and t > K/2, two different sets
// cannot both gather t signatures from honest sites (see doc.go for the
// bound with colluding sites).
func (c *Client) UnmaskSigned(in ConsistencySigs) (UnmaskShares, error) {
	if err := c.expect(stepUnmask, "unmask"); err != nil {
		return UnmaskShares{}, err
	}
	c.step = stepDone
	msg := checkSigned(c.cfg.RoundID, c.u3)
	seen := map[uint32]bool{}
	for _, s := range in.Sigs {
		if !slices.Contains(c.u3, s.From) {
			return UnmaskShares{}, fmt.Errorf("%w: site %d: a consistency signature from site %d, outside the survivors %v", ErrInconsistent, c.id, s.From, c.u3)
		}
		if seen[s.From] {
			return UnmaskShares{}, fmt.Errorf("%w: site %d: two consistency signatures from site %d", ErrInconsistent, c.id, s.From)
		}
		seen[s.From] = true
		if !verifySig(c.cfg.Roster[s.From], msg, s.Sig) {
			return UnmaskShares{}, fmt.Errorf("%w: site %d: site %d's consistency signature is not on the survivor set %v this site received (the server showed different survivor sets, or forged it): round aborted, no unmask share sent", ErrInconsistent, c.id, s.From, c.u3)
		}
	}
	if len(seen) < c.cfg.Threshold {
		return UnmaskShares{}, fmt.Errorf("%w: site %d: %d consistency signatures, threshold %d: no unmask share sent (%w)", ErrInconsistent, c.id, len(seen), c.cfg.Threshold, ErrTooFewSurvivors)
	}
	c.step = stepExpel
	out := c.shares(c.u3)
	if c.reveal != nil && len(c.u3) == len(c.cfg.Sites) {
		// U3 is a subset of the round's sites without repetition
		// (survivors), so every site is in it; t signatures on it mean no
		// other set can be unmasked (doc.go).
		out.Reveal = bytes.Clone(c.reveal)
	}
	return out, nil
}

// Expel (active variant, after UnmaskSigned) answers the server's proofs
// that survivors dealt inconsistent seed shares (commit.go). Every proof
// must be against a distinct member of the U3 this site signed (not this
// site) and verify (CheatProof: the dealer's signed commitments, t shares
// matching them that do not interpolate to its committed seed), and the
// survivors left must still be at least t; otherwise the server lied
// (ErrInconsistent) and nothing is sent. Then, for each proven cheater j,
// this site reveals its pairwise key s_uj and its share of s_j^SK — what
// the server needs to remove y_j's masks from the other survivors' inputs
// and drop y_j from the sum. No proof exists against an honest dealer, so
// this site never reveals a pairwise key with an honest survivor. It
// answers at most once.
func (c *Client) Expel(req ExpelRequest) (UnmaskShares, error) {
	if err := c.expect(stepExpel, "expel"); err != nil {
		return UnmaskShares{}, err
	}
	c.step = stepDone
	if len(req.Proofs) == 0 {
		return UnmaskShares{}, fmt.Errorf("%w: site %d: an expel request without proofs", ErrInconsistent, c.id)
	}
	out := UnmaskShares{From: c.id, KeyOf: map[uint32]Share{}, SeedOf: map[uint32]Share{}, PairOf: map[uint32][]byte{}}
	seen := map[uint32]bool{}
	for _, p := range req.Proofs {
		j := p.Dealer
		if j == c.id || !slices.Contains(c.u3, j) {
			return UnmaskShares{}, fmt.Errorf("%w: site %d: a proof against site %d, not another member of the survivors %v", ErrInconsistent, c.id, j, c.u3)
		}
		if seen[j] {
			return UnmaskShares{}, fmt.Errorf("%w: site %d: two proofs against site %d", ErrInconsistent, c.id, j)
		}
		seen[j] = true
		if err := c.cfg.verifyProof(p); err != nil {
			return UnmaskShares{}, fmt.Errorf("%w: site %d: the proof that site %d cheated does not hold (%v): no pairwise key revealed", ErrInconsistent, c.id, j, err)
		}
		if _, held := c.held[j]; !held {
			continue // sparse: not a neighbour — no share of j, no pairwise key with it
		}
		k, err := agree(c.sKey, c.u1[j].S, c.cfg.RoundID, labelMask)
		if err != nil {
			return UnmaskShares{}, err
		}
		out.KeyOf[j] = c.held[j].key
		out.PairOf[j] = k
	}
	if len(c.u3)-len(req.Proofs) < c.cfg.Threshold {
		return UnmaskShares{}, fmt.Errorf("%w: site %d: expelling %d of %d survivors leaves fewer than t = %d: an honest server aborts", ErrInconsistent, c.id, len(req.Proofs), len(c.u3), c.cfg.Threshold)
	}
	return out, nil
}
