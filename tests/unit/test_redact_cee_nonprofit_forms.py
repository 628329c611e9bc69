"""Secrets and ids as nonprofits, clubs and event organisers in Central and Eastern Europe and Central Asia write
them (the fifty-first corpus's causes): two-factor recovery codes under Baltic, Bulgarian, Georgian and Armenian
labels, a Python client's basic credentials, Przelewy24's and PayU's signing keys, the region's national ids after
their labels, Kazakh and Mongolian words for key, authenticator secrets after `Klíč 2FA`. Values written for these
tests."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "code"), [
    ("Rezerves kodi: 3c8e1-f04a2", "3c8e1-f04a2"),
    ("Резервни кодове: 5102 7736", "5102 7736"),
    ("резервен код - 7h2k-pq4m", "7h2k-pq4m"),
    ("Atsarginiai kodai: 90b1d-4e7ca", "90b1d-4e7ca"),
    ("VARUKOOD: 6631 0482", "6631 0482"),
    ("Taastekood: r5tw-8kxa", "r5tw-8kxa"),
    ("სარეზერვო კოდები: 2f9c4-a7b01", "2f9c4-a7b01"),
    ("Պահուստային կոդ: 4418 9027", "4418 9027")])
def test_a_recovery_code_under_a_regional_label(text: str, code: str) -> None:
    assert code in _values(text)


@pytest.mark.parametrize("text", [
    "Rezerves kods: nav",
    "Varukood: 2024-05-17",
    "Резервен код: 0000 0000",
    "Atsarginis kodas yra jūsų paskyroje"])
def test_a_regional_recovery_label_without_a_code_is_left(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "secret"), [
    ('resp = requests.post(api, auth=("kasjer", "Morwa2021!"), json=body)', "Morwa2021!"),
    ("client = httpx.Client(auth = ('sync', 'pR7#vLx2Qe'))", "pR7#vLx2Qe"),
    ('{"cell": "requests.get(u, auth=(\\"bot\\", \\"Łąka_7fKp2\\"))"}', "Łąka_7fKp2"),
    ("session.auth = HTTPBasicAuth('sklep', 'Topola.Brzoza88')", "Topola.Brzoza88"),
    ('aiohttp.BasicAuth("crm", "Dnipro_xqvRTz")', "Dnipro_xqvRTz")])
def test_the_password_of_a_python_clients_credentials(text: str, secret: str) -> None:
    assert secret in _values(text)


@pytest.mark.parametrize("text", [
    "requests.get(url, auth=(user, password))",
    'requests.get(url, auth=("user", "password"))',
    'requests.get(url, auth=("api", "apiToken"))',
    'requests.get(url, auth=("api", "${API_PASSWORD}"))',
    'requests.get(url, auth=("api", ""))',
    "HTTPBasicAuth(settings.USER, settings.PASSWORD)"])
def test_python_credentials_that_are_code_or_placeholders_are_left(text: str) -> None:
    assert _values(text) == []


_CRC = "7e0b4d91a2c5f368"
_MD5_KEY = "0c9e2b7a41d85f36e1a0b4c7d29f8e53"


@pytest.mark.parametrize("text", [
    f"Klucz do CRC: {_CRC}",
    f"klucz CRC = {_CRC}",
    f"P24_CRC={_CRC}",
    f'PRZELEWY24_CRC_KEY="{_CRC}"',
    f'{{"crc_key": "{_CRC}", "merchant_id": 41020}}',
    f"CRC key: {_CRC.upper()}"])
def test_a_przelewy24_crc_key_under_its_names(text: str) -> None:
    assert _CRC in _values(text) or _CRC.upper() in _values(text)


@pytest.mark.parametrize("text", [
    f"Drugi klucz (MD5): {_MD5_KEY}",
    f"Second key (MD5): {_MD5_KEY.upper()}",
    f"Druhý klíč (MD5): {_MD5_KEY}",
    f"PAYU_SECOND_KEY={_MD5_KEY}",
    f'{{"second_key": "{_MD5_KEY}"}}'])
def test_a_payu_second_key_under_its_names(text: str) -> None:
    assert _MD5_KEY in _values(text) or _MD5_KEY.upper() in _values(text)


@pytest.mark.parametrize("text", [
    f"crc: {_CRC}",
    f"CRC-64: {_CRC}",
    "P24_CRC=0000000000000000",
    "P24_CRC=abababab12121212",
    f"checksum (MD5): {_MD5_KEY}",
    f"md5: {_MD5_KEY}",
    "Second key (MD5): ffffffffffffffffffffffffffffffff",
    f"second half of the key: {_CRC}"])
def test_checksums_and_placeholders_beside_gateway_words_are_left(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Rodné číslo: 855612/0012", "855612/0012"),
    ("RČ: 0362151230", "0362151230"),
    ("ЕГН на дарителя 7511020015", "7511020015"),
    ('{"egn": "0345151231"}', "0345151231"),
    ("JMBG: 0101990710008", "0101990710008"),
    ("матични број 1703985780123", "1703985780123"),
    ("CNP: 1800101221144", "1800101221144"),
    ("Codul numeric personal al voluntarului: 6030717401233", "6030717401233"),
    ("РНОКПП 3012345670", "3012345670"),
    ("ІПН: 2918364018", "2918364018"),
    ("ИИН: 900101300017", "900101300017"),
    ("ЖСН 050812501232", "050812501232"),
    ("Asmens kodas: 49207150125", "49207150125"),
    ("isikukood 51003040224", "51003040224")])
def test_a_regional_national_id_after_its_label(text: str, value: str) -> None:
    assert value in _values(text)


@pytest.mark.parametrize("text", [
    "Rodné číslo: 855612/0013",  # the whole not a multiple of 11
    "ЕГН 7511020016",  # a wrong check digit
    "ЕГН 7582020010",  # month 82: no century (its check digit right)
    "JMBG: 3202990710000",  # 32 February (its check digit right)
    "Matični broj: 17039857",  # a company's registration number, eight digits
    "CNP: 1800101501143",  # no county 50 (its check digit right)
    "РНОКПП 9012345675",  # days from 1899 past 2036 (its check right)
    "ИИН: 900101700012",  # no century digit 7 (its check right)
    "Isikukood: 91003040228",  # no century digit 9 (its check right)
    "order 8556120012 shipped",
    "invoice 1800101221144"])
def test_regional_id_shapes_that_fail_their_check_or_lack_a_label_are_left(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "key"), [
    ("API кілті: 5b1e7c2a-90d3-4f6e-8a1b-2c3d4e5f6a7b", "5b1e7c2a-90d3-4f6e-8a1b-2c3d4e5f6a7b"),
    ("Төлем жүйесінің кілті: 0a7e3b9c1d2f4e5a6b7c8d9e0f1a2b3c4d5e6f70", "0a7e3b9c1d2f4e5a6b7c8d9e0f1a2b3c4d5e6f70"),
    ("API түлхүүр: 9f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6", "9f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6")])
def test_a_key_under_a_kazakh_or_mongolian_word_for_key(text: str, key: str) -> None:
    assert key in _values(text)


@pytest.mark.parametrize(("text", "seed"), [
    ("Klíč 2FA: QK4XW7ZP2MRT5NVA", "QK4XW7ZP2MRT5NVA"),
    ("Секрет 2FA: JBSWY3DPEHPK3PXPQK4XW7ZP2MRT5NVA", "JBSWY3DPEHPK3PXPQK4XW7ZP2MRT5NVA"),
    ("KLUCZ TOTP = MZXW6YTBOI4TQMRZ", "MZXW6YTBOI4TQMRZ"),
    ("ключ 2FA: ob2g k3lm 7qrs tuv4", "ob2g k3lm 7qrs tuv4")])
def test_an_authenticator_secret_after_a_slavic_word_for_key_and_2fa(text: str, seed: str) -> None:
    assert seed in _values(text)


@pytest.mark.parametrize("text", [
    "ключ 2FA не задан",
    "Klíč 2FA: ZAPNUTO",
    "кілті жоқ",
    "API түлхүүр: шинэчлэгдсэн"])
def test_slavic_and_central_asian_key_words_without_a_secret_are_left(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "password"), [
    ("Az új jelszava: Hold_9kTq2w", "Hold_9kTq2w"),
    ('{"msg": "A jelszavad: Tavasz.Rigó71"}', "Tavasz.Rigó71"),
    ("Нууц үг: Хангай2019!", "Хангай2019!"),
    ("НУУЦ ҮГ = xR4#mVq8Lp", "xR4#mVq8Lp")])
def test_a_password_after_hungarian_possessive_or_mongolian_labels(text: str, password: str) -> None:
    assert password in _values(text)


@pytest.mark.parametrize("text", [
    "A jelszava megváltozott.",
    "jelszava: nincs",
    "Нууц үг солих"])
def test_hungarian_and_mongolian_password_words_without_one_are_left(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "secret"), [
    ('{"secret": "Łabędź2018#"}', "Łabędź2018#"),
    ("client secret: Ёлка_2021!", "Ёлка_2021!"),
    ('{"note": "{\\"secret\\": \\"Ügyfél77$\\"}"}', "Ügyfél77$")])
def test_a_short_secret_with_letters_beyond_ascii_after_a_credential_word(text: str, secret: str) -> None:
    assert secret in _values(text)


@pytest.mark.parametrize("text", [
    "secret: Überraschung!",
    "Token: «Привет2024»",
    "token: Straße—2024!",
    "the secret: Ölpreis steigt",
    "secret: ünnep"])
def test_words_beyond_ascii_after_a_credential_word_are_left(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    (":61:240305C120,00NTRFNONREF\n:86:166^00PRZELEW PRZYCHODZACY^20Klucz API: "
     "9f41c2e07ab35d8861f0c4e2b7a9d3150e6c8f24", "9f41c2e07ab35d8861f0c4e2b7a9d3150e6c8f24"),
    (":86:051~00PRZELEW~20API key: 9f41c2e07ab35d8861f0c4e2b7a9d3150e6c8f24~30DE",
     "9f41c2e07ab35d8861f0c4e2b7a9d3150e6c8f24"),
    (":86:166?00GUTSCHRIFT?20Spende Chor?21Kennwort: Qv7!mZ2#rT8p", "Qv7!mZ2#rT8p"),
])
def test_a_value_after_a_bank_statements_subfield_code(text: str, value: str) -> None:
    """MT940's field 86 writes a subfield's code straight before its text (`^20Klucz API: …`): no word starts
    there for the label until the code reads as blanks, and the next code ends the value."""
    assert _values(text) == [value]


def test_a_bank_statements_subfield_codes_are_no_values() -> None:
    assert _values(":61:240305C120,00NTRFNONREF\n:86:166?00GUTSCHRIFT?10931?20Mitgliedsbeitrag 2024?30"
                   "37040044?32Chor Harmonie e.V.") == []
