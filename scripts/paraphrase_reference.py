#!/usr/bin/env python3
"""Reference values for the paraphrase-MiniLM-L3-v2 import, computed by onnxruntime running the
ONNX graph itself (so that the import's naming of the graph's anonymous weights is checked too,
which a numpy forward on the same naming would not).

Run by hand after `datasets/fetch paraphrase-minilm-l3-v2` (needs numpy, onnxruntime and the
PyPI `tokenizers` package): python3 scripts/paraphrase_reference.py

Writes crates/importers/tests/fixtures/paraphrase_reference.json, laid out as
minilm_reference.json (scripts/minilm_reference.py, `bert_fixture`: the same sentences and
paraphrase pairs): the graph's last hidden state (its LayerNorm output [1, T, 384]) for each
unpadded sentence, mean-pooled and L2-normalised for the embeddings.
"""

import hashlib
import json

import numpy as np
import onnxruntime

from minilm_reference import ROOT, bert_fixture, tokenizer, write

WEIGHTS = ROOT / "datasets/paraphrase-minilm-l3-v2"
MODEL = WEIGHTS / "paraphrase-MiniLM-L3-v2.onnx"
OUT = ROOT / "crates/importers/tests/fixtures/paraphrase_reference.json"


def session():
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    run = onnxruntime.InferenceSession(str(MODEL), options, providers=["CPUExecutionProvider"])
    # The graph's outputs: the ids and mask passed through, the last hidden state [B, T, 384]
    # and the mean-pooled sentence embedding [B, 384].
    floats = [o.name for o in run.get_outputs() if o.type == "tensor(float)"]
    (hidden,) = [o.name for o in run.get_outputs() if o.name in floats and len(o.shape) == 3]
    (pooled,) = [name for name in floats if name != hidden]
    return run, hidden, pooled


def main():
    run, hidden_name, pooled_name = session()

    def hidden_state(ids):
        ids = np.array([ids], np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        hidden, pooled = run.run([hidden_name, pooled_name], feed)
        # The graph's own pooling is the mean the fixture's embeddings take.
        assert np.allclose(hidden[0].mean(0), pooled[0], atol=1e-6), "pooling differs"
        return hidden[0].astype(np.float64)

    fixture = bert_fixture(tokenizer(WEIGHTS), hidden_state)
    fixture["model"] = {
        "file": str(MODEL.relative_to(ROOT)),
        "sha256": hashlib.sha256(MODEL.read_bytes()).hexdigest(),
        "onnxruntime": onnxruntime.__version__,
        "output": f"{hidden_name}: the last hidden state; embeddings are its mean, L2-normalised",
    }
    write(OUT, fixture)


if __name__ == "__main__":
    main()
