"""Values of automotive, fleet and EV-charging traces that redaction reads by their public formats: fleet fuel cards
(ISO/IEC 7812-1, major industry identifier 7), national ids under labels written with accented capitals, a `N°` or a
short name, the credential an OCPP SetVariables request sets; and what must stay (digit runs opening with 7 without a
fuel card's label, another OCPP variable's value)."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector
from tracegym.redact.validators import luhn


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector()


def _found(detector: Detector, text: str) -> list[tuple[str, str]]:
    return [(f.rule.name, f.value) for f in detector.find(text)]


def _luhn_complete(partial: str) -> str:
    """`partial` completed by its Luhn check digit."""
    return next(partial + d for d in "0123456789" if luhn(partial + d))


FUEL_16 = _luhn_complete("700412345678901")
FUEL_18 = _luhn_complete("70761098765432101")
FUEL_19 = _luhn_complete("708900112233445566")


@pytest.mark.parametrize("text, value", [
    (f"fuel card {FUEL_16[:4]} {FUEL_16[4:8]} {FUEL_16[8:12]} {FUEL_16[12:]} expires 09/27", None),
    (f"Die Tankkarte {FUEL_18} ist gesperrt", FUEL_18),
    (f"carte carburant n° {FUEL_19}", FUEL_19),
    (f'{{"fleetCardNumber": "{FUEL_16}"}}', FUEL_16),
    (f"karta paliwowa: {FUEL_18[:4]} {FUEL_18[4:8]} {FUEL_18[8:12]} {FUEL_18[12:16]} {FUEL_18[16:]}", None),
])
def test_a_fuel_card_after_its_label_is_found(detector: Detector, text: str, value: str | None) -> None:
    found = _found(detector, text)
    assert any(kind == "card" and (value is None or v == value) for kind, v in found), found


@pytest.mark.parametrize("text", [
    f"order {FUEL_16} shipped",  # a run opening with 7 and no label: no card by itself
    f"fuel card {FUEL_16[:-1]}{(int(FUEL_16[-1]) + 1) % 10}",  # Luhn fails
    "fuel card 7000 0000 0000 0000",
    "fleet card ends in 4821",
])
def test_no_fuel_card_without_its_label_shape_and_check(detector: Detector, text: str) -> None:
    assert not [f for f in _found(detector, text) if f[0] == "card"], text


def _rut(body: int) -> str:
    """A Chilean RUT with its mod-11 check character, dotted."""
    total = sum(int(c) * (2 + k % 6) for k, c in enumerate(reversed(str(body))))
    return f"{body:,}".replace(",", ".") + "-" + "0123456789K0"[11 - total % 11]


def _personnummer(birth: str, serial: str) -> str:
    return f"{birth}-{serial}{next(d for d in '0123456789' if luhn(birth + serial + d))}"


RUT = _rut(15_204_377)
PNR = _personnummer("840317", "512")
NIR = "2 84 11 75 116 042"  # completed by its key below
NIR = f"{NIR} {97 - int(NIR.replace(' ', '')) % 97:02d}"


@pytest.mark.parametrize("text, value", [
    (f"Rol Único Tributario: {RUT}", RUT),  # the label's accented capital, under re.ASCII's case folding
    (f"ROL ÚNICO TRIBUTARIO {RUT}", RUT),
    (f"NUMÉRO DE SÉCURITÉ SOCIALE : {NIR}", NIR),
    (f"| titulaire | N° de sécurité sociale |\n|---|---|\n| C. Roux | {NIR} |", NIR),  # `N°` in a column's name
    (f"förare,pnr\nE. Berg,{PNR}\n", PNR),  # a short name heading its column whole
    (f"| förare | pnr |\n|---|---|\n| E. Berg | {PNR} |", PNR),
    (f"Anteckning: pnr={PNR}", PNR),  # a short name as a key
])
def test_a_national_id_under_an_accented_capital_a_number_sign_or_a_short_name(
        detector: Detector, text: str, value: str) -> None:
    assert ("national_id", value) in _found(detector, text)


@pytest.mark.parametrize("text", [
    f"Rol Único Tributario: {RUT[:-1]}{'1' if RUT[-1] != '1' else '2'}",  # the check character fails
    f"| trip | pnr |\n|---|---|\n| 42 | {PNR[:-1]}{(int(PNR[-1]) + 1) % 10} |",  # Luhn fails
    "| N° de commande | montant |\n|---|---|\n| 2 84 11 75 116 042 17 | 12,00 |",  # no id's column
])
def test_no_national_id_where_the_check_or_the_label_fails(detector: Detector, text: str) -> None:
    assert not [f for f in _found(detector, text) if f[0] == "national_id"], text


BASIC_AUTH = "Qv7-k2Lm:p9Zx_w4Rt.8Hn"
SET_PASSWORD = ('[2,"a1f0c9e2-5b7d-4e31-9c0a-2f6d8e4b1c77","SetVariables",{"setVariableData":[{"attributeValue":'
                f'"{BASIC_AUTH}","component":{{"name":"SecurityCtrlr"}},"variable":{{"name":"BasicAuthPassword"}}}}]}}]')


@pytest.mark.parametrize("text", [
    SET_PASSWORD,
    f"note from the installer: {SET_PASSWORD}",
    '{"message": ' + '"' + SET_PASSWORD.replace('"', '\\"') + '"}',  # the frame inside a JSON string
])
def test_the_password_an_ocpp_setvariables_request_sets_is_found(detector: Detector, text: str) -> None:
    assert any(BASIC_AUTH in v for _kind, v in _found(detector, text))


def test_an_ocpp_setvariables_value_of_another_variable_stays(detector: Detector) -> None:
    text = ('[2,"0b9d","SetVariables",{"setVariableData":[{"attributeValue":"300","component":{"name":"OCPPCommCtrlr"},'
            '"variable":{"name":"HeartbeatInterval"}}]}]')
    assert not _found(detector, text)
