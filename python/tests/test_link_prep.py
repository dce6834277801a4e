"""burrow prep of OGB link prediction zips (issue 33): a tiny ogbl-collab and ogbl-citation2 in
OGB's exact zip layout, their split .pt files written by torch.save, prepped with no network;
every edge_split array must equal torch.load of the same .pt, the graph must be the training
edges (symmetrized as OGB's dataset adds inverse edges for collab, as given for citation2),
and the features the CSV's."""
import gzip
import io
import json
import os
import zipfile

import numpy as np
import pytest

import burrow

torch = pytest.importorskip("torch", reason="torch is needed to write OGB's split .pt files")


def _csv_gz(rows, fmt):
    text = "".join(",".join(fmt % v for v in np.atleast_1d(r)) + "\n" for r in rows)
    return gzip.compress(text.encode())


def _pt(obj, legacy=False):
    """torch.save's zip container, or (legacy) the stream torch < 1.6 wrote."""
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=not legacy)
    return buf.getvalue()


def _edges(rng, n, e):
    """e distinct pairs (u, v), u != v, no pair twice in either direction."""
    seen, out = set(), []
    while len(out) < e:
        u, v = (int(x) for x in rng.integers(0, n, 2))
        if u != v and (u, v) not in seen and (v, u) not in seen:
            seen.add((u, v))
            out.append((u, v))
    return np.array(out, dtype=np.int64)


def _write_zip(path, top, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(top + "/RELEASE_v1.txt", "tiny\n")
        for name, data in members.items():
            z.writestr(top + "/" + name, data)


def _common(rng, n, train, feat_dim):
    feats = rng.standard_normal((n, feat_dim)).astype(np.float32)
    return feats, {
        "raw/edge.csv.gz": _csv_gz(train, "%d"),
        "raw/num-node-list.csv.gz": _csv_gz([n], "%d"),
        "raw/num-edge-list.csv.gz": _csv_gz([len(train)], "%d"),
        "raw/node-feat.csv.gz": _csv_gz(feats, "%.9g"),
    }


def _graph(out):
    indptr = np.load(os.path.join(out, "indptr.npy"))
    indices = np.load(os.path.join(out, "indices.npy"))
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    return set(zip(rows.tolist(), indices.tolist()))


def _check_common(out, feats, graph_edges):
    assert _graph(out) == graph_edges
    np.testing.assert_array_equal(np.load(os.path.join(out, "features.npy")), feats)
    assert not os.path.exists(os.path.join(out, "labels.npy"))


def _load(out, name):
    return np.load(os.path.join(out, "edge_split", name + ".npy"))


@pytest.fixture()
def root(tmp_path, monkeypatch):
    monkeypatch.delenv("BURROW_DATA_ROOT", raising=False)
    return tmp_path


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_prep_ogbl_collab(root, legacy):
    rng = np.random.default_rng(5)
    n = 60
    edges = _edges(rng, n, 150)
    train, valid, test = edges[:100], edges[100:125], edges[125:]
    feats, members = _common(rng, n, train, 8)
    split = {}
    for name, e in (("train", train), ("valid", valid), ("test", test)):
        d = {"edge": torch.from_numpy(e), "weight": torch.from_numpy(rng.integers(1, 4, len(e))),
             "year": torch.from_numpy(rng.integers(1990, 2020, len(e)))}
        if name != "train":
            d["edge_neg"] = torch.from_numpy(rng.integers(0, n, (40, 2)))
        split[name] = d
        members["split/time/%s.pt" % name] = _pt(d, legacy)
    _write_zip(root / "collab.zip", "collab", members)
    out = burrow.prep(str(root / "collab.zip"), out=str(root / "out"), download=False)

    meta = json.load(open(os.path.join(out, "meta.json")))
    es = meta["edge_split"]
    assert (es["train"], es["valid"], es["test"]) == (100, 25, 25)
    assert (es["neg"], es["valid_neg"], es["test_neg"], es["num_neg"]) == ("pairs", 40, 40, 0)
    assert es["weight"] and es["year"] and not es["directed"] and es["metric"] == "hits@50"
    assert meta["num_classes"] == 0 and meta["symmetric"]
    for name, d in split.items():
        loaded = torch.load(io.BytesIO(members["split/time/%s.pt" % name]))
        np.testing.assert_array_equal(_load(out, name + "_pos"), loaded["edge"].numpy())
        assert _load(out, name + "_pos").dtype == np.int64
        np.testing.assert_array_equal(_load(out, name + "_weight"), loaded["weight"].numpy().astype(np.float32))
        np.testing.assert_array_equal(_load(out, name + "_year"), loaded["year"].numpy().astype(np.int32))
        assert _load(out, name + "_year").dtype == np.int32
        if name != "train":
            np.testing.assert_array_equal(_load(out, name + "_neg"), loaded["edge_neg"].numpy())
    both = {(int(u), int(v)) for u, v in train} | {(int(v), int(u)) for u, v in train}
    _check_common(out, feats, both)


def test_prep_ogbl_citation2(root):
    rng = np.random.default_rng(6)
    n, k = 50, 7
    edges = _edges(rng, n, 120)
    train, valid, test = edges[:80], edges[80:100], edges[100:]
    feats, members = _common(rng, n, train, 4)
    members["raw/node_year.csv.gz"] = _csv_gz(rng.integers(1990, 2020, n), "%d")
    for name, e in (("train", train), ("valid", valid), ("test", test)):
        d = {"source_node": torch.from_numpy(e[:, 0].copy()), "target_node": torch.from_numpy(e[:, 1].copy())}
        if name != "train":
            d["target_node_neg"] = torch.from_numpy(rng.integers(0, n, (len(e), k)))
        members["split/time/%s.pt" % name] = _pt(d)
    _write_zip(root / "citation-v2.zip", "citation-v2", members)
    out = burrow.prep(str(root / "citation-v2.zip"), out=str(root / "out"), download=False)

    es = json.load(open(os.path.join(out, "meta.json")))["edge_split"]
    assert (es["train"], es["valid"], es["test"]) == (80, 20, 20)
    assert (es["neg"], es["num_neg"], es["valid_neg"], es["test_neg"]) == ("per_source", k, 20, 20)
    assert es["directed"] and not es["weight"] and not es["year"] and es["metric"] == "mrr"
    for name in ("train", "valid", "test"):
        loaded = torch.load(io.BytesIO(members["split/time/%s.pt" % name]))
        pos = np.stack([loaded["source_node"].numpy(), loaded["target_node"].numpy()], axis=1)
        np.testing.assert_array_equal(_load(out, name + "_pos"), pos)
        if name != "train":
            np.testing.assert_array_equal(_load(out, name + "_neg_dst"), loaded["target_node_neg"].numpy())
        assert not os.path.exists(os.path.join(out, "edge_split", name + "_neg.npy"))
    _check_common(out, feats, {(int(u), int(v)) for u, v in train})


def test_prep_refuses_a_bad_split_whole(root):
    """A .pt the reader refuses (a numpy object array: dtype 'O'): refused naming the file,
    nothing written."""
    rng = np.random.default_rng(7)
    train = _edges(rng, 20, 30)
    _, members = _common(rng, 20, train, 2)
    good = {"edge": torch.from_numpy(train)}
    members["split/target/train.pt"] = _pt(good)
    members["split/target/valid.pt"] = _pt(dict(good, edge_neg=torch.zeros(3, 2, dtype=torch.int64)))
    members["split/target/test.pt"] = _pt({"edge": good["edge"], "edge_neg": np.array([[1, "a"]], dtype=object)})
    _write_zip(root / "ddi.zip", "ddi", members)
    with pytest.raises(burrow.Error) as e:
        burrow.prep(str(root / "ddi.zip"), out=str(root / "out"), download=False)
    assert "test.pt" in str(e.value) and "numpy" in str(e.value)
    assert not os.path.exists(root / "out")
    assert sorted(os.listdir(root)) == ["ddi.zip"]


@pytest.mark.parametrize("undirected", [True, False], ids=["undirected", "directed"])
def test_import_edge_split(tmp_path, undirected):
    """import --edge-split: the unique edges cut into disjoint train / valid / test, the graph
    the train edges, as many negatives as positives that are no edge of the whole graph; the
    same seed gives the same bits, another seed another split."""
    rng = np.random.default_rng(11)
    n = 70
    edges = rng.integers(0, n, (600, 2))
    np.save(tmp_path / "e.npy", edges)
    outs = []
    for k, seed in enumerate((3, 3, 4)):
        out = str(tmp_path / ("o%d" % k))
        burrow.import_graph(out, str(tmp_path / "e.npy"), n, edge_split=(0.7, 0.1, 0.2), split_seed=seed,
                            undirected=undirected)
        outs.append(out)
    keyed = (lambda u, v: (min(u, v), max(u, v))) if undirected else (lambda u, v: (u, v))
    unique = {keyed(int(u), int(v)) for u, v in edges if u != v}
    parts = {s: [tuple(map(int, r)) for r in _load(outs[0], s + "_pos")] for s in ("train", "valid", "test")}
    assert sum(len(p) for p in parts.values()) == len(unique)
    assert set().union(*map(set, parts.values())) == unique
    assert len(parts["train"]) == round(0.7 * len(unique)) and len(parts["valid"]) == round(0.1 * len(unique))
    if undirected:
        assert all(u < v for p in parts.values() for u, v in p)
    train = set(parts["train"])
    want = train | {(v, u) for u, v in train} if undirected else train
    assert _graph(outs[0]) == want
    whole = unique | {(v, u) for u, v in unique} if undirected else unique
    for s in ("valid", "test"):
        neg = _load(outs[0], s + "_neg")
        assert neg.shape == (len(parts[s]), 2) and neg.dtype == np.int64
        assert all(u != v and (int(u), int(v)) not in whole for u, v in neg)
    es = json.load(open(os.path.join(outs[0], "meta.json")))["edge_split"]
    assert (es["neg"], es["directed"], es["valid_neg"]) == ("pairs", not undirected, len(parts["valid"]))
    for name in sorted(os.listdir(os.path.join(outs[0], "edge_split"))):
        a, b = (open(os.path.join(o, "edge_split", name), "rb").read() for o in outs[:2])
        assert a == b, name
    assert any(open(os.path.join(outs[0], "edge_split", f), "rb").read() !=
               open(os.path.join(outs[2], "edge_split", f), "rb").read() for f in ("train_pos.npy", "valid_neg.npy"))


def test_import_edge_split_refuses_labels(tmp_path):
    np.save(tmp_path / "e.npy", np.array([[0, 1], [1, 2], [2, 3]]))
    np.save(tmp_path / "y.npy", np.array([0, 1, 0, 1]))
    with pytest.raises(burrow.Error, match="no labels or node splits"):
        burrow.import_graph(str(tmp_path / "o"), str(tmp_path / "e.npy"), 4, edge_split=(0.5, 0.25, 0.25),
                            labels=str(tmp_path / "y.npy"))
    assert not os.path.exists(tmp_path / "o")
