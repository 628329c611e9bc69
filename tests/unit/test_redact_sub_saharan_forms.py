"""Numbers and secrets as Sub-Saharan agriculture and health programmes write them (the fifty-seventh corpus's
causes): MSISDNs with the country code and no `+`, wallets named alone before their owner's number, the phone
words of Luganda and Xhosa, the labels of passwords, keys, tokens and setup keys in Igbo, Wolof, Yoruba,
Kinyarwanda, Swahili and French; and what is none of them: Flutterwave's public keys, Africa's Talking's object
ids, a line named toll-free, a role whose name opens with a word for key. Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


# ---- an MSISDN of Ghana, Uganda, Tanzania, Rwanda, Ethiopia, Zambia, Senegal, Côte d'Ivoire and Cameroon ----

@pytest.mark.parametrize("number", [
    "233245813307", "256772914630", "255754308216", "250788402917", "251911638402", "260977512846",
    "221771845203", "2250708413296", "237677214583",
])
def test_a_number_with_its_country_code_and_no_plus(number: str) -> None:
    assert _values(f"2025-03-04T10:11:12Z INFO [payout] phone={number} status=200") == [number]
    assert _values(json.dumps({"phone_number": number})) == [number]


@pytest.mark.parametrize("number", ["2332458133071", "25677291463", "2376772145831", "22507084132961"])
def test_no_number_whose_length_is_not_its_plan(number: str) -> None:
    assert _values(f"phone: {number}") == []


# ---- a wallet named alone before its owner's number ----

@pytest.mark.parametrize(("text", "number"), [
    ("MoMo : 677 21 45 83", "677 21 45 83"),
    ("Wave 77 184 52 03", "77 184 52 03"),
    ("Wave ........ 76 218 40 95", "76 218 40 95"),
    ("Orange Money 0708413296", "0708413296"),
    ("Airtel Money: 260977512846", "260977512846"),
    ("M-Pesa namba 0754308216", "0754308216"),
])
def test_a_wallet_named_alone_before_a_mobile_number(text: str, number: str) -> None:
    assert _values(text) == [number]


@pytest.mark.parametrize(("label", "number"), [("MoMo", "0244581330"), ("Orange Money", "2250708413296"),
                                               ("M-Pesa number", "0712845093")])
def test_a_wallet_naming_a_sibling_json_value(label: str, number: str) -> None:
    text = json.dumps({"attributes": [{"attribute": "kLq2mPz8RtW", "displayName": label, "value": number}]})
    assert _values(text) == [number]


@pytest.mark.parametrize("text", [
    "Wave 2024-2025 rollout", "MoMo 25000 XAF", "M-Pesa 20240315", "Orange Money 12345678",
    "the wave 2 cohort 4711 2025",
])
def test_no_wallet_number_that_is_no_mobile(text: str) -> None:
    assert _values(text) == []


# ---- the phone words of Luganda and Xhosa ----

@pytest.mark.parametrize(("text", "number"), [
    ("Yogera ku essimu 0772914630", "0772914630"),
    ("ennamba y'essimu: 0701458236", "0701458236"),
    ("inombolo yefowuni 0821234567", "0821234567"),
])
def test_a_phone_word_of_luganda_or_xhosa(text: str, number: str) -> None:
    assert _values(text) == [number]


# ---- a password's, a key's, a token's and a setup key's label in the programmes' languages ----

@pytest.mark.parametrize(("text", "secret"), [
    ("okwuntughe: Ofe&8812owerri", "Ofe&8812owerri"),
    ("[04/02/2025, 06:44] Field officer: okwuntughe ube-ri-kola-mmiri71", "ube-ri-kola-mmiri71"),
    ("baatu jàll: #vT9kLm-3QpRz7Wx!ae", "#vT9kLm-3QpRz7Wx!ae"),
    ("kọkọrọ aṣírí: 4f0c1e9a7b2d38e65a1c0f9b7d3e2a18", "4f0c1e9a7b2d38e65a1c0f9b7d3e2a18"),
    ("kọkọrọ aṣírí ........ 4f0c1e9a7b2d38e65a1c0f9b7d3e2a18c0ffee12", "4f0c1e9a7b2d38e65a1c0f9b7d3e2a18c0ffee12"),
    ("urufunguzo rw'ibanga: 9b3e71c04fa28d56e1b7c93a0d4f2e86", "9b3e71c04fa28d56e1b7c93a0d4f2e86"),
    ("tokeni ya kufikia Q7mZ2pLx9RtV4kNc8WbJ3fHs6Yd1", "Q7mZ2pLx9RtV4kNc8WbJ3fHs6Yd1"),
    ('clé_secrète = "4f0c1e9a7b2d38e65a1c0f9b7d3e2a18-1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"',
     "4f0c1e9a7b2d38e65a1c0f9b7d3e2a18-1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"),
])
def test_a_secret_after_its_label_in_igbo_wolof_yoruba_kinyarwanda_swahili_french(text: str, secret: str) -> None:
    assert _values(text) == [secret]


@pytest.mark.parametrize(("text", "seed"), [
    ("ufunguo wa 2FA: JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP", "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"),
    ("ufunguo wa 2FA NB2W45DFOIZA4R3L", "NB2W45DFOIZA4R3L"),
    ("ufunguo wa 2FA: mfrg gzdf mztw q2lk", "mfrg gzdf mztw q2lk"),
])
def test_a_setup_key_after_the_swahili_words_for_a_2fa_key(text: str, seed: str) -> None:
    assert _values(text) == [seed]


@pytest.mark.parametrize("text", ["okwuntughe: ${DB_PASSWORD}", "kọkọrọ aṣírí: <your-key>", "ibanga ryacu"])
def test_no_secret_after_those_labels_without_a_value(text: str) -> None:
    assert _values(text) == []


# ---- what is no secret and no person's number ----

@pytest.mark.parametrize("text", [
    '{"public_key": "FLWPUBK-3f9a0c7e21b84d56a0e9c3b7f1d2e4a8-X"}',
    "FLW_PUBLIC_KEY=FLWPUBK_TEST-3f9a0c7e21b84d56a0e9c3b7f1d2e4a8-X",
    "2025-06-01T08:00:00Z USSD sessionId=ATUid_7c1e9a40b3f25d86e0a4c7b19f3d2e58 serviceCode=*384*21# text=1*2",
    "session,phoneNumber\nATUid_7c1e9a40b3f25d86e0a4c7b19f3d2e58,+254711223344",
    "messageId=ATXid_0b8e4f71c2a95d36e7f0a1c4b9d82e53 status=Success",
])
def test_no_secret_in_a_public_key_or_an_africas_talking_id(text: str) -> None:
    assert [f for f in DETECTOR.find(text) if f.rule.label != "PHONE"] == []


def test_a_flutterwave_secret_key_is_still_one() -> None:
    key = "FLWSECK-3f9a0c7e21b84d56a0e9c3b7f1d2e4a8-X"
    assert _values(f"FLW_SECRET_KEY={key}") == [key]


@pytest.mark.parametrize("text", [
    "site,helpline\nNakuru,toll-free line 0800 721 455\n",
    '{"helpline": "freephone number 0800 721 455"}',
])
def test_no_phone_in_a_line_named_free_to_call(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text", [
    "[11/03/2025, 10:02] Warehouse clerk: MpesaReceiptNumber=T_5182730469 ResultCode=0",
    "Cooperative secretary: Xk29fLq8ZpT3mWv7RnB4cY6hJd1s",
])
def test_no_key_after_a_role_whose_name_opens_with_a_word_for_key(text: str) -> None:
    assert _values(text) == []


def test_a_key_after_the_french_plural_is_still_one() -> None:
    assert _values("les clés : Xk29fLq8ZpT3mWv7RnB4cY6hJd1s") == ["Xk29fLq8ZpT3mWv7RnB4cY6hJd1s"]
