#!/bin/sh
# The CLI's up-front memory estimate against measured peak RSS, per mode
# and shape (docs/results/memory.md, "The estimate against the measured
# peak"). Each row runs one command under /usr/bin/time (peak RSS of the
# whole process, cached in $TMPDIR/pairfed-memory/peaks: the estimate
# changes no allocation; REMEASURE=1 runs it again) and asks the same
# binary for its estimate of that command (hidden flag --memory-estimate
# exit: printed after the records are read, then the command stops).
# Usage: sh scripts/memory/estimate.sh [ROW ...]
#   ROW = shape:n:mode, shape dense1|dense2|dense22|dense300 (d features,
#   every value written) or sparse (d = 10⁴, 12 nonzeros per record),
#   mode default|eta|private|tune|paper|metric|simulate|folds5|runs3;
#   without ROWs, the table of docs/results/memory.md (ROWS="…" another
#   list). PAIRFED=path measures that binary; EXTRA="…" passes more
#   flags. One run at a time, niced; GOMAXPROCS as the machine has it
#   (the table: 2), since selection fits that many models at once.
set -eu
dir=${TMPDIR:-/tmp}/pairfed-memory
mkdir -p "$dir"
bin=${PAIRFED:-}
if [ -z "$bin" ]; then
	bin=$dir/pairfed-estimate
	go build -o "$bin" ./cmd/pairfed
fi
# gen SHAPE N: writes the data file and its schema, sets $data $schema.
gen() {
	shape=$1 n=$2
	case $shape in
	dense*)
		d=${shape#dense}
		data=$dir/dense$d-$n.svm
		if [ ! -s "$data" ]; then
			# d features, every value written, in [-1, 1]; labels ±1,
			# 30 % +1, the first feature shifted by the label (a signal).
			awk -v n="$n" -v d="$d" 'BEGIN {
				srand(3)
				for (i = 0; i < n; i++) {
					pos = rand() < 0.3
					line = pos ? "+1" : "-1"
					for (j = 1; j <= d; j++) {
						v = 2 * rand() - 1
						if (j == 1) v = v / 2 + (pos ? 0.4 : -0.4)
						line = line sprintf(" %d:%.5f", j, v)
					}
					print line
				}
			}' >"$data.tmp" && mv "$data.tmp" "$data"
		fi
		schema=$dir/schema-dense$d.json
		printf '{"version": 1, "name": "synthetic %s", "features": [{"name": "f", "count": %s, "lo": -1, "hi": 1, "source": "generator"}]}\n' "$d" "$d" >"$schema"
		;;
	sparse)
		data=$dir/sparse-$n.svm
		if [ ! -s "$data" ]; then
			# the shape of run.sh's sparse mode (the same generator)
			awk -v n="$n" 'BEGIN {
				srand(2)
				for (i = 0; i < n; i++) {
					line = (rand() < 0.3) ? "+1" : "-1"
					for (k = 0; k < 12; k++) line = line sprintf(" %d:%.6f", k * 833 + int(rand() * 833) + 1, 2 * rand() - 1)
					print line
				}
			}' >"$data.tmp" && mv "$data.tmp" "$data"
		fi
		schema=$dir/schema-sparse.json
		printf '{"version": 1, "name": "synthetic sparse", "features": [{"name": "f", "count": 10000, "lo": -1, "hi": 1, "source": "generator"}]}\n' >"$schema"
		;;
	*)
		echo "estimate.sh: unknown shape $shape" >&2
		exit 2
		;;
	esac
}
# row SHAPE N MODE: one measured row.
row() {
	shape=$1 n=$2 mode=$3
	gen "$shape" "$n"
	cmd=train
	case $mode in
	default) args= ;;
	eta) args="--eta 1 --param-radius 10" ;;
	private) args="--epsilon 1 --feature-bounds $schema" ;;
	tune) args="--tune --epsilon 1 --feature-bounds $schema" ;;
	paper) args="--protocol paper" ;;
	metric) args="--task metric" ;;
	folds5) args="--folds 5 --eta 1 --param-radius 10" ;;
	runs3) args="--runs 3 --eta 1 --param-radius 10" ;;
	simulate)
		cmd=simulate
		args="--sites 4 --algo fed-avg --transport mem"
		# minmax scaling would densify sparse records of d = 10⁴ (refused)
		[ "$shape" = sparse ] && args="$args --scale none"
		;;
	*)
		echo "estimate.sh: unknown mode $mode" >&2
		exit 2
		;;
	esac
	# The estimate: the same command stopped once it is printed.
	est=$("$bin" $cmd --data "$data" --no-progress --memory-estimate exit --max-memory 20GiB ${EXTRA:-} $args 2>&1 >/dev/null | sed -n 's/^pairfed: memory estimate: \([0-9]*\) bytes, records \([0-9]*\) bytes.*/\1 \2/p' | head -1)
	# The peak: the whole run, measured once and kept in $dir/peaks
	# (REMEASURE=1 runs it again; the estimate changes no allocation).
	mkdir -p "$dir/peaks"
	cache=$dir/peaks/$shape-$n-$mode
	if [ ! -s "$cache" ] || [ -n "${REMEASURE:-}" ]; then
		out=$(nice -n 19 /usr/bin/time -f 'peak %M' "$bin" $cmd --data "$data" --no-progress --max-memory 20GiB ${EXTRA:-} $args 2>&1 >/dev/null) || true
		kb=$(echo "$out" | sed -n 's/^peak \([0-9]*\)$/\1/p' | tail -1)
		if [ -z "$kb" ] || echo "$out" | grep -q "non-zero status"; then
			echo "| $shape | $n | $mode | failed: $(echo "$out" | grep -v '^peak' | head -2 | tr '\n' ' ' | cut -c1-200) | | | |"
			return
		fi
		echo "$kb" >"$cache"
	fi
	kb=$(cat "$cache")
	if [ -z "$est" ]; then
		echo "| $shape | $n | $mode | no estimate printed | | | |"
		return
	fi
	awk -v s="$shape" -v n="$n" -v m="$mode" -v kb="$kb" -v est="$est" 'BEGIN {
		split(est, e, " ")
		peak = kb * 1024
		base = 24 * 1048576 # the process baseline (runtime, binary): the peak on a tiny file
		printf "| %s | %d | %s | %.0f MiB | %.0f MiB | %.0f MiB | %.2f | %.2f |\n", s, n, m, e[2] / 1048576, peak / 1048576, e[1] / 1048576, e[1] / (peak - base), (e[1] + 64 * 1048576) / peak
	}'
}
echo "| shape | n | mode | records | peak RSS | estimate | estimate ÷ (peak − 24 MiB) | (estimate + 64 MiB) ÷ peak |"
echo "|---|---|---|---|---|---|---|---|"
if [ $# -gt 0 ]; then
	for r in "$@"; do
		row $(echo "$r" | tr ':' ' ')
	done
	exit 0
fi
# The table of docs/results/memory.md. Rows not run there: --task metric
# at d = 22 and 300 and the paper protocol at 10⁶ × 22 (stopped after
# minutes; their partial peaks are in the text), sparse 10⁶ default, η/B
# given and private and sparse 5·10⁶ (measured by scripts/memory/run.sh:
# their peaks were put in the cache by hand, see the text).
all=
for m in eta default private runs3 folds5 tune paper metric simulate; do all="$all dense1:1000000:$m"; done
for m in eta default private runs3 folds5 tune simulate; do all="$all dense2:1000000:$m dense22:1000000:$m dense300:100000:$m sparse:100000:$m"; done
all="$all dense1:100000:paper dense1:100000:metric dense22:100000:paper dense300:30000:paper"
all="$all dense1:5000000:eta dense2:5000000:eta dense2:5000000:default"
all="$all sparse:1000000:eta sparse:1000000:default sparse:1000000:private sparse:1000000:simulate sparse:5000000:eta sparse:5000000:default sparse:5000000:private"
for r in ${ROWS:-$all}; do
	row $(echo "$r" | tr ':' ' ')
done
