"""The twelfth redaction corpus: a company's business systems and its infrastructure-as-code.

Written blind to the rules and to the other corpora, from the formats' public specifications and the providers'
published formats. Carriers: CRM and helpdesk exports (Salesforce CSV with quoted multi-line fields, HubSpot
engagements, Zendesk tickets and macros, Intercom conversations, Freshdesk tickets), HR and payroll CSV under headers
in the company's language, invoices, receipts and bank statements as PDF-to-text, Shopify/WooCommerce order
webhooks, payment-processor logs, Twilio message JSON, call-centre CDR CSV, ICS invites, vCards, SAP IDoc flat
records; Terraform state and tfvars, Ansible group_vars, Helm values, Kubernetes Secrets (`stringData`), GitHub
Actions and GitLab CI logs and variable listings, Jenkins `credentials.xml`, AWS CLI output and
`~/.aws/credentials`, CloudFormation parameters, Pulumi stack config, Argo CD and Flux manifests, Vault CLI output,
Chef data bags and Puppet Hiera, in 25 languages of business.

Sources of the formats:
- ssn: SSA, "Social Security Number Randomization" (2011): area 000, 666 and 900-999, group 00, serial 0000 unused.
- card: ISO/IEC 7812-1 (Luhn, annex B); IIN ranges as the networks publish them (Visa 4; Mastercard 51-55 and
  2221-2720; Amex 34, 37; Discover 6011, 644-649, 65; JCB 3528-3589; Diners 300-305, 36, 38; UnionPay 62; Mir
  2200-2204; Troy 9792; RuPay 60, 652, 508).
- iban: ISO 13616-1 and SWIFT's IBAN Registry (BBAN structures per country), MOD 97-10 (ISO 7064); national
  check digits are written for BE, FR (clé RIB) and ES (DC) only, the other BBANs are random in their structure.
- phones: ITU-T E.164 and the national plans (NANPA, Ofcom, ARCEP, BNetzA, TRAI, AGCOM, CNMC, ANACOM, ACM, UKE,
  PTS, ČTÚ, ANCOM, EETT, NMHH, BTK, Roskomnadzor's plan, NCRC, MSIT, MIC, NBTC, Kominfo, Israel's MoC, Anatel).
- email: RFC 5322 and RFC 6531 (UTF-8 local parts), IDNA 2008 domains; URL encoding RFC 3986, HTML `&#64;`.
- aws_secret: AWS IAM user guide (access key ids AKIA/ASIA + 16 base32, 40-character secret keys).
- webhook: Slack incoming webhooks, Discord webhooks, Microsoft Teams connectors and Power Automate workflow URLs,
  Google Chat, Mattermost, Zapier, DingTalk, Feishu, WeCom bot docs.
- stripe_whsec: Stripe docs (`whsec_` signing secrets, Stripe CLI `listen`).
- connection_string: Azure Storage/Service Bus/Cosmos DB connection strings, ADO.NET, JDBC, ODBC, RFC 3986
  userinfo in database URIs.
- providers: GitHub token formats (2021 blog; fine-grained `github_pat_`), GitLab token prefixes (`glpat-`,
  `glrt-`, `gldt-`, `glptt-`), npm (`npm_` + CRC32), PyPI macaroons (`pypi-AgEIcHlwaS5vcmc`), Docker Hub
  (`dckr_pat_`), Vault 1.10 token prefixes (`hvs.`, `hvb.`), Terraform Cloud (`.atlasv1.`), Pulumi (`pul-`),
  Linear (`lin_api_`), Asana PATs, Okta SSWS tokens, Auth0 client secrets, Azure SAS (`sig=`), GCP service-account
  key JSON, HubSpot private apps (`pat-na1-`), Shopify (`shpat_`, `shpss_`), SendGrid (`SG.`), Mailgun (`key-`),
  Twilio auth tokens, Braintree access tokens, Adyen API keys (`AQE`), Plaid access tokens, Salesforce session
  ids (`00D…!`), Zendesk API tokens (`email/token:`).
- JWT RFC 7519/7515; Basic RFC 7617; Digest RFC 7616; AWS SigV4; session cookies as Django, PHP, Java EE,
  Express, Rails, Laravel and ASP.NET name them; PEM RFC 7468, SEC 1, PKCS #8, OpenSSH PROTOCOL.key.
- What must not survive (`secret`): the value as written (an encoded e-mail as encoded, a disguised key with its
  invisible characters), except: a webhook's token-bearing path or query value, a connection string's key or
  password, the base64 of a Basic credential, a bearer token, a Digest `response`, a SigV4 signature, a cookie's
  value, and for PEM keys (RSA keys are 1024-bit, drawn from the seed) the last full line of the body.
- national ids (outside the target): BR CPF (mod 11), PL PESEL (weights 1-3-7-9), NL BSN (11-proef),
  SE personnummer (Luhn), PT NIF (mod 11).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
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
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 1212
PER_KIND = 100
OUTSIDE_TARGET = frozenset({"br_cpf", "pl_pesel", "nl_bsn", "se_personnummer", "pt_nif", "digest_response"})
"""National ids (their print forms overlap other numbers) and Digest responses (bound to one server nonce)."""

HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
ALNUM_LOWER = string.ascii_lowercase + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
PW_CHARS = string.ascii_letters + string.digits + "!#$%&*+-.=?@^_~"


@dataclass(frozen=True)
class Case:
    """One planted value: its kind, what must not survive, the text holding it, that text as stored, and how."""

    kind: str
    secret: str
    text: str
    carried: str
    is_json: bool
    form: str


Body = str | dict | list
Template = tuple[str, Callable[[random.Random, str], Body]]
Value = tuple[str, str] | tuple[str, str, str]


# ---- people and filler ----------------------------------------------------------------------------------------

NAMES = ("María García López", "João Silva Santos", "Jürgen Müller", "Élodie Martin", "Giulia Rossi",
         "Daan de Vries", "Katarzyna Nowak", "Erik Johansson", "Petr Novák", "Andrei Popescu",
         "Γιώργος Παπαδόπουλος", "Nagy Zsófia", "Mehmet Yılmaz", "Дмитрий Иванов", "Олена Шевченко", "佐藤 健太",
         "김민준", "王伟", "Siti Rahayu", "Nguyễn Văn Minh", "สมชาย ใจดี", "נועה כהן", "أحمد الحسن", "प्रिया शर्मा",
         "Emily Johnson", "Oliver Smith")
FIRST = ("maria", "joao", "juergen", "elodie", "giulia", "daan", "katarzyna", "erik", "petr", "andrei", "giorgos",
         "zsofia", "mehmet", "dmitry", "olena", "kenta", "minjun", "wei", "siti", "minh", "somchai", "noa", "ahmed",
         "priya", "emily", "oliver")
LAST = ("garcia", "silva", "mueller", "martin", "rossi", "devries", "nowak", "johansson", "novak", "popescu",
        "papadopoulos", "nagy", "yilmaz", "ivanov", "shevchenko", "sato", "kim", "wang", "rahayu", "nguyen",
        "jaidee", "cohen", "alhassan", "sharma", "johnson", "smith")
DOMAINS = ("acme-logistik.de", "grupo-iberia.es", "lojafacil.com.br", "fabbrica-rossi.it", "handelshuis.nl",
           "sklep-nowak.pl", "nordfrakt.se", "strojirny-brno.cz", "transcarpatic.ro", "nautilia.gr", "bolt-kft.hu",
           "anadolu-tekstil.com.tr", "torgservis.ru", "agro-invest.com.ua", "sakura-shoji.co.jp", "hanbit.co.kr",
           "huaxin-trade.cn", "tokobaru.co.id", "vietlogistics.vn", "siam-supply.co.th", "galil-tech.co.il",
           "gulfmarine.ae", "bharat-exports.in", "northwind-corp.com", "contoso-retail.co.uk", "globex.fr")
WORDS = ("harbor", "violet", "granite", "falcon", "meadow", "copper", "lantern", "orchid", "tundra", "saffron",
         "quartz", "maple", "ember", "cobalt", "willow", "pepper", "zephyr", "nimbus", "atlas", "juniper")
IDN_EMAILS = ("jürgen.böhm@müller-bau.de", "zoë.dupré@société-exemple.fr", "łukasz.wójcik@firma-łódź.pl",
              "çağrı.öztürk@şirket.com.tr", "δημήτρης@εταιρεία.gr", "дмитрий.иванов@компания.рф",
              "олена@підприємство.укр", "さとう@会社.jp", "민준@회사.한국", "王伟@公司.中国", "สมชาย@บริษัท.ไทย",
              "josé.núñez@correo-año.es", "ngân.hàng@côngty.vn", "prĳs.ñandú@empresa.com.br")


def uid(rng: random.Random) -> str:
    """A random version-4 UUID."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def hexs(rng: random.Random, n: int) -> str:
    """n lower-case hex digits."""
    return pick(rng, HEX, n)


def person(rng: random.Random) -> str:
    """A full name in one of the corpus's languages."""
    return rng.choice(NAMES)


def ascii_email(rng: random.Random) -> str:
    """A plain work e-mail address."""
    sep = rng.choice((".", "_", "", "-"))
    return f"{rng.choice(FIRST)}{sep}{rng.choice(LAST)}{rng.randint(1, 99) if rng.random() < .3 else ''}" \
           f"@{rng.choice(DOMAINS)}"


def amount(rng: random.Random) -> str:
    """A money amount with two decimals."""
    return f"{rng.randint(3, 9999)}.{rng.randint(0, 99):02d}"


def day(rng: random.Random) -> str:
    """An ISO date in 2026."""
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def stamp(rng: random.Random) -> str:
    """An ISO timestamp in 2026, UTC."""
    return f"{day(rng)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"


def host(rng: random.Random) -> str:
    """A company host name."""
    return f"{rng.choice(('db', 'pg', 'mysql', 'sql', 'erp', 'crm'))}-{rng.randint(1, 9)}.{rng.choice(DOMAINS)}"


# ---- values of the kinds ------------------------------------------------------------------------------

def v_password(rng: random.Random) -> Value:
    """A password as people and generators choose them: random, a word with a year, a passphrase."""
    style = rng.choice(("random", "human", "passphrase"))
    if style == "random":
        return pick(rng, PW_CHARS, rng.randint(12, 24)) + rng.choice(string.digits), style
    if style == "human":
        return f"{rng.choice(WORDS).capitalize()}{rng.choice('!#$%&*@')}{rng.randint(1970, 2026)}", style
    return "-".join(rng.sample(WORDS, 3)) + str(rng.randint(10, 99)), style


def akid(rng: random.Random, prefix: str = "AKIA") -> str:
    """An AWS access key id: AKIA (long-term) or ASIA (temporary) and 16 base32 characters."""
    return prefix + pick(rng, string.ascii_uppercase + "234567", 16)


def v_aws_secret(rng: random.Random) -> Value:
    """A 40-character AWS secret access key (base64 alphabet)."""
    key = pick(rng, B64, 40)
    return key, "symbols" if set(key) & set("/+") else "alnum"


def v_webhook(rng: random.Random) -> Value:
    """A chat or automation webhook URL; the secret is the part of it that authorises a post."""
    kind = rng.choice(("slack", "slack_trigger", "discord", "teams", "power_automate", "google_chat", "mattermost",
                       "zapier", "dingtalk", "feishu", "wecom", "rocketchat"))
    if kind == "slack":
        s = f"T{pick(rng, UPPER_DIGITS, 10)}/B{pick(rng, UPPER_DIGITS, 10)}/{pick(rng, B62, 24)}"
        return f"https://hooks.slack.com/services/{s}", kind, s
    if kind == "slack_trigger":
        s = f"T{pick(rng, UPPER_DIGITS, 10)}/{digits(rng, 13)}/{hexs(rng, 32)}"
        return f"https://hooks.slack.com/triggers/{s}", kind, s
    if kind == "discord":
        s = f"{rng.randint(10**17, 10**19)}/{pick(rng, URLSAFE, 68)}"
        return f"https://{rng.choice(('discord.com', 'discordapp.com'))}/api/webhooks/{s}", kind, s
    if kind == "teams":
        s = f"{uid(rng)}@{uid(rng)}/IncomingWebhook/{hexs(rng, 32)}/{uid(rng)}"
        return f"https://{rng.choice(LAST)}corp.webhook.office.com/webhookb2/{s}", kind, s
    if kind == "power_automate":
        s = pick(rng, URLSAFE, 43)
        return (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{hexs(rng, 32)}/"
                f"triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={s}",
                kind, s)
    if kind == "google_chat":
        s = pick(rng, URLSAFE, 43) + "%3D"
        return (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
                f"{pick(rng, URLSAFE, 33)}&token={s}", kind, s)
    if kind == "mattermost":
        s = pick(rng, ALNUM_LOWER, 26)
        return f"https://chat.{rng.choice(DOMAINS)}/hooks/{s}", kind, s
    if kind == "zapier":
        s = f"{digits(rng, 7)}/{pick(rng, ALNUM_LOWER, 7)}"
        return f"https://hooks.zapier.com/hooks/catch/{s}/", kind, s
    if kind == "dingtalk":
        s = hexs(rng, 64)
        return f"https://oapi.dingtalk.com/robot/send?access_token={s}", kind, s
    if kind in ("feishu", "wecom"):
        s = uid(rng)
        base = {"feishu": "https://open.feishu.cn/open-apis/bot/v2/hook/",
                "wecom": "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key="}[kind]
        return base + s, kind, s
    s = f"{pick(rng, B62, 17)}/{pick(rng, B62, 48)}"
    return f"https://chat.{rng.choice(DOMAINS)}/hooks/{s}", kind, s


def v_whsec(rng: random.Random) -> Value:
    """A Stripe webhook signing secret: 32 alphanumerics from the dashboard, 64 hex digits from `stripe listen`."""
    if rng.random() < .5:
        return "whsec_" + pick(rng, B62, 32), "dashboard"
    return "whsec_" + hexs(rng, 64), "cli"


def conn_password(rng: random.Random) -> str:
    """A password that needs no escaping in a URI's userinfo or a `;` connection string."""
    return pick(rng, string.ascii_letters + string.digits + "-_.~!*", rng.randint(14, 22)) + rng.choice("!~*")


def v_connection_string(rng: random.Random) -> Value:
    """A connection string; the secret is its key or password."""
    kind = rng.choice(("azure_storage", "service_bus", "cosmos", "adonet", "jdbc_pg", "jdbc_sqlserver",
                       "jdbc_mysql", "odbc", "uri_pg", "mongodb_srv", "amqp", "redis", "oracle"))
    acct, db, user, h = f"{rng.choice(LAST)}{digits(rng, 3)}", rng.choice(("erp", "crm", "billing")), \
        rng.choice(("app", "svc_erp", "sa_billing", "crm_rw")), host(rng)
    if kind in ("azure_storage", "cosmos"):
        key = base64.b64encode(rng.randbytes(64)).decode()
        if kind == "cosmos":
            return f"AccountEndpoint=https://{acct}.documents.azure.com:443/;AccountKey={key};", kind, key
        return (f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};"
                "EndpointSuffix=core.windows.net", kind, key)
    if kind == "service_bus":
        key = base64.b64encode(rng.randbytes(32)).decode()
        return (f"Endpoint=sb://{acct}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
                f"SharedAccessKey={key}", kind, key)
    pw = conn_password(rng)
    text = {
        "adonet": f"Server=tcp:{acct}.database.windows.net,1433;Initial Catalog={db};Persist Security Info=False;"
                  f"User ID={user};Password={pw};MultipleActiveResultSets=False;Encrypt=True;",
        "jdbc_pg": f"jdbc:postgresql://{h}:5432/{db}?user={user}&password={pw}&sslmode=require",
        "jdbc_sqlserver": f"jdbc:sqlserver://{h}:1433;databaseName={db};user={user};password={pw};encrypt=true",
        "jdbc_mysql": f"jdbc:mysql://{user}:{pw}@{h}:3306/{db}?useSSL=true",
        "odbc": f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:{h},1433;Database={db};Uid={user};Pwd={pw};"
                "Encrypt=yes;",
        "uri_pg": f"postgresql://{user}:{pw}@{h}:5432/{db}",
        "mongodb_srv": f"mongodb+srv://{user}:{pw}@cluster0.{pick(rng, ALNUM_LOWER, 5)}.mongodb.net/{db}"
                       "?retryWrites=true&w=majority",
        "amqp": f"amqps://{user}:{pw}@mq.{rng.choice(DOMAINS)}:5671/{db}",
        "redis": f"rediss://default:{pw}@cache.{rng.choice(DOMAINS)}:6380/0",
        "oracle": f"User Id={user};Password={pw};Data Source={h}:1521/ORCLPDB1;",
    }[kind]
    return text, kind, pw


def v_generic_key(rng: random.Random) -> Value:
    """An API key with no provider prefix: hex, base62, base64 or a UUID."""
    style = rng.choice(("hex32", "hex40", "b62", "b64", "uuid", "dashed"))
    if style.startswith("hex"):
        return hexs(rng, int(style[3:])), style
    if style == "b62":
        return pick(rng, B62, rng.randint(32, 48)), style
    if style == "b64":
        return base64.b64encode(rng.randbytes(33)).decode(), style
    if style == "uuid":
        return uid(rng), style
    return "-".join(pick(rng, UPPER_DIGITS, 6) for _ in range(5)), style


def known_key(rng: random.Random) -> str:
    """A key of a known provider, as it would look undisguised."""
    return rng.choice((
        lambda: crc_token(rng, "ghp_"), lambda: "sk_live_" + pick(rng, B62, 24),
        lambda: f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, B62, 24)}",
        lambda: "glpat-" + pick(rng, URLSAFE, 20), lambda: "AIza" + pick(rng, URLSAFE, 35),
        lambda: f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}", lambda: "hvs." + pick(rng, B62, 24),
        lambda: crc_token(rng, "npm_"), lambda: "shpat_" + hexs(rng, 32), lambda: "sk-proj-" + pick(rng, URLSAFE, 48),
    ))()


INVISIBLE = {"zwsp": "\u200b", "zwnj": "\u200c", "zwj": "\u200d", "wj": "\u2060", "bom": "\ufeff", "shy": "\u00ad",
             "lrm": "\u200e", "rlm": "\u200f", "rlo": "\u202e", "lri": "\u2066"}


def v_disguised(rng: random.Random) -> Value:
    """A known provider's key with invisible characters, bidi controls, soft hyphens or full-width forms inside."""
    key = known_key(rng)
    style = rng.choice((*INVISIBLE, "fullwidth", "fullwidth_prefix", "mixed"))
    if style.startswith("fullwidth"):
        cut = len(key) if style == "fullwidth" else next((i for i, c in enumerate(key) if c in "_-."), 3) + 1
        return "".join(chr(ord(c) + 0xFEE0) for c in key[:cut]) + key[cut:], style
    if style == "mixed":
        marks = "".join(INVISIBLE.values())
        return "".join(c + (rng.choice(marks) if rng.random() < .25 else "") for c in key), style
    mark, every = INVISIBLE[style], rng.choice((0, 3, 4, 6, 8))
    if every == 0:
        at = sorted(rng.sample(range(2, len(key) - 1), 2))
        return key[:at[0]] + mark + key[at[0]:at[1]] + mark + key[at[1]:], style + "_two"
    return mark.join(key[i:i + every] for i in range(0, len(key), every)), f"{style}_every{every}"


def v_email(rng: random.Random) -> Value:
    """An e-mail address, plain, upper case, tagged, internationalised, or encoded as URLs, JSON and HTML write it."""
    style = rng.choice(("plain", "upper", "plus", "idn", "pct", "json_u", "html", "plain"))
    e = ascii_email(rng)
    if style == "idn":
        return rng.choice(IDN_EMAILS), style
    local, domain = e.split("@")
    written = {"plain": e, "upper": e.upper(), "plus": f"{local}+{rng.choice(WORDS)}@{domain}",
               "pct": f"{local}%40{domain}", "json_u": f"{local}\\u0040{domain}", "html": f"{local}&#64;{domain}"}
    return written[style], style


# ---- phone plans: `#` a digit, `N` 2-9, `A` a NANP code, `[..]` one of, `{a|b}` one of, `S` a digit but 0 ----
# (`S` opens a local number after an area code, which never begins with the trunk prefix 0; it draws as `#` does)

PLANS = {
    "phone_us_ca": ("(A) A-####", "A-A-####", "A.A.####", "+1 A-A-####", "+1 (A) A-####", "1-A-A-####",
                    "+1AA####", "A A ####", "1 (A) A ####"),
    "phone_uk": ("07[1234579]## ######", "+44 7[1234579]## ######", "+44 (0)7[1234579]## ######",
                 "07[1234579]##-###-###", "020 [378]### ####", "+44 20 [378]### ####", "0161 S## ####",
                 "+44 113 S## ####", "+447[1234579]########", "0044 7[1234579]## ######"),
    "phone_fr": ("0[67] ## ## ## ##", "+33 [67] ## ## ## ##", "+33 (0)[67] ## ## ## ##", "0[67].##.##.##.##",
                 "0[12345] ## ## ## ##", "+33 [12345] ## ## ## ##", "+33[67]########", "0[67]-##-##-##-##",
                 "0033 [67] ## ## ## ##", "0[67]########"),
    "phone_de": ("015[12579] ########", "+49 15[12579] ########", "017[01256] #######", "+49 17[01256] #######",
                 "+49 (0)17[0126] #######", "0171/#######", "0160-#######", "030 S#######", "+49 30 S#######",
                 "+49 89 S######", "069/S######", "+4915[12579]########", "0221 S######"),
    "phone_in": ("+91 [6789]#### #####", "+91-[6789]####-#####", "0[6789]#### #####", "[6789]#### #####",
                 "[6789]#########", "+91[6789]#########", "+91 22 2### ####", "011-2### ####", "080 2### ####",
                 "+91 80 4### ####"),
    "phone_it": ("3[23456789]# ### ####", "+39 3[23456789]# ### ####", "+39 3[23456789]########", "06 S### ####",
                 "02 S#######", "+39 02 S### ####", "0039 3[23456789]# #######"),
    "phone_es": ("6## ## ## ##", "6## ### ###", "+34 6## ### ###", "+34 7[1234]# ## ## ##", "91 ### ## ##",
                 "+34 93 ### ## ##", "+346########"),
    "phone_pt": ("9[1236]# ### ###", "+351 9[1236]# ### ###", "+351 9[1236]#######", "21# ### ###",
                 "+351 22# ### ###", "00351 9[1236]# ### ###"),
    "phone_nl": ("06-########", "06 ## ## ## ##", "+31 6 ########", "+31 (0)6 ########", "020-S## ####",
                 "+31 20 S## ####", "010 S## ####", "+316########"),
    "phone_pl": ("5[0137]# ### ###", "6[069]# ### ###", "+48 7[2389]# ### ###", "+48 5[0137]#-###-###",
                 "22 S## ## ##", "+48 12 S## ## ##", "+486[069]#######"),
    "phone_se": ("07[0236]-### ## ##", "+46 7[0236] ### ## ##", "+46 (0)7[0236]-### ## ##", "08-S## ### ##",
                 "+46 8 S## ### ##", "031-S# ## ##", "+467[0236]#######"),
    "phone_cz": ("60[12345678] ### ###", "7[02379]# ### ###", "+420 60[12345678] ### ###", "+420 7[02379]# ### ###",
                 "+4207[02379]#######", "2## ### ###", "00420 60[12345678] ### ###"),
    "phone_ro": ("07[2345678]# ### ###", "+40 7[2345678]# ### ###", "+40 (0)7[2345678]# ### ###", "021 S## ####",
                 "+40 21 S## ####", "+407[2345678]#######"),
    "phone_gr": ("69# ### ####", "+30 69# ### ####", "+30 69########", "210 S## ####", "+30 210 S## ####",
                 "2310 S#####"),
    "phone_hu": ("06 [237]0 ### ####", "+36 [237]0 ### ####", "+36-[237]0-###-####", "06-1-S##-####",
                 "+36 1 S## ####", "+36[237]0#######"),
    "phone_tr": ("05[345]# ### ## ##", "+90 5[345]# ### ## ##", "0 (5[345]#) ### ## ##", "+90 (212) S## ## ##",
                 "0212 S## ## ##", "+905[345]#########"),
    "phone_ru": ("8 (9##) ###-##-##", "+7 9## ###-##-##", "+7 (9##) ###-##-##", "8-9##-###-##-##",
                 "+7 495 S##-##-##", "+79#########"),
    "phone_ua": ("0{50|63|66|67|68|73|93|95|96|97|98|99} ### ## ##", "+380 {50|63|67|68|93|97} ### ## ##",
                 "+380 (44) S## ## ##", "(0{50|66|67|95|99}) ###-##-##", "+380{50|63|67|97|98}#######"),
    "phone_il": ("05[023458]-###-####", "+972 5[023458]-###-####", "+972-5[023458]-###-####", "03-S##-####",
                 "+972 3-S##-####", "+9725[023458]#######"),
    "phone_kr": ("010-####-####", "+82 10-####-####", "+82-10-####-####", "02-S##-####", "+82 2-S###-####",
                 "010 #### ####", "+8210########"),
    "phone_vn": ("09# ### ####", "+84 9# ### ####", "03[23456789] ### ####", "+84 3[23456789] ### ####",
                 "028 S### ####", "+849########"),
    "phone_th": ("0[689]#-###-####", "+66 [689]# ### ####", "02-S##-####", "+66 2 S## ####", "+66[689]########"),
    "phone_id": ("08[1235]#-####-####", "+62 8[1235]#-####-####", "+62 8[1235]# #### ####", "021-S###-####",
                 "(021) S#######", "+62 21 S#######", "+628[1235]#########"),
    "phone_br": ("({11|21|31|41|51|61|71|81|85}) 9####-####", "+55 {11|21|31} 9####-####",
                 "+55 ({11|21|47}) 9####-####", "(11) 3###-####", "+55 11 3###-####", "+55{11|21}9########"),
}
PHONE_CTX = {
    "phone_us_ca": (("Phone", "Mobile", "Call me at {}"), ("Teléfono", "Celular", "Llámame al {}"),
                    ("Téléphone", "Cellulaire", "Appelez-moi au {}")),
    "phone_uk": (("Phone", "Mobile", "Ring me on {}"), ("Tel", "Mob", "Please call me back on {}")),
    "phone_fr": (("Téléphone", "Portable", "Rappelez-moi au {}"), ("Tél.", "Mobile", "Vous pouvez me joindre au {}")),
    "phone_de": (("Telefon", "Handy", "Rufen Sie mich unter {} an"), ("Tel.", "Mobil", "Bitte um Rückruf unter {}")),
    "phone_in": (("Phone", "Mobile", "Please call me on {}"), ("फ़ोन", "मोबाइल", "कृपया मुझे {} पर कॉल करें")),
    "phone_it": (("Telefono", "Cellulare", "Mi può richiamare al {}?"),),
    "phone_es": (("Teléfono", "Móvil", "Llámeme al {}, por favor"),),
    "phone_pt": (("Telefone", "Telemóvel", "Pode ligar-me para o {}"),),
    "phone_nl": (("Telefoon", "Mobiel", "Bel me even op {}"),),
    "phone_pl": (("Telefon", "Komórka", "Proszę zadzwonić pod numer {}"),),
    "phone_se": (("Telefon", "Mobil", "Ring mig på {}"),),
    "phone_cz": (("Telefon", "Mobil", "Zavolejte mi prosím na {}"),),
    "phone_ro": (("Telefon", "Mobil", "Vă rog să mă sunați la {}"),),
    "phone_gr": (("Τηλέφωνο", "Κινητό", "Καλέστε με στο {}"),),
    "phone_hu": (("Telefon", "Mobil", "Kérem, hívjon a {} számon"),),
    "phone_tr": (("Telefon", "Cep", "Beni {} numarasından arayın"),),
    "phone_ru": (("Телефон", "Мобильный", "Перезвоните мне по номеру {}"),),
    "phone_ua": (("Телефон", "Мобільний", "Зателефонуйте мені за номером {}"),),
    "phone_il": (("טלפון", "נייד", "אפשר להתקשר אליי ל-{}"),),
    "phone_kr": (("전화", "휴대폰", "{}로 전화 주세요"),),
    "phone_vn": (("Điện thoại", "Di động", "Vui lòng gọi cho tôi theo số {}"),),
    "phone_th": (("โทรศัพท์", "มือถือ", "กรุณาโทรหาฉันที่ {}"),),
    "phone_id": (("Telepon", "HP", "Tolong hubungi saya di nomor {}"),),
    "phone_br": (("Telefone", "Celular", "Me liga no {}"),),
}
SEPS = {" ": "space", "-": "dash", ".": "dot", "/": "slash", "(": "paren"}


def fill(rng: random.Random, pattern: str) -> str:
    """A number of a plan's pattern (see PLANS)."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c in "[{":
            j = pattern.index("]" if c == "[" else "}", i)
            body = pattern[i + 1:j]
            out.append(rng.choice(body if c == "[" else body.split("|")))
            i = j + 1
            continue
        if c == "#":
            c = str(rng.randint(0, 9))
        elif c == "S":
            c = str(rng.randint(0, 9) or 5)
        elif c == "N":
            c = str(rng.randint(2, 9))
        elif c == "A":
            c = f"{rng.randint(2, 9)}{rng.choice('02345678')}{rng.randint(0, 9)}"
        out.append(c)
        i += 1
    return "".join(out)


def phone(kind: str) -> Callable[[random.Random], Value]:
    """The value generator of a phone plan; the style is national or international and the first separator."""
    def gen(rng: random.Random) -> Value:
        number = fill(rng, rng.choice(PLANS[kind]))
        sep = next((SEPS[c] for c in number.lstrip("+") if c in SEPS), "compact")
        return number, ("intl_" if number.startswith(("+", "00")) else "national_") + sep
    return gen


# ---- ssn, cards, IBANs, national ids ---------------------------------------------------------------------------

def v_ssn(rng: random.Random) -> Value:
    """A US SSN as the SSA issues them: area 001-899 but 666, group 01-99, serial 0001-9999."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    parts = (f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}")
    style = rng.choice(("dash", "dash", "space", "compact"))
    return {"dash": "-", "space": " ", "compact": ""}[style].join(parts), style


CARD_RANGES = (("visa", 4, 4, 16), ("mastercard", 51, 55, 16), ("mastercard", 2221, 2720, 16), ("amex", 34, 34, 15),
               ("amex", 37, 37, 15), ("discover", 6011, 6011, 16), ("discover", 644, 649, 16), ("discover", 65, 65, 16),
               ("jcb", 3528, 3589, 16), ("diners", 36, 36, 14), ("diners", 300, 305, 14), ("unionpay", 62, 62, 16),
               ("unionpay", 62, 62, 19), ("mir", 2200, 2204, 16), ("troy", 9792, 9792, 16), ("rupay", 652, 652, 16),
               ("rupay", 508, 508, 16), ("visa", 4, 4, 16))


def v_card(rng: random.Random) -> Value:
    """A card number of a network's IIN range with its Luhn digit, printed with a separator or none."""
    brand, lo, hi, length = rng.choice(CARD_RANGES)
    start = str(rng.randint(lo, hi))
    partial = start + digits(rng, length - len(start) - 1)
    number = partial + luhn_digit(partial)
    sep = rng.choice((" ", "-", ".", "_", "", " "))
    name = {" ": "space", "-": "dash", ".": "dot", "_": "underscore", "": "none"}[sep]
    return (group_card(number, sep) if sep else number), f"{brand}_{name}"


IBAN_BBAN = {"AT": "5n11n", "BE": "3n7n2n", "BG": "4a4n2n8c", "BR": "8n5n10n1a1c", "CH": "5n12c", "CY": "3n5n16c",
             "CZ": "4n6n10n", "DE": "8n10n", "DK": "4n9n1n", "ES": "4n4n1n1n10n", "FR": "5n5n11n2n", "GB": "4a6n8n",
             "GR": "3n4n16c", "HR": "7n10n", "HU": "3n4n1n15n1n", "IE": "4a6n8n", "IL": "3n3n13n", "IT": "1a5n5n12c",
             "LU": "3n13c", "NL": "4a10n", "NO": "4n6n1n", "PL": "8n16n", "PT": "4n4n11n2n", "RO": "4a16c",
             "SA": "2n18c", "SE": "3n16n1n", "SK": "4n6n10n", "TR": "5n1n16c", "UA": "6n19c", "AE": "3n16n"}


def national_check(country: str, b: str) -> str:
    """The BBAN with its national check digits where they are simple to state: BE (mod 97), FR (RIB key), ES (DC)."""
    if country == "BE":
        return b[:10] + f"{int(b[:10]) % 97 or 97:02d}"
    if country == "FR":
        return b[:21] + f"{97 - (89 * int(b[:5]) + 15 * int(b[5:10]) + 3 * int(b[10:21])) % 97:02d}"
    if country == "ES":
        weights = (1, 2, 4, 8, 5, 10, 9, 7, 3, 6)

        def dc(ten: str) -> str:
            d = 11 - sum(int(x) * w for x, w in zip(ten, weights, strict=True)) % 11
            return str({11: 0, 10: 1}.get(d, d))
        return b[:8] + dc("00" + b[:8]) + dc(b[10:]) + b[10:]
    return b


def v_iban(rng: random.Random) -> Value:
    """An IBAN of a registry BBAN structure with its MOD 97 check digits: grouped, compact or lower case."""
    country = rng.choice(tuple(IBAN_BBAN))
    b = national_check(country, bban(rng, IBAN_BBAN[country]))
    iban = country + iban_check(country, b) + b
    style = rng.choice(("grouped", "compact", "lower", "grouped", "lower_grouped"))
    text = group(iban, 4, " ") if "grouped" in style else iban
    return (text.lower() if "lower" in style else text), f"{country}_{style}"


def v_cpf(rng: random.Random) -> Value:
    """A Brazilian CPF: nine digits and two mod-11 check digits."""
    d = [rng.randint(0, 9) for _ in range(9)]
    for n in (10, 11):
        d.append(sum(x * w for x, w in zip(d, range(n, 1, -1), strict=False)) * 10 % 11 % 10)
    s = "".join(map(str, d))
    return (f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}", "dotted") if rng.random() < .7 else (s, "compact")


def v_pesel(rng: random.Random) -> Value:
    """A Polish PESEL: birth date (months +20 after 2000), serial, check digit (weights 1-3-7-9)."""
    year, month = rng.randint(1950, 2005), rng.randint(1, 12)
    body = f"{year % 100:02d}{month + (20 if year >= 2000 else 0):02d}{rng.randint(1, 28):02d}{digits(rng, 4)}"
    check = (10 - sum(int(x) * w for x, w in zip(body, (1, 3, 7, 9) * 3, strict=False)) % 10) % 10
    return body + str(check), "compact"


def v_bsn(rng: random.Random) -> Value:
    """A Dutch BSN: nine digits passing the 11-proef."""
    while True:
        body = str(rng.randint(1, 9)) + digits(rng, 7)
        last = sum(int(x) * w for x, w in zip(body, range(9, 1, -1), strict=True)) % 11
        if last < 10:
            s = body + str(last)
            return (s, "compact") if rng.random() < .6 else (f"{s[:4]}.{s[4:6]}.{s[6:]}", "dotted")


def v_personnummer(rng: random.Random) -> Value:
    """A Swedish personnummer: YYMMDD-NNNC, C the Luhn digit over the nine before it."""
    body = f"{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    s = body + luhn_digit(body)
    return (f"{s[:6]}-{s[6:]}", "dash") if rng.random() < .7 else (f"19{s[:6]}-{s[6:]}", "century")


def v_nif(rng: random.Random) -> Value:
    """A Portuguese NIF of a person: 1-3, seven digits, the mod-11 check digit."""
    body = str(rng.randint(1, 3)) + digits(rng, 7)
    r = sum(int(x) * w for x, w in zip(body, range(9, 1, -1), strict=True)) % 11
    return body + str(0 if r < 2 else 11 - r), "compact"


# ---- values of the wider kinds ----------------------------------------------------------------------------------

def one_of(*makers: Callable[[random.Random], str]) -> Callable[[random.Random], Value]:
    """A generator drawing one of several formats of a provider's secret; the style names the format's index."""
    def gen(rng: random.Random) -> Value:
        i = rng.randrange(len(makers))
        return makers[i](rng), f"format{i}"
    return gen


PROVIDERS: dict[str, tuple[Callable[[random.Random], Value], tuple[str, ...]]] = {
    "salesforce_token": (one_of(lambda r: f"00D{pick(r, B62, 12)}!AQ{pick(r, B62 + '._', 94)}"),
                         ("SF_ACCESS_TOKEN", "SALESFORCE_SESSION_ID", "SFDC_TOKEN")),
    "hubspot_pat": (one_of(lambda r: f"pat-{r.choice(('na1', 'eu1', 'na2'))}-{uid(r)}"),
                    ("HUBSPOT_ACCESS_TOKEN", "HUBSPOT_PRIVATE_APP_TOKEN", "HS_TOKEN")),
    "zendesk_token": (one_of(lambda r: pick(r, B62, 40)), ("ZENDESK_API_TOKEN", "ZD_TOKEN", "ZENDESK_TOKEN")),
    "twilio_auth_token": (one_of(lambda r: hexs(r, 32)), ("TWILIO_AUTH_TOKEN", "TWILIO_TOKEN", "SMS_AUTH_TOKEN")),
    "sendgrid_key": (one_of(lambda r: f"SG.{pick(r, URLSAFE, 22)}.{pick(r, URLSAFE, 43)}"),
                     ("SENDGRID_API_KEY", "SMTP_PASSWORD", "MAIL_API_KEY")),
    "mailgun_key": (one_of(lambda r: "key-" + hexs(r, 32), lambda r: f"{hexs(r, 32)}-{hexs(r, 8)}-{hexs(r, 8)}"),
                    ("MAILGUN_API_KEY", "MG_API_KEY", "MAILGUN_PRIVATE_KEY")),
    "shopify_token": (one_of(*(lambda r, p=p: p + hexs(r, 32) for p in ("shpat_", "shpss_", "shpca_", "shppa_"))),
                      ("SHOPIFY_ACCESS_TOKEN", "SHOPIFY_API_SECRET", "SHOPIFY_ADMIN_TOKEN")),
    "braintree_token": (one_of(lambda r: f"access_token$production${pick(r, ALNUM_LOWER, 16)}${hexs(r, 32)}"),
                        ("BRAINTREE_ACCESS_TOKEN", "PAYPAL_BT_TOKEN", "BT_ACCESS_TOKEN")),
    "adyen_key": (one_of(lambda r: f"AQE{pick(r, B64, 77)}==-{pick(r, B64, 43)}=-{pick(r, B62 + '<>}?%', 16)}"),
                  ("ADYEN_API_KEY", "ADYEN_KEY", "PSP_API_KEY")),
    "plaid_token": (one_of(lambda r: f"access-{r.choice(('production', 'development'))}-{uid(r)}"),
                    ("PLAID_ACCESS_TOKEN", "BANK_LINK_TOKEN", "PLAID_TOKEN")),
    "gitlab_token": (one_of(lambda r: "glpat-" + pick(r, URLSAFE, 20), lambda r: "glrt-" + pick(r, URLSAFE, 20),
                            lambda r: "gldt-" + pick(r, URLSAFE, 20), lambda r: "glptt-" + hexs(r, 40)),
                     ("GITLAB_TOKEN", "CI_REGISTRY_TOKEN", "RUNNER_TOKEN", "GL_DEPLOY_TOKEN")),
    "github_fine_grained": (one_of(lambda r: f"github_pat_{pick(r, B62, 22)}_{pick(r, B62, 59)}"),
                            ("GH_TOKEN", "GITHUB_PAT", "RELEASE_TOKEN")),
    "npm_token": (one_of(lambda r: crc_token(r, "npm_")), ("NPM_TOKEN", "NODE_AUTH_TOKEN", "NPM_PUBLISH_TOKEN")),
    "pypi_token": (one_of(lambda r: "pypi-AgEIcHlwaS5vcmc" + pick(r, URLSAFE, r.randint(140, 190))),
                   ("PYPI_TOKEN", "TWINE_PASSWORD", "PYPI_API_TOKEN")),
    "dockerhub_pat": (one_of(lambda r: "dckr_pat_" + pick(r, URLSAFE, 27)),
                      ("DOCKERHUB_TOKEN", "DOCKER_PASSWORD", "REGISTRY_PAT")),
    "vault_token": (one_of(lambda r: "hvs." + pick(r, B62, 24), lambda r: "hvs.CAESI" + pick(r, URLSAFE, 86),
                           lambda r: "hvb.AAAAAQ" + pick(r, URLSAFE, 120)), ("VAULT_TOKEN", "VAULT_ROOT_TOKEN")),
    "terraform_cloud_token": (one_of(lambda r: f"{pick(r, B62, 14)}.atlasv1.{pick(r, B62, 67)}"),
                              ("TFE_TOKEN", "TF_API_TOKEN", "TF_TOKEN_app_terraform_io")),
    "pulumi_token": (one_of(lambda r: "pul-" + hexs(r, 40)), ("PULUMI_ACCESS_TOKEN", "PULUMI_TOKEN")),
    "linear_key": (one_of(lambda r: "lin_api_" + pick(r, B62, 40)), ("LINEAR_API_KEY", "LINEAR_TOKEN")),
    "asana_pat": (one_of(lambda r: f"1/{digits(r, 16)}:{hexs(r, 32)}", lambda r: f"2/{digits(r, 16)}/"
                         f"{digits(r, 16)}:{hexs(r, 32)}"), ("ASANA_PAT", "ASANA_ACCESS_TOKEN", "ASANA_TOKEN")),
    "okta_token": (one_of(lambda r: "00" + pick(r, URLSAFE, 40)), ("OKTA_API_TOKEN", "OKTA_SSWS", "OKTA_TOKEN")),
    "auth0_client_secret": (one_of(lambda r: pick(r, URLSAFE, 64)),
                            ("AUTH0_CLIENT_SECRET", "AUTH0_M2M_SECRET", "OIDC_CLIENT_SECRET")),
}


def v_azure_sas(rng: random.Random) -> Value:
    """An Azure Storage SAS token; the secret is its URL-encoded `sig`."""
    sig = base64.b64encode(rng.randbytes(32)).decode().replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    se = day(rng)
    return (f"sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdlacupiytfx&se={se}T18:00:00Z&st={day(rng)}T09:00:00Z&spr=https"
            f"&sig={sig}", "account_sas", sig)


SMALL_PRIMES = math.prod(p for p in range(3, 2000, 2) if all(p % d for d in range(3, int(p ** .5) + 1, 2)))
"""The odd primes under 2000, multiplied: a candidate sharing none of them is worth a Miller-Rabin test."""


def prime(rng: random.Random, bits: int) -> int:
    """A random probable prime of `bits` bits (Miller-Rabin, 12 rounds drawn from `rng`)."""
    while True:
        n = rng.getrandbits(bits) | (1 << (bits - 1)) | 1
        if math.gcd(n, SMALL_PRIMES) != 1:
            continue
        d, s = n - 1, 0
        while d % 2 == 0:
            d, s = d // 2, s + 1
        for _ in range(12):
            x = pow(rng.randrange(2, n - 2), d, n)
            if x in (1, n - 1):
                continue
            for _ in range(s - 1):
                x = pow(x, 2, n)
                if x == n - 1:
                    break
            else:
                break
        else:
            return n


def rsa_pem(rng: random.Random, bits: int = 1024) -> str:
    """An RSA private key in PKCS #1 PEM from primes drawn from `rng`."""
    from cryptography.hazmat.primitives.asymmetric import rsa
    while True:
        p, q = prime(rng, bits // 2), prime(rng, bits // 2)
        phi = (p - 1) * (q - 1)
        if p != q and phi % 65537:
            break
    d = pow(65537, -1, phi)
    numbers = rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p),
                                    rsa.RSAPublicNumbers(65537, p * q))
    return numbers.private_key().private_bytes(serialization.Encoding.PEM,
                                               serialization.PrivateFormat.TraditionalOpenSSL,
                                               serialization.NoEncryption()).decode()


def pem(rng: random.Random) -> tuple[str, str]:
    """A private key in PEM (RSA PKCS #1, EC SEC 1, PKCS #8, OpenSSH Ed25519) and its format's name."""
    style = rng.choice(("rsa", "ec", "pkcs8", "openssh"))
    if style == "rsa":
        return rsa_pem(rng), style
    if style == "openssh":
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = base64.b64encode(openssh_ed25519_blob(seed, public, rng.randbytes(4), b"deploy@ci")).decode()
        return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(blob, 70, "\n") + \
            "\n-----END OPENSSH PRIVATE KEY-----\n", style
    key = ec.derive_private_key(rng.getrandbits(250) + 1, rng.choice((ec.SECP256R1(), ec.SECP384R1())))
    fmt = serialization.PrivateFormat.PKCS8 if style == "pkcs8" else serialization.PrivateFormat.TraditionalOpenSSL
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode(), style


def pem_secret(text: str) -> str:
    """What of a PEM block must not survive: its last full base64 line (a redaction that stops early leaves it)."""
    body = [line for line in text.splitlines() if line and not line.startswith("-----")]
    return body[-2] if len(body) > 1 else body[0]


def v_private_key(rng: random.Random) -> Value:
    """A PEM private key; the secret is a line of its body."""
    text, style = pem(rng)
    return text, style, pem_secret(text)


def v_gcp_sa_key(rng: random.Random) -> Value:
    """A GCP service-account key file (JSON); the secret is a line of its private key's body."""
    project = f"{rng.choice(WORDS)}-{rng.choice(('prod', 'erp', 'billing'))}-{digits(rng, 6)}"
    account = f"{rng.choice(('terraform', 'ci-deployer', 'bq-loader'))}@{project}.iam.gserviceaccount.com"
    key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1()) if rng.random() < .5 else None
    text = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode() if key else \
        serialization.load_pem_private_key(rsa_pem(rng).encode(), None).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    doc = {"type": "service_account", "project_id": project, "private_key_id": hexs(rng, 40), "private_key": text,
           "client_email": account, "client_id": digits(rng, 21), "auth_uri": "https://accounts.google.com/o/oauth2/auth",
           "token_uri": "https://oauth2.googleapis.com/token", "universe_domain": "googleapis.com"}
    return json.dumps(doc, indent=2), "rsa" if key is None else "ec", pem_secret(text)


def v_jwt(rng: random.Random) -> Value:
    """A JWT (HS256 or a fake RS256 signature) with business claims."""
    alg = rng.choice(("HS256", "RS256"))
    header = b64url(json.dumps({"alg": alg, "typ": "JWT", **({"kid": hexs(rng, 16)} if alg == "RS256" else {})},
                               separators=(",", ":")).encode())
    claims = {"sub": digits(rng, 8), "email": ascii_email(rng), "tenant": rng.choice(DOMAINS),
              "roles": rng.sample(["billing", "admin", "agent", "viewer"], 2),
              "iat": 1780000000 + rng.randint(0, 10**6)}
    claims["exp"] = claims["iat"] + 3600
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    signing = f"{header}.{payload}".encode()
    sig = hmac.new(rng.randbytes(32), signing, hashlib.sha256).digest() if alg == "HS256" else rng.randbytes(256)
    return f"{header}.{payload}.{b64url(sig)}", alg


def v_basic_auth(rng: random.Random) -> Value:
    """An HTTP Basic credential (RFC 7617); the secret is its base64."""
    user = rng.choice((ascii_email(rng), "api", "svc-billing", f"{ascii_email(rng)}/token"))
    secret = base64.b64encode(f"{user}:{conn_password(rng)}".encode()).decode()
    return f"Basic {secret}", "email_user" if "@" in user else "plain_user", secret


def v_bearer(rng: random.Random) -> Value:
    """An opaque OAuth bearer token: Google `ya29.`, random base62 or hex."""
    style = rng.choice(("ya29", "b62", "hex"))
    token = {"ya29": lambda: "ya29.a0" + pick(rng, URLSAFE, 150), "b62": lambda: pick(rng, B62, 40),
             "hex": lambda: hexs(rng, 64)}[style]()
    return f"Bearer {token}", style, token


def v_digest(rng: random.Random) -> Value:
    """An HTTP Digest Authorization header (RFC 7616); the secret is its `response`."""
    response = hexs(rng, 32) if rng.random() < .6 else hexs(rng, 64)
    algo = "MD5" if len(response) == 32 else "SHA-256"
    return (f'Digest username="{rng.choice(FIRST)}", realm="{rng.choice(DOMAINS)}", nonce="{hexs(rng, 32)}", '
            f'uri="/api/v2/invoices", algorithm={algo}, qop=auth, nc=00000001, cnonce="{hexs(rng, 16)}", '
            f'response="{response}", opaque="{hexs(rng, 32)}"', algo, response)


def v_sigv4(rng: random.Random) -> Value:
    """An AWS SigV4 signature, in an Authorization header or a presigned URL; the secret is the signature."""
    sig, date = hexs(rng, 64), day(rng).replace("-", "")
    cred = f"{akid(rng)}/{date}/eu-west-1/s3/aws4_request"
    if rng.random() < .5:
        return (f"AWS4-HMAC-SHA256 Credential={cred}, SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
                f"Signature={sig}", "header", sig)
    return (f"https://invoices-{rng.choice(LAST)}.s3.eu-west-1.amazonaws.com/2026/INV-{digits(rng, 6)}.pdf?"
            f"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={cred.replace('/', '%2F')}&X-Amz-Date={date}T101500Z"
            f"&X-Amz-Expires=604800&X-Amz-SignedHeaders=host&X-Amz-Signature={sig}", "presigned", sig)


def v_cookie(rng: random.Random) -> Value:
    """A session cookie as frameworks name and shape them; the secret is its value."""
    name, value = rng.choice((
        ("sessionid", pick(rng, ALNUM_LOWER, 32)), ("PHPSESSID", pick(rng, ALNUM_LOWER, 26)),
        ("JSESSIONID", hexs(rng, 32).upper()), ("connect.sid", f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, B64, 43)}"),
        ("_shop_session", pick(rng, B64, 120) + "--" + hexs(rng, 40)),
        ("laravel_session", base64.b64encode(rng.randbytes(180)).decode()),
        ("ASP.NET_SessionId", pick(rng, ALNUM_LOWER, 24)),
        ("__Secure-next-auth.session-token", f"eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..{pick(rng, URLSAFE, 22)}."
                                             f"{pick(rng, URLSAFE, 160)}.{pick(rng, URLSAFE, 22)}")))
    return f"{name}={value}", name, value


# ---- infrastructure carriers: (rng, NAME, value) -> text or JSON document ------------------------------------

APPS = ("billing", "erp-sync", "crm-gateway", "payroll", "storefront", "helpdesk-bridge", "invoicing")


def snake(name: str) -> str:
    """ENV_NAME as a variable name."""
    return name.lower()


def camel(name: str) -> str:
    """ENV_NAME as camelCase."""
    head, *rest = name.lower().split("_")
    return head + "".join(p.capitalize() for p in rest)


def tfvars(rng: random.Random, name: str, v: str) -> Body:
    return f'# {rng.choice(("prod", "staging"))}.auto.tfvars\nregion         = "eu-central-1"\n' \
           f'{snake(name)} = "{v}"\ninstance_count = {rng.randint(1, 6)}\n'


def tfstate(rng: random.Random, name: str, v: str) -> Body:
    rtype, attr = rng.choice((("aws_ssm_parameter", "value"), ("github_actions_secret", "plaintext_value"),
                              ("gitlab_project_variable", "value"), ("kubernetes_secret", "data"),
                              ("vault_generic_secret", "data_json")))
    value: object = {name: v} if attr == "data" else v
    if attr == "data_json":
        value = json.dumps({snake(name): v}, ensure_ascii=False)
    return {"version": 4, "terraform_version": "1.9.5", "serial": rng.randint(1, 400), "lineage": uid(rng),
            "outputs": {}, "resources": [{"mode": "managed", "type": rtype, "name": snake(name),
                                          "provider": f'provider["registry.terraform.io/hashicorp/'
                                                      f'{rtype.split("_")[0]}"]',
                                          "instances": [{"schema_version": 0, "sensitive_attributes": [],
                                                         "attributes": {"id": snake(name), attr: value}}]}]}


def ansible(rng: random.Random, name: str, v: str) -> Body:
    env = rng.choice(("production", "staging"))
    return f"---\n# inventories/{env}/group_vars/{rng.choice(APPS)}.yml\nntp_server: ntp.{rng.choice(DOMAINS)}\n" \
           f'{snake(name)}: "{v}"\napp_port: {rng.randint(3000, 9000)}\n'


def helm(rng: random.Random, name: str, v: str) -> Body:
    return f"replicaCount: {rng.randint(1, 4)}\nimage:\n  repository: registry.{rng.choice(DOMAINS)}/" \
           f"{rng.choice(APPS)}\n  tag: \"2.{rng.randint(0, 30)}.1\"\n{rng.choice(APPS).split('-')[0]}:\n" \
           f"  {camel(name)}: \"{v}\"\n"


def k8s_secret(rng: random.Random, name: str, v: str) -> Body:
    return f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {rng.choice(APPS)}-env\n  namespace: " \
           f"{rng.choice(('prod', 'finance', 'crm'))}\ntype: Opaque\nstringData:\n  {name}: \"{v}\"\n"


def gitlab_vars(rng: random.Random, name: str, v: str) -> Body:
    return [{"variable_type": "env_var", "key": "CI_DEBUG", "value": "false", "protected": False, "masked": False},
            {"variable_type": "env_var", "key": name, "value": v, "protected": True, "masked": False, "raw": False,
             "environment_scope": rng.choice(("*", "production"))}]


def gha_log(rng: random.Random, name: str, v: str) -> Body:
    t = stamp(rng)[:-1]
    return f"{t}.1Z ##[group]Run ./scripts/deploy.sh\n{t}.2Z ./scripts/deploy.sh\n{t}.2Z shell: /usr/bin/bash -e " \
           f"{{0}}\n{t}.2Z env:\n{t}.2Z   ENVIRONMENT: production\n{t}.3Z   {name}: {v}\n{t}.3Z ##[endgroup]\n"


def jenkins(rng: random.Random, name: str, v: str) -> Body:
    return "<?xml version='1.1' encoding='UTF-8'?>\n<com.cloudbees.plugins.credentials.SystemCredentialsProvider " \
           "plugin=\"credentials@1337.v60b_d7b_c7b_c9f\">\n  <domainCredentialsMap>\n    <entry>\n      " \
           "<java.util.concurrent.CopyOnWriteArrayList>\n        <org.jenkinsci.plugins.plaincredentials.impl." \
           f"StringCredentialsImpl>\n          <scope>GLOBAL</scope>\n          <id>{snake(name)}</id>\n          " \
           f"<description>{rng.choice(APPS)}</description>\n          <secret>{v}</secret>\n        " \
           "</org.jenkinsci.plugins.plaincredentials.impl.StringCredentialsImpl>\n"


def cfn_params(rng: random.Random, name: str, v: str) -> Body:
    return [{"ParameterKey": "Environment", "ParameterValue": rng.choice(("prod", "staging"))},
            {"ParameterKey": camel(name)[0].upper() + camel(name)[1:], "ParameterValue": v}]


def pulumi(rng: random.Random, name: str, v: str) -> Body:
    return f"config:\n  aws:region: eu-west-1\n  {rng.choice(APPS)}:{camel(name)}: \"{v}\"\n" \
           f"  {rng.choice(APPS)}:replicas: \"{rng.randint(1, 5)}\"\n"


def vault_cli(rng: random.Random, name: str, v: str) -> Body:
    key = snake(name)
    return f"$ vault kv get secret/{rng.choice(APPS)}/prod\n====== Secret Path ======\nsecret/data/" \
           f"{rng.choice(APPS)}/prod\n\n======= Metadata =======\nKey                Value\n---                " \
           f"-----\ncreated_time       {stamp(rng)}\nversion            {rng.randint(1, 9)}\n\n====== Data ======\n" \
           f"Key{' ' * (len(key) + 1)}Value\n---{' ' * (len(key) + 1)}-----\n{key}    {v}\n"


def chef_bag(rng: random.Random, name: str, v: str) -> Body:
    return {"id": rng.choice(APPS), snake(name): v, "environment": rng.choice(("production", "staging"))}


def hiera(rng: random.Random, name: str, v: str) -> Body:
    return f"---\n# data/nodes/{rng.choice(APPS)}01.{rng.choice(DOMAINS)}.yaml\nprofile::{rng.choice(APPS)[:4]}" \
           f"::{snake(name)}: '{v}'\nprofile::base::ntp: true\n"


def argocd(rng: random.Random, name: str, v: str) -> Body:
    app = rng.choice(APPS)
    return f"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {app}\n  namespace: argocd\n" \
           f"spec:\n  source:\n    repoURL: https://git.{rng.choice(DOMAINS)}/platform/charts.git\n    chart: {app}\n" \
           f"    helm:\n      parameters:\n        - name: secrets.{camel(name)}\n          value: \"{v}\"\n"


def kustomize(rng: random.Random, name: str, v: str) -> Body:
    return f"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: " \
           f"{rng.choice(('prod', 'erp'))}\nsecretGenerator:\n  - name: {rng.choice(APPS)}-env\n    literals:\n" \
           f"      - LOG_LEVEL=info\n      - {name}={v}\n"


def secrets_manager(rng: random.Random, name: str, v: str) -> Body:
    app = rng.choice(APPS)
    return {"ARN": f"arn:aws:secretsmanager:eu-west-1:{digits(rng, 12)}:secret:prod/{app}-{pick(rng, B62, 6)}",
            "Name": f"prod/{app}", "VersionId": uid(rng),
            "SecretString": json.dumps({snake(name): v}, ensure_ascii=False),
            "VersionStages": ["AWSCURRENT"], "CreatedDate": "2026-03-02T10:14:55.120000+00:00"}


def gitlab_log(rng: random.Random, name: str, v: str) -> Body:
    return f"Running with gitlab-runner 17.{rng.randint(0, 6)}.1 (a1b2c3d4)\n  on shared-runner-{rng.randint(1, 9)} " \
           f"xY7zQ2\nExecuting \"step_script\" stage of the job script\n$ export {name}={v}\n" \
           f"$ ./scripts/release.sh production\n"


def flux(rng: random.Random, name: str, v: str) -> Body:
    app = rng.choice(APPS)
    return f"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {app}\n  namespace: " \
           f"flux-system\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: {app}\n  values:\n    env:\n" \
           f"      {name}: \"{v}\"\n"


INFRA = (("tfvars", tfvars), ("tfstate", tfstate), ("ansible_group_vars", ansible), ("helm_values", helm),
         ("k8s_stringdata", k8s_secret), ("gitlab_variables", gitlab_vars), ("gha_log", gha_log),
         ("jenkins_credentials", jenkins), ("cfn_parameters", cfn_params), ("pulumi_config", pulumi),
         ("vault_kv_get", vault_cli), ("chef_data_bag", chef_bag), ("puppet_hiera", hiera),
         ("argocd_app", argocd), ("kustomize", kustomize), ("secrets_manager", secrets_manager),
         ("gitlab_ci_log", gitlab_log), ("flux_helmrelease", flux))


def infra(names: tuple[str, ...]) -> list[Template]:
    """Every infrastructure carrier, each under one of `names` drawn per case."""
    return [(form, lambda rng, v, f=fn: f(rng, rng.choice(names), v)) for form, fn in INFRA]


# ---- business carriers: a sentence said in a ticket, chat, SMS, call or letter ---------------------------------

def zendesk(rng: random.Random, s: str) -> Body:
    return {"ticket": {"id": rng.randint(10000, 99999), "subject": rng.choice(("Access", "Factura", "Zugang",
            "Rechnung", "Pedido")), "description": f"{rng.choice(('Hi,', 'Hola,', 'Hallo,', 'Bonjour,'))}\n\n{s}"
            f"\n\n{person(rng)}", "status": "open", "tags": ["billing", "vip"]}}


def zendesk_macro(rng: random.Random, s: str) -> Body:
    return {"macro": {"id": rng.randint(10**9, 10**10), "title": "Onboarding::Credentials", "active": True,
                      "actions": [{"field": "comment_value_html", "value": f"<p>{s}</p>"},
                                  {"field": "status", "value": "pending"}]}}


def intercom(rng: random.Random, s: str) -> Body:
    return {"type": "conversation", "id": digits(rng, 12), "conversation_parts": {"conversation_parts": [
        {"type": "conversation_part", "part_type": "comment", "body": f"<p>{s}</p>",
         "author": {"type": "user", "name": person(rng)}, "created_at": 1780000000 + rng.randint(0, 10**6)}]}}


def freshdesk(rng: random.Random, s: str) -> Body:
    return {"id": rng.randint(1000, 9999), "subject": "Re: #" + digits(rng, 5), "description_text": s,
            "priority": 2, "status": 2, "source": rng.choice((1, 2, 7)), "requester_id": rng.randint(10**10, 10**11)}


def hubspot_note(rng: random.Random, s: str) -> Body:
    return {"engagement": {"id": rng.randint(10**9, 10**10), "type": "NOTE", "timestamp": 1780000000000},
            "associations": {"contactIds": [rng.randint(100, 99999)]}, "metadata": {"body": s}}


def salesforce_csv(rng: random.Random, s: str) -> Body:
    desc = f"{person(rng)} wrote:\n{s}\n-- via Web-to-Case".replace('"', '""')
    return f'"Id","CaseNumber","Subject","Description","Status"\n"500{pick(rng, B62, 15)}","{digits(rng, 8)}",' \
           f'"Customer request","{desc}","New"\n'


def twilio_sms(rng: random.Random, s: str) -> Body:
    return {"sid": "SM" + hexs(rng, 32), "account_sid": "AC" + hexs(rng, 32), "from": "+1206" + digits(rng, 7),
            "to": "+1206" + digits(rng, 7), "body": s, "status": "received", "direction": "inbound",
            "date_created": "Tue, 03 Mar 2026 10:15:00 +0000", "api_version": "2010-04-01"}


def transcript(rng: random.Random, s: str) -> Body:
    return f"Call {digits(rng, 10)} | queue: {rng.choice(('billing', 'soporte', 'kundenservice'))}\n" \
           f"[00:00:04] AGENT: {rng.choice(('How can I help?', '¿En qué puedo ayudarle?', 'Wie kann ich helfen?'))}\n" \
           f"[00:00:{rng.randint(10, 59)}] CUSTOMER: {s}\n[00:01:02] AGENT: {rng.choice(('Thanks.', 'Gracias.'))}\n"


def ics(rng: random.Random, s: str) -> Body:
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Microsoft Corporation//Outlook 16.0 MIMEDIR//EN\r\n" \
           f"BEGIN:VEVENT\r\nUID:{uid(rng)}\r\nDTSTART:{day(rng).replace('-', '')}T090000Z\r\n" \
           f"SUMMARY:{rng.choice(('Onboarding', 'Quarterly review', 'Kick-off'))}\r\nDESCRIPTION:" \
           f"{s.replace(',', chr(92) + ',')}\r\nORGANIZER;CN={person(rng)}:mailto:{ascii_email(rng)}\r\n" \
           "END:VEVENT\r\nEND:VCALENDAR\r\n"


def letter(rng: random.Random, s: str) -> Body:
    return f"{rng.choice(DOMAINS).split('.')[0].upper()} GmbH / S.A. / Ltd.{' ' * 30}{day(rng)}\n\n" \
           f"{person(rng)}\n{' ' * 4}{s}\n\n{' ' * 40}Page 1 of 1\n"


BUSINESS = (("zendesk_ticket", zendesk), ("zendesk_macro", zendesk_macro), ("intercom_conversation", intercom),
            ("freshdesk_ticket", freshdesk), ("hubspot_note", hubspot_note), ("salesforce_case_csv", salesforce_csv),
            ("twilio_message", twilio_sms), ("call_transcript", transcript), ("ics_invite", ics),
            ("pdf_letter", letter))


def said(sentences: tuple[str, ...]) -> list[Template]:
    """Every business carrier, each holding one of `sentences` (a `{}` for the value) drawn per case."""
    return [(form, lambda rng, v, f=fn: f(rng, rng.choice(sentences).format(v))) for form, fn in BUSINESS]


# ---- record carriers: a value in a field of a business record (rng, label, key, value) ------------------------

def crm_csv(rng: random.Random, label: str, key: str, v: str) -> Body:
    return f'"Id","Name","Account","{label}","Owner"\n"003{pick(rng, B62, 15)}","{person(rng)}",' \
           f'"{rng.choice(DOMAINS)}","{v}","{person(rng)}"\n'


def hr_csv(rng: random.Random, label: str, key: str, v: str) -> Body:
    return f"ID;Name;{label};Dept;Start\n{digits(rng, 6)};{person(rng)};{v};{rng.choice(('FIN', 'OPS', 'IT'))};" \
           f"{day(rng)}\n"


def payroll_csv(rng: random.Random, label: str, key: str, v: str) -> Body:
    gross = rng.randint(2000, 9000)
    return f"Period,Employee,{label},Gross,Net\n2026-{rng.randint(1, 12):02d},{person(rng)},{v},{gross}.00," \
           f"{gross * 7 // 10}.00\n"


def vcard(rng: random.Random, label: str, key: str, v: str) -> Body:
    prop = {"phone": "TEL;TYPE=CELL,VOICE:", "email": "EMAIL;TYPE=WORK:"}.get(key, f"NOTE:{label}: ")
    return f"BEGIN:VCARD\r\nVERSION:4.0\r\nFN:{person(rng)}\r\nORG:{rng.choice(DOMAINS)}\r\n{prop}{v}\r\nEND:VCARD\r\n"


def shopify(rng: random.Random, label: str, key: str, v: str) -> Body:
    extra = {key: v} if key in ("phone", "email") else {}
    notes = [] if extra else [{"name": label, "value": v}]
    return {"id": rng.randint(10**12, 10**13), "order_number": rng.randint(1000, 99999), "currency": "EUR",
            "total_price": amount(rng), "customer": {"id": rng.randint(10**12, 10**13), **extra},
            "note_attributes": notes, "financial_status": "paid"}


def woo(rng: random.Random, label: str, key: str, v: str) -> Body:
    billing = {"first_name": person(rng).split()[0], "country": rng.choice(("ES", "PT", "DE", "BR"))}
    if key in ("phone", "email"):
        billing[key] = v
    return {"id": rng.randint(100, 99999), "status": "processing", "currency": "EUR", "billing": billing,
            "meta_data": [] if key in ("phone", "email") else [{"id": rng.randint(1, 999), "key": label, "value": v}]}


def invoice(rng: random.Random, label: str, key: str, v: str) -> Body:
    return f"{'INVOICE / FACTURA / RECHNUNG':<48}No. {digits(rng, 7)}\n{person(rng):<48}Date {day(rng)}\n" \
           f"{label + ':':<24}{v}\n\n{'Description':<40}{'Qty':>5}{'Amount':>12}\n" \
           f"{'Consulting services':<40}{rng.randint(1, 9):>5}{amount(rng):>12}\n"


def statement(rng: random.Random, label: str, key: str, v: str) -> Body:
    return f"{'Date':<12}{'Description':<52}{'Amount':>12}\n{day(rng):<12}{'SEPA transfer ' + label + ' ' + v:<52}" \
           f"{'-' + amount(rng):>12}\n{day(rng):<12}{'Card payment ' + rng.choice(APPS):<52}{amount(rng):>12}\n"


def idoc(rng: random.Random, label: str, key: str, v: str) -> Body:
    field = {"phone": "TELF1", "email": "SMTP_ADDR", "iban": "IBAN", "card": "CCNUM"}.get(key, "STCD1")
    return f"EDI_DC40  800{digits(rng, 16)}740 3012DEBMAS07\nE2KNA1M005  KUNNR={digits(rng, 10)}  NAME1=" \
           f"{person(rng)}  LAND1={rng.choice(('DE', 'ES', 'IT'))}\nE2KNA1M005  {field}={v}  ({label})\n"


def zendesk_user(rng: random.Random, label: str, key: str, v: str) -> Body:
    fields = {key: v} if key in ("phone", "email") else {"user_fields": {key: v}}
    return {"user": {"id": rng.randint(10**9, 10**10), "name": person(rng), "role": "end-user", **fields}}


def hubspot_contact(rng: random.Random, label: str, key: str, v: str) -> Body:
    return {"id": digits(rng, 9), "properties": {"firstname": person(rng).split()[0], key: v,
                                                 "lifecyclestage": "customer"}, "archived": False}


RECORDS = (("crm_csv", crm_csv), ("hr_csv", hr_csv), ("payroll_csv", payroll_csv), ("vcard", vcard),
           ("shopify_order", shopify), ("woocommerce_order", woo), ("invoice_pdf", invoice),
           ("bank_statement_pdf", statement), ("sap_idoc", idoc), ("zendesk_user", zendesk_user),
           ("hubspot_contact", hubspot_contact))


def records(labels: tuple[str, ...], key: str) -> list[Template]:
    """Every record carrier, each under one of `labels` (in the company's language) drawn per case."""
    return [(form, lambda rng, v, f=fn: f(rng, rng.choice(labels), key, v)) for form, fn in RECORDS]


# ---- HTTP and multi-line carriers -------------------------------------------------------------------------------

def request_line(header: str, v: str, url: str) -> str:
    """A header line, or the request line when the value is a (presigned) URL."""
    return f"GET {v} HTTP/1.1" if v.startswith("http") else f"POST {url} HTTP/1.1\n{header}: {v}"


def http(header: str) -> list[Template]:
    """Carriers of an HTTP credential sent in `header` (Authorization, Cookie)."""
    def api(rng: random.Random) -> str:
        return f"https://api.{rng.choice(DOMAINS)}/v2/{rng.choice(('charges', 'payouts', 'invoices', 'orders'))}"

    def curl(v: str, url: str) -> str:
        return f'curl -sS -o out.pdf "{v}"' if v.startswith("http") else f'curl -sS -H "{header}: {v}" {url}'
    return [
        ("http_dump", lambda rng, v: request_line(header, v, api(rng)) + "\nContent-Type: application/json\n"),
        ("payment_log", lambda rng, v: {"ts": stamp(rng), "level": "debug", "svc": "payments", "msg": "outbound",
                                        "http": {"method": "POST", "url": v if v.startswith("http") else api(rng),
                                                 "headers": {} if v.startswith("http") else {header: v}}}),
        ("gitlab_ci_curl", lambda rng, v: gitlab_log(rng, "CURL_OPTS", "-v").replace(
            "$ ./scripts", f"$ {curl(v, api(rng))}\n$ ./scripts")),
        ("jenkins_console", lambda rng, v: f"[Pipeline] sh\n+ {curl(v, api(rng))}\n[Pipeline] }}\nFinished: SUCCESS\n"),
        ("ansible_uri_task", lambda rng, v: "- name: Call billing API\n  ansible.builtin.uri:\n    url: " + (
            f"{v}\n    dest: /tmp/invoice.pdf\n" if v.startswith("http")
            else f"{api(rng)}\n    method: POST\n    headers:\n      {header}: \"{v}\"\n")),
        ("har_attachment", lambda rng, v: {"log": {"entries": [{"request": {
            "method": "GET", "url": v if v.startswith("http") else api(rng),
            "headers": [{"name": "Accept", "value": "*/*"}]
            + [{"name": header, "value": v}] * (not v.startswith("http"))}}]}}),
    ] + [("set_cookie_dump", lambda rng, v: f"HTTP/1.1 200 OK\nDate: Tue, 03 Mar 2026 10:00:00 GMT\n"
                                            f"Set-Cookie: {v}; Path=/; HttpOnly; Secure\n")] * (header == "Cookie") \
        + http_said(header)


def http_said(header: str) -> list[Template]:
    """The business carriers holding a sentence about the credential: the header, or a presigned URL's link."""
    heads = (f"Request failed with 401, headers were: {header}: {{}}", f"{header} = {{}}", f"Cabecera {header}: {{}}",
             f"{header}-Header: {{}}")
    links = ("Download link: {}", "Enlace de descarga: {}", "Link zum Herunterladen: {}", "{}")
    return [(form, lambda rng, v, f=fn: f(rng, rng.choice(links if v.startswith("http") else heads).format(v)))
            for form, fn in BUSINESS]


def indent(text: str, n: int) -> str:
    """`text` as a YAML block scalar's lines, indented by n spaces."""
    return "\n".join(" " * n + line for line in text.strip("\n").splitlines()) + "\n"


BLOCKS: list[Template] = [
    ("k8s_tls_secret", lambda rng, v: f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {rng.choice(APPS)}-tls\n"
                                      f"type: kubernetes.io/tls\nstringData:\n  tls.key: |\n{indent(v, 4)}"),
    ("ansible_block", lambda rng, v: f"---\ndeploy_user: ci\nssh_private_key: |\n{indent(v, 2)}"),
    ("helm_block", lambda rng, v: f"git:\n  repo: git@git.{rng.choice(DOMAINS)}:erp/config.git\n  sshKey: |\n"
                                  f"{indent(v, 4)}"),
    ("argocd_repo_secret", lambda rng, v: "apiVersion: v1\nkind: Secret\nmetadata:\n  labels:\n    argocd.argoproj.io/"
                                          f"secret-type: repository\nstringData:\n  url: git@git.{rng.choice(DOMAINS)}"
                                          f":ops/apps.git\n  sshPrivateKey: |\n{indent(v, 4)}"),
    ("hiera_block", lambda rng, v: f"---\nprofile::git::deploy_key: |\n{indent(v, 2)}"),
    ("jenkins_ssh_key", lambda rng, v: "<com.cloudbees.jenkins.plugins.sshcredentials.impl.BasicSSHUserPrivateKey>\n"
                                       f"  <id>deploy-key</id>\n  <username>git</username>\n  <privateKeySource>\n"
                                       f"    <privateKey>{v}</privateKey>\n  </privateKeySource>\n"),
    ("ec2_create_key_pair", lambda rng, v: {"KeyFingerprint": ":".join(hexs(rng, 2) for _ in range(20)),
                                            "KeyMaterial": v, "KeyName": "erp-prod",
                                            "KeyPairId": "key-" + hexs(rng, 17)}),
    ("tfstate_tls", lambda rng, v: tfstate(rng, "PRIVATE_KEY_PEM", v)),
    ("gitlab_file_variable", lambda rng, v: gitlab_vars(rng, "SSH_PRIVATE_KEY", v)),
    ("chef_data_bag", lambda rng, v: chef_bag(rng, "DEPLOY_KEY", v)),
    ("secrets_manager", lambda rng, v: secrets_manager(rng, "PRIVATE_KEY", v)),
    ("zendesk_ticket", lambda rng, v: zendesk(rng, f"Our cert key, in case you need it:\n{v}")),
    ("vault_kv_json", lambda rng, v: {"request_id": uid(rng),
                                      "data": {"data": {"key": v}, "metadata": {"version": 2}}}),
]

GCP_BLOCKS: list[Template] = [
    ("key_file", lambda rng, v: json.loads(v)),
    ("k8s_stringdata_json", lambda rng, v: f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: gcp-sa\nstringData:\n"
                                           f"  key.json: |\n{indent(v, 4)}"),
    ("tfvars_heredoc", lambda rng, v: f'project = "erp-prod"\ncredentials = <<EOT\n{v}\nEOT\n'),
    ("gha_echo", lambda rng, v: "".join(f"2026-03-02T10:00:0{i % 10}.0Z {line}\n"
                                        for i, line in enumerate(v.splitlines()))),
    ("helm_block", lambda rng, v: f"gcp:\n  serviceAccountKey: |\n{indent(v, 4)}"),
    ("ansible_block", lambda rng, v: f"---\ngcp_service_account_json: |\n{indent(v, 2)}"),
    ("gitlab_file_variable", lambda rng, v: gitlab_vars(rng, "GOOGLE_APPLICATION_CREDENTIALS", v)),
    ("secrets_manager", lambda rng, v: secrets_manager(rng, "GCP_SA_KEY", v)),
    ("tfstate", lambda rng, v: tfstate(rng, "GOOGLE_CREDENTIALS", v)),
    ("chef_data_bag", lambda rng, v: chef_bag(rng, "GCP_KEY_JSON", v)),
    ("zendesk_ticket", lambda rng, v: zendesk(rng, f"Here is the service account file:\n{v}")),
]


# ---- kinds: the value generator and the carriers of each -------------------------------------------------------

def pair(fn: Callable[[random.Random, str], Body], sep: str) -> Callable[[random.Random, str], Body]:
    """A business carrier holding an AWS key id and, after `sep`, the unlabelled secret."""
    return lambda rng, v: fn(rng, f"{akid(rng, rng.choice(('AKIA', 'ASIA')))}{sep}{v}")


PW_SAID = ("Your temporary password is: {}", "Tu contraseña temporal es: {}", "Ihr vorläufiges Passwort lautet: {}",
           "Votre mot de passe provisoire : {}", "A sua palavra-passe temporária é {}", "Sua senha provisória: {}",
           "La password temporanea è {}", "Uw tijdelijke wachtwoord: {}", "Twoje tymczasowe hasło: {}",
           "Ditt tillfälliga lösenord: {}", "Dočasné heslo: {}", "Parola temporară: {}",
           "Προσωρινός κωδικός πρόσβασης: {}", "Ideiglenes jelszó: {}", "Geçici şifreniz: {}", "Временный пароль: {}",
           "Тимчасовий пароль: {}", "一時パスワード：{}", "임시 비밀번호: {}", "临时密码：{}",
           "Kata sandi sementara: {}",
           "Mật khẩu tạm thời: {}", "รหัสผ่านชั่วคราว: {}", "סיסמה זמנית: {}", "كلمة المرور المؤقتة: {}",
           "अस्थायी पासवर्ड: {}")
PW_CLI: list[Template] = [
    ("cli_mysql", lambda rng, v: f"$ mysql -h {host(rng)} -u admin -p{v} erp < migrate.sql"),
    ("cli_argocd_login", lambda rng, v: f"$ argocd login argocd.{rng.choice(DOMAINS)} --username admin --password "
                                        f"'{v}' --grpc-web\n'admin:login' logged in successfully"),
    ("aws_cli_rds", lambda rng, v: "$ aws rds create-db-instance --db-instance-identifier erp-prod --engine postgres "
                                   f"--master-username erpadmin --master-user-password '{v}' --allocated-storage 100"),
    ("ldap_export", lambda rng, v: {"dn": f"uid={rng.choice(FIRST)},ou=people,dc=corp,dc=local",
                                    "objectClass": ["inetOrgPerson"], "userPassword": v}),
    ("jenkins_userpass", lambda rng, v: "<com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>\n"
                                        f"  <id>sap-rfc</id>\n  <username>RFC_USER</username>\n  <password>{v}"
                                        "</password>\n</com.cloudbees.plugins.credentials.impl."
                                        "UsernamePasswordCredentialsImpl>\n"),
    ("spring_configmap", lambda rng, v: "apiVersion: v1\nkind: ConfigMap\ndata:\n  application.properties: |\n    "
                                        f"spring.datasource.username=erp\n    spring.datasource.password={v}\n"),
    ("cli_helm_set", lambda rng, v: f"$ helm upgrade --install erp-db bitnami/postgresql --set "
                                    f"auth.postgresPassword={v} -n erp"),
    ("cli_ansible_extra_vars", lambda rng, v: f"$ ansible-playbook -i inventories/prod site.yml -e "
                                              f"'mysql_root_password={v}'"),
    ("cli_docker_login", lambda rng, v: f"$ docker login -u deploy -p {v} registry.{rng.choice(DOMAINS)}\n"
                                        "WARNING! Using --password via the CLI is insecure."),
]
AWS_EXTRA: list[Template] = [
    ("aws_credentials_file", lambda rng, v: f"[default]\nregion = eu-west-1\n[{rng.choice(APPS)}]\naws_access_key_id = "
                                            f"{akid(rng)}\naws_secret_access_key = {v}\n"),
    ("aws_iam_create_access_key", lambda rng, v: {"AccessKey": {"UserName": "ci-deployer", "AccessKeyId": akid(rng),
                                                                "Status": "Active", "SecretAccessKey": v,
                                                                "CreateDate": stamp(rng)}}),
    ("aws_sts_assume_role", lambda rng, v: {"Credentials": {"AccessKeyId": akid(rng, "ASIA"), "SecretAccessKey": v,
                                                            "SessionToken": "IQoJb3JpZ2luX2VjE" + pick(rng, B64, 300),
                                                            "Expiration": stamp(rng)}}),
    ("iam_console_csv", lambda rng, v: f"Access key ID,Secret access key\n{akid(rng)},{v}\n"),
    ("vault_aws_creds", lambda rng, v: f"Key                Value\n---                -----\nlease_id           "
                                       f"aws/creds/deploy/{pick(rng, B62, 24)}\nlease_duration     768h\n"
                                       f"access_key         {akid(rng)}\nsecret_key         {v}\n"
                                       "security_token     <nil>\n"),
    ("jenkins_aws_credentials", lambda rng, v: "<com.cloudbees.jenkins.plugins.awscredentials.AWSCredentialsImpl>\n"
                                               f"  <id>aws-prod</id>\n  <accessKey>{akid(rng)}</accessKey>\n"
                                               f"  <secretKey>{v}</secretKey>\n"),
    ("chef_knife_rb", lambda rng, v: f"knife[:aws_access_key_id] = '{akid(rng)}'\nknife[:aws_secret_access_key] = "
                                     f"'{v}'\n"),
    ("zendesk_pair", pair(zendesk, "\n")), ("intercom_pair", pair(intercom, " / ")),
    ("hubspot_pair", pair(hubspot_note, ":")), ("salesforce_pair", pair(salesforce_csv, " ")),
    ("twilio_pair", pair(twilio_sms, " ")),
]
WEBHOOK_EXTRA: list[Template] = [
    ("alertmanager_helm", lambda rng, v: "alertmanager:\n  config:\n    receivers:\n      - name: ops\n        "
                                         f"slack_configs:\n          - api_url: {v}\n"),
    ("zendesk_target", lambda rng, v: {"target": {"type": "url_target_v2", "title": "Notify chat", "target_url": v,
                                                  "method": "post", "active": True}}),
    ("hubspot_workflow", lambda rng, v: {"actionType": "WEBHOOK", "webhookUrl": v, "method": "POST",
                                         "actionId": rng.randint(1, 99)}),
    ("gha_curl", lambda rng, v: f"{stamp(rng)} curl -X POST -H 'Content-type: application/json' --data "
                                f"'{{\"text\":\"Deploy done\"}}' {v}"),
    ("jenkinsfile", lambda rng, v: f"post {{\n  failure {{\n    office365ConnectorSend webhookUrl: '{v}',\n"
                                   "      message: 'Build failed'\n  }\n}\n"),
]
WHSEC_EXTRA: list[Template] = [
    ("stripe_cli", lambda rng, v: "> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret "
                                  f"is {v} (^C to quit)"),
    ("payment_log", lambda rng, v: {"ts": stamp(rng), "level": "debug", "svc": "payments",
                                    "msg": "stripe webhook endpoint configured", "endpoint_secret": v}),
    ("woocommerce_settings", lambda rng, v: {"woocommerce_stripe_settings": {"enabled": "yes", "testmode": "no",
                                                                             "webhook_secret": v}}),
]
CONN_EXTRA: list[Template] = [
    ("appsettings_json", lambda rng, v: {"ConnectionStrings": {"Default": v},
                                         "Logging": {"LogLevel": {"Default": "Information"}}}),
    ("tfstate_azurerm", lambda rng, v: {"version": 4, "resources": [{"type": "azurerm_storage_account", "instances": [
        {"attributes": {"name": rng.choice(LAST), "primary_connection_string": v}}]}]}),
    ("spring_properties", lambda rng, v: f"spring.datasource.url={v}\nspring.jpa.hibernate.ddl-auto=validate\n"),
    ("gitlab_ci_error", lambda rng, v: f"$ ./migrate.sh\nERROR: could not connect using '{v}': timeout after 30s\n"),
]
ANY_SAID = ("here is the new token {}", "use {} for now", "el token es {}", "neuer Schlüssel: {}", "トークン: {}",
            "o token novo: {}")
KEY_SAID = ("API Key: {}", "Secret key = {}", "Your access token is {}", "Clave API: {}", "Chave de API: {}",
            "API-Schlüssel: {}", "Clé API : {}", "Chiave API: {}", "API-sleutel: {}", "Klucz API: {}", "API-nyckel: {}",
            "API klíč: {}", "Cheie API: {}", "Κλειδί API: {}", "API kulcs: {}", "API anahtarı: {}", "API-ключ: {}",
            "Ключ API: {}", "APIキー: {}", "API 키: {}", "API 密钥：{}", "Kunci API: {}", "Khóa API: {}", "คีย์ API: {}",
            "מפתח API: {}", "مفتاح API: {}", "एपीआई कुंजी: {}", "access token is {}", "Secret Key - {}")
KEY_EXTRA: list[Template] = [
    ("helm_comment", lambda rng, v: f"# Partner API key: {v}\npartner:\n  enabled: true\n"),
    ("gha_echo", lambda rng, v: f"{stamp(rng)} Access token is {v}"),
    ("jenkins_description", lambda rng, v: f"<project>\n  <description>Nightly ERP export. Secret key = {v}"
                                           "</description>\n</project>\n"),
]
EMAIL_LABELS = ("Email", "E-mail", "Correo electrónico", "E-Mail-Adresse", "Courriel", "Posta elettronica",
                "E-mailadres", "Adres e-mail", "E-post", "Correio eletrónico", "Электронная почта", "メールアドレス",
                "이메일", "电子邮件", "Surel", "Địa chỉ email", "อีเมล", "דואר אלקטרוני", "البريد الإلكتروني", "ईमेल")
EMAIL_SAID = ("Please reply to {}", "Escríbeme a {}", "Meine E-Mail: {}", "Mon adresse : {}", "Il mio indirizzo è {}",
              "Mijn e-mail is {}", "Mój e-mail: {}", "Min e-post är {}", "Můj e-mail: {}", "Adresa mea: {}",
              "Το email μου: {}", "Az e-mail címem: {}", "E-postam: {}", "Моя почта: {}", "Моя пошта: {}",
              "メール: {}", "이메일: {}", "我的邮箱是 {}", "Email saya: {}", "Email của tôi: {}", "อีเมลของฉันคือ {}",
              "המייל שלי: {}", "بريدي الإلكتروني: {}", "मेरा ईमेल {} है")
EMAIL_EXTRA: list[Template] = [
    ("ics_attendee", lambda rng, v: ics(rng, "Kick-off").replace("END:VEVENT", f"ATTENDEE;CN={person(rng)};RSVP=TRUE:"
                                                                               f"mailto:{v}\r\nEND:VEVENT")),
    ("gitlab_ci_git", lambda rng, v: gitlab_log(rng, "GIT_AUTHOR_NAME", "release-bot").replace(
        "$ ./scripts", f"$ git config user.email {v}\n$ ./scripts")),
    ("cert_manager_issuer", lambda rng, v: "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nspec:\n  acme:\n"
                                           f"    email: {v}\n    server: https://acme-v02.api.letsencrypt.org/directory\n"),
    ("tfvars_tags", lambda rng, v: f'tags = {{\n  owner       = "{v}"\n  cost_center = "{digits(rng, 4)}"\n}}\n'),
]
SSN_LABELS = ("SSN", "Social Security Number", "SS#", "Soc. Sec. No.", "Número de Seguro Social", "SSN/TIN")
SSN_SAID = ("My SSN is {}", "Social Security number: {}", "SSN {} for the W-2 correction",
            "Mi número de Seguro Social es {}", "SSN on file: {}")
SSN_EXTRA: list[Template] = [
    ("w2_pdf", lambda rng, v: f"a Employee's social security number{' ' * 6}{v}\nb Employer identification number (EIN)"
                              f"{' ' * 3}{digits(rng, 2)}-{digits(rng, 7)}\n1 Wages, tips, other compensation"
                              f"{' ' * 8}{amount(rng)}\n"),
    ("workday_worker", lambda rng, v: {"worker": {"id": digits(rng, 6), "nationalIdentifiers": [
        {"type": "USA-SSN", "id": v, "country": "US"}]}}),
    ("background_check", lambda rng, v: {"candidate": {"first_name": rng.choice(FIRST).capitalize(), "ssn": v,
                                                       "package": "standard"}, "status": "pending"}),
]
CARD_LABELS = ("Card number", "Número de tarjeta", "Kartennummer", "Numéro de carte", "Numero carta", "Kaartnummer",
               "Numer karty", "Kortnummer", "Číslo karty", "Număr card", "Αριθμός κάρτας", "Kártyaszám",
               "Kart numarası", "Номер карты", "Номер картки", "カード番号", "카드 번호", "卡号", "Nomor kartu",
               "Số thẻ",
               "หมายเลขบัตร", "מספר כרטיס", "رقم البطاقة", "कार्ड नंबर")
CARD_SAID = ("My card number is {}", "Mi tarjeta es {}", "Meine Kreditkarte: {}", "Ma carte bancaire : {}",
             "Il numero della mia carta è {}", "Номер моей карты {}", "カード番号は{}です", "我的卡号是{}",
             "Nomor kartu saya {}", "Cartão: {}")
CARD_EXTRA: list[Template] = [
    ("adyen_request", lambda rng, v: {"amount": {"currency": "EUR", "value": rng.randint(100, 99999)},
                                      "reference": f"ORD-{digits(rng, 6)}", "paymentMethod": {
                                          "type": "scheme", "number": v, "expiryMonth": "03", "expiryYear": "2029"}}),
    ("braintree_log", lambda rng, v: f"{stamp(rng)} DEBUG POST /merchants/{pick(rng, ALNUM_LOWER, 16)}/transactions "
                                     f"credit_card[number]={v}&credit_card[expiration_date]=03/29"),
    ("receipt_text", lambda rng, v: f"{'TERMINAL':<20}{digits(rng, 8)}\n{'CARD NO':<20}{v}\n{'AUTH CODE':<20}"
                                    f"{digits(rng, 6)}\n{'TOTAL EUR':<20}{amount(rng)}\n"),
]
IBAN_LABELS = ("IBAN", "Bankverbindung (IBAN)", "Cuenta IBAN", "N° IBAN", "Conta IBAN", "Codice IBAN",
               "Rekeningnummer (IBAN)", "Numer rachunku IBAN", "Kontonummer IBAN", "Číslo účtu IBAN", "Cont IBAN",
               "Αριθμός IBAN", "IBAN számlaszám", "IBAN numarası", "Банковский счёт IBAN", "Рахунок IBAN")
IBAN_SAID = ("Please refund to IBAN {}", "Reembolso a la cuenta {}", "Bitte überweisen Sie auf {}",
             "Virement sur le compte {}", "Bonifico su {}", "Mijn rekening: {}", "Proszę o zwrot na konto {}",
             "Pagamento para {}", "Hesap numaram {}", "Переведите на счёт {}")
IBAN_EXTRA: list[Template] = [
    ("sepa_pain001", lambda rng, v: f"<CdtTrfTxInf>\n  <Amt><InstdAmt Ccy=\"EUR\">{amount(rng)}</InstdAmt></Amt>\n"
                                    f"  <Cdtr><Nm>{person(rng)}</Nm></Cdtr>\n  <CdtrAcct><Id><IBAN>{v}</IBAN></Id>"
                                    "</CdtrAcct>\n</CdtTrfTxInf>\n"),
    ("sap_business_partner", lambda rng, v: {"BusinessPartner": digits(rng, 10), "to_BusinessPartnerBank": {
        "results": [{"BankCountryKey": v[:2].upper(), "IBAN": v, "BankAccountHolderName": person(rng)}]}}),
    ("adyen_payout", lambda rng, v: {"bankAccount": {"iban": v, "ownerName": person(rng)},
                                     "amount": {"currency": "EUR", "value": rng.randint(100, 99999)}}),
]
IDS = {"br_cpf": (v_cpf, ("CPF", "CPF do titular", "Nº CPF"), ("Meu CPF é {}", "CPF: {}")),
       "pl_pesel": (v_pesel, ("PESEL", "Nr PESEL"), ("Mój PESEL to {}", "PESEL: {}")),
       "nl_bsn": (v_bsn, ("BSN", "Burgerservicenummer"), ("Mijn BSN is {}", "BSN: {}")),
       "se_personnummer": (v_personnummer, ("Personnummer", "Pers.nr"), ("Mitt personnummer är {}", "Personnr: {}")),
       "pt_nif": (v_nif, ("NIF", "Número de contribuinte"), ("O meu NIF é {}", "NIF: {}"))}
PHONE_EXTRA: list[Template] = [
    ("cdr_csv", lambda rng, v: f"call_id,start,caller_phone,callee,duration_s,disposition\n{digits(rng, 12)},"
                               f"{stamp(rng)},{v},ext-{rng.randint(100, 999)},{rng.randint(5, 900)},ANSWERED\n"),
]


def phone_templates(kind: str) -> list[Template]:
    """A phone plan's carriers, with context words in its country's languages."""
    ctx = PHONE_CTX[kind]
    oncall: Template = ("helm_oncall", lambda rng, v: f"oncall:\n  name: {person(rng)}\n  "
                                                       f"{rng.choice(ctx)[1].lower()}: \"{v}\"\n")
    return records(tuple(c[0] for c in ctx) + tuple(c[1] for c in ctx), "phone") + \
        said(tuple(c[2] for c in ctx)) + PHONE_EXTRA + [oncall]


def kinds() -> dict[str, tuple[Callable[[random.Random], Value], list[Template]]]:
    """Every kind: its value generator and its carriers."""
    table: dict[str, tuple[Callable[[random.Random], Value], list[Template]]] = {
        "password": (v_password, infra(("DB_PASSWORD", "PGPASSWORD", "MYSQL_ROOT_PASSWORD", "REDIS_PASS",
                                        "POSTGRES_PASSWORD", "SMTP_PASSWORD", "LDAP_BIND_PASSWORD", "ADMIN_PASSWORD",
                                        "SPRING_DATASOURCE_PASSWORD", "RABBITMQ_DEFAULT_PASS", "SAP_RFC_PASSWD"))
                     + said(PW_SAID) + PW_CLI),
        "aws_secret": (v_aws_secret, infra(("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "S3_SECRET_KEY",
                                            "BACKUP_AWS_SECRET")) + AWS_EXTRA),
        "webhook": (v_webhook, infra(("SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK", "TEAMS_WEBHOOK_URL", "ALERT_WEBHOOK_URL",
                                      "CHAT_NOTIFY_URL")) + WEBHOOK_EXTRA
                    + said(("Webhook: {}", "Use this webhook for alerts: {}", "URL del webhook: {}",
                            "Webhook-URL: {}", "L'URL du webhook : {}", "Webhook 地址：{}"))),
        "stripe_whsec": (v_whsec, infra(("STRIPE_WEBHOOK_SECRET", "STRIPE_SIGNING_SECRET", "STRIPE_ENDPOINT_SECRET"))
                         + WHSEC_EXTRA + said(("Signing secret: {}", "El secreto de firma es {}", *ANY_SAID))),
        "connection_string": (v_connection_string, infra(("DATABASE_URL", "DB_CONNECTION_STRING",
                                                          "ConnectionStrings__Default", "STORAGE_CONNECTION_STRING"))
                              + CONN_EXTRA + said(("Connection string: {}", "Cadena de conexión: {}",
                                                   "Verbindungszeichenfolge: {}", "Chaîne de connexion : {}",
                                                   "接続文字列: {}", "{}"))),
        "labelled_key": (v_generic_key, said(KEY_SAID) + KEY_EXTRA
                         + records(("API Key", "Secret key", "Access token"), "api_key")),
        "disguised": (v_disguised, infra(("API_TOKEN", "GITHUB_TOKEN", "STRIPE_KEY", "SLACK_BOT_TOKEN"))
                      + said(("token: {}", "here's the key {}", "clave: {}", "Schlüssel: {}", "{}"))),
        "email": (v_email, records(EMAIL_LABELS, "email") + said(EMAIL_SAID) + EMAIL_EXTRA),
        "ssn": (v_ssn, records(SSN_LABELS, "ssn") + said(SSN_SAID) + SSN_EXTRA),
        "card": (v_card, records(CARD_LABELS, "card") + said(CARD_SAID) + CARD_EXTRA),
        "iban": (v_iban, records(IBAN_LABELS, "iban") + said(IBAN_SAID) + IBAN_EXTRA),
    }
    table.update({kind: (phone(kind), phone_templates(kind)) for kind in PLANS})
    table.update({kind: (gen, infra(names) + said(ANY_SAID)) for kind, (gen, names) in PROVIDERS.items()})
    table.update({
        "azure_sas": (v_azure_sas, infra(("AZURE_STORAGE_SAS_TOKEN", "SAS_TOKEN", "BLOB_SAS")) + said(ANY_SAID)),
        "private_key": (v_private_key, BLOCKS), "gcp_sa_key": (v_gcp_sa_key, GCP_BLOCKS),
        "jwt": (v_jwt, infra(("API_JWT", "SERVICE_TOKEN", "ARGOCD_AUTH_TOKEN"))
                + [(form, lambda rng, v, f=fn: f(rng, "Bearer " + v)) for form, fn in http("Authorization")]),
        "basic_auth": (v_basic_auth, http("Authorization")), "bearer_token": (v_bearer, http("Authorization")),
        "digest_response": (v_digest, http("Authorization")), "sigv4_signature": (v_sigv4, http("Authorization")),
        "session_cookie": (v_cookie, http("Cookie")),
    })
    table.update({kind: (gen, records(labels, "tax_id") + said(sentences))
                  for kind, (gen, labels, sentences) in IDS.items()})
    return table


def leaf(doc: object, secret: str) -> str | None:
    """The string of a JSON document that holds `secret`."""
    if isinstance(doc, str):
        return doc if secret in doc else None
    items = doc.values() if isinstance(doc, dict) else doc if isinstance(doc, list) else ()
    return next((found for item in items if (found := leaf(item, secret)) is not None), None)


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, its carriers taken in turn."""
    rng = random.Random(SEED)
    for kind, (gen, templates) in kinds().items():
        for i in range(PER_KIND):
            value = gen(rng)
            written, style = value[0], value[1]
            secret = value[2] if len(value) == 3 else written
            carrier, fn = templates[i % len(templates)]
            body = fn(rng, written)
            form = f"{carrier}/{style}"
            if isinstance(body, str):
                yield Case(kind, secret, body, body, False, form)
                continue
            text = leaf(body, secret)
            if text is None:
                raise ValueError(f"{kind} {form}: the secret is in no string of the document")
            yield Case(kind, secret, text, json.dumps(body, ensure_ascii=False), True, form)


# ---- near misses ------------------------------------------------------------------------------------------------

def bad_luhn(rng: random.Random) -> str:
    """A 16-digit Visa-range number whose last digit is not its Luhn digit."""
    partial = "4" + digits(rng, 14)
    return partial + str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)


def bad_iban(rng: random.Random) -> str:
    """An IBAN of a registry structure with check digits that fail MOD 97."""
    country = rng.choice(("DE", "ES", "NL", "PL", "IT", "FR"))
    b = bban(rng, IBAN_BBAN[country])
    good = int(iban_check(country, b))
    return group(f"{country}{(good + rng.randint(1, 96)) % 97 or 1:02d}{b}", 4, " ")


def bad_ssn(rng: random.Random) -> str:
    """A number in SSN form the SSA never issues: area 000, 666 or 9xx, group 00 or serial 0000."""
    area, grp, serial = f"{rng.randint(1, 899):03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
    broken = rng.choice(("000", "666", "9xx", "group", "serial"))
    area = {"000": "000", "666": "666", "9xx": f"9{digits(rng, 2)}"}.get(broken, area)
    return f"{area}-{'00' if broken == 'group' else grp}-{'0000' if broken == 'serial' else serial}"


def ean13(rng: random.Random) -> str:
    """An EAN-13 with its check digit (GS1: weights 1 and 3)."""
    body = rng.choice(("400", "590", "800", "890")) + digits(rng, 9)
    return body + str(-sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(body)) % 10)


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "uuids": lambda r: f"Correlation-Id: {uid(r)} order_id={uid(r)}",
    "hashes": lambda r: f"commit {hexs(r, 40)}\nMerge: {hexs(r, 7)} {hexs(r, 7)}\nsha256sum: {hexs(r, 64)}  erp.tar.gz",
    "versions": lambda r: f"Terraform v1.{r.randint(0, 9)}.{r.randint(0, 9)} on linux_amd64 + provider "
                          f"registry.terraform.io/hashicorp/aws v5.{r.randint(0, 80)}.0, "
                          f"chart erp-2.{r.randint(0, 30)}.3",
    "amounts": lambda r: f"Total: EUR {r.randint(1, 99)}.{r.randint(100, 999)},{r.randint(10, 99)} | USD "
                         f"{r.randint(1, 99)},{r.randint(100, 999)}.{r.randint(10, 99)} | VAT 21%",
    "timestamps": lambda r: f"{stamp(r)} created, updated_at={1780000000000 + r.randint(0, 10**9)}, "
                            f"DTSTART:{day(r).replace('-', '')}T090000Z",
    "order_numbers": lambda r: f"Order #{r.randint(1000, 99999)} (PO 45{digits(r, 8)}, SO-2026-{digits(r, 6)})",
    "luhn_failing_cards": lambda r: f"Card number: {group(bad_luhn(r), 4, r.choice((' ', '-', '')))}",
    "mod97_failing_ibans": lambda r: f"IBAN: {bad_iban(r)}",
    "invalid_ssns": lambda r: f"SSN: {bad_ssn(r)}",
    "placeholders": lambda r: r.choice(("DB_PASSWORD=${DB_PASSWORD}", "api_key: <your-api-key>",
                                        "password: \"{{ vault_db_password }}\"", "TOKEN: ${{ secrets.DEPLOY_TOKEN }}",
                                        "Password=$(SQL_PASSWORD);", "aws_secret_access_key = %AWS_SECRET%",
                                        "stripe_webhook_secret = \"REPLACE_ME\"", "API Key: <insert key here>",
                                        "PGPASSWORD=\"$PGPASSWORD\" psql", "secret: !vault-ref db/password")),
    "masked_values": lambda r: r.choice(("password: ********", "  DB_PASSWORD: ***", "API Key: ••••••••••",
                                         "Authorization: Bearer [REDACTED]", "secret_key = [FILTERED]",
                                         "AccountKey=*****;", "token=<redacted>")),
    "masked_cards": lambda r: r.choice((f"**** **** **** {digits(r, 4)}", f"XXXX-XXXX-XXXX-{digits(r, 4)}",
                                        f"Visa ending in {digits(r, 4)}", f"4{digits(r, 5)}******{digits(r, 4)}")),
    "publishable_keys": lambda r: r.choice((f"STRIPE_PUBLISHABLE_KEY=pk_live_{pick(r, B62, 24)}",
                                            f"adyen.clientKey=live_{pick(r, UPPER_DIGITS, 32)}",
                                            f"publishableKey: pk_test_{pick(r, B62, 24)}")),
    "cloud_resource_ids": lambda r: f"arn:aws:iam::{digits(r, 12)}:role/deploy i-0{hexs(r, 16)} sg-0{hexs(r, 16)} "
                                    f"/subscriptions/{uid(r)}/resourceGroups/rg-erp",
    "crm_record_ids": lambda r: f"Account 001{pick(r, B62, 15)}, HubSpot contact {digits(r, 9)}, Zendesk "
                                f"ticket #{r.randint(10000, 99999)}",
    "twilio_sids": lambda r: f"MessageSid=SM{hexs(r, 32)}&CallSid=CA{hexs(r, 32)}&MessagingServiceSid=MG{hexs(r, 32)}",
    "image_digests": lambda r: f"image: registry.{r.choice(DOMAINS)}/erp@sha256:{hexs(r, 64)}",
    "tracking_numbers": lambda r: f"Tracking: 1Z{pick(r, UPPER_DIGITS, 16)} / DHL {digits(r, 10)}",
    "bic_codes": lambda r: f"BIC: {r.choice(('DEUTDEFF', 'BNPAFRPP', 'CAIXESBB', 'INGBNL2A', 'PKOPPLPW'))}"
                           f"{r.choice(('', 'XXX', '500'))}",
    "ean_codes": lambda r: f"EAN {ean13(r)} qty {r.randint(1, 50)}",
    "empty_values": lambda r: r.choice(('password: ""', "DB_PASSWORD=", "aws_secret_access_key =", "secret: null",
                                        '"userPassword": ""', "API Key: (none)")),
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """Near misses that must give no finding: 20 of each sort."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for _ in range(20):
            yield sort, make(rng)
