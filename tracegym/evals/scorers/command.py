"""`kind: command`: a shell command or test suite, run where the trajectory's work is.

With a workspace (shell and proxy episodes) the command runs inside the
sandbox the episode ran in (`Trajectory.runner`): as its uid, with its minimal
environment, no network, under its limits, the wall time being the eval's
`timeout_s`. Before it runs, each of `files` is copied fresh into the workspace
and the JUnit report path is cleared, so the policy can neither edit the tests
that define its reward nor plant a report; the report is then read without
following links. A workspace without a sandbox, or whose sandbox does not
isolate it and the config did not say `allow_unisolated`, is refused.

Without a workspace (chat, tools and replay episodes; `evals check` over
recorded traces) nothing the model wrote is on disk but the JSON dump, and the
command is the operator's own code reading it: it runs on this machine in a
scratch folder with this process's environment, as `python` evals run in-process.

Either way `$TRACEGYM_TRAJECTORY` names a JSON dump of the trajectory and
`$TRACEGYM_FINAL_ANSWER` holds the final answer.
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

from tracegym.errors import ConfigError
from tracegym.evals.scorers import nofollow
from tracegym.evals.scorers.base import Scorer, ScorerTimeout
from tracegym.evals.scorers.command_runner import CommandOutput, CommandRunner
from tracegym.evals.scorers.config import CommandEval
from tracegym.evals.scorers.trajectory import ScoreResult, Trajectory

_TAIL = 2000
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
_DUMP = ".tracegym-trajectory.json"
"""The trajectory dump's name in a workspace, the one folder the sandboxed command is sure to see."""


class CommandScorer(Scorer):
    def __init__(self, spec: CommandEval, evals_dir: Path) -> None:
        super().__init__(spec.name, spec.timeout_s)
        self.spec = spec
        self.files = {dest: _source(spec.name, evals_dir, src) for dest, src in spec.files.items()}

    def _score(self, traj: Trajectory) -> ScoreResult:
        if "\x00" in (traj.final_answer or ""):
            raise ValueError("the final answer holds a NUL byte, which $TRACEGYM_FINAL_ANSWER cannot carry")
        if traj.workspace is not None:
            runner = self._confinement(traj, traj.workspace)
            output = self._in_workspace(traj, traj.workspace, runner)
            return self._reward(output, traj.workspace, {"sandbox": runner.kind})
        with tempfile.TemporaryDirectory(prefix="tracegym-eval-") as scratch:
            return self._reward(self._on_host(traj, Path(scratch)), Path(scratch), {})

    def _confinement(self, traj: Trajectory, workspace: Path) -> CommandRunner:
        runner = traj.runner
        if runner is None:
            raise ConfigError(f"eval {self.name!r}: refusing to run its command in {workspace}, which the model "
                              "wrote, with no sandbox to confine it. Fix: score the workspace through a harness "
                              "that ran the episode in a sandbox (shell or proxy, with `tracegym run`).")
        if not runner.isolated and not runner.unisolated_allowed:
            raise ConfigError(f"eval {self.name!r}: refusing to run its command in {workspace}, which the model "
                              f"wrote: the {runner.kind} sandbox does not isolate it from this machine. Fix: use the "
                              "bwrap or docker sandbox, or set allow_unisolated: true in the harness config to "
                              "accept running it unisolated.")
        return runner

    def _prepare(self, folder: Path) -> None:
        """The reward's own files, fresh; no report but the one the command is about to write."""
        for dest, source in self.files.items():
            nofollow.replace_with_copy(folder, dest, source)
        if self.spec.junit_xml:
            nofollow.remove(folder, self.spec.junit_xml)

    def _in_workspace(self, traj: Trajectory, workspace: Path, runner: CommandRunner) -> CommandOutput:
        if not workspace.is_dir():
            raise FileNotFoundError(f"workspace {workspace} does not exist")
        self._prepare(workspace)
        inside = runner.workspace_path()
        dump = {**traj.to_dict(), "workspace": inside}
        nofollow.replace_with_bytes(workspace, _DUMP, json.dumps(dump, default=str).encode())
        try:
            output = runner.run(self.spec.command, self._env(f"{inside}/{_DUMP}", traj), self.timeout_s)
        finally:
            nofollow.remove(workspace, _DUMP)
        if output.timed_out:
            raise ScorerTimeout(" (the command was killed)")
        return output

    def _on_host(self, traj: Trajectory, scratch: Path) -> CommandOutput:
        self._prepare(scratch)
        dump = scratch / "trajectory.json"
        dump.write_text(json.dumps(traj.to_dict(), default=str), encoding="utf-8")
        env = {**os.environ, **self._env(str(dump), traj)}
        # A new session lets a timeout kill the whole process group, not just the shell.
        proc = subprocess.Popen(self.spec.command, shell=True, cwd=scratch, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise ScorerTimeout(" (the command was killed)") from None
        return CommandOutput(proc.returncode, stdout, stderr, timed_out=False)

    def _env(self, dump: str, traj: Trajectory) -> dict[str, str]:
        return {**self.spec.env, "TRACEGYM_TRAJECTORY": dump, "TRACEGYM_FINAL_ANSWER": traj.final_answer or ""}

    def _reward(self, output: CommandOutput, folder: Path, extra: dict[str, Any]) -> ScoreResult:
        details: dict[str, Any] = {"exit_code": output.exit_code, "stdout_tail": output.stdout[-_TAIL:],
                                   "stderr_tail": output.stderr[-_TAIL:], **extra}
        if output.killed is not None:
            details["killed"] = output.killed
        if self.spec.reward_from == "exit_code":
            return ScoreResult(1.0 if output.exit_code == 0 else 0.0, details)
        try:
            if self.spec.reward_from == "junit":
                counts = junit_counts(folder, str(self.spec.junit_xml))
            else:
                counts = pytest_counts(output.stdout + "\n" + output.stderr)
        except (OSError, ValueError) as e:
            if output.killed is None:
                raise
            raise type(e)(f"{e} (the sandbox stopped the command at its {output.killed} limit)") from None
        details.update(counts)
        return ScoreResult(counts["passed"] / counts["ran"], details)


def _source(name: str, evals_dir: Path, source: str) -> Path:
    path = (evals_dir / source).resolve()
    if not path.exists():
        raise ConfigError(f"eval {name!r}: files names {source!r}, which is not there ({path}). Fix: create it, or "
                          "give its path relative to the evals file.")
    return path


def junit_counts(folder: Path, report: str) -> dict[str, int]:
    """Tests run and passed in the JUnit XML report at `folder/report` (testsuite or testsuites root)."""
    try:
        data = nofollow.read_regular_file(folder, report)
    except FileNotFoundError:
        raise FileNotFoundError(f"the command wrote no JUnit report at {report}") from None
    root = ET.fromstring(data)
    suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
    tests = failed = skipped = 0
    for suite in suites:
        tests += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
    ran = tests - skipped
    if ran <= 0:
        raise ValueError(f"the JUnit report {report} records no tests that ran")
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
