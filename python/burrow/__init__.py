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

__all__ = ["Error", "version", "Dataset", "FeatureStore", "Ticket", "Sampler", "Batch", "Block", "Trainer",
           "gen_csbm", "gen_rmat", "gen_papers", "prep", "import_graph", "partition"]

log = logging.getLogger("burrow")
_LEVELS = {0: logging.ERROR, 1: logging.WARNING, 2: logging.INFO, 3: logging.DEBUG}


@_lib.LOG_FN
def _log_cb(level, msg, user):
    log.log(_LEVELS.get(level, logging.INFO), "%s", msg.decode(errors="replace"))


lib.burrow_log_set(_log_cb, None, 3)

STATUS = {0: "OK", 1: "DONE", -1: "E_INVAL", -2: "E_NOMEM", -3: "E_IO", -4: "E_FORMAT", -5: "E_UNSUPPORTED",
          -6: "E_CUDA", -7: "E_MPI", -8: "E_METIS", -9: "E_NOTFOUND", -10: "E_EXISTS", -11: "E_RANGE"}


class Error(Exception):
    """A libburrow error: str() is the library's message, .status its status code (< 0)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.message = message
        self.status = status
        self.name = STATUS.get(status, str(status))


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


_DT = {ctypes.c_int64: np.int64, ctypes.c_int32: np.int32}

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
        self.symmetric = bool(info.symmetric)
        fp = lib.burrow_dataset_features_path(h)
        self.features_path = fp.decode() if fp else None  # None: the dataset has no features
        self._maps = {}

    def _npy(self, rel):
        if rel not in self._maps:
            self._maps[rel] = np.load(os.path.join(self.path, rel), mmap_mode="r")
        return self._maps[rel]

    @property
    def indptr(self):
        return self._npy("indptr.npy")

    @property
    def indices(self):
        return self._npy("indices.npy")

    @property
    def labels(self):
        return self._npy("labels.npy") if self.num_classes else None

    @property
    def features(self):
        """features.npy as a memmap (reads through the page cache; FeatureStore does not)."""
        return self._npy("features.npy")

    def split(self, which):
        """Node ids of "train", "valid" or "test" (int64)."""
        if which not in _SPLITS:
            raise ValueError("split must be train, valid or test, not %r" % (which,))
        p = os.path.join(self.path, "split", which + ".npy")
        return self._npy(os.path.join("split", which + ".npy")) if os.path.exists(p) else np.empty(0, np.int64)

    def close(self):
        self._maps.clear()
        self._fin()

    def __repr__(self):
        return "burrow.Dataset(%r: %d nodes, %d edges, %d features, %d classes)" % (
            self.path, self.num_nodes, self.num_edges, self.feat_dim, self.num_classes)


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
    "pread" or "mmap"), gathered as float32; cache_bytes caches the rows of highest degree."""

    def __init__(self, dataset, cache_bytes=None, engine="uring", queue_depth=None, cache_policy="degree"):
        self.dataset = _dataset(dataset)
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
        _check(lib.burrow_store_open(ctypes.byref(h), self.dataset.features_path.encode(), ctypes.byref(o)))
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
    local ids into the batch's input_ids; the destinations are input_ids[:num_dst]."""
    __slots__ = ("num_dst", "num_src", "indptr", "indices")

    def __init__(self, num_dst, num_src, indptr, indices):
        self.num_dst, self.num_src, self.indptr, self.indices = num_dst, num_src, indptr, indices

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
            k = b.blocks[l]
            self.blocks.append(Block(k.num_dst, k.num_src, _view(k.indptr, k.num_dst + 1, ctypes.c_int64, held),
                                     _view(k.indices, k.num_edges, ctypes.c_int32, held)))

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
    a GPU: the same batches, element for element."""

    def __init__(self, dataset, fanouts=(15, 10, 5), batch_size=1024, seed=0, shuffle=True, ids=None,
                 split="train", drop_last=False, prefetch=4, threads=1, device=None):
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


# ---------------------------------------------------------------- trainer

_OPTIMS = {"adam": 1, "adamw": 2, "sgd": 3}
_POLICIES = {"none": 0, "degree": 1, "static": 1, "clock": 2}
_SPARSE = {"auto": 0, "on": 1, "off": 2}  # enum burrow_sparse_input
_EVAL_SPLITS = {"train": 1, "valid": 2, "test": 4}  # enum burrow_eval_split


def _train_opts(options):
    o = _lib.TrainOpts()
    lib.burrow_train_defaults(ctypes.byref(o))
    keep = []
    for k, v in options.items():
        key = k.replace("-", "_")
        if key == "model":
            m = lib.burrow_model_parse(str(v).encode())
            if not m:
                raise Error("Trainer: model must be sage, gcn or mlp, not %r" % (v,), -1)
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
                raise Error("Trainer: cache_policy must be degree, clock or none, not %r" % (v,), -1)
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
    scratch, threads, device, sampler_device, sparse_input). evaluate() gives -1 for a split it
    did not score (eval_splits: by default valid and test alone with eval_fanout) or an empty one."""

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

    def embed(self, layer=None):
        """Layer `layer`'s output for every node (default the last: the logits), [N, width] float32."""
        L = self._opts.layers
        if layer is not None and not 0 <= int(layer) < L:
            raise Error("Trainer.embed: layer %d is outside [0, %d) (None: the last)" % (int(layer), L), -1)
        fd, path = tempfile.mkstemp(suffix=".npy", dir=self._opts.scratch_dir and self._opts.scratch_dir.decode())
        os.close(fd)
        os.unlink(path)
        try:
            _check(lib.burrow_trainer_embed_layer(self._h, 0 if layer is None else int(layer) + 1, path.encode()))
            return np.load(path)
        finally:
            if os.path.exists(path):
                os.unlink(path)

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
