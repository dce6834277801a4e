#!/usr/bin/env bash
# tools/device-check.sh: the CUDA backend's checks on a lent GPU machine, in one call
# (docs/cuda.md). That machine has the CUDA toolkit and Python but none of the Debian
# libraries Burrow links, so the work is split:
#
#   tools/device-check.sh prepare   here, no GPU needed: a CUDA build, then build/device/ with
#                                   the binaries, every library they load that is neither
#                                   glibc, the C++ runtime nor CUDA's (resolved by ldd), and
#                                   the Cora zip (BURROW_DATASETS, default ../shared/datasets)
#   tools/device-check.sh run       there (carry build/device-pack, the same packed with xz:
#                                   the libraries alone pass the 64 MiB a call carries): writes $OUT/device-check.json,
#                                   the logs beside it, and prints a table last
#
# run, in at most about 5 minutes on an H200 with 16 cores:
#   1. the GPU op tests (tests/test_ops.c on the cuda backend), through cuSPARSE and again
#      through the plain CSR kernel (BURROW_CUDA_AGG=kernel);
#   2. Cora, 5 epochs, seed 7, sage / gcn / mlp mini-batch and sage full-graph, on cpu and
#      cuda: each epoch's loss within 1e-4 relative, test accuracy within 0.5 point;
#   3. an R-MAT scale 22 graph with 128 float32 features on local disk: `bench train` on
#      cuda (the epoch with a 10% cache, T_mem with every row in host memory, T_io its reads
#      alone) and the same on the cpu backend;
#   4. the plain pinned host-to-device copy rate (torch, if present) beside the pipeline's;
#   5. the GPU sampler: the sampler tests on the cuda backend (every batch equal to the CPU's
#      on small graphs), then on the same R-MAT graph with fanout 15,10,5: its first 20
#      batches against the CPU sampler's, element for element, and edges/s of the GPU (8
#      producer threads, a stream each) and of the CPU on all the machine's cores (producer
#      threads and OpenMP threads in one batch: the better), and their ratio (target >= 3);
#   6. two ranks sharing the one GPU through the staged path (--comm staged, --device cuda:
#      both ranks on cuda:0), after a 2-rank probe (when it fails, "not available" and its
#      one-line reason): full-graph 3-layer sage on a 200k-node CSBM in 2 parts against the
#      single process: the first epoch's loss (the distributed forward's logits) and the
#      gradients (one SGD step with lr 1000, from the checkpoints) as normwise relative errors
#      (target 1e-5), and the epochs with the halo exchange and the bucketed gradient
#      all-reduce overlapped (--grad-overlap) vs --no-overlap: the fraction of the
#      communication hidden (target >= 60%); then, when time is left, the test program
#      tests/mpi/dist_check.c in its "gpu" mode (staged and auto, overlapped or not, bucketed
#      or not, against the single-process CPU run: mpi::distributed_full_graph_gpu).
#   7. mini-batch training with the GPU sampler against the CPU sampler on the R-MAT graph
#      (--device cuda, 10% cache, 40 batches, fanout 15,10,5, --sampler-device cuda then cpu):
#      the same batches, so the epoch's loss within 1e-4 relative, and each epoch's time; then
#      2 CPU ranks on a 20k-node CSBM in 2 parts with --sampler-device cuda (each rank's draws
#      on the GPU) against cpu: the same weights (checksum) and each epoch's time; then
#      distributed mini-batch with the model on the one shared GPU (2 ranks, --device cuda
#      --comm staged: the fetched rows and the gradients in device buffers, the draws on the
#      GPU) against the same 2 ranks on the CPU with MPI: each epoch's loss within 1e-4
#      relative (the sampling is the same) and the evaluation after the last epoch within 0.5
#      point (valid and test accuracy), and each epoch's time; then, when time is left, the
#      test program tests/mpi/distmb_check.c in its "gpu" mode (its sampling, fetch, exact-step
#      and replica checks on the GPU, and two epochs of SGD there against the CPU's weights
#      within 1e-4, staged and auto: mpi::minibatch_gpu).
# Sections 5, 6 and 7 are skipped, saying so, when less time is left than they need (the whole
# check stays under 5 minutes). mpirun there is this machine's Open MPI, carried by prepare.
# DEVICE_CHECK_SCALE=S replaces the R-MAT scale (a dry run of the script on a CPU machine);
# DEVICE_CHECK_STAGED_DEVICE=cpu DEVICE_CHECK_STAGED_COMM=mpi DEVICE_CHECK_STAGED_NODES=N
# run section 6's comparisons on the CPU path instead (a dry run of that section), and
# DEVICE_CHECK_MB_DEVICE=cpu section 7's (the cpu backend and sampler both times; under
# mpirun --comm staged on the CPU device, and distmb_check's gpu mode with DISTMB_DEVICE=cpu).
set -euo pipefail
cd "$(dirname "$0")/.."
D=build/device

prepare() {
	make -j2 CUDA=1 all build/tests/burrow-tests build/tests/dist_check build/tests/distmb_check
	rm -rf "$D"
	mkdir -p "$D/bin" "$D/lib" "$D/data"
	cp build/burrow build/tests/burrow-tests build/tests/dist_check build/tests/distmb_check "$D/bin/"
	local l
	for b in "$D"/bin/*; do ldd "$b"; done | awk '$3 ~ /^\// { print $3 }' | sort -u | while read -r l; do
		case "$(basename "$l")" in
		libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | libresolv.so* | ld-linux* | libstdc++.so* | libgcc_s.so*) continue ;;
		esac
		case "$l" in /usr/local/cuda*) continue ;; esac
		cp -L "$l" "$D/lib/"
	done
	carry_mpi
	local ds=${BURROW_DATASETS:-../shared/datasets}
	cp "$ds/ogbn-cora.zip" "$D/data/"
	mkdir -p build/device-pack
	tar -C build -cf - device | xz -T0 -6 >build/device-pack/device.tar.xz
	echo "device-check: prepared $D ($(du -sh "$D" | cut -f1), packed in build/device-pack:" \
		"$(du -sh build/device-pack | cut -f1)); carry build/device-pack and run: tools/device-check.sh run"
}

# Open MPI's launcher (orterun, orted), its components, help files and every library they
# load into $D/mpi and $D/lib, so that section 6 can start ranks on a machine without it;
# run() points Open MPI and PMIx at them (OPAL_* and PMIX_* variables).
carry_mpi() {
	local orterun ompi pmix
	orterun=$(readlink -f "$(command -v mpirun 2>/dev/null)" 2>/dev/null || true)
	ompi=$(dirname "$(find /usr/lib /usr/local/lib /usr/lib64 -path '*openmpi*' -name 'mca_btl_tcp.so' 2>/dev/null | head -1)" 2>/dev/null || true)
	pmix=$(dirname "$(find /usr/lib /usr/local/lib -path '*pmix*' -name 'pmix_mca_*.so' 2>/dev/null | head -1)" 2>/dev/null || true)
	if [ -z "$orterun" ] || [ ! -x "$orterun" ] || [ -z "$ompi" ] || [ "$ompi" = . ]; then
		echo "device-check: no Open MPI launcher here: section 6 will say mpirun is missing" >&2
		return 0
	fi
	mkdir -p "$D/mpi/bin" "$D/mpi/lib/openmpi" "$D/mpi/lib/pmix" "$D/mpi/share" "$D/mpi/etc"
	cp -L "$orterun" "$D/mpi/bin/mpirun"
	cp -L "$(dirname "$orterun")/orted" "$D/mpi/bin/" 2>/dev/null || true
	cp -L "$ompi"/*.so "$D/mpi/lib/openmpi/"
	[ -n "$pmix" ] && [ "$pmix" != . ] && cp -L "$pmix"/*.so "$D/mpi/lib/pmix/"
	cp -rL /usr/share/openmpi "$D/mpi/share/" 2>/dev/null || true
	cp -L /etc/openmpi/*.conf "$D/mpi/etc/" 2>/dev/null || true
	local l
	for b in "$D"/mpi/bin/* "$D"/mpi/lib/openmpi/*.so "$D"/mpi/lib/pmix/*.so; do ldd "$b" 2>/dev/null; done |
		awk '$3 ~ /^\// { print $3 }' | sort -u | while read -r l; do
		case "$(basename "$l")" in
		libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | libresolv.so* | ld-linux* | libstdc++.so* | libgcc_s.so*) continue ;;
		esac
		case "$l" in /usr/local/cuda*) continue ;; esac
		[ -f "$D/lib/$(basename "$l")" ] || cp -L "$l" "$D/lib/"
	done
}

# mpirun from prepare's copy (else the machine's), as root, several ranks per core allowed,
# under `timeout $1`.
mpirun_carried() {
	local limit=$1
	shift
	local m="$PWD/$D/mpi"
	if [ -x "$m/bin/mpirun" ]; then
		OPAL_PREFIX="$m" OPAL_EXEC_PREFIX="$m" OPAL_BINDIR="$m/bin" OPAL_LIBDIR="$m/lib" \
			OPAL_PKGLIBDIR="$m/lib/openmpi" OPAL_DATAROOTDIR="$m/share" OPAL_DATADIR="$m/share" \
			OPAL_PKGDATADIR="$m/share/openmpi" OPAL_SYSCONFDIR="$m/etc" PATH="$m/bin:$PATH" \
			PMIX_PREFIX="$m" PMIX_LIBDIR="$m/lib" PMIX_PKGLIBDIR="$m/lib/pmix" \
			PMIX_MCA_mca_base_component_path="$m/lib/pmix" OMPI_MCA_mca_base_component_show_load_errors=0 \
			OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1 OMPI_MCA_rmaps_base_oversubscribe=1 \
			timeout "$limit" "$m/bin/mpirun" --allow-run-as-root --bind-to none "$@"
	elif command -v mpirun >/dev/null; then
		OMPI_MCA_rmaps_base_oversubscribe=1 timeout "$limit" mpirun --allow-run-as-root --bind-to none "$@"
	else
		echo "mpirun: not on this machine and not carried" >&2
		return 127
	fi
}

# Section 6: two ranks sharing the GPU through --comm staged against one process. Args:
# burrow, scratch, out, start, budget. Writes out/staged.json when it ran, else one line in
# out/staged-why.txt saying why not.
staged() {
	local B=$1 w=$2 out=$3 t0=$4 budget=$5 why="$3/staged-why.txt" log="$3/staged-probe.txt"
	local dev=${DEVICE_CHECK_STAGED_DEVICE:-cuda} comm=${DEVICE_CHECK_STAGED_COMM:-staged}
	if [ $((SECONDS - t0)) -gt $((budget - 100)) ]; then
		echo "skipped: $((SECONDS - t0)) s spent of the $budget s budget" >"$why"
		return 0
	fi
	# the probe: one epoch of 2 ranks on cuda, staged, on a small CSBM
	if ! { "$B" gen csbm "$w/probe" --nodes 2000 --seed 1 && "$B" partition "$w/probe" --parts 2; } >"$log" 2>&1; then
		echo "the probe's dataset: $(tail -1 "$log")" >"$why"
		return 0
	fi
	if ! mpirun_carried 60 -np 2 "$B" train "$w/probe/parts-2" --full-graph --device "$dev" --comm "$comm" --epochs 1 \
		--eval-every 0 --quiet >>"$log" 2>&1; then
		{ grep -E '^burrow: train' "$log" || grep -E '^mpirun' "$log" || tail -1 "$log"; } | tail -1 >"$why"
		return 0
	fi
	local common=(--full-graph --model sage --layers 3 --dropout 0 --seed 3 --eval-every 0 --quiet --device "$dev")
	local sgd=(--epochs 1 --optimizer sgd)
	{ "$B" gen csbm "$w/csbm" --nodes "${DEVICE_CHECK_STAGED_NODES:-200000}" --seed 1 && "$B" partition "$w/csbm" --parts 2; } >"$out/staged-data.txt" 2>&1 || true
	# the weights before the step (a step of lr 1e-12 leaves them: W0), and one SGD step of
	# lr 1000 (W1 = W0 - 1000 g) in one process and in two ranks: g = (W0 - W1) / 1000 on each side
	timeout 60 "$B" train "$w/csbm" "${common[@]}" "${sgd[@]}" --lr 1e-12 --checkpoint "$w/ck0" \
		>"$out/staged-single-w0.txt" 2>&1 || true
	timeout 60 "$B" train "$w/csbm" "${common[@]}" "${sgd[@]}" --lr 1000 --checkpoint "$w/ck1" \
		--log "$out/staged-single.jsonl" >"$out/staged-single.txt" 2>&1 || true
	mpirun_carried 60 -np 2 "$B" train "$w/csbm/parts-2" "${common[@]}" "${sgd[@]}" --lr 1000 --comm "$comm" \
		--checkpoint "$w/ckd" --log "$out/staged-dist.jsonl" >"$out/staged-dist.txt" 2>&1 || true
	# the epoch with the halo exchange overlapped, and serialized
	mpirun_carried 60 -np 2 "$B" train "$w/csbm/parts-2" "${common[@]}" --epochs 5 --comm "$comm" --grad-overlap \
		--log "$out/staged-overlap.jsonl" >"$out/staged-overlap.txt" 2>&1 || true
	mpirun_carried 60 -np 2 "$B" train "$w/csbm/parts-2" "${common[@]}" --epochs 5 --comm "$comm" --no-overlap \
		--log "$out/staged-serial.jsonl" >"$out/staged-serial.txt" 2>&1 || true
	# the test program's GPU variants (it prints [SKIP] without a device), when time is left
	local dc="$(dirname "$B")/dist_check"
	if [ -x "$dc" ] && [ $((SECONDS - t0)) -lt $((budget - 45)) ]; then
		mkdir -p "$w/dc"
		if mpirun_carried 40 -np 2 "$dc" "$w/dc" gpu >"$out/staged-dist-check.txt" 2>&1; then
			echo "exit 0" >>"$out/staged-dist-check.txt"
		else
			echo "exit $?" >>"$out/staged-dist-check.txt"
		fi
	fi
	python3 - "$w" "$out" "$dev" "$comm" >"$out/staged.json" 2>"$out/staged-py.err" <<'PYEOF' || true
import json, struct, sys
w, out = sys.argv[1], sys.argv[2]
def weights(path):  # a checkpoint's float32 weights (docs/train.md, "Checkpoints")
    b = open(path, "rb").read()
    if b[:8] != b"BURROWCK":
        raise ValueError(path + ": not a checkpoint")
    H = struct.unpack("<I", b[12:16])[0]
    P = json.loads(b[16:16 + H])["num_params"]
    return struct.unpack("<%df" % P, b[16 + H:16 + H + 4 * P])
def rows(p):
    try:
        return [json.loads(l) for l in open(p) if l.strip() and not json.loads(l).get("final")]
    except (OSError, ValueError):
        return []
def med(x):
    x = sorted(x)
    return x[len(x) // 2] if x else None
r = {"available": True, "device": sys.argv[3], "comm": sys.argv[4]}
try:
    w0, w1s, w1d = (weights("%s/%s/last.ckpt" % (w, c)) for c in ("ck0", "ck1", "ckd"))
    gs = [(a - b) / 1000 for a, b in zip(w0, w1s)]
    gd = [(a - b) / 1000 for a, b in zip(w0, w1d)]
    r["grad_rel"] = max(abs(a - b) for a, b in zip(gd, gs)) / max(max(abs(a) for a in gs), 1e-30)
except (OSError, ValueError, KeyError, struct.error) as e:
    r["grad_error"] = str(e)
ls, ld = rows(out + "/staged-single.jsonl"), rows(out + "/staged-dist.jsonl")
if ls and ld:
    r["loss_rel"] = abs(ld[0]["loss"] - ls[0]["loss"]) / max(abs(ls[0]["loss"]), 1e-30)
ov, se = rows(out + "/staged-overlap.jsonl")[1:], rows(out + "/staged-serial.jsonl")[1:]
if ov and se:
    r["epoch_overlap"] = med([x["epoch_s"] for x in ov])
    r["epoch_serial"] = med([x["epoch_s"] for x in se])
    r["comm_serial"] = med([x["comm_s"] for x in se])
    r["exposed_overlap"] = med([x["exposed_comm_s"] for x in ov])
    if r["comm_serial"] > 0:
        r["hidden_fraction"] = (r["epoch_serial"] - r["epoch_overlap"]) / r["comm_serial"]
try:
    t = open(out + "/staged-dist-check.txt").read().splitlines()
    r["dist_check"] = {"exit": t[-1] if t else "no output",
                       "skip": next((l for l in t if l.startswith("[SKIP]")), None),
                       "passed": [l for l in t if "match the single-process" in l],
                       "last": next((l for l in reversed(t) if not l.startswith("exit")), "")}
except OSError:
    r["dist_check"] = None
print(json.dumps(r))
PYEOF
}

# Section 7: mini-batch training with the GPU sampler against the CPU sampler, then 2 ranks
# of distributed mini-batch on the shared GPU (staged) against 2 CPU ranks (MPI), then
# distmb_check's gpu mode. Args: burrow, scratch, out, start, budget. Writes out/mb-*.jsonl
# logs, out/mb-distmb-check.txt and out/mb-why.txt lines.
minibatch() {
	local B=$1 w=$2 out=$3 t0=$4 budget=$5 why="$3/mb-why.txt"
	local dev=${DEVICE_CHECK_MB_DEVICE:-cuda} s
	: >"$why"
	if [ $((SECONDS - t0)) -gt $((budget - 50)) ]; then
		echo "single: skipped: $((SECONDS - t0)) s spent of the $budget s budget" >>"$why"
		echo "dist: skipped: $((SECONDS - t0)) s spent of the $budget s budget" >>"$why"
		return 0
	fi
	local sd
	for s in cuda cpu; do
		sd=$s
		[ "$dev" = cpu ] && sd=cpu
		timeout 60 "$B" train "$w/r22" --device "$dev" --sampler-device "$sd" --cache 10% --max-batches 40 \
			--fanout 15,10,5 --epochs 1 --eval-every 0 --seed 5 --quiet --log "$out/mb-sampler-$s.jsonl" \
			>"$out/mb-sampler-$s.txt" 2>&1 || echo "single $s: $(tail -1 "$out/mb-sampler-$s.txt")" >>"$why"
	done
	if [ $((SECONDS - t0)) -gt $((budget - 25)) ]; then
		echo "dist: skipped: $((SECONDS - t0)) s spent of the $budget s budget" >>"$why"
		return 0
	fi
	local comm=staged
	if ! { "$B" gen csbm "$w/mb" --nodes 20000 --seed 1 && "$B" partition "$w/mb" --parts 2; } >"$out/mb-data.txt" 2>&1; then
		echo "dist: the dataset: $(tail -1 "$out/mb-data.txt")" >>"$why"
		return 0
	fi
	# evaluated once, after the last epoch (the final line's valid and test accuracy)
	local common=(--batch-size 512 --epochs 3 --eval-every 3 --seed 5 --quiet --max-batches 10)
	# the rows each rank expands drawn on the GPU (the model on the CPU), against the CPU's draws
	for s in cuda cpu; do
		sd=$s
		[ "$dev" = cpu ] && sd=cpu
		mpirun_carried 60 -np 2 "$B" train "$w/mb/parts-2" "${common[@]}" --device cpu --sampler-device "$sd" \
			--log "$out/mb-draws-$s.jsonl" >"$out/mb-draws-$s.txt" 2>&1 ||
			echo "draws $s: $(grep -E '^burrow: train' "$out/mb-draws-$s.txt" | tail -1)" >>"$why"
	done
	if ! mpirun_carried 60 -np 2 "$B" train "$w/mb/parts-2" "${common[@]}" --device "$dev" --comm "$comm" \
		--log "$out/mb-dist-$dev.jsonl" >"$out/mb-dist-$dev.txt" 2>&1; then
		{ grep -E '^burrow: train' "$out/mb-dist-$dev.txt" || grep -E '^mpirun' "$out/mb-dist-$dev.txt" ||
			tail -1 "$out/mb-dist-$dev.txt"; } | tail -1 | sed 's/^/dist: /' >>"$why"
		return 0
	fi
	mpirun_carried 60 -np 2 "$B" train "$w/mb/parts-2" "${common[@]}" --device cpu --comm mpi \
		--log "$out/mb-dist-cpu-mpi.jsonl" >"$out/mb-dist-cpu-mpi.txt" 2>&1 ||
		echo "dist cpu: $(tail -1 "$out/mb-dist-cpu-mpi.txt")" >>"$why"
	# the test program's gpu mode (it prints [SKIP] without a device), when time is left
	local dmc="$(dirname "$B")/distmb_check"
	# (with DEVICE_CHECK_MB_DEVICE=cpu: its gpu mode on the CPU device, staged)
	local dry=()
	[ "$dev" = cpu ] && dry=(env DISTMB_DEVICE=cpu DISTMB_COMM=staged)
	if [ -x "$dmc" ] && [ $((SECONDS - t0)) -lt $((budget - 40)) ]; then
		mkdir -p "$w/dmc"
		if mpirun_carried 60 -np 2 "${dry[@]}" "$dmc" "$w/dmc" gpu >"$out/mb-distmb-check.txt" 2>&1; then
			echo "exit 0" >>"$out/mb-distmb-check.txt"
		else
			echo "exit $?" >>"$out/mb-distmb-check.txt"
		fi
	fi
}

run() {
	local out=${OUT:-$PWD/build/device-out} w=${TMPDIR:-/tmp}/burrow-device-check
	if [ ! -x "$D/bin/burrow" ] && [ -f build/device-pack/device.tar.xz ]; then
		xz -dc build/device-pack/device.tar.xz | tar -C build -xf -
	fi
	mkdir -p "$out"
	rm -rf "$w"
	mkdir -p "$w"
	local cuda_lib
	cuda_lib=$(find /usr/local /opt /usr/lib -name 'libcusparse.so.12' 2>/dev/null | head -1 || true)
	export LD_LIBRARY_PATH="$PWD/$D/lib${cuda_lib:+:$(dirname "$cuda_lib")}:$(find /usr/local /opt /usr/lib \
		-name 'libcublas.so.13' -printf '%h:' 2>/dev/null || true)${LD_LIBRARY_PATH:-}"
	local B="$PWD/$D/bin/burrow" T="$PWD/$D/bin/burrow-tests"
	local j="$out/device-check.json" t_start=$SECONDS budget=${DEVICE_CHECK_BUDGET:-290}
	{
		echo "{"
		echo "\"gpu\": \"$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1)\","
		echo "\"cores\": $(nproc), \"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\","
	} >"$j"
	if ! "$B" --version >"$out/version.txt" 2>&1; then
		echo "device-check: the carried burrow does not start here:" >&2
		cat "$out/version.txt" >&2
		ldd "$B" | grep 'not found' >&2 || true
		echo "\"runs\": false}" >>"$j"
		exit 1
	fi
	echo "\"version\": $(python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().strip()))' <"$out/version.txt"),"  >>"$j"

	# 1. op tests
	local agg
	for agg in cusparse kernel; do
		BURROW_CUDA_AGG=$agg BURROW_BIN="$B" BURROW_BUILD="$PWD/$D" timeout 120 "$T" --filter 'ops/*' --jobs 4 \
			>"$out/ops-$agg.txt" 2>&1 || true
	done

	# 2. Cora, cpu against cuda
	"$B" prep ogbn-cora --root "$D/data" --out "$w/cora" >"$out/prep.txt" 2>&1
	local m dev mode
	for m in sage gcn mlp sage-full; do
		mode=""
		[ "$m" = sage-full ] && mode="--full-graph --model sage" || mode="--model $m"
		for dev in cpu cuda; do
			timeout 120 "$B" train "$w/cora" $mode --epochs 5 --seed 7 --quiet --device "$dev" \
				--log "$out/cora-$m-$dev.jsonl" >"$out/cora-$m-$dev.txt" 2>&1 || true
		done
	done

	# 3. R-MAT scale 22, 128 features
	timeout 150 "$B" gen rmat "$w/r22" --scale "${DEVICE_CHECK_SCALE:-22}" --feat-dim 128 --seed 1 >"$out/gen.txt" 2>&1 || true
	for dev in cuda cpu; do
		timeout 120 "$B" bench train "$w/r22" --device "$dev" --cache 10% --max-batches 100 --json \
			>"$out/bench-$dev.jsonl" 2>"$out/bench-$dev.err" || true
	done

	# 4. the plain pinned copy
	python3 - >"$out/h2d.json" 2>"$out/h2d.err" <<'PYEOF' || true
import json, torch
n = 1 << 30
h = torch.empty(n, dtype=torch.uint8, pin_memory=True)
d = torch.empty(n, dtype=torch.uint8, device="cuda")
for _ in range(3):
    d.copy_(h, non_blocking=True)
torch.cuda.synchronize()
ts = []
for _ in range(10):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); d.copy_(h, non_blocking=True); b.record(); b.synchronize()
    ts.append(a.elapsed_time(b) / 1e3)
ts.sort()
print(json.dumps({"bytes": n, "median_s": ts[5], "gb_per_s": n / ts[5] / 1e9}))
PYEOF

	# 5. the GPU sampler against the CPU sampler
	local ncpu
	ncpu=$(nproc)
	if [ $((SECONDS - t_start)) -gt $((budget - 45)) ]; then
		echo "skipped: $((SECONDS - t_start)) s spent of the $budget s budget" >"$out/sample-skipped.txt"
	else
		BURROW_BIN="$B" BURROW_BUILD="$PWD/$D" timeout 60 "$T" --filter 'sampler/backend_*' --jobs 4 \
			>"$out/sampler-tests.txt" 2>&1 || true
		timeout 60 "$B" bench sample "$w/r22" --fanout 15,10,5 --device cuda --threads 8 --single --verify 20 \
			--seconds 3 --json >"$out/sample-cuda.jsonl" 2>"$out/sample-cuda.err" || true
		timeout 30 "$B" bench sample "$w/r22" --fanout 15,10,5 --threads "$ncpu" --single --producers \
			--seconds 3 --json >"$out/sample-cpu-producers.jsonl" 2>"$out/sample-cpu-producers.err" || true
		timeout 30 "$B" bench sample "$w/r22" --fanout 15,10,5 --threads "$ncpu" --single --omp \
			--seconds 3 --json >"$out/sample-cpu-omp.jsonl" 2>"$out/sample-cpu-omp.err" || true
	fi

	# 6. two ranks on the one GPU through the staged path, when this build has it
	staged "$B" "$w" "$out" "$t_start" "$budget" || true

	# 7. mini-batch training: the GPU sampler against the CPU's; 2 ranks on the shared GPU
	minibatch "$B" "$w" "$out" "$t_start" "$budget" || true

	python3 - "$out" >>"$j" <<'PYEOF'
import json, os, re, sys
out = sys.argv[1]
res = {}
def synth(p):
    try:
        t = open(p).read()
    except OSError:
        return None
    m = re.search(r"Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+) \| Crashing: (\d+)", t)
    s = re.search(r"Skipped: (\d+)", t)
    return {"tested": int(m[1]), "passing": int(m[2]), "failing": int(m[3]), "crashing": int(m[4]),
            "skipped": int(s[1]) if s else None} if m else {"error": t[-400:]}
res["ops"] = {a: synth(os.path.join(out, "ops-%s.txt" % a)) for a in ("cusparse", "kernel")}
def log(p):
    try:
        rows = [json.loads(l) for l in open(p)]
    except (OSError, ValueError):
        return None
    return {"loss": [r["loss"] for r in rows if "loss" in r],
            "test": next((r.get("test_acc") for r in rows if r.get("final")), None)}
cora = {}
for m in ("sage", "gcn", "mlp", "sage-full"):
    c, g = log(os.path.join(out, "cora-%s-cpu.jsonl" % m)), log(os.path.join(out, "cora-%s-cuda.jsonl" % m))
    if not c or not g or len(c["loss"]) != 5 or len(g["loss"]) != 5:
        cora[m] = {"ok": False, "cpu": c, "cuda": g}
        continue
    rel = max(abs(a - b) / max(abs(a), 1e-30) for a, b in zip(c["loss"], g["loss"]))
    dacc = abs((c["test"] or 0) - (g["test"] or 0))
    cora[m] = {"ok": rel <= 1e-4 and dacc <= 0.005, "max_rel_loss": rel, "test_cpu": c["test"],
               "test_cuda": g["test"], "d_test_points": 100 * dacc}
res["cora"] = cora
bench = {}
for dev in ("cuda", "cpu"):
    try:
        rows = [json.loads(l) for l in open(os.path.join(out, "bench-%s.jsonl" % dev))]
        bench[dev] = next(r for r in rows if r.get("summary"))
    except (OSError, ValueError, StopIteration):
        bench[dev] = None
res["bench"] = bench
try:
    res["h2d_plain"] = json.load(open(os.path.join(out, "h2d.json")))
except (OSError, ValueError):
    res["h2d_plain"] = None
def jsonl(p):
    try:
        return [json.loads(l) for l in open(p) if l.strip()]
    except (OSError, ValueError):
        return None
def why_not(p):
    try:
        t = [l for l in open(p).read().strip().splitlines() if l.strip()]
        return t[-1] if t else "no output"
    except OSError:
        return "not run"
smp = {"tests": synth(os.path.join(out, "sampler-tests.txt"))}
if os.path.exists(os.path.join(out, "sample-skipped.txt")):
    smp["skipped"] = open(os.path.join(out, "sample-skipped.txt")).read().strip()
rows = jsonl(os.path.join(out, "sample-cuda.jsonl")) or []
smp["verify"] = next((r for r in rows if "verify" in r), None)
smp["cuda"] = next((r for r in rows if "edges_per_s" in r), None)
if not smp["cuda"]:
    smp["cuda_error"] = why_not(os.path.join(out, "sample-cuda.err"))
for mode in ("producers", "omp"):
    rows = jsonl(os.path.join(out, "sample-cpu-%s.jsonl" % mode)) or []
    smp["cpu_" + mode] = next((r for r in rows if "edges_per_s" in r), None)
cpus = [smp[k] for k in ("cpu_producers", "cpu_omp") if smp[k]]
smp["cpu_best"] = max(cpus, key=lambda r: r["edges_per_s"]) if cpus else None
if smp["cuda"] and smp["cpu_best"]:
    smp["ratio"] = smp["cuda"]["edges_per_s"] / smp["cpu_best"]["edges_per_s"]
    smp["ok"] = smp["ratio"] >= 3 and bool(smp["verify"] and smp["verify"]["equal"])
res["sampler"] = smp
try:
    res["staged"] = json.load(open(os.path.join(out, "staged.json")))
except (OSError, ValueError):
    res["staged"] = {"available": False, "why": why_not(os.path.join(out, "staged-why.txt"))}
def why_lines(p, key):
    try:
        return [l.split(": ", 1)[1] for l in open(p).read().splitlines() if l.split(":")[0].split(" ")[0] == key]
    except OSError:
        return []
mb = {}
ep = {}
for s in ("cuda", "cpu"):
    rows = [r for r in (jsonl(os.path.join(out, "mb-sampler-%s.jsonl" % s)) or []) if not r.get("final")]
    ep[s] = rows[0] if rows else None
if ep["cuda"] and ep["cpu"]:
    rel = abs(ep["cuda"]["loss"] - ep["cpu"]["loss"]) / max(abs(ep["cpu"]["loss"]), 1e-30)
    mb["single"] = {"loss_rel": rel, "ok": rel <= 1e-4, "batches": ep["cuda"]["batches"],
                    "epoch_s": {s: ep[s]["epoch_s"] for s in ep}, "sample_s": {s: ep[s]["sample_s"] for s in ep}}
else:
    mb["single"] = {"ok": False, "why": why_lines(os.path.join(out, "mb-why.txt"), "single") or ["not run"]}
dev = os.environ.get("DEVICE_CHECK_MB_DEVICE", "cuda")
dg = [r for r in (jsonl(os.path.join(out, "mb-dist-%s.jsonl" % dev)) or []) if not r.get("final")]
dc = [r for r in (jsonl(os.path.join(out, "mb-dist-cpu-mpi.jsonl")) or []) if not r.get("final")]
def final(p):
    return next((r for r in (jsonl(p) or []) if r.get("final")), None)
if dg and dc and len(dg) == len(dc):
    rel = max(abs(a["loss"] - b["loss"]) / max(abs(b["loss"]), 1e-30) for a, b in zip(dg, dc))
    fg, fc = final(os.path.join(out, "mb-dist-%s.jsonl" % dev)), final(os.path.join(out, "mb-dist-cpu-mpi.jsonl"))
    acc = {}
    for k in ("valid_acc", "test_acc"):
        a, b = (fg or {}).get(k), (fc or {}).get(k)
        acc[k] = {"gpu": a, "cpu": b, "d_points": 100 * abs(a - b) if a is not None and b is not None and a >= 0 and b >= 0 else None}
    acc_ok = all(v["d_points"] is not None and v["d_points"] <= 0.5 for v in acc.values())
    mb["dist"] = {"available": True, "device": dev, "loss_rel": rel, "acc": acc, "ok": rel <= 1e-4 and acc_ok,
                  "loss_ok": rel <= 1e-4, "acc_ok": acc_ok,
                  "epoch_s": {"staged": [r["epoch_s"] for r in dg], "cpu_mpi": [r["epoch_s"] for r in dc]},
                  "comm_s": [r.get("comm_s") for r in dg], "exposed_comm_s": [r.get("exposed_comm_s") for r in dg]}
else:
    mb["dist"] = {"available": False, "why": (why_lines(os.path.join(out, "mb-why.txt"), "dist") or ["not run"])[-1]}
def checksum(p):
    try:
        m = re.search(r"checksum ([0-9a-f]{16})", open(p).read())
        return m[1] if m else None
    except OSError:
        return None
dr = {s: [r for r in (jsonl(os.path.join(out, "mb-draws-%s.jsonl" % s)) or []) if not r.get("final")] for s in ("cuda", "cpu")}
ck = {s: checksum(os.path.join(out, "mb-draws-%s.txt" % s)) for s in ("cuda", "cpu")}
if dr["cuda"] and dr["cpu"] and ck["cuda"] and ck["cpu"]:
    mb["draws"] = {"ok": ck["cuda"] == ck["cpu"], "checksum": ck, "epoch_s": {s: [r["epoch_s"] for r in dr[s]] for s in dr}}
else:
    mb["draws"] = {"ok": False, "why": "; ".join(why_lines(os.path.join(out, "mb-why.txt"), "draws")
                                                 + why_lines(os.path.join(out, "mb-why.txt"), "dist")) or "not run"}
try:
    t = open(os.path.join(out, "mb-distmb-check.txt")).read().splitlines()
    mb["distmb_check"] = {"exit": t[-1] if t else "no output",
                          "skip": next((l for l in t if l.startswith("[SKIP]")), None),
                          "gpu": [l for l in t if l.startswith("distmb-check: gpu:")],
                          "last": next((l for l in reversed(t) if not l.startswith("exit")), "")}
except OSError:
    mb["distmb_check"] = None
res["minibatch"] = mb
print('"results": ' + json.dumps(res, indent=1) + "}")

# the table, last
print("\n== device-check", file=sys.stderr)
for a, s in res["ops"].items():
    print("ops (%-8s) %s" % (a, s if s is None or "error" in s else
          "%d/%d passing, %d failing, %d crashing, %s skipped" % (s["passing"], s["tested"], s["failing"], s["crashing"], s["skipped"])), file=sys.stderr)
for m, c in cora.items():
    if "max_rel_loss" in c:
        print("cora %-9s loss max rel %.2e  test cpu %.4f cuda %.4f  %s" % (m, c["max_rel_loss"], c["test_cpu"], c["test_cuda"],
              "ok" if c["ok"] else "FAIL"), file=sys.stderr)
    else:
        why = ""
        for dev in ("cuda", "cpu"):
            try:
                t = open(os.path.join(out, "cora-%s-%s.txt" % (m, dev))).read().strip().splitlines()
                why = why or (dev + ": " + t[-1] if t and "burrow:" in t[-1] else "")
            except OSError:
                pass
        print("cora %-9s FAIL (no complete logs) %s" % (m, why), file=sys.stderr)
for dev, b in bench.items():
    print("r22 bench train %-4s %s" % (dev, "epoch %.3f s  T_mem %.3f s  T_io %.3f s  epoch/max %.3f" % (b["epoch_s"], b["t_mem"], b["t_io"], b["ratio"]) if b else "no result"), file=sys.stderr)
if bench.get("cuda") and bench.get("cpu"):
    print("r22 cpu epoch / cuda epoch  %.1fx" % (bench["cpu"]["epoch_s"] / bench["cuda"]["epoch_s"]), file=sys.stderr)
h = res["h2d_plain"]
print("h2d plain pinned copy %s (the pipeline's own rate is not instrumented yet)" % ("%.1f GB/s" % h["gb_per_s"] if h else "no result"), file=sys.stderr)
t = smp["tests"]
if "skipped" in smp:
    print("sampler: %s" % smp["skipped"], file=sys.stderr)
print("sampler tests (cuda vs cpu) %s" % (t if t is None or "error" in t else "%d/%d passing, %d failing, %d crashing, %s skipped"
      % (t["passing"], t["tested"], t["failing"], t["crashing"], t["skipped"])), file=sys.stderr)
v = smp["verify"]
print("r22 sampler batches cuda = cpu  %s" % (("%s (%d batches compared%s)" % ("equal" if v["equal"] else "DIFFER", v["compared"],
      "" if v["equal"] else ": " + v["difference"])) if v else "no device (" + smp.get("cuda_error", "not run") + ")"), file=sys.stderr)
def eps(r):
    return "%.1f M edges/s (%.1f batches/s, %d %s)" % (r["edges_per_s"] / 1e6, r["batches_per_s"], r["threads"],
           "producers" if r["mode"] == "producers" else "OpenMP threads")
print("r22 sampler cuda  %s" % (eps(smp["cuda"]) if smp["cuda"] else "no device (" + smp.get("cuda_error", "not run") + ")"), file=sys.stderr)
for mode in ("producers", "omp"):
    r = smp["cpu_" + mode]
    print("r22 sampler cpu   %s" % (eps(r) if r else "no result"), file=sys.stderr)
if "ratio" in smp:
    print("r22 sampler cuda / best cpu  %.2fx (target >= 3)  %s" % (smp["ratio"], "ok" if smp["ok"] else "FAIL"), file=sys.stderr)
else:
    print("r22 sampler cuda / best cpu  no device", file=sys.stderr)
st = res["staged"]
if not st.get("available"):
    print("staged 2 ranks, 1 GPU: not available (%s)" % st.get("why", ""), file=sys.stderr)
else:
    for k, label in (("loss_rel", "first-epoch loss (logits)"), ("grad_rel", "gradients")):
        x = st.get(k)
        print("%s 2 ranks (%s) vs 1 process: %s normwise rel %s  %s" % (st["comm"], st["device"], label, "%.2e" % x if x is not None else "no result",
              "ok" if x is not None and x <= 1e-5 else "FAIL"), file=sys.stderr)
    hf = st.get("hidden_fraction")
    print("%s overlap: epoch %s s vs --no-overlap %s s, communication %s s: hidden %s (target >= 60%%)" % (
          st["comm"], st.get("epoch_overlap"), st.get("epoch_serial"), st.get("comm_serial"),
          "%.0f%%" % (100 * hf) if hf is not None else "no result"), file=sys.stderr)
    dc = st.get("dist_check")
    if not dc:
        print("dist_check gpu (2 ranks): not run (no time left, or not carried)", file=sys.stderr)
    else:
        print("dist_check gpu (2 ranks): %s, %d variants match the single process%s%s" % (dc["exit"], len(dc["passed"]),
              ", " + dc["skip"] if dc["skip"] else "", "" if dc["exit"] == "exit 0" else ": " + dc["last"]), file=sys.stderr)
m1 = mb["single"]
if "loss_rel" in m1:
    print("r22 mini-batch --sampler-device cuda vs cpu: loss rel %.2e  %s; epoch %.3f s vs %.3f s (sample_s %.3f vs %.3f, %d batches)" % (
          m1["loss_rel"], "ok" if m1["ok"] else "FAIL", m1["epoch_s"]["cuda"], m1["epoch_s"]["cpu"], m1["sample_s"]["cuda"],
          m1["sample_s"]["cpu"], m1["batches"]), file=sys.stderr)
else:
    print("r22 mini-batch --sampler-device cuda vs cpu: no result (%s)" % "; ".join(m1["why"]), file=sys.stderr)
m3 = mb["draws"]
if "checksum" in m3:
    print("mini-batch 2 cpu ranks, draws --sampler-device cuda vs cpu: weights %s; epochs %s s vs %s s" % (
          "equal" if m3["ok"] else "DIFFER (%s vs %s)" % (m3["checksum"]["cuda"], m3["checksum"]["cpu"]),
          ", ".join("%.3f" % x for x in m3["epoch_s"]["cuda"]), ", ".join("%.3f" % x for x in m3["epoch_s"]["cpu"])),
          file=sys.stderr)
else:
    print("mini-batch 2 cpu ranks, draws on the GPU: no result (%s)" % m3["why"], file=sys.stderr)
m2 = mb["dist"]
if m2.get("available"):
    print("mini-batch 2 ranks staged (%s) vs 2 cpu ranks (mpi): loss max rel %.2e (target 1e-4)  %s; epochs %s s vs %s s" % (
          m2["device"], m2["loss_rel"], "ok" if m2["loss_ok"] else "FAIL", ", ".join("%.3f" % x for x in m2["epoch_s"]["staged"]),
          ", ".join("%.3f" % x for x in m2["epoch_s"]["cpu_mpi"])), file=sys.stderr)
    print("mini-batch 2 ranks staged (%s) vs 2 cpu ranks (mpi): %s (target 0.5 point)  %s" % (m2["device"], ", ".join(
          "%s %s vs %s" % (k, "%.4f" % v["gpu"] if v["gpu"] is not None else "none", "%.4f" % v["cpu"] if v["cpu"] is not None else "none")
          for k, v in m2["acc"].items()), "ok" if m2["acc_ok"] else "FAIL"), file=sys.stderr)
else:
    print("mini-batch 2 ranks staged on the GPU: not available (%s)" % m2["why"], file=sys.stderr)
dm = mb["distmb_check"]
if not dm:
    print("distmb_check gpu (2 ranks): not run (no time left, or not carried)", file=sys.stderr)
else:
    print("distmb_check gpu (2 ranks): %s, %d gpu lines%s%s" % (dm["exit"], len(dm["gpu"]), ", " + dm["skip"] if dm["skip"] else "",
          "" if dm["exit"] == "exit 0" else ": " + dm["last"]), file=sys.stderr)
    for l in dm["gpu"]:
        print("  " + l, file=sys.stderr)
PYEOF
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$j" && echo "device-check: wrote $j" >&2
}

case "${1:-}" in
prepare) prepare ;;
run) run ;;
*)
	echo "usage: tools/device-check.sh prepare|run (see the comment at its top, and docs/cuda.md)" >&2
	exit 2
	;;
esac
