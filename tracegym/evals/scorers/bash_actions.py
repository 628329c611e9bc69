"""What a ```bash block does, as far as words tell: the programs it runs and the paths it names.

`sed -i 's/a/b/' src/app.py` runs `sed -i` on `src/app.py`; `cat src/app.py` runs `cat` on the same file:
the same target, another action. Nothing is run: the block is split into simple commands and read.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from tracegym.evals.scorers.entities import canonical_path

BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_]\w*)['\"]?")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "\n", "(", ")", ";;", "|&"})
_REDIRECTS = frozenset({">", ">>", "<", "&>", ">&", "&>>", "<>", ">|"})
_WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "command", "exec", "xargs", "then", "do", "else", "!"})
_NAVIGATION = frozenset({"cd", "pushd", "popd"})
_SUBCOMMANDS = frozenset({"git", "pip", "pip3", "conda", "npm", "yarn", "pnpm", "cargo", "go", "docker", "poetry",
                          "uv", "apt", "apt-get", "brew", "kubectl", "django-admin", "make", "tox", "nox"})
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "sed", "awk", "perl", "ag"})
_TEXT_ARGS = frozenset({"echo", "printf"})
_PYTHON = re.compile(r"python[\d.]*")
_PATHLIKE = re.compile(r"[\w.~/+-]+")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,5}$")


@dataclass(frozen=True)
class BashAction:
    """The programs a reply's ```bash blocks run (`git diff`, `sed -i`, `python -m pytest`) and the paths they
    name, navigation (`cd`) left out."""

    programs: tuple[str, ...]
    paths: frozenset[str]

    @property
    def empty(self) -> bool:
        return not self.programs and not self.paths


def bash_blocks(text: str) -> list[str]:
    """The bodies of the ```bash blocks in `text`, in order."""
    return BASH_BLOCK.findall(text)


def read_action(text: str) -> BashAction:
    """The programs and paths of every ```bash block in `text`."""
    programs: list[str] = []
    paths: set[str] = set()
    for block in bash_blocks(text):
        for words, targets in _commands(_tokens(_without_heredoc_bodies(block))):
            key, operands = _program(words)
            if key is None:
                continue
            programs.append(key)
            paths.update(p for p in (_path(w) for w in [*operands, *targets]) if p)
    return BashAction(tuple(programs), frozenset(paths))


def _without_heredoc_bodies(script: str) -> str:
    """The script with each here-document's lines removed (they are a file's text, not commands)."""
    kept: list[str] = []
    ending: str | None = None
    for line in script.replace("\\\n", " ").split("\n"):
        if ending is not None:
            ending = None if line.strip() == ending else ending
            continue
        kept.append(line)
        found = _HEREDOC.search(line)
        ending = found.group(1) if found else None
    return "\n".join(kept)


def _tokens(script: str) -> list[str]:
    lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
    lexer.whitespace = " \t\r"
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: read it word by word
        return script.replace("\n", " \n ").split(" ")


def _commands(tokens: list[str]) -> list[tuple[list[str], list[str]]]:
    """Simple commands: (their words, their redirection targets)."""
    commands: list[tuple[list[str], list[str]]] = []
    words: list[str] = []
    targets: list[str] = []
    pending: str | None = None
    for token in tokens:
        if pending is not None:
            if pending != "<<":  # a here-document's delimiter is no target
                targets.append(token)
            pending = None
        elif token in _SEPARATORS:
            commands.append((words, targets))
            words, targets = [], []
        elif token in _REDIRECTS or token == "<<" or token == "<<<":
            pending = "<<" if token.startswith("<<") else token
        elif token:
            words.append(token)
    commands.append((words, targets))
    return [(w, t) for w, t in commands if w or t]


def _program(words: list[str]) -> tuple[str | None, list[str]]:
    """The program key of a simple command and its operands (the words that may be paths)."""
    rest = list(words)
    while rest and (re.fullmatch(r"\w+=.*", rest[0]) or rest[0] in _WRAPPERS or rest[0] == "timeout"):
        rest = rest[2:] if rest[0] == "timeout" and len(rest) > 1 else rest[1:]
    if not rest:
        return None, []
    name = rest[0].rsplit("/", 1)[-1]
    args = rest[1:]
    if name in _NAVIGATION:
        return None, []
    if _PYTHON.fullmatch(name):
        return _python(args)
    operands = [a for a in args if not a.startswith("-")]
    if name in _SUBCOMMANDS and operands:
        return f"{name} {operands[0]}", operands[1:]
    if name in ("sed", "perl") and any(a.startswith("-i") or a == "--in-place" for a in args):
        name += " -i"
    if name.split()[0] in _PATTERN_FIRST and not any(a in ("-e", "-f") for a in args):
        operands = operands[1:]
    if name in _TEXT_ARGS:
        operands = []
    return name, operands


def _python(args: list[str]) -> tuple[str, list[str]]:
    for i, arg in enumerate(args):
        if arg == "-m" and i + 1 < len(args):
            return f"python -m {args[i + 1]}", [a for a in args[i + 2:] if not a.startswith("-")]
        if arg == "-c":
            return "python -c", []
        if not arg.startswith("-"):
            return "python", [a for a in args[i:] if not a.startswith("-")]
    return "python", []


def _path(word: str) -> str | None:
    """`word` as a path when it looks like one (has a `/` or a file extension, and no pattern characters)."""
    word = word.split("::", 1)[0]  # pytest's file::test ids
    if not _PATHLIKE.fullmatch(word) or word.startswith("-") or word == "/dev/null":
        return None
    if "/" not in word and not _EXTENSION.search(word):
        return None
    return canonical_path(word)
