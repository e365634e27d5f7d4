#!/bin/sh
# pairfed ÷ the authors' Python code (github.com/zhenhuan-yang/simple-pairwise),
# sgd-prev with the hinge loss on ijcnn1, in CPU seconds, alternating:
#
#   Python  driver.py (ours) imports their utils.data_processing (LIBSVM,
#           min-max to [-1, 1]) and alg/auc_fifo_hinge.py from PYREPO and
#           times one call of auc_fifo_hinge — ETA, BETA, PASSES passes over
#           n_tr = 0.8 n records, as their exp_test.py calls it, AUC at their
#           log-spaced checkpoints included — with time.process_time; and
#           the whole process (imports, load, scaling, the run) with
#           /usr/bin/time.
#   pairfed `pairfed train --data FILE --eta ETA --param-radius BETA
#           --passes PASSES` (the same η/√(passes·n_tr) step, ball and
#           number of pair steps; its default output average and one AUC at
#           the end), whole process CPU with /usr/bin/time; and the same
#           with PASSES+100 passes: the difference ÷ the extra steps is
#           pairfed's CPU per pair step (loading, scaling and evaluation
#           cancel). Its own algorithm timer (train_seconds, wall) ÷
#           pair_steps is printed beside it.
#
# Both single-threaded (GOMAXPROCS=1; OMP/OPENBLAS/MKL_NUM_THREADS=1), the
# same decompressed file, REPS alternations, medians. Both AUCs are printed
# to show equal work.
#
# FULL=1 adds their Table-1 protocol (exp_cv.exp_cv over the 6 × 6 grid,
# 5 folds × 2 repeats, then exp_test.exp_test at the chosen cell, 5 × 5;
# PYPROCS worker processes, default 2; ≈ 6–10 min of Python CPU) against
# `pairfed train --data FILE --protocol paper` (the same protocol), once
# each: CPU of all processes, the selected (η, β) and the AUC.
#
# Usage: sh scripts/pyside/run.sh [PYREPO [DATA]]
#   PYREPO  a checkout of simple-pairwise, or its bare git repository
#           (exported with git archive); default $SIMPLE_PAIRWISE
#   DATA    ijcnn1 in LIBSVM (.bz2 or plain); default
#           $PAIRFED_DATASETS/ijcnn1.trn.bz2
# Environment: PYTHON (default python3), PAIRFED (a binary; default: build
# this tree's), ETA=100 BETA=100 PASSES=10 REPS=3 SEED=1, FULL=1.
set -eu
cd "$(dirname "$0")/../.."
PYREPO=${1:-${SIMPLE_PAIRWISE:-}}
DATA=${2:-${PAIRFED_DATASETS:+$PAIRFED_DATASETS/ijcnn1.trn.bz2}}
PYTHON=${PYTHON:-python3}
ETA=${ETA:-100} BETA=${BETA:-100} PASSES=${PASSES:-10} REPS=${REPS:-3} SEED=${SEED:-1}
die() { echo "pyside: $*" >&2; exit 1; }
[ -n "$PYREPO" ] || die "usage: sh scripts/pyside/run.sh PYREPO [DATA] (PYREPO: a checkout of github.com/zhenhuan-yang/simple-pairwise)"
[ -n "$DATA" ] || die "no data file: pass DATA (ijcnn1 in LIBSVM) or set PAIRFED_DATASETS"
[ -f "$DATA" ] || die "no such data file: $DATA"
[ -x /usr/bin/time ] || die "needs /usr/bin/time (Debian: apt-get install -y time)"
command -v "$PYTHON" >/dev/null 2>&1 || die "no Python interpreter $PYTHON (set PYTHON)"
for m in numpy scipy sklearn; do
	"$PYTHON" -c "import $m" 2>/dev/null ||
		die "$PYTHON cannot import $m: install it (Debian: apt-get install -y python3-numpy python3-sklearn, then PYTHON=/usr/bin/python3; or $PYTHON -m pip install numpy scikit-learn)"
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if [ -f "$PYREPO/alg/auc_fifo_hinge.py" ]; then
	PY=$PYREPO
elif git -C "$PYREPO" rev-parse --git-dir >/dev/null 2>&1; then
	mkdir "$TMP/repo"
	git -C "$PYREPO" archive HEAD | tar -x -C "$TMP/repo"
	PY=$TMP/repo
else
	die "$PYREPO is neither a checkout nor a git repository of simple-pairwise"
fi
[ -f "$PY/alg/auc_fifo_hinge.py" ] && [ -f "$PY/utils.py" ] || die "$PYREPO has no alg/auc_fifo_hinge.py and utils.py"
mkdir "$TMP/data"
case $DATA in
*.bz2) bzip2 -dc "$DATA" >"$TMP/data/ijcnn1" ;;
*) cp "$DATA" "$TMP/data/ijcnn1" ;;
esac
PF=${PAIRFED:-}
if [ -z "$PF" ]; then
	PF=$TMP/pairfed
	go build -o "$PF" ./cmd/pairfed
fi
CORES=$(nproc)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 GOMAXPROCS=1
# cpu CMD...: runs CMD, its stdout to $TMP/out, prints user+system seconds
cpu() {
	/usr/bin/time -f '%U %S' -o "$TMP/time" "$@" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; die "failed: $*"; }
	awk '{ printf "%.3f", $1 + $2 }' "$TMP/time"
}
get() { awk -v k="$1" '$1 == "RESULT" && $2 == k { print $3 }' "$TMP/out"; }
json() { "$PYTHON" -c "import json, sys; j = json.load(open(sys.argv[1])); print($1)" "$TMP/out"; }
more=$((PASSES + 100))
for r in $(seq "$REPS"); do
	c=$(cpu "$PYTHON" scripts/pyside/driver.py "$PY" "$TMP" one "$ETA" "$BETA" "$PASSES" "$SEED")
	echo "py_proc $c" >>"$TMP/res"
	for k in steps cpu_seconds own_seconds auc_last auc_max; do echo "py_$k $(get $k)" >>"$TMP/res"; done
	c=$(cpu "$PF" train --data "$TMP/data/ijcnn1" --eta "$ETA" --param-radius "$BETA" --passes "$PASSES" --seed "$SEED" --json --no-progress)
	echo "pf_proc $c" >>"$TMP/res"
	echo "pf_steps $(json "j['pair_steps']")" >>"$TMP/res"
	echo "pf_auc $(json "j['auc']['mean']")" >>"$TMP/res"
	echo "pf_train $(json "j['train_seconds']")" >>"$TMP/res"
	c=$(cpu "$PF" train --data "$TMP/data/ijcnn1" --eta "$ETA" --param-radius "$BETA" --passes "$more" --seed "$SEED" --json --no-progress)
	echo "pf_proc_more $c" >>"$TMP/res"
	echo "pf_steps_more $(json "j['pair_steps']")" >>"$TMP/res"
	echo "pf_train_more $(json "j['train_seconds']")" >>"$TMP/res"
done
awk -v eta="$ETA" -v beta="$BETA" -v passes="$PASSES" -v more="$more" -v reps="$REPS" '
	function med(k,   n, i, j, t, a) { n = c[k]; for (i = 1; i <= n; i++) a[i] = v[k, i]
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j] < a[j-1]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
	{ v[$1, ++c[$1]] = $2 }
	END {
		steps = med("py_steps"); pfs = med("pf_steps")
		if (steps != pfs) printf "warning: pair steps differ: Python %d, pairfed %d\n", steps, pfs
		pystep = med("py_cpu_seconds") / steps * 1e9
		# the marginal CPU per step of each repetition, then its median
		for (i = 1; i <= c["pf_proc"]; i++) { v["pf_marg", i] = (v["pf_proc_more", i] - v["pf_proc", i]) / (v["pf_steps_more", i] - v["pf_steps", i]) * 1e9; c["pf_marg"] = i }
		pfstep = med("pf_marg")
		printf "ijcnn1, sgd-prev, hinge, η = %s, B = %s, %s passes = %d pair steps; medians of %d alternations\n\n", eta, beta, passes, steps, reps
		print "| work | Python (their code) | pairfed | Python ÷ pairfed |"
		print "|---|---|---|---|"
		printf "| CPU per pair step (Python: the call of auc_fifo_hinge ÷ steps; pairfed: (%d − %d passes) process CPU ÷ the extra steps) | %.0f ns | %.1f ns | %.0f× |\n", more, passes, pystep, pfstep, pystep / pfstep
		printf "| the same, by the loop timer of each side (wall; Python: times[-1], without its checkpoints; pairfed: train_seconds at %d passes) | %.0f ns | %.1f ns | %.0f× |\n", more, med("py_own_seconds") / steps * 1e9, med("pf_train_more") / med("pf_steps_more") * 1e9, (med("py_own_seconds") / steps) / (med("pf_train_more") / med("pf_steps_more"))
		printf "| one fixed-parameter run, whole process CPU (imports, load, scaling, training, AUC) | %.2f s | %.3f s | %.1f× |\n", med("py_proc"), med("pf_proc"), med("py_proc") / med("pf_proc")
		printf "| AUC (Python: last checkpoint window / best checkpoint; pairfed: its output) | %.4f / %.4f | %.4f | |\n", med("py_auc_last"), med("py_auc_max"), med("pf_auc")
	}' "$TMP/res"
if [ "${FULL:-0}" = 1 ]; then
	unset GOMAXPROCS
	c=$(cpu "$PYTHON" scripts/pyside/driver.py "$PY" "$TMP" full "$SEED")
	pyfull=$(get cpu_seconds) pywall=$(get wall_seconds) pyeta=$(get eta) pybeta=$(get beta) pyauc=$(get auc)
	c=$(cpu "$PF" train --data "$TMP/data/ijcnn1" --protocol paper --seed "$SEED" --json --no-progress)
	pfeta=$(json "j['eta'][0]")
	pfbeta=$(json "j['param_radius'][0]")
	pfauc=$(json "j['auc']['mean']")
	echo
	echo "Table-1 protocol (6 × 6 grid, 5 folds × 2 repeats, then 5 × 5 at the chosen cell; PYPROCS=${PYPROCS:-2} Python workers, pairfed's default 2):"
	echo
	echo "| | Python (their exp_cv + exp_test) | pairfed --protocol paper | Python ÷ pairfed |"
	echo "|---|---|---|---|"
	awk -v a="$pyfull" -v b="$c" 'BEGIN { printf "| CPU, all processes | %.1f s | %.2f s | %.0f× |\n", a, b, a / b }'
	echo "| selected (η, β) | ($pyeta, $pybeta) | ($pfeta, $pfbeta) | |"
	awk -v a="$pyauc" -v b="$pfauc" 'BEGIN { printf "| AUC (max over checkpoints of the mean) | %.4f | %.4f | |\n", a, b }'
	echo "| Python wall | $pywall s | | |"
fi
pyver=$("$PYTHON" -c 'import sys, numpy, sklearn; print("Python %d.%d.%d, numpy %s, scikit-learn %s" % (sys.version_info[:3] + (numpy.__version__, sklearn.__version__)))')
rev=$(git -C "$PYREPO" rev-parse --short HEAD 2>/dev/null) || rev="(not a git checkout)"
echo
echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $CORES cores (load average $(cut -d' ' -f1-3 /proc/loadavg)); $pyver; simple-pairwise $rev."
