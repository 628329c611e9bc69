"""Finding sensitive values in text: the rules' patterns, validators, the allow-list and overlap resolution.

`Detector.find_columns` prefilters whole Arrow columns with RE2 in C++ (the rules' triggers joined), then runs
the rules whose trigger matched, in Python, on the few texts left. A text holding invisible characters,
full-width forms or escapes is read twice: as written, and normalized (tracegym/redact/disguise.py) with its
findings mapped back to the original. A finding's span never starts inside an escape (`\\n`, `\\"`) or ends on a
lone backslash, so replacing it inside JSON text keeps the JSON valid.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tracegym.redact import national, printed
from tracegym.redact import validators as v
from tracegym.redact.cells import labelled_cells
from tracegym.redact.config import RedactConfig
from tracegym.redact.disguise import TRIGGER, TRIGGER_ESCAPES, TRIGGER_FORMS, Normalized, normalize
from tracegym.redact.passes import any_match, may_match, members_found, texts_of
from tracegym.redact.rules import (
    BUILTIN_RULES,
    CELL_TRIGGERS,
    CONTEXT_WORDS,
    COOKIE_NAMES,
    OWN_PASS,
    PASS_ENDING,
    SECOND_FACTOR_WORDS,
    WORD_TRIGGERED,
    Rule,
)
from tracegym.redact.structure import labelled_values

PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*_(?:\d+|[0-9a-f]{10})>")
"""What redaction writes: never a finding itself, so that redacting twice changes nothing."""
CACHE_ENTRIES = 50_000
CACHE_TEXT_CHARS = 20_000
CACHE_CHARS = 32_000_000
"""The texts the cache holds, in all: the oldest go first."""
_JSON_BREAK = re.compile(r"\\[nrt]")
_CSV_QUOTED = re.compile(r'(?:^|(?<=[,;\t]))"((?:[^"\n]|"")*)"(?=[,;\t]|\r?$)', re.MULTILINE)
"""A quoted CSV field (RFC 4180 2.7: a quote inside is written `""`), as spreadsheet exports carry JSON or a
header in one."""
_CSV_OPENING = re.compile(r'""(?=[^,:;}\] \t\n"])')
_CSV_ACRONYM = re.compile(r'(?<![^\W\d_])([\u05d0-\u05ea]{1,4})""(?=[\u05d0-\u05ea]{1,2}(?![^\W\d_]))')
"""A Hebrew acronym's gershayim typed as a quote (`ת"ז`, `דו"ח`), doubled inside a CSV field: it stands inside the
word, neither opening nor closing a string."""
_CELL_WORD = re.compile(rf"{CONTEXT_WORDS}|{national.SAID_HEADER}|{PASS_ENDING}$", re.ASCII)
"""A column's name that labels its cells: a context word, a national id's short name whole (`pnr`), or a name ending
in `pass` after a separator, as the password rule reads a label (`smtp_pass`, `yardi_db_pass`)."""
_LABEL_WORD = re.compile(rf"{CONTEXT_WORDS}|(?i:pass|okta)|{SECOND_FACTOR_WORDS}|^{COOKIE_NAMES}$|"
                         rf"{national.GENERIC_WORDS}|{national.SHORT_PARTS}", re.ASCII)
"""A label that structure ties to a value: a context word, `pass` ending a name (`smtp_pass`), `okta` (which the Okta
token rule reads as a label: `OKTA_SSWS`), a recovery code's or an authenticator secret's name, a session
cookie's name (`PHPSESSID`, `connect.sid`), an id's name with no country (`document_number`) or a national id's
short name inside one (`fr_nir`)."""
PASS_THREADS = max(1, min(4, os.cpu_count() or 1))
"""Threads that run the RE2 passes side by side. RE2's match lets go of the GIL while it reads a text, but over a
batch of short texts the Python around each call holds it most of the time: they gain 0.1-0.3 s of a redacted
ingest's 2-8 s."""
_executors: dict[int, ThreadPoolExecutor] = {}
POOL = pa.system_memory_pool()
"""Where redaction's Arrow arrays are allocated (distinct texts, masks, rewritten columns). Arrow's default pool
(mimalloc) gives a column-sized buffer back to the kernel once it is freed and maps the next one afresh: that
kernel time was a third of redaction's CPU at ingest (0.3 of 0.9 s over 2,000 τ-bench traces)."""
_VALUE_GROUPS = ("v", "w", "x")
_CREDENTIALS = frozenset({"API_KEY", "TOKEN", "SECRET", "PASSWORD", "JWT"})
_CONTAINMENT_CHECKED = 64
"""Findings in one text up to which credentials inside longer ones are looked for (pairs: quadratic)."""
_REPEAT_ALONE = 8
"""A found value this long is replaced wherever else it stands in its text, inside a longer run too."""
_VALUE_OBJECT = re.compile(r'\{[ \t]*\\?"value\\?"[ \t]*:[ \t]*\\?"([^"\\\n]{1,512})\\?"')
"""A cell holding an object that wraps its value (Keycloak's `secret_data` column: `{"value": …, "salt": …}`)."""
_SPACE_OR_QUOTE = re.compile(r"[\s\"{}]")
"""What keeps a labelled value from being read quoted, whole: words apart, a quote, braces (a template, a
`flag{…}`: Django's and the other generators' secret alphabets hold no braces)."""
_BOLD_COLON = re.compile(r"(?<=[:：])(?:\*\*|__)|(?:\*\*|__)(?=[ \t]*[:：])")
_MT940_INFO = re.compile(r"^:86:[^\n]*(?:\n(?!:\d{2}[A-Z]?:|-)[^\n]*)*", re.MULTILINE)
"""A bank statement's (SWIFT MT940) information to the account owner, field 86 with its continuation lines."""
_MT940_SUBFIELD = re.compile(r"[?^~][0-6]\d")
"""A structured field 86's subfield code (`?20` purpose, `?32` name: the German banks' layout; `^20` or `~20` in the
Polish and others'), written straight before the subfield's text."""
_GRID_GAP = re.compile(r"[ \t]{2,}")
"""A gap between a grid's cells (a DataFrame's repr, fixed-width output) inside a value a rule rejected: the
figures of one cell run into the next (`482913  5274.6183.0192.4756` read as one number from `482913`), so the
rule reads on from the cell after the gap, as if the value stood alone."""
_KEY_LABELS = frozenset({"API_KEY", "TOKEN", "SECRET"})
_FILLER_LABELS = _KEY_LABELS | {"WEBHOOK"}
_FILLER = re.compile(r"[A-Z]?(?:0{4,}|X{4,}|x{4,})(?:[/._-][A-Z]?(?:0{4,}|X{4,}|x{4,}))*|"
                     r"[A-Za-z]{1,4}[._-](?P<c>[A-Za-z0-9])(?P=c){3,}(?:[._-](?P<d>[A-Za-z0-9])(?P=d){3,})+")
"""A documented placeholder of a key or a webhook: each part a run of zeros or X, after one capital at most
(Slack's `T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX` in its own docs), or the issuer's prefix and then parts each
one character repeated (SendGrid's `SG.xxxx….yyyy…`): no issuer's secret looks like that."""
_PUBLIC_VALUE = re.compile(r"(?i:pk)[._-]|[A-Za-z]*_?(?i:publishable)[._-]|.*(?:EXAMPLE|EXAMPLEKEY)$|"
                           r"(?:live|test)_[A-Z0-9]{32}$|age1[02-9ac-hj-np-z]{58}$|FLWPUBK(?:_TEST)?-|"
                           r"AT[UXP]id_[0-9a-f]{32}$")
"""A credential-shaped value that is no secret: a publishable key (`pk_live_…`, Mapbox `pk.…`, `pk-lf-…`,
`sb_publishable_…`, Adyen's client keys `live_`/`test_` + 32, Flutterwave's `FLWPUBK-…-X` beside its `FLWSECK-`
secret: the issuers' convention for keys meant to ship in web pages and apps), an Africa's Talking object id
(`ATUid_` a USSD session's, `ATXid_` an SMS's, `ATPid_` a payment's: 32 hex its callbacks name an object by, which
sign nothing in; the API key is what authenticates), an age recipient (`age1…`: a public key, as `age-keygen`
prints it after "public key:") or a vendor's documented example (`AKIAIOSFODNN7EXAMPLE`, `…EXAMPLEKEY` in AWS's docs:
published, so redacting them hides nothing and makes documentation in traces noisy)."""
"""A rule's value: group `v`, or `w`/`x` in the alternatives of a rule that writes its value in several forms."""


@dataclass(frozen=True, slots=True)
class Finding:
    rule: Rule
    start: int
    end: int
    value: str
    priority: int = 0
    """The rule's rank: of two overlapping findings the higher-ranked one stays (a URL's password before the
    e-mail-like `password@host` around it), then the longer."""
    normal: str | None = None
    """The value as read after normalizing (`jane@example.com` for `jane%40example.com`): what its placeholder is
    named after, so the disguised and the plain value share one. None: as written."""

    @property
    def key(self) -> str:
        return self.value if self.normal is None else self.normal


class Detector:
    """The rules a `RedactConfig` selects, with its allow-list."""

    def __init__(self, config: RedactConfig | None = None) -> None:
        config = config or RedactConfig()
        self.config = config
        user = [Rule(r.name, r.label, r.pattern, description=r.description) for r in config.rules]
        self.rules: tuple[Rule, ...] = tuple(r for r in BUILTIN_RULES if r.name not in config.disable) + tuple(user)
        self.rank = {r: i for i, r in enumerate(self.rules)}
        self.swept = tuple(r for r in self.rules if r.sweep)
        self.groups = _prefilters(self.rules)
        """The rules' triggers and translated words as RE2 runs them, in groups (`_prefilters` below)."""
        self.prefilters = tuple(_joined(group) for group in self.groups)
        """Each group joined into one RE2 pass."""
        self._rules_of: dict[str, list[int]] = {}
        """The rules (their index) each trigger or translated words set off."""
        for i, rule in enumerate(self.rules):
            for part in (rule.trigger, rule.translated) if not rule.sweep else ():
                if part:
                    self._rules_of.setdefault(_after_escapes(part), []).append(i)
        self._swept = [i for i, rule in enumerate(self.rules) if rule.sweep]
        self._ruled = [(_joined(g), g) for g in (tuple(t for t in group if t in self._rules_of)
                                                 for group in self.groups) if g]
        """Each group's pass and its triggers that set off a rule (the normalizer's forms set off none)."""
        self.cache: dict[str, list[Finding]] | None = {}
        """Findings of texts seen before, clean ones too (None: off). Logs repeat texts a lot: chat-completion
        logs send the whole conversation again with every request, and system prompts, tool schemas and lookups
        recur across batches and files."""
        self._cached_chars = 0
        self._allowed_values = frozenset(config.allow.values)
        self._allowed = re.compile("|".join(f"(?:{p})" for p in config.allow.patterns)) if config.allow.patterns \
            else None

    def _scan(self, texts: list[bytes | None]) -> tuple[list[bool], list[list[Rule]]]:
        """For each text (UTF-8; None for null): whether it is a candidate, and the rules its triggers set off, with
        the sweep rules. A candidate is a text where some group's trigger matches, or a table's header names a
        context word (passes of their own: joined with the triggers they make RE2's automaton five times slower).
        Each group's joined pass reads every text once, and its set which of its triggers match there
        (`members_found`); the header passes read the texts no group matched."""
        found = _threads().map(lambda joined, group: members_found(texts, joined, group), self.prefilters, self.groups)
        candidate = [False] * len(texts)
        rows: list[set[int]] = [set(self._swept) for _ in texts]
        for hits in found:
            for row, trigger in hits:
                candidate[row] = True
                rows[row].update(self._rules_of.get(trigger, ()))
        rest = [row for row, (text, hit) in enumerate(zip(texts, candidate, strict=True)) if not hit and text]
        if rest:
            left = [texts[row] for row in rest]
            parts = [CELL_TRIGGERS[i::PASS_THREADS] for i in range(PASS_THREADS)]
            headed = np.logical_or.reduce(list(_threads().map(lambda part: any_match(left, part), parts)))
            for row in np.flatnonzero(headed):
                candidate[rest[row]] = True
        return candidate, [[self.rules[i] for i in sorted(row)] for row in rows]

    def find_column(self, column: pa.Array | pa.ChunkedArray) -> Iterator[tuple[int, str, list[Finding]]]:
        """(row, text, findings) for the rows of a string column where something was found, in row order."""
        yield from self.find_columns([column])[0]

    def find_columns(self, columns: list[pa.Array | pa.ChunkedArray]) -> list[list[tuple[int, str, list[Finding]]]]:
        """For each column, (row, text, findings) of its rows where something was found, in row order.

        The distinct texts of all the columns are read once (logs repeat system prompts, tool schemas and whole
        conversations: a hash pass in C++ costs far less than the RE2 passes it spares, and each RE2 pass
        compiles its pattern first). One RE2 pass over those with every trigger finds the candidates; a pass per
        rule over the candidates picks the rules to run on each; then the rules run in Python, and the texts
        with findings are looked up in each column again, in C++.
        """
        chunks = [c if pa.types.is_large_string(c.type) else pc.cast(c, pa.large_string(), memory_pool=POOL)
                  for column in columns for c in (column.chunks if isinstance(column, pa.ChunkedArray) else [column])]
        distinct = pc.unique(pa.chunked_array(chunks, pa.large_string()), memory_pool=POOL)
        hits = self._found(distinct)
        if not hits:
            return [[] for _ in columns]
        hit_texts = pa.array([t for t, _ in hits], pa.large_string())
        out = []
        for column in columns:
            where = pc.index_in(column, value_set=hit_texts.cast(column.type), memory_pool=POOL)
            rows = pc.indices_nonzero(pc.is_valid(where))
            out.append([(row, hits[hit][0], hits[hit][1])
                        for row, hit in zip(rows.to_pylist(), pc.take(where, rows, memory_pool=POOL).to_pylist(),
                                            strict=True)])
        return out

    def _found(self, distinct: pa.Array) -> list[tuple[str, list[Finding]]]:
        """(text, findings) of the distinct texts where something is found: those seen before from the cache,
        the others read now. Texts no trigger matched are remembered too, so that a text recurring in later
        batches and files (a system prompt, a tool schema, an id) is not read again."""
        hits: list[tuple[str, list[Finding]]] = []
        fresh = distinct
        if self.cache:
            texts = distinct.to_pylist()
            known = [self.cache.get(t) if t is not None else [] for t in texts]
            hits = [(t, k) for t, k in zip(texts, known, strict=True) if k and t is not None]
            fresh = pa.array([t for t, k in zip(texts, known, strict=True) if k is None], pa.large_string())
            if not len(fresh):
                return hits  # no RE2 pass at all: each would compile its pattern first (about 1 ms)
        texts = fresh.to_pylist()
        encoded = texts_of(fresh)
        candidate, triggered = self._scan(encoded)
        rest = [t for t, hit in zip(texts, candidate, strict=True) if not hit and t is not None]
        hit = [self._sweep_hit(t) for t in rest]
        swept = [t for t, h in zip(rest, hit, strict=True) if h]
        if self.cache is not None:
            for t, h in zip(rest, hit, strict=True):
                if not h:
                    self._remember(t, [])
        picked = [row for row, hit in enumerate(candidate) if hit]
        new = [texts[row] for row in picked] + swept
        sweeps = [self.rules[i] for i in self._swept]
        found = self._read(new, [encoded[row] for row in picked] + [t.encode() for t in swept],
                           [triggered[row] for row in picked] + [sweeps] * len(swept)) if new else []
        return hits + [(t, f) for t, f in zip(new, found, strict=True) if f]

    def _read(self, new: list[str], encoded: list[bytes], per_rule: list[list[Rule]]) -> list[list[Finding]]:
        """The findings of each of `new` (distinct candidates not seen before; `encoded`, their UTF-8; `per_rule`,
        the rules their triggers set off), remembered. The label-value pairs that structure ties together are read
        by the rules whose trigger matches the pair (RE2 over all the pairs at once): a rule none of them triggers is
        never compiled."""
        disguised = any_match(encoded, (TRIGGER,))
        norms = [normalize(t) if hit else None for t, hit in zip(new, disguised, strict=True)]
        normal = [n for n in norms if n is not None]
        per_rule_normal = iter(self._triggered([n.text.encode() for n in normal]))
        readings = [_readings(t, per_rule[j], norm, next(per_rule_normal) if norm is not None else [])
                    for j, (t, norm) in enumerate(zip(new, norms, strict=True))]
        pairs = list(dict.fromkeys(cell.read for rs in readings for r in rs for cell in r.cells))
        rules_of = dict(zip(pairs, self._triggered([pair.encode() for pair in pairs]), strict=True))
        done = [self._find(t, rs, rules_of) for t, rs in zip(new, readings, strict=True)]
        for t, found in zip(new, done, strict=True):
            self._remember(t, found)
        return done

    def _sweep_hit(self, text: str) -> bool:
        """Whether a sweep rule finds a value in a text no trigger matched (where it is read whole later)."""
        view = _JSON_BREAK.sub("\\\n", text) if "\\" in text else text
        return any((span := _value_span(rule, m)) is not None and self._keep(rule, view[span[0]:span[1]]) is not False
                   for rule in self.swept for m in rule.regex.finditer(view))

    def _triggered(self, texts: list[bytes]) -> list[list[Rule]]:
        """For each text (UTF-8), the rules whose trigger matches it, and the sweep rules. Each group's pass reads
        every text; a trigger of the group, only the texts the pass matched."""
        found = _threads().map(lambda ruled: members_found(texts, *ruled), self._ruled)
        rows: list[set[int]] = [set(self._swept) for _ in texts]
        for hits in found:
            for row, trigger in hits:
                rows[row].update(self._rules_of[trigger])
        return [[self.rules[i] for i in sorted(row)] for row in rows]

    def _remember(self, text: str, found: list[Finding]) -> None:
        if self.cache is None or len(text) > CACHE_TEXT_CHARS:
            return
        while self.cache and (len(self.cache) >= CACHE_ENTRIES or self._cached_chars + len(text) > CACHE_CHARS):
            oldest = next(iter(self.cache))
            del self.cache[oldest]
            self._cached_chars -= len(oldest)
        self.cache[text] = found
        self._cached_chars += len(text)

    def find(self, text: str) -> list[Finding]:
        """The findings in `text`, left to right, none overlapping (the longest wins, then the earliest)."""
        found = self.find_columns([pa.array([text], pa.large_string())])[0]
        return found[0][2] if found else []

    def _find(self, text: str, readings: list[_Reading], rules_of: dict[str, list[Rule]]) -> list[Finding]:
        found: list[Finding] = []
        for reading in readings:
            got = self._find_in(text, reading, rules_of)
            found += got if reading.norm is None else [f for f in got if not _joined_over(f, reading.norm.joins, found)]
        return _repeated(text, _non_overlapping(found))

    def _find_in(self, text: str, reading: _Reading, rules_of: dict[str, list[Rule]]) -> list[Finding]:
        """Findings of a reading's rules in it (the text, or its normalized form), as spans of `text`."""
        read, view, norm = reading.read, reading.view, reading.norm
        encoded = view.encode()
        spans = [(rule, span) for rule in reading.rules if may_match(rule.pattern, encoded)
                 for m in rule.regex.finditer(view) if (span := _value_span(rule, m)) is not None]
        matched = len(spans)
        spans += self._cell_spans(reading, rules_of)
        public = [span for rule, span in spans if self._public(rule, view[span[0]:span[1]])]
        found: list[Finding] = []
        for i, (rule, (start, end)) in enumerate(spans):
            if public and any(s < end and start < e for s, e in public):
                continue  # a public value is public whole: no rule takes a piece of it (`3782 822463` of a test card)
            start, end = _outside_escapes(read, start, end)
            kept = self._keep(rule, read[start:end]) if end > start else False
            if kept is False:
                if i < matched and (gap := _GRID_GAP.search(view, start, end)) is not None:
                    spans += _read_on(rule, view, gap.end())
                continue
            if kept is not True:  # the validator kept a prefix (an IBAN followed by more text)
                end = start + kept
            value = read[start:end]
            if norm is not None:
                start, end = _outside_escapes(text, *norm.original(start, end))
            found.append(Finding(rule, start, end, text[start:end], self.rank[rule],
                                 value if norm is not None else None))
        return found

    def _cell_spans(self, reading: _Reading, rules_of: dict[str, list[Rule]]) -> list[tuple[Rule, tuple[int, int]]]:
        """Matches in a reading's cells, as spans of its view: of the rules that the cell's `label: value` triggers,
        or that the whole text did (a trigger may need what only the text holds: a cookie's `NAME=`, a manifest's
        `kind: Secret`)."""
        spans = []
        seen: dict[str, list[tuple[Rule, tuple[int, int]]]] = {}  # a form's rows repeat label and value
        for cell in reading.cells:
            if cell.read not in seen:
                rules = sorted({*rules_of[cell.read], *reading.rules}, key=self.rank.__getitem__)
                seen[cell.read] = [(rule, span) for rule in rules for m in rule.regex.finditer(cell.read)
                                   if (span := _value_span(rule, m)) is not None and span[0] >= cell.lead
                                   and span[1] <= cell.lead + cell.size]
            spans += [(rule, (s + cell.shift, e + cell.shift)) for rule, (s, e) in seen[cell.read]]
        return spans

    def _public(self, rule: Rule, value: str) -> bool:
        """Whether a match is a value known to be no secret: the allow-list's, a publishable or documented example
        key, a documented placeholder of zeros and X, a providers' sandbox card number or documented secret key."""
        return value in self._allowed_values or self._allowed is not None and bool(self._allowed.fullmatch(value)) \
            or rule.label in _KEY_LABELS and _PUBLIC_VALUE.match(value) is not None \
            or rule.label in _FILLER_LABELS and _FILLER.fullmatch(value) is not None \
            or rule.label == "CARD" and v.digits_of(value) in v.PUBLISHED_TEST_CARDS \
            or value in v.PUBLISHED_EXAMPLE_KEYS

    def _keep(self, rule: Rule, value: str) -> bool | int:
        """False to drop a match, True to keep it, or the length of the prefix to keep."""
        if PLACEHOLDER.fullmatch(value) or PLACEHOLDER.search(value) and rule.label in ("PASSWORD", "SECRET"):
            return False
        if self._public(rule, value):
            return False
        # Validators see a JSON line break as whitespace of the same length, so a prefix length stays true.
        return rule.validator is None or rule.validator(_JSON_BREAK.sub("  ", value) if "\\" in value else value)


_COUNTED = re.compile(r"\{(?:(?:1[2-9]|[2-9]\d|\d{3,})(?:,\d*)?|\d*,(?:1[2-9]|[2-9]\d|\d{3,}))\}")
"""A counted repeat of 12 or more, as a length (`[A-Za-z0-9_-]{32}`) or a bound (`.{0,200}`): its automaton's
states multiply with the others'."""
LONE_TRIGGER = 4000
"""Characters of a trigger (a label's words in many languages) over which it runs in a pass of its own."""


def _threads() -> ThreadPoolExecutor:
    """This process's pass threads: a forked child (a worker pool's) starts its own, as the parent's threads did
    not come with it."""
    pid = os.getpid()
    if pid not in _executors:
        _executors[pid] = ThreadPoolExecutor(PASS_THREADS, thread_name_prefix="redact-re2")
    return _executors[pid]


def _prefilters(rules: tuple[Rule, ...]) -> tuple[tuple[str, ...], ...]:
    """The rules' triggers in groups, each joined into one RE2 pass, so that no pass's automaton outgrows its
    budget (past it RE2 builds and drops states as it reads: one pass then costs more than several). Apart:
    triggers with a counted repeat of 12 or more, triggers that open with a list of words in many languages
    (labels of phone numbers, passwords, keys), any trigger over `LONE_TRIGGER` characters, those of `OWN_PASS`
    (the last two groups split again by counted repeats), the normalizer's forms (other digits, marker lines,
    spoken digits), and the rules' translated label words."""
    base = list(dict.fromkeys(_after_escapes(r.trigger) for r in rules if not r.sweep and r.trigger))
    own = {_after_escapes(r.trigger) for r in rules if r.name in OWN_PASS and r.trigger}
    worded = {_after_escapes(r.trigger) for r in rules if r.name in WORD_TRIGGERED and r.trigger} - own
    lone = [t for t in base if len(t) > LONE_TRIGGER]
    first = [t for t in base if t not in worded and t not in own and t not in lone]
    translated = list(dict.fromkeys(_after_escapes(r.translated) for r in rules if r.translated))
    words = [t for t in base if t in worded and t not in lone]
    owned = [t for t in base if t in own and t not in lone]
    plain, counted = _by_count(first)
    parts = (plain + [TRIGGER_ESCAPES], counted, *_by_count(words), *_by_count(owned), [TRIGGER_FORMS], translated,
             *([t] for t in lone))
    return tuple(tuple(part) for part in parts if part)


def _joined(triggers: tuple[str, ...]) -> str:
    return "|".join(f"(?:{t})" for t in triggers)


def _by_count(triggers: list[str]) -> tuple[list[str], list[str]]:
    """`triggers` in two passes: those without a long counted repeat, and those with one."""
    counted = [t for t in triggers if _COUNTED.search(t)]
    return [t for t in triggers if t not in counted], counted


def _after_escapes(trigger: str) -> str:
    """A trigger whose word boundaries also hold after a JSON escape: RE2 reads the text as stored, where `\\nnet
    user` has no boundary before `net`; the rules read it with the escape as a line break."""
    return trigger.replace("\\b", "(?:\\b|\\\\[nrt])") if "\\b" in trigger else trigger


class _Cell(NamedTuple):
    """A value that structure ties to a label away from it (a table's cell, a form's field), read as
    `label: value`."""

    read: str
    lead: int
    """Characters of the label before the value in `read`."""
    size: int
    shift: int
    """What turns a span of `read` into one of the view."""


@dataclass(frozen=True, slots=True)
class _Reading:
    """One reading of a text: as written, or normalized (`norm`)."""

    read: str
    rules: list[Rule]
    """The rules whose trigger matched it."""
    norm: Normalized | None
    view: str
    """`read` as the rules see it (below, `_view`)."""
    cells: list[_Cell]


def _readings(text: str, rules: list[Rule], norm: Normalized | None, normal_rules: list[Rule]) -> list[_Reading]:
    """A text's readings: as written (unless it is quoted-printable, read only decoded), then normalized."""
    out = [] if norm is not None and norm.encoded else [_reading(text, rules, None)]
    return out + [_reading(norm.text, normal_rules, norm)] if norm is not None else out


def _reading(read: str, rules: list[Rule], norm: Normalized | None) -> _Reading:
    view = _view(read)
    return _Reading(read, rules, norm, view, _cells(view))


def _view(read: str) -> str:
    """A text as the rules read it, every offset kept. Inside JSON text a line break is `\\n`: matched as a
    backslash and a real line break, so a value right after it starts a word as it does after a line break. A CSV
    field's doubled quotes read as single ones; Markdown's bold around a label's colon reads as spaces
    (`**Key:** …`), and so do a bank statement's subfield codes (`^20Klucz API: …`)."""
    view = _JSON_BREAK.sub("\\\n", read) if "\\" in read else read
    if '""' in view:
        view = _CSV_QUOTED.sub(_csv_unquoted, view)
    if "**" in view or "__" in view:
        view = _BOLD_COLON.sub(lambda m: " " * len(m.group()), view)
    if ":86:" in view:
        view = _MT940_INFO.sub(lambda m: _MT940_SUBFIELD.sub("   ", m.group()), view)
    return view


def _cells(view: str) -> list[_Cell]:
    """The cells of tables in `view` (tracegym/redact/cells.py) and values whose label stands away from them
    (tracegym/redact/structure.py, and printed.py for tools' prints). A single word is read quoted, as its
    delimiters show it whole: a rule then takes one with symbols in it whole (`k#9v!q2@…`); words with spaces
    between stay unquoted (`see the vault` is no password)."""
    cells = labelled_cells(view, _cell_word) if "\n" in view else []
    away = labelled_values(view, _label_word) + printed.labelled(view, _label_word)
    out = []
    for label, start, end in cells + away:
        if view.startswith("{", start) and (inner := _VALUE_OBJECT.match(view, start, end)) is not None:
            start, end = inner.span(1)
        whole = not _SPACE_OR_QUOTE.search(view, start, end)
        lead, tail = (f'{label}: "', '"') if whole else (f"{label}: ", "")
        out.append(_Cell(lead + view[start:end] + tail, len(lead), end - start, start - len(lead)))
    return out


@functools.lru_cache(maxsize=1 << 16)
def _label_word(label: str) -> bool:
    return _names(_LABEL_WORD, label)


@functools.lru_cache(maxsize=1 << 16)
def _cell_word(label: str) -> bool:
    return _names(_CELL_WORD, label)


def _names(words: re.Pattern[str], label: str) -> bool:
    """Whether one of `words` stands in a label (a line's start before `:`, a column's name, a JSON key), RE2 ruling
    out most labels first: `re` tries the long list of words in many languages at every position of each."""
    return may_match(words.pattern, label.encode()) and words.search(label) is not None


def _csv_unquoted(field: re.Match[str]) -> str:
    """A CSV field's doubled quotes read as single ones, a space beside each to keep every offset: `""key"": ""v""`
    reads ` "key" :  "v" ` (the space before a quote that opens a string, after one that closes it, before the word
    a Hebrew acronym's quote stands in: `ת""ז` reads ` ת"ז`)."""
    inner = field.group(1)
    if '""' not in inner:
        return field.group()
    inner = _CSV_ACRONYM.sub(lambda m: f' {m.group(1)}"', inner)  # the word whole, the space before it
    return '"' + _CSV_OPENING.sub(' "', inner).replace('""', '" ') + '"'


def _read_on(rule: Rule, view: str, at: int) -> list[tuple[Rule, tuple[int, int]]]:
    """The rule's next match from `at` (after a gap inside a value it rejected), where its value starts there or
    later."""
    m = rule.regex.search(view, at - 1)
    span = _value_span(rule, m) if m is not None else None
    return [(rule, span)] if span is not None and span[0] >= at else []


def _value_span(rule: Rule, m: re.Match[str]) -> tuple[int, int] | None:
    """The span of a match's value (its group `v`, or all of it); None when the rule's `reject` finds the match
    is something else, or its `reject_label` finds the label names a digest or an id."""
    if rule.reject_regex is not None and rule.reject_regex.search(m.group()):
        return None
    if rule.sweep and rule.validator is not None and rule.validator(m.group("v")) is False:
        return None  # most of a sweep rule's matches are no value: its validator is cheaper than the label's check
    if "v" in m.re.groupindex:
        for name in _VALUE_GROUPS:
            if name in m.re.groupindex and m.start(name) >= 0:
                label = rule.reject_label_regex
                if label is not None and label.search(m.string, max(0, m.start() - rule.label_window), m.start(name)):
                    return None
                return m.span(name)
        return None
    return m.span()


def _outside_escapes(text: str, start: int, end: int) -> tuple[int, int]:
    """Move a span's start past an escape it begins inside (the `n` of `\\n`, the digits of `\\u00e9`) and drop a
    trailing backslash that escapes what follows."""
    if _escaped(text, start):
        start += 5 if text[start] == "u" else 1
    while end > start and text[end - 1] == "\\" and not _escaped(text, end - 1):
        end -= 1
    return start, end


def _escaped(text: str, i: int) -> bool:
    """Whether the character at `i` follows an odd run of backslashes."""
    n = 0
    while i - n - 1 >= 0 and text[i - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _joined_over(f: Finding, joins: tuple[tuple[int, int], ...], found: list[Finding]) -> bool:
    """Whether `f`, read across a marker line taken out, runs into a value read as written on the far side (a
    token repeated by a chunk's overlap: `…sig` | `[chunk next]` | `eyJ…`): two values, not one."""
    return any(f.start < s and e < f.end and any(e <= g.start < f.end for g in found) for s, e in joins)


def _non_overlapping(found: list[Finding]) -> list[Finding]:
    """Keep the highest-ranked of overlapping findings (rules come in rank order), then the longest; but a
    credential inside a longer one goes first (a cookie-shaped `name=value` cut at an `=` inside a token that a
    label's rule took whole: the rest of it would survive)."""
    if len(found) < 2:
        return found
    if len(found) <= _CONTAINMENT_CHECKED:
        found = [f for f in found if not _inside_a_longer_credential(f, found)]
    ranked = sorted(found, key=lambda f: (f.priority, -(f.end - f.start), f.start))
    # Kept findings are disjoint and non-empty, so in start order their ends are in order too: the one starting last
    # before `f` ends is the only one that can overlap it (a scan of all of them was quadratic: thousands of
    # findings in one hostile text).
    kept: list[Finding] = []
    starts: list[int] = []
    for f in ranked:
        at = bisect.bisect_left(starts, f.end)
        if at == 0 or kept[at - 1].end <= f.start:
            kept.insert(at, f)
            starts.insert(at, f.start)
    return kept


def _repeated(text: str, found: list[Finding]) -> list[Finding]:
    """`found` with each value's other occurrences in the text (a number a record holds twice, once beside its
    label and once in a fixed-width field with none): the same string is the same secret. A value shorter than
    `_REPEAT_ALONE` counts only where it stands alone (no letter or digit beside it), not inside a longer word.
    A value of several words counts also where its words stand one to a JSON string (a speech-to-text result's
    word list beside its transcript: Deepgram's `words`, AWS Transcribe's `items`, Whisper's `words`)."""
    if not found or len(found) > _CONTAINMENT_CHECKED:
        return found
    extra: list[Finding] = []
    for f in found:
        at = text.find(f.value)
        while at >= 0:
            end = at + len(f.value)
            if at != f.start and (len(f.value) >= _REPEAT_ALONE or _alone(text, at, end)) \
                    and all(end <= g.start or at >= g.end for g in found + extra):
                extra.append(Finding(f.rule, at, end, f.value, f.priority, f.normal))
            at = text.find(f.value, end)
        if " " in f.value.strip() and '"' in text:
            extra += [Finding(f.rule, m.start(1), m.end(1), m.group(1), f.priority, f.key)
                      for m in _word_items(text, f.value)
                      if all(m.end(1) <= g.start or m.start(1) >= g.end for g in found + extra)]
    return sorted(found + extra, key=lambda f: f.start) if extra else found


def _word_items(text: str, value: str) -> Iterator[re.Match[str]]:
    """The words of `value` (3 characters or more) where each is a JSON string of its own, a punctuation mark
    after it at most."""
    words = {w for w in re.split(r"\s+", value) if len(w) >= 3}
    if not words:
        return iter(())
    alternation = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.finditer(rf'(?<=")({alternation})[.,;:!?]?(?=\\?")', text)


def _alone(text: str, start: int, end: int) -> bool:
    return (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum())


def _inside_a_longer_credential(f: Finding, found: list[Finding]) -> bool:
    """Whether a longer credential finding holds `f` and runs on past it by more of the key (4+ letters or
    digits: not a trailing dot or an invisible character that a normalized reading took in)."""
    return f.rule.label in _CREDENTIALS and any(
        g.rule.label in _CREDENTIALS and g.start <= f.start and f.end <= g.end
        and sum(ch.isalnum() for ch in g.value[:f.start - g.start] + g.value[f.end - g.start:]) >= 4
        for g in found)
