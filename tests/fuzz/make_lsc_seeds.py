#!/usr/bin/env python3
"""make_lsc_seeds.py [BURROW]: the seed corpora of fuzz_lsc (tests/fuzz/corpus/lsc: tiny MAG240M and
IGBH processed/ trees, packed) and the in-place seed of fuzz_dataset (corpus/dataset/typed-in-place:
a typed dataset whose papers' features are named by a relative "features" path), written with numpy
and torch.save (run with build/venv/bin/python)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pack  # noqa: E402


def _pack(src, out):
    sys.argv = ["pack.py", src, out]
    pack.main()


def _edges(rng, ns, nd, e, rows):
    ei = np.stack([rng.integers(0, ns, e), rng.integers(0, nd, e)]).astype(np.int64)
    return np.ascontiguousarray(ei if rows else ei.T)


def mag(d, rng):
    p = os.path.join(d, "processed")
    for s, r, t, ns, nd in (("author", "writes", "paper", 6, 5), ("author", "affiliated_with", "institution", 6, 2),
                            ("paper", "cites", "paper", 5, 5)):
        os.makedirs(os.path.join(p, f"{s}___{r}___{t}"))
        np.save(os.path.join(p, f"{s}___{r}___{t}", "edge_index.npy"), _edges(rng, ns, nd, 7, True))
    os.makedirs(os.path.join(p, "paper"))
    np.save(os.path.join(p, "paper", "node_feat.npy"), rng.standard_normal((5, 4)).astype(np.float16))
    np.save(os.path.join(p, "paper", "node_label.npy"), np.array([0, 2, np.nan, 1, 0], dtype=np.float32))
    torch.save({"paper": 5, "author": 6, "institution": 2, "num_classes": 3}, os.path.join(d, "meta.pt"))
    torch.save({"train": torch.tensor([0, 1]), "valid": torch.tensor([3]), "test": torch.tensor([2, 4])},
               os.path.join(d, "split_dict.pt"))
    open(os.path.join(d, "layout"), "w").write("m")


def igbh(d, rng):
    p = os.path.join(d, "processed")
    n = {"paper": 6, "author": 4, "institute": 2, "fos": 3}
    for t, k in n.items():
        os.makedirs(os.path.join(p, t))
        np.save(os.path.join(p, t, "node_feat.npy"), rng.standard_normal((k, 3)).astype(np.float32))
    np.save(os.path.join(p, "paper", "node_label_19.npy"), rng.integers(0, 19, 6).astype(np.float32))
    for s, r, t in (("paper", "cites", "paper"), ("paper", "written_by", "author"),
                    ("author", "affiliated_to", "institute"), ("paper", "topic", "fos")):
        os.makedirs(os.path.join(p, f"{s}__{r}__{t}"))
        np.save(os.path.join(p, f"{s}__{r}__{t}", "edge_index.npy"), _edges(rng, n[s], n[t], 5, False))
    open(os.path.join(d, "layout"), "w").write("i")


def igbh_raw(d, rng):
    """IGB large's / full's layout: node_feat.npy and the labels raw float32, no .npy header."""
    p = os.path.join(d, "processed")
    n = {"paper": 3, "author": 2, "institute": 1, "fos": 1}
    for t, k in n.items():
        os.makedirs(os.path.join(p, t))
        open(os.path.join(p, t, "node_feat.npy"), "wb").write(rng.standard_normal((k, 1024)).astype(np.float32).tobytes())
    open(os.path.join(p, "paper", "node_label_19.npy"), "wb").write(np.array([1, np.nan, 18], dtype=np.float32).tobytes())
    for s, r, t in (("paper", "cites", "paper"), ("paper", "written_by", "author"),
                    ("author", "affiliated_to", "institute"), ("paper", "topic", "fos")):
        os.makedirs(os.path.join(p, f"{s}__{r}__{t}"))
        np.save(os.path.join(p, f"{s}__{r}__{t}", "edge_index.npy"), _edges(rng, n[s], n[t], 3, False))
    open(os.path.join(d, "layout"), "w").write("i")


def raw_seeds(burrow, rng):
    """corpus/lsc/igbh-raw and corpus/dataset/typed-in-place-raw (a "header": false features path)."""
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "igbh")
        igbh_raw(d, rng)
        _pack(d, os.path.join(HERE, "corpus", "lsc", "igbh-raw"))
        out = os.path.join(tmp, "ds")
        subprocess.run([burrow, "prep", "igbh", d, "--out", out, "--quiet"], check=True)
        os.makedirs(os.path.join(out, "ext"))
        shutil.copy(os.path.join(d, "processed", "fos", "node_feat.npy"), os.path.join(out, "ext", "fos.raw"))
        meta = json.load(open(os.path.join(out, "meta.json")))
        for t in meta["node_types"]:
            if t["name"] == "fos":
                t["features"]["path"] = "ext/fos.raw"
        meta["source"] = {}
        json.dump(meta, open(os.path.join(out, "meta.json"), "w"), indent=1)
        _pack(out, os.path.join(HERE, "corpus", "dataset", "typed-in-place-raw"))


def main():
    burrow = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "build", "burrow")
    rng = np.random.default_rng(0)
    corpus = os.path.join(HERE, "corpus", "lsc")
    os.makedirs(corpus, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in (("mag240m", mag), ("igbh", igbh)):
            d = os.path.join(tmp, name)
            make(d, rng)
            _pack(d, os.path.join(corpus, name))
        out = os.path.join(tmp, "ds")
        subprocess.run([burrow, "prep", "mag240m", os.path.join(tmp, "mag240m"), "--out", out, "--fill", "none",
                        "--quiet"], check=True)
        os.makedirs(os.path.join(out, "ext"))
        shutil.copy(os.path.join(tmp, "mag240m", "processed", "paper", "node_feat.npy"),
                    os.path.join(out, "ext", "paper.npy"))
        meta = json.load(open(os.path.join(out, "meta.json")))
        meta["node_types"][2]["features"]["path"] = "ext/paper.npy"
        meta["source"] = {}
        json.dump(meta, open(os.path.join(out, "meta.json"), "w"), indent=1)
        _pack(out, os.path.join(HERE, "corpus", "dataset", "typed-in-place"))
    raw_seeds(burrow, rng)


if __name__ == "__main__":
    main()
