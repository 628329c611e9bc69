"""OpenAI Chat, OpenAI Responses, Anthropic Messages, τ²-bench and generic-mapping adapters, through the store.

Fixtures under tests/fixtures/<format>/ were written from each format's public
schema (each adapter's docstring names its source); τ-bench is the real file.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tracegym.errors import ConfigError
from tracegym.ingest.adapters.anthropic import AnthropicAdapter
from tracegym.ingest.adapters.base import SourceFile
from tracegym.ingest.pipeline import detect, ingest_paths
from tracegym.ingest.reading import take_sample
from tracegym.ingest.records import RawRecord
from tracegym.store import Store


def q(store: Store, sql: str, params: list[Any] | None = None) -> list[tuple]:
    return store.con.execute(sql, params or []).fetchall()


def ingest(store: Store, *paths: Path, **kw: Any) -> dict[str, Any]:
    return ingest_paths(store, [str(p) for p in paths], **kw).to_dict()


def calls(store: Store, trace_id: str) -> dict[str, tuple]:
    """call_id -> (name, arguments, result, result_message_idx, is_error)."""
    rows = q(store, "SELECT call_id, name, arguments, result, result_message_idx, is_error FROM tool_calls "
                    "WHERE trace_id = ?", [trace_id])
    return {r[0]: (r[1], json.loads(r[2]), r[3], r[4], r[5]) for r in rows}


def messages(store: Store, trace_id: str) -> list[tuple]:
    return q(store, "SELECT role, content, tool_call_id, input_tokens, output_tokens FROM messages "
                    "WHERE trace_id = ? ORDER BY idx", [trace_id])


def trace(store: Store, trace_id: str) -> dict[str, Any]:
    cur = store.con.execute("SELECT * FROM traces WHERE trace_id = ?", [trace_id])
    cols = [d[0] for d in cur.description]
    row = dict(zip(cols, cur.fetchone(), strict=True))
    row["metadata"] = json.loads(row["metadata"])
    return row


def as_json_document(jsonl: Path, out: Path) -> Path:
    out.write_text(json.dumps([json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()], indent=1))
    return out


def stored_rows(store: Store) -> dict[str, list[tuple]]:
    """Everything but the per-file columns, to compare a JSONL file with its JSON twin."""
    return {
        "traces": sorted(q(store, "SELECT trace_id, model, session_id, outcome, n_messages, metadata::VARCHAR, "
                                  "tools::VARCHAR FROM traces")),
        "messages": sorted(q(store, "SELECT * FROM messages"), key=repr),
        "tool_calls": sorted(q(store, "SELECT * FROM tool_calls"), key=repr),
    }


# --- detection --------------------------------------------------------------------------------------------

DETECTED = {
    "openai-chat/conversations.jsonl": "openai-chat",
    "openai-chat/proxy_log.jsonl": "openai-chat",
    "openai-chat/conversation.json": "openai-chat",
    "openai-responses/responses.jsonl": "openai-responses",
    "openai-responses/items.json": "openai-responses",
    "anthropic/messages.jsonl": "anthropic-messages",
    "anthropic/conversations.json": "anthropic-messages",
    "tau2-bench/results.json": "tau2-bench",
    "tau2-bench/no_simulations.json": "tau2-bench",
}


@pytest.mark.parametrize("name", sorted(DETECTED))
def test_detection_picks_the_format(fixtures_dir: Path, name: str) -> None:
    path = fixtures_dir / name
    adapter = detect(path, take_sample(path))
    assert adapter is not None and adapter.name == DETECTED[name]


def test_detection_keeps_tau_bench_for_its_real_file(traces_dir: Path) -> None:
    # τ-bench's `traj` is itself a chat message list: the τ-bench adapter must still win.
    path = traces_dir / "tau-bench" / "gpt-4o-airline.json"
    assert detect(path, take_sample(path)).name == "tau-bench"


def test_openai_calls_beside_a_top_level_system_are_not_read_as_anthropic(store: Store, tmp_path: Path) -> None:
    line = {"id": "mixed", "system": "be brief", "messages": [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Error: nope"}]}
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert detect(path, take_sample(path)).name == "openai-chat"
    ingest(store, path)
    assert calls(store, "mixed")["c1"][3:] == (1, True)
    with pytest.raises(ValueError, match="OpenAI-style tool_calls"):  # forced through the Anthropic reader
        list(AnthropicAdapter().to_traces(RawRecord("line 1", line), SourceFile(path, "x", take_sample(path))))


def test_generic_is_never_detected(fixtures_dir: Path) -> None:
    path = fixtures_dir / "generic" / "agent_log.jsonl"
    assert detect(path, take_sample(path)) is None


# --- OpenAI Chat Completions ------------------------------------------------------------------------------


def test_chat_conversations_link_calls_and_flag_errors(store: Store, fixtures_dir: Path) -> None:
    summary = ingest(store, fixtures_dir / "openai-chat" / "conversations.jsonl")
    assert (summary["traces"], summary["errors"]) == (3, 0)

    weather = trace(store, "conv-weather-1")
    assert (weather["model"], weather["session_id"], weather["outcome"]) == ("gpt-4o-2024-08-06", "sess-42", None)
    assert weather["metadata"] == {"session_id": "sess-42", "customer": "acme"}
    assert json.loads(weather["tools"])[0]["function"]["name"] == "get_weather"
    assert calls(store, "conv-weather-1") == {
        "call_paris": ("get_weather", {"city": "Paris"}, '{"temp_c": 18, "sky": "cloudy"}', 3, False),
        "call_atlantis": ("get_weather", {"city": "Atlantis"}, "Error: city 'Atlantis' not found", 4, True),
    }

    code = messages(store, "conv-code-2")
    assert [m[0] for m in code] == ["system", "user", "assistant", "tool", "assistant"]  # developer -> system
    assert code[1][1] == "Compute 1/0 for me." and code[4][1] == "I can't divide by zero."  # parts, refusal
    assert calls(store, "conv-code-2")["call_py"][4] is True  # a traceback is an error

    (bare,) = q(store, "SELECT trace_id FROM traces WHERE trace_id LIKE 'openai-chat:%'")
    assert [m[:2] for m in messages(store, bare[0])] == [("user", "ping"), ("assistant", "pong")]


def test_chat_json_and_jsonl_store_the_same_rows(tmp_path: Path, fixtures_dir: Path) -> None:
    from tracegym.store import open_store

    for name, n in (("conversations.jsonl", 3), ("proxy_log.jsonl", 2)):
        jsonl = fixtures_dir / "openai-chat" / name
        with open_store(tmp_path / f"{name}.l.duckdb") as a, open_store(tmp_path / f"{name}.j.duckdb") as b:
            ingest(a, jsonl)
            ingest(b, as_json_document(jsonl, tmp_path / f"{name}.json"))
            assert stored_rows(a) == stored_rows(b)
            assert len(stored_rows(a)["traces"]) == n


def test_a_bare_message_list_document_is_one_conversation(store: Store, fixtures_dir: Path) -> None:
    ingest(store, fixtures_dir / "openai-chat" / "conversation.json")
    (trace_id,) = q(store, "SELECT trace_id FROM traces")[0]
    assert trace_id.startswith("openai-chat:")
    assert [c[4] for c in calls(store, trace_id).values()] == [False, True]
    ingest(store, fixtures_dir / "openai-chat" / "conversation.json")  # same file: nothing new
    assert q(store, "SELECT count(*) FROM traces") == [(1,)]


def test_request_response_pairs_carry_usage_time_and_model(store: Store, fixtures_dir: Path) -> None:
    summary = ingest(store, fixtures_dir / "openai-chat" / "proxy_log.jsonl")
    assert (summary["traces"], summary["errors"]) == (2, 0)  # the first two calls are one conversation

    first = trace(store, "chatcmpl-AbC123")
    assert (first["model"], first["session_id"]) == ("gpt-4o-2024-08-06", "conv-orders-7")
    assert (first["started_at"], first["ended_at"]) == (datetime(2024, 9, 22, 10, 13, 20),
                                                        datetime(2024, 9, 22, 10, 13, 23))
    assert first["metadata"]["user"] == "user-123" and first["metadata"]["finish_reason"] == "stop"
    assert first["metadata"]["call_ids"] == ["chatcmpl-AbC123", "chatcmpl-AbC124"]
    conversation = messages(store, "chatcmpl-AbC123")
    assert [m[0] for m in conversation] == ["system", "user", "assistant", "tool", "assistant"]
    assert [m[3:] for m in conversation if m[0] == "assistant"] == [(120, 18), (171, 15)]  # each from its call
    assert calls(store, "chatcmpl-AbC123")["call_order"][2:] == ('{"status": "shipped", "eta": "2024-09-25"}', 3,
                                                                 False)

    (failed,) = q(store, "SELECT trace_id FROM traces WHERE trace_id LIKE 'openai-chat:%'")
    assert trace(store, failed[0])["metadata"]["error"]["code"] == "context_length_exceeded"


# --- OpenAI Responses -------------------------------------------------------------------------------------


def test_responses_items_calls_outputs_and_usage(store: Store, fixtures_dir: Path) -> None:
    summary = ingest(store, fixtures_dir / "openai-responses" / "responses.jsonl")
    assert (summary["traces"], summary["errors"]) == (4, 0)

    first = trace(store, "resp_001")
    assert (first["model"], first["session_id"]) == ("gpt-4.1-2025-04-14", "conv_orders")
    assert first["started_at"] == datetime(2024, 9, 22, 10, 13, 20)
    assert first["ended_at"] == datetime(2024, 9, 22, 10, 13, 22)
    assert first["metadata"]["skipped_items"] == {"reasoning": 1}
    assert [m[0] for m in messages(store, "resp_001")] == ["system", "user", "assistant"]
    usage = "SELECT input_tokens, output_tokens, latency_ms FROM messages WHERE trace_id = 'resp_001' AND idx = 2"
    assert q(store, usage) == [(90, 22, 2000.0)]
    assert calls(store, "resp_001")["call_A17"][:2] == ("lookup_order", {"order_id": "A-17"})

    assert trace(store, "resp_002")["metadata"]["previous_response_id"] == "resp_001"
    tools = calls(store, "resp_101")
    assert tools["call_tests"][3:] == (3, True)  # a function_call_output with a traceback
    assert tools["mcp_101"][2:] == ("MCP server 'docs' is unavailable", 5, True)  # an mcp_call's error
    assert trace(store, "resp_201")["metadata"]["incomplete_details"] == {"reason": "max_output_tokens"}


def test_responses_item_list_document(store: Store, fixtures_dir: Path) -> None:
    ingest(store, fixtures_dir / "openai-responses" / "items.json")
    (trace_id,) = q(store, "SELECT trace_id FROM traces")[0]
    assert [m[0] for m in messages(store, trace_id)] == ["user", "assistant", "tool", "assistant"]
    assert calls(store, trace_id)["call_book"][1:4] == ({"people": 2, "time": "19:00"}, '{"confirmation": "T-88"}', 2)


# --- Anthropic Messages -----------------------------------------------------------------------------------


def test_anthropic_blocks_tool_use_and_is_error(store: Store, fixtures_dir: Path) -> None:
    summary = ingest(store, fixtures_dir / "anthropic" / "messages.jsonl")
    assert (summary["traces"], summary["errors"]) == (3, 0)  # the first two calls are one conversation

    first = trace(store, "msg_01AaBbCc")
    assert (first["model"], first["metadata"]["stop_reason"]) == ("claude-sonnet-4-5-20250929", "end_turn")
    assert first["metadata"]["thinking_blocks"] == 1 and first["metadata"]["metadata"] == {"user_id": "user-9"}
    assert first["metadata"]["call_ids"] == ["msg_01AaBbCc", "msg_01DdEeFf"]
    # input tokens count the cached prompt too: 410 + 0 + 1200
    assert messages(store, "msg_01AaBbCc")[:3] == [
        ("system", "You are a careful coding agent.", None, None, None),
        ("user", "List the files in /srv/app.", None, None, None),
        ("assistant", "Let me look.", None, 1610, 62),
    ]
    assert messages(store, "msg_01AaBbCc")[4][0::3] == ("assistant", 530)
    # is_error marks the call failed although the text does not look like an error
    assert calls(store, "msg_01AaBbCc")["toolu_01"] == (
        "bash", {"command": "ls /srv/app"}, "ls: cannot open directory '/srv/app': Permission denied", 3, True)

    conv = messages(store, "conv-anthropic-3")
    assert [m[:3] for m in conv[2:5]] == [("assistant", "Checking.", None), ("tool", '{"balance": 42.5}', "toolu_bal"),
                                          ("user", "Thanks!", None)]
    assert calls(store, "conv-anthropic-3")["toolu_bal"][4] is False
    assert messages(store, "msg_01ZzYy") == [("assistant", "Hello! How can I help?", None, 12, 9)]


def test_anthropic_json_document(store: Store, fixtures_dir: Path) -> None:
    ingest(store, fixtures_dir / "anthropic" / "conversations.json")
    assert calls(store, "conv-anthropic-4")["toolu_lint"][3:] == (3, True)  # traceback
    assert messages(store, "conv-anthropic-4")[0][:2] == ("system", "Be brief.")


# --- τ²-bench ---------------------------------------------------------------------------------------------

SIM = "0b6a2e6c-1f7e-4d8e-9d43-6f7a5b1c0a0"


def test_tau2_simulations_outcomes_scores_and_errors(store: Store, fixtures_dir: Path) -> None:
    summary = ingest(store, fixtures_dir / "tau2-bench" / "results.json")
    assert (summary["traces"], summary["errors"]) == (3, 0)
    assert q(store, "SELECT trace_id, outcome, model, session_id FROM traces ORDER BY trace_id") == [
        (f"{SIM}1", "success", "gpt-4.1-mini", "task-0"),
        (f"{SIM}2", "failure", "gpt-4.1-mini", "task-1"),
        (f"{SIM}3", "success", "gpt-4.1-mini", "task-0"),
    ]
    ok = trace(store, f"{SIM}1")
    assert ok["started_at"] == datetime(2025, 6, 10, 14, 2, 10, 1)
    assert ok["ended_at"] == datetime(2025, 6, 10, 14, 2, 41, 500000)
    assert ok["metadata"]["termination_reason"] == "user_stop" and ok["metadata"]["agent_cost"] == 0.0031
    assert ok["metadata"]["evaluation_criteria"]["actions"][0]["name"] == "cancel_reservation"
    usage = f"SELECT input_tokens, output_tokens, latency_ms, ts FROM messages WHERE trace_id = '{SIM}1' AND idx = 2"
    assert q(store, usage) == [(1900, 25, 1250.0, datetime(2025, 6, 10, 14, 2, 14, 250000))]

    failed = calls(store, f"{SIM}2")
    assert failed["call_user_1"][3:] == (2, False)  # a user-side tool call, answered
    assert failed["call_upd_1"][2:] == ("Reservation ZZ9ABC cannot be modified: basic economy", 4, True)  # error flag
    assert failed["call_upd_2"][4] is True
    assert q(store, f"SELECT name, value, label FROM scores WHERE trace_id = '{SIM}2' ORDER BY name") == [
        ("action_checks", 0.0, "0/1"), ("db_match", 0.0, None), ("reward", 0.0, None),
        ("reward_breakdown.COMMUNICATE", 1.0, None), ("reward_breakdown.DB", 0.0, None)]

    parallel = calls(store, f"{SIM}3")  # a MultiToolMessage answers two calls of one turn
    assert {k: v[3] for k, v in parallel.items()} == {"call_p1": 3, "call_p2": 4}


def test_tau2_file_without_simulations_loads_nothing_and_reports_nothing(store: Store, fixtures_dir: Path) -> None:
    summary = ingest(store, fixtures_dir / "tau2-bench" / "no_simulations.json")
    assert (summary["traces"], summary["errors"]) == (0, 0)
    assert q(store, "SELECT format, n_traces FROM sources") == [("tau2-bench", 0)]


# --- generic (mapping file) -------------------------------------------------------------------------------


def test_generic_mapping_through_the_cli(cli: Any, store_path: Path, fixtures_dir: Path) -> None:
    folder = fixtures_dir / "generic"
    result = cli("ingest", "--format", "generic", "--mapping", folder / "mapping.yaml", folder / "agent_log.jsonl",
                 "--store", store_path, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["traces"] == 2
    from tracegym.store import open_store

    with open_store(store_path, read_only=True) as store:
        assert q(store, "SELECT trace_id, outcome, model, session_id, started_at, ended_at FROM traces ORDER BY 1") == [
            ("2", "success", "acme-agent-v2", "c-10", datetime(2025, 1, 5, 11, 0), datetime(2025, 1, 5, 11, 0, 9)),
            ("r-001", "failure", "acme-agent-v2", "c-9", datetime(2025, 1, 5, 10, 0), datetime(2025, 1, 5, 10, 0, 30)),
        ]
        assert [m[0] for m in messages(store, "r-001")] == ["user", "assistant", "tool", "assistant"]
        assert calls(store, "r-001")["t1"] == (
            "search", {"q": "Q3 revenue report"}, "Error: search index offline", 2, True)
        assert calls(store, "2")["t2"][1:] == ({"expr": "6*7"}, "42", 2, False)
        assert q(store, "SELECT name, value FROM scores ORDER BY value") == [("judge", 0.2), ("judge", 1.0)]
        assert trace(store, "r-001")["metadata"] == {
            "outcome_value": "FAIL", "eval.notes": "gave up after one tool error"}
        stamp = q(store, "SELECT ts FROM messages WHERE trace_id = 'r-001' AND idx = 2")
        assert stamp == [(datetime(2025, 1, 5, 10, 0, 3),)]


def test_generic_records_inside_a_document(store: Store, tmp_path: Path) -> None:
    doc = tmp_path / "export.json"
    doc.write_text(json.dumps({"exported": "2025-01-05", "runs": [
        {"key": "a", "steps": [{"who": "user", "say": "hi"}, {"who": "assistant", "say": "hello"}], "score": 0.4},
        {"key": "b", "steps": [{"who": "user", "say": "yo"}], "score": 0.9},
    ]}))
    mapping = tmp_path / "map.yaml"
    mapping.write_text("records: runs\nid: key\nmessages: steps\nmessage: {role: who, content: say}\n"
                       "outcome: {path: score, threshold: 0.5}\n")
    summary = ingest(store, doc, fmt="generic", options={"mapping": mapping})
    assert summary["traces"] == 2
    assert q(store, "SELECT trace_id, outcome, n_messages FROM traces ORDER BY 1") == [
        ("a", "failure", 2), ("b", "success", 1)]


BAD_MAPPINGS = {
    "unknown key": ("id: run.id\nmessages: transcript\noutcom: {path: x, success: [ok]}\n", "Did you mean 'outcome'"),
    "bad path": ("id: run..id\nmessages: transcript\n", "segment ''"),
    "no way to tell": ("id: a\nmessages: m\noutcome: {path: r}\n", "give `success`"),
    "missing id": ("messages: transcript\n", "id: Field required"),
    "not yaml": ("id: [unclosed\n", "not valid YAML"),
    "not a mapping": ("- id\n- messages\n", "must be a YAML mapping"),
}


@pytest.mark.parametrize("case", sorted(BAD_MAPPINGS))
def test_a_bad_mapping_is_a_config_error_naming_file_and_problem(store: Store, tmp_path: Path, fixtures_dir: Path,
                                                                case: str) -> None:
    text, problem = BAD_MAPPINGS[case]
    mapping = tmp_path / "map.yaml"
    mapping.write_text(text)
    with pytest.raises(ConfigError) as err:
        ingest(store, fixtures_dir / "generic" / "agent_log.jsonl", fmt="generic", options={"mapping": mapping})
    assert str(mapping.resolve()) in str(err.value) and problem in str(err.value)
    assert q(store, "SELECT count(*) FROM traces") == [(0,)] and q(store, "SELECT count(*) FROM sources") == [(0,)]


def test_generic_without_a_mapping_says_how_to_give_one(cli: Any, store_path: Path, fixtures_dir: Path) -> None:
    result = cli("ingest", "--format", "generic", fixtures_dir / "generic" / "agent_log.jsonl", "--store", store_path)
    assert result.exit_code == 2 and "--mapping FILE" in result.stderr
    missing = cli("ingest", "--format", "generic", "--mapping", "nope.yaml",
                  fixtures_dir / "generic" / "agent_log.jsonl", "--store", store_path)
    assert missing.exit_code == 2 and "nope.yaml does not exist" in missing.stderr


def test_a_bad_mapping_is_reported_even_when_every_file_was_ingested_before(
        cli: Any, store_path: Path, fixtures_dir: Path, tmp_path: Path) -> None:
    folder = fixtures_dir / "generic"
    log = folder / "agent_log.jsonl"
    first = cli("ingest", "--format", "generic", "--mapping", folder / "mapping.yaml", log, "--store", store_path)
    assert first.exit_code == 0, first.stderr
    typo = tmp_path / "typo.yaml"
    typo.write_text("id: run.id\nmesages: transcript\n")
    again = cli("ingest", "--format", "generic", "--mapping", typo, log, "--store", store_path)
    assert again.exit_code == 2 and "Did you mean 'messages'" in again.stderr
    unmapped = cli("ingest", "--format", "generic", log, "--store", store_path)
    assert unmapped.exit_code == 2 and "docs/custom-formats.md" in unmapped.stderr


def test_generic_record_without_id_or_messages_is_a_bad_record(store: Store, tmp_path: Path,
                                                               fixtures_dir: Path) -> None:
    log = tmp_path / "log.jsonl"
    good = (fixtures_dir / "generic" / "agent_log.jsonl").read_text().splitlines()[0]
    bad = [json.dumps({"run": {}, "transcript": []}), json.dumps({"run": {"id": "x"}})]
    log.write_text("\n".join([good, *bad]) + "\n")
    summary = ingest(store, log, fmt="generic", options={"mapping": fixtures_dir / "generic" / "mapping.yaml"})
    assert (summary["traces"], summary["errors"]) == (1, 2)
    assert q(store, "SELECT locator, error FROM ingest_errors ORDER BY locator") == [
        ("line 2", "ValueError: no id at 'run.id' (a non-empty string or an integer is needed)"),
        ("line 3", "ValueError: no message list at 'transcript'"),
    ]
