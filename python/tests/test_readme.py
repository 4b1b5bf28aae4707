"""README.md's "From Python" example runs as written, on generated predictions saved as the
example expects, and gives what its comments say."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_example_runs(tmp_path):
    text = README.read_text()
    section = text[text.index("## From Python") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    rng = np.random.default_rng(0)
    c = 20

    def save(name, n, shift=0.0):
        labels = rng.integers(0, c, n)
        logits = rng.normal(0, 1, (n, c)) + shift
        logits[np.arange(n), labels] += 3.0
        np.save(tmp_path / f"{name}_logits.npy", logits)
        np.save(tmp_path / f"{name}_labels.npy", labels)

    save("val", 500)
    save("test", 800)
    np.save(tmp_path / "ood_logits.npy", rng.normal(0, 1, (300, c)))
    cwd, out = os.getcwd(), io.StringIO()
    try:
        os.chdir(tmp_path)
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(README), "exec"), {})
    finally:
        os.chdir(cwd)
    printed = out.getvalue().splitlines()
    assert len(printed) == 4, printed
    assert "classwise_ece" in printed[0] and "auroc" in printed[1]
    assert "coverage" in printed[2] and printed[3] in {"equivalent", "better", "worse", "inconclusive"}
