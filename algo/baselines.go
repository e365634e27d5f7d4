package algo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/pairwise"
)

// The buffer-based and saddle-point baselines of [Y21a] Table 1: OLP (Kar et
// al. 2013), OAM_gra (Zhao et al. 2011) and SPAUC (Lei & Ying 2021).
//
// The update rules follow the cited papers; the details the papers leave open
// (order of buffer update and gradient step, normalization, same-label pairs,
// what the step size multiplies, how t is counted) follow the authors' public
// code github.com/zhenhuan-yang/simple-pairwise, which defines [Y21a]'s
// protocol. Each Run streams T = cfg.Passes·n (default 10 passes) records
// drawn i.i.d. uniformly with replacement from S, as utils.get_idx does, and
// projects onto W (the code's `beta` ball when `proj_flag` is set) after every
// step, whether or not the gradient was zero.
//
// Output: cfg.Averaging selects it. AvgWindow averages the iterates w_t (after
// each update) since the previous checkpoint, as the code does between the
// entries of `res_idx`; AvgUniform and AvgLast are as in RunPairSGD. AvgPaper
// (the default) is each paper's own output, documented on each Run. A
// checkpoint at the last step T receives exactly the returned Result.W.

const (
	defaultOLPBuffer = 200 // [Y21a] §5: OLP with s = 200
	defaultOAMBuffer = 100 // [Y21a] §5: OAM_gra with 100 positive + 100 negative
	baselinePasses   = 10  // [Y21a] §5 / simple-pairwise exp_test.py: n_pass = 10
)

func init() {
	pairwise.Register(&pairwise.Algorithm{
		Name:    "olp",
		Title:   "OLP: online gradient descent on the average loss against an RS-x reservoir buffer (s = 200)",
		Paper:   "Kar, Sriperumbudur, Jain, Karnick. On the Generalization Ability of Online Learning Algorithms for Pairwise Loss Functions. ICML 2013 ([Y21a]'s OLP baseline)",
		Ref:     "OLP with the RS-x buffer policy (§6); [Y21a] §5 Table 1; simple-pairwise alg/auc_olp_hinge.py, alg/auc_olp_square.py",
		Setting: "online",
		Tasks:   []pairwise.Task{pairwise.TaskAUC},
		Losses:  []string{"hinge", "square"},
		Assumptions: "convex, Lipschitz, bounded pairwise loss; i.i.d. stream; " +
			"excess risk O(1/√s + 1/√n) for buffer size s",
		Run: runOLP,
	})
	pairwise.Register(&pairwise.Algorithm{
		Name:        "oam-gra",
		Title:       "OAM_gra: online AUC maximization with positive/negative reservoir buffers (100 + 100) and gradient updates",
		Paper:       "Zhao, Hoi, Jin, Yang. Online AUC Maximization. ICML 2011 ([Y21a]'s OAM_gra baseline)",
		Ref:         "Alg 1 (OAM framework) with reservoir-sampling buffers and the gradient classifier update OAM_gra; [Y21a] §5 Table 1; simple-pairwise alg/auc_oam_gra_hinge.py",
		Setting:     "online",
		Tasks:       []pairwise.Task{pairwise.TaskAUC},
		Losses:      []string{"hinge"},
		Assumptions: "pairwise hinge loss (the update is its subgradient); i.i.d. stream",
		Run:         runOAMGra,
	})
	pairwise.Register(&pairwise.Algorithm{
		Name:        "spauc",
		Title:       "SPAUC: stochastic proximal AUC maximization via the square-loss saddle-point reformulation",
		Paper:       "Lei, Ying. Stochastic Proximal AUC Maximization. JMLR 22, 2021 (arXiv:1906.06053) ([Y21a]'s SPAUC baseline)",
		Ref:         "Alg 1 (SPAUC); [Y21a] §5 Table 1; simple-pairwise alg/auc_spauc_square.py",
		Setting:     "online",
		Tasks:       []pairwise.Task{pairwise.TaskAUC},
		Losses:      []string{"square"},
		Assumptions: "least-squares AUC loss (the saddle-point reformulation needs it); i.i.d. data; convex penalty",
		Run:         runSPAUC,
	})
}

// baselineSetup validates cfg for the named baseline and returns T and the
// step-size schedule (def unless cfg.Schedule is set).
func baselineSetup(name string, obj pairwise.Objective, cfg *pairwise.RunConfig, def pairwise.Schedule) (int, pairwise.Schedule, error) {
	if err := cfg.Validate(); err != nil {
		return 0, "", err
	}
	a, err := pairwise.Lookup(name)
	if err != nil {
		return 0, "", err
	}
	if err := a.Supports(obj.Task(), obj.Loss().Name()); err != nil {
		return 0, "", err
	}
	if obj.Data().N < 2 {
		return 0, "", fmt.Errorf("%s needs at least 2 records", name)
	}
	if cfg.Init != nil && len(cfg.Init) != obj.NumParams() {
		return 0, "", fmt.Errorf("%s: initial model has %d parameters, want %d", name, len(cfg.Init), obj.NumParams())
	}
	if len(cfg.Checkpoints) > 0 && cfg.OnCheckpoint == nil {
		return 0, "", fmt.Errorf("%s: checkpoints %v given without OnCheckpoint", name, cfg.Checkpoints)
	}
	for k := 1; k < len(cfg.Checkpoints); k++ {
		if cfg.Checkpoints[k] < cfg.Checkpoints[k-1] {
			return 0, "", fmt.Errorf("%s: checkpoints must be non-decreasing, got %v", name, cfg.Checkpoints)
		}
	}
	sched := def
	if cfg.Schedule != "" {
		sched = cfg.Schedule
	}
	return cfg.TotalSteps(obj.Data().N, baselinePasses), sched, nil
}

// bufferSize returns v, or def when v is 0; negative sizes are errors.
func bufferSize(name, field string, v, def int) (int, error) {
	switch {
	case v < 0:
		return 0, fmt.Errorf("%s: %s buffer size %d must be ≥ 0 (0 means %d)", name, field, v, def)
	case v == 0:
		return def, nil
	}
	return v, nil
}

// paperOutput names a paper's own output rule (AvgPaper).
type paperOutput int

const (
	// paperLast is the last iterate w_T.
	paperLast paperOutput = iota
	// paperUniformPrev is (1/(T−1)) Σ_{t=2}^T w_{t−1}: the online-to-batch
	// conversion of the hypotheses used to predict z_2..z_T.
	paperUniformPrev
	// paperEtaWeightedPrev is Σ_{t=1}^T η_t w_{t−1} / Σ_{t=1}^T η_t.
	paperEtaWeightedPrev
)

// baselineOutput turns the iterates of a baseline run into its output: the
// averager of RunPairSGD for AvgWindow/AvgUniform/AvgLast, or the paper's
// rule for AvgPaper. It allocates only in its constructor.
type baselineOutput struct {
	avg    *pairwise.Averager // nil for a paper rule other than paperLast
	rule   paperOutput
	sum    []float64
	weight float64
	out    []float64
}

func newBaselineOutput(mode pairwise.Averaging, rule paperOutput, w0 []float64) *baselineOutput {
	if mode == "" {
		mode = pairwise.AvgPaper
	}
	if mode == pairwise.AvgPaper && rule == paperLast {
		mode = pairwise.AvgLast
	}
	if mode != pairwise.AvgPaper {
		return &baselineOutput{avg: pairwise.NewAverager(mode, w0)}
	}
	return &baselineOutput{rule: rule, sum: make([]float64, len(w0)), out: make([]float64, len(w0))}
}

// before is called at step t with w = w_{t−1} and η_t.
func (o *baselineOutput) before(t int, w []float64, eta float64) {
	if o.avg != nil {
		return
	}
	switch o.rule {
	case paperUniformPrev:
		if t >= 2 {
			pairwise.Axpy(1, w, o.sum)
			o.weight++
		}
	case paperEtaWeightedPrev:
		pairwise.Axpy(eta, w, o.sum)
		o.weight += eta
	}
}

// after is called with w = w_t after the update and projection.
func (o *baselineOutput) after(w []float64) {
	if o.avg != nil {
		o.avg.After(w)
	}
}

// output returns the output if the run stopped now (a view valid until the
// next call).
func (o *baselineOutput) Output(w []float64) []float64 {
	if o.avg != nil {
		return o.avg.Output(w)
	}
	if o.weight == 0 {
		copy(o.out, w)
		return o.out
	}
	for k, v := range o.sum {
		o.out[k] = v / o.weight
	}
	return o.out
}

// reset starts a new checkpoint window (AvgWindow only).
func (o *baselineOutput) Reset() {
	if o.avg != nil {
		o.avg.Reset()
	}
}

// streamSteps runs the T steps of a streaming baseline on w, in place.
// Step t: ctx is checked every 1024 steps, η_t comes from sched, out sees
// w_{t−1}, step draws z_t and updates w (returning the pair gradients it
// evaluated), w is projected onto W, out sees w_t, and a due checkpoint
// receives the output the run would return at t.
func streamSteps(ctx context.Context, obj pairwise.Objective, cfg *pairwise.RunConfig, T int, sched pairwise.Schedule, w []float64, out *baselineOutput, step func(t int, eta float64) int64) (*pairwise.Result, error) {
	cp := pairwise.NewCheckpointer(cfg)
	var grads int64
	for t := 1; t <= T; t++ {
		if t&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		eta := sched.Eta(cfg.Eta, t, T)
		out.before(t, w, eta)
		grads += step(t, eta)
		obj.Project(w)
		out.after(w)
		if cp.Due(t) {
			cp.Window(t, T, w, out)
		}
	}
	return &pairwise.Result{W: append([]float64(nil), out.Output(w)...), Steps: T, PairGrads: grads}, nil
}

// binomialDraw returns a Binomial(n, p) variate by inversion of the CDF. Its
// expected cost is O(1 + np); OLP calls it with np ≤ 1.
func binomialDraw(rng *rand.Rand, n int, p float64) int {
	if p <= 0 || n <= 0 {
		return 0
	}
	if p >= 1 {
		return n
	}
	u := rng.Float64()
	q := 1 - p
	pk := math.Exp(float64(n) * math.Log1p(-p)) // P(K = 0)
	cdf := pk
	k := 0
	for u >= cdf && k < n {
		pk *= float64(n-k) / float64(k+1) * p / q
		k++
		cdf += pk
	}
	return k
}

// runOLP is OLP (Kar et al. 2013) with the RS-x buffer B of size s
// (cfg.Buffer, default 200), on the stream of i.i.d. draws z_{i_1}, z_{i_2}, ….
// Step t (1-based) does, in this order, as simple-pairwise
// alg/auc_olp_hinge.py and alg/auc_olp_square.py do:
//
//  1. Buffer update (RS-x, "with replacement"), before the gradient step, so
//     z_t itself may sit in B when the gradient is taken:
//     t ≤ s: z_t fills slot t; t = s+1: every slot k in turn draws
//     r ∈ {0..s} and becomes z_t if r = s, else a copy of slot r — in place,
//     so a slot can copy an already refreshed slot (the code's rs_xx_t; Kar
//     et al. draw the s slots independently); t > s+1: K ~ Binomial(s,
//     1/(t−1)) slots, chosen uniformly with replacement, become z_t (the
//     code's rs_xx with its 0-based t, where Kar et al. replace each slot
//     independently with probability 1/t).
//  2. w_t = Π_W(w_{t−1} − η_t·(1/m) Σ_{z ∈ B, y ≠ y_t} ∇f(w_{t−1}; z_t, z) − η_t λ w_{t−1})
//     with m = min(t, s) = |B|: only opposite-label buffer entries get a
//     gradient (the code's buf_y < 0 / buf_y > 0 masks), but the sum is
//     normalized by the whole buffer size, same-label entries included
//     (the code's min(t + 1, buffer) with 0-based t). λ is 0 in the code.
//
// Hinge: the code's active set is {1 − w·(x⁺ − x⁻) ≥ 0}, AUCHinge's is "> 0";
// they differ only on the kink. Result.PairGrads counts m per step (the pairs
// the buffer step covers, as RunPairSGD counts same-label pairs). η_t defaults
// to η/√T (the code's `etas` from get_etas with eta_geo = 'const').
//
// AvgPaper is Kar et al.'s online-to-batch output, the uniform average of the
// hypotheses w_1..w_{T−1} that predicted z_2..z_T.
func runOLP(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	T, sched, err := baselineSetup("olp", obj, &cfg, pairwise.ScaledConstant)
	if err != nil {
		return nil, err
	}
	s, err := bufferSize("olp", "reservoir", cfg.Buffer, defaultOLPBuffer)
	if err != nil {
		return nil, err
	}
	data := obj.Data()
	n, y := data.N, data.Y
	p := obj.NumParams()
	w := cfg.InitialModel(p)
	g := make([]float64, p)
	buf := make([]int, s) // record indices; slot k holds z_{buf[k]}
	out := newBaselineOutput(cfg.Averaging, paperUniformPrev, w)
	lambda := obj.Lambda()
	return streamSteps(ctx, obj, &cfg, T, sched, w, out, func(t int, eta float64) int64 {
		i := rng.IntN(n)
		switch {
		case t <= s:
			buf[t-1] = i
		case t == s+1:
			for k := range buf {
				if r := rng.IntN(s + 1); r == s {
					buf[k] = i
				} else {
					buf[k] = buf[r]
				}
			}
		default:
			for k := binomialDraw(rng, s, 1/float64(t-1)); k > 0; k-- {
				buf[rng.IntN(s)] = i
			}
		}
		m := min(t, s)
		for k := range g {
			g[k] = 0
		}
		yi := y[i]
		for _, j := range buf[:m] {
			if y[j] != yi {
				obj.AddGrad(g, w, i, j, 1)
			}
		}
		if lambda != 0 {
			pairwise.Scale(1-eta*lambda, w)
		}
		pairwise.Axpy(-eta/float64(m), g, w)
		return int64(m)
	})
}

// runOAMGra is OAM_gra (Zhao et al. 2011): a positive buffer B⁺ and a
// negative buffer B⁻ (cfg.PosBuffer, cfg.NegBuffer, default 100 each), each
// a reservoir sample (Vitter's algorithm R, the paper's UpdateBuffer) of the
// records of its class seen so far. Step t, for a draw z_t of class c with
// opposite class c̄, as in simple-pairwise alg/auc_oam_gra_hinge.py:
//
//  1. N^c += 1; C_t = η_t·max(1, N^c̄/|B^c̄|) with N^c̄ the number of c̄-records
//     seen so far (the paper's C_t; the code's eta·max(1, n_neg/buffer)).
//  2. z_t is offered to its own buffer B^c (it never pairs with itself).
//  3. w_t = Π_W(w_{t−1} − C_t Σ_{slots of B^c̄} ∇f(w_{t−1}; z_t, slot) − η_t λ w_{t−1}):
//     a sum over the opposite buffer, not an average. Like the code, whose
//     buffers are preallocated np.zeros((buffer, dim)) arrays, the sum runs
//     over all |B^c̄| slots: slots not yet filled (fewer than |B^c̄| records
//     of class c̄ seen) hold x = 0 and contribute ∇f(w; z_t, (0, c̄)).
//     λ is 0 in the code.
//
// The code steps with the constant `eta`, not the `etas` array the other
// methods use, so η_t defaults to the Constant schedule η_t = η. Its hinge
// active set is {1 − w·(x⁺ − x⁻) ≥ 0}, AUCHinge's is "> 0" (only the kink
// differs). Result.PairGrads counts |B^c̄| per step, the pairs the code
// evaluates. AvgPaper is the last iterate w_T: OAM is an online learner
// whose final classifier is evaluated.
func runOAMGra(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	T, sched, err := baselineSetup("oam-gra", obj, &cfg, pairwise.Constant)
	if err != nil {
		return nil, err
	}
	sp, err := bufferSize("oam-gra", "positive", cfg.PosBuffer, defaultOAMBuffer)
	if err != nil {
		return nil, err
	}
	sn, err := bufferSize("oam-gra", "negative", cfg.NegBuffer, defaultOAMBuffer)
	if err != nil {
		return nil, err
	}
	data := obj.Data()
	n, y := data.N, data.Y
	loss := obj.Loss()
	p := obj.NumParams()
	w := cfg.InitialModel(p)
	g := make([]float64, p)
	pos := &pairwise.Reservoir{Cap: sp, Items: make([]int, 0, sp)}
	neg := &pairwise.Reservoir{Cap: sn, Items: make([]int, 0, sn)}
	out := newBaselineOutput(cfg.Averaging, paperLast, w)
	lambda := obj.Lambda()
	return streamSteps(ctx, obj, &cfg, T, sched, w, out, func(t int, eta float64) int64 {
		i := rng.IntN(n)
		own, other := pos, neg
		if y[i] < 0 {
			own, other = neg, pos
		}
		c := eta * math.Max(1, float64(other.Seen())/float64(other.Cap))
		own.Add(i, rng)
		for k := range g {
			g[k] = 0
		}
		for _, j := range other.Items {
			obj.AddGrad(g, w, i, j, 1)
		}
		if empty := other.Cap - len(other.Items); empty > 0 {
			// Unfilled slots are x = 0 of the opposite class: the pair score
			// is wᵀ(x_t − 0) and the gradient d·x_t.
			if _, d := loss.Eval(data.Dot(i, w), y[i], -y[i]); d != 0 {
				data.AddScaled(g, i, float64(empty)*d)
			}
		}
		if lambda != 0 {
			pairwise.Scale(1-eta*lambda, w)
		}
		pairwise.Axpy(-c, g, w)
		return int64(other.Cap)
	})
}

// runSPAUC is SPAUC (Lei & Ying 2021) for the least-squares AUC loss. With
// p = P(y = 1) and class means m⁺, m⁻, the square-loss AUC risk is a saddle
// problem in (w, a, b, α) whose inner optimum is a = wᵀm⁺, b = wᵀm⁻,
// α = wᵀ(m⁻ − m⁺); SPAUC steps on w with those values plugged in, so the
// model (and the scorer) is w alone. As in simple-pairwise
// alg/auc_spauc_square.py (the function its experiment scripts call), p, m⁺
// and m⁻ are computed once from the whole training sample (the paper
// estimates them online), and step t on a draw z_t does
//
//	G_t = (1−p)·wᵀ(x_t − m⁺)·(x_t − m⁺)          if y_t = +1
//	G_t = p·wᵀ(x_t − m⁻)·(x_t − m⁻)              if y_t = −1
//	G_t += p(1−p)·(wᵀ(m⁻ − m⁺) + 1)·(m⁻ − m⁺)    (all at w = w_{t−1})
//	w_t = Π_W(prox_{η_t λ‖·‖²/2}(w_{t−1} − η_t G_t)),  prox(v) = v/(1 + η_t λ).
//
// E[G_t] = p(1−p)/2·∇ E[(1 − wᵀ(x − x'))² | y = 1, y' = −1]. λ is 0 in the
// code (no prox). Per-record scores use Dataset.Dot/AddScaled, so sparse data
// costs O(d + nnz) per step. η_t defaults to η/√T (the code's `etas`).
// Result.PairGrads counts one gradient per step: SPAUC evaluates no pair
// gradients; its per-step work is one O(d) stochastic gradient.
//
// AvgPaper is SPAUC's output w̄_T = Σ_{t=1}^T η_t w_{t−1} / Σ_{t=1}^T η_t
// (the paper's w_1, …, w_T with w_1 the initial model).
func runSPAUC(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	T, sched, err := baselineSetup("spauc", obj, &cfg, pairwise.ScaledConstant)
	if err != nil {
		return nil, err
	}
	data := obj.Data()
	n, y := data.N, data.Y
	d := obj.NumParams()
	mPos := make([]float64, d)
	mNeg := make([]float64, d)
	var nPos, nNeg int
	for i := 0; i < n; i++ {
		if y[i] > 0 {
			data.AddScaled(mPos, i, 1)
			nPos++
		} else {
			data.AddScaled(mNeg, i, 1)
			nNeg++
		}
	}
	if nPos == 0 || nNeg == 0 {
		return nil, fmt.Errorf("spauc needs both classes in the training sample (%d positive, %d negative)", nPos, nNeg)
	}
	pairwise.Scale(1/float64(nPos), mPos)
	pairwise.Scale(1/float64(nNeg), mNeg)
	diff := make([]float64, d) // m⁻ − m⁺
	for k := range diff {
		diff[k] = mNeg[k] - mPos[k]
	}
	p := float64(nPos) / float64(n)
	pq := p * (1 - p)
	w := cfg.InitialModel(d)
	out := newBaselineOutput(cfg.Averaging, paperEtaWeightedPrev, w)
	lambda := obj.Lambda()
	return streamSteps(ctx, obj, &cfg, T, sched, w, out, func(t int, eta float64) int64 {
		i := rng.IntN(n)
		wx := data.Dot(i, w)
		wp, wn := pairwise.Dot(w, mPos), pairwise.Dot(w, mNeg)
		u := wn - wp + 1 // wᵀ(m⁻ − m⁺) + 1
		a, c, m := p, wx-wn, mNeg
		if y[i] > 0 {
			a, c, m = 1-p, wx-wp, mPos
		}
		k := eta * a * c
		data.AddScaled(w, i, -k)
		pairwise.Axpy(k, m, w)
		pairwise.Axpy(-eta*pq*u, diff, w)
		if lambda != 0 {
			pairwise.Scale(1/(1+eta*lambda), w)
		}
		return 1
	})
}
