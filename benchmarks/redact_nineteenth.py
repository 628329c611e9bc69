"""The nineteenth redaction corpus: mobile apps and their backends, as a coding or support agent meets them.

Written blind to the detection rules and to the other corpora, from the formats' public specifications and the
providers' published formats. Carriers: Sentry events with breadcrumbs, Crashlytics and Bugsnag reports, logcat and
tombstones, iOS crash logs and sysdiagnose, React Native red boxes, Flutter traces, Firebase Analytics BigQuery
rows, Amplitude, Mixpanel, AppsFlyer and Adjust postbacks, APNs, FCM v1 and OneSignal payloads, deep links,
google-services.json, GoogleService-Info.plist, Info.plist, AndroidManifest.xml, gradle.properties,
local.properties, key.properties, fastlane files, xcconfig, Expo app.json/eas.json, Codemagic and Bitrise YAML,
Firestore and Realtime Database exports, Supabase rows and logs, Parse, Amplify, App Store Connect and Play Console
API responses, reviews and replies, TestFlight feedback, support chats, OCR and accessibility dumps, Charles,
Proxyman, Flipper and WebView HAR captures; free text in 40-odd languages. About a third is JSON carried.
50 kinds x PER_KIND values: the issue's 16 in 15 to 25 carriers each, 12 phone plans beyond the issue's five, 9
provider tokens, PEM keys, JWTs, 4 HTTP auth shapes and session cookies, 6 national ids outside the target; 21
near-miss sorts x 20.

Formats and their sources:
- card: ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55 and 2221-2720, Amex 34/37, Discover 6011/644-649/65,
  JCB 3528-3589, Diners 36, UnionPay 62) and the Luhn check (ISO/IEC 7812-1 annex B). The providers' published
  sandbox numbers (Stripe's 4242 4242 4242 4242, Adyen's, Braintree's) are documentation, the same for everyone
  and never a person's card: judged NOT secret, written as a near-miss sort (`published_test_cards`).
- iban: ISO 13616 and the SWIFT IBAN registry's BBAN structures, MOD 97-10 check digits (ISO 7064).
- ssn: the SSA's rules (area 001-899 less 666, group 01-99, serial 0001-9999).
- phones: the national numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT, CNMC, IFT, Anatel, AGCOM, ACM,
  UKE, BTK, MIC Japan, MSIT Korea, ACMA, NCC Nigeria, TDRA UAE), each with context words in its language; numbers
  in ranges Ofcom and ARCEP reserve for drama are avoided.
- aws_secret: AWS access keys (AKIA/ASIA + 16 base32, secret 40 base64 characters); webhook: Slack incoming
  webhooks and workflow triggers, Discord, Microsoft Teams/Power Automate, Google Chat, Mattermost, Zapier URLs as
  their docs print them (the secret is the token-bearing path or query value); stripe_whsec: Stripe's
  `whsec_` signing secrets (dashboard and `stripe listen`); Stripe secret keys `sk_live_`.
- FCM legacy server keys (`AAAA…:APA91b…`), Google API keys (`AIza` + 35), Google OAuth client secrets
  (`GOCSPX-` + 28), Sentry auth tokens (`sntrys_`, `sntryu_`), Supabase secret keys (`sb_secret_`), Mapbox
  secret tokens (`sk.` + base64url JSON + `.` + 22), Apple app-specific passwords (four dashed groups of four
  letters), GitHub tokens (2021 format, CRC32), JWTs (RFC 7519, HS256), PEM keys (RFC 7468, PKCS #8, SEC 1).
- ids outside the target: Brazil's CPF (mod 11), Spain's DNI (mod 23 letter), Poland's PESEL, Türkiye's T.C.
  Kimlik No, the Netherlands' BSN (11-proef), China's resident id (ISO 7064 MOD 11-2).

Client-side identifiers judged public by their vendors' documentation (near misses, never targets): Firebase API
keys in google-services.json / GoogleService-Info.plist ("API keys for Firebase services are not secret"), Stripe
publishable keys `pk_live_`, Sentry DSNs ("safe to keep public"), Mixpanel project tokens, Amplitude API keys of
the browser/mobile SDK, RevenueCat public SDK keys (`appl_`, `goog_`), Supabase publishable keys and the anon
role's key, Mapbox public tokens (`pk.`), Algolia search-only keys, OneSignal app ids, Adjust app tokens.
A case's `secret` is only what must not survive: a URL's password, a webhook's token-bearing part, a key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from benchmarks.corpus_formats import b64url, bban, crc_token, digits, group, group_card, iban_check, luhn_digit, pick

PER_KIND = 100
"""Cases written of every kind."""

LOWER_DIGITS = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"


@dataclass(frozen=True)
class Case:
    """One planted value: its kind, the part that must not survive, the text that carries it."""

    kind: str
    secret: str
    text: str
    form: str
    is_json: bool = False

    @property
    def carried(self) -> str:
        """The text as a trace carries it (JSON carriers are the JSON document itself)."""
        return self.text


Carrier = tuple[str, str, bool]
"""(form, template with {v} and other fields, is_json)."""
Made = tuple[str, str, dict[str, str]]
"""(secret, style, fields for the template; `v` is the value as printed)."""


def T(form: str, template: str) -> Carrier:
    """A plain-text carrier."""
    return form, template, False


def J(form: str, template: str) -> Carrier:
    """A JSON carrier: fields are JSON-escaped into it."""
    return form, template, True


def jesc(value: str) -> str:
    """`value` as it stands inside a JSON string (non-ASCII kept, as most mobile SDKs write it)."""
    return json.dumps(value, ensure_ascii=False)[1:-1]


def fill(template: str, fields: dict[str, str], is_json: bool) -> str:
    """The template with its `{field}`s replaced, JSON-escaped in a JSON carrier."""
    for key, value in fields.items():
        template = template.replace("{" + key + "}", jesc(value) if is_json else value)
    return template


# ---- values of the kinds ------------------------------------------------------------------------------

PW_WORDS = ("Keystore", "Sunrise", "Mango", "Falcon", "Tigre", "Lune", "Sakura", "Orzel", "Kraken", "Nebula",
            "Colibri", "Baobab", "Fjord", "Kiwi", "Zephyr", "Anaconda")


def m_password(rng: random.Random, i: int) -> Made:
    """A password a developer or user chose: word+digits+symbol, random mix, or passphrase-like."""
    style = ("word_mix", "random", "phrase")[i % 3]
    if style == "word_mix":
        value = rng.choice(PW_WORDS) + digits(rng, 4) + rng.choice("!#*-_.$~") + pick(rng, ALNUM, 3)
    elif style == "random":
        value = rng.choice(string.ascii_letters) + pick(rng, ALNUM + "!#*-_.", 15)
    else:
        value = "-".join(pick(rng, string.ascii_lowercase, 5) for _ in range(3)) + digits(rng, 2)
    return value, style, {"v": value}


def aws_id(rng: random.Random) -> str:
    """An AWS access key id: AKIA (long-term) or ASIA (STS), 16 base32 characters."""
    return rng.choice(("AKIA", "AKIA", "ASIA")) + pick(rng, BASE32, 16)


def m_aws(rng: random.Random, i: int) -> Made:
    """An AWS secret access key beside its access key id."""
    value = pick(rng, B64, 38) + rng.choice("/+") + pick(rng, ALNUM, 1)
    value = value[:12] + rng.choice("/+") + value[13:]
    return value, "k40", {"v": value, "id": aws_id(rng)}


def guid(rng: random.Random) -> str:
    """A random UUID v4 as text."""
    h = pick(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def m_webhook(rng: random.Random, i: int) -> Made:
    """A chat or automation webhook URL; the secret is its token-bearing path or query value."""
    style = ("slack", "discord", "teams", "powerautomate", "gchat", "mattermost", "zapier", "slack_trigger")[i % 8]
    if style == "slack":
        secret = f"T{pick(rng, BASE32, 8)}/B{pick(rng, BASE32, 10)}/{pick(rng, ALNUM, 24)}"
        url = "https://hooks.slack.com/services/" + secret
    elif style == "slack_trigger":
        secret = f"T{pick(rng, BASE32, 8)}/{digits(rng, 13)}/{pick(rng, HEX, 32)}"
        url = "https://hooks.slack.com/triggers/" + secret
    elif style == "discord":
        secret = f"{rng.choice('123')}{digits(rng, 18)}/{pick(rng, B64URL, 68)}"
        url = f"https://{rng.choice(('discord.com', 'discordapp.com'))}/api/webhooks/" + secret
    elif style == "teams":
        secret = f"{guid(rng)}@{guid(rng)}/IncomingWebhook/{pick(rng, HEX, 32)}/{guid(rng)}"
        url = f"https://{rng.choice(('contoso', 'appteam', 'mobil'))}.webhook.office.com/webhookb2/" + secret
    elif style == "powerautomate":
        secret = pick(rng, B64URL, 43)
        url = (f"https://prod-{digits(rng, 2)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig="
               + secret)
    elif style == "gchat":
        secret = pick(rng, B64URL, 43) + "%3D"
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, B64URL, 7)}/messages?key=AIzaSyDdI0hCZtE6vy"
               "SjMm-WEfRq3CPzqKqqsHI&token=" + secret)
    elif style == "mattermost":
        secret = pick(rng, LOWER_DIGITS, 26)
        url = f"https://chat.{rng.choice(('acme.io', 'appteam.dev', 'studio.net'))}/hooks/" + secret
    else:
        secret = f"{digits(rng, 7)}/{pick(rng, LOWER_DIGITS, 6)}"
        url = f"https://hooks.zapier.com/hooks/catch/{secret}/"
    return secret, style, {"v": url, "url": url}


def m_whsec(rng: random.Random, i: int) -> Made:
    """A Stripe webhook signing secret: dashboard (32 base62) or `stripe listen` (64 hex)."""
    if i % 3 == 2:
        value = "whsec_" + pick(rng, HEX, 64)
        return value, "cli_hex", {"v": value}
    value = "whsec_" + pick(rng, ALNUM, 32)
    return value, "dashboard", {"v": value}


def m_conn_password(rng: random.Random) -> str:
    """A password safe in URI userinfo and key=value strings."""
    return rng.choice(string.ascii_letters) + pick(rng, ALNUM, 11) + rng.choice("-_.!") + pick(rng, ALNUM, 3)


def m_connection(rng: random.Random, i: int) -> Made:
    """A connection string whose password or key is the secret."""
    style = ("azure_storage", "servicebus", "uri", "ado", "jdbc", "odbc", "uri", "jdbc")[i % 8]
    if style == "azure_storage":
        key = pick(rng, B64, 86) + "=="
        host = f"DefaultEndpointsProtocol=https;AccountName=mobileassets{digits(rng, 2)};AccountKey={key};" \
               "EndpointSuffix=core.windows.net"
        return key, style, {"v": host}
    if style == "servicebus":
        key = pick(rng, B64, 43) + "="
        return key, style, {"v": f"Endpoint=sb://push-hub-{digits(rng, 3)}.servicebus.windows.net/;"
                                  f"SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey={key}"}
    pw = m_conn_password(rng)
    user = rng.choice(("postgres", "app_rw", "parse", "amplify_admin", "api", "supabase_admin"))
    host = rng.choice(("db.qkzrbwxpmtvyhnfc.supabase.co", "aws-0-eu-central-1.pooler.supabase.com",
                       "cluster0.x8kq2.mongodb.net", "prod-mysql.internal", "10.4.2.17", "redis-12345.c1.cloud"))
    if style == "uri":
        scheme = rng.choice(("postgresql", "postgres", "mongodb+srv", "mysql", "redis", "amqps"))
        return pw, style, {"v": f"{scheme}://{user}:{pw}@{host}:{rng.choice(('5432', '6543', '27017'))}/app"}
    if style == "ado":
        return pw, style, {"v": f"Server=tcp:{host},1433;Initial Catalog=appdb;Persist Security Info=False;"
                                f"User ID={user};Password={pw};Encrypt=True;"}
    if style == "jdbc":
        return pw, style, {"v": f"jdbc:postgresql://{host}:5432/postgres?user={user}&password={pw}&sslmode=require"}
    return pw, style, {"v": f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=app;Uid={user};"
                            f"Pwd={pw};"}


def m_generic_key(rng: random.Random, i: int) -> Made:
    """A key with no provider prefix: hex, base62 or base64url, 32 to 48 characters."""
    style = ("hex32", "b62_40", "b64url_44", "hex48")[i % 4]
    value = {"hex32": lambda: pick(rng, HEX, 32), "b62_40": lambda: pick(rng, ALNUM, 40),
             "b64url_44": lambda: pick(rng, B64URL, 44), "hex48": lambda: pick(rng, HEX, 48)}[style]()
    return value, style, {"v": value}


def provider_key(rng: random.Random, i: int) -> str:
    """A key of a known provider, to be disguised."""
    return (lambda: "AKIA" + pick(rng, BASE32, 16), lambda: crc_gh(rng),
            lambda: "sk_live_" + pick(rng, ALNUM, 24), lambda: f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-"
            f"{pick(rng, ALNUM, 24)}", lambda: "AIzaSy" + pick(rng, B64URL, 33),
            lambda: "glpat-" + pick(rng, B64URL, 20), lambda: "whsec_" + pick(rng, ALNUM, 32),
            lambda: "GOCSPX-" + pick(rng, B64URL, 28))[i % 8]()


def crc_gh(rng: random.Random) -> str:
    """A GitHub personal access token of the 2021 format."""
    return crc_token(rng, "ghp_")


DISGUISES = ("zwsp", "zwnj", "zwj", "word_joiner", "bom", "soft_hyphen", "lrm", "lro_pdf", "fullwidth")


def disguise(key: str, how: str, rng: random.Random) -> str:
    """`key` with invisible or look-alike characters inside, as copy-paste from chat apps and PDFs leaves it."""
    if how == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key)
    if how == "lro_pdf":
        return "\u202d" + key[:10] + "\u202c" + key[10:]
    mark = {"zwsp": "\u200b", "zwnj": "\u200c", "zwj": "\u200d", "word_joiner": "\u2060", "bom": "\ufeff",
            "soft_hyphen": "\u00ad", "lrm": "\u200e"}[how]
    cuts = sorted(rng.sample(range(3, len(key) - 2), 3))
    ends = cuts + [len(key)]
    return "".join(key[a:b] + (mark if b < len(key) else "") for a, b in zip([0] + cuts, ends, strict=True))


def m_disguised(rng: random.Random, i: int) -> Made:
    """A provider key with a disguise (zero-width, bidi, soft hyphen or full-width forms)."""
    how = DISGUISES[i % len(DISGUISES)]
    value = disguise(provider_key(rng, i // len(DISGUISES)), how, rng)
    return value, how, {"v": value}


EMAIL_LOCALS = ("priya.sharma", "j.muller", "camille.dubois", "oluwaseun.adeyemi", "mgarcia", "joao.pereira",
                "lucia_rossi", "a.kowalski", "nguyen.van.an", "tanaka.hiroshi", "kim.minjun", "siti.aminah",
                "ahmed.hassan", "noa.levi", "erik.lindqvist", "ingrid.haugen", "mette.jensen", "petr.novak",
                "kovacs.anna", "andrei.popescu", "eleni.papadopoulou", "mehmet.yilmaz", "olga.ivanova",
                "oksana.shevchenko", "reza.ahmadi", "rahim.uddin", "ayesha.khan", "wanchai.s", "dewi.lestari",
                "jan.devries", "marie.peeters", "lukas.gruber", "anna.meier", "maria.santos", "chloe.tremblay")
EMAIL_DOMAINS = ("gmail.com", "outlook.com", "yahoo.co.in", "web.de", "orange.fr", "libero.it", "wp.pl",
                 "seznam.cz", "mail.ru", "ukr.net", "naver.com", "qq.com", "163.com", "hotmail.co.uk", "icloud.com",
                 "gmx.at", "bluewin.ch", "uol.com.br", "free.fr", "telenet.be", "yahoo.com.ph", "bigpond.com",
                 "hotmail.es", "fibertel.com.ar", "prodigy.net.mx", "ziggo.nl", "telia.se", "online.no",
                 "freemail.hu", "yandex.ru", "walla.co.il", "pm.me", "studio-kaz.jp", "fintrack.ng")
IDN_EMAILS = ("josé.garcía@correo.es", "müller.jürgen@gemüse-shop.de", "用户@例子.广告", "медведь@почта.рф",
              "θσέρ@παράδειγμα.ελ", "अजय@डाटामेल.भारत", "ñandú@empresa.com.ar", "çağrı@şirket.com.tr",
              "ο.παππάς@gmail.com", "佐藤@会社.jp", "ผู้ใช้@ตัวอย่าง.ไทย", "användare@exempel.se",
              "søren.østergaard@post.dk", "zoë.lefèvre@orange.fr", "תמיכה@דוגמה.ישראל", "علی@مثال.ایران")


def m_email(rng: random.Random, i: int) -> Made:
    """An address in one of the forms records print it: plain, upper case, internationalised, %40, \\u0040,
    &#64;, mailto:."""
    style = ("plain", "upper", "idn", "pct40", "u0040", "entity", "mailto", "plain")[i % 8]
    email = f"{rng.choice(EMAIL_LOCALS)}{rng.choice(('', '', str(rng.randint(1, 99))))}@{rng.choice(EMAIL_DOMAINS)}"
    if style == "idn":
        email = rng.choice(IDN_EMAILS)
    shown = {"plain": email, "upper": email.upper(), "idn": email, "pct40": email.replace("@", "%40"),
             "u0040": email.replace("@", "\\u0040"), "entity": email.replace("@", "&#64;"),
             "mailto": "mailto:" + email}[style]
    secret = email if style == "mailto" else shown
    return secret, style, {"v": shown}


def m_ssn(rng: random.Random, i: int) -> Made:
    """A US SSN by the SSA's rules: dashed, spaced or compact."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    number = f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
    style = ("dash", "space", "compact")[i % 3]
    value = {"dash": f"{number[:3]}-{number[3:5]}-{number[5:]}", "space": f"{number[:3]} {number[3:5]} {number[5:]}",
             "compact": number}[style]
    return value, style, {"v": value}


CARD_IINS = ("4", "4", "51", "53", "55", "2221", "2720", "34", "37", "6011", "65", "645", "3530", "3589", "36", "62")


def card_number(rng: random.Random, iin: str) -> str:
    """A Luhn-valid number of the IIN's length: 15 for Amex, 14 for Diners, else 16."""
    n = 15 if iin[:2] in ("34", "37") else 14 if iin == "36" else 16
    partial = iin + digits(rng, n - len(iin) - 1)
    return partial + luhn_digit(partial)


def m_card(rng: random.Random, i: int) -> Made:
    """A payment card number, grouped as printed with space, dash, dot, underscore or none."""
    number = card_number(rng, CARD_IINS[i % len(CARD_IINS)])
    style = ("space", "dash", "dot", "underscore", "none")[i % 5]
    sep = {"space": " ", "dash": "-", "dot": ".", "underscore": "_", "none": ""}[style]
    value = group_card(number, sep) if sep else number
    return value, style, {"v": value}


IBAN_BBANS = (("DE", "8n10n"), ("GB", "4a6n8n"), ("FR", "5n5n11c2n"), ("ES", "4n4n1n1n10n"), ("IT", "1a5n5n12c"),
              ("NL", "4a10n"), ("BE", "3n7n2n"), ("PL", "8n16n"), ("SE", "3n16n1n"), ("NO", "4n6n1n"),
              ("DK", "4n9n1n"), ("CH", "5n12c"), ("AT", "5n11n"), ("PT", "4n4n11n2n"), ("RO", "4a16c"),
              ("HU", "3n4n1n15n1n"), ("CZ", "4n6n10n"), ("GR", "3n4n16c"), ("TR", "5n1n16c"), ("SA", "2n18c"),
              ("AE", "3n16n"), ("IL", "3n3n13n"), ("UA", "6n19c"))


def m_iban(rng: random.Random, i: int) -> Made:
    """An IBAN of a registry country: grouped by four, compact, lower case or grouped lower case."""
    country, structure = IBAN_BBANS[i % len(IBAN_BBANS)]
    body = bban(rng, structure)
    iban = country + iban_check(country, body) + body
    style = ("grouped", "compact", "lower", "grouped_lower")[i % 4]
    value = {"grouped": group(iban, 4, " "), "compact": iban, "lower": iban.lower(),
             "grouped_lower": group(iban, 4, " ").lower()}[style]
    return value, style, {"v": value}


# ---- phones: national plans, each printed with context words in its language ----------------------------------

def nanp(rng: random.Random, i: int) -> Made:
    """US/Canada (NANP): NPA and NXX 2-9 first, no N11, no 555 exchange."""
    npa = rng.choice((212, 310, 415, 617, 312, 206, 512, 303, 404, 702, 416, 604, 514, 403, 613, 902, 305, 713))
    nxx = rng.choice([n for n in range(200, 1000) if n % 100 != 11 and n != 555])
    line = digits(rng, 4)
    style = ("paren", "dash", "dot", "space", "intl_dash", "intl_space", "e164", "one_paren", "compact")[i % 9]
    value = {"paren": f"({npa}) {nxx}-{line}", "dash": f"{npa}-{nxx}-{line}", "dot": f"{npa}.{nxx}.{line}",
             "space": f"{npa} {nxx} {line}", "intl_dash": f"+1-{npa}-{nxx}-{line}",
             "intl_space": f"+1 {npa} {nxx} {line}", "e164": f"+1{npa}{nxx}{line}",
             "one_paren": f"1 ({npa}) {nxx}-{line}", "compact": f"{npa}{nxx}{line}"}[style]
    return value, style, {"v": value}


def uk(rng: random.Random, i: int) -> Made:
    """UK (Ofcom): mobiles 074-079, London 020 3/7/8, cities 0113/0121/0141/0161 (drama ranges avoided)."""
    mob = f"7{rng.randint(4, 9)}{digits(rng, 2)}"
    rest = digits(rng, 6)
    lon = f"{rng.choice('378')}{digits(rng, 3)} {digits(rng, 4)}"
    city = f"{rng.choice(('113', '121', '141', '161'))} {rng.choice('2345')}{digits(rng, 2)} {digits(rng, 4)}"
    style = ("mobile", "mobile_intl", "mobile_intl0", "mobile_compact", "mobile_e164", "london", "london_intl",
             "city", "mobile_dash")[i % 9]
    value = {"mobile": f"0{mob} {rest}", "mobile_intl": f"+44 {mob} {rest}", "mobile_intl0": f"+44 (0){mob} {rest}",
             "mobile_compact": f"0{mob}{rest}", "mobile_e164": f"+44{mob}{rest}", "london": f"020 {lon}",
             "london_intl": f"+44 20 {lon}", "city": f"0{city}", "mobile_dash": f"0{mob}-{rest[:3]}-{rest[3:]}"}[style]
    return value, style, {"v": value}


def fr(rng: random.Random, i: int) -> Made:
    """France (ARCEP): 06/07 mobiles, 01-05 geographic, 09; pairs of digits."""
    first = rng.choice("6677123459")
    pairs = [f"{rng.randint(10, 98):02d}" for _ in range(4)]
    style = ("space", "dot", "dash", "compact", "intl", "intl0", "intl00", "e164")[i % 8]
    value = {"space": f"0{first} " + " ".join(pairs), "dot": f"0{first}." + ".".join(pairs),
             "dash": f"0{first}-" + "-".join(pairs), "compact": f"0{first}" + "".join(pairs),
             "intl": f"+33 {first} " + " ".join(pairs), "intl0": f"+33 (0){first} " + " ".join(pairs),
             "intl00": f"0033 {first} " + " ".join(pairs), "e164": f"+33{first}" + "".join(pairs)}[style]
    return value, style, {"v": value}


def de(rng: random.Random, i: int) -> Made:
    """Germany (BNetzA): mobiles 015x/016x/017x, geographic 030/040/089/0221/069."""
    pre = rng.choice(("151", "152", "157", "160", "162", "170", "171", "172", "173", "175", "176", "177", "179"))
    sub = digits(rng, rng.choice((7, 8)))
    city = rng.choice(("30", "40", "89", "221", "69", "711"))
    local = digits(rng, 7)
    style = ("space", "slash", "dash", "intl", "intl0", "intl00", "city", "city_paren", "city_intl")[i % 9]
    value = {"space": f"0{pre} {sub}", "slash": f"0{pre}/{sub}", "dash": f"0{pre}-{sub}", "intl": f"+49 {pre} {sub}",
             "intl0": f"+49 (0){pre} {sub}", "intl00": f"0049 {pre} {sub}", "city": f"0{city} {local}",
             "city_paren": f"(0{city}) {local}", "city_intl": f"+49 {city} {local}"}[style]
    return value, style, {"v": value}


def india(rng: random.Random, i: int) -> Made:
    """India (TRAI/DoT): 10-digit mobiles from 6-9, landlines with STD codes."""
    mob = rng.choice("6789") + digits(rng, 9)
    std, land = rng.choice(("11", "22", "80", "33", "40")), digits(rng, 8)
    style = ("split", "intl_split", "intl_dash", "zero", "e164", "zero_dash", "landline", "landline_intl")[i % 8]
    value = {"split": f"{mob[:5]} {mob[5:]}", "intl_split": f"+91 {mob[:5]} {mob[5:]}", "intl_dash": f"+91-{mob}",
             "zero": f"0{mob}", "e164": f"+91{mob}", "zero_dash": f"0{mob[:5]}-{mob[5:]}",
             "landline": f"0{std}-{land[:4]} {land[4:]}", "landline_intl": f"+91 {std} {land[:4]} {land[4:]}"}
    return value[style], style, {"v": value[style]}


def plan(national: Callable[[random.Random], tuple[str, str]], cc: str, trunk: str) -> Callable[..., Made]:
    """A maker from a national significant number and its print groups: national (trunk; spaced, dashed or
    compact), international (+cc with spaces), E.164 and 00cc forms."""
    def make(rng: random.Random, i: int) -> Made:
        nsn, spaced = national(rng)
        style = ("national", "intl", "e164", "intl00", "national_compact", "national_dash")[i % 6]
        value = {"national": trunk + spaced, "intl": f"+{cc} {spaced}", "e164": f"+{cc}{nsn}",
                 "intl00": f"00{cc} {spaced}", "national_compact": trunk + nsn,
                 "national_dash": trunk + spaced.replace(" ", "-")}[style]
        return value, style, {"v": value}
    return make


def groups(*parts: str) -> tuple[str, str]:
    """A national number compact and spaced."""
    return "".join(parts), " ".join(parts)


PLANS: dict[str, Callable[..., Made]] = {
    "phone_es": plan(lambda r: groups(r.choice("67") + digits(r, 2), digits(r, 3), digits(r, 3)), "34", ""),
    "phone_mx": plan(lambda r: groups(r.choice(("55", "33", "81")), digits(r, 4), digits(r, 4)), "52", ""),
    "phone_br": plan(lambda r: groups(r.choice(("11", "21", "31", "51")), "9" + digits(r, 4), digits(r, 4)), "55",
                     ""),
    "phone_it": plan(lambda r: groups("3" + r.choice("2456789") + digits(r, 1), digits(r, 3), digits(r, 4)), "39", ""),
    "phone_nl": plan(lambda r: groups("6", r.choice("12345") + digits(r, 3), digits(r, 4)), "31", "0"),
    "phone_pl": plan(lambda r: groups(r.choice(("50", "51", "53", "60", "66", "69", "72", "78", "79", "88"))
                                      + digits(r, 1),
                                      digits(r, 3), digits(r, 3)), "48", ""),
    "phone_tr": plan(lambda r: groups("5" + r.choice("0345") + digits(r, 1), digits(r, 3), digits(r, 2),
                                      digits(r, 2)), "90", "0"),
    "phone_jp": plan(lambda r: groups(r.choice(("90", "80", "70")), digits(r, 4), digits(r, 4)), "81", "0"),
    "phone_kr": plan(lambda r: groups("10", digits(r, 4), digits(r, 4)), "82", "0"),
    "phone_au": plan(lambda r: groups("4" + digits(r, 2), digits(r, 3), digits(r, 3)), "61", "0"),
    "phone_ng": plan(lambda r: groups(r.choice(("803", "806", "813", "703", "805", "902")), digits(r, 3),
                                      digits(r, 4)), "234", "0"),
    "phone_ae": plan(lambda r: groups("5" + r.choice("024568"), digits(r, 3), digits(r, 4)), "971", "0"),
}
"""Phone plans beyond the issue's five: mobile ranges of each national plan."""

PHONE_LOCALE: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "phone_us_ca": (("Phone", "Mobile", "Cell"), ("call me at {v}", "my cell is {v}", "you can text me on {v}",
                    "best number to reach me: {v}"), ("Jordan Miller", "Chloé Tremblay", "Marcus Reed")),
    "phone_uk": (("Mobile", "Tel", "Phone"), ("ring me on {v}", "my mobile is {v}", "please call me back on {v}",
                 "contact number {v}"), ("Olivia Hughes", "Callum Evans", "Priya Patel")),
    "phone_fr": (("Téléphone", "Portable", "Tél."), ("vous pouvez me rappeler au {v}", "mon portable : {v}",
                 "appelez-moi au {v} svp", "joignable au {v}"), ("Camille Dubois", "Léa Martin", "Karim Benali")),
    "phone_de": (("Telefon", "Handy", "Mobil"), ("rufen Sie mich bitte unter {v} an", "meine Handynummer ist {v}",
                 "Rückruf unter {v}", "erreichbar unter Tel. {v}"), ("Jürgen Müller", "Anna Schmidt", "Lukas Weber")),
    "phone_in": (("Mobile No", "मोबाइल", "Phone"), ("please call me on {v}", "मेरा मोबाइल नंबर {v} है",
                 "contact no. {v}, whatsapp also", "আমার ফোন নম্বর {v}"), ("Priya Sharma", "Rahul Verma", "Ananya Das")),
    "phone_es": (("Teléfono", "Móvil", "Tel."), ("llámame al {v}", "mi móvil es {v}", "podéis contactarme en el {v}",
                 "teléfono de contacto: {v}"), ("Lucía García", "Javier Martín", "Marta Ruiz")),
    "phone_mx": (("Teléfono", "Celular", "Tel."), ("márcame al {v}", "mi celular es {v}", "me pueden llamar al {v}",
                 "número de contacto: {v}"), ("Ana Hernández", "Luis Ramírez", "Sofía Torres")),
    "phone_br": (("Telefone", "Celular", "WhatsApp"), ("me liga no {v}", "meu celular é {v}",
                 "pode me chamar no zap {v}", "telefone para contato: {v}"), ("João Pereira", "Beatriz Souza",
                 "Rafael Lima")),
    "phone_it": (("Telefono", "Cellulare", "Tel."), ("chiamami al {v}", "il mio cellulare è {v}",
                 "potete contattarmi al numero {v}", "recapito telefonico: {v}"), ("Giulia Rossi", "Marco Bianchi",
                 "Chiara Romano")),
    "phone_nl": (("Telefoon", "Mobiel", "Tel."), ("bel me op {v}", "mijn mobiele nummer is {v}",
                 "u kunt mij bereiken op {v}", "telefoonnummer: {v}"), ("Jan de Vries", "Sanne Bakker", "Daan Visser")),
    "phone_pl": (("Telefon", "Komórka", "Tel."), ("proszę zadzwonić pod {v}", "mój numer komórki to {v}",
                 "kontakt telefoniczny: {v}", "dzwońcie na {v}"), ("Anna Kowalska", "Piotr Nowak", "Kasia Wiśniewska")),
    "phone_tr": (("Telefon", "Cep", "Tel."), ("beni {v} numarasından arayın", "cep telefonum {v}",
                 "iletişim numarası: {v}", "lütfen {v} numaralı telefondan dönüş yapın"), ("Mehmet Yılmaz",
                 "Ayşe Demir", "Emre Kaya")),
    "phone_jp": (("電話番号", "携帯", "TEL"), ("携帯番号は{v}です", "折り返しは {v} までお電話ください",
                 "電話：{v}", "連絡先の電話番号 {v}"), ("田中 太郎", "佐藤 花子", "鈴木 一郎")),
    "phone_kr": (("전화번호", "휴대폰", "연락처"), ("제 휴대폰 번호는 {v} 입니다", "{v}로 전화 주세요",
                 "연락처: {v}", "전화번호 {v} 로 문자 부탁드려요"), ("김민준", "이서연", "박지훈")),
    "phone_au": (("Mobile", "Ph", "Phone"), ("give us a call on {v}", "my mobile's {v}", "ph: {v}",
                 "best contact is {v}"), ("Jack Wilson", "Mia Thompson", "Liam Nguyen")),
    "phone_ng": (("Phone", "Mobile", "GSM"), ("abeg call me on {v}", "my phone number is {v}",
                 "reach me on {v} (WhatsApp)", "GSM: {v}"), ("Oluwaseun Adeyemi", "Chiamaka Okafor", "Ibrahim Musa")),
    "phone_ae": (("هاتف", "جوال", "رقم الهاتف"), ("اتصل بي على الرقم {v}", "رقم جوالي {v}",
                 "للتواصل: هاتف {v}", "يرجى الاتصال على {v}"), ("أحمد الحسن", "فاطمة الزهراء", "محمد المنصوري")),
}
"""Per phone kind: label words, sentences around the number, and names, in the country's language."""

PHONE_CARRIERS: tuple[Carrier, ...] = (
    J("profile_sync_json", '{"op":"profile.update","user":{"displayName":"{name}","phoneLabel":"{ctx}",'
      '"phone":"{v}","locale":"auto"}}'),
    T("profile_screen_ocr", "{name}\n{ctx}\n{v}\nEdit profile  >\nNotifications  >"),
    T("support_chat", "[10:42] {name}: {say}\n[10:43] Agent: thanks, noted on ticket #48213"),
    J("contacts_sync_json", '{"contacts":[{"givenName":"{name}","phoneNumbers":[{"label":"{ctx}",'
      '"number":"{v}"}]}],"deviceId":"A1B2-77"}'),
    T("a11y_dump", 'TextView text="{ctx}: {v}" resource-id="com.shopkit.app:id/phone_value" bounds=[48,912][1032,980]'),
    J("sentry_user_ctx", '{"event_id":"9f1c0b7e4a2d4c4f8e2b1a0d3c5e7f91","user":{"id":"u_8812","username":"{name}"},'
      '"breadcrumbs":[{"category":"ui.input","message":"{ctx}: {v}"}]}'),
    T("app_review", "★★☆☆☆ {name}\nApp keeps crashing on login. {say}"),
    T("play_dev_reply", "Developer reply: Hi {name}, sorry about that! Our support line — {ctx}: {v}"),
    T("testflight_feedback", "TestFlight feedback · build 4.12.0 (4120317)\nTester: {name}\n{ctx} {v}\nOTP never "
                             "arrives"),
    J("firestore_export", '{"name":"projects/app/databases/(default)/documents/users/Kq9x","fields":{"note":'
      '{"stringValue":"{say}"},"label":{"stringValue":"{ctx}"}}}'),
    T("logcat", "12-06 10:42:17.331  4321  4398 I ProfileSync: field {ctx} = {v}"),
    T("webview_form_html", '<label for="tel">{ctx}</label><input id="tel" type="tel" name="phone" value="{v}">'),
    J("apns_payload", '{"aps":{"alert":{"title":"{name}","body":"{say}"},"sound":"default"},"thread":"support"}'),
    T("otp_screen_ocr", "Verify your number\n{ctx}\n{v}\nWe sent a 6-digit code  Resend in 0:42"),
    J("amplitude_event", '{"event_type":"profile_saved","user_properties":{"contact_note":"{say}"},'
      '"platform":"Android","os_version":"14"}'),
    T("crm_note_from_app", "Ticket from in-app chat — customer {name}, {ctx}: {v} (callback requested)"),
)
"""The carriers every phone kind is written in (16)."""


def phone_fields(kind: str, maker: Callable[..., Made]) -> Callable[..., Made]:
    """A phone maker that also fills a label, a sentence and a name of the kind's language."""
    labels, sentences, names = PHONE_LOCALE[kind]

    def make(rng: random.Random, i: int) -> Made:
        secret, style, fields = maker(rng, i)
        return secret, style, {"say": rng.choice(sentences).replace("{v}", secret), "ctx": rng.choice(labels),
                               "name": rng.choice(names), **fields}
    return make


# ---- carriers of the kinds ----------------------------------------------------------------------------

PASSWORD_CARRIERS: tuple[Carrier, ...] = (
    T("gradle_properties", "org.gradle.jvmargs=-Xmx4g\nRELEASE_STORE_FILE=upload-keystore.jks\n"
      "RELEASE_STORE_PASSWORD={v}\nRELEASE_KEY_ALIAS=upload\n"),
    T("flutter_key_properties", "storePassword={v}\nkeyAlias=upload\nstoreFile=/Users/dev/keys/upload-keystore.jks\n"),
    T("fastlane_env", "FASTLANE_USER=release@shopkit.io\nMATCH_PASSWORD={v}\nMATCH_GIT_URL="
                      "git@github.com:shopkit/certs"),
    T("bitrise_yaml", "app:\n  envs:\n  - BITRISEIO_ANDROID_KEYSTORE_PASSWORD: {v}\n    opts:\n      is_expand: "
                      "false\n"),
    T("codemagic_yaml", "workflows:\n  android-release:\n    environment:\n      vars:\n        CM_KEY_PASSWORD: "
                        "{v}\n"),
    T("build_gradle_signing", 'signingConfigs {\n    release {\n        keyAlias "upload"\n        storePassword '
                              '"{v}"\n'
      '        storeFile file("release.jks")\n    }\n}'),
    T("keytool_cli", "$ keytool -genkeypair -v -keystore release.jks -alias upload -keyalg RSA -validity 10000 "
      "-storepass {v} -dname \"CN=Shopkit\""),
    J("supabase_row", '{"id":17,"email":"qa01@shopkit.io","userPassword":"{v}","created_at":"2026-11-02T09:12:44Z"}'),
    J("firestore_export", '{"fields":{"username":{"stringValue":"demo_ios"},"tempPassword":{"stringValue":"{v}"}}}'),
    J("sentry_breadcrumb", '{"breadcrumbs":{"values":[{"category":"http","data":{"url":"/api/v2/login","method":"POST",'
      '"body":{"username":"qa_tester2","password":"{v}"}}}]}}'),
    T("testflight_feedback_de", "TestFlight-Feedback: Login schlägt fehl.\nTestkonto: qa.tester / Passwort: {v}"),
    T("charles_form_body", "POST /oauth/token HTTP/1.1\nHost: api.shopkit.io\nContent-Type: application/x-www-form-"
      "urlencoded\n\ngrant_type=password&username=demo.user&password={v}&client_id=ios-app"),
    T("logcat_okhttp", '12-06 10:42:17.331  4321  4398 D OkHttp  : {"login":"ops_android","pass":"{v}"}'),
    T("local_properties", "sdk.dir=/Users/dev/Library/Android/sdk\nsigning.storePassword={v}\n"),
    T("xcconfig", "API_BASIC_USER = mobile\nAPI_BASIC_PASSWORD = {v}\nPRODUCT_BUNDLE_IDENTIFIER = io.shopkit.app\n"),
    T("compose_backend", "services:\n  db:\n    image: mysql:8\n    environment:\n      MYSQL_ROOT_PASSWORD: {v}\n"),
    J("parse_dashboard", '{"apps":[{"appId":"shopkit","appName":"Shopkit"}],"users":[{"user":"admin","pass":"{v}"}]}'),
    T("support_chat_es", "Usuario: maria.lopez88 — contraseña: {v} (no me deja entrar desde la app)"),
    T("pgpassword_cli", "$ PGPASSWORD={v} psql -h db.qkzrbwxpmtvyhnfc.supabase.co -U postgres -d postgres"),
    T("redis_cli", "$ redis-cli -h cache.internal -p 6379 -a {v} KEYS 'session:*'"),
    J("eas_json", '{"build":{"production":{"android":{"buildType":"app-bundle"},"env":{"KEYSTORE_PASSWORD":"{v}"}}}}'),
    T("qa_notes_ja", "QAメモ：テストアカウント qa-jp@shopkit.io パスワード：{v}"),
    T("mysql_cli", "$ mysql -u root -p{v} shop_prod -e 'select count(*) from push_tokens'"),
    J("amplify_cognito_log", '{"level":"debug","msg":"adminCreateUser","TemporaryPassword":"{v}","UserPoolId":'
      '"eu-west-1_Ab12Cd34E"}'),
)

AWS_CARRIERS: tuple[Carrier, ...] = (
    T("codemagic_vars", "vars:\n  AWS_ACCESS_KEY_ID: {id}\n  AWS_SECRET_ACCESS_KEY: {v}\n  AWS_DEFAULT_REGION: "
                        "eu-west-1"),
    J("cognito_credentials", '{"Credentials":{"AccessKeyId":"{id}","SecretKey":"{v}","SessionToken":"IQoJb3JpZ2luX2Vj",'
      '"Expiration":1765015200},"IdentityId":"eu-west-1:3f1c9a20-77b1-4c55-9d0e-2a6b1e0c44d1"}'),
    T("unlabelled_chat", "here are the upload creds for the S3 bucket: {id} {v}"),
    T("rn_dotenv", "API_URL=https://api.shopkit.io\nAWS_KEY={id}\nAWS_SECRET_KEY={v}\n"),
    T("info_plist", "<key>AWSAccessKey</key>\n<string>{id}</string>\n<key>AWSSecretKey</key>\n<string>{v}</string>"),
    T("strings_xml", '<string name="aws_access_key">{id}</string>\n<string name="aws_secret_key">{v}</string>'),
    J("sentry_extra", '{"extra":{"s3Config":{"accessKeyId":"{id}","secretAccessKey":"{v}","region":"eu-west-1"}},'
      '"level":"error"}'),
    T("logcat", "12-06 10:42:17.331  4321  4398 D S3Uploader: init accessKey={id} secretKey={v}"),
    T("flutter_dart", "final creds = AwsClientCredentials(accessKey: '{id}', secretKey: '{v}');"),
    T("fastfile", 'aws_s3(access_key: "{id}", secret_access_key: "{v}", bucket: "shopkit-builds", apk: lane_context['
      "SharedValues::GRADLE_APK_OUTPUT_PATH])"),
    T("gradle_properties", "awsAccessKey={id}\nawsSecretKey={v}\n"),
    T("credentials_csv", "User name,Access key ID,Secret access key\nci-mobile,{id},{v}\n"),
    T("support_chat_pt", "segue as chaves do bucket: {id} e {v} — apaga depois"),
    T("swift_source", 'let provider = AWSStaticCredentialsProvider(accessKey: "{id}", secretKey: "{v}")'),
    T("bitrise_env_table", "| AWS_ACCESS_KEY_ID     | {id} |\n| AWS_SECRET_ACCESS_KEY | {v} |"),
    J("expo_app_json", '{"expo":{"name":"Shopkit","slug":"shopkit","extra":{"awsAccessKeyId":"{id}",'
      '"awsSecretAccessKey":"{v}"}}}'),
    T("amplify_configure", "? accessKeyId:  {id}\n? secretAccessKey:  {v}\nThis would update/create the AWS Profile"),
    J("har_response", '{"response":{"status":200,"content":{"mimeType":"application/json",'
                      '"text":"{\\"key\\":\\"{id}\\",'
      '\\"secret\\":\\"{v}\\"}"}}}'),
)

WEBHOOK_CARRIERS: tuple[Carrier, ...] = (
    T("fastfile", 'slack(message: "iOS build uploaded to TestFlight", slack_url: "{url}")'),
    T("bitrise_yaml", "- slack@4:\n    inputs:\n    - webhook_url: {url}\n    - channel: '#mobile-builds'"),
    T("codemagic_script", "scripts:\n  - name: notify\n    script: curl -X POST -H 'Content-type: application/json' "
      "--data '{\"text\":\"build ok\"}' {url}"),
    T("dotenv", "CRASH_ALERT_WEBHOOK={url}\nAPP_ENV=production\n"),
    J("crashlytics_alert_integration", '{"integration":"webhook","events":["new_fatal_issue"],"url":"{url}"}'),
    J("sentry_alert_rule", '{"name":"Crash spike","actions":[{"id":"sentry.rules.actions.notify_event_service.'
      'NotifyEventServiceAction","service":"webhooks","url":"{url}"}]}'),
    J("asc_webhook", '{"data":{"type":"webhooks","attributes":{"name":"build-status","url":"{url}","enabled":true}}}'),
    T("actions_log", "Run curl -s -X POST -d @payload.json {url}\n  % Total    % Received"),
    T("chat_fr", "J'ai mis le webhook ici : {url} pour les crashs Android"),
    T("backend_log", "INFO notify.py:88 posting crash digest to {url} status=200"),
    T("supabase_sql", "create trigger on_new_review after insert on reviews for each row execute function "
      "supabase_functions.http_request('{url}', 'POST', '{\"Content-type\":\"application/json\"}', '{}', '1000');"),
    J("remote_config", '{"parameters":{"ops_webhook":{"defaultValue":{"value":"{url}"},"valueType":"STRING"}}}'),
    J("har_request", '{"request":{"method":"POST","url":"{url}","headers":[{"name":"Content-Type",'
      '"value":"application/json"}]}}'),
    T("dart_source", "await http.post(Uri.parse('{url}'), body: jsonEncode(payload));"),
    T("kotlin_source", 'private const val RELEASE_WEBHOOK = "{url}"'),
    T("note_ja", "Webhook URL：{url}（#ios-crashes チャンネル）"),
    J("bugsnag_integration", '{"type":"generic_webhook","config":{"url":"{url}","events":["first_exception"]}}'),
    T("expo_eas_secret", "$ eas secret:create --scope project --name RELEASE_HOOK --value {url}"),
)

WHSEC_CARRIERS: tuple[Carrier, ...] = (
    T("backend_dotenv", "STRIPE_SECRET_KEY=sk_test_placeholder\nSTRIPE_WEBHOOK_SECRET={v}\n"),
    T("stripe_listen", "> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is {v} "
      "(^C to quit)"),
    T("supabase_secrets", "$ supabase secrets set STRIPE_WEBHOOK_SIGNING_SECRET={v}\nFinished supabase secrets set."),
    T("firebase_config_set", "$ firebase functions:config:set stripe.webhook_secret=\"{v}\""),
    J("runtimeconfig", '{"stripe":{"webhook_secret":"{v}","currency":"eur"}}'),
    T("parse_cloud_code", "const endpointSecret = '{v}';\nParse.Cloud.define('stripeWebhook', async (req) => {"),
    J("amplify_function_env", '{"Variables":{"ENV":"prod","STRIPE_ENDPOINT_SECRET":"{v}"}}'),
    T("codemagic_yaml", "environment:\n  vars:\n    STRIPE_WHSEC: {v}\n"),
    T("ktor_conf", 'stripe {\n  webhookSecret = "{v}"\n}'),
    T("chat_es", "el secreto de firma del webhook es {v}, lo pego aquí para que lo pongas en la función"),
    J("sentry_request_env", '{"request":{"url":"https://api.shopkit.io/stripe/webhook","env":{"STRIPE_WEBHOOK_SECRET":'
      '"{v}"}}}'),
    T("vercel_env_ls", "> vercel env ls\n name                   value          environments\n"
      " STRIPE_WEBHOOK_SECRET  {v}  Production"),
    T("node_log", "[functions] stripeWebhook: signature verification failed (secret={v})"),
    J("expo_extra", '{"expo":{"extra":{"stripeWebhookSecret":"{v}"}}}'),
    T("go_toml", '[stripe]\nwebhook_secret = "{v}"\n'),
    T("compose_env", "  payments:\n    environment:\n      - STRIPE_WEBHOOK_SECRET={v}\n"),
    J("revenuecat_note", '{"integration":"stripe","notes":"signing secret {v}"}'),
)

CONNECTION_CARRIERS: tuple[Carrier, ...] = (
    T("backend_dotenv", "DATABASE_URL={v}\nDIRECT_URL=postgres://localhost/dev\n"),
    J("appsettings_json", '{"ConnectionStrings":{"Default":"{v}"},"Logging":{"LogLevel":{"Default":"Warning"}}}'),
    T("supabase_log", "2026-12-06 10:42:17 ERROR edge-fn: connect failed using {v} (ETIMEDOUT)"),
    T("parse_server_cli", "$ parse-server --appId shopkit --masterKey $PARSE_MASTER --databaseURI '{v}'"),
    J("amplify_backend_config", '{"function":{"ordersApi":{"environment":{"DB_CONNECTION":"{v}"}}}}'),
    T("sentry_traceback", "sqlalchemy.exc.OperationalError: could not connect\n  engine = create_engine(\"{v}\")"),
    T("codemagic_yaml", "environment:\n  vars:\n    TEST_DB: \"{v}\"\n"),
    T("chat_it", "la stringa di connessione è {v} — funziona solo dalla VPN"),
    J("firebase_functions_env", '{"DB_CONN":"{v}","REGION":"europe-west1"}'),
    T("prisma_schema", 'datasource db {\n  provider = "postgresql"\n  url      = "{v}"\n}'),
    T("flipper_log", "[Flipper] Network: GET /debug/config -> {\"db\":\"{v}\"}"),
    J("bitrise_secrets_export", '{"envs":[{"AZURE_CONN":"{v}","opts":{"is_expand":false}}]}'),
    T("azure_cli_output", "$ az storage account show-connection-string -n mobileassets\n{\n "
                          " \"connectionString\": \"{v}\"\n}"),
    T("notification_hub_cs", "// Azure Notification Hubs\nvar hub = NotificationHubClient.CreateCli"
                             "entFromConnectionString(\"{v}\","
      " \"push-hub\");"),
    J("vscode_launch", '{"configurations":[{"name":"api","env":{"CONNECTION_STRING":"{v}"}}]}'),
    T("spring_properties", "spring.datasource.url={v}\nspring.jpa.hibernate.ddl-auto=validate"),
    T("support_ticket_de", "Verbindungszeichenfolge aus dem Backend-Log: {v}"),
    J("supabase_log_json", '{"event_message":"pool error","metadata":[{"conn":"{v}","level":"error"}]}'),
)

LABELLED_CARRIERS: tuple[Carrier, ...] = (
    T("qa_notes_en", "Staging API Key: {v}\nUse the demo account below."),
    T("readme_secret_eq", "Secret key = {v}"),
    T("chat_en", "the access token is {v} btw, expires friday"),
    T("chat_fr", "Clé API : {v}"),
    T("ticket_de", "API-Schlüssel: {v} (nur für Staging)"),
    T("chat_it", "Chiave API: {v}"),
    T("chat_es", "la clave de API es {v}"),
    T("chat_pt", "Chave de API: {v}"),
    T("note_ja", "APIキー：{v}"),
    T("note_ko", "API 키: {v}"),
    T("note_zh", "API密钥：{v}"),
    T("note_pl", "Klucz API: {v}"),
    T("note_ru", "Ключ API: {v}"),
    T("note_ar", "مفتاح API: {v}"),
    J("json_spaced_label", '{"API Key":"{v}","Environment":"staging"}'),
    J("json_note", '{"ticket":48213,"note":"Server key: {v}"}'),
    J("firestore_config_doc", '{"fields":{"Client Secret":{"stringValue":"{v}"}}}'),
    T("markdown_table", "| Setting | Value |\n|---|---|\n| REST API Key | {v} |"),
    T("ocr_console", "Project settings\nMaster Key\n{v}\nRegenerate"),
    J("sentry_context", '{"contexts":{"config":{"analytics secret key":"{v}"}}}'),
)

DISGUISED_CARRIERS: tuple[Carrier, ...] = (
    T("slack_paste", "here's the key from the doc: {v}"),
    T("dotenv", "MOBILE_CI_KEY={v}\n"),
    J("chat_export", '{"messages":[{"from":"dev","text":"use {v} for the build"}]}'),
    T("testflight_note", "TestFlight note: token {v}"),
    T("pdf_copy", "Runbook p.3 — credentials\n{v}\n(rotate quarterly)"),
    J("intercom_reply", '{"type":"conversation_part","body":"<p>{v}</p>","author":{"type":"user"}}'),
    T("gradle_properties", "ciKey={v}"),
    T("chat_ru", "ключ: {v}"),
    J("sentry_breadcrumb", '{"breadcrumbs":[{"category":"clipboard","message":"{v}"}]}'),
    T("xcconfig", "CI_KEY = {v}"),
    T("chat_vi", "khóa của bạn là {v}"),
    J("eas_env", '{"env":{"SERVICE_KEY":"{v}"}}'),
    T("bitrise_log", "+ echo {v}"),
    T("chat_th", "คีย์คือ {v} นะครับ"),
    J("firestore_doc", '{"fields":{"pasted":{"stringValue":"{v}"}}}'),
    T("kotlin_source", 'const val KEY = "{v}"'),
)

EMAIL_CARRIERS: tuple[Carrier, ...] = (
    J("profile_sync_json", '{"op":"profile.update","user":{"uid":"Kq9xT2","email":"{v}","emailVerified":false}}'),
    J("sentry_user", '{"event_id":"0d4b7e2f9a1c4e3b8f6a2d1c0e9b7a55","user":{"id":"88123","email":"{v}",'
      '"ip_address":"{{auto}}"}}'),
    T("crashlytics_log", "Crashlytics - setUserIdentifier: {v}\nFatal Exception: java.lang.IllegalStateException"),
    J("amplitude_event", '{"event_type":"sign_up","user_properties":{"email":"{v}","plan":"free"}}'),
    J("mixpanel_people", '{"$token":"public","$distinct_id":"88123","$set":{"$email":"{v}","$name":"Priya"}}'),
    T("deep_link", "shopkit://invite/accept?ref=af_8812&email={v}&utm_source=email"),
    T("webview_har_html", '<p>Signed in as <a href="#">{v}</a></p>'),
    T("info_plist_support", "<key>SupportEmail</key>\n<string>{v}</string>"),
    T("logcat", "12-06 10:42:17.331  4321  4398 I AuthRepository: signInWithEmail {v} ok"),
    T("app_store_review", "★☆☆☆☆ Can't restore purchases. Email me at {v} please"),
    T("testflight_feedback", "TestFlight feedback from {v}: the share sheet freezes on iPad"),
    J("supabase_auth_row", '{"id":"3f1c9a20-77b1-4c55-9d0e-2a6b1e0c44d1","aud":"authenticated","email":"{v}",'
      '"phone":""}'),
    J("firebase_auth_export", '{"users":[{"localId":"Kq9xT2","email":"{v}","passwordHash":"REDACTED"}]}'),
    T("fastlane_appfile", 'app_identifier("io.shopkit.app")\napple_id("{v}")\nteam_id("A1B2C3D4E5")'),
    T("profile_ocr_ko", "내 정보\n이메일\n{v}\n로그아웃"),
    T("play_reply_de", "Antwort des Entwicklers: Bitte schreiben Sie uns an {v}, wir helfen gern."),
    J("onesignal_payload", '{"app_id":"public","include_email_tokens":["{v}"],"email_subject":"Welcome"}'),
    T("charles_query", "GET /api/users/lookup?email={v}&expand=devices HTTP/1.1"),
    T("chat_tr", "e-posta adresim {v}, faturayı oraya gönderin"),
    J("appsflyer_postback", '{"event_name":"af_complete_registration","customer_user_id":"{v}","platform":"ios",'
      '"appsflyer_id":"1733212345678-1234567"}'),
    T("adjust_postback", "GET /adjust/callback?event=signup&adid={adid}&email={v}&os_name=android HTTP/1.1"),
    J("rtdb_export", '{"users":{"-NxQ2kL9aB":{"displayName":"Ana","contactEmail":"{v}","lastSeen":1765015200}}}'),
    J("asc_users_api", '{"data":[{"type":"users","id":"7c1d2e3f","attributes":{"username":"{v}","roles":'
      '["DEVELOPER"]}}]}'),
    T("sysdiagnose_accounts", "accountsd[214]: <ACAccount> type=com.apple.account.IdentityServices username={v}"),
    J("bigquery_row", '{"event_name":"login","user_id":"88123","event_params":[{"key":"email","value":'
      '{"string_value":"{v}"}}]}'),
)

SSN_CARRIERS: tuple[Carrier, ...] = (
    J("kyc_form_json", '{"step":"identity","fields":{"fullName":"Jordan Miller","ssn":"{v}","dob":"1988-04-12"}}'),
    T("a11y_dump", 'EditText hint="Social Security Number" text="{v}" resource-id="io.payly.app:id/ssn_input"'),
    T("support_chat", "[09:14] user: verification keeps failing, my SSN is {v}"),
    J("sentry_request_body", '{"request":{"method":"POST","url":"https://api.payly.io/v1/kyc","data":'
      '{"first_name":"Marcus","ssn":"{v}"}}}'),
    T("logcat", "12-06 10:42:17.331  4321  4398 D KycRepository: submit ssn={v} state=CA"),
    T("ocr_w2_upload", "Employee's social security number\n{v}\nWages, tips, other compensation 48210.55"),
    J("firestore_export", '{"fields":{"taxId":{"stringValue":"{v}"},"taxIdType":{"stringValue":"SSN"}}}'),
    T("charles_body", "POST /v2/verify HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\nname=Jordan+Miller&"
      "ssn={v}&zip=94110"),
    T("qa_notes", "Sandbox KYC persona: Jordan Test, SSN {v}, DOB 01/01/1990"),
    J("supabase_row", '{"id":451,"legal_name":"Chloe Tremblay","social_security_number":"{v}","status":"pending"}'),
    T("rn_redbox", "Invariant Violation: submitKyc failed\n  payload: {ssn: '{v}', last4Only: false}\n  at "
                   "KycScreen.tsx:88"),
    J("amplitude_event", '{"event_type":"kyc_submitted","event_properties":{"ssn_entered":"{v}"}}'),
    T("tax_form_ocr_es", "Número de Seguro Social (SSN): {v}\nNombre: Ana Hernández"),
    T("flutter_trace", "FormatException: invalid tax id\n  value: SSN {v}\n#0 TaxIdField.validate "
                       "(package:payly/kyc.dart:41)"),
    J("har_post", '{"request":{"postData":{"mimeType":"application/json","text":"{\\"ssn\\":\\"{v}\\"}"}}}'),
    T("crm_note", "Customer called about payroll card; confirmed last SSN on file {v}"),
)

CARD_CARRIERS: tuple[Carrier, ...] = (
    J("sentry_breadcrumb", '{"breadcrumbs":[{"category":"ui.input","message":"cardNumber changed","data":'
      '{"value":"{v}"}}]}'),
    T("a11y_dump", 'EditText content-desc="Card number" text="{v}" resource-id="io.shopkit:id/card_number"'),
    T("support_chat", "[21:03] user: it charged twice on my card {v}, can you refund"),
    T("card_scan_ocr", "VISA\n{v}\nVALID THRU 09/29\nJORDAN MILLER"),
    T("logcat", "12-06 10:42:17.331  4321  4398 E PaymentSheet: tokenize failed for pan={v}"),
    J("firestore_order", '{"fields":{"payment":{"mapValue":{"fields":{"pan":{"stringValue":"{v}"}}}}}}'),
    J("supabase_row", '{"order_id":"ord_7781","card_number":"{v}","amount":1299,"currency":"usd"}'),
    T("charles_body", "POST /checkout HTTP/1.1\n\nnumber={v}&exp_month=09&exp_year=2029&cvc=123"),
    T("rn_redbox", "TypeError: undefined is not an object (evaluating 'res.card.brand')\n  cardNumber: \"{v}\""),
    T("app_review_fr", "Application nulle, débité deux fois sur ma carte {v} !!"),
    J("bugsnag_metadata", '{"metaData":{"checkout":{"cardInput":"{v}","step":"confirm"}}}'),
    T("chat_pt", "o número do cartão é {v}, validade 08/28"),
    J("mixpanel_event", '{"event":"Payment Failed","properties":{"card":"{v}","reason":"do_not_honor"}}'),
    T("flutter_trace", "PlatformException(card_error, Invalid card {v}, null, null)"),
    T("ios_console", "default 10:42:17.331 Shopkit[812:44011] [Checkout] submitting card {v}"),
    J("har_post", '{"request":{"postData":{"params":[{"name":"card[number]","value":"{v}"}]}}}'),
    T("chat_ja", "カード番号は {v} です"),
)

IBAN_CARRIERS: tuple[Carrier, ...] = (
    J("payout_settings_json", '{"seller":{"id":"s_812","payout":{"method":"sepa","iban":"{v}","holder":"Jan de '
                              'Vries"}}}'),
    T("payout_screen_ocr", "Auszahlungskonto\nIBAN\n{v}\nÄndern"),
    T("support_chat_nl", "mijn IBAN is {v}, graag de terugbetaling daarop"),
    J("firestore_export", '{"fields":{"bankAccount":{"stringValue":"{v}"},"country":{"stringValue":"EU"}}}'),
    T("logcat", "12-06 10:42:17.331  4321  4398 D PayoutRepo: save iban={v}"),
    J("supabase_row", '{"id":77,"user_id":"3f1c9a20","iban":"{v}","verified":false}'),
    T("app_review_it", "Rimborso mai arrivato sul mio IBAN {v}. Vergognoso."),
    T("a11y_dump", 'TextView text="{v}" content-desc="IBAN" resource-id="com.marketly:id/iban"'),
    J("sentry_request", '{"request":{"url":"https://api.marketly.eu/payouts","data":{"iban":"{v}"}}}'),
    T("chat_fr", "Voici mon RIB : IBAN {v} BIC AGRIFRPP"),
    T("chat_pl", "numer konta: {v}"),
    J("amplitude_user", '{"user_properties":{"payout_iban":"{v}"}}'),
    T("chat_tr", "IBAN numaram {v}, iadeyi buraya yapın"),
    T("play_console_ocr", "Payments profile\nBank account\n{v}\nVerified"),
    T("chat_ar", "رقم الآيبان الخاص بي {v}"),
    J("har_post", '{"request":{"postData":{"text":"{\\"iban\\":\\"{v}\\"}"}}}'),
    T("chat_sv", "Mitt IBAN är {v}"),
)


# ---- wider kinds: keys, tokens, auth headers, cookies ---------------------------------------------------------

def pem_key(rng: random.Random, i: int) -> tuple[str, str]:
    """A deterministic PEM private key (PKCS #8 P-256 as App Store Connect's .p8, SEC 1, or PKCS #8 Ed25519) and
    its style."""
    style = ("pkcs8_p256", "sec1_p256", "pkcs8_ed25519")[i % 3]
    if style == "pkcs8_ed25519":
        key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
    else:
        key = ec.derive_private_key(rng.randrange(1, 2**255), ec.SECP256R1())
    fmt = serialization.PrivateFormat.TraditionalOpenSSL if style == "sec1_p256" else serialization.PrivateFormat.PKCS8
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode(), style


def m_private_key(rng: random.Random, i: int) -> Made:
    """A PEM key; the secret is its base64 body (the armour lines are public words)."""
    pem, style = pem_key(rng, i)
    body = "\n".join(line for line in pem.strip().splitlines() if not line.startswith("-----"))
    return body, style, {"v": pem.strip()}


def m_jwt(rng: random.Random, i: int) -> Made:
    """An HS256 JWT (RFC 7519) of a signed-in user of a mobile backend."""
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"sub": guid(rng), "email": f"{rng.choice(EMAIL_LOCALS)}@{rng.choice(EMAIL_DOMAINS)}",
              "role": "authenticated", "iat": 1765000000 + i * 61, "exp": 1765003600 + i * 61}
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig = b64url(hmac.new(rng.randbytes(32), f"{header}.{payload}".encode(), hashlib.sha256).digest())
    value = f"{header}.{payload}.{sig}"
    return value, "hs256", {"v": value}


def m_basic(rng: random.Random, i: int) -> Made:
    """The credentials of an HTTP Basic header (RFC 7617): base64 of user:password."""
    user = rng.choice(("mobile", "ios-app", "qa", "admin", "android"))
    value = base64.b64encode(f"{user}:{m_conn_password(rng)}".encode()).decode()
    return value, "basic", {"v": value}


def m_bearer(rng: random.Random, i: int) -> Made:
    """An opaque bearer token: a Google OAuth access token (FCM v1) or a backend's session token."""
    if i % 2:
        value = "ya29." + pick(rng, B64URL, 150)
        return value, "google_ya29", {"v": value}
    value = pick(rng, ALNUM, 48)
    return value, "opaque48", {"v": value}


def m_digest(rng: random.Random, i: int) -> Made:
    """The `response=` of an HTTP Digest header (RFC 7616) a camera or IoT companion app sends."""
    value = pick(rng, HEX, 64 if i % 2 else 32)
    return value, ("md5", "sha256")[i % 2], {"v": value, "nonce": pick(rng, HEX, 32)}


def m_sigv4(rng: random.Random, i: int) -> Made:
    """An AWS SigV4 signature (64 hex), in a header or a presigned URL."""
    value = pick(rng, HEX, 64)
    return value, "sigv4", {"v": value, "id": aws_id(rng)}


COOKIE_SHAPES = (("connect.sid", lambda r: "s%3A" + pick(r, B64URL, 32) + "." + pick(r, B64, 43)),
                 ("PHPSESSID", lambda r: pick(r, LOWER_DIGITS, 26)),
                 ("_session_id", lambda r: pick(r, HEX, 32)),
                 ("__Secure-next-auth.session-token", lambda r: "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0.." +
                  pick(r, B64URL, 22) + "." + pick(r, B64URL, 80) + "." + pick(r, B64URL, 22)),
                 ("sessionid", lambda r: pick(r, LOWER_DIGITS, 32)),
                 ("laravel_session", lambda r: pick(r, B64, 120) + "%3D"))


def m_cookie(rng: random.Random, i: int) -> Made:
    """A session cookie's value under its framework's name."""
    name, make = COOKIE_SHAPES[i % len(COOKIE_SHAPES)]
    value = make(rng)
    return value, name, {"v": value, "cookie": name}


def m_token(make: Callable[[random.Random, int], str], style: str) -> Callable[..., Made]:
    """A maker of a provider token from its format."""
    def maker(rng: random.Random, i: int) -> Made:
        value = make(rng, i)
        return value, style, {"v": value}
    return maker


def sentry_org_token(rng: random.Random, i: int) -> str:
    """A Sentry organisation auth token (`sntrys_` + base64 JSON claims + `_` + secret) or user token
    (`sntryu_` + 64 hex)."""
    if i % 2:
        return "sntryu_" + pick(rng, HEX, 64)
    claims = {"iat": 1765000000.0 + i, "url": "https://sentry.io", "region_url": "https://de.sentry.io",
              "org": rng.choice(("shopkit", "payly", "marketly"))}
    return "sntrys_" + base64.b64encode(json.dumps(claims, separators=(",", ":")).encode()).decode().rstrip("=") \
        + "_" + pick(rng, B64, 43)


def mapbox_secret(rng: random.Random, i: int) -> str:
    """A Mapbox secret token: `sk.` + base64url of {"u": user, "a": id} + `.` + 22 characters."""
    claims = {"u": rng.choice(("shopkit", "ridehail-dev", "marketly")), "a": "cl" + pick(rng, LOWER_DIGITS, 23)}
    return "sk." + b64url(json.dumps(claims, separators=(",", ":")).encode()) + "." + pick(rng, B64URL, 22)


TOKEN_KINDS: dict[str, tuple[Callable[..., Made], str]] = {
    "fcm_server_key": (m_token(lambda r, i: "AAAA" + pick(r, B64URL, 7) + ":APA91b" + pick(r, B64URL, 134),
                               "legacy"), "FCM_SERVER_KEY"),
    "google_api_key": (m_token(lambda r, i: "AIzaSy" + pick(r, B64URL, 33), "aiza"), "GOOGLE_MAPS_SERVER_KEY"),
    "google_oauth_secret": (m_token(lambda r, i: "GOCSPX-" + pick(r, B64URL, 28), "gocspx"),
                            "GOOGLE_CLIENT_SECRET"),
    "sentry_auth_token": (m_token(sentry_org_token, "sntry"), "SENTRY_AUTH_TOKEN"),
    "supabase_secret_key": (m_token(lambda r, i: "sb_secret_" + pick(r, B64URL, 31), "sb_secret"),
                            "SUPABASE_SECRET_KEY"),
    "mapbox_secret_token": (m_token(mapbox_secret, "sk"), "MAPBOX_DOWNLOADS_TOKEN"),
    "apple_app_password": (m_token(lambda r, i: "-".join(pick(r, string.ascii_lowercase, 4) for _ in range(4)),
                                   "four_groups"), "FASTLANE_APPLE_APPLICATION_SPECIFIC_PASSWORD"),
    "github_token": (m_token(lambda r, i: crc_gh(r), "ghp"), "MATCH_GIT_TOKEN"),
    "stripe_secret_key": (m_token(lambda r, i: "sk_live_" + (pick(r, ALNUM, 24) if i % 2 else "51"
                                                             + pick(r, ALNUM, 97)), "sk_live"), "STRIPE_SECRET_KEY"),
}
"""Provider tokens of the mobile world: maker and the variable name CI and backends give them."""

TOKEN_CARRIERS: tuple[Carrier, ...] = (
    T("dotenv", "{env}={v}\n"),
    T("codemagic_yaml", "environment:\n  vars:\n    {env}: {v}\n"),
    T("bitrise_yaml", "envs:\n- {env}: {v}\n  opts:\n    is_expand: false\n"),
    J("eas_json", '{"build":{"production":{"env":{"{env}":"{v}"}}}}'),
    T("chat_unlabelled", "ok pushed it, use {v}"),
    T("logcat", "12-06 10:42:17.331  4321  4398 D BuildConfig: {env}={v}"),
    J("sentry_extra", '{"extra":{"env":{"{env}":"{v}"}},"platform":"cocoa"}'),
    T("gradle_properties", "{env}={v}\norg.gradle.daemon=true\n"),
    T("actions_log", "Run export {env}={v}\n  shell: /bin/bash -e {0}"),
    J("github_secret_dump", '{"secrets":[{"name":"{env}","value":"{v}"}]}'),
    T("android_manifest", '<meta-data android:name="io.shopkit.{env}" android:value="{v}" />'),
)

PRIVATE_KEY_CARRIERS: tuple[Carrier, ...] = (
    J("gcp_service_account", '{"type":"service_account","project_id":"shopkit-prod","private_key_id":"3f1c9a2077b1",'
      '"private_key":"{v}\\n","client_email":"firebase-adminsdk-x1@shopkit-prod.iam.gserviceaccount.com"}'),
    T("asc_p8_cat", "$ cat AuthKey_7K2L9Q4MXZ.p8\n{v}"),
    J("fastlane_api_key_json", '{"key_id":"7K2L9Q4MXZ","issuer_id":"69a6de70-03db-47e3-e053-5b8c7c11a4d1",'
      '"key":"{v}","in_house":false}'),
    T("codemagic_yaml", "environment:\n  vars:\n    APP_STORE_CONNECT_PRIVATE_KEY: |\n{v}"),
    T("chat_paste", "here is the push key, don't share:\n{v}"),
    J("firebase_admin_env", '{"FIREBASE_PRIVATE_KEY":"{v}","FIREBASE_PROJECT_ID":"shopkit-prod"}'),
    T("bitrise_log", "+ echo \"$APNS_KEY\" > key.p8\n{v}"),
)

AUTH_CARRIERS: dict[str, tuple[Carrier, ...]] = {
    "jwt": (T("charles_header", "GET /rest/v1/orders HTTP/1.1\nAuthorization: Bearer {v}\napikey: public"),
            J("supabase_session", '{"access_token":"{v}","token_type":"bearer","expires_in":3600}'),
            T("async_storage_dump", "@supabase.auth.token -> {v}"),
            T("deep_link", "shopkit://auth/callback#access_token={v}&type=magiclink"),
            J("flipper_network", '{"requestHeaders":[{"key":"Authorization","value":"Bearer {v}"}]}'),
            T("logcat", "12-06 10:42:17.331  4321  4398 D AuthInterceptor: token={v}")),
    "basic_auth": (T("charles_header", "GET /api/config HTTP/1.1\nAuthorization: Basic {v}"),
                   T("curl_v", "> GET /staging/manifest HTTP/2\n> authorization: Basic {v}\n> user-agent: curl/8.4.0"),
                   J("har_headers", '{"request":{"headers":[{"name":"Authorization","value":"Basic {v}"}]}}'),
                   T("logcat_okhttp", "12-06 10:42:17.331  4321  4398 I okhttp.OkHttpClient: Authorization: Basic {v}"),
                   J("proxyman_export", '{"request":{"header":{"entries":[{"key":"Authorization","value":"Basic '
                                        '{v}"}]}}}')),
    "bearer_token": (T("fcm_v1_curl", "curl -X POST https://fcm.googleapis.com/v1/projects/shopkit-prod/messages:send "
                       "-H \"Authorization: Bearer {v}\" -H 'Content-Type: application/json'"),
                     J("har_headers", '{"request":{"headers":[{"name":"authorization","value":"Bearer {v}"}]}}'),
                     T("logcat_okhttp", "12-06 10:42:17.331  4321  4398 I okhttp.OkHttpClient: Authorization: "
                                        "Bearer {v}"),
                     J("flipper_network", '{"requestHeaders":[{"key":"Authorization","value":"Bearer {v}"}]}'),
                     T("proxyman_raw", "POST /v1/sync HTTP/1.1\nHost: api.shopkit.io\nAuthorization: Bearer {v}")),
    "digest_response": (T("ipcam_app_log", 'Authorization: Digest username="admin", realm="IPCamera", nonce="{nonce}", '
                          'uri="/ISAPI/Streaming", qop=auth, nc=00000001, cnonce="0a4f113b", response="{v}"'),
                        J("har_headers", '{"request":{"headers":[{"name":"Authorization","value":"Digest '
                                         'username=\\"app\\", '
                          'realm=\\"api\\", nonce=\\"{nonce}\\", uri=\\"/v1\\", response=\\"{v}\\""}]}}'),
                        T("logcat", '12-06 10:42:17.331  4321  4398 D CamClient: Digest response="{v}" '
                                    'nonce="{nonce}"'),
                        T("charles_raw", 'GET /cgi-bin/snapshot.cgi HTTP/1.1\nAuthorization: Digest username="viewer", '
                          'realm="cam", nonce="{nonce}", uri="/cgi-bin/snapshot.cgi", response="{v}"')),
    "sigv4_signature": (T("charles_header", "PUT /uploads/a.jpg HTTP/1.1\nAuthorization: AWS4-HMAC-SHA256 "
                                            "Credential={id}"
                          "/20261206/eu-west-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature={v}"),
                        T("presigned_url", "https://shopkit-media.s3.eu-west-1.amazonaws.com/avatars/88123.jpg?X-Amz-"
                          "Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={id}%2F20261206%2Feu-west-1%2Fs3%2Faws4_request"
                          "&X-Amz-Date=20261206T104217Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature={v}"),
                        J("amplify_log", '{"level":"debug","headers":{"Authorization":"AWS4-HMAC-SHA256 '
                                         'Credential={id}/'
                          '20261206/eu-west-1/appsync/aws4_request, SignedHeaders=host, Signature={v}"}}'),
                        T("logcat", "12-06 10:42:17.331  4321  4398 D S3: signed url ...&X-Amz-Signature={v}")),
    "session_cookie": (T("charles_set_cookie", "HTTP/1.1 200 OK\nSet-Cookie: {cookie}={v}; Path=/; HttpOnly; Secure"),
                       J("har_cookies", '{"request":{"cookies":[{"name":"{cookie}","value":"{v}","httpOnly":true}]}}'),
                       T("webview_cookie_dump", "CookieManager.getCookie(https://m.shopkit.io) = lang=en; "
                                                "{cookie}={v}"),
                       T("curl_v", "> GET /account HTTP/2\n> cookie: {cookie}={v}"),
                       J("flipper_network", '{"requestHeaders":[{"key":"Cookie","value":"{cookie}={v}"}]}')),
}
"""Carriers of the auth kinds: headers, captures and logs."""

AUTH_MAKERS: dict[str, Callable[..., Made]] = {"jwt": m_jwt, "basic_auth": m_basic, "bearer_token": m_bearer,
                                               "digest_response": m_digest, "sigv4_signature": m_sigv4,
                                               "session_cookie": m_cookie}


# ---- national ids outside the target --------------------------------------------------------------------------

def cpf(rng: random.Random) -> str:
    """Brazil's CPF: 9 digits and two mod-11 check digits, printed 000.000.000-00."""
    d = [int(c) for c in digits(rng, 9)]
    for n in (10, 11):
        s = sum(x * w for x, w in zip(d, range(n, 1, -1), strict=True))
        d.append(0 if s % 11 < 2 else 11 - s % 11)
    t = "".join(map(str, d))
    return f"{t[:3]}.{t[3:6]}.{t[6:9]}-{t[9:]}"


def dni(rng: random.Random) -> str:
    """Spain's DNI: 8 digits and the mod-23 letter."""
    n = digits(rng, 8)
    return n + "TRWAGMYFPDXBNJZSQVHLCKE"[int(n) % 23]


def pesel(rng: random.Random) -> str:
    """Poland's PESEL: YYMMDD (1900s), serial, weighted check digit."""
    body = f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 4)}"
    s = sum(int(c) * w for c, w in zip(body, (1, 3, 7, 9, 1, 3, 7, 9, 1, 3), strict=True))
    return body + str((10 - s % 10) % 10)


def tc_kimlik(rng: random.Random) -> str:
    """Türkiye's T.C. Kimlik No: 9 digits (first non-zero), then the two published check digits."""
    d = [rng.randint(1, 9)] + [int(c) for c in digits(rng, 8)]
    d.append(((d[0] + d[2] + d[4] + d[6] + d[8]) * 7 - (d[1] + d[3] + d[5] + d[7])) % 10)
    d.append(sum(d) % 10)
    return "".join(map(str, d))


def bsn(rng: random.Random) -> str:
    """The Netherlands' BSN: 9 digits passing the 11-proef (9..2 weights, last digit -1)."""
    while True:
        d = [int(c) for c in digits(rng, 9)]
        if d[0] and (sum(x * w for x, w in zip(d, range(9, 1, -1), strict=False)) - d[8]) % 11 == 0:
            return "".join(map(str, d))


def cn_id(rng: random.Random) -> str:
    """China's resident id: region, birth date, serial, ISO 7064 MOD 11-2 check character."""
    body = rng.choice(("110105", "310104", "440305", "510107")) + f"19{rng.randint(60, 99)}" \
        + f"{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}" + digits(rng, 3)
    s = sum(int(c) * w for c, w in zip(body, (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2), strict=True))
    return body + "10X98765432"[s % 11]


IDS: dict[str, tuple[Callable[[random.Random], str], tuple[str, ...]]] = {
    "br_cpf": (cpf, ("CPF", "CPF do titular", "Número do CPF")),
    "es_dni": (dni, ("DNI", "NIF/DNI", "Documento (DNI)")),
    "pl_pesel": (pesel, ("PESEL", "Numer PESEL", "nr PESEL")),
    "tr_tc_kimlik": (tc_kimlik, ("T.C. Kimlik No", "TC Kimlik Numarası", "TCKN")),
    "nl_bsn": (bsn, ("BSN", "Burgerservicenummer", "BSN-nummer")),
    "cn_resident_id": (cn_id, ("身份证号", "居民身份证号码", "證件號碼")),
}
"""National ids with public check digits: generator and label words in the country's language."""

ID_CARRIERS: tuple[Carrier, ...] = (
    J("kyc_json", '{"step":"document","country":"auto","fields":{"label":"{ctx}","value":"{v}"}}'),
    T("id_screen_ocr", "ID verification  2/3\n{ctx}\n{v}\nContinue"),
    T("support_chat", "[11:20] user: {ctx}: {v}"),
    J("supabase_row", '{"id":912,"document_type":"{ctx}","document_number":"{v}"}'),
    T("logcat", "12-06 10:42:17.331  4321  4398 D KycForm: {ctx}={v}"),
    J("sentry_breadcrumb", '{"breadcrumbs":[{"category":"ui.input","message":"{ctx} {v}"}]}'),
)


def m_id(kind: str) -> Callable[..., Made]:
    """A maker of a national id with a label of its country."""
    make, labels = IDS[kind]

    def maker(rng: random.Random, i: int) -> Made:
        value = make(rng)
        return value, "printed", {"v": value, "ctx": rng.choice(labels)}
    return maker


OUTSIDE_TARGET = frozenset(IDS)
"""National ids: personal, but not held to the target."""


# ---- the corpus -----------------------------------------------------------------------------------------------

def with_env(maker: Callable[..., Made], env: str) -> Callable[..., Made]:
    """A token maker that also names the variable it is kept in."""
    def make(rng: random.Random, i: int) -> Made:
        secret, style, fields = maker(rng, i)
        return secret, style, {**fields, "env": env}
    return make


def kinds() -> dict[str, tuple[Callable[..., Made], tuple[Carrier, ...]]]:
    """Every kind: its maker and carriers."""
    out: dict[str, tuple[Callable[..., Made], tuple[Carrier, ...]]] = {
        "password": (m_password, PASSWORD_CARRIERS), "aws_secret": (m_aws, AWS_CARRIERS),
        "webhook": (m_webhook, WEBHOOK_CARRIERS), "stripe_whsec": (m_whsec, WHSEC_CARRIERS),
        "connection_string": (m_connection, CONNECTION_CARRIERS), "labelled_key": (m_generic_key, LABELLED_CARRIERS),
        "disguised": (m_disguised, DISGUISED_CARRIERS), "email": (m_email, EMAIL_CARRIERS),
        "ssn": (m_ssn, SSN_CARRIERS), "card": (m_card, CARD_CARRIERS), "iban": (m_iban, IBAN_CARRIERS)}
    for kind, maker in {"phone_us_ca": nanp, "phone_uk": uk, "phone_fr": fr, "phone_de": de, "phone_in": india,
                        **PLANS}.items():
        out[kind] = (phone_fields(kind, maker), PHONE_CARRIERS)
    out["private_key"] = (m_private_key, PRIVATE_KEY_CARRIERS)
    for kind, maker in AUTH_MAKERS.items():
        out[kind] = (maker, AUTH_CARRIERS[kind])
    for kind, (maker, env) in TOKEN_KINDS.items():
        out[kind] = (with_env(maker, env), TOKEN_CARRIERS)
    for kind in IDS:
        out[kind] = (m_id(kind), ID_CARRIERS)
    return out


def generate() -> Iterator[Case]:
    """PER_KIND cases of every kind, each kind from its own seeded generator, carriers in turn; the maker's index
    moves on one each round of carriers, so a carrier meets every style."""
    for kind, (maker, carriers) in kinds().items():
        rng = random.Random(f"nineteenth/{kind}")
        for i in range(PER_KIND):
            form, template, is_json = carriers[i % len(carriers)]
            secret, style, fields = maker(rng, i + i // len(carriers))
            yield Case(kind, secret, fill(template, fields, is_json), f"{form}/{style}", is_json)


# ---- near misses: what such records hold that is not secret or personal ---------------------------------------

def neg_bundle(rng: random.Random) -> str:
    """Bundle and package ids as manifests, build settings and crash headers print them."""
    app = rng.choice(("shopkit", "payly", "marketly", "ridehail", "fitpulse"))
    return rng.choice((f'<manifest package="io.{app}.app.{pick(rng, string.ascii_lowercase, 5)}">',
                       f"PRODUCT_BUNDLE_IDENTIFIER = com.{app}.ios.{rng.choice(('staging', 'prod', 'widget'))}",
                       f'applicationId "io.{app}.android"', f"Identifier: com.{app}.app [{rng.randint(300, 9999)}]"))


def neg_build(rng: random.Random) -> str:
    """Version names, build numbers, OS builds and build fingerprints."""
    major, minor, patch = rng.randint(1, 12), rng.randint(0, 40), rng.randint(0, 20)
    code = f"{major}{minor:02d}{patch:02d}{rng.randint(10, 99)}"
    return rng.choice((f"Version: {major}.{minor}.{patch} ({code})",
                       f"versionCode {code}\nversionName \"{major}.{minor}\"",
                       f"<key>CFBundleVersion</key><string>{code}</string>",
                       f"OS Version: iOS 17.{rng.randint(0, 6)}.{rng.randint(0, 3)} (21E{rng.randint(100, 299)})",
                       f"Build fingerprint: 'google/husky/husky:14/AP2A.240{rng.randint(100, 905)}"
                       f".00{rng.randint(1, 9)}/{digits(rng, 8)}:user/release-keys'"))


def neg_addresses(rng: random.Random) -> str:
    """Addresses, offsets and registers of iOS crash frames and Android tombstones."""
    base = rng.randrange(0x100000000, 0x1ffffffff)
    return rng.choice((f"3   Shopkit  0x{base:016x} 0x{base - 0x4000:x} + {rng.randint(1000, 99999)}",
                       f"    #0{rng.randint(0, 9)} pc 0000000000{pick(rng, HEX, 6)}  /system/lib64/libc.so "
                       f"(abort+{rng.randint(100, 400)})",
                       f"x0: 0x{pick(rng, HEX, 16)}  x1: 0x{pick(rng, HEX, 16)}",
                       f"0x{base:x} - 0x{base + 0x2f3fff:x} Shopkit arm64  <{pick(rng, HEX, 32)}>"))


def neg_threads(rng: random.Random) -> str:
    """Process and thread ids of logcat, tombstones and crash logs."""
    pid, tid = rng.randint(1000, 32000), rng.randint(1000, 32000)
    return rng.choice((f"12-06 10:42:17.331  {pid}  {tid} E AndroidRuntime: FATAL EXCEPTION: main",
                       f"pid: {pid}, tid: {tid}, name: RenderThread  >>> io.shopkit.app <<<",
                       f"Thread {rng.randint(0, 40)} Crashed:: Dispatch queue: com.apple.main-thread",
                       f"Process: Shopkit [{pid}]\nParent Process: launchd [1]"))


def neg_models(rng: random.Random) -> str:
    """Device model codes."""
    return rng.choice((f"Hardware Model: iPhone{rng.randint(12, 16)},{rng.randint(1, 8)}",
                       f'"device":{{"model":"SM-S{rng.randint(900, 928)}B","manufacturer":"samsung"}}',
                       f"Device: Pixel {rng.randint(6, 9)} Pro (husky), Android {rng.randint(12, 15)}",
                       f"hw.machine = iPad{rng.randint(11, 14)},{rng.randint(1, 6)}"))


def neg_install_ids(rng: random.Random) -> str:
    """Install, instance and event ids of analytics and attribution SDKs."""
    return rng.choice((f'"app_instance_id":"{pick(rng, HEX, 32)}"', f'"insert_id":"{guid(rng)}","event_id":'
                       f"{rng.randint(1, 9999)}", f"appsflyer_id={digits(rng, 13)}-{digits(rng, 19)}",
                       f'"$device_id":"{guid(rng).upper()}"'))


def neg_uuids(rng: random.Random) -> str:
    """dSYM, incident and vendor UUIDs and event ids."""
    return rng.choice((f"dSYM UUID: {guid(rng).upper()}", f"Incident Identifier: {guid(rng).upper()}",
                       f'"event_id":"{pick(rng, HEX, 32)}"', f"identifierForVendor {guid(rng).upper()}"))


def neg_hashes(rng: random.Random) -> str:
    """Signing certificate fingerprints, commit and artefact hashes."""
    return rng.choice((f"SHA-256: {':'.join(pick(rng, '0123456789ABCDEF', 2) for _ in range(32))}",
                       f"commit {pick(rng, HEX, 40)}", f"apk sha256 {pick(rng, HEX, 64)}",
                       f"integrity: sha512-{pick(rng, B64, 86)}=="))


def neg_times(rng: random.Random) -> str:
    """Timestamps in epoch micro- and milliseconds and ISO 8601."""
    ms = 1765000000000 + rng.randint(0, 10**9)
    return rng.choice((f'"event_timestamp":{ms * 1000}', f"Date/Time: 2026-12-06 10:42:{rng.randint(10, 59)}.331 "
                       "+0100", f'"timestamp":"2026-12-06T10:42:17.{rng.randint(100, 999)}Z"', f"ts={ms}"))


def neg_screens(rng: random.Random) -> str:
    """Screen sizes, densities and viewports."""
    return rng.choice((f"screen 1179x2556 @3x, density {rng.choice((420, 440, 480))}dpi",
                       f'"screen_resolution":"{rng.choice((1080, 1440))}x{rng.choice((2340, 2400, 3120))}"',
                       f"viewport {rng.randint(360, 430)}x{rng.randint(740, 932)}", "sw600dp-land"))


def neg_skus(rng: random.Random) -> str:
    """In-app product ids, SKUs and prices."""
    return rng.choice((f"productId io.shopkit.pro.{rng.choice(('monthly', 'yearly'))} price $"
                       f"{rng.randint(1, 99)}.99", f'"price_amount_micros":{rng.randint(1, 99)}990000',
                       f"SKU 8{digits(rng, 11)} · ₹{rng.randint(99, 999)}", f"Subscription group {digits(rng, 8)}"))


PUBLIC_KEYS: tuple[Callable[[random.Random], str], ...] = (
    lambda r: f"STRIPE_PUBLISHABLE_KEY=pk_live_{pick(r, ALNUM, 99)}",
    lambda r: f'Sentry.init({{ dsn: "https://{pick(r, HEX, 32)}@o{digits(r, 6)}.ingest.sentry.io/{digits(r, 7)}" }})',
    lambda r: f'mixpanel.init("{pick(r, HEX, 32)}")',
    lambda r: f'Purchases.configure(withAPIKey: "appl_{pick(r, ALNUM, 27)}")',
    lambda r: f"NEXT_PUBLIC_SUPABASE_PUBLISHABLE_KEY=sb_publishable_{pick(r, B64URL, 31)}",
    lambda r: f"MGLMapboxAccessToken "
              f"pk.{b64url(json.dumps({'u': 'shopkit', 'a': 'cl' + pick(r, LOWER_DIGITS, 23)}).encode())}"
              f".{pick(r, B64URL, 22)}",
    lambda r: f'"oneSignalAppId":"{guid(r)}"',
    lambda r: f"Adjust appToken {pick(r, LOWER_DIGITS, 12)}",
    lambda r: f'amplitude.getInstance().init("{pick(r, HEX, 32)}");',
    lambda r: f"ALGOLIA_SEARCH_ONLY_API_KEY={pick(r, HEX, 32)}",
    lambda r: "SUPABASE_ANON_KEY=" + anon_key(r),
)


def anon_key(rng: random.Random) -> str:
    """A Supabase anon-role key: an HS256 JWT the vendor documents as safe in clients (row-level security guards
    the data)."""
    head = b64url(b'{"alg":"HS256","typ":"JWT"}')
    ref = pick(rng, string.ascii_lowercase, 20)
    body = b64url(json.dumps({"iss": "supabase", "ref": ref, "role": "anon", "iat": 1735000000,
                              "exp": 2050576000}, separators=(",", ":")).encode())
    return f"{head}.{body}.{pick(rng, B64URL, 43)}"


def neg_public_keys(rng: random.Random) -> str:
    """A client-side key its vendor documents as public (see the module docstring)."""
    return rng.choice(PUBLIC_KEYS)(rng)


def neg_firebase_keys(rng: random.Random) -> str:
    """Firebase API keys in client config files, public by Firebase's documentation."""
    key = "AIzaSy" + pick(rng, B64URL, 33)
    return rng.choice((f'"api_key":[{{"current_key":"{key}"}}]', f"<key>API_KEY</key>\n<string>{key}</string>",
                       f'const firebaseConfig = {{ apiKey: "{key}", authDomain: "shopkit-prod.firebaseapp.com" }};'))


def neg_masked(rng: random.Random) -> str:
    """Masked card numbers, addresses, phones, passwords, IBANs and SSNs."""
    return rng.choice((f"Card •••• {digits(rng, 4)}", "email: j***@g***.com", f"Phone +44 7*** ***{digits(rng, 3)}",
                       "password: ********", f"IBAN DE** **** **** **** **{digits(rng, 2)} ", f"SSN **"
                                                                                              f"*-**-{digits(rng, 4)}"))


def neg_placeholders(rng: random.Random) -> str:
    """Placeholders and variable references where a secret would go."""
    return rng.choice(("RELEASE_STORE_PASSWORD=${KEYSTORE_PASSWORD}", "MATCH_PASSWORD=$(MATCH_PASSWORD)",
                       'api_key: "YOUR_API_KEY_HERE"', "password: <your-password>", "AWS_SECRET_ACCESS_KEY=",
                       "STRIPE_WEBHOOK_SECRET=whsec_...", "storePassword=System.getenv(\"STORE_PASS\")",
                       "GOOGLE_MAPS_KEY=REPLACE_ME"))


def neg_luhn_invalid(rng: random.Random) -> str:
    """Card-length numbers that fail the Luhn check."""
    partial = (rng.choice(("4", "51", "6011")) + digits(rng, 15))[:15]
    bad = str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)
    return rng.choice((f"order {partial + bad}", f"tracking no. {group(partial + bad, 4, ' ')}",
                       f'"purchaseToken_num":"{partial + bad}"'))


def neg_review_ids(rng: random.Random) -> str:
    """App Store and Google Play review ids."""
    return rng.choice((f'"type":"customerReviews","id":"{digits(rng, 11)}"', f"reviewId: "
                                                                             f"gp:AOqpTO{pick(rng, B64URL, 40)}",
                       f"Review #{digits(rng, 10)} · 2★ · v4.12.0"))


def neg_campaigns(rng: random.Random) -> str:
    """Attribution campaign, ad group and tracker ids."""
    return rng.choice((f"af_c_id={digits(rng, 11)}&pid=googleadwords_int", f"adjust "
                                                                           f"tracker {pick(rng, LOWER_DIGITS, 6)}"
                       f" campaign {digits(rng, 10)}", f'"campaign_id":"{digits(rng, 12)}",'
                                                       f'"adgroup_id":"{digits(rng, 11)}"',
                       f"utm_campaign=winter_{digits(rng, 4)}&utm_source=push"))


def neg_test_cards(rng: random.Random) -> str:
    """Payment providers' published sandbox card numbers (judged not secret: see the docstring)."""
    return rng.choice(("Stripe test card 4242 4242 4242 4242, any CVC", "use 4000 0566 5566 5556 (Visa debit, test)",
                       "test Mastercard 5555 5555 5555 4444", "Amex test 3782 822463 10005",
                       "Braintree sandbox: 4111111111111111", "Adyen test card 4111 1111 4555 1142",
                       "declines: 4000 0000 0000 0002"))


def neg_orders(rng: random.Random) -> str:
    """App store order and transaction ids."""
    return rng.choice((f"orderId GPA.33{digits(rng, 2)}-{digits(rng, 4)}-{digits(rng, 4)}-{digits(rng, 5)}",
                       f'"original_transaction_id":"2000000{digits(rng, 9)}"', f"transactionId: "
                                                                               f"2000000{digits(rng, 9)}",
                       f"order #{digits(rng, 3)}-{digits(rng, 7)}-{digits(rng, 7)}"))


def neg_phone_words(rng: random.Random) -> str:
    """Phone context words beside numbers that are not phone numbers."""
    return rng.choice((f"Phone: iPhone{rng.randint(12, 16)},{rng.randint(1, 8)} iOS 17.4.1 (21E236)",
                       f"Tel. Version {rng.randint(1, 9)}.{rng.randint(0, 99)}.{digits(rng, 3)}",
                       f"mobile build {digits(rng, 7)} uploaded", f"call stack depth {rng.randint(10, 99)}, frame "
                       f"{digits(rng, 6)}", f"Handy-Modell SM-A{rng.randint(100, 599)}B, Firmware A{digits(rng, 3)}"))


NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "bundle_ids": neg_bundle, "build_versions": neg_build, "stack_addresses": neg_addresses,
    "thread_pids": neg_threads, "device_models": neg_models, "install_event_ids": neg_install_ids,
    "uuids": neg_uuids, "hashes": neg_hashes, "timestamps": neg_times, "screen_sizes": neg_screens,
    "skus_prices": neg_skus, "public_client_keys": neg_public_keys, "firebase_config_keys": neg_firebase_keys,
    "masked_values": neg_masked, "placeholders": neg_placeholders, "luhn_invalid": neg_luhn_invalid,
    "review_ids": neg_review_ids, "campaign_ids": neg_campaigns, "published_test_cards": neg_test_cards,
    "store_order_ids": neg_orders, "phone_words_no_number": neg_phone_words,
}
"""Near-miss sorts: 21, each written 20 times."""


def generate_negatives(per_sort: int = 20) -> Iterator[tuple[str, str]]:
    """(sort, text) near misses, from one seeded generator per sort."""
    for sort, make in NEGATIVES.items():
        rng = random.Random(f"nineteenth/negative/{sort}")
        for _ in range(per_sort):
            yield sort, make(rng)
