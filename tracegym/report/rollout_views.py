"""Stored rollouts for people: lists with filters, one rollout beside the recorded turn it replaced, and the runs
of `tracegym run`.

Every episode lands in `rollouts`; its `run_id` says who wrote it: a training run (a row in `runs`), an
evaluation (`run_id` = the eval id, a row in `evaluations`), or `tracegym run` (neither: such a run exists only
as its rollouts). Queries here read JSON columns with DuckDB and never load token records, so the viewers stay
free of torch.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tracegym.errors import ConfigError, NotFoundError, did_you_mean

if TYPE_CHECKING:
    from tracegym.store import Store

# Who wrote a rollout, from its run_id.
KIND = ("CASE WHEN r.run_id IN (SELECT run_id FROM runs) THEN 'train' "
        "WHEN r.run_id IN (SELECT eval_id FROM evaluations) THEN 'eval' ELSE 'run' END")


def list_rollouts(store: Store, run: str | None = None, task: str | None = None, task_set: str | None = None,
                  min_reward: float | None = None, max_reward: float | None = None, unscored: bool = False,
                  limit: int = 50) -> list[dict[str, Any]]:
    """Rollouts matching every filter given, newest first. `unscored`: only those without a reward."""
    if unscored and (min_reward is not None or max_reward is not None):
        raise ConfigError("--unscored lists rollouts without a reward; it cannot be combined with --min-reward "
                          "or --max-reward.")
    where, params = [], []
    for clause, value in (("r.run_id = ?", run), ("r.task_id = ?", task), ("r.task_set_id = ?", task_set),
                          ("r.reward >= ?", min_reward), ("r.reward <= ?", max_reward)):
        if value is not None:
            where.append(clause)
            params.append(value)
    if unscored:
        where.append("r.reward IS NULL")
    sql = (f"SELECT r.rollout_id, r.run_id, {KIND} AS kind, r.task_id, r.split, r.sample_idx, r.reward, "
           "r.stop_reason, r.n_turns, r.n_tool_calls, coalesce(r.harness_error, r.scorer_error) AS error, "
           "r.created_at FROM rollouts r "
           f"{'WHERE ' + ' AND '.join(where) if where else ''} "
           "ORDER BY r.created_at DESC, r.task_id, r.sample_idx LIMIT ?")
    return store.query(sql, params + [limit])


def find_rollout(store: Store, ref: str) -> str:
    """The rollout id `ref` names: an id or a unique prefix."""
    ids = [r["rollout_id"] for r in store.query(
        "SELECT rollout_id FROM rollouts WHERE starts_with(rollout_id, ?) ORDER BY rollout_id LIMIT 6", [ref])]
    if ref in ids or len(ids) == 1:
        return ref if ref in ids else ids[0]
    if ids:
        raise NotFoundError(f"Rollout prefix {ref!r} matches {', '.join(ids[:5])}. Fix: give more of the id.")
    raise NotFoundError(f"No rollout {ref!r} in the store. Fix: see `tracegym rollouts list` for ids.")


_VIEW_COLUMNS = ("rollout_id", "run_id", "task_set_id", "task_id", "split", "harness", "sample_idx", "seed", "model",
                 "policy_version", "sampler_id", "reward", "scorer_error", "harness_error", "stop_reason", "n_turns",
                 "n_tool_calls", "n_malformed_tool_calls", "n_replay_hits", "n_replay_misses", "left_recorded_path",
                 "latency_s", "tokens_in", "tokens_out", "train_step", "train_use", "created_at")


def rollout_view(store: Store, ref: str) -> dict[str, Any]:
    """One rollout: its row, the prompt's last message, the model's reply and what followed it, the scorer's
    details, the hollow-reply detectors that flag its replies (tracegym/training/replies.py), and the task's source:
    the recorded turn the reply replaced, with the trace and failure it came from (None when the store no longer
    holds the task)."""
    from tracegym.training.replies import hollow_findings

    rollout_id = find_rollout(store, ref)
    [row] = store.query(f"SELECT {', '.join('r.' + c for c in _VIEW_COLUMNS)}, {KIND} AS kind, "
                        "r.messages, r.n_prompt_messages, r.scorer_details, r.sampling, t.spec->'$.provenance' "
                        "AS provenance, t.spec->'$.replay' AS replay FROM rollouts r LEFT JOIN tasks t "
                        "ON t.task_set_id = r.task_set_id AND t.task_id = r.task_id WHERE r.rollout_id = ?",
                        [rollout_id])
    messages = json.loads(row.pop("messages") or "[]")
    n_prompt = row.pop("n_prompt_messages") or 0
    raw = row.pop("provenance")
    provenance = json.loads(raw) if raw is not None else None
    replay = json.loads(row.pop("replay") or "[]")
    sampling, details = json.loads(row.pop("sampling") or "{}"), json.loads(row.pop("scorer_details") or "{}")
    continuation = messages[n_prompt:]
    return {
        "rollout": row,
        "sampling": sampling,
        "scorer_details": details,
        "hollow": hollow_findings(messages, n_prompt, (call.get("result") for call in replay)),
        "prompt_messages": n_prompt,
        "last_prompt_message": messages[n_prompt - 1] if n_prompt else None,
        "reply": continuation[0] if continuation else None,
        "after_reply": continuation[1:],
        "recorded_turn": provenance.get("recorded_turn") if provenance else None,
        "source": None if provenance is None else {k: provenance.get(k) for k in (
            "trace_id", "format", "cut_message_idx", "cluster_id", "detector", "signature", "evidence")},
    }


def sampled_runs(store: Store) -> list[dict[str, Any]]:
    """The runs of `tracegym run` (rollouts whose run is neither a training run nor an evaluation), newest first.
    Such a run records no status: only the episodes it stored."""
    return store.query(
        f"""SELECT r.run_id, 'run' AS kind, NULL AS status, any_value(r.model) AS base_model,
                   any_value(r.task_set_id) AS task_set_id, min(r.created_at) AS started_at,
                   max(r.created_at) AS updated_at, count(*) AS episodes, avg(r.reward) AS mean_reward
            FROM rollouts r WHERE {KIND} = 'run' GROUP BY r.run_id ORDER BY started_at DESC""")


def sampled_run_ids(store: Store) -> list[str]:
    return [r["run_id"] for r in store.query(f"SELECT DISTINCT r.run_id FROM rollouts r WHERE {KIND} = 'run' "
                                             "ORDER BY 1")]


def sampled_run(store: Store, run_id: str) -> dict[str, Any]:
    """One `tracegym run` run: its summary, its figures per task (as `tracegym run` printed them), its rollouts."""
    found = [r for r in sampled_runs(store) if r["run_id"] == run_id]
    if not found:
        known = sampled_run_ids(store)
        raise NotFoundError(f"No `tracegym run` run {run_id!r} in the store.{did_you_mean(run_id, known)}")
    tasks = store.query(
        """SELECT task_id, any_value(harness) AS harness, count(*) AS samples, count(reward) AS scored,
                  avg(reward) AS mean_reward, count(harness_error) AS harness_errors,
                  count(scorer_error) AS scorer_errors, count(*) FILTER (WHERE left_recorded_path) AS off_path,
                  string_agg(DISTINCT stop_reason, ', ' ORDER BY stop_reason) AS stops
           FROM rollouts WHERE run_id = ? GROUP BY task_id ORDER BY min(created_at), task_id""", [run_id])
    rollouts = list_rollouts(store, run=run_id, limit=1 << 31)
    return {"run": found[0], "tasks": tasks, "rollouts": rollouts}
