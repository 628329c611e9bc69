"""Secrets of enterprise identity and IT administration as their tools print them (the forty-first corpus's causes):
Kerberos keys in `klist -k -K`, ktutil and secretsdump output, NT hashes in pwdump lines, a national id under a
camelCase HR key. Values written for these tests."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
AES256 = "5be0c7d2a91f3e846b2d7c10f9a8e3b4" "0d6c2a7e19f4b5830c7e2d9a1f6b4e05"
AES128 = "c41a9e07b3d2f6581e0a7c9d3b2f4e16"


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    (f"   4 host/files02.lab.example@LAB.EXAMPLE (aes256-cts-hmac-sha1-96)  (0x{AES256})", AES256),
    (f"   4 host/files02.lab.example@LAB.EXAMPLE (0x{AES128})", AES128),
    (f"   1    3 01/05/2025 08:00:00 cifs/nas.lab.example@LAB.EXAMPLE (DEPRECATED:arcfour-hmac)  (0x{AES128})",
     AES128),
    (f'{{"stdout": "KVNO Principal\\n---- ----\\n   2 nfs/x.lab.example@LAB.EXAMPLE (aes128-cts-hmac-sha1-96)  '
     f'(0x{AES128})"}}', AES128),
    (f"Key for HTTP/portal.lab.example@LAB.EXAMPLE (hex): {AES256}", AES256)])
def test_a_keytab_key_as_klist_and_ktutil_print_it(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize(("text", "value"), [
    (f"LAB\\svc_backup:aes256-cts-hmac-sha1-96:{AES256}", AES256),
    (f"LAB\\svc_backup:aes128-cts-hmac-sha1-96:{AES128}", AES128),
    ("LAB\\svc_backup:des-cbc-md5:4f1e9ab27c30d5e8", "4f1e9ab27c30d5e8"),
    ("LAB\\FS01$:plain_password_hex:" + "6b00" * 24, "6b00" * 24)])
def test_an_accounts_kerberos_keys_as_secretsdump_prints_them(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_the_nt_hash_of_a_pwdump_line_and_a_stored_lm_hash() -> None:
    empty_lm = "aad3b435b51404eeaad3b435b51404ee"
    assert _values(f"LAB\\mkowal:2213:{empty_lm}:{AES128}:::") == [AES128]
    lm = "0e3f5a9c21d7b84e6a1c0f9d3e7b2a58"
    assert _values(f"Guest:501:{lm}:{AES128}:::") == [lm, AES128]


@pytest.mark.parametrize("text", [
    f"sha256:{AES256}",
    "   4 host/files02.lab.example@LAB.EXAMPLE (aes256-cts-hmac-sha1-96)",
    f"object {AES128} (0x{AES128[:16]})",
    f"etag {AES128}:{AES128}"])
def test_hex_without_a_kerberos_or_pwdump_format_is_not_a_key(text: str) -> None:
    assert not [f for f in DETECTOR.find(text) if f.rule.name in {"kerberos_key", "ntlm_hash"}]


def test_a_service_principal_is_not_an_email_but_a_user_address_is() -> None:
    assert _values("HTTP/web7.lab.example@LAB.EXAMPLE kvno 4") == []
    assert _values("see https://wiki.example/people/ana@example.org today") == ["ana@example.org"]


@pytest.mark.parametrize(("text", "value"), [
    ("employeeNationalId: 55050512345  # ref", None),
    ('workerNationalIdNumber = "111222333"', "111222333"),
    ("personNationalID: 811218-9876", "811218-9876")])
def test_a_national_id_under_a_camel_case_key(text: str, value: str | None) -> None:
    assert _values(text) == ([value] if value else [])


def test_a_camel_case_key_that_only_starts_with_national_is_not_a_label() -> None:
    assert _values("NationalIdCardPrinted: 2024-01-02") == []
    assert _values("internationalIdentifier: 111222333") == []


@pytest.mark.parametrize(("text", "value"), [
    ("Duo bypass code for mkowal: 620418375 (one use)", "620418375"),
    ("Hej, ditt konto är klart.\nReservkod: 3917 2046", "3917 2046"),
    ("Backupkode — b81c4-3e09f", "b81c4-3e09f"),
    ("Reservekode: 5062 1873", "5062 1873"),
    ("Back-upcode: 7a02e-c93d1", "7a02e-c93d1"),
    ("קוד גיבוי: 4405 9126", "4405 9126"),
    ("رمز احتياطي: 8163 0274", "8163 0274"),
    ("备用验证码：2290 4718", "2290 4718")])
def test_one_backup_code_after_its_name_in_the_singular(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_bypassing_something_is_not_a_codes_label() -> None:
    assert _values("Bypass the code review for PR 73190 today") == []


@pytest.mark.parametrize("text", [
    "FileVault escrow for MBP-2207 done, PRK 7HQD-K2WM-9RTX-4CNA-VE3P-B8JZ",
    "PRK: 7HQD-K2WM-9RTX-4CNA-VE3P-B8JZ",
    "new recovery key 7HQD-K2WM-9RTX-4CNA-VE3P-B8JZ"])
def test_a_filevault_recovery_key_after_its_name(text: str) -> None:
    assert _values(text) == ["7HQD-K2WM-9RTX-4CNA-VE3P-B8JZ"]


@pytest.mark.parametrize("text", [
    "part list: 7HQD-K2WM-9RTX-4CNA-VE3P-B8JZ",
    "FileVault ticket ABCD-EFGH-JKLM-NPQR-STUV-WXYZ",
    "recovery key 2025-0101-1234-5678-9012-3456"])
def test_six_groups_of_four_without_the_name_or_the_mix_are_not_a_filevault_key(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text", [
    "x5t#S256 Qk9xY2VydGlmaWNhdGVfdGh1bWJwcmludF9vZl8zMl9i",
    '{"kty": "EC", "x5t#S256": "Qk9xY2VydGlmaWNhdGVfdGh1bWJwcmludF9vZl8zMl9i"}',
    '"cnf": {"x5t#S256": "Qk9xY2VydGlmaWNhdGVfdGh1bWJwcmludF9vZl8zMl9i"}'])
def test_a_jose_certificate_thumbprint_and_its_parameter_name_are_public(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("sudo dscl . -passwd /Users/itadmin 'Marea_5120Faro'", "Marea_5120Faro"),
    ("dscl . -passwd /Users/ana 'oldPass1x' 'Nuevo_7781Faro'", "Nuevo_7781Faro"),
    ('198.51.100.4 %any : PSK "ribera-nube-coral-18"', "ribera-nube-coral-18"),
    ("<string>198.51.100.4 %any : PSK &quot;ribera-nube-coral-18&quot;</string>", "ribera-nube-coral-18"),
    ('carol : EAP "Brisa=2231Monte"', "Brisa=2231Monte")])
def test_a_password_given_to_dscl_or_in_an_ipsec_secrets_line(text: str, value: str) -> None:
    assert value in _values(text)


@pytest.mark.parametrize("text", ["ratio a : b PSK", "the tunnel uses : PSK mode", "dscl . -read /Users/ana"])
def test_psk_and_dscl_without_a_secret_are_not_passwords(text: str) -> None:
    assert _values(text) == []
