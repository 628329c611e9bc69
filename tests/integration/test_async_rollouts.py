"""AsyncRollouts with real sampler processes over a tiny random Llama: versions, staleness, publish, deaths.

The task set is a handful of chat tasks scored by a regex (the reply starts with a capital letter), so
the tiny model earns a reward by chance. Two pools (fp32 and bf16, one process each) share one source
across the steps of the first test, since starting a process (torch, transformers, the model) takes
seconds.
"""

from __future__ import annotations

import copy
import hashlib
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import yaml

from tracegym.errors import ModelError
from tracegym.models.load import stop_token_ids
from tracegym.models.logprobs import batch_logprobs_of
from tracegym.models.tiny import tiny_policy
from tracegym.samplers.config import SamplerPool
from tracegym.samplers.orchestrator import AsyncRollouts
from tracegym.samplers.rollouts import RolloutBatch
from tracegym.tasks.spec import TaskSpec, dump_spec
from tracegym.tasks.taskset import Manifest, TaskEntry, load_task_set
from tracegym.training.config import TrainConfig

EVALS = """\
version: 1
evals:
  - name: starts_upper
    kind: match
    mode: regex
    expected: "^[A-Z]"
    case_sensitive: true
"""
TEMPERATURE = 1.0


def _task(i: int) -> TaskSpec:
    return TaskSpec.model_validate({
        "task_id": f"t-{i}", "split": "train", "harness": "chat",
        "prompt": {"system": "Answer briefly.", "messages": [{"role": "user", "content": f"Name a city, {i}."}]},
        "scorer": {"evals": [{"name": "starts_upper"}]},
        "provenance": {"trace_id": f"tr-{i}", "format": "synthetic", "source_task": f"s-{i}", "cut_message_idx": 1},
    })


def write_task_set(folder: Path, tasks: list[TaskSpec], evals: str = EVALS) -> Path:
    (folder / "tasks").mkdir(parents=True)
    (folder / "evals.yaml").write_text(evals)
    for t in tasks:
        (folder / "tasks" / f"{t.task_id}.yaml").write_text(dump_spec(t))
    manifest = Manifest(
        name="async-test", seed=0, evals_sha256=hashlib.sha256(evals.encode()).hexdigest(), options={},
        counts={"tasks": len(tasks)}, clusters=[],
        tasks=[TaskEntry(task_id=t.task_id, file=f"tasks/{t.task_id}.yaml", split="train", harness="chat",
                         trace_id=t.provenance.trace_id) for t in tasks],
    )
    (folder / "manifest.yaml").write_text(yaml.safe_dump(manifest.model_dump(mode="json"), sort_keys=False))
    return folder


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("async")
    model, tokenizer = tiny_policy(seed=0)
    model.save_pretrained(root / "tiny")
    tokenizer.save_pretrained(root / "tiny")
    task_set = load_task_set(write_task_set(root / "tasks", [_task(i) for i in range(6)]))
    return root, model, tokenizer, task_set


def _source(workspace, run_dir: Path, max_staleness: int, pools: list[SamplerPool], state_dict=None,
            batch_groups: int = 2, heartbeat_timeout_s: float = 60, max_failures: int = 3,
            grpo: dict | None = None, backend=None) -> AsyncRollouts:
    root, model, tokenizer, task_set = workspace
    config = TrainConfig.model_validate({
        "run_dir": str(run_dir), "seed": 3, "model": {"ref": str(root / "tiny")},
        "tasks": {"task_set": str(task_set.path)},
        "harness": {"kind": "chat", "limits": {"max_turns": 1}},
        "sampler": {"temperature": TEMPERATURE, "top_p": 0.9, "max_new_tokens": 6, "concurrency": 2},
        "grpo": {"group_size": 2, "batch_groups": batch_groups, **(grpo or {})},
        "async": {"max_staleness": max_staleness, "weight_delta": "xor", "weights_http": {"port": 0}},
    })
    return AsyncRollouts(config.rollout_plan(), task_set.tasks, task_set=task_set, tokenizer=tokenizer,
                         eos_token_ids=stop_token_ids(model, tokenizer),
                         state_dict=state_dict if state_dict is not None else model.state_dict(), policy_version=0,
                         base_dir=root, pools=pools, heartbeat_timeout_s=heartbeat_timeout_s,
                         max_failures=max_failures, backend=backend)


def _until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.05)


def _consume_until_the_replacement_produces(source: AsyncRollouts, sampler_id: str, trainer_version: int,
                                            max_staleness: int, max_batches: int = 12) -> list[int]:
    """Wait for a replacement sampler to start (spawn and imports take tens of seconds on a loaded machine),
    then consume batches until it has delivered a group; the group indices taken.

    Credits bound the buffer, so a replacement gets work only as the trainer consumes: waiting for its group
    without consuming can wait forever on the other samplers having filled the buffer first."""
    _until(lambda: source.stats()["samplers"][sampler_id]["ready"], f"the replacement {sampler_id} is ready", 300)
    taken: list[int] = []
    for _ in range(max_batches):
        batch = source.next_batch(2, trainer_version=trainer_version)
        _check_batch(batch, 2, trainer_version, max_staleness)
        taken += [g.group_index for g in batch.groups]
        if source.stats()["samplers"][sampler_id]["process_groups"] >= 1:
            return taken
    raise AssertionError(f"the replacement {sampler_id} produced nothing in {max_batches} batches")


def _perturbed(model) -> dict[str, torch.Tensor]:
    """The weights moved by a little noise (tied weights stay tied)."""
    moved = copy.deepcopy(model)
    gen = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for p in moved.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    return moved.state_dict()


def _rescored(model, episode) -> torch.Tensor:
    inputs = episode.tokens.turn_inputs(episode.turns)
    with torch.no_grad():
        out = batch_logprobs_of(model, [p for p, _, _ in inputs], [c for _, c, _ in inputs], TEMPERATURE,
                                [s for _, _, s in inputs])
    return torch.cat(out)


def _sampled_with(model, state_dict, episode) -> bool:
    model.load_state_dict(state_dict)
    record = episode.tokens
    return torch.allclose(_rescored(model, episode), record.sampler_logprobs[record.loss_mask], atol=2e-4, rtol=0)


def _check_batch(batch: RolloutBatch, n: int, trainer_version: int, max_staleness: int) -> None:
    assert len(batch.groups) == n and batch.consumed == n + len(batch.stale)
    for group in batch.groups:
        assert len(group.episodes) == 2 and trainer_version - group.policy_version <= max_staleness
        for e in group.episodes:
            e.tokens.validate()
            assert e.harness_error is None and e.reward in (0.0, 1.0) and e.sampler_id in ("fp32/0", "bf16/0")


@pytest.mark.slow
def test_samplers_produce_versioned_groups_follow_publishes_and_survive_a_kill(workspace, tmp_path, capfd) -> None:
    _, model, _, _ = workspace
    scorer_model = tiny_policy(seed=0)[0]
    # The bf16 pool reads its weights over the trainer's HTTP endpoint, as a sampler on another machine would.
    source = _source(workspace, tmp_path / "run", 1, [SamplerPool(precision="fp32"),
                                                      SamplerPool(precision="bf16", weights="http")])
    seen: list[int] = []
    pids: list[int] = []
    try:
        source.start()
        first = source.next_batch(2, trainer_version=0)
        _check_batch(first, 2, 0, 1)
        assert all(g.policy_version == 0 for g in first.groups)
        seen += [g.group_index for g in first.groups]
        pids += [s["pid"] for s in source.stats()["samplers"].values()]

        # Publish: the samplers load the new version, and what they sample afterwards comes from it. Each holds
        # version 0 first: one that started later would read both versions in one poll, a load and not a sync.
        _until(lambda: all(s["version"] == 0 for s in source.stats()["samplers"].values()), "samplers hold v0")
        new = _perturbed(model)
        sync = source.publish(new, 1)
        # Sent as what changed since version 0 in each pool's precision (async.weight_delta: xor).
        assert sync["sync/whole"] == 0 and 0 < sync["sync/changed"] <= sync["sync/elements"]
        assert sorted(p.name for p in (source.weights_dir / "step_1").glob("*.safetensors")) == [
            "bf16.delta.safetensors", "fp32.delta.safetensors"]
        handed_before = source.stats()["source/next_group_index"]
        _until(lambda: all(s["version"] == 1 for s in source.stats()["samplers"].values()), "samplers load v1")
        pools = source.stats()["pools"]
        for pool in ("fp32", "bf16"):  # bytes: whole version 0, then version 1's delta; one sync, timed
            sizes = [(source.weights_dir / f"step_{v}" / name).stat().st_size
                     for v, name in ((0, f"{pool}.safetensors"), (1, f"{pool}.delta.safetensors"))]
            assert pools[pool]["sync_bytes"] == sum(sizes) and pools[pool]["syncs"] == 1, (pool, pools)
            assert 0 < pools[pool]["sync_latency_s"] == pools[pool]["sync_latency_mean_s"] < 60
        fresh = []
        while len(fresh) < 2:
            batch = source.next_batch(2, trainer_version=1)
            _check_batch(batch, 2, 1, 1)
            # A task handed out after a publish starts on the published weights, never an older copy.
            assert all(g.policy_version == 1 for g in batch.groups if g.group_index >= handed_before)
            seen += [g.group_index for g in batch.groups]
            fresh += [e for g in batch.groups if g.policy_version == 1 for e in g.episodes if e.sampler_id == "fp32/0"]
        assert all(_sampled_with(scorer_model, new, e) for e in fresh)
        assert not any(_sampled_with(scorer_model, model.state_dict(), e) for e in fresh)

        # Staleness: a full buffer of groups from versions <= 1 is dropped (and counted) at trainer version 3.
        _until(lambda: source.stats()["source/buffered_groups"] >= source.capacity, "the buffer fills")
        dropped_before = source.stats()["source/dropped_stale"]
        source.publish(new, 2)
        source.publish(new, 3)
        late = source.next_batch(2, trainer_version=3)
        _check_batch(late, 2, 3, 1)
        seen += [g.group_index for g in late.groups]
        assert len(late.stale) >= source.capacity
        # Dropped groups are handed back to be stored, marked: the store loses nothing that was sampled.
        assert all(3 - g.policy_version > 1 for g in late.stale)
        marked = late.stored_episodes(4)
        assert sum(e.train_use == "stale" for e in marked) == 2 * len(late.stale)
        assert len(marked) == 2 * (len(late.stale) + 2)
        stats = source.stats()
        assert stats["source/dropped_stale"] - dropped_before == len(late.stale)
        assert sum(v for lag, v in stats["staleness"].items() if lag >= 2) >= source.capacity

        # A sampler killed with SIGKILL is reported and replaced; the run goes on and the replacement samples.
        victim = stats["samplers"]["fp32/0"]["pid"]
        os.kill(victim, signal.SIGKILL)
        _until(lambda: source.stats()["source/sampler_restarts"] == 1, "the dead sampler is replaced")
        seen += _consume_until_the_replacement_produces(source, "fp32/0", trainer_version=3, max_staleness=1)
        stats = source.stats()
        assert stats["source/sampler_deaths"] == 1 and stats["samplers"]["fp32/0"]["deaths"] == 1
        assert stats["samplers"]["fp32/0"]["pid"] != victim and stats["source/samplers_alive"] == 2
        assert "sampler fp32/0 exited with code -9" in capfd.readouterr().err
        pids += [s["pid"] for s in stats["samplers"].values()]
        assert len(seen) == len(set(seen))  # no group handed out twice, the requeued ones included
    finally:
        source.close()
    _assert_gone(pids)


def _assert_gone(pids: list[int]) -> None:
    assert not [p for p in multiprocessing.active_children() if p.pid in pids]
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()], "a sampler process outlived close()"


@pytest.mark.slow
def test_max_staleness_zero_keeps_only_current_groups_and_a_hung_sampler_is_replaced(workspace, tmp_path,
                                                                                       capfd) -> None:
    _, model, _, _ = workspace
    source = _source(workspace, tmp_path / "run", 0, [SamplerPool(precision="fp32")], heartbeat_timeout_s=10)
    pids: list[int] = []
    try:
        source.start()
        first = source.next_batch(2, trainer_version=0)
        _check_batch(first, 2, 0, 0)
        _until(lambda: source.stats()["source/buffered_groups"] >= source.capacity, "the buffer fills")
        source.publish(model.state_dict(), 1)
        batch = source.next_batch(2, trainer_version=1)
        _check_batch(batch, 2, 1, 0)
        assert all(g.policy_version == 1 for g in batch.groups)
        assert len(batch.stale) >= source.capacity and batch.consumed == 2 + len(batch.stale)
        assert source.stats()["staleness"].get(1, 0) == len(batch.stale)

        # A sampler that stops answering (SIGSTOP: alive, but no heartbeat) is killed and replaced.
        hung = source.stats()["samplers"]["fp32/0"]["pid"]
        pids.append(hung)
        os.kill(hung, signal.SIGSTOP)
        _until(lambda: source.stats()["source/sampler_restarts"] == 1, "the hung sampler is replaced")
        _consume_until_the_replacement_produces(source, "fp32/0", trainer_version=1, max_staleness=0)
        stats = source.stats()
        assert stats["source/sampler_deaths"] == 1 and stats["source/sampler_restarts"] == 1
        assert stats["samplers"]["fp32/0"]["pid"] != hung
        assert "sampler fp32/0 sent no heartbeat" in capfd.readouterr().err
        pids += [s["pid"] for s in stats["samplers"].values()]
    finally:
        source.close()
    _assert_gone(pids)


@pytest.mark.slow
def test_dynamic_sampling_hands_out_only_groups_with_a_signal_and_counts_the_rest(workspace, tmp_path) -> None:
    """Groups of 2 on a reward the tiny model earns about one time in four: most groups are all 0. The trainer
    gets only groups whose rewards differ; the others are set aside and counted in the data position, and one
    step takes at most max_sampling_rounds x batch_groups groups, more than the buffer holds."""
    source = _source(workspace, tmp_path / "run", 1, [SamplerPool(precision="fp32")],
                     grpo={"dynamic_sampling": True, "max_sampling_rounds": 3})
    kept = set_aside = 0
    taken: list[int] = []
    try:
        source.start()
        for _ in range(4):
            batch = source.next_batch(2, trainer_version=0)
            aside = batch.stats["grpo/set_aside_groups"]
            assert all(g.has_signal for g in batch.groups)
            assert batch.consumed == len(batch.groups) + aside and len(batch.stale) == 0
            assert len(batch.groups) == 2 or len(batch.groups) + aside == 6  # full, or three rounds' worth looked at
            assert 0 <= batch.stats["grpo/sampled_reward_mean"] <= 1
            kept, set_aside = kept + len(batch.groups), set_aside + int(aside)
            taken += [g.group_index for g in batch.groups]
        assert kept > 0 and set_aside > 0
        assert source.stats()["source/set_aside_groups"] == set_aside and source.capacity < 6
        assert len(taken) == len(set(taken))
    finally:
        source.close()


@pytest.mark.slow
def test_a_sampler_that_cannot_start_is_given_up_and_the_error_reaches_the_trainer(workspace, tmp_path) -> None:
    source = _source(workspace, tmp_path / "run", 1, [SamplerPool(precision="fp32", device="nodevice:0")],
                     max_failures=1)
    try:
        source.start()
        with pytest.raises(ModelError, match=r"(?s)Every sampler process failed.*could not start.*nodevice"):
            source.next_batch(2, trainer_version=0)
        stats = source.stats()
        assert stats["samplers"]["fp32/0"]["given_up"] and stats["source/samplers_alive"] == 0
    finally:
        source.close()


class _QuietLink:
    """A sampler that only reports (ready, then one heartbeat of the counters it is given) and takes no task: the
    orchestrator's side of a sampler without its process."""

    pid = None

    def __init__(self, counters: dict[str, float]) -> None:
        self.inbox: list[tuple] = [("ready", 0), ("beat", counters)]

    def send(self, message: tuple) -> None:
        pass

    def receive(self) -> list[tuple]:
        out, self.inbox = self.inbox, []
        return out

    def exit_reason(self) -> None:
        return None

    def waitables(self) -> list:
        return []

    def kill(self) -> None:
        pass


class LinkOnlyBackend:
    """A backend's parts that a test whose samplers are fakes leaves as the process backend has them: the samplers
    read the broadcast's folder, and there is nothing of its own to count or release."""

    def weight_broadcast(self, files):
        return files

    def stats(self) -> dict[str, float]:
        return {}

    def close(self) -> None:
        pass


class _ReadingBackend(LinkOnlyBackend):
    """Starts no process: reads the first version the way the sampler would (through its spec's weights), and
    reports what it read in a heartbeat."""

    def __init__(self) -> None:
        self.specs = []

    def start(self, spec, pool) -> _QuietLink:
        from tracegym.samplers.weights.folder import WeightWatcher

        self.specs.append(spec)
        watcher = WeightWatcher(spec.weights, spec.precision)
        version, _ = watcher.poll()
        return _QuietLink({"version": float(version), "bytes_read": float(watcher.bytes_read), "syncs": 2.0,
                           "sync_latency_s": 0.5, "weight_loads": 3.0})

    def stop(self, links) -> None:
        pass


def test_pools_get_their_engine_device_precision_and_weight_source_and_sync_figures_add_up_per_pool(
        workspace, tmp_path) -> None:
    import httpx

    from tracegym.samplers.weights.folder import FolderVersions
    from tracegym.samplers.weights.http import TOKEN_FILE, HttpVersions, bearer_key

    backend = _ReadingBackend()
    source = _source(workspace, tmp_path / "run", 1, [
        SamplerPool(name="gpu", engine="vllm", precision="fp8", device="cuda:1", processes=2, weights="http",
                    gpu_memory=0.3),
        SamplerPool(precision="fp32")], backend=backend)
    try:
        source.start()
        url = source.weights_url
        token = next(s.weights.token for s in backend.specs if isinstance(s.weights, HttpVersions))
        token_file = tmp_path / "run" / TOKEN_FILE  # for a reader of the operator's own; the run's samplers get it
        assert token_file.read_text() == token and token_file.stat().st_mode & 0o777 == 0o600
        assert httpx.get(f"{url}/versions").status_code == 401
        listing = httpx.get(f"{url}/versions", headers={"Authorization": f"Bearer {bearer_key(token)}"}).json()[
            "versions"]
        assert [v["version"] for v in listing] == [0] and set(listing[0]["files"]) == {
            "bf16.safetensors", "fp32.safetensors"}  # fp8 travels as bf16, which vLLM quantizes
        gpu = [s for s in backend.specs if s.sampler_id.startswith("gpu/")]
        assert [s.sampler_id for s in gpu] == ["gpu/0", "gpu/1"]
        assert {(s.engine, s.precision, s.quantization, s.device, s.gpu_memory) for s in gpu} == {
            ("vllm", "bf16", "fp8", "cuda:1", 0.3)}
        assert all(isinstance(s.weights, HttpVersions) and str(s.weights) == url for s in gpu)
        [cpu] = [s for s in backend.specs if s.sampler_id == "fp32/0"]
        assert isinstance(cpu.weights, FolderVersions) and cpu.quantization is None
        _until(lambda: all(s["ready"] for s in source.stats()["samplers"].values()), "the heartbeats are read")
        pools = source.stats()["pools"]
        whole = {p: (source.weights_dir / "step_0" / f"{p}.safetensors").stat().st_size for p in ("bf16", "fp32")}
        sync = ("sync_bytes", "syncs", "sync_latency_s", "sync_latency_mean_s")
        assert {k: pools["gpu"][k] for k in sync} == {"sync_bytes": 2.0 * whole["bf16"], "syncs": 4.0,
                                                      "sync_latency_s": 1.0, "sync_latency_mean_s": 0.25}
        assert pools["fp32"]["sync_bytes"] == whole["fp32"] and pools["fp32"]["sync_latency_mean_s"] == 0.25
    finally:
        source.close()
    with pytest.raises(httpx.ConnectError):  # the endpoint goes with the source
        httpx.get(f"{url}/versions")
