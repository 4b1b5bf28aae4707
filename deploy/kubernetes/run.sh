#!/usr/bin/env bash
# Applies deploy/kubernetes/study.yaml one Job at a time, each after the one before completed
# (Kubernetes has no dependencies between Jobs). Needs kubectl with a context on the cluster.
set -euo pipefail
file="$(cd "$(dirname "$0")" && pwd)/study.yaml"
for job in uqformer-train-base uqformer-train-method uqformer-evaluate; do
  kubectl create -f <(awk -v RS='---' -v want="name: $job" 'index($0, want)' "$file")
  kubectl wait --for=condition=complete --timeout=48h "job/$job"
done
