package worker

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/pairfed/pairfed/protocol"
)

// Secure aggregation's long-term keys and the ledger note of a round that
// ended with this site's release masked for good (secagg's active
// variant: Config.SecAggKey, Config.SecAggRoster).

// validSecAggKeys checks the configured key and roster: both or neither,
// the key's public half the roster's entry for this site.
func (c *Config) validSecAggKeys() error {
	switch {
	case c.SecAggKey == nil && c.SecAggRoster == nil:
		return nil
	case len(c.SecAggKey) != ed25519.PrivateKeySize:
		return fmt.Errorf("worker: site %s: the secure aggregation signing key has %d bytes, want an Ed25519 key of %d (pairfed deploy init issues it; --secagg-key)", c.Site, len(c.SecAggKey), ed25519.PrivateKeySize)
	case c.SecAggRoster == nil:
		return fmt.Errorf("worker: site %s: a secure aggregation signing key without the roster of the sites' public keys (--secagg-roster)", c.Site)
	}
	for name, pk := range c.SecAggRoster {
		if err := protocol.ValidName("site", name); err != nil {
			return fmt.Errorf("worker: secure aggregation roster: %w", err)
		}
		if len(pk) != ed25519.PublicKeySize {
			return fmt.Errorf("worker: secure aggregation roster: site %s's key has %d bytes, want %d", name, len(pk), ed25519.PublicKeySize)
		}
	}
	if !bytes.Equal(c.SecAggRoster[c.Site], c.SecAggKey.Public().(ed25519.PublicKey)) {
		return fmt.Errorf("worker: site %s: the secure aggregation roster does not list this site's signing key under its name (a roster or key of another deployment?)", c.Site)
	}
	return nil
}

// secKeysFor refuses, before accepting, a job with secure aggregation
// that this site cannot run: no signing key, or a participant the roster
// does not know (nothing is charged or sent).
func (w *Worker) secKeysFor(m *protocol.JobAnnounce) error {
	if w.sec == nil {
		return nil
	}
	if w.cfg.SecAggKey == nil {
		return fmt.Errorf("job %s asks for secure aggregation, and this site has no signing key: secure aggregation signs each round against a lying coordinator (start the site with --secagg-key and --secagg-roster, issued by pairfed deploy init)", m.Job)
	}
	var missing []string
	for _, s := range m.Sites {
		if _, ok := w.cfg.SecAggRoster[s]; !ok {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("job %s: the secure aggregation roster has no key for participants %v: their signatures could not be checked (update --secagg-roster)", m.Job, missing)
	}
	return nil
}

// secNote records in the ledger that phase's round was aborted by this
// site — it detected a lying coordinator (secagg.ErrInconsistent) — before
// any unmask share left it (masked: after its masked vector did), so its
// input was never unmasked: an entry repeating the phase's charge (which
// stays: the masked vector may have left, the ledger never under-counts,
// and a repeated entry of the same job adds nothing to Spent) with
// SecAgg.Note saying why.
func (w *Worker) secNote(phase int, masked bool, why error) {
	what := "round aborted before any unmask share was sent (the masked vector stays masked; the charge above stays)"
	if !masked {
		what = "round aborted before the masked vector was sent (nothing released; the charge above stays)"
	}
	w.secAppendNote(phase, fmt.Sprintf("%s: %v", what, why))
}

// secAppendNote appends to the ledger an entry repeating phase's charge
// (a repeated entry of the same job adds nothing to Spent) with
// SecAgg.Note = note.
func (w *Worker) secAppendNote(phase int, note string) {
	for i := len(w.ledger) - 1; i >= 0; i-- {
		r := w.ledger[i]
		if r.Job != w.job.Job || r.Phase != phase || r.SecAgg == nil {
			continue
		}
		sa := *r.SecAgg
		sa.Note = truncate(note, 1000)
		r.SecAgg, r.Time = &sa, time.Time{}
		w.ledger = append(w.ledger, r)
		if w.cfg.Store != nil {
			if err := w.cfg.Store.Append(r); err != nil {
				w.logf("phase %d: writing the ledger note failed (the charge is recorded): %v", phase, err)
			}
		}
		return
	}
}
