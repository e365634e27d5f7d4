package experiment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
)

// Preprocessing is the privacy statement of a private run's data
// preparation: how the features were scaled, what that cost, the total
// guarantee of ranges plus training, and why the run is not private end to
// end if it is not.
type Preprocessing struct {
	// Scale is the scaling used (Spec.Scale).
	Scale string `json:"scale"`
	// Ranges is the differentially private release of the feature ranges
	// (Scale "private"); nil otherwise.
	Ranges *dp.Ranges `json:"ranges,omitempty"`
	// TrainEpsilon and TrainDelta are what the training algorithm was
	// given: the request minus the ranges' share.
	TrainEpsilon float64 `json:"train_epsilon"`
	TrainDelta   float64 `json:"train_delta"`
	// TotalEpsilon and TotalDelta are the guarantee of the whole run:
	// by exact Gaussian-DP composition of the ranges and the training
	// releases (Composition "gdp", certified by dp.CertifyWithRanges), or
	// by adaptive basic composition of their stated (ε, δ) ("basic").
	TotalEpsilon float64 `json:"total_epsilon"`
	TotalDelta   float64 `json:"total_delta"`
	// Composition is how the DP ranges (Scale "private", or a schema's
	// unknown features) compose with training: "gdp" or "basic".
	Composition string `json:"composition,omitempty"`
	// TotalMu is the whole run's Gaussian-DP μ (Composition "gdp").
	TotalMu float64 `json:"total_mu,omitempty"`
	// Private is true when every step before training is per-record with
	// public or DP-charged parameters (secure noise for the ranges).
	Private bool `json:"private"`
	// Reasons lists what makes the preparation data-dependent.
	Reasons []string `json:"reasons,omitempty"`
	// Note describes the preparation for the run's notes.
	Note string `json:"note"`
	// Unshifted is true when sparse data was scaled without its shift and
	// stayed sparse (data.Scaler.ApplyUnshifted).
	Unshifted bool `json:"unshifted,omitempty"`
	// Refined is true when the schema's public ranges were refined under
	// DP (Spec.RefineBounds); RefinedKept counts the features that kept
	// their public range (no estimate found, or none narrower).
	Refined     bool `json:"refined,omitempty"`
	RefinedKept int  `json:"refined_kept,omitempty"`
	// RefineWhy is --refine-bounds auto's reason (RefineDetects).
	RefineWhy string `json:"refine_why,omitempty"`

	requestDelta float64              // the whole run's δ (DP ranges)
	model        *model.Preprocessing // the map, as a model artefact stores it
	unknownNames []string             // a schema's unknown features (1-based numbers)
}

// privateRanges estimates the feature ranges of train under DP from
// spec.RangeShare of the request, records the release and the remaining
// budget in pre, and returns the released ranges (the caller builds the
// per-record map from them).
//
// With a Gaussian-DP training mechanism (Algorithm.GaussianDP), δ > 0
// and no --tune, the share is of μ² and the run composes exactly
// (dp.SplitGDP: the ranges are released μ_range-GDP and the algorithm runs
// at (ε, δ_train)); otherwise — the other mechanisms, and --tune, whose
// selection is not a plain Gaussian composition — the share is of ε and
// δ, composed by basic composition (dp.SplitBudget; a run that turns out
// not to fit is refused by finish).
//
// cols, when not nil, restricts the estimate to those features (a schema's
// unknown features); the returned ranges are in that order.
func privateRanges(spec Spec, train *pairwise.Dataset, cols []int, rng *rand.Rand, pre *Preprocessing) (*dp.Ranges, error) {
	share := spec.RangeShare
	if share == 0 {
		share = dp.DefaultRangeShare
	}
	// Refuse before spending anything: the map densifies.
	if train.IsSparse() && train.D > 1000 {
		return nil, fmt.Errorf("experiment: --scale private on sparse data with d=%d > 1000 would densify it; use --scale none or a --feature-bounds schema", train.D)
	}
	d, rowTo := train.D, train.DenseRowTo
	if cols != nil {
		full := make([]float64, train.D)
		d = len(cols)
		rowTo = func(dst []float64, i int) []float64 {
			train.DenseRowTo(full, i)
			dst = dst[:0]
			for _, j := range cols {
				dst = append(dst, full[j])
			}
			return dst
		}
	}
	delta := requestDelta(spec, train.N)
	cfg, te, td, comp, err := rangeBudget(spec, d, delta, share)
	if err != nil {
		return nil, err
	}
	pre.Composition = comp
	var noise dp.Noise
	if spec.Seeded {
		noise = dp.NewSeededNoise(spec.NoiseSeed ^ rng.Uint64() ^ 0x72616e676573) // "ranges"
	} else {
		noise = dp.NewSecureNoise()
	}
	if spec.NoiseScale != 0 && spec.NoiseScale != 1 {
		noise = dp.ScaleNoise(noise, spec.NoiseScale)
	}
	r, err := dp.EstimateRanges(train.N, d, rowTo, cfg, noise)
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	pre.Ranges, pre.TrainEpsilon, pre.TrainDelta, pre.requestDelta = r, te, td, delta
	return r, nil
}

// finish completes the statement once the algorithm has reported its
// guarantee p; dataDependent are the loader's data-dependent decisions
// (data.Table.DataDependent); trainCoords is the number of Gaussian noise
// coordinates the algorithm drew (for the exact composition's
// discrete-noise term). A Gaussian-DP composition that does not certify the
// request is an error: the run is refused rather than mislabelled.
func (pre *Preprocessing) finish(spec Spec, p *pairwise.PrivacyReport, dataDependent []string, trainCoords int64) error {
	if pre.Ranges == nil {
		pre.TrainEpsilon, pre.TrainDelta = p.Epsilon, p.Delta
	}
	pre.TotalEpsilon, pre.TotalDelta = pre.TrainEpsilon, pre.TrainDelta
	pre.Reasons = append([]string(nil), dataDependent...)
	switch {
	case spec.Scale == "bounds" && pre.Ranges == nil:
		pre.Note = spec.Bounds.Describe() + normNote(spec)
		if pre.RefineWhy != "" {
			pre.Note += "; --refine-bounds auto did not refine them: " + pre.RefineWhy
		}
	case spec.Scale == "none":
		pre.Note = "--scale none: raw features, only clipped per record to ‖x‖ ≤ R (no privacy spent; usually poor utility unless the features are already on a common scale — give --feature-bounds)"
	case pre.Ranges != nil: // --scale private, or a schema's unknown features
		r := pre.Ranges
		how := ""
		if pre.Composition == "gdp" {
			if p.Mechanism != "gaussian" || p.Disjoint || p.SampleRate != 0 || len(p.Sigmas) != len(p.Sensitivity) {
				return fmt.Errorf("experiment: the feature ranges were released for Gaussian-DP composition but %s reported a %s mechanism (disjoint %v) the composition does not cover", spec.Algo, p.Mechanism, p.Disjoint)
			}
			delta := pre.requestDelta
			c, err := dp.CertifyWithRanges(r, dp.GaussianPlan{Sensitivities: p.Sensitivity, FailureDelta: p.FailureDelta}, p.Sigmas, trainCoords, spec.Epsilon, delta)
			if err != nil {
				return fmt.Errorf("experiment: %w", err)
			}
			if !c.Covers(spec.Epsilon, delta) {
				return fmt.Errorf("experiment: the feature ranges and %s compose to (ε, δ) = (%g, %g) at μ = %g, beyond the request (%g, %g)", spec.Algo, c.Epsilon, c.Delta, c.Mu, spec.Epsilon, delta)
			}
			pre.TotalEpsilon, pre.TotalDelta, pre.TotalMu = c.Epsilon, delta, c.Mu
			how = fmt.Sprintf("μ = %.4g-GDP (%d-bin octave histogram per feature, σ = %.4g, threshold %.4g, central %.0f %% of the detected records); the algorithm was calibrated at (%.4g, %.3g); whole run μ = %.4g by exact Gaussian-DP composition, certified (%.4g, %.3g)",
				r.Mu, r.Bins, r.Sigma, r.Threshold, 100*(1-2*r.Trim), pre.TrainEpsilon, pre.TrainDelta, c.Mu, pre.TotalEpsilon, pre.TotalDelta)
		} else {
			pre.TotalEpsilon, pre.TotalDelta = r.Epsilon+pre.TrainEpsilon, r.Delta+pre.TrainDelta
			how = fmt.Sprintf("(ε, δ) = (%.4g, %.3g) (%s noise on a %d-bin octave histogram per feature, σ = %.4g, threshold %.4g, central %.0f %% of the detected records); the algorithm ran at (%.4g, %.3g); total (%.4g, %.3g) by basic composition",
				r.Epsilon, r.Delta, r.Mechanism, r.Bins, r.Sigma, r.Threshold, 100*(1-2*r.Trim), pre.TrainEpsilon, pre.TrainDelta, pre.TotalEpsilon, pre.TotalDelta)
		}
		var fallback []string
		for j, ok := range r.Found {
			if !ok {
				name := fmt.Sprint(j + 1)
				if pre.unknownNames != nil {
					name = pre.unknownNames[j] // the schema's feature number
				}
				fallback = append(fallback, name)
			}
		}
		what := "feature ranges"
		if spec.Scale == "bounds" {
			what = fmt.Sprintf("%s; the ranges of its %d unknown features (%s)", spec.Bounds.Describe(), len(r.Lo), abbreviate(pre.unknownNames, 12))
		}
		pre.Note = fmt.Sprintf("%s estimated under DP and mapped to [−1, 1] per record%s: %s", what, normNote(spec), how)
		if pre.Refined {
			name := spec.Bounds.Name
			if name == "" {
				name = spec.Bounds.File
			}
			pre.Note = fmt.Sprintf("feature bounds %s (%s, %d features), --refine-bounds: the ranges of %d features (%s: the numeric ones, and those the schema leaves unknown) estimated under DP, each clamped into its public range, then every feature mapped to [−1, 1] and clipped per record%s: %s",
				spec.Bounds.File, name, spec.Bounds.D(), len(r.Lo), abbreviate(pre.unknownNames, 12), normNote(spec), how)
			pre.Note += fmt.Sprintf("; %d of %d features kept their public range (no estimate found, or none narrower)", pre.RefinedKept, len(r.Found))
			if pre.RefineWhy != "" {
				pre.Note += " (--refine-bounds auto: " + pre.RefineWhy + ")"
			}
		} else if len(fallback) > 0 {
			pre.Note += fmt.Sprintf("; %d of %d features had too few records for the budget and kept the fallback range [−1, 1] (features %s): a public --feature-bounds schema would do better", len(fallback), len(r.Found), abbreviate(fallback, 12))
		}
		if !r.Secure {
			pre.Reasons = append(pre.Reasons, "the feature ranges were released with seeded (or rescaled) noise")
		}
	default: // minmax, standard
		pre.Reasons = append(pre.Reasons, fmt.Sprintf("--scale %s is fitted on the private training records (one record can move every scaled record); the mechanism's guarantee holds for the scaled data only — use --feature-bounds FILE (public ranges) or --scale private (ranges under DP)", spec.Scale))
		pre.Note = fmt.Sprintf("--scale %s fitted on each training split", spec.Scale)
	}
	pre.Private = len(pre.Reasons) == 0
	return nil
}

// normNote says how bounds-scaled records meet ‖x‖ ≤ R.
func normNote(spec Spec) string {
	switch {
	case spec.FeatureRadius == 0:
		return "; no norm clipping (R = 0)"
	case spec.BoundsNorm == "divide":
		return fmt.Sprintf("; then multiplied by R/√d so that ‖x‖ ≤ R = %g (--bounds-norm divide)", spec.FeatureRadius)
	}
	return fmt.Sprintf("; then clipped to ‖x‖ ≤ R = %g (--bounds-norm clip)", spec.FeatureRadius)
}

// abbreviate joins at most k items.
func abbreviate(items []string, k int) string {
	if len(items) <= k {
		return strings.Join(items, ",")
	}
	return strings.Join(items[:k], ",") + fmt.Sprintf(",… (%d more)", len(items)-k)
}

// rangeBudget splits the request (spec.Epsilon, delta) between the range
// release of d features (share) and training: by exact Gaussian-DP
// composition for a Gaussian-DP algorithm (a share of μ²), else by basic
// composition (a share of ε and δ). It returns the range release's
// config, what training is given and the composition's name.
func rangeBudget(spec Spec, d int, delta, share float64) (cfg dp.RangeConfig, te, td float64, comp string, err error) {
	if a, err := pairwise.Lookup(spec.Algo); err == nil && a.GaussianDP && !spec.Tune && delta > 0 {
		mu, trainDelta, fits, err := dp.SplitGDP(spec.Epsilon, delta, share, dp.RangeCoordinates(d, cfg))
		if err != nil {
			return cfg, 0, 0, "", fmt.Errorf("experiment: %w", err)
		}
		if fits {
			cfg.Mu = mu
			return cfg, spec.Epsilon, trainDelta, "gdp", nil
		}
	}
	re, rd, e, dt, err := dp.SplitBudget(spec.Epsilon, delta, share)
	if err != nil {
		return cfg, 0, 0, "", fmt.Errorf("experiment: %w", err)
	}
	cfg.Epsilon, cfg.Delta = re, rd
	return cfg, e, dt, "basic", nil
}

// RefineDetects is --refine-bounds auto's rule, from public numbers only
// (n training records, the d features to estimate, the request and the
// algorithm): refine when the range release would detect a bin that holds
// a quarter of the records with probability ≥ 97.7 % (≥ 93 % for δ = 0,
// whose noise is Laplace of scale b), n/4 ≥ τ + 2σ (σ, or b, and the
// detection threshold τ of dp.RangeNoise). Below that the estimates
// are mostly not found, each feature keeps its public range, and the
// share would be spent for nothing. It returns the decision and why.
func RefineDetects(spec Spec, n, d int) (bool, string, error) {
	share := spec.RangeShare
	if share == 0 {
		share = dp.DefaultRangeShare
	}
	cfg, _, _, _, err := rangeBudget(spec, d, requestDelta(spec, n), share)
	if err != nil {
		return false, "", err
	}
	sigma, tau, err := dp.RangeNoise(d, cfg)
	if err != nil {
		return false, "", fmt.Errorf("experiment: %w", err)
	}
	need := tau + 2*sigma
	if float64(n)/4 >= need {
		return true, fmt.Sprintf("n/4 = %.0f ≥ τ + 2σ = %.0f: a bin holding a quarter of the records is detected", float64(n)/4, need), nil
	}
	return false, fmt.Sprintf("n/4 = %.0f < τ + 2σ = %.0f (σ = %.3g over %d features): too few records to estimate ranges at this budget; the public ranges are kept and nothing is spent", float64(n)/4, need, sigma, d), nil
}

// refineRanges returns the DP estimates r of a schema's unknown features,
// each clamped into its public range within[k] (wlo[k], whi[k]; NaN: none,
// kept as estimated) — post-processing of the release: a refinement only
// narrows a public range, and a feature whose estimate was not found, or
// is empty after the clamp, keeps its public range.
func refineRanges(r *dp.Ranges, wlo, whi []float64, pre *Preprocessing) (lo, hi []float64) {
	lo, hi = slices.Clone(r.Lo), slices.Clone(r.Hi)
	for k := range lo {
		if math.IsNaN(wlo[k]) {
			continue
		}
		l, h := math.Max(wlo[k], lo[k]), math.Min(whi[k], hi[k])
		if !r.Found[k] || !(h > l) || (l == wlo[k] && h == whi[k]) {
			l, h = wlo[k], whi[k]
			pre.RefinedKept++
		}
		lo[k], hi[k] = l, h
	}
	return lo, hi
}
