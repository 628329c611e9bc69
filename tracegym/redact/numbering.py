"""A phone number known by its shape alone, with no word beside it: checked against libphonenumber's metadata (the
`phonenumbers` package, maintained from the national regulators' plans), not against a context word.

A number written in groups with a trunk `0` first (`0176 7009 2866`, `0141-330 7834`, `06 71 82 93 04`) is one
when some plan that dials a trunk 0 holds it as a number a person answers (mobile, fixed line, personal, VoIP,
pager) and the writer set its first group apart where that plan's national format does (`0176` | `70092866`,
`0141` | `330 7834`). What tells a phone number from an id is mostly the shape: ids and amounts seldom open with a
single 0 and come in such groups. The plans add less than it seems: with 113 of them, open ones among them (China,
Indonesia, Germany, Austria), 83% of random 11-digit strings led by 0 and grouped 4+7 are some plan's number (90%
of 10-digit ones grouped 3+7); they reject wrong lengths and unassigned prefixes, and name the service numbers.
`00` and a country code first: a valid number of that country. India's mobiles are also written without the
trunk, in two groups of five (`98765 43210`). A toll-free, premium-rate, shared-cost or universal access number is
a business's, not a person's; but one plan's service range is another's area code (`0345…`: universal access in
the UK, Halle in Germany), so a number is taken where any plan reads it as a person's, and left (`service`) only
where none does: NANP's, India's and Australia's toll-free numbers (`1-800…`, `1800…`) after a phone word.
"""

from __future__ import annotations

import functools
import re

import phonenumbers
from phonenumbers import NumberParseException, PhoneMetadata, PhoneNumberFormat, PhoneNumberType

_PERSONAL = frozenset({PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE, PhoneNumberType.FIXED_LINE_OR_MOBILE,
                       PhoneNumberType.PERSONAL_NUMBER, PhoneNumberType.VOIP, PhoneNumberType.PAGER})
_SERVICE = frozenset({PhoneNumberType.TOLL_FREE, PhoneNumberType.PREMIUM_RATE, PhoneNumberType.SHARED_COST,
                      PhoneNumberType.UAN})
_MOBILE = frozenset({PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE_OR_MOBILE})
_GROUP = re.compile(r"\d+")


@functools.cache
def _trunk_regions() -> tuple[str, ...]:
    """The regions whose plans dial a trunk `0` before a national number (113 of libphonenumber's 245)."""
    return tuple(r for r in sorted(phonenumbers.SUPPORTED_REGIONS)
                 if PhoneMetadata.metadata_for_region(r).national_prefix == "0")


@functools.cache
def _ranges(region: str, service: bool) -> re.Pattern[str] | None:
    """One pattern of a plan's national numbers of a person's kinds (or of its service kinds): a screen that
    spares parsing a number in the plans that cannot hold it (parsing in all 113 took 9 ms a number)."""
    meta = PhoneMetadata.metadata_for_region(region)
    kinds = (meta.toll_free, meta.premium_rate, meta.shared_cost, meta.uan) if service else \
        (meta.mobile, meta.fixed_line, meta.personal_number, meta.voip, meta.pager)
    patterns = [k.national_number_pattern for k in kinds if k is not None and k.national_number_pattern]
    return re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None


def _screened(digits: str, regions: tuple[str, ...], service: bool) -> list[str]:
    """The regions among `regions` one of whose ranges holds `digits`, as written or without the plan's trunk
    prefix (`0`, NANP's `1`)."""
    return [r for r in regions if (p := _ranges(r, service)) is not None
            and (p.fullmatch(digits) or digits.startswith(trunk := _trunk(r)) and p.fullmatch(digits[len(trunk):]))]


@functools.cache
def _trunk(region: str) -> str:
    return PhoneMetadata.metadata_for_region(region).national_prefix or "\0"


def _valid(number: phonenumbers.PhoneNumber, region: str | None) -> bool:
    return phonenumbers.is_valid_number(number) if region is None \
        else phonenumbers.is_valid_number_for_region(number, region)


def _of_type(number: phonenumbers.PhoneNumber, region: str | None, types: frozenset[int]) -> bool:
    return _valid(number, region) and phonenumbers.number_type(number) in types


def _first_group(number: phonenumbers.PhoneNumber) -> str:
    """The first group of the number as its plan writes it nationally, without the trunk."""
    group = _GROUP.search(phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL))
    return group.group().lstrip("0") if group else ""


@functools.lru_cache(maxsize=65536)
def grouped_number(digits: str, first: str) -> bool:
    """Whether `digits`, written in groups with `first` as the first, is a person's phone number by its shape (the
    module's docstring)."""
    if digits.startswith("00"):
        number = _parsed("+" + digits[2:], None)
        return number is not None and _of_type(number, None, _PERSONAL)
    regions, types = (_trunk_regions(), _PERSONAL) if digits.startswith("0") else (("IN",), _MOBILE)
    return any((number := _parsed(digits, region)) is not None and _first_group(number) == first.lstrip("0")
               and _of_type(number, region, types) for region in _screened(digits, regions, service=False))


_CLOSED_SERVICE_REGIONS = ("US", "IN", "AU", "NO", "DK", "IS", "EE", "LV")
"""The plans whose service numbers are written with no trunk 0: NANP's `1-800`, India's and Australia's `1800`, and
the closed plans of the Nordics and the Baltics, whose free-of-charge numbers open with 80 (Nkom's and the Danish
Agency's `80x xx xxx`, Iceland's and Estonia's `800 xxxx`, Latvia's `80xx xxxx`) and premium ones with 90."""


@functools.lru_cache(maxsize=65536)
def service(digits: str) -> bool:
    """Whether `digits`, as written in a country (a trunk 0, or none: NANP's `1-800`, India's and Australia's
    `1800`, Norway's `800 xx xxx`), is a toll-free, premium-rate, shared-cost or universal access number of some
    plan and a person's number of none (`010…` is Finland's universal access and Korea's mobiles: a person's)."""
    if digits.startswith("00"):
        number = _parsed("+" + digits[2:], None)
        return number is not None and _of_type(number, None, _SERVICE)
    regions = _trunk_regions() if digits.startswith("0") else _CLOSED_SERVICE_REGIONS
    services = _screened(digits, regions, service=True)
    if not services:
        return False
    readings = [phonenumbers.number_type(number)
                for region in dict.fromkeys(services + _screened(digits, regions, service=False))
                if (number := _parsed(digits, region)) is not None and _valid(number, region)]
    return any(t in _SERVICE for t in readings) and not any(t in _PERSONAL for t in readings)


MOBILE_MONEY_REGIONS = ("KE", "TZ", "UG", "RW", "BI", "CD", "CG", "ET", "SO", "GH", "NG", "CI", "SN", "ML", "BF",
                        "BJ", "TG", "NE", "GN", "SL", "LR", "GM", "CM", "GA", "TD", "CF", "ZM", "ZW", "MW", "MZ",
                        "LS", "MG", "EG", "BD", "PK")
"""Where the wallets that the rules name run (M-Pesa, MTN MoMo, Airtel Money, Orange Money, Wave, telebirr, EcoCash,
Tigo Pesa, OPay, PalmPay; bKash and Nagad; JazzCash and Easypaisa): the markets of the GSMA's State of the Industry
Report on Mobile Money, Sub-Saharan Africa's, Egypt's, Bangladesh's and Pakistan's."""


@functools.lru_cache(maxsize=65536)
def wallet_number(digits: str) -> bool:
    """Whether `digits` is a mobile number of a country where mobile money runs, as written there (its trunk 0, or
    none in a closed plan: Senegal's `77…`, Cameroon's `6…`) or with its country code first and no `+` (the MSISDN
    the wallets' APIs store and call back with): a wallet is named by its owner's phone number, a mobile's."""
    if digits.startswith("00"):
        digits = digits[2:]
    number = _parsed("+" + digits, None)
    if number is not None and _of_type(number, None, _MOBILE) \
            and phonenumbers.region_code_for_number(number) in MOBILE_MONEY_REGIONS:
        return True
    return any((number := _parsed(digits, region)) is not None and _of_type(number, region, _MOBILE)
               for region in _screened(digits, MOBILE_MONEY_REGIONS, service=False))


def _parsed(digits: str, region: str | None) -> phonenumbers.PhoneNumber | None:
    try:
        return phonenumbers.parse(digits, region)
    except NumberParseException:
        return None
