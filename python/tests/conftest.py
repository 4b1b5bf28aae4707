"""The committed torch-uncertainty fixture, as a session fixture.

Reference implementations live in the test files that use them; `_helpers.py` holds the
seeded data generators.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

# `from _helpers import ...` in the test files, whatever pytest's import mode.
sys.path.insert(0, str(Path(__file__).parent))

TU_FIXTURE = Path(__file__).parents[2] / "crates/uq-metrics/tests/fixtures/torch_uncertainty.json"


@pytest.fixture(scope="session")
def tu_cases():
    """The torch-uncertainty reference cases: probs `[N, C]`, labels, class-wise ECE, AUGRC
    and RAPS scores, as torch-uncertainty computed them in float64."""
    data = json.loads(TU_FIXTURE.read_text())
    cases = []
    for case in data["cases"]:
        n, c = case["n"], case["c"]
        cases.append(
            {
                **case,
                "probs": np.asarray(case["probs"], dtype=np.float64).reshape(n, c),
                "labels": np.asarray(case["labels"], dtype=np.int64),
                "raps": [
                    {
                        **r,
                        "class_scores": np.asarray(r["class_scores"]).reshape(n, c),
                        "label_scores": np.asarray(r["label_scores"]),
                    }
                    for r in case["raps"]
                ],
            }
        )
    assert len(cases) >= 3
    return cases
