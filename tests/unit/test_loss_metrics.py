"""token_loss metrics, option checks and low-precision inputs; the `aggregate` reducer."""

from __future__ import annotations

import math

import pytest
import torch

from tracegym.training.grpo.loss import ISWeighting, LossInputError, aggregate, token_loss

F64 = torch.float64


def _batch(seed: int = 0, positions: int = 6, vocab: int = 16):
    """Random logits with a random top-p-like support per position that contains the sampled token."""
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(positions, vocab, generator=gen, dtype=F64) * 2
    tokens = torch.randint(vocab, (positions,), generator=gen)
    supports = []
    for t in range(positions):
        others = torch.randperm(vocab, generator=gen)[: 1 + t % 4].tolist()
        supports.append(sorted({int(tokens[t]), *others}))
    ids = torch.tensor([v for s in supports for v in s])
    offsets = torch.tensor([0] + [len(s) for s in supports]).cumsum(0)
    # The sampler: the trainer's own support distribution, perturbed, renormalised over S.
    raw = torch.randn(len(ids), generator=gen, dtype=F64) * 0.8 + logits[torch.repeat_interleave(
        torch.arange(positions), offsets.diff()), ids]
    support_logprobs = torch.cat([torch.log_softmax(raw[offsets[t] : offsets[t + 1]], 0) for t in range(positions)])
    sampler = torch.stack([support_logprobs[offsets[t] + supports[t].index(int(tokens[t]))] for t in range(positions)])
    advantages = torch.randn(positions, generator=gen, dtype=F64)
    return logits, tokens, advantages, sampler, ids, offsets, support_logprobs, supports


def test_ratio_metrics_match_a_direct_computation():
    logits, tokens, advantages, sampler, ids, offsets, support_logprobs, supports = _batch()
    _, metrics = token_loss(logits, tokens, advantages, sampler, ids, offsets, support_logprobs, mis=(0.8, 1.25))
    log_pi = torch.stack([torch.log_softmax(logits[t, s], 0)[s.index(int(tokens[t]))] for t, s in enumerate(supports)])
    ratio = (log_pi - sampler).exp()
    assert torch.allclose(metrics["is_ratio/min"], ratio.min()) and torch.allclose(metrics["is_ratio/max"], ratio.max())
    assert torch.allclose(metrics["is_ratio/mean"], ratio.mean())
    outside = ((ratio < 0.8) | (ratio > 1.25)).to(F64).mean()
    assert 0 < outside < 1 and torch.allclose(metrics["mis/masked_frac"], outside)
    assert torch.allclose(metrics["mismatch/k3_kl"], (ratio - 1 - ratio.log()).mean())
    assert all(value.ndim == 0 and not value.requires_grad for value in metrics.values())


def test_metric_keys_follow_the_options():
    logits, tokens, advantages, sampler, ids, offsets, support_logprobs, _ = _batch(seed=1)
    base = {"is_ratio/min", "is_ratio/mean", "is_ratio/max", "mis/masked_frac", "mismatch/k3_kl"}
    sc = {"sc/tail_ratio", "sc/train_head_mass", "sc/rollout_head_mass"}
    _, plain = token_loss(logits, tokens, advantages, sampler, score_centering=False, top_p_replay=False)
    assert set(plain) == base and plain["mis/masked_frac"].item() >= 0
    _, replayed = token_loss(logits, tokens, advantages, sampler, ids, offsets, score_centering=False)
    assert set(replayed) == base | {"support/fallback_frac"}
    _, centered = token_loss(logits, tokens, advantages, sampler, ids, offsets, support_logprobs)
    assert set(centered) == base | sc | {"support/fallback_frac"}
    _, tis = token_loss(logits, tokens, advantages, sampler, ids, offsets, support_logprobs, mis=None, tis_clip=1.1)
    assert "tis/clipped_frac" in tis and tis["mis/masked_frac"].item() == 0.0


def test_rollout_head_mass_exposes_a_head_declared_as_a_truncation():
    logits, tokens, advantages, sampler, ids, offsets, support_logprobs, _ = _batch(seed=2)
    _, right = token_loss(logits, tokens, advantages, sampler, ids, offsets, support_logprobs)
    _, wrong = token_loss(logits, tokens, advantages, sampler - 1.0, ids, offsets, support_logprobs - 1.0)
    assert abs(right["sc/rollout_head_mass"].item() - 1) < 1e-12
    assert abs(wrong["sc/rollout_head_mass"].item() - math.exp(-1)) < 1e-12


def test_low_precision_logits_are_scored_in_float32():
    logits, tokens, advantages, sampler, ids, offsets, support_logprobs, _ = _batch(seed=3)
    half = logits.to(torch.bfloat16).requires_grad_(True)
    loss, _ = token_loss(half, tokens, advantages.float(), sampler.float(), ids, offsets, support_logprobs.float())
    assert loss.dtype == torch.float32
    loss.sum().backward()
    assert half.grad is not None and half.grad.dtype == torch.bfloat16 and half.grad.abs().sum() > 0
    exact, _ = token_loss(logits.to(torch.bfloat16).double(), tokens, advantages, sampler, ids, offsets,
                          support_logprobs)
    assert torch.allclose(loss.double(), exact, atol=1e-5)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (dict(), "score_centering=True needs the sampler's support"),
        (dict(score_centering=False), "top_p_replay=True needs support_ids"),
        (dict(support_offsets=torch.tensor([0, 1])), "come together"),
        (dict(support_logprobs=torch.zeros(1), score_centering=False, top_p_replay=False), "without support_ids"),
        (dict(support_kind="topk", score_centering=False, top_p_replay=False), "support_kind must be one of"),
        (dict(mis=(0.5, 5.0), tis_clip=2.0, score_centering=False, top_p_replay=False), "alternative"),
        (dict(mis=(2.0, 1.0), score_centering=False, top_p_replay=False), "0 < low <= high"),
        (dict(mis=None, tis_clip=0.0, score_centering=False, top_p_replay=False), "positive"),
    ],
)
def test_inconsistent_options_raise_clear_errors(options, message):
    logits = torch.zeros(1, 4, dtype=F64)
    with pytest.raises(ValueError, match=message):
        token_loss(logits, torch.tensor([1]), torch.ones(1, dtype=F64), torch.tensor([-1.0], dtype=F64), **options)


def test_support_mode_errors():
    logits, tokens, advantages, sampler, ids, offsets, support_logprobs, _ = _batch(seed=4)
    with pytest.raises(LossInputError, match="needs support_logprobs"):
        token_loss(logits, tokens, advantages, sampler, ids, offsets)
    with pytest.raises(LossInputError, match="set top_p_replay=False"):
        token_loss(logits, tokens, advantages, sampler, ids, offsets, support_logprobs, support_kind="head")
    with pytest.raises(LossInputError, match="must match support_ids"):
        token_loss(logits, tokens, advantages, sampler, ids, offsets, support_logprobs[:-1])
    with pytest.raises(LossInputError, match="must be finite"):
        token_loss(logits, tokens, advantages, sampler, ids, offsets, support_logprobs.clone().fill_(-math.inf))
    with pytest.raises(LossInputError, match="label_outside_support"):
        token_loss(logits, tokens, advantages, sampler, ids, offsets, support_logprobs, label_outside_support="skip")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("tokens", torch.tensor([0, 1]), r"tokens has shape \(2,\); logits imply \[3\]"),
        ("tokens", torch.tensor([0, 1, 9]), r"ids in \[0, 4\)"),
        ("advantages", torch.tensor([0.0, math.nan, 1.0], dtype=F64), "must be finite"),
        ("sampler_logprobs", torch.tensor([-1.0, -math.inf, -1.0], dtype=F64), "must be finite"),
        ("logits", torch.zeros(0, 4, dtype=F64), "T = 0"),
    ],
)
def test_bad_tensors_raise_clear_errors(field, value, message):
    inputs = dict(
        logits=torch.zeros(3, 4, dtype=F64), tokens=torch.tensor([0, 1, 2]),
        advantages=torch.ones(3, dtype=F64), sampler_logprobs=torch.full((3,), -1.0, dtype=F64),
    )
    inputs[field] = value
    with pytest.raises(LossInputError, match=message):
        token_loss(**inputs, score_centering=False, top_p_replay=False)


def test_weighting_computes_mass_without_division():
    log_pi = torch.log(torch.tensor([0.1, 0.4, 0.5], dtype=F64))
    log_mu = torch.log(torch.tensor([0.5, 0.3, 0.0], dtype=F64))  # mu = 0: ratio infinite
    assert torch.allclose(ISWeighting(mis=(0.5, 5.0)).mass(log_pi, log_mu), torch.tensor([0.0, 0.4, 0.0], dtype=F64))
    assert torch.allclose(ISWeighting(tis_clip=2.0).mass(log_pi, log_mu), torch.tensor([0.1, 0.4, 0.0], dtype=F64))
    assert torch.allclose(ISWeighting().mass(log_pi, log_mu), log_mu.exp())


def test_aggregate_token_mode_keeps_rejected_tokens_in_the_denominator():
    loss = torch.tensor([1.0, 0.0, 3.0, 5.0])  # the 0.0 is a token the MIS band rejected
    assert aggregate(loss).item() == pytest.approx(9 / 4)
    mask = torch.tensor([True, True, True, False])  # the last is a prompt or tool-output token
    assert aggregate(loss, loss_mask=mask).item() == pytest.approx(4 / 3)
    assert aggregate(loss, loss_mask=mask, denominator=8).item() == pytest.approx(4 / 8)
    assert aggregate(loss, loss_mask=torch.zeros(4, dtype=torch.bool)).item() == 0.0


def test_aggregate_sequence_mode_is_a_mean_of_sequence_means():
    loss = torch.tensor([1.0, 2.0, 3.0, 10.0, 20.0, 7.0])
    seq_ids = torch.tensor([4, 4, 4, 9, 9, 2])
    mask = torch.tensor([1, 1, 1, 1, 0, 0], dtype=torch.bool)
    expected = ((1 + 2 + 3) / 3 + 10 / 1 + 0.0) / 3  # sequence 2 is fully masked: counted, contributes 0
    assert aggregate(loss, seq_ids, mode="sequence", loss_mask=mask).item() == pytest.approx(expected)
    assert aggregate(loss, seq_ids, mode="sequence", denominator=6).item() == pytest.approx((2 + 15 + 7) / 6)
    grad_input = loss.clone().requires_grad_(True)
    aggregate(grad_input, seq_ids, mode="sequence").backward()
    assert torch.allclose(grad_input.grad, torch.tensor([1 / 9, 1 / 9, 1 / 9, 1 / 6, 1 / 6, 1 / 3]))


def test_aggregate_rejects_bad_arguments():
    loss = torch.ones(3)
    with pytest.raises(LossInputError, match="needs seq_ids"):
        aggregate(loss, mode="sequence")
    with pytest.raises(LossInputError, match="mode must be"):
        aggregate(loss, mode="sample")
    with pytest.raises(LossInputError, match="loss_mask has shape"):
        aggregate(loss, loss_mask=torch.ones(2))


def test_accepts_the_samplers_support_record():
    """The CSR record `tracegym.models.support.Support` keeps (int32 ids, float32 log-probs) plugs straight in."""
    from tracegym.models.support import Support

    logits, tokens, advantages, sampler, ids, offsets, support_logprobs, _ = _batch(seed=5)
    record = Support("exact", ids.to(torch.int32), offsets, support_logprobs.float())
    record.validate(tokens)
    got, _ = token_loss(logits, tokens.to(torch.int32), advantages, sampler.float(), record.ids, record.offsets,
                        record.logprobs, support_kind=record.kind)
    want, _ = token_loss(logits, tokens, advantages, sampler, ids, offsets, support_logprobs)
    assert got.dtype == F64 and torch.allclose(got, want, atol=1e-6)
