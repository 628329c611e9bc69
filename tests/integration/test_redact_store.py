"""Redaction end to end on τ-bench traces with planted secrets and personal data: `ingest --redact`,
`redact check`, `tracegym redact` over a stored store, the refusal of tasks generate, and replay on
redacted tasks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tracegym.harnesses.base import Reply
from tracegym.harnesses.replay import ReplayConfig, ReplayHarness
from tracegym.redact.planted import Planted, plant
from tracegym.store import open_store
from tracegym.tasks.taskset import load_task_set

EVALS = Path(__file__).resolve().parents[2] / "examples" / "evals.yaml"


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Planted]]:
    from tests.conftest import TRACES

    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES}")
    folder = tmp_path_factory.mktemp("planted")
    return folder / "tau-bench", plant(TRACES / "tau-bench", folder / "tau-bench", per_kind=12, seed=1)


def _store_text(store: Path) -> str:
    with open_store(store, read_only=True) as st:
        rows = st.con.execute(
            "SELECT content FROM messages WHERE content IS NOT NULL UNION ALL SELECT CAST(arguments AS VARCHAR) "
            "FROM tool_calls UNION ALL SELECT result FROM tool_calls WHERE result IS NOT NULL UNION ALL "
            "SELECT CAST(metadata AS VARCHAR) FROM traces").fetchall()
    return "\x00".join(r for (r,) in rows)


def _left(text: str, planted: list[Planted]) -> list[Planted]:
    """The planted values of which a line (6+ letters or digits) is still in `text`, raw or JSON-escaped."""
    def parts(p: Planted) -> list[str]:
        return [ln.strip() for ln in p.secret.splitlines() if sum(c.isalnum() for c in ln) >= 6
                and "PRIVATE KEY" not in ln]
    return [p for p in planted if any(f in text or json.dumps(f)[1:-1] in text for f in parts(p))]


@pytest.mark.slow  # plants secrets in τ-bench, ingests with --redact, checks the store
def test_ingest_redact_leaves_nothing_a_check_finds_and_keeps_tool_calls_json(cli, planted, tmp_path):
    folder, values = planted
    store = tmp_path / "store.duckdb"
    assert len(values) == 12 * 19
    result = cli("ingest", folder, "--redact", "--store", store, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["redaction"]
    assert report["findings"] >= len(values) and {r["rule"] for r in report["by_rule"]} >= {"card", "iban", "jwt"}
    assert cli("redact", "check", "--store", store).exit_code == 0
    assert _left(_store_text(store), values) == []
    with open_store(store, read_only=True) as st:
        for (arguments,) in st.con.execute("SELECT CAST(arguments AS VARCHAR) FROM tool_calls").fetchall():
            json.loads(arguments)
        assert st.scalar("SELECT count(*) FROM redacted_sources") == 1


@pytest.mark.slow  # ingests, mines, generates tasks three times, redacts in place
def test_an_unredacted_store_is_refused_until_redacted_in_place(cli, planted, tmp_path):
    folder, values = planted
    store = tmp_path / "store.duckdb"
    assert cli("ingest", folder, "--store", store).exit_code == 0
    assert len(_left(_store_text(store), values)) == len(values)
    check = cli("redact", "check", "--store", store, "--json")
    assert check.exit_code == 1 and json.loads(check.stdout)["findings"] > len(values)
    assert cli("mine", "failures", "--store", store).exit_code == 0
    generate = ("tasks", "generate", "--evals", EVALS, "--top", "1", "--store", store)
    refused = cli(*generate, "--out", tmp_path / "refused")
    assert refused.exit_code == 2 and "--allow-unredacted" in refused.stderr
    assert not (tmp_path / "refused").exists()
    before = cli(*generate, "--out", tmp_path / "tasks", "--allow-unredacted")
    assert before.exit_code == 0, before.output
    assert cli("redact", "check", "--tasks", tmp_path / "tasks").exit_code == 1

    redacted = cli("redact", "--store", store, "--json")
    assert redacted.exit_code == 0, redacted.output
    assert json.loads(redacted.stdout)["findings"] >= len(values)
    assert _left(_store_text(store), values) == []
    assert cli("redact", "check", "--store", store).exit_code == 0
    assert cli("redact", "check", "--tasks", tmp_path / "tasks").exit_code == 0
    files = "\n".join(p.read_text() for p in (tmp_path / "tasks").rglob("*") if p.is_file())
    assert _left(files, values) == []  # a rejected task's YAML folds long values: none is cut and left
    load_task_set(tmp_path / "tasks")  # the rewritten files still load and match the manifest
    assert cli(*generate, "--out", tmp_path / "after").exit_code == 0


def test_replay_matches_calls_that_use_the_placeholders_of_a_redacted_task(cli, tmp_path):
    from tests.conftest import TRACES

    store = tmp_path / "store.duckdb"
    assert cli("ingest", TRACES / "tau-bench", "--redact", "--store", store).exit_code == 0
    assert cli("mine", "failures", "--store", store).exit_code == 0
    out = tmp_path / "tasks"
    assert cli("tasks", "generate", "--evals", EVALS, "--top", "2", "--out", out, "--store", store).exit_code == 0
    tasks = [t for t in load_task_set(out).tasks if t.harness == "replay"]
    hits = 0
    for task in tasks:
        for call in task.replay:
            if call.message_idx < task.provenance.cut_message_idx or "<DOB_" not in json.dumps(call.arguments):
                continue
            harness = ReplayHarness(ReplayConfig())
            asyncio.run(harness.reset(task))
            text = f'<tool_call>\n{json.dumps({"name": call.name, "arguments": call.arguments})}\n</tool_call>'
            step = asyncio.run(harness.step(Reply(text, "stop", 0)))
            assert step.observations[0]["content"] == call.result
            hits += 1
            break
    assert hits > 0, "no redacted task with a placeholder in a recorded call after its cut"


@pytest.mark.slow  # runs `tracegym quickstart`
def test_quickstart_redacts_its_store_even_one_made_before_it_redacted(cli, planted, tmp_path):
    from tracegym.commands.quickstart import _prepare

    folder, values = planted
    store = tmp_path / "store.duckdb"
    assert cli("ingest", folder, "--store", store).exit_code == 0  # an older quickstart's store, unredacted
    task_set = _prepare([folder], tmp_path / "work", store)
    assert _left(_store_text(store), values) == []
    assert cli("redact", "check", "--store", store).exit_code == 0
    assert cli("redact", "check", "--tasks", task_set).exit_code == 0


def _conversations(cases: list[tuple[str, str, str]]) -> list[dict[str, object]]:
    """One OpenAI-style conversation per value and place: a user turn, a tool call's arguments, a tool's result,
    the trace's metadata."""
    out: list[dict[str, object]] = []
    for n, (_rule, text, _value) in enumerate(cases):
        for place in ("message", "arguments", "result", "metadata"):
            call = {"id": f"call_{n}_{place}", "type": "function", "function": {
                "name": "run_shell", "arguments": json.dumps({"cmd": text if place == "arguments" else "env"})}}
            out.append({"id": f"conv-{n}-{place}", "metadata": {"note": text if place == "metadata" else "ok"},
                        "messages": [
                            {"role": "user", "content": text if place == "message" else "Please check the env."},
                            {"role": "assistant", "content": None, "tool_calls": [call]},
                            {"role": "tool", "tool_call_id": call["id"],
                             "content": text if place == "result" else "done"},
                            {"role": "assistant", "content": "Checked."}]})
    return out


@pytest.mark.slow  # ingests a file, checks, redacts in place and checks again through the CLI
def test_every_format_fails_the_check_in_every_place_and_passes_after_redact(cli, tmp_path):
    from tests.unit.test_redact_formats import CASES

    log = tmp_path / "chat.jsonl"
    log.write_text("".join(json.dumps(c) + "\n" for c in _conversations(CASES)), encoding="utf-8")
    store = tmp_path / "store.duckdb"
    assert cli("ingest", log, "--store", store).exit_code == 0
    check = cli("redact", "check", "--store", store, "--json")
    assert check.exit_code == 1
    hits = json.loads(check.stdout)
    assert hits["findings"] >= 4 * len(CASES)
    assert {rule for rule, _, _ in CASES} <= {h["rule"] for h in hits["hits"]}

    assert cli("redact", "--store", store).exit_code == 0
    assert cli("redact", "check", "--store", store).exit_code == 0
    text = _store_text(store)
    assert [v for _, _, v in CASES if v in text or json.dumps(v)[1:-1] in text] == []
    with open_store(store, read_only=True) as st:
        for (arguments,) in st.con.execute("SELECT CAST(arguments AS VARCHAR) FROM tool_calls").fetchall():
            json.loads(arguments)
