package secagg

import (
	"crypto/ed25519"
	"errors"
	"io"
)

// Drop points for RunInMemory: a site stops answering before the given step.
const (
	NeverDrops = -1
	DropAdvert = 0 // never advertises keys
	DropShares = 1 // advertises, never shares
	DropMasked = 2 // shares, never sends its masked input
	DropUnmask = 3 // sends its masked input, never signs U3 nor helps unmask
	// DropAfterCheck (active variant): signs U3, never sends its unmask
	// shares. In the honest-but-curious variant it never drops.
	DropAfterCheck = 4
	NumDropSteps   = 5
)

// Transcript is everything the server received, in order.
type Transcript struct {
	Adverts []AdvertiseKeys
	Shares  []ShareKeys
	Masked  []MaskedInput
	Checks  []ConsistencySig
	Unmask  []UnmaskShares
	Expel   []UnmaskShares // answers to an ExpelRequest, if any
}

// RunInMemory drives a full round over an in-memory, synchronous network:
// K clients and the server in this process, each site answering until its
// drop point (dropAt[id], NeverDrops or absent: never), and returns the
// server's result and everything the server received. It is for
// simulations, tests and benchmarks; deployments run Client and Server in
// the worker's and coordinator's run loops.
//
// The active variant (the default) needs every site's signing key: when
// cfg.Roster is nil RunInMemory draws them from rnd (NewSigners), as a
// simulation whose sites all run in this process does; RunInMemorySigned
// takes given keys.
func RunInMemory(cfg Config, inputs map[uint32][]uint64, dropAt map[uint32]int, rnd io.Reader) (Result, *Transcript, error) {
	var signers map[uint32]ed25519.PrivateKey
	if cfg.Active() && cfg.Roster == nil {
		var err error
		if cfg.Roster, signers, err = NewSigners(cfg.Sites, rnd); err != nil {
			return Result{}, &Transcript{}, err
		}
	}
	return RunInMemorySigned(cfg, signers, inputs, dropAt, rnd)
}

// RunInMemorySigned is RunInMemory with the sites' signing keys (nil in
// the honest-but-curious variant).
func RunInMemorySigned(cfg Config, signers map[uint32]ed25519.PrivateKey, inputs map[uint32][]uint64, dropAt map[uint32]int, rnd io.Reader) (Result, *Transcript, error) {
	tr := &Transcript{}
	srv, err := NewServer(cfg)
	if err != nil {
		return Result{}, tr, err
	}
	clients := map[uint32]*Client{}
	alive := func(id uint32, step int) bool {
		d, ok := dropAt[id]
		return !ok || d == NeverDrops || d > step
	}
	for _, id := range cfg.Sites {
		c, err := NewClient(cfg, id, signers[id], rnd)
		if err != nil {
			return Result{}, tr, err
		}
		clients[id] = c
		if !alive(id, 0) {
			continue
		}
		m, err := c.Advertise()
		if err != nil {
			return Result{}, tr, err
		}
		tr.Adverts = append(tr.Adverts, m)
		if err := srv.HandleAdvertise(m); err != nil {
			return Result{}, tr, err
		}
	}
	list, err := srv.EndAdvertise()
	if err != nil {
		return Result{}, tr, err
	}
	for _, k := range list.Keys {
		if !alive(k.From, 1) {
			continue
		}
		m, err := clients[k.From].ShareKeys(list)
		if err != nil {
			if cfg.Sparse() && errors.Is(err, ErrTooFewSurvivors) {
				continue // too few neighbours in U1 to share its secrets: it leaves
			}
			return Result{}, tr, err
		}
		tr.Shares = append(tr.Shares, m)
		if err := srv.HandleShares(m); err != nil {
			return Result{}, tr, err
		}
	}
	fwd, err := srv.EndShares()
	if err != nil {
		return Result{}, tr, err
	}
	for _, id := range sortedKeys(fwd) {
		if !alive(id, 2) {
			continue
		}
		m, err := clients[id].MaskedInput(fwd[id], inputs[id])
		if err != nil {
			if cfg.Sparse() && errors.Is(err, ErrTooFewSurvivors) {
				continue // fewer than ℓ neighbours shared with it: it leaves
			}
			return Result{}, tr, err
		}
		tr.Masked = append(tr.Masked, m)
		if err := srv.HandleMasked(m); err != nil {
			return Result{}, tr, err
		}
	}
	req, err := srv.EndMasked()
	if err != nil {
		return Result{}, tr, err
	}
	unmask := func(id uint32) (UnmaskShares, error) { return clients[id].Unmask(req) }
	asked := req.Survivors
	if cfg.Active() {
		for _, id := range req.Survivors {
			if !alive(id, DropUnmask) {
				continue
			}
			m, err := clients[id].ConsistencyCheck(req)
			if err != nil {
				return Result{}, tr, err
			}
			tr.Checks = append(tr.Checks, m)
			if err := srv.HandleCheck(m); err != nil {
				return Result{}, tr, err
			}
		}
		sigs, err := srv.EndCheck()
		if err != nil {
			return Result{}, tr, err
		}
		asked = nil
		for _, s := range sigs.Sigs {
			if alive(s.From, DropAfterCheck) {
				asked = append(asked, s.From)
			}
		}
		unmask = func(id uint32) (UnmaskShares, error) { return clients[id].UnmaskSigned(sigs) }
	}
	for _, id := range asked {
		if !alive(id, DropUnmask) {
			continue
		}
		m, err := unmask(id)
		if err != nil {
			return Result{}, tr, err
		}
		tr.Unmask = append(tr.Unmask, m)
		if err := srv.HandleUnmask(m); err != nil {
			return Result{}, tr, err
		}
	}
	res, err := srv.EndUnmask()
	if err != nil || res.Expel == nil {
		return res, tr, err
	}
	// Survivors proven to have dealt inconsistent seed shares: the sites
	// that answered the unmasking check the proofs and reveal their
	// pairwise keys with the cheaters (a site dropping at DropAfterCheck
	// or earlier does not answer).
	for _, id := range srv.ExpelAsked() {
		if !alive(id, DropAfterCheck) {
			continue
		}
		m, err := clients[id].Expel(*res.Expel)
		if err != nil {
			return Result{}, tr, err
		}
		tr.Expel = append(tr.Expel, m)
		if err := srv.HandleExpel(m); err != nil {
			return Result{}, tr, err
		}
	}
	res, err = srv.EndExpel()
	return res, tr, err
}
