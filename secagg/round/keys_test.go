package round

import (
	"bytes"
	"strings"
	"testing"
)

// Key and roster files round-trip; malformed ones are refused with a
// reason.
func TestKeyFiles(t *testing.T) {
	pub, priv := testRoster(t, []string{"a", "b", "c"}, 3)
	kb, err := MarshalSigningKey(priv["b"])
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParseSigningKey(kb)
	if err != nil || !bytes.Equal(k, priv["b"]) {
		t.Fatalf("key round trip: %v", err)
	}
	rb, err := MarshalRoster(pub)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseRoster(rb)
	if err != nil || len(r) != 3 || !bytes.Equal(r["c"], pub["c"]) {
		t.Fatalf("roster round trip: %v %v", r, err)
	}
	for name, b := range map[string]string{
		"not json":      "sites: a",
		"unknown field": `{"sites": {}, "x": 1}`,
		"empty":         `{"sites": {}}`,
		"short key":     `{"sites": {"a": "AAAA"}}`,
		"bad name":      `{"sites": {"a b": "` + strings.Repeat("A", 43) + `="}}`,
		"shared key":    `{"sites": {"a": "` + strings.Repeat("A", 43) + `=", "b": "` + strings.Repeat("A", 43) + `="}}`,
		"trailing":      string(rb) + "{}",
	} {
		if _, err := ParseRoster([]byte(b)); err == nil {
			t.Errorf("roster %s: accepted", name)
		}
	}
	if _, err := ParseSigningKey(rb); err == nil {
		t.Error("a roster parsed as a key")
	}
	if _, err := ParseSigningKey(append(kb, "junk"...)); err == nil {
		t.Error("a key file with trailing data accepted")
	}
}
