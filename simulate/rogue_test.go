package simulate

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
	"github.com/pairfed/pairfed/secagg/round"
	"github.com/pairfed/pairfed/transport"
	"github.com/pairfed/pairfed/worker"

	"filippo.io/edwards25519"
)

// rogueSite is a site's transport that corrupts its secure aggregation
// messages as mode says: a real worker runs behind it, unaware.
type rogueSite struct {
	transport.Transport
	mode string
	mu   sync.Mutex
	// old are the site's key advertisement and shares from an earlier job
	// (replayed).
	old *earlier
	// fed and sign: the federation and the site's own long-term key, with
	// which a rogue member re-signs the commitment list it altered.
	fed  string
	sign ed25519.PrivateKey
	// ownKey is its advertised encryption key (false-accusation).
	ownKey []byte
	// accusedKey is the falsely accused site's advertised encryption key
	// (false-accusation-proven; set by a keyWatch on its transport).
	accusedKey *keyWatch
}

// seedTap is crypto/rand.Reader in this test binary (installed by init,
// before any goroutine reads it, so no data race): it passes every read
// through and, while armed, keeps the 64-byte reads — the size of a
// secagg encryption-key seed (secagg/dleq.go, newEncKey). A rogue member
// knows its own encryption key; its worker draws the key from
// crypto/rand inside round.NewSite, so the rogue of
// false-accusation-proven recovers it here: the one kept seed whose
// public key c·B is the key its worker advertised (ownSeed). Nothing of
// pairfed's code changes for it.
type seedTap struct {
	r     io.Reader
	mu    sync.Mutex
	armed bool
	seeds [][]byte
}

var tap = &seedTap{r: rand.Reader}

func init() { rand.Reader = tap }

func (s *seedTap) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	if len(b) == 64 && n == 64 {
		s.mu.Lock()
		if s.armed && len(s.seeds) < 1<<12 {
			s.seeds = append(s.seeds, bytes.Clone(b))
		}
		s.mu.Unlock()
	}
	return n, err
}

func (s *seedTap) arm(on bool) {
	s.mu.Lock()
	s.armed, s.seeds = on, nil
	s.mu.Unlock()
}

// ownSeed is the kept seed of the encryption key pub, or nil.
func (s *seedTap) ownSeed(pub []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.seeds {
		c, err := edwards25519.NewScalar().SetUniformBytes(b)
		if err != nil {
			continue
		}
		if bytes.Equal(edwards25519.NewGeneratorPoint().ScalarBaseMult(c).Bytes(), pub) {
			return b
		}
	}
	return nil
}

// keyWatch keeps the encryption key a site advertises.
type keyWatch struct {
	transport.Transport
	mu  sync.Mutex
	key []byte
}

func (k *keyWatch) Publish(subject string, b []byte) error {
	if m, err := protocol.Decode(b); err == nil {
		if a, ok := m.(*protocol.SecAggKeys); ok {
			k.mu.Lock()
			k.key = bytes.Clone(a.C)
			k.mu.Unlock()
		}
	}
	return k.Transport.Publish(subject, b)
}

// falselyAccused is the wire id of the honest site the false-accusation
// rogue accuses (sites[3]).
const falselyAccused = 4

// rogueWireID is the rogue's (sites[1]) wire id.
const rogueWireID = 2

// resign signs m's altered commitment list with the rogue's own key, as
// its dealer id (the one entry of the list no ciphertext is addressed to),
// committing to the ciphertexts m carries (which the rogue may have
// altered: a member signs what it sends).
func (r *rogueSite) resign(m *protocol.SecAggShares) {
	var dealer uint32
	for _, e := range m.Commits.Shares {
		if !slices.ContainsFunc(m.Shares, func(c protocol.SecAggCipher) bool { return c.Peer == e.ID }) {
			dealer = e.ID
		}
	}
	c := &secagg.Commitments{Seed: m.Commits.Seed}
	for i, e := range m.Commits.Shares {
		for _, sh := range m.Shares {
			if sh.Peer == e.ID {
				h := sha256.Sum256(sh.CT)
				m.Commits.Shares[i].CT = h[:]
			}
		}
		c.Shares = append(c.Shares, secagg.ShareCommit{To: e.ID, Key: e.Key, Seed: e.Seed, CT: m.Commits.Shares[i].CT})
	}
	secagg.SignCommitments(round.Params{Federation: r.fed, Job: m.Job, Phase: m.Phase}.RoundID(), dealer, c, r.sign)
	m.Commits.Sig = c.Sig
}

// earlier are a site's secure aggregation messages of an earlier job.
type earlier struct {
	keys   *protocol.SecAggKeys
	shares map[uint32][]byte // ciphertext by recipient
}

func (r *rogueSite) Publish(subject string, b []byte) error {
	m, err := protocol.Decode(b)
	if err != nil {
		return r.Transport.Publish(subject, b)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch m := m.(type) {
	case *protocol.SecAggKeys:
		r.ownKey = m.C
		switch r.mode {
		case "bad-signature":
			m.Sig[0] ^= 1
		case "bad-signature-last":
			// After the honest advertisements (they go out at once): the
			// refused advertisement is the last one the step awaits, so
			// it closes the step — whose key list must still go out.
			time.Sleep(300 * time.Millisecond)
			m.Sig[0] ^= 1
		case "replayed-keys": // the advertisement of an earlier job, relabelled
			old := *r.old.keys
			old.Job, old.Phase = m.Job, m.Phase
			*m = old
		}
	case *protocol.SecAggShares:
		switch r.mode {
		case "inconsistent-seed":
			// Shares (consistent among themselves) of another seed than
			// the one committed to: at unmasking they do not reconstruct
			// the commitment — a proof against the rogue.
			m.Commits.Seed[0] ^= 1
			r.resign(m)
		case "uncommitted-shares":
			// Commitments to other shares than those encrypted to the
			// peers: each peer refuses the rogue's shares.
			for i := range m.Commits.Shares {
				m.Commits.Shares[i].Seed[0] ^= 1
			}
			r.resign(m)
		}
		for i := range m.Shares {
			switch r.mode {
			case "garbage-shares", "garbage-shares-t=K":
				rand.Read(m.Shares[i].CT)
			case "replayed-shares": // its ciphertext to the same peer in an earlier job
				m.Shares[i].CT = r.old.shares[m.Shares[i].Peer]
			}
		}
		switch r.mode {
		case "garbage-shares", "garbage-shares-t=K", "replayed-shares":
			// Signed as sent (else the coordinator excludes it at once):
			// every honest peer refuses the shares with a proof.
			r.resign(m)
		}
	case *protocol.SecAggMasked:
		if r.mode == "false-accusation" {
			// It refuses an honest peer's good shares. Its worker holds
			// its encryption key, this transport does not: the "proof" is
			// a valid point and canonical scalars that do not verify.
			m.Rejected = append(m.Rejected, falselyAccused)
			m.Accuse = append(m.Accuse, protocol.SecAggAccusation{ID: falselyAccused, Key: r.ownKey, Proof: bytes.Repeat([]byte{1}, 64)})
		}
		if r.mode == "false-accusation-proven" {
			// The same lie, proven with the pair's genuine key: the rogue
			// knows its own encryption key (seedTap) and the accused's
			// advertised one. The proof verifies; the accused's signed
			// ciphertext opens to shares that match its commitments — the
			// accusation is false, and the accuser is expelled.
			r.accusedKey.mu.Lock()
			accused := r.accusedKey.key
			r.accusedKey.mu.Unlock()
			seed := tap.ownSeed(r.ownKey)
			if seed == nil || accused == nil {
				return fmt.Errorf("rogue: no encryption key seed (%v) or no key of the accused (%v)", seed != nil, accused != nil)
			}
			a, err := secagg.Accuse(round.Params{Federation: r.fed, Job: m.Job, Phase: m.Phase}.RoundID(), rogueWireID, falselyAccused, seed, accused, rand.Reader)
			if err != nil {
				return err
			}
			m.Rejected = append(m.Rejected, falselyAccused)
			m.Accuse = append(m.Accuse, protocol.SecAggAccusation{ID: a.Dealer, Key: a.Key, Proof: a.Proof})
		}
	case *protocol.SecAggUnmask:
		if strings.HasPrefix(r.mode, "wrong-unmask-share") && len(m.Seeds) > 0 {
			if r.mode == "wrong-unmask-share-last" {
				// After the honest answers: the ignored answer is the last
				// one the step awaits, so it closes the round — whose sum
				// must still be taken.
				time.Sleep(300 * time.Millisecond)
			}
			m.Seeds[0].Y[7] ^= 1 // another field element than the one dealt
		}
	}
	out, err := protocol.Encode(m)
	if err != nil {
		return err
	}
	return r.Transport.Publish(subject, out)
}

// keyRecorder keeps a site's secure aggregation messages.
type keyRecorder struct {
	transport.Transport
	mu  *sync.Mutex
	old *earlier
}

func (r keyRecorder) Publish(subject string, b []byte) error {
	if m, err := protocol.Decode(b); err == nil {
		r.mu.Lock()
		switch m := m.(type) {
		case *protocol.SecAggKeys:
			r.old.keys = m
		case *protocol.SecAggShares:
			for _, c := range m.Shares {
				r.old.shares[c.Peer] = c.CT
			}
		}
		r.mu.Unlock()
	}
	return r.Transport.Publish(subject, b)
}

// Issue 28, "one bad actor must not drain everyone's budget", over real
// NATS (an embedded nats-server, real workers over transport/): one of
// five sites is rogue — its key advertisement's signature is broken, or it
// replays its advertisement from an earlier job, or it sends garbage share
// ciphertexts, or it replays share ciphertexts of other pairs. With
// t = 3 of 5 the round completes without it: the sum is unmasked over the
// four honest sites, the coordinator names the rogue (bad shares: in the
// job's exclusion list with who refused it; bad keys: never in the key
// list), and each honest site's ledger holds exactly one charge, whose
// note names the rogue when the site refused its shares. With t = 5 of 5
// the honest sites cannot complete without it: each stops before its
// masked vector leaves — nothing charged on any honest site — and the
// coordinator, which saw no round reach its unmasking step, reports that
// nothing was released (its reservation is returned, coordinator tests).
//
// Shares that decrypt but are inconsistent (secagg/commit.go), the rogue
// re-signing what it altered with its own key as a member can: it commits
// to another seed than the one its shares are of (inconsistent-seed: the
// honest survivors check the coordinator's proof and reveal their
// pairwise keys with it; the sum is over the four honest sites, the rogue
// named as expelled), it commits to other shares than those it encrypts
// (uncommitted-shares: every peer refuses them, as garbage), or it returns
// a wrong share at unmasking (wrong-unmask-share: its answer is ignored
// and named, its own input stays in the five-site sum). Each honest site
// is charged once (an expulsion adds a ledger note repeating the charge,
// which Spent counts once).
//
// Verifiable accusations (secagg/dleq.go): the garbage and replayed
// shares are signed by the rogue as sent (else the coordinator excludes
// it at once), so each honest peer refuses them with a proof the
// coordinator checks. In false-accusation the rogue refuses an honest
// peer's good shares with a proof that does not verify (this transport
// has no access to its worker's encryption key): its masked vector is
// refused, it leaves the round as a dropout (named in the coordinator's
// exclusion list), and the accused stays in the four-site sum. In false-accusation-proven it tells the same lie with the
// pair's genuine key and a valid Chaum–Pedersen proof (its own encryption
// key recovered from the randomness its worker drew, seedTap): the
// coordinator opens the accused's signed ciphertext, finds it good, and
// expels the accuser — named in the exclusion list as having falsely
// accused sites[3], out of the sum, which holds the four honest sites,
// the accused included; each honest site is charged once. (Inverting or
// skipping the coordinator's verdict in secagg/server.go HandleMasked
// makes this case fail: the accused is excluded and the rogue summed.)
func TestRogueSiteOverNATS(t *testing.T) {
	train, err := data.Load("../datasets/diabetes", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := secAggSpec(2, 3)
	spec.Sites = 5
	sites := preparedSites(t, spec, train)
	connect := natsConnect(t)
	roster, signers, err := SecAggRoster(sites, false, 5)
	if err != nil {
		t.Fatal(err)
	}
	rogue := sites[1].Name
	var keysMu sync.Mutex
	old := &earlier{shares: map[uint32][]byte{}}
	for _, mode := range []string{"honest", "bad-signature", "bad-signature-last", "replayed-keys", "garbage-shares", "replayed-shares", "garbage-shares-t=K",
		"inconsistent-seed", "uncommitted-shares", "wrong-unmask-share", "wrong-unmask-share-last", "false-accusation", "false-accusation-proven"} {
		t.Run(mode, func(t *testing.T) {
			fed := "rogue" + strings.ReplaceAll(strings.ReplaceAll(mode, "-", ""), "=", "")
			job := spec.Job
			job.ID = "job-" + strings.ReplaceAll(mode, "=", "")
			threshold := 3
			if strings.HasSuffix(mode, "t=K") {
				threshold = 5
			}
			job.Options = protocol.OptionsOf(map[string]float64{fedalgo.OptSecAgg: 1, fedalgo.OptSecAggThreshold: float64(threshold), fedalgo.OptSecAggTimeout: 1000})
			coord, err := coordinator.New(coordinator.Config{Federation: fed, Job: job, MinSites: len(sites), SecAggRoster: roster})
			if err != nil {
				t.Fatal(err)
			}
			ct, err := connect("coordinator")
			if err != nil {
				t.Fatal(err)
			}
			defer ct.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			workers := make([]*worker.Worker, len(sites))
			accusedKey := &keyWatch{}
			if mode == "false-accusation-proven" {
				tap.arm(true)
				defer tap.arm(false)
			}
			var wg sync.WaitGroup
			for i, s := range sites {
				cfg := worker.Config{Federation: fed, Site: s.Name, Data: s.Data, SecAggKey: signers[s.Name], SecAggRoster: roster}
				if cfg.Rand, cfg.Noise, err = SiteSources(false, 7, i); err != nil {
					t.Fatal(err)
				}
				if workers[i], err = worker.New(cfg); err != nil {
					t.Fatal(err)
				}
				st, err := connect(s.Name)
				if err != nil {
					t.Fatal(err)
				}
				var wt transport.Transport = st
				switch {
				case i == falselyAccused-1:
					accusedKey.Transport = st
					wt = accusedKey
				case s.Name == rogue && mode == "honest":
					wt = keyRecorder{Transport: st, mu: &keysMu, old: old}
				case s.Name == rogue:
					wt = &rogueSite{Transport: st, mode: mode, old: old, fed: fed, sign: signers[s.Name], accusedKey: accusedKey}
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer st.Close()
					worker.Run(ctx, workers[i], wt, 2*time.Millisecond)
				}()
			}
			res, cerr := coordinator.RunWith(ctx, coord, ct, 2*time.Millisecond, coordinator.RunOptions{})
			cancel()
			wg.Wait()
			excluded, why := coord.Excluded()
			t.Logf("coordinator: result %v, err %v, excluded %v %v", res != nil, cerr, excluded, why)
			for i, w := range workers {
				if sites[i].Name == rogue {
					continue
				}
				for _, r := range w.Ledger() {
					note := ""
					if r.SecAgg != nil {
						note = r.SecAgg.Note
					}
					t.Logf("  honest %s ledger: job %s phase %d ε = %.4g δ = %.3g note %q", sites[i].Name, r.Job, r.Phase, r.Epsilon, r.Delta, note)
				}
			}
			if mode == "garbage-shares-t=K" {
				if res != nil || cerr == nil {
					t.Fatalf("t = K with a rogue site: the round completed: %v", cerr)
				}
				if !coord.NothingReleased() {
					t.Fatal("the coordinator does not report that nothing was released")
				}
				if rel := coord.TakeReleases(); len(rel) != 0 {
					t.Fatalf("aggregated releases %+v", rel)
				}
				for i, w := range workers {
					if sites[i].Name != rogue && len(w.Ledger()) != 0 {
						t.Errorf("honest site %s charged: %+v", sites[i].Name, w.Ledger())
					}
				}
				return
			}
			if cerr != nil || res == nil {
				t.Fatalf("the round did not complete without the rogue site: %v", cerr)
			}
			rels := coord.TakeReleases()
			included := map[string]bool{}
			for _, r := range rels {
				included[r.Site] = true
			}
			// A responder whose unmask shares do not match their dealers'
			// commitments is ignored, but its own input stays in the sum.
			inSum := mode == "honest" || strings.HasPrefix(mode, "wrong-unmask-share")
			wantIncluded := len(sites) - 1
			if inSum {
				wantIncluded = len(sites)
			}
			if len(included) != wantIncluded || (!inSum && included[rogue]) {
				t.Fatalf("the sum holds %v, want %d sites without %s", included, wantIncluded, rogue)
			}
			// A false accusation removes no one but the accuser: the
			// accused honest site is in the sum.
			if strings.HasPrefix(mode, "false-accusation") && !included[sites[falselyAccused-1].Name] {
				t.Fatalf("the falsely accused %s is not in the sum %v", sites[falselyAccused-1].Name, included)
			}
			// Refused shares: named by every honest site (ledger notes).
			bySharesMode := mode == "garbage-shares" || mode == "replayed-shares" || mode == "uncommitted-shares"
			named := bySharesMode || mode == "inconsistent-seed" || strings.HasPrefix(mode, "wrong-unmask-share") || strings.HasPrefix(mode, "false-accusation")
			if named != (len(excluded) == 1 && excluded[0] == rogue) {
				t.Fatalf("excluded %v %v in mode %s", excluded, why, mode)
			}
			if want := map[string]string{"inconsistent-seed": "expelled", "wrong-unmask-share": "ignored", "wrong-unmask-share-last": "ignored", "uncommitted-shares": "refused",
				"false-accusation":        "masked input refused in phase 1's secure aggregation round: its refusal of " + sites[falselyAccused-1].Name + "'s shares carries no valid proof",
				"false-accusation-proven": "expelled from phase 1's secure aggregation round: it falsely accused " + sites[falselyAccused-1].Name}[mode]; want != "" && !strings.Contains(why[0], want) {
				t.Fatalf("mode %s: the coordinator says %q, want %q", mode, why[0], want)
			}
			for i, w := range workers {
				if sites[i].Name == rogue {
					continue
				}
				l := w.Ledger()
				if mode == "inconsistent-seed" {
					// The charge, then a note repeating it: the site revealed
					// its pairwise key with the rogue on the proof.
					if len(l) != 2 || l[1].SecAgg == nil || !strings.Contains(l[1].SecAgg.Note, "expelled") || !strings.Contains(l[1].SecAgg.Note, rogue) {
						t.Fatalf("honest site %s ledger %+v: want the charge and a note naming %s expelled", sites[i].Name, l, rogue)
					}
					if eps, _ := worker.Spent(l); eps != l[0].Epsilon {
						t.Fatalf("honest site %s: Spent ε = %g, its one charge %g", sites[i].Name, eps, l[0].Epsilon)
					}
					l = l[:1]
				}
				if len(l) != 1 || l[0].SecAgg == nil {
					t.Fatalf("honest site %s ledger %+v: want one charge", sites[i].Name, l)
				}
				if named := strings.Contains(l[0].SecAgg.Note, rogue+": "); named != bySharesMode {
					t.Fatalf("honest site %s ledger note %q (mode %s)", sites[i].Name, l[0].SecAgg.Note, mode)
				}
			}
		})
	}
}
