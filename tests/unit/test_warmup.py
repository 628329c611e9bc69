"""Warm-start examples from real τ-bench traces: the same prompts the harness renders for a task, targets that
end at the model's end-of-turn token, held-out source tasks left out."""

from __future__ import annotations

import pytest

from tracegym.tasks.prompts import PromptSection
from tracegym.training.config import WarmupSection

POLICY = PromptSection(context="last-user", system_max_chars=0, tool_schemas="compact", max_tokens=600)


@pytest.fixture(scope="module")
def tau_store(tmp_path_factory: pytest.TempPathFactory):
    from tests.conftest import TRACES
    from tracegym.ingest.pipeline import ingest_paths
    from tracegym.store import open_store

    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES}")
    store = open_store(tmp_path_factory.mktemp("warm") / "store.duckdb")
    ingest_paths(store, [str(TRACES / "tau-bench")])
    yield store
    store.close()


@pytest.fixture(scope="module")
def tokenizer():
    from tracegym.models.tiny import smollm2_tokenizer

    return smollm2_tokenizer()


def _build(store, tokenizer, exclude: set[str], **warmup):
    from tracegym.training.warmup import build_examples

    return build_examples(store, tokenizer, WarmupSection(steps=1, formats=["tau-bench"], **warmup), POLICY,
                          [tokenizer.eos_token_id], exclude, seed=0)


def test_examples_are_successful_turns_ending_at_end_of_turn(tau_store, tokenizer) -> None:
    data = _build(tau_store, tokenizer, set())
    success = tau_store.scalar("SELECT count(*) FROM traces WHERE outcome = 'success'")
    assert data.counts["traces"] == success > 0
    assert data.counts["examples"] == len(data.examples) > 100
    assert data.counts["template_mismatch"] == 0
    for example in data.examples:
        assert 0 < example.n_prompt < len(example.input_ids) and example.n_prompt <= POLICY.max_tokens
        assert example.input_ids[-1] == tokenizer.eos_token_id
        assert tokenizer.eos_token_id not in example.input_ids[example.n_prompt:-1]
    calls = [e for e in data.examples if "<tool_call>" in tokenizer.decode(e.input_ids[e.n_prompt:])]
    assert calls, "tool-call turns are targets, rendered in the Hermes form the harness parses"


@pytest.mark.slow  # tokenizes every successful τ-bench trace three times
def test_tool_call_turns_only_and_excluded_tasks(tau_store, tokenizer) -> None:
    everything = _build(tau_store, tokenizer, set())
    calls_only = _build(tau_store, tokenizer, set(), turns="tool_calls")
    assert 0 < calls_only.counts["examples"] < everything.counts["examples"]
    keys = {row["k"] for row in tau_store.query(
        "SELECT DISTINCT 'tau-bench:task_id=' || json_extract_string(metadata, '$.task_id') AS k FROM traces "
        "WHERE outcome = 'success' LIMIT 5")}
    fewer = _build(tau_store, tokenizer, keys)
    assert fewer.counts["excluded_traces"] > 0
    assert fewer.counts["traces"] + fewer.counts["excluded_traces"] == everything.counts["traces"]


def test_warm_start_prompt_equals_the_harness_prompt_of_the_same_cut(tau_store, tokenizer) -> None:
    """A task cut from a trace and shortened by the policy renders exactly like the warm-start example there."""
    from tracegym.evals.scorers.recorded import iter_recorded
    from tracegym.harnesses.base import openai_tools
    from tracegym.harnesses.chat_template import ChatRenderer
    from tracegym.tasks.cuts import build_prompt, cut_points
    from tracegym.tasks.prompts import shorten_task
    from tracegym.tasks.schemas import format_tools
    from tracegym.tasks.spec import EvalRef, Provenance, ScorerBinding, TaskSpec
    from tracegym.training.warmup import _example

    trace = next(iter_recorded(tau_store, "outcome = 'success'"))
    tools = format_tools(tau_store, "tau-bench")
    compared = 0
    for cut in cut_points(trace, None, "turns"):
        example = _example(trace, cut, tools, tokenizer, WarmupSection(steps=1), POLICY, [tokenizer.eos_token_id],
                           dict.fromkeys(("turns", "too_long", "template_mismatch"), 0))
        if example is None:  # a prompt over max_tokens
            continue
        task = TaskSpec(task_id="t", split="train", harness="replay",
                        prompt=build_prompt(trace, cut, "last-user", None), tools=tools,
                        scorer=ScorerBinding(evals=[EvalRef(name="x")]),
                        provenance=Provenance(trace_id=trace.trace_id, format="tau-bench", source_task="s",
                                              cut_message_idx=cut))
        short = shorten_task(task, POLICY)
        harness_ids = ChatRenderer(tokenizer, openai_tools(short) or None).ids(short.messages())
        assert example.input_ids[: example.n_prompt] == harness_ids, f"cut {cut}"
        assert short.tools == [] and "get_user_details(user_id)" in (short.prompt.system or "")
        compared += 1
    assert compared >= 2
