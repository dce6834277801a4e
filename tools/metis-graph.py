#!/usr/bin/env python3
"""metis-graph.py: write a Burrow dataset directory's graph in METIS's text format (for gpmetis).

The graph is symmetrized and self-loops are dropped, as `burrow partition` does, so the cut that
gpmetis reports is comparable with the one `burrow partition` reports. Standard library only.

usage: tools/metis-graph.py DATASET_DIR OUT.graph
"""
import array
import ast
import sys


def load_npy(path):
    with open(path, "rb") as f:
        magic = f.read(6)
        if magic != b"\x93NUMPY":
            sys.exit(f"{path}: not a .npy file")
        major = f.read(2)[0]
        hlen = int.from_bytes(f.read(2 if major == 1 else 4), "little")
        hdr = ast.literal_eval(f.read(hlen).decode("latin1"))
        code = {"<i8": "q", "<i4": "i"}[hdr["descr"]]
        a = array.array(code)
        a.frombytes(f.read())
        return a


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    d, out = sys.argv[1], sys.argv[2]
    indptr, indices = load_npy(d + "/indptr.npy"), load_npy(d + "/indices.npy")
    n = len(indptr) - 1
    adj = [set() for _ in range(n)]
    for v in range(n):
        for j in range(indptr[v], indptr[v + 1]):
            u = indices[j]
            if u != v:
                adj[v].add(u)
                adj[u].add(v)
    m = sum(len(s) for s in adj) // 2
    with open(out, "w") as f:
        f.write(f"{n} {m}\n")
        for v in range(n):
            f.write(" ".join(str(u + 1) for u in sorted(adj[v])) + "\n")


if __name__ == "__main__":
    main()
