"""The thirty-third blind redaction corpus: ML research and data-science agents, what an agent that trains,
evaluates and ships models sees. Written from the formats' public specifications by someone who read neither the
detection rules nor the other corpora.

Carriers (the `form` head): Jupyter notebooks as nbformat 4 `.ipynb` JSON (a code cell's `source`, a `stream`
output, an `error` output's `evalue` and `traceback`), Weights & Biases `config.yaml`/`wandb-metadata.json` and run
logs, MLflow run JSON (`params`, `tags`) and server logs, `huggingface-cli` output and `~/.cache/huggingface/token`,
Kaggle `kaggle.json`, SLURM batch scripts and `sacct`/`squeue` output, HPC login banners and `~/.ssh/config`,
`pip.conf`/`.netrc`/`.pypirc`, `conda env export` YAML, cloud notebook runtimes' environment dumps (Colab,
SageMaker, Vertex AI Workbench), object-store URIs and signed URLs in shell logs, dataset cards and JSONL sample
rows, lm-evaluation-harness results JSON, Ray and Dask dashboard logs, and the agent's messages to its user in 27
languages (labels in the user's language). About a third is JSON carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not
0000); phones, the numbering plans (NANP: NXX-NXX-XXXX, no N11, no 555; Ofcom: 07 mobiles, 01/02 geographic, not
the drama ranges; ARCEP: 01-07/09 in pairs, +33 without the 0; BNetzA: 015x/016x/017x mobiles and area codes;
TRAI/DoT: ten-digit mobiles starting 6-9, +91) with the country's context words; AWS keys, IAM's documented
AKIA/ASIA ids and 40-character secrets; webhooks as Slack, Discord, Microsoft Teams/Power Automate, Google Chat and
Mattermost document them (the secret is the token segment or the `token`/`sig` value only); Stripe `whsec_`
signing secrets as `stripe listen` prints them; connection strings, libpq/SQLAlchemy URIs, MongoDB SRV, Redis,
AMQP, JDBC, ODBC and Azure Storage (the secret is the password or AccountKey only); JWT (RFC 7519/7515); PEM
PKCS#8 EC and OpenSSH Ed25519 private keys; provider tokens as their docs show them: Hugging Face `hf_` (User
Access Tokens), W&B 40-hex API keys (also in `.netrc` for api.wandb.ai), OpenAI `sk-`/`sk-proj-`, GitHub
`ghp_` (CRC32 checksum) and `github_pat_`, Kaggle 32-hex `key`; TOTP seeds, RFC 4648 base32 in Google
Authenticator's `otpauth://` URI (Key Uri Format) or as a grouped setup key; session cookies (RFC 6265) of
JupyterHub, Streamlit, MLflow behind oauth2-proxy; signed URLs, S3 SigV4 presigned `X-Amz-Signature`, GCS V4
`X-Goog-Signature`, Azure SAS `sig`. National ids (outside the target): Finnish HETU (mod 31 letter), Swedish
personnummer (Luhn), Norwegian fodselsnummer (two mod 11 digits), Chinese resident id (ISO 7064 MOD 11-2), Belgian
national number (97 - mod 97), French NIR (97 - mod 97 key), Brazilian CPF (two mod 11 digits).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a signed URL's signature, a key's base64 body without its BEGIN/END lines). A W&B key
in `.netrc` is a password by place and a provider key by kind; it is held as `wandb_key`. Kaggle's `key` is held
as `kaggle_key`, not `labelled_key`. Near misses are what this domain holds that is not secret or personal in
itself: notebook cell ids and execution counts, run ids and artifact paths, SLURM job ids and node lists, GPU
UUIDs, model revisions and dataset ETags, metrics and hyperparameters, tensor shapes and pixel sizes, bounding
boxes, timestamps, request ids, cache-busting asset hashes, CSRF field names, CSS selectors and XPath from
notebook widgets, version pins, placeholders and masked values, Luhn-invalid numbers, businesses' published
toll-free lines, the AWS docs' EXAMPLE keys, order and tracking numbers, AWS account ARNs: none of them
identifies a person or opens anything.
"""

from __future__ import annotations

import base64
import hashlib
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

SEED = 33
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"fi_hetu", "se_pnr", "no_fnr", "cn_ric", "be_nrn", "fr_nir", "br_cpf"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


@dataclass(frozen=True)
class Case:
    """One planted value: its kind, `carrier/style` form, the value as written, and the text carrying it."""

    kind: str
    form: str
    secret: str
    text: str
    is_json: bool

    @property
    def carried(self) -> str:
        """The text as it reaches redaction (the carrier already is the stored string)."""
        return self.text


Value = tuple[str, str, str, bool]
"""(style, secret, snippet holding the secret, raw_only: the snippet must not be re-escaped in JSON)."""


# ---- shared pieces --------------------------------------------------------------------------------------------

FIRST = ["amara", "bjorn", "chen", "dalia", "emeka", "farah", "giulia", "hiroshi", "ines", "jonas", "kavya", "lukas",
         "mei", "nadia", "oskar", "priya", "quentin", "rania", "sofia", "tomasz", "ugo", "vera", "wei", "yusuf"]
LAST = ["okafor", "lindqvist", "zhang", "haddad", "nwosu", "rahman", "bianchi", "tanaka", "moreau", "becker",
        "iyer", "novak", "lin", "petrova", "berg", "sharma", "dubois", "khalil", "rossi", "kowalski", "silva", "park"]
DOMAINS = ["gmail.com", "outlook.com", "proton.me", "cs.uni-tuebingen.de", "eng.ox.ac.uk", "inria.fr", "iisc.ac.in",
           "mila.quebec", "stanford.edu", "labelstudio-vendor.io", "annotate-co.com", "yahoo.co.in", "gmx.de"]
HOSTS = ["login1.hpc.uni-example.de", "gpu-node042.cluster.local", "db.mlops.internal", "mlflow.research.lan",
         "redis.ray-head.svc", "pg-feature-store.rds.amazonaws.com", "cluster0.ab1cd.mongodb.net"]
USERS = ["mlops", "trainer", "jdoe", "svc_eval", "notebook", "airflow", "labeler", "ray"]


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _person(rng: random.Random) -> tuple[str, str]:
    return rng.choice(FIRST), rng.choice(LAST)


def _hex(rng: random.Random, n: int) -> str:
    return pick(rng, HEX, n)


def _ts(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:" \
           f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


def _password(rng: random.Random) -> str:
    """A human-chosen or generated password: word + digits + symbol, or a random 16-24 character string."""
    if rng.random() < 0.5:
        word = rng.choice(["Tensor", "gradient", "Kaggle", "notebook", "Lambda", "cuda", "Epoch", "mnist"])
        return word + rng.choice("!#$%&*?@") + digits(rng, rng.randint(2, 4)) + pick(rng, UPPER + LOWER, 3)
    return pick(rng, ALNUM + "!#%*+-=?", rng.randint(16, 24))


def _uri_password(rng: random.Random) -> str:
    """A password that needs no percent-encoding in a URI's userinfo (RFC 3986 unreserved characters)."""
    return pick(rng, ALNUM, rng.randint(12, 20)) + rng.choice("-._~") + digits(rng, 2)


def _styled(i: int, styles: list[str]) -> str:
    return styles[i % len(styles)]


# ---- target kinds ---------------------------------------------------------------------------------------------

PASSWORD_LABELS = {
    "en": "Password", "de": "Passwort", "fr": "Mot de passe", "es": "Contraseña", "pt": "Senha", "it": "Password",
    "nl": "Wachtwoord", "pl": "Hasło", "cs": "Heslo", "hu": "Jelszó", "ro": "Parola", "sv": "Lösenord",
    "da": "Adgangskode", "no": "Passord", "fi": "Salasana", "el": "Κωδικός πρόσβασης", "ru": "Пароль",
    "uk": "Пароль", "tr": "Şifre", "ar": "كلمة المرور", "he": "סיסמה", "hi": "पासवर्ड", "ja": "パスワード",
    "ko": "비밀번호", "zh": "密码", "vi": "Mật khẩu", "id": "Kata sandi", "th": "รหัสผ่าน",
}


def gen_password(rng: random.Random, i: int) -> Value:
    pw = _password(rng)
    style = _styled(i, ["label", "netrc", "label", "pypirc", "label", "pipconf", "label", "jupyter_cfg", "label",
                        "env", "label", "cli_flag"])
    host = rng.choice(HOSTS)
    user = rng.choice(USERS)
    if style == "label":
        lang = list(PASSWORD_LABELS)[(i // 2) % len(PASSWORD_LABELS)]
        return f"label_{lang}", pw, f"{PASSWORD_LABELS[lang]}: {pw}", False
    if style == "netrc":
        return style, pw, f"machine {host} login {user} password {pw}", False
    if style == "pypirc":
        return style, pw, f"[internal]\nrepository = https://{host}/simple/\nusername = {user}\npassword = {pw}", False
    if style == "pipconf":
        up = _uri_password(rng)
        return style, up, f"[global]\nindex-url = https://{user}:{up}@{host}/pypi/simple", False
    if style == "jupyter_cfg":
        return style, pw, f"c.ServerApp.password_required = True\n# plain text for the lab VM: {pw}\n" \
                          f"JUPYTER_PASSWORD={pw}", False
    if style == "env":
        name = rng.choice(["POSTGRES_PASSWORD", "MLFLOW_TRACKING_PASSWORD", "LABEL_STUDIO_PASSWORD", "DB_PASS"])
        return style, pw, f"{name}={pw}", False
    return style, pw, f"$ label-studio start --username {user}@lab --password '{pw}'", False


def _akid(rng: random.Random) -> str:
    return rng.choice(["AKIA", "ASIA"]) + pick(rng, UPPER + "234567", 16)


def gen_aws_secret(rng: random.Random, i: int) -> Value:
    secret = pick(rng, B64, 40)
    akid = _akid(rng)
    style = _styled(i, ["credentials", "env", "boto_repr", "pair_only", "sagemaker_env", "cli_configure"])
    if style == "credentials":
        return style, secret, f"[default]\naws_access_key_id = {akid}\naws_secret_access_key = {secret}", False
    if style == "env":
        return style, secret, f"AWS_ACCESS_KEY_ID={akid}\nAWS_SECRET_ACCESS_KEY={secret}", False
    if style == "boto_repr":
        return style, secret, f"boto3.client('s3', aws_access_key_id='{akid}', aws_secret_access_key='{secret}')", \
            False
    if style == "pair_only":
        return style, secret, f"{akid} {secret}", False
    if style == "sagemaker_env":
        return style, secret, f"export AWS_SECRET_ACCESS_KEY=\"{secret}\"  # {akid}", False
    return style, secret, f"AWS Access Key ID [None]: {akid}\nAWS Secret Access Key [None]: {secret}", False


def gen_webhook(rng: random.Random, i: int) -> Value:
    style = _styled(i, ["slack", "discord", "teams", "power_automate", "google_chat", "mattermost"])
    if style == "slack":
        tok = pick(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, UPPER + string.digits, 10)}/" \
              f"B{pick(rng, UPPER + string.digits, 10)}/{tok}"
    elif style == "discord":
        tok = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19 - 1)}/{tok}"
    elif style == "teams":
        tok = _hex(rng, 32)
        url = f"https://contoso.webhook.office.com/webhookb2/{uuid.UUID(int=rng.getrandbits(128))}@" \
              f"{uuid.UUID(int=rng.getrandbits(128))}/IncomingWebhook/{tok}/{uuid.UUID(int=rng.getrandbits(128))}"
    elif style == "power_automate":
        tok = pick(rng, URLSAFE, 43)
        url = f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{_hex(rng, 32)}/" \
              f"triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}"
    elif style == "google_chat":
        tok = pick(rng, URLSAFE, 43)
        url = f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy" \
              f"{pick(rng, URLSAFE, 33)}&token={tok}"
    else:
        tok = pick(rng, LOWER + string.digits, 26)
        url = f"https://chat.lab.example.org/hooks/{tok}"
    lead = rng.choice(["SLACK_ALERT_URL=", "notify on run finish -> ", "webhook_url: ", "curl -X POST -d @m.json "])
    return style, tok, lead + url, False


def gen_stripe_whsec(rng: random.Random, i: int) -> Value:
    sec = "whsec_" + pick(rng, ALNUM, 32)
    style = _styled(i, ["listen", "env", "config", "code"])
    if style == "listen":
        return style, sec, f"> Ready! Your webhook signing secret is {sec} (^C to quit)", False
    if style == "env":
        return style, sec, f"STRIPE_WEBHOOK_SECRET={sec}", False
    if style == "config":
        return style, sec, f"billing:\n  stripe_endpoint_secret: {sec}", False
    return style, sec, f"event = stripe.Webhook.construct_event(payload, sig_header, '{sec}')", False


def gen_connection_string(rng: random.Random, i: int) -> Value:
    style = _styled(i, ["postgres", "mlflow_backend", "mongo_srv", "redis", "amqp", "jdbc", "odbc", "azure_storage",
                        "mysql"])
    user, host = rng.choice(USERS), rng.choice(HOSTS)
    pw = _uri_password(rng)
    if style == "postgres":
        return style, pw, f"postgresql://{user}:{pw}@{host}:5432/features", False
    if style == "mlflow_backend":
        return style, pw, f"mlflow server --backend-store-uri postgresql+psycopg2://{user}:{pw}@{host}/mlflow " \
                          "--default-artifact-root s3://ml-artifacts/mlflow", False
    if style == "mongo_srv":
        return style, pw, f"mongodb+srv://{user}:{pw}@{host}/?retryWrites=true&w=majority", False
    if style == "redis":
        return style, pw, f"RAY_REDIS_ADDRESS=redis://:{pw}@{host}:6379/0", False
    if style == "amqp":
        return style, pw, f"CELERY_BROKER_URL=amqp://{user}:{pw}@{host}:5672//", False
    if style == "jdbc":
        return style, pw, f"jdbc:postgresql://{host}:5432/warehouse?user={user}&password={pw}&ssl=true", False
    if style == "odbc":
        return style, pw, f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:{host},1433;Database=labels;" \
                          f"Uid={user};Pwd={pw};Encrypt=yes;", False
    if style == "azure_storage":
        key = base64.b64encode(rng.randbytes(64)).decode()
        return style, key, f"DefaultEndpointsProtocol=https;AccountName=mldatasets{digits(rng, 3)};AccountKey={key};" \
                           "EndpointSuffix=core.windows.net", False
    return style, pw, f"mysql+pymysql://{user}:{pw}@{host}:3306/optuna", False


API_KEY_LABELS = ["API key", "api_key", "X-API-Key", "Clé API", "API-Schlüssel", "Clave de API", "Chave de API",
                  "APIキー", "API 密钥", "API 키", "Ключ API", "API anahtarı", "Chiave API", "Klucz API"]


def gen_labelled_key(rng: random.Random, i: int) -> Value:
    key = pick(rng, ALNUM, rng.choice([32, 40, 48]))
    label = API_KEY_LABELS[i % len(API_KEY_LABELS)]
    style = _styled(i, ["colon", "header", "yaml", "kwarg"])
    if style == "colon":
        return style, key, f"{label}: {key}", False
    if style == "header":
        return style, key, f"-H 'X-API-Key: {key}'", False
    if style == "yaml":
        return style, key, f"eval_provider:\n  name: judge-llm\n  api_key: {key}", False
    return style, key, f"client = LabelboxClient(api_key=\"{key}\")", False


_ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def gen_disguised(rng: random.Random, i: int) -> Value:
    base = rng.choice(["hf_" + pick(rng, ALNUM, 34), pick(rng, B64, 40), _password(rng), "sk-" + pick(rng, ALNUM, 48)])
    style = _styled(i, ["zero_width", "fullwidth", "percent", "json_u"])
    if style == "zero_width":
        cut = rng.randint(3, len(base) - 3)
        sec = base[:cut] + rng.choice(_ZW) + base[cut:]
        return style, sec, f"token = \"{sec}\"", False
    if style == "fullwidth":
        sec = _fullwidth(base)
        return style, sec, f"secret: {sec}", False
    if style == "percent":
        sec = "".join(f"%{ord(c):02X}" if rng.random() < 0.5 or not c.isalnum() else c for c in base)
        return style, sec, f"GET /api/login?user=nb&password={sec} HTTP/1.1", False
    sec = "".join(f"\\u{ord(c):04x}" for c in base)
    return style, sec, f"{{\"HF_TOKEN\": \"{sec}\"}}", True


def _email(rng: random.Random) -> str:
    first, last = _person(rng)
    local = rng.choice([f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}{rng.randint(1, 99)}", first + last])
    return f"{local}@{rng.choice(DOMAINS)}"


def gen_email(rng: random.Random, i: int) -> Value:
    mail = _email(rng)
    style = _styled(i, ["annotator", "respondent", "git_author", "wandb_user", "contact", "obfuscated_ok"])
    if style == "annotator":
        return style, mail, f"annotator_email: {mail}  label: positive  agreement: 0.82", False
    if style == "respondent":
        return style, mail, f"respondent {rng.randint(1, 900)}, e-mail {mail}, age group 25-34", False
    if style == "git_author":
        return style, mail, f"Author: {mail.split('@')[0].title()} <{mail}>", False
    if style == "wandb_user":
        return style, mail, f"wandb: Currently logged in as: {mail} (use `wandb login --relogin` to force)", False
    if style == "contact":
        return style, mail, f"Dataset curators: contact {mail} for removal requests.", False
    return style, mail, f"Correo electrónico del participante: {mail}", False


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    def nxx() -> str:
        while True:
            n = str(rng.randint(2, 9)) + digits(rng, 2)
            if n[1:] != "11" and n != "555":
                return n
    return nxx(), nxx(), digits(rng, 4)


def gen_phone_us_ca(rng: random.Random, i: int) -> Value:
    a, b, c = _nanp(rng)
    style = _styled(i, ["paren", "dash", "dot", "plus1", "e164"])
    num = {"paren": f"({a}) {b}-{c}", "dash": f"{a}-{b}-{c}", "dot": f"{a}.{b}.{c}", "plus1": f"+1 {a}-{b}-{c}",
           "e164": f"+1{a}{b}{c}"}[style]
    ctx = rng.choice(["Phone", "Cell", "Mobile", "Tel", "Téléphone (Québec)", "respondent phone"])
    return style, num, f"{ctx}: {num}", False


def gen_phone_uk(rng: random.Random, i: int) -> Value:
    style = _styled(i, ["mobile", "plus44_mobile", "london", "manchester", "plus44_geo"])
    mob = "7" + rng.choice("1234579") + digits(rng, 8)
    if style == "mobile":
        num, ctx = f"0{mob[:4]} {mob[4:]}", "Mobile"
    elif style == "plus44_mobile":
        num, ctx = f"+44 {mob[:4]} {mob[4:]}", "Mob"
    elif style == "london":
        num, ctx = f"020 {rng.choice('378')}{digits(rng, 3)} {digits(rng, 4)}", "Tel"
    elif style == "manchester":
        num, ctx = f"0161 {rng.randint(200, 999)} {digits(rng, 4)}", "Telephone"
    else:
        num, ctx = f"+44 (0)1{rng.choice('2345')}{digits(rng, 2)} {rng.randint(200, 999)}{digits(rng, 3)}", "Phone"
    return style, num, f"{ctx}: {num}", False


def gen_phone_fr(rng: random.Random, i: int) -> Value:
    style = _styled(i, ["mobile", "fixe", "plus33", "dots"])
    pairs = [f"{rng.randint(10, 99)}" for _ in range(4)]
    if style == "mobile":
        num, ctx = f"0{rng.choice('67')} " + " ".join(pairs), "Portable"
    elif style == "fixe":
        num, ctx = f"0{rng.choice('12345')} " + " ".join(pairs), "Tél."
    elif style == "plus33":
        num, ctx = f"+33 {rng.choice('67')} " + " ".join(pairs), "Numéro de téléphone"
    else:
        num, ctx = f"0{rng.choice('679')}." + ".".join(pairs), "Tél. portable"
    return style, num, f"{ctx} : {num}", False


def gen_phone_de(rng: random.Random, i: int) -> Value:
    style = _styled(i, ["handy", "berlin", "muenchen", "plus49", "slash"])
    prefix = rng.choice(["151", "152", "157", "160", "162", "170", "171", "172", "176", "177", "179"])
    if style == "handy":
        num, ctx = f"0{prefix} {digits(rng, 8 if prefix.startswith('15') else 7)}", "Handy"
    elif style == "berlin":
        num, ctx = f"030 {rng.randint(2, 9)}{digits(rng, 7)}", "Tel."
    elif style == "muenchen":
        num, ctx = f"089 {rng.randint(2, 9)}{digits(rng, 3)} {digits(rng, 4)}", "Telefon"
    elif style == "plus49":
        num, ctx = f"+49 {prefix} {digits(rng, 7)}", "Mobil"
    else:
        num, ctx = f"0{rng.choice(['221', '40', '69', '711'])}/{rng.randint(2, 9)}{digits(rng, 6)}", "Rufnummer"
    return style, num, f"{ctx}: {num}", False


def gen_phone_in(rng: random.Random, i: int) -> Value:
    mob = str(rng.randint(6, 9)) + digits(rng, 9)
    style = _styled(i, ["plus91", "plain", "zero", "split"])
    num = {"plus91": f"+91 {mob[:5]} {mob[5:]}", "plain": mob, "zero": f"0{mob}", "split": f"+91-{mob}"}[style]
    ctx = rng.choice(["Mobile", "Mobile No.", "Phone", "मोबाइल नंबर", "WhatsApp", "Contact no"])
    return style, num, f"{ctx}: {num}", False


def _ssn(rng: random.Random) -> tuple[str, str, str]:
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def gen_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = _ssn(rng)
    style = _styled(i, ["dashed", "spaced", "compact"])
    num = {"dashed": f"{a}-{g}-{s}", "spaced": f"{a} {g} {s}", "compact": a + g + s}[style]
    ctx = rng.choice(["SSN", "Social Security Number", "ssn", "SSN (survey consent form)", "soc_sec_no"])
    return style, num, f"{ctx}: {num}", False


CARD_IINS = [("visa", "4", 16), ("mastercard", "5{1-5}", 16), ("mastercard2", "2{221-720}", 16), ("amex", "3{4,7}", 15),
             ("discover", "6011", 16), ("discover65", "65", 16), ("jcb", "35{28-89}", 16), ("diners", "36", 14),
             ("unionpay", "62", 16)]


def _iin(rng: random.Random, spec: str) -> str:
    if "{" not in spec:
        return spec
    head, rest = spec.split("{")
    rest = rest.rstrip("}")
    if "," in rest:
        return head + rng.choice(rest.split(","))
    lo, hi = rest.split("-")
    return head + str(rng.randint(int(lo), int(hi))).zfill(len(lo))


def gen_card(rng: random.Random, i: int) -> Value:
    brand, spec, length = CARD_IINS[i % len(CARD_IINS)]
    body = _iin(rng, spec)
    body += digits(rng, length - 1 - len(body))
    number = body + luhn_digit(body)
    sep = rng.choice([" ", "-", ""])
    printed = group_card(number, sep) if sep else number
    ctx = rng.choice(["card number", "Kartennummer", "numéro de carte", "cc_number", "payment card"])
    return brand, printed, f"{ctx}: {printed}", False


IBAN_STRUCTURES = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
                   "NL": "4a10n", "BE": "3n7n2n", "CH": "5n12c", "PL": "8n16n", "AT": "5n11n", "IE": "4a6n8n"}


def gen_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_STRUCTURES)[i % len(IBAN_STRUCTURES)]
    b = bban(rng, IBAN_STRUCTURES[country])
    iban = country + iban_check(country, b) + b
    printed = group(iban, 4, " ") if i % 2 else iban
    ctx = rng.choice(["IBAN", "Bankverbindung (IBAN)", "IBAN pour le remboursement", "payout IBAN", "Cuenta IBAN"])
    return country, printed, f"{ctx}: {printed}", False


# ---- further target kinds (the domain's own) ------------------------------------------------------------------

def gen_jwt(rng: random.Random, i: int) -> Value:
    header = b64url(_dump({"alg": "HS256", "typ": "JWT"}).encode())
    first, last = _person(rng)
    claims = {"sub": f"{first}.{last}", "iat": 1780000000 + rng.randint(0, 9 ** 7), "scope": "jupyter:server"}
    token = f"{header}.{b64url(_dump(claims).encode())}.{b64url(rng.randbytes(32))}"
    style = _styled(i, ["bearer", "cookie", "env", "query"])
    if style == "bearer":
        return style, token, f"Authorization: Bearer {token}", False
    if style == "cookie":
        return style, token, f"Cookie: ray-dashboard-auth={token}", False
    if style == "env":
        return style, token, f"JUPYTERHUB_API_TOKEN_JWT={token}", False
    return style, token, f"wss://notebooks.lab/api/kernels/{uuid.UUID(int=rng.getrandbits(128))}/channels?" \
                         f"token={token}", False


def gen_hf_token(rng: random.Random, i: int) -> Value:
    tok = "hf_" + pick(rng, ALNUM, 34)
    style = _styled(i, ["token_file", "env", "login", "git_remote", "python"])
    if style == "token_file":
        return style, tok, f"$ cat ~/.cache/huggingface/token\n{tok}", False
    if style == "env":
        return style, tok, f"HF_TOKEN={tok}", False
    if style == "login":
        return style, tok, f"$ huggingface-cli login --token {tok} --add-to-git-credential\nToken is valid " \
                           "(permission: write).", False
    if style == "git_remote":
        return style, tok, f"origin https://user:{tok}@huggingface.co/datasets/lab/surveys (push)", False
    return style, tok, f"login(token=\"{tok}\")", False


def gen_wandb_key(rng: random.Random, i: int) -> Value:
    key = _hex(rng, 40)
    style = _styled(i, ["netrc", "env", "login", "settings"])
    if style == "netrc":
        return style, key, f"machine api.wandb.ai\n  login user\n  password {key}", False
    if style == "env":
        return style, key, f"WANDB_API_KEY={key}", False
    if style == "login":
        return style, key, f"$ wandb login {key}\nwandb: Appending key for api.wandb.ai to your netrc file", False
    return style, key, f"wandb.login(key='{key}', relogin=True)", False


def gen_openai_key(rng: random.Random, i: int) -> Value:
    if i % 2:
        key = "sk-proj-" + pick(rng, URLSAFE, 74) + "T3BlbkFJ" + pick(rng, URLSAFE, 74)
    else:
        key = "sk-" + pick(rng, ALNUM, 20) + "T3BlbkFJ" + pick(rng, ALNUM, 20)
    style = _styled(i, ["env", "lm_eval", "python", "dotenv"])
    if style == "env":
        return style, key, f"OPENAI_API_KEY={key}", False
    if style == "lm_eval":
        return style, key, f"OPENAI_API_KEY={key} lm_eval --model openai-chat-completions --tasks gsm8k", False
    if style == "python":
        return style, key, f"client = OpenAI(api_key=\"{key}\")", False
    return style, key, f"# .env\nOPENAI_API_KEY=\"{key}\"", False


def gen_github_token(rng: random.Random, i: int) -> Value:
    if i % 3 == 2:
        tok = "github_pat_" + pick(rng, ALNUM, 22) + "_" + pick(rng, ALNUM, 59)
    else:
        tok = crc_token(rng, rng.choice(["ghp_", "gho_", "ghs_"]))
    style = _styled(i, ["remote", "env", "pip_install", "header"])
    if style == "remote":
        return style, tok, f"git clone https://{tok}@github.com/lab/private-evals.git", False
    if style == "env":
        return style, tok, f"GITHUB_TOKEN={tok}", False
    if style == "pip_install":
        return style, tok, f"pip install git+https://{tok}@github.com/lab/trainer.git@v0.4.1", False
    return style, tok, f"Authorization: token {tok}", False


def _pem_body(pem: str) -> str:
    lines = pem.strip().splitlines()
    return "\n".join(lines[1:-1])


def gen_private_key(rng: random.Random, i: int) -> Value:
    if i % 2:
        seed = rng.randbytes(32)
        pub = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, pub, rng.randbytes(4), b"trainer@gpu-node")
        b64 = base64.b64encode(blob).decode()
        pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(group(b64, 70, "\n").split("\n")) + \
              "\n-----END OPENSSH PRIVATE KEY-----\n"
        style = "openssh"
    else:
        key = ec.derive_private_key(rng.randint(1, 2 ** 255), ec.SECP256R1())
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
        style = "pkcs8_ec"
    return style, _pem_body(pem), f"$ cat ~/.ssh/id_cluster\n{pem}", False


def gen_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, B32, rng.choice([16, 32]))
    style = _styled(i, ["otpauth", "setup_key", "yaml"])
    if style == "otpauth":
        return style, seed, f"otpauth://totp/HPC%20Cluster:{rng.choice(USERS)}?secret={seed}&issuer=HPC%20Cluster" \
                            "&digits=6&period=30", False
    if style == "setup_key":
        shown = group(seed.lower(), 4, " ")
        return style, shown, f"Can't scan? Enter this setup key: {shown}", False
    return style, seed, f"mfa:\n  totp_secret: {seed}", False


def gen_session_cookie(rng: random.Random, i: int) -> Value:
    style = _styled(i, ["jupyterhub", "streamlit", "oauth2_proxy", "mlflow_session", "gradio"])
    if style == "jupyterhub":
        val = _hex(rng, 32)
        return style, val, f"Set-Cookie: jupyterhub-session-id={val}; HttpOnly; Path=/; Secure", False
    if style == "streamlit":
        val = pick(rng, URLSAFE, 43)
        return style, val, f"Cookie: _streamlit_session={val}; _ga=GA1.1.{digits(rng, 9)}.{digits(rng, 10)}", False
    if style == "oauth2_proxy":
        val = b64url(rng.randbytes(48)) + "|" + digits(rng, 10) + "|" + b64url(rng.randbytes(32))
        return style, val, f"Cookie: _oauth2_proxy={val}", False
    if style == "mlflow_session":
        val = pick(rng, LOWER + string.digits, 32)
        return style, val, f"curl -b 'session={val}' https://mlflow.research.lan/api/2.0/mlflow/runs/search", False
    val = pick(rng, URLSAFE, 40)
    return style, val, f"Set-Cookie: access-token={val}; Path=/; SameSite=None; Secure", False


def gen_signed_url(rng: random.Random, i: int) -> Value:
    style = _styled(i, ["s3_presigned", "gcs_v4", "azure_sas"])
    if style == "s3_presigned":
        sig = _hex(rng, 64)
        url = f"https://ml-datasets.s3.eu-west-1.amazonaws.com/raw/train-{digits(rng, 5)}.parquet?X-Amz-Algorithm=" \
              f"AWS4-HMAC-SHA256&X-Amz-Credential={_akid(rng)}%2F20261207%2Feu-west-1%2Fs3%2Faws4_request&" \
              f"X-Amz-Date=20261207T031500Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature={sig}"
    elif style == "gcs_v4":
        sig = _hex(rng, 512)
        url = f"https://storage.googleapis.com/lab-checkpoints/step-{rng.randint(1000, 99000)}.pt?X-Goog-Algorithm=" \
              "GOOG4-RSA-SHA256&X-Goog-Credential=trainer%40proj.iam.gserviceaccount.com%2F20261207%2Fauto%2F" \
              f"storage%2Fgoog4_request&X-Goog-Date=20261207T031500Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host" \
              f"&X-Goog-Signature={sig}"
    else:
        raw = base64.b64encode(rng.randbytes(32)).decode()
        sig = raw.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
        url = f"https://mldata.blob.core.windows.net/eval/outputs.jsonl?sv=2022-11-02&ss=b&srt=o&sp=r&" \
              f"se=2026-12-31T00:00:00Z&spr=https&sig={sig}"
    return style, sig, f"Download link (expires in 1h): {url}", False


def gen_kaggle_key(rng: random.Random, i: int) -> Value:
    key = _hex(rng, 32)
    first, last = _person(rng)
    style = _styled(i, ["kaggle_json", "env", "colab"])
    if style == "kaggle_json":
        return style, key, f"$ cat ~/.kaggle/kaggle.json\n{{\"username\":\"{first}{last}\",\"key\":\"{key}\"}}", False
    if style == "env":
        return style, key, f"KAGGLE_USERNAME={first}{last}\nKAGGLE_KEY={key}", False
    return style, key, f"os.environ['KAGGLE_KEY'] = '{key}'", False


# ---- national ids (outside the target) -----------------------------------------------------------------------

def _birth(rng: random.Random) -> tuple[int, int, int]:
    return rng.randint(1, 28), rng.randint(1, 12), rng.randint(1950, 1999)


def gen_fi_hetu(rng: random.Random, i: int) -> Value:
    d, m, y = _birth(rng)
    ind = rng.randint(2, 899)
    base = f"{d:02d}{m:02d}{y % 100:02d}"
    check = "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(base + f"{ind:03d}") % 31]
    hetu = f"{base}-{ind:03d}{check}"
    return "hetu", hetu, f"Henkilötunnus: {hetu}", False


def gen_se_pnr(rng: random.Random, i: int) -> Value:
    d, m, y = _birth(rng)
    nine = f"{y % 100:02d}{m:02d}{d:02d}{digits(rng, 3)}"
    pnr = f"{nine[:6]}-{nine[6:]}{luhn_digit(nine)}"
    return "pnr", pnr, f"Personnummer: {pnr}", False


def gen_no_fnr(rng: random.Random, i: int) -> Value:
    w1, w2 = [3, 7, 6, 1, 8, 9, 4, 5, 2], [5, 4, 3, 2, 7, 6, 5, 4, 3, 2]
    while True:
        d, m, y = _birth(rng)
        nine = [int(c) for c in f"{d:02d}{m:02d}{y % 100:02d}{rng.randint(0, 499):03d}"]
        k1 = (11 - sum(a * b for a, b in zip(w1, nine, strict=True)) % 11) % 11
        k2 = (11 - sum(a * b for a, b in zip(w2, nine + [k1], strict=True)) % 11) % 11
        if k1 != 10 and k2 != 10:
            fnr = "".join(map(str, nine)) + f"{k1}{k2}"
            return "fnr", fnr, f"Fødselsnummer: {fnr}", False


def gen_cn_ric(rng: random.Random, i: int) -> Value:
    d, m, y = _birth(rng)
    body = rng.choice(["110105", "310115", "440305", "510107"]) + f"{y}{m:02d}{d:02d}" + digits(rng, 3)
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    ric = body + "10X98765432"[sum(int(c) * w for c, w in zip(body, weights, strict=True)) % 11]
    return "ric", ric, f"身份证号码：{ric}", False


def gen_be_nrn(rng: random.Random, i: int) -> Value:
    d, m, y = _birth(rng)
    nine = f"{y % 100:02d}{m:02d}{d:02d}{rng.randint(1, 997):03d}"
    nrn = f"{nine[:2]}.{nine[2:4]}.{nine[4:6]}-{nine[6:]}.{97 - int(nine) % 97:02d}"
    return "nrn", nrn, f"Rijksregisternummer / numéro de registre national : {nrn}", False


def gen_fr_nir(rng: random.Random, i: int) -> Value:
    _d, m, y = _birth(rng)
    body = f"{rng.randint(1, 2)}{y % 100:02d}{m:02d}{rng.randint(1, 95):02d}{rng.randint(1, 999):03d}" \
           f"{rng.randint(1, 999):03d}"
    key = 97 - int(body) % 97
    nir = f"{body[0]} {body[1:3]} {body[3:5]} {body[5:7]} {body[7:10]} {body[10:13]} {key:02d}"
    return "nir", nir, f"N° de sécurité sociale : {nir}", False


def gen_br_cpf(rng: random.Random, i: int) -> Value:
    nums = [int(c) for c in digits(rng, 9)]
    for n in (10, 11):
        total = sum(d * w for d, w in zip(nums, range(n, 1, -1), strict=True))
        nums.append(0 if total % 11 < 2 else 11 - total % 11)
    s = "".join(map(str, nums))
    cpf = f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"
    return "cpf", cpf, f"CPF do respondente: {cpf}", False


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": gen_password, "aws_secret": gen_aws_secret, "webhook": gen_webhook, "stripe_whsec": gen_stripe_whsec,
    "connection_string": gen_connection_string, "labelled_key": gen_labelled_key, "disguised": gen_disguised,
    "email": gen_email, "phone_us_ca": gen_phone_us_ca, "phone_uk": gen_phone_uk, "phone_fr": gen_phone_fr,
    "phone_de": gen_phone_de, "phone_in": gen_phone_in, "ssn": gen_ssn, "card": gen_card, "iban": gen_iban,
    "jwt": gen_jwt, "hf_token": gen_hf_token, "wandb_key": gen_wandb_key, "openai_key": gen_openai_key,
    "github_token": gen_github_token, "private_key": gen_private_key, "totp_seed": gen_totp_seed,
    "session_cookie": gen_session_cookie, "signed_url": gen_signed_url, "kaggle_key": gen_kaggle_key,
    "fi_hetu": gen_fi_hetu, "se_pnr": gen_se_pnr, "no_fnr": gen_no_fnr, "cn_ric": gen_cn_ric, "be_nrn": gen_be_nrn,
    "fr_nir": gen_fr_nir, "br_cpf": gen_br_cpf,
}


# ---- carriers -------------------------------------------------------------------------------------------------

AGENT_LEADS = {
    "en": "Here is what I found in the run logs:", "de": "Das habe ich in den Run-Logs gefunden:",
    "fr": "Voici ce que j'ai trouvé dans les journaux d'exécution :", "es": "Esto es lo que encontré en los registros:",
    "pt": "Veja o que encontrei nos logs da execução:", "it": "Ecco cosa ho trovato nei log dell'esecuzione:",
    "nl": "Dit heb ik in de run-logs gevonden:", "pl": "Oto co znalazłem w logach przebiegu:",
    "cs": "Tohle jsem našel v lozích běhu:", "hu": "Ezt találtam a futás naplóiban:",
    "ro": "Iată ce am găsit în jurnalele rulării:", "sv": "Det här hittade jag i körningsloggarna:",
    "da": "Her er hvad jeg fandt i kørselslogfilerne:", "no": "Dette fant jeg i kjøringsloggene:",
    "fi": "Tämän löysin ajon lokeista:", "el": "Αυτό βρήκα στα αρχεία καταγραφής:", "ru": "Вот что я нашёл в логах:",
    "uk": "Ось що я знайшов у журналах запуску:", "tr": "Çalıştırma günlüklerinde bulduklarım:",
    "ar": "هذا ما وجدته في سجلات التشغيل:", "he": "זה מה שמצאתי ביומני הריצה:", "hi": "रन लॉग में मुझे यह मिला:",
    "ja": "実行ログで見つかった内容です:", "ko": "실행 로그에서 찾은 내용입니다:",
    "zh": "这是我在运行日志中发现的内容：",
    "vi": "Đây là những gì tôi tìm thấy trong nhật ký chạy:", "id": "Ini yang saya temukan di log run:",
}


def _slurm(rng: random.Random, s: str) -> str:
    return f"#!/bin/bash\n#SBATCH --job-name=sft-{rng.randint(1, 99)}\n#SBATCH --gres=gpu:h100:4\n" \
           f"#SBATCH --time=24:00:00\nmodule load cuda/12.4\n{s}\nsrun python train.py --config cfg.yaml"


def _sacct(rng: random.Random, s: str) -> str:
    return f"JobID    JobName  State     Elapsed\n{rng.randint(10 ** 6, 10 ** 7)} sft-run COMPLETED " \
           f"05:{rng.randint(10, 59)}:02\n# job comment: {s}"


def _banner(rng: random.Random, s: str) -> str:
    return f"Last login: Mon Dec  7 0{rng.randint(1, 9)}:12:44 2026 from 10.{rng.randint(0, 255)}.3.4\n" \
           f"*** Scratch is purged after 30 days. Quota: 2 TB ***\n[{rng.choice(USERS)}@login1 ~]$ {s}"


def _ssh_config(rng: random.Random, s: str) -> str:
    return f"Host cluster\n  HostName login1.hpc.uni-example.de\n  User {rng.choice(USERS)}\n  IdentityFile " \
           f"~/.ssh/id_cluster\n# {s}"


def _conda(rng: random.Random, s: str) -> str:
    """`conda env export` output, then the file the agent printed next (indenting it would change the value)."""
    return f"$ conda env export\nname: llm-train\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n" \
           f"  - pip:\n    - torch==2.5.{rng.randint(0, 1)}\nprefix: /opt/conda/envs/llm-train\n" \
           f"$ cat activate.d/env.sh\n{s}"


def _env_dump(rng: random.Random, s: str) -> str:
    runtime = rng.choice(["COLAB_RELEASE_TAG=release-colab_20261201-060124_RC00",
                          "SAGEMAKER_INTERNAL_IMAGE_URI=pytorch-training:2.5-gpu-py311",
                          "VERTEX_PRODUCT=WORKBENCH_INSTANCE"])
    return f"$ env | sort\nCUDA_VERSION=12.4.1\nHOME=/root\n{runtime}\n{s}\nPATH=/opt/conda/bin:/usr/bin"


def _wandb_log(rng: random.Random, s: str) -> str:
    return f"wandb: Tracking run with wandb version 0.19.{rng.randint(0, 9)}\nwandb: Run data is saved locally in " \
           f"/scratch/wandb/run-20261207_0315-{pick(rng, LOWER + string.digits, 8)}\n{s}\nwandb: 🚀 View run at " \
           "https://wandb.ai/lab/sft"


def _mlflow_log(rng: random.Random, s: str) -> str:
    return f"{_ts(rng)} INFO mlflow.tracking.fluent: Experiment with name 'eval' does not exist. Creating.\n" \
           f"{_ts(rng)} DEBUG mlflow.store: {s}"


def _hf_cli(rng: random.Random, s: str) -> str:
    return f"$ huggingface-cli whoami\nlab-bot\norgs:  lab-research\n$ huggingface-cli upload lab/model-" \
           f"{rng.randint(1, 9)}b ./ckpt\n{s}"


def _ray_log(rng: random.Random, s: str) -> str:
    return f"(raylet) [{_ts(rng)},{rng.randint(100, 999)} I {rng.randint(1000, 9999)}] worker_pool.cc:532: " \
           f"Started worker with env\n(TrainTrainable pid={rng.randint(1000, 99999)}) {s}"


def _dask_log(rng: random.Random, s: str) -> str:
    return f"{_ts(rng)} - distributed.scheduler - INFO - Receive client connection: Client-{_hex(rng, 8)}\n" \
           f"{_ts(rng)} - distributed.worker - WARNING - {s}"


def _dataset_card(rng: random.Random, s: str) -> str:
    return f"---\nlicense: cc-by-4.0\ntask_categories:\n- text-classification\n---\n# Survey responses " \
           f"v{rng.randint(1, 5)}\n\n## Personal and Sensitive Information\n\n{s}\n"


def _shell_log(rng: random.Random, s: str) -> str:
    return f"+ aws s3 sync s3://ml-datasets/raw /scratch/raw --only-show-errors\n+ {s}\n" \
           f"download: s3://ml-datasets/raw/part-{rng.randint(0, 999):05d}.parquet to raw/"


def _agent_msg(rng: random.Random, s: str) -> str:
    lang = rng.choice(list(AGENT_LEADS))
    return f"{AGENT_LEADS[lang]}\n\n```\n{s}\n```"


def _pip_conf(rng: random.Random, s: str) -> str:
    return f"# /etc/pip.conf on gpu-node{rng.randint(1, 64):03d}\n[global]\ntimeout = 60\n{s}"


def _squeue(rng: random.Random, s: str) -> str:
    return f"JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\n{rng.randint(10 ** 6, 10 ** 7)} gpu eval " \
           f"{rng.choice(USERS)} R 1:02:33 2 gpu[0{rng.randint(10, 40)}-0{rng.randint(41, 80)}]\n$ scontrol show job " \
           f"| grep Comment\n   Comment={s}"


TEXT_CARRIERS: dict[str, Callable[[random.Random, str], str]] = {
    "slurm_script": _slurm, "sacct": _sacct, "hpc_banner": _banner, "ssh_config": _ssh_config, "conda_env": _conda,
    "runtime_env": _env_dump, "wandb_log": _wandb_log, "mlflow_log": _mlflow_log, "hf_cli": _hf_cli,
    "ray_log": _ray_log, "dask_log": _dask_log, "dataset_card": _dataset_card, "shell_log": _shell_log,
    "agent_msg": _agent_msg, "pip_conf": _pip_conf, "squeue": _squeue, "notebook_terminal": lambda r, s:
        f"In [{r.randint(1, 80)}]: !cat .env\n{s}",
}


def _nb(cell: dict[str, object]) -> dict[str, object]:
    return {"cells": [cell], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
            "nbformat": 4, "nbformat_minor": 5}


def _ipynb_source(rng: random.Random, s: str) -> str:
    return _dump(_nb({"cell_type": "code", "id": _hex(rng, 8), "execution_count": rng.randint(1, 60),
                      "metadata": {}, "source": ["import os\n", f"# {s}\n" if "\n" not in s else s],
                      "outputs": []}))


def _ipynb_stream(rng: random.Random, s: str) -> str:
    return _dump(_nb({"cell_type": "code", "id": _hex(rng, 8), "execution_count": rng.randint(1, 60),
                      "metadata": {}, "source": ["!env | grep -i key"],
                      "outputs": [{"output_type": "stream", "name": "stdout", "text": [s + "\n"]}]}))


def _ipynb_error(rng: random.Random, s: str) -> str:
    return _dump(_nb({"cell_type": "code", "id": _hex(rng, 8), "execution_count": rng.randint(1, 60),
                      "metadata": {}, "source": ["trainer.train()"],
                      "outputs": [{"output_type": "error", "ename": "ValueError", "evalue": f"bad config: {s}",
                                   "traceback": ["\u001b[0;31mValueError\u001b[0m Traceback (most recent call last)",
                                                 f"Cell In[{rng.randint(1, 60)}], line 3", s]}]}))


def _wandb_meta(rng: random.Random, s: str) -> str:
    return _dump({"os": "Linux-5.15", "python": "3.11.9", "program": "train.py", "args": ["--notes", s],
                  "gpu": "NVIDIA H100 80GB HBM3", "gpu_count": 8, "cuda": "12.4"})


def _mlflow_run(rng: random.Random, s: str) -> str:
    return _dump({"run": {"info": {"run_id": _hex(rng, 32), "experiment_id": str(rng.randint(1, 900)),
                                   "status": "FINISHED"},
                          "data": {"params": [{"key": "lr", "value": "3e-4"}, {"key": "notes", "value": s}],
                                   "tags": [{"key": "mlflow.user", "value": rng.choice(USERS)}]}}})


def _eval_results(rng: random.Random, s: str) -> str:
    return _dump({"results": {"gsm8k": {"exact_match,strict-match": round(rng.random(), 4)}},
                  "config": {"model": "hf", "model_args": s, "batch_size": "auto"},
                  "git_hash": _hex(rng, 7)})


def _jsonl_row(rng: random.Random, s: str) -> str:
    return _dump({"id": rng.randint(1, 99999), "text": s, "label": rng.choice(["neg", "pos", "neutral"]),
                  "split": "train"})


def _hf_api(rng: random.Random, s: str) -> str:
    return _dump({"id": f"lab/model-{rng.randint(1, 9)}b", "sha": _hex(rng, 40), "private": True,
                  "cardData": {"license": "apache-2.0"}, "siblings": [{"rfilename": "README.md"}],
                  "description": s})


def _ray_job(rng: random.Random, s: str) -> str:
    return _dump({"job_id": f"raysubmit_{pick(rng, ALNUM, 16)}", "status": "FAILED", "entrypoint": "python eval.py",
                  "runtime_env": {"env_vars": {"NOTE": s}}, "message": "Job failed"})


def _sagemaker(rng: random.Random, s: str) -> str:
    return _dump({"TrainingJobName": f"sft-{_ts(rng)[:10]}-{rng.randint(100, 999)}",
                  "HyperParameters": {"epochs": "3", "extra": s},
                  "RoleArn": "arn:aws:iam::111122223333:role/SageMakerExecution"})


def _colab_metadata(rng: random.Random, s: str) -> str:
    return _dump({"metadata": {"colab": {"provenance": [], "gpuType": "T4"}, "accelerator": "GPU"},
                  "cells": [{"cell_type": "markdown", "metadata": {"id": pick(rng, ALNUM, 12)}, "source": [s]}],
                  "nbformat": 4, "nbformat_minor": 0})


JSON_CARRIERS: dict[str, Callable[[random.Random, str], str]] = {
    "ipynb_source": _ipynb_source, "ipynb_stream": _ipynb_stream, "ipynb_error": _ipynb_error,
    "wandb_metadata": _wandb_meta, "mlflow_run": _mlflow_run, "eval_results": _eval_results,
    "jsonl_row": _jsonl_row, "hf_api": _hf_api, "ray_job": _ray_job, "sagemaker_job": _sagemaker,
    "colab_notebook": _colab_metadata,
}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """Put a value's snippet in a carrier: every third (raw_only ones excepted) in JSON, the rest in text; the
    index walks the carriers so each kind meets most of them."""
    snippet, raw_only = value[2], value[3]
    if i % 3 == 0 and not raw_only:
        name = list(JSON_CARRIERS)[(i // 3) % len(JSON_CARRIERS)]
        return name, JSON_CARRIERS[name](rng, snippet), True
    name = list(TEXT_CARRIERS)[(i * 7) % len(TEXT_CARRIERS)]
    return name, TEXT_CARRIERS[name](rng, snippet), False


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, deterministic."""
    rng = random.Random(SEED)
    for kind, gen in KINDS.items():
        for i in range(PER_KIND):
            value = gen(rng, i)
            carrier, text, is_json = carry(rng, i, value)
            yield Case(kind, f"{carrier}/{value[0]}", value[1], text, is_json)


# ---- near misses ----------------------------------------------------------------------------------------------

def _luhn_bad(rng: random.Random) -> str:
    body = "5" + str(rng.randint(1, 5)) + digits(rng, 13)
    return body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)


def _gpu_uuid(rng: random.Random) -> str:
    return f"GPU-{_hex(rng, 8)}-{_hex(rng, 4)}-{_hex(rng, 4)}-{_hex(rng, 4)}-{_hex(rng, 12)}"


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "cell_id": lambda r: _dump({"cell_type": "code", "id": _hex(r, 8), "execution_count": r.randint(1, 300),
                                "metadata": {"collapsed": False}}),
    "run_path": lambda r: f"wandb: Synced run {pick(r, LOWER + string.digits, 8)}: https://wandb.ai/lab/sft/runs/"
                          f"{pick(r, LOWER + string.digits, 8)}; mlflow run_id={_hex(r, 32)}",
    "slurm_ids": lambda r: f"Submitted batch job {r.randint(10 ** 6, 10 ** 8)}; NodeList=gpu[{r.randint(100, 199)}-"
                           f"{r.randint(200, 299)}] ArrayTaskId={r.randint(0, 63)} JobId={r.randint(10 ** 6, 10 ** 8)}",
    "gpu_uuid": lambda r: f"CUDA_VISIBLE_DEVICES={_gpu_uuid(r)} MIG-{_hex(r, 8)}-{_hex(r, 4)}-{_hex(r, 4)}-"
                          f"{_hex(r, 4)}-{_hex(r, 12)} bus_id=00000000:{r.randint(10, 99)}:00.0",
    "model_revision": lambda r: f"Downloading lab/model-7b revision={_hex(r, 40)} etag=\"{_hex(r, 64)}\" "
                                f"size={r.randint(10 ** 9, 10 ** 10)}",
    "metrics": lambda r: f"step={r.randint(1, 200000)} loss={r.uniform(0.1, 3):.6f} "
                         f"lr={r.choice(['3e-4', '1e-5', '2e-5'])} grad_norm={r.uniform(0, 5):.4f} "
                         f"tokens/s={r.randint(1000, 99999)}",
    "tensor_shape": lambda r: f"images: torch.Size([{r.choice([8, 16, 32, 64])}, 3, {r.choice([224, 384, 512])}, "
                              f"{r.choice([224, 384, 512])}]) resized to {r.randint(200, 4096)}x"
                              f"{r.randint(200, 4096)}px",
    "bbox": lambda r: _dump({"bbox": [round(r.uniform(0, 1280), 2) for _ in range(4)], "category_id": r.randint(1, 91),
                             "score": round(r.random(), 4), "lat": round(r.uniform(-90, 90), 6),
                             "lon": round(r.uniform(-180, 180), 6)}),
    "timestamp": lambda r: f"_timestamp={r.randint(1_760_000_000, 1_800_000_000)}.{digits(r, 6)} "
                           f"created {_ts(r)} UTC, runtime {r.randint(1, 99999)}s",
    "request_id": lambda r: f"x-amz-request-id: {pick(r, UPPER + string.digits, 16)} x-request-id: "
                            f"{uuid.UUID(int=r.getrandbits(128))} X-Cloud-Trace-Context: {_hex(r, 32)}/{digits(r, 19)}",
    "asset_hash": lambda r: f"<script src=\"/static/js/main.{_hex(r, 8)}.js?v={_hex(r, 20)}\"></script> "
                            f"<link href=\"/static/css/app.{_hex(r, 8)}.css\">",
    "csrf_field": lambda r: r.choice(["<input type=\"hidden\" name=\"_xsrf\" value=\"\">",
                                      "X-XSRFToken header missing (Jupyter _xsrf cookie name)",
                                      "csrfmiddlewaretoken field required", "CSRF_COOKIE_NAME = 'mlflow_csrf'",
                                      "WTF_CSRF_FIELD_NAME=csrf_token"]) + f" #{r.randint(1, 999)}",
    "selector_xpath": lambda r: f"document.querySelector('#output-{_hex(r, 6)} > div.jp-OutputArea-child:nth-child("
                                f"{r.randint(1, 9)})'); //div[@id='cell-{_hex(r, 8)}']/div[{r.randint(1, 5)}]",
    "version_pin": lambda r: f"torch=={r.choice(['2.4.1', '2.5.1'])}+cu{r.choice(['121', '124'])} "
                             f"transformers=={r.randint(4, 4)}.{r.randint(40, 48)}.{r.randint(0, 3)} "
                             f"cuda_{r.choice(['12.4.1', '12.6.3'])}_driver {r.randint(535, 565)}.{r.randint(10, 99)}",
    "placeholder": lambda r: r.choice(["HF_TOKEN=<your-hf-token>", "WANDB_API_KEY=${WANDB_API_KEY}",
                                       "password: ********", "email: you@example.com",
                                       "aws_secret_access_key = YOUR_SECRET_KEY", "api_key: \"{{ secrets.OPENAI }}\"",
                                       "Mot de passe : ********", "KAGGLE_KEY=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]),
    "masked": lambda r: r.choice([f"token hf_****{pick(r, ALNUM, 4)}", f"card ending {digits(r, 4)}",
                                  f"sk-...{pick(r, ALNUM, 4)}", f"+49 *** ****{digits(r, 3)}",
                                  f"SSN XXX-XX-{digits(r, 4)}", f"{r.choice(FIRST)[0]}***@***.com"]),
    "luhn_invalid": lambda r: f"Invoice reference {_luhn_bad(r)} (cloud billing)",
    "service_number": lambda r: r.choice([f"AWS Support: 1-888-{r.randint(200, 999)}-{digits(r, 4)} (toll-free)",
                                          f"Freephone 0800 {digits(r, 3)} {digits(r, 4)}",
                                          f"Support : 0 805 {digits(r, 2)} {digits(r, 2)} {digits(r, 2)} (gratuit)",
                                          f"Hotline (kostenfrei) 0800 {digits(r, 7)}",
                                          f"Toll free 1800-{digits(r, 3)}-{digits(r, 4)}"]),
    "doc_example": lambda r: r.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                       "huggingface-cli login  # paste a token from hf.co/settings/tokens",
                                       "wandb login  # find your key at https://wandb.ai/authorize",
                                       "postgresql://user:password@localhost/db"]),
    "order_tracking": lambda r: f"Order #{r.randint(10 ** 6, 10 ** 7)} for 8x H100 SXM shipped, UPS 1Z"
                                f"{pick(r, UPPER + string.digits, 16)}, quote Q-{r.randint(1000, 9999)}",
    "arn": lambda r: f"arn:aws:sagemaker:eu-west-1:{digits(r, 12)}:training-job/sft-{r.randint(1, 999)}; "
                     f"gs://lab-ckpt/{_hex(r, 8)}/step_{r.randint(100, 9999)}",
    "dataset_hash": lambda r: f"Dataset fingerprint {_hex(r, 16)}; sha256 {hashlib.sha256(r.randbytes(8)).hexdigest()}"
                              f"; rows {r.randint(1000, 10 ** 7):,}",
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), every third inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                name = list(JSON_CARRIERS)[i % len(JSON_CARRIERS)]
                text = JSON_CARRIERS[name](rng, text)
            yield sort, text
