#!/usr/bin/env python3
"""pyg_sage.py: PyG's own GraphSAGE trained through Burrow (burrow.pyg: Burrow's sampler and its
SSD feature store behind a NodeLoader), against the same model trained full-batch on PyG's own
full-neighbor Data, on the same split; prints both test accuracies per seed and their means.

    python examples/pyg_sage.py DATASET_DIR [--seeds 0-4] [--epochs 50]"""
import argparse
import statistics

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.data import Data
from torch_geometric.nn.models import GraphSAGE

import burrow
from burrow.pyg import loader


def model_for(ds, seed, hidden):
    torch.manual_seed(seed)
    return GraphSAGE(ds.feat_dim, hidden, num_layers=2, out_channels=ds.num_classes, dropout=0.5)


def accuracy(model, full, ids):
    model.eval()
    with torch.no_grad():
        pred = model(full.x, full.edge_index).argmax(-1)
    return float((pred[ids] == full.y[ids]).float().mean())


def train_burrow(ds, full, seed, args):
    model = model_for(ds, seed, args.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)
    torch.manual_seed(seed)
    batches = loader(ds, ds.split("train"), num_neighbors=[10, 10], batch_size=args.batch, shuffle=True, seed=seed)
    for _ in range(args.epochs):
        model.train()
        for b in batches:
            opt.zero_grad()
            out = model(b.x, b.edge_index)[:b.batch_size]
            F.cross_entropy(out, b.y[:b.batch_size]).backward()
            opt.step()
    return accuracy(model, full, full.test_ids)


def train_full(ds, full, seed, args):
    model = model_for(ds, seed, args.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)
    steps = args.epochs * -(-len(full.train_ids) // args.batch)  # as many steps as the mini-batch run
    for _ in range(steps):
        model.train()
        opt.zero_grad()
        out = model(full.x, full.edge_index)[full.train_ids]
        F.cross_entropy(out, full.y[full.train_ids]).backward()
        opt.step()
    return accuracy(model, full, full.test_ids)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", help="a Burrow dataset directory (e.g. burrow prep of ogbn-cora)")
    ap.add_argument("--seeds", default="0-4", help="first-last (0-4)")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.01)
    args = ap.parse_args()
    lo, _, hi = args.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    torch.set_num_threads(1)  # Cora is small: one thread is fastest on a shared machine

    ds = burrow.Dataset(args.dataset)
    # PyG's own full-neighbor data: the whole graph in memory
    indptr, indices = np.asarray(ds.indptr), np.asarray(ds.indices, dtype=np.int64)
    dst = np.repeat(np.arange(ds.num_nodes), np.diff(indptr))
    full = Data(x=torch.from_numpy(np.array(ds.features, dtype=np.float32)),
                edge_index=torch.from_numpy(np.stack([indices, dst])),
                y=torch.from_numpy(np.asarray(ds.labels, dtype=np.int64)))
    full.train_ids = torch.from_numpy(np.array(ds.split("train")))
    full.test_ids = torch.from_numpy(np.array(ds.split("test")))

    accs_b, accs_f = [], []
    for s in seeds:
        accs_b.append(train_burrow(ds, full, s, args))
        accs_f.append(train_full(ds, full, s, args))
        print("seed %d: burrow.pyg %.4f   pyg full-neighbor %.4f" % (s, accs_b[-1], accs_f[-1]), flush=True)
    mb, mf = statistics.mean(accs_b), statistics.mean(accs_f)
    print("mean test accuracy: burrow.pyg %.4f   pyg full-neighbor %.4f   difference %+.2f points"
          % (mb, mf, 100 * (mb - mf)))


if __name__ == "__main__":
    main()
