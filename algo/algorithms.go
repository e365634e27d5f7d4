package algo

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/pairfed/pairfed/pairwise"
)

// The non-private algorithms of the papers. Each Run is the update rule and
// output of the cited algorithm; comments name the lines they implement.

var bothTasks = []pairwise.Task{pairwise.TaskAUC, pairwise.TaskMetric}

// Default passes of the offline algorithms (Algorithm.Passes).
const (
	sgdPrevPasses    = 10
	sgdPairPasses    = 10
	sgdAllPrevPasses = 1
)

func init() {
	pairwise.Register(&pairwise.Algorithm{
		Name:           "sgd-prev",
		Title:          "SGD pairing the current instance with the previous one",
		Paper:          "[Y21a] Yang, Lei, Wang, Yang, Ying. Simple Stochastic and Online Gradient Descent Algorithms for Pairwise Learning. NeurIPS 2021",
		Ref:            "Alg 1",
		Setting:        "offline",
		Passes:         sgdPrevPasses,
		ShiftInvariant: true,
		Tasks:          bothTasks,
		Assumptions:    "convex, G-Lipschitz (Thm 1); L-smooth for Thm 2 (η ≤ 2/L)",
		Run:            runSGDPrev,
	})
	pairwise.Register(&pairwise.Algorithm{
		Name:           "ogd-prev",
		Title:          "online gradient descent over a stream, pairing z_t with z_{t−1} (one pass)",
		Paper:          "[Y21a] Yang et al. NeurIPS 2021",
		Ref:            "Alg 2",
		Setting:        "online",
		ShiftInvariant: true,
		Tasks:          bothTasks,
		Assumptions:    "convex, G-Lipschitz; i.i.d. stream",
		Run:            runOGDPrev,
	})
	pairwise.Register(&pairwise.Algorithm{
		Name:           "sgd-pair",
		Title:          "SGD on uniformly random pairs (i_t, j_t), i ≠ j",
		Paper:          "Lei, Ledent, Kloft. Sharper Generalization Bounds for Pairwise Learning. NeurIPS 2020 ([Y21a]'s SGD_pair baseline)",
		Ref:            "SGD of §4; [Y21a] Remark 2",
		Setting:        "offline",
		Passes:         sgdPairPasses,
		ShiftInvariant: true,
		Tasks:          bothTasks,
		Assumptions:    "convex, smooth or Lipschitz",
		Run:            runSGDPair,
	})
	pairwise.Register(&pairwise.Algorithm{
		Name:           "sgd-all-prev",
		PairCost:       pairwise.PairsAllPrevious,
		Title:          "SGD pairing the current draw with all previous consecutive draws",
		Paper:          "[Y21b] Yang, Lei, Lyu, Ying. Stability and Differential Privacy of SGD for Pairwise Learning with Non-Smooth Loss. AISTATS 2021",
		Ref:            "Alg 1",
		Setting:        "offline",
		Passes:         sgdAllPrevPasses,
		ShiftInvariant: true,
		Tasks:          bothTasks,
		Assumptions:    "convex, G-Lipschitz (non-smooth allowed)",
		Run:            runSGDAllPrev,
	})
	pairwise.Register(&pairwise.Algorithm{
		Name:                 "giga",
		PairCost:             pairwise.PairsAllPrevious,
		Title:                "Pairwise GIGA: online projected GD on the average loss against all previous records",
		Paper:                "[H20] Huai, Wang, Miao, Xu, Zhang. Pairwise Learning with Differential Privacy Guarantees. AAAI 2020 (Kar et al. 2013)",
		Ref:                  "Alg 1 without steps 12–13 (\"Pairwise GIGA\")",
		Setting:              "online",
		ShiftInvariant:       true,
		Tasks:                bothTasks,
		Assumptions:          "α-strongly convex (α = λ > 0), G-Lipschitz, L-smooth",
		NeedsStrongConvexity: true,
		Run:                  runGIGA,
	})
	pairwise.Register(&pairwise.Algorithm{
		Name:           "pgd",
		PairCost:       pairwise.PairsFullBatch,
		Title:          "full-batch projected gradient descent on the pairwise empirical risk",
		Paper:          "[X21] Xue, Yang, Huai, Wang. Differentially Private Pairwise Learning Revisited. IJCAI 2021 (non-private baseline)",
		Ref:            "§4 (PGD, Alg 1 without noise)",
		Setting:        "full-batch",
		ShiftInvariant: true,
		Tasks:          bothTasks,
		Assumptions:    "convex, L-smooth",
		Run:            runPGD,
	})
}

// runSGDPrev is [Y21a] Alg 1: i_0 uniform; for t = 1..T draw i_t uniformly
// from [n] and set w_t = Π_W(w_{t−1} − η_t ∇f(w_{t−1}; z_{i_t}, z_{i_{t−1}}));
// output w̃_T = Σ_{j=1}^T η_j w_{j−2} / Σ_{j=1}^T η_j with w_{−1} = w_0.
// Default T = 10 passes, η_t = η/√T (the authors' experimental setting).
func runSGDPrev(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	n := obj.Data().N
	T := cfg.TotalSteps(n, sgdPrevPasses)
	return pairwise.RunPrevSGD(ctx, obj, cfg, rng, T, pairwise.ScaledConstant)
}

// runOGDPrev is [Y21a] Alg 2: one pass over the stream z_0, z_1, …, z_{n−1}
// in the given order; step t pairs z_t with z_{t−1}; T = n − 1 steps, same
// output as Alg 1. The dataset's row order is the stream order.
func runOGDPrev(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	n := obj.Data().N
	if n < 2 {
		return nil, fmt.Errorf("ogd-prev needs at least 2 records")
	}
	cfg.Steps = n - 1
	return pairwise.RunPairSGD(ctx, obj, cfg, rng, &pairwise.Stream{N: n}, n-1, pairwise.ScaledConstant)
}

// runSGDPair is the SGD of Lei et al. (2020): at step t draw an ordered pair
// (i_t, j_t), i_t ≠ j_t, uniformly and step on ∇f(w_{t−1}; z_{i_t}, z_{j_t}).
func runSGDPair(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	n := obj.Data().N
	if n < 2 {
		return nil, fmt.Errorf("sgd-pair needs at least 2 records")
	}
	return pairwise.RunPairSGD(ctx, obj, cfg, rng, pairwise.UniformPair{N: n}, cfg.TotalSteps(n, sgdPairPasses), pairwise.ScaledConstant)
}

// runSGDAllPrev is [Y21b] Alg 1: w_1 = 0, i_1 uniform; for t = 1..T draw
// i_{t+1} uniformly and set
//
//	w_{t+1} = Π_W(w_t − (η/t) Σ_{k=1}^t ∂ℓ(w_t; z_{i_{k+1}}, z_{i_k})),
//
// output w̄_T = (1/T) Σ_{t=1}^T w_t. The cost of step t is t pair gradients,
// so T defaults to one pass (T = n), the smallest T of its Theorems 2–3.
// η is constant ([Y21b] §3); a schedule other than "constant" scales it.
func runSGDAllPrev(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := obj.Data().N
	T := cfg.TotalSteps(n, sgdAllPrevPasses)
	sched := pairwise.Constant
	if cfg.Schedule != "" {
		sched = cfg.Schedule
	}
	p := obj.NumParams()
	w := cfg.InitialModel(p)
	g := make([]float64, p)
	ids := make([]int, 1, T+1)
	ids[0] = rng.IntN(n)
	sum := make([]float64, p)
	out := make([]float64, p)
	cp := pairwise.NewCheckpointer(&cfg)
	var grads int64
	for t := 1; t <= T; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The output averages w_1..w_T: w_t is the iterate before step t.
		pairwise.Axpy(1, w, sum)
		if cp.Due(t) {
			for k := range out {
				out[k] = sum[k] / float64(t)
			}
			cp.Fire(t, out)
		}
		ids = append(ids, rng.IntN(n))
		for k := range g {
			g[k] = 0
		}
		for k := 1; k <= t; k++ {
			obj.AddGrad(g, w, ids[k], ids[k-1], 1)
		}
		grads += int64(t)
		eta := sched.Eta(cfg.Eta, t, T)
		if l := obj.Lambda(); l != 0 {
			pairwise.Scale(1-eta*l, w)
		}
		pairwise.Axpy(-eta/float64(t), g, w)
		obj.Project(w)
	}
	for k := range out {
		out[k] = sum[k] / float64(T)
	}
	return &pairwise.Result{W: out, Steps: T, PairGrads: grads}, nil
}

// runGIGA is Pairwise GIGA ([H20] Alg 1 without the perturbation of steps
// 12–13): records arrive in stream order z_1..z_n; at t the penalty is
// L̂_t(w) = 1/(t−1) Σ_{i<t} ℓ(w; z_t, z_i) (eq. (3)), and for t ≥ 3
//
//	η_t = (t−1)/(t−2) · 2/(α t),   w_t = Π_C[w_{t−1} − η_t ∇L̂_t(w_{t−1})].
//
// The T₁ burn-in of Alg 1 exists only for the privacy analysis (Lemma 4);
// the non-private baseline updates from the first step where η_t is defined
// (t = 3). Output: w̄ = (w_1 + … + w_{n−1})/(n−1) (eq. (6)). α is the
// strong-convexity constant λ of the regularized loss; cfg.Eta is unused.
func runGIGA(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	alpha := obj.Lambda()
	if !(alpha > 0) {
		return nil, fmt.Errorf("giga needs an α-strongly convex loss: set --lambda > 0 (the [H20] experiments use λ = 1e-3)")
	}
	n := obj.Data().N
	if n < 3 {
		return nil, fmt.Errorf("giga needs at least 3 records")
	}
	p := obj.NumParams()
	w := cfg.InitialModel(p)
	g := make([]float64, p)
	sum := make([]float64, p)
	out := make([]float64, p)
	var grads int64
	// Stream positions are 1-based as in the paper: record k−1 is z_k.
	for t := 2; t <= n; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// w holds w_{t−1}, chosen before z_t arrives: average w_1..w_{n−1}.
		pairwise.Axpy(1, w, sum)
		if t >= 3 {
			eta := float64(t-1) / float64(t-2) * 2 / (alpha * float64(t))
			for k := range g {
				g[k] = 0
			}
			for i := 1; i < t; i++ {
				obj.AddGrad(g, w, t-1, i-1, 1/float64(t-1))
			}
			grads += int64(t - 1)
			pairwise.Scale(1-eta*alpha, w) // ∇ of (α/2)‖w‖² is αw
			pairwise.Axpy(-eta, g, w)
			obj.Project(w)
		}
	}
	for k := range out {
		out[k] = sum[k] / float64(n-1)
	}
	return &pairwise.Result{W: out, Steps: n - 1, PairGrads: grads}, nil
}

// runPGD is full-batch projected gradient descent on
// F_S(w) = 1/(n(n−1)) Σ_{i≠j} f(w; z_i, z_j) + (λ/2)‖w‖²:
// w_{t+1} = Π_C(w_t − η ∇F_S(w_t)), output the last iterate (the non-private
// PGD of [X21] §4). Default T = 100 iterations (cfg.Steps), constant η.
func runPGD(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	T := cfg.Steps
	if T == 0 {
		T = 100
	}
	p := obj.NumParams()
	w := cfg.InitialModel(p)
	g := make([]float64, p)
	cp := pairwise.NewCheckpointer(&cfg)
	var grads int64
	for t := 1; t <= T; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pairwise.FullGradient(obj, w, g)
		grads += int64(obj.Data().N) * int64(obj.Data().N-1)
		eta := cfg.Schedule.Eta(cfg.Eta, t, T)
		pairwise.Axpy(-eta, g, w)
		obj.Project(w)
		if cp.Due(t) {
			cp.Fire(t, w)
		}
	}
	return &pairwise.Result{W: w, Steps: T, PairGrads: grads}, nil
}
