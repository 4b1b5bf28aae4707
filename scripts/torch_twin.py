#!/usr/bin/env python3
"""The engine bench's models written in PyTorch, timed the way the bench times uqformer's.

`cargo bench -p experiment --bench engine` runs this script (with `UQFORMER_PYTHON`, default
python3, when it can import torch) beside its own runs, round after round, and prints the ratios;
run alone it prints one round:

    python3 scripts/torch_twin.py --model vit_tiny_28 --threads 1

Models (the same shapes and layers as uqformer's: Conv2d patch embedding, class token, learned
positions, pre-norm blocks with separate Q/K/V/O projections, exact GELU, final norm; BERT
post-norm with word/position/type embeddings and a mean-pooled classifier):
  vit_tiny_28  28x28x1, patch 7, width 64, 4 blocks, 4 heads, MLP 256
  vit_192x12   32x32x3, patch 4 (65 tokens), width 192, 12 blocks, 3 heads, MLP 768
  minilm_l6    vocab 30522, width 384, 6 blocks, 12 heads, MLP 1536, 64 tokens
  vit_b16      ViT-B/16: 224x224x3, patch 16 (197 tokens), width 768, 12 blocks, 12 heads, MLP 3072,
               1000 classes
  bert_base    BERT-base: vocab 30522, width 768, 12 blocks, 12 heads, MLP 3072, 128 tokens, 2 classes
Sizes, batches and timed calls per model: PLANS (the engine bench's `PLANS`). Training: AdamW (weight decay 0.05) under warm-up and cosine decay, gradient norm
clipped to 1, dropout 0.1 (on attention probabilities too in BERT), loss and accuracy read back
every step as uqformer's loop does; the inputs are uint8 images normalised per batch, or token
ids. uqformer clips each parameter's gradient norm on its own (Burn's clipping), this script the
global norm in one call, as PyTorch code does. Evaluation: inference mode, one forward pass and
the logits read back. Output lines: `<figure> <value>`.
"""

import argparse
import math
import time

import torch
import torch.nn.functional as F
from torch import nn

MODELS = {
    "vit_tiny_28": ("vit", dict(image=28, channels=1, patch=7, d=64, layers=4, heads=4, mlp=256, classes=10)),
    "vit_192x12": ("vit", dict(image=32, channels=3, patch=4, d=192, layers=12, heads=3, mlp=768, classes=10)),
    "minilm_l6": ("bert", dict(vocab=30522, d=384, layers=6, heads=12, mlp=1536, tokens=64, classes=10)),
    "vit_b16": ("vit", dict(image=224, channels=3, patch=16, d=768, layers=12, heads=12, mlp=3072, classes=1000)),
    "bert_base": ("bert", dict(vocab=30522, d=768, layers=12, heads=12, mlp=3072, tokens=128, classes=2)),
}
# name: (train samples per round, training batch, evaluation batch, calls timed at it, calls
# timed at batch 1); the papers' scale trains 2 steps of 8 so that a round stays within minutes.
PLANS = {
    "vit_tiny_28": (960, 32, 256, 5, 50),
    "vit_192x12": (320, 32, 64, 5, 50),
    "minilm_l6": (320, 32, 64, 5, 50),
    "vit_b16": (16, 8, 8, 3, 7),
    "bert_base": (16, 8, 8, 3, 7),
}
DROPOUT = 0.1


class Attention(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x, pad=None):
        b, t, d = x.shape
        split = lambda y: y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        mask = None if pad is None else ~pad[:, None, None, :]
        p = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(split(self.q(x)), split(self.k(x)), split(self.v(x)), mask, p)
        return self.o(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d, heads, mlp, eps, pre_norm):
        super().__init__()
        self.pre_norm = pre_norm
        # As uqformer's presets: no attention dropout in the ViT, 0.1 in BERT.
        self.attn = Attention(d, heads, 0.0 if pre_norm else DROPOUT)
        self.norm1, self.norm2 = nn.LayerNorm(d, eps=eps), nn.LayerNorm(d, eps=eps)
        self.mlp = nn.Sequential(nn.Linear(d, mlp), nn.GELU(), nn.Linear(mlp, d))
        self.drop = nn.Dropout(DROPOUT)

    def forward(self, x, pad=None):
        if self.pre_norm:
            x = x + self.drop(self.attn(self.norm1(x), pad))
            return x + self.drop(self.mlp(self.norm2(x)))
        x = self.norm1(x + self.drop(self.attn(x, pad)))
        return self.norm2(x + self.drop(self.mlp(x)))


class ViT(nn.Module):
    def __init__(self, image, channels, patch, d, layers, heads, mlp, classes):
        super().__init__()
        tokens = (image // patch) ** 2 + 1
        self.patch = nn.Conv2d(channels, d, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, tokens, d) * 0.02)
        self.drop = nn.Dropout(DROPOUT)
        self.blocks = nn.ModuleList(Block(d, heads, mlp, 1e-6, True) for _ in range(layers))
        self.norm = nn.LayerNorm(d, eps=1e-6)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = self.drop(torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x[:, 0]))


class Bert(nn.Module):
    def __init__(self, vocab, d, layers, heads, mlp, tokens, classes):
        super().__init__()
        self.words, self.positions, self.types = nn.Embedding(vocab, d), nn.Embedding(512, d), nn.Embedding(2, d)
        self.norm = nn.LayerNorm(d, eps=1e-12)
        self.drop = nn.Dropout(DROPOUT)
        self.blocks = nn.ModuleList(Block(d, heads, mlp, 1e-12, False) for _ in range(layers))
        self.head = nn.Linear(d, classes)

    def forward(self, ids, mask):
        positions = torch.arange(ids.shape[1])
        x = self.words(ids) + self.positions(positions)[None] + self.types(torch.zeros_like(ids))
        x = self.drop(self.norm(x))
        pad = mask == 0
        for block in self.blocks:
            x = block(x, pad)
        m = mask[..., None].float()
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return self.head(self.drop(pooled))


def data(kind, shape, n, gen):
    if kind == "vit":
        c, s = shape["channels"], shape["image"]
        return torch.randint(0, 256, (n, c, s, s), dtype=torch.uint8, generator=gen)
    return torch.randint(4, shape["vocab"], (n, shape["tokens"]), generator=gen)


def inputs(kind, x):
    if kind == "vit":
        return ((x.float() / 255.0 - 0.5) / 0.25,)
    return x, torch.ones_like(x)


def train_round(kind, shape, n, batch, gen):
    model = (ViT if kind == "vit" else Bert)(**shape)
    model.train()
    x, y = data(kind, shape, n, gen), torch.randint(0, shape["classes"], (n,), generator=gen)
    opt = torch.optim.AdamW(model.parameters(), lr=1.5e-3, weight_decay=0.05)
    steps = n // batch
    warmup = max(1, steps // 10)
    order = torch.randperm(n, generator=gen)
    start = time.perf_counter()
    for step in range(steps):
        idx = order[step * batch : (step + 1) * batch]
        logits = model(*inputs(kind, x[idx]))
        loss = F.cross_entropy(logits, y[idx])
        loss_value = loss.item()
        correct = (logits.argmax(1) == y[idx]).sum().item()
        assert math.isfinite(loss_value) and correct >= 0
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scale = (step + 1) / warmup if step < warmup else 0.5 * (1 + math.cos(math.pi * (step - warmup) / (steps - warmup)))
        for group in opt.param_groups:
            group["lr"] = 1.5e-3 * scale
        opt.step()
    return steps * batch / (time.perf_counter() - start), model


def median_ms(calls, f):
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        f()
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[calls // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=MODELS, default="vit_tiny_28")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    kind, shape = MODELS[args.model]
    n, train_batch, eval_batch, eval_calls, b1_calls = PLANS[args.model]
    throughput, model = train_round(kind, shape, n, train_batch, gen)
    model.eval()
    batch = inputs(kind, data(kind, shape, eval_batch, gen))
    one = tuple(t[:1] for t in batch)
    with torch.inference_mode():
        run = lambda xs: model(*xs).numpy()
        run(batch)
        eval_ms = median_ms(eval_calls, lambda: run(batch))
        run(one)
        eval1_ms = median_ms(b1_calls, lambda: run(one))
    print(f"train_samples_per_s {throughput:.3f}")
    print(f"eval_ms {eval_ms:.4f}")
    print(f"eval_b1_ms {eval1_ms:.4f}")


if __name__ == "__main__":
    main()
