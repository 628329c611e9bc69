"""Field service, construction and facilities forms of Southeast Asia and Oceania: the region's identity and tax
numbers after their labels (Thailand, Malaysia, Indonesia, Vietnam, New Zealand, Singapore in Chinese), each by its
public check or layout. Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("เลขประจำตัวประชาชน: 3-1006-00123-45-0", "3-1006-00123-45-0"),
    ("ช่างเทคนิค เลขบัตรประชาชน 5710200987652 ผ่านการอบรมแล้ว", "5710200987652"),
    ("Thai ID no. 3100600123450 (site induction)", "3100600123450"),
    ("No. MyKad: 850612-10-5431", "850612-10-5431"),
    ("Technician IC no.: 850612105431", "850612105431"),
    (json.dumps({"kad_pengenalan": "850612-10-5431"}), "850612-10-5431"),
    ("NIK: 3171065208950003", "3171065208950003"),
    ("Nomor Induk Kependudukan 3171061208950003 sudah diverifikasi", "3171061208950003"),
    ("NPWP: 09.123.456.7-415.000", "09.123.456.7-415.000"),
    ("No. NPWP pribadi 076543214208000", "076543214208000"),
    ("Số CCCD: 079192004567", "079192004567"),
    ("Căn cước công dân 079192004567, đã kiểm tra", "079192004567"),
    ("Mã số thuế cá nhân: 0102345677", "0102345677"),
    ("MST=0314567897", "0314567897"),
    ("IRD number: 49-123-450", "49-123-450"),
    ("IRD no.=135792462", "135792462"),
    ("身份证号 S1234567D, induction done", "S1234567D")])
def test_a_regional_id_after_its_label(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_a_regional_id_under_its_column_header() -> None:
    table = "| Technician | 身份证号 |\n|---|---|\n| Ahmad | S1234567D |\n"
    assert _values(table) == ["S1234567D"]


@pytest.mark.parametrize("text", [
    "เลขประจำตัวประชาชน: 3-1006-00123-45-1",
    "Thai ID no. 9100600123450",
    "No. MyKad: 851312-10-5431",
    "IC no.: 850612-17-5431",
    "IC no. 74HC595 on the relay board",
    "NIK: 2071061208950003",
    "NIK: 3171063508950003",
    "NPWP: 09.123.456.8-415.000",
    "Số CCCD: 079592004567",
    "Số CCCD: 005192004567",
    "Mã số thuế: 0102345678",
    "cutover at 10:00 MST 2026-03-01, ticket 4411223344",
    "IRD number: 49-123-451",
    "IRD number: 160-000-008",
    "身份证号 S1234567A"])
def test_no_regional_id_without_its_check(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text", [
    "work order 3100600123450 closed",
    "asset tag 850612105431 relabelled",
    "meter reading 3171065208950003 kWh",
    "PO 0102345677 approved"])
def test_no_regional_id_without_its_label(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Remit to BSB: 062-000  Account: 1234 5678", "1234 5678"),
    ("supplier bank — BSB 083 004, acc no. 512345678", "512345678"),
    ("BSB 033-100 / Acct 654321 (Westpac)", "654321"),
    ("Pay into BSB 012-003 account 2345 6789 1, ref PO-4432", "2345 6789 1"),
    ("Số tài khoản Úc: BSB 063-010, tài khoản 10456789", "10456789"),
    ("Account 98765432, BSB 062-692", "98765432"),
    (json.dumps({"payee": "Coastal HVAC", "bank": "BSB 732-011 account number 40123456"}), "40123456")])
def test_an_australian_account_number_beside_its_bsb(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "BSB 062-000 (CBA Sydney branch)",
    "BSB 062-000 account ending 5678",
    "BSB 062-000 account ****5678",
    "BSB 062-000, account 1111111",
    "BSB 062-000 account 12",
    "account 40123456 on hold pending review",
    "site account 40123456, job 062-000"])
def test_no_australian_account_without_its_bsb_or_digits(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text", [
    json.dumps({"audit_id": "audit_5e0c2a7b9d14f3a6c8b7e1d02f9a4c6b", "status": "complete"}),
    json.dumps({"template_id": "template_a3f9c1e07b5d42e8964c0d1b7e2f3a58", "name": "Chiller PM"})])
def test_no_token_in_an_inspection_s_or_a_template_s_id(text: str) -> None:
    assert _values(text) == []


def test_a_hex_token_behind_an_issuer_s_prefix_is_still_one() -> None:
    token = "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"
    assert _values(f"rotated the admin token {token} today") == [token]


@pytest.mark.parametrize(("text", "value"), [
    ("e-mel: siti.aminah [at] penang-mep [dot] com [dot] my", "siti.aminah [at] penang-mep [dot] com [dot] my"),
    ("อีเมล: somsak.k [at] hvac-th [dot] co [dot] th\n", "somsak.k [at] hvac-th [dot] co [dot] th"),
    ("write to kiri [at] mail [dot] example [dot] org [dot] nz today",
     "kiri [at] mail [dot] example [dot] org [dot] nz"),
    ("contact hana.lee [at] example [dot] com. Then call", "hana.lee [at] example [dot] com")])
def test_an_obfuscated_email_under_a_second_level_domain(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_an_ird_number_needs_its_own_label() -> None:
    assert _values("IRD number 74939188") == ["74939188"]
    assert _values(json.dumps({"document_number": 74939188, "version": 2})) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Mã bí mật 2FA: HXDMVJECJJWSRB3H", "HXDMVJECJJWSRB3H"),
    ("รหัสลับ 2FA: HXDMVJECJJWSRB3HI4ZVAYX2LBQGA3XK\n", "HXDMVJECJJWSRB3HI4ZVAYX2LBQGA3XK"),
    ("[uplink]\nmã bí mật TOTP = HXDMVJECJJWSRB3H\n", "HXDMVJECJJWSRB3H")])
def test_an_authenticator_secret_after_the_word_for_secret_and_2fa(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_no_authenticator_secret_in_a_2fa_word_without_base32() -> None:
    assert _values("Mã bí mật 2FA: đã gửi qua SMS") == []


@pytest.mark.parametrize(("text", "value"), [
    ("telpon 6281298765432 / WO-5521", "6281298765432"),
    ("mohon hubungi 6285612345678 sebelum jam 5", "6285612345678"),
    ("Tech on site — nomor WA 6281398765432 (after 5pm)", "6281398765432"),
    ("Supervisor H/P: 6234 5678", "6234 5678"),
    ("| Name | H/P |\n|---|---|\n| Mei Lin | 6789 2345 |\n", "6789 2345"),
    ("give us a bell on 0421987654", "0421987654"),
    ("namba bilong fon 0421987654 / WO-7781", "0421987654"),
    ("Rosa tawagan sa 09181234567", "09181234567"),
    ("Notes: Lito tawagi sa 09261234567", "09261234567")])
def test_a_phone_after_the_region_s_words_for_it(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "Motor H/P: 7.5 at 1450 rpm",
    "telp 12345",
    "hubungi tim gudang untuk WO-5521",
    "tawagi sa opisina bukas"])
def test_no_phone_after_those_words_without_a_number(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("API ကီး - 7c41d9e2a05b38f6c9e1d47a2b8f03c5", "7c41d9e2a05b38f6c9e1d47a2b8f03c5"),
    ("Te kī API: 7c41d9e2a05b38f6c9e1d47a2b8f03c5", "7c41d9e2a05b38f6c9e1d47a2b8f03c5"),
    ("ລະຫັດ API: 7c41d9e2a05b38f6c9e1d47a2b8f03c57c41d9e2a05b38f6c9e1d47a2b8f03c5",
     "7c41d9e2a05b38f6c9e1d47a2b8f03c57c41d9e2a05b38f6c9e1d47a2b8f03c5")])
def test_an_api_key_after_the_region_s_word_for_key(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "he kī tēnei mō te whare",
    "ລະຫັດ API ແມ່ນຫຍັງ?",
    "API ကီး - see the vault"])
def test_no_api_key_after_those_words_without_a_key(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Description:\nsnmp:\n  version: 2c\n  community: Tq8vLr2Xm9Wd\n", "Tq8vLr2Xm9Wd"),
    ("[[inputs.snmp]]\n  agents = [\"udp://10.20.0.5:161\"]\n  version = 2\n  community = \"k8Rt#2vLq9Pz\"\n",
     "k8Rt#2vLq9Pz"),
    (json.dumps({"config": "snmp:\n  version: 2c\n  community: ~Hb3!qZx7Lw\n"}), "~Hb3!qZx7Lw")])
def test_an_snmp_community_under_an_snmp_block(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "snmp:\n  version: 2c\n  community: public\n",
    "snmp traps go to the NOC\nthe community board: meeting at 5\n",
    "snmp:\n  community: ${SNMP_COMMUNITY}\n"])
def test_no_snmp_community_that_is_a_default_or_no_key(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("ពាក្យសម្ងាត់៖ q&T=r7&wZ&kP", "q&T=r7&wZ&kP"),
    ("API key៖ 7c41d9e2a05b38f6c9e1d47a2b8f03c5", "7c41d9e2a05b38f6c9e1d47a2b8f03c5")])
def test_a_secret_after_the_khmer_colon(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_no_password_after_the_khmer_colon_in_words() -> None:
    assert _values("ពាក្យសម្ងាត់៖ សូមសួរប្រធាន") == []
