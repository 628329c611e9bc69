"""Secrets and numbers as mobile-money, remittance and lending services print them (the forty-ninth corpus's
causes): wallet and card PINs after their label in the wallets' languages. Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "pin"), [
    ("Customer says her M-PESA PIN: 7319", "7319"),
    ("UPI PIN 604281", "604281"),
    ("reset done, (MPIN) 2857", "2857"),
    ("PIN ya M-PESA — 9162", "9162"),
    ("(PIN ya MoMo) 3048", "3048"),
    ("kart şifre (PIN) — 5127", "5127"),
    ("Votre code secret : 8264", "8264"),
    ("namba ya siri 4719", "4719"),
    ("lambar sirri: 6082", "6082"),
    ("यूपीआई पिन: 4085", "4085"),
    ("एमपिन — ७३१९", "७३१९"),
    ("(বিকাশ পিন) 38271", "38271"),
    ("পিন নম্বর: ৫১৮৩", "৫১৮৩"),
    ("پن کوڈ: ۲۷۴۱", "۲۷۴۱"),
    ("الرقم السري: 9047", "9047"),
    ("קוד סודי: 6630", "6630"),
    ("የሚስጥር ቁጥር 2958", "2958"),
    ("رمز دوم: 81940273", "81940273"),
])
def test_a_pin_after_its_label(text: str, pin: str) -> None:
    assert _values(text) == [pin]


def test_a_pin_inside_a_json_note() -> None:
    text = json.dumps({"note": "telebirr PIN — 5820", "amount": 300})
    assert _values(text) == ["5820"]


@pytest.mark.parametrize("text", [
    "12 MG Road, Bengaluru, PIN 560034",
    "Pincode: 411014",
    "PIN code 110001",
    "PIN: 1234",
    "PIN: 0000",
    "PIN: ****",
    "pin the version to 2.4.1",
    "GPIO_PIN = 4821",
    "the PIN expires 2025",
    "#pin-pad-key-7",
    "Till 426673, Paybill 888880",
])
def test_no_pin_without_a_pin_label_and_its_digits(text: str) -> None:
    assert _values(text) == []


_RZP_ID = "rzp_live_Q7wErT5yUi3oPa"
_RZP_SECRET = "m4Nb7Vc2Xz9Lk6Jh3Gf8Ds1A"


@pytest.mark.parametrize("text", [
    f'client = razorpay.Client(auth=("{_RZP_ID}", "{_RZP_SECRET}"))',
    f"key id {_RZP_ID}, secret {_RZP_SECRET}",
    f"कुंजी {_RZP_ID} / सीक्रेट {_RZP_SECRET}",
    json.dumps({"note": f"creds {_RZP_ID} {_RZP_SECRET}"}),
])
def test_a_razorpay_key_secret_beside_its_key_id(text: str) -> None:
    assert _RZP_SECRET in _values(text)
    assert _RZP_ID not in _values(text)


@pytest.mark.parametrize("text", [
    f"{_RZP_ID} order_Mx4Nc8Vb2Zq7Lp",
    f"key {_RZP_ID}, merchantnameshownatcheckout",
])
def test_no_razorpay_secret_without_one(text: str) -> None:
    assert _values(text) == []


_CREDENTIAL = ("Tz8" + "kQ2vLx9+Wm4Rb7/Nc1Ye6Hs3Pa5Ud0Gf" * 10)[:340] + "ZA=="


def test_a_daraja_security_credential() -> None:
    body = {"InitiatorName": "b2c_initiator", "SecurityCredential": _CREDENTIAL, "CommandID": "SalaryPayment"}
    assert _values(json.dumps(body)) == [_CREDENTIAL]
    assert _values(json.dumps({"message": json.dumps(body)})) == [_CREDENTIAL]
    assert _values(f"SecurityCredential={_CREDENTIAL}") == [_CREDENTIAL]


def test_no_security_credential_when_only_a_placeholder() -> None:
    assert _values('{"SecurityCredential": "<ENCRYPTED_INITIATOR_PASSWORD>"}') == []


@pytest.mark.parametrize(("text", "phone"), [
    ("mobile: 923451287609", "923451287609"),
    ("موبائل نمبر 923017764213", "923017764213"),
    ("923128840571 (mobile)", "923128840571"),
    ("phone: 8801819273645", "8801819273645"),
])
def test_a_pakistani_or_bangladeshi_number_with_its_country_code_and_no_plus(text: str, phone: str) -> None:
    assert _values(text) == [phone]


@pytest.mark.parametrize("text", ["mobile app build 923", "phone: 92345", "order 923451287609"])
def test_no_country_code_number_without_a_phone_label_or_its_length(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "phone"), [
    ("M-PESA number: 0712 845 093", "0712 845 093"),
    ("namba ya M-PESA — 254722615038", "254722615038"),
    ("bKash number 01819273645", "01819273645"),
    ("নগদ নম্বর: 01557398214", "01557398214"),
    ("Easypaisa account — 0345-7712094", "0345-7712094"),
    ("JazzCash نمبر: 923008815274", "923008815274"),
    ("0722615038 (M-PESA number)", "0722615038"),
    ("0722615038 (nambari ya simu)", "0722615038"),
    ("923451287609 (د موبایل شمېره)", "923451287609"),
    ("nọmba ekwentị: 08031457729", "08031457729"),
])
def test_a_wallet_number_or_a_phone_label_in_parentheses(text: str, phone: str) -> None:
    assert _values(text) == [phone]


@pytest.mark.parametrize("text", [
    "M-PESA Till 426673",
    "Lipa na M-PESA Paybill 522533, account 7741",
    "M-PESA receipt QKT4ZP81AB",
    "20240101 (not a phone)",
    "the wave number 12000",
])
def test_no_wallet_number_without_a_number_label(text: str) -> None:
    assert _values(text) == []


_SUBSCRIPTION = "5e0a9c3f71d24b86a0f3c9e2d7b14a68"


@pytest.mark.parametrize("text", [
    f"MOMO_DISBURSEMENT_PRIMARY_KEY={_SUBSCRIPTION}",
    f"APIM_SECONDARY_KEY: '{_SUBSCRIPTION}'",
])
def test_a_subscription_key_in_its_variable(text: str) -> None:
    assert _values(text) == [_SUBSCRIPTION]


@pytest.mark.parametrize("text", [f'"primary_key": "{_SUBSCRIPTION}"', "ORDERS_PRIMARY_KEY=order_id"])
def test_no_subscription_key_for_a_record_key(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "seed"), [
    ("2FA setup key — k3vq m7xa pw2t hzno", "k3vq m7xa pw2t hzno"),
    ("Authenticator secret — JBQW 4XZ3 MFRG K6TA", "JBQW 4XZ3 MFRG K6TA"),
    ("Your key: d4tq wmzr 7kxe lpa2", "d4tq wmzr 7kxe lpa2"),
])
def test_a_setup_key_after_a_dash_or_the_word_key(text: str, seed: str) -> None:
    assert _values(text) == [seed]


@pytest.mark.parametrize("text", ["Your key: this that will work", "setup key — see the docs", "key: abcd"])
def test_no_setup_key_in_words(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text", [
    "پټنوم: Tq7#vLm2Rz!k",
    "furaha sirta — Hargeisa@2019!",
    "iphasiwedi: Durban#1987?",
    "ጊዜያዊ የይለፍ ቃልዎ: Xk4_pQ9!wLz",
])
def test_a_password_after_its_label_in_pashto_somali_zulu_amharic(text: str) -> None:
    assert len(_values(text)) == 1
    assert _values(text)[0] in text.split(" ")[-1]


def test_a_gateways_integrity_salt() -> None:
    salt = "Vq3Lw8Nz2Xk7Rm4Tp9Bs6Hd1"
    assert _values(f"Integrity Salt: {salt}") == [salt]
    assert _values(json.dumps({"merchant_salt": salt})) == [salt]
    assert _values("Integrity Salt: required") == []


@pytest.mark.parametrize(("text", "value"), [
    ("Teudat Zehut: 314159260", "314159260"),
    ('| ת"ז | 314159260 |', "314159260"),
    ('date,memo\n2024-02-10,"ת""ז: 314159260"\n', "314159260"),  # CSV doubles the acronym's quote
    ('id,note\n7,"דו""ח שנתי, ת""ז 314159260"\n', "314159260"),
    ("Emirates ID 784-1987-0271828-3", "784-1987-0271828-3"),
    ("رقم الهوية الإماراتية: 784198702718283", "784198702718283"),
    ("Iqama No.: 2490153380", "2490153380"),
    ("رقم الهوية الوطنية: ١٠٥٧٧٢١٥٦٣", "١٠٥٧٧٢١٥٦٣"),
    ("کد ملی: 007-359184-1", "007-359184-1"),
    ("national code ۰۰۷۳۵۹۱۸۴۱", "۰۰۷۳۵۹۱۸۴۱"),
    ("আধার নম্বর: 2345 6789 0124", "2345 6789 0124"),
    ("inombolo kamazisi: 8001015009087", "8001015009087"),
])
def test_an_id_of_israel_the_uae_saudi_arabia_iran_and_labels_in_more_languages(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "Teudat Zehut: 314159261",
    "Emirates ID 784-1987-0271828-4",
    "Iqama No.: 3490153380",
    "کد ملی: 0073591842",
    "کد ملی: 1111111111",
])
def test_no_id_that_fails_its_check(text: str) -> None:
    assert _values(text) == []
