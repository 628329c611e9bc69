"""Catastrophic backtracking in redaction's regexes: every compiled pattern of the tracegym.redact modules (their
globals, and the rules' patterns, rejects and label rejects) run over adversarial texts of 2, 8 and 32 KB as the
package runs it (`finditer` to exhaustion; `fullmatch` for a pattern only ever fullmatched, `match` from where the
last match ended for one only matched at a position), and the growth exponent of its time between sizes (log
of the time ratio over log of the size ratio: 1 is linear, 2 quadratic). Then `Detector().find`, the public
entry point, over the worst texts.

The families are written from how backtracking blows up: long runs of one character of each class a pattern
repeats (a quantifier over a class, nested or side by side with another over the same class, splits a run in
many ways), prefixes that nearly match repeated (a label then separators with no value: each repetition starts
a match that runs far before failing), and each pattern's own literal words repeated with near-miss tails.

    PYTHONPATH=$PWD nice -n 19 python benchmarks/redact_redos.py [--cap 3] [--only NAME]

Times are CPU seconds of this thread; a run that passes `--cap` seconds is stopped (the time is then a lower
bound). The last line is one JSON object: patterns, families, worst_exponent, worst, over_1_5 (the pairs growing
faster than n^1.5 or over 1 s at 32 KB) and detector_worst_s_per_mb.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import math
import pkgutil
import re
import re._parser as sre_parse  # the parser `re` compiles with: leading literals of a pattern
import resource
import signal
import time
from collections.abc import Callable, Iterator

import tracegym.redact
from tracegym.redact.rules import Rule

SIZES = (2_048, 8_192, 32_768)
SKIP_S = 0.25
"""A time past which the larger sizes are not run (their growth is told from the sizes before)."""
QUICK_S = 0.0003
"""A time at 8 KB below which 32 KB is not run: quadratic growth from it would stay under `FLOOR_S`."""
FLOOR_S = 0.005
"""Times below this at the larger size are too small to tell growth from noise (a preempted run, a cache miss):
their exponent is not counted; the smaller time is read as at least `FLOOR_S / 100`."""
_RUN_CHARS = {"space": " ", "tab": "\t", "newline": "\n", "digit": "7", "letter": "a", "upper": "A", "under": "_",
              "dash": "-", "dot": ".", "dquote": '"', "squote": "'", "backslash": "\\", "equals": "=", "colon": ":",
              "at": "@", "percent": "%", "slash": "/", "plus": "+", "lbrace": "{", "lt": "<", "pipe": "|",
              "comma": ",", "hash": "#", "nbsp": "\u00a0", "cjk": "密"}
_REPEATS = {
    "blank_lines": "    \n", "blank_lines_tab": " \t \n", "crlf": "\r\n", "escaped_newline": "\\n",
    "space_newline": " \\n ", "python_blank_lines": "def f(x):\n    y = x\n    \n        \n",
    "yaml_key_blank": "key:\n  \n", "yaml_deep": "a:\n  b:\n    c:\n      ", "label_colon": "password: ",
    "label_equals": "password=", "label_is": "the password is ", "label_json": '"password": ', "kv_json": '"k": "k": ',
    "api_key_colon": "api_key: ", "token_words": "token token ", "at_chain": "a@a", "email_near": "a.b@c.d@",
    "phone_open": "+1 (", "phone_digits": "1 2 3 ", "digit_groups": "1234 5678 ", "dashed_digits": "12-34-",
    "dotted_digits": "1.2.", "begin_pem": "-----BEGIN", "pem_body_near": "-----BEGIN RSA PRIVATE KEY-----\nQUJD",
    "brace_open": "{", "brace_kv": '{"a":', "bracket_open": "[", "paren_open": "(", "quote_word": '"a',
    "url_near": "https://a:", "scheme_near": "postgres://u:", "tag_open": "<a ", "xml_open": "<password>",
    "php_dump": '["a"]=>\n', "go_field": "{A:b ", "cookie_pairs": "a=1; ", "query_pairs": "&a=", "escape_u": "\\u00",
    "percent_hex": "%4", "qp_soft": "=3D=\n", "hex_run": "deadbeef", "base64_run": "QUJDRA+/", "b64_pem": "LS0tLS1",
    "word_space": "ab ", "pem_cut": "-----BEGIN RSA PRIVATE KEY-----\t",
    "word_tab_gap": "ab  \t", "dash_words": "-a -b --c ", "flag_pass": "--pass ",
    "insert_into": "insert into t (a) values ", "sql_quote": "'a'", "csv_row": "a,b,\"c\",", "md_table": "| a | b |\n",
    "label_newline": "Password:\n", "label_dash": "Password - ", "mixed_sep": " -./", "unicode_label": "密码是 ",
}
_TAILS = {"space": " ", "colon": ": ", "equals": "=", "newline": "\n", "word": "a1", "blank_line": "  \n"}


def patterns() -> dict[str, re.Pattern[str]]:
    """Every compiled pattern of the tracegym.redact modules, by `module.NAME` (a dict's or a tuple's entries with
    their key, a rule's pattern as `rules.NAME#i` with `.reject`/`.reject_label`); a pattern imported into another
    module is named after the module that defines it."""
    found: dict[int, tuple[str, re.Pattern[str]]] = {}
    for module in _modules():
        source = inspect.getsource(module)
        for name, value in vars(module).items():
            for label, pattern in _compiled(name, value):
                defined = re.search(rf"^{re.escape(name)}\b", source, re.MULTILINE) is not None
                if id(pattern) not in found or defined:
                    found[id(pattern)] = (f"{module.__name__.rsplit('.', 1)[-1]}.{label}", pattern)
    return dict(sorted(found.values()))


def _modules() -> Iterator[object]:
    for info in pkgutil.iter_modules(tracegym.redact.__path__):
        yield importlib.import_module(f"tracegym.redact.{info.name}")


def _compiled(name: str, value: object) -> Iterator[tuple[str, re.Pattern[str]]]:
    if isinstance(value, re.Pattern):
        yield name, value
    elif isinstance(value, Rule):
        yield from _rule_patterns(name, value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, re.Pattern):
                yield f"{name}[{key!r}]", item
    elif isinstance(value, tuple) and value and all(isinstance(r, Rule) for r in value):
        for i, rule in enumerate(value):
            yield from _rule_patterns(f"{rule.name}#{i}", rule)


def _rule_patterns(label: str, rule: Rule) -> Iterator[tuple[str, re.Pattern[str]]]:
    yield label, rule.regex
    if rule.reject_regex is not None:
        yield f"{label}.reject", rule.reject_regex
    if rule.reject_label_regex is not None:
        yield f"{label}.reject_label", rule.reject_label_regex


def families() -> dict[str, str]:
    """The adversarial unit texts shared by every pattern, each repeated to a size."""
    out = {f"run_{name}": ch for name, ch in _RUN_CHARS.items()}
    return out | _REPEATS


def own_families(pattern: re.Pattern[str]) -> dict[str, str]:
    """A pattern's own literal words (those it opens with, and its longer literal runs) each with near-miss tails."""
    words = list(dict.fromkeys(w for w in _literals(pattern) if len(w.strip()) >= 2))[:4]
    return {f"own[{w!r}]+{tail}": w + text for w in words for tail, text in _TAILS.items()}


def _literals(pattern: re.Pattern[str]) -> list[str]:
    try:
        parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    except re.error:
        return []
    leading = _leading(list(parsed))
    runs: list[str] = []
    _runs(list(parsed), runs)
    return leading + sorted(runs, key=len, reverse=True)[:2]


def _leading(items: list[tuple[object, object]]) -> list[str]:
    """The literal prefixes a parsed pattern opens with (one per alternative of a leading branch)."""
    word = ""
    for op, av in items:
        if op is sre_parse.LITERAL:
            word += chr(av)  # type: ignore[arg-type]
        elif op is sre_parse.AT and not word:
            continue
        elif op is sre_parse.SUBPATTERN and not word:
            return _leading(list(av[3]))  # type: ignore[index]
        elif op is sre_parse.BRANCH and not word:
            return [w for alt in av[1][:3] for w in _leading(list(alt))]  # type: ignore[index]
        else:
            break
    return [word] if word else []


def _runs(items: list[tuple[object, object]], out: list[str]) -> None:
    """The runs of literal characters anywhere in a parsed pattern, into `out`."""
    word = ""
    for op, av in items:
        if op is sre_parse.LITERAL:
            word += chr(av)  # type: ignore[arg-type]
            continue
        if len(word) >= 3:
            out.append(word)
        word = ""
        if op is sre_parse.SUBPATTERN:
            _runs(list(av[3]), out)  # type: ignore[index]
        elif op is sre_parse.BRANCH:
            for alt in av[1][:3]:  # type: ignore[index]
                _runs(list(alt), out)
        elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT):
            _runs(list(av[2]), out)  # type: ignore[index]
    if len(word) >= 3:
        out.append(word)


def sized(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


class _Capped(Exception):
    pass


def _raise_capped(*_: object) -> None:
    raise _Capped


def cpu_time(run: Callable[[], object], cap: float) -> tuple[float, bool]:
    """CPU seconds `run` takes (the least of a few runs when it is quick), and whether it passed `cap` and was
    stopped (`re` checks for signals as it matches)."""
    best, total = math.inf, 0.0
    old = signal.signal(signal.SIGVTALRM, _raise_capped)
    try:
        for _ in range(3):
            if total > 0.005:
                break
            start = time.thread_time()
            signal.setitimer(signal.ITIMER_VIRTUAL, cap)
            try:
                run()
            except _Capped:
                return cap, True
            finally:
                signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            spent = time.thread_time() - start
            best, total = min(best, spent), total + spent
    finally:
        signal.signal(signal.SIGVTALRM, old)
    return best, False


def exponent(small: float, large: float, ratio: float) -> float | None:
    """The growth exponent from `small` to `large` seconds over a size `ratio`; None when too quick to tell."""
    if large < FLOOR_S:
        return None
    return math.log(large / max(small, FLOOR_S / 100)) / math.log(ratio)


def probe(name: str, read: Callable[[str], object], family: str, unit: str, cap: float) -> dict[str, object]:
    """Times of `read` (a pattern run as the package runs it) over `unit` repeated to each size, and the growth
    exponents."""
    times: list[float] = []
    capped = False
    for size in SIZES:
        text = sized(unit, size)
        spent, capped = cpu_time(lambda t=text: read(t), cap)
        times.append(spent)
        if capped or spent > SKIP_S or size == SIZES[1] and spent < QUICK_S:
            break  # steep enough to tell from the sizes read so far, or too quick at 8 KB to grow to anything
    times += [math.inf] * (len(SIZES) - len(times))
    grow = [exponent(a, b, SIZES[i + 1] / SIZES[i]) for i, (a, b) in enumerate(zip(times, times[1:], strict=False))
            if math.isfinite(b)]
    known = [g for g in grow if g is not None]  # when capped, the last time is the cap: a lower bound
    worst = max(known) if known else None
    return {"pattern": name, "family": family, "times": times, "exponent": worst, "capped": capped}


def uses(name: str) -> set[str]:
    """How the package calls a module's pattern (`fullmatch`, `match`, `search`, ...); a rule's runs with
    `finditer` (tracegym/redact/detect.py)."""
    module, _, short = name.partition(".")
    if module == "rules":
        return {"finditer"}
    short = short.split("[", 1)[0]
    called = re.compile(rf"\b{re.escape(short)}(?:\[[^\]\n]*\])?\.(\w+)\(([^()]*\)?)")
    return {m.group(1) + ("_from" if m.group(1) == "match" and "," in m.group(2) else "")
            for path in tracegym.redact.__path__ for info in pkgutil.iter_modules([path])
            for m in called.finditer(open(f"{path}/{info.name}.py", encoding="utf-8").read())}


def runner(pattern: re.Pattern[str], called: set[str]) -> Callable[[str], object]:
    """The pattern run over a whole text as the package calls it: `fullmatch` or `match` at the start where that is
    all it does (on a value or a label), `match` from where the last match ended where it matches from a position
    (the callers' loops over fields and items), else `finditer` to exhaustion."""
    if called and called <= {"fullmatch", "match"}:
        return lambda text: (pattern.fullmatch(text), pattern.match(text))
    if called and called <= {"fullmatch", "match", "match_from"}:
        return lambda text: _matched_in_turn(pattern, text)
    return lambda text: sum(1 for _ in pattern.finditer(text))


def _matched_in_turn(pattern: re.Pattern[str], text: str) -> None:
    at = 0
    while at <= len(text):
        m = pattern.match(text, at)
        at = (m.end() if m is not None else at) + 1


def run(cap: float, only: str | None) -> list[dict[str, object]]:
    shared = families()
    rows = []
    for name, pattern in patterns().items():
        if only and not any(part in name for part in only.split(",")):
            continue
        read = runner(pattern, uses(name))
        for family, unit in (shared | own_families(pattern)).items():
            rows.append(row := probe(name, read, family, unit, cap))
            if _steep(row):
                print(f"{name}/{family}: exponent {row['exponent'] or 0:.2f}, times "
                      f"{', '.join(f'{t:.4f}' for t in row['times'])} s{' (capped)' if row['capped'] else ''}",
                      flush=True)
    return rows


def _steep(row: dict[str, object]) -> bool:
    """Growing faster than n^1.5, or over 1 s at 32 KB."""
    return (row["exponent"] or 0) > 1.5 or _at_largest(row) > 1.0  # type: ignore[operator]


def detector_per_mb(rows: list[dict[str, object]], cap: float, top: int = 8) -> tuple[float, str]:
    """The most CPU seconds per MB `Detector().find` takes over the worst families at 32 KB, bare and after a
    label that lets every trigger-gated reader run."""
    from tracegym.redact.detect import Detector

    units = families() | {r["family"]: _unit_of(r) for r in rows if str(r["family"]).startswith("own")}
    ranked = sorted(rows, key=lambda r: -_at_largest(r))
    worst_units = list(dict.fromkeys(str(r["family"]) for r in ranked))[:top]
    worst, where = 0.0, ""
    for family in worst_units:
        for lead in ("", "password: hunter2x9\napi_key:\n"):
            text = lead + sized(units[family], SIZES[-1])
            detector = Detector()
            detector.cache = None
            spent, _ = cpu_time(lambda t=text, d=detector: d.find(t), cap * 10)
            per_mb = spent / (len(text.encode()) / 1e6)
            if per_mb > worst:
                worst, where = per_mb, family + (" (labelled)" if lead else "")
    return worst, where


def _unit_of(row: dict[str, object]) -> str:
    pattern = patterns()[str(row["pattern"])]
    return own_families(pattern)[str(row["family"])]


def _at_largest(row: dict[str, object]) -> float:
    times = [t for t in row["times"] if math.isfinite(t)]  # type: ignore[attr-defined]
    return times[-1] * (4 ** (len(SIZES) - len(times))) if times else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=1.0, help="CPU seconds after which one run is stopped")
    parser.add_argument("--only", help="probe only the patterns whose name holds one of these (comma-separated)")
    parser.add_argument("--no-detector", action="store_true", help="skip the Detector().find measure")
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_CPU, (3_600, 3_600))  # a hang guard for the whole run
    rows = run(args.cap, args.only)
    steep = [r for r in rows if _steep(r)]
    top = max(rows, key=lambda r: r["exponent"] or 0)
    slowest = sorted(rows, key=lambda r: -_at_largest(r))[:10]
    for r in slowest:
        print(f"slowest: {r['pattern']}/{r['family']}: {_at_largest(r):.4f} s at 32 KB, exponent {r['exponent']}")
    per_mb, where = (0.0, "") if args.no_detector else detector_per_mb(rows, args.cap)
    if where:
        print(f"detector worst: {where}: {per_mb:.2f} s/MB")
    print(json.dumps({
        "patterns": len({r["pattern"] for r in rows}), "families": len({r["family"] for r in rows}),
        "worst_exponent": round(top["exponent"] or 0, 2), "worst": f"{top['pattern']}/{top['family']}",
        "over_1_5": sorted({f"{r['pattern']}/{r['family']}" for r in steep}),
        "detector_worst_s_per_mb": round(per_mb, 3),
    }))


if __name__ == "__main__":
    main()
