"""Issue 24, finding 8: a trace id cannot write YAML into a generated task file, nor stop its task set.

The task template quotes the trace id in a header comment; a line break in it used to end the comment and start
a key of its own, and a control character made the file unreadable, either of which aborted the whole set.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tracegym.store import open_store
from tracegym.tasks import load_task_set

ODD_IDS = [
    "conv-weather-1\nevil_key: 1",
    "conv-weather-1\r\nevil_key: 2",
    "conv-weather-1\u2028evil_key: 3",
    "conv-weather-1\x85evil_key: 4",
    "conv-weather-1 # not a comment",
    "conv-weather-1: not a key",
    "conv-weather-1\x1b]0;title\x07",
    "conv-weather-1\u202eevil",
    "conv-weather-1-" + "x" * 5000,
    "conv-weather-1",
]
KEYS = {"spec_version", "task_id", "split", "harness", "prompt", "scorer", "provenance", "tools", "replay",
        "metadata"}
EVALS = ("version: 1\nevals:\n  - name: recorded\n    kind: label\n    score: reward\n"
         "    applies_to: {formats: [openai-chat]}\n")


def _weather_traces(fixtures_dir: Path, path: Path, ids: list[str], question: str | None = None) -> Path:
    """The fixture's weather conversation (one failed tool call) once per id; each copy's task data differs in a
    word (numbers and ids alone would not tell it apart), so that none is merged into another as a near-duplicate."""
    record = json.loads((fixtures_dir / "openai-chat" / "conversations.jsonl").read_text().splitlines()[0])
    if question is not None:
        record["messages"][1]["content"] = question
    lines = [json.dumps({**record, "id": trace_id,
                         "metadata": {**record["metadata"], "customer": f"customer {chr(ord('a') + i)}"}})
             for i, trace_id in enumerate(ids)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _generate(cli, traces: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Ingest, mine and generate a task set from the top cluster; (store, task-set folder)."""
    store, out, evals = tmp_path / "store.duckdb", tmp_path / "set", tmp_path / "evals.yaml"
    evals.write_text(EVALS)
    for args in (("ingest", traces), ("mine", "failures"),
                 ("tasks", "generate", "--allow-unredacted", "--no-gates", "--evals", evals, "--out", out,
                  "--top", "1")):
        result = cli(*args, "--store", store)
        assert result.exit_code == 0, result.output
    return store, out


def test_odd_trace_ids_stay_data_and_every_task_is_written(cli, fixtures_dir, tmp_path):
    store, out = _generate(cli, _weather_traces(fixtures_dir, tmp_path / "odd.jsonl", ODD_IDS), tmp_path)
    files = sorted((out / "tasks").glob("*.yaml"))
    assert len(files) == len(ODD_IDS)
    ids = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
        assert set(data) == KEYS, path.name
        header = text[: text.index("spec_version:")].splitlines()
        assert len(header) == 3 and all(line.startswith("# ") for line in header), header
        ids.append(data["provenance"]["trace_id"])
    assert sorted(ids) == sorted(ODD_IDS)
    assert sorted(t.provenance.trace_id for t in load_task_set(out).tasks) == sorted(ODD_IDS)
    with open_store(store, read_only=True) as st:
        registered = [r["source_trace_id"] for r in st.query("SELECT source_trace_id FROM tasks")]
    assert sorted(registered) == sorted(ODD_IDS)


def test_a_message_ending_in_blank_lines_keeps_its_task_file_one_document(cli, fixtures_dir, tmp_path):
    """YAML writes such text as a kept block (`|+`) and then ends the document (`...`), which cut the task file
    in two and aborted the set."""
    question = "What's the weather in Paris and in Atlantis?\n\n"
    traces = _weather_traces(fixtures_dir, tmp_path / "blank.jsonl", ["blank-1", "blank-2"], question)
    _, out = _generate(cli, traces, tmp_path)
    tasks = load_task_set(out).tasks
    assert len(tasks) == 2 and all(t.prompt.messages[-1].content == question for t in tasks)
