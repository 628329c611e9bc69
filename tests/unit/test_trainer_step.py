"""The GRPO trainer step on real token records: completions sampled by the engine from a tiny random Llama.

Rewards are a fixed function of the sampled tokens (the share of even ids), so groups have real
variance; one group is given equal rewards where a test needs a zero-variance group.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import uuid

import pytest
import torch

from tracegym.episodes.record import Episode, TurnRecord, build_token_record, join_segments
from tracegym.models.sampling import SampledSequence, SamplingEngine, SamplingParams
from tracegym.models.tiny import tiny_llama
from tracegym.samplers.rollouts import RolloutGroup
from tracegym.training.config import GRPOSection, LossSection, OptimSection
from tracegym.training.grpo.batching import (
    MicroBatch,
    completion_logits,
    pack,
    sample_from_record,
    support_logits,
)
from tracegym.training.grpo.loss import LossInputError, aggregate, token_loss
from tracegym.training.grpo.trainer import Trainer, prepare

VOCAB = 256
TEMPERATURE = 0.8


def _episode(seq: SampledSequence, task_id: str, k: int, reward: float | None) -> Episode:
    ids = seq.prompt_ids + seq.completion_ids
    trainable = [False] * len(seq.prompt_ids) + [True] * len(seq.completion_ids)
    tokens = build_token_record(ids, trainable, [seq.logprobs], [seq.support])
    turn = TurnRecord(seq.finish_reason, seq.sampler_id, seq.policy_version, seq.seed, 0.0,
                      start=len(seq.prompt_ids), end=len(ids))
    return Episode(rollout_id=uuid.uuid4().hex, task_id=task_id, task_set_id=None, split="train", harness="chat",
                   sample_idx=k, seed=seq.seed, model="tiny", sampling={}, messages=[], n_prompt_messages=0,
                   tokens=tokens, turns=[turn], stop_reason="model_done", reward=reward)


def _even_share(seq: SampledSequence) -> float:
    return sum(t % 2 == 0 for t in seq.completion_ids) / len(seq.completion_ids)


def _groups(model, n_groups: int = 3, k: int = 4, seed: int = 0) -> list[RolloutGroup]:
    engine = SamplingEngine(copy.deepcopy(model), eos_token_ids=[2], seed=seed)
    # A few dozen stop ids end completions at different lengths, as real replies do.
    params = SamplingParams(temperature=TEMPERATURE, top_p=0.9, max_new_tokens=12, stop_token_ids=tuple(range(3, 40)))
    gen = torch.Generator().manual_seed(seed)
    groups = []
    for g in range(n_groups):
        prompt = torch.randint(3, VOCAB, (5 + 3 * g,), generator=gen).tolist()
        seqs = engine.generate([prompt] * k, params, seeds=[seed * 1000 + g * 10 + i for i in range(k)])
        groups.append(RolloutGroup(f"task-{g}", [_episode(s, f"task-{g}", i, _even_share(s))
                                                 for i, s in enumerate(seqs)], g))
    return groups


@pytest.fixture
def model():
    return tiny_llama(VOCAB, seed=3, eos_token_id=2)


def _trainer(model, micro_batch_tokens: int = 4096, aggregation: str = "token", lr: float = 1e-3) -> Trainer:
    return Trainer(copy.deepcopy(model), OptimSection(lr=lr, micro_batch_tokens=micro_batch_tokens),
                   GRPOSection(aggregation=aggregation), LossSection(), temperature=TEMPERATURE)


def _with_variance(groups: list[RolloutGroup]) -> list[RolloutGroup]:
    assert all(len({e.reward for e in g.episodes}) > 1 for g in groups), "pick a seed with reward variance"
    return groups


def test_step_changes_parameters_with_finite_loss(model) -> None:
    groups = _with_variance(_groups(model))
    trainer = _trainer(model)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    metrics = trainer.step(groups)
    assert metrics["train/optimizer_steps"] == 1.0
    assert torch.isfinite(torch.tensor(metrics["train/loss"]))
    assert metrics["train/grad_norm"] > 0
    assert metrics["grpo/skipped_groups"] == 0
    changed = [n for n, p in trainer.model.named_parameters() if not torch.equal(p, before[n])]
    assert len(changed) == len(before), f"unchanged: {set(before) - set(changed)}"


def test_trainer_recomputes_the_sampler_logprobs_on_policy(model) -> None:
    """Same weights, fp32, top-p replay: pi^S(a) / mu(a) = 1 at every token (temperature and positions align)."""
    metrics = _trainer(model).accumulate(_groups(model))
    assert abs(metrics["is_ratio/min"] - 1) < 1e-4 and abs(metrics["is_ratio/max"] - 1) < 1e-4
    assert metrics["mis/masked_frac"] == 0.0
    assert abs(metrics["sc/train_head_mass"] - 1) < 1e-5 and abs(metrics["sc/rollout_head_mass"] - 1) < 1e-5


def test_zero_variance_groups_are_skipped_and_counted(model) -> None:
    groups = _groups(model)
    for e in groups[1].episodes:
        e.reward = 0.5
    trainer = _trainer(model)
    metrics = trainer.step(groups)
    assert metrics["grpo/groups"] == 3 and metrics["grpo/skipped_groups"] == 1
    assert metrics["train/sequences"] == 8  # the two groups with variance, four episodes each

    flat = _groups(model)
    for g in flat:
        for e in g.episodes:
            e.reward = 1.0
    trainer = _trainer(model)
    before = [p.detach().clone() for p in trainer.model.parameters()]
    metrics = trainer.step(flat)
    assert metrics["grpo/skipped_groups"] == 3 and metrics["train/optimizer_steps"] == 0.0
    assert all(torch.equal(a, b) for a, b in zip(before, trainer.model.parameters(), strict=True))


def test_a_group_has_a_signal_exactly_when_the_trainer_trains_on_it(model) -> None:
    """`RolloutGroup.has_signal` (what dynamic sampling keeps) against the trainer's own skipping."""
    varied, equal, failed_odd_one, broken_odd_one, one_left = _groups(model, n_groups=5)
    _with_variance([varied])
    for e in equal.episodes:
        e.reward = 0.5
    for group in (failed_odd_one, broken_odd_one, one_left):
        for k, e in enumerate(group.episodes):
            e.reward = 1.0 if k == 0 else 0.0
    failed_odd_one.episodes[0].reward = None  # the only different reward belongs to an episode without one...
    broken_odd_one.episodes[0].harness_error = "RuntimeError: the harness broke"  # ...or to a failed episode
    for e in one_left.episodes[1:]:
        e.reward = None
    one_left.episodes[0].reward = 0.0
    one_left.episodes[1].reward = 1.0
    one_left.episodes[1].tokens = None  # a record-less episode does not count either
    cases = {"varied": varied, "equal": equal, "failed": failed_odd_one, "broken": broken_odd_one,
             "one_left": one_left}
    assert {name: g.has_signal for name, g in cases.items()} == {
        "varied": True, "equal": False, "failed": False, "broken": False, "one_left": False}
    for name, group in cases.items():
        skipped = _trainer(model).accumulate([group])["grpo/skipped_groups"]
        assert group.has_signal == (skipped == 0), name


def test_failed_episodes_are_counted_and_not_trained(model) -> None:
    groups = _groups(model)
    groups[0].episodes[0].reward = None
    groups[0].episodes[0].scorer_error = "ValueError: boom"
    metrics = _trainer(model).accumulate(groups)
    assert metrics["grpo/failed_episodes"] == 1
    assert metrics["train/sequences"] == 11


def _grads(trainer: Trainer) -> dict[str, torch.Tensor]:
    return {n: p.grad.detach().clone() for n, p in trainer.model.named_parameters() if p.grad is not None}


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("aggregation", ["token", "sequence"])
def test_micro_batching_gives_the_gradient_of_one_batch(model, aggregation: str) -> None:
    groups = _groups(model)
    whole = _trainer(model, micro_batch_tokens=100_000, aggregation=aggregation)
    split = _trainer(model, micro_batch_tokens=24, aggregation=aggregation)
    m_whole, m_split = whole.accumulate(groups), split.accumulate(groups)
    assert m_whole["train/micro_batches"] == 1 and m_split["train/micro_batches"] >= 6
    assert m_split["train/loss"] == pytest.approx(m_whole["train/loss"], rel=1e-5, abs=1e-7)
    g_whole, g_split = _grads(whole), _grads(split)
    assert g_whole.keys() == g_split.keys()
    for name in g_whole:
        torch.testing.assert_close(g_split[name], g_whole[name], rtol=1e-4, atol=2e-6, msg=name)  # fp32 sum order


def _manual_losses(model, groups: list[RolloutGroup]) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token losses [T] and sequence ids [T], one sequence at a time, straight from token_loss."""
    from tracegym.training.grpo.advantages import group_advantages

    episodes = [e for g in groups for e in g.episodes]
    adv = group_advantages([e.reward for e in episodes], [g.task_id for g in groups for _ in g.episodes]).advantages
    losses, seq_ids = [], []
    for i, (e, a) in enumerate(zip(episodes, adv, strict=True)):
        rec, seen = e.tokens, 0
        for start, end in rec.segments():  # each segment is a sequence of its own for the model
            ids = rec.input_ids[start:end]
            targets = rec.loss_mask[start:end].nonzero().squeeze(-1)
            with torch.no_grad():
                logits = model(input_ids=ids[None]).logits[0, targets - 1].float() / TEMPERATURE
            s = rec.support.slice(seen, seen + len(targets))
            seen += len(targets)
            per_token, _ = token_loss(logits, ids[targets], torch.full((len(targets),), a),
                                      rec.sampler_logprobs[start:end][targets], s.ids, s.offsets, s.logprobs)
            losses.append(per_token)
            seq_ids.append(torch.full((len(targets),), i))
    return torch.cat(losses), torch.cat(seq_ids)


def test_token_and_sequence_aggregation_match_their_definitions(model) -> None:
    groups = _with_variance(_groups(model))
    lengths = {e.tokens.n_trainable for g in groups for e in g.episodes}
    assert len(lengths) > 1, "completions of different lengths tell the two aggregations apart"
    per_token, seq_ids = _manual_losses(model, groups)
    token = _trainer(model, aggregation="token").accumulate(groups)["train/loss"]
    sequence = _trainer(model, aggregation="sequence").accumulate(groups)["train/loss"]
    assert token == pytest.approx(float(per_token.sum() / per_token.numel()), rel=1e-4, abs=1e-7)
    assert sequence == pytest.approx(float(aggregate(per_token, seq_ids, mode="sequence")), rel=1e-4, abs=1e-7)
    assert token != pytest.approx(sequence, rel=1e-3)


def _in_segments(first: Episode, second: Episode) -> Episode:
    """`first` with `second`'s turns as a second segment: an agent that rewrote its history mid-episode."""
    shift = first.tokens.input_ids.numel()
    later = [dataclasses.replace(t, start=t.start + shift, end=t.end + shift, segment_start=shift)
             for t in second.turns]
    return dataclasses.replace(first, tokens=join_segments([first.tokens, second.tokens]),
                               turns=[*first.turns, *later])


@pytest.mark.parametrize("aggregation", ["token", "sequence"])
def test_an_episode_in_segments_trains_each_as_its_own_sequence_with_the_episode_advantage(model,
                                                                                          aggregation) -> None:
    groups = _groups(model)
    for g in groups:  # episode 0 of each group also holds episode 1's turns, as a second segment
        g.episodes = [_in_segments(g.episodes[0], g.episodes[1]), *g.episodes[2:]]
    groups = _with_variance(groups)
    episode = groups[0].episodes[0]
    assert len(episode.tokens.segment_starts) == 2
    [(p0, c0, _), (p1, c1, _)] = episode.tokens.turn_inputs(episode.turns)
    assert p1 == episode.tokens.input_ids[episode.turns[1].segment_start:episode.turns[1].start].tolist()
    per_token, seq_ids = _manual_losses(model, groups)
    metrics = _trainer(model, aggregation=aggregation).accumulate(groups)
    expected = (per_token.sum() / per_token.numel() if aggregation == "token"
                else aggregate(per_token, seq_ids, mode="sequence"))
    assert metrics["train/loss"] == pytest.approx(float(expected), rel=1e-4, abs=1e-7)
    assert metrics["train/sequences"] == 12  # 9 episodes, 3 of them in two segments


def test_train_layers_and_frozen_embeddings_stay_put(model) -> None:
    from tracegym.training.grpo.trainer import make_optimizer, set_trainable

    groups = _with_variance(_groups(model))
    trainer = _trainer(model)
    optim = OptimSection(lr=1e-3, train_layers=1, freeze_embeddings=True)
    n = set_trainable(trainer.model, optim)
    trainer.optimizer = make_optimizer(trainer.model, optim.lr, optim)
    assert 0 < n < sum(p.numel() for p in trainer.model.parameters())
    before = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
    trainer.step(groups)
    after = dict(trainer.model.named_parameters())
    assert torch.equal(after["model.embed_tokens.weight"], before["model.embed_tokens.weight"])
    assert all(torch.equal(after[k], before[k]) for k in before if k.startswith("model.layers.0."))
    assert all(not torch.equal(after[k], before[k]) for k in before if k.startswith("model.layers.1.mlp"))


def _logits_and_grads(model, batches: list[MicroBatch]) -> tuple[dict[int, torch.Tensor], dict[str, torch.Tensor]]:
    """Each sample's completion logits [n, V] and the gradient of their summed token log-probs."""
    model = copy.deepcopy(model)
    per_sample: dict[int, list[torch.Tensor]] = {}
    total = torch.zeros(())
    for mb in batches:
        logits = completion_logits(model, mb, TEMPERATURE)  # [T, V]
        total = total + torch.log_softmax(logits, -1).gather(1, mb.tokens[:, None]).sum()
        for i in mb.seq_ids.unique().tolist():
            per_sample.setdefault(i, []).append(logits[mb.seq_ids == i].detach())
    total.backward()
    return ({i: torch.cat(parts) for i, parts in per_sample.items()},
            {n: p.grad for n, p in model.named_parameters() if p.grad is not None})


def test_a_shared_prompt_runs_once_and_gives_the_logits_and_gradients_of_whole_sequences(model) -> None:
    groups = _groups(model)
    samples = [sample_from_record(e.tokens, 1.0) for g in groups for e in g.episodes]
    shared, whole = pack(samples, 4096), pack(samples, 4096, share_prefixes=False)
    (batch,) = shared  # one micro-batch: each prompt run once, 12 rows on top
    assert sorted(batch.prefix_mask.sum(-1).tolist()) == [4, 7, 10]  # prompts of 5, 8, 11: all but the last token
    assert batch.input_ids.shape[0] == len(samples) and batch.row_prefix.bincount().tolist() == [4, 4, 4]
    assert all(mb.prefix_ids is None for mb in whole)
    logits_shared, grads_shared = _logits_and_grads(model, shared)
    logits_whole, grads_whole = _logits_and_grads(model, whole)
    assert logits_shared.keys() == logits_whole.keys() == set(range(len(samples)))
    for i in logits_whole:
        torch.testing.assert_close(logits_shared[i], logits_whole[i], rtol=1e-4, atol=5e-5)
    assert grads_shared.keys() == grads_whole.keys()
    for name, grad in grads_whole.items():  # the same sums in another order: fp32 error relative to the largest
        scale = float(grad.abs().max())
        torch.testing.assert_close(grads_shared[name], grad, rtol=1e-4, atol=1e-5 * scale, msg=name)


@pytest.mark.usefixtures("one_thread")
def test_groups_over_the_budget_are_split_and_still_give_the_same_gradients(model) -> None:
    groups = _groups(model)
    samples = [sample_from_record(e.tokens, 1.0) for g in groups for e in g.episodes]
    small = pack(samples, 40)
    assert len(small) > 3 and all(mb.prefix_ids is not None for mb in small)
    assert sorted(int(i) for mb in small for i in mb.seq_ids.unique()) == list(range(len(samples)))
    _, grads_small = _logits_and_grads(model, small)
    _, grads_whole = _logits_and_grads(model, pack(samples, 4096, share_prefixes=False))
    for name, grad in grads_whole.items():
        torch.testing.assert_close(grads_small[name], grad, rtol=1e-4, atol=1e-5 * float(grad.abs().max()), msg=name)


def test_bf16_autocast_keeps_fp32_weights_and_a_gradient_close_to_fp32(model) -> None:
    groups = _with_variance(_groups(model))
    fp32 = _trainer(model)
    mixed = Trainer(copy.deepcopy(model), OptimSection(lr=1e-3, autocast="bf16"), GRPOSection(), LossSection(),
                    temperature=TEMPERATURE)
    m_fp32, m_mixed = fp32.accumulate(groups), mixed.accumulate(groups)
    assert m_mixed["train/loss"] == pytest.approx(m_fp32["train/loss"], abs=0.05)
    g_fp32, g_mixed = _grads(fp32), _grads(mixed)
    flat = torch.cat([g_fp32[n].flatten() for n in g_fp32]), torch.cat([g_mixed[n].flatten() for n in g_fp32])
    assert all(g.dtype == torch.float32 for g in g_mixed.values())
    # The GRPO gradient is a difference of nearly equal terms (group-centred advantages, score centering), so
    # bf16 rounding turns it more than it would a likelihood gradient: cosine 0.86 on this tiny model.
    assert float(torch.nn.functional.cosine_similarity(*flat, dim=0)) > 0.8
    assert not torch.equal(*flat)  # bf16 products did run
    mixed.step(groups)
    assert all(p.dtype == torch.float32 for p in mixed.model.parameters())


def _kl_trainer(model, reference, beta: float) -> Trainer:
    return Trainer(copy.deepcopy(model), OptimSection(lr=1e-3), GRPOSection(), LossSection(kl_beta=beta),
                   temperature=TEMPERATURE, reference=copy.deepcopy(reference))


def test_kl_to_a_reference_equal_to_the_policy_changes_no_gradient(model) -> None:
    groups = _with_variance(_groups(model))
    plain, with_kl = _trainer(model), _kl_trainer(model, model, beta=0.5)
    plain.accumulate(groups)
    metrics = with_kl.accumulate(groups)
    assert metrics["kl_ref/k3"] == pytest.approx(0.0, abs=1e-6)
    g_plain, g_kl = _grads(plain), _grads(with_kl)
    for name in g_plain:  # the plain trainer's logits are on the replayed support only, the KL one's over the
        # vocabulary (the KL compares whole distributions): the same sums in another order, ~3e-7 apart here
        torch.testing.assert_close(g_kl[name], g_plain[name], rtol=1e-5, atol=1e-6, msg=name)


def test_kl_penalty_adds_beta_times_the_mean_k3_of_the_trained_tokens(model) -> None:
    groups = _with_variance(_groups(model))
    reference = copy.deepcopy(model)
    gen = torch.Generator().manual_seed(4)
    with torch.no_grad():
        for p in reference.parameters():  # a nearby policy, as a warm start is to GRPO's first steps
            p.add_(torch.randn(p.shape, generator=gen) * 0.005)
    beta = 0.25
    plain = _trainer(model).accumulate(groups)
    with_kl = _kl_trainer(model, reference, beta).accumulate(groups)
    k3 = []
    for e in (e for g in groups for e in g.episodes):
        rec = e.tokens
        targets = rec.loss_mask.nonzero().squeeze(-1)
        with torch.no_grad():
            log_pi, log_ref = (torch.log_softmax(m(input_ids=rec.input_ids[None]).logits[0, targets - 1] / TEMPERATURE,
                                                 -1).gather(1, rec.input_ids[targets][:, None]).squeeze(1)
                               for m in (model, reference))
        delta = log_ref - log_pi
        k3.append(delta.exp() - delta - 1)
    k3 = torch.cat(k3)
    assert float(k3.mean()) > 1e-3 and float(k3.max()) < 10, "the models differ, and no token reaches the clamp"
    assert with_kl["kl_ref/k3"] == pytest.approx(float(k3.mean()), rel=1e-4)
    assert with_kl["train/loss"] - plain["train/loss"] == pytest.approx(beta * float(k3.mean()), rel=1e-4)


def test_kl_beta_without_a_reference_is_a_clear_error(model) -> None:
    from tracegym.errors import ModelError

    with pytest.raises(ModelError, match="reference"):
        Trainer(copy.deepcopy(model), OptimSection(), GRPOSection(), LossSection(kl_beta=0.1))


def _sampled_by(groups: list[RolloutGroup], sampler_id: str) -> list[RolloutGroup]:
    return [RolloutGroup(g.task_id, [dataclasses.replace(e, turns=[dataclasses.replace(t, sampler_id=sampler_id)
                                                                  for t in e.turns]) for e in g.episodes],
                         g.group_index) for g in groups]


@pytest.mark.usefixtures("one_thread")
def test_groups_from_two_pools_keep_their_mismatch_apart_and_train_as_one_batch(model) -> None:
    """One pool sampled with the trainer's weights, the other with perturbed ones (a stale or low-precision sampler):
    the step's loss figures are also kept per pool, the perturbed pool's mismatch is the larger, token-weighted the
    pools give the step's figures, and the gradient is the one of the same episodes from a single pool."""
    noisy = copy.deepcopy(model)
    with torch.no_grad():
        for p in noisy.parameters():
            p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(5)) * 0.02)
    fresh = _with_variance(_sampled_by(_groups(model, n_groups=2, seed=0), "fp32/0"))
    stale = _with_variance(_sampled_by(_groups(noisy, n_groups=2, seed=2), "bf16/1"))
    pooled, single = _trainer(model), _trainer(model)
    metrics = pooled.accumulate(fresh + stale)
    one_pool = single.accumulate(_sampled_by(fresh + stale, "sync-0"))
    assert metrics["mismatch/fp32/k3_kl"] < 1e-6 < metrics["mismatch/bf16/k3_kl"]
    tokens = {pool: sum(e.tokens.n_trainable for g in groups for e in g.episodes)
              for pool, groups in (("fp32", fresh), ("bf16", stale))}
    weighted = sum(metrics[f"mismatch/{pool}/k3_kl"] * n for pool, n in tokens.items()) / sum(tokens.values())
    assert metrics["mismatch/k3_kl"] == pytest.approx(weighted, rel=1e-6)
    assert metrics["is_ratio/min"] == min(metrics["is_ratio/fp32/min"], metrics["is_ratio/bf16/min"])
    assert not any(k.count("/") > 1 for k in one_pool)  # one pool: no per-pool copies of the step's figures
    for name, grad in _grads(single).items():
        torch.testing.assert_close(_grads(pooled)[name], grad, rtol=1e-4, atol=2e-6, msg=name)


def test_optimizer_steps_split_the_batch_into_steps_of_whole_groups(model) -> None:
    """Two optimizer steps on a batch of four groups are two one-step batches of two groups each, in order."""
    groups = _with_variance(_groups(model, n_groups=4))
    split = Trainer(copy.deepcopy(model), OptimSection(lr=1e-3), GRPOSection(optimizer_steps=2), LossSection(),
                    temperature=TEMPERATURE)
    one_by_one = _trainer(model)
    metrics = split.step(groups)
    first, second = one_by_one.step(groups[:2]), one_by_one.step(groups[2:])
    for a, b in zip(split.model.parameters(), one_by_one.model.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6)
    assert metrics["train/optimizer_steps"] == 2.0
    assert metrics["train/sequences"] == 16
    assert metrics["train/grad_norm"] == pytest.approx(max(first["train/grad_norm"], second["train/grad_norm"]))
    assert metrics["train/loss"] == pytest.approx((first["train/loss"] + second["train/loss"]) / 2)
    assert metrics["train/tokens"] == first["train/tokens"] + second["train/tokens"]
    # The second step's ratio pi/mu is taken after the first step moved the weights: off policy, as it should be.
    assert metrics["is_ratio/max"] > 1 + 1e-4 or metrics["is_ratio/min"] < 1 - 1e-4


def test_optimizer_steps_take_as_many_steps_as_there_are_groups_with_a_signal(model) -> None:
    groups = _with_variance(_groups(model, n_groups=3))
    for e in groups[1].episodes:
        e.reward = 0.5
    trainer = Trainer(copy.deepcopy(model), OptimSection(lr=1e-3), GRPOSection(batch_groups=3, optimizer_steps=3),
                      LossSection(), temperature=TEMPERATURE)
    metrics = trainer.step(groups)
    assert metrics["train/optimizer_steps"] == 2.0 and metrics["grpo/skipped_groups"] == 1


def test_step_takes_the_learning_rate_it_is_given(model) -> None:
    groups = _with_variance(_groups(model))
    given, configured = _trainer(model, lr=1.0), _trainer(model, lr=1e-3)
    given.step(groups, lr=1e-3)
    configured.step(groups)
    assert given.optimizer.param_groups[0]["lr"] == 1e-3
    for a, b in zip(given.model.parameters(), configured.model.parameters(), strict=True):
        assert torch.equal(a, b)


def _replayed_loss(model, mb: MicroBatch, on_support: bool) -> tuple[torch.Tensor, dict, dict[str, torch.Tensor]]:
    """token_loss with every correction, on logits over the vocabulary or over the replayed support alone."""
    model = copy.deepcopy(model)
    if on_support:
        view = support_logits(model, mb, TEMPERATURE)
        logits, tokens, support = view.logits, view.tokens, view.support
    else:
        logits, tokens, support = completion_logits(model, mb, TEMPERATURE), mb.tokens, mb.support
    per_token, metrics = token_loss(logits, tokens, mb.advantages, mb.sampler_logprobs, support.ids, support.offsets,
                                    support.logprobs, mis=(0.5, 5.0), score_centering=True, top_p_replay=True)
    per_token.sum().backward()
    return per_token.detach(), metrics, {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


def test_logits_on_the_replayed_support_give_the_vocabularys_loss_metrics_and_gradients(model) -> None:
    """Under top-p replay the loss reads logits on each position's support only; the trainer computes just those."""
    groups = _with_variance(_groups(model))
    samples = [sample_from_record(e.tokens, float(e.reward) - 0.5) for g in groups for e in g.episodes]
    (mb,) = pack(samples, 4096)
    view = support_logits(model, mb, TEMPERATURE)
    assert view.logits.shape == (mb.num_tokens, int(mb.support.sizes.max())) and view.logits.shape[1] < VOCAB
    full, on_support = _replayed_loss(model, mb, on_support=False), _replayed_loss(model, mb, on_support=True)
    torch.testing.assert_close(on_support[0], full[0], rtol=1e-5, atol=1e-6)
    assert on_support[1].keys() == full[1].keys()
    for key in full[1]:
        torch.testing.assert_close(on_support[1][key], full[1][key], rtol=1e-5, atol=1e-6, msg=key)
    assert full[2].keys() == on_support[2].keys() and "model.embed_tokens.weight" in full[2]  # tied output layer
    for name in full[2]:  # float rounding of the same sums in another order: ~1e-6 of each gradient's norm
        relative = float((on_support[2][name] - full[2][name]).norm() / full[2][name].norm())
        assert relative < 1e-5, (name, relative)


def test_a_token_outside_its_support_leaves_the_error_to_the_vocabulary_path(model) -> None:
    groups = _groups(model)
    (mb,) = pack([sample_from_record(e.tokens, 1.0) for g in groups for e in g.episodes], 4096)
    ids, _ = mb.support.row(0)
    outside = next(t for t in range(VOCAB) if t not in ids.tolist())
    corrupt = dataclasses.replace(mb, tokens=torch.cat([torch.tensor([outside]), mb.tokens[1:]]))
    assert support_logits(model, corrupt, TEMPERATURE) is None
    with pytest.raises(LossInputError, match="is not in the sampler's support"):
        _trainer(model)._micro_loss(corrupt, float(corrupt.num_tokens))


def _in_parts(groups: list[RolloutGroup]) -> list[RolloutGroup]:
    """Each reward made a weighted eval's, 1:1: a format part (the reply ran past 6 tokens) and a content part (its
    even-token share, the reward before)."""
    for group in groups:
        for e in group.episodes:
            assert e.tokens is not None and e.reward is not None
            form = float(e.tokens.n_trainable > 6)
            e.components = {"format": form, "content": e.reward}
            e.component_weights = {"format": 1.0, "content": 1.0}
            e.reward = (form + e.reward) / 2
    return groups


def _per_component_trainer(model) -> Trainer:
    return Trainer(copy.deepcopy(model), OptimSection(lr=1e-3), GRPOSection(advantages="per_component"),
                   LossSection(), temperature=TEMPERATURE)


def test_per_component_advantages_train_a_step_with_the_same_metrics(model) -> None:
    groups = _with_variance(_in_parts(_groups(model)))
    whole = _trainer(model).step(copy.deepcopy(groups))
    trainer = _per_component_trainer(model)
    before = [p.detach().clone() for p in trainer.model.parameters()]
    metrics = trainer.step(groups)
    assert metrics.keys() == whole.keys()
    assert metrics["train/sequences"] == whole["train/sequences"] == 12
    assert torch.isfinite(torch.tensor(metrics["train/loss"])) and metrics["train/grad_norm"] > 0
    assert not all(torch.equal(a, b) for a, b in zip(before, trainer.model.parameters(), strict=True))
    # Normalised over the batch: mean 0 and unbiased std 1, which the metric reports as a population std.
    assert abs(metrics["advantage/mean"]) < 1e-9
    assert metrics["advantage/std"] == pytest.approx(math.sqrt(11 / 12), abs=1e-5)
    assert metrics["advantage/max"] != pytest.approx(whole["advantage/max"])


def test_per_component_advantages_leave_rewards_without_parts_as_they_were(model) -> None:
    groups = _with_variance(_groups(model))
    for std_normalization in (False, True):
        whole = prepare(groups, std_normalization, "whole")
        assert whole.advantages and prepare(groups, std_normalization, "per_component").advantages == whole.advantages
