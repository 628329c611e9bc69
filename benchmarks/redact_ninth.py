"""The ninth redaction corpus: values planted in a team's own application logs and ops output, the systems around a
production agent (Rails, Django, Flask, Spring Boot, ASP.NET, pino, winston, zap, logrus/slog, structlog, log4j,
`curl -v`, HAR, httpie, GitHub Actions, GitLab CI, Jenkins `set -x`, Terraform plans and state, Helm values,
`kubectl describe`, Ansible `-vvv`, Compose, `docker run -e`, Sentry events, tracebacks with locals, Java
toString(), slow-query logs, `pg_stat_activity`, Redis MONITOR, browser console exports, Zendesk/Salesforce
exports, invoices, shipping notices, voicemail transcriptions, Twilio webhooks, ICS invites, vCards), with labels
and prose in 16 languages. Written without reading the detection rules or the other corpora.

The formats, each from its public source:
- card: ISO/IEC 7812 IIN ranges as the networks publish them (Visa 4, Mastercard 51-55 and 2221-2720, Amex 34/37,
  Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62, Mir 2200-2204, RuPay 60/652), Luhn check digit.
- iban: ISO 13616 with the SWIFT IBAN registry's BBAN structures, MOD 97-10 check digits.
- ssn: SSA rules (area 001-899 less 666, group 01-99, serial 0001-9999). uk_nino: HMRC NIM39110 prefixes and
  suffix A-D. ca_sin: Service Canada, 9 digits with Luhn. es_dni: Real Decreto 1553/2005, letter = number mod 23.
  br_cpf: Receita Federal, two mod-11 check digits. fi_hetu: DVV, check character = DDMMYYZZZ mod 31.
- phones: ITU-T E.164 plus national plans: NANP (area/exchange 2-9), Ofcom, ARCEP, BNetzA, TRAI, AGCOM, CNMC,
  ACM (NL), UKE (PL), MIC (JP), IFT (MX, 10 digits since 2019), Anatel (BR, 9-digit mobiles), Rossvyaz (RU).
- email: RFC 5322 and RFC 6531 (internationalised local parts and IDN domains), RFC 3986 percent-encoding.
- aws_secret: AWS IAM docs (AKIA/ASIA ids of 20, 40-char secret). stripe_whsec: Stripe docs (`whsec_`).
- webhook: Slack, Discord, Microsoft Teams (webhook.office.com), Google Chat, Mattermost, Telegram Bot API,
  Rocket.Chat, DingTalk, Feishu docs. connection_string: Azure Storage/Service Bus docs, ADO.NET, JDBC drivers'
  docs, ODBC, RFC 3986 userinfo.
- providers: Atlassian (ATATT), Grafana (glsa_), Pulumi (pul-), Doppler (dp.st./dp.pt.), Postman (PMAK-),
  Notion (secret_/ntn_), Figma (figd_), Mapbox (sk.), Supabase (sbp_), DigitalOcean (dop_v1_), Databricks
  (dapi), Sentry (sntrys_/sntryu_), New Relic (NRAK-), Google OAuth client secrets (GOCSPX-), Azure AD client
  secrets (Q~), Heroku (UUID, HRKU-), Cloudflare (API token, Origin CA v1.0-), Bitbucket (ATBB), Vault (hvs.),
  Linear (lin_api_), PlanetScale (pscale_pw_), Dynatrace (dt0c01.), Airtable (pat...), Okta (SSWS, 00...).
- jwt: RFC 7519/7515 (HS256 signed here). private_key: RFC 5208/5915 PEM, OpenSSH PROTOCOL.key.
- auth_header: RFC 7617 Basic, RFC 6750 Bearer, RFC 7616 Digest, AWS SigV4, DRF/Rails Token, Okta SSWS.
  cookie: RFC 6265 with Django, Rails, Express, PHP, Java, ASP.NET and Laravel session cookie shapes.
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

SEED = 90909
PER_KIND = 100
OUTSIDE_TARGET: frozenset[str] = frozenset({"br_cpf", "fi_hetu"})
"""National ids whose checksum is public but which the issue did not name: reported, not held to 0.95."""

HEX = "0123456789abcdef"
UPPER_ALNUM = string.ascii_uppercase + string.digits
URLSAFE = B62 + "-_"
LOWER_ALNUM = string.ascii_lowercase + string.digits
B64 = B62 + "+/"


@dataclass(frozen=True)
class Case:
    """One planted value: `secret` must not survive redaction of `carried` (no 8 consecutive characters)."""

    kind: str
    secret: str
    text: str
    carried: str
    is_json: bool
    form: str


@dataclass(frozen=True)
class Slot:
    """A value ready to write: the secret, the key it sits under, the value as written at that key (the secret or
    a line holding it), a sentence in `lang` holding the value, and the value's print style."""

    kind: str
    secret: str
    key: str
    value: str
    phrase: str
    lang: str
    vstyle: str


# ---- small helpers ---------------------------------------------------------------------------------------------

def stamp(rng: random.Random) -> str:
    """An ISO 8601 time in 2026."""
    return (f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}")


def uuid(rng: random.Random) -> str:
    """A random version 4 UUID."""
    h = pick(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def fill(template: str, key: str, value: str) -> str:
    """A phrase template with `{k}` the key and `{v}` the value."""
    return template.replace("{k}", key).replace("{v}", value)


def b64(data: bytes) -> str:
    """Standard base64 with padding (RFC 4648, section 4)."""
    return base64.b64encode(data).decode()


WORDS = ["tundra", "pelican", "marmot", "quartz", "lantern", "fjord", "saffron", "cobalt", "birch", "nimbus",
         "tamarind", "kestrel", "orchid", "basalt", "juniper", "walrus", "meteor", "lagoon", "paprika", "zephyr"]


# ---- phrases by language ---------------------------------------------------------------------------------------

PW_PHRASES = [
    ("en", "DB_PASSWORD={v}"), ("en", "PGPASSWORD={v} psql -h db.internal -U app -d billing -c 'select 1'"),
    ("en", "mysql -h 10.20.0.7 -u root -p{v} shop_prod"), ("en", "redis-cli -h cache-0 -a {v} PING"),
    ("en", "./bin/seed --db-user app --password {v} --env staging"), ("en", "login ok for admin, password={v}"),
    ("en", "REDIS_PASS={v}"), ("en", "spring.datasource.password={v}"), ("en", "MYSQL_ROOT_PASSWORD: {v}"),
    ("pt", "Senha do banco: {v}"), ("ru", "Пароль БД: {v}"), ("uk", "Пароль до бази: {v}"),
    ("ar", "كلمة المرور: {v}"), ("hi", "पासवर्ड: {v}"), ("th", "รหัสผ่าน: {v}"), ("ro", "Parola: {v}"),
    ("hu", "Jelszó: {v}"), ("fi", "Salasana: {v}"), ("da", "Adgangskode: {v}"), ("no", "Passord: {v}"),
    ("de", "Passwort: {v}"), ("fr", "mot de passe : {v}"), ("it", "password del DB: {v}"),
    ("es", "contraseña: {v}"),
]
PW_KEYS = ["DB_PASSWORD", "PGPASSWORD", "MYSQL_ROOT_PASSWORD", "userPassword", "adminPassword", "REDIS_PASS",
           "spring.datasource.password", "smtpPass", "LDAP_BIND_PASSWORD", "RABBITMQ_DEFAULT_PASS",
           "KEYCLOAK_ADMIN_PASSWORD", "app.db.passwd", "postgresPassword", "MONGO_INITDB_ROOT_PASSWORD",
           "SMTP_PASSWORD", "keystorePassword", "db_pass", "senha", "пароль", "Passwort", "mot_de_passe"]

TOKEN_PHRASES = [
    ("en", "export {k}={v}"), ("en", "{k}={v}"), ("en", "falling back to {k} {v}"), ("en", "{k}: {v}"),
    ("pt", "token configurado ({k}): {v}"), ("ru", "токен {k}: {v}"), ("uk", "токен доступу {k}: {v}"),
    ("ar", "رمز الوصول {k}: {v}"), ("hi", "टोकन {k}: {v}"), ("th", "โทเค็น {k}: {v}"),
    ("ro", "token de acces {k}: {v}"), ("hu", "hozzáférési token ({k}): {v}"), ("fi", "käyttötunnus {k}: {v}"),
    ("da", "adgangstoken {k}: {v}"), ("no", "tilgangstoken {k}: {v}"), ("de", "Zugriffstoken {k}: {v}"),
    ("fr", "jeton d'accès {k} : {v}"), ("it", "token di accesso {k}: {v}"), ("es", "token de acceso {k}: {v}"),
]

LABEL_PHRASES = [
    ("en", "API Key: {v}"), ("en", "Secret key = {v}"), ("en", "access token is {v}"), ("en", "Client Secret: {v}"),
    ("en", "your api key {v} was rotated"), ("pt", "Chave de API: {v}"), ("ru", "Ключ API: {v}"),
    ("uk", "API-ключ: {v}"), ("ar", "مفتاح API: {v}"), ("hi", "एपीआई कुंजी: {v}"), ("th", "คีย์ API: {v}"),
    ("ro", "Cheie API: {v}"), ("hu", "API-kulcs: {v}"), ("fi", "API-avain: {v}"), ("da", "API-nøgle: {v}"),
    ("no", "API-nøkkel: {v}"), ("de", "API-Schlüssel: {v}"), ("fr", "clé API : {v}"), ("it", "chiave API: {v}"),
    ("es", "clave de API: {v}"), ("de", "Geheimer Schlüssel = {v}"), ("fr", "clé secrète : {v}"),
]
LABEL_KEYS = ["API Key", "Secret Key", "Access Token", "Client Secret", "Chave de API", "Ключ API", "API-Schlüssel",
              "Clé API", "Chiave API", "Clave de API", "API-kulcs", "API-avain"]

PHONE_PHRASES = {
    "en": ["Call me at {v}", "Mobile: {v}", "Phone: {v}", "tel. {v}", "customer phone number {v} failed OTP"],
    "pt": ["Telefone: {v}", "me liga no {v}", "celular do cliente: {v}"],
    "ru": ["Телефон: {v}", "звоните по номеру {v}", "моб. {v}"],
    "uk": ["Телефон: {v}", "мобільний: {v}"],
    "ar": ["رقم الهاتف: {v}", "اتصل بي على {v}"],
    "hi": ["फ़ोन नंबर: {v}", "मोबाइल: {v}"],
    "th": ["โทร {v}", "เบอร์โทรศัพท์: {v}"],
    "ro": ["Telefon: {v}", "sunați-mă la {v}"],
    "hu": ["Telefonszám: {v}", "hívjon a {v} számon"],
    "fi": ["Puhelin: {v}", "soita numeroon {v}"],
    "da": ["Telefon: {v}", "ring til mig på {v}"],
    "no": ["Mobil: {v}", "ring meg på {v}"],
    "de": ["Telefon: {v}", "Handy: {v}", "Rückruf unter {v}"],
    "fr": ["Téléphone : {v}", "appelez-moi au {v}", "portable : {v}"],
    "it": ["Telefono: {v}", "cellulare: {v}", "chiamami al {v}"],
    "es": ["Teléfono: {v}", "llámame al {v}", "móvil: {v}"],
}
PHONE_KEYS = ["phone", "mobile", "telefone", "телефон", "telefonnummer", "puhelin", "mobilnummer", "cellulare",
              "telefono_movil", "phoneNumber", "contact_phone", "tel", "telefon", "téléphone", "mobil"]

EMAIL_PHRASES = [
    ("en", "sent reset link to {v}"), ("en", "Email: {v}"), ("en", "user {v} not found"), ("pt", "E-mail: {v}"),
    ("ru", "Эл. почта: {v}"), ("uk", "Електронна пошта: {v}"), ("ar", "البريد الإلكتروني: {v}"),
    ("hi", "ईमेल: {v}"), ("th", "อีเมล: {v}"), ("ro", "E-mail: {v}"), ("hu", "E-mail cím: {v}"),
    ("fi", "Sähköposti: {v}"), ("da", "E-mail: {v}"), ("no", "E-post: {v}"), ("de", "E-Mail: {v}"),
    ("fr", "Courriel : {v}"), ("it", "Indirizzo email: {v}"), ("es", "Correo: {v}"),
]
EMAIL_KEYS = ["email", "customer_email", "userEmail", "correo", "e_mail", "почта", "sähköposti", "contact.email",
              "billing_email", "reply_to"]


# ---- the issue's kinds -----------------------------------------------------------------------------------------

def password_value(rng: random.Random) -> tuple[str, str]:
    """A password: random printable, a passphrase, or a human one."""
    style = rng.choice(["random", "passphrase", "human"])
    if style == "random":
        return pick(rng, string.ascii_letters + string.digits + "!@%^&*-_+=.~", rng.randint(12, 22)), style
    if style == "passphrase":
        words = [w.capitalize() for w in rng.sample(WORDS, 3)]
        return "-".join(words) + rng.choice("!?.#") + digits(rng, 2), style
    return rng.choice(WORDS).capitalize() + rng.choice("@#!") + digits(rng, 4) + rng.choice(WORDS), style


def make_password(rng: random.Random) -> Slot:
    value, style = password_value(rng)
    lang, tmpl = rng.choice(PW_PHRASES)
    return Slot("password", value, rng.choice(PW_KEYS), value, fill(tmpl, "", value), lang, style)


def aws_id(rng: random.Random, prefix: str = "AKIA") -> str:
    return prefix + pick(rng, string.ascii_uppercase + "234567", 16)


def aws_secret_value(rng: random.Random) -> str:
    """40 characters of base64's alphabet, at least one `/` or `+`."""
    s = list(pick(rng, B64, 40))
    s[rng.randrange(1, 39)] = rng.choice("/+")
    return "".join(s)


def make_aws_secret(rng: random.Random) -> Slot:
    secret = aws_secret_value(rng)
    style = rng.choice(["labelled", "labelled", "beside_id", "sts_json"])
    if style == "beside_id":
        akid = aws_id(rng, rng.choice(["AKIA", "ASIA"]))
        value = rng.choice([f"{akid}:{secret}", f"{akid} {secret}", f"{akid}/{secret}", f"{akid},{secret}"])
        phrase = rng.choice(["{v}", "rotated keypair -> {v}", "creds {v} (ci-deployer)", "chave {v}",
                             "ключи: {v}", "aws: {v}"])
        return Slot("aws_secret", secret, rng.choice(["AWS_CREDS", "s3_keypair", "deployCredentials"]), value,
                    fill(phrase, "", value), "any", style)
    key = rng.choice(["AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "SecretAccessKey", "secretAccessKey",
                      "s3.secret-key", "AWS_SECRET_KEY", "fs.s3a.secret.key"])
    lang, tmpl = rng.choice([("en", "aws_secret_access_key = {v}"), ("en", "export AWS_SECRET_ACCESS_KEY={v}"),
                             ("en", "{k}: {v}"), ("de", "AWS Secret Key für {k}: {v}"),
                             ("pt", "chave secreta AWS: {v}")])
    return Slot("aws_secret", secret, key, secret, fill(tmpl, key, secret), lang, style)


def webhook_value(rng: random.Random) -> tuple[str, str, str]:
    """A webhook URL of one of nine chat providers, its secret (the URL after the provider's public scheme, host and
    fixed path: those are the same for every customer) and the provider."""
    p = rng.choice(["slack", "discord", "teams", "gchat", "mattermost", "telegram", "rocketchat", "dingtalk",
                    "feishu"])
    if p == "slack":
        prefix, suffix = "https://hooks.slack.com/services/", ""
        secret = f"T{pick(rng, UPPER_ALNUM, 10)}/B{pick(rng, UPPER_ALNUM, 10)}/{pick(rng, B62, 24)}"
    elif p == "discord":
        prefix, secret, suffix = ("https://discord.com/api/webhooks/",
                                  f"{rng.randint(10**17, 10**19)}/{pick(rng, URLSAFE, 68)}", "")
    elif p == "teams":
        prefix = f"https://{rng.choice(['contoso', 'fabrikam', 'northwind'])}.webhook.office.com/webhookb2/"
        secret, suffix = f"{uuid(rng)}@{uuid(rng)}/IncomingWebhook/{pick(rng, HEX, 32)}/{uuid(rng)}", ""
    elif p == "gchat":
        prefix = f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key="
        secret, suffix = f"AIzaSy{pick(rng, URLSAFE, 33)}&token={pick(rng, URLSAFE, 43)}", ""
    elif p == "mattermost":
        prefix = f"https://mm.{rng.choice(['acme.io', 'ops.example.org'])}/hooks/"
        secret, suffix = pick(rng, LOWER_ALNUM, 26), ""
    elif p == "telegram":
        prefix, suffix = "https://api.telegram.org/bot", "/sendMessage"
        secret = f"{rng.randint(10**8, 10**10)}:AA{pick(rng, URLSAFE, 33)}"
    elif p == "rocketchat":
        prefix, secret, suffix = "https://chat.acme.dev/hooks/", f"{pick(rng, B62, 17)}/{pick(rng, B62, 48)}", ""
    elif p == "dingtalk":
        prefix, secret, suffix = "https://oapi.dingtalk.com/robot/send?access_token=", pick(rng, HEX, 64), ""
    else:
        prefix, secret, suffix = "https://open.feishu.cn/open-apis/bot/v2/hook/", uuid(rng), ""
    return prefix + secret + suffix, secret, p


def make_webhook(rng: random.Random) -> Slot:
    url, secret, style = webhook_value(rng)
    key = rng.choice([f"{style.upper()}_WEBHOOK_URL", "alerting.webhook_url", "notify_url", "webhookUrl"])
    lang, tmpl = rng.choice(TOKEN_PHRASES + [("en", "POST {v} -> 200 ok"), ("de", "Benachrichtigung an {v}"),
                                             ("pt", "enviando alerta para {v}"), ("th", "ส่งแจ้งเตือนไปที่ {v}")])
    return Slot("webhook", secret, key, url, fill(tmpl, key, url), lang, style)


def make_stripe_whsec(rng: random.Random) -> Slot:
    secret = "whsec_" + pick(rng, B62, 32)
    key = rng.choice(["STRIPE_WEBHOOK_SECRET", "stripe.webhook-secret", "webhookSigningSecret",
                      "STRIPE_ENDPOINT_SECRET"])
    lang, tmpl = rng.choice(TOKEN_PHRASES + [
        ("en", "> Ready! Your webhook signing secret is {v} (^C to quit)"),
        ("en", "stripe listen --forward-to localhost:4242/webhook  # secret {v}")])
    return Slot("stripe_whsec", secret, key, secret, fill(tmpl, key, secret), lang, "whsec")


def conn_password(rng: random.Random) -> str:
    return pick(rng, B62, rng.randint(8, 12)) + rng.choice(["-", "_", ".", "~", "%40", "%21"]) + pick(rng, B62, 5)


def connection_value(rng: random.Random) -> tuple[str, str, str]:
    """(secret, connection string, style)."""
    host = rng.choice(["db-prod-1.internal", "10.40.2.15", "db.eu-west-1.rds.amazonaws.com", "data-0.data"])
    pw = conn_password(rng)
    style = rng.choice(["azure_storage", "servicebus", "ado", "jdbc_sqlserver", "jdbc_pg", "jdbc_mysql", "odbc",
                        "uri"])
    if style == "azure_storage":
        pw = b64(rng.randbytes(64))
        s = (f"DefaultEndpointsProtocol=https;AccountName=st{pick(rng, string.ascii_lowercase, 8)};AccountKey={pw};"
             "EndpointSuffix=core.windows.net")
    elif style == "servicebus":
        pw = b64(rng.randbytes(32))
        s = (f"Endpoint=sb://ns-{pick(rng, string.ascii_lowercase, 6)}.servicebus.windows.net/;"
             f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={pw}")
    elif style == "ado":
        s = (f"Server=tcp:sql-{pick(rng, string.ascii_lowercase, 5)}.database.windows.net,1433;Initial Catalog=orders;"
             f"User ID=app_rw;Password={pw};Encrypt=True;TrustServerCertificate=False;")
    elif style == "jdbc_sqlserver":
        s = f"jdbc:sqlserver://{host}:1433;databaseName=crm;user=svc_crm;password={pw};encrypt=true"
    elif style == "jdbc_pg":
        s = f"jdbc:postgresql://{host}:5432/ledger?user=ledger&password={pw}&sslmode=require"
    elif style == "jdbc_mysql":
        s = f"jdbc:mysql://shop:{pw}@{host}:3306/shop?useSSL=true"
    elif style == "odbc":
        s = f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=hr;Uid=hr_reader;Pwd={pw};"
    else:
        scheme, port = rng.choice([("postgresql", ":5432/app"), ("mysql", ":3306/shop"), ("mongodb+srv", "/orders"),
                                   ("redis", ":6379/0"), ("amqp", ":5672/jobs"), ("rediss", ":6380/1")])
        user = "" if scheme.startswith("redis") else rng.choice(["app", "admin", "svc-ingest"])
        s = f"{scheme}://{user}:{pw}@{host}{port}"
    return pw, s, style


def make_connection_string(rng: random.Random) -> Slot:
    secret, value, style = connection_value(rng)
    key = rng.choice({"azure_storage": ["AZURE_STORAGE_CONNECTION_STRING", "ConnectionStrings__Blobs"],
                      "servicebus": ["SERVICEBUS_CONNECTION", "ConnectionStrings__Bus"],
                      "ado": ["ConnectionStrings__Default"], "odbc": ["ODBC_DSN", "ConnectionStrings__Hr"]
                      }.get(style, ["DATABASE_URL", "spring.datasource.url", "db.url", "BROKER_URL"]))
    lang, tmpl = rng.choice(TOKEN_PHRASES + [("en", "connecting to {v}"), ("de", "Verbindung zu {v} fehlgeschlagen"),
                                             ("ru", "не удалось подключиться: {v}"), ("fi", "yhdistetään: {v}")])
    return Slot("connection_string", secret, key, value, fill(tmpl, key, value), lang, style)


def make_labelled_key(rng: random.Random) -> Slot:
    style = rng.choice(["hex32", "alnum40", "urlsafe", "hex64", "grouped"])
    value = {"hex32": lambda: pick(rng, HEX, 32), "alnum40": lambda: pick(rng, B62, 40),
             "urlsafe": lambda: pick(rng, URLSAFE, rng.randint(24, 48)), "hex64": lambda: pick(rng, HEX, 64),
             "grouped": lambda: "-".join(pick(rng, UPPER_ALNUM, 6) for _ in range(4))}[style]()
    lang, tmpl = rng.choice(LABEL_PHRASES)
    return Slot("labelled_key", value, rng.choice(LABEL_KEYS), value, fill(tmpl, "", value), lang, style)


def provider_key(rng: random.Random) -> tuple[str, str, str]:
    """(token, env key, provider) of a provider with a published prefix."""
    p = rng.choice(["github", "stripe", "slack", "gitlab", "google", "sendgrid", "openai", "anthropic"])
    token = {
        "github": lambda: crc_token(rng, "ghp_"),
        "stripe": lambda: "sk_live_" + pick(rng, B62, 24),
        "slack": lambda: f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, B62, 24)}",
        "gitlab": lambda: "glpat-" + pick(rng, URLSAFE, 20),
        "google": lambda: "AIza" + pick(rng, URLSAFE, 35),
        "sendgrid": lambda: f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}",
        "openai": lambda: f"sk-proj-{pick(rng, URLSAFE, 64)}T3BlbkFJ{pick(rng, URLSAFE, 64)}",
        "anthropic": lambda: f"sk-ant-api03-{pick(rng, URLSAFE, 93)}AA",
    }[p]()
    keys = {"github": "GITHUB_TOKEN", "stripe": "STRIPE_SECRET_KEY", "slack": "SLACK_BOT_TOKEN",
            "gitlab": "GITLAB_TOKEN", "google": "GOOGLE_API_KEY", "sendgrid": "SENDGRID_API_KEY",
            "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
    return token, keys[p], p


def disguise(rng: random.Random, token: str) -> tuple[str, str]:
    """`token` with invisible or look-alike characters: zero-width, bidi controls, soft hyphens or full-width."""
    how = rng.choice(["zero_width", "bidi", "soft_hyphen", "fullwidth"])
    if how == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in token), how
    marks = {"zero_width": "\u200b\u200c\u200d\u2060\ufeff", "bidi": "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2069",
             "soft_hyphen": "\u00ad"}[how]
    chars = list(token)
    for _ in range(rng.randint(1, 3)):
        chars.insert(rng.randrange(3, len(chars) - 2), rng.choice(marks))
    return "".join(chars), how


def make_disguised(rng: random.Random) -> Slot:
    token, key, provider = provider_key(rng)
    shown, how = disguise(rng, token)
    lang, tmpl = rng.choice(TOKEN_PHRASES)
    return Slot("disguised", shown, key, shown, fill(tmpl, key, shown), lang, f"{provider}_{how}")


LOCALS = ["ana.souza", "dmitry.volkov", "olena.kovalenko", "rahul.sharma", "somchai.k", "ioana.popescu",
          "kovacs.bence", "mikko.virtanen", "mette.nielsen", "ingrid.haugen", "lukas.schmidt", "chloe.martin",
          "giulia.rossi", "lucia.garcia", "james.whitfield", "fatima.alzahra"]
DOMAINS = ["gmail.com", "outlook.com", "yandex.ru", "ukr.net", "uol.com.br", "web.de", "orange.fr", "libero.it",
           "telefonica.es", "acme-corp.io", "startup.fi", "firma.dk", "posten.no", "freemail.hu", "yahoo.co.in"]
IDN = ["josé.peña@correo.es", "пользователь@почта.рф", "олена@пошта.укр", "müller.jürgen@büro.de",
       "अनिल@उदाहरण.भारत", "สมชาย@ตัวอย่าง.ไทย", "ŝofo@ekzemplo.eo", "søren.lykke@købmand.dk",
       "åsa.öberg@företag.se", "محمد@مثال.مصر", "ärpäd.tőkés@cég.hu", "joão.conceição@empresa.com.br"]


def email_value(rng: random.Random) -> tuple[str, str]:
    """An address in one of seven written forms."""
    local = rng.choice(LOCALS) + rng.choice(["", digits(rng, 2), "+billing", "_" + digits(rng, 3)])
    addr = f"{local}@{rng.choice(DOMAINS)}"
    style = rng.choice(["plain", "plain", "upper", "idn", "pct", "json_u", "html_entity", "mailto"])
    if style == "idn":
        addr = rng.choice(IDN)
        local, domain = addr.split("@")
        return f"{local}{digits(rng, 2)}@{domain}", style
    return {"plain": addr, "upper": addr.upper(), "pct": addr.replace("@", "%40").replace("+", "%2B"),
            "json_u": addr.replace("@", "\\u0040"), "html_entity": addr.replace("@", "&#64;"),
            "mailto": f"mailto:{addr}"}[style], style


def make_email(rng: random.Random) -> Slot:
    value, style = email_value(rng)
    lang, tmpl = rng.choice(EMAIL_PHRASES)
    if style == "pct":
        lang, tmpl = "en", rng.choice(["GET /api/v2/customers?email={v}&expand=orders 404",
                                       "redirect_uri=https%3A%2F%2Fapp.example%2Fcb&login_hint={v}"])
    elif style == "json_u":
        tmpl = rng.choice(['payload={"to":"{v}","template":"reset"}', 'body: {"email": "{v}"}'])
    elif style == "html_entity":
        tmpl = rng.choice(['<a href="mailto:{v}">{v}</a>', "<p>Contact: {v}</p>"])
    return Slot("email", value, rng.choice(EMAIL_KEYS), value, fill(tmpl, "", value), lang, style)


def make_ssn(rng: random.Random) -> Slot:
    area = rng.choice([a for a in range(1, 900) if a != 666])
    a, g, s = f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
    style = rng.choice(["dashes", "dashes", "spaces", "compact"])
    value = {"dashes": f"{a}-{g}-{s}", "spaces": f"{a} {g} {s}", "compact": a + g + s}[style]
    lang, tmpl = rng.choice([("en", "SSN: {v}"), ("en", "ssn={v}"), ("en", "Social Security Number {v}"),
                             ("es", "número de seguro social: {v}"), ("pt", "SSN do titular: {v}"),
                             ("en", "applicant SSN {v} matched 2 records"), ("fr", "SSN (US) : {v}")])
    return Slot("ssn", value, rng.choice(["ssn", "SSN", "social_security_number", "taxpayerSsn", "applicant.ssn"]),
                value, fill(tmpl, "", value), lang, style)


CARD_RANGES = [("visa", ["4"], [16]), ("mastercard", ["51", "52", "53", "54", "55", "2221", "2720", "23"], [16]),
               ("amex", ["34", "37"], [15]), ("discover", ["6011", "65"], [16]), ("jcb", ["3528", "3589", "353"], [16]),
               ("diners", ["36"], [14]), ("unionpay", ["62"], [16, 19]), ("mir", ["2200", "2204"], [16]),
               ("rupay", ["60", "652"], [16])]
CARD_PHRASES = [("en", "Card number: {v}"), ("en", "charge failed for card {v}"), ("pt", "Número do cartão: {v}"),
                ("ru", "Номер карты: {v}"), ("uk", "Номер картки: {v}"), ("ar", "رقم البطاقة: {v}"),
                ("hi", "कार्ड नंबर: {v}"), ("th", "หมายเลขบัตร: {v}"), ("ro", "Numărul cardului: {v}"),
                ("hu", "Kártyaszám: {v}"), ("fi", "Kortin numero: {v}"), ("da", "Kortnummer: {v}"),
                ("no", "Kortnummer: {v}"), ("de", "Kartennummer: {v}"), ("fr", "Numéro de carte : {v}"),
                ("it", "Numero carta: {v}"), ("es", "Número de tarjeta: {v}")]


def card_number(rng: random.Random) -> tuple[str, str]:
    brand, prefixes, lengths = rng.choice(CARD_RANGES)
    n = rng.choice(lengths)
    partial = rng.choice(prefixes)
    partial += digits(rng, n - 1 - len(partial))
    return partial + luhn_digit(partial), brand


def make_card(rng: random.Random) -> Slot:
    number, brand = card_number(rng)
    sep = rng.choice([" ", "-", ".", "_", ""])
    value = group_card(number, sep)
    style = f"{brand}_{ {' ': 'space', '-': 'dash', '.': 'dot', '_': 'underscore', '': 'none'}[sep]}"
    lang, tmpl = rng.choice(CARD_PHRASES)
    key = rng.choice(["card_number", "cardNumber", "pan", "cc_number", "номер_карты", "Kartennummer", "numero_carta"])
    return Slot("card", value, key, value, fill(tmpl, "", value), lang, style)


IBAN_BBANS = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
              "NL": "4a10n", "PT": "4n4n11n2n", "RO": "4a16c", "HU": "3n4n1n15n1n", "FI": "3n11n", "DK": "4n9n1n",
              "NO": "4n6n1n", "BE": "3n7n2n", "PL": "8n16n", "UA": "6n19c", "SA": "2n18c", "AE": "3n16n",
              "BR": "8n5n10n1a1c", "CH": "5n12c", "AT": "5n11n"}
IBAN_PHRASES = [("en", "IBAN: {v}"), ("en", "Please wire the balance to {v}"), ("de", "Bankverbindung: IBAN {v}"),
                ("fr", "virement sur le compte {v}"), ("it", "bonifico su IBAN {v}"), ("es", "transferencia a {v}"),
                ("pt", "depósito no IBAN {v}"), ("ru", "реквизиты: IBAN {v}"), ("uk", "рахунок IBAN {v}"),
                ("ar", "رقم الآيبان: {v}"), ("ro", "Cont IBAN: {v}"), ("hu", "Számlaszám (IBAN): {v}"),
                ("fi", "Tilinumero: {v}"), ("da", "Kontonummer (IBAN): {v}"), ("no", "Kontonummer: {v}"),
                ("hi", "आईबैन: {v}"), ("th", "เลขบัญชี IBAN: {v}")]


def make_iban(rng: random.Random) -> Slot:
    country = rng.choice(sorted(IBAN_BBANS))
    body = bban(rng, IBAN_BBANS[country])
    iban = country + iban_check(country, body) + body
    style = rng.choice(["grouped", "grouped", "compact", "lower", "lower_grouped"])
    value = {"grouped": group(iban, 4, " "), "compact": iban, "lower": iban.lower(),
             "lower_grouped": group(iban.lower(), 4, " ")}[style]
    lang, tmpl = rng.choice(IBAN_PHRASES)
    return Slot("iban", value, rng.choice(["iban", "IBAN", "bankAccount", "payout_iban", "Kontonummer"]), value,
                fill(tmpl, "", value), lang, f"{country}_{style}")


# ---- phone plans -----------------------------------------------------------------------------------------------

Forms = dict[str, str]


def nd(rng: random.Random, n: int, first: str = "23456789") -> str:
    """n digits, the first from `first` (plans reserve 0 and 1 as the first digit of a subscriber number)."""
    return rng.choice(first) + digits(rng, n - 1)


def phone_us_ca(rng: random.Random) -> Forms:
    a = rng.choice(["212", "415", "312", "617", "206", "303", "416", "604", "514", "403", "613", "778", "647", "512"])
    e, n = rng.choice("23456789") + rng.choice("02346789") + digits(rng, 1), digits(rng, 4)
    return {"paren": f"({a}) {e}-{n}", "dashes": f"{a}-{e}-{n}", "dots": f"{a}.{e}.{n}", "spaces": f"{a} {e} {n}",
            "intl_space": f"+1 {a} {e} {n}", "intl_dash": f"+1-{a}-{e}-{n}", "one_paren": f"1 ({a}) {e}-{n}",
            "e164": f"+1{a}{e}{n}", "compact": f"{a}{e}{n}", "intl_paren": f"+1 ({a}) {e}-{n}"}


def phone_uk(rng: random.Random) -> Forms:
    m = "7" + rng.choice("1234579") + digits(rng, 2)
    sub = digits(rng, 6)
    lon, man = nd(rng, 4, "378") + " " + digits(rng, 4), nd(rng, 3) + " " + digits(rng, 4)
    return {"mobile": f"0{m} {sub}", "mobile_intl": f"+44 {m} {sub}", "mobile_intl0": f"+44 (0){m} {sub}",
            "mobile_e164": f"+44{m}{sub}", "mobile_dash": f"0{m}-{sub[:3]}-{sub[3:]}", "london": f"020 {lon}",
            "london_intl": f"+44 20 {lon}", "manchester": f"0161 {man}", "manchester_paren": f"(0161) {man}"}


def phone_fr(rng: random.Random) -> Forms:
    lead = rng.choice("67") if rng.random() < 0.6 else rng.choice("12345")
    p = [digits(rng, 2) for _ in range(4)]
    return {"spaces": f"0{lead} {' '.join(p)}", "dots": f"0{lead}.{'.'.join(p)}", "dashes": f"0{lead}-{'-'.join(p)}",
            "compact": f"0{lead}{''.join(p)}", "intl": f"+33 {lead} {' '.join(p)}",
            "intl0": f"+33 (0){lead} {' '.join(p)}", "e164": f"+33{lead}{''.join(p)}",
            "intl00": f"0033 {lead} {' '.join(p)}"}


def phone_de(rng: random.Random) -> Forms:
    mob = rng.choice(["151", "152", "157", "160", "162", "170", "171", "172", "175", "176", "177", "179"])
    sub = nd(rng, rng.choice([7, 8]))
    city = rng.choice(["30", "89", "40", "221", "69"])
    land = nd(rng, 8 - len(city) + 1)
    return {"mobile": f"0{mob} {sub}", "mobile_intl": f"+49 {mob} {sub}", "mobile_intl0": f"+49 (0){mob} {sub}",
            "mobile_slash": f"0{mob}/{sub}", "mobile_dash": f"0{mob}-{sub}", "mobile_e164": f"+49{mob}{sub}",
            "land": f"0{city} {land}", "land_intl": f"+49 {city} {land}", "land_paren": f"(0{city}) {land}",
            "land_dash": f"0{city}-{land}"}


def phone_in(rng: random.Random) -> Forms:
    m = nd(rng, 10, "6789")
    city = rng.choice(["11", "22", "80", "44", "33"])
    land = nd(rng, 8)
    return {"mobile": f"{m[:5]} {m[5:]}", "mobile_intl": f"+91 {m[:5]} {m[5:]}", "mobile_dash": f"+91-{m[:5]}-{m[5:]}",
            "mobile_e164": f"+91{m}", "mobile_zero": f"0{m}", "mobile_compact": m,
            "land": f"0{city} {land[:4]} {land[4:]}", "land_intl": f"+91 {city} {land[:4]} {land[4:]}",
            "land_dash": f"0{city}-{land[:4]}-{land[4:]}"}


def phone_it(rng: random.Random) -> Forms:
    m = rng.choice(["320", "328", "333", "338", "340", "347", "349", "366", "380", "392"]) + digits(rng, 7)
    land = rng.choice(["06", "02", "011", "055"])
    ls = nd(rng, 10 - len(land))
    return {"mobile": f"{m[:3]} {m[3:6]} {m[6:]}", "mobile_intl": f"+39 {m[:3]} {m[3:6]} {m[6:]}",
            "mobile_compact": m, "mobile_e164": f"+39{m}", "mobile_dash": f"{m[:3]}-{m[3:]}",
            "mobile_dots": f"{m[:3]}.{m[3:6]}.{m[6:]}", "land": f"{land} {ls[:4]} {ls[4:]}",
            "land_intl": f"+39 {land} {ls[:4]} {ls[4:]}"}


def phone_es(rng: random.Random) -> Forms:
    m = "6" + digits(rng, 8) if rng.random() < 0.7 else "7" + rng.choice("1234") + digits(rng, 7)
    land = rng.choice(["91", "93", "95", "96"]) + digits(rng, 7)
    return {"mobile": f"{m[:3]} {m[3:6]} {m[6:]}", "mobile_intl": f"+34 {m[:3]} {m[3:6]} {m[6:]}",
            "mobile_compact": m, "mobile_e164": f"+34{m}", "mobile_pairs": f"{m[:3]}-{m[3:5]}-{m[5:7]}-{m[7:]}",
            "land": f"{land[:2]} {land[2:5]} {land[5:7]} {land[7:]}",
            "land_intl": f"+34 {land[:3]} {land[3:6]} {land[6:]}"}


def phone_nl(rng: random.Random) -> Forms:
    m = nd(rng, 8, "12345678")
    city, land = rng.choice(["20", "10", "70", "30"]), nd(rng, 7)
    return {"mobile_dash": f"06-{m}", "mobile_space": f"06 {m[:4]} {m[4:]}", "mobile_intl": f"+31 6 {m}",
            "mobile_intl0": f"+31 (0)6 {m[:4]} {m[4:]}", "mobile_compact": f"06{m}", "mobile_e164": f"+316{m}",
            "land_dash": f"0{city}-{land[:3]} {land[3:]}", "land_intl": f"+31 {city} {land[:3]} {land[3:]}",
            "land": f"0{city} {land}"}


def phone_pl(rng: random.Random) -> Forms:
    m = rng.choice(["50", "51", "53", "57", "60", "66", "69", "72", "73", "78", "79", "88"]) + digits(rng, 7)
    land = rng.choice(["22", "12", "61", "71", "58"]) + nd(rng, 7)
    return {"mobile": f"{m[:3]} {m[3:6]} {m[6:]}", "mobile_intl": f"+48 {m[:3]} {m[3:6]} {m[6:]}",
            "mobile_e164": f"+48{m}", "mobile_dash": f"{m[:3]}-{m[3:6]}-{m[6:]}", "mobile_compact": m,
            "land": f"{land[:2]} {land[2:5]} {land[5:7]} {land[7:]}",
            "land_paren": f"({land[:2]}) {land[2:5]} {land[5:7]} {land[7:]}", "land_intl": f"+48 {land[:2]} {land[2:]}"}


def phone_jp(rng: random.Random) -> Forms:
    m, a, b = rng.choice(["90", "80", "70"]), nd(rng, 4, "123456789"), digits(rng, 4)
    city = rng.choice(["3", "6"])
    return {"mobile": f"0{m}-{a}-{b}", "mobile_intl": f"+81 {m}-{a}-{b}", "mobile_intl_space": f"+81 {m} {a} {b}",
            "mobile_e164": f"+81{m}{a}{b}", "mobile_compact": f"0{m}{a}{b}", "land": f"0{city}-{a}-{b}",
            "land_intl": f"+81 {city}-{a}-{b}", "land_paren": f"(0{city}) {a}-{b}"}


def phone_mx(rng: random.Random) -> Forms:
    area = rng.choice(["55", "81", "33", "222", "664", "998"])
    sub = nd(rng, 10 - len(area))
    s = f"{sub[:-4]} {sub[-4:]}"
    return {"national": f"{area} {s}", "intl": f"+52 {area} {s}", "intl_one": f"+52 1 {area} {s}",
            "paren": f"({area}) {sub[:-4]}-{sub[-4:]}", "compact": area + sub, "e164": f"+52{area}{sub}",
            "dashes": f"{area}-{sub[:-4]}-{sub[-4:]}"}


def phone_br(rng: random.Random) -> Forms:
    ddd = rng.choice(["11", "21", "31", "41", "51", "61", "71", "81", "85", "19", "27", "48"])
    m, land = "9" + nd(rng, 4, "6789"), nd(rng, 4, "2345")
    m4, l4 = digits(rng, 4), digits(rng, 4)
    return {"mobile_paren": f"({ddd}) {m}-{m4}", "mobile_intl": f"+55 {ddd} {m}-{m4}",
            "mobile_intl_paren": f"+55 ({ddd}) {m}-{m4}", "mobile_space": f"{ddd} {m} {m4}",
            "mobile_e164": f"+55{ddd}{m}{m4}", "land_paren": f"({ddd}) {land}-{l4}",
            "land_intl": f"+55 {ddd} {land}-{l4}"}


def phone_ru(rng: random.Random) -> Forms:
    code = rng.choice(["495", "499", "812"]) if rng.random() < 0.4 else "9" + digits(rng, 2)
    a, b, c = nd(rng, 3), digits(rng, 2), digits(rng, 2)
    return {"intl_paren": f"+7 ({code}) {a}-{b}-{c}", "intl_space": f"+7 {code} {a} {b} {c}",
            "eight_paren": f"8 ({code}) {a}-{b}-{c}", "eight_dash": f"8-{code}-{a}-{b}-{c}",
            "e164": f"+7{code}{a}{b}{c}", "eight_compact": f"8{code}{a}{b}{c}", "intl_mixed": f"+7 {code} {a}-{b}-{c}"}


PHONES: dict[str, tuple[Callable[[random.Random], Forms], list[str]]] = {
    "phone_us_ca": (phone_us_ca, ["en", "fr", "es"]), "phone_uk": (phone_uk, ["en"]), "phone_fr": (phone_fr, ["fr"]),
    "phone_de": (phone_de, ["de"]), "phone_in": (phone_in, ["hi", "en"]), "phone_it": (phone_it, ["it"]),
    "phone_es": (phone_es, ["es"]), "phone_nl": (phone_nl, ["en", "de"]), "phone_pl": (phone_pl, ["en", "uk"]),
    "phone_jp": (phone_jp, ["en"]), "phone_mx": (phone_mx, ["es"]), "phone_br": (phone_br, ["pt"]),
    "phone_ru": (phone_ru, ["ru", "uk"]),
}


def make_phone(kind: str) -> Callable[[random.Random], Slot]:
    """A maker for one country's numbers, each with a context word: half in the country's languages."""
    forms_of, local = PHONES[kind]

    def make(rng: random.Random) -> Slot:
        style, value = rng.choice(sorted(forms_of(rng).items()))
        lang = rng.choice(local) if rng.random() < 0.5 else rng.choice(sorted(PHONE_PHRASES))
        phrase = fill(rng.choice(PHONE_PHRASES[lang]), "", value)
        return Slot(kind, value, rng.choice(PHONE_KEYS), value, phrase, lang, style)
    return make


# ---- provider tokens -------------------------------------------------------------------------------------------

def sentry_token(rng: random.Random) -> str:
    """An org token (`sntrys_`, base64 JSON claims, `_`, 43 random) or a user token (`sntryu_`, 64 hex)."""
    if rng.random() < 0.5:
        return "sntryu_" + pick(rng, HEX, 64)
    claims = {"iat": rng.randint(1_700_000_000, 1_790_000_000), "url": "https://sentry.io", "region_url": "https://de.sentry.io",
              "org": rng.choice(["acme", "northwind", "globex"])}
    return f"sntrys_{b64(json.dumps(claims, separators=(',', ':')).encode()).rstrip('=')}_{pick(rng, B64, 43)}"


def mapbox_secret(rng: random.Random) -> str:
    """`sk.` + base64url of {"u": user, "a": id} + `.` + 22 characters."""
    claims = {"u": rng.choice(["acme-maps", "fleetops", "geo-team"]), "a": pick(rng, LOWER_ALNUM, 25)}
    return f"sk.{b64url(json.dumps(claims, separators=(',', ':')).encode())}.{pick(rng, URLSAFE, 22)}"


PROVIDERS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "atlassian_token": (lambda r: f"ATATT3xFfGF0{pick(r, URLSAFE, 171)}={pick(r, HEX.upper(), 8)}",
                        ["JIRA_API_TOKEN", "ATLASSIAN_API_TOKEN", "confluence.token"]),
    "grafana_token": (lambda r: f"glsa_{pick(r, B62, 32)}_{pick(r, HEX, 8)}",
                      ["GRAFANA_SA_TOKEN", "grafana.api_key", "GF_TOKEN"]),
    "pulumi_token": (lambda r: "pul-" + pick(r, HEX, 40), ["PULUMI_ACCESS_TOKEN"]),
    "doppler_token": (lambda r: (f"dp.st.{r.choice(['prd', 'dev', 'stg'])}.{pick(r, B62, 40)}" if r.random() < 0.6
                                 else "dp.pt." + pick(r, B62, 43)), ["DOPPLER_TOKEN", "doppler.serviceToken"]),
    "postman_key": (lambda r: f"PMAK-{pick(r, HEX, 24)}-{pick(r, HEX, 34)}", ["POSTMAN_API_KEY", "postmanApiKey"]),
    "notion_token": (lambda r: "secret_" + pick(r, B62, 43) if r.random() < 0.5 else f"ntn_{pick(r, B62, 46)}",
                     ["NOTION_TOKEN", "NOTION_API_KEY", "notion.integration_secret"]),
    "figma_token": (lambda r: "figd_" + pick(r, URLSAFE, 40), ["FIGMA_TOKEN", "figmaAccessToken"]),
    "mapbox_secret": (mapbox_secret, ["MAPBOX_DOWNLOADS_TOKEN", "MAPBOX_SECRET_TOKEN"]),
    "supabase_token": (lambda r: "sbp_" + pick(r, HEX, 40), ["SUPABASE_ACCESS_TOKEN"]),
    "digitalocean_token": (lambda r: f"{r.choice(['dop', 'doo', 'dor'])}_v1_{pick(r, HEX, 64)}",
                           ["DIGITALOCEAN_TOKEN", "DO_API_TOKEN", "do_token"]),
    "databricks_token": (lambda r: "dapi" + pick(r, HEX, 32) + r.choice(["", "-2", "-3"]),
                         ["DATABRICKS_TOKEN", "databricks.token"]),
    "sentry_token": (sentry_token, ["SENTRY_AUTH_TOKEN", "sentry.authToken"]),
    "newrelic_key": (lambda r: "NRAK-" + pick(r, UPPER_ALNUM, 27), ["NEW_RELIC_API_KEY", "newrelic.user_key"]),
    "gcp_oauth_secret": (lambda r: "GOCSPX-" + pick(r, URLSAFE, 28), ["GOOGLE_CLIENT_SECRET", "client_secret",
                                                                       "oauth.google.clientSecret"]),
    "azure_client_secret": (lambda r: f"{pick(r, B62, 3)}{r.choice('78')}Q~{pick(r, B62 + '_.~-', 34)}",
                            ["AZURE_CLIENT_SECRET", "ClientSecret", "AzureAd__ClientSecret", "ARM_CLIENT_SECRET"]),
    "heroku_key": (lambda r: uuid(r) if r.random() < 0.6 else "HRKU-AA" + pick(r, URLSAFE, 58),
                   ["HEROKU_API_KEY", "heroku.apiKey", "HEROKU_OAUTH_TOKEN"]),
    "cloudflare_token": (lambda r: (pick(r, URLSAFE, 40) if r.random() < 0.6
                                    else f"v1.0-{pick(r, HEX, 24)}-{pick(r, HEX, 146)}"),
                         ["CLOUDFLARE_API_TOKEN", "CF_API_TOKEN", "CLOUDFLARE_ORIGIN_CA_KEY"]),
    "bitbucket_app_password": (lambda r: "ATBB" + pick(r, B62, 28) + pick(r, HEX.upper(), 8),
                               ["BITBUCKET_APP_PASSWORD", "bitbucket.appPassword", "BB_AUTH_STRING"]),
    "vault_token": (lambda r: "hvs." + (pick(r, B62, 24) if r.random() < 0.5 else "CAESI" + pick(r, URLSAFE, 86)),
                    ["VAULT_TOKEN", "vault.token"]),
    "linear_key": (lambda r: "lin_api_" + pick(r, B62, 40), ["LINEAR_API_KEY"]),
    "planetscale_password": (lambda r: f"pscale_{r.choice(['pw', 'tkn'])}_{pick(r, URLSAFE, 43)}",
                             ["PLANETSCALE_DB_PASSWORD", "PSCALE_SERVICE_TOKEN"]),
    "dynatrace_token": (lambda r: f"dt0c01.{pick(r, UPPER_ALNUM, 24)}.{pick(r, UPPER_ALNUM, 64)}",
                        ["DT_API_TOKEN", "DYNATRACE_TOKEN"]),
    "airtable_pat": (lambda r: f"pat{pick(r, B62, 14)}.{pick(r, HEX, 64)}", ["AIRTABLE_TOKEN", "airtable.apiKey"]),
    "okta_token": (lambda r: "00" + pick(r, URLSAFE, 40), ["OKTA_API_TOKEN", "okta.client.token"]),
}


def make_provider(kind: str) -> Callable[[random.Random], Slot]:
    """A maker for one provider's tokens under its usual keys and in the shared token phrases."""
    token_of, keys = PROVIDERS[kind]

    def make(rng: random.Random) -> Slot:
        token, key = token_of(rng), rng.choice(keys)
        lang, tmpl = rng.choice(TOKEN_PHRASES)
        return Slot(kind, token, key, token, fill(tmpl, key, token), lang, key.lower())
    return make


# ---- JWTs, HTTP auth, cookies ----------------------------------------------------------------------------------

def jwt_value(rng: random.Random) -> tuple[str, str]:
    """An HS256 JWT (signed with a random key) or an RS256 one with a random 256-byte signature."""
    alg = rng.choice(["HS256", "RS256"])
    header = {"alg": alg, "typ": "JWT"} | ({"kid": pick(rng, URLSAFE, 16)} if alg == "RS256" else {})
    iat = rng.randint(1_760_000_000, 1_790_000_000)
    claims = rng.choice([{"role": "service_role", "iss": "supabase", "ref": pick(rng, string.ascii_lowercase, 20)},
                         {"sub": str(rng.randint(1000, 99999)), "scope": "orders:write", "aud": "api.acme.io"},
                         {"sub": uuid(rng), "email_verified": True, "tenant": "eu-1"}])
    claims |= {"iat": iat, "exp": iat + 3600}
    signing = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
    if alg == "HS256":
        sig = hmac.new(rng.randbytes(32), signing.encode(), hashlib.sha256).digest()
    else:
        sig = rng.randbytes(256)
    return signing + "." + b64url(sig), alg


def make_jwt(rng: random.Random) -> Slot:
    token, alg = jwt_value(rng)
    key = rng.choice(["id_token", "access_token", "SUPABASE_SERVICE_ROLE_KEY", "jwt", "refreshToken", "auth.token"])
    lang, tmpl = rng.choice(TOKEN_PHRASES + [("en", "GET /callback?token={v} 302"), ("en", "auth cookie {v}")])
    return Slot("jwt", token, key, token, fill(tmpl, key, token), lang, alg)


def auth_value(rng: random.Random) -> tuple[str, str, str]:
    """(secret, header value, scheme)."""
    scheme = rng.choice(["basic", "bearer", "digest", "sigv4", "token", "ssws"])
    if scheme == "basic":
        cred = f"{rng.choice(['deploy', 'admin', 'jenkins'])}:{pick(rng, B62 + '!_-', rng.randint(10, 18))}"
        s = b64(cred.encode())
        return s, f"Basic {s}", scheme
    if scheme == "bearer":
        s = pick(rng, URLSAFE + ".", rng.randint(32, 64))
        return s, f"Bearer {s}", scheme
    if scheme == "digest":
        s = pick(rng, HEX, 32)
        return s, (f'Digest username="ops", realm="api@acme.io", nonce="{pick(rng, B62, 32)}", uri="/v1/export", '
                   f'qop=auth, nc=00000001, cnonce="{pick(rng, B62, 16)}", response="{s}", '
                   f'opaque="{pick(rng, B62, 20)}"'), scheme
    if scheme == "sigv4":
        s = pick(rng, HEX, 64)
        return s, (f"AWS4-HMAC-SHA256 Credential={aws_id(rng)}/20261206/eu-central-1/s3/aws4_request, "
                   f"SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature={s}"), scheme
    if scheme == "token":
        s = pick(rng, HEX, 40)
        return s, rng.choice([f"Token {s}", f'Token token="{s}"']), scheme
    s = "00" + pick(rng, URLSAFE, 40)
    return s, f"SSWS {s}", scheme


def make_auth_header(rng: random.Random) -> Slot:
    secret, value, scheme = auth_value(rng)
    key = "Proxy-Authorization" if scheme == "basic" and rng.random() < 0.2 else "Authorization"
    return Slot("auth_header", secret, key, value, f"{key}: {value}", "any", scheme)


def cookie_value(rng: random.Random) -> tuple[str, str, str]:
    """(session value, cookie pair, framework)."""
    fw = rng.choice(["django", "rails", "express", "php", "java", "aspnet", "laravel", "flask"])
    s = {"django": lambda: pick(rng, string.ascii_lowercase + string.digits, 32),
         "rails": lambda: f"{b64(rng.randbytes(48))}--{pick(rng, HEX, 40)}",
         "express": lambda: f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, B64, 43)}",
         "php": lambda: pick(rng, string.ascii_lowercase + string.digits, 26),
         "java": lambda: pick(rng, HEX.upper(), 32),
         "aspnet": lambda: "CfDJ8" + pick(rng, URLSAFE, 150),
         "laravel": lambda: b64(rng.randbytes(120)).rstrip("="),
         "flask": lambda: f"eyJ1c2VyX2lkIjo{pick(rng, URLSAFE, 20)}.{pick(rng, URLSAFE, 6)}.{pick(rng, URLSAFE, 27)}",
         }[fw]()
    name = {"django": "sessionid", "rails": "_shop_session", "express": "connect.sid", "php": "PHPSESSID",
            "java": "JSESSIONID", "aspnet": ".AspNetCore.Session", "laravel": "laravel_session", "flask": "session"}[fw]
    return s, f"{name}={s}", fw


def make_cookie(rng: random.Random) -> Slot:
    secret, pair, fw = cookie_value(rng)
    if rng.random() < 0.5:
        key, value = "Cookie", rng.choice([pair, f"_ga=GA1.2.{digits(rng, 9)}.{digits(rng, 10)}; {pair}",
                                           f"{pair}; theme=dark; lang=pt-BR"])
    else:
        key, value = "Set-Cookie", f"{pair}; Path=/; HttpOnly; Secure; SameSite=Lax"
    return Slot("cookie", secret, key, value, f"{key}: {value}", "any", fw)


# ---- national ids ----------------------------------------------------------------------------------------------

def make_id(kind: str, rng: random.Random) -> Slot:
    """A national id of `kind`, with its label in the country's language or English."""
    value, style, labels = ID_MAKERS[kind](rng)
    lang, label = rng.choice(labels)
    return Slot(kind, value, label.replace(" ", "_").lower(), value, f"{label}: {value}", lang, style)


def uk_nino(rng: random.Random) -> tuple[str, str, list[tuple[str, str]]]:
    bad = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}
    first = [c for c in string.ascii_uppercase if c not in "DFIQUV"]
    second = [c for c in string.ascii_uppercase if c not in "DFIOQUV"]
    prefix = next(p for p in (rng.choice(first) + rng.choice(second) for _ in range(50)) if p not in bad)
    d, suffix = digits(rng, 6), rng.choice("ABCD")
    style = rng.choice(["spaced", "compact"])
    value = f"{prefix} {d[:2]} {d[2:4]} {d[4:]} {suffix}" if style == "spaced" else f"{prefix}{d}{suffix}"
    return value, style, [("en", "NI number"), ("en", "National Insurance No"), ("en", "NINO")]


def ca_sin(rng: random.Random) -> tuple[str, str, list[tuple[str, str]]]:
    partial = rng.choice("1234567") + digits(rng, 7)
    n = partial + luhn_digit(partial)
    style = rng.choice(["spaced", "dashed", "compact"])
    value = {"spaced": f"{n[:3]} {n[3:6]} {n[6:]}", "dashed": f"{n[:3]}-{n[3:6]}-{n[6:]}", "compact": n}[style]
    return value, style, [("en", "SIN"), ("en", "Social Insurance Number"), ("fr", "NAS"),
                          ("fr", "Numéro d'assurance sociale")]


def es_dni(rng: random.Random) -> tuple[str, str, list[tuple[str, str]]]:
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if rng.random() < 0.3:
        lead = rng.choice("XYZ")
        n = digits(rng, 7)
        return f"{lead}{n}{letters[int(str('XYZ'.index(lead)) + n) % 23]}", "nie", [("es", "NIE"), ("es", "N.I.E.")]
    n = digits(rng, 8)
    style = rng.choice(["compact", "dash"])
    value = f"{n}{letters[int(n) % 23]}" if style == "compact" else f"{n}-{letters[int(n) % 23]}"
    return value, style, [("es", "DNI"), ("es", "NIF"), ("en", "Spanish ID (DNI)")]


def br_cpf(rng: random.Random) -> tuple[str, str, list[tuple[str, str]]]:
    n = [int(c) for c in digits(rng, 9)]
    for width in (10, 11):
        total = sum(d * w for d, w in zip(n, range(width, 1, -1), strict=True))
        n.append(0 if total % 11 < 2 else 11 - total % 11)
    s = "".join(map(str, n))
    style = rng.choice(["dotted", "compact"])
    value = f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}" if style == "dotted" else s
    return value, style, [("pt", "CPF"), ("pt", "CPF do titular"), ("en", "Brazilian CPF")]


def fi_hetu(rng: random.Random) -> tuple[str, str, list[tuple[str, str]]]:
    day, month = rng.randint(1, 28), rng.randint(1, 12)
    century = rng.choice(["-", "A", "Y", "B"])
    year = rng.randint(40, 99) if century in "-Y" else rng.randint(0, 23)
    z = f"{rng.randint(2, 899):03d}"
    base = f"{day:02d}{month:02d}{year:02d}"
    check = "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(base + z) % 31]
    return f"{base}{century}{z}{check}", f"century_{'old' if century in '-Y' else 'new'}", [
        ("fi", "Henkilötunnus"), ("fi", "HETU"), ("en", "Finnish personal identity code")]


ID_MAKERS = {"uk_nino": uk_nino, "ca_sin": ca_sin, "es_dni": es_dni, "br_cpf": br_cpf, "fi_hetu": fi_hetu}


# ---- private keys ----------------------------------------------------------------------------------------------

def pem_key(rng: random.Random) -> tuple[str, str, list[str]]:
    """(style, PEM type, base64 body lines) of an EC, Ed25519 or OpenSSH private key from a seeded scalar."""
    style = rng.choice(["ec_pkcs8", "ec_sec1", "ed25519_pkcs8", "openssh"])
    if style == "openssh":
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"deploy@ci-runner")
        body = b64(blob)
        return style, "OPENSSH PRIVATE KEY", [body[i:i + 70] for i in range(0, len(body), 70)]
    if style == "ed25519_pkcs8":
        key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        fmt = serialization.PrivateFormat.PKCS8
    else:
        curve = rng.choice([ec.SECP256R1(), ec.SECP384R1(), ec.SECP256K1()])
        key = ec.derive_private_key(rng.randrange(2**(curve.key_size - 8), 2**(curve.key_size - 1)), curve)
        fmt = getattr(serialization.PrivateFormat, "PKCS8" if style == "ec_pkcs8" else "TraditionalOpenSSL")
    pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
    lines = pem.strip().splitlines()
    return style, lines[0][len("-----BEGIN "):-len("-----")], lines[1:-1]


# ---- carriers: plain text, from templates ----------------------------------------------------------------------

Doc = dict | list | None
Carrier = Callable[[random.Random, Slot], tuple[str, Doc]]


def fields(rng: random.Random, s: Slot) -> dict[str, object]:
    """What a plain template may name: times, small numbers, the slot's phrase, key and value (quoted as logfmt,
    shell and CSV would quote it), and the key as a variable name."""
    v = s.value
    return {"ts": stamp(rng), "sp": stamp(rng).replace("T", " "), "ms": digits(rng, 3), "us": digits(rng, 6),
            "n": rng.randint(1, 9), "line": rng.randint(20, 400), "pid": rng.randint(100, 65000), "uuid": uuid(rng),
            "pod": f"{pick(rng, HEX, 10)}-{pick(rng, LOWER_ALNUM, 5)}", "secs": f"{rng.uniform(1, 9):.6f}",
            "sfid": pick(rng, B62, 15),
            "phrase": s.phrase, "key": s.key, "value": v, "var": "".join(c if c.isalnum() else "_" for c in s.key),
            "qv": f'"{v}"' if " " in v else v, "qkv": f'"{s.key}={v}"' if " " in v else f"{s.key}={v}",
            "cv": f'"{v}"' if "," in v or '"' in v else v}


def templated(template: str) -> Carrier:
    """A plain carrier writing `template` (str.format over `fields`)."""
    return lambda rng, s: (template.format(**fields(rng, s)), None)


MESSAGE_PLAIN: dict[str, Carrier] = {name: templated(t) for name, t in {
    "rails": "I, [{ts}.{us} #{pid}]  INFO -- : [{uuid}] {phrase}",
    "django": "[{sp}] WARNING [django.request:{line}] {phrase}",
    "flask": "[{sp},{ms}] ERROR in app: {phrase}",
    "spring": "{ts}.{ms}Z  WARN 1 --- [nio-8080-exec-{n}] c.a.billing.InvoiceService               : {phrase}",
    "aspnet": "warn: Contoso.Api.Controllers.OrdersController[{n}]\n      {phrase}",
    "log4j": "{sp},{ms} ERROR [pool-{n}-thread-1] com.acme.sync.Worker - {phrase}",
    "zap_console": "{ts}.{ms}Z\tINFO\tworker/run.go:{line}\t{phrase}",
    "github_actions": "{ts}.{us}1Z ##[group]Run ./scripts/deploy.sh\n{ts}.{us}2Z {phrase}\n{ts}.{us}3Z ##[endgroup]",
    "gitlab_ci": "Running with gitlab-runner 17.{n}.0 on docker-runner-{n}\n$ ./ci/smoke.sh\n{phrase}\nJob succeeded",
    "jenkins": "[Pipeline] sh\n+ set -x\n+ echo '{phrase}'\n{phrase}\n[Pipeline] }}",
    "ansible": ("<web-0{n}> ESTABLISH SSH CONNECTION FOR USER: deploy\nok: [web-0{n}] => {{\n"
                "    \"msg\": \"{phrase}\"\n}}"),
}.items()}

KEYED_PLAIN: dict[str, Carrier] = {name: templated(t) for name, t in {
    "logfmt": 'time="{ts}Z" level=warning msg="config loaded" component=worker {key}={qv}',
    "docker_run": "$ docker run -d --name api -p 8080:8080 -e NODE_ENV=production -e {qkv} acme/api:1.{line}",
    "compose": ("services:\n  api:\n    image: acme/api:1.{line}\n    environment:\n      - LOG_LEVEL=info\n"
                "      - {key}={value}\n    ports:\n      - \"8080:8080\""),
    "helm": "# values-prod.yaml\nreplicaCount: {n}\nsecrets:\n  {key}: \"{value}\"\nresources:\n  limits: {{}}",
    "kubectl_describe": ("Name:         api-{pod}\nNamespace:    prod\nContainers:\n  api:\n    Environment:\n"
                         "      PORT:  8080\n      {key}:  {value}\n    Mounts:  <none>"),
    "terraform_plan": ("  # module.app.aws_ssm_parameter.cfg will be created\n"
                       "  + resource \"aws_ssm_parameter\" \"cfg\" {{\n"
                       "      + name  = \"/prod/{key}\"\n      + type  = \"String\"\n"
                       "      + value = \"{value}\"\n    }}\n\n"
                       "Plan: {n} to add, 0 to change, 0 to destroy."),
    "properties": "# application-prod.properties\nserver.port=8{ms}\n{key}={value}\nmain.lazy=true",
    "py_locals": ("Traceback (most recent call last):\n  File \"/srv/app/billing/sync.py\", line {line}, in push\n"
                  "    resp.raise_for_status()\n    Locals:\n      retries = 3\n      {var} = '{value}'\n"
                  "requests.exceptions.HTTPError: 401 Client Error"),
    "java_tostring": ("java.lang.IllegalStateException: cannot save Account{{id={pid}, {key}='{value}', active=true}}\n"
                      "\tat com.acme.crm.AccountService.save(AccountService.java:{line})"),
    "slow_query": ("# Time: {ts}.{us}Z\n# Query_time: {secs}  Lock_time: 0.000120 Rows_sent: 1  Rows_examined: {pid}\n"
                   "SELECT id FROM accounts WHERE `{key}` = '{value}' LIMIT 1;"),
    "pg_activity": (" pid  | usename |        state        | query\n------+---------+---------------------+------\n"
                    " {pid} | app     | idle in transaction | UPDATE customers SET \"{key}\" = '{value}' WHERE id = 7"),
    "redis_monitor": "176{us}{n}.{us} [0 10.0.{n}.2{n}:{pid}] \"HSET\" \"user:{pid}\" \"{key}\" \"{value}\"",
    "zendesk_csv": "Ticket ID,Status,{key},Created\n{pid},open,{cv},{ts}Z",
    "salesforce_csv": "Id,AccountId,{key},CreatedDate\n003{sfid},001{pid},{cv},{ts}.000Z",
}.items()}


# ---- carriers: JSON documents ---------------------------------------------------------------------------------

def pino(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return s.phrase, {"level": 40, "time": rng.randint(1_760_000_000_000, 1_790_000_000_000),
                      "pid": rng.randint(7, 999), "hostname": f"api-{pick(rng, HEX, 5)}", "msg": s.phrase}


def winston(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return s.phrase, {"level": "error", "message": s.phrase, "service": "checkout", "timestamp": stamp(rng) + "Z"}


def structlog(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return s.phrase, {"event": s.phrase, "logger": "app.jobs", "level": "warning", "timestamp": stamp(rng) + "Z"}


def browser_console(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return s.phrase, [{"type": "console-api", "level": "log", "text": s.phrase,
                       "url": f"https://app.acme.io/static/js/main.{pick(rng, HEX, 8)}.js", "lineNumber": 1}]


def zendesk(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return s.phrase, {"ticket": {"id": rng.randint(10000, 99999), "subject": "Login problem",
                                 "comments": [{"author_id": rng.randint(1, 10**9), "body": s.phrase, "public": True}]}}


def zap_json(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return s.value, {"level": "error", "ts": rng.uniform(1.76e9, 1.79e9), "caller": "store/pg.go:88",
                     "msg": "connect failed", s.key: s.value}


def serilog(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return s.value, {"Timestamp": stamp(rng) + "+00:00", "Level": "Warning", "MessageTemplate": "Settings {@Settings}",
                     "Properties": {"Settings": {s.key: s.value}, "SourceContext": "Contoso.Api.Startup"}}


def sentry_event(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    var = s.key.replace(".", "_").replace("-", "_").replace(" ", "_")
    return s.value, {"event_id": pick(rng, HEX, 32), "platform": "python", "exception": {"values": [{
        "type": "KeyError", "value": "'tenant'", "stacktrace": {"frames": [{
            "filename": "app/tasks.py", "function": "sync", "lineno": rng.randint(10, 300),
            "vars": {"attempt": "2", var: f"'{s.value}'"}}]}}]}}


def terraform_state(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return s.value, {"version": 4, "terraform_version": "1.9.5", "resources": [{
        "mode": "managed", "type": "kubernetes_secret", "name": "app", "instances": [{
            "attributes": {"metadata": [{"name": "app-env"}], "data": {s.key: s.value}}}]}]}


def har_post(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    body = json.dumps({s.key: s.value}, ensure_ascii=False)
    return s.value, {"log": {"version": "1.2", "entries": [{"startedDateTime": stamp(rng) + ".000Z", "request": {
        "method": "POST", "url": "https://api.acme.io/v1/settings", "headers": [{"name": "Content-Type",
                                                                                "value": "application/json"}],
        "postData": {"mimeType": "application/json", "text": body}}, "response": {"status": 200}}]}}


MESSAGE_JSON: dict[str, Carrier] = {"pino": pino, "winston": winston, "structlog": structlog,
                                    "browser_console": browser_console, "zendesk": zendesk}
KEYED_JSON: dict[str, Carrier] = {"zap_json": zap_json, "serilog": serilog, "sentry_event": sentry_event,
                                  "terraform_state": terraform_state, "har_post": har_post}


# ---- carriers: HTTP headers ------------------------------------------------------------------------------------

def curl_verbose(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    path = rng.choice(["/v2/reports", "/api/orders?page=2", "/internal/healthz"])
    if s.key == "Set-Cookie":
        return (f"> GET {path} HTTP/2\n> Host: api.acme.io\n> User-Agent: curl/8.{rng.randint(0, 9)}.0\n>\n"
                f"< HTTP/2 200\n< content-type: application/json\n< set-cookie: {s.value}\n<"), None
    return (f"*   Trying 203.0.113.{rng.randint(2, 250)}:443...\n> GET {path} HTTP/2\n> Host: api.acme.io\n"
            f"> User-Agent: curl/8.{rng.randint(0, 9)}.0\n> {s.key}: {s.value}\n> Accept: */*\n>\n< HTTP/2 200"), None


def httpie(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return (f"POST /api/v1/jobs HTTP/1.1\nAccept: application/json, */*;q=0.5\n{s.key}: {s.value}\n"
            f"Content-Length: {rng.randint(20, 300)}\nHost: jobs.acme.io\nUser-Agent: HTTPie/3.2.4"), None


def requests_debug(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return (f"DEBUG:urllib3.connectionpool:Starting new HTTPS connection (1): api.acme.io:443\n"
            f"send: b'GET /v1/me HTTP/1.1\\r\\nHost: api.acme.io\\r\\n{s.key}: {s.value}\\r\\n\\r\\n'"), None


def nginx_debug(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return (f"{stamp(rng).replace('-', '/').replace('T', ' ')} [debug] {rng.randint(7, 99)}#0: *{rng.randint(1, 9999)} "
            f"http header: \"{s.key}: {s.value}\""), None


def har_headers(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    side = "response" if s.key == "Set-Cookie" else "request"
    entry = {"request": {"method": "GET", "url": "https://app.acme.io/api/session", "headers": []},
             "response": {"status": 200, "headers": []}}
    entry[side]["headers"] = [{"name": "Accept", "value": "application/json"}, {"name": s.key, "value": s.value}]
    return s.value, {"log": {"version": "1.2", "creator": {"name": "Firefox", "version": "133.0"}, "entries": [entry]}}


def pino_http(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return s.value, {"level": 30, "time": rng.randint(1_760_000_000_000, 1_790_000_000_000), "req": {
        "id": rng.randint(1, 999), "method": "GET", "url": "/api/cart", "headers": {s.key.lower(): s.value}},
        "res": {"statusCode": 200}, "responseTime": rng.randint(2, 900), "msg": "request completed"}


def sentry_request(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return s.value, {"event_id": pick(rng, HEX, 32), "level": "error", "request": {
        "url": "https://shop.acme.io/checkout", "method": "POST", "headers": [["Host", "shop.acme.io"],
                                                                              [s.key, s.value]]}}


HEADER_PLAIN: dict[str, Carrier] = {"curl_verbose": curl_verbose, "httpie": httpie, "requests_debug": requests_debug,
                                    "nginx_debug": nginx_debug}
HEADER_JSON: dict[str, Carrier] = {"har_headers": har_headers, "pino_http": pino_http, "sentry_request": sentry_request}


# ---- carriers: contacts and payments --------------------------------------------------------------------------

def vcard(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    line = f"EMAIL;TYPE=INTERNET:{s.value}" if s.kind == "email" else f"TEL;TYPE=cell:{s.value}"
    return f"BEGIN:VCARD\nVERSION:3.0\nFN:Support contact {rng.randint(1, 99)}\nORG:Acme\n{line}\nEND:VCARD", None


def ics(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    if s.kind == "email":
        to = s.value if s.value.startswith("mailto:") else f"mailto:{s.value}"
        line = f"ATTENDEE;CN=Guest;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION:{to}"
    else:
        line = f"DESCRIPTION:Dial-in fallback - {s.phrase}"
    return (f"BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:{uuid(rng)}@acme.io\nDTSTART:20261206T{rng.randint(8, 17):02d}0000Z\n"
            f"SUMMARY:Onboarding call\nORGANIZER;CN=Ops:mailto:ops@acme.io\n{line}\nEND:VEVENT\nEND:VCALENDAR"), None


def shipping_notice(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return (f"Shipping notice - order {rng.randint(100, 999)}-{digits(rng, 7)}\nCarrier: DHL Express\n"
            f"Recipient contact:\n  {s.phrase}\nEstimated delivery: {stamp(rng)[:10]}"), None


def voicemail(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return (f"Voicemail ({rng.randint(0, 2)}:{rng.randint(10, 59)}) - transcription:\n\"Hi, it's about my order, "
            f"{s.phrase}, thanks.\""), None


def twilio_webhook(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return s.phrase, {"SmsSid": "SM" + pick(rng, HEX, 32), "AccountSid": "AC" + pick(rng, HEX, 32), "From": s.value,
                      "To": rng.choice(["89761", "24365"]), "Body": s.phrase, "NumMedia": "0", "SmsStatus": "received"}


def invoice(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return (f"INVOICE INV-2026-{digits(rng, 5)}\nBill to: Acme Retail GmbH\nAmount due: EUR {rng.randint(100, 9999)},"
            f"{digits(rng, 2)}\nPayment: {s.phrase}\nDue: {stamp(rng)[:10]}"), None


def stripe_like_event(rng: random.Random, s: Slot) -> tuple[str, Doc]:
    return s.value, {"id": "evt_" + pick(rng, B62, 24), "type": "payment_method.attached", "data": {"object": {
        "billing_details": {"name": "Acme"}, s.key: s.value}}}


CONTACT_PLAIN: dict[str, Carrier] = {"vcard": vcard, "ics": ics, "shipping_notice": shipping_notice}
PHONE_PLAIN: dict[str, Carrier] = {"voicemail": voicemail}
PHONE_JSON: dict[str, Carrier] = {"twilio_webhook": twilio_webhook}
PAYMENT_PLAIN: dict[str, Carrier] = {"invoice": invoice}
PAYMENT_JSON: dict[str, Carrier] = {"payment_event": stripe_like_event}


def carriers_for(kind: str) -> tuple[dict[str, Carrier], ...]:
    """(plain message carriers, plain keyed carriers, JSON carriers, the kind's own carriers) for a kind."""
    if kind in ("auth_header", "cookie"):
        return {}, HEADER_PLAIN, HEADER_JSON, {}
    own: dict[str, Carrier] = {}
    if kind == "email" or kind.startswith("phone_"):
        own |= CONTACT_PLAIN
    if kind.startswith("phone_"):
        own |= PHONE_PLAIN | PHONE_JSON
    if kind in ("card", "iban"):
        own |= PAYMENT_PLAIN | PAYMENT_JSON
    return MESSAGE_PLAIN, KEYED_PLAIN, MESSAGE_JSON | KEYED_JSON, own


# ---- private keys in their carriers ---------------------------------------------------------------------------

PemCarrier = Callable[[random.Random, str, list[str]], tuple[str, str, Doc]]


def pem_helm(rng: random.Random, typ: str, lines: list[str]) -> tuple[str, str, Doc]:
    body = "\n      ".join(lines)
    return (f"ingress:\n  tls:\n    enabled: true\n    key: |\n      -----BEGIN {typ}-----\n      {body}\n"
            f"      -----END {typ}-----\n  replicas: {rng.randint(1, 5)}"), body, None


def pem_vault(rng: random.Random, typ: str, lines: list[str]) -> tuple[str, str, Doc]:
    body = "\n".join(lines)
    serial = ":".join(pick(rng, HEX, 2) for _ in range(8))
    return (f"$ vault read pki/issue/web\nKey                 Value\n---                 -----\nprivate_key         "
            f"-----BEGIN {typ}-----\n{body}\n-----END {typ}-----\nserial_number       {serial}"), body, None


def pem_jenkins(rng: random.Random, typ: str, lines: list[str]) -> tuple[str, str, Doc]:
    body = "\n".join(lines)
    return (f"[Pipeline] sh\n+ cat /var/lib/jenkins/.ssh/deploy_key\n-----BEGIN {typ}-----\n{body}\n"
            f"-----END {typ}-----\n"
            f"+ chmod 600 /var/lib/jenkins/.ssh/deploy_key"), body, None


def pem_ansible(rng: random.Random, typ: str, lines: list[str]) -> tuple[str, str, Doc]:
    body = "\\n".join(lines)
    return (f"changed: [db-{rng.randint(1, 9)}] => {{\n    \"changed\": true,\n"
            f"    \"content\": \"-----BEGIN {typ}-----\\n"
            f"{body}\\n-----END {typ}-----\\n\",\n    \"dest\": \"/etc/ssl/private/app.key\"\n}}"), body, None


def pem_tf_state(rng: random.Random, typ: str, lines: list[str]) -> tuple[str, str, Doc]:
    body = "\n".join(lines)
    pem = f"-----BEGIN {typ}-----\n{body}\n-----END {typ}-----\n"
    return pem, body, {"version": 4, "resources": [{"type": "tls_private_key", "name": "deploy", "instances": [{
        "attributes": {"algorithm": "ECDSA", "private_key_pem": pem, "id": pick(rng, HEX, 40)}}]}]}


def pem_structlog(rng: random.Random, typ: str, lines: list[str]) -> tuple[str, str, Doc]:
    body = "\n".join(lines)
    pem = f"-----BEGIN {typ}-----\n{body}\n-----END {typ}-----"
    return pem, body, {"event": "loaded signing key", "key": pem, "level": "debug", "timestamp": stamp(rng) + "Z"}


PEM_CARRIERS: dict[str, PemCarrier] = {"helm_block": pem_helm, "vault_read": pem_vault, "jenkins_cat": pem_jenkins,
                                       "ansible_vvv": pem_ansible, "terraform_state": pem_tf_state,
                                       "structlog": pem_structlog}


def pem_case(rng: random.Random) -> Case:
    style, typ, lines = pem_key(rng)
    name, carrier = rng.choice(sorted(PEM_CARRIERS.items()))
    text, secret, doc = carrier(rng, typ, lines)
    carried = text if doc is None else json.dumps(doc)
    return Case("private_key", secret, text, carried, doc is not None, f"{name}/{style}")


# ---- the corpus ------------------------------------------------------------------------------------------------

MAKERS: dict[str, Callable[[random.Random], Slot]] = {
    "password": make_password, "aws_secret": make_aws_secret, "webhook": make_webhook,
    "stripe_whsec": make_stripe_whsec, "connection_string": make_connection_string,
    "labelled_key": make_labelled_key, "disguised": make_disguised, "email": make_email,
    **{k: make_phone(k) for k in ("phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in")},
    "ssn": make_ssn, "card": make_card, "iban": make_iban,
    **{k: make_provider(k) for k in PROVIDERS},
    "jwt": make_jwt, "auth_header": make_auth_header, "cookie": make_cookie,
    **{k: make_phone(k) for k in PHONES if k not in ("phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in")},
    **{k: (lambda kind: lambda rng: make_id(kind, rng))(k) for k in ID_MAKERS},
}


def case_of(rng: random.Random, s: Slot) -> Case:
    """A slot written by one carrier: JSON about a third of the time, else a message or a keyed line; a quarter of
    the contact and payment kinds in their own carriers (vCard, ICS, invoice, ...)."""
    plain_msg, plain_key, json_all, own = carriers_for(s.kind)
    r = rng.random()
    pool = json_all if r < 0.36 else plain_msg if plain_msg and r < 0.68 else plain_key
    pool = own if own and rng.random() < 0.25 else pool
    name, carrier = rng.choice(list(pool.items()))
    text, doc = carrier(rng, s)
    carried = text if doc is None else json.dumps(doc, ensure_ascii=rng.random() < 0.3)
    style = f"{s.lang}_{s.vstyle}" if s.phrase in text else f"key_{s.vstyle}"
    return Case(s.kind, s.secret, text, carried, doc is not None, f"{name}/{style}")


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, in a fixed order from SEED."""
    rng = random.Random(SEED)
    for make in MAKERS.values():
        for _ in range(PER_KIND):
            yield case_of(rng, make(rng))
    for _ in range(PER_KIND):
        yield pem_case(rng)


# ---- near misses -----------------------------------------------------------------------------------------------

def bad_card(rng: random.Random) -> str:
    number, _ = card_number(rng)
    wrong = str((int(number[-1]) + rng.randint(1, 9)) % 10)
    return group_card(number[:-1] + wrong, rng.choice([" ", "-", ""]))


def bad_iban(rng: random.Random) -> str:
    country = rng.choice(sorted(IBAN_BBANS))
    body = bban(rng, IBAN_BBANS[country])
    check = f"{(int(iban_check(country, body)) + rng.randint(1, 50)) % 97 + 2:02d}"
    check = check if check != iban_check(country, body) else f"{(int(check) + 1) % 97 + 2:02d}"
    return group(country + check + body, 4, " ")


def bad_ssn(rng: random.Random) -> str:
    area = rng.choice(["000", "666", str(rng.randint(900, 999)), f"{rng.randint(1, 899):03d}"])
    group_, serial = (f"{rng.randint(1, 99):02d}", "0000") if area not in ("000", "666") and area < "900" else (
        f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}")
    if area not in ("000", "666") and area < "900" and rng.random() < 0.5:
        group_, serial = "00", f"{rng.randint(1, 9999):04d}"
    return f"{area}-{group_}-{serial}"


def bad_sin(rng: random.Random) -> str:
    partial = rng.choice("1234567") + digits(rng, 7)
    n = partial + str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)
    return f"{n[:3]} {n[3:6]} {n[6:]}"


def public_pem(rng: random.Random) -> str:
    """The SubjectPublicKeyInfo PEM (RFC 5280) of a P-256 key from a seeded scalar: public, not a secret."""
    key = ec.derive_private_key(rng.randrange(2**248, 2**255), ec.SECP256R1())
    pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return pem.decode().strip()


def ean13(rng: random.Random) -> str:
    d = "400" + digits(rng, 9)
    total = sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(d))
    return d + str((10 - total % 10) % 10)


NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "uuid": lambda r: r.choice(["request_id={u} status=200", "trace {u} done", "tenant: {u}"]).format(u=uuid(r)),
    "git_sha": lambda r: r.choice(["commit {h}", "HEAD is now at {s} fix: retry", "deployed revision {h}"]).format(
        h=pick(r, HEX, 40), s=pick(r, HEX, 7)),
    "image_digest": lambda r: f"image: ghcr.io/acme/api@sha256:{pick(r, HEX, 64)}",
    "version": lambda r: r.choice([f"helm.sh/chart: api-1.{r.randint(0, 40)}.{r.randint(0, 9)}",
                                   f"Terraform v1.{r.randint(5, 9)}.{r.randint(0, 9)} on linux_amd64",
                                   f"Server: nginx/1.{r.randint(20, 27)}.{r.randint(0, 3)}",
                                   f":: Spring Boot ::  (v3.{r.randint(0, 4)}.{r.randint(0, 9)})",
                                   f"go version go1.{r.randint(20, 23)}.{r.randint(0, 9)} linux/amd64"]),
    "amount": lambda r: r.choice([f"Total: €{r.randint(1, 9)}.{digits(r, 3)},{digits(r, 2)}",
                                  f"Amount due: USD {r.randint(10, 99)},{digits(r, 3)}.{digits(r, 2)}",
                                  f"Valor: R$ {r.randint(1, 9)}.{digits(r, 3)},{digits(r, 2)}",
                                  f"कुल: ₹ {r.randint(1, 9)},{digits(r, 2)},{digits(r, 3)}.00"]),
    "timestamp": lambda r: r.choice([f"{stamp(r)}.{digits(r, 6)}Z", f"ts={r.randint(10**12, 2 * 10**12)}",
                                     f"Date: Sun, 06 Dec 2026 {stamp(r)[11:]} GMT"]),
    "order_number": lambda r: r.choice([f"Order #{r.randint(100, 999)}-{digits(r, 4)}-{digits(r, 4)} shipped",
                                        f"PO-2026-{digits(r, 6)}", f"order_id=ORD-{digits(r, 5)}-KX"]),
    "card_luhn_fail": lambda r: f"{r.choice(['Card number', 'Kartennummer', 'Número do cartão'])}: {bad_card(r)}",
    "iban_mod97_fail": lambda r: f"{r.choice(['IBAN', 'Bankverbindung IBAN', 'Cont IBAN'])}: {bad_iban(r)}",
    "ssn_invalid": lambda r: f"{r.choice(['SSN', 'ssn', 'Social Security Number'])}: {bad_ssn(r)}",
    "placeholder": lambda r: r.choice([
        "DB_PASSWORD=${DB_PASSWORD}", "API Key: <your-api-key>", "password: ********",
        "MYSQL_ROOT_PASSWORD: {{ .Values.mysql.rootPassword }}", "password=%(password)s",
        "AWS_SECRET_ACCESS_KEY=<redacted>", "Authorization: Bearer <token>",
        "client_secret: ${{ secrets.CLIENT_SECRET }}", "Senha: [REDACTED]", "Passwort: ${env:DB_PASS}",
        "token: {{ vault_token }}", "PGPASSWORD=$(cat /run/secrets/pg)"]),
    "masked_card": lambda r: r.choice([f"Visa ending in {digits(r, 4)}", f"card **** {digits(r, 4)}",
                                       f"•••• •••• •••• {digits(r, 4)}", f"XXXX-XXXX-XXXX-{digits(r, 4)}",
                                       f"pan={r.choice(['411111', '555555', '378282'])}******{digits(r, 4)}"]),
    "public_key": lambda r: r.choice([
        f"STRIPE_PUBLISHABLE_KEY=pk_live_{pick(r, B62, 24)}",
        f"mapboxgl.accessToken = '{'p' + mapbox_secret(r)[1:]}'",
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{pick(r, B64, 43)} deploy@ci",
        public_pem(r)]),
    "otel_ids": lambda r: r.choice([f"trace_id={pick(r, HEX, 32)} span_id={pick(r, HEX, 16)}",
                                    f"traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01"]),
    "k8s_names": lambda r: r.choice([f"pod/api-{pick(r, HEX, 10)}-{pick(r, LOWER_ALNUM, 5)} restarted",
                                     f"replicaset.apps/checkout-{pick(r, HEX, 9)} scaled to 3",
                                     f"controller-revision-hash: web-{pick(r, HEX, 10)}"]),
    "tracking_number": lambda r: r.choice([f"UPS tracking 1Z{pick(r, UPPER_ALNUM, 6)}{digits(r, 10)}",
                                           f"DHL Sendungsnummer JJD{digits(r, 18)}",
                                           f"FedEx tracking {digits(r, 4)} {digits(r, 4)} {digits(r, 4)}"]),
    "ci_ids": lambda r: r.choice([f"GITHUB_RUN_ID={digits(r, 11)}", f"CI_PIPELINE_ID={digits(r, 7)}",
                                  f"BUILD_NUMBER={r.randint(1, 9999)}", f"job {digits(r, 8)} (retry 2)"]),
    "invalid_national_id": lambda r: r.choice([f"SIN: {bad_sin(r)}",
                                               f"DNI: {digits(r, 8)}{r.choice('IOU')}",
                                               f"NI number: {r.choice(['DA', 'FQ', 'QQ', 'BG'])}{digits(r, 6)}E"]),
    "base64_digest": lambda r: r.choice([f"Content-MD5: {b64(r.randbytes(16))}",
                                         f'integrity="sha384-{b64(r.randbytes(48))}"',
                                         f'ETag: W/"{pick(r, HEX, 32)}"']),
    "barcode": lambda r: r.choice([f"EAN {ean13(r)}", f"ISBN 978-{r.randint(0, 9)}-{digits(r, 3)}-{digits(r, 5)}-1",
                                   f"SKU {pick(r, string.ascii_uppercase, 3)}-{digits(r, 6)}"]),
    "credential_free_url": lambda r: r.choice([f"postgres://db-prod-{r.randint(1, 9)}.internal:5432/app",
                                               f"redis://cache-{r.randint(0, 5)}:6379/0",
                                               "jdbc:postgresql://ledger.internal:5432/ledger?sslmode=require",
                                               f"mongodb+srv://cluster0.{pick(r, HEX, 5)}.mongodb.net/"]),
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """20 near misses of each sort, some inside a log line, none a secret or personal datum."""
    rng = random.Random(SEED + 1)
    for sort, make in NEGATIVES.items():
        for _ in range(20):
            text = make(rng)
            yield sort, (f"{stamp(rng)}Z INFO {text}" if rng.random() < 0.4 else text)
