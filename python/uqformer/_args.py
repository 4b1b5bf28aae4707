"""Argument coercion: any array-like into the float64 / int64 / bool arrays the native module
takes, with errors that name the argument. No metric is computed here."""

from __future__ import annotations

import numpy as np

from ._native import UqformerError


def floats(name: str, value, ndim: int | tuple[int, ...]) -> np.ndarray:
    """`value` as a C-contiguous float64 array of `ndim` axes (or one of several)."""
    try:
        array = np.asarray(value)
    except Exception as e:  # ragged lists and the like
        raise UqformerError(f"{name}: not an array ({e})") from None
    if array.dtype == object or not (
        np.issubdtype(array.dtype, np.floating)
        or np.issubdtype(array.dtype, np.integer)
        or array.dtype == bool
    ):
        raise UqformerError(f"{name}: dtype {array.dtype}; expected real numbers")
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if array.ndim not in allowed:
        shapes = " or ".join(_SHAPES[d] for d in allowed)
        raise UqformerError(f"{name}: shape {array.shape}; expected {shapes}")
    return np.ascontiguousarray(array, dtype=np.float64)


def labels(name: str, value, n: int | None = None) -> np.ndarray:
    """Integer class labels `[N]` as int64; floats are accepted when they hold integers."""
    array = np.asarray(value)
    if array.ndim != 1:
        raise UqformerError(f"{name}: shape {array.shape}; expected [N]")
    if not np.issubdtype(array.dtype, np.integer):
        if np.issubdtype(array.dtype, np.floating) and np.all(np.isfinite(array)) and np.all(
            array == np.round(array)
        ):
            array = array.astype(np.int64)
        else:
            raise UqformerError(f"{name}: dtype {array.dtype}; expected integer class labels")
    if n is not None and len(array) != n:
        raise UqformerError(f"{name}: {len(array)} labels for {n} samples")
    return np.ascontiguousarray(array, dtype=np.int64)


def flags(name: str, value, n: int) -> np.ndarray:
    """Booleans `[N]`."""
    array = np.asarray(value)
    if array.shape != (n,):
        raise UqformerError(f"{name}: shape {array.shape}; expected [{n}]")
    if array.dtype != bool:
        if not np.all((array == 0) | (array == 1)):
            raise UqformerError(f"{name}: expected booleans (or 0 / 1)")
        array = array.astype(bool)
    return np.ascontiguousarray(array)


def members(name: str, value, ndim_single: int = 2) -> np.ndarray:
    """`[N, ·]` as one member `[1, N, ·]`, or `[M, N, ·]` as it is."""
    array = floats(name, value, (ndim_single, ndim_single + 1))
    return array[None] if array.ndim == ndim_single else array


_SHAPES = {1: "[N]", 2: "[N, C]", 3: "[M, N, C]"}
