package dp

import (
	"math"
	"slices"
	"testing"
)

// RemovableSplit: the K − κ honest sites' kept copies always cover the
// (t − κ)·m copies of t − κ honest survivors (the guarantee's floor), keep
// ≤ m ≤ 16, and the full-set noise K·keep/m of one site's is the smallest
// any m ≤ min(K − κ, 16) gives: within 1/m of (t − κ)/(K − κ) of it. Every
// valid (K, t, κ) with K ≤ 300 (t > (K + κ)/2, κ < t), and named cases.
func TestRemovableSplit(t *testing.T) {
	for _, c := range []struct{ k, th, kappa, m, keep int }{
		{4, 3, 0, 4, 3},        // the default threshold at 4 sites: 3 of 4 copies kept
		{16, 11, 0, 16, 11},    // at 16: exact
		{5, 5, 0, 1, 1},        // t = K: nothing to remove
		{2, 2, 0, 1, 1},        // two sites
		{1000, 667, 0, 16, 11}, // r = 0.667: 11/16 = 0.6875 is the closest m ≤ 16 gets
		{10, 8, 2, 4, 3},       // κ = 2: (8 − 2)/(10 − 2) = 3/4
	} {
		m, keep := RemovableSplit(c.k, c.th, c.kappa)
		if m != c.m || keep != c.keep {
			t.Errorf("K = %d, t = %d, κ = %d: %d copies, %d kept; want %d, %d", c.k, c.th, c.kappa, m, keep, c.m, c.keep)
		}
	}
	worst := 0.0
	for k := 2; k <= 300; k++ {
		for kappa := 0; kappa < k; kappa++ {
			for th := (k+kappa)/2 + 1; th <= k; th++ {
				if kappa >= th {
					continue
				}
				m, keep := RemovableSplit(k, th, kappa)
				h, n := th-kappa, k-kappa
				if m < 1 || m > RemovableMaxCopies || keep < 1 || keep > m {
					t.Fatalf("K = %d, t = %d, κ = %d: %d copies, %d kept", k, th, kappa, m, keep)
				}
				if n*keep < h*m {
					t.Fatalf("K = %d, t = %d, κ = %d: (K − κ)·keep = %d < (t − κ)·m = %d: the full set holds fewer copies than the floor", k, th, kappa, n*keep, h*m)
				}
				for mm := 1; mm <= min(n, RemovableMaxCopies); mm++ {
					kk := (mm*h + n - 1) / n
					if kk*m < keep*mm {
						t.Fatalf("K = %d, t = %d, κ = %d: m = %d keeps %d/%d < %d/%d", k, th, kappa, mm, kk, mm, keep, m)
					}
				}
				r := float64(h) / float64(n)
				if ex := float64(keep)/float64(m)/r - 1; ex > worst {
					worst = ex
				}
				if th == k && m != 1 {
					t.Fatalf("t = K = %d: %d copies", k, m)
				}
			}
		}
	}
	// keep/m ≤ r + 1/m with m = 16 available whenever K − κ ≥ 16, and
	// r > 1/2: at most 1/8 above r.
	if worst > 0.125 {
		t.Errorf("the full-set noise is up to %.3f above the floor's; want ≤ 1/8", worst)
	}
	t.Logf("worst full-set excess over (t − κ)/(K − κ): %.4f", worst)
}

// The removable copies come off exactly: a site's encoding with m − keep
// copies from RemovableNoise(seed), less Remove with the same seed, decodes
// to the encoding of the same vector with only its kept copies (the same
// draws of its own source), bit for bit; without the seed's draws
// removed it does not.
func TestDDGRemovableCopiesComeOffExactly(t *testing.T) {
	const d = 50
	p := DDGParams{Dim: d, Clip: 1, Sensitivity: 0.1, Scale: 40, Sites: 4, Copies: 4, RotationSeed: 3}
	g, err := NewDDG(p)
	if err != nil {
		t.Fatal(err)
	}
	kp := p
	kp.Copies = 3
	gk, err := NewDDG(kp)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, d)
	for i := range x {
		x[i] = math.Cos(float64(i)) / 10
	}
	seed := NewRemovableSeed(NewSeededNoise(77).(*Mechanism))
	if seed == (RemovableSeed{}) {
		t.Fatal("a zero seed")
	}
	enc, kept := make([]uint64, g.D), make([]uint64, gk.D)
	if err := g.EncodeRemovable(enc, x, NewSeededNoise(5).(*Mechanism), 1, RemovableNoise(seed)); err != nil {
		t.Fatal(err)
	}
	if err := gk.Encode(kept, x, NewSeededNoise(5).(*Mechanism)); err != nil {
		t.Fatal(err)
	}
	before, want := make([]float64, d), make([]float64, d)
	if err := g.Decode(before, enc); err != nil {
		t.Fatal(err)
	}
	if err := gk.Decode(want, kept); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(before, want) {
		t.Fatal("the removable copy added nothing")
	}
	if err := g.Remove(enc, 1, RemovableNoise(seed)); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, d)
	if err := g.Decode(got, enc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after Remove: %v…, want %v…", got[:3], want[:3])
	}
	// Another seed's draws are not these.
	other := NewRemovableSeed(NewSeededNoise(78).(*Mechanism))
	if err := g.EncodeRemovable(enc, x, NewSeededNoise(5).(*Mechanism), 1, RemovableNoise(seed)); err != nil {
		t.Fatal(err)
	}
	if err := g.Remove(enc, 1, RemovableNoise(other)); err != nil {
		t.Fatal(err)
	}
	if err := g.Decode(got, enc); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(got, want) {
		t.Fatal("another seed removed the copy")
	}
	// Copies = 1 (and 0, its default) is Encode as before: one draw.
	one := p
	one.Copies = 0
	g1, err := NewDDG(one)
	if err != nil || g1.Params().Copies != 1 {
		t.Fatalf("Copies 0: %v, %+v", err, g1.Params())
	}
	// Errors: every copy removable, a negative count, a missing source,
	// a length, a count outside [1, m).
	for _, bad := range []func() error{
		func() error {
			return g.EncodeRemovable(enc, x, NewSeededNoise(5).(*Mechanism), 4, RemovableNoise(seed))
		},
		func() error { return g.EncodeRemovable(enc, x, NewSeededNoise(5).(*Mechanism), -1, nil) },
		func() error { return g.EncodeRemovable(enc, x, NewSeededNoise(5).(*Mechanism), 1, nil) },
		func() error { return g.Remove(enc[:3], 1, RemovableNoise(seed)) },
		func() error { return g.Remove(enc, 0, RemovableNoise(seed)) },
		func() error { return g.Remove(enc, 4, RemovableNoise(seed)) },
	} {
		if bad() == nil {
			t.Error("accepted")
		}
	}
	for _, c := range []int{-1, DDGMaxCopies + 1} {
		q := p
		q.Copies = c
		if _, err := NewDDG(q); err == nil {
			t.Errorf("Copies = %d accepted", c)
		}
	}
}

// m copies of N_ℤ(0, s²): the noise variance is m·s² and the modulus
// holds K sites' m copies. A seeded statistical check: 4 sites × 4 copies
// at s = 3, 4096 coordinates of a zero vector; the sample variance of
// 4096 draws of variance σ² = 16·9 has relative s.e. √(2/4096) ≈ 2.2 %,
// so ±12 % (5.4 s.e.) fails with probability < 10⁻⁷.
func TestDDGCopiesVariance(t *testing.T) {
	p := DDGParams{Dim: 4096, Clip: 1, Sensitivity: 1, Gamma: 1, Scale: 3, Sites: 4, Copies: 4, RotationSeed: 1}
	g, err := NewDDG(p)
	if err != nil {
		t.Fatal(err)
	}
	p1 := p
	p1.Copies = 1
	g1, err := NewDDG(p1)
	if err != nil {
		t.Fatal(err)
	}
	if g.Bits < g1.Bits {
		t.Fatalf("modulus 2^%d with 4 copies, 2^%d with one", g.Bits, g1.Bits)
	}
	n := NewSeededNoise(3).(*Mechanism)
	sum := make([]uint64, g.D)
	enc := make([]uint64, g.D)
	zero := make([]float64, p.Dim)
	for range p.Sites {
		if err := g.Encode(enc, zero, n); err != nil {
			t.Fatal(err)
		}
		for i := range sum {
			sum[i] += enc[i]
		}
	}
	half := uint64(1) << (g.Bits - 1)
	v := 0.0
	for _, w := range sum {
		w &= 1<<g.Bits - 1
		x := float64(int64(w))
		if w >= half {
			x = float64(int64(w) - int64(1)<<g.Bits)
		}
		v += x * x
	}
	v /= float64(len(sum))
	want := float64(p.Sites*p.Copies) * p.Scale * p.Scale
	if math.Abs(v/want-1) > 0.12 {
		t.Fatalf("variance %.1f, want %.1f (4 sites × 4 copies × s²)", v, want)
	}
}
