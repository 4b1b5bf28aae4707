#!/usr/bin/env python3
"""Re-runs one seed of a committed run from scratch and compares it with the committed numbers.

    python3 scripts/rerun_seed.py RUN_DIR SEED [--binary PATH] [--tol 0] [--keep DIR]

RUN_DIR is a run folder under results/ (it holds the experiment file it ran, `config.toml`, and
`summary.json`); SEED one of its seeds. The seed is trained and evaluated again by the given
binary (default `target/release/uqformer`, built from the checkout) into a fresh folder with an
empty model cache, so nothing is read back from the committed run. Then every number of that
seed's method entries is compared with the committed ones, timings aside (the rules of
`same_metrics.py`). Exits 0 when all agree within `--tol` (absolute; default 0: bit-equal, which
is what a run gives on the machine and build that made it, docs/running.md "Reproducibility
across CPUs"), 1 listing the differences otherwise, 2 when the run itself fails.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from same_metrics import differences, entries, report  # noqa: E402


def option(args, name, default):
    if name not in args:
        return default
    i = args.index(name)
    if i + 1 >= len(args):
        sys.exit(f"{name} needs a value\n{__doc__}")
    value = args[i + 1]
    del args[i : i + 2]
    return value


def main():
    args = sys.argv[1:]
    binary = option(args, "--binary", "target/release/uqformer")
    tol = float(option(args, "--tol", "0"))
    keep = option(args, "--keep", None)
    if len(args) != 2:
        sys.exit(__doc__)
    run, seed = Path(args[0]), int(args[1])
    committed = json.loads((run / "summary.json").read_text())
    seeds = sorted({m["seed"] for m in committed["methods"]})
    if seed not in seeds:
        sys.exit(f"{run}/summary.json: seed {seed} is not in the run (its seeds: {seeds})")
    out = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="rerun-"))
    cmd = [binary, "run", str(run / "config.toml"), "--seeds", str(seed), "--out", str(out),
           "--cache", str(out / "cache"), "--quiet"]
    print("running:", " ".join(cmd), flush=True)
    if subprocess.run(cmd).returncode != 0:
        sys.exit(2)
    # The run's folder, not the `latest` link beside it.
    fresh = [p.parent for p in out.glob("*/*/summary.json") if not p.parent.is_symlink()]
    if len(fresh) != 1:
        sys.exit(f"{out}: expected one new run folder, found {len(fresh)}")
    a, b = entries(run, {seed}), entries(fresh[0], {seed})
    compared, problems = differences(a, b, (str(run), str(fresh[0])), tol)
    sys.exit(report(compared, len(a.keys() & b.keys()), problems))


if __name__ == "__main__":
    main()
