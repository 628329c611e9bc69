"""The twenty-fifth blind redaction corpus: LLM gateways, proxies and the HTTP traffic around an agent, what a
team's gateway and proxy logs hold. Written from the formats' public specifications by someone who read neither
the detection rules nor the other corpora.

Carriers (the `form` head): nginx access logs (combined format with a `$request_body` field) and error logs,
Envoy debug header dumps and JSON access logs, Traefik text and JSON access logs, Caddy console and JSON logs,
LiteLLM proxy debug logs and spend logs, OpenRouter/Portkey/Helicone request logs, HAR 1.2 entries, mitmproxy
`mitmdump` output and flow JSON, `curl -v` traces and devtools' "Copy as cURL", multipart/form-data bodies, AWS API
Gateway execution logs and JSON access logs, Cloudflare Workers trace events (Logpush) and `wrangler tail`, Kong
error logs and file-log JSON, GraphQL requests, provider error bodies, GitHub webhook delivery pages and the
deliveries API, `stripe listen` output, retry logs (openai/httpx/tenacity), and the agent's messages to users
about a failed request in 28 languages (labels in the user's language). About a third is JSON carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not
0000); phones, the national numbering plans (NANP with real area codes and no N11/555 exchanges; Ofcom, clear of
its drama ranges; ARCEP, clear of its fiction ranges; BNetzA, clear of its drama ranges; TRAI/DoT, mobiles 6-9)
with context words in each country's language; AWS keys, IAM's AKIA/ASIA ids (16 base32 characters) and
40-character secrets; Slack, Discord, Teams, Power Automate, Google Chat, Zapier, Mattermost, Webex, Feishu and
DingTalk webhook URLs as their docs print them (the secret is the token-bearing segment or query value only);
Stripe `whsec_` signing secrets (dashboard and CLI forms) and `sk_live_`/`rk_live_` keys; PostgreSQL, Redis,
MongoDB, AMQP and JDBC URIs, ADO.NET, ODBC, Azure Storage and Service Bus connection strings (the secret is the
password or key only); HTTP Basic (RFC 7617), OAuth 2.0 tokens, client secrets and PKCE verifiers (RFC 6749,
RFC 7636), JWT (RFC 7519/7515), session cookies as Express, NextAuth, PHP, Django, Java EE, Rails and Flask write
them; PEM PKCS#8/SEC1 and OpenSSH keys; TOTP seeds (RFC 6238, Google Authenticator's Key Uri Format) and recovery
codes; provider keys as their docs and consoles show them: OpenAI `sk-proj-`/`sk-svcacct-`, Anthropic
`sk-ant-api03-`, OpenRouter `sk-or-v1-`, Google `AIza`, GitHub `ghp_`/`gho_`/`ghs_` (CRC32) and `github_pat_`,
Hugging Face `hf_`; national ids (outside the target): French NIR (key 97 - n mod 97), Swedish personnummer (Luhn),
Finnish HETU (mod 31 letter), Norwegian fodselsnummer (two mod 11 digits), Belgian national register number
(97 - n mod 97, 2 prefixed after 2000), Brazilian CPF (two mod 11 digits).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, a PEM's base64 body), written as the text writes it (a
percent-encoded password is the secret in its encoded form). Near misses are what gateway traffic holds that is
neither secret nor personal: request and trace ids, access-log timings and sizes, cache-busting hashes and SRI
digests, CSS selectors and XPath, pixel geometry, CSRF field names without values, placeholders and masked values,
LiteLLM's hashed key column (a SHA-256 digest opens nothing), user agents and versions, rate-limit headers,
Stripe object ids, parcel tracking numbers, order numbers, Luhn-invalid references, businesses' published
toll-free lines, webhook payload signatures (an HMAC of one payload, useless for another), OAuth's public
parameters (client_id, state, PKCE code_challenge, scope), model names with costs, and the AWS docs' EXAMPLE keys.
Addresses in carriers are RFC 5737 documentation ranges or private upstreams, never a client's.
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
from urllib.parse import quote

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

SEED = 25
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"fr_nir", "se_pnr", "fi_hetu", "no_fnr", "be_nrn", "br_cpf"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
BASE32 = UPPER + "234567"


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

Carrier = Callable[[random.Random, str], str]
"""(rng, snippet) -> the carrier's text holding the snippet."""


# ---- small parts ----------------------------------------------------------------------------------------------

FIRST = ("amelie", "jonas", "priya", "mateo", "sofia", "kenji", "olga", "liam", "fatima", "lukas", "chloe", "arjun",
         "ines", "noah", "yuki", "emre", "hanna", "diego", "aisha", "tomasz", "lea", "ravi", "camille", "oskar")
LAST = ("martin", "schmidt", "sharma", "garcia", "rossi", "tanaka", "novak", "oconnor", "haddad", "weber", "dubois",
        "iyer", "silva", "kowalski", "berg", "yilmaz", "nguyen", "larsen", "moreau", "fischer")
DOMAINS = ("gmail.com", "outlook.com", "yahoo.co.uk", "web.de", "gmx.de", "orange.fr", "free.fr", "proton.me",
           "icloud.com", "rediffmail.com", "hotmail.fr", "acme-logistics.com", "northwind-health.org",
           "brightpath.io", "kestrel-labs.dev")
HOSTS = ("llm-gw.internal", "gateway.acme-logistics.com", "proxy.kestrel-labs.dev", "ai.brightpath.io",
         "litellm.northwind-health.org")
PATHS = ("/v1/chat/completions", "/v1/messages", "/v1/responses", "/api/v1/chat/completions", "/v1/embeddings",
         "/v1beta/models/gemini-1.5-pro:generateContent", "/webhooks/stripe", "/oauth/token", "/mcp")
MODELS = ("gpt-4o-2024-08-06", "anthropic/claude-3-5-sonnet-20241022", "gemini/gemini-1.5-pro",
          "openrouter/meta-llama/llama-3.1-70b-instruct", "bedrock/anthropic.claude-3-haiku-20240307-v1:0",
          "groq/llama-3.1-8b-instant", "mistral/mistral-large-latest")
AGENTS = ("python-httpx/0.27.2", "OpenAI/Python 1.54.3", "anthropic-python/0.39.0", "curl/8.7.1",
          "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5",
          "litellm/1.52.10", "GitHub-Hookshot/a1b2c3d", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
STATUSES = ("HTTP 400", "HTTP 401", "HTTP 403", "HTTP 429", "HTTP 502", "HTTP 503", "HTTP 504")
WORDS = ("Harbor", "violet", "Kestrel", "mango", "Tundra", "copper", "Orbit", "saffron", "Glacier", "pepper",
         "Lantern", "Falcon", "Maple", "quartz", "Nimbus", "cobalt", "Juniper", "basalt")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ip(rng: random.Random) -> str:
    """A documentation address (RFC 5737): no client's."""
    return f"{rng.choice(['192.0.2', '198.51.100', '203.0.113'])}.{rng.randint(1, 254)}"


def _iso(rng: random.Random) -> str:
    return (f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z")


def _clf(rng: random.Random) -> str:
    """The Common Log Format's time."""
    return (f"{rng.randint(1, 28):02d}/{rng.choice(MONTHS)}/2026:{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
            f"{rng.randint(0, 59):02d} +0000")


def _slash_ts(rng: random.Random) -> str:
    """nginx/Kong/Caddy console time."""
    return (f"2026/{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}")


def _user(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)}.{rng.choice(LAST)}"


def _email(rng: random.Random) -> str:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = rng.choice([f"{first}.{last}", f"{first}{last[0]}", f"{first[0]}{last}{rng.randint(1, 99)}",
                        f"{first}_{last}"])
    return f"{local}@{rng.choice(DOMAINS)}"


def _password(rng: random.Random) -> str:
    """A password as people choose them: words with digits and a symbol, random strings, passphrases."""
    shape = rng.randrange(4)
    if shape == 0:
        return f"{rng.choice(WORDS)}{rng.choice(WORDS)}{rng.randint(10, 9999)}{rng.choice('!#$*?')}"
    if shape == 1:
        return pick(rng, ALNUM + "!#$*-_.", rng.randint(14, 24))
    if shape == 2:
        return "-".join(rng.choice(WORDS).lower() for _ in range(4)) + str(rng.randint(1, 99))
    return pick(rng, ALNUM, 3) + rng.choice("!#$*") + pick(rng, ALNUM, rng.randint(8, 14))


def _url_password(rng: random.Random) -> str:
    """A password that needs no escaping in a URI's userinfo or a `key=value;` string."""
    return pick(rng, ALNUM, rng.randint(3, 6)) + rng.choice("-_.~") + pick(rng, ALNUM + "-_", rng.randint(12, 22))


# ---- languages: the agent's message about a failed request, labels in the user's language --------------------

LANGS: dict[str, tuple[str, str, str, str, str, str]] = {
    # code: (password, API key, phone, e-mail, card number, message with {status} and {detail})
    "en": ("Password", "API key", "Phone", "Email", "Card number",
           "Sorry, the request to the gateway failed with {status}. I sent these details: {detail}"),
    "fr": ("Mot de passe", "Clé API", "Téléphone", "Courriel", "Numéro de carte",
           "Désolé, la requête vers la passerelle a échoué ({status}). Détails envoyés : {detail}"),
    "de": ("Passwort", "API-Schlüssel", "Telefon", "E-Mail", "Kartennummer",
           "Leider ist die Anfrage an das Gateway fehlgeschlagen ({status}). Gesendete Angaben: {detail}"),
    "es": ("Contraseña", "Clave de API", "Teléfono", "Correo electrónico", "Número de tarjeta",
           "Lo siento, la solicitud al gateway falló ({status}). Datos enviados: {detail}"),
    "it": ("Password", "Chiave API", "Telefono", "E-mail", "Numero della carta",
           "Purtroppo la richiesta al gateway non è riuscita ({status}). Dati inviati: {detail}"),
    "pt": ("Senha", "Chave de API", "Telefone", "E-mail", "Número do cartão",
           "Desculpe, a solicitação ao gateway falhou ({status}). Dados enviados: {detail}"),
    "nl": ("Wachtwoord", "API-sleutel", "Telefoon", "E-mailadres", "Kaartnummer",
           "Helaas is het verzoek aan de gateway mislukt ({status}). Verzonden gegevens: {detail}"),
    "pl": ("Hasło", "Klucz API", "Telefon", "Adres e-mail", "Numer karty",
           "Niestety żądanie do bramy nie powiodło się ({status}). Wysłane dane: {detail}"),
    "sv": ("Lösenord", "API-nyckel", "Telefon", "E-post", "Kortnummer",
           "Tyvärr misslyckades begäran till gatewayen ({status}). Skickade uppgifter: {detail}"),
    "da": ("Adgangskode", "API-nøgle", "Telefon", "E-mail", "Kortnummer",
           "Desværre mislykkedes anmodningen til gatewayen ({status}). Sendte oplysninger: {detail}"),
    "nb": ("Passord", "API-nøkkel", "Telefon", "E-post", "Kortnummer",
           "Dessverre mislyktes forespørselen til gatewayen ({status}). Sendte opplysninger: {detail}"),
    "fi": ("Salasana", "API-avain", "Puhelin", "Sähköposti", "Kortin numero",
           "Valitettavasti pyyntö yhdyskäytävään epäonnistui ({status}). Lähetetyt tiedot: {detail}"),
    "cs": ("Heslo", "Klíč API", "Telefon", "E-mail", "Číslo karty",
           "Bohužel požadavek na bránu selhal ({status}). Odeslané údaje: {detail}"),
    "tr": ("Şifre", "API anahtarı", "Telefon", "E-posta", "Kart numarası",
           "Maalesef ağ geçidine yapılan istek başarısız oldu ({status}). Gönderilen bilgiler: {detail}"),
    "ru": ("Пароль", "API-ключ", "Телефон", "Эл. почта", "Номер карты",
           "К сожалению, запрос к шлюзу не выполнен ({status}). Отправленные данные: {detail}"),
    "uk": ("Пароль", "API-ключ", "Телефон", "Ел. пошта", "Номер картки",
           "На жаль, запит до шлюзу не вдався ({status}). Надіслані дані: {detail}"),
    "ja": ("パスワード", "APIキー", "電話番号", "メールアドレス", "カード番号",
           "申し訳ありません。ゲートウェイへのリクエストが失敗しました（{status}）。送信した内容：{detail}"),
    "zh": ("密码", "API 密钥", "电话", "电子邮件", "卡号",
           "抱歉，对网关的请求失败（{status}）。已发送的信息：{detail}"),
    "ko": ("비밀번호", "API 키", "전화번호", "이메일", "카드 번호",
           "죄송합니다. 게이트웨이 요청이 실패했습니다({status}). 전송한 정보: {detail}"),
    "ar": ("كلمة المرور", "مفتاح API", "الهاتف", "البريد الإلكتروني", "رقم البطاقة",
           "عذرًا، فشل الطلب إلى البوابة ({status}). البيانات المرسلة: {detail}"),
    "he": ("סיסמה", "מפתח API", "טלפון", "דוא״ל", "מספר כרטיס",
           "מצטער, הבקשה לשער נכשלה ({status}). הפרטים שנשלחו: {detail}"),
    "hi": ("पासवर्ड", "API कुंजी", "फ़ोन", "ईमेल", "कार्ड नंबर",
           "क्षमा करें, गेटवे को भेजा गया अनुरोध विफल रहा ({status})। भेजी गई जानकारी: {detail}"),
    "id": ("Kata sandi", "Kunci API", "Telepon", "Email", "Nomor kartu",
           "Maaf, permintaan ke gateway gagal ({status}). Data yang dikirim: {detail}"),
    "vi": ("Mật khẩu", "Khóa API", "Điện thoại", "Email", "Số thẻ",
           "Xin lỗi, yêu cầu tới cổng thất bại ({status}). Thông tin đã gửi: {detail}"),
    "th": ("รหัสผ่าน", "คีย์ API", "โทรศัพท์", "อีเมล", "หมายเลขบัตร",
           "ขออภัย คำขอไปยังเกตเวย์ล้มเหลว ({status}) ข้อมูลที่ส่ง: {detail}"),
    "el": ("Κωδικός πρόσβασης", "Κλειδί API", "Τηλέφωνο", "Email", "Αριθμός κάρτας",
           "Λυπάμαι, το αίτημα προς την πύλη απέτυχε ({status}). Στοιχεία που στάλθηκαν: {detail}"),
    "ro": ("Parolă", "Cheie API", "Telefon", "E-mail", "Numărul cardului",
           "Din păcate, cererea către gateway a eșuat ({status}). Date trimise: {detail}"),
    "hu": ("Jelszó", "API-kulcs", "Telefon", "E-mail-cím", "Kártyaszám",
           "Sajnos a kérés az átjáró felé sikertelen volt ({status}). Elküldött adatok: {detail}"),
}
LANG_CODES = tuple(LANGS)
FIELDS = {"password": 0, "api_key": 1, "phone": 2, "email": 3, "card": 4}


def _label(lang: str, label: str, value: str) -> str:
    """`label: value` with the language's colon (French spaces it, Chinese and Japanese write it full width)."""
    sep = {"fr": " : ", "ja": "：", "zh": "："}.get(lang, ": ")
    return f"{label}{sep}{value}"


def _say(rng: random.Random, lang: str, field: str, value: str) -> str:
    """The agent's message to the user in `lang`, with `value` after the field's label in that language."""
    labels = LANGS[lang]
    return labels[5].format(status=rng.choice(STATUSES), detail=_label(lang, labels[FIELDS[field]], value))


def _say_text(rng: random.Random, lang: str, detail: str) -> str:
    """The agent's message in `lang` with an already labelled detail."""
    return LANGS[lang][5].format(status=rng.choice(STATUSES), detail=detail)


# ---- text carriers --------------------------------------------------------------------------------------------

def t_nginx_access(rng: random.Random, snip: str) -> str:
    return (f'{_ip(rng)} - - [{_clf(rng)}] "POST {rng.choice(PATHS)} HTTP/1.1" {rng.choice([400, 401, 429, 502])} '
            f'{rng.randint(90, 4000)} "-" "{rng.choice(AGENTS)}" rt={rng.uniform(0, 30):.3f} '
            f'uct="0.001" urt="{rng.uniform(0, 30):.3f}" body="{snip}"')


def t_nginx_error(rng: random.Random, snip: str) -> str:
    host = rng.choice(HOSTS)
    return (f"{_slash_ts(rng)} [error] {rng.randint(20, 4000)}#{rng.randint(0, 8)}: *{rng.randint(1, 99999)} "
            f"upstream sent too big header while reading response header from upstream, client: {_ip(rng)}, "
            f'server: {host}, request: "POST {rng.choice(PATHS)} HTTP/1.1", upstream: '
            f'"http://10.0.{rng.randint(0, 9)}.{rng.randint(2, 250)}:4000", host: "{host}"\n'
            f"{_slash_ts(rng)} [info] mirror of request body (debug_body on): {snip}")


def t_envoy_debug(rng: random.Random, snip: str) -> str:
    return (f"[2026-03-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
            f"{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}][{rng.randint(10, 40)}][debug][http] "
            f"[source/common/http/conn_manager_impl.cc:1127] [Tags: \"ConnectionId\":\"{rng.randint(1, 999)}\","
            f"\"StreamId\":\"{digits(rng, 19)}\"] request headers complete (end_stream=false):\n"
            f"':authority', '{rng.choice(HOSTS)}'\n':path', '{rng.choice(PATHS)}'\n':method', 'POST'\n"
            f"'content-type', 'application/json'\n{snip}")


def t_traefik(rng: random.Random, snip: str) -> str:
    return (f'time="{_iso(rng)}" level=debug msg="Request forwarded" ForwardURL="http://10.0.2.'
            f'{rng.randint(2, 250)}:4000" RouterName=llm-gw@docker Dump="{snip}"')


def t_caddy(rng: random.Random, snip: str) -> str:
    return (f"{_slash_ts(rng)}.{rng.randint(0, 999):03d}\tERROR\thttp.log.error\t{snip}\t"
            + _dump({"request": {"remote_ip": _ip(rng), "proto": "HTTP/2.0", "method": "POST",
                                 "host": rng.choice(HOSTS), "uri": rng.choice(PATHS)},
                     "duration": round(rng.uniform(0, 20), 6), "status": 502}))


def t_litellm(rng: random.Random, snip: str) -> str:
    clock = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    return (f"{clock} - LiteLLM Proxy:DEBUG: proxy_server.py:{rng.randint(2000, 6000)} - Request received by "
            f"LiteLLM: model={rng.choice(MODELS)}\n{clock} - LiteLLM Proxy:ERROR: proxy_server.py:"
            f"{rng.randint(2000, 6000)} - litellm.proxy.proxy_server.chat_completion(): Exception occured - "
            f"{snip}")


def t_mitmdump(rng: random.Random, snip: str) -> str:
    return (f"{_ip(rng)}:{rng.randint(40000, 65000)}: POST https://{rng.choice(HOSTS)}{rng.choice(PATHS)} "
            f"HTTP/2.0\n    user-agent: {rng.choice(AGENTS)}\n    content-length: {len(snip)}\n\n    {snip}\n"
            f" << HTTP/2.0 {rng.choice([401, 403, 429])} {rng.randint(40, 900)}b")


def t_curl_verbose(rng: random.Random, snip: str) -> str:
    host = rng.choice(HOSTS)
    return (f"* Connected to {host} (10.0.0.{rng.randint(2, 250)}) port 443\n> POST {rng.choice(PATHS)} HTTP/2\n"
            f"> Host: {host}\n> user-agent: curl/8.7.1\n> accept: */*\n> {snip}\n>\n"
            f"< HTTP/2 {rng.choice([401, 403, 502])}\n< content-type: application/json")


def t_curl_command(rng: random.Random, snip: str) -> str:
    return (f"curl 'https://{rng.choice(HOSTS)}{rng.choice(PATHS)}' \\\n  -H 'accept: application/json' \\\n"
            f"  -H 'content-type: application/json' \\\n  --data-raw '{snip}'")


def t_multipart(rng: random.Random, snip: str) -> str:
    boundary = "----WebKitFormBoundary" + pick(rng, ALNUM, 16)
    return (f"POST /v1/files HTTP/1.1\nHost: {rng.choice(HOSTS)}\nContent-Type: multipart/form-data; "
            f'boundary={boundary}\n\n--{boundary}\nContent-Disposition: form-data; name="purpose"\n\nassistants\n'
            f'--{boundary}\nContent-Disposition: form-data; name="notes"\n\n{snip}\n--{boundary}--')


def t_apigw_exec(rng: random.Random, snip: str) -> str:
    rid = _uuid(rng)
    return (f"({rid}) Extended Request Id: {pick(rng, ALNUM, 14)}=\n({rid}) Starting execution for request: {rid}\n"
            f"({rid}) HTTP Method: POST, Resource Path: {rng.choice(PATHS)}\n"
            f"({rid}) Method request body before transformations: {snip}\n"
            f"({rid}) Endpoint response status: {rng.choice([401, 429, 502])}")


def t_wrangler_tail(rng: random.Random, snip: str) -> str:
    return (f"POST https://ai-proxy.{rng.choice(LAST)}.workers.dev{rng.choice(PATHS)} - Ok @ "
            f"{rng.randint(1, 12)}/{rng.randint(1, 28)}/2026, {rng.randint(1, 12)}:{rng.randint(0, 59):02d}:"
            f"{rng.randint(0, 59):02d} PM\n  (log) upstream rejected the request\n  (log) {snip}")


def t_stripe_cli(rng: random.Random, snip: str) -> str:
    evt = "evt_" + pick(rng, ALNUM, 24)
    day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    return (f"{day}:04   --> checkout.session.completed [{evt}]\n"
            f"{day}:05  <--  [500] POST http://localhost:4242/webhook [{evt}]\n{snip}")


def t_retry_log(rng: random.Random, snip: str) -> str:
    return (f"INFO:httpx:HTTP Request: POST https://{rng.choice(HOSTS)}{rng.choice(PATHS)} \"HTTP/1.1 429 Too Many "
            f"Requests\"\nINFO:openai._base_client:Retrying request to /chat/completions in "
            f"{rng.uniform(0.2, 8):.6f} seconds\nWARNING:tenacity:Finished call to 'agent.tools.http_call' after "
            f"{rng.uniform(1, 60):.3f}(s), this was the {rng.choice(['3rd', '4th', '5th'])} time calling it.\n"
            f"ERROR:agent.tools:giving up; last request: {snip}")


def t_agent_reply(rng: random.Random, snip: str) -> str:
    return _say_text(rng, rng.choice(LANG_CODES), snip)


def t_webhook_page(rng: random.Random, snip: str) -> str:
    guid = _uuid(rng)
    return (f"Recent Deliveries\n{guid}  issue_comment.created  2026-{rng.randint(1, 12):02d}-"
            f"{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00\n"
            f"Request   Response 500   Redeliver\nHeaders\nRequest method: POST\nAccept: */*\n"
            f"Content-Type: application/json\nUser-Agent: GitHub-Hookshot/{pick(rng, HEX, 7)}\n"
            f"X-GitHub-Delivery: {guid}\nX-GitHub-Event: issue_comment\nPayload\n{snip}")


def t_kong_error(rng: random.Random, snip: str) -> str:
    return (f"{_slash_ts(rng)} [error] {rng.randint(1000, 3000)}#0: *{rng.randint(1, 99999)} [kong] handler.lua:"
            f"{rng.randint(50, 300)} [http-log] {snip}, client: {_ip(rng)}, server: kong, request: "
            f'"POST /llm{rng.choice(PATHS)} HTTP/1.1", host: "{rng.choice(HOSTS)}"')


TEXT_CARRIERS: dict[str, Carrier] = {
    "nginx_access": t_nginx_access, "nginx_error": t_nginx_error, "envoy_debug": t_envoy_debug,
    "traefik": t_traefik, "caddy": t_caddy, "litellm_log": t_litellm, "mitmdump": t_mitmdump,
    "curl_verbose": t_curl_verbose, "curl_command": t_curl_command, "multipart": t_multipart,
    "apigw_exec": t_apigw_exec, "wrangler_tail": t_wrangler_tail, "stripe_cli": t_stripe_cli,
    "retry_log": t_retry_log, "agent_reply": t_agent_reply, "webhook_page": t_webhook_page,
    "kong_error": t_kong_error,
}


# ---- JSON carriers --------------------------------------------------------------------------------------------

def j_litellm_spend(rng: random.Random, snip: str) -> str:
    return _dump({"request_id": f"chatcmpl-{_uuid(rng)}", "call_type": "acompletion", "spend": 0.0,
                  "total_tokens": 0, "startTime": _iso(rng), "model": rng.choice(MODELS), "status": "failure",
                  "team_id": _uuid(rng), "metadata": {"error_information": {"error_code": "401",
                                                                            "error_message": snip}}})


def j_openrouter(rng: random.Random, snip: str) -> str:
    return _dump({"model": rng.choice(MODELS), "route": "fallback",
                  "provider": {"order": ["Anthropic", "Together"], "allow_fallbacks": True},
                  "messages": [{"role": "system", "content": "You are a support agent."},
                               {"role": "user", "content": snip}], "stream": False})


def j_portkey(rng: random.Random, snip: str) -> str:
    return _dump({"id": _uuid(rng), "trace_id": _uuid(rng), "created_at": _iso(rng),
                  "request": {"url": "https://api.portkey.ai/v1/chat/completions", "method": "POST",
                              "provider": rng.choice(["openai", "anthropic", "bedrock"]),
                              "body": {"messages": [{"role": "tool", "content": snip}]}},
                  "response": {"status": rng.choice([200, 401, 429])}, "cache_status": "MISS"})


def j_helicone(rng: random.Random, snip: str) -> str:
    return _dump({"request_id": _uuid(rng), "request_created_at": _iso(rng), "request_path": rng.choice(PATHS),
                  "request_body": {"model": rng.choice(MODELS), "messages": [{"role": "assistant", "content": snip}]},
                  "response_status": rng.choice([200, 400, 500]), "latency": rng.randint(80, 30000),
                  "provider": "OPENAI"})


def j_har(rng: random.Random, snip: str) -> str:
    return _dump({"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "entries": [
        {"startedDateTime": _iso(rng), "time": round(rng.uniform(10, 3000), 3),
         "request": {"method": "POST", "url": f"https://{rng.choice(HOSTS)}{rng.choice(PATHS)}",
                     "httpVersion": "http/2.0", "headers": [{"name": "content-type", "value": "text/plain"}],
                     "postData": {"mimeType": "text/plain;charset=UTF-8", "text": snip}},
         "response": {"status": rng.choice([401, 403, 500]), "statusText": "", "httpVersion": "http/2.0"}}]}})


def j_mitm_flow(rng: random.Random, snip: str) -> str:
    return _dump({"id": _uuid(rng), "type": "http", "request": {
        "method": "POST", "scheme": "https", "host": rng.choice(HOSTS), "port": 443, "path": rng.choice(PATHS),
        "http_version": "HTTP/2.0", "headers": [["content-type", "text/plain"]], "contentLength": len(snip),
        "content": snip}, "response": {"status_code": rng.choice([401, 502]), "reason": "Unauthorized"}})


def j_envoy(rng: random.Random, snip: str) -> str:
    return _dump({"start_time": _iso(rng), "method": "POST", "path": rng.choice(PATHS), "protocol": "HTTP/2",
                  "response_code": rng.choice([401, 429, 503]), "response_flags": "-",
                  "bytes_received": rng.randint(100, 9000), "bytes_sent": rng.randint(50, 900),
                  "duration": rng.randint(2, 30000), "x_forwarded_for": _ip(rng), "request_id": _uuid(rng),
                  "authority": rng.choice(HOSTS), "upstream_host": f"10.0.4.{rng.randint(2, 250)}:8000",
                  "lua_body_sample": snip})


def j_caddy(rng: random.Random, snip: str) -> str:
    return _dump({"level": "error", "ts": 1772600000 + rng.random() * 1e6, "logger": "http.log.error",
                  "msg": snip, "request": {"remote_ip": _ip(rng), "proto": "HTTP/2.0", "method": "POST",
                                           "host": rng.choice(HOSTS), "uri": rng.choice(PATHS)},
                  "duration": round(rng.uniform(0, 20), 6), "status": 502, "err_id": pick(rng, LOWER, 9)})


def j_traefik(rng: random.Random, snip: str) -> str:
    return _dump({"ClientHost": _ip(rng), "DownstreamStatus": rng.choice([401, 502]),
                  "Duration": rng.randint(10 ** 6, 10 ** 10), "RequestMethod": "POST",
                  "RequestPath": rng.choice(PATHS), "RouterName": "llm-gw@docker", "ServiceName": "litellm@docker",
                  "StartUTC": _iso(rng), "level": "info", "msg": snip, "time": _iso(rng)})


def j_cloudflare(rng: random.Random, snip: str) -> str:
    ms = 1772600000000 + rng.randint(0, 10 ** 9)
    return _dump({"Event": {"RayID": pick(rng, HEX, 16), "Request": {"URL": f"https://{rng.choice(HOSTS)}"
                                                                            f"{rng.choice(PATHS)}", "Method": "POST"},
                            "Response": {"Status": rng.choice([401, 500])}},
                  "EventTimestampMs": ms, "EventType": "fetch", "Exceptions": [],
                  "Logs": [{"Level": "log", "Message": [snip], "TimestampMs": ms + 3}], "Outcome": "ok",
                  "ScriptName": "ai-gateway-proxy"})


def j_kong(rng: random.Random, snip: str) -> str:
    return _dump({"request": {"method": "POST", "uri": f"/llm{rng.choice(PATHS)}", "size": rng.randint(200, 9000),
                              "headers": {"host": rng.choice(HOSTS), "user-agent": rng.choice(AGENTS)},
                              "querystring": {}},
                  "response": {"status": rng.choice([401, 429]), "size": rng.randint(100, 900)},
                  "latencies": {"kong": rng.randint(0, 9), "proxy": rng.randint(50, 9000), "request": 9100},
                  "client_ip": _ip(rng), "started_at": 1772600000000 + rng.randint(0, 10 ** 9),
                  "service": {"name": "llm-upstream", "protocol": "https"}, "request_body": snip})


def j_apigw(rng: random.Random, snip: str) -> str:
    return _dump({"requestId": _uuid(rng), "ip": _ip(rng), "requestTime": _clf(rng), "httpMethod": "POST",
                  "resourcePath": "/v1/{proxy+}", "status": str(rng.choice([401, 502])), "protocol": "HTTP/1.1",
                  "responseLength": str(rng.randint(40, 900)), "integrationErrorMessage": snip})


def j_github_delivery(rng: random.Random, snip: str) -> str:
    return _dump({"id": rng.randint(10 ** 10, 10 ** 11), "guid": _uuid(rng), "delivered_at": _iso(rng),
                  "redelivery": rng.random() < 0.5, "duration": round(rng.uniform(0.1, 10), 2),
                  "status": "Invalid HTTP Response: 500", "status_code": 500, "event": "issue_comment",
                  "action": "created", "request": {"headers": {"X-GitHub-Event": "issue_comment"},
                                                   "payload": {"action": "created", "comment": {"body": snip}}},
                  "response": {"headers": {}, "payload": "Internal Server Error"}})


def j_graphql(rng: random.Random, snip: str) -> str:
    return _dump({"operationName": "LogToolCall",
                  "query": "mutation LogToolCall($input: ToolCallInput!) { logToolCall(input: $input) { id } }",
                  "variables": {"input": {"tool": "http_request", "runId": _uuid(rng), "output": snip}}})


def j_error_body(rng: random.Random, snip: str) -> str:
    return _dump({"error": {"message": snip, "type": rng.choice(["upstream_error", "invalid_request_error"]),
                            "param": None, "code": str(rng.choice([400, 401, 502]))}})


JSON_CARRIERS: dict[str, Carrier] = {
    "litellm_spend": j_litellm_spend, "openrouter": j_openrouter, "portkey": j_portkey, "helicone": j_helicone,
    "har": j_har, "mitm_flow": j_mitm_flow, "envoy_json": j_envoy, "caddy_json": j_caddy,
    "traefik_json": j_traefik, "cloudflare": j_cloudflare, "kong_json": j_kong, "apigw_json": j_apigw,
    "github_delivery": j_github_delivery, "graphql": j_graphql, "error_body": j_error_body,
}


# ---- values: passwords, cloud keys, webhooks, connection strings ----------------------------------------------

def _pick_style(i: int, styles: list[Value]) -> Value:
    return styles[i % len(styles)]


def v_password(rng: random.Random, i: int) -> Value:
    pw = _password(rng)
    q = quote(pw, safe="")
    user, lang = _user(rng), LANG_CODES[i % len(LANG_CODES)]
    gql = "mutation Login($u: String!, $p: String!) { login(username: $u, password: $p) { token } }"
    return _pick_style(i, [
        ("form_ropc", q, f"grant_type=password&username={user}&password={q}&client_id=litellm-ui&scope=openid",
         False),
        ("json_login", pw, _dump({"email": f"{user}@brightpath.io", "password": pw, "remember": True}), False),
        ("multipart_field", pw, f'Content-Disposition: form-data; name="password"\n\n{pw}', False),
        ("query_string", q, f"GET /admin/login?username=admin&passwd={q} HTTP/1.1", False),
        ("proxy_url", q, f"HTTPS_PROXY=http://svc-agent:{q}@proxy.corp.internal:3128", False),
        ("curl_user", pw, f"curl -u admin:{pw} https://{rng.choice(HOSTS)}/admin/api/keys", False),
        ("agent_lang", pw, _say(rng, lang, "password", pw), False),
        ("graphql_vars", pw, _dump({"query": gql, "variables": {"u": user, "p": pw}}), False),
        ("har_params", pw, _dump({"params": [{"name": "login", "value": user}, {"name": "password", "value": pw}]}),
         False),
        ("litellm_env", pw, f"UI_USERNAME=admin\nUI_PASSWORD={pw}", False),
        ("kong_env", pw, f"KONG_PG_USER=kong\nKONG_PG_PASSWORD={pw}", False),
        ("redis_cli", pw, f"redis-cli -h cache.internal -a {pw} --no-auth-warning ping", False),
    ])


def _akia(rng: random.Random, head: str = "AKIA") -> str:
    return head + pick(rng, BASE32, 16)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    sec, kid = pick(rng, B64, 40), _akia(rng, rng.choice(["AKIA", "ASIA"]))
    session = "IQoJb3JpZ2luX2Vj" + pick(rng, B64, 300)
    tf = f'provider "aws" {{\n  region     = "us-east-1"\n  access_key = "{kid}"\n  secret_key = "{sec}"\n}}'
    return _pick_style(i, [
        ("env_pair", sec, f"AWS_ACCESS_KEY_ID={kid}\nAWS_SECRET_ACCESS_KEY={sec}", False),
        ("credentials_file", sec, f"[bedrock]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}", False),
        ("sts_json", sec, _dump({"Credentials": {"AccessKeyId": kid, "SecretAccessKey": sec,
                                                 "SessionToken": session, "Expiration": _iso(rng)}}), False),
        ("litellm_yaml", sec, f"  litellm_params:\n    model: bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0\n"
                              f"    aws_access_key_id: {kid}\n    aws_secret_access_key: {sec}\n"
                              f"    aws_region_name: us-east-1", False),
        ("curl_sigv4", sec, f'curl --aws-sigv4 "aws:amz:us-east-1:execute-api" --user "{kid}:{sec}" '
                            f"https://abc123defg.execute-api.us-east-1.amazonaws.com/prod/v1/chat", False),
        ("request_body", sec, _dump({"model": "bedrock/amazon.titan-text-express-v1", "aws_access_key_id": kid,
                                     "aws_secret_access_key": sec}), False),
        ("secrets_manager", sec, _dump({"Name": "prod/llm-gw/aws", "SecretString": _dump(
            {"accessKeyId": kid, "secretAccessKey": sec})}), False),
        ("terraform", sec, tf, False),
        ("docker_env", sec, _dump({"Env": [f"AWS_ACCESS_KEY_ID={kid}", f"AWS_SECRET_ACCESS_KEY={sec}",
                                           "AWS_REGION=eu-west-1"]}), False),
        ("agent_fr", sec, _say_text(rng, "fr", f"identifiant {kid}, clé secrète AWS : {sec}"), False),
    ])


def v_webhook(rng: random.Random, i: int) -> Value:
    """The secret is the token-bearing part only; ids and hosts before it identify nothing."""
    tenant, guid = _uuid(rng), _uuid(rng)
    slack = pick(rng, ALNUM, 24)
    discord = pick(rng, URLSAFE, 68)
    teams = pick(rng, HEX, 32)
    sig = pick(rng, URLSAFE, 43)
    gchat = pick(rng, URLSAFE, 43)
    zapier = pick(rng, LOWER + string.digits, 7)
    mattermost = pick(rng, LOWER + string.digits, 26)
    webex = pick(rng, ALNUM, 100)
    feishu = _uuid(rng)
    dingtalk = pick(rng, HEX, 64)
    urls = [
        ("slack", slack, f"https://hooks.slack.com/services/T{pick(rng, UPPER + string.digits, 9)}/"
                         f"B{pick(rng, UPPER + string.digits, 10)}/{slack}"),
        ("discord", discord, f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19)}/{discord}"),
        ("teams", teams, f"https://{rng.choice(LAST)}.webhook.office.com/webhookb2/{guid}@{tenant}/"
                         f"IncomingWebhook/{teams}/{_uuid(rng)}"),
        ("power_automate", sig, f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/"
                                f"{pick(rng, HEX, 32)}/triggers/manual/paths/invoke?api-version=2016-06-01&sp="
                                f"%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={sig}"),
        ("google_chat", gchat, f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key="
                               f"AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={gchat}%3D"),
        ("zapier", zapier, f"https://hooks.zapier.com/hooks/catch/{rng.randint(10 ** 6, 10 ** 8)}/{zapier}/"),
        ("mattermost", mattermost, f"https://chat.{rng.choice(DOMAINS)}/hooks/{mattermost}"),
        ("webex", webex, f"https://webexapis.com/v1/webhooks/incoming/{webex}"),
        ("feishu", feishu, f"https://open.feishu.cn/open-apis/bot/v2/hook/{feishu}"),
        ("dingtalk", dingtalk, f"https://oapi.dingtalk.com/robot/send?access_token={dingtalk}"),
    ]
    name, secret, url = urls[i % len(urls)]
    wraps = [
        f"POST {url} -> 404 no_team",
        f"ALERT_WEBHOOK_URL={url}",
        _dump({"notify": {"on": ["budget_alerts", "llm_exceptions"], "webhook_url": url}}),
        f"alerting: [\"slack\"]\nalerting_webhook: {url}",
        f"retry 3/5 delivering alert to {url} (HTTP 429, retry-after 30)",
    ]
    return name + f"_{i // len(urls) % len(wraps)}", secret, wraps[i // len(urls) % len(wraps)], False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    sec = "whsec_" + (pick(rng, HEX, 64) if i % 2 else pick(rng, ALNUM, 32))
    return _pick_style(i, [
        ("cli_ready", sec, f"> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is "
                           f"{sec} (^C to quit)", False),
        ("env", sec, f"STRIPE_WEBHOOK_SECRET={sec}", False),
        ("code", sec, f"event = stripe.Webhook.construct_event(payload, sig_header, '{sec}')", False),
        ("endpoint_json", sec, _dump({"id": "we_" + pick(rng, ALNUM, 24), "object": "webhook_endpoint",
                                      "enabled_events": ["checkout.session.completed"], "livemode": True,
                                      "secret": sec, "url": f"https://{rng.choice(HOSTS)}/webhooks/stripe"}), False),
        ("k8s_secret", sec, f"kubectl create secret generic stripe --from-literal=webhook-secret={sec}", False),
        ("agent_de", sec, _say_text(rng, "de", f"Signatur-Secret des Webhooks: {sec}"), False),
        ("verify_error", sec, f"No signatures found matching the expected signature for payload (secret {sec}, "
                              f"tolerance 300s)", False),
    ])


def v_connection_string(rng: random.Random, i: int) -> Value:
    """The secret is the password or account key only."""
    pw = _url_password(rng)
    acct = rng.choice(LAST) + str(rng.randint(1, 99))
    key88 = pick(rng, B64, 86) + "=="
    key44 = pick(rng, B64, 43) + "="
    return _pick_style(i, [
        ("postgres_uri", pw, f"DATABASE_URL=postgresql://litellm:{pw}@db.internal:5432/litellm", False),
        ("redis_uri", pw, f"REDIS_URL=redis://default:{pw}@cache.internal:6379/0", False),
        ("rediss_uri", pw, f"cache: {{type: redis, url: 'rediss://:{pw}@{acct}.redis.cache.windows.net:6380'}}",
         False),
        ("mongodb_srv", pw, f"mongodb+srv://agent:{pw}@cluster0.{pick(rng, LOWER, 5)}.mongodb.net/"
                            f"?retryWrites=true&w=majority", False),
        ("adonet", pw, f"Server=tcp:{acct}.database.windows.net,1433;Database=gateway;User ID=gw_app;"
                       f"Password={pw};Encrypt=True;Connection Timeout=30;", False),
        ("azure_storage", key88, f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key88};"
                                 f"EndpointSuffix=core.windows.net", False),
        ("service_bus", key44, f"Endpoint=sb://{acct}.servicebus.windows.net/;SharedAccessKeyName="
                               f"RootManageSharedAccessKey;SharedAccessKey={key44}", False),
        ("jdbc", pw, f"jdbc:mysql://db.internal:3306/kong?user=kong&password={pw}&useSSL=true", False),
        ("amqp", pw, f"CELERY_BROKER_URL=amqp://worker:{pw}@rabbitmq.internal:5672/agents", False),
        ("odbc", pw, "Driver={ODBC Driver 18 for SQL Server};Server=sql.internal;Database=spend;Uid=spend_ro;"
                     f"Pwd={pw};TrustServerCertificate=yes", False),
        ("json_config", pw, _dump({"database_url": f"postgres://helicone:{pw}@pg.internal:5432/helicone"}), False),
    ])


def v_labelled_key(rng: random.Random, i: int) -> Value:
    """A key with no provider prefix, known for a key only by its label."""
    key = [pick(rng, HEX, 32), pick(rng, ALNUM, 40), _uuid(rng), pick(rng, URLSAFE, 43)][i % 4]
    lang = LANG_CODES[(i * 7) % len(LANG_CODES)]
    return _pick_style(i, [
        ("api_key_label", key, f"API key: {key}", False),
        ("x_api_key", key, f"x-api-key: {key}", False),
        ("kong_apikey", key, f"apikey: {key}", False),
        ("query", key, f"GET /v2/forecast?lat=48.85&lon=2.35&api_key={key} HTTP/1.1", False),
        ("json_field", key, _dump({"service": "weather", "api_key": key, "timeout": 30}), False),
        ("agent_lang", key, _say(rng, lang, "api_key", key), False),
        ("har_header", key, _dump({"name": "X-API-Key", "value": key}), False),
        ("portkey_header", key, f"x-portkey-api-key: {key}", False),
        ("env", key, f"SERPAPI_API_KEY={key}", False),
        ("yaml", key, f"tools:\n  - name: search\n    api_key: {key}", False),
    ])


# ---- values: disguised secrets ---------------------------------------------------------------------------------

ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


def _zero_width(rng: random.Random, s: str) -> str:
    """`s` with one or two zero-width characters inside (pasted from a chat or a rich-text editor)."""
    for _ in range(rng.randint(1, 2)):
        at = rng.randint(3, len(s) - 3)
        s = s[:at] + rng.choice(ZERO_WIDTH) + s[at:]
    return s


def _full_width(s: str) -> str:
    """`s` in Unicode's full-width forms (U+FF01-FF5E), as a CJK input method writes ASCII."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


def _pct_all(s: str) -> str:
    """Every byte percent-encoded (RFC 3986 2.1), as an over-eager encoder writes it."""
    return "".join(f"%{b:02X}" for b in s.encode())


def _pct_some(s: str) -> str:
    """Only the unreserved `-` and `_` percent-encoded: legal, and what some form encoders do."""
    return s.replace("-", "%2D").replace("_", "%5F")


def _u_escape(rng: random.Random, s: str) -> str:
    """Some characters as JSON `\\uXXXX` escapes (RFC 8259, 7), at least one."""
    out = [f"\\u{ord(c):04x}" if rng.random() < 0.4 else c for c in s]
    out[0] = f"\\u{ord(s[0]):04x}"
    return "".join(out)


def _base_secret(rng: random.Random, i: int) -> tuple[str, str]:
    """(label, secret) for disguising: provider keys and a password, each with a `-` or `_` inside."""
    return [
        ("OPENROUTER_API_KEY", "sk-or-v1-" + pick(rng, HEX, 64)),
        ("ANTHROPIC_API_KEY", "sk-ant-api03-" + pick(rng, URLSAFE, 93) + "AA"),
        ("GITHUB_TOKEN", crc_token(rng, "ghp_")),
        ("HF_TOKEN", "hf_" + pick(rng, string.ascii_letters, 34)),
        ("STRIPE_WEBHOOK_SECRET", "whsec_" + pick(rng, ALNUM, 32)),
        ("password", _url_password(rng)),
    ][i % 6]


def v_disguised(rng: random.Random, i: int) -> Value:
    label, base = _base_secret(rng, i // 8)
    zw, fw, pa, ps = _zero_width(rng, base), _full_width(base), _pct_all(base), _pct_some(base)
    esc = _u_escape(rng, base)
    return _pick_style(i, [
        ("zero_width_header", zw, f"Authorization: Bearer {zw}", False),
        ("zero_width_env", zw, f"{label}={zw}", False),
        ("full_width_ja", fw, _label("ja", "キー", fw) + "（チャットから貼り付け）", False),
        ("pct_all_query", pa, f"GET /proxy?target=upstream&{label.lower()}={pa} HTTP/1.1", False),
        ("pct_some_form", ps, f"channel=C0{digits(rng, 8)}&{label.lower()}={ps}&dry_run=false", False),
        ("json_u_escape", esc, '{"' + label.lower() + '": "' + esc + '", "source": "mitmproxy"}', True),
        ("zero_width_json", zw, _dump({"headers": {"x-api-key": zw}}), False),
        ("full_width_zh", fw, _say_text(rng, "zh", _label("zh", "密钥", fw)), False),
    ])


# ---- values: personal data ------------------------------------------------------------------------------------

def v_email(rng: random.Random, i: int) -> Value:
    em = _email(rng)
    enc = quote(em, safe="")
    lang = LANG_CODES[i % len(LANG_CODES)]
    return _pick_style(i, [
        ("from_header", em, f"From: {rng.choice(FIRST).title()} {rng.choice(LAST).title()} <{em}>", False),
        ("openrouter_user", em, _dump({"model": rng.choice(MODELS), "user": em, "max_tokens": 512}), False),
        ("query_encoded", enc, f"GET /v1/customers/search?email={enc}&limit=1 HTTP/1.1", False),
        ("agent_lang", em, _say(rng, lang, "email", em), False),
        ("stripe_customer", em, _dump({"object": "customer", "id": "cus_" + pick(rng, ALNUM, 14), "email": em,
                                       "livemode": True}), False),
        ("mailto", em, f'<p>Contact <a href="mailto:{em}">the account owner</a> to restore access.</p>', False),
        ("remote_user", em, f"remote_user={em} status=401 auth=basic realm=\"llm-admin\"", False),
        ("login_hint", enc, f"302 Location: https://accounts.google.com/o/oauth2/v2/auth?client_id=9{digits(rng, 11)}"
                            f"-x.apps.googleusercontent.com&login_hint={enc}&scope=openid%20email", False),
        ("litellm_user", em, _dump({"user_id": _uuid(rng), "user_email": em, "user_role": "internal_user"}), False),
        ("slack_profile", em, _dump({"user": {"id": "U" + pick(rng, UPPER + string.digits, 10),
                                              "profile": {"email": em, "display_name": rng.choice(FIRST)}}}), False),
        ("smtp_log", em, f"postfix/smtp[{rng.randint(100, 9999)}]: to=<{em}>, relay=none, status=deferred "
                         f"(connect timed out)", False),
    ])


NANP_AREAS = (201, 202, 206, 212, 213, 214, 305, 312, 404, 415, 503, 512, 602, 617, 646, 702, 718, 773, 917, 972,
              403, 416, 438, 514, 604, 613, 647, 778, 902)
"""Area codes in service in the US and Canada (NANPA)."""


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """(NPA, NXX, line): exchange 2-9 first, no N11 service codes, no 555 (fictional and directory use)."""
    nxx = "555"
    while nxx == "555" or nxx[1:] == "11":
        nxx = str(rng.randint(2, 9)) + digits(rng, 2)
    return str(rng.choice(NANP_AREAS)), nxx, digits(rng, 4)


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    a, b, c = _nanp(rng)
    forms = [f"({a}) {b}-{c}", f"{a}-{b}-{c}", f"{a}.{b}.{c}", f"+1 {a}-{b}-{c}", f"1-{a}-{b}-{c}",
             f"+1 ({a}) {b}-{c}"]
    p, e164 = forms[i % len(forms)], f"+1{a}{b}{c}"
    return _pick_style(i, [
        ("call_me", p, f"Please call me at {p} if the export keeps failing.", False),
        ("label", p, f"Phone: {p}", False),
        ("cell", p, f"cell {p} (texts ok)", False),
        ("sms_sent", p, f"SMS verification code sent to {p}", False),
        ("json_e164", e164, _dump({"phone_number": e164, "channel": "sms", "locale": "en"}), False),
        ("twilio_form", f"%2B1{a}{b}{c}", f"To=%2B1{a}{b}{c}&MessagingServiceSid=MG{pick(rng, HEX, 32)}"
                                          f"&Body=Your+code+is+{digits(rng, 6)}", False),
        ("quebec", p, f"Téléphone : {p} (cellulaire)", False),
        ("callback", p, f"callback number on file: {p}", False),
        ("agent_en", p, _say(rng, "en", "phone", p), False),
    ])


def _uk_number(rng: random.Random) -> tuple[str, str]:
    """(national, international) UK number: mobiles 074/075/078/079, London 020 3/7/8, big-city 01x1; clear of
    Ofcom's drama ranges (020 7946 0xxx, 01x1 496 0xxx, 07700 900xxx)."""
    kind = rng.randrange(3)
    if kind == 0:
        m = rng.choice("4589") + digits(rng, 2)
        rest = digits(rng, 6)
        return f"07{m} {rest}", f"+44 7{m} {rest}"
    if kind == 1:
        head = rng.choice("378") + digits(rng, 3)
        tail = rng.choice("123456789") + digits(rng, 3)
        return f"020 {head} {tail}", f"+44 20 {head} {tail}"
    area = rng.choice(["0161", "0121", "0113", "0131", "0141", "0117"])
    mid = rng.choice("235678") + digits(rng, 2)
    tail = digits(rng, 4)
    return f"{area} {mid} {tail}", f"+44 {area[1:]} {mid} {tail}"


def v_phone_uk(rng: random.Random, i: int) -> Value:
    nat, intl = _uk_number(rng)
    p = intl if i % 4 == 3 else nat
    return _pick_style(i, [
        ("mobile", p, f"mobile: {p}", False),
        ("ring_me", p, f"Ring me on {p} when the gateway is back up.", False),
        ("tel", p, f"Tel: {p}", False),
        ("json_contact", p, _dump({"contact": {"name": _user(rng), "phone": p, "country": "GB"}}), False),
        ("whatsapp", p, f"WhatsApp {p} for urgent incidents", False),
        ("contact_number", p, f"Contact number: {p} (office hours)", False),
        ("sms", p, f"Failed to send SMS to {p}: provider returned 429", False),
        ("agent_en", p, _say(rng, "en", "phone", p), False),
    ])


def _fr_number(rng: random.Random) -> tuple[str, str]:
    """(national, international) French number: 01-05 geographic, 06/07 mobile; the second pair starts 1/2/4/7,
    clear of ARCEP's fiction ranges."""
    head = rng.choice(["01", "02", "03", "04", "05", "06", "07", "06", "07"])
    pairs = [rng.choice("1247") + digits(rng, 1)] + [digits(rng, 2) for _ in range(3)]
    return f"{head} {' '.join(pairs)}", f"+33 {head[1]} {' '.join(pairs)}"


def v_phone_fr(rng: random.Random, i: int) -> Value:
    nat, intl = _fr_number(rng)
    p = [nat, nat, intl, nat.replace(" ", ""), nat.replace(" ", ".")][i % 5]
    return _pick_style(i, [
        ("tel", p, f"Tél. : {p}", False),
        ("portable", p, f"portable : {p}", False),
        ("joignable", p, f"Je suis joignable au {p} en cas de souci.", False),
        ("numero", p, f"numéro de téléphone : {p}", False),
        ("rappel", p, f"Merci de me rappeler au {p}.", False),
        ("json_fr", p, _dump({"client": {"nom": rng.choice(LAST).upper(), "telephone": p}}), False),
        ("agent_fr", p, _say(rng, "fr", "phone", p), False),
    ])


def _de_number(rng: random.Random) -> tuple[str, str, str]:
    """(prefix, subscriber, international) German number: 015x mobiles with 8 digits, 016x/017x with 7, city
    landlines; subscriber first digit 3/5/7/8, clear of BNetzA's drama ranges."""
    if rng.random() < 0.5:
        pre = rng.choice(["0151", "0152", "0157", "0159", "0160", "0170", "0171", "0175"])
        sub = rng.choice("3578") + digits(rng, 7 if pre.startswith("015") else 6)
    else:
        pre = rng.choice(["030", "040", "089", "069", "0221"])
        sub = rng.choice("3578") + digits(rng, 6 if pre == "0221" else 7)
    return pre, sub, f"+49 {pre[1:]} {sub}"


def v_phone_de(rng: random.Random, i: int) -> Value:
    pre, sub, intl = _de_number(rng)
    p = [f"{pre} {sub}", f"{pre}/{sub}", intl, f"({pre}) {sub[:4]} {sub[4:]}"][i % 4]
    return _pick_style(i, [
        ("tel", p, f"Tel.: {p}", False),
        ("telefon", p, f"Telefon: {p}", False),
        ("mobil", p, f"Mobil: {p}", False),
        ("handy", p, f"Handy {p}, bitte nur bei Störungen", False),
        ("rueckruf", p, f"Bitte um Rückruf unter {p}.", False),
        ("erreichbar", p, f"Ich bin erreichbar unter {p}.", False),
        ("json_de", p, _dump({"kunde": {"name": rng.choice(LAST).title(), "rufnummer": p}}), False),
        ("agent_de", p, _say(rng, "de", "phone", p), False),
    ])


def _in_number(rng: random.Random, i: int) -> str:
    """An Indian number: 10-digit mobiles starting 6-9, or Delhi/Mumbai/Bengaluru landlines."""
    mob = rng.choice("6789") + digits(rng, 9)
    city, line = rng.choice([("11", "2"), ("22", "2"), ("80", "4")]), digits(rng, 7)
    return [f"+91 {mob[:5]} {mob[5:]}", f"+91-{mob}", f"0{mob[:5]} {mob[5:]}", mob,
            f"0{city[0]}-{city[1]}{line[:3]} {line[3:]}", f"+91 {city[0]} {city[1]}{line[:3]} {line[3:]}"][i % 6]


def v_phone_in(rng: random.Random, i: int) -> Value:
    p = _in_number(rng, i)
    return _pick_style(i, [
        ("mobile", p, f"Mobile: {p}", False),
        ("mob_no", p, f"Mob. No. {p}", False),
        ("ph", p, f"Ph: {p}", False),
        ("hindi", p, f"मोबाइल नंबर: {p}", False),
        ("whatsapp", p, f"WhatsApp on {p} for the OTP", False),
        ("contact_no", p, f"contact no. {p} (customer, Pune)", False),
        ("json_in", p, _dump({"customer": {"name": rng.choice(LAST).title(), "mobile": p, "state": "MH"}}), False),
        ("agent_hi", p, _say(rng, "hi", "phone", p), False),
    ])


def _ssn(rng: random.Random) -> tuple[str, str, str]:
    """(area, group, serial) by the SSA's rules, avoiding the two numbers known from misuse."""
    while True:
        area = rng.randint(1, 899)
        parts = (f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}")
        if area != 666 and "".join(parts) not in ("078051120", "219099999"):
            return parts


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = _ssn(rng)
    dash, space, compact = f"{a}-{g}-{s}", f"{a} {g} {s}", f"{a}{g}{s}"
    return _pick_style(i, [
        ("label", dash, f"SSN: {dash}", False),
        ("json_kyc", dash, _dump({"first_name": rng.choice(FIRST).title(), "ssn": dash, "dob": "1987-04-12"}), False),
        ("stripe_form", compact, f"individual[first_name]={rng.choice(FIRST).title()}&individual[id_number]={compact}"
                                 f"&individual[address][country]=US", False),
        ("spelled", space, f"Social Security Number {space}", False),
        ("multipart_w9", dash, f'Content-Disposition: form-data; name="tin_ssn"\n\n{dash}', False),
        ("graphql_vars", dash, _dump({"query": "mutation Verify($tin: String!) { verifyTaxId(tin: $tin) { ok } }",
                                      "variables": {"tin": dash}}), False),
        ("spanish", dash, f"Número de Seguro Social: {dash}", False),
        ("compact_label", compact, f"ssn={compact} dob=04/12/1987", False),
        ("agent_en", dash, _say_text(rng, "en", f"SSN {dash}"), False),
    ])


def _card(rng: random.Random, i: int) -> str:
    """A card number in an ISO/IEC 7812 IIN range of a network, with its Luhn digit."""
    prefix, length = [("4", 16), (str(rng.randint(51, 55)), 16), (str(rng.randint(2221, 2720)), 16),
                      (rng.choice(["34", "37"]), 15), ("6011", 16), ("65", 16), (str(rng.randint(3528, 3589)), 16),
                      ("36", 14), ("62", rng.choice([16, 19]))][i % 9]
    body = prefix + digits(rng, length - len(prefix) - 1)
    return body + luhn_digit(body)


def v_card(rng: random.Random, i: int) -> Value:
    number = _card(rng, i)
    p = [group_card(number, " "), group_card(number, "-"), number][i // 9 % 3]
    lang = LANG_CODES[i % len(LANG_CODES)]
    return _pick_style(i, [
        ("stripe_form", number, f"card[number]={number}&card[exp_month]={rng.randint(1, 12)}&card[exp_year]=2029"
                                f"&card[cvc]={digits(rng, 3)}", False),
        ("json_payment", p, _dump({"paymentMethod": {"type": "scheme", "number": p, "expiryMonth": "08",
                                                     "expiryYear": "2029"}}), False),
        ("agent_lang", p, _say(rng, lang, "card", p), False),
        ("braintree_form", number, f"credit_card%5Bnumber%5D={number}&credit_card%5Bexpiration_date%5D=08%2F29",
         False),
        ("har_params", p, _dump({"params": [{"name": "cardnumber", "value": p}, {"name": "cc-exp", "value": "0829"}]}),
         False),
        ("pan_label", p, f"PAN {p} exp 08/29", False),
        ("tool_args", p, _dump({"tool": "charge_card", "arguments": {"card_number": p, "amount": 4999}}), False),
    ])


IBAN_STRUCTURES = (("DE", "8n10n"), ("FR", "5n5n11c2n"), ("GB", "4a6n8n"), ("ES", "4n4n1n1n10n"),
                   ("IT", "1a5n5n12c"), ("NL", "4a10n"), ("BE", "3n7n2n"), ("AT", "5n11n"), ("CH", "5n12c"),
                   ("PL", "8n16n"), ("PT", "4n4n11n2n"), ("SE", "3n16n1n"), ("IE", "4a6n8n"), ("DK", "4n9n1n"),
                   ("FI", "3n11n"), ("NO", "4n6n1n"), ("LU", "3n13c"), ("CZ", "4n6n10n"), ("AE", "3n16n"),
                   ("SA", "2n18c"))
"""BBAN structures from the SWIFT IBAN registry."""


def v_iban(rng: random.Random, i: int) -> Value:
    country, structure = IBAN_STRUCTURES[i % len(IBAN_STRUCTURES)]
    b = bban(rng, structure)
    compact = country + iban_check(country, b) + b
    printed = group(compact, 4, " ")
    p = printed if i % 2 else compact
    return _pick_style(i, [
        ("label", p, f"IBAN: {p}", False),
        ("sepa_form", compact, f"type=sepa_debit&sepa_debit[iban]={compact}&billing_details[name]="
                               f"{rng.choice(FIRST).title()}+{rng.choice(LAST).title()}", False),
        ("json_payout", p, _dump({"recipient": {"account_holder": _user(rng), "iban": p, "currency": "EUR"}}), False),
        ("de_label", p, f"Bitte überweisen Sie auf IBAN {p}.", False),
        ("fr_rib", p, f"RIB/IBAN : {p}", False),
        ("agent_es", p, _say_text(rng, "es", f"IBAN {p}"), False),
        ("tool_args", p, _dump({"tool": "create_payout", "arguments": {"iban": p, "amount": "120.00"}}), False),
    ])


# ---- values: credentials of the HTTP traffic -------------------------------------------------------------------

def v_basic_auth(rng: random.Random, i: int) -> Value:
    """The RFC 7617 credentials: base64 of `user:password`; the scheme word is not secret."""
    cred = base64.b64encode(f"{_user(rng)}:{_password(rng)}".encode()).decode()
    return _pick_style(i, [
        ("header", cred, f"Authorization: Basic {cred}", False),
        ("proxy_header", cred, f"Proxy-Authorization: Basic {cred}", False),
        ("har_header", cred, _dump({"name": "authorization", "value": f"Basic {cred}"}), False),
        ("nginx_http_auth", cred, f'http_authorization="Basic {cred}" upstream_status=401', False),
        ("curl_h", cred, f"curl -H 'Authorization: Basic {cred}' https://{rng.choice(HOSTS)}/metrics", False),
        ("envoy_header", cred, f"'authorization', 'Basic {cred}'", False),
        ("requests_debug", cred, f"send: b'GET /admin HTTP/1.1\\r\\nHost: kong.internal\\r\\nAuthorization: Basic "
                                 f"{cred}\\r\\n\\r\\n'", False),
    ])


def v_oauth_token(rng: random.Random, i: int) -> Value:
    """OAuth 2.0 (RFC 6749) access and refresh tokens, client secrets and PKCE code verifiers (RFC 7636)."""
    google_at = "ya29." + pick(rng, URLSAFE, 150)
    refresh = "1//0" + pick(rng, URLSAFE, 99)
    client_secret = "GOCSPX-" + pick(rng, URLSAFE, 28)
    verifier = b64url(rng.randbytes(32))
    slack = f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    opaque = pick(rng, URLSAFE, 64)
    challenge = b64url(hashlib.sha256(verifier.encode()).digest())
    return _pick_style(i, [
        ("token_response", google_at, _dump({"access_token": google_at, "expires_in": 3599, "token_type": "Bearer",
                                             "scope": "openid email"}), False),
        ("refresh_grant", refresh, f"grant_type=refresh_token&refresh_token={refresh}&client_id="
                                   f"{digits(rng, 12)}-abc.apps.googleusercontent.com", False),
        ("client_secret_form", client_secret, f"grant_type=client_credentials&client_id=gw-agent&client_secret="
                                              f"{client_secret}", False),
        ("pkce_debug", verifier, f"DEBUG mcp.client.auth: PKCE code_verifier={verifier} code_challenge="
                                 f"{challenge} method=S256", False),
        ("slack_bearer", slack, f"Authorization: Bearer {slack}", False),
        ("bearer_opaque", opaque, f"Authorization: Bearer {opaque}", False),
        ("client_secret_json", client_secret, _dump({"web": {"client_id": f"{digits(rng, 12)}-x.apps."
                                                                          "googleusercontent.com",
                                                             "client_secret": client_secret}}), False),
        ("refresh_json", refresh, _dump({"refresh_token": refresh, "token_type": "Bearer"}), False),
    ])


def _jwt(rng: random.Random) -> str:
    """A signed JWT (RFC 7519): base64url header and claims, and a signature of the algorithm's length."""
    alg = rng.choice(["RS256", "ES256", "HS256"])
    header = {"alg": alg, "typ": "JWT"} | ({} if alg == "HS256" else {"kid": pick(rng, HEX, 16)})
    now = 1772600000 + rng.randint(0, 10 ** 7)
    issuer = rng.choice(["https://accounts.google.com", f"https://login.microsoftonline.com/{_uuid(rng)}/v2.0",
                         f"https://{rng.choice(LAST)}.eu.auth0.com/", "https://clerk.kestrel-labs.dev",
                         "https://token.actions.githubusercontent.com", "litellm-proxy"])
    claims = {"iss": issuer, "sub": pick(rng, string.digits, 21), "aud": rng.choice(["llm-gateway", "account"]),
              "iat": now, "exp": now + 3600, "scope": "openid profile"}
    sig = rng.randbytes({"RS256": 256, "ES256": 64, "HS256": 32}[alg])
    return ".".join(b64url(json.dumps(x, separators=(",", ":")).encode()) for x in (header, claims)) + "." + \
        b64url(sig)


def v_jwt(rng: random.Random, i: int) -> Value:
    tok = _jwt(rng)
    return _pick_style(i, [
        ("bearer", tok, f"Authorization: Bearer {tok}", False),
        ("id_token", tok, _dump({"id_token": tok, "token_type": "Bearer", "expires_in": 3600}), False),
        ("clerk_cookie", tok, f"Cookie: __session={tok}; theme=dark", False),
        ("ws_query", tok, f"GET wss://{rng.choice(HOSTS)}/v1/realtime?model=gpt-4o-realtime-preview&token={tok}",
         False),
        ("alb_oidc", tok, f"x-amzn-oidc-data: {tok}", False),
        ("cf_access", tok, f"cf-access-jwt-assertion: {tok}", False),
        ("litellm_jwt", tok, f"litellm.proxy.auth.handle_jwt: decoding token {tok} failed: Signature has expired",
         False),
    ])


def _cookie(rng: random.Random, i: int) -> tuple[str, str]:
    """(name, value) session cookies as frameworks write them."""
    payload = b64url(json.dumps({"user_id": rng.randint(1, 99999)}).encode())
    return [
        ("connect.sid", f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, ALNUM, 43)}"),
        ("__Secure-next-auth.session-token", f"eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..{pick(rng, URLSAFE, 22)}."
                                             f"{pick(rng, URLSAFE, 180)}.{pick(rng, URLSAFE, 22)}"),
        ("PHPSESSID", pick(rng, string.digits + "abcdefghijklmnopqrstuv", 26)),
        ("sessionid", pick(rng, LOWER + string.digits, 32)),
        ("JSESSIONID", pick(rng, "0123456789ABCDEF", 32)),
        ("_gateway_session", f"{pick(rng, B64, 120)}--{pick(rng, B64, 22)}--{pick(rng, B64, 22)}"),
        ("session", f"{payload}.{pick(rng, URLSAFE, 6)}.{pick(rng, URLSAFE, 27)}"),
    ][i % 7]


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, val = _cookie(rng, i)
    return _pick_style(i // 7, [
        ("cookie_header", val, f"Cookie: lang=fr; {name}={val}; theme=dark", False),
        ("set_cookie", val, f"Set-Cookie: {name}={val}; Path=/; HttpOnly; Secure; SameSite=Lax", False),
        ("har_cookie", val, _dump({"cookies": [{"name": name, "value": val, "httpOnly": True, "secure": True}]}),
         False),
        ("curl_b", val, f"curl -b '{name}={val}' https://{rng.choice(HOSTS)}/ui/keys", False),
        ("nginx_cookie", val, f'cookie="{name}={val}" status=403 reason=csrf', False),
        ("envoy_cookie", val, f"'cookie', '{name}={val}'", False),
    ])


def _openssh_pem(blob: bytes) -> str:
    """An OpenSSH private key file: the blob in base64, 70 characters a line, between its armour lines."""
    body = group(base64.b64encode(blob).decode(), 70, "\n")
    return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"


def _private_key(rng: random.Random, i: int) -> str:
    """A PEM private key: PKCS#8 or SEC1 for a P-256 key, or an unencrypted OpenSSH Ed25519 key."""
    if i % 3 == 2:
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"gw-deploy@" + rng.choice(LAST).encode())
        return _openssh_pem(blob)
    key = ec.derive_private_key(rng.randint(1, 2 ** 255), ec.SECP256R1())
    fmt = serialization.PrivateFormat.PKCS8 if i % 3 == 0 else serialization.PrivateFormat.TraditionalOpenSSL
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()


def v_private_key(rng: random.Random, i: int) -> Value:
    """The secret is the PEM's base64 body; the BEGIN/END lines only name the format."""
    pem = _private_key(rng, i)
    lines = pem.splitlines()
    body = "\n".join(lines[1:-1])
    escaped = "\\n".join(lines[1:-1])
    one_line = "\\n".join(lines)
    return _pick_style(i // 3, [
        ("pem_file", body, f"$ cat /etc/envoy/certs/client.key\n{pem}", False),
        ("github_app_json", escaped, '{"app_id": ' + str(rng.randint(10 ** 5, 10 ** 6)) + ', "private_key": "'
                                     + one_line + '"}', True),
        ("envoy_inline", escaped, f'private_key: {{ inline_string: "{one_line}" }}', True),
        ("kong_cert", body, f"kong.log: loaded certificate for sni llm.{rng.choice(DOMAINS)}\nkey:\n{pem}", False),
        ("env_escaped", escaped, f'GITHUB_APP_PRIVATE_KEY="{one_line}"', True),
    ])


def v_totp_seed(rng: random.Random, i: int) -> Value:
    """An RFC 6238 seed in base32 (RFC 4648), 80 or 160 bits, as the Key Uri Format and setup screens show it."""
    seed = pick(rng, BASE32, 32 if i % 2 else 16)
    issuer = rng.choice(["GitHub", "LiteLLM", "Cloudflare", "Okta", "Portkey"])
    uri = f"otpauth://totp/{issuer}:{_user(rng)}?secret={seed}&issuer={issuer}&algorithm=SHA1&digits=6&period=30"
    spaced = group(seed.lower(), 4, " ")
    return _pick_style(i, [
        ("otpauth_uri", seed, uri, False),
        ("enroll_json", seed, _dump({"factorType": "token:software:totp", "sharedSecret": seed, "status":
                                     "PENDING_ACTIVATION"}), False),
        ("setup_key_spaced", spaced, f"Can't scan? Enter this setup key: {spaced}", False),
        ("form", seed, f"otp_secret={seed}&otp_attempt={digits(rng, 6)}&commit=Enable", False),
        ("agent_fr", seed, _say_text(rng, "fr", f"Clé de configuration 2FA : {seed}"), False),
        ("env", seed, f"ADMIN_TOTP_SECRET={seed}", False),
    ])


def v_recovery_code(rng: random.Random, i: int) -> Value:
    """One two-factor recovery code: GitHub's `xxxxx-xxxxx` hex, Google's eight digits, grouped base32 ones."""
    code = [f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}", f"{digits(rng, 4)} {digits(rng, 4)}",
            "-".join(pick(rng, UPPER + "23456789", 4) for _ in range(3))][i % 3]
    form = code.replace(" ", "+")
    return _pick_style(i, [
        ("label", code, f"Recovery code: {code}", False),
        ("form", form, f"recovery_code={form}&commit=Verify", False),
        ("json_login", code, _dump({"username": _user(rng), "backup_code": code}), False),
        ("agent_de", code, _say_text(rng, "de", f"Wiederherstellungscode: {code}"), False),
        ("agent_ja", code, _say_text(rng, "ja", f"リカバリーコード：{code}"), False),
        ("support_note", code, f"User pasted their 2FA backup code {code} into the chat; advise rotating.", False),
    ])


# ---- values: provider keys by their documented prefixes --------------------------------------------------------

def _provider(make: Callable[[random.Random, int], str], env: str, header: str) -> Callable[[random.Random, int],
                                                                                             Value]:
    """A provider key's generator: the key in an env line, a header, a LiteLLM config, a request log, a message."""
    def gen(rng: random.Random, i: int) -> Value:
        key = make(rng, i)
        return _pick_style(i, [
            ("env", key, f"{env}={key}", False),
            ("header", key, f"{header}{key}", False),
            ("litellm_yaml", key, f"model_list:\n  - model_name: default\n    litellm_params:\n"
                                  f"      model: {rng.choice(MODELS)}\n      api_key: {key}", False),
            ("json_headers", key, _dump({"headers": {header.split(":")[0]: header.split(": ", 1)[1] + key}}), False),
            ("docker_run", key, f"docker run -e {env}={key} -p 4000:4000 ghcr.io/berriai/litellm:main-latest",
             False),
            ("agent_lang", key, _say(rng, LANG_CODES[i % len(LANG_CODES)], "api_key", key), False),
            ("python", key, f"client = Client(api_key=\"{key}\", timeout=30)", False),
        ])
    return gen


def _openai(rng: random.Random, i: int) -> str:
    head = ["sk-proj-", "sk-svcacct-", "sk-admin-", "sk-"][i % 4]
    if head == "sk-":
        return f"sk-{pick(rng, ALNUM, 20)}T3BlbkFJ{pick(rng, ALNUM, 20)}"
    return f"{head}{pick(rng, URLSAFE, 74)}T3BlbkFJ{pick(rng, URLSAFE, 74)}"


def _github(rng: random.Random, i: int) -> str:
    if i % 4 == 3:
        return f"github_pat_{pick(rng, ALNUM, 22)}_{pick(rng, ALNUM, 59)}"
    return crc_token(rng, ["ghp_", "gho_", "ghs_"][i % 4])


def _stripe(rng: random.Random, i: int) -> str:
    return f"{['sk_live_', 'rk_live_'][i % 2]}{pick(rng, ALNUM, rng.choice([24, 99]))}"


PROVIDERS: dict[str, Callable[[random.Random, int], Value]] = {
    "openai_key": _provider(_openai, "OPENAI_API_KEY", "Authorization: Bearer "),
    "anthropic_key": _provider(lambda r, _i: "sk-ant-api03-" + pick(r, URLSAFE, 93) + "AA", "ANTHROPIC_API_KEY",
                               "x-api-key: "),
    "openrouter_key": _provider(lambda r, _i: "sk-or-v1-" + pick(r, HEX, 64), "OPENROUTER_API_KEY",
                                "Authorization: Bearer "),
    "google_api_key": _provider(lambda r, _i: "AIza" + pick(r, URLSAFE, 35), "GEMINI_API_KEY", "x-goog-api-key: "),
    "github_token": _provider(_github, "GH_TOKEN", "Authorization: token "),
    "stripe_key": _provider(_stripe, "STRIPE_SECRET_KEY", "Authorization: Bearer "),
    "hf_token": _provider(lambda r, _i: "hf_" + pick(r, string.ascii_letters, 34), "HF_TOKEN",
                          "Authorization: Bearer "),
}


# ---- values: national ids (outside the target) ------------------------------------------------------------------

def _birth(rng: random.Random) -> tuple[int, int, int]:
    """(year, month, day) of a plausible adult's birth, days to 28 so every month has them."""
    return rng.randint(1950, 2006), rng.randint(1, 12), rng.randint(1, 28)


def _fr_nir(rng: random.Random) -> str:
    """INSEE NIR: sex, year, month, department (not Corsica's 20), commune, order, key 97 - n mod 97."""
    y, m, _d = _birth(rng)
    dept = rng.choice([d for d in range(1, 96) if d != 20])
    base = f"{rng.choice('12')}{y % 100:02d}{m:02d}{dept:02d}{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}"
    return f"{base[0]} {base[1:3]} {base[3:5]} {base[5:7]} {base[7:10]} {base[10:]} {97 - int(base) % 97:02d}"


def _se_pnr(rng: random.Random) -> str:
    """Swedish personnummer YYMMDD-NNNC, C the Luhn digit of the nine before it."""
    y, m, d = _birth(rng)
    base = f"{y % 100:02d}{m:02d}{d:02d}{digits(rng, 3)}"
    return f"{base[:6]}-{base[6:]}{luhn_digit(base)}"


def _fi_hetu(rng: random.Random) -> str:
    """Finnish HETU DDMMYY, century sign, individual number 002-899, mod 31 check character."""
    y, m, d = _birth(rng)
    ind = f"{rng.randint(2, 899):03d}"
    check = "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(f"{d:02d}{m:02d}{y % 100:02d}{ind}") % 31]
    return f"{d:02d}{m:02d}{y % 100:02d}{'-' if y < 2000 else 'A'}{ind}{check}"


def _no_fnr(rng: random.Random) -> str:
    """Norwegian fodselsnummer DDMMYY + individual number + two mod 11 control digits (10 is not allowed)."""
    while True:
        y, m, d = _birth(rng)
        ind = rng.randint(0, 499) if y < 2000 else rng.randint(500, 999)
        base = [int(c) for c in f"{d:02d}{m:02d}{y % 100:02d}{ind:03d}"]
        k1 = (11 - sum(w * c for w, c in zip((3, 7, 6, 1, 8, 9, 4, 5, 2), base, strict=True)) % 11) % 11
        k2 = (11 - sum(w * c for w, c in zip((5, 4, 3, 2, 7, 6, 5, 4, 3, 2), base + [k1], strict=True)) % 11) % 11
        if k1 < 10 and k2 < 10:
            return "".join(map(str, base)) + f"{k1}{k2}"


def _be_nrn(rng: random.Random) -> str:
    """Belgian national register number YY.MM.DD-XXX.CC, CC = 97 - n mod 97 (n with a 2 before it after 2000)."""
    y, m, d = _birth(rng)
    base = f"{y % 100:02d}{m:02d}{d:02d}{rng.randint(1, 997):03d}"
    check = 97 - int(("2" if y >= 2000 else "") + base) % 97
    return f"{base[:2]}.{base[2:4]}.{base[4:6]}-{base[6:]}.{check:02d}"


def _br_cpf(rng: random.Random) -> str:
    """Brazilian CPF: nine digits and two mod 11 check digits, printed 000.000.000-00."""
    nums = [int(c) for c in digits(rng, 9)]
    while len(set(nums)) == 1:
        nums = [int(c) for c in digits(rng, 9)]
    for n in (10, 11):
        nums.append(sum(w * c for w, c in zip(range(n, 1, -1), nums, strict=True)) * 10 % 11 % 10)
    s = "".join(map(str, nums))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


IDS: dict[str, tuple[Callable[[random.Random], str], str, str]] = {
    "fr_nir": (_fr_nir, "N° de sécurité sociale", "fr"), "se_pnr": (_se_pnr, "Personnummer", "sv"),
    "fi_hetu": (_fi_hetu, "Henkilötunnus", "fi"), "no_fnr": (_no_fnr, "Fødselsnummer", "nb"),
    "be_nrn": (_be_nrn, "Rijksregisternummer", "nl"), "br_cpf": (_br_cpf, "CPF", "pt"),
}
"""kind: (generator, the label in the country's language, the language)."""


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    """A national id's generator: labelled in its language, in a KYC request body, in the agent's message."""
    make, label, lang = IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        nid = make(rng)
        return _pick_style(i, [
            ("label", nid, _label(lang, label, nid), False),
            ("kyc_json", nid, _dump({"document": {"type": kind, "number": nid}, "country": kind[:2].upper()}), False),
            ("agent_lang", nid, _say_text(rng, lang, _label(lang, label, nid)), False),
            ("multipart", nid, f'Content-Disposition: form-data; name="id_number"\n\n{nid}', False),
        ])
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "basic_auth": v_basic_auth, "oauth_token": v_oauth_token, "jwt": v_jwt, "session_cookie": v_session_cookie,
    "private_key": v_private_key, "totp_seed": v_totp_seed, "recovery_code": v_recovery_code,
    **PROVIDERS, **{k: national_id(k) for k in IDS}}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists."""
    style, _secret, snip, raw_only = value
    if i % 3 == 0 and not raw_only:
        name = list(JSON_CARRIERS)[i // 3 % len(JSON_CARRIERS)]
        return name, JSON_CARRIERS[name](rng, snip), True
    name = list(TEXT_CARRIERS)[i % len(TEXT_CARRIERS)]
    return name, TEXT_CARRIERS[name](rng, snip), False


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
    body = rng.choice("3456") + digits(rng, 14)
    return group(body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10), 4, " ")


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "request_id": lambda r: r.choice([f"x-request-id: {_uuid(r)}", f"cf-ray: {pick(r, HEX, 16)}-FRA",
                                      f"X-Amzn-Trace-Id: Root=1-{pick(r, HEX, 8)}-{pick(r, HEX, 24)}",
                                      f"request-id: req_{pick(r, ALNUM, 24)}",
                                      f"x-kong-request-id: {pick(r, HEX, 32)}"]),
    "traceparent": lambda r: f"traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01",
    "log_timing": lambda r: f'"POST /v1/chat/completions HTTP/1.1" {r.choice([200, 201, 204])} {r.randint(90, 99999)} '
                            f"rt={r.uniform(0, 30):.3f} uct=0.{digits(r, 3)} bytes_sent={r.randint(100, 99999)} "
                            f"request_length={r.randint(100, 9999)}",
    "cache_busting": lambda r: r.choice([f"GET /static/js/main.{pick(r, HEX, 8)}.js?v={pick(r, HEX, 6)}",
                                         f'ETag: W/"{r.randint(16, 9999):x}-{pick(r, URLSAFE, 27)}"',
                                         f"/_next/static/chunks/app-{pick(r, HEX, 16)}.css",
                                         f"/assets/index-{pick(r, URLSAFE, 8)}.js?t={r.randint(10 ** 12, 10 ** 13)}"]),
    "sri_integrity": lambda r: f'<script src="/app.js" integrity="sha384-{pick(r, B64, 64)}" crossorigin></script>',
    "selector_xpath": lambda r: r.choice([f'#login-form > input[name="password"]:nth-child({r.randint(1, 9)})',
                                          f"div.sc-{pick(r, ALNUM, 6)}.{pick(r, ALNUM, 6)} > button",
                                          f'//*[@id="__next"]/div[{r.randint(1, 5)}]/form/input[{r.randint(1, 5)}]',
                                          f'element not found: [data-testid="api-key-input-{r.randint(1, 40)}"]']),
    "pixel_geometry": lambda r: f"viewport {r.choice([1280, 1440, 1920])}x{r.choice([720, 900, 1080])} dpr=2; "
                                f"click at ({r.randint(0, 1440)}, {r.randint(0, 900)}); rect "
                                f"{{x: {r.uniform(0, 900):.1f}, y: {r.randint(0, 900)}, width: 320, height: 44}}",
    "csrf_field_name": lambda r: r.choice(["403 Forbidden: CSRF token missing (field csrfmiddlewaretoken)",
                                           '<input type="hidden" name="authenticity_token">',
                                           "X-XSRF-TOKEN header absent; expected cookie XSRF-TOKEN",
                                           "form field _csrf was empty", "CSRF verification failed. Request aborted."]),
    "placeholder": lambda r: r.choice(["Authorization: Bearer <token>", "password=********", "Email: you@example.com",
                                       "OPENAI_API_KEY=sk-...", "api_key: {{ env.ANTHROPIC_API_KEY }}",
                                       "LITELLM_MASTER_KEY=$LITELLM_MASTER_KEY", "x-api-key: YOUR_API_KEY",
                                       "postgresql://user:password@localhost:5432/db", "Passwort: <Ihr Passwort>"]),
    "masked": lambda r: r.choice([f"key_alias=prod-agent token=sk-...{pick(r, ALNUM, 4)}",
                                  f"card •••• •••• •••• {digits(r, 4)}", f"whsec_****{pick(r, ALNUM, 4)}",
                                  f"+33 6 ** ** ** {digits(r, 2)}", f"IBAN DE** **** **** **** **{digits(r, 2)}",
                                  f"Incorrect API key provided: sk-proj-****{pick(r, ALNUM, 4)}",
                                  f"ssn_last_4={digits(r, 4)}", f"a***@{r.choice(DOMAINS)}"]),
    "key_hash": lambda r: _dump({"api_key": hashlib.sha256(r.randbytes(16)).hexdigest(), "key_alias": "agent-prod",
                                 "spend": round(r.uniform(0, 90), 4)}),
    "user_agent_version": lambda r: f"User-Agent: {r.choice(AGENTS)}; server: {r.choice(['nginx/1.27.2', 'envoy'])}; "
                                    f"litellm==1.{r.randint(40, 60)}.{r.randint(0, 20)}",
    "rate_limit": lambda r: f"x-ratelimit-limit-requests: {r.choice([500, 5000, 10000])}\n"
                            f"x-ratelimit-remaining-tokens: {r.randint(0, 800000)}\n"
                            f"x-ratelimit-reset-tokens: {r.randint(1, 59)}ms\nretry-after: {r.randint(1, 60)}\n"
                            f"anthropic-ratelimit-requests-reset: {_iso(r)}",
    "stripe_object_id": lambda r: f"{r.choice(['evt_', 'pi_', 'ch_', 'cus_', 'in_', 'req_'])}{pick(r, ALNUM, 24)} "
                                  f"({r.choice(['payment_intent.succeeded', 'invoice.paid', 'charge.refunded'])})",
    "tracking_number": lambda r: r.choice([f"UPS 1Z{pick(r, UPPER + string.digits, 6)}{digits(r, 10)}",
                                           f"USPS {group('9400' + digits(r, 18), 4, ' ')}",
                                           f"FedEx tracking {digits(r, 12)}", f"DHL Express {digits(r, 10)}"]),
    "order_number": lambda r: r.choice([f"Order #{digits(r, 3)}-{digits(r, 7)}-{digits(r, 7)}",
                                        f"Shopify order #{r.randint(1001, 99999)}",
                                        f"Bestellnummer {r.randint(10 ** 8, 10 ** 9)}",
                                        f"Commande n° {r.randint(10 ** 6, 10 ** 7)}"]),
    "luhn_invalid": lambda r: f"reference {_luhn_bad(r)} (checksum fails)",
    "service_number": lambda r: r.choice([f"Support: 1-800-{r.randint(200, 999)}-{digits(r, 4)} (toll-free)",
                                          f"Freephone 0800 {digits(r, 3)} {digits(r, 4)}",
                                          f"Service client : 0 800 {digits(r, 2)} {digits(r, 2)} {digits(r, 2)} "
                                          "(appel gratuit)", f"Hotline (kostenlos): 0800 {digits(r, 7)}",
                                          f"Toll free 1800-{digits(r, 3)}-{digits(r, 4)}"]),
    "webhook_signature": lambda r: r.choice([f"Stripe-Signature: t={r.randint(1772600000, 1782600000)},v1="
                                             f"{pick(r, HEX, 64)}", f"X-Hub-Signature-256: sha256={pick(r, HEX, 64)}",
                                             f"X-Slack-Signature: v0={pick(r, HEX, 64)}",
                                             f"X-GitHub-Delivery: {_uuid(r)}"]),
    "oauth_public_param": lambda r: f"GET /authorize?response_type=code&client_id=Iv1.{pick(r, HEX, 16)}&state="
                                    f"{pick(r, URLSAFE, 22)}&code_challenge={pick(r, URLSAFE, 43)}"
                                    "&code_challenge_method=S256&scope=openid%20email",
    "model_cost": lambda r: f"model={r.choice(MODELS)} prompt_tokens={r.randint(10, 90000)} completion_tokens="
                            f"{r.randint(1, 4000)} cost=${r.uniform(0, 2):.6f} cache_hit={r.choice(['true', 'false'])}",
    "doc_example": lambda r: r.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                       "curl -u username:password https://example.com",
                                       "export STRIPE_WEBHOOK_SECRET=whsec_... # from the dashboard"]),
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), some inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                name = list(JSON_CARRIERS)[i % len(JSON_CARRIERS)]
                text = JSON_CARRIERS[name](rng, text)
            yield sort, text
