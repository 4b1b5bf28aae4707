#!/usr/bin/env python3
"""Reference values for the all-MiniLM-L6-v2 import and the WordPiece tokenizer (issue 7).

Run by hand after `datasets/fetch all-minilm-l6-v2` (needs numpy and the PyPI `tokenizers`
package): python3 scripts/minilm_reference.py [WEIGHTS_DIR]

Writes two committed fixtures:
- crates/data/tests/fixtures/wordpiece_minilm.json: token ids from the shipped tokenizer.json
  (Hugging Face `tokenizers`, padding and truncation off unless a case sets max_len) for
  sentences with punctuation, accents, unknown words, numbers, emoji, CJK and control chars.
- crates/importers/tests/fixtures/minilm_reference.json: a BERT forward written here in plain
  numpy (float64) on the safetensors file parsed by hand: per sentence the ids, the first 8
  values of the last hidden state at tokens 0 and 1 and the first 16 values of the mean-pooled,
  L2-normalised embedding; and, for paraphrase pairs, the ids and the cosine matrix.
"""

import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parent.parent

TOKENIZER_CASES = [
    ("Hello, world!", None),
    ("The quick brown fox jumps over the lazy dog.", None),
    ("I'd say it's 3.14159 -- roughly pi; isn't it?", None),
    ("Café au lait, naïve façade, Ångström, résumé.", None),
    ("ÉCOLE NORMALE SUPÉRIEURE", None),
    ("Unbelievably, the antidisestablishmentarianism debate continues.", None),
    ("Prices rose 12.5% to $1,234.56 in 2023/24; 3rd & 21st, 1e-9, 0x1F.", None),
    ("Email me at someone@example.com or visit https://example.org/path?q=1&x=2", None),
    ("I \u2764\ufe0f emoji \U0001f600\U0001f44d\U0001f3fd and \U0001f970 too", None),
    ("中文分词测试：我爱自然语言处理。", None),
    ("日本語のテキストと한국어 텍스트", None),
    ("Ελληνικά και Русский текст", None),
    ("Tabs\tand\nnewlines\r\nand   multiple   spaces", None),
    ("Control\u0000chars\u200band zero\u00adwidth\ufeff\u0007bell\u000bvt", None),
    ("Quotes \u201ccurly\u201d \u2018single\u2019 \u00abguillemets\u00bb \u2014 em \u2013 en\u2026", None),
    ("[CLS] special [MASK] tokens [SEP] inside a[MASK]b", None),
    ("x" * 120 + " then short words", None),
    ("Unknown glyphs \u2c00\u2c01 and \U0001d518\U0001d52b\U0001d526", None),
    ("", None),
    ("   \t  ", None),
    ("\uff26\uff55\uff4c\uff4c\uff57\uff49\uff44\uff54\uff48 \uff21\uff22\uff23", None),
    ("\u0130stanbul \u015eEH\u0130R \u01c5 Deutsche Stra\u00dfe \u1e9e", None),
    ("don't can't won't y'all", None),
    ("e.g. U.S.A. Mr. Smith's co-operation (re-entry) [sic] {braces} <tags> a|b ~tilde^ `back`", None),
    ("\u00dcmlaut \u00d8re \u0141\u00f3d\u017a \u0152uvre \u00e6sir \u00feorn", None),
    ("مرحبا שלום नमस्ते", None),
    # Edges of Hugging Face's rules: U+2B820 is outside its CJK ranges (U+2B920 inside);
    # unassigned U+0378 is kept, private-use U+E000 and format U+E0001 are removed.
    ("edges a\U0002b820b a\U0002b920b x\u0378y x\ue000y x\U000e0001y", None),
    ("The quick brown fox jumps over the lazy dog.", 8),
    ("Café au lait, naïve façade, Ångström, résumé.", 5),
    ("Hello, world!", 2),
]

REFERENCE_SENTENCES = [
    "The cat sits on the mat.",
    "A man is playing a guitar.",
    "Uncertainty estimation matters for the safe deployment of language models.",
    "Café naïve résumé!",
    "How do I reset my password?",
]

PARAPHRASE_PAIRS = [
    ("How can I reset my password?", "What is the way to change my forgotten password?"),
    ("The weather is lovely today.", "It is a beautiful sunny day."),
    ("A cat is sleeping on the sofa.", "A kitten naps on the couch."),
]


def tokenizer(weights):
    tok = Tokenizer.from_file(str(weights / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def encode(tok, text, max_len=None):
    if max_len is None:
        tok.no_truncation()
    else:
        tok.enable_truncation(max_length=max_len)
    return tok.encode(text).ids


def read_safetensors(path):
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        begin, end = info["data_offsets"]
        values = np.frombuffer(data[base + begin : base + end], dtype="<f4")
        tensors[name] = values.reshape(info["shape"]).astype(np.float64)
    return tensors


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


ERF = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1.0 + ERF(x / math.sqrt(2.0)))


def bert_forward(w, config, ids):
    """Last hidden state [T, D] of one unpadded sentence (HF BertModel, post-norm)."""
    eps = config["layer_norm_eps"]
    heads = config["num_attention_heads"]
    t = len(ids)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:t]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def dense(name, h):
            return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q, k, v = (dense(f"attention.self.{n}", x) for n in ("query", "key", "value"))
        d = q.shape[1] // heads
        split = lambda m: m.reshape(t, heads, d).transpose(1, 0, 2)  # noqa: E731
        scores = split(q) @ split(k).transpose(0, 2, 1) / math.sqrt(d)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        probs = scores / scores.sum(-1, keepdims=True)
        context = (probs @ split(v)).transpose(1, 0, 2).reshape(t, heads * d)
        x = layer_norm(
            x + dense("attention.output.dense", context),
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
            eps,
        )
        h = dense("output.dense", gelu(dense("intermediate.dense", x)))
        x = layer_norm(
            x + h, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps
        )
    return x


def embedding(hidden):
    pooled = hidden.mean(0)
    return pooled / np.linalg.norm(pooled)


def write(path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {path.relative_to(ROOT)}")


def bert_fixture(tok, hidden_state):
    """The import fixture of a BERT whose last hidden state [T, D] for one unpadded sentence's
    ids is `hidden_state(ids)` (also used by scripts/paraphrase_reference.py)."""
    sentences = []
    for text in REFERENCE_SENTENCES:
        ids = encode(tok, text)
        hidden = hidden_state(ids)
        sentences.append(
            {
                "text": text,
                "ids": ids,
                "hidden_token0": hidden[0, :8].tolist(),
                "hidden_token1": hidden[1, :8].tolist(),
                "embedding": embedding(hidden)[:16].tolist(),
            }
        )
    texts = [s for pair in PARAPHRASE_PAIRS for s in pair]
    ids = [encode(tok, s) for s in texts]
    emb = np.stack([embedding(hidden_state(i)) for i in ids])
    cosine = emb @ emb.T
    # The property the Rust test checks must hold for the reference itself.
    paired = [cosine[2 * i, 2 * i + 1] for i in range(len(PARAPHRASE_PAIRS))]
    unrelated = [
        cosine[a, b] for a in range(len(texts)) for b in range(a + 1, len(texts)) if a // 2 != b // 2
    ]
    assert min(paired) > max(unrelated), (paired, unrelated)
    print(f"paraphrase cosines {np.round(paired, 3)}, unrelated max {max(unrelated):.3f}")
    return {
        "sentences": sentences,
        "paraphrases": {"texts": texts, "ids": ids, "cosine": cosine.tolist()},
    }


def main():
    weights = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "datasets/all-minilm-l6-v2"
    tok = tokenizer(weights)
    cases = [
        {"text": text, "max_len": max_len, "ids": encode(tok, text, max_len)}
        for text, max_len in TOKENIZER_CASES
    ]
    write(ROOT / "crates/data/tests/fixtures/wordpiece_minilm.json", {"cases": cases})

    config = json.loads((weights / "config.json").read_text())
    w = read_safetensors(weights / "model.safetensors")
    write(
        ROOT / "crates/importers/tests/fixtures/minilm_reference.json",
        bert_fixture(tok, lambda ids: bert_forward(w, config, ids)),
    )

if __name__ == "__main__":
    main()
