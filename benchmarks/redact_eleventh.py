"""The eleventh redaction corpus: a data and ML platform team's world and customer conversations in 32 languages,
written from the formats' public specifications by someone who read neither the rules nor the other corpora.

Carriers: Airflow connection exports, `AIRFLOW_CONN_*`/`AIRFLOW_VAR_*`, dbt `profiles.yml`, Spark and Databricks
logs and cluster JSON, JDBC/ODBC/URI connection strings (Snowflake, Redshift, ClickHouse Cloud, Trino, Atlas,
Neon, Upstash, Elastic Cloud), pandas reprs, `df.to_markdown()`, psql grids, MLflow runs, W&B config, Hugging Face
`.env`, Kafka properties, Debezium connectors, Elasticsearch requests, Grafana provisioning, Prometheus scrape
configs, Superset/Metabase exports, Great Expectations, Airbyte, Ray jobs, SageMaker/Vertex specs, feature-store
rows, Label Studio exports, ASR transcripts, OCR text, chat widgets, e-mail and WhatsApp Business API webhooks.

Formats and their sources:
- password, connection_string: the carriers' own documentation (libpq, JDBC drivers of Snowflake/Redshift/MySQL,
  ODBC and ADO.NET for SQL Server, Azure Storage and Service Bus connection strings, RFC 3986 userinfo).
- aws_secret: AWS IAM access keys (40 base64 characters beside a 20-character `AKIA`/`ASIA` id).
- webhook: Slack incoming webhooks, Discord webhooks, Microsoft Teams (webhook.office.com), Google Chat, Mattermost.
- stripe_whsec: Stripe webhook signing secrets (`whsec_`); disguised: GitHub's token format (2021, CRC32 base62),
  Stripe `sk_live_`, Slack `xoxb-`, GitLab `glpat-`, hidden with Unicode format characters (UAX #9 bidi controls,
  U+200B..U+2060, U+00AD) or full-width forms (U+FF01..U+FF5E).
- email: RFC 5322, RFC 6531 (internationalised), RFC 3986 percent-encoding, JSON `\\u` escapes, HTML entities.
- phones: ITU-T E.164 and national plans (NANP, Ofcom, ARCEP, BNetzA, TRAI, NCC Nigeria, CA Kenya, NTRA Egypt, PTA
  Pakistan, NTC Philippines, IFT Mexico, MIC Japan, ENACOM Argentina).
- ssn: SSA (area 001-899 without 666, group 01-99, serial 0001-9999); card: ISO/IEC 7812 IIN ranges and Luhn;
  iban: ISO 13616 and the SWIFT IBAN registry's BBAN structures.
- Provider tokens, from each provider's docs or announced formats: Anthropic `sk-ant-api03-`, OpenAI `sk-proj-`,
  Replicate `r8_`, Groq `gsk_`, Perplexity `pplx-`, LangSmith `lsv2_pt_`, Langfuse `sk-lf-`, Hugging Face `hf_`,
  Weights & Biases (40 hex), Databricks `dapi`, Pinecone `pcsk_`, Modal `as-`, PlanetScale `pscale_pw_`, Neon
  `napi_`, Datadog (32/40 hex), Atlassian `ATATT`, Grafana `glsa_`, Doppler `dp.st.`, Sentry `sntrys_`, New Relic
  `NRAK-`, DigitalOcean `dop_v1_`, Google OAuth `GOCSPX-`, Azure AD client secrets (`Q~`), Confluent Cloud API
  secrets (64 characters), Elastic API keys (base64 of id:key); private keys: RFC 5915/PKCS #8 PEM (RFC 7468) and
  OpenSSH PROTOCOL.key; jwt: RFC 7519/7515; auth headers: RFC 7617 Basic, RFC 6750 Bearer, RFC 7616 Digest, AWS
  SigV4, Okta `SSWS`; cookies: RFC 6265 (Flask/Superset signed sessions, Grafana, Metabase, JupyterHub, Django).
- National ids (outside the target): Aadhaar (UIDAI, Verhoeff), South African ID (Luhn), PRC resident id
  (GB 11643, ISO 7064 MOD 11-2).
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from benchmarks.corpus_formats import (
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

SEED = 20261206
PER_KIND = 100
OUTSIDE_TARGET: frozenset[str] = frozenset({"aadhaar", "za_id", "cn_id"})

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
PW_SYMBOLS = "!*-_.~"


@dataclass(frozen=True)
class Case:
    """One planted value: `secret` must not survive in `carried` (the stored form of `text`)."""
    kind: str
    secret: str
    text: str
    carried: str
    is_json: bool
    form: str


Rng = random.Random
Gen = Callable[[Rng], str]


def jdump(obj: object) -> str:
    """A JSON document as the tools here write it (UTF-8, not ASCII-escaped)."""
    return json.dumps(obj, ensure_ascii=False)


def uid(rng: Rng) -> str:
    """A random (version 4) UUID from the corpus's generator."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


# ---- provider tokens ------------------------------------------------------------------------------------------

PROVIDERS: dict[str, tuple[Gen, tuple[str, ...]]] = {
    "anthropic_key": (lambda r: "sk-ant-api03-" + pick(r, URLSAFE, 93) + "AA", ("ANTHROPIC_API_KEY",)),
    "openai_project_key": (lambda r: "sk-proj-" + pick(r, URLSAFE, 74) + "T3BlbkFJ" + pick(r, URLSAFE, 74),
                           ("OPENAI_API_KEY",)),
    "replicate_token": (lambda r: "r8_" + pick(r, ALNUM, 37), ("REPLICATE_API_TOKEN",)),
    "groq_key": (lambda r: "gsk_" + pick(r, ALNUM, 52), ("GROQ_API_KEY",)),
    "perplexity_key": (lambda r: "pplx-" + pick(r, ALNUM, 48), ("PERPLEXITY_API_KEY", "PPLX_API_KEY")),
    "langsmith_key": (lambda r: "lsv2_" + r.choice(("pt", "sk")) + "_" + pick(r, HEX, 32) + "_" + pick(r, HEX, 10),
                      ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")),
    "langfuse_secret": (lambda r: "sk-lf-" + uid(r), ("LANGFUSE_SECRET_KEY",)),
    "huggingface_token": (lambda r: "hf_" + pick(r, string.ascii_letters, 34), ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")),
    "wandb_key": (lambda r: pick(r, HEX, 40), ("WANDB_API_KEY",)),
    "databricks_token": (lambda r: "dapi" + pick(r, HEX, 32) + r.choice(("", "", "-2", "-3")),
                         ("DATABRICKS_TOKEN",)),
    "pinecone_key": (lambda r: "pcsk_" + pick(r, ALNUM, 5) + "_" + pick(r, ALNUM, 63), ("PINECONE_API_KEY",)),
    "modal_secret": (lambda r: "as-" + pick(r, ALNUM, 22), ("MODAL_TOKEN_SECRET",)),
    "planetscale_token": (lambda r: r.choice(("pscale_pw_", "pscale_tkn_", "pscale_oauth_")) + pick(r, ALNUM, 43),
                          ("PLANETSCALE_PASSWORD", "PLANETSCALE_SERVICE_TOKEN")),
    "neon_key": (lambda r: "napi_" + pick(r, LOWER_ALNUM, 64), ("NEON_API_KEY",)),
    "datadog_key": (lambda r: pick(r, HEX, r.choice((32, 40))), ("DD_API_KEY", "DD_APP_KEY", "DATADOG_API_KEY")),
    "atlassian_token": (lambda r: "ATATT3xFfGF0" + pick(r, URLSAFE, 171) + "=" + pick(r, HEX.upper(), 8),
                        ("JIRA_API_TOKEN", "ATLASSIAN_API_TOKEN")),
    "grafana_token": (lambda r: "glsa_" + pick(r, ALNUM, 32) + "_" + pick(r, HEX, 8),
                      ("GRAFANA_SERVICE_ACCOUNT_TOKEN", "GRAFANA_TOKEN")),
    "doppler_token": (lambda r: "dp.st." + r.choice(("prd", "dev", "stg")) + "." + pick(r, ALNUM, 40),
                      ("DOPPLER_TOKEN",)),
    "sentry_token": (lambda r: sentry_token(r), ("SENTRY_AUTH_TOKEN",)),
    "newrelic_key": (lambda r: "NRAK-" + pick(r, UPPER_ALNUM, 27), ("NEW_RELIC_API_KEY", "NEW_RELIC_USER_KEY")),
    "digitalocean_token": (lambda r: "dop_v1_" + pick(r, HEX, 64), ("DIGITALOCEAN_TOKEN", "DO_API_TOKEN")),
    "gcp_oauth_secret": (lambda r: "GOCSPX-" + pick(r, URLSAFE, 28), ("GOOGLE_CLIENT_SECRET", "OAUTH_CLIENT_SECRET")),
    "azure_client_secret": (lambda r: pick(r, ALNUM, 3) + r.choice(string.digits) + "Q~" + pick(r, ALNUM + "_.~-", 34),
                            ("AZURE_CLIENT_SECRET", "ARM_CLIENT_SECRET")),
    "confluent_secret": (lambda r: pick(r, ALNUM + "+/", 64), ("CONFLUENT_API_SECRET", "KAFKA_SASL_PASSWORD")),
    "elastic_api_key": (lambda r: base64.b64encode(f"{pick(r, URLSAFE, 20)}:{pick(r, URLSAFE, 22)}".encode()).decode(),
                        ("ELASTIC_API_KEY", "ES_API_KEY")),
    "stripe_whsec": (lambda r: "whsec_" + pick(r, ALNUM, 32), ("STRIPE_WEBHOOK_SECRET", "STRIPE_SIGNING_SECRET")),
    "jwt": (lambda r: jwt(r), ("SUPABASE_SERVICE_ROLE_KEY", "ACCESS_TOKEN", "METABASE_EMBEDDING_TOKEN")),
}
"""Kind -> (value, the environment names it is set under)."""


def sentry_token(rng: Rng) -> str:
    """A Sentry organization token: `sntrys_`, base64 of its JSON claims, `_`, the secret."""
    claims = {"iat": 1733400000 + rng.randrange(9_000_000), "url": "https://sentry.io",
              "region_url": "https://us.sentry.io", "org": rng.choice(("dataplat", "ml-infra", "analytics"))}
    return "sntrys_" + base64.b64encode(json.dumps(claims).encode()).decode().rstrip("=") + "_" + pick(rng, B64, 43)


def jwt(rng: Rng) -> str:
    """An HS256 JWT (RFC 7519): a Supabase service role, a user session or a Metabase embedding token."""
    now = 1733400000 + rng.randrange(9_000_000)
    claims = rng.choice((
        {"iss": "supabase", "ref": pick(rng, string.ascii_lowercase, 20), "role": "service_role", "iat": now,
         "exp": now + 315_360_000},
        {"sub": uid(rng), "aud": "authenticated", "role": "authenticated", "iat": now, "exp": now + 3600},
        {"resource": {"dashboard": rng.randrange(1, 400)}, "params": {}, "exp": now + 600},
    ))
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{head}.{body}.{b64url(rng.randbytes(32))}"


def password(rng: Rng) -> str:
    """A human-made password: word, digits and a mark; a passphrase; or a generated one."""
    style = rng.randrange(3)
    if style == 0:
        word = rng.choice(("Kestrel", "marigold", "Tundra", "quokka", "Bazalt", "lumiere", "Orinoco", "zebrine"))
        return word + rng.choice(PW_SYMBOLS) + digits(rng, 4) + pick(rng, string.ascii_letters, 2)
    if style == 1:
        words = rng.sample(("copper", "harbor", "violet", "sputnik", "meadow", "glacier", "tandoor", "yurt"), 3)
        return rng.choice("-._").join(words) + digits(rng, 2)
    return pick(rng, ALNUM, 12) + rng.choice(PW_SYMBOLS) + pick(rng, ALNUM, 5)


def aws_secret(rng: Rng) -> str:
    """An IAM secret access key: 40 base64 characters, at least one `/` or `+`."""
    body = list(pick(rng, B64, 40))
    body[rng.randrange(40)] = rng.choice("/+")
    return "".join(body)


def aws_key_id(rng: Rng) -> str:
    """An IAM access key id: `AKIA` (long-term) or `ASIA` (temporary) and 16 upper-case base32 characters."""
    return rng.choice(("AKIA", "ASIA")) + pick(rng, string.ascii_uppercase + "234567", 16)


# ---- structured secrets ---------------------------------------------------------------------------------------

def webhook(rng: Rng) -> tuple[str, str]:
    """(public prefix, secret part) of an incoming-webhook URL, split where the eighth corpus splits it: the secret
    is what follows the provider's documented public prefix (host and fixed path), and it is what must go."""
    style = rng.randrange(5)
    if style == 0:
        return ("https://hooks.slack.com/services/", f"T{pick(rng, UPPER_ALNUM, 10)}/B{pick(rng, UPPER_ALNUM, 10)}/"
                + pick(rng, ALNUM, 24))
    if style == 1:
        return ("https://discord.com/api/webhooks/", f"{digits(rng, 19)}/{pick(rng, URLSAFE, 68)}")
    if style == 2:
        tenant = rng.choice(("contoso", "datalake", "fabrikam"))
        return (f"https://{tenant}.webhook.office.com/webhookb2/", f"{uid(rng)}@{uid(rng)}/IncomingWebhook/"
                + f"{pick(rng, HEX, 32)}/{uid(rng)}")
    if style == 3:
        return (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=",
                f"AIzaSy{pick(rng, URLSAFE, 33)}&token={pick(rng, URLSAFE, 43)}%3D")
    return ("https://mattermost.dataplat.io/hooks/", pick(rng, LOWER_ALNUM, 26))


def azure_key(rng: Rng, nbytes: int) -> str:
    """An Azure shared key: `nbytes` random bytes in base64."""
    return base64.b64encode(rng.randbytes(nbytes)).decode()


CONNECTIONS: tuple[tuple[str, Callable[[str, str], str]], ...] = (
    ("azure_storage", lambda s, n: f"DefaultEndpointsProtocol=https;AccountName=mlartifacts{n};AccountKey={s};"
     "EndpointSuffix=core.windows.net"),
    ("azure_eventhubs", lambda s, n: f"Endpoint=sb://cdc-{n}.servicebus.windows.net/;SharedAccessKeyName="
     f"RootManageSharedAccessKey;SharedAccessKey={s}"),
    ("snowflake_jdbc", lambda s, n: f"jdbc:snowflake://xy{n}.eu-west-1.snowflakecomputing.com/?user=LOADER&password="
     f"{s}&warehouse=TRANSFORM_WH&db=RAW"),
    ("redshift_jdbc", lambda s, n: f"jdbc:redshift://dw-{n}.c8x1.us-east-1.redshift.amazonaws.com:5439/dev;UID=admin;"
     f"PWD={s}"),
    ("clickhouse_uri", lambda s, n: f"clickhouse://default:{s}@k{n}.eu-central-1.aws.clickhouse.cloud:9440/default"
     "?secure=true"),
    ("trino_uri", lambda s, n: f"trino://analyst:{s}@trino-{n}.internal:443/hive/default"),
    ("atlas_srv", lambda s, n: f"mongodb+srv://feature_svc:{s}@cluster0.ab{n}.mongodb.net/features?retryWrites=true"),
    ("odbc_sqlserver", lambda s, n: "Driver={ODBC Driver 18 for SQL Server};Server=tcp:dw" + n
     + f".database.windows.net,1433;Database=dw;Uid=etl;Pwd={s};Encrypt=yes;"),
    ("adonet", lambda s, n: f"Server=tcp:dw{n}.database.windows.net,1433;Initial Catalog=dw;User ID=etl;"
     f"Password={s};"),
    ("libpq_keywords", lambda s, n: f"host=pg-{n}.internal port=5432 dbname=warehouse user=etl password={s} "
     "sslmode=require"),
    ("mysql_jdbc", lambda s, n: f"jdbc:mysql://mysql-{n}.internal:3306/superset?user=superset&password={s}"),
    ("upstash_redis", lambda s, n: f"rediss://default:{s}@eu1-brave-{n}.upstash.io:6379"),
    ("elastic_uri", lambda s, n: f"https://elastic:{s}@logs-{n}.es.us-central1.gcp.cloud.es.io:443"),
    ("neon_uri", lambda s, n: f"postgresql://neondb_owner:{s}@ep-cool-darkness-{n}.eu-central-1.aws.neon.tech/neondb"
     "?sslmode=require"),
)
"""(style, (secret, a number) -> connection string holding the secret)."""


def connection(rng: Rng, index: int) -> tuple[str, str, str]:
    """(style, secret, connection string): an Azure key for the Azure styles, a URI-safe password otherwise."""
    style, make = CONNECTIONS[index % len(CONNECTIONS)]
    secret = azure_key(rng, 64 if style == "azure_storage" else 32) if style.startswith("azure") else password(rng)
    return style, secret, make(secret, digits(rng, 5))


ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
BIDI = ("\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069")


def disguised(rng: Rng) -> tuple[str, str]:
    """(style, key): a known provider's key with invisible characters inside, or in full-width forms."""
    key = rng.choice((
        lambda: crc_token(rng, rng.choice(("ghp_", "gho_", "ghs_"))),
        lambda: "sk_live_" + pick(rng, ALNUM, 24),
        lambda: f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}",
        lambda: "glpat-" + pick(rng, URLSAFE, 20),
        lambda: "hf_" + pick(rng, string.ascii_letters, 34),
    ))()
    style = rng.choice(("zero_width", "bidi", "soft_hyphen", "full_width"))
    if style == "full_width":
        return style, "".join(chr(ord(c) + 0xFEE0) for c in key)
    chars = {"zero_width": ZERO_WIDTH, "bidi": BIDI, "soft_hyphen": ("\u00ad",)}[style]
    out = list(key)
    for pos in sorted(rng.sample(range(4, len(key) - 2), rng.randint(1, 3)), reverse=True):
        out.insert(pos, rng.choice(chars))
    return style, "".join(out)


def private_key(rng: Rng) -> tuple[str, str]:
    """(style, PEM): a P-256 key (SEC 1 or PKCS #8), an Ed25519 key (PKCS #8 or OpenSSH), from the corpus's
    generator so the corpus stays the same from run to run."""
    style = rng.choice(("ec_sec1", "ec_pkcs8", "ed25519_pkcs8", "openssh"))
    none = serialization.NoEncryption()
    if style.startswith("ec"):
        key = ec.derive_private_key(rng.randrange(1, 2**255), ec.SECP256R1())
        formats = serialization.PrivateFormat
        fmt = formats.TraditionalOpenSSL if style == "ec_sec1" else formats.PKCS8
        return style, key.private_bytes(serialization.Encoding.PEM, fmt, none).decode().strip()
    seed = rng.randbytes(32)
    ed = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
    if style == "ed25519_pkcs8":
        pem = ed.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, none)
        return style, pem.decode().strip()
    public = ed.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"ray@head-node")
    body = group(base64.b64encode(blob).decode(), 70, "\n")
    return style, f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"


def auth_header(rng: Rng) -> tuple[str, str, str]:
    """(style, credential, header value): the credential is what must go, the scheme may stay."""
    style = rng.choice(("basic", "bearer", "digest", "sigv4", "token", "ssws"))
    if style == "basic":
        user = rng.choice(("elastic", "admin", "grafana", "ingest"))
        cred = base64.b64encode(f"{user}:{password(rng)}".encode()).decode()
        return style, cred, f"Basic {cred}"
    if style == "bearer":
        cred = pick(rng, URLSAFE, 43)
        return style, cred, f"Bearer {cred}"
    if style == "digest":
        cred = pick(rng, HEX, 32)
        return style, cred, (f'Digest username="scraper", realm="metrics", nonce="{pick(rng, HEX, 16)}", '
                             f'uri="/federate", qop=auth, nc=00000001, cnonce="{pick(rng, HEX, 8)}", '
                             f'response="{cred}"')
    if style == "sigv4":
        cred = pick(rng, HEX, 64)
        return style, cred, (f"AWS4-HMAC-SHA256 Credential={aws_key_id(rng)}/20241206/us-east-1/es/aws4_request, "
                             f"SignedHeaders=host;x-amz-date, Signature={cred}")
    if style == "token":
        cred = pick(rng, HEX, 40)
        return style, cred, f"Token {cred}"
    cred = "00" + pick(rng, URLSAFE, 40)
    return style, cred, f"SSWS {cred}"


def session_cookie(rng: Rng) -> tuple[str, str]:
    """(cookie name, value): Flask/Superset and Airflow signed sessions, Grafana, Metabase, JupyterHub, Django."""
    name = rng.choice(("session", "grafana_session", "metabase.SESSION", "jupyterhub-session-id", "sessionid"))
    if name == "session":
        payload = b64url(json.dumps({"_user_id": str(rng.randrange(1, 900)), "_fresh": True}).encode())
        return name, f"{payload}.{pick(rng, URLSAFE, 6)}.{pick(rng, URLSAFE, 27)}"
    if name == "metabase.SESSION":
        return name, uid(rng)
    if name == "sessionid":
        return name, pick(rng, LOWER_ALNUM, 32)
    return name, pick(rng, HEX, 32)


def labelled_value(rng: Rng) -> str:
    """A key with no provider prefix: base62, hex or base64url."""
    return rng.choice((lambda: pick(rng, ALNUM, 40), lambda: pick(rng, HEX, 48), lambda: pick(rng, URLSAFE, 36)))()


# ---- personal data --------------------------------------------------------------------------------------------

def email(rng: Rng) -> tuple[str, str, str]:
    """(style, secret, as written): plain, upper case, internationalised (RFC 6531), `%40`, `\\u0040`, `&#64;`,
    `mailto:`."""
    local = rng.choice(("amara.okafor", "t.bekele", "nino_beridze", "ani.petrosyan", "bat-erdene", "aigerim.k",
                        "dilnoza88", "leyla.aliyeva", "sita.sharma", "kasun.perera", "sokha.chan", "aung.min",
                        "zainab.h", "thandi.dlamini", "pieter.vdm", "marija.b", "ilze.ozola", "siobhan.oc"))
    local += rng.choice(("", str(rng.randrange(10, 99)), "+support"))
    domain = rng.choice(("gmail.com", "yahoo.fr", "outlook.com", "mail.ru", "proton.me", "telkomsa.net",
                         "example-shop.co.za", "firma.si", "inbox.lv", "eircom.net"))
    style = rng.choice(("plain", "upper", "idn", "pct", "json_escape", "html_entity", "mailto"))
    if style == "idn":
        idn = rng.choice(("ნინო", "անի", "бат", "айгерим", "सीता", "张伟", "ዮሐንስ", "josé.núñez", "ørjan")) + \
            rng.choice(("@пример.рф", "@例子.中国", "@exämple.de", "@მაგალითი.გე", "@gmail.com"))
        return style, idn, idn
    address = f"{local}@{domain}"
    written = {"plain": address, "upper": address.upper(), "pct": address.replace("@", "%40"),
               "json_escape": address.replace("@", "\\u0040"), "html_entity": address.replace("@", "&#64;"),
               "mailto": "mailto:" + address}
    return style, written[style].removeprefix("mailto:"), written[style]


def nanp(rng: Rng) -> tuple[str, str]:
    """A US or Canadian number (NANP): NPA and NXX start 2-9."""
    npa = rng.choice(("212", "415", "312", "617", "206", "604", "416", "514", "403", "713", "305", "647"))
    nxx, line = str(rng.randint(2, 9)) + digits(rng, 2), digits(rng, 4)
    return rng.choice((
        ("paren", f"({npa}) {nxx}-{line}"), ("dash", f"{npa}-{nxx}-{line}"), ("dot", f"{npa}.{nxx}.{line}"),
        ("intl_space", f"+1 {npa} {nxx} {line}"), ("intl_dash", f"+1-{npa}-{nxx}-{line}"),
        ("one_paren", f"1 ({npa}) {nxx}-{line}"), ("compact", f"{npa}{nxx}{line}")))


def uk(rng: Rng) -> tuple[str, str]:
    """A UK number (Ofcom plan): mobile 07, London 020, Cardiff 029, Belfast 028, Manchester 0161."""
    if rng.random() < 0.5:
        n = "7" + str(rng.randint(1, 9)) + digits(rng, 8)
        return rng.choice((("mobile_national", f"0{n[:4]} {n[4:]}"), ("mobile_intl", f"+44 {n[:4]} {n[4:]}"),
                           ("mobile_intl_zero", f"+44 (0){n[:4]} {n[4:]}"), ("mobile_compact", "0" + n)))
    area, rest = rng.choice((("20", 8), ("29", 8), ("28", 8), ("161", 7)))
    sub = str(rng.randint(2, 8)) + digits(rng, rest - 1)
    cut = 4 if rest == 8 else 3
    return rng.choice((("geo_national", f"0{area} {sub[:cut]} {sub[cut:]}"),
                       ("geo_intl", f"+44 {area} {sub[:cut]} {sub[cut:]}"),
                       ("geo_paren", f"(0{area}) {sub[:cut]} {sub[cut:]}")))


def fr(rng: Rng) -> tuple[str, str]:
    """A French number (ARCEP): 0 and 9 digits, first 1-7 or 9, written in pairs."""
    n = rng.choice("1234567679") + digits(rng, 8)
    pairs = [n[1:][i:i + 2] for i in range(0, 8, 2)]
    return rng.choice((
        ("space", f"0{n[0]} " + " ".join(pairs)), ("dot", f"0{n[0]}." + ".".join(pairs)),
        ("dash", f"0{n[0]}-" + "-".join(pairs)), ("intl", f"+33 {n[0]} " + " ".join(pairs)),
        ("intl_zero", f"+33 (0){n[0]} " + " ".join(pairs)), ("intl_00", f"0033 {n[0]} " + " ".join(pairs)),
        ("compact", "0" + n)))


def de(rng: Rng) -> tuple[str, str]:
    """A German number (BNetzA): mobile 015x/016x/017x, Berlin 030, Hamburg 040, Munich 089."""
    if rng.random() < 0.6:
        pre, sub = rng.choice(("151", "152", "160", "162", "170", "171", "176", "179")), digits(rng, 8)
    else:
        pre, sub = rng.choice(("30", "40", "89")), str(rng.randint(2, 9)) + digits(rng, 7)
    return rng.choice((
        ("national", f"0{pre} {sub}"), ("slash", f"0{pre}/{sub}"), ("dash", f"0{pre}-{sub}"),
        ("intl", f"+49 {pre} {sub}"), ("intl_zero", f"+49 (0){pre} {sub}"), ("intl_00", f"0049 {pre} {sub}"),
        ("din_5008", f"+49 {pre} {sub[:4]} {sub[4:]}")))


def india(rng: Rng) -> tuple[str, str]:
    """An Indian mobile (TRAI): 10 digits starting 6-9, written 5+5."""
    n = str(rng.randint(6, 9)) + digits(rng, 9)
    return rng.choice((
        ("intl_space", f"+91 {n[:5]} {n[5:]}"), ("intl_dash", f"+91-{n[:5]}-{n[5:]}"), ("compact", n),
        ("zero", f"0{n[:5]} {n[5:]}"), ("intl_compact", f"+91{n}"), ("dash", f"{n[:5]}-{n[5:]}")))


def plan(cc: str, national: Callable[[Rng], tuple[str, str, str]]) -> Callable[[Rng], tuple[str, str]]:
    """A country's number in national and international forms: `national` gives (trunk, first group, rest)."""
    def make(rng: Rng) -> tuple[str, str]:
        trunk, head, rest = national(rng)
        rest = str(rng.randint(2, 9)) + rest[1:]  # subscriber numbers do not start with the trunk prefix 0 (nor 1)
        sep = rng.choice((" ", "-", ""))
        rest_sep = rest.replace(" ", sep)
        return rng.choice((("national", f"{trunk}{head}{sep}{rest_sep}"), ("intl", f"+{cc} {head} {rest}"),
                           ("intl_dash", f"+{cc}-{head}-{rest.replace(' ', '-')}"),
                           ("intl_00", f"00{cc} {head} {rest}")))
    return make


PHONES: dict[str, Callable[[Rng], tuple[str, str]]] = {
    "phone_us_ca": nanp, "phone_uk": uk, "phone_fr": fr, "phone_de": de, "phone_in": india,
    "phone_ng": plan("234", lambda r: ("0", r.choice(("803", "806", "813", "703", "905", "816")),
                                       f"{digits(r, 3)} {digits(r, 4)}")),
    "phone_ke": plan("254", lambda r: ("0", "7" + digits(r, 2), f"{digits(r, 3)} {digits(r, 3)}")),
    "phone_eg": plan("20", lambda r: ("0", r.choice(("10", "11", "12", "15")), f"{digits(r, 4)} {digits(r, 4)}")),
    "phone_pk": plan("92", lambda r: ("0", "3" + r.choice("0123") + digits(r, 1), digits(r, 7))),
    "phone_ph": plan("63", lambda r: ("0", "9" + digits(r, 2), f"{digits(r, 3)} {digits(r, 4)}")),
    "phone_mx": plan("52", lambda r: ("", r.choice(("55", "33", "81")), f"{digits(r, 4)} {digits(r, 4)}")),
    "phone_jp": plan("81", lambda r: ("0", r.choice(("90", "80", "70", "3", "6")), f"{digits(r, 4)} {digits(r, 4)}")),
    "phone_ar": plan("54", lambda r: ("0", "11", f"{digits(r, 4)} {digits(r, 4)}") if r.random() < 0.5 else
                     ("0", r.choice(("351", "341")), f"{digits(r, 3)} {digits(r, 4)}")),
}
"""Kind -> (style, number as written)."""


def ssn(rng: Rng) -> tuple[str, str]:
    """A US SSN under the SSA's rules, with dashes, spaces or compact."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    a, g, s = f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
    return rng.choice((("dash", f"{a}-{g}-{s}"), ("space", f"{a} {g} {s}"), ("compact", a + g + s)))


CARD_IINS = ("4", "51", "52", "53", "54", "55", "2221", "2720", "34", "37", "6011", "65", "3528", "3589", "36", "62")


def card(rng: Rng) -> tuple[str, str, str]:
    """(separator style, digits, as written): an IIN of a network, the length it issues, a Luhn check digit."""
    iin = rng.choice(CARD_IINS)
    length = 15 if iin in ("34", "37") else 14 if iin == "36" else 16
    partial = iin + digits(rng, length - len(iin) - 1)
    number = partial + luhn_digit(partial)
    style, sep = rng.choice((("space", " "), ("dash", "-"), ("dot", "."), ("underscore", "_"), ("none", "")))
    return style, number, group_card(number, sep)


IBAN_BBANS = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
              "NL": "4a10n", "BE": "3n7n2n", "AZ": "4a20c", "GE": "2a16n", "AL": "8n16c", "MK": "3n10c2n",
              "SI": "5n8n2n", "LV": "4a13c", "IE": "4a6n8n", "MT": "4a5n18c", "PK": "4a16c", "KZ": "3n13c",
              "EG": "4n4n17n"}
"""Country -> BBAN structure (SWIFT IBAN registry)."""


def iban(rng: Rng) -> tuple[str, str, str]:
    """(style, compact IBAN, as written): grouped in fours, compact, or lower case; Belgian ones with their national
    key (the first ten digits mod 97)."""
    country = rng.choice(sorted(IBAN_BBANS))
    body = bban(rng, IBAN_BBANS[country])
    if country == "BE":
        body = body[:10] + f"{int(body[:10]) % 97 or 97:02d}"
    compact = country + iban_check(country, body) + body
    style = rng.choice(("grouped", "compact", "lower_grouped", "lower_compact"))
    written = group(compact, 4, " ") if "grouped" in style else compact
    return style, compact, written.lower() if style.startswith("lower") else written


VERHOEFF_D = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
              [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
              [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
              [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
VERHOEFF_P = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
              [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
              [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]
VERHOEFF_INV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def verhoeff_ok(number: str) -> bool:
    """Whether a string of digits passes the Verhoeff check (dihedral group D5)."""
    c = 0
    for i, ch in enumerate(reversed(number)):
        c = VERHOEFF_D[c][VERHOEFF_P[i % 8][int(ch)]]
    return c == 0


def verhoeff_digit(partial: str) -> str:
    """The Verhoeff check digit that completes `partial`."""
    c = 0
    for i, ch in enumerate(reversed(partial)):
        c = VERHOEFF_D[c][VERHOEFF_P[(i + 1) % 8][int(ch)]]
    return str(VERHOEFF_INV[c])


def aadhaar(rng: Rng) -> tuple[str, str]:
    """An Aadhaar number (UIDAI): 12 digits, first 2-9, Verhoeff check digit; in fours or compact."""
    partial = str(rng.randint(2, 9)) + digits(rng, 10)
    n = partial + verhoeff_digit(partial)
    return rng.choice((("space", group(n, 4, " ")), ("compact", n), ("dash", group(n, 4, "-"))))


def za_id(rng: Rng) -> tuple[str, str]:
    """A South African ID number: YYMMDD, SSSS, citizenship, 8, Luhn digit."""
    partial = (f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}" + digits(rng, 4)
               + rng.choice("01") + "8")
    return "compact", partial + luhn_digit(partial)


def cn_id(rng: Rng) -> tuple[str, str]:
    """A PRC resident identity number (GB 11643-1999): region, birth date, sequence, ISO 7064 MOD 11-2 check."""
    partial = (rng.choice(("110101", "310104", "440305", "510107", "650102")) + f"{rng.randint(1955, 2004)}"
               + f"{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}" + digits(rng, 3))
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    check = "10X98765432"[sum(int(c) * w for c, w in zip(partial, weights, strict=True)) % 11]
    return "compact", partial + check


NATIONAL_IDS: dict[str, Callable[[Rng], tuple[str, str]]] = {"aadhaar": aadhaar, "za_id": za_id, "cn_id": cn_id}


# ---- languages ------------------------------------------------------------------------------------------------

LANGS: dict[str, tuple[str, str, str]] = {
    "en": ("Hi, you can call me at {v} after 5pm.", "Please email me at {v} about the refund.", "Hello, "),
    "fr": ("Bonjour, mon numéro de téléphone est le {v}.", "Mon adresse e-mail : {v}", "Bonjour, "),
    "es": ("Hola, llámame al teléfono {v}, gracias.", "Mi correo es {v}", "Hola, "),
    "ar": ("مرحبا، رقم هاتفي هو {v}", "بريدي الإلكتروني هو {v}", "مرحبا، "),
    "hi": ("नमस्ते, मेरा फ़ोन नंबर {v} है।", "मेरा ईमेल {v} है।", "नमस्ते, "),
    "zh": ("你好，我的电话是 {v}，请回电。", "我的邮箱是 {v}", "你好，"),
    "am": ("ሰላም፣ የስልክ ቁጥሬ {v} ነው።", "ኢሜይሌ {v} ነው።", "ሰላም፣ "),
    "ka": ("გამარჯობა, ჩემი ტელეფონის ნომერია {v}", "ჩემი ელფოსტაა {v}", "გამარჯობა, "),
    "hy": ("Բարև, իմ հեռախոսահամարն է {v}", "Իմ էլ. փոստն է {v}", "Բարև, "),
    "mn": ("Сайн байна уу, миний утасны дугаар {v}", "Миний имэйл хаяг {v}", "Сайн байна уу, "),
    "kk": ("Сәлеметсіз бе, менің телефон нөмірім {v}", "Менің электрондық поштам {v}", "Сәлеметсіз бе, "),
    "uz": ("Salom, telefon raqamim {v}", "Elektron pochtam: {v}", "Salom, "),
    "az": ("Salam, telefon nömrəm {v}", "E-poçt ünvanım: {v}", "Salam, "),
    "ne": ("नमस्ते, मेरो फोन नम्बर {v} हो।", "मेरो इमेल {v} हो।", "नमस्ते, "),
    "si": ("ආයුබෝවන්, මගේ දුරකථන අංකය {v}", "මගේ ඊමේල් ලිපිනය {v}", "ආයුබෝවන්, "),
    "km": ("សួស្តី លេខទូរស័ព្ទរបស់ខ្ញុំគឺ {v}", "អ៊ីមែលរបស់ខ្ញុំគឺ {v}", "សួស្តី "),
    "my": ("မင်္ဂလာပါ၊ ကျွန်တော့်ဖုန်းနံပါတ်က {v} ပါ။", "ကျွန်တော့်အီးမေးလ်က {v} ပါ။", "မင်္ဂလာပါ၊ "),
    "ur": ("السلام علیکم، میرا فون نمبر {v} ہے۔", "میرا ای میل {v} ہے۔", "السلام علیکم، "),
    "ps": ("سلام، زما د تلیفون شمېره {v} ده.", "زما بریښنالیک {v} دی.", "سلام، "),
    "ha": ("Sannu, lambar wayata ita ce {v}", "Imel ɗina shine {v}", "Sannu, "),
    "yo": ("Ẹ kú àárọ̀, nọ́mbà fóònù mi ni {v}", "Ímeèlì mi ni {v}", "Ẹ kú àárọ̀, "),
    "zu": ("Sawubona, inombolo yami yocingo ithi {v}", "I-imeyili yami ithi {v}", "Sawubona, "),
    "af": ("Goeiedag, my selfoonnommer is {v}", "My e-posadres is {v}", "Goeiedag, "),
    "mt": ("Bongu, in-numru tat-telefon tiegħi huwa {v}", "L-email tiegħi hija {v}", "Bongu, "),
    "sq": ("Përshëndetje, numri im i telefonit është {v}", "Emaili im është {v}", "Përshëndetje, "),
    "mk": ("Здраво, мојот телефонски број е {v}", "Мојата е-пошта е {v}", "Здраво, "),
    "sl": ("Pozdravljeni, moja telefonska številka je {v}", "Moj e-poštni naslov je {v}", "Pozdravljeni, "),
    "lv": ("Labdien, mans tālruņa numurs ir {v}", "Mana e-pasta adrese ir {v}", "Labdien, "),
    "ga": ("Dia duit, is é m'uimhir ghutháin {v}", "Is é mo sheoladh ríomhphoist {v}", "Dia duit, "),
    "cy": ("Helo, fy rhif ffôn yw {v}", "Fy nghyfeiriad e-bost yw {v}", "Helo, "),
    "eu": ("Kaixo, nire telefono zenbakia {v} da.", "Nire helbide elektronikoa {v} da.", "Kaixo, "),
    "gl": ("Ola, o meu número de teléfono é o {v}.", "O meu correo electrónico é {v}", "Ola, "),
}
"""Language -> (a sentence giving a phone number with its context word, one giving an e-mail, a greeting)."""

LANG_CODES = tuple(LANGS)

LABELS: dict[str, tuple[str, ...]] = {
    "ssn": ("SSN", "Social Security Number", "social security no.", "SSN#", "numéro de sécurité sociale (US)",
            "número de seguro social"),
    "card": ("Card number", "card no", "numéro de carte", "número de tarjeta", "رقم البطاقة", "कार्ड नंबर", "卡号",
             "Kartennummer", "kaartnommer", "numri i kartës", "številka kartice", "kartes numurs", "cerdyn"),
    "iban": ("IBAN", "Bank account (IBAN)", "IBAN para la devolución", "IBAN pour le remboursement", "IBAN nömrəsi",
             "IBAN-i", "IBAN konts", "IBAN: account for payout"),
    "aadhaar": ("Aadhaar", "Aadhaar No.", "आधार संख्या", "UIDAI number"),
    "za_id": ("ID number", "SA ID", "ID-nommer", "Inombolo kamazisi"),
    "cn_id": ("身份证号", "公民身份号码", "Resident ID", "ID card no."),
}
"""Kind -> the labels a form or an agent writes the value under (English and the customers' languages)."""

KEY_LABELS = ("API Key: {v}", "Secret key = {v}", "the access token is {v}", "Client Secret: {v}",
              "api key for the prod workspace is {v}", "Clé API : {v}", "Clave secreta: {v}", "API-Schlüssel: {v}",
              "مفتاح API: {v}", "API कुंजी: {v}", "API 密钥：{v}", "Access Token -> {v}", "service account key is {v}",
              "Ingest key: {v}", "API açarı: {v}", "API gako sekretua: {v}")
"""Labels with spaces or words (labelled_key)."""


# ---- carriers -------------------------------------------------------------------------------------------------

Carried = tuple[str, object | None]
"""(text holding the value, the JSON document carrying that text, or None when the text is stored as is)."""


def snake(label: str) -> str:
    return label.lower()


def camel(label: str) -> str:
    head, *rest = label.lower().split("_")
    return head + "".join(p.title() for p in rest)


def dotted(label: str) -> str:
    return label.lower().replace("_", ".")


def grid(rows: list[tuple[str, str]], header: tuple[str, str], border: bool) -> str:
    """A psql result grid (`\\pset border 1` or 2) of two text columns."""
    w0 = max(len(header[0]), *(len(a) for a, _ in rows))
    w1 = max(len(header[1]), *(len(b) for _, b in rows))
    line = [f" {header[0]:<{w0}} | {header[1]:<{w1}} ", f"-{'-' * w0}-+-{'-' * w1}-"]
    line += [f" {a:<{w0}} | {b:<{w1}} " for a, b in rows]
    if border:
        edge = f"+-{'-' * w0}-+-{'-' * w1}-+"
        line = [edge, "|" + line[0] + "|", edge] + ["|" + x + "|" for x in line[2:]] + [edge]
    return "\n".join(line) + f"\n({len(rows)} row{'s' * (len(rows) > 1)})"


def frame(rows: list[tuple[str, str]], header: tuple[str, str], markdown: bool) -> str:
    """A two-column pandas DataFrame as `repr(df)` prints it, or as `df.to_markdown()` writes it."""
    if markdown:
        rule = "|---:|:" + "-" * len(header[0]) + "|:" + "-" * len(header[1]) + "|"
        out = [f"|    | {header[0]} | {header[1]} |", rule]
        return "\n".join(out + [f"| {i:>2} | {a} | {b} |" for i, (a, b) in enumerate(rows)])
    w0 = max(len(header[0]), *(len(a) for a, _ in rows))
    w1 = max(len(header[1]), *(len(b) for _, b in rows))
    out = [f"   {header[0]:>{w0}}  {header[1]:>{w1}}"]
    out += [f"{i:<2} {a:>{w0}}  {b:>{w1}}" for i, (a, b) in enumerate(rows)]
    return "\n".join(out)


SecretCarrier = Callable[[str, str, Rng], Carried]

SECRET_CARRIERS: tuple[tuple[str, SecretCarrier], ...] = (
    ("airflow_export/extra_string", lambda v, lab, r: (
        extra := jdump({snake(lab): v, "timeout": 30}),
        {f"{snake(lab).split('_')[0]}_default": {"conn_type": "http", "description": "", "host": "api.internal",
                                                  "login": None, "password": None, "port": None, "extra": extra}})),
    ("airflow_env/var", lambda v, lab, r: (f"export AIRFLOW_VAR_{lab}={v}\nexport AIRFLOW__CORE__LOAD_EXAMPLES=False",
                                           None)),
    ("dbt_profiles/yaml_setting", lambda v, lab, r: (
        f"analytics:\n  target: prod\n  outputs:\n    prod:\n      type: duckdb\n      path: /data/warehouse.duckdb\n"
        f"      settings:\n        {snake(lab)}: '{v}'\n", None)),
    ("databricks_cluster/spark_env_vars", lambda v, lab, r: (v, {
        "cluster_name": "ml-train-" + digits(r, 3), "spark_version": "15.4.x-scala2.12", "node_type_id": "i3.xlarge",
        "num_workers": 4, "spark_env_vars": {"PYSPARK_PYTHON": "/databricks/python3/bin/python3", lab: v}})),
    ("spark_log/executor_env", lambda v, lab, r: (
        f"24/12/06 05:13:02 INFO SparkContext: Running Spark version 3.5.1\n24/12/06 05:13:02 INFO SparkContext: "
        f"Spark configuration:\nspark.app.name=feature-backfill\nspark.executorEnv.{lab}={v}\n", None)),
    ("mlflow_run/params", lambda v, lab, r: (v, {"run": {
        "info": {"run_id": pick(r, HEX, 32), "experiment_id": str(r.randrange(1, 90)), "status": "FINISHED"},
        "data": {"params": [{"key": "learning_rate", "value": "3e-4"}, {"key": snake(lab), "value": v}],
                 "tags": [{"key": "mlflow.runName", "value": "bold-owl-" + digits(r, 3)}]}}})),
    ("wandb_config/yaml", lambda v, lab, r: (
        f"wandb_version: 1\n\nlearning_rate:\n  desc: null\n  value: 0.0003\n{snake(lab)}:\n  desc: null\n"
        f"  value: {v}\n", None)),
    ("hf_space/dotenv", lambda v, lab, r: (f"HF_HUB_ENABLE_HF_TRANSFER=1\n{lab}={v}\nGRADIO_SERVER_NAME=0.0.0.0\n",
                                           None)),
    ("kafka_client/properties", lambda v, lab, r: (
        f"bootstrap.servers=pkc-{pick(r, LOWER_ALNUM, 5)}.eu-west-1.aws.confluent.cloud:9092\n"
        f"security.protocol=SASL_SSL\n{dotted(lab)}={v}\n", None)),
    ("ray_job/runtime_env", lambda v, lab, r: (v, {
        "entrypoint": "python train.py --epochs 3", "submission_id": "raysubmit_" + pick(r, ALNUM, 16),
        "runtime_env": {"pip": ["torch==2.5.1", "transformers==4.46.3"], "env_vars": {lab: v}}})),
    ("sagemaker_job/environment", lambda v, lab, r: (v, {
        "TrainingJobName": "llm-sft-" + digits(r, 8), "AlgorithmSpecification": {"TrainingInputMode": "File"},
        "Environment": {"HF_HOME": "/opt/ml/cache", lab: v}})),
    ("vertex_job/container_env", lambda v, lab, r: (v, {
        "displayName": "eval-" + digits(r, 6), "jobSpec": {"workerPoolSpecs": [{"replicaCount": "1", "containerSpec": {
            "imageUri": "europe-docker.pkg.dev/ml-prod/train/eval:latest", "env": [{"name": lab, "value": v}]}}]}})),
    ("pandas_repr/df", lambda v, lab, r: (frame([("REGION", "eu-west-1"), (lab, v)], ("name", "value"), False),
                                          None)),
    ("psql_grid/border1", lambda v, lab, r: (grid([(snake(lab), v), ("region", "eu-west-1")], ("key", "value"),
                                                  False), None)),
    ("markdown/to_markdown", lambda v, lab, r: (frame([(lab, v)], ("variable", "value"), True), None)),
    ("grafana_provisioning/secure_json", lambda v, lab, r: (
        f"apiVersion: 1\ndatasources:\n  - name: Upstream\n    type: grafana-infinity-datasource\n"
        f"    secureJsonData:\n      {camel(lab)}: {v}\n", None)),
    ("notebook_cell/os_environ", lambda v, lab, r: (f'import os\nos.environ["{lab}"] = "{v}"\n', None)),
    ("airbyte_source/configuration", lambda v, lab, r: (v, {
        "sourceDefinitionId": uid(r), "name": "events-api", "connectionConfiguration": {
            snake(lab): v, "start_date": "2024-01-01T00:00:00Z"}})),
    ("databricks_cli/put_secret", lambda v, lab, r: (
        f"$ databricks secrets put-secret ml-scope {snake(lab).replace('_', '-')} --string-value {v}", None)),
)
"""(form, (value, environment name, rng) -> carried) for provider tokens and other labelled secrets."""


SentenceCarrier = Callable[[str, str, Rng], Carried]

SENTENCE_CARRIERS: tuple[tuple[str, SentenceCarrier], ...] = (
    ("chat_widget/visitor_message", lambda s, lang, r: (s, {
        "conversation_id": uid(r), "channel": "web_widget", "locale": lang,
        "messages": [{"author": "visitor", "created_at": "2024-12-06T05:13:02Z", "body": s}]})),
    ("email/plain", lambda s, lang, r: (
        f"Subject: Re: [#{digits(r, 6)}] order delayed\nContent-Type: text/plain; charset=utf-8\n"
        f"Content-Language: {lang}\n\n{s}\n\n> On Thu, the support team wrote:\n> How can we help?", None)),
    ("whatsapp_api/text_body", lambda s, lang, r: (s, {"object": "whatsapp_business_account", "entry": [{
        "id": digits(r, 15), "changes": [{"field": "messages", "value": {"messaging_product": "whatsapp", "messages": [
            {"id": "wamid." + pick(r, ALNUM, 40), "timestamp": "1733462" + digits(r, 3), "type": "text",
             "text": {"body": s}}]}}]}]})),
    ("asr_transcript/srt", lambda s, lang, r: (
        f"{r.randint(3, 40)}\n00:03:{r.randint(10, 59)},{digits(r, 3)} --> 00:03:{r.randint(10, 59)},{digits(r, 3)}\n"
        f"SPEAKER_01: {s}\n", None)),
    ("ocr_scan/tesseract_text", lambda s, lang, r: (
        f"--- page 1 (tesseract 5.3.4, lang={lang}, mean conf 88) ---\nCUSTOMER CORRESPONDENCE\n{s}\n"
        "Signature: ____________", None)),
    ("label_studio/task_export", lambda s, lang, r: (s, [{
        "id": r.randrange(1000, 99999), "data": {"text": s, "lang": lang}, "annotations": [], "predictions": []}])),
    ("whisper_json/segments", lambda s, lang, r: (s, {"text": s, "language": lang, "segments": [
        {"id": 0, "start": 0.0, "end": round(r.uniform(3, 9), 2), "text": s}]})),
    ("chat_export/transcript", lambda s, lang, r: (
        f"[2024-12-06 05:13] Visitor: {s}\n[2024-12-06 05:14] Agent (bot): Thank you, a colleague will follow up.",
        None)),
    ("feature_store/ticket_row", lambda s, lang, r: (s, {
        "entity_key": {"customer_id": r.randrange(10**6, 10**7)}, "features": {
            "last_ticket_lang": lang, "last_ticket_text": s, "ticket_count_30d": r.randrange(1, 9)}})),
)
"""(form, (sentence, language, rng) -> carried) for customer conversations."""


TABLE_CARRIERS: tuple[tuple[str, Callable[[str, str, Rng], Carried]], ...] = (
    ("psql_grid/border2", lambda v, col, r: (grid([(str(r.randrange(10**5, 10**6)), v)], ("customer_id", col),
                                                  True), None)),
    ("pandas_repr/df", lambda v, col, r: (frame([(str(r.randrange(10**5, 10**6)), v)], ("customer_id", col), False),
                                          None)),
    ("markdown/to_markdown", lambda v, col, r: (frame([("kyc-" + digits(r, 5), v)], ("case", col), True), None)),
    ("feature_store/online_row", lambda v, col, r: (v, {
        "entity_key": {"customer_id": r.randrange(10**6, 10**7)}, "features": {col: v, "risk_score": 0.12}})),
    ("ge_validation/unexpected_list", lambda v, col, r: (v, {
        "success": False, "expectation_config": {"expectation_type": "expect_column_values_to_be_null",
                                                 "kwargs": {"column": col}},
        "result": {"element_count": 1200, "unexpected_count": 1, "partial_unexpected_list": [v]}})),
)
"""(form, (value, column name, rng) -> carried) for values in result tables and data-quality reports."""

PASSWORD_CARRIERS: tuple[tuple[str, Callable[[str, Rng], Carried]], ...] = (
    ("dotenv/DB_PASSWORD", lambda v, r: (f"DB_HOST=warehouse.internal\nDB_USER=analyst\nDB_PASSWORD={v}\n", None)),
    ("shell/PGPASSWORD", lambda v, r: (
        f"PGPASSWORD={v} psql -h pg-analytics.internal -U analyst -d warehouse -c '\\dt'", None)),
    ("compose_yaml/MYSQL_ROOT_PASSWORD", lambda v, r: (
        f"services:\n  superset-db:\n    image: mysql:8.4\n    environment:\n      MYSQL_ROOT_PASSWORD: {v}\n", None)),
    ("metabase_export/userPassword", lambda v, r: (v, {"login": "metabase-admin", "userPassword": v,
                                                       "locale": "en"})),
    ("dbt_profiles/password", lambda v, r: (
        f"warehouse:\n  target: prod\n  outputs:\n    prod:\n      type: postgres\n      host: pg-dw.internal\n"
        f"      user: dbt\n      password: \"{v}\"\n      dbname: analytics\n      schema: marts\n", None)),
    ("airflow_export/password", lambda v, r: (v, {"postgres_dw": {
        "conn_type": "postgres", "host": "pg-dw.internal", "login": "etl", "password": v, "port": 5432,
        "schema": "dw", "extra": "{}"}})),
    ("airflow_env/conn_uri", lambda v, r: (f"AIRFLOW_CONN_POSTGRES_DW='postgresql://etl:{v}@pg-dw.internal:5432/dw'",
                                           None)),
    ("kafka_client/jaas", lambda v, r: (
        "sasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
        f'required username="svc-cdc" password="{v}";', None)),
    ("debezium_connector/database_password", lambda v, r: (v, {"name": "inventory-connector", "config": {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector", "database.hostname": "pg-oltp",
        "database.port": "5432", "database.user": "debezium", "database.password": v,
        "topic.prefix": "oltp"}})),
    ("grafana_provisioning/basicAuthPassword", lambda v, r: (
        "datasources:\n  - name: Prometheus\n    type: prometheus\n    basicAuth: true\n    basicAuthUser: grafana\n"
        f"    secureJsonData:\n      basicAuthPassword: {v}\n", None)),
    ("prometheus/basic_auth", lambda v, r: (
        f"scrape_configs:\n  - job_name: spark-executors\n    basic_auth:\n      username: scraper\n"
        f"      password: {v}\n    static_configs:\n      - targets: ['spark-master:8080']\n", None)),
    ("cli/password_flag", lambda v, r: (
        f"$ airflow users create --username ops --role Admin --firstname Ops --lastname Bot --password {v}", None)),
    ("cli/mysql_p", lambda v, r: (f"$ mysql -h metabase-db -u root -p{v} metabase -e 'select count(*) from core_user'",
                                  None)),
    ("dotenv/REDIS_PASS", lambda v, r: (f"REDIS_HOST=feast-redis\nREDIS_PORT=6379\nREDIS_PASS={v}\n", None)),
    ("notebook_cell/spark_jdbc", lambda v, r: (
        'df = (spark.read.format("jdbc").option("url", "jdbc:postgresql://pg-dw:5432/dw")\n'
        f'      .option("user", "etl").option("password", "{v}").option("dbtable", "events").load())', None)),
    ("helm_values/camel_case", lambda v, r: (
        f"clickhouse:\n  auth:\n    adminUser: default\n    clickhousePassword: {v}\n", None)),
    ("trino_catalog/properties", lambda v, r: (
        "connector.name=postgresql\nconnection-url=jdbc:postgresql://pg-dw:5432/dw\nconnection-user=trino\n"
        f"connection-password={v}\n", None)),
    ("ray_job/runtime_env", lambda v, r: (v, {"entrypoint": "python etl.py", "runtime_env": {
        "env_vars": {"WAREHOUSE_USER": "ray", "WAREHOUSE_PASSWORD": v}}})),
    ("dotenv/ELASTIC_PASSWORD", lambda v, r: (f"ELASTIC_VERSION=8.15.3\nELASTIC_PASSWORD={v}\n", None)),
    ("fivetran_destination/snowflake", lambda v, r: (v, {"service": "snowflake", "config": {
        "host": "xy12345.eu-west-1.snowflakecomputing.com", "user": "FIVETRAN", "password": v,
        "database": "RAW", "role": "LOADER"}})),
    ("cli/redis_a", lambda v, r: (f"$ redis-cli -h feast-redis -a {v} --no-auth-warning PING\nPONG", None)),
    ("label_studio/dotenv", lambda v, r: (f"LABEL_STUDIO_USERNAME=annotator\nLABEL_STUDIO_PASSWORD={v}\n", None)),
)
"""(form, (password, rng) -> carried)."""

CONNECTION_CONTAINERS: tuple[tuple[str, Callable[[str, str, Rng], Carried]], ...] = (
    ("dotenv", lambda cs, style, r: (f"{style.upper()}_URL='{cs}'\n", None)),
    ("airflow_export", lambda cs, style, r: (cs, {f"{style}_conn": {"conn_type": "generic", "uri": cs}})),
    ("superset_export", lambda cs, style, r: (
        f"database_name: {style}\nsqlalchemy_uri: {cs}\nexpose_in_sqllab: true\nallow_ctas: false\n", None)),
    ("ge_datasource", lambda cs, style, r: (
        f"datasources:\n  {style}:\n    class_name: Datasource\n    execution_engine:\n"
        f"      class_name: SqlAlchemyExecutionEngine\n      connection_string: {cs}\n", None)),
    ("spark_log", lambda cs, style, r: (
        f"24/12/06 05:13:09 INFO JDBCRelation: Number of partitions: 8, url={cs}", None)),
    ("metabase_export", lambda cs, style, r: (cs, {"name": style, "engine": style.split("_")[0], "details": {
        "connection-uri": cs, "ssl": True}})),
    ("notebook_cell", lambda cs, style, r: (f'engine = create_engine("{cs}")\npd.read_sql("select 1", engine)', None)),
    ("kafka_connect", lambda cs, style, r: (
        f"name=jdbc-sink-{style}\nconnector.class=io.confluent.connect.jdbc.JdbcSinkConnector\nconnection.url={cs}\n",
        None)),
    ("airbyte_destination", lambda cs, style, r: (cs, {"destinationDefinitionId": uid(r), "connectionConfiguration": {
        "connection_string": cs, "schema": "public"}})),
)
"""(carrier, (connection string, its style, rng) -> carried)."""

AwsCarrier = Callable[[str, str, Rng], Carried]

AWS_CARRIERS: tuple[tuple[str, AwsCarrier], ...] = (
    ("spark_conf/s3a", lambda k, s, r: (
        f"spark.hadoop.fs.s3a.access.key {k}\nspark.hadoop.fs.s3a.secret.key {s}\n", None)),
    ("airflow_export/aws_login_password", lambda k, s, r: (s, {"aws_default": {
        "conn_type": "aws", "login": k, "password": s, "extra": '{"region_name": "eu-west-1"}'}})),
    ("databricks_cluster/spark_conf", lambda k, s, r: (s, {"cluster_name": "etl", "spark_conf": {
        "spark.hadoop.fs.s3a.access.key": k, "spark.hadoop.fs.s3a.secret.key": s}})),
    ("dbt_athena/yaml", lambda k, s, r: (
        f"lake:\n  outputs:\n    prod:\n      type: athena\n      aws_access_key_id: {k}\n"
        f"      aws_secret_access_key: {s}\n      region_name: eu-west-1\n", None)),
    ("trino_catalog/hive_s3", lambda k, s, r: (
        f"connector.name=hive\nhive.s3.aws-access-key={k}\nhive.s3.aws-secret-key={s}\n", None)),
    ("clickhouse_sql/s3_function", lambda k, s, r: (
        "SELECT count() FROM s3('https://ml-datasets.s3.amazonaws.com/events/*.parquet', "
        f"'{k}', '{s}', 'Parquet')", None)),
    ("duckdb_sql/create_secret", lambda k, s, r: (
        f"CREATE SECRET lake (TYPE S3, KEY_ID '{k}', SECRET '{s}', REGION 'eu-west-1');", None)),
    ("pandas_call/storage_options", lambda k, s, r: (
        f'pd.read_parquet("s3://ml-datasets/events/", storage_options={{"key": "{k}", "secret": "{s}"}})', None)),
    ("redshift_sql/copy_credentials", lambda k, s, r: (
        f"COPY events FROM 's3://ml-datasets/events/' CREDENTIALS 'aws_access_key_id={k};aws_secret_access_key={s}' "
        "FORMAT AS PARQUET;", None)),
    ("snowflake_sql/stage", lambda k, s, r: (
        f"CREATE STAGE raw_stage URL='s3://ml-datasets/raw/' CREDENTIALS=(AWS_KEY_ID='{k}' AWS_SECRET_KEY='{s}');",
        None)),
    ("sagemaker_job/environment", lambda k, s, r: (s, {"TrainingJobName": "sft-" + digits(r, 6), "Environment": {
        "AWS_ACCESS_KEY_ID": k, "AWS_SECRET_ACCESS_KEY": s}})),
    ("iam_csv/console_download", lambda k, s, r: (f"Access key ID,Secret access key\n{k},{s}\n", None)),
    ("chat/unlabelled_pair", lambda k, s, r: (f"use {k} / {s} for the ml-datasets bucket until Friday", None)),
    ("ray_job/runtime_env", lambda k, s, r: (f"{k}:{s}", {"entrypoint": "python ingest.py", "metadata": {
        "owner": "ml-infra"}, "runtime_env": {"env_vars": {"S3_CREDENTIALS": f"{k}:{s}"}}})),
)
"""(form, (key id, secret, rng) -> carried)."""

WEBHOOK_CARRIERS: tuple[tuple[str, Callable[[str, Rng], Carried]], ...] = (
    ("airflow_variables/export", lambda u, r: (u, {"alerts_webhook": u, "env": "prod"})),
    ("grafana_contact_points/yaml", lambda u, r: (
        "apiVersion: 1\ncontactPoints:\n  - orgId: 1\n    name: data-oncall\n    receivers:\n      - uid: "
        f"{pick(r, LOWER_ALNUM, 9)}\n        type: webhook\n        settings:\n          url: {u}\n", None)),
    ("alertmanager/webhook_configs", lambda u, r: (
        f"receivers:\n  - name: ml-team\n    webhook_configs:\n      - url: '{u}'\n        send_resolved: true\n",
        None)),
    ("ge_checkpoint/slack_action", lambda u, r: (
        "action_list:\n  - name: send_slack_notification\n    action:\n      class_name: SlackNotificationAction\n"
        f"      slack_webhook: {u}\n      notify_on: failure\n", None)),
    ("databricks_job/parameters", lambda u, r: (u, {"name": "nightly-features", "parameters": [
        {"name": "alert_url", "default": u}], "max_concurrent_runs": 1})),
    ("airflow_env/var", lambda u, r: (f"AIRFLOW_VAR_NOTIFY_WEBHOOK={u}", None)),
    ("dbt_log/on_run_end", lambda u, r: (
        "05:13:20  Running 1 on-run-end hook\n05:13:20  1 of 1 START hook: analytics.on-run-end.0 ... "
        f"posting to {u}\n05:13:21  1 of 1 OK hook", None)),
    ("notebook_cell/requests_post", lambda u, r: (
        f'requests.post("{u}", json={{"text": f"run {{run.id}} finished: {{acc:.3f}}"}})', None)),
    ("superset_report/recipients", lambda u, r: (u, {"name": "weekly kpis", "recipients": [
        {"type": "Webhook", "recipient_config_json": {"target": u}}]})),
)
"""(form, (webhook URL, rng) -> carried)."""

PEM_CARRIERS: tuple[tuple[str, Callable[[str, Rng], Carried]], ...] = (
    ("kubectl/secret_decode", lambda p, r: (
        "$ kubectl -n ray get secret head-key -o jsonpath='{.data.key}' | base64 -d\n" + p + "\n", None)),
    ("vertex_job/service_account", lambda p, r: (p + "\n", {
        "type": "service_account", "project_id": "ml-prod-" + digits(r, 4), "private_key_id": pick(r, HEX, 40),
        "private_key": p + "\n", "token_uri": "https://oauth2.googleapis.com/token"})),
    ("dotenv/quoted_multiline", lambda p, r: (f'SNOWFLAKE_USER=LOADER\nSNOWFLAKE_PRIVATE_KEY="{p}"\n', None)),
    ("airflow_export/snowflake_extra", lambda p, r: (p, {"snowflake_default": {
        "conn_type": "snowflake", "login": "LOADER", "extra": {"account": "xy12345", "private_key_content": p}}})),
    ("databricks_cli/put_secret", lambda p, r: (
        f'$ databricks secrets put-secret ml-scope sf-key --string-value "{p}"', None)),
    ("notebook_output/print", lambda p, r: (
        f"In [7]: print(open('/dbfs/keys/loader.p8').read())\n{p}\n\nIn [8]:", None)),
    ("vertex_job/container_env", lambda p, r: (p, {"displayName": "loader", "jobSpec": {"workerPoolSpecs": [
        {"containerSpec": {"imageUri": "europe-docker.pkg.dev/ml-prod/etl:1", "env": [
            {"name": "SF_PRIVATE_KEY", "value": p}]}}]}})),
)
"""(form, (PEM, rng) -> carried)."""

AUTH_CARRIERS: tuple[tuple[str, Callable[[str, str, Rng], Carried]], ...] = (
    ("curl/header_flag", lambda h, c, r: (
        f"$ curl -s -H 'Authorization: {h}' 'https://es.internal:9200/_cat/indices?v'", None)),
    ("es_request/raw_http", lambda h, c, r: (
        f"GET /_cluster/health HTTP/1.1\r\nHost: es.internal:9200\r\nAuthorization: {h}\r\nAccept: */*\r\n\r\n", None)),
    ("ray_log/requests_headers", lambda h, c, r: (
        "2024-12-06 05:13:02,118 DEBUG worker.py:88 -- headers={'User-Agent': 'python-requests/2.32.3', "
        f"'Authorization': '{h}'}}", None)),
    ("grafana_provisioning/http_header", lambda h, c, r: (
        "datasources:\n  - name: Elasticsearch\n    type: elasticsearch\n    jsonData:\n"
        f"      httpHeaderName1: Authorization\n    secureJsonData:\n      httpHeaderValue1: '{h}'\n", None)),
    ("har/request_headers", lambda h, c, r: (h, {"request": {"method": "POST", "url": "https://es.internal/_bulk",
                                                             "headers": [{"name": "Authorization", "value": h}]}})),
    ("prometheus/authorization", lambda h, c, r: (
        f"scrape_configs:\n  - job_name: federate\n    authorization:\n      type: {h.split(' ', 1)[0]}\n"
        f"      credentials: {h.split(' ', 1)[1]}\n", None)),
    ("opensearch_client/json_headers", lambda h, c, r: (h, {"hosts": ["https://search.internal:9200"],
                                                            "headers": {"authorization": h}})),
)
"""(form, (header value, credential, rng) -> carried)."""

COOKIE_CARRIERS: tuple[tuple[str, Callable[[str, str, Rng], Carried]], ...] = (
    ("http/cookie_header", lambda n, c, r: (
        f"Cookie: _ga=GA1.1.{digits(r, 9)}.{digits(r, 10)}; {n}={c}; locale=en", None)),
    ("http/set_cookie", lambda n, c, r: (f"Set-Cookie: {n}={c}; Path=/; HttpOnly; SameSite=Lax", None)),
    ("curl/cookie_flag", lambda n, c, r: (f"$ curl -b '{n}={c}' https://superset.internal/api/v1/chart/", None)),
    ("har/cookies", lambda n, c, r: (c, {"request": {"url": "https://metabase.internal/api/card", "cookies": [
        {"name": n, "value": c, "httpOnly": True}]}})),
    ("python_repr/cookiejar", lambda n, c, r: (
        f"<RequestsCookieJar[<Cookie {n}={c} for superset.internal/>]>", None)),
    ("devtools/cookie_table", lambda n, c, r: (f"Name\tValue\tDomain\tPath\n{n}\t{c}\tgrafana.internal\t/", None)),
)
"""(form, (cookie name, value, rng) -> carried)."""


# ---- cases ----------------------------------------------------------------------------------------------------

def case(kind: str, secret: str, form: str, carried: Carried) -> Case:
    """A Case from a carrier's (text, JSON document or None)."""
    text, doc = carried
    if doc is None:
        return Case(kind, secret, text, text, False, form)
    return Case(kind, secret, text, jdump(doc), True, form)


def nth(table: tuple, i: int, rng: Rng) -> tuple:
    """The carrier for case `i`: each in turn, then a random one, so every carrier appears and mixes vary."""
    return table[i] if i < len(table) else rng.choice(table)


def provider_case(kind: str, i: int, rng: Rng) -> Case:
    make, labels = PROVIDERS[kind]
    value = make(rng)
    form, carrier = nth(SECRET_CARRIERS, i, rng)
    return case(kind, value, form, carrier(value, rng.choice(labels), rng))


def password_case(kind: str, i: int, rng: Rng) -> Case:
    value = password(rng)
    form, carrier = nth(PASSWORD_CARRIERS, i, rng)
    return case(kind, value, form, carrier(value, rng))


def connection_case(kind: str, i: int, rng: Rng) -> Case:
    style, secret, cs = connection(rng, i)
    carrier, make = CONNECTION_CONTAINERS[(i // len(CONNECTIONS) + i) % len(CONNECTION_CONTAINERS)]
    return case(kind, secret, f"{carrier}/{style}", make(cs, style, rng))


def aws_case(kind: str, i: int, rng: Rng) -> Case:
    key_id, secret = aws_key_id(rng), aws_secret(rng)
    form, carrier = nth(AWS_CARRIERS, i, rng)
    return case(kind, secret, form, carrier(key_id, secret, rng))


def webhook_case(kind: str, i: int, rng: Rng) -> Case:
    prefix, secret = webhook(rng)
    form, carrier = nth(WEBHOOK_CARRIERS, i, rng)
    return case(kind, secret, form, carrier(prefix + secret, rng))


def sentence_case(kind: str, secret: str, lang: str, sentence: str, i: int, rng: Rng, style: str) -> Case:
    """A value in a customer's sentence in `lang`, carried by one of the conversation carriers."""
    form, carrier = nth(SENTENCE_CARRIERS, i, rng)
    return case(kind, secret, f"{form.split('/')[0]}/{lang}_{style}", carrier(sentence, lang, rng))


def labelled_key_case(kind: str, i: int, rng: Rng) -> Case:
    value = labelled_value(rng)
    lang = LANG_CODES[i % len(LANG_CODES)]
    label = KEY_LABELS[i % len(KEY_LABELS)]
    sentence = LANGS[lang][2] + label.format(v=value)
    return sentence_case(kind, value, lang, sentence, i, rng, "label" + str(i % len(KEY_LABELS)))


def disguised_case(kind: str, i: int, rng: Rng) -> Case:
    style, value = disguised(rng)
    if i % 2:
        form, carrier = nth(SECRET_CARRIERS, i // 2, rng)
        return case(kind, value, f"{form.split('/')[0]}/{style}", carrier(value, "API_TOKEN", rng))
    lang = LANG_CODES[i % len(LANG_CODES)]
    return sentence_case(kind, value, lang, f"{LANGS[lang][2]}token: {value}", i // 2, rng, style)


def email_case(kind: str, i: int, rng: Rng) -> Case:
    style, secret, written = email(rng)
    if i % 4 == 3:
        form, carrier = nth(TABLE_CARRIERS, i // 4, rng)
        return case(kind, secret, f"{form.split('/')[0]}/{style}", carrier(written, "email", rng))
    lang = LANG_CODES[i % len(LANG_CODES)]
    return sentence_case(kind, secret, lang, LANGS[lang][1].format(v=written), i, rng, style)


def phone_case(kind: str, i: int, rng: Rng) -> Case:
    style, number = PHONES[kind](rng)
    lang = "en" if i % 5 == 4 else LANG_CODES[(i * 5) % len(LANG_CODES)]
    sentence = f"Hello, Tel./Mobile: {number}" if i % 5 == 4 else LANGS[lang][0].format(v=number)
    return sentence_case(kind, number, lang, sentence, i, rng, style)


def labelled_pii_case(kind: str, i: int, rng: Rng, style: str, value: str) -> Case:
    """An ssn, card, iban or national id: in a result table, or in a customer's sentence under a label."""
    labels = LABELS[kind]
    if i % 2:
        column = {"ssn": "ssn", "card": "card_number", "iban": "iban", "aadhaar": "aadhaar_no", "za_id": "id_number",
                  "cn_id": "resident_id"}[kind]
        form, carrier = nth(TABLE_CARRIERS, i // 2, rng)
        return case(kind, value, f"{form.split('/')[0]}/{style}", carrier(value, column, rng))
    lang = LANG_CODES[(i * 3) % len(LANG_CODES)]
    sentence = f"{LANGS[lang][2]}{labels[i // 2 % len(labels)]}: {value}"
    return sentence_case(kind, value, lang, sentence, i // 2, rng, style)


def ssn_case(kind: str, i: int, rng: Rng) -> Case:
    return labelled_pii_case(kind, i, rng, *ssn(rng))


def card_case(kind: str, i: int, rng: Rng) -> Case:
    style, _number, written = card(rng)
    return labelled_pii_case(kind, i, rng, style, written)


def iban_case(kind: str, i: int, rng: Rng) -> Case:
    style, _compact, written = iban(rng)
    return labelled_pii_case(kind, i, rng, style, written)


def national_id_case(kind: str, i: int, rng: Rng) -> Case:
    return labelled_pii_case(kind, i, rng, *NATIONAL_IDS[kind](rng))


def private_key_case(kind: str, i: int, rng: Rng) -> Case:
    style, pem = private_key(rng)
    form, carrier = nth(PEM_CARRIERS, i, rng)
    return case(kind, pem, f"{form.split('/')[0]}/{style}", carrier(pem, rng))


def auth_header_case(kind: str, i: int, rng: Rng) -> Case:
    style, cred, header = auth_header(rng)
    form, carrier = nth(AUTH_CARRIERS, i, rng)
    return case(kind, cred, f"{form.split('/')[0]}/{style}", carrier(header, cred, rng))


def cookie_case(kind: str, i: int, rng: Rng) -> Case:
    name, value = session_cookie(rng)
    form, carrier = nth(COOKIE_CARRIERS, i, rng)
    return case(kind, value, f"{form.split('/')[0]}/{name}", carrier(name, value, rng))


KINDS: dict[str, Callable[[str, int, Rng], Case]] = {
    "password": password_case, "aws_secret": aws_case, "webhook": webhook_case,
    "stripe_whsec": provider_case, "connection_string": connection_case, "labelled_key": labelled_key_case,
    "disguised": disguised_case, "email": email_case,
    **{k: phone_case for k in ("phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in")},
    "ssn": ssn_case, "card": card_case, "iban": iban_case,
    **{k: provider_case for k in PROVIDERS if k != "stripe_whsec"},
    "private_key": private_key_case, "auth_header": auth_header_case, "session_cookie": cookie_case,
    **{k: phone_case for k in PHONES if k not in ("phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in")},
    **{k: national_id_case for k in NATIONAL_IDS},
}
"""Kind -> the builder of its case `i`: the issue's 16 kinds first, then the wider ones."""


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, from one generator seeded with SEED."""
    rng = random.Random(SEED)
    for kind, build in KINDS.items():
        for i in range(PER_KIND):
            yield build(kind, i, rng)


# ---- near misses ----------------------------------------------------------------------------------------------

PLACEHOLDERS = ("DB_PASSWORD=${DB_PASSWORD}", "password: \"{{ env_var('DBT_PASSWORD') }}\"",
                "api_key: '{{ var.value.openai_api_key }}'", "basicAuthPassword: $__env{GRAFANA_PROM_PASSWORD}",
                "OPENAI_API_KEY=<your-api-key>", "password: ********", "WANDB_API_KEY=REDACTED",
                "connection-password=${ENV:TRINO_PASSWORD}", "database.password=${file:/opt/secrets.properties:pw}",
                "token: {{secrets/ml-scope/databricks-token}}", "HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "password=%(DB_PASSWORD)s", "ELASTIC_PASSWORD=${ELASTIC_PASSWORD:?set it in vault}",
                "secret: vault:secret/data/dw#password",
                "DD_API_KEY=<DATADOG_API_KEY>", "sasl.password=${CONFLUENT_API_SECRET}", "\"userPassword\": null",
                "PGPASSWORD= psql -h localhost", "aws_secret_access_key = {{ aws_secret }}",
                "Authorization: Bearer <token>")
"""Placeholders after password and key labels: references to secrets held elsewhere, no secret."""


def ean13(rng: Rng) -> str:
    """A GS1 EAN-13 with its check digit (weights 1, 3), from prefixes no card network issues under."""
    partial = rng.choice(("590", "690", "800", "871", "880")) + digits(rng, 9)
    total = sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(partial))
    return partial + str((10 - total % 10) % 10)


def bad_card(rng: Rng) -> str:
    """A 16-digit number in a card network's range whose last digit fails Luhn."""
    iin = rng.choice(("4", "51", "55", "6011"))
    partial = iin + digits(rng, 15 - len(iin))
    good = luhn_digit(partial)
    return group(partial + str((int(good) + rng.randint(1, 9)) % 10), 4, " ")


def bad_iban(rng: Rng) -> str:
    """An IBAN of the registry's structure whose check digits are off by one to eight."""
    country = rng.choice(sorted(IBAN_BBANS))
    body = bban(rng, IBAN_BBANS[country])
    check = (int(iban_check(country, body)) + rng.randint(1, 8) - 2) % 97 + 2
    return group(f"{country}{check:02d}{body}", 4, " ")


def bad_ssn(rng: Rng) -> str:
    """A number in SSN shape the SSA never issues: area 000, 666 or 9xx, group 00 or serial 0000."""
    return rng.choice((f"000-{digits(rng, 2)}-{digits(rng, 4)}", f"666-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}",
                       f"9{digits(rng, 2)}-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}",
                       f"{rng.randint(100, 665)}-00-{rng.randint(1000, 9999)}",
                       f"{rng.randint(100, 665)}-{rng.randint(10, 99)}-0000"))


NEGATIVES: dict[str, Callable[[Rng], str]] = {
    "uuid": lambda r: f"label-studio task {uid(r)} exported; mlflow run_id {uid(r)} FINISHED",
    "run_hex": lambda r: f"MLflow run {pick(r, HEX, 32)} logged 14 metrics to experiment {r.randrange(1, 99)}",
    "git_sha": lambda r: f"dbt project at revision {pick(r, HEX, 40)} (main), 212 models",
    "sha256_digest": lambda r: f"pulled image trainer@sha256:{pick(r, HEX, 64)}",
    "version": lambda r: (f"transformers=={r.randint(4, 4)}.{r.randint(30, 47)}.{r.randint(0, 3)} torch=="
                          f"2.{r.randint(1, 5)}.{r.randint(0, 1)}+cu124 spark {r.choice(('3.4.1', '3.5.1', '3.5.3'))} "
                          f"DBR {r.randint(13, 16)}.{r.randint(0, 4)}.x-scala2.12"),
    "amount": lambda r: (f"total_revenue {r.randint(1, 999)},{r.randint(100, 999)},{r.randint(100, 999)}."
                         f"{r.randint(10, 99)} EUR, refund ${r.randint(10, 99)},{r.randint(100, 999)}.00"),
    "timestamp": lambda r: (f"event_time=2024-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:"
                            f"{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{digits(r, 6)}Z ingest_ms="
                            f"17334{digits(r, 8)}"),
    "order_number": lambda r: f"order ORD-2024-{digits(r, 6)} and invoice INV/2024/{digits(r, 5)} synced by Fivetran",
    "luhn_fail_card": lambda r: f"Card number: {bad_card(r)}",
    "mod97_fail_iban": lambda r: f"IBAN: {bad_iban(r)}",
    "invalid_ssn": lambda r: f"SSN: {bad_ssn(r)}",
    "placeholder": lambda r: r.choice(PLACEHOLDERS),
    "masked_card": lambda r: r.choice((f"Card: **** **** **** {digits(r, 4)}", f"card ending in {digits(r, 4)}",
                                       f"card_number XXXX-XXXX-XXXX-{digits(r, 4)}",
                                       f"pan_masked 411111******{digits(r, 4)}")),
    "publishable_key": lambda r: r.choice((
        f"STRIPE_PUBLISHABLE_KEY=pk_live_{pick(r, ALNUM, 24)}", f"NEXT_PUBLIC_STRIPE_KEY=pk_test_{pick(r, ALNUM, 24)}",
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{pick(r, B64, 43)} ray@head-node",
        f"SENTRY_DSN=https://{pick(r, HEX, 32)}@o{digits(r, 6)}.ingest.sentry.io/{digits(r, 7)}")),
    "job_ids": lambda r: (f"application_17334{digits(r, 8)}_{digits(r, 4)} on cluster {r.randint(1000, 1231)}-"
                          f"{digits(r, 6)}-{pick(r, LOWER_ALNUM, 8)}, run {digits(r, 9)}"),
    "model_names": lambda r: r.choice(("meta-llama/Llama-3.1-8B-Instruct", "mistralai/Mistral-7B-v0.3",
                                       "sentence-transformers/all-MiniLM-L6-v2", "Qwen/Qwen2.5-7B-Instruct")) +
    f" revision main, wandb run dataplat/sft/runs/{pick(r, LOWER_ALNUM, 8)}",
    "s3_path": lambda r: (f"s3://ml-datasets/events/dt=2024-12-{r.randint(1, 28):02d}/part-{digits(r, 5)}-"
                          f"{uid(r)}-c000.snappy.parquet"),
    "kafka_offset": lambda r: (f"topic=cdc.public.orders partition={r.randint(0, 11)} offset={digits(r, 9)} "
                               f"key=order-{digits(r, 5)}"),
    "metrics": lambda r: (f"epoch {r.randint(1, 5)} step {r.randint(1000, 200000)} loss={r.uniform(0, 2):.4f} "
                          f"lr=3.0e-04 tokens/s={r.uniform(1e4, 9e4):.1f} grad_norm={r.uniform(0, 3):.4f}"),
    "ean_barcode": lambda r: f"feature_store row: sku_ean={ean13(r)} price=12.99 stock={r.randint(0, 500)}",
}
"""Sort -> a near miss: ids, hashes, versions, amounts, invalid or masked numbers, placeholders, public keys."""


def generate_negatives() -> Iterator[tuple[str, str]]:
    """20 near misses of each sort; none should give a finding."""
    rng = random.Random(SEED + 1)
    for sort, make in NEGATIVES.items():
        for _ in range(20):
            yield sort, make(rng)
