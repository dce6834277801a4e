"""burrow.metrics against slow numpy references written from OGB's Evaluator code (ogb/nodeproppred and
ogb/linkproppred evaluate.py: _eval_rocauc, _eval_hits, _eval_mrr), on fixed random scores with ties."""
import numpy as np
import pytest

import burrow
from burrow import metrics


def ref_roc_auc_score(y, s):
    """sklearn's roc_auc_score for binary y: the trapezoid under the ROC curve, one point per distinct
    threshold (so tied scores move both rates at once)."""
    order = np.argsort(-s, kind="mergesort")
    s, y = s[order], y[order]
    last = np.r_[np.nonzero(np.diff(s))[0], y.size - 1]  # the end of each run of equal scores
    tps = np.cumsum(y)[last]
    fps = (last + 1) - tps
    tpr = np.r_[0, tps] / tps[-1]
    fpr = np.r_[0, fps] / fps[-1]
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))


def ref_rocauc(y_true, y_pred):
    """ogb.nodeproppred's _eval_rocauc, -1 as unknown (graphproppred's is_labeled mask): the tasks with a
    positive and a negative, averaged."""
    out = []
    for i in range(y_true.shape[1]):
        known = y_true[:, i] != -1
        if np.sum(y_true[known, i] == 1) > 0 and np.sum(y_true[known, i] == 0) > 0:
            out.append(ref_roc_auc_score(y_true[known, i], y_pred[known, i]))
    if not out:
        raise RuntimeError("No positively labeled data available. Cannot compute ROC-AUC.")
    return sum(out) / len(out), len(out)


def ref_hits(pos, neg, k):
    """ogb.linkproppred's _eval_hits: 1 when fewer than K negatives; else the share of positives above the
    K-th highest negative (torch.topk(neg, K)[0][-1])."""
    if len(neg) < k:
        return 1.0
    kth = np.sort(neg)[::-1][k - 1]
    return float(np.sum(pos > kth)) / len(pos)


def ref_mrr(pos, neg):
    """ogb.linkproppred's _eval_mrr: the mean of the optimistic and pessimistic ranks, plus one."""
    optimistic = (neg > pos[:, None]).sum(axis=1)
    pessimistic = (neg >= pos[:, None]).sum(axis=1)
    rank = 0.5 * (optimistic + pessimistic) + 1
    return float(np.mean(1.0 / rank))


def tied(rng, shape, levels=5, up=None):
    """Scores on a few levels, k / (levels - 1): many ties, within and across classes. up (a bool mask of
    the shape) lifts those entries one level (positives scoring a little higher), still on the grid."""
    k = rng.integers(0, levels - 1, shape)
    if up is not None:
        k = k + up
    return (k / (levels - 1)).astype(np.float32)


def test_reference_auc_is_sklearn_s():
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 300)
    s = tied(rng, 300, 4)
    assert ref_roc_auc_score(y, s) == pytest.approx(sk.roc_auc_score(y, s), abs=1e-12)


@pytest.mark.parametrize("npos,nneg,levels", [(1, 1, 2), (5, 40, 3), (200, 300, 5), (1000, 777, 50)])
def test_auc_matches_roc_auc_score(npos, nneg, levels):
    rng = np.random.default_rng(npos)
    pos = tied(rng, npos, levels, up=rng.random(npos) < 0.5)
    neg = tied(rng, nneg, levels)
    assert np.isin(pos, neg).any() or levels == 2
    y = np.r_[np.ones(npos), np.zeros(nneg)]
    want = ref_roc_auc_score(y, np.r_[pos, neg])
    assert metrics.auc(pos, neg) == pytest.approx(want, abs=1e-12)


def test_rocauc_skips_unknown_labels_and_one_class_tasks():
    rng = np.random.default_rng(7)
    n, t = 500, 8
    y = rng.integers(-1, 2, (n, t)).astype(np.int8)
    y[:, 2] = np.where(y[:, 2] == 0, -1, y[:, 2])   # task 2: positives and unknowns only
    y[:, 5] = np.where(y[:, 5] == 1, 0, y[:, 5])    # task 5: negatives and unknowns only
    s = tied(rng, (n, t), 6, up=(y == 1))
    want, tasks = ref_rocauc(y, s)
    assert tasks == t - 2
    got, got_tasks = metrics.rocauc(s, y, with_tasks=True)
    assert got_tasks == tasks
    assert got == pytest.approx(want, abs=1e-12)
    rows = rng.permutation(n)[:180]
    assert metrics.rocauc(s, y, rows=rows) == pytest.approx(ref_rocauc(y[rows], s[rows])[0], abs=1e-12)
    # a -1 label's score is not read
    s2 = s.copy()
    s2[y == -1] = np.nan
    assert metrics.rocauc(s2, y) == got
    # float labels: NaN is unknown, as OGB's graph tasks write it
    yf = np.where(y == -1, np.nan, y).astype(np.float32)
    assert metrics.rocauc(s, yf) == got


def test_rocauc_refuses_when_no_task_has_both_classes():
    y = np.array([[1, 0], [1, 0], [-1, 0]], dtype=np.int8)
    with pytest.raises(burrow.Error) as e:
        metrics.rocauc(np.zeros((3, 2)), y)
    assert e.value.name == "E_INVAL" and "none of the 2 tasks" in str(e.value)


@pytest.mark.parametrize("k", [1, 10, 20, 50, 100])
def test_hits_match_ogb_s(k):
    rng = np.random.default_rng(k)
    pos = tied(rng, 300, 7, up=np.ones(300, dtype=int))
    neg = tied(rng, 2000, 7)
    assert (pos == np.sort(neg)[::-1][k - 1]).any()  # some positives tie with the K-th negative
    assert metrics.hits(pos, neg, k) == pytest.approx(ref_hits(pos, neg, k), abs=1e-12)
    # fewer negatives than K: every positive counts
    assert metrics.hits(pos, neg[:k - 1], k) == ref_hits(pos, neg[:k - 1], k) == 1.0


def test_mrr_matches_ogb_s():
    rng = np.random.default_rng(3)
    pos = tied(rng, 400, 5)
    neg = tied(rng, (400, 1000), 5)
    assert metrics.mrr(pos, neg) == pytest.approx(ref_mrr(pos, neg), abs=1e-12)


def test_non_finite_scores_are_refused_by_name():
    with pytest.raises(burrow.Error) as e:
        metrics.auc(np.array([0.5, np.nan]), np.array([0.1]))
    assert e.value.name == "E_RANGE" and "pos[1] is nan" in str(e.value)
    with pytest.raises(burrow.Error):
        metrics.mrr(np.array([0.5]), np.array([[np.inf, 0]]))


def test_a_multilabel_dataset_trains_and_scores_by_rocauc(tmp_path):
    """gen csbm num_tasks=T from Python: Dataset.num_tasks and its int8 [N, T] labels; the trainer
    (task auto) scores ROC-AUC, and the valid value is burrow.metrics.rocauc over the logits."""
    d = tmp_path / "ml"
    burrow.gen_csbm(d, num_nodes=600, feat_dim=8, num_classes=4, num_tasks=3, seed=1)
    ds = burrow.Dataset(d)
    assert ds.num_tasks == 3 and ds.num_classes == 0
    y = ds.labels
    assert y.dtype == np.int8 and y.shape == (600, 3) and set(np.unique(y)) <= {-1, 0, 1}
    t = burrow.Trainer(ds, layers=2, hidden=16, threads=1, epochs=2)
    t.train()
    ev = t.evaluate()
    assert ev["metric"] == 1  # BURROW_METRIC_ROCAUC
    z = t.embed()
    assert z.shape == (600, 3)
    assert ev["valid_acc"] == metrics.rocauc(z, y, rows=ds.split("valid"))
    t.close()
