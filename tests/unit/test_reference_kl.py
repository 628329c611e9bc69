"""The KL penalty to a reference policy (`loss.kl_beta`): the k3 estimator, checked against formulas written
here, in float64, with expectations as exact sums over the vocabulary."""

from __future__ import annotations

import pytest
import torch

from tracegym.training.grpo.loss import KL_CLAMP, LossInputError, reference_kl

F64 = torch.float64
VOCAB = 7


def _logits(rows: int, seed: int, scale: float = 1.0) -> torch.Tensor:
    return torch.randn(rows, VOCAB, generator=torch.Generator().manual_seed(seed), dtype=F64) * scale


def test_k3_is_zero_with_zero_gradient_where_policy_equals_reference() -> None:
    z = _logits(4, seed=0).requires_grad_(True)
    tokens = torch.tensor([0, 3, 6, 2])
    ref = torch.log_softmax(z.detach(), dim=-1).gather(1, tokens[:, None]).squeeze(1)
    kl, metrics = reference_kl(z, tokens, ref)
    kl.sum().backward()
    assert torch.allclose(kl, torch.zeros(4, dtype=F64), atol=1e-12)
    assert torch.allclose(z.grad, torch.zeros_like(z), atol=1e-12)
    assert float(metrics["kl_ref/k3"]) == pytest.approx(0.0, abs=1e-12)


def test_k3_matches_its_formula_and_its_expectation_is_the_exact_kl() -> None:
    """E_{a~pi}[k3(a)] = sum_a pi_a (pi_ref_a / pi_a - 1 - log(pi_ref_a / pi_a)) = KL(pi || pi_ref)."""
    z, z_ref = _logits(1, seed=1)[0], _logits(1, seed=2)[0]
    pi, pi_ref = torch.softmax(z, -1), torch.softmax(z_ref, -1)
    tokens = torch.arange(VOCAB)  # every token the policy could draw, one position each
    kl, _ = reference_kl(z.expand(VOCAB, VOCAB), tokens, torch.log(pi_ref))
    ratio = pi_ref / pi
    assert float((ratio - 1 - torch.log(ratio)).max()) < KL_CLAMP, "pick logits the clamp leaves alone"
    assert torch.allclose(kl, ratio - 1 - torch.log(ratio), atol=1e-12)
    exact = float((pi * (torch.log(pi) - torch.log(pi_ref))).sum())
    assert float((pi * kl).sum()) == pytest.approx(exact, rel=1e-10)


def test_gradient_is_one_minus_the_ratio_times_the_score() -> None:
    """d k3 / d z = (1 - pi_ref(a)/pi(a)) (onehot(a) - pi), written out rather than taken from autograd."""
    z = _logits(3, seed=3).requires_grad_(True)
    tokens = torch.tensor([1, 4, 5])
    ref = torch.log_softmax(_logits(3, seed=4), dim=-1).gather(1, tokens[:, None]).squeeze(1)
    kl, _ = reference_kl(z, tokens, ref)
    kl.sum().backward()
    pi = torch.softmax(z.detach(), -1)
    ratio = ref.exp() / pi.gather(1, tokens[:, None]).squeeze(1)
    expected = (1 - ratio)[:, None] * (torch.nn.functional.one_hot(tokens, VOCAB).to(F64) - pi)
    assert torch.allclose(z.grad, expected, atol=1e-12)


def test_extreme_ratios_are_clamped_with_finite_gradients() -> None:
    z = torch.tensor([[0.0, 0.0, 0.0], [30.0, 0.0, 0.0]], dtype=F64, requires_grad=True)
    tokens = torch.tensor([0, 0])
    # Row 0: the reference gives the token ~1 where pi gives 1/3 (ratio ~3, k3 ~0.9, unclamped);
    # row 1: the policy is sure of a token the reference all but rules out (k3 ~ 99, clamped).
    ref = torch.tensor([-1e-9, -100.0], dtype=F64)
    kl, metrics = reference_kl(z, tokens, ref)
    kl.sum().backward()
    assert float(kl[0].detach()) == pytest.approx(3 - 1 - torch.log(torch.tensor(3.0)).item(), rel=1e-6)
    assert float(kl[1].detach()) == KL_CLAMP and float(metrics["kl_ref/max"]) == KL_CLAMP
    assert torch.isfinite(z.grad).all() and torch.equal(z.grad[1], torch.zeros(3, dtype=F64))


def test_mismatched_shapes_are_a_clear_error() -> None:
    with pytest.raises(LossInputError, match="ref_logprobs"):
        reference_kl(_logits(3, seed=0), torch.tensor([0, 1, 2]), torch.zeros(2, dtype=F64))
