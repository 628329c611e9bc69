"""tracegym/redact/passes.py: RE2 compiled once per process finds what Arrow's RE2 does, and a rule's RE2 superset
never rules out a text its Python pattern matches."""

from __future__ import annotations

import re
from itertools import islice

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from benchmarks import redact_fortyeighth, redact_fortyninth, redact_fortysixth
from tracegym.redact import passes
from tracegym.redact.detect import CELL_TRIGGERS, TRIGGER, Detector, _view
from tracegym.redact.passes import any_match, compiled, members_found, prematch, superset


def _texts() -> list[str]:
    """Texts of three blind corpora (legal English, South Asian and Middle Eastern scripts, CJK), cases and near
    misses, every seventh."""
    out: list[str] = []
    for corpus in (redact_fortyeighth, redact_fortyninth, redact_fortysixth):
        out += [case.text for case in islice(corpus.generate(), 0, None, 7)]
        out += [text for _, text in islice(corpus.generate_negatives(), 0, None, 7)]
    return out


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return _texts()


def test_the_passes_find_what_arrows_re2_finds(texts: list[str]) -> None:
    detector = Detector()
    column = pa.array([*texts, None, ""], pa.large_string())
    encoded = [t.encode() if t is not None else None for t in column.to_pylist()]
    for pattern in (*detector.prefilters, *CELL_TRIGGERS, TRIGGER):
        arrow = pc.fill_null(pc.match_substring_regex(column, pattern=pattern), False).to_pylist()
        assert any_match(encoded, (pattern,)).tolist() == arrow, pattern[:80]


def _members_by_arrow(texts: list[str], group: tuple[str, ...]) -> set[tuple[int, str]]:
    column = pa.array(texts, pa.large_string())
    return {(row, member) for member in group
            for row, hit in enumerate(pc.match_substring_regex(column, pattern=member).to_pylist()) if hit}


def test_each_groups_members_are_found_where_each_matches(texts: list[str]) -> None:
    encoded = [t.encode() for t in texts]
    for group in Detector().groups:
        found = set(members_found(encoded, "|".join(f"(?:{t})" for t in group), group))
        assert found == _members_by_arrow(texts, group), group[0][:80]


def test_members_are_searched_alone_where_the_set_finds_none(texts: list[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A set whose automaton ran out of its budget answers no match at all: each member is then searched alone."""
    group = next(g for g in Detector().groups if len(g) > 5)
    monkeypatch.setattr(passes, "_which", lambda members: lambda text: None)
    found = set(members_found([t.encode() for t in texts], "|".join(f"(?:{t})" for t in group), group))
    assert found == _members_by_arrow(texts, group) and found


def test_every_rules_superset_matches_wherever_its_pattern_does(texts: list[str]) -> None:
    views = [_view(t) for t in texts]
    checked = 0
    for rule in Detector().rules:
        search = prematch(rule.pattern)
        if search is None:
            continue
        for view in views:
            if rule.regex.search(view) is not None:
                checked += 1
                assert search(view.encode()), (rule.name, view[:120])
    assert checked > 1000


@pytest.mark.parametrize(("pattern", "text"), [
    (r"key=\w+$", "key=abc\n"),  # Python's `$` also stands before a last line break
    (r"a\sb", "a\vb"),  # Python's `\s` holds the vertical tab
    (r"x{,3}y", "xxy"),  # `{,n}` is a repeat in Python, a literal in RE2
    (r"\u00e9t\u00e9", "été"),
    (r"[^\s\u00e9]+\Z", "abc"),
    (r"(?m:^)RW\d", "ISA\nRW1"),
    (r"a{1500}", "a" * 1500),
    (r"\{\}x", "{}x"),
], ids=["dollar", "vertical-tab", "open-low-bound", "u-escape", "class-and-Z", "multiline-caret", "long-repeat",
        "literal-brace"])
def test_python_forms_are_written_as_re2_reads_them(pattern: str, text: str) -> None:
    assert re.search(pattern, text, re.ASCII)
    search = prematch(pattern)
    assert search is not None and search(text.encode()), superset(pattern)


def test_a_compiled_pattern_says_whether_it_matches() -> None:
    matches = compiled(r"(?i:kennwort)\s*[:=]\s*\S+")
    assert matches("Zugang — KENNWORT: hx9!".encode()) is True
    assert matches("Kennwort vergessen".encode()) is False
    assert matches(b"") is False and compiled(r"\A\z")(b"") is True


def test_lookarounds_are_dropped_and_backreferences_left_to_python() -> None:
    assert superset(r"(?<![A-Za-z])key(?=:)(?!x)") == "key"
    search = prematch(r"(?<![A-Za-z])key(?=:)")
    assert search is not None and search(b"monkey")  # a superset: Python's lookarounds decide
    assert prematch(r"(?P<sep>[|*])x(?P=sep)") is None
