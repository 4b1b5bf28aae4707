#!/usr/bin/env python3
"""Errors keep their sources: prints each place that turns an error into text, and exits 1 if
there is one. Two patterns are refused in the crates' Rust sources:

- a `map_err` closure that formats its argument into a string (`{e}` or `{e:?}` in a format
  string, `format!(.., e)`, `e.to_string()`,
  or `e.message()`, the text of a toml or serde error): the error should become the source of a variant
  that names the context as fields instead;
- `#[error("{0}")]` on a variant that also has `#[from]`: its message is the inner error's, and
  walking `source()` prints that message a second time (`#[error(transparent)]` instead).

The command line prints the whole chain once, at its last line (`cli/src/main.rs`), so no
`map_err` needs the text. The one exception: serde's `Error::custom` takes only a message (its
trait has no way to carry a source), so a closure that builds one is allowed. Run from the
repository root:
    python3 scripts/error_sources.py
"""

import os
import re
import sys

MAP_ERR = re.compile(r"\.map_err\(\s*\|\s*([a-z_][a-z0-9_]*)\s*(?::[^|]*)?\|")
ERROR_ZERO = re.compile(r'#\[error\("\{0\}"\)\]')
NEXT_VARIANT = re.compile(r"^\s*(?:#\[error|[A-Z][A-Za-z0-9]*\s*[({,]|[A-Z][A-Za-z0-9]*\s*$|\})")


def closure_body(text, start):
    """The text of the `map_err(` call's argument from `start` to its closing parenthesis."""
    depth = 1
    i = start
    while i < len(text) and depth:
        c = text[i]
        if c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1
    return text[start:i]


def formats(body, name):
    """Whether `body` formats the error `name` into text."""
    n = re.escape(name)
    in_string = re.search(r"\{" + n + r"(?::[^}]*)?\}", body)
    arguments = [closure_body(body, m.end()) for m in re.finditer(r"format!\(", body)]
    as_argument = any(re.search(r",\s*" + n + r"\s*[,)]", a) for a in arguments)
    to_string = re.search(r"\b" + n + r"\.(?:to_string|message)\(\)", body)
    return bool(in_string or as_argument or to_string)


def check_file(path, text, found):
    for m in MAP_ERR.finditer(text):
        body = closure_body(text, m.end())
        if formats(body, m.group(1)) and "Error::custom(" not in body:
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{path}:{line}: map_err formats the error `{m.group(1)}` into text")
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not ERROR_ZERO.search(line):
            continue
        # The variant's own lines: up to the next variant, attribute of another one, or the end.
        for follow in lines[i + 1 : i + 4]:
            if "#[from]" in follow:
                found.append(f"{path}:{i + 1}: #[error(\"{{0}}\")] with #[from] (use transparent)")
                break
            if "," in follow or follow.strip().startswith("#[error"):
                break


def main():
    found = []
    for folder, _, files in os.walk("crates"):
        if "/target" in folder:
            continue
        for name in sorted(files):
            if name.endswith(".rs"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    check_file(path, f.read(), found)
    for line in sorted(found):
        print(line)
    if found:
        print(f"{len(found)} place(s) turn an error into text; keep it as a source instead")
        return 1
    print("no error turned into text, no message printed twice")
    return 0


if __name__ == "__main__":
    sys.exit(main())
