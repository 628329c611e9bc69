"""detect-secrets' plugins and presidio-analyzer's pattern recognizers on the planted corpus of
benchmarks/redact.py: recall per kind at the detector level and MB/s. Run by redact.py --compare with an
interpreter that has both installed (`pip install detect-secrets==1.5.0 presidio-analyzer==2.2.366`); no spaCy
model is loaded: the recognizers are used directly, with the context words they declare.

    python benchmarks/redact_compare.py CORPUS.json
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Callable

Finder = Callable[[str], list[str]]


def detect_secrets_finder() -> Finder:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    def find(text: str) -> list[str]:
        with default_settings():
            return [s.secret_value or "" for line in text.splitlines() for s in scan_line(line)]

    return find


def presidio_finder() -> Finder:
    import tldextract

    # The e-mail recognizer calls tldextract, which would fetch the public-suffix list: use its bundled copy.
    tldextract.tldextract.TLD_EXTRACTOR = tldextract.TLDExtract(suffix_list_urls=())
    from presidio_analyzer.predefined_recognizers import (
        CreditCardRecognizer,
        DateRecognizer,
        EmailRecognizer,
        IbanRecognizer,
        IpRecognizer,
        PhoneRecognizer,
    )

    recognizers = [CreditCardRecognizer(), EmailRecognizer(), IbanRecognizer(), IpRecognizer(), PhoneRecognizer(),
                   DateRecognizer()]

    def find(text: str) -> list[str]:
        out = []
        for r in recognizers:
            for res in r.analyze(text, r.supported_entities, None):
                if res.score >= 0.3:
                    out.append(text[res.start:res.end])
        return out

    return find


def measure(name: str, find: Finder, strings: list[str], planted: list[dict]) -> None:
    rows = {p["row"] for p in planted}
    start = time.perf_counter()
    found = {i: find(s) for i, s in enumerate(strings)}
    seconds = time.perf_counter() - start
    hit, total = Counter(), Counter(p["kind"] for p in planted)
    for p in planted:
        secret = p["secret"].strip()
        if any(secret in v or v in secret and len(v) >= len(secret) * 0.8 for v in found.get(p["row"], [])):
            hit[p["kind"]] += 1
    mb = sum(len(s) for s in strings) / 1e6
    print(f"{name}: {mb / seconds:.1f} MB/s over {mb:.1f} MB ({len(rows)} strings)")
    print("  recall " + ", ".join(f"{k} {hit[k] / total[k]:.2f}" for k in total))


def main() -> None:
    corpus = json.loads(open(sys.argv[1]).read())
    strings, planted = corpus["strings"], corpus["planted"]
    measure("detect-secrets 1.5.0 (default plugins)", detect_secrets_finder(), strings, planted)
    measure("presidio-analyzer 2.2.366 (pattern recognizers)", presidio_finder(), strings, planted)


if __name__ == "__main__":
    main()
