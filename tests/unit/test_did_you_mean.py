"""Suggestions for a misspelt name or id: a likely typo, never an unrelated id."""

from __future__ import annotations

import random

from tracegym.errors import did_you_mean, typo_distance


def test_typo_distance_counts_edits_and_swaps():
    assert typo_distance("kitten", "sitting") == 3
    assert typo_distance("form", "from") == 1  # a swap of neighbours is one edit
    assert typo_distance("", "abc") == typo_distance("abc", "") == 3
    assert typo_distance("heldout", "heldout") == 0


def test_a_typo_is_suggested_and_an_unrelated_id_is_not():
    rng = random.Random(0)
    ids = ["".join(rng.choice("0123456789abcdef") for _ in range(10)) for _ in range(300)]
    strangers = ["".join(rng.choice("0123456789abcdef") for _ in range(10)) for _ in range(200)]
    # difflib's ratio offered one of 300 cluster ids for 56 of 200 random ids
    assert sum(bool(did_you_mean(w, ids)) for w in strangers if w not in ids) == 0
    typo = ids[7][:4] + ids[7][5] + ids[7][4] + ids[7][6:]
    assert did_you_mean(typo, ids) == f" Did you mean {ids[7]!r}?"
    assert did_you_mean("heldot", ["train", "heldout", "all"]) == " Did you mean 'heldout'?"
    assert did_you_mean("run-20261203-999999-zzzzzz", ["run-20261203-210655-085314"]) == ""
