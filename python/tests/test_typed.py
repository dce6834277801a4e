"""Typed graphs from Python: ctypes layouts against the C compiler's, burrow.Dataset on a typed
directory, burrow.TypedSampler, burrow.pyg's HeteroData batches (PyG's to_hetero(GraphSAGE) trains
on them), and burrow.Trainer's typed models."""
import ctypes
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import burrow
from burrow import _lib

from conftest import ROOT

# every ctypes struct of _lib.py and the C struct it mirrors
STRUCTS = {
    "DatasetInfo": "burrow_dataset_info", "Csr": "burrow_csr", "Relation": "burrow_relation",
    "Hetero": "burrow_hetero", "TypeInfo": "burrow_type_info", "Block": "burrow_block", "Batch": "burrow_batch",
    "TypedBatch": "burrow_typed_batch", "TypedSamplerOpts": "burrow_typed_sampler_opts",
    "SamplerOpts": "burrow_sampler_opts", "StoreOpts": "burrow_store_opts", "StoreInfo": "burrow_store_info",
    "StoreStats": "burrow_store_stats", "TrainOpts": "burrow_train_opts", "EpochStats": "burrow_epoch_stats",
    "EvalStats": "burrow_eval_stats", "Best": "burrow_best", "GenOpts": "burrow_gen_opts",
    "PrepOpts": "burrow_prep_opts", "ImportOpts": "burrow_import_opts", "PartitionOpts": "burrow_partition_opts",
    "PartitionPhase": "struct burrow_partition_phase", "PartitionStats": "burrow_partition_stats",
    "EdgeBatch": "burrow_edge_batch", "EdgeSamplerOpts": "burrow_edge_sampler_opts", "EdgeSplit": "burrow_edge_split",
}


def _c_layouts(tmp_path):
    """{struct: (sizeof, {field: offsetof})} as the C compiler lays out include/burrow.h."""
    cc = os.environ.get("CC", "cc")
    if not shutil.which(cc):
        pytest.skip("no C compiler (%s) to compare the ctypes layouts with" % cc)
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "burrow.h"', 'int main(void) {']
    for py, c in STRUCTS.items():
        cls = getattr(_lib, py)
        lines.append('printf("%s = %%zu\\n", sizeof(%s));' % (py, c))
        for f, _ in cls._fields_:
            lines.append('printf("%s %s %%zu\\n", offsetof(%s, %s));' % (py, f, c, f))
    lines.append("return 0; }")
    src, exe = tmp_path / "layout.c", tmp_path / "layout"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "include"), str(src), "-o", str(exe)], check=True)
    out = {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines():
        py, f, v = line.split()
        out.setdefault(py, [0, {}])
        if f == "=":
            out[py][0] = int(v)
        else:
            out[py][1][f] = int(v)
    return out


def test_typed_ctypes_layouts_equal_the_c_compiler_s(tmp_path):
    c = _c_layouts(tmp_path)
    for py in STRUCTS:
        cls = getattr(_lib, py)
        got = (ctypes.sizeof(cls), {f: getattr(cls, f).offset for f, _ in cls._fields_})
        assert got == tuple(c[py]), py


# ---------------------------------------------------------------- a small typed dataset, written with numpy

def _npy_4096(path, a):
    """a as a .npy whose data starts at byte 4096 (docs/format.md: features)."""
    a = np.ascontiguousarray(a)
    hdr = "{'descr': %r, 'fortran_order': False, 'shape': %r, }" % (np.lib.format.dtype_to_descr(a.dtype), a.shape)
    hdr = hdr.ljust(4096 - 10 - 1) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + a.tobytes())


def _by_dst(src, dst, n_src, n_dst):
    """In-edges by destination: (indptr [n_dst + 1] int64, indices int32), duplicates once, rows sorted."""
    key = np.unique(np.asarray(dst, np.int64) * n_src + np.asarray(src, np.int64))
    indptr = np.zeros(n_dst + 1, np.int64)
    np.cumsum(np.bincount(key // n_src, minlength=n_dst), out=indptr[1:])
    return indptr, (key % n_src).astype(np.int32)


def write_typed(out, types, relations, target, labels, num_classes, splits, name="typed"):
    """A format-version-2 directory (issue 31's layout): types [(name, count, features or None)],
    relations [(src, name, dst, src ids, dst ids)], labels and splits on the target type."""
    os.makedirs(os.path.join(out, "features"))
    n = {t: c for t, c, _ in types}
    meta_types, meta_rels, arrays = [], [], {}
    for t, c, x in types:
        meta_types.append(dict(name=t, num_nodes=c, feat_dim=0 if x is None else x.shape[1],
                               **({} if x is None else {"feat_dtype": str(x.dtype)})))
        if x is not None:
            _npy_4096(os.path.join(out, "features", t + ".npy"), x)
    for s, r, d, si, di in relations:
        indptr, indices = _by_dst(si, di, n[s], n[d])
        rd = os.path.join(out, "relations", "%s___%s___%s" % (s, r, d))
        os.makedirs(rd)
        np.save(os.path.join(rd, "indptr.npy"), indptr)
        np.save(os.path.join(rd, "indices.npy"), indices)
        arrays[(s, r, d)] = (indptr, indices)
        meta_rels.append(dict(src=s, name=r, dst=d, num_edges=int(indptr[-1]), index_dtype="int32"))
    np.save(os.path.join(out, "labels.npy"), np.asarray(labels, np.int32))
    os.makedirs(os.path.join(out, "split"))
    for k, ids in splits.items():
        np.save(os.path.join(out, "split", k + ".npy"), np.asarray(ids, np.int64))
    meta = {"format": "burrow-dataset", "version": 2, "name": name, "node_types": meta_types,
            "relations": meta_rels, "target_type": target, "num_classes": num_classes,
            **{"num_" + k: len(splits.get(k, ())) for k in ("train", "valid", "test")}, "source": {"test": True}}
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f)
    return arrays


P, A, F, C = 600, 300, 24, 4  # papers (the target), authors, fields (featureless), classes


@pytest.fixture(scope="session")
def typed(tmp_path_factory):
    """Papers whose class shows weakly in their own features and strongly in their authors' (whose
    features carry their class) and their fields' (featureless: ids alone); reverse relations so
    every type receives messages."""
    if _lib.missing:
        pytest.skip("the library lacks the typed calls: " + ", ".join(sorted(_lib.missing)))
    rng = np.random.default_rng(5)
    y = rng.integers(0, C, P)
    ya = rng.integers(0, C, A)
    means = rng.normal(0, 1, (C, 16))
    xp = (0.3 * means[y] + rng.normal(0, 1, (P, 16))).astype(np.float32)
    xa = (1.5 * rng.normal(0, 1, (C, 8))[ya] + rng.normal(0, 0.5, (A, 8))).astype(np.float16)

    def pick(cls_of_src, n_src, want, k, p_same):
        out = []
        for c in want:
            same = np.flatnonzero(cls_of_src == c)
            out.append(np.where(rng.random(k) < p_same, rng.choice(same, k), rng.integers(0, n_src, k)))
        return np.concatenate(out)

    pw = np.repeat(np.arange(P), 3)
    aw = pick(ya, A, y, 3, 0.85)
    pc = np.repeat(np.arange(P), 4)
    cited = pick(y, P, y, 4, 0.6)
    pt = np.repeat(np.arange(P), 2)
    ft = pick(np.arange(F) % C, F, y, 2, 0.85)
    perm = rng.permutation(P)
    splits = {"train": np.sort(perm[:360]), "valid": np.sort(perm[360:480]), "test": np.sort(perm[480:])}
    d = str(tmp_path_factory.mktemp("typed") / "mini-mag")
    arrays = write_typed(d, [("paper", P, xp), ("author", A, xa), ("field", F, None)],
                         [("author", "writes", "paper", aw, pw), ("paper", "rev_writes", "author", pw, aw),
                          ("paper", "cites", "paper", pc, cited), ("paper", "has_topic", "field", pt, ft),
                          ("field", "rev_has_topic", "paper", ft, pt)],
                         "paper", y, C, splits)
    ds = burrow.Dataset(d)
    ds.written = dict(x={"paper": xp, "author": xa}, y=y, splits=splits, relations=arrays)
    return ds


def test_typed_dataset_reads_as_the_files_written(typed, csbm):
    w = typed.written
    assert typed.typed and not csbm.typed and csbm.node_types == [] and csbm.edge_types == []
    assert typed.node_types == ["paper", "author", "field"] and typed.target_type == "paper"
    assert typed.edge_types == list(w["relations"]) and typed.metadata() == (typed.node_types, typed.edge_types)
    assert typed.num_nodes_dict == {"paper": P, "author": A, "field": F}
    assert typed.num_nodes == P and typed.num_classes == C and typed.feat_dim == 16  # the target type's
    assert typed.num_edges == sum(len(ix) for _, ix in w["relations"].values())
    for t in ("paper", "author"):
        x = typed.features_of(t)
        assert isinstance(x, np.memmap) and x.dtype == w["x"][t].dtype and np.array_equal(x, w["x"][t])
        assert typed.node_type(t).feat_dim == x.shape[1]
    assert typed.features_of("field") is None and typed.node_type(2).name == "field"
    assert typed.node_type("field").feat_dim == 0 and typed.node_type("field").feat_dtype is None
    for et, (ip, ix) in w["relations"].items():
        got = typed.relation(et)
        assert np.array_equal(got[0], ip) and np.array_equal(got[1], ix)
    assert typed.edge_type("cites") == ("paper", "cites", "paper") and typed.edge_type(0) == typed.edge_types[0]
    assert np.array_equal(typed.labels, w["y"])
    for k, ids in w["splits"].items():
        assert np.array_equal(typed.split(k), ids)
    for bad in (lambda: typed.indptr, lambda: typed.features, lambda: typed.node_type("venue"),
                lambda: typed.relation("nope"), lambda: csbm.relation("cites")):
        with pytest.raises(burrow.Error):
            bad()
    assert "typed, 3 node types, 5 relations" in repr(typed)


def test_typed_feature_store_gathers_each_type_s_rows(typed):
    rng = np.random.default_rng(2)
    for t in ("paper", "author"):
        ids = rng.integers(0, typed.num_nodes_dict[t], 500)
        s = burrow.FeatureStore(typed, node_type=t, cache_bytes=4096, cache_policy="clock")
        x = s.gather(ids)
        assert x.dtype == np.float32 and x.tobytes() == typed.written["x"][t][ids].astype(np.float32).tobytes()
        s.close()
    assert burrow.FeatureStore(typed).node_type == "paper"  # the target type by default
    with pytest.raises(burrow.Error) as e:
        burrow.FeatureStore(typed, node_type="field")
    assert "no features" in str(e.value)
    with pytest.raises(burrow.Error):
        burrow.FeatureStore(typed, node_type="author", cache_bytes=4096)  # degree: a homogeneous policy


def _check_batch(ds, b, fanouts, rel_fanouts=None):
    """A TypedBatch's invariants: nested per-type lists, block shapes, every edge a real in-edge of
    its relation, each row's count min(fanout, in-degree), distinct and sorted."""
    ti = {t: i for i, t in enumerate(ds.node_types)}
    L = b.num_layers
    assert L == len(fanouts) and b.num_nodes.shape == (L + 1, len(ds.node_types))
    for t, i in ti.items():
        ids = np.asarray(b.input_ids[t])
        assert len(ids) == b.num_nodes[0, i] and len(np.unique(ids)) == len(ids)
        assert (np.diff(b.num_nodes[:, i]) <= 0).all()  # levels nest: level l + 1 is a prefix of level l
        assert ((ids >= 0) & (ids < ds.num_nodes_dict[t])).all()
        if t != ds.target_type:
            assert b.num_nodes[L, i] == 0
    assert np.array_equal(b.seeds, b.input_ids[ds.target_type][:b.batch_size]) and b.num_nodes[L, 0] == b.batch_size
    for l in range(L):
        for et in ds.edge_types:
            blk, (s, _, d) = b.blocks[l][et], et
            assert blk.num_dst == b.num_nodes[l + 1, ti[d]] and blk.num_src == b.num_nodes[l, ti[s]]
            indptr, indices = ds.relation(et)
            for v in range(blk.num_dst):
                g = b.input_ids[d][v]
                row = np.asarray(blk.indices[blk.indptr[v]:blk.indptr[v + 1]])
                real = np.asarray(indices[indptr[g]:indptr[g + 1]])
                got = np.asarray(b.input_ids[s])[row]
                assert (row < blk.num_src).all() and np.isin(got, real).all(), (l, et, g)
                assert len(np.unique(got)) == len(got) and (np.diff(got) > 0).all()
                f = (rel_fanouts or {}).get(et, fanouts)[l]
                assert len(got) == (len(real) if f < 0 else min(f, len(real)))


def test_typed_sampler_batches_are_real_in_edges_and_deterministic(typed):
    fan = [4, 3]
    s = burrow.TypedSampler(typed, fanouts=fan, batch_size=128, seed=7)
    assert len(s) == -(-len(typed.split("train")) // 128)
    seen = []
    for b in s:
        _check_batch(typed, b, fan)
        seen.append(np.asarray(b.seeds))
    assert np.array_equal(np.sort(np.concatenate(seen)), typed.split("train"))
    again = burrow.TypedSampler(typed, fanouts=fan, batch_size=128, seed=7, threads=2)
    b0, b1 = s.batch(0, 1), again.batch(0, 1)
    assert all(np.array_equal(b0.input_ids[t], b1.input_ids[t]) for t in typed.node_types)
    assert all(np.array_equal(b0.blocks[l][et].indices, b1.blocks[l][et].indices)
               for l in range(2) for et in typed.edge_types)
    other = burrow.TypedSampler(typed, fanouts=fan, batch_size=128, seed=8).batch(0, 1)
    assert not np.array_equal(b0.input_ids["author"], other.input_ids["author"])
    # explicit seeds, -1 = every in-edge, a per-relation fanout
    full = burrow.TypedSampler(typed, fanouts=[-1], rel_fanouts={"cites": [0]}, ids=[])
    b = full.sample([5, 3, 9], key=1)
    _check_batch(typed, b, [-1], {("paper", "cites", "paper"): [0]})
    assert list(b.seeds) == [5, 3, 9] and len(b.blocks[0][("paper", "cites", "paper")].indices) == 0
    ip = typed.relation("writes")[0]
    assert len(b.blocks[0][("author", "writes", "paper")].indices) == sum(ip[v + 1] - ip[v] for v in (5, 3, 9))
    # LABOR: real in-edges, the fanouts kept, the same bits at 2 threads, other picks than neighbor sampling's
    lab = burrow.TypedSampler(typed, fanouts=fan, batch_size=128, seed=7, labor=True)
    l0 = lab.batch(0, 1)
    _check_batch(typed, l0, fan)
    l1 = burrow.TypedSampler(typed, fanouts=fan, batch_size=128, seed=7, labor=True, threads=2).batch(0, 1)
    assert all(np.array_equal(l0.input_ids[t], l1.input_ids[t]) for t in typed.node_types)
    assert any(not np.array_equal(l0.blocks[l][et].indices, b0.blocks[l][et].indices) or
               not np.array_equal(l0.input_ids[et[0]], b0.input_ids[et[0]])
               for l in range(2) for et in typed.edge_types)
    s.close()
    with pytest.raises(burrow.Error):
        burrow.TypedSampler(typed, fanouts=[2], rel_fanouts={"cites": [1, 2]})


def test_typed_sampler_fanout_per_node_draws_over_every_relation(typed):
    fan = [4, 3]
    per_node = burrow.TypedSampler(typed, fanouts=fan, batch_size=128, seed=7, fanout="node")
    b = per_node.batch(0, 1)
    again = burrow.TypedSampler(typed, fanouts=fan, batch_size=128, seed=7, fanout="node", threads=2).batch(0, 1)
    assert all(np.array_equal(b.input_ids[t], again.input_ids[t]) for t in typed.node_types)
    rels = list(typed.edge_types)
    for l in range(2):  # each destination: min(fanout, in-degree over its type's relations) picks, real edges
        for t in typed.node_types:
            into = [et for et in rels if et[2] == t]
            for i in range(int(b.num_nodes[l + 1][typed.node_types.index(t)])):
                v, got, deg = int(b.input_ids[t][i]), 0, 0
                for et in into:
                    ip, ind = typed.relation(et)
                    blk = b.blocks[l][et]
                    row = b.input_ids[et[0]][blk.indices[blk.indptr[i]:blk.indptr[i + 1]]]
                    assert set(row.tolist()) <= set(ind[ip[v]:ip[v + 1]].tolist())
                    assert len(set(row.tolist())) == len(row)
                    got, deg = got + len(row), deg + int(ip[v + 1] - ip[v])
                assert got == min(fan[l], deg)
    with pytest.raises(burrow.Error):
        burrow.TypedSampler(typed, fanouts=[2], fanout="edge")
    with pytest.raises(burrow.Error):
        burrow.TypedSampler(typed, fanouts=[2], rel_fanouts={"cites": [1]}, fanout="node")
    assert burrow._train_opts({"typed_fanout": "node"})[0].typed_fanout == 1
    with pytest.raises(burrow.Error):
        burrow._train_opts({"typed_fanout": "edge"})


def test_typed_pyg_batches_are_real_edges_with_the_rows_of_n_id(typed):
    pytest.importorskip("torch_geometric")
    import torch
    from burrow.pyg import BurrowFeatureStore, BurrowGraphStore, loader
    w = typed.written
    gs, fs = BurrowGraphStore(typed), BurrowFeatureStore(typed)
    for et, (ip, ix) in w["relations"].items():  # PyG's CSC: (row, colptr), by destination
        row, colptr = gs.get_edge_index(edge_type=et, layout="csc")
        assert np.array_equal(row.numpy(), ix) and np.array_equal(colptr.numpy(), ip)
    assert fs.get_tensor_size(group_name="author", attr_name="x") == (A, 8)
    assert fs.get_tensor(group_name="author", attr_name="x", index=torch.tensor([], dtype=torch.long)).shape == (0, 8)
    n = 0
    for data in loader(typed, typed.split("train"), num_neighbors=[3, 2], batch_size=100, shuffle=True, seed=1):
        n += 1
        bs = data["paper"].batch_size
        assert bs == min(100, 360 - 100 * (n - 1)) and data["paper"].input_id.numel() == bs
        nid = {t: data[t].n_id.numpy() for t in typed.node_types}
        assert set(data.node_types) == set(typed.node_types) and "x" not in data["field"]
        for t in ("paper", "author"):
            assert torch.equal(data[t].x, torch.from_numpy(w["x"][t][nid[t]].astype(np.float32)))
            assert sum(data[t].num_sampled_nodes) == len(nid[t]) == len(np.unique(nid[t]))
        assert torch.equal(data["paper"].y, torch.from_numpy(w["y"][nid["paper"]].astype(np.int64)))
        assert np.isin(nid["paper"][:bs], typed.split("train")).all()
        for et in typed.edge_types:
            s, _, d = et
            ei = data[et].edge_index.numpy()
            assert ei.shape[0] == 2 and sum(data[et].num_sampled_edges) == ei.shape[1]
            assert (ei[0] < len(nid[s])).all() and (ei[1] < len(nid[d])).all()
            gs, gd = nid[s][ei[0]], nid[d][ei[1]]
            indptr, indices = typed.relation(et)
            assert all(u in indices[indptr[v]:indptr[v + 1]] for u, v in zip(gs, gd)), et
            # each destination's in-edges from one hop (the hetero NeighborLoader's), so none twice
            assert len(np.unique(gd * typed.num_nodes_dict[s] + gs)) == len(gs), et
            # every seed got min(fanout of hop 1, in-degree) in-edges of each relation into papers
            if d == "paper":
                deg = np.bincount(ei[1], minlength=len(nid[d]))[:bs]
                assert np.array_equal(deg, np.minimum(3, np.diff(indptr)[nid["paper"][:bs]])), et
    assert n == 4
    # num_neighbors per relation, PyG's dict: the seeds' cites in-edges none, every other relation 1
    per = {et: [0 if et[1] == "cites" else 1, 2] for et in typed.edge_types}
    data = next(iter(loader(typed, typed.split("valid"), num_neighbors=per, batch_size=50)))
    ei = data[("paper", "cites", "paper")].edge_index
    assert data[("paper", "cites", "paper")].num_sampled_edges[0] == 0 and (ei[1] >= 50).all()
    assert data[("author", "writes", "paper")].num_sampled_edges[0] == 50  # every paper has an author
    with pytest.raises(burrow.Error):
        loader(typed, typed.split("valid"), num_neighbors={"cites": [1, 1]})


def test_typed_to_hetero_graphsage_trains_on_burrow_pyg_batches(typed):
    pytest.importorskip("torch_geometric")
    import torch
    from torch_geometric.nn import GraphSAGE, to_hetero
    from burrow.pyg import loader
    torch.manual_seed(0)
    emb = torch.nn.Embedding(F, 8)  # the featureless type: an embedding of n_id, as documented
    model = to_hetero(GraphSAGE(-1, 32, num_layers=2, out_channels=C), typed.metadata(), aggr="sum")
    batches = loader(typed, typed.split("train"), num_neighbors=[5, 5], batch_size=120, shuffle=True, seed=3)

    def step(data):
        x = {t: data[t].x for t in ("paper", "author")}
        x["field"] = emb(data["field"].n_id)
        out = model(x, data.edge_index_dict)["paper"][:data["paper"].batch_size]
        return torch.nn.functional.cross_entropy(out, data["paper"].y[:data["paper"].batch_size])

    with torch.no_grad():
        step(next(iter(batches)))  # the lazy layers' shapes
    opt = torch.optim.Adam(list(model.parameters()) + list(emb.parameters()), lr=0.01)
    losses = []
    for _ in range(6):
        tot = 0.0
        for data in batches:
            opt.zero_grad()
            loss = step(data)
            loss.backward()
            opt.step()
            tot += float(loss)
        losses.append(tot / len(batches))
    assert losses[-1] < 0.3 * losses[0], losses
    # the relations carry the signal: accuracy on the test papers well above chance (0.25)
    model.eval()
    right = 0
    for data in loader(typed, typed.split("test"), num_neighbors=[5, 5], batch_size=120):
        with torch.no_grad():
            x = {t: data[t].x for t in ("paper", "author")}
            x["field"] = emb(data["field"].n_id)
            out = model(x, data.edge_index_dict)["paper"][:data["paper"].batch_size]
        right += int((out.argmax(1) == data["paper"].y[:data["paper"].batch_size]).sum())
    assert right / len(typed.split("test")) > 0.6


def test_typed_models_go_to_the_trainer_s_options():
    for name, kind in (("rgcn", 5), ("rsage", 6), ("rgat", 7)):  # enum burrow_model_kind
        assert burrow._train_opts({"model": name})[0].model == kind
    with pytest.raises(burrow.Error) as e:
        burrow._train_opts({"model": "rgcnn"})
    assert "rgcn" in str(e.value)


@pytest.mark.parametrize("model", ["rgcn", "rsage", "rgat"])
def test_typed_trainer_trains_an_epoch_of_each_typed_model(typed, model):
    if not burrow.lib.burrow_model_parse(model.encode()):
        pytest.skip("the library's trainer predates typed training (burrow_model_parse(%r) is 0)" % model)
    if "embed_types" not in dict(_lib.TrainOpts._fields_):
        pytest.skip("burrow_train_opts has no embed_types yet (the field type has no features)")
    t = burrow.Trainer(typed, model=model, layers=2, hidden=16, fanout=[4, 4], batch=128, epochs=1, seed=1, lr=0.01,
                       embed_types=True)
    st = t.train_epoch()
    assert st["epoch"] == 1 and st["batches"] == -(-360 // 128) and np.isfinite(st["loss"]) and st["loss"] > 0
    ev = t.evaluate()
    assert 0 <= ev["valid_acc"] <= 1 and 0 <= ev["test_acc"] <= 1


def test_typed_trainer_takes_the_lr_schedule_and_patience_and_refuses_normalized_features(typed, tmp_path):
    """Training habits on a typed dataset: the schedule sets the typed optimizer's rate (an
    interrupted run resumes with the same losses), patience stops fit; normalized features are
    refused in one line."""
    if "lr_schedule" not in dict(_lib.TrainOpts._fields_):
        pytest.skip("burrow_train_opts has no training habits")
    kw = dict(model="rgcn", layers=2, hidden=16, fanout=[4, 4], batch=128, epochs=4, seed=1, lr=0.05,
              embed_types=True, lr_schedule="step", lr_step=1, lr_gamma=0.5)
    a = burrow.Trainer(typed, **kw)
    la = [a.train_epoch()["loss"] for _ in range(4)]
    b = burrow.Trainer(typed, **kw)
    lb = [b.train_epoch()["loss"] for _ in range(2)]
    assert b.lr == pytest.approx(0.05 * 0.25, rel=1e-15)
    b.save(tmp_path / "ck")
    c = burrow.Trainer(typed, **kw)
    c.load(tmp_path / "ck")
    lb += [c.train_epoch()["loss"] for _ in range(2)]
    assert la == lb
    u = burrow.Trainer(typed, **dict(kw, lr_schedule="none"))
    assert [u.train_epoch()["loss"] for _ in range(4)][1:] != la[1:]
    p = burrow.Trainer(typed, **dict(kw, patience=1, epochs=40, lr_schedule="none"))
    hist = p.fit()
    assert p.stopped_early == len(hist) < 40
    with pytest.raises(burrow.Error) as e:
        burrow.Trainer(typed, **dict(kw, normalize_features=True))
    assert "typed" in str(e.value) and "normalized" in str(e.value)


def test_typed_labor_star_blocks_carry_weights_per_relation(typed):
    """TypedSampler(labor_star=R): LABOR-* per relation: every edge a real in-edge of its relation,
    distinct, each relation block's edge_weight positive with each row's summing to its count, the
    same bits at 2 threads; without labor_star no block carries weights."""
    fan = [4, 3]
    s = burrow.TypedSampler(typed, fanouts=fan, batch_size=128, seed=7, labor_star=burrow.LABOR_STAR_ROUNDS)
    again = burrow.TypedSampler(typed, fanouts=fan, batch_size=128, seed=7, threads=2,
                                labor_star=burrow.LABOR_STAR_ROUNDS)
    plain = burrow.TypedSampler(typed, fanouts=fan, batch_size=128, seed=7).batch(0, 1)
    b, b2 = s.batch(0, 1), again.batch(0, 1)
    for l in range(2):
        for et in typed.edge_types:
            blk, (src, _, dst) = b.blocks[l][et], et
            assert plain.blocks[l][et].edge_weight is None
            assert np.array_equal(blk.indices, b2.blocks[l][et].indices)
            assert np.array_equal(blk.edge_weight, b2.blocks[l][et].edge_weight)
            assert blk.edge_weight is not None and len(blk.edge_weight) == len(blk.indices)
            indptr, indices = typed.relation(et)
            for v in range(blk.num_dst):
                g = b.input_ids[dst][v]
                got = np.asarray(b.input_ids[src])[blk.indices[blk.indptr[v]:blk.indptr[v + 1]]]
                real = set(np.asarray(indices[indptr[g]:indptr[g + 1]]).tolist())
                assert set(got.tolist()) <= real and len(set(got.tolist())) == len(got)
                w = blk.edge_weight[blk.indptr[v]:blk.indptr[v + 1]]
                assert (w > 0).all() and abs(float(w.sum()) - len(w)) <= 1e-4 * max(1, len(w))
