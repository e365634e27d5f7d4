package worker

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-dpegd: one epoch per phase on the site's i-th disjoint subset
// (sizes ⌊n/2^i⌋, the last takes the rest), released once and charged
// to the ledger before it is returned.
func TestWorkerFedDPEGD(t *testing.T) {
	w := newWorker(t) // 64 records, d = 3
	ctx := context.Background()
	a := dpAnnounce("s1")
	a.Algo, a.Phases, a.Eta = fedalgo.FedDPEGD, 6, 0.1
	if outs := w.Step(ctx, a); len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAccept {
		t.Fatalf("announce: %v (%v)", outs, w.Err())
	}
	model := []float64{0, 0, 0}
	total := 0
	for i := 1; i <= 6; i++ {
		outs := w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: i, Model: model})
		if len(outs) != 1 {
			t.Fatalf("phase %d: %v (%v)", i, outs, w.Err())
		}
		u := outs[0].Msg.(*protocol.SiteUpdate)
		wantN := 64 >> i
		if i == 6 {
			wantN = 64 - 32 - 16 - 8 - 4 - 2
		}
		led := w.Ledger()
		// Charged and reported: the epoch's certificate, within the
		// request (exact calibration: just below it).
		if len(led) != i || led[i-1].Records != wantN || u.Weight != float64(wantN) || !(u.Sigma > 0) || led[i-1].Sigma != u.Sigma || u.Secure ||
			!(u.Epsilon > 0.999 && u.Epsilon <= 1) || !(u.Delta > 0 && u.Delta <= 1e-3) || led[i-1].Epsilon != u.Epsilon || led[i-1].Delta != u.Delta {
			t.Fatalf("phase %d: update %+v, ledger %+v", i, u, led)
		}
		total += wantN
		again := w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: i, Model: []float64{1, 1, 1}})
		if !reflect.DeepEqual(again, outs) || len(w.Ledger()) != i {
			t.Fatal("a repeated phase produced a new release")
		}
		model = u.Model
	}
	if total != 64 {
		t.Errorf("epochs cover %d records", total)
	}
}

// fed-oneshot: one release of the local algorithm on all records, with
// its σ list in the update and the ledger; a non-private or unknown local
// algorithm is refused at the announcement.
func TestWorkerFedOneShot(t *testing.T) {
	w := newWorker(t)
	ctx := context.Background()
	a := dpAnnounce("s1")
	a.Algo, a.LocalAlgo, a.Phases, a.Eta = fedalgo.FedOneShot, "dpegd", 1, 0
	w.Step(ctx, a)
	outs := w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 1, Model: []float64{0, 0, 0}})
	if len(outs) != 1 {
		t.Fatalf("%v (%v)", outs, w.Err())
	}
	u := outs[0].Msg.(*protocol.SiteUpdate)
	led := w.Ledger()
	if u.Weight != 64 || len(u.Sigmas) != 6 || u.Sigma != u.Sigmas[0] || u.Secure || len(led) != 1 || led[0].Records != 64 || !reflect.DeepEqual(led[0].Sigmas, u.Sigmas) {
		t.Fatalf("update %+v, ledger %+v", u, led)
	}
	if err := u.Validate(); err != nil {
		t.Fatal(err)
	}
	again := w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 1, Model: []float64{0, 0, 0}})
	if !reflect.DeepEqual(again, outs) || len(w.Ledger()) != 1 {
		t.Fatal("a repeated phase produced a new release")
	}
	for _, local := range []string{"sgd-prev", "no-such-algo"} {
		w := newWorker(t)
		b := dpAnnounce("s1")
		b.Algo, b.LocalAlgo, b.Phases = fedalgo.FedOneShot, local, 1
		if outs := w.Step(ctx, b); len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAbort || w.Err() == nil {
			t.Errorf("local algorithm %s accepted: %v", local, outs)
		}
	}
}

// fed-dp-gd-grad: each round releases the site's full pairwise gradient
// at the broadcast model plus N(0, σ² I) with [K22] Thm 1's
// σ = 8G√(T log(1/δ))/(nε) for its own n and the job's T; charged to the
// ledger (with sensitivity 4G/n) before it is returned, and released once:
// a repeated PhaseStart, with the same or another model, gets the same
// bytes back and no new ledger entry.
func TestWorkerFedDPGDGrad(t *testing.T) {
	w := newWorker(t) // 64 records, d = 3
	ctx := context.Background()
	a := dpAnnounce("s1")
	a.Algo, a.Phases, a.Eta = fedalgo.FedDPGDGrad, 3, 0.25
	if outs := w.Step(ctx, a); len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAccept {
		t.Fatalf("announce: %v (%v)", outs, w.Err())
	}
	// The site's σ is dp-gd-grad's exact calibration: T = 3 releases of the
	// proven sensitivity Δ = 2Γ/n = 2G/64 (Γ = G = 4 for the logistic AUC
	// loss at R = 1) compose to μ = √3·Δ/σ, the largest μ with
	// δ_μ(1) ≤ 1e-3 is 1/AnalyticGaussianSigma(1, 1e-3, 1).
	loss, _ := pairwise.LossByName(pairwise.TaskAUC, "logistic")
	G := loss.Props(1, 1).Lipschitz
	one, _ := dp.AnalyticGaussianSigma(1, 1e-3, 1)
	wantSigma := math.Sqrt(3) * (2 * G / 64) * one
	model := []float64{0, 0, 0}
	for i := 1; i <= 3; i++ {
		outs := w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: i, Model: model})
		if len(outs) != 1 {
			t.Fatalf("phase %d: %v (%v)", i, outs, w.Err())
		}
		u := outs[0].Msg.(*protocol.SiteUpdate)
		led := w.Ledger()
		// Round i is charged the certificate of rounds 1…i (exact GDP
		// composition of i releases of σ and 2G/64, 3 coordinates each).
		sens, sig := make([]float64, i), make([]float64, i)
		for k := range sens {
			sens[k], sig[k] = 2*G/64, u.Sigma
		}
		cert, err := dp.CertifyGaussian(dp.GaussianPlan{Sensitivities: sens, Dim: 3}, sig, 1, 1e-3)
		if err != nil {
			t.Fatal(err)
		}
		if len(led) != i || led[i-1].Records != 64 || u.Weight != 64 || math.Abs(u.Sigma-wantSigma) > 1e-9*wantSigma ||
			led[i-1].Sigma != u.Sigma || led[i-1].Sensitivity != 2*G/64 || u.Secure || led[i-1].Phase != i ||
			u.Epsilon != cert.Epsilon || u.Delta != cert.Delta || led[i-1].Epsilon != cert.Epsilon || led[i-1].Delta != cert.Delta ||
			!(cert.Epsilon <= 1 && cert.Delta <= 1e-3) || (i < 3 && !(cert.Epsilon < 0.99)) {
			t.Fatalf("phase %d: update %+v, ledger %+v (want σ = %g)", i, u, led, wantSigma)
		}
		if err := u.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, m := range [][]float64{model, {0.1, 0.2, 0.3}} {
			again := w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: i, Model: m})
			if !reflect.DeepEqual(again, outs) || len(w.Ledger()) != i {
				t.Fatal("a repeated phase produced a new release")
			}
		}
		model = []float64{0.1 * float64(i), 0, -0.05}
	}

	// A site with one record has no pair: it refuses at the announcement,
	// before any release.
	tiny, err := New(Config{Federation: "f", Site: "s1", Data: toyData(1, 3), Rand: rand.New(rand.NewPCG(1, 2)), Noise: dp.NewSeededNoise(1)})
	if err != nil {
		t.Fatal(err)
	}
	b := dpAnnounce("s1")
	b.Algo, b.Phases = fedalgo.FedDPGDGrad, 2
	if outs := tiny.Step(ctx, b); len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAbort || tiny.Err() == nil || len(tiny.Ledger()) != 0 {
		t.Fatalf("a 1-record site accepted fed-dp-gd-grad: %v", outs)
	}
	// A non-smooth loss is refused by [K22]'s checks before any release.
	h := newWorker(t)
	c := dpAnnounce("s1")
	c.Algo, c.Phases, c.Loss = fedalgo.FedDPGDGrad, 2, "hinge"
	h.Step(ctx, c)
	if outs := h.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 1, Model: []float64{0, 0, 0}}); len(outs) != 1 || outs[0].Msg.Kind() != protocol.KindAbort || len(h.Ledger()) != 0 {
		t.Fatalf("hinge accepted: %v", outs)
	}
}
