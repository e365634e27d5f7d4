package secagg

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// BenchmarkRound runs complete rounds (K sites and the server in one
// process, no dropouts unless named) and reports rounds/s and the bytes
// each site sends and receives (msgpack-encoded messages, the wire body).
// Costs: per site O(K) key agreements, share encryptions and PRG streams
// of d words (O(K·d) work, O(K + d) bytes sent, O(K) received); at the
// server O(K·d) additions, O(K·t²) field operations to reconstruct the K
// seeds, and O(K·d) PRG words per dropped site. The active variant (the
// default) adds per site 2 signatures, ≤ 2K verifications and one round
// trip; the cells marked variant=hbc run the honest-but-curious variant at
// K = 16 for comparison. The long-term signing keys are drawn once, out of
// the timing (they are not per round). Run by scripts/bench-secagg.sh.
func BenchmarkRound(b *testing.B) {
	for _, k := range []int{4, 16, 64} {
		for _, d := range []int{8, 256, 65536} {
			for _, drop := range []int{0, 1} {
				if drop == 1 && k != 16 {
					continue
				}
				name := fmt.Sprintf("K=%d/d=%d/dropped=%d", k, d, drop)
				b.Run(name, func(b *testing.B) { benchRound(b, k, d, drop, false) })
				if k == 16 && drop == 0 {
					b.Run(name+"/variant=hbc", func(b *testing.B) { benchRound(b, k, d, drop, true) })
				}
			}
		}
	}
}

func benchRound(b *testing.B, k, d, drop int, hbc bool) {
	cfg := testConfig(k, DefaultThreshold(k), 32, d, 1)
	var signers map[uint32]ed25519.PrivateKey
	if hbc {
		cfg.HonestButCurious = true
	} else {
		cfg, signers = withSigners(b, cfg, 2)
	}
	inputs := map[uint32][]uint64{}
	for _, id := range cfg.Sites {
		inputs[id] = make([]uint64, d)
	}
	dropAt := map[uint32]int{}
	for i := 0; i < drop; i++ {
		dropAt[cfg.Sites[i]] = DropMasked
	}
	var sent, recv int
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, tr, err := RunInMemorySigned(cfg, signers, inputs, dropAt, rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			sent, recv = wireBytes(b, cfg, tr)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rounds/s")
	b.ReportMetric(float64(sent), "B-sent/site")
	b.ReportMetric(float64(recv), "B-recv/site")
}

// wireBytes returns the mean bytes a surviving site sends and receives in
// a round: its own messages, and the key list, its forwarded shares, the
// unmask request and (active variant) the consistency signatures.
func wireBytes(b *testing.B, cfg Config, tr *Transcript) (sent, recv int) {
	size := func(v any) int {
		buf, err := msgpack.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		return len(buf)
	}
	for _, m := range tr.Adverts {
		sent += size(m)
	}
	for _, m := range tr.Shares {
		sent += size(m)
	}
	for _, m := range tr.Masked {
		sent += size(m)
	}
	for _, m := range tr.Checks {
		sent += size(m)
	}
	for _, m := range tr.Unmask {
		sent += size(m)
	}
	keyList := KeyList{Keys: tr.Adverts}
	recv = len(tr.Shares) * size(keyList)
	for _, m := range tr.Shares {
		recv += size(m) // every ciphertext is forwarded once
	}
	survivors := make([]uint32, 0, len(tr.Masked))
	for _, m := range tr.Masked {
		survivors = append(survivors, m.From)
	}
	recv += len(tr.Masked) * size(UnmaskRequest{Survivors: survivors})
	if len(tr.Checks) > 0 {
		recv += len(tr.Checks) * size(ConsistencySigs{Sigs: tr.Checks})
	}
	n := len(tr.Masked)
	return sent / n, recv / n
}

// BenchmarkAccusation is the cost of one verifiable accusation (dleq.go):
// the accuser's proof, and the server's judgement — the proof's check
// (three strict point decodings and the DLEQ verification), the key's
// derivation and the re-opening of the dealer's ciphertext against its
// commitment.
func BenchmarkAccusation(b *testing.B) {
	rnd := testRand(80)
	cfg, _ := withSigners(b, testConfig(3, 2, 16, 1, 80), 80)
	a, _ := newEncKey(rnd)
	d, _ := newEncKey(rnd)
	ct, _ := seal(make([]byte, 32), cfg.RoundID, 2, 1, make([]byte, 2*shareLen+nonceLen), rnd)
	acc, err := a.accuse(cfg.RoundID, 1, 2, d.pub, rnd)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("prove", func(b *testing.B) {
		for range b.N {
			a.accuse(cfg.RoundID, 1, 2, d.pub, rnd)
		}
	})
	b.Run("judge", func(b *testing.B) {
		for range b.N {
			key, err := cfg.checkAccusation(1, a.Bytes(), d.Bytes(), acc)
			if err != nil {
				b.Fatal(err)
			}
			cfg.openDealt(key, 2, 1, ct, &ShareCommit{To: 1, Key: make([]byte, 32), Seed: make([]byte, 32)})
		}
	})
}
