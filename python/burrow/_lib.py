"""_lib.py: ctypes declarations of include/burrow.h (the structs and calls the package uses).

The structs mirror the header field for field; python/tests/test_typed.py
(test_typed_ctypes_layouts_equal_the_c_compiler_s) compares each one's size and field offsets
with a C program's compiled against include/burrow.h, and python/tests/test_core.py
(test_struct_layouts_read_the_documented_defaults) checks defaults as the library fills them."""
import ctypes
import ctypes.util
import os
from ctypes import (POINTER, Structure, c_bool, c_char_p, c_double, c_float, c_int, c_int32, c_int64,
                    c_size_t, c_uint, c_uint64, c_void_p)

MAX_LAYERS = 8       # include/burrow/core.h
MAX_TYPES = 16       # include/burrow/graph.h: node types of a typed dataset
MAX_RELATIONS = 32   # relations of a typed dataset
LABOR_STAR_ROUNDS = 3  # include/burrow/sampler.h: the CLI's rounds of LABOR-*'s fixed point

LOG_FN = ctypes.CFUNCTYPE(None, c_int, c_char_p, c_void_p)


def _candidates():
    env = os.environ.get("BURROW_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libburrow.so.0")  # copied in by pip install ./python
    yield os.path.join(here, "..", "..", "build", "libburrow.so")  # the source tree, after make
    found = ctypes.util.find_library("burrow")
    if found:
        yield found


def _load():
    # libgomp reads its wait policy once, when it loads: passive (as the burrow command sets)
    # unless the user chose one; no effect when libgomp is already loaded
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "passive"
    tried = []
    for path in _candidates():
        if not os.path.exists(path) and os.sep in path:
            tried.append(path + " (missing)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("burrow: cannot load libburrow.so; build it with make, or set BURROW_LIB. Tried: "
                      + "; ".join(tried))


lib, lib_path = _load()


class DatasetInfo(Structure):
    _fields_ = [("name", c_char_p), ("num_nodes", c_int64), ("num_edges", c_int64), ("feat_dim", c_int64),
                ("feat_dtype", c_int), ("num_classes", c_int32), ("symmetric", c_bool), ("index_width", c_int),
                ("num_train", c_int64), ("num_valid", c_int64), ("num_test", c_int64), ("source_json", c_char_p),
                ("num_types", c_int), ("num_relations", c_int), ("num_tasks", c_int32),
                ("edge_feat_dim", c_int64), ("edge_feat_dtype", c_int)]


class Csr(Structure):
    _fields_ = [("num_nodes", c_int64), ("num_edges", c_int64), ("indptr", POINTER(c_int64)),
                ("indices", c_void_p), ("index_width", c_int)]


class Relation(Structure):
    _fields_ = [("name", c_char_p), ("src_type", c_int), ("dst_type", c_int), ("graph", Csr)]


class Hetero(Structure):
    _fields_ = [("num_types", c_int), ("type_names", c_char_p * MAX_TYPES), ("type_nodes", c_int64 * MAX_TYPES),
                ("num_relations", c_int), ("rel", Relation * MAX_RELATIONS), ("target_type", c_int)]


class TypeInfo(Structure):
    _fields_ = [("name", c_char_p), ("num_nodes", c_int64), ("feat_dim", c_int64), ("feat_dtype", c_int),
                ("features_path", c_char_p), ("features_offset", c_int64)]


class Block(Structure):
    _fields_ = [("num_dst", c_int64), ("num_src", c_int64), ("num_edges", c_int64),
                ("indptr", POINTER(c_int64)), ("indices", POINTER(c_int32)), ("edge_ids", POINTER(c_int64)),
                ("edge_weight", POINTER(c_float))]


class Batch(Structure):
    _fields_ = [("epoch", c_int64), ("index", c_int64), ("num_layers", c_int), ("blocks", Block * MAX_LAYERS),
                ("num_input", c_int64), ("input_ids", POINTER(c_int64)), ("num_seeds", c_int64),
                ("seeds", POINTER(c_int64))]


class EdgeBatch(Structure):
    _fields_ = [("nodes", POINTER(Batch)), ("num_pairs", c_int64), ("num_pos", c_int64), ("src", POINTER(c_int32)),
                ("dst", POINTER(c_int32)), ("label", POINTER(c_float)), ("epoch", c_int64), ("index", c_int64)]


class EdgeSamplerOpts(Structure):
    _fields_ = [("size", c_size_t), ("num_layers", c_int), ("fanouts", c_int * MAX_LAYERS), ("batch_size", c_int64),
                ("neg", c_int), ("seed", c_uint64), ("exclude", c_bool), ("exclude_reverse", c_bool),
                ("threads", c_int), ("neg_mode", c_int)]


class EdgeSplit(Structure):
    _fields_ = [("num_pos", c_int64), ("pos", POINTER(c_int64)), ("neg", c_int), ("num_neg", c_int64),
                ("neg_pairs", POINTER(c_int64)), ("neg_dst", POINTER(c_int64)), ("k", c_int64),
                ("weight", POINTER(c_float)), ("year", POINTER(c_int32)), ("directed", c_bool), ("metric", c_int),
                ("metric_k", c_int)]


class TypedBatch(Structure):
    _fields_ = [("epoch", c_int64), ("index", c_int64), ("num_layers", c_int), ("num_types", c_int),
                ("num_relations", c_int), ("num_nodes", (c_int64 * MAX_TYPES) * (MAX_LAYERS + 1)),
                ("input_ids", POINTER(c_int64) * MAX_TYPES), ("blocks", (Block * MAX_RELATIONS) * MAX_LAYERS),
                ("num_seeds", c_int64), ("seeds", POINTER(c_int64))]


class TypedSamplerOpts(Structure):
    _fields_ = [("size", c_size_t), ("num_layers", c_int), ("fanouts", c_int * MAX_LAYERS),
                ("rel_fanouts", (c_int * MAX_RELATIONS) * MAX_LAYERS), ("batch_size", c_int64), ("seed", c_uint64),
                ("drop_last", c_bool), ("threads", c_int), ("labor", c_bool), ("fanout_mode", c_int),
                ("labor_star", c_int)]


class SamplerOpts(Structure):
    _fields_ = [("size", c_size_t)] + [("num_layers", c_int), ("fanouts", c_int * MAX_LAYERS), ("batch_size", c_int64),
                ("seed", c_uint64), ("drop_last", c_bool), ("threads", c_int), ("prefetch", c_int),
                ("producers", c_int), ("device", c_char_p), ("device_csr_budget", c_int64),
                ("pin", c_int), ("edge_ids", c_bool), ("labor", c_bool), ("labor_star", c_int),
                ("labor_batch_dependency", c_int)]


class StoreOpts(Structure):
    _fields_ = [("size", c_size_t)] + [("engine", c_int), ("queue_depth", c_int), ("threads", c_int), ("max_read_bytes", c_size_t),
                ("out_dtype", c_int), ("direct", c_bool), ("mmap_random", c_bool)]


class StoreInfo(Structure):
    _fields_ = [("path", c_char_p), ("num_rows", c_int64), ("dim", c_int64), ("file_dtype", c_int),
                ("out_dtype", c_int), ("row_bytes", c_size_t), ("out_row_bytes", c_size_t),
                ("data_offset", c_int64), ("engine", c_int), ("direct", c_bool), ("block_bytes", c_size_t),
                ("threads", c_int), ("queue_depth", c_int), ("max_read_bytes", c_size_t),
                ("staging_bytes", c_size_t), ("cache_fill", c_int), ("cache_fill_bytes", c_uint64),
                ("cache_fill_seconds", c_double), ("cache_row_bytes", c_size_t)]


def stats(cls):
    """A stats struct with its size set, as the library requires of the caller."""
    s = cls()
    s.size = ctypes.sizeof(cls)
    return s


class StoreStats(Structure):
    _fields_ = [("size", c_size_t)] + [(n, c_uint64) for n in ("gathers", "rows", "cache_hits", "cache_misses", "rows_read", "reads",
                                        "bytes_read", "read_errors")] + \
               [("read_p50_us", c_double), ("read_p99_us", c_double)] + \
               [(n, c_uint64) for n in ("cache_rows", "cache_capacity", "cache_bytes", "pages_read")]


class TrainOpts(Structure):
    _fields_ = [("size", c_size_t)] + [("model", c_int), ("layers", c_int), ("hidden", c_int64), ("dropout", c_double),
                ("aggr", c_int), ("heads", c_int), ("attn_dropout", c_double), ("norm", c_int), ("residual", c_bool),
                ("optimizer", c_int), ("lr", c_double), ("weight_decay", c_double), ("momentum", c_double),
                ("epochs", c_int), ("seed", c_uint64), ("split", c_double * 3), ("full_graph", c_bool),
                ("batch_size", c_int64),
                ("fanout", c_int32 * MAX_LAYERS), ("max_batches", c_int64), ("prefetch", c_int),
                ("cache_bytes", c_int64), ("cache_fraction", c_double), ("cache_policy", c_int),
                ("store_engine", c_int), ("eval_chunk", c_int64), ("mem_bytes", c_int64),
                ("scratch_dir", c_char_p), ("threads", c_int), ("progress", c_void_p), ("progress_user", c_void_p),
                ("device", c_char_p), ("tf32", c_bool), ("eval_fanout", c_int32 * MAX_LAYERS),
                ("sampler_device", c_char_p), ("sparse_input", c_int), ("eval_splits", c_uint),
                ("embed_types", c_bool), ("embed_dim", c_int64), ("rel_fanout", c_char_p), ("task", c_int)] + [
                # training habits
                ("patience", c_int), ("lr_schedule", c_int), ("lr_step", c_int), ("lr_gamma", c_double),
                ("lr_min", c_double), ("lr_patience", c_int), ("normalize_features", c_bool),
                # link prediction
                ("scorer", c_int), ("neg", c_int),
                # edge features
                ("edge_weight", c_bool), ("edge_weight_col", c_int),
                # sampling
                ("sampler", c_int),
                # link prediction (appended)
                ("neg_mode", c_int),
                ("gat_edge_features", c_bool),
                # typed datasets (appended)
                ("typed_fanout", c_int),
                ("labor_batch_dependency", c_int)]


class EpochStats(Structure):
    _fields_ = [("size", c_size_t)] + [("epoch", c_int), ("batches", c_int64), ("loss", c_double), ("train_acc", c_double),
                ("epoch_s", c_double), ("sample_s", c_double), ("io_wait_s", c_double), ("compute_s", c_double),
                ("rows_read", c_int64), ("cache_hit_rate", c_double), ("rows_requested", c_int64), ("reads", c_int64),
                ("pages_read", c_int64), ("bytes_read", c_int64), ("threads", c_int)]


class EvalStats(Structure):
    _fields_ = [("size", c_size_t)] + [("train_acc", c_double), ("valid_acc", c_double), ("test_acc", c_double), ("eval_s", c_double),
                ("spilled_bytes", c_int64), ("metric", c_int), ("metric_k", c_int), ("valid_auc", c_double),
                ("test_auc", c_double)]


class Best(Structure):
    _fields_ = [("epoch", c_int), ("valid_acc", c_double), ("test_acc", c_double)]


class GenOpts(Structure):
    _fields_ = [("size", c_size_t)] + [("kind", c_int), ("seed", c_uint64), ("num_nodes", c_int64), ("avg_degree", c_double),
                ("homophily", c_double), ("scale", c_int), ("edge_factor", c_double), ("a", c_double),
                ("b", c_double), ("c", c_double), ("num_classes", c_int32), ("feat_dim", c_int64),
                ("feat_dtype", c_int), ("signal", c_double), ("train_frac", c_double), ("valid_frac", c_double),
                ("overwrite", c_bool), ("threads", c_int), ("progress", c_void_p), ("progress_user", c_void_p),
                ("fraction", c_double), ("mem_bytes", c_size_t), ("spill_dir", c_char_p), ("target_signal", c_double),
                ("num_tasks", c_int32), ("edge_split", c_double * 3), ("neg_per_source", c_int32),
                ("directed", c_bool),
                ("edge_feat_dim", c_int64), ("edge_signal", c_double),
                ("node_features_from_edges", c_bool), ("edge_reduce", c_int), ("fill", c_int), ("order", c_int)]


class PrepOpts(Structure):
    _fields_ = [("size", c_size_t)] + [("root", c_char_p), ("out", c_char_p), ("feat_dtype", c_int), ("mem_bytes", c_size_t),
                ("tmp_dir", c_char_p), ("overwrite", c_bool), ("download", c_bool), ("url", c_char_p),
                ("progress", c_void_p), ("progress_user", c_void_p), ("add_reverse", c_bool), ("fill", c_int),
                ("node_features_from_edges", c_bool), ("edge_reduce", c_int), ("layout", c_char_p), ("classes", c_int), ("order", c_int)]


class ImportOpts(Structure):
    _fields_ = [("size", c_size_t)] + [("edges", c_char_p), ("header", c_bool), ("num_nodes", c_int64), ("features", c_char_p),
                ("labels", c_char_p), ("train", c_char_p), ("valid", c_char_p), ("test", c_char_p),
                ("split", c_double * 3), ("split_seed", c_uint64), ("undirected", c_bool),
                ("feat_dtype", c_int), ("name", c_char_p), ("mem_bytes", c_size_t), ("tmp_dir", c_char_p),
                ("overwrite", c_bool), ("progress", c_void_p), ("progress_user", c_void_p), ("stats", c_void_p),
                ("num_types", c_int), ("types", c_void_p), ("num_relations", c_int), ("relations", c_void_p),
                ("target", c_char_p), ("split_dir", c_char_p), ("add_reverse", c_bool), ("fill", c_int),
                ("edge_split", c_double * 3),
                ("edge_features", c_char_p), ("node_features_from_edges", c_bool), ("edge_reduce", c_int),
                ("relabel", c_bool), ("content", c_char_p), ("split_name", c_char_p), ("multilabel", c_bool),
                ("order", c_int)]


class PartitionOpts(Structure):
    _fields_ = [("size", c_size_t)] + [("num_parts", c_int), ("balance", c_uint), ("ufactor", c_double), ("seed", c_uint64),
                ("method", c_int), ("mem_bytes", c_size_t), ("coarsen_to", c_int64), ("refine_passes", c_int),
                ("out_dir", c_char_p), ("overwrite", c_bool), ("threads", c_int), ("progress", c_void_p),
                ("progress_user", c_void_p)]


class PartitionPhase(Structure):
    _fields_ = [("name", c_char_p), ("seconds", c_double), ("heap_peak_bytes", c_int64),
                ("rss_peak_bytes", c_int64)]


class PartitionStats(Structure):
    _fields_ = [("size", c_size_t)] + [("num_parts", c_int), ("num_nodes", c_int64), ("num_edges", c_int64), ("sym_edges", c_int64),
                ("edge_cut", c_int64), ("metis_cut", c_int64), ("cut_fraction", c_double),
                ("imbalance_nodes", c_double), ("imbalance_train", c_double), ("imbalance_edges", c_double),
                ("halo_total", c_int64), ("replication", c_double), ("coarsened", c_bool),
                ("coarsen_levels", c_int), ("coarse_nodes", c_int64), ("coarse_edges", c_int64),
                ("seconds", c_double), ("peak_rss_bytes", c_int64), ("num_phases", c_int),
                ("phases", PartitionPhase * 8)]


P = c_void_p
PP = POINTER(c_void_p)
I64P = POINTER(c_int64)


def _decl(name, res, *args):
    f = getattr(lib, name)
    f.restype = res
    f.argtypes = list(args)


# calls of typed graphs (issue 31) that a library built before them lacks: the package still
# loads, and the typed classes raise burrow.Error naming the missing call (burrow._need)
missing = set()


for _name, _res, _args in [
    ("burrow_version", c_char_p, ()),
    ("burrow_strerror", c_char_p, (c_int,)),
    ("burrow_last_error", c_char_p, ()),
    ("burrow_log_set", None, (LOG_FN, c_void_p, c_int)),
    ("burrow_dataset_open", c_int, (PP, c_char_p)),
    ("burrow_dataset_close", None, (P,)),
    ("burrow_dataset_get_info", POINTER(DatasetInfo), (P,)),
    ("burrow_dataset_graph", POINTER(Csr), (P,)),
    ("burrow_dataset_split", I64P, (P, c_int, I64P)),
    ("burrow_dataset_features_path", c_char_p, (P,)),
    ("burrow_store_defaults", None, (POINTER(StoreOpts),)),
    ("burrow_store_open", c_int, (PP, c_char_p, POINTER(StoreOpts))),
    ("burrow_store_open_type", c_int, (PP, c_void_p, c_int, POINTER(StoreOpts))),
    ("burrow_store_close", None, (P,)),
    ("burrow_store_get_info", POINTER(StoreInfo), (P,)),
    ("burrow_store_engine_parse", c_int, (c_char_p,)),
    ("burrow_device_check", c_int, (c_char_p,)),
    ("burrow_aggr_parse", c_int, (c_char_p,)),
    ("burrow_norm_parse", c_int, (c_char_p,)),
    ("burrow_store_engine_name", c_char_p, (c_int,)),
    ("burrow_store_gather", c_int, (P, P, c_size_t, P)),
    ("burrow_store_submit", c_int, (P, P, c_size_t, P, PP)),
    ("burrow_store_wait", c_int, (P, P)),
    ("burrow_store_poll", c_int, (P, P)),
    ("burrow_store_get_stats", None, (P, POINTER(StoreStats))),
    ("burrow_store_reset_stats", None, (P,)),
    ("burrow_store_cache_degree", c_int, (P, POINTER(Csr), c_size_t)),
    ("burrow_store_cache_clock", c_int, (P, c_size_t)),
    ("burrow_sampler_defaults", None, (POINTER(SamplerOpts),)),
    ("burrow_sampler_open", c_int, (PP, POINTER(Csr), P, c_int64, POINTER(SamplerOpts))),
    ("burrow_sampler_close", None, (P,)),
    ("burrow_sampler_num_batches", c_int64, (P,)),
    ("burrow_sampler_start", c_int, (P, c_int64)),
    ("burrow_sampler_next", c_int, (P, POINTER(POINTER(Batch)))),
    ("burrow_sampler_release", None, (P, POINTER(Batch))),
    ("burrow_sampler_sample", c_int, (P, P, c_int64, c_uint64, POINTER(POINTER(Batch)))),
    ("burrow_train_defaults", None, (POINTER(TrainOpts),)),
    ("burrow_model_parse", c_int, (c_char_p,)),
    ("burrow_trainer_open", c_int, (PP, P, POINTER(TrainOpts))),
    ("burrow_trainer_close", None, (P,)),
    ("burrow_trainer_train_epoch", c_int, (P, POINTER(EpochStats))),
    ("burrow_trainer_evaluate", c_int, (P, POINTER(EvalStats))),
    ("burrow_trainer_epoch", c_int, (P,)),
    ("burrow_trainer_best", Best, (P,)),
    ("burrow_trainer_save", c_int, (P, c_char_p)),
    ("burrow_trainer_load", c_int, (P, c_char_p)),
    ("burrow_trainer_embed_layer", c_int, (P, c_int, c_char_p)),
    ("burrow_trainer_weights_checksum", c_uint64, (P,)),
    ("burrow_trainer_sampler_device", c_char_p, (P,)),
    ("burrow_trainer_should_stop", c_bool, (P,)),
    ("burrow_trainer_lr", c_double, (P,)),
    ("burrow_trainer_use_best", c_int, (P,)),
    ("burrow_trainer_predict", c_int, (P, POINTER(c_int64), c_int64, c_bool, c_char_p)),
    ("burrow_gen_defaults", None, (POINTER(GenOpts), c_int)),
    ("burrow_gen", c_int, (POINTER(GenOpts), c_char_p)),
    ("burrow_prep_defaults", None, (POINTER(PrepOpts),)),
    ("burrow_prep", c_int, (c_char_p, POINTER(PrepOpts), c_char_p, c_size_t)),
    ("burrow_import_defaults", None, (POINTER(ImportOpts),)),
    ("burrow_import", c_int, (c_char_p, POINTER(ImportOpts))),
    ("burrow_partition_defaults", None, (POINTER(PartitionOpts),)),
    ("burrow_partition", c_int, (c_char_p, POINTER(PartitionOpts), POINTER(PartitionStats))),
]:
    _decl(_name, _res, *_args)

for _name, _res, _args in [
    ("burrow_dataset_hetero", POINTER(Hetero), (P,)),
    ("burrow_dataset_type_info", c_int, (P, c_int, POINTER(TypeInfo))),
    ("burrow_typed_sampler_defaults", None, (POINTER(TypedSamplerOpts),)),
    ("burrow_typed_sampler_open", c_int, (PP, POINTER(Hetero), P, c_int64, POINTER(TypedSamplerOpts))),
    ("burrow_typed_sampler_close", None, (P,)),
    ("burrow_typed_sampler_num_batches", c_int64, (P,)),
    ("burrow_typed_sampler_batch", c_int, (P, c_int64, c_int64, POINTER(POINTER(TypedBatch)))),
    ("burrow_typed_sampler_sample", c_int, (P, P, c_int64, c_uint64, POINTER(POINTER(TypedBatch)))),
    ("burrow_typed_sampler_release", None, (P, POINTER(TypedBatch))),
]:
    try:
        _decl(_name, _res, *_args)
    except AttributeError:
        missing.add(_name)


# OGB's metrics (include/burrow/train.h, "metrics"): a library built before them lacks them, and
# burrow.metrics raises burrow.Error naming the missing call
F32P = POINTER(ctypes.c_float)
for _name, _res, _args in [
    ("burrow_metric_auc", c_int, (F32P, c_int64, F32P, c_int64, POINTER(c_double))),
    ("burrow_metric_rocauc_tasks", c_int, (F32P, POINTER(ctypes.c_int8), c_int64, c_int64, I64P, c_int64,
                                           POINTER(c_double), I64P)),
    ("burrow_metric_hits", c_int, (F32P, c_int64, F32P, c_int64, c_int, POINTER(c_double))),
    ("burrow_metric_mrr", c_int, (F32P, F32P, c_int64, c_int64, POINTER(c_double))),
]:
    try:
        _decl(_name, _res, *_args)
    except AttributeError:
        missing.add(_name)

# link prediction (issue 33): edge splits, the edge sampler, scorers
for _name, _res, _args in [
    ("burrow_dataset_has_edge_split", c_bool, (P,)),
    ("burrow_dataset_edge_split", c_int, (P, c_int, POINTER(EdgeSplit))),
    ("burrow_edge_sampler_defaults", None, (POINTER(EdgeSamplerOpts),)),
    ("burrow_edge_sampler_open", c_int, (PP, POINTER(Csr), P, c_int64, POINTER(EdgeSamplerOpts))),
    ("burrow_edge_sampler_close", None, (P,)),
    ("burrow_edge_sampler_num_batches", c_int64, (P,)),
    ("burrow_edge_sampler_batch", c_int, (P, c_int64, c_int64, POINTER(POINTER(EdgeBatch)))),
    ("burrow_edge_sampler_release", None, (P, POINTER(EdgeBatch))),
    ("burrow_task_parse", c_int, (c_char_p,)),
    ("burrow_scorer_parse", c_int, (c_char_p,)),
    ("burrow_sampler_parse", c_int, (c_char_p,)),
]:
    try:
        _decl(_name, _res, *_args)
    except AttributeError:
        missing.add(_name)
