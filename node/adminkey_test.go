package node

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
)

// The operator's admin key is generated once into the state directory
// (0600, hex of 32 bytes) and read back unchanged at the next start; a
// file others can read, one that is not a key, or a directory under its
// name stops the coordinator with the fix.
func TestAdminKey(t *testing.T) {
	state := t.TempDir()
	h1, path, made, err := adminKey(state)
	if err != nil || !made || path != filepath.Join(state, AdminKeyFile) {
		t.Fatalf("first start: %v, made %v, %s", err, made, path)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin key file: %v %v", fi, err)
	}
	b, _ := os.ReadFile(path)
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != 32 || !bytes.Equal(coordinator.CancelHash(key), h1) {
		t.Fatalf("the file %q is not the key of the hash", b)
	}
	h2, _, made, err := adminKey(state)
	if err != nil || made || !bytes.Equal(h1, h2) {
		t.Fatalf("second start: %v, made %v, same hash %v", err, made, bytes.Equal(h1, h2))
	}
	if h3, _, _, _ := adminKey(t.TempDir()); bytes.Equal(h1, h3) {
		t.Error("two state directories drew the same admin key")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := adminKey(state); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("mode 0644: %v", err)
	}
	if err := os.WriteFile(path, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := adminKey(state); err == nil || !strings.Contains(err.Error(), "holds no admin key") {
		t.Errorf("a file that is not a key: %v", err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, AdminKeyFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := adminKey(dir); err == nil || !strings.Contains(err.Error(), "admin.key is a directory, not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	// Probe 7: a symbolic link (even to a good key) is refused and named
	// as one, not by Go's mode string "L---------".
	link := t.TempDir()
	if err := os.Symlink(path, filepath.Join(link, AdminKeyFile)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := adminKey(link); err == nil || !strings.Contains(err.Error(), "is a symbolic link") || strings.Contains(err.Error(), "L---") {
		t.Errorf("a symbolic link: %v", err)
	}
}
