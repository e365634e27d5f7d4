package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/secagg/round"
	"github.com/urfave/cli/v2"
)

func keygen(t *testing.T, out, name string) string {
	t.Helper()
	o, err := runCLI(t, "keygen", "--out", out, "--name", name)
	if err != nil {
		t.Fatalf("keygen: %v\n%s", err, o)
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.Split(o, "\n")[0], "key fingerprint "))
}

// forge rewrites a signed model file with f applied to its decoded
// model, the checksum recomputed and the old signature block put back:
// what probe 4's consistent edit does to a signed file.
func forge(t *testing.T, raw []byte, f func(m *model.Model)) []byte {
	t.Helper()
	m, err := model.Decode(bytes.NewReader(raw), "m")
	if err != nil {
		t.Fatal(err)
	}
	sig := m.Signature
	m.Signature = nil
	f(m)
	var b bytes.Buffer
	if err := model.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	if obj["signature"], err = json.Marshal(sig); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// keygen writes a 0600 private key and its public key, never over an
// existing file; train --sign-key signs; score, evaluate, card, export and
// verify accept the model under its key and refuse it under another key,
// an unsigned model under any key, and a signed model edited consistently
// (checksum recomputed, ε changed everywhere) with or without a key.
func TestSignedModelCLI(t *testing.T) {
	dir := t.TempDir()
	train, test := diabetesCSV(t, dir, nil, "")
	key, other := filepath.Join(dir, "k.pem"), filepath.Join(dir, "other.pem")
	fp := keygen(t, key, "St Elsewhere ML")
	fpOther := keygen(t, other, "Someone Else")
	if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode %v, %v", st.Mode(), err)
	}
	if o, err := runCLI(t, "keygen", "--out", key, "--name", "again"); err == nil || !strings.Contains(err.Error(), "never overwrites") {
		t.Fatalf("keygen over an existing key: %v\n%s", err, o)
	}
	raw0, _ := os.ReadFile(key)
	if pub, err := model.ParsePublicKey(mustRead(t, key+".pub")); err != nil || model.Fingerprint(pub) != fp {
		t.Fatalf("public key %v, fingerprint %s", err, fp)
	}

	signedM, plainM := filepath.Join(dir, "signed.json"), filepath.Join(dir, "plain.json")
	args := []string{"--data", train, "--test", test, "--ignore-columns", "patient_id", "--epsilon", "1", "--feature-bounds", "../../schemas/diabetes.json"}
	trainModel(t, signedM, append(args, "--sign-key", key)...)
	trainModel(t, plainM, args...)
	if raw, _ := os.ReadFile(key); !bytes.Equal(raw, raw0) {
		t.Fatal("signing changed the key file")
	}
	raw := mustRead(t, signedM)
	forged := filepath.Join(dir, "forged.json")
	if err := os.WriteFile(forged, forge(t, raw, func(m *model.Model) {
		c := &m.Certificate
		c.Why = strings.Replace(c.Why, model.CertifiedPair(c.Epsilon, c.Delta), model.CertifiedPair(0.1, c.Delta), 1)
		c.Epsilon = 0.1
	}), 0o644); err != nil {
		t.Fatal(err)
	}
	// The forged file passes the checksum and the certificate's own
	// consistency (what probe 4 found): only the signature catches it.
	if m, err := model.Decode(bytes.NewReader(forge(t, raw, func(*model.Model) {})), "same"); err != nil || m.Signature == nil {
		t.Fatalf("forge without an edit: %v", err)
	}

	trust, trustOther := key+".pub", other+".pub"
	runs := map[string]func(m string, extra ...string) (string, error){
		"score": func(m string, extra ...string) (string, error) {
			return runCLI(t, append([]string{"score", "--model", m, "--data", test}, extra...)...)
		},
		"evaluate": func(m string, extra ...string) (string, error) {
			return runCLI(t, append([]string{"evaluate", "--model", m, "--data", test}, extra...)...)
		},
		"card": func(m string, extra ...string) (string, error) {
			return runCLI(t, append([]string{"card", "--model", m, "--out", filepath.Join(dir, "card")}, extra...)...)
		},
		"export": func(m string, extra ...string) (string, error) {
			return runCLI(t, append([]string{"export", "--model", m, "--out", filepath.Join(dir, "m.onnx")}, extra...)...)
		},
		"verify": func(m string, extra ...string) (string, error) {
			return runCLI(t, append([]string{"verify", "--model", m}, extra...)...)
		},
	}
	for name, run := range runs {
		if o, err := run(signedM, "--trust-key", trust); err != nil {
			t.Errorf("%s under its key: %v\n%s", name, err, o)
		}
		if o, err := run(signedM, "--trust-key", trustOther+","+trust); err != nil {
			t.Errorf("%s under a comma list holding its key: %v\n%s", name, err, o)
		}
		if o, err := run(signedM); err != nil {
			t.Errorf("%s without --trust-key: %v\n%s", name, err, o)
		}
		if o, err := run(plainM); err != nil {
			t.Errorf("%s of an unsigned model without --trust-key: %v\n%s", name, err, o)
		}
		for what, tc := range map[string]struct {
			model string
			extra []string
			want  []string
		}{
			"another key":   {signedM, []string{"--trust-key", trustOther}, []string{signedM, fp, fpOther, "not a trusted key"}},
			"unsigned":      {plainM, []string{"--trust-key", trust}, []string{plainM, "is not signed", fp, "--sign-key"}},
			"forged":        {forged, nil, []string{forged, "does not verify", fp}},
			"forged, trust": {forged, []string{"--trust-key", trust}, []string{forged, "does not verify"}},
		} {
			o, err := run(tc.model, tc.extra...)
			if err == nil {
				t.Errorf("%s, %s: accepted\n%s", name, what, o)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s, %s: error %q does not say %q", name, what, err, w)
				}
			}
		}
	}
	// The card names the signer; verify --json gives the verdict.
	if _, err := runs["card"](signedM); err != nil {
		t.Fatal(err)
	}
	if md := string(mustRead(t, filepath.Join(dir, "card", "card.md"))); !strings.Contains(md, "signed by St Elsewhere ML (fingerprint "+fp+"), signature valid — trust depends on whether you know this key") {
		t.Fatalf("card without a signature line:\n%s", md)
	}
	app := newApp()
	var buf syncBuffer
	app.Writer, app.ErrWriter = &buf, &buf
	app.ExitErrHandler = func(*cli.Context, error) {} // cli.Exit must not end the test binary
	err := app.Run([]string{"pairfed", "verify", "--model", forged, "--json"})
	o := buf.String()
	var v struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err == nil || json.Unmarshal([]byte(o), &v) != nil || v.OK || !strings.Contains(v.Error, "does not verify") {
		t.Fatalf("verify --json of a forged file: %v\n%s", err, o)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A secure aggregation key (the same file format) is refused as a model
// signing key, a public key given as --sign-key or a private key as
// --trust-key is named, and --sign-key without --out-model is a usage
// error — all before any training.
func TestSignKeyRefusals(t *testing.T) {
	dir := t.TempDir()
	_, priv, _ := ed25519.GenerateKey(nil)
	kb, err := round.MarshalSigningKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	sa := filepath.Join(dir, "secagg-key.pem")
	os.WriteFile(sa, kb, 0o600)
	key := filepath.Join(dir, "k.pem")
	keygen(t, key, "team")
	out := filepath.Join(dir, "m.json")
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"secagg key":       {[]string{"train", "--data", "../../datasets/diabetes", "--out-model", out, "--sign-key", sa}, "secure aggregation signing key"},
		"public as sign":   {[]string{"train", "--data", "../../datasets/diabetes", "--out-model", out, "--sign-key", key + ".pub"}, "holds a public key: signing needs the private key"},
		"no out-model":     {[]string{"train", "--data", "../../datasets/diabetes", "--sign-key", key}, "--out-model"},
		"private as trust": {[]string{"verify", "--model", "../../model/testdata/v1-train.json", "--trust-key", key}, `a PEM "PRIVATE KEY" block`},
		"keygen bad name":  {[]string{"keygen", "--out", filepath.Join(dir, "x.pem"), "--name", " padded"}, "white space"},
	} {
		o, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q\n%s", name, err, tc.want, o)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a model was written")
	}
}

// Model files written before signatures load and score as before.
func TestOldModelFileStillScores(t *testing.T) {
	o, err := runCLI(t, "verify", "--model", "../../model/testdata/v1-train.json")
	if err != nil || !strings.Contains(o, "unsigned: checksum sha256:") {
		t.Fatalf("%v\n%s", err, o)
	}
	if o, err := runCLI(t, "score", "--model", "../../model/testdata/v1-train.json", "--data", "../../datasets/diabetes"); err != nil {
		t.Fatalf("%v\n%s", err, o)
	}
}
