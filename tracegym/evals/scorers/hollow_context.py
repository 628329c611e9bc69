"""What a reply answers, as the hollow-reply detectors read it (tracegym/evals/scorers/hollow.py).

A reply "says something" of its conversation when it names one of its specific terms (an id, a number, a name
inside a sentence, a quoted value, a value a tool answered with: `Context.entities`, from the user's, the
assistant's and the tools' messages) or at least `SUBSTANCE_WORDS` of its content words (`Context.vocabulary`, the
system prompt included: a reply that explains the policy's "basic economy" and "travel insurance" says something).
Service talk (sorry, assist, transfer, human agent, request, issue, ...) never counts: it is what a hollow reply
is made of.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

Message = Mapping[str, Any]

SUBSTANCE_WORDS = 2
"""Content words of the conversation a reply must use to say something, when it names no specific term."""

# Words too common to name anything (words under 3 characters never do, but two-digit numbers).
_STOP = frozenset("""
the and for with you your yours are was were this that these those have has had not but can will from all any
our ours they them their then than what when where which who whom whose would could should been being into also
just only some other about like such each does did done per yes none null true false its his her him she how why
get got let may might must shall very much many most own same too out off over under again further once both few
nor now one two well okay sure there here more
""".split())
# Service talk: what a reply says when it says nothing of the task.
_FILLER = frozenset("""
understand understood unfortunately however assistance assist assisting further question questions concern concerns
frustration inconvenience confusion trouble apologize apologise apology apologies sorry happy glad feel free know
please proceed proceeding need needs provide able unable help helping helpful check checking look looking moment
wait hold transfer transferring transferred human agent agents representative specialist support customer service
team contact reach request requests issue issues problem problems matter situation inquiry query anything something
everything nothing else today information details detail right away certainly course want make take give best
done completed complete resolved resolve processed process successfully updated handled handle care regarding
related additional option options possible available currently appreciate patience understanding thank thanks
welcome great good kind dear hello assistant happen happened work working fine okay sure ensure time ready
""".split())
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@/:+#'-]*[A-Za-z0-9]|[A-Za-z0-9]")
_SPECIFIC = re.compile(r"\d|.[_./@:#].")
_CAPITAL = re.compile(r"\b[A-Z][a-z]{2,}\b")
_QUOTED = re.compile(r"\"([^\"\n]{2,80})\"|'([^'\n]{2,80})'|`([^`\n]{2,80})`")
_CLOSING = re.compile(r"\b(bye|goodbye|that'?s all|that is all|that'?s it|nothing else|have a (good|great|nice) day)\b"
                      r"|###stop###", re.IGNORECASE)
_THANKS = re.compile(r"\b(thanks|thank you)\b", re.IGNORECASE)
_WELCOME = re.compile(r"\W*(you'?re (very |most )?welcome|you are (very |most )?welcome|my pleasure|glad (i|to)|"
                      r"happy to help|no problem)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Context:
    """What a reply answers, digested (see the module doc)."""

    entities: frozenset[str] = frozenset()
    """Specific terms of the user's, the assistant's and the tools' messages (lower case)."""
    vocabulary: frozenset[str] = frozenset()
    """Content words of every message, the system prompt included, service talk left out (lower case)."""
    result_keys: frozenset[str] = frozenset()
    """Keys of the JSON objects the tools answered with."""
    closing: bool = False
    """The user's last message closed the conversation (`closes`)."""
    thanked: bool = False
    """The user's last message thanked the agent and asked nothing."""

    def answers_courtesy(self, text: str) -> bool:
        """Whether a reply that says nothing is still in place: the user closed the conversation, or thanked the
        agent and the reply says you're welcome."""
        return self.closing or (self.thanked and bool(_WELCOME.match(text)))

    def says_something(self, text: str) -> bool:
        """Whether `text` names a specific term of the conversation or uses enough of its content words."""
        words = {w.lower() for w in words_of(text)} - _FILLER
        return bool(words & self.entities) or len(words & self.vocabulary) >= SUBSTANCE_WORDS


def closes(text: str) -> bool:
    """Whether a user's message ends the conversation: a goodbye, "that's all", and no question. (Thanks alone do
    not: "Yes, please proceed. Thank you!" asks for the next step.)"""
    return "?" not in text and bool(_CLOSING.search(text))


def _specific(word: str) -> bool:
    """An id, a number, a path, an address: a word with a digit or inner punctuation."""
    return _SPECIFIC.search(word) is not None


def _kept(word: str) -> bool:
    return (len(word) >= 3 and word.lower() not in _STOP) or (len(word) == 2 and word.isdigit())


def words_of(text: str) -> Iterator[str]:
    """The words of `text` that can name something (common words and short ones left out)."""
    return (w for w in _WORD.findall(text) if _kept(w))


def _names(text: str) -> Iterator[str]:
    """Capitalised words inside a sentence (a sentence's first word is capitalised whatever it is)."""
    for found in _CAPITAL.finditer(text):
        before = text[:found.start()].rstrip(" \t\"'(*")
        if before and before[-1] not in ".!?:\n":
            yield found.group(0)


def leaves(value: Any, keys: set[str]) -> Iterator[str]:
    """The scalar values of parsed JSON as text, collecting the keys of its objects into `keys`."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            keys.add(str(key))
            yield from leaves(item, keys)
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item, keys)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)


def parsed_json(text: str) -> Any:
    """`text` parsed as JSON; None where it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None


@dataclass
class Facts:
    """A conversation's `Context`, grown one message at a time."""

    entities: set[str] = field(default_factory=set)
    vocabulary: set[str] = field(default_factory=set)
    result_keys: set[str] = field(default_factory=set)
    closing: bool = False
    thanked: bool = False

    def add(self, message: Message) -> None:
        role, content = message.get("role"), message.get("content")
        text = content if isinstance(content, str) else json.dumps(content) if content is not None else ""
        words = [(w, w.lower()) for w in words_of(text)]
        self.vocabulary.update(lower for w, lower in words if len(w) >= 4 and lower not in _FILLER)
        if role == "tool":
            self._add_result(text, words)
        elif role in ("user", "assistant"):
            self._add_prose(text, words)
        for call in message.get("tool_calls") or ():
            arguments = (call.get("function") or {}).get("arguments")
            self._add_values(parsed_json(arguments) if isinstance(arguments, str) else arguments, set())
        if role == "user":
            self.closing = closes(text)
            self.thanked = bool(_THANKS.search(text)) and "?" not in text

    def _add_result(self, text: str, words: list[tuple[str, str]]) -> None:
        parsed = parsed_json(text) if text.lstrip()[:1] in ("{", "[") else None
        if isinstance(parsed, Mapping | list):
            self._add_values(parsed, self.result_keys)
        else:
            self.entities.update(lower for w, lower in words if len(w) >= 4 or _specific(w))

    def _add_values(self, parsed: Any, keys: set[str]) -> None:
        for leaf in leaves(parsed, keys):
            self.entities.update(w.lower() for w in words_of(leaf) if w.lower() not in _FILLER)

    def _add_prose(self, text: str, words: list[tuple[str, str]]) -> None:
        self.entities.update(lower for w, lower in words if _specific(w))
        self.entities.update(w.lower() for w in _names(text) if _kept(w) and w.lower() not in _FILLER)
        for groups in _QUOTED.findall(text):
            self.entities.update(w.lower() for part in groups for w in words_of(part))

    def context(self) -> Context:
        return Context(frozenset(self.entities), frozenset(self.vocabulary), frozenset(self.result_keys),
                       self.closing, self.thanked)
