"""The FSDP2 trainer on two gloo ranks of this CPU against the single-process trainer, on the same rollout groups.

Tolerance: the ranks sum their gradients in another order than one process (each rank's micro-batches, then a
reduce-scatter), so losses, gradient norms and weights agree to float rounding, not bit for bit. AdamW divides by
sqrt(v), which can turn a rounding difference in a near-zero gradient into a step of a fraction of lr, so the
weights after the steps are compared to 2% of lr (absolute), and the losses and norms to a relative 1e-5.

The same holds with `loss.kl_beta` (a frozen reference model, whole on every rank) and with a LoRA adapter (peft
layers in the sharded blocks; only the adapter moves, and the base weights come back bit for bit).
"""

from __future__ import annotations

import copy
import uuid
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

from tests.unit.test_trainer_step import TEMPERATURE, VOCAB, _groups
from tracegym.models.tiny import tiny_llama
from tracegym.training import lora
from tracegym.training.config import GRPOSection, LoraSection, LossSection, OptimSection
from tracegym.training.grpo.trainer import Trainer
from tracegym.training.parallel.sharded import Rendezvous, share

LR = 1e-3
LOSS_ATOL = 1e-5
"""The step losses here are a few 0.01 to 0.1, sums of terms of both signs (advantages sum to zero in a group)."""
STEPS = 3
# Small micro-batches: each rank packs several, and the two ranks get different numbers of them (idle passes).
OPTIM = {"lr": LR, "micro_batch_tokens": 40}
KL_BETA = 0.5
ADAPTER = LoraSection(r=4, alpha=8, target_modules=["q_proj", "v_proj", "down_proj"])


def _setup():
    model = tiny_llama(VOCAB, seed=3, eos_token_id=2)
    batches = [_groups(model, n_groups=3, seed=s) for s in (0, 1, 2)]
    return model, batches


def _sections(variant: str = "full") -> tuple[OptimSection, GRPOSection, LossSection]:
    return OptimSection(**OPTIM), GRPOSection(), LossSection(kl_beta=KL_BETA if variant == "kl" else 0.0)


def _reference(variant: str):
    """The KL's frozen reference: near the policy but not it, so that the KL term pulls from the first step. (A
    reference as far as another random model puts the KL near 9 nats, where one process's gradient norm moves by 1e-4
    between two packings of the same batch.)"""
    if variant != "kl":
        return None
    reference, other = tiny_llama(VOCAB, seed=3, eos_token_id=2), tiny_llama(VOCAB, seed=4, eos_token_id=2)
    with torch.no_grad():
        for mine, theirs in zip(reference.parameters(), other.parameters(), strict=True):
            mine.lerp_(theirs, 0.1)
    return reference


def _adapted(model, base: Path, seed: int):
    """`model` under a fresh adapter whose A is drawn from `seed` (B is zero); the model peft injected it into."""
    torch.manual_seed(seed)
    return lora.with_adapter(model, ADAPTER, str(base)).get_base_model()


def _rank(rank: int, rendezvous: Rendezvous, out: Path, steps: range, resume: bool, variant: str = "full") -> None:
    """One rank: rank 0 drives the steps and saves what it gathered; rank 1 serves."""
    torch.set_num_threads(1)
    from tracegym.training.parallel.sharded import ShardedTrainer, join, leave

    join(rendezvous, rank)
    try:
        model, batches = _setup()
        if variant == "lora":  # rank 1 draws another A: the trainer must give it rank 0's
            model = _adapted(model, out / "base", seed=rank)
        state = torch.load(out / "resume.pt", weights_only=False) if resume else None
        if state is not None:
            model.load_state_dict(state["weights"])
        trainer = ShardedTrainer(model, *_sections(variant), temperature=TEMPERATURE,
                                 optimizer_state=state["optimizer"] if state else None, reference=_reference(variant))
        if rank > 0:
            trainer.serve()
            return
        metrics = [trainer.step(batches[i]) for i in steps]
        weights, optimizer = trainer.gathered_weights(), trainer.optimizer_state()
        trainer.stop()
        merged = lora.merged_state_dict(trainer.model, weights) if variant == "lora" else None
        torch.save({"metrics": metrics, "weights": weights, "optimizer": optimizer, "merged": merged},
                   out / ("resume.pt" if not resume and len(steps) < STEPS else "result.pt"))
    finally:
        leave()


def _gradient_rank(rank: int, rendezvous: Rendezvous, out: Path) -> None:
    """Both ranks backpropagate one batch (no announcing: each calls the step's work itself) and gather the grads."""
    torch.set_num_threads(1)
    from tracegym.training.parallel.sharded import ShardedTrainer, join, leave

    join(rendezvous, rank)
    try:
        model, batches = _setup()
        trainer = ShardedTrainer(model, *_sections(), temperature=TEMPERATURE)
        trainer.trainer.accumulate(batches[0])
        grads = {name: p.grad.full_tensor() for name, p in trainer.model.named_parameters()}
        if rank == 0:
            torch.save(grads, out / "grads.pt")
    finally:
        leave()


def _run_ranks(out: Path, steps: range, resume: bool = False, variant: str = "full") -> dict:
    rendezvous = Rendezvous(2, store_file=str(out / f"store-{uuid.uuid4().hex}"))
    mp.spawn(_rank, args=(rendezvous, out, steps, resume, variant), nprocs=2, join=True)
    return torch.load(out / ("result.pt" if resume or len(steps) == STEPS else "resume.pt"), weights_only=False)


def _single(variant: str = "full", base: Path | None = None) -> tuple[list[dict], dict[str, torch.Tensor], Trainer]:
    model, batches = _setup()
    model = copy.deepcopy(model) if base is None else _adapted(model, base, seed=0)
    trainer = Trainer(model, *_sections(variant), temperature=TEMPERATURE, reference=_reference(variant))
    metrics = [trainer.step(batch) for batch in batches]
    return metrics, {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}, trainer


@pytest.fixture
def single(one_thread) -> tuple[list[dict], dict[str, torch.Tensor]]:
    return _single()[:2]


def _assert_close(metrics: list[dict], expected: list[dict]) -> None:
    assert all(m["train/optimizer_steps"] == 1 for m in expected), "every step trained"
    for got, want in zip(metrics, expected, strict=True):
        assert got["train/loss"] == pytest.approx(want["train/loss"], rel=0, abs=LOSS_ATOL)
        for key in ("train/grad_norm", "is_ratio/mean", "train/tokens", "train/sequences"):
            assert got[key] == pytest.approx(want[key], rel=1e-4), key


def _assert_weights(weights: dict[str, torch.Tensor], expected: dict[str, torch.Tensor], start,
                    adapter_only: bool = False) -> None:
    """Trained tensors within the tolerance and moved; with `adapter_only`, the others unmoved, bit for bit."""
    assert weights.keys() == expected.keys()
    for name, tensor in expected.items():
        if adapter_only and ".lora_" not in name:
            assert torch.equal(weights[name], tensor) and torch.equal(tensor, start[name]), name
            continue
        diff = (weights[name] - tensor).abs()
        assert float(diff.max()) <= 0.3 * LR, name
        assert float((diff > 0.02 * LR).float().mean()) <= 0.01, name
        assert not torch.equal(tensor, start[name]), f"{name} did not move: the comparison would prove nothing"


@pytest.mark.slow
def test_two_ranks_train_as_one_process(single, tmp_path: Path) -> None:
    expected_metrics, expected_weights = single
    result = _run_ranks(tmp_path, range(STEPS))
    assert max(m["train/micro_batches"] for m in result["metrics"]) > 2, "several micro-batches a step"
    _assert_close(result["metrics"], expected_metrics)
    _assert_weights(result["weights"], expected_weights, _setup()[0].state_dict())
    # The tied output layer comes back as the embeddings' tensor, as in the unsharded model.
    assert result["weights"]["lm_head.weight"] is result["weights"]["model.embed_tokens.weight"]


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_two_ranks_give_the_gradient_of_one_process(tmp_path: Path) -> None:
    model, batches = _setup()
    trainer = Trainer(copy.deepcopy(model), *_sections(), temperature=TEMPERATURE)
    trainer.accumulate(batches[0])
    mp.spawn(_gradient_rank, args=(Rendezvous(2, store_file=str(tmp_path / "store")), tmp_path), nprocs=2, join=True)
    sharded = torch.load(tmp_path / "grads.pt")
    for name, param in trainer.model.named_parameters():
        scale = float(param.grad.abs().max())
        assert scale > 0, name
        torch.testing.assert_close(sharded[name], param.grad, rtol=1e-4, atol=1e-5 * scale, msg=name)


@pytest.mark.slow
def test_two_ranks_resume_from_gathered_state_and_continue_the_curve(single, tmp_path: Path) -> None:
    expected_metrics, expected_weights = single
    first = _run_ranks(tmp_path, range(1))
    resumed = _run_ranks(tmp_path, range(1, STEPS), resume=True)
    _assert_close(first["metrics"] + resumed["metrics"], expected_metrics)
    _assert_weights(resumed["weights"], expected_weights, first["weights"])


def test_samples_are_shared_out_by_length_and_each_goes_to_one_rank() -> None:
    model, batches = _setup()
    from tracegym.training.grpo.trainer import prepare

    samples = prepare(batches[0], std_normalization=False).samples
    parts = [share(samples, r, 2) for r in range(2)]
    assert sorted(id(s) for p in parts for s in p) == sorted(id(s) for s in samples)
    loads = [sum(s.input_ids.numel() for s in p) for p in parts]
    assert abs(loads[0] - loads[1]) <= max(s.input_ids.numel() for s in samples)


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_two_ranks_train_as_one_process_with_a_kl_reference(tmp_path: Path) -> None:
    expected_metrics, expected_weights, _ = _single("kl")
    assert all(m["kl_ref/k3"] > 0 for m in expected_metrics), "the reference differs from the policy"
    result = _run_ranks(tmp_path, range(STEPS), variant="kl")
    _assert_close(result["metrics"], expected_metrics)
    for got, want in zip(result["metrics"], expected_metrics, strict=True):
        assert got["kl_ref/k3"] == pytest.approx(want["kl_ref/k3"], rel=1e-4)
    _assert_weights(result["weights"], expected_weights, _setup()[0].state_dict())


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_two_ranks_train_a_lora_adapter_as_one_process(tmp_path: Path) -> None:
    _setup()[0].save_pretrained(tmp_path / "base")
    expected_metrics, expected_weights, trainer = _single("lora", tmp_path / "base")
    start = _adapted(_setup()[0], tmp_path / "base", seed=0).state_dict()
    result = _run_ranks(tmp_path, range(STEPS), variant="lora")
    _assert_close(result["metrics"], expected_metrics)
    # Only the adapter moves; the sharded base weights come back as they were.
    _assert_weights(result["weights"], expected_weights, start, adapter_only=True)
    merged = lora.merged_state_dict(trainer.model)
    assert result["merged"].keys() == merged.keys() == _setup()[0].state_dict().keys()
    for name, tensor in merged.items():  # what the samplers get: W + alpha/r B A, from the gathered weights
        torch.testing.assert_close(result["merged"][name], tensor, rtol=0, atol=0.3 * LR, msg=name)


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_two_ranks_resume_a_lora_adapter_and_continue_the_curve(tmp_path: Path) -> None:
    """The adapter's gathered weights and AdamW state (keyed by parameter name), scattered back onto the ranks."""
    _setup()[0].save_pretrained(tmp_path / "base")
    expected_metrics, expected_weights, _ = _single("lora", tmp_path / "base")
    first = _run_ranks(tmp_path, range(1), variant="lora")
    assert first["optimizer"]["state"] and all(".lora_" in name for name in first["optimizer"]["state"])
    resumed = _run_ranks(tmp_path, range(1, STEPS), resume=True, variant="lora")
    _assert_close(first["metrics"] + resumed["metrics"], expected_metrics)
    _assert_weights(resumed["weights"], expected_weights, first["weights"], adapter_only=True)
