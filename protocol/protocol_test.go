package protocol

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden encodings in testdata/")

// samples is one message of every kind; their encodings are the golden
// files testdata/<kind>.bin.
func samples() []Message {
	return []Message{
		&Join{Site: "site-0", Records: 154, Dim: 8},
		&Heartbeat{Site: "site-0", Seq: 7},
		&JobAnnounce{Job: "job-1", Algo: "fed-dp-local-sgd", Task: "auc", Loss: "logistic", Params: 8, Phases: 8,
			LocalPasses: 1, Eta: 0.25, ParamRadius: 1, FeatureRadius: 1, Epsilon: 1, Delta: 1e-3, Seed: 42,
			Sites: []string{"site-0", "site-1"}},
		&PhaseStart{Job: "job-1", Phase: 3, Model: []float64{0.5, -0.25, 0, 1e-300}},
		&SiteUpdate{Job: "job-1", Phase: 3, Site: "site-1", Model: []float64{0.5, -0.25, 0, 1}, Weight: 19,
			Sigma: 0.125, Epsilon: 1, Delta: 1e-3, Secure: true},
		&Abort{Job: "job-1", From: "coordinator", Reason: "quorum lost"},
		&Result{Job: "job-1", Phases: 8, Model: []float64{1, 2, 3}, Sites: []string{"site-0", "site-1"}},
		&Leave{Site: "site-1", Reason: "shutdown"},
		&JobSubmit{Job: "job-2", Client: "c-1", Algo: "fed-dp-local-sgd", MinSites: 2, Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, Seed: 9},
		&JobStatus{Job: "job-2", Status: StatusCompleted, Algo: "fed-dp-local-sgd", Phases: 8, Sites: []string{"site-0", "site-1"},
			Dropped: []string{"site-2"}, Refused: []string{"site-3"}, Model: []float64{0.5, -1}, AUC: 0.8125, TestRecords: 154,
			Privacy: []SiteReport{{Site: "site-0", Records: 300, Epsilon: 1, Delta: 1e-3, Sigmas: []float64{0.5, 0.25}, Secure: true}}},
		&Refuse{Job: "job-2", Site: "site-3", Reason: "privacy budget exceeded"},
		&Accept{Job: "job-2", Site: "site-0", Instance: "i-0a1b2c"},
		&JobQuery{Job: "job-2", Client: "c-2"},
		&JobList{Client: "c-3", After: "job-1", Limit: 50},
		&JobPage{Jobs: []JobSummary{
			{Job: "job-1", Algo: "fed-avg", Status: StatusCompleted, Privacy: "NOT private: fed-avg adds no noise", Sites: []string{"site-0"}, Submitted: 1795000000, Finished: 1795000060},
			{Job: "job-2", Algo: "fed-dp-lda", Status: StatusRunning, Sites: []string{"site-0", "site-1"}, Submitted: 1795000100},
		}, Next: "job-2", Total: 3},
		&JobCancel{Job: "job-2", Client: "c-4"},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range samples() {
		b, err := Encode(m)
		if err != nil {
			t.Fatalf("%v: %v", m.Kind(), err)
		}
		if Kind(b[0]) != m.Kind() {
			t.Errorf("%v: first byte %d", m.Kind(), b[0])
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%v: decode: %v", m.Kind(), err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%v: round trip\n got %#v\nwant %#v", m.Kind(), got, m)
		}
	}
}

// The calibration of a job travels in JobSubmit and JobAnnounce (appended,
// omitted when empty: the golden encodings above have none).
func TestCalibrationRoundTrip(t *testing.T) {
	for _, m := range []Message{
		&JobSubmit{Job: "j", Client: "c", Algo: "fed-dpegd", MinSites: 1, Epsilon: 1, Calibration: CalibrationPaper},
		&JobAnnounce{Job: "j", Algo: "fed-dpegd", Task: "auc", Loss: "logistic", Params: 2, Phases: 1, Epsilon: 1, Delta: 1e-3, Sites: []string{"s"}, Calibration: CalibrationExact},
	} {
		b, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Fatalf("%v: %#v, %v", m.Kind(), got, err)
		}
	}
}

const testSchema = `{"version": 1, "features": [{"name": "age", "lo": 21, "hi": 90}, {"lo": 0, "hi": 1, "count": 2}]}`

func schemaSamples() []Message {
	return []Message{
		&JobSubmit{Job: "j", Client: "c", Algo: "fed-dp-lda", MinSites: 1, Epsilon: 1, Schema: testSchema},
		&JobAnnounce{Job: "j", Algo: "fed-dp-lda", Task: "auc", Loss: "logistic", Params: 3, Phases: 2, Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, ParamRadius: 1, Sites: []string{"s"}, Schema: testSchema},
	}
}

// The feature-bounds schema travels in JobSubmit and JobAnnounce
// (appended, omitted when empty: the golden encodings have none); an
// oversized, non-JSON, non-object or invalid UTF-8 schema is refused by
// the decoder, naming the job.
func TestSchemaRoundTrip(t *testing.T) {
	for _, m := range schemaSamples() {
		b := roundTrip(t, m)
		if !bytes.Contains(b, []byte(`"lo": 21`)) {
			t.Errorf("%v: encoding lacks the schema text", m.Kind())
		}
	}
	for _, m := range samples() {
		if b, _ := Encode(m); bytes.Contains(b, []byte("schema")) {
			t.Errorf("%v without a schema encodes the field", m.Kind())
		}
	}
	big := `{"features": [], "description": "` + strings.Repeat("x", MaxSchemaBytes) + `"}`
	for _, c := range []struct{ name, schema, want string }{
		{"oversized", big, "exceeds 1048576"},
		{"not JSON", `{"features": [`, "not one JSON object"},
		{"array", `[{"lo": 0, "hi": 1}]`, "not one JSON object"},
		{"two values", `{} {}`, "not one JSON object"},
		{"bad UTF-8", "{\"name\": \"\xff\"}", "not valid UTF-8"},
	} {
		for _, m := range schemaSamples() {
			switch m := m.(type) {
			case *JobSubmit:
				m.Schema = c.schema
			case *JobAnnounce:
				m.Schema = c.schema
			}
			b, err := encodeUnchecked(m, Version)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Decode(b); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "job j") {
				t.Errorf("%s %v: err = %v, want it to mention %q and the job", c.name, m.Kind(), err, c.want)
			}
		}
	}
}

// The (ε, δ) the coordinator's ledger charged each site travels in the
// status's site reports (appended, omitted when zero: the golden
// job-status, which has none, is unchanged); its bounds are the request.
func TestSiteReportCertifiedRoundTrip(t *testing.T) {
	m := &JobStatus{Job: "j", Status: StatusCompleted, Algo: "fed-dp-ssp", Phases: 1, Sites: []string{"a", "b"},
		Privacy: []SiteReport{
			{Site: "a", Records: 40, Epsilon: 0.5, Delta: 1e-3, Sigmas: []float64{2}, Secure: true, CertifiedEpsilon: 0.49, CertifiedDelta: 9.5e-4},
			{Site: "b", Records: 40, Epsilon: 0.5, Delta: 1e-3, Sigmas: []float64{2}, Secure: true, CertifiedEpsilon: 0.5, CertifiedDelta: 1e-3}, // at the request: allowed
		}}
	b := roundTrip(t, m)
	if !bytes.Contains(b, []byte("certified_epsilon")) || !bytes.Contains(b, []byte("certified_delta")) {
		t.Errorf("encoding %x lacks the certified fields", b)
	}
	m.Privacy = m.Privacy[:1]
	m.Privacy[0].CertifiedEpsilon, m.Privacy[0].CertifiedDelta = 0, 0
	if b, err := Encode(m); err != nil || bytes.Contains(b, []byte("certified")) {
		t.Errorf("zero certified fields are not omitted: %x, %v", b, err)
	}
	// Encode validates too: a coordinator never sends a charge above the request.
	m.Privacy[0].CertifiedEpsilon = 0.75
	if _, err := Encode(m); err == nil || !strings.Contains(err.Error(), "certified epsilon = 0.75 exceeds the requested 0.5") {
		t.Errorf("encode of a charge above the request: err = %v", err)
	}
}

func TestGolden(t *testing.T) {
	for _, m := range samples() {
		b, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", m.Kind().String()+".bin")
		if *rewrite {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./protocol -run Golden -rewrite to create it)", err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%v: encoding changed: the wire format is frozen for version %d\n got %x\nwant %x", m.Kind(), Version, b, want)
		}
		got, err := Decode(want)
		if err != nil {
			t.Fatalf("%v: golden does not decode: %v", m.Kind(), err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%v: golden decodes to %#v", m.Kind(), got)
		}
	}
}

// TestKindsAppendOnly pins the numeric kind values: changing one breaks
// every deployed peer.
func TestKindsAppendOnly(t *testing.T) {
	want := map[Kind]byte{KindJoin: 1, KindHeartbeat: 2, KindJobAnnounce: 3, KindPhaseStart: 4,
		KindSiteUpdate: 5, KindAbort: 6, KindResult: 7, KindLeave: 8, KindJobSubmit: 9, KindJobStatus: 10, KindRefuse: 11, KindAccept: 12, KindJobQuery: 13}
	for k, v := range want {
		if byte(k) != v {
			t.Errorf("%v = %d, was %d: kinds are append-only", k, byte(k), v)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	good, _ := Encode(&PhaseStart{Job: "j", Phase: 1, Model: []float64{1, 2}})
	mustEncode := func(m Message) []byte {
		t.Helper()
		// bypass validation: encode by hand to produce bad-but-well-formed input
		b, err := encodeUnchecked(m, Version)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"unknown kind", append([]byte{0xee}, good[1:]...), "unknown message"},
		{"kind zero", append([]byte{0}, good[1:]...), "unknown message"},
		{"trailing", append(append([]byte{}, good...), 0xc0), "trailing"},
		{"truncated", good[:len(good)-3], "overruns"},
		{"too large", make([]byte, MaxMessageSize+1), "exceeds"},
		{"wrong version", mustEncodeVersion(t, &Join{Site: "a", Records: 1, Dim: 1}, 99), "unknown protocol version 99"},
		{"NaN model", mustEncode(&PhaseStart{Job: "j", Phase: 1, Model: []float64{math.NaN()}}), "not finite"},
		{"Inf weight", mustEncode(&SiteUpdate{Job: "j", Phase: 1, Site: "s", Model: []float64{1}, Weight: math.Inf(1)}), "not finite"},
		{"empty site", mustEncode(&Join{Records: 1, Dim: 1}), "empty site"},
		{"bad site", mustEncode(&Join{Site: "a.b", Records: 1, Dim: 1}), "not in"},
		{"zero records", mustEncode(&Join{Site: "a", Records: 0, Dim: 1}), "records outside"},
		{"huge dim", mustEncode(&Join{Site: "a", Records: 1, Dim: MaxParams + 1}), "dimension"},
		{"phase 0", mustEncode(&PhaseStart{Job: "j", Phase: 0, Model: []float64{1}}), "phase 0"},
		{"empty model", mustEncode(&PhaseStart{Job: "j", Phase: 1}), "empty model"},
		{"delta 1", mustEncode(&SiteUpdate{Job: "j", Phase: 1, Site: "s", Model: []float64{1}, Weight: 1, Delta: 1}), "delta"},
		{"submit no client", mustEncode(&JobSubmit{Job: "j", Algo: "fed-avg", MinSites: 1}), "empty client"},
		{"submit min sites 0", mustEncode(&JobSubmit{Job: "j", Client: "c", Algo: "fed-avg"}), "min sites 0"},
		{"submit NaN eps", mustEncode(&JobSubmit{Job: "j", Client: "c", Algo: "fed-avg", MinSites: 1, Epsilon: math.NaN()}), "not finite"},
		{"submit negative eta", mustEncode(&JobSubmit{Job: "j", Client: "c", Algo: "fed-avg", MinSites: 1, Eta: -1}), "negative"},
		{"submit bad loss", mustEncode(&JobSubmit{Job: "j", Client: "c", Algo: "fed-avg", MinSites: 1, Loss: "a.b"}), "loss"},
		{"status unknown", mustEncode(&JobStatus{Job: "j", Status: "done"}), "unknown status"},
		{"status auc", mustEncode(&JobStatus{Job: "j", Status: StatusCompleted, AUC: 1.5}), "auc"},
		{"status bad sigma", mustEncode(&JobStatus{Job: "j", Status: StatusCompleted, Privacy: []SiteReport{{Site: "s", Sigmas: []float64{-1}}}}), "negative"},
		{"status NaN certified epsilon", mustEncode(&JobStatus{Job: "j", Status: StatusCompleted, Privacy: []SiteReport{{Site: "s", Epsilon: 1, Delta: 1e-3, CertifiedEpsilon: math.NaN()}}}),
			"site s: certified epsilon = NaN is not a finite number ≥ 0"},
		{"status certified epsilon above the request", mustEncode(&JobStatus{Job: "j", Status: StatusCompleted, Privacy: []SiteReport{{Site: "s", Epsilon: 0.5, Delta: 1e-3, CertifiedEpsilon: 0.6, CertifiedDelta: 1e-3}}}),
			"site s: certified epsilon = 0.6 exceeds the requested 0.5"},
		{"status certified delta above the request", mustEncode(&JobStatus{Job: "j", Status: StatusCompleted, Privacy: []SiteReport{{Site: "s", Epsilon: 0.5, Delta: 1e-3, CertifiedEpsilon: 0.4, CertifiedDelta: 2e-3}}}),
			"site s: certified delta = 0.002 exceeds the requested 0.001"},
		{"status negative certified delta", mustEncode(&JobStatus{Job: "j", Status: StatusCompleted, Privacy: []SiteReport{{Site: "s", Epsilon: 0.5, Delta: 1e-3, CertifiedEpsilon: 0.4, CertifiedDelta: -1e-4}}}),
			"certified delta = -0.0001 is not a finite number ≥ 0"},
		{"status Inf certified epsilon", mustEncode(&JobStatus{Job: "j", Status: StatusCompleted, Privacy: []SiteReport{{Site: "s", Epsilon: 0.5, Delta: 1e-3, CertifiedEpsilon: math.Inf(1)}}}),
			"certified epsilon = +Inf is not a finite number ≥ 0"},
		{"status bad site", mustEncode(&JobStatus{Job: "j", Status: StatusFailed, Refused: []string{"a b"}}), "not in"},
		{"refuse no site", mustEncode(&Refuse{Job: "j"}), "empty site"},
		{"refuse long reason", mustEncode(&Refuse{Job: "j", Site: "s", Reason: strings.Repeat("r", MaxReasonLen+1)}), "reason"},
		{"duplicate site", mustEncode(&JobAnnounce{Job: "j", Algo: "a", Task: "auc", Loss: "hinge", Params: 1, Phases: 1, Sites: []string{"x", "x"}}), "twice"},
		{"announce calibration", mustEncode(&JobAnnounce{Job: "j", Algo: "a", Task: "auc", Loss: "hinge", Params: 1, Phases: 1, Sites: []string{"x"}, Calibration: "papr"}), `unknown calibration "papr"`},
		{"submit calibration", mustEncode(&JobSubmit{Job: "j", Client: "c", Algo: "a", MinSites: 1, Calibration: "Exact"}), `unknown calibration "Exact"`},
	}
	for _, c := range cases {
		_, err := Decode(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	// An unknown field is refused.
	type joinPlus struct {
		Join  `msgpack:",inline"`
		Extra int `msgpack:"extra"`
	}
	b, _ := encodeUnchecked(&joinPlusMsg{joinPlus{Join{Site: "a", Records: 1, Dim: 1}, 3}}, Version)
	if _, err := Decode(b); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("unknown field: err = %v", err)
	}
}

type joinPlusMsg struct {
	V any
}

func (m *joinPlusMsg) Kind() Kind      { return KindJoin }
func (m *joinPlusMsg) Validate() error { return nil }

func mustEncodeVersion(t *testing.T, m Message, v uint16) []byte {
	t.Helper()
	b, err := encodeUnchecked(m, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEncodeRefusesLargeModel(t *testing.T) {
	_, err := Encode(&PhaseStart{Job: "j", Phase: 1, Model: make([]float64, MaxParams+1)})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "parameters") {
		t.Fatalf("err = %v, want ErrTooLarge naming the parameter limit", err)
	}
	// The largest model fits one (chunked) message.
	b, err := Encode(&SiteUpdate{Job: strings.Repeat("j", MaxNameLen), Phase: MaxPhases, Site: strings.Repeat("s", MaxNameLen),
		Model: make([]float64, MaxParams), Weight: 1})
	if err != nil || len(b) > MaxMessageSize {
		t.Fatalf("max model: %d bytes, err %v", len(b), err)
	}
}

// SiteUpdate.Last is optional: it round-trips when set, is omitted from the
// encoding when empty (the golden site-update, which has none, is
// unchanged), must match Model's length and, with Model, fit one message.
func TestSiteUpdateLast(t *testing.T) {
	m := &SiteUpdate{Job: "j", Phase: 1, Site: "s", Model: []float64{1, 2}, Last: []float64{3, -4}, Weight: 1}
	roundTrip(t, m)
	if _, err := Encode(&SiteUpdate{Job: "j", Phase: 1, Site: "s", Model: []float64{1, 2}, Last: []float64{3}, Weight: 1}); err == nil || !strings.Contains(err.Error(), "last iterate") {
		t.Errorf("length mismatch: err = %v", err)
	}
	if _, err := Encode(&SiteUpdate{Job: "j", Phase: 1, Site: "s", Model: []float64{1}, Last: []float64{math.NaN()}, Weight: 1}); err == nil {
		t.Error("NaN last iterate accepted")
	}
	big := &SiteUpdate{Job: strings.Repeat("j", MaxNameLen), Phase: MaxPhases, Site: strings.Repeat("s", MaxNameLen),
		Model: make([]float64, MaxLastParams), Last: make([]float64, MaxLastParams), Weight: 1}
	if b, err := Encode(big); err != nil || len(b) > MaxMessageSize {
		t.Fatalf("max model with last iterate: %d bytes, err %v", len(b), err)
	}
	big.Model, big.Last = make([]float64, MaxLastParams+1), make([]float64, MaxLastParams+1)
	if _, err := Encode(big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("last iterate over MaxLastParams: err = %v", err)
	}
}

func TestSubjects(t *testing.T) {
	if got := CoordSubject("f1"); got != "pairfed.f1.coord" {
		t.Error(got)
	}
	if got := SitesSubject("f1"); got != "pairfed.f1.sites" {
		t.Error(got)
	}
	if got := SiteSubject("f1", "s-2"); got != "pairfed.f1.site.s-2" {
		t.Error(got)
	}
	if got := JobsSubject("f1"); got != "pairfed.f1.jobs" {
		t.Error(got)
	}
	if got := ClientSubject("f1", "c-7"); got != "pairfed.f1.client.c-7" {
		t.Error(got)
	}
	for _, bad := range []string{"", "a.b", "a*", "a>", "a b", strings.Repeat("x", MaxNameLen+1)} {
		if ValidName("site", bad) == nil {
			t.Errorf("ValidName(%q) accepted", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range append(samples(), secAggSeeds()...) {
		b, _ := Encode(m)
		f.Add(b)
	}
	f.Add([]byte{byte(KindJoin), 0x92, 0x01, 0x80})
	// A status with every optional field of a site report (not in the goldens).
	b, _ := Encode(&JobStatus{Job: "j", Status: StatusCompleted, Privacy: []SiteReport{{Site: "s", Records: 3, Epsilon: 1, Delta: 1e-3,
		Sigmas: []float64{1}, ComposedEpsilon: 0.9, CertifiedEpsilon: 0.8, CertifiedDelta: 1e-4}}})
	f.Add(b)
	// A status with a best phase and times (not in the goldens).
	b, _ = Encode(bestStatus(func(m *JobStatus) { m.Submitted, m.Finished = 1, 2 }))
	f.Add(b)
	// A submission and an announcement carrying a schema (not in the goldens).
	for _, m := range schemaSamples() {
		b, _ := Encode(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Partial input (the first half) must fail cleanly, never panic.
		_, _ = Decode(b[:len(b)/2])
		m, err := Decode(b)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted an invalid message: %v", err)
		}
		e1, err := Encode(m)
		if err != nil {
			t.Fatalf("accepted message does not re-encode: %v", err)
		}
		m2, err := Decode(e1)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-encoding changed the message:\n%#v\n%#v", m, m2)
		}
		e2, err := Encode(m2)
		if err != nil || !bytes.Equal(e1, e2) {
			t.Fatalf("encoding not stable: %x vs %x (%v)", e1, e2, err)
		}
	})
}

// TestDecodeRejectsLyingLengths feeds messages whose msgpack headers
// declare far more elements or bytes than the message holds. msgpack/v5
// v5.4.1 would allocate the declared array length before reading (the
// fuzzer found a 60-byte Result declaring 2.47e9 float64s, which took
// 97 s and ~20 GB); Decode must refuse each in microseconds without
// allocating in proportion to the lie.
func TestDecodeRejectsLyingLengths(t *testing.T) {
	head := func(fields int) []byte { return []byte{byte(KindResult), 0x92, 0x01, 0x80 | byte(fields)} }
	str := func(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }
	cases := map[string][]byte{
		"array32": append(append(head(1), str("model")...), 0xdd, 0xff, 0xff, 0xff, 0xff, 0x00),
		"array16": append(append(head(1), str("model")...), 0xdc, 0xff, 0xff, 0x00),
		"map32":   append(head(0)[:3], 0xdf, 0x7f, 0xff, 0xff, 0xff, 0xa0, 0xa0),
		"str32":   append(append(head(1), str("job")...), 0xdb, 0x7f, 0xff, 0xff, 0xff, 'x'),
		"bin32":   append(append(head(1), str("job")...), 0xc6, 0x7f, 0xff, 0xff, 0xff, 'x'),
		"ext32":   append(append(head(1), str("job")...), 0xc9, 0x7f, 0xff, 0xff, 0xff, 1, 'x'),
		"fixarr":  append(append(head(1), str("sites")...), 0x9f, 0xa0),
		"trunc64": append(append(head(1), str("phases")...), 0xcf, 0x01),
		"badcode": append(append(head(1), str("phases")...), 0xc1),
	}
	for name, b := range cases {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Decode(b)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: accepted % x", name, b)
			continue
		}
		if !strings.Contains(err.Error(), "msgpack:") {
			t.Errorf("%s: error %q does not come from the length scan", name, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("%s: allocated %d bytes to reject a %d-byte message", name, grew, len(b))
		}
	}
}

// TestScanAcceptsEncodings checks the length scan on every sample, so it
// cannot reject what Encode produces.
func TestScanAcceptsEncodings(t *testing.T) {
	for _, m := range samples() {
		b, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := scanMsgpack(b[1:]); err != nil {
			t.Errorf("%v: %v", m.Kind(), err)
		}
		if err := scanMsgpack(b[1 : len(b)-1]); err == nil {
			t.Errorf("%v: truncated encoding passed the scan", m.Kind())
		}
	}
}

// A site speaks only for itself: on pairfed.<fed>.coord.<s> the coordinator
// accepts only messages whose sender is s.
func TestCheckSender(t *testing.T) {
	subj := SiteToCoordSubject("f", "a")
	if subj != "pairfed.f.coord.a" || CoordWildcard("f") != "pairfed.f.coord.*" {
		t.Fatalf("subjects %s %s", subj, CoordWildcard("f"))
	}
	for _, m := range []Message{&Join{Site: "a"}, &Heartbeat{Site: "a"}, &SiteUpdate{Site: "a"}, &Leave{Site: "a"}, &Refuse{Site: "a"}, &Accept{Site: "a"}, &Abort{From: "a"}} {
		if err := CheckSender("f", subj, m); err != nil {
			t.Errorf("%v from a on a's subject: %v", m.Kind(), err)
		}
		if err := CheckSender("f", SiteToCoordSubject("f", "b"), m); err == nil {
			t.Errorf("%v from a on b's subject accepted", m.Kind())
		}
	}
	for _, c := range []struct {
		subject string
		m       Message
	}{
		{subj, &JobSubmit{Job: "j"}},
		{subj, &PhaseStart{Job: "j"}},
		{CoordSubject("f"), &Join{Site: "a"}},
		{"pairfed.g.coord.a", &Join{Site: "a"}},
		{"pairfed.f.coord.a.b", &Join{Site: "a.b"}},
	} {
		if err := CheckSender("f", c.subject, c.m); err == nil {
			t.Errorf("%v on %s accepted", c.m.Kind(), c.subject)
		}
	}
}

// roundTrip encodes m, checks that it decodes to an equal message, and
// returns the encoding.
func roundTrip(t *testing.T, m Message) []byte {
	t.Helper()
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip %#v, %v", got, err)
	}
	return b
}
