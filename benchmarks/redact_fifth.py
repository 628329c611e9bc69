"""A fifth redaction corpus, unseen by the rules: the shapes a fintech/healthcare support team and a DevOps agent
hold, written from the kinds' public specifications by someone who read neither the rules nor the four other
corpora (only benchmarks/redact.py's plug-in interface: `generate()`, `generate_negatives()`, `OUTSIDE_TARGET`).

Carriers (21, each kind goes through every carrier that can hold it; a carrier's name is the head of `form`):
Jira issue export JSON, Zendesk ticket CSV, Intercom conversation JSON (HTML bodies), Slack export JSON with
rich-text blocks (the value in its own code-styled element), Microsoft Teams message export (HTML content), a
GitHub issue comment with a pasted `.env`, a GitHub Actions log (`::add-mask::`, printed `env:` block), a Jupyter
notebook, a mysqldump `INSERT INTO`, a Postman v2.1 collection, a HAR 1.2 file, Terraform state v4,
CloudFormation `describe-stacks` output, journald (syslog text or `journalctl -o json`), nginx/apache access logs
(the value URL-encoded in the query string or referer), a Sentry event (request headers, data, extra,
breadcrumbs), LangChain/LlamaIndex debug prints (Python reprs, single quotes), a voice-call transcript, an
SMS/WhatsApp export (chat text or SMS Backup XML), PDF-to-text (two columns, hyphenated prose around the value),
and a support e-mail with a quoted reply. Non-JSON carriers are, every third case, carried inside a tool result's
JSON (`.json` after the carrier's name). Prose is written in English, German, French, Spanish, Dutch, Polish,
Swedish, Turkish, Korean, Arabic (Latin digits), Vietnamese and Portuguese (BR).

Kinds and the public specification each value is written from (values are random, valid for the format):
- password: labelled in env, YAML, JSON, SQL, reprs and prose in 12 languages; 10-20 printable symbols.
- secret: generic API keys/tokens/client secrets behind a label (hex, base62, base64).
- aws_key_id: IAM access key ids, `AKIA`/`ASIA` + 16 base32 characters (AWS IAM User Guide, "access keys").
- aws_secret: the 40-character base64 secret access key, labelled, in `aws iam create-access-key` JSON output and
  in the console's credentials CSV.
- github: classic `ghp_/gho_/ghu_/ghs_/ghr_` + 30 base62 + 6-character base62 CRC32 (GitHub engineering blog,
  "Behind GitHub's new authentication token formats", 2021) and fine-grained `github_pat_` + 22 + `_` + 59.
- gitlab: `glpat-` + 20 (GitLab docs, "Token prefixes"). slack_token: `xoxb-/xoxp-/xoxa-2-/xoxe.xoxp-1-/xapp-1-`
  (Slack API docs, "Token types"). stripe: `sk_live_/rk_live_` + 99 base62 and `whsec_` + 32 (Stripe docs, "API
  keys", "Webhooks"). openai: `sk-proj-`, `sk-svcacct-`, `sk-admin-` and legacy `sk-` with `T3BlbkFJ`.
  anthropic: `sk-ant-api03-` + 93 base64url + `AA`. google: `AIza` + 35 and OAuth client secrets `GOCSPX-` + 28.
  twilio: API key `SK` + 32 hex with its secret, and 32-hex auth tokens labelled (Twilio docs, "API keys").
  sendgrid: `SG.` + 22 + `.` + 43 base64url. npm: `npm_` + 30 base62 + CRC32 (the GitHub scheme). pypi: `pypi-`
  + a base64url macaroon v2 whose location is pypi.org (warehouse's token format). huggingface: `hf_` + 34
  letters. datadog: 32-hex API keys and 40-hex application keys, labelled. azure_storage: `AccountKey=` (base64 of
  64 bytes) and SAS `sig=` (URL-encoded base64 HMAC-SHA256). shopify: `shpat_/shpss_/shpca_/shppa_` + 32 hex.
  mailgun: `key-` + 32 hex. digitalocean: `dop_v1_/doo_v1_/dor_v1_` + 64 hex. linear: `lin_api_` + 40 base62.
- gcp_service_account: a service-account key file (Google Cloud IAM docs, "Create and delete service account
  keys"); the secret is the private key's body. jwt: RFC 7519, HS256 signed (RFC 7515) with a random key.
- pem: RFC 7468 armour; EC (SEC1, RFC 5915), Ed25519 (PKCS#8, RFC 8410) and OpenSSH ed25519 (PROTOCOL.key) are
  real keys; RSA (PKCS#1, PKCS#8) bodies are well-formed DER of RFC 8017 A.1.2 with the sizes of a 2048-bit key
  but random numbers (real primes under a fixed seed cost ~0.5 s each). The secret is the base64 body.
- webhook: Slack incoming/workflow, Discord, Teams (webhook.office.com), Zapier, Mattermost, Google Chat, IFTTT,
  Make; the secret is the path (and query) after the fixed host prefix.
- connection_string: postgres, postgresql+psycopg2 (SQLAlchemy), mysql+pymysql, mongodb+srv, redis, rediss, amqp(s),
  JDBC (postgresql, sqlserver), ODBC `Pwd=`, ADO.NET `Password=`; the secret is the password.
- http_auth: Authorization Bearer/Basic (RFC 7617)/Token/Digest, X-API-Key, Cookie, Set-Cookie; the secret is the
  credential.
- email: RFC 5322 addresses, upper case, plus tags, IDN (RFC 6531) and punycode, URL-encoded `%40`, JSON-escaped
  `\\u0040`, HTML `&#64;`, mailto: links, display-name form. email_obfuscated (` [at] `, `(at)`, ` at ... dot `)
  is reported but OUTSIDE_TARGET.
- phone_<cc> for us, uk, fr, de, in, au, br, es, it, jp, mx, nl, se, pl, za, tr, kr, vn: numbers from each ITU-T
  E.164 national numbering plan (valid area/mobile prefixes and lengths), international and national forms with
  the country's usual grouping, always beside a context word ("phone", "Telefon", "전화번호", ...). A bare number is
  a near miss. In voice transcripts digits typed with spaces are IN; numbers spoken as words are OUT (not written).
- ssn: SSA rules (area 001-899 except 666, group 01-99, serial 0001-9999), dashed, spaced or compact, labelled.
- card: Visa, Mastercard (51-55, 2221-2720), Amex, Discover, JCB, Diners, UnionPay, Maestro, Mir; ISO/IEC 7812
  lengths, Luhn-valid, grouped with spaces, dashes, dots, underscores or none.
- iban: ISO 13616 with the BBAN structure of 24 countries (SWIFT IBAN registry), mod-97 valid, grouped by 4,
  compact, lower case.
- disguised: tokens, e-mails, cards, IBANs and phones with zero-width characters, full-width forms, bidi marks,
  soft hyphens or NBSP/narrow NBSP separators inside; the secret is the value as written.

Near misses (`generate_negatives`, 24 sorts x 15): invalid Luhn/mod-97/SSN values beside their labels, versions,
build ids, UUIDs, git SHAs, content hashes and SRI integrity strings, timestamps, order/ticket/invoice ids,
tracking numbers, phone-like numbers without a context word, placeholders (`YOUR_API_KEY`, `<token>`,
`sk_test_xxx`, `********`, `${DB_PASSWORD}`, `{{ secrets.X }}`), masked values, `user@localhost` and `git@` remotes,
file and unit names with `@`, package specs and image digests, decorators, Kubernetes resource names (including
the names of Secrets), ARNs (including those of Secrets Manager secrets), public keys and certificates, chat
ids, amounts, and data URIs: base64 of a non-secret image or text is decided NOT a secret (a redactor must not
blank every inline image).
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
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import quote

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from benchmarks.corpus_formats import (
    B62,
    b64url,
    bban,
    crc_token,
    der_int,
    der_len,
    der_seq,
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 5
PER_KIND = 104
NEGATIVES_PER_SORT = 15
OUTSIDE_TARGET = frozenset({"email_obfuscated"})

B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"
B32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"
PW = string.ascii_letters + string.digits + "!#$%*+-.?@^_~"
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
BIDI = ("\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u2066", "\u2069")


@dataclass(frozen=True)
class Made:
    """A value as placed, the part of it that must not survive, and its style (the tail of `form`)."""

    value: str
    secret: str
    style: str


@dataclass(frozen=True)
class Slot:
    """A value ready for a carrier: identifier-style `key`, a natural-language `phrase` in `lang`."""

    kind: str
    made: Made
    key: str
    phrase: str
    lang: str


@dataclass(frozen=True)
class Case:
    """One planted value: `carried` is what redaction sees (JSON when `is_json`), `text` the carrier's text."""

    kind: str
    secret: str
    carried: str
    is_json: bool
    text: str
    form: str


def guid(rng: random.Random) -> str:
    """A version-4 UUID (RFC 9562) from the seeded generator."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


# ---- phrases ------------------------------------------------------------------------------------------------------

PHRASES: dict[str, dict[str, tuple[str, ...]]] = {
    "password": {
        "en": ("password:", "the password is", "pwd:", "Password -"), "de": ("Passwort:", "Kennwort:"),
        "fr": ("mot de passe :", "mdp :"), "es": ("contraseña:", "la clave es"), "nl": ("wachtwoord:", "ww:"),
        "pl": ("hasło:", "hasło to"), "sv": ("lösenord:", "lösenordet är"), "tr": ("şifre:", "parola:"),
        "ko": ("비밀번호:", "비번:"), "ar": ("كلمة المرور:", "كلمة السر:"), "vi": ("mật khẩu:", "mật khẩu là"),
        "pt": ("senha:", "a senha é"),
    },
    "secret": {
        "en": ("API key:", "token:", "here's the key", "client secret ="), "de": ("API-Schlüssel:", "Token:"),
        "fr": ("clé API :", "jeton :"), "es": ("clave de API:", "token:"), "nl": ("API-sleutel:", "token:"),
        "pl": ("klucz API:", "token:"), "sv": ("API-nyckel:", "token:"), "tr": ("API anahtarı:", "token:"),
        "ko": ("API 키:", "토큰:"), "ar": ("مفتاح API:", "الرمز:"), "vi": ("khóa API:", "token:"),
        "pt": ("chave de API:", "token:"),
    },
    "phone": {
        "en": ("phone:", "call me at", "mobile", "my cell is", "tel."), "de": ("Telefon:", "Handy:", "Tel.:"),
        "fr": ("téléphone :", "portable :", "tél."), "es": ("teléfono:", "móvil:", "llámame al"),
        "nl": ("telefoonnummer:", "mobiel:", "bel me op"), "pl": ("numer telefonu:", "tel.", "komórka:"),
        "sv": ("telefonnummer:", "mobil:", "ring mig på"), "tr": ("telefon:", "cep:", "beni arayın:"),
        "ko": ("전화번호:", "휴대폰:", "연락처:"), "ar": ("رقم الهاتف:", "الجوال:", "اتصل بي على"),
        "vi": ("số điện thoại:", "SĐT:", "gọi cho tôi:"), "pt": ("telefone:", "celular:", "WhatsApp:"),
        "it": ("telefono:", "cellulare:", "chiamami al"), "ja": ("電話番号:", "携帯:", "TEL"),
    },
    "email": {
        "en": ("email:", "reach me at", "e-mail"), "de": ("E-Mail:", "Mail an"), "fr": ("courriel :", "e-mail :"),
        "es": ("correo:", "escríbeme a"), "nl": ("e-mailadres:", "mail naar"), "pl": ("e-mail:", "adres e-mail:"),
        "sv": ("e-post:", "mejla"), "tr": ("e-posta:", "mail adresim"), "ko": ("이메일:", "메일 주소:"),
        "ar": ("البريد الإلكتروني:", "الإيميل:"), "vi": ("email:", "địa chỉ email:"), "pt": ("e-mail:", "meu email é"),
    },
    "card": {
        "en": ("card number:", "my card is", "CC#", "charged to"), "de": ("Kartennummer:", "Kreditkarte:"),
        "fr": ("numéro de carte :", "carte bancaire :"), "es": ("número de tarjeta:", "tarjeta:"),
        "nl": ("kaartnummer:", "creditcard:"), "pl": ("numer karty:", "karta:"), "sv": ("kortnummer:", "kort:"),
        "tr": ("kart numarası:", "kredi kartı:"), "ko": ("카드번호:", "신용카드:"), "ar": ("رقم البطاقة:", "البطاقة:"),
        "vi": ("số thẻ:", "thẻ tín dụng:"), "pt": ("número do cartão:", "cartão:"),
    },
    "iban": {
        "en": ("IBAN:", "please refund to", "account (IBAN)"), "de": ("IBAN:", "Kontonummer (IBAN):"),
        "fr": ("IBAN :", "RIB/IBAN :"), "es": ("IBAN:", "cuenta:"), "nl": ("IBAN:", "rekeningnummer:"),
        "pl": ("IBAN:", "numer konta:"), "sv": ("IBAN:", "kontonummer:"), "tr": ("IBAN:", "IBAN numaram"),
        "ko": ("IBAN:", "계좌번호:"), "ar": ("الآيبان:", "IBAN:"), "vi": ("IBAN:", "số tài khoản:"),
        "pt": ("IBAN:", "conta:"),
    },
    "ssn": {"en": ("SSN:", "social security number", "SSN#", "SS no."), "es": ("número de seguro social:",)},
    "conn": {"en": ("connection string:", "DB url:", "dsn ="), "de": ("Verbindungszeichenfolge:",),
             "nl": ("connectiestring:",), "pt": ("string de conexão:",)},
    "webhook": {"en": ("webhook:", "post alerts to", "hook url ="), "pl": ("webhook:",), "tr": ("webhook adresi:",)},
    "auth": {"en": ("header:", "sent with", "request header")},
}

SENTENCES: dict[str, tuple[str, ...]] = {
    "en": ("Hi team, {x} - please rotate it after the migration.", "Customer wrote back: {x}. Escalating to L2.",
           "FYI {x} (from the old runbook)"),
    "de": ("Hallo, {x} - bitte nach dem Test ändern.", "Kunde schreibt: {x}. Bitte prüfen."),
    "fr": ("Bonjour, {x}, merci de le changer ensuite.", "Le client indique {x} dans sa réponse."),
    "es": ("Hola, {x}. Gracias por la ayuda.", "El cliente responde: {x}"),
    "nl": ("Hoi, {x} - graag na de test wijzigen.", "Klant schrijft: {x}. Kun je dit oppakken?"),
    "pl": ("Dzień dobry, {x}. Proszę o pilny kontakt.", "Klient pisze: {x}"),
    "sv": ("Hej, {x}. Tack på förhand!", "Kunden svarar: {x}"),
    "tr": ("Merhaba, {x}. Teşekkürler.", "Müşteri yazdı: {x}"),
    "ko": ("안녕하세요, {x} 입니다. 확인 부탁드립니다.", "고객 답변: {x}"),
    "ar": ("مرحبا، {x} شكرا لكم.", "رد العميل: {x}"),
    "vi": ("Chào anh, {x}. Cảm ơn!", "Khách hàng trả lời: {x}"),
    "pt": ("Olá, {x}. Obrigado!", "O cliente respondeu: {x}"),
    "it": ("Buongiorno, {x}. Grazie.", "Il cliente scrive: {x}"),
    "ja": ("お世話になっております。{x} です。", "お客様より: {x}"),
}

NAMES = ("Anna de Vries", "Piotr Kowalski", "Elif Yılmaz", "Minji Kim", "Nguyễn Văn An", "João Silva", "Sara Lind",
         "Omar Haddad", "Lukas Becker", "Chloé Martin", "Priya Nair", "Liam O'Brien")
HOSTS = ("ip-10-0-3-17", "pay-api-2", "clinic-gw-01", "runner-7f3k", "ledger-db-0")


def sentence(rng: random.Random, s: Slot) -> str:
    lead = f"{s.phrase}\n{s.made.value}" if "\n" in s.made.value else f"{s.phrase} {s.made.value}"
    return rng.choice(SENTENCES[s.lang]).format(x=lead)


# ---- values -------------------------------------------------------------------------------------------------------

def password(rng: random.Random) -> Made:
    value = pick(rng, string.ascii_letters, 2) + pick(rng, PW, rng.randint(8, 16)) + pick(rng, string.digits, 2)
    return Made(value, value, "random")


def secret(rng: random.Random) -> Made:
    style = rng.choice(("hex32", "hex64", "b62_40", "b64_44", "b64url_43"))
    value = {"hex32": lambda: pick(rng, HEX, 32), "hex64": lambda: pick(rng, HEX, 64),
             "b62_40": lambda: pick(rng, B62, 40),
             "b64_44": lambda: base64.b64encode(rng.randbytes(32)).decode(),
             "b64url_43": lambda: b64url(rng.randbytes(32))}[style]()
    return Made(value, value, style)


def aws_key_id(rng: random.Random) -> Made:
    prefix = rng.choice(("AKIA", "AKIA", "ASIA"))
    value = prefix + pick(rng, B32, 16)
    return Made(value, value, prefix.lower())


def aws_secret(rng: random.Random) -> Made:
    key = pick(rng, B64, 40)
    key_id = "AKIA" + pick(rng, B32, 16)
    style = rng.choice(("labelled", "cli_json", "console_csv"))
    if style == "cli_json":
        value = json.dumps({"AccessKey": {"UserName": "ci-deploy", "AccessKeyId": key_id, "Status": "Active",
                                          "SecretAccessKey": key, "CreateDate": "2024-05-03T14:22:01+00:00"}},
                           indent=4)
    elif style == "console_csv":
        value = f"Access key ID,Secret access key\n{key_id},{key}"
    else:
        value = key
    return Made(value, key, style)


def github(rng: random.Random) -> Made:
    if rng.random() < 0.3:
        value = "github_pat_11" + pick(rng, B32 + string.digits[:2], 20) + "_" + pick(rng, B62, 59)
        return Made(value, value, "fine_grained")
    prefix = rng.choice(("ghp_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"))
    value = crc_token(rng, prefix)
    return Made(value, value, prefix[:-1])


def gitlab(rng: random.Random) -> Made:
    value = "glpat-" + pick(rng, B64URL, 20)
    return Made(value, value, "glpat")


def slack_token(rng: random.Random) -> Made:
    n = lambda k: pick(rng, string.digits, k)  # noqa: E731
    style = rng.choice(("xoxb", "xoxp", "xoxa", "xoxe", "xapp"))
    value = {"xoxb": lambda: f"xoxb-{n(12)}-{n(13)}-{pick(rng, B62, 24)}",
             "xoxp": lambda: f"xoxp-{n(12)}-{n(12)}-{n(13)}-{pick(rng, HEX, 32)}",
             "xoxa": lambda: f"xoxa-2-{n(12)}-{n(12)}-{n(13)}-{pick(rng, HEX, 64)}",
             "xoxe": lambda: f"xoxe.xoxp-1-{pick(rng, B62, 150)}",
             "xapp": lambda: f"xapp-1-A{pick(rng, B32, 10)}-{n(13)}-{pick(rng, HEX, 64)}"}[style]()
    return Made(value, value, style)


def stripe(rng: random.Random) -> Made:
    style = rng.choice(("sk_live", "rk_live", "whsec"))
    value = f"{style}_" + (pick(rng, B62, 32) if style == "whsec" else "51" + pick(rng, B62, 97))
    return Made(value, value, style)


def openai(rng: random.Random) -> Made:
    style = rng.choice(("proj", "svcacct", "admin", "legacy"))
    if style == "legacy":
        value = "sk-" + pick(rng, B62, 20) + "T3BlbkFJ" + pick(rng, B62, 20)
    else:
        value = f"sk-{style}-" + pick(rng, B64URL, 74) + "T3BlbkFJ" + pick(rng, B64URL, 74)
    return Made(value, value, style)


def anthropic(rng: random.Random) -> Made:
    style = rng.choice(("api03", "admin01"))
    value = f"sk-ant-{style}-" + pick(rng, B64URL, 93) + "AA"
    return Made(value, value, style)


def google(rng: random.Random) -> Made:
    if rng.random() < 0.35:
        value = "GOCSPX-" + pick(rng, B64URL, 28)
        return Made(value, value, "oauth_secret")
    value = "AIza" + pick(rng, B64URL, 35)
    return Made(value, value, "api_key")


def twilio(rng: random.Random) -> Made:
    if rng.random() < 0.5:
        value = "SK" + pick(rng, HEX, 32)
        return Made(value, value, "api_key_sid")
    value = pick(rng, HEX, 32)
    return Made(value, value, "auth_token")


def sendgrid(rng: random.Random) -> Made:
    value = "SG." + pick(rng, B64URL, 22) + "." + pick(rng, B64URL, 43)
    return Made(value, value, "sg")


def npm(rng: random.Random) -> Made:
    value = crc_token(rng, "npm_")
    return Made(value, value, "npm")


def pypi(rng: random.Random) -> Made:
    """A macaroon v2 (location pypi.org, identifier, caveat, signature) as warehouse issues them."""

    def field(tag: int, data: bytes) -> bytes:
        return bytes([tag, len(data)]) + data

    ident = json.dumps({"version": 1, "uuid": guid(rng)}).encode()
    body = (b"\x02" + field(1, b"pypi.org") + field(2, ident) + b"\x00"
            + field(2, json.dumps([int(1714742521), int(1714742521) + 900]).encode()) + b"\x00\x00"
            + field(6, rng.randbytes(32)))
    value = "pypi-" + b64url(body)
    return Made(value, value, "macaroon")


def huggingface(rng: random.Random) -> Made:
    value = "hf_" + pick(rng, string.ascii_letters, 34)
    return Made(value, value, "hf")


def datadog(rng: random.Random) -> Made:
    if rng.random() < 0.5:
        value = pick(rng, HEX, 32)
        return Made(value, value, "api_key")
    value = pick(rng, HEX, 40)
    return Made(value, value, "app_key")


def azure_storage(rng: random.Random) -> Made:
    account = "st" + pick(rng, string.ascii_lowercase + string.digits, 10)
    if rng.random() < 0.5:
        key = base64.b64encode(rng.randbytes(64)).decode()
        value = (f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};"
                 "EndpointSuffix=core.windows.net")
        return Made(value, key, "account_key")
    sig = quote(base64.b64encode(rng.randbytes(32)).decode(), safe="")
    value = (f"https://{account}.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b&srt=o&sp=r"
             f"&se=2024-06-01T00:00:00Z&st=2024-05-01T00:00:00Z&spr=https&sig={sig}")
    return Made(value, sig, "sas_sig")


def shopify(rng: random.Random) -> Made:
    prefix = rng.choice(("shpat", "shpss", "shpca", "shppa"))
    value = f"{prefix}_" + pick(rng, HEX, 32)
    return Made(value, value, prefix)


def mailgun(rng: random.Random) -> Made:
    value = "key-" + pick(rng, HEX, 32)
    return Made(value, value, "key")


def digitalocean(rng: random.Random) -> Made:
    prefix = rng.choice(("dop", "doo", "dor"))
    value = f"{prefix}_v1_" + pick(rng, HEX, 64)
    return Made(value, value, prefix)


def linear(rng: random.Random) -> Made:
    value = "lin_api_" + pick(rng, B62, 40)
    return Made(value, value, "lin_api")


def rsa_der(rng: random.Random) -> bytes:
    """PKCS#1 RSAPrivateKey: version and the eight numbers, sized as a 2048-bit key's (random, see docstring)."""
    bits = (2048, 17, 2048, 1024, 1024, 1024, 1024, 1024)
    nums = [rng.getrandbits(b) | (1 << (b - 1)) | 1 for b in bits]
    nums[1] = 65537
    return der_seq(der_int(0), *(der_int(x) for x in nums))


def armour(label: str, der: bytes) -> str:
    body = group(base64.b64encode(der).decode(), 64, "\n")
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def body_of(pem: str) -> str:
    return "\n".join(line for line in pem.splitlines() if not line.startswith("-----"))


def openssh_ed25519(rng: random.Random) -> str:
    """An unencrypted OpenSSH private key (openssh PROTOCOL.key) for a real Ed25519 key."""
    seed = rng.randbytes(32)
    pub = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    raw = openssh_ed25519_blob(seed, pub, rng.randbytes(4), b"deploy@ci-runner")
    body = group(base64.b64encode(raw).decode(), 70, "\n")
    return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"


def pem(rng: random.Random) -> Made:
    style = rng.choice(("rsa_pkcs1", "rsa_pkcs8", "ec_sec1", "ed25519_pkcs8", "openssh"))
    nopass = serialization.NoEncryption()
    if style == "rsa_pkcs1":
        text = armour("RSA PRIVATE KEY", rsa_der(rng))
    elif style == "rsa_pkcs8":
        algo = der_seq(bytes.fromhex("06092a864886f70d010101"), b"\x05\x00")
        key = rsa_der(rng)
        text = armour("PRIVATE KEY", der_seq(der_int(0), algo, b"\x04" + der_len(len(key)) + key))
    elif style == "ec_sec1":
        d = rng.randrange(1, 2**255)
        text = ec.derive_private_key(d, ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, nopass).decode().strip()
    elif style == "ed25519_pkcs8":
        text = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32)).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, nopass).decode().strip()
    else:
        text = openssh_ed25519(rng)
    return Made(text, body_of(text), style)


def gcp_service_account(rng: random.Random) -> Made:
    algo = der_seq(bytes.fromhex("06092a864886f70d010101"), b"\x05\x00")
    key = rsa_der(rng)
    private = armour("PRIVATE KEY", der_seq(der_int(0), algo, b"\x04" + der_len(len(key)) + key)) + "\n"
    project = rng.choice(("ledger", "clinic", "payments", "triage")) + f"-prod-{rng.randint(100000, 999999)}"
    sa = {"type": "service_account", "project_id": project, "private_key_id": pick(rng, HEX, 40),
          "private_key": private, "client_email": f"etl-runner@{project}.iam.gserviceaccount.com",
          "client_id": pick(rng, string.digits, 21), "auth_uri": "https://accounts.google.com/o/oauth2/auth",
          "token_uri": "https://oauth2.googleapis.com/token"}
    style = rng.choice(("indented", "compact"))
    value = json.dumps(sa, indent=2) if style == "indented" else json.dumps(sa)
    return Made(value, body_of(private), style)


def jwt(rng: random.Random) -> Made:
    header = {"alg": "HS256", "typ": "JWT"}
    claims = {"sub": guid(rng), "iss": rng.choice(
        ("https://auth.clinicnet.io/", "https://login.ledgerly.com", "patient-portal")),
        "iat": 1714742521 + rng.randint(0, 10**6), "exp": 1714746121 + rng.randint(0, 10**6),
        "scope": rng.choice(("read:records", "payments:write", "openid profile"))}
    signing = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + b64url(
        json.dumps(claims, separators=(",", ":")).encode())
    sig = b64url(hmac.new(rng.randbytes(32), signing.encode(), hashlib.sha256).digest())
    value = f"{signing}.{sig}"
    return Made(value, value, "hs256")


def webhook(rng: random.Random) -> Made:
    style = rng.choice(("slack", "slack_workflow", "discord", "teams", "zapier", "mattermost", "google_chat",
                        "ifttt", "make"))
    g = lambda: guid(rng)  # noqa: E731
    prefix, tail = {
        "slack": lambda: ("https://hooks.slack.com/services/",
                          f"T{pick(rng, B32, 10)}/B{pick(rng, B32, 10)}/{pick(rng, B62, 24)}"),
        "slack_workflow": lambda: ("https://hooks.slack.com/workflows/",
                                   f"T{pick(rng, B32, 10)}/A{pick(rng, B32, 10)}/{pick(rng, string.digits, 18)}/"
                                   f"{pick(rng, B62, 24)}"),
        "discord": lambda: (rng.choice(("https://discord.com/api/webhooks/", "https://discordapp.com/api/webhooks/")),
                            f"{pick(rng, string.digits, 19)}/{pick(rng, B64URL, 68)}"),
        "teams": lambda: (f"https://{rng.choice(('contoso', 'ledgerly', 'mediq'))}.webhook.office.com/webhookb2/",
                          f"{g()}@{g()}/IncomingWebhook/{pick(rng, HEX, 32)}/{g()}"),
        "zapier": lambda: ("https://hooks.zapier.com/hooks/catch/",
                           f"{pick(rng, string.digits, 7)}/{pick(rng, string.ascii_lowercase + string.digits, 7)}/"),
        "mattermost": lambda: ("https://chat.ops-team.net/hooks/", pick(rng, string.ascii_lowercase + string.digits,
                                                                        26)),
        "google_chat": lambda: ("https://chat.googleapis.com/v1/spaces/",
                                f"AAAA{pick(rng, B64URL, 7)}/messages?key=AIza{pick(rng, B64URL, 35)}"
                                f"&token={pick(rng, B64URL, 43)}"),
        "ifttt": lambda: ("https://maker.ifttt.com/trigger/",
                          f"deploy_failed/with/key/{pick(rng, B64URL, 22)}"),
        "make": lambda: (f"https://hook.{rng.choice(('eu1', 'us1', 'eu2'))}.make.com/",
                         pick(rng, string.ascii_lowercase + string.digits, 32)),
    }[style]()
    return Made(prefix + tail, tail, style)


def connection_string(rng: random.Random) -> Made:
    pw = pick(rng, string.ascii_letters + string.digits, rng.randint(12, 22)) + rng.choice(("-", "_", ".", "~", ""))
    user = rng.choice(("app", "ledger_rw", "svc_etl", "admin", "clinic"))
    host = rng.choice(("db.internal", "10.0.4.12", "pg-prod.cx1abc.eu-west-1.rds.amazonaws.com", "mq.svc.local"))
    style = rng.choice(("postgres", "sqlalchemy", "mysql", "mongodb_srv", "redis", "rediss", "amqp", "jdbc_pg",
                        "jdbc_mssql", "odbc", "adonet"))
    value = {
        "postgres": f"postgres://{user}:{pw}@{host}:5432/ledger?sslmode=require",
        "sqlalchemy": f"postgresql+psycopg2://{user}:{pw}@{host}/clinic",
        "mysql": f"mysql+pymysql://{user}:{pw}@{host}:3306/crm?charset=utf8mb4",
        "mongodb_srv": f"mongodb+srv://{user}:{pw}@cluster0.{pick(rng, 'abcdefghij0123456789', 5)}.mongodb.net/"
                       "tickets?retryWrites=true&w=majority",
        "redis": f"redis://:{pw}@{host}:6379/0",
        "rediss": f"rediss://default:{pw}@{host}:6380",
        "amqp": f"{rng.choice(('amqp', 'amqps'))}://{user}:{pw}@{host}:5672/%2Fbilling",
        "jdbc_pg": f"jdbc:postgresql://{host}:5432/ledger?user={user}&password={pw}&ssl=true",
        "jdbc_mssql": f"jdbc:sqlserver://{host}:1433;databaseName=claims;user={user};password={pw};encrypt=true",
        "odbc": f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:{host},1433;Database=claims;Uid={user};"
                f"Pwd={pw};Encrypt=yes;",
        "adonet": f"Server={host};Database=claims;User Id={user};Password={pw};TrustServerCertificate=True",
    }[style]
    return Made(value, pw, style)


def http_auth(rng: random.Random) -> Made:
    style = rng.choice(("bearer", "basic", "token", "digest", "x_api_key", "cookie", "set_cookie"))
    token = pick(rng, B64URL, rng.randint(32, 48))
    if style == "basic":
        cred = base64.b64encode(f"{rng.choice(('ops', 'billing', 'nurse01'))}:{pick(rng, B62, 14)}".encode()).decode()
        return Made(f"Basic {cred}", cred, style)
    value = {"bearer": f"Bearer {token}", "token": f"Token {token}", "x_api_key": token,
             "digest": f'Digest username="ops", realm="api", nonce="{pick(rng, HEX, 16)}", uri="/v1/claims", '
                       f'response="{token}"',
             "cookie": f"session={token}; theme=dark; lang=nl",
             "set_cookie": f"sessionid={token}; Path=/; HttpOnly; Secure; SameSite=Lax"}[style]
    return Made(value, token, style)


FIRST = ("anna", "piotr", "elif", "minji", "an", "joao", "sara", "omar", "lukas", "chloe", "priya", "liam", "jörg",
         "zoë", "thu")
DOMAINS = ("ledgerly.com", "mediq-health.nl", "bank-spoldzielczy.pl", "vardcentral.se", "sigorta.com.tr",
           "hanbit.co.kr", "phongkham.vn", "clinica-sol.com.br", "mail.example-pay.de", "gmail.com", "outlook.com")
IDN = ("bücher.de", "müller-praxis.at", "köln-klinik.de", "sjukhus-göteborg.se")


def email_address(rng: random.Random) -> str:
    local = rng.choice(FIRST[:12]) + rng.choice((".", "_", "")) + pick(rng, string.ascii_lowercase, rng.randint(3, 7))
    return f"{local}{rng.randint(1, 99)}@{rng.choice(DOMAINS)}"


def email(rng: random.Random) -> Made:
    addr = email_address(rng)
    local, domain = addr.split("@")
    style = rng.choice(("plain", "upper", "plus", "idn", "punycode", "url_encoded", "json_escaped", "html_entity",
                        "mailto", "display_name"))
    if style == "idn":
        addr = f"{rng.choice(FIRST[12:])}.{pick(rng, string.ascii_lowercase, 5)}@{rng.choice(IDN)}"
        return Made(addr, addr, style)
    if style == "punycode":
        domain = rng.choice(IDN).encode("idna").decode()
        addr = f"{local}@{domain}"
        return Made(addr, addr, style)
    value = {"plain": addr, "upper": addr.upper(), "plus": f"{local}+{rng.choice(('billing', 'rx', 'jira'))}@{domain}",
             "url_encoded": f"{local}%40{domain}", "json_escaped": f"{local}\\u0040{domain}",
             "html_entity": f"{local}&#64;{domain}", "mailto": addr,
             "display_name": addr}[style]
    placed = {"mailto": f"mailto:{value}", "display_name": f'"{rng.choice(NAMES)}" <{value}>'}.get(style, value)
    return Made(placed, value, style)


def email_obfuscated(rng: random.Random) -> Made:
    local, domain = email_address(rng).split("@")
    name, tld = domain.rsplit(".", 1)
    style = rng.choice(("brackets", "parens", "words"))
    value = {"brackets": f"{local} [at] {name} [dot] {tld}", "parens": f"{local}(at){domain}",
             "words": f"{local} at {name} dot {tld}"}[style]
    return Made(value, value, style)


PHONE_LANG = {"us": "en", "uk": "en", "fr": "fr", "de": "de", "in": "en", "au": "en", "br": "pt", "es": "es",
              "it": "it", "jp": "ja", "mx": "es", "nl": "nl", "se": "sv", "pl": "pl", "za": "en", "tr": "tr",
              "kr": "ko", "vn": "vi"}


def phone_national(rng: random.Random, cc: str) -> tuple[str, str, str]:
    """A number of country `cc`: (country code, national significant number, the national trunk prefix)."""
    r = rng
    plans: dict[str, Callable[[], tuple[str, str, str]]] = {
        "us": lambda: ("1", r.choice(("212", "415", "617", "312", "646", "416", "604", "514", "305", "206"))
                       + str(r.randint(2, 9)) + digits(r, 2) + digits(r, 4), ""),
        "uk": lambda: ("44", r.choice(("7" + r.choice("123457899") + digits(r, 8), "20" + r.choice("378")
                                       + digits(r, 7), "161" + digits(r, 7), "131" + digits(r, 7))), "0"),
        "fr": lambda: ("33", r.choice("1234567") + digits(r, 8), "0"),
        "de": lambda: ("49", r.choice(("15" + r.choice("1279") + digits(r, 8), "17" + digits(r, 9),
                                       "30" + digits(r, 8), "89" + digits(r, 7))), "0"),
        "in": lambda: ("91", r.choice("6789") + digits(r, 9), "0"),
        "au": lambda: ("61", r.choice(("4" + digits(r, 8), r.choice("2378") + r.choice("3456789") + digits(r, 7))),
                       "0"),
        "br": lambda: ("55", r.choice(("11", "21", "31", "41", "51", "61", "71", "81")) + r.choice(
            ("9" + r.choice("6789") + digits(r, 7), r.choice("2345") + digits(r, 7))), "0"),
        "es": lambda: ("34", r.choice(("6" + digits(r, 8), "7" + r.choice("1234") + digits(r, 7),
                                       "9" + r.choice("1345") + digits(r, 7))), ""),
        "it": lambda: ("39", r.choice(("3" + r.choice("234789") + digits(r, 8), "06" + digits(r, 8),
                                       "02" + digits(r, 8))), ""),
        "jp": lambda: ("81", r.choice(("90", "80", "70")) + digits(r, 8) if r.random() < 0.6 else "3" + digits(r, 8),
                       "0"),
        "nl": lambda: ("31", r.choice(("6" + r.choice("12345") + digits(r, 7), "20" + digits(r, 7),
                                       "10" + digits(r, 7))), "0"),
        "se": lambda: ("46", r.choice(("7" + r.choice("02369") + digits(r, 7), "8" + digits(r, 7))), "0"),
        "pl": lambda: ("48", r.choice("5678") + digits(r, 8), ""),
        "za": lambda: ("27", r.choice(("6" + r.choice("01234") + digits(r, 7), "7" + r.choice("1234689")
                                       + digits(r, 7), "8" + r.choice("1234") + digits(r, 7), "11" + digits(r, 7),
                                       "21" + digits(r, 7))), "0"),
        "tr": lambda: ("90", r.choice(("5" + r.choice("0345") + digits(r, 8), "212" + digits(r, 7),
                                       "312" + digits(r, 7))), "0"),
        "kr": lambda: ("82", r.choice(("10" + digits(r, 8), "2" + digits(r, 8), "31" + digits(r, 7))), "0"),
        "vn": lambda: ("84", r.choice(("9" + r.choice("0134678"), "3" + r.choice("2356789"), "7" + r.choice("06789"),
                                       "8" + r.choice("123456"))) + digits(r, 7), "0"),
    }
    if cc == "mx":
        area = r.choice(("55", "33", "81", "222", "998"))
        return "52", area + digits(r, 10 - len(area)), ""
    return plans[cc]()


def phone_text(rng: random.Random, cc: str) -> Made:
    code, nsn, trunk = phone_national(rng, cc)
    intl = rng.random() < 0.45
    national = trunk + nsn
    g = {  # the country's usual grouping of the national number
        "us": lambda n: rng.choice((f"({n[:3]}) {n[3:6]}-{n[6:]}", f"{n[:3]}-{n[3:6]}-{n[6:]}",
                                    f"{n[:3]}.{n[3:6]}.{n[6:]}", n)),
        "uk": lambda n: f"{n[:5]} {n[5:]}" if n.startswith("07") else f"{n[:3]} {n[3:7]} {n[7:]}"
        if n.startswith("02") else f"{n[:4]} {n[4:7]} {n[7:]}",
        "fr": lambda n: rng.choice((" ", ".", "")).join(n[i:i + 2] for i in range(0, 10, 2)),
        "de": lambda n: rng.choice((" ", "/", "-")).join((n[:4], n[4:]) if n.startswith("01") else (n[:3], n[3:])),
        "in": lambda n: f"{n[:-10]}{n[-10:-5]} {n[-5:]}",
        "au": lambda n: f"{n[:4]} {n[4:7]} {n[7:]}" if n.startswith("04") else f"({n[:2]}) {n[2:6]} {n[6:]}",
        "br": lambda n: f"({n[1:3]}) {n[3:-4]}-{n[-4:]}",
        "es": lambda n: f"{n[:3]} {n[3:5]} {n[5:7]} {n[7:]}" if n[0] in "67" else f"{n[:3]} {n[3:6]} {n[6:]}",
        "it": lambda n: f"{n[:3]} {n[3:6]} {n[6:]}" if n[0] == "3" else f"{n[:2]} {n[2:6]} {n[6:]}",
        "jp": lambda n: f"{n[:3]}-{n[3:7]}-{n[7:]}" if len(n) == 11 else f"{n[:2]}-{n[2:6]}-{n[6:]}",
        "mx": lambda n: f"{n[:2]} {n[2:6]} {n[6:]}" if n[:2] in ("55", "33", "81") else f"{n[:3]} {n[3:6]} {n[6:]}",
        "nl": lambda n: f"{n[:2]}-{n[2:]}" if n.startswith("06") else f"{n[:3]}-{n[3:]}",
        "se": lambda n: f"{n[:3]}-{n[3:6]} {n[6:8]} {n[8:]}" if n.startswith("07") else f"{n[:2]}-{n[2:5]} {n[5:]}",
        "pl": lambda n: rng.choice((f"{n[:3]} {n[3:6]} {n[6:]}", f"{n[:3]}-{n[3:6]}-{n[6:]}")),
        "za": lambda n: f"{n[:3]} {n[3:6]} {n[6:]}",
        "tr": lambda n: f"{n[:4]} {n[4:7]} {n[7:9]} {n[9:]}",
        "kr": lambda n: f"{n[:3]}-{n[3:7]}-{n[7:]}" if n.startswith("010") else f"{n[:2]}-{n[2:6]}-{n[6:]}"
        if n.startswith("02") else f"{n[:3]}-{n[3:6]}-{n[6:]}",
        "vn": lambda n: f"{n[:4]} {n[4:7]} {n[7:]}",
    }[cc]
    if intl:
        grouped = g(national).replace("(", "").replace(")", "")
        grouped = (grouped[len(trunk):] if trunk and grouped.startswith(trunk) else grouped).lstrip(" -./")
        value = rng.choice((f"+{code} {grouped}", f"+{code}{nsn}", f"00{code} {grouped}"))
        style = "intl_grouped" if " " in value[len(code) + 1:] else "intl_compact"
    else:
        value = g(national)
        style = "national_compact" if value.isdigit() else "national"
    return Made(value, value, style)


def ssn(rng: random.Random) -> Made:
    area = rng.choice([a for a in range(1, 900) if a != 666])
    a, b, c = f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
    style = rng.choice(("dashed", "dashed", "spaced", "compact"))
    value = {"dashed": f"{a}-{b}-{c}", "spaced": f"{a} {b} {c}", "compact": a + b + c}[style]
    return Made(value, value, style)


CARD_SCHEMES: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    "visa": (("4",), (16, 16, 13, 19)), "mastercard": (("51", "52", "53", "54", "55", "2221", "2500", "2720"), (16,)),
    "amex": (("34", "37"), (15,)), "discover": (("6011", "65", "644", "649"), (16,)),
    "jcb": (("3528", "3550", "3589"), (16,)), "diners": (("36", "300", "305", "38"), (14,)),
    "unionpay": (("62",), (16, 19)), "maestro": (("6759", "5018", "5020", "6304"), (12, 16, 19)),
    "mir": (("2200", "2204"), (16,)),
}


def card_number(rng: random.Random) -> tuple[str, str]:
    scheme = rng.choice(sorted(CARD_SCHEMES))
    prefixes, lengths = CARD_SCHEMES[scheme]
    partial = rng.choice(prefixes)
    length = rng.choice(lengths)
    partial += digits(rng, length - 1 - len(partial))
    return partial + luhn_digit(partial), scheme


def card(rng: random.Random) -> Made:
    number, scheme = card_number(rng)
    sep = rng.choice((" ", "-", "", ".", "_", " "))
    value = group_card(number, sep) if sep else number
    name = {" ": "space", "-": "dash", "": "compact", ".": "dot", "_": "underscore"}[sep]
    return Made(value, value, f"{scheme}_{name}")


IBAN_BBAN: dict[str, str] = {  # the registry's BBAN structure: n digits, a upper letters, c alphanumerics
    "DE": "8n10n", "GB": "4a6n8n", "FR": "5n5n11c2n", "NL": "4a10n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
    "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "SE": "3n16n1n", "TR": "5n1n16c", "PT": "4n4n11n2n",
    "IE": "4a6n8n", "DK": "4n9n1n", "NO": "4n6n1n", "FI": "3n11n", "SA": "2n18c", "AE": "3n16n", "BR": "8n5n10n1a1c",
    "LU": "3n13c", "CZ": "4n6n10n", "RO": "4a16c", "GR": "3n4n16c",
}


def iban_value(rng: random.Random) -> tuple[str, str]:
    country = rng.choice(sorted(IBAN_BBAN))
    b = bban(rng, IBAN_BBAN[country])
    if country == "TR":  # Turkey's reserved digit, after the bank code, is 0
        b = b[:5] + "0" + b[6:]
    return country + iban_check(country, b) + b, country


def iban(rng: random.Random) -> Made:
    compact, country = iban_value(rng)
    style = rng.choice(("grouped", "grouped", "compact", "lower_compact", "lower_grouped"))
    value = {"grouped": group(compact, 4, " "), "compact": compact, "lower_compact": compact.lower(),
             "lower_grouped": group(compact.lower(), 4, " ")}[style]
    return Made(value, value, f"{country}_{style}")


def disguised(rng: random.Random) -> tuple[Made, str]:
    """A value of another kind with invisible or look-alike characters inside; returns it and its phrase class."""
    style = rng.choice(("zero_width", "fullwidth", "bidi", "soft_hyphen", "nbsp"))
    if style == "nbsp":
        sep = rng.choice(("\u00a0", "\u202f"))
        base, cls = rng.choice(((lambda: group_card(card_number(rng)[0], sep), "card"),
                                (lambda: group(iban_value(rng)[0], 4, sep), "iban"),
                                (lambda: f"+31{sep}6{sep}{digits(rng, 8)}", "phone")))
        value = base()
        return Made(value, value, style), cls
    base_value, cls = rng.choice(((lambda: github(rng).value, "secret"), (lambda: stripe(rng).value, "secret"),
                                  (lambda: aws_key_id(rng).value, "secret"), (lambda: email_address(rng), "email"),
                                  (lambda: card_number(rng)[0], "card"), (lambda: openai(rng).value, "secret")))
    raw = base_value()
    if style == "fullwidth":
        value = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" and rng.random() < 0.5 else c for c in raw)
    else:
        marks = {"zero_width": ZERO_WIDTH, "bidi": BIDI, "soft_hyphen": ("\u00ad",)}[style]
        cuts = sorted(rng.sample(range(3, len(raw) - 2), 2))
        value = raw[:cuts[0]] + rng.choice(marks) + raw[cuts[0]:cuts[1]] + rng.choice(marks) + raw[cuts[1]:]
    return Made(value, value, f"{style}_{cls}"), cls


# ---- kinds: value, phrase class, identifier-style keys --------------------------------------------------------------

KINDS: dict[str, tuple[Callable[[random.Random], Made], str, tuple[str, ...]]] = {
    "password": (password, "password", ("DB_PASSWORD", "PGPASSWORD", "MYSQL_ROOT_PASSWORD", "adminPassword",
                                        "smtp_pass", "keystore.password", "LDAP_BIND_PW", "sftpPassword",
                                        "wachtwoord", "haslo", "losenord", "sifre", "senha", "mat_khau",
                                        "Passwort")),
    "secret": (secret, "secret", ("API_KEY", "client_secret", "SECRET_KEY", "access_token", "signingSecret",
                                  "ENCRYPTION_KEY", "x-api-key", "apiKey", "PAYMENTS_HMAC_SECRET")),
    "aws_key_id": (aws_key_id, "secret", ("aws_access_key_id", "AWS_ACCESS_KEY_ID", "AccessKeyId", "accessKey")),
    "aws_secret": (aws_secret, "secret", ("aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "SecretAccessKey",
                                          "secretKey", "awsSecret")),
    "github": (github, "secret", ("GITHUB_TOKEN", "GH_PAT", "github_token", "GITHUB_API_TOKEN", "gh_token")),
    "gitlab": (gitlab, "secret", ("GITLAB_TOKEN", "CI_JOB_TOKEN_OVERRIDE", "gitlab_pat", "PRIVATE-TOKEN")),
    "slack_token": (slack_token, "secret", ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "slackToken", "slack_api_token")),
    "stripe": (stripe, "secret", ("STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "stripe_api_key", "stripeKey")),
    "openai": (openai, "secret", ("OPENAI_API_KEY", "openai_api_key", "api_key", "OPENAI_KEY")),
    "anthropic": (anthropic, "secret", ("ANTHROPIC_API_KEY", "anthropic_api_key", "api_key", "CLAUDE_KEY")),
    "google": (google, "secret", ("GOOGLE_API_KEY", "GOOGLE_CLIENT_SECRET", "mapsApiKey", "client_secret")),
    "twilio": (twilio, "secret", ("TWILIO_AUTH_TOKEN", "TWILIO_API_KEY", "twilio_auth_token", "authToken")),
    "sendgrid": (sendgrid, "secret", ("SENDGRID_API_KEY", "sendgrid_key", "SMTP_PASSWORD", "mailApiKey")),
    "npm": (npm, "secret", ("NPM_TOKEN", "NODE_AUTH_TOKEN", "npm_auth_token", "//registry.npmjs.org/:_authToken")),
    "pypi": (pypi, "secret", ("PYPI_API_TOKEN", "TWINE_PASSWORD", "pypi_token", "UV_PUBLISH_TOKEN")),
    "huggingface": (huggingface, "secret", ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "hf_api_key", "token")),
    "datadog": (datadog, "secret", ("DD_API_KEY", "DD_APP_KEY", "datadog_api_key", "DD-API-KEY")),
    "azure_storage": (azure_storage, "secret", ("AZURE_STORAGE_CONNECTION_STRING", "blobSasUrl", "storage_conn",
                                                "AzureWebJobsStorage")),
    "shopify": (shopify, "secret", ("SHOPIFY_ACCESS_TOKEN", "SHOPIFY_API_SECRET", "shopifyToken",
                                    "X-Shopify-Access-Token")),
    "mailgun": (mailgun, "secret", ("MAILGUN_API_KEY", "mailgun_key", "MG_KEY", "mailgunApiKey")),
    "digitalocean": (digitalocean, "secret", ("DIGITALOCEAN_TOKEN", "DO_API_TOKEN", "do_token", "doctl_token")),
    "linear": (linear, "secret", ("LINEAR_API_KEY", "linear_token", "LINEAR_KEY", "linearApiKey")),
    "gcp_service_account": (gcp_service_account, "secret", ("GOOGLE_CREDENTIALS", "sa_key", "gcp_sa_json",
                                                            "credentials_json")),
    "jwt": (jwt, "secret", ("id_token", "access_token", "JWT", "sessionToken", "Authorization")),
    "pem": (pem, "secret", ("SSH_PRIVATE_KEY", "private_key", "TLS_KEY", "deploy_key", "signingKey")),
    "webhook": (webhook, "webhook", ("SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK", "TEAMS_WEBHOOK_URL", "alert_webhook",
                                     "ZAPIER_HOOK", "notify_url")),
    "connection_string": (connection_string, "conn", ("DATABASE_URL", "SQLALCHEMY_DATABASE_URI", "MONGO_URI",
                                                      "REDIS_URL", "CELERY_BROKER_URL", "ConnectionStrings__Default",
                                                      "jdbcUrl", "dsn")),
    "http_auth": (http_auth, "auth", ("Authorization", "Cookie", "Set-Cookie", "X-API-Key", "Proxy-Authorization")),
    "email": (email, "email", ("email", "contact_email", "requester_email", "userEmail", "e_mail", "reply_to")),
    "email_obfuscated": (email_obfuscated, "email", ("contact", "email_hint", "reach")),
    "ssn": (ssn, "ssn", ("ssn", "SSN", "social_security_number", "patient_ssn", "taxId")),
    "card": (card, "card", ("card_number", "cc_number", "pan", "cardNumber", "numero_tarjeta")),
    "iban": (iban, "iban", ("iban", "IBAN", "payout_iban", "refundAccount", "rekeningnummer")),
}
PHONES = tuple(PHONE_LANG)
PHONE_KEYS = ("phone", "mobile", "contact_number", "tel", "msisdn", "phone_number", "callback_number")
TOKEN_KINDS = frozenset(k for k, (_, cls, _) in KINDS.items() if cls in ("secret", "password"))


# ---- carriers -------------------------------------------------------------------------------------------------------

Carrier = Callable[[random.Random, Slot], tuple[str, bool]]


def stamp(rng: random.Random) -> str:
    hour, minute, second = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
    return f"2024-05-{rng.randint(1, 28):02d}T{hour:02d}:{minute:02d}:{second:02d}"


def dumps(rng: random.Random, doc: object) -> str:
    """JSON as exporters write it: indented or compact, non-ASCII raw or `\\u` escaped."""
    return json.dumps(doc, indent=rng.choice((None, 2)), ensure_ascii=rng.random() < 0.3)


def c_jira(rng: random.Random, s: Slot) -> tuple[str, bool]:
    fields: dict[str, object] = {"summary": rng.choice(("Refund stuck", "Deploy failing", "Login loop")),
                                 "status": {"name": "In Progress"}, "created": stamp(rng) + ".000+0000"}
    if rng.random() < 0.5:
        fields["customfield_10042"] = {s.key: s.made.value}
        fields["comment"] = {"comments": []}
    else:
        fields["comment"] = {"comments": [{"author": {"displayName": rng.choice(NAMES)}, "body": sentence(rng, s),
                                           "created": stamp(rng) + ".000+0000"}]}
    return dumps(rng, {"issues": [{"key": f"SUP-{rng.randint(100, 9999)}", "fields": fields}]}), True


def c_zendesk_csv(rng: random.Random, s: Slot) -> tuple[str, bool]:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["Id", "Requester", "Subject", "Description", "Status", "Created at"])
    w.writerow([rng.randint(10000, 99999), rng.choice(NAMES), "Account access", sentence(rng, s), "open",
                stamp(rng).replace("T", " ")])
    return out.getvalue(), False


def c_intercom(rng: random.Random, s: Slot) -> tuple[str, bool]:
    body = sentence(rng, s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", "<br>")
    part = {"type": "conversation_part", "part_type": "comment", "body": f"<p>{body}</p>",
            "author": {"type": "user", "name": rng.choice(NAMES)}, "created_at": 1714742521 + rng.randint(0, 10**6)}
    return dumps(rng, {"type": "conversation", "id": str(rng.randint(10**11, 10**12)),
                       "conversation_parts": {"conversation_parts": [part]}}), True


def c_slack(rng: random.Random, s: Slot) -> tuple[str, bool]:
    elements = [{"type": "text", "text": s.phrase + " "}, {"type": "text", "text": s.made.value,
                                                          "style": {"code": True}}]
    msg = {"type": "message", "user": "U0" + pick(rng, B32, 9), "text": f"{s.phrase} `{s.made.value}`",
           "ts": f"{1714742521 + rng.randint(0, 10**6)}.{digits(rng, 6)}",
           "blocks": [{"type": "rich_text", "block_id": pick(rng, B62, 5),
                       "elements": [{"type": "rich_text_section", "elements": elements}]}]}
    return dumps(rng, [msg]), True


def c_teams(rng: random.Random, s: Slot) -> tuple[str, bool]:
    value = s.made.value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", "<br>")
    content = f"<div><p>{s.phrase} <code>{value}</code></p></div>"
    msg = {"id": str(rng.randint(10**12, 10**13)), "messageType": "message", "createdDateTime": stamp(rng) + "Z",
           "from": {"user": {"displayName": rng.choice(NAMES)}}, "body": {"contentType": "html", "content": content}}
    return dumps(rng, {"value": [msg]}), True


def env_value(value: str) -> str:
    return json.dumps(value) if "\n" in value or " " in value else value


def c_gh_env(rng: random.Random, s: Slot) -> tuple[str, bool]:
    key = s.key.upper().replace("-", "_").replace(".", "_")
    text = (f"Still failing on `main` after the deploy. Here is my `.env` (staging):\n\n```env\nNODE_ENV=production\n"
            f"{key}={env_value(s.made.value)}\nPORT=3000\n```\n\nAny idea? cc @{rng.choice(FIRST)}-dev")
    return text, False


def c_gh_actions(rng: random.Random, s: Slot) -> tuple[str, bool]:
    t = f"2024-05-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(10, 59)}:0{rng.randint(0, 9)}." \
        f"{digits(rng, 7)}Z"
    if s.kind in TOKEN_KINDS and "\n" not in s.made.value and rng.random() < 0.5:
        lines = [f"{t} ##[group]Run echo \"::add-mask::$TOKEN\"", f"{t} ::add-mask::{s.made.value}",
                 f"{t} ##[endgroup]"]
    else:
        value = s.made.value.replace("\n", "\\n")
        lines = [f"{t} ##[group]Run ./scripts/deploy.sh", f"{t} ./scripts/deploy.sh",
                 f"{t} shell: /usr/bin/bash -e {{0}}",
                 f"{t} env:", f"{t}   AWS_REGION: eu-west-1", f"{t}   {s.key}: {value}", f"{t} ##[endgroup]"]
    return "\n".join(lines), False


def c_notebook(rng: random.Random, s: Slot) -> tuple[str, bool]:
    if rng.random() < 0.5:
        src = ["import os\n", f"os.environ[\"{s.key}\"] = {json.dumps(s.made.value, ensure_ascii=False)}\n",
               "client = make_client()"]
        outputs: list[object] = []
    else:
        src = ["print(ticket.body)"]
        outputs = [{"output_type": "stream", "name": "stdout", "text": sentence(rng, s).splitlines(True)}]
    cell = {"cell_type": "code", "execution_count": rng.randint(1, 40), "metadata": {}, "source": src,
            "outputs": outputs}
    return dumps(rng, {"cells": [cell], "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4,
                       "nbformat_minor": 5}), True


def sql_quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def c_sql(rng: random.Random, s: Slot) -> tuple[str, bool]:
    col = s.key.lower().replace("-", "_").replace(".", "_").replace("/", "").replace(":", "")
    row = f"({rng.randint(1, 9999)},{sql_quote(rng.choice(NAMES))},{sql_quote(s.made.value)},'{stamp(rng)}')"
    other = f"({rng.randint(1, 9999)},{sql_quote(rng.choice(NAMES))},NULL,'{stamp(rng)}')"
    rows = [row, other] if rng.random() < 0.5 else [other, row]
    return (f"-- MySQL dump 10.13\nLOCK TABLES `customers` WRITE;\n"
            f"INSERT INTO `customers` (`id`, `full_name`, `{col}`, `created_at`) VALUES {','.join(rows)};\n"
            "UNLOCK TABLES;"), False


def c_postman(rng: random.Random, s: Slot) -> tuple[str, bool]:
    info = {"_postman_id": guid(rng), "name": "Payments API",
            "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"}
    request = {"method": "POST", "url": {"raw": "{{baseUrl}}/v1/refunds", "host": ["{{baseUrl}}"],
                                         "path": ["v1", "refunds"]}}
    doc: dict[str, object] = {"info": info, "item": [{"name": "Create refund", "request": request}]}
    if rng.random() < 0.5:
        doc["variable"] = [{"key": "baseUrl", "value": "https://api.ledgerly.com"},
                           {"key": s.key, "value": s.made.value, "type": "string"}]
    else:
        request["body"] = {"mode": "raw", "raw": json.dumps({s.key: s.made.value, "amount": 1250}, indent=2),
                           "options": {"raw": {"language": "json"}}}
    return dumps(rng, doc), True


def c_har(rng: random.Random, s: Slot) -> tuple[str, bool]:
    headers = [{"name": "Accept", "value": "application/json"}]
    base = "https://api.mediq-health.nl/v2/patients/lookup"
    request: dict[str, object] = {"method": "GET", "httpVersion": "HTTP/2", "headers": headers, "cookies": []}
    if s.kind == "http_auth":
        name = {"cookie": "Cookie", "set_cookie": "Set-Cookie", "x_api_key": "X-API-Key"}.get(s.made.style,
                                                                                          "Authorization")
        headers.append({"name": name, "value": s.made.value})
        request["url"] = base
    elif "\n" in s.made.value or rng.random() < 0.5:
        request.update(method="POST", url=base, postData={"mimeType": "application/json",
                                                          "text": json.dumps({s.key: s.made.value})})
    else:
        request["url"] = f"{base}?{quote(s.key)}={quote(s.made.value, safe='')}"
        request["queryString"] = [{"name": s.key, "value": s.made.value}]
    entry = {"startedDateTime": stamp(rng) + ".123Z", "time": rng.randint(20, 900), "request": request,
             "response": {"status": 200, "statusText": "OK", "headers": []}}
    return dumps(rng, {"log": {"version": "1.2", "creator": {"name": "Firefox", "version": "125.0"},
                               "entries": [entry]}}), True


def c_tfstate(rng: random.Random, s: Slot) -> tuple[str, bool]:
    attr = s.key.lower().replace("-", "_").replace(".", "_")
    instance = {"schema_version": 0, "attributes": {"id": pick(rng, HEX, 12), attr: s.made.value,
                                                    "name": "prod"}, "sensitive_attributes": []}
    doc: dict[str, object] = {"version": 4, "terraform_version": "1.7.5", "serial": rng.randint(1, 400),
                              "lineage": guid(rng), "outputs": {}, "resources": []}
    if rng.random() < 0.5:
        doc["resources"] = [{"mode": "managed", "type": "null_resource", "name": "app", "provider":
                             "provider[\"registry.terraform.io/hashicorp/null\"]", "instances": [instance]}]
    else:
        doc["outputs"] = {attr: {"value": s.made.value, "type": "string", "sensitive": True}}
    return dumps(rng, doc), True


def c_cfn(rng: random.Random, s: Slot) -> tuple[str, bool]:
    key = "".join(p[:1].upper() + p[1:] for p in s.key.replace("-", "_").replace(".", "_").split("_") if p)
    stack: dict[str, object] = {"StackName": "clinic-api-prod", "StackStatus": "UPDATE_COMPLETE",
                                "CreationTime": stamp(rng) + ".512Z"}
    if rng.random() < 0.5:
        stack["Outputs"] = [{"OutputKey": key, "OutputValue": s.made.value, "Description": "for the worker"}]
    else:
        stack["Parameters"] = [{"ParameterKey": key, "ParameterValue": s.made.value}]
    return dumps(rng, {"Stacks": [stack]}), True


def c_journald(rng: random.Random, s: Slot) -> tuple[str, bool]:
    value = s.made.value.replace("\n", "\\n")
    msg = rng.choice((f"level=warn msg=\"retrying\" {s.key}={value} attempt=2",
                      f"Loaded config: {s.phrase} {value}"))
    host, pid = rng.choice(HOSTS), rng.randint(300, 40000)
    if rng.random() < 0.5:
        return f"May {rng.randint(1, 28):02d} 14:22:{rng.randint(10, 59)} {host} ledger-api[{pid}]: {msg}", False
    doc = {"__REALTIME_TIMESTAMP": str(1714742521000000 + rng.randint(0, 10**9)), "_HOSTNAME": host,
           "_SYSTEMD_UNIT": "ledger-api.service", "SYSLOG_IDENTIFIER": "ledger-api", "_PID": str(pid),
           "PRIORITY": "4", "MESSAGE": msg}
    return json.dumps(doc, ensure_ascii=False), True


def c_access_log(rng: random.Random, s: Slot) -> tuple[str, bool]:
    q = f"{quote(s.key, safe='')}={quote(s.made.value, safe='')}"
    ip = f"{rng.randint(11, 220)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    when = f"{rng.randint(10, 28)}/May/2024:14:{rng.randint(10, 59)}:{rng.randint(10, 59)} +0000"
    agent = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36"
    if rng.random() < 0.5:
        line = f'{ip} - - [{when}] "GET /api/v1/callback?{q}&page=2 HTTP/1.1" 200 {rng.randint(80, 9000)} "-" "{agent}"'
    else:
        line = (f'{ip} - - [{when}] "GET /static/app.js HTTP/1.1" 304 0 "https://portal.ledgerly.com/verify?{q}" '
                f'"{agent}"')
    return line, False


def c_sentry(rng: random.Random, s: Slot) -> tuple[str, bool]:
    event: dict[str, object] = {"event_id": pick(rng, HEX, 32), "level": "error", "platform": "python",
                                "timestamp": stamp(rng), "exception": {"values": [{"type": "HTTPError",
                                                                                   "value": "502 Bad Gateway"}]}}
    where = "headers" if s.kind == "http_auth" else rng.choice(("data", "extra", "breadcrumb"))
    if where == "headers":
        name = {"cookie": "Cookie", "set_cookie": "Set-Cookie", "x_api_key": "X-Api-Key"}.get(s.made.style,
                                                                                          "Authorization")
        event["request"] = {"url": "https://api.ledgerly.com/v1/charges", "method": "POST",
                            "headers": [["Content-Type", "application/json"], [name, s.made.value]]}
    elif where == "data":
        event["request"] = {"url": "https://api.ledgerly.com/v1/charges", "method": "POST",
                            "data": {s.key: s.made.value, "amount": 4200}}
    elif where == "extra":
        event["extra"] = {s.key: s.made.value, "retry": 1}
    else:
        event["breadcrumbs"] = {"values": [{"category": "console", "level": "info", "timestamp": stamp(rng),
                                            "message": sentence(rng, s)}]}
    return dumps(rng, event), True


def c_langchain(rng: random.Random, s: Slot) -> tuple[str, bool]:
    value = s.made.value.replace("\\", "\\\\").replace("\n", "\\n").replace("'", "\\'")
    shape = rng.choice(("dict", "llamaindex", "chain_start"))
    if shape == "dict":
        text = f"{{'model': 'gpt-4o-mini', 'temperature': 0.0, '{s.key}': '{value}', 'max_retries': 2}}"
    elif shape == "llamaindex":
        text = (f"Document(id_='{guid(rng)}', embedding=None, metadata={{'source': "
                f"'zendesk', '{s.key}': '{value}'}}, text='Ticket body follows', mimetype='text/plain')")
    else:
        said = sentence(rng, s).replace("\\", "\\\\").replace("\n", "\\n").replace("'", "\\'")
        text = (f"[chain/start] [1:chain:AgentExecutor] Entering Chain run with input:\n{{'input': '{said}', "
                f"'chat_history': []}}")
    return text, False


def spaced_digits(value: str) -> str:
    return " ".join(c for c in value if c.isalnum())


def c_transcript(rng: random.Random, s: Slot) -> tuple[str, bool]:
    t = f"[00:{rng.randint(0, 14):02d}:{rng.randint(10, 59)}]"
    ask = {"phone": "what number can we reach you on?", "card": "can you read me the card number?",
           "iban": "which account should the refund go to?", "ssn": "I need to verify your SSN.",
           "email": "what's the e-mail on file?"}.get(PHRASE_CLASS.get(s.kind, ""), "can you read me what you see?")
    said = f"{s.phrase} {s.made.value}"
    return f"{t} Agent: Thanks for holding, {ask}\n{t} Caller: Yeah, {said}.\n{t} Agent: Got it, thank you.", False


def c_sms(rng: random.Random, s: Slot) -> tuple[str, bool]:
    name = rng.choice(NAMES)
    if rng.random() < 0.5:
        day = f"{rng.randint(1, 28):02d}/05/2024"
        text = (f"{day}, 14:{rng.randint(10, 59)} - {name}: oi, tudo bem?\n"
                f"{day}, 14:{rng.randint(10, 59)} - {name}: {sentence(rng, s)}\n"
                f"{day}, 14:{rng.randint(10, 59)} - Clinic Desk: <Media omitted>")
        return text, False
    body = sentence(rng, s).replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;").replace("\n", "&#10;")
    return (f"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"1\">\n  <sms protocol=\"0\" "
            f"address=\"Clinic\" date=\"{1714742521000 + rng.randint(0, 10**9)}\" type=\"1\" body=\"{body}\" "
            f"read=\"1\" contact_name=\"{name}\" />\n</smses>"), False


def c_pdf(rng: random.Random, s: Slot) -> tuple[str, bool]:
    left = ["Statement of ac-", "count and terms of", "service. Please re-", "view the enclo-", "sed schedule."]
    right = [f"{s.phrase}", s.made.value, "Branch: Centrum", "Ref: see overleaf", ""]
    rows = [f"{a:<24}  {b}" for a, b in zip(left, right, strict=True)]
    return f"\x0cPage {rng.randint(1, 9)} of 12\n\n" + "\n".join(rows) + "\n\nCon-\nfidential", False


def c_email_reply(rng: random.Random, s: Slot) -> tuple[str, bool]:
    name = rng.choice(NAMES)
    return (f"From: Support Desk <no-reply@helpdesk.ledgerly.com>\nSubject: Re: [#{rng.randint(10000, 99999)}] "
            f"Update\n\n{sentence(rng, s)}\n\nOn Fri, 3 May 2024 at 14:22, {name} wrote:\n"
            "> Any news on my case?\n"), False


CARRIERS: dict[str, tuple[Carrier, bool]] = {  # name: (carrier, whether it holds multi-line values)
    "jira": (c_jira, True), "zendesk_csv": (c_zendesk_csv, True), "intercom": (c_intercom, True),
    "slack": (c_slack, True), "teams": (c_teams, True), "gh_env": (c_gh_env, True),
    "gh_actions": (c_gh_actions, True), "notebook": (c_notebook, True), "sql_dump": (c_sql, True),
    "postman": (c_postman, True), "har": (c_har, True), "tfstate": (c_tfstate, True), "cfn": (c_cfn, True),
    "journald": (c_journald, True), "access_log": (c_access_log, False), "sentry": (c_sentry, True),
    "langchain": (c_langchain, True), "transcript": (c_transcript, False), "sms": (c_sms, False),
    "pdf": (c_pdf, False), "email_reply": (c_email_reply, True),
}
PHRASE_CLASS = {kind: cls for kind, (_, cls, _) in KINDS.items()} | {f"phone_{cc}": "phone" for cc in PHONES}


def make_slot(rng: random.Random, kind: str) -> Slot:
    if kind.startswith("phone_"):
        cc = kind[6:]
        made = phone_text(rng, cc)
        lang = PHONE_LANG[cc] if rng.random() < 0.7 else "en"
        return Slot(kind, made, rng.choice(PHONE_KEYS), rng.choice(PHRASES["phone"][lang]), lang)
    if kind == "disguised":
        made, cls = disguised(rng)
        keys = {"secret": ("API_TOKEN", "stripe_key"), "email": ("email",), "card": ("card_number",),
                "iban": ("iban",), "phone": ("phone",)}[cls]
    else:
        gen, cls, keys = KINDS[kind]
        made = gen(rng)
    langs = PHRASES[cls]
    lang = rng.choice(sorted(langs))
    return Slot(kind, made, rng.choice(keys), rng.choice(langs[lang]), lang if lang in SENTENCES else "en")


def with_transcript_digits(rng: random.Random, slot: Slot, carrier: str) -> Slot:
    """In a voice transcript, half the digit values are as the speech-to-text typed them: digit by digit."""
    cls = PHRASE_CLASS.get(slot.kind)
    if carrier != "transcript" or cls not in ("phone", "card", "ssn", "iban") or rng.random() < 0.5:
        return slot
    value = spaced_digits(slot.made.value)
    return Slot(slot.kind, Made(value, value, slot.made.style + "_spaced"), slot.key, slot.phrase, slot.lang)


def all_kinds() -> list[str]:
    return list(KINDS) + [f"phone_{cc}" for cc in PHONES] + ["disguised"]


def generate() -> Iterator[Case]:
    """PER_KIND cases of every kind, each carrier in turn; the same cases on every call. In an access log the
    value is URL-encoded, and so is its secret (the text that must not survive)."""
    rng = random.Random(SEED)
    for kind in all_kinds():
        n = 0
        for i in range(PER_KIND * 2):
            if n == PER_KIND:
                break
            name = list(CARRIERS)[i % len(CARRIERS)]
            carrier, lines_ok = CARRIERS[name]
            slot = make_slot(rng, kind)
            if "\n" in slot.made.value and not lines_ok:
                continue
            slot = with_transcript_digits(rng, slot, name)
            text, is_json = carrier(rng, slot)
            secret = quote(slot.made.secret, safe="") if name == "access_log" else slot.made.secret
            if not is_json and (i + i // len(CARRIERS)) % 3 == 0:  # a third of each carrier's cases, not a third of
                # the carriers (their count is a multiple of 3)
                carried, is_json, name = json.dumps({"tool": name, "output": text}), True, name + ".json"
            else:
                carried = text
            n += 1
            yield Case(kind, secret, carried, is_json, text, f"{name}/{slot.made.style}")


# ---- near misses ----------------------------------------------------------------------------------------------------

def bad_card(rng: random.Random) -> str:
    number, _ = card_number(rng)
    return number[:-1] + str((int(number[-1]) + rng.randint(1, 9)) % 10)


def bad_iban(rng: random.Random) -> str:
    compact, _ = iban_value(rng)
    check = compact[2:4]
    while check == compact[2:4]:
        check = f"{rng.randint(2, 98):02d}"
    return compact[:2] + check + compact[4:]


def bad_ssn(rng: random.Random) -> str:
    area = rng.choice(("000", "666", str(rng.randint(900, 999))))
    if rng.random() < 0.3:
        return f"{rng.randint(1, 665):03d}-00-{rng.randint(1, 9999):04d}"
    if rng.random() < 0.3:
        return f"{rng.randint(1, 665):03d}-{rng.randint(1, 99):02d}-0000"
    return f"{area}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


def data_uri(rng: random.Random) -> str:
    if rng.random() < 0.5:
        raw = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + rng.randbytes(40)
        return "data:image/png;base64," + base64.b64encode(raw).decode()
    text = rng.choice(("Thank you for contacting support.", "Your appointment is confirmed.", "hello world"))
    return "data:text/plain;base64," + base64.b64encode(text.encode()).decode()


def public_key(rng: random.Random) -> str:
    key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32)).public_key()
    if rng.random() < 0.5:
        return key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode() + \
            " deploy@ci-runner"
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "bad_luhn_card": lambda r: f"card number: {group(bad_card(r), 4, r.choice((' ', '-', '')))} (declined: invalid)",
    "bad_mod97_iban": lambda r: f"IBAN: {group(bad_iban(r), 4, ' ')} - rejected, checksum",
    "bad_ssn": lambda r: f"SSN: {bad_ssn(r)} (form validation failed)",
    "version": lambda r: r.choice((f"upgraded to v{r.randint(1, 9)}.{r.randint(0, 40)}.{r.randint(0, 20)}",
                                   f"Python {r.choice(('3.11', '3.12'))}.{r.randint(0, 9)}",
                                   f"release 1.{r.randint(0, 9)}.0-rc.{r.randint(1, 5)}+build.2024050{r.randint(1, 9)}",
                                   f"node v20.{r.randint(1, 15)}.{r.randint(0, 9)}")),
    "build_id": lambda r: r.choice((f"CI run {digits(r, 10)} finished", f"build #{r.randint(1000, 99999)} green",
                                    f"artifact build-2024050{r.randint(1, 9)}.{r.randint(1, 30)}")),
    "uuid": lambda r: f"request_id={guid(r)} status=200",
    "git_sha": lambda r: r.choice((f"commit {pick(r, HEX, 40)}", f"fixed in {pick(r, HEX, 7)} (merge)")),
    "content_hash": lambda r: r.choice((f"sha256:{pick(r, HEX, 64)}  dist/app.tar.gz",
                                        f"\"integrity\": \"sha512-{base64.b64encode(r.randbytes(64)).decode()}\"",
                                        f"md5 {pick(r, HEX, 32)} report.pdf", f"ETag: \"{pick(r, HEX, 32)}\"")),
    "timestamp": lambda r: r.choice((f"ts={1714742521 + r.randint(0, 10**6)}",
                                     f"created_at {1714742521000 + r.randint(0, 10**9)}",
                                     f"{stamp(r)}.{digits(r, 6)}Z INFO started", f"batch 2024050{r.randint(1, 9)}"
                                     f"1422{r.randint(10, 59)}")),
    "order_id": lambda r: r.choice((f"Order #{digits(r, 3)}-{digits(r, 7)}-{digits(r, 7)}",
                                    f"invoice INV-2024-{digits(r, 6)}", f"ticket ZD-{digits(r, 7)}",
                                    f"see SUP-{r.randint(100, 9999)}", f"PO {digits(r, 10)}")),
    "tracking": lambda r: r.choice((f"UPS 1Z{pick(r, B32[:26], 6)}{digits(r, 10)}", f"FedEx {digits(r, 12)}",
                                    f"USPS {group(digits(r, 22), 4, ' ')}", f"DHL {digits(r, 10)}")),
    "phone_like_bare": lambda r: r.choice((f"batch {digits(r, 4)} {digits(r, 3)} {digits(r, 3)} processed",
                                           f"qty 0{digits(r, 9)} rows", f"error code {digits(r, 10)}",
                                           f"range 06 {digits(r, 2)} {digits(r, 2)} {digits(r, 2)} {digits(r, 2)}")),
    "placeholder": lambda r: r.choice(("api_key=YOUR_API_KEY", "Authorization: Bearer <token>",
                                       "STRIPE_KEY=sk_test_xxx", "password: ********", "DB_PASSWORD=${DB_PASSWORD}",
                                       "token: ${{ secrets.GITHUB_TOKEN }}", "OPENAI_API_KEY=sk-...",
                                       "password: <your-password>", "SLACK_WEBHOOK_URL=https://hooks.slack.com/..."
                                       , "secret_key = os.environ['SECRET_KEY']", "client_secret: REDACTED",
                                       "pwd: changeme", "AWS_SECRET_ACCESS_KEY=\"$AWS_SECRET\"")),
    "masked": lambda r: r.choice((f"card **** **** **** {digits(r, 4)}", f"card ending in {digits(r, 4)}",
                                  f"IBAN NL** **** **** **{digits(r, 2)}", f"phone +31 6 ****{digits(r, 4)}",
                                  f"email j***@{r.choice(DOMAINS)}", f"key sk_live_••••{digits(r, 4)}",
                                  f"AKIA************{pick(r, B32, 4)}")),
    "localhost_email": lambda r: r.choice(("mail sent to user@localhost", "root@localhost: cron output",
                                           "git@github.com:ledgerly/api.git", f"ssh deploy@10.0.{r.randint(0, 9)}.17",
                                           "postgres@db-0:~$ psql")),
    "at_filename": lambda r: r.choice((f"icon@{r.randint(2, 3)}x.png", "logo@3x.webp", "getty@tty1.service",
                                       "openvpn-client@home.service", "sshd@.service started")),
    "package_spec": lambda r: r.choice((f"lodash@4.17.{r.randint(1, 21)}", "@babel/core@7.24.5",
                                        f"nginx@sha256:{pick(r, HEX, 64)}",
                                        f"ghcr.io/ledgerly/api@sha256:{pick(r, HEX, 64)}",
                                        "pnpm add react@18.3.1")),
    "decorator": lambda r: r.choice(("@app.route('/health')", "@pytest.fixture(scope='session')", "@Override",
                                     "@dataclass(frozen=True)", "@retry(tries=3)")),
    "k8s_name": lambda r: r.choice((f"pod/api-{pick(r, HEX[:10] + 'bcdf', 10)}-{pick(r, 'bcdfghjklmnpqrstvwxz24', 5)}",
                                    "kubectl get secret db-credentials -o yaml", "deployment.apps/payments-worker",
                                    "secret/stripe-api-key created", "configmap/app-config unchanged")),
    "arn": lambda r: r.choice((f"arn:aws:iam::{digits(r, 12)}:role/ci-deploy",
                               f"arn:aws:secretsmanager:eu-west-1:{digits(r, 12)}:secret:prod/db-{pick(r, B62, 6)}",
                               f"arn:aws:sns:us-east-1:{digits(r, 12)}:alerts")),
    "public_key": public_key,
    "data_uri": data_uri,
    "chat_id": lambda r: r.choice((f"channel C0{pick(r, B32, 8)}", f"user U0{pick(r, B32, 9)} joined",
                                   f"thread_ts {1714742521 + r.randint(0, 10**6)}.{digits(r, 6)}")),
    "amount": lambda r: r.choice((f"total €{r.randint(1, 999)}.{digits(r, 3)},{digits(r, 2)}",
                                  f"R$ {r.randint(1, 99)}.{digits(r, 3)},{digits(r, 2)}",
                                  f"{r.randint(1, 9)} {digits(r, 3)} {digits(r, 3)},{digits(r, 2)} zł")),
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """(sort, text): NEGATIVES_PER_SORT near misses of each sort, none of which holds a value to redact."""
    rng = random.Random(SEED + 1)
    for sort, make in NEGATIVES.items():
        for _ in range(NEGATIVES_PER_SORT):
            yield sort, make(rng)
