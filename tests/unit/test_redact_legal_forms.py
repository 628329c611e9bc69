"""Legal practice's and real-estate closings' forms of secrets (tracegym/redact), each read by its cause: wire and
ACH instructions, two-factor backup codes, cookie rows as browsers list them; the public format, not one corpus's
strings."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def found(text: str) -> list[tuple[str, str]]:
    return [(f.rule.name, f.value) for f in DETECTOR.find(text)]


def aba(prefix8: str) -> str:
    """An ABA routing number: eight digits and the 3-7-1 check digit."""
    total = sum(int(d) * w for d, w in zip(prefix8, (3, 7, 1, 3, 7, 1, 3, 7), strict=True))
    return prefix8 + str((10 - total % 10) % 10)


ROUTING = aba("06100014")


@pytest.mark.parametrize("text", [
    f"Remit to Harbor Savings\nABA: {ROUTING}\nAccount #: 4411902873\nReference: closing 17",
    f"Direct deposit: routing number {ROUTING}; savings acct 880021457390",
    f"Transferencia — número de ruta {ROUTING}, número de cuenta 5530118276",
    json.dumps({"ach": {"routingNumber": ROUTING, "accountNumber": "20917745831"}}),
    json.dumps({"notes": json.dumps({"aba_routing": ROUTING, "account_no": "20917745831"})}),
    f"Please wire the earnest money to acct 77310299504, RTN {ROUTING}.",
])
def test_an_account_number_beside_its_routing_number_is_found(text: str) -> None:
    account = [v for name, v in found(text) if name == "bank_account"]
    assert len(account) == 1 and account[0] in text and account[0] != ROUTING


@pytest.mark.parametrize("text", [
    f"Harbor Savings, ABA routing {ROUTING}",
    f"Routing {ROUTING}; account on file ending in 57390",
    f"RTN {ROUTING} / Acct ****7390",
    f"RTN {ROUTING} / Acct XXXXXX7390",
    "Account 55123409 was closed; see docket 2024-117 for routing of the motion",
    f"aba {ROUTING[:8]}, account 123456789",
])
def test_a_routing_number_alone_or_a_masked_account_is_not_a_bank_account(text: str) -> None:
    assert not [v for name, v in found(text) if name == "bank_account"]


SESSION = "Q7vK2mWx9LpR4tZs8NcY3bHd"


@pytest.mark.parametrize("text", [
    f"Name\tValue\tDomain\nPHPSESSID\t{SESSION}\tclient.lawfirm.test",
    f"copied from the browser: JSESSIONID\t{SESSION}.node7\twww.closing.test\nthen logged out",
    f"<Note><![CDATA[sessionid\t{SESSION}\tportal.escrow.test]]></Note>",
    json.dumps({"body": f"Name\tValue\tDomain\n.ASPXAUTH\t{SESSION}{SESSION}\tefile.court.test"}),
])
def test_a_devtools_cookie_row_that_ends_at_its_domain_gives_its_value(text: str) -> None:
    assert any(name == "session_cookie" and SESSION in v for name, v in found(text))


@pytest.mark.parametrize("text", [
    f"request_id\t{SESSION}\tapi.lawfirm.test",
    "PHPSESSID\tshort\tclient.lawfirm.test",
    f"PHPSESSID\t{SESSION}\tclient.lawfirm.test is where it was set",
])
def test_other_tab_separated_rows_are_not_devtools_cookies(text: str) -> None:
    assert not [v for name, v in found(text) if name == "session_cookie"]


@pytest.mark.parametrize(("text", "codes"), [
    ("Backup code for the closing team's shared Google Workspace mailbox: 3918 6027", "3918 6027"),
    ("Backup codes for the e-filing admin account of the litigation group: 4402 7715, 9063 2281",
     "4402 7715, 9063 2281"),
    (json.dumps({"note": "Recovery codes for the firm's document portal login (paralegal): 51c8e-a07d2"}),
     "51c8e-a07d2"),
])
def test_recovery_codes_after_a_long_whose_and_a_colon_are_found(text: str, codes: str) -> None:
    assert ("recovery_code", codes) in found(text)


@pytest.mark.parametrize("text", [
    "Backup codes for the shared Google Workspace intake account: regenerated on 2024-06-12",
    "Backup code for the shared Google Workspace intake account: see ticket 4471 of the help desk",
    "Recovery code for the paralegal laptop of the Denver office: INC-40213",
])
def test_a_long_whose_then_no_grouped_code_is_not_a_recovery_code(text: str) -> None:
    assert not [v for name, v in found(text) if name == "recovery_code"]


def dat_row(*fields: str) -> str:
    """A Concordance DAT load file's row: each field in the `þ` qualifier, DC4 (0x14) between fields."""
    return "\x14".join(f"\u00fe{field}\u00fe" for field in fields)


@pytest.mark.parametrize(("text", "address"), [
    (dat_row("BEG0000101", "END0000104", "Custodian: R. Okonjo", "From: rosa.delgado88@mailbox.test"),
     "rosa.delgado88@mailbox.test"),
    (dat_row("BEG0000222", "LANDLORD CONTACT: T.NGUYEN@PROPERTYCO.TEST") + "\n" + dat_row("BEG0000223", "none"),
     "T.NGUYEN@PROPERTYCO.TEST"),
    (json.dumps({"row": dat_row("BEG0000301", "ivan.petrov@post.test")}), "ivan.petrov@post.test"),
])
def test_an_address_that_ends_a_dat_field_is_found(text: str, address: str) -> None:
    assert ("email", address) in found(text)


@pytest.mark.parametrize("text", [
    dat_row("BEG0000101", "END0000104", "version 2.4@build.7 shipped"),
    dat_row("BEG0000101", "scanner: user@localhost"),
])
def test_dat_fields_without_an_address_give_none(text: str) -> None:
    assert not [v for name, v in found(text) if name == "email"]


HMAC_UUID = "5b0e21c4-93fa-4d67-a8c2-7e1f30b94d58"


@pytest.mark.parametrize("text", [
    f"Webhook HMAC key: {HMAC_UUID}",
    f"hmac_key = {HMAC_UUID}",
    json.dumps({"notes": f"the HMAC key for the envelope events listener is {HMAC_UUID}"}),
])
def test_a_uuid_after_hmac_key_is_a_secret(text: str) -> None:
    assert any(v == HMAC_UUID for _, v in found(text))


@pytest.mark.parametrize("text", [
    f"object key: {HMAC_UUID}",
    f"Idempotency key: {HMAC_UUID}",
    f"HMAC signature verified for envelope {HMAC_UUID}",
])
def test_a_uuid_after_other_keys_or_an_hmac_signature_is_an_id(text: str) -> None:
    assert not [v for _, v in found(text) if v == HMAC_UUID]
