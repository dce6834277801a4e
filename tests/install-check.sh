#!/usr/bin/env bash
# install-check.sh: install into a scratch prefix, then build a program that includes only
# <burrow.h> with pkg-config (as C11 and as C++), compile each module header <burrow/*.h>
# alone, run the program against the installed shared library,
# and check that the library exports only burrow_* symbols, that libburrow links no MPI (the
# distributed calls are in libburrow_mpi), that the static archives expose only burrow_*, and
# that README's library block runs as written. (No `grep -q` after a pipe: with pipefail its early
# exit can fail the writer with SIGPIPE.) Usage: install-check.sh MAKE-ARGS...
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/burrow-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
make --no-print-directory install PREFIX="$tmp" "$@" >/dev/null
export PKG_CONFIG_PATH="$tmp/lib/pkgconfig"
cat > "$tmp/use.c" <<'C'
#include <burrow.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_CSBM);
	g.num_nodes = 500;
	if (argc < 2 || burrow_gen(&g, argv[1]) < 0) {
		fprintf(stderr, "gen: %s\n", burrow_last_error());
		return 1;
	}
	burrow_dataset *ds;
	if (burrow_dataset_open(&ds, argv[1]) < 0) {
		fprintf(stderr, "open: %s\n", burrow_last_error());
		return 1;
	}
	printf("%s %lld\n", burrow_version(), (long long)burrow_dataset_get_info(ds)->num_nodes);
	burrow_dataset_close(ds);
	return 0;
}
C
cc -std=c11 -Wall -Wextra -Werror "$tmp/use.c" -o "$tmp/use" $(pkg-config --cflags --libs burrow)
out=$(LD_LIBRARY_PATH="$tmp/lib" "$tmp/use" "$tmp/ds")
[[ "$out" == "$(LD_LIBRARY_PATH="$tmp/lib" "$tmp/bin/burrow" --version | awk 'NR == 1 { print $2 }') 500" ]] || {
	echo "install-check: program printed '$out'" >&2; exit 1; }
LD_LIBRARY_PATH="$tmp/lib" ldd "$tmp/use" | grep "$tmp/lib/libburrow.so.0" >/dev/null || { echo "install-check: not linked to the installed libburrow.so.0" >&2; exit 1; }
# the header as C++
printf '#include <burrow.h>\nint main() { return burrow_strerror(BURROW_OK)[0] == 0; }\n' > "$tmp/use.cpp"
c++ -std=c++11 -Wall -Wextra -Werror "$tmp/use.cpp" -o "$tmp/usecpp" $(pkg-config --cflags --libs burrow)
LD_LIBRARY_PATH="$tmp/lib" "$tmp/usecpp"
# every module header is installed, and compiles alone (it includes what it needs), as C11 and C++
mods=$(cd "$repo/include/burrow" && ls *.h)
[[ "$mods" == "$(cd "$tmp/include/burrow" && ls *.h)" ]] || {
	echo "install-check: installed module headers differ from include/burrow/: $(ls "$tmp/include/burrow")" >&2; exit 1; }
for h in $mods; do
	printf '#include <burrow/%s>\n' "$h" > "$tmp/alone.c"
	cc -std=c11 -Wall -Wextra -Werror -fsyntax-only $(pkg-config --cflags burrow) "$tmp/alone.c" || {
		echo "install-check: <burrow/$h> does not compile alone (C11)" >&2; exit 1; }
	c++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only $(pkg-config --cflags burrow) -x c++ "$tmp/alone.c" || {
		echo "install-check: <burrow/$h> does not compile alone (C++)" >&2; exit 1; }
done
# only the API is exported, under the right SONAME
bad=$(nm -D --defined-only "$tmp/lib/libburrow.so" | awk '$2 ~ /[TDBRW]/ {print $3}' | grep -v '^burrow_' || true)
[[ -z "$bad" ]] || { echo "install-check: exported non-API symbols: $bad" >&2; exit 1; }
readelf -d "$tmp/lib/libburrow.so" | grep "SONAME.*libburrow.so.0" >/dev/null || { echo "install-check: SONAME is not libburrow.so.0" >&2; exit 1; }
# one version: the installed header's macros are burrow_version(), the library's file name,
# and the symbol-version node every exported symbol carries (LIBBURROW_MAJOR.MINOR)
hv=$(sed -n 's/^#define BURROW_VERSION_[A-Z]* \([0-9][0-9]*\).*/\1/p' "$tmp/include/burrow/core.h" | paste -sd.)
[[ "$hv" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ && "${out%% *}" == "$hv" && -f "$tmp/lib/libburrow.so.$hv" ]] || {
	echo "install-check: header version '$hv', burrow_version() '${out%% *}', libraries: $(ls "$tmp/lib")" >&2; exit 1; }
for l in libburrow.so libburrow_mpi.so; do
	bad=$(objdump -T "$tmp/lib/$l" | awk -v node="LIBBURROW_${hv%.*}" '$NF ~ /^burrow_/ && !/\*UND\*/ && $(NF-1) != node {print $(NF-1), $NF}')
	[[ -z "$bad" ]] || { echo "install-check: $l: symbols outside LIBBURROW_${hv%.*}: $(echo $bad | head -c 300)" >&2; exit 1; }
done
# libburrow needs no MPI; libburrow_mpi serves the distributed calls, under its own SONAME
if readelf -d "$tmp/lib/libburrow.so" | grep NEEDED | grep -i mpi >/dev/null; then
	echo "install-check: libburrow.so links MPI" >&2; exit 1
fi
readelf -d "$tmp/lib/libburrow_mpi.so" | grep "SONAME.*libburrow_mpi.so.0" >/dev/null || { echo "install-check: SONAME of libburrow_mpi" >&2; exit 1; }
bad=$(nm -D --defined-only "$tmp/lib/libburrow_mpi.so" | awk '$2 ~ /[TDBRW]/ {print $3}' | grep -v '^burrow_' || true)
[[ -z "$bad" ]] || { echo "install-check: libburrow_mpi exports non-API symbols: $bad" >&2; exit 1; }
printf '#include <burrow.h>\n#include <stdio.h>\nint main(void) { burrow_dist_opts o; burrow_dist_defaults(&o); printf("%%d\\n", o.train.full_graph); return 0; }\n' > "$tmp/usempi.c"
cc -std=c11 -Wall -Werror "$tmp/usempi.c" -o "$tmp/usempi" $(pkg-config --cflags --libs burrow-mpi)
[[ "$(LD_LIBRARY_PATH="$tmp/lib" "$tmp/usempi")" == 1 ]] || { echo "install-check: burrow-mpi program failed" >&2; exit 1; }
if cc -std=c11 "$tmp/usempi.c" -o "$tmp/usempi2" $(pkg-config --cflags --libs burrow) 2>/dev/null; then
	echo "install-check: burrow_dist_* resolved from libburrow, which should not hold them" >&2; exit 1
fi
# the static archives: one object each, only burrow_* global
for a in libburrow.a libburrow_mpi.a; do
	bad=$(nm -g --defined-only "$tmp/lib/$a" | awk 'NF == 3 {print $3}' | grep -v '^burrow_' || true)
	[[ -z "$bad" ]] || { echo "install-check: $a has global non-API symbols: $(echo $bad | head -c 300)" >&2; exit 1; }
done
# README's library block, verbatim, with HOME in the scratch folder and make run in the clone
mkdir -p "$tmp/home" "$tmp/readme"
block=$(awk '/<!-- readme-check: library -->/ {on = 1; next} on && /^```sh/ {inb = 1; next} inb && /^```/ {exit} inb' "$repo/README.md")
[[ -n "$block" ]] || { echo "install-check: README has no library block" >&2; exit 1; }
makeargs=("$@")
out=$(cd "$tmp/readme" && HOME="$tmp/home" PKG_CONFIG_PATH= LD_LIBRARY_PATH= bash -euo pipefail -c \
	"make() { command make -C '$repo' --no-print-directory ${makeargs[*]:-} \"\$@\" >/dev/null; }; $block" 2>&1) || {
	echo "install-check: README's library block failed:" >&2; echo "$out" >&2; exit 1; }
[[ "$(grep -c '^10000 nodes$' <<<"$out")" == 2 ]] || { echo "install-check: README block printed: $out" >&2; exit 1; }
if ldd "$tmp/readme/app-static" | grep libburrow >/dev/null; then
	echo "install-check: app-static is linked to a shared libburrow" >&2; exit 1
fi
echo "install-check: ok (C11 and C++ against <burrow.h> and each <burrow/*.h> alone, pkg-config and --static, only burrow_* exported and global in the archives, SONAME libburrow.so.0, one version in header, library and symbol node, no MPI in libburrow, burrow-mpi, README's library block)"
