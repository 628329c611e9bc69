"""The examples in docs/*.md run as written and give the outcomes the pages state.

A page marks its examples with an HTML comment before a fenced block (GitHub hides the comment):

- `<!-- example: file PATH -->`: the block is a file, written at PATH in the page's folder;
- `<!-- example: run -->`: the block's lines are `tracegym` commands, run in order; each must exit 0;
- `<!-- example: fails -->`: the same, but each command must stop with a user error (exit code 2);
- `<!-- example: python -->`: the block is run as a Python script in the page's folder;
- `<!-- example: output -->`: what the example before it printed. A `json` block is part of a command's
  `--json` output (every key it gives has that value; lists have exactly its items); a `text` block after a
  failing command is part of its error message; after a Python block, it is the whole of what it printed.
- `<!-- example: uses PAGE -->` (no block): the file blocks of PAGE are written first.

Each page runs in a fresh folder, in the order of its examples.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import runpy
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ["custom-formats.md", "writing-evals.md", "mining-rules.md", "bring-your-traces.md", "other-trainers.md"]
SLOW_PAGES = ["your-own-logs.md"]  # trains and evaluates SmolLM2-135M

_MARKER = re.compile(r"<!-- example: (?P<kind>[a-z]+)(?: (?P<arg>[^>]*?))? -->\n")
_FENCE = re.compile(r"(?P<fence>`{3,})(?P<lang>[^\n`]*)\n(?P<body>.*?)\n(?P=fence)\n", re.DOTALL)
_NEEDS_BLOCK = {"file", "run", "fails", "python", "output"}


@dataclass(frozen=True)
class Example:
    kind: str
    arg: str
    lang: str
    body: str
    line: int

    @property
    def where(self) -> str:
        return f"line {self.line} ({self.kind}{' ' + self.arg if self.arg else ''})"


def examples(page: Path) -> list[Example]:
    """The marked examples of `page`, in order; a marker not followed by a fenced block is an error."""
    text = page.read_text(encoding="utf-8")
    found = []
    for marker in _MARKER.finditer(text):
        kind, arg = marker["kind"], (marker["arg"] or "").strip()
        line = text.count("\n", 0, marker.start()) + 1
        if kind not in _NEEDS_BLOCK | {"uses"}:
            raise AssertionError(f"{page.name}:{line}: unknown example marker {kind!r}")
        if kind == "uses":
            found.append(Example(kind, arg, "", "", line))
            continue
        fence = _FENCE.match(text, marker.end())
        assert fence, f"{page.name}:{line}: the `{kind}` marker must sit right above a fenced block"
        found.append(Example(kind, arg, fence["lang"].strip(), fence["body"], line))
    return found


def commands(body: str) -> list[list[str]]:
    """The `tracegym` commands of a shell block (continuation lines joined, comments left out), as argv lists."""
    joined = re.sub(r"\\\n\s*", " ", body)
    argvs = []
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        argv = shlex.split(line, comments=True)
        assert argv[0] == "tracegym", f"an example command must be a tracegym command: {line}"
        argvs.append(argv[1:])
    return argvs


def contains(actual: Any, expected: Any, path: str = "$") -> None:
    """Assert that `expected` is part of `actual` (dict keys a subset, lists item by item, numbers by value)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{path}: no key {key!r} in {sorted(actual)}"
            contains(actual[key], value, f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), \
            f"{path}: expected {len(expected)} items, got {actual!r}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            contains(a, e, f"{path}[{i}]")
    elif isinstance(expected, float) and not isinstance(actual, bool):
        assert actual == pytest.approx(expected, abs=1e-9), f"{path}: expected {expected}, got {actual!r}"
    else:
        assert actual == expected, f"{path}: expected {expected!r}, got {actual!r}"


def _words(text: str) -> str:
    """Text with rich's panel borders and line wrapping taken out, for comparing error messages."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


@dataclass
class Last:
    kind: str
    stdout: str
    stderr: str = ""


def run_page(page: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[Example]:
    """Run every example of `page` in `folder`; returns them (for the tests to count what ran)."""
    from typer.testing import CliRunner

    from tracegym.cli import app

    folder.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(folder)
    runner = CliRunner()
    last: Last | None = None
    done = examples(page)
    for ex in done:
        where = f"{page.name} {ex.where}"
        if ex.kind == "uses":
            for dep in examples(page.parent / ex.arg):
                if dep.kind == "file":
                    _write(folder, dep)
        elif ex.kind == "file":
            _write(folder, ex)
        elif ex.kind in ("run", "fails"):
            for argv in commands(ex.body):
                result = runner.invoke(app, argv, catch_exceptions=False)
                want = 0 if ex.kind == "run" else 2
                assert result.exit_code == want, f"{where}: `tracegym {shlex.join(argv)}` exited " \
                                                 f"{result.exit_code}, not {want}:\n{result.output}"
                last = Last(ex.kind, result.stdout, result.stderr)
        elif ex.kind == "python":
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                runpy.run_path(str(_write(folder, Example("file", f"_example_{ex.line}.py", "", ex.body, ex.line))),
                               run_name="__main__")
            last = Last("python", printed.getvalue())
        elif ex.kind == "output":
            assert last is not None, f"{where}: an output block must follow an example that prints"
            _check_output(where, ex, last)
            last = None
    return done


def _write(folder: Path, ex: Example) -> Path:
    path = folder / ex.arg
    assert path.resolve().is_relative_to(folder.resolve()), f"{ex.arg} lies outside the example's folder"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ex.body + "\n", encoding="utf-8")
    return path


def _check_output(where: str, ex: Example, last: Last) -> None:
    if ex.lang == "json":
        assert last.kind == "run", f"{where}: a json output block belongs after a command run with --json"
        contains(json.loads(last.stdout), json.loads(ex.body))
    elif last.kind == "fails":
        for line in ex.body.splitlines():
            assert _words(line) in _words(last.stderr), f"{where}: {line!r} is not in the error:\n{last.stderr}"
    else:
        assert last.stdout.rstrip("\n") == ex.body.rstrip("\n"), f"{where}: it printed\n{last.stdout}"


@pytest.mark.parametrize("page", [*PAGES, *(pytest.param(page, marks=pytest.mark.slow) for page in SLOW_PAGES)])
def test_docs_examples_run_and_give_the_stated_outcomes(page, tmp_path, monkeypatch):
    monkeypatch.delenv("TRACEGYM_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("TRACEGYM_JUDGE_MODEL", raising=False)
    done = run_page(DOCS / page, tmp_path, monkeypatch)
    kinds = [ex.kind for ex in done]
    # Every page shows commands and checks what they print: a page whose markers went missing fails here.
    assert kinds.count("output") >= 2 and {"run", "file"} <= set(kinds), f"{page}: {kinds}"


def test_docs_example_checks_can_fail(tmp_path, monkeypatch):
    """The checker itself: a stated output that differs, or a command that fails, is caught."""
    with pytest.raises(AssertionError, match="expected 3, got 2"):
        contains({"traces": 2, "errors": 0}, {"traces": 3})
    with pytest.raises(AssertionError, match="expected 1 items"):
        contains({"rows": [{"a": 1}, {"a": 2}]}, {"rows": [{"a": 1}]})
    page = tmp_path / "broken.md"
    page.write_text("<!-- example: run -->\n```bash\ntracegym traces show nope\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="exited 2, not 0"):
        run_page(page, tmp_path / "run", monkeypatch)


def test_docs_pages_are_linked_from_the_layout_page():
    layout = (DOCS / "layout.md").read_text(encoding="utf-8")
    for page in PAGES + SLOW_PAGES:
        assert f"({page})" in layout, f"docs/layout.md does not link {page}"
