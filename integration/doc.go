// Package integration holds end-to-end tests that build the pairfed
// binary and run federations as separate processes over real NATS
// (loopback only). They run with the build tag:
//
//	go test -tags integration ./integration/
//
// They need Debian's nats-server (apt-get install nats-server;
// /usr/sbin/nats-server): the crash tests kill the coordinator while the
// server lives on, and the deployment tests run the generated hub and
// leaf-node configurations. The dashboard test needs chromium. .ci/run
// installs both; without them these tests fail rather than skip.
package integration
