"""metrics.py: OGB's evaluation metrics over numpy arrays, computed by libburrow (include/burrow/train.h,
"metrics"): the values ogb's nodeproppred and linkproppred Evaluators give.

    burrow.metrics.rocauc(proba, labels, rows=split["valid"])   # ogbn-proteins: mean ROC-AUC over tasks
    burrow.metrics.hits(pos, neg, k=50)                         # ogbl-collab / ppa / ddi
    burrow.metrics.mrr(pos, neg)                                # ogbl-citation2: neg [len(pos), K]
    burrow.metrics.auc(pos, neg)                                # ogbl-vessel

Scores are compared as float32 (a float64 array is rounded to it first); a score that is not finite
raises burrow.Error (status E_RANGE) naming it."""
import ctypes

import numpy as np

from . import _check, _need
from ._lib import lib

__all__ = ["auc", "rocauc", "hits", "mrr"]


def _f32(x, ndim=1):
    a = np.ascontiguousarray(x, dtype=np.float32)
    if a.ndim != ndim:
        raise ValueError("scores must have %d dimension(s), not shape %s" % (ndim, a.shape))
    return a


def _fp(a):
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


def auc(pos, neg):
    """ROC-AUC of the positives' scores against the negatives', ties counted half (sklearn's roc_auc_score)."""
    _need("burrow_metric_auc")
    p, n = _f32(pos), _f32(neg)
    out = ctypes.c_double()
    _check(lib.burrow_metric_auc(_fp(p), p.size, _fp(n), n.size, ctypes.byref(out)))
    return out.value


def rocauc(scores, labels, rows=None, with_tasks=False):
    """ogbn-proteins' ROC-AUC: per task over the rows labelled 0 or 1 (-1, or NaN in a float array, is
    unknown), averaged over the tasks that have both classes there. scores and labels [n, T]; rows picks
    the rows scored (a split's node ids; None = all). with_tasks: return (value, tasks averaged)."""
    _need("burrow_metric_rocauc_tasks")
    s = _f32(scores, 2)
    y = np.asarray(labels)
    if y.shape != s.shape:
        raise ValueError("labels have shape %s, scores %s: they must match" % (y.shape, s.shape))
    if y.dtype.kind == "f":
        y = np.where(np.isnan(y), -1, y)
    y8 = np.ascontiguousarray(y, dtype=np.int8)
    if y.dtype != np.int8 and not np.array_equal(y8, y):
        raise ValueError("labels must be 1, 0 or -1 (unknown)")
    r = None if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
    out, tasks = ctypes.c_double(), ctypes.c_int64()
    _check(lib.burrow_metric_rocauc_tasks(_fp(s), y8.ctypes.data_as(ctypes.POINTER(ctypes.c_int8)), s.shape[0],
                                          s.shape[1],
                                          None if r is None else r.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                                          0 if r is None else r.size, ctypes.byref(out), ctypes.byref(tasks)))
    return (out.value, tasks.value) if with_tasks else out.value


def hits(pos, neg, k):
    """Hits@K: the share of positives scoring strictly above the K-th highest negative (1 when fewer than K)."""
    _need("burrow_metric_hits")
    p, n = _f32(pos), _f32(neg)
    out = ctypes.c_double()
    _check(lib.burrow_metric_hits(_fp(p), p.size, _fp(n), n.size, int(k), ctypes.byref(out)))
    return out.value


def mrr(pos, neg):
    """MRR: neg [len(pos), K], row i the negatives of positive i; rank 1 + (#neg > pos + #neg >= pos) / 2."""
    _need("burrow_metric_mrr")
    p, n = _f32(pos), _f32(neg, 2)
    if n.shape[0] != p.size:
        raise ValueError("neg has %d rows for %d positives" % (n.shape[0], p.size))
    out = ctypes.c_double()
    _check(lib.burrow_metric_mrr(_fp(p), _fp(n), p.size, n.shape[1], ctypes.byref(out)))
    return out.value
