"""Link prediction from Python: a link dataset's edge splits, the edge sampler, burrow.pyg's link
loader in LinkNeighborLoader's layout, and Trainer(task="link")."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import burrow
from conftest import ROOT


@pytest.fixture(scope="session")
def link(tmp_path_factory, csbm):
    out = tmp_path_factory.mktemp("link") / "csbm-link"
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "peers.py"), "link-split", csbm.path, "--out", str(out),
                    "--seed", "2"], check=True, capture_output=True)
    return burrow.Dataset(out)


def test_link_dataset_edge_splits(link, csbm):
    assert link.has_edge_split and not csbm.has_edge_split
    tr, va = link.edge_split("train"), link.edge_split("valid")
    assert tr["pos"].shape[1] == 2 and 2 * len(tr["pos"]) == link.num_edges
    assert va["neg"] == "pairs" and va["neg_pairs"].shape == va["pos"].shape and va["metric"] == "hits@50"
    assert tr["neg_pairs"] is None and tr["weight"] is None
    with pytest.raises(burrow.Error):
        csbm.edge_split("train")


def test_link_loader_batches_have_linkneighborloader_s_layout(link):
    pytest.importorskip("torch_geometric")
    import torch
    from burrow.pyg import link_loader
    tr = link.edge_split("train")["pos"]
    train = {(int(u), int(v)) for u, v in tr} | {(int(v), int(u)) for u, v in tr}
    x = np.load(os.path.join(link.path, "features.npy"))
    ip, ix = np.asarray(link.indptr), np.asarray(link.indices)
    seen = 0
    for d in link_loader(link, num_neighbors=[5, 5], batch_size=200, neg=2, seed=1, epoch=0):
        n_id = d.n_id.numpy()
        P = d.edge_label_index.shape[1]
        pos = int(d.edge_label.sum())
        assert P == 3 * pos and torch.all(d.edge_label[:pos] == 1) and torch.all(d.edge_label[pos:] == 0)
        u, v = n_id[d.edge_label_index[0].numpy()], n_id[d.edge_label_index[1].numpy()]
        assert all((int(a), int(b)) in train for a, b in zip(u[:pos], v[:pos]))
        assert np.array_equal(u[pos:], np.repeat(u[:pos], 2))
        assert np.allclose(d.x.numpy(), x[n_id])
        s, t = n_id[d.edge_index[0].numpy()], n_id[d.edge_index[1].numpy()]
        batch = {(int(a), int(b)) for a, b in zip(u[:pos], v[:pos])}
        for a, b in zip(t, s):  # every message edge is a graph edge, none the batch's own
            assert b in ix[ip[a]:ip[a + 1]]
            assert (int(a), int(b)) not in batch and (int(b), int(a)) not in batch
        seen += pos
    assert seen == len(tr)


def test_trainer_link_learns_and_embeds(link):
    t = burrow.Trainer(link, task="link", layers=2, hidden=32, fanout=[10, 5], batch=256, lr=0.01, dropout=0,
                       epochs=3, threads=1, scorer="dot", neg=1)
    st = t.train(evaluate=True)
    ev = st["eval"]
    assert ev["metric"] == 2 and ev["metric_k"] == 50  # BURROW_METRIC_HITS
    assert ev["test_auc"] > 0.6 and 0 <= ev["test_acc"] <= 1
    emb = t.embed()
    assert emb.shape == (link.num_nodes, 32)
    with pytest.raises(burrow.Error):
        burrow.Trainer(link, task="link", scorer="cosine")
