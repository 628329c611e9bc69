"""The oracles of docs/training-math.md, one test each, against tracegym.training.grpo.loss.

All in float64. Expectations E_mu[.] are exact sums over every token the sampler could have
drawn (each a position of one batched call, weighted by mu(a)), never Monte Carlo. Gradients
are compared with references written here from the formulas, through autograd or finite
differences, not with the module's own helpers. Logit-space notation: s_v = grad_z log pi_v,
and g = -grad_z l is the estimator the loss implements.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import Tensor

from tracegym.training.grpo.advantages import group_advantages
from tracegym.training.grpo.loss import ISWeighting, LossInputError, pad_support, support_log_probs, token_loss

F64 = torch.float64
WIDE = (1e-12, 1e12)  # a MIS band no ratio here leaves, so w = pi/mu exactly: plain IS
MIS = (0.5, 5.0)


def _randn(*shape: int, seed: int, scale: float = 1.5) -> Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=F64) * scale


def _distribution(size: int, seed: int, scale: float = 1.0) -> Tensor:
    return torch.softmax(_randn(size, seed=seed, scale=scale), dim=0)


def _csr(supports: list[list[int]]) -> tuple[Tensor, Tensor]:
    ids = torch.tensor([v for support in supports for v in support], dtype=torch.long)
    lengths = torch.tensor([0] + [len(support) for support in supports])
    return ids, lengths.cumsum(0)


def _mask(support: list[int], vocab: int) -> Tensor:
    mask = torch.zeros(vocab, dtype=torch.bool)
    mask[support] = True
    return mask


def _ref_log_pi(z: Tensor, support: list[int] | None) -> Tensor:
    """log pi over the vocabulary, renormalised over `support` (-inf off it) when one is given."""
    if support is None:
        return torch.log_softmax(z, dim=-1)
    return torch.log_softmax(z.masked_fill(~_mask(support, z.shape[-1]), float("-inf")), dim=-1)


def _ref_weight(ratio: Tensor, band: tuple[float, float] | None, tis_clip: float | None = None) -> Tensor:
    if tis_clip is not None:
        return torch.clamp(ratio, max=tis_clip)
    if band is None:
        return torch.ones_like(ratio)
    return ratio * ((ratio >= band[0]) & (ratio <= band[1])).to(ratio.dtype)


def _call(z: Tensor, tokens: list[int], advantages: Tensor, mu: Tensor, support: list[int] | None, **options):
    """token_loss at len(tokens) positions sharing the logits z [V] and one support.

    mu is the sampler's distribution over the vocabulary, zero off the support.
    """
    count = len(tokens)
    index = torch.tensor(tokens)
    kwargs = {}
    if support is not None:
        ids, offsets = _csr([support] * count)
        kwargs = dict(support_ids=ids, support_offsets=offsets, support_logprobs=mu[ids].log())
    return token_loss(z.expand(count, -1), index, advantages, mu[index].log(), **kwargs, **options)


def _expected_g(z: Tensor, mu: Tensor, advantage: Tensor, support: list[int] | None, **options) -> Tensor:
    """E_mu[g] [V] by enumeration: -grad_z of sum over sampled a of mu(a) l(a)."""
    z = z.clone().requires_grad_(True)
    tokens = [int(v) for v in mu.nonzero().flatten()]
    loss, _ = _call(z, tokens, advantage[tokens], mu, support, **options)
    (loss * mu[tokens]).sum().backward()
    return -z.grad


def _module_grad(z: Tensor, token: int, advantage: float, mu: Tensor, support: list[int] | None, **options) -> Tensor:
    """grad_z l [V] at one position."""
    z = z.clone().requires_grad_(True)
    loss, _ = _call(z, [token], torch.tensor([advantage], dtype=F64), mu, support, **options)
    loss.sum().backward()
    return z.grad


def _reference_grad(z, token, advantage, mu, support, *, band, centering, replay, tis_clip=None) -> Tensor:
    """grad_z of -A [w_a log pi_a - sum_{v in S} mu_v w_v log pi_v], written from the formula."""
    z = z.clone().requires_grad_(True)
    log_pi = _ref_log_pi(z, support if replay else None)
    pi = log_pi.detach().exp()
    loss = -advantage * _ref_weight(pi[token] / mu[token], band, tis_clip) * log_pi[token]
    if centering:
        for v in support:
            loss = loss + advantage * mu[v] * _ref_weight(pi[v] / mu[v], band, tis_clip) * log_pi[v]
    loss.backward()
    return z.grad


def _on_support(size: int, support: list[int], probs: Tensor) -> Tensor:
    mu = torch.zeros(size, dtype=F64)
    mu[support] = probs
    return mu


def test_oracle_01_on_policy_equivalence():
    vocab = 9
    z = _randn(vocab, seed=1)
    for support in (list(range(vocab)), [0, 2, 3, 5, 8]):
        mu = _ref_log_pi(z, support).exp()  # the sampler is the trainer (over S)
        for token in support:
            zz = z.clone().requires_grad_(True)
            (-0.7 * _ref_log_pi(zz, support)[token]).backward()
            reinforce = zz.grad
            zz = z.clone().requires_grad_(True)
            log_pi = _ref_log_pi(zz, support)[token]
            ratio = torch.exp(log_pi - log_pi.detach())
            torch.maximum(-ratio * 0.7, -ratio.clamp(0.8, 1.28) * 0.7).backward()
            assert torch.allclose(zz.grad, reinforce, atol=1e-15, rtol=0)
            for band in (None, MIS):
                sc = _module_grad(z, token, 0.7, mu, support, mis=band)
                assert torch.allclose(sc, reinforce, atol=1e-12, rtol=0)


def test_oracle_02_exact_is():
    vocab = 8
    z, mu, advantage = _randn(vocab, seed=2), _distribution(vocab, seed=3), _randn(vocab, seed=4)
    pi = torch.softmax(z, dim=0)
    expected = pi * (advantage - (pi * advantage).sum())
    for centering in (True, False):
        got = _expected_g(z, mu, advantage, list(range(vocab)), mis=WIDE, score_centering=centering)
        assert torch.allclose(got, expected, atol=1e-12, rtol=0)


def test_oracle_03_unit_weight_centered():
    vocab = 8
    z, mu, advantage = _randn(vocab, seed=5), _distribution(vocab, seed=6), _randn(vocab, seed=7)
    got = _expected_g(z, mu, advantage, list(range(vocab)), mis=None, score_centering=True)
    assert torch.allclose(got, mu * (advantage - (mu * advantage).sum()), atol=1e-12, rtol=0)


def test_oracle_04_drift_without_centering():
    vocab, c = 8, 1.7
    z, mu = _randn(vocab, seed=8), _distribution(vocab, seed=9)
    constant = torch.full((vocab,), c, dtype=F64)
    expected = c * (mu - torch.softmax(z, dim=0))
    with_support = _expected_g(z, mu, constant, list(range(vocab)), mis=None, score_centering=False)
    without = _expected_g(z, mu, constant, None, mis=None, score_centering=False, top_p_replay=False)
    assert torch.allclose(with_support, expected, atol=1e-12, rtol=0)
    assert torch.allclose(without, expected, atol=1e-12, rtol=0)
    assert expected.abs().max() > 1e-2


def test_oracle_05_shift_invariance():
    vocab = 10
    z = _randn(vocab, seed=10)
    pi = torch.softmax(z, dim=0)
    mu = pi * torch.exp(_randn(vocab, seed=11))  # ratios pi/mu spread over e^-3..e^3
    mu = mu / mu.sum()
    ratio = pi / mu
    assert ((ratio < 0.5) | (ratio > 5)).any() and ((ratio >= 0.5) & (ratio <= 5)).any()
    assert (ratio > 1.5).any()
    constant = torch.full((vocab,), -2.5, dtype=F64)
    for weighting in (dict(mis=MIS), dict(mis=None, tis_clip=1.5)):
        centered = _expected_g(z, mu, constant, list(range(vocab)), **weighting)
        uncentered = _expected_g(z, mu, constant, list(range(vocab)), score_centering=False, **weighting)
        assert centered.abs().max() <= 1e-15
        assert uncentered.abs().max() > 1e-3


def test_oracle_06_surrogate_gradient():
    vocab, support, token, advantage = 8, [0, 1, 3, 4, 6], 3, -0.8
    z = _randn(vocab, seed=12)
    mu = _on_support(vocab, support, _distribution(len(support), seed=13, scale=1.5))
    for replay in (True, False):
        pi = _ref_log_pi(z, support if replay else None).exp()
        weight = _ref_weight(pi / mu, MIS)
        assert weight[token] > 0 and (weight[support] == 0).any()  # the band acts inside the sum

        def log_pi_on_support(x: Tensor, replay: bool = replay) -> Tensor:
            return _ref_log_pi(x, support if replay else None)[support]

        h = 1e-6
        steps = torch.eye(vocab, dtype=F64) * h
        scores = torch.stack(  # s_v by central differences, [|S|, V]
            [(log_pi_on_support(z + steps[j]) - log_pi_on_support(z - steps[j])) / (2 * h) for j in range(vocab)],
            dim=1,
        )
        analytic = torch.eye(vocab, dtype=F64)[support] - pi  # s_v = e_v - pi (oracle 8 checks it over S)
        assert torch.allclose(scores, analytic, atol=1e-8, rtol=0)
        s_a = scores[support.index(token)]
        centering = (mu[support] * weight[support])[:, None] * scores
        for centered, g in ((True, advantage * (weight[token] * s_a - centering.sum(0))),
                            (False, advantage * weight[token] * s_a)):
            got = _module_grad(z, token, advantage, mu, support, top_p_replay=replay, score_centering=centered)
            assert torch.allclose(got, -g, atol=1e-8, rtol=0)


def test_oracle_07_mis_band():
    low, high = MIS
    below, above = math.nextafter(math.log(low), -math.inf), math.nextafter(math.log(high), math.inf)
    log_ratio = torch.tensor([math.log(low), math.log(high), below, above, 0.0, -math.inf, math.inf], dtype=F64)
    weight = ISWeighting(mis=MIS).weight(log_ratio)
    assert torch.allclose(weight, torch.tensor([low, high, 0, 0, 1, 0, 0], dtype=F64), atol=1e-15, rtol=0)
    assert weight[0] > 0 and weight[1] > 0

    # Four tokens with pi = 1/4 each; tokens 0 and 1 sit exactly on the band's edges.
    vocab, support = 4, [0, 1, 2, 3]
    z = torch.zeros(vocab, dtype=F64)
    log_pi = z - torch.logsumexp(z, dim=0)
    assert log_pi[0].item() == -math.log(4)
    log_mu = torch.stack([log_pi[0] + math.log(2), log_pi[1] - math.log(5), torch.log(torch.tensor(0.225, dtype=F64)),
                          torch.log(torch.tensor(0.225, dtype=F64))])
    assert (log_pi[0] - log_mu[0]).item() == math.log(low) and (log_pi[1] - log_mu[1]).item() == math.log(high)
    mu, advantage = log_mu.exp(), torch.tensor([0.3, -1.1, 0.9, 0.4], dtype=F64)
    for token in support:
        got = _module_grad(z, token, float(advantage[token]), mu, support)
        ref = _reference_grad(z, token, float(advantage[token]), mu, support, band=MIS, centering=True, replay=True)
        assert torch.allclose(got, ref, atol=1e-13, rtol=0)
    _, metrics = _call(z, support, advantage, mu, support)
    assert metrics["mis/masked_frac"].item() == 0.0

    # Narrow the band by a hair: the edge tokens now carry no loss and drop out of the sum.
    narrow = (low * (1 + 1e-9), high * (1 - 1e-9))
    loss, metrics = _call(z, support, advantage, mu, support, mis=narrow, score_centering=False)
    assert metrics["mis/masked_frac"].item() == 0.5
    assert loss[0].item() == 0.0 and loss[1].item() == 0.0 and loss[2].item() != 0.0
    got = _module_grad(z, 2, 0.9, mu, support, mis=narrow)
    pi = log_pi.exp()
    scores = torch.eye(vocab, dtype=F64) - pi
    kept = [2, 3]  # ratios 1/0.9: inside; 0 and 1: outside
    centering = sum(mu[v] * (pi[v] / mu[v]) * scores[v] for v in kept)
    assert torch.allclose(got, -0.9 * ((pi[2] / mu[2]) * scores[2] - centering), atol=1e-13, rtol=0)


def test_oracle_08_top_p_renormalisation():
    vocab, supports = 10, [[1, 4, 7], [0, 1, 2, 3, 9], [5]]
    z = _randn(len(supports), vocab, seed=14)
    ids, offsets = _csr(supports)
    support = pad_support(ids, offsets, None, len(supports), vocab)
    log_pi, _ = support_log_probs(z, support)
    mass = torch.where(support.valid, log_pi.exp(), 0.0).sum(dim=-1)
    assert torch.allclose(mass, torch.ones(len(supports), dtype=F64), atol=1e-14, rtol=0)
    jacobian = torch.autograd.functional.jacobian(lambda x: support_log_probs(x, support)[0], z)  # [T, K, T, V]
    for t, kept in enumerate(supports):
        pi_s = torch.softmax(z[t, kept], dim=0)
        for k, token in enumerate(kept):
            expected = torch.zeros(len(supports), vocab, dtype=F64)
            expected[t, kept] = -pi_s
            expected[t, token] += 1.0
            assert torch.allclose(jacobian[t, k], expected, atol=1e-14, rtol=0)
            mu = _on_support(vocab, kept, pi_s)
            got = _module_grad(z[t], token, 1.3, mu, kept, mis=None, score_centering=False)
            assert torch.allclose(got, -1.3 * expected[t], atol=1e-14, rtol=0)


def test_oracle_09_top_p_centering():
    vocab, support = 10, [0, 2, 3, 6, 7, 9]
    z, advantage = _randn(vocab, seed=15), _randn(vocab, seed=16)
    mu = _on_support(vocab, support, _distribution(len(support), seed=17, scale=2.0))
    zz = z.clone().requires_grad_(True)
    pi_s = _ref_log_pi(zz, support).exp()
    (pi_s[support] * advantage[support]).sum().backward()
    got = _expected_g(z, mu, advantage, support, mis=WIDE)
    assert torch.allclose(got, zz.grad, atol=1e-12, rtol=0)

    ratio = (pi_s.detach() / mu)[support]
    assert ((ratio < 0.5) | (ratio > 5)).any()
    constant = torch.full((vocab,), 0.6, dtype=F64)
    assert _expected_g(z, mu, constant, support, mis=MIS).abs().max() <= 1e-15
    assert _expected_g(z, mu, constant, support, mis=MIS, score_centering=False).abs().max() > 1e-3


def test_oracle_10_without_replay():
    vocab, support = 12, [1, 2, 5, 6, 8]
    z = _randn(vocab, seed=18)
    mu = _ref_log_pi(z, support).exp()  # on-policy, truncated to S
    support_mass = torch.softmax(z, dim=0)[support].sum()
    assert support_mass < 0.99
    advantage = torch.ones(len(support), dtype=F64)
    _, metrics = _call(z, support, advantage, mu, support, top_p_replay=False)
    for key in ("is_ratio/min", "is_ratio/max"):
        assert torch.allclose(metrics[key], support_mass, atol=1e-13, rtol=0)
    _, metrics = _call(z, support, advantage, mu, support, top_p_replay=True)
    for key in ("is_ratio/min", "is_ratio/max"):
        assert abs(metrics[key].item() - 1.0) <= 1e-13
    assert abs(metrics["mismatch/k3_kl"].item()) <= 1e-13


def test_oracle_11_support_mode_invariants():
    vocab, support = 12, [0, 3, 4, 7]
    z = _randn(vocab, seed=19)
    mu = _ref_log_pi(z, support).exp()  # filtered sampling, replayed
    _, metrics = _call(z, support, torch.ones(len(support), dtype=F64), mu, support)
    for key in ("sc/train_head_mass", "sc/rollout_head_mass", "sc/tail_ratio"):
        assert abs(metrics[key].item() - 1.0) <= 1e-9


def _proportional_tail(p: Tensor, head: list[int], tail_ratio: float, seed: int) -> Tensor:
    """A sampler distribution q: arbitrary on the head, tail_ratio * p off it."""
    head_mass = 1 - tail_ratio * (1 - p[head].sum())
    assert 0 < head_mass < 1
    q = tail_ratio * p.clone()
    q[head] = head_mass * _distribution(len(head), seed=seed)
    return q


def test_oracle_12_tail_model():
    vocab = 12
    z = _randn(vocab, seed=20)
    p = torch.softmax(z, dim=0)
    head = p.topk(4).indices.tolist()
    for case, tail_ratio in enumerate((0.1, 1.5, 3.0)):  # alpha inside and outside the MIS band
        q = _proportional_tail(p, head, tail_ratio, seed=21 + case)
        scores = torch.eye(vocab, dtype=F64) - p
        residual = ((q[head] - tail_ratio * p[head])[:, None] * scores[head]).sum(0)
        assert torch.allclose(residual, (q[:, None] * scores).sum(0), atol=1e-15, rtol=0)
        ids, offsets = _csr([head])
        for weighting in (dict(mis=None), dict(mis=MIS), dict(mis=None, tis_clip=1.3)):
            for token in range(vocab):
                zz = z.clone().requires_grad_(True)
                loss, metrics = token_loss(
                    zz[None], torch.tensor([token]), torch.tensor([0.9], dtype=F64), q[token].log()[None],
                    ids, offsets, q[head].log(), top_p_replay=False, support_kind="head", **weighting,
                )
                loss.sum().backward()
                exact = _module_grad(z, token, 0.9, q, list(range(vocab)), top_p_replay=False, **weighting)
                assert torch.allclose(zz.grad, exact, atol=1e-13, rtol=0)
            assert abs(metrics["sc/tail_ratio"].item() - tail_ratio) <= 1e-12


@pytest.mark.parametrize(
    ("support_ids", "offsets", "positions", "message"),
    [
        ([1, 2, 3], [1, 2, 3], 2, "run from 0"),
        ([1, 2, 3], [0, 1, 2], 2, "run from 0"),
        ([1, 2, 3], [0, 2, 1, 3], 3, "strictly increase.*position 1 has offsets 2..1"),
        ([1, 2, 3], [0, 2, 2, 3], 3, "strictly increase.*position 1 has offsets 2..2"),
        ([1, 2, 3], [0, 3], 2, "has 2 entries; 2 positions need 3"),
        ([1, 1, 3], [0, 2, 3], 2, "repeat a token id at position 0"),
        ([1, 2, 99], [0, 2, 3], 2, r"must lie in \[0, 10\)"),
    ],
)
def test_oracle_13_mask_validity(support_ids, offsets, positions, message):
    z = _randn(positions, 10, seed=22)
    tokens, logprobs = torch.ones(positions, dtype=torch.long), torch.full((positions,), -1.0, dtype=F64)
    ids = torch.tensor(support_ids)
    with pytest.raises(LossInputError, match=message):
        token_loss(z, tokens, torch.ones(positions, dtype=F64), logprobs, ids, torch.tensor(offsets),
                   torch.full((len(ids),), -1.0, dtype=F64))


def test_oracle_13_label_outside_support():
    vocab = 10
    z = _randn(3, vocab, seed=23).requires_grad_(True)
    tokens, advantage = torch.tensor([1, 4, 6]), torch.tensor([0.5, -1.0, 2.0], dtype=F64)
    supports = [[0, 1, 2], [3, 5], [6, 7]]  # position 1 sampled 4, which its support lacks
    ids, offsets = _csr(supports)
    support_logprobs = torch.log(torch.tensor([0.2, 0.5, 0.3, 0.6, 0.4, 0.7, 0.3], dtype=F64))
    sampler = torch.log(torch.tensor([0.5, 0.1, 0.7], dtype=F64))
    args = (z, tokens, advantage, sampler, ids, offsets, support_logprobs)
    with pytest.raises(ValueError, match="sampled token 4 at position 1 is not in the sampler's support"):
        token_loss(*args)
    loss, metrics = token_loss(*args, label_outside_support="full_vocab")
    assert metrics["support/fallback_frac"].item() == pytest.approx(1 / 3)
    # Position 1 falls back to the full vocabulary, uncentered; the others are untouched.
    log_pi = torch.log_softmax(z[1].detach(), dim=0)[4]
    weight = _ref_weight((log_pi - sampler[1]).exp(), MIS)
    assert torch.allclose(loss[1], 1.0 * weight * log_pi, atol=1e-14, rtol=0)
    for t in (0, 2):
        alone, _ = token_loss(z[t : t + 1], tokens[t : t + 1], advantage[t : t + 1], sampler[t : t + 1],
                              torch.tensor(supports[t]), torch.tensor([0, len(supports[t])]),
                              support_logprobs[offsets[t] : offsets[t + 1]])
        assert torch.allclose(loss[t], alone[0], atol=1e-15, rtol=0)
    loss.sum().backward()
    off_vocab = [v for v in range(vocab) if v not in supports[0]]
    assert torch.all(z.grad[0, off_vocab] == 0) and torch.all(z.grad[1] != 0)


def test_oracle_14_constant_reward_group():
    rewards = [1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0]
    result = group_advantages(rewards, ["same"] * 4 + ["mixed"] * 4)
    assert result.advantages[:4] == [0.0] * 4 and result.skipped_groups == 1
    vocab, support = 10, [0, 2, 5, 7]
    mu = _on_support(vocab, support, _distribution(len(support), seed=24))
    z = _randn(vocab, seed=25)
    for options in (dict(), dict(score_centering=False), dict(mis=None), dict(mis=None, score_centering=False)):
        for group in (slice(0, 4), slice(4, 8)):
            zz = z.clone().requires_grad_(True)
            advantage = torch.tensor(result.advantages[group], dtype=F64)
            loss, _ = _call(zz, support, advantage, mu, support, **options)
            loss.sum().backward()
            if group.start == 0:
                assert torch.all(loss == 0) and torch.all(zz.grad == 0)
            else:
                assert zz.grad.abs().max() > 1e-3
