#!/usr/bin/env bash
# Submits a study to Slurm as three jobs chained with --dependency=afterok: an array of SHARDS
# tasks training the base models, an array training the methods on them, and the evaluation.
#   deploy/slurm/submit.sh STUDY.toml SHARDS [sbatch options for the training arrays...]
# The cache, data and results must be on a filesystem every node sees (NFS is fine: the cache's
# folder locks are made for it). Environment: UQFORMER (the binary; default
# target/release/uqformer), CACHE (default results/.cache), DATA (datasets), OUT (results).
# Prints the three job ids.
set -euo pipefail
study=${1:?usage: submit.sh STUDY.toml SHARDS [sbatch options...]}
shards=${2:?usage: submit.sh STUDY.toml SHARDS [sbatch options...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
export UQFORMER=$(realpath "${UQFORMER:-target/release/uqformer}")
export STUDY=$(realpath "$study")
export CACHE=$(realpath -m "${CACHE:-results/.cache}")
export DATA=$(realpath "${DATA:-datasets}")
export OUT=$(realpath -m "${OUT:-results}")
# Fails here, not in the array, on a file that does not parse.
"$UQFORMER" plan "$STUDY" > /dev/null
array="--array=0-$((shards - 1))"
base=$(STAGE=base sbatch --parsable --export=ALL "$array" "$@" "$here/train.sbatch")
method=$(STAGE=method sbatch --parsable --export=ALL "$array" --dependency=afterok:"$base" \
  "$@" "$here/train.sbatch")
evaluate=$(sbatch --parsable --export=ALL --dependency=afterok:"$method" "$here/evaluate.sbatch")
echo "base $base method $method evaluate $evaluate"
