package store

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/worker"
)

// Fuzzing of the state-file decoders (in .ci/run, 10 s each): whatever a
// file holds, decoding never panics, and what is accepted is an entry a
// ledger may hold — finite ε ≥ 0, δ in [0, 1), non-negative σ — that
// encodes back to an equal entry (nothing was partially read). Each input
// is also fed in two halves with a newline between (a torn write
// followed by a later append).

func ledgerSeeds(f *testing.F) {
	f.Add([]byte(goodReleaseLine + "\n"))
	f.Add([]byte(goodReleaseLine + "\n" + goodReleaseLine + " {}\n"))
	f.Add([]byte(`{"job":"j","phase":1,"records":1,"sigma":0,"epsilon":-1,"delta":0,"secure":false}` + "\n"))
	f.Add([]byte(`{"job":"j","phase":1,"records":1,"sigma":0,"epsilon":1e999,"delta":0,"secure":false}` + "\n"))
	f.Add([]byte("\n\n{}\n"))
}

const goodReleaseLine = `{"job":"old-job","phase":1,"records":40,"sigma":2.5,"sigmas":[2.5,1],"sensitivity":0.5,"epsilon":0.8,"delta":0.001,"secure":true,"mechanism":"gaussian","time":"2026-01-02T03:04:05Z"}`

const goodChargeLine = `{"key":"j/a/0","site":"a","job":"j","phase":0,"algorithm":"fed-dpegd","mechanism":"gaussian","records":40,"epsilon":0.5,"delta":0.001,"private":true,"accountant":"x","time":"2026-01-01T00:00:00Z"}`

func finiteNonNeg(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0 }

func FuzzLedgerDecode(f *testing.F) {
	ledgerSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, append(append(b[:len(b)/2:len(b)/2], '\n'), b[len(b)/2:]...)} {
			var got []worker.Release
			err := scanLines("fuzz", in[:bytes.LastIndexByte(in, '\n')+1], func(line []byte) error {
				r, err := decodeRelease(line)
				if err == nil {
					got = append(got, r)
				}
				return err
			})
			if err != nil {
				continue
			}
			for _, r := range got {
				if !finiteNonNeg(r.Epsilon) || !(r.Delta >= 0 && r.Delta < 1) || !finiteNonNeg(r.Sigma) || r.Phase < 1 || r.Records < 0 {
					t.Fatalf("accepted %+v", r)
				}
				enc, err := json.Marshal(r)
				if err != nil {
					t.Fatalf("accepted entry does not encode: %v", err)
				}
				back, err := decodeRelease(enc)
				if err != nil {
					t.Fatalf("re-encoded entry %s rejected: %v", enc, err)
				}
				if !back.Time.Equal(r.Time) {
					t.Fatalf("time changed: %v vs %v", back.Time, r.Time)
				}
			}
		}
	})
}

func FuzzChargesDecode(f *testing.F) {
	f.Add([]byte(goodChargeLine + "\n"))
	f.Add([]byte(goodChargeLine + "[]\n"))
	f.Add([]byte(`{"key":"j/b/0","site":"a","job":"j","phase":0}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got []coordinator.Charge
		err := scanLines("fuzz", b[:bytes.LastIndexByte(b, '\n')+1], func(line []byte) error {
			c, err := decodeCharge(line)
			if err == nil {
				got = append(got, c)
			}
			return err
		})
		if err != nil {
			return
		}
		for _, c := range got {
			if !finiteNonNeg(c.Epsilon) || !(c.Delta >= 0 && c.Delta < 1) || !finiteNonNeg(c.Sigma) || c.Phase < 0 || c.Key != coordinator.ChargeKey(c.Job, c.Site, c.Phase) {
				t.Fatalf("accepted %+v", c)
			}
			enc, _ := json.Marshal(c)
			if _, err := decodeCharge(enc); err != nil {
				t.Fatalf("re-encoded charge %s rejected: %v", enc, err)
			}
		}
		// Whatever was accepted composes to finite spends.
		for _, sp := range coordinator.Spent(got) {
			if math.IsNaN(sp.Epsilon) || sp.Epsilon < 0 {
				t.Fatalf("spend %+v", sp)
			}
		}
	})
}

func FuzzBudgetsDecode(f *testing.F) {
	f.Add([]byte(`{"a":{"epsilon":1,"delta":0.1}}`))
	f.Add([]byte(`{"a":{"epsilon":-1,"delta":0.1}} {}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := map[string]coordinator.Budget{}
		if err := decodeStrict(b, &out); err != nil {
			return
		}
		// LoadBudgets validates after decoding; a decoded file that
		// passes must give usable budgets.
		for _, bud := range out {
			if bud.Validate() == nil && (!finiteNonNeg(bud.Epsilon) || !(bud.Delta >= 0 && bud.Delta < 1)) {
				t.Fatalf("budget %+v validated", bud)
			}
		}
	})
}

func FuzzCheckpointDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"members":{"a":{"records":5,"dim":1}},"queue":[],"status":{},"clients":{}}`))
	f.Add([]byte(`{"version":1,"running":{"submit":{"Job":"j"},"announce":null,"phase":0}}`))
	f.Add([]byte(`{"version":1} x`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var cp coordinator.Checkpoint
		if err := decodeStrict(b, &cp); err != nil {
			return
		}
		// Restoring any decodable checkpoint returns a service or an
		// error; it never panics.
		s, err := coordinator.RestoreService(coordinator.ServiceConfig{Federation: "f"}, &cp)
		if err == nil {
			s.Resume()
			s.Tick()
		}
	})
}
