"""Phone numbers known by their grouping and numbering plan (no word beside them), and contact lists' JSON."""

import pytest

from tracegym.redact.detect import Detector


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector()


def _found(detector: Detector, text: str) -> list[str]:
    return [f.value for f in detector.find(text)]


@pytest.mark.parametrize(("text", "number"), [
    ("Sie erreichen mich telefonisch unter 030 5458 4456.", "030 5458 4456"),
    ("Somchai Wongsakul\n☎ T 020 3442 7890  |  Pune", "020 3442 7890"),
    ("Guest name: Dmitri Sokolov\nFunk: 0711 36127879\nArrival 12/03", "0711 36127879"),
    ("C-3782,Sven de Vries,0141-330 7834,R-3782,Offer Extended", "0141-330 7834"),
    ("39853,baseline_arm_1,Emily Carter,0177 70589831,2024-02-19", "0177 70589831"),
    ('{"notes": "\\u2022 K\\u00f6ln\\n0179 27252159\\n\\u2022 SKILLS"}', "0179 27252159"),
    ("Applicant Funk: 0049 711 2154648\nMonthly income: 4,200", "0049 711 2154648"),
    ("Vistula Energia · Köln · 0177-22018161 · www.example-firm.eu", "0177-22018161"),
    ("NOTIFY PARTY: Oliver Hughes  T 0141 327 3954\nPORT OF LOADING", "0141 327 3954"),
    ("Rappel demandé — 06 71 82 93 04 — après 18h", "06 71 82 93 04"),
    ("WhatsApp pe bhejo: 98765 43210", "98765 43210"),
])
def test_a_number_grouped_as_its_plan_writes_it_is_found_without_a_phone_word(detector, text, number):
    assert number in _found(detector, text)


@pytest.mark.parametrize("text", [
    "Freephone 0800 245 0676, lines open 8am-8pm",  # toll-free: a business's
    "Freephone 0800 800 150",  # toll-free in most plans, a mobile in Congo's: the word decides
    "Helpline: 0300 790 6801",  # the UK's non-geographic 03, Pakistan's mobiles
    "IBAN: GB89 ESCA 0668 2308 4601 93 (typo, bounced)",
    "Artikel 07700 900015 x2",
    "Seriennummer 0169 3482434",
    "Order no. 0176 7009 2866 shipped",
    "card 5157 3850 0885 3664 declined",
    "Due 03.12.2024, PO 4555302837",
    "SSN: 016-07-0000 (form validation failed)",
    "|ACK^A01|0681040990|P|2.5.1",  # one run of digits: a control id, no grouping
    "at 0.25 0.5 0.75 and 0 1 2 3 4 5",
])
def test_an_id_or_a_number_of_another_kind_grouped_alike_is_not_a_phone(detector, text):
    assert not [f for f in detector.find(text) if f.rule.label == "PHONE"], text


@pytest.mark.parametrize(("text", "number"), [
    ('{"first_name": "Olena", "phone_numbers": [{"value": "07880050323", "type": "mobile"}]}', "07880050323"),
    ('{"phoneNumbers": [{"value": "415 555 0132", "type": "work"}, {"value": "612 34 56 78", "primary": true}]}',
     "612 34 56 78"),
    ('{"constituent": {"phones": [{"label": "T", "number": "628 555 0147", "primary": true}]}}', "628 555 0147"),
    ('{"items": [{"type": "mobile", "value": "628 555 0147"}]}', "628 555 0147"),
])
def test_a_contact_list_names_its_items_by_the_list_and_their_type(detector, text, number):
    assert number in _found(detector, text)


@pytest.mark.parametrize("label", ["phones", "Phones", "phone_numbers", "phoneNumbers", "mobiles"])
def test_a_plural_phone_word_names_a_number(detector, label):
    assert _found(detector, f"{label}: 628 555 0147") == ["628 555 0147"]
