"""burrow.pyg: PyG over Burrow: a BaseSampler on Burrow's sampler and a FeatureStore on Burrow's
io_uring store, so NodeLoader trains on SSD-resident features without pyg-lib. On a typed
dataset the same loader gives HeteroData batches (the hetero NeighborLoader's layout) from
Burrow's typed sampler, for PyG's to_hetero models.

    from burrow.pyg import loader
    for data in loader(ds, ds.split("train"), num_neighbors=[10, 5], batch_size=512, shuffle=True):
        out = model(data.x, data.edge_index)[:data.batch_size]

    t = typed_ds.target_type
    for data in loader(typed_ds, typed_ds.split("train"), num_neighbors=[10, 5], batch_size=512):
        out = hetero_model(data.x_dict, data.edge_index_dict)[t][:data[t].batch_size]"""
import itertools

import numpy as np
import torch
from torch_geometric.data import EdgeAttr, FeatureStore, GraphStore, TensorAttr
from torch_geometric.loader import NodeLoader
from torch_geometric.sampler import BaseSampler, HeteroSamplerOutput, NodeSamplerInput, SamplerOutput

import burrow


class BurrowFeatureStore(FeatureStore):
    """Node attributes of a Burrow dataset: "x" gathered by burrow.FeatureStore (O_DIRECT reads,
    optional row cache), "y" the labels. Read-only. On a typed dataset the attributes are grouped
    by node type: "x" of each type that has features (one store each; cache_bytes per type, CLOCK),
    "y" of the target type; a featureless type has none (its batches carry n_id only)."""

    def __init__(self, dataset, cache_bytes=None, engine="uring"):
        super().__init__()
        self.dataset = ds = burrow._dataset(dataset)
        y = torch.from_numpy(np.asarray(ds.labels, dtype=np.int64)) if ds.num_classes else None
        if ds.typed:
            self.stores = {t: burrow.FeatureStore(ds, node_type=t, cache_bytes=cache_bytes, engine=engine,
                                                  cache_policy="clock")
                           for t in ds.node_types if ds.node_type(t).feat_dim}
            self._y = {ds.target_type: y} if y is not None else {}
            self._num = ds.num_nodes_dict
        else:
            self.stores = {None: burrow.FeatureStore(ds, cache_bytes=cache_bytes, engine=engine)}
            self._y = {None: y} if y is not None else {}
            self._num = {None: ds.num_nodes}
        self.store = self.stores.get(None)  # the homogeneous dataset's store

    def _index(self, attr):
        idx = attr.index
        if idx is None or (isinstance(idx, slice) and idx == slice(None)):
            return np.arange(self._num[attr.group_name], dtype=np.int64)
        return idx.numpy() if isinstance(idx, torch.Tensor) else np.asarray(idx)

    def _get_tensor(self, attr):
        g = attr.group_name
        if attr.attr_name == "x" and g in self.stores:
            return torch.from_numpy(self.stores[g].gather(self._index(attr)))
        if attr.attr_name == "y" and g in self._y:
            return self._y[g][torch.from_numpy(self._index(attr))]
        return None

    def _put_tensor(self, tensor, attr):
        raise burrow.Error("BurrowFeatureStore is read-only", -1)

    def _remove_tensor(self, attr):
        raise burrow.Error("BurrowFeatureStore is read-only", -1)

    def _get_tensor_size(self, attr):
        g = attr.group_name
        if attr.attr_name == "x" and g in self.stores:
            return (self._num[g], self.stores[g].dim)
        if attr.attr_name == "y" and g in self._y:
            return (self._num[g],)
        return None

    def get_all_tensor_attrs(self):
        return [TensorAttr(group_name=g, attr_name="x") for g in self.stores] + \
               [TensorAttr(group_name=g, attr_name="y") for g in self._y]


class BurrowGraphStore(GraphStore):
    """The dataset's graph as PyG's GraphStore (CSR, memory-mapped); a typed dataset's relations
    as one CSC edge type each (stored by destination: colptr over dst nodes, src-type rows)."""

    def __init__(self, dataset):
        super().__init__()
        self.dataset = ds = burrow._dataset(dataset)
        if ds.typed:
            n = ds.num_nodes_dict
            self._attrs = [EdgeAttr(edge_type=et, layout="csc", size=(n[et[0]], n[et[2]])) for et in ds.edge_types]
        else:
            self._attrs = [EdgeAttr(edge_type=None, layout="csr", size=(ds.num_nodes, ds.num_nodes))]

    def _put_edge_index(self, edge_index, edge_attr):
        raise burrow.Error("BurrowGraphStore is read-only", -1)

    def _remove_edge_index(self, edge_attr):
        raise burrow.Error("BurrowGraphStore is read-only", -1)

    def _get_edge_index(self, edge_attr):
        if not self.dataset.typed:
            return (torch.from_numpy(np.asarray(self.dataset.indptr)),
                    torch.from_numpy(np.asarray(self.dataset.indices, dtype=np.int64)))
        indptr, indices = self.dataset.relation(edge_attr.edge_type)
        return torch.from_numpy(np.array(indices, dtype=np.int64)), torch.from_numpy(np.array(indptr))

    def get_all_edge_attrs(self):
        return list(self._attrs)


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


class BurrowHeteroSampler(BaseSampler):
    """PyG's BaseSampler over Burrow's typed sampler. num_neighbors is PyG's order (hop 1 first):
    a list for every relation, or {edge type: list} naming every relation. The output is the hetero
    NeighborLoader's layout: per node type the sampled type-local ids (the seeds first on the
    target type, then each hop's new nodes), per edge type the edges of every hop with each
    node's sampled in-edges once (TypedBatch.hops), num_sampled_nodes / num_sampled_edges. Each
    call draws with a fresh key from `seed`."""

    def __init__(self, dataset, num_neighbors, seed=0):
        self.dataset = ds = burrow._dataset(dataset)
        if isinstance(num_neighbors, dict):
            per = {ds.edge_type(et): list(fs) for et, fs in num_neighbors.items()}
            if set(per) != set(ds.edge_types) or len({len(fs) for fs in per.values()}) != 1:
                raise burrow.Error("BurrowHeteroSampler: num_neighbors as a dict names every relation (%s) with "
                                   "as many hops each" % ", ".join("%s___%s___%s" % e for e in ds.edge_types), -1)
            hops = len(next(iter(per.values())))
            fanouts, rel = [0] * hops, {et: fs[::-1] for et, fs in per.items()}
        else:
            fanouts, rel = list(num_neighbors)[::-1], None
        self.num_neighbors = num_neighbors
        self.sampler = burrow.TypedSampler(ds, fanouts=fanouts, rel_fanouts=rel, seed=seed, shuffle=False,
                                           ids=np.empty(0, np.int64))
        self._keys = itertools.count()

    def sample_from_nodes(self, inputs: NodeSamplerInput, **kwargs) -> HeteroSamplerOutput:
        seeds = inputs.node.numpy().astype(np.int64)
        if len(np.unique(seeds)) != len(seeds):
            raise burrow.Error("BurrowHeteroSampler: a batch's seed nodes must be distinct", -1)
        b = self.sampler.sample(seeds, key=next(self._keys))
        edges, nodes = b.hops()
        cat = lambda hop, i: torch.from_numpy(np.concatenate([e[i] for e in hop]))  # noqa: E731
        return HeteroSamplerOutput(
            node={t: torch.from_numpy(np.array(b.input_ids[t])) for t in b.node_types},
            row={et: cat(edges[et], 0) for et in b.edge_types}, col={et: cat(edges[et], 1) for et in b.edge_types},
            edge=None, batch=None, num_sampled_nodes=nodes,
            num_sampled_edges={et: [len(e[0]) for e in edges[et]] for et in b.edge_types},
            metadata=(inputs.input_id, inputs.time))

    def sample_from_edges(self, index, neg_sampling=None):
        raise NotImplementedError("BurrowHeteroSampler samples from nodes only")


def loader(dataset, input_nodes, num_neighbors, batch_size=1024, shuffle=False, seed=0, cache_bytes=None,
           engine="uring", **kwargs):
    """A NodeLoader whose batches come from Burrow's sampler with features from Burrow's store:
    each Data has x, y, edge_index, n_id, batch_size as NeighborLoader's. On a typed dataset
    input_nodes are target-type ids (or (target type, ids)) and each batch is a HeteroData as the
    hetero NeighborLoader's: per node type n_id and x (a featureless type: n_id only; give it an
    embedding of n_id), y on the target type, per edge type edge_index (row 0 source, row 1
    destination, local into each type's n_id), batch_size on the target type."""
    ds = burrow._dataset(dataset)
    fs = BurrowFeatureStore(ds, cache_bytes=cache_bytes, engine=engine)
    gs = BurrowGraphStore(ds)
    if ds.typed:
        if isinstance(input_nodes, tuple) and len(input_nodes) == 2 and isinstance(input_nodes[0], str):
            if input_nodes[0] != ds.target_type:
                raise burrow.Error("loader: input nodes of type %r; the typed sampler's seeds are of the target "
                                   "type %r" % (input_nodes[0], ds.target_type), -1)
            input_nodes = input_nodes[1]
        sampler = BurrowHeteroSampler(ds, num_neighbors, seed=seed)
        nodes = (ds.target_type, torch.from_numpy(np.array(input_nodes, dtype=np.int64)))
    else:
        sampler = BurrowSampler(ds, num_neighbors, seed=seed)
        nodes = torch.from_numpy(np.array(input_nodes, dtype=np.int64))
    return NodeLoader((fs, gs), node_sampler=sampler, input_nodes=nodes, batch_size=batch_size, shuffle=shuffle,
                      **kwargs)


def link_loader(dataset, num_neighbors, batch_size=1024, neg=1, shuffle=True, seed=0, epoch=None, edges=None,
                cache_bytes=None, engine="uring"):
    """Edge mini-batches for link prediction as torch_geometric Data in LinkNeighborLoader's
    layout, from Burrow's edge sampler (the batch's positives and their reverses excluded from its
    sampled neighborhood) with features from Burrow's store: n_id (global ids: the pairs'
    endpoints first, sorted), x, edge_index [2, E] local (row 0 source, row 1 destination, by
    hop), edge_label_index [2, P] local into n_id (positives first, then `neg` negatives per
    positive), edge_label [P] (1.0 / 0.0), input_id (the positives' rows in the training edges),
    num_sampled_nodes / num_sampled_edges. num_neighbors is PyG's order (hop 1 first). Iterating
    yields epoch 0, then 1, ... (epoch=e: that epoch only); shuffle=False is not offered (batches
    are drawn per epoch from seed)."""
    ds = burrow._dataset(dataset)
    if not shuffle:
        raise burrow.Error("link_loader: the edge sampler shuffles each epoch from its seed (shuffle=True)", -1)
    sampler = burrow.EdgeSampler(ds, fanouts=list(num_neighbors)[::-1], batch_size=batch_size, neg=neg, seed=seed,
                                 edges=edges)
    fs = BurrowFeatureStore(ds, cache_bytes=cache_bytes, engine=engine)
    return _LinkLoader(sampler, fs, epoch)


class _LinkLoader:
    def __init__(self, sampler, fs, epoch):
        self.sampler, self.fs, self._epoch, self._next = sampler, fs, epoch, 0

    def __len__(self):
        return len(self.sampler)

    def __iter__(self):
        from torch_geometric.data import Data
        e = self._epoch if self._epoch is not None else self._next
        self._next = e + 1
        for k in range(len(self.sampler)):
            eb = self.sampler.batch(e, k)
            b = eb.nodes
            edges, nodes = b.hops()
            src = np.concatenate([h[0] for h in edges]) if edges else np.empty(0, np.int64)
            dst = np.concatenate([h[1] for h in edges]) if edges else np.empty(0, np.int64)
            n_id = np.array(b.input_ids)
            d = Data(n_id=torch.from_numpy(n_id), edge_index=torch.from_numpy(np.stack([src, dst])),
                     num_nodes=len(n_id),
                     edge_label_index=torch.from_numpy(np.stack([eb.src, eb.dst]).astype(np.int64)),
                     edge_label=torch.from_numpy(np.array(eb.label)),
                     input_id=torch.arange(k * self.sampler_batch(), k * self.sampler_batch() + eb.num_pos),
                     num_sampled_nodes=nodes, num_sampled_edges=[len(h[0]) for h in edges])
            if None in self.fs.stores:
                d.x = torch.from_numpy(self.fs.store.gather(n_id))
            yield d

    def sampler_batch(self):
        return int(self.sampler.batch_size)
