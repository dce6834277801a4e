"""The package's core: struct layouts, datasets, the feature store, the sampler, errors."""
import ctypes
import logging

import numpy as np
import pytest

import burrow
from burrow import _lib
from burrow._lib import lib


def test_version_is_the_library_s():
    assert burrow.version() == lib.burrow_version().decode()
    assert burrow.version().count(".") == 2


@pytest.mark.parametrize("cls,fill,want", [
    # each struct's last fields as the header documents their defaults: a field out of place shows here
    (_lib.StoreOpts, lambda o: lib.burrow_store_defaults(ctypes.byref(o)),
     {"engine": 0, "queue_depth": 128, "max_read_bytes": 65536, "direct": True, "mmap_random": False}),
    (_lib.SamplerOpts, lambda o: lib.burrow_sampler_defaults(ctypes.byref(o)),
     {"num_layers": 3, "batch_size": 1024, "seed": 0, "threads": 1, "prefetch": 4, "producers": 1, "device": None,
      "device_csr_budget": 0, "pin": 0}),
    (_lib.TrainOpts, lambda o: lib.burrow_train_defaults(ctypes.byref(o)),
     {"model": 1, "layers": 3, "hidden": 256, "dropout": 0.5, "optimizer": 1, "lr": 0.003, "epochs": 20,
      "batch_size": 1024, "prefetch": 2, "cache_bytes": -1, "cache_fraction": -1.0, "cache_policy": 1,
      "eval_chunk": 8192, "mem_bytes": 0, "scratch_dir": None, "threads": 0, "progress": None, "sparse_input": 0,
      "eval_splits": 0}),
    (_lib.GenOpts, lambda o: lib.burrow_gen_defaults(ctypes.byref(o), 1),
     {"kind": 1, "num_nodes": 10000, "avg_degree": 10.0, "homophily": 0.8, "scale": 16, "edge_factor": 16.0,
      "a": 0.57, "b": 0.19, "c": 0.19, "num_classes": 8, "feat_dim": 64, "feat_dtype": 2, "signal": 1.0,
      "train_frac": 0.6, "valid_frac": 0.2, "overwrite": False, "progress": None, "fraction": 1.0,
      "mem_bytes": 0, "spill_dir": None}),
    (_lib.PartitionOpts, lambda o: lib.burrow_partition_defaults(ctypes.byref(o)),
     {"num_parts": 2, "balance": 1, "ufactor": 1.05, "refine_passes": 4, "out_dir": None, "overwrite": False}),
])
def test_struct_layouts_read_the_documented_defaults(cls, fill, want):
    o = cls()
    ctypes.memset(ctypes.byref(o), 0x5a, ctypes.sizeof(o))
    fill(o)
    got = {k: getattr(o, k) for k in want}
    assert got == pytest.approx(want) if all(isinstance(v, (int, float)) for v in want.values()) else got == want


def test_dataset_arrays_are_the_files(csbm):
    assert csbm.num_nodes == 3000 and csbm.feat_dim == 24 and csbm.num_classes == 4
    assert len(csbm.indptr) == csbm.num_nodes + 1 and csbm.indptr[-1] == csbm.num_edges == len(csbm.indices)
    assert isinstance(csbm.indptr, np.memmap)
    parts = [csbm.split(s) for s in ("train", "valid", "test")]
    assert sum(map(len, parts)) == csbm.num_nodes
    assert len(np.unique(np.concatenate(parts))) == csbm.num_nodes
    assert csbm.labels.min() >= 0 and csbm.labels.max() < 4
    with pytest.raises(ValueError):
        csbm.split("nope")


def test_gather_equals_a_numpy_memmap_bit_for_bit(csbm):
    ref = np.load(csbm.path + "/features.npy", mmap_mode="r")
    rng = np.random.default_rng(1)
    ids = rng.integers(0, csbm.num_nodes, 5000)
    ids[:10] = ids[10]  # repeats
    for engine in ("uring", "pread", "mmap"):
        s = burrow.FeatureStore(csbm, engine=engine)
        x = s.gather(ids)
        assert x.dtype == np.float32 and x.shape == (len(ids), csbm.feat_dim)
        assert x.tobytes() == np.ascontiguousarray(ref[ids]).tobytes(), engine
        s.close()
    # with a cache, into a caller's array, and asynchronously
    s = burrow.FeatureStore(csbm, cache_bytes=200 * 24 * 4)
    out = np.zeros((len(ids) + 3, csbm.feat_dim), np.float32)
    assert s.gather(ids, out=out) is out
    assert out[:len(ids)].tobytes() == np.ascontiguousarray(ref[ids]).tobytes()
    assert not out[len(ids):].any()
    outs = [np.empty((1000, csbm.feat_dim), np.float32) for _ in range(3)]
    tickets = [s.submit(ids[i * 1000:(i + 1) * 1000], outs[i]) for i in range(3)]
    for i, t in enumerate(tickets):
        assert t.wait() is outs[i]
        assert outs[i].tobytes() == np.ascontiguousarray(ref[ids[i * 1000:(i + 1) * 1000]]).tobytes()
    st = s.stats()
    assert st["rows"] == len(ids) + 3000 and st["gathers"] == 4
    assert st["cache_hits"] + st["cache_misses"] == st["rows"] and st["cache_hits"] > 0
    s.close()


def test_gather_into_a_torch_tensor_is_zero_copy(csbm):
    torch = pytest.importorskip("torch")
    s = burrow.FeatureStore(csbm)
    t = torch.zeros(7, csbm.feat_dim)
    s.gather(np.arange(7), out=t.numpy())
    ref = np.load(csbm.path + "/features.npy")[:7]
    assert torch.equal(t, torch.from_numpy(ref))


def test_errors_raise_burrow_error_with_the_library_s_message(csbm, tmp_path):
    with pytest.raises(burrow.Error) as e:
        burrow.Dataset(tmp_path / "missing")
    assert "missing" in str(e.value) and e.value.status < 0
    s = burrow.FeatureStore(csbm)
    with pytest.raises(burrow.Error) as e:
        s.gather([0, csbm.num_nodes + 5])
    assert str(csbm.num_nodes + 5) in str(e.value) and e.value.name == "E_RANGE"
    with pytest.raises(burrow.Error):
        s.gather([1], out=np.empty((1, 3), np.float32))
    with pytest.raises(burrow.Error) as e:
        burrow.Sampler(csbm, ids=[1, 1])
    assert e.value.status < 0 and str(e.value)
    with pytest.raises(burrow.Error):
        burrow.Trainer(csbm, model="nope")
    with pytest.raises(burrow.Error) as e:
        burrow.gen_csbm(csbm.path)  # exists
    assert e.value.name == "E_EXISTS"


def test_library_messages_go_to_logging(csbm, caplog, tmp_path):
    # a file system without O_DIRECT makes the store warn; short of that, a fresh log call suffices:
    # the callback is the one the package installed, checked by calling through it
    with caplog.at_level(logging.DEBUG, logger="burrow"):
        burrow._log_cb(1, b"a warning from the library", None)
    assert ("burrow", logging.WARNING, "a warning from the library") in caplog.record_tuples


def full_reference(ds, seeds, layers):
    """Blocks with every neighbor, the slow obvious way (the sampler's node order)."""
    indptr, indices = np.asarray(ds.indptr), np.asarray(ds.indices)
    nodes = list(seeds)
    blocks = []
    dst_count = len(nodes)
    for _ in range(layers):  # output layer first
        pos = {v: i for i, v in enumerate(nodes)}
        new = sorted({int(u) for v in nodes[:dst_count] for u in indices[indptr[v]:indptr[v + 1]]} - set(pos))
        nodes = nodes + new
        pos.update({v: len(pos) + i for i, v in enumerate(new)})
        ip = [0]
        ix = []
        for v in nodes[:dst_count]:
            ix += [pos[int(u)] for u in indices[indptr[v]:indptr[v + 1]]]
            ip.append(len(ix))
        blocks.insert(0, (dst_count, len(nodes), ip, ix))
        dst_count = len(nodes)
    return nodes, blocks


def test_sampler_batches_equal_the_reference_with_all_neighbors(csbm):
    s = burrow.Sampler(csbm, fanouts=[-1, -1], batch_size=97, seed=4)
    train = np.asarray(csbm.split("train"))
    seen = []
    for b in s:
        nodes, blocks = full_reference(csbm, [int(v) for v in b.seeds], 2)
        assert b.input_ids.tolist() == nodes
        for blk, (nd, ns, ip, ix) in zip(b.blocks, blocks):
            assert (blk.num_dst, blk.num_src) == (nd, ns)
            assert blk.indptr.tolist() == ip and blk.indices.tolist() == ix
        seen += b.seeds.tolist()
    assert sorted(seen) == sorted(train.tolist()) and len(seen) == len(s) * 97 - (97 - len(train) % 97) % 97


def test_sampled_batches_are_true_neighbors_within_fanout_and_reproducible(csbm):
    indptr, indices = np.asarray(csbm.indptr), np.asarray(csbm.indices)
    a = [(b.input_ids.copy(), [blk.indices.copy() for blk in b.blocks])
         for b in burrow.Sampler(csbm, fanouts=[4, 3], batch_size=200, seed=9)]
    b2 = [(b.input_ids.copy(), [blk.indices.copy() for blk in b.blocks])
          for b in burrow.Sampler(csbm, fanouts=[4, 3], batch_size=200, seed=9, prefetch=0)]
    assert all(np.array_equal(x[0], y[0]) and all(map(np.array_equal, x[1], y[1])) for x, y in zip(a, b2))
    for b in burrow.Sampler(csbm, fanouts=[4, 3], batch_size=200, seed=9):
        for blk, fan in zip(b.blocks, [4, 3]):
            deg = np.diff(blk.indptr)
            assert blk.indptr[0] == 0 and blk.indices.max() < blk.num_src
            for i in range(blk.num_dst):
                v = b.input_ids[i]
                nbrs = set(indices[indptr[v]:indptr[v + 1]].tolist())
                got = b.input_ids[blk.indices[blk.indptr[i]:blk.indptr[i + 1]]]
                assert set(got.tolist()) <= nbrs and len(set(got.tolist())) == len(got)
                assert deg[i] == min(fan, len(nbrs))


def test_to_pyg_edges_are_true_neighbors_in_neighbor_loader_layout(csbm):
    pytest.importorskip("torch_geometric")
    indptr, indices = np.asarray(csbm.indptr), np.asarray(csbm.indices)
    s = burrow.Sampler(csbm, fanouts=[5, 3], batch_size=128)
    b = next(iter(s))
    d = b.to_pyg()
    n_id, ei = d.n_id.numpy(), d.edge_index.numpy()
    assert d.batch_size == 128 and n_id[:128].tolist() == b.seeds.tolist()
    assert sum(d.num_sampled_nodes) == len(n_id) and sum(d.num_sampled_edges) == ei.shape[1]
    for src, dst in ei.T:
        u, v = n_id[src], n_id[dst]
        assert u in indices[indptr[v]:indptr[v + 1]]
    # hop 1's edges end at the seeds (at most 3 each), hop 2's at the nodes hop 1 added
    e1 = d.num_sampled_edges[0]
    assert ei[1, :e1].max() < 128 and np.bincount(ei[1, :e1]).max() <= 3
    assert ei[1, e1:].min() >= 128 and ei[1, e1:].max() < 128 + d.num_sampled_nodes[1]
    assert len(d.edge_index_per_layer) == 2


def test_to_dgl_blocks(csbm):
    dgl = pytest.importorskip("dgl")
    b = next(iter(burrow.Sampler(csbm, fanouts=[5, 3], batch_size=64)))
    for blk, k in zip(b.to_dgl(), b.blocks):
        assert (blk.num_src_nodes(), blk.num_dst_nodes(), blk.num_edges()) == (k.num_src, k.num_dst, len(k.indices))
        assert blk.srcdata[dgl.NID].tolist() == b.input_ids[:k.num_src].tolist()


def test_sampler_device_cuda_equals_cpu_or_is_refused_naming_it(csbm):
    def epoch(**kw):
        return [(b.input_ids.tolist(), [(k.indptr.tolist(), k.indices.tolist()) for k in b.blocks])
                for b in burrow.Sampler(csbm, fanouts=[4, 3], batch_size=200, seed=2, **kw)]
    want = epoch()
    assert epoch(device="cpu") == want
    try:
        got = epoch(device="cuda")
    except burrow.Error as e:  # no GPU here (or no CUDA in this build): refused, naming the device
        assert "cuda" in str(e).lower()
        pytest.skip("no CUDA device here: %s" % e)
    assert got == want


def test_batches_outlive_the_sampler_s_close(csbm):
    s = burrow.Sampler(csbm, fanouts=[3], batch_size=50)
    it = iter(s)
    b = next(it)
    ids = b.input_ids
    del it
    s.close()  # deferred while b's views live
    assert ids[:50].tolist() == b.seeds.tolist()
    del b, ids
    assert s._h is None


def _blocks(s):
    """Every batch of one epoch of s: (input_ids, [(indptr, indices, edge_weight or None)]), copied."""
    return [(b.input_ids.copy(), [(blk.indptr.copy(), blk.indices.copy(),
                                   None if blk.edge_weight is None else blk.edge_weight.copy()) for blk in b.blocks])
            for b in s]


def _same(a, b):
    return len(a) == len(b) and all(
        np.array_equal(x[0], y[0]) and all(
            np.array_equal(p[0], q[0]) and np.array_equal(p[1], q[1]) and
            ((p[2] is None and q[2] is None) or (p[2] is not None and q[2] is not None and np.array_equal(p[2], q[2])))
            for p, q in zip(x[1], y[1])) for x, y in zip(a, b))


def test_labor_samplers_pick_true_neighbors_and_labor_star_weighs_them(csbm):
    """Sampler(labor=True): LABOR's rows keep min(fanout, degree) true neighbors, unweighted, other picks
    than neighbor sampling's; Sampler(labor_star=LABOR_STAR_ROUNDS): true neighbors, each block's
    edge_weight positive and finite with each row's summing to its count (docs/sampler.md), the same
    bits at 1 and 2 threads and run to run; neighbor sampling carries no weights."""
    indptr, indices = np.asarray(csbm.indptr), np.asarray(csbm.indices)
    fan, kw = [4, 3], dict(batch_size=300, seed=9)
    plain = _blocks(burrow.Sampler(csbm, fanouts=fan, **kw))
    labor = _blocks(burrow.Sampler(csbm, fanouts=fan, labor=True, **kw))
    star = _blocks(burrow.Sampler(csbm, fanouts=fan, labor_star=burrow.LABOR_STAR_ROUNDS, **kw))
    assert _same(star, _blocks(burrow.Sampler(csbm, fanouts=fan, labor_star=burrow.LABOR_STAR_ROUNDS, threads=2,
                                              **kw)))
    assert _same(labor, _blocks(burrow.Sampler(csbm, fanouts=fan, labor=True, prefetch=0, **kw)))
    assert not _same(labor, plain) and not _same(star, labor)
    for run, name in ((plain, "neighbor"), (labor, "labor"), (star, "labor-star")):
        for ids, blocks in run:
            for (ip, ix, w), f in zip(blocks, fan):
                assert (w is None) == (name != "labor-star"), name
                for i in range(len(ip) - 1):
                    v = ids[i]
                    nbrs = set(indices[indptr[v]:indptr[v + 1]].tolist())
                    got = ids[ix[ip[i]:ip[i + 1]]].tolist()
                    assert set(got) <= nbrs and len(set(got)) == len(got), name
                    if name != "labor-star":  # LABOR-* keeps the fanout in expectation only
                        assert len(got) == min(f, len(nbrs)), name
                    else:
                        r = w[ip[i]:ip[i + 1]]
                        assert r.dtype == np.float32 and np.isfinite(r).all() and (r > 0).all()
                        assert abs(float(r.sum()) - len(r)) <= 1e-4 * max(1, len(r)), r
