package round

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"

	"github.com/pairfed/pairfed/protocol"
)

// Files of the long-term secure aggregation keys (pairfed deploy init
// writes them; the worker reads --secagg-key and --secagg-roster, the
// coordinator --secagg-roster).
//
// A site's signing key is a PEM "PRIVATE KEY" block (PKCS #8, Ed25519),
// secret to the site. It is NOT the site's NATS nkey, although nkeys are
// Ed25519 too: the NATS server makes a client sign the nonce it chooses,
// so whoever runs the server — in most deployments the coordinator's
// operator — could have a site sign a consistency message (any bytes)
// with its nkey, and forge exactly the signatures the check relies on.
// A key used for nothing else signs only what secagg asks it to.
//
// The roster is public: a JSON object {"sites": {"<site>": "<base64 of
// the 32-byte public key>"}}, the same file for every party.

// MaxRosterSites bounds a roster file (a federation's sites; a job uses
// at most protocol.MaxSites of them).
const MaxRosterSites = 4096

// MaxKeyFileSize bounds the key and roster files a party reads.
const MaxKeyFileSize = 1 << 20

// MarshalSigningKey encodes a site's signing key (PEM, PKCS #8).
func MarshalSigningKey(k ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("round: signing key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Headers: map[string]string{"Purpose": "pairfed secure aggregation signing key (Ed25519)"}, Bytes: der}), nil
}

// ParseSigningKey decodes MarshalSigningKey's encoding.
func ParseSigningKey(b []byte) (ed25519.PrivateKey, error) {
	if len(b) > MaxKeyFileSize {
		return nil, fmt.Errorf("round: signing key file of %d bytes exceeds %d", len(b), MaxKeyFileSize)
	}
	blk, rest := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("round: the signing key file holds no PEM \"PRIVATE KEY\" block (pairfed deploy init writes site-<name>/secagg-key.pem)")
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("round: the signing key file has data after its key")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("round: signing key: %w", err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("round: the signing key is a %T, want Ed25519", k)
	}
	return ek, nil
}

type rosterFile struct {
	Sites map[string][]byte `json:"sites"`
}

// MarshalRoster encodes a roster (site → public key), sites sorted.
func MarshalRoster(r map[string]ed25519.PublicKey) ([]byte, error) {
	if err := checkRoster(r); err != nil {
		return nil, err
	}
	f := rosterFile{Sites: map[string][]byte{}}
	for s, k := range r {
		f.Sites[s] = k
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseRoster decodes MarshalRoster's encoding strictly: valid site names,
// 32-byte keys, no key shared by two sites, no unknown field.
func ParseRoster(b []byte) (map[string]ed25519.PublicKey, error) {
	if len(b) > MaxKeyFileSize {
		return nil, fmt.Errorf("round: roster file of %d bytes exceeds %d", len(b), MaxKeyFileSize)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f rosterFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("round: roster: %w (want {\"sites\": {\"<site>\": \"<base64 Ed25519 public key>\"}})", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("round: roster: data after the roster object")
	}
	r := map[string]ed25519.PublicKey{}
	for s, k := range f.Sites {
		r[s] = k
	}
	if err := checkRoster(r); err != nil {
		return nil, err
	}
	return r, nil
}

func checkRoster(r map[string]ed25519.PublicKey) error {
	if len(r) == 0 {
		return fmt.Errorf("round: the roster lists no site")
	}
	if len(r) > MaxRosterSites {
		return fmt.Errorf("round: the roster lists %d sites, more than %d", len(r), MaxRosterSites)
	}
	seen := map[string]string{}
	for _, s := range slices.Sorted(maps.Keys(r)) {
		if err := protocol.ValidName("site", s); err != nil {
			return fmt.Errorf("round: roster: %w", err)
		}
		k := r[s]
		if len(k) != ed25519.PublicKeySize {
			return fmt.Errorf("round: roster: site %s's key has %d bytes, want %d", s, len(k), ed25519.PublicKeySize)
		}
		if o, dup := seen[string(k)]; dup {
			return fmt.Errorf("round: roster: sites %s and %s have the same key: each site needs its own", o, s)
		}
		seen[string(k)] = s
	}
	return nil
}
