package pairwise

import "math/rand/v2"

// PrevInstance is [Y21a] Alg 1's pairing: at step t it draws i_t uniformly
// from [n] with replacement and pairs z_{i_t} with the previous draw
// z_{i_{t−1}} (i_0 is drawn before the first step). O(1) per step.
type PrevInstance struct {
	N    int
	prev int
	init bool
}

func (p *PrevInstance) Next(rng *rand.Rand) (int, int, bool) {
	if !p.init {
		p.prev = rng.IntN(p.N)
		p.init = true
	}
	i := rng.IntN(p.N)
	j := p.prev
	p.prev = i
	return i, j, true
}

// Stream is [Y21a] Alg 2's pairing in the online setting: records arrive in
// stream order z_0, z_1, …; step t pairs z_t with z_{t−1}. Order maps the
// stream position to a record index (nil = identity). After the stream ends
// Next reports no pair.
type Stream struct {
	Order []int
	N     int
	t     int
}

func (s *Stream) at(k int) int {
	if s.Order != nil {
		return s.Order[k]
	}
	return k
}

func (s *Stream) Next(*rand.Rand) (int, int, bool) {
	s.t++
	if s.t >= s.N {
		return 0, 0, false
	}
	return s.at(s.t), s.at(s.t - 1), true
}

// UniformPair draws (i, j) uniformly from the ordered pairs with i ≠ j
// (Lei et al. 2020's SGD; the authors' code's get_pair_idx).
type UniformPair struct{ N int }

func (u UniformPair) Next(rng *rand.Rand) (int, int, bool) {
	i := rng.IntN(u.N)
	j := rng.IntN(u.N - 1)
	if j == i {
		j = u.N - 1
	}
	return i, j, true
}

// IndexSequence replays a fixed sequence of draws, pairing each draw with the
// one before it, and pairing the first with the last as numpy's ids[t−1]
// does for t = 0 in the authors' code. It exists to replay their exact
// protocol and for tests.
type IndexSequence struct {
	Ids []int
	t   int
}

func (s *IndexSequence) Next(*rand.Rand) (int, int, bool) {
	k := s.t
	s.t++
	if k >= len(s.Ids) {
		return 0, 0, false
	}
	p := k - 1
	if p < 0 {
		p = len(s.Ids) - 1
	}
	return s.Ids[k], s.Ids[p], true
}

// Reservoir is a size-s reservoir sample of a stream (Vitter's algorithm R),
// used by olp's buffer ([Kar et al. 2013]) and oam-gra's buffers
// ([Zhao et al. 2011]).
type Reservoir struct {
	Cap   int
	Items []int
	seen  int
}

// Add offers item to the reservoir; it returns the slot it replaced or was
// appended to, or −1 when it was not kept.
func (r *Reservoir) Add(item int, rng *rand.Rand) int {
	r.seen++
	if len(r.Items) < r.Cap {
		r.Items = append(r.Items, item)
		return len(r.Items) - 1
	}
	k := rng.IntN(r.seen)
	if k < r.Cap {
		r.Items[k] = item
		return k
	}
	return -1
}

// Seen is the number of items offered so far.
func (r *Reservoir) Seen() int { return r.seen }
