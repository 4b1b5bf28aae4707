"""Writes the ViT-family import fixtures: small random checkpoints saved by the reference
libraries themselves (transformers' save_pretrained, timm's save_for_hf) and their outputs on one
fixed input, under crates/importers/tests/fixtures/vit/.

Run with the reference venv (torch, transformers, timm, safetensors):
    /work/venv-ref/bin/python scripts/vit_reference_fixtures.py

Each checkpoint folder holds config.json, model.safetensors and reference.json: the logits [N, K]
of a model with a classifier, else its pooled features [N, D] (ViT: the class token after the
final norm; DeiT, which always has a distillation token in transformers and in timm's distilled
models: the average of the class and distillation tokens after the final norm, the two heads'
inputs). A distilled model with heads gives the average of its two heads' logits, as both
libraries do at inference. input.json is the shared input [2, 3, 16, 16].

Sizes are kept tiny (image 16, patch 4, width 32) and some checkpoints are stored in F16 or BF16
(the import converts every tensor to f32; the reference is computed from the rounded weights), so
that the whole set stays a few hundred kB. Seeded, so a rerun writes the same files.
"""

import json
import pathlib

import timm
import torch
from transformers import (
    DeiTConfig,
    DeiTForImageClassificationWithTeacher,
    DeiTModel,
    ViTConfig,
    ViTForImageClassification,
    ViTModel,
)

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/importers/tests/fixtures/vit"
SHAPE = dict(image_size=16, patch_size=4, hidden_size=32)


def hf_config(cls, layers, heads, eps, qkv_bias, labels=None):
    extra = {"num_labels": labels} if labels else {}
    return cls(
        **SHAPE,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=64,
        layer_norm_eps=eps,
        qkv_bias=qkv_bias,
        **extra,
    )


def rounded(model, dtype):
    """The model's weights rounded to `dtype` (as stored) and back, so the f32 reference sees
    exactly what the import reads."""
    return model.to(dtype).float() if dtype != torch.float32 else model


def write_reference(name, output, values):
    values = values.detach().float()
    reference = {"output": output, "shape": list(values.shape), "values": values.flatten().tolist()}
    (OUT / name / "reference.json").write_text(json.dumps(reference))


def hf(name, model, dtype, pooled):
    model = rounded(model.eval(), dtype)
    model.to(dtype).save_pretrained(OUT / name)
    model.float()
    with torch.no_grad():
        out = model(pixel_values=X)
    if pooled is None:
        write_reference(name, "logits", out.logits)
    else:
        write_reference(name, "features", pooled(out.last_hidden_state))


def timm_model(name, arch, dtype, **args):
    torch.manual_seed(len(name))
    model = timm.create_model(arch, pretrained=False, img_size=16, patch_size=4, embed_dim=32,
                              mlp_ratio=2.0, **args).eval()
    model = rounded(model, dtype)
    timm.models.save_for_hf(model.to(dtype), OUT / name, safe_serialization=True)
    model.float()
    with torch.no_grad():
        out = model(X)
    write_reference(name, "logits" if model.num_classes else "features", out)


def class_token(hidden):
    return hidden[:, 0]


def class_and_distillation(hidden):
    return (hidden[:, 0] + hidden[:, 1]) / 2


torch.manual_seed(0)
X = torch.randn(2, 3, 16, 16)
OUT.mkdir(parents=True, exist_ok=True)
(OUT / "input.json").write_text(json.dumps({"shape": list(X.shape), "values": X.flatten().tolist()}))

torch.manual_seed(1)
hf("hf_vit_classifier", ViTForImageClassification(hf_config(ViTConfig, 2, 2, 1e-12, True, 5)),
   torch.float32, None)
torch.manual_seed(2)
hf("hf_vit_model", ViTModel(hf_config(ViTConfig, 3, 4, 1e-6, False)), torch.float16, class_token)
torch.manual_seed(3)
hf("hf_deit_teacher",
   DeiTForImageClassificationWithTeacher(hf_config(DeiTConfig, 2, 4, 1e-12, True, 4)),
   torch.float16, None)
torch.manual_seed(4)
hf("hf_deit_model", DeiTModel(hf_config(DeiTConfig, 3, 2, 1e-5, False)), torch.bfloat16,
   class_and_distillation)

timm_model("timm_vit_classifier", "vit_tiny_patch16_224", torch.float16, depth=2, num_heads=2,
           num_classes=3)
timm_model("timm_vit_features", "vit_small_patch16_224", torch.float16, depth=3, num_heads=4,
           num_classes=0, qkv_bias=False)
timm_model("timm_deit_distilled", "deit_tiny_distilled_patch16_224", torch.float16, depth=2,
           num_heads=2, num_classes=4)
timm_model("timm_deit_features", "deit_small_distilled_patch16_224", torch.bfloat16, depth=3,
           num_heads=4, num_classes=0)
