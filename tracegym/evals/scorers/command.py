"""`kind: command`: a shell command or test suite run in the task's workspace.

The command runs in the trajectory's workspace, or, when it has none, in a
scratch folder; either way `$TRACEGYM_TRAJECTORY` names a JSON dump of the
trajectory and `$TRACEGYM_FINAL_ANSWER` holds the final answer.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tracegym.evals.config import CommandEval
from tracegym.evals.scorers.base import Scorer, ScorerTimeout
from tracegym.evals.trajectory import ScoreResult, Trajectory

_TAIL = 2000
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")


class CommandScorer(Scorer):
    def __init__(self, spec: CommandEval) -> None:
        super().__init__(spec.name, spec.timeout_s)
        self.spec = spec

    def _score(self, traj: Trajectory) -> ScoreResult:
        with tempfile.TemporaryDirectory(prefix="tracegym-eval-") as scratch:
            cwd = traj.workspace if traj.workspace else Path(scratch)
            if not cwd.is_dir():
                raise FileNotFoundError(f"workspace {cwd} does not exist")
            dump = Path(scratch) / "trajectory.json"
            dump.write_text(json.dumps(traj.to_dict(), default=str), encoding="utf-8")
            code, stdout, stderr = self._run(cwd, dump, traj.final_answer or "")
            details: dict[str, Any] = {"exit_code": code, "stdout_tail": stdout[-_TAIL:],
                                       "stderr_tail": stderr[-_TAIL:]}
            if self.spec.reward_from == "exit_code":
                return ScoreResult(1.0 if code == 0 else 0.0, details)
            if self.spec.reward_from == "junit":
                counts = junit_counts(cwd / str(self.spec.junit_xml))
            else:
                counts = pytest_counts(stdout + "\n" + stderr)
            details.update(counts)
            return ScoreResult(counts["passed"] / counts["ran"], details)

    def _run(self, cwd: Path, dump: Path, answer: str) -> tuple[int, str, str]:
        env = {**os.environ, **self.spec.env, "TRACEGYM_TRAJECTORY": str(dump), "TRACEGYM_FINAL_ANSWER": answer}
        # A new session lets a timeout kill the whole process group, not just the shell.
        proc = subprocess.Popen(self.spec.command, shell=True, cwd=cwd, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise ScorerTimeout(" (the command was killed)") from None
        return proc.returncode, stdout, stderr


def junit_counts(path: Path) -> dict[str, int]:
    """Tests run and passed in a JUnit XML report (testsuite or testsuites root)."""
    if not path.is_file():
        raise FileNotFoundError(f"the command wrote no JUnit report at {path}")
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
    tests = failed = skipped = 0
    for suite in suites:
        tests += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
    ran = tests - skipped
    if ran <= 0:
        raise ValueError(f"the JUnit report {path} records no tests that ran")
    return {"ran": ran, "passed": ran - failed, "failed": failed, "skipped": skipped}


def pytest_counts(output: str) -> dict[str, int]:
    """Tests run and passed from pytest's last summary line (`3 passed, 1 failed in 0.1s`)."""
    summary = [line for line in output.splitlines() if _PYTEST_COUNT.search(line)]
    if not summary:
        raise ValueError("found no pytest summary line (e.g. '3 passed, 1 failed') in the output")
    counts = {word.rstrip("s") if word.startswith("error") else word: int(n)
              for n, word in _PYTEST_COUNT.findall(summary[-1])}
    # xfailed/xpassed are outcomes the suite expects to vary, as pytest itself treats them (not failures).
    passed = counts.get("passed", 0) + counts.get("xfailed", 0) + counts.get("xpassed", 0)
    failed = counts.get("failed", 0) + counts.get("error", 0)
    if passed + failed == 0:
        raise ValueError(f"pytest ran no tests: {summary[-1].strip()}")
    return {"ran": passed + failed, "passed": passed, "failed": failed, "skipped": counts.get("skipped", 0)}
