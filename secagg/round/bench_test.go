package round

import (
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/pairfed/pairfed/protocol"
)

// BenchmarkWire runs complete rounds through the wire codec (no dropouts)
// and reports the encoded bytes each site sends and receives (a broadcast
// counts once per recipient), with rounds/s of the whole federation in one
// process. Bits = 32.
func BenchmarkWire(b *testing.B) {
	for _, k := range []int{4, 16, 64} {
		for _, d := range []int{8, 256, 65536} {
			b.Run(fmt.Sprintf("K=%d/d=%d", k, d), func(b *testing.B) { benchWire(b, k, d) })
		}
	}
}

func benchWire(b *testing.B, k, d int) {
	sites := make([]string, k)
	for i := range sites {
		sites[i] = fmt.Sprintf("site-%d", i)
	}
	roster, signers := testRoster(b, sites, 9)
	var sent, recv int
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		p := Params{Federation: "f", Job: fmt.Sprintf("job-%d", it), Phase: 1, Sites: sites, Bits: 32, Dim: d, Roster: roster}
		srv, err := NewServer(p, 1)
		if err != nil {
			b.Fatal(err)
		}
		sent, recv = 0, 0
		enc := func(m protocol.Message) protocol.Message {
			buf, err := protocol.Encode(m)
			if err != nil {
				b.Fatal(err)
			}
			m2, err := protocol.Decode(buf)
			if err != nil {
				b.Fatal(err)
			}
			return m2
		}
		size := func(m protocol.Message) int {
			buf, _ := protocol.Encode(m)
			return len(buf)
		}
		clients := map[string]*Site{}
		var out []Outgoing
		for _, s := range sites {
			c, keys, err := NewSite(p, s, signers[s], make([]uint64, d), rand.Reader)
			if err != nil {
				b.Fatal(err)
			}
			clients[s] = c
			sent += size(keys)
			o, _, err := srv.Deliver(s, enc(keys))
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, o...)
		}
		for done := false; !done; {
			var next []Outgoing
			for _, o := range out {
				m := enc(o.Msg)
				for _, s := range sites {
					if o.To != "" && o.To != s {
						continue
					}
					recv += size(o.Msg)
					ans, err := clients[s].Deliver(m)
					if err != nil {
						b.Fatal(err)
					}
					sent += size(ans)
					o2, res, err := srv.Deliver(s, enc(ans))
					if err != nil {
						b.Fatal(err)
					}
					next = append(next, o2...)
					if res != nil {
						done = true
					}
				}
			}
			out = next
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rounds/s")
	b.ReportMetric(float64(sent)/float64(k), "B-sent/site")
	b.ReportMetric(float64(recv)/float64(k), "B-recv/site")
}
