"""Episodes in the store: the `rollouts` table, written in Arrow batches and read back as `Episode`s.

`tracegym run`, the trainer and checkpoint evaluation all write through `write_rollouts` and read through
`read_rollouts`, so a rollout stored by one reads the same in the others. Token columns keep the record
exactly: ids as INTEGER[], the mask as BOOLEAN[], sampler log-probs as FLOAT[] (float32, as sampled; NaN
where masked), the support as CSR arrays over the trainable tokens; where segments begin, on the turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import torch

from tracegym import exact_json
from tracegym.episodes.record import Episode, EpisodeCounts, TokenRecord, TurnRecord
from tracegym.errors import StoreError
from tracegym.models.support import Support

if TYPE_CHECKING:
    import duckdb

    from tracegym.store import Store

_JSON = ("sampling", "scorer_details", "messages", "turns", "metrics", "components")
SCHEMA = pa.schema([
    ("rollout_id", pa.string()), ("run_id", pa.string()), ("task_set_id", pa.string()), ("task_id", pa.string()),
    ("split", pa.string()), ("harness", pa.string()), ("sample_idx", pa.int32()), ("seed", pa.int64()),
    ("model", pa.string()), ("policy_version", pa.int32()), ("policy_versions", pa.list_(pa.int32())),
    ("sampler_id", pa.string()), ("sampling", pa.string()), ("reward", pa.float64()),
    ("scorer_details", pa.large_string()), ("scorer_error", pa.string()), ("harness_error", pa.string()),
    ("stop_reason", pa.string()), ("n_turns", pa.int32()), ("n_tool_calls", pa.int32()),
    ("n_malformed_tool_calls", pa.int32()), ("n_replay_hits", pa.int32()), ("n_replay_misses", pa.int32()),
    ("left_recorded_path", pa.bool_()), ("messages", pa.large_string()), ("n_prompt_messages", pa.int32()),
    ("turns", pa.large_string()), ("input_ids", pa.list_(pa.int32())), ("loss_mask", pa.list_(pa.bool_())),
    ("sampler_logprobs", pa.list_(pa.float32())), ("support_kind", pa.string()),
    ("support_ids", pa.large_list(pa.int32())), ("support_offsets", pa.list_(pa.int64())),
    ("support_logprobs", pa.large_list(pa.float32())), ("metrics", pa.large_string()),
    ("created_at", pa.timestamp("us")), ("latency_s", pa.float64()), ("tokens_in", pa.int32()),
    ("tokens_out", pa.int32()), ("train_step", pa.int32()), ("train_use", pa.string()),
    ("components", pa.string()),
])
COLUMNS = tuple(SCHEMA.names)


def _json(value: Any) -> str:
    return exact_json.dumps(value, sort_keys=False)


def _row(episode: Episode, run_id: str | None) -> dict[str, Any]:
    tokens, support = episode.tokens, episode.tokens.support if episode.tokens is not None else None
    c = episode.counts
    return {
        "rollout_id": episode.rollout_id, "run_id": run_id, "task_set_id": episode.task_set_id,
        "task_id": episode.task_id, "split": episode.split, "harness": episode.harness,
        "sample_idx": episode.sample_idx, "seed": episode.seed, "model": episode.model,
        "policy_version": episode.policy_version, "policy_versions": episode.policy_versions,
        "sampler_id": episode.sampler_id, "sampling": _json(episode.sampling), "reward": episode.reward,
        "scorer_details": _json(episode.scorer_details), "scorer_error": episode.scorer_error,
        "harness_error": episode.harness_error, "stop_reason": episode.stop_reason, "n_turns": len(episode.turns),
        "n_tool_calls": c.tool_calls, "n_malformed_tool_calls": c.malformed_tool_calls,
        "n_replay_hits": c.replay_hits, "n_replay_misses": c.replay_misses,
        "left_recorded_path": episode.left_recorded_path, "messages": _json(episode.messages),
        "n_prompt_messages": episode.n_prompt_messages, "turns": _json([t.to_dict() for t in episode.turns]),
        "input_ids": tokens.input_ids.tolist() if tokens is not None else None,
        "loss_mask": tokens.loss_mask.tolist() if tokens is not None else None,
        "sampler_logprobs": tokens.sampler_logprobs.tolist() if tokens is not None else None,
        "support_kind": support.kind if support is not None else None,
        "support_ids": support.ids.tolist() if support is not None else None,
        "support_offsets": support.offsets.tolist() if support is not None else None,
        "support_logprobs": support.logprobs.tolist() if support is not None else None,
        "metrics": _json(episode.metrics), "created_at": episode.created_at, "latency_s": episode.latency_s,
        "tokens_in": episode.tokens_in, "tokens_out": episode.tokens_out,
        "train_step": episode.train_step, "train_use": episode.train_use,
        "components": _json(episode.components) if episode.components else None,
    }


def rollouts_table(episodes: Sequence[Episode], run_id: str | None) -> pa.Table:
    """The episodes as one Arrow table shaped like the `rollouts` table."""
    return pa.Table.from_pylist([_row(e, run_id if run_id is not None else e.run_id) for e in episodes], SCHEMA)


def write_rollouts(store: Store, episodes: Sequence[Episode], run_id: str | None = None) -> int:
    """Append the episodes in one transaction (all or none); returns how many. `run_id` overrides each
    episode's own."""
    if not episodes:
        return 0
    with store.transaction() as con:
        insert_rollouts(con, episodes, run_id)
    for episode in episodes:
        episode.run_id = run_id if run_id is not None else episode.run_id
    return len(episodes)


def insert_rollouts(con: duckdb.DuckDBPyConnection, episodes: Sequence[Episode], run_id: str | None = None) -> None:
    """Append the episodes inside the caller's transaction (`write_rollouts` opens its own)."""
    table = rollouts_table(episodes, run_id)
    select = ", ".join(f"CAST({c} AS JSON)" if c in _JSON else c for c in COLUMNS)
    con.register("_rollouts_staged", table)
    try:
        con.execute(f"INSERT INTO rollouts ({', '.join(COLUMNS)}) SELECT {select} FROM _rollouts_staged")
    finally:
        con.unregister("_rollouts_staged")


def read_rollouts(
    store: Store,
    run_id: str | None = None,
    task_set_id: str | None = None,
    task_ids: Sequence[str] | None = None,
    rollout_ids: Sequence[str] | None = None,
    limit: int | None = None,
) -> list[Episode]:
    """Stored episodes matching every filter given, in (created_at, task_id, sample_idx) order."""
    import duckdb  # here, not at the top: in-process sampling imports this module and never needs a store

    where, params = [], []
    for column, value in (("run_id", run_id), ("task_set_id", task_set_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    for column, values in (("task_id", task_ids), ("rollout_id", rollout_ids)):
        if values is not None:
            where.append(f"{column} IN (SELECT unnest(?))")
            params.append(list(values))
    sql = (f"SELECT {', '.join(COLUMNS)} FROM rollouts {'WHERE ' + ' AND '.join(where) if where else ''} "
           f"ORDER BY created_at, task_id, sample_idx, rollout_id {'LIMIT ?' if limit is not None else ''}")
    try:
        table = store.con.sql(sql, params=params + ([limit] if limit is not None else [])).to_arrow_table()
    except duckdb.Error as e:
        raise StoreError(f"cannot read rollouts from {store.path}: {e}") from e
    return [_episode(row) for row in table.to_pylist()]


def _episode(row: dict[str, Any]) -> Episode:
    data = {c: exact_json.loads(row[c]) if row[c] is not None else None for c in _JSON}
    turns = [TurnRecord.from_dict(t) for t in data["turns"] or []]
    tokens = _tokens(row)
    if tokens is not None:  # where segments begin is stored once, on the turns (segment_start)
        tokens.segment_starts = tuple(sorted({0, *(t.segment_start for t in turns)}))
    return Episode(
        rollout_id=row["rollout_id"], task_id=row["task_id"], task_set_id=row["task_set_id"], split=row["split"],
        harness=row["harness"], sample_idx=row["sample_idx"], seed=row["seed"], model=row["model"],
        sampling=data["sampling"] or {}, messages=data["messages"] or [], n_prompt_messages=row["n_prompt_messages"],
        tokens=tokens, turns=turns,
        stop_reason=row["stop_reason"],
        counts=EpisodeCounts(row["n_tool_calls"], row["n_malformed_tool_calls"], row["n_replay_hits"],
                             row["n_replay_misses"]),
        reward=row["reward"], scorer_details=data["scorer_details"] or {}, scorer_error=row["scorer_error"],
        components=data["components"] or {},
        harness_error=row["harness_error"], metrics=data["metrics"] or {}, latency_s=row["latency_s"],
        created_at=row["created_at"], run_id=row["run_id"], train_step=row["train_step"], train_use=row["train_use"],
    )


def _tokens(row: dict[str, Any]) -> TokenRecord | None:
    if row["input_ids"] is None:
        return None
    support = None
    if row["support_kind"] is not None:
        support = Support(row["support_kind"], torch.tensor(row["support_ids"], dtype=torch.int32),
                          torch.tensor(row["support_offsets"], dtype=torch.int64),
                          torch.tensor(row["support_logprobs"], dtype=torch.float32))
    return TokenRecord(torch.tensor(row["input_ids"], dtype=torch.int64),
                       torch.tensor(row["loss_mask"], dtype=torch.bool),
                       torch.tensor(row["sampler_logprobs"], dtype=torch.float32), support)
