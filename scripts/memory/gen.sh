#!/bin/sh
# Writes a synthetic LIBSVM file of n records to stdout (seeded: the same
# bytes every time; scripts/memory, scripts/costn and scripts/sparsetrain
# use it).
#   dense:  22 features, every value written (the ijcnn1 shape): 10 one-hot
#           indicators (1 or 0.5) and 12 values in [-1, 1]; labels ±1,
#           30 % +1.
#   sparse: d features (default 10⁴), 12 nonzeros per record: one value in
#           [-1, 1] in each of 12 disjoint ranges of ⌊d/12⌋ features
#           (sorted, distinct); labels ±1, 30 % +1, independent of the
#           features — unless the fourth argument is "signal": then the
#           positives' values on even features are made nonnegative (the
#           same values, a signal a linear model can find), the rest
#           unchanged.
# Usage: sh scripts/memory/gen.sh dense N
#        sh scripts/memory/gen.sh sparse N [D [signal]]
set -eu
case ${1:-} in
dense)
	awk -v n="${2:?n}" 'BEGIN {
		srand(1)
		for (i = 0; i < n; i++) {
			lab = (rand() < 0.3) ? "+1" : "-1"
			h = int(rand() * 10) + 1
			line = lab
			for (j = 1; j <= 10; j++) line = line " " j ":" (j == h ? 1 : 0.5)
			for (j = 11; j <= 22; j++) line = line sprintf(" %d:%.6f", j, 2 * rand() - 1)
			print line
		}
	}'
	;;
sparse)
	d=${3:-10000}
	[ "$d" -ge 12 ] || { echo "gen.sh: sparse needs d ≥ 12" >&2; exit 2; }
	sig=0
	[ "${4:-}" = signal ] && sig=1
	awk -v n="${2:?n}" -v w=$((d / 12)) -v sig=$sig 'BEGIN {
		srand(2)
		for (i = 0; i < n; i++) {
			pos = rand() < 0.3
			line = pos ? "+1" : "-1"
			for (k = 0; k < 12; k++) {
				c = k * w + int(rand() * w) + 1
				v = 2 * rand() - 1
				if (sig && pos && c % 2 == 0 && v < 0) v = -v
				line = line sprintf(" %d:%.6f", c, v)
			}
			print line
		}
	}'
	;;
*)
	echo "usage: sh scripts/memory/gen.sh dense N | sparse N [D]" >&2
	exit 2
	;;
esac
