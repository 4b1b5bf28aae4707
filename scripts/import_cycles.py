#!/usr/bin/env python3
"""The house's layering: import loops between the files of each crate, imports that run back up
inside a crate (a file taking an item its parent module defines) and between crates (a crate
depending on one of its own layer or above, in LAYERS). Prints each and exits 1 if there is one.

A file imports another when its code (not its comments or its `#[cfg(test)]` part) names a path
`crate::a::b` or `super::b` that resolves to that file's module (the longest prefix that is a
module file). Loops are looked for among the children of every module (the crate root's
top-level modules, then the files of each folder), each child standing for itself and all its
descendants: so `a.rs -> b/c.rs -> a.rs` is a loop between `a` and `b`, while a parent and its own
children (`mod x;`, `super::`) are one unit for loops. A parent module is a front door: a child
that takes an item the parent itself defines (not one it re-exports) runs back up. Run from the
repository root:
    python3 scripts/import_cycles.py
"""

import os
import re
import sys
import tomllib

# The workspace's crates from the top down; a crate may depend only on crates of lower layers.
LAYERS = [
    ["cli"],
    ["experiment"],
    ["hetdpt"],
    ["hydra"],
    ["ensembles", "lora-ensemble", "pruning"],
    ["train"],
    ["importers", "seam"],
    ["backbone", "report"],
    ["data", "kernels", "plots", "runtime", "uq-metrics"],
    ["registry"],
]

ITEM = r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:fn|struct|enum|trait|const|static|type|union)\s+{}\b"

PATH = re.compile(r"\b(crate|super)((?:::[a-z_][a-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super)((?:::[a-z_][a-z0-9_]*)*)::\{([^;]*?)\};", re.S)


def modules(src):
    """Module path (tuple) -> file, for every .rs file under src."""
    found = {}
    for folder, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            parts = os.path.relpath(path, src)[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            found[tuple(parts)] = path
    return found


def code(path):
    text = open(path).read()
    text = text.split("#[cfg(test)]")[0]
    return "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("//"))


def resolve(mods, here, kind, segments):
    base = () if kind == "crate" else here[:-1]
    full = base + tuple(segments)
    for n in range(len(full), 0, -1):
        if full[:n] in mods:
            return full[:n]
    return None


def imports(mods, module, text):
    names = set()
    # A file's own module is its parent when it is a module root (mod.rs, x.rs with x/).
    here = module
    for m in PATH.finditer(text):
        names.add(resolve(mods, here, m.group(1), m.group(2).split("::")[1:]))
    for m in GROUP.finditer(text):
        prefix = m.group(2).split("::")[1:] if m.group(2) else []
        for inner in re.findall(r"(?:^|[{,])\s*([a-z_][a-z0-9_]*)::", m.group(3)):
            names.add(resolve(mods, here, m.group(1), prefix + [inner]))
    return {n for n in names if n and n != module}


def item_paths(mods, module, text):
    """(ancestor module, item name) for every path of `text` that names an item of an ancestor
    of `module` (its parent, its parent's parent, ..., the crate root)."""
    found = set()
    paths = [(m.group(1), m.group(2).split("::")[1:]) for m in PATH.finditer(text)]
    for m in GROUP.finditer(text):
        prefix = m.group(2).split("::")[1:] if m.group(2) else []
        for inner in re.split(r"[{},]", m.group(3)):
            name = inner.strip().split(" as ")[0].split("::")
            if name[0]:
                paths.append((m.group(1), prefix + name))
    for kind, segments in paths:
        target = resolve(mods, module, kind, segments) if segments else None
        full = (() if kind == "crate" else module[:-1]) + tuple(segments)
        if target is None:
            target, rest = (), list(full)
        else:
            rest = list(full[len(target) :])
        if target != module[: len(target)] or target == module or not rest:
            continue
        found.add((target, rest[0]))
    return found


def back_up(crate, mods):
    """`crate: child -> parent: item` for each item a file takes from a module above it that
    the module itself defines."""
    lines = []
    for module, path in sorted(mods.items()):
        text = code(path)
        for target, name in sorted(item_paths(mods, module, text)):
            if re.search(ITEM.format(re.escape(name)), code(mods[target]), re.M):
                parent = "::".join(target) or "crate root"
                lines.append(f"{crate}: {'::'.join(module)} -> {parent}: {name} runs back up")
    return lines


def crate_layers():
    """`a -> b` for each dependency of a workspace crate on a crate not below it in LAYERS, and
    each crate LAYERS does not place."""
    layer = {c: i for i, names in enumerate(LAYERS) for c in names}
    lines = []
    for crate in sorted(os.listdir("crates")):
        manifest = os.path.join("crates", crate, "Cargo.toml")
        if not os.path.isfile(manifest):
            continue
        if crate not in layer:
            lines.append(f"{crate}: not placed in LAYERS (scripts/import_cycles.py)")
            continue
        deps = tomllib.load(open(manifest, "rb")).get("dependencies", {})
        for dep in sorted(d for d in deps if d in layer):
            if layer[dep] <= layer[crate]:
                lines.append(f"{crate} -> {dep}: depends on a crate of its own layer or above")
    return lines


def sibling_graph(parent, edges):
    """The children of `parent`, each with its descendants contracted into it, and the imports
    between them."""
    n = len(parent)
    graph = {}
    for source, targets in edges.items():
        if len(source) <= n or source[:n] != parent:
            continue
        node = source[n]
        for target in targets:
            if len(target) > n and target[:n] == parent and target[n] != node:
                graph.setdefault(node, set()).add(target[n])
    return graph


def loops(graph):
    seen, stack, on, found = {}, [], set(), []

    def visit(node):
        seen[node] = True
        stack.append(node)
        on.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt in on:
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in seen:
                visit(nxt)
        stack.pop()
        on.discard(node)

    for node in sorted(graph):
        if node not in seen:
            visit(node)
    return found


def main():
    problems = crate_layers()
    for line in problems:
        print(line)
    bad = len(problems)
    for crate in sorted(os.listdir("crates")):
        src = os.path.join("crates", crate, "src")
        if not os.path.isdir(src):
            continue
        mods = modules(src)
        edges = {m: imports(mods, m, code(p)) for m, p in mods.items()}
        for line in back_up(crate, mods):
            bad += 1
            print(line)
        for parent in sorted({m[:-1] for m in mods if m}):
            graph = sibling_graph(parent, edges)
            for loop in loops(graph):
                bad += 1
                print(f"{crate}: " + " -> ".join("::".join(parent + (m,)) for m in loop))
    if bad:
        sys.exit(1)
    print("no import loops, nothing runs back up")


if __name__ == "__main__":
    main()
