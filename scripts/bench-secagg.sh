#!/bin/sh
# Secure aggregation cost grid: rounds/s and bytes per site for
# K ∈ {4, 16, 64} sites and d ∈ {8, 256, 65536} (plus one dropped site at
# K = 16), every site and the server in one process on one core — so the
# time is the whole federation's CPU, not one site's latency (divide by K+1
# for a site's share). One round per cell (-benchtime 1x) keeps the grid
# under ~2 minutes on a 2-core machine; raise BENCHTIME for tighter numbers.
set -eu
cd "$(dirname "$0")/.."
BENCHTIME=${BENCHTIME:-1x}
go test ./secagg -run '^$' -bench 'BenchmarkRound' -benchtime "$BENCHTIME" -cpu 1 "$@"
# The same rounds through the wire codec (protocol kinds 32–40): encoded bytes.
go test ./secagg/round -run '^$' -bench 'BenchmarkWire' -benchtime "$BENCHTIME" -cpu 1 "$@"
