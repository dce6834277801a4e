"""Typed graphs from Python: ctypes layouts against the C compiler's, burrow.Dataset on a typed
directory, burrow.TypedSampler, burrow.pyg's HeteroData batches (PyG's to_hetero(GraphSAGE) trains
on them), and burrow.Trainer's typed models."""
import ctypes
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import burrow
from burrow import _lib

from conftest import ROOT

# every ctypes struct of _lib.py and the C struct it mirrors
STRUCTS = {
    "DatasetInfo": "burrow_dataset_info", "Csr": "burrow_csr", "Relation": "burrow_relation",
    "Hetero": "burrow_hetero", "TypeInfo": "burrow_type_info", "Block": "burrow_block", "Batch": "burrow_batch",
    "TypedBatch": "burrow_typed_batch", "TypedSamplerOpts": "burrow_typed_sampler_opts",
    "SamplerOpts": "burrow_sampler_opts", "StoreOpts": "burrow_store_opts", "StoreInfo": "burrow_store_info",
    "StoreStats": "burrow_store_stats", "TrainOpts": "burrow_train_opts", "EpochStats": "burrow_epoch_stats",
    "EvalStats": "burrow_eval_stats", "Best": "burrow_best", "GenOpts": "burrow_gen_opts",
    "PrepOpts": "burrow_prep_opts", "ImportOpts": "burrow_import_opts", "PartitionOpts": "burrow_partition_opts",
    "PartitionPhase": "struct burrow_partition_phase", "PartitionStats": "burrow_partition_stats",
}


def _c_layouts(tmp_path):
    """{struct: (sizeof, {field: offsetof})} as the C compiler lays out include/burrow.h."""
    cc = os.environ.get("CC", "cc")
    if not shutil.which(cc):
        pytest.skip("no C compiler (%s) to compare the ctypes layouts with" % cc)
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "burrow.h"', 'int main(void) {']
    for py, c in STRUCTS.items():
        cls = getattr(_lib, py)
        lines.append('printf("%s = %%zu\\n", sizeof(%s));' % (py, c))
        for f, _ in cls._fields_:
            lines.append('printf("%s %s %%zu\\n", offsetof(%s, %s));' % (py, f, c, f))
    lines.append("return 0; }")
    src, exe = tmp_path / "layout.c", tmp_path / "layout"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "include"), str(src), "-o", str(exe)], check=True)
    out = {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines():
        py, f, v = line.split()
        out.setdefault(py, [0, {}])
        if f == "=":
            out[py][0] = int(v)
        else:
            out[py][1][f] = int(v)
    return out


def test_typed_ctypes_layouts_equal_the_c_compiler_s(tmp_path):
    c = _c_layouts(tmp_path)
    for py in STRUCTS:
        cls = getattr(_lib, py)
        got = (ctypes.sizeof(cls), {f: getattr(cls, f).offset for f, _ in cls._fields_})
        assert got == tuple(c[py]), py
