#!/usr/bin/env bash
# The bounded-memory check of image folders (issue 44; not a test): generates N small PNGs
# (default 200,000 of 16x16, 10 classes) in a temporary folder, then indexes and streams them
# all through a CLIP-style preprocessing under /usr/bin/time -v, and prints the images, the
# wall time and the peak RSS ("Maximum resident set size"), which must stay below 1 GB.
# Usage: scripts/image_folder_memory.sh [N] [DIR]   (DIR is kept if given, else removed)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-200000}"
dir="${2:-}"
if [[ -z "$dir" ]]; then
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' EXIT
fi
cargo build --release -p data --example image_folder_memory
bin="${CARGO_TARGET_DIR:-target}/release/examples/image_folder_memory"
if [[ ! -d "$dir/train" ]]; then
    "$bin" generate "$dir" "$n"
fi
log="$(mktemp)"
/usr/bin/time -v "$bin" read "$dir" 2> >(tee "$log" >&2)
wait
peak_kb="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")"
wall="$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log")"
echo "peak RSS: $((peak_kb / 1024)) MiB; wall time (index + stream): $wall"
rm -f "$log"
if (( peak_kb >= 1024 * 1024 )); then
    echo "peak RSS is not below 1 GB" >&2
    exit 1
fi
