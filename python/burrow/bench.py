"""python -m burrow.bench DIR: the data loader loop (sample a batch, gather its input rows,
release) driven from Python against the same loop driven from C (burrow bench loader), run
interleaved --repeat times; prints each run, the medians and Python's rate / C's rate."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

import burrow


def python_run(ds, fanouts, batch, max_batches, engine, seed):
    """The loop of tools/bench_loader.c, from Python: (batches, rows, seconds)."""
    store = burrow.FeatureStore(ds, engine=engine)
    sampler = burrow.Sampler(ds, fanouts=fanouts, batch_size=batch, seed=seed)
    buf = np.empty((0, store.dim), dtype=np.float32)
    batches = rows = 0
    t0 = time.perf_counter()
    for b in sampler.epoch(0):
        n = len(b.input_ids)
        if n > len(buf):
            buf = np.empty((2 * n, store.dim), dtype=np.float32)
        store.gather(b.input_ids, out=buf)
        rows += n
        batches += 1
        del b
        if batches == max_batches:
            break
    secs = time.perf_counter() - t0
    sampler.close()
    store.close()
    return batches, rows, secs


def c_run(burrow_bin, path, fanouts, batch, max_batches, engine, seed):
    out = subprocess.run([burrow_bin, "bench", "loader", path, "--fanout", ",".join(map(str, fanouts)),
                          "--batch", str(batch), "--max-batches", str(max_batches), "--engine", engine,
                          "--seed", str(seed)], check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    return r["batches"], r["rows"], r["seconds"]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m burrow.bench", description=__doc__.splitlines()[0])
    ap.add_argument("dataset")
    ap.add_argument("--fanout", default="15,10,5", help="input layer first (15,10,5)")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--max-batches", type=int, default=50)
    ap.add_argument("--engine", default="uring")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--burrow", default=os.environ.get("BURROW_BIN") or shutil.which("burrow"),
                    help="the burrow command ($BURROW_BIN, else burrow on PATH)")
    a = ap.parse_args(argv)
    if not a.burrow:
        sys.exit("burrow.bench: no burrow command: pass --burrow or set BURROW_BIN")
    fanouts = [int(x) for x in a.fanout.split(",")]
    ds = burrow.Dataset(a.dataset)
    args = (fanouts, a.batch, a.max_batches, a.engine, a.seed)
    rate = {"c": [], "python": []}
    print("run  driver   batches       rows  seconds     rows/s")
    for r in range(a.repeat):
        order = ("c", "python") if r % 2 == 0 else ("python", "c")  # interleaved, alternating first
        for who in order:
            b, n, s = c_run(a.burrow, a.dataset, *args) if who == "c" else python_run(ds, *args)
            rate[who].append(n / s)
            print("%3d  %-7s %8d %10d %8.3f %10.0f" % (r, who, b, n, s, n / s), flush=True)
    mc, mp = statistics.median(rate["c"]), statistics.median(rate["python"])
    print("median rows/s: C %.0f, Python %.0f; Python / C = %.3f" % (mc, mp, mp / mc))
    print("load average: %.2f %.2f %.2f" % os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())
