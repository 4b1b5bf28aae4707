"""Seeded data generators shared by the tests (no metric is computed here)."""

from __future__ import annotations

import numpy as np


def softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax over the last axis (numpy, max-shifted)."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def draw(rng: np.random.Generator, n: int, c: int, beta: float = 2.0):
    """Logits `beta * g`, their softmax, and labels drawn from `softmax(g)`: a miscalibrated
    classifier (beta != 1) whose confidences have no ties."""
    g = rng.normal(size=(n, c))
    truth = softmax(g)
    labels = (truth.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return beta * g, softmax(beta * g), labels


def draw_members(rng: np.random.Generator, m: int, n: int, c: int, spread: float = 1.0):
    """Member probabilities `[M, N, C]` scattered around a shared prediction, and labels."""
    g = rng.normal(size=(n, c))
    z = 2.0 * g[None] + spread * rng.normal(size=(m, n, c))
    truth = softmax(g)
    labels = (truth.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return z, softmax(z), labels
