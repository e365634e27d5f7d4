#!/bin/sh
# sgd-prev on sparse data (12 nonzeros per row, 30 % positives, hinge loss,
# unit l2 ball), per step: pairfed's loop (BenchmarkPrevSparseStep "fast",
# the lazy O(nnz) loop; "general" the O(d) reference with GENERAL=1) against
# the C floor of the same update (floor.c, cc -O2), CPU ns per draw at
# GOMAXPROCS=1, alternating Go and C RUNS times and printing medians as a
# markdown table with the ratio pairfed ÷ C. The machine is shared: CPU
# time, not wall time, and alternation keep the ratio honest under load.
#
#   sh scripts/sparsefloor/run.sh          # RUNS=3 STEPS=5000000
#   SHAPES="10000:10000" sh scripts/sparsefloor/run.sh   # n:d shapes, a subset
set -eu
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
STEPS=${STEPS:-5000000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -o "$TMP/floor" scripts/sparsefloor/floor.c -lm
go test -c -o "$TMP/pw.test" ./pairwise
SHAPES=${SHAPES:-"100000:10000 100000:100000 10000:10000 10000:100000"}
for r in $(seq "$RUNS"); do
	for sh in $SHAPES; do
		n=${sh%:*} d=${sh#*:}
		for avg in paper window; do
			for con in l2 none; do
				GOMAXPROCS=1 "$TMP/pw.test" -test.run '^$' -test.benchtime "${STEPS}x" \
					-test.bench "^BenchmarkPrevSparseStep$/^fast$/^$avg$/^$con$/^n=$n$/^d=$d$" |
					awk -v k="$n $d $avg $con" '/cpu-ns\/op/ { for (i = 1; i <= NF; i++) if ($(i+1) == "cpu-ns/op") print k, "go", $i }' >>"$TMP/res"
				"$TMP/floor" "$n" "$d" "$STEPS" "$avg" "$con" |
					awk -v k="$n $d $avg $con" '{ print k, "c", $1 }' >>"$TMP/res"
			done
		done
	done
done
echo "| n | d | averaging | constraint | pairfed CPU ns/step | C floor ns/step | ratio |"
echo "|---|---|---|---|---|---|---|"
sort -k1,1nr -k2,2n -k3,3 -k4,4 "$TMP/res" | awk '
	function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j] < a[j-1]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
	{ k = $1 " " $2 " " $3 " " $4; if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	  if ($5 == "go") g[k, ++ng[k]] = $6; else c[k, ++nc[k]] = $6 }
	END { for (q = 1; q <= nk; q++) { k = order[q]; split(k, f, " ")
		delete a; for (i = 1; i <= ng[k]; i++) a[i] = g[k, i]; mg = med(a, ng[k])
		delete a; for (i = 1; i <= nc[k]; i++) a[i] = c[k, i]; mc = med(a, nc[k])
		printf "| %d | %d | %s | %s | %.1f | %.1f | %.2f× |\n", f[1], f[2], f[3], f[4], mg, mc, mg / mc } }'
echo
echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores (load average $(cut -d' ' -f1-3 /proc/loadavg)); medians of $RUNS runs, Go and C alternating; $STEPS steps each."
