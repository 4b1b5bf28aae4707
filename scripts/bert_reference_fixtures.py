"""Writes the BERT-family import fixtures: small random checkpoints saved by transformers itself
(save_pretrained, safetensors) and their outputs on fixed token ids, under
crates/importers/tests/fixtures/bert/.

Run with the reference venv (torch, transformers, safetensors):
    /work/venv-ref/bin/python scripts/bert_reference_fixtures.py

Each checkpoint folder holds config.json, model.safetensors and reference.json: the logits [N, K]
of a model with a classifier, else its pooler output [N, D] (BERT and RoBERTa alike: dense + tanh
over the first token's final hidden state), on input.json's ids (no padding, attention mask all
ones) under "values", and on its right-padded ids with their attention mask under
"padded_values". input.json holds both inputs: "ids" [N, L] and "padded_ids" with "padded_mask"
(1 = token, 0 = padding; the padded slots hold RoBERTa's padding id 1). The ids avoid the
padding id 1 elsewhere, so RoBERTa's positions (counted from padding_idx + 1 over the non-padding
ids) are those of an unpadded sequence.

Sizes are kept tiny (vocabulary 100, width 32) and most checkpoints are stored in F16 or BF16
(the import converts every tensor to f32; the reference is computed from the rounded weights), so
that the whole set stays a few hundred kB. Seeded, so a rerun writes the same files.
"""

import json
import pathlib

import torch
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    BertModel,
    RobertaConfig,
    RobertaForSequenceClassification,
    RobertaModel,
)

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/importers/tests/fixtures/bert"
VOCAB = 100
SHAPE = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64)


def config(cls, layers, heads, eps, labels=None):
    if cls is RobertaConfig:
        # transformers' RoBERTa: positions from padding_idx + 1 = 2, one token type.
        extra = dict(max_position_embeddings=42, pad_token_id=1, type_vocab_size=1)
    else:
        extra = dict(max_position_embeddings=40, type_vocab_size=2)
    if labels:
        extra["num_labels"] = labels
    # A wide initialisation (transformers' is 0.02) gives outputs of order 1, so that 1e-4 is a
    # tight bound and the padded outputs differ from the unpadded ones well beyond it.
    return cls(**SHAPE, num_hidden_layers=layers, num_attention_heads=heads,
               layer_norm_eps=eps, initializer_range=0.2, **extra)


def rounded(model, dtype):
    """The model's weights rounded to `dtype` (as stored) and back, so the f32 reference sees
    exactly what the import reads."""
    return model.to(dtype).float() if dtype != torch.float32 else model


def output(model, ids, mask):
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask)
    values = out.logits if hasattr(out, "logits") else out.pooler_output
    return values.detach().float()


def write(name, model, dtype, seed):
    torch.manual_seed(seed)
    model = rounded(model.eval(), dtype)
    model.to(dtype).save_pretrained(OUT / name)
    model.float()
    values = output(model, IDS, torch.ones_like(IDS))
    padded = output(model, PADDED, MASK)
    reference = {
        "output": "logits" if hasattr(model, "classifier") else "pooler_output",
        "shape": list(values.shape),
        "values": values.flatten().tolist(),
        "padded_values": padded.flatten().tolist(),
    }
    (OUT / name / "reference.json").write_text(json.dumps(reference))


torch.manual_seed(0)
# Ids 2..VOCAB: never RoBERTa's padding id 1 (nor BERT's 0).
IDS = torch.randint(2, VOCAB, (3, 9))
PADDED = IDS.clone()
MASK = torch.ones_like(IDS)
for row, length in [(1, 5), (2, 7)]:
    PADDED[row, length:] = 1
    MASK[row, length:] = 0
OUT.mkdir(parents=True, exist_ok=True)
(OUT / "input.json").write_text(json.dumps({
    "shape": list(IDS.shape),
    "ids": IDS.flatten().tolist(),
    "padded_ids": PADDED.flatten().tolist(),
    "padded_mask": MASK.flatten().tolist(),
}))

cases = [
    ("bert_model", BertModel, BertConfig, (2, 4, 1e-12), torch.float16),
    ("bert_model_small", BertModel, BertConfig, (1, 2, 1e-6), torch.bfloat16),
    ("bert_classifier", BertForSequenceClassification, BertConfig, (2, 2, 1e-12, 3),
     torch.bfloat16),
    ("bert_classifier_wide", BertForSequenceClassification, BertConfig, (1, 4, 1e-5, 5),
     torch.float32),
    ("roberta_model", RobertaModel, RobertaConfig, (2, 4, 1e-5), torch.float16),
    ("roberta_model_small", RobertaModel, RobertaConfig, (1, 2, 1e-12), torch.bfloat16),
    ("roberta_classifier", RobertaForSequenceClassification, RobertaConfig, (2, 2, 1e-5, 4),
     torch.float16),
    ("roberta_classifier_two", RobertaForSequenceClassification, RobertaConfig,
     (1, 4, 1e-6, 2), torch.bfloat16),
]
for seed, (name, model_cls, config_cls, args, dtype) in enumerate(cases, start=1):
    torch.manual_seed(seed)
    write(name, model_cls(config(config_cls, *args)), dtype, seed)
