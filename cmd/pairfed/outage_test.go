package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pairfed/pairfed/transport"
)

// Issue 28, findings on process control. Each case runs the binary.
//
//   - SIGHUP (the hang-up of the session that started a coordinator) killed
//     it without a word: it now stops as for SIGTERM, saying which signal.
//   - A worker whose NATS server is unreachable took 5 s to stop on SIGINT
//     (closing the connection flushed it for its whole timeout): it stops
//     at once. The bound (3 s) is far below the 5 s flush it replaces and
//     far above the milliseconds it takes (false failures need a 3 s stall
//     of a 2-core machine).
//   - A worker refused for wrong credentials must exit with an error naming
//     the credential problem, not retry for ever: at start, and when the
//     server it runs against restarts with other credentials (it kept
//     running before).
func TestProcessControl(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	childPairfed(t)
	site := filepath.Join("testdata", "bad", "site-a.libsvm")

	t.Run("coordinator SIGHUP", func(t *testing.T) {
		p := startChild(t, "coordinator", "--listen", "127.0.0.1:0", "--federation", "hup", "--state", t.TempDir(), "--tick", "10ms")
		time.Sleep(700 * time.Millisecond)
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		p.wait(t, 10*time.Second)
		if p.code != 0 || !strings.Contains(p.stderr.String(), "SIGHUP") || !strings.Contains(p.stderr.String(), "stopping") {
			t.Errorf("exit %d, want 0 with a line naming SIGHUP:\n%s", p.code, fedTail(p.stderr.String(), 2000))
		}
	})

	t.Run("worker SIGINT, server unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close() // nothing listens there now
		p := startChild(t, "worker", "--nats", fmt.Sprintf("nats://127.0.0.1:%d", port), "--federation", "f", "--site", "s", "--data", site,
			"--state", t.TempDir(), "--scale", "minmax", "--tick", "10ms")
		time.Sleep(700 * time.Millisecond)
		sent := time.Now()
		if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		p.wait(t, 10*time.Second)
		if took := time.Since(sent); took > 3*time.Second {
			t.Errorf("stopped %v after SIGINT, want ≤ 3 s (the 5 s flush of a connection that is down)", took)
		}
		if !strings.Contains(p.stderr.String(), "SIGINT") || !strings.Contains(p.stderr.String(), "interrupted") {
			t.Errorf("stderr does not name the signal:\n%s", fedTail(p.stderr.String(), 2000))
		}
	})

	t.Run("worker wrong token at start", func(t *testing.T) {
		s, err := transport.StartListening("127.0.0.1", 0, "right-token")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Shutdown()
		url := strings.Replace(s.ClientURL(), "nats://", "nats://wrong-token@", 1)
		p := startChild(t, "worker", "--nats", url, "--federation", "f", "--site", "s", "--data", site, "--state", t.TempDir(), "--scale", "minmax", "--tick", "10ms")
		p.wait(t, 20*time.Second)
		out := p.stderr.String()
		if p.code == 0 || !strings.Contains(out, "refuses this process's credentials") || strings.Contains(out, "wrong-token") {
			t.Errorf("exit %d; want an error naming the credentials, without the token:\n%s", p.code, fedTail(out, 2000))
		}
	})

	t.Run("worker credentials refused after a server restart", func(t *testing.T) {
		s, err := transport.StartListening("127.0.0.1", 0, "old-token")
		if err != nil {
			t.Fatal(err)
		}
		port := s.Addr().(*net.TCPAddr).Port
		base := s.NumSubscriptions() // the server's own
		p := startChild(t, "worker", "--nats", fmt.Sprintf("nats://old-token@127.0.0.1:%d", port), "--federation", "f", "--site", "s", "--data", site,
			"--state", t.TempDir(), "--scale", "minmax", "--tick", "10ms")
		// Connected and subscribed to its two subjects (worker/run.go): a
		// shutdown in between made the worker stop on "subscribe:
		// connection closed" instead of reaching the restarted server
		// (seen under a loaded go test).
		deadline := time.Now().Add(20 * time.Second)
		for (s.NumClients() == 0 || s.NumSubscriptions() < base+2) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if s.NumClients() == 0 || s.NumSubscriptions() < base+2 {
			t.Fatalf("the worker never connected and subscribed (%d clients, %d subscriptions beyond the server's %d)", s.NumClients(), s.NumSubscriptions()-base, base)
		}
		s.Shutdown()
		s.WaitForShutdown()
		s2, err := transport.StartListening("127.0.0.1", port, "new-token")
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Shutdown()
		p.wait(t, 30*time.Second)
		out := p.stderr.String()
		if p.code == 0 || !strings.Contains(out, "refuses this process's credentials") {
			t.Errorf("exit %d; want an error naming the credentials:\n%s", p.code, fedTail(out, 2000))
		}
	})
}
