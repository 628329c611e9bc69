"""TRL / Hugging Face datasets: a dataset folder and a reward function module.

    DIR/dataset/          `datasets.load_from_disk`: prompt (conversational: role and text messages, tools in
                          the Hermes style every chat template renders), task_id, cluster_id, split, harness,
                          reference (the reply the gates played, for supervised warm starts)
    DIR/reward.py         reward(prompts, completions, task_id, **kwargs) -> list[float | None] for GRPOTrainer
    DIR/tracegym_data/    the tasks, evals and harness config the reward scores with (`tracegym.environments.bundle`)
    DIR/README.md

TRL passes a dataset's other columns to reward functions as keyword arguments, so `task_id` picks each
completion's task. An attempt the scorer cannot score gets None, which TRL leaves out of the reward (tracegym's
trainer leaves such episodes out too).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracegym.environments.registry import ExportJob
from tracegym.harnesses.chat_template import template_messages

FORMAT = "trl"
SUMMARY = "a Hugging Face dataset (datasets.load_from_disk) and reward.py for TRL's GRPOTrainer"
DATA = "tracegym_data"

REWARD = '''"""Rewards for TRL's GRPOTrainer: each task's tracegym scorer on each completion (written by `tracegym tasks
export`; the tasks and evals it scores with are in tracegym_data/ beside it, and tracegym {version} must be
installed).

    from trl import GRPOTrainer
    trainer = GRPOTrainer(model=..., reward_funcs=reward, train_dataset=load_from_disk("{name}/dataset"))

A completion is played through its task's harness (a replay task's tool calls are answered from the recording) and
scored as tracegym scores an episode; an attempt that cannot be scored gets None, which TRL leaves out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracegym.environments.runtime import ExportedTasks

DATA = Path(__file__).resolve().parent / "{data}"
THREADS = 8
"""Completions scored at once (a sandboxed command or a judge waits on a process, not on this one)."""
_tasks: ExportedTasks | None = None


def tasks() -> ExportedTasks:
    """The exported tasks, loaded once (loading checks that every scorer can run in this process)."""
    global _tasks
    if _tasks is None:
        _tasks = ExportedTasks(DATA)
    return _tasks


def reward(prompts: list[Any], completions: list[Any], task_id: list[str], **kwargs: Any) -> list[float | None]:
    """The reward of each completion on its task (TRL passes the dataset's task_id column)."""
    attempts = [_replies(c) for c in completions]
    return [r.reward for r in tasks().score_many(list(task_id), attempts, THREADS)]


def _replies(completion: Any) -> list[dict[str, Any]]:
    """A completion as assistant replies: TRL gives text, or (conversational) a list of messages."""
    if isinstance(completion, str):
        return [{{"role": "assistant", "content": completion}}]
    return [dict(m) for m in completion if m.get("role") == "assistant"]
'''

README = """# {name}: tracegym task set `{task_set}` for TRL

{rows} tasks ({split} split) exported by `tracegym tasks export --to trl`; rewards are tracegym's own scorers,
so tracegym {version} must be installed where you train.

```python
from datasets import load_from_disk
from trl import GRPOConfig, GRPOTrainer
import sys; sys.path.insert(0, "{name}")
from reward import reward

dataset = load_from_disk("{name}/dataset")
trainer = GRPOTrainer(model="HuggingFaceTB/SmolLM2-135M-Instruct", reward_funcs=reward, train_dataset=dataset,
                      args=GRPOConfig(output_dir="out"))
trainer.train()
```

Columns: prompt (chat messages), task_id, cluster_id, split, harness, reference (the reply the reward gates played,
for a supervised warm start). Keep task_id and cluster_id with your results: `tracegym` reads them back.
"""


def portable(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> list[dict[str, str]]:
    """Messages every chat template renders (role and text only), as tracegym shows them to a model whose template
    takes no tools: the schemas in the system prompt, calls as <tool_call> blocks, results as <tool_response> user
    turns. The reward parses the same blocks out of a completion."""
    plain = [{k: v for k, v in m.items() if v is not None} for m in messages]
    return [{"role": m["role"], "content": m["content"]} for m in template_messages(plain, tools, native=False)]


def export(job: ExportJob, out: Path) -> dict[str, str]:
    from datasets import Dataset
    from datasets.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    manifest = job.write_data(out / DATA)
    # The chat harness gives the model no tools (`tracegym.harnesses.chat`): neither does the prompt then.
    dataset = Dataset.from_list([{"prompt": portable(r.prompt, r.tools if r.harness != "chat" else None),
                                  "task_id": r.task_id,
                                  "cluster_id": r.cluster_id, "split": r.split, "harness": r.harness,
                                  "reference": portable(r.reference or [], None)} for r in job.rows])
    shown = not are_progress_bars_disabled()
    disable_progress_bars()  # the command prints its own summary; a bar on stderr would be noise
    try:
        dataset.save_to_disk(str(out / "dataset"))
    finally:
        if shown:
            enable_progress_bars()
    values = {"name": job.name, "task_set": manifest.task_set, "rows": str(len(job.rows)), "split": job.split,
              "version": manifest.tracegym_version, "data": DATA}
    (out / "reward.py").write_text(REWARD.format(**values), encoding="utf-8")
    (out / "README.md").write_text(README.format(**values), encoding="utf-8")
    return {"dataset": "dataset/ (datasets.load_from_disk)",
            "reward": "reward.py: reward(prompts, completions, task_id, **kwargs)"}
