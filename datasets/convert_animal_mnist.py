#!/usr/bin/env python3
"""Convert Animal-MNIST (PyPI animal-mnist==0.4) to gzip'd IDX files.

The package ships two gzip'd pickles of numpy arrays: images uint8 (10000, 28, 28)
and labels int64 (10000,). There is a single split; it is written as t10k.

Usage: convert_animal_mnist.py DATA_DIR OUT_DIR
  DATA_DIR holds animal_data_version_3.gz and animal_label_version_3.gz.

Python stdlib only. The pickles are read with a restricted unpickler that
rebuilds the two arrays from their raw bytes and refuses any other global, so
loading them cannot run code and numpy is not needed.
"""

import gzip
import pickle
import struct
import sys
from pathlib import Path

IMAGES = "animal_data_version_3.gz"
LABELS = "animal_label_version_3.gz"
N, ROWS, COLS, CLASSES = 10000, 28, 28, 10


class Dtype:
    """Stand-in for numpy.dtype: keeps the type code and byte order."""

    def __init__(self, code, _align=False, _copy=True):
        self.code = code
        self.order = "|"

    def __setstate__(self, state):
        self.order = state[1]


class Array:
    """Stand-in for numpy.ndarray: keeps shape, dtype and raw bytes."""

    def __setstate__(self, state):
        _version, self.shape, self.dtype, self.fortran, self.raw = state


def reconstruct(_cls, _shape, _typecode):
    return Array()


ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"): reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): reconstruct,
    ("numpy", "ndarray"): Array,
    ("numpy", "dtype"): Dtype,
}


class ArrayUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        try:
            return ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(
                f"unexpected global {module}.{name}: not a plain numpy array pickle"
            ) from None


def load(path, shape, code, order):
    with gzip.open(path, "rb") as f:
        arr = ArrayUnpickler(f).load()
    if not isinstance(arr, Array):
        sys.exit(f"{path}: expected a numpy array pickle, got {type(arr).__name__}")
    got = (tuple(arr.shape), arr.dtype.code, arr.dtype.order, arr.fortran)
    want = (shape, code, order, False)
    if got != want:
        sys.exit(f"{path}: expected (shape, dtype, byte order, fortran) {want}, got {got}")
    return bytes(arr.raw)


def idx_gz(magic_type, dims, payload):
    header = struct.pack(">BBBB", 0, 0, magic_type, len(dims))
    header += b"".join(struct.pack(">I", d) for d in dims)
    # mtime=0 and no file name in the header: output depends only on the data.
    return gzip.compress(header + payload, compresslevel=9, mtime=0)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    src, out = Path(argv[1]), Path(argv[2])
    images = load(src / IMAGES, (N, ROWS, COLS), "u1", "|")
    raw_labels = load(src / LABELS, (N,), "i8", "<")
    labels = struct.unpack(f"<{N}q", raw_labels)
    bad = [v for v in labels if not 0 <= v < CLASSES]
    if bad:
        sys.exit(f"{src / LABELS}: labels must be in 0..{CLASSES - 1}, found {bad[0]}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "t10k-images-idx3-ubyte.gz").write_bytes(idx_gz(0x08, (N, ROWS, COLS), images))
    (out / "t10k-labels-idx1-ubyte.gz").write_bytes(idx_gz(0x08, (N,), bytes(labels)))
    counts = [labels.count(c) for c in range(CLASSES)]
    print(f"animal-mnist: {N} images, per-class counts {counts}")


if __name__ == "__main__":
    main(sys.argv)
