"""A planted corpus: real trace files with secrets and personal data written into them, and where each went.

Used by benchmarks/redact.py and the tests to measure recall and precision on real text around the values. Each
kind gets valid values (Luhn-checked cards, mod-97 IBANs, well-formed JWTs and PEM blocks), planted in user
messages, inside the JSON strings of tool-call arguments and in tool results; a share is split over lines (a card
or IBAN broken at a group, a label on one line and the value on the next, PEM blocks always). Deterministic for a
seed. Only τ-bench (OpenAI messages with tool calls) and mini-swe-agent (user turns and observations) files are
planted; the others are copied as they are.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

KINDS = ("openai_key", "anthropic_key", "aws_access_key", "github_token", "slack_token", "stripe_key",
         "google_api_key", "jwt", "bearer_token", "private_key", "connection_string", "password", "secret",
         "email", "phone", "card", "iban", "ip", "date_of_birth")
STRUCTURED = ("openai_key", "anthropic_key", "aws_access_key", "github_token", "slack_token", "stripe_key",
              "google_api_key", "jwt", "bearer_token", "private_key", "connection_string", "email", "phone", "card",
              "iban")
"""The kinds the recall target (99%) is about: keys, tokens, cards, e-mails, phones, IBANs, private keys,
connection strings."""
_ALNUM = string.ascii_letters + string.digits


@dataclass(frozen=True)
class Planted:
    kind: str
    text: str
    """What was written, label and all."""
    secret: str
    """The part that must not survive redaction."""
    place: str
    """user | arguments | result"""
    split: bool
    file: str


def _rand(rng: random.Random, n: int, alphabet: str = _ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _luhn_complete(rng: random.Random, prefix: str, length: int) -> str:
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for d in string.digits:
        total = 0
        for i, ch in enumerate(reversed(body + d)):
            x = int(ch)
            if i % 2:
                x = x * 2 - 9 if x > 4 else x * 2
            total += x
        if total % 10 == 0:
            return body + d
    raise AssertionError("unreachable")


def _iban(rng: random.Random) -> str:
    country, length = rng.choice([("DE", 22), ("GB", 22), ("FR", 27), ("NL", 18), ("ES", 24), ("IT", 27)])
    if country == "GB":
        bban = "".join(rng.choice(string.ascii_uppercase) for _ in range(4)) + _rand(rng, 14, string.digits)
    elif country == "NL":
        bban = "".join(rng.choice(string.ascii_uppercase) for _ in range(4)) + _rand(rng, 10, string.digits)
    elif country == "IT":
        bban = rng.choice(string.ascii_uppercase) + _rand(rng, 10, string.digits) + _rand(rng, 12, string.digits)
    else:
        bban = _rand(rng, length - 4, string.digits)
    numeric = "".join(str(int(ch, 36)) for ch in bban + country + "00")
    return f"{country}{98 - int(numeric) % 97:02d}{bban}"


def _grouped(value: str, size: int = 4, sep: str = " ") -> str:
    return sep.join(value[i:i + size] for i in range(0, len(value), size))


def _b64url(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def make_value(kind: str, rng: random.Random, split: bool) -> tuple[str, str]:
    """(text to write, the secret part) for one planted value."""
    brk = "\n" if split else " "
    if kind == "openai_key":
        key = "sk-proj-" + _rand(rng, 48, _ALNUM + "_-")
        return (f"OPENAI_API_KEY:\n{key}" if split else f"my OpenAI key is {key}"), key
    if kind == "anthropic_key":
        key = "sk-ant-api03-" + _rand(rng, 86, _ALNUM + "_-")
        return (f"export ANTHROPIC_API_KEY=\\\n{key}" if split else f"ANTHROPIC_API_KEY={key}"), key
    if kind == "aws_access_key":
        key = "AKIA" + _rand(rng, 16, string.ascii_uppercase + string.digits)
        return f"aws_access_key_id ={brk}{key}", key
    if kind == "github_token":
        key = "ghp_" + _rand(rng, 36)
        return f"git remote set-url origin https://{key}@github.com/acme/app.git", key
    if kind == "slack_token":
        key = f"xoxb-{_rand(rng, 12, string.digits)}-{_rand(rng, 13, string.digits)}-{_rand(rng, 24)}"
        return f"slack token:{brk}{key}", key
    if kind == "stripe_key":
        key = "sk_live_" + _rand(rng, 24)
        return f"stripe.api_key = '{key}'", key
    if kind == "google_api_key":
        key = "AIza" + _rand(rng, 35, _ALNUM + "_-")
        return f"maps key{brk}{key}", key
    if kind == "jwt":
        token = ".".join([_b64url({"alg": "HS256", "typ": "JWT"}),
                          _b64url({"sub": _rand(rng, 8, string.digits), "name": "x", "iat": rng.randrange(10**9)}),
                          _rand(rng, 43, _ALNUM + "_-")])
        return f"session cookie:{brk}{token}", token
    if kind == "bearer_token":
        token = _rand(rng, 40, _ALNUM + "._-") + _rand(rng, 2, string.digits)
        return f"curl -H 'Authorization: Bearer {token}' https://api.acme.test/v1/me", token
    if kind == "private_key":
        kind_name = rng.choice(["RSA ", "EC ", "OPENSSH ", ""])
        body = base64.b64encode(rng.randbytes(rng.randrange(120, 400))).decode()
        lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
        block = f"-----BEGIN {kind_name}PRIVATE KEY-----\n{lines}\n-----END {kind_name}PRIVATE KEY-----"
        return f"here is the key file:\n{block}\n", block
    if kind == "connection_string":
        password = _rand(rng, rng.randrange(10, 20), _ALNUM + "!#%^*")
        scheme = rng.choice(["postgres", "postgresql", "mysql", "mongodb+srv", "redis", "amqp"])
        user = rng.choice(["admin", "app", "svc_orders", ""])
        return f"DATABASE_URL={scheme}://{user}:{password}@db{rng.randrange(99)}.internal.acme.test:5432/prod", \
            password
    if kind == "password":
        password = _rand(rng, 6, string.ascii_letters) + _rand(rng, 3, string.digits) + rng.choice("!@#$%&")
        form = rng.choice(["my password is {p}", "password: {p}", "login with pwd={p}"])
        return form.format(p=password), password
    if kind == "secret":
        secret = _rand(rng, 32)
        return rng.choice(["client_secret = \"{s}\"", "SECRET_KEY={s}", "api_key: {s}"]).format(s=secret), secret
    if kind == "email":
        email = f"{rng.choice(['jane', 'li', 'omar', 'ana', 'k'])}.{_rand(rng, 6, string.ascii_lowercase)}" \
                f"{rng.randrange(100)}@{rng.choice(['gmail.com', 'acme-corp.io', 'mail.example.org', 'web.de'])}"
        return (f"reach me at\n{email}" if split else f"my email is {email}, thanks"), email
    if kind == "phone":
        number = rng.choice([
            f"+1 {rng.randrange(201, 989)} {rng.randrange(200, 999)} {rng.randrange(1000, 9999)}",
            f"+44 20 {rng.randrange(1000, 9999)} {rng.randrange(1000, 9999)}",
            f"+49 30 {rng.randrange(1000000, 9999999)}", f"+33 6 {rng.randrange(10, 99)} {rng.randrange(10, 99)} "
                                                          f"{rng.randrange(10, 99)} {rng.randrange(10, 99)}",
            f"+91-{rng.randrange(70000, 99999)}-{rng.randrange(10000, 99999)}",
            f"({rng.randrange(201, 989)}) {rng.randrange(200, 999)}-{rng.randrange(1000, 9999)}"])
        return (f"call me back on\n{number}" if split else f"my phone number is {number}"), number
    if kind == "card":
        prefix, length = rng.choice([("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("34", 15), ("37", 15),
                                     ("6011", 16)])
        number = _luhn_complete(rng, prefix, length)
        shown = _grouped(number, sep=rng.choice([" ", "-"])) if length == 16 and rng.random() < 0.7 else number
        if split and " " in shown:
            shown = shown.replace(" ", "\n", 1)
        return f"card number {shown} exp 09/27", shown
    if kind == "iban":
        iban = _iban(rng)
        shown = _grouped(iban) if rng.random() < 0.6 else iban
        if split and " " in shown:
            shown = shown.replace(" ", "\n", 2).replace("\n", " ", 1)
        return f"please refund to IBAN {shown}", shown
    if kind == "ip":
        ip = rng.choice([f"{rng.choice([34, 52, 81, 104, 151, 185, 203])}.{rng.randrange(256)}."
                         f"{rng.randrange(256)}.{rng.randrange(1, 255)}",
                         f"2a00:{rng.randrange(4096, 65535):x}:{rng.randrange(4096, 65535):x}::"
                         f"{rng.randrange(1, 4096):x}"])
        return f"connection from {ip} refused", ip
    if kind == "date_of_birth":
        y, m, d = rng.randrange(1940, 2005), rng.randrange(1, 13), rng.randrange(1, 29)
        months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                  "November", "December"]
        date = rng.choice([f"{y}-{m:02d}-{d:02d}", f"{months[m - 1]} {d}, {y}", f"{d:02d}/{m:02d}/{y}"])
        label = rng.choice(["I was born on ", "DOB: ", "date of birth\n" if split else "date of birth: "])
        return label + date, date
    raise ValueError(f"unknown kind {kind}")


def _slots(runs: list[dict[str, Any]], messages_of: Any) -> dict[str, list[tuple[int, int]]]:
    """(run, message) positions where a value can go, per place."""
    slots: dict[str, list[tuple[int, int]]] = {"user": [], "arguments": [], "result": []}
    for r, run in enumerate(runs):
        messages = messages_of(run)
        for i, m in enumerate(messages):
            if m.get("role") == "user" and isinstance(m.get("content"), str):
                slots["result" if i > 1 and messages is not None and _is_observation(m) else "user"].append((r, i))
            elif m.get("role") == "tool" and isinstance(m.get("content"), str):
                slots["result"].append((r, i))
            elif m.get("role") == "assistant" and m.get("tool_calls"):
                slots["arguments"].append((r, i))
    return slots


def _is_observation(message: dict[str, Any]) -> bool:
    """mini-swe-agent hands command output back as a user turn."""
    return message["content"].lstrip().startswith("<returncode>")


def _put(message: dict[str, Any], place: str, text: str, rng: random.Random) -> None:
    if place != "arguments":
        message["content"] = f"{message['content']}\n{text}" if rng.random() < 0.5 else f"{text}\n{message['content']}"
        return
    call = rng.choice(message["tool_calls"])
    args = json.loads(call["function"]["arguments"] or "{}")
    strings = [k for k, v in args.items() if isinstance(v, str)]
    if strings and rng.random() < 0.5:
        key = rng.choice(strings)
        args[key] = f"{args[key]} {text}"
    else:
        args["note"] = f"{args['note']} {text}" if isinstance(args.get("note"), str) else text
    call["function"]["arguments"] = json.dumps(args)


def plant(source: Path, out: Path, per_kind: int = 300, seed: int = 0, split_share: float = 0.25) -> list[Planted]:
    """Copy the trace files under `source` to `out`, planting `per_kind` values of every kind; return them."""
    rng = random.Random(seed)
    files: dict[Path, tuple[Any, Any]] = {}
    for path in sorted(source.rglob("*")):
        if not path.is_file():
            continue
        target = out / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.name.endswith(".traj.json"):
            files[target] = (json.loads(path.read_text()), "mini")
        elif path.parent.name == "tau-bench" and path.suffix == ".json":
            files[target] = (json.loads(path.read_text()), "tau")
        else:
            target.write_bytes(path.read_bytes())
    slots: dict[str, list[tuple[Path, int, int]]] = {"user": [], "arguments": [], "result": []}
    for target, (data, fmt) in files.items():
        runs = data if fmt == "tau" else [data]
        found = _slots(runs, lambda run, fmt=fmt: run["traj"] if fmt == "tau" else run["messages"])
        for place, positions in found.items():
            slots[place].extend((target, r, i) for r, i in positions)
    planted = []
    for kind in KINDS:
        for n in range(per_kind):
            place = ("user", "arguments", "result")[n % 3]
            split = rng.random() < split_share
            text, secret = make_value(kind, rng, split)
            target, r, i = rng.choice(slots[place])
            data, fmt = files[target]
            run = data[r] if fmt == "tau" else data
            _put((run["traj"] if fmt == "tau" else run["messages"])[i], place, text, rng)
            planted.append(Planted(kind, text, secret, place, split, str(target)))
    for target, (data, _) in files.items():
        target.write_text(json.dumps(data), encoding="utf-8")
    return planted


def save(planted: list[Planted], path: Path) -> None:
    path.write_text(json.dumps([asdict(p) for p in planted]), encoding="utf-8")
