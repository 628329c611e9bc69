"""Values as people-process records hold them (issue 40, the thirty-second corpus's causes): a form's box below
its label, Microsoft's five-by-five recovery codes with their label after them, an application's `<Name>Session`
cookie, a password after an account and `pass:`, a generated password of letters and symbols in prose. Values
written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("REFERENCES AND CONTACT DETAILS\n\tNIE\n[ X1234567L ]\n", "X1234567L"),
    ("Documento de identidad\n[ 12345678Z ]", "12345678Z"),
    (json.dumps({"Additional_Info": "Documento de identidad\n[ 12345678Z ]"}), "12345678Z")])
def test_an_id_in_a_forms_box_below_its_label(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize(("text", "value"), [
    ("Private note: 7QTNB-K4WYX-D9M2T-H8R3C-WJP6V (Microsoft account recovery code)", "7QTNB-K4WYX-D9M2T-H8R3C-WJP6V"),
    ("Codice: 7QTNB-K4WYX-D9M2T-H8R3C-WJP6V", "7QTNB-K4WYX-D9M2T-H8R3C-WJP6V")])
def test_a_five_by_five_recovery_code_anywhere(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values("ref ABCDE-FGHIJ-KLMNO-PQRST-UVWXY") == []


def test_an_applications_name_session_cookie() -> None:
    text = "Cookie: lang=en; MoodleSession=k3v9q1x0m2r8t5w7b4n6c1z0a9; _ga=GA1.2.12345678.1767225600"
    assert _values(text) == ["k3v9q1x0m2r8t5w7b4n6c1z0a9"]


@pytest.mark.parametrize(("text", "value"), [
    ("Court e-filing account jdoe71@efile — pass: 7bQx_vO2C9+", "7bQx_vO2C9+"),
    ("Temporary password for the candidate portal: Qwe#RtyUioP#*Asd=", "Qwe#RtyUioP#*Asd=")])
def test_a_password_after_an_account_or_in_prose(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values("Test account demo — pass: true") == []
    assert _values("the password for this step: Click-Here") == []
