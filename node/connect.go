package node

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/pairfed/pairfed/transport"
)

// Connect dials the NATS server(s) servers as name and waits (bounded by
// ctx) until the connection is up; retry makes the first dial retry until
// then. A server that refuses the credentials, or no connection before
// ctx ends, is an error that names the servers without their secrets.
func Connect(ctx context.Context, servers, name string, retry bool, opts ...nats.Option) (*transport.NATS, error) {
	t, err := transport.Connect(servers, name, append([]nats.Option{nats.RetryOnFailedConnect(retry)}, opts...)...)
	if err != nil {
		// Probe 5 (issue 28): without retry a refused login was
		// "transport: connect to URL: nats: Authorization Violation",
		// the URL with its password and no fix.
		if u := errors.Unwrap(err); u != nil {
			err = u
		}
		return nil, connectError(servers, err)
	}
	for !t.Conn().IsConnected() {
		if t.Conn().IsClosed() { // nats.go gives up after repeated authorization errors
			return nil, connectError(servers, t.Conn().LastError())
		}
		select {
		case <-ctx.Done():
			t.Close()
			return nil, connectError(servers, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return t, nil
}

// NATSURLs splits a NATS server list (comma-separated, as nats.Connect
// takes it) into URLs; a URL without a scheme is nats://.
func NATSURLs(servers string) ([]*url.URL, error) {
	var out []*url.URL
	for _, s := range strings.Split(servers, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.Contains(s, "://") {
			s = "nats://" + s
		}
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("NATS URL %q: %w", s, err)
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return nil, fmt.Errorf("NATS URL %q: unknown scheme %q (nats, tls, ws or wss)", s, u.Scheme)
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no NATS URL in %q", servers)
	}
	return out, nil
}

// RedactedServers is servers with any user, password or token of its
// URLs replaced by "redacted", for messages and logs.
func RedactedServers(servers string) string {
	urls, err := NATSURLs(servers)
	if err != nil {
		return "the NATS server"
	}
	out := make([]string, len(urls))
	for i, u := range urls {
		v := *u
		if v.User != nil {
			v.User = url.User("redacted")
		}
		out[i] = v.String()
	}
	return strings.Join(out, ",")
}

// connectError explains why no connection to servers came up: a server
// that refuses this process's credentials is named as such, with the
// flags that carry them (nats.go gives up on it: retrying would never
// succeed); the URLs are shown without their secrets.
func connectError(servers string, err error) error {
	where := RedactedServers(servers)
	if transport.CredentialError(err) {
		return fmt.Errorf("the NATS server %s refuses this process's credentials (%v): check --creds or --nkey, or the user or token in the --nats URL, against the server's configuration (pairfed deploy init writes matching files)", where, err)
	}
	return fmt.Errorf("no connection to %s: %w", where, err)
}
