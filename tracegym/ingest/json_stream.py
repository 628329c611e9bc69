"""The items of a JSON document's top-level array, found without parsing the document whole.

`ArrayItems` reads the file in blocks and finds where each item ends by
following only strings (quotes, backslash escapes) and brackets, a few numpy
passes per block. Each item's bytes are then parsed on their own, so an item
that is too deep, not UTF-8 or otherwise broken costs only itself, and memory
holds one block and one item rather than the document and all its objects.

Items are not checked here: brackets of the wrong kind or a stray character
make the item a bad record when it is parsed. What cannot be split reliably
(an item that closes more brackets than it opened, text after the array, a
file that ends inside the array) ends the array and is reported in `ending`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

BLOCK_BYTES = 4 << 20
_QUOTE, _BACKSLASH, _COMMA = ord('"'), ord("\\"), ord(",")
_OPENS = np.frombuffer(b"[{", np.uint8)
_CLOSES = np.frombuffer(b"]}", np.uint8)
_MARKED = np.zeros(256, dtype=bool)
_MARKED[np.frombuffer(b'"\\[]{},', np.uint8)] = True
_SPACE = b" \t\r\n"


@dataclass(slots=True)
class Item:
    """One item of the array: its position, and its bytes (only the first `keep` of them past `limit`)."""

    index: int
    start: int  # byte offset of its first character in the file
    data: bytes
    size: int  # its length in bytes; larger than len(data) when it was cut


@dataclass(slots=True)
class Ending:
    """How the array ended: 'closed', 'unclosed' (the file ended inside it) or 'trailing' (text after it)."""

    kind: str
    offset: int  # where the text after the array starts ('trailing'), else the end of the file


class _Scanner:
    """String and bracket state carried from block to block."""

    def __init__(self) -> None:
        self.in_string = False
        self.escape_next = False  # the previous block ended in an odd run of backslashes
        self.depth = 0

    def marks(self, block: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Offsets in `block` of brackets and commas outside strings, their bytes, and the depth after each."""
        data = np.frombuffer(block, np.uint8)
        pos = np.flatnonzero(_MARKED[data])
        kinds = data[pos]
        quote = (kinds == _QUOTE) & ~self._escaped(pos, kinds, len(block))
        keep = quote | ((kinds != _QUOTE) & (kinds != _BACKSLASH))
        pos, kinds, quote = pos[keep], kinds[keep], quote[keep]
        quotes_so_far = np.cumsum(quote) + self.in_string
        if len(quotes_so_far):
            self.in_string = bool(quotes_so_far[-1] & 1)
        outside = ~quote & ((quotes_so_far & 1) == 0)
        pos, kinds = pos[outside], kinds[outside]
        step = np.isin(kinds, _OPENS).astype(np.int64) - np.isin(kinds, _CLOSES)
        depth = self.depth + np.cumsum(step)
        if len(depth):
            self.depth = int(depth[-1])
        return pos, kinds, depth

    def _escaped(self, pos: np.ndarray, kinds: np.ndarray, size: int) -> np.ndarray:
        """Which marked bytes follow an odd run of backslashes (and so are escaped)."""
        n = len(pos)
        backslash = kinds == _BACKSLASH
        follows = np.zeros(n, dtype=bool)  # the byte right before this one is a marked backslash
        follows[1:] = backslash[:-1] & (pos[1:] == pos[:-1] + 1)
        index = np.arange(n)
        run_start = np.maximum.accumulate(np.where(backslash & ~follows, index, 0))
        run = np.where(backslash, index - run_start + 1, 0)  # length of the backslash run ending here
        if self.escape_next and n and pos[0] == 0:
            run[(run_start == 0) & backslash] += 1  # the run goes on from the previous block
        escaped = np.zeros(n, dtype=bool)
        escaped[1:] = follows[1:] & (run[:-1] % 2 == 1)
        if n and pos[0] == 0 and not backslash[0]:
            escaped[0] = self.escape_next
        self.escape_next = bool(n and backslash[-1] and pos[-1] == size - 1 and run[-1] % 2 == 1)
        return escaped


class _Pending:
    """The item being read: where it starts, its bytes so far (only the first `keep` past `limit`), its length."""

    def __init__(self, start: int) -> None:
        self.start, self.parts, self.size, self.cut = start, [], 0, False

    def add(self, piece: bytes, limit: int, keep: int) -> None:
        self.size += len(piece)
        if self.cut:
            return
        self.parts.append(piece)
        if self.size > limit:
            self.parts, self.cut = [b"".join(self.parts)[:keep]], True

    def item(self, index: int) -> Item | None:
        """The item without the blanks around it; None for a blank one (nothing between two commas)."""
        data = b"".join(self.parts)
        body = data.lstrip(_SPACE)
        lead = len(data) - len(body)
        if not self.cut:
            body = body.rstrip(_SPACE)
            return Item(index, self.start + lead, body, len(body)) if body else None
        return Item(index, self.start + lead, body, self.size - lead)


class ArrayItems:
    """Iterate a top-level array's items from `f`, positioned just after its opening bracket; then read `ending`.

    An item longer than `limit` bytes comes with only its first `keep` bytes.
    """

    def __init__(self, f: BinaryIO, limit: int, keep: int, block: int = BLOCK_BYTES) -> None:
        self.f, self.limit, self.keep, self.block = f, limit, keep, block
        self.ending = Ending("unclosed", 0)

    def __iter__(self) -> Iterator[Item]:
        scanner, index = _Scanner(), 0
        scanner.depth = 1
        offset = self.f.tell()
        pending = _Pending(offset)
        while block := self.f.read(self.block):
            pos, kinds, depth = scanner.marks(block)
            taken = 0
            # Only the marks at the array's own level matter: its commas and its closing bracket.
            for i in np.flatnonzero(((kinds == _COMMA) & (depth == 1)) | (depth <= 0)):
                at = int(pos[i])
                pending.add(block[taken:at], self.limit, self.keep)
                item = pending.item(index)
                if item is not None:
                    yield item
                    index += 1
                if depth[i] <= 0:
                    self._after(offset + at + 1)
                    return
                taken, pending = at + 1, _Pending(offset + at + 1)
            pending.add(block[taken:], self.limit, self.keep)
            offset += len(block)
        item = pending.item(index)
        if item is not None:
            yield item
        self.ending = Ending("unclosed", offset)

    def _after(self, end: int) -> None:
        """Whatever follows the array must be blank."""
        offset = end
        self.f.seek(end)
        while rest := self.f.read(self.block):
            body = rest.lstrip(_SPACE)
            if body:
                self.ending = Ending("trailing", offset + len(rest) - len(body))
                return
            offset += len(rest)
        self.ending = Ending("closed", offset)
