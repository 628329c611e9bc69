"""`tracegym train` end to end: warm start on real successful traces, then GRPO through the real runner,
replay harness and scorer; metrics and rollouts in the store; checkpoints load with transformers."""

from __future__ import annotations

import json
import math
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.integration.train_workspace import Workspace, copy_workspace, tiny_config, write_config
from tracegym.models.precision import resolve_precision
from tracegym.training.config import OptimSection
from tracegym.training.schedule import learning_rate

pytestmark = pytest.mark.slow  # `tracegym train` end to end, on a copy of a workspace built from the real traces


@pytest.fixture(scope="module")
def workspace(
    tmp_path_factory: pytest.TempPathFactory, tau_workspace_template: Workspace
) -> Workspace:
    return copy_workspace(tau_workspace_template, tmp_path_factory.mktemp("train"))


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, local_files_only=True)
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _marks(store, run_id: str) -> dict[tuple[int, str], int]:
    """Groups per (train_step, train_use) of a run's stored rollouts (4 episodes a group in these configs)."""
    rows = store.query("SELECT train_step, train_use, count(*) AS n FROM rollouts WHERE run_id = ? GROUP BY ALL",
                       [run_id])
    assert all(r["n"] % 4 == 0 for r in rows)
    return {(r["train_step"], r["train_use"]): r["n"] // 4 for r in rows}


@dataclass(frozen=True)
class TinyRun:
    """One `tracegym train --json` of the tiny model (2 warm-start steps, 4 GRPO steps of 2 groups of 4, a cosine
    schedule with 1 warmup step, precision auto) and what it left in the store and on disk."""

    summary: dict[str, Any]
    metrics: dict[str, dict[int, float]]
    rollouts: list[dict[str, Any]]
    marks: dict[tuple[int, str], int]
    checkpoints: list[dict[str, Any]]
    status: str
    base: dict[str, torch.Tensor]
    warm: dict[str, torch.Tensor]
    final: dict[str, torch.Tensor]


@pytest.fixture(scope="module")
def tiny_run(workspace: Workspace, tmp_path_factory: pytest.TempPathFactory) -> TinyRun:
    """The run the tests below check, made once for the module."""
    from typer.testing import CliRunner

    from tracegym.cli import app
    from tracegym.store import open_store
    from tracegym.training.metrics import read_metrics

    root = tmp_path_factory.mktemp("tiny-run")
    data = tiny_config(workspace, root / "run", optim={"lr_scheduler": "cosine", "lr_warmup_steps": 1},
                       grpo={"optimizer_steps": 2})
    data["sampler"]["precision"] = "auto"
    config = write_config(root / "run.yaml", data)
    with pytest.MonkeyPatch.context() as env:  # as the autouse _isolated_env does for a test
        env.chdir(root)
        env.delenv("TRACEGYM_STORE", raising=False)
        result = CliRunner().invoke(app, ["train", "--allow-unredacted", str(config), "--store", str(workspace.store),
                                          "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    run_id = summary["run_id"]
    with open_store(workspace.store, read_only=True) as store:
        metrics = read_metrics(store, run_id)
        rollouts = store.query("SELECT policy_version, reward FROM rollouts WHERE run_id = ?", [run_id])
        marks = _marks(store, run_id)
        checkpoints = store.query("SELECT step, path FROM checkpoints WHERE run_id = ? ORDER BY step", [run_id])
        status = store.scalar("SELECT status FROM runs WHERE run_id = ?", [run_id])
    return TinyRun(summary, metrics, rollouts, marks, checkpoints, status, base=_weights(workspace.tiny_model),
                   warm=_weights(Path(summary["warm_start_checkpoint"])), final=_weights(Path(summary["checkpoint"])))


GRPO_STEPS = range(3, 7)  # after the two warm-start steps


def test_the_summary_counts_every_step_and_the_warm_start_examples(tiny_run: TinyRun) -> None:
    assert tiny_run.summary["step"] == 6 and tiny_run.summary["warmup"]["examples"] == 64


def test_the_summary_says_what_precision_auto_chose(tiny_run: TinyRun) -> None:
    assert tiny_run.summary["sampler_precision"] == resolve_precision("auto", "cpu")


def test_the_warm_start_leaves_out_successful_attempts_at_held_out_tasks(tiny_run: TinyRun) -> None:
    assert tiny_run.summary["warmup"]["excluded_traces"] > 0


def test_the_run_is_stored_as_completed(tiny_run: TinyRun) -> None:
    assert tiny_run.status == "completed"


def test_warm_start_loss_and_grpo_reward_are_logged_at_their_own_steps(tiny_run: TinyRun) -> None:
    assert sorted(tiny_run.metrics["warmup/loss"]) == [1, 2] and sorted(tiny_run.metrics["reward/mean"]) == [3, 4, 5, 6]


def test_every_mean_reward_is_finite(tiny_run: TinyRun) -> None:
    assert all(math.isfinite(v) for v in tiny_run.metrics["reward/mean"].values())


@pytest.mark.parametrize("key", ["train/grad_norm", "advantage/std", "is_ratio/mean", "staleness/lag_0", "time/wait_s",
                                 "sampler/tokens_per_s", "train/tokens_per_s", "grpo/skipped_groups"])
def test_a_grpo_run_logs_the_metric(tiny_run: TinyRun, key: str) -> None:
    assert key in tiny_run.metrics, key


def test_some_group_had_reward_variance_and_was_trained_on(tiny_run: TinyRun) -> None:
    assert sum(tiny_run.metrics["train/optimizer_steps"].values()) >= 1, "some group had reward variance"


def test_each_group_with_a_signal_takes_one_optimizer_step(tiny_run: TinyRun) -> None:
    """Two groups a batch and optimizer_steps 2: one optimizer step per group the trainer did not skip."""
    metrics = tiny_run.metrics
    assert metrics["train/optimizer_steps"] == {s: 2 - metrics["grpo/skipped_groups"][s] for s in GRPO_STEPS}


def test_the_learning_rate_follows_the_cosine_schedule(tiny_run: TinyRun) -> None:
    section = OptimSection(lr=3e-3, lr_scheduler="cosine", lr_warmup_steps=1)
    assert tiny_run.metrics["optim/lr"] == pytest.approx({s: learning_rate(s - 3, 4, section) for s in GRPO_STEPS})


def test_every_episode_is_stored_with_the_policy_version_that_sampled_it(tiny_run: TinyRun) -> None:
    """4 steps x 2 groups x 4 episodes, each sampled by the policy of the step before its own."""
    rollouts = tiny_run.rollouts
    assert len(rollouts) == 4 * 2 * 4 and {r["policy_version"] for r in rollouts} == {2, 3, 4, 5}


def test_the_groups_a_step_skipped_are_stored_as_without_a_signal(tiny_run: TinyRun) -> None:
    skipped = tiny_run.metrics["grpo/skipped_groups"]
    assert {s: tiny_run.marks.get((s, "no_signal"), 0) for s in GRPO_STEPS} == skipped


def test_the_groups_a_step_trained_on_are_stored_as_trained(tiny_run: TinyRun) -> None:
    skipped = tiny_run.metrics["grpo/skipped_groups"]
    assert {s: tiny_run.marks.get((s, "trained"), 0) for s in GRPO_STEPS} == {s: 2 - skipped[s] for s in GRPO_STEPS}


def test_a_checkpoint_is_stored_every_checkpoint_every_steps(tiny_run: TinyRun) -> None:
    assert [c["step"] for c in tiny_run.checkpoints] == [2, 4, 6]


def test_the_warm_start_changes_the_weights(tiny_run: TinyRun) -> None:
    base, warm = tiny_run.base, tiny_run.warm
    assert any(not torch.equal(base[k], warm[k]) for k in base), "the warm start changed the weights"


def test_grpo_changes_the_weights_after_the_warm_start(tiny_run: TinyRun) -> None:
    warm, final = tiny_run.warm, tiny_run.final
    assert any(not torch.equal(warm[k], final[k]) for k in tiny_run.base), "GRPO changed the weights"


def test_dynamic_sampling_trains_only_on_groups_with_a_signal(workspace: Workspace, tmp_path: Path, cli) -> None:
    """The tiny model's reward (a capital first letter) leaves many groups of 4 all 0: with dynamic sampling each
    step samples more groups in their place, trains on none without a signal, and stores every episode."""
    data = tiny_config(workspace, tmp_path / "run", steps=3, checkpoint_every=3,
                       grpo={"dynamic_sampling": True, "max_sampling_rounds": 3})
    result = cli("train", "--allow-unredacted",
                 str(write_config(tmp_path / "run.yaml", data)), "--store", str(workspace.store), "--json")
    assert result.exit_code == 0, result.stderr
    run_id = json.loads(result.stdout)["run_id"]

    from tracegym.store import open_store
    from tracegym.training.metrics import read_metrics

    with open_store(workspace.store, read_only=True) as store:
        metrics = read_metrics(store, run_id)
        episodes = store.scalar("SELECT count(*) FROM rollouts WHERE run_id = ?", [run_id])
        marks = _marks(store, run_id)
    steps = sorted(metrics["grpo/set_aside_groups"])
    assert steps == [3, 4, 5]  # after the two warm-start steps
    trained = {s: metrics["grpo/groups"][s] for s in steps}
    aside = {s: metrics["grpo/set_aside_groups"][s] for s in steps}
    assert all(metrics["grpo/skipped_groups"][s] == 0 for s in steps)
    assert all(trained[s] == 2 or trained[s] + aside[s] == 6 for s in steps)  # full, or three rounds sampled
    # A round follows only a round that set groups aside.
    assert all(1 <= metrics["grpo/sampling_rounds"][s] <= 1 + aside[s] for s in steps)
    assert sum(aside.values()) > 0
    assert episodes == 4 * sum(trained[s] + aside[s] for s in steps)  # set-aside episodes are kept too
    assert marks == {**{(s, "trained"): trained[s] for s in steps}, **{(s, "set_aside"): aside[s] for s in steps
                                                                        if aside[s]}}
    assert all(0 <= metrics["grpo/sampled_reward_mean"][s] <= 1 for s in steps)

    from tracegym.report.plots import reward_chart
    from tracegym.report.rundata import load_run

    with open_store(workspace.store, read_only=True) as store:
        chart = reward_chart(load_run(store, str(tmp_path / "run")))
    assert [line.get_label() for line in chart.axes[0].lines] == ["GRPO batch mean", "all sampled (dynamic sampling)"]


def test_an_asynchronous_run_sends_its_weights_to_the_samplers_as_sparse_deltas(workspace: Workspace, tmp_path: Path,
                                                                              cli) -> None:
    """max_staleness 1 runs a sampler process; after the first (whole) version each publish is what changed in the
    bf16 view, a fraction of the weights' size at a small learning rate, and the sync figures are stored and charted."""
    data = tiny_config(workspace, tmp_path / "run", steps=3, checkpoint_every=3, sampler={"precision": "bf16"},
                       optim={"lr": 1e-5},
                       **{"async": {"max_staleness": 1, "weight_delta": "xor", "full_weights_every": 100}})
    result = cli("train", "--allow-unredacted",
                 str(write_config(tmp_path / "run.yaml", data)), "--store", str(workspace.store), "--json")
    assert result.exit_code == 0, result.stderr
    run_id = json.loads(result.stdout)["run_id"]

    from tracegym.report.plots import sync_chart
    from tracegym.report.rundata import load_run
    from tracegym.store import open_store
    from tracegym.training.metrics import read_metrics

    with open_store(workspace.store, read_only=True) as store:
        metrics = read_metrics(store, run_id)
        chart = sync_chart(load_run(store, str(tmp_path / "run")))
    steps = sorted(metrics["sync/bytes"])
    assert steps == [3, 4, 5] and not any(metrics["sync/whole"].values())
    for step in steps:  # a step that trained nothing changed nothing, and sends an empty delta
        moved = metrics["train/optimizer_steps"][step] == 1
        assert (0 < metrics["sync/changed"][step] < metrics["sync/elements"][step]) == moved
        assert metrics["sync/bytes"][step] < metrics["sync/dense_bytes"][step] / 2
    assert sum(metrics["train/optimizer_steps"][s] for s in steps) >= 1
    assert chart is not None


def test_an_asynchronous_run_samples_from_pools_of_mixed_precision(workspace: Workspace, tmp_path: Path,
                                                                   cli) -> None:
    """`sampler.pools`: an fp32 and a bf16 sampler process; the broadcast writes each version in both precisions,
    both pools' groups reach the store, and the run says what its samplers sampled in. The bf16 pool reads the
    trainer's HTTP endpoint; each pool's bytes read (and sync latency, in steps that saw a load) are stored per
    step and shown by `runs show`."""
    data = tiny_config(workspace, tmp_path / "run", steps=4, checkpoint_every=4,
                       sampler={"pools": [{"precision": "fp32"}, {"precision": "bf16", "weights": "http"}]},
                       **{"async": {"max_staleness": 1, "weights_http": {"port": 0}}})
    result = cli("train", "--allow-unredacted",
                 str(write_config(tmp_path / "run.yaml", data)), "--store", str(workspace.store), "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["sampler_precision"] == "fp32,bf16"
    assert "weights served at http://127.0.0.1:" in result.stderr
    [newest] = sorted((tmp_path / "run" / "weights").glob("step_*"), key=lambda p: int(p.name[5:]))[-1:]
    assert {p.name for p in newest.glob("*.safetensors")} == {"fp32.safetensors", "bf16.safetensors"}

    from tracegym.store import open_store
    from tracegym.training.metrics import read_metrics

    with open_store(workspace.store, read_only=True) as store:
        rows = store.query("SELECT DISTINCT sampler_id FROM rollouts WHERE run_id = ?", [summary["run_id"]])
        trained = store.query("SELECT train_step, list(DISTINCT split_part(sampler_id, '/', 1)) AS pools "
                              "FROM rollouts WHERE run_id = ? AND train_use = 'trained' GROUP BY 1",
                              [summary["run_id"]])
        metrics = read_metrics(store, summary["run_id"])
    assert {r["sampler_id"] for r in rows} == {"fp32/0", "bf16/0"}
    for row in trained:  # a step that trained on both pools keeps each pool's mismatch apart
        pooled = {pool for pool in ("fp32", "bf16") if row["train_step"] in metrics.get(f"mismatch/{pool}/k3_kl", {})}
        assert pooled == (set(row["pools"]) if len(row["pools"]) > 1 else set()), row
    whole = {"fp32": 4, "bf16": 2}  # bytes per parameter: each pool read at least the whole weights once
    parameters = sum(t.numel() for t in _weights(tmp_path / "run" / "checkpoints" / "step-000006").values())
    for pool in ("fp32", "bf16"):
        assert sorted(metrics[f"sync/{pool}/bytes"]) == [3, 4, 5, 6]
        assert sum(metrics[f"sync/{pool}/bytes"].values()) > whole[pool] * parameters / 2  # tied weights sent once
        # a latency is stored in the steps whose figures saw a load after the pool's first; whether a slow pool's
        # next load reaches them before the run ends depends on the machine (tests/unit/test_sync_figures.py)
        assert all(v is not None and v > 0 for v in metrics.get(f"sync/{pool}/latency_s", {}).values())
    shown = cli("runs", "show", tmp_path / "run", "--store", workspace.store, "--json")
    keys = {row["key"] for row in json.loads(shown.stdout)["metrics"]}
    assert {"sync/fp32/bytes", "sync/bf16/bytes"} <= keys
    assert {k for k in keys if k.endswith("/latency_s")} == {k for k in metrics if k.endswith("/latency_s")}


def test_a_run_that_stops_training_says_so(workspace: Workspace, tmp_path: Path, cli) -> None:
    """Greedy sampling gives a group one reply, so every group's rewards are equal and no step trains: after
    IDLE_STEPS such steps the run says so on stderr, once."""
    from tracegym.training.loop import IDLE_STEPS

    data = tiny_config(workspace, tmp_path / "run", steps=IDLE_STEPS + 1, checkpoint_every=IDLE_STEPS + 1,
                       warmup={"steps": 0}, sampler={"top_k": 1, "top_p": 1.0})
    result = cli("train", "--allow-unredacted",
                 str(write_config(tmp_path / "idle.yaml", data)), "--store", str(workspace.store))
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("GRPO steps trained nothing") == 1
    assert f"step {IDLE_STEPS}: the last {IDLE_STEPS} GRPO steps trained nothing" in result.stderr
    shown = cli("runs", "show", tmp_path / "run", "--store", workspace.store)
    said = " ".join(shown.stderr.split())
    assert f"{IDLE_STEPS + 1} of {IDLE_STEPS + 1} GRPO steps trained nothing" in said
    assert f"steps 1-{IDLE_STEPS + 1}." in said
    # its checkpoint is the base model: eval says so and compares the base alone (it stopped: "the same model")
    evaluated = cli("eval", tmp_path / "run", "--tasks", workspace.task_set, "--samples", "1", "--store",
                    workspace.store, "--json")
    assert evaluated.exit_code == 0, evaluated.stderr
    assert "the base model's weights, unchanged by training" in " ".join(evaluated.stderr.split())
    assert [row["model"] for row in json.loads(evaluated.stdout)["groups"][0]["rows"]] == ["tiny-model"]


def test_unknown_config_key_names_the_nearest(workspace: Workspace, tmp_path: Path, cli) -> None:
    config = tiny_config(workspace, tmp_path / "run")
    config["grpo"] = {"group_sise": 4}
    result = cli("train", "--allow-unredacted",
                 str(write_config(tmp_path / "bad.yaml", config)), "--store", str(workspace.store))
    assert result.exit_code == 2
    assert "grpo.group_sise" in result.stderr and "group_size" in result.stderr and "bad.yaml:" in result.stderr


def test_a_ray_cluster_that_does_not_answer_fails_the_run_at_once(workspace: Workspace, tmp_path: Path, cli) -> None:
    """A ray:// address with nothing listening: a ConfigError from the probe (Ray's client would wait 30 s, then say
    "connection timeout"), and the connection is not left counted."""
    pytest.importorskip("ray")
    from tracegym.samplers.backends import ray_cluster
    with socket.socket() as s:  # a port nothing listens at: bound, never listening, closed
        s.bind(("127.0.0.1", 0))
        address = f"ray://127.0.0.1:{s.getsockname()[1]}"
    config = tiny_config(workspace, tmp_path / "run", **{"async": {"max_staleness": 1, "backend": "ray",
                                                                   "ray": {"address": address}}})
    result = cli("train", "--allow-unredacted", write_config(tmp_path / "ray.yaml", config), "--store", workspace.store)
    assert result.exit_code == 2, result.output
    assert f"could not reach the Ray cluster at ray.address '{address}': nothing answers" in " ".join(
        result.stderr.split())
    assert ray_cluster._Connection.holders == 0


def test_train_default_model_two_steps(workspace: Workspace, tmp_path: Path, cli) -> None:
    """SmolLM2-135M: one warm-start step and one GRPO step; the checkpoint loads and generates."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    config = tiny_config(workspace, tmp_path / "run", steps=1, checkpoint_every=1,
                         model={"ref": "smollm2-135m"},
                         tasks={"max_tasks": 2}, sampler={"max_new_tokens": 12},
                         grpo={"group_size": 3, "batch_groups": 1},
                         optim={"lr": 1e-5, "train_layers": 2, "freeze_embeddings": True},
                         warmup={"steps": 1, "batch_size": 2, "max_examples": 8})
    result = cli("train", "--allow-unredacted",
                 str(write_config(tmp_path / "run.yaml", config)), "--store", str(workspace.store),
                 "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["step"] == 2 and summary["trainable_parameters"] > 0

    from tracegym.store import open_store
    from tracegym.training.metrics import read_metrics

    with open_store(workspace.store, read_only=True) as store:
        metrics = read_metrics(store, summary["run_id"])
    assert math.isfinite(metrics["warmup/loss"][1]) and math.isfinite(metrics["reward/mean"][2])

    folder = Path(summary["checkpoint"])
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    ids = tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}], add_generation_prompt=True,
                                        return_tensors="pt", return_dict=True)
    out = model.generate(**ids, max_new_tokens=4, do_sample=False)
    assert out.shape[1] > ids["input_ids"].shape[1]


def test_difficulty_filter_trains_only_tasks_with_reward_variance(workspace: Workspace, tmp_path: Path, cli) -> None:
    from tracegym.tasks.taskset import load_task_set
    from tracegym.training.config import parse_train_config
    from tracegym.training.difficulty import filter_tasks

    data = tiny_config(workspace, tmp_path / "run", steps=2, warmup={"steps": 0},
                       tasks={"difficulty": {"samples": 4}})
    result = cli("train", "--allow-unredacted",
                 str(write_config(tmp_path / "run.yaml", data)), "--store", str(workspace.store), "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    record = json.loads((tmp_path / "run" / "difficulty.json").read_text())
    assert len(record["means"]) == 8 and record["counts"]["episodes"] == 32
    kept = {t for t, m in record["means"].items() if 0 < m < 1}
    assert set(record["kept"]) == kept and 0 < len(kept) < 8, record["means"]  # ~1 reply in 4 earns 1
    assert summary["difficulty"]["kept"] == len(kept)

    from tracegym.store import open_store

    with open_store(workspace.store, read_only=True) as store:
        trained = store.query("SELECT DISTINCT task_id FROM rollouts WHERE run_id = ?", [summary["run_id"]])
    assert {r["task_id"] for r in trained} <= kept

    # A resumed run reads the record back instead of sampling with weights that have changed since.
    config = parse_train_config(data, tmp_path / "run.yaml")
    tasks = load_task_set(workspace.task_set).tasks
    (tmp_path / "run" / "difficulty.json").write_text(json.dumps({**record, "kept": [tasks[0].task_id]}))
    again, _ = filter_tasks(config, tasks, measure=lambda: pytest.fail("the filter sampled again"))
    assert [t.task_id for t in again] == [tasks[0].task_id]


def test_a_failed_start_leaves_no_run_and_the_fixed_config_starts_without_resume(workspace: Workspace,
                                                                                 tmp_path: Path, cli) -> None:
    """A missing task set stops `train` before the run folder is written; a start that fails after it (the warm
    start finds no examples) is replaced by the next start of that folder, without --resume."""
    from tracegym.store import open_store

    run_dir, config_file = tmp_path / "run", tmp_path / "run.yaml"
    fixed = tiny_config(workspace, run_dir, steps=1, checkpoint_every=1, warmup={"steps": 0})
    train = ("train", "--allow-unredacted", config_file, "--store", workspace.store)

    write_config(config_file, {**fixed, "tasks": {**fixed["tasks"], "task_set": str(tmp_path / "no-such-set")}})
    missing = cli(*train)
    assert missing.exit_code == 2 and "no-such-set" in missing.stderr, missing.output
    assert not run_dir.exists()

    write_config(config_file, {**fixed, "warmup": {"steps": 1, "formats": ["no-such-format"]}})
    no_examples = cli(*train)
    assert no_examples.exit_code == 2 and "The warm start found no examples" in no_examples.stderr
    failed_id = json.loads((run_dir / "run.json").read_text())["run_id"]

    write_config(config_file, fixed)
    started = cli(*train)
    assert started.exit_code == 0, started.output
    run_id = json.loads((run_dir / "run.json").read_text())["run_id"]
    said = " ".join(started.stderr.split())
    assert f"held run {failed_id}, which wrote no checkpoint and completed no step: run {run_id} replaces it" in said
    assert f"tracegym runs show {run_id} --store {workspace.store}" in said
    assert f"tracegym report {run_id} --store {workspace.store}" in said and "SELECT" not in said
    with open_store(workspace.store, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM runs WHERE run_id = ?", [failed_id]) == 0
        assert store.scalar("SELECT status FROM runs WHERE run_id = ?", [run_id]) == "completed"
    again = cli(*train)  # a run with a checkpoint is kept: the next start must say --resume
    assert again.exit_code == 2 and f"already holds run {run_id}, with a checkpoint" in again.stderr


def test_a_model_folder_given_relative_is_recorded_and_carded_by_its_absolute_path(workspace: Workspace,
                                                                                   tmp_path: Path, cli) -> None:
    import os

    from tracegym.export.modelcard import md_text
    from tracegym.store import open_store

    relative = os.path.relpath(workspace.tiny_model, Path.cwd())  # the test runs in tmp_path
    assert relative.startswith("..")
    data = tiny_config(workspace, tmp_path / "run", steps=1, checkpoint_every=1, warmup={"steps": 0},
                       model={"ref": relative})
    result = cli("train", "--allow-unredacted", write_config(tmp_path / "run.yaml", data), "--store", workspace.store,
                 "--json")
    assert result.exit_code == 0, result.output
    run_id = json.loads(result.stdout)["run_id"]
    with open_store(workspace.store, read_only=True) as store:
        assert store.scalar("SELECT base_model FROM runs WHERE run_id = ?", [run_id]) == str(
            workspace.tiny_model.resolve())
    exported = cli("export", tmp_path / "run", "--out", tmp_path / "served", "--store", workspace.store)
    assert exported.exit_code == 0, exported.output
    card = (tmp_path / "served" / "README.md").read_text(encoding="utf-8")
    assert f"- Base model: {md_text(str(workspace.tiny_model.resolve()))}" in card and "../" not in card
