"""The generic mapping's `tools:` field, on a home-grown log made from the real τ-bench conversations."""

from __future__ import annotations

import json
from pathlib import Path

from tracegym.store import open_store
from tracegym.tasks.schemas import declared_tools

MAPPING = """\
id: run.id
messages: conversation
tools: run.functions
outcome: {path: reward, threshold: 1}
"""


def _schemas(traj: list[dict]) -> list[dict]:
    """OpenAI function schemas for the tools a conversation called, with the argument names it used."""
    found: dict[str, set[str]] = {}
    for message in traj:
        for call in message.get("tool_calls") or []:
            args = json.loads(call["function"]["arguments"])
            found.setdefault(call["function"]["name"], set()).update(args)
    return [{"type": "function", "function": {
        "name": name, "description": f"the airline's {name}",
        "parameters": {"type": "object", "properties": {a: {"type": "string"} for a in sorted(args)}}}}
        for name, args in sorted(found.items())]


def _tools(store_path: Path) -> dict[str, str | None]:
    with open_store(store_path, read_only=True) as st:
        return {r["trace_id"]: r["tools"] for r in st.query("SELECT trace_id, tools FROM traces")}


def test_generic_mapping_stores_tool_schemas_as_the_chat_formats_do(cli, traces_dir, tmp_path):
    runs = [r for r in json.loads((traces_dir / "tau-bench" / "gpt-4o-airline.json").read_text())
            if _schemas(r["traj"])][:6]
    log, chat = tmp_path / "agent_log.jsonl", tmp_path / "chat.jsonl"
    records = [{"run": {"id": f"t{r['task_id']}-{r['trial']}", "functions": _schemas(r["traj"])},
                "conversation": r["traj"], "reward": r["reward"]} for r in runs]
    records[-1]["run"]["functions"] = "get_reservation_details"  # not a list: this record alone is bad
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    chat.write_text("".join(json.dumps({"id": r["run"]["id"], "messages": r["conversation"],
                                        "tools": r["run"]["functions"]}) + "\n" for r in records[:-1]))
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text(MAPPING)

    generic_store, chat_store = tmp_path / "generic.duckdb", tmp_path / "chat.duckdb"
    result = cli("ingest", "--format", "generic", "--mapping", mapping, log, "--store", generic_store, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["traces"] == 5 and json.loads(result.stdout)["errors"] == 1
    with open_store(generic_store, read_only=True) as st:
        (error,) = st.query("SELECT locator, error FROM ingest_errors")
    assert error["locator"] == "line 6" and "run.functions must be a list" in error["error"]
    assert cli("ingest", "--format", "openai-chat", chat, "--store", chat_store).exit_code == 0

    stored = _tools(generic_store)
    assert stored == _tools(chat_store)  # the same JSON text the OpenAI-chat adapter stores
    for record in records[:-1]:
        tools = declared_tools(json.loads(stored[record["run"]["id"]]))
        assert [t.name for t in tools] == [s["function"]["name"] for s in record["run"]["functions"]]
        assert all(t.source == "declared" and t.description.startswith("the airline's") for t in tools)
    assert any(len(json.loads(t)) > 1 for t in stored.values())
