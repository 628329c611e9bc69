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

Parts (tracegym/ingest/parts.py): a trace may arrive over several files or ingests: child runs posted after
their root, a run's end and outputs in a later file than its start (the SDK posts a run when it starts and
patches it when it ends, without its inputs), feedback in a file of its own. Each version of a run is kept
(`run:<id>@<digest>`) and a run is read from all its versions (`merged_run`); feedback is kept by its id.
Feedback that names no trace goes to the trace of its run, found in the file or among the stored parts; a
run not seen yet keeps it under the run's id (the trace's own id when the run is the root), and it moves to
the run's trace when the run arrives.
"""

from __future__ import annotations

import hashlib
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
from tracegym.ingest.parts import Part, PartStore
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
                digest = _digest(rec.value)
                part = Part(f"feedback:{rec.value.get('id') or digest}", digest, {"feedback": rec.value})
                feedback.append(Located("", pos, rec.locator, rec.value, rec.value, part))
            else:
                yield BadRecord(rec.locator, "not a LangSmith run or feedback", rec.raw or to_json(rec.value))
        if src.parts is not None:
            src.parts.adopt({str(m.item.get("id")): m.key for m in runs})
        yield from trace_records(_with_feedback(runs, feedback, src.parts), "lines" if src.sample.jsonl else "items",
                                 _group, src.parts, _revive)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        yield build_trace(record.value, self.name)


def _is_run(obj: dict[str, Any]) -> bool:
    return "run_type" in obj and "id" in obj and "start_time" in obj


def _is_feedback(obj: dict[str, Any]) -> bool:
    return "key" in obj and ("run_id" in obj or "trace_id" in obj) and "run_type" not in obj


def _run_tree(run: dict[str, Any], pos: int, where: str, trace_id: str | None) -> Iterator[Located]:
    """The run and, depth first, its `child_runs` (which inherit the root's trace id)."""
    key = str(run.get("trace_id") or trace_id or run.get("id"))
    alone = {k: v for k, v in run.items() if k != "child_runs"}
    digest = _digest(alone)
    yield Located(key, pos, where, run, alone, Part(f"run:{run.get('id')}@{digest}", digest, {"run": alone}))
    children = run.get("child_runs") or []
    for j, child in enumerate(children if isinstance(children, list) else []):
        if isinstance(child, dict):
            yield from _run_tree(child, pos, f"{where}.child_runs[{j}]", key)


def _digest(value: Any) -> str:
    """A part's version and sort key: a digest of its content, the same whichever file it came in."""
    return hashlib.sha1(to_json(value).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _with_feedback(runs: list[Located], feedback: list[Located],
                   parts: PartStore | None) -> Iterator[Located | BadRecord]:
    """Runs, then feedback keyed to its trace: the one it names, else its run's (in this file, else among the
    stored parts), else its run's id until that run is seen (see the module's docstring)."""
    yield from runs
    trace_of_run = {str(m.item.get("id")): m.key for m in runs}
    unknown = [f"run:{m.item['run_id']}" for m in feedback
               if not m.item.get("trace_id") and m.item.get("run_id") and str(m.item["run_id"]) not in trace_of_run]
    if parts is not None:
        trace_of_run.update({name.removeprefix("run:"): key for name, key in parts.owners(unknown).items()})
    for m in feedback:
        run_id = m.item.get("run_id")
        key = m.item.get("trace_id") or trace_of_run.get(str(run_id)) or run_id
        if not key:
            yield BadRecord(m.where, "feedback that names neither a run nor a trace", to_json(m.raw))
            continue
        m.key = str(key)
        yield m


def _revive(doc: Any) -> Any:
    """A stored part read back: a run (one version of it) or a feedback."""
    return doc["run"] if "run" in doc else doc["feedback"]


def merged_run(versions: list[dict[str, Any]]) -> dict[str, Any]:
    """One run from its versions: posted at its start and patched at its end, or listed while running and once
    done. A field empty in one version is taken from another; where two disagree, the finished one (with an
    end_time) wins. Versions are taken in an order of their own content, so any order of arrival gives one run."""
    out: dict[str, Any] = {}
    for version in sorted(versions, key=lambda v: (v.get("end_time") is not None, to_json(v))):
        for key, value in version.items():
            if key not in out or value not in (None, {}, [], ""):
                out[key] = value
    return out


def _runs(members: list[Located]) -> list[Located]:
    """The group's runs, each merged from the versions it came in."""
    by_id: dict[str, list[Located]] = {}
    for m in members:
        if not _is_feedback(m.item):
            by_id.setdefault(str(m.item.get("id")), []).append(m)
    out = []
    for versions in by_id.values():
        first = min(versions, key=lambda m: (m.pos == 0, m.pos))
        run = versions[0].item if len(versions) == 1 else merged_run([m.item for m in versions])
        out.append(Located(first.key, first.pos, first.where, run, run if len(versions) > 1 else first.raw))
    return out


def _group(key: str, members: list[Located]) -> Iterator[SpanGroup | BadRecord]:
    runs = _runs(members)
    facts, bad = split_bad(facts_or_bad(runs, run_facts))
    scores = []
    for m in members:
        if not _is_feedback(m.item):
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
