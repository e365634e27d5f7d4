package model

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Signatures: who wrote a model file, and that nobody changed it since.
//
// The checksum detects damage but anyone can recompute it, so a file
// whose certificate was edited consistently (ε in the certificate, in its
// Why sentence and in every site's guarantee) passes it. A signature block
// binds the whole file to an Ed25519 key:
//
//   - The signed message is SignatureContext followed by the canonical
//     bytes of the model: the compact JSON encoding (Go's encoding/json of
//     Model: fields in the order of the file format, no insignificant
//     white space, numbers in their shortest round-trip form, strings
//     escaped as encoding/json escapes them, the statement compacted) of
//     the model as decoded, with the signature's Value set to "". Every
//     other field is covered: checksum, task, parameters, preprocessing
//     map and schema, algorithm, certificate (ε, δ, Why, sites,
//     statement), provenance, and the signature block's algorithm, signer
//     name, fingerprint and public key. For a file pairfed wrote (indented
//     JSON of the same encoding) the canonical bytes are json.Compact of
//     the file with "value" emptied.
//   - Signing the decoded value, not the file's bytes, is deliberate: what
//     is verified is exactly what score, evaluate, card and export use.
//     White space, another spelling of the same number or a duplicate key
//     that decodes to the same model do not change the canonical bytes;
//     any change of what the model means does. (Decode refuses a
//     top-level key given twice, a second "signature" block included.)
//   - A signature proves that the holder of the private key produced (or
//     approved) this content and that it was not changed after. It does
//     not prove the certificate true: that rests on the training run, the
//     sites' ledgers and the accountant. And a valid signature by an
//     unknown key proves nothing about who that is: only a key the reader
//     already trusts (--trust-key) makes it provenance.
//
// Decode checks every signature it finds against the key embedded in the
// block (a tampered signed file is refused even with a recomputed
// checksum); CheckTrust checks the key against the reader's trusted keys.

// SignatureAlgorithm is the one algorithm a signature block may name.
const SignatureAlgorithm = "ed25519"

// SignatureContext prefixes the canonical bytes in the signed message (a
// signature over a model file is never a valid signature of another
// protocol's message, nor of another version of this canonicalisation).
const SignatureContext = "pairfed-model-signature-v1\n"

// MaxSignerLen bounds a signer's name (bytes).
const MaxSignerLen = 200

// Signature is a model file's signature block (Model.Signature).
type Signature struct {
	// Algorithm is SignatureAlgorithm.
	Algorithm string `json:"algorithm"`
	// Signer is a free-text name of who signed (the key's owner as the
	// key file or the signing command named it; not verified by anyone).
	Signer string `json:"signer"`
	// KeyFingerprint is Fingerprint(PublicKey).
	KeyFingerprint string `json:"key_fingerprint"`
	// PublicKey is the signer's 32-byte Ed25519 public key (standard
	// base64, padded).
	PublicKey string `json:"public_key"`
	// Value is the 64-byte Ed25519 signature (standard base64, padded) of
	// SignatureContext + the canonical bytes.
	Value string `json:"value"`

	// trusted: CheckTrust found the key among the reader's trusted keys.
	trusted bool
}

// Signer is a private key and the name its signatures carry.
type Signer struct {
	Name string
	Key  ed25519.PrivateKey
}

// Fingerprint is how a public key is named: the first 16 hex digits of
// the SHA-256 of its 32 raw bytes.
func Fingerprint(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return hex.EncodeToString(h[:])[:16]
}

// CheckSignerName checks a signer's name: 1 to MaxSignerLen bytes of
// UTF-8 without control characters (it is printed in cards and messages).
func CheckSignerName(name string) error {
	switch {
	case name == "" || strings.TrimSpace(name) != name:
		return fmt.Errorf("signer name %q is empty or has leading or trailing white space", name)
	case len(name) > MaxSignerLen:
		return fmt.Errorf("signer name of %d bytes is longer than %d", len(name), MaxSignerLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("signer name %q is not valid UTF-8", name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Errorf("signer name %q holds a control character", name)
	}
	return nil
}

// EncodeSigned is Encode followed by a signature by s (nil: Encode).
func EncodeSigned(w io.Writer, m *Model, s *Signer) error {
	if s == nil {
		return Encode(w, m)
	}
	if err := CheckSignerName(s.Name); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if len(s.Key) != ed25519.PrivateKeySize {
		return fmt.Errorf("model: the signing key has %d bytes, want an Ed25519 private key of %d", len(s.Key), ed25519.PrivateKeySize)
	}
	m.Signature = nil
	if err := prepare(m); err != nil {
		return err
	}
	pub := s.Key.Public().(ed25519.PublicKey)
	m.Signature = &Signature{Algorithm: SignatureAlgorithm, Signer: s.Name, KeyFingerprint: Fingerprint(pub),
		PublicKey: base64.StdEncoding.EncodeToString(pub)}
	msg, err := m.signedMessage()
	if err != nil {
		return err
	}
	m.Signature.Value = base64.StdEncoding.EncodeToString(ed25519.Sign(s.Key, msg))
	return encodeRaw(w, m)
}

// signedMessage is SignatureContext + the canonical bytes of m.
func (m *Model) signedMessage() ([]byte, error) {
	c := *m
	if c.Signature != nil {
		s := *c.Signature
		s.Value = ""
		c.Signature = &s
	}
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return append([]byte(SignatureContext), b...), nil
}

// verifySignature checks m's signature block against the public key it
// embeds: well formed, the fingerprint that key's, the signature valid
// over the canonical bytes. nil when m is unsigned.
func (m *Model) verifySignature() error {
	s := m.Signature
	if s == nil {
		return nil
	}
	if s.Algorithm != SignatureAlgorithm {
		return fmt.Errorf("signature: algorithm %q is not %q", s.Algorithm, SignatureAlgorithm)
	}
	if err := CheckSignerName(s.Signer); err != nil {
		return fmt.Errorf("signature: %w", err)
	}
	pub, err := decodeFixed("public_key", s.PublicKey, ed25519.PublicKeySize)
	if err != nil {
		return err
	}
	if fp := Fingerprint(pub); s.KeyFingerprint != fp {
		return fmt.Errorf("signature: key_fingerprint %q is not the fingerprint %s of the embedded public key: the signature block was edited", s.KeyFingerprint, fp)
	}
	sig, err := decodeFixed("value", s.Value, ed25519.SignatureSize)
	if err != nil {
		return err
	}
	msg, err := m.signedMessage()
	if err != nil {
		return err
	}
	if !ed25519.Verify(pub, msg, sig) {
		return fmt.Errorf("signature by %s (fingerprint %s) does not verify: the file was changed after it was signed (a recomputed checksum does not help); use the file as its signer wrote it", s.Signer, s.KeyFingerprint)
	}
	return nil
}

// decodeFixed decodes standard base64 of exactly n bytes (the length is
// checked before decoding).
func decodeFixed(field, v string, n int) ([]byte, error) {
	if len(v) != base64.StdEncoding.EncodedLen(n) {
		return nil, fmt.Errorf("signature: %s has %d characters, want %d (base64 of %d bytes)", field, len(v), base64.StdEncoding.EncodedLen(n), n)
	}
	b, err := base64.StdEncoding.Strict().DecodeString(v)
	if err != nil || len(b) != n {
		return nil, fmt.Errorf("signature: %s is not standard base64 of %d bytes", field, n)
	}
	return b, nil
}

// Verdict is what a reader can say of a model file's provenance.
type Verdict struct {
	Model    string `json:"model"`
	Checksum string `json:"checksum"`
	Signed   bool   `json:"signed"`
	// Signer and Fingerprint are the signature block's (Signed).
	Signer      string `json:"signer,omitempty"`
	Fingerprint string `json:"key_fingerprint,omitempty"`
	// Valid: the signature verifies with the embedded key (Decode refuses
	// a file whose signature does not, so a decoded signed model has it).
	Valid bool `json:"signature_valid"`
	// TrustKeys are the fingerprints of the keys the reader trusts
	// (--trust-key); Trusted: the signature is by one of them.
	TrustKeys []string `json:"trust_keys,omitempty"`
	Trusted   bool     `json:"trusted"`
	// Summary says it in one sentence.
	Summary string `json:"summary"`
}

// CheckTrust returns m's verdict (m read from file name) for the trusted
// keys. With no trusted key a signed model is reported valid (Decode
// verified it against its embedded key) but not trusted, an unsigned one
// by its checksum; with trusted keys an unsigned model, or one signed by
// another key, is an error naming the file, the fingerprints and the fix.
// m must come from Decode (its signature verified).
func (m *Model) CheckTrust(name string, trusted []ed25519.PublicKey) (Verdict, error) {
	v := Verdict{Model: name, Checksum: m.Checksum}
	for _, k := range trusted {
		v.TrustKeys = append(v.TrustKeys, Fingerprint(k))
	}
	s := m.Signature
	if s == nil {
		if len(trusted) > 0 {
			return v, fmt.Errorf("model: %s is not signed, and --trust-key asks for a signature by %s: ask its producer for a signed file (pairfed train --sign-key, coordinator --sign-key), or drop --trust-key to accept an unsigned file on its checksum alone", name, strings.Join(v.TrustKeys, " or "))
		}
		v.Summary = "unsigned: checksum " + m.Checksum + " (detects a damaged file, not a deliberate edit: it is no signature)"
		return v, nil
	}
	if err := m.verifySignature(); err != nil { // Decode did; a caller may have changed m since
		return v, fmt.Errorf("model: %s: %w", name, err)
	}
	v.Signed, v.Valid, v.Signer, v.Fingerprint = true, true, s.Signer, s.KeyFingerprint
	if len(trusted) == 0 {
		v.Summary = fmt.Sprintf("signed by %s (fingerprint %s), signature valid — trust depends on whether you know this key (give it to --trust-key)", s.Signer, s.KeyFingerprint)
		return v, nil
	}
	pub, _ := base64.StdEncoding.DecodeString(s.PublicKey)
	if !slices.ContainsFunc(trusted, func(k ed25519.PublicKey) bool { return bytes.Equal(k, pub) }) {
		return v, fmt.Errorf("model: %s is signed by %s with key %s, which is not a trusted key (--trust-key: %s): the file was signed by someone else, or you were given the wrong public key — get the producer's public key over a channel you trust and compare its fingerprint (pairfed verify --trust-key KEY.pub prints it)", name, s.Signer, s.KeyFingerprint, strings.Join(v.TrustKeys, ", "))
	}
	s.trusted, v.Trusted = true, true
	v.Summary = fmt.Sprintf("signed by %s (fingerprint %s), signature valid, by a trusted key (--trust-key)", s.Signer, s.KeyFingerprint)
	return v, nil
}

// MaxKeyFileSize bounds a public key file.
const MaxKeyFileSize = 64 << 10

// MarshalPublicKey encodes a public key as PEM "PUBLIC KEY" (PKIX).
func MarshalPublicKey(pub ed25519.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("model: public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Headers: map[string]string{"Fingerprint": Fingerprint(pub)}, Bytes: der}), nil
}

// ParsePublicKey decodes MarshalPublicKey's encoding strictly: one PEM
// "PUBLIC KEY" block of an Ed25519 key, nothing after it.
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) {
	if len(b) > MaxKeyFileSize {
		return nil, fmt.Errorf("public key file of %d bytes exceeds %d", len(b), MaxKeyFileSize)
	}
	blk, rest := pem.Decode(b)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		what := "no PEM block"
		if blk != nil {
			what = fmt.Sprintf("a PEM %q block", blk.Type)
		}
		return nil, fmt.Errorf("the file holds %s, want a PEM \"PUBLIC KEY\" block (pairfed keygen writes FILE.pub; never pass the private key)", what)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		if next, _ := pem.Decode(rest); next != nil && next.Type == "PUBLIC KEY" {
			// Probe 5 (issue 28): two keys concatenated in one file.
			return nil, fmt.Errorf("the file holds more than one public key: give one file per key (--trust-key a.pub,b.pub trusts either)")
		}
		return nil, fmt.Errorf("the public key file has data after its key")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the public key is a %T, want Ed25519", k)
	}
	return pub, nil
}
