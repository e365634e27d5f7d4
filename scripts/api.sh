#!/bin/sh
# The public API list: `go doc -short` of every package of the module,
# one section per package, in docs/api.txt, so that a refactor meant to
# keep the API shows every change of it as a diff.
#
#   sh scripts/api.sh           # rewrite docs/api.txt
#   sh scripts/api.sh -check    # fail (exit 1, with the diff) when it changed
#
# Takes about half a minute on 2 cores (one `go doc` per package).
set -eu
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for p in $(go list ./...); do
	echo "== $p"
	go doc -short "$p" 2>&1 | sed 's/^/  /'
done >"$TMP/api.txt"
case "${1:-}" in
-check)
	if ! diff -u docs/api.txt "$TMP/api.txt"; then
		echo "scripts/api.sh: the public API changed (above); if deliberate, run: sh scripts/api.sh" >&2
		exit 1
	fi ;;
"") mv "$TMP/api.txt" docs/api.txt ;;
*) echo "usage: sh scripts/api.sh [-check]" >&2; exit 2 ;;
esac
