package dpalgo

import (
	"fmt"
	"math"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// The site math and the coordinator's solver of fed-dp-pair-sgd for the
// AUC task (fedalgo/fedpairsgd.go): noisy pairwise gradient descent whose
// every release is a SUM OVER RECORDS of per-record clipped terms, so that
// the federated sum equals the pooled one whatever the partition — a site
// holding one class is no handicap — and secure aggregation makes its
// noise one central release's.
//
// # Why previous-instance pairs fail under label skew, and the partner
//
// A site can pair only its own records; a site holding one class has no
// pair with a gradient. fed-dp-pair-sgd therefore pairs every record with
// a PUBLIC partner of the opposite class: a virtual instance whose score
// is the broadcast threshold −b. For the linear scorer w, the pair loss of
// a positive record x against it is ℓ(wᵀx + b) and of a negative record
// ℓ(−wᵀx − b), ℓ(z) = log(1 + e^{−z}) the logistic pair loss, and the
// job minimizes their class-balanced mean (the AUC weighting of pairs:
// every positive-negative pair counts once, whatever the class sizes)
//
//	L(w, b) = (1/n₊) Σ_{y=+1} ℓ(wᵀx̃ + b) + (1/n₋) Σ_{y=−1} ℓ(−wᵀx̃ − b),
//
// x̃ = x/R, on the sphere ‖w‖ = S (AUC depends on w's direction only; S
// sets the loss's temperature). The partner depends on the broadcast
// model only — a function of earlier releases — never on another record,
// so a record's term is its own. The class counts and means released
// first (phase 1) give the start: w₀ = S·b̂/‖b̂‖, b̂ = m̂₊ − m̂₋, and
// b₀ = −w₀ᵀ(m̂₊ + m̂₋)/2, the threshold between the two class means.
//
// # A site's vector of a gradient round, and its sensitivity
//
// With σ(z) = 1/(1 + e^{−z}) and s = wᵀx̃ + b, the record's gradient of
// its pair loss in (w, b) is −y·σ(−y s)·(x̃, 1). The site releases the
// class blocks of the unsigned terms, the intercept's coordinate weighted
// by a and the whole clipped at level κ:
//
//	t(x) = clip₁(σ(−y s)·(x̃, a)/κ),   clip₁(g) = g·min(1, 1/‖g‖),
//	vec(D) = ( Σ_{y=+1} t(x) ; Σ_{y=−1} t(x) )   (length 2d + 2),
//
// ‖t(x)‖ ≤ 1 for every record, whatever w, b and x. Replacing one record
// z by z' changes vec by t(z) − t(z') within one block (norm ≤ 2) or by
// (t(z), −t(z')) across the two (norm ≤ √2): the replace-one ℓ2
// sensitivity is Δ = 2 — the per-record clipping's 2C, C = κ in gradient
// units. It holds for every broadcast model, so the rounds compose
// adaptively. κ = ½ and a = 0.3 are fixed constants (not fitted to a
// data set: the records of a schema-mapped box have ‖x̃‖ well below 1, so
// κ = 1 would spend most of the noise on a norm no record has; measured
// on diabetes with its schema at ε = 1, pooled, 40 runs, T = 3, η = 8,
// equal budget split: κ = √2, a = 1 (never clips) 0.695 ± 0.011, κ = ½,
// a = 0.3 0.722 ± 0.011, κ = ¼, a = 0.3 0.718 ± 0.011 — within about two
// s.e. of each other; κ = ½ kept). A clipped term is the gradient scaled down:
// the step is still a descent direction of the record's loss. Phase 1's
// vector is fed-dp-ssp-mean's SSPVector (class sums x/R and √2·n₊, Δ = 2,
// ‖φ‖ ≤ √3) with a zero appended: every release of a job has Δ = 2 and
// length 2d + 2.
//
// The sum over sites of the site vectors is the pooled records' vector:
// the federated job's releases are the pooled job's, with the noise of K
// independent site releases (plain; variance K·σ²) or of one distributed
// discrete Gaussian release (secure aggregation).
//
// # The coordinator's step (post-processing)
//
// From a round's summed vector U = (U₊; U₋) (blocks of d + 1, the last
// coordinate of each the intercept's):
//
//	g_w = κ·(U₋/n̂₋ − U₊/n̂₊)[:d],  g_b = (κ/a)·(U₋/n̂₋ − U₊/n̂₊)[d],
//	(w, b) ← (w, b) − η (g_w, g_b),   w ← S·w/‖w‖,
//
// b clamped to [−S, S] (scores of records in the R-ball lie there). The
// output is the mean of the iterates' directions, rescaled into the
// B-ball (noise averages out over the rounds, as dp-pair-sgd's average of
// iterates).
//
// # The broadcast
//
// A broadcast is a model of d values; it carries (w, b) as
// v = (w/S)·S·(2 + b/S): the direction of v is w's and its norm, in
// [S, 3S], b's. A site decodes both from v and the announced S
// (PairDecodeBroadcast); any v decodes to a valid (w, b), so the
// sensitivity above holds whatever the coordinator sends.

// PairSumKappa is the clip level κ of a round's terms and PairSumA the
// weight a of the intercept's coordinate (file comment).
const (
	PairSumKappa = 0.5
	PairSumA     = 0.3
)

// PairSumDim returns the length 2d + 2 of a site's vector in every phase.
func PairSumDim(d int) int { return 2*d + 2 }

// PairSumSensitivity is the replace-one ℓ2 sensitivity of every release
// of fed-dp-pair-sgd's AUC form, in its vector's units (file comment).
const PairSumSensitivity = 2.0

// PairSumPlan is the Gaussian plan of the first k releases of a job of
// phases releases (1 + T: the class statistics, then T gradient rounds)
// on d features: Δ = PairSumSensitivity each, 2d + 2 noise coordinates
// each, and the budget split of the rule: the statistics (the start every
// step builds on) get μ₁² = μ²/2, each of the T rounds μ²/(2T), i.e.
// σ₁/σ_round = 1/√T. fed-dp-pair-sgd's sites (dpalgo/kit_pairsum.go)
// and dp-pair-gd (private_pairgd.go) calibrate and certify with it.
func PairSumPlan(k, phases, d int) dp.GaussianPlan {
	sens, split := make([]float64, k), make([]float64, k)
	for i := range sens {
		sens[i], split[i] = PairSumSensitivity, 1
	}
	if k > 0 {
		split[0] = 1 / math.Sqrt(float64(max(phases-1, 1)))
	}
	dim := PairSumDim(d)
	return dp.GaussianPlan{Sensitivities: sens, Split: split, Dim: dim, Coordinates: int64(k) * int64(dim)}
}

// PairSumStatsVector returns a site's phase-1 vector: fed-dp-ssp-mean's
// weighted class sums and count (SSPVector, Δ = 2) and a zero.
func PairSumStatsVector(ds *pairwise.Dataset, R float64) []float64 {
	return append(SSPVector(SSPStatsOf(ds, SSPMean), R), 0)
}

// PairEncodeBroadcast returns the broadcast of (w, b) at scale S: w's
// direction with norm S·(2 + b/S), b clamped to [−S, S].
func PairEncodeBroadcast(w []float64, b, S float64) []float64 {
	v := append([]float64(nil), w...)
	nw := pairwise.Norm2(v)
	if !(nw > 0) || math.IsInf(nw, 0) {
		return make([]float64, len(w))
	}
	b = math.Max(-S, math.Min(S, b))
	pairwise.Scale(S*(2+b/S)/nw, v)
	return v
}

// PairDecodeBroadcast inverts PairEncodeBroadcast for any v: w = S·v/‖v‖
// and b = S·(‖v‖/S − 2) clamped to [−S, S]; v = 0 (or non-finite) gives
// w = 0, b = 0.
func PairDecodeBroadcast(v []float64, S float64) (w []float64, b float64) {
	w = make([]float64, len(v))
	nv := pairwise.Norm2(v)
	if !(nv > 0) || math.IsInf(nv, 0) || !(S > 0) {
		return w, 0
	}
	for k, x := range v {
		w[k] = S * x / nv
	}
	b = S * math.Max(-1, math.Min(1, nv/S-2))
	return w, b
}

// PairSumRoundVector returns a site's vector of a gradient round for the
// broadcast v at scale S and radius R (file comment).
func PairSumRoundVector(ds *pairwise.Dataset, v []float64, S, R float64) ([]float64, error) {
	d := ds.D
	switch {
	case len(v) != d:
		return nil, fmt.Errorf("fed-dp-pair-sgd broadcast has %d values, the data %d features", len(v), d)
	case !(S > 0) || math.IsInf(S, 0) || !(R > 0) || math.IsInf(R, 0):
		return nil, fmt.Errorf("fed-dp-pair-sgd needs a finite scale S > 0 and radius R > 0 (S = %v, R = %v)", S, R)
	}
	w, b := PairDecodeBroadcast(v, S)
	for k := range w {
		w[k] /= R // wᵀ(x/R)
	}
	out := make([]float64, PairSumDim(d))
	for i := 0; i < ds.N; i++ {
		s := ds.Dot(i, w) + b
		y := 1.0
		blk := out[:d+1]
		if ds.Y[i] <= 0 {
			y, blk = -1, out[d+1:]
		}
		sg := 1 / (1 + math.Exp(y*s))     // σ(−y s)
		f := sg / (PairSumKappa * R)      // coefficient of x (x̃ = x/R)
		c := sg * PairSumA / PairSumKappa // the intercept's coordinate
		if n := math.Sqrt(f*f*ds.SqNorm(i) + c*c); n > 1 {
			f, c = f/n, c/n
		}
		if !(f == f) || math.IsInf(f, 0) || !(c == c) {
			continue // a non-finite record (the loaders refuse them) adds nothing
		}
		ds.AddScaled(blk[:d], i, f)
		blk[d] += c
	}
	return out, nil
}

// PairSumSolver is the coordinator's state of a fed-dp-pair-sgd AUC job
// after phase 1.
type PairSumSolver struct {
	D            int
	N, NPos      float64 // N public, NPos the clamped noisy count
	S, Eta       float64
	W            []float64 // on the sphere of radius S
	Bias         float64
	Avg          []float64 // sum of the iterates' directions so far
	Rounds, Done int
}

// NewPairSumSolver starts the solver from the summed phase-1 vector (the
// PairSumStatsVector layout of n records; noisy) at scale S and step η.
func NewPairSumSolver(sum []float64, d int, n, R, S, eta float64, rounds int) (*PairSumSolver, error) {
	if len(sum) != PairSumDim(d) || !(n >= 2) || !(R > 0) || !(S > 0) || !(eta > 0) || rounds < 1 {
		return nil, fmt.Errorf("fed-dp-pair-sgd solver: bad arguments (%d values for d = %d, n = %v, R = %v, S = %v, η = %v, %d rounds)", len(sum), d, n, R, S, eta, rounds)
	}
	st := &SSPStats{D: d, N: n, SumPos: make([]float64, d), SumNeg: make([]float64, d)}
	SSPFromVector(st, sum[:len(sum)-1], R)
	np, nn := sspCounts(st)
	mp, mn := make([]float64, d), make([]float64, d)
	for k := 0; k < d; k++ {
		mp[k], mn[k] = st.SumPos[k]/np/R, st.SumNeg[k]/nn/R // in units of R
	}
	clampBall(mp, 1)
	clampBall(mn, 1)
	s := &PairSumSolver{D: d, N: n, NPos: np, S: S, Eta: eta, Rounds: rounds, W: make([]float64, d), Avg: make([]float64, d)}
	mid := 0.0
	for k := 0; k < d; k++ {
		s.W[k] = mp[k] - mn[k]
	}
	if nw := pairwise.Norm2(s.W); nw > 0 {
		pairwise.Scale(S/nw, s.W)
	} else {
		s.W[0] = S
	}
	for k := 0; k < d; k++ {
		mid += s.W[k] * (mp[k] + mn[k]) / 2
	}
	s.Bias = math.Max(-S, math.Min(S, -mid))
	return s, nil
}

// Query is the broadcast of the current (w, b).
func (s *PairSumSolver) Query() []float64 { return PairEncodeBroadcast(s.W, s.Bias, s.S) }

// Step takes the summed vector of the round that answered Query() and
// makes one projected gradient step (file comment).
func (s *PairSumSolver) Step(sum []float64) error {
	d := s.D
	if len(sum) != PairSumDim(d) {
		return fmt.Errorf("fed-dp-pair-sgd round vector has %d values, want %d", len(sum), PairSumDim(d))
	}
	np, nn := s.NPos, s.N-s.NPos
	for k := 0; k <= d; k++ {
		g := PairSumKappa * (sum[d+1+k]/nn - sum[k]/np)
		if k == d {
			g /= PairSumA
		}
		if !(g == g) || math.IsInf(g, 0) {
			continue
		}
		if k < d {
			s.W[k] -= s.Eta * g
		} else {
			s.Bias -= s.Eta * g
		}
	}
	if nw := pairwise.Norm2(s.W); nw > 0 && !math.IsInf(nw, 0) {
		pairwise.Scale(s.S/nw, s.W)
	}
	s.Bias = math.Max(-s.S, math.Min(s.S, s.Bias))
	pairwise.Axpy(1/s.S, s.W, s.Avg)
	s.Done++
	return nil
}

// Output returns the mean of the iterates' directions (the start's when
// no round was combined) rescaled to norm B (B ≤ 0: unit norm).
func (s *PairSumSolver) Output(B float64) []float64 {
	w := append([]float64(nil), s.Avg...)
	if s.Done == 0 || !(pairwise.Norm2(w) > 0) {
		w = append(w[:0], s.W...)
	}
	nw := pairwise.Norm2(w)
	if !(nw > 0) {
		return w
	}
	if !(B > 0) {
		B = 1
	}
	pairwise.Scale(B/nw, w)
	return w
}

// State packs the solver for a checkpoint: D, N, NPos, S, η, b, Rounds,
// Done, then w and the directions' sum (2d + 8 values).
func (s *PairSumSolver) State() []float64 {
	v := []float64{float64(s.D), s.N, s.NPos, s.S, s.Eta, s.Bias, float64(s.Rounds), float64(s.Done)}
	v = append(v, s.W...)
	return append(v, s.Avg...)
}

// PairSumSolverFromState inverts State for a job of d features.
func PairSumSolverFromState(v []float64, d int) (*PairSumSolver, error) {
	if len(v) != 2*d+8 || v[0] != float64(d) {
		return nil, fmt.Errorf("fed-dp-pair-sgd solver state of %d values for d = %d (want %d)", len(v), d, 2*d+8)
	}
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("fed-dp-pair-sgd solver state has a non-finite value")
		}
	}
	s := &PairSumSolver{D: d, N: v[1], NPos: v[2], S: v[3], Eta: v[4], Bias: v[5], Rounds: int(v[6]), Done: int(v[7])}
	if !(s.N >= 2) || !(s.NPos >= 1 && s.NPos <= s.N-1) || !(s.S > 0) || !(s.Eta > 0) || s.Rounds < 1 || s.Done < 0 || s.Done > s.Rounds ||
		v[6] != math.Trunc(v[6]) || v[7] != math.Trunc(v[7]) {
		return nil, fmt.Errorf("fed-dp-pair-sgd solver state is inconsistent")
	}
	s.W = append([]float64(nil), v[8:8+d]...)
	s.Avg = append([]float64(nil), v[8+d:]...)
	return s, nil
}

// PairSumTheta is θ₀ of the default rule (PairSumDefaults): the angle, in
// radians, by which the rounds' accumulated noise may turn the model.
const PairSumTheta = 0.1

// PairSumDefaults is the default rule for the rounds T and the step η of
// fed-dp-pair-sgd's AUC form (dpalgo/kit_pairsum.go derives it), from
// public numbers only: n records in all, d features, sigmaRound1 the
// noise σ of one gradient round's release when T = 1 (the calibration of
// the job's (ε, δ) on 2d + 2 coordinates), factor ς the summed release's
// noise over one central release's (1 pooled, √K plain, under secure
// aggregation √(K·keep/((t − κ)·m)) ≈ 1 when no site drops:
// fedalgo.SecAgg.Floors), S the sphere's radius, theta the tolerance θ₀, and
// rounds the T asked for (0: the rule's). With
//
//	E₁ = κ·ς·σ₁·√(8(d + 1))/n,   τ = θ₀/E₁,
//
// T = ⌈τ⌉ within [2, 16] and η = S·min(1, τ/T).
func PairSumDefaults(n, d int, sigmaRound1, factor, S, theta float64, rounds int) (T int, eta float64) {
	e1 := PairSumKappa * factor * sigmaRound1 * math.Sqrt(8*float64(d+1)) / float64(max(n, 1))
	tau := theta / e1
	if !(tau > 0) || math.IsInf(tau, 0) {
		tau = 16
	}
	T = rounds
	if T <= 0 {
		T = int(math.Min(16, math.Max(2, math.Ceil(tau))))
	}
	return T, S * math.Min(1, tau/float64(T))
}

// clampBall rescales v into the ball of radius r.
func clampBall(v []float64, r float64) {
	if nv := pairwise.Norm2(v); nv > r {
		pairwise.Scale(r/nv, v)
	}
}
