"""The package layout of docs/layout.md: which package may import which, and one meaning per module name."""

import ast
from collections import Counter
from pathlib import Path

import tracegym

PACKAGE = Path(tracegym.__file__).parent

# Who may import whom at run time (imports under `if TYPE_CHECKING:` are annotations only). `evals` is two units:
# its scorers sit below the harnesses, which call them; checkpoint evaluation sits above training, whose runs it
# evaluates. A unit not listed here fails the test until it is placed.
MAY_IMPORT: dict[str, set[str]] = {
    "errors": set(),
    "inert": set(),
    "exact_json": set(),
    "yamlfile": {"errors"},
    "output": {"inert"},
    "store": {"errors", "exact_json", "inert"},
    "models": {"errors"},
    "mining": {"errors", "store", "yamlfile"},
    "episodes": {"errors", "exact_json", "models"},
    "evals.scorers": {"errors", "inert", "models", "yamlfile"},
    "evals": {"evals.scorers"},
    "tasks": {"errors", "evals.scorers", "inert", "yamlfile"},
    "redact": {"errors", "exact_json", "tasks", "yamlfile"},
    "ingest": {"errors", "exact_json", "mining", "redact", "store"},
    "labels": {"errors", "ingest", "mining", "store"},
    "harnesses": {"episodes", "errors", "evals.scorers", "exact_json", "inert", "models", "output", "store", "tasks",
                  "yamlfile"},
    "samplers": {"episodes", "errors", "harnesses", "models", "output", "tasks"},
    "training": {"episodes", "errors", "evals.scorers", "exact_json", "harnesses", "inert", "models", "output",
                 "samplers", "store", "tasks", "yamlfile"},
    "evals.checkpoints": {"episodes", "errors", "evals.scorers", "harnesses", "inert", "models", "output", "store",
                          "tasks", "training"},
    "export": {"errors", "evals.checkpoints", "inert", "models", "store", "training"},
    "report": {"errors", "evals.checkpoints", "inert", "output", "store", "training"},
    "configdoc": {"training", "samplers", "harnesses", "tasks"},
    "environments": {"episodes", "errors", "evals.scorers", "exact_json", "harnesses", "inert", "models", "output",
                     "store", "tasks", "yamlfile"},
    "public_traces": {"errors", "output"},
}
# The command line sits on top and may import any of the above; the package's own `__init__` imports nothing.
TOP = {"__init__", "cli", "commands"}
# Names that mean the same thing in every package that has one.
GENERIC_NAMES = {"__init__", "base", "config"}


def _unit(dotted: str) -> str:
    """The unit of a module name below `tracegym`: its top-level package, or `evals.` and its subpackage."""
    parts = dotted.split(".")
    if parts[0] == "evals" and len(parts) > 1 and parts[1] in {"scorers", "checkpoints"}:
        return f"evals.{parts[1]}"
    return parts[0]


def _runtime_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    annotations_only = {id(node) for branch in ast.walk(tree)
                        if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
                        for statement in branch.body for node in ast.walk(statement)}
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in annotations_only:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_import_follows_the_layering() -> None:
    wrong: dict[str, set[str]] = {}
    for path in _modules():
        unit = _unit(".".join(path.relative_to(PACKAGE).with_suffix("").parts))
        if unit in TOP:
            continue
        assert unit in MAY_IMPORT, f"{path.relative_to(PACKAGE)}: place its package in MAY_IMPORT and docs/layout.md"
        for name in _runtime_imports(path):
            if not name.startswith("tracegym."):
                continue
            target = _unit(name.removeprefix("tracegym."))
            if target != unit and target not in MAY_IMPORT[unit]:
                wrong.setdefault(str(path.relative_to(PACKAGE)), set()).add(name)
    assert wrong == {}


def test_the_layering_has_no_cycle() -> None:
    done: set[str] = set()

    def visit(unit: str, path: tuple[str, ...]) -> None:
        assert unit not in path, " -> ".join(path + (unit,))
        if unit not in done:
            for below in MAY_IMPORT[unit]:
                visit(below, path + (unit,))
            done.add(unit)

    for unit in MAY_IMPORT:
        visit(unit, ())


def test_samplers_never_import_training() -> None:
    files = sorted((PACKAGE / "samplers").rglob("*.py"))
    assert len(files) >= 14
    offending = {str(f.relative_to(PACKAGE)): sorted(m for m in _runtime_imports(f)
                                                      if m.startswith("tracegym.training")) for f in files}
    assert {name: mods for name, mods in offending.items() if mods} == {}


def test_one_meaning_per_module_name() -> None:
    names = Counter(path.stem for path in _modules() if "commands" not in path.parts)
    names.update(path.parent.name for path in PACKAGE.rglob("__init__.py") if path.parent != PACKAGE)
    assert {name: count for name, count in names.items() if count > 1 and name not in GENERIC_NAMES} == {}


def test_the_named_packages_exist_and_hold_their_modules() -> None:
    expected = [
        "evals/scorers/config.py", "evals/scorers/agreement.py", "evals/checkpoints/evaluate.py",
        "evals/checkpoints/stats.py", "export/gguf.py", "export/modelcard.py", "tasks/prompts.py",
        "training/grpo/loss.py", "training/grpo/trainer.py", "training/parallel/sharded.py",
        "training/pools/quarantine.py", "harnesses/proxy/harness.py", "harnesses/chat.py", "harnesses/tools.py",
        "episodes/record.py", "samplers/rollouts.py", "samplers/backends/processes.py",
        "samplers/weights/deltas.py", "yamlfile.py",
    ]
    assert [name for name in expected if not (PACKAGE / name).is_file()] == []
