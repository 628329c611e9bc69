"""A third redaction corpus, written fresh from the kinds' public formats by someone who had read neither the
rules (tracegym/redact/) nor the two earlier corpora (redact_corpus.py, redact_holdout.py), so that recall on it
is recall on values the rules were not tuned to. Never change a rule and this file in one commit, and never tune a
rule to a miss found here: from then on it would be one more corpus the rules were developed on.

Every value is random within its format, seeded (`generate(seed=0)` is the same list on every run), and valid
where its format has a check: Luhn for cards, ISO 7064 mod 97-10 for IBANs (and the national check digits of BE,
ES and FR), CRC32 for GitHub and npm tokens, an HMAC signature for JWTs, real key material for PEM blocks. Each
value is written into a carrier of its own (env file, YAML, JSON config, CLI call, log line, CSV under a header,
markdown table, XML, chat prose, ...), and that text is carried as a chat message or inside a JSON tool call,
tool result or metadata object. A case's `form` is `carrier/style`.

Sources, per kind:
- password: no format; the labels are the tools' own: libpq's PGPASSWORD (PostgreSQL docs, "Environment
  Variables"), the Docker official images' MYSQL_ROOT_PASSWORD / POSTGRES_PASSWORD / MONGO_INITDB_ROOT_PASSWORD,
  Spring Boot's spring.datasource.password (Common Application Properties), Kubernetes Secret `stringData`
  (kubernetes.io, "Secrets"), the Compose Specification's `environment`, Maven settings.xml, .NET appSettings.
- aws_access_key_id, aws_secret_key: AWS IAM User Guide, "IAM identifiers" (AKIA/ASIA prefixes, 20 characters)
  and "Manage access keys" (40-character secret); AWS CLI "Configuration and credential file settings" (the INI
  credentials file); the output of `aws iam create-access-key` and `aws sts assume-role`; the console's .csv.
- github_token: GitHub blog "Behind GitHub's new authentication token formats" (2021-04-05): ghp_/gho_/ghu_/
  ghs_/ghr_ + 30 base62 characters + a 6-character base62 CRC32; GitHub docs on fine-grained tokens (github_pat_).
- gitlab_token: GitLab docs "GitLab token overview", token prefixes (glpat-, gldt-, glrt-), 20 characters.
- slack_token: Slack API docs "Token types" (xoxb- bot, xoxp- user, xapp- app-level).
- stripe_key: Stripe docs "API keys" (sk_live_, rk_live_) and "Webhooks" (whsec_ signing secrets).
- openai_key: OpenAI platform docs, API keys (project keys sk-proj-, service accounts sk-svcacct-), as issued
  since 2024: 156 URL-safe characters around the T3BlbkFJ marker.
- anthropic_key: Anthropic API docs, authentication with x-api-key; keys sk-ant-api03- / sk-ant-admin01-.
- google_api_key: Google Cloud docs "Manage API keys" (AIza + 35 characters).
- twilio: Twilio docs "What is a SID?" (AC account and SK API key SIDs: 2 letters + 32 hex) and "Auth tokens".
- sendgrid_key: Twilio SendGrid docs "API Keys" (SG. + 22 + . + 43 characters).
- npm_token: npm docs "About access tokens"; GitHub blog 2021 on npm's token format (npm_ + 30 + CRC32).
- jwt: RFC 7519 (JWT), RFC 7515 (JWS compact serialisation), RFC 7518 (HS256/384/512).
- private_key: RFC 7468 (PEM textual encoding), RFC 8017 (PKCS #1 RSAPrivateKey), RFC 5915 (SEC 1 EC key),
  RFC 5958 + RFC 8410 (PKCS #8 Ed25519), OpenSSH PROTOCOL.key (openssh-key-v1).
- slack_webhook: Slack docs "Sending messages using incoming webhooks" and Workflow Builder webhook triggers.
- discord_webhook: Discord developer docs, Webhook resource ("Execute Webhook" URL; Snowflake ids).
- teams_webhook: Microsoft Learn "Create an Incoming Webhook" (webhook.office.com/webhookb2/...) and Power
  Automate workflow URLs (logic.azure.com ... &sig=).
- db_url: RFC 3986 (userinfo), PostgreSQL libpq "Connection URIs", MySQL Connector/J URL syntax, MongoDB
  "Connection Strings" (mongodb+srv), the IANA redis/rediss URI schemes, RabbitMQ "URI Specification", JDBC
  URLs, ADO.NET SqlConnection.ConnectionString.
- azure_key: Microsoft Learn "Configure Azure Storage connection strings" (AccountKey=, 64 bytes base64), Service
  Bus / Event Hubs / IoT Hub "Shared Access Signature" (SharedAccessKey=, 32 bytes), Cosmos DB connection strings.
- email: RFC 5322 addr-spec, RFC 6531 (internationalised local parts), RFC 5890-5891 and RFC 3492 (IDNA,
  Punycode), RFC 6068 (mailto:), RFC 3986 percent-encoding (%40), RFC 8259 \\u escapes (\\u0040).
- phone_*: ITU-T E.164 and each national plan: NANPA (NPA-NXX rules, US and Canadian area codes); Ofcom
  "National Telephone Numbering Plan" (UK); ARCEP "plan national de numérotation" (FR); BNetzA Nummernplan (DE);
  DoT "National Numbering Plan 2003" (IN); ACMA "Telecommunications Numbering Plan 2015" (AU); Anatel, DDD codes
  and the ninth mobile digit (BR); CNMC "Plan nacional de numeración telefónica" (ES); AGCOM "Piano di
  numerazione" (IT); MIC Japan, telephone number allocation (JP); IFT "Plan Técnico Fundamental de Numeración",
  10-digit numbers since 2019 (MX).
- ssn: SSA "Social Security Number Randomization" (2011): area 001-899 but 666, group 01-99, serial 0001-9999.
- card: ISO/IEC 7812-1 (Luhn check digit) and the networks' published IIN ranges: Visa 4; Mastercard 51-55 and
  2221-2720; Amex 34, 37; Discover 6011, 644-649, 65; JCB 3528-3589; Maestro 5018, 5020, 5038, 5893, 6304, 6759,
  6761-6763; UnionPay 62.
- iban: ISO 13616-1 and the SWIFT IBAN Registry (length and BBAN structure per country), ISO 7064 mod 97-10.
- disguised: Unicode UAX #9 (bidi marks and embeddings), UAX #15 (NFKC folds full-width forms U+FF01-FF5E),
  U+00AD soft hyphen, zero-width U+200B-U+200D, U+2060, U+FEFF; the values are this corpus's own.

Near misses (`generate_negatives`): cards failing Luhn, IBANs failing mod 97, invalid SSNs, versions, order ids,
UUIDs, git SHAs, digests, timestamps, numbers shaped like phones with no phone context, placeholders and
references where a secret would be (YOUR_API_KEY, ${DB_PASSWORD}), e-mail-shaped non-addresses, cloud ids.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.corpus_formats import (
    B62,
    b64url,
    crc_b62,
    der_int,
    der_len,
    der_seq,
    digits,
    group_card,
    iban_check,
    iban_ok,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

Rng = random.Random

B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
UPPER_ALNUM = string.ascii_uppercase + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class Case:
    """One planted value: `text` (its carrier's text) holds `secret` as written; `carried` is what the redactor
    sees (the text itself, or a JSON document holding it); `form` is `carrier/style`."""

    kind: str
    text: str
    secret: str
    carrier: str
    carried: str
    form: str

    @property
    def is_json(self) -> bool:
        return self.carrier != "message"


Made = tuple[str, str, str]  # (text, secret, form)


def nz(rng: Rng, n: int, first: str = "23456789") -> str:
    """n digits whose first is one of `first` (subscriber numbers do not start with 0 or 1)."""
    return rng.choice(first) + digits(rng, n - 1)


def uuid4(rng: Rng) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


FIRST = ["amelia", "lukas", "chloe", "arjun", "sofia", "mateo", "hana", "oliver", "priya", "jonas", "camille",
         "diego", "yuki", "liam", "fatima", "noah", "giulia", "rafael", "mei", "ethan", "ines", "kwame", "zoe",
         "tomasz", "aisha", "hugo", "valentina", "ravi", "emma", "kenji", "lucia", "samuel"]
LAST = ["okafor", "schneider", "dubois", "patel", "rossi", "garcia", "tanaka", "smith", "nguyen", "kowalski",
        "silva", "murphy", "haddad", "jansen", "lefevre", "moreno", "suzuki", "brown", "fischer", "costa",
        "iyer", "lindqvist", "oconnor", "mensah", "ferrari", "alvarez", "wagner", "martin", "kaur", "sato"]
WORDS = ["northwind", "bluepeak", "corvid", "harbor", "lumen", "tessera", "quill", "ridge", "orbit", "fjord",
         "cobalt", "meridian", "saffron", "atlas", "kestrel", "juniper", "basalt", "verdant", "halcyon", "ember",
         "tandem", "pylon", "nimbus", "sable", "vantage", "alder", "brightwave", "copperleaf", "driftwood"]
TLDS = ["com", "io", "co.uk", "de", "fr", "com.br", "in", "com.au", "es", "it", "co.jp", "com.mx", "net", "org",
        "dev", "app", "ca", "nl"]
FREEMAIL = ["gmail.com", "outlook.com", "yahoo.co.jp", "web.de", "gmx.de", "orange.fr", "libero.it", "uol.com.br",
            "hotmail.es", "rediffmail.com", "bigpond.com", "proton.me", "icloud.com", "yahoo.com.mx", "laposte.net"]
LOG_LEVELS = ["INFO", "WARN", "DEBUG", "ERROR"]
SERVICES = ["billing-api", "auth-svc", "checkout", "notifier", "crm-sync", "support-bot", "ledger", "ingest-worker"]


def person(rng: Rng) -> tuple[str, str]:
    return rng.choice(FIRST), rng.choice(LAST)


def full_name(rng: Rng) -> str:
    first, last = person(rng)
    return f"{first.title()} {last.title()}"


def domain(rng: Rng) -> str:
    a, b = rng.sample(WORDS, 2)
    return rng.choice([f"{a}.{rng.choice(TLDS)}", f"{a}-{b}.{rng.choice(TLDS)}", f"{a}{b}.{rng.choice(TLDS)}"])


def stamp(rng: Rng) -> str:
    return (f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z")


def log_line(rng: Rng, body: str) -> str:
    return f"{stamp(rng)} {rng.choice(LOG_LEVELS)} [{rng.choice(SERVICES)}] {body}"


def md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def csv_rows(header: list[str], rows: list[list[str]]) -> str:
    def cell(v: str) -> str:
        return f'"{v}"' if any(c in v for c in ',"\n') else v
    return "\n".join([",".join(header)] + [",".join(cell(v) for v in row) for row in rows])


def yaml_scalar(v: str) -> str:
    """A YAML plain scalar where one is allowed, else single-quoted (YAML 1.2, 7.3.3)."""
    special = v[0] in "!&*@`'\"%|>?:-[]{}#,~=" or ": " in v or " #" in v or v in ("yes", "no", "true", "false")
    return f"'{v}'" if special or v.isdigit() else v


def shell_quote(v: str) -> str:
    return v if all(c in string.ascii_letters + string.digits + "-_./:=@+%" for c in v) else f"'{v}'"


# ---- key material (real keys, seeded) ---------------------------------------------------------------------

SMALL_PRIMES = math.prod(n for n in range(3, 2000, 2) if all(n % k for k in range(3, int(n**0.5) + 1, 2)))


def probable_prime(rng: Rng, bits: int) -> int:
    while True:
        n = rng.getrandbits(bits) | (3 << (bits - 2)) | 1
        if math.gcd(n, SMALL_PRIMES) != 1:
            continue
        d, s = n - 1, 0
        while d % 2 == 0:
            d, s = d // 2, s + 1
        for _ in range(8):
            x = pow(rng.randrange(2, n - 2), d, n)
            if x in (1, n - 1):
                continue
            for _ in range(s - 1):
                x = x * x % n
                if x == n - 1:
                    break
            else:
                break
        else:
            return n


def rsa_der(rng: Rng, bits: int) -> bytes:
    """A PKCS #1 RSAPrivateKey (RFC 8017, A.1.2) with e = 65537."""
    e = 65537
    while True:
        p, q = probable_prime(rng, bits // 2), probable_prime(rng, bits // 2)
        phi = (p - 1) * (q - 1)
        if p != q and phi % e and (p - 1) % e and (q - 1) % e:
            break
    d = pow(e, -1, phi)
    return der_seq(*(der_int(v) for v in (0, p * q, e, d, p, q, d % (p - 1), d % (q - 1), pow(q, -1, p))))


P256 = (2**256 - 2**224 + 2**192 + 2**96 - 1,
        0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
        0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
        0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551)


def p256_mul(k: int) -> tuple[int, int]:
    p, gx, gy, _n = P256
    result: tuple[int, int] | None = None
    point = (gx, gy)

    def add(a: tuple[int, int] | None, b: tuple[int, int]) -> tuple[int, int] | None:
        if a is None:
            return b
        if a[0] == b[0] and (a[1] + b[1]) % p == 0:
            return None
        if a == b:
            lam = (3 * a[0] * a[0] - 3) * pow(2 * a[1], -1, p) % p
        else:
            lam = (b[1] - a[1]) * pow(b[0] - a[0], -1, p) % p
        x = (lam * lam - a[0] - b[0]) % p
        return x, (lam * (a[0] - x) - a[1]) % p

    while k:
        if k & 1:
            result = add(result, point)
        doubled = add(point, point)
        assert doubled is not None
        point = doubled
        k >>= 1
    assert result is not None
    return result


def ec_der(rng: Rng) -> bytes:
    """A SEC 1 ECPrivateKey on P-256 with its public key (RFC 5915)."""
    k = rng.randrange(1, P256[3])
    x, y = p256_mul(k)
    public = b"\x04" + x.to_bytes(32, "big") + y.to_bytes(32, "big")
    curve = bytes.fromhex("a00a06082a8648ce3d030107a144034200")
    return bytes.fromhex("30770201010420") + k.to_bytes(32, "big") + curve + public


def ed25519_public(seed: bytes) -> bytes:
    """RFC 8032 5.1.5: the public key of a 32-byte Ed25519 seed."""
    p = 2**255 - 19
    d = -121665 * pow(121666, -1, p) % p
    h = hashlib.sha512(seed).digest()
    a = (int.from_bytes(h[:32], "little") & ((1 << 254) - 8)) | (1 << 254)
    by = 4 * pow(5, -1, p) % p
    x2 = (by * by - 1) * pow(d * by * by + 1, -1, p) % p
    bx = pow(x2, (p + 3) // 8, p)
    if (bx * bx - x2) % p:
        bx = bx * pow(2, (p - 1) // 4, p) % p
    if bx & 1:
        bx = p - bx

    def add(a_: tuple[int, int, int, int], b_: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
        x1, y1, z1, t1 = a_
        x2_, y2, z2, t2 = b_
        aa, bb = (y1 - x1) * (y2 - x2_) % p, (y1 + x1) * (y2 + x2_) % p
        cc, dd = 2 * t1 * t2 * d % p, 2 * z1 * z2 % p
        e, f, g, hh = bb - aa, dd - cc, dd + cc, bb + aa
        return e * f % p, g * hh % p, f * g % p, e * hh % p

    q, point = (0, 1, 1, 0), (bx, by, 1, bx * by % p)
    while a:
        if a & 1:
            q = add(q, point)
        point = add(point, point)
        a >>= 1
    zinv = pow(q[2], -1, p)
    x, y = q[0] * zinv % p, q[1] * zinv % p
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


def openssh_ed25519(rng: Rng, comment: str) -> bytes:
    """An unencrypted openssh-key-v1 blob (OpenSSH PROTOCOL.key) holding an Ed25519 key."""
    seed = rng.randbytes(32)
    return openssh_ed25519_blob(seed, ed25519_public(seed), rng.randbytes(4), comment.encode())


def pem(label: str, der: bytes, width: int = 64) -> tuple[str, str]:
    """The PEM block (RFC 7468) and its base64 body, the part that must not survive."""
    b64 = base64.b64encode(der).decode()
    body = "\n".join(b64[i:i + width] for i in range(0, len(b64), width))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----", body


# ---- passwords ----------------------------------------------------------------------------------------------

PW_SYMBOLS = "!#$%*+-.=?@^_~"
PW_WORDS = ["marigold", "tundra", "copper", "lantern", "walrus", "cascade", "orchid", "granite", "pepper", "violet",
            "harvest", "falcon", "biscuit", "meadow", "thunder", "sparrow", "nebula", "cactus", "velvet", "oyster"]
ENV_PW = ["DB_PASSWORD", "PGPASSWORD", "MYSQL_ROOT_PASSWORD", "MYSQL_PASSWORD", "POSTGRES_PASSWORD", "REDIS_PASS",
          "REDIS_PASSWORD", "SMTP_PASSWD", "ADMIN_PWD", "LDAP_BIND_PW", "RABBITMQ_DEFAULT_PASS", "KEYSTORE_PASSPHRASE",
          "MONGO_INITDB_ROOT_PASSWORD", "SA_PASSWORD", "ELASTIC_PASSWORD", "GF_SECURITY_ADMIN_PASSWORD",
          "MINIO_ROOT_PASSWORD", "APP_DB_PASS", "MAIL_PASSWORD", "KC_DB_PASSWORD"]
CAMEL_PW = ["dbPassword", "userPassword", "adminPass", "smtpPassword", "passwd", "newPassword", "currentPassword",
            "mailPassword", "keystorePass", "rootPwd", "bindPassword", "proxyPassword", "password", "db_password"]
PROPS_PW = ["spring.datasource.password", "spring.mail.password", "db.pass", "javax.net.ssl.keyStorePassword",
            "hibernate.connection.password", "quarkus.datasource.password", "ldap.password", "jdbc.password"]
FOREIGN_PW = [("de", "Mein Passwort ist {v}"), ("de", "Das Kennwort lautet {v}"), ("fr", "Le mot de passe est : {v}"),
              ("fr", "mdp : {v}"), ("es", "La contraseña es {v}"), ("es", "clave de acceso: {v}"),
              ("pt", "Minha senha é {v}"), ("it", "la password è {v}"), ("nl", "Het wachtwoord is {v}"),
              ("pl", "Hasło: {v}"), ("ru", "Пароль: {v}"), ("ja", "パスワード：{v}"), ("zh", "密码：{v}"),
              ("sv", "Lösenordet är {v}"), ("tr", "Şifre: {v}"), ("fi", "Salasana on {v}"), ("cs", "Heslo je {v}")]
FOREIGN_KEYS = ["passwort", "kennwort", "mot_de_passe", "contrasena", "senha", "wachtwoord", "haslo", "parol",
                "salasana", "sifre", "losenord", "heslo"]


def password_value(rng: Rng) -> tuple[str, str]:
    style = rng.choice(["random", "random", "passphrase", "human"])
    if style == "random":
        core = [rng.choice(string.ascii_lowercase), rng.choice(string.ascii_uppercase), rng.choice(string.digits),
                rng.choice(PW_SYMBOLS)]
        core += [rng.choice(string.ascii_letters + string.digits + PW_SYMBOLS) for _ in range(rng.randint(8, 20))]
        rng.shuffle(core)
        return "".join(core), style
    if style == "passphrase":
        sep = rng.choice("-_.")
        return sep.join(rng.sample(PW_WORDS, rng.randint(3, 4))) + sep + digits(rng, 2), style
    return rng.choice(PW_WORDS).title() + str(rng.randint(1970, 2025)) + rng.choice(PW_SYMBOLS), style


def password(rng: Rng, i: int) -> Made:
    v, style = password_value(rng)
    env, camel, prop = rng.choice(ENV_PW), rng.choice(CAMEL_PW), rng.choice(PROPS_PW)
    host, user = domain(rng), rng.choice(FIRST)
    carriers: list[tuple[str, str]] = [
        ("env", f"APP_ENV=production\n{env}={v}\nDB_HOST=db.{host}\n"),
        ("env_export", f'export {env}="{v}"\n'),
        ("yaml", f"database:\n  host: db.{host}\n  user: {user}\n  {camel}: {yaml_scalar(v)}\n  pool: 10\n"),
        ("json", json.dumps({"db": {"host": f"db.{host}", "user": user, camel: v, "port": 5432}}, indent=2)),
        ("cli", rng.choice([f"mysqladmin -u root --password={shell_quote(v)} status",
                            f"./manage.py createsuperuser --username {user} --password {shell_quote(v)}",
                            f"PGPASSWORD={shell_quote(v)} psql -h db.{host} -U {user} -c 'select 1'",
                            f"sshpass -p {shell_quote(v)} ssh deploy@build.{host}",
                            f"curl -u {user}:{shell_quote(v)} https://ci.{host}/api/json",
                            f"keytool -list -keystore app.jks -storepass {shell_quote(v)}"])),
        ("xml", rng.choice([f"<server>\n  <id>nexus</id>\n  <username>{user}</username>\n"
                            f"  <password>{v}</password>\n</server>",
                            f'<appSettings>\n  <add key="DbPassword" value="{v}" />\n</appSettings>',
                            f'<datasource user="{user}" password="{v}" url="jdbc:h2:mem:test"/>'])),
        ("properties", f"{prop.rsplit('.', 1)[0]}.username={user}\n{prop}={v}\n"),
        ("compose", rng.choice([
            f"services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_USER: {user}\n"
            f"      {env}: {yaml_scalar(v)}\n",
            f"services:\n  db:\n    image: mysql:8.4\n    environment:\n      - MYSQL_DATABASE=app\n"
            f"      - {env}={v}\n"])),
        ("k8s_secret", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {rng.choice(WORDS)}-db\ntype: Opaque\n"
                       f"stringData:\n  username: {user}\n  {rng.choice(['password', 'db-password', env])}: "
                       f"{yaml_scalar(v)}\n"),
        ("chat_foreign", rng.choice(FOREIGN_PW)[1].format(v=v)),
        ("config_foreign", f"[{rng.choice(['datenbank', 'base', 'servidor', 'conta'])}]\n"
                           f"{rng.choice(FOREIGN_KEYS)} = {v}\n"),
        ("chat", rng.choice([f"the password for the staging box is {v}, please rotate after the demo",
                             f"Password: {v}", f"pwd for {user} reset to {v}",
                             f"new passcode: {v} (expires in 24h)"])),
        ("log", log_line(rng, f"login failed user={user} pass={v} reason=locked")),
        ("ini", f"[database]\nhost = db.{host}\nuser = {user}\npassword = {v}\n"),
    ]
    name, text = carriers[i % len(carriers)]
    return text, v, f"{name}/{style}"


# ---- AWS ----------------------------------------------------------------------------------------------------

B32 = string.ascii_uppercase + "234567"
REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "ap-northeast-1", "sa-east-1"]


def aws_pair(rng: Rng) -> tuple[str, str, str]:
    prefix = rng.choice(["AKIA", "AKIA", "AKIA", "ASIA"])
    return prefix + pick(rng, B32, 16), pick(rng, B64, 40), prefix.lower()


def aws_text(rng: Rng, i: int, key_id: str, secret: str) -> tuple[str, str]:
    user, region = rng.choice(FIRST), rng.choice(REGIONS)
    session = base64.b64encode(rng.randbytes(rng.randint(200, 300))).decode()
    carriers = [
        ("credentials_ini", f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\n\n"
                            f"[{rng.choice(['prod', 'staging', 'ci'])}]\nregion = {region}\n"),
        ("env", f"export AWS_ACCESS_KEY_ID={key_id}\nexport AWS_SECRET_ACCESS_KEY={secret}\n"
                f"export AWS_DEFAULT_REGION={region}\n"),
        ("json_create_key", json.dumps({"AccessKey": {"UserName": user, "AccessKeyId": key_id, "Status": "Active",
                                                      "SecretAccessKey": secret,
                                                      "CreateDate": stamp(rng)}}, indent=4)),
        ("json_sts", json.dumps({"Credentials": {"AccessKeyId": key_id, "SecretAccessKey": secret,
                                                 "SessionToken": session, "Expiration": stamp(rng)}}, indent=2)),
        ("cli", rng.choice([f"aws configure set aws_access_key_id {key_id} && aws configure set "
                            f"aws_secret_access_key {secret} --profile {user}",
                            f"docker run -e AWS_ACCESS_KEY_ID={key_id} -e AWS_SECRET_ACCESS_KEY={secret} "
                            f"amazon/aws-cli s3 ls"])),
        ("csv_console", csv_rows(["Access key ID", "Secret access key"], [[key_id, secret]])),
        ("md_table", md_table(["User", "Access key ID", "Secret access key", "Created"],
                              [[user, key_id, secret, stamp(rng)[:10]]])),
        ("terraform", f'provider "aws" {{\n  region     = "{region}"\n  access_key = "{key_id}"\n'
                      f'  secret_key = "{secret}"\n}}\n'),
        ("python", f'client = boto3.client("s3", region_name="{region}", aws_access_key_id="{key_id}",\n'
                   f'                      aws_secret_access_key="{secret}")'),
        ("chat_unlabelled", rng.choice([f"here are the keys for the sandbox account: {key_id} {secret}",
                                        f"{key_id}:{secret}", f"creds -> {key_id} / {secret}"])),
    ]
    return carriers[i % len(carriers)]


def aws_access_key_id(rng: Rng, i: int) -> Made:
    key_id, secret, style = aws_pair(rng)
    name, text = aws_text(rng, i, key_id, secret)
    return text, key_id, f"{name}/{style}"


def aws_secret_key(rng: Rng, i: int) -> Made:
    key_id, secret, _ = aws_pair(rng)
    style = "slash" if "/" in secret else "plus" if "+" in secret else "alnum"
    name, text = aws_text(rng, i, key_id, secret)
    return text, secret, f"{name}/{style}"


# ---- provider keys ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Provider:
    """How a provider's key is named and sent: environment names, JSON keys, the HTTP header and CLI calls."""

    env: tuple[str, ...]
    keys: tuple[str, ...]
    header: str
    cli: tuple[str, ...]


def key_text(rng: Rng, i: int, v: str, spec: Provider) -> tuple[str, str]:
    env, key, host = rng.choice(spec.env), rng.choice(spec.keys), domain(rng)
    carriers = [
        ("env", f"# {rng.choice(SERVICES)}\n{env}={v}\nLOG_LEVEL=info\n"),
        ("json", json.dumps({"service": rng.choice(SERVICES), "credentials": {key: v}, "timeout_s": 30}, indent=2)),
        ("header", f"GET /v1/{rng.choice(['me', 'items', 'events'])} HTTP/1.1\nHost: api.{host}\n"
                   + spec.header.format(v=v) + "\nAccept: application/json\n"),
        ("cli", rng.choice(spec.cli).format(v=v, host=host, org=rng.choice(WORDS), repo=rng.choice(WORDS))),
        ("yaml", f"{rng.choice(['integrations', 'secrets', 'providers'])}:\n  {key}: {yaml_scalar(v)}\n"
                 f"  retries: 3\n"),
        ("log", log_line(rng, rng.choice([f"outgoing request headers={{'{spec.header.split(':')[0]}': "
                                          f"'{spec.header.split(': ', 1)[1].format(v=v)}'}}",
                                          f"loaded {env}={v} from environment"]))),
        ("chat", rng.choice([f"I pasted my key by mistake: {v} — can you check why it returns 401?",
                             f"use this one for now {v}", f"{key}: {v}"])),
        ("python", f'{env.lower()} = "{v}"  # TODO move to vault\n'),
    ]
    return carriers[i % len(carriers)]


GITHUB = Provider(("GITHUB_TOKEN", "GH_TOKEN", "GH_PAT", "GITHUB_PAT"), ("token", "github_token", "accessToken"),
                  "Authorization: token {v}",
                  ("git clone https://{v}@github.com/{org}/{repo}.git", "echo {v} | gh auth login --with-token",
                   "curl -H 'Authorization: Bearer {v}' https://api.github.com/user"))
GITLAB = Provider(("GITLAB_TOKEN", "GL_TOKEN", "GITLAB_PRIVATE_TOKEN", "CI_REGISTRATION_TOKEN"),
                  ("private_token", "gitlab_token", "token"), "PRIVATE-TOKEN: {v}",
                  ("git clone https://oauth2:{v}@gitlab.com/{org}/{repo}.git",
                   "curl --header \"PRIVATE-TOKEN: {v}\" https://gitlab.{host}/api/v4/projects",
                   "gitlab-runner register --url https://gitlab.{host} --token {v}"))
SLACK = Provider(("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_USER_TOKEN", "SLACK_TOKEN"),
                 ("bot_token", "slackToken", "token"), "Authorization: Bearer {v}",
                 ("curl -d token={v} -d channel=C0{org} https://slack.com/api/chat.postMessage",
                  "curl -H 'Authorization: Bearer {v}' https://slack.com/api/auth.test"))
STRIPE = Provider(("STRIPE_SECRET_KEY", "STRIPE_API_KEY", "STRIPE_WEBHOOK_SECRET", "STRIPE_RESTRICTED_KEY"),
                  ("secret_key", "stripeKey", "signing_secret"), "Authorization: Bearer {v}",
                  ("curl https://api.stripe.com/v1/charges -u {v}:", "stripe listen --api-key {v}",
                   "stripe trigger payment_intent.succeeded --api-key {v}"))
OPENAI = Provider(("OPENAI_API_KEY", "OPENAI_KEY", "LLM_API_KEY"), ("api_key", "openaiApiKey", "openai_key"),
                  "Authorization: Bearer {v}",
                  ("curl https://api.openai.com/v1/models -H \"Authorization: Bearer {v}\"",
                   "OPENAI_API_KEY={v} python eval.py --model gpt-4o-mini"))
ANTHROPIC = Provider(("ANTHROPIC_API_KEY", "CLAUDE_API_KEY"), ("api_key", "anthropicKey", "x-api-key"),
                     "x-api-key: {v}",
                     ("curl https://api.anthropic.com/v1/messages -H \"x-api-key: {v}\" "
                      "-H \"anthropic-version: 2023-06-01\"", "ANTHROPIC_API_KEY={v} npm run agent"))
GOOGLE = Provider(("GOOGLE_API_KEY", "GEMINI_API_KEY", "MAPS_API_KEY", "FIREBASE_API_KEY"),
                  ("apiKey", "google_api_key", "key"), "x-goog-api-key: {v}",
                  ("curl 'https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={v}'",
                   "curl -H 'x-goog-api-key: {v}' https://generativelanguage.googleapis.com/v1beta/models"))
SENDGRID = Provider(("SENDGRID_API_KEY", "SMTP_API_KEY", "MAIL_API_KEY"), ("sendgrid_key", "apiKey"),
                    "Authorization: Bearer {v}",
                    ("curl --request POST --url https://api.sendgrid.com/v3/mail/send "
                     "--header 'Authorization: Bearer {v}'",))
NPM = Provider(("NPM_TOKEN", "NODE_AUTH_TOKEN", "NPM_AUTH_TOKEN"), ("npmToken", "_authToken", "token"),
               "Authorization: Bearer {v}",
               ("npm config set //registry.npmjs.org/:_authToken {v}",
                "echo \"//registry.npmjs.org/:_authToken={v}\" > ~/.npmrc"))
JWT_SPEC = Provider(("ACCESS_TOKEN", "AUTH_TOKEN", "JWT"), ("access_token", "id_token", "jwt"),
                    "Authorization: Bearer {v}",
                    ("curl -H 'Authorization: Bearer {v}' https://api.{host}/v2/orders",
                     "wscat -c 'wss://rt.{host}/socket?token={v}'", "http GET api.{host}/me 'Cookie: session={v}'"))


def github_token(rng: Rng, i: int) -> Made:
    prefix = rng.choice(["ghp_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"])
    if prefix == "github_pat_":
        v = prefix + "11" + pick(rng, UPPER_ALNUM, 20) + "_" + pick(rng, B62, 59)
    else:
        body = pick(rng, B62, 30)
        v = prefix + body + crc_b62(body)
    name, text = key_text(rng, i, v, GITHUB)
    return text, v, f"{name}/{prefix.rstrip('_')}"


def gitlab_token(rng: Rng, i: int) -> Made:
    prefix = rng.choice(["glpat-", "glpat-", "gldt-", "glrt-"])
    v = prefix + pick(rng, B62 + "_-", 20)
    name, text = key_text(rng, i, v, GITLAB)
    return text, v, f"{name}/{prefix.rstrip('-')}"


def slack_token(rng: Rng, i: int) -> Made:
    style = rng.choice(["xoxb", "xoxp", "xapp"])
    team, user = nz(rng, rng.randint(10, 13), "123456789"), nz(rng, rng.randint(10, 13), "123456789")
    if style == "xoxb":
        v = f"xoxb-{team}-{user}-{pick(rng, B62, 24)}"
    elif style == "xoxp":
        v = f"xoxp-{team}-{user}-{nz(rng, 13, '123456789')}-{pick(rng, HEX, 32)}"
    else:
        v = f"xapp-1-A{pick(rng, UPPER_ALNUM, 10)}-{nz(rng, 13, '123456789')}-{pick(rng, HEX, 64)}"
    name, text = key_text(rng, i, v, SLACK)
    return text, v, f"{name}/{style}"


def stripe_key(rng: Rng, i: int) -> Made:
    style = rng.choice(["sk_live", "sk_live_long", "rk_live", "whsec"])
    if style == "whsec":
        v = "whsec_" + pick(rng, B62, 32)
    elif style == "sk_live_long":
        v = "sk_live_51" + pick(rng, B62, 97)
    else:
        v = f"{style}_" + pick(rng, B62, rng.choice([24, 99]))
    name, text = key_text(rng, i, v, STRIPE)
    return text, v, f"{name}/{style}"


def openai_key(rng: Rng, i: int) -> Made:
    style = rng.choice(["proj", "proj", "svcacct"])
    v = f"sk-{style}-" + pick(rng, B64URL, 74) + "T3BlbkFJ" + pick(rng, B64URL, 74)
    name, text = key_text(rng, i, v, OPENAI)
    if name == "log" and i % 2:
        text = (f"openai.AuthenticationError: Error code: 401 - {{'error': {{'message': 'Incorrect API key "
                f"provided: {v}. You can find your API key at https://platform.openai.com/account/api-keys.'}}}}")
        name = "stack_trace"
    return text, v, f"{name}/{style}"


def anthropic_key(rng: Rng, i: int) -> Made:
    style = rng.choice(["api03", "api03", "admin01"])
    v = f"sk-ant-{style}-" + pick(rng, B64URL, 93) + "AA"
    name, text = key_text(rng, i, v, ANTHROPIC)
    return text, v, f"{name}/{style}"


def google_api_key(rng: Rng, i: int) -> Made:
    v = "AIza" + pick(rng, B64URL, 35)
    name, text = key_text(rng, i, v, GOOGLE)
    if name == "json" and i % 2:
        text = json.dumps({"client": [{"api_key": [{"current_key": v}],
                                       "client_info": {"mobilesdk_app_id": f"1:{digits(rng, 12)}:android:"
                                                                            f"{pick(rng, HEX, 16)}"}}]}, indent=2)
        name = "google_services_json"
    return text, v, f"{name}/aiza"


def sendgrid_key(rng: Rng, i: int) -> Made:
    v = "SG." + pick(rng, B64URL, 22) + "." + pick(rng, B64URL, 43)
    name, text = key_text(rng, i, v, SENDGRID)
    return text, v, f"{name}/sg"


def npm_token(rng: Rng, i: int) -> Made:
    body = pick(rng, B62, 30)
    v = "npm_" + body + crc_b62(body)
    name, text = key_text(rng, i, v, NPM)
    if name == "yaml" and i % 2:
        text = f"//registry.npmjs.org/:_authToken={v}\n@{rng.choice(WORDS)}:registry=https://npm.pkg.github.com\n"
        name = "npmrc"
    return text, v, f"{name}/npm"


def jwt_value(rng: Rng) -> tuple[str, str]:
    alg = rng.choice(["HS256", "HS384", "HS512"])
    now = 1_700_000_000 + rng.randint(0, 40_000_000)
    claims: dict[str, object] = {"sub": rng.choice([uuid4(rng), str(rng.randint(1000, 99_999_999))]), "iat": now,
                                 "exp": now + rng.choice([900, 3600, 86400]), "iss": f"https://auth.{domain(rng)}/"}
    if rng.random() < 0.5:
        claims["scope"] = rng.choice(["read:orders write:orders", "openid profile email", "admin"])
    if rng.random() < 0.4:
        claims["email"] = f"{rng.choice(FIRST)}@{domain(rng)}"
    head = b64url(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode())
    body = b64url(json.dumps(claims, separators=(",", ":")).encode())
    digest = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}[alg]
    sig = b64url(hmac.new(rng.randbytes(32), f"{head}.{body}".encode(), digest).digest())
    return f"{head}.{body}.{sig}", alg.lower()


def jwt(rng: Rng, i: int) -> Made:
    v, style = jwt_value(rng)
    name, text = key_text(rng, i, v, JWT_SPEC)
    if name == "json" and i % 2:
        text = json.dumps({"access_token": v, "token_type": "Bearer", "expires_in": 3600}, indent=2)
        name = "oauth_response"
    return text, v, f"{name}/{style}"


def twilio(rng: Rng, i: int) -> Made:
    sid, key_sid = "AC" + pick(rng, HEX, 32), "SK" + pick(rng, HEX, 32)
    token, key_secret = pick(rng, HEX, 32), pick(rng, B62, 32)
    style = ["auth_token", "auth_token", "account_sid", "api_key_sid", "api_key_secret"][i % 5]
    secret = {"auth_token": token, "account_sid": sid, "api_key_sid": key_sid, "api_key_secret": key_secret}[style]
    user, pw = (key_sid, key_secret) if style.startswith("api_key") else (sid, token)
    user_name = "TWILIO_API_KEY" if style.startswith("api_key") else "TWILIO_ACCOUNT_SID"
    pw_name = "TWILIO_API_SECRET" if style.startswith("api_key") else "TWILIO_AUTH_TOKEN"
    carriers = [
        ("env", f"{user_name}={user}\n{pw_name}={pw}\nTWILIO_FROM=+1{rng.choice(US_AREAS)}{nz(rng, 7)}\n"),
        ("python", f"from twilio.rest import Client\nclient = Client(\"{user}\", \"{pw}\")"),
        ("cli", f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json "
                f"-u {user}:{pw} --data-urlencode 'Body=test'"),
        ("json", json.dumps({"twilio": {"accountSid": sid, "apiKey": key_sid, "apiSecret": key_secret,
                                        "authToken": token}}, indent=2)),
        ("yaml", f"twilio:\n  account_sid: {sid}\n  auth_token: {token}\n  api_key: {key_sid}\n"
                 f"  api_secret: {key_secret}\n"),
        ("properties", f"twilio.account-sid={sid}\ntwilio.auth-token={token}\ntwilio.api-key={key_sid}\n"
                       f"twilio.api-secret={key_secret}\n"),
        ("chat", f"Twilio creds for the SMS fallback: SID {user} token {pw}"),
    ]
    name, text = carriers[i % len(carriers)]
    return text, secret, f"{name}/{style}"


def private_key(rng: Rng, i: int) -> Made:
    style = ["rsa_pkcs1", "rsa_pkcs8", "ec_sec1", "ed25519_pkcs8", "openssh_ed25519"][i % 5]
    if style == "rsa_pkcs1":
        block, body = pem("RSA PRIVATE KEY", rsa_der(rng, 1024))
    elif style == "rsa_pkcs8":
        rsa_oid = der_seq(bytes.fromhex("06092a864886f70d010101"), b"\x05\x00")
        inner = rsa_der(rng, 1024)
        block, body = pem("PRIVATE KEY", der_seq(der_int(0), rsa_oid, b"\x04" + der_len(len(inner)) + inner))
    elif style == "ec_sec1":
        block, body = pem("EC PRIVATE KEY", ec_der(rng))
    elif style == "ed25519_pkcs8":
        block, body = pem("PRIVATE KEY", bytes.fromhex("302e020100300506032b657004220420") + rng.randbytes(32))
    else:
        block, body = pem("OPENSSH PRIVATE KEY", openssh_ed25519(rng, f"{rng.choice(FIRST)}@{rng.choice(WORDS)}"), 70)
    project = f"{rng.choice(WORDS)}-{digits(rng, 6)}"
    indented = block.replace("\n", "\n    ")
    carriers = [
        ("file", f"$ cat ~/.ssh/id_{style.split('_')[0]}\n{block}\n"),
        ("service_account_json", json.dumps({"type": "service_account", "project_id": project,
                                             "private_key_id": pick(rng, HEX, 40), "private_key": block + "\n",
                                             "client_email": f"ci@{project}.iam.gserviceaccount.com"}, indent=2)),
        ("k8s_tls", f"apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\nstringData:\n  tls.key: |\n    "
                    f"{indented}\n"),
        ("env_quoted", f'JWT_SIGNING_KEY="{block}"\n'),
        ("chat", f"here's the deploy key, add it to the runner:\n```\n{block}\n```"),
        ("log", log_line(rng, f"loaded signing key from SECRET_KEY_PEM:\n{block}")),
    ]
    name, text = carriers[i % len(carriers)]
    written = {"service_account_json": json.dumps(body)[1:-1], "k8s_tls": body.replace("\n", "\n    ")}
    return text, written.get(name, body), f"{name}/{style}"


# ---- webhook URLs -------------------------------------------------------------------------------------------

def webhook_text(rng: Rng, i: int, url: str, env: str) -> tuple[str, str]:
    body = json.dumps({"text": rng.choice(["deploy finished", "disk 91% on db-2", "nightly eval: 3 regressions"])})
    carriers = [
        ("env", f"{env}={url}\n"),
        ("alertmanager_yaml", f"receivers:\n  - name: oncall\n    webhook_configs:\n      - url: '{url}'\n"
                              f"        send_resolved: true\n"),
        ("json", json.dumps({"notifications": {"channel": "#alerts", "webhook_url": url, "enabled": True}},
                            indent=2)),
        ("curl", f"curl -X POST -H 'Content-type: application/json' --data '{body}' {url}"),
        ("python", f'requests.post("{url}", json={body}, timeout=5)'),
        ("log", log_line(rng, f"POST {url} -> {rng.choice([200, 204, 429, 500])}")),
        ("chat", rng.choice([f"hook it up to {url} and it should post in #deploys",
                             f"Webhook: <{url}>", f"new incoming webhook {url}"])),
    ]
    return carriers[i % len(carriers)]


def slack_webhook(rng: Rng, i: int) -> Made:
    team = "T" + pick(rng, UPPER_ALNUM, rng.choice([8, 10]))
    if i % 6 == 5:
        secret = f"{team}/{nz(rng, 19, '123456789')}/{pick(rng, HEX, 32)}"
        url, style = f"https://hooks.slack.com/triggers/{secret}", "trigger"
    else:
        secret = f"{team}/B{pick(rng, UPPER_ALNUM, rng.choice([8, 10]))}/{pick(rng, B62, 24)}"
        url, style = f"https://hooks.slack.com/services/{secret}", "services"
    name, text = webhook_text(rng, i, url, "SLACK_WEBHOOK_URL")
    return text, secret, f"{name}/{style}"


def discord_webhook(rng: Rng, i: int) -> Made:
    snowflake = ((rng.randint(1_500_000_000_000, 1_730_000_000_000) - 1_420_070_400_000) << 22) | rng.getrandbits(22)
    secret = f"{snowflake}/{pick(rng, B64URL, 68)}"
    host = rng.choice(["discord.com", "discord.com", "discordapp.com", "ptb.discord.com", "canary.discord.com"])
    path = rng.choice(["api/webhooks", "api/webhooks", "api/v10/webhooks"])
    name, text = webhook_text(rng, i, f"https://{host}/{path}/{secret}", "DISCORD_WEBHOOK_URL")
    return text, secret, f"{name}/{host.split('.')[0]}"


def teams_webhook(rng: Rng, i: int) -> Made:
    style = rng.choice(["webhookb2", "webhookb2_v2", "logic_workflow"])
    if style == "logic_workflow":
        secret = b64url(rng.randbytes(32))
        url = (f"https://prod-{rng.randint(0, 99):02d}.{rng.choice(['westus', 'westeurope', 'northeurope'])}"
               f".logic.azure.com:443/workflows/{pick(rng, HEX, 32)}/triggers/manual/paths/invoke?api-version="
               f"2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={secret}")
    else:
        secret = f"{uuid4(rng)}@{uuid4(rng)}/IncomingWebhook/{pick(rng, HEX, 32)}/{uuid4(rng)}"
        if style == "webhookb2_v2":
            secret += "/V2" + pick(rng, B64URL, 43)
        url = f"https://{rng.choice(WORDS)}.webhook.office.com/webhookb2/{secret}"
    name, text = webhook_text(rng, i, url, "TEAMS_WEBHOOK_URL")
    return text, secret, f"{name}/{style}"


# ---- connection strings ---------------------------------------------------------------------------------------

def url_password(rng: Rng) -> str:
    """A password as it is written in a URL's userinfo: unreserved characters, now and then one percent-encoded."""
    chars = [rng.choice(string.ascii_letters + string.digits + "-._~") for _ in range(rng.randint(12, 28))]
    if rng.random() < 0.3:
        chars.insert(rng.randrange(len(chars)), rng.choice(["%40", "%21", "%23", "%2F", "%24"]))
    return "".join(chars)


def db_url(rng: Rng, i: int) -> Made:
    pw, user, host, db = url_password(rng), rng.choice(FIRST), domain(rng), rng.choice(["app", "orders", "crm"])
    rds = f"{rng.choice(WORDS)}.{pick(rng, LOWER_ALNUM, 12)}.{rng.choice(REGIONS)}.rds.amazonaws.com"
    style = ["postgres", "mysql", "mongodb_srv", "mongodb", "redis", "amqp", "jdbc", "adonet"][i % 8]
    url = {
        "postgres": f"{rng.choice(['postgres', 'postgresql'])}://{user}:{pw}@{rds}:5432/{db}?sslmode=require",
        "mysql": f"{rng.choice(['mysql', 'mysql+pymysql', 'mariadb'])}://{user}:{pw}@db.{host}:3306/{db}",
        "mongodb_srv": f"mongodb+srv://{user}:{pw}@cluster0.{pick(rng, LOWER_ALNUM, 5)}.mongodb.net/{db}"
                       f"?retryWrites=true&w=majority",
        "mongodb": f"mongodb://{user}:{pw}@mongo-0.{host}:27017,mongo-1.{host}:27017/{db}?replicaSet=rs0"
                   f"&authSource=admin",
        "redis": rng.choice([f"redis://:{pw}@cache.{host}:6379/0", f"rediss://default:{pw}@cache.{host}:6380"]),
        "amqp": f"amqps://{user}:{pw}@mq.{host}:5671/%2F",
        "jdbc": rng.choice([f"jdbc:postgresql://db.{host}:5432/{db}?user={user}&password={pw}",
                            f"jdbc:sqlserver://db.{host}:1433;databaseName={db};user={user};password={pw};"
                            f"encrypt=true"]),
        "adonet": f"Server=tcp:{rng.choice(WORDS)}.database.windows.net,1433;Initial Catalog={db};User ID={user};"
                  f"Password={pw};Encrypt=True;Connection Timeout=30;",
    }[style]
    carriers = [
        ("env", f"DATABASE_URL={url}\n" if style != "adonet" else f'ConnectionStrings__Default="{url}"\n'),
        ("yaml", f"production:\n  url: \"{url}\"\n  pool: 5\n"),
        ("json", json.dumps({"ConnectionStrings": {"Default": url}} if style == "adonet" else {"db": {"url": url}},
                            indent=2)),
        ("cli", rng.choice([f'psql "{url}" -c "\\dt"', f"mongosh '{url}'", f"redis-cli -u '{url}' ping",
                            f'dotnet ef database update --connection "{url}"'])),
        ("log", log_line(rng, f"could not connect to {url}: connection refused (retry 3/5)")),
        ("python", f'engine = create_engine("{url}", pool_pre_ping=True)'),
        ("compose", f"services:\n  api:\n    environment:\n      - DATABASE_URL={url}\n"),
        ("chat", f"staging db is {url} if you need to look at the rows"),
    ]
    name, text = carriers[(i // 8 + i) % len(carriers)]
    return text, pw, f"{name}/{style}"


def azure_key(rng: Rng, i: int) -> Made:
    style = ["storage", "service_bus", "event_hubs", "iot_hub", "cosmos"][i % 5]
    key = base64.b64encode(rng.randbytes(64 if style in ("storage", "cosmos") else 32)).decode()
    name_ = f"{rng.choice(WORDS)}{rng.choice(['prod', 'dev', 'data', ''])}{digits(rng, 2)}"
    conn = {
        "storage": f"DefaultEndpointsProtocol=https;AccountName={name_};AccountKey={key};"
                   f"EndpointSuffix=core.windows.net",
        "service_bus": f"Endpoint=sb://{name_}.servicebus.windows.net/;SharedAccessKeyName="
                       f"RootManageSharedAccessKey;SharedAccessKey={key}",
        "event_hubs": f"Endpoint=sb://{name_}.servicebus.windows.net/;SharedAccessKeyName=send;"
                      f"SharedAccessKey={key};EntityPath=telemetry",
        "iot_hub": f"HostName={name_}.azure-devices.net;SharedAccessKeyName=iothubowner;SharedAccessKey={key}",
        "cosmos": f"AccountEndpoint=https://{name_}.documents.azure.com:443/;AccountKey={key};",
    }[style]
    carriers = [
        ("env", f'AZURE_STORAGE_CONNECTION_STRING="{conn}"\n'),
        ("appsettings_json", json.dumps({"ConnectionStrings": {style: conn}, "Logging": {"LogLevel": "Warning"}},
                                        indent=2)),
        ("local_settings_json", json.dumps({"IsEncrypted": False, "Values": {"AzureWebJobsStorage": conn,
                                                                            "FUNCTIONS_WORKER_RUNTIME": "python"}})),
        ("cli", f'az storage blob upload --connection-string "{conn}" -c backups -f dump.sql'),
        ("yaml", f"azure:\n  {style}:\n    connection_string: \"{conn}\"\n"),
        ("log", log_line(rng, f"ServiceBusClient created from '{conn}'")),
        ("chat", f"connection string for the {style.replace('_', ' ')}: {conn}"),
    ]
    name, text = carriers[i % len(carriers)]
    return text, key, f"{name}/{style}"


# ---- e-mail addresses -----------------------------------------------------------------------------------------

IDN_LABELS = ["bücherwelt", "müller-bau", "café-lumière", "crème", "niño-feliz", "añejo", "zürich-reisen",
              "göteborg", "kraków-dev", "ørsted-energi", "東京商事", "例え", "中文网", "ελληνικά", "россия-тур"]
EAI_LOCAL = ["josé.garcía", "müller", "françois", "søren", "李雷", "θανάσης", "андрей", "ñoño", "björk.olsen"]


def email_parts(rng: Rng) -> tuple[str, str]:
    first, last = person(rng)
    local = rng.choice([f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}{rng.randint(1, 99)}",
                        f"{first}{last}+{rng.choice(['billing', 'news', 'support'])}", f"{last}.{first}",
                        f"{first}{rng.randint(1970, 2009)}"])
    return local, rng.choice([domain(rng), rng.choice(FREEMAIL)])


def email_text(rng: Rng, i: int, v: str) -> tuple[str, str]:
    name = full_name(rng)
    carriers = [
        ("chat", rng.choice([f"you can reach me at {v} if the ticket stalls", f"my email is {v}",
                             f"Please send the invoice to {v}."])),
        ("csv", csv_rows(["id", "name", "email", "plan"], [[str(rng.randint(1000, 99999)), name, v, "pro"]])),
        ("json", json.dumps({"customer": {"name": name, "email": v, "locale": "en"}}, ensure_ascii=False)),
        ("log", log_line(rng, f"password reset requested for {v} ip_country=DE")),
        ("header", f"From: {name} <{v}>\nTo: support@{domain(rng)}\nSubject: Re: order"),
        ("git", f"commit {pick(rng, HEX, 40)}\nAuthor: {name} <{v}>\nDate:   Tue Mar 5 10:14:22 2024 +0100"),
        ("mailto_md", f"[Contact {name.split()[0]}](mailto:{v}?subject=Refund)"),
        ("html", f'<p>Questions? <a href="mailto:{v}">{v}</a></p>'),
        ("md_table", md_table(["Name", "Email", "Role"], [[name, v, "admin"]])),
    ]
    return carriers[i % len(carriers)]


def email(rng: Rng, i: int) -> Made:
    local, host = email_parts(rng)
    style = ["plain", "plain", "upper", "idn", "idn_punycode", "eai", "urlencoded", "json_u0040", "angle"][i % 9]
    if style == "upper":
        v = f"{local}@{host}".upper()
    elif style in ("idn", "idn_punycode"):
        label = rng.choice(IDN_LABELS)
        host = f"{label}.{rng.choice(['de', 'fr', 'es', 'jp', 'com', 'pl', 'dk', 'gr', 'ru'])}"
        v = f"{local}@{host.encode('idna').decode() if style == 'idn_punycode' else host}"
    elif style == "eai":
        v = f"{rng.choice(EAI_LOCAL)}@{domain(rng)}"
    else:
        v = f"{local}@{host}"
    if style == "urlencoded":
        v = v.replace("+", "%2B").replace("@", "%40")
        text = rng.choice([f"GET /account/verify?email={v}&token={pick(rng, HEX, 24)} HTTP/1.1",
                           f"https://app.{domain(rng)}/unsubscribe?u={v}&list=weekly",
                           log_line(rng, f"redirect to /login?next=%2Fbilling&email={v}")])
        return text, v, f"url/{style}"
    if style == "json_u0040":
        v = v.replace("@", "\\u0040")
        text = rng.choice([log_line(rng, f'webhook body: {{"event":"signup","user":{{"email":"{v}","plan":"free"}}}}'),
                           f'raw response: {{"data":{{"contact":"{v}"}}}}'])
        return text, v, f"raw_json/{style}"
    if style == "angle":
        return f"{full_name(rng)} <{v}> wrote:\n> can you resend the receipt?", v, f"quoted_reply/{style}"
    name, text = email_text(rng, i // 9 + i, v)
    return text, v, f"{name}/{style}"


# ---- phone numbers ----------------------------------------------------------------------------------------

US_AREAS = ["201", "202", "206", "212", "213", "214", "305", "310", "312", "347", "404", "408", "415", "469", "503",
            "512", "602", "617", "628", "646", "702", "713", "720", "773", "808", "818", "917", "929", "954", "971"]
CA_AREAS = ["204", "236", "250", "289", "306", "403", "416", "418", "437", "438", "514", "587", "604", "613", "647",
            "705", "778", "780", "819", "902", "905"]


def nanp(rng: Rng) -> tuple[str, str]:
    area = rng.choice(US_AREAS + CA_AREAS)
    while True:
        exchange = nz(rng, 3)
        if exchange[1:] != "11":
            break
    line = digits(rng, 4)
    style = rng.choice(["paren", "dash", "dot", "space", "compact", "intl_space", "intl_dash", "intl_compact",
                        "one_dash", "intl_paren"])
    return {"paren": f"({area}) {exchange}-{line}", "dash": f"{area}-{exchange}-{line}",
            "dot": f"{area}.{exchange}.{line}", "space": f"{area} {exchange} {line}",
            "compact": f"{area}{exchange}{line}", "intl_space": f"+1 {area} {exchange} {line}",
            "intl_dash": f"+1-{area}-{exchange}-{line}", "intl_compact": f"+1{area}{exchange}{line}",
            "one_dash": f"1-{area}-{exchange}-{line}", "intl_paren": f"+1 ({area}) {exchange}-{line}"}[style], style


def uk(rng: Rng) -> tuple[str, str]:
    kind = rng.choice(["mobile", "mobile", "london", "city4", "area5"])
    if kind == "mobile":
        n = "7" + rng.choice("123457789") + digits(rng, 8)
        national, intl = f"0{n[:4]} {n[4:]}", f"+44 {n[:4]} {n[4:]}"
    elif kind == "london":
        n = "20" + rng.choice("378") + digits(rng, 7)
        national, intl = f"0{n[:2]} {n[2:6]} {n[6:]}", f"+44 (0){n[:2]} {n[2:6]} {n[6:]}"
    elif kind == "city4":
        n = rng.choice(["121", "131", "141", "151", "161", "113", "114", "117", "118"]) + nz(rng, 7)
        national, intl = f"0{n[:3]} {n[3:6]} {n[6:]}", f"+44 {n[:3]} {n[3:6]} {n[6:]}"
    else:
        n = rng.choice(["1865", "1223", "1904", "1392", "1752", "1603"]) + nz(rng, 6)
        national, intl = f"0{n[:4]} {n[4:]}", f"+44 {n[:4]} {n[4:]}"
    form = rng.choice(["national", "national_compact", "intl", "intl_compact"])
    return {"national": national, "national_compact": "0" + n, "intl": intl, "intl_compact": "+44" + n}[form], \
        f"{kind}_{form}"


def fr(rng: Rng) -> tuple[str, str]:
    kind = rng.choice(["mobile", "mobile", "landline", "voip"])
    n = (rng.choice("67") if kind == "mobile" else rng.choice("12345") if kind == "landline" else "9") + nz(rng, 8)
    pairs = " ".join([n[0]] + [n[j:j + 2] for j in range(1, 9, 2)])
    form = rng.choice(["pairs", "dots", "dashes", "compact", "intl", "intl_0", "intl_compact"])
    national = "0" + n
    out = {"pairs": "0" + pairs, "dots": "0" + pairs.replace(" ", "."), "dashes": "0" + pairs.replace(" ", "-"),
           "compact": national, "intl": f"+33 {pairs}", "intl_0": f"+33 (0){pairs}", "intl_compact": "+33" + n}
    return out[form], f"{kind}_{form}"


DE_AREAS = [("30", 8), ("40", 8), ("89", 8), ("69", 8), ("221", 7), ("211", 7), ("711", 7), ("341", 7), ("351", 7),
            ("511", 7), ("911", 7), ("421", 7), ("6221", 6), ("7071", 6)]


def de(rng: Rng) -> tuple[str, str]:
    if rng.random() < 0.5:
        prefix = rng.choice(["151", "152", "157", "160", "162", "170", "171", "172", "175", "176", "177", "179"])
        area, sub, kind = prefix, nz(rng, 8 if prefix.startswith("15") or prefix in ("176", "179") else 7), "mobile"
    else:
        area, size = rng.choice(DE_AREAS)
        sub, kind = nz(rng, size), "landline"
    form = rng.choice(["space", "slash", "dash", "paren", "intl", "intl_0", "intl_compact", "0049", "grouped"])
    out = {"space": f"0{area} {sub}", "slash": f"0{area}/{sub}", "dash": f"0{area}-{sub}",
           "paren": f"(0{area}) {sub}", "intl": f"+49 {area} {sub}", "intl_0": f"+49 (0){area} {sub}",
           "intl_compact": f"+49{area}{sub}", "0049": f"0049 {area} {sub}",
           "grouped": f"0{area} {sub[:len(sub) // 2]} {sub[len(sub) // 2:]}"}
    return out[form], f"{kind}_{form}"


IN_AREAS = [("11", 8), ("22", 8), ("80", 8), ("44", 8), ("33", 8), ("40", 8), ("20", 8), ("79", 8), ("141", 7),
            ("484", 7)]


def india(rng: Rng) -> tuple[str, str]:
    if rng.random() < 0.65:
        n = rng.choice("6789") + digits(rng, 9)
        form = rng.choice(["split", "intl_split", "intl_dash", "zero", "compact", "intl_compact"])
        out = {"split": f"{n[:5]} {n[5:]}", "intl_split": f"+91 {n[:5]} {n[5:]}", "intl_dash": f"+91-{n}",
               "zero": f"0{n}", "compact": n, "intl_compact": f"+91{n}"}
        return out[form], f"mobile_{form}"
    area, size = rng.choice(IN_AREAS)
    sub = nz(rng, size, "234567")
    form = rng.choice(["std_space", "std_dash", "paren", "intl"])
    out = {"std_space": f"0{area} {sub[:4]} {sub[4:]}", "std_dash": f"0{area}-{sub}", "paren": f"(0{area}) {sub}",
           "intl": f"+91 {area} {sub[:4]} {sub[4:]}"}
    return out[form], f"landline_{form}"


def au(rng: Rng) -> tuple[str, str]:
    if rng.random() < 0.55:
        n = "4" + digits(rng, 8)
        form = rng.choice(["national", "compact", "intl", "intl_compact"])
        out = {"national": f"0{n[:3]} {n[3:6]} {n[6:]}", "compact": f"0{n}", "intl": f"+61 {n[:3]} {n[3:6]} {n[6:]}",
               "intl_compact": f"+61{n}"}
        return out[form], f"mobile_{form}"
    area, sub = rng.choice("2378"), nz(rng, 8, "3456789")
    form = rng.choice(["paren", "national", "intl", "compact"])
    out = {"paren": f"(0{area}) {sub[:4]} {sub[4:]}", "national": f"0{area} {sub[:4]} {sub[4:]}",
           "intl": f"+61 {area} {sub[:4]} {sub[4:]}", "compact": f"0{area}{sub}"}
    return out[form], f"landline_{form}"


BR_DDD = ["11", "12", "13", "15", "19", "21", "22", "24", "27", "31", "34", "41", "43", "47", "48", "51", "54", "61",
          "62", "65", "67", "71", "79", "81", "83", "85", "91", "92", "98"]


def br(rng: Rng) -> tuple[str, str]:
    ddd = rng.choice(BR_DDD)
    mobile = rng.random() < 0.6
    sub = "9" + rng.choice("6789") + digits(rng, 7) if mobile else nz(rng, 8, "2345")
    head, tail = sub[:-4], sub[-4:]
    form = rng.choice(["paren", "space", "intl", "intl_paren", "compact", "intl_compact"])
    out = {"paren": f"({ddd}) {head}-{tail}", "space": f"{ddd} {head}-{tail}", "intl": f"+55 {ddd} {head}-{tail}",
           "intl_paren": f"+55 ({ddd}) {head}-{tail}", "compact": f"{ddd}{sub}", "intl_compact": f"+55{ddd}{sub}"}
    return out[form], f"{'mobile' if mobile else 'landline'}_{form}"


def es(rng: Rng) -> tuple[str, str]:
    mobile = rng.random() < 0.6
    n = ("6" + digits(rng, 8) if rng.random() < 0.8 else "7" + rng.choice("1234") + digits(rng, 7)) if mobile \
        else "9" + rng.choice("1345") + nz(rng, 7)
    if mobile:
        spaced = rng.choice([f"{n[:3]} {n[3:5]} {n[5:7]} {n[7:]}", f"{n[:3]} {n[3:6]} {n[6:]}"])
    else:
        spaced = rng.choice([f"{n[:2]} {n[2:5]} {n[5:7]} {n[7:]}", f"{n[:3]} {n[3:6]} {n[6:]}"])
    form = rng.choice(["spaced", "compact", "intl", "intl_compact", "0034"])
    out = {"spaced": spaced, "compact": n, "intl": f"+34 {spaced}", "intl_compact": f"+34{n}", "0034": f"0034 {n}"}
    return out[form], f"{'mobile' if mobile else 'landline'}_{form}"


IT_MOBILE = ["320", "324", "328", "329", "330", "331", "333", "335", "338", "339", "340", "342", "345", "347", "348",
             "349", "351", "366", "370", "377", "380", "388", "389", "392", "393"]
IT_AREAS = [("06", 8), ("02", 8), ("011", 7), ("055", 7), ("081", 7), ("041", 7), ("051", 7), ("010", 7)]


def it(rng: Rng) -> tuple[str, str]:
    if rng.random() < 0.6:
        prefix, sub = rng.choice(IT_MOBILE), digits(rng, 7)
        form = rng.choice(["split", "space", "dash", "intl", "intl_compact", "0039"])
        out = {"split": f"{prefix} {sub[:3]} {sub[3:]}", "space": f"{prefix} {sub}", "dash": f"{prefix}-{sub}",
               "intl": f"+39 {prefix} {sub[:3]} {sub[3:]}", "intl_compact": f"+39{prefix}{sub}",
               "0039": f"0039 {prefix} {sub}"}
        return out[form], f"mobile_{form}"
    area, size = rng.choice(IT_AREAS)
    sub = nz(rng, size)
    form = rng.choice(["split", "space", "dash", "intl"])
    out = {"split": f"{area} {sub[:-4]} {sub[-4:]}", "space": f"{area} {sub}", "dash": f"{area}-{sub}",
           "intl": f"+39 {area} {sub}"}
    return out[form], f"landline_{form}"


JP_AREAS = [("3", 4), ("6", 4), ("52", 3), ("45", 3), ("11", 3), ("92", 3), ("75", 3), ("78", 3), ("22", 3)]


def jp(rng: Rng) -> tuple[str, str]:
    if rng.random() < 0.55:
        area, mid, kind = rng.choice(["70", "80", "90"]), nz(rng, 4, "123456789"), "mobile"
    else:
        area, size = rng.choice(JP_AREAS)
        mid, kind = nz(rng, size), "landline"
    last = digits(rng, 4)
    form = rng.choice(["dash", "dash", "compact", "paren", "intl_dash", "intl_space", "intl_compact"])
    out = {"dash": f"0{area}-{mid}-{last}", "compact": f"0{area}{mid}{last}", "paren": f"0{area}({mid}){last}",
           "intl_dash": f"+81 {area}-{mid}-{last}", "intl_space": f"+81 {area} {mid} {last}",
           "intl_compact": f"+81{area}{mid}{last}"}
    return out[form], f"{kind}_{form}"


MX_AREAS2 = ["55", "33", "81"]
MX_AREAS3 = ["222", "229", "442", "477", "614", "656", "664", "686", "722", "744", "833", "844", "998", "999"]


def mx(rng: Rng) -> tuple[str, str]:
    if rng.random() < 0.5:
        area, sub = rng.choice(MX_AREAS2), nz(rng, 8)
        spaced, dashed = f"{area} {sub[:4]} {sub[4:]}", f"({area}) {sub[:4]}-{sub[4:]}"
    else:
        area, sub = rng.choice(MX_AREAS3), nz(rng, 7)
        spaced, dashed = f"{area} {sub[:3]} {sub[3:]}", f"({area}) {sub[:3]}-{sub[3:]}"
    form = rng.choice(["spaced", "paren", "dash", "compact", "intl", "intl_1", "intl_compact"])
    out = {"spaced": spaced, "paren": dashed, "dash": spaced.replace(" ", "-"), "compact": area + sub,
           "intl": f"+52 {spaced}", "intl_1": f"+52 1 {spaced}", "intl_compact": f"+52{area}{sub}"}
    return out[form], form


@dataclass(frozen=True)
class Country:
    """A numbering plan's generator and how people of that country name a phone number in text."""

    make: Callable[[Rng], tuple[str, str]]
    sentences: tuple[str, ...]
    field: tuple[str, ...]
    header: str


COUNTRIES = {
    "phone_us_ca": Country(nanp, ("Call me at {n} after 5pm", "Best number to reach me is {n}.",
                                  "my cell is {n}, texting is fine", "Mon numéro de téléphone : {n}"),
                           ("phone", "phoneNumber", "mobile"), "Phone"),
    "phone_uk": Country(uk, ("Ring me on my mobile {n}", "Tel: {n} (office hours)", "you can phone me on {n}"),
                        ("phone", "mobile", "telephone"), "Telephone"),
    "phone_fr": Country(fr, ("Vous pouvez me joindre au {n} (portable).", "Mon numéro de téléphone est le {n}",
                             "Tél. : {n}"), ("telephone", "portable", "tel"), "Téléphone"),
    "phone_de": Country(de, ("Sie erreichen mich unter Tel. {n}.", "Meine Handynummer: {n}",
                             "Rückruf bitte an Telefon {n}"), ("telefon", "handy", "phone"), "Telefon"),
    "phone_in": Country(india, ("Please call me on my mobile {n}", "Contact no: {n}", "whatsapp me at {n}"),
                        ("mobile", "phone", "contact_no"), "Mobile No"),
    "phone_au": Country(au, ("Give me a ring on {n}", "Ph: {n}", "mob {n} if urgent"),
                        ("phone", "mobile"), "Phone"),
    "phone_br": Country(br, ("Meu celular é {n}, pode chamar no WhatsApp.", "Telefone para contato: {n}",
                             "tel {n}"), ("telefone", "celular", "whatsapp"), "Telefone"),
    "phone_es": Country(es, ("Mi móvil es {n}, llámame por la tarde.", "Teléfono de contacto: {n}",
                             "tlf {n}"), ("telefono", "movil", "phone"), "Teléfono"),
    "phone_it": Country(it, ("Il mio cellulare è {n}.", "Per info chiamare il numero di telefono {n}",
                             "tel. {n}"), ("telefono", "cellulare", "phone"), "Telefono"),
    "phone_jp": Country(jp, ("携帯電話は{n}です。", "お問い合わせ：TEL {n}", "電話番号 {n} までご連絡ください"),
                        ("電話番号", "tel", "phone"), "電話番号"),
    "phone_mx": Country(mx, ("Mi celular es {n}", "Teléfono: {n}, horario de 9 a 18", "whatsapp {n}"),
                        ("telefono", "celular", "phone"), "Teléfono"),
}


def phone(country: Country, rng: Rng, i: int) -> Made:
    n, style = country.make(rng)
    others = [[full_name(rng), country.make(rng)[0]] for _ in range(rng.randint(0, 2))]
    rows = others + [[full_name(rng), n]]
    rng.shuffle(rows)
    field = rng.choice(country.field)
    carriers = [
        ("sentence", rng.choice(country.sentences).format(n=n)),
        ("json", json.dumps({"contact": {"name": full_name(rng), field: n, "preferred": "sms"}}, ensure_ascii=False)),
        ("csv", csv_rows(["name", country.header.lower().replace(" ", "_"), "city"],
                         [row + [rng.choice(WORDS).title()] for row in rows])),
        ("md_table", md_table(["Name", country.header, "Notes"], [row + ["-"] for row in rows])),
        ("vcard", f"BEGIN:VCARD\nVERSION:3.0\nFN:{full_name(rng)}\nTEL;TYPE={'WORK' if 'landline' in style else 'CELL'}"
                  f":{n}\nEND:VCARD"),
        ("signature", f"--\n{full_name(rng)}\nAccount Manager, {rng.choice(WORDS).title()}\n{country.header}: {n}"),
        ("log", log_line(rng, rng.choice([f"sms.send phone={n} template=otp status=queued",
                                          f"ivr.callback scheduled phone={n} queue=billing"]))),
        ("xml", f'<contact id="{rng.randint(100, 9999)}"><{field}>{n}</{field}></contact>'
         if field.isascii() else f'<contact><phone>{n}</phone></contact>'),
    ]
    name, text = carriers[i % len(carriers)]
    return text, n, f"{name}/{style}"


def phone_kind(kind: str) -> Callable[[Rng, int], Made]:
    return lambda rng, i: phone(COUNTRIES[kind], rng, i)


# ---- US social security numbers -------------------------------------------------------------------------------

def ssn_value(rng: Rng) -> tuple[str, str, str]:
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            break
    a, g, s = f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
    style = rng.choice(["dashed", "dashed", "spaced", "compact"])
    return {"dashed": f"{a}-{g}-{s}", "spaced": f"{a} {g} {s}", "compact": a + g + s}[style], style, a + g + s


def ssn(rng: Rng, i: int) -> Made:
    v, style, _ = ssn_value(rng)
    name = full_name(rng)
    carriers = [
        ("form", f"Applicant: {name}\nDate of application: {stamp(rng)[:10]}\nSSN: {v}\nEmployment: full-time"),
        ("json", json.dumps({"applicant": {"name": name, "ssn": v, "state": rng.choice(["CA", "TX", "NY"])}})),
        ("csv", csv_rows(["employee_id", "name", "ssn", "state"], [[str(rng.randint(10000, 99999)), name, v, "WA"]])),
        ("chat", rng.choice([f"my social security number is {v}", f"SS# {v} — do you need anything else?",
                             f"the form asks for SSN, it's {v}"])),
        ("w2", f"a Employee's social security number  {v}\nb Employer identification number (EIN)  "
               f"{digits(rng, 2)}-{digits(rng, 7)}"),
        ("log", log_line(rng, f"kyc.verify ssn={v} result=match")),
        ("md_table", md_table(["Name", "SSN", "DOB verified"], [[name, v, "yes"]])),
        ("xml", f"<Taxpayer><Name>{name}</Name><SSN>{v}</SSN></Taxpayer>"),
    ]
    label, text = carriers[i % len(carriers)]
    return text, v, f"{label}/{style}"


# ---- payment cards ----------------------------------------------------------------------------------------

def card_number(rng: Rng, network: str) -> str:
    if network == "visa":
        prefix, length = "4", rng.choice([16, 16, 16, 19])
    elif network == "mastercard5":
        prefix, length = str(rng.randint(51, 55)), 16
    elif network == "mastercard2":
        prefix, length = str(rng.randint(2221, 2720)), 16
    elif network == "amex":
        prefix, length = rng.choice(["34", "37"]), 15
    elif network == "discover":
        prefix, length = rng.choice(["6011", str(rng.randint(644, 649)), "65"]), 16
    elif network == "jcb":
        prefix, length = str(rng.randint(3528, 3589)), 16
    elif network == "maestro":
        prefix, length = rng.choice(["5018", "5020", "5038", "5893", "6304", "6759", "6761", "6762", "6763"]), \
            rng.choice([16, 19])
    else:
        prefix, length = rng.choice(["6212", "6228", "6250", "6270", "6282"]), rng.choice([16, 19])
    body = prefix + digits(rng, length - len(prefix) - 1)
    return body + luhn_digit(body)


CARD_NETWORKS = ["visa", "mastercard5", "mastercard2", "amex", "discover", "jcb", "maestro", "unionpay"]


def card(rng: Rng, i: int) -> Made:
    network = CARD_NETWORKS[i % len(CARD_NETWORKS)]
    sep_name, sep = rng.choice([("space", " "), ("dash", "-"), ("dot", "."), ("none", "")])
    v = group_card(card_number(rng, network), sep)
    exp = f"{rng.randint(1, 12):02d}/{rng.randint(25, 31)}"
    carriers = [
        ("chat", rng.choice([f"my card number is {v}, expiry {exp}", f"can you charge {v} instead?",
                             f"Card: {v}  Exp: {exp}"])),
        ("json", json.dumps({"payment_method": {"type": "card", "card": {"number": v, "exp": exp}}})),
        ("form_urlencoded", f"cc_name={full_name(rng).replace(' ', '+')}&cc_number={v.replace(' ', '+')}"
                            f"&cc_exp={exp.replace('/', '%2F')}"),
        ("log", log_line(rng, f"charge declined card={v} amount={rng.randint(5, 900)}.{digits(rng, 2)} EUR "
                              f"code=insufficient_funds")),
        ("csv", csv_rows(["order_id", "card_number", "amount"], [[f"A{digits(rng, 6)}", v, f"{rng.randint(5, 900)}"]])),
        ("md_table", md_table(["Customer", "Card", "Exp"], [[full_name(rng), v, exp]])),
        ("xml", f"<Payment><CardNumber>{v}</CardNumber><Expiry>{exp}</Expiry></Payment>"),
    ]
    name, text = carriers[(i // len(CARD_NETWORKS) + i) % len(carriers)]
    if sep == " " and name == "form_urlencoded":
        v = v.replace(" ", "+")
    return text, v, f"{name}/{network}_{sep_name}"


# ---- IBANs ------------------------------------------------------------------------------------------------

IBAN_BBAN = {"DE": "8n10n", "GB": "4a6n8n", "FR": "5n5n11n2n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
             "NL": "4a10n", "BE": "3n7n2n", "CH": "5n12c", "AT": "5n11n", "PL": "8n16n", "PT": "4n4n11n2n",
             "IE": "4a6n8n", "SE": "3n16n1n", "DK": "4n9n1n", "NO": "4n6n1n", "FI": "3n11n", "LU": "3n13c",
             "GR": "3n4n16c", "CZ": "4n6n10n", "RO": "4a16c", "SA": "2n18c", "AE": "3n16n", "TR": "5n1n16c",
             "HU": "3n4n1n15n1n", "BR": "8n5n10n1a1c"}
BANK_CODES = {"GB": ["NWBK", "BARC", "LOYD", "HBUK", "MIDL"], "IE": ["AIBK", "BOFI"], "NL": ["ABNA", "INGB", "RABO",
              "SNSB", "TRIO"], "RO": ["RNCB", "BTRL", "BRDE"]}


def bban(rng: Rng, country: str) -> str:
    out, count = [], ""
    for ch in IBAN_BBAN[country]:
        if ch.isdigit():
            count += ch
            continue
        n, count = int(count), ""
        if ch == "n":
            out.append(digits(rng, n))
        elif ch == "a":
            out.append(rng.choice(BANK_CODES[country]) if n == 4 and country in BANK_CODES
                       else pick(rng, string.ascii_uppercase, n))
        else:
            out.append("".join(rng.choice(string.ascii_uppercase) if rng.random() < 0.1 else rng.choice(string.digits)
                               for _ in range(n)))
    text = "".join(out)
    if country == "BE":
        text = text[:10] + f"{int(text[:10]) % 97 or 97:02d}"
    elif country == "ES":
        text = text[:8] + es_control(text[:8], text[10:]) + text[10:]
    elif country == "FR":
        key = 97 - (89 * int(text[:5]) + 15 * int(text[5:10]) + 3 * int(text[10:21])) % 97
        text = text[:21] + f"{key:02d}"
    return text


def es_control(bank_branch: str, account: str) -> str:
    """The two Spanish control digits (CCC): one over 00 + bank + branch, one over the account."""
    weights = [1, 2, 4, 8, 5, 10, 9, 7, 3, 6]

    def digit(ten: str) -> str:
        d = 11 - sum(int(c) * w for c, w in zip(ten, weights, strict=True)) % 11
        return str({10: 1, 11: 0}.get(d, d))
    return digit("00" + bank_branch) + digit(account)


def iban_value(rng: Rng, country: str) -> str:
    b = bban(rng, country)
    return country + iban_check(country, b) + b


def iban(rng: Rng, i: int) -> Made:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    raw = iban_value(rng, country)
    label = (i // len(IBAN_BBAN) + i) % 7
    style = "compact" if label == 1 else rng.choice(["grouped", "grouped", "compact", "lower_compact", "lower_grouped"])
    v = " ".join(raw[j:j + 4] for j in range(0, len(raw), 4)) if "grouped" in style else raw
    v = v.lower() if style.startswith("lower") else v
    bic = f"{pick(rng, string.ascii_uppercase, 4)}{country}{pick(rng, UPPER_ALNUM, 2)}"
    holder = full_name(rng)
    carriers = [
        ("invoice", f"Payment terms: 14 days net\nBank: {rng.choice(WORDS).title()} Bank\nIBAN: {v}\nBIC: {bic}"),
        ("sepa_xml", f"<CdtrAcct>\n  <Id>\n    <IBAN>{v}</IBAN>\n  </Id>\n</CdtrAcct>"),
        ("json", json.dumps({"payout": {"holder": holder, "iban": v, "currency": "EUR"}})),
        ("csv", csv_rows(["holder", "iban", "amount"], [[holder, v, f"{rng.randint(10, 5000)}.00"]])),
        ("chat", rng.choice([f"Bitte überweisen Sie den Betrag auf {v}.", f"mon IBAN est {v}",
                             f"please refund to my account {v}", f"IBAN {v} (conta corrente)"])),
        ("md_table", md_table(["Holder", "IBAN", "BIC"], [[holder, v, bic]])),
        ("log", log_line(rng, f"payout.created iban={v} amount={rng.randint(10, 5000)} status=pending")),
    ]
    name, text = carriers[label]
    return text, v, f"{name}/{country}_{style}"


# ---- disguised values -------------------------------------------------------------------------------------

ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
BIDI = ["\u200e", "\u200f", "\u202a", "\u202c", "\u2066", "\u2069"]


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in text)


def sprinkle(rng: Rng, text: str, marks: list[str], count: int) -> str:
    chars = list(text)
    for at in sorted(rng.sample(range(1, len(text)), count), reverse=True):
        chars.insert(at, rng.choice(marks))
    return "".join(chars)


def disguised_base(rng: Rng) -> tuple[str, str, str]:
    """An underlying value of this corpus with the context word it is written after."""
    which = rng.choice(["email", "phone", "card", "iban", "ssn", "github", "aws_id", "openai"])
    if which == "email":
        local, host = email_parts(rng)
        return which, f"{local}@{host}", "email"
    if which == "phone":
        return which, nanp(rng)[0], "phone"
    if which == "card":
        return which, group_card(card_number(rng, rng.choice(CARD_NETWORKS)), rng.choice([" ", "-", ""])), "card"
    if which == "iban":
        raw = iban_value(rng, rng.choice(list(IBAN_BBAN)))
        return which, " ".join(raw[j:j + 4] for j in range(0, len(raw), 4)), "IBAN"
    if which == "ssn":
        return which, ssn_value(rng)[0], "SSN"
    if which == "github":
        body = pick(rng, B62, 30)
        return which, "ghp_" + body + crc_b62(body), "GITHUB_TOKEN="
    if which == "aws_id":
        return which, "AKIA" + pick(rng, B32, 16), "aws_access_key_id ="
    return which, "sk-proj-" + pick(rng, B64URL, 74) + "T3BlbkFJ" + pick(rng, B64URL, 74), "OPENAI_API_KEY="


def disguised(rng: Rng, i: int) -> Made:
    which, value, label = disguised_base(rng)
    how = ["zero_width", "fullwidth", "bidi", "soft_hyphen", "fullwidth_hyphen"][i % 5]
    if how == "zero_width":
        v = sprinkle(rng, value, ZERO_WIDTH, rng.randint(1, 3))
    elif how == "fullwidth":
        v = fullwidth(value)
    elif how == "bidi":
        v = sprinkle(rng, value, BIDI, rng.randint(1, 2))
    elif how == "soft_hyphen":
        v = sprinkle(rng, value, ["\u00ad"], rng.randint(1, 2))
    else:
        half = len(value) // 2
        v = value.replace("-", "\uff0d") if "-" in value else fullwidth(value[:half]) + value[half:]
    carriers = [
        ("chat", f"{label}{v}" if label.endswith("=") else f"here is my {label}: {v}"),
        ("json", json.dumps({label.rstrip(" =").lower(): v}, ensure_ascii=False)),
        ("log", log_line(rng, f"{label.rstrip(' =').lower()}={v} accepted")),
        ("env", f"{label.rstrip(' =').upper().replace(' ', '_')}={v}\n"),
        ("csv", csv_rows(["id", label.rstrip(" =").lower()], [[str(rng.randint(1, 999)), v]])),
        ("md_table", md_table(["Field", "Value"], [[label.rstrip(" ="), v]])),
    ]
    name, text = carriers[i % len(carriers)]
    return text, v, f"{name}/{how}_{which}"


# ---- the corpus -------------------------------------------------------------------------------------------

CARRIERS = ("message", "tool_call", "tool_result", "metadata")


def carry(rng: Rng, text: str) -> tuple[str, str]:
    """How a carrier's text reaches the store: as message text, or inside a JSON tool call, tool result or
    metadata object (written with or without ASCII escapes, as producers differ)."""
    carrier = rng.choice(CARRIERS)
    ascii_only = rng.random() < 0.5
    if carrier == "message":
        return carrier, text
    if carrier == "tool_call":
        doc: dict[str, object] = {"path": f"/srv/{rng.choice(WORDS)}/{rng.choice(['config', 'notes', 'out'])}.txt",
                                  "content": text}
    elif carrier == "tool_result":
        doc = {"exit_code": 0, "stdout": text, "stderr": ""}
    else:
        doc = {"source": rng.choice(SERVICES), "note": text, "ts": stamp(rng)}
    return carrier, json.dumps(doc, ensure_ascii=ascii_only)


GENERATORS: dict[str, Callable[[Rng, int], Made]] = {
    "password": password, "aws_access_key_id": aws_access_key_id, "aws_secret_key": aws_secret_key,
    "github_token": github_token, "gitlab_token": gitlab_token, "slack_token": slack_token, "stripe_key": stripe_key,
    "openai_key": openai_key, "anthropic_key": anthropic_key, "google_api_key": google_api_key, "twilio": twilio,
    "sendgrid_key": sendgrid_key, "npm_token": npm_token, "jwt": jwt, "private_key": private_key,
    "slack_webhook": slack_webhook, "discord_webhook": discord_webhook, "teams_webhook": teams_webhook,
    "db_url": db_url, "azure_key": azure_key, "email": email,
    **{kind: phone_kind(kind) for kind in COUNTRIES},
    "ssn": ssn, "card": card, "iban": iban, "disguised": disguised,
}
KINDS = tuple(GENERATORS)


def generate(per_kind: int = 120, seed: int = 0) -> list[Case]:
    """`per_kind` cases of every kind, the same for the same seed; each kind draws from its own stream, so a
    kind added later changes no other kind's values."""
    cases = []
    for kind in KINDS:
        rng = Rng(f"redact-fresh:{seed}:{kind}")
        for i in range(per_kind):
            text, secret, form = GENERATORS[kind](rng, i)
            if secret not in text:
                raise ValueError(f"{kind} {form}: the value is not in its carrier's text")
            carrier, carried = carry(rng, text)
            cases.append(Case(kind, text, secret, carrier, carried, form))
    return cases


# ---- near misses: values shaped like a kind that are not one ----------------------------------------------

def bad_luhn_card(rng: Rng) -> str:
    number = card_number(rng, rng.choice(CARD_NETWORKS))
    wrong = number[:-1] + str((int(number[-1]) + rng.randint(1, 9)) % 10)
    v = group_card(wrong, rng.choice([" ", "-", ""]))
    return rng.choice([f"card {v} rejected: failed checksum", json.dumps({"card_number": v, "valid": False}),
                       log_line(rng, f"tokenize card={v} error=invalid_number")])


def bad_iban(rng: Rng) -> str:
    raw = iban_value(rng, rng.choice(list(IBAN_BBAN)))
    check = (int(raw[2:4]) + rng.randint(1, 96)) % 97
    wrong = raw[:2] + f"{check if check > 1 else check + 2:02d}" + raw[4:]
    if iban_ok(wrong):
        wrong = raw[:2] + f"{(int(raw[2:4]) + 1) % 97 or 2:02d}" + raw[4:]
    grouped = " ".join(wrong[j:j + 4] for j in range(0, len(wrong), 4))
    return rng.choice([f"IBAN {grouped} is invalid (checksum)", json.dumps({"iban": wrong, "error": "mod97"})])


def bad_ssn(rng: Rng) -> str:
    area, group, serial = rng.choice([("000", None, None), ("666", None, None), (None, "00", None),
                                      (None, None, "0000"), ("9" + digits(rng, 2), None, None)])
    a = area or f"{rng.randint(1, 665):03d}"
    v = f"{a}-{group or f'{rng.randint(1, 99):02d}'}-{serial or f'{rng.randint(1, 9999):04d}'}"
    return rng.choice([f"SSN {v} rejected: not a valid number", json.dumps({"ssn_input": v, "valid": False})])


def version(rng: Rng) -> str:
    a, b, c = rng.randint(0, 30), rng.randint(0, 40), rng.randint(0, 200)
    return rng.choice([f"upgraded numpy {a}.{b}.{c} -> {a}.{b + 1}.0", f"Chrome/{rng.randint(100, 131)}.0."
                       f"{rng.randint(4000, 6999)}.{rng.randint(10, 250)} Safari/537.36",
                       f"build {rng.randint(10, 12)}.0.{rng.randint(10000, 26000)}.{rng.randint(1000, 4000)}",
                       f"release v{a}.{b}.{c}-rc.{rng.randint(1, 5)}+{pick(rng, HEX, 7)}"])


def order_id(rng: Rng) -> str:
    return rng.choice([f"order #{digits(rng, 3)}-{digits(rng, 7)}-{digits(rng, 7)} shipped",
                       f"ORD-{rng.randint(2019, 2025)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}-"
                       f"{digits(rng, 5)}", f"invoice INV-{digits(rng, 9)} paid",
                       f"PO {digits(rng, 10)} approved by finance", f"ticket ZD-{digits(rng, 7)} closed"])


def uuid_line(rng: Rng) -> str:
    u = uuid4(rng)
    return rng.choice([f"request_id={u}", json.dumps({"trace_id": u, "span": pick(rng, HEX, 16)}),
                       f"/api/v2/sessions/{u}/messages"])


def git_sha(rng: Rng) -> str:
    sha = pick(rng, HEX, 40)
    return rng.choice([f"commit {sha}", f"HEAD is now at {sha[:7]} fix flaky test",
                       f"Merge {sha[:12]} into main", f"{sha} refs/heads/release"])


def digest(rng: Rng) -> str:
    return rng.choice([f"image: ghcr.io/{rng.choice(WORDS)}/api@sha256:{pick(rng, HEX, 64)}",
                       f"sha256sum: {pick(rng, HEX, 64)}  dist.tar.gz", f"etag: \"{pick(rng, HEX, 32)}\"",
                       f"md5={pick(rng, HEX, 32)}"])


def timestamp(rng: Rng) -> str:
    return rng.choice([f"ts={rng.randint(1_600_000_000, 1_750_000_000)}",
                       f"created_at_ms={rng.randint(1_600_000_000_000, 1_750_000_000_000)}",
                       f"at {stamp(rng)}", f"backup-{rng.randint(2019, 2025)}{rng.randint(1, 12):02d}"
                       f"{rng.randint(1, 28):02d}T{digits(rng, 6)}Z.tar"])


def phone_shaped(rng: Rng) -> str:
    """Digit runs a phone rule could take, with no phone context beside them."""
    n = rng.choice([nz(rng, 10), f"{nz(rng, 3)} {digits(rng, 3)} {digits(rng, 4)}", f"0{nz(rng, 9)}",
                    f"{digits(rng, 2)} {digits(rng, 2)} {digits(rng, 2)} {digits(rng, 2)} {digits(rng, 2)}"])
    return rng.choice([f"bytes_sent={n}", f"processed {n} rows in batch", f"offset {n} committed",
                       f"inventory count: {n} units", f"seq={n}"])


def placeholder(rng: Rng) -> str:
    return rng.choice([
        "OPENAI_API_KEY=YOUR_API_KEY", "export STRIPE_SECRET_KEY=<your-secret-key>", "api_key: ${API_KEY}",
        "password: {{ .Values.db.password }}", "DB_PASSWORD=${DB_PASSWORD}", 'password = os.environ["DB_PASSWORD"]',
        "password: ********", "PGPASSWORD=$(cat /run/secrets/pg)", "token: <redacted>", "secret_key = REPLACE_ME",
        "Authorization: Bearer <token>", "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}", "password=",
        "aws_secret_access_key = <YOUR_SECRET_KEY>", "--password \"$ADMIN_PASSWORD\"", "\"apiKey\": \"your-key-here\"",
        "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/XXX/YYY/ZZZ", "password: !vault |",
        "passwordPolicy: min 12 characters", "reset_password_url: /account/reset"])


def emailish(rng: Rng) -> str:
    return rng.choice([f"git clone git@github.com:{rng.choice(WORDS)}/{rng.choice(WORDS)}.git",
                       f"npm install @types/node@{rng.randint(16, 22)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}",
                       f"brew install postgresql@{rng.randint(12, 17)}", "<img src=\"logo@2x.png\">",
                       f"@{rng.choice(FIRST)} can you review?", f"python@3.{rng.randint(8, 13)}",
                       "@decorator applied to handler"])


def cloud_id(rng: Rng) -> str:
    return rng.choice([f"i-0{pick(rng, HEX, 16)}", f"vpc-{pick(rng, HEX, 8)}",
                       f"arn:aws:iam::{digits(rng, 12)}:role/{rng.choice(WORDS)}-deployer",
                       f"pod {rng.choice(WORDS)}-{pick(rng, LOWER_ALNUM, 9)}-{pick(rng, LOWER_ALNUM, 5)} OOMKilled",
                       f"subscriptions/{uuid4(rng)}/resourceGroups/rg-{rng.choice(WORDS)}"])


def key_prose(rng: Rng) -> str:
    return rng.choice(["GitHub tokens start with ghp_ and are 40 characters long",
                       "Stripe live keys begin with sk_live_, test keys with sk_test_",
                       "set the header x-api-key to your Anthropic key", "AWS key ids look like AKIA followed by 16",
                       "rotate the Slack bot token (xoxb-) every 90 days", "eyJ is how a base64url JSON object starts"])


def number_misc(rng: Rng) -> str:
    return rng.choice([f"ISBN 978-{digits(rng, 1)}-{digits(rng, 3)}-{digits(rng, 5)}-{digits(rng, 1)}",
                       f"total: ${rng.randint(1, 999)},{digits(rng, 3)},{digits(rng, 3)}.{digits(rng, 2)}",
                       f"coords {rng.uniform(-80, 80):.6f}, {rng.uniform(-170, 170):.6f}",
                       f"tracking 1Z{pick(rng, UPPER_ALNUM, 6)}{digits(rng, 10)}",
                       f"color: #{pick(rng, HEX, 6)}", f"port {rng.randint(1024, 65535)} in use",
                       f"took {rng.randint(1, 99999)} ms, p99 {rng.randint(1, 9999)} ms"])


def random_base(rng: Rng) -> str:
    """High-entropy strings that are not credentials: cache keys, file names, public ids."""
    return rng.choice([f"cache key {pick(rng, B62, 32)}", f"upload {pick(rng, LOWER_ALNUM, 20)}.png done",
                       f"session cursor={b64url(rng.randbytes(18))}", f"nonce {pick(rng, HEX, 24)}"])


NEGATIVES: dict[str, Callable[[Rng], str]] = {
    "bad_luhn_card": bad_luhn_card, "bad_iban": bad_iban, "bad_ssn": bad_ssn, "version": version,
    "order_id": order_id, "uuid": uuid_line, "git_sha": git_sha, "digest": digest, "timestamp": timestamp,
    "phone_shaped": phone_shaped, "placeholder": placeholder, "emailish": emailish, "cloud_id": cloud_id,
    "key_prose": key_prose, "number_misc": number_misc, "random_base": random_base,
}


def generate_negatives(seed: int = 0, rounds: int = 20) -> list[tuple[str, str]]:
    """`rounds` near misses of each sort, as (sort, text); none may be flagged."""
    out = []
    for sort, make in NEGATIVES.items():
        rng = Rng(f"redact-fresh-negatives:{seed}:{sort}")
        out += [(sort, make(rng)) for _ in range(rounds)]
    return out
