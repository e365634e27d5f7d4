package secagg

import (
	"crypto/ed25519"
	"testing"
)

// The verification cache changes no decision: a triple that verified
// verifies again; one byte changed in the key, the message or the
// signature of a remembered triple is checked in full and fails; a failed
// triple is not remembered.
func TestSignatureCacheChangesNoDecision(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(testRand(40))
	other, _, _ := ed25519.GenerateKey(testRand(41))
	msg := []byte("pairfed/secagg test message")
	sig := ed25519.Sign(priv, msg)
	for i := 0; i < 2; i++ { // the second pass hits the cache
		if !verifySig(pub, msg, sig) {
			t.Fatalf("pass %d: a valid signature fails", i)
		}
	}
	flip := func(b []byte, i int) []byte { c := append([]byte{}, b...); c[i] ^= 1; return c }
	for name, ok := range map[string]bool{
		"message":   verifySig(pub, flip(msg, 3), sig),
		"signature": verifySig(pub, msg, flip(sig, 5)),
		"key":       verifySig(other, msg, sig),
		"short sig": verifySig(pub, msg, sig[:63]),
	} {
		if ok {
			t.Errorf("%s changed: verified", name)
		}
	}
	bad := flip(sig, 9)
	if verifySig(pub, msg, bad) || sigCache.has(sigKey(pub, msg, bad)) {
		t.Fatal("a failed triple was remembered")
	}
}
