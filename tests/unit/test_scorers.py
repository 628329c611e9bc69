"""Every scorer kind through the one interface: trajectory in, reward or recorded error out."""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from tracegym.errors import ConfigError
from tracegym.evals.scorers import ScorerContext, build_scorer, coerce_result
from tracegym.evals.scorers.config import load_evals
from tracegym.evals.scorers.tool_calls import any_order_matching, ordered_matching
from tracegym.evals.scorers.trajectory import CallView, ScoreResult, Trajectory


def _scorer(yaml_text: str, tmp_path: Path, name: str | None = None, store=None):
    path = tmp_path / "evals.yaml"
    path.write_text(textwrap.dedent(yaml_text))
    loaded = load_evals(path)
    spec = loaded.get(name) if name else loaded.config.evals[0]
    return build_scorer(spec, ScorerContext(tmp_path, store), loaded)


def _call(name: str, args: dict, cid: str = "c") -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _traj(calls: list[tuple[str, dict]] = (), answer: str | None = None, **metadata) -> Trajectory:
    msgs = [{"role": "system", "content": "policy"}, {"role": "user", "content": "please help"}]
    for i, (name, args) in enumerate(calls):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [_call(name, args, f"c{i}")]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "name": name, "content": "ok"})
    if answer is not None:
        msgs.append({"role": "assistant", "content": answer})
    return Trajectory(msgs, answer, None, metadata, "trace-1")


# tool_calls ---------------------------------------------------------------

GOLD = """
evals:
  - name: gold
    kind: tool_calls
    expected_from: metadata.task.actions
    {extra}
"""
ACTIONS = [{"name": "book", "kwargs": {"id": "A1", "amount": 250}}, {"name": "cancel", "kwargs": {"id": "B2"}}]


def test_tool_calls_matches_gold_actions_in_any_order_with_numbers_by_value(tmp_path):
    scorer = _scorer(GOLD.format(extra=""), tmp_path)
    traj = _traj([("lookup", {"q": 1}), ("cancel", {"id": "B2"}), ("book", {"amount": 250.0, "id": "A1"})],
                 task={"actions": ACTIONS})
    result = scorer.score(traj)
    assert result.reward == 1.0 and result.details["matched"] == 2


def test_tool_calls_all_or_nothing_unless_partial_credit(tmp_path):
    traj = _traj([("book", {"id": "A1", "amount": 250})], task={"actions": ACTIONS})
    assert _scorer(GOLD.format(extra=""), tmp_path).score(traj).reward == 0.0
    partial = _scorer(GOLD.format(extra="partial_credit: true"), tmp_path).score(traj)
    assert partial.reward == 0.5 and partial.details["missing"] == ['cancel({"id": "B2"})']


def test_tool_calls_wrong_arguments_do_not_match(tmp_path):
    traj = _traj([("book", {"id": "A1", "amount": 251}), ("cancel", {"id": "B2"})], task={"actions": ACTIONS})
    assert _scorer(GOLD.format(extra=""), tmp_path).score(traj).reward == 0.0


def test_tool_calls_extra_calls_fail_only_when_asked(tmp_path):
    traj = _traj([("book", {"id": "A1", "amount": 250}), ("cancel", {"id": "B2"}), ("cancel", {"id": "Z9"})],
                 task={"actions": ACTIONS})
    assert _scorer(GOLD.format(extra=""), tmp_path).score(traj).reward == 1.0
    assert _scorer(GOLD.format(extra="extra_calls: fail"), tmp_path).score(traj).reward == 0.0
    both = _scorer(GOLD.format(extra="extra_calls: fail\n    partial_credit: true"), tmp_path).score(traj)
    assert both.reward == pytest.approx(2 / 3)


def test_tool_calls_precision_credits_each_call_made_not_each_gold_call(tmp_path):
    precision = GOLD.format(extra="credit: precision\n    partial_credit: true\n    match_arguments: ignore")
    one_right = _traj([("cancel", {"id": "anything"})], task={"actions": ACTIONS})
    assert _scorer(precision, tmp_path).score(one_right).reward == 1.0  # recall would give 0.5
    assert _scorer(GOLD.format(extra="partial_credit: true\n    match_arguments: ignore"),
                   tmp_path).score(one_right).reward == 0.5
    right_and_wrong = _traj([("cancel", {"id": "B2"}), ("lookup", {"q": 1})], task={"actions": ACTIONS})
    assert _scorer(precision, tmp_path).score(right_and_wrong).reward == 0.5
    all_or_nothing = GOLD.format(extra="credit: precision\n    match_arguments: ignore")
    assert _scorer(all_or_nothing, tmp_path).score(right_and_wrong).reward == 0.0
    # No call at all: right only when no call was expected.
    assert _scorer(precision, tmp_path).score(_traj(answer="hi", task={"actions": ACTIONS})).reward == 0.0
    assert _scorer(precision, tmp_path).score(_traj(answer="hi", task={"actions": []})).reward == 1.0
    # Calls the task's prompt shows are not the attempt's: they neither earn nor dilute its precision.
    shown = _traj([("cancel", {"id": "B2"}), ("lookup", {"q": 1})], task={"actions": ACTIONS})
    shown.prompt_messages = 4  # system, user, and the cancel call with its result
    assert _scorer(precision, tmp_path).score(shown).reward == 0.0
    shown.prompt_messages = 6
    assert _scorer(precision, tmp_path).score(shown).reward == 0.0  # made none; some were expected


def test_tool_calls_expected_remaining_scores_what_is_left_after_the_cut(tmp_path):
    remaining = GOLD.format(extra="credit: precision\n    partial_credit: true\n    expected_remaining: true")
    scorer = _scorer(remaining, tmp_path)
    booked = [CallView("book", {"id": "A1", "amount": 250.0}, "r1", "ok")]

    def attempt(calls, done=booked, prompt_calls=()):
        # The prompt (system, user, and the calls it shows) is what the agent was given; the rest is its attempt.
        traj = _traj([*prompt_calls, *calls], task={"actions": ACTIONS})
        traj.prompt_messages, traj.prior_calls = 2 + 2 * len(prompt_calls), done
        return scorer.score(traj)

    assert attempt([("cancel", {"id": "B2"})]).reward == 1.0
    redo = attempt([("book", {"id": "A1", "amount": 250})])  # already made before the cut: no longer expected
    assert redo.reward == 0.0 and redo.details == {"expected": 1, "matched": 0, "missing": ['cancel({"id": "B2"})'],
                                                  "extra": ['book({"amount": 250, "id": "A1"})'], "done_before": 1}
    # A call the prompt shows is not the agent's: it neither earns nor dilutes the attempt's precision.
    assert attempt([("cancel", {"id": "B2"})], prompt_calls=[("lookup", {"q": 1})]).reward == 1.0
    assert attempt([], prompt_calls=[("cancel", {"id": "B2"})]).reward == 0.0
    # A gold call made before with other arguments was not done (arguments are compared exactly here).
    other = [CallView("book", {"id": "A1", "amount": 999}, "r1", "ok")]
    assert attempt([("book", {"id": "A1", "amount": 250})], other).reward == 1.0
    # Everything done before the cut: the right reply makes no call.
    both = [CallView("book", {"id": "A1", "amount": 250}), CallView("cancel", {"id": "B2"})]
    assert attempt([], both).reward == 1.0 and attempt([("cancel", {"id": "B2"})], both).reward == 0.0


def test_tool_calls_expected_remaining_on_a_recorded_trace_is_the_plain_score(tmp_path):
    traj = _traj([("cancel", {"id": "B2"}), ("lookup", {"q": 1})], task={"actions": ACTIONS})
    for extra in ("partial_credit: true", "credit: precision\n    partial_credit: true"):
        plain = _scorer(GOLD.format(extra=extra), tmp_path).score(traj)
        remaining = _scorer(GOLD.format(extra=extra + "\n    expected_remaining: true"), tmp_path).score(traj)
        assert remaining.reward == plain.reward and remaining.details == {**plain.details, "done_before": 0}


def test_tool_calls_only_tools_ignores_reads_on_both_sides(tmp_path):
    actions = [{"name": "get", "kwargs": {"id": "A1"}}, *ACTIONS]
    traj = _traj([("get", {"id": "other"}), ("book", {"id": "A1", "amount": 250}), ("cancel", {"id": "B2"})],
                 task={"actions": actions})
    assert _scorer(GOLD.format(extra="extra_calls: fail"), tmp_path).score(traj).reward == 0.0
    only = _scorer(GOLD.format(extra="extra_calls: fail\n    only_tools: [book, cancel]"), tmp_path)
    assert only.score(traj).reward == 1.0


def test_tool_calls_can_leave_out_rejected_calls_even_with_reused_ids(tmp_path):
    book = {"id": "A1", "amount": 250}
    msgs = [{"role": "user", "content": "book"}]
    for args, result in ((book | {"amount": 999}, "Error: payment amount does not add up"), (book, "{'ok': true}")):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [_call("book", args, "same-id")]})
        msgs.append({"role": "tool", "tool_call_id": "same-id", "name": "book", "content": result})
    traj = Trajectory(msgs, None, None, {"task": {"actions": ACTIONS[:1]}})
    assert [c.result[:6] for c in traj.tool_calls()] == ["Error:", "{'ok':"]
    assert _scorer(GOLD.format(extra="extra_calls: fail"), tmp_path).score(traj).reward == 0.0
    skipping = _scorer(GOLD.format(extra="extra_calls: fail\n    skip_failed_calls: true"), tmp_path)
    assert skipping.score(traj).reward == 1.0


def test_tool_calls_strict_order_and_subset_arguments(tmp_path):
    text = """
    evals:
      - name: steps
        kind: tool_calls
        order: strict
        match_arguments: subset
        partial_credit: true
        expected:
          - {name: search, arguments: {q: shoes}}
          - {name: buy, arguments: {sku: 7}}
    """
    scorer = _scorer(text, tmp_path)
    in_order = _traj([("search", {"q": "shoes", "page": 2}), ("buy", {"sku": 7, "qty": 1})])
    reversed_ = _traj([("buy", {"sku": 7}), ("search", {"q": "shoes"})])
    assert scorer.score(in_order).reward == 1.0
    assert scorer.score(reversed_).reward == 0.5


def test_tool_calls_follow_tau2_benchs_action_check(tmp_path):
    """τ²-bench's `Action.compare_with_tool_call`: the arguments an action lists in `compare_args`, on both sides;
    without a list, the arguments the call passed (`match_arguments: passed`)."""
    text = """
    evals:
      - name: tau2
        kind: tool_calls
        expected_from: metadata.evaluation_criteria.actions
        match_arguments: passed
    """
    scorer = _scorer(text, tmp_path)
    gold = [{"action_id": "1_0", "requestor": "assistant", "name": "update_flights",
             "arguments": {"reservation_id": "ZZ9ABC", "cabin": "economy"}, "compare_args": None}]
    listed = [{**gold[0], "compare_args": ["cabin"]}]

    def reward(call_args: dict, actions: list) -> float:
        return scorer.score(_traj([("update_flights", call_args)], evaluation_criteria={"actions": actions})).reward

    assert reward({"reservation_id": "ZZ9ABC", "cabin": "economy"}, gold) == 1.0
    assert reward({"reservation_id": "ZZ9ABC"}, gold) == 1.0  # a gold argument the call left out is not compared
    assert reward({"reservation_id": "ZZ9ABC", "cabin": "business"}, gold) == 0.0
    assert reward({"reservation_id": "ZZ9ABC", "cabin": "economy", "extra": 1}, gold) == 0.0
    assert reward({"reservation_id": "OTHER", "cabin": "economy"}, listed) == 1.0  # only cabin is compared
    assert reward({"reservation_id": "ZZ9ABC"}, listed) == 0.0  # ... and the call must pass it
    assert reward({}, [{**gold[0], "compare_args": []}]) == 1.0  # an empty list: the name alone


def test_the_example_evals_cover_tau2_bench(tmp_path):
    """examples/evals.yaml has a tool_calls eval for τ²-bench traces, and examples/evals-train.yaml a reward."""
    root = Path(__file__).resolve().parents[2] / "examples"
    for file, name in (("evals.yaml", "tau2_actions"), ("evals-train.yaml", "tau2_gold_tool")):
        spec = load_evals(root / file).get(name)
        assert spec.kind == "tool_calls" and spec.applies_to.formats == ["tau2-bench"], (file, name)
        assert spec.expected_from == "metadata.evaluation_criteria.actions"


def test_tool_calls_bad_gold_is_a_recorded_error_not_a_crash(tmp_path):
    scorer = _scorer(GOLD.format(extra=""), tmp_path)
    missing = scorer.score(_traj([("book", {})], task={"instruction": "x"}))
    assert missing.reward is None and "has no key 'actions'" in missing.error
    garbage = scorer.score(_traj([("book", {})], task={"actions": "book it"}))
    assert garbage.reward is None and "not a list" in garbage.error


def test_any_order_matching_is_maximum_where_greedy_is_not():
    # Expected 0 matches actuals 0 and 1, expected 1 only actual 0: greedy would give 1 pair.
    expected, actual = [("a", 0), ("a", 1)], [("x", 0), ("x", 1)]
    ok = {(0, 0), (0, 1), (1, 0)}
    pairs = any_order_matching(expected, actual, lambda g, a: (g[1], a[1]) in ok)
    assert sorted(pairs) == [(0, 1), (1, 0)]


def test_ordered_matching_is_a_longest_common_subsequence():
    same = lambda g, a: g == a  # noqa: E731
    pairs = ordered_matching(list("abcbdab"), list("bdcaba"), same)
    assert len(pairs) == 4
    assert all(i1 < i2 and j1 < j2 for (i1, j1), (i2, j2) in zip(pairs, pairs[1:], strict=False))


# match ----------------------------------------------------------------------

def _match(tmp_path, body: str):
    return _scorer("evals:\n  - name: m\n    kind: match\n" + textwrap.indent(textwrap.dedent(body), "    "), tmp_path)


def test_match_exact_normalises_case_and_space(tmp_path):
    scorer = _match(tmp_path, "mode: exact\nexpected_from: metadata.expected\n")
    assert scorer.score(_traj(answer="  Paris\n", expected="paris")).reward == 1.0
    strict = _match(tmp_path, "mode: exact\nexpected: paris\ncase_sensitive: true\n")
    assert strict.score(_traj(answer="Paris")).reward == 0.0


def test_match_contains_list_with_partial_credit(tmp_path):
    body = "mode: contains\ntarget: assistant_text\nexpected: [refund, '1,200']\npartial_credit: true\n"
    scorer = _match(tmp_path, body)
    result = scorer.score(_traj(answer="Your REFUND is on its way."))
    assert result.reward == 0.5 and result.details["missing"] == ["1,200"]


def test_match_regex_and_numeric_tolerance(tmp_path):
    regex = _match(tmp_path, "mode: regex\nexpected: '^order #\\d+$'\n")
    assert regex.score(_traj(answer="Order #42")).reward == 1.0
    numeric = _match(tmp_path, "mode: numeric\nexpected: 1200\nrel_tolerance: 0.01\n")
    assert numeric.score(_traj(answer="The total is 1,205.50 dollars")).reward == 1.0
    assert numeric.score(_traj(answer="The total is 1,300")).reward == 0.0
    no_number = numeric.score(_traj(answer="I cannot tell"))
    assert no_number.reward == 0.0 and no_number.details["reason"] == "no number in the answer"


def test_match_json_schema_reads_fenced_json(tmp_path):
    body = "mode: json_schema\njson_schema: {type: object, required: [city], properties: {city: {type: string}}}\n"
    scorer = _match(tmp_path, body)
    assert scorer.score(_traj(answer='Here:\n```json\n{"city": "Oslo"}\n```')).reward == 1.0
    wrong = scorer.score(_traj(answer='{"town": "Oslo"}'))
    assert wrong.reward == 0.0 and "'city' is a required property" in wrong.details["errors"][0]
    assert scorer.score(_traj(answer="Oslo")).reward == 0.0


def test_match_missing_answer_scores_zero_but_missing_expected_is_an_error(tmp_path):
    scorer = _match(tmp_path, "mode: exact\nexpected_from: metadata.expected\n")
    assert scorer.score(_traj(answer=None, expected="x")).reward == 0.0
    broken = scorer.score(_traj(answer="x"))
    assert broken.reward is None and "has no key 'expected'" in broken.error


# python -------------------------------------------------------------------

EVAL_MODULE = '''
import math, os, time
def good(trajectory):
    return (0.75, {"n": len(trajectory.messages)})
def as_bool(answer, expected):
    return answer == expected
def as_dict(trajectory, bonus=0.0):
    return {"score": 0.5 + bonus, "why": "half"}
def raises(trajectory):
    raise RuntimeError("eval crashed")
def too_big(trajectory):
    return 3.5
def nan(trajectory):
    return math.nan
def text(trajectory):
    return "great"
def sleeps(trajectory):
    with open("sleeper.pid", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)
    open("sleeper.finished", "w").close()
    return 1.0
'''


def _py(tmp_path, fn: str, extra: str = "", timeout_s: float = 1) -> object:
    (tmp_path / "team_evals_mod.py").write_text(EVAL_MODULE)
    return _scorer(f"""
    evals:
      - name: py
        kind: python
        function: team_evals_mod:{fn}
        python_path: ["."]
        timeout_s: {timeout_s}
        {extra}
    """, tmp_path)


def test_python_eval_return_shapes(tmp_path):
    traj = _traj(answer="42", expected="42")
    assert _py(tmp_path, "good").score(traj) == ScoreResult(0.75, {"n": 3})
    bool_args = "arguments: {answer: final_answer, expected: metadata.expected}"
    assert _py(tmp_path, "as_bool", bool_args).score(traj).reward == 1.0
    assert _py(tmp_path, "as_dict", "options: {bonus: 0.25}").score(traj) == ScoreResult(0.75, {"why": "half"})


@pytest.mark.parametrize("fn, message", [
    ("raises", "RuntimeError: eval crashed"), ("too_big", "returned 3.5, outside [0, 1]"),
    ("nan", "outside [0, 1]"), ("text", "returned 'great' (str), not a number"),
])
def test_python_eval_failures_become_recorded_errors(tmp_path, fn, message):
    result = _py(tmp_path, fn).score(_traj(answer="x"))
    assert result.reward is None and message in result.error


def test_python_eval_timeout_in_a_thread(tmp_path):
    result = _py(tmp_path, "sleeps").score(_traj())
    assert result.reward is None and "timed out after 1s" in result.error
    # At its limit, not when the function would have ended (it sleeps 600 s, then leaves a file).
    assert not (tmp_path / "sleeper.finished").exists()


def test_python_eval_timeout_in_a_process_kills_it(tmp_path):
    scorer = _py(tmp_path, "sleeps", "isolation: process", timeout_s=4)
    before = set(multiprocessing.active_children())
    result = scorer.score(_traj())
    assert result.reward is None and "its process was killed" in result.error
    assert not (tmp_path / "sleeper.finished").exists()  # killed at its limit, not ended by itself
    # Its process is gone, whether the limit came while it started (a loaded machine) or while it slept.
    assert set(multiprocessing.active_children()) == before
    if (tmp_path / "sleeper.pid").is_file():
        with pytest.raises(ProcessLookupError):
            os.kill(int((tmp_path / "sleeper.pid").read_text()), 0)


def test_python_eval_in_a_process_returns_its_result(tmp_path):
    assert _py(tmp_path, "good", "isolation: process", timeout_s=20).score(_traj()).reward == 0.75
    crashed = _py(tmp_path, "raises", "isolation: process", timeout_s=20).score(_traj())
    assert "RuntimeError: eval crashed" in crashed.error


def test_python_eval_missing_module_or_function_names_it(tmp_path):
    with pytest.raises(ConfigError, match=r"evals.yaml:3: cannot import module 'no_such_evals_mod'"):
        _scorer("""
        evals:
          - name: py
            kind: python
            function: no_such_evals_mod:check
        """, tmp_path)
    with pytest.raises(ConfigError, match=r"has no function 'godo'\. Did you mean 'good'\?"):
        _py(tmp_path, "godo")


# command ------------------------------------------------------------------

def test_command_exit_code_sees_the_trajectory(tmp_path):
    check = ("python -c \"import json, os; t = json.load(open(os.environ['TRACEGYM_TRAJECTORY'])); "
             "raise SystemExit(0 if t['final_answer'] == os.environ['TRACEGYM_FINAL_ANSWER'] == '42' else 1)\"")
    scorer = _scorer(f"evals:\n  - name: c\n    kind: command\n    command: {json.dumps(check)}\n", tmp_path)
    assert scorer.score(_traj(answer="42")).reward == 1.0
    failed = scorer.score(_traj(answer="41"))
    assert failed.reward == 0.0 and failed.details["exit_code"] == 1


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "test_it.py").write_text("def test_a(): pass\ndef test_b(): pass\ndef test_c(): assert False\n")
    return ws


def _sandboxed(workspace: Path, **limits):
    """A runner into `workspace` as a harness builds it: bubblewrap where it works, else the accepted fallback."""
    from tracegym.harnesses.sandbox import (
        BwrapSandbox,
        Limits,
        SandboxIsolationWarning,
        SubprocessSandbox,
        bwrap_problem,
    )
    from tracegym.harnesses.sandbox.eval_runner import SandboxRunner

    if bwrap_problem() is None:
        sandbox = BwrapSandbox()
    else:
        with pytest.warns(SandboxIsolationWarning):
            sandbox = SubprocessSandbox()
    return SandboxRunner(lambda: sandbox, workspace, Limits(**limits), unisolated_allowed=True)


@pytest.mark.slow  # runs pytest twice in the sandbox
def test_command_pass_fraction_from_pytest_output_and_junit(tmp_path):
    traj = _traj()
    traj.workspace = _workspace(tmp_path)
    traj.runner = _sandboxed(traj.workspace)
    from_output = _scorer("""
    evals:
      - name: t
        kind: command
        command: python -m pytest -q -p no:cacheprovider
        reward_from: pytest
        timeout_s: 600  # a hang guard: one pytest run here took over 60 s on a loaded machine
    """, tmp_path).score(traj)
    assert from_output.reward == pytest.approx(2 / 3) and from_output.details["failed"] == 1
    from_junit = _scorer("""
    evals:
      - name: t
        kind: command
        command: python -m pytest -q -p no:cacheprovider --junitxml=report.xml
        reward_from: junit
        junit_xml: report.xml
        timeout_s: 600
    """, tmp_path).score(traj)
    assert from_junit.reward == pytest.approx(2 / 3)


def test_a_sandbox_limit_that_cut_the_report_short_is_named(tmp_path):
    traj = _traj()
    traj.workspace = _workspace(tmp_path)
    traj.runner = _sandboxed(traj.workspace, output_bytes=1000)
    flood = _scorer("evals:\n  - name: t\n    kind: command\n    command: yes | head -c 100000\n"
                    "    reward_from: pytest\n", tmp_path).score(traj)
    assert flood.reward is None and "stopped the command at its output limit" in flood.error


def test_command_timeout_kills_it_and_no_tests_is_an_error(tmp_path):
    finished = tmp_path / "slow.finished"
    slow = _scorer(f"evals:\n  - name: c\n    kind: command\n    command: sleep 600; touch {finished}\n"
                   "    timeout_s: 0.5\n", tmp_path)
    assert "timed out after 0.5s (the command was killed)" in slow.score(_traj()).error
    assert not finished.exists()  # killed at its limit, not ended by itself
    empty = _scorer("evals:\n  - name: c\n    kind: command\n    command: echo hi\n    reward_from: pytest\n",
                    tmp_path).score(_traj())
    assert empty.reward is None and "no pytest summary line" in empty.error


# judge --------------------------------------------------------------------

class _Judge(BaseHTTPRequestHandler):
    reply = "Score: 4"
    seen: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Judge.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": _Judge.reply}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def judge_server():
    server = HTTPServer(("127.0.0.1", 0), _Judge)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Judge.seen = []
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


JUDGE = """
evals:
  - name: j
    kind: judge
    scale: [1, 5]
    rubric: "Did the agent answer {{{{ metadata.question }}}}? Answer: {{{{ final_answer }}}}"
    {extra}
"""


def test_judge_over_an_openai_compatible_endpoint(tmp_path, judge_server, monkeypatch):
    monkeypatch.setenv("TRACEGYM_JUDGE_BASE_URL", judge_server)
    monkeypatch.setenv("TRACEGYM_JUDGE_MODEL", "grader-1")
    monkeypatch.setenv("JUDGE_KEY", "sk-test")
    scorer = _scorer(JUDGE.format(extra="api_key_env: JUDGE_KEY"), tmp_path)
    _Judge.reply = "The answer is right but terse.\nScore: 4"
    result = scorer.score(_traj(answer="Oslo", question="the capital of Norway"))
    assert result.reward == 0.75 and result.details["score"] == 4
    request = _Judge.seen[-1]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    assert request["body"]["model"] == "grader-1"
    assert "Did the agent answer the capital of Norway? Answer: Oslo" in request["body"]["messages"][1]["content"]


@pytest.mark.parametrize("reply, message", [("Looks fine to me.", "has no 'Score: N'"),
                                            ("Score: 9", "outside its scale")])
def test_judge_garbage_replies_are_recorded_errors(tmp_path, judge_server, reply, message):
    scorer = _scorer(JUDGE.format(extra=f"base_url: {judge_server}\n    model: grader-1"), tmp_path)
    _Judge.reply = reply
    result = scorer.score(_traj(answer="Oslo", question="q"))
    assert result.reward is None and message in result.error


def test_judge_unreachable_endpoint_is_a_recorded_error(tmp_path):
    scorer = _scorer(JUDGE.format(extra="base_url: http://127.0.0.1:9/v1\n    model: m\n    timeout_s: 2"), tmp_path)
    result = scorer.score(_traj(answer="Oslo", question="q"))
    assert result.reward is None and "ConnectError" in result.error


def test_judge_config_problems_are_caught_when_built(tmp_path, monkeypatch):
    monkeypatch.delenv("TRACEGYM_JUDGE_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="needs a base URL and a model name"):
        _scorer(JUDGE.format(extra="backend: openai"), tmp_path)
    with pytest.raises(ConfigError, match="scale must lie within 0-9"):
        _scorer(JUDGE.format(extra="").replace("[1, 5]", "[1, 10]"), tmp_path)
    with pytest.raises(ConfigError, match="not a valid jinja2 template"):
        _scorer(JUDGE.format(extra="").replace("}}?", "?"), tmp_path)


def _tiny_judge_model(folder: Path) -> Path:
    """A randomly initialised one-layer Llama with a character-level tokenizer, built here, not downloaded."""
    import string

    import torch
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "<|im_start|>": 1, "<|im_end|>": 2}
    for ch in sorted(set(string.printable)):
        vocab.setdefault(ch, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<|im_end|>",
                                   chat_template=template)
    fast.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256)
    LlamaForCausalLM(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def test_judge_with_a_local_model_reads_the_score_distribution(tmp_path, monkeypatch):
    monkeypatch.delenv("TRACEGYM_JUDGE_BASE_URL", raising=False)
    model = _tiny_judge_model(tmp_path / "tiny-judge")
    scorer = _scorer(JUDGE.format(extra=f"model: {model}"), tmp_path)
    traj = _traj(answer="Oslo " * 200, question="the capital of Norway")  # longer than the model's 256 positions
    first, second = scorer.score(traj), scorer.score(traj)
    assert first.ok and 0.0 <= first.reward <= 1.0 and first == second
    probs = first.details["probabilities"]
    assert list(probs) == ["1", "2", "3", "4", "5"] and math.isclose(sum(probs.values()), 1.0, abs_tol=1e-4)
    assert first.reward == pytest.approx((first.details["expected_score"] - 1) / 4)


# label and weighted -------------------------------------------------------

def test_label_replays_a_recorded_judgement(tmp_path, store):
    store.con.execute("INSERT INTO scores VALUES ('trace-1', 'review', NULL, 'pass', 'human', NULL), "
                      "('trace-2', 'review', NULL, 'meh', 'human', NULL), ('trace-1', 'stars', 4, NULL, 'eval', NULL)")
    labels = _scorer("""
    evals:
      - name: review
        kind: label
        score: review
        labels: {pass: 1, fail: 0}
    """, tmp_path, store=store)
    assert labels.score(_traj()).reward == 1.0
    unknown = labels.score(Trajectory([], trace_id="trace-2"))
    assert unknown.reward is None and "'meh' is not in labels" in unknown.error
    assert "no score 'review' is recorded for trace trace-9" in labels.score(Trajectory([], trace_id="trace-9")).error
    stars = _scorer("evals:\n  - {name: s, kind: label, score: stars, value_range: [0, 5]}\n", tmp_path, store=store)
    assert stars.score(_traj()).reward == 0.8


def test_label_without_a_store_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="reads recorded scores from the store"):
        _scorer("evals:\n  - {name: s, kind: label, score: stars}\n", tmp_path)


def test_weighted_mean_and_a_failing_part_fails_the_whole(tmp_path):
    text = """
    evals:
      - {name: a, kind: match, mode: contains, expected: refund}
      - {name: b, kind: match, mode: exact, expected_from: metadata.expected}
      - {name: both, kind: weighted, parts: {a: 3, b: 1}}
    """
    scorer = _scorer(text, tmp_path, "both")
    result = scorer.score(_traj(answer="refund sent", expected="nope"))
    assert result.reward == 0.75 and result.details["a"]["reward"] == 1.0
    broken = scorer.score(_traj(answer="refund sent"))
    assert broken.reward is None and "b: PathError" in broken.error


def test_coerce_result_rejects_garbage():
    assert coerce_result(True, "x") == ScoreResult(1.0)
    assert coerce_result({"reward": 0.2, "k": 1}, "x") == ScoreResult(0.2, {"k": 1})
    assert "without a reward/score/value key" in coerce_result({"r": 1}, "x").error
    assert "not a number" in coerce_result(None, "x").error
    with pytest.raises(ValueError):
        ScoreResult(1.2)


@pytest.mark.slow
def test_judge_default_local_model_is_smollm2_and_answers_with_a_score(tmp_path, monkeypatch):
    monkeypatch.delenv("TRACEGYM_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("TRACEGYM_JUDGE_MODEL", raising=False)
    scorer = _scorer(JUDGE.format(extra=""), tmp_path)
    result = scorer.score(_traj(answer="The capital of Norway is Oslo.", question="the capital of Norway"))
    assert result.ok and 0.0 <= result.reward <= 1.0
    # The instruct model, asked for `Score: N`, puts most of its next-token mass on the scale's digits.
    assert result.details["digit_mass"] > 0.3
