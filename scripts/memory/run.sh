#!/bin/sh
# Peak RSS of `pairfed train` on a synthetic n × 22 dense LIBSVM file,
# divided by the training matrix (n·22·8 bytes of values + n·8 of labels).
# Usage: sh scripts/memory/run.sh [n]   (default n = 1000000)
# EXTRA="--max-memory 6GiB" passes more flags to every run (train refuses
# a file whose estimated copies exceed its default budget: n = 5·10⁶
# needs it).
set -eu
n=${1:-1000000}
dir=${TMPDIR:-/tmp}/pairfed-memory
mkdir -p "$dir"
go build -o "$dir/pairfed" ./cmd/pairfed
data=$dir/big-$n.svm
if [ ! -s "$data" ]; then
	# 22 features: 10 one-hot indicators and 12 values in [-1, 1], every
	# value written (the ijcnn1 shape, fully dense); labels ±1, 30 % +1.
	awk -v n="$n" 'BEGIN {
		srand(1)
		for (i = 0; i < n; i++) {
			lab = (rand() < 0.3) ? "+1" : "-1"
			h = int(rand() * 10) + 1
			line = lab
			for (j = 1; j <= 10; j++) line = line " " j ":" (j == h ? 1 : 0.5)
			for (j = 11; j <= 22; j++) line = line sprintf(" %d:%.6f", j, 2 * rand() - 1)
			print line
		}
	}' >"$data"
fi
schema=$dir/schema22.json
cat >"$schema" <<'JSON'
{
  "version": 1,
  "name": "synthetic 22 features",
  "features": [
    {"name": "a", "count": 10, "lo": 0, "hi": 1, "source": "generator"},
    {"name": "b", "count": 12, "lo": -1, "hi": 1, "source": "generator"}
  ]
}
JSON
matrix=$(( n * 22 * 8 + n * 8 ))
run() {
	what=$1
	shift
	out=$(/usr/bin/time -f %M "$dir/pairfed" train --data "$data" --no-progress ${EXTRA:-} "$@" 2>&1 >/dev/null)
	case $out in
	*"non-zero status"*)
		echo "| $what | failed: $(echo "$out" | head -1) |"
		return
		;;
	esac
	kb=$(echo "$out" | tail -1)
	awk -v w="$what" -v kb="$kb" -v m="$matrix" 'BEGIN { printf "| %s | %.0f MiB | %.1f× |\n", w, kb / 1024, kb * 1024 / m }'
}
echo "n = $n, matrix $(( matrix / 1048576 )) MiB"
echo "| run | peak RSS | ÷ the training matrix |"
echo "|---|---|---|"
run "default (selection)"
run "\`--eta 1 --param-radius 10\`" --eta 1 --param-radius 10
run "private (\`--epsilon 1\`)" --epsilon 1 --feature-bounds "$schema"
