package model

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// testKey is a fixed Ed25519 key (seed i repeated): tests are reproducible.
func testKey(i byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{i}, ed25519.SeedSize))
}

func signed(t *testing.T, m *Model, k ed25519.PrivateKey) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := EncodeSigned(&b, m, &Signer{Name: "St Elsewhere ML", Key: k}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func pubOf(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

func TestSignVerifyRoundTrip(t *testing.T) {
	k := testKey(1)
	raw := signed(t, sample(t), k)
	m, err := Decode(bytes.NewReader(raw), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.Signature == nil || m.Signature.KeyFingerprint != Fingerprint(pubOf(k)) || len(m.Signature.KeyFingerprint) != 16 {
		t.Fatalf("signature block %+v", m.Signature)
	}
	// The checksum is the unsigned file's: a signature adds, it changes nothing.
	plain := encode(t, sample(t))
	if u, _ := Decode(bytes.NewReader(plain), "u.json"); u.Checksum != m.Checksum {
		t.Fatalf("checksum %s signed, %s unsigned", m.Checksum, u.Checksum)
	}
	v, err := m.CheckTrust("m.json", nil)
	if err != nil || !v.Signed || !v.Valid || v.Trusted || !strings.Contains(v.Summary, "trust depends on whether you know this key") {
		t.Fatalf("untrusted verdict %+v, %v", v, err)
	}
	v, err = m.CheckTrust("m.json", []ed25519.PublicKey{pubOf(testKey(2)), pubOf(k)})
	if err != nil || !v.Trusted {
		t.Fatalf("trusted verdict %+v, %v", v, err)
	}
	// Re-encoding an unchanged signed model keeps its signature, byte for byte.
	if again := encode(t, m); !bytes.Equal(again, raw) {
		t.Fatalf("re-encoding a signed model differs:\n%s\n%s", raw, again)
	}
	// A changed one is refused, not silently unsigned or re-signed.
	m.Weights[0] = 2
	if err := Encode(&bytes.Buffer{}, m); err == nil || !strings.Contains(err.Error(), "changed after it was signed") {
		t.Fatalf("encoding a changed signed model: %v", err)
	}
}

// edit rewrites a JSON field of a signed file, recomputes the checksum
// (as a careful forger would) and re-indents it.
func edit(t *testing.T, raw []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		t.Fatal(err)
	}
	f(obj)
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	// Recompute the checksum through the package's own rule.
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	sum, err := m.sum()
	if err != nil {
		t.Fatal(err)
	}
	obj["checksum"] = sum
	out, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sub(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	return m
}

// Each field of a signed file edited with the checksum recomputed — the
// consistent edit probe 4 found undetected — is refused by Decode
// (whether or not a key is trusted), naming the signature.
func TestSignedTamperRefused(t *testing.T) {
	k := testKey(1)
	base := sample(t)
	base.Certificate.Sites = nil
	raw := signed(t, base, k)
	other := signed(t, sample(t), testKey(2))
	var otherSig map[string]any
	json.Unmarshal(other, &otherSig)
	cases := map[string]func(m map[string]any){
		"weights": func(m map[string]any) { m["weights"].([]any)[0] = json.Number("0.75") },
		// ε everywhere it appears: the certificate and its Why.
		"epsilon": func(m map[string]any) {
			c := sub(m, "certificate")
			c["epsilon"] = json.Number("0.5")
			c["why"] = strings.Replace(c["why"].(string), "(1, 1e-05)", "(0.5, 1e-05)", 1)
		},
		"delta": func(m map[string]any) {
			c := sub(m, "certificate")
			c["delta"] = json.Number("1e-06")
			c["why"] = strings.Replace(c["why"].(string), "(1, 1e-05)", "(1, 1e-06)", 1)
		},
		"why": func(m map[string]any) {
			sub(m, "certificate")["why"] = "one release, certified (ε, δ) = (1, 1e-05) by an audited accountant"
		},
		"statement": func(m map[string]any) {
			sub(m, "certificate")["statement"] = map[string]any{"epsilon": json.Number("0.1")}
		},
		"schema": func(m map[string]any) {
			sub(m, "preprocessing", "schema")["features"].([]any)[0].(map[string]any)["hi"] = json.Number("20")
		},
		"signer": func(m map[string]any) { sub(m, "signature")["signer"] = "Another Hospital" },
		"public key and fingerprint": func(m map[string]any) {
			s, o := sub(m, "signature"), sub(otherSig, "signature")
			s["public_key"], s["key_fingerprint"] = o["public_key"], o["key_fingerprint"]
		},
		"fingerprint only": func(m map[string]any) { sub(m, "signature")["key_fingerprint"] = "0123456789abcdef" },
		"signature bytes": func(m map[string]any) {
			s := sub(m, "signature")
			v := []byte(s["value"].(string))
			v[10] ^= 'A' ^ 'B'
			if v[10] == '+' || v[10] == '/' {
				v[10] = 'C'
			}
			s["value"] = string(v)
		},
		"signature short":  func(m map[string]any) { s := sub(m, "signature"); s["value"] = s["value"].(string)[:40] },
		"algorithm":        func(m map[string]any) { sub(m, "signature")["algorithm"] = "ed448" },
		"unknown field":    func(m map[string]any) { sub(m, "signature")["comment"] = "hello" },
		"signer too long":  func(m map[string]any) { sub(m, "signature")["signer"] = strings.Repeat("x", MaxSignerLen+1) },
		"signer control":   func(m map[string]any) { sub(m, "signature")["signer"] = "a\nb" },
		"provenance":       func(m map[string]any) { sub(m, "provenance")["created"] = "2027-01-01T00:00:00Z" },
		"positive classes": func(m map[string]any) { sub(m, "preprocessing", "loader")["positive_classes"] = "0" },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			bad := edit(t, raw, f)
			if bytes.Equal(bad, raw) {
				t.Fatal("the edit changed nothing")
			}
			_, err := Decode(bytes.NewReader(bad), "m.json")
			if err == nil {
				t.Fatalf("accepted:\n%s", bad)
			}
			want := "signature"
			if name == "unknown field" {
				want = `unknown field "comment"`
			}
			if !strings.Contains(err.Error(), "m.json") || !strings.Contains(err.Error(), want) {
				t.Fatalf("error does not name the file and the signature: %v", err)
			}
		})
	}
	// The unedited file passes the same path (the test's edit function
	// itself changes nothing that matters).
	if _, err := Decode(bytes.NewReader(edit(t, raw, func(map[string]any) {})), "m.json"); err != nil {
		t.Fatal(err)
	}
}

func TestTrustRefusals(t *testing.T) {
	k, k2 := testKey(1), testKey(2)
	m, err := Decode(bytes.NewReader(signed(t, sample(t), k)), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.CheckTrust("m.json", []ed25519.PublicKey{pubOf(k2)})
	if err == nil || !strings.Contains(err.Error(), Fingerprint(pubOf(k))) || !strings.Contains(err.Error(), Fingerprint(pubOf(k2))) || !strings.Contains(err.Error(), "m.json") {
		t.Fatalf("wrong key: %v", err)
	}
	u, err := Decode(bytes.NewReader(encode(t, sample(t))), "u.json")
	if err != nil {
		t.Fatal(err)
	}
	_, err = u.CheckTrust("u.json", []ed25519.PublicKey{pubOf(k)})
	if err == nil || !strings.Contains(err.Error(), "u.json is not signed") || !strings.Contains(err.Error(), Fingerprint(pubOf(k))) {
		t.Fatalf("unsigned under a trusted key: %v", err)
	}
	if v, err := u.CheckTrust("u.json", nil); err != nil || v.Signed || !strings.Contains(v.Summary, "unsigned") {
		t.Fatalf("unsigned without trust: %+v %v", v, err)
	}
}

// Files written before signatures load as they always did, and their
// canonical encoding is unchanged (their checksum still matches).
func TestOldModelFilesLoad(t *testing.T) {
	for _, f := range []string{"testdata/v1-unsigned.json", "testdata/v1-train.json"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(bytes.NewReader(raw), f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if m.Signature != nil {
			t.Fatalf("%s: a signature appeared", f)
		}
		if again := encode(t, m); !bytes.Equal(again, raw) {
			t.Fatalf("%s: re-encoding differs", f)
		}
		// And the train file signs and verifies like a new one.
		b := signed(t, m, testKey(3))
		if _, err := Decode(bytes.NewReader(b), f); err != nil {
			t.Fatalf("%s signed: %v", f, err)
		}
	}
}

func TestPublicKeyFile(t *testing.T) {
	pub := pubOf(testKey(4))
	b, err := MarshalPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParsePublicKey(b)
	if err != nil || !bytes.Equal(got, pub) {
		t.Fatalf("%v %x", err, got)
	}
	for name, bad := range map[string][]byte{
		"empty":    nil,
		"private":  []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
		"trailing": append(append([]byte{}, b...), "x"...),
		"huge":     bytes.Repeat([]byte{' '}, MaxKeyFileSize+1),
	} {
		if _, err := ParsePublicKey(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCardSignatureRow(t *testing.T) {
	k := testKey(1)
	m, err := Decode(bytes.NewReader(signed(t, sample(t), k)), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	md := NewCard(m, "m.json", nil).Markdown()
	if !strings.Contains(md, "signed by St Elsewhere ML (fingerprint "+Fingerprint(pubOf(k))+"), signature valid — trust depends on whether you know this key") {
		t.Fatalf("card:\n%s", md)
	}
	if _, err := m.CheckTrust("m.json", []ed25519.PublicKey{pubOf(k)}); err != nil {
		t.Fatal(err)
	}
	if md := NewCard(m, "m.json", nil).Markdown(); !strings.Contains(md, "by a key the reader trusts") {
		t.Fatalf("trusted card:\n%s", md)
	}
}

// An export of a signed model names its signer (the ONNX file itself is
// not signed); an unsigned model's metadata is as before.
func TestONNXMetadataNamesSigner(t *testing.T) {
	m, err := Decode(bytes.NewReader(signed(t, sample(t), testKey(1))), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := ONNXMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	last := meta[len(meta)-1]
	if last[0] != "pairfed.model_signer" || !strings.Contains(last[1], Fingerprint(pubOf(testKey(1)))) {
		t.Fatalf("metadata %v", last)
	}
	m.Signature = nil
	if plain, _ := ONNXMetadata(m); len(plain) != len(meta)-1 {
		t.Fatalf("unsigned metadata has %d entries, signed %d", len(plain), len(meta))
	}
}

// Probe 5 (issue 28): a second "signature" block — before the valid one
// (which encoding/json keeps) or after it — is refused: pairfed never
// writes a key twice, and a reader keeping the first block would name
// another signer. The same file without the extra block decodes.
func TestDuplicateSignatureBlockRefused(t *testing.T) {
	raw := signed(t, sample(t), testKey(1))
	other := signed(t, sample(t), testKey(2))
	var o map[string]json.RawMessage
	if err := json.Unmarshal(other, &o); err != nil {
		t.Fatal(err)
	}
	block := append(append([]byte(`"signature": `), o["signature"]...), ',')
	first := append(append([]byte("{"), block...), raw[1:]...)
	i := bytes.LastIndexByte(raw, '}')
	last := append(append(append([]byte(nil), raw[:i]...), append([]byte(`, "signature": `), o["signature"]...)...), raw[i:]...)
	for name, in := range map[string][]byte{"first": first, "last": last} {
		if _, err := Decode(bytes.NewReader(in), "m"); err == nil || !strings.Contains(err.Error(), `the key "signature" appears twice in the top of the file`) {
			t.Errorf("a second signature block %s: %v", name, err)
		}
	}
	if _, err := Decode(bytes.NewReader(raw), "m"); err != nil {
		t.Fatal(err)
	}
}

// A key given twice inside an object is refused like a top-level one,
// naming where.
func TestDuplicateNestedKeyRefused(t *testing.T) {
	raw := signed(t, sample(t), testKey(1))
	key := []byte(`"preprocessing": {`)
	i := bytes.Index(raw, key)
	if i < 0 {
		t.Fatalf("no %s in the sample", key)
	}
	j := i + len(key)
	in := append(append(append([]byte(nil), raw[:j]...), `"dim": 1, "dim": 2, `...), raw[j:]...)
	if _, err := Decode(bytes.NewReader(in), "m"); err == nil || !strings.Contains(err.Error(), `the key "dim" appears twice in "preprocessing"`) {
		t.Errorf("a duplicated key in preprocessing: %v", err)
	}
	// Unit cases of the scanner: an element of an array, a deep object,
	// and files without duplicates.
	for in, want := range map[string]string{
		`{"a": [{"x": 1, "x": 2}]}`:               `the key "x" appears twice in an element of "a"`,
		`{"a": {"b": {"c": 1, "c": [1]}}}`:        `the key "c" appears twice in "b"`,
		`{"a": 1, "a": 2}`:                        `the key "a" appears twice in the top of the file`,
		`{"a": {"x": 1}, "b": {"x": 1}, "c": []}`: "",
		`{"a": [[{"x": 1}], {"x": 2}], "x": 3}`:   "",
	} {
		err := uniqueKeys([]byte(in))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}
