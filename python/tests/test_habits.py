"""Training habits: early stopping, learning-rate schedules against torch's, normalized
features against a numpy reading, Trainer.predict and one layer numbering."""
import shutil

import numpy as np
import pytest

import burrow

SMALL = dict(layers=2, hidden=16, fanout=[5, 5], batch=256, seed=1, lr=0.01, threads=1)


def _torch_lrs(kind, lr, epochs, valids=None, **kw):
    """The rate torch's scheduler gives each of `epochs` epochs (stepped after each epoch; plateau
    stepped with that epoch's valid accuracy)."""
    torch = pytest.importorskip("torch")
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=lr)
    sched = {
        "step": lambda: torch.optim.lr_scheduler.StepLR(opt, step_size=kw["lr_step"], gamma=kw["lr_gamma"]),
        "cosine": lambda: torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs, eta_min=kw["lr_min"]),
        "plateau": lambda: torch.optim.lr_scheduler.ReduceLROnPlateau(
            opt, mode="max", factor=kw["lr_gamma"], patience=kw["lr_patience"], threshold=0.0,
            min_lr=kw["lr_min"]),
    }[kind]()
    out = []
    for e in range(epochs):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step(valids[e]) if kind == "plateau" else sched.step()
    return out


@pytest.mark.parametrize("kind,kw", [
    ("step", dict(lr_step=3, lr_gamma=0.5)),
    ("cosine", dict(lr_min=0.001)),
    # a rate so small that the valid accuracy stalls and plateau reduces it, down to its floor
    ("plateau", dict(lr=1e-5, lr_gamma=0.5, lr_patience=1, lr_min=3e-6)),
])
def test_lr_schedules_are_torchs(csbm, kind, kw):
    epochs = 12
    kw = dict(kw)
    lr = kw.pop("lr", SMALL["lr"])
    t = burrow.Trainer(csbm, epochs=epochs, lr_schedule=kind, max_batches=1, **dict(SMALL, lr=lr), **kw)
    lrs, valids = [], []
    for e in range(epochs):
        lrs.append(t.lr)
        t.train_epoch()
        valids.append(t.evaluate()["valid_acc"])
    want = _torch_lrs(kind, lr, epochs, valids, **kw)
    assert lrs == pytest.approx(want, rel=1e-12, abs=0)
    assert len(set(lrs)) > 1, "the schedule never changed the rate: the test would not see a wrong rule"


def test_patience_stops_fit_where_the_valid_accuracy_stalled(csbm):
    t = burrow.Trainer(csbm, epochs=60, patience=2, max_batches=1, **SMALL)
    hist = t.fit()
    valids = [h["eval"]["valid_acc"] for h in hist]
    # the reference: stop after the first epoch that is the 2nd in a row without a new best
    best, stale, stop = -1.0, 0, None
    for e, v in enumerate(valids, 1):
        stale = 0 if v > best else stale + 1
        best = max(best, v)
        if stale >= 2:
            stop = e
            break
    assert stop is not None and stop < 60, valids
    assert t.stopped_early == stop and len(hist) == stop and t.should_stop
    u = burrow.Trainer(csbm, epochs=60, max_batches=1, **SMALL)  # without patience: every epoch
    assert len(u.fit(eval_every=0)) == 60 and u.stopped_early is None


def _normalized_copy(src, dst, normalize):
    """A copy of dataset src with non-negative features, rows 0..9 all zero; normalized by numpy
    when asked (each row / its sum, zero rows as they are)."""
    shutil.copytree(src, dst)
    x = np.load(dst / "features.npy", mmap_mode="r+")
    y = np.abs(np.asarray(x, dtype=np.float64))
    y[:10] = 0
    if normalize:
        s = y.sum(axis=1, keepdims=True)
        y = np.where(s == 0, y, y / np.where(s == 0, 1, s))
    x[:] = y.astype(np.float32)
    x.flush()
    return burrow.Dataset(dst)


@pytest.mark.parametrize("mode", [dict(), dict(full_graph=True), dict(eval_fanout=[5, 5])])
def test_normalize_features_reads_what_numpy_normalizes(csbm, tmp_path, mode):
    raw = _normalized_copy(csbm.path, tmp_path / "raw", False)
    ref = _normalized_copy(csbm.path, tmp_path / "ref", True)
    opts = dict(SMALL, epochs=2, **mode)
    if mode.get("full_graph"):
        opts.pop("fanout"), opts.pop("batch")
    a = burrow.Trainer(raw, normalize_features=True, **opts)
    b = burrow.Trainer(ref, **opts)
    c = burrow.Trainer(raw, **opts)
    la, lb, lc = (t.train_epoch()["loss"] for t in (a, b, c))
    assert la == pytest.approx(lb, rel=1e-5) and abs(la - lc) > 1e-4 * abs(lc)
    ea, eb = a.evaluate(), b.evaluate()
    assert ea["valid_acc"] == pytest.approx(eb["valid_acc"], abs=2.0 / len(ref.split("valid")))
    np.testing.assert_allclose(a.embed(1), b.embed(1), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(a.predict(proba=True), b.predict(proba=True), rtol=1e-4, atol=1e-6)
    # recorded in checkpoints: a run reading raw features refuses a normalized model's
    ck = tmp_path / "a.ckpt"
    a.save(ck)
    with pytest.raises(burrow.Error) as e:
        c.load(ck)
    assert "normalized" in str(e.value)


def test_predict_is_the_clis(csbm, tmp_path):
    t = burrow.Trainer(csbm, epochs=2, **SMALL)
    t.fit()
    logits = t.embed()
    cls = t.predict()
    assert cls.dtype == np.int32 and np.array_equal(cls, logits.argmax(1))
    p = t.predict(nodes=[5, 0, 5], proba=True)
    assert p.shape == (3, csbm.num_classes) and np.allclose(p.sum(1), 1, atol=1e-5)
    z = logits[[5, 0, 5]].astype(np.float64)
    z = np.exp(z - z.max(1, keepdims=True))
    np.testing.assert_allclose(p, z / z.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    with pytest.raises(burrow.Error):
        t.predict(nodes=[csbm.num_nodes])


def test_errors_list_every_model(csbm):
    with pytest.raises(burrow.Error) as e:
        burrow.Trainer(csbm, model="gin")
    for m in ("sage", "gcn", "gat", "mlp", "rgcn", "rsage", "rgat"):
        assert m in str(e.value)


def test_labor_sampler_trains_the_same_bits_and_names_its_values(csbm):
    """Trainer(sampler="labor"): LABOR batches (docs/sampler.md) train, twice the same losses; a
    value other than neighbor or labor is refused naming them."""
    runs = []
    for _ in range(2):
        t = burrow.Trainer(csbm, sampler="labor", epochs=2, **SMALL)
        runs.append([t.train_epoch()["loss"] for _ in range(2)])
        t.close()
    assert runs[0] == runs[1]
    n = burrow.Trainer(csbm, epochs=2, **SMALL)
    neighbor = [n.train_epoch()["loss"] for _ in range(2)]
    n.close()
    assert neighbor != runs[0]  # other batches, so other losses
    with pytest.raises(burrow.Error, match="neighbor, labor or labor-star"):
        burrow.Trainer(csbm, sampler="lab", **SMALL)


def test_labor_star_sampler_trains_the_same_bits(csbm):
    """Trainer(sampler="labor-star"): LABOR-* batches, weighted by SAGE's mean (docs/sampler.md),
    train twice the same losses, other than LABOR's; with labor_batch_dependency too."""
    runs = []
    for kw in ({}, {}, {"labor_batch_dependency": 4}):
        t = burrow.Trainer(csbm, sampler="labor-star", epochs=2, **kw, **SMALL)
        runs.append([t.train_epoch()["loss"] for _ in range(2)])
        t.close()
    assert runs[0] == runs[1]
    assert runs[2] != runs[0]
    t = burrow.Trainer(csbm, sampler="labor", epochs=2, **SMALL)
    labor = [t.train_epoch()["loss"] for _ in range(2)]
    t.close()
    assert labor != runs[0]
