package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// linearFed is the files and processes of an in-process federation test
// over four linear features: a public schema (s.json, each feature in
// [−3, 3]), a test file and two sites' files (a, b) of n records each.
// start runs a pairfed command whose stop the test's cleanup waits for
// (printing the shared log when the test failed).
type linearFed struct {
	root, schema, test string
	site               map[string]string
	logs               *syncBuffer
	start              func(args ...string) *proc
}

func newLinearFed(t *testing.T, nTest, nSite int) *linearFed {
	t.Helper()
	root := t.TempDir()
	f := &linearFed{root: root, schema: filepath.Join(root, "s.json"), test: filepath.Join(root, "test.libsvm"), logs: &syncBuffer{},
		site: map[string]string{"a": filepath.Join(root, "a.libsvm"), "b": filepath.Join(root, "b.libsvm")}}
	if err := os.WriteFile(f.schema, []byte(`{"features": [{"lo": -3, "hi": 3, "count": 4}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	writeLinearLIBSVM(t, f.test, nTest, 4, 1)
	writeLinearLIBSVM(t, f.site["a"], nSite, 4, 2)
	writeLinearLIBSVM(t, f.site["b"], nSite, 4, 3)
	ctx, cancel := context.WithCancel(context.Background())
	var procs []*proc
	t.Cleanup(func() {
		cancel()
		for _, p := range procs {
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
				t.Error("a process did not stop")
			}
		}
		if t.Failed() {
			t.Logf("log:\n%s", f.logs.String())
		}
	})
	f.start = func(args ...string) *proc {
		p := startPairfed(ctx, f.logs, args...)
		procs = append(procs, p)
		return p
	}
	return f
}

// coordURL waits for a coordinator started with --listen to print its
// URL and returns it.
func coordURL(t *testing.T, coord *proc) string {
	t.Helper()
	urlRE := regexp.MustCompile(`listening on (nats://\S+)`)
	waitFor(t, 15*time.Second, "the coordinator's URL", func() bool { return urlRE.MatchString(coord.stdout.String()) })
	return urlRE.FindStringSubmatch(coord.stdout.String())[1]
}
