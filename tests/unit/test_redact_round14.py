"""The round on the thirteenth corpus's misses, on values written here: IBANs of the registry's newer countries and
of the countries that issue them outside it."""

from tracegym.redact.detect import Detector


def _iban(country: str, bban: str) -> str:
    """`country` + ISO 7064 MOD 97-10 check digits + `bban`."""
    digits = "".join(str(int(ch, 36)) for ch in bban + country + "00")
    return f"{country}{98 - int(digits) % 97:02d}{bban}"


def _found(text: str) -> list[str]:
    return [text[f.start:f.end] for f in Detector().find(text)]


def test_ibans_of_newer_registry_and_national_countries_are_found():
    for country, bban in (("IR", "0170000000112233445566"), ("RU", "04452560040702810412345678901"),
                          ("OM", "0180000001299123456"), ("MA", "011519000001205000534921"),
                          ("LY", "002048000020100120361")):
        iban = _iban(country, bban)
        grouped = " ".join(iban[i:i + 4] for i in range(0, len(iban), 4))
        assert _found(f"IBAN {grouped} please") == [grouped], country
        assert _found(f"wire it to {iban}.") == [iban], country


def test_lower_case_compact_saudi_and_iranian_ibans_hold_their_bban_structure():
    sa = _iban("SA", "80ABCD00000608010167").lower()
    ir = _iban("IR", "0620000000203443585001").lower()
    assert _found(f"sheba {ir} / {sa}") == [ir, sa]
    broken = sa[:-1] + ("0" if sa[-1] != "0" else "1")
    assert _found(f"ref {broken}") == []
