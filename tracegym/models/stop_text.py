"""Stop sequences (OpenAI's `stop`): text that ends a completion, and where its token record is cut.

The engines sample token ids; a stop string is text, so it is looked for in the decoded completion. Once
one appears the row stops, and the completion is cut where the text is: the reply's text ends before the
stop string (as an OpenAI endpoint returns it), and its ids end with the token that holds the text's last
character (a token that holds the end of the text and the start of the stop string stays; tokens wholly
inside the stop string are dropped, as are their log-probs and supports). The next prompt then continues
from the tokens the agent's text came from, the way a completion cut at its length limit does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Decode = Callable[[Sequence[int]], str]
_TAIL_SLACK = 4  # extra tokens decoded past the longest stop string, for tokens that decode to no character


def tail_has_stop(ids: Sequence[int], decode: Decode, stops: Sequence[str]) -> bool:
    """Whether the end of `ids` holds a stop string: only the last few tokens are decoded, since the row is
    checked after every token and stops at the first match."""
    window = max(len(s) for s in stops) + _TAIL_SLACK
    text = decode(ids[-window:])
    return any(s in text for s in stops)


def stop_cut(ids: Sequence[int], decode: Decode, stops: Sequence[str]) -> tuple[int, int] | None:
    """(tokens kept, characters of text kept) when the decoded `ids` hold a stop string, else None.

    At least one token is kept, so a completion that opens with a stop string still records what started it.
    """
    if not stops:
        return None
    text = decode(ids)
    found = [at for at in (text.find(s) for s in stops if s) if at >= 0]
    if not found:
        return None
    end = min(found)
    keep = next((k for k in range(1, len(ids) + 1) if len(decode(ids[:k])) >= end), len(ids))
    return keep, end
