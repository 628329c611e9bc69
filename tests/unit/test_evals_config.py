"""evals.yaml: every shipped example parses; mistakes are reported with the file, the line and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracegym.errors import ConfigError
from tracegym.evals.scorers.config import load_evals

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(tmp_path: Path, text: str):
    path = tmp_path / "evals.yaml"
    path.write_text(text)
    return load_evals(path)


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    return str(info.value)


def test_every_example_evals_file_parses_and_builds(store):
    from tracegym.evals.scorers import ScorerContext, build_scorer

    files = sorted(EXAMPLES.glob("**/evals*.yaml"))
    assert files, f"no example evals files under {EXAMPLES}"
    for path in files:
        loaded = load_evals(path)
        for spec in loaded.config.evals:
            assert build_scorer(spec, ScorerContext(loaded.folder, store), loaded).name == spec.name
        assert set(loaded.lines) == {e.name for e in loaded.config.evals}


def test_unknown_field_names_line_and_nearest_spelling(tmp_path):
    message = _error(tmp_path, "version: 1\nevals:\n  - name: a\n    kind: tool_calls\n"
                               "    expected_from: metadata.x\n    ordr: strict\n")
    assert message.startswith(f"{tmp_path / 'evals.yaml'}:6: evals.0.tool_calls.ordr: Extra inputs")
    assert "Fix: remove 'ordr'. Did you mean 'order'?" in message


def test_unknown_kind_lists_the_kinds(tmp_path):
    message = _error(tmp_path, "evals:\n  - name: a\n    kind: toolcalls\n")
    assert ":2: evals.0:" in message and "Fix: set kind to one of 'python', 'command', 'match'" in message


def test_missing_field_says_what_it_is(tmp_path):
    message = _error(tmp_path, "evals:\n  - name: a\n    kind: command\n")
    assert ":2: evals.0.command.command: Field required. Fix: add 'command' (Shell command run" in message


def test_wrong_type_and_bad_value_point_at_their_line(tmp_path):
    message = _error(tmp_path, "evals:\n  - name: a\n    kind: match\n    mode: exact\n    expected: x\n"
                               "    tolerance: -1\n")
    assert ":6: evals.0.match.tolerance: Input should be greater than or equal to 0" in message
    message = _error(tmp_path, "evals:\n  - name: a\n    kind: match\n    mode: fuzzy\n    expected: x\n")
    assert ":4: evals.0.match.mode:" in message and "Fix: use 'exact', 'regex'" in message


def test_cross_field_rules_carry_their_fix(tmp_path):
    message = _error(tmp_path, "evals:\n  - name: a\n    kind: match\n    mode: regex\n    expected: '('\n")
    assert ":2: evals.0.match: expected is not a valid regex" in message
    message = _error(tmp_path, "evals:\n  - name: a\n    kind: command\n    command: make test\n"
                               "    reward_from: junit\n")
    assert "reward_from: junit needs junit_xml:" in message


def test_references_between_evals_are_checked_with_the_line(tmp_path):
    base = "evals:\n  - name: a\n    kind: match\n    mode: exact\n    expected: x\n"
    message = _error(tmp_path, base + "  - name: b\n    kind: weighted\n    parts: {a: 1, aa: 1}\n")
    assert message.startswith(f"{tmp_path / 'evals.yaml'}:6: weighted eval 'b' names 'aa'")
    assert "Did you mean 'a'?" in message
    assert ":6: eval name 'a' is used twice" in _error(tmp_path, base + base.replace("evals:\n", ""))


def test_invalid_yaml_and_empty_and_missing_files(tmp_path):
    message = _error(tmp_path, "evals:\n  - name: a\n   kind: command\n")
    assert ":3: invalid YAML" in message and "Fix: check the indentation" in message
    assert ":1: the file is empty" in _error(tmp_path, "")
    with pytest.raises(ConfigError, match="No evals file at nowhere.yaml"):
        load_evals("nowhere.yaml")


def test_get_suggests_a_defined_name(tmp_path):
    loaded = _load(tmp_path, "evals:\n  - name: gold_actions\n    kind: tool_calls\n    expected: []\n")
    with pytest.raises(ConfigError, match="defines no eval 'gold_action'. Did you mean 'gold_actions'"):
        loaded.get("gold_action")
    assert loaded.where("gold_actions") == f"{tmp_path / 'evals.yaml'}:2"
