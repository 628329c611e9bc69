"""The sampler side never imports the trainer: `tracegym.training` imports `tracegym.samplers`, not the reverse."""

import ast
from pathlib import Path

import tracegym

PACKAGE = Path(tracegym.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_samplers_never_import_training() -> None:
    files = sorted((PACKAGE / "samplers").glob("*.py"))
    assert len(files) >= 8
    offending = {f.name: sorted(m for m in _imported_modules(f) if m.startswith("tracegym.training"))
                 for f in files}
    assert {name: mods for name, mods in offending.items() if mods} == {}


def test_training_reaches_the_samplers_through_their_package() -> None:
    moved = {"orchestrator", "sampler_worker", "sync_rollouts", "weights", "deltas", "rollouts"}
    assert not [m for m in moved if (PACKAGE / "training" / f"{m}.py").exists()]
    uses = set().union(*(_imported_modules(f) for f in (PACKAGE / "training").glob("*.py")))
    assert {"tracegym.samplers.rollouts", "tracegym.samplers.config"} <= uses
