#!/bin/sh
# Cost vs n, dense linear training: `pairfed train` on synthetic dense data
# of the ijcnn1 shape (d = 22, 30 % positives; scripts/memory/gen.sh) at
# n = 10⁵ and 10⁶ records (and 5·10⁶ with BIG=1, about 1 GB of temp file),
# with a fixed step and radius (`--eta 1 --param-radius 10`: no selection,
# 10 passes of sgd-prev, one test AUC) and with the default selection.
# Prints each run's CPU (user + system of the process, median of REPS runs,
# the sizes alternating), CPU per record, and the log-log slope of CPU
# against n between consecutive sizes (1 = linear).
#
#   sh scripts/costn/run.sh            # REPS=3; GOMAXPROCS=1 unless set
#   BIG=1 sh scripts/costn/run.sh      # adds n = 5·10⁶ (--max-memory 6GiB)
# SIZES="10000 100000" sets the sizes.
# PAIRFED=path measures that binary instead of building this tree's;
# ONLY=fixed or ONLY=default runs one of the two rows.
set -eu
cd "$(dirname "$0")/../.."
REPS=${REPS:-3}
SIZES=${SIZES:-100000 1000000}
[ "${BIG:-0}" = 1 ] && SIZES="$SIZES 5000000"
[ -x /usr/bin/time ] || { echo "costn: needs /usr/bin/time (Debian: apt-get install -y time)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PF=${PAIRFED:-}
if [ -z "$PF" ]; then
	PF=$TMP/pairfed
	go build -o "$PF" ./cmd/pairfed
fi
export GOMAXPROCS=${GOMAXPROCS:-1}
for n in $SIZES; do
	sh scripts/memory/gen.sh dense "$n" >"$TMP/dense-$n.svm"
done
run() { # key n flags...: appends "key n cpu rss" to $TMP/res
	key=$1 n=$2
	shift 2
	case " ${ONLY:-fixed default} " in
	*" $key "*) ;;
	*) return 0 ;;
	esac
	extra=
	[ "$n" -ge 5000000 ] && extra="--max-memory 6GiB"
	# shellcheck disable=SC2086
	/usr/bin/time -f '%U %S %M' -o "$TMP/time" "$PF" train --data "$TMP/dense-$n.svm" --no-progress $extra "$@" >/dev/null 2>"$TMP/err" ||
		{ cat "$TMP/err" >&2; echo "costn: pairfed train failed at n = $n ($key)" >&2; exit 1; }
	awk -v k="$key" -v n="$n" '{ print k, n, $1 + $2, $3 }' "$TMP/time" >>"$TMP/res"
}
for r in $(seq "$REPS"); do
	for n in $SIZES; do
		run fixed "$n" --eta 1 --param-radius 10
		run default "$n"
	done
done
echo "| run | n | CPU s | CPU µs per record | peak RSS MiB | log-log slope from the previous n |"
echo "|---|---|---|---|---|---|"
awk '
	function med(k,   m, i, j, t, a) { m = c[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
		for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j] < a[j-1]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return m % 2 ? a[(m+1)/2] : (a[m/2] + a[m/2+1]) / 2 }
	{ k = $1 " " $2; if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	  v[k, ++c[k]] = $3; rss[k] = rss[k] > $4 ? rss[k] : $4 }
	END { for (key = 1; key <= 2; key++) { name = key == 1 ? "fixed" : "default"; pn = 0
		for (q = 1; q <= nk; q++) { split(order[q], f, " "); if (f[1] != name) continue
			cpu = med(order[q]); slope = pn ? sprintf("%.2f", log(cpu / pc) / log(f[2] / pn)) : "—"
			label = name == "fixed" ? "`--eta 1 --param-radius 10`" : "default (selection)"
			printf "| %s | %d | %.2f | %.2f | %.0f | %s |\n", label, f[2], cpu, cpu / f[2] * 1e6, rss[order[q]] / 1024, slope
			pn = f[2]; pc = cpu } } }' "$TMP/res"
echo
echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores (load average $(cut -d' ' -f1-3 /proc/loadavg)); GOMAXPROCS=$GOMAXPROCS; medians of $REPS runs, sizes alternating; CPU = user + system of the process (loading, scaling, training, evaluation)."
