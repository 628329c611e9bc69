"""Per-component (GDPO) advantages, `grpo.advantages: per_component`: oracles computed by hand from the formulas of
docs/training-math.md ("GRPO advantages"), never with the module's helpers."""

from __future__ import annotations

import math
import statistics

import pytest

from tracegym.training.grpo.advantages import AdvantageInputError, decoupled_advantages, group_advantages


def _parts(format_scores: list[float], content_scores: list[float], weights: tuple[float, float] = (1.0, 1.0)):
    return [{"format": (f, weights[0]), "content": (c, weights[1])}
            for f, c in zip(format_scores, content_scores, strict=True)]


def _rewards(parts) -> list[float]:
    return [sum(s * w for s, w in p.values()) / sum(w for _, w in p.values()) for p in parts]


def test_a_part_with_little_spread_counts_as_much_as_one_with_much():
    """Format 1,1,0,0 and content 0.1,0,0.1,0: the whole reward's advantages barely see content (the second and
    third samples are 0.45 apart); per part, content's small spread is normalised to format's, so a reply with
    content and no format ties with one with format and no content."""
    parts = _parts([1, 1, 0, 0], [0.1, 0, 0.1, 0])
    whole = group_advantages(_rewards(parts), [0] * 4)
    assert whole.advantages == pytest.approx([0.275, 0.225, -0.225, -0.275])
    result = decoupled_advantages(_rewards(parts), parts, [0] * 4)
    # Each part's normalised values are +-sqrt(3)/2; their mean is S = [sqrt(3)/2, 0, 0, -sqrt(3)/2], whose
    # unbiased batch std is sqrt(1/2): A = S / sqrt(1/2).
    edge = math.sqrt(1.5)
    assert result.advantages == pytest.approx([edge, 0.0, 0.0, -edge], abs=1e-5)
    assert result.trainable == [True] * 4 and result.skipped_groups == 0
    assert statistics.stdev(result.advantages) == pytest.approx(1.0, abs=1e-5)


def test_a_part_constant_in_its_group_adds_nothing_there():
    """Group a: format constant, content 0, 0.5, 1 -> S = content's (-1, 0, 1) / 2. Group b: content constant,
    format 0, 1 -> S = (-1, 1) / sqrt(2) / 2. The batch std of the five sums is sqrt(3)/4."""
    parts = _parts([1, 1, 1, 0, 1], [0, 0.5, 1, 0.3, 0.3])
    result = decoupled_advantages(_rewards(parts), parts, ["a", "a", "a", "b", "b"])
    a, b = 2 / math.sqrt(3), math.sqrt(2 / 3)
    assert result.advantages == pytest.approx([-a, 0.0, a, -b, b], abs=1e-5)


def test_the_eval_weights_combine_the_normalised_parts():
    """Weights 3:1, format 0, 1/3 and content 1, 0: the weighted reward is 0.25 for both (whole skips the group),
    but per part the format part outweighs content: S = (3 * -1/sqrt(2) + 1/sqrt(2)) / 4 = -1/(2 sqrt(2)) and its
    opposite, normalised over the batch to -+1/sqrt(2)."""
    parts = _parts([0, 1 / 3], [1, 0], weights=(3.0, 1.0))
    assert group_advantages(_rewards(parts), [0, 0]).skipped_groups == 1
    result = decoupled_advantages(_rewards(parts), parts, [0, 0])
    assert result.advantages == pytest.approx([-1 / math.sqrt(2), 1 / math.sqrt(2)], abs=1e-5)
    assert result.skipped_groups == 0


def test_a_group_whose_parts_are_all_constant_is_skipped():
    parts = _parts([1, 1, 0, 1, 0, 1], [0.2, 0.2, 0.0, 0.5, 0.0, 0.0])
    result = decoupled_advantages(_rewards(parts), parts, ["same", "same", "x", "x", "alone", "y"])
    assert result.trainable == [False, False, True, True, False, False]
    assert result.advantages[:2] == [0.0, 0.0] and result.advantages[4:] == [0.0, 0.0]
    assert (result.num_groups, result.skipped_groups, result.skipped_samples) == (4, 3, 4)
    # The one group left: both parts move together, so S = (-1, 1) / sqrt(2) and its batch std is 1.
    assert result.advantages[2:4] == pytest.approx([-1 / math.sqrt(2), 1 / math.sqrt(2)], abs=1e-5)


@pytest.mark.parametrize("std_normalization", [False, True])
def test_a_reward_without_parts_gets_the_whole_rewards_advantages_exactly(std_normalization: bool):
    rewards = [0.1, 0.7, 0.4, 0.9, 0.9, 0.2, 0.25]
    ids = ["a", "a", "a", "b", "b", "c", "c"]
    expected = group_advantages(rewards, ids, std_normalization=std_normalization)
    for parts in ([{}] * 7, [{"only": (r, 2.0)} for r in rewards]):
        assert decoupled_advantages(rewards, parts, ids, std_normalization=std_normalization) == expected


def test_samples_without_parts_beside_others_count_as_one_part():
    """A batch mixing a weighted eval's task with a single eval's: the latter's group is one part, its reward,
    normalised like any part (rewards 0, 1 -> -+1/sqrt(2)), then the batch's sums are normalised together."""
    parts = [{}, {}, *_parts([1, 0], [0, 0])]
    result = decoupled_advantages([0.0, 1.0, 0.5, 0.0], parts, ["single", "single", "w", "w"])
    s = 1 / math.sqrt(2)
    sums = [-s, s, s / 2, -s / 2]
    scale = statistics.stdev(sums)
    assert result.advantages == pytest.approx([v / scale for v in sums], abs=1e-5)


def test_a_part_without_a_positive_weight_is_a_clear_error():
    with pytest.raises(AdvantageInputError, match="weight > 0"):
        decoupled_advantages([0.5, 0.5], [{"a": (1.0, 0.0), "b": (0.0, 1.0)}] * 2, [0, 0])
    with pytest.raises(AdvantageInputError, match="each sample needs one of each"):
        decoupled_advantages([0.5], [], [0])
