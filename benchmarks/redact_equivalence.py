"""Does a change to the redaction engine lose anything? Findings of two trees over every corpus text, compared.

A change meant to make detection faster (a trigger pass, a cache, a reader that runs less often) must find what
the engine found before. `record` runs this tree's detector, as ingest batches it (`Detector.find_columns`, no
cache), over every text and near miss of the corpora in benchmarks/ and writes each text's findings; `compare`
reads two such files and counts the texts where the second covers fewer characters than the first (coverage: a
character inside some finding), by the rules that covered them. Run `record` in a worktree of each commit:

    PYTHONPATH=$PWD python benchmarks/redact_equivalence.py record /tmp/before.json   # in the old tree
    PYTHONPATH=$PWD python benchmarks/redact_equivalence.py record /tmp/after.json    # in the new tree
    python benchmarks/redact_equivalence.py compare /tmp/before.json /tmp/after.json

The corpora's texts are what each tree's benchmarks/ generates: record both files from the same corpus files (a
corpus added in between is a text the old file lacks, counted as gained, never as lost). `compare`'s last line is
one JSON object: {"texts_before", "texts_after", "texts_losing_coverage", "texts_gaining_coverage",
"lost_by_rule", "gained_by_rule"}.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BATCH = 4000
"""Texts per `find_columns` call: batches as ingest hands them over, so that the trigger passes run as they do there."""

Findings = dict[str, list[tuple[str, int, int]]]
"""sha1 of a text -> (rule, start, end) of each finding in it; texts with none are left out."""


def corpus_texts() -> list[str]:
    """Every case's text and every near miss of the corpora in benchmarks/, each once, in a stable order."""
    texts: list[str] = []
    for path in sorted((ROOT / "benchmarks").glob("redact_*.py")):
        module = importlib.import_module(f"benchmarks.{path.stem}")
        if hasattr(module, "generate"):  # every corpus's generate() takes no argument or has defaults
            texts += [case.text for case in module.generate()]
        if hasattr(module, "generate_negatives"):
            texts += [text for _, text in module.generate_negatives()]
    return list(dict.fromkeys(texts))


def _batches(texts: list[str]) -> Iterator[list[str]]:
    for i in range(0, len(texts), BATCH):
        yield texts[i:i + BATCH]


def record(out: Path) -> None:
    """This tree's findings over every corpus text, written to `out`."""
    from tracegym.redact.detect import Detector

    texts = corpus_texts()
    detector = Detector()
    detector.cache = None  # each text read afresh, as the first batch of an ingest reads it
    found: Findings = {}
    start = time.perf_counter()
    for batch in _batches(texts):
        for _, text, findings in detector.find_columns([pa.array(batch, pa.large_string())])[0]:
            found[hashlib.sha1(text.encode()).hexdigest()] = [(f.rule.name, f.start, f.end) for f in findings]
    out.write_text(json.dumps({"texts": len(texts), "findings": found}))
    print(f"{len(texts)} texts, {len(found)} with findings, {time.perf_counter() - start:.0f} s -> {out}")


def _covered(findings: list[tuple[str, int, int]]) -> set[int]:
    return {i for _, start, end in findings for i in range(start, end)}


def compare(before: dict, after: dict) -> dict[str, object]:
    """Texts whose covered characters shrink or grow from `before` to `after`, and the rules behind the change."""
    a: Findings = before["findings"]
    b: Findings = after["findings"]
    lost, gained = Counter(), Counter()
    losing = gaining = 0
    for key in a.keys() | b.keys():
        old, new = _covered(a.get(key, [])), _covered(b.get(key, []))
        if old - new:
            losing += 1
            lost.update(rule for rule, start, end in a.get(key, []) if set(range(start, end)) - new)
        if new - old:
            gaining += 1
            gained.update(rule for rule, start, end in b.get(key, []) if set(range(start, end)) - old)
    return {"texts_before": before["texts"], "texts_after": after["texts"], "texts_losing_coverage": losing,
            "texts_gaining_coverage": gaining, "lost_by_rule": dict(lost.most_common()),
            "gained_by_rule": dict(gained.most_common())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("record", help="write this tree's findings").add_argument("out", type=Path)
    cmp = sub.add_parser("compare", help="texts where the second file covers less than the first")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        record(args.out)
        return
    result = compare(json.loads(args.before.read_text()), json.loads(args.after.read_text()))
    print(f"texts losing coverage: {result['texts_losing_coverage']} {result['lost_by_rule']}")
    print(f"texts gaining coverage: {result['texts_gaining_coverage']} {result['gained_by_rule']}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
