#!/bin/sh
# Why plain (no secure aggregation) federated jobs trail their pooled
# selves on small data: each site's release carries the noise its own
# records need, so the coordinator's sum of K releases holds √K times one
# site's σ. This script checks that this is the whole gap: for K = 4 and
# 16 sites at ε = 1 it finds the ε' at which the pooled job (one site, all
# records) draws σ' = √K·σ_site (bisection on the first release's σ that
# `simulate --json` reports), then runs, on the same RUNS seeded splits,
# the pooled job at ε = 1 and at ε', and the K-site plain job, iid and
# single-class. Prints one markdown table per algorithm: mean test AUC ±
# standard error, and the paired gaps to pooled at ε = 1 and at ε'.
#
#   sh scripts/fedplain.sh            # diabetes, RUNS=160, fed-dp-lda and fed-dp-pair-sgd
#
# Needs jq. About a minute on 2 cores (diabetes is small).
set -eu
cd "$(dirname "$0")/.."
RUNS=${RUNS:-160}
ALGOS=${ALGOS:-fed-dp-lda fed-dp-pair-sgd}
DATA=${DATA:-datasets/diabetes}
SCHEMA=${SCHEMA:-schemas/diabetes.json}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PF=$TMP/pairfed
go build -o "$PF" ./cmd/pairfed

sim() { "$PF" simulate --data "$DATA" --feature-bounds "$SCHEMA" --json "$@"; }
# sigma ALGO SITES EPS: the first release's σ of site 0.
sigma() { sim --algo "$1" --sites "$2" --epsilon "$3" --runs 1 | jq '.privacy[0].sigmas[0] * 1000 | round / 1000'; }
# match ALGO TARGET: the ε' in (0, 1] whose pooled σ is TARGET (σ falls with ε).
match() {
	lo=0.01 hi=1
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18; do
		mid=$(echo "$lo $hi" | awk '{printf "%.6f", ($1 + $2) / 2}')
		s=$(sigma "$1" 1 "$mid")
		if [ "$(echo "$s $2" | awk '{print ($1 > $2)}')" = 1 ]; then lo=$mid; else hi=$mid; fi
	done
	echo "$hi"
}
# cell NAME ARGS...: RUNS seeded runs, the AUC values saved under NAME.
cell() { n=$1; shift; sim --runs "$RUNS" --seed 1 "$@" | jq '.auc.values' >"$TMP/$n.json"; }
# stats A [B]: "mean ± se" of A, or of the paired differences A − B.
stats() {
	if [ $# -eq 1 ]; then
		jq -r '. as $v | ($v | length) as $n | ($v | add / $n) as $m | ([$v[] | (. - $m) * (. - $m)] | add / ($n - 1) / $n | sqrt) as $s | "\($m * 10000 | round / 10000) ± \($s * 10000 | round / 10000)"' "$TMP/$1.json"
	else
		jq -rs '[.[0], .[1]] | transpose | map(.[0] - .[1]) as $v | ($v | length) as $n | ($v | add / $n) as $m | ([$v[] | (. - $m) * (. - $m)] | add / ($n - 1) / $n | sqrt) as $s | "\(if $m >= 0 then "+" else "" end)\($m * 10000 | round / 10000) ± \($s * 10000 | round / 10000)"' "$TMP/$1.json" "$TMP/$2.json"
	fi
}

for a in $ALGOS; do
	echo "### $a, $(basename "$DATA"), ε = 1 per site, $RUNS runs"
	echo
	echo "| job | σ of the first release | AUC | − pooled at ε = 1 | − pooled at ε' (same summed σ) |"
	echo "|---|---|---|---|---|"
	cell "$a-p1" --algo "$a" --sites 1 --epsilon 1
	echo "| pooled, ε = 1 | $(sigma "$a" 1 1) | $(stats "$a-p1") | | |"
	for k in 4 16; do
		s=$(sigma "$a" "$k" 1)
		target=$(echo "$s $k" | awk '{printf "%.6f", $1 * sqrt($2)}')
		e=$(match "$a" "$target")
		cell "$a-pe$k" --algo "$a" --sites 1 --epsilon "$e"
		echo "| pooled, ε' = $e | $(sigma "$a" 1 "$e") (target √$k·$s) | $(stats "$a-pe$k") | $(stats "$a-pe$k" "$a-p1") | |"
		for p in iid single-class; do
			cell "$a-$k-$p" --algo "$a" --sites "$k" --epsilon 1 --partition "$p"
			echo "| $k sites, $p, plain | $s per site | $(stats "$a-$k-$p") | $(stats "$a-$k-$p" "$a-p1") | $(stats "$a-$k-$p" "$a-pe$k") |"
		done
	done
	echo
done
