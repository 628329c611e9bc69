"""Issue 24, findings 1 and 6: what the model wrote is scored inside the episode's sandbox, never on the host.

Finding 1: a `command` eval ran with `shell=True` on the host, in the model's workspace, with the host's whole
environment, so a policy-written conftest.py ran as the host user and could award itself reward. Finding 6:
bubblewrap's /tmp hid a Python under /tmp, so `sandbox: auto` fell back to the unisolated subprocess sandbox,
silently and blaming a missing bubblewrap.

The model is the one thing faked here (a scripted policy); its commands, the sandboxes, pytest and the agent
program behind the proxy are all real.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

import tracegym
from tracegym.episodes.record import Episode
from tracegym.errors import ConfigError, SandboxError
from tracegym.evals.scorers import ScorerContext, build_scorer
from tracegym.evals.scorers.config import load_evals
from tracegym.evals.scorers.trajectory import Trajectory
from tracegym.harnesses.config import HarnessConfig, HarnessFactory
from tracegym.harnesses.policy import Completion, PolicyClient, PolicyRequest
from tracegym.harnesses.runner import EpisodeJob, EpisodeLimits, run_episode
from tracegym.harnesses.sandbox import (
    BwrapSandbox,
    Limits,
    SandboxIsolationWarning,
    SubprocessSandbox,
    Workspaces,
    bwrap_problem,
    factory,
    make_sandbox,
)
from tracegym.models.sampling import SamplingParams
from tracegym.tasks.spec import TaskSpec

SECRET = "hunter2-host-secret"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def need_bwrap() -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bubblewrap cannot run here: {problem}")


class Scripted(PolicyClient):
    """The model, scripted: each call answers with the next reply."""

    def __init__(self, replies: Sequence[str]) -> None:
        self.replies = list(replies)

    async def generate(self, requests: Sequence[PolicyRequest]) -> list[Completion]:
        return [Completion(self.replies.pop(0), "stop", "scripted") for _ in requests]

    async def aclose(self) -> None:
        pass


def bash(command: str) -> str:
    return f"THOUGHT: do it.\n\n```bash\n{command}\n```"


def write(path: str, text: str) -> str:
    """A bash command that writes `text` to `path`, as a model would."""
    return f"cat > {path} <<'TRACEGYM_EOF'\n{textwrap.dedent(text).strip()}\nTRACEGYM_EOF"


def task(harness: str) -> TaskSpec:
    return TaskSpec.model_validate({
        "task_id": f"t-{harness}", "split": "train", "harness": harness,
        "prompt": {"system": "One bash block per reply.", "messages": [{"role": "user", "content": "Fix solve()."}]},
        "scorer": {"evals": [{"name": "tests_pass"}]},
        "provenance": {"trace_id": "tr-1", "format": "mini-swe-agent", "source_task": "s", "cut_message_idx": 2},
    })


def scorer_from(tmp_path: Path, yaml_text: str):
    path = tmp_path / "evals.yaml"
    path.write_text(textwrap.dedent(yaml_text))
    loaded = load_evals(path)
    return build_scorer(loaded.config.evals[0], ScorerContext(tmp_path), loaded)


def shell_episode(tmp_path: Path, replies: Sequence[str], scorer, **shell) -> Episode:
    config = HarnessConfig(shell={"template": "repo", "workspaces": "ws", "keep_workspaces": True,
                                  "limits": {"wall_seconds": 60}, **shell})
    made = HarnessFactory(config, tmp_path)
    harness = made.make(task("shell"), "ep-1")

    async def go() -> Episode:
        return await run_episode(Scripted(replies), harness, EpisodeJob(task("shell")), SamplingParams(),
                                 EpisodeLimits(max_turns=len(replies)), scorer)

    try:
        return asyncio.run(go())
    finally:
        made.close()


# Finding 1: the policy's code runs confined when scored ----------------------------------------------------

def host_probe(marker: Path) -> str:
    """A conftest.py that, wherever pytest loads it, tries to write a host file and shows a host secret."""
    return f"""
        import os, pathlib
        print("SECRET=" + os.environ.get("TRACEGYM_TEST_SECRET", "none"))
        marker = pathlib.Path({str(marker)!r})
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("the policy's code ran on the host")
    """


def test_a_policy_conftest_scored_in_a_shell_workspace_reaches_no_host_file_or_secret(tmp_path, monkeypatch):
    need_bwrap()
    monkeypatch.setenv("TRACEGYM_TEST_SECRET", SECRET)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "test_task.py").write_text("def test_ok():\n    pass\n")
    marker = tmp_path / "host" / "marker"
    scorer = scorer_from(tmp_path, """
        evals:
          - name: tests_pass
            kind: command
            command: python -m pytest -q -s -p no:cacheprovider
            reward_from: pytest
    """)
    episode = shell_episode(tmp_path, [bash(write("conftest.py", host_probe(marker))), bash(SUBMIT)], scorer)
    assert episode.harness_error is None and episode.scorer_error is None, episode.scorer_error
    assert not marker.exists(), "a policy-written conftest.py wrote a file on the host while scored"
    output = episode.scorer_details["stdout_tail"]
    assert SECRET not in output and "SECRET=none" in output
    assert episode.reward == 1.0 and episode.scorer_details["sandbox"] == "bwrap"


def test_a_policy_scored_through_the_proxy_reaches_no_host_file_or_secret(tmp_path, monkeypatch):
    need_bwrap()
    monkeypatch.setenv("TRACEGYM_TEST_SECRET", SECRET)
    marker = tmp_path / "host" / "scoring-marker"
    # The agent program writes files and exits; what it wrote runs only when the command eval scores it.
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "agent.sh").write_text(write("conftest.py", host_probe(marker)) + "\n"
                                                 + write("test_task.py", "def test_ok():\n    pass") + "\n")
    scorer = scorer_from(tmp_path, """
        evals:
          - name: tests_pass
            kind: command
            command: python -m pytest -q -s -p no:cacheprovider
            reward_from: pytest
    """)
    proxy = {"command": 'sh "$TRACEGYM_AGENT_DIR/agent.sh"', "agent_dir": "agent", "workspaces": "ws"}
    made = HarnessFactory(HarnessConfig(harness="proxy", proxy=proxy), tmp_path)
    harness = made.make(task("chat"), "ep-1")

    async def go() -> Episode:
        return await harness.run_episode(Scripted([]), EpisodeJob(task("chat")), SamplingParams(), EpisodeLimits(),
                                         scorer, None, "r-1")

    try:
        episode = asyncio.run(go())
    finally:
        made.close()
    assert episode.harness_error is None and episode.scorer_error is None, episode.scorer_error
    assert not marker.exists(), "a conftest.py the agent program wrote ran on the host while scored"
    output = episode.scorer_details["stdout_tail"]
    assert SECRET not in output and "SECRET=none" in output
    assert episode.reward == 1.0 and episode.scorer_details["sandbox"] == "bwrap"


REWARD_TESTS = """
    from solution import solve


    def test_three():
        assert solve(3) == 3


    def test_four():
        assert solve(4) == 4
"""

CHEAT_CONFTEST = """
    import pytest


    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        outcome.get_result().outcome = "passed"
"""


def test_the_reward_tests_come_fresh_and_nothing_the_policy_planted_steers_pytest(tmp_path):
    need_bwrap()
    (tmp_path / "reward_tests").mkdir()
    (tmp_path / "reward_tests" / "pytest.ini").write_text("[pytest]\npythonpath = ..\n")
    (tmp_path / "reward_tests" / "test_solution.py").write_text(textwrap.dedent(REWARD_TESTS))
    (tmp_path / "repo" / "tests").mkdir(parents=True)
    (tmp_path / "repo" / "tests" / "test_solution.py").write_text(textwrap.dedent(REWARD_TESTS))
    scorer = scorer_from(tmp_path, """
        evals:
          - name: tests_pass
            kind: command
            command: python -I -m pytest -q -p no:cacheprovider -c tests/pytest.ini tests
            files: {tests: reward_tests}
            reward_from: pytest
    """)
    replies = [
        bash(write("solution.py", "def solve(n):\n    return 3")),  # right for 3, wrong for 4
        bash(write("tests/test_solution.py", "def test_everything():\n    pass")),
        bash(write("tests/conftest.py", CHEAT_CONFTEST)),
        bash(write("conftest.py", CHEAT_CONFTEST)),
        bash(write("pytest.ini", "[pytest]\naddopts = -p cheat\n") + "\n" + write("cheat.py", CHEAT_CONFTEST)),
        bash(write("pytest.py", "print('9 passed in 0.01s')")),
        bash(SUBMIT),
    ]
    episode = shell_episode(tmp_path, replies, scorer)
    assert episode.harness_error is None and episode.scorer_error is None, episode.scorer_error
    assert (episode.reward, episode.scorer_details["passed"], episode.scorer_details["failed"]) == (0.5, 1, 1)
    tests = tmp_path / "ws" / "ep-1" / "tests"
    assert sorted(p.name for p in tests.iterdir()) == ["pytest.ini", "test_solution.py"]
    assert (tests / "test_solution.py").read_text() == textwrap.dedent(REWARD_TESTS)


def sandboxed_trajectory(workspace: Path, sandbox, allowed: bool) -> Trajectory:
    from tracegym.harnesses.sandbox.eval_runner import SandboxRunner

    runner = SandboxRunner(lambda: sandbox, workspace, Limits(wall_seconds=30), unisolated_allowed=allowed)
    return Trajectory([{"role": "assistant", "content": "done"}], "done", workspace, runner=runner)


def test_a_junit_report_the_policy_planted_never_counts(tmp_path):
    need_bwrap()
    (tmp_path / "repo").mkdir()
    host_report = tmp_path / "host-report.xml"
    host_report.write_text('<testsuite tests="5" failures="0" errors="0" skipped="0"/>')
    scorer = scorer_from(tmp_path, """
        evals:
          - name: junit
            kind: command
            command: "true"
            reward_from: junit
            junit_xml: report.xml
    """)
    linked = shell_episode(tmp_path, [bash(f"ln -s {host_report} report.xml"), bash(SUBMIT)], scorer)
    assert linked.reward is None and "wrote no JUnit report" in linked.scorer_error
    assert host_report.read_text().startswith("<testsuite")
    (tmp_path / "again" / "repo").mkdir(parents=True)
    written = shell_episode(tmp_path / "again", [bash(f"cp {host_report} report.xml"), bash(SUBMIT)], scorer)
    assert written.reward is None and "wrote no JUnit report" in written.scorer_error


def test_a_junit_report_turned_into_a_link_while_scored_is_not_followed(tmp_path):
    need_bwrap()
    workspace = Workspaces(tmp_path / "runs").create("ep")
    scorer = scorer_from(tmp_path, """
        evals:
          - name: junit
            kind: command
            command: ln -s /etc/hostname report.xml
            reward_from: junit
            junit_xml: report.xml
    """)
    result = scorer.score(sandboxed_trajectory(workspace, BwrapSandbox(), allowed=False))
    assert result.reward is None and "symlink" in result.error


def test_reward_files_replace_a_planted_link_without_writing_through_it(tmp_path):
    need_bwrap()
    (tmp_path / "repo").mkdir()
    host_dir = tmp_path / "host-dir"
    host_dir.mkdir()
    (tmp_path / "reward_tests").mkdir()
    (tmp_path / "reward_tests" / "check.sh").write_text("test -f tests/check.sh\n")
    scorer = scorer_from(tmp_path, """
        evals:
          - name: fresh
            kind: command
            command: sh tests/check.sh
            files: {tests: reward_tests}
    """)
    episode = shell_episode(tmp_path, [bash(f"ln -s {host_dir} tests"), bash(SUBMIT)], scorer)
    assert episode.reward == 1.0, episode.scorer_error
    assert list(host_dir.iterdir()) == [] and not (tmp_path / "ws" / "ep-1" / "tests").is_symlink()


def test_the_sandboxed_command_reads_its_dump_and_answer_where_it_runs(tmp_path):
    need_bwrap()
    workspace = Workspaces(tmp_path / "runs").create("ep")
    check = ("python -c \"import json, os; t = json.load(open(os.environ['TRACEGYM_TRAJECTORY'])); "
             "raise SystemExit(0 if t['workspace'] == '/workspace' == os.getcwd() "
             "and os.environ['TRACEGYM_FINAL_ANSWER'] == 'done' else 1)\"")
    scorer = scorer_from(tmp_path, f"evals:\n  - name: c\n    kind: command\n    command: {json.dumps(check)}\n")
    result = scorer.score(sandboxed_trajectory(workspace, BwrapSandbox(), allowed=False))
    assert result.reward == 1.0, result.details
    assert not (workspace / ".tracegym-trajectory.json").exists()


def test_a_workspace_without_an_isolating_sandbox_is_refused_unless_accepted(tmp_path):
    workspace = Workspaces(tmp_path / "runs").create("ep")
    scorer = scorer_from(tmp_path, "evals:\n  - name: c\n    kind: command\n    command: touch ran\n")
    bare = Trajectory([{"role": "assistant", "content": "done"}], "done", workspace)
    with pytest.raises(ConfigError, match="no sandbox to confine it"):
        scorer.score(bare)
    with pytest.warns(SandboxIsolationWarning):
        unisolated = SubprocessSandbox()
    with pytest.raises(ConfigError, match="does not isolate it.*allow_unisolated: true"):
        scorer.score(sandboxed_trajectory(workspace, unisolated, allowed=False))
    assert not (workspace / "ran").exists()
    assert scorer.score(sandboxed_trajectory(workspace, unisolated, allowed=True)).reward == 1.0
    assert (workspace / "ran").exists()
    for section in ("shell", "proxy"):
        with pytest.raises(ValueError, match="allow_unisolated: true"):
            HarnessConfig.model_validate({section: {"sandbox": "subprocess"}})
        HarnessConfig.model_validate({section: {"sandbox": "subprocess", "allow_unisolated": True}})


# Finding 6: a Python under /tmp works in bubblewrap, and `auto` fails closed for the real reason ------------

def test_a_path_under_tmp_stays_visible_inside_bubblewrap(tmp_path):
    need_bwrap()
    assert str(tmp_path).startswith("/tmp/")
    data = tmp_path / "data"
    data.mkdir()
    (data / "file.txt").write_text("bound\n")
    workspace = Workspaces(tmp_path / "runs").create("ep")
    result = BwrapSandbox(ro_paths=[data]).run(f"cat {data}/file.txt", workspace, Limits(wall_seconds=30))
    assert (result.exit_code, result.stdout) == (0, "bound\n"), result.stderr


def test_a_virtualenv_under_tmp_passes_the_bubblewrap_probe(tmp_path):
    need_bwrap()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    source = Path(tracegym.__file__).resolve().parents[1]
    probe = "from tracegym.harnesses.sandbox import bwrap_problem; print(bwrap_problem())"
    done = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(source)}, check=True)
    assert done.stdout.strip() == "None", done.stdout


def test_auto_fails_closed_and_names_the_probes_real_failure(monkeypatch):
    reason = "bwrap: setting up uid map: Permission denied"
    monkeypatch.setattr(factory, "bwrap_problem", lambda: reason)
    with pytest.raises(SandboxError) as refused:
        make_sandbox("auto")
    assert reason in str(refused.value) and "allow_unisolated: true" in str(refused.value)
    assert "apt-get install" not in str(refused.value)
    with pytest.warns(SandboxIsolationWarning) as warned:
        fallback = make_sandbox("auto", allow_unisolated=True)
    assert fallback.kind == "subprocess"
    message = str(warned[0].message)
    assert reason in message and "Install bubblewrap" not in message


def test_a_shell_episode_fails_closed_when_bubblewrap_cannot_run_unless_accepted(tmp_path, monkeypatch):
    reason = "bwrap: setting up uid map: Permission denied"
    monkeypatch.setattr(factory, "bwrap_problem", lambda: reason)
    for folder in (tmp_path, tmp_path / "again"):
        (folder / "repo").mkdir(parents=True)
    refused = shell_episode(tmp_path, [bash("echo hi"), bash(SUBMIT)], None)
    assert refused.stop_reason == "harness_error" and reason in refused.harness_error
    with pytest.warns(SandboxIsolationWarning, match="uid map"):
        accepted = shell_episode(tmp_path / "again", [bash("echo hi"), bash(SUBMIT)], None, allow_unisolated=True)
    assert accepted.harness_error is None and accepted.metrics["sandbox"] == "subprocess"
