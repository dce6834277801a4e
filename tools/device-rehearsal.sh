#!/usr/bin/env bash
# tools/device-rehearsal.sh: the device check rehearsed on this machine as on a bare GPU
# machine (`make device-rehearsal`): tools/device-check.sh prepare here, then its smoke and
# full stages from a copy of the unpacked-nothing tree (the scripts and build/device-pack
# only) inside a mount namespace (unshare -m, root) where the Debian libraries Burrow links
# (every one ldd resolves for the carried binaries, but glibc's, the C++ runtime's and those
# the base tools themselves load: bash, tar, gzip, coreutils, find, grep, sed, awk, python3),
# Open MPI's own folders (components, help files, configuration) and the toolkit's NCCL are
# hidden (an empty file or folder bound over each), and xz fails as if absent (so the pack
# is unpacked by the fallback), at a small scale. It passes when the repo's own build/burrow
# cannot start in there (the hiding works), both stages print their table and leave it and
# their archive in OUT, and every step either ran (ok) or said "no device" in one line: none
# FAIL, TIMEOUT or skipped. Exit 0 when it passes (or is skipped, saying so: no nvcc, no
# namespace), 1 when not. REHEARSAL_NO_PREPARE=1 reuses build/device-pack as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
R=${REHEARSAL_DIR:-$REPO/build/rehearsal}

if [ "${1:-}" != inside ]; then
	if ! command -v nvcc >/dev/null; then
		echo "device-rehearsal: skipped: no nvcc here (the device check carries a CUDA build)" >&2
		exit 0
	fi
	if ! unshare -m --propagation private true 2>/dev/null; then
		echo "device-rehearsal: skipped: cannot make a mount namespace here (unshare -m needs root)" >&2
		exit 0
	fi
	[ -n "${REHEARSAL_NO_PREPARE:-}" ] || tools/device-check.sh prepare
	rm -rf "$R"
	mkdir -p "$R/tree/tools" "$R/tree/build" "$R/out" "$R/empty" "$R/tmp"
	cp tools/device-check.sh tools/device-check-summary.py "$R/tree/tools/"
	cp -r build/device-pack "$R/tree/build/"
	: >"$R/empty.file"
	printf '#!/bin/sh\necho "xz: not installed on this rehearsal machine" >&2\nexit 127\n' >"$R/xz"
	chmod +x "$R/xz"
	# what to hide: the carried binaries' libraries, less the base system's
	libs() { for b in "$@"; do ldd "$b" 2>/dev/null || true; done | awk '$3 ~ /^\// { print $3 }' | xargs -r realpath | sort -u; }
	base_tools=()
	for t in bash tar gzip find grep sed awk sort timeout cut tr head tail du nproc date cat ls cp rm mkdir; do
		p=$(command -v "$t" || true)
		[ -z "$p" ] || base_tools+=("$(readlink -f "$p")")
	done
	p=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true) # (not a launcher script)
	[ -z "$p" ] || base_tools+=("$p")
	libs "${base_tools[@]}" >"$R/keep.txt"
	libs build/device/bin/* | grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*|libstdc\+\+|libgcc_s)\.so' |
		grep -vxFf "$R/keep.txt" | grep -E '^/(usr/)?lib' >"$R/hide.txt" || true
	ldconfig -p | awk '/libnccl\.so\.2 / { print $NF }' | xargs -r realpath | sort -u >>"$R/hide.txt"
	echo "device-rehearsal: hiding $(wc -l <"$R/hide.txt") libraries (list in $R/hide.txt), Open MPI's folders and xz" >&2
	exec unshare -m --propagation private "$0" inside
fi

# ------------------------------------------------------------ inside the namespace
fail=0
while read -r l; do mount --bind "$R/empty.file" "$l"; done <"$R/hide.txt"
for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 /usr/share/openmpi /etc/openmpi; do
	[ -d "$d" ] && mount --bind "$R/empty" "$d"
done
xz_path=$(command -v xz || true)
[ -n "$xz_path" ] && mount --bind "$R/xz" "$(readlink -f "$xz_path")"
if "$REPO/build/burrow" --version >/dev/null 2>&1; then
	echo "device-rehearsal: FAIL: the repo's own build/burrow still starts: nothing is hidden" >&2
	fail=1
else
	echo "device-rehearsal: the repo's build/burrow cannot start in here ($("$REPO/build/burrow" --version 2>&1 | head -1 | cut -c1-100))" >&2
fi

cd "$R/tree"
for stage in smoke full; do
	rc=0
	OUT="$R/out" TMPDIR="$R/tmp" DEVICE_CHECK_SCALE=12 DEVICE_CHECK_STAGED_NODES=20000 \
		tools/device-check.sh "$stage" 2>"$R/$stage.stderr" || rc=$?
	table="$R/out/device-check-$stage.txt"
	if [ ! -s "$table" ] || ! ls "$R/out/device-check-$stage-logs".tar* >/dev/null 2>&1; then
		echo "device-rehearsal: FAIL: $stage left no table or no archive in $R/out (exit $rc)" >&2
		fail=1
		continue
	fi
	if [ "$(grep -c '^device-check: \[' "$R/$stage.stderr")" -lt 3 ]; then
		echo "device-rehearsal: FAIL: $stage printed no progress lines" >&2
		fail=1
	fi
	bad=$(awk 'NF >= 2 && $1 !~ /^(==|gpu:|libraries:|[0-9]+$)/ && $0 ~ /^[a-z0-9-]+ +(FAIL|TIMEOUT|skipped) /' "$table")
	if [ -n "$bad" ] || [ "$rc" != 0 ] || grep -q '^stopped after' "$table"; then
		echo "device-rehearsal: FAIL: $stage (exit $rc):" >&2
		printf '%s\n' "$bad" >&2
		fail=1
	fi
	sed -n '/^== device-check/,$p' "$R/$stage.stderr" | sed -n '1,/^device-check: /p' >&2
done
grep -h '^unpack ' "$R/out/device-check-smoke.txt" >&2 || true
if [ "$fail" = 0 ]; then
	echo "device-rehearsal: ok: every binary starts, every step ran or said no device, tables and archives in $R/out" >&2
fi
exit "$fail"
