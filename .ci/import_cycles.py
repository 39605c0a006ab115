#!/usr/bin/env python3
"""No file imports from a file that imports from it (issue 30): the module graph of
every crate under crates/ must have no cycle, save those listed in
.ci/import-cycles.allow (each to be removed, never added to).

How it reads the imports: each `src/**.rs` file is a module (`foo.rs` and
`foo/mod.rs` are `foo`; `lib.rs` and `main.rs` the crate's root). A file depends on
another when its code (before `#[cfg(test)]`) names a path into it: `crate::a::b…`
(in `use`, including `use crate::{a, b::c}` groups, or inline) or `super::x…`,
resolved to the longest prefix that is a module file. A module naming its own
descendants is not an edge, and neither is a name only the crate root
re-exports (`crate::Foo`): the root is not a node. Cycles are the graph's strongly
connected components of more than one module.

    python3 .ci/import_cycles.py [crates-dir]     # exit 1 on a cycle not allowed
"""

import os
import re
import sys
from collections import defaultdict

PATH = r"((?:::[A-Za-z_][A-Za-z0-9_]*)+)"


def module_of(src: str, path: str) -> tuple:
    parts = os.path.relpath(path, src)[:-3].split(os.sep)
    if parts[-1] in ("lib", "main", "mod"):
        parts = parts[:-1]
    return tuple(parts)


def references(module: tuple, text: str) -> set:
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    refs = set()
    for m in re.finditer(r"\bcrate" + PATH, text):
        refs.add(tuple(m.group(1).split("::")[1:]))
    for m in re.finditer(r"\bsuper" + PATH, text):
        refs.add(module[:-1] + tuple(m.group(1).split("::")[1:]))
    for m in re.finditer(r"use crate::\{([^}]*)\}", text, re.S):
        for item in m.group(1).split(","):
            item = item.strip().split(" as ")[0].strip()
            if item:
                refs.add(tuple(item.split("::")))
    return refs


def cycles(crate_dir: str) -> list:
    src = os.path.join(crate_dir, "src")
    files = {}
    for d, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(d, name)
                files[module_of(src, path)] = path
    graph = defaultdict(set)
    for module, path in files.items():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for ref in references(module, text):
            target = next((ref[:n] for n in range(len(ref), 0, -1) if ref[:n] in files), None)
            if target is None or target[: len(module)] == module:
                continue
            graph[module].add(target)
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(" <-> ".join(sorted("::".join(c) for c in comp)))

    sys.setrecursionlimit(10_000)
    for v in sorted(files):
        if v not in index:
            strong(v)
    return found


def main() -> int:
    root = sys.argv[1] if len(sys.argv) > 1 else "crates"
    allow_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "import-cycles.allow")
    allowed = set()
    if os.path.exists(allow_file):
        with open(allow_file, encoding="utf-8") as f:
            allowed = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    found = set()
    for crate in sorted(os.listdir(root)):
        if os.path.isdir(os.path.join(root, crate, "src")):
            found.update(f"{crate}: {c}" for c in cycles(os.path.join(root, crate)))
    new = sorted(found - allowed)
    gone = sorted(allowed - found)
    for c in new:
        print(f"import cycle: {c}")
    for c in gone:
        print(f"import cycle gone, remove it from .ci/import-cycles.allow: {c}")
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
