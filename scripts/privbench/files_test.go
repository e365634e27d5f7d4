package main

import (
	"strings"
	"testing"
)

// TestAddFiles: -files adds name=train[:test] datasets and refuses a
// malformed item or a name already taken, naming the item.
func TestAddFiles(t *testing.T) {
	saved := files
	t.Cleanup(func() { files = saved })
	files = map[string][2]string{"diabetes": {"diabetes", ""}}
	if err := addFiles("mnist-0=mnist.libsvm,x=tr.libsvm:te.libsvm"); err != nil {
		t.Fatal(err)
	}
	if got := files["mnist-0"]; got != [2]string{"mnist.libsvm", ""} {
		t.Errorf("mnist-0 = %q, want mnist.libsvm without a test file", got)
	}
	if got := files["x"]; got != [2]string{"tr.libsvm", "te.libsvm"} {
		t.Errorf("x = %q, want tr.libsvm:te.libsvm", got)
	}
	for _, bad := range []string{"noequals", "=a.libsvm", "y=", "diabetes=other"} {
		err := addFiles(bad)
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("addFiles(%q) = %v, want an error naming the item", bad, err)
		}
	}
	if err := addFiles(""); err != nil {
		t.Errorf("addFiles(\"\") = %v, want nil", err)
	}
}
