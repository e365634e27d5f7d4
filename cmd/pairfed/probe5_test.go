package main

// Issue 28, probe 5 (docs/results/probe-5.md): the cases of the model
// signatures, the declared label set and the model readers' outputs that
// were BAD or UNCLEAR, each refused (naming the problem, the value and
// the fix) with nothing written, or — score on a label column of one or
// no label — done as asked.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

const patientsCSV = "../../data/testdata/patients.csv"

// probe5Model trains a private model of the quick start's example (signed
// by key when key is not "") into dir/name.
func probe5Model(t *testing.T, dir, name, key string, extra ...string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	args := []string{"train", "--data", patientsCSV, "--feature-bounds", "../../schemas/patients-example.json",
		"--impute", "schema", "--epsilon", "1", "--runs", "1", "--out-model", out}
	if key != "" {
		args = append(args, "--sign-key", key)
	}
	if o, err := runCLI(t, append(args, extra...)...); err != nil {
		t.Fatalf("train: %v\n%s", err, o)
	}
	return out
}

func TestProbe5Refusals(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "k.pem")
	keygen(t, key, "team")
	other := filepath.Join(dir, "o.pem")
	keygen(t, other, "other")
	signed := probe5Model(t, dir, "signed.json", key)
	unsigned := probe5Model(t, dir, "unsigned.json", "")

	// A TLS key of deploy init's kind (ECDSA P-256, PKCS #8).
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	tlsKey := filepath.Join(dir, "site-key.pem")
	os.WriteFile(tlsKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	// Two public keys in one file.
	pa, _ := os.ReadFile(key + ".pub")
	pb, _ := os.ReadFile(other + ".pub")
	both := filepath.Join(dir, "both.pub")
	os.WriteFile(both, append(pa, pb...), 0o644)
	newModel := filepath.Join(dir, "new.json")
	// The ID column exported twice.
	raw, _ := os.ReadFile(patientsCSV)
	var twice bytes.Buffer
	for _, l := range strings.SplitAfter(string(raw), "\n") {
		if l != "" {
			twice.WriteString(l[:strings.IndexByte(l, ',')+1] + l)
		}
	}
	dupID := filepath.Join(dir, "dup-id.csv")
	os.WriteFile(dupID, twice.Bytes(), 0o644)

	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		// BAD: the trust check was skipped, an unsigned file accepted.
		"trust-key empty":    {[]string{"score", "--model", unsigned, "--data", patientsCSV, "--trust-key", ""}, `--trust-key "" names no key file`},
		"trust-key comma":    {[]string{"evaluate", "--model", unsigned, "--data", patientsCSV, "--trust-key", ","}, "names no key file"},
		"trust-key verify":   {[]string{"verify", "--model", unsigned, "--trust-key", " , "}, "names no key file"},
		"trust-key two keys": {[]string{"verify", "--model", signed, "--trust-key", both}, "more than one public key: give one file per key"},
		// UNCLEAR: "the signing key is a *ecdsa.PrivateKey".
		"sign-key TLS key": {[]string{"train", "--data", patientsCSV, "--out-model", newModel, "--sign-key", tlsKey}, "holds an ECDSA private key (a TLS key"},
		"keygen empty out": {[]string{"keygen", "--out", "", "--name", "x"}, `--out "" is empty`},
		"keygen no dir":    {[]string{"keygen", "--out", filepath.Join(dir, "nodir", "k.pem"), "--name", "x"}, "does not exist: create it first"},
		// UNCLEAR: --negative-classes "" declared nothing, silently.
		"negative-classes empty": {[]string{"train", "--data", patientsCSV, "--out-model", newModel, "--negative-classes", ""}, `--negative-classes "" lists no label`},
		// BAD: the key files were replaced by scores.
		"score over trust key": {[]string{"score", "--model", signed, "--data", patientsCSV, "--trust-key", key + ".pub", "--out", key + ".pub"}, "holds a PEM key"},
		"score over sign key":  {[]string{"score", "--model", signed, "--data", patientsCSV, "--out", key}, "holds a PEM key"},
		"export over sign key": {[]string{"export", "--model", signed, "--out", key}, "holds a PEM key"},
		// UNCLEAR: `unexpected "patient_id"`.
		"ID column twice": {[]string{"score", "--model", signed, "--data", dupID, "--id-column", "patient_id"}, `two columns named "patient_id" (columns 1 and 2)`},
	} {
		before := hashTree(t, dir)
		o, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q\n%s", name, err, tc.want, o)
		}
		if after := hashTree(t, dir); !maps.Equal(before, after) {
			t.Errorf("%s changed the directory", name)
		}
	}

	// verify --json answers in JSON whatever refused the file.
	app := newApp()
	var buf syncBuffer
	app.Writer, app.ErrWriter = &buf, &buf
	app.ExitErrHandler = func(*cli.Context, error) {} // cli.Exit must not end the test binary
	err = app.Run([]string{"pairfed", "verify", "--json", "--model", signed, "--trust-key", key})
	o := buf.String()
	var v struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err == nil || json.Unmarshal([]byte(o), &v) != nil || v.OK || !strings.Contains(v.Error, `"PRIVATE KEY" block`) {
		t.Errorf("verify --json with a private key as --trust-key: %v\n%s", err, o)
	}
	// Still valid: a comma list with the signer's key among others.
	if o, err := runCLI(t, "verify", "--model", signed, "--trust-key", other+".pub,"+key+".pub"); err != nil {
		t.Errorf("a comma list holding the signer's key: %v\n%s", err, o)
	}
}

// Score ignores labels: a file of new patients whose outcome column is
// empty or holds one value is scored (it was refused: "missing label …
// --impute drop", "only one class present"), with the same scores as the
// labelled file; evaluate still refuses it. --out - is standard output.
func TestProbe5ScoreLabelColumn(t *testing.T) {
	dir := t.TempDir()
	m := probe5Model(t, dir, "m.json", "")
	raw, err := os.ReadFile(patientsCSV)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	variant := func(name, label string) string {
		var b bytes.Buffer
		b.WriteString(lines[0] + "\n")
		for _, l := range lines[1:] {
			b.WriteString(l[:strings.LastIndexByte(l, ',')+1] + label + "\n")
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, b.Bytes(), 0o644)
		return p
	}
	score := func(data string) string {
		out := filepath.Join(dir, filepath.Base(data)+".scores.csv")
		o, err := runCLI(t, "score", "--model", m, "--data", data, "--id-column", "patient_id", "--out", out)
		if err != nil {
			t.Fatalf("score %s: %v\n%s", data, err, o)
		}
		b, _ := os.ReadFile(out)
		return string(b)
	}
	want := score(patientsCSV)
	for label, note := range map[string]string{"no": `holds one label only ("no", 60 records)`, "": "holds no label (every cell is empty)"} {
		data := variant("label-"+label+".csv", label)
		if got := score(data); got != want {
			t.Errorf("label column %q: scores differ from the labelled file's", label)
		}
		o, _ := runCLI(t, "score", "--model", m, "--data", data, "--id-column", "patient_id", "--out", filepath.Join(dir, "x.csv"))
		if !strings.Contains(o, note) || !strings.Contains(o, "placeholder labels, which score does not use") {
			t.Errorf("label column %q: the note is missing:\n%s", label, o)
		}
		if _, err := runCLI(t, "evaluate", "--model", m, "--data", data); err == nil {
			t.Errorf("evaluate of a label column %q succeeded", label)
		}
	}
	o, err := runCLI(t, "score", "--model", m, "--data", patientsCSV, "--id-column", "patient_id", "--out", "-")
	if err != nil || !strings.Contains(o, "patient_id,score\nP001,") {
		t.Errorf("score --out -: %v\n%.300s", err, o)
	}
	if _, err := os.Stat("-"); err == nil {
		os.Remove("-")
		t.Error(`score --out - wrote a file named "-"`)
	}
}

// A coordinator restarted without --site-logins on a state directory
// that holds the logins of an earlier run says that it ignores them (it
// served without authentication, silently).
func TestProbe5RestartWithoutLogins(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "logins"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "logins", "a"), []byte(strings.Repeat("ab", 32)+"\n"), 0o600)
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	p := startPairfed(ctx, &logs, "coordinator", "--listen", "127.0.0.1:0", "--federation", "r", "--state", dir, "--tick", "10ms")
	waitFor(t, 15*time.Second, "the coordinator to listen", func() bool { return strings.Contains(p.stdout.String(), "listening on") })
	cancel()
	<-p.done
	if !strings.Contains(logs.String(), "holds the logins of an earlier run with --site-logins, which this run ignores") {
		t.Errorf("no warning that the logins are ignored:\n%s", logs.String())
	}
}

// score holds a CSV's records as text while it looks at the label column:
// that copy is charged against half of --max-memory, and a file past it
// is refused naming the flag (it was read whole, outside the budget).
func TestScoreLabelCheckWithinBudget(t *testing.T) {
	dir := t.TempDir()
	m := probe5Model(t, dir, "m.json", "")
	raw, err := os.ReadFile(patientsCSV)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	var b bytes.Buffer
	b.WriteString(lines[0] + "\n")
	for b.Len() < 12<<20 { // past half of 16 MiB as text alone
		for _, l := range lines[1:] {
			b.WriteString(l + "\n")
		}
	}
	big := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(big, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := runCLI(t, "score", "--model", m, "--data", big, "--id-column", "patient_id", "--max-memory", "16MiB", "--out", filepath.Join(dir, "s.csv"))
	if err == nil || !strings.Contains(o+err.Error(), "pass half the memory limit of 16 MiB: give --max-memory a larger budget") {
		t.Errorf("a 12 MiB file under --max-memory 16MiB: %v\n%.500s", err, o)
	}
	if _, err := os.Stat(filepath.Join(dir, "s.csv")); err == nil {
		t.Error("the refused run wrote its output")
	}
	// Within the budget the same file is scored.
	if o, err := runCLI(t, "score", "--model", m, "--data", big, "--id-column", "patient_id", "--max-memory", "256MiB", "--out", filepath.Join(dir, "s.csv")); err != nil {
		t.Errorf("under --max-memory 256MiB: %v\n%.500s", err, o)
	}
	// A header naming a column twice is refused by name (one pass over
	// the header).
	dup := filepath.Join(dir, "dup.csv")
	os.WriteFile(dup, []byte("patient_id,"+lines[0]+"\nX,"+lines[1]+"\n"), 0o644)
	if o, err := runCLI(t, "score", "--model", m, "--data", dup, "--out", filepath.Join(dir, "d.csv")); err == nil || !strings.Contains(o+err.Error(), `two columns named "patient_id" (columns 1 and 2)`) {
		t.Errorf("a duplicated column: %v\n%.500s", err, o)
	}
}
