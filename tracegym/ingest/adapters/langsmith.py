"""LangSmith run exports: runs (flat, or as trees with `child_runs`) and their feedback.

Schema: langchain-ai/langsmith-sdk `python/langsmith/schemas.py` (`RunBase`, `Run`,
`FeedbackBase`, `Feedback`, `FeedbackSourceBase`). A file is a JSON array, a JSON
document or JSONL of `Run` objects as `Client.list_runs` / `read_run` return them;
`Feedback` objects (`Client.list_feedback`) may sit in the same file.

- Runs group by `trace_id` (the root run's id when absent) and order by
  `dotted_order`, else `start_time`. The session is the thread:
  `extra.metadata.session_id` / `thread_id` / `conversation_id`; a run's own
  `session_id` is its project and goes to metadata as `project_id`.
- `llm` runs give the conversation: `inputs.messages` (OpenAI dicts or LangChain
  serialized messages, batched as lists of lists) or `inputs.prompts`, and
  `outputs.generations` (LangChain `LLMResult`) or `outputs.choices` (OpenAI).
  Tokens `prompt_tokens` / `completion_tokens` (else the message's
  `usage_metadata`); model `extra.metadata.ls_model_name`.
- `tool` runs give tool results: `name`, `inputs` (`{"input": …}` unwrapped) as
  arguments, `outputs.output` as result (a LangChain `ToolMessage` gives its
  `tool_call_id` and `status`). Linked to the assistant's tool calls by id, else
  by name in order. `error` (or `status` "error", or `ToolMessage.status` "error")
  marks the call as failed; `error` on other runs is listed in the trace metadata.
- Feedback -> scores: `key` the name, `score` the value (booleans as 1/0), `value`
  the label, `comment` the comment. Kind by `feedback_source.type`: 'app' (a person
  annotating in the LangSmith app or an annotation queue) and 'api' (the default of
  `Client.create_feedback`, the documented way to log end-user feedback) -> human;
  'model' (what `evaluate` and `evaluate_run` log for evaluator results) and any
  other type -> eval. Feedback with no source -> eval.
- Outcome follows the rule in `spans.py`: only a success/correct/resolved-like 0/1 score sets it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from tracegym.ingest.adapters.base import Adapter, SourceFile
from tracegym.ingest.adapters.span_messages import Turn, as_text, chat_turn, message_turns
from tracegym.ingest.adapters.spans import (
    LlmCall,
    Located,
    SpanFacts,
    SpanGroup,
    ToolRun,
    build_trace,
    facts_or_bad,
    score_value,
    split_bad,
    trace_records,
)
from tracegym.ingest.normalize import opt_int, parse_ts, to_json
from tracegym.ingest.reading import Sample, iter_json_values
from tracegym.ingest.records import BadRecord, RawRecord, Score, Trace

HUMAN_SOURCES = {"app", "api"}
THREAD_KEYS = ("session_id", "thread_id", "conversation_id")


class LangSmithAdapter(Adapter):
    name = "langsmith"
    upserts = True
    description = "LangSmith runs (Run objects, flat or with child_runs) and their Feedback"

    def sniff(self, sample: Sample) -> bool:
        first = sample.first
        return isinstance(first, dict) and (_is_run(first) or _is_feedback(first))

    def records(self, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
        runs: list[Located] = []
        feedback: list[Located] = []
        for i, rec in enumerate(iter_json_values(src.path, src.sample.jsonl), start=1):
            if isinstance(rec, BadRecord):
                yield rec
                continue
            pos = int(rec.locator.split()[1]) if rec.locator.startswith("line ") else i
            if isinstance(rec.value, dict) and _is_run(rec.value):
                runs.extend(_run_tree(rec.value, pos, rec.locator, None))
            elif isinstance(rec.value, dict) and _is_feedback(rec.value):
                feedback.append(Located("", pos, rec.locator, rec.value, rec.value))
            else:
                yield BadRecord(rec.locator, "not a LangSmith run or feedback", rec.raw or to_json(rec.value))
        yield from trace_records(_with_feedback(runs, feedback), "lines" if src.sample.jsonl else "items", _group)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        yield build_trace(record.value, self.name)


def _is_run(obj: dict[str, Any]) -> bool:
    return "run_type" in obj and "id" in obj and "start_time" in obj


def _is_feedback(obj: dict[str, Any]) -> bool:
    return "key" in obj and ("run_id" in obj or "trace_id" in obj) and "run_type" not in obj


def _run_tree(run: dict[str, Any], pos: int, where: str, trace_id: str | None) -> Iterator[Located]:
    """The run and, depth first, its `child_runs` (which inherit the root's trace id)."""
    key = str(run.get("trace_id") or trace_id or run.get("id"))
    yield Located(key, pos, where, run, {k: v for k, v in run.items() if k != "child_runs"})
    children = run.get("child_runs") or []
    for j, child in enumerate(children if isinstance(children, list) else []):
        if isinstance(child, dict):
            yield from _run_tree(child, pos, f"{where}.child_runs[{j}]", key)


def _with_feedback(runs: list[Located], feedback: list[Located]) -> Iterator[Located | BadRecord]:
    """Runs, then feedback keyed to its trace (through its run when it names no trace)."""
    yield from runs
    trace_of_run = {str(m.item.get("id")): m.key for m in runs}
    for m in feedback:
        key = m.item.get("trace_id") or trace_of_run.get(str(m.item.get("run_id")))
        if key is None:
            yield BadRecord(m.where, f"feedback for run {m.item.get('run_id')}, which is not in this file",
                            to_json(m.raw))
            continue
        m.key = str(key)
        yield m


def _group(key: str, members: list[Located]) -> Iterator[SpanGroup | BadRecord]:
    runs = [m for m in members if _is_run(m.item)]
    facts, bad = split_bad(facts_or_bad(runs, run_facts))
    scores = []
    for m in members:
        if _is_run(m.item):
            continue
        try:
            scores.append(feedback_score(m.item))
        except (ValueError, TypeError) as e:
            bad.append(BadRecord(m.where, f"{type(e).__name__}: {e}", to_json(m.raw)))
    yield from bad
    if facts or scores:
        root = next((m.item for m in runs if not m.item.get("parent_run_id")), None)
        yield SpanGroup(key, facts, scores, info=_root_info(root) if root else {})


def _root_info(root: dict[str, Any]) -> dict[str, Any]:
    info = {"root_run": root.get("name")}
    for src, dst in (("session_id", "project_id"), ("tags", "tags"), ("feedback_stats", "feedback_stats")):
        if root.get(src) is not None:
            info[dst] = root[src]
    return info


def run_facts(run: dict[str, Any]) -> SpanFacts:
    run_type, start = run.get("run_type"), parse_ts(run.get("start_time"))
    if not isinstance(run_type, str) or start is None:
        raise ValueError("a run needs a run_type and a start_time")
    error = run.get("error") or ("error" if run.get("status") == "error" else None)
    facts = SpanFacts(run.get("name"), start, parse_ts(run.get("end_time")),
                      order=str(run.get("dotted_order") or ""), error=as_text(error))
    extra = run.get("extra") if isinstance(run.get("extra"), dict) else {}
    metadata = extra.get("metadata") if isinstance(extra.get("metadata"), dict) else {}
    facts.session_id = next((str(metadata[k]) for k in THREAD_KEYS if metadata.get(k)), None)
    if run_type == "llm":
        facts.kind = "llm"
        facts.call = _llm_call(run, metadata)
    elif run_type == "tool":
        facts.kind = "tool"
        facts.tool = _tool_run(run, facts.error)
    return facts


def _llm_call(run: dict[str, Any], metadata: dict[str, Any]) -> LlmCall:
    inputs = run.get("inputs") or {}
    outputs = run.get("outputs") or {}
    if not isinstance(inputs, dict) or not isinstance(outputs, dict):
        raise ValueError("run inputs and outputs must be objects")
    if "messages" in inputs:
        turns = message_turns(inputs["messages"], "user")
    else:
        prompts = inputs.get("prompts") or []
        turns = [Turn("user", prompts[0] if isinstance(prompts[0], str) else as_text(prompts[0]))] if prompts else []
    usage = _usage(outputs)
    return LlmCall(
        inputs=turns,
        outputs=message_turns(outputs, "assistant")[:1] if outputs else [],
        input_tokens=opt_int(run.get("prompt_tokens") if run.get("prompt_tokens") is not None
                             else usage.get("prompt_tokens", usage.get("input_tokens"))),
        output_tokens=opt_int(run.get("completion_tokens") if run.get("completion_tokens") is not None
                              else usage.get("completion_tokens", usage.get("output_tokens"))),
        model=metadata.get("ls_model_name") if isinstance(metadata.get("ls_model_name"), str) else None,
    )


def _usage(outputs: dict[str, Any]) -> dict[str, Any]:
    """Token counts where the SDK leaves them in the outputs: `usage_metadata` (LangChain, and what
    `wrap_openai` sets), or the provider's own `usage` (an OpenAI response as the output)."""
    for key in ("usage_metadata", "usage"):
        if isinstance(outputs.get(key), dict):
            return outputs[key]
    return {}


def _tool_run(run: dict[str, Any], error: str | None) -> ToolRun:
    name = run.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("a tool run needs a name")
    inputs = run.get("inputs") or {}
    arguments = inputs.get("input") if isinstance(inputs, dict) and set(inputs) == {"input"} else inputs
    outputs = run.get("outputs") or {}
    output = outputs.get("output", outputs) if isinstance(outputs, dict) else outputs
    result, call_id, failed = as_text(output) if output != {} else None, None, error is not None
    if isinstance(output, dict) and (output.get("type") == "constructor" or "tool_call_id" in output):
        turn = chat_turn(output, "tool")  # a LangChain ToolMessage
        result, call_id, failed = turn.content, turn.tool_call_id, failed or bool(turn.is_error)
    return ToolRun(name, call_id, arguments, result if result is not None else error, is_error=failed)


def feedback_score(fb: dict[str, Any]) -> Score:
    key = fb.get("key")
    if not isinstance(key, str) or not key:
        raise ValueError("feedback needs a key")
    source = fb.get("feedback_source") if isinstance(fb.get("feedback_source"), dict) else {}
    value = fb.get("value")
    return Score(
        name=key,
        value=score_value(fb.get("score"), "feedback score"),
        label=value if isinstance(value, str) else (to_json(value) if value is not None else None),
        kind="human" if source.get("type") in HUMAN_SOURCES else "eval",
        comment=fb.get("comment") if isinstance(fb.get("comment"), str) else None,
    )
