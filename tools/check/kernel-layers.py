#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that the module's files call each other in layers.

  tools/check/kernel-layers.py OBJDIR     the objects of one build
  tools/check/kernel-layers.py --self-test

Reads, with nm, the global symbols each OBJDIR/<file>.o of the module
defines and the ones it uses, and draws the graph of uses between files
(a call, or a use of another file's data or trace point).  Fails if the
graph has a cycle, or if a file uses one of a layer that is not below
its own (LAYERS: the map in kernel/main.c), or if an object is not in
LAYERS.  Prints every edge, with the symbols behind it.

Written here, not taken from a tool: the check is twenty lines of graph
over nm's output, and nothing packaged checks an architecture given as
a list of layers against object files.
"""
import os
import subprocess
import sys

# Lowest first; a file may use only files of lower layers.
LAYERS = [
    ["ctl", "share"],
    ["params", "trace", "blkstat", "knee", "user", "order"],
    ["runq", "measure"],
    ["group"],
    ["limit"],
    ["queue"],
    ["ioctl", "uring", "state", "sysfs"],
    ["main"],
]
RANK = {f: i for i, layer in enumerate(LAYERS) for f in layer}


def symbols(obj):
    """(defined, undefined) global symbols of @obj."""
    out = subprocess.run(["nm", obj], check=True, capture_output=True,
                         text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            used.add(f[1])
        elif len(f) == 3 and f[1] in "TDBRVW":
            defined.add(f[2])
    return defined, used


def edges_of(syms):
    """{(user, owner): [symbols]} from {file: (defined, used)}."""
    owner = {}
    for f, (defined, _) in syms.items():
        for s in defined:
            owner[s] = f
    edges = {}
    for f, (_, used) in syms.items():
        for s in used:
            o = owner.get(s)
            if o and o != f:
                edges.setdefault((f, o), []).append(s)
    return edges


def cycle(files, edges):
    """A cycle of the graph as a list of files, or None."""
    succ = {f: sorted(o for (u, o) in edges if u == f) for f in files}
    state = {}

    def visit(f, path):
        state[f] = 1
        path.append(f)
        for o in succ[f]:
            if state.get(o) == 1:
                return path[path.index(o):] + [o]
            if o not in state:
                c = visit(o, path)
                if c:
                    return c
        path.pop()
        state[f] = 2
        return None

    for f in sorted(files):
        if f not in state:
            c = visit(f, [])
            if c:
                return c
    return None


def problems(files, edges):
    """What is wrong with the graph, one line each."""
    out = []
    for f in sorted(files):
        if f not in RANK:
            out.append("%s.o is in no layer (add it to LAYERS and to the "
                       "map in kernel/main.c)" % f)
    for (u, o), syms in sorted(edges.items()):
        if u in RANK and o in RANK and RANK[o] >= RANK[u]:
            out.append("%s uses %s, which is not of a lower layer: %s"
                       % (u, o, " ".join(sorted(syms))))
    c = cycle(files, edges)
    if c:
        out.append("cycle: " + " -> ".join(c))
    return out


def self_test():
    """The checks must fail where they should."""
    good = {("limit", "group"): ["a"], ("group", "runq"): ["b"]}
    assert not problems(["limit", "group", "runq"], good)
    loop = dict(good)
    loop[("runq", "limit")] = ["c"]
    p = problems(["limit", "group", "runq"], loop)
    assert any(x.startswith("cycle: ") for x in p), p
    assert any(x.startswith("runq uses limit") for x in p), p
    p = problems(["queue", "uring"], {("queue", "uring"): ["d"]})
    assert p == ["queue uses uring, which is not of a lower layer: d"], p
    p = problems(["newfile"], {})
    assert p and "no layer" in p[0], p
    syms = {"a": ({"fa"}, {"fb"}), "b": ({"fb"}, {"fa", "printk"})}
    assert edges_of(syms) == {("a", "b"): ["fb"], ("b", "a"): ["fa"]}
    print("kernel-layers: self-test passed")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    d = sys.argv[1]
    main_src = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "..", "..", "kernel")
    objs = sorted(f[:-2] for f in os.listdir(d)
                  if f.endswith(".o") and not f.endswith(".mod.o") and
                  f[:-2] != "iopa" and not f.startswith(".") and
                  os.path.exists(os.path.join(main_src, f[:-2] + ".c")))
    if not objs:
        print("kernel-layers: no objects in %s" % d, file=sys.stderr)
        return 2
    syms = {f: symbols(os.path.join(d, f + ".o")) for f in objs}
    edges = edges_of(syms)
    for (u, o), s in sorted(edges.items()):
        print("%-8s -> %-8s %s" % (u, o, " ".join(sorted(s))))
    bad = problems(objs, edges)
    for p in bad:
        print("kernel-layers: " + p)
    if bad:
        return 1
    print("kernel-layers: %d files, %d edges, no cycle, every use "
          "downwards" % (len(objs), len(edges)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
