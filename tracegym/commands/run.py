"""`tracegym run TASKSET --model M`: a model on your tasks before any training, stored as rollouts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from tracegym.models.precision import PrecisionChoice
from tracegym.output import JsonOpt, StoreOpt, err, print_json, print_table, progress


def register(app: typer.Typer) -> None:
    app.command("run")(run)


def run(
    task_set: Annotated[str, typer.Argument(help="A task-set folder (from `tracegym tasks generate`) or its name.")],
    model: Annotated[str, typer.Option(help="A model: 'smollm2-135m' (built in), a model folder, or with "
                                            "--base-url the endpoint's model name.")] = "smollm2-135m",
    samples: Annotated[int, typer.Option("--samples", "-k", min=1, help="Episodes per task.")] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes in flight at once.")] = 8,
    max_turns: Annotated[int, typer.Option(min=1, help="Most model turns per episode.")] = 10,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Most tokens per model turn.")] = 256,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Most model tokens per episode.")] = None,
    max_prompt_tokens: Annotated[int | None, typer.Option(
        min=1, help="End an episode before a turn whose prompt is longer (never truncated).")] = None,
    time_budget: Annotated[float | None, typer.Option(min=0.001, help="Seconds per episode.")] = None,
    temperature: Annotated[float, typer.Option(min=0.0001, help="Sampling temperature.")] = 1.0,
    top_p: Annotated[float, typer.Option(min=0.0001, max=1.0, help="Nucleus sampling (1 = off).")] = 1.0,
    top_k: Annotated[int, typer.Option(min=0, help="Top-k sampling (0 = off).")] = 0,
    seed: Annotated[int, typer.Option(help="Run seed; each episode's seed derives from it.")] = 0,
    split: Annotated[str, typer.Option(help="Which tasks: train, heldout or all.")] = "all",
    task_ids: Annotated[list[str] | None, typer.Option("--task", help="Run only this task; repeatable.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Run at most N tasks.")] = None,
    harness_config: Annotated[Path | None, typer.Option(
        help="YAML: harness override, replay/tools/shell/proxy options (see tracegym/harnesses/config.py).")] = None,
    precision: Annotated[PrecisionChoice, typer.Option(
        help="Sampler precision; auto: bf16 where the device computes it natively, else fp32.")] = "fp32",
    device: Annotated[str, typer.Option(help="torch device of the sampler.")] = "cpu",
    base_url: Annotated[str | None, typer.Option(
        help="Sample from an OpenAI-compatible endpoint instead (messages only: no token record).")] = None,
    tool_schemas: Annotated[Literal["full", "compact"], typer.Option(
        help="compact: one signature line per tool in the system prompt instead of JSON schemas (much shorter "
             "prompts; as the training config's prompt.tool_schemas).")] = "full",
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a model on a task set: K episodes per task, scored, stored as rollouts with their token records."""
    from tracegym.harnesses.config import HarnessFactory, load_harness_config
    from tracegym.harnesses.taskrun import resolve_task_set, run_task_set, select_tasks
    from tracegym.models import compute
    from tracegym.store import open_store
    from tracegym.training.config import PromptSection
    from tracegym.training.prompts import shorten_task

    options = _options(samples, concurrency, seed, temperature, top_p, top_k, max_new_tokens, max_turns, max_tokens,
                       max_prompt_tokens, time_budget)
    config, base_dir = load_harness_config(harness_config)
    with open_store(store) as st:
        ts = resolve_task_set(st, task_set)
        tasks = select_tasks(ts, _split(split), task_ids, limit)
        if tool_schemas == "compact":
            tasks = [shorten_task(t, PromptSection(context="full", tool_schemas="compact")) for t in tasks]
        harnesses = HarnessFactory(config, base_dir)
        policy = _policy(model, base_url, precision, device, seed, concurrency)
        err.print(f"Running {len(tasks)} tasks x {samples} samples of {ts.manifest.name} with {model}...")

        async def go(bar: Any) -> Any:
            try:
                return await run_task_set(st, ts, tasks, policy, options, harnesses, model,
                                          on_episode=lambda _episode: bar.advance())
            finally:
                await policy.aclose()
                harnesses.close()

        with progress("episodes", total=len(tasks) * samples) as bar:
            result = compute.run(go(bar))
    _report(result, as_json)


def _options(samples: int, concurrency: int, seed: int, temperature: float, top_p: float, top_k: int,
             max_new_tokens: int, max_turns: int, max_tokens: int | None, max_prompt_tokens: int | None,
             time_budget: float | None) -> Any:
    from pydantic import ValidationError

    from tracegym.errors import ConfigError
    from tracegym.harnesses.runner import EpisodeLimits, RunOptions
    from tracegym.models.sampling import SamplingParams

    try:
        sampling = SamplingParams(temperature=temperature, top_p=top_p, top_k=top_k, max_new_tokens=max_new_tokens)
        limits = EpisodeLimits(max_turns=max_turns, max_tokens=max_tokens, max_prompt_tokens=max_prompt_tokens,
                               time_budget_s=time_budget)
    except ValidationError as e:
        first = e.errors()[0]
        raise ConfigError(f"invalid sampling or limit options: {first['msg']}") from None
    return RunOptions(samples=samples, concurrency=concurrency, seed=seed, sampling=sampling, limits=limits)


def _split(split: str) -> Any:
    from tracegym.errors import ConfigError, did_you_mean

    choices = ("train", "heldout", "all")
    if split not in choices:
        raise ConfigError(f"--split {split!r}: choose train, heldout or all.{did_you_mean(split, choices)}")
    return split


def _policy(model: str, base_url: str | None, precision: PrecisionChoice, device: str, seed: int,
            concurrency: int) -> Any:
    from pydantic import ValidationError

    from tracegym.errors import ConfigError
    from tracegym.harnesses.policy import HFPolicyConfig, OpenAIPolicyConfig, make_policy

    try:
        if base_url is not None:
            return make_policy(OpenAIPolicyConfig(base_url=base_url, model=model, max_concurrency=concurrency))
        return make_policy(HFPolicyConfig(model=model, precision=precision, device=device, seed=seed,
                                          max_batch_size=concurrency))
    except ValidationError as e:
        raise ConfigError(f"invalid model options: {e.errors()[0]['msg']}") from None


def _report(result: Any, as_json: bool) -> None:
    summary = result.summary
    if as_json:
        print_json({"run_id": result.run_id, "task_set": result.task_set.manifest.name, **summary})
        return
    rows = [{k: v for k, v in row.items() if k != "harness"} for row in summary["tasks"]]
    print_table(rows, title=f"Run {result.run_id}")
    o = summary["overall"]
    print_table([{"figure": k, "value": v} for k, v in o.items() if k != "stop_reasons"], title="Overall")
    err.print(f"Stops: {', '.join(f'{k} {v}' for k, v in o['stop_reasons'].items())}. Rollouts are in the store: "
              f"tracegym sql \"SELECT * FROM rollouts WHERE run_id = '{result.run_id}'\"")
