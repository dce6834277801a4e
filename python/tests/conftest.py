"""Shared fixtures: a small CSBM dataset made by the library itself, once per session."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # the package in this tree
import burrow  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="session")
def csbm(tmp_path_factory):
    d = tmp_path_factory.mktemp("data") / "csbm"
    burrow.gen_csbm(d, num_nodes=3000, feat_dim=24, num_classes=4, seed=3)
    return burrow.Dataset(d)


@pytest.fixture(scope="session")
def cora(tmp_path_factory):
    src = os.path.join(os.environ.get("BURROW_DATASETS", os.path.join(ROOT, "..", "shared", "datasets")),
                       "ogbn-cora.zip")
    if not os.path.exists(src):
        pytest.skip("no Cora: %s is absent" % src)
    out = tmp_path_factory.mktemp("cora") / "cora"
    burrow.prep(src, out=str(out))
    return burrow.Dataset(out)
