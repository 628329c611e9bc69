"""Each built-in detector, clustering and ranking, on a small hand-built store."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from tracegym.mining import DETECTORS, MineConfig, mine_failures
from tracegym.mining.clusters import wilson_lower_sql
from tracegym.mining.detection import Detection


def _trace(store, trace_id, outcome=None, fmt="demo", metadata="{}"):
    store.con.execute("INSERT INTO traces (trace_id, format, outcome, metadata) VALUES (?, ?, ?, ?)",
                      [trace_id, fmt, outcome, metadata])


def _msg(store, trace_id, idx, role, content):
    store.con.execute("INSERT INTO messages (trace_id, idx, role, content) VALUES (?, ?, ?, ?)",
                      [trace_id, idx, role, content])


def _call(store, trace_id, idx, name, arguments, result, is_error=False, exit_code=None):
    store.con.execute(
        "INSERT INTO tool_calls (trace_id, message_idx, call_id, name, arguments, result, result_message_idx, "
        "is_error, exit_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [trace_id, idx, f"c{idx}", name, arguments, result, idx + 1, is_error, exit_code],
    )


def _score(store, trace_id, name, value, kind, label=None):
    store.con.execute("INSERT INTO scores (trace_id, name, value, kind, label) VALUES (?, ?, ?, ?, ?)",
                      [trace_id, name, value, kind, label])


@pytest.fixture
def demo(store):
    """Five traces, each showing a few of the failures the detectors look for."""
    # t1 failed: it retried a failing call unchanged, and got a timeout.
    _trace(store, "t1", "failure")
    _call(store, "t1", 1, "refund", '{"order": 17}', "Error: order 17 is not refundable", is_error=True)
    _call(store, "t1", 3, "refund", '{"order": 17}', "Error: order 17 is not refundable", is_error=True)
    _call(store, "t1", 5, "bash", '{"command": "sleep 99"}', "The command timed out after 60 s", exit_code=-9)
    # t2 succeeded, but looked the same thing up three times; its user repeated themselves and got a thumbs down.
    _trace(store, "t2", "success")
    for idx in (1, 3, 5):
        _call(store, "t2", idx, "lookup", '{"id": "A1"}', '{"status": "open"}')
    _msg(store, "t2", 0, "user", "Please cancel my order A1 right now.")
    _msg(store, "t2", 2, "assistant", "Let me check.")
    _msg(store, "t2", 6, "user", "please cancel my order A1 right now!")
    _msg(store, "t2", 8, "user", "That's not what I asked for.")
    _score(store, "t2", "thumbs", None, "human", label="thumbs_down")
    # t3 has no outcome: a low eval score, arguments that are not JSON, and a harness correction.
    _trace(store, "t3")
    _call(store, "t3", 1, "search", '"{query: unquoted"', "Error: bad arguments", is_error=True)
    _score(store, "t3", "helpfulness", 0.2, "eval")
    _msg(store, "t3", 1, "assistant", "```bash\nls\n```\n```bash\npwd\n```")
    _msg(store, "t3", 2, "user", "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.")
    # t4 hit its step limit with nothing submitted, after many turns, and handed off without gold actions.
    _trace(store, "t4", "failure", metadata='{"exit_status": "LimitsExceeded", "submission": ""}')
    for idx in range(0, 40, 2):
        _msg(store, "t4", idx, "assistant", "thinking")
    _call(store, "t4", 38, "escalate_to_supervisor", '{"reason": "stuck"}', "ok")
    # t5: a τ-bench-like hand-off the gold actions expected, which is not a failure.
    _trace(store, "t5", "success", metadata='{"task": {"actions": [{"name": "transfer_to_human_agents"}]}}')
    _call(store, "t5", 1, "transfer_to_human_agents", '{"summary": "x"}', "Transfer successful")
    _msg(store, "t5", 0, "assistant", "one turn")
    return store


def _by_detector(store) -> dict[str, set[tuple[str, str]]]:
    found: dict[str, set[tuple[str, str]]] = {}
    for row in store.query("SELECT detector, trace_id, signature FROM failures"):
        found.setdefault(row["detector"], set()).add((row["trace_id"], row["signature"]))
    return found


def test_each_detector_finds_its_failures(demo):
    summary = mine_failures(demo, MineConfig(max_turns=10))
    found = _by_detector(demo)
    assert found["outcome"] == {("t1", "trace outcome: failure"), ("t4", "trace outcome: failure")}
    assert found["low_score"] == {("t3", "eval score helpfulness below 0.5")}
    assert found["negative_feedback"] == {("t2", "negative feedback: thumbs")}
    assert found["tool_error"] == {("t1", "Error: order <n> is not refundable"), ("t1", "timeout"),
                                   ("t3", "Error: bad arguments")}
    assert found["format_error"] == {
        ("t3", "Please always provide EXACTLY ONE action in triple backticks, found <n> actions."),
        ("t3", "tool-call arguments are not valid JSON")}
    assert found["repeated_call"] == {("t1", "retried unchanged after an error: refund"),
                                      ("t2", "repeated call: lookup with identical arguments and result")}
    assert found["runaway_turns"] == {("t4", "runaway: over 10 assistant turns")}
    assert found["handoff"] == {("t4", "hand-off: escalate_to_supervisor")}
    assert found["terminated"] == {("t4", "terminated: LimitsExceeded")}
    assert found["empty_submission"] == {("t4", "empty submission")}
    assert found["user_repeat"] == {("t2", "user repeats an earlier message"),
                                    ("t2", "user corrects or turns down the agent")}
    assert "failing_tests" not in found
    assert summary.by_detector == {d.name: sum(1 for r in demo.query(
        "SELECT 1 FROM failures WHERE detector = ?", [d.name])) for d in DETECTORS}


def test_user_repeats_count_within_one_trace_only(store):
    # t1 says it three times (case and final punctuation differ); t2 and t3 say it once each.
    text = "I need to change the date of my flight"
    for trace_id in ("t1", "t2", "t3"):
        _trace(store, trace_id)
    _msg(store, "t1", 0, "user", text + ".")
    _msg(store, "t1", 2, "user", text.upper() + "!")
    _msg(store, "t1", 4, "user", text)
    _msg(store, "t2", 0, "user", text + ".")
    _msg(store, "t3", 0, "user", text)
    for idx in (2, 4):  # under 20 characters: saying it again is no finding
        _msg(store, "t2", idx, "user", "yes")
    mine_failures(store)
    rows = store.query("SELECT trace_id, message_idx, evidence FROM failures WHERE detector = 'user_repeat' "
                       "ORDER BY message_idx")
    assert [(r["trace_id"], r["message_idx"]) for r in rows] == [("t1", 2), ("t1", 4)]
    assert {r["evidence"] for r in rows} == {f"repeats message 0: {text}."}


def test_mining_times_each_step_and_leaves_no_scratch_tables(demo):
    summary = mine_failures(demo)
    assert {d.name for d in DETECTORS} | {"clusters", "commit"} <= set(summary.timings)
    assert "timings" not in summary.to_dict()
    assert not demo.query("SELECT table_name FROM duckdb_tables() WHERE temporary")
    _trace(demo, "t6", "failure")  # one new trace: detected from copies of its rows, which are dropped again
    assert mine_failures(demo).detection == Detection(1, whole_store=False)
    assert not demo.query("SELECT table_name FROM duckdb_tables() WHERE temporary")


def test_mining_again_detects_only_new_traces_and_counts_them_into_their_clusters(demo):
    first = mine_failures(demo)
    assert first.detection == Detection(5, whole_store=True)  # rows written directly, not ingested
    _trace(demo, "t6", "success")
    _call(demo, "t6", 1, "refund", '{"order": 18}', "Error: order 18 is not refundable", is_error=True)
    second = mine_failures(demo)
    assert second.detection == Detection(1, whole_store=False)
    assert set(second.timings) >= {"runaway_turns", "clusters"} and "tool_error" in second.timings
    assert "tool_error" not in mine_failures(demo).timings  # nothing new: no per-trace detector runs
    (c,) = demo.query("SELECT * FROM clusters WHERE signature = 'Error: order <n> is not refundable'")
    assert (c["n_traces"], c["n_findings"], c["n_failed"], c["n_known"]) == (2, 3, 1, 2)
    assert c["example_trace_id"] == "t1"  # the failed trace, ahead of t6 (fewer findings, and it succeeded)
    assert second.findings == first.findings + 1 == demo.scalar("SELECT count(*) FROM failures")


def test_summary_counts_traces_with_findings_of_any_detector(demo):
    for idx in range(0, 30, 2):  # t6: nothing but 15 assistant turns, a runaway over 10
        _msg(demo, "t6", idx, "assistant", "still thinking")
    _trace(demo, "t6")
    summary = mine_failures(demo, MineConfig(max_turns=10))
    assert ("t6", "runaway: over 10 assistant turns") in _by_detector(demo)["runaway_turns"]
    assert summary.traces_with_findings == demo.scalar("SELECT count(DISTINCT trace_id) FROM failures") == 5


def test_runaway_turns_defaults_to_three_times_the_median_of_the_format(demo):
    for i in range(3):  # three more one-turn demo traces: the median is 1, so t4's 20 turns are a runaway
        _trace(demo, f"short{i}", "success")
        _msg(demo, f"short{i}", 0, "assistant", "done")
    mine_failures(demo)
    assert _by_detector(demo)["runaway_turns"] == {("t4", "runaway: over 3x the median turns of its format")}


def test_thresholds_are_options(demo):
    mine_failures(demo, MineConfig(score_threshold=0.1, min_repeats=4))
    found = _by_detector(demo)
    assert "low_score" not in found
    assert "repeated_call" in found and all(t != "t2" for t, _ in found["repeated_call"])


def test_cluster_counts_failure_rate_and_stable_id(demo):
    mine_failures(demo)
    (c,) = demo.query("SELECT * FROM clusters WHERE detector = 'tool_error' AND signature LIKE 'Error: order%'")
    assert c["cluster_id"] == hashlib.md5(b"tool_error\x1fError: order <n> is not refundable").hexdigest()[:10]
    assert (c["n_traces"], c["n_findings"], c["n_failed"], c["n_known"]) == (1, 2, 1, 1)
    # t3 has no outcome, but a low eval score is a verdict: it failed.
    (bad_json,) = demo.query("SELECT * FROM clusters WHERE signature = 'tool-call arguments are not valid JSON'")
    assert (bad_json["n_failed"], bad_json["n_known"], bad_json["failure_rate"]) == (1, 1, 1.0)
    # t2's outcome is success, but a thumbs-down is a verdict too.
    (loop,) = demo.query("SELECT * FROM clusters WHERE signature LIKE 'repeated call: lookup%'")
    assert (loop["n_failed"], loop["n_known"], loop["failure_rate"]) == (1, 1, 1.0)
    (handoff,) = demo.query("SELECT * FROM clusters WHERE detector = 'handoff'")
    assert handoff["example_trace_id"] == "t4"


def test_mining_again_replaces_findings(demo):
    first = mine_failures(demo)
    second = mine_failures(demo)
    assert second.findings == first.findings == demo.scalar("SELECT count(*) FROM failures")
    assert [c.cluster_id for c in second.clusters] == [c.cluster_id for c in first.clusters]


def test_ranking_prefers_reliable_failures_over_small_samples(store):
    # 40 of 50 traces failing outranks 2 of 2: the Wilson bound discounts the tiny sample.
    for i in range(50):
        _trace(store, f"a{i}", "failure" if i < 40 else "success")
        _call(store, f"a{i}", 1, "pay", "{}", "Error: card declined", is_error=True)
    for i in range(2):
        _trace(store, f"b{i}", "failure")
        _call(store, f"b{i}", 1, "ship", "{}", "Error: no courier", is_error=True)
    clusters = {c.signature: c for c in mine_failures(store).clusters}
    declined, courier = clusters["Error: card declined"], clusters["Error: no courier"]
    assert courier.failure_rate == 1.0 > declined.failure_rate == 0.8
    assert declined.rank < courier.rank


def _wilson(k: int, n: int, z: float = 1.96) -> float:
    p = k / n
    return (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)


@pytest.mark.parametrize(("k", "n"), [(2, 2), (40, 50), (0, 7), (1, 3)])
def test_wilson_lower_bound_sql(store, k, n):
    assert store.scalar(f"SELECT {wilson_lower_sql(str(k), str(n))}") == pytest.approx(_wilson(k, n))
    assert store.scalar(f"SELECT {wilson_lower_sql('0', '0')}") == 0.0


def test_mine_detectors_lists_every_detector_with_its_description(cli):
    result = cli("mine", "detectors", "--json")
    assert result.exit_code == 0
    listed = {row["name"]: row for row in json.loads(result.stdout)}
    assert set(listed) == {d.name for d in DETECTORS}
    assert all(row["description"] and row["category"] for row in listed.values())


def test_json_error_responses_are_tool_errors_named_by_their_message(store):
    # Stored unflagged, as a store ingested before JSON errors were flagged holds them.
    results = {
        "j1": '{"error": {"code": 504, "message": "upstream timeout"}}',
        "j2": '{"status": "error", "message": "invalid postal code for country DE"}',
        "j3": '{"status": "error", "message": "invalid postal code for country IN"}',
        "j4": '{"ok": false, "error": "channel_not_found"}',
        "j5": '{"statusCode": 502}',
        "j6": '{"errors": [{"message": "Cannot query field \\"foo\\" on type \\"Query\\""}]}',
        "j7": '{"success": false}',
        "ok1": '{"reservation_id": "K1NW8N", "status": "cancelled"}',
        "ok2": '{"ok": true, "ticket": "T-3"}',
    }
    for trace_id, result in results.items():
        _trace(store, trace_id)
        _call(store, trace_id, 1, "backend", "{}", result)
    mine_failures(store)
    assert _by_detector(store)["tool_error"] == {
        ("j1", "upstream timeout"), ("j2", "invalid postal code for country <country>"),
        ("j3", "invalid postal code for country <country>"), ("j4", "channel_not_found"), ("j5", "HTTP 502"),
        ("j6", "Cannot query field <str> on type <str>"), ("j7", "error response with no message")}
    (evidence,) = store.query("SELECT evidence FROM failures WHERE trace_id = 'j1'")
    assert evidence["evidence"].startswith("backend: {")  # the tool and the whole response, as for other errors


def test_a_flagged_json_error_is_named_by_its_message_not_its_first_line(store):
    _trace(store, "t1")
    _call(store, "t1", 1, "lookup", "{}", '{\n  "error": {\n    "message": "order A-17 not found"\n  }\n}',
          is_error=True)
    _call(store, "t1", 3, "lookup", "{}", '{"error": "bad gateway"}', exit_code=2)
    mine_failures(store)
    assert _by_detector(store)["tool_error"] == {("t1", "order A-<n> not found"), ("t1", "exit code 2: bad gateway")}


def test_a_new_signature_rule_makes_every_trace_detected_again(monkeypatch):
    from tracegym.mining import detection

    params = MineConfig().model_dump()
    before = detection.settings_key(params)
    monkeypatch.setattr(detection, "macros", lambda: {"tg_signature": "lower(t)"})
    assert detection.settings_key(params) != before


@pytest.mark.parametrize(("reply", "gave_up"), [
    ("I'm sorry, but I can't help with refunds. Unfortunately there is nothing I can do.", True),
    ("I’m afraid I can’t change that booking.", True),  # curly apostrophes
    ("Sorry, I CANNOT HELP with that request.", True),
    ("I am unable to process a refund for this order. Is there anything else?", True),
    ("Unfortunately I'm not able to waive the fee.", True),
    ("I can't help with refunds, but a colleague will email you today.", False),
    ("I'm unable to do that here; please contact us at help@example.com.", False),
    ("I cannot issue refunds myself, so I've passed this to our support team.", False),
    ("Your order A-1 has shipped and should arrive on Friday.", False),
])
def test_gave_up_is_a_last_reply_that_cannot_help_and_offers_no_person(store, reply, gave_up):
    _trace(store, "t1")
    _msg(store, "t1", 0, "user", "I want a refund for order A-1.")
    _msg(store, "t1", 1, "assistant", reply)
    mine_failures(store)
    found = _by_detector(store).get("gave_up", set())
    assert found == ({("t1", "gave up: said it cannot help and offered no person")} if gave_up else set())


def test_gave_up_looks_at_the_last_reply_and_at_hand_off_tools(store):
    refusal = "I'm sorry, I can't help with that."
    _trace(store, "handed")  # said it cannot help, and called a hand-off tool
    _msg(store, "handed", 0, "user", "refund please")
    _msg(store, "handed", 1, "assistant", refusal)
    _call(store, "handed", 1, "create_support_ticket", '{"reason": "refund"}', '{"ok": true}')
    _trace(store, "recovered")  # said it early on, then helped
    for idx, (role, text) in enumerate([("user", "refund please"), ("assistant", refusal), ("user", "my order?"),
                                        ("assistant", "Order A-1 ships tomorrow.")]):
        _msg(store, "recovered", idx, role, text)
    _trace(store, "last")  # its last reply is the refusal
    for idx, (role, text) in enumerate([("user", "where is A-1?"), ("assistant", "It ships tomorrow."),
                                        ("user", "and a refund?"), ("assistant", refusal), ("user", "bye")]):
        _msg(store, "last", idx, role, text)
    mine_failures(store)
    rows = store.query("SELECT trace_id, message_idx, evidence FROM failures WHERE detector = 'gave_up'")
    assert [(r["trace_id"], r["message_idx"], r["evidence"]) for r in rows] == [("last", 3, refusal)]
    (gave_up,) = [d for d in DETECTORS if d.name == "gave_up"]
    assert not gave_up.verdict and gave_up.category == "give_ups"


def test_catch_all_clusters_rank_after_specific_ones(store):
    # Every trace failed: the outcome cluster holds the most failed traces, and would rank first by score.
    for i in range(10):
        _trace(store, f"a{i}", "failure")
        _score(store, f"a{i}", "csat", 0.0, "human")
        if i < 3:
            _call(store, f"a{i}", 1, "ship", "{}", '{"error": {"message": "no courier"}}')
    clusters = mine_failures(store).clusters
    order = [(c.detector, c.catch_all) for c in clusters]
    assert order == [("tool_error", False), ("negative_feedback", True), ("outcome", True)]
    assert clusters[0].score < clusters[1].score and [c.rank for c in clusters] == [1, 2, 3]
    assert clusters[-1].to_dict()["catch_all"] is True
    assert {d.name for d in DETECTORS if d.catch_all} == {"outcome", "low_score", "failing_tests",
                                                          "negative_feedback"}
