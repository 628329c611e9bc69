"""Shared setup of the RL benchmarks (trl_step.py, ablation.py): task sets, model folders, the step loop.

- `write_task_set`: a task-set folder (manifest, evals, one YAML per task) from task specs.
- `story_tasks`: chat tasks for the TRL comparison; `city_tasks`: short chat tasks for the ablation;
  `weather_tasks`: tool tasks ("What is the weather in Oslo, Lima and Cairo?") scored on naming the cities.
- `tool_calling_model`: a tiny Llama (SmolLM2 tokenizer) given a supervised warm start, through the
  trainer's own `supervised_step`, on the turns of the weather episode (call get_weather for each of
  three cities, then answer), so that its episodes really call the tool and wait on it, as agent
  episodes do. Cached under benchmarks/out/.
- `run_steps`: the GRPO loop of `tracegym.training.loop` (next_batch -> trainer step -> publish) without
  the store and checkpoints, timing each part.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from tracegym.tasks.spec import TaskSpec
from tracegym.tasks.taskset import Manifest, TaskEntry, TaskSet, load_task_set

BENCH_DIR = Path(__file__).resolve().parent
OUT = BENCH_DIR / "out"
CITIES = ["Paris", "Tokyo", "Lima", "Oslo", "Cairo", "Delhi", "Quito", "Perth", "Dakar", "Hanoi", "Riga", "Seoul"]
WEATHER_PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER_DESCRIPTION = "Get the current weather in a city."
WEATHER_SYSTEM = ('You can call one tool. To call it, reply with only\n<tool_call>\n{"name": "get_weather", '
                  '"arguments": {"city": <city>}}\n</tool_call>')


def _spec(task_id: str, system: str | None, user: str, eval_name: str, metadata: dict[str, Any] | None = None,
          ) -> TaskSpec:
    return TaskSpec.model_validate({
        "task_id": task_id, "split": "train", "harness": "chat",
        "prompt": {"system": system, "messages": [{"role": "user", "content": user}]},
        "scorer": {"evals": [{"name": eval_name}]}, "metadata": metadata or {},
        "provenance": {"trace_id": f"bench-{task_id}", "format": "synthetic", "source_task": task_id,
                       "cut_message_idx": 1},
    })


EVALS = """\
version: 1
evals:
  - name: even_words
    kind: python
    function: bench_env:even_words
    python_path: [{bench_dir}]
    arguments: {{answer: final_answer}}
  - name: starts_upper
    kind: match
    mode: regex
    expected: "^[A-Z]"
    case_sensitive: true
  - name: names_cities
    kind: match
    mode: contains
    expected_from: metadata.cities
    partial_credit: true
"""


def story_tasks(n: int) -> list[TaskSpec]:
    """Open-ended prompts that keep a small instruct model writing for its whole token budget."""
    topics = ["a lighthouse keeper", "a lost robot", "a river town", "a night train", "an old map", "a glass forest"]
    return [_spec(f"story-{i}", None, f"Write a long story about {topics[i % len(topics)]}.", "even_words")
            for i in range(n)]


def city_tasks(n: int) -> list[TaskSpec]:
    return [_spec(f"city-{i}", "Answer briefly.", f"Name a city, {CITIES[i % len(CITIES)]}.", "starts_upper")
            for i in range(n)]


def city_triples(n: int) -> list[list[str]]:
    """n fixed triples of distinct cities (the same for the warm start and the benchmark's tasks)."""
    k = len(CITIES)
    return [[CITIES[i % k], CITIES[(i + 1 + i // k) % k], CITIES[(i + 3 + i // k) % k]] for i in range(n)]


def weather_question(cities: Sequence[str]) -> str:
    return f"What is the weather in {', '.join(cities[:-1])} and {cities[-1]}?"


def weather_tasks(n: int) -> list[TaskSpec]:
    """Agent-like episodes: one get_weather call per city (three), then an answer naming the cities."""
    return [_spec(f"weather-{i}", WEATHER_SYSTEM, weather_question(cities), "names_cities", {"cities": cities})
            for i, cities in enumerate(city_triples(n))]


def write_task_set(folder: Path, name: str, tasks: Sequence[TaskSpec]) -> TaskSet:
    """A task-set folder of `tasks` (all in the train split), written as `tracegym tasks generate` writes one."""
    from tracegym.tasks.render import write_task_set as render_task_set

    evals = EVALS.format(bench_dir=json.dumps(str(BENCH_DIR)))
    evals_path = folder.parent / f"{folder.name}.evals.yaml"
    evals_path.parent.mkdir(parents=True, exist_ok=True)
    evals_path.write_text(evals)
    manifest = Manifest(
        name=name, seed=0, evals_sha256=hashlib.sha256(evals.encode()).hexdigest(), options={},
        counts={"tasks": len(tasks), "train": len(tasks), "heldout": 0}, clusters=[],
        tasks=[TaskEntry(task_id=t.task_id, file=f"tasks/{t.task_id}.yaml", split="train", harness="chat",
                         trace_id=t.provenance.trace_id) for t in tasks],
    )
    render_task_set(folder, list(tasks), manifest, evals_path, templates=None, force=True)
    return load_task_set(folder)


def tiny_model_folder(folder: Path, seed: int = 0, layers: int = 2, hidden: int = 64, init_std: float = 0.6) -> Path:
    """A random tiny Llama with the SmolLM2 tokenizer saved as a model folder (reused when present)."""
    from tracegym.models.tiny import smollm2_tokenizer, tiny_llama

    if (folder / "config.json").is_file():
        return folder
    tokenizer = smollm2_tokenizer()
    model = tiny_llama(len(tokenizer), seed=seed, layers=layers, hidden=hidden, heads=max(1, hidden // 16),
                       kv_heads=max(1, hidden // 32), init_std=init_std, eos_token_id=int(tokenizer.eos_token_id))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _weather_examples(tokenizer: Any, n_tasks: int) -> list[Any]:
    """The four supervised turns of each weather episode (three calls, then the answer), rendered as the
    runner renders them."""
    from tracegym.harnesses.chat_template import ChatRenderer

    tool = {"type": "function", "function": {"name": "get_weather", "description": WEATHER_DESCRIPTION,
                                             "parameters": WEATHER_PARAMETERS}}
    renderer = ChatRenderer(tokenizer, [tool])  # the schema exactly as the tools harness renders it
    eos = [int(tokenizer.eos_token_id)]
    examples = []
    for i, cities in enumerate(city_triples(n_tasks)):
        history: list[dict[str, Any]] = [{"role": "system", "content": WEATHER_SYSTEM},
                                         {"role": "user", "content": weather_question(cities)}]
        for turn, city in enumerate(cities):
            call = json.dumps({"name": "get_weather", "arguments": {"city": city}})
            examples.append(_example(renderer, history, f"<tool_call>\n{call}\n</tool_call>", eos, i, turn))
            call_id = f"call_{turn}_0"
            history = [*history, {"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}]},
                {"role": "tool", "tool_call_id": call_id, "name": "get_weather", "content": f"Sunny, 21 C in {city}."}]
        answer = " ".join(f"{city}: sunny, 21 C." for city in cities)
        examples.append(_example(renderer, history, answer, eos, i, len(cities)))
    return examples


def _example(renderer: Any, history: list[dict[str, Any]], target: str, eos: list[int], task: int, turn: int) -> Any:
    from tracegym.training.warmup import WarmupExample

    prompt = renderer.ids(history, add_generation_prompt=True)
    ids = prompt + renderer.tokenizer.encode(target, add_special_tokens=False) + eos
    return WarmupExample(f"weather-{task}", turn, ids, len(prompt))


def tool_calling_model(folder: Path, n_tasks: int, steps: int = 120, lr: float = 1e-2, hidden: int = 64,
                       batch: int = 8) -> Path:
    """A tiny Llama warm-started to call get_weather once per city and then answer (cached in `folder`).

    Stops early once the token accuracy on its batch reaches 99%."""
    import sys

    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tracegym.training.config import OptimSection
    from tracegym.training.grpo.trainer import make_optimizer
    from tracegym.training.warmup import supervised_step, warmup_batch

    if (folder / "warm.json").is_file():
        return folder
    base = tiny_model_folder(folder.with_name(folder.name + "-init"), seed=1, hidden=hidden, init_std=0.02)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
    examples = _weather_examples(tokenizer, n_tasks)
    optimizer = make_optimizer(model, lr, OptimSection(lr=lr, weight_decay=0.0))
    metrics: dict[str, float] = {}
    for step in range(steps):
        metrics = supervised_step(model, optimizer, warmup_batch(examples, step, batch, seed=0), 8192, 1.0,
                                  int(tokenizer.eos_token_id))
        if step % 10 == 0:
            print(f"tool model warm start {step}/{steps}: {metrics}", file=sys.stderr, flush=True)
        if metrics["warmup/token_accuracy"] >= 0.99:
            break
    model.eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "warm.json").write_text(json.dumps({"steps": step + 1, "lr": lr, **metrics}))
    return folder


def weather_tools(function: str) -> dict[str, Any]:
    """The `harness.tools` section that serves get_weather with `bench_env:<function>`."""
    return {"python_path": ["."], "functions": [{
        "function": f"bench_env:{function}", "name": "get_weather", "description": WEATHER_DESCRIPTION,
        "parameters": WEATHER_PARAMETERS}]}


@dataclass
class StepLog:
    """What `run_steps` measured, one entry per step."""

    metrics: list[dict[str, float]] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    step_s: list[float] = field(default_factory=list)
    ended_at: list[float] = field(default_factory=list)


def run_steps(
    trainer: Any,
    source: Any,
    steps: int,
    batch_groups: int,
    first_version: int = 0,
    before_step: Callable[[Any, Any], dict[str, float]] | None = None,
) -> StepLog:
    """`steps` GRPO steps as `tracegym.training.loop` runs them; `before_step(model, batch)` adds metrics
    measured on the batch with the weights that are about to be trained."""
    log = StepLog()
    for step in range(first_version, first_version + steps):
        started = time.perf_counter()
        batch = source.next_batch(batch_groups, trainer_version=step)
        waited = time.perf_counter() - started
        extra = before_step(trainer.model, batch) if before_step is not None else {}
        metrics = trainer.step(batch.groups)
        trained = time.perf_counter() - started - waited
        source.publish(trainer.model.state_dict(), step + 1)
        now = time.perf_counter()
        metrics.update(extra)
        metrics.update({"time/wait_s": waited, "time/train_s": trained, "time/publish_s": now - started - waited -
                        trained, "dropped_stale": float(len(batch.stale))})
        metrics["staleness/mean"] = (sum(step - g.policy_version for g in batch.groups) / len(batch.groups)
                                     if batch.groups else 0.0)
        log.metrics.append(metrics)
        log.groups.append(len(batch.groups))
        log.step_s.append(now - started)
        log.ended_at.append(now)
    return log
