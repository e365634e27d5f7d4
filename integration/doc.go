// Package integration holds end-to-end tests that build the pairfed
// binary and run a federation as separate processes over real NATS
// (loopback only). They run with the build tag:
//
//	go test -tags integration ./integration/
//
// If nats-server is on PATH (Debian: apt-get install nats-server,
// /usr/sbin/nats-server) one test uses it; otherwise every test uses the
// coordinator's embedded server (--listen 127.0.0.1:0).
package integration
