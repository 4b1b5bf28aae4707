#!/usr/bin/env bash
# One evaluation streamed over a large image folder (issue 44's acceptance; not a test):
# generates N small PNGs (default 200,000 of 16x16, 10 classes) as the test split of an image
# tree, with 2,000 training images and 1,000 OOD images beside it, writes an experiment file (a
# tiny ViT from scratch, one epoch, the single model scored with MSP and Mahalanobis), runs
# `uqformer run` on it under /usr/bin/time -v, and prints the images, the wall time and the peak
# RSS ("Maximum resident set size"), which must stay below 1 GB. The images are noise: the run
# measures memory and time, not accuracy.
# Usage: scripts/eval_folder_memory.sh [N] [DIR]   (DIR is kept if given, else removed)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-200000}"
dir="${2:-}"
if [[ -z "$dir" ]]; then
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' EXIT
fi
dir="$(cd "$dir" && pwd)"
cargo build --release -p data --example image_folder_memory
cargo build --release -p uqformer
target="${CARGO_TARGET_DIR:-target}/release"
# `generate DIR K` writes DIR/train/<class>/<i>.png; each set is moved to its place.
place() {
    local count="$1" to="$2"
    if [[ ! -d "$to" ]]; then
        "$target/examples/image_folder_memory" generate "$dir/gen" "$count"
        mkdir -p "$(dirname "$to")"
        mv "$dir/gen/train" "$to"
        rm -rf "$dir/gen"
    fi
}
place "$n" "$dir/images/test"
place 2000 "$dir/images/train"
place 1000 "$dir/ood"
cat > "$dir/eval_folder_memory.toml" <<TOML
[experiment]
name = "eval_folder_memory"
seeds = [0]
backend = "flex"

[data]
dataset = { path = "$dir/images" }
ood = [{ path = "$dir/ood", name = "ood" }]
image_size = 16
val_fraction = 0.1
eval_batch_size = 256
ood_score = ["msp", "mahalanobis"]

[backbone]
preset = "vit_tiny_28"
patch_size = 4

[train]
epochs = 1
batch_size = 64

[[method]]
kind = "single"
TOML
log="$(mktemp)"
start_load="$(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -v "$target/uqformer" run "$dir/eval_folder_memory.toml" --workers 0 \
    --out "$dir/results" 2> >(tee "$log" >&2)
wait
peak_kb="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")"
wall="$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log")"
echo "test images: $n; peak RSS: $((peak_kb / 1024)) MiB; wall time (index, train, evaluate):" \
    "$wall; load average before: $start_load, after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -f "$log"
if (( peak_kb >= 1024 * 1024 )); then
    echo "peak RSS is not below 1 GB" >&2
    exit 1
fi
