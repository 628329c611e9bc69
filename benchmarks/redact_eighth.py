"""The eighth redaction corpus: values planted in the shapes an AI agent team's traces hold, written by someone who
read neither the detection rules nor the other corpora.

Each kind's value is drawn from its public format; a snippet (env line, YAML, HCL, SQL, code, prose in one of 15
languages, ...) holds it, and a carrier wraps the snippet the way an agent trace stores it: OpenAI chat
`tool_calls` arguments (a JSON string inside JSON), Anthropic `tool_use`/`tool_result` blocks, MCP JSON-RPC
results, LangGraph state dumps, CrewAI/AutoGen logs, OpenTelemetry span attributes, journald JSON, Jupyter
outputs, Slack/Zendesk/Intercom exports (JSON carried, a third of cases), and shell outputs (`env`, `cat .env`,
`docker inspect`, `kubectl ... | base64 -d`, `git diff`, `.bash_history`), syslog RFC 5424 with structured data,
Windows event XML, psql results and e-mail signatures (message text).

Formats and their sources:
- password, connection_string: label conventions of the tools named (PostgreSQL libpq `PGPASSWORD`, the MySQL
  and Redis images' variables, Spring properties); ADO.NET / JDBC / ODBC keywords (Microsoft SqlClient, PgJDBC
  docs); URI userinfo (RFC 3986 3.2.1); Azure Storage and Service Bus connection strings (Microsoft Learn).
- aws_secret: 40 characters of base64 alphabet beside an access key id `AKIA`/`ASIA` + 16 of [A-Z2-7] (AWS IAM
  User Guide, "Managing access keys"; credentials file and CSV download layouts).
- webhook: Slack incoming webhooks `hooks.slack.com/services/T…/B…/24` (api.slack.com), Discord
  `/api/webhooks/{snowflake}/{68}` (Discord developer docs), Teams `*.webhook.office.com/webhookb2/…`
  (Microsoft Learn), Google Chat `spaces/…/messages?key=…&token=…`, Mattermost `/hooks/{26}`, IFTTT Maker.
- stripe_whsec: `whsec_` + 32 base62 (Dashboard) or 64 hex (Stripe CLI), Stripe docs on webhook signing.
- labelled_key, password prose, phone context words: ordinary wording in each language.
- disguised: GitHub `ghp_` (CRC32 token format, GitHub blog 2021), Stripe `sk_live_`, Slack `xoxb-`, Google
  `AIza` + 35, GitLab `glpat-` + 20, OpenAI legacy `sk-…T3BlbkFJ…`, with U+200B-U+200D, U+2060, U+FEFF, U+00AD,
  bidi controls U+202A-U+202E / U+2066-U+2069 (Unicode TR9) or full-width forms U+FF01-U+FF5E inside.
- email: RFC 5322 addr-spec, RFC 6531 internationalised, RFC 3986 percent-encoding, RFC 8259 `\\u0040`, HTML
  `&#64;`, RFC 6068 mailto.
- phones: national numbering plans (NANP; Ofcom; ARCEP; BNetzA; TRAI; AGCOM; CNMC; ACM; UKE; MIC Japan; IFT
  Mexico 10-digit plan of 2019) with ITU-T E.164/E.123 international forms.
- ssn: SSA rules (area 001-899 but 666, group 01-99, serial 0001-9999). card: ISO/IEC 7812 IIN ranges (Visa 4,
  Mastercard 51-55 and 2221-2720, Amex 34/37, Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62)
  and Luhn. iban: ISO 13616 with the SWIFT IBAN registry's BBAN structures, MOD 97-10.
- providers (each its own published prefix): Atlassian `ATATT3xFfGF0…=` + 8 hex, Grafana `glsa_` + 32 + `_` + 8
  hex, Pulumi `pul-` + 40 hex, Doppler `dp.st.{config}.` / `dp.pt.`, Netlify `nfp_`, Postman `PMAK-` 24-34 hex,
  Notion `secret_` / `ntn_`, Airtable `pat{14}.{64 hex}`, Figma `figd_`, Mapbox `sk.eyJ…`, Supabase `sbp_` + 40
  hex and the service-role JWT, DigitalOcean `dop_v1_` / `doo_v1_` + 64 hex, Databricks `dapi` + 32 hex, Sentry
  `sntrys_` (base64 JSON claims) / `sntryu_` + 64 hex, New Relic `NRAK-` + 27, Bitbucket `ATBB` app passwords,
  Azure AD client secrets (`…Q~…`, 40), Google OAuth `GOCSPX-` + 28; labelled: Cloudflare (40), Vercel (24),
  Fastly (32), Heroku (UUID).
- private_key: RFC 7468 PEM of PKCS#8 (RFC 5958), SEC1 (RFC 5915), PKCS#1 (RFC 8017) DER, and OpenSSH
  `openssh-key-v1` (PROTOCOL.key). jwt: RFC 7519 / 7515 HS256. auth_header: RFC 7617 Basic, RFC 6750 Bearer,
  RFC 7616 Digest `response=`, AWS SigV4 `Signature=`, `Token`, Okta `SSWS`. session_cookie: the session cookie
  names and value shapes of Django, Express, Rails, PHP, Java EE, ASP.NET, Laravel, NextAuth (RFC 6265).
- national ids (OUTSIDE_TARGET): UK NINO (HMRC NIM39110 prefixes), Canada SIN (Luhn, ESDC), Spain DNI/NIE
  (mod 23 letter, Real Decreto 1553/2005).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import string
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

SEED = 20261205
PER_KIND = 100
OUTSIDE_TARGET: frozenset[str] = frozenset({"uk_nino", "ca_sin", "es_dni"})

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
LOWER_ALNUM = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class Case:
    """One planted value: `secret` must not survive in `carried` (the text as stored)."""

    kind: str
    secret: str
    text: str
    carried: str
    is_json: bool
    form: str


Snip = tuple[str, str, str]
"""(secret, snippet that holds it, style name)."""

KINDS: dict[str, Callable[[random.Random], Snip]] = {}


def kind(name: str) -> Callable[[Callable[[random.Random], Snip]], Callable[[random.Random], Snip]]:
    """Register a kind's snippet maker under `name` (the order of registration is the order of generation)."""
    def register(fn: Callable[[random.Random], Snip]) -> Callable[[random.Random], Snip]:
        KINDS[name] = fn
        return fn
    return register


def hexs(rng: random.Random, n: int) -> str:
    """n lower-case hex digits."""
    return pick(rng, HEX, n)


def camel(name: str) -> str:
    """`DB_PASSWORD` -> `dbPassword`."""
    head, *rest = name.lower().split("_")
    return head + "".join(p.capitalize() for p in rest)


# ---- config snippets: one value under a name, in the places agents read and write config ----------------------

CONFIG_STYLES: dict[str, Callable[[str, str], str]] = {
    "env": lambda n, v: f"{n}={v}",
    "export": lambda n, v: f'export {n}="{v}"',
    "dotenv_quoted": lambda n, v: f"# local only\n{n}='{v}'",
    "compose": lambda n, v: f"services:\n  api:\n    environment:\n      - {n}={v}",
    "yaml": lambda n, v: f"credentials:\n  {n.lower()}: {v}",
    "json": lambda n, v: f'{{"{camel(n)}": "{v}", "region": "eu-west-1"}}',
    "toml": lambda n, v: f'[secrets]\n{n.lower()} = "{v}"',
    "hcl": lambda n, v: f'variable "{n.lower()}" {{\n  default   = "{v}"\n  sensitive = true\n}}',
    "ini": lambda n, v: f"[default]\n{n.lower()} = {v}",
    "properties": lambda n, v: f"app.{n.lower().replace('_', '.')}={v}",
    "python": lambda n, v: f'os.environ["{n}"] = "{v}"  # TODO move to vault',
    "js": lambda n, v: f"const {camel(n)} = process.env.{n} ?? '{v}';",
    "go": lambda n, v: f'{camel(n)} := "{v}" // from the ticket',
    "docker_inspect": lambda n, v: f'"Env": [\n    "PATH=/usr/local/bin:/usr/bin",\n    "{n}={v}",',
    "kubectl_decoded": lambda n, v: (f"$ kubectl get secret app-env -o jsonpath='{{.data.{n}}}' | base64 -d\n{v}"),
    "git_diff": lambda n, v: f"diff --git a/.env b/.env\n@@ -3,0 +4 @@\n+{n}={v}",
    "sql": lambda n, v: f"INSERT INTO app_settings (name, value) VALUES ('{n.lower()}', '{v}');",
    "graphql": lambda n, v: (f'{{"query": "mutation Save($v: String!) {{ setSecret(value: $v) }}", '
                             f'"variables": {{"{camel(n)}": "{v}"}}}}'),
    "github_actions": lambda n, v: f"    env:\n      {n}: {v}",
    "printenv": lambda n, v: f"$ printenv | grep {n.split('_')[0]}\n{n}={v}",
}


def config(rng: random.Random, names: list[str], value: str) -> tuple[str, str]:
    """`value` under one of `names` in one config style: (snippet, style)."""
    style = rng.choice(list(CONFIG_STYLES))
    return CONFIG_STYLES[style](rng.choice(names), value), style


# ---- prose in 15 languages -----------------------------------------------------------------------------------

LABELLED = {
    "en": ["API Key: {v}", "Secret key = {v}", "the access token is {v}", "Auth token -> {v}"],
    "it": ["Chiave API: {v}", "il token di accesso è {v}", "chiave segreta = {v}"],
    "nl": ["API-sleutel: {v}", "het toegangstoken is {v}", "geheime sleutel = {v}"],
    "pl": ["Klucz API: {v}", "token dostępu to {v}", "klucz tajny = {v}"],
    "el": ["Κλειδί API: {v}", "το διακριτικό πρόσβασης είναι {v}"],
    "he": ["מפתח API: {v}", "אסימון הגישה הוא {v}"],
    "ja": ["APIキー: {v}", "アクセストークンは {v} です", "シークレットキー：{v}"],
    "zh": ["API 密钥：{v}", "访问令牌是 {v}", "密钥 = {v}"],
    "ko": ["API 키: {v}", "액세스 토큰은 {v} 입니다"],
    "vi": ["Khóa API: {v}", "mã truy cập là {v}"],
    "tr": ["API anahtarı: {v}", "erişim belirteci {v}"],
    "id": ["Kunci API: {v}", "token akses adalah {v}"],
    "sv": ["API-nyckel: {v}", "åtkomsttoken är {v}"],
    "cs": ["API klíč: {v}", "přístupový token je {v}"],
    "es": ["Clave API: {v}", "el token de acceso es {v}", "Clave secreta = {v}"],
}

PASSWORD_PROSE = {
    "en": "the password for {u} is {v}", "it": "la password di {u} è {v}", "nl": "het wachtwoord van {u} is {v}",
    "pl": "hasło dla {u} to {v}", "el": "ο κωδικός πρόσβασης του {u} είναι {v}", "he": "הסיסמה של {u} היא {v}",
    "ja": "{u} のパスワードは {v} です", "zh": "{u} 的密码是 {v}", "ko": "{u} 비밀번호는 {v} 입니다",
    "vi": "mật khẩu của {u} là {v}", "tr": "{u} şifresi: {v}", "id": "kata sandi {u} adalah {v}",
    "sv": "lösenordet för {u} är {v}", "cs": "heslo pro {u} je {v}", "es": "la contraseña de {u} es {v}",
}


def labelled(rng: random.Random, value: str) -> tuple[str, str]:
    """`value` after a label with spaces, in one language: (text, language)."""
    lang = rng.choice(list(LABELLED))
    return rng.choice(LABELLED[lang]).format(v=value), lang


def token_snippet(rng: random.Random, value: str, names: list[str], bare_ok: bool = True) -> tuple[str, str]:
    """A provider token in a config style, in labelled prose, or (prefixed ones) bare in a sentence."""
    roll = rng.random()
    if roll < 0.7:
        return config(rng, names, value)
    if roll < 0.88 or not bare_ok:
        text, lang = labelled(rng, value)
        return text, f"label_{lang}"
    return f"rotated it, the new one is {value} (old revoked)", "bare_prose"


# ---- the target kinds ---------------------------------------------------------------------------------

PW_SYMBOLS = "!%*+-.=?^_~,"
USERS = ["svc_etl", "admin", "deploy", "marta.rossi", "jdevries", "k.nowak", "app_ro", "tanaka", "root", "ops"]


def password_value(rng: random.Random) -> str:
    """A 12-20 character password: a letter first, then letters, digits and shell-safe symbols."""
    n = rng.randint(12, 20)
    body = pick(rng, ALNUM + PW_SYMBOLS, n - 1)
    if not any(c.isdigit() for c in body):
        body = body[:-1] + rng.choice(string.digits)
    return rng.choice(string.ascii_letters) + body


PASSWORD_NAMES = ["DB_PASSWORD", "PGPASSWORD", "MYSQL_ROOT_PASSWORD", "POSTGRES_PASSWORD", "REDIS_PASS",
                  "SMTP_PASSWORD", "LDAP_BIND_PASSWORD", "KEYCLOAK_ADMIN_PASSWORD", "APP_DB_PASS",
                  "RABBITMQ_DEFAULT_PASS", "MONGO_INITDB_ROOT_PASSWORD", "ELASTIC_PASSWORD"]


@kind("password")
def password(rng: random.Random) -> Snip:
    """Passwords under env/YAML/JSON/properties names, CLI flags, code and prose."""
    v, u = password_value(rng), rng.choice(USERS)
    roll = rng.randrange(10)
    if roll < 4:
        snippet, style = config(rng, PASSWORD_NAMES, v)
    elif roll == 4:
        snippet, style = rng.choice([
            (f"$ mysql -h db.internal -u {u} --password={v} orders", "cli_mysql_eq"),
            (f"$ mysql -u {u} -p{v} -e 'SHOW TABLES'", "cli_mysql_p"),
            (f"$ redis-cli -h cache -a {v} PING", "cli_redis_a"),
            (f"$ psql \"host=pg port=5432 user={u} password={v} dbname=app\"", "cli_libpq"),
            (f"$ mongosh --username {u} --password {v} --authenticationDatabase admin", "cli_mongosh"),
            (f"$ docker login registry.internal -u {u} -p {v}", "cli_docker_login"),
        ])
    elif roll == 5:
        key = rng.choice(["userPassword", "adminPassword", "dbPass", "smtpPassword", "password"])
        snippet, style = f'{{"user": "{u}", "{key}": "{v}", "active": true}}', "json_camel"
    elif roll == 6:
        snippet, style = rng.choice([
            (f"spring.datasource.password={v}", "properties_spring"),
            (f"  <add key=\"SmtpPassword\" value=\"{v}\" />", "xml_appsettings"),
            (f"ALTER USER {u} WITH PASSWORD '{v}';", "sql_alter_user"),
            (f"CREATE USER '{u}'@'%' IDENTIFIED BY '{v}';", "sql_create_user"),
            (f"  - name: set db pass\n    vars:\n      ansible_become_pass: {v}", "ansible_vars"),
            (f"password {v}", "netrc"),
        ])
    else:
        lang = rng.choice(list(PASSWORD_PROSE))
        snippet, style = PASSWORD_PROSE[lang].format(u=u, v=v), f"prose_{lang}"
    return v, snippet, style


def aws_key_id(rng: random.Random) -> str:
    """An access key id: AKIA (long-term) or ASIA (temporary) + 16 of [A-Z2-7]."""
    return rng.choice(["AKIA", "ASIA"]) + pick(rng, string.ascii_uppercase + "234567", 16)


def aws_secret_value(rng: random.Random) -> str:
    """40 characters of the base64 alphabet, with at least one `/` or `+`."""
    v = pick(rng, B64, 40)
    return v if "/" in v or "+" in v else v[:17] + rng.choice("/+") + v[18:]


@kind("aws_secret")
def aws_secret(rng: random.Random) -> Snip:
    """Labelled, in a credentials file and STS JSON, and unlabelled beside its key id (CSV download, pairs)."""
    kid, v = aws_key_id(rng), aws_secret_value(rng)
    roll = rng.randrange(8)
    if roll < 2:
        snippet, style = config(rng, ["AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "aws_secret_access_key"], v)
    elif roll == 2:
        snippet, style = (f"[default]\naws_access_key_id = {kid}\naws_secret_access_key = {v}", "credentials_file")
    elif roll == 3:
        snippet, style = (f'{{"Credentials": {{"AccessKeyId": "{kid}", "SecretAccessKey": "{v}", '
                          f'"Expiration": "2026-12-06T09:00:00Z"}}}}', "json_sts")
    elif roll == 4:
        snippet, style = (f"User name,Password,Access key ID,Secret access key\nci-bot,,{kid},{v}", "csv_download")
    elif roll == 5:
        snippet, style = (f"{kid} {v}", "pair_space")
    elif roll == 6:
        snippet, style = (f"creds: {kid}:{v}", "pair_colon")
    else:
        snippet, style = (f"boto3.client('s3', aws_access_key_id='{kid}', aws_secret_access_key='{v}')",
                          "python_boto3")
    return v, snippet, style


@kind("webhook")
def webhook(rng: random.Random) -> Snip:
    """Incoming-webhook URLs; the secret is the part after the provider's fixed prefix."""
    roll = rng.randrange(7)
    if roll < 2:
        prefix = "https://hooks.slack.com/services/"
        upper = string.ascii_uppercase + string.digits
        secret = f"T{pick(rng, upper, 10)}/B{pick(rng, upper, 10)}/{pick(rng, ALNUM, 24)}"
        style = "slack"
    elif roll == 2:
        prefix = rng.choice(["https://discord.com/api/webhooks/", "https://discordapp.com/api/webhooks/"])
        secret, style = f"{rng.randint(10**17, 10**19 - 1)}/{pick(rng, URLSAFE, 68)}", "discord"
    elif roll == 3:
        prefix = f"https://{rng.choice(['contoso', 'fabrikamltd', 'acmegroup'])}.webhook.office.com/webhookb2/"
        secret = (f"{uuid.UUID(int=rng.getrandbits(128))}@{uuid.UUID(int=rng.getrandbits(128))}/IncomingWebhook/"
                  f"{hexs(rng, 32)}/{uuid.UUID(int=rng.getrandbits(128))}")
        style = "teams"
    elif roll == 4:
        prefix = f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key="
        secret, style = f"AIza{pick(rng, URLSAFE, 35)}&token={pick(rng, URLSAFE, 43)}", "google_chat"
    elif roll == 5:
        prefix = "https://mattermost.internal.example/hooks/"
        secret, style = pick(rng, LOWER_ALNUM, 26), "mattermost"
    else:
        prefix = f"https://maker.ifttt.com/trigger/{rng.choice(['deploy_done', 'alert'])}/with/key/"
        secret, style = pick(rng, URLSAFE, 22), "ifttt"
    url = prefix + secret
    snippet, how = rng.choice([
        (f"curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"build ok\"}}' {url}", "curl"),
        (f"SLACK_WEBHOOK_URL={url}" if style == "slack" else f"WEBHOOK_URL={url}", "env"),
        (f'requests.post("{url}", json={{"content": "deploy finished"}})', "python"),
        (f"notify:\n  url: {url}", "yaml"),
        (f"posting the summary to {url} now", "prose"),
    ])
    return secret, snippet, f"{style}_{how}"


@kind("stripe_whsec")
def stripe_whsec(rng: random.Random) -> Snip:
    """Webhook signing secrets: Dashboard (32 base62) or `stripe listen` (64 hex)."""
    cli = rng.random() < 0.35
    v = "whsec_" + (hexs(rng, 64) if cli else pick(rng, B62, 32))
    if cli and rng.random() < 0.6:
        return v, (f"$ stripe listen --forward-to localhost:4242/webhook\n> Ready! Your webhook signing secret is "
                   f"{v} (^C to quit)"), "stripe_cli_output"
    snippet, style = token_snippet(rng, v, ["STRIPE_WEBHOOK_SECRET", "STRIPE_ENDPOINT_SECRET", "WHSEC"])
    return v, snippet, style


def azure_key(rng: random.Random, n: int) -> str:
    """`n` bytes of key, base64 with padding (Azure storage keys: 64 bytes, 88 characters)."""
    return base64.b64encode(rng.randbytes(n)).decode()


@kind("connection_string")
def connection_string(rng: random.Random) -> Snip:
    """Azure storage/Service Bus keys, ADO.NET/JDBC/ODBC passwords, URI userinfo passwords."""
    u, pw = rng.choice(USERS), pick(rng, ALNUM + "-._~", rng.randint(14, 24))
    host = rng.choice(["sql-prod.database.windows.net", "10.0.4.12", "pg.internal", "db-eu1.corp.example"])
    forms = [
        ("azure_storage", None, lambda k: (f"DefaultEndpointsProtocol=https;AccountName=st{hexs(rng, 8)};"
                                           f"AccountKey={k};EndpointSuffix=core.windows.net")),
        ("azure_servicebus", None, lambda k: (f"Endpoint=sb://ns-orders.servicebus.windows.net/;SharedAccessKeyName="
                                              f"RootManageSharedAccessKey;SharedAccessKey={k}")),
        ("ado", pw, lambda p: (f"Server=tcp:{host},1433;Initial Catalog=orders;User ID={u};Password={p};"
                               "Encrypt=True;")),
        ("jdbc_sqlserver", pw, lambda p: f"jdbc:sqlserver://{host}:1433;databaseName=hr;user={u};password={p}"),
        ("jdbc_pg_query", pw, lambda p: f"jdbc:postgresql://{host}:5432/app?user={u}&password={p}&ssl=true"),
        ("odbc", pw, lambda p: (f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=dw;Uid={u};"
                                f"Pwd={p};")),
        ("uri_postgres", pw, lambda p: f"postgresql://{u}:{p}@{host}:5432/app?sslmode=require"),
        ("uri_mongo_srv", pw, lambda p: f"mongodb+srv://{u}:{p}@cluster0.x7k2q.mongodb.net/?retryWrites=true"),
        ("uri_redis", pw, lambda p: f"rediss://:{p}@cache.internal:6380/0"),
        ("uri_amqp", pw, lambda p: f"amqps://{u}:{p}@mq.internal:5671/%2Fprod"),
        ("uri_mysql", pw, lambda p: f"mysql+pymysql://{u}:{p}@{host}:3306/shop"),
    ]
    name, secret, build = rng.choice(forms)
    if secret is None:
        secret = azure_key(rng, 64 if name == "azure_storage" else 32)
    cs = build(secret)
    snippet, how = rng.choice([
        (f"DATABASE_URL={cs}" if name.startswith("uri") else f'ConnectionStrings__Default="{cs}"', "env"),
        (f'{{"ConnectionStrings": {{"Default": "{cs}"}}}}', "appsettings_json"),
        (f"engine = create_engine(\"{cs}\")", "python"),
        (f"  connection_string = \"{cs}\"", "hcl"),
        (f"connecting with {cs}", "prose"),
    ])
    return secret, snippet, f"{name}_{how}"


@kind("labelled_key")
def labelled_key(rng: random.Random) -> Snip:
    """Unprefixed keys after labels with spaces, in 15 languages."""
    v = rng.choice([hexs(rng, 32), pick(rng, ALNUM, 40), pick(rng, URLSAFE, 32), hexs(rng, 48)])
    text, lang = labelled(rng, v)
    return v, text, f"label_{lang}"


ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]


def known_key(rng: random.Random) -> tuple[str, str]:
    """A key of a provider whose prefix is published: (key, provider)."""
    return rng.choice([
        (crc_token(rng, "ghp_"), "github"),
        ("sk_live_" + pick(rng, B62, 24), "stripe"),
        (f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}", "slack"),
        ("AIza" + pick(rng, URLSAFE, 35), "google"),
        ("glpat-" + pick(rng, URLSAFE, 20), "gitlab"),
        (f"sk-{pick(rng, ALNUM, 20)}T3BlbkFJ{pick(rng, ALNUM, 20)}", "openai"),
    ])


def fullwidth(text: str) -> str:
    """ASCII printable characters as their full-width forms (U+FF01-U+FF5E)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def sprinkle(rng: random.Random, key: str, marks: list[str], count: int) -> str:
    """`key` with `count` of `marks` put at random inner positions."""
    chars = list(key)
    for _ in range(count):
        at = rng.randint(2, len(chars) - 2)
        chars.insert(at, rng.choice(marks))
    return "".join(chars)


@kind("disguised")
def disguised(rng: random.Random) -> Snip:
    """Known providers' keys with zero-width, bidi, soft-hyphen or full-width characters inside."""
    key, provider = known_key(rng)
    how = rng.choice(["zero_width", "zero_width_many", "bidi", "soft_hyphen", "fullwidth", "fullwidth_half"])
    if how == "zero_width":
        v = sprinkle(rng, key, ZERO_WIDTH, 1)
    elif how == "zero_width_many":
        v = sprinkle(rng, key, ZERO_WIDTH, rng.randint(3, 6))
    elif how == "bidi":
        v = sprinkle(rng, key, BIDI, rng.randint(1, 3))
    elif how == "soft_hyphen":
        v = sprinkle(rng, key, ["\u00ad"], rng.randint(1, 4))
    elif how == "fullwidth":
        v = fullwidth(key)
    else:
        cut = len(key) // 2
        v = key[:cut] + fullwidth(key[cut:])
    snippet = rng.choice([f"token: {v}", f"here's the key {v} — don't share", f"KEY={v}", f'"apiKey": "{v}"'])
    return v, snippet, f"{provider}_{how}"


FIRST = ["marta", "jan", "ewa", "yuki", "li.wei", "noa", "giulia", "pieter", "ahmet", "siti", "anna", "minh",
         "carlos", "sofia", "oskar", "dimitris", "ji-ho", "priya"]
LAST = ["rossi", "devries", "kowalski", "tanaka", "chen", "cohen", "bianchi", "jansen", "yilmaz", "rahayu",
        "svensson", "nguyen", "garcia", "papadopoulos", "novak", "kim", "sharma"]
DOMAINS = ["gmail.com", "outlook.com", "proton.me", "firma.pl", "bedrijf.nl", "azienda.it", "empresa.es",
           "corp-mail.de", "yahoo.co.jp", "naver.com", "seznam.cz", "fastmail.fm", "acme-health.org",
           "student.uva.nl", "mail.ru", "web.de"]
IDN = ["josé.garcía{n}@correo.es", "用户{n}@例子.中国", "δοκιμή{n}@παράδειγμα.ελ", "почта{n}@пример.рф",
       "ユーザー{n}@例え.jp", "øyvind.{n}@blåbær.no", "müller.{n}@bücher.de", "ישראל{n}@דוגמה.ישראל",
       "nguyễn.{n}@tênmiền.vn", "şule.{n}@örnek.com.tr"]
EMAIL_CONTEXT = {
    "en": "you can reach me at {v}", "it": "scrivimi a {v}", "nl": "mail me op {v}", "pl": "mój e-mail: {v}",
    "es": "mi correo es {v}", "ja": "メールアドレス: {v}", "zh": "邮箱：{v}", "ko": "이메일: {v}",
    "tr": "e-posta adresim {v}", "sv": "mejla mig på {v}", "cs": "můj e-mail je {v}", "vi": "email của tôi là {v}",
}


def mailbox(rng: random.Random) -> str:
    """A plausible personal address."""
    sep = rng.choice([".", "_", "", "-"])
    local = rng.choice(FIRST) + sep + rng.choice(LAST) + rng.choice(["", str(rng.randint(1, 99))])
    return f"{local}@{rng.choice(DOMAINS)}"


@kind("email")
def email(rng: random.Random) -> Snip:
    """Addresses plain, upper case, RFC 6531, %40, \\u0040, &#64;, mailto:, in headers and signatures."""
    addr = mailbox(rng)
    how = rng.choice(["plain", "plain", "upper", "idn", "percent", "json_escape", "html_entity", "mailto",
                      "header", "signature", "plus_tag"])
    if how == "upper":
        addr = addr.upper()
    elif how == "idn":
        addr = rng.choice(IDN).format(n=rng.randint(1, 99))
    elif how == "percent":
        addr = addr.replace("@", "%40")
        return addr, f"GET /api/v2/users/lookup?email={addr}&include=orders HTTP/1.1", "percent_query"
    elif how == "json_escape":
        addr = addr.replace("@", "\\u0040")
        return addr, f'raw body: {{"customer_email":"{addr}","plan":"pro"}}', "json_escape_raw"
    elif how == "html_entity":
        addr = addr.replace("@", "&#64;")
        return addr, f'<td class="contact">{addr}</td>', "html_entity"
    elif how == "mailto":
        return addr, f'<a href="mailto:{addr}?subject=Invoice">Billing</a>', "mailto"
    elif how == "header":
        name = addr.split("@")[0].replace(".", " ").title()
        return addr, f"From: {name} <{addr}>\nTo: support@helpdesk.example\nSubject: Re: refund", "mime_header"
    elif how == "signature":
        return addr, f"--\n{addr.split('@')[0].title()}\nSenior Analyst\nE: {addr}\nM: +31 6 1234 5678", "signature"
    elif how == "plus_tag":
        local, domain = addr.split("@")
        addr = f"{local}+{rng.choice(['billing', 'jira', 'test'])}@{domain}"
    lang = rng.choice(list(EMAIL_CONTEXT))
    return addr, EMAIL_CONTEXT[lang].format(v=addr), f"{how}_{lang}"


# ---- phone numbers: national plans, national and international forms, always with a context word -------------

PhoneForm = Callable[[random.Random], tuple[str, str]]


def phone_kind(name: str, forms: list[PhoneForm], context: list[str]) -> None:
    """Register a phone kind: one of `forms` (number, style) in one of `context` (templates with {v})."""
    def make(rng: random.Random) -> Snip:
        number, style = rng.choice(forms)(rng)
        return number, rng.choice(context).format(v=number), style
    KINDS[name] = make


def nanp(rng: random.Random) -> tuple[str, str, str]:
    """NANP area code, exchange, line: N(0-8)X, NXX not N11, XXXX."""
    area = f"{rng.randint(2, 9)}{rng.randint(0, 8)}{rng.randint(0, 9)}"
    while area[1:] == "11":
        area = f"{rng.randint(2, 9)}{rng.randint(0, 8)}{rng.randint(0, 9)}"
    exch = f"{rng.randint(2, 9)}{digits(rng, 2)}"
    while exch[1:] == "11":
        exch = f"{rng.randint(2, 9)}{digits(rng, 2)}"
    return area, exch, digits(rng, 4)


phone_kind("phone_us_ca", [
    lambda r: ("({}) {}-{}".format(*nanp(r)), "paren"),
    lambda r: ("{}-{}-{}".format(*nanp(r)), "dash"),
    lambda r: ("{}.{}.{}".format(*nanp(r)), "dot"),
    lambda r: ("+1 {} {} {}".format(*nanp(r)), "intl_space"),
    lambda r: ("+1-{}-{}-{}".format(*nanp(r)), "intl_dash"),
    lambda r: ("1 ({}) {}-{}".format(*nanp(r)), "trunk_paren"),
    lambda r: ("+1{}{}{}".format(*nanp(r)), "e164"),
    lambda r: ("{}{}{}".format(*nanp(r)), "compact"),
], ["call me at {v}", "Phone: {v}", "mobile {v} (after 5pm)", "Tel. {v}", "cell: {v}", "text me on {v}",
    "Téléphone : {v}", "my number is {v}", "📞 {v}", "Fax/Phone {v}"])


def uk_number(rng: random.Random) -> tuple[str, str]:
    """UK: mobiles 07[1-57-9]xx, London 020, geographic 01xxx and 0161, in national or +44 forms."""
    which = rng.randrange(4)
    if which == 0:
        national = f"07{rng.choice('1234579')}{digits(rng, 2)} {digits(rng, 6)}"
    elif which == 1:
        national = f"020 {rng.choice('378')}{digits(rng, 3)} {digits(rng, 4)}"
    elif which == 2:
        national = f"0161 {rng.randint(2, 9)}{digits(rng, 2)} {digits(rng, 4)}"
    else:
        national = f"01{rng.randint(2, 9)}{digits(rng, 2)} {rng.randint(2, 9)}{digits(rng, 5)}"
    style = rng.choice(["national", "intl", "intl_zero", "compact", "dash", "e164"])
    rest = national[1:]
    return {"national": national, "intl": "+44 " + rest, "intl_zero": "+44 (0)" + rest,
            "compact": national.replace(" ", ""), "dash": national.replace(" ", "-"),
            "e164": "+44" + rest.replace(" ", "")}[style], style


phone_kind("phone_uk", [uk_number], ["ring me on {v}", "Mobile: {v}", "Tel: {v}", "call {v} any time",
                                     "my phone number is {v}", "Phone (work) {v}", "WhatsApp {v}"])


def pairs(first: str, rest: str, sep: str) -> str:
    """French print: the leading digits, then pairs joined by `sep`."""
    return first + sep + sep.join(rest[i:i + 2] for i in range(0, len(rest), 2))


def fr_number(rng: random.Random) -> tuple[str, str]:
    """France: 0 + [1-7 or 9] + 8 digits; pairs by space/dot/dash; +33 and 0033 forms."""
    lead, rest = rng.choice("1234567996"), digits(rng, 8)
    style = rng.choice(["space", "dot", "dash", "compact", "intl", "intl_zero", "intl_00", "intl_compact"])
    out = {"space": pairs("0" + lead, rest, " "), "dot": pairs("0" + lead, rest, "."),
           "dash": pairs("0" + lead, rest, "-"), "compact": "0" + lead + rest,
           "intl": pairs("+33 " + lead, rest, " "), "intl_zero": pairs("+33 (0)" + lead, rest, " "),
           "intl_00": pairs("0033 " + lead, rest, " "), "intl_compact": "+33" + lead + rest}[style]
    return out, style


phone_kind("phone_fr", [fr_number], ["Tél. : {v}", "appelez-moi au {v}", "mon portable : {v}",
                                     "numéro de téléphone {v}", "Mobile {v}", "joignable au {v}"])


def de_number(rng: random.Random) -> tuple[str, str]:
    """Germany: mobiles 015x/016x/017x + 7-8 digits, Berlin 030, Munich 089, Hamburg 040; +49 forms."""
    area = rng.choice(["151", "152", "157", "160", "162", "170", "171", "176", "30", "89", "40", "221", "69"])
    sub = digits(rng, 8 if area.startswith("1") else rng.randint(6, 8))
    style = rng.choice(["space", "slash", "dash", "intl", "intl_zero", "intl_dash", "compact", "din5008"])
    out = {"space": f"0{area} {sub}", "slash": f"0{area}/{sub}", "dash": f"0{area}-{sub}",
           "intl": f"+49 {area} {sub}", "intl_zero": f"+49 (0){area} {sub}", "intl_dash": f"+49-{area}-{sub}",
           "compact": f"0{area}{sub}", "din5008": f"+49 {area} {sub[:4]} {sub[4:]}"}[style]
    return out, style


phone_kind("phone_de", [de_number], ["Tel.: {v}", "Handy: {v}", "ruf mich unter {v} an", "Telefonnummer {v}",
                                     "Mobil {v}", "erreichbar unter {v}", "Rückruf bitte an {v}"])


def in_number(rng: random.Random) -> tuple[str, str]:
    """India: mobiles [6-9] + 9 digits (5-5 print), landlines STD 11/22/80 + 8 digits; +91, 0 and 91- forms."""
    if rng.random() < 0.75:
        n = rng.choice("6789") + digits(rng, 9)
        style = rng.choice(["intl_55", "zero_55", "intl_dash", "compact", "intl_compact", "ninety_one"])
        return {"intl_55": f"+91 {n[:5]} {n[5:]}", "zero_55": f"0{n[:5]} {n[5:]}", "intl_dash": f"+91-{n}",
                "compact": n, "intl_compact": f"+91{n}", "ninety_one": f"91-{n[:5]}-{n[5:]}"}[style], style
    std, sub = rng.choice(["11", "22", "80", "44", "33"]), rng.choice("2345678") + digits(rng, 7)
    style = rng.choice(["std_dash", "std_space", "intl"])
    return {"std_dash": f"0{std}-{sub[:4]} {sub[4:]}", "std_space": f"0{std} {sub}",
            "intl": f"+91 {std} {sub[:4]} {sub[4:]}"}[style], "landline_" + style


phone_kind("phone_in", [in_number], ["Mobile: {v}", "call me on {v}", "Ph: {v}", "मोबाइल नंबर: {v}",
                                     "फ़ोन {v}", "contact no. {v}", "WhatsApp number {v}"])


# ---- US SSN, cards, IBANs --------------------------------------------------------------------------------------

def ssn_parts(rng: random.Random) -> tuple[str, str, str]:
    """Area 001-899 but 666, group 01-99, serial 0001-9999."""
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


@kind("ssn")
def ssn(rng: random.Random) -> Snip:
    """SSNs with dashes or spaces anywhere they are written, or compact after a label."""
    a, g, s = ssn_parts(rng)
    style = rng.choice(["dash", "dash", "space", "labelled_compact", "json_dash", "sql", "form_es", "w2"])
    v = f"{a} {g} {s}" if style == "space" else f"{a}{g}{s}" if style == "labelled_compact" else f"{a}-{g}-{s}"
    return v, {
        "dash": f"Applicant SSN {v}, DOB on file",
        "space": f"social security number: {v}",
        "labelled_compact": rng.choice([f"SSN={v}", f"ssn: {v}", f"Social Security No. {v}"]),
        "json_dash": f'{{"employee_id": "E-20931", "ssn": "{v}"}}',
        "sql": f"UPDATE employees SET ssn = '{v}' WHERE id = 4471;",
        "form_es": f"Número de Seguro Social: {v}",
        "w2": f"a Employee's social security number\n{v}",
    }[style], style


CARD_IINS = [("visa", ["4"], 16), ("mastercard", ["51", "52", "53", "54", "55", "2221", "2720", "2500"], 16),
             ("amex", ["34", "37"], 15), ("discover", ["6011", "644", "649", "65"], 16),
             ("jcb", ["3528", "3589", "3540"], 16), ("diners", ["36"], 14), ("unionpay", ["62"], 19)]


def card_number(rng: random.Random) -> tuple[str, str]:
    """A Luhn-valid number of a brand's IIN and length: (digits, brand)."""
    brand, prefixes, length = rng.choice(CARD_IINS)
    partial = rng.choice(prefixes)
    partial += digits(rng, length - 1 - len(partial))
    return partial + luhn_digit(partial), brand


@kind("card")
def card(rng: random.Random) -> Snip:
    """Card numbers with space, dash, dot, underscore or no separators, in payment logs and chat."""
    number, brand = card_number(rng)
    sep = rng.choice([" ", "-", ".", "_", ""])
    v = group_card(number, sep) if len(number) < 17 else group(number, 4, sep)
    sep_name = {" ": "space", "-": "dash", ".": "dot", "_": "underscore", "": "none"}[sep]
    snippet = rng.choice([f"card number {v} exp 09/28", f'{{"pan": "{v}", "cvc": "***"}}',
                          f"Kartennummer: {v}", f"numero carta {v}", f"カード番号 {v}", f"pay with {v} please",
                          f"| {brand} | {v} | declined |"])
    return v, snippet, f"{brand}_{sep_name}"


IBAN_BBANS = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n2n10n", "IT": "1a5n5n12c",
              "NL": "4a10n", "BE": "3n7n2n", "PL": "8n16n", "CH": "5n12c", "AT": "5n11n", "SE": "3n16n1n",
              "NO": "4n6n1n", "DK": "4n9n1n", "PT": "4n4n11n2n", "IE": "4a6n8n", "FI": "3n11n",
              "TR": "5n1n16c", "SA": "2n18c", "AE": "3n16n", "GR": "3n4n16c", "CZ": "4n6n10n",
              "HU": "3n4n1n15n1n", "RO": "4a16c", "BR": "8n5n10n1a1c", "IL": "3n3n13n"}
IBAN_CONTEXT = ["IBAN: {v}", "please wire it to {v}", "Kontonummer (IBAN) {v}", "rekeningnummer {v}",
                "numer konta: {v}", "IBAN {v} — BIC on the invoice", "coordonnées bancaires : {v}",
                "conto corrente {v}", "cuenta {v}", "hesap no (IBAN): {v}"]


@kind("iban")
def iban(rng: random.Random) -> Snip:
    """IBANs of 25 countries, grouped by four, compact, lower case or dashed."""
    country = rng.choice(list(IBAN_BBANS))
    b = bban(rng, IBAN_BBANS[country])
    compact = country + iban_check(country, b) + b
    style = rng.choice(["grouped", "grouped", "compact", "lower_compact", "lower_grouped", "json"])
    v = {"grouped": group(compact, 4, " "), "compact": compact, "lower_compact": compact.lower(),
         "lower_grouped": group(compact.lower(), 4, " "), "json": compact}[style]
    if style == "json":
        return v, f'{{"creditor": {{"iban": "{v}", "bic": "DEUTDEFF"}}}}', f"{country}_json"
    return v, rng.choice(IBAN_CONTEXT).format(v=v), f"{country}_{style}"


# ---- provider tokens -------------------------------------------------------------------------------------------

def provider_kind(name: str, names: list[str], value: Callable[[random.Random], str], bare_ok: bool = True) -> None:
    """Register a provider-token kind: `value` in a config style under `names`, labelled prose or bare."""
    def make(rng: random.Random) -> Snip:
        v = value(rng)
        snippet, style = token_snippet(rng, v, names, bare_ok)
        return v, snippet, style
    KINDS[name] = make


def b64json(claims: dict) -> str:
    """Base64url of compact JSON (no padding)."""
    return b64url(json.dumps(claims, separators=(",", ":")).encode())


def sentry_org_token(rng: random.Random) -> str:
    """`sntrys_` + base64 of the token's claims + `_` + 43 base64 characters of secret."""
    org = rng.choice(["acme", "payflow", "helix-ai", "northwind"])
    claims = {"iat": 1733400000 + rng.randint(0, 10**7), "url": "https://sentry.io",
              "region_url": "https://de.sentry.io", "org": org}
    body = base64.b64encode(json.dumps(claims, separators=(",", ":")).encode()).decode().rstrip("=")
    return f"sntrys_{body}_{pick(rng, ALNUM + '+/', 43)}"


def mapbox_secret(rng: random.Random) -> str:
    """`sk.` + base64url JSON {"u": user, "a": token id} + `.` + 22 characters."""
    return f"sk.{b64json({'u': rng.choice(FIRST).replace('.', ''), 'a': 'cl' + pick(rng, LOWER_ALNUM, 23)})}" \
           f".{pick(rng, URLSAFE, 22)}"


def azure_ad_secret(rng: random.Random) -> str:
    """An Entra ID client secret: 3 characters, a digit, `Q~`, 34 of [A-Za-z0-9_.~-]."""
    return pick(rng, ALNUM, 3) + rng.choice(string.digits) + "Q~" + pick(rng, ALNUM + "_.~-", 34)


def hs256(claims: dict, key: bytes) -> str:
    """A compact JWS signed with HMAC-SHA256 (RFC 7515)."""
    signing = b64json({"alg": "HS256", "typ": "JWT"}) + "." + b64json(claims)
    return signing + "." + b64url(hmac.new(key, signing.encode(), hashlib.sha256).digest())


def supabase_service(rng: random.Random) -> str:
    """The project's service-role JWT (HS256, role service_role)."""
    iat = 1700000000 + rng.randint(0, 10**7)
    return hs256({"iss": "supabase", "ref": pick(rng, string.ascii_lowercase, 20), "role": "service_role",
                  "iat": iat, "exp": iat + 315360000}, rng.randbytes(32))


provider_kind("atlassian_token", ["ATLASSIAN_API_TOKEN", "JIRA_API_TOKEN", "CONFLUENCE_TOKEN"],
              lambda r: f"ATATT3xFfGF0{pick(r, URLSAFE, 170)}={pick(r, '0123456789ABCDEF', 8)}")
provider_kind("grafana_sa", ["GRAFANA_SA_TOKEN", "GF_API_KEY", "GRAFANA_TOKEN"],
              lambda r: f"glsa_{pick(r, ALNUM, 32)}_{hexs(r, 8)}")
provider_kind("pulumi", ["PULUMI_ACCESS_TOKEN"], lambda r: f"pul-{hexs(r, 40)}")
provider_kind("doppler", ["DOPPLER_TOKEN", "DOPPLER_SERVICE_TOKEN"],
              lambda r: r.choice([f"dp.st.{r.choice(['dev', 'stg', 'prd'])}.{pick(r, ALNUM, 40)}",
                                  f"dp.pt.{pick(r, ALNUM, 43)}", f"dp.sa.{pick(r, ALNUM, 43)}"]))
provider_kind("netlify", ["NETLIFY_AUTH_TOKEN"], lambda r: f"nfp_{pick(r, ALNUM, 36)}")
provider_kind("postman", ["POSTMAN_API_KEY", "X_API_KEY"], lambda r: f"PMAK-{hexs(r, 24)}-{hexs(r, 34)}")
provider_kind("notion", ["NOTION_TOKEN", "NOTION_API_KEY"],
              lambda r: r.choice([f"secret_{pick(r, ALNUM, 43)}", f"ntn_{digits(r, 11)}{pick(r, ALNUM, 35)}"]))
provider_kind("airtable", ["AIRTABLE_API_KEY", "AIRTABLE_PAT"],
              lambda r: f"pat{pick(r, ALNUM, 14)}.{hexs(r, 64)}")
provider_kind("figma", ["FIGMA_TOKEN", "FIGMA_ACCESS_TOKEN"], lambda r: f"figd_{pick(r, URLSAFE, 40)}")
provider_kind("mapbox_secret", ["MAPBOX_SECRET_TOKEN", "MAPBOX_DOWNLOADS_TOKEN"], mapbox_secret)
provider_kind("supabase", ["SUPABASE_ACCESS_TOKEN", "SUPABASE_SERVICE_ROLE_KEY"],
              lambda r: r.choice([f"sbp_{hexs(r, 40)}", supabase_service(r)]))
provider_kind("digitalocean", ["DIGITALOCEAN_ACCESS_TOKEN", "DO_TOKEN"],
              lambda r: f"{r.choice(['dop', 'doo', 'dor'])}_v1_{hexs(r, 64)}")
provider_kind("databricks", ["DATABRICKS_TOKEN"], lambda r: f"dapi{hexs(r, 32)}{r.choice(['', '-2', '-3'])}")
provider_kind("sentry", ["SENTRY_AUTH_TOKEN"],
              lambda r: r.choice([sentry_org_token(r), f"sntryu_{hexs(r, 64)}"]))
provider_kind("newrelic", ["NEW_RELIC_API_KEY", "NEWRELIC_USER_KEY"],
              lambda r: f"NRAK-{pick(r, string.ascii_uppercase + string.digits, 27)}")
provider_kind("gcp_oauth_secret", ["GOOGLE_CLIENT_SECRET", "OAUTH_CLIENT_SECRET"],
              lambda r: f"GOCSPX-{pick(r, URLSAFE, 28)}")
provider_kind("bitbucket_app_password", ["BITBUCKET_APP_PASSWORD", "BB_APP_PASSWORD"],
              lambda r: f"ATBB{pick(r, ALNUM, 28)}{pick(r, '0123456789ABCDEF', 8)}")
provider_kind("azure_ad_secret", ["AZURE_CLIENT_SECRET", "ARM_CLIENT_SECRET"], azure_ad_secret, bare_ok=False)
provider_kind("cloudflare", ["CLOUDFLARE_API_TOKEN", "CF_API_TOKEN"], lambda r: pick(r, URLSAFE, 40), False)
provider_kind("vercel", ["VERCEL_TOKEN"], lambda r: pick(r, ALNUM, 24), False)
provider_kind("fastly", ["FASTLY_API_TOKEN", "FASTLY_KEY"], lambda r: pick(r, URLSAFE, 32), False)
provider_kind("heroku", ["HEROKU_API_KEY"], lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4)), False)


# ---- keys, tokens, headers, cookies ----------------------------------------------------------------------------

def pem_body(der_bytes: bytes, width: int = 64) -> str:
    """Base64 of `der_bytes` in lines of `width` (RFC 7468)."""
    return group(base64.b64encode(der_bytes).decode(), width, "\n")


def pkcs1_rsa(rng: random.Random) -> bytes:
    """An RSAPrivateKey SEQUENCE (RFC 8017 A.1.2) of 2048-bit shaped integers."""
    big = lambda bits: rng.getrandbits(bits) | (1 << (bits - 1)) | 1  # noqa: E731
    return der_seq(der_int(0), der_int(big(2048)), der_int(65537), der_int(big(2047)), der_int(big(1024)),
                   der_int(big(1024)), der_int(big(1023)), der_int(big(1023)), der_int(big(1023)))


@kind("private_key")
def private_key(rng: random.Random) -> Snip:
    """PEM private keys (PKCS#8, SEC1, PKCS#1, OpenSSH); the secret is the base64 body."""
    which = rng.choice(["pkcs8_ec", "sec1_ec", "pkcs8_ed25519", "pkcs1_rsa", "openssh_ed25519"])
    if which in ("pkcs8_ec", "sec1_ec"):
        curve = rng.choice([ec.SECP256R1(), ec.SECP384R1()])
        key = ec.derive_private_key(rng.getrandbits(curve.key_size - 2) | 1 << (curve.key_size - 2), curve)
        formats = serialization.PrivateFormat
        fmt = formats.PKCS8 if which == "pkcs8_ec" else formats.TraditionalOpenSSL
        pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
        label = "PRIVATE KEY" if which == "pkcs8_ec" else "EC PRIVATE KEY"
        body = pem.split("-----\n", 1)[1].rsplit("\n-----", 1)[0]
    elif which == "pkcs8_ed25519":
        key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
        label, body = "PRIVATE KEY", pem.split("-----\n", 1)[1].rsplit("\n-----", 1)[0]
    elif which == "pkcs1_rsa":
        label, body = "RSA PRIVATE KEY", pem_body(pkcs1_rsa(rng))
    else:
        key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        seed = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                 serialization.NoEncryption())
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"agent@build-7")
        label, body = "OPENSSH PRIVATE KEY", pem_body(blob, 70)
    block = f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"
    how, head, indent = rng.choice([("cat", "$ cat ~/.ssh/deploy_key\n", ""), ("git_diff", "+", "+"),
                                    ("k8s_yaml_decoded", "tls.key: |\n  ", "  "),
                                    ("hcl_heredoc", "private_key = <<EOT\n", ""),
                                    ("markdown", "here is the key you asked for:\n\n```\n", "")])
    tail = {"hcl_heredoc": "\nEOT", "markdown": "\n```"}.get(how, "")
    snippet = head + block.replace("\n", "\n" + indent) + tail
    return body.replace("\n", "\n" + indent), snippet, f"{which}_{how}"


@kind("jwt")
def jwt(rng: random.Random) -> Snip:
    """HS256 JWTs with user claims, as bearer headers, cookies, JSON fields, URL parameters and localStorage."""
    iat = 1764000000 + rng.randint(0, 10**6)
    claims = {"sub": str(rng.randint(10**5, 10**9)), "email": mailbox(rng), "role": rng.choice(["admin", "user"]),
              "iat": iat, "exp": iat + 3600}
    if rng.random() < 0.4:
        claims["scope"] = "read write"
    v = hs256(claims, rng.randbytes(32))
    snippet, style = rng.choice([
        (f"Authorization: Bearer {v}", "bearer_header"),
        (f'{{"access_token": "{v}", "token_type": "Bearer", "expires_in": 3600}}', "oauth_json"),
        (f"https://app.example.com/callback#id_token={v}&state=af0ifjsldkj", "url_fragment"),
        (f"> localStorage.getItem('auth')\n'{v}'", "devtools"),
        (f"Set-Cookie: access_token={v}; HttpOnly; Secure; SameSite=Lax", "set_cookie"),
        (f"decoded it, the token was {v}", "prose"),
    ])
    return v, snippet, style


@kind("auth_header")
def auth_header(rng: random.Random) -> Snip:
    """HTTP Authorization values: Basic, Bearer (opaque), Digest response, SigV4 Signature, Token, SSWS."""
    which = rng.choice(["basic", "bearer", "digest", "sigv4", "token", "ssws"])
    if which == "basic":
        secret = base64.b64encode(f"{rng.choice(USERS)}:{password_value(rng)}".encode()).decode()
        value = f"Basic {secret}"
    elif which == "bearer":
        secret = pick(rng, URLSAFE + ".~", rng.randint(32, 64))
        value = f"Bearer {secret}"
    elif which == "digest":
        secret = hexs(rng, 32)
        value = (f'Digest username="{rng.choice(USERS)}", realm="api", nonce="{hexs(rng, 16)}", uri="/v1/orders", '
                 f'response="{secret}", qop=auth, nc=00000001, cnonce="{hexs(rng, 8)}"')
    elif which == "sigv4":
        secret = hexs(rng, 64)
        value = (f"AWS4-HMAC-SHA256 Credential={aws_key_id(rng)}/20261205/eu-west-1/s3/aws4_request, "
                 f"SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature={secret}")
    elif which == "token":
        secret = hexs(rng, 40)
        value = f"Token {secret}"
    else:
        secret = "00" + pick(rng, URLSAFE, 40)
        value = f"SSWS {secret}"
    snippet, how = rng.choice([
        (f"> GET /v1/orders HTTP/2\n> Host: api.internal\n> Authorization: {value}\n> Accept: */*", "curl_v"),
        (f'{{"http.request.header.authorization": ["{value}"], "http.method": "GET"}}'
         if '"' not in value else f"authorization={value}", "otel_attr"),
        (f"curl -s -H 'Authorization: {value}' https://api.internal/v1/me", "curl_cmd"),
        (f"headers = {{'Authorization': '{value}'}}" if "'" not in value else f"AUTH_HEADER={value}", "python"),
        (f"authorization: {value}", "http2_lower"),
    ])
    return secret, snippet, f"{which}_{how}"


@kind("session_cookie")
def session_cookie(rng: random.Random) -> Snip:
    """Session cookies of common frameworks, in Cookie and Set-Cookie headers and devtools copies."""
    name, value = rng.choice([
        ("sessionid", pick(rng, LOWER_ALNUM, 32)),
        ("connect.sid", f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, ALNUM + '%', 43)}"),
        ("_session_id", hexs(rng, 32)),
        ("PHPSESSID", pick(rng, LOWER_ALNUM, 26)),
        ("JSESSIONID", pick(rng, "0123456789ABCDEF", 32)),
        ("ASP.NET_SessionId", pick(rng, "abcdefghijklmnopqrstuvwxyz012345", 24)),
        ("laravel_session", "eyJpdiI6" + pick(rng, ALNUM, 180) + "%3D%3D"),
        ("__Secure-next-auth.session-token", "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0.." + pick(rng, URLSAFE, 120)),
    ])
    snippet, how = rng.choice([
        (f"Cookie: {name}={value}; theme=dark; lang=en", "cookie_header"),
        (f"Set-Cookie: {name}={value}; Path=/; HttpOnly; Secure", "set_cookie"),
        (f'{{"name": "{name}", "value": "{value}", "domain": ".shop.example", "httpOnly": true}}', "devtools_json"),
        (f"curl -b '{name}={value}' https://shop.example/account", "curl_b"),
        (f"shop.example\tTRUE\t/\tTRUE\t1796000000\t{name}\t{value}", "netscape_jar"),
    ])
    return value, snippet, f"{name}_{how}"


# ---- six more national phone plans -----------------------------------------------------------------------------

def it_number(rng: random.Random) -> tuple[str, str]:
    """Italy: mobiles 3[1-9]x + 6-7 digits, Rome 06 and Milan 02 + 7-8 digits; +39 keeps the leading 0."""
    if rng.random() < 0.6:
        n = f"3{rng.randint(1, 9)}{rng.randint(0, 9)}"
        sub = digits(rng, 7)
        style = rng.choice(["space", "intl", "compact", "intl_compact", "dash"])
        return {"space": f"{n} {sub[:3]} {sub[3:]}", "intl": f"+39 {n} {sub}", "compact": n + sub,
                "intl_compact": f"+39{n}{sub}", "dash": f"{n}-{sub}"}[style], "mobile_" + style
    area, sub = rng.choice(["06", "02", "011", "055"]), rng.randint(2, 9).__str__() + digits(rng, 6)
    style = rng.choice(["space", "intl", "slash"])
    return {"space": f"{area} {sub}", "intl": f"+39 {area} {sub}", "slash": f"{area}/{sub}"}[style], "fixed_" + style


def es_number(rng: random.Random) -> tuple[str, str]:
    """Spain: 9 digits, mobiles 6xx/7[1-4]x, fixed 9xx/8xx; 3-3-3 or 3-2-2-2 print, +34."""
    n = rng.choice(["6", "6", "71", "72", "91", "93", "95", "81"])
    n += digits(rng, 9 - len(n))
    style = rng.choice(["333", "3222", "intl_333", "intl_3222", "compact", "intl_compact"])
    g333, g3222 = f"{n[:3]} {n[3:6]} {n[6:]}", f"{n[:3]} {n[3:5]} {n[5:7]} {n[7:]}"
    return {"333": g333, "3222": g3222, "intl_333": "+34 " + g333, "intl_3222": "+34 " + g3222, "compact": n,
            "intl_compact": "+34" + n}[style], style


def nl_number(rng: random.Random) -> tuple[str, str]:
    """Netherlands: mobiles 06 + 8 digits, Amsterdam 020 / Rotterdam 010 + 7 digits; +31 drops the 0."""
    if rng.random() < 0.6:
        sub = rng.randint(1, 5).__str__() + digits(rng, 7)
        style = rng.choice(["dash", "space", "intl", "intl_space", "compact"])
        return {"dash": f"06-{sub}", "space": f"06 {sub[:2]} {sub[2:5]} {sub[5:]}", "intl": f"+316{sub}",
                "intl_space": f"+31 6 {sub}", "compact": f"06{sub}"}[style], "mobile_" + style
    area, sub = rng.choice(["20", "10", "30", "70"]), rng.randint(2, 9).__str__() + digits(rng, 6)
    style = rng.choice(["dash", "intl", "space"])
    return {"dash": f"0{area}-{sub}", "intl": f"+31 {area} {sub}", "space": f"0{area} {sub[:3]} {sub[3:]}"}[style], \
        "fixed_" + style


def pl_number(rng: random.Random) -> tuple[str, str]:
    """Poland: 9 digits; mobiles 5/6/7/8xx (3-3-3), fixed 2-digit area + 7 (2-3-2-2); +48."""
    if rng.random() < 0.65:
        n = rng.choice("5678") + digits(rng, 8)
        style = rng.choice(["333", "dash", "intl", "intl_dash", "compact"])
        return {"333": f"{n[:3]} {n[3:6]} {n[6:]}", "dash": f"{n[:3]}-{n[3:6]}-{n[6:]}",
                "intl": f"+48 {n[:3]} {n[3:6]} {n[6:]}", "intl_dash": f"+48-{n[:3]}-{n[3:6]}-{n[6:]}",
                "compact": n}[style], "mobile_" + style
    area, sub = rng.choice(["22", "12", "61", "71", "58"]), digits(rng, 7)
    style = rng.choice(["fixed", "intl"])
    g = f"{area} {sub[:3]} {sub[3:5]} {sub[5:]}"
    return {"fixed": g, "intl": "+48 " + g}[style], "fixed_" + style


def jp_number(rng: random.Random) -> tuple[str, str]:
    """Japan: mobiles 070/080/090-xxxx-xxxx, Tokyo 03 / Osaka 06-xxxx-xxxx; +81 drops the 0."""
    area = rng.choice(["90", "80", "70", "3", "6"])
    a, b = digits(rng, 4), digits(rng, 4)
    style = rng.choice(["dash", "paren", "intl_dash", "intl_space", "compact", "fullwidth_dash"])
    out = {"dash": f"0{area}-{a}-{b}", "paren": f"0{area}({a}){b}", "intl_dash": f"+81-{area}-{a}-{b}",
           "intl_space": f"+81 {area} {a} {b}", "compact": f"0{area}{a}{b}",
           "fullwidth_dash": fullwidth(f"0{area}-{a}-{b}")}[style]
    return out, style


def mx_number(rng: random.Random) -> tuple[str, str]:
    """Mexico: 10 digits since 2019 (CDMX 55, Monterrey 81, Guadalajara 33 + 8; others 3 + 7); +52, old +52 1."""
    area = rng.choice(["55", "81", "33", "222", "664", "998"])
    sub = digits(rng, 10 - len(area))
    half = len(sub) // 2
    style = rng.choice(["space", "paren", "intl", "intl_mobile_1", "dash", "compact"])
    return {"space": f"{area} {sub[:half]} {sub[half:]}", "paren": f"({area}) {sub[:half]}-{sub[half:]}",
            "intl": f"+52 {area} {sub[:half]} {sub[half:]}", "intl_mobile_1": f"+52 1 {area} {sub}",
            "dash": f"{area}-{sub[:half]}-{sub[half:]}", "compact": area + sub}[style], style


phone_kind("phone_it", [it_number], ["Cellulare: {v}", "chiamami al {v}", "Tel. {v}", "numero di telefono {v}",
                                     "recapito telefonico: {v}"])
phone_kind("phone_es", [es_number], ["Teléfono: {v}", "llámame al {v}", "móvil {v}", "Tel. {v}",
                                     "mi número es el {v}"])
phone_kind("phone_nl", [nl_number], ["Tel.: {v}", "bel me op {v}", "mobiel: {v}", "telefoonnummer {v}",
                                     "bereikbaar op {v}"])
phone_kind("phone_pl", [pl_number], ["Tel.: {v}", "zadzwoń pod {v}", "komórka: {v}", "numer telefonu {v}",
                                     "kontakt tel. {v}"])
phone_kind("phone_jp", [jp_number], ["電話番号：{v}", "携帯 {v}", "TEL {v}", "お電話は {v} まで",
                                     "連絡先 {v}"])
phone_kind("phone_mx", [mx_number], ["Tel: {v}", "llámame al {v}", "celular {v}", "WhatsApp: {v}",
                                     "teléfono de contacto {v}"])


# ---- national ids (OUTSIDE_TARGET) -----------------------------------------------------------------------------

NINO_FIRST = "ABCEGHJKLMNOPRSTWXYZ"
NINO_SECOND = "ABCEGHJKLMNPRSTWXYZ"


@kind("uk_nino")
def uk_nino(rng: random.Random) -> Snip:
    """UK National Insurance numbers: two prefix letters (no D F I Q U V; second not O; no BG GB KN NK NT TN
    ZZ), six digits, suffix A-D; printed in pairs or compact."""
    prefix = rng.choice(NINO_FIRST) + rng.choice(NINO_SECOND)
    while prefix in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ"):
        prefix = rng.choice(NINO_FIRST) + rng.choice(NINO_SECOND)
    body, suffix = digits(rng, 6), rng.choice("ABCD")
    style = rng.choice(["pairs", "compact"])
    v = f"{prefix} {body[:2]} {body[2:4]} {body[4:]} {suffix}" if style == "pairs" else prefix + body + suffix
    return v, rng.choice([f"NI number: {v}", f"National Insurance No. {v}", f'{{"nino": "{v}"}}']), style


@kind("ca_sin")
def ca_sin(rng: random.Random) -> Snip:
    """Canadian SINs: 9 digits passing Luhn, first digit 1-7 or 9, in 3-3-3 groups."""
    partial = rng.choice("1234567") + digits(rng, 7)
    n = partial + luhn_digit(partial)
    style = rng.choice(["space", "dash", "compact"])
    v = {"space": f"{n[:3]} {n[3:6]} {n[6:]}", "dash": f"{n[:3]}-{n[3:6]}-{n[6:]}", "compact": n}[style]
    return v, rng.choice([f"SIN: {v}", f"Social Insurance Number {v}", f"NAS : {v}"]), style


DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


@kind("es_dni")
def es_dni(rng: random.Random) -> Snip:
    """Spanish DNI (8 digits + mod-23 letter) and NIE (X/Y/Z + 7 digits + letter, X=0 Y=1 Z=2)."""
    if rng.random() < 0.7:
        n = digits(rng, 8)
        v = n + DNI_LETTERS[int(n) % 23]
        style = "dni"
    else:
        head, n = rng.choice("XYZ"), digits(rng, 7)
        v = head + n + DNI_LETTERS[int(str("XYZ".index(head)) + n) % 23]
        style = "nie"
    if rng.random() < 0.3:
        v, style = f"{v[:-1]}-{v[-1]}", style + "_dash"
    return v, rng.choice([f"DNI: {v}", f"NIF {v}", f"documento de identidad {v}", f"NIE: {v}"]), style


# ---- carriers: how an agent trace stores the snippet -----------------------------------------------------------

def dumps(doc: object) -> str:
    """A JSON document as stored (UTF-8 kept, not \\u-escaped)."""
    return json.dumps(doc, ensure_ascii=False)


def openai_tool_call(rng: random.Random, s: str) -> tuple[str, str]:
    """An assistant turn whose tool call's `arguments` is a JSON string holding the snippet."""
    args = dumps({rng.choice(["command", "content", "query", "text"]): s})
    call = {"id": f"call_{pick(rng, ALNUM, 24)}", "type": "function",
            "function": {"name": rng.choice(["write_file", "run_shell", "send_message"]), "arguments": args}}
    return s, dumps({"model": "gpt-4.1", "messages": [{"role": "user", "content": "set up the service"},
                                                      {"role": "assistant", "content": None, "tool_calls": [call]}]})


JSON_CARRIERS: dict[str, Callable[[random.Random, str], tuple[str, str]]] = {
    "openai_tool_call": openai_tool_call,
    "openai_tool_msg": lambda r, s: (s, dumps({"role": "tool", "tool_call_id": f"call_{pick(r, ALNUM, 24)}",
                                               "content": s})),
    "anthropic_tool_result": lambda r, s: (s, dumps({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"toolu_01{pick(r, ALNUM, 22)}",
         "content": [{"type": "text", "text": s}]}]})),
    "anthropic_tool_use": lambda r, s: (s, dumps({"role": "assistant", "content": [
        {"type": "text", "text": "Running it now."},
        {"type": "tool_use", "id": f"toolu_01{pick(r, ALNUM, 22)}", "name": "bash", "input": {"command": s}}]})),
    "mcp_result": lambda r, s: (s, dumps({"jsonrpc": "2.0", "id": r.randint(1, 999), "result": {
        "content": [{"type": "text", "text": s}], "isError": False}})),
    "mcp_request": lambda r, s: (s, dumps({"jsonrpc": "2.0", "id": r.randint(1, 999), "method": "tools/call",
                                           "params": {"name": "fs_write", "arguments": {"path": ".env",
                                                                                        "content": s}}})),
    "otel_span": lambda r, s: (s, dumps({"traceId": hexs(r, 32), "spanId": hexs(r, 16), "name": "chat gpt-4o",
                                         "attributes": [{"key": "gen_ai.system", "value": {"stringValue": "openai"}},
                                                        {"key": "gen_ai.prompt", "value": {"stringValue": s}}]})),
    "journald": lambda r, s: (s, dumps({"__REALTIME_TIMESTAMP": str(1764970000000000 + r.randint(0, 10**9)),
                                        "_SYSTEMD_UNIT": "agent-runner.service", "PRIORITY": "6",
                                        "SYSLOG_IDENTIFIER": "agent", "MESSAGE": s})),
    "jupyter_output": lambda r, s: (s, dumps({"cell_type": "code", "execution_count": r.randint(1, 40),
                                              "outputs": [{"output_type": "stream", "name": "stdout",
                                                           "text": [s]}]})),
    "slack_export": lambda r, s: (s, dumps([{"type": "message", "user": f"U0{pick(r, string.ascii_uppercase, 8)}",
                                             "text": s, "ts": f"1764970{digits(r, 3)}.{digits(r, 6)}"}])),
    "zendesk_ticket": lambda r, s: (s, dumps({"ticket": {"id": r.randint(10**4, 10**6), "comments": [
        {"author_id": r.randint(10**9, 10**10), "body": s, "public": False}]}})),
    "intercom_part": lambda r, s: (f"<p>{s}</p>", dumps({"type": "conversation_part", "part_type": "comment",
                                                          "body": f"<p>{s}</p>", "author": {"type": "user"}})),
    "langgraph_checkpoint": lambda r, s: (s, dumps({"v": 1, "channel_values": {"messages": [
        {"type": "ai", "content": s, "id": str(uuid.UUID(int=r.getrandbits(128)))}]}})),
}
"""JSON carriers: each returns (the string holding the snippet, the JSON document as stored)."""

TextCarrier = tuple[Callable[[random.Random, str], str], bool]
"""(wrap, takes multi-line snippets)."""

TEXT_CARRIERS: dict[str, TextCarrier] = {
    "shell_tool": (lambda r, s: f"[tool: bash] exit_code=0 duration={r.randint(20, 900)}ms\n{s}\n", True),
    "langgraph_repr": (lambda r, s: f"{{'messages': [ToolMessage(content='{s}', tool_call_id='call_{pick(r, ALNUM, 8)}"
                                    "')], 'next': 'agent'}", True),
    "crewai_log": (lambda r, s: ("# Agent: Platform Engineer\n## Using tool: Read a file's content\n"
                                 f"## Tool Output:\n{s}\n\n# Agent: Platform Engineer\n## Final Answer:"), True),
    "autogen_log": (lambda r, s: ("executor (to assistant):\n\nexitcode: 0 (execution succeeded)\nCode output: "
                                  f"{s}\n\n" + "-" * 64), True),
    "jupyter_text": (lambda r, s: f"In [{r.randint(2, 40)}]: !cat settings\n{s}", True),
    "email_body": (lambda r, s: f"Hi team,\n\nas discussed on the call:\n\n{s}\n\nThanks,\nR.", True),
    "chat_copy": (lambda r, s: f"[{r.randint(8, 18)}:{r.randint(10, 59)}] agent-bot: {s}", True),
    "syslog_5424": (lambda r, s: (f"<134>1 2026-12-05T21:{r.randint(10, 59)}:{r.randint(10, 59)}.{digits(r, 3)}Z "
                                  f"runner-{r.randint(1, 9)} agentd {r.randint(100, 9999)} TOOL "
                                  f'[tool@32473 name="bash" exit="0"] {s}'), False),
    "bash_history": (lambda r, s: f"cd ~/src/api\ngit pull\n{s}\nmake test", False),
    "nginx_access": (lambda r, s: (f'10.0.{r.randint(0, 9)}.{r.randint(2, 250)} - - [05/Dec/2026:21:40:11 +0000] '
                                   f'"POST /agent/run HTTP/1.1" 200 {r.randint(100, 9999)} "-" "httpx/0.27" '
                                   f'body="{s}"'), False),
    "psql_result": (lambda r, s: f" id | note\n----+------\n {r.randint(1, 99)} | {s}\n(1 row)", False),
    "windows_event": (lambda r, s: ('<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event"><System>'
                                    "<EventID>4688</EventID></System><EventData><Data Name=\"CommandLine\">"
                                    f"{s}</Data></EventData></Event>"), False),
}


def carry(rng: random.Random, snippet: str, as_json: bool) -> tuple[str, str, str]:
    """Wrap `snippet` in a carrier: (carrier name, text, carried)."""
    if as_json:
        nests = "\n" not in snippet and "\\" not in snippet  # a JSON string inside JSON escapes these twice
        name = rng.choice([n for n in JSON_CARRIERS if nests or n != "openai_tool_call"])
        text, carried = JSON_CARRIERS[name](rng, snippet)
        return name, text, carried
    one_line = "\n" not in snippet
    xml_safe = not any(c in snippet for c in "<>&")
    names = [n for n, (_, multi) in TEXT_CARRIERS.items() if (multi or one_line)
             and (n != "windows_event" or xml_safe)]
    name = rng.choice(names)
    text = TEXT_CARRIERS[name][0](rng, snippet)
    return name, text, text


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, every third carried as JSON."""
    rng = random.Random(SEED)
    for name, make in KINDS.items():
        for i in range(PER_KIND):
            secret, snippet, style = make(rng)
            carrier, text, carried = carry(rng, snippet, i % 3 == 0)
            yield Case(name, secret, text, carried, i % 3 == 0, f"{carrier}/{style}")


# ---- near misses: values that look like the kinds above but are none -------------------------------------------

def luhn_failing(rng: random.Random) -> str:
    """A 16-digit Visa/Mastercard-shaped number whose last digit is not its Luhn digit."""
    partial = rng.choice(["4", "51", "55"])
    partial += digits(rng, 15 - len(partial))
    wrong = str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)
    return group(partial + wrong, 4, rng.choice([" ", "-"]))


def iban_failing(rng: random.Random) -> str:
    """A registry-shaped IBAN whose check digits are off by 1-9 (MOD 97 fails)."""
    country = rng.choice(["DE", "FR", "NL", "IT", "ES", "GB", "PL"])
    b = bban(rng, IBAN_BBANS[country])
    good = int(iban_check(country, b))
    bad = (good - 2 + rng.randint(1, 9)) % 95 + 2
    if bad == good:
        bad = good + 1 if good < 96 else good - 1
    return group(f"{country}{bad:02d}{b}", 4, " ")


def invalid_ssn(rng: random.Random) -> str:
    """An SSN the SSA never issues: area 000, 666 or 9xx, group 00 or serial 0000."""
    _, g, s = ssn_parts(rng)
    return rng.choice([f"000-{g}-{s}", f"666-{g}-{s}", f"9{digits(rng, 2)}-{g}-{s}",
                       f"{rng.randint(100, 665)}-00-{s}", f"{rng.randint(100, 665)}-{g}-0000"])


NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "uuid": lambda r: f"request_id={uuid.UUID(int=r.getrandbits(128), version=4)} status=200",
    "git_sha": lambda r: f"HEAD is now at {hexs(r, 40)} fix(api): retry on 503",
    "image_digest": lambda r: f"image: ghcr.io/acme/api@sha256:{hexs(r, 64)}",
    "otel_trace_id": lambda r: f'{{"trace_id": "{hexs(r, 32)}", "span_id": "{hexs(r, 16)}", "sampled": true}}',
    "version": lambda r: f"upgraded torch {r.randint(1, 2)}.{r.randint(0, 9)}.{r.randint(0, 9)} -> "
                         f"{r.randint(2, 3)}.{r.randint(0, 9)}.{r.randint(0, 9)}+cu{r.randint(118, 128)}",
    "amount": lambda r: r.choice([f"Total: €{r.randint(1, 99)}.{digits(r, 3)},{digits(r, 2)}",
                                  f"refund of ${r.randint(1, 99)},{digits(r, 3)}.{digits(r, 2)} approved",
                                  f"balance ¥{r.randint(1, 999)},{digits(r, 3)}"]),
    "timestamp": lambda r: r.choice([f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:"
                                     f"{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{digits(r, 6)}Z",
                                     f"ts={1764000000 + r.randint(0, 10**7)}.{digits(r, 3)}"]),
    "order_number": lambda r: r.choice([f"Order #{r.choice('ABCK')}-{digits(r, 4)}-{digits(r, 4)} shipped",
                                        f"PO-2026-{digits(r, 6)} received", f"invoice INV{digits(r, 8)} paid"]),
    "card_luhn_fail": lambda r: f"card number {luhn_failing(r)} was rejected",
    "iban_mod97_fail": lambda r: f"IBAN: {iban_failing(r)} (typo, bounced)",
    "ssn_invalid": lambda r: f"SSN: {invalid_ssn(r)}",
    "placeholder_var": lambda r: r.choice(["DB_PASSWORD=${DB_PASSWORD}", "PGPASSWORD=$PGPASSWORD",
                                           "api_key: ${{ secrets.API_KEY }}", "password: {{ .Values.db.password }}",
                                           'token = var.cloudflare_token', "MYSQL_ROOT_PASSWORD_FILE=/run/secrets/db"]),
    "placeholder_angle": lambda r: r.choice(["API Key: <your-api-key>", "export OPENAI_API_KEY=<YOUR_KEY_HERE>",
                                             '"password": "<password>"', "Authorization: Bearer <token>",
                                             "AWS_SECRET_ACCESS_KEY=[REDACTED]", "password: null"]),
    "masked": lambda r: r.choice(["password: ********", f"card **** **** **** {digits(r, 4)}",
                                  f"Visa ending in {digits(r, 4)}", "token: sk_live_••••••••",
                                  f"IBAN DE** **** **** **** **{digits(r, 2)} 00", "secret: xxxxxxxxxxxxxxxx"]),
    "publishable_key": lambda r: r.choice([f"STRIPE_PUBLISHABLE_KEY=pk_live_{pick(r, B62, 24)}",
                                           f"NEXT_PUBLIC_MAPBOX_TOKEN=pk.{mapbox_secret(r)[3:]}",
                                           f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{pick(r, B64, 43)} ci@build"]),
    "k8s_names": lambda r: f"pod/api-{hexs(r, 10)}-{pick(r, 'bcdfghjklmnpqrstvwxz2456789', 5)} Running",
    "file_path": lambda r: f"/home/runner/work/api/api/node_modules/.cache/{hexs(r, 2)}/{hexs(r, 38)}.json",
    "isbn_ean": lambda r: f"ISBN 978-{r.randint(0, 9)}-{digits(r, 3)}-{digits(r, 5)}-{r.randint(0, 9)}",
    "model_ids": lambda r: r.choice([f"model: claude-sonnet-4-{digits(r, 8)}", f"run_id=run_{pick(r, ALNUM, 24)}",
                                     f"ft:gpt-4o-mini:acme::{pick(r, ALNUM, 8)}"]),
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """20 near misses of each sort: (sort, text), none holding a secret or personal data."""
    rng = random.Random(SEED + 1)
    for sort, make in NEGATIVES.items():
        for _ in range(20):
            yield sort, make(rng)
