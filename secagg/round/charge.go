package round

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/pairfed/pairfed/dp"
)

// Guarantee is what one site's records get from secure aggregation
// releases of a distributed discrete Gaussian g.
type Guarantee struct {
	// Coordinator is ε against the coordinator alone: the sum holds the
	// noise of at least Threshold sites (a round with fewer survivors
	// aborts before anything is unmasked).
	Coordinator float64
	// Collusion is ε against the coordinator colluding with Colluders
	// sites, who subtract their own noise: Threshold − Colluders shares
	// remain (the site's own share alone, n = 1, at worst).
	Collusion float64
	// Local is ε of the site's own noise share alone — the copies it
	// keeps from its secure source (one share; Keep of its copies when
	// some are removable): what holds if the coordinator colludes with
	// every other site — the guarantee that needs no trust in anyone
	// (+Inf when above 100, as dp.DDG.Epsilon reports it).
	Local     float64
	Threshold int
	Colluders int
	// Floor and CollusionFloor are the numbers of honest noise shares
	// the two guarantees count: t and t − κ with the complete graph, the
	// sparse variant's floors (secagg.SparseFloor) with SecAgg+.
	Floor, CollusionFloor int
	Delta                 float64
}

// Charge returns the guarantee a site must be charged BEFORE it sends its
// masked vector: the number of noise shares in the sum is not known then,
// only that it is at least t (or the round aborts with nothing released),
// so both values are computed at that floor and are never below the
// guarantee the round actually gives (dp.DDG.Epsilon decreases in n). A
// ledger charges Collusion when the consortium's policy counts colluding
// sites, Coordinator otherwise; the report states both, and Local (one
// share) is what remains if every other site colludes.
//
// The result is a pure function of its public inputs (the DDG's parameters,
// rounds, t, κ, δ), so a process computes it once per distinct inputs
// (chargeMemo; concurrent callers wait for the first): every site of a
// job checks the same guarantee at its announcement and again before each
// round — 1 024 sites simulated in one process made it 1 024 RDP searches
// of ≈ 65 ms each, and their accept round timed out.
func Charge(g *dp.DDG, rounds, threshold, colluders int, delta float64) (Guarantee, error) {
	if rounds < 1 {
		return Guarantee{}, fmt.Errorf("round: rounds %d must be ≥ 1", rounds)
	}
	w := make([]float64, rounds)
	for i := range w {
		w[i] = 1
	}
	return ChargeFloors(g, w, threshold, colluders, threshold, threshold-colluders, 1, delta)
}

// ChargeFloors is Charge with the floors of honest noise copies given:
// floor against the coordinator alone, collusion against it with κ
// colluders (the sparse variant's, secagg.SparseFloor; with removable
// copies, fedalgo.SecAgg.Floors; Charge passes t and t − κ), and own, the
// copies of a site's own noise that no one else can remove (its kept
// copies; 1 when each site adds one). With m = g's copies per site, the
// floors must be in [1, t·m] and [1, (t − κ)·m], the second at most the
// first, and own in [1, m]. weights lists the releases the site's records
// have taken part in, each with its weight in (0, 1]: the factor its
// vectors were multiplied by before encoding (dp.DDG.EpsilonWeighted; 1
// for most algorithms, fedalgo.SumRoundWeights).
func ChargeFloors(g *dp.DDG, weights []float64, threshold, colluders, floor, collusion, own int, delta float64) (Guarantee, error) {
	if threshold < 1 || colluders < 0 || colluders >= threshold {
		return Guarantee{}, fmt.Errorf("round: colluders %d must be in [0, t−1] for threshold t = %d", colluders, threshold)
	}
	m := g.Params().Copies
	if floor < 1 || floor > threshold*m || collusion < 1 || collusion > (threshold-colluders)*m || collusion > floor {
		return Guarantee{}, fmt.Errorf("round: floors of %d and %d honest noise copies (without and with %d colluders, %d copies per site) must be in [1, t·m = %d] and [1, (t − κ)·m = %d], the second at most the first", floor, collusion, colluders, m, threshold*m, (threshold-colluders)*m)
	}
	if own < 1 || own > m || own > collusion {
		return Guarantee{}, fmt.Errorf("round: a site's own %d noise copies must be in [1, %d] (its copies) and at most the floor %d", own, m, collusion)
	}
	key := chargeKey{g.Params(), weightsKey(weights), threshold, colluders, floor, collusion, own, delta}
	chargeMu.Lock()
	e, ok := chargeMemo[key]
	if !ok {
		if len(chargeMemo) >= chargeMemoMax {
			clear(chargeMemo)
		}
		e = &chargeEntry{done: make(chan struct{})}
		chargeMemo[key] = e
	}
	chargeMu.Unlock()
	if ok {
		<-e.done
		return e.g, e.err
	}
	e.g, e.err = charge(g, weights, threshold, colluders, floor, collusion, own, delta)
	close(e.done)
	return e.g, e.err
}

type chargeKey struct {
	p                     dp.DDGParams
	weights               string
	threshold, colluders  int
	floor, collusion, own int
	delta                 float64
}

// weightsKey encodes weights exactly (their bits), for chargeKey.
func weightsKey(weights []float64) string {
	b := make([]byte, 0, 8*len(weights))
	for _, w := range weights {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(w))
	}
	return string(b)
}

type chargeEntry struct {
	done chan struct{}
	g    Guarantee
	err  error
}

const chargeMemoMax = 4096

var (
	chargeMu   sync.Mutex
	chargeMemo = map[chargeKey]*chargeEntry{}
)

func charge(g *dp.DDG, weights []float64, threshold, colluders, floor, collusion, own int, delta float64) (Guarantee, error) {
	ec, err := g.EpsilonWeighted(weights, floor, delta)
	if err != nil {
		return Guarantee{}, err
	}
	el, err := g.EpsilonWeighted(weights, collusion, delta)
	if err != nil {
		return Guarantee{}, err
	}
	lo := el
	if collusion > own {
		if lo, err = g.EpsilonWeighted(weights, own, delta); err != nil {
			return Guarantee{}, err
		}
	}
	return Guarantee{Coordinator: ec, Collusion: el, Local: lo, Threshold: threshold, Colluders: colluders, Floor: floor, CollusionFloor: collusion, Delta: delta}, nil
}
