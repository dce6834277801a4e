#!/usr/bin/env python3
"""tools/device-check-summary.py: the device check's results from its logs (tools/device-check.sh
calls it when a stage ends, whatever happened): OUT/device-check-STAGE.json and the detailed
table on stderr. Usage: device-check-summary.py LOGS JSON. A log that is absent is a "not run"."""
import json, os, re, sys
out, json_path = sys.argv[1], sys.argv[2]
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
# the model on the GPU with the CPU's sampler (the model alone), then sage with the GPU's too
for m, gpu in (("sage", "cuda"), ("gcn", "cuda"), ("mlp", "cuda"), ("sage-full", "cuda"), ("sage-gpu-sampler", "cudags")):
    base = "sage" if m == "sage-gpu-sampler" else m
    c, g = log(os.path.join(out, "cora-%s-cpu.jsonl" % base)), log(os.path.join(out, "cora-%s-%s.jsonl" % (base, gpu)))
    if c is None and g is None:
        continue  # not run in this stage
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
    rows = [r for r in (jsonl(os.path.join(out, "mb-sampler-%s.jsonl" % s)) or []) if "epoch" in r]
    ep[s] = rows[0] if rows else None
if ep["cuda"] and ep["cpu"]:
    rel = abs(ep["cuda"]["loss"] - ep["cpu"]["loss"]) / max(abs(ep["cpu"]["loss"]), 1e-30)
    mb["single"] = {"loss_rel": rel, "ok": rel <= 1e-4, "batches": ep["cuda"]["batches"],
                    "epoch_s": {s: ep[s]["epoch_s"] for s in ep}, "sample_s": {s: ep[s]["sample_s"] for s in ep}}
else:
    mb["single"] = {"ok": False, "why": why_lines(os.path.join(out, "mb-why.txt"), "single") or ["not run"]}
dev = os.environ.get("DEVICE_CHECK_MB_DEVICE", "cuda")
dg = [r for r in (jsonl(os.path.join(out, "mb-dist-%s.jsonl" % dev)) or []) if "epoch" in r]
dc = [r for r in (jsonl(os.path.join(out, "mb-dist-cpu-mpi.jsonl")) or []) if "epoch" in r]
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
dr = {s: [r for r in (jsonl(os.path.join(out, "mb-draws-%s.jsonl" % s)) or []) if "epoch" in r] for s in ("cuda", "cpu")}
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
with open(json_path, "w") as f:
    json.dump(res, f, indent=1)

# the table, last
print("\n== device-check: results", file=sys.stderr)
for a, s in res["ops"].items():
    print("ops (%-8s) %s" % (a, s if s is None or "error" in s else
          "%d/%d passing, %d failing, %d crashing, %s skipped" % (s["passing"], s["tested"], s["failing"], s["crashing"], s["skipped"])), file=sys.stderr)
for m, c in cora.items():
    if "max_rel_loss" in c:
        print("cora %-9s loss max rel %.2e  test cpu %.4f cuda %.4f  %s" % (m, c["max_rel_loss"], c["test_cpu"], c["test_cuda"],
              "ok" if c["ok"] else "FAIL"), file=sys.stderr)
    else:
        why = ""
        for dev in ("cudags" if m == "sage-gpu-sampler" else "cuda", "cpu"):
            try:
                t = open(os.path.join(out, "cora-%s-%s.txt" % ("sage" if m == "sage-gpu-sampler" else m, dev))).read().strip().splitlines()
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
if t is not None:  # (smoke runs them)
    print("sampler tests (cuda vs cpu) %s" % (t if "error" in t else "%d/%d passing, %d failing, %d crashing, %s skipped"
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
