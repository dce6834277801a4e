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
#   4. the plain pinned host-to-device copy rate (torch, if present) beside the pipeline's.
# DEVICE_CHECK_SCALE=S replaces the R-MAT scale (a dry run of the script on a CPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."
D=build/device

prepare() {
	make -j2 CUDA=1 all build/tests/burrow-tests
	rm -rf "$D"
	mkdir -p "$D/bin" "$D/lib" "$D/data"
	cp build/burrow build/tests/burrow-tests "$D/bin/"
	local l
	for b in "$D"/bin/*; do ldd "$b"; done | awk '$3 ~ /^\// { print $3 }' | sort -u | while read -r l; do
		case "$(basename "$l")" in
		libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | libresolv.so* | ld-linux* | libstdc++.so* | libgcc_s.so*) continue ;;
		esac
		case "$l" in /usr/local/cuda*) continue ;; esac
		cp -L "$l" "$D/lib/"
	done
	local ds=${BURROW_DATASETS:-../shared/datasets}
	cp "$ds/ogbn-cora.zip" "$D/data/"
	mkdir -p build/device-pack
	tar -C build -cf - device | xz -T0 -6 >build/device-pack/device.tar.xz
	echo "device-check: prepared $D ($(du -sh "$D" | cut -f1), packed in build/device-pack:" \
		"$(du -sh build/device-pack | cut -f1)); carry build/device-pack and run: tools/device-check.sh run"
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
	local j="$out/device-check.json"
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
