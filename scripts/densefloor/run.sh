#!/bin/sh
# sgd-prev on dense data of ijcnn1's shape (n = 49 990, d = 22, 9.7 %
# positives, hinge loss, unit l2 ball or none, the default "paper" or the
# paper protocol's "window" average), per step: pairfed's loop
# (BenchmarkPrevStep's "fast" paths: fast, fast-none, fast-window,
# fast-window-none on ijcnn1-shape) against the C floor of the same update
# (floor.c, whose comment lists what each side does), compiled two ways:
# `cc -O2` (the floor of scripts/sparsefloor) and `cc -O3 -march=native`
# (vector instructions allowed; the sums stay in order, no -ffast-math).
# CPU ns per draw at GOMAXPROCS=1, Go and the two C builds alternating RUNS
# times; prints the medians as a markdown table with pairfed ÷ C. The data
# are synthetic and seeded (no data file is needed). The machine is
# shared: CPU time, not wall time, and alternation keep the ratio honest
# under load.
#
#   sh scripts/densefloor/run.sh          # RUNS=5 STEPS=20000000
set -eu
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-5}
STEPS=${STEPS:-20000000}
command -v cc >/dev/null 2>&1 || { echo "densefloor: needs a C compiler (cc), e.g. apt-get install -y gcc" >&2; exit 1; }
command -v go >/dev/null 2>&1 || { echo "densefloor: needs the Go toolchain (go)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -o "$TMP/floor2" scripts/densefloor/floor.c -lm
if ! cc -O3 -march=native -o "$TMP/floor3" scripts/densefloor/floor.c -lm 2>/dev/null; then
	echo "densefloor: cc -O3 -march=native failed; the -O3 column repeats -O2" >&2
	cp "$TMP/floor2" "$TMP/floor3"
fi
go test -c -o "$TMP/pw.test" ./pairwise
N=49990 D=22 POS=0.097
for r in $(seq "$RUNS"); do
	for avg in paper window; do
		for con in l2 none; do
			path=fast
			[ "$avg" = window ] && path=$path-window
			[ "$con" = none ] && path=$path-none
			GOMAXPROCS=1 "$TMP/pw.test" -test.run '^$' -test.benchtime "${STEPS}x" \
				-test.bench "^BenchmarkPrevStep$/^$path$/^ijcnn1-shape$" |
				awk -v k="$avg $con" '/cpu-ns\/op/ { for (i = 1; i <= NF; i++) if ($(i+1) == "cpu-ns/op") print k, "go", $i }' >>"$TMP/res"
			"$TMP/floor2" $N $D $POS "$STEPS" "$avg" "$con" | awk -v k="$avg $con" '{ print k, "c2", $1 }' >>"$TMP/res"
			"$TMP/floor3" $N $D $POS "$STEPS" "$avg" "$con" | tee "$TMP/last" | awk -v k="$avg $con" '{ print k, "c3", $1 }' >>"$TMP/res"
			sed 's/^[^(]*(\(.*\))$/\1/' "$TMP/last" >"$TMP/share-$avg-$con"
		done
	done
done
for k in "paper l2" "paper none" "window l2" "window none"; do
	[ "$(grep -c "^$k go " "$TMP/res")" -eq "$RUNS" ] || { echo "densefloor: the Go benchmark gave no cpu-ns/op for $k" >&2; exit 1; }
done
echo "| averaging | constraint | pairfed CPU ns/step | C floor -O2 | C floor -O3 -march=native | pairfed ÷ C -O2 | pairfed ÷ C -O3 |"
echo "|---|---|---|---|---|---|---|"
awk '
	function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j] < a[j-1]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
	{ k = $1 " " $2; if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	  v[k, $3, ++c[k, $3]] = $4 }
	END { for (q = 1; q <= nk; q++) { k = order[q]; split(k, f, " ")
		delete a; for (i = 1; i <= c[k, "go"]; i++) a[i] = v[k, "go", i]; mg = med(a, c[k, "go"])
		delete a; for (i = 1; i <= c[k, "c2"]; i++) a[i] = v[k, "c2", i]; m2 = med(a, c[k, "c2"])
		delete a; for (i = 1; i <= c[k, "c3"]; i++) a[i] = v[k, "c3", i]; m3 = med(a, c[k, "c3"])
		printf "| %s | %s | %.1f | %.1f | %.1f | %.2f× | %.2f× |\n", f[1], f[2], mg, m2, m3, mg / m2, mg / m3 } }' "$TMP/res"
echo
echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores (load average $(cut -d' ' -f1-3 /proc/loadavg)); n = $N, d = $D, $POS positive; medians of $RUNS runs, Go and C alternating; $STEPS steps each. C steps: $(for k in paper-l2 paper-none; do printf '%s: %s. ' "$k" "$(cut -d';' -f2 "$TMP/share-$k" | sed 's/^ //')"; done)"
