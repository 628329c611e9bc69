"""Comparing what a reply says with what a successful reply said: the entities from the conversation it names, its
content words, and the act it performs (offer, ask, refuse, hand off, apologise only, inform)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tracegym.evals.scorers.entities import Entity, entities, found_in, terms

# The act of a reply, the first that applies: handing off outranks the offer to hand off, an offer or a question
# moves the conversation on even after a refusal, and an apology with nothing else is its own act.
_ACTS = (
    ("hand_off", re.compile(r"\btransfer\w*\b[^.?!]*\b(?:human|agent|representative|specialist)|\bhuman agent\b"
                            r"|\b(?:representative|supervisor)\b", re.IGNORECASE)),
    ("offer", re.compile(r"\bwould you like\b|\bshall i\b|\bdo you want\b|\bshould i\b|\bwould you prefer\b"
                         r"|\bcan i (?:go ahead|proceed)\b|\bplease confirm\b|\bdo you (?:confirm|agree)\b"
                         r"|\b(?:i can|i could|let me)\b[^.?!]*\b(?:instead|alternative|another|other)\b",
                         re.IGNORECASE)),
    ("ask", re.compile(r"\b(?:could|can|would) you (?:please )?(?:provide|tell|share|give|confirm|let me know|"
                       r"specify|check)\b|\bplease (?:provide|share|tell|specify|let me know (?:which|what|the))\b"
                       r"|\bwhat (?:is|are) (?:your|the)\b|\bwhich (?:one|option|payment|flight)\b",
                       re.IGNORECASE)),
    ("refuse", re.compile(r"\b(?:can(?:'|no)?t|cannot|unable to|not able to|not possible|won't be able|not allowed"
                          r"|not permitted|not eligible|against (?:our |the )?polic(?:y|ies)|must decline)\b",
                          re.IGNORECASE)),
)
_APOLOGY = re.compile(r"[^.?!]*\b(?:sorry|apologi[sz]e|apologies|regret)\b[^.?!]*[.?!]?", re.IGNORECASE)
_NEAR_ACTS = frozenset({frozenset({"offer", "ask"})})
"""Acts that both hand the choice to the user, and earn half credit for each other."""
PROSE_WEIGHTS = {"entities": 0.5, "terms": 0.25, "act": 0.25}
"""How the parts of a prose comparison count; a part with nothing to compare (a reference that names no entity
from the conversation) is left out and the others share its weight."""


def speech_act(text: str) -> str:
    """hand_off, offer, ask, refuse, apologise_only or inform."""
    for act, pattern in _ACTS:
        if pattern.search(text):
            return act
    if _APOLOGY.search(text) and len(terms(_APOLOGY.sub(" ", text))) < 3:
        return "apologise_only"
    return "inform"


def act_credit(got: str, want: str) -> float:
    """1 for the same act, 0.5 for a near one (an offer for a question), else 0."""
    return 1.0 if got == want else 0.5 if frozenset({got, want}) in _NEAR_ACTS else 0.0


@dataclass
class ProseMatch:
    """How far a reply says what a reference said; `score` in [0, 1]."""

    score: float
    matched: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    parts: dict[str, float] = field(default_factory=dict)

    def details(self) -> dict[str, Any]:
        return {"matched": self.matched[:10], "missing": self.missing[:10],
                "parts": {k: round(v, 3) for k, v in self.parts.items()}}


def compare_prose(reply: str, reference: str, conversation: Conversation | None) -> ProseMatch:
    """Entities and content words of `reference` found in `reply` (only those the conversation holds, when one is
    given), and, with a conversation, whether the two perform the same act."""
    said = entities(reply)
    wanted = {e for e in entities(reference) if conversation is None or found_in(e, conversation.entities)}
    words = terms(reference) & conversation.terms if conversation is not None else terms(reference)
    got = [e for e in sorted(wanted) if found_in(e, said)]
    said_words = terms(reply)
    parts: dict[str, float] = {}
    if wanted:
        parts["entities"] = len(got) / len(wanted)
    if words:
        parts["terms"] = len(words & said_words) / len(words)
    if conversation is not None:
        parts["act"] = act_credit(speech_act(reply), speech_act(reference))
    weights = {k: PROSE_WEIGHTS[k] for k in parts}
    total = sum(weights.values())
    score = sum(weights[k] * parts[k] for k in parts) / total if total else float(reply.strip() == reference.strip())
    return ProseMatch(score, [_show(e) for e in got], [_show(e) for e in sorted(wanted) if e not in got], parts)


@dataclass(frozen=True)
class Conversation:
    """What the attempt was shown, as entities and content words: a reply's entity counts when it comes from
    here."""

    entities: frozenset[Entity]
    terms: frozenset[str]

    @classmethod
    def of(cls, texts: list[str]) -> Conversation:
        joined = "\n".join(texts)
        return cls(frozenset(entities(joined)), frozenset(terms(joined)))


def _show(entity: Entity) -> str:
    return f"{entity[0]}:{entity[1]}"
