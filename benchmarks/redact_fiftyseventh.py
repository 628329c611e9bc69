"""The fifty-seventh blind redaction corpus: agriculture, cooperatives and health programmes in Sub-Saharan Africa
(Nigeria, Ghana, Kenya, Uganda, Tanzania, Rwanda, Ethiopia, South Africa, Zambia, Senegal, Côte d'Ivoire and
Cameroon): what an agent sees that runs farmer registration, input vouchers, produce aggregation and payments,
extension advice by SMS, USSD and WhatsApp, weather-index insurance claims, and a health NGO's field data collection
and IT support. It was written from the formats' public specifications by someone who read neither the detection
rules nor the other corpora.

Carriers (the `form` head): `log` (a service's log line), `env` and `yaml` (integration configs), `cli` (a shell
command), `email`, `whatsapp` (an exported WhatsApp thread), `ticket` (a helpdesk ticket), `sms` (an SMS gateway
callback, Africa's Talking / Twilio / Infobip style, form-encoded), `ussd` (a USSD session log), `csv` (a
cooperative ledger or export), `pdf` (text extracted from a PDF form or contract), `xml` (an ODK / KoboToolbox
submission), `reply` (the agent's own reply); as JSON (`is_json`, about a third): `kobo` (a KoboToolbox submission),
`dhis2` (a DHIS2 tracker payload), `commcare` (a CommCare form), `callback` (a mobile-money disbursement or
collection callback: M-Pesa Daraja, MTN MoMo, Airtel Money, Orange Money, Wave, Flutterwave, Paystack), `tool`
(the agent's tool result) and `notebook` (a Jupyter cell of the programme's data team). `bare` is a phone number
with no context word. The tail is the value's style (`intl`, `national`, `msisdn`, `spaced`, `lower` ...).

Formats and their sources. Phones: ITU-T E.164 and each regulator's national numbering plan: NANP (NANPA: NXX area
and exchange codes), Ofcom's UK plan (07 mobiles, 01/02 geographic), ARCEP's French plan (06/07 mobiles, 01-05),
the Bundesnetzagentur's (015x/016x/017x mobiles, area codes), India's TRAI plan (ten digits from 6-9); Nigeria
(NCC: 0 + 70x/80x/81x/90x/91x, eleven digits), Ghana (NCA: 0 + 2x/5x, ten digits), Kenya (CA: 07xx and 011x
mobiles), Uganda (UCC: 07xx), Tanzania (TCRA: 06xx/07xx), Rwanda (RURA: 072-079), Ethiopia (ECA: 09 and 07
mobiles), South Africa (ICASA: 06x, 07x, 08x mobiles), Zambia (ZICTA: 095-097, 075-077), Senegal (ARTP: nine
digits, 70/75/76/77/78 mobiles, no trunk prefix), Côte d'Ivoire (ARTCI: the ten-digit plan of 31 January 2021,
01/05/07 mobiles, 27 fixed) and Cameroon (ART: nine digits from 6). Cards: ISO/IEC 7812 with the Luhn check (Visa 4,
Mastercard 51-55 and 2221-2720, Amex 34/37, Verve 5061/6500 of Interswitch). IBANs: ISO 13616 and the SWIFT IBAN
registry's BBAN structures (DE, FR with its RIB key, GB, NL, BE with its mod 97 pair, CH, Mauritius, Seychelles,
Mauritania), MOD 97-10 check digits. SSNs: the SSA's area/group/serial rules (no 000, 666 or 9xx area, no 00
group, no 0000 serial). AWS: access key ids AKIA/ASIA + 16 base32 characters, 40-character secret keys (IAM docs).
Webhooks as the vendors' docs print them: Slack (`hooks.slack.com/services/T.../B.../token`), Discord
(`/api/webhooks/id/token`), Microsoft Teams (the `webhookb2` connector URL and the Power Automate workflow URL with
its `sig`), Telegram (the Bot API URL with `bot<id>:<token>`), Zapier catch hooks, Make (`hook.<zone>.make.com`),
Google Chat (`key` and `token` query) and Mattermost (`/hooks/<26 chars>`). Stripe webhook secrets `whsec_` (the
dashboard's 32 characters, the CLI's 64 hex). Connection strings: RFC 3986 URIs (PostgreSQL, MySQL, MongoDB SRV,
Redis, AMQP), ADO.NET keywords (SQL Server `Password=`), Azure Storage `AccountKey=` (64 bytes base64) and Service
Bus `SharedAccessKey=`. JWT: RFC 7519 / RFC 7515 (base64url header, payload, HMAC-SHA256 signature). OAuth tokens:
Google `ya29.`, Slack `xoxb-`/`xoxp-`, GitHub `gho_` (with its CRC32 checksum), Meta's WhatsApp Cloud API `EAA`
tokens, Daraja's 28-character access token. Session cookies: Django `sessionid` (32 lower-case alphanumerics, as
KoboToolbox and CommCare run Django), Java `JSESSIONID` (32 upper-case hex, as DHIS2 and OpenMRS set it), PHP
`PHPSESSID`, Express `connect.sid` (`s:` signed value), Laravel's encrypted cookie. Private keys: PEM (RFC 7468)
of SEC1 and PKCS#8 P-256 keys (the public point computed on the curve of SEC 2), PKCS#1 RSA (DER structure with
drawn integers: not a working key) and OpenSSH `openssh-key-v1` Ed25519 (PROTOCOL.key; the public half drawn,
not derived). TOTP seeds: RFC 4226/6238 base32 secrets and Google Authenticator's `otpauth://` URI. API keys as
their docs show them: Paystack `sk_live_`/`sk_test_` + 40 hex, Flutterwave `FLWSECK-`/`FLWSECK_TEST-` + 32 hex +
`-X`, Twilio API key secrets and auth tokens (32 characters, beside an `SK`/`AC` SID), OpenAI `sk-proj-`, Google
`AIza` + 35, GitHub `ghp_` (CRC32 checksum) and `github_pat_11`, SendGrid `SG.` + 22 + `.` + 43. Labelled keys
of the domain's platforms that publish no prefix: Daraja consumer key/secret and passkey, MTN MoMo subscription keys
and API keys (32 hex), Africa's Talking API keys (the 64 hex characters of its older dashboard keys), KoboToolbox
and CommCare API tokens (40 hex), ODK Central app-user tokens (64 characters of letters, digits, `!` and `$`),
Infobip API keys (32 hex, `-`, a UUID), Orange Money client secrets.

National ids (outside the target, `OUTSIDE_TARGET`): the South African ID number (YYMMDD SSSS C A Z, the Luhn check
of the Department of Home Affairs' layout), the Kenyan KRA PIN (an individual's `A` + nine digits + a letter: the
published shape; the check letter's rule is not published, so it is drawn), the Nigerian NIN (eleven digits: shape
only, NIMC publishes no check), the Ghana Card PIN (`GHA-` + nine digits + `-` + a check digit: the NIA publishes
the shape, not the check's rule, so the digit is drawn) and the Rwandan national id (sixteen digits: 1, year of
birth, 7/8 for sex, a seven-digit serial, the issue count and two digits whose rule is not published: shape only).
BVN is left out: it has neither a published check nor a shape beyond eleven digits that the NIN does not show.

Judgements (what `secret` is): only what must not survive redaction, verbatim as it stands in `text` (as JSON
escapes it where `is_json`): a password, not its name; a webhook URL's token segment (Slack's last segment,
Discord's token, Teams' hex segment or `sig`, Telegram's token after the colon, Zapier's and Make's hook ids,
Google Chat's `token`, Mattermost's hook id); a connection string's password or key; a cookie's value; an account
number (IBAN); a private key's base64 body; a phone number, e-mail address, card number, SSN, national id and
every key and token whole. A disguised value is the secret as it stands: with its zero-width characters, in
full-width forms, percent-encoded, or written as `\\uXXXX` escapes in a log line (and, carried as JSON whose
string holds every character as a `\\uXXXX` escape, the value that string decodes to).

Languages: English (Nigerian, Ghanaian, East African, South African), French (West and Central African), Swahili,
Hausa, Yoruba, Igbo, Amharic (Ethiopic script), Kinyarwanda, Luganda, Zulu, Xhosa, Afrikaans, Wolof, Twi and
Nigerian Pidgin: the context words of phones and the labels of keys and passwords in the language of the country.

Near misses: order, invoice, voucher, warehouse-receipt and lot numbers; mobile-money transaction ids and
Daraja's 14-digit timestamps; request and trace ids; digests; UUIDs and DHIS2 uids; versions; dates; GPS points
and measurements; toll-free numbers and USSD and SMS short codes named as such; GS1 GTINs and GLNs and French
SIREN numbers with their check digits; Luhn-invalid card-like numbers; IBANs with wrong check digits; masked
values; placeholders; the vendors' documented example keys; publishable (public) keys; code identifiers; paths and
URLs without credentials; USSD session ids. None holds a person's data or a secret.

Counts: 45 kinds of 100 values (40 target kinds: the issue's 16, jwt, oauth_token, session_cookie, private_key,
totp_seed, seven providers' API keys and twelve region phones; 5 national ids outside the target), about a third
carried as JSON; 702 near misses over 27 sorts of 26.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from benchmarks.corpus_formats import (
    B62,
    b64url,
    bban,
    crc_b62,
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

SEED = 57
PER_KIND = 100
OUTSIDE_TARGET = frozenset({"za_id", "kra_pin", "ng_nin", "gh_card", "rw_nid"})

HEX = "0123456789abcdef"
UHEX = HEX.upper()
LOWER_ALNUM = string.ascii_lowercase + string.digits
B32 = string.ascii_uppercase + "234567"
B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"


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


# ---- shared vocabulary ---------------------------------------------------------------------------------------

FIRST = ["Chinedu", "Ngozi", "Emeka", "Funmilayo", "Abubakar", "Aisha", "Kwame", "Akosua", "Yaw", "Efua", "Wanjiru",
         "Otieno", "Njeri", "Kiprono", "Nakato", "Ssemakula", "Amani", "Neema", "Mugisha", "Uwase", "Abebe", "Tigist",
         "Thandiwe", "Sipho", "Lindiwe", "Pieter", "Mwansa", "Chanda", "Aminata", "Moussa", "Fatou", "Kouassi", "Aya",
         "Ebai", "Nkeng", "Adaeze", "Oluwaseun", "Halima", "Baraka", "Zodwa"]
LAST = ["Okonkwo", "Adeyemi", "Mensah", "Boateng", "Kamau", "Odhiambo", "Mutua", "Namutebi", "Mwakyusa", "Habimana",
        "Tesfaye", "Bekele", "Dlamini", "Nkosi", "van der Merwe", "Banda", "Phiri", "Diop", "Ndiaye", "Koné",
        "Traoré", "Fotso", "Tabi", "Bello", "Eze", "Asante", "Ochieng", "Kato", "Mushi", "Uwimana"]
PLACES = ["Kano", "Ibadan", "Tamale", "Kumasi", "Eldoret", "Kisumu", "Mbale", "Gulu", "Arusha", "Mbeya", "Musanze",
          "Huye", "Hawassa", "Bahir Dar", "Polokwane", "Mthatha", "Chipata", "Kabwe", "Kaolack", "Ziguinchor",
          "Bouaké", "Daloa", "Bafoussam", "Bamenda"]
SERVICES = ["ussd-gw", "voucher-svc", "payout-worker", "kobo-sync", "dhis2-bridge", "sms-advisory", "claims-api",
            "aggregation-api", "commcare-export", "helpdesk-bot"]
ROLES = ["Field officer", "Lead farmer", "Extension agent", "Cooperative secretary", "M&E officer", "IT support",
         "Warehouse clerk", "Programme manager", "CHW supervisor"]


def ts(rng: random.Random) -> str:
    return (f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z")


def xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---- carriers --------------------------------------------------------------------------------------------------

def plain(rng: random.Random, field: str, human: str, value: str, carriers: tuple[str, ...] = ()) -> tuple[str, str]:
    """(carrier, text): `value` under its `field` name (configs, logs, CSV, XML) or its `human` label (prose)."""
    carrier = rng.choice(carriers or ("log", "email", "whatsapp", "ticket", "pdf", "xml", "csv", "reply", "sms",
                                      "ussd"))
    place = rng.choice(PLACES)
    if carrier == "env":
        return carrier, f"# {rng.choice(SERVICES)} .env\nLOG_LEVEL=info\n{field}={value}\nREGION={place.lower()}\n"
    if carrier == "yaml":
        return carrier, (f"integrations:\n  {rng.choice(SERVICES)}:\n    enabled: true\n    {field}: {value}\n"
                         f"    timeout_s: {rng.choice([10, 30, 60])}\n")
    if carrier == "cli":
        return carrier, f"$ ./bin/{rng.choice(SERVICES)} sync --region {place.lower()} --{field} {value} --dry-run"
    if carrier == "log":
        return carrier, (f"{ts(rng)} INFO [{rng.choice(SERVICES)}] req={pick(rng, HEX, 12)} {field}={value} "
                         f"status=200 site={place}")
    if carrier == "email":
        return carrier, (f"Subject: {place} cooperative onboarding\n\nHello team,\n\nAs discussed at the {place} "
                         f"meeting, {human}: {value}\nPlease update the register before Friday.\n\n"
                         f"Regards,\n{rng.choice(ROLES)}")
    if carrier == "whatsapp":
        return carrier, (f"[{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2025, {rng.randint(6, 20):02d}:"
                         f"{rng.randint(0, 59):02d}] {rng.choice(ROLES)} {place}: {human} {value}")
    if carrier == "ticket":
        return carrier, (f"Ticket #{rng.randint(10000, 99999)} ({place} field office) - status: open\n"
                         f"Reported by: {rng.choice(ROLES)}\n\n{human}: {value}\nPlease check and close.")
    if carrier == "pdf":
        return carrier, (f"--- page {rng.randint(1, 6)} (extracted) ---\nFARMER SUPPLY AGREEMENT - {place.upper()} "
                         f"UNION\n{human} ........ {value}\nSigned at {place} on {rng.randint(1, 28)}/"
                         f"{rng.randint(1, 12)}/2025")
    if carrier == "xml":
        tag = "".join(c if c.isalnum() or c == "_" else "_" for c in field) or "value"
        return carrier, (f'<data id="farmer_registration" version="2025{rng.randint(1, 12):02d}01">'
                         f"<site>{place}</site><{tag}>{xml_escape(value)}</{tag}>"
                         f"<meta><instanceID>uuid:{uuid.UUID(int=rng.getrandbits(128), version=4)}"
                         f"</instanceID></meta></data>")
    if carrier == "csv":
        row_value = f'"{value}"' if ("," in value or '"' in value) else value
        return carrier, (f"member_no,site,{field},bags_kg\nCOOP-{rng.randint(1000, 9999)},{place},{row_value},"
                         f"{rng.randint(2, 40) * 50}\n")
    if carrier == "sms":
        return carrier, (f"POST /sms/callback from=40{rng.randint(100, 999)}&to=21{rng.randint(100, 999)}"
                         f"&linkId={pick(rng, HEX, 8)}&text={human} {value}&date={ts(rng)}")
    if carrier == "ussd":
        return carrier, (f"{ts(rng)} USSD sessionId=ATUid_{pick(rng, HEX, 32)} serviceCode=*384*{rng.randint(10, 99)}#"
                         f" text=1*2 response=\"END {human}: {value}\"")
    # reply
    return "reply", (f"Done. I updated the {place} record; {human}: {value}. Let me know if the cooperative "
                     "needs anything else.")


def as_json(rng: random.Random, field: str, human: str, value: str, carriers: tuple[str, ...] = ()
            ) -> tuple[str, str]:
    """(carrier, JSON text) whose string holds `value`, escaped as JSON escapes it."""
    carrier = rng.choice(carriers or ("kobo", "dhis2", "commcare", "callback", "tool", "notebook"))
    place = rng.choice(PLACES)
    if carrier == "kobo":
        doc: object = {"_id": rng.randint(10 ** 8, 10 ** 9), "formhub/uuid": pick(rng, HEX, 32),
                       "group_farmer/site": place, f"group_farmer/{field}": value,
                       "_submission_time": ts(rng)[:-1]}
    elif carrier == "dhis2":
        doc = {"trackedEntityType": pick(rng, B62[10:], 1) + pick(rng, B62, 10), "orgUnit": pick(rng, B62[10:], 11),
               "attributes": [{"attribute": pick(rng, B62[10:], 11), "displayName": human, "value": value}]}
    elif carrier == "commcare":
        doc = {"form": {"@name": "Farmer follow-up", "site": place, field: value,
                        "meta": {"instanceID": str(uuid.UUID(int=rng.getrandbits(128), version=4))}},
               "app_id": pick(rng, HEX, 32)}
    elif carrier == "callback":
        merchant = f"{rng.randint(1000, 99999)}-{rng.randint(10 ** 7, 10 ** 8)}-1"
        doc = {"Body": {"stkCallback": {"MerchantRequestID": merchant, "ResultCode": 0, "note": f"{human}: {value}"}}}
    elif carrier == "tool":
        doc = {"tool": "read_config", "ok": True, "output": f"{field}={value}\nregion={place.lower()}"}
    else:
        doc = {"cell_type": "code", "execution_count": rng.randint(1, 40), "metadata": {},
               "source": ["import pandas as pd\n", f"{field.lower().replace(' ', '_')} = \"{value}\"\n"]}
    return carrier, json.dumps(doc, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 2]))


# ---- phones ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    cc: str
    trunk: str
    prefixes: tuple[str, ...]
    length: int  # national significant number length
    groups: tuple[int, ...]  # grouping of the national significant number


PLANS: dict[str, Plan] = {
    "phone_ng": Plan("234", "0", ("803", "806", "703", "706", "813", "816", "810", "814", "903", "906", "805", "807",
                                  "705", "815", "811", "905", "802", "808", "708", "812", "701", "902", "907", "901",
                                  "809", "817", "818", "909", "908"), 10, (3, 3, 4)),
    "phone_gh": Plan("233", "0", ("24", "54", "55", "59", "20", "50", "27", "57", "26", "56"), 9, (2, 3, 4)),
    "phone_ke": Plan("254", "0", ("710", "711", "712", "713", "714", "715", "716", "717", "718", "719", "720", "721",
                                  "722", "723", "724", "725", "726", "727", "728", "729", "110", "111", "112", "113",
                                  "114", "115", "733", "734", "735", "736", "737", "738", "739", "740", "741", "742",
                                  "743", "745", "746", "748", "757", "758", "759", "768", "769", "790", "791", "792",
                                  "793", "794", "795", "796", "797", "798", "799"), 9, (3, 3, 3)),
    "phone_ug": Plan("256", "0", ("772", "774", "776", "777", "778", "782", "783", "784", "760", "761", "701", "702",
                                  "703", "704", "750", "751", "752", "753", "755", "756", "740", "741"), 9, (3, 3, 3)),
    "phone_tz": Plan("255", "0", ("754", "755", "756", "757", "767", "768", "713", "714", "715", "716", "652", "653",
                                  "655", "784", "785", "786", "787", "683", "684", "685", "621", "622", "773",
                                  "774"), 9, (3, 3, 3)),
    "phone_rw": Plan("250", "0", ("788", "789", "780", "781", "782", "783", "784", "785", "786", "787", "790", "791",
                                  "792", "793", "794", "795", "796", "722", "723", "728", "729", "730", "731", "732",
                                  "733", "734", "735", "736", "737", "738", "739"), 9, (3, 3, 3)),
    "phone_et": Plan("251", "0", tuple(f"9{n}" for n in range(11, 100) if n % 10) + ("700", "701", "702", "703", "704",
                                                                                     "707", "708", "709"),
                     9, (3, 3, 3)),
    "phone_za": Plan("27", "0", ("60", "61", "62", "63", "64", "65", "66", "67", "68", "71", "72", "73", "74", "76",
                                 "78", "79", "81", "82", "83", "84"), 9, (2, 3, 4)),
    "phone_zm": Plan("260", "0", ("95", "96", "97", "75", "76", "77"), 9, (3, 3, 3)),
    "phone_sn": Plan("221", "", ("77", "78", "76", "70", "75"), 9, (2, 3, 2, 2)),
    "phone_ci": Plan("225", "", ("07", "05", "01"), 10, (2, 2, 2, 2, 2)),
    "phone_cm": Plan("237", "", ("67", "68", "650", "651", "652", "653", "654", "655", "656", "657", "658", "659",
                                 "69", "66", "62"), 9, (3, 2, 2, 2)),
    "phone_in": Plan("91", "0", ("98", "97", "96", "95", "94", "93", "91", "90", "89", "88", "87", "86", "85", "81",
                                 "80", "79", "78", "77", "76", "75", "74", "73", "72", "70", "63", "62"),
                     10, (5, 5)),
    "phone_uk": Plan("44", "0", ("71", "73", "74", "75", "77", "78", "79", "20", "161", "121", "113", "131"), 10,
                     (4, 6)),
    "phone_fr": Plan("33", "0", ("6", "7", "1", "4", "5"), 9, (1, 2, 2, 2, 2)),
    "phone_de": Plan("49", "0", ("151", "152", "157", "160", "162", "170", "171", "172", "175", "176", "177", "178",
                                 "30", "40", "89", "221", "69"), 10, (3, 7)),
}

PHONE_WORDS: dict[str, list[str]] = {
    "phone_ng": ["phone number", "call me on", "my number na", "lambar waya", "nọmba fóònù", "nọmba ekwentị",
                 "GSM"],
    "phone_gh": ["phone", "mobile money number", "call", "me telefon nɔma ne", "contact number"],
    "phone_ke": ["namba ya simu", "simu", "phone", "M-Pesa number", "piga simu"],
    "phone_ug": ["essimu", "ennamba y'essimu", "phone", "MoMo number", "call"],
    "phone_tz": ["namba ya simu", "simu", "M-Pesa namba", "phone"],
    "phone_rw": ["numero ya telefone", "telefone", "MoMo", "phone"],
    "phone_et": ["ስልክ ቁጥር", "ስልክ", "phone", "telebirr number"],
    "phone_za": ["cell", "inombolo yocingo", "inombolo yefowuni", "selfoonnommer", "phone"],
    "phone_zm": ["phone", "cell number", "Airtel Money number", "call"],
    "phone_sn": ["numéro de téléphone", "tél.", "nimero telefon", "Wave", "portable"],
    "phone_ci": ["numéro de téléphone", "tél.", "portable", "Orange Money", "joignable au"],
    "phone_cm": ["numéro de téléphone", "tél.", "MoMo", "portable", "phone"],
    "phone_in": ["phone", "mobile", "WhatsApp", "contact"],
    "phone_uk": ["phone", "mobile", "tel", "call"],
    "phone_fr": ["téléphone", "portable", "tél.", "joignable au"],
    "phone_de": ["Telefon", "Handy", "Tel.", "Mobil"],
    "phone_us_ca": ["phone", "cell", "tel", "call"],
}

NANP_AREAS = ("212", "202", "312", "415", "617", "646", "713", "404", "303", "206", "416", "604", "514", "613",
              "403", "503", "612", "919", "301", "571")


def phone_value(rng: random.Random, kind: str) -> tuple[str, str]:
    """(style, number as written)."""
    if kind == "phone_us_ca":
        area, exch, line = rng.choice(NANP_AREAS), str(rng.randint(2, 9)) + digits(rng, 2), digits(rng, 4)
        if exch[1:] == "11":
            exch = exch[0] + "21"
        style = rng.choice(["paren", "dashed", "dotted", "intl", "e164"])
        return style, {"paren": f"({area}) {exch}-{line}", "dashed": f"{area}-{exch}-{line}",
                       "dotted": f"{area}.{exch}.{line}", "intl": f"+1 {area} {exch} {line}",
                       "e164": f"+1{area}{exch}{line}"}[style]
    plan = PLANS[kind]
    prefix = rng.choice(plan.prefixes)
    length = plan.length
    if kind == "phone_de" and prefix in ("151", "152", "157", "160", "176"):
        length = 11  # 0151, 0152, 0157, 0160 and 0176 numbers carry eight subscriber digits
    nsn = prefix + digits(rng, length - len(prefix))
    if kind == "phone_uk" and not prefix.startswith("7"):
        groups = (2, 4, 4) if prefix == "20" else (3, 3, 4)
    elif kind == "phone_de":
        groups = (len(prefix), length - len(prefix))
    elif kind == "phone_ke" and prefix.startswith("1"):
        groups = (3, 3, 3)
    else:
        groups = plan.groups
    parts, at = [], 0
    for g in groups:
        parts.append(nsn[at:at + g])
        at += g
    styles = ["intl", "intl_compact", "national", "national_compact", "msisdn", "dashed"]
    if not plan.trunk:
        styles = ["intl", "intl_compact", "national", "national_compact", "msisdn", "dotted"]
    style = rng.choice(styles)
    if style == "intl":
        return style, f"+{plan.cc} " + " ".join(parts)
    if style == "intl_compact":
        return style, f"+{plan.cc}{nsn}"
    if style == "msisdn":
        return style, f"{plan.cc}{nsn}"
    if style == "national":
        first = plan.trunk + parts[0]
        return style, " ".join([first] + parts[1:])
    if style == "dashed":
        return style, plan.trunk + "-".join(parts)
    if style == "dotted":
        return style, ".".join(parts)
    return style, plan.trunk + nsn


PHONE_SENTENCES = {
    "phone_ng": ["Abeg call me for this {w}: {v}", "{w} {v} - Kano aggregation point", "Oga, {w} {v}",
                 "Farmer's {w}: {v}"],
    "phone_ke": ["Tafadhali {w} {v} kabla ya saa tisa", "Mkulima {w}: {v}", "{w}: {v} (Eldoret depot)"],
    "phone_tz": ["Mkulima {w}: {v}", "Tafadhali wasiliana kwa {w} {v}"],
    "phone_ug": ["{w}: {v} (Mbale coffee group)", "Yogera ku {w} {v}"],
    "phone_rw": ["{w}: {v}", "Hamagara kuri {w} {v}"],
    "phone_et": ["የገበሬው {w}: {v}", "{w} {v}"],
    "phone_za": ["{w}: {v}", "Tshela umlimi ku-{w} {v}", "Skakel asseblief {w} {v}"],
    "phone_sn": ["{w} : {v}", "Woolal ko ci {w} {v}"],
    "phone_ci": ["{w} : {v}", "Le producteur est {w} {v}"],
    "phone_cm": ["{w} : {v}", "Contactez le délégué, {w} {v}"],
    "phone_fr": ["{w} : {v}", "Le référent est {w} {v}"],
    "phone_de": ["{w}: {v}", "Bitte zurückrufen, {w} {v}"],
}


def gen_phone(rng: random.Random, kind: str, i: int) -> tuple[str, str, str, bool]:
    style, value = phone_value(rng, kind)
    if i % 17 == 5:
        place = rng.choice(PLACES)
        return f"bare/{style}", value, f"{place} collection point | {value} | {rng.randint(6, 18)}:00", False
    word = rng.choice(PHONE_WORDS[kind])
    if i % 3 == 0:
        carrier, text = as_json(rng, "phone_number", word, value)
        return f"{carrier}/{style}", value, text, True
    sentence = rng.choice(PHONE_SENTENCES.get(kind, ["{w}: {v}", "Please {w} {v} about the delivery"]))
    carrier, text = plain(rng, "phone", word, value)
    text = text.replace(f"{word}: {value}", sentence.format(w=word, v=value), 1)
    return f"{carrier}/{style}", value, text, False


# ---- personal values --------------------------------------------------------------------------------------------

EMAIL_DOMAINS = ["gmail.com", "yahoo.com", "outlook.com", "kilimo-coop.co.ke", "agroaccess.com.ng", "cocoaunion.com.gh",
                 "shambahub.africa", "coopagri.sn", "santecommunautaire.ci", "ubuhinzi.rw", "farmhealth.org.za",
                 "mbeyafarmers.or.tz"]
IDN_EMAILS = ["coopérative", "agriculteurs-bouaké", "santé-daloa", "kouassi.koné", "sébastien.fotso"]


def fold(text: str) -> str:
    return "".join(c for c in text.lower().replace(" ", "") if c.isascii() and c.isalnum())


def gen_email(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = rng.choice([f"{fold(first)}.{fold(last)}", f"{fold(first)}{rng.randint(1, 99)}", f"{fold(first)[0]}"
                        f"{fold(last)}", f"{fold(last)}_{fold(first)}"])
    style = rng.choice(["plain", "plain", "upper", "idn", "urlenc", "plus"])
    domain = rng.choice(EMAIL_DOMAINS)
    value = f"{local}@{domain}"
    if style == "upper":
        value = value.upper()
    elif style == "idn":
        value = rng.choice([f"{rng.choice(IDN_EMAILS)}@coopérative-agricole.ci", f"{local}@récoltes.sn",
                            f"{rng.choice(IDN_EMAILS)}@{domain}"])
    elif style == "plus":
        value = f"{local}+kobo@{domain}"
    elif style == "urlenc":
        value = f"{local}%40{domain}"
        text = (f"{ts(rng)} GET /api/v1/farmers?email={value}&site={rng.choice(PLACES)} 200 "
                f"{rng.randint(3, 400)}ms")
        return f"log/{style}", value, text, False
    label = rng.choice(["email", "barua pepe", "adresse e-mail", "imeyili", "i-imeyile", "e-posadres", "courriel",
                        "ኢሜይል"])
    if i % 3 == 0:
        carrier, text = as_json(rng, "email", label, value)
        if style == "plain" and rng.random() < 0.5:
            text = text.replace("@", "\\u0040")
            style = "json_escaped"
        return f"{carrier}/{style}", value, text, True
    carrier, text = plain(rng, "email", label, value)
    return f"{carrier}/{style}", value, text, False


CARD_PREFIXES = [("visa", "4", 16), ("mastercard", "5", 16), ("mastercard2", "2", 16), ("amex", "3", 15),
                 ("verve", "5061", 19), ("verve16", "6500", 16)]


def card_number(rng: random.Random) -> str:
    brand, head, n = rng.choice(CARD_PREFIXES)
    if brand == "mastercard":
        head = str(rng.randint(51, 55))
    elif brand == "mastercard2":
        head = str(rng.randint(2221, 2720))
    elif brand == "amex":
        head = rng.choice(["34", "37"])
    elif brand == "verve":
        head = "5061" + str(rng.randint(0, 9))
        n = rng.choice([16, 19])
    partial = head + digits(rng, n - len(head) - 1)
    return partial + luhn_digit(partial)


def gen_card(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    number = card_number(rng)
    sep = rng.choice(["-", " ", ".", "_", ""])
    value = group_card(number, sep) if len(number) <= 16 else (group(number, 4, sep) if sep else number)
    style = {"-": "dashed", " ": "spaced", ".": "dotted", "_": "underscore", "": "compact"}[sep]
    label = rng.choice(["card number", "numéro de carte", "namba ya kadi", "card no", "kaartnommer", "PAN"])
    if i % 3 == 0:
        carrier, text = as_json(rng, "card_number", label, value)
        return f"{carrier}/{style}", value, text, True
    carrier, text = plain(rng, "card_number", label, value)
    return f"{carrier}/{style}", value, text, False


def ssn_value(rng: random.Random) -> str:
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    return f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


def gen_ssn(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    value = ssn_value(rng)
    style = rng.choice(["dashed", "dashed", "spaced", "compact"])
    if style == "spaced":
        value = value.replace("-", " ")
    elif style == "compact":
        value = value.replace("-", "")
    label = rng.choice(["SSN", "Social Security number", "social security no.", "SSN (W-9)", "US SSN"])
    if i % 3 == 0:
        carrier, text = as_json(rng, "ssn", label, value, ("tool", "commcare", "kobo"))
        return f"{carrier}/{style}", value, text, True
    carrier, text = plain(rng, "ssn", label, value, ("email", "ticket", "pdf", "reply", "csv", "log"))
    return f"{carrier}/{style}", value, text, False


def fr_rib_key(bank: str, branch: str, account: str) -> str:
    """The French RIB key (numeric account): 97 - (89 bank + 15 branch + 3 account) mod 97."""
    return f"{97 - (89 * int(bank) + 15 * int(branch) + 3 * int(account)) % 97:02d}"


def iban_value(rng: random.Random) -> str:
    country = rng.choice(["DE", "FR", "GB", "NL", "BE", "CH", "MU", "SC", "MR"])
    if country == "DE":
        b = bban(rng, "8n10n")
    elif country == "FR":
        bank, branch, account = digits(rng, 5), digits(rng, 5), digits(rng, 11)
        b = bank + branch + account + fr_rib_key(bank, branch, account)
    elif country == "GB":
        b = rng.choice(["NWBK", "BARC", "LOYD", "HBUK", "MIDL"]) + digits(rng, 14)
    elif country == "NL":
        b = rng.choice(["ABNA", "INGB", "RABO", "TRIO"]) + digits(rng, 10)
    elif country == "BE":
        first = digits(rng, 10)
        check = int(first) % 97 or 97
        b = first + f"{check:02d}"
    elif country == "CH":
        b = bban(rng, "5n12c")
    elif country == "MU":
        b = rng.choice(["BOMM", "MCBL", "SBMM"]) + digits(rng, 2) + digits(rng, 2) + digits(rng, 12) + "000" + \
            rng.choice(["MUR", "USD", "EUR"])
    elif country == "SC":
        b = rng.choice(["SSCB", "BARC", "MCBL"]) + digits(rng, 2) + digits(rng, 2) + digits(rng, 16) + \
            rng.choice(["SCR", "USD", "EUR"])
    else:
        b = bban(rng, "5n5n11n2n")
    iban = country + iban_check(country, b) + b
    assert iban_ok(iban)
    return iban


def gen_iban(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    iban = iban_value(rng)
    style = rng.choice(["spaced", "compact", "lower", "spaced"])
    value = {"spaced": group(iban, 4, " "), "compact": iban, "lower": group(iban, 4, " ").lower()}[style]
    label = rng.choice(["IBAN", "compte IBAN", "bank account (IBAN)", "akaunti ya benki IBAN", "rekeningnommer"])
    if i % 3 == 0:
        carrier, text = as_json(rng, "iban", label, value, ("tool", "callback", "commcare", "notebook"))
        return f"{carrier}/{style}", value, text, True
    carrier, text = plain(rng, "iban", label, value, ("email", "pdf", "csv", "ticket", "reply", "whatsapp"))
    return f"{carrier}/{style}", value, text, False


# ---- national ids (outside the target) -------------------------------------------------------------------------

def gen_national(rng: random.Random, kind: str, i: int) -> tuple[str, str, str, bool]:
    if kind == "za_id":
        yy, mm, dd = rng.randint(40, 99) if rng.random() < 0.8 else rng.randint(0, 6), rng.randint(1, 12), \
            rng.randint(1, 28)
        partial = f"{yy:02d}{mm:02d}{dd:02d}{rng.randint(0, 9999):04d}{rng.choice('01')}8"
        value = partial + luhn_digit(partial)
        style = rng.choice(["compact", "spaced"])
        if style == "spaced":
            value = f"{value[:6]} {value[6:10]} {value[10:]}"
        labels = ["ID number", "SA ID", "inombolo kamazisi", "ID-nommer", "identity number"]
    elif kind == "kra_pin":
        value, style = "A" + digits(rng, 9) + rng.choice(string.ascii_uppercase), "shape"
        labels = ["KRA PIN", "PIN ya KRA", "tax PIN"]
    elif kind == "ng_nin":
        value, style = str(rng.randint(1, 9)) + digits(rng, 10), "shape"
        labels = ["NIN", "National Identification Number", "lambar NIN", "nọmba NIN"]
    elif kind == "gh_card":
        value, style = f"GHA-{rng.randint(1, 9)}{digits(rng, 8)}-{rng.randint(0, 9)}", "shape"
        labels = ["Ghana Card", "Ghana Card PIN", "NIA number"]
    else:
        value = f"1{rng.randint(1950, 2006)}{rng.choice('78')}{digits(rng, 7)}{rng.randint(0, 3)}{digits(rng, 2)}"
        style = rng.choice(["compact", "spaced"])
        if style == "spaced":
            value = f"{value[0]} {value[1:5]} {value[5]} {value[6:13]} {value[13]} {value[14:]}"
        labels = ["indangamuntu", "ID", "numero y'indangamuntu", "national ID"]
    label = rng.choice(labels)
    if i % 3 == 0:
        carrier, text = as_json(rng, "national_id", label, value, ("kobo", "dhis2", "commcare"))
        return f"{carrier}/{style}", value, text, True
    carrier, text = plain(rng, "national_id", label, value, ("csv", "xml", "pdf", "email", "ticket", "whatsapp"))
    return f"{carrier}/{style}", value, text, False


# ---- secrets ----------------------------------------------------------------------------------------------------

PW_WORDS = ["Mahindi", "Kakao", "Shamba", "Mvua", "Ubuhinzi", "Ndizi", "Jollof", "Cassava", "Sorgho", "Teff", "Karite",
            "Mboga", "Kahawa", "Chai", "Arachide", "Mtama"]


def password_value(rng: random.Random) -> str:
    style = rng.random()
    if style < 0.4:
        return (rng.choice(PW_WORDS) + rng.choice("!@#$%&*") + str(rng.randint(10, 9999)) +
                rng.choice(PLACES).replace(" ", "").lower()[:5])
    if style < 0.8:
        return pick(rng, string.ascii_letters + string.digits + "!#%^*-_=+", rng.randint(14, 24))
    return "-".join(rng.choice(["kahawa", "mvua", "jua", "shamba", "kuku", "mbuzi", "ndizi", "teff", "koko",
                                "ogbono", "egusi", "fonio"]) for _ in range(4)) + str(rng.randint(1, 99))


PW_FIELDS = ["DB_PASSWORD", "POSTGRES_PASSWORD", "MPESA_INITIATOR_PASSWORD", "KOBO_PASSWORD", "DHIS2_PASSWORD",
             "SMTP_PASSWORD", "smtpPassword", "odkCentralPassword", "commcarePassword", "dbPass", "ODK_ADMIN_PASS",
             "MOMO_API_PASSWORD", "openmrs_db_password", "SFTP_PASSWD"]
PW_LABELS = ["password", "mot de passe", "nenosiri", "ọrọ igbaniwọle", "kalmar sirri", "okwuntughe", "የይለፍ ቃል",
             "ijambo ry'ibanga", "ekigambo ky'ekyama", "iphasiwedi", "wagwoord", "baatu jàll", "password wey"]


def gen_password(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    value = password_value(rng)
    field = rng.choice(PW_FIELDS)
    if i % 3 == 0:
        carrier, text = as_json(rng, field, rng.choice(PW_LABELS), value, ("tool", "notebook", "commcare"))
        if carrier == "commcare" and rng.random() < 0.5:
            doc = {"username": "sync-bot", field: value, "server": "https://dhis2.example.org"}
            carrier, text = "json", json.dumps(doc)
        return f"{carrier}/{'camel' if field[0].islower() else 'upper'}", value, text, True
    mode = rng.choice(["env", "yaml", "cli", "cli_short", "prose", "prose", "url_cli"])
    if mode == "cli_short":
        value = value.replace("'", "")
        text = f"$ mysql -h db.internal -u coop_admin -p'{value}' coop_ledger < export.sql"
        return "cli/short_flag", value, text, False
    if mode == "url_cli":
        text = f"$ curl -u admin:{value} https://dhis2.{rng.choice(PLACES).lower().replace(' ', '')}.health/api/me"
        return "cli/basic_auth", value, text, False
    if mode == "prose":
        carrier, text = plain(rng, field, rng.choice(PW_LABELS), value, ("email", "whatsapp", "ticket", "reply"))
        return f"{carrier}/label", value, text, False
    carrier, text = plain(rng, field, "password", value, (mode,))
    return f"{carrier}/{'camel' if field[0].islower() else 'upper'}", value, text, False


def aws_ids(rng: random.Random) -> tuple[str, str]:
    return rng.choice(["AKIA", "ASIA"]) + pick(rng, B32, 16), pick(rng, B64, 40)


def gen_aws(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    key_id, secret = aws_ids(rng)
    if i % 3 == 0:
        doc = {"Credentials": {"AccessKeyId": key_id, "SecretAccessKey": secret, "SessionToken": pick(rng, B64, 60),
                               "Expiration": ts(rng)}} if rng.random() < 0.5 else \
            {"tool": "read_file", "path": "~/.aws/credentials",
             "output": f"[odk-backup]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\n"}
        return "tool/json", secret, json.dumps(doc, indent=rng.choice([None, 2])), True
    mode = rng.choice(["labelled", "env", "unlabelled", "unlabelled", "csv"])
    if mode == "labelled":
        return "ini/labelled", secret, (f"[kobo-media-s3]\naws_access_key_id = {key_id}\naws_secret_access_key = "
                                        f"{secret}\nregion = af-south-1\n"), False
    if mode == "env":
        return "env/labelled", secret, (f"AWS_ACCESS_KEY_ID={key_id}\nAWS_SECRET_ACCESS_KEY={secret}\n"
                                        "AWS_DEFAULT_REGION=af-south-1\n"), False
    if mode == "csv":
        return "csv/iam_export", secret, ("User name,Access key ID,Secret access key\n"
                                          f"odk-backup,{key_id},{secret}\n"), False
    carrier = rng.choice(["whatsapp", "ticket"])
    text = (f"[12/05/2025, 10:{rng.randint(10, 59)}] IT support: use {key_id} {secret} for the backup bucket"
            if carrier == "whatsapp" else
            f"Ticket #{rng.randint(10000, 99999)}: S3 upload failing on the Tamale tablet.\nKeys: {key_id} / {secret}")
    return f"{carrier}/unlabelled", secret, text, False


def webhook_value(rng: random.Random) -> tuple[str, str, str]:
    """(style, URL, secret segment)."""
    style = rng.choice(["slack", "discord", "teams", "teams_workflow", "telegram", "zapier", "make", "google_chat",
                        "mattermost"])
    if style == "slack":
        tok = pick(rng, string.ascii_letters + string.digits, 24)
        return style, f"https://hooks.slack.com/services/T{pick(rng, UHEX[:10] + B32[:26], 8)}/" \
                      f"B{pick(rng, B32[:26] + string.digits, 10)}/{tok}", tok
    if style == "discord":
        tok = pick(rng, B64URL, 68)
        return style, f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19 - 1)}/{tok}", tok
    if style == "teams":
        tok = pick(rng, HEX, 32)
        g = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(3)]
        return style, (f"https://{rng.choice(['agrifin', 'coophealth', 'kilimo'])}.webhook.office.com/webhookb2/"
                       f"{g[0]}@{g[1]}/IncomingWebhook/{tok}/{g[2]}"), tok
    if style == "teams_workflow":
        tok = pick(rng, B64URL, 43)
        return style, (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/"
                       f"{pick(rng, HEX, 32)}"
                       f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0"
                       f"&sig={tok}"), tok
    if style == "telegram":
        tok = "AA" + pick(rng, B64URL, 33)
        return style, f"https://api.telegram.org/bot{rng.randint(10 ** 9, 8 * 10 ** 9)}:{tok}/sendMessage", tok
    if style == "zapier":
        tok = pick(rng, LOWER_ALNUM, 7)
        return style, f"https://hooks.zapier.com/hooks/catch/{rng.randint(10 ** 6, 10 ** 8)}/{tok}/", tok
    if style == "make":
        tok = pick(rng, LOWER_ALNUM, 32)
        return style, f"https://hook.{rng.choice(['eu1', 'eu2', 'us1'])}.make.com/{tok}", tok
    if style == "google_chat":
        tok = pick(rng, B64URL, 43)
        return style, (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, B64URL, 7)}/messages?key="
                       f"AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={tok}"), tok
    tok = pick(rng, LOWER_ALNUM, 26)
    return style, f"https://chat.{rng.choice(['farmnet', 'coopnet', 'agrihub'])}.org/hooks/{tok}", tok


def gen_webhook(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    style, url, tok = webhook_value(rng)
    field = rng.choice(["SLACK_WEBHOOK_URL", "ALERT_WEBHOOK", "notifyUrl", "webhook_url", "CHAT_HOOK"])
    if i % 3 == 0:
        carrier, text = as_json(rng, field, "webhook", url, ("tool", "notebook"))
        return f"{carrier}/{style}", tok, text, True
    carrier, text = plain(rng, field, rng.choice(["webhook", "alert hook", "lien du webhook", "kiungo cha webhook"]),
                          url, ("env", "yaml", "log", "ticket", "email", "whatsapp"))
    return f"{carrier}/{style}", tok, text, False


def gen_whsec(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    style = rng.choice(["dashboard", "dashboard", "cli"])
    value = "whsec_" + (pick(rng, string.ascii_letters + string.digits, 32) if style == "dashboard" else
                        pick(rng, HEX, 64))
    field = rng.choice(["STRIPE_WEBHOOK_SECRET", "stripeSigningSecret", "STRIPE_ENDPOINT_SECRET", "whsec"])
    if i % 3 == 0:
        carrier, text = as_json(rng, field, "signing secret", value, ("tool", "notebook"))
        return f"{carrier}/{style}", value, text, True
    if style == "cli" and rng.random() < 0.5:
        return "cli/listen", value, ("$ stripe listen --forward-to localhost:8000/donations/webhook\n"
                                     f"> Ready! Your webhook signing secret is {value} (^C to quit)"), False
    carrier, text = plain(rng, field, "signing secret", value, ("env", "yaml", "ticket", "log", "email"))
    return f"{carrier}/{style}", value, text, False


def conn_value(rng: random.Random) -> tuple[str, str, str]:
    style = rng.choice(["postgres", "mysql", "mongodb_srv", "redis", "amqp", "sqlserver", "azure_storage",
                        "servicebus", "jdbc"])
    pw = pick(rng, string.ascii_letters + string.digits, rng.randint(12, 22))
    host = rng.choice(["db.kilimo.internal", "10.20.4.15", "coop-ledger.c8x2.af-south-1.rds.amazonaws.com",
                       "pg.agri-payments.local"])
    if style == "postgres":
        return style, f"postgresql://coop_app:{pw}@{host}:5432/coop_ledger?sslmode=require", pw
    if style == "mysql":
        return style, f"mysql://openmrs:{pw}@{host}:3306/openmrs", pw
    if style == "mongodb_srv":
        return style, (f"mongodb+srv://kobo:{pw}@cluster0.{pick(rng, LOWER_ALNUM, 5)}.mongodb.net/kobo"
                       "?retryWrites=true&w=majority"), pw
    if style == "redis":
        return style, f"redis://:{pw}@cache.ussd.internal:6379/0", pw
    if style == "amqp":
        return style, f"amqps://sms_worker:{pw}@rabbit.sms-gateway.local:5671/advisory", pw
    if style == "sqlserver":
        return style, (f"Server=tcp:claims-{pick(rng, LOWER_ALNUM, 4)}.database.windows.net,1433;Initial Catalog="
                       f"claims;User ID=claims_api;Password={pw};Encrypt=True;"), pw
    if style == "azure_storage":
        key = pick(rng, B64, 86) + "=="
        return style, (f"DefaultEndpointsProtocol=https;AccountName=agridocs{pick(rng, LOWER_ALNUM, 4)};AccountKey="
                       f"{key};EndpointSuffix=core.windows.net"), key
    if style == "servicebus":
        key = pick(rng, B64, 43) + "="
        return style, (f"Endpoint=sb://payouts-{pick(rng, LOWER_ALNUM, 4)}.servicebus.windows.net/;SharedAccessKeyName"
                       f"=RootManageSharedAccessKey;SharedAccessKey={key}"), key
    return style, f"jdbc:postgresql://{host}:5432/dhis2?user=dhis&password={pw}", pw


def gen_conn(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    style, value, secret = conn_value(rng)
    field = rng.choice(["DATABASE_URL", "connectionString", "MONGO_URI", "BROKER_URL", "conn_str", "DB_CONN"])
    if i % 3 == 0:
        carrier, text = as_json(rng, field, "connection string", value, ("tool", "notebook"))
        return f"{carrier}/{style}", secret, text, True
    carrier, text = plain(rng, field, rng.choice(["connection string", "chaîne de connexion", "DB URL"]), value,
                          ("env", "yaml", "log", "ticket", "reply"))
    return f"{carrier}/{style}", secret, text, False


LABELLED = [
    ("daraja_consumer_key", lambda r: pick(r, string.ascii_letters + string.digits, 48),
     ["Consumer Key", "consumer key", "ufunguo wa mtumiaji"]),
    ("daraja_consumer_secret", lambda r: pick(r, string.ascii_letters + string.digits, 64),
     ["Consumer Secret", "siri ya mtumiaji", "consumer secret"]),
    ("daraja_passkey", lambda r: pick(r, HEX, 64), ["Lipa na M-Pesa passkey", "Pass Key", "passkey"]),
    ("momo_subscription", lambda r: pick(r, HEX, 32), ["Primary key", "Ocp-Apim-Subscription-Key",
                                                       "clé d'abonnement MoMo"]),
    ("momo_api_key", lambda r: pick(r, HEX, 32), ["API key", "MoMo API key", "clé API"]),
    ("africastalking", lambda r: pick(r, HEX, 64), ["AT API key", "Africa's Talking API key", "API Key"]),
    ("kobo_token", lambda r: pick(r, HEX, 40), ["Kobo API token", "API token", "jeton API"]),
    ("commcare_key", lambda r: pick(r, HEX, 40), ["CommCare API key", "API key", "ufunguo wa API"]),
    ("odk_app_user", lambda r: pick(r, string.ascii_letters + string.digits + "!$", 64), ["App user token",
                                                                                        "ODK token"]),
    ("infobip", lambda r: pick(r, HEX, 32) + "-" + str(uuid.UUID(int=r.getrandbits(128), version=4)),
     ["Infobip API key", "API key", "clé API Infobip"]),
    ("orange_secret", lambda r: pick(r, string.ascii_letters + string.digits, 32), ["Client secret",
                                                                                    "secret client Orange Money"]),
]
KEY_WORDS_LANG = {"sw": "ufunguo wa siri", "fr": "clé secrète", "ha": "maɓallin sirri", "yo": "kọkọrọ aṣírí",
                  "am": "ሚስጥራዊ ቁልፍ", "rw": "urufunguzo rw'ibanga", "zu": "ukhiye oyimfihlo", "af": "geheime sleutel"}


def gen_labelled(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    style, make, labels = rng.choice(LABELLED)
    value = make(rng)
    label = rng.choice(labels + [rng.choice(list(KEY_WORDS_LANG.values()))])
    if i % 3 == 0:
        carrier, text = as_json(rng, label, label, value, ("tool", "dhis2", "notebook"))
        return f"{carrier}/{style}", value, text, True
    carrier = rng.choice(["email", "ticket", "whatsapp", "pdf", "reply", "yaml_spaced", "header"])
    if carrier == "yaml_spaced":
        return f"yaml/{style}", value, f"mpesa:\n  shortcode: 600983\n  \"{label}\": {value}\n", False
    if carrier == "header":
        return f"log/{style}", value, (f"{ts(rng)} DEBUG outbound POST https://sandbox.momodeveloper.mtn.com/collection"
                                       f"/v1_0/requesttopay headers={{'{label}': '{value}'}}"), False
    carrier, text = plain(rng, label, label, value, (carrier,))
    return f"{carrier}/{style}", value, text, False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def gen_disguised(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    base_kind = rng.choice(["password", "aws", "whsec", "conn", "labelled", "paystack"])
    if base_kind == "password":
        raw, label = password_value(rng), "password"
    elif base_kind == "aws":
        raw, label = aws_ids(rng)[1], "aws_secret_access_key"
    elif base_kind == "whsec":
        raw, label = "whsec_" + pick(rng, string.ascii_letters + string.digits, 32), "STRIPE_WEBHOOK_SECRET"
    elif base_kind == "conn":
        raw, label = pick(rng, string.ascii_letters + string.digits, 16), "db password"
    elif base_kind == "paystack":
        raw, label = "sk_live_" + pick(rng, HEX, 40), "PAYSTACK_SECRET_KEY"
    else:
        raw, label = pick(rng, HEX, 64), "Consumer Secret"
    how = rng.choice(["zero_width", "fullwidth", "urlencoded", "uescape_log", "uescape_json"])
    if how == "zero_width":
        chars = list(raw)
        for _ in range(rng.randint(2, 5)):
            chars.insert(rng.randint(1, len(chars) - 1), rng.choice(ZW))
        value = "".join(chars)
    elif how == "fullwidth":
        value = fullwidth(raw)
    elif how == "urlencoded":
        value = "".join(f"%{ord(c):02X}" if (not c.isalnum() or rng.random() < 0.3) else c for c in raw)
        if value == raw:
            value = "%" + f"{ord(raw[0]):02X}" + raw[1:]
    elif how == "uescape_log":
        value = "".join(f"\\u{ord(c):04x}" for c in raw)
    else:
        inner = "".join(f"\\u{ord(c):04x}" for c in raw)
        text = '{"tool": "read_secret", "name": "' + label + '", "value": "' + inner + '"}'
        assert json.loads(text)["value"] == raw
        return f"tool/{base_kind}_uescape", raw, text, True
    if how == "urlencoded" and base_kind in ("password", "conn"):
        text = f"{ts(rng)} POST /oauth/token body=grant_type=password&username=coop_admin&password={value}"
        return f"log/{base_kind}_{how}", value, text, False
    if i % 3 == 0 and how != "uescape_log":
        carrier, text = as_json(rng, label, label, value, ("tool", "notebook"))
        return f"{carrier}/{base_kind}_{how}", value, text, True
    carrier, text = plain(rng, label, label, value, ("env", "log", "ticket", "whatsapp", "email"))
    return f"{carrier}/{base_kind}_{how}", value, text, False


def gen_jwt(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    header = {"alg": "HS256", "typ": "JWT"}
    payload = {"sub": str(rng.randint(10 ** 6, 10 ** 7)), "iss": rng.choice(["https://auth.kilimo.africa",
                                                                            "momo-collection", "odk-central"]),
               "iat": 1735689600 + rng.randint(0, 10 ** 7), "role": rng.choice(["field_officer", "enumerator"])}
    signing = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + \
        b64url(json.dumps(payload, separators=(",", ":")).encode())
    key = bytes(rng.getrandbits(8) for _ in range(32))
    token = signing + "." + b64url(hmac.new(key, signing.encode(), hashlib.sha256).digest())
    if i % 3 == 0:
        doc = {"access_token": token, "token_type": "access_token", "expires_in": "3600"}
        return "callback/momo_token", token, json.dumps(doc), True
    carrier = rng.choice(["header", "cookie", "prose"])
    if carrier == "header":
        line = f"{ts(rng)} DEBUG POST /collection/v1_0/requesttopay Authorization: Bearer {token}"
        return "log/bearer", token, line, False
    if carrier == "cookie":
        return "log/cookie", token, f"Set-Cookie: auth_token={token}; Path=/; HttpOnly; Secure", False
    c, text = plain(rng, "token", rng.choice(["token", "JWT", "tokeni"]), token, ("ticket", "whatsapp", "email"))
    return f"{c}/jwt", token, text, False


def gen_oauth(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    style = rng.choice(["google", "slack", "github", "meta", "daraja"])
    if style == "google":
        value = "ya29.a0" + pick(rng, B64URL, rng.randint(150, 200))
    elif style == "slack":
        value = rng.choice(["xoxb", "xoxp"]) + f"-{rng.randint(10 ** 10, 10 ** 12)}-" \
            f"{rng.randint(10 ** 10, 10 ** 12)}-" + pick(rng, string.ascii_letters + string.digits, 24)
    elif style == "github":
        body = pick(rng, B62, 30)
        value = "gho_" + body + crc_b62(body)
    elif style == "meta":
        value = "EAA" + pick(rng, string.ascii_letters + string.digits, rng.randint(180, 220))
    else:
        value = pick(rng, string.ascii_letters + string.digits, 28)
    if i % 3 == 0:
        doc = {"access_token": value, "expires_in": "3599", "token_type": "Bearer"}
        return f"callback/{style}", value, json.dumps(doc, indent=rng.choice([None, 2])), True
    if rng.random() < 0.5:
        return f"log/{style}", value, (f"{ts(rng)} DEBUG GET https://graph.facebook.com/v19.0/me/messages "
                                       f"Authorization: Bearer {value}"), False
    c, text = plain(rng, "ACCESS_TOKEN", rng.choice(["access token", "jeton d'accès", "tokeni ya kufikia"]), value,
                    ("env", "ticket", "whatsapp", "reply"))
    return f"{c}/{style}", value, text, False


def gen_cookie(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    style = rng.choice(["django", "jsession", "php", "express", "laravel", "kobonaut"])
    if style in ("django", "kobonaut"):
        name, value = ("sessionid" if style == "django" else "kobonaut"), pick(rng, LOWER_ALNUM, 32)
    elif style == "jsession":
        name, value = "JSESSIONID", pick(rng, UHEX, 32)
    elif style == "php":
        name, value = "PHPSESSID", pick(rng, LOWER_ALNUM, 26)
    elif style == "express":
        name, value = "connect.sid", "s%3A" + pick(rng, B64URL, 32) + "." + pick(rng, B64[:62], 43)
    else:
        name = "laravel_session"
        value = b64url(json.dumps({"iv": pick(rng, B64, 24), "value": pick(rng, B64, 64),
                                   "mac": pick(rng, HEX, 64)}).encode())
    if i % 3 == 0:
        doc = {"request": {"method": "GET", "url": "https://dhis2.health-ngo.org/api/me",
                           "headers": {"Cookie": f"{name}={value}; csrftoken={pick(rng, LOWER_ALNUM, 32)}"}}}
        return f"tool/{style}", value, json.dumps(doc), True
    mode = rng.choice(["request", "response", "curl"])
    if mode == "request":
        text = f"GET /api/v2/assets/ HTTP/1.1\nHost: kf.kobotoolbox.org\nCookie: {name}={value}\nAccept: */*"
    elif mode == "response":
        text = f"HTTP/1.1 302 Found\nSet-Cookie: {name}={value}; Path=/; HttpOnly; SameSite=Lax\nLocation: /"
    else:
        text = f"$ curl -b '{name}={value}' https://commcarehq.org/a/kilimo/api/v0.5/form/"
    return f"{mode}/{style}", value, text, False


# P-256 (SEC 2, FIPS 186-4)
P256_P = 2 ** 256 - 2 ** 224 + 2 ** 192 + 2 ** 96 - 1
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
P256_A = P256_P - 3
P256_G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
          0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)


def ec_add(p1: tuple[int, int] | None, p2: tuple[int, int] | None) -> tuple[int, int] | None:
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    if p1[0] == p2[0] and (p1[1] + p2[1]) % P256_P == 0:
        return None
    if p1 == p2:
        lam = (3 * p1[0] * p1[0] + P256_A) * pow(2 * p1[1], -1, P256_P) % P256_P
    else:
        lam = (p2[1] - p1[1]) * pow(p2[0] - p1[0], -1, P256_P) % P256_P
    x = (lam * lam - p1[0] - p2[0]) % P256_P
    return x, (lam * (p1[0] - x) - p1[1]) % P256_P


def ec_mul(k: int) -> tuple[int, int]:
    out, add = None, P256_G
    while k:
        if k & 1:
            out = ec_add(out, add)
        add = ec_add(add, add)
        k >>= 1
    assert out is not None
    return out


def pem(label: str, body: bytes) -> tuple[str, str]:
    import base64
    b64 = base64.b64encode(body).decode()
    lines = "\n".join(group(b64, 64, "\n").split("\n"))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----", lines


def gen_private_key(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    style = rng.choice(["sec1", "pkcs8", "rsa", "openssh"])
    if style in ("sec1", "pkcs8"):
        d = rng.randint(1, P256_N - 1)
        x, y = ec_mul(d)
        point = b"\x04" + x.to_bytes(32, "big") + y.to_bytes(32, "big")
        oid_curve = bytes.fromhex("06082a8648ce3d030107")
        sec1 = der_seq(der_int(1), der(0x04, d.to_bytes(32, "big")), der(0xA0, oid_curve),
                       der(0xA1, der(0x03, b"\x00" + point)))
        if style == "sec1":
            block, body = pem("EC PRIVATE KEY", sec1)
        else:
            alg = der_seq(bytes.fromhex("06072a8648ce3d0201"), oid_curve)
            block, body = pem("PRIVATE KEY", der_seq(der_int(0), alg, der(0x04, sec1)))
    elif style == "rsa":
        ints = [0, rng.getrandbits(2048) | 1 << 2047 | 1, 65537, rng.getrandbits(2047) | 1 << 2046,
                rng.getrandbits(1024) | 1 << 1023 | 1, rng.getrandbits(1024) | 1 << 1023 | 1,
                rng.getrandbits(1023), rng.getrandbits(1023), rng.getrandbits(1023)]
        block, body = pem("RSA PRIVATE KEY", der_seq(*(der_int(n) for n in ints)))
    else:
        seed, public = bytes(rng.getrandbits(8) for _ in range(32)), bytes(rng.getrandbits(8) for _ in range(32))
        check = bytes(rng.getrandbits(8) for _ in range(4))
        blob = openssh_ed25519_blob(seed, public, check, b"deploy@kobo-sync")
        import base64
        b64 = base64.b64encode(blob).decode()
        body = group(b64, 70, "\n")
        block = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
    if i % 3 == 0:
        doc = {"tool": "read_file", "path": rng.choice(["/etc/odk/keys/backup.pem", "~/.ssh/id_ed25519",
                                                        "secrets/momo_signing.key"]), "content": block + "\n"}
        return f"tool/{style}", body, json.dumps(doc), True
    carrier = rng.choice(["file", "ticket", "yaml"])
    if carrier == "yaml":
        indented = block.replace("\n", "\n    ")
        return f"yaml/{style}", body.replace("\n", "\n    "), f"tls:\n  key: |\n    {indented}\n", False
    if carrier == "ticket":
        return f"ticket/{style}", body, (f"Ticket #{rng.randint(10000, 99999)}: SFTP to the warehouse server fails."
                                         f"\nHere is the key I am using:\n{block}\n"), False
    return f"file/{style}", body, f"$ cat deploy/keys/signing.pem\n{block}\n", False


def gen_totp(rng: random.Random, i: int) -> tuple[str, str, str, bool]:
    value = pick(rng, B32, rng.choice([16, 32]))
    style = rng.choice(["uri", "labelled", "spaced"])
    if style == "spaced":
        value = group(value, 4, " ").lower()
    if i % 3 == 0:
        doc = {"user": "helpdesk-bot", "mfa": {"type": "totp", "secret": value, "digits": 6, "period": 30}}
        return f"tool/{style}", value, json.dumps(doc), True
    if style == "uri":
        return "log/uri", value, (f"{ts(rng)} INFO enrol otpauth://totp/KilimoPay:field-ops?secret={value}"
                                  "&issuer=KilimoPay&algorithm=SHA1&digits=6&period=30"), False
    c, text = plain(rng, "TOTP_SECRET", rng.choice(["2FA secret", "setup key", "clé de configuration",
                                                     "ufunguo wa 2FA"]), value, ("ticket", "email", "env", "whatsapp"))
    return f"{c}/{style}", value, text, False


def api_value(rng: random.Random, kind: str) -> tuple[str, str, str]:
    """(style, value, env field)."""
    if kind == "paystack_key":
        mode = rng.choice(["live", "test"])
        return mode, f"sk_{mode}_" + pick(rng, HEX, 40), "PAYSTACK_SECRET_KEY"
    if kind == "flutterwave_key":
        mode = rng.choice(["live", "test"])
        return mode, ("FLWSECK-" if mode == "live" else "FLWSECK_TEST-") + pick(rng, HEX, 32) + "-X", "FLW_SECRET_KEY"
    if kind == "twilio_key":
        mode = rng.choice(["auth_token", "api_secret"])
        if mode == "auth_token":
            return mode, pick(rng, HEX, 32), "TWILIO_AUTH_TOKEN"
        return mode, pick(rng, string.ascii_letters + string.digits, 32), "TWILIO_API_SECRET"
    if kind == "openai_key":
        return "proj", "sk-proj-" + pick(rng, B64URL, 156), "OPENAI_API_KEY"
    if kind == "google_api_key":
        return "aiza", "AIza" + pick(rng, B64URL, 35), "GOOGLE_MAPS_API_KEY"
    if kind == "github_token":
        if rng.random() < 0.7:
            body = pick(rng, B62, 30)
            return "classic", "ghp_" + body + crc_b62(body), "GITHUB_TOKEN"
        return "fine_grained", "github_pat_11" + pick(rng, string.ascii_uppercase + string.digits, 20) + "_" + \
            pick(rng, string.ascii_letters + string.digits, 59), "GH_PAT"
    return "v3", "SG." + pick(rng, B64URL, 22) + "." + pick(rng, B64URL, 43), "SENDGRID_API_KEY"


def gen_api(rng: random.Random, kind: str, i: int) -> tuple[str, str, str, bool]:
    style, value, field = api_value(rng, kind)
    if kind == "twilio_key":
        sid = ("AC" if style == "auth_token" else "SK") + pick(rng, HEX, 32)
        if i % 3 == 0:
            doc = {"tool": "read_config", "output": {"TWILIO_ACCOUNT_SID" if sid[0] == "A" else "TWILIO_API_KEY": sid,
                                                     field: value}}
            return f"tool/{style}", value, json.dumps(doc), True
        return f"env/{style}", value, f"{'TWILIO_ACCOUNT_SID' if sid[0] == 'A' else 'TWILIO_API_KEY'}={sid}\n" \
            f"{field}={value}\nTWILIO_FROM=+1{rng.choice(NANP_AREAS)}5550{rng.randint(100, 199)}\n", False
    if i % 3 == 0:
        carrier, text = as_json(rng, field, "secret key", value, ("tool", "notebook"))
        return f"{carrier}/{style}", value, text, True
    mode = rng.choice(["env", "yaml", "header", "prose", "code"])
    if mode == "header":
        return f"log/{style}", value, (f"{ts(rng)} DEBUG POST https://api.{kind.split('_')[0]}.co/v1/transfer "
                                       f"Authorization: Bearer {value}"), False
    if mode == "code":
        return f"code/{style}", value, (f"const client = new Client({{\n  secretKey: '{value}',\n  "
                                        "timeout: 30000,\n}});"), False
    if mode == "prose":
        c, text = plain(rng, field, rng.choice(["secret key", "clé secrète", "ufunguo wa siri", "API key"]), value,
                        ("ticket", "whatsapp", "email", "reply"))
        return f"{c}/{style}", value, text, False
    c, text = plain(rng, field, "key", value, (mode,))
    return f"{c}/{style}", value, text, False


# ---- the corpus -------------------------------------------------------------------------------------------------

GENERATORS: dict[str, Callable[[random.Random, int], tuple[str, str, str, bool]]] = {
    "password": gen_password, "aws_secret": gen_aws, "webhook": gen_webhook, "stripe_whsec": gen_whsec,
    "connection_string": gen_conn, "labelled_key": gen_labelled, "disguised": gen_disguised, "email": gen_email,
    "phone_us_ca": lambda r, i: gen_phone(r, "phone_us_ca", i), "phone_uk": lambda r, i: gen_phone(r, "phone_uk", i),
    "phone_fr": lambda r, i: gen_phone(r, "phone_fr", i), "phone_de": lambda r, i: gen_phone(r, "phone_de", i),
    "phone_in": lambda r, i: gen_phone(r, "phone_in", i), "ssn": gen_ssn, "card": gen_card, "iban": gen_iban,
    "jwt": gen_jwt, "oauth_token": gen_oauth, "session_cookie": gen_cookie, "private_key": gen_private_key,
    "totp_seed": gen_totp,
}
for _kind in ("paystack_key", "flutterwave_key", "twilio_key", "openai_key", "google_api_key", "github_token",
              "sendgrid_key"):
    GENERATORS[_kind] = (lambda k: lambda r, i: gen_api(r, k, i))(_kind)
for _kind in ("phone_ng", "phone_gh", "phone_ke", "phone_ug", "phone_tz", "phone_rw", "phone_et", "phone_za",
              "phone_zm", "phone_sn", "phone_ci", "phone_cm"):
    GENERATORS[_kind] = (lambda k: lambda r, i: gen_phone(r, k, i))(_kind)
for _kind in sorted(OUTSIDE_TARGET):
    GENERATORS[_kind] = (lambda k: lambda r, i: gen_national(r, k, i))(_kind)


def generate() -> Iterator[Case]:
    """PER_KIND cases of every kind, deterministic from SEED."""
    rng = random.Random(SEED)
    for kind, gen in GENERATORS.items():
        for i in range(PER_KIND):
            form, secret, text, is_json = gen(rng, i)
            held = secret in text or (is_json and json.dumps(secret)[1:-1] in text) or \
                (is_json and secret in json.dumps(json.loads(text), ensure_ascii=False))
            assert held, (kind, form, secret, text)
            yield Case(kind, form, secret, text, is_json)


# ---- near misses ------------------------------------------------------------------------------------------------

def gs1_digit(partial: str) -> str:
    """The GS1 check digit (GTIN, GLN): weights 3 and 1 from the right, to the next multiple of ten."""
    total = sum(int(c) * (3 if i % 2 == 0 else 1) for i, c in enumerate(reversed(partial)))
    return str((10 - total % 10) % 10)


def neg_carrier(rng: random.Random, line: str, field: str, value: str) -> str:
    """A near miss in one of the cases' carriers: a log line, a CSV row, JSON, a ticket or a WhatsApp line."""
    place = rng.choice(PLACES)
    mode = rng.choice(["log", "csv", "json", "ticket", "whatsapp", "xml"])
    if mode == "log":
        return f"{ts(rng)} INFO [{rng.choice(SERVICES)}] {line}"
    if mode == "csv":
        return f"site,{field},status\n{place},{value},ok\n"
    if mode == "json":
        return json.dumps({"site": place, field: value, "note": line}, ensure_ascii=rng.random() < 0.5)
    if mode == "ticket":
        return f"Ticket #{rng.randint(10000, 99999)} ({place} field office) - status: open\n\n{line}"
    if mode == "whatsapp":
        return f"[{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2025, 09:{rng.randint(10, 59)}] " \
               f"{rng.choice(ROLES)}: {line}"
    return f'<data id="aggregation"><site>{place}</site><{field}>{xml_escape(value)}</{field}></data>'


def luhn_invalid(rng: random.Random) -> str:
    partial = rng.choice(["4", "5" + str(rng.randint(1, 5))]) + digits(rng, 14 if rng.random() < 0.5 else 13)
    partial = partial[:15]
    good = luhn_digit(partial)
    bad = str((int(good) + rng.randint(1, 9)) % 10)
    number = partial + bad
    assert not luhn_ok(number)
    return number


def bad_iban(rng: random.Random) -> str:
    iban = iban_value(rng)
    wrong = f"{(int(iban[2:4]) + rng.randint(1, 90) - 2) % 97 + 2:02d}"
    if wrong == iban[2:4]:
        wrong = f"{(int(wrong) + 1 - 2) % 97 + 2:02d}"
    out = iban[:2] + wrong + iban[4:]
    assert not iban_ok(out)
    return out


SIREN_BASES = ["55208131", "54205118", "33229449", "40348371"]  # drawn 8-digit bodies; the Luhn digit is computed


def negatives_of(rng: random.Random, sort: str) -> str:
    place = rng.choice(PLACES)
    if sort == "order_id":
        v = f"AGR-2025-{rng.randint(0, 999999):06d}"
        return neg_carrier(rng, f"input order {v} dispatched to {place} agro-dealer, 40 bags NPK", "order_id", v)
    if sort == "invoice_no":
        v = f"INV/{rng.choice(['KE', 'NG', 'GH', 'SN'])}/2025/{rng.randint(1, 99999):05d}"
        return neg_carrier(rng, f"invoice {v} paid in full, balance 0.00", "invoice_no", v)
    if sort == "voucher_batch":
        v = f"VB-{rng.randint(2024, 2025)}-{rng.choice(['MAIZE', 'SORGHUM', 'RICE'])}-{rng.randint(1, 9999):04d}"
        return neg_carrier(rng, f"voucher batch {v}: {rng.randint(100, 5000)} vouchers printed", "batch", v)
    if sort == "warehouse_receipt":
        v = f"WR/{rng.choice(['GCX', 'ECX', 'ZAMACE', 'EAGC'])}/{rng.randint(2024, 2025)}/{rng.randint(1, 999999):06d}"
        return neg_carrier(rng, f"warehouse receipt {v} issued for {rng.randint(10, 900)} t grade 2 maize",
                           "receipt_no", v)
    if sort == "lot_number":
        v = f"LOT-{rng.choice(['KE', 'UG', 'CI', 'ET'])}-{rng.randint(1, 12):02d}{rng.randint(24, 25)}-" \
            f"{rng.randint(1, 999):03d}"
        return neg_carrier(rng, f"coffee lot {v} cupped at {rng.randint(80, 89)}.{rng.randint(0, 9)}", "lot", v)
    if sort == "mobile_money_txn":
        v = rng.choice([pick(rng, string.ascii_uppercase + string.digits, 10),
                        str(rng.randint(10 ** 9, 10 ** 10 - 1)), f"T_{rng.randint(10 ** 9, 10 ** 10)}"])
        return neg_carrier(rng, f"MpesaReceiptNumber={v} ResultCode=0 Amount={rng.randint(50, 9000)}",
                           "transaction_id", v)
    if sort == "daraja_timestamp":
        v = f"2025{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(0, 23):02d}{rng.randint(0, 59):02d}" \
            f"{rng.randint(0, 59):02d}"
        return neg_carrier(rng, f"STK push Timestamp={v} BusinessShortCode=174379", "Timestamp", v)
    if sort == "request_id":
        v = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        return neg_carrier(rng, f"X-Request-ID: {v} latency={rng.randint(5, 900)}ms", "request_id", v)
    if sort == "trace_id":
        v = f"00-{pick(rng, HEX, 32)}-{pick(rng, HEX, 16)}-01"
        return neg_carrier(rng, f"traceparent: {v}", "traceparent", v)
    if sort == "digest":
        v = rng.choice(["sha256:" + pick(rng, HEX, 64), pick(rng, HEX, 40), "md5:" + pick(rng, HEX, 32)])
        return neg_carrier(rng, f"export farmers_{place.lower()}.csv checksum {v}", "checksum", v)
    if sort == "dhis2_uid":
        v = pick(rng, string.ascii_letters, 1) + pick(rng, string.ascii_letters + string.digits, 10)
        return neg_carrier(rng, f"dataElement {v} value=12 period=2025W{rng.randint(1, 52)}", "dataElement", v)
    if sort == "version":
        v = rng.choice([f"v2025.{rng.randint(1, 4)}.{rng.randint(0, 9)}",
                        f"2.{rng.randint(38, 41)}.{rng.randint(0, 6)}",
                        f"{rng.randint(1, 3)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}-rc{rng.randint(1, 4)}"])
        return neg_carrier(rng, f"ODK Collect {v} installed on tablet pool", "app_version", v)
    if sort == "date_time":
        v = rng.choice([ts(rng), f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2025",
                        str(1735689600000 + rng.randint(0, 10 ** 10))])
        return neg_carrier(rng, f"planting window opens {v}", "date", v)
    if sort == "gps":
        v = f"{rng.uniform(-30, 15):.6f} {rng.uniform(-17, 42):.6f} {rng.randint(0, 2500)}.0 {rng.randint(2, 20)}.0"
        return neg_carrier(rng, f"plot geopoint {v}", "geopoint", v)
    if sort == "measurement":
        v = f"{rng.randint(1, 90) * 50} kg, moisture {rng.randint(11, 16)}.{rng.randint(0, 9)}%, " \
            f"{rng.randint(1, 6)}.{rng.randint(0, 9)} t/ha"
        return neg_carrier(rng, f"delivery weighed: {v}", "weights", v)
    if sort == "public_business_number":
        v = rng.choice([f"toll-free 0800 {rng.randint(700, 799)} {rng.randint(100, 999)}",
                        f"USSD short code *{rng.randint(100, 999)}#", f"SMS short code {rng.randint(20000, 40999)}",
                        f"customer care short code {rng.choice(['100', '180', '234', '121'])}",
                        f"toll-free line 0800 {rng.randint(100, 999)} {rng.randint(100, 999)}"])
        return neg_carrier(rng, f"Farmers can dial the {v} (free of charge)", "helpline", v)
    if sort == "gs1_code":
        partial = rng.choice(["600", "616", "619", "603", "611"]) + digits(rng, 9)
        v = partial + gs1_digit(partial)
        return neg_carrier(rng, f"agri-input GTIN {v} (hybrid maize seed 10 kg)", "gtin", v)
    if sort == "company_siren":
        body = digits(rng, 8)
        v = body + luhn_digit(body)
        assert luhn_ok(v)
        return neg_carrier(rng, f"supplier SIREN {v} (fertiliser importer, registered in France)", "siren", v)
    if sort == "card_like_invalid":
        v = luhn_invalid(rng)
        return neg_carrier(rng, f"bag tag {v} scanned at {place} weighbridge", "bag_tag", v)
    if sort == "invalid_iban":
        v = bad_iban(rng)
        return neg_carrier(rng, f"rejected: IBAN check failed for {v} (MOD 97)", "iban_rejected", v)
    if sort == "masked":
        v = rng.choice(["****" + digits(rng, 4), f"+254 7** *** {digits(rng, 3)}", f"2547{rng.randint(10, 99)}***"
                        f"{digits(rng, 3)}", f"card ending {digits(rng, 4)}",
                        "sk_live_****************" + pick(rng, HEX, 4),
                        f"GH** **** **** {digits(rng, 4)}"])
        return neg_carrier(rng, f"payout destination {v} (masked)", "destination", v)
    if sort == "placeholder":
        v = rng.choice(["<your-consumer-secret>", "xxxxxxxxxxxxxxxx", "${MPESA_PASSKEY}", "{{ secrets.PAYSTACK_KEY }}",
                        "REPLACE_ME", "<AT_API_KEY>", "${DB_PASSWORD}", "********", "%(password)s", "<token>"])
        return neg_carrier(rng, f"set the key in the vault, config reads {v}", "secret_ref", v)
    if sort == "vendor_example":
        v = rng.choice(["AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                        "bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919",
                        "ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "4242424242424242", "4111111111111111"])
        return neg_carrier(rng, f"sandbox docs example value {v} (documentation)", "example", v)
    if sort == "publishable_key":
        v = rng.choice(["pk_live_", "pk_test_"]) + pick(rng, HEX, 40) if rng.random() < 0.5 else \
            "FLWPUBK-" + pick(rng, HEX, 32) + "-X"
        return neg_carrier(rng, f"checkout widget initialised with public key {v}", "public_key", v)
    if sort == "code_identifier":
        v = rng.choice([".farmer-card__header--active", "useFarmerRegistrationForm", "MPESA_CONSUMER_KEY",
                        "get_password_hash", "validate_iban_checksum", "PhoneNumberField", "kobo_api_token_env",
                        "handleStkCallback", "#voucher-redeem-btn", "SessionCookieMiddleware"])
        return neg_carrier(rng, f"refactor: rename {v} in the aggregation app", "symbol", v)
    if sort == "path_url":
        v = rng.choice([f"/srv/odk/forms/farmer_reg_v{rng.randint(1, 9)}.xml",
                        f"https://kf.kobotoolbox.org/api/v2/assets/{pick(rng, string.ascii_letters, 22)}/data/",
                        "https://sandbox.safaricom.co.ke/mpesa/stkpush/v1/processrequest",
                        f"s3://agri-backups/{place.lower().replace(' ', '-')}/2025/", "C:\\Users\\Public\\exports\\",
                        "https://play.dhis2.org/40/api/trackedEntityInstances.json"])
        return neg_carrier(rng, f"fetched {v} ok", "resource", v)
    v = "ATUid_" + pick(rng, HEX, 32)
    return neg_carrier(rng, f"USSD sessionId={v} serviceCode=*384*{rng.randint(10, 99)}# text=1*3", "sessionId", v)


NEGATIVE_SORTS = ("order_id", "invoice_no", "voucher_batch", "warehouse_receipt", "lot_number", "mobile_money_txn",
                  "daraja_timestamp", "request_id", "trace_id", "digest", "dhis2_uid", "version", "date_time", "gps",
                  "measurement", "public_business_number", "gs1_code", "company_siren", "card_like_invalid",
                  "invalid_iban", "masked", "placeholder", "vendor_example", "publishable_key", "code_identifier",
                  "path_url", "ussd_session")


def generate_negatives() -> Iterator[tuple[str, str]]:
    """(sort, text) near misses: 27 sorts of 26, none holding a secret or a person's data."""
    rng = random.Random(SEED * 1000 + 1)
    for sort in NEGATIVE_SORTS:
        for _ in range(26):
            yield sort, negatives_of(rng, sort)
