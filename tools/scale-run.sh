#!/usr/bin/env bash
# scale-run.sh: the papers100M-shaped pipeline at a fraction of its size, one phase per
# process so each phase's peak RSS and I/O are its own: gen -> info --verify -> train one
# epoch -> eval (sampled neighborhoods of the split nodes, fanouts 15,10,5) -> partition
# --parts 4, then DIR/scale.json. See docs/scale.md.
# Usage: tools/scale-run.sh FRACTION DIR   (FRACTION: 0.015625, 1/64, ...; DIR: scratch)
# Environment: BURROW (binary, default build/burrow), SCALE_MEM (the --mem of gen, eval and
# partition, default 12G), SCALE_PARTITION=0 (skip the partition), SCALE_KEEP=1 (keep the
# dataset), SCALE_THREADS (--threads of every phase, default: all), SCALE_BENCH=1 (also run
# burrow bench train on the epoch: its split epoch / max(T_mem, T_io)), SCALE_LAYERWISE=1
# (also evaluate by layer-wise inference over all nodes: 2 x N x 1 KiB of memory or scratch,
# 228 GB at full size; default on up to 1/16), SCALE_PROGRESS (seconds between the progress
# lines each phase writes to logs/NAME.err, default 60), SCALE_PHASES (the phases to run, default
# "gen verify train eval partition"; eval_layerwise and bench follow SCALE_LAYERWISE and
# SCALE_BENCH, and need train).
set -euo pipefail
if [ $# -ne 2 ]; then
	echo "usage: tools/scale-run.sh FRACTION DIR" >&2
	exit 2
fi
burrow=${BURROW:-build/burrow}
mem=${SCALE_MEM:-12G}
frac=$(python3 -c "from fractions import Fraction as F; import sys; print(float(F(sys.argv[1])))" "$1") || {
	echo "scale-run.sh: FRACTION must be a number or a ratio like 1/64, got '$1'" >&2
	exit 2
}
dir=$2
data=$dir/data
mkdir -p "$dir/logs"
# progress lines in logs/NAME.err (no terminal there): every SCALE_PROGRESS seconds
export BURROW_PROGRESS=${SCALE_PROGRESS:-60}
threads=()
[ -n "${SCALE_THREADS:-}" ] && threads=(--threads "$SCALE_THREADS")
[ -x /usr/bin/time ] || { echo "scale-run.sh: needs /usr/bin/time (GNU time) for peak RSS" >&2; exit 1; }

# run NAME CMD...: the command under GNU time -v; its output in logs/NAME.out, time's in
# logs/NAME.time. Peak RSS counts the pages of mapped files too (the graph is mapped): a
# poll of /proc/PID/status every second keeps the largest RssAnon (memory only this process
# holds) and RssFile (page cache, reclaimable) seen, in logs/NAME.rss
run() {
	local name=$1
	shift
	echo "== $name: $*" >&2
	/usr/bin/time -v -o "$dir/logs/$name.time" "$@" >"$dir/logs/$name.out" 2>"$dir/logs/$name.err" &
	local tpid=$! pid="" anon=0 file=0 a f
	while kill -0 "$tpid" 2>/dev/null; do
		[ -n "$pid" ] || pid=$(pgrep -P "$tpid" | head -1 || true)
		if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
			a=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
			f=$(awk '/^RssFile:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
			[ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
			[ -n "$f" ] && [ "$f" -gt "$file" ] && file=$f
		fi
		sleep 1
	done
	echo "$anon $file" >"$dir/logs/$name.rss"
	wait "$tpid" || {
		echo "scale-run.sh: phase $name failed; see $dir/logs/$name.err" >&2
		tail -5 "$dir/logs/$name.err" >&2
		exit 1
	}
	grep -E "Elapsed|Maximum resident" "$dir/logs/$name.time" | sed 's/^\t*/   /' >&2
}

phases=" ${SCALE_PHASES:-gen verify train eval partition} "
want() { [[ "$phases" == *" $1 "* ]]; }

uptime >"$dir/logs/uptime.before"
want gen && run gen "$burrow" gen papers "$data" --fraction "$frac" --mem "$mem" --tmp-dir "$dir" --force "${threads[@]}"
want verify && run verify "$burrow" info "$data" --verify
if want train; then
rm -rf "$dir/ckpt"
run train "$burrow" train "$data" --model sage --layers 3 --fanout 15,10,5 --batch 1024 --epochs 1 --eval-every 0 \
	--checkpoint "$dir/ckpt" --log "$dir/logs/train.jsonl" "${threads[@]}"
fi
want eval && run eval "$burrow" eval "$data" --checkpoint "$dir/ckpt/last.ckpt" --eval-fanout 15,10,5 --batch 1024 --json \
	"${threads[@]}"
want train || layerwise=0
layerwise=${layerwise:-${SCALE_LAYERWISE:-$(python3 -c "print(1 if $frac <= 1 / 16 else 0)")}}
if [ "$layerwise" = 1 ]; then
	run eval_layerwise "$burrow" eval "$data" --checkpoint "$dir/ckpt/last.ckpt" --mem "$mem" --scratch "$dir" --json \
		"${threads[@]}"
fi
data_bytes=$(du -sb "$data" | cut -f1)
if [ "${SCALE_BENCH:-0}" = 1 ]; then
	# the full-size default cache is a quarter of 24 GB over 28.4 GB of features: about 21%
	run bench "$burrow" bench train "$data" --model sage --layers 3 --fanout 15,10,5 --batch 1024 --max-batches 1000000 \
		--cache 21% --json "${threads[@]}"
fi
if [ "${SCALE_PARTITION:-1}" = 1 ] && want partition; then
	run partition "$burrow" partition "$data" --parts 4 --mem "$mem" --out "$dir/parts-4" --force --json \
		"${threads[@]}"
fi
uptime >"$dir/logs/uptime.after"
disk_bytes=$(du -sb "$dir" | cut -f1)

python3 - "$dir" "$frac" "$data_bytes" "$disk_bytes" "$mem" <<'EOF'
import json, os, platform, re, sys
d, frac, data_bytes, disk_bytes, mem = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]

def phase(name):
    p = os.path.join(d, "logs", name + ".time")
    if not os.path.exists(p):
        return None
    t = open(p).read()
    def num(key):
        return int(re.search(re.escape(key) + r": (\d+)", t).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", t).group(1).split(":")
    secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    # GNU time's file system inputs/outputs are the kernel's block I/O counts (512-byte units):
    # what reached the disk, not what the page cache served
    anon = fil = None
    rp = os.path.join(d, "logs", name + ".rss")
    if os.path.exists(rp):
        anon, fil = (int(x) * 1024 for x in open(rp).read().split())
    return {"seconds": round(secs, 2), "peak_rss_bytes": num("Maximum resident set size (kbytes)") * 1024,
            "polled_peak_rss_anon_bytes": anon, "polled_peak_rss_file_bytes": fil,
            "bytes_read": num("File system inputs") * 512, "bytes_written": num("File system outputs") * 512,
            "user_seconds": float(re.search(r"User time \(seconds\): ([\d.]+)", t).group(1)),
            "system_seconds": float(re.search(r"System time \(seconds\): ([\d.]+)", t).group(1))}

def jsonl_last(name):
    p = os.path.join(d, "logs", name)
    if not os.path.exists(p):
        return None
    lines = [json.loads(x) for x in open(p) if x.strip()]
    return lines

meta = json.load(open(os.path.join(d, "data", "meta.json")))
out = {"fraction": frac, "phases": {}, "disk_bytes": disk_bytes, "dataset_bytes": data_bytes,
       "num_nodes": meta["num_nodes"], "num_edges": meta["num_edges"], "feat_dim": meta["feat_dim"],
       "feat_dtype": meta["feat_dtype"], "num_classes": meta["num_classes"], "splits": meta["splits"],
       "mem_budget": mem, "machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
       "mem_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")},
       "load_before": open(os.path.join(d, "logs", "uptime.before")).read().strip(),
       "load_after": open(os.path.join(d, "logs", "uptime.after")).read().strip()}
for name in ("gen", "verify", "train", "eval", "eval_layerwise", "bench", "partition"):
    p = phase(name)
    if p is not None:
        out["phases"][name] = p
log = jsonl_last("train.jsonl")
if log:
    out["train_log"] = next((x for x in log if "epoch" in x), None)  # the first epoch (after the config line)
    out["train_config"] = next((x["config"] for x in log if "config" in x), None)
for name, key in (("eval", "eval_result"), ("eval_layerwise", "eval_layerwise_result"), ("bench", "bench_train"),
                  ("partition", "partition_result")):
    try:  # bench train prints one line per run, then its summary: keep the last
        out[key] = json.loads(open(os.path.join(d, "logs", name + ".out")).read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        pass
out["chance_accuracy"] = 1.0 / meta["num_classes"]
json.dump(out, open(os.path.join(d, "scale.json"), "w"), indent=1)
print(json.dumps({k: out[k] for k in ("fraction", "phases")}, indent=1))
EOF
[ "${SCALE_KEEP:-0}" = 1 ] || rm -rf "$data" "$dir/parts-4" "$dir/ckpt"
echo "scale-run.sh: wrote $dir/scale.json" >&2
