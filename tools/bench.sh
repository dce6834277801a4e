#!/usr/bin/env bash
# bench.sh: `make bench`: the project's benchmarks in one run, each printing ratios to an
# anchor measured beside it (fio, zcat, one thread, the serialized exchange). Scratch data
# goes to $BENCH_DIR (default build/bench-data, several GB) and is kept for reruns.
# Usage: tools/bench.sh BURROW_BINARY
set -euo pipefail
burrow=${1:-build/burrow}
dir=${BENCH_DIR:-build/bench-data}
mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "== feature store: burrow bench io (2 GiB of 512-byte rows, cold, against fio when installed)"
[ -d "$dir/r22" ] || "$burrow" gen rmat "$dir/r22" --scale 22 --edge-factor 16 --feat-dim 128 --quiet
# --mmap-random: without it, this VM's 8 MiB readahead turns random faults into sequential reads
"$burrow" bench io "$dir/r22" --threads 2 --qd 128 --repeat 3 --mmap-random

echo "== sampler: burrow bench sample (rmat scale 22, fanout 15,10,5, batch 1024)"
"$burrow" bench sample "$dir/r22" --fanout 15,10,5 --batch 1024 --threads 2

echo "== prep: burrow bench prep (OGB-style zip against zcat; bounded memory)"
"$burrow" bench prep --dir "$dir/prep" --edges 10000000 --nodes 500000 --dim 100

echo "== halo exchange: burrow bench halo (CSBM, 2 parts, hidden 256, loopback TCP)"
[ -d "$dir/hb" ] || "$burrow" gen csbm "$dir/hb" --nodes 50000 --avg-degree 10 --homophily 0.5 --feat-dim 64 --quiet
[ -d "$dir/hb/parts-2" ] || "$burrow" partition "$dir/hb" --parts 2 --quiet
mpirun --oversubscribe --mca btl tcp,self -np 2 "$burrow" bench halo "$dir/hb/parts-2" --layers 3 --model sage --threads 1
