#!/bin/sh
# Federated private AUC against ε (issue 12, scope 5, the federated half):
# the default federated algorithm for AUC, fed-dp-lda, run by `pairfed
# simulate` end to end private (the shipped schema, δ = 1/(10·n_max),
# secure noise) with 1 site (the pooled release), 4 and 16 IID sites
# with and without secure aggregation (its default threshold ⌊2K/3⌋+1),
# and 4 single-class sites. Prints a markdown table per dataset: mean test
# AUC ± standard error over the runs.
#
#   sh scripts/privbench-fed.sh                  # RUNS=20 (RUNS_LARGE=3 for ijcnn1)
#
# Needs jq. Takes about 5 minutes on 2 cores.
set -eu
cd "$(dirname "$0")/.."
D=${DATA:-${PAIRFED_DATASETS:?set PAIRFED_DATASETS (or DATA) to the folder of public benchmark files}}
RUNS=${RUNS:-20}
RUNS_LARGE=${RUNS_LARGE:-3}
EPS=${EPS:-0.1 0.25 0.5 1 2 5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PF=$TMP/pairfed
go build -o "$PF" ./cmd/pairfed

# cell CMD...: "mean ± se" of pairfed's --json AUC (or the error's last line).
cell() {
	if ! "$@" --json >"$TMP/out" 2>"$TMP/err"; then
		printf 'error: %s' "$(tail -1 "$TMP/err" | cut -c1-60)"
		return
	fi
	jq -j '(.auc.values) as $v | ($v | length) as $n | ($v | add / $n) as $m |
		(if $n > 1 then ([$v[] | (. - $m) * (. - $m)] | add / ($n - 1) | sqrt) / ($n | sqrt) else 0 end) as $se |
		"\($m * 1000 | round / 1000) ± \($se * 1000 | round / 1000)" + (if .private then "" else " (NOT private)" end)' "$TMP/out"
}

table() { # table NAME RUNS ARGS...
	name=$1 runs=$2
	shift 2
	echo
	echo "$name, fed-dp-lda, $runs runs per cell"
	echo
	echo "| ε | pooled (1 site) | 4 iid | 4 iid, secagg | 16 iid | 16 iid, secagg | 4 single-class | 4 single-class, secagg |"
	echo "|---|---|---|---|---|---|---|---|"
	for e in $EPS; do
		S="$PF simulate $* --algo fed-dp-lda --epsilon $e --runs $runs"
		printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$e" \
			"$(cell $S --sites 1)" "$(cell $S --sites 4)" "$(cell $S --sites 4 --secure-aggregation)" \
			"$(cell $S --sites 16)" "$(cell $S --sites 16 --secure-aggregation)" \
			"$(cell $S --sites 4 --partition single-class)" "$(cell $S --sites 4 --partition single-class --secure-aggregation)"
	done
}

table diabetes "$RUNS" --data "$D/diabetes" --feature-bounds schemas/diabetes.json
table ijcnn1 "$RUNS_LARGE" --data "$D/ijcnn1.trn.bz2" --test "$D/ijcnn1.tst.bz2" --feature-bounds schemas/ijcnn1.json
