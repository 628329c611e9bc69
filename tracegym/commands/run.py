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
    config: Annotated[Path | None, typer.Option(
        help="A train config whose model, prompt, harness, limits and sampler to run with, as `tracegym eval "
             "--config` does [default: the trainer's defaults]. The options below override it.")] = None,
    model: Annotated[str | None, typer.Option(help="A model: 'smollm2-135m' (built in), a model folder, or with "
                                                   "--base-url the endpoint's model name [default: the config's "
                                                   "model.ref].")] = None,
    samples: Annotated[int, typer.Option("--samples", "-k", min=1, help="Episodes per task.")] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes in flight at once.")] = 8,
    max_turns: Annotated[int | None, typer.Option(
        min=1, help="Most model turns per episode [default: the config's harness.limits.max_turns; the "
                    "trainer's is 1].")] = None,
    max_new_tokens: Annotated[int | None, typer.Option(
        min=1, help="Most tokens per model turn [default: the config's sampler.max_new_tokens].")] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Most model tokens per episode.")] = None,
    max_prompt_tokens: Annotated[int | None, typer.Option(
        min=1, help="End an episode before a turn whose prompt is longer (never truncated).")] = None,
    time_budget: Annotated[float | None, typer.Option(min=0.001, help="Seconds per episode.")] = None,
    temperature: Annotated[float | None, typer.Option(
        min=0.0001, help="Sampling temperature [default: the config's sampler.temperature].")] = None,
    top_p: Annotated[float | None, typer.Option(
        min=0.0001, max=1.0, help="Nucleus sampling, 1 = off [default: the config's sampler.top_p].")] = None,
    top_k: Annotated[int | None, typer.Option(
        min=0, help="Top-k sampling, 0 = off [default: the config's sampler.top_k].")] = None,
    seed: Annotated[int, typer.Option(help="Run seed; each episode's seed derives from it.")] = 0,
    split: Annotated[str, typer.Option(help="Which tasks: train, heldout or all.")] = "all",
    task_ids: Annotated[list[str] | None, typer.Option("--task", help="Run only this task; repeatable.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Run at most N tasks.")] = None,
    harness_config: Annotated[Path | None, typer.Option(
        help="YAML: harness override, replay/tools/shell/proxy options (see tracegym/harnesses/config.py) "
             "[default: the config's harness section].")] = None,
    precision: Annotated[PrecisionChoice | None, typer.Option(
        help="Sampler precision; auto: bf16 where the device computes it natively, else fp32 [default: the "
             "config's sampler.precision].")] = None,
    device: Annotated[str, typer.Option(help="torch device of the sampler.")] = "cpu",
    base_url: Annotated[str | None, typer.Option(
        help="Sample from an OpenAI-compatible endpoint instead (messages only: no token record).")] = None,
    tool_schemas: Annotated[Literal["full", "compact"] | None, typer.Option(
        help="compact: one signature line per tool in the system prompt instead of JSON schemas (much shorter "
             "prompts) [default: the config's prompt.tool_schemas].")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a model on a task set: K episodes per task, scored, stored as rollouts with their token records.

    Episodes run as training and `tracegym eval` run them: with a train config's settings (--config), else the
    trainer's defaults (one turn of at most 128 tokens, top-p 0.95, the prompt from the last user message).
    """
    from tracegym.evals.checkpoints.candidates import eval_config
    from tracegym.harnesses.config import HarnessFactory, load_harness_config
    from tracegym.harnesses.taskrun import resolve_task_set, run_task_set, select_tasks
    from tracegym.models import compute
    from tracegym.store.access import StoreAccess
    from tracegym.tasks.prompts import shorten_task

    access = StoreAccess(store)
    with access.writing() as st:  # read at the start; the episodes are written in batches, not held across them
        ts = resolve_task_set(st, task_set)
    settings, source = eval_config([], config, ts.path)
    options = _options(settings, samples, concurrency, seed, {
        "temperature": temperature, "top_p": top_p, "top_k": top_k, "max_new_tokens": max_new_tokens,
    }, {"max_turns": max_turns, "max_tokens": max_tokens, "max_prompt_tokens": max_prompt_tokens,
        "time_budget_s": time_budget})
    prompt = settings.prompt.model_copy(update={"tool_schemas": tool_schemas or settings.prompt.tool_schemas})
    tasks = [shorten_task(t, prompt) for t in select_tasks(ts, _split(split), task_ids, limit)]
    if harness_config is not None:
        harnesses = HarnessFactory(*load_harness_config(harness_config))
    else:
        harnesses = HarnessFactory(settings.harness.harness_config(), Path.cwd())
    model = model or settings.model.ref
    policy = _policy(model, base_url, precision or settings.sampler.precision, device, seed, concurrency)
    err.print(f"Running {len(tasks)} tasks x {samples} samples of {ts.manifest.name} with {model} (settings: "
              f"{source}; {options.limits.max_turns} turns of at most {options.sampling.max_new_tokens} "
              "tokens)...")

    async def go(bar: Any) -> Any:
        try:
            return await run_task_set(access, ts, tasks, policy, options, harnesses, model,
                                      on_episode=lambda _episode: bar.advance())
        finally:
            await policy.aclose()
            harnesses.close()

    with progress("episodes", total=len(tasks) * samples) as bar:
        result = compute.run(go(bar))
    _report(result, as_json)


def _options(settings: Any, samples: int, concurrency: int, seed: int, sampling: dict[str, Any],
             limits: dict[str, Any]) -> Any:
    """The run's options: the settings' sampler and limits, with the options given on the command line."""
    from pydantic import ValidationError

    from tracegym.errors import ConfigError
    from tracegym.harnesses.runner import EpisodeLimits, RunOptions
    from tracegym.models.sampling import SamplingParams

    given = {k: v for k, v in sampling.items() if v is not None}
    try:
        params = SamplingParams.model_validate({**settings.sampler.params.model_dump(), **given})
        episode = EpisodeLimits.model_validate({**settings.harness.limits.model_dump(),
                                                **{k: v for k, v in limits.items() if v is not None}})
    except ValidationError as e:
        first = e.errors()[0]
        raise ConfigError(f"invalid sampling or limit options: {first['msg']}") from None
    return RunOptions(samples=samples, concurrency=concurrency, seed=seed, sampling=params, limits=episode)


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
    err.print(f"Stops: {', '.join(f'{k} {v}' for k, v in o['stop_reasons'].items())}. The episodes: tracegym runs "
              f"show {result.run_id}; one of them beside the turn it replaced: tracegym rollouts show ID")
