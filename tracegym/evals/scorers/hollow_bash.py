"""Shell commands that do nothing: what a ```bash block holds when a policy learned the block's shape alone.

A command is a no-op when every command of it (split on newlines, `&&`, `||`, `;` and `&`) is one of: nothing
(blank, or a comment such as `# TODO` or `# Do something`), `true`, `:`, `pass`, `*`, `exit`, `sleep`, `wait`, or
`echo` / `printf` of constants. Anything else acts: a pipe or a redirection, a variable or a command substitution
(`$`, backticks), a subshell, a here-document, any other program. A command the shell lexer cannot read
(unbalanced quotes) is taken to act: the detector flags only what it can read as a no-op.
"""

from __future__ import annotations

import shlex

_NOOPS = frozenset({"true", ":", "pass", "*", "exit", "sleep", "wait", "echo", "printf"})
_SEPARATORS = frozenset({"&&", "||", ";", "&", ";;"})
_OPERATOR_CHARS = frozenset("();<>|&")


def noop_command(command: str) -> bool:
    """Whether the shell command does nothing (see the module doc)."""
    lines = command.replace("\\\n", " ").splitlines()
    return all(_noop_line(line) for line in lines)


def _noop_line(line: str) -> bool:
    if "$" in line or "`" in line:
        return False
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return False
    segment: list[str] = []
    for token in [*tokens, ";"]:
        if token in _SEPARATORS:
            if segment and segment[0] not in _NOOPS:
                return False
            segment = []
        elif set(token) <= _OPERATOR_CHARS:
            return False  # a pipe, a redirection or a subshell
        else:
            segment.append(token)
    return True
