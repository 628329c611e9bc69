"""Detection over a batch's columns together, each distinct text read once, and the cache of texts across batches."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

from tracegym.redact import detect
from tracegym.redact.detect import Detector

TEXTS = ["write to jane.doe@example.com", "nothing here", None, "card 4526 0181 5908 3012 please",
         "key sk-proj-abcdefghijklmnopqrstuvwx1234", "nothing here", "write to jane.doe@example.com", ""]


def _alone(text: str | None) -> list[tuple[str, int, int]]:
    """The findings of a text read by a fresh detector with no cache, as (rule, start, end)."""
    detector = Detector()
    detector.cache = None
    return [(f.rule.name, f.start, f.end) for f in detector.find(text)] if text is not None else []


def test_columns_read_together_give_each_row_its_own_findings():
    one = pa.chunked_array([pa.array(TEXTS[:3], pa.string()), pa.array(TEXTS[3:], pa.string())])
    other = pa.array(list(reversed(TEXTS)), pa.large_string())
    found = Detector().find_columns([one, other])
    for column, texts in zip(found, (TEXTS, list(reversed(TEXTS))), strict=True):
        rows = {row: (text, [(f.rule.name, f.start, f.end) for f in fs]) for row, text, fs in column}
        assert [row for row, _, _ in column] == sorted(rows)
        for row, text in enumerate(texts):
            expected = _alone(text)
            assert rows.get(row, (text, []))[1] == expected
            if expected:
                assert rows[row][0] == text
    assert {f[0] for _, (_, fs) in rows.items() for f in fs} == {"email", "card", "openai_key"}


def test_texts_seen_in_an_earlier_batch_are_found_the_same(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(detect, "CACHE_CHARS", 80)  # a few texts only: the oldest make way
    detector = Detector()
    batches = [TEXTS, [f"ticket {i} from bob{i}@example.org" for i in range(6)] + TEXTS, TEXTS]
    for batch in batches:
        column = pa.array(batch, pa.large_string())
        got = {row: [(f.rule.name, f.start, f.end) for f in fs] for row, _, fs in detector.find_column(column)}
        assert [got.get(row, []) for row in range(len(batch))] == [_alone(t) for t in batch]
        assert detector.cache is not None
        assert sum(map(len, detector.cache)) <= 80
    clean = Detector()
    assert not list(clean.find_column(pa.array(["nothing here"], pa.large_string())))
    assert clean.cache == {"nothing here": []}  # a text no trigger matched is remembered too


def _counted(trigger: str) -> bool:
    """Whether a trigger repeats something 12 or more times, as a length or as a bound (`[^\\n]{0,200}`)."""
    return any(int(n) >= 12 for bounds in re.findall(r"(?<!\\)\{(\d*,?\d*)\}", trigger)
               for n in bounds.split(",") if n)


def test_no_pass_joins_a_long_repeat_with_plain_triggers():
    """A long counted repeat multiplies the automaton's states with every trigger joined beside it (a 400-character
    gap once made the worded pass fifteen times slower), so such triggers share passes only with their like."""
    detector = Detector()
    triggers = {detect._after_escapes(r.trigger) for r in detector.rules if r.trigger and not r.sweep}
    assert any(_counted(t) and "{0," in t for t in triggers)
    for joined in detector.prefilters:
        members = [t for t in triggers if f"(?:{t})" in joined]
        if len(members) > 1 and any(_counted(t) for t in members):
            assert all(_counted(t) for t in members), [t[:60] for t in members if not _counted(t)]
