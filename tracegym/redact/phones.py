"""National telephone numbering plans as one table, from the ITU-T E.164 assignments and the plans the national
regulators publish: what a phone number written after a context word (`phone`, `Handy`, `puhelin`) must look like.

Each plan gives its country code, the trunk prefixes dialled before a national number inside the country (`0`
in most of Europe, `06` in Hungary, `8` in Russia and Kazakhstan, none in the closed plans of Denmark, Norway,
Portugal, Spain, Singapore, Chile, ...), the lengths of its national significant numbers (NSN) and the digits an
NSN may start with. A number written nationally is one when some plan reads it; one written with `+` or `00` and
a country code the table holds must fit that plan; other country codes keep E.164's bounds (8 to 15 digits).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Plan:
    """One country's numbering plan."""

    country: str
    """ISO 3166 alpha-2."""
    code: str
    """E.164 country code."""
    trunks: tuple[str, ...]
    """Prefixes dialled before the NSN inside the country; `""` when numbers are written without one too (a closed
    plan, or mobiles written without the 0)."""
    lengths: tuple[int, int]
    """Shortest and longest NSN."""
    leading: str
    """The digits an NSN starts with."""
    international: str = ""
    """A prefix dialled after the country code from abroad only (Argentina's mobile `9`)."""
    runs: bool = True
    """Whether its numbers are written in one run of digits too, as well as in groups; False where the plan's NSNs
    are as short as ids and people group them (Iceland's and Estonia's seven digits, `555 1234`): seven digits in
    one run after a phone word are a ticket's, an extension's or a record's."""
    groups: tuple[int, ...] = ()
    """The sizes of the groups its numbers are written in, where the plan's grouping is all that tells them from
    another plan's short numbers or an id's groups (the Maldives' `964-3318`, not `96-43318`); empty: any."""

    def national(self, number: str, groups: tuple[int, ...] = ()) -> bool:
        """Whether `number` (digits only, written in groups of the sizes `groups` where known) is written as this
        plan's national numbers are."""
        if self.groups and groups != self.groups:
            return False
        return any(number.startswith(t) and self._nsn(number[len(t):]) for t in self.trunks)

    def from_abroad(self, number: str) -> bool:
        """Whether `number` (digits after the country code) is one of this plan's NSNs."""
        if self.international and number.startswith(self.international):
            number = number[len(self.international):]
        return self._nsn(number) or any(t and number.startswith(t) and self._nsn(number[len(t):])
                                        for t in self.trunks)  # `+44 020 …`: a trunk written anyway

    def _nsn(self, nsn: str) -> bool:
        return self.lengths[0] <= len(nsn) <= self.lengths[1] and nsn[:1] in tuple(self.leading)


_ANY = "123456789"
PLANS: tuple[Plan, ...] = (
    Plan("GB", "44", ("0",), (9, 10), "123578"), Plan("FR", "33", ("0",), (9, 9), _ANY),
    Plan("DE", "49", ("0",), (6, 11), _ANY), Plan("IN", "91", ("0", ""), (10, 10), "6789"),
    Plan("IN", "91", ("0",), (10, 10), _ANY), Plan("AU", "61", ("0",), (9, 9), "23478"),
    Plan("BR", "55", ("0",), (10, 11), _ANY), Plan("ES", "34", ("",), (9, 9), "6789"),
    Plan("IT", "39", ("",), (6, 11), "03"), Plan("JP", "81", ("0",), (9, 10), _ANY),
    Plan("NL", "31", ("0",), (9, 9), _ANY), Plan("SE", "46", ("0",), (7, 9), _ANY),
    Plan("ZA", "27", ("0",), (9, 9), "12345678"), Plan("MX", "52", ("",), (10, 10), _ANY),
    Plan("PL", "48", ("",), (9, 9), _ANY), Plan("PT", "351", ("",), (9, 9), "2389"),
    Plan("RO", "40", ("0",), (9, 9), "2378"), Plan("HU", "36", ("06",), (8, 9), _ANY),
    Plan("FI", "358", ("0",), (5, 12), _ANY), Plan("DK", "45", ("",), (8, 8), "23456789"),
    Plan("NO", "47", ("",), (8, 8), "23456789"), Plan("UA", "380", ("0",), (9, 9), "3456789"),
    Plan("TH", "66", ("0",), (8, 9), "23456789"), Plan("MY", "60", ("0",), (8, 10), _ANY),
    Plan("PH", "63", ("0",), (8, 10), "23456789"), Plan("NG", "234", ("0",), (8, 10), _ANY),
    Plan("KE", "254", ("0",), (9, 9), "1234567"), Plan("EG", "20", ("0",), (8, 10), _ANY),
    Plan("SA", "966", ("0",), (8, 9), _ANY), Plan("AE", "971", ("0",), (8, 9), "2345679"),
    Plan("AR", "54", ("0",), (10, 12), _ANY, international="9"), Plan("CL", "56", ("",), (9, 9), "23456789"),
    Plan("CO", "57", ("",), (10, 10), "36"), Plan("PE", "51", ("", "0"), (8, 9), _ANY),
    Plan("NZ", "64", ("0",), (8, 10), "234679"), Plan("IE", "353", ("0",), (7, 9), _ANY),
    Plan("AT", "43", ("0",), (5, 13), _ANY), Plan("CH", "41", ("0",), (9, 9), "23456789"),
    Plan("BE", "32", ("0",), (8, 9), _ANY), Plan("SG", "65", ("",), (8, 8), "3689"),
    Plan("RU", "7", ("8",), (10, 10), "3489"), Plan("KZ", "7", ("8",), (10, 10), "67"),
    Plan("CN", "86", ("0",), (9, 11), _ANY), Plan("CN", "86", ("",), (11, 11), "1"),
    Plan("ID", "62", ("0",), (8, 12), "23456789"), Plan("KR", "82", ("0",), (8, 10), "1234567"),
    Plan("VN", "84", ("0",), (9, 10), "235789"), Plan("TR", "90", ("0",), (10, 10), "2345"),
    Plan("IL", "972", ("0",), (8, 9), "2345789"), Plan("GR", "30", ("",), (10, 10), "26"),
    Plan("CZ", "420", ("",), (9, 9), "2345679"), Plan("QA", "974", ("",), (8, 8), "34567"),
    Plan("PK", "92", ("0",), (9, 10), "23456789"), Plan("BD", "880", ("0",), (8, 10), _ANY),
    Plan("KW", "965", ("",), (8, 8), "2569"), Plan("BH", "973", ("",), (8, 8), "1367"),
    Plan("OM", "968", ("",), (8, 8), "279"), Plan("TN", "216", ("",), (8, 8), "234579"),
    Plan("MA", "212", ("0",), (9, 9), "567"), Plan("DZ", "213", ("0",), (8, 9), "234567"),
    Plan("IS", "354", ("",), (7, 7), "45678", runs=False), Plan("EE", "372", ("",), (7, 8), "345678", runs=False),
    Plan("GH", "233", ("0",), (9, 9), "235"), Plan("UG", "256", ("0",), (9, 9), "2347"),
    Plan("TZ", "255", ("0",), (9, 9), "2467"), Plan("RW", "250", ("0",), (9, 9), "27"),
    Plan("ET", "251", ("0",), (9, 9), "12345789"), Plan("ZM", "260", ("0",), (9, 9), "25679"),
    Plan("SN", "221", ("",), (9, 9), "37"), Plan("CI", "225", ("",), (10, 10), "02"),
    Plan("CM", "237", ("",), (9, 9), "26"),
    Plan("HT", "509", ("",), (8, 8), "234"), Plan("GT", "502", ("",), (8, 8), "234567"),
    Plan("HN", "504", ("",), (8, 8), "23789"), Plan("SV", "503", ("",), (8, 8), "267"),
    Plan("NI", "505", ("",), (8, 8), "2578"), Plan("CR", "506", ("",), (8, 8), "245678"),
    Plan("PA", "507", ("",), (7, 8), "234567", runs=False), Plan("BO", "591", ("",), (8, 8), "234567"),
    Plan("LI", "423", ("",), (7, 7), "237", runs=False), Plan("LI", "423", ("",), (9, 9), "6"),
    Plan("MV", "960", ("",), (7, 7), "3679", runs=False, groups=(3, 4)),
)
"""The plans of the countries the docs and the corpora name (NANP and Brazil's DDD grammar are read apart:
`nanp`, `brazil`). Trunk-0 plans with open lengths (Germany, Austria, Finland) take most numbers that start
with 0; the closed plans are what tell an 8-digit Danish number from an id. The Gulf's closed eight-digit plans
(CRA Qatar, CITRA Kuwait, TRA Bahrain, TRA Oman: mobiles 3, 5, 6, 7, 9 and fixed lines 1, 2, 4 by country), Tunisia's
(INT: mobiles 2, 4, 5, 9, fixed 3 and 7), Morocco's (ANRT: trunk 0, nine digits, fixed 5, mobiles 6 and 7) and
Algeria's (ARPCE: trunk 0, fixed lines of eight digits 2-4, mobiles of nine 5-7) read a number written with its
country code and no `+` (`973 1729 3456`). Iceland's (Fjarskiptastofa) and Estonia's (TTJA) are closed plans of
seven-digit numbers, written with no trunk: Iceland's geographic 4xx-5xx and mobile 6xx-8xx; Estonia's geographic
3xx, 4xx, 6xx and 7xx, its mobiles 5… in seven or eight digits and 8… in eight. Their service ranges (`800 xxxx`
free of charge) are named by `numbering.service`. Sub-Saharan Africa's plans read the MSISDN that M-Pesa, MTN MoMo,
Airtel Money and the SMS gateways store and call back with, the country code and no `+` (`233244123456`): trunk 0
and nine digits in Ghana (NCA: fixed 3, mobiles 2 and 5), Uganda (UCC: fixed 2-4, mobiles 7), Tanzania (TCRA: fixed
2, VoIP 41, mobiles 6-7), Rwanda (RURA: fixed 2, mobiles 7), Ethiopia (ECA: fixed 11-58, mobiles 7-9) and Zambia
(ZICTA: fixed 21, VoIP 63, mobiles 5, 7, 9); closed plans of nine digits in Senegal (ARTP: fixed 3, mobiles 7) and
Cameroon (ART: fixed 2, mobiles 6), and Côte d'Ivoire's of ten (ARTCI, since 2021: mobiles 01, 05, 07, fixed 2x).
Central America's, Haiti's and Bolivia's are closed plans of eight digits (CONATEL Haiti: fixed 2, mobiles 3 and 4;
SIT Guatemala: fixed 2, 6, 7, mobiles 3-5; CONATEL Honduras: fixed 2, mobiles 3, 7-9; SIGET El Salvador: fixed 2,
mobiles 6 and 7; TELCOR Nicaragua: fixed 2, mobiles 5, 7, 8; SUTEL Costa Rica: fixed 2 and 4, mobiles 5-8; ATT
Bolivia: fixed 2-4 with the area, mobiles 6 and 7), Panama's (ASEP) of seven-digit fixed lines 2-5 and 7 and
eight-digit mobiles 6…, grouped (`255-4552`); they read a number written after its country code in parentheses
(`(509) 3412-5678`), as the region writes the code it dials from abroad. Liechtenstein's (Amt für Kommunikation) is
closed too, with no trunk: seven digits, fixed lines 2xx and 3xx and mobiles 7xx, written in Swiss groups
(`738 24 84`), and mobiles of nine digits 6xx. The Maldives' (CA Maldives) is closed too, with no trunk: seven
digits, fixed lines 3xx and 6xx and mobiles 7xx and 9xx, read only as written there, 3-4 (`964-3318`): seven
digits opening with 9 in other groups are no plan's."""
_BY_CODE = {p.code: [q for q in PLANS if q.code == p.code] for p in PLANS}


def national(number: str, grouped: bool = True, groups: tuple[int, ...] = ()) -> bool:
    """Whether `number` (digits only, as written in a country: no `+`, no `00`) is a number of some plan; `grouped`:
    whether it was written in groups (the plans whose numbers are grouped alone read it only then); `groups`: the
    sizes of those groups (the plans that name their grouping read it only in that one)."""
    if len(number) == 11 and number[0] == "1" and nanp(number[1:]):
        return True  # NANP with the long-distance prefix
    return nanp(number) or brazil(number) or any(p.national(number, groups) for p in PLANS if grouped or p.runs)


def international(number: str) -> bool:
    """Whether `number` (the digits after `+` or `00`) is a number: a country code of the table and one of its
    plan's NSNs, or another country code and 8 to 15 digits in all (E.164)."""
    for size in (1, 2, 3):
        plans = _BY_CODE.get(number[:size])
        if plans:
            return any(p.from_abroad(number[size:]) for p in plans)
    return 8 <= len(number) <= 15


def with_country_code(head: str, number: str) -> bool:
    """Whether `number` (digits only) is written with its country code `head` first and no `+` or `00` before it
    (`91-98765-43210`): a country code of the table whose plan reads the rest."""
    plans = _BY_CODE.get(head)
    return bool(plans) and number.startswith(head) and any(p.from_abroad(number[len(head):]) for p in plans)


def nanp(number: str) -> bool:
    """NANP: area code and exchange [2-9]XX, neither of them N11."""
    return len(number) == 10 and number[0] in "23456789" and number[3] in "23456789" \
        and number[1:3] != "11" and number[4:6] != "11"


def brazil(number: str) -> bool:
    """Anatel: a two-digit DDD area code (11-99, no 0), then nine digits starting 9 (mobile) or eight starting
    2-5 (landline)."""
    ddd, rest = number[:2], number[2:]
    if "0" in ddd:
        return False
    return len(rest) == 9 and rest[0] == "9" or len(rest) == 8 and rest[0] in "2345"
