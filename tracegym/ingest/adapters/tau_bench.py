"""τ-bench results: a JSON array of `{task_id, trial, reward, info, traj}`.

Schema: sierra-research/tau-bench `tau_bench/types.py` (EnvRunResult). `traj`
is an OpenAI chat message list; `reward` is 0/1; `info.task.actions` holds the
gold tool calls, kept in metadata for the `tool_calls` scorer.
"""

from __future__ import annotations

from collections.abc import Iterable

from tracegym.ingest.adapters.base import Adapter, SourceFile, require
from tracegym.ingest.adapters.chat_messages import append_openai_messages
from tracegym.ingest.reading import Sample
from tracegym.ingest.records import RawRecord, Score, Trace


class TauBenchAdapter(Adapter):
    name = "tau-bench"
    description = "τ-bench results (JSON array of task_id/trial/reward/info/traj)"

    def sniff(self, sample: Sample) -> bool:
        first = sample.first
        return isinstance(first, dict) and {"task_id", "traj", "reward"} <= first.keys()

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        run = record.value
        task_id = require(run, "task_id", (int, str))
        reward = require(run, "reward", (int, float))
        trial = run.get("trial", 0)
        info = run.get("info") if isinstance(run.get("info"), dict) else {}
        trace = Trace(
            trace_id=f"tau-bench:{src.path.stem}:task-{task_id}:trial-{trial}",
            format=self.name,
            session_id=f"task-{task_id}",
            model=src.path.stem,  # τ-bench records the model in the file name only
            outcome="success" if reward >= 1.0 else "failure",
            metadata={"task_id": task_id, "trial": trial, "domain_file": src.path.name, "task": info.get("task")},
        )
        append_openai_messages(trace, require(run, "traj", list), "traj")
        trace.scores.append(Score("reward", float(reward), kind="environment"))
        reward_info = info.get("reward_info") if isinstance(info.get("reward_info"), dict) else {}
        for key, value in (reward_info.get("info") or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                trace.scores.append(Score(key, float(value), kind="environment"))
        yield trace
