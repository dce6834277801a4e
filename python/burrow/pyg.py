"""burrow.pyg: PyG over Burrow: a BaseSampler on Burrow's sampler and a FeatureStore on Burrow's
io_uring store, so NodeLoader trains on SSD-resident features without pyg-lib.

    from burrow.pyg import loader
    for data in loader(ds, ds.split("train"), num_neighbors=[10, 5], batch_size=512, shuffle=True):
        out = model(data.x, data.edge_index)[:data.batch_size]"""
import itertools

import numpy as np
import torch
from torch_geometric.data import EdgeAttr, FeatureStore, GraphStore, TensorAttr
from torch_geometric.loader import NodeLoader
from torch_geometric.sampler import BaseSampler, NodeSamplerInput, SamplerOutput

import burrow


class BurrowFeatureStore(FeatureStore):
    """Node attributes of a Burrow dataset: "x" gathered by burrow.FeatureStore (O_DIRECT reads,
    optional row cache), "y" the labels. Read-only."""

    def __init__(self, dataset, cache_bytes=None, engine="uring"):
        super().__init__()
        self.dataset = burrow._dataset(dataset)
        self.store = burrow.FeatureStore(self.dataset, cache_bytes=cache_bytes, engine=engine)
        self._y = torch.from_numpy(np.asarray(self.dataset.labels, dtype=np.int64)) \
            if self.dataset.num_classes else None

    def _index(self, attr):
        idx = attr.index
        if idx is None or (isinstance(idx, slice) and idx == slice(None)):
            return np.arange(self.dataset.num_nodes, dtype=np.int64)
        return idx.numpy() if isinstance(idx, torch.Tensor) else np.asarray(idx)

    def _get_tensor(self, attr):
        if attr.attr_name == "x":
            return torch.from_numpy(self.store.gather(self._index(attr)))
        if attr.attr_name == "y" and self._y is not None:
            return self._y[torch.from_numpy(self._index(attr))]
        return None

    def _put_tensor(self, tensor, attr):
        raise burrow.Error("BurrowFeatureStore is read-only", -1)

    def _remove_tensor(self, attr):
        raise burrow.Error("BurrowFeatureStore is read-only", -1)

    def _get_tensor_size(self, attr):
        if attr.attr_name == "x":
            return (self.dataset.num_nodes, self.dataset.feat_dim)
        if attr.attr_name == "y" and self._y is not None:
            return (self.dataset.num_nodes,)
        return None

    def get_all_tensor_attrs(self):
        names = ["x"] + (["y"] if self._y is not None else [])
        return [TensorAttr(group_name=None, attr_name=n) for n in names]


class BurrowGraphStore(GraphStore):
    """The dataset's graph as PyG's GraphStore (CSR, memory-mapped)."""

    def __init__(self, dataset):
        super().__init__()
        self.dataset = burrow._dataset(dataset)
        n = self.dataset.num_nodes
        self._attr = EdgeAttr(edge_type=None, layout="csr", size=(n, n))

    def _put_edge_index(self, edge_index, edge_attr):
        raise burrow.Error("BurrowGraphStore is read-only", -1)

    def _remove_edge_index(self, edge_attr):
        raise burrow.Error("BurrowGraphStore is read-only", -1)

    def _get_edge_index(self, edge_attr):
        return (torch.from_numpy(np.asarray(self.dataset.indptr)),
                torch.from_numpy(np.asarray(self.dataset.indices, dtype=np.int64)))

    def get_all_edge_attrs(self):
        return [self._attr]


class BurrowSampler(BaseSampler):
    """PyG's BaseSampler over Burrow's neighbor sampler. num_neighbors is PyG's order (hop 1
    first); the output is NeighborLoader's layout (n_id seeds first, edges by hop,
    num_sampled_nodes / num_sampled_edges). Each call draws with a fresh key from `seed`."""

    def __init__(self, dataset, num_neighbors, seed=0):
        self.dataset = burrow._dataset(dataset)
        self.num_neighbors = list(num_neighbors)
        self.sampler = burrow.Sampler(self.dataset, fanouts=self.num_neighbors[::-1], seed=seed, prefetch=0,
                                      ids=np.empty(0, np.int64))
        self._keys = itertools.count()

    def sample_from_nodes(self, inputs: NodeSamplerInput, **kwargs) -> SamplerOutput:
        seeds = inputs.node.numpy().astype(np.int64)
        # PyG batches may repeat a seed; Burrow's sampler wants distinct seeds
        useeds, inv = np.unique(seeds, return_inverse=True)
        if len(useeds) != len(seeds):
            raise burrow.Error("BurrowSampler: a batch's seed nodes must be distinct", -1)
        b = self.sampler.sample(seeds, key=next(self._keys))
        edges, nodes = b.hops()
        row = np.concatenate([e[0] for e in edges])
        col = np.concatenate([e[1] for e in edges])
        return SamplerOutput(node=torch.from_numpy(np.array(b.input_ids)), row=torch.from_numpy(row),
                             col=torch.from_numpy(col), edge=None, batch=None, num_sampled_nodes=nodes,
                             num_sampled_edges=[len(e[0]) for e in edges],
                             metadata=(inputs.input_id, inputs.time))

    def sample_from_edges(self, index, neg_sampling=None):
        raise NotImplementedError("BurrowSampler samples from nodes only")


def loader(dataset, input_nodes, num_neighbors, batch_size=1024, shuffle=False, seed=0, cache_bytes=None,
           engine="uring", **kwargs):
    """A NodeLoader whose batches come from Burrow's sampler with features from Burrow's store:
    each Data has x, y, edge_index, n_id, batch_size as NeighborLoader's."""
    ds = burrow._dataset(dataset)
    fs = BurrowFeatureStore(ds, cache_bytes=cache_bytes, engine=engine)
    gs = BurrowGraphStore(ds)
    nodes = torch.from_numpy(np.array(input_nodes, dtype=np.int64))
    return NodeLoader((fs, gs), node_sampler=BurrowSampler(ds, num_neighbors, seed=seed), input_nodes=nodes,
                      batch_size=batch_size, shuffle=shuffle, **kwargs)
