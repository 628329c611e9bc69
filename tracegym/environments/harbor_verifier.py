"""The verifier of a Harbor task exported by tracegym: the task's tracegym scorer on what the agent left behind.

Harbor runs `tests/test.sh` in the task's container once the agent is done; the script runs

    python3 -m tracegym.environments.harbor_verifier --tests /tests --workspace /app --out /logs/verifier

which scores the task as tracegym's shell harness scores an episode: command evals run in the workspace (the
container is the sandbox: the command runs there, unisolated), and evals of the reply read the agent's final reply
from `answer.md` in the workspace (the instruction asks for it; it is moved out of the workspace before any command
eval runs). The reward goes to `reward.txt`, the scorer's details to `details.json`. A task whose reward cannot be
computed (an eval that fails, another tracegym version) gets no reward file and exit code 1, so Harbor records a
verifier error rather than a silent 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import tracegym
from tracegym.evals.scorers.trajectory import ScoreResult
from tracegym.harnesses.sandbox import Limits
from tracegym.harnesses.sandbox.eval_runner import SandboxRunner
from tracegym.harnesses.sandbox.factory import make_sandbox
from tracegym.tasks.taskset import load_task_set

ANSWER = "answer.md"
"""Where the agent leaves its final reply, relative to the workspace."""
TASK_FILE = "task.json"
"""Beside the data in tests/: the task's id and the tracegym version its reward needs."""
DATA = "tracegym_data"


def score_workspace(tests: Path, workspace: Path) -> ScoreResult:
    """The task's reward for the state the agent left `workspace` in."""
    task = json.loads((tests / TASK_FILE).read_text(encoding="utf-8"))
    if task["tracegym_version"] != tracegym.__version__:
        return ScoreResult.failed(f"this task was exported with tracegym {task['tracegym_version']} and is scored with "
                                  f"{tracegym.__version__}: its reward could differ. Fix: pip install "
                                  f"tracegym=={task['tracegym_version']} in the task's environment.")
    task_set = load_task_set(tests / DATA / "task_set")
    spec = next(t for t in task_set.tasks if t.task_id == task["task_id"])
    answer_file = workspace / ANSWER
    answer = answer_file.read_text(encoding="utf-8", errors="replace") if answer_file.is_file() else ""
    if answer_file.is_file():
        answer_file.replace(tests / ANSWER)  # out of the workspace the command evals judge
    sandbox = make_sandbox("auto", allow_unisolated=True)
    runner = SandboxRunner(lambda: sandbox, workspace, Limits(), True)
    trajectory = spec.trajectory([{"role": "assistant", "content": answer}], workspace, 0, runner)
    return task_set.scorer(spec).score(trajectory)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=Path, required=True, help="The task's tests/ folder.")
    parser.add_argument("--workspace", type=Path, required=True, help="The folder the agent worked in.")
    parser.add_argument("--out", type=Path, required=True, help="Where reward.txt and details.json go.")
    args = parser.parse_args(argv)
    result = score_workspace(args.tests, args.workspace)
    args.out.mkdir(parents=True, exist_ok=True)
    details = {"reward": result.reward, "error": result.error, "details": dict(result.details)}
    (args.out / "details.json").write_text(json.dumps(details, default=str, indent=2), encoding="utf-8")
    if result.reward is None or result.error:
        print(f"tracegym: no reward: {result.error}", file=sys.stderr)
        return 1
    (args.out / "reward.txt").write_text(f"{result.reward}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
