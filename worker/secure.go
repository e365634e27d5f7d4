package worker

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
	"github.com/pairfed/pairfed/secagg/round"
)

// Secure aggregation at a site (fedalgo/secure.go states the mechanism
// and its guarantee). For a job with secure aggregation a phase is: the
// algorithm's vector (fedalgo.SumSite), encoded with the job's
// distributed discrete Gaussian and this site's noise (dp.DDG.Encode: a
// private run's noise is dp.NewSecureNoise), the guarantee checked and
// charged (round.ChargeFloors at the floor of honest shares: t − κ, or
// the sparse variant's, BEFORE anything leaves),
// then the round (round.NewSite) answered message by message
// (Site.Deliver). A round this site leaves or that aborts releases
// nothing more: its masked vector alone reveals nothing, and the
// coordinator unmasks only a sum of at least t sites.

// secSetup prepares a job's secure aggregation (nil when it has none).
// Zero trust in the coordinator: fedalgo.SiteSecAgg recomputes what the
// site can (its vector's sensitivity Δ and dimension, δ_f, the rotation)
// and checks the announcement against it; the guarantee of the whole job
// is then computed here from the announced s, γ, c, t, κ with the site's
// own Δ, δ_f and dimension (round.Charge), and a job whose guarantee
// exceeds its ε is refused at the announcement — nothing charged, nothing
// sent but the refusal.
func (w *Worker) secSetup(m *protocol.JobAnnounce, site fedalgo.Site, records int) error {
	sec, dim, err := fedalgo.SiteSecAgg(m, records)
	if err != nil || sec == nil {
		return err
	}
	if _, ok := site.(fedalgo.SumSite); !ok {
		return fmt.Errorf("job %s asks for secure aggregation, but %s releases no sum", m.Job, m.Algo)
	}
	if _, ok := dp.IntegerNoiseOf(w.cfg.Noise); !ok {
		return fmt.Errorf("job %s needs integer noise for the distributed discrete Gaussian; this site's noise source has none (use dp.NewSecureNoise)", m.Job)
	}
	a, err := fedalgo.Lookup(m.Algo)
	if err != nil {
		return err
	}
	// The floors of honest shares: t and t − κ, or the sparse variant's
	// (fedalgo.SecAgg.Floors: computed here from the job's public K, t,
	// κ and degree, not received), once per job.
	fl, err := sec.Floors(len(m.Sites))
	if err != nil {
		return err
	}
	if _, _, err := secGuarantee(m, a, sec, fl, dim, m.Phases); err != nil {
		return err
	}
	w.sec, w.secDim, w.secFloors = sec, dim, fl
	return nil
}

// secGuarantee is the guarantee of the releases of job's first phase
// phases (fedalgo.SumReleases) under the site-checked parameters sec for
// vectors of length dim, refused when the whole job's exceeds the job's ε.
func secGuarantee(j *protocol.JobAnnounce, a fedalgo.Algorithm, sec *fedalgo.SecAgg, fl fedalgo.Floors, dim, phase int) (*dp.DDG, round.Guarantee, error) {
	g, err := sec.DDG(dim, len(j.Sites), fl.Copies)
	if err != nil {
		return nil, round.Guarantee{}, fmt.Errorf("job %s: the announced DDG (%s = %v, %s = %v, %s = %v) with this site's Δ = %v and dimension %d: %w", j.Job, "secagg-scale", sec.Scale, "secagg-gamma", sec.Gamma, "secagg-clip", sec.Clip, sec.Sens, dim, err)
	}
	floor, coll := fl.Floor, fl.Collusion
	all, err := fedalgo.SumRoundWeights(a, j.Phases, j.Phases)
	if err != nil {
		return nil, round.Guarantee{}, err
	}
	total, err := round.ChargeFloors(g, all, sec.Threshold, sec.Colluders, floor, coll, fl.Keep, j.Delta-sec.Fail)
	if err != nil {
		return nil, round.Guarantee{}, err
	}
	if !(total.Collusion <= j.Epsilon*(1+1e-9)) {
		return nil, round.Guarantee{}, fmt.Errorf("job %s: the announced DDG (%s = %v, %s = %v, %s = %v, threshold %d, %d colluders, %s = %d, %s = %v: %d noise copies per site, a floor of %d honest copies) gives ε = %g with this site's own Δ = %v, δ_f = %v and dimension %d, more than the job's ε = %g: refusing to release (the per-copy scale s must be larger, or γ)",
			j.Job, "secagg-scale", sec.Scale, "secagg-gamma", sec.Gamma, "secagg-clip", sec.Clip, total.Threshold, total.Colluders, fedalgo.OptSecAggDegree, sec.Degree, fedalgo.OptSecAggKeepAll, sec.KeepAll, fl.Copies, coll, total.Collusion, sec.Sens, sec.Fail, dim, j.Epsilon)
	}
	if phase == j.Phases {
		return g, total, nil
	}
	upto, err := fedalgo.SumRoundWeights(a, j.Phases, phase)
	if err != nil {
		return nil, round.Guarantee{}, err
	}
	gu, err := round.ChargeFloors(g, upto, sec.Threshold, sec.Colluders, floor, coll, fl.Keep, j.Delta-sec.Fail)
	return g, gu, err
}

// secPhase starts this site's secure aggregation round of phase m.Phase.
func (w *Worker) secPhase(ctx context.Context, m *protocol.PhaseStart) []Output {
	j := w.job
	if w.secStarted[m.Phase] {
		// Released at most once: a repeated phase start (catch-up) gets no
		// second encoding of the same records.
		return nil
	}
	fail := func(err error) []Output {
		w.err = fmt.Errorf("worker %s: phase %d: %w", w.cfg.Site, m.Phase, err)
		w.logf("phase %d failed, nothing released: %v", m.Phase, err)
		return []Output{w.toCoord(&protocol.Abort{Job: j.Job, From: w.cfg.Site, Reason: truncate(err.Error(), protocol.MaxReasonLen)})}
	}
	vec, records, err := w.site.(fedalgo.SumSite).SumVector(ctx, m.Phase, m.Model)
	if err != nil {
		if ctx.Err() != nil {
			w.logf("phase %d of job %s abandoned: %v", m.Phase, j.Job, ctx.Err())
			return nil
		}
		return fail(err)
	}
	if len(vec) != w.secDim {
		return fail(fmt.Errorf("%s's vector has %d values, the job's shape %d", j.Algo, len(vec), w.secDim))
	}
	// The guarantee this site gets, computed here with its own Δ, δ_f and
	// dimension (secSetup checked them; the coordinator's calibration is
	// not trusted): at least t shares are in any unmasked sum, κ of them
	// possibly known to a colluding coordinator; the DDG is certified at
	// δ − δ_f (the part of δ the algorithm's sensitivity bound spends,
	// fedalgo.SumFailure). The whole job's guarantee must not exceed the
	// job's ε (else nothing is released); the ledger charges the guarantee
	// of the releases this site's records have taken part in up to and
	// including this one (fedalgo.SumReleases: sequential or parallel
	// phases) — what it gets if the job stops here, the job's certified ε
	// after the last phase.
	a, err := fedalgo.Lookup(j.Algo)
	if err != nil {
		return fail(err)
	}
	g, gu, err := secGuarantee(j, a, w.sec, w.secFloors, len(vec), m.Phase)
	if err != nil {
		return fail(err)
	}
	// The phase's weight (fedalgo.SumWeighted: the algorithm's code, not
	// the coordinator's word): the vector is multiplied by it before
	// encoding, the sensitivity secGuarantee charged for.
	wt, err := fedalgo.SumWeight(a, j.Phases, m.Phase)
	if err != nil {
		return fail(err)
	}
	vec = fedalgo.WeightVector(vec, wt)
	enc := make([]uint64, g.D)
	in, _ := dp.IntegerNoiseOf(w.cfg.Noise) // checked by secSetup
	// Removable copies (dp/ddg_removable.go): Keep of the Copies draws
	// come from this site's source, the rest from a fresh seed that the
	// round reveals only if every participant is in the signed survivor
	// set (secagg.Client.RevealWhenAll). The split is this site's own
	// (fedalgo.SecAgg.Floors from the job's K, t, κ), and so is the
	// guarantee it was charged at: (t − κ)·m copies in either case.
	fl := w.secFloors
	var seed dp.RemovableSeed
	if fl.Removable() > 0 {
		seed = dp.NewRemovableSeed(in)
		err = g.EncodeRemovable(enc, vec, in, fl.Removable(), dp.RemovableNoise(seed))
	} else {
		err = g.Encode(enc, vec, in)
	}
	if err != nil {
		return fail(err)
	}
	// Charge before release, and only for a round that can still
	// complete: the masked vector — the only message derived from the
	// records — leaves in the third message of the round, after key
	// agreement and share distribution succeeded; the entry is written
	// (durably) just before it (onSecAgg). The keys and shares sent
	// before are fresh randomness, independent of the records, so a round
	// that aborts earlier (a rogue peer's bad keys or shares, a timeout)
	// releases nothing and charges nothing.
	rel := Release{Job: j.Job, Phase: m.Phase, Records: records, Mechanism: fedalgo.MechanismDDG, Sigma: w.sec.SiteSigma(fl.Copies) / wt,
		Sensitivity: w.sec.Sens, Epsilon: gu.Collusion, Delta: j.Delta, Secure: w.cfg.Noise.Secure(),
		SecAgg: &SecAggCharge{Threshold: gu.Threshold, Colluders: gu.Colluders, Coordinator: gu.Coordinator, Collusion: gu.Collusion, Local: finiteEpsilon(gu.Local)}}
	if fl.Removable() > 0 {
		rel.SecAgg.Copies, rel.SecAgg.Keep = fl.Copies, fl.Keep
		rel.SecAgg.Floor, rel.SecAgg.CollusionFloor = gu.Floor, gu.CollusionFloor
	}
	if w.sec.Degree > 0 {
		rel.SecAgg.Degree, rel.SecAgg.Floor, rel.SecAgg.CollusionFloor = w.sec.Degree, gu.Floor, gu.CollusionFloor
	}
	w.secPending = &rel
	w.secStarted[m.Phase] = true
	p := round.Params{Federation: w.cfg.Federation, Job: j.Job, Phase: m.Phase, Sites: j.Sites, Threshold: w.sec.Threshold, Degree: w.sec.Degree, Local: fl.Local, Withheld: fl.Withheld, Bits: g.Bits, Dim: g.D, Roster: w.cfg.SecAggRoster}
	site, keys, err := round.NewSite(p, w.cfg.Site, w.cfg.SecAggKey, enc, crand.Reader)
	if err != nil {
		return fail(err)
	}
	if fl.Removable() > 0 {
		if err := site.RevealWhenAll(seed[:]); err != nil {
			return fail(err)
		}
	}
	w.round = site
	return []Output{w.toCoord(keys)}
}

// finiteEpsilon is ε as a ledger can store it: math.MaxFloat64 stands for
// an ε that dp.DDG.Epsilon reports as +Inf (above 100), which JSON cannot
// encode.
func finiteEpsilon(e float64) float64 {
	if math.IsInf(e, 1) || math.IsNaN(e) {
		return math.MaxFloat64
	}
	return e
}

// onSecAgg answers a coordinator message of the running round.
func (w *Worker) onSecAgg(m protocol.Message) []Output {
	if w.round == nil {
		return nil
	}
	reply, err := w.round.Deliver(m)
	if err != nil {
		// This site's round ends: nothing more is sent (the masked vector,
		// if sent, stays masked); the coordinator goes on without it or
		// aborts — unless the coordinator lied (below).
		w.logf("secure aggregation round left: %v", err)
		site := w.round
		w.round = nil
		if !errors.Is(err, secagg.ErrInconsistent) || w.err != nil {
			return nil
		}
		// The coordinator lied (forged or replayed keys, a survivor set
		// outside U2, equivocation): the round is aborted here, before any
		// unmask share left; the job cannot go on with this coordinator.
		w.secNote(site.Phase(), site.MaskedSent(), err)
		w.err = fmt.Errorf("worker %s: job %s phase %d: %w", w.cfg.Site, w.job.Job, site.Phase(), err)
		return []Output{w.toCoord(&protocol.Abort{Job: w.job.Job, From: w.cfg.Site, Reason: truncate("secure aggregation: "+err.Error(), protocol.MaxReasonLen)})}
	}
	if reply == nil {
		return nil
	}
	if _, ok := reply.(*protocol.SecAggMasked); ok && w.secPending != nil {
		// The masked vector is about to leave: charge first (secPhase).
		rel := *w.secPending
		w.secPending = nil
		if rej := w.round.Rejected(); len(rej) > 0 {
			// Peers this site refused (their shares did not authenticate)
			// are dropped from the round; the entry names them.
			sa := *rel.SecAgg
			sa.Note = truncate("peers excluded from this round, their share ciphertexts refused: "+strings.Join(rej, "; "), 1000)
			rel.SecAgg = &sa
			w.logf("phase %d: %s", rel.Phase, sa.Note)
		}
		w.ledger = append(w.ledger, rel)
		if w.cfg.Store != nil {
			if err := w.cfg.Store.Append(rel); err != nil {
				// The masked vector stays here; the site leaves and the
				// round goes on without it down to its threshold (a full
				// disk costs this site, not the job). Nothing released.
				w.round = nil
				w.err = fmt.Errorf("worker %s: phase %d: ledger: %w", w.cfg.Site, rel.Phase, err)
				w.logf("phase %d not released: ledger write failed: %v; leaving the job", rel.Phase, err)
				return []Output{w.toCoord(&protocol.Leave{Site: w.cfg.Site, Reason: "site ledger write failed", Instance: w.cfg.Instance})}
			}
		}
	}
	if _, ok := m.(*protocol.SecAggExpel); ok {
		// Proofs this site checked itself: the survivors named dealt seed
		// shares inconsistent with their signed commitments, and their
		// inputs leave the sum (secagg/commit.go). The site's last
		// message of the round. (After its unmask answer the round is
		// kept for this step; the next phase's round replaces it.)
		note := fmt.Sprintf("peers expelled from this round, proven (their signed commitments checked here) to have dealt seed shares inconsistent with them: %s; this site revealed its pairwise keys with them only, and their inputs are out of the sum", strings.Join(w.round.Expelled(), ", "))
		w.logf("phase %d: %s", w.round.Phase(), note)
		w.secAppendNote(w.round.Phase(), note)
		w.round = nil
	}
	return []Output{w.toCoord(reply)}
}
