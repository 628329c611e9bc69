"""A sixth redaction corpus: values written in the shapes three other teams' data holds, by someone who read neither
the rules (tracegym/redact/) nor the five earlier corpora, only the public formats below.

The teams: (1) an e-commerce and gaming support agent (Zendesk-like tickets and macros, Shopify and Magento admin
exports, Discord moderation logs, game-server RCON logs); (2) an HR, legal and insurance back office (raw MIME mail
with quoted-printable bodies, `.eml` forwarding chains quoted with `> `, Excel exported to CSV with `;` and quoted
cells, Word tables saved as text, OCR of scanned forms); (3) a platform/SRE agent (`kubectl describe`, Helm values,
Ansible inventories, docker-compose, dotfiles in INI form, Java properties, Spring Boot actuator `/env` JSON,
logfmt, XML/SOAP and `web.config`, Windows event logs, debug dumps of Java/Go/Rust/Ruby/PHP/Python objects,
GraphQL responses, protobuf text format, `curl -v`, `git remote -v`, shell history). Labels and prose in German,
French, Spanish, Italian, Japanese, Chinese, Hindi, Russian, Greek, Hebrew, Indonesian, Czech and English.

Every case is a `Case`: `secret` is the value exactly as written in `carried` (quoted-printable, indented, percent-
encoded or disguised as the carrier writes it), so any 8 characters of it left after redaction are a miss.
`form` is `carrier/style`. `generate()` writes `PER_KIND` values of each kind of `KINDS` from seed `SEED`;
`generate_negatives()` yields (sort, text) near misses that must give no finding.

Formats, per kind (public specifications, or where a provider documents no format, its tokens as its own docs and
announcements show them):
- password, secret: no format; labels in 13 languages, env/YAML/INI/properties/XML keys, column headers, and
  label-without-colon prose (`password is X`, `pw X`). Generic secrets: Django `SECRET_KEY` (50 printable), Laravel
  `APP_KEY=base64:` (32 bytes), hex HMAC keys, OAuth client secrets.
- aws_key_id, aws_secret: IAM docs "Understanding unique ID prefixes" (`AKIA`/`ASIA` + 16 of base32 A-Z2-7) and
  the 40-character secret access key of the credentials file (AWS CLI "Configuration and credential file").
- github: GitHub blog "Behind GitHub's new authentication token formats" (2021: `ghp_`/`gho_`/`ghu_`/`ghs_` + 30
  base62 + CRC32 in 6 base62) and `github_pat_` fine-grained tokens (22 + `_` + 59 base62, as GitHub shows them).
- gitlab: GitLab docs "Token prefixes" (`glpat-`, `gldt-`, `glrt-`, `glptt-` + 20 of [0-9A-Za-z_-]; trigger 40 hex).
- slack_token: Slack API docs "Token types" (`xoxb-`, `xoxp-`, `xapp-` shapes).
- stripe: Stripe docs "API keys" (`sk_live_`, `rk_live_`, 24 or 99 base62) and "Check webhook signatures"
  (`whsec_` + 32).
- openai: no documented format; project keys as OpenAI shows them (`sk-proj-`, `sk-svcacct-`, `sk-admin-`, with
  `T3BlbkFJ` inside). anthropic: `sk-ant-api03-` / `sk-ant-admin01-` + 93 base64url + `AA` (as its console shows).
- google: Google Cloud "API keys" (`AIza` + 35), OAuth client secrets `GOCSPX-` + 28, access tokens `ya29.`.
- twilio: Twilio docs (Account SID `AC` + 32 hex beside a 32-hex auth token; API key `SK` + 32 hex and its secret).
- sendgrid: Twilio SendGrid "API keys" (`SG.` + 22 + `.` + 43 base64url). npm: npm blog 2021 (`npm_` + 30 + CRC).
- pypi: PyPI help "API tokens" (`pypi-` + a base64url macaroon, `AgEIcHlwaS5vcmc` = its `pypi.org` location).
- huggingface: Hub docs "User access tokens" (`hf_` + 34 letters). datadog: Datadog docs "API and application keys"
  (32 and 40 hex; no prefix, so always labelled). azure_storage: Azure Storage docs (88-character base64
  `AccountKey=`; SAS `sig=` percent-encoded base64 of an HMAC-SHA256). shopify: Shopify "access tokens" (`shpat_`,
  `shpca_`, `shppa_`, `shpss_` + 32 hex). mailgun: Mailgun docs (`key-` + 32 hex; 32 hex-8 hex-8 hex).
  digitalocean: DigitalOcean "token prefixes" (`dop_v1_`, `doo_v1_`, `dor_v1_` + 64 hex). linear: Linear API docs
  (`lin_api_` + 40; `lin_oauth_` + 64 hex).
- gcp_service_account: IAM docs "Create service account keys" (the JSON key file; `private_key` a PKCS#8 PEM).
- jwt: RFC 7519 / RFC 7515 compact serialisation (HS256 signed with HMAC here; RS256/ES256 signature bytes random).
- pem: RFC 7468 armour; PKCS#1 RSA (RFC 8017 A.1.2: random integers of the right sizes, not a working key),
  SEC1 EC (RFC 5915) and PKCS#8 (RFC 5208) from cryptography with a seeded private value, OpenSSH `openssh-key-v1`
  (OpenSSH PROTOCOL.key) Ed25519. The secret is the base64 body as written (indented where the carrier indents).
- webhook: Slack incoming webhooks, Discord "Webhook" resource, Microsoft Teams incoming webhook, Google Chat,
  Zapier catch hooks, Mattermost; the secret is the part after the fixed host and path prefix.
- connection_string: RFC 3986 userinfo in URLs (postgres, mysql, mongodb+srv, redis, amqp), JDBC and .NET
  `Password=`, ODBC `PWD=`, Kafka SASL/PLAIN JAAS `password="..."`, `.netrc` (GNU inetutils); the secret is the
  password.
- http_auth: RFC 7617 Basic (the base64 credentials), RFC 6750 Bearer, RFC 6265 Cookie, `curl -u user:pass`,
  RFC 3986 userinfo (`https://user:pass@`), `X-API-Key`, DRF `Token`; the secret is the credential.
- New providers, none in an earlier corpus (kind = provider): doppler (Doppler docs "Token formats": `dp.pt.`,
  `dp.st.ENV.`, `dp.sa.`, `dp.ct.` + 40-43 base62), vercel (no documented format: 24 alnum as its docs show,
  labelled), supabase (Supabase docs: `sbp_` + 40 hex access tokens, `sb_secret_` API keys), postman (`PMAK-` + 24
  hex + `-` + 34 hex, as Postman shows them), atlassian (`ATATT3xFfGF0` + base64url + `=` + 8 hex, Atlassian
  "Manage API tokens"), grafana (Grafana docs: `glsa_` + 32 + `_` + 8 hex; Grafana Cloud `glc_` + base64 of JSON),
  figma (`figd_`, as Figma shows them), netlify (`nfp_` + 36, as Netlify shows them), heroku (Heroku changelog
  2024: `HRKU-` tokens; older UUID keys, labelled), cloudflare (no prefix: 40-char API tokens, labelled; Origin CA
  keys `v1.0-`), okta (`00` + 40, in `Authorization: SSWS`), newrelic (New Relic docs "API keys": `NRAK-` + 27,
  license keys 36 hex + `NRAL`), sentry (Sentry docs: `sntrys_` org tokens, `sntryu_` + 64 hex), databricks
  (Databricks docs: `dapi` + 32 hex), pulumi (`pul-` + 40 hex), flyio (`fo1_` + 43; `FlyV1 fm2_` macaroons, as
  flyctl prints them), render (`rnd_` + 32, as Render shows them), railway (UUIDs, labelled), airtable (Airtable
  docs: `pat` + 14 + `.` + 64 hex), notion (Notion docs: `secret_` + 43, `ntn_` + 11 digits + 35), asana (`1/` and
  `2/` personal access tokens, as Asana shows them), dropbox (`sl.` short-lived tokens, base64url), mapbox (Mapbox
  docs: `sk.` + base64url JSON + `.` + 22; the public `pk.` is a near miss).
- email, email_obfuscated: RFC 5322 addresses, RFC 6531 (internationalised), in RFC 5322 headers with display
  names and RFC 2047 encoded-word display names (decided: the address itself is never an encoded word, RFC 2047
  section 5 forbids it in an addr-spec, so the address stays literal beside an encoded name), quoted-printable
  `=40` (RFC 2045 6.7 lets any octet be encoded), `%40` (RFC 3986) and `\\u0040` (JSON) escapes. Obfuscated
  (`anna [at] example [dot] de`) is printed, not held to the target (`OUTSIDE_TARGET`).
- phone_XX: ITU-T E.164 and the national numbering plans (NANP; Ofcom's drama ranges for UK; Bundesnetzagentur
  (DE), ARCEP (FR), TRAI (IN), MIC (JP), Anatel (BR), IFT (MX), CNMC (ES), AGCOM (IT), ACMA (AU), KCC (KR), MIIT
  (CN), Rossvyaz (RU), Kominfo (ID), Ministry of Communications (IL), EETT (GR), CTU (CZ)), each with a context word.
- ssn: SSA rules since 2011 randomisation (area 001-899 but 666, group 01-99, serial 0001-9999).
- card: ISO/IEC 7812 IIN ranges of Visa, Mastercard (51-55, 2221-2720), Amex, Discover, JCB, Diners, UnionPay,
  Maestro, Mir, RuPay; Luhn check digit.
- iban: ISO 13616 with the SWIFT IBAN registry's BBAN structures of 30 countries; MOD 97-10.
- disguised: values of other kinds with Unicode format characters inside (U+200B/C/D, U+2060, U+FEFF), bidi
  controls (U+202A-202E, U+2066-2069), soft hyphen (U+00AD), NBSP/narrow NBSP separators (U+00A0, U+202F) or
  full-width forms (U+FF01-FF5E, folded by NFKC).

Near misses (`NEGATIVES`): invalid checksums, versions, build ids, UUIDs, SHAs, digests, SRI and ETags, times,
order/RMA/ticket/invoice/policy numbers, tracking numbers, SKUs and EAN/ISBNs, phone-like numbers with no context,
placeholders, masked values, `user@localhost`, scp-style git remotes, MIME Message-IDs (decided: a Message-ID is
not a mailbox, RFC 5322 3.6.4, so not an e-mail), file names and package specs with `@`, Kubernetes names and
labels, ARNs, public keys and publishable tokens, base64 of plain text.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import quopri
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import quote

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

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

SEED = 60606
PER_KIND = 104
NEGATIVES_PER_SORT = 12
HEX = "0123456789abcdef"
B64URL = string.ascii_letters + string.digits + "-_"
B64 = string.ascii_letters + string.digits + "+/"
UPPER_AN = string.ascii_uppercase + string.digits


@dataclass(frozen=True)
class Case:
    """One planted value: its kind, the value as written, the text that carries it, whether that text is a JSON
    document, and `carrier/style`."""

    kind: str
    secret: str
    carried: str
    is_json: bool
    form: str

    @property
    def text(self) -> str:
        return self.carried


@dataclass(frozen=True)
class Value:
    """A generated value: `full` is what the carrier writes, `secret` the part of it that must go (a password
    inside a connection string; mostly all of it), `name` an identifier-style name for it (`STRIPE_SECRET_KEY`),
    `words` a label for people in `lang`."""

    full: str
    secret: str
    style: str
    name: str
    words: str
    lang: str


Written = tuple[str, bool, Callable[[str], str]]
"""A carrier's output: the text, whether it is a JSON document, how it writes a piece of the value (QP, indent)."""
Carrier = Callable[[random.Random, Value], Written]


def same(s: str) -> str:
    return s


# ---- languages ------------------------------------------------------------------------------------------------

LANGS = ("de", "fr", "es", "it", "ja", "zh", "hi", "ru", "el", "he", "id", "cs", "en")
PASSWORD_WORDS = {"de": "Passwort", "fr": "mot de passe", "es": "contraseña", "it": "password", "ja": "パスワード",
                  "zh": "密码", "hi": "पासवर्ड", "ru": "пароль", "el": "κωδικός", "he": "סיסמה", "id": "kata sandi",
                  "cs": "heslo", "en": "password"}
KEY_WORDS = {"de": "API-Schlüssel", "fr": "clé API", "es": "clave de API", "it": "chiave API", "ja": "APIキー",
             "zh": "API密钥", "hi": "एपीआई कुंजी", "ru": "API-ключ", "el": "κλειδί API", "he": "מפתח API",
             "id": "kunci API", "cs": "API klíč", "en": "API key"}
PHONE_WORDS = {"de": "Telefon", "fr": "Tél.", "es": "Teléfono", "it": "Cellulare", "ja": "電話番号", "zh": "手机",
               "hi": "मोबाइल", "ru": "Телефон", "el": "Τηλέφωνο", "he": "טלפון", "id": "No. HP", "cs": "Telefon",
               "en": "Phone"}
EMAIL_WORDS = {"de": "E-Mail", "fr": "Courriel", "es": "Correo", "it": "E-mail", "ja": "メール", "zh": "邮箱",
               "hi": "ईमेल", "ru": "Эл. почта", "el": "Email", "he": "אימייל", "id": "Surel", "cs": "E-mail",
               "en": "Email"}
IS = {"de": "{l} ist {v}", "fr": "le {l} est {v}", "es": "la {l} es {v}", "it": "la {l} è {v}", "ja": "{l}は {v} です",
      "zh": "{l}是 {v}", "hi": "{l} {v} है", "ru": "{l} — {v}", "el": "ο {l} είναι {v}", "he": "ה{l} היא {v}",
      "id": "{l} nya {v}", "cs": "{l} je {v}", "en": "{l} is {v}"}
HELLO = {"de": "Hallo zusammen, wie besprochen die Daten:", "fr": "Bonjour, voici les informations demandées :",
         "es": "Hola, te paso los datos que pediste:", "it": "Ciao, ecco i dati richiesti:",
         "ja": "お世話になっております。以下ご確認ください。", "zh": "您好，以下是您要的信息：",
         "hi": "नमस्ते, मांगी गई जानकारी नीचे है:", "ru": "Здравствуйте, пересылаю данные:",
         "el": "Γεια σας, ακολουθούν τα στοιχεία:", "he": "שלום, מצרף את הפרטים:",
         "id": "Halo, berikut datanya:", "cs": "Dobrý den, posílám údaje:", "en": "Hi team, details below:"}
FIRST = ("anna", "jurgen", "camille", "lucia", "giulia", "haruto", "wei", "priya", "dmitri", "eleni", "noa",
         "budi", "tereza", "jack", "sofia", "mateo", "yuki", "olga", "ravi", "chloe")
LAST = ("schmidt", "muller", "dubois", "garcia", "rossi", "tanaka", "zhang", "sharma", "ivanov", "papadopoulou",
        "cohen", "santoso", "novakova", "smith", "ferreira", "lopez", "sato", "petrova", "patel", "martin")
DOMAINS = ("example.de", "example.fr", "beispiel-versicherung.de", "mail.example.co.jp", "example.com.br",
           "shop.example.es", "hr.example.it", "example.cz", "example.co.id", "example.co.il", "example.gr",
           "corp.example.com", "example.ru", "example.cn", "example.in", "support.gamestudio.example")
IDN = ("jürgen.müller@beispiel.de", "zoë@café.example.fr", "用户@例子.广告", "почта@пример.рф",
       "δοκιμή@παράδειγμα.δοκιμή", "राम@उदाहरण.भारत", "josé.núñez@correo.example.es", "ítalo@exemplo.com.br")


def lang_of(rng: random.Random) -> str:
    return rng.choice(LANGS)


# ---- carriers: SRE -------------------------------------------------------------------------------------------

def camel(name: str) -> str:
    head, *rest = name.lower().split("_")
    return head + "".join(p.capitalize() for p in rest)


def c_kubectl(rng: random.Random, v: Value) -> Written:
    pod = f"checkout-{pick(rng, HEX, 9)}-{pick(rng, 'bcdfghjklmnpqrstvwxz2456789', 5)}"
    text = (f"Name:             {pod}\nNamespace:        shop-prod\nPriority:         0\nNode:             "
            f"ip-10-0-{rng.randint(1, 250)}-{rng.randint(1, 250)}.eu-central-1.compute.internal\n"
            "Containers:\n  app:\n    Image:          registry.example.com/shop/checkout:2.14.1\n"
            "    Environment:\n      JAVA_OPTS:            -Xmx512m\n"
            f"      {v.name}:  {v.full}\n      LOG_LEVEL:            info\n"
            "    Mounts:\n      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-7x2bq (ro)\n")
    return text, False, same


def c_helm(rng: random.Random, v: Value) -> Written:
    key = camel(v.name)
    text = (f"replicaCount: {rng.randint(1, 6)}\nimage:\n  repository: ghcr.io/example/gameserver\n  tag: \"1.8.3\"\n"
            f"config:\n  region: eu-west\n  credentials:\n    {key}: \"{v.full}\"\n"
            "resources:\n  limits:\n    memory: 512Mi\n")
    return text, False, same


def c_ansible(rng: random.Random, v: Value) -> Written:
    host = f"db{rng.randint(1, 9)}.prod.example.internal"
    if rng.random() < 0.5:
        text = (f"[dbservers]\n{host} ansible_host=10.20.{rng.randint(0, 255)}.{rng.randint(1, 254)} "
                f"ansible_user=deploy {v.name.lower()}={v.full}\n\n[dbservers:vars]\nansible_port=22\n")
    else:
        text = (f"---\n# group_vars/all/main.yml\nntp_server: pool.ntp.org\napp_user: shop\n"
                f"{v.name.lower()}: {v.full}\nfirewall_allowed_ports: [22, 443]\n")
    return text, False, same


def c_compose(rng: random.Random, v: Value) -> Written:
    text = (f"services:\n  worker:\n    image: example/worker:{rng.randint(1, 9)}.{rng.randint(0, 30)}\n"
            f"    restart: unless-stopped\n    environment:\n      - TZ=Europe/Berlin\n      - {v.name}={v.full}\n"
            "    depends_on: [redis]\n")
    return text, False, same


def c_dotfile(rng: random.Random, v: Value) -> Written:
    section = rng.choice(["default", "profile ci", "pypi", "server", "distutils"])
    text = f"# ~/.config/{v.name.split('_')[0].lower()}rc\n[{section}]\nregion = eu-north-1\n" \
           f"{v.name.lower()} = {v.full}\noutput = json\n"
    return text, False, same


def c_properties(rng: random.Random, v: Value) -> Written:
    key = v.name.lower().replace("_", ".")
    text = (f"server.port=8{rng.randint(100, 999)}\nspring.application.name=orders\n{key}={v.full}\n"
            "management.endpoints.web.exposure.include=health,info\n")
    return text, False, same


def c_actuator(rng: random.Random, v: Value) -> Written:
    doc = {"activeProfiles": ["prod"], "propertySources": [
        {"name": "server.ports", "properties": {"local.server.port": {"value": 8080}}},
        {"name": "systemEnvironment", "properties": {
            "PATH": {"value": "/usr/local/sbin:/usr/local/bin", "origin": "System Environment Property \"PATH\""},
            v.name: {"value": v.full, "origin": f"System Environment Property \"{v.name}\""}}}]}
    return json.dumps(doc, ensure_ascii=False, indent=rng.choice([None, 2])), True, same


def c_logfmt(rng: random.Random, v: Value) -> Written:
    text = (f"ts=2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T08:{rng.randint(10, 59)}:02.114Z level=warn "
            f"caller=client.go:{rng.randint(40, 400)} msg=\"upstream rejected credentials\" "
            f"{v.name.lower()}={v.full} attempt={rng.randint(1, 5)}")
    return text, False, same


def c_webconfig(rng: random.Random, v: Value) -> Written:
    key = "".join(p.capitalize() for p in v.name.lower().split("_"))
    text = ("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<configuration>\n  <appSettings>\n"
            "    <add key=\"Environment\" value=\"Production\" />\n"
            f"    <add key=\"{key}\" value=\"{v.full}\" />\n  </appSettings>\n</configuration>\n")
    return text, False, same


def c_soap(rng: random.Random, v: Value) -> Written:
    tag = "".join(p.capitalize() for p in v.name.lower().split("_"))
    text = ("<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\" "
            "xmlns:pol=\"http://insurer.example.com/policy\">\n  <soapenv:Body>\n    <pol:UpdateContact>\n"
            f"      <pol:PolicyNo>PL-{digits(rng, 8)}</pol:PolicyNo>\n      <pol:{tag}>{v.full}</pol:{tag}>\n"
            "    </pol:UpdateContact>\n  </soapenv:Body>\n</soapenv:Envelope>")
    return text, False, same


def c_winevent(rng: random.Random, v: Value) -> Written:
    text = (f"Log Name:      Security\nSource:        Microsoft-Windows-Security-Auditing\nEvent ID:      4688\n"
            f"Task Category: Process Creation\nLevel:         Information\nComputer:      HR-APP{rng.randint(1, 9)}"
            ".corp.example.local\nDescription:\nA new process has been created.\n\nProcess Information:\n"
            "\tNew Process Name:\tC:\\Program Files\\Sync\\sync.exe\n"
            f"\tProcess Command Line:\t\"sync.exe\" --{v.name.lower().replace('_', '-')} {v.full} --quiet\n")
    return text, False, same


def c_java_tostring(rng: random.Random, v: Value) -> Written:
    text = (f"DEBUG o.e.integration.Client - built config IntegrationConfig{{endpoint='https://api.example.com', "
            f"{camel(v.name)}='{v.full}', timeoutMs={rng.randint(1, 30) * 1000}, retries=3}}")
    return text, False, same


def c_go_dump(rng: random.Random, v: Value) -> Written:
    field = "".join(p.capitalize() for p in v.name.lower().split("_"))
    text = (f"2024/05/0{rng.randint(1, 9)} 10:11:12 config: &{{Addr::{rng.randint(8000, 9000)} {field}:{v.full} "
            f"Timeout:30s Debug:true}}")
    return text, False, same


def c_rust_debug(rng: random.Random, v: Value) -> Written:
    text = (f"[2024-06-1{rng.randint(0, 9)}T09:00:00Z DEBUG worker] settings = Settings {{\n    region: \"eu\",\n"
            f"    {v.name.lower()}: \"{v.full}\",\n    pool_size: {rng.randint(2, 32)},\n}}")
    return text, False, same


def c_ruby_inspect(rng: random.Random, v: Value) -> Written:
    text = (f"#<Integration::Settings:0x0000{pick(rng, HEX, 12)} @shop=\"store-{rng.randint(10, 99)}\", "
            f"@{v.name.lower()}=\"{v.full}\", @sandbox=false>")
    return text, False, same


def c_php_dump(rng: random.Random, v: Value) -> Written:
    text = (f"array(3) {{\n  [\"host\"]=>\n  string(15) \"api.example.com\"\n  [\"{v.name.lower()}\"]=>\n"
            f"  string({len(v.full.encode())}) \"{v.full}\"\n  [\"port\"]=>\n  int({rng.randint(80, 9000)})\n}}")
    return text, False, same


def c_py_repr(rng: random.Random, v: Value) -> Written:
    text = (f"Traceback (most recent call last):\n  File \"sync.py\", line {rng.randint(10, 300)}, in run\n"
            f"ValueError: rejected: ProviderConfig(name='billing', {v.name.lower()}='{v.full}', "
            "verify_tls=True)")
    return text, False, same


def c_graphql(rng: random.Random, v: Value) -> Written:
    doc = {"data": {"integration": {"id": f"gid://shop/Integration/{rng.randint(1000, 9999)}",
                                    "settings": {camel(v.name): v.full, "enabled": True}}},
           "extensions": {"cost": {"requestedQueryCost": rng.randint(1, 50)}}}
    return json.dumps(doc, ensure_ascii=False), True, same


def c_protobuf(rng: random.Random, v: Value) -> Written:
    text = (f"request_id: \"{uuid.UUID(int=rng.getrandbits(128))}\"\nintegration {{\n  kind: WEBSHOP\n"
            f"  {v.name.lower()}: \"{v.full}\"\n}}\nretries: {rng.randint(0, 4)}\n")
    return text, False, same


def c_curl_v(rng: random.Random, v: Value) -> Written:
    text = (f"*   Trying 203.0.113.{rng.randint(1, 254)}:443...\n* Connected to api.example.com port 443\n"
            f"> POST /v2/sync HTTP/2\n> Host: api.example.com\n> user-agent: curl/8.5.0\n"
            f"> x-{v.name.lower().replace('_', '-')}: {v.full}\n> accept: */*\n>\n< HTTP/2 401\n"
            "< content-type: application/json\n")
    return text, False, same


def c_shell_history(rng: random.Random, v: Value) -> Written:
    n = rng.randint(100, 2000)
    quote_mark = rng.choice(["", "'", '"'])
    text = (f"  {n}  cd ~/deploy\n  {n + 1}  export {v.name}={quote_mark}{v.full}{quote_mark}\n"
            f"  {n + 2}  ./release.sh --env prod\n")
    return text, False, same


# ---- carriers: e-commerce and gaming ---------------------------------------------------------------------------

def c_zendesk(rng: random.Random, v: Value) -> Written:
    said = IS[v.lang].format(l=v.words, v=v.full)
    text = (f"Ticket #{rng.randint(100000, 999999)} · Priority: normal · Via: Web Widget\n"
            f"Customer wrote:\n{HELLO[v.lang]}\n{said}\n\n"
            "Macro applied: [Security] Credentials shared in ticket - rotate and redact")
    return text, False, same


def c_discord(rng: random.Random, v: Value) -> Written:
    text = (f"[2024-07-{rng.randint(10, 28)} 21:{rng.randint(10, 59)}] ModBot: message by player_{rng.randint(1, 9999)}"
            f" (id {digits(rng, 18)}) deleted in #support: \"{v.words} {v.full} pls help\"\n"
            "[action] timeout 10m, reason: sharing credentials")
    return text, False, same


def c_rcon(rng: random.Random, v: Value) -> Written:
    text = (f"[{rng.randint(10, 23)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}] [Server thread/INFO]: "
            f"Rcon issued server command: /config set {v.name.lower()} {v.full}\n"
            f"[{rng.randint(10, 23)}:00:01] [Server thread/INFO]: Saved the game")
    return text, False, same


def c_shopify_csv(rng: random.Random, v: Value) -> Written:
    text = (f"Handle,Title,Vendor,Published,{v.words},Status\n"
            f"hoodie-{rng.randint(1, 99)},\"Hoodie, black\",Example Merch,true,{v.full},active\n")
    return text, False, same


# ---- carriers: HR, legal, insurance ----------------------------------------------------------------------------

def qp(text: str) -> str:
    return quopri.encodestring(text.encode()).decode()


def qp40(text: str) -> str:
    """Quoted-printable with `@` written `=40` (RFC 2045 6.7 rule 1 allows any octet encoded)."""
    return qp(text).replace("@", "=40")


def c_mime_qp(rng: random.Random, v: Value) -> Written:
    line = f"{v.words}: {v.full}"
    enc = qp40 if "@" in v.full and rng.random() < 0.5 else qp
    if "=\n" in enc(line) or "=\n" in enc(v.secret):
        body, cte, transform = line + "\n", "8bit", same
    else:
        body, cte, transform = enc(HELLO[v.lang] + "\n" + line + "\n"), "quoted-printable", enc
    text = (f"Return-Path: <hr-bounces@example.de>\nMessage-ID: <{pick(rng, HEX, 16)}@mail.example.de>\n"
            f"Date: Tue, 1{rng.randint(0, 9)} Sep 2024 09:14:03 +0200\nFrom: Personalabteilung <hr@example.de>\n"
            "To: Versicherung <claims@example.com>\nSubject: Zugang / access\nMIME-Version: 1.0\n"
            "Content-Type: text/plain; charset=\"utf-8\"\n"
            f"Content-Transfer-Encoding: {cte}\n\n{body}")
    return text, False, transform


def c_eml_forward(rng: random.Random, v: Value) -> Written:
    depth = rng.randint(1, 3)
    q = "> " * depth

    def quoted(s: str) -> str:
        return s.replace("\n", "\n" + q)

    inner = f"{HELLO[v.lang]}\n{v.words}: {v.full}\n"
    text = ("---------- Forwarded message ---------\nFrom: Legal <legal@example.fr>\n"
            f"Date: Mon, 2 Sep 2024\nSubject: Fwd: Fwd: dossier {rng.randint(1000, 9999)}\n\n"
            f"See below.\n\n{q}On Fri, 30 Aug 2024, claims wrote:\n{q}{quoted(inner).rstrip()}\n")
    return text, False, quoted


def c_excel_csv(rng: random.Random, v: Value) -> Written:
    text = (f"\"Nr.\";\"Name\";\"{v.words}\";\"Abteilung\"\n"
            f"\"{rng.randint(1, 400)}\";\"{rng.choice(LAST).capitalize()}, {rng.choice(FIRST).capitalize()}\";"
            f"\"{v.full}\";\"Schadenregulierung\"\n")
    return text, False, same


def c_word_table(rng: random.Random, v: Value) -> Written:
    name = f"{rng.choice(FIRST).capitalize()} {rng.choice(LAST).capitalize()}"
    text = (f"Anlage 2 - Stammdaten\n\nName\t{v.words}\tStand\n{name}\t{v.full}\t0{rng.randint(1, 9)}.2024\n"
            "\nBitte vertraulich behandeln.")
    return text, False, same


def c_ocr_form(rng: random.Random, v: Value) -> Written:
    spaced = "  ".join(v.words) if rng.random() < 0.5 else v.words.upper()
    text = (f"ANTRAG  AUF  LEISTUNGEN   Seite 1/3\n\nVersicherungsnr.  :  VN {digits(rng, 9)}\n"
            f"{spaced}  :   {v.full}\nUnterschrift: ____________   Datum: {rng.randint(1, 28)}. 0{rng.randint(1, 9)}"
            " 2024\n")
    return text, False, same


SRE = (c_kubectl, c_helm, c_ansible, c_compose, c_dotfile, c_properties, c_actuator, c_logfmt, c_webconfig,
       c_soap, c_winevent, c_java_tostring, c_go_dump, c_rust_debug, c_ruby_inspect, c_php_dump, c_py_repr,
       c_graphql, c_protobuf, c_curl_v, c_shell_history)
PEOPLE = (c_zendesk, c_discord, c_rcon, c_shopify_csv, c_mime_qp, c_eml_forward, c_excel_csv, c_word_table,
          c_ocr_form)
DATA = (c_soap, c_java_tostring, c_go_dump, c_ruby_inspect, c_php_dump, c_py_repr, c_graphql, c_protobuf,
        c_logfmt)


def c_indented_yaml(rng: random.Random, v: Value) -> Written:
    """A multi-line value in a Kubernetes Secret's stringData block scalar (each line indented)."""
    pad = "    "
    text = (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls-{rng.randint(1, 99)}\n  namespace: platform\n"
            f"type: Opaque\nstringData:\n  {v.name.lower()}: |\n{pad}{v.full.replace(chr(10), chr(10) + pad)}\n")
    return text, False, lambda s: s.replace("\n", "\n" + pad)


def c_raw_multiline(rng: random.Random, v: Value) -> Written:
    text = f"$ cat ~/.ssh/{v.name.lower()}\n{v.full}\n$ chmod 600 ~/.ssh/{v.name.lower()}\n"
    return text, False, same


def c_json_escaped_log(rng: random.Random, v: Value) -> Written:
    text = "{\"level\":\"debug\",\"msg\":\"loaded key\",\"" + v.name.lower() + "\":" + json.dumps(v.full) + "}"
    return text, True, same


MULTILINE = (c_indented_yaml, c_raw_multiline, c_json_escaped_log, c_actuator, c_graphql, c_eml_forward,
             c_mime_qp, c_php_dump, c_zendesk, c_word_table)


# ---- values: secrets -------------------------------------------------------------------------------------------

def pw_value(rng: random.Random) -> tuple[str, str]:
    style = rng.choice(["season", "random", "passphrase", "leet", "hex", "unicode"])
    if style == "season":
        word = rng.choice(["Sommer", "Printemps", "Invierno", "Autunno", "Winter", "Primavera"])
        return f"{word}{rng.randint(2019, 2025)}{rng.choice('!#$?*')}", style
    if style == "random":
        return pick(rng, string.ascii_letters + string.digits + "!#$%*+-.?@_~^", rng.randint(10, 20)), style
    if style == "passphrase":
        words = ["correct", "pferd", "batterie", "agrafe", "nube", "gatto", "kirsche", "tiger", "lampe", "voda"]
        return "-".join(rng.choice(words) for _ in range(4)) + str(rng.randint(1, 99)), style
    if style == "leet":
        city = rng.choice(["Berl1n", "P@ris", "M4drid", "R0ma", "T0ky0", "Pr@ha", "Ath3ns", "J4karta"])
        return f"{city}{rng.choice('!?#')}{digits(rng, 4)}{rng.choice('$%*')}", style
    if style == "hex":
        return pick(rng, HEX, 24), style
    base = rng.choice(["Größe", "Contraseña", "Пароль", "Κλειδί", "Heslíčko", "Ünïcode"])
    return f"{base}#{digits(rng, 3)}{pick(rng, string.ascii_letters, 3)}", style


PASSWORD_NAMES = ("DB_PASSWORD", "MYSQL_ROOT_PASSWORD", "RCON_PASSWORD", "SMTP_PASS", "ANSIBLE_BECOME_PASS",
                  "KEYSTORE_PASSWORD", "ADMIN_PWD", "LDAP_BIND_PASSWD", "REDIS_AUTH", "SFTP_PASSWORT")


def password(rng: random.Random) -> Value:
    value, style = pw_value(rng)
    lang = lang_of(rng)
    words = PASSWORD_WORDS[lang]
    if rng.random() < 0.25:
        words = rng.choice(["pw", "PW", "pwd", "Pass", "Kennwort", "mdp", "пароль от входа", "暗証番号"])
    return Value(value, value, style, rng.choice(PASSWORD_NAMES), words, lang)


def secret(rng: random.Random) -> Value:
    style = rng.choice(["django", "laravel", "hmac_hex", "client_secret", "jwt_secret", "fernet"])
    if style == "django":
        value = "django-insecure-" * (rng.random() < 0.3) + pick(rng, string.ascii_lowercase + string.digits
                                                                  + "!@#%^*(-_+)", 50)
        name = "DJANGO_SECRET_KEY"
    elif style == "laravel":
        value, name = "base64:" + base64.b64encode(rng.randbytes(32)).decode(), "APP_KEY"
    elif style == "hmac_hex":
        value, name = pick(rng, HEX, 64), "WEBHOOK_SIGNING_SECRET"
    elif style == "client_secret":
        value, name = pick(rng, B62 + "~._-", 40), "OAUTH_CLIENT_SECRET"
    elif style == "jwt_secret":
        value, name = pick(rng, B62, 48), "JWT_SECRET"
    else:
        value, name = base64.urlsafe_b64encode(rng.randbytes(32)).decode(), "FERNET_KEY"
    lang = lang_of(rng)
    words = rng.choice(["Secret", "client secret", "Geheimnis", "clé secrète", "секретный ключ", "秘密鍵", "密钥"])
    return Value(value, value, style, name, words, lang)


def aws_pair(rng: random.Random) -> tuple[str, str]:
    key_id = rng.choice(["AKIA", "ASIA"]) + pick(rng, string.ascii_uppercase + "234567", 16)
    return key_id, pick(rng, B64, 40)


def aws_text(rng: random.Random, key_id: str, secret_key: str) -> tuple[str, bool, str]:
    """An AWS key pair the way one of ten producers writes both halves; the style names it."""
    style = rng.choice(["credentials_ini", "export_json", "env", "properties", "go_creds", "java_tostring",
                        "boto_debug", "ansible", "compose", "aws_configure"])
    if style == "credentials_ini":
        text = (f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret_key}\n"
                "region = eu-central-1\n")
    elif style == "export_json":
        return json.dumps({"Version": 1, "AccessKeyId": key_id, "SecretAccessKey": secret_key,
                           "Expiration": "2024-09-01T12:00:00+00:00"}, indent=2), True, style
    elif style == "env":
        text = f"AWS_ACCESS_KEY_ID={key_id}\nAWS_SECRET_ACCESS_KEY={secret_key}\nAWS_DEFAULT_REGION=us-east-1\n"
    elif style == "properties":
        text = (f"cloud.aws.credentials.access-key={key_id}\ncloud.aws.credentials.secret-key={secret_key}\n"
                "cloud.aws.region.static=eu-west-1\n")
    elif style == "go_creds":
        text = (f"creds: {{AccessKeyID:{key_id} SecretAccessKey:{secret_key} SessionToken: "
                "Source:EnvConfigCredentials CanExpire:false}")
    elif style == "java_tostring":
        text = f"S3Client built with StaticCredentials[accessKeyId={key_id}, secretAccessKey={secret_key}]"
    elif style == "boto_debug":
        text = (f"2024-05-01 10:00:00,123 botocore.credentials [DEBUG] Found credentials in shared file: "
                f"key={key_id} secret={secret_key}")
    elif style == "ansible":
        text = f"aws_access_key: \"{key_id}\"\naws_secret_key: \"{secret_key}\"\naws_region: ap-southeast-1\n"
    elif style == "compose":
        text = (f"    environment:\n      AWS_ACCESS_KEY_ID: {key_id}\n      AWS_SECRET_ACCESS_KEY: {secret_key}\n")
    else:
        text = (f"$ aws configure\nAWS Access Key ID [None]: {key_id}\nAWS Secret Access Key [None]: {secret_key}\n"
                "Default region name [None]: eu-central-1\n")
    return text, False, style


# ---- values: provider tokens -----------------------------------------------------------------------------------

TokenGen = Callable[[random.Random], tuple[str, str]]


def styled(*options: tuple[str, Callable[[random.Random], str]]) -> TokenGen:
    def gen(rng: random.Random) -> tuple[str, str]:
        style, make = rng.choice(options)
        return make(rng), style
    return gen


def pypi_token(rng: random.Random) -> str:
    macaroon = b"\x02\x01\x08pypi.org\x02\x25\x00" + rng.randbytes(36) + b"\x00\x02\x2a" + rng.randbytes(80)
    return "pypi-" + b64url(macaroon)


def grafana_cloud(rng: random.Random) -> str:
    body = json.dumps({"o": str(rng.randint(100000, 999999)), "n": f"stack-{rng.randint(1, 999)}-token",
                       "k": pick(rng, B62, 32), "m": {"r": rng.choice(["eu", "us", "au"])}}, separators=(",", ":"))
    return "glc_" + base64.b64encode(body.encode()).decode()


def sentry_org(rng: random.Random) -> str:
    body = json.dumps({"iat": rng.randint(1700000000, 1730000000), "url": "https://sentry.io",
                       "region_url": "https://de.sentry.io", "org": f"shop-{rng.randint(1, 99)}"},
                      separators=(",", ":"))
    return "sntrys_" + base64.b64encode(body.encode()).decode().rstrip("=") + "_" + pick(rng, B64URL, 43)


def mapbox_secret(rng: random.Random) -> str:
    body = b64url(json.dumps({"u": f"studio{rng.randint(1, 999)}", "a": pick(rng, string.ascii_lowercase
                                                                              + string.digits, 25)}).encode())
    return f"sk.{body}.{pick(rng, B64URL, 22)}"


TOKENS: dict[str, tuple[tuple[str, ...], str, TokenGen]] = {
    "github": (("GITHUB_TOKEN", "GH_PAT", "HOMEBREW_GITHUB_API_TOKEN"), "GitHub token", styled(
        ("ghp", lambda r: crc_token(r, "ghp_")), ("gho", lambda r: crc_token(r, "gho_")),
        ("ghs", lambda r: crc_token(r, "ghs_")), ("ghu", lambda r: crc_token(r, "ghu_")),
        ("github_pat", lambda r: f"github_pat_{pick(r, B62, 22)}_{pick(r, B62, 59)}"))),
    "gitlab": (("GITLAB_TOKEN", "CI_JOB_TOKEN_OVERRIDE", "GL_DEPLOY_TOKEN"), "GitLab token", styled(
        ("glpat", lambda r: "glpat-" + pick(r, B64URL, 20)), ("gldt", lambda r: "gldt-" + pick(r, B64URL, 20)),
        ("glrt", lambda r: "glrt-" + pick(r, B64URL, 20)), ("glptt", lambda r: "glptt-" + pick(r, HEX, 40)))),
    "slack_token": (("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_USER_TOKEN"), "Slack token", styled(
        ("xoxb", lambda r: f"xoxb-{digits(r, 12)}-{digits(r, 13)}-{pick(r, B62, 24)}"),
        ("xoxp", lambda r: f"xoxp-{digits(r, 12)}-{digits(r, 12)}-{digits(r, 13)}-{pick(r, HEX, 32)}"),
        ("xapp", lambda r: f"xapp-1-A{pick(r, UPPER_AN, 10)}-{digits(r, 13)}-{pick(r, HEX, 64)}"),
        ("xoxe", lambda r: f"xoxe.xoxp-1-{pick(r, B62, 140)}"))),
    "stripe": (("STRIPE_SECRET_KEY", "STRIPE_RESTRICTED_KEY", "STRIPE_WEBHOOK_SECRET"), "Stripe key", styled(
        ("sk_live", lambda r: "sk_live_" + pick(r, B62, r.choice([24, 99]))),
        ("rk_live", lambda r: "rk_live_" + pick(r, B62, r.choice([24, 99]))),
        ("whsec", lambda r: "whsec_" + pick(r, B62, 32)))),
    "openai": (("OPENAI_API_KEY", "AZURE_OPENAI_FALLBACK_KEY"), "OpenAI key", styled(
        ("sk-proj", lambda r: f"sk-proj-{pick(r, B64URL, 74)}T3BlbkFJ{pick(r, B64URL, 74)}"),
        ("sk-svcacct", lambda r: f"sk-svcacct-{pick(r, B64URL, 74)}T3BlbkFJ{pick(r, B64URL, 74)}"),
        ("sk-admin", lambda r: f"sk-admin-{pick(r, B64URL, 74)}T3BlbkFJ{pick(r, B64URL, 74)}"),
        ("legacy", lambda r: f"sk-{pick(r, B62, 20)}T3BlbkFJ{pick(r, B62, 20)}"))),
    "anthropic": (("ANTHROPIC_API_KEY", "CLAUDE_KEY"), "Anthropic key", styled(
        ("api03", lambda r: f"sk-ant-api03-{pick(r, B64URL, 93)}AA"),
        ("admin01", lambda r: f"sk-ant-admin01-{pick(r, B64URL, 93)}AA"))),
    "google": (("GOOGLE_API_KEY", "GOOGLE_CLIENT_SECRET", "GCP_ACCESS_TOKEN"), "Google key", styled(
        ("AIza", lambda r: "AIza" + pick(r, B64URL, 35)), ("GOCSPX", lambda r: "GOCSPX-" + pick(r, B64URL, 28)),
        ("ya29", lambda r: "ya29." + pick(r, B64URL, 150)))),
    "twilio": (("TWILIO_AUTH_TOKEN", "TWILIO_API_SECRET"), "Twilio token", styled(
        ("auth_token", lambda r: pick(r, HEX, 32)), ("api_secret", lambda r: pick(r, B62, 32)))),
    "sendgrid": (("SENDGRID_API_KEY", "SMTP_RELAY_KEY"), "SendGrid key", styled(
        ("SG", lambda r: f"SG.{pick(r, B64URL, 22)}.{pick(r, B64URL, 43)}"),)),
    "npm": (("NPM_TOKEN", "NODE_AUTH_TOKEN"), "npm token", styled(("npm", lambda r: crc_token(r, "npm_")),)),
    "pypi": (("PYPI_TOKEN", "TWINE_PASSWORD", "UV_PUBLISH_TOKEN"), "PyPI token", styled(("pypi", pypi_token),)),
    "huggingface": (("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"), "Hugging Face token", styled(
        ("hf", lambda r: "hf_" + pick(r, string.ascii_letters, 34)),)),
    "datadog": (("DD_API_KEY", "DD_APP_KEY", "DATADOG_APPLICATION_KEY"), "Datadog key", styled(
        ("api", lambda r: pick(r, HEX, 32)), ("app", lambda r: pick(r, HEX, 40)))),
    "azure_storage": (("AZURE_STORAGE_KEY", "STORAGE_ACCOUNT_KEY"), "Azure storage key", styled(
        ("account_key", lambda r: base64.b64encode(r.randbytes(64)).decode()),)),
    "shopify": (("SHOPIFY_ACCESS_TOKEN", "SHOPIFY_API_SECRET"), "Shopify token", styled(
        ("shpat", lambda r: "shpat_" + pick(r, HEX, 32)), ("shpca", lambda r: "shpca_" + pick(r, HEX, 32)),
        ("shppa", lambda r: "shppa_" + pick(r, HEX, 32)), ("shpss", lambda r: "shpss_" + pick(r, HEX, 32)))),
    "mailgun": (("MAILGUN_API_KEY", "MG_KEY"), "Mailgun key", styled(
        ("key", lambda r: "key-" + pick(r, HEX, 32)),
        ("new", lambda r: f"{pick(r, HEX, 32)}-{pick(r, HEX, 8)}-{pick(r, HEX, 8)}"))),
    "digitalocean": (("DIGITALOCEAN_TOKEN", "DO_SPACES_OAUTH"), "DigitalOcean token", styled(
        ("dop", lambda r: "dop_v1_" + pick(r, HEX, 64)), ("doo", lambda r: "doo_v1_" + pick(r, HEX, 64)),
        ("dor", lambda r: "dor_v1_" + pick(r, HEX, 64)))),
    "linear": (("LINEAR_API_KEY", "LINEAR_OAUTH_TOKEN"), "Linear key", styled(
        ("lin_api", lambda r: "lin_api_" + pick(r, B62, 40)),
        ("lin_oauth", lambda r: "lin_oauth_" + pick(r, HEX, 64)))),
    "doppler": (("DOPPLER_TOKEN", "DOPPLER_SERVICE_TOKEN"), "Doppler token", styled(
        ("dp.pt", lambda r: "dp.pt." + pick(r, B62, 43)),
        ("dp.st", lambda r: f"dp.st.{r.choice(['prd', 'dev', 'stg'])}.{pick(r, B62, 40)}"),
        ("dp.sa", lambda r: "dp.sa." + pick(r, B62, 43)), ("dp.ct", lambda r: "dp.ct." + pick(r, B62, 43)))),
    "vercel": (("VERCEL_TOKEN", "VERCEL_API_TOKEN"), "Vercel token", styled(
        ("plain24", lambda r: pick(r, B62, 24)),)),
    "supabase": (("SUPABASE_ACCESS_TOKEN", "SUPABASE_SECRET_KEY"), "Supabase key", styled(
        ("sbp", lambda r: "sbp_" + pick(r, HEX, 40)), ("sb_secret", lambda r: "sb_secret_" + pick(r, B64URL, 31)))),
    "postman": (("POSTMAN_API_KEY",), "Postman key", styled(
        ("PMAK", lambda r: f"PMAK-{pick(r, HEX, 24)}-{pick(r, HEX, 34)}"),)),
    "atlassian": (("JIRA_API_TOKEN", "CONFLUENCE_TOKEN", "ATLASSIAN_API_TOKEN"), "Atlassian API token", styled(
        ("ATATT", lambda r: f"ATATT3xFfGF0{pick(r, B64URL, 170)}={pick(r, HEX.upper(), 8)}"),)),
    "grafana": (("GRAFANA_SERVICE_ACCOUNT_TOKEN", "GRAFANA_CLOUD_TOKEN"), "Grafana token", styled(
        ("glsa", lambda r: f"glsa_{pick(r, B62, 32)}_{pick(r, HEX, 8)}"), ("glc", grafana_cloud))),
    "figma": (("FIGMA_TOKEN",), "Figma token", styled(("figd", lambda r: "figd_" + pick(r, B64URL, 40)),)),
    "netlify": (("NETLIFY_AUTH_TOKEN",), "Netlify token", styled(("nfp", lambda r: "nfp_" + pick(r, B62, 36)),)),
    "heroku": (("HEROKU_API_KEY",), "Heroku API key", styled(
        ("HRKU", lambda r: "HRKU-AA" + pick(r, B64URL, 58)),
        ("uuid", lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4))))),
    "cloudflare": (("CLOUDFLARE_API_TOKEN", "CF_ORIGIN_CA_KEY", "CF_API_KEY"), "Cloudflare token", styled(
        ("api_token", lambda r: pick(r, B64URL, 40)), ("origin_ca", lambda r: f"v1.0-{pick(r, HEX, 24)}-"
                                                                           f"{pick(r, HEX, 146)}"),
        ("global_key", lambda r: pick(r, HEX, 37)))),
    "okta": (("OKTA_API_TOKEN", "OKTA_CLIENT_TOKEN"), "Okta token", styled(
        ("ssws", lambda r: "00" + pick(r, B64URL, 40)),)),
    "newrelic": (("NEW_RELIC_API_KEY", "NEW_RELIC_LICENSE_KEY", "NEW_RELIC_INSERT_KEY"), "New Relic key", styled(
        ("NRAK", lambda r: "NRAK-" + pick(r, UPPER_AN, 27)), ("NRII", lambda r: "NRII-" + pick(r, B64URL, 32)),
        ("license", lambda r: pick(r, HEX, 36) + "NRAL"))),
    "sentry": (("SENTRY_AUTH_TOKEN",), "Sentry token", styled(
        ("sntrys", sentry_org), ("sntryu", lambda r: "sntryu_" + pick(r, HEX, 64)))),
    "databricks": (("DATABRICKS_TOKEN",), "Databricks token", styled(
        ("dapi", lambda r: "dapi" + pick(r, HEX, 32) + r.choice(["", "-2", "-3"])),)),
    "pulumi": (("PULUMI_ACCESS_TOKEN",), "Pulumi token", styled(("pul", lambda r: "pul-" + pick(r, HEX, 40)),)),
    "flyio": (("FLY_API_TOKEN", "FLY_ACCESS_TOKEN"), "Fly.io token", styled(
        ("fo1", lambda r: "fo1_" + pick(r, B64URL, 43)),
        ("fm2", lambda r: "FlyV1 fm2_" + base64.b64encode(r.randbytes(180)).decode()))),
    "render": (("RENDER_API_KEY",), "Render key", styled(("rnd", lambda r: "rnd_" + pick(r, B62, 32)),)),
    "railway": (("RAILWAY_TOKEN", "RAILWAY_API_TOKEN"), "Railway token", styled(
        ("uuid", lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4))),)),
    "airtable": (("AIRTABLE_API_KEY", "AIRTABLE_PAT"), "Airtable token", styled(
        ("pat", lambda r: f"pat{pick(r, B62, 14)}.{pick(r, HEX, 64)}"),)),
    "notion": (("NOTION_TOKEN", "NOTION_API_KEY"), "Notion token", styled(
        ("secret", lambda r: "secret_" + pick(r, B62, 43)),
        ("ntn", lambda r: f"ntn_{digits(r, 11)}{pick(r, B62, 35)}"))),
    "asana": (("ASANA_ACCESS_TOKEN", "ASANA_PAT"), "Asana token", styled(
        ("v1", lambda r: f"1/{digits(r, 16)}:{pick(r, HEX, 32)}"),
        ("v2", lambda r: f"2/{digits(r, 16)}/{digits(r, 16)}:{pick(r, HEX, 32)}"))),
    "dropbox": (("DROPBOX_ACCESS_TOKEN",), "Dropbox token", styled(
        ("sl", lambda r: "sl." + pick(r, B64URL, 138)), ("sl.u", lambda r: "sl.u." + pick(r, B64URL, 160)))),
    "mapbox": (("MAPBOX_SECRET_TOKEN", "MAPBOX_DOWNLOADS_TOKEN"), "Mapbox secret token", styled(
        ("sk", mapbox_secret),)),
}


def token_value(kind: str) -> Callable[[random.Random], Value]:
    names, words, gen = TOKENS[kind]

    def make(rng: random.Random) -> Value:
        value, style = gen(rng)
        lang = lang_of(rng)
        label = words if rng.random() < 0.5 else f"{words} ({KEY_WORDS[lang]})"
        return Value(value, value, style, rng.choice(names), label, lang)
    return make


def twilio_text(rng: random.Random, v: Value, carrier: Carrier) -> Written:
    """Twilio's secret is carried with its SID in front (`AC…` account or `SK…` API key), as its clients write."""
    sid = ("AC" if v.style == "auth_token" else "SK") + pick(rng, HEX, 32)
    pair = Value(f"{sid}:{v.full}", v.secret, v.style, "TWILIO_CREDENTIALS", v.words, v.lang)
    return carrier(rng, pair)


def azure_sas(rng: random.Random) -> Value:
    sig = quote(base64.b64encode(rng.randbytes(32)).decode(), safe="")
    account = f"stshop{pick(rng, string.ascii_lowercase + string.digits, 8)}"
    full = (f"https://{account}.blob.core.windows.net/invoices?sv=2022-11-02&ss=b&srt=co&sp=rl"
            f"&se=2025-01-01T00:00:00Z&st=2024-01-01T00:00:00Z&spr=https&sig={sig}")
    return Value(full, sig, "sas_sig", "AZURE_SAS_URL", "SAS URL", lang_of(rng))


def azure_conn(rng: random.Random) -> Value:
    key = base64.b64encode(rng.randbytes(64)).decode()
    full = (f"DefaultEndpointsProtocol=https;AccountName=st{pick(rng, string.ascii_lowercase, 10)};"
            f"AccountKey={key};EndpointSuffix=core.windows.net")
    return Value(full, key, "conn_string", "AZURE_STORAGE_CONNECTION_STRING", "Storage connection", lang_of(rng))


# ---- values: structured secrets --------------------------------------------------------------------------------

def armour(label: str, der_bytes: bytes) -> tuple[str, str]:
    body = "\n".join(group(base64.b64encode(der_bytes).decode(), 64, "\n").split("\n"))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----", body


def rsa_pkcs1(rng: random.Random) -> bytes:
    def big(bits: int) -> int:
        return rng.getrandbits(bits) | (1 << (bits - 1)) | 1
    n, p, q = big(2048), big(1024), big(1024)
    return der_seq(der_int(0), der_int(n), der_int(65537), der_int(big(2048)), der_int(p), der_int(q),
                   der_int(big(1024)), der_int(big(1024)), der_int(big(1024)))


def pem_key(rng: random.Random) -> tuple[str, str, str]:
    """A private key in PEM: (whole block, its base64 body, style)."""
    style = rng.choice(["rsa_pkcs1", "ec_sec1", "pkcs8_ec", "openssh"])
    if style == "rsa_pkcs1":
        block, body = armour("RSA PRIVATE KEY", rsa_pkcs1(rng))
    elif style == "openssh":
        seed = rng.randbytes(32)
        public = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), f"deploy@ci-{rng.randint(1, 99)}".encode())
        body = "\n".join(group(base64.b64encode(blob).decode(), 70, "\n").split("\n"))
        block = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
    else:
        key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
        fmt = serialization.PrivateFormat.TraditionalOpenSSL if style == "ec_sec1" else \
            serialization.PrivateFormat.PKCS8
        block = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()
        body = "\n".join(block.splitlines()[1:-1])
    return block, body, style


def gcp_json(rng: random.Random) -> tuple[dict[str, str], str]:
    key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
    pkcs8 = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption())
    rsa_like = der_seq(der_int(0), der_seq(b"\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01\x05\x00"),
                       der(0x04, rsa_pkcs1(rng))) if rng.random() < 0.7 else pkcs8
    block, body = armour("PRIVATE KEY", rsa_like)
    project = f"shop-{rng.choice(['prod', 'data', 'ml'])}-{rng.randint(100000, 999999)}"
    doc = {"type": "service_account", "project_id": project, "private_key_id": pick(rng, HEX, 40),
           "private_key": block + "\n", "client_email": f"etl@{project}.iam.gserviceaccount.com",
           "client_id": digits(rng, 21), "auth_uri": "https://accounts.google.com/o/oauth2/auth",
           "token_uri": "https://oauth2.googleapis.com/token"}
    return doc, body


def jwt_token(rng: random.Random) -> tuple[str, str]:
    alg = rng.choice(["HS256", "RS256", "ES256"])
    header = b64url(json.dumps({"alg": alg, "typ": "JWT", "kid": pick(rng, HEX, 8)}, separators=(",", ":")).encode())
    iat = rng.randint(1700000000, 1730000000)
    claims = {"sub": str(rng.randint(10000, 99999)), "iat": iat, "exp": iat + 3600,
              "iss": rng.choice(["https://auth.example.com", "shop-api", "https://login.example.de/realms/hr"]),
              "roles": rng.sample(["admin", "support", "claims", "billing", "mod"], 2)}
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    if alg == "HS256":
        sig = b64url(hmac.new(rng.randbytes(32), f"{header}.{payload}".encode(), hashlib.sha256).digest())
    else:
        sig = b64url(rng.randbytes(256 if alg == "RS256" else 64))
    return f"{header}.{payload}.{sig}", alg.lower()


def webhook_url(rng: random.Random) -> tuple[str, str, str]:
    """(URL, its secret part, style)."""
    style = rng.choice(["slack", "discord", "teams", "google_chat", "zapier", "mattermost"])
    if style == "slack":
        part = f"T{pick(rng, UPPER_AN, 10)}/B{pick(rng, UPPER_AN, 10)}/{pick(rng, B62, 24)}"
        return f"https://hooks.slack.com/services/{part}", part, style
    if style == "discord":
        part = f"{digits(rng, 19)}/{pick(rng, B64URL, 68)}"
        return f"https://discord.com/api/webhooks/{part}", part, style
    if style == "teams":
        g = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(3)]
        part = f"{g[0]}@{g[1]}/IncomingWebhook/{pick(rng, HEX, 32)}/{g[2]}"
        return f"https://example.webhook.office.com/webhookb2/{part}", part, style
    if style == "google_chat":
        part = f"key=AIza{pick(rng, B64URL, 35)}&token={pick(rng, B64URL, 43)}%3D"
        return f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, B64URL, 7)}/messages?{part}", part, style
    if style == "zapier":
        part = f"{digits(rng, 7)}/{pick(rng, string.ascii_lowercase + string.digits, 7)}"
        return f"https://hooks.zapier.com/hooks/catch/{part}/", part, style
    part = pick(rng, string.ascii_lowercase + string.digits, 26)
    return f"https://chat.example-games.com/hooks/{part}", part, style


def conn_password(rng: random.Random) -> str:
    return pick(rng, string.ascii_letters + string.digits + "-_.~!*", rng.randint(12, 22))


def connection(rng: random.Random) -> Value:
    pw = conn_password(rng)
    user = rng.choice(["app", "shop_rw", "etl", "svc-hr", "claims"])
    host = rng.choice(["db.internal", "10.1.2.3", "pg-prod.example.net", "sql01.corp.local", "kafka-1:9093"])
    style = rng.choice(["postgres", "mysql", "mongodb_srv", "redis", "amqp", "jdbc_sqlserver", "dotnet", "odbc",
                        "kafka_jaas", "netrc", "jdbc_query"])
    full = {
        "postgres": f"postgresql://{user}:{pw}@{host}:5432/orders?sslmode=require",
        "mysql": f"mysql://{user}:{pw}@{host}:3306/magento",
        "mongodb_srv": f"mongodb+srv://{user}:{pw}@cluster0.ab1cd.mongodb.net/game?retryWrites=true&w=majority",
        "redis": f"rediss://default:{pw}@{host}:6380/0",
        "amqp": f"amqps://{user}:{pw}@rabbit.example.net:5671/%2F",
        "jdbc_sqlserver": f"jdbc:sqlserver://{host}:1433;databaseName=HR;user={user};password={pw};encrypt=true",
        "dotnet": f"Server=tcp:{host},1433;Initial Catalog=Claims;User ID={user};Password={pw};Encrypt=True;",
        "odbc": f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};UID={user};PWD={pw};",
        "kafka_jaas": (f"org.apache.kafka.common.security.plain.PlainLoginModule required username=\"{user}\" "
                       f"password=\"{pw}\";"),
        "netrc": f"machine {host.split(':')[0]} login {user} password {pw}",
        "jdbc_query": f"jdbc:postgresql://{host}:5432/shop?user={user}&password={pw}&ssl=true",
    }[style]
    return Value(full, pw, style, rng.choice(["DATABASE_URL", "SPRING_DATASOURCE_URL", "SASL_JAAS_CONFIG",
                                                "CONNECTION_STRING", "MONGO_URI"]), "connection", lang_of(rng))


def http_auth(rng: random.Random) -> Value:
    style = rng.choice(["basic", "bearer", "cookie", "proxy_basic", "x_api_key", "drf_token", "curl_u", "url_userinfo"])
    user = rng.choice(FIRST) + rng.choice(["", ".ops", "_hr", "42"])
    if style in ("basic", "proxy_basic"):
        cred = base64.b64encode(f"{user}:{conn_password(rng)}".encode()).decode()
        head = "Authorization" if style == "basic" else "Proxy-Authorization"
        full = f"{head}: Basic {cred}"
    elif style == "bearer":
        cred = pick(rng, B64URL, rng.randint(32, 64))
        full = f"Authorization: Bearer {cred}"
    elif style == "cookie":
        cred = pick(rng, B62, 32)
        full = f"Cookie: _shop_session={cred}; cart_currency=EUR; _ga=GA1.2.{digits(rng, 9)}.{digits(rng, 10)}"
    elif style == "x_api_key":
        cred = pick(rng, B62, 40)
        full = f"X-API-Key: {cred}"
    elif style == "drf_token":
        cred = pick(rng, HEX, 40)
        full = f"Authorization: Token {cred}"
    elif style == "curl_u":
        cred = conn_password(rng)
        full = f"curl -su {user}:{cred} https://jenkins.example.net/api/json"
    else:
        cred = conn_password(rng)
        full = f"https://{user}:{cred}@nexus.example.com/repository/npm-private/"
    return Value(full, cred, style, "HTTP_HEADERS", "headers", lang_of(rng))


def c_header_curl(rng: random.Random, v: Value) -> Written:
    text = (f"* Connected to api.example.com (203.0.113.{rng.randint(1, 254)}) port 443\n> GET /admin/orders HTTP/1.1\n"
            f"> Host: api.example.com\n> {v.full}\n> Accept: application/json\n>\n< HTTP/1.1 403 Forbidden\n")
    return text, False, same


def c_header_go(rng: random.Random, v: Value) -> Written:
    name, _, val = v.full.partition(": ")
    text = f"request headers: map[Accept:[*/*] {name}:[{val}] User-Agent:[Go-http-client/1.1]]"
    return text, False, same


def c_header_py(rng: random.Random, v: Value) -> Written:
    name, _, val = v.full.partition(": ")
    text = f"DEBUG:urllib3:sent headers {{'User-Agent': 'python-requests/2.32.3', '{name}': '{val}'}}"
    return text, False, same


def c_header_java(rng: random.Random, v: Value) -> Written:
    name, _, val = v.full.partition(": ")
    text = f"o.s.web.client.RestTemplate : HTTP GET https://hr.example.com/api, headers=[{name}:\"{val}\"]"
    return text, False, same


def c_header_shell(rng: random.Random, v: Value) -> Written:
    n = rng.randint(100, 999)
    text = f" {n}  curl -H '{v.full}' https://api.example.com/v1/orders | jq .\n {n + 1}  history | tail"
    return text, False, same


def c_header_json(rng: random.Random, v: Value) -> Written:
    name, _, val = v.full.partition(": ")
    doc = {"errors": [{"message": "forbidden", "extensions": {"request": {"headers": {name.lower(): val}}}}]}
    return json.dumps(doc), True, same


def c_header_nginx(rng: random.Random, v: Value) -> Written:
    name, _, val = v.full.partition(": ")
    text = (f"2024/06/01 11:22:33 [debug] {rng.randint(100, 999)}#0: *{rng.randint(1, 9999)} http header: "
            f"\"{name}: {val}\"")
    return text, False, same


def c_header_php(rng: random.Random, v: Value) -> Written:
    name, _, val = v.full.partition(": ")
    key = "HTTP_" + name.upper().replace("-", "_")
    text = (f"array(2) {{\n  [\"{key}\"]=>\n  string({len(val)}) \"{val}\"\n  [\"REMOTE_ADDR\"]=>\n"
            "  string(9) \"10.0.0.17\"\n}")
    return text, False, same


def c_git_remote(rng: random.Random, v: Value) -> Written:
    text = f"$ git remote -v\norigin\t{v.full} (fetch)\norigin\t{v.full} (push)\n"
    return text, False, same


def c_jenkins_log(rng: random.Random, v: Value) -> Written:
    text = f"[Pipeline] sh\n+ {v.full}\n{{\"_class\":\"hudson.model.Hudson\",\"mode\":\"NORMAL\"}}"
    return text, False, same


def c_docker_config(rng: random.Random, v: Value) -> Written:
    doc = {"auths": {"registry.example.com": {"auth": v.full}}, "credsStore": ""}
    return json.dumps(doc, indent=1), True, same


HEADER_CARRIERS = (c_header_curl, c_header_go, c_header_py, c_header_java, c_header_shell, c_header_json,
                   c_header_nginx, c_header_php, c_zendesk, c_logfmt)
URL_CARRIERS = (c_git_remote, c_shell_history, c_zendesk, c_logfmt, c_helm, c_compose, c_jenkins_log, c_eml_forward)


# ---- values: personal data -------------------------------------------------------------------------------------

def email(rng: random.Random) -> Value:
    style = rng.choice(["plain", "plain", "upper", "plus_tag", "subdomain", "idn"])
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = rng.choice([f"{first}.{last}", f"{first[0]}{last}", f"{last}.{first}{rng.randint(1, 99)}"])
    addr = f"{local}@{rng.choice(DOMAINS)}"
    if style == "upper":
        addr = addr.upper() if rng.random() < 0.5 else addr.capitalize()
    elif style == "plus_tag":
        addr = addr.replace("@", f"+{rng.choice(['orders', 'steam', 'claims', 'hr'])}@")
    elif style == "subdomain":
        addr = f"{local}@{rng.choice(['mail', 'post', 'eu'])}.{rng.choice(DOMAINS)}"
    elif style == "idn":
        addr = rng.choice(IDN).replace("@", f"{rng.randint(1, 999)}@", 1)
    lang = lang_of(rng)
    return Value(addr, addr, style, "CUSTOMER_EMAIL", EMAIL_WORDS[lang], lang)


def rfc2047(name: str) -> str:
    return "=?UTF-8?B?" + base64.b64encode(name.encode()).decode() + "?="


NAMES_NATIVE = ("Jürgen Müller", "Camille Dubois", "José Núñez", "田中 陽翔", "张伟", "प्रिया शर्मा", "Дмитрий Иванов",
                "Ελένη Παπαδοπούλου", "נועה כהן", "Tereza Nováková")


def c_mime_headers(rng: random.Random, v: Value) -> Written:
    name = rng.choice(NAMES_NATIVE)
    shown = rfc2047(name) if rng.random() < 0.5 else f"\"{name}\""
    field = rng.choice(["From", "To", "Cc", "Reply-To"])
    text = (f"Received: from mx1.example.net by mail.example.de; Tue, 3 Sep 2024 10:00:00 +0200\n"
            f"{field}: {shown} <{v.full}>\nSubject: =?UTF-8?Q?Schadenmeldung_Nr._{rng.randint(1000, 9999)}?=\n"
            f"Message-ID: <{pick(rng, B62, 20)}@mail.example.de>\nMIME-Version: 1.0\n")
    return text, False, same


def c_urlencoded(rng: random.Random, v: Value) -> Written:
    written = quote(v.full, safe="")
    text = (f"> GET /admin/customers/search.json?query=email%3A{written}&limit=5 HTTP/2\n"
            "> Host: shop-admin.example.com\n< HTTP/2 200\n")
    return text, False, lambda s: quote(s, safe="")


def c_json_escape_log(rng: random.Random, v: Value) -> Written:
    written = v.full.replace("@", "\\u0040")
    text = f"WARN magento.checkout: payload={{\"customer\":{{\"email\":\"{written}\",\"group_id\":1}}}} rejected"
    return text, False, lambda s: s.replace("@", "\\u0040")


def c_git_log(rng: random.Random, v: Value) -> Written:
    name = rng.choice(NAMES_NATIVE)
    text = (f"commit {pick(rng, HEX, 40)}\nAuthor: {name} <{v.full}>\nDate:   Thu Aug 1 10:00:00 2024 +0200\n\n"
            "    fix(shop): round VAT per line\n")
    return text, False, same


def c_magento_json(rng: random.Random, v: Value) -> Written:
    doc = {"entity_id": rng.randint(1000, 99999), "increment_id": f"0000{digits(rng, 5)}", "status": "pending",
           "billing_address": {"firstname": rng.choice(FIRST).capitalize(), camel(v.name): v.full,
                               "country_id": rng.choice(["DE", "FR", "ES", "IT"])}}
    return json.dumps(doc, ensure_ascii=False), True, same


def c_vcard(rng: random.Random, v: Value) -> Written:
    name = rng.choice(NAMES_NATIVE)
    field = "EMAIL;TYPE=work" if "@" in v.full else "TEL;TYPE=cell"
    text = f"BEGIN:VCARD\nVERSION:3.0\nFN:{name}\n{field}:{v.full}\nORG:Example Versicherung AG\nEND:VCARD\n"
    return text, False, same


EMAIL_CARRIERS = (c_mime_headers, c_mime_qp, c_eml_forward, c_excel_csv, c_zendesk, c_discord, c_graphql,
                  c_magento_json, c_php_dump, c_git_log, c_ocr_form, c_word_table, c_logfmt, c_protobuf,
                  c_urlencoded, c_json_escape_log, c_vcard, c_shopify_csv)
PII_CARRIERS = (c_mime_qp, c_eml_forward, c_excel_csv, c_zendesk, c_discord, c_graphql, c_magento_json,
                c_php_dump, c_ocr_form, c_word_table, c_logfmt, c_protobuf, c_soap, c_go_dump, c_py_repr,
                c_ruby_inspect, c_shopify_csv, c_vcard)


def email_obfuscated(rng: random.Random) -> Value:
    local, domain = f"{rng.choice(FIRST)}.{rng.choice(LAST)}", rng.choice(DOMAINS)
    host, _, tld = domain.rpartition(".")
    style = rng.choice(["brackets", "parens", "words", "spaced"])
    full = {"brackets": f"{local} [at] {host} [dot] {tld}", "parens": f"{local}(at){domain}",
            "words": f"{local} at {host} dot {tld}", "spaced": f"{local} @ {host} . {tld}"}[style]
    lang = lang_of(rng)
    return Value(full, full, style, "CONTACT", EMAIL_WORDS[lang], lang)


# ---- phones: national plans ------------------------------------------------------------------------------------

def d(rng: random.Random, n: int) -> str:
    return digits(rng, n)


def nz(rng: random.Random) -> str:
    return str(rng.randint(2, 9))


PhoneGen = Callable[[random.Random], list[tuple[str, str]]]
"""A number in the styles its country writes it: [(style, text)], one chosen per case."""


def ph_us(r: random.Random) -> list[tuple[str, str]]:
    a, b, c = rng_area(r), nz(r) + d(r, 2), d(r, 4)
    return [("parens", f"({a}) {b}-{c}"), ("dashes", f"{a}-{b}-{c}"), ("dots", f"{a}.{b}.{c}"),
            ("e164_space", f"+1 {a} {b} {c}"), ("one_dash", f"1-{a}-{b}-{c}"), ("compact", f"{a}{b}{c}")]


def rng_area(r: random.Random) -> str:
    return nz(r) + str(r.randint(0, 8)) + d(r, 1)


def ph_uk(r: random.Random) -> list[tuple[str, str]]:
    x, m = d(r, 3), d(r, 3)
    return [("london", f"020 7946 0{x}"), ("intl_0", f"+44 (0)20 7946 0{x}"), ("mobile", f"07700 900{m}"),
            ("mobile_intl", f"+44 7700 900{m}"), ("manchester", f"0161 496 0{x}"), ("compact", f"07700900{m}")]


def ph_de(r: random.Random) -> list[tuple[str, str]]:
    n8, m = d(r, 8), "15" + str(r.choice([1, 2, 7, 9])) + d(r, 1)
    sub = d(r, 7)
    return [("berlin", f"030 {n8}"), ("slash", f"030/{n8}"), ("mobile", f"0{m[:3]} {d(r, 8)}"),
            ("intl_0", f"+49 (0)30 {n8[:4]} {n8[4:]}"), ("mobile_intl", f"+49 {m[:3]} {sub}"),
            ("din5008", f"+49 89 {n8[:4]} {n8[4:]}")]


def ph_fr(r: random.Random) -> list[tuple[str, str]]:
    p = [d(r, 2) for _ in range(4)]
    lead = r.choice(["1", "6", "7", "9"])
    return [("pairs", f"0{lead} {' '.join(p)}"), ("dots", f"0{lead}.{'.'.join(p)}"),
            ("intl", f"+33 {lead} {' '.join(p)}"), ("intl_0", f"+33 (0){lead} {' '.join(p)}"),
            ("compact", f"0{lead}{''.join(p)}"), ("dashes", f"0{lead}-{'-'.join(p)}")]


def ph_in(r: random.Random) -> list[tuple[str, str]]:
    m = str(r.randint(6, 9)) + d(r, 9)
    return [("intl", f"+91 {m[:5]} {m[5:]}"), ("zero", f"0{m[:5]} {m[5:]}"), ("compact", m),
            ("mumbai", f"+91-22-{d(r, 4)}-{d(r, 4)}"), ("dash", f"+91-{m}"), ("delhi", f"011 {d(r, 4)} {d(r, 4)}")]


def ph_jp(r: random.Random) -> list[tuple[str, str]]:
    return [("tokyo", f"03-{d(r, 4)}-{d(r, 4)}"), ("mobile", f"0{r.choice(['80', '90', '70'])}-{d(r, 4)}-{d(r, 4)}"),
            ("intl_mobile", f"+81 90-{d(r, 4)}-{d(r, 4)}"), ("intl", f"+81 3 {d(r, 4)} {d(r, 4)}"),
            ("osaka", f"06({d(r, 4)}){d(r, 4)}"), ("freedial", f"0120-{d(r, 3)}-{d(r, 3)}")]


def ph_br(r: random.Random) -> list[tuple[str, str]]:
    ddd = r.choice(["11", "21", "31", "41", "51", "61", "71", "81"])
    return [("mobile", f"({ddd}) 9{d(r, 4)}-{d(r, 4)}"), ("intl", f"+55 {ddd} 9{d(r, 4)}-{d(r, 4)}"),
            ("landline", f"({ddd}) {nz(r)}{d(r, 3)}-{d(r, 4)}"), ("intl_parens", f"+55 ({ddd}) 9 {d(r, 4)}-{d(r, 4)}"),
            ("compact", f"{ddd}9{d(r, 8)}"), ("zero_carrier", f"0xx{ddd} 9{d(r, 4)}-{d(r, 4)}")]


def ph_mx(r: random.Random) -> list[tuple[str, str]]:
    return [("cdmx", f"55 {d(r, 4)} {d(r, 4)}"), ("intl", f"+52 55 {d(r, 4)} {d(r, 4)}"),
            ("old_mobile", f"+52 1 33 {d(r, 4)} {d(r, 4)}"), ("parens", f"(81) {d(r, 4)}-{d(r, 4)}"),
            ("compact", f"+52{r.choice(['55', '33', '81'])}{d(r, 8)}"), ("dashes", f"55-{d(r, 4)}-{d(r, 4)}")]


def ph_es(r: random.Random) -> list[tuple[str, str]]:
    m = r.choice("67") + d(r, 8)
    return [("mobile", f"{m[:3]} {m[3:6]} {m[6:]}"), ("intl_pairs", f"+34 {m[:3]} {m[3:5]} {m[5:7]} {m[7:]}"),
            ("madrid", f"91 {d(r, 3)} {d(r, 2)} {d(r, 2)}"), ("intl", f"+34 {m[:3]} {m[3:6]} {m[6:]}"),
            ("compact", m), ("zero_zero", f"0034 {m}")]


def ph_it(r: random.Random) -> list[tuple[str, str]]:
    m = "3" + str(r.randint(20, 99)) + d(r, 7)
    return [("mobile", f"{m[:3]} {m[3:6]} {m[6:]}"), ("intl", f"+39 {m[:3]} {m[3:]}"),
            ("rome", f"06 {d(r, 4)} {d(r, 4)}"), ("intl_rome", f"+39 06 {d(r, 8)}"),
            ("milan_slash", f"02/{d(r, 8)}"), ("compact", m)]


def ph_au(r: random.Random) -> list[tuple[str, str]]:
    m = "4" + d(r, 8)
    return [("mobile", f"0{m[:3]} {m[3:6]} {m[6:]}"), ("intl", f"+61 {m[:3]} {m[3:6]} {m[6:]}"),
            ("sydney", f"(02) {d(r, 4)} {d(r, 4)}"), ("intl_land", f"+61 2 {d(r, 4)} {d(r, 4)}"),
            ("compact", f"0{m}"), ("melbourne", f"03 {d(r, 4)} {d(r, 4)}")]


def ph_kr(r: random.Random) -> list[tuple[str, str]]:
    return [("mobile", f"010-{d(r, 4)}-{d(r, 4)}"), ("intl", f"+82 10-{d(r, 4)}-{d(r, 4)}"),
            ("seoul", f"02-{d(r, 3)}-{d(r, 4)}"), ("intl_seoul", f"+82 2 {d(r, 4)} {d(r, 4)}"),
            ("compact", f"010{d(r, 8)}"), ("busan", f"051-{d(r, 3)}-{d(r, 4)}")]


def ph_cn(r: random.Random) -> list[tuple[str, str]]:
    m = "1" + r.choice(["38", "39", "50", "86", "77", "58"]) + d(r, 8)
    return [("mobile_344", f"{m[:3]} {m[3:7]} {m[7:]}"), ("intl", f"+86 {m[:3]} {m[3:7]} {m[7:]}"),
            ("compact", m), ("beijing", f"010-{d(r, 4)} {d(r, 4)}"), ("shanghai", f"021-{d(r, 8)}"),
            ("intl_land", f"+86 10 {d(r, 4)} {d(r, 4)}")]


def ph_ru(r: random.Random) -> list[tuple[str, str]]:
    code = r.choice(["495", "812", "912", "916", "926", "903"])
    a, b, c = d(r, 3), d(r, 2), d(r, 2)
    return [("intl_parens", f"+7 ({code}) {a}-{b}-{c}"), ("eight_parens", f"8 ({code}) {a}-{b}-{c}"),
            ("intl_space", f"+7 {code} {a}-{b}-{c}"), ("eight_space", f"8 {code} {a} {b} {c}"),
            ("compact8", f"8{code}{a}{b}{c}"), ("compact7", f"+7{code}{a}{b}{c}")]


def ph_id(r: random.Random) -> list[tuple[str, str]]:
    m = "8" + r.choice(["11", "12", "13", "21", "52", "57"]) + d(r, 8)
    return [("intl_dash", f"+62 {m[:3]}-{m[3:7]}-{m[7:]}"), ("zero", f"0{m[:3]} {m[3:7]} {m[7:]}"),
            ("jakarta", f"(021) {d(r, 4)} {d(r, 4)}"), ("intl_land", f"+62 21 {d(r, 4)} {d(r, 4)}"),
            ("compact", f"0{m}"), ("wa", f"62{m}")]


def ph_il(r: random.Random) -> list[tuple[str, str]]:
    p = r.choice(["50", "52", "53", "54", "58"])
    return [("intl_mobile", f"+972 {p}-{d(r, 3)}-{d(r, 4)}"), ("mobile", f"0{p}-{d(r, 3)}-{d(r, 4)}"),
            ("tel_aviv", f"03-{nz(r)}{d(r, 2)}-{d(r, 4)}"), ("intl_land", f"+972 3 {nz(r)}{d(r, 2)} {d(r, 4)}"),
            ("compact", f"0{p}{d(r, 7)}"), ("jerusalem", f"02-{nz(r)}{d(r, 2)}-{d(r, 4)}")]


def ph_gr(r: random.Random) -> list[tuple[str, str]]:
    m = "69" + r.choice("3457") + d(r, 7)
    return [("athens", f"210 {d(r, 3)} {d(r, 4)}"), ("intl", f"+30 21 0{d(r, 3)} {d(r, 4)}"),
            ("mobile", f"{m[:3]} {m[3:6]} {m[6:]}"), ("intl_mobile", f"+30 {m[:3]} {m[3:]}"),
            ("compact", m), ("zero_zero", f"0030 {m}")]


def ph_cz(r: random.Random) -> list[tuple[str, str]]:
    m = r.choice(["601", "602", "603", "604", "605", "720", "773", "777"])
    return [("intl", f"+420 {m} {d(r, 3)} {d(r, 3)}"), ("national", f"{m} {d(r, 3)} {d(r, 3)}"),
            ("prague", f"+420 2{d(r, 2)} {d(r, 3)} {d(r, 3)}"), ("compact", f"{m}{d(r, 6)}"),
            ("zero_zero", f"00420 {m} {d(r, 3)} {d(r, 3)}"), ("dots", f"{m}.{d(r, 3)}.{d(r, 3)}")]


PHONES: dict[str, tuple[PhoneGen, str]] = {
    "phone_us": (ph_us, "en"), "phone_uk": (ph_uk, "en"), "phone_de": (ph_de, "de"), "phone_fr": (ph_fr, "fr"),
    "phone_in": (ph_in, "hi"), "phone_jp": (ph_jp, "ja"), "phone_br": (ph_br, "es"), "phone_mx": (ph_mx, "es"),
    "phone_es": (ph_es, "es"), "phone_it": (ph_it, "it"), "phone_au": (ph_au, "en"), "phone_kr": (ph_kr, "en"),
    "phone_cn": (ph_cn, "zh"), "phone_ru": (ph_ru, "ru"), "phone_id": (ph_id, "id"), "phone_il": (ph_il, "he"),
    "phone_gr": (ph_gr, "el"), "phone_cz": (ph_cz, "cs"),
}
PHONE_EXTRA_WORDS = ("Tel.", "Mobil", "Handy", "WhatsApp", "Rückruf unter", "tel:", "Fax", "Mobile")


def phone(kind: str) -> Callable[[random.Random], Value]:
    gen, home = PHONES[kind]

    def make(rng: random.Random) -> Value:
        style, text = rng.choice(gen(rng))
        lang = home if rng.random() < 0.6 else lang_of(rng)
        words = PHONE_WORDS[lang] if rng.random() < 0.8 else rng.choice(PHONE_EXTRA_WORDS)
        return Value(text, text, style, "CONTACT_PHONE", words, lang)
    return make


# ---- numbers with check digits ---------------------------------------------------------------------------------

def ssn(rng: random.Random) -> Value:
    area = rng.choice([a for a in range(1, 900) if a != 666])
    a, g, s = f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
    style = rng.choice(["dashes", "spaces", "compact", "ocr_gaps"])
    full = {"dashes": f"{a}-{g}-{s}", "spaces": f"{a} {g} {s}", "compact": a + g + s,
            "ocr_gaps": f"{a} - {g} - {s}"}[style]
    words = rng.choice(["SSN", "Social Security No.", "Social Security Number", "SS#", "US-Sozialversicherungsnr.",
                        "numéro de sécurité sociale (US)", "社会保障番号", "SSN (США)"])
    return Value(full, full, style, "EMPLOYEE_SSN", words, lang_of(rng))


CARD_SCHEMES: dict[str, tuple[tuple[str, ...], int]] = {
    "visa": (("4",), 16), "mastercard": (("51", "53", "55", "2221", "2720", "23"), 16), "amex": (("34", "37"), 15),
    "discover": (("6011", "65", "644"), 16), "jcb": (("3528", "3566", "3589"), 16), "diners": (("36", "38"), 14),
    "unionpay": (("62",), 19), "maestro": (("6759", "5018", "6304"), 16), "mir": (("2200", "2204"), 16),
    "rupay": (("60", "6521", "817"), 16),
}


def card_number(rng: random.Random, scheme: str) -> str:
    prefixes, length = CARD_SCHEMES[scheme]
    partial = rng.choice(prefixes)
    partial += digits(rng, length - 1 - len(partial))
    return partial + luhn_digit(partial)


def card(rng: random.Random) -> Value:
    scheme = rng.choice(list(CARD_SCHEMES))
    number = card_number(rng, scheme)
    sep = rng.choice([" ", "-", "", "  ", "."])
    full = group(number, 4, sep) if len(number) == 19 else group_card(number, sep)
    name = {" ": "space", "-": "dash", "": "compact", "  ": "ocr_double", ".": "dot"}[sep]
    words = rng.choice(["Kartennummer", "n° de carte", "número de tarjeta", "numero carta", "カード番号", "卡号",
                        "कार्ड नंबर", "номер карты", "αριθμός κάρτας", "מספר כרטיס", "nomor kartu", "číslo karty",
                        "Card number", "PAN", "cc"])
    return Value(full, full, f"{scheme}_{name}", "CC_NUMBER", words, lang_of(rng))


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c", "NL": "4a10n", "BE": "3n7n2n",
             "AT": "5n11n", "CH": "5n12c", "GB": "4a6n8n", "IE": "4a6n8n", "PL": "8n16n", "CZ": "4n6n10n",
             "GR": "3n4n16c", "PT": "4n4n11n2n", "SE": "3n16n1n", "DK": "4n9n1n", "FI": "3n11n", "NO": "4n6n1n",
             "LU": "3n13c", "HU": "3n4n1n15n1n", "RO": "4a16c", "SK": "4n6n10n", "IL": "3n3n13n", "TR": "5n1n16c",
             "SA": "2n18c", "AE": "3n16n", "BR": "8n5n10n1a1c", "HR": "7n10n", "SI": "5n8n2n", "LT": "5n11n"}


def iban_number(rng: random.Random, country: str) -> str:
    b = bban(rng, IBAN_BBAN[country])
    return country + iban_check(country, b) + b


def iban(rng: random.Random) -> Value:
    country = rng.choice(list(IBAN_BBAN))
    number = iban_number(rng, country)
    style = rng.choice(["print", "print", "compact", "lower_compact", "ocr_double", "lower_print"])
    full = {"print": group(number, 4, " "), "compact": number, "lower_compact": number.lower(),
            "ocr_double": group(number, 4, "  "), "lower_print": group(number.lower(), 4, " ")}[style]
    words = rng.choice(["IBAN", "Bankverbindung", "IBAN du bénéficiaire", "cuenta IBAN", "IBAN accredito",
                        "口座 IBAN", "账户 IBAN", "आईबीएएन", "счёт IBAN", "ΙΒΑΝ", "חשבון IBAN", "rekening IBAN",
                        "číslo účtu IBAN"])
    return Value(full, full, f"{country}_{style}", "PAYOUT_IBAN", words, lang_of(rng))


# ---- disguised -------------------------------------------------------------------------------------------------

ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
BIDI = ("\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069")


def fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


def disguised(rng: random.Random) -> Value:
    base_kind = rng.choice(["password", "github", "stripe", "email", "card", "iban", "aws_key_id", "phone_de",
                            "openai", "slack_token"])
    if base_kind == "password":
        v = password(rng)
    elif base_kind == "email":
        v = email(rng)
    elif base_kind == "card":
        v = card(rng)
    elif base_kind == "iban":
        v = iban(rng)
    elif base_kind == "phone_de":
        v = phone("phone_de")(rng)
    elif base_kind == "aws_key_id":
        key_id, _ = aws_pair(rng)
        v = Value(key_id, key_id, "", "AWS_ACCESS_KEY_ID", "AWS key", "en")
    else:
        v = token_value(base_kind)(rng)
    how = rng.choice(["zero_width", "bidi", "soft_hyphen", "fullwidth", "nbsp"])
    s = v.full
    if how == "nbsp" and " " not in s:
        how = "soft_hyphen"
    if how == "nbsp" and " " in s:
        out = s.replace(" ", rng.choice(["\u00a0", "\u202f"]))
    elif how == "fullwidth":
        out = fullwidth(s)
    else:
        mark = {"zero_width": rng.choice(ZERO_WIDTH), "bidi": rng.choice(BIDI), "soft_hyphen": "\u00ad"}[how]
        cuts = sorted(rng.sample(range(1, len(s)), min(3, len(s) - 1)))
        out = "".join(s[a:b] + (mark if b < len(s) else "") for a, b in zip([0] + cuts, cuts + [len(s)], strict=True))
    return Value(out, out, f"{base_kind}_{how}", v.name, v.words, v.lang)


# ---- the corpus ------------------------------------------------------------------------------------------------

OUTSIDE_TARGET = frozenset({"email_obfuscated"})
"""Kinds printed but not held to the 0.95 target: obfuscation people write on purpose is no format."""

ValueGen = Callable[[random.Random], Value]
CARRIERS: dict[str, tuple[ValueGen, tuple[Carrier, ...]]] = {
    "password": (password, SRE + PEOPLE),
    "secret": (secret, SRE + PEOPLE),
    **{kind: (token_value(kind), SRE + PEOPLE) for kind in TOKENS},
    "connection_string": (connection, SRE + (c_zendesk, c_eml_forward, c_excel_csv, c_word_table)),
    "http_auth": (http_auth, HEADER_CARRIERS),
    "email": (email, EMAIL_CARRIERS),
    "email_obfuscated": (email_obfuscated, PII_CARRIERS),
    **{kind: (phone(kind), PII_CARRIERS) for kind in PHONES},
    "ssn": (ssn, PII_CARRIERS),
    "card": (card, PII_CARRIERS),
    "iban": (iban, PII_CARRIERS),
    "disguised": (disguised, SRE + PEOPLE),
}
"""Kind -> (value generator, the carriers it is written in); kinds with their own makers are in `SPECIAL`."""
SPECIAL = ("aws_key_id", "aws_secret", "gcp_service_account", "jwt", "pem", "webhook")
KINDS = tuple(CARRIERS) + SPECIAL


def case_of(kind: str, rng: random.Random, v: Value, carrier: Carrier) -> Case:
    text, is_json, transform = carrier(rng, v)
    written = transform(v.secret)
    if written not in text and json.dumps(written, ensure_ascii=False)[1:-1] not in text:
        raise AssertionError(f"{kind}/{carrier.__name__}: {written!r} not in {text!r}")
    return Case(kind, written, text, is_json, f"{carrier.__name__[2:]}/{v.style}")


def plain_cases(kind: str, rng: random.Random, n: int) -> Iterator[Case]:
    make, carriers = CARRIERS[kind]
    start = rng.randrange(len(carriers))
    for i in range(n):
        carrier = carriers[(start + i) % len(carriers)]
        v = make(rng)
        if kind == "twilio":
            text, is_json, transform = twilio_text(rng, v, carrier)
            yield Case(kind, transform(v.secret), text, is_json, f"{carrier.__name__[2:]}/{v.style}")
        elif kind == "http_auth" and v.style in ("curl_u", "url_userinfo"):
            yield case_of(kind, rng, v, URL_CARRIERS[i % len(URL_CARRIERS)])
        else:
            yield case_of(kind, rng, v, carrier)


def azure_cases(rng: random.Random, n: int) -> Iterator[Case]:
    """Azure storage: a third bare account keys, the rest in connection strings and SAS URLs."""
    carriers = SRE + PEOPLE
    for i in range(n):
        maker = (token_value("azure_storage"), azure_conn, azure_sas)[i % 3]
        yield case_of("azure_storage", rng, maker(rng), carriers[(i * 7) % len(carriers)])


def aws_cases(rng: random.Random, n: int) -> Iterator[Case]:
    for kind in ("aws_key_id", "aws_secret"):
        for _ in range(n):
            key_id, secret_key = aws_pair(rng)
            text, is_json, style = aws_text(rng, key_id, secret_key)
            yield Case(kind, key_id if kind == "aws_key_id" else secret_key, text, is_json,
                       f"{style}/{key_id[:4].lower()}")


def gcp_cases(rng: random.Random, n: int) -> Iterator[Case]:
    forms = ("key_file", "k8s_secret", "env_line", "helm", "py_repr", "php_dump", "actuator", "graphql",
             "protobuf", "compose")
    for i in range(n):
        doc, body = gcp_json(rng)
        form = forms[i % len(forms)]
        one_line = json.dumps(doc)
        if form == "key_file":
            text, is_json = json.dumps(doc, indent=2), True
        elif form == "k8s_secret":
            text, is_json = f"apiVersion: v1\nkind: Secret\nstringData:\n  key.json: '{one_line}'\n", False
        elif form == "env_line":
            text, is_json = f"GOOGLE_CREDENTIALS_JSON='{one_line}'", False
        elif form == "helm":
            text, is_json = f"gcp:\n  serviceAccountJson: |\n    {one_line}\n", False
        elif form == "py_repr":
            text, is_json = f"loaded credentials: {doc!r}", False
        elif form == "php_dump":
            text, is_json = f"array(1) {{\n  [\"private_key\"]=>\n  string(1704) \"{doc['private_key']}\"\n}}", False
        elif form == "actuator":
            text, is_json = json.dumps({"propertySources": [{"name": "applicationConfig", "properties": {
                "spring.cloud.gcp.credentials.encoded-key": {"value": doc["private_key"]}}}]}), True
        elif form == "graphql":
            text, is_json = json.dumps({"data": {"connector": {"config": one_line}}}), True
        elif form == "protobuf":
            text, is_json = f"credentials {{\n  json: {json.dumps(one_line)}\n}}\n", False
        else:
            text, is_json = f"    environment:\n      GCP_SA_KEY: '{one_line}'\n", False
        written = body if body in text else json.dumps(body)[1:-1]
        if written not in text:
            written = json.dumps(json.dumps(body)[1:-1])[1:-1]
        if written not in text:
            raise AssertionError(f"gcp_service_account/{form}: body not in text")
        yield Case("gcp_service_account", written, text, is_json, f"{form}/sa_json")


def multiline_cases(kind: str, rng: random.Random, n: int) -> Iterator[Case]:
    for i in range(n):
        block, body, style = pem_key(rng)
        v = Value(block, body, style, rng.choice(["id_ed25519", "tls_key", "signing_key", "deploy_key"]),
                  rng.choice(["Privater Schlüssel", "clé privée", "private key", "秘密鍵"]), lang_of(rng))
        yield case_of(kind, rng, v, MULTILINE[i % len(MULTILINE)])


def jwt_cases(rng: random.Random, n: int) -> Iterator[Case]:
    carriers = SRE + PEOPLE + (c_header_curl, c_header_go, c_header_py)
    for i in range(n):
        token, style = jwt_token(rng)
        carrier = carriers[(i * 7) % len(carriers)]
        if carrier in (c_header_curl, c_header_go, c_header_py):
            v = Value(f"Authorization: Bearer {token}", token, style, "ACCESS_TOKEN", "token", lang_of(rng))
        else:
            v = Value(token, token, style, rng.choice(["ACCESS_TOKEN", "ID_TOKEN", "SESSION_JWT"]),
                      rng.choice(["Token", "JWT", "トークン", "токен"]), lang_of(rng))
        yield case_of("jwt", rng, v, carrier)


def webhook_cases(rng: random.Random, n: int) -> Iterator[Case]:
    carriers = SRE + PEOPLE
    for i in range(n):
        url, part, style = webhook_url(rng)
        v = Value(url, part, style, rng.choice(["SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK", "ALERT_WEBHOOK"]),
                  rng.choice(["Webhook", "Webhook-URL", "URL du webhook"]), lang_of(rng))
        yield case_of("webhook", rng, v, carriers[(i * 7) % len(carriers)])


def generate(per_kind: int = PER_KIND, seed: int = SEED) -> list[Case]:
    """Every planted value: `per_kind` of each kind, the same list for the same seed."""
    cases: list[Case] = []
    for i, kind in enumerate(KINDS):
        rng = random.Random(f"{seed}:{i}:{kind}")
        if kind == "azure_storage":
            cases.extend(azure_cases(rng, per_kind))
        elif kind in CARRIERS:
            cases.extend(plain_cases(kind, rng, per_kind))
    rng = random.Random(f"{seed}:special")
    cases.extend(aws_cases(rng, per_kind))
    cases.extend(gcp_cases(rng, per_kind))
    cases.extend(jwt_cases(rng, per_kind))
    cases.extend(multiline_cases("pem", rng, per_kind))
    cases.extend(webhook_cases(rng, per_kind))
    return cases


# ---- near misses -----------------------------------------------------------------------------------------------

def bad_luhn(rng: random.Random) -> str:
    number = card_number(rng, rng.choice(list(CARD_SCHEMES)))
    wrong = str((int(number[-1]) + rng.randint(1, 9)) % 10)
    return f"Kartennummer: {group_card(number[:-1] + wrong, ' ')} (Prüfziffer ungültig, abgelehnt)"


def bad_iban(rng: random.Random) -> str:
    number = iban_number(rng, rng.choice(list(IBAN_BBAN)))
    check = f"{(int(number[2:4]) + rng.randint(1, 90)) % 97 + 2:02d}"
    check = check if check != number[2:4] else f"{(int(check) + 1) % 98 + 2:02d}"
    return f"\"IBAN\";\"{group(number[:2] + check + number[4:], 4, ' ')}\";\"abgelehnt: Prüfsumme\""


def bad_ssn(rng: random.Random) -> str:
    """An SSN the SSA never issues (area 000 or 666, group 00, serial 0000); 9xx areas are ITINs, so left out."""
    a, g, s = rng.choice([("000", None, None), ("666", None, None), (None, "00", None), (None, None, "0000")])
    area = a or f"{rng.randint(1, 665):03d}"
    return f"SSN: {area}-{g or f'{rng.randint(1, 99):02d}'}-{s or f'{rng.randint(1, 9999):04d}'} (ungültig)"


def luhn_bad(number: str) -> str:
    return number if luhn_digit(number[:-1]) != number[-1] else number[:-1] + str((int(number[-1]) + 1) % 10)


def ean13(rng: random.Random, prefix: str) -> str:
    body = prefix + digits(rng, 12 - len(prefix))
    total = sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(body))
    return body + str((10 - total % 10) % 10)


NegGen = Callable[[random.Random], str]
NEGATIVES: dict[str, NegGen] = {
    "bad_luhn_card": bad_luhn,
    "bad_iban": bad_iban,
    "bad_ssn": bad_ssn,
    "version": lambda r: r.choice([
        f"checkout-service v{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 99)}-rc.{r.randint(1, 9)}"
        f"+build.{digits(r, 4)}", f"User-Agent: Mozilla/5.0 Chrome/126.0.{digits(r, 4)}.{digits(r, 3)} Safari/537.36",
        f"helm.sh/chart: ingress-nginx-4.{r.randint(0, 12)}.{r.randint(0, 9)}", f"Minecraft 1.20.{r.randint(1, 6)} "
        f"(protocol {digits(r, 3)}) Paper build #{digits(r, 3)}"]),
    "build_id": lambda r: r.choice([
        f"Build #{digits(r, 5)} ({pick(r, HEX, 7)}) passed in 4m12s",
        f"BUILD_ID=2024.0{r.randint(1, 9)}.1{r.randint(0, 9)}"
        f".{digits(r, 4)}",
        f"Gradle build scan: https://scans.gradle.com/s/{pick(r, string.ascii_lowercase + '234567', 13)}",
        f"GITHUB_RUN_ID={digits(r, 10)} GITHUB_RUN_NUMBER={digits(r, 4)}"]),
    "uuid": lambda r: r.choice(["X-Request-Id: ", "trace_id=", "Correlation-ID: ", "\"orderUuid\": \""])
    + str(uuid.UUID(int=r.getrandbits(128), version=4)),
    "git_sha": lambda r: r.choice([f"commit {pick(r, HEX, 40)}", f"Merge {pick(r, HEX, 7)} into {pick(r, HEX, 7)}",
                                   f"revision: {pick(r, HEX, 40)}  # pinned", f"HEAD is now at {pick(r, HEX, 12)}"]),
    "container_digest": lambda r: r.choice([
        f"Image: registry.example.com/shop/api@sha256:{pick(r, HEX, 64)}",
        f"Normal  Pulled  12s  kubelet  Successfully pulled image \"nginx@sha256:{pick(r, HEX, 64)}\"",
        f"Digest: sha256:{pick(r, HEX, 64)}"]),
    "sri_etag": lambda r: r.choice([
        f"<script src=\"/app.js\" integrity=\"sha384-{base64.b64encode(r.randbytes(48)).decode()}\" "
        "crossorigin=\"anonymous\"></script>", f"< etag: W/\"{pick(r, HEX, 32)}\"", f"< ETag: \"{pick(r, HEX, 40)}\"",
        f"\"resolved\": \"https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz\", \"integrity\": "
        f"\"sha512-{base64.b64encode(r.randbytes(64)).decode()}\""]),
    "time": lambda r: r.choice([
        f"2024-0{r.randint(1, 9)}-1{r.randint(0, 9)}T{r.randint(10, 23)}:{r.randint(10, 59)}:{r.randint(10, 59)}"
        f".{digits(r, 6)}+02:00", f"took {digits(r, 7)}ms (p99 {digits(r, 4)}ms)",
        f"\"createdAt\": {r.randint(1600000000000, 1730000000000)}",
        f"timeout: PT{r.randint(1, 9)}H{r.randint(1, 59)}M",
        f"uptime 1{r.randint(0, 9)}d 0{r.randint(1, 9)}:{r.randint(10, 59)}:{r.randint(10, 59)}"]),
    "business_number": lambda r: r.choice([
        f"Order #{digits(r, 9)} shipped", f"RMA-2024-{digits(r, 6)} approved", f"Ticket #{digits(r, 7)} closed",
        f"Rechnung INV-2024-{digits(r, 7)}", f"Police n° VN {digits(r, 9)}",
        f"Schaden-Nr. 24-{digits(r, 3)}-{digits(r, 4)}",
        f"Claim CLM-{digits(r, 10)}", f"Aktenzeichen {r.randint(1, 30)} O {digits(r, 3)}/24"]),
    "tracking": lambda r: r.choice([
        f"UPS tracking 1Z{pick(r, UPPER_AN, 6)}{digits(r, 10)}", f"FedEx {digits(r, 4)} {digits(r, 4)} {digits(r, 4)}",
        f"USPS {group('9400' + digits(r, 18), 4, ' ')}", f"DHL Sendungsnummer JJD{digits(r, 18)}",
        f"Colissimo 6A{digits(r, 11)}"]),
    "sku_ean": lambda r: r.choice([
        f"EAN {ean13(r, '40')}", f"ISBN 978-{digits(r, 1)}-{digits(r, 3)}-{digits(r, 5)}-{digits(r, 1)}",
        f"SKU HD-BLK-XL-{digits(r, 4)}", f"GTIN {ean13(r, '0')}", f"ASIN B0{pick(r, UPPER_AN, 8)}"]),
    "phone_like_bare": lambda r: r.choice([
        f"Lot {digits(r, 4)} {digits(r, 4)} {digits(r, 4)}", f"Seriennummer 0{digits(r, 3)} {digits(r, 7)}",
        f"Artikel 07700 900{digits(r, 3)} x2", f"Zählerstand 030 {digits(r, 8)} kWh",
        f"coords 48.{digits(r, 6)}, 11.{digits(r, 6)}", f"Charge 0{digits(r, 2)}-{digits(r, 3)}-{digits(r, 4)}"]),
    "placeholder": lambda r: r.choice([
        "password: changeme", "DB_PASSWORD=${DB_PASSWORD}", "password: {{ .Values.db.password }}",
        "'password': '%(password)s'", "mysql -u root --password=<password>", "Passwort: xxxx",
        "api_key: YOUR_API_KEY_HERE", "token: <redacted>", "PGPASSWORD=$(cat /run/secrets/pg)",
        "ansible_become_pass: \"{{ vault_become_pass }}\"", "STRIPE_SECRET_KEY=sk_live_...", "mot de passe : ********",
        "contraseña: [REDACTED]", "spring.datasource.password=${DB_PASS:}", "password = %(DB_PASS)s",
        "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}"]),
    "masked": lambda r: r.choice([
        f"Visa **** **** **** {digits(r, 4)}", f"Mastercard ending in {digits(r, 4)}",
        f"IBAN DE{digits(r, 2)} **** **** **** **{digits(r, 2)}", f"sk_live_****{pick(r, B62, 4)}",
        f"ghp_************************************{pick(r, B62, 4)}", f"SSN ***-**-{digits(r, 4)}",
        f"Telefon +49 *** ****{digits(r, 3)}"]),
    "localhost_email": lambda r: r.choice([
        "sent to root@localhost", f"user{r.randint(1, 99)}@localhost", "From: MAILER-DAEMON@localhost",
        "postgres@localhost:5432", "admin@127.0.0.1", "nobody@localhost.localdomain"]),
    "git_scp": lambda r: r.choice([
        f"origin\tgit@github.com:example-{r.randint(1, 99)}/shop.git (fetch)",
        f"git clone git@gitlab.example.com:platform/infra-{r.randint(1, 99)}.git",
        "ssh://git@bitbucket.org/team/repo.git"]),
    "message_id": lambda r: r.choice([
        f"Message-ID: <CA+{pick(r, B64URL, 40)}@mail.gmail.com>",
        f"In-Reply-To: <{digits(r, 14)}.{pick(r, HEX, 8)}@mail.example.de>",
        f"References: <{pick(r, HEX, 32)}@DB9PR07MB{digits(r, 4)}.eurprd07.prod.outlook.com>"]),
    "at_filename": lambda r: r.choice([
        f"assets/logo@{r.randint(2, 3)}x.png", "node_modules/@types/node/index.d.ts",
        f"systemctl status getty@tty{r.randint(1, 6)}.service", f"icons/cart@2x.{r.choice(['webp', 'png'])}",
        "~/.config/systemd/user/worker@1.service"]),
    "package_spec": lambda r: r.choice([
        f"lodash@4.17.{r.randint(10, 21)}", f"@babel/core@7.{r.randint(20, 25)}.0", "npx create-next-app@latest",
        f"go get golang.org/x/net@v0.{r.randint(10, 30)}.0",
        f"pip install requests=={r.randint(2, 2)}.32.{r.randint(0, 3)}",
        f"\"@shopify/polaris\": \"^12.{r.randint(0, 9)}.0\""]),
    "k8s_names": lambda r: r.choice([
        f"pod/checkout-{pick(r, HEX, 9)}-{pick(r, 'bcdfghjklmnpqrstvwxz2456789', 5)}",
        "app.kubernetes.io/name=checkout,app.kubernetes.io/instance=prod", "secret/db-credentials created",
        f"Warning  BackOff  3m (x{r.randint(2, 40)} over 10m)  kubelet  Back-off restarting failed container",
        f"kube-api-access-{pick(r, 'bcdfghjklmnpqrstvwxz2456789', 5)}"]),
    "arn": lambda r: r.choice([
        f"arn:aws:iam::{digits(r, 12)}:role/deploy-{r.randint(1, 9)}",
        f"arn:aws:secretsmanager:eu-central-1:{digits(r, 12)}:secret:prod/db-{pick(r, B62, 6)}",
        f"arn:aws:s3:::shop-invoices-{digits(r, 4)}/2024/*", f"arn:aws:kms:us-east-1:{digits(r, 12)}:key/"
        f"{uuid.UUID(int=r.getrandbits(128), version=4)}"]),
    "public": lambda r: r.choice([
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{pick(r, B64, 43)} deploy@ci",
        f"STRIPE_PUBLISHABLE_KEY=pk_live_{pick(r, B62, 24)}",
        f"mapboxgl.accessToken = 'pk.{b64url(json.dumps({'u': 'studio', 'a': pick(r, HEX, 12)}).encode())}"
        f".{pick(r, B64URL, 22)}'", f"SUPABASE_PUBLISHABLE_KEY=sb_publishable_{pick(r, B64URL, 31)}",
        f"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE{pick(r, B64, 52)}\n"
        "-----END PUBLIC KEY-----"]),
    "base64_text": lambda r: r.choice([
        "data: " + base64.b64encode(r.choice([b"hello world, this is a test", b"Bestellung versendet",
                                              b"{\"theme\":\"dark\",\"lang\":\"de\"}"])).decode(),
        "X-Client-Data: " + base64.b64encode(f"client=web;ver={r.randint(1, 99)}".encode()).decode(),
        "annotation: " + base64.b64encode(f"last-applied-configuration v{r.randint(1, 9)}".encode()).decode()]),
    "hashes": lambda r: r.choice([
        f"md5: {pick(r, HEX, 32)}", f"{pick(r, HEX, 64)}  shop-{r.randint(1, 9)}.tar.gz",
        f"sha1={pick(r, HEX, 40)}", f"checksum: blake2b-{pick(r, HEX, 64)}"]),
    "game_ids": lambda r: r.choice([
        f"player id {luhn_bad('1' + digits(r, 17))} joined", f"SteamID64 {luhn_bad('7656119' + digits(r, 10))}",
        f"match {digits(r, 10)} ended 3:2", f"guild {luhn_bad('9' + digits(r, 17))} channel {digits(r, 18)}"]),
    "aws_public": lambda r: r.choice([
        f"AWS account {digits(r, 12)} (prod)", "AWS_REGION=eu-central-1", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        f"InstanceId: i-{pick(r, HEX, 17)}", f"sg-{pick(r, HEX, 17)} vpc-{pick(r, HEX, 8)}"]),
}
"""Sort -> one near miss in the shape these teams' data holds it; none is a secret or personal data."""


def generate_negatives(per_sort: int = NEGATIVES_PER_SORT, seed: int = SEED) -> Iterator[tuple[str, str]]:
    """(sort, text) near misses, `per_sort` of each sort, the same for the same seed."""
    for i, (sort, make) in enumerate(NEGATIVES.items()):
        rng = random.Random(f"{seed}:neg:{i}:{sort}")
        for _ in range(per_sort):
            yield sort, make(rng)
