#!/usr/bin/env bash
# check-layers.sh: every quoted #include of the library and the command points down the layer
# table (docs/layers.md): core < device < graph < {datasets, sampler, partition} <
# compute < driver < dist < tools; peers (datasets, sampler, partition) include none of each
# other; tools include only the public header (include/) and their own. One line per
# violation, "file:line: LAYER includes PATH (LAYER): why", and exit 1; exit 0 when clean.
# Bash and awk, a few milliseconds: make check-layers, and make check before the tests.
# Usage: tools/check-layers.sh [FOLDER...]
set -euo pipefail
cd "$(dirname "$0")/.."

# folder -> layer and its floor (a file may include a lower floor, or its own layer)
# include/ is the public API, below everything; a folder missing here is an error, so a new
# folder has to be placed in the table before it builds clean.
table='include public 0
core core 1
device device 2
graph graph 3
datasets datasets 4
sampler sampler 4
partition partition 4
train/compute compute 5
train/driver driver 6
train/dist dist 7
tools tools 8'

# the folders to check: the arguments (make passes its LIB_DIRS, tools and include), else these
[ $# -gt 0 ] || set -- include core device graph datasets sampler partition train tools
dirs=()
for d in "$@"; do
	[ -d "$d" ] && dirs+=("$d")
done
files=$(find "${dirs[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
[ -n "$files" ] || { echo "check-layers: no sources found (run from the repository root)" >&2; exit 2; }

printf '%s\n' "$files" | awk -v table="$table" '
function layer_of(path,    best, d) {
	best = ""
	for (d in LAYER)
		if (index(path, d "/") == 1 && length(d) > length(best))
			best = d
	return best
}
function normalize(path,    n, parts, out, i, k, res) {
	n = split(path, parts, "/")
	k = 0
	for (i = 1; i <= n; i++) {
		if (parts[i] == "" || parts[i] == ".")
			continue
		if (parts[i] == ".." && k > 0 && out[k] != "..") {
			k--
			continue
		}
		out[++k] = parts[i]
	}
	res = ""
	for (i = 1; i <= k; i++)
		res = res (i > 1 ? "/" : "") out[i]
	return res
}
BEGIN {
	nt = split(table, rows, "\n")
	for (i = 1; i <= nt; i++) {
		split(rows[i], f, " ")
		LAYER[f[1]] = f[2]
		FLOOR[f[1]] = f[3]
	}
	bad = 0
}
# stdin: the list of files (includes resolve against it)
{ EXISTS[$0] = 1; FILES[++nfiles] = $0 }
END {
	for (fi = 1; fi <= nfiles; fi++) {
		file = FILES[fi]
		src = layer_of(file)
		if (src == "") {
			printf "%s: its folder has no layer (add it to tools/check-layers.sh and docs/layers.md)\n", file
			bad++
			continue
		}
		dir = file
		sub(/\/[^\/]*$/, "", dir)
		lineno = 0
		while ((getline line < file) > 0) {
			lineno++
			if (line !~ /^[ \t]*#[ \t]*include[ \t]*"/)
				continue
			inc = line
			sub(/^[ \t]*#[ \t]*include[ \t]*"/, "", inc)
			sub(/".*$/, "", inc)
			target = normalize(dir "/" inc)
			if (!(target in EXISTS))
				target = normalize("include/" inc)  # -Iinclude
			if (!(target in EXISTS)) {
				printf "%s:%d: %s includes \"%s\", which is not in the tree\n", file, lineno, LAYER[src], inc
				bad++
				continue
			}
			dst = layer_of(target)
			if (dst == "") {
				printf "%s:%d: %s includes %s, whose folder has no layer\n", file, lineno, LAYER[src], target
				bad++
				continue
			}
			if (dst == src)
				continue
			if (LAYER[src] == "tools" && LAYER[dst] != "public")
				why = "tools include only include/ and their own headers"
			else if (FLOOR[dst] > FLOOR[src])
				why = "upward"
			else if (FLOOR[dst] == FLOOR[src])
				why = "peers include none of each other"
			else
				continue
			printf "%s:%d: %s includes %s (%s): %s\n", file, lineno, LAYER[src], target, LAYER[dst], why
			bad++
		}
		close(file)
	}
	if (bad) {
		printf "check-layers: %d violation%s of the layer table (docs/layers.md)\n", bad, bad == 1 ? "" : "s" > "/dev/stderr"
		exit 1
	}
}'
