#!/usr/bin/env bash
# What benchmarks/gpu_check.sh needs on a GPU machine without network that has torch, transformers, peft,
# safetensors, numpy, yaml, jinja2 and xxhash (Python 3.12, x86_64) but not pydantic, zstandard, orjson or jsonschema
# (the tool-call parser's): their CPython 3.12 manylinux wheels, downloaded here into benchmarks/.gpu-carry/wheels
# (ignored by git), and the SmolLM2 tokenizer, converted here into benchmarks/.gpu-carry/cache. Carry
# `benchmarks/.gpu-carry` with the checkout; gpu_check.sh installs the wheels into a temporary folder (pip --no-index
# --target) and uses the tokenizer from there. The versions are this environment's (pydantic 2.13 needs a newer
# typing-extensions than torch does, so that is carried too).
# Sizes (measured): zstandard 5.3 MB, pydantic-core 2.0 MB, pydantic 0.5 MB, rpds-py 0.4 MB, orjson 0.1 MB,
# jsonschema, its specifications, referencing, attrs, typing-extensions, typing-inspection, annotated-types 0.3 MB
# together; the tokenizer 3.4 MB: 12 MB in all, within the 64 MiB a device run takes. The store (duckdb, ~20 MB) is
# not needed: the check's path never opens one.
set -euo pipefail
cd "$(dirname "$0")"
carry=.gpu-carry
mkdir -p "$carry/wheels"
python -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --abi cp312 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
  --dest "$carry/wheels" \
  pydantic==2.13.4 pydantic-core==2.46.4 annotated-types==0.7.0 typing-inspection==0.4.2 \
  typing-extensions==4.16.0 zstandard==0.25.0 orjson==3.13.0 jsonschema==4.26.0 \
  jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==0.30.0 attrs==26.1.0
PYTHONPATH="$PWD/..${PYTHONPATH:+:$PYTHONPATH}" python -c '
import sys
from pathlib import Path
from tracegym.models.load import smollm2_tokenizer_dir
print(smollm2_tokenizer_dir(Path(sys.argv[1]).resolve()))' "$carry/cache"
du -sh "$carry"/wheels/* "$carry/cache"
