"""The checks every change passes: ruff (pyflakes, bugbear, line length, import order) and mypy where it is set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing_in_the_package_tests_and_benchmarks() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "tracegym", "tests", "benchmarks"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_passes_on_the_typed_packages() -> None:
    """pyproject.toml's [tool.mypy] names them: training, samplers, evals, store, harnesses, tasks."""
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr
