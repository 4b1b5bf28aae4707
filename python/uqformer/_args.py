"""Argument coercion: any array-like into the float64 / int64 / bool arrays the native module
takes, with errors that name the argument. No metric is computed here."""

from __future__ import annotations

import contextlib
import operator

import numpy as np

from ._native import UqformerError


def floats(
    name: str, value, ndim: int | tuple[int, ...], shapes: dict[int, str] | None = None
) -> np.ndarray:
    """`value` as a C-contiguous float64 array of `ndim` axes (or one of several); `shapes`
    names the layouts in errors (default `[N]`, `[N, C]`, `[M, N, C]`)."""
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
        names = " or ".join((shapes or _SHAPES)[d] for d in allowed)
        raise UqformerError(f"{name}: shape {array.shape}; expected {names}")
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


def members(name: str, value, shapes: dict[int, str] | None = None) -> np.ndarray:
    """`[N, ·]` as one member `[1, N, ·]`, or `[M, N, ·]` as it is."""
    array = floats(name, value, (2, 3), shapes)
    return array[None] if array.ndim == 2 else array


def count(name: str, value, minimum: int = 0) -> int:
    """An integer option of at least `minimum`."""
    try:
        number = operator.index(value)
    except TypeError:
        raise UqformerError(f"{name}: {value!r}; expected an integer") from None
    if number < minimum:
        raise UqformerError(f"{name}: {number}; expected an integer >= {minimum}")
    return number


@contextlib.contextmanager
def renamed(names: dict[str, str]):
    """Errors of the native layer, which names its own arguments, renamed to the caller's."""
    try:
        yield
    except UqformerError as e:
        native, _, rest = str(e).partition(": ")
        if native in names:
            raise UqformerError(f"{names[native]}: {rest}") from None
        raise


_SHAPES = {1: "[N]", 2: "[N, C]", 3: "[M, N, C]"}
FEATURES = {2: "[N, D]", 3: "[M, N, D]"}
