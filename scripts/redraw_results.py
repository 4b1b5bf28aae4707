#!/usr/bin/env python3
"""Draws committed reports again with the current build, from their stored numbers only.

    scripts/redraw_results.py [--binary target/release/uqformer] [--check] DIR...

A run directory (with summary.json) is redrawn in place by `uqformer report`. A joined report
(`results/<study>/compare/<name>/`) is made again by `uqformer compare` from the runs its
"Runs compared" table lists, against the reference its summary.json names, into a scratch
folder, and its files replace the folder's (figures it no longer draws are removed). Nothing
measured changes: the script fails if any comparison's numbers or any method's metrics differ
from those stored before.

With --check nothing is written: every DIR is drawn into a scratch copy, which proves that the
current build still reads it. Either way the script fails when a DIR's report.md links a figure
the folder does not hold (a folder committed without its figures).
"""
import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def leaves(value, path=()):
    """Every number in `value`, by its path."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, path + (i,))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path, value


def changed(before, after):
    """The numbers of `before` that `after` does not hold unchanged (methods, comparisons and
    seeds; a field an older run lacks may be added, as null, by a newer build)."""
    keep = lambda s: {k: s.get(k) for k in ("methods", "comparisons", "seeds")}
    now = dict(leaves(keep(after)))
    return [p for p, v in leaves(keep(before)) if now.get(p) != v]


def joined_runs(dir):
    """The run directories a joined report lists, as written in its report.md."""
    text = (dir / "report.md").read_text()
    table = text.split("## Runs compared", 1)[1].split("\n\n", 2)[1]
    return re.findall(r"^\| `([^`]+)` \|", table, flags=re.M)


def run(cmd):
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{done.stderr}")


def redraw_joined(binary, dir, scratch):
    summary = json.loads((dir / "summary.json").read_text())
    reference = summary["comparisons"][0]["reference"]
    out = scratch / "out"
    # A join whose claims came from an experiment file (`--claims`) records the file.
    claims = tomllib.loads((dir / "config.toml").read_text()).get("claims")
    extra = ["--claims", claims] if claims else []
    run([binary, "compare", *joined_runs(dir), "--out", out, "--reference", reference, *extra])
    return next(d for d in (out / "compare").iterdir() if d.is_dir() and not d.is_symlink())


def dangling(dir):
    """The figures report.md links that `dir` does not hold."""
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (dir / "report.md").read_text())
    return [f for f in links if not (dir / f).is_file()]


def redraw(binary, dir, check):
    dir = dir.resolve()
    missing = dangling(dir)
    if missing and check:
        sys.exit(f"{dir}: report.md links figures the folder lacks: {', '.join(missing)}")
    before = json.loads((dir / "summary.json").read_text())
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        if (dir / "report.md").read_text().find("## Runs compared") >= 0:
            made = redraw_joined(binary, dir, scratch)
        else:
            made = scratch / dir.name
            shutil.copytree(dir, made)
            run([binary, "report", made])
        after = json.loads((made / "summary.json").read_text())
        moved = changed(before, after)
        if moved:
            sys.exit(f"{dir}: the redraw changed stored numbers ({moved[:3]}); nothing written")
        if check:
            print(f"read: {dir.relative_to(ROOT)}")
            return
        for old in dir.glob("fig-*.svg"):
            if not (made / old.name).exists():
                old.unlink()
        for f in made.iterdir():
            if f.is_file() and (f.suffix in (".md", ".html", ".svg", ".json", ".toml")):
                shutil.copyfile(f, dir / f.name)
        missing = dangling(dir)
        if missing:
            sys.exit(f"{dir}: report.md links figures it was not drawn with: {', '.join(missing)}")
    print(f"redrawn: {dir.relative_to(ROOT)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=str(ROOT / "target/release/uqformer"))
    parser.add_argument("--check", action="store_true")
    parser.add_argument("dirs", nargs="+", type=pathlib.Path)
    args = parser.parse_args()
    for dir in args.dirs:
        redraw(args.binary, dir, args.check)


if __name__ == "__main__":
    main()
