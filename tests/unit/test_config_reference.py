"""docs/training.md is the train config's reference as tracegym.configdoc writes it from the field docstrings."""

from pathlib import Path

from tracegym.configdoc import reference

PAGE = Path(__file__).resolve().parents[2] / "docs" / "training.md"


def test_the_training_page_is_the_generated_reference() -> None:
    assert PAGE.read_text(encoding="utf-8") == reference(), (
        "docs/training.md is out of date with the config's docstrings. "
        "Fix: python -m tracegym.configdoc > docs/training.md")


def test_the_reference_names_every_section_and_a_nested_default() -> None:
    text = reference()
    for heading in ("## `tasks`", "## `sampler`", "### `sampler.pools[]`", "## `async`", "### `harness.limits`"):
        assert f"\n{heading}\n" in text, heading
    # A section's default instance gives its keys' defaults: the harness's episode limit is 1 turn, not 10.
    assert "- **`harness.limits.max_turns`** (int, `1`)" in text
