"""burrow prep mag240m|igbh (issue 32): tiny OGB-LSC MAG240M and IGBH processed/ trees written with
numpy and torch.save, prepped by the binary; every relation's CSR must equal a numpy build from
edge_index.npy, labels and splits numpy's reading of the files, the filled authors and institutions
numpy's means within float16 rounding; the paper features are named in place (no feature bytes
written: the output's size against its graph arrays), and training reads the original file (a
row corrupted after prep is what the store gathers)."""
import io
import json
import os
import subprocess

import numpy as np
import pytest

import burrow
from conftest import ROOT

torch = pytest.importorskip("torch", reason="torch is needed to write OGB-LSC's meta.pt and split_dict.pt")
BIN = os.environ.get("BURROW_BIN", os.path.join(ROOT, "build", "burrow"))


def _run(*args, check=True):
    r = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def _distinct(rng, ns, nd, e):
    pairs = set()
    while len(pairs) < e:
        pairs.add((int(rng.integers(0, ns)), int(rng.integers(0, nd))))
    return np.ascontiguousarray(np.array(sorted(pairs), dtype=np.int64).T)  # [2, E]


def _mag(root, rng, n=(60, 7, 50), d=16):
    """processed/ as OGB-LSC lays it out: N authors, institutions, papers."""
    na, ni, npap = n
    proc = root / "processed"
    (proc / "paper").mkdir(parents=True)
    x = rng.standard_normal((npap, d)).astype(np.float16)
    np.save(proc / "paper" / "node_feat.npy", x)
    y = rng.integers(0, 5, npap).astype(np.float32)
    y[rng.random(npap) < 0.2] = np.nan
    np.save(proc / "paper" / "node_label.npy", y)
    np.save(proc / "paper" / "node_year.npy", rng.integers(1990, 2021, npap).astype(np.int64))
    rels = {("author", "writes", "paper"): _distinct(rng, na, npap, 150),
            ("author", "affiliated_with", "institution"): _distinct(rng, na, ni, 40),
            ("paper", "cites", "paper"): _distinct(rng, npap, npap, 120)}
    for (s, r, t), ei in rels.items():
        (proc / f"{s}___{r}___{t}").mkdir()
        np.save(proc / f"{s}___{r}___{t}" / "edge_index.npy", ei)
    torch.save({"paper": npap, "author": na, "institution": ni, "num_classes": 5}, root / "meta.pt")
    perm = rng.permutation(npap)
    # as OGB-LSC ships it: torch.save of a dict of numpy arrays (protocol 2, zip)
    split = {"train": perm[:25], "valid": perm[25:32], "test": perm[32:47]}
    torch.save(split, root / "split_dict.pt")
    return x, y, rels, split


def _save_split(path, split, fmt):
    """split_dict.pt in one of the forms torch.save writes: numpy arrays (protocols 2, 4, the
    legacy stream, numpy >= 2's module names) or tensors."""
    if fmt == "tensor":
        torch.save({k: torch.from_numpy(v) for k, v in split.items()}, path)
    elif fmt == "legacy":
        torch.save(split, path, _use_new_zipfile_serialization=False)
    elif fmt == "p4":
        torch.save(split, path, pickle_protocol=4)
    else:
        torch.save(split, path)
        if fmt == "numpy2":  # numpy >= 2 pickles numpy._core.multiarray._reconstruct
            import zipfile
            zi = zipfile.ZipFile(path)
            parts = {e: zi.read(e) for e in zi.namelist()}
            zi.close()
            with zipfile.ZipFile(path, "w") as zo:
                for e, b in parts.items():
                    zo.writestr(e, b.replace(b"numpy.core.multiarray", b"numpy._core.multiarray"))


def _csr(src, dst, nd):
    """Rows dst, sorted distinct src ids: the format's by-destination CSR."""
    pairs = sorted(set(zip(dst.tolist(), src.tolist())))
    indptr = np.zeros(nd + 1, dtype=np.int64)
    for v, _ in pairs:
        indptr[v + 1] += 1
    return np.cumsum(indptr), np.array([u for _, u in pairs], dtype=np.int64)


def _check_relations(out, rels, counts):
    for (s, r, t), ei in rels.items():
        rd = out / "relations" / f"{s}___{r}___{t}"
        ip, ix = _csr(ei[0], ei[1], counts[t])
        assert np.array_equal(np.load(rd / "indptr.npy"), ip), (s, r, t)
        assert np.array_equal(np.load(rd / "indices.npy").astype(np.int64), ix), (s, r, t)


def _mean(src_rows, ei, n, fwd):
    """Each node's mean over its distinct neighbors (fwd: ei[1] are they, ei[0] the neighbors)."""
    acc = np.zeros((n, src_rows.shape[1]), dtype=np.float64)
    cnt = np.zeros(n)
    for a, b in set(zip(ei[0].tolist(), ei[1].tolist())):
        v, u = (b, a) if fwd else (a, b)
        acc[v] += src_rows[u].astype(np.float64)
        cnt[v] += 1
    return np.where(cnt[:, None] > 0, acc / np.maximum(cnt, 1)[:, None], 0)


def test_mag240m_in_place(tmp_path):
    rng = np.random.default_rng(7)
    src = tmp_path / "mag240m_kddcup2021"
    x, y, rels, split = _mag(src, rng)
    out = tmp_path / "out"
    _run("prep", "mag240m", src, "--out", out, "--mem", "2M", "--quiet")
    meta = json.loads((out / "meta.json").read_text())
    types = {t["name"]: t for t in meta["node_types"]}
    assert [t["name"] for t in meta["node_types"]] == ["author", "institution", "paper"]
    feat_path = str(src.resolve() / "processed" / "paper" / "node_feat.npy")
    assert types["paper"]["features"]["path"] == feat_path and types["paper"]["feat_dtype"] == "float16"
    counts = {"author": 60, "institution": 7, "paper": 50}
    _check_relations(out, rels, counts)
    lab = np.load(out / "labels.npy")
    assert np.array_equal(lab, np.where(np.isnan(y), -1, y).astype(np.int32))
    assert meta["num_classes"] == 5
    test_dev = split["test"][np.arange(15) % 5 < 3]
    for name, want in (("train", split["train"]), ("valid", split["valid"]), ("test", test_dev)):
        assert np.array_equal(np.load(out / "split" / f"{name}.npy"), want), name
    # no feature bytes of the papers: the output is its graph, labels, splits and the filled types
    assert not (out / "features" / "paper.npy").exists()
    filled = sum((out / "features" / f"{t}.npy").stat().st_size for t in ("author", "institution"))
    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    assert total - filled < 64 * 1024 + x.nbytes // 4, (total, filled)
    # authors: mean of the papers they write; institutions: mean of their (filled) authors
    wa = rels[("author", "writes", "paper")]
    a_want = _mean(x, wa, 60, fwd=False)
    a_got = np.load(out / "features" / "author.npy")
    assert a_got.dtype == np.float16 and types["author"]["feat_dim"] == 16 and types["author"]["fill"] == "mean"
    assert np.allclose(a_got.astype(np.float64), a_want, rtol=2e-3, atol=2e-3)
    i_want = _mean(a_got, rels[("author", "affiliated_with", "institution")], 7, fwd=True)
    assert np.allclose(np.load(out / "features" / "institution.npy").astype(np.float64), i_want, rtol=2e-3, atol=2e-3)
    # --mem does not change the bytes; --fill none leaves authors without features
    out2 = tmp_path / "out2"
    _run("prep", "mag240m", src, "--out", out2, "--mem", "64M", "--quiet")
    assert (out2 / "features" / "author.npy").read_bytes() == (out / "features" / "author.npy").read_bytes()
    out3 = tmp_path / "out3"
    _run("prep", "mag240m", src, "--out", out3, "--fill", "none", "--quiet")
    assert not (out3 / "features").exists()
    assert {t["name"]: t["feat_dim"] for t in json.loads((out3 / "meta.json").read_text())["node_types"]} == {
        "author": 0, "institution": 0, "paper": 16}
    ds = burrow.Dataset(out)
    assert ds.node_type("paper").features_path == feat_path
    # the store reads the original file: corrupt paper 3's row there and gather it
    st = burrow.FeatureStore(ds, node_type="paper", engine="pread")
    assert np.array_equal(st.gather([3])[0], x[3].astype(np.float32))
    mm = np.load(feat_path, mmap_mode="r+")
    mm[3] = 42
    mm.flush()
    del mm
    assert np.all(burrow.FeatureStore(ds, node_type="paper", engine="pread").gather([3])[0] == 42)
    r = _run("train", out, "--model", "rsage", "--epochs", "1", "--batch-size", "16", "--fanout", "3,2",
             "--hidden", "8", "--quiet", check=False)
    assert r.returncode == 0, r.stderr


def test_mag240m_split_dict_forms(tmp_path):
    """OGB-LSC's split_dict.pt holds numpy arrays; each form torch.save writes them in (and
    tensors) preps to the same splits; meta.pt's counts may be numpy integers."""
    rng = np.random.default_rng(11)
    src = tmp_path / "mag"
    _, _, _, split = _mag(src, rng)
    split["test-dev"] = split.pop("test")[:9]
    torch.save({"paper": np.int64(50), "author": np.int64(60), "institution": np.int32(7),
                "num_classes": np.int64(5)}, src / "meta.pt")
    for fmt in ("numpy", "p4", "legacy", "numpy2", "tensor"):
        _save_split(src / "split_dict.pt", split, fmt)
        out = tmp_path / f"out-{fmt}"
        r = _run("prep", "mag240m", src, "--out", out, "--fill", "none", "--quiet", check=False)
        assert r.returncode == 0, (fmt, r.stderr)
        for name, key in (("train", "train"), ("valid", "valid"), ("test", "test-dev")):
            assert np.array_equal(np.load(out / "split" / f"{name}.npy"), split[key]), (fmt, name)
    # an object array is refused in one line naming the file
    torch.save({"train": np.array([1, "a"], dtype=object)}, src / "split_dict.pt")
    r = _run("prep", "mag240m", src, "--out", tmp_path / "bad", "--fill", "none", "--quiet", check=False)
    assert r.returncode == 1 and "split_dict.pt" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_igbh_in_place(tmp_path):
    rng = np.random.default_rng(11)
    src = tmp_path / "small"
    proc = src / "processed"
    counts = {"paper": 40, "author": 30, "institute": 5, "fos": 9}
    feats = {}
    for t, n in counts.items():
        (proc / t).mkdir(parents=True)
        feats[t] = rng.standard_normal((n, 8)).astype(np.float32)
        np.save(proc / t / "node_feat.npy", feats[t])
    np.save(proc / "paper" / "node_label_19.npy", rng.integers(0, 19, 40).astype(np.float32))
    np.save(proc / "paper" / "node_label_2K.npy", rng.integers(0, 2983, 40).astype(np.float32))
    rels = {}
    for s, r, t, e in (("paper", "cites", "paper", 90), ("paper", "written_by", "author", 70),
                       ("author", "affiliated_to", "institute", 25), ("paper", "topic", "fos", 50)):
        ei = _distinct(rng, counts[s], counts[t], e)
        rels[(s, r, t)] = ei
        (proc / f"{s}__{r}__{t}").mkdir()
        np.save(proc / f"{s}__{r}__{t}" / "edge_index.npy", np.ascontiguousarray(ei.T))  # IGB: [E, 2]
    out = tmp_path / "igbh"
    _run("prep", "igbh", src, "--out", out, "--classes", "2983", "--quiet")
    meta = json.loads((out / "meta.json").read_text())
    assert [t["name"] for t in meta["node_types"]] == ["author", "fos", "institute", "paper"]
    _check_relations(out, rels, counts)
    assert not (out / "features").exists()
    for t in meta["node_types"]:
        assert t["features"]["path"] == str(proc.resolve() / t["name"] / "node_feat.npy")
    assert meta["num_classes"] == 2983
    assert np.array_equal(np.load(out / "labels.npy"), np.load(proc / "paper" / "node_label_2K.npy").astype(np.int32))
    assert np.array_equal(np.load(out / "split" / "train.npy"), np.arange(24))
    assert np.array_equal(np.load(out / "split" / "valid.npy"), np.arange(24, 32))
    assert np.array_equal(np.load(out / "split" / "test.npy"), np.arange(32, 40))
    ds = burrow.Dataset(out)
    assert np.array_equal(burrow.FeatureStore(ds, node_type="fos", engine="pread").gather([4, 1]), feats["fos"][[4, 1]])


def test_in_place_refusals(tmp_path):
    """A missing, short or mistyped in-place file is refused in one line naming it."""
    rng = np.random.default_rng(3)
    src = tmp_path / "mag"
    _mag(src, rng)
    out = tmp_path / "out"
    _run("prep", "mag240m", src, "--out", out, "--fill", "none", "--quiet")
    meta_p = out / "meta.json"
    good = meta_p.read_text()
    feat = src / "processed" / "paper" / "node_feat.npy"
    r = _run("info", out, check=False)
    assert r.returncode == 0, r.stderr
    raw = feat.read_bytes()
    feat.write_bytes(raw[:-5])  # short
    r = _run("info", out, check=False)
    assert r.returncode != 0 and str(feat.resolve()) in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    feat.write_bytes(raw)
    meta = json.loads(good)
    meta["node_types"][2]["features"]["dtype"] = "float32"  # against its feat_dtype float16
    meta_p.write_text(json.dumps(meta))
    r = _run("info", out, check=False)
    assert r.returncode != 0 and "dtype" in r.stderr, r.stderr
    meta = json.loads(good)
    meta["node_types"][2]["features"]["offset"] = 4096
    meta_p.write_text(json.dumps(meta))
    r = _run("info", out, check=False)
    assert r.returncode != 0 and "offset" in r.stderr, r.stderr
    meta = json.loads(good)
    meta["node_types"][2]["features"]["path"] = "elsewhere/node_feat.npy"  # relative: against the dataset
    meta_p.write_text(json.dumps(meta))
    r = _run("info", out, check=False)
    assert r.returncode != 0 and str(out / "elsewhere" / "node_feat.npy") in r.stderr, r.stderr
    (out / "elsewhere").mkdir()
    os.link(feat, out / "elsewhere" / "node_feat.npy")
    assert _run("info", out, check=False).returncode == 0


def _igb_raw(root, rng, counts):
    """IGB large's / full's processed/: raw float32 node_feat.npy [n, 1024] and raw float32 labels,
    no .npy headers (as IGB's loader memmaps them); edge_index.npy files with headers."""
    proc = root / "processed"
    feats = {}
    for t, n in counts.items():
        (proc / t).mkdir(parents=True)
        feats[t] = rng.standard_normal((n, 1024)).astype(np.float32)
        (proc / t / "node_feat.npy").write_bytes(feats[t].tobytes())
    y = rng.integers(0, 19, counts["paper"]).astype(np.float32)
    y[::5] = np.nan
    (proc / "paper" / "node_label_19.npy").write_bytes(y.tobytes())
    rels = {}
    for s, r, t, e in (("paper", "cites", "paper", 30), ("paper", "written_by", "author", 20),
                       ("author", "affiliated_to", "institute", 8), ("paper", "topic", "fos", 15)):
        ei = _distinct(rng, counts[s], counts[t], e)
        rels[(s, r, t)] = ei
        (proc / f"{s}__{r}__{t}").mkdir()
        np.save(proc / f"{s}__{r}__{t}" / "edge_index.npy", np.ascontiguousarray(ei.T))
    return proc, feats, y, rels


def test_igbh_raw_features_in_place(tmp_path):
    """IGB large's / full's headerless node_feat.npy (raw float32 rows of 1024) and labels: read in
    place with offset 0, never copied; the papers' count from their labels, the others' from the size."""
    rng = np.random.default_rng(5)
    counts = {"paper": 12, "author": 7, "institute": 2, "fos": 3}
    proc, feats, y, rels = _igb_raw(tmp_path / "full", rng, counts)
    out = tmp_path / "out"
    _run("prep", "igbh", tmp_path / "full", "--out", out, "--quiet")
    meta = json.loads((out / "meta.json").read_text())
    _check_relations(out, rels, counts)
    assert not (out / "features").exists()
    for t in meta["node_types"]:
        assert t["features"] == {"path": str(proc.resolve() / t["name"] / "node_feat.npy"), "offset": 0,
                                 "dtype": "float32", "header": False}, t
        assert t["feat_dim"] == 1024 and t["num_nodes"] == counts[t["name"]]
    want = np.where(np.isnan(y), -1, y).astype(np.int32)
    assert np.array_equal(np.load(out / "labels.npy"), want)
    ds = burrow.Dataset(out)
    for t in counts:
        got = burrow.FeatureStore(ds, node_type=t, engine="pread").gather([counts[t] - 1, 0])
        assert np.array_equal(got, feats[t][[counts[t] - 1, 0]]), t
    assert _run("info", out, "--verify", check=False).returncode == 0
    # the file shortened after prep: the dataset refuses to open, one line naming it, size found and expected
    f = proc / "author" / "node_feat.npy"
    f.write_bytes(feats["author"][:-1].tobytes())
    r = _run("info", out, check=False)
    assert r.returncode == 1 and str(f.resolve()) in r.stderr and "%d bytes, expected %d" % (6 * 4096, 7 * 4096) \
        in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_igbh_raw_features_refused(tmp_path):
    """A raw node_feat.npy whose size is not its count x 1024 x 4 is refused in one line naming the
    file, the size found and the size expected; nothing is written."""
    rng = np.random.default_rng(6)
    counts = {"paper": 12, "author": 7, "institute": 2, "fos": 3}
    proc, feats, _, _ = _igb_raw(tmp_path / "full", rng, counts)
    paper = proc / "paper" / "node_feat.npy"
    paper.write_bytes(feats["paper"][:-1].tobytes())  # 11 rows, 12 labels
    r = _run("prep", "igbh", tmp_path / "full", "--out", tmp_path / "out", "--quiet", check=False)
    assert r.returncode == 1 and "paper/node_feat.npy" in r.stderr and str(11 * 4096) in r.stderr, r.stderr
    assert str(12 * 4096) in r.stderr and "node_label_19.npy" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
    paper.write_bytes(feats["paper"].tobytes())
    fos = proc / "fos" / "node_feat.npy"
    fos.write_bytes(feats["fos"].tobytes()[:-8])  # not whole rows
    r = _run("prep", "igbh", tmp_path / "full", "--out", tmp_path / "out", "--quiet", check=False)
    assert r.returncode == 1 and "fos/node_feat.npy" in r.stderr and str(3 * 4096 - 8) in r.stderr, r.stderr
    assert "multiple of 1024 x 4 = 4096" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out").exists()
