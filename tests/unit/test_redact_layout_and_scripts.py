"""A value that reaches a log the way documents and speech reach it: split by a chunk or page marker line between
its label and itself, written in the digits of another script, or read out as words by speech-to-text."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector
from tracegym.redact.pseudonyms import Pseudonyms
from tracegym.redact.tables import Redactor

DETECTOR = Detector()
ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
PERSIAN = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
DEVANAGARI = str.maketrans("0123456789", "०१२३४५६७८९")


def redacted(text: str, is_json: bool = False) -> str:
    redactor = Redactor(DETECTOR, lambda _trace: Pseudonyms(), Pseudonyms, {})
    return redactor.text(text, is_json=is_json)


def luhn_complete(body: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return body + str((10 - total % 10) % 10)


@pytest.mark.parametrize("marker", [
    "--- chunk 12 (tokens 0-512) ---", "[chunk 3/8]", "=== Page 2 ===", "<!-- PageBreak -->", "<!-- page 4 -->",
    "Page 3 of 12", "## Page 7 ##", "***** page break *****"])
def test_a_password_split_from_its_label_by_a_marker_line_is_found(marker: str) -> None:
    text = f"Staging access\nspring.datasource.password=\n{marker}\nrXmRKu$NLVEIAW\nrotate quarterly"
    assert "rXmRKu$NLVEIAW" in DETECTOR.find(text)[0].value
    out = redacted(text)
    assert "rXmRKu" not in out and "NLVEIAW" not in out
    assert out.startswith("Staging access\nspring.datasource.password=") and out.endswith("\nrotate quarterly")


def test_the_split_is_read_in_json_text_and_after_a_form_feed() -> None:
    carried = json.dumps({"chunks": "adminUser: svc\nadminPassword: \n--- chunk next ---\nBadger-Piwo64!"})
    out = redacted(carried, is_json=True)
    assert "Badger-Piwo64" not in out and json.loads(out)["chunks"].startswith("adminUser: svc\n")
    assert "Zq8wR4#tyu77" not in redacted("MYSQL_ROOT_PASSWORD: \f\nZq8wR4#tyu77 end")


def test_marker_lines_alone_make_no_finding() -> None:
    for text in ("Total: 45\n--- chunk 2 ---\n67 items", "Introduction\n=== Page 2 ===\nThe service handles 4000 "
                 "requests", "see section 4\n<!-- PageBreak -->\n2024 results\nPage 3 of 12\n"):
        assert DETECTOR.find(text) == []


@pytest.mark.parametrize("table", [ARABIC_INDIC, PERSIAN, DEVANAGARI])
def test_numbers_in_the_digits_of_other_scripts_are_found(table: dict[int, int]) -> None:
    phone = "0912 345 6789".translate(table)
    found = DETECTOR.find(f"شماره موبایل: {phone}")
    assert [f.value for f in found] == [phone]
    card = " ".join(luhn_complete("453914880343646")[i:i + 4] for i in range(0, 16, 4)).translate(table)
    assert card not in redacted(f"Card number: {card} exp 09/27")


def test_full_width_digits_before_letters_fold_as_before() -> None:
    assert [f.value for f in DETECTOR.find("Tel: ０１７６ ７００９ ２８６６ ａｂｃ")] == ["０１７６ ７００９ ２８６６"]
    assert DETECTOR.find("１２３ａｂｃ and ٣٤٥") == []


def test_a_wrong_check_in_other_digits_stays_a_number() -> None:
    good = luhn_complete("453914880343646")
    bad = (good[:-1] + str((int(good[-1]) + 1) % 10)).translate(ARABIC_INDIC)
    assert DETECTOR.find(f"رقم الطلب {bad}") == []


@pytest.mark.parametrize(("text", "spoken"), [
    ("my number is oh seven four nine three nine four seven five five two",
     "oh seven four nine three nine four seven five five two"),
    ("yeah the phone number is six four seven double nine three double nine five six</v>",
     "six four seven double nine three double nine five six"),
    ("Meine Handynummer ist null eins sieben sechs, drei zwei eins vier fünf sechs sieben",
     "null eins sieben sechs, drei zwei eins vier fünf sechs sieben"),
    ("mi número de teléfono es seis uno cero, dos tres cuatro, cinco seis siete ocho",
     "seis uno cero, dos tres cuatro, cinco seis siete ocho")])
def test_a_phone_number_read_out_as_words_is_found(text: str, spoken: str) -> None:
    assert [f.value for f in DETECTOR.find(text)] == [spoken]
    out = redacted(text)
    assert spoken not in out and out.startswith(text[:text.index(spoken)])


def test_counting_and_short_runs_of_digit_words_stay() -> None:
    for text in ("count: one two three four five six seven eight", "I have one two three apples",
                 "the phone has two cameras, one flash and six speakers"):
        assert DETECTOR.find(text) == []


def test_a_token_a_chunk_overlap_repeats_is_found_on_both_sides() -> None:
    token = "sk-proj-" + "Vx9mQ2pLz77aB3cD4eF5gH6iJ7kL8mN9oPq1Rs2Tu3Vw"
    text = f"[chunk 10 | chars 1024-2048]\n... use {token}\n[chunk next | overlap 128]\n{token} for the CI bot"
    assert [f.value for f in DETECTOR.find(text)] == [token, token]
    assert token[8:] not in redacted(text)
