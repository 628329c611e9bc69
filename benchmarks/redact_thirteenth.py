"""The thirteenth redaction corpus: communications, clients and security telemetry, written blind to the rules.

Values are planted where a company's messages, client software and security tooling carry them: raw e-mail (RFC
5322 headers, MIME multipart with quoted-printable bodies, soft line breaks, `=3D` and `=40`, signatures, `> `
quoted replies, mbox), chat exports (Slack export JSON, Microsoft Teams Graph messages, WhatsApp `.txt`, Telegram
Desktop JSON with text entities, Discord, Matrix events), HTTP clients (HAR 1.2, `curl -v`, HTTPie, Postman
collection v2.1), mobile logs (Android logcat threadtime, iOS unified log, React Native Metro), crash reports
(Sentry events with frame vars, Crashlytics logs, Apple `.ips`, Python tracebacks with locals, Java traces), SIEM
and audit records (CloudTrail, Okta System Log, Google Workspace Reports API, Splunk key=value, Elastic ECS,
Windows Event XML 4688, auditd EXECVE, sudo in auth.log), password-manager exports (Bitwarden, 1Password,
KeePass, Chrome CSV), git diffs and pull-request review JSON, Jupyter notebooks and OCR text of screenshots, with
prose in 27 languages (Portuguese as Brazil and Portugal write it).

Formats, each from its public specification or the provider's published format:
- password, labelled_key: free text after labels (OWASP ASVS wording; labels in the message's language).
- aws_secret: 40 characters of base64 (`/`, `+` included) beside an `AKIA`/`ASIA` id (AWS IAM user guide).
- webhook: Slack incoming webhooks, Discord, Teams (`webhook.office.com/webhookb2`), Google Chat, Mattermost,
  Zapier, Feishu, DingTalk, WeCom, IFTTT and Azure Logic Apps trigger URLs (each vendor's webhook docs).
- stripe_whsec: `whsec_` signing secrets (Stripe webhooks docs; the CLI's 64-hex form).
- connection_string: Azure Storage/Service Bus strings (`AccountKey=`, `SharedAccessKey=`), ADO.NET, JDBC, ODBC
  keywords and RFC 3986 userinfo; the secret is the password or key in them.
- disguised: provider keys with U+200B..U+2060/U+FEFF, bidi controls (U+202A..U+202E, U+2066..U+2069), U+00AD
  or full-width forms (U+FF01..U+FF5E) inside (Unicode TR #36 and TR #9).
- email: RFC 5322 addr-spec, RFC 6531 internationalised, RFC 3986 `%40`, JSON `\\u0040`, HTML `&#64;`, mailto:
  (RFC 6068), quoted-printable `=40` (RFC 2045).
- phones: the national numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT, and the ITU-T E.164 national plans
  of ES, IT, BR, MX, RU, UA, TR, SA, JP, KR, CN, VN, ID, PH, KE, NG), national and international forms.
- ssn: SSA rules (no area 000, 666 or 9xx, no group 00, no serial 0000). card: ISO/IEC 7812 IIN ranges of Visa,
  Mastercard, Amex, Discover, JCB, Diners, UnionPay, Mir, Troy, RuPay, Elo with Luhn. iban: ISO 13616 and the
  SWIFT IBAN registry's BBAN structures, MOD 97-10.
- Providers: Atlassian `ATATT3xFfGF0` API tokens, Bitbucket `ATBB` app passwords, Figma `figd_`, Notion
  `secret_`/`ntn_`, Airtable `pat….`, Mailchimp `-usNN`, Postmark server tokens, Sentry `sntrys_`/`sntryu_`, Grafana
  `glsa_`/`glc_`, New Relic `NRAK-`/`…NRAL`, PagerDuty REST keys, Cloudflare API tokens and global keys,
  DigitalOcean `dop_v1_`, Fly.io `FlyV1 fm2_`, Supabase `sbp_`, Vercel, Netlify `nfp_`, Heroku `HRKU-`, Firebase
  FCM legacy server keys (`AAAA…:APA91b…`), Telegram Bot API tokens, Discord bot tokens, Microsoft Entra client
  secrets (`…Q~…`), Apple app-specific passwords (`xxxx-xxxx-xxxx-xxxx`).
- private_key: PKCS #8, SEC 1 and OpenSSH PEM (RFC 7468), also inside a GCP service-account JSON; the RSA keys are
  DER-shaped with random integers (generating real ones would make the module slow), the EC and Ed25519 keys real.
- jwt: RFC 7519 HS256. auth_header: RFC 7617 Basic, RFC 6750 Bearer, RFC 7616 Digest `response=`, SigV4
  `Signature=`. session_cookie: RFC 6265 Cookie/Set-Cookie values of common frameworks.

Every case's `secret` is the value as the text holds it: a carrier that encodes its text (quoted-printable, XML and
HTML escapes) plants the encoded value, and an OCR line wrap plants the value with its newline.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import random
import re
import string
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from benchmarks.corpus_formats import (
    B62,
    b64url,
    bban,
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

SEED = 13
PER_KIND = 100
"""Cases written of each kind."""

HEX = "0123456789abcdef"
URLSAFE = B62 + "-_"
B64 = string.ascii_letters + string.digits + "+/"

OUTSIDE_TARGET: frozenset[str] = frozenset()
"""Kinds printed but not held to the recall target (none: every kind here is a secret or personal data)."""


@dataclass(frozen=True)
class Case:
    """One planted value: its kind, `carrier/style` form, the value as written, and the text that carries it."""

    kind: str
    form: str
    secret: str
    text: str
    carried: str
    is_json: bool


@dataclass(frozen=True)
class Piece:
    """What a carrier places: the secret, what surrounds it (`shown`: the secret, a URI, a header, a key pair), a
    sentence in `lang` holding `shown` beside a context word, a field name, and a command line (or "")."""

    secret: str
    shown: str
    sentence: str
    key: str
    command: str
    lang: str


Carried = tuple[str, bool, str]
"""A carrier's output: the text, whether it is JSON, the secret as the text holds it."""


# ---- languages: the context words and the sentences around a value -------------------------------------------

_W = ("pw", "phone", "email", "card", "iban", "key", "token", "secret")
_LEX_ROWS = {
    "en": ("password|Password|pwd|passcode", "phone|mobile|cell|Tel|call me at|WhatsApp", "email|e-mail|Email address",
           "card number|credit card|Card no.", "IBAN|bank account (IBAN)", "API key|API Key|api key",
           "access token|Access Token|auth token", "secret key|Secret Key|client secret"),
    "es": ("contraseña|clave", "teléfono|móvil|celular|llámame al", "correo|correo electrónico",
           "número de tarjeta|tarjeta", "IBAN|cuenta IBAN", "clave de API|API key", "token de acceso",
           "clave secreta"),
    "pt": ("senha|palavra-passe", "telefone|celular|telemóvel|WhatsApp", "e-mail|endereço de e-mail",
           "número do cartão|cartão", "IBAN", "chave da API|chave de API", "token de acesso", "chave secreta"),
    "de": ("Passwort|Kennwort|PW", "Telefon|Tel.|Handy|Mobil|ruf mich an unter", "E-Mail|Mail-Adresse",
           "Kartennummer|Kreditkarte", "IBAN|Kontonummer (IBAN)", "API-Schlüssel|API Key", "Zugriffstoken",
           "geheimer Schlüssel"),
    "fr": ("mot de passe|mdp|MDP", "téléphone|tél|portable|appelez-moi au", "e-mail|adresse mail|courriel",
           "numéro de carte|carte bancaire", "IBAN|RIB (IBAN)", "clé API|clé d'API", "jeton d'accès",
           "clé secrète"),
    "it": ("password|parola d'ordine", "telefono|cellulare|cell.|chiamami al", "email|indirizzo email",
           "numero della carta|carta di credito", "IBAN|codice IBAN", "chiave API", "token di accesso",
           "chiave segreta"),
    "nl": ("wachtwoord", "telefoon|mobiel|tel.|bel me op", "e-mailadres|mail", "kaartnummer|creditcard",
           "IBAN|rekeningnummer", "API-sleutel", "toegangstoken", "geheime sleutel"),
    "pl": ("hasło", "telefon|tel. kom.|komórka|zadzwoń pod", "e-mail|adres e-mail", "numer karty|karta",
           "IBAN|numer konta", "klucz API", "token dostępu", "klucz tajny"),
    "ru": ("пароль", "телефон|тел.|мобильный|звоните", "почта|email|эл. почта", "номер карты|карта", "IBAN",
           "API-ключ|ключ API", "токен доступа", "секретный ключ"),
    "uk": ("пароль", "телефон|моб.|мобільний|дзвоніть", "пошта|ел. пошта", "номер картки|картка",
           "IBAN|рахунок IBAN", "ключ API", "токен доступу", "секретний ключ"),
    "tr": ("şifre|parola", "telefon|cep|tel|beni arayın", "e-posta", "kart numarası|kredi kartı", "IBAN",
           "API anahtarı", "erişim belirteci", "gizli anahtar"),
    "ar": ("كلمة المرور|كلمة السر", "الهاتف|الجوال|رقم الهاتف|اتصل بي على", "البريد الإلكتروني|الإيميل",
           "رقم البطاقة|بطاقة الائتمان", "الآيبان|IBAN", "مفتاح API", "رمز الوصول", "المفتاح السري"),
    "he": ("סיסמה", "טלפון|נייד|מספר טלפון", "אימייל|דואל", "מספר כרטיס|כרטיס אשראי", "IBAN", "מפתח API",
           "טוקן גישה", "מפתח סודי"),
    "fa": ("رمز عبور|گذرواژه", "تلفن|موبایل|شماره تماس", "ایمیل|پست الکترونیک", "شماره کارت", "شبا|IBAN",
           "کلید API", "توکن دسترسی", "کلید مخفی"),
    "hi": ("पासवर्ड", "फ़ोन|मोबाइल नंबर|फोन नंबर|कॉल करें", "ईमेल", "कार्ड नंबर", "IBAN", "API कुंजी|एपीआई की",
           "एक्सेस टोकन", "गुप्त कुंजी"),
    "bn": ("পাসওয়ার্ড", "ফোন|মোবাইল নম্বর|ফোন নম্বর", "ইমেইল", "কার্ড নম্বর", "IBAN", "API কী", "অ্যাক্সেস টোকেন",
           "গোপন কী"),
    "ta": ("கடவுச்சொல்", "தொலைபேசி|கைபேசி எண்|மொபைல்", "மின்னஞ்சல்", "அட்டை எண்", "IBAN", "API விசை",
           "அணுகல் டோக்கன்", "ரகசிய விசை"),
    "ja": ("パスワード", "電話番号|携帯|TEL|電話", "メールアドレス|メール", "カード番号", "IBAN", "APIキー",
           "アクセストークン", "シークレットキー"),
    "ko": ("비밀번호", "전화번호|휴대폰|연락처", "이메일", "카드번호", "IBAN", "API 키", "액세스 토큰", "비밀 키"),
    "zh": ("密码", "电话|手机号|联系电话", "邮箱|电子邮件", "卡号|信用卡号", "IBAN", "API密钥", "访问令牌", "密钥"),
    "zh-tw": ("密碼", "電話|手機|聯絡電話", "電子郵件|信箱", "卡號|信用卡號", "IBAN", "API 金鑰", "存取權杖",
              "秘密金鑰"),
    "vi": ("mật khẩu", "điện thoại|SĐT|số điện thoại", "email|thư điện tử", "số thẻ", "IBAN", "khóa API",
           "mã truy cập", "khóa bí mật"),
    "th": ("รหัสผ่าน", "โทร|เบอร์โทรศัพท์|มือถือ", "อีเมล", "หมายเลขบัตร", "IBAN", "คีย์ API", "โทเค็นการเข้าถึง",
           "คีย์ลับ"),
    "id": ("kata sandi|password", "telepon|HP|no. hp|WA", "email|surel", "nomor kartu", "IBAN", "kunci API",
           "token akses", "kunci rahasia"),
    "ms": ("kata laluan", "telefon|no. tel|telefon bimbit", "e-mel", "nombor kad", "IBAN", "kunci API",
           "token akses", "kunci rahsia"),
    "fil": ("password", "telepono|cellphone number|numero ko", "email", "numero ng card", "IBAN", "API key",
            "access token", "secret key"),
    "sw": ("nenosiri", "simu|namba ya simu|nipigie", "barua pepe", "nambari ya kadi", "IBAN", "ufunguo wa API",
           "tokeni ya ufikiaji", "ufunguo wa siri"),
}
LEX: dict[str, dict[str, tuple[str, ...]]] = {
    lang: {w: tuple(cell.split("|")) for w, cell in zip(_W, row, strict=True)} for lang, row in _LEX_ROWS.items()}
"""Per language, per context word (`_W`), the labels a message writes before a value."""

_OWN_FRAMES = {
    "en": ("Hi team, {L}: {v} thanks", "fyi the {L} is {v}", "{L} = {v}"),
    "nl": ("Hoi, hierbij het {L}: {v} groetjes",), "pl": ("Cześć, {L}: {v} pozdrawiam",),
    "es": ("Hola, te paso la info. {L}: {v} ¡Gracias!", "Aquí va el dato → {L}: {v}"),
    "pt": ("Oi, segue o {L}: {v} obrigado!", "Bom dia, {L} — {v}"), "uk": ("Привіт! {L}: {v} дякую",),
    "de": ("Hallo zusammen, {L}: {v} Viele Grüße", "anbei {L} = {v}"), "tr": ("Merhaba, {L}: {v} teşekkürler",),
    "fr": ("Bonjour, voici le {L} : {v} Merci !", "pour info {L} → {v}"), "ar": ("مرحبا، {L}: {v} شكرا",),
    "it": ("Ciao, ecco {L}: {v} grazie", "ti giro {L} = {v}"), "he": ("היי, {L}: {v} תודה",),
    "ru": ("Привет! {L}: {v} спасибо", "вот {L} — {v}"), "fa": ("سلام، {L}: {v} ممنون",),
    "ja": ("お疲れ様です。{L}：{v} よろしくお願いします", "{L}は {v} です"), "hi": ("नमस्ते, {L}: {v} धन्यवाद",),
    "ko": ("안녕하세요, {L}: {v} 감사합니다", "{L}는 {v} 입니다"), "bn": ("হ্যালো, {L}: {v} ধন্যবাদ",),
    "zh": ("你好，{L}：{v} 谢谢", "{L}是 {v}"), "zh-tw": ("您好，{L}：{v} 謝謝",),
    "ta": ("வணக்கம், {L}: {v} நன்றி",),
    "vi": ("Chào anh, {L}: {v} cảm ơn",), "th": ("สวัสดีครับ {L}: {v} ขอบคุณครับ",),
    "id": ("Halo kak, {L}: {v} makasih",),
    "ms": ("Hai, {L}: {v} terima kasih",), "fil": ("Hi po, eto ang {L}: {v} salamat",),
    "sw": ("Habari, {L}: {v} asante",),
}
FRAMES: dict[str, tuple[str, ...]] = {lang: own + ("{L} {v}",) for lang, own in _OWN_FRAMES.items()}
"""Per language, sentences around a label `{L}` and its value `{v}`."""

ALL_LANGS = tuple(LEX)
NAMES = ("Ana Souza", "Jonas Weber", "Priya Nair", "Chloé Martin", "Mehmet Yılmaz", "Olena Koval", "Kenji Sato",
         "Minji Park", "Wei Zhang", "Nguyen Van An", "Fatima Al-Sayed", "Tomasz Nowak", "Sipho Dlamini",
         "Juan Pérez", "Giulia Rossi", "Daan de Vries", "Amani Otieno", "Rafael Costa", "Noa Levi", "Reza Ahmadi")


def sentence(rng: random.Random, lang: str, word: str, shown: str) -> str:
    """A sentence in `lang` with one of its labels for `word` (a word of `_W`, or a label as written) before
    `shown`."""
    return rng.choice(FRAMES[lang]).format(L=rng.choice(LEX[lang].get(word, (word,))), v=shown)


# ---- values of the issue's kinds -------------------------------------------------------------------------------

PW_WORDS = ("Sunflower", "Tigre", "Maracuja", "Schnee", "Pivoine", "Drago", "Vlinder", "Kot", "Medved", "Kartal",
            "Sakura", "Haneul", "Panda", "Biển", "Chang", "Merdeka", "Harimau", "Bituin", "Simba", "Orion")
PW_SYMBOLS = "!@#$%^*()-_+=.?~:;[]{}"


def password(rng: random.Random, _i: int = 0) -> tuple[str, str]:
    """A password of one of the shapes people and generators choose."""
    style = rng.choice(("word_digits", "random", "passphrase", "generated", "pin_mix"))
    if style == "word_digits":
        value = rng.choice(PW_WORDS) + digits(rng, rng.choice((2, 4))) + rng.choice("!#$%*?.")
    elif style == "random":
        value = pick(rng, string.ascii_letters + string.digits + PW_SYMBOLS, rng.randint(12, 20))
    elif style == "passphrase":
        value = "-".join(w.lower() for w in rng.sample(PW_WORDS, 4)) + digits(rng, 1)
    elif style == "generated":  # Bitwarden/1Password default: 20 letters and digits
        value = pick(rng, string.ascii_letters + string.digits, 20)
    else:
        value = pick(rng, string.ascii_uppercase, 2) + digits(rng, 6) + pick(rng, "!@#$", 1) + pick(rng, "xyzq", 2)
    return value, style


def aws_pair(rng: random.Random) -> tuple[str, str]:
    """An access key id (`AKIA` long-term, `ASIA` session) and its 40-character secret with `/` and `+`."""
    secret = pick(rng, B64, 40)
    while "/" not in secret or "+" not in secret:
        secret = pick(rng, B64, 40)
    return rng.choice(("AKIA", "ASIA")) + pick(rng, string.ascii_uppercase + "234567", 16), secret


def webhook(rng: random.Random, _i: int) -> tuple[str, str]:
    """A chat or automation webhook URL (its credential part is told by `webhook_credential`)."""
    vendor = rng.choice(("slack", "discord", "teams", "gchat", "mattermost", "zapier", "feishu", "dingtalk", "wecom",
                         "ifttt", "logicapps"))
    up = string.ascii_uppercase + string.digits
    uuid = _uuid(rng)
    urls = {
        "slack": lambda: f"https://hooks.slack.com/services/T{pick(rng, up, 10)}/B{pick(rng, up, 10)}/"
                         f"{pick(rng, string.ascii_letters + string.digits, 24)}",
        "discord": lambda: f"https://{rng.choice(('discord.com', 'discordapp.com', 'ptb.discord.com'))}/api/webhooks/"
                           f"{rng.randint(10**17, 10**19 - 1)}/{pick(rng, URLSAFE, 68)}",
        "teams": lambda: f"https://{rng.choice(('contoso', 'fabrikam', 'northwind'))}.webhook.office.com/webhookb2/"
                         f"{uuid}@{_uuid(rng)}/IncomingWebhook/"
                         f"{pick(rng, HEX, 32)}/{_uuid(rng)}",
        "gchat": lambda: f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
                         f"{pick(rng, URLSAFE, 33)}&token={pick(rng, URLSAFE, 43)}",
        "mattermost": lambda: f"https://chat.{rng.choice(('acme.io', 'globex.dev'))}/hooks/"
                              f"{pick(rng, string.ascii_lowercase + string.digits, 26)}",
        "zapier": lambda: f"https://hooks.zapier.com/hooks/catch/{digits(rng, 7)}/"
                          f"{pick(rng, string.ascii_lowercase + string.digits, 6)}/",
        "feishu": lambda: f"https://open.feishu.cn/open-apis/bot/v2/hook/{uuid}",
        "dingtalk": lambda: f"https://oapi.dingtalk.com/robot/send?access_token={pick(rng, HEX, 64)}",
        "wecom": lambda: f"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={uuid}",
        "ifttt": lambda: f"https://maker.ifttt.com/trigger/door_open/with/key/{pick(rng, URLSAFE, 22)}",
        "logicapps": lambda: f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/"
                             f"{pick(rng, HEX, 32)}/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers"
                             f"%2Fmanual%2Frun&sv=1.0&sig={pick(rng, URLSAFE, 43)}",
    }
    return urls[vendor](), vendor


WEBHOOK_CREDENTIAL = {
    "slack": r"/services/(.+)", "discord": r"/api/webhooks/(.+)", "teams": r"/webhookb2/(.+)",
    "gchat": r"&token=(.+)", "mattermost": r"/hooks/(.+)", "zapier": r"/catch/(.+)", "feishu": r"/hook/(.+)",
    "dingtalk": r"access_token=(.+)", "wecom": r"key=(.+)", "ifttt": r"/with/key/(.+)", "logicapps": r"&sig=(.+)",
}
"""Per vendor, the part of its URL that authorises a post (the path or query value its docs say to keep secret);
the scheme, host and fixed path segments are public."""


def webhook_piece(rng: random.Random, i: int) -> tuple[Piece, str]:
    """A webhook URL shown whole, its credential part the secret (as in the twelfth corpus)."""
    url, vendor = webhook(rng, i)
    lang = rng.choice(ALL_LANGS)
    credential = re.search(WEBHOOK_CREDENTIAL[vendor], url).group(1)
    words = ("webhook", "Slack webhook", "Webhook-URL")
    return Piece(credential, url, sentence(rng, lang, words[i % len(words)], url), rng.choice(WEBHOOK_KEYS),
                 rng.choice(WEBHOOK_COMMANDS).format(v=url), lang), vendor


def stripe_whsec(rng: random.Random, _i: int) -> tuple[str, str]:
    """A Stripe webhook signing secret: dashboard endpoints' 32 base62, or the CLI's 64 hex."""
    if rng.random() < 0.7:
        return "whsec_" + pick(rng, string.ascii_letters + string.digits, 32), "dashboard"
    return "whsec_" + pick(rng, HEX, 64), "cli"


def connection(rng: random.Random) -> tuple[str, str, str]:
    """A connection string (shown) and the password or key in it (secret), with its style."""
    pw = pick(rng, string.ascii_letters + string.digits, rng.randint(12, 22)) + rng.choice(("", "!", "_9", "#"))
    user = rng.choice(("app_rw", "svc-crm", "report", "admin", "sa", "mobile_api"))
    host = rng.choice(("db1.int.acme.io", "pg-prod.c9x2k1.eu-west-1.rds.amazonaws.com", "10.20.3.14",
                       "sql-crm.database.windows.net", "mongo-0.mongo.svc.cluster.local"))
    style = rng.choice(("azure_storage", "servicebus", "ado", "jdbc_pg", "jdbc_mssql", "odbc", "uri_pg", "uri_mongo",
                        "uri_redis", "uri_amqp", "uri_mysql"))
    if style == "azure_storage":
        key = pick(rng, B64, 86) + "=="
        return (f"DefaultEndpointsProtocol=https;AccountName=st{pick(rng, string.ascii_lowercase, 8)};AccountKey={key};"
                f"EndpointSuffix=core.windows.net", key, style)
    if style == "servicebus":
        key = pick(rng, B64, 43) + "="
        return (f"Endpoint=sb://ns-{pick(rng, string.ascii_lowercase, 6)}.servicebus.windows.net/;SharedAccessKeyName="
                f"RootManageSharedAccessKey;SharedAccessKey={key}", key, style)
    pw_uri = pw.replace("#", "%23")
    shapes = {
        "ado": f"Server=tcp:{host},1433;Initial Catalog=crm;User ID={user};Password={pw};Encrypt=True;",
        "jdbc_pg": f"jdbc:postgresql://{host}:5432/crm?user={user}&password={pw_uri}&ssl=true",
        "jdbc_mssql": f"jdbc:sqlserver://{host}:1433;databaseName=crm;user={user};password={pw};encrypt=true",
        "odbc": f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=crm;Uid={user};Pwd={pw};",
        "uri_pg": f"postgresql://{user}:{pw_uri}@{host}:5432/crm?sslmode=require",
        "uri_mongo": f"mongodb+srv://{user}:{pw_uri}@cluster0.{pick(rng, string.ascii_lowercase, 5)}.mongodb.net/app",
        "uri_redis": f"rediss://default:{pw_uri}@{host}:6380/0",
        "uri_amqp": f"amqps://{user}:{pw_uri}@{host}:5671/prod",
        "uri_mysql": f"mysql://{user}:{pw_uri}@{host}:3306/shop",
    }
    secret = pw_uri if style.startswith(("uri", "jdbc_pg")) else pw
    return shapes[style], secret, style


def provider_key(rng: random.Random) -> str:
    """A key of a well-known provider, the base that `disguised` hides characters in."""
    return rng.choice((
        lambda: "ghp_" + pick(rng, B62, 36), lambda: "sk_live_" + pick(rng, B62, 24),
        lambda: "AKIA" + pick(rng, string.ascii_uppercase + "234567", 16), lambda: "AIza" + pick(rng, URLSAFE, 35),
        lambda: f"xoxb-{digits(rng, 11)}-{digits(rng, 12)}-{pick(rng, B62, 24)}",
        lambda: "glpat-" + pick(rng, URLSAFE, 20), lambda: "sk-proj-" + pick(rng, URLSAFE, 48),
        lambda: "figd_" + pick(rng, URLSAFE, 40), lambda: "dop_v1_" + pick(rng, HEX, 64)))()


ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def disguised(rng: random.Random, _i: int) -> tuple[str, str]:
    """A provider key with invisible or look-alike characters inside it."""
    key = provider_key(rng)
    style = rng.choice(("zero_width", "bidi", "soft_hyphen", "fullwidth", "fullwidth_part", "mixed"))
    if style.startswith("fullwidth"):
        cut = len(key) if style == "fullwidth" else rng.randint(6, len(key) - 4)
        return "".join(chr(ord(c) + 0xFEE0) for c in key[:cut]) + key[cut:], style
    marks = {"zero_width": ZERO_WIDTH, "bidi": BIDI, "soft_hyphen": "\u00ad", "mixed": ZERO_WIDTH + BIDI + "\u00ad"}
    chars = list(key)
    for pos in sorted(rng.sample(range(2, len(key) - 2), rng.randint(1, 3)), reverse=True):
        chars.insert(pos, rng.choice(marks[style]))
    return "".join(chars), style


EMAIL_LOCAL = ("ana.souza", "j.weber", "priya.nair", "chloe.martin", "mehmet.yilmaz", "o.koval", "kenji_sato",
               "minji.park", "wei.zhang", "an.nguyen", "fatima.alsayed", "tnowak", "sipho.d", "juan.perez+crm",
               "giulia.rossi", "daan", "amani.otieno", "rafael_costa", "noa.levi", "reza.ahmadi")
EMAIL_DOMAINS = ("gmail.com", "outlook.com", "yahoo.co.jp", "naver.com", "qq.com", "web.de", "orange.fr",
                 "libero.it", "uol.com.br", "yandex.ru", "ukr.net", "hotmail.com.tr", "acme-logistics.com",
                 "contoso.co.uk", "mail.globex.io", "student.unimelb.edu.au", "proton.me", "icloud.com")
EMAIL_IDN = ("jürgen.müller@bäckerei-schmidt.de", "почта@пример-компания.рф", "用户@例子.公司", "josé.núñez@correo.es",
             "उपयोगकर्ता@उदाहरण.भारत", "사용자@회사.한국", "ユーザー@会社.jp", "ผู้ใช้@บริษัท.ไทย", "θέμις@εταιρεία.gr",
             "ελένη@παράδειγμα.ελ", "çağrı@şirket.com.tr", "مستخدم@شركة.مصر")


def email(rng: random.Random, i: int) -> tuple[str, str]:
    """An e-mail address written one of the ways messages and logs write it."""
    style = ("plain", "plain", "upper", "idn", "pct40", "u0040", "amp64", "mailto", "plain_tag")[i % 9]
    if style == "idn":
        return rng.choice(EMAIL_IDN), style
    local, domain = rng.choice(EMAIL_LOCAL), rng.choice(EMAIL_DOMAINS)
    if style == "plain_tag":
        local = local.split("+")[0] + "+" + rng.choice(("newsletter", "bank", "2fa"))
    forms = {"plain": f"{local}@{domain}", "upper": f"{local}@{domain}".upper(), "pct40": f"{local}%40{domain}",
             "u0040": f"{local}\\u0040{domain}", "amp64": f"{local}&#64;{domain}", "mailto": f"mailto:{local}@{domain}",
             "plain_tag": f"{local}@{domain}"}
    return forms[style], style


def from_pattern(rng: random.Random, pattern: str, classes: dict[str, tuple[str, ...]]) -> str:
    """A number from a pattern: X any digit, N 2-9, a letter of `classes` one of its choices, others as written."""
    table = {"X": tuple(string.digits), "N": tuple("23456789"), **classes}
    return "".join(rng.choice(table[ch]) if ch in table else ch for ch in pattern)


PHONE_PLANS: dict[str, tuple[tuple[str, ...], dict[str, tuple[str, ...]], tuple[str, ...]]] = {
    "phone_us_ca": (("en", "es", "fr"), {}, (
        "(NXX) NXX-XXXX", "NXX-NXX-XXXX", "NXX.NXX.XXXX", "NXX NXX XXXX", "+1 NXX NXX XXXX", "+1 (NXX) NXX-XXXX",
        "+1-NXX-NXX-XXXX", "1-NXX-NXX-XXXX", "+1NXXNXXXXXX", "NXXNXXXXXX", "+1.NXX.NXX.XXXX", "1 (NXX) NXX XXXX")),
    "phone_uk": (("en", "pl", "hi", "bn"), {"M": tuple("1234579"), "L": tuple("378")}, (
        "07MXX XXXXXX", "07MXXXXXXXX", "+44 7MXX XXXXXX", "+44 (0)7MXX XXX XXX", "+447MXXXXXXXX", "020 LXXX XXXX",
        "0161 NXX XXXX", "0113 NXX XXXX", "+44 20 LXXX XXXX", "+44 161 NXX XXXX", "0044 7MXX XXXXXX", "07MXX-XXX-XXX",
        "(020) LXXX XXXX", "0117 NXX XXXX")),
    "phone_fr": (("fr", "en", "ar"), {"P": tuple("1234567"), "M": ("6", "7")}, (
        "0P XX XX XX XX", "0M XX XX XX XX", "0P.XX.XX.XX.XX", "0M-XX-XX-XX-XX", "0MXXXXXXXX", "+33 M XX XX XX XX",
        "+33 (0)P XX XX XX XX", "+33MXXXXXXXX", "0033 M XX XX XX XX", "+33 P XX XX XX XX", "0M XX XX XX XX")),
    "phone_de": (("de", "en", "tr", "ru", "pl"), {"Y": tuple("12579"), "Z": tuple("023"), "S": tuple(string.digits)}, (
        "015Y XXXXXXXX", "016Z XXXXXXX", "017S XXXXXXX", "+49 15Y XXXXXXXX", "+49 (0)17S XXXX XXX", "030 NXXXXXXX",
        "089 NXXXXXX", "(0221) NXXXXX", "+49 30 NXXXXXXX", "+49-40-NXXXXXX", "0049 17S XXXXXXX", "017S/XXXXXXX",
        "030/NXXX XXXX", "+4915YXXXXXXXX", "069 NXXX-XX")),
    "phone_in": (("hi", "bn", "ta", "en"), {"M": tuple("6789"), "K": tuple("2346")}, (
        "+91 MXXXX XXXXX", "+91-MXXXXXXXXX", "0MXXXX XXXXX", "MXXXX-XXXXX", "MXXXXXXXXX", "+91 MXXXXXXXXX",
        "011-KXXX XXXX", "+91 22 KXXX XXXX", "022-KXXXXXXX", "(080) KXXX XXXX", "+91 (80) 4XXX XXXX",
        "91-MXXXXXXXXX", "+91 MXXX XXX XXX", "0091 MXXXX XXXXX")),
    "phone_es": (("es", "en"), {"M": ("6", "7")}, (
        "MXX XXX XXX", "MXXXXXXXX", "+34 MXX XX XX XX", "+34 MXX XXX XXX", "0034 MXX XXX XXX", "91X XX XX XX",
        "+34 93X XXX XXX", "+34MXXXXXXXX")),
    "phone_it": (("it", "en"), {"C": tuple("123456789")}, (
        "3CX XXX XXXX", "+39 3CX XXX XXXX", "+39 3CXXXXXXXX", "06 NXXX XXXX", "02 NXXX XXXX", "+39 02 XXXXXXXX",
        "0039 3CX XXXXXXX", "3CX.XXX.XXXX")),
    "phone_br": (("pt",), {"d": tuple("123456789"), "e": tuple("123456789")}, (
        "(de) 9XXXX-XXXX", "+55 de 9XXXX-XXXX", "+55 (de) 9XXXX XXXX", "de 9XXXX-XXXX", "(de) 3XXX-XXXX",
        "+55de9XXXXXXXX", "0xx de 9XXXX-XXXX", "+55 (de) 3XXX-XXXX")),
    "phone_mx": (("es",), {"A": ("55", "33", "81"), "B": ("222", "664", "998")}, (
        "A NXXX XXXX", "+52 A NXXX XXXX", "+52 1 A NXXX XXXX", "(B) NXX XXXX", "+52 (B) NXX-XXXX", "+52ANXXXXXXX",
        "B NXX XXXX", "(A) NXXX-XXXX")),
    "phone_ru": (("ru",), {"C": ("495", "499", "812", "343")}, (
        "+7 9XX XXX-XX-XX", "8 (9XX) XXX-XX-XX", "89XXXXXXXXX", "+7 (C) NXX-XX-XX", "8-9XX-XXX-XX-XX", "+79XXXXXXXXX",
        "8 C NXX XX XX")),
    "phone_ua": (("uk", "ru"), {"O": ("50", "63", "66", "67", "68", "73", "93", "95", "96", "97", "98", "99")}, (
        "+380 O XXX XX XX", "+380 (O) XXX-XX-XX", "0O XXX XX XX", "(0O) XXX-XX-XX", "+380OXXXXXXX", "0OXXXXXXX",
        "+380 44 NXX XX XX")),
    "phone_tr": (("tr",), {"T": ("0", "3", "4", "5")}, (
        "+90 5TX XXX XX XX", "0 (5TX) XXX XX XX", "05TX XXX XX XX", "05TXXXXXXXX", "+90 212 NXX XX XX",
        "0212 NXX XX XX", "+905TXXXXXXXX", "0 5TX XXX XXXX")),
    "phone_sa": (("ar", "en"), {"M": ("0", "3", "4", "5", "6", "9")}, (
        "+966 5M XXX XXXX", "05M XXX XXXX", "05MXXXXXXX", "+966 11 4XX XXXX", "011 4XX XXXX", "9665MXXXXXXX",
        "00966 5M XXX XXXX", "+966-5M-XXX-XXXX")),
    "phone_jp": (("ja", "en"), {"M": ("90", "80", "70")}, (
        "0M-XXXX-XXXX", "+81 M-XXXX-XXXX", "+81 3-NXXX-XXXX", "03-NXXX-XXXX", "06-NXXX-XXXX", "(03) NXXX-XXXX",
        "0MXXXXXXXX", "+81MXXXXXXXX", "0M XXXX XXXX")),
    "phone_kr": (("ko", "en"), {"A": ("31", "32", "51", "53")}, (
        "010-XXXX-XXXX", "010 XXXX XXXX", "+82 10-XXXX-XXXX", "+82 10 XXXX XXXX", "02-NXX-XXXX", "02-NXXX-XXXX",
        "0A-NXX-XXXX", "+82 2 NXXX XXXX", "010XXXXXXXX", "+8210XXXXXXXX")),
    "phone_cn": (("zh", "zh-tw", "en"), {"C": tuple("3456789")}, (
        "1CX XXXX XXXX", "+86 1CX XXXX XXXX", "+86-1CXXXXXXXXX", "1CXXXXXXXXX", "(010) NXXX XXXX", "010-NXXXXXXX",
        "021-NXXXXXXX", "+86 10 NXXX XXXX", "0755-NXXXXXXX", "1CX-XXXX-XXXX")),
    "phone_vn": (("vi",), {"M": ("3", "5", "7", "8", "9")}, (
        "0MX XXX XXXX", "+84 MX XXX XXXX", "0MXXXXXXXX", "0MXX.XXX.XXX", "(028) 3XXX XXXX", "+84 24 3XXX XXXX",
        "+84MXXXXXXXX", "0MXX XXX XXX")),
    "phone_id": (("id", "ms"), {"S": ("12", "13", "21", "22", "52", "57", "78", "95", "96")}, (
        "08S-XXXX-XXXX", "08S XXXX XXXX", "+62 8S XXXX XXXX", "+62 8S-XXXX-XXXX", "628SXXXXXXXX", "(021) NXXX XXXX",
        "+62 21 NXXX XXXX", "08SXXXXXXXX")),
    "phone_ph": (("fil", "en"), {"S": ("05", "15", "17", "18", "20", "27", "45", "55", "77", "98")}, (
        "09S XXX XXXX", "09S-XXX-XXXX", "+63 9S XXX XXXX", "+639SXXXXXXX", "(02) 8XXX XXXX", "+63 2 8XXX XXXX",
        "09SXXXXXXX", "0 9S XXX XXXX")),
    "phone_ke": (("sw", "en"), {"S": ("0", "1", "2", "9")}, (
        "07SX XXX XXX", "+254 7SX XXX XXX", "+2547SXXXXXXX", "07SXXXXXXX", "011X XXX XXX", "+254 11X XXX XXX",
        "020 2XX XXXX", "254 7SX XXX XXX")),
    "phone_ng": (("en",), {"P": ("70", "80", "81", "90", "91")}, (
        "0PX XXX XXXX", "+234 PX XXX XXXX", "+234 (0)PX XXX XXXX", "+234PXXXXXXXX", "0PXXXXXXXX", "0PX-XXX-XXXX",
        "+234 1 NXX XXXX", "234 PX XXX XXXX")),
}
"""Per phone kind: the languages its messages are in, the digit classes of its patterns, and the patterns."""

ISSUE_PHONES = ("phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in")


def phone(rng: random.Random, i: int, kind: str) -> tuple[str, str]:
    """A phone number of `kind`'s plan, its style: international or national, and its separator."""
    _langs, classes, patterns = PHONE_PLANS[kind]
    pattern = patterns[i % len(patterns)]
    value = from_pattern(rng, pattern, classes)
    while kind == "phone_us_ca" and _nanp_bad(value):
        value = from_pattern(rng, pattern, classes)
    reach = "intl" if pattern.startswith(("+", "00", "0xx")) or pattern[:3] in ("91-", "254", "234", "628", "966")\
        else "nat"
    sep = next((name for ch, name in ((" ", "space"), ("-", "dash"), (".", "dot"), ("/", "slash")) if ch in pattern),
               "compact")
    return value, f"{reach}_{sep}"


def _nanp_bad(number: str) -> bool:
    """Whether a NANP number has an N11 area code or exchange (service codes, never assigned)."""
    ten = "".join(ch for ch in number if ch.isdigit())[-10:]
    return ten[1:3] == "11" or ten[4:6] == "11"


def ssn(rng: random.Random, i: int) -> tuple[str, str]:
    """A US SSN by the SSA's rules: dashed, spaced, or compact (always labelled in its sentence)."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    value = f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
    style = ("dash", "dash", "space", "compact")[i % 4]
    seps = {"dash": "-", "space": " ", "compact": ""}
    return seps[style].join((value[:3], value[3:5], value[5:])), style


CARD_IIN = (("visa", ("4",), 16), ("mastercard", ("51", "52", "53", "54", "55"), 16),
            ("mastercard2", tuple(map(str, range(2221, 2721))), 16), ("amex", ("34", "37"), 15),
            ("discover", ("6011", "65"), 16), ("jcb", tuple(map(str, range(3528, 3590))), 16), ("diners", ("36",), 14),
            ("unionpay", ("62",), 16), ("mir", ("2200", "2201", "2202", "2203", "2204"), 16), ("troy", ("9792",), 16),
            ("rupay", ("60", "652"), 16), ("elo", ("636368", "504175"), 16), ("visa19", ("4",), 19),
            ("unionpay19", ("62",), 19))
"""ISO/IEC 7812 networks: name, IIN prefixes, length."""


def card(rng: random.Random, i: int) -> tuple[str, str]:
    """A card number in its network's IIN range with its Luhn digit, printed with one separator."""
    network, heads, length = CARD_IIN[i % len(CARD_IIN)]
    number = rng.choice(heads)
    number += digits(rng, length - len(number) - 1)
    number += luhn_digit(number)
    sep = ("space", "dash", "dot", "underscore", "none", "space")[i // len(CARD_IIN) % 6]
    chars = {"space": " ", "dash": "-", "dot": ".", "underscore": "_", "none": ""}
    printed = group_card(number, chars[sep]) if length <= 16 else group(number, 4, chars[sep])
    return printed, f"{network}_{sep}"


IBAN_BBAN = (("DE", "8n10n"), ("FR", "5n5n11c2n"), ("ES", "4n4n1n1n10n"), ("IT", "1a5n5n12c"), ("NL", "4a10n"),
             ("GB", "4a6n8n"), ("BE", "3n7n2n"), ("PL", "8n16n"), ("PT", "4n4n11n2n"), ("TR", "5n1n16c"),
             ("SA", "2n18c"), ("AE", "3n16n"), ("UA", "6n19c"), ("BR", "8n5n10n1a1c"), ("IL", "3n3n13n"),
             ("IR", "22n"), ("CH", "5n12c"), ("AT", "5n11n"), ("IE", "4a6n8n"), ("EG", "4n4n17n"), ("PK", "4a16c"),
             ("RO", "4a16c"), ("SE", "3n16n1n"), ("KZ", "3n13c"))


def iban(rng: random.Random, i: int) -> tuple[str, str]:
    """An IBAN of a registry country's BBAN structure with its MOD 97 check digits: grouped, compact, lower."""
    country, structure = IBAN_BBAN[i % len(IBAN_BBAN)]
    body = bban(rng, structure)
    value = country + iban_check(country, body) + body
    style = ("grouped", "compact", "grouped", "lower", "lower_grouped", "dash")[i // len(IBAN_BBAN) % 6]
    forms = {"grouped": group(value, 4, " "), "compact": value, "lower": value.lower(),
             "lower_grouped": group(value.lower(), 4, " "), "dash": group(value, 4, "-")}
    return forms[style], f"{country}_{style}"


def labelled_key(rng: random.Random, _i: int) -> tuple[str, str]:
    """A key with no provider prefix: hex, base62 or base64, the label beside it is all that tells it."""
    style = rng.choice(("hex32", "hex40", "hex64", "b62_32", "b62_40", "b64_44", "urlsafe_43"))
    alphabet, n = {"hex32": (HEX, 32), "hex40": (HEX, 40), "hex64": (HEX, 64), "b62_32": (B62, 32),
                   "b62_40": (B62, 40), "b64_44": (B64, 43), "urlsafe_43": (URLSAFE, 43)}[style]
    return pick(rng, alphabet, n) + ("=" if style == "b64_44" else ""), style


# ---- values of the wider kinds: providers, keys, tokens, headers, cookies --------------------------------------

def _uuid(rng: random.Random) -> str:
    """A version-4 UUID (RFC 9562)."""
    return f"{pick(rng, HEX, 8)}-{pick(rng, HEX, 4)}-4{pick(rng, HEX, 3)}-{rng.choice('89ab')}{pick(rng, HEX, 3)}-" \
           f"{pick(rng, HEX, 12)}"


def _sentry_org(rng: random.Random) -> str:
    payload = json.dumps({"iat": 1733400000 + rng.randint(0, 10**6), "url": "https://sentry.io",
                          "region_url": "https://de.sentry.io", "org": rng.choice(("acme", "globex", "initech"))},
                         separators=(",", ":"))
    return "sntrys_" + base64.b64encode(payload.encode()).decode().rstrip("=") + "_" + pick(rng, B64, 43)


def _grafana_cloud(rng: random.Random) -> str:
    payload = json.dumps({"o": digits(rng, 6), "n": f"stack-{digits(rng, 6)}-hm-read", "k": pick(rng, B62, 24),
                          "m": {"r": "prod-eu-west-2"}}, separators=(",", ":"))
    return "glc_" + base64.b64encode(payload.encode()).decode()


def _discord_bot(rng: random.Random) -> str:
    snowflake = str(rng.randint(10**17, 10**19 - 1))
    return f"{b64url(snowflake.encode())}.{pick(rng, URLSAFE, 6)}.{pick(rng, URLSAFE, rng.choice((27, 38)))}"


PROVIDERS: dict[str, tuple[str, tuple[str, ...], tuple[Callable[[random.Random], str], ...]]] = {
    "atlassian_token": ("Atlassian API token", ("JIRA_API_TOKEN", "atlassian.api_token", "CONFLUENCE_TOKEN"), (
        lambda r: "ATATT3xFfGF0" + pick(r, URLSAFE, 171) + "=" + pick(r, "0123456789ABCDEF", 8),)),
    "bitbucket_app_password": ("Bitbucket app password", ("BITBUCKET_APP_PASSWORD", "bb_app_password"), (
        lambda r: "ATBB" + pick(r, B62, 32) + pick(r, "0123456789ABCDEF", 8),)),
    "figma_token": ("Figma token", ("FIGMA_TOKEN", "X-Figma-Token", "figmaAccessToken"), (
        lambda r: "figd_" + pick(r, URLSAFE, 40),)),
    "notion_token": ("Notion integration secret", ("NOTION_TOKEN", "NOTION_API_KEY", "notionSecret"), (
        lambda r: "secret_" + pick(r, B62, 43), lambda r: "ntn_" + digits(r, 11) + pick(r, B62, 35))),
    "airtable_pat": ("Airtable PAT", ("AIRTABLE_API_KEY", "AIRTABLE_PAT", "airtableToken"), (
        lambda r: "pat" + pick(r, B62, 14) + "." + pick(r, HEX, 64),)),
    "mailchimp_key": ("Mailchimp API key", ("MAILCHIMP_API_KEY", "mc_api_key", "mailchimpKey"), (
        lambda r: pick(r, HEX, 32) + f"-us{r.randint(1, 21)}",)),
    "postmark_token": ("Postmark server token", ("POSTMARK_SERVER_TOKEN", "X-Postmark-Server-Token",
                                                 "postmarkApiToken"), (_uuid,)),
    "sentry_token": ("Sentry auth token", ("SENTRY_AUTH_TOKEN", "sentry.auth_token", "sentryToken"), (
        _sentry_org, lambda r: "sntryu_" + pick(r, HEX, 64))),
    "grafana_token": ("Grafana service account token", ("GRAFANA_TOKEN", "GF_API_KEY", "grafanaToken"), (
        lambda r: "glsa_" + pick(r, B62, 32) + "_" + pick(r, HEX, 8), _grafana_cloud)),
    "newrelic_key": ("New Relic key", ("NEW_RELIC_API_KEY", "NEW_RELIC_LICENSE_KEY", "newrelic.license_key"), (
        lambda r: "NRAK-" + pick(r, string.ascii_uppercase + string.digits, 27),
        lambda r: pick(r, HEX, 36) + "NRAL")),
    "pagerduty_key": ("PagerDuty API key", ("PAGERDUTY_TOKEN", "PD_API_KEY", "pagerdutyRoutingKey"), (
        lambda r: pick(r, B62 + "_+-", 20), lambda r: pick(r, HEX, 32))),
    "cloudflare_token": ("Cloudflare API token", ("CLOUDFLARE_API_TOKEN", "CF_API_TOKEN", "X-Auth-Key"), (
        lambda r: pick(r, URLSAFE, 40), lambda r: pick(r, HEX, 37))),
    "digitalocean_token": ("DigitalOcean token", ("DIGITALOCEAN_TOKEN", "DO_API_TOKEN", "doToken"), (
        lambda r: r.choice(("dop_v1_", "doo_v1_", "dor_v1_")) + pick(r, HEX, 64),)),
    "flyio_token": ("Fly.io token", ("FLY_API_TOKEN", "fly_token", "FLY_ACCESS_TOKEN"), (
        lambda r: "FlyV1 fm2_" + pick(r, B64, 180) + "," + "fm2_" + pick(r, B64, 60),
        lambda r: "fo1_" + pick(r, URLSAFE, 43))),
    "supabase_token": ("Supabase access token", ("SUPABASE_ACCESS_TOKEN", "supabaseToken", "SB_TOKEN"), (
        lambda r: "sbp_" + pick(r, HEX, 40),)),
    "vercel_token": ("Vercel token", ("VERCEL_TOKEN", "vercelToken", "VERCEL_ACCESS_TOKEN"), (
        lambda r: pick(r, B62, 24),)),
    "netlify_token": ("Netlify access token", ("NETLIFY_AUTH_TOKEN", "netlifyToken", "NETLIFY_TOKEN"), (
        lambda r: "nfp_" + pick(r, B62, 36),)),
    "heroku_key": ("Heroku API key", ("HEROKU_API_KEY", "heroku.api_key", "herokuToken"), (
        lambda r: "HRKU-AA" + pick(r, URLSAFE, 58), _uuid)),
    "fcm_server_key": ("FCM server key", ("FCM_SERVER_KEY", "firebase.server_key", "fcmKey"), (
        lambda r: "AAAA" + pick(r, URLSAFE, 7) + ":APA91b" + pick(r, URLSAFE, 134),)),
    "telegram_bot_token": ("Telegram bot token", ("TELEGRAM_BOT_TOKEN", "TG_TOKEN", "botToken"), (
        lambda r: f"{r.randint(10**8, 8 * 10**9)}:AA{pick(r, URLSAFE, 33)}",)),
    "discord_bot_token": ("Discord bot token", ("DISCORD_TOKEN", "DISCORD_BOT_TOKEN", "botToken"), (_discord_bot,)),
    "entra_client_secret": ("Entra client secret", ("AZURE_CLIENT_SECRET", "ClientSecret", "AzureAd:ClientSecret"), (
        lambda r: pick(r, B62, 3) + r.choice("78") + "Q~" + pick(r, B62 + "_~.-", 34),)),
    "apple_app_password": ("app-specific password", ("APPLE_APP_SPECIFIC_PASSWORD", "FASTLANE_APPLE_APPLICATION_"
                                                     "SPECIFIC_PASSWORD", "altool_password"), (
        lambda r: "-".join(pick(r, string.ascii_lowercase, 4) for _ in range(4)),)),
}
"""Per provider kind: the label a person writes, the field names configs use, and the value's shapes."""


def pem(label: str, der_bytes: bytes) -> str:
    """RFC 7468 text: base64 in 64-character lines between BEGIN and END lines."""
    body = group(base64.b64encode(der_bytes).decode(), 64, "\n")
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def private_key(rng: random.Random) -> tuple[str, str]:
    """A private key in PEM: RSA-shaped PKCS #1/#8, EC SEC 1/PKCS #8, or OpenSSH Ed25519."""
    style = rng.choice(("rsa_pkcs8", "rsa_pkcs1", "ec_sec1", "ec_pkcs8", "openssh_ed25519", "gcp_sa"))
    if style in ("rsa_pkcs8", "rsa_pkcs1", "gcp_sa"):
        ints = [0] + [rng.getrandbits(bits) | (1 << (bits - 1)) for bits in (2048, 17, 2048) + (1024,) * 5]
        ints[2] = 65537
        pkcs1 = der_seq(*(der_int(n) for n in ints))
        if style == "rsa_pkcs1":
            return pem("RSA PRIVATE KEY", pkcs1), style
        algo = der_seq(bytes.fromhex("06092a864886f70d010101"), bytes.fromhex("0500"))  # rsaEncryption, NULL
        pkcs8 = der_seq(der_int(0), algo, der(0x04, pkcs1))
        return pem("PRIVATE KEY", pkcs8), style
    if style.startswith("ec"):
        key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
        fmt = serialization.PrivateFormat.TraditionalOpenSSL if style == "ec_sec1" else \
            serialization.PrivateFormat.PKCS8
        return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip(), style
    seed = rng.randbytes(32)
    public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    # OpenSSH draws its check bytes at random; taking them from the seed keeps the module deterministic.
    blob = openssh_ed25519_blob(seed, public, hashlib.sha256(seed).digest()[:4], b"")
    body = group(base64.b64encode(blob).decode(), 70, "\n")
    return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----", style


def jwt(rng: random.Random, _i: int) -> tuple[str, str]:
    """An HS256 JWT (RFC 7519) with the claims an identity provider or Supabase/Firebase issues."""
    style = rng.choice(("idp", "supabase", "firebase", "session"))
    claims = {"idp": {"sub": _uuid(rng), "email": rng.choice(EMAIL_LOCAL) + "@acme.io", "iss": "https://login.acme.io/"},
              "supabase": {"iss": "supabase", "ref": pick(rng, string.ascii_lowercase, 20), "role": "service_role"},
              "firebase": {"user_id": pick(rng, B62, 28), "firebase": {"sign_in_provider": "password"}},
              "session": {"sid": pick(rng, HEX, 32), "scope": "openid profile"}}[style]
    claims.update(iat=1733400000 + rng.randint(0, 10**6), exp=1733500000 + rng.randint(0, 10**6))
    head = b64url(b'{"alg":"HS256","typ":"JWT"}')
    body = b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig = b64url(hmac.new(rng.randbytes(32), f"{head}.{body}".encode(), hashlib.sha256).digest())
    return f"{head}.{body}.{sig}", style


def auth_header(rng: random.Random) -> tuple[str, str, str]:
    """An HTTP Authorization header (shown) and its credential (secret), with its scheme."""
    style = rng.choice(("basic", "bearer", "bearer", "digest", "sigv4", "token"))
    if style == "basic":
        cred = base64.b64encode(f"{rng.choice(EMAIL_LOCAL)}:{password(rng)[0]}".encode()).decode()
        return f"Authorization: Basic {cred}", cred, style
    if style in ("bearer", "token"):
        cred = pick(rng, URLSAFE + ".", rng.choice((32, 40, 64, 86)))
        scheme = "Bearer " if style == "bearer" else "Token token="
        return f"Authorization: {scheme}{cred}", cred, style
    if style == "digest":
        cred = pick(rng, HEX, 32)
        return (f'Authorization: Digest username="{rng.choice(EMAIL_LOCAL)}", realm="api@acme.io", nonce="'
                f'{pick(rng, HEX, 32)}", uri="/v1/orders", qop=auth, nc=00000001, cnonce="{pick(rng, HEX, 8)}", '
                f'response="{cred}", opaque="{pick(rng, HEX, 32)}"'), cred, style
    cred = pick(rng, HEX, 64)
    return (f"Authorization: AWS4-HMAC-SHA256 Credential=AKIA{pick(rng, string.ascii_uppercase + '234567', 16)}/"
            f"20241206/eu-west-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
            f"Signature={cred}"), cred, style


COOKIES = (("sessionid", B62.lower()[:36], 32), ("connect.sid", None, 0), ("PHPSESSID", HEX, 26),
           ("JSESSIONID", "0123456789ABCDEF", 32), ("_session_id", HEX, 32), ("laravel_session", None, 0),
           ("ASP.NET_SessionId", string.ascii_lowercase + "012345", 24), ("__Secure-next-auth.session-token", None, 0))


def session_cookie(rng: random.Random) -> tuple[str, str, str]:
    """A Cookie or Set-Cookie header (shown) and the session value (secret), with the cookie's name."""
    name, alphabet, n = rng.choice(COOKIES)
    if name == "connect.sid":
        value = "s%3A" + pick(rng, URLSAFE, 32) + "." + pick(rng, B64, 43)
    elif name == "laravel_session":
        value = pick(rng, B62, 200) + "%3D%3D"
    elif alphabet is None:
        value = f"eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..{pick(rng, URLSAFE, 16)}.{pick(rng, URLSAFE, 120)}." \
                f"{pick(rng, URLSAFE, 22)}"  # JWE compact, alg dir: empty key, iv, ciphertext, tag
    else:
        value = pick(rng, alphabet, n)
    if rng.random() < 0.5:
        return f"Cookie: _ga=GA1.2.{digits(rng, 9)}.{digits(rng, 10)}; {name}={value}; lang=en", value, name
    return f"Set-Cookie: {name}={value}; Path=/; HttpOnly; Secure; SameSite=Lax", value, name


# ---- encodings the carriers apply -----------------------------------------------------------------------------

def qp_encode(text: str, span: tuple[int, int], at40: bool) -> tuple[str, str]:
    """`text` in quoted-printable (RFC 2045 6.7: `=XX` for `=` and non-ASCII, soft breaks `=` at 76 columns), with
    `@` as `=40` when `at40`; and the part of the output that `text[span[0]:span[1]]` became."""
    out, starts, col = [], [], 0
    for ch in text:
        if ch == "\n":
            token = "\n"
        elif ch == "=" or ord(ch) > 126 or (at40 and ch == "@"):
            token = "".join(f"={b:02X}" for b in ch.encode())
        else:
            token = ch
        if token != "\n" and col + len(token) > 75:
            out.append("=\n")
            col = 0
        starts.append(sum(map(len, out)))
        out.append(token)
        col = 0 if token == "\n" else col + len(token)
    encoded = "".join(out)
    end = starts[span[1]] if span[1] < len(starts) else len(encoded)
    return encoded, encoded[starts[span[0]]:end].removesuffix("=\n")


def hard_wrap(text: str, span: tuple[int, int], width: int) -> tuple[str, str]:
    """`text` cut into lines of `width` characters as OCR of a narrow screenshot gives it, and what the span
    became."""
    cuts = set(range(width, len(text), width))

    def wrap(a: int, b: int) -> str:
        return "".join(("\n" if p in cuts and p != a else "") + text[p] for p in range(a, b))
    return wrap(0, len(text)), wrap(*span)


OCR_SWAPS = (("O", "0"), ("l", "I"), ("rn", "m"), ("S", "5"), ("e", "c"))


def ocr_noise(rng: random.Random, text: str) -> str:
    """One or two of the letter confusions OCR makes, in text that holds no value."""
    for a, b in rng.sample(OCR_SWAPS, 2):
        text = text.replace(a, b, 1)
    return text


def url_quote(value: str) -> str:
    """RFC 3986 percent-encoding of a query value; `%XX` already there kept."""
    return urllib.parse.quote(value, safe="@:%-._~")


def xml(text: str) -> str:
    """Text as XML and HTML character data hold it (`&`, `<`, `>` escaped; a numeric reference left as one)."""
    return html.escape(text, quote=False).replace("&amp;#", "&#")


def dump(obj: object, indent: int | None = None) -> str:
    """JSON as exports write it: non-ASCII kept (Slack, Telegram and Teams exports do)."""
    return json.dumps(obj, ensure_ascii=False, indent=indent)


def _when(rng: random.Random) -> tuple[int, str]:
    """An epoch second in December 2024 and its ISO 8601 form."""
    t = 1733011200 + rng.randint(0, 30 * 86400)
    day, rest = divmod(t - 1733011200, 86400)
    return t, f"2024-12-{day + 1:02d}T{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}Z"


# ---- carriers of a sentence: mail, chat, client logs, notebooks, screenshots ----------------------------------

def eml_plain(rng: random.Random, p: Piece) -> Carried:
    """An RFC 5322 message, text/plain 8bit, with a signature."""
    name = rng.choice(NAMES)
    text = (f"Return-Path: <bounce-{digits(rng, 6)}@mailer.acme.io>\nFrom: {name} <noreply@acme.io>\n"
            f"To: support@globex.io\nSubject: Re: access\nDate: Fri, 06 Dec 2024 10:{digits(rng, 2)[:1]}2:11 +0100\n"
            f"Message-ID: <{pick(rng, B62, 20)}@mail.acme.io>\nMIME-Version: 1.0\n"
            f"Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n\n{p.sentence}\n\n-- \n"
            f"{name}\n")
    return text, False, p.secret


def eml_qp(rng: random.Random, p: Piece) -> Carried:
    """A MIME multipart/alternative message whose text part is quoted-printable (soft breaks, `=3D`, `=40`)."""
    intro = "Dear colleague, as discussed on the call this morning, please find the details for the new setup below."
    body = f"{intro}\n{p.sentence}\nBest regards"
    start = body.index(p.shown) + p.shown.index(p.secret)
    encoded, secret = qp_encode(body, (start, start + len(p.secret)), at40=rng.random() < 0.5)
    boundary = "000000000000" + pick(rng, HEX, 16)
    text = (f"From: ops@acme.io\nTo: {rng.choice(EMAIL_LOCAL)}@globex.io\nSubject: =?UTF-8?Q?Zugang_/_acceso?=\n"
            f"MIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=\"{boundary}\"\n\n--{boundary}\n"
            f"Content-Type: text/plain; charset=\"UTF-8\"\nContent-Transfer-Encoding: quoted-printable\n\n{encoded}\n"
            f"--{boundary}\nContent-Type: text/html; charset=\"UTF-8\"\nContent-Transfer-Encoding: quoted-printable\n\n"
            f"<div dir=3D\"ltr\">(html part)</div>\n"
            f"--{boundary}--\n")
    return text, False, secret


def mbox_quoted(rng: random.Random, p: Piece) -> Carried:
    """An mbox entry whose reply quotes the earlier message with `> ` prefixes."""
    name = rng.choice(NAMES)
    text = (f"From {rng.choice(EMAIL_LOCAL)}@globex.io Fri Dec  6 09:14:02 2024\nFrom: {name} <help@globex.io>\n"
            f"Subject: Re: Re: onboarding\nIn-Reply-To: <{pick(rng, HEX, 16)}@globex.io>\n\nThanks, received.\n\n"
            f"On Thu, 5 Dec 2024 at 18:40, {name} wrote:\n> Hello,\n> {quoted(p.sentence)}\n>\n> > earlier: ping me\n")
    return text, False, quoted(p.secret)


def quoted(text: str) -> str:
    """Text as a reply quotes it: `> ` after each line break (RFC 3676 quote depth 1)."""
    return text.replace("\n", "\n> ")


def eml_forward(rng: random.Random, p: Piece) -> Carried:
    """A forwarded message (Gmail's header block) with the value in the forwarded body."""
    text = (f"---------- Forwarded message ---------\nFrom: {rng.choice(NAMES)} <it@acme.io>\n"
            f"Date: Thu, Dec 5, 2024 at 4:02 PM\nSubject: Fwd: credentials\nTo: <desk@acme.io>\n\n\n{p.sentence}\n")
    return text, False, p.secret


def eml_html(rng: random.Random, p: Piece) -> Carried:
    """An HTML mail part (Outlook's markup) with the sentence in a paragraph."""
    text = (f"Content-Type: text/html; charset=utf-8\n\n<html><body><div class=\"WordSection1\"><p class=\"MsoNormal\">"
            f"{xml(p.sentence)}</p><p class=\"MsoNormal\">&nbsp;</p><p>{rng.choice(NAMES)}</p></div></body></html>")
    return text, False, xml(p.secret)


def eml_signature(rng: random.Random, p: Piece) -> Carried:
    """A short reply whose signature block (after the `-- ` delimiter of RFC 3676) holds the sentence."""
    name = rng.choice(NAMES)
    return (f"Subject: Re: invoice 2024-12\nFrom: {name} <{rng.choice(EMAIL_LOCAL)}@globex.io>\n\nSounds good, "
            f"talk soon.\n\n-- \n{name}\nCustomer Success | Globex\n{p.sentence}\n"), False, p.secret


def slack_json(rng: random.Random, p: Piece) -> Carried:
    """A Slack export day file: messages with user, text and ts."""
    t, _ = _when(rng)
    msgs = [{"type": "message", "user": "U0" + pick(rng, string.ascii_uppercase + string.digits, 9),
             "text": p.sentence, "ts": f"{t}.{digits(rng, 6)}", "team": "T0" + pick(rng, string.ascii_uppercase, 8),
             "user_profile": {"real_name": rng.choice(NAMES)}},
            {"type": "message", "subtype": "channel_join", "text": "<@U04ABCD1234> has joined the channel",
             "ts": f"{t + 5}.000100"}]
    return dump(msgs, indent=4), True, p.secret


def teams_json(rng: random.Random, p: Piece) -> Carried:
    """A Microsoft Graph chatMessage: HTML body, sender, timestamps."""
    _, iso = _when(rng)
    msg = {"id": digits(rng, 13), "messageType": "message", "createdDateTime": iso,
           "from": {"user": {"id": _uuid(rng), "displayName": rng.choice(NAMES)}},
           "body": {"contentType": "html", "content": f"<p>{xml(p.sentence)}</p>"}, "attachments": []}
    return dump(msg), True, xml(p.secret)


def teams_txt(rng: random.Random, p: Piece) -> Carried:
    """A Teams chat copied as text: a header line per message."""
    text = f"[10:{digits(rng, 2)[:1]}4 AM] {rng.choice(NAMES)}\n{p.sentence}\n[10:15 AM] IT Helpdesk\nok noted"
    return text, False, p.secret


def whatsapp_txt(rng: random.Random, p: Piece) -> Carried:
    """A WhatsApp chat export line (iOS or Android form)."""
    name = rng.choice(NAMES)
    if rng.random() < 0.5:
        return f"[06/12/2024, 10:{rng.randint(10, 59)}:0{rng.randint(0, 9)}] {name}: {p.sentence}", False, p.secret
    return f"6/12/24, 10:{rng.randint(10, 59)} - {name}: {p.sentence}", False, p.secret


def telegram_json(rng: random.Random, p: Piece) -> Carried:
    """A Telegram Desktop export message: text as plain strings and entities, the value in a `code` entity."""
    t, iso = _when(rng)
    head, tail = p.sentence.split(p.shown, 1)
    msg = {"id": rng.randint(1000, 99999), "type": "message", "date": iso[:-1], "date_unixtime": str(t),
           "from": rng.choice(NAMES), "from_id": f"user{digits(rng, 9)}",
           "text": [head, {"type": "code", "text": p.shown}, tail],
           "text_entities": [{"type": "plain", "text": head}, {"type": "code", "text": p.shown},
                             {"type": "plain", "text": tail}]}
    return dump(msg, indent=1), True, p.secret


def discord_txt(rng: random.Random, p: Piece) -> Carried:
    """A DiscordChatExporter plain-text line."""
    return f"[06-Dec-24 10:{rng.randint(10, 59)} AM] {rng.choice(EMAIL_LOCAL).split('.')[0]}#{digits(rng, 4)}\n" \
           f"{p.sentence}\n", False, p.secret


def matrix_json(rng: random.Random, p: Piece) -> Carried:
    """A Matrix m.room.message event (client-server API)."""
    t, _ = _when(rng)
    ev = {"type": "m.room.message", "sender": f"@{rng.choice(EMAIL_LOCAL).split('.')[0]}:matrix.org",
          "content": {"msgtype": "m.text", "body": p.sentence}, "origin_server_ts": t * 1000,
          "event_id": "$" + pick(rng, URLSAFE, 43),
          "room_id": "!" + pick(rng, string.ascii_letters, 18) + ":matrix.org"}
    return dump(ev), True, p.secret


def logcat_prose(rng: random.Random, p: Piece) -> Carried:
    """Android logcat (threadtime) lines of a chat app logging the draft it sends."""
    pid = rng.randint(1000, 32000)
    return (f"12-06 10:02:{rng.randint(10, 59)}.{digits(rng, 3)}  {pid}  {pid + 17} I ChatComposer: send draft text=\""
            f"{p.sentence}\"\n12-06 10:02:59.001  {pid}  {pid + 3} D OkHttp  : <-- 200 OK (84ms)"), False, p.secret


def oslog_prose(rng: random.Random, p: Piece) -> Carried:
    """An iOS unified-log line (Console / `log stream`) of a messaging extension."""
    return (f"2024-12-06 10:02:{rng.randint(10, 59)}.{digits(rng, 6)}+0100 0x{pick(rng, HEX, 5)}  Default     0x0"
            f"                  {rng.randint(100, 9999)}   0    Messages: [Compose] body=<private> -> "
            f"\"{p.sentence}\""), False, p.secret


def metro_prose(rng: random.Random, p: Piece) -> Carried:
    """React Native Metro output: a `LOG` line of a console.log."""
    return f" BUNDLE  ./index.js\n\n LOG  [SupportChat] sending {p.sentence}\n WARN  Require cycle: src/api.ts", False,\
        p.secret


def ipynb_prose(rng: random.Random, p: Piece) -> Carried:
    """A Jupyter notebook (nbformat 4) with the sentence in a markdown cell."""
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["## Notes\n", p.sentence + "\n"]},
                    {"cell_type": "code", "execution_count": rng.randint(1, 40), "metadata": {}, "outputs": [],
                     "source": ["import pandas as pd"]}],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}}, "nbformat": 4,
          "nbformat_minor": 5}
    return dump(nb, indent=1), True, p.secret


def pr_review_json(rng: random.Random, p: Piece) -> Carried:
    """A GitHub pull-request review comment (REST API)."""
    c = {"id": rng.randint(10**9, 2 * 10**9), "path": "app/src/main/res/values/config.xml", "line": rng.randint(3, 90),
         "body": f"Please don't commit this. {p.sentence}", "user": {"login": rng.choice(EMAIL_LOCAL).split(".")[0]},
         "commit_id": pick(rng, HEX, 40)}
    return dump(c), True, p.secret


def ocr_text(rng: random.Random, p: Piece) -> Carried:
    """OCR of a phone screenshot: status bar, letters confused around the value, lines cut at the column width."""
    start = p.sentence.index(p.shown) + p.shown.index(p.secret)
    before, after = ocr_noise(rng, p.sentence[:start]), p.sentence[start + len(p.secret):]
    line = before + p.secret + after
    width = rng.choice((32, 38, 44))
    wrapped, secret = hard_wrap(line, (len(before), len(before) + len(p.secret)), width)
    return f"10:4l ..il 4G 87%\n< Chats\n{wrapped}\nType a message", False, secret


def sentry_breadcrumb(rng: random.Random, p: Piece) -> Carried:
    """A Sentry event whose breadcrumbs hold a UI message the user typed."""
    t, iso = _when(rng)
    ev = {"event_id": pick(rng, HEX, 32), "timestamp": iso, "platform": "javascript",
          "breadcrumbs": {"values": [{"category": "ui.input", "message": p.sentence, "timestamp": t}]},
          "exception": {"values": [{"type": "TypeError", "value": "Cannot read properties of undefined"}]}}
    return dump(ev), True, p.secret


def splunk_msg(rng: random.Random, p: Piece) -> Carried:
    """A Splunk raw event in key=value form with the chat text in a quoted field."""
    return (f"12/06/2024 10:02:{rng.randint(10, 59)}.{digits(rng, 3)} +0000 app=helpdesk-bot level=INFO "
            f"channel=C0{pick(rng, string.ascii_uppercase, 8)} user=\"{rng.choice(NAMES)}\" msg=\"{p.sentence}\""), \
        False, p.secret


def crashlytics_log(rng: random.Random, p: Piece) -> Carried:
    """Crashlytics custom logs attached to a crash (the Logs tab as text)."""
    return (f"{rng.randint(100, 999)}  12/06/2024 10:02:11.{digits(rng, 3)}  Crashlytics  FeedbackForm submitted: "
            f"{p.sentence}\n{rng.randint(100, 999)}  12/06/2024 10:02:12.004  Crashlytics  Fatal Exception: "
            f"java.lang.IllegalStateException"), False, p.secret


PROSE = (eml_plain, eml_qp, mbox_quoted, eml_forward, eml_html, eml_signature, slack_json, teams_json, teams_txt,
         whatsapp_txt, telegram_json, discord_txt, matrix_json, logcat_prose, oslog_prose, metro_prose, ipynb_prose,
         pr_review_json, ocr_text, sentry_breadcrumb, splunk_msg, crashlytics_log)


# ---- carriers of a field: HTTP clients, SIEM records, crash reports, exports, diffs -----------------------------

def har_json(rng: random.Random, p: Piece) -> Carried:
    """A HAR 1.2 entry: the field as a query parameter (when URL encoding leaves it as it is), or a form parameter
    of the post body."""
    t, iso = _when(rng)
    req = {"method": "POST", "url": "https://api.acme.io/v2/session", "httpVersion": "HTTP/2",
           "headers": [{"name": "content-type", "value": "application/json"}], "queryString": [], "cookies": []}
    if rng.random() < 0.5 and url_quote(p.shown) == p.shown:
        req["url"] = f"https://api.acme.io/v2/session?client=ios&{p.key}={p.shown}"
        req["queryString"] = [{"name": "client", "value": "ios"}, {"name": p.key, "value": p.shown}]
    else:
        req["postData"] = {"mimeType": "application/x-www-form-urlencoded",
                           "params": [{"name": p.key, "value": p.shown}, {"name": "device", "value": "ios"}]}
    entry = {"startedDateTime": iso, "time": rng.randint(20, 900), "request": req,
             "response": {"status": 200, "statusText": "", "headers": []}}
    return dump({"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
                         "entries": [entry]}}, indent=2), True, p.secret


def curl_v(rng: random.Random, p: Piece) -> Carried:
    """`curl -v` with the field in a form body and the request lines curl prints."""
    return (f"$ curl -v https://api.acme.io/v1/login -d '{p.key}={p.shown}' -d 'remember=1'\n"
            f"*   Trying 203.0.113.{rng.randint(2, 250)}:443...\n* Connected to api.acme.io port 443\n"
            f"> POST /v1/login HTTP/1.1\n> Host: api.acme.io\n> User-Agent: curl/8.5.0\n> Accept: */*\n"
            f"> Content-Length: {len(p.key) + len(p.shown) + 12}\n> Content-Type: application/x-www-form-urlencoded\n"
            f">\n< HTTP/1.1 302 Found\n< Location: /home"), False, p.secret


def httpie(rng: random.Random, p: Piece) -> Carried:
    """An HTTPie call and the request it echoes (`--print=HB`)."""
    body = dump({p.key: p.shown, "locale": "pt-BR"}, indent=4)
    return (f"$ http --print=HB POST api.acme.io/v1/devices {p.key}='{p.shown}' locale=pt-BR\n"
            f"POST /v1/devices HTTP/1.1\nAccept: application/json, */*;q=0.5\nContent-Type: application/json\n"
            f"Host: api.acme.io\nUser-Agent: HTTPie/3.2.2\n\n{body}\n"), False, p.secret


def postman_json(rng: random.Random, p: Piece) -> Carried:
    """A Postman collection (v2.1) with the field in an urlencoded body, or as a collection variable."""
    item = {"name": "Login", "request": {"method": "POST", "url": {"raw": "{{baseUrl}}/login"},
                                         "body": {"mode": "urlencoded", "urlencoded": [
                                             {"key": "username", "value": "qa", "type": "text"}]}}}
    col = {"info": {"_postman_id": _uuid(rng), "name": "Mobile API",
                    "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
           "item": [item], "variable": [{"key": "baseUrl", "value": "https://api.acme.io"}]}
    if rng.random() < 0.5:
        item["request"]["body"]["urlencoded"].append({"key": p.key, "value": p.shown, "type": "text"})
    else:
        col["variable"].append({"key": p.key, "value": p.shown, "type": "string"})
    return dump(col, indent="\t"), True, p.secret


def git_diff(rng: random.Random, p: Piece) -> Carried:
    """A `git diff` hunk adding the field to a dotenv or YAML file."""
    sha = pick(rng, HEX, 7)
    if rng.random() < 0.5:
        return (f"diff --git a/.env.production b/.env.production\nindex {sha}..{pick(rng, HEX, 7)} 100644\n"
                f"--- a/.env.production\n+++ b/.env.production\n@@ -3,2 +3,3 @@ APP_ENV=production\n LOG_LEVEL=info\n"
                f"+{p.key}={p.shown}\n FEATURE_CHAT=1"), False, p.secret
    return (f"diff --git a/config/app.yml b/config/app.yml\n--- a/config/app.yml\n+++ b/config/app.yml\n"
            f"@@ -10,3 +10,4 @@ notifications:\n   enabled: true\n-  {p.key}: \"\"\n+  {p.key}: \"{p.shown}\"\n"
            f"   retries: 3"), False, p.secret


def review_suggestion(rng: random.Random, p: Piece) -> Carried:
    """A code-review comment in Markdown with a suggestion block (GitHub and GitLab render it)."""
    return (f"**{rng.choice(NAMES)}** commented on `src/config.ts` line {rng.randint(4, 80)}:\n\n"
            f"nit: move this to the vault\n```suggestion\n{p.key} = process.env.{p.key.upper().replace('.', '_')}\n"
            f"```\n> - const {p.key} = '{p.shown}'"), False, p.secret


def pwmgr_csv(rng: random.Random, p: Piece) -> Carried:
    """A password-manager export row (Bitwarden, 1Password, KeePass or Chrome CSV); non-password fields in notes."""
    kind = rng.choice(("bitwarden", "onepassword", "keepass", "chrome"))
    user, site = rng.choice(EMAIL_LOCAL), rng.choice(("https://login.acme.io", "https://portal.globex.io/signin"))
    pw = p.shown if "pw" in p.key.lower() or "pass" in p.key.lower() else pick(rng, B62, 16)
    note = "" if pw == p.shown else f"{p.key}: {p.shown}".replace('"', '""')
    rows = {"bitwarden": ("folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,"
                          f"login_totp\nWork,,login,ACME SSO,\"{note}\",,0,{site},{user},{pw},"),
            "onepassword": f"Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\n"
                           f"\"ACME\",\"{site}\",\"{user}\",\"{pw}\",,false,false,work,\"{note}\"",
            "keepass": f"\"Account\",\"Login Name\",\"Password\",\"Web Site\",\"Comments\"\n"
                       f"\"ACME\",\"{user}\",\"{pw}\",\"{site}\",\"{note}\"",
            "chrome": f"name,url,username,password,note\nlogin.acme.io,{site},{user},{pw},\"{note}\""}
    return rows[kind], False, p.secret


def keepass_xml(rng: random.Random, p: Piece) -> Carried:
    """A KeePass 2 XML export entry: String elements of Key and Value."""
    return (f"<Entry><UUID>{base64.b64encode(rng.randbytes(16)).decode()}</UUID><String><Key>Title</Key><Value>ACME"
            f"</Value></String><String><Key>UserName</Key><Value>{rng.choice(EMAIL_LOCAL)}</Value></String><String>"
            f"<Key>{p.key}</Key><Value ProtectInMemory=\"True\">{xml(p.shown)}</Value></String></Entry>"), False, \
        xml(p.secret)


def cloudtrail_json(rng: random.Random, p: Piece) -> Carried:
    """A CloudTrail record of a Lambda configuration update whose environment was logged in clear."""
    _, iso = _when(rng)
    rec = {"eventVersion": "1.09", "userIdentity": {"type": "IAMUser", "arn": "arn:aws:iam::123456789012:user/ci",
                                                   "accountId": "123456789012"},
           "eventTime": iso, "eventSource": "lambda.amazonaws.com",
           "eventName": "UpdateFunctionConfiguration20150331v2",
           "awsRegion": "eu-west-1", "sourceIPAddress": "198.51.100.7",
           "requestParameters": {"functionName": "notify-chat", "environment": {"variables": {p.key: p.shown}}},
           "requestID": _uuid(rng), "eventID": _uuid(rng), "readOnly": False}
    return dump({"Records": [rec]}), True, p.secret


def okta_json(rng: random.Random, p: Piece) -> Carried:
    """An Okta System Log event with the field in debugContext.debugData."""
    _, iso = _when(rng)
    ev = {"uuid": _uuid(rng), "published": iso, "eventType": "user.account.update_profile", "severity": "INFO",
          "actor": {"type": "User", "alternateId": f"{rng.choice(EMAIL_LOCAL)}@acme.io"},
          "debugContext": {"debugData": {"requestUri": "/api/v1/users/me", p.key: p.shown}},
          "outcome": {"result": "SUCCESS"}}
    return dump(ev), True, p.secret


def gworkspace_json(rng: random.Random, p: Piece) -> Carried:
    """A Google Workspace Reports API activity with the field as an event parameter."""
    _, iso = _when(rng)
    act = {"kind": "admin#reports#activity", "id": {"time": iso, "uniqueQualifier": digits(rng, 19),
                                                     "applicationName": "admin"},
           "actor": {"email": "admin@acme.io"},
           "events": [{"type": "USER_SETTINGS", "name": "CHANGE_USER_CUSTOM_FIELD",
                       "parameters": [{"name": "USER_EMAIL", "value": "it@acme.io"},
                                      {"name": p.key, "value": p.shown}]}]}
    return dump(act), True, p.secret


def ecs_json(rng: random.Random, p: Piece) -> Carried:
    """An Elastic Common Schema document with the field in the request body content."""
    _, iso = _when(rng)
    doc = {"@timestamp": iso, "ecs": {"version": "8.11.0"}, "event": {"kind": "event", "category": ["web"]},
           "http": {"request": {"method": "POST", "body": {"content": f"{p.key}={p.shown}&lang=tr"}}},
           "url": {"path": "/api/profile"}, "source": {"ip": "192.0.2.44"}}
    return dump(doc), True, p.secret


def winevent_xml(rng: random.Random, p: Piece) -> Carried:
    """A Windows event (XML view) from an application that logged the field as event data."""
    return (f"<Event xmlns=\"http://schemas.microsoft.com/win/2004/08/events/event\"><System><Provider Name=\""
            f"MobileSync\"/><EventID>1001</EventID><TimeCreated SystemTime=\"2024-12-06T10:02:11.{digits(rng, 7)}Z\"/>"
            f"<Computer>WS-{digits(rng, 4)}.corp.acme.io</Computer></System><EventData><Data Name=\"{p.key}\">"
            f"{xml(p.shown)}</Data><Data Name=\"Status\">0x0</Data></EventData></Event>"), False, xml(p.secret)


def sentry_vars(rng: random.Random, p: Piece) -> Carried:
    """A Sentry event whose stack frame vars hold the field (send_default_pii on)."""
    ev = {"event_id": pick(rng, HEX, 32), "platform": "python", "level": "error",
          "exception": {"values": [{"type": "ConnectionError", "value": "upstream refused",
                                    "stacktrace": {"frames": [{"filename": "app/notify.py", "function": "send",
                                                               "lineno": rng.randint(10, 300),
                                                               "vars": {"self": "<Notifier>", p.key: f"'{p.shown}'"}}]}}
                                   ]}}
    return dump(ev), True, p.secret


def py_locals(rng: random.Random, p: Piece) -> Carried:
    """A Python traceback with locals (as rich and pytest `-l` print them)."""
    return (f"Traceback (most recent call last):\n  File \"/srv/app/sync.py\", line {rng.randint(10, 300)}, in push\n"
            f"    resp = client.post(url, data=payload)\n    ╭──────── locals ────────╮\n    │ url = "
            f"'https://api.acme.io/sync' │\n    │ {p.key} = '{p.shown}' │\n    ╰────────────────────────╯\n"
            f"requests.exceptions.HTTPError: 401 Client Error: Unauthorized"), False, p.secret


def java_trace(rng: random.Random, p: Piece) -> Carried:
    """A Java exception whose message prints the configuration map."""
    return (f"Exception in thread \"main\" java.lang.IllegalStateException: bad config {{region=eu, {p.key}="
            f"{p.shown}, retries=3}}\n\tat com.acme.chat.Config.validate(Config.java:{rng.randint(20, 200)})\n"
            f"\tat com.acme.chat.App.main(App.java:12)"), False, p.secret


def ipynb_field(rng: random.Random, p: Piece) -> Carried:
    """A notebook code cell setting the field in os.environ, and its echoed output."""
    nb = {"cells": [{"cell_type": "code", "execution_count": rng.randint(1, 30), "metadata": {},
                     "source": ["import os\n", f"os.environ[\"{p.key}\"] = \"{p.shown}\"\n",
                                f"os.environ[\"{p.key}\"]"],
                     "outputs": [{"output_type": "execute_result", "execution_count": 3, "metadata": {},
                                  "data": {"text/plain": [f"'{p.shown}'"]}}]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return dump(nb, indent=1), True, p.secret


def splunk_kv(rng: random.Random, p: Piece) -> Carried:
    """A Splunk key=value event of a mobile backend, the field quoted."""
    return (f"2024-12-06T10:02:{rng.randint(10, 59)}.{digits(rng, 3)}Z sourcetype=mobile:api "
            f"host=api-{rng.randint(1, 9)} "
            f"action=register status=201 {p.key}=\"{p.shown}\" duration_ms={rng.randint(5, 900)}"), False, p.secret


def logcat_field(rng: random.Random, p: Piece) -> Carried:
    """logcat lines of OkHttp's logging interceptor printing a request body."""
    pid = rng.randint(1000, 32000)
    return (f"12-06 10:02:11.{digits(rng, 3)}  {pid}  {pid + 40} D OkHttp  : --> POST https://api.acme.io/v1/profile\n"
            f"12-06 10:02:11.{digits(rng, 3)}  {pid}  {pid + 40} D OkHttp  : {dump({p.key: p.shown})}\n"
            f"12-06 10:02:11.{digits(rng, 3)}  {pid}  {pid + 40} D OkHttp  : --> END POST"), False, p.secret


def ips_json(rng: random.Random, p: Piece) -> Carried:
    """An Apple `.ips` crash report: a JSON header line, then the JSON body whose application-specific information
    holds the field (the file as a whole is not one JSON document)."""
    header = dump({"app_name": "AcmeChat", "bug_type": "309", "os_version": "iPhone OS 18.1 (22B83)",
                   "incident_id": _uuid(rng).upper()})
    body = dump({"exception": {"type": "EXC_CRASH", "signal": "SIGABRT"},
                 "asi": {"libsystem_c.dylib": [f"abort() called: invalid state {p.key}={p.shown}"]}}, indent=2)
    return f"{header}\n{body}", False, p.secret


def crashlytics_keys(rng: random.Random, p: Piece) -> Carried:
    """The Keys tab of a Crashlytics issue copied as text: custom keys and their values."""
    return (f"Custom keys\nKey\tValue\nbuild_flavor\tprodRelease\n{p.key}\t{p.shown}\nsession_count\t"
            f"{rng.randint(1, 400)}"), False, p.secret


FIELD = (har_json, curl_v, httpie, postman_json, git_diff, review_suggestion, pwmgr_csv, keepass_xml, cloudtrail_json,
         okta_json, gworkspace_json, ecs_json, winevent_xml, sentry_vars, py_locals, java_trace, ipynb_field, splunk_kv,
         logcat_field, ips_json, crashlytics_keys)


# ---- carriers of a command line: audit records --------------------------------------------------------------------

def auditd_execve(rng: random.Random, p: Piece) -> Carried:
    """Linux audit SYSCALL and EXECVE records: one `aN="..."` per argument."""
    args = p.command.split(" ")
    serial = f"{1733475731 + rng.randint(0, 10**5)}.{digits(rng, 3)}:{rng.randint(100, 99999)}"
    execve = " ".join(f'a{i}="{a}"' for i, a in enumerate(args))
    return (f"type=SYSCALL msg=audit({serial}): arch=c000003e syscall=59 success=yes exit=0 "
            f"ppid={rng.randint(900, 9000)}"
            f" auid=1000 uid=1000 comm=\"{args[0].rsplit('/', 1)[-1]}\" exe=\"/usr/bin/{args[0]}\"\n"
            f"type=EXECVE msg=audit({serial}): argc={len(args)} {execve}"), False, p.secret


def sudo_authlog(rng: random.Random, p: Piece) -> Carried:
    """A sudo line of /var/log/auth.log."""
    return (f"Dec  6 10:02:{rng.randint(10, 59)} bastion-{rng.randint(1, 4)} sudo:    deploy : "
            f"TTY=pts/{rng.randint(0, 5)}"
            f" ; PWD=/home/deploy ; USER=root ; COMMAND=/usr/bin/{p.command}"), False, p.secret


def win4688_xml(rng: random.Random, p: Piece) -> Carried:
    """A Windows Security 4688 (process creation) event with its CommandLine."""
    return (f"<Event><System><EventID>4688</EventID><Computer>WS-{digits(rng, 4)}</Computer></System><EventData>"
            f"<Data Name=\"SubjectUserName\">jdoe</Data><Data Name=\"NewProcessName\">C:\\Tools\\{p.command.split()[0]}"
            f".exe</Data><Data Name=\"CommandLine\">{xml(p.command)}</Data></EventData></Event>"), False, xml(p.secret)


def ecs_process(rng: random.Random, p: Piece) -> Carried:
    """An Elastic ECS process event (Elastic Defend / Auditbeat)."""
    _, iso = _when(rng)
    doc = {"@timestamp": iso, "event": {"category": ["process"], "type": ["start"]},
           "process": {"pid": rng.randint(1000, 60000), "command_line": p.command, "args": p.command.split(" "),
                       "name": p.command.split(" ")[0]}, "user": {"name": "deploy"}, "host": {"name": "ci-runner-3"}}
    return dump(doc), True, p.secret


def ipynb_bang(rng: random.Random, p: Piece) -> Carried:
    """A notebook cell running the command with `!`."""
    nb = {"cells": [{"cell_type": "code", "execution_count": rng.randint(1, 30), "metadata": {},
                     "source": [f"!{p.command}"], "outputs": [{"output_type": "stream", "name": "stdout",
                                                              "text": ["done\n"]}]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return dump(nb, indent=1), True, p.secret


COMMAND = (auditd_execve, sudo_authlog, win4688_xml, ecs_process, ipynb_bang)


# ---- carriers of a header line: HTTP dumps -------------------------------------------------------------------------

def curl_v_header(rng: random.Random, p: Piece) -> Carried:
    """`curl -v` request (`>`) or response (`<`) header lines."""
    arrow = "<" if p.shown.startswith("Set-Cookie") else ">"
    return (f"* Connected to api.acme.io (203.0.113.9) port 443\n> GET /v1/me HTTP/2\n> Host: api.acme.io\n"
            f"> user-agent: curl/8.{rng.randint(0, 9)}.0\n{'> ' + p.shown if arrow == '>' else '> accept: */*'}\n>\n"
            f"< HTTP/2 200\n< content-type: application/json\n{'< ' + p.shown if arrow == '<' else '< vary: Origin'}"),\
        False, p.secret


def har_header(rng: random.Random, p: Piece) -> Carried:
    """A HAR entry with the header among the request's (or, for Set-Cookie, the response's) headers."""
    name, value = p.shown.split(": ", 1)
    _, iso = _when(rng)
    header = [{"name": "accept", "value": "application/json"}, {"name": name, "value": value}]
    response = {"status": 200, "headers": header if name == "Set-Cookie" else []}
    entry = {"startedDateTime": iso, "time": rng.randint(20, 900), "response": response,
             "request": {"method": "GET", "url": "https://app.acme.io/api/me", "headers": [] if name == "Set-Cookie"
                         else header}}
    return dump({"log": {"version": "1.2", "entries": [entry]}}, indent=2), True, p.secret


def httpie_header(rng: random.Random, p: Piece) -> Carried:
    """HTTPie's `--print=Hh` output."""
    return (f"GET /api/v1/inbox HTTP/1.1\nAccept: */*\nHost: chat.acme.io\nUser-Agent: HTTPie/3.2.{rng.randint(1, 4)}\n"
            f"{p.shown}\n\nHTTP/1.1 200 OK\nContent-Type: application/json"), False, p.secret


def logcat_header(rng: random.Random, p: Piece) -> Carried:
    """OkHttp's interceptor at HEADERS level in logcat."""
    pid = rng.randint(1000, 32000)
    return (f"12-06 10:02:11.{digits(rng, 3)}  {pid}  {pid + 9} D OkHttp  : --> GET https://api.acme.io/v1/me\n"
            f"12-06 10:02:11.{digits(rng, 3)}  {pid}  {pid + 9} D OkHttp  : {p.shown}\n"
            f"12-06 10:02:11.{digits(rng, 3)}  {pid}  {pid + 9} D OkHttp  : --> END GET"), False, p.secret


def postman_header(rng: random.Random, p: Piece) -> Carried:
    """A Postman collection request with the header set on it."""
    name, value = p.shown.split(": ", 1)
    col = {"info": {"name": "Support API", "schema": "https://schema.getpostman.com/json/collection/v2.1.0/"},
           "item": [{"name": "Me", "request": {"method": "GET", "header": [{"key": name, "value": value}],
                                              "url": {"raw": "https://api.acme.io/v1/me"}}}]}
    return dump(col, indent=2), True, p.secret


def sentry_request(rng: random.Random, p: Piece) -> Carried:
    """A Sentry event's request interface (or, for Set-Cookie, its response context), headers as name/value pairs."""
    name, value = p.shown.split(": ", 1)
    ev = {"event_id": pick(rng, HEX, 32), "platform": "node", "request": {
        "url": "https://app.acme.io/api/me", "method": "GET", "headers": [["Host", "app.acme.io"]]}}
    if name == "Set-Cookie":
        ev["contexts"] = {"response": {"status_code": 200, "headers": [[name, value]]}}
    else:
        ev["request"]["headers"].append([name, value])
    return dump(ev), True, p.secret


def splunk_header(rng: random.Random, p: Piece) -> Carried:
    """A Splunk key=value access event that logged a header."""
    name, value = p.shown.split(": ", 1)
    return (f"2024-12-06 10:02:{rng.randint(10, 59)} sourcetype=nginx:debug status=401 "
            f"http_{name.lower().replace('-', '_')}=\"{value}\" uri=/api/me"), False, p.secret


HEADER = (curl_v_header, har_header, httpie_header, logcat_header, postman_header, sentry_request, splunk_header)


def gcp_sa_json(rng: random.Random, p: Piece) -> Carried:
    """A GCP service-account key file holding the private key."""
    project = rng.choice(("acme-mobile", "globex-prod", "chat-infra"))
    sa = {"type": "service_account", "project_id": f"{project}-{digits(rng, 6)}", "private_key_id": pick(rng, HEX, 40),
          "private_key": p.shown + "\n", "client_email": f"fcm-sender@{project}.iam.gserviceaccount.com",
          "client_id": digits(rng, 21), "token_uri": "https://oauth2.googleapis.com/token"}
    return dump(sa, indent=2), True, p.secret


# ---- kinds: the piece each case places, and its carriers ----------------------------------------------------------

PW_KEYS = ("DB_PASSWORD", "PGPASSWORD", "MYSQL_ROOT_PASSWORD", "userPassword", "smtp_pass", "REDIS_PASS",
           "spring.datasource.password", "adminPwd", "ldap_bind_password", "password", "Passwort", "senha",
           "contrasena", "mot_de_passe", "wachtwoord", "haslo", "sifre", "KEYSTORE_PASS", "mail.password")
PW_COMMANDS = ("mysql -h db1 -u root -p{v} shop", "mysql --user=app --password={v} -e status",
               "sshpass -p {v} ssh deploy@10.0.4.5", "htpasswd -b -c /etc/nginx/.htpasswd admin {v}",
               "net user svc_backup {v} /add", "curl -u admin:{v} https://grafana.acme.io/api/health",
               "mongosh -u admin -p {v} --authenticationDatabase admin", "redis-cli -a {v} ping",
               "openssl pkcs12 -export -in cert.pem -passout pass:{v}", "docker login -u ci -p {v} registry.acme.io",
               "smbclient //fs01/share -U alice%{v}", "psql --password {v} -h db1")


def simple(gen: Callable[[random.Random, int], tuple[str, str]], words: tuple[str, ...], keys: tuple[str, ...],
           commands: tuple[str, ...] = ("",), langs: tuple[str, ...] = ALL_LANGS
           ) -> Callable[[random.Random, int], tuple[Piece, str]]:
    """The piece maker of a kind whose value stands alone: a label of one of `words` before it in the sentence, a
    field named one of `keys`, a command of `commands` (`{v}` the value)."""
    def make(rng: random.Random, i: int) -> tuple[Piece, str]:
        value, style = gen(rng, i)
        lang = rng.choice(langs)
        return Piece(value, value, sentence(rng, lang, words[i % len(words)], value), rng.choice(keys),
                     rng.choice(commands).format(v=value), lang), style
    return make


def aws_piece(rng: random.Random, i: int) -> tuple[Piece, str]:
    akid, secret = aws_pair(rng)
    lang = rng.choice(ALL_LANGS)
    style = ("pair_space", "pair_colon", "pair_newline", "labelled")[i % 4]
    shown = {"pair_space": f"{akid} {secret}", "pair_colon": f"{akid}:{secret}",
             "pair_newline": f"{akid}\n{secret}", "labelled": f"aws_secret_access_key={secret}"}[style]
    command = rng.choice((f"aws configure set aws_secret_access_key {secret}",
                          f"env AWS_ACCESS_KEY_ID={akid} AWS_SECRET_ACCESS_KEY={secret} aws s3 ls",
                          f"rclone config create s3 s3 access_key_id={akid} secret_access_key={secret}"))
    if style == "labelled":
        key, field = rng.choice(("aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "SecretAccessKey")), secret
    else:
        key, field = rng.choice(("aws_credentials", "AWS", "awsKeys", "s3_creds")), shown
    line = rng.choice(FRAMES[lang]).format(L="AWS", v=shown)
    return Piece(secret, field, line, key, command, lang), style


CONN_LABELS = ("connection string", "DSN", "conn", "cadena de conexión", "Verbindungszeichenfolge",
               "chaîne de connexion", "连接字符串", "接続文字列", "string de conexão", "строка подключения")
CONN_TOOLS = {"uri_pg": "psql", "uri_mongo": "mongosh", "uri_redis": "redis-cli -u", "uri_amqp": "rabbitmqadmin -U",
              "uri_mysql": "mycli", "jdbc_pg": "liquibase --url", "jdbc_mssql": "flyway -url=",
              "ado": "sqlpackage /scs:", "odbc": "isql -k", "azure_storage": "azcopy --connection-string",
              "servicebus": "sb-cli --cs"}


def conn_piece(rng: random.Random, i: int) -> tuple[Piece, str]:
    shown, secret, style = connection(rng)
    lang = rng.choice(ALL_LANGS)
    key = rng.choice(("DATABASE_URL", "ConnectionStrings__Default", "AZURE_STORAGE_CONNECTION_STRING", "MONGO_URI",
                      "spring.datasource.url", "REDIS_URL", "SERVICEBUS_CONNECTION", "dsn"))
    tool = CONN_TOOLS[style]
    command = f"{tool}{'' if tool.endswith(('=', ':')) else ' '}{shown}"
    return Piece(secret, shown, rng.choice(FRAMES[lang]).format(L=rng.choice(CONN_LABELS), v=shown), key, command,
                 lang), style


WEBHOOK_KEYS = ("SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK", "TEAMS_WEBHOOK_URL", "webhookUrl", "alert_webhook", "hook_url",
                "notify.url")
WEBHOOK_COMMANDS = ("curl -s -X POST -d @msg.json {v}", "wget --post-file=alert.json {v}")
WHSEC_KEYS = ("STRIPE_WEBHOOK_SECRET", "stripe.webhook_secret", "endpointSecret", "STRIPE_SIGNING_SECRET")
KEY_COMMANDS = ("curl -H X-API-Key:{v} https://api.partner.io/v2/orders",
                "http GET api.partner.io/v2/orders apikey=={v}")
DISGUISED_KEYS = ("GITHUB_TOKEN", "STRIPE_KEY", "token", "apiKey", "OPENAI_API_KEY", "secret")
DISGUISED_COMMANDS = ("git clone https://x-access-token:{v}@github.com/acme/app.git",)
EMAIL_KEYS = ("email", "EMAIL", "userEmail", "contact_email", "login_username", "mail", "correo", "E-Mail", "reply_to")
EMAIL_COMMANDS = ("git config --global user.email {v}", "certbot -n --agree-tos --email {v}", "useradd -c {v} support2")
CARD_KEYS = ("card_number", "cardNumber", "pan", "cc_number", "number", "Kartennummer", "numero_tarjeta")
JWT_KEYS = ("id_token", "access_token", "SUPABASE_SERVICE_ROLE_KEY", "jwt", "idToken", "refreshToken")
KEY_FIELDS = ("API Key", "Secret Key", "Access Token", "api key", "Client Secret", "X-API-Key", "apiKey",
              "secret_key", "auth_token", "Private Token")
PHONE_KEYS = ("phone", "mobile", "phoneNumber", "tel", "msisdn", "contact_phone", "mobile_no", "whatsapp_number")
SSN_LABELS = {"en": ("SSN", "SSN#", "Social Security number", "social security no.", "SS#"),
              "es": ("número de Seguro Social", "SSN", "seguro social"), "vi": ("số an sinh xã hội (SSN)",),
              "ko": ("사회보장번호(SSN)",), "zh": ("社会安全号码 SSN",), "fil": ("SSN ko",),
              "pt": ("SSN (seguro social)",)}


def ssn_piece(rng: random.Random, i: int) -> tuple[Piece, str]:
    value, style = ssn(rng, i)
    lang = rng.choice(("en", "en", "en", "es", "es", "vi", "ko", "zh", "fil", "pt"))
    line = rng.choice(FRAMES[lang]).format(L=rng.choice(SSN_LABELS[lang]), v=value)
    key = rng.choice(("ssn", "SSN", "social_security_number", "applicant.ssn", "taxpayerSSN", "ssn_last_full"))
    return Piece(value, value, line, key, "", lang), style


IBAN_LANG = {"DE": "de", "FR": "fr", "ES": "es", "IT": "it", "NL": "nl", "GB": "en", "BE": "fr", "PL": "pl", "PT": "pt",
             "TR": "tr", "SA": "ar", "AE": "ar", "UA": "uk", "BR": "pt", "IL": "he", "IR": "fa", "CH": "de", "AT": "de",
             "IE": "en", "EG": "ar", "PK": "en", "RO": "en", "SE": "en", "KZ": "ru"}


def iban_piece(rng: random.Random, i: int) -> tuple[Piece, str]:
    value, style = iban(rng, i)
    lang = IBAN_LANG[style[:2]]
    key = rng.choice(("iban", "IBAN", "bankAccount", "account_iban", "payout_iban", "Kontonummer", "beneficiary_iban"))
    return Piece(value, value, sentence(rng, lang, "iban", value), key, "", lang), style


def provider_piece(kind: str) -> Callable[[random.Random, int], tuple[Piece, str]]:
    """The piece maker of one provider: its label in English or beside the message language's word for token."""
    label, keys, shapes = PROVIDERS[kind]

    def make(rng: random.Random, i: int) -> tuple[Piece, str]:
        j = i % len(shapes)
        value = shapes[j](rng)
        lang = "en" if i % 2 else rng.choice(ALL_LANGS)
        shown_label = label if lang == "en" else f"{label} ({LEX[lang]['token'][0]})"
        return Piece(value, value, rng.choice(FRAMES[lang]).format(L=shown_label, v=value), rng.choice(keys),
                     f"env {keys[0]}={value} ./deploy.sh", lang), _shape_name(value)
    return make


PROVIDER_PREFIXES = ("ATATT3xFfGF0", "ATBB", "figd_", "secret_", "ntn_", "pat", "sntrys_", "sntryu_", "glsa_", "glc_",
                     "NRAK-", "dop_v1_", "doo_v1_", "dor_v1_", "FlyV1 fm2_", "fo1_", "sbp_", "nfp_", "HRKU-", "AAAA")


def _shape_name(value: str) -> str:
    """A style name for a provider value: its published prefix, else hex or bare."""
    prefix = next((p for p in PROVIDER_PREFIXES if value.startswith(p)), "")
    if prefix:
        return prefix.rstrip("_-").replace(" ", "_").lower()
    return "hex" if all(c in HEX for c in value.replace("-", "")) else "bare"


def private_key_piece(rng: random.Random, i: int) -> tuple[Piece, str]:
    value, style = private_key(rng)
    lang = rng.choice(ALL_LANGS)
    line = rng.choice(FRAMES[lang]).format(L=rng.choice(("private key", "id_ed25519", "key.pem", "tls.key")),
                                           v="\n" + value + "\n")
    key = rng.choice(("private_key", "PRIVATE_KEY", "ssh_key", "tls.key", "signingKey"))
    return Piece(value, value, line, key, "", lang), style


def header_piece(make: Callable[[random.Random], tuple[str, str, str]], label: str
                 ) -> Callable[[random.Random, int], tuple[Piece, str]]:
    """The piece maker of an HTTP header kind (auth_header, session_cookie)."""
    def piece(rng: random.Random, i: int) -> tuple[Piece, str]:
        shown, secret, style = make(rng)
        lang = rng.choice(ALL_LANGS)
        return Piece(secret, shown, rng.choice(FRAMES[lang]).format(L=label, v=shown), "", "", lang), style
    return piece


ALL = PROSE + FIELD + COMMAND
KINDS: dict[str, tuple[Callable[[random.Random, int], tuple[Piece, str]], tuple[Callable, ...]]] = {
    "password": (simple(password, ("pw",), PW_KEYS, PW_COMMANDS), ALL),
    "aws_secret": (aws_piece, ALL),
    "webhook": (webhook_piece, ALL),
    "stripe_whsec": (simple(stripe_whsec, ("Stripe signing secret", "webhook secret", "secret"), WHSEC_KEYS,
                            ("env STRIPE_WEBHOOK_SECRET={v} node server.js",)), ALL),
    "connection_string": (conn_piece, ALL),
    "labelled_key": (simple(labelled_key, ("key", "token", "secret"), KEY_FIELDS, KEY_COMMANDS), ALL),
    "disguised": (simple(disguised, ("key", "token"), DISGUISED_KEYS, DISGUISED_COMMANDS), ALL),
    "email": (simple(email, ("email",), EMAIL_KEYS, EMAIL_COMMANDS), ALL),
    **{kind: (simple(partial(phone, kind=kind), ("phone",), PHONE_KEYS, langs=PHONE_PLANS[kind][0]), PROSE + FIELD)
       for kind in ISSUE_PHONES},
    "ssn": (ssn_piece, PROSE + FIELD),
    "card": (simple(card, ("card",), CARD_KEYS), PROSE + FIELD),
    "iban": (iban_piece, PROSE + FIELD),
    **{kind: (provider_piece(kind), PROSE + FIELD + (COMMAND if kind != "flyio_token" else ())) for kind in PROVIDERS},
    "private_key": (private_key_piece, PROSE + FIELD),
    "jwt": (simple(jwt, ("token",), JWT_KEYS, ("env SUPABASE_SERVICE_ROLE_KEY={v} node seed.js",)), ALL),
    "auth_header": (header_piece(auth_header, "header"), PROSE + HEADER),
    "session_cookie": (header_piece(session_cookie, "cookie"), PROSE + HEADER),
    **{kind: (simple(partial(phone, kind=kind), ("phone",), PHONE_KEYS, langs=PHONE_PLANS[kind][0]), PROSE + FIELD)
       for kind in PHONE_PLANS if kind not in ISSUE_PHONES},
}
"""Per kind: its piece maker and the carriers its cases go through in turn."""


def generate() -> Iterator[Case]:
    """PER_KIND cases of every kind, the same on every call."""
    rng = random.Random(SEED)
    for kind, (make, carriers) in KINDS.items():
        for i in range(PER_KIND):
            piece, style = make(rng, i)
            carrier = carriers[(i * 7 + i // len(carriers)) % len(carriers)]
            if kind == "private_key" and style == "gcp_sa":
                carrier = gcp_sa_json
            text, is_json, secret = carrier(rng, piece)
            yield Case(kind, f"{carrier.__name__}/{style}", secret, text, text, is_json)


# ---- near misses: what the same carriers hold that is neither secret nor personal -------------------------------

def _bad_luhn(rng: random.Random) -> str:
    number = "4" + digits(rng, 14)
    return number + str((int(luhn_digit(number)) + rng.randint(1, 9)) % 10)


def _bad_iban(rng: random.Random) -> str:
    country, structure = rng.choice(IBAN_BBAN)
    body = bban(rng, structure)
    good = int(iban_check(country, body))
    return group(f"{country}{(good + rng.randint(1, 90) - 2) % 97 + 2:02d}{body}", 4, " ")


def _ssn_invalid(rng: random.Random) -> str:
    area, grp, serial = rng.randint(1, 899), rng.randint(1, 99), rng.randint(1, 9999)
    area, grp, serial = rng.choice(((0, grp, serial), (666, grp, serial), (area, 0, serial), (area, grp, 0)))
    return f"{area:03d}-{grp:02d}-{serial:04d}"


NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "uuid_header": lambda r: f"< x-request-id: {_uuid(r)}\n< x-correlation-id: {_uuid(r).upper()}",
    "git_sha": lambda r: f"commit {pick(r, HEX, 40)}\nMerge: {pick(r, HEX, 7)} {pick(r, HEX, 7)}\n\n    fix retry",
    "message_id": lambda r: f"Message-ID: <{pick(r, B62, 24)}.{digits(r, 10)}@mail.gmail.com>\nX-Mailer: Outlook 16.0",
    "slack_ids": lambda r: dump({"channel": "C0" + pick(r, string.ascii_uppercase + string.digits, 9),
                                 "ts": f"{1733475731 + r.randint(0, 10**5)}.{digits(r, 6)}",
                                 "client_msg_id": _uuid(r), "text": "<@U04" + pick(r, string.ascii_uppercase, 7)
                                 + "> can you check the deploy?"}),
    "pw_placeholder": lambda r: r.choice(("password: ********", "DB_PASSWORD=${DB_PASSWORD}", "senha: <redacted>",
                                          "PGPASSWORD=$(cat /run/secrets/pg)", '"userPassword": null',
                                          "Passwort: [ENTFERNT]", "mot de passe : (voir coffre-fort)",
                                          "password=<your-password-here>", "contraseña: ••••••••")),
    "ssn_invalid": lambda r: f"{r.choice(('SSN', 'ssn', 'Social Security number'))}: {_ssn_invalid(r)} (rejected)",
    "card_bad_luhn": lambda r: f"card number {group(_bad_luhn(r), 4, ' ')} declined: invalid number",
    "iban_bad_check": lambda r: f"IBAN {_bad_iban(r)} — check digits wrong, please resend",
    "version_build": lambda r: f"iOS 18.{r.randint(0, 2)} (22B{r.randint(10, 99)}) AcmeChat/{r.randint(1, 9)}."
                               f"{r.randint(0, 40)}.{r.randint(0, 9)} (build 20241206.{r.randint(1, 30)})",
    "epoch_ts": lambda r: f"ts={1733475731000 + r.randint(0, 10**8)} elapsed_ns={digits(r, 11)}",
    "logcat_noise": lambda r: f"12-06 10:02:11.{digits(r, 3)}  {r.randint(1000, 9999)}  {r.randint(1000, 9999)} I "
                              f"ActivityManager: Start proc {r.randint(10000, 32000)}:com.acme.chat/"
                              f"u0a{r.randint(100, 400)}",
    "audit_serials": lambda r: f"type=USER_LOGIN msg=audit({1733475731 + r.randint(0, 10**5)}.{digits(r, 3)}:"
                               f"{r.randint(100, 99999)}): pid={r.randint(100, 9999)} uid=0 auid=4294967295 "
                               f"ses=4294967295 res=success",
    "windows_sid": lambda r: f"Security ID: S-1-5-21-{digits(r, 10)}-{digits(r, 10)}-{digits(r, 9)}-"
                             f"{r.randint(1000, 9999)}"
                             f"\nLogon ID: 0x{pick(r, '0123456789ABCDEF', 6)}",
    "crash_address": lambda r: f"{r.randint(0, 9)}   libsystem_kernel.dylib  0x00000001{pick(r, HEX, 8)} "
                               f"__pthread_kill + {r.randint(4, 400)}",
    "file_hash": lambda r: dump({"file": {"path": "C:\\Users\\Public\\setup.exe", "hash": {"sha256": pick(r, HEX, 64),
                                                                                        "md5": pick(r, HEX, 32)}}}),
    "order_tracking": lambda r: f"Order #{digits(r, 11)} shipped, tracking "
                                f"1Z{pick(r, string.ascii_uppercase + string.digits, 16)}"
                                f", invoice INV-2024-{digits(r, 6)}",
    "aws_arn": lambda r: f"arn:aws:iam::{digits(r, 12)}:role/ci-deploy assumed by "
                         f"AROA{pick(r, string.ascii_uppercase, 17)}",
    "data_uri": lambda r: f"<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{pick(r, B64, 80)}\">",
    "mentions": lambda r: f"{r.choice(('@channel', '@here', '@alice'))} see <@U04{pick(r, string.ascii_uppercase, 7)}> "
                          f"and @pytest.fixture in conftest.py",
    "etag_headers": lambda r: f"< etag: W/\"{pick(r, HEX, 4)}-{pick(r, URLSAFE, 27)}\"\n"
                              f"< cf-ray: {pick(r, HEX, 16)}-AMS"
                              f"\n< content-md5: {pick(r, B64, 22)}==",
    "public_pem": lambda r: pem(r.choice(("PUBLIC KEY", "CERTIFICATE")), r.randbytes(r.choice((91, 294, 420)))),
    "ip_and_dates": lambda r: f"client 10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)} at "
                              f"2024-12-0{r.randint(1, 9)} 10:02:11 +0100 port {r.randint(1024, 65535)}",
}
"""Per sort of near miss, a text of it; `generate_negatives` writes NEGATIVE_PER_SORT of each."""

NEGATIVE_PER_SORT = 20


def generate_negatives() -> Iterator[tuple[str, str]]:
    """(sort, text) near misses, the same on every call."""
    rng = random.Random(SEED + 1)
    for sort, make in NEGATIVES.items():
        for _ in range(NEGATIVE_PER_SORT):
            yield sort, make(rng)
