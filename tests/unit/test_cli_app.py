"""The command line's own options."""

from __future__ import annotations

import tracegym


def test_version_prints_the_package_version(cli):
    shown = cli("--version")
    assert shown.exit_code == 0 and shown.stdout == f"tracegym {tracegym.__version__}\n"


def _help(*command: str) -> str:
    from typer.testing import CliRunner

    from tracegym.cli import app

    shown = CliRunner().invoke(app, [*command, "--help"], terminal_width=500)
    assert shown.exit_code == 0, shown.output
    return shown.stdout


def test_help_reflows_paragraphs_and_keeps_what_the_text_says():
    """Help kept the docstrings' line breaks (a paragraph broke mid-sentence at any width), dropped every
    "[default: ...]" written in an option's help as if it were a markup tag, and showed <bool> on flags."""
    shown = _help("eval")
    lines = [line.strip() for line in shown.splitlines()]
    assert ("Mean reward, the share of hollow replies, pass@1 and pass@k with 95% bootstrap intervals over tasks; "
            "each change against the base with a paired permutation test (beyond noise at p < 0.05); tasks the base "
            "passed and a checkpoint fails. Every sample goes to the store") in shown
    assert any(line.startswith("--base <str>") and "The base model [default: the model the checkpoints' run "
               "started from, else smollm2-135m]; MODEL@URL" in line for line in lines)
    assert "<bool>" not in shown and "<bool>" not in _help("ingest") and "--strict" in _help("ingest")
