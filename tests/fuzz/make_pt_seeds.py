#!/usr/bin/env python3
"""make_pt_seeds.py OUT: the seed corpus of fuzz_pt (tests/fuzz/corpus/pt): small files
written by torch.save as OGB's split .pt files are (run with build/venv/bin/python)."""
import os
import sys

import numpy as np
import torch


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "pt")
    os.makedirs(out, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    e = torch.randint(0, 20, (6, 2), generator=g)
    torch.save({"edge": e, "weight": torch.ones(6), "year": torch.arange(6)}, os.path.join(out, "collab-train.pt"))
    torch.save({"edge": e, "edge_neg": torch.randint(0, 20, (4, 2), generator=g)}, os.path.join(out, "ddi-valid.pt"))
    torch.save({"source_node": e[:, 0], "target_node": e[:, 1],
                "target_node_neg": torch.randint(0, 20, (6, 3), generator=g)}, os.path.join(out, "citation2-test.pt"))
    torch.save({"t": e.t(), "w": torch.rand(3, generator=g).half(), "l": [1, 2.5, None, True]},
               os.path.join(out, "views.pt"))
    torch.save({"edge": e, "edge_neg": e.flip(1), "weight": torch.ones(6).double()},
               os.path.join(out, "legacy.pt"), _use_new_zipfile_serialization=False)
    # OGB-LSC's split_dict.pt and meta.pt: numpy arrays and scalars (protocol 2: latin-1 bytes)
    split = {"train": np.array([3, 200, 70000], dtype=np.int64), "valid": np.arange(4, dtype=np.int32),
             "test-dev": np.zeros(0, dtype=np.int64), "w": np.asfortranarray(np.ones((2, 3), np.float16))}
    torch.save(split, os.path.join(out, "np-split.pt"))
    torch.save(split, os.path.join(out, "np-split-p4.pt"), pickle_protocol=4)
    torch.save(split, os.path.join(out, "np-split-legacy.pt"), _use_new_zipfile_serialization=False)
    torch.save({"paper": np.int64(5), "author": 7, "num_classes": np.int32(3), "t": np.array([True, False])},
               os.path.join(out, "np-meta.pt"))


if __name__ == "__main__":
    main()
