"""The fifteenth redaction corpus: what agents see and say at work, the CONTENT of tool results and model turns.

Written blind to the detection rules and to the other corpora. The carriers are what a coding, browser, SQL, data,
support or voice agent reads and writes: query results as the clients print them (psql aligned and `\\x`, MySQL
boxes, sqlite3 `.mode line/box`, DuckDB and polars boxes, BigQuery `--format=prettyjson`, Snowflake SQL API JSON,
mongosh documents, Redis `HGETALL` replies, pandas reprs with `...` columns), Markdown tables, xlsx cells as TSV
under a merged header, PDF text (label on one line and value on the next, two columns interleaved), Playwright
accessibility snapshots, DOM inputs, Playwright and Selenium action logs, screenshot OCR, shell transcripts (`env`,
`cat .env`, `docker inspect`, `kubectl get cm -o yaml`, `heroku config`, `history`, `stripe listen`, `aws sts`),
file-edit tool calls (`str_replace` JSON, unified diffs, SEARCH/REPLACE blocks), MCP `tools/call` results (JSON in
`content[].text`), Zendesk/Intercom/Freshdesk ticket JSON, ASR transcripts (speaker tags, timestamps, digits in
irregular groups, `dash`/`dot` spoken) and Deepgram-style JSON, and the model's own turns (acting on a value,
reasoning over it, a final answer summarising a record) in 29 languages.

Formats, by kind (the source each value is written from):
- card: ISO/IEC 7812 IIN ranges of Visa, Mastercard (51-55, 2221-2720), Amex, Discover, JCB, Diners, UnionPay;
  Luhn (annex B). Providers' published test numbers (4242 4242 4242 4242, ...) are cards by every format rule
  and secrets by none; they are neither planted nor used as near misses. Order numbers failing Luhn are near misses.
- iban: ISO 13616 with the SWIFT IBAN registry's BBAN structures of 20 countries, MOD 97-10.
- ssn: SSA rules (area 001-899 but 666, group 01-99, serial 0001-9999); invalid ones are near misses.
- phone_*: the national numbering plans (NANP; Ofcom; ARCEP; BNetzA; TRAI; CNMC; Anatel; AGCOM; ACM; UKE; NKRZI;
  BTK; MIC Japan; MSIT Korea; Kominfo), national and E.164 forms, always beside a context word.
- email: RFC 5322 and RFC 6531 (internationalised), written plain, upper case, `%40` (RFC 3986), `\\u0040` (a raw
  JSON line printed as text), `&#64;` (HTML), `mailto:` (RFC 6068); `email_spoken` is an address as ASR writes it.
- webhook: Slack incoming webhooks and workflow triggers, Discord, Microsoft Teams (Office 365 connector and
  Power Automate `sig=`), Google Chat (`token=`), Mattermost, Zapier catch hooks, Rocket.Chat: the secret is the
  token-bearing path segment or query value only.
- stripe_whsec: Stripe's webhook signing secret `whsec_` (Stripe CLI `stripe listen`, API `webhook_endpoints`).
- connection_string: Azure Storage (`AccountKey=`), Service Bus (`SharedAccessKey=`), ADO.NET, JDBC (PostgreSQL,
  SQL Server, MySQL), ODBC (`Pwd=`), RFC 3986 userinfo of postgres/mongodb+srv/redis/amqp/mysql URIs: the
  password or key is the secret.
- aws_secret: AWS IAM secret access keys (40 characters of base64's alphabet) beside `AKIA`/`ASIA` key ids.
- labelled_key: an opaque key (hex, base62, base64url) after a label of words in one of 24 languages.
- disguised: GitHub (`ghp_`, CRC32 checksum), OpenAI, Stripe, Slack, AWS, Google and Hugging Face keys with
  U+200B/U+200C/U+200D/U+2060/U+FEFF, bidi controls (U+202A-U+202E, U+2066-U+2069), U+00AD inside, or in
  full-width forms (U+FF01-U+FF5E).
- openai_key (`sk-proj-`, `sk-svcacct-`, `sk-admin-` with `T3BlbkFJ`), anthropic_key (`sk-ant-api03-`,
  `sk-ant-admin01-`, ending `AA`), huggingface_token (`hf_` + 34 letters), replicate_token (`r8_` + 37), groq_key
  (`gsk_` + 52), mistral_key and cohere_key (32 and 40 base62 under their env names), langsmith_key (`lsv2_pt_`/
  `lsv2_sk_` hex), langfuse_key (`sk-lf-` + UUID; `pk-lf-` is the public half, a near miss), pinecone_key (`pcsk_`),
  supabase_key (service_role JWT, HS256, and `sb_secret_`; `sb_publishable_` is a near miss), vercel_token (24
  base62 under VERCEL_TOKEN), cloudflare_token (40 of `[A-Za-z0-9_-]`; 37-hex global key), github_token.
- private_key: PKCS#8, SEC1 and OpenSSH (PROTOCOL.key) PEM of EC P-256 and Ed25519 keys, and a GCP service-account
  JSON's `private_key`; the secret is the base64 body, the BEGIN/END lines are public.
- jwt (RFC 7519, HS256), auth_header (RFC 7617 Basic, RFC 6750 Bearer, RFC 7616 Digest `response=`, SigV4
  `Signature=`: the credential part), session_cookie (RFC 6265 values of framework session cookies).
- OUTSIDE_TARGET: br_cpf (mod 11), es_dni (mod 23 letter), pl_pesel (weights 1-3-7-9), cn_resident_id (ISO 7064
  MOD 11-2) — national ids with public checksums.

Each case is a `Case`: `kind`, `form` (`carrier/style`), `text` (as the trace holds it), `secret` (what must not
survive), `is_json` (the text is a JSON document: a tool result or a tool call's arguments). `generate()` yields
PER_KIND cases of each of the 49 kinds (a third carried as JSON; the issue's 16 kinds in 16 to 39 carriers each),
`generate_negatives()` 20 near misses of each of 20 sorts (git SHAs, image digests, UUIDs, ObjectIds, row counts,
prices, timestamps, masked cards, truncated keys, placeholders, secret references, Luhn-failing order numbers, IBANs
failing MOD 97, SSNs the SSA never issues, `aws configure list`, `gh secret list`, publishable keys, checksums,
versions, empty values). Deterministic, seeded per kind.
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
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

PER_KIND = 100
"""Cases written for each kind."""

OUTSIDE_TARGET = frozenset({"br_cpf", "es_dni", "pl_pesel", "cn_resident_id"})
"""Kinds printed but not held to the recall target: national ids with public checksums."""

HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "_-"
PW_SPECIALS = "!#$%*+-.=?@^_~:;()[]{}/,"


@dataclass(frozen=True)
class Case:
    """One planted value in the text of a tool result or a model turn."""

    kind: str
    form: str
    text: str
    secret: str
    is_json: bool

    @property
    def carried(self) -> str:
        """What the trace store holds: the text itself (a JSON document when `is_json`)."""
        return self.text


@dataclass(frozen=True)
class Value:
    """A value as printed, the part of it that must not survive, and its print style."""

    written: str
    secret: str
    style: str


@dataclass(frozen=True)
class Field:
    """A value placed in a record: its column or variable name, its label in words, the text's language."""

    col: str
    phrase: str
    lang: str
    value: Value


def jdump(obj: object, indent: int | None = None) -> str:
    """JSON as tools print it: UTF-8 kept, not escaped."""
    return json.dumps(obj, ensure_ascii=False, indent=indent)


# ---- words of the texts' languages ------------------------------------------------------------------------------

LANGS = ("en", "es", "pt", "de", "fr", "it", "nl", "pl", "uk", "ro", "hu", "sv", "no", "tr", "ru", "ar", "fa", "ur",
         "bn", "hi", "ja", "ko", "zh", "zh_tw", "th", "vi", "id", "ms", "sw")

TURNS = {
    "en": ("I'll use the {p} from the tool result: {v}.", "Found it. {p}: {v}"),
    "es": ("Voy a usar el dato del resultado, {p}: {v}.", "Listo. {p}: {v}"),
    "pt": ("Vou usar o dado que a ferramenta retornou, {p}: {v}.", "Encontrei. {p}: {v}"),
    "de": ("Ich übernehme aus dem Ergebnis {p}: {v}.", "Gefunden. {p}: {v}"),
    "fr": ("J'utilise la valeur renvoyée par l'outil, {p} : {v}.", "Trouvé. {p} : {v}"),
    "it": ("Uso il dato restituito dallo strumento, {p}: {v}.", "Trovato. {p}: {v}"),
    "nl": ("Ik gebruik uit het resultaat {p}: {v}.", "Gevonden. {p}: {v}"),
    "pl": ("Użyję danych z wyniku narzędzia, {p}: {v}.", "Znalazłem. {p}: {v}"),
    "uk": ("Використаю дані з результату, {p}: {v}.", "Знайшов. {p}: {v}"),
    "ro": ("Folosesc datele din rezultat, {p}: {v}.", "Am găsit. {p}: {v}"),
    "hu": ("Az eredményből ezt használom, {p}: {v}.", "Megvan. {p}: {v}"),
    "sv": ("Jag använder uppgiften från resultatet, {p}: {v}.", "Hittade den. {p}: {v}"),
    "no": ("Jeg bruker opplysningen fra resultatet, {p}: {v}.", "Fant den. {p}: {v}"),
    "tr": ("Araç sonucundaki bilgiyi kullanıyorum, {p}: {v}.", "Buldum. {p}: {v}"),
    "ru": ("Беру данные из результата, {p}: {v}.", "Нашёл. {p}: {v}"),
    "ar": ("سأستخدم البيانات من نتيجة الأداة، {p}: {v}", "وجدته. {p}: {v}"),
    "fa": ("از نتیجهٔ ابزار استفاده می‌کنم، {p}: {v}", "پیدا شد. {p}: {v}"),
    "ur": ("میں ٹول کے نتیجے سے یہ استعمال کروں گا، {p}: {v}", "مل گیا۔ {p}: {v}"),
    "bn": ("টুলের ফলাফল থেকে এটি ব্যবহার করছি, {p}: {v}", "পেয়েছি। {p}: {v}"),
    "hi": ("मैं टूल के नतीजे से यह इस्तेमाल करूँगा, {p}: {v}", "मिल गया। {p}: {v}"),
    "ja": ("ツールの結果から{p}を使います: {v}", "見つかりました。{p}: {v}"),
    "ko": ("도구 결과의 {p} 값을 사용합니다: {v}", "찾았습니다. {p}: {v}"),
    "zh": ("根据工具返回的结果，{p}：{v}", "找到了。{p}：{v}"),
    "zh_tw": ("根據工具回傳的結果，{p}：{v}", "找到了。{p}：{v}"),
    "th": ("จากผลลัพธ์ของเครื่องมือ {p}: {v}", "เจอแล้ว {p}: {v}"),
    "vi": ("Theo kết quả của công cụ, {p}: {v}.", "Đã tìm thấy. {p}: {v}"),
    "id": ("Saya pakai data dari hasil alat, {p}: {v}.", "Ketemu. {p}: {v}"),
    "ms": ("Saya guna data daripada hasil alat, {p}: {v}.", "Sudah jumpa. {p}: {v}"),
    "sw": ("Nitatumia taarifa kutoka kwa matokeo ya zana, {p}: {v}.", "Nimeipata. {p}: {v}"),
}
"""Model turns acting on a value, per language: {p} the label in words, {v} the value."""

WORDS = {
    "email": {"en": "email|e-mail address|contact email", "es": "correo electrónico|email",
              "pt": "e-mail|endereço de e-mail", "de": "E-Mail|E-Mail-Adresse",
              "fr": "e-mail|adresse électronique|courriel", "it": "e-mail|indirizzo email",
              "nl": "e-mailadres", "pl": "adres e-mail", "uk": "електронна пошта|email", "ro": "adresă de e-mail",
              "hu": "e-mail-cím", "sv": "e-postadress", "no": "e-postadresse", "tr": "e-posta adresi",
              "ru": "электронная почта|e-mail", "ar": "البريد الإلكتروني", "fa": "ایمیل", "ur": "ای میل",
              "bn": "ইমেইল", "hi": "ईमेल", "ja": "メールアドレス", "ko": "이메일", "zh": "电子邮箱", "zh_tw": "電子郵件",
              "th": "อีเมล", "vi": "email|địa chỉ email", "id": "email|alamat surel", "ms": "e-mel", "sw": "barua pepe"},
    "password": {"en": "password|passphrase", "es": "contraseña", "pt": "senha", "de": "Passwort|Kennwort",
                 "fr": "mot de passe", "it": "password", "nl": "wachtwoord", "pl": "hasło", "uk": "пароль",
                 "ro": "parola", "hu": "jelszó", "sv": "lösenord", "no": "passord", "tr": "şifre|parola",
                 "ru": "пароль", "ar": "كلمة المرور", "fa": "رمز عبور", "ur": "پاس ورڈ", "bn": "পাসওয়ার্ড",
                 "hi": "पासवर्ड", "ja": "パスワード", "ko": "비밀번호", "zh": "密码", "zh_tw": "密碼", "th": "รหัสผ่าน",
                 "vi": "mật khẩu", "id": "kata sandi", "ms": "kata laluan", "sw": "nenosiri"},
    "card": {"en": "card number|credit card", "es": "número de tarjeta", "pt": "número do cartão",
             "de": "Kartennummer", "fr": "numéro de carte", "it": "numero della carta", "nl": "kaartnummer",
             "pl": "numer karty", "uk": "номер картки", "ro": "numărul cardului", "hu": "kártyaszám",
             "sv": "kortnummer", "no": "kortnummer", "tr": "kart numarası", "ru": "номер карты", "ar": "رقم البطاقة",
             "fa": "شماره کارت", "ur": "کارڈ نمبر", "bn": "কার্ড নম্বর", "hi": "कार्ड नंबर", "ja": "カード番号",
             "ko": "카드 번호", "zh": "卡号", "zh_tw": "卡號", "th": "หมายเลขบัตร", "vi": "số thẻ",
             "id": "nomor kartu", "ms": "nombor kad", "sw": "namba ya kadi"},
    "iban": {"en": "IBAN|bank account (IBAN)", "es": "IBAN|cuenta IBAN", "pt": "IBAN", "de": "IBAN|Bankverbindung",
             "fr": "IBAN|RIB (IBAN)", "it": "IBAN|codice IBAN", "nl": "IBAN|rekeningnummer",
             "pl": "IBAN|numer rachunku",
             "uk": "IBAN|рахунок IBAN", "ro": "IBAN|cont IBAN", "hu": "IBAN|bankszámlaszám", "sv": "IBAN",
             "no": "IBAN|kontonummer", "tr": "IBAN", "ru": "IBAN", "ar": "رقم الآيبان", "fa": "شماره شبا",
             "ur": "IBAN", "bn": "IBAN", "hi": "IBAN", "ja": "IBAN", "ko": "IBAN", "zh": "IBAN 账号",
             "zh_tw": "IBAN 帳號", "th": "IBAN", "vi": "số IBAN", "id": "IBAN", "ms": "IBAN", "sw": "IBAN"},
    "key": {"en": "API key|secret key|access token", "es": "clave de API|clave secreta",
            "pt": "chave de API|token de acesso",
            "de": "API-Schlüssel|geheimer Schlüssel", "fr": "clé API|clé secrète", "it": "chiave API|chiave segreta",
            "nl": "API-sleutel|geheime sleutel", "pl": "klucz API|token dostępu", "uk": "API-ключ|секретний ключ",
            "ro": "cheie API|cheia secretă", "hu": "API-kulcs|titkos kulcs", "sv": "API-nyckel|hemlig nyckel",
            "no": "API-nøkkel|hemmelig nøkkel", "tr": "API anahtarı|gizli anahtar", "ru": "API-ключ|секретный ключ",
            "ar": "مفتاح API|المفتاح السري", "fa": "کلید API|کلید محرمانه", "ur": "API کلید", "bn": "API কী",
            "hi": "API कुंजी|सीक्रेट की", "ja": "APIキー|シークレットキー", "ko": "API 키|비밀 키",
            "zh": "API 密钥|访问令牌",
            "zh_tw": "API 金鑰|存取權杖", "th": "คีย์ API", "vi": "khóa API|mã truy cập", "id": "kunci API|token akses",
            "ms": "kunci API", "sw": "ufunguo wa API"},
}
"""Labels in words per concept and language, `|`-separated."""

PHONE_WORDS = {
    "en": "phone|mobile|tel.|call me at|cell|contact number|callback number",
    "es": "teléfono|móvil|tel.|llámame al", "pt": "telefone|celular|tel.|me liga no|WhatsApp",
    "de": "Telefon|Handy|Tel.|Mobil|Rufnummer", "fr": "téléphone|portable|tél.|appelez-moi au|mobile",
    "it": "telefono|cellulare|tel.|chiamami al", "nl": "telefoon|mobiel|tel.|bel me op",
    "pl": "telefon|komórka|tel.|numer telefonu", "uk": "телефон|мобільний|тел.|номер телефону",
    "tr": "telefon|cep telefonu|tel.|GSM", "ja": "電話番号|携帯電話|TEL|連絡先電話", "ko": "전화번호|휴대폰|연락처",
    "id": "telepon|nomor HP|no. WA|hubungi saya di", "hi": "फ़ोन नंबर|मोबाइल", "bn": "ফোন নম্বর|মোবাইল",
}
"""Phone context words per language."""

NAMES = {
    "en": "Emily Carter|James O'Neill|Priya Raman", "es": "Lucía Fernández|Javier Ortega",
    "pt": "Ana Beatriz Souza|João Pedro Lima",
    "de": "Jürgen Weiß|Katrin Bauer", "fr": "Camille Lefèvre|Théo Garnier", "it": "Giulia Romano|Marco Bianchi",
    "nl": "Sanne de Vries|Bram Jansen", "pl": "Agnieszka Wójcik|Piotr Zieliński", "uk": "Олена Коваленко|Тарас Шевчук",
    "ro": "Ioana Popescu|Andrei Ionescu", "hu": "Kovács Eszter|Nagy Bence", "sv": "Elin Lindqvist|Oskar Berg",
    "no": "Ingrid Hansen|Magnus Dahl", "tr": "Elif Yılmaz|Mehmet Demir", "ru": "Анна Смирнова|Дмитрий Волков",
    "ar": "ليلى حداد|عمر الخطيب", "fa": "نرگس احمدی|رضا کریمی", "ur": "عائشہ خان|بلال احمد", "bn": "তানিয়া রহমান|সৌরভ দাস",
    "hi": "अनन्या शर्मा|राहुल वर्मा", "ja": "佐藤 花子|鈴木 一郎", "ko": "김민지|이준호", "zh": "王芳|李强",
    "zh_tw": "陳怡君|林志明",
    "th": "สมชาย ใจดี|พิมพ์ชนก ศรีสุข", "vi": "Nguyễn Thị Lan|Trần Văn Minh", "id": "Siti Rahmawati|Budi Santoso",
    "ms": "Nurul Aisyah|Ahmad Faizal", "sw": "Amina Mwangi|Juma Otieno",
}


def word(rng: random.Random, table: dict[str, str], lang: str) -> str:
    """One of a language's `|`-separated words (English where the language has none)."""
    return rng.choice(table.get(lang, table["en"]).split("|"))


def name(rng: random.Random, lang: str) -> str:
    """A person's name as the language writes it."""
    return word(rng, NAMES, lang)


def cap(text: str) -> str:
    """The first letter in upper case, the rest as written."""
    return text[:1].upper() + text[1:]


# ---- values of the kinds --------------------------------------------------------------------------------

def password(rng: random.Random, carrier: str) -> Value:
    """A password as people and generators make them: words with digits and marks, random strings, passphrases."""
    style = rng.choice(("random", "wordy", "passphrase", "pin_word", "generated"))
    if style == "random":
        pw = pick(rng, string.ascii_letters + string.digits + PW_SPECIALS, rng.randint(12, 22))
    elif style == "wordy":
        pw = rng.choice(("Sommer", "Dragon", "Maracuja", "Kiwi", "Zeppelin", "Cerveza", "Tulipan", "Sakura"))
        pw += rng.choice("!@#$%*") + digits(rng, 4) + rng.choice(("", "x", "Q", "_ok"))
    elif style == "passphrase":
        words = ("copper", "lantern", "orbit", "velvet", "harbor", "quince", "tundra", "maple", "cobalt", "ember")
        pw = rng.choice("-._").join(rng.sample(words, 4)) + digits(rng, 2)
    elif style == "pin_word":
        pw = pick(rng, string.ascii_uppercase, 2) + digits(rng, 3) + pick(rng, string.ascii_lowercase, 5) + "!"
    else:
        pw = "-".join(pick(rng, string.ascii_letters + string.digits, 6) for _ in range(3))
    return Value(pw, pw, style)


def aws_secret(rng: random.Random, carrier: str) -> Value:
    """A 40-character secret access key (base64 alphabet, `/` and `+` included)."""
    key = pick(rng, B64, 40)
    while "/" not in key and "+" not in key:
        key = pick(rng, B64, 40)
    return Value(key, key, "b64_40")


def aws_key_id(rng: random.Random) -> str:
    """An access key id: AKIA (long-term) or ASIA (STS) and 16 of base32's alphabet."""
    return rng.choice(("AKIA", "ASIA")) + pick(rng, string.ascii_uppercase + "234567", 16)


def webhook(rng: random.Random, carrier: str) -> Value:
    """A chat or automation webhook URL; the secret is its token-bearing part."""
    style = rng.choice(("slack", "slack_trigger", "discord", "teams", "teams_flow", "gchat", "mattermost",
                        "zapier", "rocketchat"))
    upper = string.ascii_uppercase + string.digits
    if style == "slack":
        tok = pick(rng, string.ascii_letters + string.digits, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, upper, 10)}/B{pick(rng, upper, 10)}/{tok}"
    elif style == "slack_trigger":
        tok = pick(rng, HEX, 32)
        url = f"https://hooks.slack.com/triggers/T{pick(rng, upper, 10)}/{digits(rng, 13)}/{tok}"
    elif style == "discord":
        tok = pick(rng, URLSAFE, 68)
        url = f"https://{rng.choice(('discord.com', 'discordapp.com'))}/api/webhooks/{digits(rng, 19)}/{tok}"
    elif style == "teams":
        tok = f"{pick(rng, HEX, 32)}/{uuid.UUID(int=rng.getrandbits(128), version=4)}"
        url = (f"https://contoso{digits(rng, 2)}.webhook.office.com/webhookb2/{uuid.UUID(int=rng.getrandbits(128))}@"
               f"{uuid.UUID(int=rng.getrandbits(128))}/IncomingWebhook/{tok}")
    elif style == "teams_flow":
        tok = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{digits(rng, 2)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}/triggers/"
               f"manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}")
    elif style == "gchat":
        tok = pick(rng, URLSAFE, 43) + "%3D"
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
               f"{pick(rng, URLSAFE, 33)}&token={tok}")
    elif style == "mattermost":
        tok = pick(rng, string.ascii_lowercase + string.digits, 26)
        url = f"https://chat.{rng.choice(('acme.io', 'intra.example.org', 'team.local'))}/hooks/{tok}"
    elif style == "zapier":
        tok = pick(rng, string.ascii_lowercase + string.digits, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{tok}/"
        tok = url.split("/catch/")[1].rstrip("/")
    else:
        tok = pick(rng, B62, 17) + "/" + pick(rng, B62, 48)
        url = f"https://rocket.example.com/hooks/{tok}"
    return Value(url, tok, style)


def stripe_whsec(rng: random.Random, carrier: str) -> Value:
    """A Stripe webhook signing secret."""
    sec = "whsec_" + pick(rng, string.ascii_letters + string.digits, rng.choice((32, 32, 38)))
    return Value(sec, sec, "whsec")


def connection_string(rng: random.Random, carrier: str) -> Value:
    """A connection string or URI; the secret is its password or key."""
    style = rng.choice(("azure_storage", "service_bus", "adonet", "jdbc_pg", "jdbc_mssql", "jdbc_mysql", "odbc",
                        "uri_pg", "uri_mongo", "uri_redis", "uri_amqp", "uri_mysql"))
    pw = pick(rng, string.ascii_letters + string.digits, rng.randint(12, 20))
    host = rng.choice(("db.internal", "pg-prod-01.c9xk2.eu-west-1.rds.amazonaws.com", "10.0.4.17", "sql01"))
    user = rng.choice(("app", "svc_reporting", "etl_user", "admin", "readonly"))
    if style == "azure_storage":
        pw = pick(rng, B64, 86) + "=="
        text = (f"DefaultEndpointsProtocol=https;AccountName=st{pick(rng, string.ascii_lowercase, 8)};AccountKey={pw};"
                "EndpointSuffix=core.windows.net")
    elif style == "service_bus":
        pw = pick(rng, B64, 43) + "="
        text = (f"Endpoint=sb://ns-{pick(rng, string.ascii_lowercase, 6)}.servicebus.windows.net/;"
                f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={pw}")
    elif style == "adonet":
        text = (f"Server=tcp:{user}-sql.database.windows.net,1433;Initial Catalog=crm;Persist Security Info=False;"
                f"User ID={user};Password={pw};MultipleActiveResultSets=False;Encrypt=True;")
    elif style == "jdbc_pg":
        text = f"jdbc:postgresql://{host}:5432/orders?user={user}&password={pw}&ssl=true"
    elif style == "jdbc_mssql":
        text = f"jdbc:sqlserver://{host}:1433;databaseName=billing;user={user};password={pw};encrypt=true"
    elif style == "jdbc_mysql":
        text = f"jdbc:mysql://{host}:3306/shop?user={user}&password={pw}&useSSL=true"
    elif style == "odbc":
        text = f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=hr;Uid={user};Pwd={pw};"
    else:
        scheme, port, path = {"uri_pg": ("postgresql", ":5432", "/analytics"), "uri_redis": ("redis", ":6379", "/0"),
                              "uri_mongo": ("mongodb+srv", "", "/?retryWrites=true&w=majority"),
                              "uri_amqp": ("amqp", ":5672", "/%2F"), "uri_mysql": ("mysql", ":3306", "/wp")}[style]
        if style == "uri_mongo":
            host = f"cluster0.{pick(rng, string.ascii_lowercase + string.digits, 5)}.mongodb.net"
        text = f"{scheme}://{'' if style == 'uri_redis' and rng.random() < 0.5 else user}:{pw}@{host}{port}{path}"
    return Value(text, pw, style)


def labelled_key(rng: random.Random, carrier: str) -> Value:
    """An opaque key with no provider prefix: hex, base62 or base64url."""
    style = rng.choice(("hex32", "hex40", "hex64", "b62_32", "b62_40", "b64url_43"))
    alpha, n = {"hex32": (HEX, 32), "hex40": (HEX, 40), "hex64": (HEX, 64), "b62_32": (B62, 32),
                "b62_40": (B62, 40), "b64url_43": (URLSAFE, 43)}[style]
    key = pick(rng, alpha, n)
    return Value(key, key, style)


INVISIBLE = {"zwsp": "\u200b", "zwnj": "\u200c", "zwj": "\u200d", "wj": "\u2060", "bom": "\ufeff", "lre": "\u202a",
             "rlo": "\u202e", "pdf": "\u202c", "lri": "\u2066", "pdi": "\u2069", "shy": "\u00ad"}


PROVIDER_KEYS: tuple[Callable[[random.Random], str], ...] = (
    lambda r: crc_token(r, "ghp_"), lambda r: "sk_live_" + pick(r, B62, 24),
    lambda r: f"xoxb-{digits(r, 12)}-{digits(r, 13)}-{pick(r, B62, 24)}",
    lambda r: "AKIA" + pick(r, string.ascii_uppercase + "234567", 16), lambda r: "AIzaSy" + pick(r, URLSAFE, 33),
    lambda r: "hf_" + pick(r, string.ascii_letters, 34),
    lambda r: "sk-proj-" + pick(r, URLSAFE, 40) + "T3BlbkFJ" + pick(r, URLSAFE, 40))
"""Keys of known providers (GitHub, Stripe, Slack, AWS, Google, Hugging Face, OpenAI), for the disguised kind."""


def disguised(rng: random.Random, carrier: str) -> Value:
    """A provider's key with invisible characters inside, or in full-width forms."""
    key = rng.choice(PROVIDER_KEYS)(rng)
    style = rng.choice(tuple(INVISIBLE) + ("fullwidth", "mixed"))
    if style == "fullwidth":
        out = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key)
    elif style == "mixed":
        out = "".join(c + (rng.choice(list(INVISIBLE.values())) if i % 5 == 4 else "") for i, c in enumerate(key))
    else:
        ch = INVISIBLE[style]
        cuts = sorted(rng.sample(range(3, len(key) - 1), rng.randint(1, 3)))
        out = "".join(key[a:b] + ch for a, b in zip([0] + cuts, cuts, strict=False)) + key[cuts[-1]:]
    return Value(out, out, style)


LOCALS = ("ana.souza", "j.weiss", "camille.lefevre", "priya.raman", "m.bianchi", "olena.koval", "elif.yilmaz",
          "sato.hanako", "minji.kim", "nguyen.lan", "budi.santoso", "amina.mwangi", "lars+billing", "ops-oncall")
DOMAINS = ("gmail.com", "outlook.com", "yahoo.co.jp", "web.de", "orange.fr", "libero.it", "uol.com.br",
           "acme-corp.io", "example.org", "naver.com", "qq.com", "mail.ru", "ukr.net", "hotmail.com.tr")
IDN = ("josé.garcía@correo.es", "müller@bücher.de", "пользователь@почта.рф", "用户@例子.广告", "θέμα@παράδειγμα.ελ",
       "ユーザー@例え.テスト", "δοκιμή@example.com", "çağrı@örnek.com.tr", "इंद्र@उदाहरण.भारत", "ಸಂಪರ್ಕ@kannada.in")


def email(rng: random.Random, carrier: str) -> Value:
    """An address, plain or in one of the encodings a page, URL or raw JSON line gives it."""
    addr = f"{rng.choice(LOCALS)}{rng.choice(('', '', str(rng.randint(1, 99))))}@{rng.choice(DOMAINS)}"
    style = rng.choice(("plain", "plain", "upper", "idn", "pct", "uescape", "entity", "mailto"))
    if style == "upper":
        addr = addr.upper()
    elif style == "idn":
        addr = rng.choice(IDN).replace("@", f"{rng.randint(1, 9)}@", 1)
    elif style == "pct":
        addr = addr.replace("@", "%40").replace("+", "%2B")
    elif style == "uescape":
        addr = addr.replace("@", "\\u0040")
    elif style == "entity":
        addr = addr.replace("@", "&#64;")
    written = {"mailto": f"mailto:{addr}", "pct": f"https://app.example.com/unsubscribe?email={addr}&list=news"}
    return Value(written.get(style, addr), addr, style)


def email_spoken(rng: random.Random, carrier: str) -> Value:
    """An address as ASR writes it: `at`, `dot`, words for marks, sometimes spelled out."""
    local = rng.choice(LOCALS).replace("+", " plus ")
    dom = rng.choice(DOMAINS)
    style = rng.choice(("words", "spelled", "mixed"))
    if style == "spelled":
        local = " ".join(local.replace(".", "")[:6]) + local.replace(".", "")[6:]
    spoken = f"{local.replace('.', ' dot ').replace('-', ' dash ')} at {dom.replace('.', ' dot ')}"
    if style == "mixed":
        spoken = spoken.replace(" at ", " @ ", 1)
    return Value(spoken, spoken, style)


# ---- phones: national plans, national and international forms ---------------------------------------------------

def styled(rng: random.Random, forms: dict[str, str], kind: str = "") -> Value:
    """One of a number's print forms, its style named by the form (and the kind of number)."""
    style = rng.choice(tuple(forms))
    return Value(forms[style], forms[style], f"{kind}_{style}" if kind else style)


def nanp(rng: random.Random) -> tuple[str, str, str]:
    """NANP: an area code in service, an exchange 2-9XX (not N11), a line number."""
    area = rng.choice(("212", "213", "305", "312", "415", "416", "438", "604", "617", "646", "702", "713", "206",
                       "303", "404", "512", "647", "780", "902", "503"))
    exch = rng.choice("23456789") + digits(rng, 2)
    while exch[1:] == "11":
        exch = rng.choice("23456789") + digits(rng, 2)
    return area, exch, digits(rng, 4)


def phone_us_ca(rng: random.Random, carrier: str) -> Value:
    a, b, c = nanp(rng)
    forms = {"paren": f"({a}) {b}-{c}", "dash": f"{a}-{b}-{c}", "dot": f"{a}.{b}.{c}", "space": f"{a} {b} {c}",
             "intl_space": f"+1 {a} {b} {c}", "intl_dash": f"+1-{a}-{b}-{c}", "intl_paren": f"+1 ({a}) {b}-{c}",
             "one_dash": f"1-{a}-{b}-{c}", "e164": f"+1{a}{b}{c}", "compact": f"{a}{b}{c}"}
    return styled(rng, forms)


def phone_uk(rng: random.Random, carrier: str) -> Value:
    kind = rng.choice(("mobile", "london", "geo4"))
    if kind == "mobile":
        nsn = "7" + rng.choice("123457789") + digits(rng, 8)
        nat, intl = f"0{nsn[:4]} {nsn[4:]}", f"+44 {nsn[:4]} {nsn[4:]}"
    elif kind == "london":
        nsn = "20" + rng.choice("378") + digits(rng, 7)
        nat, intl = f"020 {nsn[2:6]} {nsn[6:]}", f"+44 20 {nsn[2:6]} {nsn[6:]}"
    else:
        area = rng.choice(("113", "114", "117", "118", "121", "131", "141", "151", "161", "191"))
        nsn = area + digits(rng, 7)
        nat, intl = f"0{area} {nsn[3:6]} {nsn[6:]}", f"+44 {area} {nsn[3:6]} {nsn[6:]}"
    forms = {"national": nat, "intl": intl, "intl_trunk": intl.replace(" ", " (0)", 1), "e164": "+44" + nsn,
             "intl_00": "00" + intl[1:], "national_compact": "0" + nsn}
    return styled(rng, forms, kind)


def pairs(s: str) -> list[str]:
    """Digits in twos (French and others' print groups)."""
    return [s[i:i + 2] for i in range(0, len(s), 2)]


def phone_fr(rng: random.Random, carrier: str) -> Value:
    nsn = rng.choice("1234567679") + digits(rng, 8)
    sep = rng.choice((" ", ".", "-", " "))
    rest = " ".join(pairs(nsn[1:]))
    forms = {"national": sep.join(pairs("0" + nsn)), "compact": "0" + nsn, "intl": f"+33 {nsn[0]} {rest}",
             "intl_trunk": f"+33 (0){nsn[0]} {rest}", "e164": "+33" + nsn, "intl_00": f"0033 {nsn[0]} {rest}"}
    style = rng.choice(tuple(forms))
    return Value(forms[style], forms[style], style if style != "national" else f"national_{sep.strip() or 'space'}")


def phone_de(rng: random.Random, carrier: str) -> Value:
    if rng.random() < 0.6:
        pre = rng.choice(("151", "152", "157", "160", "162", "163", "170", "171", "172", "175", "176", "177", "179"))
        sub = digits(rng, rng.choice((7, 8)))
        kind = "mobile"
    else:
        pre = rng.choice(("30", "40", "89", "69", "221", "211", "711", "351"))
        sub = digits(rng, 10 - len(pre) - rng.choice((0, 1)))
        kind = "landline"
    forms = {"space": f"0{pre} {sub}", "slash": f"0{pre}/{sub}", "dash": f"0{pre}-{sub}", "intl": f"+49 {pre} {sub}",
             "intl_trunk": f"+49 (0){pre} {sub}", "intl_00": f"0049 {pre} {sub}", "e164": f"+49{pre}{sub}",
             "paren": f"(0{pre}) {sub}", "din_grouped": f"0{pre} {' '.join(pairs(sub))}"}
    return styled(rng, forms, kind)


def phone_in(rng: random.Random, carrier: str) -> Value:
    if rng.random() < 0.75:
        n = rng.choice("6789") + digits(rng, 9)
        forms = {"split5": f"{n[:5]} {n[5:]}", "intl": f"+91 {n[:5]} {n[5:]}", "intl_dash": f"+91-{n}",
                 "trunk": f"0{n}", "cc_compact": f"91{n}", "intl_334": f"+91 {n[:3]} {n[3:6]} {n[6:]}", "plain": n}
        kind = "mobile"
    else:
        std, sub = rng.choice((("11", 8), ("22", 8), ("80", 8), ("44", 8), ("40", 8), ("33", 8)))
        n = std + digits(rng, sub)
        forms = {"std_dash": f"0{std}-{n[2:6]} {n[6:]}", "intl": f"+91 {std} {n[2:6]} {n[6:]}",
                 "std_space": f"0{std} {n[2:]}", "std_dashes": f"0{std}-{n[2:6]}-{n[6:]}"}
        kind = "landline"
    return styled(rng, forms, kind)


def phone_es(rng: random.Random, carrier: str) -> Value:
    n = rng.choice("67") + digits(rng, 8) if rng.random() < 0.7 else "9" + rng.choice("1345") + digits(rng, 7)
    forms = {"333": f"{n[:3]} {n[3:6]} {n[6:]}", "3222": f"{n[:3]} {n[3:5]} {n[5:7]} {n[7:]}",
             "intl": f"+34 {n[:3]} {n[3:6]} {n[6:]}", "e164": f"+34{n}", "intl_00": f"0034 {n}", "compact": n}
    return styled(rng, forms)


def phone_br(rng: random.Random, carrier: str) -> Value:
    ddd = rng.choice(("11", "21", "31", "41", "51", "61", "71", "81", "85", "92", "48", "27"))
    sub = "9" + digits(rng, 8) if rng.random() < 0.75 else rng.choice("2345") + digits(rng, 7)
    head, tail = sub[:-4], sub[-4:]
    forms = {"paren": f"({ddd}) {head}-{tail}", "plain": f"{ddd} {head}-{tail}", "intl": f"+55 {ddd} {head}-{tail}",
             "intl_paren": f"+55 ({ddd}) {head}-{tail}", "e164": f"+55{ddd}{sub}", "trunk": f"0{ddd} {head} {tail}",
             "nine_split": f"({ddd}) {sub[0]} {sub[1:5]}-{tail}" if len(sub) == 9 else f"({ddd}) {head}-{tail}"}
    return styled(rng, forms)


def phone_it(rng: random.Random, carrier: str) -> Value:
    if rng.random() < 0.65:
        n = "3" + rng.choice("2345789") + digits(rng, 8)
        forms = {"334": f"{n[:3]} {n[3:6]} {n[6:]}", "dash": f"{n[:3]}-{n[3:]}", "intl": f"+39 {n[:3]} {n[3:]}",
                 "e164": f"+39{n}", "intl_00": f"0039 {n[:3]} {n[3:]}"}
    else:
        n = rng.choice(("06", "02", "011", "055", "081")) + digits(rng, 7)
        forms = {"space": f"{n[:-7]} {n[-7:-4]} {n[-4:]}", "intl": f"+39 {n[:-7]} {n[-7:]}", "compact": n}
    return styled(rng, forms)


def phone_nl(rng: random.Random, carrier: str) -> Value:
    if rng.random() < 0.6:
        n = "6" + digits(rng, 8)
        forms = {"space": f"0{n[0]} {n[1:]}", "dash": f"0{n[0]}-{n[1:]}", "intl": f"+31 {n[0]} {n[1:]}",
                 "intl_trunk": f"+31 (0){n[0]} {n[1:5]} {n[5:]}", "e164": f"+31{n}"}
    else:
        n = rng.choice(("20", "10", "70", "30", "40")) + digits(rng, 7)
        forms = {"space": f"0{n[:2]} {n[2:5]} {n[5:]}", "dash": f"0{n[:2]}-{n[2:]}", "intl": f"+31 {n[:2]} {n[2:]}"}
    return styled(rng, forms)


def phone_pl(rng: random.Random, carrier: str) -> Value:
    n = rng.choice("5678") + digits(rng, 8) if rng.random() < 0.7 else rng.choice(("22", "12", "61")) + digits(rng, 7)
    mobile = n[0] in "5678" and len(n) == 9 and not n.startswith(("61", "71"))
    forms = {"333": f"{n[:3]} {n[3:6]} {n[6:]}", "intl": f"+48 {n[:3]} {n[3:6]} {n[6:]}", "e164": f"+48{n}",
             "intl_00": f"0048 {n[:3]}-{n[3:6]}-{n[6:]}"} if mobile else {
             "2322": f"{n[:2]} {n[2:5]} {n[5:7]} {n[7:]}", "intl": f"+48 {n[:2]} {n[2:5]} {n[5:7]} {n[7:]}"}
    return styled(rng, forms)


def phone_ua(rng: random.Random, carrier: str) -> Value:
    op = rng.choice(("50", "63", "66", "67", "68", "73", "93", "95", "96", "97", "98", "99"))
    s = digits(rng, 7)
    forms = {"national": f"0{op} {s[:3]} {s[3:5]} {s[5:]}", "paren": f"(0{op}) {s[:3]}-{s[3:5]}-{s[5:]}",
             "intl": f"+380 {op} {s[:3]} {s[3:]}", "e164": f"+380{op}{s}",
             "intl_38": f"+38 (0{op}) {s[:3]}-{s[3:5]}-{s[5:]}"}
    return styled(rng, forms)


def phone_tr(rng: random.Random, carrier: str) -> Value:
    pre = rng.choice(("532", "533", "535", "542", "505", "555", "212", "216", "312"))
    s = digits(rng, 7)
    forms = {"national": f"0{pre} {s[:3]} {s[3:5]} {s[5:]}", "paren": f"0 ({pre}) {s[:3]} {s[3:5]} {s[5:]}",
             "intl": f"+90 {pre} {s[:3]} {s[3:5]} {s[5:]}", "e164": f"+90{pre}{s}", "compact": f"0{pre}{s}"}
    return styled(rng, forms)


def phone_jp(rng: random.Random, carrier: str) -> Value:
    if rng.random() < 0.6:
        a, b, c = rng.choice(("70", "80", "90")), digits(rng, 4), digits(rng, 4)
    else:
        a = rng.choice(("3", "6", "45", "52", "92"))
        b, c = digits(rng, 5 - len(a)), digits(rng, 4)
    forms = {"dash": f"0{a}-{b}-{c}", "paren": f"(0{a}) {b}-{c}", "intl": f"+81 {a}-{b}-{c}",
             "intl_space": f"+81 {a} {b} {c}",
             "compact": f"0{a}{b}{c}", "fullwidth": "".join(chr(ord(ch) + 0xFEE0) if ch.isdigit() else "－"
                                                          for ch in f"0{a}-{b}-{c}")}
    return styled(rng, forms)


def phone_kr(rng: random.Random, carrier: str) -> Value:
    if rng.random() < 0.65:
        a, b, c = "10", digits(rng, 4), digits(rng, 4)
    else:
        a = rng.choice(("2", "31", "51", "32"))
        b, c = digits(rng, rng.choice((3, 4))), digits(rng, 4)
    forms = {"dash": f"0{a}-{b}-{c}", "intl": f"+82 {a}-{b}-{c}", "intl_space": f"+82 {a} {b} {c}",
             "compact": f"0{a}{b}{c}", "dot": f"0{a}.{b}.{c}"}
    return styled(rng, forms)


def phone_id(rng: random.Random, carrier: str) -> Value:
    if rng.random() < 0.7:
        n = "8" + rng.choice("1235789") + digits(rng, rng.choice((8, 9)))
        forms = {"dash": f"0{n[:3]}-{n[3:7]}-{n[7:]}", "intl": f"+62 {n[:3]}-{n[3:7]}-{n[7:]}",
                 "intl_space": f"+62 {n[:3]} {n[3:7]} {n[7:]}", "cc_compact": f"62{n}", "compact": f"0{n}"}
    else:
        n = rng.choice(("21", "22", "31", "61")) + digits(rng, 8)
        forms = {"paren": f"(0{n[:2]}) {n[2:6]}-{n[6:]}", "space": f"0{n[:2]} {n[2:]}", "intl": f"+62 {n[:2]} {n[2:]}"}
    return styled(rng, forms)


def spoken_digits(rng: random.Random, written: str) -> str:
    """A number as ASR writes it: the digits in irregular groups, `dash`/`dot` sometimes spoken, `plus` for +."""
    s = "".join(c for c in written if c.isalnum() or c == "+")
    head = "plus " if s.startswith("+") else ""
    s = s.lstrip("+")
    out, i = [], 0
    while i < len(s):
        n = rng.choice((2, 3, 3, 4))
        out.append(s[i:i + n])
        i += n
    seps = [rng.choice((" ", " ", " dash ", ", ", " dot ")) for _ in out[1:]]
    return head + out[0] + "".join(sep + part for sep, part in zip(seps, out[1:], strict=True))


# ---- SSN, cards, IBANs ------------------------------------------------------------------------------------------

def ssn_parts(rng: random.Random) -> tuple[str, str, str]:
    """An SSN the SSA could issue: area 001-899 but 666, group 01-99, serial 0001-9999."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def ssn(rng: random.Random, carrier: str) -> Value:
    a, g, s = ssn_parts(rng)
    forms = {"dash": f"{a}-{g}-{s}", "space": f"{a} {g} {s}", "compact": f"{a}{g}{s}"}
    style = rng.choice(("dash", "dash", "space", "compact"))
    return Value(forms[style], forms[style], style)


SEP_NAMES = {" ": "space", "-": "dash", ".": "dot", "_": "underscore", "": "none"}

CARD_IINS = (("visa", "4", 16), ("visa", "4", 16), ("mastercard", "5{1-5}", 16), ("mastercard", "2{221-720}", 16),
             ("amex", "3{4,7}", 15), ("discover", "6011", 16), ("discover", "65", 16), ("jcb", "35{28-89}", 16),
             ("diners", "36", 14), ("unionpay", "62", 16), ("visa19", "4", 19))


def card_number(rng: random.Random) -> tuple[str, str]:
    """A PAN in an issuer's IIN range, completed by its Luhn digit."""
    brand, iin, length = rng.choice(CARD_IINS)
    if "{" in iin:
        head, spec = iin.split("{")
        spec = spec.rstrip("}")
        if "-" in spec:
            lo, hi = spec.split("-")
            iin = head + str(rng.randint(int(lo), int(hi))).zfill(len(lo))
        else:
            iin = head + rng.choice(spec.split(","))
    body = iin + digits(rng, length - len(iin) - 1)
    return brand, body + luhn_digit(body)


def card(rng: random.Random, carrier: str) -> Value:
    brand, pan = card_number(rng)
    sep = rng.choice((" ", " ", "-", ".", "_", ""))
    written = group_card(pan, sep) if sep else pan
    return Value(written, written, f"{brand}_{SEP_NAMES[sep]}")


IBAN_BBANS = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c", "NL": "4a10n",
              "BE": "3n7n2n", "PL": "8n16n", "RO": "4a16c", "HU": "3n4n1n15n1n", "SE": "3n16n1n", "NO": "4n6n1n",
              "TR": "5n1n16c", "PT": "4n4n11n2n", "UA": "6n19c", "SA": "2n18c", "AE": "3n16n", "BR": "8n5n10n1a1c",
              "CH": "5n12c", "AT": "5n11n"}
"""BBAN structures of the SWIFT IBAN registry."""


def iban(rng: random.Random, carrier: str) -> Value:
    country = rng.choice(tuple(IBAN_BBANS))
    b = bban(rng, IBAN_BBANS[country])
    compact = country + iban_check(country, b) + b
    style = rng.choice(("grouped", "grouped", "compact", "lower_grouped", "lower_compact"))
    written = group(compact, 4, " ") if "grouped" in style else compact
    written = written.lower() if style.startswith("lower") else written
    return Value(written, written, f"{country}_{style}")


# ---- keys of the AI and agent world, and the wider secrets -------------------------------------------------------

def prefixed(prefix: str, alphabet: str, n: int, style: str) -> Callable[[random.Random, str], Value]:
    """A provider's token: a published prefix and n characters of its alphabet."""
    def make(rng: random.Random, carrier: str) -> Value:
        tok = prefix + pick(rng, alphabet, n)
        return Value(tok, tok, style)
    return make


def openai_key(rng: random.Random, carrier: str) -> Value:
    style = rng.choice(("sk-proj-", "sk-proj-", "sk-svcacct-", "sk-admin-"))
    tok = style + pick(rng, URLSAFE, rng.choice((74, 58))) + "T3BlbkFJ" + pick(rng, URLSAFE, rng.choice((74, 58)))
    return Value(tok, tok, style.strip("-"))


def anthropic_key(rng: random.Random, carrier: str) -> Value:
    style = rng.choice(("sk-ant-api03-", "sk-ant-api03-", "sk-ant-admin01-"))
    tok = style + pick(rng, URLSAFE, 93) + "AA"
    return Value(tok, tok, style.strip("-"))


def langsmith_key(rng: random.Random, carrier: str) -> Value:
    style = rng.choice(("lsv2_pt_", "lsv2_sk_"))
    tok = f"{style}{pick(rng, HEX, 32)}_{pick(rng, HEX, 10)}"
    return Value(tok, tok, style.strip("_"))


def langfuse_key(rng: random.Random, carrier: str) -> Value:
    tok = f"sk-lf-{uuid.UUID(int=rng.getrandbits(128), version=4)}"
    return Value(tok, tok, "sk-lf")


def pinecone_key(rng: random.Random, carrier: str) -> Value:
    if rng.random() < 0.7:
        tok = f"pcsk_{pick(rng, B62, 6)}_{pick(rng, B62, 63)}"
        return Value(tok, tok, "pcsk")
    tok = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    return Value(tok, tok, "legacy_uuid")


def jwt(rng: random.Random, claims: dict, key: bytes | None = None) -> str:
    """An HS256 JWS (RFC 7515) in compact form over `claims`."""
    head = b64url(jdump({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(jdump(claims).encode())
    sig = hmac.new(key or rng.randbytes(32), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64url(sig)}"


def supabase_key(rng: random.Random, carrier: str) -> Value:
    if rng.random() < 0.6:
        iat = 1_690_000_000 + rng.randrange(40_000_000)
        tok = jwt(rng, {"iss": "supabase", "ref": pick(rng, string.ascii_lowercase, 20), "role": "service_role",
                        "iat": iat, "exp": iat + 315_360_000})
        return Value(tok, tok, "service_role_jwt")
    tok = f"sb_secret_{pick(rng, URLSAFE, 31)}"
    return Value(tok, tok, "sb_secret")


def cloudflare_token(rng: random.Random, carrier: str) -> Value:
    if rng.random() < 0.7:
        tok = pick(rng, URLSAFE, 40)
        return Value(tok, tok, "api_token")
    tok = pick(rng, HEX, 37)
    return Value(tok, tok, "global_key")


def github_token(rng: random.Random, carrier: str) -> Value:
    if rng.random() < 0.7:
        tok = crc_token(rng, rng.choice(("ghp_", "gho_", "ghs_", "ghu_")))
        return Value(tok, tok, tok[:3])
    tok = f"github_pat_11{pick(rng, string.ascii_uppercase + string.digits, 20)}_{pick(rng, B62, 59)}"
    return Value(tok, tok, "github_pat")


def pem_body(pem: str) -> str:
    """The base64 lines between a PEM's BEGIN and END lines."""
    return "\n".join(line for line in pem.strip().splitlines() if not line.startswith("-----"))


def private_key(rng: random.Random, carrier: str) -> Value:
    """An EC or Ed25519 private key as PKCS#8, SEC1 or OpenSSH PEM; the secret is the base64 body."""
    style = rng.choice(("pkcs8_ec", "sec1_ec", "pkcs8_ed25519", "openssh_ed25519"))
    if style.endswith("ec"):
        key = ec.derive_private_key(rng.randrange(1, 2**255), ec.SECP256R1())
        fmt = serialization.PrivateFormat
        fmt = fmt.PKCS8 if style == "pkcs8_ec" else fmt.TraditionalOpenSSL
        pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
    elif style == "pkcs8_ed25519":
        key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    else:
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
        blob = base64.b64encode(openssh_ed25519_blob(seed, public, rng.randbytes(4), b"deploy@ci-runner")).decode()
        pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(blob, 70, "\n") + "\n-----END OPENSSH PRIVATE KEY-----\n"
    return Value(pem, pem_body(pem), style)


def jwt_value(rng: random.Random, carrier: str) -> Value:
    iat = 1_700_000_000 + rng.randrange(30_000_000)
    claims = {"sub": str(rng.randint(10_000, 99_999_999)), "iat": iat, "exp": iat + 3600,
              "email": f"{rng.choice(LOCALS)}@{rng.choice(DOMAINS)}", "scope": "read:tickets write:tickets"}
    style = rng.choice(("access", "id_token"))
    if style == "id_token":
        claims = {"iss": "https://accounts.google.com", "aud": f"{digits(rng, 12)}.apps.googleusercontent.com",
                  "sub": digits(rng, 21), "iat": iat, "exp": iat + 3600}
    tok = jwt(rng, claims)
    return Value(tok, tok, style)


def auth_header(rng: random.Random, carrier: str) -> Value:
    """An Authorization header; the secret is its credential part."""
    style = rng.choice(("basic", "bearer", "digest", "sigv4"))
    if style == "basic":
        user = rng.choice(("admin", "api", "deploy"))
        cred = base64.b64encode(f"{user}:{password(rng, '').written}".encode()).decode()
        head = f"Authorization: Basic {cred}"
    elif style == "bearer":
        cred = pick(rng, URLSAFE, rng.choice((40, 64)))
        head = f"Authorization: Bearer {cred}"
    elif style == "digest":
        cred = pick(rng, HEX, 32)
        head = (f'Authorization: Digest username="ops", realm="api@example.com", nonce="{pick(rng, HEX, 32)}", '
                f'uri="/v1/export", qop=auth, nc=00000001, cnonce="{pick(rng, HEX, 16)}", response="{cred}"')
    else:
        cred = pick(rng, HEX, 64)
        head = (f"Authorization: AWS4-HMAC-SHA256 Credential={aws_key_id(rng)}/20250114/eu-west-1/s3/aws4_request, "
                f"SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature={cred}")
    return Value(head, cred, style)


LOWER36 = string.ascii_lowercase + string.digits
COOKIES = {"sessionid": (LOWER36, 32), "PHPSESSID": (LOWER36, 26),
           "JSESSIONID": ("0123456789ABCDEF", 32), "ASP.NET_SessionId": (string.ascii_lowercase + "012345", 24),
           "_gitlab_session": (HEX, 32), "_session_id": (HEX, 32)}
"""Session cookies of Django, PHP, Java servlets, ASP.NET, GitLab and Rails: value alphabets and lengths."""


def session_cookie(rng: random.Random, carrier: str) -> Value:
    """A framework session cookie (or Express's signed `connect.sid`, Laravel's encrypted one, NextAuth's JWE); the
    secret is its value."""
    name_ = rng.choice(tuple(COOKIES) + ("connect.sid", "laravel_session", "__Secure-next-auth.session-token"))
    if name_ in COOKIES:
        val = pick(rng, *COOKIES[name_])
    elif name_ == "connect.sid":
        val = f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, B62, 43)}"
    elif name_ == "laravel_session":
        val = "eyJpdiI6" + pick(rng, B62, 150) + "%3D"
    else:
        val = "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0.." + pick(rng, URLSAFE, 120)
    return Value(f"{name_}={val}", val, name_.lower().strip("_").replace(".", "_"))


# ---- national ids outside the target ----------------------------------------------------------------------------

def br_cpf(rng: random.Random, carrier: str) -> Value:
    d = [int(c) for c in digits(rng, 9)]
    for n in (10, 11):
        r = sum(x * w for x, w in zip(d, range(n, 1, -1), strict=True)) * 10 % 11
        d.append(r % 10)
    s = "".join(map(str, d))
    style = rng.choice(("dotted", "compact"))
    w = f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}" if style == "dotted" else s
    return Value(w, w, style)


def es_dni(rng: random.Random, carrier: str) -> Value:
    n = rng.randint(10_000_000, 99_999_999)
    w = f"{n}{'TRWAGMYFPDXBNJZSQVHLCKE'[n % 23]}"
    style = rng.choice(("plain", "dash"))
    w = w if style == "plain" else f"{w[:8]}-{w[8]}"
    return Value(w, w, style)


def pl_pesel(rng: random.Random, carrier: str) -> Value:
    yy, mm, dd = rng.randint(50, 99), rng.randint(1, 12), rng.randint(1, 28)
    if rng.random() < 0.4:
        yy, mm = rng.randint(0, 9), mm + 20
    body = f"{yy:02d}{mm:02d}{dd:02d}{digits(rng, 4)}"
    check = (10 - sum(int(c) * w for c, w in zip(body, (1, 3, 7, 9) * 3, strict=False)) % 10) % 10
    return Value(body + str(check), body + str(check), "pesel")


def cn_resident_id(rng: random.Random, carrier: str) -> Value:
    body = rng.choice(("110105", "310104", "440305", "510107")) + f"{rng.randint(1960, 2004)}{rng.randint(1, 12):02d}" \
        f"{rng.randint(1, 28):02d}" + digits(rng, 3)
    total = sum(int(c) * (2 ** (17 - i) % 11) for i, c in enumerate(body))
    w = body + "10X98765432"[total % 11]
    return Value(w, w, "gb11643")


# ---- carriers: how a value reaches the trace --------------------------------------------------------------------

Carrier = Callable[[random.Random, Field], str]
CARRIERS: dict[str, tuple[Carrier, bool]] = {}
"""Carriers by name: the function writing a text around a field, and whether that text is JSON."""


def carrier(is_json: bool = False) -> Callable[[Carrier], Carrier]:
    """Register a carrier under its function's name (less `c_`)."""
    def register(fn: Carrier) -> Carrier:
        CARRIERS[fn.__name__.removeprefix("c_")] = (fn, is_json)
        return fn
    return register


def stamp(rng: random.Random) -> str:
    """A timestamp of the last two years."""
    return (f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}")


def width(s: str) -> int:
    """Display columns of a string: wide (CJK, full-width) characters take two, invisible ones none."""
    return sum(0 if c in INVISIBLE.values() else 2 if "\u1100" <= c <= "\uffdc" and not "\ua4d0" <= c <= "\uabff"
               else 1 for c in s)


def pad(s: str, n: int, right: bool = False) -> str:
    """`s` padded with spaces to n display columns."""
    fill = " " * max(0, n - width(s))
    return fill + s if right else s + fill


def row_of(rng: random.Random, f: Field) -> list[tuple[str, str]]:
    """A record holding the field among a few ordinary ones."""
    rid = str(rng.randint(1, 99_999))
    return [("id", rid), ("name", name(rng, f.lang)), (f.col, f.value.written), ("updated_at", stamp(rng))]


@carrier()
def c_psql(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)
    ws = [max(width(k), width(v)) for k, v in rows]
    head = "|".join(" " + pad(k.center(w), w) + " " for (k, _), w in zip(rows, ws, strict=True))
    line = "+".join("-" * (w + 2) for w in ws)
    body = "|".join(" " + pad(v, w, right=k == "id") + " " for (k, v), w in zip(rows, ws, strict=True))
    table = rng.choice(("customers", "users", "accounts", "app_secrets", "contacts"))
    return f"=> SELECT * FROM {table} WHERE id = {rows[0][1]};\n{head}\n{line}\n{body}\n(1 row)\n"


@carrier()
def c_psql_expanded(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)
    w = max(width(k) for k, _ in rows)
    lines = [f"-[ RECORD 1 ]{'-' * max(0, w - 12)}+{'-' * 30}"] + [f"{pad(k, w)} | {v}" for k, v in rows]
    return "\\x\nExpanded display is on.\n" + "\n".join(lines) + "\n"


@carrier()
def c_mysql(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)
    ws = [max(width(k), width(v)) for k, v in rows]
    line = "+" + "+".join("-" * (w + 2) for w in ws) + "+"
    head = "|" + "|".join(f" {pad(k, w)} " for (k, _), w in zip(rows, ws, strict=True)) + "|"
    body = "|" + "|".join(f" {pad(v, w, right=k == 'id')} " for (k, v), w in zip(rows, ws, strict=True)) + "|"
    secs = f"{rng.randint(0, 9)}.{rng.randint(0, 99):02d}"
    return f"mysql> SELECT * FROM users LIMIT 1;\n{line}\n{head}\n{line}\n{body}\n{line}\n1 row in set ({secs} sec)\n"


@carrier()
def c_sqlite_line(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)
    w = max(len(k) for k, _ in rows)
    lines = "\n".join(f"{k.rjust(w)} = {v}" for k, v in rows)
    return f"sqlite> .mode line\nsqlite> SELECT * FROM profile;\n{lines}\n"


def box(rows: list[tuple[str, str]], types: list[str] | None, polars: bool = False) -> str:
    """A unicode box table (sqlite3 `.mode box`, DuckDB, polars) of one record."""
    cells = [[k for k, _ in rows]] + ([types] if types else []) + [[v for _, v in rows]]
    ws = [max(width(c[i]) for c in cells) for i in range(len(rows))]
    v = "┆" if polars else "│"
    out = ["┌" + "┬".join("─" * (w + 2) for w in ws) + "┐"]
    for j, c in enumerate(cells):
        out.append("│" + v.join(f" {pad(x, w)} " for x, w in zip(c, ws, strict=True)) + "│")
        if j == len(cells) - 2:
            sep = ("╞", "╪", "═", "╡") if polars else ("├", "┼", "─", "┤")
            out.append(sep[0] + sep[1].join(sep[2] * (w + 2) for w in ws) + sep[3])
    out.append("└" + "┴".join("─" * (w + 2) for w in ws) + "┘")
    return "\n".join(out)


@carrier()
def c_sqlite_box(rng: random.Random, f: Field) -> str:
    return "sqlite> .mode box\nsqlite> SELECT * FROM settings;\n" + box(row_of(rng, f), None) + "\n"


@carrier()
def c_duckdb(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)
    return "D SELECT * FROM read_parquet('export.parquet') LIMIT 1;\n" + box(rows, ["int64", "varchar", "varchar",
                                                                                      "timestamp"]) + "\n"


@carrier()
def c_polars(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)
    rows[0] = ("id", rows[0][1])
    header = box(rows, ["---"] * 4, polars=True).split("\n")
    typed = box(rows, ["i64", "str", "str", "datetime[μs]"], polars=True).split("\n")
    return "shape: (1, 4)\n" + "\n".join(typed[:2] + [header[2]] + typed[2:]) + "\n"


@carrier(is_json=True)
def c_bigquery(rng: random.Random, f: Field) -> str:
    return jdump([dict(row_of(rng, f))], indent=2)


@carrier(is_json=True)
def c_snowflake(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)
    return jdump({"resultSetMetaData": {"numRows": 1, "format": "jsonv2", "rowType": [
        {"name": k.upper(), "type": "text"} for k, _ in rows]}, "data": [[v for _, v in rows]], "code": "090001",
        "statementHandle": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "message": "Statement executed."})


def object_id(rng: random.Random) -> str:
    """A MongoDB ObjectId: 4-byte time, 5 random bytes, 3-byte counter, in hex."""
    return f"{rng.randint(0x60000000, 0x68000000):08x}{pick(rng, HEX, 16)}"


@carrier()
def c_mongosh(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)
    body = ",\n".join(f"    {k}: '{v}'" for k, v in rows[1:3])
    return (f"test> db.customers.find({{ _id: ObjectId('{object_id(rng)}') }})\n[\n  {{\n    _id: ObjectId("
            f"'{object_id(rng)}'),\n{body},\n    updatedAt: ISODate('{rows[3][1].replace(' ', 'T')}.000Z')\n  }}\n]\n")


@carrier()
def c_redis(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)[1:]
    lines = [f'{i * 2 + j + 1}) "{x}"' for i, (k, v) in enumerate(rows) for j, x in enumerate((k, v))]
    return f"127.0.0.1:6379> HGETALL user:{rng.randint(1, 9999)}\n" + "\n".join(lines) + "\n"


@carrier()
def c_pandas(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)
    cols = [("id", rows[0][1]), ("name", rows[1][1]), ("...", "..."), (f.col, f.value.written)]
    ws = [max(width(k), width(v)) for k, v in cols]
    head = "   " + "  ".join(pad(k, w, right=True) for (k, _), w in zip(cols, ws, strict=True))
    body = "0  " + "  ".join(pad(v, w, right=True) for (_, v), w in zip(cols, ws, strict=True))
    return f"{head}\n{body}\n\n[1 rows x {rng.randint(9, 31)} columns]\n"


@carrier()
def c_markdown(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)
    lines = [f"| {f.phrase if k == f.col else k.replace('_', ' ').title()} | {v} |" for k, v in rows[1:]]
    return "Here's what the lookup returned:\n\n| Field | Value |\n|---|---|\n" + "\n".join(lines) + "\n"


@carrier()
def c_xlsx(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)
    return ("Sheet1\n\tCustomer\t\t\tRecord\n" + "\t".join(k if k != f.col else f.phrase for k, _ in rows) + "\n"
            + "\t".join(v for _, v in rows) + "\n")


@carrier(is_json=True)
def c_mcp(rng: random.Random, f: Field) -> str:
    inner = jdump(dict(row_of(rng, f)))
    return jdump({"jsonrpc": "2.0", "id": rng.randint(1, 400), "result": {
        "content": [{"type": "text", "text": inner}], "isError": False}})


@carrier(is_json=True)
def c_tool_args(rng: random.Random, f: Field) -> str:
    args = jdump({"record_id": rng.randint(1, 99_999), "fields": {f.col: f.value.written}})
    tool = rng.choice(("update_record", "crm_upsert", "fill_form", "save_settings"))
    return jdump({"id": f"call_{pick(rng, B62, 24)}", "type": "function",
                  "function": {"name": tool, "arguments": args}})


@carrier(is_json=True)
def c_sql_rows(rng: random.Random, f: Field) -> str:
    rows = row_of(rng, f)
    return jdump({"columns": [k for k, _ in rows], "rows": [[v for _, v in rows]], "row_count": 1,
                  "elapsed_ms": rng.randint(3, 900)})


@carrier(is_json=True)
def c_postgrest(rng: random.Random, f: Field) -> str:
    return jdump([dict(row_of(rng, f))])


@carrier(is_json=True)
def c_mcp_structured(rng: random.Random, f: Field) -> str:
    row = dict(row_of(rng, f))
    return jdump({"jsonrpc": "2.0", "id": rng.randint(1, 400), "result": {
        "content": [{"type": "text", "text": f"Found 1 record ({row['id']})"}], "structuredContent": {"record": row}}})


@carrier(is_json=True)
def c_heroku_json(rng: random.Random, f: Field) -> str:
    return jdump({"DYNO_SIZE": "standard-1x", f.col: f.value.written, "NODE_ENV": "production"}, indent=2)


@carrier(is_json=True)
def c_browser_action(rng: random.Random, f: Field) -> str:
    return jdump({"action": "type", "element": f.phrase, "ref": f"e{rng.randint(3, 90)}", "text": f.value.written,
                  "submit": False})


GREETINGS = {"en": "Hi,", "es": "Hola,", "pt": "Olá,", "de": "Hallo,", "fr": "Bonjour,", "it": "Ciao,", "nl": "Hoi,",
             "pl": "Dzień dobry,", "uk": "Добрий день,", "ro": "Bună ziua,", "hu": "Jó napot,", "sv": "Hej,",
             "no": "Hei,", "tr": "Merhaba,", "ru": "Здравствуйте,", "ar": "مرحبًا،", "fa": "سلام،",
             "ur": "السلام علیکم،", "bn": "নমস্কার,", "hi": "नमस्ते,", "ja": "こんにちは。", "ko": "안녕하세요.",
             "zh": "您好，", "zh_tw": "您好，",
             "th": "สวัสดีครับ", "vi": "Xin chào,", "id": "Halo,", "ms": "Hai,", "sw": "Habari,"}


def customer_message(rng: random.Random, f: Field) -> str:
    """What a customer writes, in the text's language: a greeting and the labelled value."""
    return f"{GREETINGS[f.lang]} {f.phrase}: {f.value.written}"


@carrier(is_json=True)
def c_zendesk(rng: random.Random, f: Field) -> str:
    return jdump({"ticket": {"id": rng.randint(10_000, 999_999), "subject": "Update my details",
                             "description": customer_message(rng, f), "status": "open",
                             "requester_id": rng.randint(10**9, 10**10), "via": {"channel": "web"},
                             "tags": ["account", "update"]}}, indent=2)


@carrier(is_json=True)
def c_intercom(rng: random.Random, f: Field) -> str:
    return jdump({"type": "conversation", "id": str(rng.randint(10**11, 10**12)), "conversation_parts": {
        "type": "conversation_part.list", "conversation_parts": [{"part_type": "comment", "author": {"type": "user"},
                                                                  "body": f"<p>{customer_message(rng, f)}</p>"}]}})


@carrier(is_json=True)
def c_freshdesk(rng: random.Random, f: Field) -> str:
    return jdump({"id": rng.randint(100, 99_999), "priority": 2, "status": 2, "description_text":
                  customer_message(rng, f), "custom_fields": {f"cf_{f.col.lower()}": f.value.written}})


@carrier()
def c_turn(rng: random.Random, f: Field) -> str:
    return rng.choice(TURNS[f.lang]).format(p=f.phrase, v=f.value.written)


@carrier(is_json=True)
def c_str_replace(rng: random.Random, f: Field) -> str:
    path = rng.choice(("config/settings.yaml", "app/config.py", ".env.local", "deploy/values.yaml"))
    sep = ": " if path.endswith("yaml") else "="
    return jdump({"command": "str_replace", "path": path, "old_str": f"{f.col}{sep}\"\"",
                  "new_str": f"{f.col}{sep}\"{f.value.written}\""})


@carrier()
def c_asr(rng: random.Random, f: Field) -> str:
    t = rng.randint(20, 600)
    return (f"[{t // 60:02d}:{t % 60:02d}.{rng.randint(0, 999):03d}] AGENT: Could you confirm your {f.phrase}?\n"
            f"[{(t + 4) // 60:02d}:{(t + 4) % 60:02d}.{rng.randint(0, 999):03d}] CALLER: sure, my {f.phrase} is "
            f"{f.value.written}\n")


@carrier(is_json=True)
def c_deepgram(rng: random.Random, f: Field) -> str:
    text = f"my {f.phrase} is {f.value.written}"
    return jdump({"metadata": {"request_id": str(uuid.UUID(int=rng.getrandbits(128), version=4))}, "results": {
        "channels": [{"alternatives": [{"transcript": text, "confidence": round(rng.uniform(0.8, 0.99), 3)}]}]}})


# ---- shell transcripts holding variables ------------------------------------------------------------------------

def env_name(col: str) -> str:
    """A column name as a shell variable (`spring.datasource.password` -> SPRING_DATASOURCE_PASSWORD)."""
    return col.replace(".", "_").upper() if "." in col else col


@carrier(is_json=True)
def c_docker_inspect(rng: random.Random, f: Field) -> str:
    return jdump([{"Id": pick(rng, HEX, 64), "Config": {"Hostname": pick(rng, HEX, 12), "Env": [
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", f"{env_name(f.col)}={f.value.written}",
        "LANG=C.UTF-8"],
        "Image": "registry.example.com/api:1.8.2"}}], indent=4)


@carrier()
def c_heroku(rng: random.Random, f: Field) -> str:
    return (f"$ heroku config -a {rng.choice(('acme-api', 'shop-worker', 'crm-sync'))}\n=== Config Vars\n"
            f"{pad(env_name(f.col) + ':', max(28, len(f.col) + 2))}{f.value.written}\n{pad('WEB_CONCURRENCY:', 28)}2\n")


# ---- carriers written from templates ----------------------------------------------------------------------------

TEMPLATES: dict[str, tuple[str, ...]] = {
    "printenv": ("$ {envcmd} | sort\nHOME=/home/agent\nHOSTNAME=runner-{hex8}\n{env}={v}\n"
                 "PATH=/usr/local/bin:/usr/bin:/bin\n",),
    "dotenv": ("$ cat .env\n# local settings\nAPP_ENV=staging\n{env}={v}\nPORT=8080\n",
               "$ cat .env\nAPP_ENV=staging\n{env}=\"{v}\"\n", "$ cat .env.production\n{env}='{v}'\nPORT=8080\n"),
    "kubectl_cm": ("$ kubectl get cm api-config -o yaml\napiVersion: v1\ndata:\n  LOG_LEVEL: info\n  {col}: {v}\n"
                   "kind: ConfigMap\nmetadata:\n  name: api-config\n  namespace: prod\n",),
    "history": ("$ history | tail -3\n {n}  cd ~/src/api\n {n1}  export {env}='{v}'\n {n2}  make run\n",),
    "compose": ("$ cat docker-compose.yml\nservices:\n  db:\n    image: {image}\n    environment:\n      {col}: {v}\n"
                "    ports:\n      - \"5432:5432\"\n",),
    "properties": ("$ cat src/main/resources/application.properties\nserver.port=8080\n{col}={v}\n"
                   "spring.jpa.hibernate.ddl-auto=validate\n",),
    "cli_password": ("$ mysql -h db.internal -u root -p{v} -e 'SHOW DATABASES;'\n",
                     "$ PGPASSWORD='{v}' psql -h 10.0.0.5 -U app -d orders -c '\\dt'\n",
                     "$ redis-cli -h cache.internal -a '{v}' PING\nPONG\n",
                     "$ docker login -u ci-bot --password '{v}' registry.example.com\nLogin Succeeded\n",
                     "$ mongosh \"mongodb://db:27017/admin\" -u admin -p '{v}'\n",
                     "$ ./deploy.sh --user release --password {v} --env prod\n"),
    "aws_credentials": ("$ cat ~/.aws/credentials\n[default]\naws_access_key_id = {akid}\naws_secret_access_key = {v}\n"
                        "region = eu-central-1\n",),
    "aws_csv": ("$ cat {akid_user}_accessKeys.csv\nAccess key ID,Secret access key\n{akid},{v}\n",),
    "aws_pair": ("I'll configure the CLI with {akid} / {v} and retry the upload.", "| {akid} | {v} | Active |",
                 "keys: {akid}:{v}", "export AWS_ACCESS_KEY_ID={akid} AWS_SECRET_ACCESS_KEY={v}"),
    "stripe_listen": ("$ stripe listen --forward-to localhost:{port}/webhook\n> Ready! You are using Stripe API "
                      "Version "
                      "[2024-06-20]. Your webhook signing secret is {v} (^C to quit)\n",),
    "curl_post": ("$ curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"Deploy finished\"}}' "
                  "{v}\nok\n",),
    "cat_key": ("$ cat ~/.ssh/id_ed25519\n{v}", "$ cat deploy/keys/signing.pem\n{v}",
                "$ sudo cat /etc/ssl/private/api.key\n{v}"),
    "heredoc": ("$ cat > certs/dev.key <<'EOF'\n{v}EOF\n$ chmod 600 certs/dev.key\n",),
    "curl_v": ("$ curl -v https://api.example.com/v1/export\n> GET /v1/export HTTP/2\n> Host: api.example.com\n> {v}\n"
               "> Accept: */*\n>\n< HTTP/2 200\n< content-type: application/json\n",),
    "set_cookie": ("< HTTP/1.1 302 Found\n< Location: /dashboard\n< Set-Cookie: {v}; Path=/; HttpOnly; Secure; "
                   "SameSite=Lax\n",),
    "selenium": ("driver.get(\"https://portal.example.com/account\")\nel = driver.find_element(By.NAME, \"{col}\")\n"
                 "el.clear()\nel.send_keys(\"{v}\")\n"
                 "driver.find_element(By.CSS_SELECTOR, \"button[type=submit]\").click()\n",),
    "playwright": ("- Ran Playwright code:\n```js\nawait page.getByLabel('{phrase}').fill('{v}');\n```\n"
                   "- Page URL: https://app.example.com/settings\n",
                   "pw:api => page.fill started []\npw:api waiting for locator('#{col}')\npw:api   fill(\"{v}\")\n"
                   "pw:api <= page.fill succeeded []\n"),
    "reasoning": ("The query returned one row. Its {col} column is {v}, which is what the form needs, so the next step "
                  "is to submit it and check the response code.",),
    "final_answer": ("Here is the record I found:\n\n- **Name:** {name}\n- **{Phrase}:** {v}\n"
                     "- **Last updated:** {ts}\n\n"
                     "Let me know if anything should change.",),
    "quoted_reply": ("Thanks for getting in touch! I've noted the details below.\n\n> {msg}\n\n"
                     "Our team will confirm within one business day.",),
    "diff": ("--- a/.env.example\n+++ b/.env\n@@ -3,3 +3,3 @@\n NODE_ENV=production\n-{col}=\n+{col}={v}\n"
             " LOG_LEVEL=info\n",),
    "search_replace": ("app/settings.py\n```python\n<<<<<<< SEARCH\n{col} = os.environ.get(\"{env}\")\n=======\n"
                       "{col} = \"{v}\"\n>>>>>>> REPLACE\n```\n",),
    "pdf_form": ("Page 1 of 2\nAPPLICATION FORM\nFull name\n{name}\n{Phrase}\n{v}\nDate\n{date}\n"
                 "The applicant confirms that the informa-\ntion given above is correct.\n",),
    "pdf_columns": ("Bill to:                               Invoice no. INV-{n}\n{name:38s} Issue date {date}\n"
                    "{phrase}: {v}     Terms: net 30\nThank you for your busi-          Amount due {n1}.00\nness.\n",),
    "a11y": ("- heading \"{title}\" [level=1] [ref=e{ref}]\n- textbox \"{name}\" [ref=e{ref1}]\n"
             "- textbox \"{Phrase}\" [ref=e{ref2}]: {v}\n- button \"Save\" [ref=e{ref3}]\n",),
    "dom": ("<form id=\"settings\">\n  <label for=\"{col}\">{phrase}</label>\n  <input type=\"{itype}\" id=\"{col}\" "
            "name=\"{col}\" aria-label=\"{phrase}\" value=\"{v}\" autocomplete=\"off\">\n</form>\n",),
    "ocr": ("[screenshot OCR]\nAcc0unt  Detai1s\nNarne{sep}{name}\n{phrase}{sep}{v}\nLast 1ogin{sep}{ts}\n",),
}
"""Carriers whose text is one of a few templates; the slots are those `slots` fills."""


def slots(rng: random.Random, f: Field) -> dict[str, object]:
    """What a template may name: the field, and ordinary values drawn around it."""
    akid, n, ref = aws_key_id(rng), rng.randint(100, 9999), rng.randint(5, 80)
    secretish = any(w in f.col.lower() for w in ("pass", "pwd", "secret"))
    return {"col": f.col, "env": env_name(f.col), "phrase": f.phrase, "Phrase": cap(f.phrase), "v": f.value.written,
            "name": name(rng, f.lang), "ts": stamp(rng), "date": stamp(rng)[:10], "n": n, "n1": n + 1, "n2": n + 2,
            "hex8": pick(rng, HEX, 8), "ref": ref, "ref1": ref + 1, "ref2": ref + 3, "ref3": ref + 4,
            "akid": akid,
            "akid_user": rng.choice(("ci-bot", "etl")),
            "envcmd": rng.choice(("env", "printenv")), "image": rng.choice(("mysql:8.4", "postgres:16", "redis:7")),
            "port": rng.choice((3000, 4242, 8000)), "title": rng.choice(("Account settings", "Checkout", "Profile")),
            "itype": "password" if secretish else "text", "sep": rng.choice(("      ", "  |  ", "\t\t", "   :   ")),
            "msg": customer_message(rng, f)}


def templated(templates: tuple[str, ...]) -> Carrier:
    """A carrier writing one of `templates` with the slots filled."""
    return lambda rng, f: rng.choice(templates).format(**slots(rng, f))


for _name, _templates in TEMPLATES.items():
    CARRIERS[_name] = (templated(_templates), False)


# ---- carriers of one kind ---------------------------------------------------------------------------------------

LOGIN = {"en": ("I'll log in with the password {v} and retry.", "Signing in as admin with password {v} now."),
         "es": ("Voy a iniciar sesión con la contraseña {v}.",), "pt": ("Vou entrar com a senha {v} agora.",),
         "de": ("Ich melde mich mit dem Passwort {v} an.",), "fr": ("Je me connecte avec le mot de passe {v}.",),
         "ja": ("パスワード {v} でログインします。",), "ru": ("Вхожу с паролем {v}.",)}
"""A model's turn saying it will sign in with a password, per language."""


@carrier()
def c_login(rng: random.Random, f: Field) -> str:
    return rng.choice(LOGIN.get(f.lang, LOGIN["en"])).format(v=f.value.written)


@carrier(is_json=True)
def c_aws_sts(rng: random.Random, f: Field) -> str:
    return jdump({"Credentials": {"AccessKeyId": "ASIA" + aws_key_id(rng)[4:], "SecretAccessKey": f.value.written,
                                  "SessionToken": "IQoJb3JpZ2luX2Vj" + pick(rng, B64, 180),
                                  "Expiration": stamp(rng).replace(" ", "T") + "+00:00"},
                  "AssumedRoleUser": {"Arn": "arn:aws:sts::123456789012:assumed-role/agent/session"}}, indent=4)


@carrier(is_json=True)
def c_stripe_endpoint(rng: random.Random, f: Field) -> str:
    return jdump({"id": f"we_{pick(rng, B62, 24)}", "object": "webhook_endpoint",
                  "enabled_events": ["charge.succeeded"],
                  "livemode": rng.random() < 0.5, "secret": f.value.written, "status": "enabled",
                  "url": "https://api.example.com/stripe/webhook"}, indent=2)


@carrier()
def c_label_line(rng: random.Random, f: Field) -> str:
    p = cap(f.phrase)
    v = f.value.written
    frames = [f"{p}: {v}", f"{p} = {v}", f"{p} - {v}", f"{p}：{v}"]
    if f.lang == "en":
        frames += [f"Your {f.phrase} is {f.value.written}", f"the {f.phrase} is {f.value.written}"]
    return rng.choice(frames)


@carrier(is_json=True)
def c_gcp_sa(rng: random.Random, f: Field) -> str:
    proj = f"{rng.choice(('acme', 'shop', 'ml'))}-{rng.choice(('prod', 'dev'))}-{rng.randint(100000, 999999)}"
    return jdump({"type": "service_account", "project_id": proj, "private_key_id": pick(rng, HEX, 40),
                  "private_key": f.value.written, "client_email": f"agent@{proj}.iam.gserviceaccount.com",
                  "client_id": digits(rng, 21), "token_uri": "https://oauth2.googleapis.com/token"}, indent=2)


@carrier(is_json=True)
def c_read_file(rng: random.Random, f: Field) -> str:
    return jdump({"jsonrpc": "2.0", "id": rng.randint(1, 99), "result": {"content": [{"type": "text",
                                                                                     "text": f.value.written}]}})


@carrier(is_json=True)
def c_har(rng: random.Random, f: Field) -> str:
    head, val = f.value.written.split(": ", 1) if ": " in f.value.written else ("Cookie", f.value.written)
    return jdump({"request": {"method": "GET", "url": "https://app.example.com/api/me", "headers": [
        {"name": "accept", "value": "application/json"}, {"name": head, "value": val}]}, "response": {"status": 200}})


@carrier()
def c_devtools(rng: random.Random, f: Field) -> str:
    head, val = f.value.written.split(": ", 1) if ": " in f.value.written else ("cookie", f.value.written)
    return (f":authority: app.example.com\n:method: GET\n:path: /api/me\naccept: application/json\n"
            f"{head.lower()}: {val}\nuser-agent: Mozilla/5.0 (X11; Linux x86_64)\n")


@carrier(is_json=True)
def c_cookies_json(rng: random.Random, f: Field) -> str:
    key, val = f.value.written.split("=", 1)
    return jdump({"cookies": [{"name": key, "value": val, "domain": "app.example.com", "path": "/",
                               "expires": 1767225600, "httpOnly": True, "secure": True, "sameSite": "Lax"}],
                  "origins": []}, indent=2)


@carrier()
def c_cookies_txt(rng: random.Random, f: Field) -> str:
    key, val = f.value.written.split("=", 1)
    return f"# Netscape HTTP Cookie File\n.example.com\tTRUE\t/\tTRUE\t1767225600\t{key}\t{val}\n"


# ---- kinds: values, names, languages and carriers ---------------------------------------------------------------

TABLES = ("psql", "psql_expanded", "mysql", "sqlite_line", "sqlite_box", "duckdb", "polars", "bigquery", "snowflake",
          "mongosh", "redis", "pandas", "sql_rows")
DOCS = ("markdown", "xlsx", "pdf_form", "pdf_columns", "ocr")
BROWSER = ("a11y", "dom", "playwright", "selenium", "browser_action")
AGENT = ("mcp", "tool_args", "turn", "reasoning", "final_answer")
SUPPORT = ("zendesk", "intercom", "freshdesk", "quoted_reply")
EDITS = ("str_replace", "diff", "search_replace")
VOICE = ("asr", "deepgram")
SHELL = ("printenv", "dotenv", "docker_inspect", "kubectl_cm", "heroku", "history", "compose", "properties")
PII = TABLES + DOCS + BROWSER + AGENT + SUPPORT + VOICE + ("postgrest", "mcp_structured", "zendesk", "tool_args")
SECRET = SHELL + EDITS + AGENT + BROWSER + ("postgrest", "mcp_structured", "heroku_json", "tool_args", "psql", "mysql",
                                            "sqlite_line", "duckdb", "bigquery", "redis", "markdown", "ocr", "xlsx",
                                            "quoted_reply", "zendesk")
SPOKEN = frozenset(VOICE)
"""Carriers where digits are written as ASR writes them."""


@dataclass(frozen=True)
class Spec:
    """How a kind's cases are written: its values, column or variable names, labels, languages, carriers."""

    value: Callable[[random.Random, str], Value]
    cols: tuple[str, ...]
    label: Callable[[random.Random, str], str]
    langs: tuple[str, ...]
    carriers: tuple[str, ...]


def words(concept: str) -> Callable[[random.Random, str], str]:
    """Labels of a concept in the text's language."""
    return lambda rng, lang: word(rng, WORDS[concept], lang)


def fixed(*labels: str) -> Callable[[random.Random, str], str]:
    """Labels that do not change with the language (a provider's name)."""
    return lambda rng, lang: rng.choice(labels)


def phones(value: Callable[[random.Random, str], Value], cols: str, langs: str) -> Spec:
    """A phone plan's spec: context words in the country's languages and English."""
    return Spec(value, tuple(cols.split()), lambda rng, lang: word(rng, PHONE_WORDS, lang), tuple(langs.split()), PII)


def key_spec(value: Callable[[random.Random, str], Value], cols: str, *labels: str) -> Spec:
    """A provider token's spec: its env names, labels naming the provider, the secret carriers."""
    return Spec(value, tuple(cols.split()), fixed(*labels), ("en",) + LANGS[1:8], SECRET)


SECRET_LANGS = LANGS
KINDS: dict[str, Spec] = {
    "password": Spec(password, ("DB_PASSWORD", "PGPASSWORD", "MYSQL_ROOT_PASSWORD", "userPassword", "adminPwd",
                                "REDIS_PASS", "APP_DB_PASS", "spring.datasource.password", "SMTP_PASSWORD", "db_pass",
                                "POSTGRES_PASSWORD", "ldapBindPassword", "RABBITMQ_DEFAULT_PASS"),
                     words("password"), SECRET_LANGS, SECRET + ("cli_password", "login") * 4 + ("a11y", "dom")),
    "aws_secret": Spec(aws_secret, ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "SecretAccessKey", "secretKey"),
                       fixed("AWS secret access key", "secret access key", "AWS secret"), ("en", "es", "de", "ja"),
                       SECRET + ("aws_credentials", "aws_sts", "aws_csv", "aws_pair") * 3),
    "webhook": Spec(webhook, ("WEBHOOK_URL", "webhook_url", "ALERT_WEBHOOK", "NOTIFY_URL", "hook_url"),
                    fixed("webhook URL", "Slack webhook", "incoming webhook"), ("en", "pt", "fr", "ko"),
                    SECRET + ("curl_post",) * 3),
    "stripe_whsec": Spec(stripe_whsec, ("STRIPE_WEBHOOK_SECRET", "webhook_secret", "signing_secret",
                                        "STRIPE_ENDPOINT_SECRET"), fixed("webhook signing secret", "endpoint secret"),
                         ("en", "es", "it"), SECRET + ("stripe_listen", "stripe_endpoint") * 3),
    "connection_string": Spec(connection_string, ("DATABASE_URL", "ConnectionStrings__Default", "MONGO_URI",
                                                  "AZURE_STORAGE_CONNECTION_STRING", "jdbc_url", "REDIS_URL",
                                                  "SQLALCHEMY_DATABASE_URI", "conn_str", "AMQP_URL"),
                              fixed("connection string", "database URL", "DSN"), ("en", "de", "pl", "zh"), SECRET),
    "labelled_key": Spec(labelled_key, ("api_key", "secret_key", "access_token"), words("key"), LANGS,
                         DOCS + SUPPORT + ("a11y", "browser_action", "turn", "final_answer", "markdown", "mcp",
                                           "tool_args") + ("label_line",) * 6),
    "disguised": Spec(disguised, ("API_KEY", "api_key", "token", "SECRET_KEY", "auth_token"),
                      fixed("token", "API key", "key"), ("en", "ru", "ja", "ar", "tr"), SECRET),
    "email": Spec(email, ("email", "e_mail", "contact_email", "correo", "emailAddress", "user_email"), words("email"),
                  LANGS, PII + ("dom", "a11y")),
    "email_spoken": Spec(email_spoken, ("email",), words("email"), ("en",), VOICE + ("turn", "reasoning",
                                                                                   "final_answer", "zendesk")),
    "phone_us_ca": phones(phone_us_ca, "phone mobile_phone tel contact_number cell", "en es fr"),
    "phone_uk": phones(phone_uk, "phone mobile telephone tel", "en"),
    "phone_fr": phones(phone_fr, "telephone portable tel phone", "fr en"),
    "phone_de": phones(phone_de, "telefon handy mobil phone", "de en"),
    "phone_in": phones(phone_in, "phone mobile contact_no mobile_number", "en hi bn"),
    "phone_es": phones(phone_es, "telefono movil phone", "es en"),
    "phone_br": phones(phone_br, "telefone celular whatsapp phone", "pt en"),
    "phone_it": phones(phone_it, "telefono cellulare phone", "it en"),
    "phone_nl": phones(phone_nl, "telefoon mobiel phone", "nl en"),
    "phone_pl": phones(phone_pl, "telefon komorka phone", "pl en"),
    "phone_ua": phones(phone_ua, "telefon mobilnyi phone", "uk en"),
    "phone_tr": phones(phone_tr, "telefon cep_tel phone", "tr en"),
    "phone_jp": phones(phone_jp, "denwa keitai phone tel", "ja en"),
    "phone_kr": phones(phone_kr, "jeonhwa hp phone", "ko en"),
    "phone_id": phones(phone_id, "telepon no_hp phone", "id en"),
    "ssn": Spec(ssn, ("ssn", "social_security_number", "SSN", "tax_id"),
                fixed("SSN", "Social Security number", "social security no.", "número de Seguro Social"), ("en", "es"),
                PII),
    "card": Spec(card, ("card_number", "pan", "cc_number", "cardNumber"), words("card"), LANGS, PII),
    "iban": Spec(iban, ("iban", "IBAN", "bank_account", "payout_iban"), words("iban"), LANGS, PII),
    "openai_key": key_spec(openai_key, "OPENAI_API_KEY openai_api_key", "OpenAI API key", "OpenAI key"),
    "anthropic_key": key_spec(anthropic_key, "ANTHROPIC_API_KEY anthropic_api_key", "Anthropic API key"),
    "huggingface_token": key_spec(prefixed("hf_", string.ascii_letters, 34, "hf"), "HF_TOKEN HUGGING_FACE_HUB_TOKEN",
                                  "Hugging Face token"),
    "replicate_token": key_spec(prefixed("r8_", B62, 37, "r8"), "REPLICATE_API_TOKEN", "Replicate token"),
    "groq_key": key_spec(prefixed("gsk_", B62, 52, "gsk"), "GROQ_API_KEY", "Groq API key"),
    "mistral_key": key_spec(prefixed("", B62, 32, "b62_32"), "MISTRAL_API_KEY", "Mistral API key"),
    "cohere_key": key_spec(prefixed("", B62, 40, "b62_40"), "CO_API_KEY COHERE_API_KEY", "Cohere API key"),
    "langsmith_key": key_spec(langsmith_key, "LANGSMITH_API_KEY LANGCHAIN_API_KEY", "LangSmith API key"),
    "langfuse_key": key_spec(langfuse_key, "LANGFUSE_SECRET_KEY", "Langfuse secret key"),
    "pinecone_key": key_spec(pinecone_key, "PINECONE_API_KEY", "Pinecone API key"),
    "supabase_key": key_spec(supabase_key, "SUPABASE_SERVICE_ROLE_KEY SUPABASE_SECRET_KEY", "Supabase service key"),
    "vercel_token": key_spec(prefixed("", B62, 24, "b62_24"), "VERCEL_TOKEN", "Vercel token"),
    "cloudflare_token": key_spec(cloudflare_token, "CLOUDFLARE_API_TOKEN CF_API_KEY", "Cloudflare API token"),
    "github_token": key_spec(github_token, "GITHUB_TOKEN GH_TOKEN", "GitHub token"),
    "private_key": Spec(private_key, ("private_key", "PRIVATE_KEY", "signing_key"), fixed("private key"), ("en",),
                        ("cat_key", "gcp_sa", "read_file", "heredoc", "gcp_sa", "read_file", "bigquery", "str_replace",
                         "dotenv", "sql_rows", "postgrest")),
    "jwt": key_spec(jwt_value, "ACCESS_TOKEN id_token jwt auth_token", "access token", "ID token", "JWT"),
    "auth_header": Spec(auth_header, ("header", "request_header"), fixed("header", "auth header"), ("en",),
                        ("curl_v", "har", "devtools") * 3 + ("mcp", "tool_args", "turn", "reasoning", "str_replace")),
    "session_cookie": Spec(session_cookie, ("cookie", "Cookie"), fixed("cookie", "session cookie"), ("en",),
                           ("cookies_json", "cookies_txt", "set_cookie", "devtools", "har") * 2 + ("turn", "mcp")),
    "br_cpf": Spec(br_cpf, ("cpf", "CPF"), fixed("CPF"), ("pt",), PII),
    "es_dni": Spec(es_dni, ("dni", "DNI", "nif"), fixed("DNI", "NIF"), ("es",), PII),
    "pl_pesel": Spec(pl_pesel, ("pesel", "PESEL"), fixed("PESEL", "numer PESEL"), ("pl",), PII),
    "cn_resident_id": Spec(cn_resident_id, ("id_card", "sfzh"), fixed("身份证号", "公民身份号码"), ("zh",), PII),
}
"""Every kind of the corpus."""

DIGIT_KINDS = frozenset(k for k in KINDS if k.startswith("phone_")) | {"card", "ssn", "iban"}
"""Kinds whose values a voice carrier writes as ASR writes digits."""


def unescape_at(text: str) -> str:
    """Keep a written `\\u0040` a JSON escape of `@` in a JSON carrier, at every level (not an escaped backslash)."""
    while "\\\\u0040" in text:
        text = text.replace("\\\\u0040", "\\u0040")
    return text


def case(kind: str, spec: Spec, rng: random.Random, i: int) -> Case:
    """The i-th case of a kind."""
    name_ = spec.carriers[i % len(spec.carriers)]
    fn, is_json = CARRIERS[name_]
    value = spec.value(rng, name_)
    if name_ in SPOKEN and kind in DIGIT_KINDS:
        said = spoken_digits(rng, value.written)
        value = Value(said, said, "spoken")
    lang = spec.langs[rng.randrange(len(spec.langs))]
    text = fn(rng, Field(rng.choice(spec.cols), spec.label(rng, lang), lang, value))
    if is_json and "\\u0040" in value.written:
        text = unescape_at(text)
    return Case(kind, f"{name_}/{value.style}", text, value.secret, is_json)


def generate() -> Iterator[Case]:
    """PER_KIND cases of every kind, the same on every call."""
    for kind, spec in KINDS.items():
        rng = random.Random(f"fifteenth/{kind}")
        for i in range(PER_KIND):
            yield case(kind, spec, rng, i)


# ---- near misses: what such tool results hold that is neither secret nor personal -------------------------------

def bad_luhn(rng: random.Random) -> str:
    """16 digits whose last digit is not their Luhn digit (an order or tracking number)."""
    body = rng.choice("3456") + digits(rng, 14)
    return body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)


def bad_iban(rng: random.Random) -> str:
    """An IBAN of registry shape whose check digits are wrong."""
    country = rng.choice(tuple(IBAN_BBANS))
    b = bban(rng, IBAN_BBANS[country])
    good = int(iban_check(country, b))
    return group(f"{country}{rng.choice([c for c in range(2, 99) if c != good]):02d}{b}", 4, " ")


def bad_ssn(rng: random.Random) -> str:
    """A number in SSN shape the SSA never issues."""
    a, g, s = ssn_parts(rng)
    which = rng.randrange(5)
    a = ("000", "666", str(rng.randint(900, 999)), a, a)[which]
    g = "00" if which == 3 else g
    s = "0000" if which == 4 else s
    return f"{a}-{g}-{s}"


def near_uuid(r: random.Random) -> str:
    """A ticket tool's ids: UUIDs and a trace id."""
    return jdump({"ticket_id": str(uuid.UUID(int=r.getrandbits(128), version=4)), "trace_id": pick(r, HEX, 32),
                  "request_id": str(uuid.UUID(int=r.getrandbits(128), version=4)), "status": "solved"})


def near_counts(r: random.Random) -> str:
    """Row counts and timings as the clients print them."""
    return r.choice((f"({r.randint(2, 99999)} rows)\n\nTime: {r.randint(1, 999)}.{r.randint(0, 999)} ms",
                     f"Query OK, {r.randint(1, 9999)} rows affected ({r.randint(0, 9)}.{r.randint(0, 99)} sec)",
                     f"shape: ({r.randint(1000, 9_999_999)}, {r.randint(2, 40)})"))


def near_price(r: random.Random) -> str:
    """A line item with prices."""
    return (f"| SKU-{r.randint(1000, 9999)} | {r.randint(1, 9)},{r.randint(100, 999)}.{r.randint(0, 99):02d} EUR | "
            f"qty {r.randint(1, 50)} | total ${r.randint(10, 99_999)}.{r.randint(0, 99):02d} |")


def near_masked(r: random.Random) -> str:
    """A card as dashboards mask it."""
    return r.choice((f"Visa •••• {digits(r, 4)} exp {r.randint(1, 12):02d}/{r.randint(26, 31)}",
                     f"card_number: ************{digits(r, 4)}", f"{digits(r, 6)}******{digits(r, 4)}",
                     f"Mastercard ending in {digits(r, 4)}"))


def near_truncated(r: random.Random) -> str:
    """A key in a display form that keeps its prefix and last four."""
    return r.choice((f"OPENAI_API_KEY=sk-...{pick(r, B62, 4)}", f"key: sk-proj-****{pick(r, B62, 4)}",
                     f"Token ghp_****{pick(r, B62, 4)} (expires in 30 days)",
                     f"| Stripe | sk_live_...{pick(r, B62, 4)} | active |"))


def near_aws_list(r: random.Random) -> str:
    """`aws configure list`, which masks all but the last four."""
    return ("$ aws configure list\n      Name                    Value             Type    Location\n"
            f"access_key     ****************{pick(r, string.ascii_uppercase, 4)} shared-credentials-file\n"
            f"secret_key     ****************{pick(r, B62, 4)} shared-credentials-file")


def near_publishable(r: random.Random) -> str:
    """Keys published to browsers by design: Stripe, Langfuse and Supabase public keys."""
    return r.choice((f"pk_live_{pick(r, B62, 24)}", f"pk_test_{pick(r, B62, 24)}",
                     f"LANGFUSE_PUBLIC_KEY=pk-lf-{uuid.UUID(int=r.getrandbits(128), version=4)}",
                     f"NEXT_PUBLIC_SUPABASE_PUBLISHABLE_KEY=sb_publishable_{pick(r, URLSAFE, 31)}"))


def near_checksum(r: random.Random) -> str:
    """Checksums of build artefacts."""
    return r.choice((f"{pick(r, HEX, 64)}  dist/app-1.{r.randint(0, 9)}.tar.gz", f'ETag: "{pick(r, HEX, 32)}"',
                     f"integrity: sha512-{pick(r, B64, 86)}=="))


def near_version(r: random.Random) -> str:
    """Versions and build numbers."""
    return (f"python 3.{r.randint(8, 13)}.{r.randint(0, 9)}, node v{r.randint(18, 22)}.{r.randint(0, 19)}.0, "
            f"build 2025.{r.randint(1, 12)}.{r.randint(1, 28)}+{pick(r, HEX, 7)}")


PLACEHOLDERS = ("API Key: <YOUR_API_KEY>", "DB_PASSWORD=<your-password-here>", 'password: "********"',
                "OPENAI_API_KEY=your-openai-key", "Secret key = xxxxxxxxxxxxxxxxxxxx",
                "AWS_SECRET_ACCESS_KEY=REPLACE_ME",
                '"userPassword": "[REDACTED]"', "access token is <redacted>")
REFERENCES = ("STRIPE_KEY: ${{ secrets.STRIPE_KEY }}", "password: {{ .Values.db.password }}",
              "DB_PASSWORD=$(cat /run/secrets/db_password)", "apiKey: process.env.OPENAI_API_KEY",
              'token = os.environ["HF_TOKEN"]', "PGPASSWORD=${PGPASSWORD:?unset}",
              "secretKeyRef:\n  name: api-secrets\n  key: stripe-key")
EMPTY = ("DB_PASSWORD=\nAPI_KEY=\n", "$ printenv PGPASSWORD\n$ echo $?\n1", "password: null", '"apiKey": ""',
         "warning: STRIPE_WEBHOOK_SECRET is not set")

NEAR: dict[str, Callable[[random.Random], str]] = {
    "git_sha": lambda r: (f"$ git log --oneline -2\n{pick(r, HEX, 7)} fix: retry on 429\n{pick(r, HEX, 7)} chore: "
                          f"bump deps\ncommit {pick(r, HEX, 40)}"),
    "image_digest": lambda r: f"ghcr.io/acme/api   1.8.{r.randint(0, 9)}   sha256:{pick(r, HEX, 64)}   2 days ago",
    "uuid": near_uuid,
    "object_id": lambda r: f"[\n  {{\n    _id: ObjectId('{object_id(r)}'),\n    items: {r.randint(1, 9)}\n  }}\n]",
    "row_count": near_counts,
    "price": near_price,
    "timestamp": lambda r: (f"{stamp(r).replace(' ', 'T')}.{digits(r, 6)}+00:00 | "
                            f"epoch_ms {r.randint(10**12, 2 * 10**12)}"),
    "masked_card": near_masked,
    "truncated_key": near_truncated,
    "placeholder": lambda r: r.choice(PLACEHOLDERS),
    "secret_ref": lambda r: r.choice(REFERENCES),
    "order_number": lambda r: f"Order #{bad_luhn(r)} shipped; tracking {bad_luhn(r)}",
    "iban_bad_check": lambda r: f"| payee | {bad_iban(r)} | rejected: invalid check digits |",
    "ssn_invalid": lambda r: f"validation error: {bad_ssn(r)} is not an issuable SSN",
    "aws_configure_list": near_aws_list,
    "gh_secret_list": lambda r: (f"$ gh secret list\nNAME                   UPDATED\nSTRIPE_WEBHOOK_SECRET  about "
                                 f"{r.randint(2, 9)} days ago\nOPENAI_API_KEY         about {r.randint(1, 11)} "
                                 "months ago"),
    "publishable_key": near_publishable,
    "checksum": near_checksum,
    "version": near_version,
    "empty_value": lambda r: r.choice(EMPTY),
}
"""Near miss sorts, each a writer of one text."""


def generate_negatives() -> Iterator[tuple[str, str]]:
    """20 near misses of each sort, the same on every call."""
    for sort, make in NEAR.items():
        rng = random.Random(f"fifteenth/near/{sort}")
        for _ in range(20):
            yield sort, make(rng)
