"""The seventeenth redaction corpus: people's documents in work and civic life, as text extracted from them.

Written blind to the rules and to the other corpora, from the kinds' public formats. Carriers: CVs and resumes as
PDF/DOCX text (two-column reading order mixed up, page headers and footers, hyphenation, icons before contact
lines), applicant-tracking exports (Greenhouse, Lever, Workday, SAP SuccessFactors CSV/JSON), Moodle/Canvas exports,
transcripts and enrolment forms, REDCap exports and lab notebooks, contracts' party blocks, court captions and
signature blocks, Concordance DAT load files (þ quote, ¶ newline, ASCII 20 separator) and Relativity metadata, lease
applications, bills of lading, customs declarations, airway bills, freight invoices, utility and telecom bills,
hotel PMS exports and registration cards, event ticketing and NGO donor CRMs, forwarded e-mail chains, scanned
forms' OCR, onboarding letters and integration set-up documents; labels in 30-odd languages.

Formats and their sources:
- password, labelled_key: random strings after the labels real config files and letters use (Moodle config.php,
  REDCap database.php, Spring properties, MySQL/Postgres/Redis env names, CLI `--password`/`-p`).
- aws_secret: AWS IAM access keys (AWS docs "Managing access keys"): AKIA/ASIA + 16 of A-Z2-7, secret 40 base64.
- webhook: Slack incoming webhooks (api.slack.com/messaging/webhooks), Discord (discord.com/developers/docs,
  Webhook), Teams/Office 365 connectors, Power Automate/Logic Apps `sig=` (SAS) URLs, Zapier catch hooks, Google
  Chat `key=`/`token=`, Mattermost `/hooks/<26>`. The secret is the token-bearing path or query value only.
- stripe_whsec: Stripe webhook signing secrets (`whsec_`, docs.stripe.com/webhooks/signatures); stripe_secret
  `sk_live_`/`rk_live_` (docs.stripe.com/keys).
- connection_string: Azure Storage (`AccountKey=` 64 bytes base64), Service Bus `SharedAccessKey=`, ADO.NET,
  JDBC (SQL Server, PostgreSQL, MySQL), ODBC `Pwd=`, RFC 3986 URI userinfo. The secret is the password or key.
- disguised: provider keys (GitHub, Stripe, Slack, AWS, Google, SendGrid) with U+200B/C/D, U+2060, U+FEFF, bidi
  controls U+202A-E/U+2066-9, U+00AD soft hyphens or full-width forms (U+FF01-FF5E) inside, as PDF text holds them.
- email: RFC 5322 addresses, RFC 6531 internationalised ones, `%40` (RFC 3986), `\\u0040` (RFC 8259), `&#64;`
  (HTML), `mailto:` (RFC 6068).
- phones: ITU-T E.164 and each country's national plan (NANP; Ofcom; ARCEP; BNetzA; TRAI/DoT; CNMC; AGCOM; ACM;
  UKE; Anatel; ACMA; MIC Japan; BTK; ANCOM; MSIT Korea), always with a context word in the text's language.
- ssn: SSA rules (area 001-899 but 666, group 01-99, serial 0001-9999). card: ISO/IEC 7812 IIN ranges and Luhn.
  iban: ISO 13616 and the SWIFT IBAN registry's BBAN structures, MOD 97-10.
- private_key: PEM (RFC 7468) PKCS#8 and PKCS#1, OpenSSH, and inside Google Cloud service-account JSON.
  jwt: RFC 7519/7515. auth_header: RFC 7617 Basic, RFC 6750 Bearer, RFC 7616 Digest `response=`, AWS SigV4
  `Signature=`. session_cookie: MoodleSession, canvas_session, JSESSIONID, PHPSESSID, ASP.NET_SessionId, connect.sid.
- shippo_token `shippo_live_`/`shippo_test_` + 40 hex (goshippo.com docs, Authentication); sendgrid_key `SG.` 22.43
  (SendGrid API keys docs); google_api_key `AIza` + 35 (Google Cloud API keys); github_token (GitHub's 2021 token
  format, CRC32); share_link: Dropbox `rlkey=` and Box `/s/<32>` shared links, the key only.
- ids outside the target: es_dni (Spanish DNI/NIE, mod 23 letter), br_cpf (Receita Federal, two mod 11 digits),
  pl_pesel (weights 1-3-7-9), nl_bsn (11-proof), passport_mrz (ICAO Doc 9303 TD3 line 2 with its check digits).
Published test card numbers (4242 4242 4242 4242, 4111 1111 1111 1111, ...) are public documentation values, no
person's card and no secret: by that judgement they are near misses (`test_card`), not cards.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

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
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

PER_KIND = 100
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "pl_pesel", "nl_bsn", "passport_mrz"})
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
LOWER = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class Case:
    """One planted value: `secret` must not survive redaction of `carried`."""

    kind: str
    secret: str
    text: str
    form: str
    envelope: str = ""

    @property
    def is_json(self) -> bool:
        """Whether `carried` is a JSON document (the text itself, or the text inside an envelope)."""
        return bool(self.envelope)

    @property
    def carried(self) -> str:
        """The text as a trace holds it: alone, or as a string field of an ATS/LMS/e-discovery JSON record."""
        if self.envelope in ("", "native"):
            return self.text
        return ENVELOPES[self.envelope](self.text)


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


ENVELOPES: dict[str, Callable[[str], str]] = {
    "relativity": lambda t: _dump({"ArtifactID": 1048213, "Control Number": "KLM0004812", "Custodian": "HR Shared",
                                   "Extracted Text": t}),
    "greenhouse_note": lambda t: _dump({"id": 38201144, "created_at": "2024-03-11T09:14:00Z",
                                        "user": {"id": 4410, "name": "Recruiting"}, "body": t,
                                        "visibility": "private"}),
    "canvas_comment": lambda t: _dump({"id": 77120, "assignment_id": 5512, "submission_comments": [
        {"author_name": "Teaching Assistant", "comment": t}]}),
    "redcap_api": lambda t: _dump([{"record_id": "1042", "redcap_event_name": "baseline_arm_1",
                                    "notes_free_text": t}]),
    "successfactors": lambda t: _dump({"d": {"results": [{"__metadata": {"type": "SFOData.Candidate"},
                                                          "candidateId": "48812", "comments": t}]}}),
    "donor_crm": lambda t: _dump({"constituent_id": "C-20931", "interaction": {"type": "Email", "notes": t}}),
    "pms_remarks": lambda t: _dump({"reservation": {"confirmation": "H7K2Q9", "status": "DUE_IN", "remarks": t}}),
    "ocr_page": lambda t: _dump({"page": 2, "engine": "tesseract-5.3", "confidence": 0.87, "text": t}),
}
ENV_ORDER = list(ENVELOPES)

# ---- fillers -------------------------------------------------------------------------------------------------

NAMES = ["Priya Raghunathan", "Jonas Weißmüller", "Aoife Ní Bhriain", "Mateus Carvalho", "Léa Dubois-Martin",
         "Tomasz Wiśniewski", "Kateřina Dvořáková", "Andrei Popescu", "Zsófia Kovács", "Eleni Papadopoulou",
         "Emre Yıldız", "Olena Kovalenko", "Dmitri Sokolov", "Layla Haddad", "Noa Ben-David", "Arash Rezaei",
         "Ayesha Siddiqui", "Rahul Verma", "Sourav Banerjee", "Karthik Subramanian", "Yuki Tanaka", "Min-jun Park",
         "Wei Zhang", "Nguyen Thi Lan", "Somchai Wongsakul", "Siti Rahmawati", "Nurul Aisyah", "Maria Santos",
         "Amina Wanjiru", "Selam Tesfaye", "Emily Carter", "Oliver Hughes", "Chloé Tremblay", "Sven de Vries"]
COMPANIES = ["Northwind Logistics GmbH", "Acme Freight Ltd", "Lumen Realty LLC", "Universidad del Valle",
             "Hôtel Belvédère SA", "Kestrel Law LLP", "Sunrise Telecom Pvt Ltd", "Stichting Open Hart",
             "Orbis Research Institute", "Tasman Property Group", "Vistula Energia Sp. z o.o.", "Anadolu Kargo A.Ş."]
DOMAINS = ["northwind-logistics.de", "acmefreight.co.uk", "lumenrealty.com", "univalle.edu.co", "belvedere.fr",
           "kestrellaw.com", "sunrisetel.in", "openhart.nl", "orbis-research.org", "tasmanproperty.com.au",
           "vistula-energia.pl", "anadolukargo.com.tr", "gmail.com", "outlook.com", "yahoo.co.jp", "mail.ru"]
CITIES = ["Leeds", "Pune", "Lyon", "Köln", "Toronto", "Sevilla", "Porto Alegre", "Kraków", "Brno", "Cluj-Napoca",
          "Szeged", "Thessaloniki", "İzmir", "Kyiv", "Osaka", "Busan", "Hanoi", "Chiang Mai", "Bandung", "Nairobi"]


def ascii_slug(name: str) -> str:
    """A mailbox-safe lower-case slug of a name (first.last)."""
    table = str.maketrans("áàâäãåçéèêëíìîïñóòôöõøúùûüýßłśźżčřšžěůőűăşţıİ",
                          "aaaaaaceeeeiiiinoooooouuuuyslszzcrszeuouastiI")
    parts = name.lower().translate(table).replace("-", " ").replace("'", "").split()
    return ".".join("".join(c for c in p if c.isascii() and c.isalnum()) for p in (parts[0], parts[-1]))


def fill(rng: random.Random, tpl: str, v: str) -> str:
    """`tpl` with `{v}` the value and `{name}`, `{company}`, `{city}`, `{mail}`, `{n}` drawn fillers."""
    name = rng.choice(NAMES)
    out = tpl.replace("{name}", name).replace("{company}", rng.choice(COMPANIES))
    out = out.replace("{city}", rng.choice(CITIES)).replace("{n}", str(rng.randint(1000, 99999)))
    out = out.replace("{mail}", f"{ascii_slug(name)}@{rng.choice(DOMAINS[:12])}")
    return out.replace("{v}", v)


T = tuple[str, str, bool]
"""A carrier: (form head, template, whether the template is itself a JSON document)."""


# ---- values: the kinds ---------------------------------------------------------------------------------

def password(rng: random.Random) -> tuple[str, str]:
    """A temporary or service password: random, a passphrase, or a word with digits and symbols."""
    style = rng.choice(["random", "random", "phrase", "word"])
    if style == "random":
        alpha = string.ascii_letters + string.digits + "!#%*-_.@?+="
        return pick(rng, alpha, rng.randint(10, 20)), style
    if style == "phrase":
        words = ["Harbor", "violet", "Tundra", "mango", "Quartz", "ember", "Saffron", "pixel", "Lantern", "oasis"]
        return "-".join(rng.sample(words, 3)) + digits(rng, 2), style
    return rng.choice(["Welkom", "Bienvenue", "Willkommen", "Onboard", "Campus"]) + digits(rng, 4) + \
        rng.choice("!#$%?") + pick(rng, string.ascii_uppercase, 2), style


def aws_secret(rng: random.Random) -> tuple[str, str]:
    """A 40-character secret access key holding at least one `/` or `+`."""
    while True:
        s = pick(rng, B64, 40)
        if "/" in s or "+" in s:
            return s, "b64"


def aws_id(rng: random.Random) -> str:
    """An access key id: AKIA (long-term) or ASIA (temporary) and 16 of A-Z2-7."""
    return rng.choice(["AKIA", "ASIA"]) + pick(rng, string.ascii_uppercase + "234567", 16)


def webhook(rng: random.Random) -> tuple[str, str]:
    """A webhook URL as `url|secret`: the secret is its token-bearing path or query value."""
    style = rng.choice(["slack", "discord", "teams", "logicapp", "zapier", "gchat", "mattermost"])
    if style == "slack":
        tok = pick(rng, string.ascii_letters + string.digits, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ', 10)}/" \
              f"B{pick(rng, '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ', 10)}/{tok}"
    elif style == "discord":
        tok = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{tok}"
    elif style == "teams":
        g = [f"{pick(rng, HEX, 8)}-{pick(rng, HEX, 4)}-{pick(rng, HEX, 4)}-{pick(rng, HEX, 4)}-{pick(rng, HEX, 12)}"
             for _ in range(3)]
        tok = pick(rng, HEX, 32)
        url = f"https://contoso.webhook.office.com/webhookb2/{g[0]}@{g[1]}/IncomingWebhook/{tok}/{g[2]}"
    elif style == "logicapp":
        tok = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}")
    elif style == "zapier":
        tok = f"{digits(rng, 7)}/{pick(rng, LOWER, 7)}"
        url = f"https://hooks.zapier.com/hooks/catch/{tok}/"
    elif style == "gchat":
        tok = pick(rng, URLSAFE, 43) + "%3D"
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSyDdI0hCZtE6vySjM"
               f"m-WEfRq3CPzqKqqsHI&token={tok}")
    else:
        tok = pick(rng, LOWER, 26)
        url = f"https://chat.{rng.choice(DOMAINS[:8])}/hooks/{tok}"
    return f"{url}|{tok}", style


def stripe_whsec(rng: random.Random) -> tuple[str, str]:
    """A Stripe endpoint signing secret: dashboard form (32 base62) or `stripe listen`'s (64 hex)."""
    if rng.random() < 0.6:
        return "whsec_" + pick(rng, string.ascii_letters + string.digits, 32), "dashboard"
    return "whsec_" + pick(rng, HEX, 64), "cli"


def connection_string(rng: random.Random) -> tuple[str, str]:
    """A connection string as `string|secret`: its password or key is the secret."""
    style = rng.choice(["azure_storage", "servicebus", "ado", "jdbc_mssql", "jdbc_pg", "odbc", "uri_pg", "uri_mongo",
                        "uri_mysql", "uri_amqp", "uri_redis", "uri_sftp"])
    pw = pick(rng, string.ascii_letters + string.digits + "!*-_.", rng.randint(12, 22))
    host = rng.choice(["sql-hr-prod.database.windows.net", "10.20.4.15", "db.ats.internal", "redcap-db.uni.local",
                       "pms-db01.hotel.lan", "crm.ngo.org"])
    user = rng.choice(["ats_sync", "hr_reader", "redcap", "moodle", "pms_app", "donorsync"])
    if style == "azure_storage":
        pw = pick(rng, B64, 86) + "=="
        s = f"DefaultEndpointsProtocol=https;AccountName=hrdocs{digits(rng, 3)};AccountKey={pw};" \
            "EndpointSuffix=core.windows.net"
    elif style == "servicebus":
        pw = pick(rng, B64, 43) + "="
        s = f"Endpoint=sb://ats-events.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;" \
            f"SharedAccessKey={pw}"
    elif style == "ado":
        s = f"Server=tcp:{host},1433;Initial Catalog=Recruiting;User ID={user};Password={pw};Encrypt=True;"
    elif style == "jdbc_mssql":
        s = f"jdbc:sqlserver://{host}:1433;databaseName=payroll;user={user};password={pw};encrypt=true"
    elif style == "jdbc_pg":
        s = f"jdbc:postgresql://{host}:5432/lms?user={user}&password={pw}&ssl=true"
    elif style == "odbc":
        s = f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=Tenants;Uid={user};Pwd={pw};"
    else:
        scheme, port = {"uri_pg": ("postgresql", 5432), "uri_mongo": ("mongodb+srv", 0), "uri_mysql": ("mysql", 3306),
                        "uri_amqp": ("amqps", 5671), "uri_redis": ("rediss", 6380), "uri_sftp": ("sftp", 22)}[style]
        hp = host if not port else f"{host}:{port}"
        u = "" if style == "uri_redis" else user
        s = f"{scheme}://{u}:{pw}@{hp}/{'' if style in ('uri_redis', 'uri_sftp') else 'hr'}"
    return f"{s}|{pw}", style


def labelled_key(rng: random.Random) -> tuple[str, str]:
    """A provider-neutral API key or token (hex, base62, or dashed groups)."""
    style = rng.choice(["b62", "hex", "dashed", "b64url"])
    if style == "b62":
        return pick(rng, string.ascii_letters + string.digits, rng.randint(32, 44)), style
    if style == "hex":
        return pick(rng, HEX, rng.choice([32, 40, 64])), style
    if style == "dashed":
        return "-".join(pick(rng, string.ascii_uppercase + string.digits, 8) for _ in range(4)), style
    return pick(rng, URLSAFE, 43), style


def provider_key(rng: random.Random) -> str:
    """A key of a known provider, to disguise."""
    which = rng.randrange(6)
    if which == 0:
        return crc_token(rng, "ghp_")
    if which == 1:
        return "sk_live_" + pick(rng, string.ascii_letters + string.digits, 24)
    if which == 2:
        return f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, string.ascii_letters + string.digits, 24)}"
    if which == 3:
        return "AKIA" + pick(rng, string.ascii_uppercase + "234567", 16)
    if which == 4:
        return "AIza" + pick(rng, URLSAFE, 35)
    return f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}"


INVISIBLE = {"zwsp": "\u200b", "zwnj": "\u200c", "zwj": "\u200d", "wj": "\u2060", "bom": "\ufeff", "shy": "\u00ad",
             "lre": "\u202a", "rlo": "\u202e", "fsi": "\u2068", "pdi": "\u2069"}


def disguised(rng: random.Random) -> tuple[str, str]:
    """A provider key with invisible characters, bidi controls, soft hyphens or full-width forms inside."""
    key = provider_key(rng)
    style = rng.choice(list(INVISIBLE) + ["fullwidth", "fullwidth_part"])
    if style == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key), style
    if style == "fullwidth_part":
        cut = len(key) // 2
        return key[:cut] + "".join(chr(ord(c) + 0xFEE0) for c in key[cut:]), style
    mark = INVISIBLE[style]
    places = sorted(rng.sample(range(3, len(key) - 2), rng.randint(1, 4)))
    out, last = [], 0
    for p in places:
        out += [key[last:p], mark]
        last = p
    return "".join(out) + key[last:], style


IDN = ["josé.garcía@correo.es", "müller.jürgen@beispiel.de", "françois.lefèvre@société.fr", "δοκιμή@παράδειγμα.gr",
       "пользователь@почта.рф", "用户@例子.中国", "山田太郎@会社.jp", "사용자@회사.kr", "अजय@उदाहरण.भारत",
       "ümit.öztürk@şirket.com.tr", "nguyễn.lan@côngty.vn", "זאב@דוגמה.ישראל"]


def email(rng: random.Random) -> tuple[str, str]:
    """An address in one of its print forms."""
    style = rng.choice(["plain", "plain", "plus", "upper", "idn", "pct40", "u0040", "html64", "plain"])
    name = rng.choice(NAMES)
    local = ascii_slug(name) if rng.random() < 0.6 else ascii_slug(name).replace(".", "_") + digits(rng, 2)
    addr = f"{local}@{rng.choice(DOMAINS)}"
    if style == "plus":
        addr = f"{local}+{rng.choice(['jobs', 'cv', 'lease', 'uni'])}@{rng.choice(DOMAINS)}"
    elif style == "upper":
        addr = addr.upper()
    elif style == "idn":
        addr = rng.choice(IDN)
    elif style == "pct40":
        addr = addr.replace("@", "%40")
    elif style == "u0040":
        addr = addr.replace("@", "\\u0040")
    elif style == "html64":
        addr = addr.replace("@", "&#64;")
    return addr, style


def ssn(rng: random.Random) -> tuple[str, str]:
    """A US SSN under the SSA's rules, dashed, spaced or compact."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    g, s = rng.randint(1, 99), rng.randint(1, 9999)
    style = rng.choice(["dash", "dash", "space", "compact"])
    sep = {"dash": "-", "space": " ", "compact": ""}[style]
    return f"{area:03d}{sep}{g:02d}{sep}{s:04d}", style


CARD_IIN = [("visa", "4", 16), ("mc", "5", 16), ("mc2", "2", 16), ("amex", "3", 15), ("discover", "6011", 16),
            ("jcb", "35", 16), ("diners", "36", 14), ("unionpay", "62", 16)]


def card_number(rng: random.Random, brand: str) -> str:
    """A Luhn-valid number inside `brand`'s IIN range."""
    _, lead, length = next(c for c in CARD_IIN if c[0] == brand)
    if brand == "mc":
        lead = f"5{rng.randint(1, 5)}"
    elif brand == "mc2":
        lead = str(rng.randint(2221, 2720))
    elif brand == "amex":
        lead = rng.choice(["34", "37"])
    elif brand == "jcb":
        lead = str(rng.randint(3528, 3589))
    body = lead + digits(rng, length - len(lead) - 1)
    return body + luhn_digit(body)


def card(rng: random.Random) -> tuple[str, str]:
    """A card number grouped with space, `-`, `.`, `_` or nothing."""
    brand = rng.choice([c[0] for c in CARD_IIN])
    sep = rng.choice([" ", " ", "-", ".", "_", ""])
    style = {" ": "space", "-": "dash", ".": "dot", "_": "underscore", "": "compact"}[sep]
    return group_card(card_number(rng, brand), sep), f"{brand}_{style}"


IBAN_BBAN = {"DE": "8n10n", "GB": "4a6n8n", "FR": "5n5n11c2n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c", "NL": "4a10n",
             "BE": "3n7n2n", "PL": "8n16n", "PT": "4n4n11n2n", "RO": "4a16c", "HU": "3n4n1n15n1n", "CZ": "4n6n10n",
             "GR": "3n4n16c", "TR": "5n1n16c", "CH": "5n12c", "AT": "5n11n", "SA": "2n18c", "AE": "3n16n",
             "IL": "3n3n13n", "UA": "6n19c", "PK": "4a16c", "BR": "8n5n10n1a1c"}


def iban(rng: random.Random) -> tuple[str, str]:
    """An IBAN of a registry country: grouped in fours, compact, or lower case."""
    cc = rng.choice(list(IBAN_BBAN))
    b = bban(rng, IBAN_BBAN[cc])
    raw = cc + iban_check(cc, b) + b
    style = rng.choice(["grouped", "grouped", "compact", "lower"])
    text = group(raw, 4, " ") if style == "grouped" else raw if style == "compact" else group(raw.lower(), 4, " ")
    return text, f"{cc}_{style}"


# ---- phones: each country's plan, national and international ---------------------------------------------------

def _d(rng: random.Random, n: int) -> str:
    return digits(rng, n)


def _local(sub: str, barred: str = "0") -> str:
    """A geographic subscriber number as the plans allow it: never led by 0, the trunk prefix (nor by 1 under
    Ofcom's plan: `barred="01"`); a drawn barred lead digit d becomes d + 2, drawing nothing more."""
    return str(int(sub[0]) + 2) + sub[1:] if sub[0] in barred else sub


def phone_us_ca(rng: random.Random) -> tuple[str, str]:
    """NANP: NPA-NXX-XXXX of US and Canadian area codes, 555 and N11 left out."""
    npa = rng.choice(["212", "415", "617", "312", "206", "416", "604", "514", "403", "713", "305", "202", "512", "613"])
    nxx = str(rng.randint(2, 9)) + _d(rng, 2)
    while nxx[1:] == "11" or nxx == "555":
        nxx = str(rng.randint(2, 9)) + _d(rng, 2)
    x = _d(rng, 4)
    forms = {"paren": f"({npa}) {nxx}-{x}", "dash": f"{npa}-{nxx}-{x}", "dot": f"{npa}.{nxx}.{x}",
             "intl_space": f"+1 {npa} {nxx} {x}", "intl_dash": f"+1-{npa}-{nxx}-{x}",
             "one_paren": f"1 ({npa}) {nxx}-{x}",
             "compact": f"{npa}{nxx}{x}", "intl_compact": f"+1{npa}{nxx}{x}"}
    style = rng.choice(list(forms))
    return forms[style], style


def phone_uk(rng: random.Random) -> tuple[str, str]:
    """Ofcom plan: mobiles 07[45789]xx, London 020 7/8, other geographic areas; +44 with or without (0)."""
    kind = rng.choice(["mobile", "mobile", "london", "area"])
    if kind == "mobile":
        nat = f"07{rng.choice('45789')}{_d(rng, 2)} {_d(rng, 6)}"
    elif kind == "london":
        nat = f"020 {rng.choice('378')}{_d(rng, 3)} {_d(rng, 4)}"
    else:
        nat = f"0{rng.choice(['161', '121', '131', '113', '117', '141'])} {_local(_d(rng, 3), '01')} {_d(rng, 4)}"
    style = rng.choice(["national", "intl", "intl_zero", "compact", "dash"])
    if style == "intl":
        return "+44 " + nat[1:], f"{kind}_{style}"
    if style == "intl_zero":
        return "+44 (0)" + nat[1:], f"{kind}_{style}"
    if style == "compact":
        return nat.replace(" ", ""), f"{kind}_{style}"
    if style == "dash":
        return nat.replace(" ", "-", 1), f"{kind}_{style}"
    return nat, f"{kind}_{style}"


def phone_fr(rng: random.Random) -> tuple[str, str]:
    """ARCEP plan: 0[1-5] geographic, 06/07 mobile; pairs spaced, dotted, dashed or compact; +33 / 0033."""
    first = rng.choice("1234567667")
    pairs = [_d(rng, 2) for _ in range(4)]
    style = rng.choice(["space", "dot", "dash", "compact", "intl", "intl_zero", "intl_00"])
    if style in ("space", "dot", "dash", "compact"):
        sep = {"space": " ", "dot": ".", "dash": "-", "compact": ""}[style]
        return sep.join(["0" + first] + pairs), style
    if style == "intl":
        return "+33 " + " ".join([first] + pairs), style
    if style == "intl_zero":
        return "+33 (0)" + first + " " + " ".join(pairs), style
    return "0033 " + first + " " + " ".join(pairs), style


def phone_de(rng: random.Random) -> tuple[str, str]:
    """BNetzA plan: mobiles 015x/016x/017x, city codes 030/040/069/089/0221; `/`, `-`, spaces; +49 / 0049."""
    kind = rng.choice(["mobile", "mobile", "city"])
    if kind == "mobile":
        pre = rng.choice(["151", "152", "157", "160", "162", "170", "171", "172", "176", "177", "179"])
        sub = _d(rng, 8 if pre[:2] == "15" or pre in ("176", "177", "179") else 7)
    else:
        pre = rng.choice(["30", "40", "69", "89", "221", "711"])
        sub = _local(_d(rng, rng.choice([7, 8])))
    style = rng.choice(["space", "slash", "dash", "intl", "intl_zero", "intl_00", "din"])
    forms = {"space": f"0{pre} {sub}", "slash": f"0{pre}/{sub}", "dash": f"0{pre}-{sub}",
             "intl": f"+49 {pre} {sub}", "intl_zero": f"+49 (0){pre} {sub}", "intl_00": f"0049 {pre} {sub}",
             "din": f"0{pre} {sub[:4]} {sub[4:]}"}
    return forms[style], f"{kind}_{style}"


def phone_in(rng: random.Random) -> tuple[str, str]:
    """TRAI/DoT plan: 10-digit mobiles starting 6-9, metro landlines 011/022/033/044/080; +91 or 0."""
    if rng.random() < 0.65:
        m = str(rng.randint(6, 9)) + _d(rng, 9)
        style = rng.choice(["intl_split", "intl_dash", "intl_compact", "zero", "bare10", "split"])
        forms = {"intl_split": f"+91 {m[:5]} {m[5:]}", "intl_dash": f"+91-{m}", "intl_compact": f"+91{m}",
                 "zero": f"0{m[:5]} {m[5:]}", "bare10": m, "split": f"{m[:5]}-{m[5:]}"}
        return forms[style], f"mobile_{style}"
    std = rng.choice(["11", "22", "33", "44", "80", "40"])
    sub = str(rng.randint(2, 6)) + _d(rng, 7)
    style = rng.choice(["dash", "space", "intl"])
    forms = {"dash": f"0{std}-{sub}", "space": f"0{std} {sub[:4]} {sub[4:]}", "intl": f"+91 {std} {sub[:4]} {sub[4:]}"}
    return forms[style], f"landline_{style}"


def _two_forms(rng: random.Random, cc: str, national: str, intl: str, compact: bool = True) -> tuple[str, str]:
    """National form, international `+cc` form, or a compact national one."""
    style = rng.choice(["national", "intl", "compact"] if compact else ["national", "intl"])
    if style == "intl":
        return f"+{cc} {intl}", style
    if style == "compact":
        return national.replace(" ", "").replace("-", ""), style
    return national, style


def phone_es(rng: random.Random) -> tuple[str, str]:
    """CNMC plan: 9 digits, mobiles 6xx/7[1-4]x, landlines 9xx."""
    n = rng.choice(["6", "7" + str(rng.randint(1, 4)), "91", "93", "95"])
    n += _d(rng, 9 - len(n))
    nat = f"{n[:3]} {n[3:6]} {n[6:]}" if n[0] != "9" else f"{n[:2]} {n[2:5]} {n[5:7]} {n[7:]}"
    return _two_forms(rng, "34", nat, f"{n[:3]} {n[3:5]} {n[5:7]} {n[7:]}")


def phone_it(rng: random.Random) -> tuple[str, str]:
    """AGCOM plan: mobiles 3xx + 7 digits, Rome 06 / Milan 02 landlines."""
    if rng.random() < 0.6:
        n = "3" + rng.choice(["20", "28", "33", "35", "38", "40", "47", "49", "66", "93"]) + _d(rng, 7)
        return _two_forms(rng, "39", f"{n[:3]} {n[3:6]} {n[6:]}", f"{n[:3]} {n[3:]}")
    n = rng.choice(["06", "02"]) + _d(rng, 8)
    return _two_forms(rng, "39", f"{n[:2]} {n[2:6]} {n[6:]}", f"{n[:2]} {n[2:6]} {n[6:]}")


def phone_nl(rng: random.Random) -> tuple[str, str]:
    """ACM plan: mobiles 06 + 8 digits, Amsterdam 020 / Rotterdam 010 / Utrecht 030."""
    if rng.random() < 0.6:
        s = _d(rng, 8)
        return _two_forms(rng, "31", f"06-{s}", f"6 {s[:4]} {s[4:]}")
    a, s = rng.choice(["20", "10", "30"]), _local(_d(rng, 7))
    return _two_forms(rng, "31", f"0{a}-{s[:3]} {s[3:]}", f"(0){a} {s[:3]} {s[3:]}")


def phone_pl(rng: random.Random) -> tuple[str, str]:
    """UKE plan: 9 digits, mobiles 5xx-8xx, Warsaw 22 / Kraków 12 landlines."""
    if rng.random() < 0.6:
        n = str(rng.choice([50, 51, 53, 57, 60, 66, 69, 72, 78, 79, 88])) + _d(rng, 7)
        nat = f"{n[:3]} {n[3:6]} {n[6:]}" if rng.random() < 0.7 else f"{n[:3]}-{n[3:6]}-{n[6:]}"
        return _two_forms(rng, "48", nat, f"{n[:3]} {n[3:6]} {n[6:]}")
    n = rng.choice(["22", "12", "71"]) + _local(_d(rng, 7))
    return _two_forms(rng, "48", f"{n[:2]} {n[2:5]} {n[5:7]} {n[7:]}", f"{n[:2]} {n[2:5]} {n[5:7]} {n[7:]}")


def phone_br(rng: random.Random) -> tuple[str, str]:
    """Anatel plan: (DDD) 9xxxx-xxxx mobiles, (DDD) [2-5]xxx-xxxx landlines."""
    ddd = rng.choice(["11", "21", "31", "41", "51", "61", "71", "81", "85"])
    if rng.random() < 0.65:
        s = "9" + _d(rng, 8)
        sub = f"{s[:5]}-{s[5:]}"
    else:
        s = str(rng.randint(2, 5)) + _d(rng, 7)
        sub = f"{s[:4]}-{s[4:]}"
    return _two_forms(rng, "55", f"({ddd}) {sub}", f"{ddd} {sub}", compact=False)


def phone_au(rng: random.Random) -> tuple[str, str]:
    """ACMA plan: mobiles 04xx xxx xxx, landlines (0[2378]) xxxx xxxx."""
    if rng.random() < 0.6:
        s = _d(rng, 8)
        return _two_forms(rng, "61", f"04{s[:2]} {s[2:5]} {s[5:]}", f"4{s[:2]} {s[2:5]} {s[5:]}")
    a, s = rng.choice("2378"), str(rng.randint(3, 9)) + _d(rng, 7)
    return _two_forms(rng, "61", f"(0{a}) {s[:4]} {s[4:]}", f"{a} {s[:4]} {s[4:]}")


def phone_jp(rng: random.Random) -> tuple[str, str]:
    """MIC plan: mobiles 070/080/090-xxxx-xxxx, Tokyo 03 / Osaka 06 landlines."""
    if rng.random() < 0.6:
        p, s = rng.choice(["70", "80", "90"]), _d(rng, 8)
        return _two_forms(rng, "81", f"0{p}-{s[:4]}-{s[4:]}", f"{p}-{s[:4]}-{s[4:]}")
    p, s = rng.choice("36"), _local(_d(rng, 8))
    return _two_forms(rng, "81", f"0{p}-{s[:4]}-{s[4:]}", f"{p}-{s[:4]}-{s[4:]}")


def phone_tr(rng: random.Random) -> tuple[str, str]:
    """BTK plan: mobiles 05xx xxx xx xx, Istanbul 0212/0216, Ankara 0312."""
    p = rng.choice(["532", "533", "535", "542", "505", "555", "212", "216", "312"])
    s = _d(rng, 7) if p[0] == "5" else _local(_d(rng, 7))
    nat = f"0{p} {s[:3]} {s[3:5]} {s[5:]}" if p[0] == "5" else f"(0{p}) {s[:3]} {s[3:5]} {s[5:]}"
    return _two_forms(rng, "90", nat, f"{p} {s[:3]} {s[3:5]} {s[5:]}")


def phone_ro(rng: random.Random) -> tuple[str, str]:
    """ANCOM plan: mobiles 07xx xxx xxx, Bucharest 021 xxx xxxx."""
    if rng.random() < 0.65:
        p, s = "7" + rng.choice(["22", "23", "24", "40", "44", "45", "50", "55", "66", "88"]), _d(rng, 6)
        return _two_forms(rng, "40", f"0{p} {s[:3]} {s[3:]}", f"{p} {s[:3]} {s[3:]}")
    s = _local(_d(rng, 7))
    return _two_forms(rng, "40", f"021 {s[:3]} {s[3:]}", f"21 {s[:3]} {s[3:]}")


def phone_kr(rng: random.Random) -> tuple[str, str]:
    """MSIT plan: mobiles 010-xxxx-xxxx, Seoul 02-xxx(x)-xxxx, Busan 051."""
    if rng.random() < 0.65:
        s = _d(rng, 8)
        return _two_forms(rng, "82", f"010-{s[:4]}-{s[4:]}", f"10-{s[:4]}-{s[4:]}")
    a, s = rng.choice(["2", "51"]), _local(_d(rng, rng.choice([7, 8])))
    return _two_forms(rng, "82", f"0{a}-{s[:-4]}-{s[-4:]}", f"{a}-{s[:-4]}-{s[-4:]}")


PHONE_WORDS: dict[str, tuple[list[str], str]] = {
    "phone_us_ca": (["Phone", "Cell", "Tel.", "Mobile", "Tél.", "Cellulaire"],
                    "Feel free to call me at {v} after 5pm."),
    "phone_uk": (["Tel", "Mob", "Mobile", "T", "Telephone"], "Best to ring me on {v} if anything is unclear."),
    "phone_fr": (["Tél.", "Portable", "Mob.", "Téléphone", "Tél"], "Vous pouvez me joindre au {v} en journée."),
    "phone_de": (["Tel.", "Mobil", "Handy", "Telefon", "Funk"], "Sie erreichen mich telefonisch unter {v}."),
    "phone_in": (["Mob.", "Phone", "Contact No.", "फ़ोन", "Mobile No."],
                 "Please call me on {v} for the interview slot."),
    "phone_es": (["Tel.", "Móvil", "Teléfono", "Tfno.", "Celular"], "Para cualquier duda, llámame al {v}."),
    "phone_it": (["Tel.", "Cell.", "Cellulare", "Telefono", "Tel"], "Per informazioni chiamami al {v}."),
    "phone_nl": (["Tel.", "Mobiel", "Telefoon", "Tel", "Mob."], "Je kunt me bellen op {v} na 17 uur."),
    "phone_pl": (["tel.", "tel. kom.", "Telefon", "Komórka", "tel"], "W razie pytań proszę dzwonić pod numer {v}."),
    "phone_br": (["Tel.", "Celular", "Telefone", "WhatsApp", "Cel."], "Qualquer dúvida, me liga no {v}."),
    "phone_au": (["Ph", "Mob", "Mobile", "Ph.", "M"], "Give me a call on {v} whenever suits."),
    "phone_jp": (["TEL", "携帯", "電話番号", "電話", "携帯電話"], "ご不明な点はお電話（{v}）でお問い合わせください。"),
    "phone_tr": (["Tel", "Cep", "Telefon", "Cep Tel.", "GSM"], "Sorularınız için beni {v} numaralı telefondan arayın."),
    "phone_ro": (["Tel.", "Mobil", "Telefon", "Tel", "Nr. telefon"], "Pentru detalii, sunați-mă la {v}."),
    "phone_kr": (["전화", "휴대폰", "Tel", "연락처", "핸드폰"], "문의 사항은 휴대폰 {v}으로 연락 주세요."),
}
"""Per phone kind: labels in the country's language, and a sentence that calls the number."""


# ---- carriers ---------------------------------------------------------------------------------------------------

PHONE_CARRIERS: list[T] = [
    ("cv_header", "{name}\nSenior Logistics Coordinator\n☎ {L} {v}  |  ✉ {mail}  |  {city}\n\nPROFILE\nSeven years "
                  "in freight forwarding and customs brokerage.", False),
    ("cv_two_column", "EXPERIENCE                                  CONTACT\n{company}     2019 – 2023          {L}: "
                      "{v}\nShift lead, inbound                         {city}\nEDUCATION                    "
                      "                LANGUAGES", False),
    ("cv_page_footer", "{name} — Curriculum Vitae                                    Page 1 of 2\n...\nReferences "
                       "available on request.\n{name} · {L} {v} · {mail}                Page 2 of 2", False),
    ("cv_icon_bullets", "• {city}\n• {L} {v}\n• linkedin.com/in/{n}\n\nSKILLS\n• SAP TM • Incoterms 2020 • Excel",
     False),
    ("email_signature", "Thanks again for your time today.\n\nKind regards / Cordialement\n{name}\nHR Business Partner"
                        " | {company}\n{L} {v}\n{mail}", False),
    ("letterhead", "{company} · Hafenstraße 12 · {city} · {L} {v} · www.example-firm.eu\n\nRe: Offer of employment"
                   "\n\nDear {name},", False),
    ("greenhouse_json", '{"id": {n}, "first_name": "{name}", "phone_numbers": [{"value": "{v}", "type": "mobile"}],'
                        ' "email_addresses": [{"value": "{mail}", "type": "personal"}], "application_ids": [{n}]}',
     True),
    ("lever_json", '{"name": "{name}", "headline": "{company}", "phones": [{"type": "{L}", "value": "{v}"}], '
                   '"location": "{city}", "stage": "phone-screen"}', True),
    ("workday_csv", "Candidate ID,Legal Name,{L},Requisition,Stage\nC-{n},{name},{v},R-{n},Offer Extended", False),
    ("hotel_reg_card", "REGISTRATION CARD / FICHE DE POLICE        Room 412\nGuest name: {name}\nNationality: ____"
                       "\n{L}: {v}\nArrival 12/03   Departure 15/03   Adults 2", False),
    ("lease_application", "RENTAL APPLICATION — Unit 3B, {city}\nApplicant: {name}\nCurrent employer: {company}\n"
                          "Applicant {L}: {v}\nMonthly income: 4,200", False),
    ("forwarded_chain", "---------- Forwarded message ---------\nFrom: {name} <{mail}>\nDate: Tue, 5 Mar 2024\n"
                        "Subject: Re: Application\n\n> {S}\n> Thanks!", False),
    ("court_signature", "Dated: March 4, 2024            Respectfully submitted,\n/s/ {name}\n{name} (Bar No. "
                        "{n})\n{company}\n{L}: {v}\n{mail}\nCounsel for Plaintiff", False),
    ("bill_of_lading", "BILL OF LADING No. MAEU{n}\nSHIPPER: {company}, {city}\nNOTIFY PARTY: {name}  {L} {v}\n"
                       "PORT OF LOADING: Hamburg   PORT OF DISCHARGE: Nhava Sheva", False),
    ("redcap_csv", "record_id,redcap_event_name,participant_name,contact_{L},consent_date\n{n},baseline_arm_1,"
                   "{name},{v},2024-02-19", False),
    ("donor_crm_json", '{"constituent": {"name": "{name}", "phones": [{"label": "{L}", "number": "{v}", '
                       '"primary": true}], "gift_aid": true}}', True),
    ("enrolment_ocr", "STUDENT ENROLMENT FORM  2024/25\nParent / guardian:  {name}\n{L} :  {v}\nEmergency "
                      "contact: sa me as above\nSignature ____________", False),
    ("prose_sentence", "{S}", False),
    ("pms_json", '{"profile": {"guestName": "{name}", "{L}": "{v}", "vip": false}, "stay": {"room": "0412"}}', True),
]
"""Carriers of every phone kind: `{L}` a label, `{S}` a sentence calling the number, both in its language."""

EMAIL_CARRIERS: list[T] = [
    ("cv_header", "{name}\n✉ {v}  ·  {city}\nData Analyst — SQL, Python, Tableau", False),
    ("cv_two_column", "CONTACT                           WORK EXPERIENCE\nEmail: {v}              {company}\n"
                      "{city}                             2020 – present", False),
    ("cv_hyphenated", "Portfolio and references avai-\nlable on request: {v}\n— {name}, page 2 of 2", False),
    ("greenhouse_json", '{"id": {n}, "first_name": "{name}", "email_addresses": [{"value": "{v}", "type": '
                        '"personal"}], "applications": [{"id": {n}, "status": "active"}]}', True),
    ("lever_json", '{"name": "{name}", "emails": ["{v}"], "origin": "applied", "stage": "onsite"}', True),
    ("workday_csv", "Worker ID,Preferred Name,Personal Email,Hire Date\nW{n},{name},{v},2024-04-01", False),
    ("successfactors_csv", "userId;firstName;email;department\n{n};{name};{v};Operations", False),
    ("moodle_users_csv", "username,firstname,lastname,email,course1\ns{n},{name},,{v},HIST101", False),
    ("canvas_json", '{"id": {n}, "name": "{name}", "sortable_name": "{name}", "login_id": "{v}", '
                    '"enrollments": [{"type": "StudentEnrollment"}]}', True),
    ("forwarded_header", "-----Original Message-----\nFrom: {name} [mailto:{v}]\nSent: Monday, 4 March 2024 10:12\n"
                         "To: Recruiting\nSubject: Application – Warehouse Supervisor", False),
    ("court_signature", "/s/ {name}\n{company}\n1200 Market Street, Suite 400\nEmail: {v}\nAttorney for Defendant",
     False),
    ("concordance_dat", "þBEGDOCþ\x14þENDDOCþ\x14þFROMþ\x14þSUBJECTþ\nþKLM0004812þ\x14þKLM0004815þ\x14þ{v}þ\x14"
                        "þLease renewalþ", False),
    ("hotel_pms_json", '{"guest": {"firstName": "{name}", "email": "{v}", "loyaltyTier": "GOLD"}, "arrival": '
                       '"2024-05-02"}', True),
    ("ticketing_csv", "Order #,Attendee,Attendee email,Ticket type\n{n},{name},{v},General Admission", False),
    ("donor_crm_json", '{"constituent": {"name": "{name}", "emails": [{"address": "{v}", "type": "Home"}], '
                       '"lifetime_giving": 1250.0}}', True),
    ("redcap_export", "record_id,participant_email,consent_complete\n{n},{v},2", False),
    ("utility_bill", "Your electricity bill is ready\nAccount holder: {name}\nPaperless billing to: {v}\n"
                     "Amount due: 84.20", False),
    ("lease_application", "Co-applicant e-mail (Correo electrónico): {v}\nTeléfono: see page 2", False),
    ("url_query", "Reset link sent: https://careers.example-ats.com/portal/reset?user={v}&lang=es", False),
    ("mailto_link", '<a href="mailto:{v}?subject=Application">Apply by e-mail</a>', False),
    ("ocr_form", "E-Mail-Adresse / Email address:  {v}\nUnterschrift: ____________", False),
]

SSN_CARRIERS: list[T] = [
    ("w4_ocr", "Form W-4 (2024)\nStep 1 (a) First name and middle initial  {name}\n(b) Social security number  {v}",
     False),
    ("i9_ocr", "Section 1. Employee Information and Attestation\nU.S. Social Security Number: {v}\nEmployee's "
               "E-mail Address: ___", False),
    ("workday_csv", "Worker,SSN,Pay Group,Hire Date\n{name},{v},US Biweekly,2024-01-08", False),
    ("successfactors_json", '{"personIdExternal": "{n}", "nationalIdNav": {"results": [{"country": "USA", '
                            '"cardType": "SSN", "nationalId": "{v}"}]}}', True),
    ("greenhouse_json", '{"candidate_id": {n}, "custom_fields": {"ssn_for_background_check": "{v}"}}', True),
    ("lease_application", "RENTAL APPLICATION\nApplicant: {name}\nSocial Security #: {v}\nDate of birth: "
                          "__/__/____", False),
    ("background_check", "Consumer report requested for {name} — SSN {v} — county criminal search, {city}", False),
    ("court_caption_redaction", "Plaintiff {name} (SSN: {v}) v. {company}, Defendant.\nCase No. 2:24-cv-0{n}",
     False),
    ("forwarded_chain", "> On Mar 3, HR wrote:\n> Please send your SSN for payroll setup.\n\nHi, it is {v}. "
                        "Thanks, {name}", False),
    ("transcript_request", "Transcript request form\nStudent: {name}\nSocial Security No. (last used) {v}\nYears "
                           "attended 2008–2012", False),
    ("donor_crm_json", '{"constituent": {"name": "{name}", "taxInfo": {"ssn": "{v}", "receipt": true}}}', True),
    ("utility_application", "Start service application\nResponsible party: {name}\nSSN (for credit check): {v}",
     False),
    ("hotel_pms_json", '{"profile": {"name": "{name}", "idType": "SSN", "idNumber": "{v}"}}', True),
    ("redcap_csv", "record_id,ssn,enrollment_date\n{n},{v},2024-03-01", False),
    ("cv_mistake", "{name}\nCitizenship: U.S.   SSN: {v}\nObjective: entry-level accounting role", False),
    ("prose_es", "Mi número de seguro social es {v}, por si lo necesitan para la nómina.", False),
]

CARD_CARRIERS: list[T] = [
    ("hotel_reg_card", "REGISTRATION CARD\nGuest: {name}\nCredit card for incidentals: {v}  Exp 08/27", False),
    ("pms_json", '{"reservation": {"guest": "{name}", "guarantee": {"type": "CC", "cardNumber": "{v}", '
                 '"expiry": "0827"}}}', True),
    ("ticketing_export", "Order,Buyer,Payment,Card number,Amount\n{n},{name},card,{v},89.00", False),
    ("donor_pledge_form", "MONTHLY GIFT FORM\nDonor: {name}\nCard No.: {v}   Expiry: 11/26\nAmount: 25.00", False),
    ("donor_crm_json", '{"gift": {"amount": 50, "payment": {"method": "credit_card", "number": "{v}"}}}', True),
    ("freight_invoice", "FREIGHT INVOICE FI-{n}\nPayment by card: {v}\nTotal: USD 1,480.00", False),
    ("customs_payment", "Customs duties paid by card / Zoll bezahlt mit Karte: {v}", False),
    ("lease_deposit", "Security deposit authorization — Card number: {v}, cardholder {name}", False),
    ("forwarded_chain", "---------- Forwarded message ---------\n\nCould you charge the course fee to my card "
                        "{v}? Exp 03/28. Thanks!", False),
    ("tuition_ocr", "UNIVERSITY TUITION PAYMENT FORM\nVisa / Mastercard / Amex  {v}\nCardholder signature ____",
     False),
    ("utility_autopay", "AutoPay enrolment\nPayment card: {v}\nService address: {city}", False),
    ("concordance_dat", "þKLM0000{n}þ\x14þPayment detailsþ\x14þcard {v} exp 09/25þ", False),
    ("relativity_json", '{"Control Number": "KLM00{n}", "Extracted Text": "Please use card {v} for the filing fee."}',
     True),
    ("airway_bill", "AIR WAYBILL 176-{n}\nCharges prepaid — CC {v}\nShipper's signature ___", False),
    ("prose_pt", "Pode debitar no meu cartão {v}, validade 10/27.", False),
    ("prose_ja", "クレジットカード番号：{v}（有効期限 12/26）", False),
]

IBAN_CARRIERS: list[T] = [
    ("payroll_form", "NEW HIRE BANK DETAILS\nEmployee: {name}\nIBAN: {v}\nBIC: DEUTDEFFXXX", False),
    ("successfactors_json", '{"userId": "{n}", "paymentInformation": {"iban": "{v}", "bankCountry": "DE"}}', True),
    ("workday_csv", "Worker,Payment Type,IBAN,Split %\n{name},Direct Deposit,{v},100", False),
    ("lease_contract", "The Tenant shall pay the rent monthly in advance to the Landlord's account IBAN {v}, "
                       "reference 'Rent Unit 3B'.", False),
    ("contract_party_block", "BETWEEN\n{company}, registered office {city} (the \"Supplier\"), bank account "
                             "IBAN: {v}\nAND\n{name} (the \"Client\")", False),
    ("freight_invoice", "INVOICE FI-{n}\nPlease remit to: {company}\nIBAN {v}\nPayment terms: 30 days net", False),
    ("utility_bill_fr", "Prélèvement SEPA — Référence unique de mandat RUM-{n}\nIBAN du débiteur : {v}", False),
    ("utility_bill_de", "Ihre Abschlagszahlung wird per SEPA-Lastschrift von IBAN {v} eingezogen.", False),
    ("donor_mandate", "Direct Debit Mandate\nDonor: {name}\nAccount (IBAN): {v}\nSigned: {city}", False),
    ("donor_crm_json", '{"constituent_id": "C-{n}", "sepaMandate": {"iban": "{v}", "status": "active"}}', True),
    ("tuition_refund", "Solicitud de devolución de matrícula\nAlumno: {name}\nIBAN para el reembolso: {v}", False),
    ("hotel_refund_json", '{"folio": "{n}", "refund": {"method": "bank_transfer", "beneficiaryIban": "{v}"}}', True),
    ("forwarded_chain", "> From: {name}\n> My new bank details: {v}\n> Please update before the next payroll run.",
     False),
    ("ocr_form_it", "MODULO ACCREDITO STIPENDIO\nCodice IBAN: {v}\nIntestatario: {name}", False),
    ("prose_nl", "Graag het voorschot overmaken naar rekeningnummer {v} t.n.v. {name}.", False),
    ("prose_pl", "Proszę o przelew na rachunek {v}, tytułem: kaucja.", False),
    ("prose_ar", "يرجى تحويل المبلغ إلى الحساب رقم الآيبان {v} باسم {name}.", False),
]

PASSWORD_CARRIERS: list[T] = [
    ("welcome_email", "Welcome to {company}!\nYour HR portal login: {mail}\nTemporary password: {v}\nYou will be "
                      "asked to change it at first sign-in.", False),
    ("onboarding_letter_de", "Ihre Zugangsdaten für das Mitarbeiterportal:\nBenutzername: {n}\nInitialpasswort: {v}",
     False),
    ("onboarding_letter_fr", "Identifiant : {mail}\nMot de passe provisoire : {v}\nMerci de le modifier dès la "
                             "première connexion.", False),
    ("lms_welcome_es", "Bienvenido/a al Campus Virtual.\nUsuario: s{n}\nContraseña: {v}", False),
    ("student_letter_pt", "Credenciais do portal do aluno — matrícula {n}\nSenha inicial: {v}", False),
    ("portal_letter_pl", "Dane logowania do e-dziennika: login {n}, hasło tymczasowe: {v}", False),
    ("portal_letter_ja", "ポータルのログインID：{n}\n初期パスワード：{v}", False),
    ("portal_letter_ru", "Логин: {n}\nВременный пароль: {v}", False),
    ("portal_letter_tr", "Kullanıcı adı: {n}\nGeçici şifre: {v}", False),
    ("moodle_config_php", "$CFG->dbtype    = 'pgsql';\n$CFG->dbuser    = 'moodle';\n$CFG->dbpass    = '{v}';\n"
                          "$CFG->prefix    = 'mdl_';", False),
    ("redcap_database_php", "$hostname = 'redcap-db.uni.local';\n$db = 'redcap';\n$username = 'redcap';\n"
                            "$password = '{v}';", False),
    ("integration_env", "# ATS -> payroll sync (set-up doc, section 4)\nDB_HOST=10.20.4.15\nDB_PASSWORD={v}\n"
                        "SYNC_INTERVAL=15m", False),
    ("integration_pgpass", "Run the export as:\nPGPASSWORD={v} psql -h pms-db01 -U pms_app -c '\\copy guests TO "
                           "guests.csv CSV'", False),
    ("compose_yaml", "services:\n  db:\n    image: mysql:8\n    environment:\n      MYSQL_ROOT_PASSWORD: {v}\n"
                     "      MYSQL_DATABASE: donors", False),
    ("cli_flag", "mysqldump --user=donorsync --password {v} crm_prod > crm_$(date +%F).sql", False),
    ("cli_short_p", "mysql -u ticketing -p{v} -h 10.0.3.7 events", False),
    ("redis_env", "REDIS_HOST=cache.ats.internal\nREDIS_PASS={v}", False),
    ("spring_properties", "spring.datasource.url=jdbc:postgresql://db.ats.internal/ats\n"
                          "spring.datasource.password={v}", False),
    ("ldap_json", '{"bindDn": "cn=svc-lms,ou=svc,dc=uni,dc=edu", "userPassword": "{v}", "enabled": true}', True),
    ("sftp_json", '{"sftp": {"host": "sftp.payroll-partner.com", "username": "exports", "sftpPassword": "{v}"}}',
     True),
    ("workday_integration_json", '{"integrationSystem": "INT042_Benefits", "credentials": {"user": "ISU_Benefits", '
                                 '"password": "{v}"}}', True),
    ("camel_json", '{"adminUser": "admin", "adminPassword": "{v}", "smtpHost": "smtp.office365.com"}', True),
    ("forwarded_chain", "---------- Forwarded message ---------\nSubject: Your new account\n\n> Username: {mail}\n> "
                        "Password: {v}", False),
    ("ocr_welcome_card", "WiFi & Systems Access Card\nStaff ID {n}\nPassword:  {v}\nKeep this card safe", False),
]

AWS_CARRIERS: list[T] = [
    ("setup_doc_table", "| Field | Value |\n|---|---|\n| Access key ID | {id} |\n| Secret access key | {v} |\n"
                        "| Bucket | hr-cv-archive |", False),
    ("setup_doc_unlabelled", "S3 export credentials (do not share):\n{id}\n{v}\nRegion eu-west-1", False),
    ("setup_doc_slash", "Use the keys {id} / {v} for the resume bucket.", False),
    ("credentials_ini", "[ats-export]\naws_access_key_id = {id}\naws_secret_access_key = {v}", False),
    ("env_file", "AWS_ACCESS_KEY_ID={id}\nAWS_SECRET_ACCESS_KEY={v}\nAWS_DEFAULT_REGION=us-east-1", False),
    ("iam_json", '{"AccessKey": {"UserName": "lms-backup", "AccessKeyId": "{id}", "Status": "Active", '
                 '"SecretAccessKey": "{v}"}}', True),
    ("lowercase_json", '{"aws_access_key_id": "{id}", "aws_secret_access_key": "{v}", "bucket": "redcap-files"}',
     True),
    ("camel_json", '{"s3": {"accessKeyId": "{id}", "secretAccessKey": "{v}", "region": "ap-south-1"}}', True),
    ("csv_download", "User name,Access key ID,Secret access key\ndocs-uploader,{id},{v}", False),
    ("forwarded_chain", "> Here are the S3 credentials for the scanned leases:\n> Key: {id}\n> Secret: {v}", False),
    ("cli_configure", "$ aws configure\nAWS Access Key ID [None]: {id}\nAWS Secret Access Key [None]: {v}", False),
    ("pdf_two_column", "ACCESS KEY ID                SECRET ACCESS KEY\n{id}     {v}\nCreated 2024-02-01", False),
    ("email_onboarding_de", "Zugangsschlüssel: {id}\nGeheimer Zugriffsschlüssel: {v}", False),
    ("ocr_sticky", "aws key {id}\nsecret {v}", False),
    ("terraform_vars", 'aws_access_key = "{id}"\naws_secret_key = "{v}"', False),
    ("ticketing_integration_json", '{"integration": "s3-ticket-scans", "key": "{id}", "secret": "{v}"}', True),
]

WEBHOOK_CARRIERS: list[T] = [
    ("setup_doc", "Step 3 — Notifications\nPaste this incoming webhook into the ATS: {url}", False),
    ("greenhouse_webhook_json", '{"name": "New application -> #hiring", "endpoint": "{url}", "events": '
                                '["candidate_submitted"]}', True),
    ("lever_integration_json", '{"integration": "chat", "webhookUrl": "{url}", "active": true}', True),
    ("ticketing_json", '{"event_id": {n}, "notifications": {"on_order": {"url": "{url}"}}}', True),
    ("donor_crm_settings", "Gift alerts\n  Destination URL: {url}\n  Trigger: gift.created", False),
    ("forwarded_chain", "> Can you add the webhook for the front desk channel?\n> {url}\n> Thanks", False),
    ("env_file", "SLACK_WEBHOOK_URL={url}\nNOTIFY_ON=offer_accepted", False),
    ("yaml_config", "alerts:\n  redcap_new_record:\n    webhook: {url}", False),
    ("curl_test", "curl -X POST -H 'Content-type: application/json' --data '{\"text\":\"test\"}' {url}", False),
    ("markdown_runbook", "## Moodle grade alerts\n- Webhook: <{url}>\n- Owner: IT", False),
    ("pms_json", '{"property": "BELV", "interfaces": [{"type": "webhook", "target": "{url}"}]}', True),
    ("powershell", '$hook = "{url}"\nInvoke-RestMethod -Uri $hook -Method Post -Body $payload', False),
    ("pdf_wrapped_link", "Notifications are posted to\n{url}\n(see Appendix B)", False),
    ("python_snippet", 'requests.post("{url}", json={"text": msg})', False),
    ("note_fr", "Le webhook du canal #recrutement est : {url}", False),
    ("logistics_edi_json", '{"carrier": "DHL", "statusCallback": "{url}", "format": "json"}', True),
]

WHSEC_CARRIERS: list[T] = [
    ("setup_doc", "Signing secret (from the Stripe dashboard → Webhooks): {v}", False),
    ("env_file", "STRIPE_WEBHOOK_SECRET={v}\nSTRIPE_MODE=live", False),
    ("ticketing_json", '{"payments": {"provider": "stripe", "webhookSecret": "{v}"}}', True),
    ("donor_crm_json", '{"stripe": {"endpoint": "/hooks/stripe", "signing_secret": "{v}"}}', True),
    ("cli_output", "> Ready! Your webhook signing secret is {v} (^C to quit)", False),
    ("forwarded_chain", "> The whsec for the donations endpoint is {v}, please store it in the vault", False),
    ("yaml", "stripe:\n  webhook_signing_secret: {v}", False),
    ("php_config", "define('STRIPE_WHSEC', '{v}');", False),
    ("python_settings", 'STRIPE_ENDPOINT_SECRET = "{v}"', False),
    ("markdown_table", "| Setting | Value |\n|---|---|\n| Endpoint secret | {v} |", False),
    ("tuition_portal_json", '{"gateway": "stripe", "whsec": "{v}", "currency": "eur"}', True),
    ("note_es", "Secreto de firma del webhook: {v}", False),
    ("note_de", "Signaturgeheimnis für den Webhook: {v}", False),
    ("ocr_screenshot", "Signing secret\n{v}  Reveal  Roll secret", False),
    ("docker_run", "docker run -e STRIPE_WHSEC={v} tickets-api:2.4", False),
    ("pms_json", '{"paymentInterface": {"webhookSigningKey": "{v}"}}', True),
]

CONN_CARRIERS: list[T] = [
    ("setup_doc", "Connection string for the resume archive:\n{cs}", False),
    ("appsettings_json", '{"ConnectionStrings": {"AtsDb": "{cs}"}, "Logging": {"LogLevel": {"Default": '
                         '"Warning"}}}', True),
    ("env_file", "DATABASE_URL={cs}\nWORKERS=4", False),
    ("yaml_config", "storage:\n  connection: \"{cs}\"", False),
    ("web_config", '<add name="PmsDb" connectionString="{cs}" providerName="System.Data.SqlClient" />', False),
    ("forwarded_chain", "> Use this for the REDCap mirror:\n> {cs}\n> Regards, IT", False),
    ("integration_json", '{"source": {"type": "sql", "connectionString": "{cs}"}, "schedule": "0 2 * * *"}', True),
    ("powershell", '$conn = New-Object System.Data.SqlClient.SqlConnection "{cs}"', False),
    ("python_snippet", 'engine = create_engine("{cs}")', False),
    ("markdown_runbook", "### Donor DB\n`{cs}`", False),
    ("ocr_printout", "CONNECTION STRING:\n{cs}\nprinted by admin 2024-03-02", False),
    ("java_properties", "ats.datasource.url={cs}", False),
    ("docker_compose", "environment:\n  - CONN={cs}", False),
    ("ticketing_json", '{"warehouse": {"dsn": "{cs}"}}', True),
    ("note_it", "Stringa di connessione al database degli iscritti: {cs}", False),
    ("lms_json", '{"plugin": "local_sync", "settings": {"dbconn": "{cs}"}}', True),
]

LABELLED_CARRIERS: list[T] = [
    ("setup_doc", "Integration set-up\nAPI Key: {v}\nBase URL: https://api.ats-vendor.com/v1", False),
    ("setup_doc_secret", "Client ID: ats-connector\nSecret key = {v}", False),
    ("prose_token", "The access token is {v} and it expires in 90 days.", False),
    ("welcome_email", "Your API key for the candidate feed is: {v}", False),
    ("note_fr", "Clé API : {v}", False),
    ("note_de", "API-Schlüssel: {v}", False),
    ("note_es", "Clave de API: {v}", False),
    ("note_pt", "Chave da API: {v}", False),
    ("note_ja", "APIキー：{v}", False),
    ("note_zh", "API 密钥：{v}", False),
    ("note_ru", "Ключ API: {v}", False),
    ("note_pl", "Klucz API: {v}", False),
    ("note_ar", "مفتاح API: {v}", False),
    ("note_ko", "API 키: {v}", False),
    ("markdown_table", "| Name | Value |\n|---|---|\n| Secret Key | {v} |", False),
    ("lms_lti_json", '{"LTI consumer key": "moodle-prod", "Shared secret": "{v}"}', True),
    ("hr_json", '{"Access Token": "{v}", "Tenant": "acme_hr"}', True),
    ("ticketing_json", '{"settings": {"Private API key": "{v}"}}', True),
    ("pdf_two_column", "INTEGRATION                 CREDENTIALS\nShipping API           Access Key: {v}", False),
    ("forwarded_chain", "> Here's the API token: {v}\n> Don't forward this", False),
]

DISGUISED_CARRIERS: list[T] = [
    ("pdf_setup_doc", "Integration key (copy exactly): {v}", False),
    ("docx_table", "Service | Key\nRepository | {v}", False),
    ("email_html_text", "Hi team, the key for the ticket-scanner app is {v} — please rotate after the event.", False),
    ("json_config", '{"apiKey": "{v}", "env": "production"}', True),
    ("env_file", "INTEGRATION_KEY={v}", False),
    ("forwarded_chain", "> key: {v}\n> sent from my phone", False),
    ("ocr_scan", "API KEY  {v}\nissued 2024-01-12", False),
    ("yaml_config", "ats:\n  token: {v}", False),
    ("lever_json", '{"integration": "ats-sync", "token": "{v}"}', True),
    ("markdown", "`{v}`", False),
    ("cv_mistake", "Projects: built a Slack bot (token {v}) for shift swaps", False),
    ("note_de", "Schlüssel: {v}", False),
    ("note_ja", "キー：{v}", False),
    ("redcap_notes", "record 1042 — note: key {v}", False),
    ("pms_json", '{"interface": "door-locks", "secret": "{v}"}', True),
    ("hyphenated_pdf", "The deployment key is\n{v}\n(see page 3)", False),
]


# ---- values: the wider kinds ------------------------------------------------------------------------------------

RSA_OID = bytes.fromhex("06092a864886f70d0101010500")


def _pem(label: str, der_bytes: bytes) -> str:
    """RFC 7468 text: base64 in lines of 64 between BEGIN and END."""
    body = base64.b64encode(der_bytes).decode()
    return f"-----BEGIN {label}-----\n" + group(body, 64, "\n") + f"\n-----END {label}-----"


def _rsa_shaped(rng: random.Random) -> bytes:
    """A PKCS#1 RSAPrivateKey of 2048-bit shape (RFC 8017 A.1.2) with drawn integers."""
    big = [rng.getrandbits(2048) | (1 << 2047) for _ in range(2)]
    half = [rng.getrandbits(1024) | (1 << 1023) for _ in range(5)]
    return der_seq(der_int(0), der_int(big[0]), der_int(65537), der_int(big[1]), *map(der_int, half))


def private_key(rng: random.Random) -> tuple[str, str]:
    """A PEM private key: PKCS#1 RSA, PKCS#8 RSA, SEC 1 EC, PKCS#8 Ed25519 or OpenSSH Ed25519."""
    style = rng.choice(["rsa_pkcs1", "rsa_pkcs8", "ec", "ed25519_pkcs8", "openssh"])
    if style == "rsa_pkcs1":
        return _pem("RSA PRIVATE KEY", _rsa_shaped(rng)), style
    if style == "rsa_pkcs8":
        return _pem("PRIVATE KEY", der_seq(der_int(0), der(0x30, RSA_OID), der(0x04, _rsa_shaped(rng)))), style
    if style == "ec":
        key = ec.derive_private_key(rng.getrandbits(255) + 1, ec.SECP256R1())
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                 serialization.NoEncryption()).decode().strip(), style
    seed = rng.randbytes(32)
    key = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
    if style == "ed25519_pkcs8":
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption()).decode().strip(), style
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"hr-sftp@ats")
    body = base64.b64encode(blob).decode()
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(body, 70, "\n") + "\n-----END OPENSSH PRIVATE KEY-----", \
        style


def jwt(rng: random.Random) -> tuple[str, str]:
    """A signed JWT (LTI 1.3 launch, DocuSign JWT grant, HR SSO): RS256 or HS256."""
    alg = rng.choice(["RS256", "HS256"])
    head = {"alg": alg, "typ": "JWT", "kid": pick(rng, HEX, 16)}
    name = rng.choice(NAMES)
    body = {"iss": rng.choice(["https://canvas.instructure.com", "https://account-d.docusign.com",
                               "https://login.workday.com"]), "sub": digits(rng, 8), "name": name,
            "email": f"{ascii_slug(name)}@{rng.choice(DOMAINS)}", "iat": 1709251200 + rng.randint(0, 10**7)}
    body["exp"] = body["iat"] + 3600
    sig = rng.randbytes(256 if alg == "RS256" else 32)
    enc = [b64url(json.dumps(p, separators=(",", ":"), ensure_ascii=False).encode()) for p in (head, body)]
    return ".".join(enc + [b64url(sig)]), alg


def auth_header(rng: random.Random) -> tuple[str, str]:
    """An Authorization header as `header|secret`: Basic, Bearer, Digest `response=`, SigV4 `Signature=`."""
    style = rng.choice(["basic", "bearer", "digest", "sigv4"])
    if style == "basic":
        sec = base64.b64encode(f"ats_api:{pick(rng, B62, 16)}".encode()).decode()
        return f"Authorization: Basic {sec}|{sec}", style
    if style == "bearer":
        sec = pick(rng, URLSAFE, rng.randint(32, 60))
        return f"Authorization: Bearer {sec}|{sec}", style
    if style == "digest":
        sec = pick(rng, HEX, 32)
        h = (f'Authorization: Digest username="scanner", realm="copier@hr", nonce="{pick(rng, HEX, 32)}", '
             f'uri="/scan/upload", qop=auth, nc=00000001, cnonce="{pick(rng, HEX, 8)}", response="{sec}"')
        return f"{h}|{sec}", style
    sec = pick(rng, HEX, 64)
    h = (f"Authorization: AWS4-HMAC-SHA256 Credential=AKIA{pick(rng, string.ascii_uppercase + '234567', 16)}/"
         f"20240305/eu-west-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature={sec}")
    return f"{h}|{sec}", style


def session_cookie(rng: random.Random) -> tuple[str, str]:
    """A session cookie as `name=value|value` of an LMS, HR portal or PMS."""
    style = rng.choice(["moodle", "canvas", "jsessionid", "phpsessid", "aspnet", "connect_sid"])
    val = {"moodle": pick(rng, LOWER, 26), "canvas": pick(rng, URLSAFE, 24) + "+" + pick(rng, URLSAFE, 40),
           "jsessionid": pick(rng, HEX.upper(), 32), "phpsessid": pick(rng, LOWER, 26),
           "aspnet": pick(rng, string.ascii_lowercase + "012345", 24),
           "connect_sid": "s%3A" + pick(rng, URLSAFE, 32) + "." + pick(rng, B62, 43)}[style]
    name = {"moodle": "MoodleSession", "canvas": "canvas_session", "jsessionid": "JSESSIONID",
            "phpsessid": "PHPSESSID", "aspnet": "ASP.NET_SessionId", "connect_sid": "connect.sid"}[style]
    return f"{name}={val}|{val}", style


def shippo_token(rng: random.Random) -> tuple[str, str]:
    """A Shippo API token: shippo_live_ or shippo_test_ and 40 hex."""
    mode = rng.choice(["live", "live", "test"])
    return f"shippo_{mode}_{pick(rng, HEX, 40)}", mode


def sendgrid_key(rng: random.Random) -> tuple[str, str]:
    """A SendGrid API key: SG. 22 . 43 base64url."""
    return f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}", "sg"


def google_api_key(rng: random.Random) -> tuple[str, str]:
    """A Google Cloud API key: AIza and 35 of [A-Za-z0-9_-]."""
    return "AIza" + pick(rng, URLSAFE, 35), "aiza"


def github_token(rng: random.Random) -> tuple[str, str]:
    """A GitHub token of the 2021 format (classic PAT, OAuth, app installation), or a fine-grained PAT."""
    prefix = rng.choice(["ghp_", "gho_", "ghs_", "github_pat_"])
    if prefix == "github_pat_":
        return f"github_pat_{pick(rng, B62, 22)}_{pick(rng, B62, 59)}", "fine_grained"
    return crc_token(rng, prefix), prefix.rstrip("_")


def stripe_secret(rng: random.Random) -> tuple[str, str]:
    """A Stripe live secret or restricted key."""
    prefix = rng.choice(["sk_live_", "sk_live_", "rk_live_"])
    return prefix + pick(rng, string.ascii_letters + string.digits, rng.choice([24, 99])), prefix.rstrip("_")


def share_link(rng: random.Random) -> tuple[str, str]:
    """A shared-drive link as `url|key`: Dropbox `rlkey=` or a Box shared link's 32-character path."""
    if rng.random() < 0.55:
        key = pick(rng, LOWER, 25)
        url = (f"https://www.dropbox.com/scl/fi/{pick(rng, LOWER, 25)}/Offer_Letter_{digits(rng, 4)}.pdf"
               f"?rlkey={key}&dl=0")
        return f"{url}|{key}", "dropbox"
    key = pick(rng, LOWER, 32)
    return f"https://app.box.com/s/{key}|{key}", "box"


def es_dni(rng: random.Random) -> tuple[str, str]:
    """A Spanish DNI (8 digits + mod 23 letter) or NIE (X/Y/Z + 7 digits + letter)."""
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if rng.random() < 0.7:
        n = digits(rng, 8)
        return n + letters[int(n) % 23], "dni"
    lead, n = rng.choice("XYZ"), digits(rng, 7)
    return lead + n + letters[int(str("XYZ".index(lead)) + n) % 23], "nie"


def br_cpf(rng: random.Random) -> tuple[str, str]:
    """A CPF with its two mod 11 check digits, dotted or compact."""
    d = [int(c) for c in digits(rng, 9)]
    for size in (10, 11):
        d.append(sum(x * w for x, w in zip(d, range(size, 1, -1), strict=False)) * 10 % 11 % 10)
    s = "".join(map(str, d))
    if rng.random() < 0.7:
        return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}", "dotted"
    return s, "compact"


def pl_pesel(rng: random.Random) -> tuple[str, str]:
    """A PESEL: birth date (month +20 after 1999), serial, weighted check digit."""
    year, month, day = rng.randint(1950, 2006), rng.randint(1, 12), rng.randint(1, 28)
    mm = month + (20 if year >= 2000 else 0)
    body = f"{year % 100:02d}{mm:02d}{day:02d}{digits(rng, 4)}"
    check = (10 - sum(int(c) * w for c, w in zip(body, [1, 3, 7, 9] * 3, strict=False)) % 10) % 10
    return body + str(check), "pesel"


def nl_bsn(rng: random.Random) -> tuple[str, str]:
    """A BSN passing the 11-proof (weights 9..2, last digit -1)."""
    while True:
        head = str(rng.randint(1, 6)) + digits(rng, 7)
        last = sum(int(c) * w for c, w in zip(head, range(9, 1, -1), strict=True)) % 11
        if last < 10:
            return head + str(last), "bsn"


def _mrz_check(field: str) -> str:
    """ICAO 9303 check digit: weights 7-3-1, letters 10-35, `<` 0."""
    val = {c: i for i, c in enumerate(string.digits + string.ascii_uppercase)}
    return str(sum(val.get(c, 0) * (7, 3, 1)[i % 3] for i, c in enumerate(field)) % 10)


def passport_mrz(rng: random.Random) -> tuple[str, str]:
    """The second line of a TD3 passport MRZ with its check digits."""
    number = pick(rng, string.ascii_uppercase, 2) + digits(rng, 7)
    nat = rng.choice(["GBR", "DEU", "FRA", "IND", "ESP", "ITA", "NLD", "POL", "TUR", "JPN", "KOR", "BRA", "UKR"])
    dob = f"{rng.randint(55, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    exp = f"{rng.randint(26, 34):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    opt = "<" * 14
    line = (number + _mrz_check(number) + nat + dob + _mrz_check(dob) + rng.choice("MF") + exp + _mrz_check(exp)
            + opt + _mrz_check(opt))
    return line + _mrz_check(line[0:10] + line[13:20] + line[21:43]), nat


# ---- carriers of the wider kinds ----------------------------------------------------------------------------------

KEY_CARRIERS: list[T] = [
    ("setup_doc_pem", "SFTP key for the payroll partner (paste into the ATS):\n{v}", False),
    ("gcp_sa_json", "", True),
    ("forwarded_chain", "> attached the key for the transcript SFTP drop:\n>\n{v}", False),
    ("ocr_printout", "KEY FILE hr_sftp.pem\n{v}\npage 1/1", False),
    ("lms_json", '{"plugin": "sftp_export", "privateKey": "{v}"}', True),
    ("env_multiline", 'DOCUSIGN_PRIVATE_KEY="{v}"', False),
]

JWT_CARRIERS: list[T] = [
    ("lti_launch_form", "POST /lti/launch\nid_token={v}&state=af81", False),
    ("setup_doc", "Test token for the e-signature sandbox: {v}", False),
    ("canvas_json", '{"access_token": "{v}", "token_type": "Bearer", "expires_in": 3600}', True),
    ("forwarded_chain", "> Here's the JWT from the HR SSO, it fails on exp:\n> {v}", False),
    ("curl", "curl -H 'Authorization: Bearer {v}' https://api.docusign.net/restapi/v2.1/accounts", False),
    ("cookie_line", "Cookie: hr_portal_jwt={v}; lang=de", False),
    ("pms_json", '{"session": {"idToken": "{v}"}}', True),
]

HEADER_CARRIERS: list[T] = [
    ("setup_doc", "Request headers for the ATS export:\n{h}\nAccept: application/json", False),
    ("http_dump", "GET /v1/candidates?page=2 HTTP/1.1\nHost: harvest.greenhouse.io\n{h}\nUser-Agent: ats-sync/3.1",
     False),
    ("json_headers", "", True),
    ("forwarded_chain", "> the copier sends:\n> {h}\n> and gets 401", False),
    ("postman_export", "", True),
    ("ocr_screenshot", "Headers (3)\n{h}\nContent-Type: application/json", False),
    ("note_fr", "En-tête utilisé par l'intégration : {h}", False),
]

COOKIE_CARRIERS: list[T] = [
    ("http_dump", "GET /course/view.php?id=412 HTTP/1.1\nHost: moodle.uni.edu\nCookie: {c}; lang=en", False),
    ("set_cookie", "HTTP/1.1 302 Found\nSet-Cookie: {c}; path=/; HttpOnly; Secure", False),
    ("curl", "curl -b '{c}' https://hr.example-portal.com/payslips/2024-02.pdf", False),
    ("har_json", "", True),
    ("forwarded_chain", "> IT asked for my cookie to debug the login loop: {c}", False),
    ("devtools_copy", "Name\tValue\tDomain\n{tab}\t.canvas.uni.edu", False),
    ("note_de", "Sitzungs-Cookie aus dem Browser: {c}", False),
]

TOKEN_CARRIERS: list[T] = [
    ("setup_doc", "Integration set-up — step 2\nAPI token: {v}\nBase URL: https://api.vendor.example", False),
    ("env_file", "INTEGRATION_TOKEN={v}\nTIMEOUT=30", False),
    ("config_json", '{"integration": {"token": "{v}", "enabled": true}}', True),
    ("forwarded_chain", "> Key for the label printer integration: {v}", False),
    ("curl_header", "curl -H 'X-Api-Key: {v}' https://api.vendor.example/v2/labels", False),
    ("yaml", "credentials:\n  key: {v}", False),
    ("ocr_printout", "KEY  {v}\nCreated 2024-02-11 by admin", False),
    ("bare_in_prose", "we rotated it yesterday, new one is {v}", False),
    ("pms_json", '{"interfaces": {"messaging": {"apiKey": "{v}"}}}', True),
]

SHARE_CARRIERS: list[T] = [
    ("welcome_email", "Please read your offer letter here: {url}", False),
    ("forwarded_chain", "> Scans of the lease are in {url}\n> (link expires Friday)", False),
    ("ats_json", '{"candidate_id": {n}, "attachments": [{"filename": "cv.pdf", "url": "{url}"}]}', True),
    ("markdown", "- [Transcript]({url})", False),
    ("court_filing_service", "Exhibit A is available for download at {url}", False),
    ("note_es", "Aquí tienes el contrato firmado: {url}", False),
]

ID_CARRIERS: dict[str, list[T]] = {
    "es_dni": [("cv_header", "{name}\nDNI: {v}  ·  Permiso B  ·  {city}", False),
               ("lease_form", "Arrendatario: {name}, con NIF {v}, mayor de edad", False),
               ("hotel_reg_card", "PARTE DE ENTRADA DE VIAJEROS\nN.º documento (DNI/NIE): {v}", False),
               ("hr_json", '{"empleado": "{name}", "nif": "{v}"}', True)],
    "br_cpf": [("cv_header", "{name}\nCPF: {v}\n{city}", False),
               ("ats_json", '{"candidato": "{name}", "cpf": "{v}"}', True),
               ("lease_form", "LOCATÁRIO: {name}, inscrito no CPF sob o nº {v}", False),
               ("nfe_invoice", "DESTINATÁRIO  CPF/CNPJ {v}", False)],
    "pl_pesel": [("cv_header", "{name}\nPESEL: {v}", False),
                 ("enrolment_form", "KARTA ZGŁOSZENIA UCZNIA\nNr PESEL dziecka: {v}", False),
                 ("hr_json", '{"pracownik": "{name}", "pesel": "{v}"}', True),
                 ("contract_party", "Pan/Pani {name}, PESEL {v}, zwany dalej Najemcą", False)],
    "nl_bsn": [("payroll_form", "Loonheffingsformulier\nBurgerservicenummer: {v}", False),
               ("hr_json", '{"medewerker": "{name}", "bsn": "{v}"}', True),
               ("lease_form", "Huurder: {name}, BSN {v}", False),
               ("cv_mistake", "{name}\nBSN-nummer {v}\nRijbewijs B", False)],
    "passport_mrz": [("hotel_scan_ocr", "P<{cc}{surname}<<GUEST<<<<<<<<<<<<<<<<<<<<<<<<<<\n{v}", False),
                     ("pms_json", '{"document": {"type": "P", "mrzLine2": "{v}"}}', True),
                     ("visa_letter_ocr", "Passport data page (OCR):\nP<{cc}{surname}<<<<<<<<<<<<<<<<<<<<<<<<<<\n{v}",
                      False),
                     ("airline_apis", "APIS document scan\n{v}\nStatus: OK", False)],
}


# ---- JSON documents built whole ---------------------------------------------------------------------------------

def gcp_service_account(rng: random.Random, pem: str) -> str:
    """A Google Cloud service-account key file holding `pem` (PKCS#8, as Google issues them)."""
    project = f"hr-docs-{digits(rng, 6)}"
    return json.dumps({"type": "service_account", "project_id": project, "private_key_id": pick(rng, HEX, 40),
                       "private_key": pem + "\n", "client_email": f"ats-sync@{project}.iam.gserviceaccount.com",
                       "client_id": digits(rng, 21), "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                       "token_uri": "https://oauth2.googleapis.com/token"}, indent=2)


def header_json(carrier: str, header: str) -> str:
    """An Authorization header inside a request's JSON: plain headers or a Postman collection."""
    value = header.split(": ", 1)[1]
    if carrier == "json_headers":
        return json.dumps({"method": "GET", "url": "https://api.lever.co/v1/opportunities",
                           "headers": {"Authorization": value, "Accept": "application/json"}})
    return json.dumps({"info": {"name": "ATS export"}, "item": [{"name": "List candidates", "request": {
        "method": "GET", "header": [{"key": "Authorization", "value": value, "type": "text"}],
        "url": "https://harvest.greenhouse.io/v1/candidates"}}]})


def har_json(cookie: str) -> str:
    """A HAR entry (W3C HAR 1.2 draft) whose request carries `cookie`."""
    name, value = cookie.split("=", 1)
    return json.dumps({"log": {"version": "1.2", "entries": [{"request": {
        "method": "GET", "url": "https://moodle.uni.edu/my/", "cookies": [{"name": name, "value": value}],
        "headers": [{"name": "Cookie", "value": cookie}]}}]}})


# ---- the corpus -------------------------------------------------------------------------------------------------

Gen = Callable[[random.Random], tuple[str, str]]
SPLIT = {"webhook", "connection_string", "auth_header", "session_cookie", "share_link"}
"""Kinds whose generator returns `whole|secret`: the text holds the whole, the secret is its credential part."""

KINDS: dict[str, tuple[Gen, list[T]]] = {
    "password": (password, PASSWORD_CARRIERS), "aws_secret": (aws_secret, AWS_CARRIERS),
    "webhook": (webhook, WEBHOOK_CARRIERS), "stripe_whsec": (stripe_whsec, WHSEC_CARRIERS),
    "connection_string": (connection_string, CONN_CARRIERS), "labelled_key": (labelled_key, LABELLED_CARRIERS),
    "disguised": (disguised, DISGUISED_CARRIERS), "email": (email, EMAIL_CARRIERS),
    "phone_us_ca": (phone_us_ca, PHONE_CARRIERS), "phone_uk": (phone_uk, PHONE_CARRIERS),
    "phone_fr": (phone_fr, PHONE_CARRIERS), "phone_de": (phone_de, PHONE_CARRIERS),
    "phone_in": (phone_in, PHONE_CARRIERS), "ssn": (ssn, SSN_CARRIERS), "card": (card, CARD_CARRIERS),
    "iban": (iban, IBAN_CARRIERS),
    "private_key": (private_key, KEY_CARRIERS), "jwt": (jwt, JWT_CARRIERS),
    "auth_header": (auth_header, HEADER_CARRIERS), "session_cookie": (session_cookie, COOKIE_CARRIERS),
    "shippo_token": (shippo_token, TOKEN_CARRIERS), "sendgrid_key": (sendgrid_key, TOKEN_CARRIERS),
    "google_api_key": (google_api_key, TOKEN_CARRIERS), "github_token": (github_token, TOKEN_CARRIERS),
    "stripe_secret": (stripe_secret, TOKEN_CARRIERS), "share_link": (share_link, SHARE_CARRIERS),
    "phone_es": (phone_es, PHONE_CARRIERS), "phone_it": (phone_it, PHONE_CARRIERS),
    "phone_nl": (phone_nl, PHONE_CARRIERS), "phone_pl": (phone_pl, PHONE_CARRIERS),
    "phone_br": (phone_br, PHONE_CARRIERS), "phone_au": (phone_au, PHONE_CARRIERS),
    "phone_jp": (phone_jp, PHONE_CARRIERS), "phone_tr": (phone_tr, PHONE_CARRIERS),
    "phone_ro": (phone_ro, PHONE_CARRIERS), "phone_kr": (phone_kr, PHONE_CARRIERS),
    **{kind: (gen, ID_CARRIERS[kind]) for kind, gen in
       (("es_dni", es_dni), ("br_cpf", br_cpf), ("pl_pesel", pl_pesel), ("nl_bsn", nl_bsn),
        ("passport_mrz", passport_mrz))},
}


def whole_json(rng: random.Random, carrier: str, whole: str) -> str:
    """The carriers written as a whole JSON document rather than a template."""
    if carrier == "gcp_sa_json":
        return gcp_service_account(rng, whole)
    if carrier == "har_json":
        return har_json(whole)
    return header_json(carrier, whole)


def render(rng: random.Random, kind: str, i: int, tpl: str, native: bool, whole: str) -> str:
    """Fill a carrier's template with the value (`whole`, JSON-escaped inside a JSON template) and its context."""
    put = json.dumps(whole, ensure_ascii=False)[1:-1] if native and ("\n" in whole or '"' in whole) else whole
    if kind in PHONE_WORDS:
        labels, sentence = PHONE_WORDS[kind]
        tpl = tpl.replace("{S}", sentence).replace("{L}", labels[i % len(labels)])
    if kind == "aws_secret":
        tpl = tpl.replace("{id}", aws_id(rng))
    if kind == "passport_mrz":
        tpl = tpl.replace("{cc}", whole[10:13]).replace("{surname}", ascii_slug(rng.choice(NAMES)).split(".")[-1]
                                                       .upper())
    if kind == "session_cookie":
        tpl = tpl.replace("{tab}", whole.replace("=", "\t", 1))
    for mark in ("{url}", "{cs}", "{h}", "{c}"):
        tpl = tpl.replace(mark, "{v}")
    return fill(rng, tpl, put)


def build(rng: random.Random, kind: str, i: int) -> Case:
    """The i-th case of `kind`: a drawn value in its carrier, a sixth of the plain ones inside a JSON envelope."""
    gen, carriers = KINDS[kind]
    whole, style = gen(rng)
    secret = whole.split("|", 1)[1] if kind in SPLIT else whole
    whole = whole.split("|", 1)[0]
    head, tpl, native = carriers[i % len(carriers)]
    text = whole_json(rng, head, whole) if native and not tpl else render(rng, kind, i, tpl, native, whole)
    envelope = "native" if native else ENV_ORDER[(i // 6) % len(ENV_ORDER)] if i % 6 == 1 else ""
    form = f"{head}@{envelope}/{style}" if envelope not in ("", "native") else f"{head}/{style}"
    return Case(kind, secret, text, form, envelope)


def generate() -> Iterator[Case]:
    """PER_KIND cases of every kind, the same on every call."""
    rng = random.Random(1717)
    for kind in KINDS:
        for i in range(PER_KIND):
            yield build(rng, kind, i)


# ---- near misses: what such documents hold that is neither secret nor personal ----------------------------------

def _iso6346(owner: str, serial: str) -> str:
    """An ISO 6346 container number (owner code, category U, serial) with its check digit."""
    val, n = {}, 10
    for c in string.ascii_uppercase:
        if n % 11 == 0:
            n += 1
        val[c] = n
        n += 1
    val.update({d: int(d) for d in string.digits})
    total = sum(val[c] * 2 ** i for i, c in enumerate(owner + "U" + serial))
    return f"{owner}U{serial}{total % 11 % 10}"


def _isbn13(rng: random.Random) -> str:
    body = "978" + digits(rng, 9)
    check = (10 - sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(body)) % 10) % 10
    return f"{body[:3]}-{body[3]}-{body[4:8]}-{body[8:]}-{check}"


def _orcid(rng: random.Random) -> str:
    """An ORCID iD with its ISO 7064 MOD 11-2 check character."""
    body = "0000000" + digits(rng, 8)
    total = 0
    for c in body:
        total = (total + int(c)) * 2
    check = (12 - total % 11) % 11
    full = body + ("X" if check == 10 else str(check))
    return group(full, 4, "-")


def _luhn_bad(rng: random.Random) -> str:
    body = rng.choice("4536") + digits(rng, 14)
    good = luhn_digit(body)
    return group(body + str((int(good) + rng.randint(1, 9)) % 10), 4, " ")


TEST_CARDS = ["4242 4242 4242 4242", "4111 1111 1111 1111", "5555 5555 5555 4444", "3782 822463 10005",
              "4000 0566 5566 5556", "6011 1111 1111 1117", "5105 1051 0510 5100", "4012 8888 8888 1881"]

NEGATIVES: list[tuple[str, Callable[[random.Random], str]]] = [
    ("employment_dates", lambda r: f"{r.choice(['Jan', 'Mar', 'Sep'])} {r.randint(2005, 2019)} – Present · "
                                   f"{r.randint(2, 12)} yrs\nProject Manager, {r.choice(COMPANIES)}"),
    ("postal_codes", lambda r: r.choice(["75008 Paris", "10115 Berlin", "SW1A 2AA London", "560034 Bengaluru",
                                         "M5V 3L9 Toronto", "28013 Madrid", "00-950 Warszawa", "1012 AB Amsterdam",
                                         "01310-100 São Paulo", "150-0002 東京都渋谷区"])
     + f", floor {r.randint(1, 9)}"),
    ("course_grades", lambda r: f"{r.choice(['CS', 'MATH', 'HIST', 'BIO'])} {r.randint(100, 499)}  "
                                f"{r.choice(['A', 'A-', 'B+', 'B'])}  {r.choice(['3.0', '4.0', '6 ECTS'])}  "
                                f"Term {r.randint(2018, 2024)}/{r.randint(1, 2)}  GPA 3.{r.randint(10, 99)}"),
    ("docket_numbers", lambda r: r.choice([f"Case No. 1:{r.randint(20, 24)}-cv-{digits(r, 5)}-JMF",
                                           f"Az. {r.randint(1, 9)} O {r.randint(10, 999)}/{r.randint(20, 24)}",
                                           f"RG n° {r.randint(20, 24)}/{digits(r, 5)}",
                                           f"Index No. {digits(r, 6)}/{r.randint(2020, 2024)}"])),
    ("containers_bl", lambda r: f"Container {_iso6346(r.choice(['MSC', 'MAE', 'CMA', 'HLX']), digits(r, 6))}, "
                                f"B/L No. {r.choice(['MAEU', 'HLCU', 'COSU'])}{digits(r, 9)}, seal {digits(r, 7)}"),
    ("hs_codes", lambda r: f"HS code {r.choice(['8471.30', '6204.62', '0901.21', '8517.13', '3004.90'])}"
                           f".{digits(r, 2)}  Qty {r.randint(1, 900)} CTN  Gross {r.randint(10, 9000)} kg"),
    ("invoice_po", lambda r: f"Invoice INV-{r.randint(2020, 2024)}-{digits(r, 5)}  PO {45}{digits(r, 8)}  "
                             f"Due {r.randint(1, 28):02d}.{r.randint(1, 12):02d}.2024"),
    ("meter_ids", lambda r: r.choice([f"Meter serial E{digits(r, 2)}Z{digits(r, 6)}", f"MPRN {digits(r, 10)}",
                                      f"Zählernummer 1ESY{digits(r, 10)}", f"PDL {digits(r, 14)}"])
     + f"  reading {r.randint(1000, 99999)} kWh"),
    ("booking_refs", lambda r: f"Booking ref {pick(r, string.ascii_uppercase + string.digits, 6)}, confirmation "
                               f"{digits(r, 10)}, room {r.randint(101, 940)}, {r.randint(1, 14)} nights"),
    ("isbn", lambda r: f"Required reading: ISBN {_isbn13(r)} (3rd ed., {r.randint(2010, 2024)})"),
    ("doi", lambda r: f"doi:10.{r.randint(1000, 9999)}/{r.choice(['s41586', 'j.cell', 'nature'])}-"
                      f"{r.randint(2015, 2024)}-{digits(r, 5)}-{r.randint(0, 9)}"),
    ("orcid", lambda r: f"ORCID iD: https://orcid.org/{_orcid(r)}"),
    ("version_doc_ids", lambda r: f"Document ID {pick(r, HEX, 8)} · Rev. {r.randint(1, 9)}.{r.randint(0, 20)}"
                                  f" · Bates KLM{digits(r, 7)} · template v{r.randint(1, 5)}.{r.randint(0, 9)}"),
    ("masked_values", lambda r: r.choice([f"Card ending •••• {digits(r, 4)}", f"SSN ***-**-{digits(r, 4)}",
                                          f"IBAN DE** **** **** **** **{digits(r, 2)} 00", "Password: ********",
                                          f"API key: sk_live_…{pick(r, B62, 4)} (hidden)"])),
    ("placeholders", lambda r: r.choice(["Password: <your password>", "API key: YOUR_API_KEY_HERE",
                                         "DB_PASSWORD=${DB_PASSWORD}", "Temporary password: (sent separately)",
                                         "Contraseña: [la recibirás por SMS]", "Mot de passe : voir courrier"])),
    ("luhn_invalid", lambda r: f"Ref. no. {_luhn_bad(r)} (tracking, not a card)"),
    ("test_card", lambda r: f"For the sandbox use Stripe's test card {r.choice(TEST_CARDS)}, any future date."),
    ("awb_tracking", lambda r: r.choice([f"AWB 176-{digits(r, 8)}", f"UPS 1Z{pick(r, string.ascii_uppercase, 2)}"
                                         f"{digits(r, 2)}{pick(r, string.ascii_uppercase, 2)}{digits(r, 10)}",
                                         f"Tracking {digits(r, 12)} (FedEx)"]) + " — in transit"),
    ("amounts_tariffs", lambda r: f"Total due EUR {r.randint(1, 9)}.{digits(r, 3)},{digits(r, 2)} · tariff "
                                  f"{r.choice(['E7', 'TOU-D', 'Basis'])} · {r.randint(100, 999)} minutes used"),
    ("hashes_uuids", lambda r: f"MD5HASH {pick(r, HEX, 32)}  DOCID {pick(r, HEX, 8)}-{pick(r, HEX, 4)}-"
                               f"{pick(r, HEX, 4)}-{pick(r, HEX, 4)}-{pick(r, HEX, 12)}"),
]
"""(sort, writer): 20 sorts, 20 texts each."""


def generate_negatives() -> Iterator[tuple[str, str]]:
    """20 near misses of each sort, the same on every call."""
    rng = random.Random(1718)
    for sort, write in NEGATIVES:
        for _ in range(20):
            yield sort, write(rng)
