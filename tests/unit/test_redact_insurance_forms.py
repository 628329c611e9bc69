"""Personal data as insurance claims desks write it (the forty-fifth corpus's causes): a phone number after "can
be reached on" or a person's possessive (`the witness's number`, Hindi `ग्राहक का नंबर`), an SSN after "gave his
social as" or in a CMS-1500 claim's box 1a (`INSURED'S I.D. NUMBER`), and an ASP.NET session id of letters alone.
Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("The witness can be reached on 07812 345617 after six.", "07812 345617"),
    ("Assessor has been reached at 0161 496 7732 twice.", "0161 496 7732"),
    ("The landlord's number: 01632 961 552", "01632 961 552"),
    ("Please note her number 07956423180 for the callback.", "07956423180"),
    ("Repairer’s number — 0113 247 0245", "0113 247 0245"),
    ("ग्राहक का नंबर 9876012345", "9876012345"),
    ("कृपया मेरा नंबर 07654321098 नोट करें", "07654321098")])
def test_a_phone_number_after_reached_on_or_a_persons_number(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_a_persons_number_inside_json_and_cdata() -> None:
    text = json.dumps({"note": "Loss adjuster's number: 0117 238 4410"})
    assert _values(text) == ["0117 238 4410"]
    assert _values("<Remark><![CDATA[गवाह का नंबर 8123409876]]></Remark>") == ["8123409876"]


@pytest.mark.parametrize("text", [
    "The claim was reached on 2024-03-04 after review.",
    "Agreement reached at 14:30 on 12.03.2024.",
    "Settlement reached on 04/03/2024",
    "The vehicle's number plate was unreadable.",
    "It's number 3 on the list.",
    "पॉलिसी नंबर 9123456780",
    "Claim number 4412345678 was reopened.",
    "Order's number: ticket 2024-118842"])
def test_reached_dates_ids_and_compound_numbers_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Caller gave his social as 512 44 0931 on the line.", "512 44 0931"),
    ("the insured's social was 512-44-0931", "512-44-0931"),
    ("1a. INSURED'S I.D. NUMBER 287650413", "287650413"),
    ("Insured’s ID No. 287-65-0413", "287-65-0413"),
    ('{"box_1a": "INSURED\'S I.D. NUMBER 287650413"}', "287650413")])
def test_an_ssn_given_as_a_social_or_in_a_claim_forms_box_1a(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "Our social as well as our legal team reviewed 14 claims.",
    "INSURED'S I.D. NUMBER 666123456",  # area 666: no SSN
    "INSURED'S I.D. NUMBER 287000413",  # group 00
    "Insured ID 287650413",  # no `'s`, no `number`: a system's own key
    "INSURED'S POLICY GROUP OR FECA NUMBER 287650413"])
def test_other_ids_and_social_as_prose_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text", [
    '{"name": "ASP.NET_SessionId", "value": "qzrwbmkdlhtvcxnpsyfjagoe"}',
    '{"name": "ASP.NET_SessionId", "domain": "portal.example.org", "value": "qzrwbmkdlhtvcxnpsyfjagoe"}',
    "Cookie: ASP.NET_SessionId=qzrwbmkdlhtvcxnpsyfjagoe; lang=en",
    '{"cookies": {"ASP.NET_SessionId": "qzrwbmkdlhtvcxnpsyfjagoe"}}'])
def test_an_aspnet_session_id_of_letters_alone(text: str) -> None:
    assert _values(text) == ["qzrwbmkdlhtvcxnpsyfjagoe"]


@pytest.mark.parametrize("text", [
    '{"name": "ASP.NET_SessionId", "value": "aaaaaaaaaaaaaaaaaaaaaaaa"}',
    "ASP.NET_SessionId=qzrwbmkdlhtvcxnpsyfjag",  # 22 characters, not the format
    '{"name": "ASP.NET_SessionId", "value": ""}',
    "lang_preference=qzrwbmkdlhtvcxnpsyfjagoe"])
def test_placeholders_and_other_shapes_of_it_stay(text: str) -> None:
    assert _values(text) == []
