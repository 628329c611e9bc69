"""Hostile trace text cannot stall redaction: detection over texts built to make regexes backtrack ends, and finds
nothing where no secret is. The child process's CPU-time limit is a hang guard only (no honest machine nears it,
loaded or not: it counts CPU, not wall time); nothing here asserts a duration."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

from benchmarks.redact_redos import patterns, sized

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_CPU_S = 120
SIZE = 65_536
# The families that were worst before the patterns were rewritten (benchmarks/redact_redos.py): runs of blanks,
# backslashes and letters, blank-only indented lines under a key, a printing command repeated on one line.
ADVERSARIAL = {
    "spaces": " ",
    "tabs": "\t",
    "backslashes": "\\",
    "letters": "a",
    "blank_lines": "    \n",
    "python_blank_lines": "def f(x):\n    y = x\n    \n        \n",
    "yaml_key_blank": "key:\n  \n",
    "label_blank_line": "Password:\n\n",
    "printenv": "printenv ",
    "json_backslash_quote": '\\\\\\\\"k\\\\": ',
}
_CHILD = """
import json, sys
from tracegym.redact.detect import Detector
detector = Detector()
print(json.dumps({name: [f.value for f in detector.find(text)] for name, text in json.load(sys.stdin).items()}))
"""


def _limit_cpu() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (HANG_GUARD_CPU_S, HANG_GUARD_CPU_S))


def test_detection_over_backtracking_bait_ends_and_finds_nothing() -> None:
    texts = {name: sized(unit, SIZE) for name, unit in ADVERSARIAL.items()}
    result = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(texts), capture_output=True, text=True,
                            cwd=ROOT, preexec_fn=_limit_cpu)
    assert result.returncode == 0, f"stopped by the hang guard or failed: {result.returncode} {result.stderr[-2000:]}"
    assert json.loads(result.stdout) == {name: [] for name in ADVERSARIAL}


def test_the_probe_collects_the_modules_and_the_rules_patterns() -> None:
    found = patterns()
    assert "structure._YAML_CHILD_VALUE" in found
    assert any(name.startswith("rules.password#") for name in found)
    assert any(name.startswith("cells.") for name in found) and any(name.startswith("detect.") for name in found)


def test_sized_repeats_a_unit_to_the_size() -> None:
    assert sized("ab", 5) == "ababa"
