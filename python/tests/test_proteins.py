"""burrow prep of a tiny ogbn-proteins written in OGB's zip layout, against a numpy reading of its CSVs:
the symmetrized CSR, each edge's features at both its entries (the first of repeated edges kept), the
112-column labels as int8 [N, T], the species split, and node features reduced from the edge features."""
import gzip
import io
import json
import os
import subprocess
import zipfile

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("BURROW_BIN", os.path.join(ROOT, "build", "burrow"))
N, T, DE = 23, 112, 8


def _csv(a, fmt):
    buf = io.StringIO()
    np.savetxt(buf, a, fmt=fmt, delimiter=",")
    return gzip.compress(buf.getvalue().encode())


def _write_zip(path, rng):
    """proteins.zip as OGB lays it out: proteins/raw/*.csv.gz and proteins/split/species/*.csv.gz."""
    m = 90
    e = rng.integers(0, N, size=(m, 2))
    e[5] = [4, 4]                        # a self-loop: dropped with its features
    e[20] = e[3]                          # a repeat: the first keeps its features
    e[30] = e[7][::-1]                    # a reverse repeat: the same undirected edge
    ef = np.round(rng.random((m, DE)), 3)
    y = (rng.random((N, T)) < 0.3).astype(np.int64)
    species = rng.choice([3702, 4932, 6239], size=N)
    perm = rng.permutation(N)
    split = {"train": np.sort(perm[:12]), "valid": np.sort(perm[12:17]), "test": np.sort(perm[17:])}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("proteins/raw/edge.csv.gz", _csv(e, "%d"))
        z.writestr("proteins/raw/edge-feat.csv.gz", _csv(ef, "%.3f"))
        z.writestr("proteins/raw/node-label.csv.gz", _csv(y, "%d"))
        z.writestr("proteins/raw/node_species.csv.gz", _csv(species[:, None], "%d"))
        z.writestr("proteins/raw/num-node-list.csv.gz", gzip.compress(b"%d\n" % N))
        z.writestr("proteins/raw/num-edge-list.csv.gz", gzip.compress(b"%d\n" % m))
        for k, v in split.items():
            z.writestr("proteins/split/species/%s.csv.gz" % k, _csv(v[:, None], "%d"))
        z.writestr("proteins/RELEASE_v1.txt", b"# Release note for ogbn-proteins\n")


def _reference(zip_path):
    """The expected arrays, from the CSVs read back with numpy."""
    def read(member, dtype):
        with zipfile.ZipFile(zip_path) as z:
            return np.loadtxt(io.BytesIO(gzip.decompress(z.read(member))), delimiter=",", dtype=dtype, ndmin=2)
    e = read("proteins/raw/edge.csv.gz", np.int64)
    ef = read("proteins/raw/edge-feat.csv.gz", np.float32)
    eid = np.arange(len(e))
    src = np.concatenate([e[:, 0], e[:, 1]])
    dst = np.concatenate([e[:, 1], e[:, 0]])
    ids = np.concatenate([eid, eid])
    keep = src != dst
    src, dst, ids = src[keep], dst[keep], ids[keep]
    order = np.lexsort((ids, dst, src))   # by src, then dst, then input position
    src, dst, ids = src[order], dst[order], ids[order]
    first = np.ones(len(src), bool)
    first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    src, dst, ids = src[first], dst[first], ids[first]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=N))])
    return {"indptr": indptr, "indices": dst, "edge_features": ef[ids],
            "labels": read("proteins/raw/node-label.csv.gz", np.int64).astype(np.int8),
            "split": {k: read("proteins/split/species/%s.csv.gz" % k, np.int64)[:, 0]
                      for k in ("train", "valid", "test")}}


@pytest.mark.parametrize("mem", ["0", "4K"])
def test_proteins_zip_preps_to_the_csvs(tmp_path, mem):
    z = tmp_path / "proteins.zip"
    _write_zip(z, np.random.default_rng(11))
    out = tmp_path / "ogbn-proteins"
    cmd = [BIN, "prep", str(z), "--out", str(out), "--no-download", "--quiet", "--node-features-from-edges", "mean"]
    if mem != "0":
        cmd += ["--mem", mem]                # spills the edge keys (with their edge ids) in runs
    subprocess.run(cmd, check=True, capture_output=True)
    ref = _reference(z)
    meta = json.load(open(out / "meta.json"))
    assert meta["num_tasks"] == T and meta["num_classes"] == 0 and meta["symmetric"]
    assert meta["edge_feat_dim"] == DE and meta["edge_feat_dtype"] == "float32"
    np.testing.assert_array_equal(np.load(out / "indptr.npy"), ref["indptr"])
    np.testing.assert_array_equal(np.load(out / "indices.npy"), ref["indices"])
    ef = np.load(out / "edge_features.npy")
    np.testing.assert_array_equal(ef, ref["edge_features"])
    with open(out / "edge_features.npy", "rb") as f:
        f.seek(4096)
        assert np.array_equal(np.frombuffer(f.read(), np.float32).reshape(-1, DE), ef), "data at byte 4096"
    y = np.load(out / "labels.npy")
    assert y.dtype == np.int8 and y.shape == (N, T)
    np.testing.assert_array_equal(y, ref["labels"])
    for k, v in ref["split"].items():
        np.testing.assert_array_equal(np.load(out / "split" / ("%s.npy" % k)), v)
    # node features: the mean of each node's entries' features (0 without entries)
    ip = ref["indptr"]
    want = np.stack([ref["edge_features"][ip[v]:ip[v + 1]].mean(0) if ip[v + 1] > ip[v] else np.zeros(DE, np.float32)
                     for v in range(N)])
    np.testing.assert_allclose(np.load(out / "features.npy"), want, rtol=1e-6)
    r = subprocess.run([BIN, "info", str(out), "--verify"], check=True, capture_output=True, text=True)
    assert "edge features finite" in r.stdout
