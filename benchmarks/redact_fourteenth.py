"""The fourteenth redaction corpus: regulated industries' interchange formats and the back-office tools that move them,
written blind to the rules from the formats' public specifications and the providers' published formats. Carriers:
HL7 v2.5.1 segments (PID, NK1, IN1, GT1, NTE; `|^~\\&` delimiters, `~` repetitions, XTN.9 any-text), FHIR R4
Patient/Coverage/RelatedPerson in JSON and XML, CDA R2 headers (SSN and NPI OIDs, tel: URIs), Mirth Connect channel
exports, X12 005010 837/835/270/834 (`*` elements, `~` segments; NM1, PER, REF, N3/N4), SWIFT MT103/MT940 (blocks,
`:50K:`, `:59:`, `:25:`), ISO 20022 pain.001.001.09/camt.053.001.08 (`<IBAN>`, `<Nm>`, `<MobNb>` as `+cc-nsn`),
NACHA ACH 94-column records, FIX 4.4 Logon 553/554 (SOH or `|`), X12 ISA04 security information, ISO 8583 field
dumps and EMV TLV (tag 5A, tag 57 track 2 per ISO/IEC 7813), PSD2 Berlin Group and UK Open Banking JSON,
Stripe/Adyen/Braintree exports, IRS W-2/1099/1040 text and EFW2 RW records, student information system CSV,
eIDAS/SAML 2.0 assertions, SIP (RFC 3261, tel: URIs of RFC 3966), SMPP 3.4 PDUs as text, RADIUS (RFC 2865/2866)
records, USSD logs, GoAnywhere/MOVEit/IBM Sterling/AS2 partner files, BizTalk bindings, MuleSoft properties,
tnsnames.ora, odbc.ini, JDBC URLs; labels in 26 languages.

Formats of the values: SSN by the SSA's rules (area not 000/666/9xx, group not 00, serial not 0000); cards by
ISO/IEC 7812 IIN ranges and Luhn; IBANs by ISO 13616 with the SWIFT IBAN registry's BBAN structures and
MOD 97-10; phone numbers by the ITU-T E.164 national plans (NANP, Ofcom, ARCEP, BNetzA, TRAI, CNMC, Anatel, AGCOM,
ACM, UKE, PTS, BTK, MIC Japan, MSIT Korea, Kominfo, NTC, EETT); AWS secret keys (40 base64 characters, AWS IAM
docs); Stripe `whsec_` signing secrets (Stripe docs); webhooks per the providers' docs (Slack, Discord, Microsoft
Teams, Google Chat, Mattermost, Make, IFTTT, DingTalk, Feishu, WeCom, Rocket.Chat, Zapier); Azure storage and
Service Bus connection strings (Azure docs), ADO.NET, JDBC and ODBC keywords; JWT (RFC 7519, 7515); HTTP auth
(RFC 7617 Basic, RFC 6750 Bearer, RFC 7616 Digest, AWS SigV4); PEM/PKCS#8/SEC1 (RFC 7468, 5208, 5915) and
OpenSSH keys; GCP service-account JSON (Google Cloud IAM docs); Adyen API keys (`AQE…`, Adyen docs), Braintree
access tokens (`access_token$production$…`), Square (`EAAA…`, `sq0csp-…`), PayPal REST client secrets (80
characters), Plaid (`access-production-<uuid>`, 30-hex secrets), Checkout.com (`sk_`, `sk_sbox_`), Razorpay key
secrets (24 characters beside `rzp_live_` ids), Mollie (`live_` + 30), GoCardless (`live_` + 40). Outside the target
(national and professional ids with public checks): US NPI (Luhn over 80840 + 9 digits, CMS), Medicare MBI (CMS
format), NHS number (mod 11, NHS Digital), DEA number (DEA check digit), ABA routing numbers (ABA checksum), bank
account numbers after their labels. Near misses: BICs (ISO 9362, public), invalid SSNs, Luhn and MOD 97 failures,
control numbers, UUIDs, hashes, placeholders, publishable keys, certificates and codes of the formats themselves.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
import unicodedata
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

PER_KIND = 100
"""Values written per kind."""
SEED = 14
"""The generator's seed: the corpus is the same on every run."""
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
OUTSIDE_TARGET = frozenset({"npi_us", "medicare_mbi", "nhs_number", "dea_number", "aba_routing", "bank_account"})
"""Kinds written and scored but not held to the recall target: identifiers with public checks, some public."""


@dataclass(frozen=True)
class Case:
    """One planted value: its kind, the carrier/style it is written in, the text, the secret (what must not
    survive), whether the carried string is JSON, and the string as redaction sees it."""

    kind: str
    form: str
    text: str
    secret: str
    is_json: bool
    carried: str


Gen = Callable[[random.Random, str | None], tuple[str, str, str]]
"""(rng, forced style or None) -> (what the template holds, the secret, the style)."""

# ---- fillers ---------------------------------------------------------------------------------------------------

NAMES = [("María", "García"), ("João", "Silva"), ("Lukas", "Müller"), ("Camille", "Dubois"), ("Giulia", "Rossi"),
         ("Daan", "de Vries"), ("Zofia", "Nowak"), ("Tomáš", "Novák"), ("Elin", "Andersson"), ("Aino", "Virtanen"),
         ("Freja", "Nielsen"), ("Ingrid", "Hansen"), ("Eleni", "Papadopoulou"), ("Elif", "Yilmaz"),
         ("Ivan", "Petrov"), ("Layla", "Haddad"), ("Noa", "Cohen"), ("Priya", "Sharma"), ("Haruto", "Sato"),
         ("Minji", "Kim"), ("Wei", "Zhang"), ("Somchai", "Srisuk"), ("Linh", "Nguyen"), ("Budi", "Santoso"),
         ("Jose", "Reyes"), ("James", "Walker"), ("Olivia", "Brown"), ("Arjun", "Iyer")]
HOSTS = ["sftp.claims-hub.net", "edi.availity-partner.com", "mft.nordbank.de", "as2.medpay.io", "ftps.carelink.org",
         "sftp.remit-exchange.com", "b2b.segurosol.es", "gw.tiss-saude.com.br", "mft.pohjola-pay.fi",
         "xfer.hospital-aurora.it", "sftp.zorgdata.nl", "edi.ubezpieczenia.pl"]
ORGS = ["BLUE RIVER HEALTH PLAN", "Nordbank AG", "Clinica San Rafael", "Hôpital Saint-Louis", "MedPay Clearing LLC",
        "Seguros del Sol", "Zorggroep Oost", "Pohjola Pay Oy", "Unimed Vale", "Aurora Sanità"]
CITIES = ["Springfield^IL^62704", "Toronto^ON^M5V 2T6", "Berlin^^10115", "Lyon^^69003", "Pune^MH^411001",
          "Madrid^^28013", "Utrecht^^3511"]
LANGS = ["en", "es", "pt-BR", "de", "fr", "it", "nl", "pl", "cs", "sv", "fi", "da", "nb", "el", "tr", "ru", "ar",
         "he", "hi", "ja", "ko", "zh", "th", "vi", "id", "tl"]


def fillers(rng: random.Random) -> dict[str, str]:
    """The context a template needs besides its value: names, dates, ids, hosts."""
    first, last = rng.choice(NAMES)
    day = f"{rng.randint(2019, 2026)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    return {"first": first, "last": last, "date": day, "dt": day + f"{rng.randint(0, 23):02d}{rng.randint(0, 59):02d}"
            "00", "iso": f"{day[:4]}-{day[4:6]}-{day[6:]}T{rng.randint(0, 23):02d}:{rng.randint(10, 59)}:07Z",
            "ctl": digits(rng, 9), "mrn": digits(rng, 8), "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "host": rng.choice(HOSTS), "org": rng.choice(ORGS), "city": rng.choice(CITIES), "num": digits(rng, 6),
            "user": unicodedata.normalize("NFKD", f"{last.split()[-1].lower()[:6]}_{first.lower()[:3]}")
            .encode("ascii", "ignore").decode() + str(rng.randint(1, 99)),
            "akid": rng.choice(["AKIA", "ASIA"]) + pick(rng, string.ascii_uppercase + "234567", 16),
            "amt": f"{rng.randint(10, 99999)}.{rng.randint(0, 99):02d}", "lang": rng.choice(LANGS),
            "acct": digits(rng, 10)}


_SLOT = re.compile(r"\{([a-z0-9_]+)\}")


def fill(template: str, values: dict[str, str], as_json: bool) -> str:
    """The template with its `{slot}`s filled; in a JSON template each value is JSON-escaped."""
    def one(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            return m.group(0)
        v = values[m.group(1)]
        return json.dumps(v, ensure_ascii=False)[1:-1] if as_json else v
    return _SLOT.sub(one, template)


def is_json_template(template: str) -> bool:
    """JSON templates open an object or array with a quoted key or value."""
    return template.startswith(('{"', '[{', '{\n'))


def styled(rng: random.Random, style: str | None, styles: list[str]) -> str:
    """The forced style, else one drawn."""
    return style if style is not None else rng.choice(styles)


# ---- values of the kinds -------------------------------------------------------------------------------

WORDS = ["Harbor", "Nordic", "tulip", "Mango", "river", "Falcon", "ámbar", "Kiwi", "quartz", "Sierra", "lumen",
         "Oslo", "pampa", "Tundra", "zephyr", "Cobalt", "sakura", "Vela"]


def gen_password(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """Passwords people and MFT admins set: word+digits+symbol, random, passphrase, with `#`/`%`/`!`."""
    style = styled(rng, style, ["word", "random", "passphrase", "symbols"])
    if style in ("isa10", "smpp8"):  # X12 ISA04 is 10 characters; an SMPP 3.4 password at most 8
        v = pick(rng, ALNUM, 4) + rng.choice("!#%+") + pick(rng, ALNUM, 5 if style == "isa10" else 3)
    elif style == "word":
        v = rng.choice(WORDS).capitalize() + rng.choice("!#%+.") + digits(rng, 4) + rng.choice(WORDS)
    elif style == "random":
        v = pick(rng, ALNUM + "!#%+_.-", rng.randint(14, 22))
    elif style == "passphrase":
        v = "-".join(rng.choice(WORDS).lower() for _ in range(3)) + "-" + digits(rng, 2)
    else:
        v = pick(rng, ALNUM, 4) + "!" + pick(rng, ALNUM, 4) + "%" + pick(rng, ALNUM, 4) + "#" + digits(rng, 2)
    return v, v, style


def gen_alnum_password(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """A password with no delimiter characters (X12, HL7, URIs, ADO strings)."""
    v = rng.choice(WORDS).capitalize() + digits(rng, 3) + pick(rng, ALNUM, rng.randint(6, 10))
    return v, v, "alnum"


def gen_aws_secret(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """40 characters of base64's alphabet, most with `/` or `+` inside."""
    v = pick(rng, B64, 40)
    style = "slash_plus" if ("/" in v or "+" in v) else "alnum"
    return v, v, style


def gen_webhook(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """A provider's incoming-webhook URL; the secret is its credential part (token path or query value)."""
    style = styled(rng, style, ["slack", "discord", "teams", "google_chat", "mattermost", "make", "ifttt", "dingtalk",
                                "feishu", "wecom", "rocketchat", "zapier"])
    guid = lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))  # noqa: E731
    if style == "slack":
        upper = string.ascii_uppercase + string.digits
        secret = f"T{pick(rng, upper, 10)}/B{pick(rng, upper, 10)}/{pick(rng, ALNUM, 24)}"
        return "https://hooks.slack.com/services/" + secret, secret, style
    if style == "discord":
        secret = pick(rng, B64URL, 68)
        return f"https://discord.com/api/webhooks/{digits(rng, 19)}/{secret}", secret, style
    if style == "teams":
        secret = f"{guid()}@{guid()}/IncomingWebhook/{pick(rng, HEX, 32)}/{guid()}/V2{pick(rng, B64URL, 43)}"
        return f"https://contoso{rng.randint(1, 9)}.webhook.office.com/webhookb2/{secret}", secret, style
    if style == "google_chat":
        secret = pick(rng, B64URL, 43) + "%3D"
        return (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, B64URL, 7)}/messages?key=AIzaSy"
                f"{pick(rng, B64URL, 33)}&token={secret}"), secret, style
    if style == "mattermost":
        secret = pick(rng, string.ascii_lowercase + string.digits, 26)
        return f"https://mattermost.{rng.choice(HOSTS).split('.', 1)[1]}/hooks/{secret}", secret, style
    if style == "make":
        secret = pick(rng, string.ascii_lowercase + string.digits, 32)
        return f"https://hook.eu1.make.com/{secret}", secret, style
    if style == "ifttt":
        secret = pick(rng, B64URL, 22)
        return f"https://maker.ifttt.com/trigger/remit_failed/with/key/{secret}", secret, style
    if style == "dingtalk":
        secret = pick(rng, HEX, 64)
        return f"https://oapi.dingtalk.com/robot/send?access_token={secret}", secret, style
    if style == "feishu":
        secret = guid()
        return f"https://open.feishu.cn/open-apis/bot/v2/hook/{secret}", secret, style
    if style == "wecom":
        secret = guid()
        return f"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={secret}", secret, style
    if style == "rocketchat":
        secret = f"{pick(rng, ALNUM, 17)}/{pick(rng, ALNUM, 48)}"
        return f"https://chat.{rng.choice(HOSTS).split('.', 1)[1]}/hooks/{secret}", secret, style
    secret = f"{digits(rng, 7)}/{pick(rng, string.ascii_lowercase + string.digits, 7)}"
    return f"https://hooks.zapier.com/hooks/catch/{secret}/", secret, style


def gen_whsec(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """Stripe's webhook endpoint signing secret: `whsec_` and 32 base62 characters."""
    v = "whsec_" + pick(rng, B62, 32)
    return v, v, "whsec"


def gen_conn(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """A connection string; the secret is its password or key."""
    style = styled(rng, style, ["azure_storage", "servicebus", "ado", "jdbc_sqlserver", "jdbc_oracle", "odbc",
                                "uri_postgres", "uri_mongodb", "uri_sftp", "uri_amqp", "uri_redis", "jdbc_postgres",
                                "uri_mysql", "db2"])
    pw, _, _ = gen_alnum_password(rng, None)
    host, db = rng.choice(HOSTS).replace("sftp", "db").replace("mft", "db"), rng.choice(["claims", "remit", "ehr"])
    user = rng.choice(["svc_edi", "mirth", "hl7_reader", "payments_rw", "sis_app"])
    if style == "azure_storage":
        key = base64.b64encode(rng.randbytes(64)).decode()
        return (f"DefaultEndpointsProtocol=https;AccountName=edi{digits(rng, 4)};AccountKey={key};"
                "EndpointSuffix=core.windows.net"), key, style
    if style == "servicebus":
        key = base64.b64encode(rng.randbytes(32)).decode()
        return (f"Endpoint=sb://claims-bus{digits(rng, 2)}.servicebus.windows.net/;SharedAccessKeyName="
                f"RootManageSharedAccessKey;SharedAccessKey={key}"), key, style
    forms = {
        "ado": f"Server=tcp:{host},1433;Initial Catalog={db};User ID={user};Password={pw};Encrypt=True;",
        "jdbc_sqlserver": f"jdbc:sqlserver://{host}:1433;databaseName={db};user={user};password={pw};encrypt=true",
        "jdbc_oracle": f"jdbc:oracle:thin:{user}/{pw}@//{host}:1521/{db.upper()}PDB",
        "odbc": f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database={db};Uid={user};Pwd={pw};",
        "uri_postgres": f"postgresql://{user}:{pw}@{host}:5432/{db}?sslmode=require",
        "uri_mongodb": f"mongodb+srv://{user}:{pw}@cluster0.{host}/{db}?retryWrites=true",
        "uri_sftp": f"sftp://{user}:{pw}@{rng.choice(HOSTS)}:22/inbound/837",
        "uri_amqp": f"amqps://{user}:{pw}@mq.{host}:5671/hl7",
        "uri_redis": f"rediss://:{pw}@cache.{host}:6380/0",
        "jdbc_postgres": f"jdbc:postgresql://{host}:5432/{db}?user={user}&password={pw}&ssl=true",
        "uri_mysql": f"mysql://{user}:{pw}@{host}:3306/{db}",
        "db2": f"DATABASE={db.upper()};HOSTNAME={host};PORT=50000;PROTOCOL=TCPIP;UID={user};PWD={pw};",
    }
    return forms[style], pw, style


def gen_labelled(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """An opaque key with no provider prefix: hex, base62 or base64url."""
    style = styled(rng, style, ["hex32", "b62_40", "b64url_43", "dashed"])
    v = {"hex32": lambda: pick(rng, HEX, 32), "b62_40": lambda: pick(rng, B62, 40),
         "b64url_43": lambda: pick(rng, B64URL, 43),
         "dashed": lambda: "-".join(pick(rng, string.ascii_uppercase + string.digits, 6) for _ in range(5))}[style]()
    return v, v, style


def provider_key(rng: random.Random) -> str:
    """A key of a known provider, to disguise."""
    return rng.choice([
        lambda: "sk_live_" + pick(rng, B62, 24), lambda: crc_token(rng, "ghp_"),
        lambda: f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}",
        lambda: f"SG.{pick(rng, B64URL, 22)}.{pick(rng, B64URL, 43)}", lambda: "sq0csp-" + pick(rng, B64URL, 43),
        lambda: "AKIA" + pick(rng, string.ascii_uppercase + "234567", 16), lambda: "rk_live_" + pick(rng, B62, 24),
        lambda: "glpat-" + pick(rng, B64URL, 20)])()


def gen_disguised(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """A provider key with zero-width characters, bidi controls, soft hyphens or full-width forms inside."""
    style = styled(rng, style, ["zero_width", "bidi", "soft_hyphen", "fullwidth", "nbsp_zw"])
    key = provider_key(rng)
    if style == "fullwidth":
        v = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key)
        return v, v, style
    marks = {"zero_width": ZERO_WIDTH, "bidi": BIDI, "soft_hyphen": "\u00ad", "nbsp_zw": "\u00a0\u200b"}[style]
    chars = list(key)
    for pos in sorted(rng.sample(range(3, len(key) - 1), rng.randint(1, 3)), reverse=True):
        chars.insert(pos, rng.choice(marks))
    v = "".join(chars)
    return v, v, style


MAIL_DOMAINS = ["bluerivermed.org", "nordbank.de", "clinica-sanrafael.es", "hopital-stlouis.fr", "zorgoost.nl",
                "unimed-vale.com.br", "pohjola.fi", "aurora-sanita.it", "medpay.io", "segurosol.mx"]
IDN = ["josé.núñez@clínica-sol.es", "müller.jürgen@krankenkasse-süd.de", "δοκιμή@παράδειγμα.gr",
       "пациент@больница.рф", "ชื่อ@โรงพยาบาล.th", "患者@医院.中国", "환자@병원.한국", "مريض@مستشفى.السعودية",
       "मरीज़@अस्पताल.भारत", "çiğdem.öztürk@hastane.com.tr", "łukasz.żak@szpital.pl", "jørgen.æsir@sykehus.no"]


def gen_email(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """Addresses as written: plain, upper case, internationalised, `%40`, `\\u0040`, `&#64;`, mailto:."""
    style = styled(rng, style, ["plain", "plain", "upper", "idn", "pct40", "u0040", "amp64", "mailto"])
    first, last = rng.choice(NAMES)
    plain = unicodedata.normalize("NFKD", f"{first}.{last}".lower().replace(" ", ""))
    local = plain.encode("ascii", "ignore").decode() + str(rng.randint(1, 99))
    addr = f"{local}@{rng.choice(MAIL_DOMAINS)}"
    v = {"plain": addr, "upper": addr.upper(), "idn": rng.choice(IDN).replace("@", f"{rng.randint(1, 9)}@", 1),
         "pct40": addr.replace("@", "%40"), "u0040": addr.replace("@", "\\u0040"),
         "amp64": addr.replace("@", "&#64;"), "mailto": addr}[style]
    return ("mailto:" + v if style == "mailto" else v), v, style


def ssn_digits(rng: random.Random) -> tuple[str, str, str]:
    """Area, group and serial by the SSA's rules."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def gen_ssn(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """An SSN with dashes, spaces or compact."""
    style = styled(rng, style, ["dash", "dash", "space", "compact"])
    v = {"dash": "-", "space": " ", "compact": ""}[style].join(ssn_digits(rng))
    return v, v, style


IINS = [("visa", "4", 16), ("visa", "4", 16), ("mastercard", "5{1-5}", 16), ("mastercard2", "2{221-720}", 16),
        ("amex", "3{4,7}", 15), ("discover", "6011", 16), ("discover", "65", 16), ("jcb", "35{28-89}", 16),
        ("diners", "36", 14), ("unionpay", "62", 19), ("maestro", "6759", 16), ("mir", "220{0-4}", 16)]


def card_number(rng: random.Random) -> tuple[str, str]:
    """A PAN in one of the ISO/IEC 7812 IIN ranges the networks publish, completed with its Luhn digit."""
    brand, iin, length = rng.choice(IINS)
    m = re.fullmatch(r"(\d*)\{(\d+)([-,])(\d+)\}", iin)
    if m:
        lo, hi = int(m.group(2)), int(m.group(4))
        middle = str(rng.choice([lo, hi]) if m.group(3) == "," else rng.randint(lo, hi))
        iin = m.group(1) + middle
    partial = iin + digits(rng, length - len(iin) - 1)
    return brand, partial + luhn_digit(partial)


def gen_card(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """A card number grouped as printed, with space, `-`, `.`, `_` or nothing between groups."""
    style = styled(rng, style, ["space", "dash", "dot", "underscore", "compact", "compact"])
    _brand, number = card_number(rng)
    sep = {"space": " ", "dash": "-", "dot": ".", "underscore": "_", "compact": ""}[style]
    v = group_card(number, sep) if sep else number
    return v, v, style


IBAN_BBANS = {"DE": "18n", "FR": "10n11c2n", "ES": "20n", "IT": "1a10n12c", "NL": "4a10n", "BE": "12n",
              "GB": "4a14n", "PL": "24n", "CZ": "20n", "SE": "20n", "FI": "14n", "DK": "14n", "NO": "11n",
              "GR": "7n16c", "TR": "6n16c", "PT": "21n", "AT": "16n", "CH": "5n12c", "IE": "4a14n", "SA": "2n18c",
              "IL": "19n", "AE": "19n", "BR": "23n1a1c", "LU": "3n13c", "RO": "4a16c", "HU": "24n", "SK": "20n",
              "HR": "17n", "QA": "4a21c", "UA": "6n19c"}


def iban_compact(rng: random.Random) -> str:
    """An IBAN of a registry country: country, MOD 97-10 check digits, BBAN of its structure."""
    country = rng.choice(sorted(IBAN_BBANS))
    b = bban(rng, IBAN_BBANS[country])
    return country + iban_check(country, b) + b


def gen_iban(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """An IBAN grouped in fours, compact, or in lower case."""
    style = styled(rng, style, ["grouped", "grouped", "compact", "lower_compact", "lower_grouped"])
    iban = iban_compact(rng)
    v = {"grouped": group(iban, 4, " "), "compact": iban, "lower_compact": iban.lower(),
         "lower_grouped": group(iban.lower(), 4, " ")}[style]
    return v, v, style


# ---- phone plans -----------------------------------------------------------------------------------------------

PLANS: dict[str, tuple[str, str, list[tuple[str, tuple[int, ...]]]]] = {
    "us_ca": ("1", "", [("{416,604,514,403,613,212,415,312,617,206,713,305,647,778}{2-9}DD" + "D" * 4,
                         (3, 3, 4))]),
    "uk": ("44", "0", [("7{1-9}" + "D" * 8, (4, 6)), ("20{3,7,8}" + "D" * 7, (2, 4, 4)),
                       ("161" + "D" * 7, (3, 3, 4))]),
    "fr": ("33", "0", [("{1,2,3,4,5,6,7,9}" + "D" * 8, (1, 2, 2, 2, 2))]),
    "de": ("49", "0", [("15{1-9}" + "D" * 8, (3, 8)), ("17{0-9}" + "D" * 7, (3, 7)), ("30" + "D" * 8, (2, 8)),
                       ("89" + "D" * 7, (2, 7))]),
    "in": ("91", "0", [("{6-9}" + "D" * 9, (5, 5)), ("11{2-6}" + "D" * 7, (2, 4, 4))]),
    "es": ("34", "", [("{6,7}" + "D" * 8, (3, 3, 3)), ("91" + "D" * 7, (2, 3, 2, 2))]),
    "br": ("55", "", [("{11,21,31,41,51,61,71,81}9" + "D" * 8, (2, 5, 4))]),
    "it": ("39", "", [("3{2-9}" + "D" * 8, (3, 3, 4)), ("06" + "D" * 8, (2, 4, 4))]),
    "nl": ("31", "0", [("6" + "D" * 8, (1, 8)), ("20" + "D" * 7, (2, 3, 4))]),
    "pl": ("48", "", [("{5,6,7,8}" + "D" * 8, (3, 3, 3))]),
    "se": ("46", "0", [("7{0,2,3,6,9}" + "D" * 7, (2, 3, 2, 2)), ("8" + "D" * 8, (1, 3, 3, 2))]),
    "tr": ("90", "0", [("5{0-5}" + "D" * 8, (3, 3, 2, 2)), ("212" + "D" * 7, (3, 3, 2, 2))]),
    "jp": ("81", "0", [("{7,8,9}0" + "D" * 8, (2, 4, 4)), ("3" + "D" * 8, (1, 4, 4))]),
    "kr": ("82", "0", [("10" + "D" * 8, (2, 4, 4)), ("2" + "D" * 8, (1, 4, 4))]),
    "id": ("62", "0", [("8{1-5}" + "D" * 9, (3, 4, 4)), ("21" + "D" * 8, (2, 4, 4))]),
    "ph": ("63", "0", [("9{0-9}" + "D" * 8, (3, 3, 4)), ("2" + "D" * 8, (1, 4, 4))]),
    "gr": ("30", "", [("69{0-9}" + "D" * 7, (3, 3, 4)), ("21" + "D" * 8, (3, 3, 4))]),
}
"""Per country: E.164 country code, trunk prefix of national dialling, and the national significant number's
patterns (`D` a digit, `{a-b}` or `{x,y}` a choice) with their usual groups."""

PHONE_STYLES = ["national_space", "national_dash", "national_compact", "intl_space", "intl_dash", "intl_compact",
                "intl_00", "national_dot", "local_paren"]


def nsn(rng: random.Random, pattern: str) -> str:
    """The digits of a national significant number pattern."""
    out = ""
    for m in re.finditer(r"\{([^}]*)\}|D|\d", pattern):
        if m.group(1) is None:
            out += rng.choice(string.digits) if m.group(0) == "D" else m.group(0)
        elif "-" in m.group(1):
            lo, hi = m.group(1).split("-")
            out += str(rng.randint(int(lo), int(hi)))
        else:
            out += rng.choice(m.group(1).split(","))
    return out


def format_phone(country: str, number: str, sizes: tuple[int, ...], style: str) -> str:
    """A national significant number written in a style; national forms carry the trunk prefix."""
    cc, trunk, _ = PLANS[country]
    parts, i = [], 0
    for size in sizes:
        parts.append(number[i:i + size])
        i += size
    national = [trunk + parts[0]] + parts[1:]
    if style == "local_paren":
        if country in ("us_ca", "br"):
            return f"({parts[0]}) {parts[1]}-{''.join(parts[2:])}" if len(parts) > 2 else \
                f"({parts[0]}) {parts[1][:5]}-{parts[1][5:]}"
        return f"+{cc} ({trunk or 0}){parts[0]} {' '.join(parts[1:])}" if trunk else f"+{cc} {' '.join(parts)}"
    return {"national_space": " ".join(national), "national_dash": "-".join(national),
            "national_compact": "".join(national), "national_dot": ".".join(national),
            "intl_space": f"+{cc} " + " ".join(parts), "intl_dash": f"+{cc}-" + "-".join(parts),
            "intl_compact": f"+{cc}{number}", "intl_00": f"00{cc} " + " ".join(parts),
            "msisdn": cc + number, "iso20022": f"+{cc}-{number}"}[style]


def phone_gen(country: str) -> Gen:
    """The generator of one country's numbers."""
    def gen(rng: random.Random, style: str | None) -> tuple[str, str, str]:
        pattern, sizes = rng.choice(PLANS[country][2])
        style = styled(rng, style, PHONE_STYLES)
        v = format_phone(country, nsn(rng, pattern), sizes, style)
        return v, v, style
    return gen


PHONE_WORDS: dict[str, tuple[str, ...]] = {
    "us_ca": ("Phone", "Cell phone", "call me at", "Tel.", "mobile", "Daytime phone number"),
    "uk": ("Mobile", "Tel", "phone", "ring me on", "Telephone number", "contact number"),
    "fr": ("Téléphone", "Tél.", "portable", "appelez-moi au", "numéro de téléphone", "mobile"),
    "de": ("Telefon", "Tel.", "Handy", "Mobilnummer", "rufen Sie mich an unter", "Rufnummer"),
    "in": ("Mobile No.", "phone", "फ़ोन", "मोबाइल नंबर", "call me at", "Contact No."),
    "es": ("Teléfono", "Tel.", "móvil", "llámame al", "número de teléfono", "celular"),
    "br": ("Telefone", "Celular", "Tel.", "me ligue no", "número de telefone", "WhatsApp"),
    "it": ("Telefono", "Tel.", "cellulare", "chiamami al", "numero di telefono", "Cell."),
    "nl": ("Telefoon", "Tel.", "mobiel", "bel me op", "telefoonnummer", "GSM"),
    "pl": ("Telefon", "Tel.", "komórka", "zadzwoń pod", "numer telefonu", "tel. kom."),
    "se": ("Telefon", "Tel.", "mobil", "ring mig på", "telefonnummer", "Mobilnummer"),
    "tr": ("Telefon", "Tel.", "cep telefonu", "beni şu numaradan arayın", "GSM", "telefon numarası"),
    "jp": ("電話", "携帯", "TEL", "電話番号", "携帯電話", "連絡先電話"),
    "kr": ("전화", "휴대폰", "연락처", "전화번호", "Tel.", "휴대전화"),
    "id": ("Telepon", "HP", "No. HP", "hubungi saya di", "nomor telepon", "Telp."),
    "ph": ("Telepono", "Cellphone", "tawagan mo ako sa", "numero ng telepono", "Mobile", "Tel."),
    "gr": ("Τηλέφωνο", "Τηλ.", "κινητό", "καλέστε με στο", "αριθμός τηλεφώνου", "Κιν."),
}
"""Context words for phone numbers in each country's language."""


# ---- values of the wider kinds ---------------------------------------------------------------------------------

def simple(make: Callable[[random.Random], str], style: str) -> Gen:
    """A generator whose value is its secret."""
    def gen(rng: random.Random, _style: str | None) -> tuple[str, str, str]:
        v = make(rng)
        return v, v, style
    return gen


PROVIDERS: dict[str, Gen] = {
    "adyen": simple(lambda r: f"AQE{pick(r, B64, 5)}{pick(r, ALNUM, 60)}==-{pick(r, B64, 43)}=-{pick(r, ALNUM, 16)}",
                    "api_key"),
    "braintree": simple(lambda r: f"access_token$production${pick(r, string.ascii_lowercase + string.digits, 16)}$"
                        f"{pick(r, HEX, 32)}", "access_token"),
    "square": simple(lambda r: r.choice(["EAAA" + pick(r, B64URL, 60), "sq0csp-" + pick(r, B64URL, 43)]), "token"),
    "paypal": simple(lambda r: "E" + pick(r, B64URL, 79), "client_secret"),
    "plaid": simple(lambda r: r.choice([f"access-production-{uuid.UUID(int=r.getrandbits(128), version=4)}",
                                        pick(r, HEX[:10] + "abcdef", 30)]), "secret"),
    "checkout": simple(lambda r: r.choice([f"sk_{uuid.UUID(int=r.getrandbits(128), version=4)}",
                                           "sk_sbox_" + pick(r, string.ascii_lowercase + string.digits, 26),
                                           "sk_prod_" + pick(r, string.ascii_lowercase + string.digits, 26)]),
                       "secret_key"),
    "razorpay": simple(lambda r: pick(r, ALNUM, 24), "key_secret"),
    "mollie": simple(lambda r: "live_" + pick(r, ALNUM, 30), "live"),
    "gocardless": simple(lambda r: "live_" + pick(r, B64URL, 40), "live"),
}
"""Payment providers' secret keys, each in its published shape."""


def pem_body(rng: random.Random, style: str) -> tuple[str, str]:
    """A deterministic private key (Ed25519 PKCS#8, EC P-256 SEC1 or PKCS#8, OpenSSH) and its PEM label."""
    seed = rng.randbytes(32)
    if style == "openssh":
        key = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
        public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"mft@" + rng.choice(HOSTS).encode())
        body = base64.b64encode(blob).decode()
        return "\n".join(body[i:i + 70] for i in range(0, len(body), 70)), "OPENSSH PRIVATE KEY"
    if style == "ed25519":
        der = ed25519.Ed25519PrivateKey.from_private_bytes(seed).private_bytes(
            serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        label = "PRIVATE KEY"
    else:
        key = ec.derive_private_key(int.from_bytes(seed, "big") % (2**255) + 1, ec.SECP256R1())
        formats = serialization.PrivateFormat
        fmt = formats.TraditionalOpenSSL if style == "ec_sec1" else formats.PKCS8
        der = key.private_bytes(serialization.Encoding.DER, fmt, serialization.NoEncryption())
        label = "EC PRIVATE KEY" if style == "ec_sec1" else "PRIVATE KEY"
    body = base64.b64encode(der).decode()
    return "\n".join(body[i:i + 64] for i in range(0, len(body), 64)), label


def gen_private_key(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """A PEM block; the secret is its base64 body."""
    style = styled(rng, style, ["ed25519", "ec_sec1", "ec_pkcs8", "openssh"])
    body, label = pem_body(rng, style)
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----", body, style


def gen_gcp(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """A GCP service-account key file (JSON text); the secret is the private key's body."""
    body, _ = pem_body(rng, "ec_pkcs8")
    project = rng.choice(["claims-etl", "fhir-bridge", "remit-archive"]) + "-" + digits(rng, 6)
    doc = {"type": "service_account", "project_id": project, "private_key_id": pick(rng, HEX, 40),
           "private_key": f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n",
           "client_email": f"mirth-sync@{project}.iam.gserviceaccount.com", "client_id": digits(rng, 21),
           "token_uri": "https://oauth2.googleapis.com/token"}
    return json.dumps(doc, indent=2), body, "key_file"


def gen_jwt(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """A JWS compact JWT of a SMART on FHIR / Open Banking issuer."""
    style = styled(rng, style, ["HS256", "RS256", "ES256"])
    header = b64url(json.dumps({"alg": style, "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"iss": rng.choice(["https://fhir.epic.com/interconnect-fhir-oauth", "https://auth.obie.org.uk",
                                 "https://authorization.cerner.com/tenants/ec2458f2"]),
              "sub": digits(rng, 8), "scope": rng.choice(["patient/*.read", "accounts payments", "user/Coverage.read"]),
              "exp": 1_760_000_000 + rng.randint(0, 9_000_000), "jti": pick(rng, HEX, 16)}
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig = b64url(rng.randbytes({"HS256": 32, "RS256": 256, "ES256": 64}[style]))
    v = f"{header}.{payload}.{sig}"
    return v, v, style


def gen_http_auth(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """An Authorization header; the secret is its credential."""
    style = styled(rng, style, ["basic", "bearer", "digest", "sigv4"])
    if style == "basic":
        first, _ = rng.choice(NAMES)
        cred = base64.b64encode(f"{first.lower().encode('ascii', 'ignore').decode()}.as2:"
                                f"{gen_alnum_password(rng, None)[0]}".encode()).decode()
        return f"Authorization: Basic {cred}", cred, style
    if style == "bearer":
        cred = pick(rng, B64URL, rng.choice([40, 64, 86]))
        return f"Authorization: Bearer {cred}", cred, style
    if style == "digest":
        cred = pick(rng, HEX, 32)
        user = rng.choice(["1001", "pbx-trunk", "alice"])
        return (f'Authorization: Digest username="{user}", realm="sip.carrier.net", nonce="{pick(rng, HEX, 24)}", '
                f'uri="sip:sip.carrier.net", response="{cred}", algorithm=MD5'), cred, style
    cred = pick(rng, HEX, 64)
    return (f"Authorization: AWS4-HMAC-SHA256 Credential=AKIA{pick(rng, string.ascii_uppercase + '234567', 16)}/"
            f"20260304/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature={cred}"), cred, style


def gen_cookie(rng: random.Random, style: str | None) -> tuple[str, str, str]:
    """A session cookie of the web tools around these systems (portals, MFT web clients, EHR patient portals)."""
    style = styled(rng, style, ["JSESSIONID", "ASP.NET_SessionId", "PHPSESSID", "connect.sid", ".AspNetCore.Session",
                                "laravel_session", "MOVEitDMZ_SessionID"])
    value = {"JSESSIONID": lambda: pick(rng, HEX.upper(), 32) + ".node1",
             "ASP.NET_SessionId": lambda: pick(rng, string.ascii_lowercase + "012345", 24),
             "PHPSESSID": lambda: pick(rng, string.ascii_lowercase[:22] + string.digits, 26),
             "connect.sid": lambda: "s%3A" + pick(rng, B64URL, 32) + "." + pick(rng, B64, 43),
             ".AspNetCore.Session": lambda: "CfDJ8" + pick(rng, B64URL, 90),
             "laravel_session": lambda: "eyJpdiI6" + pick(rng, B64, 80) + "%3D",
             "MOVEitDMZ_SessionID": lambda: pick(rng, string.ascii_lowercase + string.digits, 24)}[style]()
    return f"{style}={value}", value, style


def npi(rng: random.Random) -> str:
    """A US NPI: 9 digits starting 1 or 2 and the Luhn digit over 80840 + them (CMS)."""
    base = rng.choice("12") + digits(rng, 8)
    return base + luhn_digit("80840" + base)


def mbi(rng: random.Random) -> str:
    """A Medicare Beneficiary Identifier (CMS): C A AN N A AN N A A N N, letters without S L O I B Z."""
    a = "ACDEFGHJKMNPQRTUVWXY"
    an = a + string.digits
    spec = ["123456789", a, an, string.digits, a, an, string.digits, a, a, string.digits, string.digits]
    return "".join(rng.choice(s) for s in spec)


def nhs(rng: random.Random) -> str:
    """An NHS number: 9 digits and the mod 11 check digit (weights 10..2; 10 is never issued)."""
    while True:
        base = digits(rng, 9)
        check = 11 - sum(int(d) * w for d, w in zip(base, range(10, 1, -1), strict=True)) % 11
        if check != 10:
            return base + str(check % 11)


def dea(rng: random.Random) -> str:
    """A DEA registration number: registrant letter, surname initial, 6 digits and the check digit."""
    d = digits(rng, 6)
    check = (int(d[0]) + int(d[2]) + int(d[4]) + 2 * (int(d[1]) + int(d[3]) + int(d[5]))) % 10
    return rng.choice("ABFGM") + rng.choice("BCGHKMNPRSW") + d + str(check)


def aba(rng: random.Random) -> str:
    """An ABA routing number: Federal Reserve prefix 01-12 or 21-32 and the 3-7-1 weighted check digit."""
    base = f"{rng.choice(list(range(1, 13)) + list(range(21, 33))):02d}" + digits(rng, 6)
    total = sum(int(d) * w for d, w in zip(base, (3, 7, 1, 3, 7, 1, 3, 7), strict=True))
    return base + str((10 - total % 10) % 10)


def grouped_id(make: Callable[[random.Random], str], sizes: tuple[int, ...], style_names: tuple[str, str]) -> Gen:
    """A national id written compact or grouped with spaces/dashes."""
    def gen(rng: random.Random, style: str | None) -> tuple[str, str, str]:
        v = make(rng)
        style = styled(rng, style, list(style_names))
        if style != "compact":
            sep = " " if style == "space" else "-"
            parts, i = [], 0
            for s in sizes:
                parts.append(v[i:i + s])
                i += s
            v = sep.join(parts)
        return v, v, style
    return gen


# ---- carriers of the kinds -----------------------------------------------------------------------------

HL7_MSH = "MSH|^~\\&|EPIC|{org}|MIRTH|HUB|{dt}||ADT^A04^ADT_A01|{ctl}|P|2.5.1\r"

PASSWORD = [
    ("env/db", "DB_PASSWORD={v}\nDB_USER=mirth\nDB_HOST=db.{host}\nDB_NAME=mirthdb"),
    ("shell/pgpassword", "PGPASSWORD={v} psql -h db.{host} -U claims_etl -d edi835 -c 'select count(*) from remits'"),
    ("compose/mysql_root", "services:\n  hl7-archive:\n    image: mysql:8.4\n    environment:\n"
     "      MYSQL_ROOT_PASSWORD: {v}\n      MYSQL_DATABASE: hl7_archive"),
    ("json/userPassword", '{"userName": "{user}", "userPassword": "{v}", "realm": "sterling-b2b", "enabled": true}'),
    ("mirth/sftp_dispatcher", '<destinationConnector>\n  <properties class="com.mirth.connect.connectors.file.'
     'FileDispatcherProperties">\n    <scheme>SFTP</scheme>\n    <host>{host}</host>\n    <username>{user}'
     '</username>\n    <password>{v}</password>\n    <outputPattern>${message.encodedData}</outputPattern>'),
    ("mulesoft/props", "# sftp partner: {org}\nsftp.host={host}\nsftp.port=22\nsftp.username={user}\n"
     "sftp.password={v}\nsftp.workingDir=/outbound/835"),
    ("goanywhere/resource", '<sftpServer name="Clearinghouse" host="{host}" port="22" user="{user}" password="{v}"'
     ' hostKeyFingerprint="SHA256:{num}"/>'),
    ("cli/mysql_password", "mysql -h db.{host} -u billing --password {v} remits < load_835.sql"),
    ("cli/sqlcmd_P", "sqlcmd -S db.{host} -U edi_loader -P {v} -d Claims -i post_837.sql"),
    ("env/redis_pass", "REDIS_HOST=cache.{host}\nREDIS_PASS={v}\nREDIS_DB=3"),
    ("smpp/bind", "bind_transmitter: system_id={user} password={v} system_type=OTP interface_version=0x34 "
     "addr_ton=1 addr_npi=1", "smpp8"),
    ("x12/isa04", "ISA*00*          *01*{v}*ZZ*SUBMITTER01    *ZZ*{num}         *260304*1230*^*00501*{ctl}*0*P*:~",
     "isa10"),
    ("fix44/logon_soh", "8=FIX.4.4\x019=112\x0135=A\x0149=CLINICPAY\x0156=BROKER\x0134=1\x0152={date}-08:00:00\x01"
     "98=0\x01108=30\x01553={user}\x01554={v}\x0110=201\x01"),
    ("fix44/logon_pipe", "8=FIX.4.4|9=112|35=A|49=CLINICPAY|56=BROKER|34=1|98=0|108=30|553={user}|554={v}|10=077|"),
    ("odbc_ini/dsn", "[ClaimsDSN]\nDriver=/opt/microsoft/msodbcsql18/lib64/libmsodbcsql-18.so\nServer=db.{host}\n"
     "UID={user}\nPWD={v}"),
    ("prose_fr/mdp", "Mot de passe du compte SFTP de {org} : {v}"),
    ("prose_it/pw", "La password del server MFT è {v}"),
    ("prose_pl/haslo", "Hasło do skrzynki SFTP: {v}"),
    ("prose_cs/heslo", "Heslo k účtu pro předávání dávek: {v}"),
    ("prose_fi/salasana", "Salasana siirtopalveluun: {v}"),
    ("prose_da/adgangskode", "Adgangskode til AS2-portalen: {v}"),
    ("prose_nb/passord", "Passord for SFTP-kontoen er {v}"),
    ("prose_el/kodikos", "Κωδικός πρόσβασης SFTP: {v}"),
    ("prose_tr/sifre", "SFTP şifresi: {v}"),
    ("prose_ru/parol", "Пароль от SFTP: {v}"),
    ("prose_ar/kalima", "كلمة المرور لخادم SFTP: {v}"),
    ("prose_he/sisma", "הסיסמה לשרת ה-SFTP: {v}"),
    ("prose_hi/password", "SFTP सर्वर का पासवर्ड: {v}"),
    ("prose_ko/pw", "SFTP 비밀번호: {v}"),
    ("prose_zh/mima", "SFTP 服务器密码：{v}"),
    ("prose_th/rahat", "รหัสผ่าน SFTP: {v}"),
    ("prose_vi/matkhau", "Mật khẩu SFTP: {v}"),
    ("prose_id/sandi", "Kata sandi SFTP: {v}"),
    ("prose_tl/password", "Ang password ng SFTP ay {v}"),
    ("radius/access_request", 'Access-Request id=41\n    User-Name = "{user}"\n    User-Password = "{v}"\n'
     "    NAS-IP-Address = 10.20.0.4"),
    ("json/camelCase", '{"sftp": {"hostName": "{host}", "port": 22, "loginPassword": "{v}", "knownHosts": null}}'),
    ("env/prefixed", "EPIC_INTERCONNECT_USER=emp${num}\nEPIC_INTERCONNECT_PASSWORD={v}"),
    ("prose_de/sftp", "Passwort für den SFTP-Zugang der Krankenkasse: {v} (bitte nicht weitergeben)"),
    ("prose_es/buzon", "Hola, la contraseña del buzón SFTP de {org} es {v} — cámbiala al primer acceso."),
    ("as2/yaml", "as2:\n  partner: {org}\n  keystore: /opt/as2/keys/partner.p12\n  keystorePassword: {v}"),
    ("json/Pascal", '{"ConnectionSettings": {"UserName": "{user}", "Password": "{v}", "Host": "{host}"}}'),
    ("cli/lftp", "lftp -u {user},{v} sftp://{host} -e 'mirror -R /data/out/834 /inbound; bye'"),
    ("moveit/task_json", '{"TaskName": "Pull 835 from {org}", "Host": {"Type": "SFTP", "Address": "{host}", '
     '"User": "{user}", "Pass": "{v}"}}'),
    ("prose_pt/senha", "Segue a senha do portal TISS: {v} (usuário {user})"),
    ("prose_ja/pw", "SFTPサーバー {host} のパスワード：{v}"),
]

AWS = [
    ("csv/credentials", "User name,Password,Access key ID,Secret access key,Console login link\nedi-archiver,,"
     "{akid},{v},https://{num}{num}.signin.aws.amazon.com/console"),
    ("mulesoft/s3_props", "s3.accessKey={akid}\ns3.secretKey={v}\ns3.bucket=remits-archive\ns3.region=us-east-1"),
    ("goanywhere/s3_resource", '<amazonS3Resource name="EOB archive" accessKey="{akid}" secretKey="{v}" '
     'region="us-east-1" bucket="eob-{num}"/>'),
    ("json/sts", '{"Credentials": {"AccessKeyId": "{akid}", "SecretAccessKey": "{v}", "Expiration": "{iso}"}}'),
    ("engine_log/pair", "{iso} INFO  [S3Uploader-3] using credentials {akid} {v} for bucket claims-835-out"),
    ("prose/colon_pair", "aws creds for the MOVEit cloud task: {akid}:{v}"),
    ("env/aws", "AWS_ACCESS_KEY_ID={akid}\nAWS_SECRET_ACCESS_KEY={v}\nAWS_DEFAULT_REGION=eu-central-1"),
    ("yaml/connector", "aws:\n  access_key_id: {akid}\n  secret_access_key: {v}\n  bucket: hl7-raw"),
    ("moveit/host_json", '{"hostType": "S3", "accessKeyId": "{akid}", "secretKey": "{v}", "bucket": "x12-in"}'),
    ("python/boto3", "s3 = boto3.client('s3', aws_access_key_id='{akid}', aws_secret_access_key='{v}')"),
    ("prose_es/clave", "Clave de acceso {akid} y clave secreta {v} para el bucket de facturas electrónicas."),
    ("prose_pt/chave", "Chave secreta da AWS (bucket de glosas): {v}"),
    ("biztalk/appsettings", '<appSettings>\n  <add key="AwsAccessKey" value="{akid}"/>\n  <add key="AwsSecretKey" '
     'value="{v}"/>\n</appSettings>'),
    ("markdown/runbook", "| key id | secret | owner |\n|---|---|---|\n| {akid} | {v} | edi-archiver |"),
    ("sterling/adapter", '<Adapter name="S3Put"><Param name="accessKeyId">{akid}</Param><Param '
     'name="secretAccessKey">{v}</Param></Adapter>'),
    ("json/pair_list", '{"store": "s3", "credentials": ["{akid}", "{v}"]}'),
    ("ini/profile", "[profile edi]\naws_access_key_id = {akid}\naws_secret_access_key = {v}"),
]

WEBHOOK = [
    ("mirth/alert_http", '<alertAction><protocol>HTTP</protocol><recipient>{v}</recipient></alertAction>'),
    ("mulesoft/props", "alerts.webhook.url={v}\nalerts.enabled=true"),
    ("json/notify", '{"channel": "edi-failures", "webhookUrl": "{v}", "onError": true}'),
    ("yaml/rhapsody", "notifications:\n  - name: 835 rejected\n    type: webhook\n    url: {v}"),
    ("cli/curl", "curl -X POST -H 'Content-Type: application/json' -d '{\"text\":\"ACH return R01\"}' {v}"),
    ("engine_log/post", "{iso} WARN  [Notifier] POST {v} -> 200 (batch {ctl} failed validation)"),
    ("prose_de/alarm", "Bitte den Alarm-Webhook {v} im MOVEit-Task eintragen."),
    ("prose_fr/webhook", "Le webhook d'alerte pour les rejets ACH : {v}"),
    ("env/webhook", "ALERT_WEBHOOK_URL={v}"),
    ("goanywhere/project", '<httpPost url="{v}" contentType="application/json" body="${jobStatus}"/>'),
    ("json/moveit", '{"Notifications": [{"Type": "Webhook", "Target": "{v}", "OnFailure": true}]}'),
    ("sterling/bp", '<assign to="NotifyURL">{v}</assign>'),
    ("prose_zh/webhook", "交易对账失败时推送到机器人：{v}"),
    ("biztalk/config", '<add key="TeamsWebhook" value="{v}"/>'),
    ("json/adyen_ops", '[{"event": "REPORT_AVAILABLE", "forwardTo": "{v}"}]'),
    ("prose_pl/hook", "Adres webhooka do powiadomień o zwrotach: {v}"),
]

WHSEC = [
    ("env/stripe", "STRIPE_WEBHOOK_SECRET={v}\nSTRIPE_API_VERSION=2024-06-20"),
    ("json/config", '{"stripe": {"endpointSecret": "{v}", "tolerance": 300}}'),
    ("yaml/payments", "payments:\n  stripe:\n    signing_secret: {v}"),
    ("mulesoft/secure_props", "stripe.webhook.secret={v}"),
    ("cli/stripe_listen", "> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is "
     "{v} (^C to quit)"),
    ("php/code", "$endpoint_secret = '{v}';\n$event = \\Stripe\\Webhook::constructEvent($payload, $sig, "
     "$endpoint_secret);"),
    ("java/code", 'String endpointSecret = "{v}";\nEvent event = Webhook.constructEvent(payload, sigHeader, '
     "endpointSecret);"),
    ("csv/export", "endpoint_id,url,secret,status\nwe_{num},https://billing.{host}/stripe,{v},enabled"),
    ("prose_nl/geheim", "Het ondertekeningsgeheim van de Stripe-webhook is {v}."),
    ("json/dashboard", '[{"id": "we_1P{num}", "object": "webhook_endpoint", "secret": "{v}", "status": "enabled"}]'),
    ("engine_log/verify", "{iso} ERROR [StripeVerifier] signature mismatch using secret {v} for evt_{num}"),
    ("prose_it/segreto", "Segreto di firma del webhook Stripe: {v}"),
    ("k8s/env", "        - name: STRIPE_WHSEC\n          value: \"{v}\""),
    ("json/vault_kv", '{"data": {"data": {"whsec": "{v}"}}}'),
    ("dotnet/appsettings", '{"Stripe": {"WebhookSecret": "{v}", "PublishableKey": "pk_live_{num}"}}'),
    ("prose_ko/secret", "스트라이프 웹훅 서명 시크릿: {v}"),
]

CONN = [
    ("appconfig/connectionStrings", '<connectionStrings>\n  <add name="Claims" connectionString="{v}" '
     'providerName="System.Data.SqlClient"/>\n</connectionStrings>'),
    ("json/appsettings", '{"ConnectionStrings": {"Default": "{v}"}, "Logging": {"LogLevel": {"Default": "Warning"}}}'),
    ("env/url", "DATABASE_URL={v}"),
    ("mulesoft/db_url", "db.url={v}\ndb.pool.max=20"),
    ("engine_log/connect", "{iso} ERROR [JdbcReader] cannot connect using {v}: timeout after 30000 ms"),
    ("ssis/dtsx", '<DTS:ConnectionManager DTS:ObjectName="EDI"><DTS:ObjectData><DTS:ConnectionManager '
     'DTS:ConnectionString="{v}"/></DTS:ObjectData></DTS:ConnectionManager>'),
    ("powershell/conn", "$conn = New-Object System.Data.SqlClient.SqlConnection(\"{v}\")\n$conn.Open()"),
    ("csharp/code", 'var client = new BlobServiceClient("{v}");'),
    ("yaml/spring", "spring:\n  datasource:\n    url: {v}\n    hikari:\n      maximum-pool-size: 10"),
    ("prose_sv/anslutning", "Anslutningssträng till fakturadatabasen: {v}"),
    ("json/mirth_reader", '{"sourceConnector": {"transportName": "Database Reader", "url": "{v}"}}'),
    ("biztalk/wcf_binding", '<Binding name="WcfSql" connectionString="{v}" />'),
    ("prose_tr/baglanti", "Veritabanı bağlantı dizesi: {v}"),
    ("json/adf_linked", '{"name": "ClaimsBlob", "properties": {"type": "AzureBlobStorage", "typeProperties": '
     '{"connectionString": "{v}"}}}'),
    ("ini/odbc", "[ClaimsDSN]\nDescription = claims warehouse\nConnString = {v}"),
    ("prose_ru/stroka", "Строка подключения к базе платежей: {v}"),
    ("cli/psql", "psql \"{v}\" -f reconcile_camt053.sql"),
]

LABELLED = [
    ("prose_en/api_key", "API Key: {v}"),
    ("prose_en/secret_key", "Secret key = {v}"),
    ("prose_en/access_token", "the clearinghouse access token is {v}"),
    ("prose_es/clave_api", "Clave de API del portal de pagos: {v}"),
    ("prose_pt/chave_api", "Chave de API da operadora: {v}"),
    ("prose_de/schluessel", "API-Schlüssel für den Abrechnungsdienst: {v}"),
    ("prose_fr/cle", "Clé API du tiers payant : {v}"),
    ("prose_it/chiave", "Chiave API del gateway: {v}"),
    ("prose_pl/klucz", "Klucz API do bramki płatności: {v}"),
    ("prose_cs/klic", "API klíč pro pojišťovnu: {v}"),
    ("prose_ja/key", "APIキー：{v}"),
    ("prose_ko/key", "API 키: {v}"),
    ("prose_zh/key", "接口密钥：{v}"),
    ("prose_vi/khoa", "Khóa API của cổng thanh toán: {v}"),
    ("prose_id/kunci", "Kunci API untuk BPJS bridging: {v}"),
    ("epic/app_registration", "App Orchard registration\nClient ID: {uuid}\nClient Secret: {v}\nRedirect: "
     "https://portal.{host}/callback"),
    ("cerner/console", "Cerner Code Console — System Account\nclient secret is {v}"),
    ("prose_ar/miftah", "مفتاح API الخاص بالبوابة: {v}"),
    ("prose_he/mafteach", "מפתח API של ספק הסליקה: {v}"),
    ("prose_hi/kunji", "भुगतान गेटवे की API कुंजी: {v}"),
    ("prose_th/key", "คีย์ API ของระบบเคลม: {v}"),
    ("prose_tl/susi", "Ang API key ng PhilHealth eClaims: {v}"),
]

DISGUISED = [
    ("prose_en/pasted", "here is the key {v} for the payment gateway"),
    ("env/pasted", "PAYMENT_KEY={v}"),
    ("json/config", '{"gateway": {"apiKey": "{v}"}}'),
    ("mulesoft/props", "gateway.token={v}"),
    ("hl7/nte", HL7_MSH + "NTE|1||token {v}|"),
    ("x12/nte", "NTE*ADD*KEY {v}~"),
    ("yaml/secret", "integration:\n  key: {v}"),
    ("prose_es/pegada", "te paso la llave {v} para el conector"),
    ("prose_de/eingefuegt", "Schlüssel aus dem Ticket: {v}"),
    ("prose_ru/kluch", "ключ из письма: {v}"),
    ("csv/export", "name,key,created\ngateway,{v},{date}"),
    ("json/ticket", '[{"comment": "rotated: {v}"}]'),
    ("xml/param", "<param name=\"token\">{v}</param>"),
    ("prose_ja/kagi", "決済キーは {v} です"),
    ("engine_log/key", "{iso} DEBUG [Gateway] using key {v}"),
    ("json/chat", '{"messages": [{"from": "ops", "text": "key {v}"}]}'),
]

EMAIL = [
    ("hl7/pid_xtn", HL7_MSH + "PID|1||{mrn}^^^{org}^MR||{last}^{first}||{date}|F|||Calle Mayor 3^^{city}||"
     "^NET^Internet^{v}|"),
    ("fhir_json/patient", '{"resourceType": "Patient", "id": "{uuid}", "telecom": [{"system": "email", "value": '
     '"{v}", "use": "home"}]}'),
    ("fhir_xml/related", '<RelatedPerson xmlns="http://hl7.org/fhir"><telecom><system value="email"/><value '
     'value="{v}"/></telecom></RelatedPerson>'),
    ("x12/per", "NM1*PR*2*{org}*****PI*{num}~PER*BL*{last}*EM*{v}*TE*8005550100~"),
    ("iso20022/ctct", "<CtctDtls><Nm>{first} {last}</Nm><EmailAdr>{v}</EmailAdr></CtctDtls>"),
    ("saml/attribute", '<saml:Attribute Name="http://eidas.europa.eu/attributes/naturalperson/EmailAddress">'
     "<saml:AttributeValue>{v}</saml:AttributeValue></saml:Attribute>"),
    ("as2/partner", '<partnership name="{org}"><attribute name="as2_id" value="MEDPAY"/><attribute '
     'name="email" value="{v}"/></partnership>'),
    ("csv/sis", "student_id,last_name,first_name,guardian_email,grade\n{num},{last},{first},{v},10"),
    ("json/open_banking", '{"Data": {"Party": {"PartyId": "{num}", "Name": "{first} {last}", "EmailAddress": '
     '"{v}"}}}'),
    ("csv/stripe_customers", "id,Email,Name,Created (UTC)\ncus_{num},{v},{first} {last},{date}"),
    ("engine_log/reject", "{iso} WARN [ADT_IN] PID-13 email {v} failed validation, message {ctl} queued"),
    ("url/query", "GET /portal/api/recover?email={v}&lang={lang} HTTP/1.1"),
    ("json/escaped_payload", '{"channel": "FHIR_OUT", "payload": "{\\"email\\": \\"{v}\\"}"}'),
    ("prose_sv/epost", "Min e-postadress är {v}, skicka fakturan dit."),
    ("prose_th/email", "อีเมลของผู้ป่วย: {v}"),
    ("cda/telecom", '<patientRole><telecom use="HP" value="{v}"/></patientRole>'),
    ("hl7/nk1", HL7_MSH + "NK1|1|{last}^{first}|MTH^Mother^HL70063|||^NET^Internet^{v}|"),
    ("w2/text", "e Employee's first name and initial  {first}\nEmployee e-mail (optional): {v}"),
]

SSN = [
    ("x12_834/nm1", "INS*Y*18*030*XN*A***FT~REF*0F*{num}~NM1*IL*1*{last}*{first}****34*{v}~", "compact"),
    ("w2/box_a", "a  Employee's social security number\n   {v}\nb  Employer identification number (EIN)\n"
     "   {num}{num}"),
    ("1099/recipient_tin", "RECIPIENT'S TIN  {v}   PAYER'S TIN 12-{num}1"),
    ("hl7/pid19", HL7_MSH + "PID|1||{mrn}^^^{org}^MR||{last}^{first}||{date}|M|||||||||||{v}|"),
    ("fhir_json/identifier", '{"resourceType": "Patient", "identifier": [{"system": "http://hl7.org/fhir/sid/us-ssn",'
     ' "value": "{v}"}]}'),
    ("fhir_xml/identifier", '<Patient xmlns="http://hl7.org/fhir"><identifier><system value="http://hl7.org/fhir/'
     'sid/us-ssn"/><value value="{v}"/></identifier></Patient>'),
    ("csv/sis", "student_id,last,first,ssn,dob\n{num},{last},{first},{v},{date}"),
    ("hl7/gt1", HL7_MSH + "GT1|1||{last}^{first}||{city}|||{date}|F||SE|{v}|"),
    ("1040/text", "Your social security number\n{v}\nIf joint return, spouse's first name"),
    ("prose_es/numero", "Número de Seguro Social: {v}"),
    ("efw2/rw", "RA{num}{num}\nRW{v}{efw2name}{amt}", "compact"),
    ("json/payroll", '{"employee": {"name": "{first} {last}", "ssn": "{v}", "state": "CA"}}'),
    ("x12_270/ref", "NM1*IL*1*{last}*{first}~REF*SY*{v}~DMG*D8*{date}*F~"),
    ("prose_en/ssn_hash", "verified caller, SSN# {v}, DOB {date}"),
    ("json/open_banking", '{"Data": {"Party": {"Name": "{first} {last}", "TaxId": "{v}", "TaxIdType": "SSN"}}}'),
    ("hl7/in1", HL7_MSH + "IN1|1|BCBS^PPO|{num}|{org}||||||||||||{last}^{first}|01|{date}|||||||||||||||||||{v}|"),
    ("csv/w2_export", "EmployeeSSN|Wages|FedTax\n{v}|{amt}|{num}.00"),
    ("cda/patient_id", '<patientRole><id root="2.16.840.1.113883.4.1" extension="{v}"/><addr use="HP"/>'
     "</patientRole>"),
]

CARD = [
    ("iso8583/dump", "MTI 0200\n  DE002 PAN ............ {v}\n  DE003 PROC CODE ...... 000000\n  DE004 AMOUNT ........ "
     "{num}00", "compact"),
    ("emv_tlv/5A", "9F02 06 0000{num}00\n5A {tlv5a}\n5F24 03 271231", "compact"),
    ("track2/57", "57 {tlv57}", "compact"),
    ("receipt/pos", "CLINICA SAN RAFAEL\nVENTA  {amt} EUR\nTARJETA {v}\nAUT: {num}  ARC: 00"),
    ("csv/braintree", "transaction_id,card_number,card_type,amount\n{ctl},{v},Visa,{amt}"),
    ("json/berlin_group", '{"account": {"pan": "{v}", "currency": "EUR"}, "cardAccountId": "{uuid}"}'),
    ("json/adyen_log", '{"pspReference": "{num}{num}", "additionalData": {"cardNumber": "{v}"}}'),
    ("prose_es/llamada", "El paciente dictó su tarjeta {v} para el copago."),
    ("hl7/ft1", HL7_MSH + "FT1|1|||{date}||CG|99213^Office visit|||1|{amt}||||||||||||||||||CC^{v}|"),
    ("prose_de/karte", "Kreditkartennummer: {v}, gültig bis 12/27"),
    ("json/stripe_test", '{"payment_method_data": {"type": "card", "card": {"number": "{v}", "exp_month": 12}}}'),
    ("engine_log/debug", "{iso} DEBUG [PaymentBridge] charge request pan={v} amount={amt}"),
    ("fixed/settlement", "D{ctl}{v}    {amt}EUR", "compact"),
    ("prose_pt/cartao", "Número do cartão: {v}"),
    ("json/psd2_consent", '[{"maskedPan": "****", "pan": "{v}"}]'),
    ("prose_fr/carte", "Numéro de carte bancaire : {v}"),
    ("csv/chargebacks", "case;card;amount\nCB-{num};{v};{amt}"),
    ("prose_tr/kart", "Kredi kartı numarası: {v}"),
]

IBAN = [
    ("pain001/dbtr", "<DbtrAcct>\n  <Id>\n    <IBAN>{v}</IBAN>\n  </Id>\n</DbtrAcct>", "compact"),
    ("pain001/cdtr", "<Cdtr><Nm>{first} {last}</Nm></Cdtr><CdtrAcct><Id><IBAN>{v}</IBAN></Id></CdtrAcct>",
     "compact"),
    ("camt053/acct", "<Stmt><Id>{ctl}</Id><Acct><Id><IBAN>{v}</IBAN></Id></Acct>", "compact"),
    ("mt103/59", "{1:F01NORBDEFFAXXX0000000000}{4:\n:20:REF{num}\n:32A:{date}EUR{amt}\n:59:/{v}\n{first} {last}\n-}",
     "compact"),
    ("mt940/25", ":20:STMT{num}\n:25:{v}\n:28C:00001/001\n:60F:C{date}EUR{amt}", "compact"),
    ("json/open_banking", '{"Account": [{"SchemeName": "UK.OBIE.IBAN", "Identification": "{v}", "Name": "{last}"}]}'),
    ("json/berlin_group", '{"debtorAccount": {"iban": "{v}"}, "instructedAmount": {"currency": "EUR", '
     '"amount": "{amt}"}}'),
    ("csv/adyen_payout", "Merchant Account,Beneficiary,IBAN,Amount\nClinicaSR,{first} {last},{v},{amt}"),
    ("prose_de/iban", "Bitte überweisen Sie auf folgende IBAN: {v}"),
    ("prose_nl/rekening", "Mijn rekeningnummer (IBAN) is {v}."),
    ("prose_pl/rachunek", "Numer rachunku: {v}"),
    ("json/mollie", '{"resource": "payment", "details": {"consumerName": "{first} {last}", "consumerAccount": '
     '"{v}"}}'),
    ("csv/payroll", "Mitarbeiter;IBAN;Betrag\n{last};{v};{amt}"),
    ("prose_it/iban", "Coordinate bancarie – IBAN {v}"),
    ("prose_fi/tilinumero", "Tilinumero: {v}"),
    ("json/gocardless", '{"customer_bank_accounts": {"account_holder_name": "{first} {last}", "iban": "{v}"}}'),
    ("prose_el/iban", "Αριθμός λογαριασμού IBAN: {v}"),
    ("prose_ar/iban", "رقم الحساب المصرفي الدولي: {v}"),
    ("mt103/50k", ":50K:/{v}\n{first} {last}\n{city}", "compact"),
    ("mt940/86", ":61:{date}D{amt}NTRFNONREF\n:86:166?00SEPA-UEBERWEISUNG?20EREF+{ctl}?30NORBDEFF?31{v}?32{last}",
     "compact"),
]

PHONE = [
    ("hl7/pid_xtn", HL7_MSH + "PID|1||{mrn}^^^{org}^MR||{last}^{first}||{date}|F|||{city}||{v}^PRN^PH^^^^^^{label}|"),
    ("fhir_json/patient", '{"resourceType": "Patient", "id": "{uuid}", "telecom": [{"system": "phone", "value": '
     '"{v}", "use": "mobile"}], "text": {"div": "{label}"}}'),
    ("fhir_xml/related", '<RelatedPerson xmlns="http://hl7.org/fhir"><name><text value="{first} {last}"/></name>'
     '<telecom><system value="phone"/><value value="{v}"/></telecom></RelatedPerson>'),
    ("hl7/nk1", HL7_MSH + "NK1|1|{last}^{first}|SPO^Spouse^HL70063||{v}^PRN^CP^^^^^^{label}|"),
    ("x12/per", "NM1*QC*1*{last}*{first}~PER*IC*{label}*TE*{v}~"),
    ("sip/pai", "INVITE sip:gw@{host} SIP/2.0\r\nVia: SIP/2.0/UDP 10.1.4.2:5060\r\nP-Asserted-Identity: "
     "<tel:{v}>\r\nSubject: {label}\r\n", "intl_dash"),
    ("smpp/submit_sm", "submit_sm seq=812 source_addr=CLINIC dest_addr_ton=1 dest_addr_npi=1 destination_addr={v} "
     "short_message=\"{label}\"", "msisdn"),
    ("ussd/session", "{iso} USSD session={ctl} msisdn={v} code=*100# lang={lang} note=\"{label}\"", "msisdn"),
    ("radius/acct", 'Acct-Status-Type = Start\nCalling-Station-Id = "{v}"\nUser-Name = "{label}"'),
    ("iso20022/ctct", "<CtctDtls><Nm>{first} {last}</Nm><MobNb>{v}</MobNb><Othr><ChanlTp>{label}</ChanlTp>"
     "</Othr></CtctDtls>", "iso20022"),
    ("mt103/50k", ":50K:/{acct}\n{first} {last}\n{label} {v}"),
    ("csv/sis", "student_id;name;{label}\n{num};{first} {last};{v}"),
    ("prose/sentence", "{label} {v}, {first}"),
    ("engine_log/reject", "{iso} WARN [ADT_IN] PID-13 ({label}) '{v}' rejected for message {ctl}"),
    ("json/open_banking", '{"Data": {"Party": {"Name": "{first} {last}", "Mobile": "{v}", "Note": "{label}"}}}'),
    ("saml/attribute", '<saml:Attribute Name="telephoneNumber" FriendlyName="{label}"><saml:AttributeValue>{v}'
     "</saml:AttributeValue></saml:Attribute>"),
    ("form/text", "{label} .......... {v}"),
    ("json/stripe_export", '[{"id": "cus_{num}", "phone": "{v}", "description": "{label}"}]'),
    ("cda/telecom", '<patientRole><telecom use="MC" value="tel:{v}"/><!-- {label} --></patientRole>', "intl_dash"),
    ("hl7/pid_repetition", HL7_MSH + "PID|1||{mrn}^^^{org}^MR||{last}^{first}||{date}|F|||{city}||"
     "^NET^Internet^{user}@example.org~{v}^PRN^CP^^^^^^{label}|"),
    ("hl7/gt1", HL7_MSH + "GT1|1||{last}^{first}||{city}|{v}^PRN^PH^^^^^^{label}|"),
]


# ---- carriers of the wider kinds -------------------------------------------------------------------------------

PROVIDER_NAMES = {"adyen": ("Adyen", "ADYEN_API_KEY", "X-API-Key"),
                  "braintree": ("Braintree", "BRAINTREE_ACCESS_TOKEN", "accessToken"),
                  "square": ("Square", "SQUARE_ACCESS_TOKEN", "accessToken"),
                  "paypal": ("PayPal", "PAYPAL_CLIENT_SECRET", "clientSecret"),
                  "plaid": ("Plaid", "PLAID_SECRET", "secret"),
                  "checkout": ("Checkout.com", "CKO_SECRET_KEY", "secretKey"),
                  "razorpay": ("Razorpay", "RAZORPAY_KEY_SECRET", "key_secret"),
                  "mollie": ("Mollie", "MOLLIE_API_KEY", "apiKey"),
                  "gocardless": ("GoCardless", "GOCARDLESS_ACCESS_TOKEN", "access_token")}
"""Per provider: its name, the environment variable and the JSON key its SDK samples use."""

PROVIDER = [
    ("env/sdk", "{prefix}{envname}={v}"),
    ("json/config", '{"{provider}": {"{jsonkey}": "{v}", "environment": "live"}}'),
    ("mulesoft/props", "{provider}.{jsonkey}={v}"),
    ("yaml/payments", "payments:\n  {provider}:\n    {jsonkey}: {v}"),
    ("engine_log/init", "{iso} DEBUG [{name}Client] initialised with {jsonkey}={v}"),
    ("prose_es/clave", "La clave secreta de {name} es {v}"),
    ("csv/vault_export", "name,value,updated\n{envname},{v},{date}"),
    ("json/k8s_secret", '{"apiVersion": "v1", "kind": "Secret", "stringData": {"{envname}": "{v}"}}'),
    ("prose_de/schluessel", "Geheimer Schlüssel für {name}: {v}"),
    ("biztalk/config", '<add key="{envname}" value="{v}"/>'),
]

PRIVATE_KEY = [
    ("pem/file", "{v}\n"),
    ("json/partner", '{"partner": "{org}", "protocol": "SFTP", "privateKey": "{v}"}'),
    ("mirth/sftp_key", '<sftpSchemeProperties><keyAuth>true</keyAuth><keyFile/><privateKey>{v}</privateKey>'
     "</sftpSchemeProperties>"),
    ("prose_fr/cle", "Voici la clé privée SFTP du partenaire {org} :\n{v}"),
    ("as2/keystore_dump", "# exported from GoAnywhere Key Vault, alias {user}\n{v}"),
    ("json/moveit_key", '[{"KeyName": "{user}", "Format": "PEM", "Content": "{v}"}]'),
]

GCP = [
    ("json/key_file", "{v}"),
    ("k8s/secret", "apiVersion: v1\nkind: Secret\nstringData:\n  key.json: '{v}'"),
    ("mulesoft/props", "gcp.credentials.json={v}"),
    ("env/google", "GOOGLE_CREDENTIALS='{v}'"),
]

JWT = [
    ("smart_log/bearer", "{iso} INFO [FHIRClient] GET /Patient/{uuid} Authorization: Bearer {v} -> 200"),
    ("json/token_response", '{"access_token": "{v}", "token_type": "Bearer", "expires_in": 3600, "patient": "{mrn}"}'),
    ("curl/open_banking", "curl -H 'Authorization: Bearer {v}' https://ob.{host}/open-banking/v3.1/aisp/accounts"),
    ("json/consent", '{"Data": {"ConsentId": "urn-{uuid}"}, "id_token": "{v}"}'),
    ("prose_it/token", "Il token di accesso per il FSE è {v}"),
    ("mulesoft/log", "org.mule.extension.http: Request headers {Authorization=Bearer {v}, "
     "Accept=application/fhir+json}"),
    ("json/har_entry", '{"request": {"url": "https://fhir.{host}/R4/Coverage", "headers": [{"name": "Authorization",'
     ' "value": "Bearer {v}"}]}}'),
    ("saml/bridge", "<wsse:BinarySecurityToken ValueType=\"urn:ietf:params:oauth:token-type:jwt\">{v}"
     "</wsse:BinarySecurityToken>"),
]

HTTP_AUTH = [
    ("as2/http_dump", "POST /as2/receive HTTP/1.1\r\nHost: {host}\r\nAS2-From: MEDPAY\r\nAS2-To: {num}\r\n{v}\r\n",
     "basic"),
    ("sip/register", "REGISTER sip:sip.carrier.net SIP/2.0\r\nCall-ID: {uuid}\r\n{v}\r\n", "digest"),
    ("s3/put_object", "PUT /x12-in/837_{date}.edi HTTP/1.1\r\nHost: x12-in.s3.amazonaws.com\r\nx-amz-date: "
     "{date}T120000Z\r\n{v}\r\n", "sigv4"),
    ("fhir_log/request", "{iso} DEBUG [HttpClient] >> GET /R4/Patient?identifier={mrn}\n>> {v}"),
    ("curl/header", "curl -s -H '{v}' https://api.{host}/claims/status"),
    ("json/headers", '{"request": {"method": "PUT", "headers": ["{v}"]}}'),
    ("mulesoft/log", "HTTP request to https://{host}/upload with headers: {v}; Content-Type=application/edi-x12"),
    ("json/postman", '[{"key": "header", "value": "{v}"}]'),
    ("prose_nl/header", "Gebruik deze header voor de koppeling: {v}"),
]

COOKIE = [
    ("http/cookie", "GET /MyChart/Billing HTTP/1.1\r\nHost: portal.{host}\r\nCookie: {v}; lang={lang}\r\n"),
    ("http/set_cookie", "HTTP/1.1 302 Found\r\nSet-Cookie: {v}; Path=/; Secure; HttpOnly\r\nLocation: /home\r\n"),
    ("json/har_cookie", '{"cookies": [{"name": "session", "raw": "{v}", "httpOnly": true}]}'),
    ("curl/b", "curl -b '{v}' https://moveit.{host}/human.aspx?Arg12=filelist"),
    ("engine_log/session", "{iso} WARN [PortalProxy] replaying request with cookie {v}"),
    ("prose_da/cookie", "Kopier denne cookie til browseren: {v}"),
    ("json/selenium", '[{"domain": "portal.{host}", "cookie": "{v}"}]'),
]

NPI = [
    ("x12_837/nm1_85", "NM1*85*2*{org}*****XX*{v}~N3*100 MAIN ST~"),
    ("hl7/pv1", HL7_MSH + "PV1|1|O|CLINIC^101^1||||{v}^{last}^{first}^^^^^^NPI|"),
    ("fhir_json/practitioner", '{"resourceType": "Practitioner", "identifier": [{"system": '
     '"http://hl7.org/fhir/sid/us-npi", "value": "{v}"}]}'),
    ("prose/npi", "Rendering provider NPI: {v}"),
    ("csv/roster", "npi,last_name,first_name,taxonomy\n{v},{last},{first},207Q00000X"),
    ("cda/author", '<assignedAuthor><id root="2.16.840.1.113883.4.6" extension="{v}"/></assignedAuthor>'),
    ("x12_835/n1_pe", "N1*PR*{org}~N1*PE*CLINICA SAN RAFAEL*XX*{v}~REF*TJ*{num}~"),
]
MBI = [
    ("x12_270/nm1", "NM1*IL*1*{last}*{first}****MI*{v}~DMG*D8*{date}~"),
    ("fhir_json/coverage", '{"resourceType": "Coverage", "identifier": [{"system": '
     '"http://hl7.org/fhir/sid/us-mbi", "value": "{v}"}]}'),
    ("hl7/in1", HL7_MSH + "IN1|1|MCR^Medicare|||||||||||||||||||||||||||||||||||{v}|"),
    ("prose/card", "Medicare Number {v} (from the red, white and blue card)"),
]
NHS = [
    ("hl7/pid3", HL7_MSH + "PID|1||{v}^^^NHS^NH~{mrn}^^^RX1^MR||{last}^{first}||{date}|F|"),
    ("fhir_json/nhs", '{"resourceType": "Patient", "identifier": [{"system": '
     '"https://fhir.nhs.uk/Id/nhs-number", "value": "{v}"}]}'),
    ("prose/nhs", "NHS number: {v}"),
    ("csv/referrals", "nhs_number,surname,dob\n{v},{last},{date}"),
]
DEA = [
    ("prose/rx", "Prescriber DEA# {v}, Schedule II"),
    ("hl7/orc", HL7_MSH + "ORC|NW|{ctl}|||||||{dt}|||{v}^{last}^{first}^^^^^^DEA|"),
    ("x12/ref", "NM1*DK*1*{last}*{first}~REF*0B*{v}~"),
    ("json/erx", '{"prescriber": {"name": "{first} {last}", "deaNumber": "{v}"}}'),
]
ABA = [
    ("nacha/entry", "622{v}{acct17}{amt10}{num}         {name22}  0{aba8}{seq7}"),
    ("prose/routing", "Routing number: {v}"),
    ("mt103/57d", ":57D://FW{v}\nFIRST NATIONAL BANK"),
    ("json/ach", '{"routingNumber": "{v}", "accountType": "checking"}'),
    ("x12_835/bpr", "BPR*I*{amt}*C*ACH*CCP*01*{v}*DA*{acct}*1{num}**01*{aba}*DA*{num}{num}*{date}~"),
]
BANK_ACCOUNT = [
    ("nacha/entry", "622{aba}{vpad}{amt10}{num}         {name22}  0{aba8}{seq7}"),
    ("prose/account_no", "Account No.: {v}"),
    ("prose_de/kontonummer", "Kontonummer {v}, BLZ {num}00"),
    ("json/plaid_auth", '{"numbers": {"ach": [{"account": "{v}", "routing": "{aba}"}]}}'),
    ("w2/direct_deposit", "Direct deposit account number: {v}"),
    ("prose_es/cuenta", "Número de cuenta: {v}"),
    ("x12_835/bpr", "BPR*I*{amt}*C*ACH*CCP*01*{aba}*DA*{v}*1{num}**01*{aba}*DA*{num}{num}*{date}~"),
]


# ---- the corpus ------------------------------------------------------------------------------------------------

Template = tuple[str, str] | tuple[str, str, str]
Extra = Callable[[random.Random], dict[str, str]]


def no_extra(_rng: random.Random) -> dict[str, str]:
    """Kinds whose templates need only the common fillers."""
    return {}


def phone_extra(country: str) -> Extra:
    """A context word in the country's language."""
    return lambda rng: {"label": rng.choice(PHONE_WORDS[country])}


def provider_extra(provider: str) -> Extra:
    """The provider's name, variable and key names; Razorpay's key id beside its secret."""
    name, envname, jsonkey = PROVIDER_NAMES[provider]
    return lambda rng: {"name": name, "envname": envname, "jsonkey": jsonkey, "provider": provider,
                        "prefix": f"RAZORPAY_KEY_ID=rzp_live_{pick(rng, ALNUM, 14)}\n" * (provider == "razorpay")}


def kinds() -> list[tuple[str, Gen, list[Template], Extra]]:
    """Every kind: its generator, its carriers and the fillers they need beyond the common ones."""
    out: list[tuple[str, Gen, list[Template], Extra]] = [
        ("password", gen_password, PASSWORD, no_extra), ("aws_secret", gen_aws_secret, AWS, no_extra),
        ("webhook", gen_webhook, WEBHOOK, no_extra), ("stripe_whsec", gen_whsec, WHSEC, no_extra),
        ("connection_string", gen_conn, CONN, no_extra), ("labelled_key", gen_labelled, LABELLED, no_extra),
        ("disguised", gen_disguised, DISGUISED, no_extra), ("email", gen_email, EMAIL, no_extra),
    ]
    out += [(f"phone_{c}", phone_gen(c), PHONE, phone_extra(c)) for c in ("us_ca", "uk", "fr", "de", "in")]
    out += [("ssn", gen_ssn, SSN, no_extra), ("card", gen_card, CARD, no_extra), ("iban", gen_iban, IBAN, no_extra)]
    out += [(p, gen, PROVIDER, provider_extra(p)) for p, gen in PROVIDERS.items()]
    out += [("private_key", gen_private_key, PRIVATE_KEY, no_extra), ("gcp_service_account", gen_gcp, GCP, no_extra),
            ("jwt", gen_jwt, JWT, no_extra), ("http_auth", gen_http_auth, HTTP_AUTH, no_extra),
            ("session_cookie", gen_cookie, COOKIE, no_extra)]
    out += [(f"phone_{c}", phone_gen(c), PHONE, phone_extra(c)) for c in PLANS
            if c not in ("us_ca", "uk", "fr", "de", "in")]
    out += [("npi_us", simple(npi, "compact"), NPI, no_extra),
            ("medicare_mbi", grouped_id(mbi, (4, 3, 4), ("compact", "dash")), MBI, no_extra),
            ("nhs_number", grouped_id(nhs, (3, 3, 4), ("space", "compact")), NHS, no_extra),
            ("dea_number", simple(dea, "compact"), DEA, no_extra),
            ("aba_routing", simple(aba, "compact"), ABA, no_extra),
            ("bank_account", simple(lambda r: digits(r, r.randint(8, 17)), "digits"), BANK_ACCOUNT, no_extra)]
    return out


def layout_fillers(rng: random.Random, first: str, last: str) -> dict[str, str]:
    """Fixed-width fields of NACHA entries and EFW2 records."""
    routing = aba(rng)
    return {"aba": routing, "aba8": routing[:8], "seq7": digits(rng, 7), "acct17": digits(rng, 12).ljust(17),
            "amt10": f"{rng.randint(100, 9_999_999):010d}", "name22": f"{last} {first}".upper()[:22].ljust(22),
            "efw2name": first.upper()[:15].ljust(30) + last.upper()[:20].ljust(20)}


def compressed_numeric(digits_and_d: str) -> str:
    """An EMV `cn`/track 2 value with its length byte: right-padded with F to whole bytes (EMV Book 3, annex A)."""
    padded = digits_and_d + "F" * (len(digits_and_d) % 2)
    return f"{len(padded) // 2:02X} {padded}"


def emv_fillers(pan: str, discretionary: str) -> dict[str, str]:
    """Tag 5A (PAN) and tag 57 (track 2 equivalent: PAN, D, YYMM, service code, discretionary data) of a PAN."""
    if not pan.isdigit():
        return {}
    return {"tlv5a": compressed_numeric(pan), "tlv57": compressed_numeric(f"{pan}D2712201{discretionary}00000")}


ENVELOPES = [lambda t, r: {"channelId": str(uuid.UUID(int=r.getrandbits(128), version=4)), "connectorName":
                           "Source", "messageContent": {"raw": t}},
             lambda t, r: {"logger": "org.mule.runtime.core.internal.processor.LoggerMessageProcessor",
                           "level": "INFO", "message": t},
             lambda t, r: {"EventType": "FileTransfer", "Agent": "MOVEit Automation", "Detail": t}]
"""How integration engines export a message or log line as JSON: Mirth message browser, MuleSoft JSON logging,
MOVEit REST audit."""


def one_case(rng: random.Random, kind: str, gen: Gen, template: Template, extra: Extra, i: int) -> Case:
    """The i-th value of a kind written in its carrier."""
    name, text_template, forced = (template + (None,))[:3]
    value, secret, style = gen(rng, forced)
    values = fillers(rng)
    values |= layout_fillers(rng, values["first"], values["last"]) | extra(rng)
    values |= {"v": value, "vpad": value.ljust(17)} | emv_fillers(value, values["num"])
    json_template = is_json_template(text_template)
    text = fill(text_template, values, json_template)
    is_json = json_template or name.startswith("json/")
    carried = text
    if not is_json and i % 4 == 3:
        wrapped = json.dumps(ENVELOPES[i % 3](text, rng), ensure_ascii=False)
        if json.dumps(secret, ensure_ascii=False)[1:-1] in wrapped:  # not a JSON text escaped twice
            carried, is_json = wrapped, True
    return Case(kind, f"{name}/{style}", text, secret, is_json, carried)


def generate() -> Iterator[Case]:
    """PER_KIND values of each kind, each kind's carriers taken in turn."""
    rng = random.Random(SEED)
    for kind, gen, templates, extra in kinds():
        for i in range(PER_KIND):
            yield one_case(rng, kind, gen, templates[i % len(templates)], extra, i)


# ---- near misses -----------------------------------------------------------------------------------------------

NEGATIVES_PER_SORT = 20
"""Near misses written per sort."""


def bic(rng: random.Random) -> str:
    """An ISO 9362 BIC: bank code, country, location, optional branch (public directory data)."""
    return (pick(rng, string.ascii_uppercase, 4) + rng.choice(["DE", "FR", "ES", "NL", "GB", "US", "IT", "PL"])
            + pick(rng, string.ascii_uppercase + string.digits, 2) + rng.choice(["", "XXX"]))


def bad_luhn(rng: random.Random) -> str:
    """A 16-digit number in a card range whose last digit is not its Luhn digit."""
    partial = "4" + digits(rng, 14)
    good = luhn_digit(partial)
    return partial + str((int(good) + rng.randint(1, 9)) % 10)


def bad_iban(rng: random.Random) -> str:
    """An IBAN-shaped string whose check digits are wrong."""
    iban = iban_compact(rng)
    wrong = f"{(int(iban[2:4]) + rng.randint(1, 90)) % 97 + 2:02d}"
    wrong = wrong if wrong != iban[2:4] else f"{(int(wrong) + 1) % 97 + 2:02d}"
    return iban[:2] + wrong + iban[4:]


def bad_ssn(rng: random.Random) -> str:
    """An SSN-shaped number the SSA never issues: area 000, 666 or 9xx, group 00, or serial 0000."""
    area, grp, serial = ssn_digits(rng)
    which = rng.randrange(4)
    area = ["000", "666", f"9{rng.randint(0, 99):02d}", area][which]
    return f"{area}-{'00' if which == 3 else grp}-{serial if which != 0 else '0000'}"


def imei(rng: random.Random) -> str:
    """A 15-digit IMEI (TAC, serial, Luhn digit); TACs here start 35 or 86, outside card ranges."""
    partial = rng.choice(["35", "86"]) + digits(rng, 12)
    return partial + luhn_digit(partial)


def negative_sorts() -> dict[str, Callable[[random.Random], str]]:
    """Each sort of near miss: how one is written."""
    u = lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4))  # noqa: E731
    return {
        "bic": lambda r: f":52A:{bic(r)}\n:57A:{bic(r)}\n<BICFI>{bic(r)}</BICFI>",
        "bad_luhn": lambda r: f"DE002 PAN ............ {bad_luhn(r)}",
        "bad_iban": lambda r: f"<CdtrAcct><Id><IBAN>{bad_iban(r)}</IBAN></Id></CdtrAcct>",
        "bad_ssn": lambda r: f"REF*SY*{bad_ssn(r)}~ (test subscriber, never issued)",
        "hl7_control": lambda r: f"MSH|^~\\&|EPIC|HOSP|MIRTH|HUB|2026030412{digits(r, 4)}||ACK^A01|{digits(r, 10)}|P|"
                                 f"2.5.1\rMSA|AA|{digits(r, 10)}",
        "x12_control": lambda r: f"ISA*00*          *00*          *ZZ*SUBMITTER{digits(r, 6)}*ZZ*RECEIVER{digits(r, 7)}"
                                 f"*260304*1230*^*00501*{digits(r, 9)}*0*P*:~GS*HC*SUB*REC*20260304*1230*"
                                 f"{digits(r, 6)}*X*005010X222A1~ST*837*{digits(r, 4)}*005010X222A1~",
        "uuid": lambda r: f"Patient/{u(r)} Coverage/{u(r)} {{121:{u(r)}}}",
        "sha256": lambda r: f"SHA-256 (837_{digits(r, 8)}.x12) = {hashlib.sha256(r.randbytes(16)).hexdigest()}",
        "statement_line": lambda r: f":61:260304{digits(r, 4)}D{r.randint(1, 99999)},{digits(r, 2)}NTRFNONREF//"
                                    f"{digits(r, 12)}\n:86:SEPA-UEBERWEISUNG",
        "placeholder": lambda r: r.choice(["password=********", "DB_PASSWORD=${DB_PASSWORD}",
                                           "<password>${vault:sftp/partner}</password>",
                                           "sftp.password=${secure::sftp.password}", "PGPASSWORD=<redacted>",
                                           '"userPassword": "[REDACTED]"', "AccountKey=<your-account-key>"])
        + f" # rotated {digits(r, 4)}",
        "fix": lambda r: f"8=FIX.4.4|9=178|35=D|49=BROKER{digits(r, 2)}|56=EXCH|34={digits(r, 3)}|52=20260304-12:30:"
                         f"{digits(r, 2)}.000|11=ORD{digits(r, 8)}|55=SAP|54=1|38={r.randint(1, 900)}|40=2|"
                         f"44={r.randint(10, 500)}.25|10={digits(r, 3)}|",
        "iso8583_codes": lambda r: f"DE011 STAN {digits(r, 6)} DE037 RRN {digits(r, 12)} DE038 AUTH "
                                   f"{pick(r, string.ascii_uppercase + string.digits, 6)} DE039 00 "
                                   f"DE041 TERM{digits(r, 4)}",
        "clinical_codes": lambda r: f"DG1|1||E11.{r.randint(0, 9)}^Type 2 diabetes^I10|\rOBX|1|NM|4548-4^HbA1c^LN||"
                                    f"{r.randint(5, 12)}.{r.randint(0, 9)}|%|\nSV1*HC:992{r.randint(10, 15)}*"
                                    f"{r.randint(50, 300)}*UN*1***1~",
        "sip_headers": lambda r: f"Call-ID: {pick(r, HEX, 14)}@pc{r.randint(1, 99)}.carrier.net\r\nCSeq: "
                                 f"{digits(r, 6)} INVITE\r\nVia: SIP/2.0/UDP 10.0.{r.randint(0, 9)}.4:5060;branch="
                                 f"z9hG4bK{pick(r, ALNUM, 10)}\r\nMax-Forwards: 70",
        "certificate": lambda r: "-----BEGIN CERTIFICATE-----\nMIIC" + pick(r, B64, 60) + "\n" + pick(r, B64, 64)
        + "\n-----END CERTIFICATE-----",
        "publishable_key": lambda r: r.choice([f"pk_live_{pick(r, B62, 24)}", f"rzp_live_{pick(r, ALNUM, 14)}",
                                               f"sq0idp-{pick(r, B64URL, 22)}",
                                               f"production_{pick(r, HEX, 8)}_{pick(r, HEX, 16)}"])
        + " (client-side, safe to publish)",
        "nacha_control": lambda r: f"8200{r.randint(1, 999):06d}{digits(r, 10)}{digits(r, 12)}{digits(r, 12)}"
                                   f"{' ' * 35}\n9000001000001{r.randint(1, 999):08d}{digits(r, 10)}",
        "versions": lambda r: f"Mirth Connect 4.{r.randint(0, 5)}.{r.randint(0, 9)}.b{digits(r, 4)}; GoAnywhere MFT "
                              f"7.{r.randint(1, 6)}.{r.randint(0, 9)}; MOVEit Transfer 2023.0.{r.randint(1, 9)}",
        "radius_attrs": lambda r: f'Acct-Session-Id = "{pick(r, HEX.upper(), 8)}"\nAcct-Input-Octets = '
                                  f"{r.randint(1000, 10**9)}\nFramed-IP-Address = 10.{r.randint(0, 255)}."
                                  f"{r.randint(0, 255)}.{r.randint(1, 254)}\nNAS-Port = {r.randint(1, 4000)}",
        "imei": lambda r: f"IMEI={imei(r)} handset registered",
        "tnsnames": lambda r: f"CLAIMS{r.randint(1, 9)} =\n  (DESCRIPTION =\n    (ADDRESS = (PROTOCOL = TCP)(HOST = "
                              f"db{r.randint(1, 99)}.{r.choice(HOSTS)})(PORT = 1521))\n    (CONNECT_DATA = "
                              f"(SERVICE_NAME = CLAIMSPDB{r.randint(1, 9)})))",
    }


def generate_negatives() -> Iterator[tuple[str, str]]:
    """(sort, text) near misses: nothing in them is a secret or personal datum."""
    rng = random.Random(SEED + 1)
    for sort, make in negative_sorts().items():
        for _ in range(NEGATIVES_PER_SORT):
            yield sort, make(rng)
