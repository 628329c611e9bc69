"""What a browser or computer-use agent's logs hold of the forms it fills: automation calls whose selector names
the field, keystroke actions after or before the field's name, password-manager exports without their header,
cookies set from Python, OCR's space after an `@`, a 1Password Secret Key."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
SECRET = "Vx9mQ2pLz77"


def values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize("call", [
    "await page.fill('#password', '{0}')", "page.locator('input[name=\"passwd\"]').fill('{0}')",
    "cy.get('#pwd').type('{0}')", "await page.type('[type=password]', '{0}')",
    "await page.getByLabel('Şifre').fill('{0}')", "[pw:api] fill \"#password\" with \"{0}\"",
    "$('#user_password').setValue('{0}')"])
def test_a_password_an_automation_call_types_into_its_field(call: str) -> None:
    assert values(call.format(SECRET)) == [SECRET]


@pytest.mark.parametrize("call", ["page.fill('#username', '{0}')", "page.fill('#search', 'password reset')",
                                  "i18n.t('password_hint', 'Mindestens 8 Zeichen')"])
def test_other_fields_and_words_are_left(call: str) -> None:
    assert values(call.format("jane.doe")) == []


@pytest.mark.parametrize("text", [
    "# focus: Passwort\nxdotool type --delay 60 '{0}'", "click Password field\nxdotool type '{0}'",
    '{{"action": "type", "text": "{0}"}}  // into Password', "Typed '{0}' into the password field",
    "Mot de passe : champ actif\nawait page.keyboard.type('{0}')"])
def test_a_keystroke_action_typing_into_a_named_password_field(text: str) -> None:
    assert values(text.format(SECRET)) == [SECRET]


def test_keystrokes_without_a_password_field_are_left() -> None:
    assert values("xdotool type 'hello-world-42'") == []
    assert values('{"action": "type", "text": "search term 42"}') == []


def test_password_export_rows_without_their_header() -> None:
    chrome = "accounts.example.org,https://accounts.example.org/login,jane.doe,k9Vt2-winter-Mare,"
    assert values(chrome) == ["k9Vt2-winter-Mare"]
    firefox = ('"https://app.example.net","jane.doe","k9Vt2-winter-Mare",,"https://app.example.net",'
               '"{6edf11be-8e1f-4eef-a7a6-0e4abc0bb9cf}",1727533203815,1727533203815,1727533203815')
    assert values(firefox) == ["k9Vt2-winter-Mare"]
    assert values("site,https://other.example.com/a,jane,2024-05-01,") == []


def test_second_factors_typed_into_their_fields() -> None:
    assert values("page.getByLabel('Código de recuperación').fill('11663-5970e')") == ["11663-5970e"]
    assert values("# Wiederherstellungscode\nxdotool type '52dea-264ae'") == ["52dea-264ae"]
    assert values('<input type="text" id="recovery_code" name="recovery_code" value="753af-c6051">') == \
        ["753af-c6051"]
    assert values("pyotp.TOTP('JBSWYDPEHPKQPXPA').now()") == ["JBSWYDPEHPKQPXPA"]
    assert values("otpauth://totp/GitHub:jane?secret=TAZIWDWISJNSFKCR&issuer=GitHub") == ["TAZIWDWISJNSFKCR"]
    assert values("Titkos kulcs (TOTP): XF53PUUA2O3S5Y3Q") == ["XF53PUUA2O3S5Y3Q"]
    assert values("Secret Key: A3-ASWWYB-798JRY-LJVD4-23DC2-86TVM-H43EB")[-1].startswith("A3-ASWWYB")


def test_an_ssn_below_its_label_or_typed_after_it() -> None:
    assert values("Taxpayer identification number (SSN or ITIN)\n511497269\n") == ["511497269"]
    assert values("# SSN field\nxdotool type '868140370'") == ["868140370"]


def test_cookies_set_from_python_and_emails_read_by_ocr() -> None:
    cookie = "context.add_cookies([{'name': 'sessionid', 'value': '7t1vtbtzbm4k32llt6z3ysoy7den83iw', 'url': 'x'}])"
    assert values(cookie) == ["7t1vtbtzbm4k32llt6z3ysoy7den83iw"]
    assert values("E-mailadres\nnguyen.kasia79@ icloud.com\n") == ["nguyen.kasia79@ icloud.com"]
    assert values("foo@ bar and @ mentions") == []


def test_a_form_fields_placeholder_is_a_hint_not_an_address() -> None:
    assert values('<input type="email" name="email" placeholder="name@company.com" value="">') == []
    assert values('{"placeholder": "you@work.example", "value": "jane.doe@gmail.com"}') == ["jane.doe@gmail.com"]


def test_a_tuple_of_field_names_is_no_fill() -> None:
    assert values('"fields": ("username", "password1", "password2"),') == []


def test_a_hint_at_an_example_domain_is_no_address() -> None:
    assert values("Email: you@example.com") == []
    assert values('"Env": ["Email: your.name@example.org"]') == []
    assert values("Email: USER@EXAMPLE.COM, jane.doe@example.com") == ["USER@EXAMPLE.COM", "jane.doe@example.com"]
