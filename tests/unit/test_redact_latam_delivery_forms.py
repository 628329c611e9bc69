"""Payout and tax details of Latin American delivery platforms: a Mexican CLABE, a Mexican RFC and an Argentine
CUIT/CUIL of a person, PIX keys, Mercado Pago and Conekta keys. Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("CLABE interbancaria del socio: 620966542870722972", "620966542870722972"),
    ("depositar a la clabe 102 822 51239370450 6 antes del viernes", "102 822 51239370450 6"),
    (json.dumps({"rider": 88, "clabe": "528559665425987477"}), "528559665425987477"),
    ("cuentaClabe=620966542870722972", "620966542870722972")])
def test_a_clabe_after_its_word(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "CLABE 620966542870722973 (un dígito de control equivocado)",
    "CLABE: 000000000000000000 (ejemplo)",
    "CLABE terminada en ************7229",
    "pedido 620966542870722972 entregado"])
def test_no_clabe_without_its_check_or_its_word(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("RFC del socio: GOMA850317K21", "GOMA850317K21"),
    (json.dumps({"rfc": "PELJ021129B77"}), "PELJ021129B77"),
    ("facturar al Registro Federal de Contribuyentes PELJ021129B77", "PELJ021129B77"),
    ("CUIT del titular: 27-31456782-5", "27-31456782-5"),
    ("CUIL 20298765439 (repartidor)", "20298765439")])
def test_a_person_s_rfc_or_cuit_after_its_label(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "see RFC 7231 and RFC 9110 for the semantics",
    "RFC: GOMA850317K22",
    "CUIT del restaurante: 30-71234567-1",
    "CUIL: 27-31456782-4"])
def test_no_rfc_or_cuit_of_a_company_or_a_wrong_check(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Chave Pix do entregador: b93ba169-e144-44ee-8f3c-30051428dfad", "b93ba169-e144-44ee-8f3c-30051428dfad"),
    (json.dumps({"pixKey": "2ac38adf-41b0-4915-ba6d-7ff3d84ae56d"}), "2ac38adf-41b0-4915-ba6d-7ff3d84ae56d"),
    ("chave aleatória 2ac38adf-41b0-4915-ba6d-7ff3d84ae56d", "2ac38adf-41b0-4915-ba6d-7ff3d84ae56d"),
    ("PIX (CPF) para repasse: 41827365080", "41827365080")])
def test_a_pix_key_after_a_pix_label(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "trace b93ba169-e144-44ee-8f3c-30051428dfad finished",
    "pagamento via Pix: b93ba169-e144-44ee-8f3c-30051428dfad",
    json.dumps({"pix_txid": "b93ba169-e144-44ee-8f3c-30051428dfad"}),
    "Pix recebido, pedido 41827365081"])
def test_no_pix_key_in_a_bare_uuid_or_a_payment_id(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("mp = mercadopago.SDK('APP_USR-7316402958173346-091521-3c9e1f07a4b28d56e0f9a1b3c7d2e846-582017364')",
     "APP_USR-7316402958173346-091521-3c9e1f07a4b28d56e0f9a1b3c7d2e846-582017364"),
    ("sandbox: TEST-4402918376650123-110304-9af0c2d1e7b3846a5c0d9e2f1a7b8c34-1130942",
     "TEST-4402918376650123-110304-9af0c2d1e7b3846a5c0d9e2f1a7b8c34-1130942"),
    ("la llave de Conekta es key_Rw4TzQ8mPx2LkV9bNc7Hd3", "key_Rw4TzQ8mPx2LkV9bNc7Hd3"),
    ("key_Yb6Nq3Tz9WmK2xPv8Lr5Cs1Df4Gh", "key_Yb6Nq3Tz9WmK2xPv8Lr5Cs1Df4Gh")])
def test_mercado_pago_and_conekta_keys_anywhere(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "APP_USR-0000000000000000-000000-00000000000000000000000000000000-000000000",
    "self.key_generatorForTheModelOutputs = None",
    "cache key_9f2c4e1a7b3d8f60c5e2a1d4 hit"])
def test_no_provider_key_in_placeholders_or_names(text: str) -> None:
    assert _values(text) == []


def test_a_whatsapp_message_id_is_no_token() -> None:
    message = {"from": "5215512345678", "id": "wamid.Qk3xZ9_vT2mL8pWc-4RnY7bHs1JdF6gE0aUoKiN5", "type": "text"}
    assert _values(json.dumps({"messages": [message]})) == []
    assert _values("delivered wamid.HBgNNTIxNTU4OTk0NDMyMRUCABEYEjQ4QjVGRTlGMzM2QUIzMzFGRAA=") == []


def test_a_prefixed_token_beside_it_is_still_read() -> None:
    token = "dop_v1_7f3kQ9zLm2Xp8Rt4Vb6Nw1Yc5Hd0Jg3Ks9Ae2Uf7"
    assert _values(f"deploy with {token}") == [token]


@pytest.mark.parametrize(("text", "value"), [
    ("móbil: 654 218 930", "654 218 930"),
    ("mugikorra 688 140 257", "688 140 257"),
    ("telefonoa: 94 412 36 70", "94 412 36 70"),
    ("pumbyry: (21) 98765-4310", "(21) 98765-4310"),
    ("cel 55 4180 2976", "55 4180 2976"),
    ("contacto: 22 318 4075", "22 318 4075")])
def test_a_phone_after_a_galician_basque_guarani_or_short_spanish_word(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "Cel: 100 000 zł do końca roku",
    "contacto 48213 (registro del CRM)",
    "mugikorra 2024"])
def test_no_phone_after_those_words_without_a_number(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("contato ((31) 98812-4407)", "(31) 98812-4407"),
    ("telefone ((41) 3322-1908) comercial", "(41) 3322-1908"),
    ("teléfono ((81) 8340-2271)", "(81) 8340-2271")])
def test_a_parenthesised_area_inside_parentheses_after_a_phone_word(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize(("text", "value"), [
    ("fono: (+56 9) 6123-4578", "(+56 9) 6123-4578"),
    ("celular ((+56 9) 8450-3317)", "(+56 9) 8450-3317"),
    ("oficina (+52 55) 5280 1946", "(+52 55) 5280 1946"),
    ("(+34) 622 410 387", "(+34) 622 410 387")])
def test_a_country_code_in_parentheses(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["footnote (+1) 2024", "score (+3) 12-7", "(+56 9) only"])
def test_no_phone_in_a_short_signed_figure(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text", ["customer service phone (888) 555-0190", "phone: (800) 555-0134, Mon-Fri"])
def test_a_toll_free_number_in_its_area_parentheses_stays(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("semente 2FA: KQ4ZR7WXNB2MLPC6", "KQ4ZR7WXNB2MLPC6"),
    ("llavor 2FA = N3TQ6WZPLX4RMB7K", "N3TQ6WZPLX4RMB7K"),
    ("semilla TOTP: R5VXM2QKTZ7NPWB4", "R5VXM2QKTZ7NPWB4")])
def test_an_authenticator_seed_after_the_word_seed_and_its_factor(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["semente 2FA: MORANGOS", "semilla de chía, 2 FA 30 gramos"])
def test_no_seed_in_words(text: str) -> None:
    assert _values(text) == []


def test_no_card_inside_an_nfce_access_key() -> None:
    key = "3526 0912 4787 7893 2879 2170 6500 1000 0012 3456 7891"
    assert _values(f"Chave de acesso NFC-e: {key}") == []
    assert _values(f"DANFE NFC-e\n{key}\nConsulte pela chave de acesso") == []


@pytest.mark.parametrize(("text", "value"), [
    ("paid with 4787 7893 2879 2170", "4787 7893 2879 2170"),
    ("tarjeta 4421 8096 7929 0814 vence 04/28 cvv 123", "4421 8096 7929 0814"),
    ("4003 3907 5793 8349", "4003 3907 5793 8349")])
def test_a_card_in_groups_of_four_still_read(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "E-mail: tu@ejemplo.com", "escreva para seu.nome@exemplo.com.br", "correo (ej. tu.correo@ejemplo.com)"])
def test_no_email_in_a_spanish_or_portuguese_hint(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("correo: lucia.paz@ejemplo.com", "lucia.paz@ejemplo.com"), ("e-mail: tu@correo.mx", "tu@correo.mx")])
def test_an_address_at_those_domains_or_of_that_name_still_read(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["telefone: (00) 00000-0000", "celular (11) 99999-9999", "tel. 55 0000 0000"])
def test_no_phone_in_a_form_s_mask(text: str) -> None:
    assert _values(text) == []


def test_a_phone_with_repeated_digits_still_read() -> None:
    assert _values("celular (11) 98888-8881") == ["(11) 98888-8881"]


@pytest.mark.parametrize(("text", "value"), [
    ("document d'identitat: Y4213906K", "Y4213906K"), ("Document d'identitat 47382915V", "47382915V")])
def test_a_dni_or_nie_after_the_catalan_word(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["document d'identitat: 47382915A", "identitat visual del restaurant 2024"])
def test_no_dni_after_it_without_the_check_letter(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Llave privada de la tienda: 5e0c9a7f31d84b26a1f4c83e9b7d2a60", "5e0c9a7f31d84b26a1f4c83e9b7d2a60"),
    ("llave secreta -> 8D41F0B2C97E35A64B1E0D9C72F3A58E", "8D41F0B2C97E35A64B1E0D9C72F3A58E")])
def test_a_key_after_the_spanish_word_llave(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["cerrar la llave de paso antes de las 18:30", "falta una llave en la línea 42"])
def test_no_key_after_llave_in_ordinary_text(text: str) -> None:
    assert _values(text) == []


_ADYEN = "AQEsTk8vRq2wXn5Lp9Dz3Hc7Mf1Yb4Gj6Ue0Ai8Ko2Sr5Vt7Nx==-Pq4Zm8Lw2Rk6Tj0Ys3Hb9Fc5Dn1Gv7Xe==-"


@pytest.mark.parametrize("tail", ["q7T]x!Lm2#Rw9^Zp", "Bv]4Kp$8w;Nz3"])
def test_an_adyen_key_with_a_bracket_inside_its_last_part(tail: str) -> None:
    key = _ADYEN + tail
    assert _values(json.dumps({"memo": f"API key: {key}"})) == [key]


def test_an_adyen_key_ends_before_the_bracket_closing_its_list() -> None:
    key = _ADYEN + "q7TxLm2Rw9Zp"
    assert _values(json.dumps({"keys": [key]})) == [key]


@pytest.mark.parametrize(("text", "value"), [
    ("yaykuna simi: Qm7#rTk2!vLp", "Qm7#rTk2!vLp"),
    ("Ñe'ẽñemi: mandio-pira-kesu41", "mandio-pira-kesu41"),
    ("ñeʼẽñemi=Sopa.paraguaya88", "Sopa.paraguaya88")])
def test_a_password_after_the_quechua_or_guarani_word(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["yaykuna simita qillqay", "ñe'ẽñemi ndoikói"])
def test_no_password_after_those_words_in_a_sentence(text: str) -> None:
    assert _values(text) == []
