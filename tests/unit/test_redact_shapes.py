"""Values no label names, found by their shape alone: random keys and generated passwords in any carrier and
language, and the random-looking strings that are no secret (ids, digests, base64 of data, code)."""

from __future__ import annotations

import base64

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
KEY = "q7RvN2xKp9WmZ4tLc8YbH3sJd6FgA1eUo5Xi"  # 36 random base62 characters
KEY64 = "Tz0mW8_rKq3vL-9xNc2PbY7hJs5dFa1gUe4oRi6tZwM"  # base64url of 32 random bytes
LICENCE = "K7QX2M-9PLW4R-Z3TB8N-6HVC1Y-D5JF0G"
PASSWORDS = ["Vq8#mTz2Lp!w", "Harbor!7302Lynx", "x9K$eW4r%Tq1", "Pz3@vN7qLw"]


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize("text", [
    f"Ufunguo wako mpya ni {KEY} usiushiriki",                      # Swahili prose, no word the rules know
    f"| svc-ingest | {KEY} | 2026-03-01 |",                          # a table cell under no header
    f'{{"zugangsdaten": "{KEY}", "aktiv": true}}',                    # JSON under an unknown key
    f"curl -H 'X-Tenant-Auth: {KEY}' https://api.example.net/v2",   # a custom header
    f"I logged in with {KEY64}, then listed the buckets.",          # a model's turn
    f"licence {LICENCE} activated on host-7",                        # upper-case groups with digits
])
def test_a_random_key_is_found_without_a_label(text: str) -> None:
    assert [v for v in _values(text) if v in (KEY, KEY64, LICENCE)], text


@pytest.mark.parametrize("password", PASSWORDS)
@pytest.mark.parametrize("carrier", [
    "ISA*00*          *01*{}*ZZ*SENDER01",   # an X12 interchange's element
    "35=A|49=BANK|553=ops|9554={}|",          # a FIX field the rules do not name
    "Hasło do panelu brzmi {} (zmień po logowaniu)",
    "textbox \"Clave\" [ref=e14]: {}",       # a browser agent's accessibility snapshot
    "{}",
])
def test_a_generated_password_is_found_without_a_label(carrier: str, password: str) -> None:
    text = carrier.format(password)
    assert password in _values(text), text


SSH_PUBLIC = "AAAAC3NzaC1lZDI1NTE5AAAAIKIpZPXSwAYGQyxviRmPcNKNHGU3gbcFxijdSWCWD66D"
PEM_LINES = "\n".join(["-----BEGIN CERTIFICATE-----",
                       "JTOz9vnzSsTB1CgLos6zAn2CKZWgu9OxP+CKGQiRJQ11jlpPToJk1xGqMjNGgDDR",
                       "xcTls8XG+6lppQPpxrGzPD5upV4Ikc9dcQUygzv3pGC8f3JItii0B/dYZ3efav3A",
                       "P0p7wLiR5PY9F3I7tr2BRY9WH9wiRrZh7iQ17XxKbRj98S6z", "-----END CERTIFICATE-----"])


@pytest.mark.parametrize("text", [
    '{"tool_call_id": "call_fJuazlMUN5fQDQ73G6XSpYpx", "id": "gen-1763510516-q2qLQlCJZ4rY0grQoaXv"}',
    "chatcmpl-Aw30O6Ka8n1X3F6F7YUh91NxXBE0y finished",
    "from sphinx.deprecation import RemovedInSphinx40Warning, RemovedInSphinx50Warning",
    base64.b64encode(b"last-applied-configuration v4, do not edit").decode(),  # base64 of text
    '"body": {"data": "U2VlIHlvdSBhdCA1IHBtLCBicmluZyB0aGUgY2FrZSE"}',  # Gmail's API: base64url, unpadded
    f"ssh-ed25519 {SSH_PUBLIC} ops@bastion",
    PEM_LINES,
    '<script integrity="sha384-fe0MMd2hamY2VBDnFwKHWmr7dQXu1waZkjAaVcC7jN3U26Y1sAvIG0dWfJAAaU3P">',
    f'"request_id": "{KEY}"',
    f"salt: {KEY64}",
    "submit 'HTB{t3h_FuTUr3_15_bR1ghT_1_H0p3_y0uR3_W34r1nG_5h4d35!}'",
    "6f1c2d3e-4a5b-4c7d-8e9f-0a1b2c3d4e5f 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "enable secret 9 $9$nhEmQVczB7dqsO$X.HsgL6x1il0RxkOSSvyQYwucySCt7qFm4v7pqCxkKM",  # password hashes
    "admin:$2b$12$R9hXcIPz0giURNNX3kh2OPST9PgBkqquziSs7KIUgO2t0jWMUWab",
    "user:$7$101$q7RvN2xKp9WmZ4tL$c8YbH3sJd6FgA1eUo5XiTz0mW8rKq3vL9xNc2PbY7hJs5dFa1gUe4oRi6tZwMx==",
])
def test_random_looking_strings_that_are_no_key_stay(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text", [
    "root@Host01:~# ls", "see utils.py#L45 and guide.md#Setup2", "=SUM(Sheet2!A1:B9)", "q=Hello%20World1",
    "**Step1!** done", "test_x[cols6-at$-include6-None] PASSED", "p3rl_6_iz_EVEN_BETTER!!1", "x = 2.0*Point2D(a)",
    "sk_live_****4vHE", "mail Bob.Smith1!@corp.example.com",
])
def test_code_markup_and_masks_are_no_generated_password(text: str) -> None:
    assert [f.rule.name for f in DETECTOR.find(text) if f.rule.name == "generated_password"] == [], text
