"""The tenth redaction corpus: secrets and personal data in the developer machine's files and the human documents an
agent reads and writes, written from the kinds' public formats by someone who read neither the rules nor the other
corpora.

Carriers: credential and config files (.netrc, .pgpass, .pypirc, .git-credentials, docker config.json,
kubeconfig, ~/.aws/credentials, .s3cfg, rclone.conf, wp-config.php, Laravel .env, settings.py, appsettings.json,
application.yml, database.yml, gradle.properties, Maven settings.xml, NuGet.config, composer auth.json, ~/.ssh,
Postman and Insomnia exports, Bruno files, VS Code launch.json/settings.json, DBeaver, FileZilla), password manager
and browser exports (Bitwarden JSON/CSV, 1Password and KeePass CSV, Chrome passwords CSV), git output (`git log -p`,
`git config --list`, PR review comments), Jira, Confluence storage format, Notion Markdown, GitHub issues, e-mail
(MIME headers, `>` quotes, signatures, forwards), office text (docx, `;` CSV, PDF text), chat exports (Teams,
Telegram JSON, WhatsApp), mobile logs (logcat, iOS Console, Metro), SMS, customer forms (KYC, shipping labels, HR
onboarding, medical intake) and Jupyter notebooks. Labels and prose in 24 languages. A third of the cases are JSON
documents. Forms are `carrier/style`; in human documents `carrier/language/style`.

Formats and their sources:
- card: ISO/IEC 7812 IIN ranges as the networks publish them (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
  Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62, Mir 2200-2204), Luhn (ISO/IEC 7812-1 annex B).
- iban: ISO 13616 and the SWIFT IBAN registry's BBAN structures (Iran's Sheba from the Central Bank of Iran),
  MOD 97-10 (ISO 7064).
- ssn: SSA's rules (area 001-899 less 666, group 01-99, serial 0001-9999). Phones: each national numbering plan
  (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT, Anatel, ACMA, ICASA, KCC, BTK, OFCOM CH), ITU-T E.164 international forms.
- email: RFC 5322 and RFC 6531 (UTF-8 local parts and IDN domains), RFC 3986 percent-encoding, HTML `&#64;`.
- aws_secret: AWS IAM access keys (AKIA/ASIA ids of 20 base32 characters, 40-character secrets).
- stripe_whsec: Stripe webhook signing secrets (`whsec_`, dashboard and Stripe CLI forms). webhook: Slack,
  Discord, Microsoft Teams (Office 365 connector and Power Automate), Google Chat, Mattermost, Rocket.Chat, Zapier,
  DingTalk, Feishu and WeCom incoming-webhook URLs as their docs print them.
- connection_string: Azure Storage/Service Bus connection strings, ADO.NET, JDBC, ODBC and RFC 3986 userinfo URIs.
- Providers, from each one's token docs: Atlassian (`ATATT3xFfGF0`, CRC tail), Grafana (`glsa_`, `glc_`), Pulumi
  (`pul-`), Doppler (`dp.pt.`, `dp.st.`, `dp.sa.`), Postman (`PMAK-`), Notion (`secret_`, `ntn_`), Figma (`figd_`),
  Mapbox secret tokens (`sk.` + JWT-like), DigitalOcean (`dop_v1_`, `doo_v1_`), Databricks (`dapi`), Sentry
  (`sntrys_`, `sntryu_`), New Relic (`NRAK-`, license keys ending `NRAL`), Shopify (`shpat_`, `shpss_`, `shpca_`),
  Linear (`lin_api_`), HashiCorp Vault (`hvs.`, `hvb.`), Tailscale (`tskey-auth-`, `tskey-api-`), age (bech32
  `AGE-SECRET-KEY-1`, BIP 173 checksum), Terraform Cloud (`.atlasv1.`), CircleCI (`CCIPAT_`, `CCIPRJ_`), Google
  OAuth client secrets (`GOCSPX-`), Azure AD client secrets (`Q~` inside), Square (`EAAA`, `sq0csp-`) and Braintree
  (`access_token$production$`).
- private_key: PEM (RFC 7468) of PKCS#1, SEC 1 and PKCS#8 DER (X.690). openssh_key: OpenSSH PROTOCOL.key and
  PuTTY PPK v3. pgp_private_key: OpenPGP armor (RFC 4880, CRC-24). jwt: RFC 7519/7515. auth_header: RFC 7617
  Basic, RFC 6750 Bearer, RFC 7616 Digest, AWS SigV4, DRF `Token`, Okta `SSWS`. session_cookie: RFC 6265 with each
  framework's session cookie name and value shape.
- National ids (OUTSIDE_TARGET): BR CPF (mod 11), NL BSN (11-proof), PL PESEL (weights 1-3-7-9), SE personnummer
  (Luhn), IS kennitala (mod 11).
"""

from __future__ import annotations

import base64
import json
import math
import random
import string
import uuid
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from benchmarks.corpus_formats import (
    B62,
    b64url,
    bban,
    bech32,
    crc_b62,
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
    ssh_string,
)

SEED = 20261206
PER_KIND = 100
OUTSIDE_TARGET = frozenset({"br_cpf", "nl_bsn", "pl_pesel", "se_personnummer", "is_kennitala"})
"""National ids: personal data, but whether the tool is held to each country's id is not settled."""

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"
BASE32 = string.ascii_uppercase + "234567"


@dataclass(frozen=True)
class Case:
    """One planted value: its kind, the value that must not survive, the text it is written in, that text as
    stored (message text, or a JSON document when is_json) and its form, `carrier/style`."""

    kind: str
    secret: str
    text: str
    carried: str
    is_json: bool
    form: str


class Slot(NamedTuple):
    """What a carrier writes: a label (an identifier or a human label), the value, the language of the prose."""

    label: str
    value: str
    lang: str


Carrier = Callable[[random.Random, Slot], object]
"""A carrier returns a text, or a JSON document (dict or list) that holds the value in one of its strings."""

# ---- people, places, languages ----------------------------------------------------------------------------------

NAMES = {
    "en": ["Emily Carter", "James O'Neill", "Priya Shah", "Liam Walsh"], "de": ["Jana Köhler", "Lukas Brandt"],
    "fr": ["Élodie Marchand", "Hugo Lefèvre"], "es": ["Lucía Ortega", "Javier Molina"], "ja": ["佐藤 美咲", "高橋 健"],
    "zh": ["王芳", "李明"], "ms": ["Nur Aisyah binti Rahman", "Muhammad Hafiz"], "tl": ["Maria Santos", "Jose Reyes"],
    "bn": ["রাহুল দাস", "তানিয়া রহমান"], "fa": ["سارا محمدی", "علی رضایی"], "sw": ["Amani Mwangi", "Neema Otieno"],
    "ca": ["Jordi Puig", "Laia Ferrer"], "sk": ["Zuzana Horváthová", "Martin Kováč"],
    "hr": ["Ivana Babić", "Marko Horvat"],
    "sr_cyrl": ["Милица Јовановић", "Никола Петровић"], "sr_latn": ["Milica Jovanović", "Nikola Petrović"],
    "bg": ["Мария Георгиева", "Иван Димитров"], "lt": ["Rūta Kazlauskienė", "Tomas Petraitis"],
    "et": ["Kadri Tamm", "Mart Saar"], "is": ["Guðrún Jónsdóttir", "Sigurður Ólafsson"],
    "pt": ["Ana Beatriz Souza", "Rafael Lima"], "ko": ["김민지", "박서준"], "tr": ["Elif Yılmaz", "Mehmet Kaya"],
    "it": ["Giulia Rossi", "Marco Bianchi"],
}
LANGS = tuple(NAMES)
CORE_LANGS = LANGS[:20]
"""The twenty languages the brief names; pt, ko, tr and it come with their countries' phone plans."""

PHONE_WORDS = {
    "en": ("Phone:", "Tel:", "Mobile:", "call me at", "my cell is", "reach me on"),
    "de": ("Telefon:", "Tel.:", "Handy:", "Mobil:", "ruf mich an unter"),
    "fr": ("Téléphone :", "Tél. :", "Portable :", "appelez-moi au"),
    "es": ("Teléfono:", "Tel.:", "Móvil:", "llámame al"),
    "ja": ("電話:", "携帯:", "電話番号：", "TEL:"), "zh": ("电话：", "手机：", "联系电话:", "手机号"),
    "ms": ("Telefon:", "No. telefon:", "Tel. bimbit:", "hubungi saya di"),
    "tl": ("Telepono:", "Numero ng telepono:", "Cellphone:", "tawagan mo ako sa"),
    "bn": ("ফোন:", "মোবাইল:", "ফোন নম্বর:", "আমাকে কল করুন"),
    "fa": ("تلفن:", "شماره تلفن:", "موبایل:", "با من تماس بگیرید"),
    "sw": ("Simu:", "Nambari ya simu:", "nipigie kwa", "Simu ya mkononi:"),
    "ca": ("Telèfon:", "Mòbil:", "truca'm al", "Tel.:"), "sk": ("Telefón:", "Mobil:", "Tel. č.:", "zavolajte mi na"),
    "hr": ("Telefon:", "Mobitel:", "nazovite me na", "Tel.:"), "sr_cyrl": ("Телефон:", "Мобилни:", "позовите ме на"),
    "sr_latn": ("Telefon:", "Mobilni:", "pozovite me na"), "bg": ("Телефон:", "Мобилен:", "Тел.:", "обадете ми се на"),
    "lt": ("Telefonas:", "Tel.:", "Mobilusis:", "skambinkite"), "et": ("Telefon:", "Mobiil:", "Tel:", "helista mulle"),
    "is": ("Sími:", "Farsími:", "hringdu í", "Símanúmer:"), "pt": ("Telefone:", "Celular:", "me liga no", "Tel.:"),
    "ko": ("전화:", "휴대폰:", "연락처:", "전화번호"), "tr": ("Telefon:", "Cep:", "GSM:", "beni şu numaradan arayın"),
    "it": ("Telefono:", "Cell.:", "chiamami al", "Tel.:"),
}
WORDS = {  # email, card number, IBAN, password, national id, "thanks"
    "en": ("E-mail", "Card number", "IBAN", "Password", "ID number", "Thanks"),
    "de": ("E-Mail", "Kartennummer", "IBAN", "Passwort", "Ausweisnummer", "Danke"),
    "fr": ("Courriel", "Numéro de carte", "IBAN", "Mot de passe", "Numéro d'identité", "Merci"),
    "es": ("Correo", "Número de tarjeta", "IBAN", "Contraseña", "Número de identificación", "Gracias"),
    "ja": ("メール", "カード番号", "IBAN", "パスワード", "個人番号", "よろしくお願いします"),
    "zh": ("邮箱", "卡号", "IBAN", "密码", "证件号码", "谢谢"),
    "ms": ("E-mel", "Nombor kad", "IBAN", "Kata laluan", "No. pengenalan", "Terima kasih"),
    "tl": ("Email", "Numero ng card", "IBAN", "Password", "Numero ng ID", "Salamat"),
    "bn": ("ইমেল", "কার্ড নম্বর", "IBAN", "পাসওয়ার্ড", "পরিচয় নম্বর", "ধন্যবাদ"),
    "fa": ("ایمیل", "شماره کارت", "شماره شبا", "رمز عبور", "کد ملی", "ممنون"),
    "sw": ("Barua pepe", "Namba ya kadi", "IBAN", "Nenosiri", "Namba ya kitambulisho", "Asante"),
    "ca": ("Correu", "Número de targeta", "IBAN", "Contrasenya", "Número d'identitat", "Gràcies"),
    "sk": ("E-mail", "Číslo karty", "IBAN", "Heslo", "Rodné číslo", "Ďakujem"),
    "hr": ("E-pošta", "Broj kartice", "IBAN", "Lozinka", "OIB", "Hvala"),
    "sr_cyrl": ("Имејл", "Број картице", "IBAN", "Лозинка", "ЈМБГ", "Хвала"),
    "sr_latn": ("Imejl", "Broj kartice", "IBAN", "Lozinka", "JMBG", "Hvala"),
    "bg": ("Имейл", "Номер на карта", "IBAN", "Парола", "ЕГН", "Благодаря"),
    "lt": ("El. paštas", "Kortelės numeris", "IBAN", "Slaptažodis", "Asmens kodas", "Ačiū"),
    "et": ("E-post", "Kaardi number", "IBAN", "Parool", "Isikukood", "Aitäh"),
    "is": ("Netfang", "Kortanúmer", "IBAN", "Lykilorð", "Kennitala", "Takk"),
    "pt": ("E-mail", "Número do cartão", "IBAN", "Senha", "CPF", "Obrigado"),
    "ko": ("이메일", "카드 번호", "IBAN", "비밀번호", "주민등록번호", "감사합니다"),
    "tr": ("E-posta", "Kart numarası", "IBAN", "Şifre", "T.C. Kimlik No", "Teşekkürler"),
    "it": ("Email", "Numero carta", "IBAN", "Password", "Codice fiscale", "Grazie"),
}
TS = ("2025-11-03T09:14:22Z", "2025-12-01T17:40:05+01:00", "2026-01-15T06:02:51Z", "2025-10-20T22:31:09-05:00")


def name(rng: random.Random, lang: str) -> str:
    """A person's name in `lang`."""
    return rng.choice(NAMES[lang])


def word(lang: str, i: int) -> str:
    """The i-th label of WORDS in `lang`."""
    return WORDS[lang][i]


# ---- value generators: secrets ----------------------------------------------------------------------------------

SYLLABLES = ("Sun", "flower", "Harbor", "River", "kettle", "Mango", "orbit", "Tiger", "Pixel", "Lotus", "maple")


def password(rng: random.Random) -> str:
    """A password as people and generators make them: words with digits and a symbol, or 14-24 random chars."""
    if rng.random() < 0.5:
        words = "".join(rng.choice(SYLLABLES) for _ in range(2))
        return f"{words}{rng.choice('-_.!')}{digits(rng, rng.randint(2, 4))}{rng.choice('!%*+=?')}"
    return pick(rng, ALNUM + "!%*+-_=.?@~^", rng.randint(14, 24))


def uri_password(rng: random.Random) -> str:
    """A password safe in URI userinfo without percent-encoding (RFC 3986 unreserved)."""
    return pick(rng, ALNUM + "-._~", rng.randint(12, 22))


def aws_id(rng: random.Random) -> str:
    """An AWS access key id: AKIA (long-term) or ASIA (temporary) and 16 base32 characters."""
    return rng.choice(("AKIA", "ASIA")) + pick(rng, BASE32, 16)


def aws_secret(rng: random.Random) -> str:
    """A 40-character AWS secret access key with at least one `/` or `+`."""
    body = list(pick(rng, B64, 40))
    body[rng.randrange(40)] = rng.choice("/+")
    return "".join(body)


def webhook(rng: random.Random) -> tuple[str, str]:
    """(url, secret part): the part of an incoming-webhook URL that grants posting."""
    choice = rng.randrange(10)
    if choice == 0:
        tail = f"T{pick(rng, UPPER_ALNUM, 8)}/B{pick(rng, UPPER_ALNUM, 10)}/{pick(rng, ALNUM, 24)}"
        return f"https://hooks.slack.com/services/{tail}", tail
    if choice == 1:
        tail = f"{digits(rng, 19)}/{pick(rng, B64URL, 68)}"
        return f"https://discord.com/api/webhooks/{tail}", tail
    if choice == 2:
        tail = f"{guid(rng)}@{guid(rng)}/IncomingWebhook/{pick(rng, HEX, 32)}/{guid(rng)}"
        return f"https://contoso.webhook.office.com/webhookb2/{tail}", tail
    if choice == 3:
        sig = pick(rng, B64URL, 43)
        return (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
                f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={sig}",
                sig)
    if choice == 4:
        tail = f"key=AIzaSy{pick(rng, B64URL, 33)}&token={pick(rng, B64URL, 43)}%3D"
        return f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, B64URL, 7)}/messages?{tail}", tail
    if choice == 5:
        tail = pick(rng, LOWER_ALNUM, 26)
        return f"https://mattermost.intra.example.net/hooks/{tail}", tail
    if choice == 6:
        tail = f"{pick(rng, ALNUM, 17)}/{pick(rng, ALNUM, 48)}"
        return f"https://chat.team.example.org/hooks/{tail}", tail
    if choice == 7:
        tail = f"{digits(rng, 8)}/{pick(rng, LOWER_ALNUM, 7)}"
        return f"https://hooks.zapier.com/hooks/catch/{tail}/", tail
    if choice == 8:
        tail = pick(rng, HEX, 64)
        return f"https://oapi.dingtalk.com/robot/send?access_token={tail}", tail
    tail = guid(rng)
    host = rng.choice(("https://open.feishu.cn/open-apis/bot/v2/hook/", "https://qyapi.weixin.qq.com/cgi-bin/webhook/"
                                                                         "send?key="))
    return host + tail, tail


def whsec(rng: random.Random) -> str:
    """A Stripe webhook signing secret: the dashboard's (32 base62) or the Stripe CLI's (64 hex)."""
    return "whsec_" + (pick(rng, ALNUM, 32) if rng.random() < 0.6 else pick(rng, HEX, 64))


def b64key(rng: random.Random, nbytes: int) -> str:
    """`nbytes` random bytes in padded base64 (Azure account and SAS keys)."""
    return base64.b64encode(rng.randbytes(nbytes)).decode()


def guid(rng: random.Random) -> str:
    """A random version-4 UUID."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def b64json(obj: dict) -> str:
    """A JSON object in unpadded base64url, as JWTs and some tokens embed one."""
    return b64url(json.dumps(obj, separators=(",", ":")).encode())


def crc_hex(body: str) -> str:
    """CRC32 of `body` in 8 upper-case hex digits (Atlassian's and Grafana's token tails)."""
    return f"{zlib.crc32(body.encode()):08X}"


PROVIDERS: dict[str, tuple[Callable[[random.Random], str], tuple[str, ...]]] = {
    # kind: (token, the variable names its docs use)
    "atlassian_token": (lambda r: (lambda b: f"ATATT3xFfGF0{b}={crc_hex(b)}")(pick(r, B64URL, 171)),
                        ("JIRA_API_TOKEN", "CONFLUENCE_API_TOKEN", "ATLASSIAN_API_TOKEN", "jira.token")),
    "grafana_token": (lambda r: r.choice((
        lambda: (lambda b: f"glsa_{b}_{crc_hex(b).lower()}")(pick(r, ALNUM, 32)),
        lambda: "glc_" + base64.b64encode(json.dumps({
            "o": digits(r, 6), "n": f"stack-{digits(r, 6)}-hm-write-ci", "k": pick(r, ALNUM, 24),
            "m": {"r": r.choice(("prod-eu-west-2", "prod-us-east-0", "prod-ap-southeast-1"))}},
            separators=(",", ":")).encode()).decode()))(),
                      ("GRAFANA_SERVICE_ACCOUNT_TOKEN", "GRAFANA_AUTH", "grafana_api_key", "GRAFANA_CLOUD_TOKEN")),
    "pulumi_token": (lambda r: "pul-" + pick(r, HEX, 40), ("PULUMI_ACCESS_TOKEN", "pulumiToken")),
    "doppler_token": (lambda r: r.choice((f"dp.pt.{pick(r, ALNUM, 43)}", f"dp.sa.{pick(r, ALNUM, 43)}",
                                          f"dp.st.{r.choice(('dev', 'stg', 'prd'))}.{pick(r, ALNUM, 40)}")),
                      ("DOPPLER_TOKEN", "DOPPLER_SERVICE_TOKEN")),
    "postman_key": (lambda r: f"PMAK-{pick(r, HEX, 24)}-{pick(r, HEX, 34)}", ("POSTMAN_API_KEY", "postmanApiKey")),
    "notion_token": (lambda r: r.choice((f"secret_{pick(r, ALNUM, 43)}", f"ntn_{digits(r, 11)}{pick(r, ALNUM, 35)}")),
                     ("NOTION_TOKEN", "NOTION_API_KEY", "notionSecret")),
    "figma_token": (lambda r: f"figd_{pick(r, B64URL, 40)}", ("FIGMA_TOKEN", "FIGMA_ACCESS_TOKEN")),
    "mapbox_secret": (lambda r: "sk." + b64json({"u": r.choice(("acme-maps", "geo-team", "rideshare")),
                                                 "a": pick(r, LOWER_ALNUM, 25)}) + "." + pick(r, B64URL, 22),
                      ("MAPBOX_DOWNLOADS_TOKEN", "MAPBOX_SECRET_TOKEN", "SDK_REGISTRY_TOKEN")),
    "digitalocean_token": (lambda r: r.choice(("dop_v1_", "doo_v1_")) + pick(r, HEX, 64),
                           ("DIGITALOCEAN_ACCESS_TOKEN", "DO_TOKEN")),
    "databricks_token": (lambda r: "dapi" + pick(r, HEX, 32) + r.choice(("", "-2", "-3")),
                         ("DATABRICKS_TOKEN", "databricks_pat")),
    "sentry_token": (lambda r: r.choice((
        "sntrys_" + base64.b64encode(json.dumps({"iat": 1730000000 + r.randrange(10**7), "url": "https://sentry.io",
                                                 "region_url": "https://de.sentry.io", "org": "acme"},
                                                separators=(",", ":")).encode()).decode()
        + "_" + pick(r, B64URL, 43), "sntryu_" + pick(r, HEX, 64))), ("SENTRY_AUTH_TOKEN", "sentryAuthToken")),
    "newrelic_key": (lambda r: r.choice(("NRAK-" + pick(r, UPPER_ALNUM, 27), pick(r, HEX, 36) + "NRAL")),
                     ("NEW_RELIC_API_KEY", "NEW_RELIC_LICENSE_KEY", "newrelic.license_key")),
    "shopify_token": (lambda r: r.choice(("shpat_", "shpss_", "shpca_")) + pick(r, HEX, 32),
                      ("SHOPIFY_ACCESS_TOKEN", "SHOPIFY_API_SECRET", "shopifyAdminToken")),
    "linear_key": (lambda r: "lin_api_" + pick(r, ALNUM, 40), ("LINEAR_API_KEY", "linearToken")),
    "vault_token": (lambda r: r.choice(("hvs.CAESI" + pick(r, B64URL, 86), "hvb.AAAAAQ" + pick(r, B64URL, 130))),
                    ("VAULT_TOKEN", "vault_token")),
    "tailscale_key": (lambda r: f"tskey-{r.choice(('auth', 'api', 'client'))}-k{pick(r, ALNUM, 10)}CNTRL-"
                                f"{pick(r, ALNUM, 33)}", ("TS_AUTHKEY", "TAILSCALE_API_KEY", "TS_OAUTH_SECRET")),
    "age_secret_key": (lambda r: bech32("age-secret-key-", r.randbytes(32)).upper(), ("SOPS_AGE_KEY", "AGE_KEY")),
    "terraform_token": (lambda r: f"{pick(r, ALNUM, 14)}.atlasv1.{pick(r, ALNUM, 67)}",
                        ("TF_TOKEN_app_terraform_io", "TFE_TOKEN", "ATLAS_TOKEN")),
    "circleci_token": (lambda r: f"{r.choice(('CCIPAT_', 'CCIPRJ_'))}{pick(r, ALNUM, 22)}_{pick(r, HEX, 40)}",
                       ("CIRCLECI_TOKEN", "CIRCLE_TOKEN")),
    "gcp_oauth_secret": (lambda r: "GOCSPX-" + pick(r, B64URL, 28), ("GOOGLE_CLIENT_SECRET", "client_secret")),
    "azure_client_secret": (lambda r: pick(r, ALNUM, 3) + r.choice("78") + "Q~" + pick(r, ALNUM + "_.~-", 34),
                            ("AZURE_CLIENT_SECRET", "ClientSecret", "clientSecret", "ARM_CLIENT_SECRET")),
    "square_token": (lambda r: r.choice(("EAAA" + pick(r, B64URL, 60), "sq0csp-" + pick(r, B64URL, 43))),
                     ("SQUARE_ACCESS_TOKEN", "SQUARE_APPLICATION_SECRET")),
    "braintree_token": (lambda r: f"access_token$production${pick(r, LOWER_ALNUM, 16)}${pick(r, HEX, 32)}",
                        ("BRAINTREE_ACCESS_TOKEN", "braintreeAccessToken")),
}


def pem(label: str, der_bytes: bytes) -> str:
    """RFC 7468 text: the label's lines around base64 in lines of 64."""
    body = group(base64.b64encode(der_bytes).decode(), 64, "\n")
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"


def rsa_der(rng: random.Random) -> bytes:
    """A PKCS#1 RSAPrivateKey of 2048-bit shape (random integers of the right sizes, RFC 8017 A.1.2)."""
    big = lambda bits: rng.getrandbits(bits) | 1 << (bits - 1) | 1  # noqa: E731
    return der_seq(der_int(0), der_int(big(2048)), der_int(65537), der_int(big(2047)),
                   *(der_int(big(1024)) for _ in range(5)))


def private_key(rng: random.Random) -> str:
    """A PEM private key: PKCS#1 RSA, SEC 1 EC (P-256), or PKCS#8 holding RSA or Ed25519."""
    choice = rng.randrange(4)
    if choice == 0:
        return pem("RSA PRIVATE KEY", rsa_der(rng))
    if choice == 1:
        ec = der_seq(der_int(1), der(0x04, rng.randbytes(32)), der(0xA0, bytes.fromhex("06082a8648ce3d030107")),
                     der(0xA1, der(0x03, b"\x00\x04" + rng.randbytes(64))))
        return pem("EC PRIVATE KEY", ec)
    if choice == 2:
        algo = der_seq(bytes.fromhex("06092a864886f70d010101"), bytes.fromhex("0500"))
        return pem("PRIVATE KEY", der_seq(der_int(0), algo, der(0x04, rsa_der(rng))))
    algo = der_seq(bytes.fromhex("06032b6570"))
    return pem("PRIVATE KEY", der_seq(der_int(0), algo, der(0x04, der(0x04, rng.randbytes(32)))))


def openssh_key(rng: random.Random) -> str:
    """An OpenSSH Ed25519 private key file, or a PuTTY PPK v3 one (its Private-Lines are the secret)."""
    if rng.random() < 0.7:
        blob = openssh_ed25519_blob(rng.randbytes(32), rng.randbytes(32), rng.randbytes(4), b"dev@laptop")
        body = group(base64.b64encode(blob).decode(), 70, "\n")
        return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n"
    public = base64.b64encode(ssh_string(b"ssh-ed25519") + ssh_string(rng.randbytes(32))).decode()
    private = base64.b64encode(ssh_string(rng.randbytes(32))).decode()
    return (f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-2025{digits(rng, 4)}\n"
            f"Public-Lines: 2\n{group(public, 64, chr(10))}\nPrivate-Lines: 1\n{private}\n"
            f"Private-MAC: {pick(rng, HEX, 64)}\n")


def crc24(data: bytes) -> int:
    """RFC 4880's CRC-24 of the armor checksum."""
    crc = 0xB704CE
    for byte in data:
        crc ^= byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def pgp_key(rng: random.Random) -> str:
    """An armored OpenPGP secret key: a v4 secret-key packet (tag 5, EdDSA) header and random key material."""
    body = bytes([4]) + rng.randbytes(4) + bytes([22, 9]) + bytes.fromhex("2b06010401da470f01") + rng.randbytes(80)
    packet = bytes([0xC5, len(body)]) + body
    text = group(base64.b64encode(packet).decode(), 64, "\n")
    check = base64.b64encode(crc24(packet).to_bytes(3, "big")).decode()
    return f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{text}\n={check}\n-----END PGP PRIVATE KEY BLOCK-----\n"


def key_body(key: str) -> tuple[str, str]:
    """The first and last line of a key file's secret part (its base64 lines, no armor or MAC)."""
    lines = key.splitlines()
    if lines[0].startswith("PuTTY"):
        i = lines.index("Private-Lines: 1")
        return lines[i + 1], lines[i + 1]
    body = [ln for ln in lines[1:-1] if ln and not ln.startswith("=")]
    return body[0], body[-1]


def jwt(rng: random.Random) -> str:
    """A signed JWT: HS256, RS256 or ES256 header, a payload with a subject and times, a signature of its size."""
    alg, size = rng.choice((("HS256", 32), ("RS256", 256), ("ES256", 64)))
    iat = 1730000000 + rng.randrange(3 * 10**7)
    payload = {"sub": guid(rng), "iat": iat, "exp": iat + rng.choice((900, 3600, 86400)),
               "iss": rng.choice(("https://auth.acme.io", "https://login.microsoftonline.com/common/v2.0",
                                  "kubernetes/serviceaccount")), "scope": rng.choice(("read write", "openid"))}
    return f"{b64json({'alg': alg, 'typ': 'JWT'})}.{b64json(payload)}.{b64url(rng.randbytes(size))}"


def auth_header(rng: random.Random) -> tuple[str, str, str]:
    """(the Authorization header's value, its secret part, its scheme)."""
    scheme = rng.choice(("basic", "bearer", "digest", "sigv4", "token", "ssws"))
    if scheme == "basic":
        user = rng.choice(("deploy", "ci-bot", "admin", "jenkins"))
        cred = base64.b64encode(f"{user}:{uri_password(rng)}".encode()).decode()
        return f"Basic {cred}", cred, scheme
    if scheme == "bearer":
        cred = pick(rng, ALNUM, rng.randint(32, 48))
        return f"Bearer {cred}", cred, scheme
    if scheme == "digest":
        cred = pick(rng, HEX, 32)
        return (f'Digest username="admin", realm="api@acme.io", nonce="{pick(rng, HEX, 32)}", uri="/v1/export", '
                f'qop=auth, nc=00000001, cnonce="{pick(rng, HEX, 8)}", response="{cred}"', cred, scheme)
    if scheme == "sigv4":
        cred = pick(rng, HEX, 64)
        return (f"AWS4-HMAC-SHA256 Credential={aws_id(rng)}/20251206/eu-west-1/s3/aws4_request, "
                f"SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature={cred}", cred, scheme)
    if scheme == "token":
        cred = pick(rng, HEX, 40)
        return f"Token {cred}", cred, scheme
    cred = "00" + pick(rng, B64URL, 40)
    return f"SSWS {cred}", cred, scheme


COOKIES = (("sessionid", lambda r: pick(r, LOWER_ALNUM, 32)), ("PHPSESSID", lambda r: pick(r, LOWER_ALNUM, 26)),
           ("JSESSIONID", lambda r: pick(r, HEX.upper(), 32)),
           ("laravel_session", lambda r: base64.b64encode(json.dumps(
               {"iv": pick(r, B64, 24), "value": pick(r, B64, 64), "mac": pick(r, HEX, 64)},
               separators=(",", ":")).encode()).decode().replace("=", "%3D")),
           ("connect.sid", lambda r: f"s%3A{pick(r, B64URL, 32)}.{pick(r, B64, 43)}".replace("+", "%2B")
            .replace("/", "%2F")),
           ("_session_id", lambda r: pick(r, HEX, 32)), ("ASP.NET_SessionId", lambda r: pick(r, LOWER_ALNUM, 24)),
           ("__Secure-next-auth.session-token",  # a JWE: dir + A256GCM header, no encrypted key
            lambda r: f"eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..{pick(r, B64URL, 16)}.{pick(r, B64URL, 120)}."
                      f"{pick(r, B64URL, 22)}"))


def session_cookie(rng: random.Random) -> tuple[str, str]:
    """(cookie name, session value) of a framework's session cookie."""
    cookie, value = rng.choice(COOKIES)
    return cookie, value(rng)


# ---- value generators: personal data -----------------------------------------------------------------------------

CARD_IINS = (("4", 16), ("51", 16), ("53", 16), ("55", 16), ("2221", 16), ("2720", 16), ("2500", 16), ("34", 15),
             ("37", 15), ("6011", 16), ("644", 16), ("65", 16), ("3528", 16), ("3589", 16), ("36", 14), ("62", 16),
             ("62", 19), ("2200", 16), ("2204", 16))


def card(rng: random.Random) -> tuple[str, str]:
    """(card number as printed, separator style): an IIN range of a network and a Luhn check digit."""
    iin, length = rng.choice(CARD_IINS)
    partial = iin + digits(rng, length - len(iin) - 1)
    number = partial + luhn_digit(partial)
    style, sep = rng.choice((("space", " "), ("dash", "-"), ("dot", "."), ("underscore", "_"), ("compact", ""),
                             ("space", " ")))
    return (group(number, 4, sep) if length == 19 else group_card(number, sep)), style


IBAN_BBANS = {"DE": "8n10n", "FR": "5n5n11c2n", "ES": "4n4n1n1n10n", "GB": "4a6n8n", "NL": "4a10n", "IT": "1a5n5n12c",
              "HR": "7n10n", "SK": "4n6n10n", "LT": "5n11n", "EE": "2n2n11n1n", "IS": "4n2n6n10n", "BG": "4a4n2n8c",
              "RS": "3n13n2n", "AD": "4n4n12c", "IR": "22n", "CH": "5n12c", "SE": "3n17n", "PL": "8n16n",
              "BR": "8n5n10n1a1c", "TR": "5n1n16c", "MU": "4a2n2n12n3n3a", "QA": "4a21c"}


def iban(rng: random.Random) -> tuple[str, str]:
    """(IBAN as written, style): a registry BBAN with MOD 97 check digits; grouped, compact or lower case."""
    country = rng.choice(tuple(IBAN_BBANS))
    basic = bban(rng, IBAN_BBANS[country])
    compact = country + iban_check(country, basic) + basic
    style = rng.choice(("grouped", "grouped", "compact", "lower_compact", "lower_grouped"))
    text = group(compact, 4, " ") if "grouped" in style else compact
    return (text.lower() if style.startswith("lower") else text), style


def ssn(rng: random.Random) -> tuple[str, str]:
    """(US SSN as written, style) under SSA's rules: area 001-899 but 666, group 01-99, serial 0001-9999."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    parts = (f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}")
    style, sep = rng.choice((("dash", "-"), ("dash", "-"), ("space", " "), ("compact", "")))
    return sep.join(parts), style


LOCALS = ("emily.carter", "j.oneill", "priya_shah", "liam.walsh82", "jana.koehler", "elodie.marchand", "lucia.ortega",
          "aisyah.rahman", "maria.santos", "amani.mwangi", "jordi.puig", "zuzana.h", "ivana.babic", "milica.j",
          "rkazlauskiene", "kadri.tamm", "gudrun.jons", "sato.misaki", "wangfang88", "ali.rezaei")
DOMAINS = ("gmail.com", "outlook.com", "yahoo.co.jp", "qq.com", "163.com", "gmx.de", "web.de", "orange.fr",
           "abv.bg", "azet.sk", "inbox.lt", "mail.ee", "simnet.is", "t-com.hr", "eunet.rs", "yahoo.com.my",
           "kampuni-digital.co.ke", "nordhaven-logistics.eu", "tallinn-dev.ee", "proton.me")
IDN = ("josé.garcía@correo-ñandú.es", "jürgen.müller@bücherei-köln.de", "þórður@póstur.is", "šimon.krajčí@pošta.sk",
       "ђорђе.петровић@пошта.срб", "иван.димитров@поща.бг", "রাহুল@ডাকঘর.ভারত", "سارا@ایمیل.ایران",
       "さとう@例え.日本", "张伟@公司.中国", "kadri.tämm@ülikool.ee", "rūta@paštas.lt", "čedomir@pošta.hr",
       "jördi.puig@correu.cat", "müşteri@alışveriş.com.tr")


def email(rng: random.Random) -> tuple[str, str, str]:
    """(address as written in the text, secret, style): plain, upper case, RFC 6531, %40, \\u0040, &#64;, mailto."""
    local = rng.choice(LOCALS) + rng.choice(("", digits(rng, 2), f".{rng.choice(('work', 'hr', 'fin'))}"))
    address = f"{local}@{rng.choice(DOMAINS)}"
    style = rng.choice(("plain", "plain", "upper", "idn", "pct40", "u0040", "amp64", "mailto"))
    if style == "upper":
        address = address.upper()
    if style == "idn":
        address = rng.choice(IDN)
    if style == "pct40":
        enc = address.replace("@", "%40")
        return f"https://crm.acme.io/contacts/search?email={enc}&page=1", enc, style
    if style == "u0040":
        enc = address.replace("@", "\\u0040")
        return f'{{"contact": "{enc}"}}', enc, style
    if style == "amp64":
        enc = address.replace("@", "&#64;")
        return f"<span>{enc}</span>", enc, style
    if style == "mailto":
        return f"<a href=\"mailto:{address}\">{address}</a>", address, style
    return address, address, style


def nanp(rng: random.Random) -> str:
    """Ten NANP digits: a real area code, an exchange 2-9XX that is not N11 nor 555, four line digits."""
    npa = rng.choice(("212", "213", "305", "312", "404", "415", "512", "617", "646", "702", "713", "718", "801",
                      "917", "206", "303", "416", "514", "604", "613", "403", "902"))
    nxx = rng.choice([f"{n}" for n in range(200, 1000) if n % 100 != 11 and n != 555])
    return npa + nxx + digits(rng, 4)


PHONE_STYLES: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "phone_us_ca": lambda r: (lambda d: r.choice((
        (f"({d[:3]}) {d[3:6]}-{d[6:]}", "paren"), (f"{d[:3]}-{d[3:6]}-{d[6:]}", "dash"),
        (f"{d[:3]}.{d[3:6]}.{d[6:]}", "dot"), (f"+1 {d[:3]} {d[3:6]} {d[6:]}", "intl_space"),
        (f"+1-{d[:3]}-{d[3:6]}-{d[6:]}", "intl_dash"), (f"1 ({d[:3]}) {d[3:6]}-{d[6:]}", "trunk_paren"),
        (f"+1{d}", "e164"), (f"+1 ({d[:3]}) {d[3:6]}-{d[6:]}", "intl_paren"))))(nanp(r)),
    "phone_uk": lambda r: (lambda m, ln: r.choice((
        (f"0{m[:4]} {m[4:]}", "mobile"), (f"+44 {m[:4]} {m[4:]}", "intl_mobile"), (f"+44 (0){m[:4]} {m[4:]}", "intl0"),
        (f"+44{m}", "e164"), (f"0044 {m[:4]} {m[4:]}", "00_mobile"), (f"0{m[:4]}-{m[4:7]}-{m[7:]}", "mobile_dash"),
        (f"020 {ln[:4]} {ln[4:]}", "london"), (f"+44 20 {ln[:4]} {ln[4:]}", "intl_london"),
        (f"(0161) {ln[1:4]} {ln[4:]}", "manchester"), (f"0131 {ln[1:4]} {ln[4:]}", "edinburgh"))))(
        "7" + r.choice("123457") + r.choice("12345689") + digits(r, 7),
        r.choice("378") + digits(r, 7)),
    "phone_fr": lambda r: (lambda d: r.choice((
        (group(d, 2, " "), "space"), (group(d, 2, "."), "dot"), (group(d, 2, "-"), "dash"), (d, "compact"),
        (f"+33 {d[1]} {group(d[2:], 2, ' ')}", "intl_space"), (f"+33 (0){d[1]} {group(d[2:], 2, ' ')}", "intl0"),
        (f"+33{d[1:]}", "e164"), (f"0033 {d[1]} {group(d[2:], 2, ' ')}", "00_space"))))(
        "0" + r.choice("1234567769") + digits(r, 8)),
    "phone_de": lambda r: (lambda p, n, c, ln: r.choice((
        (f"0{p} {n}", "mobile"), (f"0{p}-{n}", "mobile_dash"), (f"0{p}/{n}", "mobile_slash"),
        (f"+49 {p} {n}", "intl_mobile"), (f"+49 (0){p} {n}", "intl0"), (f"+49{p}{n}", "e164"),
        (f"0{c} {ln}", "landline"), (f"(0{c}) {ln}", "landline_paren"), (f"+49 {c} {ln}", "intl_landline"),
        (f"0049 {c} {ln}", "00_landline"), (f"+49-{c}-{ln}", "intl_dash"))))(
        r.choice(("151", "152", "157", "159", "160", "162", "163", "170", "171", "172", "173", "174", "175", "176",
                  "177", "178", "179")), digits(r, r.choice((7, 8))),
        r.choice(("30", "89", "40", "69", "221", "711", "211")), r.choice("2345678") + digits(r, 6)),
    "phone_in": lambda r: (lambda m, ln: r.choice((
        (f"+91 {m[:5]} {m[5:]}", "intl_space"), (f"+91-{m[:5]}-{m[5:]}", "intl_dash"), (f"0{m[:5]} {m[5:]}", "trunk"),
        (m, "compact"), (f"+91{m}", "e164"), (f"91 {m[:5]} {m[5:]}", "cc_space"), (f"{m[:5]} {m[5:]}", "mobile"),
        (f"011-{ln[:4]} {ln[4:]}", "delhi"), (f"+91 80 {ln[:4]} {ln[4:]}", "intl_bengaluru"),
        (f"022 {ln[:4]} {ln[4:]}", "mumbai"))))(r.choice("6789") + digits(r, 9), r.choice("2346") + digits(r, 7)),
    "phone_br": lambda r: (lambda ddd, m, ln: r.choice((
        (f"({ddd}) {m[:5]}-{m[5:]}", "mobile"), (f"+55 {ddd} {m[:5]}-{m[5:]}", "intl_mobile"),
        (f"+55 ({ddd}) {m[:5]} {m[5:]}", "intl_paren"), (f"+55{ddd}{m}", "e164"), (f"{ddd} {m}", "compact"),
        (f"({ddd}) {ln[:4]}-{ln[4:]}", "landline"), (f"+55 {ddd} {ln[:4]}-{ln[4:]}", "intl_landline"))))(
        r.choice(("11", "21", "31", "41", "51", "61", "71", "81", "85", "27", "48", "62")), "9" + digits(r, 8),
        r.choice("2345") + digits(r, 7)),
    "phone_au": lambda r: (lambda m, a, ln: r.choice((
        (f"04{m[:2]} {m[2:5]} {m[5:]}", "mobile"), (f"+61 4{m[:2]} {m[2:5]} {m[5:]}", "intl_mobile"),
        (f"+614{m}", "e164"), (f"04{m[:2]}-{m[2:5]}-{m[5:]}", "mobile_dash"),
        (f"(0{a}) {ln[:4]} {ln[4:]}", "landline_paren"), (f"0{a} {ln[:4]} {ln[4:]}", "landline"),
        (f"+61 {a} {ln[:4]} {ln[4:]}", "intl_landline"))))(
        r.choice(("0", "1", "2", "3", "5", "6", "7", "8")) + digits(r, 7), r.choice("2378"),
        r.choice("3456789") + digits(r, 7)),
    "phone_za": lambda r: (lambda p, n, a: r.choice((
        (f"0{p} {n[:3]} {n[3:]}", "mobile"), (f"+27 {p} {n[:3]} {n[3:]}", "intl_mobile"), (f"+27{p}{n}", "e164"),
        (f"0{p}-{n[:3]}-{n[3:]}", "mobile_dash"), (f"0{a} {n[:3]} {n[3:]}", "landline"),
        (f"+27 {a} {n[:3]} {n[3:]}", "intl_landline"), (f"(0{a}) {n[:3]}-{n[3:]}", "landline_paren"))))(
        r.choice(("60", "61", "62", "71", "72", "73", "74", "76", "78", "79", "81", "82", "83", "84")),
        r.choice("123456789") + digits(r, 6), r.choice(("11", "21", "12", "31", "41"))),
    "phone_kr": lambda r: (lambda m, s: r.choice((
        (f"010-{m[:4]}-{m[4:]}", "mobile"), (f"+82 10-{m[:4]}-{m[4:]}", "intl_mobile"),
        (f"+82 10 {m[:4]} {m[4:]}", "intl_space"), (f"010{m}", "compact"), (f"+8210{m}", "e164"),
        (f"02-{s[:4]}-{s[4:]}", "seoul"), (f"+82 2-{s[:4]}-{s[4:]}", "intl_seoul"),
        (f"051-{s[1:4]}-{s[4:]}", "busan"))))(r.choice("23456789") + digits(r, 7), r.choice("23456789") + digits(r, 7)),
    "phone_tr": lambda r: (lambda op, n, c: r.choice((
        (f"0{op} {n[:3]} {n[3:5]} {n[5:]}", "mobile"), (f"+90 {op} {n[:3]} {n[3:5]} {n[5:]}", "intl_mobile"),
        (f"+90 ({op}) {n[:3]} {n[3:5]} {n[5:]}", "intl_paren"), (f"0{op}-{n[:3]}-{n[3:]}", "mobile_dash"),
        (f"+90{op}{n}", "e164"), (f"0{c} {n[:3]} {n[3:5]} {n[5:]}", "landline"),
        (f"+90 {c} {n[:3]} {n[3:5]} {n[5:]}", "intl_landline"))))(
        r.choice(("530", "532", "535", "541", "542", "505", "506", "551", "553")), r.choice("23456789") + digits(r, 6),
        r.choice(("212", "216", "312", "232"))),
    "phone_ch": lambda r: (lambda m, a, n: r.choice((
        (f"07{m} {n[:3]} {n[3:5]} {n[5:]}", "mobile"), (f"+41 7{m} {n[:3]} {n[3:5]} {n[5:]}", "intl_mobile"),
        (f"+41 (0)7{m} {n[:3]} {n[3:5]} {n[5:]}", "intl0"), (f"0041 7{m} {n[:3]} {n[3:5]} {n[5:]}", "00_mobile"),
        (f"+417{m}{n}", "e164"), (f"0{a} {n[:3]} {n[3:5]} {n[5:]}", "landline"),
        (f"+41 {a} {n[:3]} {n[3:5]} {n[5:]}", "intl_landline"))))(
        r.choice("5679"), r.choice(("44", "22", "31", "61", "21", "91")), r.choice("23456789") + digits(r, 6)),
}
PHONE_LANGS = {"phone_us_ca": ("en", "es", "fr"), "phone_uk": ("en",), "phone_fr": ("fr",), "phone_de": ("de",),
               "phone_in": ("en", "bn"), "phone_br": ("pt",), "phone_au": ("en",), "phone_za": ("en", "sw"),
               "phone_kr": ("ko",), "phone_tr": ("tr",), "phone_ch": ("de", "fr", "it")}
"""Each plan's own languages; the rest of its cases take a context word from any of the twenty."""


def dob(rng: random.Random) -> tuple[int, int, int]:
    """A date of birth (year, month, day) between 1950 and 2006."""
    return rng.randint(1950, 2006), rng.randint(1, 12), rng.randint(1, 28)


def cpf(rng: random.Random) -> tuple[str, str]:
    """A Brazilian CPF (Receita Federal: two mod-11 check digits), dotted or compact."""
    d = [int(c) for c in digits(rng, 9)]
    for n in (10, 11):
        d.append(sum(x * (n - i) for i, x in enumerate(d)) * 10 % 11 % 10)
    s = "".join(map(str, d))
    return rng.choice(((f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}", "dotted"), (s, "compact")))


def bsn(rng: random.Random) -> tuple[str, str]:
    """A Dutch BSN passing the 11-proof (9a + 8b + ... + 2h - i divisible by 11)."""
    while True:
        d = [rng.randint(1, 9)] + [int(c) for c in digits(rng, 7)]
        last = sum(x * (9 - i) for i, x in enumerate(d)) % 11
        if last < 10:
            s = "".join(map(str, d)) + str(last)
            return rng.choice(((s, "compact"), (f"{s[:4]}.{s[4:6]}.{s[6:]}", "dotted")))


def pesel(rng: random.Random) -> tuple[str, str]:
    """A Polish PESEL: birth date (month + 20 after 2000), serial, check digit of weights 1-3-7-9."""
    y, m, d = dob(rng)
    head = f"{y % 100:02d}{m + (20 if y >= 2000 else 0):02d}{d:02d}{digits(rng, 4)}"
    check = (10 - sum(int(c) * w for c, w in zip(head, (1, 3, 7, 9) * 3, strict=False)) % 10) % 10
    return head + str(check), "compact"


def personnummer(rng: random.Random) -> tuple[str, str]:
    """A Swedish personnummer: YYMMDD, 3 digits, Luhn check digit; short, long or compact form."""
    y, m, d = dob(rng)
    nine = f"{y % 100:02d}{m:02d}{d:02d}{digits(rng, 3)}"
    s = nine + luhn_digit(nine)
    return rng.choice(((f"{s[:6]}-{s[6:]}", "short"), (f"{y // 100}{s[:6]}-{s[6:]}", "long"), (s, "compact")))


def kennitala(rng: random.Random) -> tuple[str, str]:
    """An Icelandic kennitala: DDMMYY, two digits, mod-11 check digit, century digit (9: 1900s, 0: 2000s)."""
    while True:
        y, m, d = dob(rng)
        head = f"{d:02d}{m:02d}{y % 100:02d}{rng.randint(20, 99)}"
        r = 11 - sum(int(c) * w for c, w in zip(head, (3, 2, 7, 6, 5, 4, 3, 2), strict=True)) % 11
        if r != 10:
            s = head + str(r % 11) + ("9" if y < 2000 else "0")
            return rng.choice(((f"{s[:6]}-{s[6:]}", "dash"), (s, "compact")))


NATIONAL_IDS = {"br_cpf": (cpf, ("CPF:", "CPF nº", "Cadastro de Pessoas Físicas:"), "pt"),
                "nl_bsn": (bsn, ("BSN:", "Burgerservicenummer:", "BSN-nummer"), "en"),
                "pl_pesel": (pesel, ("PESEL:", "nr PESEL", "Numer PESEL:"), "en"),
                "se_personnummer": (personnummer, ("Personnummer:", "Pers.nr", "personnr"), "en"),
                "is_kennitala": (kennitala, ("Kennitala:", "kt.", "Kennitala"), "is")}


# ---- carriers: config files and developer documents (Slot.label is an identifier) --------------------------------

def git_diff(rng: random.Random, s: Slot) -> str:
    """`git log -p` of a commit that added the line."""
    path = rng.choice((".env.production", "config/settings.local.py", "deploy/values.yaml", "scripts/sync.sh"))
    return (f"commit {pick(rng, HEX, 40)}\nAuthor: {name(rng, 'en')} <dev@acme.io>\n"
            f"Date:   Tue Nov 4 10:12:09 2025 +0100\n\n    wip: local config\n\ndiff --git a/{path} b/{path}\n"
            f"index {pick(rng, HEX, 7)}..{pick(rng, HEX, 7)} "
            f"100644\n--- a/{path}\n+++ b/{path}\n@@ -3,6 +3,7 @@\n LOG_LEVEL=info\n+{s.label}={s.value}\n TZ=UTC\n")


def confluence(rng: random.Random, s: Slot) -> str:
    """A Confluence page in storage format with a code macro."""
    return (f'<h2>Setup</h2><p>Copy this into your shell:</p><ac:structured-macro ac:name="code" ac:schema-version="1">'
            f'<ac:parameter ac:name="language">bash</ac:parameter><ac:plain-text-body><![CDATA[export {s.label}='
            f'"{s.value}"]]></ac:plain-text-body></ac:structured-macro>')


def ipynb_source(rng: random.Random, s: Slot) -> dict:
    """A Jupyter notebook whose cell sets the variable, with an output."""
    return {"cells": [{"cell_type": "code", "execution_count": rng.randint(1, 40), "metadata": {},
                       "source": ["import os\n", f'os.environ["{s.label}"] = "{s.value}"\n', "client = connect()"],
                       "outputs": [{"output_type": "stream", "name": "stdout", "text": ["connected\n"]}]}],
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


CONFIG: dict[str, Carrier] = {
    "laravel_env": lambda r, s: f"APP_NAME=Shop\nAPP_ENV=production\n{s.label}={s.value}\nLOG_CHANNEL=stack\n",
    "zshrc": lambda r, s: f'# ~/.zshrc\nexport PATH="$HOME/.local/bin:$PATH"\nexport {s.label}="{s.value}"\n',
    "application_yml": lambda r, s: f"spring:\n  application:\n    name: billing\nacme:\n  {s.label}: {s.value}\n",
    "gradle_properties": lambda r, s: f"org.gradle.jvmargs=-Xmx2g\nandroid.useAndroidX=true\n{s.label}={s.value}\n",
    "git_log_p": git_diff,
    "github_issue": lambda r, s: (f"### Steps to reproduce\n\n```sh\n{s.label}={s.value} npm run sync\n```\n\n"
                                  "### Expected\nThe sync finishes.\n"),
    "jira_wiki": lambda r, s: f"Tried again with:\n{{code:bash}}\nexport {s.label}='{s.value}'\n{{code}}\nstill 401.",
    "confluence_storage": confluence,
    "mail_quote": lambda r, s: (f"On Mon, 3 Nov 2025 at 09:14, {name(r, 'en')} wrote:\n> the staging value is\n"
                                f"> {s.label}={s.value}\n> rotate it after the demo\n"),
    "teams_chat": lambda r, s: f"[09:41] {name(r, 'en')}\nuse {s.label}={s.value} for now\n[09:42] {name(r, 'de')}\nok",
    "docker_run": lambda r, s: f"$ docker run --rm -e {s.label}={s.value} ghcr.io/acme/worker:1.8.2 --once",
    "pr_review": lambda r, s: (f"**src/config.ts** line {r.randint(5, 90)}\n> const {s.label} = \"{s.value}\";\n\n"
                               "Please move this to the secret store before merging."),
    "bruno_env": lambda r, s: f"vars {{\n  baseUrl: https://api.acme.io\n  {s.label}: {s.value}\n}}\n",
    "launch_json": lambda r, s: {"version": "0.2.0", "configurations": [
        {"type": "node", "request": "launch", "name": "worker", "program": "${workspaceFolder}/src/index.js",
         "env": {s.label: s.value}}]},
    "postman_env": lambda r, s: {"id": guid(r), "name": "staging", "values": [
        {"key": "baseUrl", "value": "https://api.acme.io", "type": "default", "enabled": True},
        {"key": s.label, "value": s.value, "type": "secret", "enabled": True}],
        "_postman_variable_scope": "environment"},
    "ipynb_source": ipynb_source,
    "insomnia_export": lambda r, s: {"_type": "export", "__export_format": 4, "resources": [
        {"_id": f"env_{pick(r, HEX, 32)}", "_type": "environment", "name": "Base Environment",
         "data": {"base_url": "https://api.acme.io", s.label: s.value}}]},
    "vscode_settings_json": lambda r, s: {"editor.formatOnSave": True, "rest-client.environmentVariables": {
        "production": {"baseUrl": "https://api.acme.io", s.label: s.value}}},
    "devcontainer_json": lambda r, s: {"name": "api", "image": "mcr.microsoft.com/devcontainers/python:3.12",
                                       "containerEnv": {s.label: s.value}},
    "bitwarden_fields": lambda r, s: {"encrypted": False, "items": [
        {"id": guid(r), "type": 2, "name": "CI secrets", "notes": None, "secureNote": {"type": 0},
         "fields": [{"name": s.label, "value": s.value, "type": 1}]}]},
}
"""Config and developer documents that hold `label=value` (a third of them JSON documents)."""


# ---- carriers: human documents (Slot.label is a label in Slot.lang, with its punctuation) -------------------------

def pdf_text(rng: random.Random, s: Slot) -> str:
    """Text out of a PDF form: hyphenated line breaks in the prose around the value."""
    return (f"Antrag / Application form\nThe under-\nsigned ({name(rng, s.lang)}) con-\nfirms the following de-\n"
            f"tails.\n{s.label} {s.value}\nSeite 1 von 2\n")


def telegram(rng: random.Random, s: Slot) -> dict:
    """A Telegram Desktop chat export (result.json)."""
    who = name(rng, s.lang)
    return {"name": who, "type": "personal_chat", "id": rng.randint(10**8, 10**9), "messages": [
        {"id": rng.randint(1000, 9999), "type": "message", "date": "2025-11-03T09:14:22", "date_unixtime": "1762161262",
         "from": who, "from_id": f"user{rng.randint(10**8, 10**9)}", "text": f"{s.label} {s.value}",
         "text_entities": [{"type": "plain", "text": f"{s.label} {s.value}"}]}]}


DOCS: dict[str, Carrier] = {
    "mail_signature": lambda r, s: (f"From: {name(r, s.lang)} <noreply@mail.acme.io>\nSubject: Re: your order\n"
                                    f"MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n\n{word(s.lang, 5)},"
                                    f"\n{name(r, s.lang)}\n--\n{s.label} {s.value}\n"),
    "mail_quote": lambda r, s: f"> {word(s.lang, 5)}!\n> {name(r, s.lang)}\n> {s.label} {s.value}\n>\n\nNoted.",
    "mail_forward": lambda r, s: ("---------- Forwarded message ---------\nFrom: HR <hr@acme.io>\nDate: Mon, 3 Nov 2025"
                                  f"\nSubject: {name(r, s.lang)}\n\n{s.label} {s.value}\n"),
    "kyc_form": lambda r, s: (f"KYC — customer due diligence\nFull name: {name(r, s.lang)}\nNationality: —\n"
                              f"{s.label} {s.value}\nRisk rating: low\n"),
    "shipping_label": lambda r, s: f"SHIP TO:\n{name(r, s.lang)}\nParcel 2 of 3\n{s.label} {s.value}\nREF 88213",
    "hr_onboarding": lambda r, s: (f"New hire onboarding\nEmployee: {name(r, s.lang)}\nStart date: 2026-01-05\n"
                                   f"{s.label} {s.value}\nLaptop: MacBook Pro 14\n"),
    "medical_intake": lambda r, s: (f"Patient intake\nPatient: {name(r, s.lang)}\nAllergies: none known\n"
                                    f"{s.label} {s.value}\n"),
    "whatsapp": lambda r, s: (f"[{r.randint(1, 28):02d}/11/2025, {r.randint(8, 22):02d}:{r.randint(0, 59):02d}:"
                              f"{r.randint(0, 59):02d}] {name(r, s.lang)}: {s.label} {s.value}"),
    "whatsapp_android": lambda r, s: f"03/11/2025, 21:{r.randint(10, 59)} - {name(r, s.lang)}: {s.label} {s.value}",
    "teams_vtt": lambda r, s: f"WEBVTT\n\n00:03:12.500 --> 00:03:18.000\n<v {name(r, s.lang)}>{s.label} {s.value}</v>",
    "sms": lambda r, s: f"SMS · 3 Nov 2025 09:14\n{s.label} {s.value} — {name(r, s.lang)}",
    "sms_otp": lambda r, s: (f"<#> Acme: your verification code is {digits(r, 6)}. Not you? {s.label} {s.value}\n"
                             f"{pick(r, B64URL, 11)}"),
    "docx_text": lambda r, s: f"{name(r, s.lang)}\n\n{s.label} {s.value}\n\n{word(s.lang, 5)}.",
    "pdf_text": pdf_text,
    "notion_md": lambda r, s: (f"# {name(r, s.lang)}\n\n| Field | Value |\n| --- | --- |\n"
                               f"| Note | {s.label} {s.value} |"),
    "logcat": lambda r, s: (f"11-03 09:14:22.{r.randint(100, 999)}  {r.randint(1000, 9999)}  {r.randint(1000, 9999)} "
                            f"D FormActivity: field changed: {s.label} {s.value}"),
    "ios_console": lambda r, s: f"default\t09:14:22.481512+0100\tAcme\t[Form] {s.label} {s.value}",
    "telegram_json": telegram,
    "jira_issue_json": lambda r, s: {"key": f"SUP-{r.randint(100, 9999)}", "fields": {
        "summary": "Customer update", "description": f"Customer wrote:\n{s.label} {s.value}",
        "reporter": {"displayName": name(r, s.lang)}}},
    "notion_block_json": lambda r, s: {"object": "block", "type": "paragraph", "paragraph": {"rich_text": [
        {"type": "text", "text": {"content": f"{s.label} {s.value}"}, "plain_text": f"{s.label} {s.value}"}]}},
    "github_issue_json": lambda r, s: {"number": r.randint(100, 5000), "title": "Account problem", "state": "open",
                                       "body": f"Hi, {name(r, s.lang)} here.\n\n{s.label} {s.value}\n"},
    "ipynb_output": lambda r, s: {"cells": [{"cell_type": "code", "execution_count": 3, "source": ["print(row)"],
                                             "outputs": [{"output_type": "stream", "name": "stdout",
                                                          "text": [f"{name(r, s.lang)} | {s.label} {s.value}\n"]}]}],
                                  "nbformat": 4, "nbformat_minor": 5, "metadata": {}},
    "graph_mail_json": lambda r, s: {"subject": "RE: onboarding", "from": {"emailAddress": {"name": name(r, s.lang)}},
                                     "body": {"contentType": "text",
                                              "content": f"{word(s.lang, 5)}!\n{s.label} {s.value}"}},
    "teams_message_json": lambda r, s: {"messageType": "message", "createdDateTime": r.choice(TS), "from": {
        "user": {"displayName": name(r, s.lang)}},
        "body": {"contentType": "html", "content": f"<p>{s.label} {s.value}</p>"}},
    "confluence_rest_json": lambda r, s: {"id": str(r.randint(10**6, 10**7)), "type": "page", "title": "Contacts",
                                          "body": {"storage": {"value": f"<p>{s.label} {s.value}</p>",
                                                               "representation": "storage"}}},
    "ipynb_markdown": lambda r, s: {"cells": [{"cell_type": "markdown", "metadata": {}, "source": [
        f"## {name(r, s.lang)}\n", "\n", f"- {s.label} {s.value}\n"]}], "nbformat": 4, "nbformat_minor": 5},
    "bitwarden_identity": lambda r, s: {"encrypted": False, "items": [
        {"id": guid(r), "type": 4, "name": name(r, s.lang), "notes": f"{s.label} {s.value}",
         "identity": {"firstName": name(r, s.lang).split()[0], "country": "—"}}]},
}
"""Human documents: e-mail, forms, chat, office and PDF text, mobile logs (a third JSON documents)."""


# ---- carriers native to one kind (functions of the value) --------------------------------------------------------

Native = dict[str, Callable[[random.Random, str], object]]

PASSWORD_NATIVE: Native = {
    "netrc": lambda r, v: f"machine nexus.acme.io\n  login deploy\n  password {v}\nmachine api.github.com login x",
    "pgpass": lambda r, v: f"$ cat ~/.pgpass\ndb.internal:5432:billing:app_user:{v}\n*:*:*:readonly:{password(r)}",
    "pypirc": lambda r, v: (f"[distutils]\nindex-servers =\n    internal\n\n[internal]\nrepository = https://nexus.acme.io"
                            f"/repository/pypi-internal/\nusername = ci\npassword = {v}\n"),
    "wp_config": lambda r, v: (f"define( 'DB_NAME', 'wordpress' );\ndefine( 'DB_USER', 'wp_admin' );\n"
                               f"define( 'DB_PASSWORD', '{v}' );\ndefine( 'DB_HOST', 'localhost' );"),
    "settings_py": lambda r, v: ("DATABASES = {\n    'default': {\n        'ENGINE': 'django.db.backends.postgresql',\n"
                                 f"        'NAME': 'shop',\n        'USER': 'shop',\n        'PASSWORD': '{v}',\n"
                                 "        'HOST': 'db',\n    }\n}"),
    "database_yml": lambda r, v: f"production:\n  adapter: postgresql\n  username: rails\n  password: {v}\n  pool: 5\n",
    "maven_settings": lambda r, v: (f"<settings>\n  <servers>\n    <server>\n      <id>nexus-releases</id>\n      "
                                    f"<username>deployment</username>\n      <password>{v}</password>\n"),
    "nuget_config": lambda r, v: ('<packageSourceCredentials>\n  <AcmeFeed>\n    <add key="Username" value="ci" />\n'
                                  f'    <add key="ClearTextPassword" value="{v}" />\n  </AcmeFeed>'),
    "compose_yaml": lambda r, v: f"services:\n  db:\n    environment:\n      MYSQL_ROOT_PASSWORD: {v}",
    "cli_mysql": lambda r, v: f"$ mysql -h 10.0.3.7 -u root -p{v} shop -e 'show tables'",
    "cli_flag": lambda r, v: f"$ ./manage create-admin --user ops --password {v} --email-verified",
    "pgpassword": lambda r, v: f"$ PGPASSWORD={v} psql -h db.internal -U app -d billing -c '\\dt'",
    "redis_cli": lambda r, v: f"$ redis-cli -h cache.internal -p 6379 -a {v} --no-auth-warning ping\nPONG",
    "sshpass": lambda r, v: f"$ sshpass -p '{v}' ssh deploy@10.0.4.12 'systemctl restart app'",
    "chrome_csv": lambda r, v: f"name,url,username,password,note\nacme.io,https://acme.io/login,emily,{v},\n",
    "keepass_csv": lambda r, v: (f'"Account","Login Name","Password","Web Site","Comments"\n"VPN","e.carter","{v}",'
                                 '"https://vpn.acme.io",""'),
    "onepassword_csv": lambda r, v: f"Title,Website,Username,Password,Notes\nRouter,http://192.168.1.1,admin,{v},",
    "bitwarden_csv": lambda r, v: ("folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,"
                                   f"login_password,login_totp\nWork,,login,Jira,,,0,https://acme.atlassian.net,"
                                   f"emily,{v},"),
    "npmrc_b64": lambda r, v: (f"registry=https://nexus.acme.io/repository/npm-group/\n"
                               f"//nexus.acme.io/repository/npm-group/:username=ci\n"
                               f"//nexus.acme.io/repository/npm-group/:_password={v}\nalways-auth=true\n"),
    "filezilla_b64": lambda r, v: (f'<Server>\n  <Host>ftp.acme.io</Host>\n  <Port>21</Port>\n  <User>upload</User>\n'
                                   f'  <Pass encoding="base64">{v}</Pass>\n</Server>'),
    "bitwarden_login_json": lambda r, v: {"encrypted": False, "items": [
        {"id": guid(r), "type": 1, "name": "Grafana", "login": {"username": "admin", "password": v,
                                                               "uris": [{"uri": "https://grafana.acme.io"}]}}]},
    "onepassword_1pux_json": lambda r, v: {"accounts": [{"vaults": [{"attrs": {"name": "Private"}, "items": [
        {"overview": {"title": "Router", "url": "http://192.168.1.1"}, "details": {"loginFields": [
            {"designation": "username", "value": "admin", "fieldType": "T"},
            {"designation": "password", "value": v, "fieldType": "P"}]}}]}]}]},
    "appsettings_json": lambda r, v: {"Logging": {"LogLevel": {"Default": "Information"}},
                                      "Smtp": {"Host": "smtp.acme.io", "Port": 587, "User": "noreply",
                                               "Password": v}},
    "composer_auth_json": lambda r, v: {"http-basic": {"repo.packagist.com": {"username": "acme", "password": v}}},
    "vscode_sqltools_json": lambda r, v: {"sqltools.connections": [
        {"name": "prod-ro", "driver": "PostgreSQL", "server": "db.internal", "port": 5432, "database": "billing",
         "username": "readonly", "password": v}]},
    "postman_basic_json": lambda r, v: {"info": {"name": "Admin API"}, "auth": {"type": "basic", "basic": [
        {"key": "password", "value": v, "type": "string"}, {"key": "username", "value": "admin", "type": "string"}]}},
}
PASSWORD_NAMES = ("DB_PASSWORD", "PGPASSWORD", "MYSQL_ROOT_PASSWORD", "REDIS_PASS", "MAIL_PASSWORD", "userPassword",
                  "adminPass", "keystorePassword", "signing.password", "spring.datasource.password", "smtpPassword",
                  "RABBITMQ_DEFAULT_PASS", "SA_PASSWORD", "dbPass", "LDAP_BIND_PW", "POSTGRES_PASSWORD")

AWS_NATIVE: Native = {
    "aws_credentials": lambda r, v: (f"[default]\naws_access_key_id = {aws_id(r)}\naws_secret_access_key = {v}\n"
                                     "region = eu-central-1\n"),
    "s3cfg": lambda r, v: f"[default]\naccess_key = {aws_id(r)}\nhost_base = s3.amazonaws.com\nsecret_key = {v}\n",
    "rclone_conf": lambda r, v: (f"[s3-backup]\ntype = s3\nprovider = AWS\naccess_key_id = {aws_id(r)}\n"
                                 f"secret_access_key = {v}\nregion = eu-west-1\n"),
    "credentials_csv": lambda r, v: f"Access key ID,Secret access key\n{aws_id(r)},{v}\n",
    "chat_pair": lambda r, v: f"[10:02] {name(r, 'en')}: here you go {aws_id(r)} {v} (read-only)",
    "mail_pair": lambda r, v: f"> key id: {aws_id(r)}\n> {v}\n\nthanks, works",
    "sts_json": lambda r, v: {"Credentials": {"AccessKeyId": aws_id(r), "SecretAccessKey": v,
                                              "SessionToken": pick(r, B64, 120), "Expiration": TS[0]}},
    "boto3_ipynb": lambda r, v: {"cells": [{"cell_type": "code", "source": [
        f"s3 = boto3.client('s3', aws_access_key_id='{aws_id(r)}', aws_secret_access_key='{v}')"], "outputs": []}]},
    "postman_awsv4_json": lambda r, v: {"auth": {"type": "awsv4", "awsv4": [
        {"key": "accessKey", "value": aws_id(r)}, {"key": "secretKey", "value": v},
        {"key": "region", "value": "us-east-1"}]}},
}

WEBHOOK_NATIVE: Native = {
    "curl_post": lambda r, v: f"$ curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"ok\"}}' {v}",
    "alertmanager_yml": lambda r, v: f"receivers:\n- name: oncall\n  slack_configs:\n  - api_url: {v}\n",
    "grafana_contact_yml": lambda r, v: f"contactPoints:\n  - name: team\n    receivers:\n      - type: webhook\n"
                                        f"        url: {v}\n",
    "github_issue": lambda r, v: f"The notifier posts to `{v}` but nothing arrives in the channel.",
    "n8n_json": lambda r, v: {"nodes": [{"name": "Notify", "type": "n8n-nodes-base.httpRequest",
                                         "parameters": {"method": "POST", "url": v}}]},
}

WHSEC_NATIVE: Native = {
    "stripe_listen": lambda r, v: ("$ stripe listen --forward-to localhost:4242/webhook\n> Ready! You are using "
                                   f"Stripe API Version [2024-06-20]. Your webhook signing secret is {v} (^C to quit)"),
    "pr_review": lambda r, v: f'**server.js**\n> const endpointSecret = "{v}";\n\nThis must come from the env.',
    "cashier_env": lambda r, v: f"STRIPE_KEY=pk_live_{pick(r, ALNUM, 24)}\nSTRIPE_WEBHOOK_SECRET={v}",
    "wrangler_json": lambda r, v: {"name": "billing-worker", "vars": {"STRIPE_SIGNING_SECRET": v}},
}


CONN_NAMES = {"azure_storage": ("AZURE_STORAGE_CONNECTION_STRING", "ConnectionStrings__Blobs"),
              "service_bus": ("SERVICEBUS_CONNECTION", "ServiceBusConnection"),
              "ado": ("ConnectionStrings__Default", "SQL_CONNECTION"), "odbc": ("ODBC_CONNECTION", "DSN_STRING"),
              "jdbc_sqlserver": ("spring.datasource.url", "JDBC_URL"),
              "jdbc_query": ("spring.datasource.url", "JDBC_URL"),
              "uri_postgres": ("DATABASE_URL", "POSTGRES_URL"), "uri_mysql": ("DATABASE_URL", "MYSQL_URL"),
              "uri_mongo_srv": ("MONGODB_URI", "MONGO_URL"), "uri_redis": ("REDIS_URL", "CACHE_URL"),
              "uri_amqps": ("CELERY_BROKER_URL", "AMQP_URL"), "git_credentials": ("GIT_REMOTE", "REPO_URL")}
"""The variables each style of connection string is kept under."""


def connection_string(rng: random.Random, style: str) -> tuple[str, str]:
    """(connection string, secret) of a style: Azure Storage and Service Bus keys, ADO.NET/JDBC/ODBC passwords,
    RFC 3986 userinfo."""
    pw, host = uri_password(rng), rng.choice(("db.internal", "10.0.3.7", "sql-prod.acme.io"))
    key = b64key(rng, 64) if style == "azure_storage" else b64key(rng, 32)
    text = {
        "azure_storage": f"DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={key};"
                         "EndpointSuffix=core.windows.net",
        "service_bus": f"Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
                       f"SharedAccessKey={key}",
        "ado": f"Server=tcp:{host},1433;Initial Catalog=billing;User ID=app;Password={pw};Encrypt=True;",
        "jdbc_sqlserver": f"jdbc:sqlserver://{host}:1433;databaseName=billing;user=sa;password={pw};encrypt=true",
        "jdbc_query": f"jdbc:postgresql://{host}:5432/billing?user=app&password={pw}&ssl=true",
        "odbc": f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=hr;Uid=report;Pwd={pw};",
        "uri_postgres": f"postgres://app:{pw}@{host}:5432/billing?sslmode=require",
        "uri_mongo_srv": f"mongodb+srv://svc_api:{pw}@cluster0.{pick(rng, LOWER_ALNUM, 5)}.mongodb.net/app",
        "uri_redis": f"redis://:{pw}@{host}:6379/0",
        "uri_amqps": f"amqps://worker:{pw}@mq.acme.io:5671/prod",
        "uri_mysql": f"mysql://shop:{pw}@{host}:3306/shop",
        "git_credentials": f"https://emily:{pw}@git.acme.io",
    }[style]
    return text, (key if style in ("azure_storage", "service_bus") else pw)


URI_DB = ("uri_postgres", "uri_mysql")
CONN_NATIVE: dict[str, tuple[tuple[str, ...], Callable[[random.Random, str], object]]] = {
    # carrier: (the styles it holds, the carrier)
    "appsettings_json": (("ado", "azure_storage", "service_bus"),
                         lambda r, v: {"ConnectionStrings": {"Default": v}, "AllowedHosts": "*"}),
    "dbeaver_json": (("jdbc_query", "jdbc_sqlserver"), lambda r, v: {"folders": {}, "connections": {
        f"postgres-jdbc-{pick(r, HEX, 12)}": {"provider": "postgresql", "driver": "postgres-jdbc", "name": "prod",
                                              "configuration": {"url": v}}}}),
    "sql_magic_ipynb": (URI_DB, lambda r, v: {"cells": [{"cell_type": "code", "outputs": [],
                                                         "source": ["%load_ext sql\n", f"%sql {v}"]}]}),
    "jetbrains_xml": (("jdbc_query", "jdbc_sqlserver"), lambda r, v: (
        f'<data-source source="LOCAL" name="prod">\n  <jdbc-url>{v.replace("&", "&amp;")}</jdbc-url>\n</data-source>')),
    "git_credentials_file": (("git_credentials",), lambda r, v: f"$ cat ~/.git-credentials\n{v}\n"),
    "settings_py": (URI_DB, lambda r, v: f"DATABASES = {{'default': dj_database_url.parse('{v}')}}"),
    "database_yml": (URI_DB, lambda r, v: f"production:\n  url: {v}\n  pool: 10\n"),
    "mongosh": (("uri_mongo_srv",), lambda r, v: f'$ mongosh "{v}" --eval "db.stats()"'),
    "odbc_ini": (("odbc",), lambda r, v: f"[hr-report]\n; DSN-less string used by the export job\nConnStr={v}\n"),
}

PROVIDER_NATIVE: dict[str, dict[str, object]] = {
    # each tool's own file or command: a text template with {v}, or a function of the value giving a JSON document
    "atlassian_token": {"netrc": "machine acme.atlassian.net login emily@acme.io password {v}",
                        "curl_basic": "$ curl -u emily@acme.io:{v} https://acme.atlassian.net/rest/api/3/myself"},
    "grafana_token": {"provisioning_yaml": "apiVersion: 1\ndatasources:\n  - name: Loki\n    secureJsonData:\n"
                                           "      httpHeaderValue1: 'Bearer {v}'",
                      "terraform_hcl": 'provider "grafana" {{\n  url  = "https://acme.grafana.net/"\n'
                                       '  auth = "{v}"\n}}'},
    "pulumi_token": {"pulumi_credentials_json": lambda v: {
        "current": "https://api.pulumi.com", "accessTokens": {"https://api.pulumi.com": v},
        "accounts": {"https://api.pulumi.com": {"accessToken": v, "username": "acme-ci"}}}},
    "doppler_token": {"doppler_cli": "$ doppler configure set token {v} --scope /srv/app",
                      "doppler_yaml": "scoped:\n  /srv/app:\n    token: {v}\n"},
    "postman_key": {"curl_header": "$ curl -H 'X-Api-Key: {v}' https://api.getpostman.com/collections"},
    "notion_token": {"curl_bearer": "$ curl https://api.notion.com/v1/search -H 'Authorization: Bearer {v}' "
                                    "-H 'Notion-Version: 2022-06-28'"},
    "figma_token": {"curl_header": "$ curl -H 'X-Figma-Token: {v}' https://api.figma.com/v1/files/Qm7vKc2Lr9TzX4wB"},
    "mapbox_secret": {"netrc": "machine api.mapbox.com\nlogin mapbox\npassword {v}",
                      "gradle_properties": "android.useAndroidX=true\nMAPBOX_DOWNLOADS_TOKEN={v}\n"},
    "digitalocean_token": {"doctl_config": "access-token: {v}\ncontext: default\n",
                           "doctl_cli": "$ doctl auth init --access-token {v}"},
    "databricks_token": {"databrickscfg": "[DEFAULT]\nhost  = https://adb-4081375129442201.1.azuredatabricks.net\n"
                                          "token = {v}\n"},
    "sentry_token": {"sentryclirc": "[auth]\ntoken={v}\n\n[defaults]\norg=acme\n"},
    "newrelic_key": {"newrelic_yml": "common: &default_settings\n  license_key: '{v}'\n  app_name: Billing",
                     "newrelic_cli": "$ newrelic profile add --profile prod --apiKey {v} --region EU"},
    "shopify_token": {"curl_header": "$ curl -H 'X-Shopify-Access-Token: {v}' "
                                     "https://acme.myshopify.com/admin/api/2025-01/shop.json"},
    "linear_key": {"curl_header": "$ curl -H 'Authorization: {v}' -d '{{\"query\":\"{{ viewer {{ id }} }}\"}}' "
                                  "https://api.linear.app/graphql"},
    "vault_token": {"vault_token_file": "$ cat ~/.vault-token\n{v}",
                    "vault_login": "$ vault login {v}\nSuccess! You are now authenticated."},
    "tailscale_key": {"tailscale_up": "$ sudo tailscale up --authkey={v} --advertise-tags=tag:ci",
                      "cloud_init": "#cloud-config\nruncmd:\n  - tailscale up --auth-key {v} --ssh\n"},
    "age_secret_key": {"age_keys_txt": "# created: 2025-11-03T09:14:22+01:00\n# public key: {pub}\n{v}\n"},
    "terraform_token": {"credentials_tfrc_json": lambda v: {"credentials": {"app.terraform.io": {"token": v}}},
                        "terraformrc": 'credentials "app.terraform.io" {{\n  token = "{v}"\n}}'},
    "circleci_token": {"circleci_cli_yml": "host: https://circleci.com\ntoken: {v}\n",
                       "curl_header": "$ curl -H 'Circle-Token: {v}' https://circleci.com/api/v2/me"},
    "gcp_oauth_secret": {"client_secret_json": lambda v: {"installed": {
        "client_id": "1046@apps.googleusercontent.com", "project_id": "acme", "client_secret": v,
        "redirect_uris": ["http://localhost"]}},
        "rclone_conf": "[gdrive]\ntype = drive\nclient_id = 1046@apps.googleusercontent.com\nclient_secret = {v}\n"},
    "azure_client_secret": {"appsettings_json": lambda v: {"AzureAd": {
        "Instance": "https://login.microsoftonline.com/", "ClientId": "3f1c0b9e-1d2a-4c55-9e61-0b6a3c8f2d47",
        "ClientSecret": v}},
        "az_login": "$ az login --service-principal -u 3f1c0b9e-1d2a-4c55-9e61-0b6a3c8f2d47 -p {v} --tenant acme.io"},
    "square_token": {"curl_bearer": "$ curl https://connect.squareup.com/v2/locations -H 'Square-Version: 2025-01-23' "
                                    "-H 'Authorization: Bearer {v}'"},
    "braintree_token": {"python_sdk": 'gateway = braintree.BraintreeGateway(access_token="{v}")'},
}


def native(template: object, rng: random.Random, v: str) -> object:
    """A PROVIDER_NATIVE entry filled in (`{pub}`: an age public key)."""
    if callable(template):
        return template(v)
    return str(template).format(v=v, pub=bech32("age", rng.randbytes(32)))


# ---- carriers of multi-line and header values ---------------------------------------------------------------------

KEY_CARRIERS: dict[str, Callable[[random.Random, str], object]] = {
    "terminal_cat": lambda r, k: f"$ ls ~/.ssh\nconfig  deploy_key  known_hosts\n$ cat ~/.ssh/deploy_key\n{k}",
    "git_log_p": lambda r, k: (f"commit {pick(r, HEX, 40)}\n\n    add key\n\ndiff --git a/deploy/key b/deploy/key\n"
                               "new file mode 100600\n--- /dev/null\n+++ b/deploy/key\n@@ -0,0 +1,9 @@\n"
                               + "".join(f"+{ln}\n" for ln in k.splitlines())),
    "github_issue": lambda r, k: f"Deploy fails with `Permission denied (publickey)`. Key used:\n\n```\n{k}```\n",
    "confluence_storage": lambda r, k: (f'<ac:structured-macro ac:name="code"><ac:plain-text-body><![CDATA[{k}]]>'
                                        "</ac:plain-text-body></ac:structured-macro>"),
    "mail_body": lambda r, k: f"Subject: access\nContent-Type: text/plain\n\nthe key for the box:\n\n{k}\n--\nOps",
    "teams_chat": lambda r, k: f"[14:03] {name(r, 'en')}\n{k}\n[14:04] {name(r, 'hr')}\nthx",
    "service_account_json": lambda r, k: {"type": "service_account", "project_id": "acme-prod",
                                          "private_key_id": pick(r, HEX, 40), "private_key": k,
                                          "client_email": "ci@acme-prod.iam.gserviceaccount.com"},
    "bitwarden_ssh_json": lambda r, k: {"encrypted": False, "items": [
        {"id": guid(r), "type": 5, "name": "deploy", "sshKey": {"privateKey": k, "keyFingerprint": "SHA256:" +
                                                                pick(r, B64, 43)}}]},
    "ipynb_output": lambda r, k: {"cells": [{"cell_type": "code", "source": ["print(open('key.pem').read())"],
                                             "outputs": [{"output_type": "stream", "name": "stdout", "text": [k]}]}]},
    "postman_env": lambda r, k: {"name": "mtls", "values": [{"key": "clientKey", "value": k, "type": "secret"}]},
}


KEY_STYLES = {"-----BEGIN RSA P": "pkcs1_rsa", "-----BEGIN EC PR": "sec1_ec", "-----BEGIN PRIVA": "pkcs8",
              "-----BEGIN OPENS": "openssh", "PuTTY-User-Key-F": "putty_ppk", "-----BEGIN PGP P": "pgp_armor"}


def key_case(kind: str, rng: random.Random, i: int, key: str) -> Case:
    """A key file in one of KEY_CARRIERS; its secret is its body as written (a diff prefixes each line)."""
    if kind == "private_key" and i % 11 == 10:  # kubeconfig's client-key-data: the whole PEM in base64
        data = base64.b64encode(key.encode()).decode()
        text = (f"users:\n- name: admin@prod\n  user:\n    client-certificate-data: {pick(rng, B64, 60)}\n"
                f"    client-key-data: {data}\n")
        return emit(kind, data, text, "kubeconfig/client_key_data", i)
    cname, carrier = nth(KEY_CARRIERS, i)
    out = carrier(rng, key)
    first, last = key_body(key)
    written = out if isinstance(out, str) else key
    if cname == "git_log_p":
        first, last = "+" + first, "+" + last
    start = written.index(first)
    secret = written[start:written.index(last, start) + len(last)]
    if cname == "git_log_p":
        secret = secret[1:]
    return emit(kind, secret, out, f"{cname}/{KEY_STYLES[key.splitlines()[0][:16]]}", i)


HEADER_CARRIERS: dict[str, Callable[[random.Random, str, str], object]] = {
    "curl_issue": lambda r, h, v: f"Repro:\n```\ncurl -sS https://api.acme.io/v1/export -H '{h}: {v}'\n```",
    "http_file": lambda r, h, v: f"### export\nGET https://api.acme.io/v1/export HTTP/1.1\n{h}: {v}\nAccept: text/csv",
    "bruno_file": lambda r, h, v: (f"meta {{\n  name: export\n  type: http\n}}\n\nget {{\n  url: https://api.acme.io/v1\n}}"
                                   f"\n\nheaders {{\n  {h}: {v}\n}}\n"),
    "logcat_okhttp": lambda r, h, v: (f"11-03 09:14:22.481  4821  4907 I okhttp.OkHttpClient: --> GET https://api.acme.io"
                                      f"/v1/me\n11-03 09:14:22.481  4821  4907 I okhttp.OkHttpClient: {h}: {v}"),
    "ios_console": lambda r, h, v: f"default\t09:14:22.481+0100\tAcme\t[Net] request headers: {{\"{h}\": \"{v}\"}}",
    "metro_log": lambda r, h, v: f" LOG  [api] GET /v1/me {{\"headers\": {{\"{h}\": \"{v}\"}}}}",
    "jira_wiki": lambda r, h, v: f"{{noformat}}\n> GET /v1/me HTTP/1.1\n> {h}: {v}\n< HTTP/1.1 403\n{{noformat}}",
    "mail_quote": lambda r, h, v: f"> we send\n> {h}: {v}\n> and get a 401\n\nWhich tenant is that?",
    "postman_collection_json": lambda r, h, v: {"info": {"name": "Acme"}, "item": [{"name": "me", "request": {
        "method": "GET", "url": "https://api.acme.io/v1/me", "header": [{"key": h, "value": v, "type": "text"}]}}]},
    "insomnia_request_json": lambda r, h, v: {"_type": "export", "resources": [
        {"_type": "request", "name": "me", "url": "https://api.acme.io/v1/me", "headers": [{"name": h, "value": v}]}]},
    "ipynb_requests": lambda r, h, v: {"cells": [{"cell_type": "code", "outputs": [], "source": [
        f"r = requests.get(url, headers={{'{h}': '{v}'}})"]}]},
}


def cookie_json(r: random.Random, cookie: str, v: str) -> list:
    """A browser extension's cookie export (EditThisCookie / Cookie-Editor JSON)."""
    return [{"domain": ".acme.io", "hostOnly": False, "httpOnly": True, "name": "theme", "path": "/", "value": "dark"},
            {"domain": "app.acme.io", "expirationDate": 1767225600, "httpOnly": True, "name": cookie, "path": "/",
             "sameSite": "lax", "secure": True, "session": False, "value": v}]


COOKIE_NATIVE: dict[str, Callable[[random.Random, str, str], object]] = {
    "netscape_cookies_txt": lambda r, c, v: ("# Netscape HTTP Cookie File\n# This is a generated file! Do not edit.\n\n"
                                             f"app.acme.io\tFALSE\t/\tTRUE\t1767225600\t{c}\t{v}\n"),
    "logcat_set_cookie": lambda r, c, v: (f"11-03 09:14:22.481  4821  4907 I okhttp.OkHttpClient: Set-Cookie: {c}={v}; "
                                          "Path=/; HttpOnly; Secure; SameSite=Lax"),
    "devtools_console": lambda r, c, v: f"> document.cookie\n< 'theme=dark; {c}={v}; _ga=GA1.1.{digits(r, 9)}.17623'",
    "curl_cookie": lambda r, c, v: f"$ curl -b '{c}={v}' https://app.acme.io/api/me",
    "cookie_export_json": cookie_json,
    "ipynb_cookies": lambda r, c, v: {"cells": [{"cell_type": "code", "outputs": [], "source": [
        f"s = requests.Session()\ns.cookies.set('{c}', '{v}', domain='app.acme.io')"]}]},
}

DISGUISE_BASES: tuple[tuple[str, Callable[[random.Random], str]], ...] = (
    ("GITHUB_TOKEN", lambda r: crc_token_of(r, "ghp_")), ("NPM_TOKEN", lambda r: crc_token_of(r, "npm_")),
    ("GITLAB_TOKEN", lambda r: "glpat-" + pick(r, B64URL, 20)),
    ("STRIPE_SECRET_KEY", lambda r: "sk_live_" + pick(r, ALNUM, 32)),
    ("SLACK_BOT_TOKEN", lambda r: f"xoxb-{digits(r, 12)}-{digits(r, 13)}-{pick(r, ALNUM, 24)}"),
    ("OPENAI_API_KEY", lambda r: f"sk-proj-{pick(r, B64URL, 40)}T3BlbkFJ{pick(r, B64URL, 40)}"),
    ("GOOGLE_API_KEY", lambda r: "AIza" + pick(r, B64URL, 35)),
    ("ANTHROPIC_API_KEY", lambda r: f"sk-ant-api03-{pick(r, B64URL, 93)}AA"),
)
INVISIBLE = {"zwsp": "\u200b", "zwnj": "\u200c", "zwj": "\u200d", "word_joiner": "\u2060", "bom": "\ufeff",
             "soft_hyphen": "\u00ad", "bidi": "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"}


def crc_token_of(rng: random.Random, prefix: str) -> str:
    """A GitHub or npm token with its CRC32 tail (corpus_formats' format)."""
    body = pick(rng, B62, 30)
    return prefix + body + crc_b62(body)


def disguise(rng: random.Random) -> tuple[str, str, str]:
    """(disguised key as written, the variable it belongs to, how): invisible characters, bidi controls or soft
    hyphens inside a known provider's key, or the whole key in full-width forms (U+FF01-FF5E)."""
    label, make = rng.choice(DISGUISE_BASES)
    key = make(rng)
    how = rng.choice((*INVISIBLE, "fullwidth", "fullwidth_prefix"))
    if how == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key), label, how
    if how == "fullwidth_prefix":
        cut = rng.randint(4, 8)
        return "".join(chr(ord(c) + 0xFEE0) for c in key[:cut]) + key[cut:], label, how
    chars = list(key)
    for pos in sorted(rng.sample(range(3, len(key) - 2), rng.randint(1, 3)), reverse=True):
        chars.insert(pos, rng.choice(INVISIBLE[how]))
    return "".join(chars), label, how


# ---- cases --------------------------------------------------------------------------------------------------------

def nth(table: dict, i: int) -> tuple[str, object]:
    """The i-th entry of a carrier table in a stride that spreads its JSON carriers (listed last) over the cases."""
    items = list(table.items())
    step = next(s for s in (7, 5, 3, 1) if math.gcd(s, len(items)) == 1)
    return items[i * step % len(items)]


def leaf(doc: object, secret: str) -> str:
    """The string of a JSON document that holds `secret`."""
    if isinstance(doc, str):
        return doc if secret in doc else ""
    values = doc.values() if isinstance(doc, dict) else doc if isinstance(doc, list) else ()
    return next((found for v in values if (found := leaf(v, secret))), "")


def emit(kind: str, secret: str, out: object, form: str, i: int) -> Case:
    """A Case of a carrier's output: text as is, or a JSON document serialized as its tool would (indented or not,
    ASCII-escaped for one in five)."""
    if isinstance(out, str):
        return Case(kind, secret, out, out, False, form)
    carried = json.dumps(out, ensure_ascii=i % 5 == 0, indent=2 if i % 2 else None)
    return Case(kind, secret, leaf(out, secret), carried, True, form)


def label_style(label: str) -> str:
    """How a variable name is written: dotted, upper_snake, camel or lower."""
    if "." in label:
        return "dotted"
    if label.upper() == label:
        return "upper_snake"
    return "camel" if any(c.isupper() for c in label) else "lower"


def configured(kind: str, rng: random.Random, i: int, j: int, label: str, value: str, secret: str,
               style: str = "") -> Case:
    """`value` under the variable `label` in the j-th CONFIG carrier."""
    cname, carrier = nth(CONFIG, j)
    return emit(kind, secret, carrier(rng, Slot(label, value, "en")), f"{cname}/{style or label_style(label)}", i)


def documented(kind: str, rng: random.Random, i: int, j: int, label: str, value: str, secret: str, lang: str,
               style: str) -> Case:
    """`value` after the human `label` in the j-th DOCS carrier."""
    cname, carrier = nth(DOCS, j)
    return emit(kind, secret, carrier(rng, Slot(label, value, lang)), f"{cname}/{lang}/{style}", i)


def sep_label(rng: random.Random, label: str) -> str:
    """A human label with the punctuation people put after it."""
    return label if label.endswith((":", "：", "=", "is", "-")) else label + rng.choice((":", ":", " -", " =", ""))


def k_password(kind: str, rng: random.Random, i: int) -> Case:
    """A password in config files, credential files and exports, CLI flags, and labelled prose."""
    v, g, j = password(rng), i % 3, i // 3
    if g == 0:
        return configured(kind, rng, i, j, rng.choice(PASSWORD_NAMES), v, v)
    if g == 1:
        cname, carrier = nth(PASSWORD_NATIVE, j)
        v = base64.b64encode(v.encode()).decode() if cname.endswith("_b64") else v
        return emit(kind, v, carrier(rng, v), f"{cname}/native", i)
    lang = rng.choice(CORE_LANGS)
    return documented(kind, rng, i, j, sep_label(rng, word(lang, 3)), v, v, lang, "label")


def k_aws(kind: str, rng: random.Random, i: int) -> Case:
    """An AWS secret key: labelled in configs, in its own files and JSON, unlabelled beside its key id."""
    v, g, j = aws_secret(rng), i % 3, i // 3
    if g == 0:
        label = rng.choice(("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "secretAccessKey", "AWS_SECRET_KEY"))
        return configured(kind, rng, i, j, label, v, v)
    if g == 1:
        cname, carrier = nth(AWS_NATIVE, j)
        return emit(kind, v, carrier(rng, v), f"{cname}/beside_id", i)
    lang = rng.choice(CORE_LANGS)
    pair = f"{aws_id(rng)}{rng.choice((' ', ' / ', ' : ', chr(10)))}{v}"
    return documented(kind, rng, i, j, rng.choice(("AWS", "IAM:", "keys:", "→")), pair, v, lang, "unlabelled_pair")


def k_labelled_native(natives: Native, names: tuple[str, ...], doc_label: str, value: Callable
                      ) -> Callable[[str, random.Random, int], Case]:
    """A kind written as `value(rng) -> (text, secret)` in configs under `names`, in `natives`, and in documents."""
    def make(kind: str, rng: random.Random, i: int) -> Case:
        text, secret = value(rng)
        g, j = i % 3, i // 3
        if g == 0:
            return configured(kind, rng, i, j, rng.choice(names), text, secret)
        if g == 1:
            cname, carrier = nth(natives, j)
            return emit(kind, secret, carrier(rng, text), f"{cname}/native", i)
        lang = rng.choice(CORE_LANGS)
        return documented(kind, rng, i, j, doc_label, text, secret, lang, "label")
    return make


def k_connection(kind: str, rng: random.Random, i: int) -> Case:
    """A connection string whose key or password is the secret, in configs, tools' files and documents."""
    g, j = i % 3, i // 3
    style = rng.choice(tuple(CONN_NAMES))
    if g == 0:
        text, secret = connection_string(rng, style)
        return configured(kind, rng, i, j, rng.choice(CONN_NAMES[style]), text, secret, style)
    if g == 1:
        cname, (styles, carrier) = nth(CONN_NATIVE, j)
        style = rng.choice(styles)
        text, secret = connection_string(rng, style)
        return emit(kind, secret, carrier(rng, text), f"{cname}/{style}", i)
    text, secret = connection_string(rng, style)
    lang = rng.choice(CORE_LANGS)
    return documented(kind, rng, i, j, "Connection string:", text, secret, lang, style)


LABELLED_KEY_LABELS = (
    ("en", "API Key:"), ("en", "Secret key ="), ("en", "access token is"), ("en", "Client Secret -"),
    ("en", "secret token is"), ("en", "Access Key ="), ("fr", "clé API :"), ("de", "API-Schlüssel:"),
    ("es", "clave de API:"), ("ja", "APIキー："), ("zh", "API 密钥："), ("ms", "Kunci API:"),
    ("tl", "API key ng account:"),
    ("bn", "API কী:"), ("fa", "کلید API:"), ("sw", "Ufunguo wa API:"), ("ca", "Clau de l'API:"), ("sk", "API kľúč:"),
    ("hr", "API ključ:"), ("sr_cyrl", "АПИ кључ:"), ("sr_latn", "API ključ:"), ("bg", "API ключ:"),
    ("lt", "API raktas:"), ("et", "API võti:"), ("is", "API-lykill:"), ("de", "Zugriffstoken ist"))


def k_labelled_key(kind: str, rng: random.Random, i: int) -> Case:
    """An opaque key (hex, base62 or base64, no provider prefix) after a label with spaces, in documents."""
    v = rng.choice((lambda: pick(rng, HEX, rng.choice((32, 40, 64))), lambda: pick(rng, ALNUM, rng.randint(32, 48)),
                    lambda: b64key(rng, 32)))()
    lang, label = rng.choice(LABELLED_KEY_LABELS)
    return documented(kind, rng, i, i, label, v, v, lang, "spaced_label")


def k_disguised(kind: str, rng: random.Random, i: int) -> Case:
    """A known provider's key with invisible characters, bidi controls, soft hyphens or full-width forms inside."""
    v, label, how = disguise(rng)
    if i % 2 == 0:
        return configured(kind, rng, i, i // 2, label, v, v, how)
    lang = rng.choice(CORE_LANGS)
    return documented(kind, rng, i, i // 2, rng.choice(("token:", "key:", "here:")), v, v, lang, how)


EMAIL_NATIVE: Native = {
    "git_config_list": lambda r, v: f"$ git config --list\nuser.name={name(r, 'en')}\nuser.email={v}\ncore.editor=vim",
    "git_log": lambda r, v: f"commit {pick(r, HEX, 40)}\nAuthor: {name(r, 'de')} <{v}>\nDate:   Mon Nov 3 09:14 2025",
    "mime_headers": lambda r, v: (f"Return-Path: <bounce@mail.acme.io>\nFrom: \"{name(r, 'fr')}\" <{v}>\nTo: support@"
                                  "acme.io\nSubject: =?UTF-8?Q?Re:_commande?=\n"),
    "gitconfig": lambda r, v: f"[user]\n\tname = {name(r, 'is')}\n\temail = {v}\n[pull]\n\trebase = true",
    "chrome_csv": lambda r, v: f"name,url,username,password,note\nacme.io,https://acme.io/,{v},{password(r)},",
    "package_json": lambda r, v: {"name": "@acme/ui", "version": "2.3.1", "author": f"{name(r, 'es')} <{v}>"},
    "jira_user_json": lambda r, v: {"accountId": pick(r, HEX, 24), "emailAddress": v, "displayName": name(r, "ca")},
}


def k_email(kind: str, rng: random.Random, i: int) -> Case:
    """An e-mail address, plain, upper case, RFC 6531 or encoded (%40, \\u0040, &#64;, mailto:)."""
    text, secret, style = email(rng)
    if i % 3 == 0 and style in ("plain", "upper", "idn"):
        cname, carrier = nth(EMAIL_NATIVE, i // 3)
        return emit(kind, secret, carrier(rng, text), f"{cname}/{style}", i)
    lang = rng.choice(CORE_LANGS)
    return documented(kind, rng, i, i, sep_label(rng, word(lang, 0)), text, secret, lang, style)


def k_phone(kind: str, rng: random.Random, i: int) -> Case:
    """A phone number of the kind's plan after a context word, in the plan's language or any of the twenty."""
    lang = rng.choice(PHONE_LANGS[kind]) if rng.random() < 0.4 else rng.choice(CORE_LANGS)
    v, style = PHONE_STYLES[kind](rng)
    return documented(kind, rng, i, i, rng.choice(PHONE_WORDS[lang]), v, v, lang, style)


SSN_NATIVE: Native = {
    "csv_semicolon": lambda r, v: f"Name;SSN;Start date\n{name(r, 'en')};{v};2026-01-05\n",
    "csv_comma": lambda r, v: f"employee_id,full_name,ssn,hire_date\nE{digits(r, 4)},{name(r, 'es')},{v},2025-09-01",
    "w4_text": lambda r, v: (f"Step 1: Enter Personal Information\n(a) First name {name(r, 'en')}\n"
                             f"(b) Social security number\n{v}"),
    "bitwarden_identity_json": lambda r, v: {"items": [{"type": 4, "name": "Me", "identity": {
        "firstName": "Emily", "lastName": "Carter", "ssn": v, "country": "US"}}]},
}


def k_ssn(kind: str, rng: random.Random, i: int) -> Case:
    """A US SSN with dashes, spaces or compact, labelled, in forms, exports and documents."""
    v, style = ssn(rng)
    if i % 4 == 3:
        cname, carrier = nth(SSN_NATIVE, i // 4)
        return emit(kind, v, carrier(rng, v), f"{cname}/{style}", i)
    lang = rng.choice(("en", "en", "es"))
    label = rng.choice(("SSN:", "Social Security Number:", "SS#", "Soc. Sec. No.") if lang == "en" else
                       ("Número de Seguro Social:", "SSN:"))
    return documented(kind, rng, i, i, label, v, v, lang, style)


CARD_NATIVE: Native = {
    "bitwarden_card_json": lambda r, v: {"items": [{"type": 3, "name": "Visa", "card": {
        "cardholderName": name(r, "en"), "brand": "Visa", "number": v, "expMonth": "4", "expYear": "2029",
        "code": digits(r, 3)}}]},
    "csv_semicolon": lambda r, v: f"Karteninhaber;Kartennummer;Ablauf\n{name(r, 'de')};{v};04/29\n",
    "onepassword_csv": lambda r, v: f"Title,Cardholder,Number,Expiry Date\nTravel card,{name(r, 'en')},{v},202904",
    "spreadsheet_formula": lambda r, v: f'A2\t{name(r, "es")}\nB2\t="{v}"\nC2\t=TEXT(B2;"0")',
}

IBAN_NATIVE: Native = {
    "payroll_csv": lambda r, v: f"Name;IBAN;BIC;Betrag\n{name(r, 'de')};{v};COBADEFFXXX;3.120,00\n",
    "invoice_footer": lambda r, v: f"Rechnung 2025-0412\nBankverbindung: Acme GmbH · IBAN {v} · BIC COBADEFFXXX",
    "sepa_mandate": lambda r, v: (f"SEPA Direct Debit Mandate\nCreditor ID: DE98ZZZ09999999999\n"
                                  f"Debtor: {name(r, 'fr')}\n"
                                  f"Account (IBAN): {v}\n"),
    "wise_recipient_json": lambda r, v: {"currency": "EUR", "type": "iban", "accountHolderName": name(r, "hr"),
                                         "details": {"legalType": "PRIVATE", "iban": v}},
}


def k_labelled_pii(value: Callable, natives: Native, word_index: int, every: int = 4
                   ) -> Callable[[str, random.Random, int], Case]:
    """A card or IBAN: labelled in any of the twenty languages in documents, and in exports of its own."""
    def make(kind: str, rng: random.Random, i: int) -> Case:
        v, style = value(rng)
        if i % every == every - 1:
            cname, carrier = nth(natives, i // every)
            return emit(kind, v, carrier(rng, v), f"{cname}/{style}", i)
        lang = rng.choice(CORE_LANGS)
        return documented(kind, rng, i, i, sep_label(rng, word(lang, word_index)), v, v, lang, style)
    return make


def k_national_id(kind: str, rng: random.Random, i: int) -> Case:
    """A national id with its check digit, after its name, in documents."""
    make, labels, home = NATIONAL_IDS[kind]
    v, style = make(rng)
    lang = home if rng.random() < 0.5 else rng.choice(CORE_LANGS)
    return documented(kind, rng, i, i, rng.choice(labels), v, v, lang, style)


PROVIDER_DOC_LABELS = {"azure_client_secret": ("Client secret:", "Secret value:", "client_secret ="),
                       "newrelic_key": ("License key:", "User API key:")}
"""Formats that need their label to be told apart from other random strings, written after one in documents."""


def k_provider(kind: str, rng: random.Random, i: int) -> Case:
    """A provider's token under its documented variables, in its own tool files, and in documents."""
    make, names = PROVIDERS[kind]
    v, g, j = make(rng), i % 3, i // 3
    if g == 0:
        return configured(kind, rng, i, j, rng.choice(names), v, v)
    if g == 1:
        cname, template = nth(PROVIDER_NATIVE[kind], j)
        return emit(kind, v, native(template, rng, v), f"{cname}/native", i)
    lang = rng.choice(CORE_LANGS)
    label = rng.choice(PROVIDER_DOC_LABELS.get(kind, ("token:", "key:", "here:", "→", "use")))
    return documented(kind, rng, i, j, label, v, v, lang, "prose")


def k_key(make: Callable[[random.Random], str]) -> Callable[[str, random.Random, int], Case]:
    """A private key file kind."""
    return lambda kind, rng, i: key_case(kind, rng, i, make(rng))


JWT_NATIVE: Native = {
    "kubeconfig_token": lambda r, v: f"users:\n- name: ci-deployer\n  user:\n    token: {v}\ncontexts: []",
    "devtools_localstorage": lambda r, v: f"> localStorage.getItem('auth')\n< '{{\"accessToken\":\"{v}\"}}'",
    "metro_log": lambda r, v: f" LOG  [auth] login ok {{\"token\": \"{v}\", \"user\": 42}}",
    "ipynb_output": lambda r, v: {"cells": [{"cell_type": "code", "source": ["resp.json()"], "outputs": [
        {"output_type": "execute_result",
         "data": {"text/plain": [f"{{'access_token': '{v}', 'token_type': 'bearer'}}"]}}]}]},
}


def k_jwt(kind: str, rng: random.Random, i: int) -> Case:
    """A signed JWT in configs, kubeconfig, devtools and mobile logs, and Bearer headers."""
    v, g, j = jwt(rng), i % 3, i // 3
    if g == 0:
        label = rng.choice(("ACCESS_TOKEN", "ID_TOKEN", "authToken", "jwt", "KUBE_TOKEN"))
        return configured(kind, rng, i, j, label, v, v)
    if g == 1:
        cname, carrier = nth(JWT_NATIVE, j)
        return emit(kind, v, carrier(rng, v), f"{cname}/native", i)
    cname, carrier = nth(HEADER_CARRIERS, j)
    return emit(kind, v, carrier(rng, "Authorization", f"Bearer {v}"), f"{cname}/bearer", i)


def k_auth_header(kind: str, rng: random.Random, i: int) -> Case:
    """An HTTP Authorization credential (Basic, Bearer, Digest, SigV4, Token, SSWS) where clients keep them."""
    value, cred, scheme = auth_header(rng)
    if i % 12 == 11:
        cred = base64.b64encode(f"robot$ci:{uri_password(rng)}".encode()).decode()
        doc = {"auths": {"harbor.acme.io": {"auth": cred}}, "credsStore": "desktop"}
        return emit(kind, cred, doc, "docker_config_json/basic", i)
    cname, carrier = nth(HEADER_CARRIERS, i)
    return emit(kind, cred, carrier(rng, "Authorization", value), f"{cname}/{scheme}", i)


def k_cookie(kind: str, rng: random.Random, i: int) -> Case:
    """A framework's session cookie in cookie files and exports, Set-Cookie lines and Cookie headers."""
    cookie, v = session_cookie(rng)
    if i % 2 == 0:
        cname, carrier = nth(COOKIE_NATIVE, i // 2)
        return emit(kind, v, carrier(rng, cookie, v), f"{cname}/{cookie}", i)
    cname, carrier = nth(HEADER_CARRIERS, i // 2)
    return emit(kind, v, carrier(rng, "Cookie", f"{cookie}={v}; lang=en"), f"{cname}/{cookie}", i)


KINDS: dict[str, Callable[[str, random.Random, int], Case]] = {
    "password": k_password, "aws_secret": k_aws,
    "webhook": k_labelled_native(WEBHOOK_NATIVE, ("ALERT_WEBHOOK_URL", "WEBHOOK_URL", "CHAT_WEBHOOK",
                                                  "notifyUrl", "onCallHook"), "Webhook:", webhook),
    "stripe_whsec": k_labelled_native(WHSEC_NATIVE, ("STRIPE_WEBHOOK_SECRET", "STRIPE_SIGNING_SECRET",
                                                     "endpointSecret"),
                                      "Signing secret:", lambda r: (lambda v: (v, v))(whsec(r))),
    "connection_string": k_connection, "labelled_key": k_labelled_key, "disguised": k_disguised, "email": k_email,
    **dict.fromkeys(("phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in"), k_phone),
    "ssn": k_ssn, "card": k_labelled_pii(card, CARD_NATIVE, 1), "iban": k_labelled_pii(iban, IBAN_NATIVE, 2),
    **dict.fromkeys(PROVIDERS, k_provider),
    "private_key": k_key(private_key), "openssh_key": k_key(openssh_key), "pgp_private_key": k_key(pgp_key),
    "jwt": k_jwt, "auth_header": k_auth_header, "session_cookie": k_cookie,
    **dict.fromkeys(("phone_br", "phone_au", "phone_za", "phone_kr", "phone_tr", "phone_ch"), k_phone),
    **dict.fromkeys(NATIONAL_IDS, k_national_id),
}


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, each kind from its own seeded generator."""
    for kind, make in KINDS.items():
        rng = random.Random(f"{SEED}/{kind}")
        for i in range(PER_KIND):
            yield make(kind, rng, i)


# ---- near misses ---------------------------------------------------------------------------------------------------

def bad_luhn(rng: random.Random) -> str:
    """A 16-digit number in a card network's range whose last digit fails Luhn."""
    prefix = rng.choice(("4", "51", "55", "6011", "3530"))
    partial = prefix + digits(rng, 15 - len(prefix))
    wrong = (int(luhn_digit(partial)) + rng.randint(1, 9)) % 10
    return group(partial + str(wrong), 4, rng.choice((" ", "-", "")))


def bad_iban(rng: random.Random) -> str:
    """A registry-shaped IBAN whose check digits fail MOD 97."""
    country = rng.choice(("DE", "FR", "NL", "HR", "EE", "IS", "BG", "LT"))
    basic = bban(rng, IBAN_BBANS[country])
    good = int(iban_check(country, basic))
    return group(f"{country}{(good + rng.randint(1, 90)) % 97 + 2:02d}{basic}", 4, " ")


def bad_ssn(rng: random.Random) -> str:
    """An SSN the SSA never issues: area 000, 666 or 9xx, group 00 or serial 0000."""
    area, grp, serial = f"{rng.randint(1, 899):03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
    which = rng.randrange(5)
    area = ("000", "666", f"9{rng.randint(0, 99):02d}", area, area)[which]
    grp, serial = ("00" if which == 3 else grp), ("0000" if which == 4 else serial)
    return f"{area}-{grp}-{serial}"


NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "uuid": lambda r: f"{r.choice(('request_id=', 'traceId: ', 'X-Request-Id: ', 'correlation '))}{guid(r)}",
    "git_sha": lambda r: f"commit {pick(r, HEX, 40)}\nMerge: {pick(r, HEX, 7)} {pick(r, HEX, 7)}\n\n    fix typo",
    "image_digest": lambda r: f"image: ghcr.io/acme/api@sha256:{pick(r, HEX, 64)}",
    "checksum": lambda r: f"{pick(r, HEX, r.choice((32, 40, 64)))}  dist/cli-{r.randint(1, 3)}.{r.randint(0, 9)}.tgz",
    "npm_integrity": lambda r: f'"resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",\n'
                               f'"integrity": "sha512-{pick(r, B64, 86)}=="',
    "version": lambda r: r.choice((f"Version {r.randint(1, 20)}.{r.randint(0, 40)}.{r.randint(0, 99)}",
                                   f"v{r.randint(0, 5)}.{r.randint(0, 30)}.{r.randint(0, 9)}-rc.{r.randint(1, 5)}"
                                   f"+build.{r.randint(10, 999)}",
                                   f"Android 14 (API 34), build UQ1A.240205.{r.randint(1, 9):03d}")),
    "amount": lambda r: r.choice((f"Total: €{r.randint(1, 9)}.{r.randint(100, 999)},{r.randint(10, 99)}",
                                  f"USD {r.randint(10, 99)},{r.randint(100, 999)}.00", f"Rp {r.randint(1, 9)}.250.000",
                                  f"¥{r.randint(100, 999)},000 (税込)")),
    "timestamp": lambda r: r.choice((r.choice(TS), f"ts={1733000000000 + r.randrange(10**9)}",
                                     f"2025-11-03 09:14:22.{r.randint(100, 999)}")),
    "order_number": lambda r: r.choice((f"Order #A-20251206-{digits(r, 5)}",
                                        f"Bestellnummer {digits(r, 4)}-{digits(r, 4)}",
                                        f"Invoice INV-2025-{digits(r, 6)}", f"Ticket SUP-{r.randint(100, 9999)}")),
    "card_luhn_fail": lambda r: f"{r.choice(('Card number:', 'Kartennummer:', 'Numéro de carte :'))} {bad_luhn(r)}",
    "iban_mod97_fail": lambda r: f"IBAN: {bad_iban(r)}",
    "ssn_invalid": lambda r: f"{r.choice(('SSN:', 'Social Security Number:'))} {bad_ssn(r)}",
    "placeholder": lambda r: r.choice(("DB_PASSWORD=${DB_PASSWORD}", "api_key: <your-api-key>", "password: ********",
                                       'token: "{{ secrets.API_TOKEN }}"', "PGPASSWORD=$PGPASSWORD psql -h db",
                                       "AWS_SECRET_ACCESS_KEY=<secret>", "client_secret: YOUR_CLIENT_SECRET",
                                       "'PASSWORD': os.environ['DB_PASSWORD'],", "Password: [REDACTED]",
                                       "STRIPE_WEBHOOK_SECRET=whsec_...",
                                       "<password>${env.NEXUS_PASSWORD}</password>")),
    "masked_card": lambda r: r.choice((f"**** **** **** {digits(r, 4)}", f"Visa ending in {digits(r, 4)}",
                                       f"XXXX-XXXX-XXXX-{digits(r, 4)}", f"•••• {digits(r, 4)}",
                                       f"{r.choice(('4', '5'))}{digits(r, 3)} {digits(r, 2)}•• •••• {digits(r, 4)}")),
    "public_key": lambda r: r.choice((
        f"STRIPE_PUBLISHABLE_KEY=pk_live_{pick(r, ALNUM, 24)}",
        f"mapboxgl.accessToken = 'pk.{b64json({'u': 'acme-maps', 'a': pick(r, LOWER_ALNUM, 25)})}."
        f"{pick(r, B64URL, 22)}'",
        "ssh-ed25519 " + base64.b64encode(ssh_string(b"ssh-ed25519") + ssh_string(r.randbytes(32))).decode(),
        f"# public key: {bech32('age', r.randbytes(32))}",
        pem("PUBLIC KEY", der_seq(der_seq(bytes.fromhex("06032b6570")), der(0x03, b"\x00" + r.randbytes(32)))))),
    "formula": lambda r: r.choice((f"=SUM(B2:B{r.randint(3, 99)})", "=VLOOKUP(A2;Sheet2!A:B;2;FALSE)",
                                   f'=IF(C{r.randint(2, 50)}>0;"ok";"missing")', "=TEXT(TODAY();\"yyyy-mm-dd\")")),
    "net_ids": lambda r: r.choice((f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}",
                                   f"fe80::{pick(r, HEX, 4)}:{pick(r, HEX, 4)}:{pick(r, HEX, 4)}",
                                   "MAC " + ":".join(pick(r, HEX, 2) for _ in range(6)))),
    "ref_numbers": lambda r: r.choice(("ISBN 978-3-16-148410-0", f"Case {digits(r, 11)}", f"Parcel {digits(r, 12)}",
                                       f"PO {digits(r, 3)}-{digits(r, 3)}-{digits(r, 4)} received")),
    "password_prose": lambda r: r.choice(("Forgot your password? Reset it at https://acme.io/reset",
                                          "Password must be at least 12 characters long.", "password: (ask Emily)",
                                          "Lozinka: pitajte administratora", "The password field is required.",
                                          "Heslo: nájdete v trezore", "パスワード：管理者に確認してください")),
    "git_config": lambda r: ("core.autocrlf=input\nremote.origin.url=https://github.com/acme/api.git\n"
                             f"credential.helper={r.choice(('osxkeychain', 'manager', 'store'))}\npull.rebase=true"),
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """(sort, text): 20 near misses of each sort that hold no secret and no personal data."""
    for sort, make in NEGATIVES.items():
        rng = random.Random(f"{SEED}/negative/{sort}")
        for _ in range(20):
            yield sort, make(rng)
