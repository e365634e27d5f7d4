package secagg

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"

	"golang.org/x/crypto/chacha20"
)

// Primitives, all from the Go standard library or golang.org/x/crypto:
//   - key agreement: X25519 (crypto/ecdh);
//   - key derivation: HKDF-SHA256 (crypto/hkdf), salted with the round id
//     and labelled by purpose, so the masking key and the share-encryption
//     key are independent even if a site reused a key pair;
//   - PRG: the ChaCha20 keystream (x/crypto/chacha20) under a derived 256-bit
//     key and a zero nonce (each key is used for one stream only);
//   - authenticated encryption of shares: AES-256-GCM (crypto/cipher) with
//     the (round, sender, recipient) triple as associated data, so a share
//     cannot be replayed to another recipient, round or claimed sender.

const (
	labelMask  = "pairfed/secagg/v1 pairwise mask"
	labelEnc   = "pairfed/secagg/v1 share encryption"
	labelSelf  = "pairfed/secagg/v1 self mask"
	roundIDLen = 32
)

// newKeyPair draws an X25519 key pair from 32 bytes of rnd.
func newKeyPair(rnd io.Reader) (*ecdh.PrivateKey, error) {
	var b [32]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return nil, fmt.Errorf("secagg: randomness: %w", err)
	}
	return ecdh.X25519().NewPrivateKey(b[:])
}

// agree returns HKDF(ECDH(priv, pub), salt = roundID, info = label).
func agree(priv *ecdh.PrivateKey, pubBytes []byte, roundID []byte, label string) ([]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(pubBytes)
	if err != nil {
		return nil, fmt.Errorf("secagg: bad public key: %w", err)
	}
	shared, err := priv.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("secagg: key agreement: %w", err)
	}
	return hkdf.Key(sha256.New, shared, roundID, label, 32)
}

// selfKey derives the self-mask PRG key from the seed b_u.
func selfKey(seed, roundID []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, seed, roundID, labelSelf, 32)
}

// addMask adds (sign +1) or subtracts (sign −1) the PRG stream of key to
// dst modulo 2^64 (the caller reduces mod 2^b at the end: 2^b divides 2^64,
// so reduction commutes with the additions).
func addMask(dst []uint64, key []byte, sign int) {
	var nonce [chacha20.NonceSize]byte
	c, err := chacha20.NewUnauthenticatedCipher(key, nonce[:])
	if err != nil {
		panic("secagg: chacha20 key: " + err.Error()) // keys are always 32 bytes
	}
	const chunk = 512
	var buf [8 * chunk]byte
	for off := 0; off < len(dst); off += chunk {
		n := min(chunk, len(dst)-off)
		b := buf[:8*n]
		clear(b)
		c.XORKeyStream(b, b)
		for i := 0; i < n; i++ {
			w := binary.LittleEndian.Uint64(b[8*i:])
			if sign > 0 {
				dst[off+i] += w
			} else {
				dst[off+i] -= w
			}
		}
	}
}

// sealShares encrypts plaintext from → to under key.
func seal(key, roundID []byte, from, to uint32, plaintext []byte, rnd io.Reader) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := io.ReadFull(rnd, nonce); err != nil {
		return nil, fmt.Errorf("secagg: randomness: %w", err)
	}
	return aead.Seal(nonce, nonce, plaintext, ad(roundID, from, to)), nil
}

func open(key, roundID []byte, from, to uint32, ct []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	if len(ct) < aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("secagg: ciphertext from site %d is too short (%d bytes)", from, len(ct))
	}
	pt, err := aead.Open(nil, ct[:aead.NonceSize()], ct[aead.NonceSize():], ad(roundID, from, to))
	if err != nil {
		return nil, fmt.Errorf("secagg: shares from site %d fail authentication: %w", from, err)
	}
	return pt, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	blk, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secagg: aes: %w", err)
	}
	return cipher.NewGCM(blk)
}

func ad(roundID []byte, from, to uint32) []byte {
	a := make([]byte, 0, len(roundID)+8)
	a = append(a, roundID...)
	a = binary.BigEndian.AppendUint32(a, from)
	return binary.BigEndian.AppendUint32(a, to)
}
