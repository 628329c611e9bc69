"""`kind: reference`: does the reply take the step that succeeded from here?

A task's references are the recorded next steps that went well at its cut (`TaskSpec.reference_steps`): the
source trace's own turn there, the turns of successful attempts at the same source task that stood at the same
point, or the trace's later answer. The reply is compared with each, by the reference's kind, and keeps its best:

- tool calls: the same tool with the arguments that matter (`call_match`);
- a ```bash block: the same programs on the same paths (`bash_actions`);
- prose: the entities from the conversation it names, its content words, and its act (`prose`).

Ids, amounts and dates in the reply that neither the conversation nor any reference holds were made up, and each
costs a share of the reward. On a recorded trace (`evals check`) the references of each assistant turn are the
turns of the other successful attempts at the same point, read from the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from tracegym.evals.scorers.base import Scorer, ScorerContext, StoreReader
from tracegym.evals.scorers.bash_actions import BashAction, bash_blocks, read_action
from tracegym.evals.scorers.call_match import compare_calls
from tracegym.evals.scorers.config import EvalsFile, ReferenceEval
from tracegym.evals.scorers.entities import INVENTABLE, Entity, entities, found_in, same_path
from tracegym.evals.scorers.prose import Conversation, compare_prose
from tracegym.evals.scorers.recorded import RecordedTrace, findings_by_trace, iter_recorded, successful_siblings
from tracegym.evals.scorers.siblings import sibling_references
from tracegym.evals.scorers.trajectory import CallView, Reference, ScoreResult, Trajectory, parse_arguments

_CACHED_TASKS = 4096
"""Tasks whose prompt entities a scorer keeps (a task set's worth; cleared past it)."""


class ReferenceScorer(Scorer):
    def __init__(self, spec: ReferenceEval, store: StoreReader | None) -> None:
        super().__init__(spec.name, spec.timeout_s)
        self.spec = spec
        self.store = store
        self._siblings: dict[str, list[tuple[RecordedTrace, set[int]]]] = {}
        self._conversations: dict[str, Conversation] = {}

    def _score(self, traj: Trajectory) -> ScoreResult:
        if traj.prompt_messages == 0 and traj.task_id is None:
            return self._recorded(traj)
        if not traj.references:
            raise LookupError("the task records no successful step at its cut to compare with (its "
                              "reference_steps are empty). Fix: generate the task set with this eval bound; tasks "
                              "whose trace and siblings recorded no good step there cannot be scored by it")
        replies = traj.messages[traj.prompt_messages:]
        reply = next((m for m in replies if m.get("role") == "assistant"), {})
        return score_step(reply, traj.references, self._shown(traj), self.spec.invented_penalty)

    def _shown(self, traj: Trajectory) -> Conversation:
        """The task's prompt and prior calls as entities, read once per task (every rollout of a task shares them)."""
        key = f"{traj.task_id}\x1f{traj.prompt_messages}"
        shown = self._conversations.get(key)
        if shown is None:
            shown = Conversation.of(conversation_texts(traj.messages[:traj.prompt_messages], traj.prior_calls))
            if len(self._conversations) >= _CACHED_TASKS:
                self._conversations.clear()
            self._conversations[key] = shown
        return shown

    def _recorded(self, traj: Trajectory) -> ScoreResult:
        """A recorded trace: each assistant turn against the other successful attempts' turns at its point."""
        if self.store is None:
            raise LookupError("a recorded trace's references are the other successful attempts at its task, read "
                              "from the store, and none is open here. Fix: pass --store")
        if traj.trace_id is None:
            raise LookupError("the trajectory names no recorded trace")
        [trace] = iter_recorded(self.store, "trace_id = ?", [traj.trace_id])
        siblings = self._siblings_of(trace)
        rewards: list[tuple[int, float]] = []
        for pos, row in enumerate(trace.messages):
            if row["role"] != "assistant":
                continue
            references = sibling_references(trace, row["idx"], siblings)
            if references:
                messages = trace.openai_messages(upto=pos + 1)
                result = score_step(messages[-1], references, Conversation.of(conversation_texts(messages[:-1], [])),
                                    self.spec.invented_penalty)
                rewards.append((row["idx"], float(result.reward or 0.0)))
        if not rewards:
            raise LookupError(f"no other successful attempt at this trace's task stood where it stood "
                              f"({len(siblings)} successful attempts): nothing to compare its turns with")
        values = [r for _, r in rewards]
        reward = {"min": min(values), "last": values[-1]}.get(self.spec.turns, sum(values) / len(values))
        return ScoreResult(reward, {"turns_scored": len(rewards), "siblings": len(siblings),
                                    "turns": {str(i): round(r, 3) for i, r in rewards[:20]}})

    def _siblings_of(self, trace: RecordedTrace) -> list[tuple[RecordedTrace, set[int]]]:
        """The other successful attempts at the trace's source task, with their findings (every successful attempt
        is cached per task, the trace itself included, so that it is a sibling of the next one)."""
        key = trace.task_key()
        store = self.store
        if key not in self._siblings and store is not None:
            ids = successful_siblings(store, [trace]) + ([trace.trace_id] if trace.outcome == "success" else [])
            found = findings_by_trace(store, ids) if ids else {}
            traces = list(iter_recorded(store, "trace_id IN (SELECT unnest(?))", [ids])) if ids else []
            self._siblings[key] = [(t, found.get(t.trace_id, set())) for t in traces]
        return [(t, f) for t, f in self._siblings.get(key, []) if t.trace_id != trace.trace_id]


def conversation_texts(messages: Sequence[dict[str, Any]], prior: Sequence[CallView]) -> list[str]:
    """What an attempt was shown: every message's text (the system prompt's policy included) and call arguments,
    and the calls made before the cut with their results."""
    texts = []
    for m in messages:
        texts.append(m.get("content") or "")
        texts += [str((c.get("function") or {}).get("arguments") or "") for c in m.get("tool_calls") or []]
    for call in prior:
        texts += [json.dumps(call.arguments, default=str), call.result or ""]
    return texts


def score_step(reply: dict[str, Any], references: Sequence[Reference], shown: Conversation,
               invented_penalty: float) -> ScoreResult:
    """The reply's best match among `references`, less its share for each made-up entity."""
    text = reply.get("content") or ""
    calls = [CallView(str((c.get("function") or {}).get("name")), parse_arguments((c.get("function") or {})
                                                                                    .get("arguments")))
             for c in reply.get("tool_calls") or []]
    if not text.strip() and not calls:
        return ScoreResult(0.0, {"empty": True, "references": len(references)})
    action = read_action(text)
    scored = [(_compare(text, calls, action, ref, shown), ref) for ref in references]
    (score, kind, details), best = max(scored, key=lambda s: s[0][0])
    invented = made_up(text, calls, shown, references)
    reward = score * (1.0 - invented_penalty) ** len(invented)
    return ScoreResult(reward, {
        "kind": kind, "match": round(score, 4), **details, "invented": invented[:10],
        "reference": {"source": best.source, "trace_id": best.trace_id},
        "references": len(references), "per_reference": [round(s[0][0], 3) for s in scored[:10]]})


def _compare(text: str, calls: list[CallView], action: BashAction, ref: Reference,
             shown: Conversation) -> tuple[float, str, dict[str, Any]]:
    """(score, kind of the reference, what matched and what was missing). A reference with a ```bash block is
    a command, whatever call a recording derived from it (mini-swe-agent's traces record the block as a `bash`
    call too)."""
    if bash_blocks(ref.text):
        return _compare_bash(action, read_action(ref.text))
    if ref.calls:
        match = compare_calls(calls, ref.calls)
        return match.score, "calls", {"matched": match.matched, "missing": match.missing}
    prose = compare_prose(text, ref.text, shown)
    return prose.score, "prose", prose.details()


def _compare_bash(got: BashAction, want: BashAction) -> tuple[float, str, dict[str, Any]]:
    """The harmonic mean of how many of the reference's programs (and paths) the reply has and how many of the
    reply's are the reference's: an exact program key counts 1, the same program with another subcommand or
    mode (`sed` for `sed -i`) half."""
    programs = _overlap(list(got.programs), list(want.programs),
                        lambda a, b: 1.0 if a == b else 0.5 if a.split()[0] == b.split()[0] else 0.0)
    parts = {"programs": programs}
    if want.paths or got.paths:
        parts["paths"] = _overlap(sorted(got.paths), sorted(want.paths), lambda a, b: float(same_path(a, b)))
    details = {"programs": list(got.programs)[:10], "want_programs": list(want.programs)[:10],
               "missing_paths": sorted(p for p in want.paths if not any(same_path(p, q) for q in got.paths))[:10],
               "parts": {k: round(v, 3) for k, v in parts.items()}}
    return sum(parts.values()) / len(parts), "bash", details


def _overlap(got: list[str], want: list[str], credit: Callable[[str, str], float]) -> float:
    if not got or not want:
        return float(not got and not want)
    recall = sum(max(credit(g, w) for g in got) for w in want) / len(want)
    precision = sum(max(credit(g, w) for w in want) for g in got) / len(got)
    return 2 * recall * precision / (recall + precision) if recall + precision else 0.0


def made_up(text: str, calls: list[CallView], shown: Conversation, references: Sequence[Reference]) -> list[str]:
    """Ids, amounts and dates the reply names (in its words or its calls' arguments) that neither the conversation
    nor any reference holds."""
    said = entities("\n".join([text, *(json.dumps(c.arguments, default=str) for c in calls)]))
    known: set[Entity] = set(shown.entities)
    for ref in references:
        known |= entities("\n".join([ref.text, *(json.dumps(c.arguments, default=str) for c in ref.calls)]))
    return sorted(f"{k}:{v}" for k, v in said if k in INVENTABLE and not found_in((k, v), known))


def build(spec: ReferenceEval, ctx: ScorerContext, evals: EvalsFile | None) -> ReferenceScorer:
    return ReferenceScorer(spec, ctx.store)
