#!/usr/bin/env python3
"""Make the small committed subsets in datasets/bundled/ from the fetched full sets.

Run datasets/fetch fashion-mnist mnist first, then: python3 datasets/make_bundled.py

Each subset is stratified: a fixed number of images per class, drawn without
replacement by a seeded random.Random, kept in source order. Output is gzip'd
IDX written with mtime=0 and no file name in the header, so a second run gives
identical bytes. The sources are checked against datasets/SHA256SUMS first, and
datasets/bundled/SHA256SUMS is rewritten. Python stdlib only.
"""

import gzip
import hashlib
import random
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "bundled"
SEED = 20240601
CLASSES = 10

# (set, split, images per class)
SUBSETS = [
    ("fashion-mnist", "train", 1000),
    ("fashion-mnist", "t10k", 200),
    ("mnist", "t10k", 200),
]


def source(name, stem):
    """Path of a fetched IDX file, gzip'd or raw."""
    for path in (HERE / name / f"{stem}.gz", HERE / name / stem):
        if path.is_file():
            return path
    sys.exit(f"{HERE / name / stem}[.gz] not found: run datasets/fetch {name} first")


def check_sources():
    want = {}
    for line in (HERE / "SHA256SUMS").read_text().splitlines():
        digest, rel = line.split("  ", 1)
        want[rel] = digest
    for name, split, _ in SUBSETS:
        for kind in ("images-idx3", "labels-idx1"):
            path = source(name, f"{split}-{kind}-ubyte")
            rel = path.relative_to(HERE).as_posix()
            got = hashlib.sha256(path.read_bytes()).hexdigest()
            if want.get(rel) != got:
                sys.exit(f"{path}: sha256 {got} does not match datasets/SHA256SUMS ({want.get(rel)})")


def read_idx(path, ndim):
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    zero, dtype, dims = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08 or dims != ndim:
        sys.exit(f"{path}: expected a uint8 IDX file with {ndim} dims, got header {data[:4].hex()}")
    shape = struct.unpack(f">{ndim}I", data[4 : 4 + 4 * ndim])
    body = data[4 + 4 * ndim :]
    per_item = 1
    for d in shape[1:]:
        per_item *= d
    if len(body) != shape[0] * per_item:
        sys.exit(f"{path}: header says {shape}, body holds {len(body)} bytes")
    return shape, per_item, body


def write_idx_gz(path, shape, body):
    header = struct.pack(">HBB", 0, 0x08, len(shape)) + struct.pack(f">{len(shape)}I", *shape)
    path.write_bytes(gzip.compress(header + body, compresslevel=9, mtime=0))


def stratified(labels, per_class, rng):
    by_class = [[i for i, y in enumerate(labels) if y == c] for c in range(CLASSES)]
    chosen = []
    for c, idx in enumerate(by_class):
        if len(idx) < per_class:
            sys.exit(f"class {c} has {len(idx)} items, {per_class} requested")
        chosen.extend(rng.sample(idx, per_class))
    return sorted(chosen)


def make(name, split, per_class):
    img_shape, img_size, images = read_idx(source(name, f"{split}-images-idx3-ubyte"), 3)
    lab_shape, _, labels = read_idx(source(name, f"{split}-labels-idx1-ubyte"), 1)
    if img_shape[0] != lab_shape[0]:
        sys.exit(f"{name}/{split}: {img_shape[0]} images but {lab_shape[0]} labels")
    # A string seed is hashed with SHA-512 by random.seed, stable across Python 3 versions.
    rng = random.Random(f"{name}/{split}/{SEED}")
    keep = stratified(labels, per_class, rng)
    out = OUT / name
    out.mkdir(parents=True, exist_ok=True)
    sub_images = b"".join(images[i * img_size : (i + 1) * img_size] for i in keep)
    write_idx_gz(out / f"{split}-images-idx3-ubyte.gz", (len(keep), *img_shape[1:]), sub_images)
    write_idx_gz(out / f"{split}-labels-idx1-ubyte.gz", (len(keep),), bytes(labels[i] for i in keep))
    print(f"{name}/{split}: {len(keep)} of {img_shape[0]} ({per_class} per class)")


def write_sums():
    files = sorted(p for p in OUT.rglob("*-ubyte.gz"))
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(OUT).as_posix()}" for p in files]
    (OUT / "SHA256SUMS").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    check_sources()
    for subset in SUBSETS:
        make(*subset)
    write_sums()


if __name__ == "__main__":
    main()
