#!/bin/sh
# Secure aggregation cost grid: rounds/s and bytes per site for
# K ∈ {4, 16, 64} sites and d ∈ {8, 256, 65536} (plus one dropped site at
# K = 16), every site and the server in one process on one core — so the
# time is the whole federation's CPU, not one site's latency (divide by K+1
# for a site's share). One round per cell (-benchtime 1x) keeps the grid
# under ~2 minutes on a 2-core machine; raise BENCHTIME for tighter numbers.
#
# SCALE=1 instead measures one round's CPU per party as K grows
# (scripts/secaggscale: per-site mean and max, server; K = 16 … 1024,
# d = 100, 5% dropout; thread CPU clock, so the machine's load does not
# inflate it), for this tree and for the tree at BASE (default ad973ce,
# the last with math/big Shamir over 2^521 − 1 and K² signature checks):
# docs/federation.md's "Cost vs K" table. ≈ 15 CPU-minutes at K = 1024.
#
# WIRE=1 measures the same per-party CPU with the round's messages going
# over a transport as in `pairfed simulate` (scripts/secaggwire: encoded,
# published, decoded; every party on its own thread), over the embedded
# nats-server and over the in-memory hub, K = 16 … 1024, d = 100, 5%
# dropout after sharing keys: docs/results/secagg-scale.md. ≈ 7
# CPU-minutes per transport at K = 1024. TIMEOUT is the step budget in
# ticks per 16 sites (default 1000 here: on a shared host the 1024 sites of
# one process answer a step only after ≈ 1024 × 0.2 s of CPU in all).
set -eu
cd "$(dirname "$0")/.."
if [ "${WIRE:-0}" = 1 ]; then
	KS=${KS:-16,64,256,1024}
	for tr in nats mem; do
		nice -n 19 go run ./scripts/secaggwire -k "$KS" -transport "$tr" -timeout "${TIMEOUT:-1000}"
	done
	exit 0
fi
if [ "${SCALE:-0}" = 1 ]; then
	KS=${KS:-16,64,256,1024}
	BASE=${BASE:-ad973ce}
	go run ./scripts/secaggscale -k "$KS" -label current
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	git archive "$BASE" | tar -x -C "$tmp"
	mkdir -p "$tmp/scripts/secaggscale"
	cp scripts/secaggscale/main.go "$tmp/scripts/secaggscale/"
	(cd "$tmp" && go run ./scripts/secaggscale -k "$KS" -label "$BASE")
	exit 0
fi
BENCHTIME=${BENCHTIME:-1x}
go test ./secagg -run '^$' -bench 'BenchmarkRound' -benchtime "$BENCHTIME" -cpu 1 "$@"
# The same rounds through the wire codec (protocol kinds 32–40): encoded bytes.
go test ./secagg/round -run '^$' -bench 'BenchmarkWire' -benchtime "$BENCHTIME" -cpu 1 "$@"
