#!/usr/bin/env python3
"""Make datasets/tuning/: the bundled sets with a test split nobody reports on.

A recipe chosen on the quick start's own test images would be chosen on the figures it reports.
This folder has the same layout as the repository's datasets/ folder, so
`uqformer run ... --data datasets/tuning` reads it instead: `fashion_mnist_small`'s training
images are the bundled ones, but its test split is 200 images per class drawn (seeded,
stratified) from the full Fashion-MNIST training images that are *not* in the bundled subset,
so they are disjoint from both the quick start's training and test images. MNIST (the OOD set)
is the bundled one.

Run datasets/fetch fashion-mnist first, then: python3 datasets/make_tuning.py
"""

import random
import shutil

from make_bundled import CLASSES, HERE, OUT, SEED, read_idx, source, stratified, write_idx_gz

TUNING = HERE / "tuning"
PER_CLASS = 200


def main():
    # The bundled training subset is re-drawn exactly as make_bundled.py draws it.
    _, img_size, images = read_idx(source("fashion-mnist", "train-images-idx3-ubyte"), 3)
    _, _, labels = read_idx(source("fashion-mnist", "train-labels-idx1-ubyte"), 1)
    bundled = set(stratified(labels, 1000, random.Random(f"fashion-mnist/train/{SEED}")))
    rest = [i for i in range(len(labels)) if i not in bundled]
    rng = random.Random(f"fashion-mnist/tuning/{SEED}")
    picked = stratified([labels[i] for i in rest], PER_CLASS, rng)
    keep = [rest[j] for j in picked]
    assert not bundled & set(keep) and len(keep) == PER_CLASS * CLASSES

    out = TUNING / "bundled" / "fashion-mnist"
    out.mkdir(parents=True, exist_ok=True)
    for stem in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"):
        shutil.copyfile(OUT / "fashion-mnist" / stem, out / stem)
    body = b"".join(images[i * img_size : (i + 1) * img_size] for i in keep)
    write_idx_gz(out / "t10k-images-idx3-ubyte.gz", (len(keep), 28, 28), body)
    write_idx_gz(out / "t10k-labels-idx1-ubyte.gz", (len(keep),), bytes(labels[i] for i in keep))
    shutil.copytree(OUT / "mnist", TUNING / "bundled" / "mnist", dirs_exist_ok=True)
    print(f"{TUNING}: fashion_mnist_small test = {len(keep)} training images outside the bundled subset")


if __name__ == "__main__":
    main()
