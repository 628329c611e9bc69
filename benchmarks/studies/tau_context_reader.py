"""Does the prompt of a τ-bench failure task say what its reward pays? A nearest-neighbour reader against habits.

    python benchmarks/studies/tau_context_reader.py --workdir /tmp/tau-reader [--split-seeds 0 1 2] [--k 5] \
        [--set KEY=YAML]

`tau_ceiling.py` shows what a context-free habit earns. This asks the next question: can anything learnt
from the training tasks' prompts choose the reply better than the best habit, on scenarios it has not seen? No
policy is trained; each task's own scorer scores the fixed replies of `tau_ceiling.py` (a text reply, one call to each
tool; a reply over `sampler.max_new_tokens` earns 0), and two readers choose among them:

- `words`: TF-IDF over the words of the prompt (user and assistant text, the names of the calls it shows);
- `model`: the default model's own reading, the mean of its last hidden states over the prompt's tokens, as the
  chat template renders it for sampling.

For a query task the reader takes the k training tasks nearest by cosine similarity and picks the reply with the
highest similarity-weighted mean reward among them. Two evaluations, per split seed:

- leave one scenario out, on the training tasks only: each training scenario's tasks are read with the other
  scenarios' tasks as the reader's memory, against the habit those other scenarios pay best (no held-out task is
  looked at, so this is the figure to choose a task design by);
- held out: the reader's memory is every training task, scored on the held-out tasks, against the training side's
  best habit.

A reader that does no better than the habit means the prompts, as cut, carry no signal about the reward that
carries across scenarios, and a policy trained on them can at best learn the habit. The last line is one JSON
object: {"k", "budget", "splits": {seed: {"train_tasks", "heldout_tasks", "leave_one_scenario_out": {"habit",
"words", "model"}, "heldout": {"habit", "words", "model", "text", "ceiling"}}}}.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

import torch
from tau_ceiling import TEXT, score_replies, split_arguments, tool_names
from train_tau import prepared_config


@dataclass
class Scored:
    """One task: its scenario, the rewards of the fixed replies (0 where the reply does not fit), and how the two
    readers see its prompt."""

    source: str
    rewards: dict[str, float]
    words: dict[str, float]
    embedding: torch.Tensor  # [H], unit norm


def prompt_words(task: Any) -> list[str]:
    words = []
    for message in task.messages():
        if message["role"] == "system":
            continue
        words += re.findall(r"[a-z_]+", (message.get("content") or "").lower())
        words += [f"call:{c['function']['name']}" for c in message.get("tool_calls") or []]
    return words


def tfidf(docs: list[list[str]], fit: list[list[str]]) -> list[dict[str, float]]:
    """Unit-norm TF-IDF vectors of `docs` (sublinear term frequency), with the smoothed inverse document frequencies
    of the documents `fit`."""
    df = Counter(w for doc in fit for w in set(doc))
    out = []
    for doc in docs:
        v = {w: (1 + math.log(n)) * math.log((len(fit) + 1) / (df[w] + 1)) for w, n in Counter(doc).items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        out.append({w: x / norm for w, x in v.items()})
    return out


@torch.no_grad()
def embed(model: Any, ids: list[int]) -> torch.Tensor:
    hidden = model(torch.tensor([ids]), output_hidden_states=True).hidden_states[-1][0]  # [S, H]
    mean = hidden.mean(dim=0)
    return mean / mean.norm()


def score_tasks(task_set: Any, tasks: list[Any], tokenizer: Any, model: Any, budget: int,
                fit: list[list[str]]) -> list[Scored]:
    """Each of `tasks` scored and read; the words reader weighs words by how rare they are in `fit` (the training
    tasks' prompts: leaving a scenario out, its prompts still count there, but none of its rewards)."""
    from tracegym.harnesses.chat_template import ChatRenderer
    from tracegym.tasks.prompts import openai_tool_list

    tools = tool_names(task_set)
    vectors = tfidf([prompt_words(t) for t in tasks], fit)
    rows = []
    for task, words in zip(tasks, vectors, strict=True):
        scored = score_replies(task_set, task, tools[task.task_id], tokenizer, budget)
        rewards = {name: reward if fits else 0.0 for name, (reward, fits) in scored.items()}
        ids = ChatRenderer(tokenizer, openai_tool_list(task.tools)).ids(task.messages(), add_generation_prompt=True)
        rows.append(Scored(task.provenance.source_task, rewards, words, embed(model, ids)))
    return rows


def similarity(a: Scored, b: Scored, reader: str) -> float:
    if reader == "model":
        return float(a.embedding @ b.embedding)
    return sum(x * b.words.get(w, 0.0) for w, x in a.words.items())


def read(memory: list[Scored], query: Scored, reader: str, k: int) -> str:
    """The reply the k nearest tasks of `memory` pay best on average, weighted by similarity; a tie goes to a text
    reply, what the base model gives."""
    near = sorted(((similarity(query, m, reader), i) for i, m in enumerate(memory)), reverse=True)[:k]
    weight = sum(max(s, 0.0) for s, _ in near) or 1.0
    names = memory[0].rewards
    paid = {n: sum(max(s, 0.0) * memory[i].rewards.get(n, 0.0) for s, i in near) / weight for n in names}
    return max(paid, key=lambda n: (paid[n], n == TEXT))


def best_habit(rows: list[Scored]) -> str:
    names = rows[0].rewards
    return max(names, key=lambda n: statistics.fmean(r.rewards.get(n, 0.0) for r in rows))


def evaluate(train: list[Scored], heldout: list[Scored], k: int) -> dict[str, Any]:
    readers = ("words", "model")
    loso: dict[str, list[float]] = {"habit": [], **{r: [] for r in readers}}
    for source in sorted({r.source for r in train}):
        memory = [r for r in train if r.source != source]
        habit = best_habit(memory)
        for query in (r for r in train if r.source == source):
            loso["habit"].append(query.rewards.get(habit, 0.0))
            for reader in readers:
                loso[reader].append(query.rewards.get(read(memory, query, reader, k), 0.0))
    habit = best_habit(train)
    held = {"habit": [q.rewards.get(habit, 0.0) for q in heldout],
            **{r: [q.rewards.get(read(train, q, r, k), 0.0) for q in heldout] for r in readers},
            "text": [q.rewards[TEXT] for q in heldout], "ceiling": [max(q.rewards.values()) for q in heldout]}
    mean = {name: round(statistics.fmean(v), 3) for name, v in loso.items()}
    return {"train_tasks": len(train), "heldout_tasks": len(heldout), "train_habit": habit,
            "leave_one_scenario_out": mean, "heldout": {n: round(statistics.fmean(v), 3) for n, v in held.items()}}


def main() -> None:
    parser = split_arguments(__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=5, help="Neighbours a reader averages over.")
    args = parser.parse_args()

    from tracegym.models.load import load_model, load_tokenizer
    from tracegym.training.loop import select_tasks

    splits: dict[int, dict[str, Any]] = {}
    model = tokenizer = None
    budget = 0
    for seed in args.split_seeds:
        config, task_set, _ = prepared_config(args.config, args.set, args.workdir / f"split-{seed}", args.heldout,
                                              seed, args.eval)
        if model is None:
            tokenizer, model = load_tokenizer(config.model.ref), load_model(config.model.ref, "fp32").eval()
        budget = config.sampler.max_new_tokens
        tasks = {side: select_tasks(task_set, config, tokenizer, split=side)[0] for side in ("train", "heldout")}
        fit = [prompt_words(t) for t in tasks["train"]]
        sides = {side: score_tasks(task_set, chosen, tokenizer, model, budget, fit) for side, chosen in tasks.items()}
        splits[seed] = figures = evaluate(sides["train"], sides["heldout"], args.k)
        loso, held = figures["leave_one_scenario_out"], figures["heldout"]
        print(f"split {seed}: leave one training scenario out: habit {loso['habit']:.3f}, words {loso['words']:.3f}, "
              f"model {loso['model']:.3f}; held out ({figures['heldout_tasks']} tasks): training habit "
              f"{figures['train_habit']} {held['habit']:.3f}, words {held['words']:.3f}, model {held['model']:.3f}, "
              f"text {held['text']:.3f}, ceiling {held['ceiling']:.3f}", flush=True)
    print(json.dumps({"k": args.k, "budget": budget, "eval": args.eval, "splits": splits}))


if __name__ == "__main__":
    main()
