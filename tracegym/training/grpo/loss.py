"""The policy-gradient loss: GRPO with masked importance sampling, score centering, top-p replay.

Pure functions over tensors; the trainer calls `token_loss` once per micro-batch and reduces
with `aggregate`. The formulas, their sources and the oracle each test asserts: docs/training-math.md;
the tests are tests/unit/test_loss_oracles.py.

Notation, per completion position (the index t is dropped):
  z      trainer logits, sampling temperature already applied                  [V]
  a, A   the sampled token and its sequence's GRPO advantage (a constant here)
  mu     the sampler's distribution; log mu(a) arrives as `sampler_logprobs`
  S      the sampler's kept support (a top-p/top-k truncation: support_kind="exact"), or
         the top-k head H of its untruncated distribution (support_kind="head"); the
         names are those of `tracegym.models.support.Support.kind`
  pi     the trainer's distribution: softmax(z), or with top-p replay its renormalisation
           log pi^S_v = z_v - logsumexp_{u in S} z_u
         (DeepSeek-V3.2 "Keep Sampling Mask", arXiv:2512.02556 §3.1; prime-rl
         `selective_log_softmax_with_sampling_mask`)
  rho_v  pi_v / mu_v (detached), and the importance weight w_v = f(rho_v):
           f(r) = 1                      no correction
           f(r) = r * 1[lo <= r <= hi]   MIS / IcePop (arXiv:2510.18855), the band edges kept
           f(r) = min(r, C)              TIS (fengyao.notion.site/off-policy-rl)

The surrogate per position (Marek & Ryabinin, arXiv:2609.20807; MJ10/score-centering
`losses.py::loss_fn_rl`; vime `docs/en/advanced/policy-mismatch.md` §SC):

  l = -sg(A) * [ sg(w_a) log pi_a - sum_{v in S} sg(mu_v w_v) log pi_v ]    score centering on
  l = -sg(A) *   sg(w_a) log pi_a                                         score centering off

so -grad_z l = A (w_a s_a - E_mu[w s]) with s = grad_z log pi. For a truncating sampler mu
is zero off S, so the centering sum over S is exact. For a top-k head the tail is modelled as
mu_v = r pi_v off H (paper App. A; Miles `loss_hub/score_centering_loss.py`):

  r = max(1 - mu(H), eps) / max(1 - pi(H), eps),   alpha = r f(1/r),
  centering = sum_{v in H} sg(mu_v w_v - alpha pi_v) log pi_v,

exact when the true tail is proportional to the trainer's, since sum_v pi_v s_v = 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

from tracegym.errors import TracegymError

SupportKind = Literal["exact", "head"]
LabelOutsideSupport = Literal["error", "full_vocab"]
AggregationMode = Literal["token", "sequence"]
SUPPORT_KINDS = ("exact", "head")


class LossInputError(TracegymError, ValueError):
    """The tensors or options handed to the loss are inconsistent."""

    title = "Loss input error"


@dataclass(frozen=True)
class ISWeighting:
    """The importance weight w = f(rho), rho = pi/mu, and the sums score centering needs.

    At most one of `mis` (the band [lo, hi]) and `tis_clip` (C) is set; neither means w = 1.
    Ratios arrive as logs: the band is tested as log lo <= log rho <= log hi (edges kept)
    and no unbounded ratio is exponentiated.
    """

    mis: tuple[float, float] | None = None
    tis_clip: float | None = None

    def __post_init__(self) -> None:
        if self.mis is not None and self.tis_clip is not None:
            raise LossInputError("mis and tis_clip are alternative weightings: set one of them, or neither")
        if self.mis is not None and not (len(self.mis) == 2 and 0 < self.mis[0] <= self.mis[1]):
            raise LossInputError(f"mis must be a band (low, high) with 0 < low <= high, got {self.mis!r}")
        if self.tis_clip is not None and not self.tis_clip > 0:
            raise LossInputError(f"tis_clip must be positive, got {self.tis_clip!r}")

    def in_band(self, log_ratio: Tensor) -> Tensor:
        """bool, same shape: rho inside the MIS band; all True without MIS; NaN is outside."""
        if self.mis is None:
            return torch.ones_like(log_ratio, dtype=torch.bool)
        low, high = self.mis
        return (log_ratio >= math.log(low)) & (log_ratio <= math.log(high))

    def weight(self, log_ratio: Tensor) -> Tensor:
        """w = f(rho), from log rho."""
        if self.mis is not None:
            kept = log_ratio.clamp(max=math.log(self.mis[1])).exp()
            return torch.where(self.in_band(log_ratio), kept, 0.0)
        if self.tis_clip is not None:
            return log_ratio.clamp(max=math.log(self.tis_clip)).exp()
        return torch.ones_like(log_ratio)

    def mass(self, log_pi: Tensor, log_mu: Tensor) -> Tensor:
        """mu f(pi/mu) without a division: mu; pi 1[band] (MIS); min(pi, C mu) (TIS)."""
        if self.mis is not None:
            return torch.where(self.in_band(log_pi - log_mu), log_pi.exp(), 0.0)
        if self.tis_clip is not None:
            return torch.minimum(log_pi, log_mu + math.log(self.tis_clip)).exp()
        return log_mu.exp()

    def tail_scale(self, tail_ratio: Tensor) -> Tensor:
        """alpha = r f(1/r) for the modelled tail mu_v = r pi_v: r; 1[lo <= 1/r <= hi]; min(C r, 1)."""
        if self.mis is not None:
            return self.in_band(-tail_ratio.log()).to(tail_ratio.dtype)
        if self.tis_clip is not None:
            return (self.tis_clip * tail_ratio).clamp(max=1.0)
        return tail_ratio


@dataclass(frozen=True)
class PaddedSupport:
    """A CSR support laid out as [T, K], K the largest support size; padding slots masked."""

    ids: Tensor  # long [T, K]; padding slots hold id 0 so that gathers stay in range
    valid: Tensor  # bool [T, K]
    log_mu: Tensor | None  # float [T, K] sampler log-probs; -inf in padding (mu is 0 off S)


def pad_support(
    support_ids: Tensor,
    support_offsets: Tensor,
    support_logprobs: Tensor | None,
    num_positions: int,
    vocab_size: int,
) -> PaddedSupport:
    """Check a CSR support (oracle 13) and lay it out as [T, K] without a loop over positions.

    Position t keeps support_ids[support_offsets[t]:support_offsets[t+1]]. Raises
    LossInputError for offsets that are not T+1 long, do not start at 0 and end at N, or do
    not strictly increase (an empty support); ids outside [0, V); repeated ids in a position;
    non-finite log-probs.
    """
    _check_csr(support_ids, support_offsets, support_logprobs, num_positions, vocab_size)
    support_ids, support_offsets = support_ids.long(), support_offsets.long()  # samplers store int32 ids
    lengths = support_offsets[1:] - support_offsets[:-1]  # [T]
    width = int(lengths.max())
    slot = torch.arange(width, device=support_ids.device)  # [K]
    valid = slot[None, :] < lengths[:, None]  # [T, K]
    flat = (support_offsets[:-1, None] + slot[None, :]).clamp(max=support_ids.numel() - 1)  # [T, K]
    ids = support_ids[flat].masked_fill(~valid, 0)  # [T, K]
    _check_unique(ids, valid)
    log_mu = None
    if support_logprobs is not None:
        log_mu = support_logprobs[flat].masked_fill(~valid, float("-inf"))  # [T, K]
    return PaddedSupport(ids=ids, valid=valid, log_mu=log_mu)


def _check_csr(
    ids: Tensor, offsets: Tensor, logprobs: Tensor | None, num_positions: int, vocab_size: int
) -> None:
    if ids.ndim != 1 or offsets.ndim != 1 or ids.is_floating_point() or offsets.is_floating_point():
        raise LossInputError("support_ids and support_offsets must be 1-D integer tensors (CSR values and offsets)")
    if offsets.numel() != num_positions + 1:
        raise LossInputError(
            f"support_offsets has {offsets.numel()} entries; {num_positions} positions need {num_positions + 1}"
        )
    if int(offsets[0]) != 0 or int(offsets[-1]) != ids.numel():
        raise LossInputError(
            f"support_offsets must run from 0 to len(support_ids) = {ids.numel()}, "
            f"got {int(offsets[0])}..{int(offsets[-1])}"
        )
    empty = (offsets[1:] - offsets[:-1]) <= 0
    if empty.any():
        position = int(empty.nonzero()[0, 0])
        raise LossInputError(
            f"support_offsets must strictly increase (every position keeps at least one token); "
            f"position {position} has offsets {int(offsets[position])}..{int(offsets[position + 1])}"
        )
    if int(ids.min()) < 0 or int(ids.max()) >= vocab_size:
        raise LossInputError(f"support_ids must lie in [0, {vocab_size}), got {int(ids.min())}..{int(ids.max())}")
    if logprobs is not None:
        if logprobs.shape != ids.shape:
            raise LossInputError(
                f"support_logprobs has shape {tuple(logprobs.shape)}; it must match support_ids {tuple(ids.shape)}"
            )
        if not bool(torch.isfinite(logprobs).all()):
            raise LossInputError("support_logprobs must be finite: every kept token has positive probability")


def _check_unique(ids: Tensor, valid: Tensor) -> None:
    ranked = ids.masked_fill(~valid, -1).sort(dim=-1).values  # [T, K], padding (-1) first
    repeated = (ranked[:, 1:] == ranked[:, :-1]) & (ranked[:, 1:] >= 0)  # [T, K-1]
    if repeated.any():
        position = int(repeated.any(dim=-1).nonzero()[0, 0])
        raise LossInputError(f"support_ids repeat a token id at position {position}; each position lists an id once")


def masked_logsumexp(values: Tensor, valid: Tensor) -> Tensor:
    """logsumexp over the valid slots of each row: [T, K], bool [T, K] -> [T]."""
    return values.masked_fill(~valid, float("-inf")).logsumexp(dim=-1)


def support_log_probs(logits: Tensor, support: PaddedSupport) -> tuple[Tensor, Tensor]:
    """log pi^S at the support slots, [T, K], and its normaliser logsumexp_{v in S} z_v, [T].

    Padding slots hold finite values that mean nothing; mask them with `support.valid`.
    Only the gathered logits carry gradient, so d log pi^S / d z_v = 0 for v outside S.
    """
    z_support = logits.gather(1, support.ids)  # [T, K]
    normaliser = masked_logsumexp(z_support, support.valid)  # [T]
    return z_support - normaliser[:, None], normaliser


def token_loss(
    logits: Tensor,
    tokens: Tensor,
    advantages: Tensor,
    sampler_logprobs: Tensor,
    support_ids: Tensor | None = None,
    support_offsets: Tensor | None = None,
    support_logprobs: Tensor | None = None,
    mis: tuple[float, float] | None = (0.5, 5.0),
    score_centering: bool = True,
    top_p_replay: bool = True,
    *,
    tis_clip: float | None = None,
    support_kind: SupportKind = "exact",
    label_outside_support: LabelOutsideSupport = "error",
    tail_eps: float = 1e-6,
) -> tuple[Tensor, dict[str, Tensor]]:
    """Per-token REINFORCE surrogate with MIS/TIS, score centering and top-p replay (see module doc).

    Args:
        logits: float [T, V], the trainer's logits at the T completion positions, temperature applied.
        tokens: long [T], the sampled ids.
        advantages: float [T], each token's sequence advantage; detached here.
        sampler_logprobs: float [T], log mu(token) as the sampler computed it (over its kept
            support when it truncated; over its full distribution for a top-k head).
        support_ids, support_offsets: the support in CSR form, integer [N] and [T+1].
        support_logprobs: float [N], the sampler's log-probs of support_ids: normalised over
            the kept support ("exact") or over the vocabulary ("head").
        mis: the masked-IS band [lo, hi], or None.
        score_centering: subtract sum_{v in S} sg(mu_v w_v) log pi_v; needs the support and its
            log-probs (a clear error otherwise).
        top_p_replay: renormalise the trainer over the replayed truncation support.
        tis_clip: truncated IS with cap C instead of MIS (then pass mis=None).
        support_kind: "exact" when the sampler drew only from S (a top-p/top-k truncation;
            exact centering), or "head" when S is the top-k of an untruncated sampler (the
            tail model; no replay).
        label_outside_support: an exact support that misses its own sampled token is corrupt;
            "error" raises, "full_vocab" scores that position on the full vocabulary with no
            centering (prime-rl's fallback) and counts it in `support/fallback_frac`.
        tail_eps: the floor on tail masses in the tail ratio r.

    Returns:
        per_token_loss, float [T] with grad to `logits`, and detached scalar metrics:
        is_ratio/{min,mean,max}; mis/masked_frac (sampled tokens outside the band);
        mismatch/k3_kl (mean of r - 1 - log r, r = pi(a)/mu(a): estimates KL(mu || pi));
        tis/clipped_frac with TIS; support/fallback_frac with an exact support;
        sc/{tail_ratio,train_head_mass,rollout_head_mass} (means) with centering.
    """
    weighting = ISWeighting(mis=mis, tis_clip=tis_clip)
    _check_token_inputs(logits, tokens, advantages, sampler_logprobs)
    _check_modes(
        support_ids, support_offsets, support_logprobs, score_centering, top_p_replay, support_kind,
        label_outside_support,
    )
    if logits.dtype not in (torch.float32, torch.float64):
        logits = logits.float()  # low-precision logsumexp loses the small log-ratios MIS tests
    num_positions, vocab_size = logits.shape
    metrics: dict[str, Tensor] = {}
    tokens = tokens.to(logits.device, torch.long)
    z_label = logits.gather(1, tokens[:, None]).squeeze(1)  # [T]
    correction = None
    if support_ids is None:
        log_pi_label = z_label - logits.logsumexp(dim=-1)
    else:
        if support_logprobs is not None:
            support_logprobs = support_logprobs.to(logits)
        assert support_offsets is not None, "support_ids come with their support_offsets (_check_modes)"
        support = pad_support(
            support_ids.to(logits.device), support_offsets.to(logits.device), support_logprobs,
            num_positions, vocab_size,
        )
        log_pi_label, correction = _support_terms(
            logits, tokens, z_label, support, weighting, score_centering, top_p_replay,
            support_kind, label_outside_support, tail_eps, metrics,
        )
    with torch.no_grad():
        log_ratio = log_pi_label.detach() - sampler_logprobs.to(logits)  # [T]
        weight = weighting.weight(log_ratio)  # [T]
    surrogate = weight * log_pi_label
    if correction is not None:
        surrogate = surrogate - correction
    per_token_loss = -advantages.detach().to(logits) * surrogate  # [T]
    metrics.update(_ratio_metrics(log_ratio, weighting))
    return per_token_loss, metrics


def _support_terms(
    logits: Tensor,
    tokens: Tensor,
    z_label: Tensor,
    support: PaddedSupport,
    weighting: ISWeighting,
    score_centering: bool,
    top_p_replay: bool,
    support_kind: SupportKind,
    label_outside_support: LabelOutsideSupport,
    tail_eps: float,
    metrics: dict[str, Tensor],
) -> tuple[Tensor, Tensor | None]:
    """log pi(a) [T] and the centering term [T] (or None) when a support is given."""
    rows = torch.ones_like(tokens, dtype=torch.bool)  # [T] positions whose support is usable
    if support_kind == "exact":
        rows = ((support.ids == tokens[:, None]) & support.valid).any(dim=-1)
        metrics["support/fallback_frac"] = (~rows).to(logits.dtype).mean()
        if not bool(rows.all()) and label_outside_support == "error":
            position = int((~rows).nonzero()[0, 0])
            raise LossInputError(
                f"sampled token {int(tokens[position])} at position {position} is not in the sampler's support; "
                "the support is corrupt (or pass label_outside_support='full_vocab' to score such positions "
                "on the full vocabulary)"
            )
    if top_p_replay:  # an exact support: _check_modes rejects replay of a head
        log_pi_support, support_norm = support_log_probs(logits, support)  # [T, K], [T]
        label_norm = support_norm
        if not bool(rows.all()):
            label_norm = torch.where(rows, support_norm, logits.logsumexp(dim=-1))
    else:
        label_norm = logits.logsumexp(dim=-1)  # [T]
        log_pi_support = logits.gather(1, support.ids) - label_norm[:, None]  # [T, K]
    correction = None
    if score_centering:
        coef = _centering_coefficients(log_pi_support, support, rows, weighting, support_kind, tail_eps, metrics)
        correction = (coef * log_pi_support).sum(dim=-1)  # [T]; coef is 0 in padding slots
    return z_label - label_norm, correction


def _centering_coefficients(
    log_pi_support: Tensor,
    support: PaddedSupport,
    rows: Tensor,
    weighting: ISWeighting,
    support_kind: SupportKind,
    tail_eps: float,
    metrics: dict[str, Tensor],
) -> Tensor:
    """sg(mu_v w_v) over S, minus sg(alpha pi_v) for a top-k head: float [T, K], 0 off S.

    Computed under no_grad: the coefficients are data, and differentiating them would change
    the estimator (Miles `score_centering_loss.py` detaches both weights and residual).
    """
    log_mu = support.log_mu
    assert log_mu is not None, "score centering needs the support's sampler log-probs (_check_modes)"
    with torch.no_grad():
        log_pi = log_pi_support.detach()  # [T, K]
        valid = support.valid & rows[:, None]  # [T, K]
        coef = torch.where(valid, weighting.mass(log_pi, log_mu), 0.0)  # [T, K]
        train_mass = torch.where(valid, log_pi.exp(), 0.0).sum(dim=-1)  # [T]
        rollout_mass = torch.where(valid, log_mu.exp(), 0.0).sum(dim=-1)  # [T]
        tail_ratio = (1 - rollout_mass).clamp(min=tail_eps) / (1 - train_mass).clamp(min=tail_eps)  # [T]
        if support_kind == "head":
            alpha = weighting.tail_scale(tail_ratio)  # [T]
            coef = coef - alpha[:, None] * torch.where(valid, log_pi.exp(), 0.0)
        metrics["sc/tail_ratio"] = tail_ratio.mean()
        metrics["sc/train_head_mass"] = train_mass.mean()
        metrics["sc/rollout_head_mass"] = rollout_mass.mean()
    return coef


def _ratio_metrics(log_ratio: Tensor, weighting: ISWeighting) -> dict[str, Tensor]:
    """Detached scalars about rho_a = pi(a)/mu(a) at the sampled tokens; log_ratio [T]."""
    ratio = log_ratio.exp()
    metrics = {
        "is_ratio/min": ratio.min(),
        "is_ratio/mean": ratio.mean(),
        "is_ratio/max": ratio.max(),
        "mis/masked_frac": (~weighting.in_band(log_ratio)).to(ratio.dtype).mean(),
        # k3 (Schulman): E_mu[r - 1 - log r] = KL(mu || pi) when pi covers mu's support.
        "mismatch/k3_kl": (ratio - 1 - log_ratio).mean(),
    }
    if weighting.tis_clip is not None:
        metrics["tis/clipped_frac"] = (log_ratio > math.log(weighting.tis_clip)).to(ratio.dtype).mean()
    return metrics


def _check_token_inputs(logits: Tensor, tokens: Tensor, advantages: Tensor, sampler_logprobs: Tensor) -> None:
    if logits.ndim != 2 or not logits.is_floating_point():
        raise LossInputError(f"logits must be a float [T, V] tensor, got {logits.dtype} {tuple(logits.shape)}")
    num_positions, vocab_size = logits.shape
    if num_positions == 0:
        raise LossInputError("token_loss got no completion positions (T = 0); skip empty micro-batches")
    for name, tensor in (("tokens", tokens), ("advantages", advantages), ("sampler_logprobs", sampler_logprobs)):
        if tensor.shape != (num_positions,):
            raise LossInputError(f"{name} has shape {tuple(tensor.shape)}; logits imply [{num_positions}]")
    if tokens.is_floating_point() or int(tokens.min()) < 0 or int(tokens.max()) >= vocab_size:
        raise LossInputError(f"tokens must be integer ids in [0, {vocab_size})")
    if not bool(torch.isfinite(advantages).all() & torch.isfinite(sampler_logprobs).all()):
        raise LossInputError("advantages and sampler_logprobs must be finite")


def _check_modes(
    support_ids: Tensor | None,
    support_offsets: Tensor | None,
    support_logprobs: Tensor | None,
    score_centering: bool,
    top_p_replay: bool,
    support_kind: str,
    label_outside_support: str,
) -> None:
    if label_outside_support not in ("error", "full_vocab"):
        raise LossInputError(f"label_outside_support must be 'error' or 'full_vocab', got {label_outside_support!r}")
    if support_kind not in SUPPORT_KINDS:
        raise LossInputError(f"support_kind must be one of {SUPPORT_KINDS}, got {support_kind!r}")
    if (support_ids is None) != (support_offsets is None):
        raise LossInputError("support_ids and support_offsets come together (CSR values and offsets)")
    if support_ids is None and support_logprobs is not None:
        raise LossInputError("support_logprobs were given without support_ids and support_offsets")
    if support_ids is None and score_centering:
        raise LossInputError(
            "score_centering=True needs the sampler's support: pass support_ids, support_offsets and "
            "support_logprobs (its kept support, or its top-k head with support_kind='head'), "
            "or set score_centering=False"
        )
    if support_ids is None and top_p_replay:
        raise LossInputError("top_p_replay=True needs support_ids and support_offsets, or set top_p_replay=False")
    if score_centering and support_logprobs is None:
        raise LossInputError("score_centering=True needs support_logprobs, the sampler's log-probs over its support")
    if support_kind == "head" and top_p_replay:
        raise LossInputError(
            "a top-k head is not a truncation: the sampler drew from its full distribution, so there is "
            "no support to replay; set top_p_replay=False"
        )


KL_CLAMP = 10.0
"""Per-token bound on the reference KL estimate, as Miles' `--kl-loss-type k3`: one token the policy has
all but ruled out (pi_ref/pi in the thousands) cannot dominate a step's loss."""


def reference_kl(logits: Tensor, tokens: Tensor, ref_logprobs: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
    """Per-token KL penalty to a frozen reference policy: the k3 estimator at the sampled tokens.

    With l = log pi(a) over the full vocabulary (no replay: the reference knows no support) and
    r = log pi_ref(a), k3 = exp(r - l) - (r - l) - 1 >= 0, clamped to KL_CLAMP (Schulman's k3, TRL's
    `per_token_kl`, Miles `low_var_kl`). Its gradient is (1 - pi_ref(a)/pi(a)) grad log pi(a): zero where the
    policy equals the reference, pushing pi(a) down where it exceeds pi_ref(a). Tokens were drawn by the
    sampler, not by pi, so the mean is an estimate of KL(pi || pi_ref) only as far as mu is close to pi;
    TRL and Miles make the same approximation.

    Args:
        logits: float [T, V], the trainer's logits at the completion positions, temperature applied.
        tokens: long [T], the sampled ids.
        ref_logprobs: float [T], log pi_ref(a) at the same temperature, detached.

    Returns:
        per_token_kl, float [T] with grad to `logits`, and {"kl_ref/k3": its mean, "kl_ref/max": its max}.
    """
    if logits.ndim != 2 or tokens.shape != (logits.shape[0],) or ref_logprobs.shape != tokens.shape:
        raise LossInputError(f"reference_kl needs logits [T, V], tokens [T] and ref_logprobs [T]; got "
                             f"{tuple(logits.shape)}, {tuple(tokens.shape)}, {tuple(ref_logprobs.shape)}")
    log_pi = token_logprobs(logits, tokens)  # [T]
    # log(pi_ref / pi), capped where k3 is clamped anyway (k3 = 10 at ~2.5) so that exp stays finite and the
    # clamp's zero gradient never meets an infinite one.
    delta = (ref_logprobs.detach().to(log_pi) - log_pi).clamp(max=20.0)  # [T]
    per_token = (delta.exp() - delta - 1).clamp(max=KL_CLAMP)  # [T]
    detached = per_token.detach()
    metrics = {"kl_ref/k3": detached.mean() if detached.numel() else detached.new_zeros(()),
               "kl_ref/max": detached.max() if detached.numel() else detached.new_zeros(())}
    return per_token, metrics


def token_logprobs(logits: Tensor, tokens: Tensor) -> Tensor:
    """log softmax(logits)[t, tokens[t]] over the full vocabulary: float [T] from logits [T, V]."""
    if logits.dtype not in (torch.float32, torch.float64):
        logits = logits.float()
    return logits.gather(1, tokens.to(logits.device, torch.long)[:, None]).squeeze(1) - logits.logsumexp(dim=-1)


def aggregate(
    per_token_loss: Tensor,
    seq_ids: Tensor | None = None,
    *,
    mode: AggregationMode = "token",
    loss_mask: Tensor | None = None,
    denominator: float | Tensor | None = None,
    seq_lengths: Tensor | None = None,
) -> Tensor:
    """Reduce per-token losses [T] to the scalar to backpropagate.

    token:    sum_t m_t l_t / max(D, 1), D = sum_t m_t unless `denominator` gives the token
              count of the whole optimizer batch (Miles `--calculate-per-token-loss`, DAPO).
    sequence: sum_i [sum_{t in i} m_t l_t / max(n_i, 1)] / max(G, 1), n_i = sum_{t in i} m_t,
              G = the number of distinct seq_ids unless `denominator` gives it (DeepSeekMath's
              1/G sum_i 1/|o_i|). Each sequence must lie wholly within this call, unless `seq_lengths`
              (float [T]) gives each token's n_i: then a sequence (an episode's segments) may span calls.
    m is `loss_mask` (bool or float [T]; all ones if None). Tokens the MIS band rejected are
    not masked: their loss is 0 but they stay in the denominator.
    """
    if per_token_loss.ndim != 1:
        raise LossInputError(f"per_token_loss must be [T], got {tuple(per_token_loss.shape)}")
    mask = torch.ones_like(per_token_loss) if loss_mask is None else loss_mask.to(per_token_loss)
    if mask.shape != per_token_loss.shape:
        raise LossInputError(
            f"loss_mask has shape {tuple(mask.shape)}; per_token_loss has {tuple(per_token_loss.shape)}"
        )
    masked = per_token_loss * mask  # [T]
    if mode == "token":
        count = mask.sum() if denominator is None else torch.as_tensor(denominator).to(masked)
        return masked.sum() / count.clamp(min=1)
    if mode != "sequence":
        raise LossInputError(f"mode must be 'token' or 'sequence', got {mode!r}")
    if seq_ids is None or seq_ids.shape != per_token_loss.shape:
        raise LossInputError("sequence aggregation needs seq_ids, one sequence id per token [T]")
    unique, dense = torch.unique(seq_ids.to(masked.device), return_inverse=True)  # [G], [T]
    count = torch.as_tensor(unique.numel() if denominator is None else denominator).to(masked)
    if seq_lengths is not None:
        return (masked / seq_lengths.to(masked).clamp(min=1)).sum() / count.clamp(min=1)
    sums = masked.new_zeros(unique.numel()).index_add(0, dense, masked)  # [G]
    lengths = mask.new_zeros(unique.numel()).index_add(0, dense, mask)  # [G]
    return (sums / lengths.clamp(min=1)).sum() / count.clamp(min=1)
