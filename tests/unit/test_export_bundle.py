"""What an export carries of the harness config: the shell's workspace template travels, the team's folders don't."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracegym.environments.bundle import SHELL_TEMPLATE, portable_config
from tracegym.environments.registry import export_formats
from tracegym.errors import ExportError
from tracegym.harnesses.config import HarnessConfig


def test_the_shell_template_is_copied_and_workspaces_go_to_a_temporary_folder(tmp_path: Path) -> None:
    (tmp_path / "team" / "tpl" / "src").mkdir(parents=True)
    (tmp_path / "team" / "tpl" / "src" / "app.py").write_text("print('hi')\n")
    config = HarnessConfig.model_validate({"shell": {"template": "tpl", "workspaces": "runs", "limits": {
        "wall_seconds": 7}}})
    (tmp_path / "data").mkdir()
    carried = portable_config(config, tmp_path / "team", tmp_path / "data")
    assert (tmp_path / "data" / SHELL_TEMPLATE / "src" / "app.py").read_text() == "print('hi')\n"
    assert (carried.shell.template, carried.shell.workspaces) == (SHELL_TEMPLATE, None)
    assert carried.shell.limits.wall_seconds == 7  # the rest is kept
    assert portable_config(HarnessConfig(), tmp_path / "team", tmp_path / "data") == HarnessConfig()


def test_a_missing_shell_template_is_refused_with_the_fix(tmp_path: Path) -> None:
    config = HarnessConfig.model_validate({"shell": {"template": "gone"}})
    with pytest.raises(ExportError, match="Fix: correct shell: template:"):
        portable_config(config, tmp_path, tmp_path / "data")


def test_every_format_module_is_found_by_name() -> None:
    found = export_formats()
    assert {"verifiers", "trl"} <= set(found)
    assert all(f.summary and callable(f.export) for f in found.values())
