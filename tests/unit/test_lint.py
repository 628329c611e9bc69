"""The checks every change passes (pyproject.toml's [tool.ruff]): pyflakes, bugbear, line length, import order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing_in_the_package_tests_and_benchmarks() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "tracegym", "tests", "benchmarks"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
