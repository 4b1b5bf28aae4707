"""Writes the CLIP import fixtures: two small random `CLIPModel`s saved by transformers'
save_pretrained, and their outputs on fixed inputs, under crates/importers/tests/fixtures/clip/.

Run with the reference venv (torch, transformers; offline):
    /work/venv-ref/bin/python scripts/clip_reference_fixtures.py

- `clip_tokenized`: text vocabulary = the CLIP tokenizer fixture's (crates/data/tests/fixtures/
  clip_bpe: 2,014 tokens, its vocab.json and merges.txt copied beside the weights, so the folder is
  a checkpoint with its tokenizer), `eos_token_id` = the id of `<|endoftext|>` (pooling at its first
  position), quick-GELU in both towers, stored in F16 (the reference runs in f32 on the rounded
  weights, which is what the import reads). Its texts are real prompts tokenized by transformers'
  CLIPTokenizer, padded to the longest; it also holds CLIP's zero-shot logits for three class
  names in two templates (`zero_shot_logits` [N, 3]).
- `clip_argmax`: a vocabulary of 64 with hand-written ids, `eos_token_id` = 2 (transformers'
  rule for old configs: pooling at the largest id; the end id 63 is also the padding id, as in
  openai's checkpoints, so a padded row has the largest id more than once and the first counts),
  exact GELU in the vision tower and quick-GELU in the text tower, stored in F32.

Each folder holds config.json, model.safetensors and reference.json: the pixel values
`[N, 3, S, S]` (multiples of 1/8, exact in f32), the token ids and attention mask `[T, L]` (with
the texts for `clip_tokenized`), and `image_embeds` `[N, E]` (`get_image_features`: the projected
pooled output, not normalised), `text_embeds` `[T, E]` (likewise) and `logits_per_image` `[N, T]`.
Seeded, so a rerun writes the same files.
"""

import json
import pathlib
import shutil

import torch
from transformers import CLIPConfig, CLIPModel, CLIPTokenizer

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/importers/tests/fixtures/clip"
BPE = ROOT / "crates/data/tests/fixtures/clip_bpe"

TEXTS = [
    "a photo of a cat.",
    "a blurry photo of a dog",
    "an origami airplane!",
]

# CLIP's zero-shot recipe on `clip_tokenized`: each class's templates filled in with its name.
CLASSES = ["cat", "dog", "origami airplane"]
TEMPLATES = ["a photo of a {}.", "a blurry photo of the {}!"]


def config(text, vision, projection_dim):
    return CLIPConfig(
        text_config=text, vision_config=vision, projection_dim=projection_dim
    )


def pixels(n, side, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.round(torch.randn(n, 3, side, side, generator=g) * 8) / 8


def build(cfg, seed, dtype):
    """A random model whose weights are rounded to `dtype` as stored; LayerNorms and the logit
    scale randomised too, so that a mapping that skipped one would show."""
    torch.manual_seed(seed)
    model = CLIPModel(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or "layrnorm" in name:
                p.add_(torch.randn_like(p) * 0.1)
            elif name == "logit_scale":
                p.fill_(1.9)
            else:
                p.copy_(torch.randn_like(p) * 0.08)
    return model.to(dtype).float() if dtype != torch.float32 else model


def outputs(model, pixel_values, ids, mask):
    with torch.no_grad():
        vision = model.vision_model(pixel_values=pixel_values)
        image = model.visual_projection(vision.pooler_output)
        text = model.text_model(input_ids=ids, attention_mask=mask)
        text = model.text_projection(text.pooler_output)
        out = model(pixel_values=pixel_values, input_ids=ids, attention_mask=mask)
    # The full model normalises both and scales by exp(logit_scale): checked against the parts.
    expected = (
        model.logit_scale.exp()
        * torch.nn.functional.normalize(image, dim=-1)
        @ torch.nn.functional.normalize(text, dim=-1).T
    )
    assert torch.allclose(out.logits_per_image, expected, atol=1e-5)
    return image, text, out.logits_per_image


def zero_shot(model, tokenizer, pixel_values):
    """Class c's embedding: the mean of its prompts' normalised text embeddings, renormalised;
    the logits exp(logit_scale) · normalize(image) · classesᵀ."""
    normalize = torch.nn.functional.normalize
    prompts = [t.format(c) for c in CLASSES for t in TEMPLATES]
    batch = tokenizer(prompts, padding=True, truncation=True, max_length=16, return_tensors="pt")
    with torch.no_grad():
        text = model.text_model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        text = normalize(model.text_projection(text.pooler_output), dim=-1)
        classes = normalize(text.reshape(len(CLASSES), len(TEMPLATES), -1).mean(1), dim=-1)
        image = model.visual_projection(model.vision_model(pixel_values=pixel_values).pooler_output)
        logits = model.logit_scale.exp() * normalize(image, dim=-1) @ classes.T
    return {"classes": CLASSES, "templates": TEMPLATES, "zero_shot_logits": flat(logits)}


def flat(t):
    return {"shape": list(t.shape), "values": t.detach().float().flatten().tolist()}


def write(name, model, dtype, pixel_values, ids, mask, extra):
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    model.to(dtype).save_pretrained(folder)
    model.float()
    image, text, logits = outputs(model, pixel_values, ids, mask)
    reference = {
        "pixel_values": flat(pixel_values),
        "input_ids": flat(ids),
        "attention_mask": flat(mask),
        "image_embeds": flat(image),
        "text_embeds": flat(text),
        "logits_per_image": flat(logits),
        **extra,
    }
    (folder / "reference.json").write_text(json.dumps(reference))


def tokenized():
    tokenizer = CLIPTokenizer(vocab=str(BPE / "vocab.json"), merges=str(BPE / "merges.txt"))
    batch = tokenizer(TEXTS, padding=True, truncation=True, max_length=16, return_tensors="pt")
    eos = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    text = dict(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32,
        num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=16,
        hidden_act="quick_gelu", bos_token_id=tokenizer.bos_token_id, eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
    )
    vision = dict(
        image_size=16, patch_size=4, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, hidden_act="quick_gelu",
    )
    model = build(config(text, vision, 24), seed=1, dtype=torch.float16)
    ids, mask = batch["input_ids"], batch["attention_mask"]
    assert mask.min() == 0, "the batch should have a padded row"
    images = pixels(2, 16, 10)
    extra = {"texts": TEXTS, **zero_shot(model, tokenizer, images)}
    write("clip_tokenized", model, torch.float16, images, ids, mask, extra)
    for file in ["vocab.json", "merges.txt"]:
        shutil.copy(BPE / file, OUT / "clip_tokenized" / file)


def argmax():
    text = dict(
        vocab_size=64, hidden_size=24, intermediate_size=48, num_hidden_layers=2,
        num_attention_heads=2, max_position_embeddings=12, hidden_act="quick_gelu",
        bos_token_id=0, eos_token_id=2, pad_token_id=63, layer_norm_eps=1e-5,
    )
    vision = dict(
        image_size=24, patch_size=8, hidden_size=32, intermediate_size=48,
        num_hidden_layers=2, num_attention_heads=4, hidden_act="gelu", layer_norm_eps=1e-6,
    )
    model = build(config(text, vision, 16), seed=2, dtype=torch.float32)
    ids = torch.tensor([
        [62, 5, 17, 40, 9, 63, 63, 63],
        [62, 33, 2, 63, 63, 63, 63, 63],
        [62, 7, 8, 9, 10, 11, 12, 63],
        [62, 50, 63, 63, 63, 63, 63, 63],
    ])
    lengths = [6, 4, 8, 3]
    mask = torch.tensor([[1] * n + [0] * (8 - n) for n in lengths])
    write("clip_argmax", model, torch.float32, pixels(2, 24, 20), ids, mask, {})


if __name__ == "__main__":
    shutil.rmtree(OUT, ignore_errors=True)
    tokenized()
    argmax()
    size = sum(f.stat().st_size for f in OUT.rglob("*") if f.is_file())
    print(f"{OUT}: {size / 1000:.0f} kB")
