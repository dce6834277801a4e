"""burrow: Python over libburrow (out-of-core GNN training): datasets as numpy memmaps, the
io_uring feature store, the neighbor sampler, the trainer, and the dataset tools.

    import burrow
    ds = burrow.Dataset("data/cora")
    store = burrow.FeatureStore(ds)
    for batch in burrow.Sampler(ds, fanouts=[10, 5], batch_size=512):
        x = store.gather(batch.input_ids)       # [len(input_ids), feat_dim] float32

Errors raise burrow.Error (message and status from the library); the library's messages go
to the "burrow" logger."""
import ctypes
import logging
import os
import tempfile
import weakref

import numpy as np

from . import _lib
from ._lib import lib

__all__ = ["Error", "version", "Dataset", "NodeType", "FeatureStore", "Ticket", "Sampler", "Batch", "Block",
           "TypedSampler", "TypedBatch", "Trainer",
           "gen_csbm", "gen_rmat", "gen_papers", "gen_mag", "gen_igbh", "prep", "import_graph", "partition", "metrics"]

log = logging.getLogger("burrow")
_LEVELS = {0: logging.ERROR, 1: logging.WARNING, 2: logging.INFO, 3: logging.DEBUG}


@_lib.LOG_FN
def _log_cb(level, msg, user):
    log.log(_LEVELS.get(level, logging.INFO), "%s", msg.decode(errors="replace"))


lib.burrow_log_set(_log_cb, None, 3)

LABOR_STAR_ROUNDS = _lib.LABOR_STAR_ROUNDS
STATUS = {0: "OK", 1: "DONE", -1: "E_INVAL", -2: "E_NOMEM", -3: "E_IO", -4: "E_FORMAT", -5: "E_UNSUPPORTED",
          -6: "E_CUDA", -7: "E_MPI", -8: "E_METIS", -9: "E_NOTFOUND", -10: "E_EXISTS", -11: "E_RANGE"}


class Error(Exception):
    """A libburrow error: str() is the library's message, .status its status code (< 0)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.message = message
        self.status = status
        self.name = STATUS.get(status, str(status))


def _need(*names):
    gone = [n for n in names if n in _lib.missing]
    if gone:
        raise Error("%s lacks %s (built before typed graphs): rebuild it" % (_lib.lib_path, ", ".join(gone)), -5)


def _check(st):
    if st < 0:
        msg = lib.burrow_last_error().decode(errors="replace") or lib.burrow_strerror(st).decode()
        raise Error(msg, st)
    return st


def _b(s):
    return None if s is None else os.fsencode(s)


def version():
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return lib.burrow_version().decode()


def _ptr(a):
    return ctypes.c_void_p(a.ctypes.data)


def _ids(ids):
    return np.ascontiguousarray(ids, dtype=np.int64)


def _view(ptr, n, ctype, owner):
    """A numpy view of n elements at ptr that keeps owner alive (zero-copy)."""
    if n == 0:
        return np.empty(0, dtype=_DT[ctype])
    buf = (ctype * n).from_address(ctypes.addressof(ptr.contents))
    buf._owner = owner
    a = np.frombuffer(buf, dtype=_DT[ctype], count=n)
    a.flags.writeable = False
    return a


_DT = {ctypes.c_int64: np.int64, ctypes.c_int32: np.int32, ctypes.c_float: np.float32}

# ---------------------------------------------------------------- datasets

_SPLITS = {"train": 0, "valid": 1, "test": 2}


class Dataset:
    """A dataset directory, checked by the library; arrays are read-only numpy memmaps."""

    def __init__(self, path):
        self.path = os.fspath(path)
        h = ctypes.c_void_p()
        _check(lib.burrow_dataset_open(ctypes.byref(h), _b(self.path)))
        self._h = h
        self._fin = weakref.finalize(self, lib.burrow_dataset_close, h)
        info = lib.burrow_dataset_get_info(h).contents
        self.name = info.name.decode()
        self.num_nodes = info.num_nodes
        self.num_edges = info.num_edges
        self.feat_dim = info.feat_dim
        self.num_classes = info.num_classes
        self.num_tasks = info.num_tasks  # multi-label: binary tasks per node (labels [N, T] int8); else 0
        self.symmetric = bool(info.symmetric)
        fp = lib.burrow_dataset_features_path(h)
        self.features_path = fp.decode() if fp else None  # None: the dataset has no features
        self._maps = {}
        self.node_types, self.edge_types, self.target_type = [], [], None
        if info.num_types:
            self._open_typed()

    def _open_typed(self):
        """A typed dataset's node types and relations, from the library's view of them."""
        _need("burrow_dataset_hetero", "burrow_dataset_type_info")
        h = lib.burrow_dataset_hetero(self._h).contents
        self._types = []
        for t in range(h.num_types):
            ti = _lib.TypeInfo()
            _check(lib.burrow_dataset_type_info(self._h, t, ctypes.byref(ti)))
            self._types.append(NodeType(t, ti))
        self.node_types = [ty.name for ty in self._types]
        self.edge_types = [(self.node_types[r.src_type], r.name.decode(), self.node_types[r.dst_type])
                           for r in h.rel[:h.num_relations]]
        self.target_type = self.node_types[h.target_type] if h.target_type >= 0 else None

    @property
    def typed(self):
        """True for a typed (heterogeneous, format version 2) dataset."""
        return bool(self.node_types)

    def metadata(self):
        """(node types, edge types) as PyG's HeteroData.metadata() gives them (for to_hetero)."""
        return list(self.node_types), list(self.edge_types)

    def node_type(self, t):
        """Node type t (its name or index) of a typed dataset: name, index, num_nodes, feat_dim,
        feat_dtype, features_path, features_offset."""
        self._need_typed("node_type")
        if isinstance(t, str):
            if t not in self.node_types:
                raise Error("%s: no node type %r (the types are %s)" % (self.path, t, ", ".join(self.node_types)),
                            -11)
            t = self.node_types.index(t)
        if not 0 <= int(t) < len(self._types):
            raise Error("%s: node type %r is outside [0, %d)" % (self.path, t, len(self._types)), -11)
        return self._types[int(t)]

    @property
    def num_nodes_dict(self):
        """{node type: its node count} of a typed dataset."""
        return {ty.name: ty.num_nodes for ty in self._types} if self.typed else {}

    def features_of(self, t):
        """Type t's features [num_nodes, feat_dim] as a read-only memmap of its file, or None for a
        featureless type (its nodes have ids only: learn an embedding per id)."""
        ty = self.node_type(t)
        if not ty.feat_dim:
            return None
        key = ("features", ty.name)
        if key not in self._maps:
            self._maps[key] = np.memmap(ty.features_path, dtype=ty.feat_dtype, mode="r", offset=ty.features_offset,
                                        shape=(ty.num_nodes, ty.feat_dim))
        return self._maps[key]

    def edge_type(self, et):
        """The (src, name, dst) of a relation given as that triple, its name (when unique) or index."""
        self._need_typed("edge_type")
        if isinstance(et, int):
            if not 0 <= et < len(self.edge_types):
                raise Error("%s: relation %d is outside [0, %d)" % (self.path, et, len(self.edge_types)), -11)
            return self.edge_types[et]
        found = [e for e in self.edge_types if e == tuple(et)] if not isinstance(et, str) else \
            [e for e in self.edge_types if e[1] == et]
        if len(found) != 1:
            raise Error("%s: %s relation %r (the relations are %s)" % (
                self.path, "no" if not found else "more than one", et,
                ", ".join("%s___%s___%s" % e for e in self.edge_types)), -11)
        return found[0]

    def relation(self, et):
        """Relation et's in-edges by destination: (indptr [N_dst + 1] int64, indices [E] src-type ids),
        read-only memmaps: row v's sources are indices[indptr[v]:indptr[v + 1]], sorted."""
        s, n, d = self.edge_type(et)
        rel = os.path.join("relations", "%s___%s___%s" % (s, n, d))
        return self._npy(os.path.join(rel, "indptr.npy")), self._npy(os.path.join(rel, "indices.npy"))

    def _need_typed(self, what):
        if not self.typed:
            raise Error("%s: %s: the dataset is homogeneous (format version 1), not typed" % (self.path, what), -1)

    def _need_homogeneous(self, what):
        if self.typed:
            raise Error("%s: a typed dataset has no single %s: see node_types, features_of(type), relation(edge type)"
                        % (self.path, what), -1)

    def _npy(self, rel):
        if rel not in self._maps:
            self._maps[rel] = np.load(os.path.join(self.path, rel), mmap_mode="r")
        return self._maps[rel]

    @property
    def indptr(self):
        self._need_homogeneous("graph")
        return self._npy("indptr.npy")

    @property
    def indices(self):
        self._need_homogeneous("graph")
        return self._npy("indices.npy")

    @property
    def labels(self):
        """labels.npy: [num_nodes] int32, -1 where unknown (a typed dataset's: its target type's); a multi-label
        dataset's [num_nodes, num_tasks] int8, 1, 0 or -1 unknown."""
        return self._npy("labels.npy") if self.num_classes or self.num_tasks else None

    @property
    def features(self):
        """features.npy as a memmap (reads through the page cache; FeatureStore does not)."""
        self._need_homogeneous("features.npy")
        return self._npy("features.npy")

    def split(self, which):
        """Node ids of "train", "valid" or "test" (int64; a typed dataset's: target-type ids)."""
        if which not in _SPLITS:
            raise ValueError("split must be train, valid or test, not %r" % (which,))
        p = os.path.join(self.path, "split", which + ".npy")
        return self._npy(os.path.join("split", which + ".npy")) if os.path.exists(p) else np.empty(0, np.int64)

    @property
    def has_edge_split(self):
        """Whether the dataset has edge splits (link prediction; docs/format.md)."""
        return "burrow_dataset_has_edge_split" not in _lib.missing and bool(lib.burrow_dataset_has_edge_split(self._h))

    def edge_split(self, which):
        """Split "train", "valid" or "test" of a link dataset's edge splits: a dict of read-only
        numpy views: pos [E, 2] (src, dst), neg_pairs [M, 2] or neg_dst [E, K] where the dataset
        gives negatives (else None), weight / year (or None), and neg ("none", "pairs",
        "per_source"), directed, metric ("hits@K", "mrr" or "auc")."""
        _need("burrow_dataset_edge_split")
        if which not in _SPLITS:
            raise ValueError("split must be train, valid or test, not %r" % (which,))
        e = _lib.EdgeSplit()
        _check(lib.burrow_dataset_edge_split(self._h, _SPLITS[which], ctypes.byref(e)))
        view = lambda p, n, t, w=1: _view(p, n * w, t, self).reshape(n, w) if p else None  # noqa: E731
        metric = "hits@%d" % e.metric_k if e.metric == 0 else ("mrr" if e.metric == 1 else "auc")
        return {"pos": view(e.pos, e.num_pos, ctypes.c_int64, 2),
                "neg_pairs": view(e.neg_pairs, e.num_neg, ctypes.c_int64, 2),
                "neg_dst": view(e.neg_dst, e.num_neg, ctypes.c_int64, e.k) if e.neg_dst else None,
                "weight": _view(e.weight, e.num_pos, ctypes.c_float, self) if e.weight else None,
                "year": _view(e.year, e.num_pos, ctypes.c_int32, self) if e.year else None,
                "neg": ("none", "pairs", "per_source")[e.neg], "directed": bool(e.directed), "metric": metric}

    def close(self):
        self._maps.clear()
        self._fin()

    def __repr__(self):
        if self.typed:
            return "burrow.Dataset(%r: typed, %d node types, %d relations, %d edges, target %s, %d classes)" % (
                self.path, len(self.node_types), len(self.edge_types), self.num_edges, self.target_type,
                self.num_classes)
        return "burrow.Dataset(%r: %d nodes, %d edges, %d features, %d classes)" % (
            self.path, self.num_nodes, self.num_edges, self.feat_dim, self.num_classes)


_NP_DTYPES = {1: np.float16, 2: np.float32}  # enum burrow_dtype: F16, F32


class NodeType:
    """One node type of a typed dataset (burrow_type_info): feat_dim 0 and feat_dtype None when
    it has no features."""
    __slots__ = ("index", "name", "num_nodes", "feat_dim", "feat_dtype", "features_path", "features_offset")

    def __init__(self, index, ti):
        self.index, self.name, self.num_nodes, self.feat_dim = index, ti.name.decode(), ti.num_nodes, ti.feat_dim
        self.feat_dtype = _NP_DTYPES.get(ti.feat_dtype) if ti.feat_dim else None
        self.features_path = ti.features_path.decode() if ti.features_path else None
        self.features_offset = ti.features_offset

    def __repr__(self):
        return "burrow.NodeType(%r: %d nodes, %d features)" % (self.name, self.num_nodes, self.feat_dim)


def _dataset(ds):
    return ds if isinstance(ds, Dataset) else Dataset(ds)


# ---------------------------------------------------------------- feature store

class Ticket:
    """A gather in flight: wait() blocks until out holds the rows and returns out."""

    def __init__(self, store, handle, ids, out):
        self._store, self._h, self._ids, self.out = store, handle, ids, out

    def wait(self):
        if self._h is None:
            return self.out
        h, self._h = self._h, None
        self._store._inflight.discard(self)
        _check(lib.burrow_store_wait(self._store._h, h))
        return self.out

    def done(self):
        """True once the rows are in (then wait() returns at once)."""
        if self._h is None:
            return True
        st = lib.burrow_store_poll(self._store._h, self._h)
        if st == 0:
            return False
        self._h = None
        self._store._inflight.discard(self)
        _check(st)
        return True

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            try:
                lib.burrow_store_wait(self._store._h, self._h)
            except Exception:
                pass


class FeatureStore:
    """Rows of a dataset's features.npy, read with io_uring and O_DIRECT (engine "uring",
    "pread" or "mmap"), gathered as float32; cache_bytes caches the rows of highest degree
    (cache_policy "degree") or those read most recently ("clock"). On a typed dataset, node_type
    names the type whose features it reads (default the target type; "degree" is not offered:
    a type's degree is per relation)."""

    def __init__(self, dataset, cache_bytes=None, engine="uring", queue_depth=None, cache_policy="degree",
                 node_type=None):
        self.dataset = _dataset(dataset)
        path = self.dataset.features_path
        self.node_type = type_index = None
        if self.dataset.typed:
            ty = self.dataset.node_type(self.dataset.target_type if node_type is None else node_type)
            if not ty.feat_dim:
                raise Error("FeatureStore: node type %r of %s has no features" % (ty.name, self.dataset.path), -1)
            if cache_bytes and cache_policy == "degree":
                raise Error("FeatureStore: node type %r: cache_policy \"degree\" is for homogeneous datasets; "
                            "use \"clock\"" % (ty.name,), -1)
            path, self.node_type, type_index = ty.features_path, ty.name, ty.index
        elif node_type is not None:
            raise Error("FeatureStore: node_type %r given for a homogeneous dataset" % (node_type,), -1)
        if path is None:
            raise Error("FeatureStore: %s has no features" % (self.dataset.path,), -1)
        o = _lib.StoreOpts()
        lib.burrow_store_defaults(ctypes.byref(o))
        e = lib.burrow_store_engine_parse(engine.encode())
        if e < 0:
            raise Error("FeatureStore: unknown engine %r (uring, pread or mmap)" % (engine,), -1)
        o.engine = e
        o.out_dtype = 2  # BURROW_DTYPE_F32
        if queue_depth:
            o.queue_depth = queue_depth
        h = ctypes.c_void_p()
        if type_index is not None:  # where the type's rows are: an .npy, or a raw file read in place
            _check(lib.burrow_store_open_type(ctypes.byref(h), self.dataset._h, type_index, ctypes.byref(o)))
        else:
            _check(lib.burrow_store_open(ctypes.byref(h), os.fsencode(path), ctypes.byref(o)))
        self._h = h
        self._inflight = weakref.WeakSet()
        self._fin = weakref.finalize(self, lib.burrow_store_close, h)
        info = lib.burrow_store_get_info(h).contents
        self.num_rows, self.dim = info.num_rows, info.dim
        self.engine = lib.burrow_store_engine_name(info.engine).decode()
        if cache_bytes:
            if cache_policy == "degree":
                _check(lib.burrow_store_cache_degree(h, lib.burrow_dataset_graph(self.dataset._h), int(cache_bytes)))
            elif cache_policy == "clock":
                _check(lib.burrow_store_cache_clock(h, int(cache_bytes)))
            else:
                raise Error("FeatureStore: cache_policy must be degree or clock, not %r" % (cache_policy,), -1)

    def _out(self, n, out):
        if out is None:
            return np.empty((n, self.dim), dtype=np.float32)
        if hasattr(out, "numpy") and not isinstance(out, np.ndarray):  # a CPU torch tensor
            out = out.numpy()
        if (out.dtype != np.float32 or out.ndim != 2 or out.shape[0] < n or out.shape[1] != self.dim
                or not out.flags.c_contiguous or not out.flags.writeable):
            raise Error("FeatureStore: out must be a writeable C-contiguous float32 array [>= %d, %d], got %s %s"
                        % (n, self.dim, out.dtype, out.shape), -1)
        return out

    def gather(self, ids, out=None):
        """Rows ids of features.npy as float32 [len(ids), feat_dim] (into out when given)."""
        ids = _ids(ids)
        out = self._out(len(ids), out)
        _check(lib.burrow_store_gather(self._h, _ptr(ids), len(ids), _ptr(out)))
        return out

    def submit(self, ids, out):
        """Start gathering ids into out and return a Ticket at once; out must not be touched
        until ticket.wait()."""
        ids = _ids(ids)
        out = self._out(len(ids), out)
        t = ctypes.c_void_p()
        _check(lib.burrow_store_submit(self._h, _ptr(ids), len(ids), _ptr(out), ctypes.byref(t)))
        tk = Ticket(self, t, ids, out)
        self._inflight.add(tk)
        return tk

    def stats(self):
        s = _lib.stats(_lib.StoreStats)
        lib.burrow_store_get_stats(self._h, ctypes.byref(s))
        return {f: getattr(s, f) for f, _ in _lib.StoreStats._fields_}

    def reset_stats(self):
        lib.burrow_store_reset_stats(self._h)

    def close(self):
        for t in list(self._inflight):
            t.wait()
        self._fin()


# ---------------------------------------------------------------- sampler

class Block:
    """One layer of a batch: destination row i's neighbors are indices[indptr[i]:indptr[i+1]],
    local ids into the batch's input_ids; the destinations are input_ids[:num_dst]. edge_weight:
    each edge's weight where the sampler weighs them (LABOR-*'s, labor_star > 0: 1 / the edge's
    odds, scaled so that a row's weights sum to its edge count, for a mean), else None."""
    __slots__ = ("num_dst", "num_src", "indptr", "indices", "edge_weight")

    def __init__(self, num_dst, num_src, indptr, indices, edge_weight=None):
        self.num_dst, self.num_src, self.indptr, self.indices = num_dst, num_src, indptr, indices
        self.edge_weight = edge_weight

    @staticmethod
    def _of(k, held):
        """The view of the C block k (kept alive by held)."""
        w = _view(k.edge_weight, k.num_edges, ctypes.c_float, held) if k.edge_weight else None
        return Block(k.num_dst, k.num_src, _view(k.indptr, k.num_dst + 1, ctypes.c_int64, held),
                     _view(k.indices, k.num_edges, ctypes.c_int32, held), w)

    def edges(self):
        """(src, dst) local ids of every edge, int64."""
        dst = np.repeat(np.arange(self.num_dst, dtype=np.int64), np.diff(self.indptr))
        return self.indices.astype(np.int64), dst


class _Held:
    """Owns one C batch; hands it back to the sampler when the last view of it goes."""

    def __init__(self, sampler, ptr):
        self.sampler, self.ptr = sampler, ptr

    def __del__(self):
        self.sampler._release(self.ptr)


class Batch:
    """A mini-batch: seeds, input_ids (seeds first) and blocks (input layer first), numpy
    views of the sampler's memory (read-only; valid as long as any of them is referenced)."""

    def __init__(self, sampler, ptr):
        held = _Held(sampler, ptr)
        b = ptr.contents
        self.epoch, self.index = b.epoch, b.index
        self.input_ids = _view(b.input_ids, b.num_input, ctypes.c_int64, held)
        self.seeds = self.input_ids[:b.num_seeds]
        self.blocks = []
        for l in range(b.num_layers):
            self.blocks.append(Block._of(b.blocks[l], held))

    @property
    def batch_size(self):
        return len(self.seeds)

    def hops(self):
        """NeighborLoader's layout: per hop k = 1 .. L, the (src, dst) local edges of the nodes first
        reached at hop k - 1 (block L - k's rows past block L - k + 1's destinations), and the
        nodes each hop adds (seeds first)."""
        L = len(self.blocks)
        edges, nodes = [], [len(self.seeds)]
        prev = 0
        for k in range(1, L + 1):
            blk = self.blocks[L - k]
            lo = prev
            hi = blk.num_dst
            e0, e1 = blk.indptr[lo], blk.indptr[hi]
            dst = np.repeat(np.arange(lo, hi, dtype=np.int64), np.diff(blk.indptr[lo:hi + 1]))
            edges.append((blk.indices[e0:e1].astype(np.int64), dst))
            nodes.append(blk.num_src - blk.num_dst)
            prev = hi
        return edges, nodes

    def to_pyg(self):
        """A torch_geometric Data as NeighborLoader gives it: n_id (global ids, seeds first),
        edge_index [2, E] local (row 0 source, row 1 destination) ordered by hop,
        num_sampled_nodes / num_sampled_edges per hop, batch_size; plus edge_index_per_layer,
        each block's own edges (input layer first)."""
        import torch
        from torch_geometric.data import Data
        edges, nodes = self.hops()
        src = np.concatenate([e[0] for e in edges]) if edges else np.empty(0, np.int64)
        dst = np.concatenate([e[1] for e in edges]) if edges else np.empty(0, np.int64)
        per_layer = [torch.from_numpy(np.stack(b.edges())) for b in self.blocks]
        return Data(n_id=torch.from_numpy(np.array(self.input_ids)),
                    edge_index=torch.from_numpy(np.stack([src, dst])),
                    num_nodes=len(self.input_ids), batch_size=len(self.seeds),
                    num_sampled_nodes=nodes, num_sampled_edges=[len(e[0]) for e in edges],
                    edge_index_per_layer=per_layer)

    def to_dgl(self):
        """The blocks as dgl.create_block blocks (input layer first), with dgl.NID set."""
        import dgl
        import torch
        out = []
        for b in self.blocks:
            src, dst = b.edges()
            blk = dgl.create_block((torch.from_numpy(src), torch.from_numpy(dst)),
                                   num_src_nodes=int(b.num_src), num_dst_nodes=int(b.num_dst))
            blk.srcdata[dgl.NID] = torch.from_numpy(np.array(self.input_ids[:b.num_src]))
            blk.dstdata[dgl.NID] = torch.from_numpy(np.array(self.input_ids[:b.num_dst]))
            out.append(blk)
        return out


class Sampler:
    """Uniform neighbor sampling over `ids` (default: the train split), fanouts input layer
    first (-1 = all). Iterating yields one epoch's Batches (epoch 0, then 1, ...); epoch(e)
    iterates epoch e. Batches are a function of (seed, epoch, index). shuffle=False takes the
    ids in order, batch i sampled with key (epoch, i). device="cuda" (or "cuda:N") samples on
    a GPU: the same batches, element for element. labor=True: LABOR (one variate per source node
    and layer shared by every row; CPU or GPU); labor_star=R > 0: LABOR-* with R rounds of its
    fixed point (the CLI's --sampler labor-star takes LABOR_STAR_ROUNDS; CPU only), its blocks
    carrying edge_weight (docs/sampler.md)."""

    def __init__(self, dataset, fanouts=(15, 10, 5), batch_size=1024, seed=0, shuffle=True, ids=None,
                 split="train", drop_last=False, prefetch=4, threads=1, device=None, labor=False, labor_star=0):
        self.dataset = _dataset(dataset)
        fanouts = list(fanouts)
        if not 1 <= len(fanouts) <= _lib.MAX_LAYERS:
            raise Error("Sampler: 1 to %d fanouts, got %d" % (_lib.MAX_LAYERS, len(fanouts)), -1)
        o = _lib.SamplerOpts()
        lib.burrow_sampler_defaults(ctypes.byref(o))
        o.num_layers = len(fanouts)
        for i, f in enumerate(fanouts):
            o.fanouts[i] = int(f)
        o.batch_size, o.seed, o.drop_last = int(batch_size), int(seed), bool(drop_last)
        o.prefetch, o.threads = int(prefetch) if shuffle else 0, int(threads)
        o.labor, o.labor_star = bool(labor), int(labor_star)
        self._device = None if device is None else str(device).encode()  # kept alive while open reads it
        o.device = self._device
        self.ids = _ids(self.dataset.split(split) if ids is None else ids)
        self.shuffle, self.batch_size, self.drop_last = shuffle, int(batch_size), drop_last
        h = ctypes.c_void_p()
        _check(lib.burrow_sampler_open(ctypes.byref(h), lib.burrow_dataset_graph(self.dataset._h),
                                       _ptr(self.ids), len(self.ids), ctypes.byref(o)))
        self._h = h
        self._held = 0
        self._closing = False
        self._next_epoch = 0

    def __len__(self):
        return int(lib.burrow_sampler_num_batches(self._h))

    def _release(self, ptr):
        if self._h is not None:
            lib.burrow_sampler_release(self._h, ptr)
        self._held -= 1
        if self._closing and self._held == 0:
            self._close_now()

    def sample(self, seeds, key=0):
        """A batch for explicit seeds (distinct ids), drawn as a function of (seed, key, seeds)."""
        seeds = _ids(seeds)
        p = ctypes.POINTER(_lib.Batch)()
        _check(lib.burrow_sampler_sample(self._h, _ptr(seeds), len(seeds), int(key), ctypes.byref(p)))
        self._held += 1
        return Batch(self, p)

    def epoch(self, e):
        """Iterate epoch e's batches."""
        self._next_epoch = e + 1
        if not self.shuffle:
            n = len(self.ids)
            end = n - n % self.batch_size if self.drop_last else n
            for i, lo in enumerate(range(0, end, self.batch_size)):
                yield self.sample(self.ids[lo:lo + self.batch_size], key=(int(e) << 32) | i)
            return
        _check(lib.burrow_sampler_start(self._h, int(e)))
        while True:
            p = ctypes.POINTER(_lib.Batch)()
            st = _check(lib.burrow_sampler_next(self._h, ctypes.byref(p)))
            if st == 1:
                return
            self._held += 1
            yield Batch(self, p)

    def __iter__(self):
        return self.epoch(self._next_epoch)

    def _close_now(self):
        if self._h is not None:
            lib.burrow_sampler_close(self._h)
            self._h = None

    def close(self):
        """Close now, or when the last batch still referenced goes."""
        self._closing = True
        if self._held == 0:
            self._close_now()

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            self._close_now()


# ---------------------------------------------------------------- edge sampler

class EdgeBatch:
    """An edge mini-batch (burrow_edge_batch): nodes, the Batch of the pairs' endpoints (its seeds,
    sorted) with their sampled blocks, the batch's own edges left out; src, dst [num_pairs]
    seed-local indices of each pair (positives first) and label (1.0 / 0.0). Read-only views."""

    def __init__(self, sampler, ptr):
        e = ptr.contents
        self.nodes = Batch(_EdgeHeld(sampler, ptr), e.nodes)
        owner = self.nodes.input_ids  # its buffer holds the batch
        self.epoch, self.index, self.num_pos = e.epoch, e.index, e.num_pos
        self.src = _view(e.src, e.num_pairs, ctypes.c_int32, owner)
        self.dst = _view(e.dst, e.num_pairs, ctypes.c_int32, owner)
        self.label = _view(e.label, e.num_pairs, ctypes.c_float, owner)
        self._keep = self.nodes


class _EdgeHeld:
    """What a Batch of an edge batch hands back: the edge batch, to its sampler."""

    def __init__(self, sampler, ptr):
        self.sampler, self.ptr = sampler, ptr

    def _release(self, _node_ptr):
        self.sampler._release(self.ptr)


class EdgeSampler:
    """Edge mini-batches for link prediction over a link dataset's training edges (or `edges`
    [E, 2]): each epoch's positives shuffled from (seed, epoch), `neg` uniform negatives per
    positive (its source, a random node), one neighborhood sampled for every endpoint with
    fanouts input layer first, the batch's positives (and reverses) excluded from it."""

    def __init__(self, dataset, fanouts=(15, 10, 5), batch_size=1024, neg=1, seed=0, edges=None, exclude=True,
                 threads=1):
        _need("burrow_edge_sampler_open")
        self.dataset = _dataset(dataset)
        o = _lib.EdgeSamplerOpts()
        lib.burrow_edge_sampler_defaults(ctypes.byref(o))
        fanouts = list(fanouts)
        o.num_layers = len(fanouts)
        for i, f in enumerate(fanouts):
            o.fanouts[i] = int(f)
        o.batch_size, o.neg, o.seed, o.exclude, o.threads = int(batch_size), int(neg), int(seed), bool(exclude), \
            int(threads)
        self.batch_size = int(batch_size)
        self.edges = np.ascontiguousarray(self.dataset.edge_split("train")["pos"] if edges is None else edges,
                                          dtype=np.int64).reshape(-1, 2)
        h = ctypes.c_void_p()
        _check(lib.burrow_edge_sampler_open(ctypes.byref(h), lib.burrow_dataset_graph(self.dataset._h),
                                            self.edges.ctypes.data, len(self.edges), ctypes.byref(o)))
        self._h = h
        self._held = 0
        self._closing = False
        self._next_epoch = 0

    def __len__(self):
        return int(lib.burrow_edge_sampler_num_batches(self._h))

    def batch(self, epoch, k):
        """Batch k of epoch `epoch` (any order: the same batch)."""
        p = ctypes.POINTER(_lib.EdgeBatch)()
        _check(lib.burrow_edge_sampler_batch(self._h, int(epoch), int(k), ctypes.byref(p)))
        self._held += 1
        return EdgeBatch(self, p)

    def epoch(self, e):
        self._next_epoch = e + 1
        for k in range(len(self)):
            yield self.batch(e, k)

    def __iter__(self):
        return self.epoch(self._next_epoch)

    def _release(self, ptr):
        if self._h is not None:
            lib.burrow_edge_sampler_release(self._h, ptr)
        self._held -= 1
        if self._closing and self._held == 0:
            self._close_now()

    def _close_now(self):
        if self._h is not None:
            lib.burrow_edge_sampler_close(self._h)
            self._h = None

    def close(self):
        self._closing = True
        if self._held == 0:
            self._close_now()

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            self._close_now()


# ---------------------------------------------------------------- typed sampler

class TypedBatch:
    """A typed mini-batch (burrow_typed_batch), numpy views of the sampler's memory (read-only;
    valid as long as any of them is referenced). Node ids are type-local; per node type t,
    input_ids[t] lists its nodes of every level, nested: level l of t is
    input_ids[t][:num_nodes[l, t]] (level 0 the inputs, level num_layers the seeds, which only
    the target type has). blocks[l][edge type] is layer l's block of that relation (input layer
    first): its destinations are level l + 1 of the dst type, its local source ids index level l
    of the src type."""

    def __init__(self, sampler, ptr):
        held = _Held(sampler, ptr)
        b = ptr.contents
        self.epoch, self.index, self.num_layers = b.epoch, b.index, b.num_layers
        self.node_types, self.edge_types = sampler.node_types, sampler.edge_types
        self.target_type = sampler.target_type
        T, L = b.num_types, b.num_layers
        self.num_nodes = np.array([[b.num_nodes[l][t] for t in range(T)] for l in range(L + 1)], dtype=np.int64)
        self.input_ids = {name: _view(b.input_ids[t], int(self.num_nodes[0, t]), ctypes.c_int64, held)
                          for t, name in enumerate(self.node_types)}
        self.seeds = self.input_ids[self.target_type][:b.num_seeds]
        self.blocks = []
        for l in range(L):
            layer = {}
            for r, et in enumerate(self.edge_types):
                layer[et] = Block._of(b.blocks[l][r], held)
            self.blocks.append(layer)

    @property
    def batch_size(self):
        return len(self.seeds)

    def hops(self):
        """NeighborLoader's hetero layout: ({edge type: [(src, dst) local edges of hop k] for k = 1 ..
        L}, {node type: [nodes each hop adds, the seeds' hop 0 first]}). Hop k takes, in each
        relation, block L - k's rows of the dst nodes new at level L - k + 1 (the others had theirs
        at an earlier hop), so every node's sampled in-edges appear once."""
        L, ti = self.num_layers, {n: i for i, n in enumerate(self.node_types)}
        nn = self.num_nodes
        edges = {et: [] for et in self.edge_types}
        for k in range(1, L + 1):
            l = L - k
            for et in self.edge_types:
                blk, t = self.blocks[l][et], ti[et[2]]
                lo = int(nn[l + 2, t]) if l + 2 <= L else 0
                hi = int(blk.num_dst)
                e0, e1 = blk.indptr[lo], blk.indptr[hi]
                dst = np.repeat(np.arange(lo, hi, dtype=np.int64), np.diff(blk.indptr[lo:hi + 1]))
                edges[et].append((blk.indices[e0:e1].astype(np.int64), dst))
        nodes = {name: [int(nn[L, t])] + [int(nn[L - k, t] - nn[L - k + 1, t]) for k in range(1, L + 1)]
                 for t, name in enumerate(self.node_types)}
        return edges, nodes

    def to_pyg(self):
        """A torch_geometric HeteroData as the hetero NeighborLoader gives it, without features:
        per node type n_id (type-local ids, nested as input_ids) and num_sampled_nodes; per edge type
        edge_index [2, E] (row 0 source, row 1 destination, local into each type's n_id, ordered by
        hop), num_sampled_edges and edge_index_per_layer (each block's own edges, input layer
        first); batch_size on the target type. burrow.pyg.loader adds x and y."""
        import torch
        from torch_geometric.data import HeteroData
        edges, nodes = self.hops()
        data = HeteroData()
        for name in self.node_types:
            data[name].n_id = torch.from_numpy(np.array(self.input_ids[name]))
            data[name].num_nodes = len(self.input_ids[name])
            data[name].num_sampled_nodes = nodes[name]
        for et in self.edge_types:
            hop = edges[et]
            src = np.concatenate([e[0] for e in hop]) if hop else np.empty(0, np.int64)
            dst = np.concatenate([e[1] for e in hop]) if hop else np.empty(0, np.int64)
            data[et].edge_index = torch.from_numpy(np.stack([src, dst]))
            data[et].num_sampled_edges = [len(e[0]) for e in hop]
            data[et].edge_index_per_layer = [torch.from_numpy(np.stack(layer[et].edges())) for layer in self.blocks]
        data[self.target_type].batch_size = self.batch_size
        return data


class TypedSampler:
    """Per-relation neighbor sampling on a typed dataset (burrow_typed_sampler) over target-type
    `ids` (default the train split): fanouts, input layer first, apply to every relation (-1 =
    all), and rel_fanouts {edge type or relation name: [one per layer]} overrides them for a
    relation. Iterating yields one epoch's TypedBatches (epoch 0, then 1, ...); epoch(e) iterates
    epoch e. Batches are a function of (seed, epoch, index), whatever the threads. shuffle=False
    takes the ids in order, batch i sampled with key (epoch, i) as Sampler does. labor=True: LABOR
    (docs/sampler.md): one variate per layer and source type shared by every row and relation.
    fanout="node": a destination draws its fanout among all its in-edges of every relation into
    its type (rel_fanouts may then only leave a relation out, with 0) instead of per relation.
    labor_star=R > 0: LABOR-* per relation with R rounds, its blocks carrying edge_weight."""

    def __init__(self, dataset, fanouts=(25, 20), batch_size=1024, seed=0, shuffle=True, ids=None, split="train",
                 drop_last=False, threads=1, rel_fanouts=None, labor=False, fanout="relation", labor_star=0):
        _need("burrow_typed_sampler_open", "burrow_typed_sampler_batch")
        self.dataset = _dataset(dataset)
        self.dataset._need_typed("TypedSampler")
        fanouts = list(fanouts)
        if not 1 <= len(fanouts) <= _lib.MAX_LAYERS:
            raise Error("TypedSampler: 1 to %d fanouts, got %d" % (_lib.MAX_LAYERS, len(fanouts)), -1)
        o = _lib.TypedSamplerOpts()
        lib.burrow_typed_sampler_defaults(ctypes.byref(o))
        o.num_layers = len(fanouts)
        for i, f in enumerate(fanouts):
            o.fanouts[i] = int(f)
        for et, fs in (rel_fanouts or {}).items():
            r = self.dataset.edge_types.index(self.dataset.edge_type(et))
            if len(fs) != len(fanouts):
                raise Error("TypedSampler: relation %r: %d fanouts for %d layers" % (et, len(fs), len(fanouts)), -1)
            for l, f in enumerate(fs):
                o.rel_fanouts[l][r] = int(f)
        o.batch_size, o.seed, o.drop_last, o.threads = int(batch_size), int(seed), bool(drop_last), int(threads)
        o.labor, o.labor_star = bool(labor), int(labor_star)
        if fanout not in _TYPED_FANOUT:
            raise Error("TypedSampler: fanout must be relation or node, not %r" % (fanout,), -1)
        o.fanout_mode = _TYPED_FANOUT[fanout]
        self.node_types, self.edge_types = self.dataset.node_types, self.dataset.edge_types
        self.target_type = self.dataset.target_type
        self.ids = _ids(self.dataset.split(split) if ids is None else ids)
        self.shuffle, self.batch_size, self.drop_last = shuffle, int(batch_size), drop_last
        h = ctypes.c_void_p()
        _check(lib.burrow_typed_sampler_open(ctypes.byref(h), lib.burrow_dataset_hetero(self.dataset._h),
                                             _ptr(self.ids), len(self.ids), ctypes.byref(o)))
        self._h = h
        self._held = 0
        self._closing = False
        self._next_epoch = 0

    def __len__(self):
        return int(lib.burrow_typed_sampler_num_batches(self._h))

    def _release(self, ptr):
        if self._h is not None:
            lib.burrow_typed_sampler_release(self._h, ptr)
        self._held -= 1
        if self._closing and self._held == 0:
            self._close_now()

    def _batch(self, p):
        self._held += 1
        return TypedBatch(self, p)

    def sample(self, seeds, key=0):
        """A batch for explicit target-type seeds (distinct ids), drawn as a function of (seed, key, seeds)."""
        seeds = _ids(seeds)
        p = ctypes.POINTER(_lib.TypedBatch)()
        _check(lib.burrow_typed_sampler_sample(self._h, _ptr(seeds), len(seeds), int(key), ctypes.byref(p)))
        return self._batch(p)

    def batch(self, epoch, k):
        """Batch k of epoch `epoch` (any k in any order gives the same batch)."""
        p = ctypes.POINTER(_lib.TypedBatch)()
        _check(lib.burrow_typed_sampler_batch(self._h, int(epoch), int(k), ctypes.byref(p)))
        return self._batch(p)

    def epoch(self, e):
        """Iterate epoch e's batches."""
        self._next_epoch = e + 1
        if not self.shuffle:
            n = len(self.ids)
            end = n - n % self.batch_size if self.drop_last else n
            for i, lo in enumerate(range(0, end, self.batch_size)):
                yield self.sample(self.ids[lo:lo + self.batch_size], key=(int(e) << 32) | i)
            return
        for k in range(len(self)):
            yield self.batch(e, k)

    def __iter__(self):
        return self.epoch(self._next_epoch)

    def _close_now(self):
        if self._h is not None:
            lib.burrow_typed_sampler_close(self._h)
            self._h = None

    def close(self):
        """Close now, or when the last batch still referenced goes."""
        self._closing = True
        if self._held == 0:
            self._close_now()

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            self._close_now()


# ---------------------------------------------------------------- trainer

_OPTIMS = {"adam": 1, "adamw": 2, "sgd": 3}
_POLICIES = {"none": 0, "degree": 1, "static": 1, "clock": 2, "profile": 3}
_SPARSE = {"auto": 0, "on": 1, "off": 2}  # enum burrow_sparse_input
_TYPED_FANOUT = {"relation": 0, "node": 1}  # enum burrow_typed_fanout
_EVAL_SPLITS = {"train": 1, "valid": 2, "test": 4}  # enum burrow_eval_split
_LR_SCHEDULES = {"none": 0, "step": 1, "cosine": 2, "plateau": 3}  # enum burrow_lr_schedule
_MODELS = "sage, gcn, gat or mlp (rgcn, rsage or rgat on a typed dataset)"


def _train_opts(options):
    o = _lib.TrainOpts()
    lib.burrow_train_defaults(ctypes.byref(o))
    keep = []
    for k, v in options.items():
        key = k.replace("-", "_")
        if key == "model":
            m = lib.burrow_model_parse(str(v).encode())
            if not m:
                raise Error("Trainer: model must be %s, not %r" % (_MODELS, v), -1)
            o.model = m
        elif key == "optimizer":
            if v not in _OPTIMS:
                raise Error("Trainer: optimizer must be adam, adamw or sgd, not %r" % (v,), -1)
            o.optimizer = _OPTIMS[v]
        elif key in ("batch", "batch_size"):
            o.batch_size = int(v)
        elif key in ("fanout", "eval_fanout"):
            fs = [int(x) for x in (v.split(",") if isinstance(v, str) else v)]
            if len(fs) > _lib.MAX_LAYERS:
                raise Error("Trainer: at most %d %ss" % (_lib.MAX_LAYERS, key), -1)
            for i, f in enumerate(fs):
                getattr(o, key)[i] = f
            if key == "fanout" and "layers" not in options:
                o.layers = len(fs)
        elif key == "eval_splits":  # "valid,test" or ["valid", "test"]: enum burrow_eval_split bits
            names = v.split(",") if isinstance(v, str) else list(v)
            bits = [_EVAL_SPLITS.get(n) for n in names]
            if not names or None in bits or len(set(names)) != len(names):
                raise Error("Trainer: eval_splits wants distinct names of train, valid, test, not %r" % (v,), -1)
            o.eval_splits = sum(bits)
        elif key == "cache":
            if isinstance(v, float) or (isinstance(v, str) and v.endswith("%")):
                o.cache_fraction = float(v[:-1]) / 100 if isinstance(v, str) else v
            else:
                o.cache_bytes = int(v)
        elif key == "cache_policy":
            if v not in _POLICIES:
                raise Error("Trainer: cache_policy must be degree, profile, clock or none, not %r" % (v,), -1)
            o.cache_policy = _POLICIES[v]
        elif key == "engine":
            e = lib.burrow_store_engine_parse(str(v).encode())
            if e < 0:
                raise Error("Trainer: engine must be uring, pread or mmap, not %r" % (v,), -1)
            o.store_engine = e
        elif key == "mem":
            o.mem_bytes = int(v)
        elif key == "scratch":
            keep.append(_b(v))
            o.scratch_dir = keep[-1]
        elif key == "device":
            keep.append(_b(v))
            if lib.burrow_device_check(keep[-1]) < 0:
                raise Error("Trainer: " + lib.burrow_last_error().decode(), -5)
            o.device = keep[-1]
        elif key == "sampler_device":  # "auto" (default), "cpu", "cuda", "cuda:N"; checked at open
            keep.append(_b(v))
            o.sampler_device = keep[-1]
        elif key == "aggr":
            a = lib.burrow_aggr_parse(str(v).encode())
            if a < 0:
                raise Error("Trainer: aggr must be mean, max or sum, not %r" % (v,), -1)
            o.aggr = a
        elif key == "norm":
            nk = lib.burrow_norm_parse(str(v).encode())
            if nk < 0:
                raise Error("Trainer: norm must be batch, layer or none, not %r" % (v,), -1)
            o.norm = nk
        elif key == "sparse_input":
            if v not in _SPARSE:
                raise Error("Trainer: sparse_input must be auto, on or off, not %r" % (v,), -1)
            o.sparse_input = _SPARSE[v]
        elif key == "split":
            fs = [float(x) for x in (v.split(",") if isinstance(v, str) else v)]
            if len(fs) != 3:
                raise Error("Trainer: split wants three fractions", -1)
            for i, f in enumerate(fs):
                o.split[i] = f
        elif key in ("task", "scorer", "sampler"):  # "auto", "node", "link"; link's "dot" or "mlp"; "labor"
            k2 = getattr(lib, "burrow_%s_parse" % key)(str(v).encode())
            if k2 < 0:
                raise Error("Trainer: %s must be %s, not %r" % (
                    key, {"task": "auto, node, multilabel or link", "scorer": "dot or mlp",
                          "sampler": "neighbor, labor or labor-star"}[key], v), -1)
            setattr(o, key, k2)
        elif key == "neg":
            o.neg = int(v)
        elif key == "typed_fanout":  # "relation" (default) or "node": what a typed dataset's fanout counts
            if v not in _TYPED_FANOUT:
                raise Error("Trainer: typed_fanout must be relation or node, not %r" % (v,), -1)
            o.typed_fanout = _TYPED_FANOUT[v]
        elif key == "labor_batch_dependency":  # --labor-batch-dependency K (sampler labor or labor-star)
            o.labor_batch_dependency = int(v)
        elif key in ("embed_types", "embed_dim", "rel_fanout"):  # typed datasets (burrow_train_opts has them)
            if key not in dict(_lib.TrainOpts._fields_):
                raise Error("Trainer: option %r needs a library with typed training" % (k,), -5)
            if key == "rel_fanout":  # "REL=f0,f1;REL=..." or {relation name or (src, name, dst): [f0, f1]}
                if isinstance(v, dict):
                    v = ";".join("%s=%s" % (r if isinstance(r, str) else "___".join(r), ",".join(map(str, fs)))
                                 for r, fs in v.items())
                keep.append(_b(v))
                v = keep[-1]
            setattr(o, key, v)
        elif key == "lr_schedule":  # training habits
            if v not in _LR_SCHEDULES:
                raise Error("Trainer: lr_schedule must be none, step, cosine or plateau, not %r" % (v,), -1)
            o.lr_schedule = _LR_SCHEDULES[v]
        elif key in ("patience", "lr_step", "lr_gamma", "lr_min", "lr_patience", "normalize_features"):
            setattr(o, key, v)
        elif key in ("layers", "hidden", "dropout", "lr", "weight_decay", "momentum", "epochs", "seed",
                     "full_graph", "max_batches", "prefetch", "eval_chunk", "threads", "tf32", "heads",
                     "attn_dropout", "residual"):
            setattr(o, key, v)
        else:
            raise Error("Trainer: unknown option %r" % (k,), -1)
    return o, keep


def _sdict(s):
    return {f: getattr(s, f) for f, _ in s._fields_}


class Trainer:
    """burrow's trainer on a dataset: options named as burrow train's (model, layers, hidden,
    dropout, optimizer, lr, weight_decay, momentum, epochs, seed, full_graph, batch, fanout,
    max_batches, prefetch, cache, cache_policy, engine, eval_chunk, eval_fanout, eval_splits, mem,
    scratch, threads, device, sampler_device, sparse_input; patience, lr_schedule ("none", "step",
    "cosine", "plateau"), lr_step, lr_gamma, lr_min, lr_patience, normalize_features). Models:
    sage, gcn, gat or mlp (rgcn, rsage, rgat on a typed dataset). evaluate() gives -1 for a split
    it did not score (eval_splits: by default valid and test alone with eval_fanout) or an empty
    one. fit() is burrow train's loop: it evaluates and stops early under patience.
    On a typed dataset: model "rgcn", "rsage" or "rgat" (or "mlp" on the target type's own
    features), embed_types / embed_dim (learned embeddings of featureless types), rel_fanout
    ({relation: [fanout per layer, input layer first]} or burrow train's "REL=f0,f1;...") and
    typed_fanout ("relation" or "node": a fanout per destination over all its relations); the
    library decides at open what it can train. task="link" (the default on a dataset with edge
    splits and no labels) trains link prediction: scorer "dot" or "mlp", neg negatives per
    positive; evaluate()'s valid_acc / test_acc then hold the dataset's metric (metric, metric_k:
    Hits@K, MRR or AUC) and valid_auc / test_auc the ROC-AUC; embed() the encoder's embeddings.
    sampler "neighbor", "labor" or "labor-star" (LABOR-*), labor_batch_dependency K (docs/sampler.md)."""

    def __init__(self, dataset, **options):
        self.dataset = _dataset(dataset)
        self._opts, self._keep = _train_opts(options)
        self.epochs = self._opts.epochs
        h = ctypes.c_void_p()
        _check(lib.burrow_trainer_open(ctypes.byref(h), self.dataset._h, ctypes.byref(self._opts)))
        self._h = h
        self._fin = weakref.finalize(self, lib.burrow_trainer_close, h)

    @property
    def epoch(self):
        return lib.burrow_trainer_epoch(self._h)

    def train_epoch(self):
        s = _lib.stats(_lib.EpochStats)
        _check(lib.burrow_trainer_train_epoch(self._h, ctypes.byref(s)))
        return _sdict(s)

    def train(self, epochs=None, on_epoch=None, evaluate=False):
        """Train `epochs` epochs (default: the epochs option); after each, on_epoch(stats) with the
        epoch's stats (and the evaluation's under "eval" when evaluate); on_epoch returning
        False stops. Returns the last stats."""
        st = None
        for _ in range(self.epochs if epochs is None else epochs):
            st = self.train_epoch()
            if evaluate:
                st["eval"] = self.evaluate()
            if on_epoch is not None and on_epoch(st) is False:
                break
        return st

    def evaluate(self):
        """Accuracy on each split: train_acc, valid_acc, test_acc (-1: not scored or empty), by
        full-neighbor inference, or on sampled neighborhoods with eval_fanout."""
        s = _lib.stats(_lib.EvalStats)
        _check(lib.burrow_trainer_evaluate(self._h, ctypes.byref(s)))
        return _sdict(s)

    def best(self):
        return _sdict(lib.burrow_trainer_best(self._h))

    def fit(self, epochs=None, eval_every=1, on_epoch=None):
        """burrow train's loop: train up to `epochs` epochs in all (default the epochs option;
        a loaded checkpoint's count first, as --resume), evaluate every `eval_every` epochs and
        after the last (0: never), and stop early once the patience option runs out (checked
        before each epoch, so a checkpoint saved where it ran out trains no more). on_epoch(stats)
        after each epoch, the evaluation under "eval"; returning False stops. Returns the list of
        the epochs' stats; self.stopped_early is the last epoch trained when patience stopped
        the run, else None."""
        total = self.epochs if epochs is None else int(epochs)
        history = []
        self.stopped_early = None
        for e in range(self.epoch + 1, total + 1):
            if self.should_stop:
                self.stopped_early = e - 1
                break
            st = self.train_epoch()
            if eval_every > 0 and (e % eval_every == 0 or e == total):
                st["eval"] = self.evaluate()
            history.append(st)
            if on_epoch is not None and on_epoch(st) is False:
                break
        return history

    @property
    def should_stop(self):
        """Early stopping's verdict: the last `patience` evaluations found no better valid accuracy."""
        return bool(lib.burrow_trainer_should_stop(self._h))

    @property
    def lr(self):
        """The learning rate the next epoch trains with (the lr_schedule's)."""
        return lib.burrow_trainer_lr(self._h)

    def use_best(self):
        """Put the best evaluation's weights into the model (as burrow predict/embed on best.ckpt)."""
        _check(lib.burrow_trainer_use_best(self._h))

    def _npy_out(self, write):
        fd, path = tempfile.mkstemp(suffix=".npy", dir=self._opts.scratch_dir and self._opts.scratch_dir.decode())
        os.close(fd)
        os.unlink(path)
        try:
            _check(write(path.encode()))
            return np.load(path)
        finally:
            if os.path.exists(path):
                os.unlink(path)

    def embed(self, layer=None):
        """Layer `layer`'s output for every node, [N, width] float32, numbered as burrow embed
        --layer: 1 .. layers (a hidden layer's after its activation), None (default) the last:
        the logits."""
        L = self._opts.layers
        if layer is not None and int(layer) == 0:
            raise Error("Trainer.embed: layers are numbered 1 .. %d, as burrow embed --layer (embed(0) was the first "
                        "layer before this version: now embed(1); None: the logits)" % L, -1)
        if layer is not None and not 1 <= int(layer) <= L:
            raise Error("Trainer.embed: layer %d is outside 1 .. %d (None: the last)" % (int(layer), L), -1)
        k = 0 if layer is None else int(layer)
        return self._npy_out(lambda p: lib.burrow_trainer_embed_layer(self._h, k, p))

    def predict(self, nodes=None, proba=False):
        """As burrow predict: each node's class, [n] int32 (the argmax evaluation scores), or with
        proba the softmax of the logits, [n, classes] float32; nodes None: every node in id order,
        else those listed (repeats allowed). The current weights: use_best() first for the best
        evaluation's."""
        if nodes is None:
            ids, n = None, 0
        else:
            ids = np.ascontiguousarray(nodes, dtype=np.int64).reshape(-1)
            n = ids.size
        ptr = None if ids is None else ids.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        return self._npy_out(lambda p: lib.burrow_trainer_predict(self._h, ptr, n, bool(proba), p))

    def weights_checksum(self):
        return lib.burrow_trainer_weights_checksum(self._h)

    def save(self, path):
        _check(lib.burrow_trainer_save(self._h, _b(path)))

    def load(self, path):
        _check(lib.burrow_trainer_load(self._h, _b(path)))

    def close(self):
        self._fin()


# ---------------------------------------------------------------- tools

def _set(o, kw, what):
    names = {f for f, _ in o._fields_} - {"progress", "progress_user", "kind"}
    keep = []
    for k, v in kw.items():
        if k not in names:
            raise Error("%s: unknown option %r" % (what, k), -1)
        if isinstance(v, (str, os.PathLike)):
            keep.append(_b(v))
            v = keep[-1]
        setattr(o, k, v)
    return keep


def _gen(kind, out, kw):
    o = _lib.GenOpts()
    lib.burrow_gen_defaults(ctypes.byref(o), kind)
    if "feat_dtype" in kw:
        kw = dict(kw, feat_dtype={"float32": 2, "float16": 1}[kw["feat_dtype"]])
    keep = _set(o, kw, "gen")  # noqa: F841 (keeps the strings alive through the call)
    _check(lib.burrow_gen(ctypes.byref(o), _b(out)))
    return os.fspath(out)


def gen_csbm(out, **kw):
    """A contextual stochastic block model dataset in out (num_nodes, avg_degree, homophily,
    num_classes, feat_dim, signal, seed, train_frac, valid_frac, overwrite, ...)."""
    return _gen(1, out, kw)


def gen_rmat(out, **kw):
    """An R-MAT dataset in out (scale, edge_factor, a, b, c, num_classes, feat_dim, seed, ...)."""
    return _gen(2, out, kw)


def gen_papers(out, **kw):
    """A dataset of ogbn-papers100M's shape scaled by fraction (fraction, homophily, num_classes,
    feat_dim, feat_dtype, signal, seed, mem_bytes, spill_dir, ...)."""
    return _gen(3, out, kw)


def gen_mag(out, **kw):
    """A typed twin of OGB-LSC's MAG240M scaled by fraction (fraction, homophily, num_classes,
    feat_dim, feat_dtype, signal, seed, mem_bytes, spill_dir, ...); docs/datasets.md."""
    return _gen(6, out, kw)


def gen_igbh(out, **kw):
    """A typed twin of IGBH-full (MLPerf's four types) scaled by fraction (fraction, num_classes
    19 or 2983, homophily, feat_dim, feat_dtype, signal, seed, ...); docs/datasets.md."""
    return _gen(7, out, kw)


def prep(source, **kw):
    """An OGB dataset (catalog name, zip or unpacked folder) into a dataset directory (root, out,
    mem_bytes, tmp_dir, overwrite, download, url); returns the directory written."""
    o = _lib.PrepOpts()
    lib.burrow_prep_defaults(ctypes.byref(o))
    keep = _set(o, kw, "prep")  # noqa: F841
    buf = ctypes.create_string_buffer(4096)
    _check(lib.burrow_prep(_b(source), ctypes.byref(o), buf, len(buf)))
    return buf.value.decode()


def import_graph(out, edges, num_nodes, **kw):
    """A dataset directory from users' files: edges (.npy or text), num_nodes, and features,
    labels, train, valid, test, undirected, name, overwrite, ..."""
    o = _lib.ImportOpts()
    lib.burrow_import_defaults(ctypes.byref(o))
    keep = _set(o, dict(kw, edges=edges, num_nodes=int(num_nodes)), "import")  # noqa: F841
    _check(lib.burrow_import(_b(out), ctypes.byref(o)))
    return os.fspath(out)


def partition(dataset, parts=2, **kw):
    """Partition a dataset into `parts` parts (method "metis" or "random", balance, ufactor, seed,
    out_dir, overwrite, ...); returns the statistics."""
    o = _lib.PartitionOpts()
    lib.burrow_partition_defaults(ctypes.byref(o))
    if "method" in kw:
        kw = dict(kw, method={"metis": 0, "random": 1}[kw["method"]])
    keep = _set(o, dict(kw, num_parts=int(parts)), "partition")  # noqa: F841
    s = _lib.stats(_lib.PartitionStats)
    path = dataset.path if isinstance(dataset, Dataset) else dataset
    _check(lib.burrow_partition(_b(path), ctypes.byref(o), ctypes.byref(s)))
    d = _sdict(s)
    d["phases"] = [{"name": p.name.decode(), "seconds": p.seconds} for p in s.phases[:s.num_phases]]
    return d


from . import metrics  # noqa: E402  (burrow.metrics: OGB's metrics; it uses _check above)
