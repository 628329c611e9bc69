"""Values as an energy utility's operations and a commodity desk write them (the forty-seventh corpus's causes):
Databento API keys, DLMS/COSEM keys on a Gurux client's command line, FIX Logon passwords with `^A` between the
fields, connection-string passwords that start with a dash, OAuth client secrets with `~`, recovery codes after
their label and whose they are, a short secret under a JSON key in text. Values written for these tests; the near
misses beside each form must stay."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


DATABENTO = "db-Hr4Tq9XwL2mZ7vKc3NpB8sJd5Fy0G"


@pytest.mark.parametrize("text", [
    f'client = db.Historical("{DATABENTO}")',
    f'live = db.Live(key="{DATABENTO}")',
    f"DATABENTO_API_KEY={DATABENTO}",
    f"[feed]\nnote = {DATABENTO}",
])
def test_a_databento_key_anywhere(text: str) -> None:
    assert DATABENTO in _values(text)
    assert DATABENTO in _values(json.dumps({"debug": text}))


@pytest.mark.parametrize("text", [
    "ssh ops@db-primaryreplicawesteuropeaz1 uptime",  # a host's name of words
    "docker run --name db-Qz8Rm2Xw9Lk4Tb8Vn1Hs6Jd3P postgres",  # not 29 after the prefix
    "git checkout mongodb-Hr4Tq9XwL2mZ7vKc3NpB8sJd5Fy0G",  # another word's tail
    "db-createOrderWithCustomerAddress",  # camelCase
])
def test_what_starts_with_db_but_is_no_databento_key(text: str) -> None:
    assert not any(v.startswith("db-") for v in _values(text)), text


AUTH_KEY = "9E1C47A2D08B3F65C7D2E90A4B18F36C"
BLOCK_KEY = "3A7F0C92E5B14D68A0F7C3E19B52D84E"


@pytest.mark.parametrize("text", [
    f"GuruxDlmsSample -h 10.20.1.7 -p 4059 -c 16 -s 1 -T 5A4B4C0012345678 -A {AUTH_KEY} -B {BLOCK_KEY}",
    f"python main.py -S /dev/ttyUSB0 -C AuthenticationEncryption -A {AUTH_KEY} -B {BLOCK_KEY}",
    f"main.py -A {AUTH_KEY} -B {BLOCK_KEY} -T 5A4B4C0012345678",
    f"gurux client -c 16 -s 1 -A {AUTH_KEY} -D {BLOCK_KEY}",
])
def test_dlms_keys_on_a_gurux_command_line(text: str) -> None:
    assert {AUTH_KEY, BLOCK_KEY} <= set(_values(text))
    assert {AUTH_KEY, BLOCK_KEY} <= set(_values(json.dumps({"cmd": text})))


def test_one_dlms_key_after_the_system_title() -> None:
    assert _values(f"gurux director -S COM4 -c 16 -T 4D4D4D0077AA11BB -b {BLOCK_KEY}") == [BLOCK_KEY]


@pytest.mark.parametrize("text", [
    f"grep -A 3 {AUTH_KEY} audit.log",  # a context count, the hex another argument
    f"tool -A {AUTH_KEY} --verbose",  # one flag with no DLMS context: a digest, maybe
    "GuruxDlmsSample -T 4775727578313233 -A D0D1D2D3D4D5D6D7D8D9DADBDCDDDEDF",  # the manual's example key
    "gurux director -S COM3 -c 16 -T 4D4D4D00B0C1D2E3",  # a system title alone is public
])
def test_what_is_no_dlms_key(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize(("text", "password"), [
    ("8=FIX.4.4^A9=97^A35=A^A49=DESK3_GAS^A56=EXCH^A34=1^A98=0^A108=30^A553=desk11^A554=Wq8#zLp2-Rt^A10=201^A",
     "Wq8#zLp2-Rt"),
    ("8=FIX.4.4^A9=97^A35=A^A49=DESK3_GAS^A56=EXCH^A553=desk11^A554=Mv5_^Kd9xQr!^A10=201^A", "Mv5_^Kd9xQr!"),
    ("35=A^A553=desk11^A554=Harbour.Lantern62%^A10=017^A", "Harbour.Lantern62%"),
    ("8=FIX.4.4|9=80|35=A|553=desk11|554=Tz4mQ9-wLp|10=111|", "Tz4mQ9-wLp"),
])
def test_a_fix_logons_password_with_caret_a_between_fields(text: str, password: str) -> None:
    assert _values(text) == [password]
    assert password in _values(json.dumps({"note": text}))


def test_a_fix_logon_without_a_password_gives_nothing() -> None:
    assert _values("8=FIX.4.4^A9=70^A35=A^A49=DESK2_PWR^A56=EXCH^A34=1^A98=0^A108=30^A553=desk04^A10=088^A") == []


@pytest.mark.parametrize(("text", "password"), [
    ("Driver={ODBC Driver 18 for SQL Server};Server=gridsql;Database=ops;Uid=svc;Pwd=-Kt7wQz2Lm9-Rv;",
     "-Kt7wQz2Lm9-Rv"),
    ("Server=tcp:meters.database.windows.net,1433;Database=mdm;User Id=etl;Password=-Hb4NqXw8Tz;Encrypt=True;",
     "-Hb4NqXw8Tz"),
])
def test_a_connection_strings_password_that_starts_with_a_dash(text: str, password: str) -> None:
    assert _values(text) == [password]


def test_a_connection_strings_dash_alone_is_no_password() -> None:
    assert _values("Server=gridsql;Database=ops;Uid=svc;Pwd=--;") == []


SECRET = "Vn3_.kQ8~wRt5Lz.Hm2-Xp7~Jd4Gs9_Bf6Ya"


@pytest.mark.parametrize("text", [
    f"oauth:\n  client_id: site-portal\n  client_secret: {SECRET}",
    f"CLIENT_SECRET={SECRET}",
    f"api_key = {SECRET}",
])
def test_an_oauth_client_secret_with_a_tilde(text: str) -> None:
    assert _values(text) == [SECRET]


@pytest.mark.parametrize("text", [
    "ssh_key: ~/.ssh/id_ed25519_field_laptop",
    "private_key = ~/keys/historian-reader.pem",
    "cache_key: ~tmp~session~store~01",
])
def test_a_path_or_a_cache_key_with_a_tilde_is_no_secret(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize(("text", "code"), [
    ("emergency access code for the billing portal 5318 2094", "5318 2094"),
    ("backup access code: 7e2c9-a04f1", "7e2c9-a04f1"),
    ("recovery code for the VPN gateway QW4R-82MD-K7PX-3NVE", "QW4R-82MD-K7PX-3NVE"),
    ("emergency access code for ops 3QW9T-K8M2D-LZ7PX-4HBNR-V6CJY", "3QW9T-K8M2D-LZ7PX-4HBNR-V6CJY"),
    ("recovery codes for the admin account 8c1f2-0e3d9 5ba70-d41c8", "8c1f2-0e3d9 5ba70-d41c8"),
])
def test_recovery_codes_after_their_label_and_whose_they_are(text: str, code: str) -> None:
    assert _values(text) == [code]


@pytest.mark.parametrize("text", [
    "recovery codes for ticket INC-40213 were reset",
    "backup codes for user 12345678 regenerated",
    "backup codes for order ORD-2024-0077 printed",
    "gas emergency line for the region 0800 4420",
])
def test_an_id_after_a_recovery_label_is_no_code(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text", [
    '{"integration": "crm", "secret": "Rk7&pLw_2*Zq"}',
    '[notes]\n{"integration": "crm", "secret": "\\u0052\\u006b7&pLw_2*Zq"}',
])
def test_a_short_secret_under_a_json_key_in_text(text: str) -> None:
    assert len(_values(text)) == 1
    assert _values(text)[0].endswith("7&pLw_2*Zq")


@pytest.mark.parametrize("text", [
    '{"token": "${HISTORIAN_TOKEN}"}',
    '{"secret": "see-the-vault"}',
    '{"token": "Bearer"}',
])
def test_a_reference_or_a_word_under_a_json_key_is_no_secret(text: str) -> None:
    assert _values(text) == [], text
