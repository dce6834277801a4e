#!/usr/bin/env bash
# readme-check.sh: run README's mpirun block (the ```sh block after the line
# "<!-- readme-check: mpirun -->") exactly as written, in a scratch folder, with the
# burrow just built first on PATH. Usage: readme-check.sh BURROW-BINARY
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "$1")
tmp=$(mktemp -d /tmp/burrow-readme-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/work"
ln -s "$bin" "$tmp/bin/burrow"
block=$(awk '/<!-- readme-check: mpirun -->/ {on = 1; next} on && /^```sh/ {inb = 1; next} inb && /^```/ {exit} inb' \
	"$repo/README.md")
[[ -n "$block" ]] || { echo "readme-check: README has no mpirun block" >&2; exit 1; }
n=$(grep -c . <<<"$block")
# under AddressSanitizer Open MPI's plugins leak at exit (see tests/test_mpi.c)
if ! out=$(cd "$tmp/work" && PATH="$tmp/bin:$PATH" ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
	bash -euo pipefail -c "$block" 2>&1); then
	echo "readme-check: README's mpirun block failed:" >&2
	echo "$out" | tail -20 >&2
	exit 1
fi
want=$(grep -c 'burrow train' <<<"$block")
runs=$(grep -c 'weights equal on every rank' <<<"$out" || true)
[[ "$runs" == "$want" ]] || {
	echo "readme-check: expected $want training runs with equal replicas, saw $runs:" >&2
	echo "$out" | tail -20 >&2
	exit 1
}
echo "readme-check: ok (README's mpirun block, $n lines, as written)"
