#!/bin/sh
# The end-to-end private targets of issue 12, each run exactly as a user
# would run it: `pairfed train` / `pairfed simulate` with --epsilon and NO
# --algo (the default rule picks the mechanism), feature bounds from a
# public schema (or estimated under DP where a dataset has none), the
# default δ = 1/(10n), secure noise, `private: true` checked. Prints one
# markdown row per target: mean test AUC ± standard error (std/√runs) over
# RUNS runs (stratified 80/20 splits; a9a and ijcnn1 use their test files).
#
#   sh scripts/targets.sh            # RUNS=50 (RUNS_LARGE=5 for a9a, ijcnn1)
#
# Needs jq. Takes about a minute on 2 cores.
set -eu
cd "$(dirname "$0")/.."
D=${DATA:-${PAIRFED_DATASETS:?set PAIRFED_DATASETS (or DATA) to the folder of public benchmark files}}
RUNS=${RUNS:-50}
RUNS_LARGE=${RUNS_LARGE:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PF=$TMP/pairfed
go build -o "$PF" ./cmd/pairfed

# bounds FILE DIM: the schema when there is one, else DP ranges (--dim).
bounds() { if [ -f "schemas/$1.json" ]; then echo "--feature-bounds schemas/$1.json"; else echo "--dim $2"; fi; }

# row LABEL TARGET CMD...: run CMD (which prints pairfed's --json) and
# print | label | algorithm | AUC ± se | target | met? | private |.
row() {
	label=$1 target=$2
	shift 2
	if ! "$@" --json >"$TMP/out" 2>"$TMP/err"; then
		echo "| $label | error: $(tail -1 "$TMP/err") | | $target | | |"
		return
	fi
	jq -r --arg lbl "$label" --argjson tgt "$target" '
		(.auc.values) as $v | ($v | length) as $n | ($v | add / $n) as $m |
		(if $n > 1 then ([$v[] | (. - $m) * (. - $m)] | add / ($n - 1) | sqrt) / ($n | sqrt) else 0 end) as $se |
		"| \($lbl) | \(.algorithm) | \($m * 1000 | round / 1000) ± \($se * 1000 | round / 1000) (\($n)) | \($tgt // "—") | \(if $tgt == null then "—" elif $m >= $tgt then "met" else "short by \(($tgt - $m) * 1000 | round / 1000)" end) | \(.private) |"' "$TMP/out"
}

echo "| target | algorithm (default rule) | AUC ± se (runs) | target | | private |"
echo "|---|---|---|---|---|---|"
row "diabetes, full split, ε = 1" 0.79 "$PF" train --data "$D/diabetes" $(bounds diabetes 8) --epsilon 1 --runs "$RUNS"
row "german.numer, ε = 1" 0.76 "$PF" train --data "$D/german.numer" $(bounds german.numer 24) --epsilon 1 --runs "$RUNS"
row "diabetes, n = 256, ε = 0.5" 0.74 "$PF" train --data "$D/diabetes" $(bounds diabetes 8) --epsilon 0.5 --train-size 256 --runs "$RUNS"
row "messidor, n = 256, ε = 0.5" 0.70 "$PF" train --data "$D/messidor_features.arff" $(bounds messidor 19) --epsilon 0.5 --train-size 256 --runs "$RUNS"
row "ijcnn1, ε = 1" 0.92 "$PF" train --data "$D/ijcnn1.trn.bz2" --test "$D/ijcnn1.tst.bz2" $(bounds ijcnn1 22) --epsilon 1 --runs "$RUNS_LARGE"
row "a9a, ε = 1" 0.88 "$PF" train --data "$D/a9a" --test "$D/a9a.t" $(bounds a9a 123) --epsilon 1 --runs "$RUNS_LARGE"
# Federated: ε = 1 per site; "pooled" is the same algorithm with one site
# holding every training record.
row "federated pooled (1 site), diabetes" null "$PF" simulate --data "$D/diabetes" $(bounds diabetes 8) --sites 1 --epsilon 1 --runs "$RUNS"
row "federated 4 sites iid, diabetes (within 0.02 of pooled)" null "$PF" simulate --data "$D/diabetes" $(bounds diabetes 8) --sites 4 --epsilon 1 --runs "$RUNS"
row "federated 4 single-class sites, diabetes" 0.78 "$PF" simulate --data "$D/diabetes" $(bounds diabetes 8) --sites 4 --partition single-class --epsilon 1 --runs "$RUNS"
row "federated 4 sites iid, secure aggregation (default t = 3 of 4)" null "$PF" simulate --data "$D/diabetes" $(bounds diabetes 8) --sites 4 --epsilon 1 --secure-aggregation --runs "$RUNS"
row "federated 4 single-class sites, secure aggregation" 0.78 "$PF" simulate --data "$D/diabetes" $(bounds diabetes 8) --sites 4 --partition single-class --epsilon 1 --secure-aggregation --runs "$RUNS"
row "federated 16 sites iid, diabetes" null "$PF" simulate --data "$D/diabetes" $(bounds diabetes 8) --sites 16 --epsilon 1 --runs "$RUNS"
