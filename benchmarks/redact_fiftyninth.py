"""The fifty-ninth blind redaction corpus: ports, shipping, fisheries and disaster relief in the Pacific Islands and
South Asia's island and mountain states, as an agent that runs a port community system, vessel and crew records,
catch and licence reporting, a shipping line's bookings, cold-chain logistics and a relief agency's registration,
cash transfers and field IT support sees them.

It was written from the formats' public specifications by someone who read neither the detection rules nor the
other corpora; only `corpus_formats` (shared check-digit and encoding helpers) and the judge's interface in
`redact.py` were read.

Carriers (the `form` head): `log` (service log lines of a port community system, VMS/AIS gateways), `email`,
`chat` (WhatsApp and Viber threads), `ticket` (helpdesk tickets of the field IT desk), `manifest` (bills of lading
and manifests as PDF-extracted text), `crew` (crew lists), `catch` (fisheries licence and catch-log exports),
`radio` (satellite-messenger and HF radio logs), `csv` (beneficiary registration exports), `config` (env and
YAML files of the agent's integrations), `reply` (the agent's own replies); as JSON (`is_json`): `kobo`
(KoboToolbox/ODK-style submissions), `wallet` (mobile-wallet callbacks: M-PAiSA, MyCash, Digicel, eZ Cash, eSewa,
Khalti, mBoB), `webhookbody` (JSON webhook bodies) and `tool` (the agent's tool results). `bare` is a phone
number with no context word.

Formats and their sources: phone numbers from the national numbering plans as filed with the ITU (E.164
country codes; Fiji's TAF plan: 7 digits, mobiles 7/8/9, fixed 3 and 6; PNG NICTA: mobiles 7 + 7 digits, fixed
3xx xxxx; Samoa OOTR: mobiles 7x xxxxx; Tonga: mobiles 7x/8x xxxxx; Vanuatu TRR: mobiles 5x/7x xxxxx; Solomon
Islands TCSI: mobiles 74-75/84-89 + 5 digits; Timor-Leste ANC: mobiles 7x + 6 digits; Sri Lanka TRCSL: mobiles
07x + 7 digits; Nepal NTA: mobiles 98x/97x + 7 digits; Bhutan BICMA: mobiles 17/77 + 6 digits; Maldives CAM:
mobiles 7xx/9xx + 4 digits; Mauritius ICTA: mobiles 5 + 7 digits; NANP with N11 and 555-01xx avoided; Ofcom's
UK plan with the drama ranges avoided; ARCEP's French plan; BNetzA's German mobile blocks; India's DoT mobiles
6-9 + 9 digits). Cards: ISO/IEC 7812 issuer ranges (Visa, Mastercard 51-55 and 2221-2720, Amex, JCB, RuPay) with
the Luhn digit. IBANs: the SWIFT IBAN registry (MU, TL, GB, DE, FR, NL) with ISO 7064 MOD 97-10. US SSNs: SSA's
randomised rules (no 000, 666, 9xx areas, no 00 group, no 0000 serial). AWS keys as the IAM guide prints them
(AKIA/ASIA + 16 base32, 40-character secret); Slack, Discord, Teams, Power Automate, Google Chat, Telegram and
Zapier webhooks as their docs print them; Stripe `whsec_`; JWT (RFC 7519, base64url of RFC 7515); TOTP seeds as
RFC 4648 base32 in `otpauth://` URIs (Google Authenticator key-uri format); private keys as PKCS#8 (RFC 5958) and
openssh-key-v1 Ed25519; GitHub tokens with their CRC32 checksum; OpenAI, Anthropic, Google, SendGrid and Slack
keys as their docs show them. Near misses: IMO numbers with their check digit (IMO resolution A.1078), MMSI
(ITU-R M.585, MIDs of the region), ISO 6346 container numbers with their check digit.

National ids (outside the target, `OUTSIDE_TARGET`): Sri Lanka's NIC (old: 2-digit birth year, day of year with
500 added for women, 3-digit serial, check digit, V or X; new: 4-digit year, day of year, 0, serial and check;
the check digit is computed with the weights 3,2,7,6,5,4,3,2 mod 11 as commonly documented for the old form, and
over the same eight year, day and serial digits for the new; the Department for Registration of Persons publishes
no algorithm); Nepal's national identity number (10 digits; no check is
published, shape only) and citizenship certificate numbers (district-year-serial, shape only); Mauritius' national
identity card number (initial of surname, ddmmyy of birth, 6 digits and a check character; no check published,
shape only); Fiji's TIN (FRCS, 9 digits; shape only).

Judgements (what `secret` is): only what must not survive redaction, verbatim as it stands in `text`: a password
or key without its label, a webhook URL's token segment, a connection string's password or account key, a
cookie's value, a private key's base64 body, a phone number, e-mail address or id as written (with its spaces,
dashes or escapes), an account number beside a public bank code.

Languages: English (Pacific, South Asian), Fijian, Fiji Hindi, Samoan, Tongan, Bislama, Tok Pisin, Hiri Motu,
Solomon Pijin, Tetum, Portuguese (Timor-Leste), Sinhala, Tamil, Nepali, Dzongkha, Dhivehi (Thaana), Hindi,
Bengali and French (Vanuatu, New Caledonia) context words.

Near misses: booking, bill-of-lading, voyage, catch-log, licence and case numbers, ids of port and relief
systems, trace ids, digests, UUIDs, versions, timestamps, coordinates, measurements, public toll-free and short
numbers named as such, company registration numbers, Luhn-invalid card-like numbers, invalid IBANs, masked values,
placeholders, vendors' documented example keys, CSS and code identifiers, paths and URLs without credentials,
MMSI, IMO and container numbers, all in the same carriers as the cases.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from benchmarks.corpus_formats import (
    b64url,
    bban,
    crc_token,
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

SEED = 59
PER_KIND = 100
OUTSIDE_TARGET = frozenset({"nic_lk", "nin_np", "nic_mu", "tin_fj"})

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"
B32 = string.ascii_uppercase + "234567"


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


# ---- people, places, context words ----------------------------------------------------------------------------

NAMES = ["Mereoni Vakaloloma", "Sione Fifita", "Losana Tuilau", "Tavita Leiataua", "Nirmala Perera",
         "Kamal Jayasuriya", "Sabitri Gurung", "Tshering Dorji", "Aishath Shifa", "Ibrahim Naseem",
         "Joycelyn Tabe", "Kila Gima", "Nalesoni Hopoate", "Dilini Rajapaksha", "Anjali Raut", "Pema Wangmo",
         "Moana Faleolo", "Joaquim Soares", "Ravindra Prasad", "Kavitha Sivakumar", "Jean-Marc Tari",
         "Rosalyn Kwaimani", "Tevita Mateo", "Sunil Shrestha"]
PORTS = ["Suva", "Lautoka", "Lae", "Port Moresby", "Apia", "Nuku'alofa", "Port Vila", "Honiara", "Dili",
         "Colombo", "Hambantota", "Malé", "Port Louis", "Luganville", "Nouméa"]
VESSELS = ["MV Lomaiviti Princess", "FV Tui Tonga 7", "MV Southern Phoenix", "FV Ocean Harvest 12",
           "MV Kiribati Chief", "LCT Solomon Express", "FV Ceylon Star", "MV Dhoni Hulhumale"]

PHONE_WORDS = ["phone", "Phone no.", "mobile", "naba ni talevoni", "numera telefoni", "fika telefoni",
               "namba blong fon", "namba bilong fon", "telefon namba", "numeru telefone", "telemóvel",
               "දුරකථන අංකය", "தொலைபேசி எண்", "फोन नम्बर", "ཁ་པར་ཨང་", "ފޯނު ނަންބަރު", "फ़ोन नंबर", "ফোন নম্বর",
               "tél.", "portable", "contact no", "WhatsApp", "Viber"]
PASS_WORDS = ["password", "Password", "passwd", "upu faataga", "paswod", "paswod blong login", "liafuan-pasee",
              "senha", "මුරපදය", "கடவுச்சொல்", "पासवर्ड", "পাসওয়ার্ড", "ޕާސްވޯޑް", "mot de passe",
              "kalou ni curu"]


def _name(rng: random.Random) -> str:
    return rng.choice(NAMES)


# ---- carriers ---------------------------------------------------------------------------------------------------

TEXT_CARRIERS = ["log", "email", "chat", "ticket", "manifest", "crew", "catch", "radio", "csv", "reply"]
JSON_CARRIERS = ["kobo", "wallet", "webhookbody", "tool"]


def _stamp(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"


def wrap_text(rng: random.Random, carrier: str, line: str) -> str:
    port, vessel = rng.choice(PORTS), rng.choice(VESSELS)
    if carrier == "log":
        return f"{_stamp(rng)}Z INFO pcs-{port.lower().replace(' ', '-')} berth-sync: {line}"
    if carrier == "email":
        return (f"From: Port operations desk (shared mailbox)\nSubject: Port call {vessel} at {port}\n\n"
                f"Bula vinaka team,\n\n{line}\n\nVinaka,\nOps desk")
    if carrier == "chat":
        return f"[{rng.randint(1, 28)}/11/26, {rng.randint(6, 21)}:{rng.randint(10, 59)}] Relief Ops {port}: {line}"
    if carrier == "ticket":
        return f"Ticket HD-{rng.randint(1000, 9999)} (field IT, {port})\nStatus: open\n\n{line}\n-- agent note"
    if carrier == "manifest":
        return (f"BILL OF LADING    Vessel: {vessel}    Port of discharge: {port}\n"
                f"Shipper / Consignee notify party\n{line}\nPage 1 of 2")
    if carrier == "crew":
        return f"CREW LIST  {vessel}  arrival {port}\nNo. 3  Rank: AB  {line}"
    if carrier == "catch":
        return f"catch-log export | vessel={vessel} | landing={port} | remarks: {line}"
    if carrier == "radio":
        return f"HF/Iridium log {_stamp(rng)} {vessel} -> {port} RCC: {line} OVER"
    if carrier == "csv":
        row = f"{rng.randint(10000, 99999)},{port},{rng.randint(1, 9)}"
        return f"submission_id,district,household_size,notes\n{row},\"{line}\""
    return f"Done. I updated the berth record for {vessel} at {port}. {line}"


def wrap_json(rng: random.Random, carrier: str, line: str, field: tuple[str, object] | None) -> str:
    port = rng.choice(PORTS)
    if carrier == "kobo":
        doc: dict = {"_id": rng.randint(10**7, 10**8), "formhub/uuid": uuid.UUID(int=rng.getrandbits(128)).hex,
                     "group_hh/district": port, "group_hh/notes": line}
    elif carrier == "wallet":
        doc = {"provider": rng.choice(["M-PAiSA", "MyCash", "Digicel", "eZ Cash", "eSewa", "Khalti", "mBoB"]),
               "status": "SUCCESS", "amount": f"{rng.randint(20, 500)}.00", "remarks": line}
    elif carrier == "webhookbody":
        doc = {"event": "portcall.updated", "port": port, "data": {"message": line}}
    else:
        doc = {"tool": "crm_lookup", "ok": True, "result": {"port": port, "text": line}}
    if field:
        doc[field[0]] = field[1]
    return json.dumps(doc, ensure_ascii=False)


# ---- value makers: each returns (style, secret, line, json_field or None) ------------------------------------

Made = tuple[str, str, str, "tuple[str, object] | None"]


def _password(rng: random.Random) -> str:
    base = pick(rng, ALNUM, rng.randint(8, 14))
    extra = pick(rng, "!@#%^*-_+=.", rng.randint(1, 3)) + digits(rng, 2)
    chars = list(base + extra)
    rng.shuffle(chars)
    return "".join(chars)


def mk_password(rng: random.Random, i: int) -> Made:
    pw = _password(rng)
    style = ["env", "yaml", "json", "cli", "camel", "prefixed", "prose"][i % 7]
    if style == "env":
        name = rng.choice(["DB_PASSWORD", "PCS_DB_PASS", "KOBO_PASSWORD", "SMTP_PASSWORD", "MPAISA_API_PASSWORD"])
        return style, pw, f"{name}={pw}", (name, pw)
    if style == "yaml":
        return style, pw, f"database:\n  user: pcs_app\n  password: {pw}", ("password", pw)
    if style == "json":
        return style, pw, json.dumps({"username": "vms_gateway", "password": pw}), ("password", pw)
    if style == "cli":
        return style, pw, f"mysql -u portcall -p'{pw}' -h db.pcs.internal berths", ("cmd", f"--password={pw}")
    if style == "camel":
        key = rng.choice(["dbPassword", "smtpPassword", "walletApiPassword", "odkCentralPassword"])
        return style, pw, f'{key}: "{pw}"', (key, pw)
    if style == "prefixed":
        key = rng.choice(["PG_PASSWORD", "REDIS_PASSWD", "app_password", "ftp_pass"])
        return style, pw, f"export {key}='{pw}'", (key, pw)
    word = rng.choice(PASS_WORDS)
    return f"lang_{PASS_WORDS.index(word)}", pw, f"{word}: {pw}", None


def _akia(rng: random.Random) -> str:
    return rng.choice(["AKIA", "ASIA"]) + pick(rng, UPPER + "234567", 16)


def mk_aws(rng: random.Random, i: int) -> Made:
    sec = pick(rng, B64, 40)
    kid = _akia(rng)
    style = ["labelled", "json", "beside"][i % 3]
    if style == "labelled":
        return style, sec, f"aws_access_key_id = {kid}\naws_secret_access_key = {sec}", None
    if style == "json":
        return style, sec, "", ("Credentials", {"AccessKeyId": kid, "SecretAccessKey": sec})
    return style, sec, f"s3 sync failed for bucket fisheries-vms-archive with {kid} {sec}", None


def mk_webhook(rng: random.Random, i: int) -> Made:
    style = ["slack", "discord", "teams", "powerautomate", "googlechat", "telegram", "zapier"][i % 7]
    if style == "slack":
        tok = pick(rng, ALNUM, 24)
        team, bot = pick(rng, UPPER + string.digits, 10), pick(rng, UPPER + string.digits, 10)
        url = f"https://hooks.slack.com/services/T{team}/B{bot}/{tok}"
    elif style == "discord":
        tok = pick(rng, B64URL, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**18)}/{tok}"
    elif style == "teams":
        tok = pick(rng, HEX, 32)
        u1, u2, u3 = (str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(3))
        url = (f"https://fijiports.webhook.office.com/webhookb2/{u1}@{u2}/IncomingWebhook/{tok}/{u3}/"
               f"V2{pick(rng, B64URL, 40)}")
    elif style == "powerautomate":
        tok = pick(rng, B64URL, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.australiaeast.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}")
    elif style == "googlechat":
        tok = pick(rng, B64URL, 43)
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, B64URL, 7)}/messages?key=AIzaSy"
               f"{pick(rng, B64URL, 33)}&token={tok}")
    elif style == "telegram":
        tok = pick(rng, B64URL, 35)
        url = f"https://api.telegram.org/bot{rng.randint(10**9, 10**10)}:{tok}/sendMessage"
    else:
        tok = pick(rng, LOWER + string.digits, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{rng.randint(10**6, 10**7)}/{tok}/"
    return style, tok, f"alerts for berth delays go to {url}", ("webhook_url", url)


def mk_whsec(rng: random.Random, i: int) -> Made:
    sec = "whsec_" + pick(rng, ALNUM, 32)
    style = ["env", "prose", "json"][i % 3]
    if style == "env":
        return style, sec, f"STRIPE_WEBHOOK_SECRET={sec}", ("STRIPE_WEBHOOK_SECRET", sec)
    if style == "json":
        return style, sec, "", ("signing_secret", sec)
    return style, sec, f"donations endpoint signing secret is {sec}", None


def mk_conn(rng: random.Random, i: int) -> Made:
    pw = _password(rng).replace("@", "9").replace("#", "8").replace("%", "7").replace("+", "6").replace("^", "5")
    style = ["postgres", "mongodb", "redis", "azure", "amqp", "sqlserver", "mysql"][i % 7]
    if style == "azure":
        pw = base64.b64encode(rng.randbytes(64)).decode()
        cs = (f"DefaultEndpointsProtocol=https;AccountName=reliefkobo{rng.randint(10, 99)};AccountKey={pw};"
              f"EndpointSuffix=core.windows.net")
    elif style == "postgres":
        cs = f"postgresql://pcs_app:{pw}@db.pcs-suva.internal:5432/portcall"
    elif style == "mongodb":
        cs = f"mongodb+srv://catchlog:{pw}@cluster0.{pick(rng, LOWER + string.digits, 5)}.mongodb.net/vms"
    elif style == "redis":
        cs = f"redis://:{pw}@cache.bookings.internal:6379/0"
    elif style == "amqp":
        cs = f"amqp://relief:{pw}@mq.cash.internal:5672/transfers"
    elif style == "sqlserver":
        cs = f"Server=tcp:crewdb.database.windows.net,1433;Database=crew;User ID=crewapp;Password={pw};Encrypt=True;"
    else:
        cs = f"mysql://licence_rw:{pw}@10.20.4.11:3306/licences"
    return style, pw, f"DATABASE_URL={cs}", ("connection_string", cs)


LABELS = ["Kobo API token", "MarineTraffic API key", "eSewa merchant secret", "mBoB merchant key",
          "M-PAiSA client secret", "MyCash API key", "eZ Cash merchant key", "Spire Maritime token",
          "Digicel Pay secret", "ODK Central app token", "kalou ni API", "API key blong Vodafone",
          "ki bilong API", "chave da API", "API යතුර", "API சாவி", "एपीआई कुञ्जी", "clé API", "API ކީ"]


def mk_labelled(rng: random.Random, i: int) -> Made:
    label = LABELS[i % len(LABELS)]
    key = rng.choice([pick(rng, HEX, 40), pick(rng, ALNUM, 32), pick(rng, B64URL, 28)])
    return f"label_{i % len(LABELS)}", key, f"{label}: {key}", (label, key)


def _disguise(rng: random.Random, value: str, style: str) -> str:
    if style == "zerowidth":
        return "\u200b".join(value[j:j + 3] for j in range(0, len(value), 3))
    if style == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in value)
    if style == "urlencoded":
        return "".join(f"%{ord(c):02X}" if not c.isalnum() or rng.random() < 0.5 else c for c in value)
    if style == "jsonescape":
        return "".join(f"\\u{ord(c):04x}" for c in value)
    if style == "htmlref":
        return "".join(f"&#{ord(c)};" if j % 2 == 0 else f"&#x{ord(c):x};" for j, c in enumerate(value))
    return "".join(f"\\x{ord(c):02x}" for c in value)


def mk_disguised(rng: random.Random, i: int) -> Made:
    style = ["zerowidth", "fullwidth", "urlencoded", "jsonescape", "htmlref", "bytes"][i % 6]
    base, label = rng.choice([(_password(rng), "password"), (pick(rng, B64, 40), "aws_secret_access_key"),
                              ("whsec_" + pick(rng, ALNUM, 32), "webhook secret"),
                              (pick(rng, HEX, 40), "Kobo API token")])
    shown = _disguise(rng, base, style)
    return style, shown, f"{label}={shown}", None


def mk_email(rng: random.Random, i: int) -> Made:
    first, last = _name(rng).lower().replace("-", "").split(" ")[:2]
    dom = rng.choice(["fijiports.com.fj", "slpa.lk", "gmail.com", "yahoo.co.in", "reliefnet.org.np",
                      "fisheries.gov.sb", "outlook.com", "digicelgroup.com"])
    addr = f"{first}.{last}{rng.randint(1, 99)}@{dom}"
    style = ["plain", "upper", "idn", "urlencoded", "jsonescape"][i % 5]
    if style == "upper":
        addr = addr.upper()
    elif style == "idn":
        addr = rng.choice([f"{rng.choice(['सुनील', 'अनिल', 'সুমন', 'ரவி'])}{rng.randint(1, 99)}@डाकघर.भारत",
                           f"josé.{last}{rng.randint(1, 99)}@correio.tl", f"mérè.{last}@poste.nc"])
    elif style == "urlencoded":
        addr = addr.replace("@", "%40")
        return style, addr, f"unsubscribe link: https://lists.relief.org/u?email={addr}&list=cash", None
    elif style == "jsonescape":
        addr = addr.replace("@", "\\u0040")
        return style, addr, "", ("contact_email_raw", "")  # filled by the caller as raw JSON
    return style, addr, f"email: {addr}", ("email", addr)


# ---- phones ------------------------------------------------------------------------------------------------------

def _d(rng: random.Random, n: int) -> str:
    return digits(rng, n)


def ph_us(rng: random.Random) -> tuple[str, str]:
    area = rng.choice(["415", "808", "206", "604", "416", "671", "684", "212", "907"])
    ex = f"{rng.randint(2, 9)}{rng.randint(0, 9)}{rng.randint(2, 9)}".replace("555", "556")
    line = _d(rng, 4)
    return rng.choice([("nat", f"({area}) {ex}-{line}"), ("dash", f"{area}-{ex}-{line}"),
                       ("intl", f"+1 {area} {ex} {line}"), ("dot", f"{area}.{ex}.{line}")])


def ph_uk(rng: random.Random) -> tuple[str, str]:
    return rng.choice([("mobile", f"07{rng.randint(4, 9)}{_d(rng, 2)} {_d(rng, 6)}"),
                       ("intl", f"+44 7{rng.randint(4, 9)}{_d(rng, 2)} {_d(rng, 6)}"),
                       ("london", f"020 {rng.choice('38')}{_d(rng, 3)} {_d(rng, 4)}"),
                       ("geo", f"0131 {rng.randint(2, 3)}{_d(rng, 2)} {_d(rng, 4)}")])


def ph_fr(rng: random.Random) -> tuple[str, str]:
    def pairs(n: int) -> str:
        return " ".join(f"{rng.randint(10, 99)}" for _ in range(n))
    return rng.choice([("mobile", f"0{rng.choice('67')} {pairs(4)}"), ("intl", f"+33 {rng.choice('67')} {pairs(4)}"),
                       ("fixed", f"0{rng.randint(1, 5)} {pairs(4)}"), ("dots", f"06.{pairs(4).replace(' ', '.')}")])


def ph_de(rng: random.Random) -> tuple[str, str]:
    return rng.choice([("mobile", f"0151 {_d(rng, 8)}"), ("mobile", f"0171 {_d(rng, 7)}"),
                       ("intl", f"+49 160 {_d(rng, 7)}"), ("fixed", f"030 {_d(rng, 8)}"),
                       ("hamburg", f"040 {_d(rng, 3)} {_d(rng, 4)}")])


def ph_in(rng: random.Random) -> tuple[str, str]:
    m = f"{rng.randint(6, 9)}{_d(rng, 4)} {_d(rng, 5)}"
    return rng.choice([("mobile", m), ("intl", f"+91 {m}"), ("zero", f"0{m.replace(' ', '')}"),
                       ("compact", m.replace(" ", ""))])


def ph_fj(rng: random.Random) -> tuple[str, str]:
    n = rng.choice([f"{rng.choice('789')}{_d(rng, 2)} {_d(rng, 4)}", f"33{_d(rng, 1)} {_d(rng, 4)}",
                    f"66{_d(rng, 1)} {_d(rng, 4)}"])
    if n.startswith("91"):  # 91x holds Fiji's short codes (911 emergency), not subscriber numbers
        n = "92" + n[2:]
    return rng.choice([("nat", n), ("intl", f"+679 {n}")])


def ph_pg(rng: random.Random) -> tuple[str, str]:
    return rng.choice([("mobile", f"7{rng.choice('0123456')}{_d(rng, 2)} {_d(rng, 4)}"),
                       ("intl", f"+675 7{rng.choice('0123456')}{_d(rng, 2)} {_d(rng, 4)}"),
                       ("fixed", f"+675 32{_d(rng, 1)} {_d(rng, 4)}")])


def ph_ws(rng: random.Random) -> tuple[str, str]:
    n = f"7{rng.choice('2345678')} {_d(rng, 5)}"
    return rng.choice([("nat", n), ("intl", f"+685 {n}")])


def ph_to(rng: random.Random) -> tuple[str, str]:
    n = f"{rng.choice(['77', '78', '84', '87'])} {_d(rng, 5)}"
    return rng.choice([("nat", n), ("intl", f"+676 {n}")])


def ph_vu(rng: random.Random) -> tuple[str, str]:
    n = f"{rng.choice(['55', '54', '77', '71'])}{_d(rng, 1)} {_d(rng, 4)}"
    return rng.choice([("nat", n), ("intl", f"+678 {n}")])


def ph_sb(rng: random.Random) -> tuple[str, str]:
    n = f"{rng.choice(['74', '75', '84', '86', '87'])} {_d(rng, 5)}"
    return rng.choice([("nat", n), ("intl", f"+677 {n}")])


def ph_tl(rng: random.Random) -> tuple[str, str]:
    n = f"7{rng.choice('3678')}{_d(rng, 2)} {_d(rng, 4)}"
    return rng.choice([("nat", n), ("intl", f"+670 {n}")])


def ph_lk(rng: random.Random) -> tuple[str, str]:
    op = rng.choice(["70", "71", "72", "74", "75", "76", "77", "78"])
    return rng.choice([("nat", f"0{op} {_d(rng, 3)} {_d(rng, 4)}"), ("intl", f"+94 {op} {_d(rng, 3)} {_d(rng, 4)}"),
                       ("compact", f"0{op}{_d(rng, 7)}"), ("dash", f"0{op}-{_d(rng, 7)}")])


def ph_np(rng: random.Random) -> tuple[str, str]:
    n = f"98{rng.choice('0124568')}{_d(rng, 7)}"
    return rng.choice([("nat", n), ("intl", f"+977 {n}"), ("dash", f"{n[:3]}-{n[3:]}"),
                       ("intl", f"+977-{n}")])


def ph_bt(rng: random.Random) -> tuple[str, str]:
    n = f"{rng.choice(['17', '77'])} {_d(rng, 2)} {_d(rng, 2)} {_d(rng, 2)}"
    return rng.choice([("nat", n), ("intl", f"+975 {n}"), ("compact", n.replace(" ", ""))])


def ph_mv(rng: random.Random) -> tuple[str, str]:
    n = f"{rng.choice(['77', '79', '96', '97', '98', '76'])}{_d(rng, 1)}-{_d(rng, 4)}"
    return rng.choice([("nat", n), ("intl", f"+960 {n.replace('-', ' ')}")])


def ph_mu(rng: random.Random) -> tuple[str, str]:
    n = f"5{rng.choice('24789')}{_d(rng, 2)} {_d(rng, 4)}"
    return rng.choice([("nat", n), ("intl", f"+230 {n}")])


def mk_phone(maker: Callable[[random.Random], tuple[str, str]]) -> Callable[[random.Random, int], Made]:
    def make(rng: random.Random, i: int) -> Made:
        style, num = maker(rng)
        if i % 25 == 24:
            return f"bare:{style}", num, f"{rng.choice(VESSELS)} {rng.choice(PORTS)} {num}", None
        word = rng.choice(PHONE_WORDS)
        return style, num, f"{_name(rng)}, {word}: {num}", ("phone", num)
    return make


# ---- ids, cards, banks ---------------------------------------------------------------------------------------

def mk_ssn(rng: random.Random, i: int) -> Made:
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            break
    s = f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"
    style = ["dash", "space", "compact"][i % 3]
    if style == "space":
        s = s.replace("-", " ")
    elif style == "compact":
        s = s.replace("-", "")
    return style, s, f"US crew member {_name(rng)}, SSN {s}", ("ssn", s)


def _card_number(rng: random.Random) -> str:
    prefix, length = rng.choice([("4", 16), ("5" + str(rng.randint(1, 5)), 16), (str(rng.randint(2221, 2720)), 16),
                                 ("3" + rng.choice("47"), 15), (str(rng.randint(3528, 3589)), 16),
                                 ("6521", 16), ("6522", 16), ("6011", 16)])
    partial = prefix + digits(rng, length - len(prefix) - 1)
    return partial + luhn_digit(partial)


def mk_card(rng: random.Random, i: int) -> Made:
    num = _card_number(rng)
    sep = ["-", " ", ".", "_", ""][i % 5]
    shown = group_card(num, sep) if sep else num
    return f"sep{'none' if not sep else repr(sep)[1:-1]}", shown, f"card no {shown} exp 0{rng.randint(1, 9)}/29", \
        ("card_number", shown)


IBANS = {"MU": "4a2n2n12n3n", "TL": "3n14n2n", "GB": "4a6n8n", "DE": "8n10n", "FR": "5n5n11n2n", "NL": "4a10n"}


def _iban(rng: random.Random) -> str:
    cc = rng.choice(list(IBANS))
    b = bban(rng, IBANS[cc]) + ("MUR" if cc == "MU" else "")
    return cc + iban_check(cc, b) + b


def mk_iban(rng: random.Random, i: int) -> Made:
    ib = _iban(rng)
    style = ["spaced", "compact", "lower"][i % 3]
    shown = group(ib, 4, " ") if style == "spaced" else ib if style == "compact" else ib.lower()
    return style, shown, f"beneficiary IBAN {shown} (BIC MCBLMUMU)", ("iban", shown)


# ---- tokens ----------------------------------------------------------------------------------------------------

def mk_jwt(rng: random.Random, i: int) -> Made:
    head = b64url(json.dumps({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    body = b64url(json.dumps({"sub": str(rng.randint(10**5, 10**6)), "iss": "https://id.relief.example",
                              "exp": 1790000000 + rng.randint(0, 10**7)}).encode())
    tok = f"{head}.{body}.{b64url(rng.randbytes(32 if i % 2 else 256))}"
    return ["bearer", "cookie", "json"][i % 3], tok, f"Authorization: Bearer {tok}", ("id_token", tok)


def mk_oauth(rng: random.Random, i: int) -> Made:
    style = ["google", "github", "bearer"][i % 3]
    if style == "google":
        tok = "ya29." + pick(rng, B64URL, 150)
    elif style == "github":
        tok = crc_token(rng, "gho_")
    else:
        tok = pick(rng, ALNUM, 40)
    return style, tok, f"access_token={tok}&token_type=Bearer&expires_in=3599", ("access_token", tok)


def mk_cookie(rng: random.Random, i: int) -> Made:
    style = ["django", "express", "php", "laravel", "aspnet"][i % 5]
    name, val = {"django": ("sessionid", pick(rng, LOWER + string.digits, 32)),
                 "express": ("connect.sid", "s%3A" + pick(rng, B64URL, 32) + "." + pick(rng, B64, 43)),
                 "php": ("PHPSESSID", pick(rng, LOWER + string.digits, 26)),
                 "laravel": ("laravel_session", base64.b64encode(rng.randbytes(120)).decode()),
                 "aspnet": (".AspNetCore.Session", "CfDJ8" + pick(rng, B64URL, 90))}[style]
    return style, val, f"Set-Cookie: {name}={val}; Path=/; HttpOnly; Secure", ("cookie", f"{name}={val}")


def mk_key(rng: random.Random, i: int) -> Made:
    seed = rng.randbytes(32)
    if i % 2:
        der = bytes.fromhex("302e020100300506032b657004220420") + seed
        body = "\n".join(group(base64.b64encode(der).decode(), 64, "\n").split("\n"))
        pem = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----"
        style = "pkcs8"
    else:
        pub = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, pub, rng.randbytes(4), b"vms-gateway@suva")
        body = group(base64.b64encode(blob).decode(), 70, "\n")
        pem = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
        style = "openssh"
    return style, body, f"deploy key for the AIS relay:\n{pem}", ("private_key", pem)


def mk_totp(rng: random.Random, i: int) -> Made:
    seed = base64.b32encode(rng.randbytes(20 if i % 2 else 10)).decode().rstrip("=")
    style = ["uri", "labelled"][i % 2]
    if style == "uri":
        uri = f"otpauth://totp/PortCommunity:ops{rng.randint(1, 99)}?secret={seed}&issuer=PortCommunity"
        return style, seed, f"enrol with {uri}", ("otpauth", uri)
    return style, seed, f"2FA setup key: {seed}", ("totp_secret", seed)


def mk_openai(rng: random.Random, i: int) -> Made:
    k = "sk-proj-" + pick(rng, B64URL, 74) + "T3BlbkFJ" + pick(rng, B64URL, 74)
    return "env", k, f"OPENAI_API_KEY={k}", ("openai_key", k)


def mk_anthropic(rng: random.Random, i: int) -> Made:
    k = "sk-ant-api03-" + pick(rng, B64URL, 93) + "AA"
    return "env", k, f"ANTHROPIC_API_KEY={k}", ("anthropic_key", k)


def mk_github(rng: random.Random, i: int) -> Made:
    k = crc_token(rng, rng.choice(["ghp_", "ghs_", "ghu_"]))
    return "prose", k, f"git clone https://{k}@github.com/relief-it/kobo-sync.git", ("token", k)


def mk_google(rng: random.Random, i: int) -> Made:
    k = "AIza" + pick(rng, B64URL, 35)
    return "url", k, f"https://maps.googleapis.com/maps/api/geocode/json?address=Lami&key={k}", ("maps_key", k)


def mk_sendgrid(rng: random.Random, i: int) -> Made:
    k = "SG." + pick(rng, B64URL, 22) + "." + pick(rng, B64URL, 43)
    return "env", k, f"SENDGRID_API_KEY={k}", ("sendgrid", k)


def mk_slack(rng: random.Random, i: int) -> Made:
    k = f"xoxb-{rng.randint(10**10, 10**12)}-{rng.randint(10**10, 10**12)}-{pick(rng, ALNUM, 24)}"
    return "yaml", k, f"slack:\n  bot_token: {k}", ("slack_bot_token", k)


# ---- national ids -----------------------------------------------------------------------------------------------

def _lk_check(nine: str) -> str:
    total = sum(int(d) * w for d, w in zip(nine[:8], (3, 2, 7, 6, 5, 4, 3, 2), strict=True))
    c = 11 - total % 11
    return "0" if c >= 10 else str(c)


def mk_nic_lk(rng: random.Random, i: int) -> Made:
    yy, day = rng.randint(50, 99), rng.randint(1, 365) + (500 if rng.random() < 0.5 else 0)
    if i % 2:
        eight = f"{yy:02d}{day:03d}{rng.randint(0, 999):03d}"
        nic = eight + _lk_check(eight) + rng.choice("VX")
        style = "old"
    else:
        year = rng.randint(1970, 2005)
        eleven = f"{year}{day:03d}0{rng.randint(0, 999):03d}"
        nic = eleven + _lk_check(eleven[2:4] + eleven[4:7] + eleven[8:11])
        style = "new"
    return style, nic, f"NIC අංකය / NIC no: {nic}", ("nic", nic)


def mk_nin_np(rng: random.Random, i: int) -> Made:
    if i % 2:
        v = _d(rng, 3) + "-" + _d(rng, 3) + "-" + _d(rng, 4)
        return "nin", v, f"राष्ट्रिय परिचयपत्र नम्बर (NIN): {v}", ("nin", v)
    v = f"{rng.randint(1, 77):02d}-{rng.randint(1, 3)}{rng.randint(0, 9)}-{rng.randint(60, 80)}-{_d(rng, 5)}"
    return "citizenship", v, f"नागरिकता प्रमाणपत्र नं. {v}", ("citizenship_no", v)


def mk_nic_mu(rng: random.Random, i: int) -> Made:
    v = (rng.choice(UPPER) + f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{rng.randint(50, 99):02d}"
         + _d(rng, 6) + rng.choice(UPPER + string.digits))
    return "nic", v, f"National Identity Card No: {v}", ("nid", v)


def mk_tin_fj(rng: random.Random, i: int) -> Made:
    v = _d(rng, 2) + "-" + _d(rng, 5) + "-" + _d(rng, 1) + "-" + _d(rng, 1) if i % 2 else _d(rng, 9)
    return "dash" if i % 2 else "compact", v, f"FRCS TIN: {v}", ("tin", v)


KINDS: dict[str, Callable[[random.Random, int], Made]] = {
    "password": mk_password, "aws_secret": mk_aws, "webhook": mk_webhook, "stripe_whsec": mk_whsec,
    "connection_string": mk_conn, "labelled_key": mk_labelled, "disguised": mk_disguised, "email": mk_email,
    "phone_us_ca": mk_phone(ph_us), "phone_uk": mk_phone(ph_uk), "phone_fr": mk_phone(ph_fr),
    "phone_de": mk_phone(ph_de), "phone_in": mk_phone(ph_in), "ssn": mk_ssn, "card": mk_card, "iban": mk_iban,
    "jwt": mk_jwt, "oauth_token": mk_oauth, "session_cookie": mk_cookie, "private_key": mk_key,
    "totp_seed": mk_totp, "openai_key": mk_openai, "anthropic_key": mk_anthropic, "github_token": mk_github,
    "google_api_key": mk_google, "sendgrid_key": mk_sendgrid, "slack_token": mk_slack,
    "phone_fj": mk_phone(ph_fj), "phone_pg": mk_phone(ph_pg), "phone_ws": mk_phone(ph_ws),
    "phone_to": mk_phone(ph_to), "phone_vu": mk_phone(ph_vu), "phone_sb": mk_phone(ph_sb),
    "phone_tl": mk_phone(ph_tl), "phone_lk": mk_phone(ph_lk), "phone_np": mk_phone(ph_np),
    "phone_bt": mk_phone(ph_bt), "phone_mv": mk_phone(ph_mv), "phone_mu": mk_phone(ph_mu),
    "nic_lk": mk_nic_lk, "nin_np": mk_nin_np, "nic_mu": mk_nic_mu, "tin_fj": mk_tin_fj,
}


def generate() -> Iterator[Case]:
    rng = random.Random(SEED)
    for kind, make in KINDS.items():
        for i in range(PER_KIND):
            style, secret, line, field = make(rng, i)
            as_json = (i % 3 == 0 and not style.startswith("bare")) or (kind == "email" and style == "jsonescape")
            if style in ("json",) and kind in ("aws_secret", "stripe_whsec"):
                as_json = True
            if kind == "disguised" and style == "jsonescape":
                text = ('{"tool": "vault_read", "result": {"' + line.split("=")[0] + '": "' + secret + '"}}')
                yield Case(kind, f"tool/{style}", secret, text, True)
                continue
            if kind == "email" and style == "jsonescape":
                text = '{"submission": {"respondent_email": "' + secret + '", "district": "Ba"}}'
                yield Case(kind, f"kobo/{style}", secret, text, True)
                continue
            if as_json:
                carrier = JSON_CARRIERS[i % len(JSON_CARRIERS)]
                text = wrap_json(rng, carrier, line or "see field", field if (field and not line or i % 2) else None)
            else:
                carrier = "bare" if style.startswith("bare") else TEXT_CARRIERS[i % len(TEXT_CARRIERS)]
                if kind in ("password", "aws_secret", "stripe_whsec", "connection_string", "openai_key",
                            "anthropic_key", "sendgrid_key", "slack_token") and i % 4 == 1:
                    carrier = "config"
                    text = f"# integrations for {rng.choice(PORTS)} relief hub\n{line}\n"
                elif carrier == "bare":
                    text = line
                else:
                    text = wrap_text(rng, carrier, line)
                style = style.replace("bare:", "")
            if secret not in text and json.dumps(secret, ensure_ascii=False)[1:-1] not in text:
                raise AssertionError(f"{kind} {style}: secret not in text")
            yield Case(kind, f"{carrier}/{style}", secret, text, as_json)


# ---- near misses -------------------------------------------------------------------------------------------------

def _imo(rng: random.Random) -> str:
    six = f"{rng.randint(9000000, 9999999) // 10:06d}"
    check = sum(int(d) * w for d, w in zip(six, range(7, 1, -1), strict=True)) % 10
    return six + str(check)


def _container(rng: random.Random) -> str:
    owner = pick(rng, UPPER, 3) + "U"
    serial = digits(rng, 6)
    values = {}
    v = 10
    for ch in UPPER:
        if v % 11 == 0:
            v += 1
        values[ch] = v
        v += 1
    total = sum((values[c] if c.isalpha() else int(c)) * 2 ** j for j, c in enumerate(owner + serial))
    return owner + serial + str(total % 11 % 10)


def _bad_luhn(rng: random.Random) -> str:
    n = _card_number(rng)
    bad = n[:-1] + str((int(n[-1]) + rng.randint(1, 9)) % 10)
    assert not luhn_ok(bad)
    return bad


def _bad_iban(rng: random.Random) -> str:
    ib = _iban(rng)
    while True:
        j = rng.randrange(6, len(ib) - 3 if ib.startswith("MU") else len(ib))
        if ib[j].isdigit():
            bad = ib[:j] + str((int(ib[j]) + rng.randint(1, 9)) % 10) + ib[j + 1:]
            if not iban_ok(bad):
                return group(bad, 4, " ")


PUBLIC = ["Fiji emergency line 911", "Sri Lanka disaster hotline 117", "Nepal police 100", "Maldives toll-free 1500",
          "Vodafone Fiji helpdesk short code 123", "M-PAiSA customer care short code 1515",
          "India toll-free 1800 180 1551", "PNG police 112", "Mauritius SAMU 114"]
PLACEHOLDERS = ["API_KEY=<your-key>", "password: xxxx", "DB_PASSWORD=${SECRET}", "token: {{ vault.kobo_token }}",
                "SECRET_KEY=changeme-in-prod?", "STRIPE_WEBHOOK_SECRET=whsec_...", "AWS_SECRET_ACCESS_KEY=<secret>"]
EXAMPLES = ["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "example: https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"]


def _epoch(r: random.Random) -> int:
    return r.randint(1_700_000_000, 1_800_000_000)


NEAR: dict[str, Callable[[random.Random], str]] = {
    "booking_number": lambda r: f"Booking ref BKG-{r.choice(['SUV', 'LAE', 'CMB', 'MLE'])}-{digits(r, 7)} confirmed",
    "bill_of_lading": lambda r: f"B/L No. {r.choice(['SWRE', 'PFLT', 'NPDL'])}{digits(r, 9)} voyage {digits(r, 3)}S",
    "voyage_number": lambda r: f"Voyage {r.choice(['SPX', 'NZP', 'CHX'])}{digits(r, 4)}N ETA {_stamp(r)}",
    "catch_log": lambda r: (f"catch log CL/{r.randint(2024, 2026)}/{digits(r, 6)} skipjack "
                            f"{r.randint(1, 40)}.{r.randint(0, 9)} t"),
    "licence_number": lambda r: (f"fishing licence FL-{r.choice(['FJ', 'SB', 'VU', 'TO'])}-{r.randint(2025, 2026)}-"
                                 f"{digits(r, 4)} valid"),
    "case_number": lambda r: f"relief case RC-{digits(r, 8)} household verified, ticket HD-{digits(r, 5)}",
    "mmsi": lambda r: (f"AIS msg 1 MMSI {r.choice(['520', '553', '561', '572', '576', '417', '455', '645'])}"
                       f"{digits(r, 6)} SOG 9.8"),
    "imo_number": lambda r: f"vessel registry IMO {_imo(r)} flag Fiji GT 1420",
    "container_number": lambda r: f"container {_container(r)} 40HC reefer set -18C",
    "uuid": lambda r: f"submission uuid:{uuid.UUID(int=r.getrandbits(128), version=4)} synced",
    "trace_id": lambda r: f"traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01",
    "digest": lambda r: f"manifest.pdf sha256={hashlib.sha256(r.randbytes(16)).hexdigest()}",
    "version": lambda r: (f"kobo-sync v{r.randint(1, 4)}.{r.randint(0, 20)}.{r.randint(0, 30)} "
                          f"build {r.randint(100, 999)}"),
    "timestamp": lambda r: f"berth window {_stamp(r)}:00+12:00 to {_stamp(r)}:00+12:00 (epoch {_epoch(r)})",
    "coordinates": lambda r: (f"VMS position {-r.uniform(8, 22):.5f}, {r.uniform(160, 180):.5f} "
                              f"course {r.randint(0, 359)}"),
    "measurement": lambda r: (f"reefer temp -{r.randint(15, 25)}.{r.randint(0, 9)}C, "
                              f"gross {r.randint(10000, 30000)} kg, LOA {r.randint(30, 200)} m"),
    "public_number": lambda r: f"{r.choice(PUBLIC)} (published, ref {r.randint(1, 9)})",
    "company_registration": lambda r: (f"company reg no. {r.choice(['PV', 'PB'])} {digits(r, 5)} "
                                       "(Registrar of Companies, Colombo)"),
    "luhn_invalid_card": lambda r: f"ref {_bad_luhn(r)} rejected by gateway",
    "invalid_iban": lambda r: f"IBAN check failed for {_bad_iban(r)} (MOD 97)",
    "masked": lambda r: f"card ****{digits(r, 4)}, phone +679 *** **{digits(r, 2)}, password ********",
    "placeholder": lambda r: r.choice(PLACEHOLDERS),
    "vendor_example": lambda r: r.choice(EXAMPLES),
    "css_identifier": lambda r: (f".berth-card__status--{r.choice(['delayed', 'alongside'])} {{ color: "
                                 f"#{pick(r, HEX, 6)}; }} const vesselEtaMs = {r.randint(1000, 9999)};"),
    "path_url": lambda r: (f"GET https://pcs.{r.choice(['fijiports.com.fj', 'slpa.lk'])}/api/v2/portcalls/"
                           f"{digits(r, 6)}/berths?page=2 -> /var/log/pcs/sync-{digits(r, 8)}.log"),
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    rng = random.Random(SEED + 1)
    for sort, make in NEAR.items():
        for j in range(30):
            line = make(rng)
            if j % 3 == 0:
                yield sort, wrap_json(rng, JSON_CARRIERS[j % 4], line, None)
            else:
                yield sort, wrap_text(rng, TEXT_CARRIERS[j % len(TEXT_CARRIERS)], line)
