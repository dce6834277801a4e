#!/usr/bin/env bash
# install-check.sh: install into a scratch prefix, then build a program that includes only
# <burrow.h> with pkg-config (as C11 and as C++), run it against the installed shared library,
# and check that the library exports only burrow_* symbols. Usage: install-check.sh MAKE-ARGS...
set -euo pipefail
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
[[ "$out" == "$(LD_LIBRARY_PATH="$tmp/lib" "$tmp/bin/burrow" --version | cut -d' ' -f2) 500" ]] || {
	echo "install-check: program printed '$out'" >&2; exit 1; }
LD_LIBRARY_PATH="$tmp/lib" ldd "$tmp/use" | grep -q "$tmp/lib/libburrow.so.0" || { echo "install-check: not linked to the installed libburrow.so.0" >&2; exit 1; }
# the header as C++
printf '#include <burrow.h>\nint main() { return burrow_strerror(BURROW_OK)[0] == 0; }\n' > "$tmp/use.cpp"
c++ -std=c++11 -Wall -Wextra -Werror "$tmp/use.cpp" -o "$tmp/usecpp" $(pkg-config --cflags --libs burrow)
LD_LIBRARY_PATH="$tmp/lib" "$tmp/usecpp"
# only the API is exported, under the right SONAME
bad=$(nm -D --defined-only "$tmp/lib/libburrow.so" | awk '$2 ~ /[TDBRW]/ {print $3}' | grep -v '^burrow_' || true)
[[ -z "$bad" ]] || { echo "install-check: exported non-API symbols: $bad" >&2; exit 1; }
readelf -d "$tmp/lib/libburrow.so" | grep -q 'SONAME.*libburrow.so.0' || { echo "install-check: SONAME is not libburrow.so.0" >&2; exit 1; }
echo "install-check: ok (C11 and C++ against <burrow.h>, pkg-config, only burrow_* exported, SONAME libburrow.so.0)"
