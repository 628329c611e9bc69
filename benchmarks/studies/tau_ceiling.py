"""What the τ-bench failure tasks of studies/train_tau.py pay for one reply, and what the best reply could earn.

    python benchmarks/studies/tau_ceiling.py --workdir /tmp/tau-ceiling [--split-seeds 0 1 2] [--set KEY=YAML ...]

No model runs. For each split seed the task set is generated as train_tau.py generates it (same reward, same
held-out share) and the tasks are selected as training selects them (the config's detectors, context policy and
prompt cap). Each task's own scorer then scores fixed replies: a plain text reply, and one call to each of the
task's tools, with the τ-bench gold arguments when the tool is a gold action of the task (empty ones otherwise).
A call fits when its tokens, as the model's chat template renders the reply, are within `sampler.max_new_tokens`:
a reply cut at the budget is no call at all.

Per split seed and side (train, heldout) it reports: tasks and scenarios; the mean reward of always replying in
text and of always calling each tool (the best of these is what a context-free habit earns); and the ceiling, the
mean over tasks of the best fitting reply, with and without `transfer_to_human_agents` and with no budget. The
held-out ceiling bounds what any one-reply policy within the budget can score; the training side shows which
habit the reward pays. The last line is one JSON object: {"budget", "splits": {seed: {side: figures}}}.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from train_tau import REPO, prepared_config

TEXT = "text"
TRANSFER = "transfer_to_human_agents"


def candidates(task: Any, tool_names: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The fixed replies to score, by name: a text reply and one call to each of `tool_names`."""
    gold = {}
    for action in task.metadata.get("task", {}).get("actions", []):
        gold.setdefault(action["name"], action.get("kwargs", {}))
    replies = {TEXT: [{"role": "assistant", "content": "I can help with that. Could you tell me more?"}]}
    for name in tool_names:
        arguments = json.dumps(gold.get(name, {}))
        call = {"id": "call_0", "type": "function", "function": {"name": name, "arguments": arguments}}
        replies[name] = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    return replies


def reply_tokens(renderer: Any, task: Any, reply: list[dict[str, Any]]) -> int:
    """How many tokens the model would write for `reply`, its end-of-turn token included."""
    prompt = task.messages()
    return len(renderer.ids(prompt + reply, add_generation_prompt=False)) - len(renderer.ids(prompt))


def tool_names(task_set: Any) -> dict[str, list[str]]:
    """Each task's tool names, from the task set as written: a task as training shortens it with compact schemas
    carries no tool list."""
    return {t.task_id: [tool.name for tool in t.tools] for t in task_set.tasks}


def score_replies(task_set: Any, task: Any, tools: list[str], tokenizer: Any,
                  budget: int) -> dict[str, tuple[float, bool]]:
    """Each fixed reply to `task` (as training shortens it; `tools` its tool names): its reward from the task's own
    scorer, and whether it fits within `budget` tokens."""
    from tracegym.harnesses.chat_template import ChatRenderer
    from tracegym.tasks.prompts import openai_tool_list

    renderer = ChatRenderer(tokenizer, openai_tool_list(task.tools))
    scorer = task_set.scorer(task)
    return {name: (scorer.score(task.trajectory(reply)).reward or 0.0, reply_tokens(renderer, task, reply) <= budget)
            for name, reply in candidates(task, tools).items()}


def score_side(task_set: Any, tasks: list[Any], tokenizer: Any, budget: int) -> dict[str, Any]:
    """The figures of one side (train or held-out) of one split."""
    fixed: dict[str, list[float]] = {}
    best: dict[str, list[float]] = {"fit": [], "fit_no_transfer": [], "any_length": []}
    best_reply: Counter[str] = Counter()
    tools = tool_names(task_set)
    for task in tasks:
        scored = score_replies(task_set, task, tools[task.task_id], tokenizer, budget)
        for name, (reward, _) in scored.items():
            fixed.setdefault(name, []).append(reward)
        fits = {n: r for n, (r, ok) in scored.items() if ok}  # a text reply always fits
        top = max(fits.values())
        best["fit"].append(top)
        best["fit_no_transfer"].append(max(r for n, r in fits.items() if n != TRANSFER))
        best["any_length"].append(max(r for r, _ in scored.values()))
        best_reply[next(n for n, r in fits.items() if r == top) if top > 0 else "nothing"] += 1
    habits = {n: round(statistics.fmean(v), 3) for n, v in fixed.items() if len(v) == len(tasks)}
    return {
        "tasks": len(tasks),
        "scenarios": len({t.provenance.source_task for t in tasks}),
        "always_text": habits.get(TEXT),
        "always_call": dict(sorted(((n, r) for n, r in habits.items() if n != TEXT), key=lambda kv: -kv[1])),
        "ceiling": round(statistics.fmean(best["fit"]), 3),
        "ceiling_without_transfer": round(statistics.fmean(best["fit_no_transfer"]), 3),
        "ceiling_any_length": round(statistics.fmean(best["any_length"]), 3),
        "best_fitting_reply": dict(best_reply.most_common()),
    }


def split_arguments(description: str) -> argparse.ArgumentParser:
    """The options of a script that generates one task set per split seed, as train_tau.py does."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--workdir", type=Path, required=True, help="One task set per split seed is written here.")
    parser.add_argument("--config", type=Path, default=REPO / "examples" / "train-tau.yaml")
    parser.add_argument("--split-seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--heldout", type=float, default=0.2)
    parser.add_argument("--eval", default="gold_tool", help="The eval of examples/evals-train.yaml that scores tasks.")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=YAML",
                        help="Override a config key, as for train_tau.py (repeatable).")
    return parser


def main() -> None:
    args = split_arguments(__doc__.split("\n")[0]).parse_args()

    from tracegym.models.load import load_tokenizer
    from tracegym.training.loop import select_tasks

    splits: dict[int, dict[str, Any]] = {}
    budget = 0
    for seed in args.split_seeds:
        workdir = args.workdir / f"split-{seed}"
        config, task_set, _ = prepared_config(args.config, args.set, workdir, args.heldout, seed, args.eval)
        tokenizer, budget = load_tokenizer(config.model.ref), config.sampler.max_new_tokens
        splits[seed] = {}
        for side in ("train", "heldout"):
            tasks, _ = select_tasks(task_set, config, tokenizer, split=side)
            splits[seed][side] = figures = score_side(task_set, tasks, tokenizer, budget)
            habits = figures["always_call"]
            print(f"split {seed} {side:7s} {figures['tasks']:3d} tasks ({figures['scenarios']:2d} scenarios): "
                  f"always text {figures['always_text']:.3f}, always get_reservation_details "
                  f"{habits.get('get_reservation_details', 0):.3f}, always transfer {habits.get(TRANSFER, 0):.3f}, "
                  f"best habit {next(iter(habits.items()))}; ceiling {figures['ceiling']:.3f} "
                  f"({figures['ceiling_without_transfer']:.3f} without transfer, {figures['ceiling_any_length']:.3f} "
                  f"at any length); best replies {figures['best_fitting_reply']}", flush=True)
    print(json.dumps({"budget": budget, "eval": args.eval, "splits": splits}))


if __name__ == "__main__":
    main()
