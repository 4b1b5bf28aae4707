#!/usr/bin/env bash
# A study trained in 1, 2 and 4 shards, one shard after another (so no two share the CPU), then
# evaluated with --no-train; each in a cache of its own, twice, interleaved. Prints the training
# and evaluation wall times; the metrics of every evaluation are compared with the first's.
#   scripts/shard_overhead.sh [STUDY.toml]   (default: a tiny 4-seed study written here)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$repo/target/release/uqformer
work=$(mktemp -d)
study=${1:-}
if [ -z "$study" ]; then
  study=$work/study.toml
  # The study of crates/cli/tests/shards.rs on 4 seeds: 12 jobs.
  sed -n '/^const CONFIG/,/^"#;/p' "$repo/crates/cli/tests/shards.rs" | sed '1d;$d' |
    sed 's/seeds = \[0, 1\]/seeds = [0, 1, 2, 3]/' > "$study"
fi
name=$(sed -n 's/^name = "\(.*\)"/\1/p' "$study" | head -1)
for rep in 1 2; do
  for n in 1 2 4; do
    dir=$work/r$rep-n$n
    mkdir -p "$dir"
    t0=$(date +%s.%N)
    for k in $(seq 0 $((n - 1))); do
      "$bin" run "$study" --shard "$k/$n" --cache "$dir/cache" --data "$repo/datasets" --quiet > /dev/null
    done
    t1=$(date +%s.%N)
    "$bin" run "$study" --no-train --workers 0 --cache "$dir/cache" --data "$repo/datasets" \
      --out "$dir/results" --quiet > /dev/null
    t2=$(date +%s.%N)
    printf 'rep %s, %s shard(s): training %.2f s, evaluation %.2f s\n' "$rep" "$n" \
      "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"
  done
done
python3 - "$work" "$name" <<'PY'
import glob, json, sys
work, name = sys.argv[1:]
def metrics(d):
    s = json.load(open(f"{d}/results/{name}/latest/summary.json"))
    return [(m["name"], m["seed"], m["id"], m["ood"], m.get("shift"), m.get("ood_scores")) for m in s["methods"]]
runs = sorted(glob.glob(f"{work}/r*-n*"))
first = metrics(runs[0])
same = all(metrics(r) == first for r in runs)
print(f"metrics of all {len(runs)} evaluations equal: {same} ({len(first)} entries)")
PY
rm -rf "$work"
