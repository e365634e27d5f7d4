package secagg

import (
	"bytes"
	"crypto/ecdh"
	"fmt"
	"io"
	"slices"
)

// Client is one site's side of a round (Bonawitz et al., "Practical Secure
// Aggregation for Privacy-Preserving Machine Learning", CCS 2017, Fig. 4,
// honest-but-curious variant: rounds 0 AdvertiseKeys, 1 ShareKeys,
// 2 MaskedInputCollection, 4 Unmasking; round 3 ConsistencyCheck and the
// signatures are for a malicious server and are out of scope, see
// deploy/README.md). It is a pure state machine: each method takes the
// server's message and returns the site's answer; a method called out of
// order, or a second time, is an error and releases nothing.
type Client struct {
	cfg  Config
	id   uint32
	rnd  io.Reader
	step int // next expected call: 0 Advertise, 1 ShareKeys, 2 MaskedInput, 3 Unmask, 4 done

	cKey, sKey *ecdh.PrivateKey
	seed       []byte // b_u

	u1   map[uint32]AdvertiseKeys // advertised keys (from the server's list)
	u2   []uint32                 // senders of the shares we received, with us
	held map[uint32]heldShare     // shares other sites gave us
	enc  map[uint32][]byte        // share-encryption keys, by peer
}

type heldShare struct{ key, seed Share }

// NewClient returns the state machine of site id for the round cfg. rnd is
// the source of every secret (crypto/rand.Reader in production).
func NewClient(cfg Config, id uint32, rnd io.Reader) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.invited(id) {
		return nil, fmt.Errorf("secagg: site %d is not among the round's sites %v", id, cfg.Sites)
	}
	return &Client{cfg: cfg, id: id, rnd: rnd}, nil
}

func (c *Client) expect(step int, what string) error {
	if c.step != step {
		return fmt.Errorf("secagg: site %d: %s out of order (step %d, want %d)", c.id, what, c.step, step)
	}
	return nil
}

// Advertise draws the site's fresh key pairs and returns its public keys.
func (c *Client) Advertise() (AdvertiseKeys, error) {
	if err := c.expect(0, "advertise"); err != nil {
		return AdvertiseKeys{}, err
	}
	var err error
	if c.cKey, err = newKeyPair(c.rnd); err != nil {
		return AdvertiseKeys{}, err
	}
	if c.sKey, err = newKeyPair(c.rnd); err != nil {
		return AdvertiseKeys{}, err
	}
	c.step = 1
	return AdvertiseKeys{From: c.id, C: c.cKey.PublicKey().Bytes(), S: c.sKey.PublicKey().Bytes()}, nil
}

// ShareKeys checks the key list U1 (≥ t invited sites, distinct ids and
// keys, our own keys unchanged), draws the self-mask seed b_u, shares s_u^SK
// and b_u t-of-|U1| and encrypts each other member's shares to it.
func (c *Client) ShareKeys(list KeyList) (ShareKeys, error) {
	if err := c.expect(1, "share keys"); err != nil {
		return ShareKeys{}, err
	}
	c.step = 4 // any failure below ends this client's round
	if len(list.Keys) < c.cfg.Threshold {
		return ShareKeys{}, fmt.Errorf("%w: %d keys advertised, threshold %d", ErrTooFewSurvivors, len(list.Keys), c.cfg.Threshold)
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
		if seenKey[string(k.C)] || seenKey[string(k.S)] || bytes.Equal(k.C, k.S) {
			return ShareKeys{}, fmt.Errorf("secagg: site %d: key list repeats a public key (site %d)", c.id, k.From)
		}
		seenKey[string(k.C)], seenKey[string(k.S)] = true, true
		c.u1[k.From] = k
		xs = append(xs, k.From)
	}
	mine, ok := c.u1[c.id]
	if !ok || !bytes.Equal(mine.C, c.cKey.PublicKey().Bytes()) || !bytes.Equal(mine.S, c.sKey.PublicKey().Bytes()) {
		return ShareKeys{}, fmt.Errorf("secagg: site %d: key list omits or alters this site's keys", c.id)
	}
	c.seed = make([]byte, secretLen)
	if _, err := io.ReadFull(c.rnd, c.seed); err != nil {
		return ShareKeys{}, fmt.Errorf("secagg: randomness: %w", err)
	}
	keyShares, err := shamirSplit(c.sKey.Bytes(), xs, c.cfg.Threshold, c.rnd)
	if err != nil {
		return ShareKeys{}, err
	}
	seedShares, err := shamirSplit(c.seed, xs, c.cfg.Threshold, c.rnd)
	if err != nil {
		return ShareKeys{}, err
	}
	out := ShareKeys{From: c.id}
	c.held = map[uint32]heldShare{}
	c.enc = map[uint32][]byte{}
	for i, v := range xs {
		if v == c.id {
			c.held[c.id] = heldShare{keyShares[i], seedShares[i]}
			continue
		}
		key, err := agree(c.cKey, c.u1[v].C, c.cfg.RoundID, labelEnc)
		if err != nil {
			return ShareKeys{}, err
		}
		c.enc[v] = key
		pt := append(append([]byte{}, keyShares[i].Y...), seedShares[i].Y...)
		ct, err := seal(key, c.cfg.RoundID, c.id, v, pt, c.rnd)
		if err != nil {
			return ShareKeys{}, err
		}
		out.Shares = append(out.Shares, EncryptedShare{From: c.id, To: v, CT: ct})
	}
	c.step = 2
	return out, nil
}

// MaskedInput decrypts the shares the server forwarded (their senders and
// this site form U2; ≥ t), and returns x masked by the self mask and the
// pairwise masks with every other member of U2, modulo 2^b. x is not
// modified; its entries are reduced mod 2^b first.
func (c *Client) MaskedInput(in SharesFor, x []uint64) (MaskedInput, error) {
	if err := c.expect(2, "masked input"); err != nil {
		return MaskedInput{}, err
	}
	if len(x) != c.cfg.Dim {
		return MaskedInput{}, fmt.Errorf("secagg: site %d: input has %d entries, the round's dimension is %d", c.id, len(x), c.cfg.Dim)
	}
	c.step = 4
	if in.To != c.id {
		return MaskedInput{}, fmt.Errorf("secagg: site %d: received shares addressed to site %d", c.id, in.To)
	}
	u2 := []uint32{c.id}
	for _, e := range in.Shares {
		key, ok := c.enc[e.From]
		if !ok || e.From == c.id || e.To != c.id {
			return MaskedInput{}, fmt.Errorf("secagg: site %d: unexpected share %d → %d", c.id, e.From, e.To)
		}
		if _, dup := c.held[e.From]; dup {
			return MaskedInput{}, fmt.Errorf("secagg: site %d: two shares from site %d", c.id, e.From)
		}
		pt, err := open(key, c.cfg.RoundID, e.From, c.id, e.CT)
		if err != nil {
			return MaskedInput{}, err
		}
		if len(pt) != 2*shareLen {
			return MaskedInput{}, fmt.Errorf("secagg: site %d: share from site %d has %d bytes", c.id, e.From, len(pt))
		}
		c.held[e.From] = heldShare{Share{c.id, pt[:shareLen]}, Share{c.id, pt[shareLen:]}}
		u2 = append(u2, e.From)
	}
	if len(u2) < c.cfg.Threshold {
		return MaskedInput{}, fmt.Errorf("%w: %d sites shared keys, threshold %d", ErrTooFewSurvivors, len(u2), c.cfg.Threshold)
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
	c.step = 3
	return MaskedInput{From: c.id, Y: y}, nil
}

// pairSign is +1 when u < v and −1 otherwise: the two masks of a pair cancel.
func pairSign(u, v uint32) int {
	if u < v {
		return +1
	}
	return -1
}

// Unmask answers the server's list of survivors U3: it must be a subset of
// U2 containing this site, of size ≥ t. For every site of U2 \ U3 (dropped
// after sharing) it reveals its share of that site's mask key; for every
// site of U3 its share of the self-mask seed. Every site falls in exactly
// one of the two sets, so no site ever has both of its secrets revealed by
// this site; and the call is answered at most once per round.
func (c *Client) Unmask(req UnmaskRequest) (UnmaskShares, error) {
	if err := c.expect(3, "unmask"); err != nil {
		return UnmaskShares{}, err
	}
	c.step = 4
	if len(req.Survivors) < c.cfg.Threshold {
		return UnmaskShares{}, fmt.Errorf("%w: %d masked inputs, threshold %d", ErrTooFewSurvivors, len(req.Survivors), c.cfg.Threshold)
	}
	u3 := map[uint32]bool{}
	for _, v := range req.Survivors {
		if u3[v] {
			return UnmaskShares{}, fmt.Errorf("secagg: site %d: survivor %d listed twice", c.id, v)
		}
		if !slices.Contains(c.u2, v) {
			return UnmaskShares{}, fmt.Errorf("secagg: site %d: survivor %d never shared its keys with this site", c.id, v)
		}
		u3[v] = true
	}
	if !u3[c.id] {
		return UnmaskShares{}, fmt.Errorf("secagg: site %d: survivor list omits this site", c.id)
	}
	out := UnmaskShares{From: c.id, KeyOf: map[uint32]Share{}, SeedOf: map[uint32]Share{}}
	for _, v := range c.u2 {
		h := c.held[v]
		if u3[v] {
			out.SeedOf[v] = h.seed
		} else {
			out.KeyOf[v] = h.key
		}
	}
	return out, nil
}
