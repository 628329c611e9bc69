"""The fifty-eighth blind redaction corpus: remittances, microfinance and tourism in the Caribbean, Central America
and the Andes, as an agent that runs remittance payouts, loan origination and collections, KYC checks, resort and
cruise bookings and customer support by WhatsApp sees them. It was written from the formats' public
specifications by someone who read neither the detection rules nor the other corpora.

Carriers (the `form` head): `env`, `ini` and `yaml` configs of the agent's integrations, `cli` command lines,
`json` bodies (integration configs, token responses and the agent's own tool results), `remit` remittance and
payout callbacks, `kyc` vendor responses, `pms` resort PMS and cruise booking records, `ota` OTA webhooks, `har`
captures, `http` requests and responses, `url` links, `log` lines, `whatsapp` and `sms` threads, `call` centre
transcripts, `email` messages (some HTML), `csv` exports, `pdf` text of loan contracts and receipts, `xml`
e-invoice parties and `einvoice` JSON invoices (Costa Rica's Hacienda, Guatemala's FEL, Peru's SUNAT, Ecuador's
SRI), `ticket` helpdesk tickets, `file` PEM files; `bare` is a phone number with no context word. The style (the
form's tail) is the value's print form (`intl`, `dash`, `spaced`, `compact`, `lower` ...), its provider or
framework (`slack`, `mambu`, `django` ...) or, for `disguised`, the kind it hides and the disguise
(`password/zerowidth`).

Formats and their sources: NANP numbers (NANPA: area code and exchange NXX with N = 2-9, no N11, 555 left out),
area codes 876 and 658 (Jamaica), 868 (Trinidad and Tobago), 809/829/849 (Dominican Republic), 787/939 (Puerto
Rico) beside US and Canadian ones; ITU-T E.164 national plans: Haiti +509 (CONATEL, 8 digits, mobiles 3x/4x,
fixed 2x), Guatemala +502 (SIT: 8 digits, fixed 2/6/7, mobile 3/4/5), Honduras +504 (CONATEL: fixed 2, mobile
3/8/9), El Salvador +503 (SIGET: fixed 2, mobile 6/7), Nicaragua +505 (TELCOR: fixed 2, mobile 5/7/8), Costa
Rica +506 (SUTEL: fixed 2, mobile 6/7/8), Panama +507 (ASEP: fixed 7 digits, mobile 6 + 7 digits), Colombia +57
(CRC plan of 2021: mobile 3xx + 7 digits, fixed 60 + area + 7 digits), Ecuador +593 (ARCOTEL: mobile 09 + 8
digits, fixed 0 + area + 7), Peru +51 (MTC/OSIPTEL: mobile 9 + 8 digits, Lima (01) + 7, provinces 0 + 2-digit
area + 6), Bolivia +591 (ATT: mobile 6/7 + 7 digits, fixed area 2/3/4 + 7 digits); Ofcom's plan (UK, the drama
ranges left out), ARCEP's (France), BNetzA's (Germany), TRAI's (India). Cards: ISO/IEC 7812 with the Luhn check
(Visa 4, Mastercard 51-55 and 2221-2720, Amex 34/37, Discover 6011). IBANs: ISO 13616 with MOD 97-10 and the
SWIFT IBAN registry's BBAN structures (CR, GT, DO, SV, BR, NL, ES, FR, DE). US SSNs: SSA's area/group/serial
rules (no 000, 666 or 9xx area, no 00 group, no 0000 serial). AWS access keys (AKIA/ASIA + 16 base32 characters)
and 40-character secret keys (AWS IAM docs); Slack, Discord, Microsoft Teams (Office 365 connector and Power
Automate workflow), Google Chat, Zapier, Make, Telegram Bot API and Mattermost incoming webhook URLs as their docs
print them; Stripe `whsec_` signing secrets, `sk_live_`/`rk_live_` keys; RFC 7519 JWTs; RFC 6749 bearer tokens
(Google `ya29.`, GitHub `gho_` with its CRC32 checksum, Slack `xoxp-`, PayPal `A21AA`); cookies as the
frameworks set them (PHP, Tomcat, ASP.NET, Express `connect.sid`, Django, Rails, Laravel); PEM private keys
(RFC 7468: SEC1 EC, PKCS#8 Ed25519 and EC, OpenSSH `openssh-key-v1`); RFC 6238 TOTP seeds in base32 and Google
Authenticator's `otpauth://` URIs; API keys of OpenAI, Anthropic, SendGrid, Google, Mercado Pago, Wompi, Meta's
WhatsApp Cloud API, GitHub, Hugging Face and Mailgun as their docs show them; keys with no published prefix
(Mambu, PayU Latam, Kushki, MonCash, Twilio auth tokens) under labels.

National ids (outside the target, in OUTSIDE_TARGET): Dominican cédula (JCE: 3-digit municipality, 7 digits and a
mod 10 check with weights 1,2 - Luhn's), Ecuadorian cédula (Registro Civil: province 01-24, third digit under 6,
mod 10 with weights 2,1) and a natural person's RUC (SRI: the cédula and 001), Peruvian DNI with its check
character (RENIEC: weights 3,2,7,6,5,4,3,2, mod 11, digit or letter) and a natural person's RUC (SUNAT: 10, the
DNI and a mod 11 check, weights 5,4,3,2,7,6,5,4,3,2), Colombian NIT of a natural person (DIAN: cédula and a mod 11
check with the prime weights 3,7,13,17,19,23,29,37,41,43), Costa Rican cédula (TSE: province, tomo and asiento,
no check digit: its shape only), Guatemalan CUI (RENAP: 8 digits, a mod 11 check with weights 2-9, department
01-22 and a municipality of it) and NIT (SAT: mod 11 from the right, K for 10).

Judgements (what `secret` is): only what must not survive redaction, verbatim as it stands in the text: the whole
value of a password, key, token, cookie, phone number, e-mail address, card, IBAN, SSN or id; a webhook URL's token
segment (Slack's last segment, Discord's token, the Teams connector's 32-hex segment, the workflow's `sig`, Google
Chat's `token`, Zapier's and Make's hook key, the Telegram bot token after the colon, Mattermost's hook id); a
connection string's password or account key (not the user or host); a PEM key's base64 body (not its armour
lines); the disguised form as written (zero-width characters, full-width forms, percent escapes, `\\uXXXX`
escapes or HTML character references included).

Languages: Spanish (Caribbean, Central American, Andean), Caribbean English, Jamaican Patois, Haitian Creole,
French, Dutch, Papiamento and Portuguese carriers; a few phone context words in Quechua (`telefono yupay`,
`telefonoy`), Aymara, Guaraní (`che pumbyry`) and K'iche', loanword-based. Garifuna is not written: its writer
knew no phone or key word of it to write.

Near misses (`generate_negatives`, 28 of each of 25 sorts): booking and PNR locators, remittance tracking numbers
(MTCN-style), loan and savings account numbers of the domain's own systems, e-invoice numbers and access keys
(a FEL authorization's series and number as SAT derives them from its UUID), request and trace ids, UUIDs and
Mambu-style encoded keys, digests, versions, timestamps and dates, coordinates, measurements, public toll-free and
short-code numbers named as such, company registration numbers with their check digits, Luhn-invalid card-like
numbers, IBANs with a wrong check, masked values, placeholders, the vendors' documented example keys, CSS and code
identifiers, paths and URLs without credentials, bank codes (BIC), cabin, folio and room numbers, amounts and
exchange rates, ticket numbers: none holds a secret or personal data.
"""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from benchmarks.corpus_formats import (
    B62,
    b64url,
    bban,
    crc_token,
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 58
PER_KIND = 100
OUTSIDE_TARGET = frozenset({"id_do_cedula", "id_ec_cedula", "id_ec_ruc", "id_pe_dni", "id_pe_ruc", "id_co_nit",
                            "id_cr_cedula", "id_gt_cui", "id_gt_nit"})


@dataclass(frozen=True)
class Case:
    kind: str
    form: str
    secret: str
    text: str
    is_json: bool

    @property
    def carried(self) -> str:
        """The stored string as redaction receives it."""
        return self.text


def J(obj: object) -> str:
    """A JSON document as the carriers store it (UTF-8, non-ASCII characters as they are)."""
    return json.dumps(obj, ensure_ascii=False)


ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"
BASE32 = string.ascii_uppercase + "234567"

FIRST = ["María José", "Yesenia", "Keisha", "Jean-Robert", "Wilfredo", "Marisol", "Dwayne", "Nadège", "Luz Marina",
         "Andrés", "Shanice", "Gustavo", "Rosalba", "Kervin", "Yolanda", "Fabiola", "Rudolph", "Mirlande", "Eliseo",
         "Xiomara", "Tamika", "Ronaldo", "Dayana", "Efraín", "Quispe", "Wendy", "Jhonny", "Guadalupe"]
LAST = ["Mamani", "Quispe", "Huamán", "Cabrera", "Pérez", "Joseph", "Pierre-Louis", "Campbell", "Brown",
        "Ramírez", "Mejía", "Castillo", "Bonilla", "Rojas", "Villca", "Choque", "Martínez", "Henríquez", "Baptiste",
        "Fernández", "Ajú", "Tzul", "Sabio", "Martina", "Girigorie", "Ortiz", "Gutiérrez", "Condori"]


def name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def ref(rng: random.Random, prefix: str, n: int = 6) -> str:
    return f"{prefix}{digits(rng, n)}"


# ---- national ids -----------------------------------------------------------------------------------------------

def do_cedula(rng: random.Random) -> str:
    """JCE cédula: municipality (001 Distrito Nacional, 031 Santiago, 402 new series ...), 7 digits, a Luhn digit."""
    body = rng.choice(["001", "002", "031", "037", "047", "056", "223", "225", "402", "026"]) + digits(rng, 7)
    return body + luhn_digit(body)


def ec_cedula(rng: random.Random) -> str:
    """Registro Civil: province 01-24, third digit 0-5, 6 digits, mod 10 with coefficients 2,1,2,... (>9: -9)."""
    body = f"{rng.randint(1, 24):02d}" + str(rng.randint(0, 5)) + digits(rng, 6)
    total = 0
    for i, ch in enumerate(body):
        p = int(ch) * (2 if i % 2 == 0 else 1)
        total += p - 9 if p > 9 else p
    return body + str((10 - total % 10) % 10)


def pe_dni(rng: random.Random) -> tuple[str, str]:
    """RENIEC DNI: 8 digits and the check (weights 3,2,7,6,5,4,3,2; key = 11 - sum mod 11, 11 -> 0) printed as a
    digit (6,7,8,9,0,1,1,2,3,4,5) or a letter (K,A,B,...,J)."""
    body = str(rng.randint(1, 7)) + digits(rng, 7)
    total = sum(int(d) * w for d, w in zip(body, (3, 2, 7, 6, 5, 4, 3, 2), strict=True))
    key = 11 - total % 11
    key = 0 if key == 11 else key
    return body, rng.choice(["67890112345"[key], "KABCDEFGHIJ"[key]])


def pe_ruc_check(body: str) -> str:
    total = sum(int(d) * w for d, w in zip(body, (5, 4, 3, 2, 7, 6, 5, 4, 3, 2), strict=True))
    r = 11 - total % 11
    return "0" if r == 10 else "1" if r == 11 else str(r)


def co_nit_check(body: str) -> str:
    weights = (3, 7, 13, 17, 19, 23, 29, 37, 41, 43, 47, 53, 59, 67, 71)
    total = sum(int(d) * w for d, w in zip(reversed(body), weights, strict=False))
    r = total % 11
    return str(r if r in (0, 1) else 11 - r)


GT_MUNICIPALITIES = {1: 17, 2: 8, 3: 16, 4: 16, 5: 14, 6: 14, 7: 19, 8: 8, 9: 24, 10: 21, 11: 9, 12: 30, 13: 32,
                     14: 21, 15: 8, 16: 17, 17: 14, 18: 5, 19: 11, 20: 11, 21: 7, 22: 17}


def gt_cui(rng: random.Random) -> str:
    """RENAP CUI: 8 digits, check = sum(d_i * (i + 2)) mod 11 (numbers whose check would be 10 are not issued),
    department 01-22 and one of its municipalities."""
    while True:
        body = str(rng.randint(1, 4)) + digits(rng, 7)
        check = sum(int(d) * (i + 2) for i, d in enumerate(body)) % 11
        if check < 10:
            dept = rng.randint(1, 22)
            return f"{body}{check}{dept:02d}{rng.randint(1, GT_MUNICIPALITIES[dept]):02d}"


def gt_nit(rng: random.Random) -> str:
    """SAT NIT: digits and a mod 11 check from the right (weights 2, 3, ...), 10 written K."""
    body = str(rng.randint(1, 9)) + digits(rng, rng.choice([5, 6, 7]))
    total = sum(int(d) * (len(body) + 1 - i) for i, d in enumerate(body))
    r = (11 - total % 11) % 11
    return body + "-" + ("K" if r == 10 else str(r))


def ids(kind: str, rng: random.Random, i: int) -> tuple[str, str]:
    """(value as written, style) of a national id kind."""
    if kind == "id_do_cedula":
        v = do_cedula(rng)
        return (f"{v[:3]}-{v[3:10]}-{v[10]}", "dashed") if i % 3 else (v, "compact")
    if kind == "id_ec_cedula":
        v = ec_cedula(rng)
        return (f"{v[:9]}-{v[9]}", "dashed") if i % 4 == 0 else (v, "compact")
    if kind == "id_ec_ruc":
        return ec_cedula(rng) + "001", "natural"
    if kind == "id_pe_dni":
        body, check = pe_dni(rng)
        return (f"{body}-{check}", "check") if i % 2 else (body, "plain")
    if kind == "id_pe_ruc":
        body = "10" + pe_dni(rng)[0]
        return body + pe_ruc_check(body), "natural"
    if kind == "id_co_nit":
        body = str(rng.choice([1, 7, 8, 5, 4, 3])) + digits(rng, rng.choice([7, 9]))
        if i % 3 == 0:
            return f"{body}-{co_nit_check(body)}", "compact"
        return f"{int(body):,}".replace(",", ".") + f"-{co_nit_check(body)}", "dotted"
    if kind == "id_cr_cedula":
        v = f"{rng.randint(1, 9)}{rng.randint(1, 1999):04d}{rng.randint(1, 999):04d}"
        return (f"{v[0]}-{v[1:5]}-{v[5:]}", "dashed") if i % 3 else (v, "compact")
    if kind == "id_gt_cui":
        v = gt_cui(rng)
        return (f"{v[:4]} {v[4:9]} {v[9:]}", "spaced") if i % 2 else (v, "compact")
    if kind == "id_gt_nit":
        return gt_nit(rng), "dashed"
    raise KeyError(kind)


ID_LABEL = {"id_do_cedula": ["Cédula", "Cédula de identidad y electoral", "No. de cédula"],
            "id_ec_cedula": ["Cédula", "C.I.", "cédula de ciudadanía"],
            "id_ec_ruc": ["RUC", "RUC (persona natural)", "No. RUC"],
            "id_pe_dni": ["DNI", "D.N.I.", "Documento Nacional de Identidad"],
            "id_pe_ruc": ["RUC", "N° RUC", "RUC del titular"],
            "id_co_nit": ["NIT", "NIT persona natural", "Nit."],
            "id_cr_cedula": ["Cédula", "cédula de identidad", "Céd."],
            "id_gt_cui": ["CUI", "DPI (CUI)", "Código Único de Identificación"],
            "id_gt_nit": ["NIT", "NIT del cliente", "Nit receptor"]}


def id_templates(kind: str) -> list:
    labels = ID_LABEL[kind]
    return [
        ("kyc", True, lambda r, v: J({"provider": "verifica", "check": {"document_type": labels[0],
                                                                       "document_number": v, "status": "match",
                                                                       "score": round(r.uniform(0.8, 1), 3)}})),
        ("csv", False, lambda r, v: f"solicitud,nombre,{labels[0].lower()},monto\nSOL-{digits(r, 6)},"
                                    f"{name(r)},{v},{r.randint(200, 5000)}.00"),
        ("pdf", False, lambda r, v: f"CONTRATO DE PRÉSTAMO GRUPAL\nEl/la prestatario/a {name(r)}, con {labels[1]} "
                                    f"{v}, declara recibir la suma de ..."),
        ("whatsapp", False, lambda r, v: f"[{r.randint(8, 20)}:{r.randint(10, 59)}] Cliente: mi {labels[2]} es "
                                         f"{v}, para el envío"),
        ("json", True, lambda r, v: J({"client": {"encodedKey": digits(r, 12), "idDocuments": [
            {"documentType": labels[0], "documentId": v}]}})),
        ("log", False, lambda r, v: f"INFO kyc.match {labels[0]}={v} result=APPROVED latency_ms={r.randint(80, 900)}"),
        ("xml", False, lambda r, v: f"<Receptor><Nombre>{name(r)}</Nombre><IdReceptor tipo=\"{labels[0]}\">{v}"
                                    f"</IdReceptor></Receptor>"),
        ("ticket", False, lambda r, v: f"Ticket #{digits(r, 5)}: la socia no puede abrir cuenta, {labels[1]} {v} "
                                       f"aparece como duplicada."),
        ("call", False, lambda r, v: f"Agente: ¿Me confirma su {labels[2]}?\nCliente: Sí, {v}."),
        ("einvoice", True, lambda r, v: J({"receptor": {"tipoDocumento": labels[0], "numero": v},
                                           "total": round(r.uniform(10, 900), 2)})),
    ]


# ---- phones -----------------------------------------------------------------------------------------------------

def nxx(rng: random.Random) -> str:
    """A NANP central office code: N = 2-9, not N11, not 555."""
    while True:
        code = str(rng.randint(2, 9)) + digits(rng, 2)
        if code[1:] != "11" and code != "555":
            return code


def nanp(rng: random.Random, area: str, exchange: str, i: int) -> tuple[str, str]:
    line = digits(rng, 4)
    styles = [("paren", f"({area}) {exchange}-{line}"), ("dash", f"{area}-{exchange}-{line}"),
              ("intl", f"+1 {area} {exchange} {line}"), ("e164", f"+1{area}{exchange}{line}"),
              ("trunk", f"1-{area}-{exchange}-{line}"), ("dotted", f"{area}.{exchange}.{line}"),
              ("intl_dash", f"+1-{area}-{exchange}-{line}")]
    style, value = styles[i % len(styles)]
    return value, style


def eight(rng: random.Random, cc: str, first: str, i: int) -> tuple[str, str]:
    """An 8-digit Central American or Haitian number whose leading digits are `first`."""
    n = first + digits(rng, 8 - len(first))
    styles = [("dash", f"{n[:4]}-{n[4:]}"), ("intl", f"+{cc} {n[:4]} {n[4:]}"), ("spaced", f"{n[:4]} {n[4:]}"),
              ("e164", f"+{cc}{n}"), ("intl_dash", f"+{cc} {n[:4]}-{n[4:]}"), ("paren", f"({cc}) {n[:4]}-{n[4:]}"),
              ("compact", n)]
    style, value = styles[i % len(styles)]
    return value, style


def phone(kind: str, rng: random.Random, i: int) -> tuple[str, str]:
    if kind == "phone_us_ca":
        area = rng.choice(["212", "305", "312", "347", "404", "415", "469", "617", "646", "718", "786", "832", "917",
                           "954", "973", "416", "514", "604", "647", "905"])
        return nanp(rng, area, nxx(rng), i)
    if kind == "phone_jm":
        area = rng.choice(["876"] * 5 + ["658"])
        ex = rng.choice(["92", "95", "97", "35", "36", "37", "38", "39", "84", "85", "87", "88"]) + digits(rng, 1)
        return nanp(rng, area, ex, i)
    if kind == "phone_tt":
        ex = rng.choice(["62", "63", "65", "46", "47", "48", "70", "73", "75", "78", "30", "35"]) + digits(rng, 1)
        return nanp(rng, "868", ex, i)
    if kind == "phone_do":
        return nanp(rng, rng.choice(["809", "829", "849"]), nxx(rng), i)
    if kind == "phone_pr":
        return nanp(rng, rng.choice(["787", "939"]), nxx(rng), i)
    if kind == "phone_ht":
        return eight(rng, "509", rng.choice(["31", "34", "36", "37", "38", "39", "40", "41", "42", "43", "44", "46",
                                             "47", "48", "22", "28", "29"]), i)
    if kind == "phone_gt":
        return eight(rng, "502", rng.choice(["3", "4", "5", "2", "7", "6"]), i)
    if kind == "phone_hn":
        return eight(rng, "504", rng.choice(["3", "8", "9", "9", "22", "25", "26"]), i)
    if kind == "phone_sv":
        return eight(rng, "503", rng.choice(["6", "7", "7", "22", "24"]), i)
    if kind == "phone_ni":
        return eight(rng, "505", rng.choice(["5", "7", "8", "8", "22", "25"]), i)
    if kind == "phone_cr":
        return eight(rng, "506", rng.choice(["6", "7", "8", "8", "22", "24", "25"]), i)
    if kind == "phone_pa":
        if i % 4 == 3:
            n = rng.choice(["2", "3", "7"]) + digits(rng, 6)
            return rng.choice([(f"{n[:3]}-{n[3:]}", "fixed"), (f"+507 {n[:3]}-{n[3:]}", "fixed_intl")])
        return eight(rng, "507", "6", i)
    if kind == "phone_co":
        if i % 4 == 3:
            area = rng.choice(["1", "4", "2", "5"])
            s = str(rng.randint(2, 7)) + digits(rng, 6)
            return rng.choice([(f"(60{area}) {s[:3]} {s[3:]}", "fixed"), (f"+57 60{area} {s[:3]} {s[3:]}",
                                                                            "fixed_intl")])
        n = rng.choice(["300", "301", "302", "304", "305", "310", "311", "312", "313", "314", "315", "316", "317",
                        "318", "320", "321", "350", "351"]) + digits(rng, 7)
        styles = [("spaced", f"{n[:3]} {n[3:6]} {n[6:]}"), ("intl", f"+57 {n[:3]} {n[3:6]} {n[6:]}"),
                  ("compact", n), ("e164", f"+57{n}"), ("dash", f"{n[:3]}-{n[3:6]}-{n[6:]}")]
        style, value = styles[i % len(styles)]
        return value, style
    if kind == "phone_ec":
        if i % 4 == 3:
            area = rng.choice(["2", "4", "7", "5"])
            s = str(rng.randint(2, 7)) + digits(rng, 6)
            return rng.choice([(f"(0{area}) {s[:3]}-{s[3:]}", "fixed"), (f"+593 {area} {s[:3]} {s[3:]}",
                                                                         "fixed_intl")])
        n = rng.choice(["96", "97", "98", "99", "95", "93"]) + digits(rng, 7)
        styles = [("national", f"0{n[:2]} {n[2:5]} {n[5:]}"), ("intl", f"+593 {n[:2]} {n[2:5]} {n[5:]}"),
                  ("compact", f"0{n}"), ("e164", f"+593{n}"), ("dash", f"0{n[:2]}-{n[2:5]}-{n[5:]}")]
        style, value = styles[i % len(styles)]
        return value, style
    if kind == "phone_pe":
        if i % 4 == 3:
            if rng.random() < 0.5:
                s = str(rng.randint(2, 7)) + digits(rng, 6)
                return f"(01) {s[:3]}-{s[3:]}", "fixed_lima"
            area = rng.choice(["44", "54", "74", "84", "76", "73"])
            s = str(rng.randint(2, 6)) + digits(rng, 5)
            return f"(0{area}) {s[:3]}{s[3:]}", "fixed_province"
        n = "9" + digits(rng, 8)
        styles = [("spaced", f"{n[:3]} {n[3:6]} {n[6:]}"), ("intl", f"+51 {n[:3]} {n[3:6]} {n[6:]}"),
                  ("compact", n), ("e164", f"+51{n}"), ("dash", f"{n[:3]}-{n[3:6]}-{n[6:]}")]
        style, value = styles[i % len(styles)]
        return value, style
    if kind == "phone_bo":
        if i % 4 == 3:
            area = rng.choice(["2", "3", "4"])
            s = area + digits(rng, 6)
            return rng.choice([(f"({area}) {s[:3]}-{s[3:]}", "fixed"), (f"+591 {area} {s}", "fixed_intl")])
        n = rng.choice(["6", "7", "7"]) + digits(rng, 7)
        styles = [("compact", n), ("intl", f"+591 {n}"), ("spaced", f"{n[:4]} {n[4:]}"), ("e164", f"+591{n}"),
                  ("dash", f"{n[:3]}-{n[3:]}")]
        style, value = styles[i % len(styles)]
        return value, style
    if kind == "phone_uk":
        if i % 3 == 2:
            value = rng.choice([f"020 {rng.choice('78')}{rng.randint(100, 899)} {digits(rng, 4)}",
                                f"0161 {rng.randint(200, 999)} {digits(rng, 4)}",
                                f"0121 {rng.randint(200, 799)} {digits(rng, 4)}",
                                f"+44 20 {rng.choice('78')}{rng.randint(100, 899)} {digits(rng, 4)}"])
            return value, "fixed"
        n = "7" + rng.choice(["4", "5", "7", "8", "9"]) + digits(rng, 8)
        while n.startswith("7700900"):
            n = "78" + digits(rng, 8)
        styles = [("national", f"0{n[:4]} {n[4:]}"), ("intl", f"+44 {n[:4]} {n[4:]}"), ("compact", f"0{n}"),
                  ("e164", f"+44{n}"), ("intl_paren", f"+44 (0){n[:4]} {n[4:]}")]
        style, value = styles[i % len(styles)]
        return value, style
    if kind == "phone_fr":
        lead = rng.choice(["6", "7", "1", "4", "5"])
        n = lead + (str(rng.randint(0, 8)) if lead in "67" else str(rng.randint(1, 9))) + digits(rng, 7)
        pairs = " ".join([n[1:3], n[3:5], n[5:7], n[7:9]])
        styles = [("national", f"0{n[0]} {pairs}"), ("intl", f"+33 {n[0]} {pairs}"), ("dotted", f"0{n[0]}."
                  + pairs.replace(" ", ".")), ("compact", f"0{n}"), ("e164", f"+33{n}")]
        style, value = styles[i % len(styles)]
        return value, style
    if kind == "phone_de":
        if i % 3 == 2:
            value = rng.choice([f"030 {rng.randint(2, 9)}{digits(rng, 7)}",
                                f"089 {rng.randint(2, 9)}{digits(rng, 6)}",
                                f"+49 30 {rng.randint(2, 9)}{digits(rng, 7)}",
                                f"040 {rng.randint(2, 9)}{digits(rng, 7)}"])
            return value, "fixed"
        pre, rest = rng.choice([("151", 8), ("152", 8), ("160", 7), ("170", 7), ("171", 7), ("172", 7), ("176", 8),
                                ("157", 8), ("162", 7), ("175", 7)])
        sub = str(rng.randint(1, 9)) + digits(rng, rest - 1)
        styles = [("national", f"0{pre} {sub}"), ("intl", f"+49 {pre} {sub}"), ("slash", f"0{pre}/{sub}"),
                  ("e164", f"+49{pre}{sub}"), ("dash", f"0{pre}-{sub}")]
        style, value = styles[i % len(styles)]
        return value, style
    if kind == "phone_in":
        if i % 4 == 3:
            value = rng.choice([f"011 2{digits(rng, 3)} {digits(rng, 4)}",
                                f"022 2{digits(rng, 3)} {digits(rng, 4)}",
                                f"080 4{digits(rng, 3)} {digits(rng, 4)}",
                                f"+91 11 2{digits(rng, 3)} {digits(rng, 4)}"])
            return value, "fixed"
        n = rng.choice(["9", "8", "7", "6"]) + digits(rng, 9)
        styles = [("intl", f"+91 {n[:5]} {n[5:]}"), ("national", f"0{n[:5]} {n[5:]}"), ("compact", n),
                  ("e164", f"+91{n}"), ("dash", f"+91-{n}")]
        style, value = styles[i % len(styles)]
        return value, style
    raise KeyError(kind)


PHONE_WORDS = {
    "phone_us_ca": ["phone", "cell", "call me at", "mobile", "contact number"],
    "phone_jm": ["phone", "cell", "call mi pon", "mi numba a", "WhatsApp mi pon"],
    "phone_tt": ["phone", "cell", "call me on", "contact no.", "mobile"],
    "phone_do": ["teléfono", "celular", "llámame al", "mi número es", "WhatsApp"],
    "phone_pr": ["teléfono", "celular", "phone", "llámeme al", "número de contacto"],
    "phone_ht": ["nimewo telefòn", "rele m nan", "téléphone", "nimewo WhatsApp", "portable"],
    "phone_gt": ["teléfono", "celular", "número de tel.", "ri unumer ri telefon", "WhatsApp"],
    "phone_hn": ["teléfono", "celular", "número", "tel.", "número de celular"],
    "phone_sv": ["teléfono", "celular", "número de contacto", "cel.", "WhatsApp"],
    "phone_ni": ["teléfono", "celular", "cel.", "número de WhatsApp", "llamar al"],
    "phone_cr": ["teléfono", "celular", "tel.", "número de contacto", "WhatsApp"],
    "phone_pa": ["teléfono", "celular", "tel.", "número de contacto", "llámeme al"],
    "phone_co": ["celular", "teléfono", "cel.", "número de contacto", "WhatsApp"],
    "phone_ec": ["celular", "teléfono", "telefono yupay", "número", "WhatsApp"],
    "phone_pe": ["celular", "teléfono", "telefonoy", "número", "WhatsApp"],
    "phone_bo": ["celular", "teléfono", "jawsañataki", "che pumbyry", "número"],
    "phone_uk": ["phone", "mobile", "tel.", "ring me on", "contact number"],
    "phone_fr": ["téléphone", "portable", "tél.", "joignable au", "numéro"],
    "phone_de": ["Telefon", "Handy", "Tel.", "Mobilnummer", "erreichbar unter"],
    "phone_in": ["phone", "mobile", "contact no.", "WhatsApp", "call on"],
}


def phone_templates(kind: str) -> list:
    words = PHONE_WORDS[kind]
    return [
        ("whatsapp", False, lambda r, v: f"[{r.randint(7, 21):02d}:{r.randint(0, 59):02d}] {name(r)}: "
                                         f"{r.choice(words)} {v}"),
        ("remit", True, lambda r, v: J({"event": "payout.ready", "transfer_id": ref(r, "TR-", 9),
                                        "beneficiary": {"name": name(r), "phone": v, "payout_method": "cash_pickup"}})),
        ("sms", False, lambda r, v: f"SMS de Cooperativa: su préstamo fue aprobado. Dudas al {v} ({words[1]})"),
        ("pms", True, lambda r, v: J({"reservation": {"confirmation": ref(r, "", 8), "guest": {
            "lastName": r.choice(LAST), "phone": v}, "roomType": "OVK"}})),
        ("call", False, lambda r, v: f"Agente: ¿A qué número le devolvemos la llamada?\nCliente: {r.choice(words)}, "
                                     f"{v}"),
        ("email", False, lambda r, v: f"Subject: Re: reserva\n\nSaludos,\n{name(r)}\n{words[0].capitalize()}: {v}"),
        ("csv", False, lambda r, v: f"socio,grupo,{words[0]}\n{digits(r, 6)},Grupo Las Palmas,{v}"),
        ("kyc", True, lambda r, v: J({"applicant_id": uuid_s(r),
                                      "contact": {words[0]: v}, "verified": True})),
        ("ticket", False, lambda r, v: f"Ticket #{digits(r, 5)} ({words[1]} {v}): no recibió el código de retiro."),
    ]


# ---- secrets ----------------------------------------------------------------------------------------------------

PW_WORDS = ["Tortuga", "Cocotero", "Volcan", "Llama", "Condor", "Quetzal", "Mango", "Arrecife", "Colibri",
            "Cafetal", "Cayo", "Bahia", "Ceiba", "Guacamaya"]
PW_SYMBOLS = "!#$%&*+-.:=?@^_~"


def password(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 == 2:
        return (rng.choice(PW_WORDS) + rng.choice("!#*.-_@") + rng.choice(PW_WORDS).lower() + digits(rng, 2)
                + rng.choice("!#$%&*?"), "phrase")
    chars = [rng.choice(string.ascii_uppercase), rng.choice(string.ascii_lowercase), rng.choice(string.digits),
             rng.choice(PW_SYMBOLS)] + [rng.choice(ALNUM + PW_SYMBOLS) for _ in range(rng.randint(9, 18))]
    rng.shuffle(chars)
    return "".join(chars), "random"


PASSWORD_TEMPLATES = [
    ("env", False, lambda r, v: f"MAMBU_API_PASSWORD={v}"),
    ("env", False, lambda r, v: f"export REMESAS_SFTP_PASSWORD='{v}'"),
    ("env", False, lambda r, v: f"WU_PAYOUT_DB_PASS={v}\nWU_PAYOUT_DB_USER=payout_svc"),
    ("yaml", False, lambda r, v: f"smtp:\n  host: smtp.coopahorro.com.gt\n  user: notificaciones\n  password: {v}\n"),
    ("yaml", False, lambda r, v: f"opera_pms:\n  usuario: INTERFAZ01\n  contraseña: \"{v}\"\n"),
    ("yaml", False, lambda r, v: f"musoni:\n  apiUser: agente_cobros\n  apiPassword: '{v}'\n"),
    ("json", True, lambda r, v: J({"integration": "musoni", "credentials": {"username": "api_agent",
                                                                           "password": v}})),
    ("json", True, lambda r, v: J({"pmsConfig": {"property": "RES-PUJ", "userName": "AGENTE01",
                                                 "userPassword": v}})),
    ("json", True, lambda r, v: J({"sftp": {"host": "sftp.remesas.example", "sftpPassword": v}})),
    ("json", True, lambda r, v: J({"tool": "core_banking.login", "args": {"user": "cobros", "dbPassword": v}})),
    ("cli", False, lambda r, v: f"$ curl -u api_cobros:{v} https://coop.mambu.com/api/loans?limit=50"),
    ("cli", False, lambda r, v: f"$ sshpass -p '{v}' sftp remesas@sftp.payout.example"),
    ("cli", False, lambda r, v: f"$ python sync_prestamos.py --user cobros --password={v} --branch 04"),
    ("whatsapp", False, lambda r, v: f"Supervisor: la contraseña del portal de remesas es {v} no la compartas"),
    ("ticket", False, lambda r, v: f"Ticket #{digits(r, 5)}: Modpas la se {v} pou kont ajan an (Haitian Creole)"),
    ("email", False, lambda r, v: f"Beste collega,\nHet wachtwoord voor de boekingsmodule is: {v}\nGroet, IT Aruba"),
    ("whatsapp", False, lambda r, v: f"Kontraseña di e sistema: {v} (Papiamento, Kòrsou)"),
    ("log", False, lambda r, v: f"DEBUG ota.connect user=channel_mgr senha={v} host=api.ota.example"),
    ("json", True, lambda r, v: J({"cruiseConnect": {"agencyId": ref(r, "AG", 5), "PASSWORD": v}})),
    ("json", True, lambda r, v: J({"configuracion": {"correo": {"usuario": "avisos", "contraseña": v}}})),
    ("json", True, lambda r, v: J({"wiseApi": {"clientId": "payouts", "client_password": v}})),
]


def aws_id(rng: random.Random) -> str:
    return rng.choice(["AKIA", "ASIA"]) + pick(rng, string.ascii_uppercase + "234567", 16)


AWS_TEMPLATES = [
    ("env", False, lambda r, v: f"AWS_ACCESS_KEY_ID={aws_id(r)}\nAWS_SECRET_ACCESS_KEY={v}\nAWS_REGION=us-east-1",
     "labelled"),
    ("ini", False, lambda r, v: f"[remesas-prod]\naws_access_key_id = {aws_id(r)}\naws_secret_access_key = {v}\n",
     "labelled"),
    ("json", True, lambda r, v: J({"Credentials": {"AccessKeyId": aws_id(r), "SecretAccessKey": v,
                                                   "Expiration": "2025-03-14T18:00:00Z"}}), "json"),
    ("json", True, lambda r, v: J({"s3_exports": {"bucket": "coop-reportes", "accessKey": aws_id(r),
                                                  "secretKey": v}}), "json"),
    ("csv", False, lambda r, v: f"User name,Access key ID,Secret access key\nkyc-uploader,{aws_id(r)},{v}",
     "unlabelled"),
    ("whatsapp", False, lambda r, v: f"TI: usa estas para el bucket de contratos {aws_id(r)} {v}", "unlabelled"),
    ("log", False, lambda r, v: f"boto: loaded creds {aws_id(r)}:{v} from profile cruise-etl", "unlabelled"),
    ("yaml", False, lambda r, v: f"storage:\n  aws_access_key_id: {aws_id(r)}\n  aws_secret_access_key: {v}\n",
     "labelled"),
    ("ticket", False, lambda r, v: f"Llave secreta de AWS para el respaldo: {v}", "labelled"),
    ("json", True, lambda r, v: J({"tool_result": {"aws_configure_list": [aws_id(r), v]}}), "unlabelled"),
]


def uuid_s(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def webhook(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(url, token segment, tool)."""
    tool = ["slack", "discord", "teams", "teams_workflow", "google_chat", "zapier", "make", "telegram",
            "mattermost"][i % 9]
    if tool == "slack":
        t = pick(rng, ALNUM, 24)
        return (f"https://hooks.slack.com/services/T0{pick(rng, string.ascii_uppercase + string.digits, 8)}/"
                f"B0{pick(rng, string.ascii_uppercase + string.digits, 9)}/{t}", t, tool)
    if tool == "discord":
        t = pick(rng, B64URL, 68)
        return f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{t}", t, tool
    if tool == "teams":
        t = pick(rng, HEX, 32)
        return (f"https://{rng.choice(['coopahorro', 'resortsdelcaribe', 'remesasandinas'])}.webhook.office.com/"
                f"webhookb2/{uuid_s(rng)}@{uuid_s(rng)}/IncomingWebhook/{t}/{uuid_s(rng)}", t, tool)
    if tool == "teams_workflow":
        t = pick(rng, B64URL, 43)
        return (f"https://prod-{rng.randint(10, 99)}.{rng.choice(['westus', 'eastus', 'brazilsouth'])}.logic.azure.com"
                f":443/workflows/{pick(rng, HEX, 32)}/triggers/manual/paths/invoke?api-version=2016-06-01"
                f"&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={t}", t, tool)
    if tool == "google_chat":
        t = pick(rng, B64URL, 43)
        return (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, B64URL, 7)}/messages?key=AIzaSyDdI0hCZtE6vyS"
                f"jMm-WEfRq3CPzqKqqsHI&token={t}", t, tool)
    if tool == "zapier":
        t = pick(rng, LOWER_ALNUM, 7)
        return f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{t}/", t, tool
    if tool == "make":
        t = pick(rng, LOWER_ALNUM, 32)
        return f"https://hook.{rng.choice(['us1', 'us2', 'eu1', 'eu2'])}.make.com/{t}", t, tool
    if tool == "telegram":
        t = "AA" + pick(rng, B64URL, 33)
        return f"https://api.telegram.org/bot{rng.randint(10**9, 8 * 10**9)}:{t}/sendMessage", t, tool
    t = pick(rng, LOWER_ALNUM, 26)
    return f"https://chat.{rng.choice(['coopsanjuan.org.pe', 'turismo-andino.bo', 'remesas.hn'])}/hooks/{t}", t, tool


WEBHOOK_TEMPLATES = [
    ("env", False, lambda r, v: f"ALERTAS_WEBHOOK_URL={v}"),
    ("yaml", False, lambda r, v: f"notificaciones:\n  canal: cobranzas-mora\n  webhook: {v}\n"),
    ("json", True, lambda r, v: J({"alerting": {"on": ["payout.failed", "kyc.rejected"], "webhook_url": v}})),
    ("json", True, lambda r, v: J({"tool_result": {"name": "notify_channel", "target": v, "status": 200}})),
    ("cli", False, lambda r, v: f"$ curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"Remesa "
                                f"pagada\"}}' {v}"),
    ("whatsapp", False, lambda r, v: f"Jefe, aquí el webhook para el canal de reservas: {v}"),
    ("ticket", False, lambda r, v: f"Le webhook {v} ne marche plus depuis hier (croisières, Cap-Haïtien)"),
    ("log", False, lambda r, v: f"WARN notifier POST {v} -> 429 Too Many Requests retry_in=30s"),
    ("email", False, lambda r, v: f"Hi team,\nPlease add this webhook to the resort ops channel:\n{v}\nThanks"),
    ("json", True, lambda r, v: J({"integrations": [{"type": "chat", "name": "cobranzas", "url": v}]})),
]


def whsec(rng: random.Random) -> str:
    return "whsec_" + pick(rng, B62, 32)


WHSEC_TEMPLATES = [
    ("env", False, lambda r, v: f"STRIPE_WEBHOOK_SECRET={v}"),
    ("cli", False, lambda r, v: f"> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing "
                                f"secret is {v} (^C to quit)"),
    ("json", True, lambda r, v: J({"stripe": {"endpoint": "/webhooks/tours", "signingSecret": v}})),
    ("json", True, lambda r, v: J({"secrets": [{"name": "STRIPE_WHSEC_EXCURSIONES", "value": v}]})),
    ("yaml", False, lambda r, v: f"pagos:\n  stripe:\n    webhook_secret: {v}\n"),
    ("whatsapp", False, lambda r, v: f"El secreto de firma del webhook de Stripe es {v}"),
    ("log", False, lambda r, v: f"ERROR signature mismatch using secret {v} for evt from tours checkout"),
    ("ticket", False, lambda r, v: f"Nou chanje sekrè webhook Stripe la: {v}"),
]


def conn_password(rng: random.Random) -> str:
    return pick(rng, ALNUM, rng.randint(12, 20)) + rng.choice(["", "", "-" + pick(rng, ALNUM, 4),
                                                                 "%40" + pick(rng, ALNUM, 3)])


def connection(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(string, secret, scheme)."""
    scheme = ["postgres", "mysql", "mongodb", "redis", "amqp", "mssql", "azure_storage", "servicebus", "jdbc"][i % 9]
    p = conn_password(rng)
    host = rng.choice(["db.coopahorro.internal", "10.20.4.17", "prestamos-db.cluster-c7x.us-east-1.rds.amazonaws.com",
                       "pms-replica.resort.local"])
    if scheme == "postgres":
        return f"postgresql://cartera_app:{p}@{host}:5432/cartera", p, scheme
    if scheme == "mysql":
        return f"mysql://reservas:{p}@{host}:3306/booking_engine", p, scheme
    if scheme == "mongodb":
        return f"mongodb+srv://kyc_svc:{p}@cluster0.{pick(rng, LOWER_ALNUM, 5)}.mongodb.net/kyc?retryWrites=true", p, \
            scheme
    if scheme == "redis":
        return f"redis://default:{p}@{host}:6379/2", p, scheme
    if scheme == "amqp":
        return f"amqps://payouts:{p}@rabbit.remesas.internal:5671/%2Fpayouts", p, scheme
    if scheme == "mssql":
        return (f"Server=tcp:{host},1433;Initial Catalog=CoreBancario;User ID=svc_cobros;Password={p};"
                f"Encrypt=True;"), p, scheme
    if scheme == "azure_storage":
        k = base64.b64encode(rng.randbytes(64)).decode()
        return (f"DefaultEndpointsProtocol=https;AccountName=contratos{digits(rng, 3)};AccountKey={k};"
                f"EndpointSuffix=core.windows.net"), k, scheme
    if scheme == "servicebus":
        k = base64.b64encode(rng.randbytes(32)).decode()
        return (f"Endpoint=sb://remesas-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
                f"SharedAccessKey={k}"), k, scheme
    return f"jdbc:postgresql://{host}:5432/ahorros?user=ahorros_ro&password={p}&ssl=true", p, scheme


CONN_TEMPLATES = [
    ("env", False, lambda r, v: f"DATABASE_URL={v}"),
    ("yaml", False, lambda r, v: f"datasource:\n  cartera:\n    url: \"{v}\"\n"),
    ("json", True, lambda r, v: J({"connections": {"core": v, "pool": 10}})),
    ("json", True, lambda r, v: J({"ConnectionStrings": {"Default": v}})),
    ("log", False, lambda r, v: f"ERROR could not connect: {v} (timeout 30s)"),
    ("whatsapp", False, lambda r, v: f"Usa esta cadena de conexión para el reporte de mora: {v}"),
    ("cli", False, lambda r, v: f"$ ./migrar_ahorros --dsn \"{v}\" --dry-run"),
    ("ticket", False, lambda r, v: f"Connection string pou rapò yo: {v}"),
    ("email", False, lambda r, v: f"Goedemorgen,\nDe connectiestring voor de reserveringsdatabase is:\n{v}\n"),
    ("json", True, lambda r, v: J({"tool_result": {"secret": "db/cartera", "connection_string": v}})),
]


LABELLED = [
    ("mambu", lambda r: pick(r, ALNUM, 32), ["Clave API de Mambu", "Mambu API key", "apiKey Mambu"]),
    ("payu", lambda r: pick(r, ALNUM, 26), ["API Key de PayU", "Llave API PayU", "PayU apiKey"]),
    ("kushki", lambda r: pick(r, HEX, 32), ["Credencial privada Kushki", "Private merchant id", "Llave privada"]),
    ("moncash", lambda r: pick(r, B64URL, 64), ["Kle sekrè MonCash", "MonCash client secret", "Sekrè kliyan"]),
    ("twilio", lambda r: pick(r, HEX, 32), ["Twilio Auth Token", "Token de autenticación Twilio",
                                            "auth token"]),
    ("tigo", lambda r: pick(r, ALNUM, 40), ["Tigo Money secreto", "Client secret Tigo", "Secreto de integración"]),
    ("cybersource", lambda r: base64.b64encode(r.randbytes(32)).decode(),
     ["Shared secret key", "Clave secreta compartida", "Geheime sleutel"]),
    ("pms", lambda r: pick(r, ALNUM, 36), ["Chave de API do PMS", "PMS API sleutel", "Kla di API"]),
]

LABELLED_TEMPLATES = [
    ("env", False, lambda r, lab, v: f"# {lab}\n{strip_accents(lab.upper()).replace(' ', '_')}={v}"),
    ("yaml", False, lambda r, lab, v: f"integraciones:\n  \"{lab}\": {v}\n"),
    ("json", True, lambda r, lab, v: J({"credenciales": {lab: v, "ambiente": "produccion"}})),
    ("json", True, lambda r, lab, v: J({"tool_result": {"secret_name": lab, "secret_value": v}})),
    ("whatsapp", False, lambda r, lab, v: f"{lab}: {v}"),
    ("email", False, lambda r, lab, v: f"Estimado equipo,\nLes comparto la {lab} nueva: {v}\nSaludos"),
    ("pdf", False, lambda r, lab, v: f"ANEXO TÉCNICO\n{lab} ....... {v}\nAmbiente: producción"),
    ("ticket", False, lambda r, lab, v: f"Ticket #{digits(r, 5)} - {lab} = {v} (rotar el lunes)"),
    ("log", False, lambda r, lab, v: f"config loaded: {lab}='{v}'"),
    ("json", True, lambda r, lab, v: J({"pasarela": {"nombre": "cobros", lab: v}})),
]


ZW = ["\u200b", "\u200c", "\u200d", "\u2060"]


def disguise(rng: random.Random, value: str, how: str) -> str:
    if how == "zerowidth":
        chars = list(value)
        for pos in sorted(rng.sample(range(1, len(chars)), min(3, len(chars) - 1)), reverse=True):
            chars.insert(pos, rng.choice(ZW))
        return "".join(chars)
    if how == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in value)
    if how == "urlenc":
        quoted = urllib.parse.quote(value, safe="")
        return quoted if quoted != value else "".join(f"%{ord(c):02X}" for c in value)
    if how == "jsonesc":
        return "".join(f"\\u{ord(c):04x}" for c in value)
    if how == "html":
        return "".join(f"&#{ord(c)};" if k % 2 else f"&#x{ord(c):x};" for k, c in enumerate(value))
    raise KeyError(how)


def disguised(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    """(text, secret, form, is_json) of a value of another target kind written in a disguise."""
    how = ["zerowidth", "fullwidth", "urlenc", "jsonesc", "html"][i % 5]
    base = ["password", "aws_secret", "stripe_whsec", "connection_string", "labelled_key", "webhook"][(i // 5) % 6]
    if base == "password":
        value, label = password(rng, i)[0], "password"
    elif base == "aws_secret":
        value, label = pick(rng, B64, 40), "aws_secret_access_key"
    elif base == "stripe_whsec":
        value, label = whsec(rng), "STRIPE_WEBHOOK_SECRET"
    elif base == "connection_string":
        value, label = conn_password(rng), "db_password"
    elif base == "labelled_key":
        value, label = pick(rng, ALNUM, 32), "Clave API de Mambu"
    else:
        value, label = pick(rng, ALNUM, 24), "slack_webhook_token"
    secret = disguise(rng, value, how)
    form = f"{base}/{how}"
    if how in ("zerowidth", "fullwidth") and (i // 5) % 4 != 3:
        return J({"config": {label: secret, "source": "agente-remesas"}}), secret, f"json/{form}", True
    if how == "zerowidth":
        return f"{label}={secret}", secret, f"env/{form}", False
    if how == "fullwidth":
        return f"WhatsApp ({name(rng)}): {label}：{secret}", secret, f"whatsapp/{form}", False
    if how == "urlenc":
        return (f"GET /api/integraciones/test?{urllib.parse.quote(label)}={secret}&ambiente=prod HTTP/1.1",
                secret, f"log/{form}", False)
    if how == "jsonesc":
        return (f"DEBUG raw body: {{\"{label}\": \"{secret}\", \"canal\": \"whatsapp\"}}", secret, f"log/{form}",
                False)
    return (f"<p>Buenos días, adjunto la credencial.</p><p>{label}: <code>{secret}</code></p>", secret,
            f"email/{form}", False)


def strip_accents(text: str) -> str:
    table = str.maketrans("áéíóúñüÁÉÍÓÚÑÜèòàÈ", "aeiounuAEIOUNUeoaE")
    return text.translate(table)


def email(rng: random.Random, i: int) -> tuple[str, str]:
    first, last = rng.choice(FIRST).split()[0], rng.choice(LAST).split("-")[0]
    local = rng.choice([f"{first}.{last}", f"{first[0]}{last}{rng.randint(1, 99)}", f"{last}.{first}",
                        f"{first}{last}"]).lower()
    domain = rng.choice(["gmail.com", "hotmail.com", "yahoo.com", "outlook.com", "coopahorro.com.gt",
                         "cableonda.net", "claro.net.do", "speedy.com.pe", "resortsdelcaribe.com", "digicelgroup.com",
                         "une.net.co", "cwpanama.net", "netcom.com.bo", "setarnet.aw"])
    style = ["plain", "upper", "idn", "urlenc", "jsonesc", "plain", "plain"][i % 7]
    ascii_local = strip_accents(local).replace(" ", "")
    if style == "idn":
        return rng.choice([f"{local}@{domain}", f"{ascii_local}@coop-añasco.pr", f"{local}@correo.com.pe"]), style
    address = f"{ascii_local}@{domain}"
    if style == "upper":
        return address.upper(), style
    if style == "urlenc":
        return address.replace("@", "%40").replace("+", "%2B"), style
    if style == "jsonesc":
        return address.replace("@", "\\u0040").replace(".", "\\u002e", 1), style
    return address, style


EMAIL_TEMPLATES = [
    ("remit", True, lambda r, v: J({"event": "transfer.completed", "id": ref(r, "TRF", 10),
                                    "sender": {"email": v, "country": "US"}, "amount": {"value": 300, "cur": "USD"}})),
    ("pms", True, lambda r, v: J({"booking": {"id": ref(r, "BK", 7), "guestEmail": v, "ship": "Caribbean Star"}})),
    ("email", False, lambda r, v: f"From: {name(r)} <{v}>\nTo: reservas@resort.example\nSubject: Cambio de fecha"),
    ("whatsapp", False, lambda r, v: f"Mi correo es {v}, ahí me manda el comprobante"),
    ("csv", False, lambda r, v: f"socio_id,correo,saldo\n{digits(r, 6)},{v},{r.randint(10, 9000)}.50"),
    ("ticket", False, lambda r, v: f"Ticket #{digits(r, 5)}: imel kliyan an se {v}"),
    ("log", False, lambda r, v: f"INFO mailer queued to={v} template=recordatorio_cuota"),
    ("kyc", True, lambda r, v: J({"applicant": {"email": v, "risk": "low", "watchlist": False}})),
    ("ota", True, lambda r, v: J({"type": "reservation.created", "data": {"guest": {"email": v}, "nights": 4}})),
]


def email_case(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    v, style = email(rng, i)
    if style == "urlenc":
        return (f"GET /unsubscribe?email={v}&campaign=cuotas-{digits(rng, 3)} HTTP/1.1", v, "log/urlenc", False)
    if style == "jsonesc":
        return f"DEBUG payload={{\"correo\":\"{v}\",\"canal\":\"sms\"}}", v, "log/jsonesc", False
    carrier, is_json, fn = EMAIL_TEMPLATES[i % len(EMAIL_TEMPLATES)]
    return fn(rng, v), v, f"{carrier}/{style}", is_json


def ssn(rng: random.Random, i: int) -> tuple[str, str]:
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            break
    a, g, s = f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
    style = ["dash", "space", "compact"][i % 3]
    return {"dash": f"{a}-{g}-{s}", "space": f"{a} {g} {s}", "compact": a + g + s}[style], style


SSN_TEMPLATES = [
    ("kyc", True, lambda r, v: J({"applicant": {"name": name(r), "ssn": v, "state": "PR"}, "result": "clear"})),
    ("call", False, lambda r, v: f"Agente: Para la remesa desde Florida necesito su número de Seguro Social.\n"
                                 f"Cliente: Es el {v}."),
    ("pdf", False, lambda r, v: f"W-9 Request for Taxpayer Identification Number\nSocial security number: {v}"),
    ("csv", False, lambda r, v: f"sender,ssn,corridor\n{name(r)},{v},US-GT"),
    ("email", False, lambda r, v: f"Hi, my SSN is {v} for the verification. Thanks, {name(r)}"),
    ("json", True, lambda r, v: J({"loan_application": {"borrower": {"taxId": {"type": "SSN", "value": v}}}})),
    ("whatsapp", False, lambda r, v: f"Aquí mi Seguro Social: {v}"),
    ("ticket", False, lambda r, v: f"Ticket #{digits(r, 5)}: SS# {v} no coincide con el nombre del remitente"),
]


def card(rng: random.Random, i: int) -> tuple[str, str]:
    brand = ["visa", "mastercard", "amex", "discover", "mastercard2"][i % 5]
    if brand == "visa":
        partial = "4" + digits(rng, 14)
    elif brand == "mastercard":
        partial = f"5{rng.randint(1, 5)}" + digits(rng, 13)
    elif brand == "mastercard2":
        partial = str(rng.randint(2221, 2720)) + digits(rng, 11)
    elif brand == "amex":
        partial = rng.choice(["34", "37"]) + digits(rng, 12)
    else:
        partial = "6011" + digits(rng, 11)
    number = partial + luhn_digit(partial)
    sep = ["-", " ", ".", "_", ""][(i // 5) % 5]
    style = {"-": "dash", " ": "space", ".": "dot", "_": "underscore", "": "compact"}[sep]
    return (group_card(number, sep) if sep else number), style


CARD_TEMPLATES = [
    ("pms", True, lambda r, v: J({"reservation": {"id": ref(r, "RSV", 7), "guarantee": {"type": "CC",
                                                                                        "cardNumber": v}}})),
    ("whatsapp", False, lambda r, v: f"Le paso la tarjeta para garantizar la reserva: {v} vence 08/27"),
    ("call", False, lambda r, v: f"Agent: What's the card number for the excursion?\nGuest: It's {v}."),
    ("email", False, lambda r, v: f"Bonjour, voici ma carte pour la croisière : {v}. Merci"),
    ("log", False, lambda r, v: f"WARN payment.retry pan={v} reason=do_not_honor"),
    ("json", True, lambda r, v: J({"payout": {"method": "card", "card_number": v, "currency": "USD"}})),
    ("ticket", False, lambda r, v: f"Ticket #{digits(r, 5)}: kat kredi {v} refize pou depo a"),
    ("csv", False, lambda r, v: f"reserva,tarjeta,monto\n{ref(r, 'R', 6)},{v},{r.randint(80, 900)}.00"),
]

IBAN_SPECS = [("CR", lambda r: "0" + bban(r, "3n14n")), ("GT", lambda r: bban(r, "4a20n")),
              ("DO", lambda r: bban(r, "4a20n")), ("SV", lambda r: bban(r, "4a20n")),
              ("BR", lambda r: bban(r, "8n5n10n1a1c")), ("NL", lambda r: bban(r, "4a10n")),
              ("ES", lambda r: bban(r, "20n")), ("FR", lambda r: bban(r, "10n11c2n")), ("DE", lambda r: bban(r, "18n"))]


def iban(rng: random.Random, i: int) -> tuple[str, str]:
    country, make = IBAN_SPECS[i % len(IBAN_SPECS)]
    b = make(rng)
    value = country + iban_check(country, b) + b
    style = ["spaced", "compact", "lower", "spaced"][(i // len(IBAN_SPECS)) % 4]
    if style == "spaced":
        return group(value, 4, " "), style
    if style == "lower":
        return rng.choice([value.lower(), group(value, 4, " ").lower()]), style
    return value, style


IBAN_TEMPLATES = [
    ("remit", True, lambda r, v: J({"payout": {"method": "bank_deposit", "beneficiary_iban": v,
                                               "amount": r.randint(50, 2000)}})),
    ("email", False, lambda r, v: f"Goedendag, mijn IBAN is {v}. Met vriendelijke groet"),
    ("whatsapp", False, lambda r, v: f"Deposíteme a la cuenta IBAN {v} por favor"),
    ("pdf", False, lambda r, v: f"RECIBO DE DESEMBOLSO\nCuenta destino (IBAN): {v}\nMonto: ₡{r.randint(100, 900)}"
                                f" 000,00"),
    ("csv", False, lambda r, v: f"beneficiario,iban,monto\n{name(r)},{v},{r.randint(50, 900)}"),
    ("json", True, lambda r, v: J({"savingsAccount": {"externalIban": v, "productKey": "AHORRO-VISTA"}})),
    ("ticket", False, lambda r, v: f"Ticket #{digits(r, 5)}: transferência para o IBAN {v} foi devolvida"),
]


def jwt(rng: random.Random, i: int) -> tuple[str, str]:
    alg = ["HS256", "RS256", "ES256"][i % 3]
    header = {"alg": alg, "typ": "JWT"} if alg == "HS256" else {"alg": alg, "kid": pick(rng, B64URL, 20),
                                                                "typ": "JWT"}
    iat = rng.randint(1_700_000_000, 1_760_000_000)
    payload = {"iss": rng.choice(["https://auth.remesas.example", "https://sso.coopahorro.com.gt",
                                  "https://id.resortsdelcaribe.com"]),
               "sub": uuid_s(rng), "aud": rng.choice(["payouts-api", "loans", "booking-engine"]),
               "iat": iat, "exp": iat + 3600, "scope": rng.choice(["payouts:write", "loans:read kyc:read",
                                                                    "bookings:write"])}
    sig_len = {"HS256": 32, "RS256": 256, "ES256": 64}[alg]
    token = ".".join([b64url(json.dumps(header, separators=(",", ":")).encode()),
                      b64url(json.dumps(payload, separators=(",", ":")).encode()), b64url(rng.randbytes(sig_len))])
    return token, alg.lower()


JWT_TEMPLATES = [
    ("http", False, lambda r, v: f"GET /v2/payouts/{ref(r, 'PO', 8)} HTTP/1.1\nHost: api.remesas.example\n"
                                 f"Authorization: Bearer {v}"),
    ("json", True, lambda r, v: J({"access_token": v, "token_type": "Bearer", "expires_in": 3600})),
    ("log", False, lambda r, v: f"DEBUG auth header verified token={v} user_role=oficial_credito"),
    ("cli", False, lambda r, v: f"$ curl -H \"Authorization: Bearer {v}\" https://api.coop.example/loans/883"),
    ("har", True, lambda r, v: J({"request": {"url": "https://booking.resort.example/api/folio", "headers": [
        {"name": "Authorization", "value": f"Bearer {v}"}]}})),
    ("whatsapp", False, lambda r, v: f"Dev: prueba con este token {v}"),
    ("url", False, lambda r, v: f"https://portal.remesas.example/track?session_token={v}&lang=es"),
]


def oauth(rng: random.Random, i: int) -> tuple[str, str]:
    style = ["google", "github", "slack", "paypal", "google_refresh", "opaque"][i % 6]
    if style == "google":
        return "ya29.a0" + pick(rng, B64URL, 150), style
    if style == "github":
        return crc_token(rng, "gho_"), style
    if style == "slack":
        return f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}", style
    if style == "paypal":
        return "A21AA" + pick(rng, B64URL, 92), style
    if style == "google_refresh":
        return "1//0" + pick(rng, B64URL, 99), style
    return pick(rng, ALNUM, 40), style


OAUTH_TEMPLATES = [
    ("http", False, lambda r, v: f"POST /v1/messages HTTP/1.1\nAuthorization: Bearer {v}\nContent-Type: "
                                 f"application/json"),
    ("json", True, lambda r, v: J({"access_token": v, "token_type": "Bearer", "expires_in": 3599,
                                   "scope": "https://www.googleapis.com/auth/gmail.send"})),
    ("json", True, lambda r, v: J({"oauth": {"provider": "crm", "accessToken": v}})),
    ("env", False, lambda r, v: f"CRM_OAUTH_ACCESS_TOKEN={v}"),
    ("log", False, lambda r, v: f"INFO refreshed oauth access_token={v} expires_in=3599"),
    ("whatsapp", False, lambda r, v: f"Token de acceso para el calendario de tours: {v}"),
    ("cli", False, lambda r, v: f"$ curl -H 'Authorization: Bearer {v}' https://api.tours.example/v1/salidas"),
]


def cookie(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(cookie name, value, framework)."""
    style = ["php", "tomcat", "aspnet", "express", "django", "rails", "laravel"][i % 7]
    if style == "php":
        return "PHPSESSID", pick(rng, "0123456789abcdefghijklmnopqrstuv", 26), style
    if style == "tomcat":
        return "JSESSIONID", pick(rng, "0123456789ABCDEF", 32) + rng.choice(["", ".node1", ".pms02"]), style
    if style == "aspnet":
        return "ASP.NET_SessionId", pick(rng, "abcdefghijklmnopqrstuvwxyz012345", 24), style
    if style == "express":
        return "connect.sid", f"s%3A{pick(rng, B64URL, 32)}.{pick(rng, B64[:-2], 43)}", style
    if style == "django":
        return "sessionid", pick(rng, LOWER_ALNUM, 32), style
    if style == "rails":
        return "_reservas_session", pick(rng, B64[:-1], 120) + "--" + pick(rng, HEX, 40), style
    payload = base64.b64encode(json.dumps({"iv": pick(rng, B64, 24), "value": pick(rng, B64, 64),
                                            "mac": pick(rng, HEX, 64)}, separators=(",", ":")).encode())
    payload = payload.decode().replace("=", "%3D")
    return "laravel_session", payload, style


COOKIE_TEMPLATES = [
    ("http", False, lambda r, n, v: f"HTTP/1.1 200 OK\nSet-Cookie: {n}={v}; Path=/; HttpOnly; Secure"),
    ("http", False, lambda r, n, v: f"GET /prestamos/solicitud HTTP/1.1\nCookie: lang=es; {n}={v}"),
    ("har", True, lambda r, n, v: J({"request": {"url": "https://portal.coop.example/mi-cuenta",
                                                 "cookies": [{"name": n, "value": v}]}})),
    ("cli", False, lambda r, n, v: f"$ curl -b '{n}={v}' https://pms.resort.example/folio/{digits(r, 6)}"),
    ("json", True, lambda r, n, v: J({"tool_result": {"browser": "cookies", "items": {n: v}}})),
    ("log", False, lambda r, n, v: f"WARN session fixation? {n}={v} ip=10.0.3.{r.randint(2, 250)}"),
    ("ticket", False, lambda r, n, v: f"El cliente pegó su cookie en el chat: {n}={v}"),
]


def private_key(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(PEM, base64 body, style)."""
    style = ["ec_sec1", "pkcs8_ed25519", "openssh_ed25519", "pkcs8_ec"][i % 4]
    if style in ("pkcs8_ed25519", "openssh_ed25519"):
        seed = rng.randbytes(32)
        key = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
        if style == "pkcs8_ed25519":
            pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()).decode()
        else:
            public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"agente@remesas")
            body64 = base64.b64encode(blob).decode()
            pem = ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(group(body64, 70, "\n").split("\n"))
                   + "\n-----END OPENSSH PRIVATE KEY-----\n")
    else:
        key = ec.derive_private_key(rng.randint(1, 2**255), ec.SECP256R1())
        fmt = (serialization.PrivateFormat.TraditionalOpenSSL if style == "ec_sec1"
               else serialization.PrivateFormat.PKCS8)
        pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
    body = "\n".join(line for line in pem.strip().split("\n") if not line.startswith("-----"))
    return pem, body, style


PK_TEMPLATES = [
    ("file", False, lambda r, pem, body: (pem, body)),
    ("json", True, lambda r, pem, body: (J({"type": "service_account", "project_id": "kyc-docs",
                                            "private_key": pem}), body)),
    ("yaml", False, lambda r, pem, body: ("sftp_remesas:\n  host: sftp.bank.example\n  key: |\n    "
                                          + pem.strip().replace("\n", "\n    ") + "\n", body.replace("\n", "\n    "))),
    ("env", False, lambda r, pem, body: ("SIGNING_KEY=\"" + pem.strip().replace("\n", "\\n") + "\"",
                                         body.replace("\n", "\\n"))),
    ("ticket", False, lambda r, pem, body: (f"Ticket #{digits(r, 5)}: adjunto la llave para firmar facturas FEL\n"
                                            + pem, body)),
    ("json", True, lambda r, pem, body: (J({"tool_result": {"read_file": "/etc/einvoice/firma.pem",
                                                            "content": pem}}), body)),
]


def totp(rng: random.Random, i: int) -> tuple[str, str]:
    seed = base64.b32encode(rng.randbytes(rng.choice([10, 20]))).decode().rstrip("=")
    style = ["plain", "uri", "grouped", "plain"][i % 4]
    if style == "grouped":
        return group(seed.lower(), 4, " "), style
    return seed, style


TOTP_TEMPLATES = [
    ("json", True, lambda r, v: J({"mfa": {"type": "totp", "totpSeed": v, "digits": 6}})),
    ("log", False, lambda r, v: f"INFO 2fa enrolled agent=cobros04 secret={v}"),
    ("whatsapp", False, lambda r, v: f"Clave de configuración para el autenticador: {v}"),
    ("email", False, lambda r, v: f"Your two-factor setup key is {v}. Keep it safe."),
    ("yaml", False, lambda r, v: f"portal_remesas:\n  usuario: agente\n  totp_secret: {v}\n"),
    ("ticket", False, lambda r, v: f"Ticket #{digits(r, 5)}: kòd sekrè 2FA a se {v}"),
    ("json", True, lambda r, v: J({"tool_result": {"user": "agente07", "otp_secret": v}})),
]


def api_key(rng: random.Random, i: int) -> tuple[str, str]:
    provider = ["openai", "anthropic", "sendgrid", "google", "stripe", "stripe_restricted", "mercadopago", "wompi",
                "meta_whatsapp", "github", "huggingface", "mailgun"][i % 12]
    if provider == "openai":
        return "sk-proj-" + pick(rng, B64URL, 74) + "T3BlbkFJ" + pick(rng, B64URL, 74), provider
    if provider == "anthropic":
        return "sk-ant-api03-" + pick(rng, B64URL, 93) + "AA", provider
    if provider == "sendgrid":
        return f"SG.{pick(rng, B64URL, 22)}.{pick(rng, B64URL, 43)}", provider
    if provider == "google":
        return "AIza" + pick(rng, B64URL, 35), provider
    if provider == "stripe":
        return "sk_live_51" + pick(rng, B62, 97), provider
    if provider == "stripe_restricted":
        return "rk_live_51" + pick(rng, B62, 97), provider
    if provider == "mercadopago":
        return f"APP_USR-{digits(rng, 16)}-{digits(rng, 6)}-{pick(rng, HEX, 32)}-{digits(rng, 9)}", provider
    if provider == "wompi":
        return "prv_prod_" + pick(rng, ALNUM, 32), provider
    if provider == "meta_whatsapp":
        return "EAA" + pick(rng, ALNUM, rng.randint(180, 220)), provider
    if provider == "github":
        return crc_token(rng, "ghp_"), provider
    if provider == "huggingface":
        return "hf_" + pick(rng, string.ascii_letters, 34), provider
    return f"{pick(rng, HEX, 32)}-{pick(rng, HEX, 8)}-{pick(rng, HEX, 8)}", provider


API_TEMPLATES = [
    ("env", False, lambda r, v: f"PROVIDER_API_KEY={v}"),
    ("json", True, lambda r, v: J({"integrations": {"llm": {"apiKey": v, "model": "default"}}})),
    ("yaml", False, lambda r, v: f"agente:\n  proveedor:\n    api_key: {v}\n    timeout_s: {r.randint(10, 60)}\n"),
    ("cli", False, lambda r, v: f"$ curl https://api.provider.example/v1/send -H \"Authorization: Bearer {v}\""),
    ("log", False, lambda r, v: f"ERROR 401 from provider, key used: {v}"),
    ("json", True, lambda r, v: J({"tool_result": {"env": {"API_KEY": v, "REGION": "us-east-1"}}})),
    ("whatsapp", False, lambda r, v: f"Pásame la llave... listo: {v}"),
    ("ticket", False, lambda r, v: f"Ticket #{digits(r, 5)}: rotate this key, it leaked in a reply: {v}"),
]


# ---- cases ------------------------------------------------------------------------------------------------------

PHONE_KINDS = ("phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "phone_jm", "phone_tt", "phone_do",
               "phone_pr", "phone_ht", "phone_gt", "phone_hn", "phone_sv", "phone_ni", "phone_cr", "phone_pa",
               "phone_co", "phone_ec", "phone_pe", "phone_bo")
ID_KINDS = ("id_do_cedula", "id_ec_cedula", "id_ec_ruc", "id_pe_dni", "id_pe_ruc", "id_co_nit", "id_cr_cedula",
            "id_gt_cui", "id_gt_nit")
KINDS = ("password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
         "email", "ssn", "card", "iban", "jwt", "oauth_token", "session_cookie", "private_key", "totp_seed",
         "api_key") + PHONE_KINDS + ID_KINDS
Made = tuple[str, str, str, bool]
"""(text, secret, form, is_json)."""


def templated(templates: list, i: int, rng: random.Random, value: str, style: str) -> Made:
    carrier, is_json, fn = templates[i % len(templates)]
    return fn(rng, value), value, f"{carrier}/{style}", is_json


def make(kind: str, rng: random.Random, i: int) -> Made:
    if kind == "password":
        v, style = password(rng, i)
        return templated(PASSWORD_TEMPLATES, i, rng, v, style)
    if kind == "aws_secret":
        v = pick(rng, B64, 40)
        carrier, is_json, fn, style = AWS_TEMPLATES[i % len(AWS_TEMPLATES)]
        return fn(rng, v), v, f"{carrier}/{style}", is_json
    if kind == "webhook":
        url, token, tool = webhook(rng, i)
        carrier, is_json, fn = WEBHOOK_TEMPLATES[(i // 9 + i) % len(WEBHOOK_TEMPLATES)]
        return fn(rng, url), token, f"{carrier}/{tool}", is_json
    if kind == "stripe_whsec":
        return templated(WHSEC_TEMPLATES, i, rng, whsec(rng), "whsec")
    if kind == "connection_string":
        dsn, secret, scheme = connection(rng, i)
        carrier, is_json, fn = CONN_TEMPLATES[(i // 9 + i) % len(CONN_TEMPLATES)]
        return fn(rng, dsn), secret, f"{carrier}/{scheme}", is_json
    if kind == "labelled_key":
        platform, gen, labels = LABELLED[i % len(LABELLED)]
        v = gen(rng)
        carrier, is_json, fn = LABELLED_TEMPLATES[(i // len(LABELLED) + i) % len(LABELLED_TEMPLATES)]
        return fn(rng, rng.choice(labels), v), v, f"{carrier}/{platform}", is_json
    if kind == "disguised":
        return disguised(rng, i)
    if kind == "email":
        return email_case(rng, i)
    if kind == "ssn":
        v, style = ssn(rng, i)
        return templated(SSN_TEMPLATES, i, rng, v, style)
    if kind == "card":
        v, style = card(rng, i)
        return templated(CARD_TEMPLATES, i, rng, v, style)
    if kind == "iban":
        v, style = iban(rng, i)
        return templated(IBAN_TEMPLATES, i, rng, v, style)
    if kind == "jwt":
        v, style = jwt(rng, i)
        return templated(JWT_TEMPLATES, i, rng, v, style)
    if kind == "oauth_token":
        v, style = oauth(rng, i)
        return templated(OAUTH_TEMPLATES, i, rng, v, style)
    if kind == "session_cookie":
        cname, v, style = cookie(rng, i)
        carrier, is_json, fn = COOKIE_TEMPLATES[(i // 7 + i) % len(COOKIE_TEMPLATES)]
        return fn(rng, cname, v), v, f"{carrier}/{style}", is_json
    if kind == "private_key":
        pem, body, style = private_key(rng, i)
        carrier, is_json, fn = PK_TEMPLATES[(i // 4 + i) % len(PK_TEMPLATES)]
        text, secret = fn(rng, pem, body)
        return text, secret, f"{carrier}/{style}", is_json
    if kind == "totp_seed":
        v, style = totp(rng, i)
        if style == "uri":
            issuer = rng.choice(["CoopAhorro", "RemesasYa", "ResortOps"])
            uri = f"otpauth://totp/{issuer}:agente{rng.randint(1, 99)}?secret={v}&issuer={issuer}&digits=6&period=30"
            carrier, is_json, fn = TOTP_TEMPLATES[i % len(TOTP_TEMPLATES)]
            return fn(rng, uri), v, f"{carrier}/uri", is_json
        return templated(TOTP_TEMPLATES, i, rng, v, style)
    if kind == "api_key":
        v, style = api_key(rng, i)
        carrier, is_json, fn = API_TEMPLATES[(i // 12 + i) % len(API_TEMPLATES)]
        return fn(rng, v), v, f"{carrier}/{style}", is_json
    if kind in PHONE_KINDS:
        v, style = phone(kind, rng, i)
        if i % 20 == 19:
            return v, v, f"bare/{style}", False
        return templated(phone_templates(kind), i, rng, v, style)
    if kind in ID_KINDS:
        v, style = ids(kind, rng, i)
        return templated(id_templates(kind), i, rng, v, style)
    raise KeyError(kind)


def generate() -> Iterator[Case]:
    """PER_KIND cases of every kind, deterministic from SEED."""
    rng = random.Random(SEED)
    for kind in KINDS:
        for i in range(PER_KIND):
            text, secret, form, is_json = make(kind, rng, i)
            yield Case(kind, form, secret, text, is_json)


# ---- near misses ------------------------------------------------------------------------------------------------

def company_ids(rng: random.Random) -> str:
    """A company's registration number with its check digit: Peruvian RUC 20..., Colombian NIT 800/900..., Ecuador's
    RUC of a private company (third digit 9, weights 4,3,2,7,6,5,4,3,2, mod 11)."""
    which = rng.randrange(3)
    if which == 0:
        body = "20" + str(rng.randint(1, 6)) + digits(rng, 7)
        return rng.choice([f"RUC {body}{pe_ruc_check(body)} (razón social: Turismo Andino S.A.C.)",
                           f"<cbc:ID schemeID=\"6\">{body}{pe_ruc_check(body)}</cbc:ID> <!-- emisor -->"])
    if which == 1:
        body = rng.choice(["800", "830", "860", "900", "901"]) + digits(rng, 6)
        return rng.choice([f"NIT empresa {int(body):,}".replace(",", ".") + f"-{co_nit_check(body)}",
                           J({"emisor": {"nit": f"{body}-{co_nit_check(body)}", "tipo": "persona jurídica"}})])
    while True:
        body = f"{rng.randint(1, 24):02d}9" + digits(rng, 6)
        r = 11 - sum(int(d) * w for d, w in zip(body, (4, 3, 2, 7, 6, 5, 4, 3, 2), strict=True)) % 11
        if r != 10:
            return f"RUC sociedad: {body}{0 if r == 11 else r}001 - Cooperativa de Ahorro y Crédito"


def luhn_invalid(rng: random.Random) -> str:
    partial = "4" + digits(rng, 14)
    bad = str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)
    number = group(partial + bad, 4, rng.choice([" ", "-", ""]))
    return rng.choice([f"Número de lote de tarjetas de prueba (no válido Luhn): {number}",
                       f"ERROR card_validation failed luhn=false input={number}",
                       J({"check": "luhn", "value": number, "valid": False})])


def invalid_iban(rng: random.Random) -> str:
    country, gen = rng.choice(IBAN_SPECS)
    b = gen(rng)
    good = int(iban_check(country, b))
    bad = (good + rng.randint(1, 40)) % 97 + 2
    bad = bad if bad != good else good + 1
    value = group(f"{country}{bad:02d}{b}", 4, " ")
    return rng.choice([f"Validación IBAN fallida (dígitos de control): {value}",
                       J({"iban": value, "valid": False, "error": "checksum"})])


def fel_authorization(auth: str) -> str:
    """A Guatemalan FEL authorization as SAT's certifiers print it: the UUID, its first 8 hex digits as the series
    and the next 8 read as a decimal number."""
    hexes = auth.replace("-", "")
    return (f"<dte:NumeroAutorizacion Serie=\"{hexes[:8]}\" Numero=\"{int(hexes[8:16], 16)}\">{auth}"
            f"</dte:NumeroAutorizacion>")


NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "booking_ref": lambda r: r.choice([
        f"Localizador {pick(r, string.ascii_uppercase, 6)} - vuelo CM{r.randint(100, 999)} PTY-SJO",
        J({"booking": {"confirmation": ref(r, "CRU", 7), "ship": "Caribbean Star", "sailing": "2025-03-08"}}),
        f"Reserva confirmada #{digits(r, 8)} Hotel Playa Bávaro, hab. {r.randint(101, 950)}"]),
    "mtcn": lambda r: r.choice([
        f"MTCN {digits(r, 3)}-{digits(r, 3)}-{digits(r, 4)} listo para cobro en agencia",
        J({"tracking_number": digits(r, 10), "status": "PAID", "corridor": "US-HN"}),
        f"Remesa con número de seguimiento RM{digits(r, 9)} disponible"]),
    "loan_number": lambda r: r.choice([
        f"Préstamo No. PR-{r.randint(2019, 2025)}-{digits(r, 7)} al día, cuota {r.randint(1, 24)}/24",
        J({"loanAccount": {"id": ref(r, "LN", 8), "productTypeKey": "GRUPAL-SOLIDARIO", "accountState": "ACTIVE"}}),
        f"loan_id=MUS-{digits(r, 6)} installment={r.randint(1, 36)} state=PAID"]),
    "savings_account_internal": lambda r: r.choice([
        f"Cuenta de ahorro interna AH-{r.randint(1, 40):02d}-{digits(r, 6)} (producto Ahorro Infantil)",
        J({"savingsAccount": {"id": ref(r, "SAV", 7), "branchKey": f"AG{r.randint(1, 30):02d}"}})]),
    "einvoice_number": lambda r: r.choice([
        f"<cbc:ID>F{r.randint(1, 9):03d}-{digits(r, 8)}</cbc:ID>",
        fel_authorization(uuid_s(r).upper()),
        f"Consecutivo FE: 001{r.randint(1, 99):05d}01{digits(r, 10)}"]),
    "request_id": lambda r: r.choice([
        f"x-request-id: req_{pick(r, LOWER_ALNUM, 24)}",
        f"traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01",
        J({"requestId": uuid_s(r), "durationMs": r.randint(5, 2000)})]),
    "uuid": lambda r: r.choice([f"applicant_ref={uuid_s(r)}", J({"encodedKey": pick(r, HEX, 32)}),
                                f"Musoni group {uuid_s(r)} synced"]),
    "digest": lambda r: r.choice([f"sha256:{pick(r, HEX, 64)}", f"ETag: \"{pick(r, HEX, 32)}\"",
                                  f"contrato.pdf md5={pick(r, HEX, 32)}", f"commit {pick(r, HEX, 40)}"]),
    "version": lambda r: r.choice([f"remesas-agent v{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 99)}",
                                   f"Opera PMS 5.6.{r.randint(1, 25)}.{r.randint(0, 9)} build {r.randint(1000, 9999)}",
                                   J({"api_version": f"{r.randint(2019, 2025)}-{r.randint(1, 12):02d}-01"})]),
    "timestamp": lambda r: r.choice([
        f"{r.randint(2023, 2025)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:"
        f"{r.randint(0, 59):02d}:{r.randint(0, 59):02d}Z desembolso registrado",
        f"created_at={r.randint(1_600_000_000_000, 1_760_000_000_000)}",
        f"Fecha de vencimiento: {r.randint(1, 28):02d}/{r.randint(1, 12):02d}/{r.randint(2025, 2027)}"]),
    "coordinates": lambda r: r.choice([
        f"Punto de pago: {r.uniform(13, 19):.5f}, {-r.uniform(66, 92):.5f}",
        J({"lat": round(-r.uniform(2, 17), 6), "lng": round(-r.uniform(64, 80), 6), "agency": "Puno"}),
        f"Muelle de cruceros {r.uniform(17, 19):.4f}° N, {r.uniform(64, 78):.4f}° W"]),
    "measurements": lambda r: r.choice([
        f"Equipaje {r.uniform(10, 32):.1f} kg, cabina {r.randint(14, 40)} m²",
        f"Eslora {r.randint(250, 362)} m, manga {r.uniform(30, 65):.1f} m, {r.randint(2000, 6800)} pasajeros",
        f"Cosecha de café: {r.randint(10, 400)} quintales a {r.randint(1200, 1900)} msnm"]),
    "tollfree_shortcode": lambda r: r.choice([
        f"Línea gratuita (toll-free): 1-{r.choice(['800', '833', '844', '855', '866', '877', '888'])}-"
        f"{nxx(r)}-{digits(r, 4)}",
        f"Marque *{r.randint(100, 999)} desde su celular para consultar su saldo (código corto)",
        f"Envíe SALDO al código corto {r.randint(1000, 9999)}"]),
    "company_id": company_ids,
    "luhn_invalid": luhn_invalid,
    "invalid_iban": invalid_iban,
    "masked": lambda r: r.choice([
        f"Tarjeta terminada en ****{digits(r, 4)}", f"Cuenta ***{digits(r, 3)}", "Tel. +1 876 ***-**" + digits(r, 2),
        J({"pan": f"{r.choice(['4', '5'])}{digits(r, 5)}******{digits(r, 4)}", "masked": True}),
        "correo: m*****@g****.com", f"IBAN CR** **** **** **** **{digits(r, 2)}"]),
    "placeholder": lambda r: r.choice([
        f"{r.choice(['MAMBU', 'PAYU', 'KUSHKI', 'MONCASH'])}_API_KEY=<your-api-key>",
        f"{r.choice(['password', 'contraseña', 'senha'])}: ${{{r.choice(['DB_PASSWORD', 'SMTP_PASS', 'PMS_PWD'])}}}",
        "STRIPE_WEBHOOK_SECRET=whsec_xxxxxxxxxxxx", J({"apiKey": "YOUR_API_KEY_HERE", "secret": "<secret>"}),
        f"token: {{{{ secrets.{r.choice(['WHATSAPP_TOKEN', 'SLACK_WEBHOOK', 'OTA_KEY'])} }}}}",
        "DATABASE_URL=postgresql://USER:PASSWORD@HOST:5432/DB", "Authorization: Bearer <token>",
        "aws_secret_access_key = REPLACE_ME", f"Clave API: xxxx-xxxx-xxxx (pídela a TI, ticket {digits(r, 5)})"]),
    "example_key": lambda r: r.choice([
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY  # AWS docs example",
        "SLACK_WEBHOOK=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "Ejemplo de la documentación: AKIAI44QH8DHBEXAMPLE"]),
    "code_identifier": lambda r: r.choice([
        f".btn-reservar--{r.choice(['primary', 'ghost', 'cta'])} {{ color: #{pick(r, HEX, 6)}; }}",
        f"const PAYOUT_STATUS_{r.choice(['PENDING_REVIEW', 'ON_HOLD', 'PAID'])} = {r.randint(1, 9)};",
        f"def calcular_cuota_{r.choice(['frances', 'aleman', 'flat'])}(monto, tasa, plazo):",
        "useLoanScheduleQuery({ loanId, includeArrears: true })", "SELECT * FROM cartera_mora WHERE dias > 30;"]),
    "path_url": lambda r: r.choice([
        f"/var/log/remesas/payout-{r.randint(2023, 2025)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}.log",
        "https://api.mambu.com/docs/#loan-accounts", f"s3://coop-reportes/exports/mora/{digits(r, 8)}.csv",
        "C:\\ProgramData\\OperaPMS\\logs\\ifc8.log", "https://www.sunat.gob.pe/ol-ti-itconsultaunificadalibre/"]),
    "bank_code": lambda r: r.choice([
        f"SWIFT/BIC: {r.choice(['BNCR', 'BAGR', 'BCPL', 'BPIC', 'BIND', 'BAMC'])}"
        f"{r.choice(['CRSJ', 'DOSD', 'PEPL', 'ECEQ', 'GTGC', 'HNTE'])}{r.choice(['', 'XXX'])}",
        f"Código de banco {r.randint(100, 999)} (ACH Panamá), ruta y tránsito {digits(r, 4)}"]),
    "cabin_folio_room": lambda r: r.choice([
        f"Stateroom {r.randint(2, 15)}{r.randint(100, 399)} deck {r.randint(2, 15)}",
        f"Folio {digits(r, 8)} cerrado, habitación {r.randint(101, 1250)}",
        J({"cabin": f"{r.randint(2, 15)}{r.randint(100, 399)}", "category": "BALCONY", "deck": r.randint(2, 15)})]),
    "amounts_rates": lambda r: r.choice([
        f"Tasa de cambio {r.uniform(3.5, 3.9):.4f} PEN/USD, comisión USD {r.uniform(2, 9):.2f}",
        f"Monto desembolsado: Q {r.randint(1000, 50000):,}.00 a {r.randint(6, 36)} meses, TEA {r.uniform(18, 45):.2f}%",
        J({"amount": {"value": round(r.uniform(20, 3000), 2), "currency": "DOP"}, "fx": round(r.uniform(55, 62), 4)})]),
    "ticket_number": lambda r: r.choice([
        f"Ticket #INC-{digits(r, 6)} escalado a nivel 2", f"Zendesk #{digits(r, 6)} resuelto",
        f"Caso {r.randint(2023, 2025)}-{digits(r, 6)} (reclamo por remesa demorada)"]),
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """(sort, text) near misses: no secret and no personal data, 28 of each sort."""
    rng = random.Random(SEED + 1)
    for sort, gen in NEGATIVES.items():
        for _ in range(28):
            yield sort, gen(rng)
