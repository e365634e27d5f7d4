// Package publicdata finds the public benchmark files (LIBSVM's a9a and
// ijcnn1, UCI's wdbc, hepatitis, …) that some tests and benchmarks read.
// They are not bundled with pairfed (only datasets/diabetes and
// datasets/messidor_features.arff are): a user who has them names their
// folder in the environment variable PAIRFED_DATASETS, and the tests that
// need them skip with a message that says so when it is unset.
package publicdata

import (
	"os"
	"path/filepath"
	"testing"
)

// Env is the environment variable naming the folder of public files.
const Env = "PAIRFED_DATASETS"

// Dir returns the folder named by PAIRFED_DATASETS, or skips t with a
// message naming the variable when it is unset or not a directory.
func Dir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(Env)
	if dir == "" {
		t.Skipf("needs the public benchmark files: set %s to the folder holding them (see the README, \"Public benchmark data\")", Env)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Skipf("%s=%s is not a readable folder (%v): set it to the folder holding the public benchmark files", Env, dir, err)
	}
	return dir
}

// File returns the path of name inside Dir(t), skipping t with a message
// when the file is absent.
func File(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Dir(t), name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s: %v (set %s to a folder holding it)", name, err, Env)
	}
	return p
}
