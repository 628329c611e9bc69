"""benchmarks/gpu_check.sh --cpu: the GPU check's own path on the CPU, as a GPU machine without duckdb runs it.

The GPU machine has no duckdb (and no vLLM); modules of those names that fail to import stand in for their absence,
so the check is known to run there before a GPU is available.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import tracegym

ROOT = Path(tracegym.__file__).parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_check.sh"


def _without(folder: Path, *modules: str) -> dict[str, str]:
    """The environment with `modules` unimportable (each shadowed by one that raises ImportError)."""
    folder.mkdir()
    for name in modules:
        (folder / f"{name}.py").write_text(f"raise ImportError('{name} is not installed on this machine')\n")
    return {**os.environ, "PYTHONPATH": str(folder), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")}


@pytest.mark.slow
def test_gpu_check_runs_on_the_cpu_without_duckdb_or_vllm(tmp_path):
    done = subprocess.run(["bash", str(SCRIPT), "--cpu", "--steps", "2", "--groups", "2", "--new-tokens", "16"],
                          env=_without(tmp_path / "absent", "duckdb", "vllm"), capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(result) == {"device", "torch", "pools", "step_s", "peak_gib", "delta_ratio", "lora_step_s", "seconds"}
    assert result["device"] == "cpu" and result["peak_gib"] is None
    assert [p["precision"] for p in result["pools"]] == ["bf16", "fp8"]
    for pool in result["pools"]:
        assert set(pool) == {"precision", "tokens_per_s", "k3", "in_band"} and pool["tokens_per_s"] > 0
        assert pool["k3"] >= 0 and 0 <= pool["in_band"] <= 1
    assert 0 < result["delta_ratio"] < 1 and result["step_s"] > 0 and result["lora_step_s"] > 0
    assert "pool fp8 (emulated)" in done.stderr and "rebuilt bit for bit" in done.stderr


def test_gpu_check_names_a_missing_package_before_any_work(tmp_path):
    done = subprocess.run(["bash", str(SCRIPT), "--cpu"], env=_without(tmp_path / "absent", "zstandard"),
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("gpu_check: missing package zstandard")
