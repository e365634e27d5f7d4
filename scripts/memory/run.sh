#!/bin/sh
# Peak RSS of `pairfed train` on a synthetic LIBSVM file of n records,
# divided by the training matrix in its own representation:
#   dense:  n × 22, every value written (the ijcnn1 shape):
#           n·22·8 bytes of values + n·8 of labels;
#   sparse: n × 10⁴, 12 nonzeros per record (CSR):
#           n·12·(8 + 4) of values and indices + (n + 1)·8 of row
#           pointers + n·8 of labels.
# Usage: sh scripts/memory/run.sh [n] [dense|sparse]   (default 1000000 dense)
# EXTRA="--max-memory 6GiB" passes more flags to every run (train refuses
# a file whose estimated copies exceed its default budget: n = 5·10⁶
# dense needs it). PAIRFED=path measures that binary instead of building
# this tree's (before/after tables); ONLY="eta private" runs only those of
# the three rows (default, eta, private). Runs one command at a time, niced.
set -eu
cd "$(dirname "$0")/../.."
n=${1:-1000000}
shape=${2:-dense}
dir=${TMPDIR:-/tmp}/pairfed-memory
mkdir -p "$dir"
bin=${PAIRFED:-}
if [ -z "$bin" ]; then
	bin=$dir/pairfed
	go build -o "$bin" ./cmd/pairfed
fi
case $shape in
dense)
	data=$dir/big-$n.svm
	if [ ! -s "$data" ]; then
		# 22 features, every value written (the ijcnn1 shape): gen.sh
		sh scripts/memory/gen.sh dense "$n" >"$data"
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
	matrix=$((n * 22 * 8 + n * 8))
	;;
sparse)
	data=$dir/sparse-$n.svm
	if [ ! -s "$data" ]; then
		# d = 10⁴, 12 nonzeros per record: gen.sh
		sh scripts/memory/gen.sh sparse "$n" 10000 >"$data"
	fi
	schema=$dir/schema10k.json
	# Midpoint-0 bounds: the map sends 0 to 0, the data stay sparse.
	cat >"$schema" <<'JSON'
{
  "version": 1,
  "name": "synthetic sparse, 10 000 features",
  "features": [
    {"name": "f", "count": 10000, "lo": -1, "hi": 1, "source": "generator"}
  ]
}
JSON
	matrix=$((n * 12 * 12 + (n + 1) * 8 + n * 8))
	;;
*)
	echo "run.sh: unknown shape $shape (dense or sparse)" >&2
	exit 2
	;;
esac
run() {
	key=$1 what=$2
	shift 2
	case " ${ONLY:-default eta private} " in
	*" $key "*) ;;
	*) return ;;
	esac
	out=$(nice -n 19 /usr/bin/time -f %M "$bin" train --data "$data" --no-progress ${EXTRA:-} "$@" 2>&1 >/dev/null)
	case $out in
	*"non-zero status"*)
		echo "| $what | failed: $(echo "$out" | head -1) |"
		return
		;;
	esac
	kb=$(echo "$out" | tail -1)
	awk -v w="$what" -v kb="$kb" -v m="$matrix" 'BEGIN { printf "| %s | %.0f MiB | %.2f× |\n", w, kb / 1024, kb * 1024 / m }'
}
echo "n = $n $shape, matrix $((matrix / 1048576)) MiB"
echo "| run | peak RSS | ÷ the training matrix |"
echo "|---|---|---|"
run default "default (selection)"
run eta "\`--eta 1 --param-radius 10\`" --eta 1 --param-radius 10
run private "private (\`--epsilon 1 --feature-bounds\` schema)" --epsilon 1 --feature-bounds "$schema"
