#!/usr/bin/env python3
"""Functions over 80 lines and source files over 400 lines (test code excluded), in crates/.

A function may stay long when the line right above it (or above its attributes and doc comment)
says why: a comment starting `// Long:`. Exits 1 when anything is over, listing each with its
length, so CI keeps the limits docs/extending.md states.
"""
import pathlib
import re
import sys

FN_LIMIT = 80
FILE_LIMIT = 400
FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+|async\s+|unsafe\s+|extern\s+\"C\"\s+)*fn\s+(\w+)")


def code_only(line, state):
    """The line without comments and string contents; `state` carries a block comment across lines."""
    out, i = [], 0
    while i < len(line):
        if state["block"]:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out)
            state["block"], i = False, end + 2
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            state["block"], i = True, i + 2
        elif line[i] == '"':
            j = i + 1
            while j < len(line) and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif line[i] == "'" and re.match(r"'(\\.|[^\\'])'", line[i:]):
            i += len(re.match(r"'(\\.|[^\\'])'", line[i:]).group(0))
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def test_start(lines):
    """The index of the first line of a trailing `#[cfg(test)]` module, or len(lines)."""
    for i, line in enumerate(lines):
        if line.strip() == "#[cfg(test)]" and i + 1 < len(lines) and lines[i + 1].lstrip().startswith("mod "):
            return i
    return len(lines)


def reason_above(lines, i):
    j = i - 1
    while j >= 0 and (lines[j].lstrip().startswith("#[") or lines[j].lstrip().startswith("///")):
        j -= 1
    return j >= 0 and lines[j].lstrip().startswith("// Long:")


def long_functions(path, lines):
    state = {"block": False}
    code = [code_only(l, state) for l in lines]
    found = []
    for i, line in enumerate(code):
        m = FN.match(line)
        if not m:
            continue
        depth, opened, end = 0, False, None
        for j in range(i, len(code)):
            for ch in code[j]:
                if ch == "{":
                    depth, opened = depth + 1, True
                elif ch == "}":
                    depth -= 1
            if opened and depth == 0:
                end = j
                break
            if not opened and code[j].rstrip().endswith(";"):
                break  # a declaration without a body (trait method)
        if end is not None and end - i + 1 > FN_LIMIT and not reason_above(lines, i):
            found.append(f"{path}:{i + 1}: fn {m.group(4)} is {end - i + 1} lines (limit {FN_LIMIT})")
    return found


def main(root):
    problems = []
    for path in sorted(pathlib.Path(root, "crates").rglob("*.rs")):
        if "tests" in path.parts or path.name == "tests.rs" or "benches" in path.parts:
            continue
        lines = path.read_text().splitlines()
        lines = lines[: test_start(lines)]
        if len(lines) > FILE_LIMIT:
            problems.append(f"{path}: {len(lines)} lines without its tests (limit {FILE_LIMIT})")
        problems += long_functions(path, lines)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
