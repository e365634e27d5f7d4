package main

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/secagg/round"
	"github.com/urfave/cli/v2"
)

// Model signing keys (model/sign.go): the private key is the format
// pairfed deploy init writes for secure aggregation (PEM "PRIVATE KEY",
// PKCS #8, Ed25519; read with round.ParseSigningKey), with its own Purpose
// header and the signer's name in a "Signer" header; the public key is
// PEM "PUBLIC KEY" (PKIX) in FILE.pub.

// signKeyPurpose is the Purpose header of a model signing key.
const signKeyPurpose = "pairfed model signing key (Ed25519)"

// signKeyFlag is --sign-key of the commands that write a model.
func signKeyFlag(what string) cli.Flag {
	return &cli.StringFlag{Name: "sign-key", Usage: "sign " + what + " with the Ed25519 private key in `FILE` (pairfed keygen writes one; readers check it with --trust-key FILE.pub)"}
}

// trustKeyFlag is --trust-key of the commands that read a model.
func trustKeyFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "trust-key", Usage: "refuse the model unless it is signed by the public key in `PUBFILE` (repeatable, or a comma list: any of them); without it a signed model is checked against the key it carries, an unsigned one on its checksum"}
}

// readSignKey reads a model signing key: round.ParseSigningKey's format,
// refusing a secure aggregation key (a key used for one purpose signs only
// what that purpose asks). The signer's name is the key file's "Signer"
// header.
func readSignKey(flag, path string) (*model.Signer, error) {
	b, err := readInput(flag, path, round.MaxKeyFileSize)
	if err != nil {
		return nil, err
	}
	if blk, _ := pem.Decode(b); blk != nil && strings.Contains(blk.Headers["Purpose"], "secure aggregation") {
		return nil, fmt.Errorf("%s %s is a secure aggregation signing key: a model needs a key of its own (pairfed keygen --out FILE --name NAME)", flag, path)
	}
	switch blk, _ := pem.Decode(b); {
	case blk != nil && blk.Type == "PUBLIC KEY":
		return nil, fmt.Errorf("%s %s holds a public key: signing needs the private key, the FILE that pairfed keygen --out FILE wrote (FILE.pub is for the readers' --trust-key)", flag, path)
	case blk == nil || blk.Type != "PRIVATE KEY":
		return nil, fmt.Errorf("%s %s holds no PEM \"PRIVATE KEY\" block: give the FILE that pairfed keygen --out FILE wrote", flag, path)
	}
	if kind := otherKeyKind(blk0(b)); kind != "" {
		return nil, fmt.Errorf("%s %s holds %s private key (a TLS key, e.g. from pairfed deploy init?), not an Ed25519 model signing key: pairfed keygen --out FILE --name NAME writes one", flag, path, kind)
	}
	k, err := round.ParseSigningKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %s (pairfed keygen --out FILE writes a model signing key)", flag, path, strings.TrimPrefix(err.Error(), "round: "))
	}
	name := "unnamed key"
	if blk, _ := pem.Decode(b); blk != nil && blk.Headers["Signer"] != "" {
		name = blk.Headers["Signer"]
	}
	if err := model.CheckSignerName(name); err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return &model.Signer{Name: name, Key: k}, nil
}

// blk0 is the DER of b's first PEM block (nil: none).
func blk0(b []byte) []byte {
	if blk, _ := pem.Decode(b); blk != nil {
		return blk.Bytes
	}
	return nil
}

// otherKeyKind names a PKCS #8 private key that is not Ed25519 ("an
// ECDSA", "an RSA"; "" for Ed25519 or what does not parse, which
// round.ParseSigningKey then names).
func otherKeyKind(der []byte) string {
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return ""
	}
	switch k.(type) {
	case *ecdsa.PrivateKey:
		return "an ECDSA"
	case *rsa.PrivateKey:
		return "an RSA"
	case ed25519.PrivateKey:
		return ""
	}
	return fmt.Sprintf("a %T", k)
}

// signKeyOf is the --sign-key of c (nil without one).
func signKeyOf(c *cli.Context) (*model.Signer, error) {
	p := c.String("sign-key")
	if p == "" {
		return nil, nil
	}
	return readSignKey("--sign-key", p)
}

// trustKeys reads --trust-key (repeated or comma lists of files).
func trustKeys(c *cli.Context) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	vals := c.StringSlice("trust-key")
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			b, err := readInput("--trust-key", p, model.MaxKeyFileSize)
			if err != nil {
				return nil, err
			}
			k, err := model.ParsePublicKey(b)
			if err != nil {
				return nil, fmt.Errorf("--trust-key %s: %w", p, err)
			}
			keys = append(keys, k)
		}
	}
	// Probe 5 (issue 28): --trust-key "" (an unset shell variable) or ","
	// named no key and the check was skipped: any file, unsigned
	// included, was accepted although a signature was asked for.
	if c.IsSet("trust-key") && len(keys) == 0 {
		return nil, usageError{fmt.Errorf("--trust-key %q names no key file (an empty value: an unset variable?): give the signer's public key, --trust-key FILE.pub, or drop --trust-key to accept an unsigned file on its checksum", strings.Join(vals, ","))}
	}
	return keys, nil
}

// readTrustedModel reads --model (readModelFile: the signature, if any,
// verified against its embedded key) and checks it against --trust-key.
func readTrustedModel(c *cli.Context) (*model.Model, error) {
	keys, err := trustKeys(c)
	if err != nil {
		return nil, err
	}
	m, err := readModelFile(c.String("model"))
	if err != nil {
		return nil, err
	}
	if _, err := m.CheckTrust(c.String("model"), keys); err != nil {
		return nil, err
	}
	return m, nil
}

func keygenCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "keygen",
		Usage: "create an Ed25519 key pair for signing model files (FILE: private, mode 0600; FILE.pub: public)",
		Description: `Writes a new private key to FILE (PEM PKCS #8, the format of pairfed deploy init's keys, mode
   0600, with the signer's name) and its public key to FILE.pub (PEM). It never overwrites a file.

   Sign with pairfed train --sign-key FILE (or coordinator --sign-key FILE for the job models it
   writes, job model --sign-key FILE); give FILE.pub to whoever reads the models — over a channel
   they trust — and they check with --trust-key FILE.pub (score, evaluate, card, export, verify).

Examples:
   pairfed keygen --out keys/ml-team.pem --name "St Elsewhere ML team"
   pairfed train --data train.csv --epsilon 1 --out-model m.json --sign-key keys/ml-team.pem
   pairfed verify --model m.json --trust-key keys/ml-team.pem.pub`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Required: true, Usage: "write the private key to `FILE` and the public key to FILE.pub (neither may exist)"},
			&cli.StringFlag{Name: "name", Usage: "the signer's name the signatures carry (free text, e.g. a team or hospital; default: the host name)"},
		},
		Action: runKeygen,
	})
}

func runKeygen(c *cli.Context) error {
	out := c.String("out")
	if strings.TrimSpace(out) == "" {
		return usageError{fmt.Errorf("keygen: --out %q is empty: give the private key's file name, e.g. --out keys/ml-team.pem", out)}
	}
	if dir := filepath.Dir(out); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usageError{fmt.Errorf("keygen: --out %s: the directory %s does not exist: create it first (mkdir -p %s), keeping it private", out, dir, dir)}
		}
	}
	name := c.String("name")
	if name == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return usageError{fmt.Errorf("keygen: no --name and no host name: give --name NAME")}
		}
		name = h
	}
	if err := model.CheckSignerName(name); err != nil {
		return usageError{fmt.Errorf("keygen: --name: %w", err)}
	}
	for _, p := range []string{out, out + ".pub"} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("keygen: %s exists: pairfed keygen never overwrites a key (remove it, or choose another --out)", p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("keygen: %w", err)
		}
	}
	if err := checkOutput("--out", out); err != nil {
		return err
	}
	if err := checkOutput("--out (its public key)", out+".pub"); err != nil {
		return err
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	fp := model.Fingerprint(pub)
	kb := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Headers: map[string]string{"Purpose": signKeyPurpose, "Signer": name, "Fingerprint": fp}, Bytes: der})
	pb, err := model.MarshalPublicKey(pub)
	if err != nil {
		return err
	}
	if err := writeNew(out, kb, 0o600); err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	if err := writeNew(out+".pub", pb, 0o644); err != nil {
		os.Remove(out)
		return fmt.Errorf("keygen: %w", err)
	}
	fmt.Fprintf(c.App.Writer, "key fingerprint %s\n", fp)
	fmt.Fprintf(c.App.ErrWriter, "pairfed: wrote %s (private, keep it secret) and %s (public, give it to the models' readers) for signer %q, fingerprint %s\n", out, out+".pub", name, fp)
	return nil
}

// writeNew creates path exclusively (never overwriting) with mode perm.
func writeNew(path string, b []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

func verifyCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "verify",
		Usage: "check a model file's checksum and signature, and whether its signer is one you trust",
		Description: `Reads the model file strictly (checksum, fields, certificate rules) and its signature block, if
   any, and prints the verdict: unsigned (only the checksum: it detects damage, not a deliberate
   edit), signed with a valid signature by a key it names (trust depends on whether you know that
   key), or — with --trust-key — signed by one of the keys you trust. Exit status 1 when the file
   is refused: damaged or tampered, a bad signature, or (with --trust-key) unsigned or signed by
   another key.

   A signature shows who wrote the file and that it was not changed since; it does not prove the
   privacy certificate true (that rests on the training run, the sites' ledgers and the accountant).

Examples:
   pairfed verify --model m.json
   pairfed verify --model m.json --trust-key keys/ml-team.pem.pub --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "model file"},
			trustKeyFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print the verdict as JSON"},
		},
		Action: runVerify,
	})
}

func runVerify(c *cli.Context) error {
	keys, err := trustKeys(c)
	if err != nil && !c.Bool("json") {
		return err
	}
	name := c.String("model")
	v := model.Verdict{Model: name}
	for _, k := range keys {
		v.TrustKeys = append(v.TrustKeys, model.Fingerprint(k))
	}
	// Probe 5: with --json a bad --trust-key printed plain text; the
	// verdict is JSON whatever refused the file.
	if err == nil {
		var m *model.Model
		if m, err = readModelFile(name); err == nil {
			v, err = m.CheckTrust(name, keys)
		}
	}
	if c.Bool("json") {
		out := struct {
			OK bool `json:"ok"`
			model.Verdict
			Error string `json:"error,omitempty"`
		}{OK: err == nil, Verdict: v}
		if err != nil {
			out.Error = err.Error()
		}
		if werr := writeJSON(c.App.Writer, out); werr != nil {
			return werr
		}
		if err != nil {
			return cli.Exit("", 1)
		}
		return nil
	}
	if err != nil {
		fmt.Fprintf(c.App.Writer, "REFUSED %s\n", name)
		return err
	}
	fmt.Fprintf(c.App.Writer, "OK %s: %s\n", name, v.Summary)
	return nil
}
