"""The twentieth redaction corpus: a personal assistant agent's view of one person's digital life, as its tools
return it. Written blind to the detection rules and to the other corpora, from the formats' public specifications.

Carriers: vCard 3.0/4.0 (RFC 2426, RFC 6350: TEL;TYPE=, EMAIL;TYPE=, folded lines, quoted-printable labels), Google
Contacts and Outlook CSV exports, Apple Contacts, iCalendar VEVENT (RFC 5545: ORGANIZER/ATTENDEE mailto:,
DESCRIPTION), Google Calendar and Microsoft Graph event JSON, Gmail API message JSON (headers, snippet, base64url
parts), Graph message JSON, raw RFC 5322 / MIME (RFC 2045 quoted-printable) and mbox, password managers' exports
(Bitwarden JSON and CSV, 1Password 1PUX and CSV, KeePass 2 XML and CSV, LastPass CSV, Chrome and Firefox saved
logins CSV, iCloud Keychain CSV), notes (Notion and Evernote ENEX exports, Obsidian markdown with YAML front matter,
Google Docs text, OneNote), chats (WhatsApp .txt, Signal, iMessage, Telegram JSON), SMS Backup & Restore XML and
Android call logs, to-dos and reminders, bank and card alerts, travel confirmations and receipts, in 40-odd
languages. A third of the cases travel inside a JSON tool result (generic, Anthropic `tool_result`, OpenAI tool
message, MCP `result.content`): is_json. Phone numbers always stand beside a context word in the text's language.

Formats of the values, by source:
- password: free text by the label of each export's published column set (Bitwarden, 1Password, KeePass, LastPass,
  Chrome, Firefox, iCloud CSV headers) and the env/YAML/CLI shapes of the issue.
- aws_secret: AWS IAM access keys (AKIA/ASIA + 16 of A-Z2-7; 40-character base64 secret), credentials.csv and
  `aws iam create-access-key` JSON.
- webhook: Slack incoming webhooks (hooks.slack.com/services/T../B../24), Discord (api/webhooks/id/68), Teams
  Office 365 connectors (webhookb2/.../IncomingWebhook/32 hex/guid), Power Automate (`sig=` 43), Google Chat
  (`token=` 43), IFTTT Maker (`with/key/22`), Mattermost (`hooks/26`). The secret is the token part alone.
- stripe_whsec: Stripe signing secrets, `whsec_` + 32 base62 (dashboard) or 64 hex (`stripe listen`).
- connection_string: Azure Storage (AccountKey 88 base64), Service Bus (SharedAccessKey 44), ADO.NET, ODBC,
  JDBC query `password=`, URI userinfo (RFC 3986) for postgres, mongodb+srv, redis, amqp, imaps, ftp, webdav.
  The secret is the password or key alone.
- labelled_key: random hex/base62/base64 keys of no named provider after labels with spaces, in 17 languages.
- disguised: GitHub `ghp_` (CRC32 checksum), Stripe `sk_live_`, Slack `xoxb-`, Google `AIza`, GitLab `glpat-`,
  with U+200B/C/D, U+2060, U+FEFF, U+00AD, U+200E/F, U+2066-2069 inside, or in full-width forms (U+FF01-FF5E).
- email: RFC 5322 addr-spec, RFC 6531 internationalised, `%40` (RFC 3986), `\\u0040` (RFC 8259), `&#64;`, mailto:.
- phones: ITU-T E.164 and the national plans: NANP (NPA/NXX rules), Ofcom (07 mobiles, 01/02 geographic), ARCEP
  (0[1-79] 10 digits), BNetzA (015x/016x/017x mobiles, area codes), TRAI (10 digits from 6-9), CNMC (6/7/9),
  Anatel (DDD + 9 + 8), AGCOM (3xx mobiles, 0x geographic), ACM (06 mobiles), UKE (9 digits), BTK (05xx),
  MIC Japan (0[789]0), MSIT Korea (010), EETT (69x, 2xx), NKEK Ukraine (0XX operator codes), NTC (09xx), CA Kenya
  (07xx/01xx). Each always with a context word in the text's language.
- ssn: SSA rules (area 001-899 but 666, group 01-99, serial 0001-9999).
- card: ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37, Discover 6011/644-649/65, JCB
  3528-3589, Diners 36, UnionPay 62) with the Luhn digit, printed with space, `-`, `.`, `_` or nothing.
- iban: ISO 13616 with the SWIFT registry's BBAN structures of 24 countries, MOD 97-10.
- private_key (PEM RFC 7468, PKCS#8, SEC1, openssh-key-v1, and in GCP service-account JSON), jwt (RFC 7519),
  auth_header (RFC 7617 Basic, RFC 6750 Bearer, RFC 7616 Digest `response=`, SigV4 `Signature=`), session_cookie
  (RFC 6265; Netscape cookies.txt), google_oauth (`ya29.` access, `1//0` refresh tokens), google_api_key (`AIza`
  + 35), slack_token (`xoxb-`/`xoxp-`), telegram_bot_token (`id:AA` + 33), notion_token (`secret_` + 43, `ntn_`),
  github_token (`ghp_`/`gho_` with CRC32), matrix_token (Synapse `syt_` bridges' tokens), totp_seed (Google
  Authenticator Key URI format, RFC 4648 base32).
- recovery_code and recovery_key: two-factor backup codes (Google 8 digits, GitHub 5-5 hex, Bitwarden 32) and
  account recovery keys (Apple 28, Microsoft 25, BitLocker 48 digits of 8 groups each a multiple of 11, 1Password
  Secret Key `A3-`). I judge all of them secrets: each alone opens an account or a disk.
- Outside the target (national ids with public check rules): es_dni (mod 23 letter, NIE), br_cpf (two mod 11
  digits), nl_bsn (11-proof), pl_pesel (weights 1-3-7-9), fi_hetu (mod 31 character).

Near misses, judged not secret nor personal in themselves: vCard and event UIDs, Message-IDs and Gmail thread ids,
RRULEs and time zones, meeting ids without a passcode, booking references, order and tracking numbers, amounts,
last-4 of cards, dates, PRODID/VERSION and export format ids, ETags and hashes, placeholders, masked values,
Luhn-invalid numbers, IBANs failing MOD 97, SSNs the SSA never issues, businesses' published service numbers,
public holiday calendar feeds (their `%40group.v.calendar.google.com` ids are calendar ids, not mailboxes), base64url
bodies of harmless mail, and providers' published test card numbers: those identify no account and are printed in
every provider's documentation, so I judge them not secrets.
"""

from __future__ import annotations

import base64
import json
import quopri
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from benchmarks.corpus_formats import (
    B62,
    b64url,
    bban,
    crc_b62,
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
"""Cases written per kind."""

NEGATIVES_PER_SORT = 20
"""Near misses written per sort."""

OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "nl_bsn", "pl_pesel", "fi_hetu"})
"""Kinds printed but not held to the recall target (national ids)."""

HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
PWCH = string.ascii_letters + string.digits + "!#%*+-.:=?@^_~"


@dataclass(frozen=True)
class Value:
    """A value as made: what must not survive, how it is printed in the text, its style, extra template fields."""

    secret: str
    shown: str
    style: str
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    """One planted value: its kind, carrier/style form, the secret, the text it is in and the text as carried."""

    kind: str
    form: str
    secret: str
    text: str
    carried: str
    is_json: bool


Maker = Callable[[random.Random], Value]

FIRST = ["Amara", "Lukas", "Sofía", "Tiago", "Chloé", "Jonas", "Giulia", "Daan", "Freja", "Ingrid", "Aino", "Kadri",
         "Līga", "Rūta", "Zuzana", "Nika", "Ivana", "Milan", "Desislava", "Eleni", "Elif", "Dmitri", "Oksana",
         "Youssef", "Noa", "Priya", "Hetal", "Kavya", "Haruto", "Jiwoo", "Ka-yan", "Thảo", "Sokha", "Maricel",
         "Wanjiru", "Abebe", "Siobhán", "Wei Ling", "Thandi", "Camila"]
LAST = ["Okafor", "Becker", "Restrepo", "Almeida", "Dubois", "Peeters", "Rossi", "de Vries", "Nielsen", "Hansen",
        "Virtanen", "Tamm", "Bērziņa", "Kazlauskienė", "Horváthová", "Novak", "Kovačić", "Petrović", "Ivanova",
        "Papadopoulou", "Yılmaz", "Smirnov", "Shevchenko", "Benali", "Haddad", "Levi", "Sharma", "Patel", "Gowda",
        "Sato", "Kim", "Chan", "Nguyễn", "Chea", "Santos", "Mwangi", "Tesfaye", "Murphy", "Tan", "Nkosi"]
SITES = ["netflix.com", "amazon.de", "booking.com", "mercadolibre.com.co", "zalando.fr", "bol.com", "allegro.pl",
         "rakuten.co.jp", "coupang.com", "shopee.ph", "jumia.co.ke", "trendyol.com", "ozon.ru", "flipkart.com",
         "spotify.com", "airbnb.ie", "dropbox.com", "paypal.com", "revolut.com", "nas.local"]


def uid(rng: random.Random) -> str:
    """A version-4 UUID drawn from rng."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def ctx(rng: random.Random) -> dict[str, str]:
    """The names, ids and dates a template fills around the value."""
    first, last = rng.choice(FIRST), rng.choice(LAST)
    return {"first": first, "last": last, "name": f"{first} {last}", "site": rng.choice(SITES),
            "user": f"{first.split()[0].lower()}.{last.split()[-1].lower()}", "uid": uid(rng),
            "hex": pick(rng, HEX, 16), "date": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            "n": str(rng.randint(100, 9999))}


# ---- makers of the kinds ------------------------------------------------------------------------------

WORDS = ["maple", "harbor", "violet", "copper", "lantern", "meadow", "orbit", "pepper", "quartz", "saffron",
         "tundra", "velvet", "walnut", "zephyr", "cobalt", "ember"]


def password(rng: random.Random) -> Value:
    """A password as people and managers make them: random, passphrase, word with digits and a symbol."""
    style = rng.choice(["random", "passphrase", "word_digits"])
    if style == "random":
        v = pick(rng, string.ascii_letters, 3) + pick(rng, PWCH, rng.randint(9, 17)) + digits(rng, 2)
    elif style == "passphrase":
        v = "-".join(rng.choice(WORDS) for _ in range(rng.randint(3, 4))) + digits(rng, 2)
    else:
        v = rng.choice(WORDS).capitalize() + rng.choice(WORDS) + digits(rng, 4) + rng.choice("!#%*?")
    return Value(v, v, style)


def aws_secret(rng: random.Random) -> Value:
    """A 40-character secret access key with its AKIA (long-term) or ASIA (session) key id."""
    akid = rng.choice(["AKIA", "ASIA"]) + pick(rng, string.ascii_uppercase + "234567", 16)
    v = pick(rng, B64, 40)
    return Value(v, v, akid[:4].lower(), {"akid": akid})


def webhook(rng: random.Random) -> Value:
    """A provider's incoming-webhook URL; the secret is its token part."""
    style = rng.choice(["slack", "discord", "teams", "power_automate", "google_chat", "ifttt", "mattermost"])
    if style == "slack":
        tok = pick(rng, B62, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, string.ascii_uppercase + string.digits, 10)}/" \
              f"B{pick(rng, string.ascii_uppercase + string.digits, 10)}/{tok}"
    elif style == "discord":
        tok = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{tok}"
    elif style == "teams":
        tok = pick(rng, HEX, 32)
        url = f"https://contoso.webhook.office.com/webhookb2/{uid(rng)}@{uid(rng)}/IncomingWebhook/{tok}/{uid(rng)}"
    elif style == "power_automate":
        tok = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}")
    elif style == "google_chat":
        tok = pick(rng, URLSAFE, 43) + "%3D"
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSyDdI0hCZtE6vy"
               f"TKh4-xuUBlLv6MxK8mNfM&token={tok}")
    elif style == "ifttt":
        tok = pick(rng, URLSAFE, 22)
        url = f"https://maker.ifttt.com/trigger/{rng.choice(WORDS)}_alert/with/key/{tok}"
    else:
        tok = pick(rng, string.ascii_lowercase + string.digits, 26)
        url = f"https://chat.{rng.choice(SITES)}/hooks/{tok}"
    return Value(tok, url, style)


def stripe_whsec(rng: random.Random) -> Value:
    """A Stripe webhook signing secret: dashboard (32 base62) or `stripe listen` (64 hex)."""
    if rng.random() < 0.6:
        v = "whsec_" + pick(rng, B62, 32)
        return Value(v, v, "dashboard")
    v = "whsec_" + pick(rng, HEX, 64)
    return Value(v, v, "cli")


def connection_string(rng: random.Random) -> Value:
    """A connection string or URI; the secret is its password or key."""
    style = rng.choice(["azure_storage", "service_bus", "ado", "odbc", "jdbc", "postgres_uri", "mongodb_srv",
                        "redis_uri", "amqp_uri", "imaps_uri", "ftp_uri", "webdav_uri"])
    pw = pick(rng, string.ascii_letters + string.digits, rng.randint(12, 22))
    host, user = rng.choice(["nas.home.arpa", "10.0.0.12", "db.example.net", "pi.local"]), rng.choice(
        ["admin", "photos", "ha_user", "jdoe", "nextcloud"])
    if style == "azure_storage":
        pw = pick(rng, B64, 86) + "=="
        s = f"DefaultEndpointsProtocol=https;AccountName=famphotos{rng.randint(1, 99)};AccountKey={pw};" \
            "EndpointSuffix=core.windows.net"
    elif style == "service_bus":
        pw = pick(rng, B64, 43) + "="
        s = f"Endpoint=sb://homeauto.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;" \
            f"SharedAccessKey={pw}"
    elif style == "ado":
        s = f"Server=tcp:{host},1433;Initial Catalog=budget;User ID={user};Password={pw};Encrypt=True;"
    elif style == "odbc":
        s = f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=budget;Uid={user};Pwd={pw};"
    elif style == "jdbc":
        s = f"jdbc:postgresql://{host}:5432/recipes?user={user}&password={pw}&sslmode=require"
    else:
        scheme = {"postgres_uri": "postgresql", "mongodb_srv": "mongodb+srv", "redis_uri": "redis",
                  "amqp_uri": "amqp", "imaps_uri": "imaps", "ftp_uri": "ftp", "webdav_uri": "https"}[style]
        where = "cluster0.ab12c.mongodb.net/notes" if style == "mongodb_srv" else f"{host}/"
        s = f"{scheme}://{'' if style == 'redis_uri' else user}:{pw}@{where}"
    return Value(pw, s, style)


def labelled_key(rng: random.Random) -> Value:
    """A key of no named provider: 32 hex, 40 base62 or 44 base64."""
    style = rng.choice(["hex32", "b62_40", "b64_44"])
    v = {"hex32": lambda: pick(rng, HEX, 32), "b62_40": lambda: pick(rng, B62, 40),
         "b64_44": lambda: pick(rng, B64, 43) + "="}[style]()
    return Value(v, v, style)


ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u200f", "\u2066", "\u2069"]


def provider_key(rng: random.Random) -> tuple[str, str]:
    """A key of a known provider and its name."""
    name = rng.choice(["github", "stripe", "slack", "google", "gitlab"])
    key = {"github": lambda: crc_token(rng, "ghp_"), "stripe": lambda: "sk_live_" + pick(rng, B62, 24),
           "slack": lambda: f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, B62, 24)}",
           "google": lambda: "AIza" + pick(rng, URLSAFE, 35), "gitlab": lambda: "glpat-" + pick(rng, URLSAFE, 20)}
    return key[name](), name


def disguised(rng: random.Random) -> Value:
    """A known provider's key with invisible characters inside, or in full-width forms."""
    key, name = provider_key(rng)
    how = rng.choice(["zero_width", "soft_hyphen", "bidi", "fullwidth", "mixed"])
    if how == "fullwidth":
        v = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key)
    else:
        chars = {"zero_width": ZERO_WIDTH[:5], "soft_hyphen": ["\u00ad"], "bidi": ZERO_WIDTH[6:],
                 "mixed": ZERO_WIDTH}[how]
        spots = sorted(rng.sample(range(4, len(key) - 2), rng.randint(2, 4)))
        v = key
        for s in reversed(spots):
            v = v[:s] + rng.choice(chars) + v[s:]
    return Value(v, v, f"{name}_{how}")


ASCII_LOCAL = ["amara.okafor", "lukas.becker", "sofia.restrepo", "tiago.almeida", "chloe.dubois", "jonas_peeters",
               "giulia.rossi82", "daan.devries", "freja.n", "aino.virtanen", "kadri.tamm", "liga.berzina",
               "ruta.k", "zuzana.horvathova", "nika.novak", "ivana.kovacic", "desi.ivanova", "eleni.pap",
               "elif.yilmaz", "d.smirnov", "oksana.shev", "youssef.benali", "noa.levi", "priya.sharma",
               "hetal.patel", "kavya.gowda", "haruto.sato", "jiwoo.kim", "kayan.chan", "thao.nguyen", "sokha.chea",
               "maricel.santos", "wanjiru.mwangi", "abebe.t", "siobhan.murphy", "weiling.tan", "thandi.nkosi"]
DOMAINS = ["gmail.com", "outlook.com", "icloud.com", "gmx.de", "web.de", "orange.fr", "libero.it", "ziggo.nl",
           "proton.me", "yahoo.co.jp", "naver.com", "wp.pl", "seznam.cz", "mail.ru", "ukr.net", "rediffmail.com",
           "hotmail.co.uk", "telenet.be", "bluewin.ch", "sapo.pt", "uol.com.br", "eircom.net", "singnet.com.sg",
           "tuta.io", "fastmail.com", "posteo.de", "yandex.ru", "hey.com"]
IDN = ["josé.garcía@correo.es", "müller.jürgen@beispiel.de", "δοκιμή@παράδειγμα.ελ", "почта.ивана@пример.рф",
       "用户@例子.广告", "हिंदी@उदाहरण.भारत", "søren.ærø@eksempel.dk", "işık.yılmaz@örnek.com.tr",
       "レイ@例え.jp", "사용자@예시.한국", "françois@exemple.fr", "nguyễn.thảo@ví-dụ.vn", "ľubica@príklad.sk",
       "בדיקה@דוגמה.ישראל", "اختبار@مثال.موقع", "ગુજરાતી@ઉદાહરણ.ભારત"]


def email_with(rng: random.Random, style: str) -> Value:
    """An address written plainly, in upper case, internationalised, or %40, \\u0040 or &#64; encoded."""
    if style == "idn":
        local, domain = rng.choice(IDN).split("@")
        local = f"{local}{rng.randint(1, 99)}"
    else:
        local, domain = f"{rng.choice(ASCII_LOCAL)}{rng.choice(['', '', str(rng.randint(1, 99))])}", rng.choice(
            DOMAINS)
    sep = {"pct40": "%40", "json_u0040": "\\u0040", "html_entity": "&#64;"}.get(style, "@")
    v = f"{local}{sep}{domain}"
    return Value(v.upper() if style == "upper" else v, v.upper() if style == "upper" else v, style)


def email(rng: random.Random) -> Value:
    """An address as people type it: plain, upper case or internationalised."""
    return email_with(rng, rng.choice(["plain", "plain", "upper", "idn"]))


Phone = Callable[[random.Random], tuple[str, str]]


def phone_us_ca(rng: random.Random) -> tuple[str, str]:
    """NANP: NPA NXX-XXXX, NXX never N11 nor 555."""
    npa = rng.choice(["212", "415", "312", "617", "206", "303", "404", "512", "416", "604", "514", "403", "613",
                      "902", "778", "647", "305", "718", "902", "587"])
    nxx = str(rng.randint(201, 989))
    while nxx[1:] == "11" or nxx == "555":
        nxx = str(rng.randint(201, 989))
    line = digits(rng, 4)
    style = rng.choice(["paren", "dash", "dot", "space", "intl_space", "intl_dash", "e164", "one_paren"])
    return {"paren": f"({npa}) {nxx}-{line}", "dash": f"{npa}-{nxx}-{line}", "dot": f"{npa}.{nxx}.{line}",
            "space": f"{npa} {nxx} {line}", "intl_space": f"+1 {npa} {nxx} {line}",
            "intl_dash": f"+1-{npa}-{nxx}-{line}", "e164": f"+1{npa}{nxx}{line}",
            "one_paren": f"1 ({npa}) {nxx}-{line}"}[style], style


def phone_uk(rng: random.Random) -> tuple[str, str]:
    """Ofcom: 07 mobiles (not the 07700 900 drama range), 020 and 01xx geographic numbers."""
    style = rng.choice(["mobile", "mobile_intl", "mobile_intl0", "mobile_compact", "mobile_e164", "london",
                        "london_intl", "city", "city_intl"])
    if style.startswith("mobile"):
        m = "7" + rng.choice("4589") + digits(rng, 8)
        return {"mobile": f"0{m[:4]} {m[4:]}", "mobile_intl": f"+44 {m[:4]} {m[4:]}",
                "mobile_intl0": f"+44 (0){m[:4]} {m[4:]}", "mobile_compact": f"0{m}",
                "mobile_e164": f"+44{m}"}[style], style
    if style.startswith("london"):
        n = rng.choice("378") + digits(rng, 7)
        return (f"020 {n[:4]} {n[4:]}" if style == "london" else f"+44 20 {n[:4]} {n[4:]}"), style
    area = rng.choice(["161", "113", "131", "141", "117", "121", "151"])
    n = str(rng.randint(2, 9)) + digits(rng, 6)
    return (f"0{area} {n[:3]} {n[3:]}" if style == "city" else f"+44 {area} {n[:3]} {n[3:]}"), style


def phone_fr(rng: random.Random) -> tuple[str, str]:
    """ARCEP: ten digits 0[1-79] in pairs; +33 drops the 0."""
    n = rng.choice("1234567799") + digits(rng, 8)
    pairs = [n[1:][i:i + 2] for i in range(0, 8, 2)]
    style = rng.choice(["space", "dot", "dash", "compact", "intl", "intl0", "e164", "00"])
    return {"space": f"0{n[0]} " + " ".join(pairs), "dot": f"0{n[0]}." + ".".join(pairs),
            "dash": f"0{n[0]}-" + "-".join(pairs), "compact": f"0{n}", "intl": f"+33 {n[0]} " + " ".join(pairs),
            "intl0": f"+33 (0){n[0]} " + " ".join(pairs), "e164": f"+33{n}",
            "00": f"0033 {n[0]} " + " ".join(pairs)}[style], style


def phone_de(rng: random.Random) -> tuple[str, str]:
    """BNetzA: 015x/016x/017x mobiles with 7-8 digits, area codes 30/40/69/89/221 with subscriber numbers."""
    style = rng.choice(["mobile", "mobile_slash", "mobile_dash", "mobile_intl", "mobile_intl0", "mobile_e164",
                        "city", "city_intl", "city_paren", "city_00"])
    if style.startswith("mobile"):
        p = rng.choice(["151", "152", "157", "160", "162", "163", "170", "171", "172", "175", "176", "177", "179"])
        s = digits(rng, 8 if p[1] == "5" else 7)
        return {"mobile": f"0{p} {s}", "mobile_slash": f"0{p}/{s}", "mobile_dash": f"0{p}-{s}",
                "mobile_intl": f"+49 {p} {s}", "mobile_intl0": f"+49 (0){p} {s}",
                "mobile_e164": f"+49{p}{s}"}[style], style
    a = rng.choice(["30", "40", "69", "89", "221"])
    s = str(rng.randint(2, 9)) + digits(rng, 6 if a == "221" else 7)
    return {"city": f"0{a} {s}", "city_intl": f"+49 {a} {s}", "city_paren": f"(0{a}) {s[:4]} {s[4:]}",
            "city_00": f"0049 {a} {s}"}[style], style


def phone_in(rng: random.Random) -> tuple[str, str]:
    """TRAI: ten-digit mobiles from 6-9, printed 5-5; STD codes 11/22/80/79 with landlines."""
    style = rng.choice(["intl_55", "intl_dash", "zero", "dash55", "space55", "intl_compact", "landline",
                        "landline_intl"])
    if style.startswith("landline"):
        std = rng.choice(["11", "22", "80", "79", "33"])
        s = rng.choice("2346") + digits(rng, 7)
        return (f"0{std}-{s[:4]} {s[4:]}" if style == "landline" else f"+91 {std} {s[:4]} {s[4:]}"), style
    m = rng.choice("6789") + digits(rng, 9)
    return {"intl_55": f"+91 {m[:5]} {m[5:]}", "intl_dash": f"+91-{m}", "zero": f"0{m}",
            "dash55": f"{m[:5]}-{m[5:]}", "space55": f"{m[:5]} {m[5:]}", "intl_compact": f"+91{m}"}[style], style


def phone(fn: Phone) -> Maker:
    """A maker of a phone kind from its plan."""
    def make(rng: random.Random) -> Value:
        v, style = fn(rng)
        return Value(v, v, style)
    return make


def ssn(rng: random.Random) -> Value:
    """An SSN the SSA could issue, with dashes, spaces or compact."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    g, s = rng.randint(1, 99), rng.randint(1, 9999)
    style = rng.choice(["dash", "dash", "space", "compact"])
    v = {"dash": f"{area:03d}-{g:02d}-{s:04d}", "space": f"{area:03d} {g:02d} {s:04d}",
         "compact": f"{area:03d}{g:02d}{s:04d}"}[style]
    return Value(v, v, style)


def card_number(rng: random.Random) -> str:
    """A PAN in a published IIN range, completed with its Luhn digit."""
    brand = rng.choice(["visa", "mc", "mc2", "amex", "discover", "jcb", "diners", "unionpay"])
    prefix, length = {"visa": ("4", 16), "mc": (str(rng.randint(51, 55)), 16),
                      "mc2": (str(rng.randint(2221, 2720)), 16), "amex": (rng.choice(["34", "37"]), 15),
                      "discover": (rng.choice(["6011", "65", "644"]), 16), "jcb": (str(rng.randint(3528, 3589)), 16),
                      "diners": ("36", 14), "unionpay": ("62" + rng.choice("1258"), 16)}[brand]
    partial = prefix + digits(rng, length - len(prefix) - 1)
    return partial + luhn_digit(partial)


def card(rng: random.Random) -> Value:
    """A card number grouped with space, dash, dot, underscore or nothing."""
    sep = rng.choice([" ", " ", "-", ".", "_", ""])
    v = group_card(card_number(rng), sep)
    return Value(v, v, {" ": "space", "-": "dash", ".": "dot", "_": "underscore", "": "compact"}[sep])


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c", "NL": "4a10n", "GB": "4a6n8n",
             "BE": "3n7n2n", "CH": "5n12c", "PT": "4n4n11n2n", "PL": "8n16n", "DK": "4n9n1n", "NO": "4n6n1n",
             "FI": "3n11n", "EE": "2n2n11n1n", "LV": "4a13c", "LT": "5n11n", "SK": "4n6n10n", "SI": "5n8n2n",
             "HR": "7n10n", "RS": "3n13n2n", "BG": "4a4n2n8c", "GR": "3n4n16c", "TR": "5n1n16c", "IL": "3n3n13n",
             "JO": "4a4n18c", "UA": "6n19c", "BR": "8n5n10n1a1c", "IE": "4a6n8n"}


def iban(rng: random.Random) -> Value:
    """An IBAN of a registry country with right check digits: grouped by four, compact, or lower case."""
    cc = rng.choice(sorted(IBAN_BBAN))
    b = bban(rng, IBAN_BBAN[cc])
    raw = cc + iban_check(cc, b) + b
    style = rng.choice(["grouped", "grouped", "compact", "lower_grouped", "lower_compact"])
    v = {"grouped": group(raw, 4, " "), "compact": raw, "lower_grouped": group(raw, 4, " ").lower(),
         "lower_compact": raw.lower()}[style]
    return Value(v, v, f"{cc}_{style}")


# ---- makers of the wider kinds --------------------------------------------------------------------------------

def pem_body(pem: str) -> str:
    """The base64 lines between a PEM's BEGIN and END lines."""
    return "\n".join(line for line in pem.strip().splitlines() if not line.startswith("-----"))


def private_key(rng: random.Random) -> Value:
    """A PEM private key (EC PKCS#8 or SEC1, Ed25519 PKCS#8, OpenSSH), or one inside a GCP service-account JSON;
    the secret is its base64 body as printed."""
    style = rng.choice(["ec_pkcs8", "ec_sec1", "ed25519_pkcs8", "openssh", "gcp_sa_json"])
    seed = rng.getrandbits(256).to_bytes(32, "big")
    if style == "openssh":
        pub = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = base64.b64encode(openssh_ed25519_blob(seed, pub, rng.getrandbits(32).to_bytes(4, "big"),
                                                     b"me@laptop")).decode()
        pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(blob[i:i + 70] for i in range(0, len(blob), 70)) \
              + "\n-----END OPENSSH PRIVATE KEY-----\n"
        return Value(pem_body(pem), pem, style)
    if style.startswith("ed25519"):
        key: ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey = ed25519.Ed25519PrivateKey.from_private_bytes(
            seed)
    else:
        key = ec.derive_private_key(int.from_bytes(seed, "big") % (2**255) + 1, ec.SECP256R1())
    fmt = serialization.PrivateFormat.TraditionalOpenSSL if style == "ec_sec1" else serialization.PrivateFormat.PKCS8
    pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
    if style != "gcp_sa_json":
        return Value(pem_body(pem), pem, style)
    sa = {"type": "service_account", "project_id": "family-photos-412019", "private_key_id": pick(rng, HEX, 40),
          "private_key": pem, "client_email": "backup@family-photos-412019.iam.gserviceaccount.com",
          "client_id": digits(rng, 21), "token_uri": "https://oauth2.googleapis.com/token"}
    return Value(pem_body(pem).replace("\n", "\\n"), json.dumps(sa, indent=2), style)


def jwt(rng: random.Random) -> Value:
    """A signed JWT as Google and Microsoft identity platforms issue them (RS256) or an app's HS256 one."""
    alg = rng.choice(["RS256", "HS256"])
    head = {"alg": alg, "kid": pick(rng, HEX, 40), "typ": "JWT"}
    iss = rng.choice(["https://accounts.google.com", "https://login.microsoftonline.com/" + uid(rng) + "/v2.0",
                      "https://appleid.apple.com"])
    body = {"iss": iss, "aud": uid(rng), "sub": digits(rng, 21), "iat": 1764950400 + rng.randint(0, 10**6),
            "exp": 1764954000 + rng.randint(0, 10**6), "scope": "Calendars.Read Mail.Read Contacts.Read"}
    sig = rng.getrandbits(2048 if alg == "RS256" else 256)
    v = ".".join([b64url(json.dumps(head).encode()), b64url(json.dumps(body).encode()),
                  b64url(sig.to_bytes(256 if alg == "RS256" else 32, "big"))])
    return Value(v, v, alg.lower())


def auth_header(rng: random.Random) -> Value:
    """An Authorization value: Basic, Bearer, Digest (the response) or AWS SigV4 (the Signature)."""
    style = rng.choice(["basic", "bearer", "digest", "sigv4"])
    if style == "basic":
        tok = base64.b64encode(f"{rng.choice(ASCII_LOCAL)}:{pick(rng, B62, 14)}".encode()).decode()
        return Value(tok, f"Basic {tok}", style)
    if style == "bearer":
        tok = "EwB" + pick(rng, B64, 60)
        return Value(tok, f"Bearer {tok}", style)
    if style == "digest":
        tok = pick(rng, HEX, 32)
        return Value(tok, f'Digest username="{rng.choice(ASCII_LOCAL)}", realm="dav@nas", nonce="{pick(rng, HEX, 24)}'
                          f'", uri="/remote.php/dav/calendars/", qop=auth, nc=00000001, cnonce="{pick(rng, HEX, 8)}'
                          f'", response="{tok}"', style)
    tok = pick(rng, HEX, 64)
    return Value(tok, f"AWS4-HMAC-SHA256 Credential=AKIA{pick(rng, string.ascii_uppercase + '234567', 16)}/20261206/"
                      f"eu-west-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature={tok}", style)


COOKIES = {"google_1psid": ("__Secure-1PSID", lambda r: "g.a000" + pick(r, URLSAFE, 140)),
           "django": ("sessionid", lambda r: pick(r, string.ascii_lowercase + string.digits, 32)),
           "php": ("PHPSESSID", lambda r: pick(r, string.ascii_lowercase + string.digits, 26)),
           "java": ("JSESSIONID", lambda r: pick(r, HEX.upper(), 32)),
           "express": ("connect.sid", lambda r: "s%3A" + pick(r, URLSAFE, 32) + "." + pick(r, B62, 43)),
           "rails": ("_session_id", lambda r: pick(r, HEX, 32))}


def session_cookie(rng: random.Random) -> Value:
    """A session cookie value of a common framework or Google's `__Secure-1PSID`."""
    style = rng.choice(sorted(COOKIES))
    name, make = COOKIES[style]
    v = make(rng)
    return Value(v, v, style, {"cname": name})


def token(prefix_make: Callable[[random.Random], tuple[str, str]]) -> Maker:
    """A maker of a provider token kind from (token, style)."""
    def make(rng: random.Random) -> Value:
        v, style = prefix_make(rng)
        return Value(v, v, style)
    return make


def google_oauth(rng: random.Random) -> tuple[str, str]:
    """Google OAuth 2.0 access (`ya29.`) and refresh (`1//0`) tokens."""
    if rng.random() < 0.5:
        return "ya29.a0" + pick(rng, URLSAFE, 150), "access"
    return "1//0" + rng.choice("ge") + pick(rng, URLSAFE, 97), "refresh"


def slack_token(rng: random.Random) -> tuple[str, str]:
    """Slack bot and user tokens."""
    if rng.random() < 0.5:
        return f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, B62, 24)}", "bot"
    return f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}", "user"


def matrix_token(rng: random.Random) -> tuple[str, str]:
    """A Synapse access token (`syt_` localpart, random, CRC32 base62) or an appservice bridge's 64-char token."""
    if rng.random() < 0.5:
        body = f"syt_{b64url(rng.choice(ASCII_LOCAL).encode())}_{pick(rng, B62, 20)}"
        return f"{body}_{crc_b62(body)}", "syt"
    return pick(rng, B62, 64), "bridge_as_token"


B32 = string.ascii_uppercase + "234567"


def totp_seed(rng: random.Random) -> Value:
    """A TOTP shared secret: in an otpauth:// URI, as Google shows it (lower case in fours) or plain."""
    seed = pick(rng, B32, rng.choice([16, 32]))
    style = rng.choice(["uri", "grouped_lower", "plain"])
    if style == "uri":
        return Value(seed, f"otpauth://totp/{rng.choice(['Google', 'Dropbox', 'GitHub', 'Proton'])}:"
                           f"{rng.choice(ASCII_LOCAL)}?secret={seed}&issuer=Service&period=30", style)
    v = group(seed.lower(), 4, " ") if style == "grouped_lower" else seed
    return Value(v, v, style)


def recovery_code(rng: random.Random) -> Value:
    """Two-factor backup codes: Google's 8 digits (4 4), GitHub's 5-5 hex, Bitwarden's 32 characters."""
    style = rng.choice(["google", "github", "bitwarden"])
    if style == "bitwarden":
        v = pick(rng, string.ascii_lowercase + string.digits, 32)
    else:
        one = (lambda: f"{digits(rng, 4)} {digits(rng, 4)}") if style == "google" else (
            lambda: f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}")
        v = "\n".join(one() for _ in range(rng.randint(2, 5)))
    return Value(v, v, style)


def recovery_key(rng: random.Random) -> Value:
    """Account and disk recovery keys: Apple (7x4), Microsoft (5x5), BitLocker (8x6, each a multiple of 11),
    1Password Secret Key (A3-...)."""
    style = rng.choice(["apple", "microsoft", "bitlocker", "onepassword"])
    alnum = string.ascii_uppercase + string.digits
    if style == "apple":
        v = "-".join(pick(rng, alnum, 4) for _ in range(7))
    elif style == "microsoft":
        v = "-".join(pick(rng, alnum, 5) for _ in range(5))
    elif style == "bitlocker":
        v = "-".join(f"{11 * rng.randint(1, 65535):06d}" for _ in range(8))
    else:
        a = "23456789ABCDEFGHJKLMNPQRSTVWXYZ"
        v = "A3-" + "-".join(pick(rng, a, n) for n in (6, 6, 5, 5, 5, 5))
    return Value(v, v, style)


def es_dni(rng: random.Random) -> Value:
    """A Spanish DNI (8 digits, mod 23 letter) or NIE (X/Y/Z for 0/1/2)."""
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if rng.random() < 0.3:
        lead = rng.randint(0, 2)
        n = digits(rng, 7)
        return Value(v := "XYZ"[lead] + n + letters[int(f"{lead}{n}") % 23], v, "nie")
    n = digits(rng, 8)
    style = rng.choice(["dni", "dni_dash"])
    v = n + ("-" if style == "dni_dash" else "") + letters[int(n) % 23]
    return Value(v, v, style)


def br_cpf(rng: random.Random) -> Value:
    """A CPF: 9 digits and two mod 11 check digits, dotted or compact."""
    d = [int(c) for c in digits(rng, 9)]
    for size in (10, 11):
        r = sum(x * w for x, w in zip(d, range(size, 1, -1), strict=True)) * 10 % 11
        d.append(r % 10)
    n = "".join(map(str, d))
    style = rng.choice(["dotted", "compact"])
    v = f"{n[:3]}.{n[3:6]}.{n[6:9]}-{n[9:]}" if style == "dotted" else n
    return Value(v, v, style)


def nl_bsn(rng: random.Random) -> Value:
    """A BSN passing the 11-proof (weights 9..2 and -1)."""
    while True:
        d = [int(c) for c in str(rng.randint(1, 9)) + digits(rng, 7)]
        last = sum(x * w for x, w in zip(d, range(9, 1, -1), strict=True)) % 11
        if last < 10:
            break
    n = "".join(map(str, d)) + str(last)
    style = rng.choice(["compact", "dotted"])
    v = f"{n[:4]}.{n[4:6]}.{n[6:]}" if style == "dotted" else n
    return Value(v, v, style)


def pl_pesel(rng: random.Random) -> Value:
    """A PESEL: birth date (month + 20 after 1999), serial, weights 1-3-7-9 check digit."""
    year, month, day = rng.randint(1950, 2015), rng.randint(1, 12), rng.randint(1, 28)
    n = f"{year % 100:02d}{month + (20 if year >= 2000 else 0):02d}{day:02d}{digits(rng, 4)}"
    check = (10 - sum(int(c) * w for c, w in zip(n, [1, 3, 7, 9] * 3, strict=False)) % 10) % 10
    return Value(n + str(check), n + str(check), "pesel")


def fi_hetu(rng: random.Random) -> Value:
    """A Finnish henkilötunnus: DDMMYY, century sign, 002-899 and the mod 31 check character."""
    year = rng.randint(1940, 2015)
    dmy = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{year % 100:02d}"
    nnn = f"{rng.randint(2, 899):03d}"
    v = dmy + ("-" if year < 2000 else "A") + nnn + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(dmy + nnn) % 31]
    return Value(v, v, "hetu")


# ---- phone plans beyond the five: (styles -> print form) from each plan's national number ------------

def plan(national: Callable[[random.Random], str], forms: dict[str, Callable[[str], str]]) -> Maker:
    """A phone maker: a national significant number, printed in one of its country's forms."""
    def make(rng: random.Random) -> Value:
        n = national(rng)
        style = rng.choice(sorted(forms))
        v = forms[style](n)
        return Value(v, v, style)
    return make


WIDER_PHONES: dict[str, Maker] = {
    "phone_es": plan(lambda r: (p := r.choice(["6", "6", "71", "72", "73", "9"])) + digits(r, 9 - len(p)), {
        "space333": lambda n: f"{n[:3]} {n[3:6]} {n[6:]}",
        "intl_3222": lambda n: f"+34 {n[:3]} {n[3:5]} {n[5:7]} {n[7:]}",
        "compact": lambda n: n, "intl_compact": lambda n: f"+34{n}"}),
    "phone_br": plan(lambda r: r.choice(["11", "21", "31", "41", "51", "61", "71", "81", "85"]) + "9" + digits(r, 8), {
        "paren": lambda n: f"({n[:2]}) {n[2:7]}-{n[7:]}", "intl": lambda n: f"+55 {n[:2]} {n[2:7]}-{n[7:]}",
        "intl_space": lambda n: f"+55 {n[:2]} {n[2:7]} {n[7:]}", "zero_ddd": lambda n: f"0{n[:2]} {n[2:7]}-{n[7:]}"}),
    "phone_it": plan(lambda r: "3" + r.choice(["20", "27", "28", "33", "35", "38", "40", "47", "48", "49", "66",
                                              "88", "92"]) + digits(r, 7), {
        "space": lambda n: f"{n[:3]} {n[3:6]} {n[6:]}", "intl": lambda n: f"+39 {n[:3]} {n[3:]}",
        "compact": lambda n: n, "slash": lambda n: f"{n[:3]}/{n[3:]}"}),
    "phone_nl": plan(lambda r: "6" + str(r.randint(1, 5)) + digits(r, 7), {
        "dash": lambda n: f"0{n[0]}-{n[1:]}", "space": lambda n: f"0{n[0]} {n[1:5]} {n[5:]}",
        "intl": lambda n: f"+31 {n[0]} {n[1:]}", "intl0": lambda n: f"+31 (0){n[0]} {n[1:]}"}),
    "phone_pl": plan(lambda r: r.choice(["50", "51", "53", "57", "60", "66", "69", "72", "78", "79", "88"])
                     + digits(r, 7), {
        "space333": lambda n: f"{n[:3]} {n[3:6]} {n[6:]}", "intl": lambda n: f"+48 {n[:3]} {n[3:6]} {n[6:]}",
        "dash": lambda n: f"{n[:3]}-{n[3:6]}-{n[6:]}", "intl_compact": lambda n: f"+48{n}"}),
    "phone_tr": plan(lambda r: "5" + r.choice(["30", "32", "35", "42", "44", "05", "55", "52"]) + digits(r, 7), {
        "zero": lambda n: f"0{n[:3]} {n[3:6]} {n[6:8]} {n[8:]}",
        "intl": lambda n: f"+90 {n[:3]} {n[3:6]} {n[6:8]} {n[8:]}",
        "paren": lambda n: f"0 ({n[:3]}) {n[3:6]} {n[6:8]} {n[8:]}", "compact": lambda n: f"0{n}"}),
    "phone_jp": plan(lambda r: r.choice(["90", "80", "70"]) + digits(r, 8), {
        "dash": lambda n: f"0{n[:2]}-{n[2:6]}-{n[6:]}", "intl": lambda n: f"+81 {n[:2]}-{n[2:6]}-{n[6:]}",
        "compact": lambda n: f"0{n}", "paren": lambda n: f"0{n[:2]}({n[2:6]}){n[6:]}"}),
    "phone_kr": plan(lambda r: "10" + str(r.randint(2, 9)) + digits(r, 7), {
        "dash": lambda n: f"0{n[:2]}-{n[2:6]}-{n[6:]}", "intl": lambda n: f"+82 {n[:2]}-{n[2:6]}-{n[6:]}",
        "compact": lambda n: f"0{n}", "space": lambda n: f"0{n[:2]} {n[2:6]} {n[6:]}"}),
    "phone_gr": plan(lambda r: "69" + r.choice("3479") + digits(r, 7), {
        "compact": lambda n: n, "intl": lambda n: f"+30 {n}", "space": lambda n: f"{n[:3]} {n[3:6]} {n[6:]}",
        "intl_space": lambda n: f"+30 {n[:3]} {n[3:6]} {n[6:]}"}),
    "phone_ua": plan(lambda r: r.choice(["50", "63", "66", "67", "68", "73", "93", "95", "96", "97", "98", "99"])
                     + digits(r, 7), {
        "intl_paren": lambda n: f"+380 ({n[:2]}) {n[2:5]} {n[5:7]} {n[7:]}",
        "zero": lambda n: f"0{n[:2]} {n[2:5]} {n[5:7]} {n[7:]}", "intl_compact": lambda n: f"+380{n}",
        "dash": lambda n: f"0{n[:2]}-{n[2:5]}-{n[5:7]}-{n[7:]}"}),
    "phone_ph": plan(lambda r: "9" + r.choice(["05", "15", "17", "18", "27", "45", "56", "66", "77", "98"])
                     + digits(r, 7), {
        "zero": lambda n: f"0{n[:3]} {n[3:6]} {n[6:]}", "intl": lambda n: f"+63 {n[:3]} {n[3:6]} {n[6:]}",
        "compact": lambda n: f"0{n}", "dash": lambda n: f"0{n[:3]}-{n[3:6]}-{n[6:]}"}),
    "phone_ke": plan(lambda r: r.choice(["710", "712", "720", "722", "740", "790", "110", "111", "115"])
                     + digits(r, 6), {
        "zero": lambda n: f"0{n[:3]} {n[3:6]} {n[6:]}", "intl": lambda n: f"+254 {n[:3]} {n[3:6]} {n[6:]}",
        "intl_compact": lambda n: f"+254{n}", "compact": lambda n: f"0{n}"}),
}
"""Twelve national plans: CNMC, Anatel, AGCOM, ACM, UKE, BTK, MIC, MSIT, EETT, NKEK, NTC, CA Kenya."""


# ---- carriers: (name, template[, maker]); $v is the value as shown, the rest comes from `ctx` ----------------

BW = '{"encrypted": false, "folders": [], "items": [{"id": "$uid", "type": %s, "name": "%s", %s}]}'
"""A Bitwarden JSON export holding one item: its type, name and type-specific fields."""
VCARD = "BEGIN:VCARD\nVERSION:%s\nN:$last;$first;;;\nFN:$name\n%s\nEND:VCARD"
VEVENT = ("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//Google Inc//Google Calendar 70.9054//EN\nBEGIN:VEVENT\n"
          "UID:$hex@google.com\nDTSTART;TZID=Europe/Berlin:20261207T100000\nSUMMARY:%s\n%s\nEND:VEVENT\nEND:VCALENDAR")
MIME = ("From: %s\nTo: $name <me@example.org>\nSubject: %s\nMIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n%s")
GMAIL = ('{"id": "$hex", "threadId": "$hex", "labelIds": ["INBOX", "CATEGORY_PERSONAL"], "snippet": "%s", '
         '"payload": {"mimeType": "multipart/alternative", "headers": [{"name": "Subject", "value": "%s"}]}}')
TELEGRAM = ('{"name": "$name", "type": "personal_chat", "messages": [{"id": $n, "type": "message", '
            '"date": "${date}T19:42:11", "from": "$name", "text": "%s"}]}')
WHATSAPP = "[12/03/2026, 19:42:11] $name: %s"

PASSWORD = [
    ("bitwarden_json", BW % (1, "$site", '"login": {"username": "$user", "password": "$v", "totp": null}')),
    ("bitwarden_csv", "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,"
                      "login_totp\nPersonal,,login,$site,,,0,https://$site,$user,$v,"),
    ("onepassword_csv", 'Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\n"$site","https://$site/",'
                        '"$user","$v",,false,false,"Personal",""'),
    ("onepux_json", '{"overview": {"title": "$site"}, "details": {"loginFields": [{"value": "$user", "designation": '
                    '"username", "fieldType": "T"}, {"value": "$v", "designation": "password", "fieldType": "P"}]}}'),
    ("keepass_xml", '<Entry><UUID>$hex</UUID><String><Key>Title</Key><Value>$site</Value></String><String><Key>'
                    'UserName</Key><Value>$user</Value></String><String><Key>Password</Key><Value ProtectInMemory='
                    '"True">$v</Value></String></Entry>'),
    ("keepass_csv", '"Account","Login Name","Password","Web Site","Comments"\n"$site","$user","$v","https://$site/",""'),
    ("lastpass_csv", "url,username,password,totp,extra,name,grouping,fav\nhttps://$site/,$user,$v,,,$site,Shopping,0"),
    ("chrome_csv", "name,url,username,password,note\n$site,https://$site/login,$user,$v,"),
    ("firefox_csv", '"url","username","password","httpRealm","formActionOrigin","guid","timeCreated"\n'
                    '"https://$site","$user","$v",,"https://$site","{$uid}","1764950400000"'),
    ("icloud_csv", "Title,URL,Username,Password,Notes,OTPAuth\n$site ($user),https://$site/,$user,$v,,"),
    ("obsidian_md", "---\ntitle: Home network\ntags: [homelab, nas]\nupdated: $date\n---\n## NAS\n- user: admin\n"
                    "- password: $v\n"),
    ("obsidian_env", "## Nextcloud on the Pi\n```env\nDB_USER=nextcloud\nDB_PASSWORD=$v\nDB_HOST=mariadb\n```"),
    ("notion_compose", "# Paperless setup\n```yaml\nservices:\n  db:\n    image: mariadb:11\n    environment:\n"
                       "      MYSQL_ROOT_PASSWORD: $v\n```"),
    ("onenote_pgpassword", "Backup job (page Photos)\nPGPASSWORD=$v pg_dump -h 192.168.1.20 -U $user photos > p.sql"),
    ("gdocs_cli_flag", "Steps to restore the blog:\n1. mysql -u root --password $v -h nas.local wordpress < dump.sql"),
    ("gdocs_cli_p", "2. mysqldump -u root -p$v --all-databases > all.sql"),
    ("notion_redis", "Home Assistant cache\nREDIS_PASS=$v\nREDIS_HOST=192.168.1.30"),
    ("evernote_enex_nl", '<note><title>Router</title><content><![CDATA[<en-note><div>Wachtwoord router: $v</div>'
                         '</en-note>]]></content><created>20260312T194211Z</created></note>'),
    ("whatsapp_pt", WHATSAPP % "a senha do wi-fi é $v"),
    ("telegram_json_ru", TELEGRAM % "Пароль от роутера: $v"),
    ("imessage_de", "$name (iMessage), 12.03.2026 19:42:\nDas WLAN-Passwort ist $v"),
    ("signal_fr", "[$date 19:42] $name: mot de passe du wifi : $v"),
    ("mime_it", MIME % ("Assistenza <noreply@$site>", "Le tue credenziali",
                        "Password temporanea: $v\nCambiala al primo accesso.")),
    ("gmail_json_es", GMAIL % ("Tu contraseña temporal es $v. Cámbiala al iniciar sesión.", "Tu cuenta")),
    ("reminder_ja", "リマインダー（$date）：ルーターのパスワード：$v を変更する"),
    ("note_ko", "공유기 와이파이 비밀번호: $v"),
    ("sms_backup_tr", '<sms protocol="0" address="TURKCELL" date="1764950400000" type="1" body="Modem şifreniz: $v" '
                      'read="1" contact_name="(Unknown)" />'),
    ("tool_json_camel", '{"userName": "$user", "userPassword": "$v", "mustChangePassword": true}'),
    ("obsidian_yaml_camel", "nextcloud:\n  adminUser: admin\n  adminPassword: $v\n  trustedDomain: cloud.home.arpa"),
    ("notion_properties", "immich.properties\nspring.datasource.username=immich\nspring.datasource.password=$v"),
    ("todo_hi", "- [ ] Netflix का पासवर्ड: $v (बदलना है)"),
    ("chat_ar_ma", "[$date 21:03] $name: كلمة المرور ديال الويفي: $v"),
    ("chat_el", "$name: Ο κωδικός του Wi-Fi είναι $v"),
    ("note_pl", "Hasło do Netflixa: $v"),
]

AWS = [
    ("aws_credentials_note", "[personal]\naws_access_key_id = $akid\naws_secret_access_key = $v\nregion = eu-west-1"),
    ("credentials_csv", "User name,Password,Access key ID,Secret access key,Console login link\n"
                        "photos-backup,,$akid,$v,https://123456789012.signin.aws.amazon.com/console"),
    ("access_keys_csv", "Access key ID,Secret access key\n$akid,$v"),
    ("create_access_key_json", '{"AccessKey": {"UserName": "photos-backup", "AccessKeyId": "$akid", "Status": '
                               '"Active", "SecretAccessKey": "$v", "CreateDate": "${date}T10:12:00+00:00"}}'),
    ("sts_json", '{"Credentials": {"AccessKeyId": "$akid", "SecretAccessKey": "$v", '
                 '"Expiration": "${date}T11:00:00Z"}}'),
    ("aws_configure", "$$ aws configure --profile photos\nAWS Access Key ID [None]: $akid\nAWS Secret Access Key "
                      "[None]: $v\nDefault region name [None]: eu-central-1"),
    ("obsidian_export", "```sh\nexport AWS_ACCESS_KEY_ID=$akid\nexport AWS_SECRET_ACCESS_KEY=$v\n```"),
    ("bitwarden_note_json", BW % (2, "AWS backup user",
                                  '"notes": "key id $akid\\nsecret $v", "secureNote": {"type": 0}')),
    ("keepass_xml_field", '<Entry><String><Key>Title</Key><Value>AWS</Value></String><String><Key>aws_access_key_id'
                          '</Key><Value>$akid</Value></String><String><Key>aws_secret_access_key</Key><Value '
                          'ProtectInMemory="True">$v</Value></String></Entry>'),
    ("whatsapp_beside", WHATSAPP % "$akid $v"),
    ("telegram_json_colon", TELEGRAM % "$akid:$v"),
    ("rclone_conf_note", "[s3-backup]\ntype = s3\nprovider = AWS\naccess_key_id = $akid\nsecret_access_key = $v"),
    ("gmail_json_de", GMAIL % ("Zugriffsschlüssel-ID: $akid Geheimer Zugriffsschlüssel: $v", "Neuer IAM-Benutzer")),
    ("mime_fr", MIME % ("Admin <it@$site>", "Vos accès S3", "ID de clé d'accès : $akid\nClé d'accès secrète : $v")),
    ("notion_table", "| Access key | Secret |\n|---|---|\n| $akid | $v |"),
    ("onepassword_csv", "Title,Username,Password,Notes\nAWS photos,$akid,$v,IAM user for restic"),
    ("restic_env_note", "RESTIC_REPOSITORY=s3:s3.amazonaws.com/fam-photos\nAWS_ACCESS_KEY_ID=$akid\n"
                        "AWS_SECRET_ACCESS_KEY=$v"),
    ("gdocs_boto3", "s3 = boto3.client('s3', aws_access_key_id='$akid', aws_secret_access_key='$v')"),
    ("tool_json_camel", '{"accessKeyId": "$akid", "secretAccessKey": "$v", "region": "us-east-1"}'),
    ("ics_description", VEVENT % ("Rotate backup key", "DESCRIPTION:Old pair $akid / $v - delete after rotation")),
    ("signal_es", "[$date 08:15] $name: clave secreta de AWS: $v (id $akid)"),
]

WEBHOOK = [
    ("obsidian_md", "## Alerts\nSlack webhook: $v\n"),
    ("notion_table", "| Automation | URL |\n|---|---|\n| Doorbell ping | $v |"),
    ("bitwarden_note_json", BW % (2, "Webhooks", '"notes": "family alerts: $v", "secureNote": {"type": 0}')),
    ("keepass_xml", '<Entry><String><Key>Title</Key><Value>Alerts hook</Value></String><String><Key>URL</Key>'
                    '<Value>$v</Value></String></Entry>'),
    ("mime_en", MIME % ("Alerts <noreply@$site>", "Your incoming webhook is ready",
                        "Post messages to:\n$v\nKeep this URL secret.")),
    ("gmail_json", GMAIL % ("Webhook URL: $v", "Webhook created")),
    ("telegram_json", TELEGRAM % "hook for the bot: $v"),
    ("whatsapp_es", WHATSAPP % "el webhook del grupo es $v"),
    ("signal_de", "[$date 11:20] $name: Webhook fürs Türklingel-Skript: $v"),
    ("imessage", "$name (iMessage):\nuse this one $v"),
    ("ics_description", VEVENT % ("Backup check", "DESCRIPTION:Bot posts the result to $v")),
    ("todo_md", "- [ ] Point the doorbell automation at $v"),
    ("onenote_curl", "curl -X POST -H 'Content-type: application/json' --data '{\"text\":\"backup ok\"}' $v"),
    ("home_assistant_yaml", 'rest_command:\n  notify_family:\n    url: "$v"\n    method: POST'),
    ("evernote_enex", "<note><title>Hooks</title><content><![CDATA[<en-note><div>$v</div></en-note>]]></content>"
                      "</note>"),
    ("google_tasks_json", '{"kind": "tasks#task", "id": "$hex", "title": "Fix webhook", "notes": "$v", "status": '
                          '"needsAction"}'),
    ("lastpass_csv", 'url,username,password,totp,extra,name,grouping,fav\nhttp://sn,,,,"$v",Family alerts,'
                     'Secure Notes,0'),
    ("gdocs_text", "Home automation notes\nWebhook (do not share): $v"),
]

WHSEC = [
    ("obsidian_env", "```env\nSTRIPE_SECRET_KEY=rk_live_redacted\nSTRIPE_WEBHOOK_SECRET=$v\n```"),
    ("stripe_listen_note", "> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is $v "
                           "(^C to quit)"),
    ("notion_table", "| Shop | Signing secret |\n|---|---|\n| etsy-mirror | $v |"),
    ("bitwarden_json", BW % (2, "Stripe shop", '"notes": "signing secret $v", "secureNote": {"type": 0}')),
    ("onepassword_csv", "Title,Username,Password,Notes\nStripe webhook,,$v,shop endpoint"),
    ("keepass_xml", '<String><Key>Signing secret</Key><Value ProtectInMemory="True">$v</Value></String>'),
    ("mime_en", MIME % ("Dev friend <dev@$site>", "webhook", "Here is the endpoint secret for the shop: $v")),
    ("gmail_json", GMAIL % ("the whsec is $v - put it in Netlify", "Re: shop")),
    ("whatsapp_it", WHATSAPP % "il segreto del webhook è $v"),
    ("telegram_json", TELEGRAM % "$v"),
    ("signal", "[$date 14:02] $name: webhook secret: $v"),
    ("todo_md", "- [ ] rotate $v after the launch"),
    ("gdocs_text", "Shop setup\nSigning secret: $v"),
    ("evernote_enex", "<note><title>Stripe</title><content><![CDATA[<en-note>$v</en-note>]]></content></note>"),
    ("netlify_toml_note", '[context.production.environment]\n  STRIPE_WHSEC = "$v"'),
    ("ics_description", VEVENT % ("Shop launch", "DESCRIPTION:check webhook $v in the dashboard")),
    ("tool_json", '{"endpoint": "https://shop.example.net/api/stripe", "secret": "$v", "livemode": true}'),
]

CONN = [
    ("obsidian_env", "```env\nDATABASE_URL=$v\n```"),
    ("appsettings_json", '{"ConnectionStrings": {"Default": "$v"}, "Logging": {"LogLevel": {"Default": "Warning"}}}'),
    ("notion_md", "## Budget app\nConnection string: `$v`"),
    ("keepass_notes", "<String><Key>Notes</Key><Value>$v</Value></String>"),
    ("bitwarden_json", BW % (2, "Home DB", '"notes": "$v", "secureNote": {"type": 0}')),
    ("mime_en", MIME % ("Nephew <ben@$site>", "db for the photo app", "Use this, works from the LAN:\n$v")),
    ("gmail_json_pt", GMAIL % ("string de conexão: $v", "Banco de dados")),
    ("whatsapp_nl", WHATSAPP % "verbindingsstring: $v"),
    ("telegram_json", TELEGRAM % "$v"),
    ("signal", "[$date 23:01] $name: try $v"),
    ("imessage_fr", "$name (iMessage) :\nchaîne de connexion : $v"),
    ("todo_md", "- [ ] move $v to the vault"),
    ("gdocs_text", "Kodi library DB\n$v"),
    ("evernote_enex", "<note><title>DB</title><content><![CDATA[<en-note><div>$v</div></en-note>]]></content></note>"),
    ("onenote_yaml", "paperless:\n  db: \"$v\""),
    ("home_assistant_recorder", "recorder:\n  db_url: $v\n  purge_keep_days: 30"),
    ("ics_description", VEVENT % ("Migrate DB", "DESCRIPTION:source $v")),
    ("tool_json", '{"name": "photos", "type": "database", "connection": "$v"}'),
]

KEYLABELS = ["API Key: $v", "Secret key = $v", "the access token is $v", "Client secret: $v", "API-Schlüssel: $v",
             "clé API : $v", "clave de API: $v", "chave de API: $v", "chiave API: $v", "API-sleutel: $v",
             "API 키: $v", "APIキー：$v", "API 金鑰：$v", "ключ API: $v", "klucz API: $v", "API anahtarı: $v",
             "khóa API: $v", "API-nøgle: $v", "API-avain: $v", "API võti: $v", "מפתח API: $v", "مفتاح API: $v",
             "एपीआई कुंजी: $v", "Access Token: $v", "Secret Key: $v"]
LABELLED = [
    ("obsidian_md", "## Weather station\n- %s\n"),
    ("notion_md", "**Calendar sync**\n%s"),
    ("bitwarden_json", BW % (2, "Weather API", '"notes": "%s", "secureNote": {"type": 0}')),
    ("keepass_notes", "<String><Key>Notes</Key><Value>%s</Value></String>"),
    ("mime", MIME % ("Support <help@$site>", "Your developer account", "Welcome!\n%s\nKeep it private.")),
    ("gmail_json", GMAIL % ("%s", "API access")),
    ("whatsapp", WHATSAPP % "%s"),
    ("telegram_json", TELEGRAM % "%s"),
    ("signal", "[$date 09:30] $name: %s"),
    ("imessage", "$name (iMessage):\n%s"),
    ("todo_md", "- [ ] renew by $date, %s"),
    ("gdocs_text", "Integrations\n%s"),
    ("evernote_enex", "<note><title>Keys</title><content><![CDATA[<en-note><div>%s</div></en-note>]]></content>"
                      "</note>"),
    ("onenote", "Page: Smart home\n%s"),
    ("ics_description", VEVENT % ("API renewal", "DESCRIPTION:%s")),
    ("onepassword_csv", 'Title,Username,Password,Notes\nWeather,,,"%s"'),
]

DISGUISED = [
    ("obsidian_md", "token: $v"),
    ("notion_md", "Deploy key (copied from the web page): $v"),
    ("bitwarden_json", BW % (2, "CI token", '"notes": "$v", "secureNote": {"type": 0}')),
    ("keepass_xml", '<String><Key>Password</Key><Value ProtectInMemory="True">$v</Value></String>'),
    ("mime", MIME % ("Bot <bot@$site>", "token", "here: $v")),
    ("gmail_json", GMAIL % ("key = $v", "fwd: key")),
    ("whatsapp", WHATSAPP % "$v"),
    ("telegram_json", TELEGRAM % "токен: $v"),
    ("signal", "[$date 09:30] $name: $v"),
    ("imessage", "$name (iMessage):\nkey $v"),
    ("todo_md", "- [ ] revoke $v"),
    ("gdocs_text", "CI secrets\nTOKEN=$v"),
    ("evernote_enex", "<note><title>Tokens</title><content><![CDATA[<en-note>$v</en-note>]]></content></note>"),
    ("onenote", "Page: Dev\nkey: $v"),
    ("lastpass_csv", "url,username,password,totp,extra,name,grouping,fav\nhttps://$site/,bot,$v,,,bot,Dev,0"),
    ("tool_json", '{"name": "ci", "value": "$v"}'),
]


def email_as(style: str) -> Maker:
    """An email maker held to one encoding (the carriers that print it so)."""
    return lambda rng: email_with(rng, style)


EMAIL = [
    ("vcard3", VCARD % ("3.0", "EMAIL;TYPE=INTERNET,HOME:$v")),
    ("vcard4", VCARD % ("4.0", "EMAIL;TYPE=work;PREF=1:$v")),
    ("apple_vcard", VCARD % ("3.0", "item1.EMAIL;type=INTERNET;type=pref:$v\nitem1.X-ABLabel:_$$!<Other>!$$_")),
    ("google_contacts_csv", "Name,Given Name,Family Name,E-mail 1 - Type,E-mail 1 - Value\n"
                            "$name,$first,$last,* Home,$v"),
    ("outlook_csv", '"First Name","Last Name","E-mail Address","E-mail Display Name"\n"$first","$last","$v","$name"'),
    ("ics_attendee", VEVENT % ("Dinner", "ATTENDEE;CN=$name;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION:mailto:$v")),
    ("ics_organizer", VEVENT % ("Book club", "ORGANIZER;CN=$name:mailto:$v")),
    ("gcal_json", '{"kind": "calendar#event", "id": "$hex", "attendees": [{"email": "$v", '
                  '"responseStatus": "accepted"}]}'),
    ("graph_event_json", '{"subject": "Dentist", "attendees": [{"type": "required", "emailAddress": {"name": "$name", '
                         '"address": "$v"}}]}'),
    ("gmail_headers_json", '{"id": "$hex", "payload": {"headers": [{"name": "From", "value": "$name <$v>"}, '
                           '{"name": "Subject", "value": "Fotos"}]}}'),
    ("graph_message_json", '{"subject": "Re: keys", "from": {"emailAddress": {"name": "$name", "address": "$v"}}}'),
    ("rfc5322", MIME % ('"$name" <$v>', "Saturday", "See you there.")),
    ("mbox", "From $v Sat Dec  5 09:14:02 2026\nFrom: $name <$v>\nSubject: photos\n\nhi"),
    ("mime_signature_de", MIME % ("Newsletter <news@$site>", "Re: Termin", "Viele Grüße\n--\n$name\nE-Mail: $v")),
    ("whatsapp_fr", WHATSAPP % "mon mail c'est $v"),
    ("telegram_json_uk", TELEGRAM % "моя пошта: $v"),
    ("bitwarden_json", BW % (1, "$site", '"login": {"username": "$v", "password": null}')),
    ("lastpass_csv", "url,username,password,totp,extra,name,grouping,fav\nhttps://$site/,$v,,,,$site,Email,0"),
    ("obsidian_frontmatter", "---\nname: $name\nemail: $v\ntags: [person]\n---"),
    ("sms_backup_body", '<sms protocol="0" address="MyBank" type="1" body="Correo registrado: $v" read="1" />'),
    ("unsubscribe_url_pct40", "Unsubscribe: https://news.$site/u?e=$v&list=weekly", email_as("pct40")),
    ("gmail_raw_json_u", '{"raw_header": "Reply-To: $v"}', email_as("json_u0040")),
    ("html_mail_entity", '<p>Contact: <a href="mailto:$v">$v</a></p>', email_as("html_entity")),
    ("tool_json_u", '{"contact": {"displayName": "$name", "mail": "$v"}}', email_as("json_u0040")),
    ("graph_search_pct40", "GET https://graph.microsoft.com/v1.0/users/$v/messages?$$top=5", email_as("pct40")),
    ("html_signature_entity", "<td>$name<br>E-mail: $v</td>", email_as("html_entity")),
    ("gcal_link_pct40", "https://calendar.google.com/calendar/r/eventedit?text=Lunch&add=$v", email_as("pct40")),
    ("mailto_link", "Write to me: mailto:$v?subject=Hallo"),
]

SSN = [
    ("bitwarden_identity_json", BW % (4, "Me", '"identity": {"firstName": "$first", "lastName": "$last", "ssn": "$v", '
                                               '"passportNumber": null}')),
    ("onepux_identity", '{"overview": {"title": "Identity"}, "details": {"sections": [{"fields": [{"title": '
                        '"social security number", "value": {"string": "$v"}}]}]}}'),
    ("lastpass_csv_note", 'url,username,password,totp,extra,name,grouping,fav\nhttp://sn,,,,"NoteType:Social Security\n'
                          'Name:$name\nNumber:$v",SSN,Secure Notes,0'),
    ("keepass_xml", '<String><Key>SSN</Key><Value ProtectInMemory="True">$v</Value></String>'),
    ("obsidian_frontmatter", "---\nname: $name\nssn: $v\n---"),
    ("notion_table", "| Field | Value |\n|---|---|\n| Social Security number | $v |"),
    ("gmail_json", GMAIL % ("Hi, please confirm the SSN on your W-2: $v", "W-2 question")),
    ("mime_accountant", MIME % ("CPA <cpa@$site>", "1040 draft", "Taxpayer: $name\nSSN: $v\nFiling status: single")),
    ("gdocs_text", "Mortgage application\nSocial Security No.: $v"),
    ("whatsapp", WHATSAPP % "my social is $v"),
    ("telegram_json_es", TELEGRAM % "mi número de Seguro Social: $v"),
    ("imessage", "$name (iMessage):\nSSN $v for the daycare form"),
    ("todo_md", "- [ ] send SSN $v to the broker"),
    ("ics_description", VEVENT % ("Tax appointment", "DESCRIPTION:bring SSN $v and last year's return")),
    ("graph_message_json", '{"subject": "Benefits", "body": {"contentType": "text", "content": "SSN: $v"}}'),
    ("evernote_enex", "<note><title>IDs</title><content><![CDATA[<en-note>Social security # $v</en-note>]]></content>"
                      "</note>"),
    ("sms_backup", '<sms protocol="0" address="IRS-Help" type="2" body="my ssn is $v" read="1" />'),
]

CARDLABELS = ["card number: $v", "número de tarjeta: $v", "numéro de carte : $v", "Kartennummer: $v",
              "numero carta: $v", "kaartnummer: $v", "kortnummer: $v", "numer karty: $v", "kart numarası: $v",
              "номер карты: $v", "カード番号：$v", "카드 번호: $v", "卡號：$v", "số thẻ: $v", "número do cartão: $v",
              "Card: $v"]
CARD = [
    ("bitwarden_card_json", BW % (3, "Visa", '"card": {"cardholderName": "$name", "brand": "Visa", "number": "$v", '
                                            '"expMonth": "4", "expYear": "2029", "code": null}')),
    ("onepux_card", '{"overview": {"title": "Card"}, "details": {"sections": [{"fields": [{"id": "ccnum", "value": '
                    '{"creditCardNumber": "$v"}}]}]}}'),
    ("lastpass_csv_note", 'url,username,password,totp,extra,name,grouping,fav\nhttp://sn,,,,"NoteType:Credit Card\n'
                          'Name on Card:$name\nNumber:$v",Card,Secure Notes,0'),
    ("keepass_xml", '<String><Key>Card number</Key><Value ProtectInMemory="True">$v</Value></String>'),
    ("notion_table", "| Card | Number |\n|---|---|\n| travel | $v |"),
    ("obsidian_md", "## Cards\n- %s"),
    ("gdocs_text", "Household\n%s"),
    ("whatsapp", WHATSAPP % "%s"),
    ("telegram_json", TELEGRAM % "%s"),
    ("signal", "[$date 18:11] $name: %s"),
    ("imessage", "$name (iMessage):\n%s"),
    ("mime_booking", MIME % ("Hotel <res@$site>", "Reservation", "Guarantee %s\nExpiry 04/29")),
    ("gmail_json", GMAIL % ("%s", "Order")),
    ("sms_backup", '<sms protocol="0" address="Mum" type="2" body="%s" read="1" />'),
    ("todo_md", "- [ ] update Spotify, %s"),
    ("evernote_enex", "<note><title>Cards</title><content><![CDATA[<en-note>%s</en-note>]]></content></note>"),
    ("onenote", "Travel\n%s"),
    ("graph_message_json", '{"subject": "fwd", "body": {"contentType": "text", "content": "%s"}}'),
]

IBANLABELS = ["IBAN: $v", "IBAN $v", "Kontonummer (IBAN): $v", "IBAN : $v", "rekeningnummer $v", "IBAN-nummer $v",
              "numer rachunku: $v", "číslo účtu: $v", "tilinumero: $v", "kontonummer: $v", "konto nr $v",
              "račun: $v", "IBAN за плащане: $v", "αριθμός IBAN: $v", "IBAN numarası: $v", "рахунок IBAN: $v",
              "מספר IBAN: $v", "رقم الآيبان: $v", "IBAN do cliente: $v", "pay rent to $v"]
IBAN = [
    ("bank_alert_mime", MIME % ("Bank <alerts@$site>", "Incoming transfer", "A transfer has arrived.\n%s")),
    ("gmail_json", GMAIL % ("%s", "Invoice")),
    ("graph_message_json", '{"subject": "Rechnung", "body": {"contentType": "text", "content": "%s"}}'),
    ("vcard_note", VCARD % ("3.0", "NOTE:%s")),
    ("bitwarden_json", BW % (2, "Bank", '"notes": "%s", "secureNote": {"type": 0}')),
    ("onepux_bank", '{"overview": {"title": "Bank"}, "details": {"sections": [{"fields": [{"title": "IBAN", "value": '
                    '{"string": "$v"}}]}]}}'),
    ("keepass_xml", '<String><Key>IBAN</Key><Value>$v</Value></String>'),
    ("notion_table", "| Payee | Account |\n|---|---|\n| landlord | %s |"),
    ("whatsapp", WHATSAPP % "%s"),
    ("telegram_json", TELEGRAM % "%s"),
    ("signal", "[$date 18:11] $name: %s"),
    ("imessage", "$name (iMessage):\n%s"),
    ("todo_md", "- [ ] %s (rent, by the 1st)"),
    ("ics_description", VEVENT % ("Rent", "DESCRIPTION:%s")),
    ("gdocs_text", "Payment details\n%s"),
    ("evernote_enex", "<note><title>Bank</title><content><![CDATA[<en-note>%s</en-note>]]></content></note>"),
    ("sms_backup", '<sms protocol="0" address="Landlord" type="1" body="%s" read="1" />'),
    ("obsidian_frontmatter", "---\npayee: $name\niban: $v\n---"),
]

PHONE = [
    ("vcard3", VCARD % ("3.0", "TEL;TYPE=CELL,VOICE:$v\nNOTE:$w_mobile")),
    ("vcard4", VCARD % ("4.0", "TEL;TYPE=\"cell,voice\";PREF=1:$v")),
    ("vcard21_qp", "BEGIN:VCARD\nVERSION:2.1\nN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:$qp;;;\nTEL;CELL;PREF:$v\n"
                   "END:VCARD"),
    ("apple_vcard", VCARD % ("3.0", "item1.TEL;type=pref:$v\nitem1.X-ABLabel:$w_mobile")),
    ("google_contacts_csv", "Name,Given Name,Family Name,Phone 1 - Type,Phone 1 - Value\n$name,$first,$last,Mobile,$v"),
    ("outlook_csv", '"First Name","Last Name","Mobile Phone","Home Phone"\n"$first","$last","$v",""'),
    ("mime_signature", MIME % ("$name <noreply@$site>", "Re: $date", "--\n$name\n$w_mobile: $v")),
    ("ics_description", VEVENT % ("Viewing", "DESCRIPTION:$w_call $v\nLOCATION:Main St 4")),
    ("gcal_json", '{"kind": "calendar#event", "id": "$hex", "summary": "Pick-up", "description": "$w_call $v"}'),
    ("graph_event_json", '{"subject": "Plumber", "body": {"contentType": "text", "content": "$w_tel: $v"}}'),
    ("whatsapp_txt", WHATSAPP % "$w_new $v"),
    ("telegram_json", TELEGRAM % "$w_mobile: $v"),
    ("call_log_xml", '<call number="$v" duration="63" date="1764950400000" type="1" presentation="1" '
                     'readable_date="$date 10:12:03" contact_name="$name" />'),
    ("sms_backup_body", '<sms protocol="0" address="Info" type="1" body="$w_new $v" read="1" contact_name="$name" />'),
    ("obsidian_frontmatter", "---\nname: $name\n$w_key: \"$v\"\n---"),
    ("gmail_json", GMAIL % ("$w_call $v", "Re: $date")),
    ("signal", "[$date 10:02] $name: $w_call $v"),
    ("todo_md", "- [ ] $w_call $name $v"),
    ("travel_confirmation", "Booking confirmed\nLead guest: $name\n$w_tel: $v"),
]

WORDS_BY_LANG = {
    "en_us": ("Mobile", "Phone", "Call me at", "New number, save it:", "phone"),
    "en_ca": ("Cell", "Tel", "Text or call me at", "My new cell is", "cell"),
    "fr_ca": ("Cellulaire", "Tél.", "Appelle-moi au", "Mon nouveau numéro :", "téléphone"),
    "en_gb": ("Mob", "Tel", "Ring me on", "My new mobile number is", "mobile"),
    "fr": ("Portable", "Tél.", "Appelle-moi au", "Mon nouveau numéro :", "téléphone"),
    "de": ("Handy", "Tel.", "Ruf mich an unter", "Meine neue Handynummer:", "telefon"),
    "en_in": ("Mobile", "Ph", "Call me on", "My new number:", "mobile"),
    "hi": ("मोबाइल", "फ़ोन", "मुझे इस नंबर पर कॉल करें", "मेरा नया नंबर:", "फ़ोन"),
    "gu": ("મોબાઇલ", "ફોન", "મને આ નંબર પર ફોન કરો", "મારો નવો નંબર:", "ફોન"),
    "kn": ("ಮೊಬೈಲ್", "ದೂರವಾಣಿ", "ಈ ಸಂಖ್ಯೆಗೆ ಕರೆ ಮಾಡಿ", "ನನ್ನ ಹೊಸ ಸಂಖ್ಯೆ:", "ಫೋನ್"),
    "es": ("Móvil", "Tel.", "Llámame al", "Mi nuevo número de móvil:", "teléfono"),
    "es_co": ("Celular", "Tel.", "Llámame al", "Mi nuevo celular:", "celular"),
    "pt_br": ("Celular", "Tel.", "Me liga no", "Meu número novo:", "telefone"),
    "it": ("Cellulare", "Tel.", "Chiamami al", "Il mio nuovo numero:", "telefono"),
    "nl": ("Mobiel", "Tel.", "Bel me op", "Mijn nieuwe nummer:", "telefoon"),
    "pl": ("Komórka", "Tel.", "Zadzwoń pod", "Mój nowy numer telefonu:", "telefon"),
    "tr": ("Cep", "Tel", "Beni şu numaradan ara", "Yeni telefon numaram:", "telefon"),
    "ja": ("携帯", "電話", "こちらの電話番号にお電話ください", "新しい電話番号：", "電話番号"),
    "ko": ("휴대폰", "전화", "이 번호로 전화 주세요", "새 전화번호:", "전화번호"),
    "el": ("Κινητό", "Τηλ.", "Πάρε με τηλέφωνο στο", "Το νέο μου κινητό:", "τηλέφωνο"),
    "uk": ("Моб.", "Тел.", "Зателефонуй мені на", "Мій новий номер телефону:", "телефон"),
    "fil": ("Cellphone", "Tel.", "Tawagan mo ako sa", "Bagong cellphone number ko:", "telepono"),
    "sw": ("Simu", "Simu ya mkononi", "Nipigie kwa", "Namba yangu mpya ya simu:", "simu"),
}
"""Context words per language: mobile label, telephone label, call me at, my new number, a front-matter key."""

PHONE_LANGS = {"phone_us_ca": ["en_us", "en_ca", "fr_ca"], "phone_uk": ["en_gb"], "phone_fr": ["fr"],
               "phone_de": ["de"], "phone_in": ["en_in", "hi", "gu", "kn"], "phone_es": ["es", "es_co"],
               "phone_br": ["pt_br"], "phone_it": ["it"], "phone_nl": ["nl"], "phone_pl": ["pl"], "phone_tr": ["tr"],
               "phone_jp": ["ja"], "phone_kr": ["ko"], "phone_gr": ["el"], "phone_ua": ["uk"], "phone_ph": ["fil"],
               "phone_ke": ["sw"]}
"""The languages whose context words each phone kind is written with."""

BLOCK = [
    ("obsidian_codeblock", "## Keys\n```\n$v\n```"),
    ("notion_md", "# Server access\nPaste into ~/.ssh or the app:\n\n$v"),
    ("evernote_enex", "<note><title>key</title><content><![CDATA[<en-note><pre>$v</pre></en-note>]]></content></note>"),
    ("mime_attachment_text", MIME % ("$name <me@$site>", "the key", "as asked:\n\n$v\n")),
    ("whatsapp_multiline", WHATSAPP % "$v"),
    ("keepass_notes", "<String><Key>Notes</Key><Value>$v</Value></String>"),
    ("onenote", "Page: Backup server\n$v"),
]
"""Carriers of multi-line values (keys, code lists): never JSON templates."""

SINGLE = [
    ("obsidian_md", "## Integrations\n- %s\n"),
    ("notion_md", "**Assistant setup**\n%s"),
    ("bitwarden_json", BW % (2, "Tokens", '"notes": "%s", "secureNote": {"type": 0}')),
    ("gmail_json", GMAIL % ("%s", "setup")),
    ("telegram_json", TELEGRAM % "%s"),
    ("whatsapp", WHATSAPP % "%s"),
    ("todo_md", "- [ ] rotate: %s"),
    ("mime", MIME % ("$name <me@$site>", "config", "%s")),
]
"""Carriers of one-line values, with a label per kind."""

WIDER_LABELS = {
    "jwt": ["id_token: $v", "Authorization: Bearer $v", '{"access_token": "$v", "token_type": "Bearer"}'],
    "auth_header": ["Authorization: $v", "curl -H 'Authorization: $v' https://dav.$site/", '-H "Authorization: $v"'],
    "session_cookie": ["Cookie: $cname=$v", "Set-Cookie: $cname=$v; Path=/; Secure; HttpOnly",
                       ".$site\tTRUE\t/\tTRUE\t1796486400\t$cname\t$v", '{"name": "$cname", "value": "$v"}'],
    "google_oauth": ['{"token": "$v", "token_uri": "https://oauth2.googleapis.com/token"}', "token: $v",
                     'token = {"access_token":"$v","token_type":"Bearer"}'],
    "google_api_key": ["GOOGLE_API_KEY=$v", "https://www.googleapis.com/calendar/v3/calendars/primary/events?key=$v",
                       "Calendar API key $v"],
    "slack_token": ["SLACK_BOT_TOKEN=$v", "bot token: $v", "xoxb for the reminders bot: $v"],
    "telegram_bot_token": ["bot_token: $v", "TELEGRAM_TOKEN=$v", "https://api.telegram.org/bot$v/getUpdates"],
    "notion_token": ["NOTION_TOKEN=$v", "Internal Integration Secret: $v", "notion: $v"],
    "github_token": ["GITHUB_TOKEN=$v", "gh auth token -> $v", "PAT: $v"],
    "matrix_token": ["as_token: $v", "access_token: $v", "Access Token (Element, Help & About): $v"],
    "totp_seed": ["$v", "2FA setup key: $v", "TOTP: $v"],
    "es_dni": ["DNI: $v", "NIF $v", "Documento: $v", "NIE: $v"],
    "br_cpf": ["CPF: $v", "CPF do titular $v", "meu CPF é $v"],
    "nl_bsn": ["BSN: $v", "burgerservicenummer $v", "BSN-nummer: $v"],
    "pl_pesel": ["PESEL: $v", "nr PESEL $v", "PESEL dziecka: $v"],
    "fi_hetu": ["henkilötunnus: $v", "HETU $v", "hetu: $v"],
}
"""Label forms of the wider one-line kinds."""

TOTP = [
    ("bitwarden_json", BW % (1, "$site", '"login": {"username": "$user", "password": null, "totp": "$v"}')),
    ("onepassword_csv", 'Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\n"$site","https://$site/",'
                        '"$user",,"$v",false,false,,'),
    ("lastpass_csv", "url,username,password,totp,extra,name,grouping,fav\nhttps://$site/,$user,,$v,,$site,,0"),
    ("icloud_csv", "Title,URL,Username,Password,Notes,OTPAuth\n$site,https://$site/,$user,,,$v"),
    ("keepass_xml", '<String><Key>otp</Key><Value>$v</Value></String>'),
]

RECOVERY_CODES = [
    ("codes_txt", "SAVE YOUR BACKUP CODES\n$first's account\n\n$v\n\n(Each code can be used once.)"),
    ("github_recovery_codes_txt", "github-recovery-codes.txt\n$v"),
    ("obsidian_md", "## 2FA backup codes ($site)\n```\n$v\n```"),
    ("apple_notes", "Recovery / backup codes\n$v"),
    ("mime_self_es", MIME % ("$name <me@$site>", "backup codes", "Códigos de respaldo:\n$v")),
    ("keepass_notes", "<String><Key>Notes</Key><Value>Backup codes:\n$v</Value></String>"),
]


def key_as(style: str) -> Maker:
    """A recovery-key maker held to one issuer (the carriers that name it)."""
    def make(rng: random.Random) -> Value:
        v = recovery_key(rng)
        while v.style != style:
            v = recovery_key(rng)
        return v
    return make


RECOVERY_KEYS = [
    ("onepassword_emergency_kit", "1Password Emergency Kit\nSign-in address my.1password.eu\nSecret Key\n$v",
     key_as("onepassword")),
    ("bitlocker_txt", "BitLocker Drive Encryption recovery key\nIdentifier: $uid\nRecovery Key:\n$v",
     key_as("bitlocker")),
    ("notion_apple", "Recovery key (Apple Account): $v", key_as("apple")),
    ("obsidian_microsoft", "## Microsoft account\nrecovery code: $v", key_as("microsoft")),
    ("keepass_notes", "<String><Key>Recovery key</Key><Value>$v</Value></String>"),
    ("apple_notes_de", "Wiederherstellungsschlüssel: $v"),
    ("gdocs_fr", "Clé de récupération : $v"),
]


# ---- the corpus ------------------------------------------------------------------------------------------------

Carriers = list[tuple]

KINDS: dict[str, tuple[Maker, Carriers, list[str]]] = {
    "password": (password, PASSWORD, []),
    "aws_secret": (aws_secret, AWS, []),
    "webhook": (webhook, WEBHOOK, []),
    "stripe_whsec": (stripe_whsec, WHSEC, []),
    "connection_string": (connection_string, CONN, []),
    "labelled_key": (labelled_key, LABELLED, KEYLABELS),
    "disguised": (disguised, DISGUISED, []),
    "email": (email, EMAIL, []),
    **{k: (phone(fn), PHONE, []) for k, fn in (("phone_us_ca", phone_us_ca), ("phone_uk", phone_uk),
                                                ("phone_fr", phone_fr), ("phone_de", phone_de),
                                                ("phone_in", phone_in))},
    "ssn": (ssn, SSN, []),
    "card": (card, CARD, CARDLABELS),
    "iban": (iban, IBAN, IBANLABELS),
    "private_key": (private_key, BLOCK, []),
    "jwt": (jwt, SINGLE, WIDER_LABELS["jwt"]),
    "auth_header": (auth_header, SINGLE, WIDER_LABELS["auth_header"]),
    "session_cookie": (session_cookie, SINGLE, WIDER_LABELS["session_cookie"]),
    "google_oauth": (token(google_oauth), SINGLE, WIDER_LABELS["google_oauth"]),
    "google_api_key": (token(lambda r: ("AIza" + pick(r, URLSAFE, 35), "aiza")), SINGLE,
                       WIDER_LABELS["google_api_key"]),
    "slack_token": (token(slack_token), SINGLE, WIDER_LABELS["slack_token"]),
    "telegram_bot_token": (token(lambda r: (f"{r.randint(10**8, 10**10 - 1)}:AA{pick(r, URLSAFE, 33)}", "bot")),
                           SINGLE, WIDER_LABELS["telegram_bot_token"]),
    "notion_token": (token(lambda r: ("secret_" + pick(r, B62, 43), "secret") if r.random() < 0.5 else
                           ("ntn_" + pick(r, B62, 46), "ntn")), SINGLE, WIDER_LABELS["notion_token"]),
    "github_token": (token(lambda r: (crc_token(r, r.choice(["ghp_", "gho_"])), "crc")), SINGLE,
                     WIDER_LABELS["github_token"]),
    "matrix_token": (token(matrix_token), SINGLE, WIDER_LABELS["matrix_token"]),
    "totp_seed": (totp_seed, TOTP + SINGLE, WIDER_LABELS["totp_seed"]),
    "recovery_code": (recovery_code, RECOVERY_CODES, []),
    "recovery_key": (recovery_key, RECOVERY_KEYS, []),
    **{k: (maker, PHONE, []) for k, maker in WIDER_PHONES.items()},
    "es_dni": (es_dni, SINGLE, WIDER_LABELS["es_dni"]),
    "br_cpf": (br_cpf, SINGLE, WIDER_LABELS["br_cpf"]),
    "nl_bsn": (nl_bsn, SINGLE, WIDER_LABELS["nl_bsn"]),
    "pl_pesel": (pl_pesel, SINGLE, WIDER_LABELS["pl_pesel"]),
    "fi_hetu": (fi_hetu, SINGLE, WIDER_LABELS["fi_hetu"]),
}
"""Each kind: its maker, its carriers, and the labels a carrier's `%s` takes (with `$v` inside)."""

ENVELOPES = [
    lambda text, n: {"tool": "contacts.search", "ok": True, "result": text},
    lambda text, n: {"type": "tool_result", "tool_use_id": f"toolu_{n:08d}", "content": [{"type": "text",
                                                                                          "text": text}]},
    lambda text, n: {"role": "tool", "name": "mail.read", "tool_call_id": f"call_{n}", "content": text},
    lambda text, n: {"jsonrpc": "2.0", "id": n, "result": {"content": [{"type": "text", "text": text}],
                                                             "isError": False}},
]
"""JSON tool results a third of the cases travel in: generic, Anthropic, OpenAI and MCP."""


def fill(template: str, rng: random.Random, value: Value, labels: list[str], kind: str) -> str:
    """The carrier's text: a label for its `%s`, then names, ids, context words and the value."""
    in_json = template.startswith("{")
    if "%s" in template:
        label = rng.choice(labels)
        template = template % (json.dumps(label, ensure_ascii=False)[1:-1] if in_json else label)
    fields = ctx(rng)
    fields["qp"] = quopri.encodestring(f"{fields['last']};{fields['first']}".encode()).decode().strip()
    if kind in PHONE_LANGS:
        words = WORDS_BY_LANG[rng.choice(PHONE_LANGS[kind])]
        fields.update(zip(("w_mobile", "w_tel", "w_call", "w_new", "w_key"), words, strict=True))
    shown = value.shown
    if in_json and value.style != "json_u0040":  # a JSON export escapes what it holds; that style is the escape
        shown = json.dumps(shown, ensure_ascii=False)[1:-1]
    return string.Template(template).substitute(fields | value.extra | {"v": shown})


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, carriers in turn, every third one inside a JSON tool result."""
    for kind, (maker, carriers, labels) in KINDS.items():
        rng = random.Random(f"twentieth/{kind}")
        for i in range(PER_KIND):
            entry = carriers[i % len(carriers)]
            value = (entry[2] if len(entry) > 2 else maker)(rng)
            template = entry[1]
            if entry[0].startswith(("vcard", "ics", "mime", "apple_vcard", "rfc5322")):
                template = template.replace("\n", "\r\n")  # RFC 6350, 5545 and 5322 end lines with CRLF
            text = fill(template, rng, value, labels, kind)
            is_json = i % 3 == 0
            carried = json.dumps(ENVELOPES[i % 4](text, i), ensure_ascii=i % 6 == 0) if is_json else text
            yield Case(kind, f"{entry[0]}/{value.style}", value.secret, text, carried, is_json)


# ---- near misses -----------------------------------------------------------------------------------------------

TEST_CARDS = ["4242 4242 4242 4242", "4000 0566 5566 5556", "5555 5555 5555 4444", "2223 0031 2200 3222",
              "3782 822463 10005", "6011 1111 1111 1117", "3056 930009 0204", "3566 0020 2036 0505",
              "6200 0000 0000 0005", "4111 1111 1111 1111", "5105 1051 0510 5100", "4000 0000 0000 0002"]
"""Stripe's, Adyen's and Braintree's published test numbers."""
SERVICE = ["Apple Support: 1-800-275-2273", "Lufthansa Service Center Tel. +49 69 86 799 799",
           "Service client SNCF : 3635", "IRCTC customer care: 139", "Kundenservice Telekom: 0800 330 1000",
           "Atención al cliente Iberia: +34 91 111 8843", "HMRC helpline 0300 200 3300"]
"""Businesses' published service lines, printed as signatures and confirmations print them."""


def near_misses(rng: random.Random) -> dict[str, str]:
    """One near miss of each sort."""
    u, h = uid(rng), pick(rng, HEX, 16)
    last4 = digits(rng, 4)
    bad_card = card_number(rng)
    bad_card = bad_card[:-1] + str((int(bad_card[-1]) + rng.randint(1, 9)) % 10)
    good = iban(rng).shown.replace(" ", "")
    bad_iban = good[:2] + f"{(int(good[2:4]) + rng.randint(1, 8)) % 97 + 2:02d}"[-2:] + good[4:]
    area = rng.choice(["666", "000", str(rng.randint(900, 999))])
    return {
        "vcard_uid": f"BEGIN:VCARD\r\nVERSION:4.0\r\nUID:urn:uuid:{u}\r\nREV:20261206T101500Z\r\nEND:VCARD",
        "event_uid": f'{{"iCalUID": "{h}@google.com", "id": "{h}_20261207T090000Z", "sequence": 2}}',
        "message_id": f"Message-ID: <CAF{pick(rng, B62, 40)}@mail.gmail.com>\nIn-Reply-To: <{u}@outlook.com>",
        "gmail_thread": f'{{"id": "{h}", "threadId": "{h}", "historyId": "{digits(rng, 7)}", "sizeEstimate": '
                        f'{rng.randint(2000, 90000)}}}',
        "rrule_tz": f"RRULE:FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=2027{rng.randint(1, 12):02d}01T000000Z\n"
                    f"DTSTART;TZID={rng.choice(['America/Sao_Paulo', 'Asia/Kolkata', 'Europe/Riga'])}:20261207T090000",
        "meeting_id": f"Join Zoom Meeting https://us02web.zoom.us/j/8{digits(rng, 10)}\nMeeting ID: 8{digits(rng, 2)} "
                      f"{digits(rng, 4)} {digits(rng, 4)}",
        "booking_ref": f"Booking reference: {pick(rng, string.ascii_uppercase + '23456789', 6)} - flight "
                       f"{rng.choice(['LH', 'TK', 'IB', 'SQ'])}{rng.randint(100, 999)}, seat {rng.randint(1, 40)}C",
        "order_tracking": f"Order #{digits(rng, 3)}-{digits(rng, 7)}-{digits(rng, 7)} shipped, UPS tracking "
                          f"1Z{pick(rng, string.ascii_uppercase + string.digits, 16)}",
        "amount": f"Total charged: {rng.choice(['€', 'USD ', 'R$ ', '₹ ', 'CHF '])}{rng.randint(1, 9)},"
                  f"{digits(rng, 3)}.{digits(rng, 2)}",
        "card_last4": rng.choice([f"Visa ending in {last4}", f"card •••• {last4} was charged",
                                  f"Mastercard **** **** **** {last4}"]),
        "event_dates": f"DTSTART:202612{rng.randint(10, 28)}T100000Z\nDTEND:202612{rng.randint(10, 28)}T113000Z",
        "export_format": rng.choice(["VERSION:4.0\nPRODID:-//Apple Inc.//iPhone OS 18.1//EN",
                                     '{"encrypted": false, "folders": [], "items": []}',
                                     "KeePass 2.57 KDBX 4.1 export", "SMS Backup & Restore 10.20.002 count=1843"]),
        "hash_etag": rng.choice([f'ETag: "{digits(rng, 16)}"', f"sha256: {pick(rng, HEX, 64)}",
                                 f'"etag": "\\"{pick(rng, B62, 16)}\\""']),
        "placeholder": rng.choice(["password: ********", "API Key: <your-api-key>", "IBAN: XX00 0000 0000 0000 00",
                                   "DB_PASSWORD=changeme", "SSN: XXX-XX-XXXX", "token: YOUR_TOKEN_HERE"]),
        "masked": rng.choice(["j***@gmail.com", f"Mobile +44 7*** ***{digits(rng, 3)}", f"SSN ***-**-{last4}",
                              f"IBAN DE** **** **** **** **{digits(rng, 2)} {digits(rng, 2)}"]),
        "luhn_invalid": f"card number: {group_card(bad_card, ' ')}",
        "iban_invalid": f"IBAN: {group(bad_iban, 4, ' ')}",
        "ssn_invalid": f"SSN: {area}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}",
        "service_number": rng.choice(SERVICE),
        "holiday_feed": rng.choice(["https://calendar.google.com/calendar/ical/en.usa%23holiday%40group.v.calendar"
                                    ".google.com/public/basic.ics", "calendarId: de.german#holiday@group.v.calendar"
                                    ".google.com", "webcal://p24-calendars.icloud.com/holiday/"
                                    + rng.choice(["US_en", "DE_de", "FR_fr", "JP_ja"]) + ".ics"]),
        "gmail_b64_body": '{"mimeType": "text/plain", "body": {"size": 31, "data": "'
                          + b64url(f"See you at {rng.randint(5, 9)} pm, bring the cake!".encode()) + '"}}',
        "test_card": f"Use the test card {rng.choice(TEST_CARDS)}, any future expiry, any CVC",
    }


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text)."""
    rng = random.Random("twentieth/near-misses")
    rows = [near_misses(rng) for _ in range(NEGATIVES_PER_SORT)]
    for sort in rows[0]:
        for row in rows:
            yield sort, row[sort]
