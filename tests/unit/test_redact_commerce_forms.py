"""Values as commerce, marketing and logistics records hold them (issue 40, the thirty-fourth and thirty-fifth
corpora's causes): a card with its expiry after it, recovery codes after a dash, a password on the line after its
user, Google refresh tokens, JSON and headers inside a CSV field, a base64 key ending its line beside a longer
one, phone numbers after the verbs that ask for a call, a passport's machine-readable line whole. Values written
for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("please charge 2223 0000 4841 0010 09/29 for the renewal", "2223 0000 4841 0010"),
    ("Guarantee: DC 3056 930902 5904 11/27", "3056 930902 5904"),
    ("Guarantee: VI 4111111111111111 03/28", "4111111111111111"),
    ("card 5412-7534-5678-9010-0427 on file", "5412-7534-5678-9010")])
def test_a_card_followed_by_its_expiry(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize(("text", "value"), [
    ("Zendesk backup code — 7kq2mx9wpd", "7kq2mx9wpd"),
    ("Storefront 2FA recovery code: QZWKT-MBRXP", "QZWKT-MBRXP")])
def test_a_recovery_code_after_a_dash_or_as_two_groups_of_capitals(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values("recovery code: RESET-CODES") == []
    assert _values("backup codes — see the vault") == []


@pytest.mark.parametrize("text", [
    "Landing page builder login\nuser: studio-ops\npass: Kestrel?dune5521#",
    json.dumps({"note": "CMS login\nuser: studio-ops\npass: Kestrel?dune5521#"})])
def test_a_password_on_the_line_after_its_user(text: str) -> None:
    assert _values(text) == ["Kestrel?dune5521#"]
    assert _values("user: bob\npass: true") == []


def test_a_google_refresh_token_anywhere() -> None:
    token = "1//0gXk3Lw9Qz7RtYp2Nm5Hj8Vc4Bd6Fs1Ae0Ku3Oi9Py7Tr5We2Sa4Dx6Cv8Bn1Mq3Lz"
    assert _values(f"here's the grant for the sync: {token}") == [token]


@pytest.mark.parametrize(("text", "value"), [
    ('Record ID,Notes\n8812,"""segment"": {""writeKey"": ""9f3c2a7be14d08c65a1e7d2b93f40c8e""}"\n',
     "9f3c2a7be14d08c65a1e7d2b93f40c8e"),
    ('id,notes\nSO-1,"{""mfa"": {""type"": ""totp"", ""secret"": ""KZXW6YTBOI3DEMRQ""}}"\n', "KZXW6YTBOI3DEMRQ"),
    ('id,notes\nSO-2,"Authorization: Digest username=""picker"", realm=""wms"", nonce=""0a4f9b"", '
     'response=""6d1f0c9e8b7a65f4e3d2c1b0a9f8e7d6"""\n', "6d1f0c9e8b7a65f4e3d2c1b0a9f8e7d6")])
def test_json_and_headers_inside_a_csv_field(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_a_base64_key_ending_a_long_line_is_no_quoted_printable_break() -> None:
    key = "7Hq2LmN9pRs4TvW6xYz8AbC1dEf3GhJ5kLm7NpQ9rSt="
    text = (f"Endpoint=sb://orders-bus.servicebus.windows.net/;SharedAccessKeyName=Sender;SharedAccessKey={key}\n"
            "Next line of the log")
    assert _values(text) == [key]


@pytest.mark.parametrize(("text", "value"), [
    ("Ring the guest on 07700900123 before noon", "07700900123"),
    ("Please text the driver on 07700900456", "07700900456"),
    ("Rappeler le client au 0612345678", "0612345678"),
    ("Direct line: 020 7946 0321", "020 7946 0321"),
    ("Guest contact 09876543210 (WhatsApp)", "09876543210"),
    (json.dumps({"note": "भ्रमणध्वनी - 09876543210"}), "09876543210")])
def test_a_phone_after_the_words_that_ask_for_a_call(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values("HubSpot contact 620600585 merged") == []
    assert _values("ring buffer of 4096 entries") == []


def test_a_passports_machine_readable_line_whole_and_no_iban_inside_it() -> None:
    line = "BI93094189GBR7704271M3204212<<<<<<<<<<<<<<06"
    assert _values(f"MRZ:\nP<GBRDOE<<JANE<<<<<<<<<<<<<<<<<<<<<<<<<<<<<\n{line}") == [line]
    assert _values("IBAN DE89370400440532013000 paid") == ["DE89370400440532013000"]
