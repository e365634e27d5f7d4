#!/bin/sh
# `pairfed train` on sparse data that stays sparse: N = 10⁵ synthetic
# records with 12 nonzeros each (scripts/memory/gen.sh sparse: one value in
# [-1, 1] in each of 12 disjoint ranges of ⌊d/12⌋ features, 30 %
# positives, whose values on even features are made nonnegative: a signal)
# at d = 10⁴ and 10⁵, four commands:
#   default  pairfed train --data FILE            (sgd-prev with selection)
#   private  pairfed train --data FILE --epsilon 1 --feature-bounds SCHEMA
#            (dp-pair-sgd; SCHEMA: every feature in [-1, 1], midpoint 0, so
#            the map sends 0 to 0 and the data stay sparse)
# Prints CPU (user + system of the process) and peak RSS (/usr/bin/time
# %M), medians of REPS runs, the commands alternating.
#
#   sh scripts/sparsetrain/run.sh          # N=100000 REPS=3 DIMS="10000 100000"
# PAIRFED=path measures that binary instead of building this tree's;
# GOMAXPROCS is left as it is (set it to 1 to count one thread's work).
set -eu
cd "$(dirname "$0")/../.."
N=${N:-100000}
REPS=${REPS:-3}
DIMS=${DIMS:-10000 100000}
[ -x /usr/bin/time ] || { echo "sparsetrain: needs /usr/bin/time (Debian: apt-get install -y time)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PF=${PAIRFED:-}
if [ -z "$PF" ]; then
	PF=$TMP/pairfed
	go build -o "$PF" ./cmd/pairfed
fi
for d in $DIMS; do
	sh scripts/memory/gen.sh sparse "$N" "$d" signal >"$TMP/sparse-$d.svm"
	cat >"$TMP/schema-$d.json" <<JSON
{
  "version": 1,
  "name": "synthetic sparse, $d features",
  "features": [
    {"name": "f", "count": $d, "lo": -1, "hi": 1, "source": "generator"}
  ]
}
JSON
done
run() { # key d flags...
	key=$1 d=$2
	shift 2
	/usr/bin/time -f '%U %S %M' -o "$TMP/time" "$PF" train --data "$TMP/sparse-$d.svm" --no-progress --json "$@" >"$TMP/out" 2>"$TMP/err" ||
		{ cat "$TMP/err" >&2; echo "sparsetrain: pairfed train failed at d = $d ($key)" >&2; exit 1; }
	auc=$(awk '/"auc"/ { a = 1 } a && /"mean"/ { gsub(/[,]/, "", $2); print $2; exit }' "$TMP/out")
	awk -v k="$key" -v d="$d" -v auc="$auc" '{ print k, d, $1 + $2, $3, auc }' "$TMP/time" >>"$TMP/res"
}
for r in $(seq "$REPS"); do
	for d in $DIMS; do
		run default "$d"
		run private "$d" --epsilon 1 --feature-bounds "$TMP/schema-$d.json"
	done
done
echo "| d | run | CPU s | peak RSS MiB | AUC |"
echo "|---|---|---|---|---|"
awk '
	function med(k,   m, i, j, t, a) { m = c[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
		for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j] < a[j-1]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return m % 2 ? a[(m+1)/2] : (a[m/2] + a[m/2+1]) / 2 }
	{ k = $2 " " $1; if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	  v[k, ++c[k]] = $3; rss[k] = rss[k] > $4 ? rss[k] : $4; auc[k] = $5 }
	END { for (q = 1; q <= nk; q++) { split(order[q], f, " ")
		label = f[2] == "default" ? "default (`pairfed train --data FILE`)" : "private (`--epsilon 1 --feature-bounds` midpoint-0 schema)"
		printf "| %d | %s | %.2f | %.0f | %.4f |\n", f[1], label, med(order[q]), rss[order[q]] / 1024, auc[order[q]] } }' "$TMP/res"
echo
echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores (load average $(cut -d' ' -f1-3 /proc/loadavg)); N = $N records, 12 nonzeros each; GOMAXPROCS=${GOMAXPROCS:-unset}; medians of $REPS runs (peak RSS: the largest); CPU = user + system of the process."
