"""A fourth redaction corpus, unseen: values written from the kinds' public formats, carried in the shapes a
support/agent team's production logs hold, by someone who read neither the rules (tracegym/redact/) nor the
three other corpora. Seed fixed (SEED); 120 values per kind; every value is valid for its format and otherwise
random. `generate()` yields `Case`s (kind, secret as written in the carried text, carried text, whether it is a
JSON document, form = "carrier/style", the line the value was written in); `generate_negatives()` yields
(sort, text) near misses that must give no finding.

Carriers (the form's head), each written here: dotenv, compose, k8s (Secret stringData), helm (values.yaml),
terraform, structlog / logback (JSON log lines pasted as text), pino / zap (JSON records, is_json), winston,
tool_call (OpenAI function call, arguments as escaped JSON inside JSON), tool_use (Anthropic input object),
tool_result (a tool's JSON reply as a string), http (request dumps), curl, stack (Python tracebacks), java (Java
exceptions), csv (exports), email (headers and signatures), chat (customers writing in English, German, French,
Spanish, Italian, Japanese, Portuguese, Dutch, Swedish, Polish, Hindi in Latin script), markdown (code spans and
fences), ocr (scanned forms: odd spacing), plus kind-specific ones (aws_cli, boto, iam_csv, sa_json, npmrc, ...).

Kinds and the public specification each is written from:
- password: labelled passwords in env (DB_PASSWORD, PGPASSWORD, MYSQL_ROOT_PASSWORD ...), YAML, JSON
  (camelCase userPassword ...), CLI flags, Java properties, and chat in eight languages. Human-made and
  generated values, 10-28 characters (printable ASCII less quotes and backslash).
- secret: other labelled secrets (client_secret, SECRET_KEY, signing keys) of no provider format: base62, hex,
  base64 of 16-48 bytes.
- http_auth: RFC 7235/7617/6750 credentials: `Authorization: Bearer`, `Basic base64(user:password)`, `X-Api-Key`,
  cookies (RFC 6265 `session=`), query strings (`access_token=`, `api_key=`). The secret is the credential.
- aws_key_id / aws_secret: IAM access key ids (`AKIA`/`ASIA` + 16 base32 characters) and 40-character secret keys
  (base64 alphabet), as the AWS CLI's credentials file, `aws sts` JSON, botocore errors, IAM's CSV hold them.
- github: `ghp_/gho_/ghu_/ghs_/ghr_` + 30 base62 + CRC32 of those 30 in base62 (6 characters, 0-9A-Za-z), as
  GitHub's 2021 token format post describes; fine-grained `github_pat_` + 22 + `_` + 59.
- gitlab: `glpat-` + 20 (GitLab's token prefixes doc), `gldt-`, `glrt-`, `glptt-` + 40 hex.
- slack_token: `xoxb-`/`xoxp-`/`xapp-1-` (Slack's token types doc).
- stripe: `sk_live_`/`sk_test_`/`rk_live_` + 24 or 99 base62, `whsec_` + 32 (Stripe API keys doc).
- openai: `sk-` + 20 + `T3BlbkFJ` + 20, `sk-proj-`/`sk-svcacct-`/`sk-admin-` + 58 + `T3BlbkFJ` + 58.
- anthropic: `sk-ant-api03-` / `sk-ant-admin01-` + 93 base64url + `AA` (108 characters for api03).
- google: `AIza` + 35 base64url (API keys), `GOCSPX-` + 28 (OAuth client secrets).
- twilio: 32-hex auth tokens and 32-character API key secrets, labelled beside their `AC`/`SK` sids.
- sendgrid: `SG.` + 22 + `.` + 43 base64url.
- npm: `npm_` + 30 base62 + CRC32 (as GitHub's); written in .npmrc `//registry.npmjs.org/:_authToken=`.
- huggingface: `hf_` + 34 letters.
- datadog: API keys (32 hex) and application keys (40 hex), labelled (DD_API_KEY, DD-API-KEY header).
- azure: Storage SAS tokens (`sig=` base64 of an HMAC-SHA256, URL-encoded) in URLs and connection strings, and
  `AccountKey=` (base64 of 64 bytes).
- gcp_sa: a service-account key file's `private_key` (PKCS#8 PEM, its base64 body is the secret).
- jwt: RFC 7519 JWTs, HS256 signed for real (HMAC over header.payload), RS256/ES256 with random signatures.
- pem: RFC 7468 blocks: RSA (PKCS#1, DER of random integers of the right sizes), PKCS#8 Ed25519 (RFC 8410),
  SEC1 EC P-256 (RFC 5915), OpenSSH `openssh-key-v1` ed25519. The base64 body is the secret.
- webhook: Slack `hooks.slack.com/services/T../B../24`, Discord `discord.com/api/webhooks/<snowflake>/<68>`,
  Teams `*.webhook.office.com/webhookb2/<guid>@<guid>/IncomingWebhook/<32 hex>/<guid>`, Zapier
  `hooks.zapier.com/hooks/catch/<id>/<key>/`. The secret is the URL's path after its fixed part (after
  `/services/`, `/webhooks/`, `/webhookb2/`, `/catch/`): what lets anyone post; the host may stay.
- db_url: RFC 3986 userinfo in postgres(ql)://, mysql://, mongodb+srv://, redis(s)://, amqp(s)://, JDBC URLs
  with `password=`, ADO.NET `Password=`. The secret is the password.
- email: RFC 5322 addresses (RFC 6531 internationalised ones too) as written: plain, upper/mixed case, +tags,
  subdomains, IDN, in headers `Name <a@b>`, mailto:, percent-encoded `%40` (RFC 3986), JSON `\\u0040` and Go's
  `\\u003c...\\u003e`. All of these are in the target.
- email_obfuscated: ` [at] `, `(at)`, ` at ... dot `, `&#64;` HTML entities: REPORTED, NOT IN THE TARGET (an
  honest redactor may leave them; see OUTSIDE_TARGET).
- phone_us ... phone_za (15 kinds): ITU-T E.164 and the national numbering plans (NANP: NXX area and exchange
  codes; Ofcom's UK plan; ARCEP (FR); BNetzA (DE); TRAI (IN); ACMA (AU); Anatel DDD codes (BR); CNMC (ES);
  AGCOM (IT); MIC (JP); IFT 10-digit plan (MX); ACM (NL); PTS (SE); UKE (PL); ICASA (ZA)), mobile and geographic
  numbers in national and international forms; always beside a context word (phone, Tel., Handy, portable,
  móvil, cellulare, 電話番号, celular, mobiel, mobil, telefon, WhatsApp, ...).
- ssn: SSA's rules (area 001-899 but 666, group 01-99, serial 0001-9999), dashed, spaced or compact beside "SSN".
- card: ISO/IEC 7812 IINs of Visa, Mastercard (51-55, 2221-2720), Amex, Discover, JCB, Diners, UnionPay,
  Maestro, Mir; Luhn-valid; separators space, dash, dot, underscore, none, odd OCR grouping.
- iban: ISO 13616 with SWIFT's IBAN registry BBAN structures of 34 countries, mod-97 check digits; grouped or
  compact, upper or lower case.
- disguised: emails, cards, IBANs, phones and tokens with a zero-width character (U+200B/C/D, U+2060, U+FEFF),
  full-width forms (folded by NFKC), bidi controls (U+202A-E, U+2066-9), a soft hyphen (U+00AD) inside, or
  NBSP/narrow NBSP/figure space (U+00A0, U+202F, U+2007) as group separators; labelled.
- wrapped: long tokens, IBANs and webhook URLs broken over two lines (a terminal's or log viewer's wrap, a shell
  line continuation). In the target, but the kind I expect to be weakest.

The secret of every case is written into its carried text as is, or JSON-escaped once (`survives` in
benchmarks/redact.py looks for both); tests/unit/test_unseen_corpus.py checks it, and the formats' checksums.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import hmac
import io
import json
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from benchmarks.corpus_formats import (
    B62,
    b64url,
    bban,
    crc_token,
    der,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
)

SEED = 40_004
PER_KIND = 120
OUTSIDE_TARGET = ("email_obfuscated",)

B64URL = string.ascii_letters + string.digits + "-_"
B64 = string.ascii_letters + string.digits + "+/"
HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"
PW_SYMBOLS = "!#$%&()*+,-./:;<=>?@[]^_{|}~"
WORDS = ("harbor", "tangerine", "orbit", "maple", "quartz", "falcon", "river", "copper", "velvet", "summit",
         "lantern", "meadow", "pixel", "cobalt", "ember", "glacier", "saffron", "tundra", "willow", "zephyr")
FIRST = ("ana", "lukas", "chloé", "mateo", "giulia", "haruto", "joão", "sanne", "erik", "zofia", "priya", "thabo",
         "emily", "oliver", "sofía", "noah", "fatima", "jonas", "léa", "marco")
LAST = ("garcia", "müller", "dubois", "rossi", "tanaka", "silva", "jansen", "lindqvist", "nowak", "sharma",
        "nkosi", "smith", "okafor", "kowalski", "bernard", "costa", "schmidt", "moreau", "ferrari", "sato")
DOMAINS = ("gmail.com", "outlook.com", "web.de", "orange.fr", "libero.it", "yahoo.co.jp", "uol.com.br",
           "ziggo.nl", "telia.se", "wp.pl", "rediffmail.com", "mweb.co.za", "acme-support.io", "mail.example.org",
           "corp.globex.com", "eu.initech.net")


@dataclass(frozen=True)
class Case:
    """One planted value: `secret` as written in `carried` (or JSON-escaped once there)."""

    kind: str
    secret: str
    carried: str
    is_json: bool
    form: str
    text: str


@dataclass(frozen=True)
class Slot:
    """A value to carry: `written` is what goes into the text (a URL around a password, say), `secret` the part
    that must not survive; `key` a field name for structured carriers, `env` one for env files, `say` a phrase
    that introduces it in prose, `lang` the phrase's language."""

    written: str
    secret: str
    style: str
    key: str
    env: str
    say: str
    lang: str


def pick(rng: random.Random, alphabet: str, n: int) -> str:
    """This corpus draws with `rng.choices`, not as `corpus_formats.pick` does: it passes this to the helpers."""
    return "".join(rng.choices(alphabet, k=n))


def digits(rng: random.Random, n: int) -> str:
    return pick(rng, string.digits, n)


def stamp(rng: random.Random) -> str:
    return f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:" \
           f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z"


def epoch_ms(rng: random.Random) -> int:
    return rng.randint(1_735_689_600_000, 1_767_225_599_000)


def email_address(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)}.{rng.choice(LAST)}{rng.randint(1, 99)}@{rng.choice(DOMAINS)}"


# Values: each maker returns (written, secret, style).

Made = tuple[str, str, str]


def password(rng: random.Random) -> Made:
    style = rng.choice(("human", "passphrase", "generated", "symbols", "pin_word"))
    if style == "human":
        value = rng.choice(WORDS).capitalize() + rng.choice(PW_SYMBOLS) + digits(rng, rng.randint(2, 4))
    elif style == "passphrase":
        value = "-".join(rng.sample(WORDS, 3)) + digits(rng, 2)
    elif style == "generated":
        value = pick(rng, string.ascii_letters + string.digits, rng.randint(16, 28))
    elif style == "symbols":
        value = pick(rng, string.ascii_letters + string.digits + PW_SYMBOLS, rng.randint(12, 20))
    else:
        value = digits(rng, 4) + rng.choice(WORDS) + rng.choice("!?#") + rng.choice(WORDS).upper()[:3]
    return value, value, style


def url_password(rng: random.Random) -> str:
    """A password as it sits in a URL's userinfo: unreserved characters, now and then a %-escape."""
    value = pick(rng, string.ascii_letters + string.digits + "-._~", rng.randint(12, 24))
    return value if rng.random() < 0.7 else value[:6] + rng.choice(("%40", "%23", "%2F", "%3A")) + value[6:]


def generic_secret(rng: random.Random) -> Made:
    style = rng.choice(("base62", "hex", "base64", "base64url"))
    n = rng.randint(16, 48)
    raw = rng.randbytes(n)
    value = {"base62": pick(rng, B62, rng.randint(24, 48)), "hex": raw.hex(), "base64": base64.b64encode(raw).decode(),
             "base64url": b64url(raw)}[style]
    return value, value, style


def http_credential(rng: random.Random) -> Made:
    style = rng.choice(("bearer", "basic", "x_api_key", "cookie", "query"))
    if style == "basic":
        user = rng.choice(FIRST).encode("ascii", "ignore").decode() or "svc"
        value = base64.b64encode(f"{user}:{password(rng)[0]}".encode()).decode()
    elif style == "cookie":
        value = b64url(rng.randbytes(rng.randint(24, 40)))
    else:
        value = pick(rng, B62 + "-_.", rng.randint(28, 64))
    return value, value, style


def aws_pair(rng: random.Random) -> tuple[str, str]:
    return rng.choice(("AKIA", "ASIA")) + pick(rng, B32, 16), pick(rng, B64, 40)


def github(rng: random.Random) -> Made:
    prefix = rng.choice(("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"))
    if prefix == "github_pat_":
        value = prefix + pick(rng, B62, 22) + "_" + pick(rng, B62, 59)
    else:
        value = crc_token(rng, prefix, pick)
    return value, value, prefix.rstrip("_")


def gitlab(rng: random.Random) -> Made:
    prefix = rng.choice(("glpat-", "glpat-", "gldt-", "glrt-", "glptt-"))
    value = prefix + (pick(rng, HEX, 40) if prefix == "glptt-" else pick(rng, B64URL, 20))
    return value, value, prefix.rstrip("-")


def slack_token(rng: random.Random) -> Made:
    style = rng.choice(("xoxb", "xoxp", "xapp"))
    if style == "xoxb":
        value = f"xoxb-{digits(rng, rng.randint(10, 13))}-{digits(rng, 13)}-{pick(rng, B62, 24)}"
    elif style == "xoxp":
        value = f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}"
    else:
        value = f"xapp-1-A{pick(rng, string.ascii_uppercase + string.digits, 10)}-{digits(rng, 13)}-" \
                f"{pick(rng, HEX, 64)}"
    return value, value, style


def stripe(rng: random.Random) -> Made:
    prefix = rng.choice(("sk_live_", "sk_test_", "rk_live_", "whsec_"))
    n = 32 if prefix == "whsec_" else rng.choice((24, 99))
    value = prefix + ("51" + pick(rng, B62, n - 2) if n == 99 else pick(rng, B62, n))
    return value, value, prefix.rstrip("_")


def openai(rng: random.Random) -> Made:
    prefix = rng.choice(("sk-", "sk-proj-", "sk-proj-", "sk-svcacct-", "sk-admin-"))
    half = 20 if prefix == "sk-" else 58
    alphabet = B62 if prefix == "sk-" else B64URL
    value = prefix + pick(rng, alphabet, half) + "T3BlbkFJ" + pick(rng, alphabet, half)
    return value, value, prefix.strip("-").replace("-", "_")


def anthropic(rng: random.Random) -> Made:
    prefix = rng.choice(("sk-ant-api03-", "sk-ant-api03-", "sk-ant-admin01-"))
    value = prefix + pick(rng, B64URL, 93) + "AA"
    return value, value, prefix.split("-")[2]


def google(rng: random.Random) -> Made:
    if rng.random() < 0.7:
        value = "AIza" + pick(rng, B64URL, 35)
        return value, value, "api_key"
    value = "GOCSPX-" + pick(rng, B64URL, 28)
    return value, value, "oauth_secret"


def twilio(rng: random.Random) -> Made:
    if rng.random() < 0.5:
        value = pick(rng, HEX, 32)
        return value, value, "auth_token"
    value = pick(rng, B62, 32)
    return value, value, "api_secret"


def sendgrid(rng: random.Random) -> Made:
    value = "SG." + pick(rng, B64URL, 22) + "." + pick(rng, B64URL, 43)
    return value, value, "api_key"


def npm(rng: random.Random) -> Made:
    value = crc_token(rng, "npm_", pick)
    return value, value, "automation"


def huggingface(rng: random.Random) -> Made:
    value = "hf_" + pick(rng, string.ascii_letters, 34)
    return value, value, "user_token"


def datadog(rng: random.Random) -> Made:
    if rng.random() < 0.6:
        value = pick(rng, HEX, 32)
        return value, value, "api_key"
    value = pick(rng, HEX, 40)
    return value, value, "app_key"


def azure(rng: random.Random) -> Made:
    account = rng.choice(WORDS) + rng.choice(("prod", "logs", "exports", "media")) + digits(rng, 2)
    sig = base64.b64encode(rng.randbytes(32)).decode()
    encoded = sig.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    sas = f"sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T00:00:00Z" \
          f"&st=2025-01-01T00:00:00Z&spr=https&sig={encoded}"
    style = rng.choice(("sas_url", "sas_conn", "account_key"))
    if style == "sas_url":
        return f"https://{account}.blob.core.windows.net/tickets/export.csv?{sas}", encoded, style
    if style == "sas_conn":
        return f"BlobEndpoint=https://{account}.blob.core.windows.net/;SharedAccessSignature={sas}", encoded, style
    key = base64.b64encode(rng.randbytes(64)).decode()
    return (f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};"
            "EndpointSuffix=core.windows.net"), key, style


def guid(rng: random.Random) -> str:
    h = pick(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


WEBHOOK_PATHS = {"slack": "/services/", "discord": "/webhooks/", "teams": "/webhookb2/", "zapier": "/catch/"}


def webhook(rng: random.Random) -> Made:
    style = rng.choice(("slack", "discord", "teams", "zapier"))
    upper = string.ascii_uppercase + string.digits
    if style == "slack":
        url = f"https://hooks.slack.com/services/T{pick(rng, upper, rng.randint(8, 10))}/" \
              f"B{pick(rng, upper, rng.randint(8, 10))}/{pick(rng, B62, 24)}"
    elif style == "discord":
        url = f"https://{rng.choice(('discord.com', 'discordapp.com'))}/api/webhooks/" \
              f"{rng.randint(10**17, 2 * 10**18)}/{pick(rng, B64URL, 68)}"
    elif style == "teams":
        url = f"https://{rng.choice(WORDS)}corp.webhook.office.com/webhookb2/{guid(rng)}@{guid(rng)}" \
              f"/IncomingWebhook/{pick(rng, HEX, 32)}/{guid(rng)}"
    else:
        url = f"https://hooks.zapier.com/hooks/catch/{digits(rng, rng.randint(7, 8))}/" \
              f"{pick(rng, string.ascii_lowercase + string.digits, rng.randint(6, 7))}/"
    return url, url.split(WEBHOOK_PATHS[style], 1)[1], style


DB_HOSTS = ("db.internal", "pg-primary.support.svc.cluster.local", "mysql-0.mysql", "rabbitmq.queue.svc",
            "prod-db-1.c9akciq32lfo.eu-west-1.rds.amazonaws.com", "cache-01.internal", "10.12.4.7")


def db_url(rng: random.Random) -> Made:
    style = rng.choice(("postgres", "mysql", "mongodb_srv", "redis", "amqp", "jdbc", "adonet"))
    pw, host = url_password(rng), rng.choice(DB_HOSTS)
    user, db = rng.choice(("app", "support_rw", "svc_billing", "admin", "readonly")), rng.choice(("crm", "tickets"))
    written = {
        "postgres": f"{rng.choice(('postgres', 'postgresql'))}://{user}:{pw}@{host}:5432/{db}?sslmode=require",
        "mysql": f"mysql://{user}:{pw}@{host}:3306/{db}",
        "mongodb_srv": f"mongodb+srv://{user}:{pw}@cluster0.{pick(rng, string.ascii_lowercase, 5)}.mongodb.net/"
                       f"{db}?retryWrites=true&w=majority",
        "redis": rng.choice((f"redis://default:{pw}@{host}:6379/0", f"rediss://:{pw}@{host}:6380")),
        "amqp": f"{rng.choice(('amqp', 'amqps'))}://{user}:{pw}@{host}:5671/%2F",
        "jdbc": rng.choice((f"jdbc:postgresql://{host}:5432/{db}?user={user}&password={pw}&ssl=true",
                            f"jdbc:sqlserver://{host}:1433;databaseName={db};user={user};password={pw};"
                            "encrypt=true")),
        "adonet": f"Server=tcp:{host},1433;Initial Catalog={db};User ID={user};Password={pw};Encrypt=True;",
    }[style]
    return written, pw, style


def email(rng: random.Random) -> Made:
    style = rng.choice(("plain", "upper", "mixed", "plus_tag", "subdomain", "idn", "header_angle", "mailto",
                        "percent", "json_u0040", "go_u003c"))
    addr = email_address(rng).encode("ascii", "ignore").decode() if style != "idn" else email_address(rng)
    if style == "idn":
        addr = addr.split("@")[0] + "@" + rng.choice(("bücher-shop.de", "correo.españa.es", "例え.jp", "société.fr"))
    if style == "upper":
        addr = addr.upper()
    elif style == "mixed":
        addr = addr[0].upper() + addr[1:addr.index(".")] + "." + addr[addr.index(".") + 1:].capitalize()
    elif style == "plus_tag":
        addr = addr.replace("@", f"+{rng.choice(('support', 'orders', 'spam', 'amazon'))}@")
    elif style == "subdomain":
        addr = addr.split("@")[0] + "@" + rng.choice(("eu.", "mail.", "staff.")) + addr.split("@")[1]
    name = f"{rng.choice(FIRST).capitalize()} {rng.choice(LAST).capitalize()}"
    if style == "header_angle":
        return f'"{name}" <{addr}>', addr, style
    if style == "mailto":
        return f"[{name}](mailto:{addr})", addr, style
    if style == "percent":
        written = addr.replace("@", "%40").replace("+", "%2B")
        return written, written, style
    if style == "json_u0040":
        written = addr.replace("@", "\\u0040")
        return written, written, style
    if style == "go_u003c":
        return f"{name} \\u003c{addr}\\u003e", addr, style
    return addr, addr, style


def email_obfuscated(rng: random.Random) -> Made:
    local, domain = email_address(rng).encode("ascii", "ignore").decode().split("@")
    host, tld = domain.rsplit(".", 1)
    style = rng.choice(("brackets", "parens", "words", "braces", "html_entity", "caps_words"))
    written = {"brackets": f"{local} [at] {host} [dot] {tld}", "parens": f"{local}(at){domain}",
               "words": f"{local} at {host} dot {tld}", "braces": f"{local}{{at}}{host}{{dot}}{tld}",
               "html_entity": f"{local}&#64;{domain}", "caps_words": f"{local} AT {host} DOT {tld}"}[style]
    return written, written, style


def ssn(rng: random.Random) -> Made:
    area = rng.choice([a for a in range(1, 900) if a != 666])
    number = f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
    style = rng.choice(("dashed", "spaced", "compact"))
    sep = {"dashed": "-", "spaced": " ", "compact": ""}[style]
    written = f"{number[:3]}{sep}{number[3:5]}{sep}{number[5:]}"
    return written, written, style


CARD_SCHEMES: tuple[tuple[str, Callable[[random.Random], str], tuple[int, ...]], ...] = (
    ("visa", lambda r: "4", (16, 16, 13, 19)),
    ("mastercard", lambda r: r.choice((str(r.randint(51, 55)), str(r.randint(2221, 2720)))), (16,)),
    ("amex", lambda r: r.choice(("34", "37")), (15,)),
    ("discover", lambda r: r.choice(("6011", str(r.randint(644, 649)), "65")), (16, 19)),
    ("jcb", lambda r: str(r.randint(3528, 3589)), (16,)),
    ("diners", lambda r: r.choice((str(r.randint(300, 305)), "36", "38")), (14,)),
    ("unionpay", lambda r: "62" + str(r.randint(2126, 2925)), (16, 19)),
    ("maestro", lambda r: r.choice(("5018", "5020", "5038", "6304", "6759", "6761", "6763")), (12, 16, 19)),
    ("mir", lambda r: str(r.randint(2200, 2204)), (16,)),
)


def card_number(rng: random.Random) -> tuple[str, str]:
    scheme, prefix, lengths = rng.choice(CARD_SCHEMES)
    head = prefix(rng)
    n = rng.choice(lengths)
    partial = head + digits(rng, n - len(head) - 1)
    return partial + luhn_digit(partial), scheme


def card(rng: random.Random) -> Made:
    number, scheme = card_number(rng)
    style = rng.choice(("space", "dash", "dot", "underscore", "compact", "ocr"))
    if style == "ocr":
        cut = sorted(rng.sample(range(2, len(number) - 1), 3))
        written = " ".join(number[a:b] for a, b in zip([0] + cut, cut + [len(number)], strict=True))
    else:
        sep = {"space": " ", "dash": "-", "dot": ".", "underscore": "_", "compact": ""}[style]
        written = group_card(number, sep)
    return written, written, f"{scheme}_{style}"


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c", "NL": "4a10n",
             "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "PT": "4n4n11n2n", "SE": "3n16n1n",
             "NO": "4n6n1n", "DK": "4n9n1n", "FI": "3n11n", "IE": "4a6n8n", "LU": "3n13c", "CZ": "4n6n10n",
             "RO": "4a16c", "GR": "3n4n16c", "BR": "8n5n10n1a1c", "TR": "5n1n16c", "SA": "2n18c", "AE": "3n16n",
             "HR": "7n10n", "LT": "5n11n", "EE": "2n2n11n1n", "MT": "4a5n18c", "HU": "3n4n1n15n1n", "SK": "4n6n10n",
             "BG": "4a4n2n8c", "IL": "3n3n13n", "CY": "3n5n16c", "SI": "5n8n2n"}


def iban_value(rng: random.Random) -> str:
    country = rng.choice(sorted(IBAN_BBAN))
    body = bban(rng, IBAN_BBAN[country], pick)
    return f"{country}{iban_check(country, body)}{body}"


def iban(rng: random.Random) -> Made:
    value = iban_value(rng)
    style = rng.choice(("print", "compact", "lower_compact", "lower_print", "dashes"))
    grouped = group(value, 4, " ")
    written = {"print": grouped, "compact": value, "lower_compact": value.lower(), "lower_print": grouped.lower(),
               "dashes": grouped.replace(" ", "-")}[style]
    return written, written, f"{value[:2]}_{style}"


# Phones: national numbering plans, national and international forms. Each returns (written, style).

def nanp(rng: random.Random) -> tuple[str, str]:
    npa = rng.choice((201, 202, 212, 213, 305, 312, 415, 503, 512, 617, 646, 702, 713, 718, 773, 818, 917, 972,
                      416, 514, 604, 647, 778, 905))
    nxx = rng.choice([n for n in range(200, 1000) if n % 100 != 11])
    line = digits(rng, 4)
    style = rng.choice(("parens", "dashes", "dots", "e164_spaces", "one_dash", "compact"))
    return {"parens": f"({npa}) {nxx}-{line}", "dashes": f"{npa}-{nxx}-{line}", "dots": f"{npa}.{nxx}.{line}",
            "e164_spaces": f"+1 {npa} {nxx} {line}", "one_dash": f"1-{npa}-{nxx}-{line}",
            "compact": f"{npa}{nxx}{line}"}[style], style


def uk(rng: random.Random) -> tuple[str, str]:
    style = rng.choice(("mobile", "mobile_intl", "london", "london_intl0", "city", "mobile_dashes"))
    mob = "7" + rng.choice("1234579") + digits(rng, 8)
    london = rng.choice("378") + digits(rng, 7)
    city = rng.choice(("121", "161", "131", "113", "117"))
    return {"mobile": f"0{mob[:4]} {mob[4:]}", "mobile_intl": f"+44 {mob[:4]} {mob[4:]}",
            "london": f"020 {london[:4]} {london[4:]}", "london_intl0": f"+44 (0)20 {london[:4]} {london[4:]}",
            "city": f"0{city} {digits(rng, 3)} {digits(rng, 4)}",
            "mobile_dashes": f"0{mob[:4]}-{mob[4:7]}-{mob[7:]}"}[style], style


def fr(rng: random.Random) -> tuple[str, str]:
    n = rng.choice("1234567 9".replace(" ", "")) + digits(rng, 8)
    pairs = " ".join(n[i:i + 2] for i in range(1, 9, 2))
    style = rng.choice(("national", "intl", "intl_0", "dots", "compact", "00"))
    return {"national": f"0{n[0]} {pairs}", "intl": f"+33 {n[0]} {pairs}", "intl_0": f"+33 (0){n[0]} {pairs}",
            "dots": f"0{n[0]}.{pairs.replace(' ', '.')}", "compact": f"0{n}", "00": f"0033 {n[0]} {pairs}"}[style], \
        style


def de(rng: random.Random) -> tuple[str, str]:
    mobile = rng.choice(("151", "152", "157", "159", "160", "162", "163", "170", "171", "172", "173", "175", "176",
                         "177", "178", "179")) + digits(rng, rng.choice((7, 8)))
    city = rng.choice(("30", "89", "40", "69", "221", "711")) + digits(rng, rng.choice((6, 7)))
    cut = 2 if city[:2] in ("30", "89", "40", "69") else 3
    style = rng.choice(("mobile", "mobile_intl", "mobile_slash", "city", "city_intl", "city_parens", "intl_0"))
    return {"mobile": f"0{mobile[:3]} {mobile[3:]}", "mobile_intl": f"+49 {mobile[:3]} {mobile[3:]}",
            "mobile_slash": f"0{mobile[:3]}/{mobile[3:]}", "city": f"0{city[:cut]} {city[cut:]}",
            "city_intl": f"+49 {city[:cut]} {city[cut:]}", "city_parens": f"(0{city[:cut]}) {city[cut:]}",
            "intl_0": f"+49 (0){mobile[:3]} {mobile[3:7]} {mobile[7:]}"}[style], style


def india(rng: random.Random) -> tuple[str, str]:
    m = rng.choice("6789") + digits(rng, 9)
    style = rng.choice(("intl_split", "intl_dash", "zero", "split", "landline", "landline_intl"))
    return {"intl_split": f"+91 {m[:5]} {m[5:]}", "intl_dash": f"+91-{m}", "zero": f"0{m[:5]} {m[5:]}",
            "split": f"{m[:5]} {m[5:]}", "landline": f"0{rng.choice(('11', '22', '80', '44'))}-{digits(rng, 4)} "
            f"{digits(rng, 4)}", "landline_intl": f"+91 {rng.choice(('11', '22', '33'))} {digits(rng, 4)} "
            f"{digits(rng, 4)}"}[style], style


def au(rng: random.Random) -> tuple[str, str]:
    m = "4" + digits(rng, 8)
    style = rng.choice(("mobile", "mobile_intl", "landline", "landline_intl"))
    area = rng.choice("2378")
    return {"mobile": f"0{m[:3]} {m[3:6]} {m[6:]}", "mobile_intl": f"+61 {m[:3]} {m[3:6]} {m[6:]}",
            "landline": f"(0{area}) {digits(rng, 4)} {digits(rng, 4)}",
            "landline_intl": f"+61 {area} {digits(rng, 4)} {digits(rng, 4)}"}[style], style


BR_DDD = (11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 24, 27, 28, 31, 32, 33, 34, 35, 37, 38, 41, 42, 43, 44, 45, 46,
          47, 48, 49, 51, 53, 54, 55, 61, 62, 63, 64, 65, 66, 67, 68, 69, 71, 73, 74, 75, 77, 79, 81, 82, 83, 84, 85,
          86, 87, 88, 89, 91, 92, 93, 94, 95, 96, 97, 98, 99)


def br(rng: random.Random) -> tuple[str, str]:
    ddd, m = rng.choice(BR_DDD), "9" + digits(rng, 8)
    style = rng.choice(("national", "intl", "intl_parens", "compact", "landline"))
    return {"national": f"({ddd}) {m[:5]}-{m[5:]}", "intl": f"+55 {ddd} {m[:5]}-{m[5:]}",
            "intl_parens": f"+55 ({ddd}) {m[0]} {m[1:5]}-{m[5:]}", "compact": f"{ddd}{m}",
            "landline": f"({ddd}) {rng.choice('2345')}{digits(rng, 3)}-{digits(rng, 4)}"}[style], style


def es(rng: random.Random) -> tuple[str, str]:
    m = rng.choice(("6", "71", "72", "73", "74"))
    m += digits(rng, 9 - len(m))
    land = rng.choice(("91", "93", "96", "95")) + digits(rng, 7)
    style = rng.choice(("mobile", "mobile_intl", "mobile_pairs", "00", "landline", "landline_intl"))
    return {"mobile": f"{m[:3]} {m[3:6]} {m[6:]}", "mobile_intl": f"+34 {m[:3]} {m[3:6]} {m[6:]}",
            "mobile_pairs": f"+34 {m[:3]} {m[3:5]} {m[5:7]} {m[7:]}", "00": f"0034 {m}",
            "landline": f"{land[:2]} {land[2:5]} {land[5:7]} {land[7:]}",
            "landline_intl": f"+34 {land[:2]} {land[2:5]} {land[5:7]} {land[7:]}"}[style], style


def it(rng: random.Random) -> tuple[str, str]:
    m = "3" + rng.choice("123456789") + digits(rng, 8)
    style = rng.choice(("mobile", "mobile_intl", "mobile_compact", "mobile_dash", "rome", "milan_intl"))
    return {"mobile": f"{m[:3]} {m[3:6]} {m[6:]}", "mobile_intl": f"+39 {m[:3]} {m[3:6]} {m[6:]}",
            "mobile_compact": f"+39 {m}", "mobile_dash": f"{m[:3]}-{m[3:]}",
            "rome": f"06 {digits(rng, 4)} {digits(rng, 4)}", "milan_intl": f"+39 02 {digits(rng, 4)} {digits(rng, 4)}"
            }[style], style


def jp(rng: random.Random) -> tuple[str, str]:
    pre, a, b = rng.choice(("90", "80", "70")), digits(rng, 4), digits(rng, 4)
    style = rng.choice(("mobile", "mobile_intl", "mobile_compact", "tokyo", "osaka_intl", "nagoya"))
    return {"mobile": f"0{pre}-{a}-{b}", "mobile_intl": f"+81 {pre}-{a}-{b}", "mobile_compact": f"0{pre}{a}{b}",
            "tokyo": f"03-{a}-{b}", "osaka_intl": f"+81 6-{a}-{b}", "nagoya": f"052-{a[:3]}-{b}"}[style], style


def mx(rng: random.Random) -> tuple[str, str]:
    area = rng.choice(("55", "33", "81", "222", "664", "998"))
    rest = digits(rng, 10 - len(area))
    split = f"{rest[:4]} {rest[4:]}" if len(area) == 2 else f"{rest[:3]} {rest[3:]}"
    style = rng.choice(("national", "intl", "intl_1", "parens", "compact"))
    return {"national": f"{area} {split}", "intl": f"+52 {area} {split}", "intl_1": f"+52 1 {area} {split}",
            "parens": f"({area}) {split}", "compact": f"{area}{rest}"}[style], style


def nl(rng: random.Random) -> tuple[str, str]:
    m = digits(rng, 8)
    city = rng.choice(("20", "10", "30", "70"))
    style = rng.choice(("mobile_dash", "mobile_space", "mobile_intl", "intl_0", "city", "city_intl"))
    return {"mobile_dash": f"06-{m}", "mobile_space": f"06 {m[:4]} {m[4:]}", "mobile_intl": f"+31 6 {m}",
            "intl_0": f"+31 (0)6 {m[:4]} {m[4:]}", "city": f"0{city}-{m[:3]} {m[3:7]}",
            "city_intl": f"+31 {city} {m[:3]} {m[3:7]}"}[style], style


def se(rng: random.Random) -> tuple[str, str]:
    pre, n = rng.choice(("70", "72", "73", "76", "79")), digits(rng, 7)
    style = rng.choice(("mobile", "mobile_intl", "intl_0", "compact", "stockholm", "gothenburg"))
    return {"mobile": f"0{pre}-{n[:3]} {n[3:5]} {n[5:]}", "mobile_intl": f"+46 {pre} {n[:3]} {n[3:5]} {n[5:]}",
            "intl_0": f"+46 (0){pre} {n[:3]} {n[3:5]} {n[5:]}", "compact": f"0{pre}{n}",
            "stockholm": f"08-{n[:3]} {n[3:6]} {digits(rng, 2)}", "gothenburg": f"031-{n[:3]} {n[3:5]} {n[5:]}"
            }[style], style


def pl(rng: random.Random) -> tuple[str, str]:
    m = rng.choice("5678") + digits(rng, 8)
    style = rng.choice(("mobile", "mobile_intl", "mobile_dash", "compact", "landline"))
    return {"mobile": f"{m[:3]} {m[3:6]} {m[6:]}", "mobile_intl": f"+48 {m[:3]} {m[3:6]} {m[6:]}",
            "mobile_dash": f"+48 {m[:3]}-{m[3:6]}-{m[6:]}", "compact": m,
            "landline": f"{rng.choice(('22', '12', '61', '71'))} {digits(rng, 3)} {digits(rng, 2)} {digits(rng, 2)}"
            }[style], style


def za(rng: random.Random) -> tuple[str, str]:
    pre = rng.choice(("60", "61", "63", "71", "72", "73", "74", "76", "78", "79", "81", "82", "83", "84"))
    n = digits(rng, 7)
    style = rng.choice(("mobile", "mobile_intl", "intl_0", "compact", "jhb", "cpt_intl"))
    return {"mobile": f"0{pre} {n[:3]} {n[3:]}", "mobile_intl": f"+27 {pre} {n[:3]} {n[3:]}",
            "intl_0": f"+27 (0){pre} {n[:3]} {n[3:]}", "compact": f"0{pre}{n}", "jhb": f"011 {n[:3]} {n[3:]}",
            "cpt_intl": f"+27 21 {n[:3]} {n[3:]}"}[style], style


PHONES: dict[str, tuple[Callable[[random.Random], tuple[str, str]], str]] = {
    "phone_us": (nanp, "en"), "phone_uk": (uk, "en"), "phone_fr": (fr, "fr"), "phone_de": (de, "de"),
    "phone_in": (india, "hi"), "phone_au": (au, "en"), "phone_br": (br, "pt"), "phone_es": (es, "es"),
    "phone_it": (it, "it"), "phone_jp": (jp, "ja"), "phone_mx": (mx, "es"), "phone_nl": (nl, "nl"),
    "phone_se": (se, "sv"), "phone_pl": (pl, "pl"), "phone_za": (za, "en")}


# Keys: DER written from the ASN.1 structures (random integers of the right sizes for RSA).

def der_int(raw: bytes) -> bytes:
    return der(0x02, b"\x00" + raw if raw[0] & 0x80 else raw)


def rsa_pkcs1(rng: random.Random) -> bytes:
    def big(n: int) -> bytes:
        return bytes([rng.randint(0x80, 0xFF)]) + rng.randbytes(n - 1)
    ints = [b"\x00", big(256), b"\x01\x00\x01", big(256)] + [big(128) for _ in range(5)]
    return der(0x30, b"".join(der_int(i) for i in ints))


def openssh_ed25519(rng: random.Random) -> bytes:
    priv, pub, check = rng.randbytes(32), rng.randbytes(32), rng.randbytes(4)
    return openssh_ed25519_blob(priv, pub, check, b"support@bastion")


def pkcs8_rsa(rng: random.Random) -> bytes:
    algorithm = der(0x30, bytes.fromhex("06092a864886f70d0101010500"))
    return der(0x30, der_int(b"\x00") + algorithm + der(0x04, rsa_pkcs1(rng)))


def pem_block(rng: random.Random) -> tuple[str, str, str]:
    """(label, base64 body with its lines joined by newlines, style)."""
    style = rng.choice(("rsa", "pkcs8_rsa", "pkcs8_ed25519", "ec", "openssh"))
    raw, label, width = {
        "rsa": (lambda: rsa_pkcs1(rng), "RSA PRIVATE KEY", 64),
        "pkcs8_rsa": (lambda: pkcs8_rsa(rng), "PRIVATE KEY", 64),
        "pkcs8_ed25519": (lambda: bytes.fromhex("302e020100300506032b657004220420") + rng.randbytes(32),
                          "PRIVATE KEY", 64),
        "ec": (lambda: der(0x30, der_int(b"\x01") + der(0x04, rng.randbytes(32))
                           + der(0xA0, bytes.fromhex("06082a8648ce3d030107"))), "EC PRIVATE KEY", 64),
        "openssh": (lambda: openssh_ed25519(rng), "OPENSSH PRIVATE KEY", 70),
    }[style]
    text = base64.b64encode(raw()).decode()
    return label, "\n".join(text[i:i + width] for i in range(0, len(text), width)), style


def jwt(rng: random.Random) -> Made:
    alg = rng.choice(("HS256", "RS256", "ES256"))
    header = {"alg": alg, "typ": "JWT"} | ({"kid": pick(rng, B64URL, 16)} if alg != "HS256" else {})
    iat = epoch_ms(rng) // 1000
    claims = {"sub": guid(rng), "iss": rng.choice(("https://auth.acme-support.io/", "https://login.example.eu")),
              "aud": "support-api", "iat": iat, "exp": iat + 3600, "scope": "tickets:read tickets:write"}
    signing = f"{b64url(json.dumps(header, separators=(',', ':')).encode())}." \
              f"{b64url(json.dumps(claims, separators=(',', ':')).encode())}"
    if alg == "HS256":
        sig = hmac.new(rng.randbytes(32), signing.encode(), hashlib.sha256).digest()
    else:
        sig = rng.randbytes(256 if alg == "RS256" else 64)
    value = f"{signing}.{b64url(sig)}"
    return value, value, alg


ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
BIDI = ("\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069")
NBSPS = ("\u00a0", "\u202f", "\u2007")


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def insert(rng: random.Random, text: str, chars: tuple[str, ...], n: int) -> str:
    for _ in range(n):
        at = rng.randint(3, len(text) - 3)
        text = text[:at] + rng.choice(chars) + text[at:]
    return text


def disguised(rng: random.Random) -> Made:
    base = rng.choice(("email", "card", "iban", "phone_uk", "github", "openai", "aws_key_id"))
    plain = {"email": lambda: email_address(rng).encode("ascii", "ignore").decode(),
             "card": lambda: group_card(card_number(rng)[0], " "),
             "iban": lambda: group(iban_value(rng), 4, " "),
             "phone_uk": lambda: "+44 " + uk(rng)[0].lstrip("0").replace("+44 ", "").replace("(0)", "").strip(),
             "github": lambda: crc_token(rng, "ghp_", pick), "openai": lambda: openai(rng)[0],
             "aws_key_id": lambda: aws_pair(rng)[0]}[base]()
    methods = ["zero_width", "fullwidth", "bidi", "soft_hyphen"] + ["nbsp"] * (" " in plain)
    method = rng.choice(methods)
    written = {"zero_width": lambda: insert(rng, plain, ZERO_WIDTH, rng.randint(1, 2)),
               "fullwidth": lambda: fullwidth(plain),
               "bidi": lambda: insert(rng, plain, BIDI, 2),
               "soft_hyphen": lambda: insert(rng, plain, ("\u00ad",), rng.randint(1, 2)),
               "nbsp": lambda: plain.replace(" ", rng.choice(NBSPS))}[method]()
    return written, written, f"{base}_{method}"


def wrapped(rng: random.Random) -> Made:
    base = rng.choice(("openai", "anthropic", "jwt", "sendgrid", "webhook", "iban", "github_pat"))
    value = {"openai": lambda: openai(rng)[0], "anthropic": lambda: anthropic(rng)[0], "jwt": lambda: jwt(rng)[0],
             "sendgrid": lambda: sendgrid(rng)[0], "webhook": lambda: webhook(rng)[0],
             "iban": lambda: group(iban_value(rng), 4, " "),
             "github_pat": lambda: "github_pat_" + pick(rng, B62, 22) + "_" + pick(rng, B62, 59)}[base]()
    # A webhook's secret is its path (see webhook()); the fixed part of the URL stays unbroken before it.
    fixed = next((value[:value.index(p) + len(p)] for p in WEBHOOK_PATHS.values() if p in value), "") \
        if base == "webhook" else ""
    value = value[len(fixed):]
    style = rng.choice(("newline", "indent", "shell", "quoted_printable"))
    at = rng.randint(len(value) // 3, 2 * len(value) // 3)
    brk = {"newline": "\n", "indent": "\n    ", "shell": "\\\n  ", "quoted_printable": "=\n"}[style]
    secret = value[:at] + brk + value[at:]
    return fixed + secret, secret, f"{base}_{style}"


# Carriers: each writes a slot's value into a shape production logs hold; (carried, is_json).

Carrier = Callable[[random.Random, Slot], tuple[str, bool]]
GREET = {"en": ("Hi, ", ", can you check please?"), "de": ("Hallo, ", ". Danke im Voraus!"),
         "fr": ("Bonjour, ", ". Merci d'avance."), "es": ("Hola, ", ". ¡Gracias!"), "it": ("Buongiorno, ", ". Grazie."),
         "ja": ("こんにちは。", " です。よろしくお願いします。"), "pt": ("Olá, ", ". Obrigado!"),
         "hi": ("Namaste ji, ", " hai, jaldi check karo please."), "nl": ("Hoi, ", ". Alvast bedankt!"),
         "sv": ("Hej, ", ". Tack på förhand!"), "pl": ("Dzień dobry, ", ". Dziękuję!")}
SERVICES = ("support-api", "billing-worker", "crm-sync", "agent-runtime", "notify")


def dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def c_dotenv(rng: random.Random, s: Slot) -> tuple[str, bool]:
    quote = rng.choice(('"', "'", ""))
    return f"# {rng.choice(SERVICES)}\nAPP_ENV=production\n{s.env}={quote}{s.written}{quote}\nLOG_LEVEL=info\n", False


def c_compose(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return (f"services:\n  api:\n    image: ghcr.io/acme/{rng.choice(SERVICES)}:2.14.3\n    environment:\n"
            f"      - PORT=8080\n      - {s.env}={s.written}\n"), False


def c_k8s(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {rng.choice(SERVICES)}\n  namespace: support\n"
            f"type: Opaque\nstringData:\n  {s.key}: \"{s.written}\"\n"), False


def c_helm(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return f"{rng.choice(SERVICES)}:\n  replicaCount: 2\n  config:\n    {s.key}: '{s.written}'\n", False


def c_terraform(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return (f'resource "kubernetes_secret" "{rng.choice(SERVICES).replace("-", "_")}" {{\n  data = {{\n'
            f'    {s.key} = "{s.written}"\n  }}\n}}\n'), False


def c_structlog(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return dumps({"event": rng.choice(("customer.updated", "auth.failed", "config.loaded", "request.sent")),
                  s.key: s.written, "level": "info", "logger": "support.app", "timestamp": stamp(rng)}), False


def c_pino(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return dumps({"level": 30, "time": epoch_ms(rng), "pid": rng.randint(7, 9999), "hostname": "api-7f9c8d6b5-x2x9z",
                  "req": {"id": rng.randint(1, 9999), "method": "POST", "url": "/v1/tickets"},
                  s.key: s.written, "msg": "request completed"}), True


def c_zap(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return dumps({"level": "warn", "ts": epoch_ms(rng) / 1000, "caller": "support/handler.go:88",
                  "msg": f"{s.say} {s.written}", "service": rng.choice(SERVICES)}), True


def c_logback(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return dumps({"@timestamp": stamp(rng), "@version": "1", "message": f"{s.key}={s.written} rejected by upstream",
                  "logger_name": "com.acme.support.CustomerService", "thread_name": "http-nio-8080-exec-3",
                  "level": "ERROR", "level_value": 40000}), False


def c_winston(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return dumps({"level": "info", "message": f"{s.say} {s.written}", "service": "support-bot",
                  "timestamp": stamp(rng)}), False


def c_tool_call(rng: random.Random, s: Slot) -> tuple[str, bool]:
    args = dumps({"customer_id": f"cus_{pick(rng, B62, 14)}", s.key: s.written, "reason": "customer request"})
    return dumps({"id": f"call_{pick(rng, B62, 24)}", "type": "function",
                  "function": {"name": rng.choice(("update_customer", "save_credentials", "create_ticket")),
                               "arguments": args}}), True


def c_tool_use(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return dumps({"type": "tool_use", "id": f"toolu_01{pick(rng, B62, 22)}", "name": "lookup_account",
                  "input": {s.key: s.written, "include_history": True}}), True


def c_tool_result(rng: random.Random, s: Slot) -> tuple[str, bool]:
    content = dumps({"status": "ok", "record": {"id": rng.randint(1000, 99999), s.key: s.written}})
    return dumps({"role": "tool", "tool_call_id": f"call_{pick(rng, B62, 24)}", "content": content}), True


def c_chat(rng: random.Random, s: Slot) -> tuple[str, bool]:
    greet, tail = GREET[s.lang]
    return f"{greet}{s.say} {s.written}{tail}", False


def c_csv(rng: random.Random, s: Slot) -> tuple[str, bool]:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["ticket_id", "created_at", s.key, "status"])
    writer.writerow([f"SUP-{rng.randint(1000, 99999)}", stamp(rng), s.written, rng.choice(("open", "solved"))])
    return out.getvalue(), False


def c_email(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return (f"From: Support <support@acme-support.io>\nSubject: Re: [#{rng.randint(10000, 99999)}] your request\n"
            f"Date: Tue, 11 Mar 2025 09:14:02 +0100\n\n> {s.say} {s.written}\n\nThanks, noted.\n-- \n"
            "Acme Support Team\n"), False


def c_markdown(rng: random.Random, s: Slot) -> tuple[str, bool]:
    if rng.random() < 0.5:
        return f"The failing config is `{s.env}={s.written}`, see the log above.", False
    return f"I ran this:\n\n```\nexport {s.env}='{s.written}'\n./deploy.sh --env prod\n```\n", False


def c_ocr(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return f"F0RM  SR-{rng.randint(10, 99)}   Page 1 / 2\n{s.say}  :    {s.written}     |  Sig n ature ______\n", False


def c_stack(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return ("Traceback (most recent call last):\n  File \"/app/support/handlers.py\", line 214, in update\n"
            "    client.save(payload)\n  File \"/app/support/client.py\", line 88, in save\n"
            f"    raise ValidationError(f\"bad {{field}}: {{value}}\")\n"
            f"support.errors.ValidationError: bad {s.key}: {s.written}\n"), False


def c_http(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return (f"POST /v2/customers/{rng.randint(1000, 99999)} HTTP/1.1\nHost: api.acme-support.io\n"
            f"User-Agent: python-httpx/0.27.0\nContent-Type: application/x-www-form-urlencoded\n\n"
            f"{s.key}={s.written}&notify=true\n"), False


GENERIC: dict[str, Carrier] = {
    "dotenv": c_dotenv, "compose": c_compose, "k8s": c_k8s, "helm": c_helm, "terraform": c_terraform,
    "structlog": c_structlog, "pino": c_pino, "zap": c_zap, "logback": c_logback, "winston": c_winston,
    "tool_call": c_tool_call, "tool_use": c_tool_use, "tool_result": c_tool_result, "chat": c_chat, "csv": c_csv,
    "email": c_email, "markdown": c_markdown, "ocr": c_ocr, "stack": c_stack, "http": c_http}


def c_cli(rng: random.Random, s: Slot) -> tuple[str, bool]:
    tool = rng.choice(("./support-admin login", "mysql -h db.internal -u app", "keytool -importkeystore",
                       "redis-cli -h cache-01.internal"))
    return f"$ {tool} --{s.key.replace('_', '-').lower()} '{s.written}'\nerror: access denied\n", False


def c_properties(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return f"spring.profiles.active=prod\nserver.port=8080\n{s.key}={s.written}\n", False


def c_psycopg(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return ("Traceback (most recent call last):\n  File \"/app/support/db.py\", line 12, in <module>\n"
            f"    engine = create_engine(\"{s.written}\")\n"
            "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at \"db.internal\", "
            "port 5432 failed: FATAL:  password authentication failed for user \"app\"\n"), False


def c_celery(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return (f"[{stamp(rng)}: ERROR/MainProcess] consumer: Cannot connect to {s.written}: [Errno 111] "
            "Connection refused.\nTrying again in 4.00 seconds... (2/100)\n"), False


def c_npmrc(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return f"@acme:registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={s.written}\n", False


def c_python_code(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return f"```python\nclient = Client({s.key.lower()}=\"{s.written}\")\nprint(client.whoami())\n```", False


def auth_header(s: Slot) -> str:
    return {"bearer": f"Authorization: Bearer {s.written}", "basic": f"Authorization: Basic {s.written}",
            "x_api_key": f"X-Api-Key: {s.written}", "cookie": f"Cookie: session={s.written}; _ga=GA1.2.4411.1733",
            "query": f"X-Forwarded-Proto: https\nReferer: https://app.acme-support.io/x?access_token={s.written}"
            }[s.style]


def h_dump(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return f"GET /v1/tickets?page=2 HTTP/1.1\nHost: api.acme-support.io\n{auth_header(s)}\nAccept: */*\n", False


def h_curl(rng: random.Random, s: Slot) -> tuple[str, bool]:
    header = auth_header(s).splitlines()[-1]
    if s.style == "query":
        return f"curl -s 'https://api.acme-support.io/v1/export?format=csv&api_key={s.written}'", False
    return f"curl -sS -X POST https://api.acme-support.io/v1/tickets -H '{header}' -d @ticket.json", False


def h_har(rng: random.Random, s: Slot) -> tuple[str, bool]:
    name, _, value = auth_header(s).splitlines()[-1].partition(": ")
    return dumps({"request": {"method": "GET", "url": "https://api.acme-support.io/v1/me",
                              "headers": [{"name": "Accept", "value": "application/json"},
                                          {"name": name, "value": value}]}}), True


def h_nginx(rng: random.Random, s: Slot) -> tuple[str, bool]:
    line = auth_header(s).splitlines()[-1]
    return (f'10.0.3.7 - - [11/Mar/2025:09:14:02 +0000] "GET /v1/export?user=42 HTTP/1.1" 401 63 "-" '
            f'"okhttp/4.12.0" "{line}"'), False


def h_requests(rng: random.Random, s: Slot) -> tuple[str, bool]:
    name, _, value = auth_header(s).splitlines()[-1].partition(": ")
    return (f"DEBUG:urllib3.connectionpool:https://api.acme-support.io:443 \"GET /v1/me HTTP/1.1\" 401 None\n"
            f"request headers: {{'User-Agent': 'python-requests/2.32.3', '{name}': '{value}'}}\n"), False


def h_axios(rng: random.Random, s: Slot) -> tuple[str, bool]:
    name, _, value = auth_header(s).splitlines()[-1].partition(": ")
    return dumps({"level": "error", "message": "Request failed with status code 403",
                  "config": {"method": "get", "url": "/v1/me", "headers": {name: value}}}), False


def h_zap(rng: random.Random, s: Slot) -> tuple[str, bool]:
    name, _, value = auth_header(s).splitlines()[-1].partition(": ")
    return dumps({"level": "debug", "ts": epoch_ms(rng) / 1000, "msg": "outbound request",
                  "headers": {name: [value]}}), True


def h_chat(rng: random.Random, s: Slot) -> tuple[str, bool]:
    return f"I keep getting 401 even though I send `{auth_header(s).splitlines()[-1]}`, what am I doing wrong?", False


HTTP_CARRIERS: dict[str, Carrier] = {"http": h_dump, "curl": h_curl, "har": h_har, "nginx": h_nginx,
                                     "requests": h_requests, "axios": h_axios, "zap": h_zap, "chat": h_chat}
EXTRA: dict[str, Carrier] = {"cli": c_cli, "properties": c_properties, "psycopg": c_psycopg, "celery": c_celery,
                             "npmrc": c_npmrc, "python": c_python_code}


def aws_texts(rng: random.Random, key_id: str, secret: str) -> dict[str, tuple[str, bool]]:
    """The AWS carriers, each holding both halves of a key pair."""
    return {
        "credentials": (f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\n"
                        "region = eu-west-1\n", False),
        "env": (f"export AWS_ACCESS_KEY_ID={key_id}\nexport AWS_SECRET_ACCESS_KEY={secret}\n", False),
        "sts_json": (dumps({"Credentials": {"AccessKeyId": key_id, "SecretAccessKey": secret,
                                            "SessionToken": "IQoJb3JpZ2luX2VjE" + pick(rng, B64, 60),
                                            "Expiration": stamp(rng)}}), True),
        "boto_stack": ("Traceback (most recent call last):\n  File \"/app/export.py\", line 9, in <module>\n"
                       f"    s3 = boto3.client(\"s3\", aws_access_key_id=\"{key_id}\", "
                       f"aws_secret_access_key=\"{secret}\")\nbotocore.exceptions.ClientError: An error occurred "
                       "(SignatureDoesNotMatch) when calling the ListObjectsV2 operation\n", False),
        "iam_csv": ("User name,Password,Access key ID,Secret access key,Console login link\n"
                    f"support-bot,,{key_id},{secret},https://123456789012.signin.aws.amazon.com/console\n", False),
        "terraform": (f'provider "aws" {{\n  region     = "eu-west-1"\n  access_key = "{key_id}"\n'
                      f'  secret_key = "{secret}"\n}}\n', False),
        "tool_call": (dumps({"id": f"call_{pick(rng, B62, 24)}", "type": "function", "function": {
            "name": "configure_s3_export", "arguments": dumps({"aws_access_key_id": key_id,
                                                               "aws_secret_access_key": secret})}}), True),
        "chat": (f"Hola, las claves son {key_id} y {secret}, ¿por qué falla la exportación?", False),
        "k8s": (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: s3-export\nstringData:\n  AWS_ACCESS_KEY_ID: "
                f"{key_id}\n  AWS_SECRET_ACCESS_KEY: {secret}\n", False),
    }


def pem_texts(rng: random.Random, label: str, body: str) -> dict[str, tuple[str, str, bool]]:
    """The PEM carriers: (carried, the body as written there, is_json)."""
    block = f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"
    indented = body.replace("\n", "\n    ")
    escaped = body.replace("\n", "\\n")
    return {
        "chat_fence": (f"this is the key on the bastion, is it the right one?\n```\n{block}\n```", body, False),
        "k8s": (f"apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\nstringData:\n  tls.key: |\n    "
                f"{block.replace(chr(10), chr(10) + '    ')}\n", indented, False),
        "env": (f"SSH_PRIVATE_KEY=\"-----BEGIN {label}-----\\n{escaped}\\n-----END {label}-----\\n\"\n", escaped,
                False),
        "tool_result": (dumps({"role": "tool", "name": "read_file", "content": block}), body, True),
        "terraform": (f"resource \"tls_private_key\" \"imported\" {{\n  private_key_pem = <<EOT\n{block}\nEOT\n}}\n",
                      body, False),
        "structlog": (dumps({"event": "deploy.key_loaded", "key": block, "level": "debug"}), body, False),
        "email": (f"Subject: key for the SFTP drop\n\nHi, as requested:\n\n{block}\n\nBest,\nOps\n", body, False),
        "ansible": (f"sftp_user: exports\nsftp_private_key: |\n  {block.replace(chr(10), chr(10) + '  ')}\n",
                    body.replace("\n", "\n  "), False),
    }


def service_account(rng: random.Random) -> tuple[dict[str, str], str]:
    project = f"{rng.choice(WORDS)}-support-{digits(rng, 6)}"
    text = base64.b64encode(pkcs8_rsa(rng)).decode()
    body = "\n".join(text[i:i + 64] for i in range(0, len(text), 64))
    sa = {"type": "service_account", "project_id": project, "private_key_id": pick(rng, HEX, 40),
          "private_key": f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n",
          "client_email": f"exporter@{project}.iam.gserviceaccount.com", "client_id": digits(rng, 21),
          "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token"}
    return sa, body


def gcp_texts(sa: dict[str, str]) -> dict[str, tuple[str, bool]]:
    pretty, compact = json.dumps(sa, indent=2), json.dumps(sa)
    return {
        "key_file": (pretty, True),
        "chat_fence": (f"the exporter uses this key, can you check its roles?\n```json\n{pretty}\n```", False),
        "env": (f"GOOGLE_CREDENTIALS='{compact}'\n", False),
        "k8s": ("apiVersion: v1\nkind: Secret\nstringData:\n  key.json: |\n    "
                + pretty.replace("\n", "\n    ") + "\n", False),
        "terraform": (f'provider "google" {{\n  credentials = <<EOF\n{pretty}\nEOF\n}}\n', False),
        "python_repr": (f"DEBUG loaded credentials {sa!r}", False),
        "tool_use": (dumps({"type": "tool_use", "id": "toolu_01A", "name": "upload", "input": {"credentials": sa}}),
                     True),
        "ci_log": (f"+ echo \"$GCP_SA_KEY\" > key.json\n+ cat key.json\n{compact}\n+ gcloud auth activate-service-"
                   "account --key-file key.json\n", False),
    }


@dataclass(frozen=True)
class Spec:
    """How a kind is written: its values, field names, phrases by language and carriers."""

    make: Callable[[random.Random], Made]
    keys: tuple[str, ...]
    envs: tuple[str, ...]
    says: dict[str, tuple[str, ...]]
    carriers: tuple[str, ...]


SAY_PHONE = {"en": ("my phone number is", "you can call me on", "mobile:", "reach me on WhatsApp at", "cell"),
             "de": ("meine Telefonnummer ist", "Handy:", "erreichbar unter Tel.", "Tel.:"),
             "fr": ("mon numéro de téléphone est le", "portable :", "vous pouvez m'appeler au", "Tél. :"),
             "es": ("mi teléfono es el", "móvil:", "llámeme al", "Tel.:"),
             "it": ("il mio numero di telefono è", "cellulare:", "potete chiamarmi al", "Tel."),
             "ja": ("電話番号は", "携帯：", "連絡先の電話は", "TEL："),
             "pt": ("meu telefone é", "celular:", "me liga no", "WhatsApp:"),
             "hi": ("mera phone number", "mera mobile no.", "mujhe call karo is number pe:", "WhatsApp number"),
             "nl": ("mijn telefoonnummer is", "bel me op", "mobiel:", "tel."),
             "sv": ("mitt telefonnummer är", "ring mig på", "mobil:", "tel."),
             "pl": ("mój numer telefonu to", "proszę dzwonić pod", "tel. kom.", "telefon:")}
SAY_CARD = {"en": ("my card number is", "card:", "please charge the card"), "de": ("meine Kartennummer ist",
            "Kreditkarte:"), "fr": ("mon numéro de carte est", "carte bancaire :"), "es": ("el número de mi tarjeta es",
            "tarjeta:"), "it": ("il numero della mia carta è", "carta di credito:"), "ja": ("カード番号は",),
            "pt": ("o número do meu cartão é", "cartão:"), "hi": ("mera card number",), "nl": ("mijn kaartnummer is",),
            "pl": ("numer mojej karty to",)}
SAY_IBAN = {"en": ("please refund to IBAN", "my IBAN is"), "de": ("meine IBAN lautet", "bitte auf die IBAN"),
            "fr": ("mon IBAN est", "RIB / IBAN :"), "es": ("mi IBAN es", "cuenta IBAN:"), "it": ("il mio IBAN è",),
            "ja": ("振込先IBAN：",), "pt": ("meu IBAN é",), "hi": ("mera IBAN",), "nl": ("mijn IBAN is",),
            "sv": ("mitt IBAN är",), "pl": ("numer konta IBAN:",)}
SAY_EMAIL = {"en": ("my email is", "send it to", "contact:"), "de": ("meine E-Mail-Adresse ist", "schreiben Sie an"),
             "fr": ("mon adresse e-mail est", "écrivez-moi à"), "es": ("mi correo es", "escríbeme a"),
             "it": ("la mia email è",), "ja": ("メールアドレスは",), "pt": ("meu e-mail é",), "hi": ("mera email",),
             "nl": ("mijn e-mailadres is",), "sv": ("min e-post är",), "pl": ("mój e-mail to",)}
SAY_PASSWORD = {"en": ("my password is", "password:", "I reset it to"), "de": ("mein Passwort ist", "Kennwort:"),
                "fr": ("mon mot de passe est", "mdp :"), "es": ("mi contraseña es", "clave:"),
                "it": ("la mia password è",), "ja": ("パスワードは",), "pt": ("minha senha é", "senha:"),
                "hi": ("mera password",), "pl": ("moje hasło to", "hasło:")}
SAY_SSN = {"en": ("my SSN is", "SSN:", "social security number", "SSN on file"),
           "es": ("mi número de seguro social (SSN) es",)}
SAY_TOKEN = {"en": ("here is the key:", "the token is", "I pasted the API key"), "de": ("unser Token ist",),
             "fr": ("voici la clé :",), "es": ("esta es la clave:",)}
SAY_SECRET = {"en": ("the client secret is", "secret key:", "use this signing secret"),
              "de": ("das Secret ist",), "fr": ("le secret client est",)}
TOKEN_CARRIERS = ("dotenv", "compose", "k8s", "helm", "terraform", "pino", "zap", "tool_call", "tool_use", "chat",
                  "markdown", "stack", "structlog", "python")
PII_CARRIERS = ("chat", "csv", "tool_call", "tool_use", "tool_result", "structlog", "zap", "logback", "email", "ocr",
                "winston")


def token_spec(make: Callable[[random.Random], Made], name: str, extra: tuple[str, ...] = ()) -> Spec:
    return Spec(make, (f"{name}_token", f"{name}ApiKey", "api_key", f"{name}_key"),
                (f"{name.upper()}_TOKEN", f"{name.upper()}_API_KEY", f"{name.upper()}_KEY"), SAY_TOKEN,
                TOKEN_CARRIERS + extra)


SPECS: dict[str, Spec] = {
    "password": Spec(password, ("password", "db_password", "userPassword", "adminPass", "smtp_password", "passwd",
                                "keystore.password", "spring.datasource.password"),
                     ("DB_PASSWORD", "PGPASSWORD", "MYSQL_ROOT_PASSWORD", "REDIS_PASS", "SMTP_PASSWORD",
                      "POSTGRES_PASSWORD", "RABBITMQ_DEFAULT_PASS", "LDAP_BIND_PASSWORD"), SAY_PASSWORD,
                     ("dotenv", "compose", "k8s", "helm", "terraform", "structlog", "logback", "tool_call",
                      "tool_use", "chat", "markdown", "csv", "cli", "properties", "stack")),
    "secret": Spec(generic_secret, ("client_secret", "secret_key", "signingSecret", "app_secret", "encryption_key",
                                    "jwt_secret", "webhook_secret", "apiSecret"),
                   ("CLIENT_SECRET", "SECRET_KEY", "DJANGO_SECRET_KEY", "JWT_SECRET", "SESSION_SECRET", "APP_KEY",
                    "ENCRYPTION_KEY", "OAUTH_CLIENT_SECRET"), SAY_SECRET,
                   ("dotenv", "compose", "k8s", "helm", "terraform", "pino", "tool_call", "chat", "markdown", "cli",
                    "properties", "zap")),
    "http_auth": Spec(http_credential, ("authorization",), ("AUTH",), {"en": ("",)}, tuple(HTTP_CARRIERS)),
    "github": token_spec(github, "github"), "gitlab": token_spec(gitlab, "gitlab"),
    "slack_token": token_spec(slack_token, "slack"), "stripe": token_spec(stripe, "stripe"),
    "openai": token_spec(openai, "openai"), "anthropic": token_spec(anthropic, "anthropic"),
    "google": token_spec(google, "google"), "twilio": token_spec(twilio, "twilio"),
    "sendgrid": token_spec(sendgrid, "sendgrid"), "npm": token_spec(npm, "npm", ("npmrc",)),
    "huggingface": token_spec(huggingface, "hf"), "datadog": token_spec(datadog, "dd"),
    "azure": Spec(azure, ("connection_string", "storageConnectionString", "blob_url"),
                  ("AZURE_STORAGE_CONNECTION_STRING", "EXPORT_BLOB_URL"), SAY_TOKEN, TOKEN_CARRIERS),
    "jwt": token_spec(jwt, "id"),
    "webhook": Spec(webhook, ("webhook_url", "slack_api_url", "webhookUrl", "notify_url"),
                    ("SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK", "TEAMS_WEBHOOK_URL", "ZAPIER_HOOK"),
                    {"en": ("alerts go to", "the webhook is"), "de": ("der Webhook ist",)},
                    TOKEN_CARRIERS + ("csv",)),
    "db_url": Spec(db_url, ("dsn", "database_url", "connectionString", "broker_url", "url"),
                   ("DATABASE_URL", "MONGO_URI", "REDIS_URL", "CELERY_BROKER_URL", "SPRING_DATASOURCE_URL"),
                   {"en": ("connecting to", "the prod DSN is"), "pt": ("a string de conexão é",)},
                   ("dotenv", "compose", "k8s", "helm", "tool_call", "chat", "zap", "structlog", "psycopg", "celery",
                    "markdown")),
    "email": Spec(email, ("email", "user_email", "customer_email", "reply_to", "contact", "login"), ("NOTIFY_EMAIL",),
                  SAY_EMAIL, PII_CARRIERS + ("pino", "http", "stack", "markdown")),
    "email_obfuscated": Spec(email_obfuscated, ("email", "contact"), ("CONTACT",), SAY_EMAIL,
                             ("chat", "email", "csv", "structlog", "ocr", "tool_call", "winston", "zap")),
    "ssn": Spec(ssn, ("ssn", "SSN", "social_security_number", "taxpayer_ssn"), ("SSN",), SAY_SSN,
                PII_CARRIERS + ("stack",)),
    "card": Spec(card, ("card_number", "cardNumber", "pan", "cc_number", "payment_card"), ("TEST_CARD",), SAY_CARD,
                 PII_CARRIERS + ("http",)),
    "iban": Spec(iban, ("iban", "IBAN", "bank_account_iban", "refund_iban", "payout_iban"), ("REFUND_IBAN",),
                 SAY_IBAN, PII_CARRIERS + ("markdown",)),
    "disguised": Spec(disguised, ("value", "token", "card_number", "iban", "email", "phone"), ("VALUE",),
                      {"en": ("here it is:", "copy this:"), "de": ("hier ist es:",), "fr": ("le voici :",)},
                      ("chat", "tool_call", "tool_use", "structlog", "csv", "email", "markdown", "zap", "winston",
                       "ocr")),
    "wrapped": Spec(wrapped, ("value", "api_key", "token", "webhook_url"), ("API_KEY",),
                    {"en": ("pasted from the terminal:", "the key:")},
                    ("chat", "markdown", "email", "ocr", "winston", "structlog", "zap", "csv", "stack")),
}

PHONE_SPEC_KEYS = ("phone", "mobile", "phoneNumber", "telefono", "contact_phone", "whatsapp", "tel")
BASE_KEYS = {"email": "email", "card": "card_number", "iban": "iban", "phone_uk": "phone", "github": "github_token",
             "openai": "openai_api_key", "aws_key_id": "aws_access_key_id", "anthropic": "anthropic_api_key",
             "jwt": "id_token", "sendgrid": "sendgrid_api_key", "webhook": "slack_webhook_url",
             "github_pat": "github_token"}


def phone_spec(kind: str) -> Spec:
    maker = PHONES[kind][0]

    def make(rng: random.Random) -> Made:
        written, style = maker(rng)
        return written, written, style

    return Spec(make, PHONE_SPEC_KEYS, ("SUPPORT_PHONE",), SAY_PHONE, PII_CARRIERS)


def holds(carried: str, secret: str) -> bool:
    """Whether `secret` is in `carried` as written or JSON-escaped once (what benchmarks/redact.py looks for)."""
    return secret in carried or json.dumps(secret)[1:-1] in carried


def line_of(carried: str, secret: str) -> str:
    at = carried.find(secret) if secret in carried else carried.find(json.dumps(secret)[1:-1])
    return carried[carried.rfind("\n", 0, at) + 1:].split("\n", 1)[0]


def spec_case(rng: random.Random, kind: str, spec: Spec, i: int, native: str = "") -> Case:
    written, secret, style = spec.make(rng)
    lang = native if native and rng.random() < 0.6 else rng.choice(sorted(spec.says))
    base = max((b for b in BASE_KEYS if style.startswith(b + "_")), key=len, default="") \
        if kind in ("disguised", "wrapped") else ""
    key = BASE_KEYS[base] if base else rng.choice(spec.keys)
    say = rng.choice(spec.says[lang]) if not base else f"{key.replace('_', ' ')}:"
    slot = Slot(written, secret, style, key, rng.choice(spec.envs) if not base else key.upper(), say, lang)
    table = HTTP_CARRIERS if kind == "http_auth" else GENERIC | EXTRA
    for step in range(len(spec.carriers)):
        name = spec.carriers[(i + step) % len(spec.carriers)]
        carried, is_json = table[name](rng, slot)
        if holds(carried, secret):
            return Case(kind, secret, carried, is_json, f"{name}/{style}", line_of(carried, secret))
    raise RuntimeError(f"no carrier of {kind} holds {secret!r}")


def pair_cases() -> Iterator[Case]:
    rng = random.Random(f"{SEED}:aws")
    for i in range(PER_KIND):
        key_id, secret = aws_pair(rng)
        texts = aws_texts(rng, key_id, secret)
        name = sorted(texts)[i % len(texts)]
        carried, is_json = texts[name]
        yield Case("aws_key_id", key_id, carried, is_json, f"{name}/{key_id[:4]}", line_of(carried, key_id))
        yield Case("aws_secret", secret, carried, is_json, f"{name}/labelled", line_of(carried, secret))


def key_cases() -> Iterator[Case]:
    rng = random.Random(f"{SEED}:pem")
    for i in range(PER_KIND):
        label, body, style = pem_block(rng)
        texts = pem_texts(rng, label, body)
        name = sorted(texts)[i % len(texts)]
        carried, secret, is_json = texts[name]
        yield Case("pem", secret, carried, is_json, f"{name}/{style}", line_of(carried, secret))
    rng = random.Random(f"{SEED}:gcp")
    for i in range(PER_KIND):
        sa, body = service_account(rng)
        texts = gcp_texts(sa)
        name = sorted(texts)[i % len(texts)]
        carried, is_json = texts[name]
        yield Case("gcp_sa", body, carried, is_json, f"{name}/pkcs8", line_of(carried, body))


def generate() -> Iterator[Case]:
    """Every planted value, kind by kind, the same on every call."""
    for kind, spec in SPECS.items():
        rng = random.Random(f"{SEED}:{kind}")
        for i in range(PER_KIND):
            yield spec_case(rng, kind, spec, i)
    for kind, (_maker, native) in PHONES.items():
        rng = random.Random(f"{SEED}:{kind}")
        for i in range(PER_KIND):
            yield spec_case(rng, kind, phone_spec(kind), i, native)
    yield from pair_cases()
    yield from key_cases()


# Near misses: values of the same shapes that are not personal data or secrets, each with the context that makes
# them look like one. None of them may give a finding.

def bad_card(rng: random.Random) -> str:
    number, _ = card_number(rng)
    return f"card number {group_card(number[:-1] + str((int(number[-1]) + rng.randint(1, 9)) % 10), ' ')}"


def bad_iban(rng: random.Random) -> str:
    value = iban_value(rng)
    check = (int(value[2:4]) + rng.randint(1, 90)) % 97
    return f"IBAN: {group(value[:2] + f'{max(check, 2):02d}' + value[4:], 4, ' ')}"


def bad_ssn(rng: random.Random) -> str:
    area = rng.choice(("000", "666", str(rng.randint(900, 999))))
    group, serial = rng.choice(((f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"),
                                ("00", f"{rng.randint(1, 9999):04d}"), (f"{rng.randint(1, 99):02d}", "0000")))
    return f"SSN: {area}-{group}-{serial}"


NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "bad_luhn_card": bad_card,
    "bad_iban": bad_iban,
    "bad_ssn": bad_ssn,
    "version": lambda r: f"upgraded support-api to v{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 99)} "
                         f"(chart {r.randint(0, 3)}.{r.randint(0, 20)}.{r.randint(0, 9)}-rc.{r.randint(1, 5)})",
    "build_id": lambda r: f"CI run {digits(r, 10)} build #{r.randint(1000, 9999)} artifact "
                          f"build-2025{r.randint(1, 12):02d}{r.randint(1, 28):02d}.{r.randint(1, 9)}",
    "uuid": lambda r: f'{{"request_id": "{guid(r)}", "status": 200}}',
    "git_sha": lambda r: f"commit {pick(r, HEX, 40)}\nMerge: {pick(r, HEX, 7)} {pick(r, HEX, 7)}",
    "content_hash": lambda r: f"sha256:{pick(r, HEX, 64)}  dist/app.js\netag: \"{pick(r, HEX, 32)}\"",
    "timestamp": lambda r: f"{stamp(r)} INFO job finished in {r.randint(1, 999)} ms at {epoch_ms(r)}",
    "order_id": lambda r: f"order ORD-2025-{digits(r, 6)}, ticket SUP-{r.randint(1000, 99999)}, invoice "
                          f"INV-{digits(r, 8)}",
    "tracking": lambda r: r.choice((f"UPS tracking 1Z{pick(r, string.ascii_uppercase + string.digits, 6)}"
                                    f"{digits(r, 10)}", f"FedEx tracking {digits(r, 4)} {digits(r, 4)} {digits(r, 4)}",
                                    f"USPS tracking 9400 {digits(r, 4)} {digits(r, 4)} {digits(r, 4)} "
                                    f"{digits(r, 4)} {digits(r, 2)}")),
    "bare_number": lambda r: r.choice((f"processed {digits(r, 10)} bytes in batch {r.randint(1, 99)}",
                                       f"duration_ns={digits(r, 10)}", f"rows exported: {digits(r, 9)}",
                                       f"checksum {digits(r, 11)} ok")),
    "placeholder": lambda r: r.choice(("OPENAI_API_KEY=YOUR_API_KEY", "Authorization: Bearer <token>",
                                       "api_key: xxxx-xxxx-xxxx", "password: ********", "DB_PASSWORD=${DB_PASSWORD}",
                                       "password: <redacted>", "token: {{ .Values.slack.token }}",
                                       "AWS_SECRET_ACCESS_KEY=<your-secret-key>", "sk-...your key here",
                                       "GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
                                       "password: null", "client_secret: REPLACE_ME")),
    "non_address": lambda r: r.choice(("ssh user@localhost", "connected as postgres@db", "admin@server-01 $ uptime",
                                       "ubuntu@ip-10-0-1-12:~$ ls", "root@support-api-7f9c8d6b5-x2x9z:/app#",
                                       f"deploy@build-{r.randint(1, 99)} finished")),
    "at_filename": lambda r: f"uploaded {r.choice(('logo', 'icon', 'banner', 'avatar'))}@{r.randint(2, 3)}x."
                             f"{r.choice(('png', 'webp', 'jpg'))}",
    "package_spec": lambda r: r.choice((f"npm i lodash@4.17.{r.randint(0, 21)}",
                                        f"@babel/core@7.{r.randint(0, 25)}.{r.randint(0, 9)}",
                                        f"npx create-react-app@5.0.{r.randint(0, 1)}",
                                        f"pip install requests=={2}.{r.randint(20, 32)}.{r.randint(0, 3)}")),
    "image_digest": lambda r: f"image: ghcr.io/acme/support-api@sha256:{pick(r, HEX, 64)}",
    "decorator": lambda r: r.choice(("@app.route('/api/v1/orders', methods=['POST'])",
                                     "@pytest.fixture(scope='session')", "@Override\npublic void run()",
                                     "@Component\n@RequiredArgsConstructor", "@dataclass(frozen=True)")),
    "mention": lambda r: r.choice(("@channel the export is down", "cc @oncall-support please look",
                                   "thanks @maria.garcia!", "@here deploy at 15:00")),
    "arn": lambda r: f"arn:aws:iam::{digits(r, 12)}:role/support-bot-{r.choice(WORDS)}",
    "trace_ids": lambda r: f'{{"trace_id": "{pick(r, HEX, 32)}", "span_id": "{pick(r, HEX, 16)}"}}',
    "pod_name": lambda r: f"pod support-api-{pick(r, HEX, 9)}-{pick(r, string.ascii_lowercase + '2-9', 5)} "
                          "restarted",
}
NEGATIVES_PER_SORT = 15


def generate_negatives() -> Iterator[tuple[str, str]]:
    """(sort, text) near misses, the same on every call."""
    rng = random.Random(f"{SEED}:negatives")
    for sort, make in NEGATIVES.items():
        for _ in range(NEGATIVES_PER_SORT):
            yield sort, make(rng)
