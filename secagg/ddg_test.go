package secagg

import (
	"math"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/dp"
)

// Secure aggregation of distributed-discrete-Gaussian encodings: the
// server's sum is exactly the mod-2^b sum of the survivors' noisy
// encodings, and it decodes to the sum of their clipped vectors within
// the noise of the survivors (a dropped site's vector and noise are in
// neither). The decoding error bound is 8 standard deviations of the
// per-coordinate noise √(n(s² + ¼))·γ, checked on the worst coordinate of
// d = 64 (false failure < 64·10⁻¹⁵).
func TestSecureAggregationOfDDGEncodings(t *testing.T) {
	const k, d = 6, 60
	p := dp.DDGParams{Dim: d, Clip: 1, Sensitivity: 0.05, Scale: 40, Sites: k, RotationSeed: 77}
	g, err := dp.NewDDG(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(k, 4, g.Bits, g.D, 3)
	noise := dp.NewSeededNoise(8).(dp.IntegerNoise)
	xs := map[uint32][]float64{}
	enc := map[uint32][]uint64{}
	for j, id := range cfg.Sites {
		x := make([]float64, d)
		for i := range x {
			x[i] = math.Cos(float64(i+7*j)) / 8
		}
		xs[id] = x
		enc[id] = make([]uint64, g.D)
		if err := g.Encode(enc[id], x, noise); err != nil {
			t.Fatal(err)
		}
	}
	dropped := cfg.Sites[2]
	res, _, err := RunInMemory(cfg, enc, map[uint32]int{dropped: DropMasked}, testRand(3))
	if err != nil {
		t.Fatal(err)
	}
	plain := make([]uint64, g.D)
	want := make([]float64, d)
	for _, id := range cfg.Sites {
		if id == dropped {
			continue
		}
		for i, w := range enc[id] {
			plain[i] += w
		}
		for i, v := range xs[id] {
			want[i] += v
		}
	}
	for i := range plain {
		plain[i] &= uint64(1)<<g.Bits - 1
	}
	if !slices.Equal(res.Sum, plain) {
		t.Fatal("secure sum differs from the plain sum of the noisy encodings")
	}
	got := make([]float64, d)
	if err := g.Decode(got, res.Sum); err != nil {
		t.Fatal(err)
	}
	gm := g.Params().Gamma
	tol := 8 * math.Sqrt(float64(k-1)*(p.Scale*p.Scale+0.25)) * gm
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol {
			t.Fatalf("coordinate %d: decoded %v, want %v ± %v", i, got[i], want[i], tol)
		}
	}
}
