"""peers.py: the peers' side of tools/bench-peers.sh: the same jobs as Burrow's on the same
dataset directory, in PyG or DGL, printing one JSON line with the job's seconds.

  python tools/peers.py full DIR --lib pyg|dgl --model gcn|sage --epochs E --threads T [--seed S] [--curve]
  python tools/peers.py sample DIR --lib dgl|pyg --fanout 15,10,5 --batch 1024 --seconds S --threads T
  python tools/peers.py link-split DIR --out LINKDIR --seed S
  python tools/peers.py link LINKDIR --lib pyg --fanout 10,5 --hidden 64 --epochs E --seed S --threads T
  python tools/peers.py multilabel DIR --epochs E --seed S --threads T
  python tools/peers.py minibatch DIR --lib dgl --fanout 15,10,5 --batch 1024 --hidden 256 --epochs E
                        --max-batches M --threads T [--seed S]

full: 2-layer GCN or GraphSAGE (mean), hidden 256, dropout 0.5, Adam lr 0.01 and weight decay
5e-4 on the whole graph, evaluating valid and test accuracy after every epoch (as burrow train
--full-graph does by default); seconds = the training loop, after imports and data loading;
valid_acc / test_acc / best_epoch: the first epoch of best valid accuracy and its test accuracy
(Burrow's rule), with torch seeded from --seed; --curve adds the per-epoch valid and test lists;
--init glorot (PyG's sage) redraws the weights Glorot-uniform and the bias zero, as Burrow's SAGE
was initialized before issue 35 (docs/train.md, "Full-graph SAGE against PyG").
sample: neighbor sampling of the training split in batches, input layer first fanouts (as
burrow bench sample takes them), for S seconds after two warm-up batches; edges_per_s =
sampled edges per second.
link-split: a node dataset's undirected edges (symmetrized) split 85/5/10 at random from the seed
into a link dataset directory in Burrow's edge-split layout (docs/format.md): the graph holds the
training edges both ways, features linked, valid and test get one uniform negative pair per
positive (OGB's "pairs"), metric hits@50; no labels.
link: GraphSAGE (mean) link prediction with PyG's LinkNeighborLoader on a link dataset: the same
layers, hidden, fanouts, batch, one uniform negative per positive, dot-product scorer, binary
cross-entropy, Adam; evaluation of the last epoch on full-neighbor embeddings: test AUC and
Hits@50 against the given negatives.
multilabel: a multi-label dataset (labels.npy int8 [N, T], -1 unknown)
in PyG: 2-layer GraphSAGE (mean), hidden 256, dropout 0.5, Adam lr 0.01 and weight decay 5e-4 on
the whole graph, BCEWithLogitsLoss over the training nodes' known labels, OGB's ROC-AUC (per
task over the known labels, averaged over the tasks with both classes) of valid and test after
every epoch; prints the test ROC-AUC at the first epoch of best valid ROC-AUC (as burrow train
--full-graph does).
minibatch: mini-batch GraphSAGE in DGL as burrow train runs it by default (issue 38's main job):
one SAGEConv (mean) per fanout, hidden --hidden, ReLU and dropout 0.5 after each hidden layer,
Adam lr 0.003, cross-entropy over the batch's seeds; features and labels in memory; training
nodes shuffled every epoch, --batch per batch, --max-batches batches per epoch (0 = all), sampled
in the training thread (DGL's DataLoader, num_workers 0); prints each epoch's seconds (sampling,
gathering and compute: the whole loop) and, with --max-batches 0, the test accuracy after the
last epoch on sampled neighborhoods of the same fanouts. Exit status 3 when the library (or the sampler it needs) is not
installed, with the reason on stderr.
"""
import argparse
import json
import os
import sys
import time

import numpy as np


def load(d):
    meta = json.load(open(os.path.join(d, "meta.json")))
    ip = np.load(os.path.join(d, "indptr.npy"))
    ix = np.load(os.path.join(d, "indices.npy")).astype(np.int64)
    x = np.load(os.path.join(d, "features.npy"), mmap_mode="r")
    y = np.load(os.path.join(d, "labels.npy")).astype(np.int64)
    split = {s: np.load(os.path.join(d, "split", s + ".npy")) for s in ("train", "valid", "test")}
    return meta, ip, ix, x, y, split


def missing(what):
    print("peers: %s" % what, file=sys.stderr)
    sys.exit(3)


def full_pyg(a, ip, ix, x, y, split, torch):
    try:
        from torch_geometric.nn import GCNConv, SAGEConv
    except ImportError as e:
        missing("torch_geometric is not installed (%s)" % e)
    n = len(ip) - 1
    src = torch.from_numpy(np.repeat(np.arange(n), np.diff(ip)))
    dst = torch.from_numpy(ix)
    edge_index = torch.stack([dst, src])  # messages from neighbor to node
    conv = (lambda i, o: GCNConv(i, o, cached=True)) if a.model == "gcn" else (lambda i, o: SAGEConv(i, o, aggr="mean"))

    class Net(torch.nn.Module):
        def __init__(self, i, h, o):
            super().__init__()
            self.c1, self.c2 = conv(i, h), conv(h, o)

        def forward(self, xx, ei):
            h = torch.relu(self.c1(xx, ei))
            h = torch.nn.functional.dropout(h, 0.5, self.training)
            return self.c2(h, ei)

    return Net, edge_index


def full(a):
    import torch
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    meta, ip, ix, x, y, split = load(a.dir)
    xt = torch.from_numpy(np.array(x, dtype=np.float32))
    yt = torch.from_numpy(y)
    tr, va, te = (torch.from_numpy(split[s]) for s in ("train", "valid", "test"))
    if a.lib == "pyg":
        Net, graph = full_pyg(a, ip, ix, x, y, split, torch)
        model = Net(xt.shape[1], 256, meta["num_classes"])
        if a.init == "glorot" and a.model == "sage":  # Burrow's SAGE initialization before issue 35
            for c in (model.c1, model.c2):
                for lin in (c.lin_l, c.lin_r):
                    torch.nn.init.xavier_uniform_(lin.weight)
                torch.nn.init.zeros_(c.lin_l.bias)
        fwd = lambda: model(xt, graph)  # noqa: E731
    else:
        try:
            import dgl
            from dgl.nn import GraphConv, SAGEConv
        except Exception as e:  # ImportError, or a DGL whose binary does not match this torch
            missing("dgl is not usable (%s)" % e)
        n = len(ip) - 1
        g = dgl.graph((torch.from_numpy(ix), torch.from_numpy(np.repeat(np.arange(n), np.diff(ip)))), num_nodes=n)
        conv = (lambda i, o: GraphConv(i, o, allow_zero_in_degree=True)) if a.model == "gcn" else \
            (lambda i, o: SAGEConv(i, o, "mean"))

        class Net(torch.nn.Module):
            def __init__(self, i, h, o):
                super().__init__()
                self.c1, self.c2 = conv(i, h), conv(h, o)

            def forward(self):
                h = torch.relu(self.c1(g, xt))
                h = torch.nn.functional.dropout(h, 0.5, self.training)
                return self.c2(g, h)

        model = Net(xt.shape[1], 256, meta["num_classes"])
        fwd = model
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    t0 = time.perf_counter()
    best = (-1.0, 0.0, 0)
    curve = {"valid": [], "test": []}
    for e in range(1, a.epochs + 1):
        model.train()
        opt.zero_grad()
        out = fwd()
        loss = torch.nn.functional.cross_entropy(out[tr], yt[tr])
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            pred = fwd().argmax(1)
            v = (pred[va] == yt[va]).float().mean().item()
            t = (pred[te] == yt[te]).float().mean().item()
        if v > best[0]:  # the first epoch of best valid accuracy, as burrow train reports it
            best = (v, t, e)
        curve["valid"].append(v)
        curve["test"].append(t)
    secs = time.perf_counter() - t0
    res = {"job": "full", "lib": a.lib, "model": a.model, "threads": a.threads, "epochs": a.epochs, "seed": a.seed,
           "seconds": secs, "valid_acc": best[0], "test_acc": best[1], "best_epoch": best[2],
           "last_test_acc": curve["test"][-1] if curve["test"] else 0.0}
    if a.curve:
        res.update(curve)
    print(json.dumps(res))


def rocauc(y, s):
    """OGB's ogbn-proteins ROC-AUC: per task over the rows labelled 0 or 1, ties counted half
    (sklearn's roc_auc_score, written out as the Mann-Whitney U), averaged over the tasks with
    both classes; -1 when there is none."""
    out = []
    for t in range(y.shape[1]):
        k = y[:, t] >= 0
        yt, st = y[k, t], s[k, t]
        npos, nneg = int((yt == 1).sum()), int((yt == 0).sum())
        if npos == 0 or nneg == 0:
            continue
        _, inv, cnt = np.unique(st, return_inverse=True, return_counts=True)
        ranks = (np.cumsum(cnt) - (cnt - 1) / 2)[inv]  # 1-based ranks, the average over each run of ties
        out.append((ranks[yt == 1].sum() - npos * (npos + 1) / 2) / (npos * nneg))
    return float(np.mean(out)) if out else -1.0


def multilabel(a):
    import torch
    try:
        from torch_geometric.nn import SAGEConv
    except ImportError as e:
        missing("torch_geometric is not installed (%s)" % e)
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    ip = np.load(os.path.join(a.dir, "indptr.npy"))
    ix = np.load(os.path.join(a.dir, "indices.npy")).astype(np.int64)
    x = torch.from_numpy(np.array(np.load(os.path.join(a.dir, "features.npy"), mmap_mode="r"), dtype=np.float32))
    y = np.load(os.path.join(a.dir, "labels.npy"))
    split = {s: np.load(os.path.join(a.dir, "split", s + ".npy")) for s in ("train", "valid", "test")}
    n = len(ip) - 1
    edge_index = torch.stack([torch.from_numpy(ix), torch.from_numpy(np.repeat(np.arange(n), np.diff(ip)))])
    tr = torch.from_numpy(split["train"])
    ytr = torch.from_numpy(y[split["train"]].astype(np.float32))
    known = ytr >= 0

    class Net(torch.nn.Module):
        def __init__(self, i, h, o):
            super().__init__()
            self.c1, self.c2 = SAGEConv(i, h, aggr="mean"), SAGEConv(h, o, aggr="mean")

        def forward(self):
            h = torch.relu(self.c1(x, edge_index))
            h = torch.nn.functional.dropout(h, 0.5, self.training)
            return self.c2(h, edge_index)

    model = Net(x.shape[1], 256, y.shape[1])
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    lossf = torch.nn.BCEWithLogitsLoss()
    t0 = time.perf_counter()
    best = (-1.0, -1.0, 0)
    for e in range(1, a.epochs + 1):
        model.train()
        opt.zero_grad()
        out = model()[tr]
        loss = lossf(out[known], ytr[known])
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            z = model().numpy()
        v = rocauc(y[split["valid"]], z[split["valid"]])
        if v > best[0]:
            best = (v, rocauc(y[split["test"]], z[split["test"]]), e)
    print(json.dumps({"job": "multilabel", "lib": "pyg", "model": "sage", "seed": a.seed, "epochs": a.epochs,
                      "seconds": time.perf_counter() - t0, "best_epoch": best[2], "valid_rocauc": best[0],
                      "test_rocauc": best[1]}))


def sample(a):
    import torch
    torch.set_num_threads(a.threads)
    meta, ip, ix, x, y, split = load(a.dir)
    fan = [int(f) for f in a.fanout.split(",")]
    seeds = torch.from_numpy(split["train"])
    n = len(ip) - 1
    if a.lib == "dgl":
        try:
            import dgl
        except Exception as e:
            missing("dgl is not usable (%s)" % e)
        # CSC of the symmetric graph: in-edges of v are its neighbors
        g = dgl.graph(("csc", (torch.from_numpy(ip), torch.from_numpy(ix), torch.tensor([], dtype=torch.int64))),
                      num_nodes=n)
        sampler = dgl.dataloading.NeighborSampler(fan)  # DGL lists fanouts input layer first
        def one(b):  # noqa: E306
            _, _, blocks = sampler.sample_blocks(g, b)
            return sum(blk.num_edges() for blk in blocks)
    else:
        try:
            from torch_geometric.sampler import NeighborSampler as _ns  # noqa: F401
            from torch_geometric.loader import NeighborLoader
            from torch_geometric.data import Data
        except ImportError as e:
            missing("torch_geometric is not installed (%s)" % e)
        src = torch.from_numpy(np.repeat(np.arange(n), np.diff(ip)))
        data = Data(edge_index=torch.stack([torch.from_numpy(ix), src]), num_nodes=n)
        try:
            loader = NeighborLoader(data, num_neighbors=fan[::-1], batch_size=a.batch, input_nodes=seeds,
                                    shuffle=True)
            it = iter(loader)
            next(it)
        except Exception as e:  # PyG samples through pyg-lib or torch-sparse
            missing("PyG's NeighborLoader cannot sample here (%s)" % e)
        def one(b):  # noqa: E306, F811
            return next(it).edge_index.shape[1]
    perm = seeds[torch.randperm(len(seeds), generator=torch.Generator().manual_seed(0))]
    nb = max(1, len(perm) // a.batch)
    batch = lambda i: perm[(i % nb) * a.batch:(i % nb + 1) * a.batch]  # noqa: E731
    one(batch(0))
    one(batch(1))
    edges, k, t0 = 0, 2, time.perf_counter()
    while time.perf_counter() - t0 < a.seconds:
        edges += one(batch(k))
        k += 1
    secs = time.perf_counter() - t0
    print(json.dumps({"job": "sample", "lib": a.lib, "threads": a.threads, "batches": k - 2, "seconds": secs,
                      "edges_per_s": edges / secs}))


def link_split(a):
    meta, ip, ix, x, _, _ = load_graph(a.dir)
    n = len(ip) - 1
    src = np.repeat(np.arange(n), np.diff(ip))
    lo, hi = np.minimum(src, ix), np.maximum(src, ix)
    keep = lo != hi
    e = np.unique(np.stack([lo[keep], hi[keep]], 1), axis=0)
    rng = np.random.default_rng(a.seed)
    e = e[rng.permutation(len(e))]
    nv, nt = int(0.05 * len(e)), int(0.1 * len(e))
    parts = {"train": e[:len(e) - nv - nt], "valid": e[len(e) - nv - nt:len(e) - nt], "test": e[len(e) - nt:]}
    tr = parts["train"]
    both = np.concatenate([tr, tr[:, ::-1]])
    both = both[np.lexsort((both[:, 1], both[:, 0]))]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, both[:, 0] + 1, 1)
    indptr = np.cumsum(indptr)
    os.makedirs(os.path.join(a.out, "edge_split"), exist_ok=True)
    np.save(os.path.join(a.out, "indptr.npy"), indptr)
    np.save(os.path.join(a.out, "indices.npy"), both[:, 1].astype(np.int32))
    f = os.path.join(a.out, "features.npy")
    if not os.path.exists(f):
        os.symlink(os.path.abspath(os.path.join(a.dir, "features.npy")), f)
    for s in ("train", "valid", "test"):
        np.save(os.path.join(a.out, "edge_split", s + "_pos.npy"), parts[s].astype(np.int64))
    for s in ("valid", "test"):
        neg = rng.integers(0, n, size=(len(parts[s]), 2), dtype=np.int64)
        np.save(os.path.join(a.out, "edge_split", s + "_neg.npy"), neg)
    m = {"format": "burrow-dataset", "version": 1, "name": meta["name"] + "-link", "num_nodes": n,
         "num_edges": int(len(both)), "feat_dim": meta["feat_dim"], "feat_dtype": meta.get("feat_dtype", "float32"),
         "num_classes": 0, "symmetric": True,
         "edge_split": {"train": len(tr), "valid": len(parts["valid"]), "test": len(parts["test"]), "neg": "pairs",
                        "valid_neg": len(parts["valid"]), "test_neg": len(parts["test"]), "weight": False,
                        "year": False, "directed": False, "metric": "hits@50"},
         "source": {"link_split": "tools/peers.py link-split", "from": meta["name"], "seed": a.seed}}
    json.dump(m, open(os.path.join(a.out, "meta.json"), "w"))
    print(json.dumps({"job": "link-split", "out": a.out, "train": len(tr), "valid": len(parts["valid"]),
                      "test": len(parts["test"])}))


def load_graph(d):
    meta = json.load(open(os.path.join(d, "meta.json")))
    ip = np.load(os.path.join(d, "indptr.npy"))
    ix = np.load(os.path.join(d, "indices.npy")).astype(np.int64)
    x = np.load(os.path.join(d, "features.npy"), mmap_mode="r")
    return meta, ip, ix, x, None, None


def hits_at(pos, neg, k):
    if len(neg) < k:
        return 1.0
    bar = np.sort(neg)[-k]
    return float((pos > bar).mean())


def auc(pos, neg):
    s = np.concatenate([pos, neg])
    order = s.argsort(kind="mergesort")
    ranks = np.empty(len(s))
    sv = s[order]
    i = 0
    while i < len(s):  # average ranks of ties
        j = i
        while j + 1 < len(s) and sv[j + 1] == sv[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def numpy_neighbor_sampler(data, num_neighbors):
    """PyG's NeighborSampler with its sampling kernel (pyg-lib's or torch-sparse's neighbor_sample:
    per hop, each frontier node's in-neighbors drawn uniformly without replacement, new nodes
    numbered in the order met) written in numpy, for a PyG installed without either."""
    import torch
    from torch_geometric.sampler import NeighborSampler, SamplerOutput

    class NumpyNeighborSampler(NeighborSampler):
        def _sample(self, seed, seed_time=None, **kwargs):
            colptr, row = self.colptr.numpy(), self.row.numpy()
            gen = np.random.default_rng(int(torch.randint(0, 2 ** 62, (1,))))
            nodes = [int(v) for v in seed.numpy()]
            local = {v: i for i, v in enumerate(nodes)}
            rows, cols, edges, n_nodes, n_edges = [], [], [], [len(nodes)], []
            lo = 0
            for k in self.num_neighbors.get_mapped_values():
                hi, ne = len(nodes), 0
                for i in range(lo, hi):
                    v = nodes[i]
                    s, e = colptr[v], colptr[v + 1]
                    pick = np.arange(s, e) if k < 0 or e - s <= k else s + gen.choice(e - s, k, replace=False)
                    for p in pick:
                        u = int(row[p])
                        if u not in local:
                            local[u] = len(nodes)
                            nodes.append(u)
                        rows.append(local[u])
                        cols.append(i)
                        edges.append(int(p))
                    ne += len(pick)
                n_nodes.append(len(nodes) - hi)
                n_edges.append(ne)
                lo = hi
            t = lambda x: torch.tensor(x, dtype=torch.int64)  # noqa: E731
            return SamplerOutput(node=t(nodes), row=t(rows), col=t(cols), edge=t(edges), batch=None,
                                 num_sampled_nodes=n_nodes, num_sampled_edges=n_edges)

    return NumpyNeighborSampler(data, num_neighbors=num_neighbors)


def link_batches(ip, ix, pos, a, fan, torch):
    """Burrow's edge batches (sampler/edge.c) in numpy, each behaviour a switch of link's: the
    training positives shuffled, batch k taking a.batch of them; per positive (u, v) one negative,
    (u, w) with w uniform (neg_mode dst, Burrow's) or a pair of two uniform nodes (both,
    LinkNeighborLoader's binary sampling); the pairs' distinct endpoints the seeds of ONE
    neighborhood; with a.exclude the batch's positives and their reverses left out of every
    row's draw (the row draws among its other entries); with a.blocks one bipartite block per
    layer, every node of the layer above drawing afresh (Burrow's and DGL's blocks, PyG's legacy
    NeighborSampler `adjs`), else PyG's one subgraph (each hop draws for the new nodes only, all
    layers pass messages over it). Yields (n_id, adjs or [(edge_index, None)], pair index [2, P],
    label); draws from numpy's generator seeded by torch's, as PyG's sampler does here."""
    n = len(ip) - 1
    gen = np.random.default_rng(int(torch.randint(0, 2 ** 62, (1,))))
    perm = torch.randperm(len(pos)).numpy()
    for first in range(0, len(pos), a.batch):
        p = pos[perm[first:first + a.batch]]
        m = len(p)
        if a.neg_mode == "dst":
            q = np.stack([p[:, 0], gen.integers(0, n, m)], 1)
        else:
            q = gen.integers(0, n, (m, 2))
        pairs = np.concatenate([p, q])
        seeds, inv = np.unique(pairs.reshape(-1), return_inverse=True)
        ex = {}  # node -> the neighbors its row leaves out
        if a.exclude:
            for u, v in p:
                ex.setdefault(int(u), set()).add(int(v))
                ex.setdefault(int(v), set()).add(int(u))
        nodes = [int(v) for v in seeds]
        local = {v: i for i, v in enumerate(nodes)}
        adjs, rows, cols, lo = [], [], [], 0
        for k in (fan[::-1]):  # the output layer's fanout first
            hi = len(nodes)
            if a.blocks:
                lo, rows, cols = 0, [], []
            for i in range(lo, hi):
                v = nodes[i]
                row = ix[ip[v]:ip[v + 1]]
                if v in ex:
                    row = row[~np.isin(row, list(ex[v]))]
                pick = row if k < 0 or len(row) <= k else row[gen.choice(len(row), k, replace=False)]
                for u in pick:
                    u = int(u)
                    if u not in local:
                        local[u] = len(nodes)
                        nodes.append(u)
                    rows.append(local[u])
                    cols.append(i)
            if a.blocks:
                adjs.insert(0, (torch.tensor([rows, cols], dtype=torch.int64).view(2, -1), hi))
            lo = hi
        if not a.blocks:
            adjs = [(torch.tensor([rows, cols], dtype=torch.int64).view(2, -1), None)]
        label = torch.cat([torch.ones(m), torch.zeros(m)])
        yield torch.tensor(nodes), adjs, torch.from_numpy(inv.reshape(-1, 2).T.copy()), label


def link(a):
    import torch
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    try:
        from torch_geometric.data import Data
        from torch_geometric.loader import LinkNeighborLoader
        from torch_geometric.nn import SAGEConv
    except ImportError as e:
        missing("torch_geometric is not installed (%s)" % e)
    meta, ip, ix, x, _, _ = load_graph(a.dir)
    n = len(ip) - 1
    es = {s: np.load(os.path.join(a.dir, "edge_split", s + "_pos.npy")) for s in ("train", "valid", "test")}
    neg = {s: np.load(os.path.join(a.dir, "edge_split", s + "_neg.npy")) for s in ("valid", "test")}
    xt = torch.from_numpy(np.array(x, dtype=np.float32))
    src = torch.from_numpy(np.repeat(np.arange(n), np.diff(ip)))
    data = Data(x=xt, edge_index=torch.stack([torch.from_numpy(ix), src]), num_nodes=n)
    fan = [int(f) for f in a.fanout.split(",")]
    tr = torch.from_numpy(es["train"]).t().contiguous()
    import torch_geometric.typing as pt
    kw = {}
    if not (pt.WITH_PYG_LIB or pt.WITH_TORCH_SPARSE):  # PyG samples through either; else the same draws in numpy
        kw["neighbor_sampler"] = numpy_neighbor_sampler(data, fan[::-1])
    try:
        loader = LinkNeighborLoader(data, num_neighbors=fan[::-1], edge_label_index=tr, batch_size=a.batch,
                                    neg_sampling_ratio=1.0, shuffle=True, **kw)
        next(iter(loader))
    except Exception as e:
        missing("PyG's LinkNeighborLoader cannot sample here (%s)" % e)
    L = len(fan)

    class Enc(torch.nn.Module):
        def __init__(self, i, h):
            super().__init__()
            self.convs = torch.nn.ModuleList([SAGEConv(i if l == 0 else h, h) for l in range(L)])
            if a.init == "glorot":  # Burrow's: Glorot-uniform W and W_neigh, zero bias
                for c in self.convs:
                    torch.nn.init.xavier_uniform_(c.lin_l.weight)
                    torch.nn.init.xavier_uniform_(c.lin_r.weight)
                    torch.nn.init.zeros_(c.lin_l.bias)

        def forward(self, xx, adjs):  # adjs: one edge_index for every layer, or one block per layer
            for l, c in enumerate(self.convs):
                ei, nd = adjs[l] if len(adjs) > 1 else adjs[0]
                xx = c(xx, ei) if nd is None else c((xx, xx[:nd]), ei)
                if l < L - 1:
                    xx = torch.nn.functional.dropout(torch.relu(xx), a.dropout, self.training)
            return xx

    model = Enc(xt.shape[1], a.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    own = a.exclude or a.blocks or a.neg_mode == "dst"
    pos = es["train"].astype(np.int64)

    def batches():
        if not own:  # LinkNeighborLoader as PyG ships it
            for b in loader:
                yield b.x, [(b.edge_index, None)], b.edge_label_index, b.edge_label
            return
        for nid, adjs, eli, lab in link_batches(ip, ix, pos, a, fan, torch):
            yield xt[nid], adjs, eli, lab

    t0 = time.perf_counter()
    for _ in range(a.epochs):
        model.train()
        for bx, badj, beli, blab in batches():
            opt.zero_grad()
            h = model(bx, badj)
            s = (h[beli[0]] * h[beli[1]]).sum(-1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(s, blab)
            loss.backward()
            opt.step()
    secs = time.perf_counter() - t0
    model.eval()
    with torch.no_grad():
        h = model(xt, [(data.edge_index, None)])
        score = lambda e: (h[e[:, 0]] * h[e[:, 1]]).sum(-1).numpy()  # noqa: E731
        out = {}
        for s in ("valid", "test"):
            p, q = score(torch.from_numpy(es[s])), score(torch.from_numpy(neg[s]))
            out[s + "_auc"], out[s + "_hits50"] = auc(p, q), hits_at(p, q, 50)
    print(json.dumps({"job": "link", "lib": "pyg", "seed": a.seed, "epochs": a.epochs, "seconds": secs,
                      "exclude": a.exclude, "neg_mode": a.neg_mode, "blocks": a.blocks, "init": a.init, **out}))


def minibatch(a):
    import torch
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    try:
        import dgl
        import torch.nn.functional as F
        from dgl.nn import SAGEConv
    except Exception as e:
        missing("dgl is not usable (%s)" % e)
    meta, ip, ix, x, y, split = load(a.dir)
    n = len(ip) - 1
    g = dgl.graph(("csc", (torch.from_numpy(ip), torch.from_numpy(ix), torch.tensor([], dtype=torch.int64))),
                  num_nodes=n)
    feat = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    lab = torch.from_numpy(y)
    fan = [int(f) for f in a.fanout.split(",")]
    dims = [feat.shape[1]] + [a.hidden] * (len(fan) - 1) + [int(meta["num_classes"])]

    class Sage(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(SAGEConv(dims[i], dims[i + 1], "mean") for i in range(len(fan)))

        def forward(self, blocks, h):
            for i, (layer, blk) in enumerate(zip(self.layers, blocks)):
                h = layer(blk, h)
                if i < len(self.layers) - 1:
                    h = F.dropout(F.relu(h), 0.5, self.training)
            return h

    model = Sage()
    opt = torch.optim.Adam(model.parameters(), lr=0.003)
    sampler = dgl.dataloading.NeighborSampler(fan)  # input layer first, as Burrow's --fanout

    def loader(nodes, shuffle):
        return dgl.dataloading.DataLoader(g, torch.from_numpy(nodes), sampler, batch_size=a.batch,
                                          shuffle=shuffle, drop_last=False, num_workers=0)
    times = []
    for _ in range(a.epochs):
        model.train()
        t0 = time.perf_counter()
        for k, (inp, out, blocks) in enumerate(loader(split["train"], True)):
            if a.max_batches and k == a.max_batches:
                break
            loss = F.cross_entropy(model(blocks, feat[inp]), lab[out])
            opt.zero_grad()
            loss.backward()
            opt.step()
        times.append(time.perf_counter() - t0)
    res = {"job": "minibatch", "lib": "dgl", "threads": a.threads, "epochs": a.epochs,
           "max_batches": a.max_batches, "seconds": times}
    if not a.max_batches:
        model.eval()
        right = total = 0
        with torch.no_grad():
            for inp, out, blocks in loader(split["test"], False):
                right += int((model(blocks, feat[inp]).argmax(1) == lab[out]).sum())
                total += len(out)
        res["test_acc"] = right / max(total, 1)
    print(json.dumps(res))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("job", choices=["full", "sample", "link-split", "link", "multilabel", "minibatch"])
    p.add_argument("dir")
    p.add_argument("--lib", choices=["pyg", "dgl"], default="pyg")
    p.add_argument("--model", choices=["gcn", "sage"], default="gcn")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--fanout", default="15,10,5")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--seconds", type=float, default=3)
    p.add_argument("--max-batches", type=int, default=0, help="minibatch: batches per epoch (0 = all)")
    p.add_argument("--out", help="link-split: the link dataset directory to write")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--curve", action="store_true", help="full: print the per-epoch valid and test accuracy too")
    p.add_argument("--neg-mode", choices=["both", "dst"], default="both",
                   help="link: a negative is two uniform nodes (both, LinkNeighborLoader's) or (u, w), w uniform (dst)")
    p.add_argument("--exclude", action="store_true",
                   help="link: leave each batch's positives and their reverses out of its neighborhoods")
    p.add_argument("--blocks", action="store_true",
                   help="link: one block per layer, every node drawing afresh (else PyG's one subgraph)")
    p.add_argument("--init", choices=["pyg", "glorot"], default="pyg",
                   help="full (pyg sage) and link: PyG's SAGEConv initialization, or Glorot-uniform weights and zero bias")
    p.add_argument("--like-burrow", action="store_true",
                   help="link: --neg-mode dst --exclude --blocks, Burrow's method (its SAGE initializes as PyG's since issue 35)")
    a = p.parse_args()
    if a.like_burrow:
        a.neg_mode, a.exclude, a.blocks = "dst", True, True
    {"full": full, "sample": sample, "link-split": link_split, "link": link, "multilabel": multilabel,
     "minibatch": minibatch}[a.job](a)


if __name__ == "__main__":
    main()
