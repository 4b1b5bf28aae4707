#!/usr/bin/env python3
"""Reference outputs of `transformers`' image processors for the data crate's Preprocess
(issue 44). Run by hand with a Python that has transformers, Pillow and numpy:
    python3 scripts/preprocess_reference.py

Writes crates/data/tests/fixtures/preprocess/: two 2x2 JPEGs of one grey level (RGB 60, grey
120) for the image-folder tests, three small images (RGB 23x31, grey 30x19,
RGBA 17x26; seeded random bytes) as PNG, and reference.json with, per processor (ViT: a
straight bilinear resize; DeiT: an exact bicubic resize then a centre crop; CLIP: the shorter
side bicubic then a centre crop), the config `to_dict()` writes and each image's
`pixel_values` [3, H, W]. The Pillow backends (`...ImageProcessorPil`) are used: they resize
as Pillow does, which the crate reproduces; transformers 5's default torchvision backend
differs from Pillow by one byte step on about 0.5% of the values. Pillow 13 also
resamples some sizes vertically first (Pillow <= 12 always horizontally first, as the crate),
which moves a few values by up to two byte steps: the test names those cases.
"""

import json
import pathlib

import numpy as np
import transformers
from PIL import Image
from transformers import CLIPImageProcessorPil, DeiTImageProcessorPil, ViTImageProcessorPil

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/data/tests/fixtures/preprocess"
rng = np.random.default_rng(44)
IMAGES = {
    "rgb.png": Image.fromarray(rng.integers(0, 256, (23, 31, 3), dtype=np.uint8)),
    "grey.png": Image.fromarray(rng.integers(0, 256, (30, 19), dtype=np.uint8)),
    "rgba.png": Image.fromarray(rng.integers(0, 256, (17, 26, 4), dtype=np.uint8)),
}
PROCESSORS = {
    "vit": ViTImageProcessorPil(size={"height": 12, "width": 12}, resample=2),
    "deit": DeiTImageProcessorPil(
        size={"height": 14, "width": 14}, crop_size={"height": 12, "width": 10}, resample=3
    ),
    "clip": CLIPImageProcessorPil(
        size={"shortest_edge": 13}, crop_size={"height": 12, "width": 12}, resample=3
    ),
}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, image in IMAGES.items():
        image.save(OUT / name)
    # Two 2x2 JPEGs of one level each for the image-folder tests (the crate writes no JPEG).
    Image.new("RGB", (2, 2), (60, 60, 60)).save(OUT / "rgb60.jpg", quality=95)
    Image.new("L", (2, 2), 120).save(OUT / "grey120.jpg", quality=95)
    reference = {"transformers": transformers.__version__, "processors": {}}
    for key, processor in PROCESSORS.items():
        config = json.loads(processor.to_json_string())
        outputs = {}
        for name in IMAGES:
            # Read back from the PNG, as the crate does; RGB conversion as the crate does it.
            image = Image.open(OUT / name).convert("RGB")
            values = processor(image, return_tensors="np")["pixel_values"][0]
            # The float32 values, each in its shortest decimal form.
            values32 = [float(np.format_float_positional(v, unique=True)) for v in values.ravel()]
            outputs[name] = {"shape": list(values.shape), "values": values32}
        reference["processors"][key] = {"config": config, "outputs": outputs}
    (OUT / "reference.json").write_text(json.dumps(reference) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
