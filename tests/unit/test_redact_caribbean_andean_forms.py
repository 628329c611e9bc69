"""Secrets and phone numbers as remittance, microfinance and tourism agents in the Caribbean, Central America and
the Andes write them (the fifty-eighth corpus's causes): Haitian Creole, Papiamento, Aymara and Spanish words for
phone and password, a country code in parentheses before a closed eight-digit plan's number, Panama's seven-digit
fixed lines, an authenticator's secret on a log line that names the second factor, Kushki's private merchant id, a
session cookie in a browser tool's JSON record, Mailgun's keys; and what looks like them without being one: a money
transfer's control number, an e-invoice's `Numero=` attribute, Mambu's `encodedKey`, a template's
`USER:PASSWORD@HOST`; the region's national ids after their labels, by their published checks (not a company's
RUC or NIT, public). Values written for these tests."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "number"), [
    ("Nimewo telefòn: 3712-4580", "3712-4580"),
    ("kliyan an di: rele m nan 4239 6617 apre midi", "4239 6617"),
    ("manm,gwoup,nimewo telefòn\n204518,Gwoup Solèy,37158842", "37158842"),
    ('{"contact": {"nimewo telefòn": "4471-0936"}}', "4471-0936"),
    ("Cliente: llamar al 8412 7730 después de las 5", "8412 7730"),
    ("Irpiri: jawsañataki 71244380", "71244380")])
def test_a_phone_number_after_a_regional_word(text: str, number: str) -> None:
    assert number in _values(text)


@pytest.mark.parametrize(("text", "number"), [
    ("Nimewo telefòn: (509) 3718-2264", "(509) 3718-2264"),
    ("teléfono (502) 5521-0873 de la agencia", "(502) 5521-0873"),
    ("Cliente: llamar al, (505) 8231-7704", "(505) 8231-7704"),
    ("(506) 7012-4488", "(506) 7012-4488"),
    ("(504) 9633-1207", "(504) 9633-1207")])
def test_a_country_code_in_parentheses_before_a_closed_plan_number(text: str, number: str) -> None:
    assert number in _values(text)


def test_a_country_code_in_parentheses_needs_its_plan_to_read_the_rest() -> None:
    assert "(509) 9718-2264" not in _values("(509) 9718-2264")  # Haiti's plan: fixed 2, mobiles 3 and 4


def test_a_panamanian_fixed_line_of_seven_digits_after_a_phone_word() -> None:
    assert "264-3318" in _values('{"guest": {"lastName": "Arosemena", "phone": "264-3318"}}')


@pytest.mark.parametrize(("text", "password"), [
    ("Ticket #5512: Modpas la se Kaye!mango42 pou kont ajan an", "Kaye!mango42"),
    ("Kontraseña di e sistema: Flamingo.kas42", "Flamingo.kas42")])
def test_a_password_after_a_creole_or_papiamento_word(text: str, password: str) -> None:
    assert password in _values(text)


@pytest.mark.parametrize(("text", "seed"), [
    ("Ticket #4410: kòd sekrè 2FA a se K7QX2MZP4RWT6YHN", "K7QX2MZP4RWT6YHN"),
    ("kòd sekrè 2FA a se k7qx 2mzp 4rwt 6yhn", "k7qx 2mzp 4rwt 6yhn"),
    ("INFO 2fa enrolled user=caja11 secret=MMQQ44R7RRTTWW2K", "MMQQ44R7RRTTWW2K"),
    ("WARN mfa reset for user=caja11 seed: k7qx 2mzp 4rwt 6yhn", "k7qx 2mzp 4rwt 6yhn")])
def test_an_authenticator_secret_after_a_creole_label_or_on_a_second_factor_log_line(text: str, seed: str) -> None:
    assert ("totp_seed", seed) in [(f.rule.name, f.value) for f in DETECTOR.find(text)]


def test_a_second_factor_log_line_with_no_secret_is_left() -> None:
    assert _values("INFO 2fa enrolled user=caja11 secret=redacted") == []


@pytest.mark.parametrize("text", [
    '{"kushki": {"Private merchant id": "9c41e0b7a2d85f36e4b1c09a7d2f5e81"}}',
    "PRIVATE_MERCHANT_ID=9c41e0b7a2d85f36e4b1c09a7d2f5e81",
    "Private-Merchant-Id: 9c41e0b7a2d85f36e4b1c09a7d2f5e81"])
def test_kushkis_private_merchant_id_is_a_key(text: str) -> None:
    assert "9c41e0b7a2d85f36e4b1c09a7d2f5e81" in _values(text)


@pytest.mark.parametrize(("text", "value"), [
    ('{"result": {"store": "cookies", "entries": {"sessionid": "k2v9x0q7m4n1b8c5z3l6w0e9r2t7y4u1"}}}',
     "k2v9x0q7m4n1b8c5z3l6w0e9r2t7y4u1"),
    ('{"source": "cookies", "items": {"JSESSIONID": "A1F04C9B77E2D3580C6B1E9F2A4D7C03"}}',
     "A1F04C9B77E2D3580C6B1E9F2A4D7C03")])
def test_a_session_cookie_in_a_json_record_of_cookies(text: str, value: str) -> None:
    assert value in _values(text)


def test_a_json_record_of_cookies_with_a_word_for_a_value_is_left() -> None:
    assert _values('{"source": "cookies", "items": {"session_state": "logged_out_by_admin"}}') == []


def test_a_mailgun_key_anywhere() -> None:
    key = "4e1a9c07b3d25f68e0c7a1b94d3f2e86-6b0d2c91-a7e35f40"
    assert key in _values(f"se filtró en un correo: {key}")
    assert _values("00000000000000000000000000000000-00000000-00000000") == []


@pytest.mark.parametrize("text", [
    "MTCN 412-377-9051 listo para cobro en agencia",
    "MTCN 041-377-9051 ready for pickup",
    "Remesa con número de seguimiento RM412377905 disponible",
    '<dte:NumeroAutorizacion Serie="5A0C31E2" Numero="1510748642">5A0C31E2-9F3B-4C1D-8E2A-7B6D5C4E3F21'
    '</dte:NumeroAutorizacion>',
    '{"encodedKey": "8a4f0c2e9b7d41635e0f8c2a1b9d7e46"}',
    "DATABASE_URL=mysql://USER:PASSWORD@HOST:3306/DB"])
def test_what_only_looks_like_a_phone_a_key_or_a_password_is_left(text: str) -> None:
    assert _values(text) == []


def test_a_phone_attribute_of_an_xml_element_is_still_read() -> None:
    assert "8812-4470" in _values('<cliente nombre="Ana" telefono="8812-4470"/>')
    assert "8812-4470" in _values('<Telefono numero="8812-4470"/>')
    assert "0612487730" in _values('<call number="0612487730" duration="41" type="2" />')  # a call log's


@pytest.mark.parametrize(("text", "value"), [
    ("Cédula de identidad y electoral 001-1234567-3, declara recibir", "001-1234567-3"),  # JCE: Luhn
    ("mi cédula de ciudadanía es 1710034065, para el envío", "1710034065"),  # Ecuador: mod 10
    ("INFO kyc.match RUC=1710034065001 result=APPROVED", "1710034065001"),  # Ecuador: the cédula and 001
    ("mi DNI es 12345678-E, para el envío", "12345678-E"),  # RENIEC's check character
    ("<IdReceptor tipo=\"RUC\">10123456781</IdReceptor>", "10123456781"),  # SUNAT: 10, the DNI, mod 11
    ("con NIT 52.398.114-9 declara", "52.398.114-9"),  # DIAN: prime weights
    ("Ticket #2231: cédula de identidad 1-0852-0413 aparece como duplicada", "1-0852-0413"),  # TSE: its shape
    ("solicitud,nombre,cui,monto\nSOL-100200,Ana Tzul,1234 56789 0101,900.00", "1234 56789 0101"),  # RENAP
    ('{"receptor": {"tipoDocumento": "NIT", "numero": "576937-K"}}', "576937-K")])  # SAT: mod 11, K for 10
def test_a_regional_id_after_its_label_by_its_check(text: str, value: str) -> None:
    assert value in _values(text)


@pytest.mark.parametrize("text", [
    "Cédula de identidad y electoral 001-1234567-4",  # Luhn fails
    "RUC 20123456786 (razón social: Hoteles del Sur S.A.C.)",  # a company's RUC: public
    "NIT empresa 860.123.456-1",  # a company's NIT (nine digits from 800.000.000): public
    '{"emisor": {"nit": "900123456-8"}}',
    "CUI 1234 56788 0101"])  # RENAP's check fails
def test_a_regional_id_label_with_a_failing_or_public_value_is_left(text: str) -> None:
    assert _values(text) == []
