#!/usr/bin/env bash
# The GPU route, end to end: builds with LibTorch's CUDA kernels (`--features tch`, the pip torch
# that scripts/libtorch-env puts in place: the offline CUDA route, docs/backends.md), runs the
# quick start with `--backend tch-cuda`, and times ViT-B/16 at batch 1 and 256 in f32 and bf16
# for single, Deep Ensemble (3), Hydra (3), LoRA-Ensemble (16) and HetDPT (the papers' cost
# claims), printing that table (markdown) at the end. The timing is the `ensemble_cost` bench's
# `--table` mode, which uses the runs' own cost harness; a method that cannot run in a precision
# is named in its cell with the reason.
#
#   scripts/gpu_check.sh          # on a machine with an NVIDIA GPU
#   scripts/gpu_check.sh --cpu    # the same steps on LibTorch's CPU kernels (`--backend tch`),
#                                 # small: the quick start's epochs cut to 1, the table on
#                                 # `vit_tiny_28` at batch 1 and 8, one round (minutes)
#
# UQFORMER_TORCH_VENV picks the torch environment (default .venv-torch; an existing one with
# torch 2.9.1 and numpy is used as it is). Scratch results go to a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
cpu=0
case "${1:-}" in
  --cpu) cpu=1 ;;
  "") ;;
  *) echo "gpu_check: unknown argument $1; expected --cpu or nothing" >&2; exit 2 ;;
esac
eval "$(scripts/libtorch-env)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

echo "== build (--features tch)" >&2
cargo build --release -p uqformer --features tch
cargo bench -p experiment --features tch --bench ensemble_cost --no-run

if [ "$cpu" = 1 ]; then
  backend=tch
  # Every `epochs = N` (the base model's and each method's) cut to 1; warmup_epochs untouched.
  sed -E 's/\bepochs = [0-9]+/epochs = 1/g' experiments/quickstart.toml > "$scratch/quickstart.toml"
  quickstart="$scratch/quickstart.toml"
  table=(--model vit_tiny_28 --batch 8 --rounds 1)
else
  backend=tch-cuda
  quickstart=experiments/quickstart.toml
  table=(--model vit_b16 --batch 256 --rounds 5)
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >&2 || true
fi

echo "== quick start on $backend" >&2
# From the repository root, so that its bundled data sets are found (datasets/).
target/release/uqformer run "$quickstart" --backend "$backend" --out "$scratch/results"

echo "== cost table on $backend" >&2
cargo bench -p experiment --features tch --bench ensemble_cost -- --table --backend "$backend" \
  "${table[@]}" | tee "$scratch/table.md"
echo
echo "torch $("$UQFORMER_PYTHON" -c 'import torch; print(torch.__version__)'), backend $backend"
sed -n '/^$/,$p' "$scratch/table.md"
