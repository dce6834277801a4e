#!/usr/bin/env bash
# tools/device-check.sh: the CUDA backend's checks on a lent GPU machine (docs/cuda.md). That
# machine has the CUDA toolkit and Python but none of the Debian libraries Burrow links; a
# command there runs at most 600 s and at most 8 files come back from $OUT. So:
#
#   tools/device-check.sh prepare   here, no GPU needed: a CUDA build, then build/device/ with
#                                   the binaries, every library they load that is neither
#                                   glibc nor the C++ runtime (resolved by ldd; cudart too, not
#                                   cuBLAS, cuSPARSE or NCCL, which are opened on first use),
#                                   Open MPI's launcher, and the Cora zip; packed with xz into
#                                   build/device-pack (and with gzip beside it when both fit
#                                   the 64 MiB a call carries: the fallback where xz is missing)
#   tools/device-check.sh smoke     there, first, at most 3 minutes: every binary starts, the
#                                   GPU op tests under compute-sanitizer memcheck, the GPU
#                                   sampler's equality tests, Cora sage 3 epochs on cuda with
#                                   --sampler-device cpu, then cuda (against the CPU's losses)
#   tools/device-check.sh full      there, second: the rest, newest code first (mini-batch
#                                   with the GPU sampler and on 2 ranks, the staged path, the
#                                   sampler's speed, the op tests through the plain kernel, the
#                                   Cora comparisons model-only then with the GPU sampler, the
#                                   R-MAT epoch, the plain copy rate), so that what a deadline
#                                   cuts is the code that has run before
#
# smoke and full each: one progress line per step on stderr; an overall deadline
# (DEVICE_CHECK_DEADLINE seconds from the start; smoke 170, full 540) checked before every
# step, which is skipped when less is left than it needs, and which bounds the step's own
# limit; a trap that, whatever happened (a failed step, a signal), prints the table of steps
# and packs every log into one archive. $OUT gets three files a stage:
# device-check-STAGE.txt (the table), device-check-STAGE-logs.tar.xz (or .tar.gz, or .tar
# where neither compressor exists) and, for full, device-check-full.json (the results of
# tools/device-check-summary.py, whose table follows the steps'). A step's status is ok,
# FAIL, TIMEOUT, skipped, or "no device" with the one line that says so (a CPU machine:
# tools/device-rehearsal.sh runs both stages that way, `make device-rehearsal`).
#
# What full measures (targets in docs/cuda.md): the GPU op tests; Cora, 5 epochs, seed 7,
# sage / gcn / mlp mini-batch and sage full-graph on cpu and cuda (each epoch's loss within
# 1e-4 relative, test accuracy within 0.5 point); an R-MAT graph (scale 22, 128 float32
# features) for `bench train` on cuda and cpu (the 10x target) and for the GPU sampler
# (its first 20 batches against the CPU's, edges/s against the best CPU mode, target >= 3);
# two ranks sharing the GPU through --comm staged against one process (logits, gradients,
# hidden communication), then tests/mpi/dist_check's gpu mode; mini-batch training with the
# GPU sampler against the CPU's, 2 CPU ranks drawing on the GPU, 2 ranks on the shared GPU
# against 2 CPU ranks, then tests/mpi/distmb_check's gpu mode.
# Knobs for a dry run on a CPU machine: DEVICE_CHECK_SCALE (the R-MAT scale),
# DEVICE_CHECK_STAGED_DEVICE=cpu DEVICE_CHECK_STAGED_COMM=mpi DEVICE_CHECK_STAGED_NODES=N
# (section 6 on the CPU path), DEVICE_CHECK_MB_DEVICE=cpu (section 7's on the CPU device).
set -uo pipefail
cd "$(dirname "$0")/.."
D=build/device
PACK=build/device-pack

prepare() {
	set -e
	make -j2 CUDA=1 all build/tests/burrow-tests build/tests/dist_check build/tests/distmb_check
	rm -rf "$D"
	mkdir -p "$D/bin" "$D/lib" "$D/data"
	cp build/burrow build/tests/burrow-tests build/tests/dist_check build/tests/distmb_check "$D/bin/"
	local l
	for b in "$D"/bin/*; do ldd "$b"; done | awk '$3 ~ /^\// { print $3 }' | sort -u | while read -r l; do
		case "$(basename "$l")" in
		libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | libresolv.so* | ld-linux* | libstdc++.so* | libgcc_s.so*) continue ;;
		esac
		cp -L "$l" "$D/lib/"
	done
	carry_mpi
	local ds=${BURROW_DATASETS:-../shared/datasets}
	cp "$ds/ogbn-cora.zip" "$D/data/"
	rm -rf "$PACK"
	mkdir -p "$PACK"
	tar -C build -cf - device | xz -T0 -6 >"$PACK/device.tar.xz"
	tar -C build -cf - device | gzip -6 >"$PACK/device.tar.gz"
	if [ "$(du -sm "$PACK" | cut -f1)" -gt 60 ]; then
		rm -f "$PACK/device.tar.gz"
		echo "device-check: no gzip fallback (with it the pack passes 60 MiB): the device needs xz or Python's lzma" >&2
	fi
	echo "device-check: prepared $D ($(du -sh "$D" | cut -f1), packed in $PACK: $(du -sh "$PACK" | cut -f1));" \
		"carry $PACK and run: tools/device-check.sh smoke, then tools/device-check.sh full"
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
        return [json.loads(l) for l in open(p) if l.strip() and "epoch" in json.loads(l)]
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


# ------------------------------------------------------------ the stages (smoke, full)

# Unpack the carried folder unless it is here: xz, else Python's lzma, else the gzip copy.
unpack() {
	[ -x "$D/bin/burrow" ] && echo "$D is here (not unpacked again)" && return 0
	local x="$PACK/device.tar.xz" z="$PACK/device.tar.gz"
	if [ -f "$x" ] && command -v xz >/dev/null && xz -dc "$x" 2>/dev/null | tar -C build -xf - 2>/dev/null &&
		[ -x "$D/bin/burrow" ]; then
		echo "unpacked $x with xz"
	elif [ -f "$x" ] && command -v python3 >/dev/null &&
		python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' "$x" build 2>/dev/null &&
		[ -x "$D/bin/burrow" ]; then
		echo "unpacked $x with Python's lzma (no working xz)"
	elif [ -f "$z" ] && tar -C build -xzf "$z" 2>/dev/null && [ -x "$D/bin/burrow" ]; then
		echo "unpacked $z with gzip (no xz, no Python lzma)"
	else
		echo "cannot unpack: no $D, and neither $x (xz, Python's lzma) nor $z could be read"
		return 1
	fi
}

# The folders of the machine's cuBLAS, cuSPARSE, NCCL and cudart (toolkit, /opt, the Python
# wheels' nvidia/*/lib), each once, for LD_LIBRARY_PATH; "name: folder" lines into $1.
toolkit_dirs() {
	local found=$1 roots=(/usr/local /opt /usr/lib /usr/lib64) n f dirs=""
	if command -v python3 >/dev/null; then
		while read -r f; do [ -d "$f" ] && roots+=("$f"); done < <(python3 -c \
			'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null)
	fi
	: >"$found"
	for n in libcublas.so.13 libcusparse.so.12 libnccl.so.2 libcudart.so.13; do
		f=$(find "${roots[@]}" -name "$n" -size +0 -not -path "$PWD/$D/*" 2>/dev/null | head -1)
		echo "$n: ${f:-missing}" >>"$found"
		[ -n "$f" ] && case ":$dirs:" in *":$(dirname "$f"):"*) ;; *) dirs="$dirs:$(dirname "$f")" ;; esac
	done
	echo "${dirs#:}"
}

NODEV_RE='no CUDA GPU on this machine|has no device here|no CUDA-capable device|CUDA driver version is insufficient|cudaErrorNoDevice|the CUDA runtime cannot start|no device \('

# Run "$@" with its output in $2, killed (its process group) after $1 seconds: its status, or 124.
run_limited() {
	local limit=$1 log=$2 t=0
	shift 2
	"$@" >"$log" 2>&1 </dev/null &
	local pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$t" -ge "$limit" ]; then
			kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
			sleep 2
			kill -KILL -- "-$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 124
		fi
		sleep 1
		t=$((t + 1))
	done
	wait "$pid"
}

# One line for a step's table row from its status and logs: "STATUS<TAB>summary".
judge() {
	local rc=$1 log=$2 f synth nodev last
	shift 2
	synth=$(grep -ho 'Tested: [0-9]* | Passing: [0-9]* | Failing: [0-9]* | Crashing: [0-9]*' "$log" "$@" 2>/dev/null | tail -1)
	nodev=$(grep -hE -m1 "$NODEV_RE" "$log" "$@" 2>/dev/null | head -1 | cut -c1-160)
	last=$(grep -hv '^\s*$' "$log" 2>/dev/null | tail -1 | cut -c1-160)
	local note
	note=$(grep -h -m1 '^note: ' "$log" 2>/dev/null | cut -c7-)
	synth="$synth${note:+ ($note)}"
	if [ "$rc" = 124 ]; then
		printf 'TIMEOUT\tkilled at its limit; last: %s' "$last"
	elif [ "$rc" = 0 ] && [ -n "$synth" ] && [ -n "$nodev" ]; then
		printf 'ok\t%s (cuda: no device: %s)' "$synth" "$nodev"
	elif [ "$rc" = 0 ]; then
		f=$(grep -h '^summary: ' "$log" 2>/dev/null | tail -1)
		if [ -z "$synth$f" ] && [ -n "$nodev" ]; then printf 'no device\t%s' "$nodev"; else printf 'ok\t%s' "${synth:-${f#summary: }}"; fi
	elif [ -n "$nodev" ]; then
		printf 'no device\t%s' "$nodev"
	else
		printf 'FAIL\texit %s: %s' "$rc" "${synth:-$last}"
	fi
}

# step NAME NEED LIMIT CMD...: CMD with its output in $LOGS/NN-NAME.log, unless fewer than
# NEED seconds are left before the deadline; LIMIT is capped by what is left. A row in $ROWS.
step() {
	local name=$1 need=$2 limit=$3
	shift 3
	STEP_N=$((STEP_N + 1))
	local tag="[$STAGE $STEP_N/$STEP_TOTAL] $name" log
	log=$(printf '%s/%02d-%s.log' "$LOGS" "$STEP_N" "$name")
	local left=$((DEADLINE - (SECONDS - T0) - 20)) # 20 s kept for the table and the archive
	if [ "$left" -lt "$need" ]; then
		printf '%s\tskipped\t0\tdeadline: %d s left, the step needs %d s\n' "$name" "$left" "$need" >>"$ROWS"
		echo "device-check: $tag: skipped (deadline: $left s left, needs $need s)" >&2
		return 0
	fi
	[ "$limit" -gt "$left" ] && limit=$left
	echo "device-check: $tag: started at $((SECONDS - T0)) s (limit $limit s)" >&2
	local t=$SECONDS rc=0 verdict
	run_limited "$limit" "$log" "$@" || rc=$?
	verdict=$(judge "$rc" "$log" ${STEP_FILES:-})
	printf '%s\t%s\t%d\t%s\n' "$name" "${verdict%%	*}" $((SECONDS - t)) "${verdict#*	}" >>"$ROWS"
	echo "device-check: $tag: ${verdict%%	*} in $((SECONDS - t)) s: ${verdict#*	}" >&2
	STEP_FILES=""
}

# Each binary starts (no library missing): burrow --version, the test binaries' usage.
check_start() {
	local b out bad=0
	"$B" --version || bad=1
	for b in "$T" "$BIN/dist_check" "$BIN/distmb_check"; do
		# burrow-tests --version; the MPI programs without arguments print their usage (an
		# argument would be the folder they write their data into)
		local arg=()
		[ "$b" = "$T" ] && arg=(--version)
		out=$(timeout 30 "$b" "${arg[@]}" 2>&1 </dev/null | head -20)
		if printf '%s' "$out" | grep -qE 'error while loading shared libraries|cannot open shared object'; then
			echo "$(basename "$b"): $out"
			bad=1
		fi
	done
	ldd "$B" "$T" "$BIN/dist_check" "$BIN/distmb_check" | grep 'not found' && bad=1
	[ "$bad" = 0 ] && echo "summary: burrow, burrow-tests, dist_check and distmb_check start ($("$B" --version 2>&1 | head -1))"
	return "$bad"
}

# The op tests (args: agg mode, and "memcheck" to run them under compute-sanitizer).
ops_tests() {
	local agg=$1 tool=${2:-} runner=()
	if [ "$tool" = memcheck ]; then
		local cs
		cs=$(command -v compute-sanitizer || find /usr/local/cuda*/bin /usr/local/cuda*/compute-sanitizer /opt \
			-name compute-sanitizer -type f 2>/dev/null | head -1)
		if [ -n "$cs" ]; then
			runner=("$cs" --tool memcheck --error-exitcode 9 --print-limit 20)
		else
			echo "note: no compute-sanitizer here: the op tests ran without memcheck"
		fi
	fi
	BURROW_CUDA_AGG=$agg BURROW_BIN="$B" BURROW_BUILD="$PWD/$D" "${runner[@]}" "$T" --filter 'ops/*' --jobs 1 --verbose 2>&1 |
		tee "$LOGS/ops-$agg.txt"
}

# Cora sage/gcn/mlp for $2 epochs on $3 (cpu, cuda: the CPU's sampler, cudags: the GPU's),
# logged as cora-$1-$3.jsonl; with a CPU log beside it, its losses against it.
cora_run() {
	local m=$1 epochs=$2 dev=$3 mode=(--model "$1") sd=()
	case "$dev" in
	cpu) sd=(--device cpu) ;;
	cuda) sd=(--device cuda --sampler-device cpu) ;;
	cudags) sd=(--device cuda --sampler-device cuda) ;;
	esac
	[ "$m" = sage-full ] && mode=(--full-graph --model sage) && sd=("${sd[@]:0:2}") # (no sampler)
	"$B" train "$W/cora" "${mode[@]}" --epochs "$epochs" --seed 7 --quiet "${sd[@]}" \
		--log "$LOGS/cora-$m-$dev.jsonl" >"$LOGS/cora-$m-$dev.txt" 2>&1
	local rc=$?
	cat "$LOGS/cora-$m-$dev.txt"
	[ "$rc" = 0 ] || return "$rc"
	[ "$dev" = cpu ] && echo "summary: losses $(losses "$LOGS/cora-$m-cpu.jsonl")" && return 0
	compare_losses "$LOGS/cora-$m-cpu.jsonl" "$LOGS/cora-$m-$dev.jsonl"
}

# Section 2: every model on cpu, then on cuda with the CPU's sampler (the model alone), then
# sage with the GPU's sampler: 5 epochs each; one summary line of every comparison.
cora_all() {
	local m d rc=0 line all=""
	for m in sage gcn mlp sage-full sage-gpu-sampler; do
		d="cpu cuda"
		[ "$m" = sage-gpu-sampler ] && d=cudags m=sage
		for d in $d; do
			line=$(cora_run "$m" 5 "$d" 2>&1) || rc=1
			printf '%s %s:\n%s\n' "$m" "$d" "$line"
			[ "$d" = cpu ] && continue
			line=$(printf '%s\n' "$line" | grep -E "^summary: |$NODEV_RE" | tail -1 | sed 's/^summary: //' | cut -c1-60)
			all="$all; $m/$d: ${line:-failed}"
		done
	done
	echo "summary: ${all#; }"
	return "$rc"
}

losses() { grep -o '"loss": *[-0-9.e+]*' "$1" 2>/dev/null | sed 's/.*: *//' | tr '\n' ' '; }

# Each epoch's loss within 1e-4 relative of the reference's, and the test accuracy within 0.5 point.
compare_losses() {
	command -v python3 >/dev/null || { echo "summary: no python3 to compare; losses $(losses "$2")"; return 0; }
	python3 - "$1" "$2" <<'PYEOF'
import json, sys
def rows(p):
    return [json.loads(l) for l in open(p) if l.strip()]
a, b = rows(sys.argv[1]), rows(sys.argv[2])
la, lb = [r["loss"] for r in a if "loss" in r and not r.get("final")], [r["loss"] for r in b if "loss" in r and not r.get("final")]
ta = next((r.get("test_acc") for r in a if r.get("final")), None)
tb = next((r.get("test_acc") for r in b if r.get("final")), None)
if not la or len(la) != len(lb):
    print("summary: %d epochs against the CPU's %d" % (len(lb), len(la)))
    sys.exit(1)
rel = max(abs(x - y) / max(abs(x), 1e-30) for x, y in zip(la, lb))
dacc = abs(ta - tb) if ta is not None and tb is not None else None
ok = rel <= 1e-4 and (dacc is None or dacc <= 0.005)
print("summary: loss max rel %.2e vs cpu, test %s vs %s%s" % (rel, tb, ta, "" if ok else " (target 1e-4, 0.5 point)"))
sys.exit(0 if ok else 1)
PYEOF
}

# Section 5: the sampler tests were smoke's; here its batches and speed on the R-MAT graph.
sampler_bench() {
	local ncpu
	ncpu=$(nproc)
	timeout 60 "$B" bench sample "$W/r22" --fanout 15,10,5 --device cuda --threads 8 --single --verify 20 \
		--seconds 3 --json >"$LOGS/sample-cuda.jsonl" 2>"$LOGS/sample-cuda.err"
	local rc=$?
	cat "$LOGS/sample-cuda.err"
	timeout 30 "$B" bench sample "$W/r22" --fanout 15,10,5 --threads "$ncpu" --single --producers \
		--seconds 3 --json >"$LOGS/sample-cpu-producers.jsonl" 2>"$LOGS/sample-cpu-producers.err"
	timeout 30 "$B" bench sample "$W/r22" --fanout 15,10,5 --threads "$ncpu" --single --omp \
		--seconds 3 --json >"$LOGS/sample-cpu-omp.jsonl" 2>"$LOGS/sample-cpu-omp.err"
	return "$rc"
}

bench_train() {
	local rc=0 dev
	for dev in cuda cpu; do
		timeout 120 "$B" bench train "$W/r22" --device "$dev" --cache 10% --max-batches 100 --json \
			>"$LOGS/bench-$dev.jsonl" 2>"$LOGS/bench-$dev.err" || rc=$?
		cat "$LOGS/bench-$dev.err"
	done
	return "$rc"
}

# Section 4: the plain pinned host-to-device copy through torch, where it is installed.
h2d() {
	if ! python3 -c 'import torch' 2>/dev/null; then
		echo "summary: not measured: no torch here"
		return 0
	fi
	python3 - >"$LOGS/h2d.json" <<'PYEOF'
import json, torch
if not torch.cuda.is_available():
    raise SystemExit("torch sees no CUDA-capable device")
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
	local rc=$?
	[ "$rc" = 0 ] && echo "summary: $(cat "$LOGS/h2d.json")"
	return "$rc"
}

# Print the steps' table (stderr and $OUT), write full's results, pack every log: the trap's
# work, whatever happened before.
finish() {
	local rc=$?
	trap - EXIT INT TERM
	local table="$OUT/device-check-$STAGE.txt" arch="$OUT/device-check-$STAGE-logs"
	{
		echo "== device-check $STAGE: $(date -u '+%Y-%m-%d %H:%M:%S') UTC, $((SECONDS - T0)) s of $DEADLINE s"
		[ -s "$W/gpu.txt" ] && echo "gpu: $(cat "$W/gpu.txt")"
		[ -s "$W/libs.txt" ] && echo "libraries: $(tr '\n' ';' <"$W/libs.txt" | sed 's/;$//; s/;/; /g')"
		if [ -s "$ROWS" ]; then
			awk -F'\t' '{ printf "%-22s %-9s %4ss  %s\n", $1, $2, $3, $4 }' "$ROWS"
		else
			echo "(no step ran)"
		fi
		[ "$STEP_N" -lt "$STEP_TOTAL" ] && echo "stopped after step $STEP_N of $STEP_TOTAL (exit $rc)"
	} >"$table" 2>&1
	if [ "$STAGE" = full ] && command -v python3 >/dev/null; then
		timeout 60 python3 tools/device-check-summary.py "$LOGS" "$OUT/device-check-full.json" 2>>"$table" ||
			echo "results: the summary failed (its error is in the logs)" >>"$table"
	fi
	cat "$table" >&2
	cp "$table" "$LOGS/"
	local how
	if command -v xz >/dev/null && tar -C "$W" -cf - logs | xz -T0 -6 >"$arch.tar.xz" 2>/dev/null; then
		how="$arch.tar.xz"
	elif rm -f "$arch.tar.xz" && command -v gzip >/dev/null && tar -C "$W" -czf "$arch.tar.gz" logs 2>/dev/null; then
		how="$arch.tar.gz"
	else
		rm -f "$arch.tar.gz"
		tar -C "$W" -cf "$arch.tar" logs
		how="$arch.tar"
	fi
	echo "device-check: $STAGE: the table in $table, every log in $how" >&2
	exit "$rc"
}

# Set up a stage: the pack unpacked, the libraries' folders, the trap, the deadline.
begin() {
	STAGE=$1 STEP_TOTAL=$2
	OUT=${OUT:-$PWD/build/device-out}
	W=${TMPDIR:-/tmp}/burrow-device-check-$STAGE
	LOGS=$W/logs ROWS=$W/rows.tsv STEP_N=0 STEP_FILES="" T0=$SECONDS
	DEADLINE=${DEVICE_CHECK_DEADLINE:-$3}
	rm -rf "$W"
	mkdir -p "$OUT" "$LOGS" || exit 1
	: >"$ROWS"
	trap finish EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	set -m # each step's command in a process group of its own, so that a limit ends all of it
	local u rc=0
	u=$(unpack 2>/dev/null) || rc=$?
	printf 'unpack\t%s\t%d\t%s\n' "$([ "$rc" = 0 ] && echo ok || echo FAIL)" $((SECONDS - T0)) "$u" >>"$ROWS"
	echo "device-check: [$STAGE] unpack: $u" >&2
	[ "$rc" = 0 ] || exit 1
	BIN="$PWD/$D/bin" B="$PWD/$D/bin/burrow" T="$PWD/$D/bin/burrow-tests"
	export LD_LIBRARY_PATH="$PWD/$D/lib:$(toolkit_dirs "$W/libs.txt")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	if command -v nvidia-smi >/dev/null; then
		nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1 >"$W/gpu.txt"
	else
		echo "no nvidia-smi on PATH" >"$W/gpu.txt"
	fi
	echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$W/gpu.txt"
}

smoke() {
	begin smoke 7 170
	step start 10 20 check_start
	step ops-memcheck 30 100 ops_tests cusparse memcheck
	step sampler-tests 15 45 env BURROW_BIN="$B" BURROW_BUILD="$PWD/$D" "$T" --filter 'sampler/backend_*' --jobs 2 --verbose
	step cora-prep 10 40 "$B" prep ogbn-cora --root "$D/data" --out "$W/cora"
	step cora-sage-cpu 10 40 cora_run sage 3 cpu
	step cora-sage-cuda 10 40 cora_run sage 3 cuda
	step cora-sage-cudags 10 40 cora_run sage 3 cudags
}

full() {
	begin full 11 540
	step start 10 20 check_start
	step cora-prep 10 40 "$B" prep ogbn-cora --root "$D/data" --out "$W/cora"
	step gen-rmat 20 150 "$B" gen rmat "$W/r22" --scale "${DEVICE_CHECK_SCALE:-22}" --feat-dim 128 --seed 1
	STEP_FILES="$LOGS/mb-why.txt"
	step minibatch 50 200 minibatch "$B" "$W" "$LOGS" "$T0" "$DEADLINE"
	STEP_FILES="$LOGS/staged-why.txt"
	step staged 60 200 staged "$B" "$W" "$LOGS" "$T0" "$DEADLINE"
	step sampler-bench 30 130 sampler_bench
	step ops-kernel 20 90 ops_tests kernel
	step cora 30 150 cora_all
	step bench-train 60 250 bench_train
	step h2d 20 40 h2d
	step ops-cusparse 20 90 ops_tests cusparse
}

case "${1:-}" in
prepare) prepare ;;
smoke) smoke ;;
full | run) full ;;
*)
	echo "usage: tools/device-check.sh prepare|smoke|full (see the comment at its top, and docs/cuda.md)" >&2
	exit 2
	;;
esac
