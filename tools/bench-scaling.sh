#!/usr/bin/env bash
# bench-scaling.sh: issue 20's acceptance runs: full-batch training at 1 and 2 threads (Cora gcn
# and sage, a CiteSeer-sized CSBM), bench sample at 1 and 2 threads idle and beside a busy
# core, a mini-batch epoch at 1 and 2 threads and at the default, and a cold mini-batch epoch
# on a 256 MiB features file with the default cache against --engine mmap. Every comparison
# runs interleaved (A B B A ...), R times, and prints the median and the ratio, with the load
# average beside each run: on a shared machine the numbers say little, rerun on a quiet one.
# Scratch data goes to $BENCH_DIR (default build/bench-data).
# Usage: tools/bench-scaling.sh [BURROW_BINARY] [REPEATS]   (env: EPOCHS=200, SECTIONS="full sample mini cold"
# (add ram2x: a 2 GiB features file in a memory cgroup of 1 GiB, as root),
# or SECTIONS=wait: Cora gcn at 2 threads with the default passive waits against a bounded and
# libgomp's own spin, to check that choice; SECTIONS=sparse: issue 35's sparse first layer, Cora
# sage mini-batch with --sparse-input auto vs off, and mpirun -np 2 --full-graph vs one process;
# SECTIONS=busy: issue 35 item 7, Cora gcn full-graph at 2 threads vs 1, quiet and beside one
# CPU-bound process pinned to core 0, each with the default wait policy: 2 threads pinned
# (OMP_DYNAMIC=false), --threads 2 (2 or 1, the faster measured: autothreads.c), the default,
# and the CPU share a pinned 2-thread run gets). Full-graph t2 runs elsewhere are pinned.
set -euo pipefail
burrow=$(readlink -f "${1:-build/burrow}")
R=${2:-3}
EPOCHS=${EPOCHS:-200}
SECTIONS=${SECTIONS:-"full sample mini cold"}
dir=${BENCH_DIR:-build/bench-data}
datasets=${BURROW_DATASETS:-../shared/datasets}
mkdir -p "$dir"

load() { cut -d' ' -f1-3 /proc/loadavg; }
now() { date +%s.%N; }
# wall seconds of one command (its output to /dev/null; a failure stops the script)
wall() {
	local s e
	s=$(now)
	"$@" >/dev/null 2>"$dir/.err" || { echo "failed: $*" >&2; cat "$dir/.err" >&2; exit 1; }
	e=$(now)
	echo "$e - $s" | bc
}
# wall seconds and CPU share of one command (GNU time)
cpu_share() { /usr/bin/time -f '%e s wall, %P CPU' "$@" 2>&1 >/dev/null | tail -1; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { echo "scale=3; $1 / $2" | bc; }
# drop the file's pages from the page cache (GNU dd: nocache with count=0 covers the file)
drop() { dd if="$1" iflag=nocache count=0 status=none 2>/dev/null || true; }

# compare NAME_A CMD_A -- NAME_B CMD_B: R rounds of A B then B A, medians and A/B
compare() {
	local na=$1 nb ca=() cb=() ta=() tb=() t
	shift
	while [ "$1" != "--" ]; do ca+=("$1"); shift; done
	shift
	nb=$1
	shift
	cb=("$@")
	for ((r = 0; r < R; r++)); do
		if ((r % 2 == 0)); then
			t=$(eval "${ca[@]}"); ta+=("$t"); echo "  $na $t s (load $(load))"
			t=$(eval "${cb[@]}"); tb+=("$t"); echo "  $nb $t s (load $(load))"
		else
			t=$(eval "${cb[@]}"); tb+=("$t"); echo "  $nb $t s (load $(load))"
			t=$(eval "${ca[@]}"); ta+=("$t"); echo "  $na $t s (load $(load))"
		fi
	done
	local ma mb
	ma=$(median "${ta[@]}")
	mb=$(median "${tb[@]}")
	echo "  median: $na $ma s, $nb $mb s; speedup of $na over $nb $(ratio "$mb" "$ma")x (time $na / $nb $(ratio "$ma" "$mb"))"
}

echo "bench-scaling: $burrow, $R rounds, $(nproc) CPUs, load $(load)"
[ -d "$dir/cora" ] || "$burrow" prep "$datasets/ogbn-cora" --out "$dir/cora" --quiet
[ -d "$dir/citeseer-csbm" ] || "$burrow" gen csbm "$dir/citeseer-csbm" --nodes 3327 --classes 6 --avg-degree 2.7 \
	--feat-dim 3703 --quiet
[ -d "$dir/f256" ] || "$burrow" gen csbm "$dir/f256" --nodes 262144 --feat-dim 256 --avg-degree 10 --quiet

if [[ " $SECTIONS " == *" full "* ]]; then
	for job in "cora gcn" "cora sage" "citeseer-csbm gcn"; do
		set -- $job
		d=$dir/$1 m=$2
		echo "== full-batch: $1 $m, 2 layers, hidden 256, $EPOCHS epochs, --threads 2 vs 1"
		args="train $d --full-graph --model $m --layers 2 --hidden 256 --epochs $EPOCHS --lr 0.01 --weight-decay 5e-4 --quiet"
		compare t2 wall env OMP_DYNAMIC=false "$burrow" $args --threads 2 -- t1 wall "$burrow" $args --threads 1
	done
fi

if [[ " $SECTIONS " == *" wait "* ]]; then
	echo "== OpenMP waits: Cora gcn full-batch, --threads 2, $EPOCHS epochs: passive (default) vs spins"
	args="train $dir/cora --full-graph --model gcn --layers 2 --hidden 256 --epochs $EPOCHS --lr 0.01 --weight-decay 5e-4 --quiet --threads 2"
	compare passive wall env OMP_DYNAMIC=false "$burrow" $args -- spin10k wall env OMP_DYNAMIC=false GOMP_SPINCOUNT=10000 "$burrow" $args
	compare passive wall env OMP_DYNAMIC=false "$burrow" $args -- active wall env OMP_DYNAMIC=false OMP_WAIT_POLICY=active "$burrow" $args
fi

if [[ " $SECTIONS " == *" busy "* ]]; then
	# asked (issue 35 item 7): t2 >= 1x t1 beside the busy process, >= 1.5x quiet; "default" is
	# no --threads (every core, the count following the faster of all cores and one, measured)
	args="train $dir/cora --full-graph --model gcn --epochs $EPOCHS --eval-every 0 --quiet"
	busy_cases() {
		compare t2pinned wall env OMP_DYNAMIC=false "$burrow" $args --threads 2 -- t1 wall "$burrow" $args --threads 1
		compare t2 wall "$burrow" $args --threads 2 -- t1 wall "$burrow" $args --threads 1
		compare default wall "$burrow" $args -- t1 wall "$burrow" $args --threads 1
		echo "  CPU share (time -f '%e s wall, %P CPU'): 2 threads pinned: $(cpu_share env OMP_DYNAMIC=false "$burrow" $args --threads 2); 1 thread: $(cpu_share "$burrow" $args --threads 1)"
	}
	echo "== busy: Cora gcn full-graph, $EPOCHS epochs, --eval-every 0, --threads 2 and the default vs 1, quiet"
	busy_cases
	setsid taskset -c 0 sh -c 'while :; do :; done' &
	busy=$!
	trap 'kill -- -$busy 2>/dev/null || true' EXIT
	sleep 1
	echo "== busy: the same beside one CPU-bound process pinned to core 0 (pid $busy)"
	busy_cases
	kill -- -"$busy" 2>/dev/null || kill "$busy"
	wait "$busy" 2>/dev/null || true
	trap - EXIT
fi

if [[ " $SECTIONS " == *" sample "* ]]; then
	echo "== bench sample: f256 (262k nodes, degree 10), fanout 15,10,5, batch 1024, 1 and 2 threads"
	for ((r = 0; r < R; r++)); do
		echo "  idle (load $(load)):"
		"$burrow" bench sample "$dir/f256" --threads 2 --seconds 3 | grep -E '^ +[12] ' || true
		echo "  one core kept busy by another process (load $(load)):"
		(while :; do :; done) &
		busy=$!
		"$burrow" bench sample "$dir/f256" --threads 2 --seconds 3 | grep -E '^ +[12] ' || true
		kill "$busy"
		wait "$busy" 2>/dev/null || true
	done
fi

if [[ " $SECTIONS " == *" mini "* ]]; then
	echo "== mini-batch: f256, sage 3 layers, one epoch, the defaults (every core: $(nproc) threads) vs --threads 1 (page cache warm, features cached)"
	args="train $dir/f256 --epochs 1 --eval-every 0 --quiet"
	compare default wall "$burrow" $args -- t1 wall "$burrow" $args --threads 1
fi

if [[ " $SECTIONS " == *" sparse "* ]]; then
	echo "== sparse features: Cora sage mini-batch (defaults), 20 epochs, --sparse-input auto vs off"
	args="train $dir/cora --model sage --epochs 20 --eval-every 0 --quiet"
	compare sparse wall "$burrow" $args -- dense wall "$burrow" $args --sparse-input off
	if command -v mpirun >/dev/null; then
		[ -d "$dir/cora/parts-2" ] || "$burrow" partition "$dir/cora" --parts 2 --quiet
		echo "== sparse features: Cora sage --full-graph, $EPOCHS epochs, mpirun -np 2 (a thread per rank) vs one process"
		args="--full-graph --model sage --epochs $EPOCHS --eval-every 0 --quiet"
		mpi="env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 mpirun -np 2"
		compare np2 wall $mpi "$burrow" train "$dir/cora/parts-2" $args -- one wall "$burrow" train "$dir/cora" $args
	fi
fi

if [[ " $SECTIONS " == *" ram2x "* ]]; then
	# a features file twice the memory the run is given: a memory cgroup (RAM and page cache
	# together; needs root and the v1 memory controller or cgroup v2) of half the file
	[ -d "$dir/f2g" ] || "$burrow" gen csbm "$dir/f2g" --nodes 2097152 --feat-dim 256 --avg-degree 10 --quiet
	f=$dir/f2g/features.npy
	lim=$(($(stat -c %s "$f") / 2))
	if [ -d /sys/fs/cgroup/memory ] && mkdir "/sys/fs/cgroup/memory/bench-scaling-$$" 2>/dev/null; then
		cg=/sys/fs/cgroup/memory/bench-scaling-$$
		echo "$lim" >"$cg/memory.limit_in_bytes"
	elif [ -f /sys/fs/cgroup/cgroup.controllers ] && mkdir "/sys/fs/cgroup/bench-scaling-$$" 2>/dev/null; then
		cg=/sys/fs/cgroup/bench-scaling-$$
		echo "$lim" >"$cg/memory.max"
	else
		cg=
		echo "== ram2x: skipped (no memory cgroup can be made here: needs root)"
	fi
	if [ -n "$cg" ]; then
		in_cg() { (echo $BASHPID >"$cg/cgroup.procs" && exec "$@"); }
		echo "== ram2x: $f ($(du -h "$f" | cut -f1)) in a memory cgroup of $((lim >> 20)) MiB"
		echo "  the disk's random-read limit, bench io uring in the cgroup (cold, O_DIRECT, 3 runs, median):"
		in_cg "$burrow" bench io "$f" --engine uring --repeat 3 --no-fio | grep -E '^ *(engine|uring)' || true
		echo "  a mini-batch epoch of 200 batches (sage, 2 layers, fanout 10,5, hidden 64), cold, in the cgroup:"
		args="train $dir/f2g --epochs 1 --max-batches 200 --layers 2 --fanout 10,5 --hidden 64 --eval-every 0 --quiet"
		for ((r = 0; r < R; r++)); do
			for mode in store mmap; do
				extra=
				[ $mode = mmap ] && extra="--engine mmap --cache 0"
				drop "$f"
				in_cg "$burrow" $args $extra --log "$dir/.ram2x.jsonl" >/dev/null 2>"$dir/.err" ||
					{ echo "  $mode failed: $(tail -1 "$dir/.err")"; continue; }
				grep -m1 '^{"epoch"' "$dir/.ram2x.jsonl" | awk -v m=$mode -v l="$(load)" '{
					match($0, /"epoch_s": [0-9.]+/); e = substr($0, RSTART + 11, RLENGTH - 11);
					match($0, /"io_wait_s": [0-9.]+/); w = substr($0, RSTART + 13, RLENGTH - 13);
					match($0, /"rows_read": [0-9]+/); n = substr($0, RSTART + 13, RLENGTH - 13);
					printf "    %-5s epoch %.2f s, io_wait %.2f s, rows read %d: %.0f rows/s over the epoch (load %s)\n", m, e, w, n, n / e, l }'
			done
		done
		echo "  peak memory of the cgroup: $(($(cat "$cg/memory.max_usage_in_bytes" 2>/dev/null || cat "$cg/memory.peak" 2>/dev/null || echo 0) >> 20)) MiB"
		rmdir "$cg" 2>/dev/null || true
	fi
fi

if [[ " $SECTIONS " == *" cold "* ]]; then
	f=$dir/f256/features.npy
	echo "== cold mini-batch epoch on $f ($(du -h "$f" | cut -f1)): default cache (uring) vs --engine mmap"
	args="train $dir/f256 --epochs 1 --eval-every 0 --quiet"
	compare store "drop $f;" wall "$burrow" $args -- mmap "drop $f;" wall "$burrow" $args --engine mmap --cache 0
	echo "== the same, with a light model (sage, 2 layers, fanout 10,5, hidden 64), so that the reads are a larger share"
	args="$args --layers 2 --fanout 10,5 --hidden 64"
	compare store "drop $f;" wall "$burrow" $args -- mmap "drop $f;" wall "$burrow" $args --engine mmap --cache 0
fi
