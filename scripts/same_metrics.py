#!/usr/bin/env python3
"""Whether two runs' summary.json agree on every metric, field by field, timings aside.

    python3 scripts/same_metrics.py RUN_A RUN_B [--tol 0]

Compares each method entry (matched by name and seed) over every number it holds, except those
that measure time or memory on the machine (latency, wall seconds, peak memory, and the ratios
made from them), and the paired comparisons of the same metrics. Exits 0 when all agree within
`--tol` (absolute; 0 = bit-equal as JSON writes them), 1 listing the first differences otherwise.
"""
import json
import math
import sys
from pathlib import Path

# Keys whose values are timings or depend on them.
TIMED = ("latency", "wall_seconds", "peak_mem", "seconds", "img_per_s", "speedup", "timing")


def timed(path):
    return any(t in part for part in path for t in TIMED)


def leaves(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, path + (str(k),))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, path + (str(i),))
    else:
        yield path, value


def entries(run, seeds=None):
    """A run's method entries (of `seeds` only, when given) and, for all seeds, its comparisons."""
    summary = json.loads((Path(run) / "summary.json").read_text())
    out = {}
    for m in summary["methods"]:
        if seeds is None or m["seed"] in seeds:
            out[("method", m["name"], m["seed"])] = m
    if seeds is None:
        for c in summary.get("comparisons", []):
            if not timed((c["metric"],)):
                out[("comparison", c["method"], c["reference"], c["metric"])] = c
    return out


def differences(a, b, names=("A", "B"), tol=0.0):
    """(values compared, problems) between two `entries` maps, timings aside."""
    problems = [f"only in {names[0]}: {k}" for k in a.keys() - b.keys()]
    problems += [f"only in {names[1]}: {k}" for k in b.keys() - a.keys()]
    compared = 0
    for key in sorted(a.keys() & b.keys(), key=str):
        la, lb = dict(leaves(a[key])), dict(leaves(b[key]))
        for path in sorted(la.keys() | lb.keys()):
            if timed(path):
                continue
            va, vb = la.get(path), lb.get(path)
            compared += 1
            same = va == vb
            if not same and isinstance(va, (int, float)) and isinstance(vb, (int, float)):
                same = (math.isnan(va) and math.isnan(vb)) or abs(va - vb) <= tol
            if not same:
                problems.append(f"{key} {'.'.join(path)}: {va!r} vs {vb!r}")
    return compared, problems


def report(compared, entries_compared, problems):
    """Prints the outcome; the exit status to return."""
    print(f"{compared} values compared over {entries_compared} entries")
    for p in problems[:40]:
        print(p)
    if problems:
        print(f"{len(problems)} differences")
        return 1
    print("every metric equal")
    return 0


def main():
    args = sys.argv[1:]
    tol = 0.0
    if "--tol" in args:
        i = args.index("--tol")
        tol = float(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    a, b = (entries(r) for r in args)
    compared, problems = differences(a, b, args, tol)
    sys.exit(report(compared, len(a.keys() & b.keys()), problems))


if __name__ == "__main__":
    main()
