"""The fifty-fourth blind redaction corpus: real estate and property management in the Gulf, Turkey and North Africa
(listings, tenancy contracts, rent collection, maintenance requests, owner statements and guest messaging), written
from the formats' public specifications by someone who read neither the detection rules nor the other corpora.

Carriers (the `form` head): `pm` (Yardi/AppFolio/Buildium-style tenant, lease and work-order records as JSON),
`ota` (Airbnb, Booking.com and Hostaway/Guesty-style channel-manager webhooks, JSON), `listing` (Bayut, Property
Finder, Sahibinden, Avito, Aqar-style listing JSON), `gateway` (PayTabs, Checkout.com, HyperPay, Tap, Fawry, iyzico
and CMI payment callbacks, JSON), `lock` (smart-lock and access-control events, JSON), `tool` (the agent's own tool
results, JSON), `contract` (Ejari/Ejar tenancy contracts as PDF-extracted text), `statement` (owner statements as
text), `whatsapp` and `sms` (guest threads), `email`, `csv` (exports), `env` and `yaml` (the agent's integration
configs), `log` (service logs), `cli` (commands and their output), `http` (request headers), `reply` (the agent's
own replies), `pem` (key files) and `bare` (a phone number with no context word, the only use of that head).
The near misses travel in the same carriers, save that their e-mails name the sending desk without an address.
The style (the tail) names how the value is written: `intl`, `national`, `spaced`, `compact`, `arabic_indic`,
`persian_digits`, `fullwidth`, `zero_width`, `urlencoded`, `json_u`, `lower`, `upper`, ...

Formats and their sources: AWS access key ids (AKIA/ASIA + 16 base32 characters) and 40-character secret access
keys as the IAM user guide prints them; Slack incoming webhooks (`hooks.slack.com/services/T…/B…/…`), Discord
(`discord.com/api/webhooks/<snowflake>/<68-char token>`), Microsoft Teams (`webhook.office.com/webhookb2/…`),
Telegram Bot API (`api.telegram.org/bot<id>:<35 chars>/sendMessage`), Google Chat (`key=…&token=…`), Make
(`hook.<zone>.make.com/<32>`) and Zapier (`hooks.zapier.com/hooks/catch/<n>/<id>/`) as their docs print them;
Stripe `whsec_` signing secrets and `sk_live_`/`rk_live_` keys; SendGrid `SG.<22>.<43>`; Google API keys
`AIza` + 35; OpenAI `sk-proj-`; Twilio API key SIDs `SK` + 32 hex; Mailgun `key-` + 32 hex; GitHub tokens with their
CRC32 base62 checksum (GitHub's 2021 token format); Slack `xoxb-` bot tokens; Google OAuth `ya29.` access and
`1//` refresh tokens, Meta (WhatsApp Cloud API) `EAA` tokens, Zoho `1000.<hex>.<hex>` tokens; JWTs (RFC 7519,
base64url of RFC 7515); session cookies of PHP, Express (`connect.sid` signed `s:`), Laravel, ASP.NET, Java and
Django; PEM private keys (RFC 7468) holding PKCS#1, SEC1 and PKCS#8 DER (X.690) and OpenSSH `openssh-key-v1`
keys (OpenSSH PROTOCOL.key); TOTP seeds in base32 (RFC 4648) and Google Authenticator's `otpauth://` URI;
connection strings of PostgreSQL and MySQL URIs, MongoDB `mongodb+srv`, Redis, AMQP, SQL Server ADO.NET keywords,
Azure Storage `AccountKey` and Service Bus `SharedAccessKey`; card numbers with the Luhn check (ISO/IEC 7812) on
Visa, Mastercard, Amex, Saudi mada and Turkish Troy ranges; IBANs with ISO 13616 MOD 97-10 check digits on the
SWIFT IBAN registry's structures for AE, SA, QA, KW, BH, TR, EG, TN, JO, FR, DE and GB; US SSNs by the SSA's
rules (no area 000, 666 or 9xx, no group 00, no serial 0000); phone numbers on the ITU-T E.164 national
numbering plans of each country (NANP, Ofcom, ARCEP, BNetzA, TRAI, and those of the UAE (TDRA), Saudi Arabia
(CST), Qatar (CRA), Kuwait (CITRA), Bahrain (TRA), Oman (TRA), Turkey (BTK), Egypt (NTRA), Morocco (ANRT),
Tunisia (INT) and Algeria (ARPCE)), mobile and geographic ranges as published.

National ids (outside the target): Turkish T.C. Kimlik No (11 digits, the tenth and eleventh digits by the
published sums), Saudi national id and Iqama (10 digits starting 1 or 2, the Luhn-like check of the Absher/NIC
algorithm), Emirates ID (784-year-seven digits-Luhn check over the 15 digits), Israeli Teudat Zehut (9 digits,
weights 1-2 as the Population Authority publishes). Egyptian and Moroccan ids are left out: no check algorithm is
published for them.

Judgements: `secret` is only what must not survive redaction, verbatim as it stands in `text`: a password alone
(not its name), the secret access key (not the public AKIA id), a webhook URL's token segment, a connection
string's password or key, a cookie's value, a key's value without its label, the base64 body of a PEM key, an
account number with its check digits (the IBAN), a phone number, an e-mail address. For JSON carriers the text is
a JSON document whose string holds the value as `json.dumps` escapes it (with `ensure_ascii` on in some, so
non-ASCII values stand as `\\uXXXX`), and `secret` is the decoded value. The `json_u` style of `disguised` is a raw
JSON body echoed in a plain-text log: the secret is the escaped sequence as it stands.

Languages: Arabic (Gulf, Egyptian, Maghrebi; Arabic-Indic digits in some values and context), Turkish, French,
Farsi (Persian digits in some values), Hebrew, Urdu, Hindi, Malayalam, Tagalog, Russian and English.

Near misses: booking and confirmation codes, Ejari/Ejar contract numbers, work-order, invoice and ticket ids,
listing and permit numbers, request and trace ids, digests, UUIDs, versions, timestamps, coordinates and
measurements, public toll-free numbers and SMS short codes named as such, company tax numbers with their check
digits (Turkish VKN), Luhn-invalid card-like numbers, IBANs with wrong check digits, masked values, placeholders,
the vendors' documented example keys, CSS and code identifiers, and paths and URLs without credentials; all in the
same carriers as the cases, with no secret and no personal data.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from benchmarks.corpus_formats import (
    B62,
    b64url,
    bban,
    crc_token,
    der,
    der_int,
    der_seq,
    digits,
    group,
    group_card,
    iban_check,
    iban_ok,
    luhn_digit,
    luhn_ok,
    openssh_ed25519_blob,
    pick,
)

SEED = 54
PER_KIND = 100
OUTSIDE_TARGET = frozenset({"tr_kimlik", "sa_national_id", "emirates_id", "il_teudat_zehut"})

HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
ARABIC_DIGITS = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
PERSIAN_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"


@dataclass(frozen=True)
class Case:
    kind: str
    form: str
    secret: str
    text: str
    is_json: bool

    @property
    def carried(self) -> str:
        return self.text


@dataclass(frozen=True)
class Value:
    """A value to carry: `value` as written (holds `secret`), `key` a field name for structured carriers, `label`
    the context words for text carriers."""
    style: str
    secret: str
    value: str
    key: str
    label: str


# ---- the domain's furniture -------------------------------------------------------------------------------------

BUILDINGS = ["Marina Gate 2", "Burj Vista 1", "Al Reem Tower B", "Kingdom Residence", "Pearl Tower 18",
             "Salwa Gardens", "Ataköy Konakları", "Maslak 1453 A Blok", "Zamalek Nile View", "Résidence Anfa Park",
             "Les Jardins du Lac", "Hydra Heights", "Seef Lagoon", "Al Mouj Marina", "Al Khuwair Villas 7",
             "Lusail Waterfront 3", "Sharq Plaza", "Palm Jumeirah Villa 14", "JVC Bloom Heights", "Olaya Court"]
CITIES = ["Dubai", "Abu Dhabi", "Riyadh", "Jeddah", "Doha", "Kuwait City", "Manama", "Muscat", "Istanbul", "Izmir",
          "Cairo", "New Cairo", "Casablanca", "Marrakech", "Tunis", "Algiers", "Sharjah", "Antalya"]
FIRST = ["ahmed", "fatima", "omar", "mariam", "yusuf", "aisha", "khalid", "noura", "mehmet", "zeynep", "emre",
         "elif", "youssef", "salma", "karim", "imane", "rania", "tarek", "sana", "rajesh", "priya", "anil",
         "maria", "jose", "dmitri", "olga", "reza", "shirin", "noam", "yael", "bilal", "hina"]
LAST = ["alharbi", "almansouri", "alsabah", "khalifa", "yilmaz", "demir", "kaya", "elsayed", "hassan", "benali",
        "elamrani", "trabelsi", "bouaziz", "haddad", "nair", "menon", "sharma", "santos", "reyes", "ivanov",
        "petrova", "karimi", "mizrahi", "cohen", "qureshi", "alkuwari", "albusaidi", "aldosari"]
COMPANIES = ["dunesproperties", "gulfkeys", "nakheelhomes-mgmt", "emlakpark", "nilehomes", "atlasimmo",
             "carthage-habitat", "qatarstays", "bayviewpm", "saharalets"]


def unit(rng: random.Random) -> str:
    return f"{rng.choice('ABCDEFG')}-{rng.randint(1, 48)}{rng.randint(1, 20):02d}"


def booking(rng: random.Random) -> str:
    return "HM" + pick(rng, "ABCDEFGHJKLMNPQRSTUVWXYZ23456789", 8)


def stamp(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}" \
           f":{rng.randint(0, 59):02d}Z"


# ---- carriers --------------------------------------------------------------------------------------------------

def json_doc(rng: random.Random, head: str, key: str, value: str) -> dict:
    """A JSON document of carrier `head` holding {key: value} where that carrier would hold it."""
    if head == "pm":
        return {"tenant_id": f"T-{digits(rng, 6)}", "unit": unit(rng), "property": rng.choice(BUILDINGS),
                "lease": {"start": "2026-01-01", "term_months": rng.choice([6, 12, 24]),
                          "rent": {"amount": rng.randint(30, 400) * 500, "currency": rng.choice(["AED", "SAR",
                                                                                                  "QAR", "TRY"])}},
                "contact": {key: value}}
    if head == "ota":
        return {"event": rng.choice(["reservation.created", "reservation.updated", "message.received"]),
                "channel": rng.choice(["airbnb", "booking.com", "vrbo"]), "listing_id": digits(rng, 9),
                "reservation": {"confirmation_code": booking(rng), "check_in": "2026-04-12",
                                "nights": rng.randint(1, 9), "guest": {key: value}}}
    if head == "listing":
        return {"listing_id": f"{rng.choice(['BY', 'PF', 'SH', 'AV'])}-{digits(rng, 8)}",
                "city": rng.choice(CITIES), "bedrooms": rng.randint(0, 5), "size_sqm": rng.randint(35, 420),
                "agent": {"agency": rng.choice(COMPANIES), key: value}}
    if head == "gateway":
        return {"tran_ref": f"TST{digits(rng, 13)}", "cart_id": f"RENT-{digits(rng, 6)}",
                "payment_result": {"response_status": "A", "response_message": "Authorised"},
                "customer_details": {key: value}}
    if head == "lock":
        return {"device_id": f"lock-{pick(rng, HEX, 8)}", "event": rng.choice(["unlock", "code_added", "battery_low"]),
                "ts": stamp(rng), "meta": {key: value}}
    return {"tool": rng.choice(["get_tenant", "read_integration", "fetch_booking", "lookup_owner"]),
            "ok": True, "result": {key: value}}


JSON_HEADS = ("pm", "ota", "listing", "gateway", "lock", "tool")
TEXT_HEADS = ("whatsapp", "sms", "email", "contract", "statement", "log", "reply")


def text_doc(rng: random.Random, head: str, line: str, sender_address: bool = True) -> str:
    """`line` in a text carrier of kind `head`. An e-mail's From names its sender by address, or (for the near
    misses, which must hold no e-mail address) by the desk's name only."""
    if head == "whatsapp":
        return f"[{rng.randint(1, 28):02d}/03/2026, {rng.randint(7, 23)}:{rng.randint(0, 59):02d}] " \
               f"{rng.choice(['Guest', 'ضيف', 'Misafir', 'Host'])}: {line}"
    if head == "sms":
        return f"SMS {rng.randint(7, 23)}:{rng.randint(0, 59):02d} — {line}"
    if head == "email":
        company = rng.choice(COMPANIES)
        sender = f"leasing@{company}.com" if sender_address else f"Leasing desk ({company})"
        return (f"From: {sender}\nSubject: "
                f"{rng.choice(['Tenancy renewal', 'Work order', 'Owner statement', 'Re: check-in'])} "
                f"{unit(rng)}\n\n{rng.choice(['Hello,', 'مرحبا،', 'Merhaba,', 'Bonjour,'])}\n{line}\n\n"
                f"{rng.choice(['Regards', 'مع التحية', 'Saygılarımızla', 'Cordialement'])}")
    if head == "contract":
        return (f"Tenancy Contract / عقد إيجار — {rng.choice(BUILDINGS)}, {rng.choice(CITIES)}\n"
                f"Clause {rng.randint(3, 19)}.\n{line}\nAnnual rent: {rng.randint(30, 400) * 500:,}")
    if head == "statement":
        return (f"OWNER STATEMENT  03/2026  {rng.choice(BUILDINGS)}\nGross rent  {rng.randint(4, 90) * 1000:,}.00\n"
                f"Management fee  {rng.randint(2, 9)}%\nNotes: {line}")
    if head == "log":
        return f"{stamp(rng)} INFO {rng.choice(['channel-sync', 'rent-collector', 'guest-msg', 'owner-portal'])} {line}"
    return f"{rng.choice(['Done —', 'تم —', 'Tamam —', 'C’est fait —', 'Here it is:'])} {line}"


def env_key(key: str) -> str:
    return "".join(c if c.isalnum() and c.isascii() else "_" for c in key).upper().strip("_")


def carry(rng: random.Random, i: int, v: Value, heads: tuple[str, ...] = TEXT_HEADS, structured: bool = False
          ) -> tuple[str, str, bool]:
    """(form, text, is_json): every third case as JSON, the rest in a text carrier (or env/yaml/csv when
    `structured`)."""
    if i % 3 == 0:
        head = rng.choice(JSON_HEADS)
        doc = json_doc(rng, head, v.key, v.value)
        return f"{head}/{v.style}", json.dumps(doc, ensure_ascii=rng.random() < 0.3, indent=rng.choice([None, 2])), True
    if structured and i % 3 == 1 and v.key.isascii():
        head = rng.choice(["env", "yaml", "csv"])
        if head == "env":
            val = v.value if all(c not in v.value for c in " #'\"$`\\") else "'" + v.value + "'"
            return f"env/{v.style}", (f"# {rng.choice(COMPANIES)} integration\n{env_key(v.key)}={val}\n"
                                      "REGION=me-central-1"), False
        if head == "yaml":
            return f"yaml/{v.style}", (f"integrations:\n  {rng.choice(['hostaway', 'paytabs', 'yardi', 'guesty'])}:\n"
                                       f"    enabled: true\n"
                                       f"    {v.key}: {json.dumps(v.value, ensure_ascii=False)}\n"), False
        return f"csv/{v.style}", f"unit,{v.key},updated\n{unit(rng)},{v.value},2026-03-0{rng.randint(1, 9)}", False
    head = rng.choice(heads)
    return f"{head}/{v.style}", text_doc(rng, head, f"{v.label}: {v.value}" if ":" not in v.label[-2:] else
                                         f"{v.label} {v.value}"), False


def strings_in(doc: object) -> Iterator[str]:
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from strings_in(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from strings_in(v)


def case(kind: str, form: str, secret: str, text: str, is_json: bool) -> Case:
    """A case, checked: the secret stands verbatim in the text (or in one of its JSON strings)."""
    if is_json:
        assert any(secret in s for s in strings_in(json.loads(text))), (kind, form, secret, text)
    else:
        assert secret in text, (kind, form, secret, text)
    return Case(kind, form, secret, text, is_json)


# ---- phones ----------------------------------------------------------------------------------------------------

GULF_WORDS = ["رقم الجوال", "جوال", "رقم الهاتف", "واتساب", "Mobile", "Tel", "Contact no.", "मोबाइल नंबर",
              "موبائل نمبر", "ഫോൺ നമ്പർ", "Numero ng telepono", "شماره تماس", "Телефон", "WhatsApp"]
PHONE_WORDS = {
    "ae": GULF_WORDS, "sa": GULF_WORDS + ["رقم التواصل"], "qa": GULF_WORDS, "kw": GULF_WORDS + ["نقال"],
    "bh": GULF_WORDS, "om": GULF_WORDS + ["هاتف نقال"],
    "tr": ["Telefon", "Cep", "Cep tel.", "GSM", "İletişim numarası", "Tel", "Телефон", "Phone"],
    "eg": ["موبايل", "رقم التليفون", "نمرة الموبايل", "رقم الواتس", "Mobile", "Phone"],
    "ma": ["Tél", "Portable", "رقم الهاتف", "نمرة التيليفون", "Numéro", "GSM"],
    "tn": ["Tél", "Portable", "رقم الهاتف", "نومرو", "Numéro de téléphone", "GSM"],
    "dz": ["Tél", "Mobile", "رقم الهاتف", "نمرة التيليفون", "Numéro", "Portable"],
    "us_ca": ["phone", "cell", "Mobile", "Tel", "Owner's phone", "call me at", "رقم الهاتف"],
    "uk": ["mobile", "tel", "Phone", "landlord's number", "contact number", "رقم الجوال"],
    "fr": ["portable", "tél", "Téléphone", "numéro", "joignable au", "رقم الهاتف"],
    "de": ["Handy", "Telefon", "Mobil", "Tel.", "Rufnummer", "erreichbar unter"],
    "in": ["mobile", "मोबाइल", "फ़ोन नंबर", "ഫോൺ", "Contact no.", "WhatsApp no.", "موبائل"],
}
PHONE_KEYS = {"ae": "mobile", "sa": "jawal", "qa": "phone", "kw": "mobile", "bh": "phone", "om": "mobile",
              "tr": "telefon", "eg": "mobile", "ma": "telephone", "tn": "tel", "dz": "telephone",
              "us_ca": "phone", "uk": "mobile", "fr": "portable", "de": "telefon", "in": "mobile"}
US_NPA = ["212", "305", "415", "416", "437", "514", "604", "646", "713", "778", "786", "917", "647", "206", "312"]


def phone_parts(rng: random.Random, cc: str) -> tuple[str, str, list[str], bool]:
    """(country code, national significant number, its groups, trunk '0' used nationally)."""
    r = rng.random()
    if cc == "ae":
        nsn = (rng.choice(["50", "52", "54", "55", "56", "58"]) + digits(rng, 7)) if r < .7 else \
            rng.choice(["2", "4", "6", "7"]) + str(rng.randint(2, 9)) + digits(rng, 6)
        g = [nsn[:2], nsn[2:5], nsn[5:]] if len(nsn) == 9 and nsn[0] == "5" else [nsn[:1], nsn[1:4], nsn[4:]]
        return "971", nsn, g, True
    if cc == "sa":
        nsn = ("5" + rng.choice("0345689") + digits(rng, 7)) if r < .7 else \
            rng.choice(["11", "12", "13", "14", "17"]) + str(rng.randint(2, 9)) + digits(rng, 6)
        return "966", nsn, [nsn[:2], nsn[2:5], nsn[5:]], True
    if cc in ("qa", "kw", "bh", "om"):
        first = {"qa": ("3", "5", "6", "7"), "kw": ("5", "6", "9"), "bh": ("33", "34", "36", "38", "39"),
                 "om": ("9", "7")}[cc]
        land = {"qa": "44", "kw": "22", "bh": "17", "om": "24"}[cc]
        lead = rng.choice(first) if r < .75 else land
        nsn = lead + digits(rng, 8 - len(lead))
        if nsn[1] == "0" and len(lead) == 1:
            nsn = nsn[0] + str(rng.randint(1, 9)) + nsn[2:]
        return {"qa": "974", "kw": "965", "bh": "973", "om": "968"}[cc], nsn, [nsn[:4], nsn[4:]], False
    if cc == "tr":
        nsn = ("5" + rng.choice("0345") + str(rng.randint(0, 9)) + str(rng.randint(2, 9)) + digits(rng, 6)) \
            if r < .7 else rng.choice(["212", "216", "312", "232", "242"]) + str(rng.randint(2, 9)) + digits(rng, 6)
        return "90", nsn, [nsn[:3], nsn[3:6], nsn[6:8], nsn[8:]], True
    if cc == "eg":
        if r < .75:
            nsn = "1" + rng.choice("0125") + digits(rng, 8)
            return "20", nsn, [nsn[:2], nsn[2:6], nsn[6:]], True
        nsn = "2" + str(rng.randint(2, 3)) + digits(rng, 7)
        return "20", nsn, [nsn[:1], nsn[1:5], nsn[5:]], True
    if cc == "ma":
        nsn = (rng.choice("67") + str(rng.randint(0, 9)) + digits(rng, 7)) if r < .75 else \
            "52" + str(rng.randint(2, 9)) + digits(rng, 6)
        return "212", nsn, [nsn[:1], nsn[1:3], nsn[3:5], nsn[5:7], nsn[7:]], True
    if cc == "tn":
        nsn = (rng.choice("2459") + digits(rng, 7)) if r < .75 else "71" + str(rng.randint(1, 9)) + digits(rng, 5)
        return "216", nsn, [nsn[:2], nsn[2:5], nsn[5:]], False
    if cc == "dz":
        if r < .75:
            nsn = rng.choice("567") + str(rng.randint(5, 9)) + digits(rng, 7)
            return "213", nsn, [nsn[:3], nsn[3:5], nsn[5:7], nsn[7:]], True
        nsn = "21" + str(rng.randint(2, 9)) + digits(rng, 5)
        return "213", nsn, [nsn[:2], nsn[2:4], nsn[4:6], nsn[6:]], True
    if cc == "us_ca":
        exch = str(rng.randint(2, 9)) + digits(rng, 2)
        while exch == "555" or exch[1:] == "11":
            exch = str(rng.randint(2, 9)) + digits(rng, 2)
        nsn = rng.choice(US_NPA) + exch + digits(rng, 4)
        return "1", nsn, [nsn[:3], nsn[3:6], nsn[6:]], False
    if cc == "uk":
        if r < .7:
            nsn = "7" + rng.choice("45789") + digits(rng, 8)
            return "44", nsn, [nsn[:4], nsn[4:]], True
        nsn = "20" + rng.choice("38") + digits(rng, 7)
        return "44", nsn, [nsn[:2], nsn[2:6], nsn[6:]], True
    if cc == "fr":
        nsn = rng.choice("1234567") + digits(rng, 8)
        if nsn[0] in "67" and nsn[1] == "0":
            nsn = nsn[0] + "1" + nsn[2:]
        return "33", nsn, [nsn[:1], nsn[1:3], nsn[3:5], nsn[5:7], nsn[7:]], True
    if cc == "de":
        if r < .7:
            pre = rng.choice(["151", "152", "157", "160", "162", "170", "171", "172", "176", "177", "179"])
            nsn = pre + str(rng.randint(1, 9)) + digits(rng, 6 + (pre[:2] in ("15", "17") and rng.random() < .5))
            return "49", nsn, [nsn[:3], nsn[3:]], True
        pre = rng.choice(["30", "40", "89", "69", "221"])
        nsn = pre + str(rng.randint(2, 9)) + digits(rng, 10 - len(pre) - 1)
        return "49", nsn, [pre, nsn[len(pre):]], True
    # India
    if r < .75:
        nsn = rng.choice("6789") + digits(rng, 9)
        return "91", nsn, [nsn[:5], nsn[5:]], True
    std = rng.choice(["11", "22", "80", "484", "471"])
    nsn = std + str(rng.randint(2, 6))
    nsn += digits(rng, 10 - len(nsn))
    return "91", nsn, [std, nsn[len(std):]], True


def phone_value(rng: random.Random, cc: str, i: int) -> tuple[str, str]:
    """(style, number as written) in one of the plan's national or international print forms."""
    code, nsn, groups, trunk = phone_parts(rng, cc)
    national = ("0" if trunk else "") + " ".join(groups)
    if cc == "us_ca":
        national = rng.choice([f"({groups[0]}) {groups[1]}-{groups[2]}", "-".join(groups), ".".join(groups)])
    style = ["national", "intl", "intl", "compact", "intl00", "dashed", "national", "intl_compact"][i % 8]
    if style == "national":
        out = national
    elif style == "intl":
        out = f"+{code} " + " ".join(groups)
        if cc == "fr" and rng.random() < .3:
            out = f"+33 (0){' '.join(groups)}"
    elif style == "compact":
        out = ("0" if trunk else "") + nsn if cc != "us_ca" else "1" + nsn if rng.random() < .5 else nsn
    elif style == "intl00":
        out = f"00{code} " + " ".join(groups)
    elif style == "dashed":
        out = ("0" if trunk else "") + "-".join(groups) if cc != "us_ca" else f"+1-{'-'.join(groups)}"
    else:
        out = f"+{code}{nsn}"
    if cc in ("ae", "sa", "qa", "kw", "bh", "om", "eg") and i % 10 == 3:
        return "arabic_indic", out.translate(ARABIC_DIGITS)
    if cc in ("ae", "qa") and i % 10 == 7:
        return "persian_digits", out.translate(PERSIAN_DIGITS)
    return style, out


def phones(kind: str, cc: str) -> Iterator[Case]:
    rng = random.Random(f"{SEED}-{kind}")
    for i in range(PER_KIND):
        style, number = phone_value(rng, cc, i)
        if i % 20 == 19:
            text = rng.choice([f"{number}", f"{number} — {rng.choice(BUILDINGS)}", f"{unit(rng)} | {number}",
                               f"{number}\n{rng.choice(CITIES)}"])
            yield case(kind, f"bare/{style}", number, text, False)
            continue
        word = rng.choice(PHONE_WORDS[cc])
        v = Value(style, number, number, PHONE_KEYS[cc] if i % 2 else word.replace(" ", "_"), word)
        form, text, is_json = carry(rng, i, v)
        yield case(kind, form, number, text, is_json)


# ---- credentials -----------------------------------------------------------------------------------------------

PW_WORDS = ["Marina", "Burj", "Yalla", "Sahara", "Nile", "Atlas", "Bosphorus", "Dune", "Oasis", "Medina", "Souk",
            "Falcon", "Pearl", "Cedar", "Jasmin", "Kasbah", "Lale", "Kahve", "Zeytin", "Argan"]
SYMBOLS = "!@#%^&*-_+=?.~"


def password(rng: random.Random) -> str:
    r = rng.random()
    if r < .35:
        return pick(rng, string.ascii_letters + string.digits + SYMBOLS, rng.randint(12, 24))
    if r < .6:
        return rng.choice(PW_WORDS) + rng.choice(SYMBOLS) + digits(rng, 4) + rng.choice(PW_WORDS).lower() \
            + rng.choice(SYMBOLS)
    if r < .75:
        return rng.choice(["Şifre", "Güvenli", "Kira", "Daire"]) + digits(rng, 3) + rng.choice(SYMBOLS) \
            + pick(rng, string.ascii_letters, 6)
    if r < .9:
        return "-".join(rng.choice(["sand", "palm", "keys", "door", "tower", "villa", "gate", "lamp", "salt",
                                    "mint", "tile", "roof"]) for _ in range(4)) + digits(rng, 2)
    return pick(rng, string.ascii_letters + string.digits, 10) + rng.choice(SYMBOLS) + pick(rng, B62, 6)


PW_KEYS = ["password", "db_password", "adminPassword", "smtpPassword", "HOSTAWAY_PASSWORD", "yardi_db_pass",
           "portalPassword", "lockAdminPwd", "guesty_sftp_password", "ejariPortalPassword", "APP_PASSWORD",
           "owner_portal_passwd", "smtp_pass", "redisPassword", "sahibindenPassword"]
PW_LABELS = ["Password", "كلمة المرور", "كلمة السر", "الباسورد", "Şifre", "Parola", "Mot de passe", "رمز عبور",
             "סיסמה", "پاس ورڈ", "पासवर्ड", "പാസ്‌വേഡ്", "Password ng portal", "Пароль", "Wi-Fi password",
             "كلمة سر الواي فاي", "Wi-Fi şifresi", "Code Wi-Fi"]


def gen_password() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-password")
    for i in range(PER_KIND):
        pw = password(rng)
        k = rng.choice(PW_KEYS)
        m = i % 10
        if m == 2:
            q = "'" + pw + "'" if any(c in pw for c in "#&*?~!") else pw
            cmd = rng.choice([f"mysql -h db.{rng.choice(COMPANIES)}.internal -u pm_app -p{q} leases",
                              f"sshpass -p {q} ssh ops@lock-gw.{rng.choice(COMPANIES)}.net",
                              f"yardi-cli login --user svc_sync --password {q}",
                              f"curl -u api_user:{pw} https://api.{rng.choice(COMPANIES)}.com/v1/units",
                              f"./sync_owners.sh --db-password={q}"])
            yield case("password", "cli/plain", pw, f"$ {cmd}\n{rng.choice(['OK', 'connected', '200 OK'])}", False)
            continue
        if m == 5:
            q = json.dumps(pw, ensure_ascii=False)
            text = (f"{rng.choice(['hostaway', 'guesty', 'ejari_portal', 'owner_portal'])}:\n  user: svc_sync\n"
                    f"  {k}: {q}\n  timeout: 30\n")
            yield case("password", "yaml/quoted", pw, text, False)
            continue
        if m == 8:
            envk = env_key(k) if rng.random() < .5 else rng.choice(["BAYUT_API_PASSWORD", "PF_PASSWORD",
                                                                    "IYZICO_MERCHANT_PASSWORD", "SMTP_PASSWORD"])
            val = f'"{pw}"' if any(c in pw for c in "#$&*?~!") else pw
            yield case("password", "env/upper", pw, f"NODE_ENV=production\n{envk}={val}\nPORT=8080", False)
            continue
        style = "camel" if any(c.isupper() for c in k[1:]) and "_" not in k else "snake"
        label = rng.choice(PW_LABELS)
        v = Value(style, pw, pw, k, label)
        form, text, is_json = carry(rng, i, v, TEXT_HEADS, structured=True)
        yield case("password", form, pw, text, is_json)


def aws_pair(rng: random.Random) -> tuple[str, str]:
    return rng.choice(["AKIA", "ASIA"]) + pick(rng, B32, 16), pick(rng, B64, 40)


def gen_aws() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-aws")
    for i in range(PER_KIND):
        kid, sec = aws_pair(rng)
        m = i % 6
        if m == 0:
            doc = {"Credentials": {"AccessKeyId": kid, "SecretAccessKey": sec,
                                   "SessionToken": "IQoJb3JpZ2luX2VjE" + pick(rng, B64, 60),
                                   "Expiration": stamp(rng)}}
            yield case("aws_secret", "tool/sts_json", sec, json.dumps(doc, indent=2), True)
        elif m == 1:
            yield case("aws_secret", "yaml/credentials_file",
                       sec, f"[pm-backups]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}\n"
                            "region = me-central-1", False)
        elif m == 2:
            line = rng.choice([f"keys for the listing-photos bucket: {kid} / {sec}",
                               f"S3 {kid}:{sec}",
                               f"مفاتيح التخزين {kid} {sec}",
                               f"fotoğraf bucket erişimi {kid} {sec} (me-south-1)"])
            head = rng.choice(["whatsapp", "email", "reply", "log"])
            yield case("aws_secret", f"{head}/unlabelled", sec, text_doc(rng, head, line), False)
        elif m == 3:
            doc = {"integration": "listing-photos", "aws": {"accessKeyId": kid, "secretAccessKey": sec,
                                                           "bucket": f"{rng.choice(COMPANIES)}-media"}}
            yield case("aws_secret", "tool/camel_json", sec, json.dumps(doc), True)
        elif m == 4:
            yield case("aws_secret", "env/labelled", sec,
                       f"AWS_ACCESS_KEY_ID={kid}\nAWS_SECRET_ACCESS_KEY={sec}\nAWS_DEFAULT_REGION=me-central-1", False)
        else:
            yield case("aws_secret", "csv/console_export", sec,
                       f"Access key ID,Secret access key\n{kid},{sec}\n", False)


def webhook(rng: random.Random) -> tuple[str, str, str]:
    """(style, url, token segment)."""
    r = rng.randrange(7)
    if r == 0:
        tok = pick(rng, string.ascii_letters + string.digits, 24)
        return "slack", (f"https://hooks.slack.com/services/T{pick(rng, UPPER_ALNUM, 10)}"
                         f"/B{pick(rng, UPPER_ALNUM, 10)}/{tok}"), tok
    if r == 1:
        tok = pick(rng, URLSAFE, 68)
        return "discord", f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{tok}", tok
    if r == 2:
        tok = pick(rng, HEX, 32)
        g = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(3)]
        return "teams", (f"https://{rng.choice(COMPANIES).replace('-', '')}.webhook.office.com/webhookb2/{g[0]}@{g[1]}"
                         f"/IncomingWebhook/{tok}/{g[2]}"), tok
    if r == 3:
        tok = pick(rng, URLSAFE, 35)
        return "telegram", (f"https://api.telegram.org/bot{rng.randint(10**9, 8 * 10**9)}:AA{tok}"
                            "/sendMessage"), "AA" + tok
    if r == 4:
        tok = pick(rng, URLSAFE, 43) + "%3D"
        return "google_chat", (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
                               f"{pick(rng, URLSAFE, 33)}&token={tok}"), tok
    if r == 5:
        tok = pick(rng, LOWER_ALNUM, 32)
        return "make", f"https://hook.{rng.choice(['eu1', 'eu2', 'us1'])}.make.com/{tok}", tok
    tok = pick(rng, LOWER_ALNUM, 7)
    return "zapier", f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{tok}/", tok


WEBHOOK_LABELS = ["Webhook", "رابط الويب هوك", "Webhook URL'si", "URL du webhook", "Notify URL", "آدرس وب‌هوک",
                  "ניתוב Webhook", "Webhook link", "Вебхук"]


def gen_webhook() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-webhook")
    for i in range(PER_KIND):
        style, url, tok = webhook(rng)
        if i % 5 == 4:
            text = (f"$ curl -X POST -H 'Content-type: application/json' --data "
                    f"'{{\"text\":\"New booking {booking(rng)} at {rng.choice(BUILDINGS)}\"}}' {url}")
            yield case("webhook", f"cli/{style}", tok, text, False)
            continue
        v = Value(style, tok, url, rng.choice(["webhook_url", "slackWebhook", "notify_url", "DISCORD_WEBHOOK",
                                               "teamsWebhookUrl", "alerts_webhook"]), rng.choice(WEBHOOK_LABELS))
        form, text, is_json = carry(rng, i, v, ("log", "email", "reply", "whatsapp"), structured=True)
        yield case("webhook", form, tok, text, is_json)


def gen_whsec() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-whsec")
    for i in range(PER_KIND):
        sec = "whsec_" + pick(rng, B62, 32)
        if i % 4 == 1:
            text = (f"$ stripe listen --forward-to localhost:8000/webhooks/rent\n> Ready! You are using Stripe API "
                    f"Version [2024-06-20]. Your webhook signing secret is {sec} (^C to quit)")
            yield case("stripe_whsec", "cli/stripe_listen", sec, text, False)
            continue
        v = Value("plain", sec, sec, rng.choice(["STRIPE_WEBHOOK_SECRET", "webhookSecret", "stripe_signing_secret",
                                                  "endpoint_secret"]),
                  rng.choice(["Signing secret", "سر توقيع Stripe", "Stripe imza anahtarı", "Secret de signature"]))
        form, text, is_json = carry(rng, i, v, ("log", "email", "reply"), structured=True)
        yield case("stripe_whsec", form, sec, text, is_json)


def gen_conn() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-conn")
    for i in range(PER_KIND):
        pw = "".join(c for c in password(rng) if c not in "@/:#?&%")
        host = f"{rng.choice(['db', 'pg', 'leases-db', 'mongo0', 'cache'])}.{rng.choice(COMPANIES)}.internal"
        r = i % 8
        if r == 0:
            s, sec = f"postgresql://pm_app:{pw}@{host}:5432/leases?sslmode=require", pw
        elif r == 1:
            s, sec = f"mysql://yardi_sync:{pw}@{host}:3306/property", pw
        elif r == 2:
            s, sec = (f"mongodb+srv://listings:{pw}@cluster0.{pick(rng, LOWER_ALNUM, 5)}.mongodb.net"
                      "/bayut?retryWrites=true"), pw
        elif r == 3:
            s, sec = f"redis://default:{pw}@{host}:6379/0", pw
        elif r == 4:
            s, sec = f"amqps://lockevents:{pw}@{host}:5671/%2F", pw
        elif r == 5:
            pw2 = pw.replace(";", ",")
            s, sec = f"Server=tcp:{host},1433;Database=Owners;User Id=svc_owner;Password={pw2};Encrypt=True;", pw2
        elif r == 6:
            key = base64.b64encode(rng.randbytes(64)).decode()
            s, sec = (f"DefaultEndpointsProtocol=https;AccountName={rng.choice(COMPANIES).replace('-', '')}docs;"
                      f"AccountKey={key};EndpointSuffix=core.windows.net"), key
        else:
            key = base64.b64encode(rng.randbytes(32)).decode()
            s, sec = (f"Endpoint=sb://{rng.choice(COMPANIES)}-bus.servicebus.windows.net/;SharedAccessKeyName="
                      f"RootManageSharedAccessKey;SharedAccessKey={key}"), key
        v = Value(["postgres", "mysql", "mongodb", "redis", "amqp", "sqlserver", "azure_storage", "service_bus"][r],
                  sec, s, rng.choice(["DATABASE_URL", "connectionString", "db_url", "MONGO_URI", "conn"]),
                  rng.choice(["Connection string", "سلسلة الاتصال", "Bağlantı dizesi", "Chaîne de connexion",
                              "رشته اتصال", "Строка подключения"]))
        form, text, is_json = carry(rng, i, v, ("log", "email", "reply", "statement"), structured=True)
        yield case("connection_string", form, sec, text, is_json)


KEY_LABELS = ["Server key", "Secret key", "API key", "Security key", "Store key", "Client secret", "Access token",
              "المفتاح السري", "مفتاح الخادم", "مفتاح API", "رمز الوصول", "Gizli anahtar", "API anahtarı",
              "Güvenlik anahtarı", "Clé secrète", "Clé API", "Clé du magasin", "کلید مخفی", "کلید API",
              "מפתח סודי", "מפתח API", "خفیہ کلید", "गुप्त कुंजी", "എപിഐ കീ", "Lihim na susi", "Секретный ключ",
              "API-ключ"]
PLATFORMS = ["PayTabs", "HyperPay", "Fawry", "iyzico", "CMI", "Hostaway", "Guesty", "Property Finder", "Bayut",
             "Sahibinden", "TTLock", "Nuki", "Ejar", "Aqar", "Avito", "Checkout.com"]


def platform_key(rng: random.Random, platform: str) -> str:
    """A key of a platform that publishes no prefix, in the shape its docs show."""
    if platform == "PayTabs":
        return "S" + "-".join(pick(rng, UPPER_ALNUM, n) for n in (9, 10, 10))
    if platform == "HyperPay":
        return base64.b64encode((pick(rng, HEX, 32) + "|" + pick(rng, B62, 12)).encode()).decode()
    if platform in ("Fawry", "TTLock", "Aqar"):
        return pick(rng, HEX, 32)
    if platform == "iyzico":
        return pick(rng, B62, 32)
    if platform == "CMI":
        return pick(rng, B62, 20)
    if platform == "Hostaway":
        return pick(rng, HEX, 64)
    if platform == "Nuki":
        return pick(rng, HEX, 80)
    if platform == "Checkout.com":
        return str(uuid.UUID(int=rng.getrandbits(128), version=4)).replace("-", "")
    return pick(rng, B62, rng.choice([32, 40, 48]))


def gen_labelled() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-labelled")
    for i in range(PER_KIND):
        plat = rng.choice(PLATFORMS)
        key = platform_key(rng, plat)
        label = f"{plat} {rng.choice(KEY_LABELS)}" if rng.random() < .6 else rng.choice(KEY_LABELS)
        v = Value(plat.lower().replace(" ", "_").replace(".", ""), key, key,
                  rng.choice([f"{plat} {rng.choice(KEY_LABELS)}", f"{plat.lower()}_server_key", "secret key",
                              "مفتاح API", "Gizli anahtar", "clé secrète"]), label)
        form, text, is_json = carry(rng, i, v, ("email", "log", "reply", "whatsapp", "statement"), structured=True)
        yield case("labelled_key", form, key, text, is_json)


def fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


def zero_width(rng: random.Random, s: str) -> str:
    out = []
    for j, c in enumerate(s):
        out.append(c)
        if j < len(s) - 1 and (j % rng.randint(2, 5) == 1):
            out.append(rng.choice(ZERO_WIDTH))
    return "".join(out)


def gen_disguised() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-disguised")
    for i in range(PER_KIND):
        src = i % 5
        if src == 0:
            raw, key, label = password(rng), "password", rng.choice(["Password", "كلمة المرور", "Şifre",
                                                                      "Mot de passe"])
        elif src == 1:
            raw, key, label = aws_pair(rng)[1], "aws_secret_access_key", "AWS secret access key"
        elif src == 2:
            raw, key, label = "whsec_" + pick(rng, B62, 32), "stripe_webhook_secret", "Stripe signing secret"
        elif src == 3:
            plat = rng.choice(PLATFORMS)
            raw, key, label = (platform_key(rng, plat), f"{plat.lower().replace(' ', '_')}_secret",
                               f"{plat} {rng.choice(KEY_LABELS)}")
        else:
            raw, key, label = "sk_live_" + pick(rng, B62, 24), "stripe_secret_key", "Stripe secret key"
        how = (i // 5) % 4
        if how == 0:
            val, style = zero_width(rng, raw), "zero_width"
        elif how == 1:
            val, style = fullwidth(raw), "fullwidth"
        elif how == 2:
            val, style = urllib.parse.quote(raw, safe=""), "urlencoded"
            if val == raw:
                val = "".join(f"%{b:02X}" for b in raw.encode())
        else:
            val = "".join(f"\\u{ord(c):04x}" for c in raw)
            text = (f"{stamp(rng)} DEBUG webhook-relay raw body: {{\"{key}\": \"{val}\", \"unit\": \"{unit(rng)}\"}}")
            yield case("disguised", "log/json_u", val, text, False)
            continue
        if style == "urlencoded" and i % 2:
            text = (f"GET /callback?{key}={val}&cart_id=RENT-{digits(rng, 6)} HTTP/1.1\n"
                    f"Host: api.{rng.choice(COMPANIES)}.com")
            yield case("disguised", f"http/{style}", val, text, False)
            continue
        v = Value(style, val, val, key, label)
        form, text, is_json = carry(rng, i, v, ("email", "log", "reply", "whatsapp"), structured=False)
        yield case("disguised", form, val, text, is_json)


def email_addr(rng: random.Random, i: int) -> tuple[str, str]:
    f, l = rng.choice(FIRST), rng.choice(LAST)
    local = rng.choice([f"{f}.{l}", f"{f}{l[:3]}{rng.randint(1, 99)}", f"{f[0]}{l}", f"{f}_{l}", f"{f}.{l}+rent"])
    dom = rng.choice(["gmail.com", "outlook.com", "hotmail.fr", "yahoo.com", "icloud.com", "outlook.sa",
                      "emirates.net.ae", "menara.ma", "topnet.tn", "yandex.ru", "hotmail.com.tr", "qatar.net.qa"])
    m = i % 6
    if m == 0:
        return "lower", f"{local}@{dom}"
    if m == 1:
        return "upper", f"{local}@{dom}".upper()
    if m == 2:
        return "idn", rng.choice([f"{f}.{l}@örnek.com.tr", f"{f}@bücher-emlak.de", f"{l}@مثال.امارات",
                                  f"ülkü.{l}@gmail.com", f"{f}@société-immo.ma", f"{f}.{l}@пример.рф"])
    if m == 3:
        return "urlencoded", urllib.parse.quote(f"{local}@{dom}", safe="")
    if m == 4:
        return "mixed_case", f"{f.capitalize()}.{l.capitalize()}@{dom}"
    return "plus", f"{f}+{rng.choice(['bayut', 'airbnb', 'ejari'])}@{dom}"


def gen_email() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-email")
    for i in range(PER_KIND):
        style, addr = email_addr(rng, i)
        if style == "urlencoded":
            text = f"https://portal.{rng.choice(COMPANIES)}.com/invite?email={addr}&unit={unit(rng)}"
            head = rng.choice(["log", "sms", "reply"])
            yield case("email", f"{head}/urlencoded", addr, text_doc(rng, head, text), False)
            continue
        label = rng.choice(["E-mail", "البريد الإلكتروني", "الإيميل", "E-posta", "Courriel", "ایمیل", "דוא\"ל",
                            "ای میل", "ईमेल", "ഇമെയിൽ", "Почта"])
        v = Value(style, addr, addr, rng.choice(["email", "guestEmail", "owner_email", "البريد"]), label)
        form, text, is_json = carry(rng, i, v, TEXT_HEADS, structured=True)
        if is_json and style == "idn":
            doc = json.loads(text)
            text = json.dumps(doc, ensure_ascii=True)
            form = form.split("/")[0] + "/idn_json_escaped"
        yield case("email", form, addr, text, is_json)


def gen_ssn() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-ssn")
    for i in range(PER_KIND):
        area = rng.randint(1, 899)
        while area == 666:
            area = rng.randint(1, 899)
        ssn = f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
        style = ["dashed", "dashed", "spaced", "compact"][i % 4]
        val = {"dashed": f"{ssn[:3]}-{ssn[3:5]}-{ssn[5:]}", "spaced": f"{ssn[:3]} {ssn[3:5]} {ssn[5:]}",
               "compact": ssn}[style]
        label = rng.choice(["SSN", "Social Security No.", "US SSN (owner, for 1099)", "رقم الضمان الاجتماعي الأمريكي",
                            "SSN du propriétaire", "ABD SSN"])
        v = Value(style, val, val, rng.choice(["ssn", "owner_ssn", "taxpayer_ssn"]), label)
        form, text, is_json = carry(rng, i, v, ("email", "statement", "contract", "reply", "log"), structured=True)
        yield case("ssn", form, val, text, is_json)


def card_number(rng: random.Random) -> str:
    r = rng.random()
    if r < .3:
        p = "4" + digits(rng, 14)
    elif r < .5:
        p = str(rng.randint(51, 55)) + digits(rng, 13)
    elif r < .6:
        p = rng.choice(["34", "37"]) + digits(rng, 12)
    elif r < .8:
        p = rng.choice(["588845", "440647", "446404", "457865"]) + digits(rng, 9)
    else:
        p = "9792" + digits(rng, 11)
    return p + luhn_digit(p)


def gen_card() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-card")
    seps = ["-", " ", ".", "_", ""]
    names = {"-": "dash", " ": "space", ".": "dot", "_": "underscore", "": "none"}
    for i in range(PER_KIND):
        num = card_number(rng)
        sep = seps[i % 5]
        val = group_card(num, sep)
        label = rng.choice(["Card number", "رقم البطاقة", "Kart numarası", "Numéro de carte", "شماره کارت",
                            "מספר כרטיס", "कार्ड नंबर", "Номер карты", "بطاقة مدى"])
        v = Value(names[sep], val, val, rng.choice(["card_number", "pan", "cardNumber"]), label)
        form, text, is_json = carry(rng, i, v, ("whatsapp", "email", "log", "reply", "sms"), structured=False)
        yield case("card", form, val, text, is_json)


IBAN_STRUCTURES = {"AE": "3n16n", "SA": "2n18c", "QA": "4a21c", "KW": "4a22c", "BH": "4a14c", "TR": "5n1n16c",
                   "EG": "4n4n17n", "TN": "2n3n13n2n", "JO": "4a4n18c", "FR": "5n5n11c2n", "DE": "8n10n",
                   "GB": "4a6n8n"}


def iban(rng: random.Random) -> str:
    cc = rng.choice(list(IBAN_STRUCTURES) + ["AE", "SA", "TR"])
    b = bban(rng, IBAN_STRUCTURES[cc])
    if cc == "TR":
        b = b[:5] + "0" + b[6:]
    return cc + iban_check(cc, b) + b


def gen_iban() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-iban")
    for i in range(PER_KIND):
        ib = iban(rng)
        style = ["spaced", "compact", "lower", "spaced", "compact_label"][i % 5]
        val = {"spaced": group(ib, 4, " "), "compact": ib, "lower": ib.lower(), "compact_label": ib}[style]
        label = rng.choice(["IBAN", "رقم الآيبان", "الآيبان", "IBAN numarası", "IBAN du propriétaire", "شماره شبا",
                            "Owner IBAN", "Rent to IBAN", "حساب المالك IBAN"])
        v = Value(style, val, val, rng.choice(["iban", "owner_iban", "payout_iban"]), label)
        form, text, is_json = carry(rng, i, v, ("email", "statement", "contract", "whatsapp", "reply"), structured=True)
        yield case("iban", form, val, text, is_json)


# ---- tokens, keys and seeds ------------------------------------------------------------------------------------

def jwt(rng: random.Random) -> str:
    alg = rng.choice(["HS256", "RS256", "ES256"])
    head = b64url(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode())
    now = 1767225600 + rng.randint(0, 20_000_000)
    claims = {"sub": f"tenant_{digits(rng, 6)}", "iat": now, "exp": now + 3600,
              "iss": f"https://auth.{rng.choice(COMPANIES)}.com",
              "scope": rng.choice(["leases:read", "owner", "guest"])}
    body = b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig = b64url(rng.randbytes(32 if alg == "HS256" else 64 if alg == "ES256" else 256))
    return f"{head}.{body}.{sig}"


def gen_jwt() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-jwt")
    for i in range(PER_KIND):
        tok = jwt(rng)
        if i % 4 == 1:
            text = (f"{stamp(rng)} DEBUG owner-portal GET /api/v2/statements?month=2026-03\n"
                    f"  Authorization: Bearer {tok}")
            yield case("jwt", "http/bearer", tok, text, False)
            continue
        v = Value("compact", tok, tok, rng.choice(["id_token", "access_token", "portalToken", "jwt"]),
                  rng.choice(["Token", "رمز الدخول", "Erişim belirteci", "Jeton", "توکن"]))
        form, text, is_json = carry(rng, i, v, ("log", "reply", "email"), structured=True)
        yield case("jwt", form, tok, text, is_json)


def oauth_token(rng: random.Random, i: int) -> tuple[str, str]:
    m = i % 6
    if m == 0:
        return "google_access", "ya29.a0" + pick(rng, URLSAFE, 150)
    if m == 1:
        return "google_refresh", "1//0" + pick(rng, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 1) \
            + pick(rng, URLSAFE, 98)
    if m == 2:
        return "meta", "EAA" + pick(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", 1) \
            + pick(rng, string.ascii_letters + string.digits, 180)
    if m == 3:
        return "github", crc_token(rng, "gho_")
    if m == 4:
        return "zoho", f"1000.{pick(rng, HEX, 32)}.{pick(rng, HEX, 32)}"
    return "opaque", pick(rng, string.ascii_letters + string.digits, 40)


def gen_oauth() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-oauth")
    for i in range(PER_KIND):
        style, tok = oauth_token(rng, i)
        if i % 3 == 0:
            doc = {"access_token" if "refresh" not in style else "refresh_token": tok, "token_type": "Bearer",
                   "expires_in": 3599, "scope": rng.choice(["https://www.googleapis.com/auth/calendar",
                                                           "whatsapp_business_messaging", "ZohoCRM.modules.ALL"])}
            yield case("oauth_token", f"tool/{style}", tok, json.dumps(doc, indent=rng.choice([None, 2])), True)
        elif i % 3 == 1:
            url = {"google_access": "https://www.googleapis.com/calendar/v3/calendars/primary/events",
                   "meta": f"https://graph.facebook.com/v19.0/{digits(rng, 15)}/messages",
                   "github": "https://api.github.com/repos/ops/listing-sync/dispatches",
                   "zoho": "https://www.zohoapis.com/crm/v6/Leads",
                   "opaque": f"https://api.{rng.choice(COMPANIES)}.com/v1/reservations"}.get(style)
            if url is None:
                text = (f"$ curl -s https://oauth2.googleapis.com/token -d grant_type=refresh_token "
                        f"-d refresh_token={tok} -d client_id=$CLIENT_ID")
            else:
                text = f"$ curl -s {url} -H \"Authorization: Bearer {tok}\" -d @payload.json"
            yield case("oauth_token", f"cli/{style}", tok, text, False)
        else:
            label = rng.choice(["OAuth token", "access token", "refresh_token", "رمز الوصول", "Erişim tokenı",
                                "Jeton d'accès"])
            head = rng.choice(["log", "email", "reply"])
            yield case("oauth_token", f"{head}/{style}", tok, text_doc(rng, head, f"{label}: {tok}"), False)


def gen_cookie() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-cookie")
    for i in range(PER_KIND):
        m = i % 7
        if m == 0:
            name, val = "PHPSESSID", pick(rng, LOWER_ALNUM, 26)
        elif m == 1:
            name, val = "connect.sid", "s%3A" + pick(rng, URLSAFE, 32) + "." + pick(rng, B64, 43)
        elif m == 2:
            name = "laravel_session"
            val = base64.b64encode(json.dumps({"iv": base64.b64encode(rng.randbytes(16)).decode(),
                                               "value": base64.b64encode(rng.randbytes(48)).decode(),
                                               "mac": pick(rng, HEX, 64), "tag": ""},
                                              separators=(",", ":")).encode()).decode()
            val = val.replace("=", "%3D")
        elif m == 3:
            name, val = "ASP.NET_SessionId", pick(rng, "abcdefghijklmnopqrstuvwxyz012345", 24)
        elif m == 4:
            name, val = "JSESSIONID", pick(rng, "0123456789ABCDEF", 32)
        elif m == 5:
            name, val = "sessionid", pick(rng, LOWER_ALNUM, 32)
        else:
            name, val = "_owner_portal_session", pick(rng, URLSAFE, 120)
        style = name.lower().replace(".", "_")
        host = f"{rng.choice(['owners', 'portal', 'app', 'tenants'])}.{rng.choice(COMPANIES)}.com"
        r = i % 3
        if r == 0:
            text = f"GET /dashboard HTTP/1.1\nHost: {host}\nCookie: lang=ar; {name}={val}; theme=dark"
            yield case("session_cookie", f"http/{style}", val, text, False)
        elif r == 1:
            doc = {"log": {"entries": [{"request": {"url": f"https://{host}/api/units", "method": "GET",
                                                    "cookies": [{"name": name, "value": val}]}}]}}
            yield case("session_cookie", f"tool/{style}_har", val, json.dumps(doc), True)
        else:
            text = (f"HTTP/1.1 302 Found\nLocation: /owner/statements\nSet-Cookie: {name}={val}; Path=/; HttpOnly; "
                    f"Secure; SameSite=Lax")
            yield case("session_cookie", f"http/{style}_set", val, text, False)


def pem(label: str, der_bytes: bytes) -> tuple[str, str]:
    body = base64.b64encode(der_bytes).decode()
    lines = "\n".join(body[j:j + 64] for j in range(0, len(body), 64))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----", lines


def private_key(rng: random.Random, i: int) -> tuple[str, str, str]:
    m = i % 4
    if m == 0:
        n = rng.getrandbits(2048) | (1 << 2047) | 1
        ints = [0, n, 65537] + [rng.getrandbits(b) | 1 for b in (2047, 1024, 1024, 1023, 1023, 1023)]
        text, body = pem("RSA PRIVATE KEY", der_seq(*(der_int(x) for x in ints)))
        return "rsa_pkcs1", text, body
    if m == 1:
        d = rng.randbytes(32)
        pub = b"\x04" + rng.randbytes(64)
        sec1 = der_seq(der_int(1), der(0x04, d), der(0xA0, bytes.fromhex("06082a8648ce3d030107")),
                       der(0xA1, der(0x03, b"\x00" + pub)))
        text, body = pem("EC PRIVATE KEY", sec1)
        return "ec_sec1", text, body
    if m == 2:
        seed = rng.randbytes(32)
        inner = der(0x04, seed)
        pk8 = der_seq(der_int(0), der_seq(bytes.fromhex("06032b6570")), der(0x04, inner))
        text, body = pem("PRIVATE KEY", pk8)
        return "pkcs8_ed25519", text, body
    chk = rng.randbytes(4)
    blob = openssh_ed25519_blob(rng.randbytes(32), rng.randbytes(32), chk, b"lockgw@" + rng.choice(COMPANIES).encode())
    b = base64.b64encode(blob).decode()
    lines = "\n".join(b[j:j + 70] for j in range(0, len(b), 70))
    return "openssh", f"-----BEGIN OPENSSH PRIVATE KEY-----\n{lines}\n-----END OPENSSH PRIVATE KEY-----", lines


def gen_private_key() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-pk")
    for i in range(PER_KIND):
        style, block, body = private_key(rng, i)
        r = (i // 4) % 3
        if r == 0:
            text = f"$ cat ~/.ssh/{rng.choice(['lockgw', 'deploy', 'sftp_ejari'])}_key\n{block}\n"
            yield case("private_key", f"pem/{style}", body, text, False)
        elif r == 1:
            doc = {"type": "service_account", "project_id": f"{rng.choice(COMPANIES)}-listings",
                   "private_key_id": pick(rng, HEX, 40), "private_key": block + "\n",
                   "client_email": f"sync@{rng.choice(COMPANIES)}-listings.iam.gserviceaccount.com"}
            yield case("private_key", f"tool/{style}_json", body, json.dumps(doc, indent=2), True)
        else:
            esc = block.replace("\n", "\\n")
            text = f"SFTP_HOST=sftp.ejari-gateway.example\nSFTP_PRIVATE_KEY=\"{esc}\"\n"
            yield case("private_key", f"env/{style}_escaped", body.replace("\n", "\\n"), text, False)


def gen_totp() -> Iterator[Case]:
    rng = random.Random(f"{SEED}-totp")
    for i in range(PER_KIND):
        seed = pick(rng, B32, rng.choice([16, 32, 32]))
        m = i % 5
        issuer = rng.choice(["Hostaway", "PropertyFinder", "Bayut Pro", "Yardi", "PayTabs", "iyzico"])
        if m == 0:
            uri = f"otpauth://totp/{urllib.parse.quote(issuer)}:ops%40{rng.choice(COMPANIES)}.com?secret={seed}&issuer={urllib.parse.quote(issuer)}"
            v = Value("otpauth", seed, uri, "otpauth_uri", "2FA QR")
        elif m == 1:
            spaced = group(seed.lower(), 4, " ")
            v = Value("spaced_lower", spaced, spaced, "totp_secret",
                      rng.choice(["2FA setup key", "مفتاح المصادقة الثنائية", "İki adımlı doğrulama anahtarı",
                                  "Clé 2FA", "کلید احراز هویت دومرحله‌ای"]))
        else:
            v = Value("base32", seed, seed, rng.choice(["totp_secret", "mfa_seed", "otpSecret"]),
                      rng.choice(["TOTP secret", "MFA seed", "رمز المصادقة", "2FA gizli anahtarı", "Secret TOTP"]))
        form, text, is_json = carry(rng, i, v, ("email", "log", "reply", "whatsapp"), structured=True)
        yield case("totp_seed", form, v.secret, text, is_json)


PROVIDERS = {
    "stripe_key": lambda r: rng_choice(r, ["sk_live_", "rk_live_"]) + pick(r, B62, rng_choice(r, [24, 99])),
    "sendgrid_key": lambda r: "SG." + pick(r, URLSAFE, 22) + "." + pick(r, URLSAFE, 43),
    "google_api_key": lambda r: "AIza" + pick(r, URLSAFE, 35),
    "openai_key": lambda r: "sk-proj-" + pick(r, URLSAFE, 74) + "T3BlbkFJ" + pick(r, URLSAFE, 74),
    "twilio_key": lambda r: "SK" + pick(r, HEX, 32),
    "mailgun_key": lambda r: "key-" + pick(r, HEX, 32),
    "github_token": lambda r: crc_token(r, rng_choice(r, ["ghp_", "gho_", "ghs_"])),
    "slack_token": lambda r: (f"xoxb-{r.randint(10**10, 10**13)}-{r.randint(10**10, 10**13)}-"
                              f"{pick(r, string.ascii_letters + string.digits, 24)}"),
}
PROVIDER_KEYS = {"stripe_key": ("STRIPE_SECRET_KEY", "Stripe"), "sendgrid_key": ("SENDGRID_API_KEY", "SendGrid"),
                 "google_api_key": ("GOOGLE_MAPS_API_KEY", "Google Maps"), "openai_key": ("OPENAI_API_KEY", "OpenAI"),
                 "twilio_key": ("TWILIO_API_KEY", "Twilio"), "mailgun_key": ("MAILGUN_API_KEY", "Mailgun"),
                 "github_token": ("GITHUB_TOKEN", "GitHub"), "slack_token": ("SLACK_BOT_TOKEN", "Slack bot")}


def rng_choice(rng: random.Random, seq: list) -> object:
    return rng.choice(seq)


def gen_provider(kind: str) -> Iterator[Case]:
    rng = random.Random(f"{SEED}-{kind}")
    envk, name = PROVIDER_KEYS[kind]
    for i in range(PER_KIND):
        key = PROVIDERS[kind](rng)
        if i % 7 == 6:
            text = f"$ export {envk}={key}\n$ python sync_listings.py --city {rng.choice(CITIES).replace(' ', '_')}"
            yield case(kind, "cli/export", key, text, False)
            continue
        label = rng.choice([f"{name} key", f"مفتاح {name}", f"{name} anahtarı", f"clé {name}", f"{name} token",
                            "key"])
        v = Value("plain", key, key, rng.choice([envk.lower(), envk, "apiKey", "key"]), label)
        form, text, is_json = carry(rng, i, v, ("log", "email", "reply", "whatsapp"), structured=True)
        yield case(kind, form, key, text, is_json)


# ---- national ids (outside the target) -------------------------------------------------------------------------

def tc_kimlik(rng: random.Random) -> str:
    d = [rng.randint(1, 9)] + [rng.randint(0, 9) for _ in range(8)]
    d10 = ((d[0] + d[2] + d[4] + d[6] + d[8]) * 7 - (d[1] + d[3] + d[5] + d[7])) % 10
    d11 = (sum(d) + d10) % 10
    return "".join(map(str, d + [d10, d11]))


def saudi_id(rng: random.Random) -> str:
    p = rng.choice("12") + digits(rng, 8)
    return p + luhn_digit(p)


def emirates_id(rng: random.Random) -> str:
    p = "784" + str(rng.randint(1960, 2005)) + digits(rng, 7)
    return p + luhn_digit(p)


def teudat_zehut(rng: random.Random) -> str:
    p = digits(rng, 8)
    return p + luhn_digit(p)


def gen_ids() -> Iterator[Case]:
    specs = [("tr_kimlik", tc_kimlik, ["T.C. Kimlik No", "TC kimlik numarası", "Kimlik no", "رقم الهوية التركية"]),
             ("sa_national_id", saudi_id, ["رقم الهوية الوطنية", "رقم الإقامة", "Iqama No.", "National ID", "هوية"]),
             ("emirates_id", emirates_id, ["Emirates ID", "رقم الهوية الإماراتية", "EID", "ایمرٹس آئی ڈی"]),
             ("il_teudat_zehut", teudat_zehut, ["תעודת זהות", "ת.ז.", "Teudat Zehut", "Israeli ID"])]
    for kind, make, labels in specs:
        rng = random.Random(f"{SEED}-{kind}")
        for i in range(PER_KIND):
            n = make(rng)
            style = "compact"
            if kind == "emirates_id" and i % 2:
                n, style = f"{n[:3]}-{n[3:7]}-{n[7:14]}-{n[14]}", "dashed"
            elif kind == "sa_national_id" and i % 5 == 2:
                n, style = n.translate(ARABIC_DIGITS), "arabic_indic"
            v = Value(style, n, n, rng.choice(["national_id", "id_number", "kimlik_no", "iqama"]), rng.choice(labels))
            form, text, is_json = carry(rng, i, v, ("contract", "email", "whatsapp", "statement", "reply"),
                                        structured=True)
            yield case(kind, form, n, text, is_json)


# ---- the corpus ------------------------------------------------------------------------------------------------

REGION_PHONES = (("phone_ae", "ae"), ("phone_sa", "sa"), ("phone_qa", "qa"), ("phone_kw", "kw"), ("phone_bh", "bh"),
                 ("phone_om", "om"), ("phone_tr", "tr"), ("phone_eg", "eg"), ("phone_ma", "ma"), ("phone_tn", "tn"),
                 ("phone_dz", "dz"))
ISSUE_PHONES = (("phone_us_ca", "us_ca"), ("phone_uk", "uk"), ("phone_fr", "fr"), ("phone_de", "de"),
                ("phone_in", "in"))


def generate() -> Iterator[Case]:
    """PER_KIND cases of every kind, deterministic from SEED."""
    yield from gen_password()
    yield from gen_aws()
    yield from gen_webhook()
    yield from gen_whsec()
    yield from gen_conn()
    yield from gen_labelled()
    yield from gen_disguised()
    yield from gen_email()
    for kind, cc in ISSUE_PHONES:
        yield from phones(kind, cc)
    yield from gen_ssn()
    yield from gen_card()
    yield from gen_iban()
    yield from gen_jwt()
    yield from gen_oauth()
    yield from gen_cookie()
    yield from gen_private_key()
    yield from gen_totp()
    for kind in PROVIDERS:
        yield from gen_provider(kind)
    for kind, cc in REGION_PHONES:
        yield from phones(kind, cc)
    yield from gen_ids()


# ---- near misses -----------------------------------------------------------------------------------------------

def vkn(rng: random.Random) -> str:
    """A Turkish tax number (Vergi Kimlik No, companies): nine digits and the GİB check digit."""
    d = digits(rng, 9)
    total = 0
    for i, ch in enumerate(d):
        tmp = (int(ch) + 9 - i) % 10
        v = (tmp * 2 ** (9 - i)) % 9
        total += 9 if tmp and v == 0 else v
    return d + str((10 - total % 10) % 10)


def siren(rng: random.Random) -> str:
    """A French company's SIREN: eight digits and the Luhn digit (INSEE)."""
    p = str(rng.randint(3, 9)) + digits(rng, 7)
    return p + luhn_digit(p)


def bad_luhn(rng: random.Random) -> str:
    num = card_number(rng)
    out = num[:-1] + str((int(num[-1]) + rng.randint(1, 9)) % 10)
    assert not luhn_ok(out)
    return out


def bad_iban(rng: random.Random) -> str:
    ib = iban(rng)
    wrong = (int(ib[2:4]) + rng.randint(1, 50)) % 97
    wrong = wrong if wrong >= 2 else wrong + 2
    out = ib[:2] + f"{wrong:02d}" + ib[4:]
    assert not iban_ok(out)
    return out


EXAMPLES = ["AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "pk_test_TYooMQauvdEDq54NiTphI7jx",
            "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", "whsec_...",
            "SG.xxxxxxxxxxxxxxxxxxxxxx.yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy",
            "AIzaSyDummyKeyForDocsOnly_xxxxxxxxxxxx", "postgres://user:password@localhost:5432/mydb",
            "mongodb+srv://<username>:<password>@cluster0.example.mongodb.net/"]
PLACEHOLDERS = ["<your-api-key>", "${STRIPE_SECRET_KEY}", "xxxx-xxxx-xxxx", "********", "<SERVER_KEY>",
                "{{ paytabs_server_key }}", "REPLACE_ME", "changeme-in-vault", "$(cat /run/secrets/db_password)",
                "%HYPERPAY_TOKEN%", "[REDACTED]", "<كلمة المرور>", "<şifre>", "••••••••"]


def near_miss(rng: random.Random, sort: str) -> tuple[str, str, str]:
    """(key, value, label) of one near miss of `sort`."""
    if sort == "booking_code":
        return "confirmation_code", rng.choice([booking(rng), "4" + digits(rng, 9), f"BKG-{digits(rng, 8)}"]), \
            rng.choice(["Confirmation code", "رقم الحجز", "Rezervasyon no", "N° de réservation"])
    if sort == "contract_number":
        return "contract_no", rng.choice([f"EJ-{2026}-{digits(rng, 7)}", f"EJAR/{digits(rng, 10)}/2026",
                                          f"TC-{rng.choice(CITIES)[:3].upper()}-{digits(rng, 6)}"]), \
            rng.choice(["Ejari contract no.", "رقم العقد", "Sözleşme no", "Contrat n°"])
    if sort == "work_order":
        return "work_order_id", f"WO-{rng.randint(2024, 2026)}-{digits(rng, 6)}", \
            rng.choice(["Work order", "أمر صيانة", "İş emri", "Bon d'intervention"])
    if sort == "invoice_number":
        return "invoice_no", rng.choice([f"INV/2026/{rng.randint(1, 12):02d}/{digits(rng, 5)}",
                                         f"FAT-{digits(rng, 8)}", f"SI-{digits(rng, 6)}-AE"]), \
            rng.choice(["Invoice", "رقم الفاتورة", "Fatura no", "Facture n°"])
    if sort == "trace_id":
        return "traceparent", rng.choice([f"00-{pick(rng, HEX, 32)}-{pick(rng, HEX, 16)}-01",
                                          f"req_{pick(rng, B62, 14)}",
                                          f"Root=1-{pick(rng, HEX, 8)}-{pick(rng, HEX, 24)}"]), \
            rng.choice(["trace", "request id", "X-Request-Id"])
    if sort == "digest":
        data = rng.randbytes(16)
        return "sha256", rng.choice([hashlib.sha256(data).hexdigest(), "sha256:" + hashlib.sha256(data).hexdigest(),
                                     hashlib.md5(data).hexdigest(), f'W/"{hashlib.sha1(data).hexdigest()}"']), \
            rng.choice(["checksum", "ETag", "digest", "SHA-256 of owners.csv"])
    if sort == "uuid":
        return "lease_id", str(uuid.UUID(int=rng.getrandbits(128), version=4)), \
            rng.choice(["lease id", "معرّف العقد", "Kira sözleşmesi kimliği", "ID du bail"])
    if sort == "version":
        return "version", rng.choice([f"v{rng.randint(1, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 99)}",
                                      f"{rng.randint(1, 9)}.{rng.randint(100, 300)}.0.{rng.randint(1000, 9999)}",
                                      "2024-06-20",
                                      f"firmware {rng.randint(1, 6)}.{rng.randint(0, 9)}.{digits(rng, 4)}"]), \
            rng.choice(["app version", "API version", "Sürüm", "الإصدار"])
    if sort == "timestamp":
        return "ts", rng.choice([stamp(rng), str(1767225600 + rng.randint(0, 30_000_000)),
                                 str(1767225600000 + rng.randint(0, 30_000_000_000)),
                                 f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2026 "
                                 f"{rng.randint(10, 23)}:{rng.randint(10, 59)}"]), \
            rng.choice(["updated_at", "check-in", "تاريخ الدخول", "Giriş tarihi"])
    if sort == "coordinates":
        lat, lon = rng.choice([(25.08, 55.14), (24.71, 46.67), (25.29, 51.53), (41.04, 29.01), (30.04, 31.24),
                               (33.57, -7.59), (36.81, 10.18), (36.75, 3.06), (23.59, 58.41), (26.22, 50.58)])
        return "location", f"{lat + rng.uniform(-.05, .05):.6f}, {lon + rng.uniform(-.05, .05):.6f}", \
            rng.choice(["coordinates", "الموقع", "Konum", "GPS"])
    if sort == "measurement":
        return "size", rng.choice([f"{rng.randint(400, 9000):,} sq ft", f"{rng.uniform(35, 900):.2f} m²",
                                   f"{rng.randint(1, 6)} BR / {rng.randint(1, 5)} BA", f"{rng.randint(80, 2400)} kWh",
                                   f"{rng.uniform(1, 40):.1f} m³ water"]), \
            rng.choice(["Size", "المساحة", "Brüt alan", "Surface", "Meter reading"])
    if sort == "toll_free":
        return "support_line", rng.choice([f"800 {digits(rng, 4)}", f"8001{digits(rng, 3)}", f"800 {digits(rng, 7)}",
                                           f"1-800-{digits(rng, 3)}-{digits(rng, 4)}",
                                           f"0800 {digits(rng, 3)} {digits(rng, 4)}",
                                           f"444 {digits(rng, 1)} {digits(rng, 3)}", f"9200 {digits(rng, 5)}"]), \
            rng.choice(["Toll-free customer service", "الرقم المجاني لخدمة العملاء", "Ücretsiz çağrı merkezi",
                        "Numéro vert", "Unified call centre number"])
    if sort == "short_code":
        return "sms_short_code", rng.choice([digits(rng, 4), f"{rng.randint(1000, 9999)}",
                                             f"{rng.randint(100, 999)}"]), \
            rng.choice(["Send STOP to short code", "أرسل إلى الرقم المختصر", "Kısa numara", "Code court SMS"])
    if sort == "company_tax_id":
        return "tax_id", rng.choice([f"VKN {vkn(rng)}", f"SIREN {siren(rng)}", vkn(rng)]), \
            rng.choice(["Landlord company tax no.", "Vergi No (şirket)", "SIREN de la SCI", "الرقم الضريبي للشركة"])
    if sort == "luhn_invalid":
        n = bad_luhn(rng)
        return "reference", group_card(n, rng.choice([" ", "-", ""])), \
            rng.choice(["Tracking no.", "Parcel ref", "رقم الشحنة", "Kargo takip no"])
    if sort == "invalid_iban":
        ib = bad_iban(rng)
        return "iban_draft", rng.choice([ib, group(ib, 4, " ")]), \
            rng.choice(["IBAN (rejected: check digits)", "IBAN غير صالح", "Geçersiz IBAN", "IBAN invalide"])
    if sort == "masked":
        return "masked", rng.choice([f"**** **** **** {digits(rng, 4)}", f"****{digits(rng, 4)}",
                                     f"AE** **** **** **** ***{digits(rng, 1)} {digits(rng, 3)}",
                                     f"+971 5* *** **{digits(rng, 2)}", f"{rng.choice('amkys')}***@gmail.com",
                                     f"sk_live_****{pick(rng, B62, 4)}", f"XXXX-XXXX-XXXX-{digits(rng, 4)}"]), \
            rng.choice(["Card on file", "البطاقة المحفوظة", "Kayıtlı kart", "Carte enregistrée", "Contact (masked)"])
    if sort == "placeholder":
        return rng.choice(["api_key", "password", "server_key", "token"]), rng.choice(PLACEHOLDERS), \
            rng.choice(["API key", "Password", "Server key", "كلمة المرور", "Şifre"])
    if sort == "example_key":
        return "example", rng.choice(EXAMPLES), rng.choice(["Example from the docs", "مثال من التوثيق",
                                                             "Dokümandaki örnek", "Exemple de la doc"])
    if sort == "code_identifier":
        return "class", rng.choice(["listing-card__price--discounted", "#1f6feb", "btn btn-primary btn-lg",
                                    "getTenantByUnitId", "OwnerStatementService.render", "PAYMENT_STATUS_AUTHORISED",
                                    "rgba(12, 34, 56, 0.8)", "useReservationQuery", "kira_tahsilati_job",
                                    f"sync_owner_{digits(rng, 2)}_statements", "data-testid=unit-row"]), \
            rng.choice(["css class", "function", "handler", "component"])
    if sort == "path_url":
        return "url", rng.choice([f"https://www.bayut.com/property/details-{digits(rng, 7)}.html",
                                  "https://www.propertyfinder.ae/en/plp/rent/apartment-for-rent-dubai-"
                                  f"{digits(rng, 8)}.html",
                                  f"https://www.sahibinden.com/ilan/emlak-konut-kiralik-{digits(rng, 10)}/detay",
                                  f"/var/lib/guesty/exports/2026-0{rng.randint(1, 9)}/owners.csv",
                                  f"s3://{rng.choice(COMPANIES)}-media/listings/{digits(rng, 6)}"
                                  f"/IMG_{digits(rng, 4)}.jpg",
                                  "https://api.paytabs.com/payment/request",
                                  "https://www.airbnb.com/rooms/" + digits(rng, 8)]), \
            rng.choice(["link", "الرابط", "Bağlantı", "Lien", "path"])
    if sort == "listing_id":
        return "listing_id", rng.choice([f"İlan No: {rng.randint(10**9, 2 * 10**9)}", f"PF-{digits(rng, 7)}",
                                         f"BY{digits(rng, 8)}", f"Avito {rng.randint(10**9, 4 * 10**9)}",
                                         f"Aqar #{digits(rng, 7)}"]), \
            rng.choice(["Listing", "رقم الإعلان", "İlan numarası", "Annonce"])
    if sort == "permit_number":
        return "permit", rng.choice([f"Trakheesi permit {digits(rng, 11)}", f"RERA ORN {rng.randint(1000, 99999)}",
                                     f"BRN {rng.randint(10000, 99999)}", f"DTCM {digits(rng, 6)}",
                                     f"FAL license {rng.randint(1100000000, 1199999999)}"]), \
            rng.choice(["Permit", "رقم التصريح", "Ruhsat no", "Numéro de permis"])
    if sort == "amount":
        return "amount", rng.choice([f"AED {rng.randint(20, 400) * 500:,}.00",
                                     f"₺{rng.randint(10, 90)}.{rng.randint(100, 999)},00",
                                     f"{rng.randint(1, 99)} {rng.randint(100, 999)},00 MAD",
                                     f"SAR {rng.randint(1000, 99999):,}",
                                     f"EGP {rng.randint(1000, 99999):,}.50"]), \
            rng.choice(["Rent due", "الإيجار المستحق", "Kira bedeli", "Loyer"])
    # payment references
    return "payment_ref", rng.choice([f"TST{digits(rng, 13)}", f"pay_{pick(rng, LOWER_ALNUM, 26)}",
                                      f"Fawry ref {digits(rng, 9)}", f"iyz-{digits(rng, 8)}",
                                      f"cmi-order-{digits(rng, 7)}"]), \
        rng.choice(["Payment reference", "مرجع الدفع", "Ödeme referansı", "Référence de paiement"])


NEG_SORTS = ("booking_code", "contract_number", "work_order", "invoice_number", "trace_id", "digest", "uuid",
             "version", "timestamp", "coordinates", "measurement", "toll_free", "short_code", "company_tax_id",
             "luhn_invalid", "invalid_iban", "masked", "placeholder", "example_key", "code_identifier", "path_url",
             "listing_id", "permit_number", "amount", "payment_ref")


def generate_negatives() -> Iterator[tuple[str, str]]:
    """(sort, text): near misses in the cases' carriers, with no secret and no personal data."""
    rng = random.Random(f"{SEED}-negatives")
    for sort in NEG_SORTS:
        for i in range(28):
            key, value, label = near_miss(rng, sort)
            if i % 3 == 0:
                head = rng.choice(JSON_HEADS)
                doc = json_doc(rng, head, key, value)
                yield sort, json.dumps(doc, ensure_ascii=rng.random() < .3)
            elif i % 7 == 1:
                yield sort, f"{env_key(key)}={value}" if " " not in value else f'{env_key(key)}="{value}"'
            else:
                yield sort, text_doc(rng, rng.choice(TEXT_HEADS), f"{label}: {value}", sender_address=False)
