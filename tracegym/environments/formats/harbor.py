"""Harbor: one task directory per shell or proxy task, in Harbor's task format.

    DIR/<task>/task.toml               [task] name, [metadata] (task set, task and cluster ids), [verifier], [agent],
                                       [environment] (Harbor's TaskConfig, schema 1.1)
    DIR/<task>/instruction.md          the task's conversation up to the agent's turn, and where to leave the reply
    DIR/<task>/environment/Dockerfile  the container the agent works in (/app), with the shell template's files
    DIR/<task>/tests/test.sh           Harbor's verifier entry: the task's tracegym scorer on the container's final
                                       state (`tracegym.environments.harbor_verifier`), reward in /logs/verifier
    DIR/<task>/tests/tracegym_data/    the tasks and evals the verifier scores with; tests/task.json, its task id
    DIR/<task>/solution/solve.sh       the reference the reward gates played (for Harbor's oracle agent), when known
    DIR/tracegym_data/                 the export's data and manifest (`tracegym.environments.bundle`)

Harbor's verifier sees the container, not the conversation, so a task fits when its reward judges what the agent
did to the workspace (command evals) or its final reply (match, judge and python evals, on answer.md). Left out,
and counted in the command's output: tasks of the chat, tools and replay harnesses (their tool answers come from
tracegym's harness, which a Harbor agent cannot call: export them to verifiers or OpenEnv), and tasks whose evals
read the calls or steps of the conversation (tool_calls, reference) or the store (label).
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

from tracegym.environments.bundle import EXPORT_MANIFEST, SHELL_TEMPLATE, ExportManifest
from tracegym.environments.harbor_verifier import ANSWER, DATA, TASK_FILE
from tracegym.environments.registry import ExportJob
from tracegym.environments.row import ExportRow
from tracegym.errors import ExportError
from tracegym.evals.scorers.config import EvalsFile, load_evals

FORMAT = "harbor"
SUMMARY = "Harbor task directories for shell and proxy tasks (harbor run -p DIR/TASK)"
HARNESSES = ("shell", "proxy")
UNFIT_EVALS = {"tool_calls": "reads the conversation's tool calls", "reference": "reads the conversation's steps",
               "label": "reads a production score from the store"}
VERIFIER_TIMEOUT_S = 600.0
AGENT_TIMEOUT_S = 1800.0

TASK_TOML = """schema_version = "1.1"

[task]
name = "tracegym/{slug}"
description = "tracegym task {task_id} of task set {task_set} (cluster {cluster_id})"
keywords = ["tracegym", "{harness}"]

[metadata]
tracegym_version = "{version}"
task_set = "{task_set}"
task_id = "{task_id}"
cluster_id = "{cluster_id}"
harness = "{harness}"
split = "{split}"

[verifier]
timeout_sec = {verifier_timeout}

[agent]
timeout_sec = {agent_timeout}

[environment]
build_timeout_sec = 600.0
cpus = 1
memory_mb = 2048
storage_mb = 10240
allow_internet = true
"""

DOCKERFILE = """# The workspace of tracegym task {task_id} (written by `tracegym tasks export --to harbor`).
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*
WORKDIR /app
{copy}"""

TEST_SH = """#!/bin/bash
# Harbor's verifier for tracegym task {task_id}: the task's tracegym scorer on the state the agent left /app in
# (written by `tracegym tasks export --to harbor`). No reward file and exit 1 when it cannot score.
set -euo pipefail
TESTS="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
OUT="${{TRACEGYM_VERIFIER_DIR:-/logs/verifier}}"
if ! python3 -c "import tracegym" 2>/dev/null; then
    python3 -m pip install --quiet "tracegym=={version}"
fi
python3 -m tracegym.environments.harbor_verifier --tests "$TESTS" --workspace "${{TRACEGYM_WORKSPACE:-/app}}" \\
    --out "$OUT"
"""

INSTRUCTION = """{conversation}

---

Work in `/app`. When you are done, write your final reply to the user in `/app/{answer}`.
"""


def export(job: ExportJob, out: Path) -> dict[str, str]:
    manifest = job.write_data(out / DATA)
    evals: dict[str, EvalsFile] = {}
    kept, left_out = [], []
    for row in job.rows:
        why = _unfit(row, out / DATA / "task_set", evals)
        if why is None:
            kept.append(row)
        else:
            left_out.append(f"{row.task_id}: {why}")
    if not kept:
        reasons = Counter(why.split(": ", 1)[1] for why in left_out)
        summary = "; ".join(f"{n} task{'s' if n > 1 else ''}: {why}" for why, n in reasons.most_common())
        raise ExportError(f"No task of {manifest.task_set} fits Harbor's task format ({summary}). "
                          "Fix: export shell or proxy tasks whose evals judge the workspace or the final reply; "
                          "export the others with --to verifiers or --to openenv.")
    for row in kept:
        _task_dir(out / _slug(row.task_id), row, manifest)
    return {"tasks": f"{len(kept)} task directories (harbor run -p DIR/TASK)",
            "left_out": "; ".join(left_out) if left_out else "none"}


def _unfit(row: ExportRow, task_set: Path, evals: dict[str, EvalsFile]) -> str | None:
    """Why the task cannot be a Harbor task; None when it can."""
    if row.harness not in HARNESSES:
        return f"{row.harness} harness (Harbor fits shell and proxy tasks)"
    path = task_set / row.scorer.evals_file
    if path not in evals:
        evals[path] = load_evals(path)
    pending, seen = list(row.scorer.evals), set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        spec = evals[path].get(name)
        if spec.kind in UNFIT_EVALS:
            return f"eval {name} ({spec.kind}) {UNFIT_EVALS[spec.kind]}, which Harbor's verifier cannot see"
        pending += list(getattr(spec, "parts", {}) or {})
    return None


def _slug(task_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", task_id).strip("-.") or "task"


def _task_dir(folder: Path, row: ExportRow, manifest: ExportManifest) -> None:
    values = {"slug": _slug(row.task_id), "task_id": row.task_id, "task_set": manifest.task_set,
              "cluster_id": row.cluster_id or "", "harness": row.harness, "split": row.split,
              "version": manifest.tracegym_version, "verifier_timeout": VERIFIER_TIMEOUT_S,
              "agent_timeout": AGENT_TIMEOUT_S, "answer": ANSWER}
    (folder / "environment").mkdir(parents=True)
    copy = _copy_template(folder.parent / DATA, folder / "environment")
    (folder / "task.toml").write_text(TASK_TOML.format(**values), encoding="utf-8")
    (folder / "instruction.md").write_text(INSTRUCTION.format(conversation=_conversation(row), **values),
                                           encoding="utf-8")
    (folder / "environment" / "Dockerfile").write_text(DOCKERFILE.format(copy=copy, **values), encoding="utf-8")
    tests = folder / "tests"
    shutil.copytree(folder.parent / DATA, tests / DATA, ignore=shutil.ignore_patterns(EXPORT_MANIFEST,
                                                                                     SHELL_TEMPLATE))
    (tests / TASK_FILE).write_text(json.dumps({"task_id": row.task_id, "task_set": manifest.task_set,
                                               "tracegym_version": manifest.tracegym_version}, indent=2) + "\n",
                                   encoding="utf-8")
    test_sh = tests / "test.sh"
    test_sh.write_text(TEST_SH.format(**values), encoding="utf-8")
    test_sh.chmod(0o755)
    solution = _solution(row)
    if solution is not None:
        (folder / "solution").mkdir()
        solve = folder / "solution" / "solve.sh"
        solve.write_text(solution, encoding="utf-8")
        solve.chmod(0o755)


def _copy_template(data: Path, environment: Path) -> str:
    """The shell's workspace template (carried by the export's data) beside the Dockerfile; the COPY line that puts
    it in /app."""
    source = data / SHELL_TEMPLATE
    if not source.is_dir():
        return ""
    shutil.copytree(source, environment / "workspace")
    return "COPY workspace/ /app/\n"


def _conversation(row: ExportRow) -> str:
    """The prompt as markdown: each message under its role; the last user message is the request."""
    parts = []
    for message in row.prompt:
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if text:
            parts.append(f"## {message.get('role')}\n\n{text}")
    return "\n\n".join(parts)


def _solution(row: ExportRow) -> str | None:
    """solve.sh: the reference's bash blocks, then its final reply written where the verifier reads it."""
    if not row.reference:
        return None
    commands, final = [], ""
    for reply in row.reference:
        text = str(reply.get("content") or "")
        commands += re.findall(r"```(?:bash|sh)\n(.*?)```", text, re.DOTALL)
        final = text
    body = "".join(c if c.endswith("\n") else c + "\n" for c in commands)
    return ("#!/bin/bash\n# The reference reply the reward gates played (written by `tracegym tasks export`).\n"
            f'set -e\ncd "${{TRACEGYM_WORKSPACE:-/app}}"\n{body}'
            f"cat > {ANSWER} <<'TRACEGYM_ANSWER'\n{final}\nTRACEGYM_ANSWER\n")
