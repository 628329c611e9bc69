"""The twenty-eighth blind redaction corpus: customer-facing agents, what a support or sales agent's traces hold
(help desks, CRM and messaging). Written from the formats' public specifications by someone who read neither the
detection rules nor the other corpora (only the twenty-first's interface).

Carriers (the `form` head): help-desk API JSON (Zendesk ticket and comments with internal notes, Freshdesk
ticket, Intercom conversation parts, Help Scout threads), CRM records (Salesforce REST query results and `sf data
query` tables, HubSpot contact properties, Dynamics 365 OData), chat (Slack export JSON, Teams chatMessage from
Microsoft Graph, WhatsApp and Telegram exports, SMS backups), the agent's own tool calls, Stripe refund events and
dashboard text, e-mail as the agent reads it (raw RFC 5322 headers, MIME multipart with a quoted-printable or 8bit
text part beside a base64 HTML part, forwarded chains, `On ... wrote:` quotes with `> ` lines), ticket threads
with their reply marker, internal notes, filled-in macros, call-centre transcripts and voice-bot ASR lines (numbers
spoken digit by digit as words: the secret is the words as the text holds them), calendar invites (RFC 5545) and
vCards (RFC 6350), identity-verification checklists and agent signatures. The agent's replies come in 30 languages
with labels in the customer's language. About a third is JSON carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit, printed as ISO/IEC 7812
groups them; IBANs, ISO 13616 and the SWIFT IBAN registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules
(area not 000/666/9xx, group not 00, serial not 0000); phones, the national numbering plans (NANP: NPA and NXX
not starting 0/1, no N11; Ofcom: 07xxx mobiles, 01/02 geographic, avoiding the drama ranges; ARCEP: ten digits
from 01-07 in pairs; BNetzA: 015x/016x/017x mobiles and area codes; TRAI/DoT: ten-digit mobiles from 6-9 and STD
codes) with context words in each country's language and some +CC forms; AWS keys, IAM's documented AKIA/ASIA
ids (base32 alphabet) and 40-character secrets as the credentials file, CSV, `aws configure` and CLI JSON print
them; Slack, Discord, Teams, Power Automate, Google Chat (its one documented public `key`), Mattermost, Make and
Rocket.Chat webhook URLs (the secret is the token-bearing segment or query value only); Stripe `whsec_` signing
secrets (dashboard and `stripe listen` forms) and `sk_live_`/`rk_live_`/`sk_test_` keys; PostgreSQL, MySQL,
MongoDB SRV, Redis, AMQP, SMTP/IMAP URIs, ADO.NET, JDBC, Azure Storage and Service Bus connection strings (the
secret is the password or key only); JWT (RFC 7519/7515); HTTP Basic (RFC 7617); session cookies as the frameworks
name and shape them (Rails, Django, PHP, Express `s:` signed, Java, Laravel); OAuth tokens as providers document
them (Salesforce `00D...!`, Google `ya29.` and `1//`, Dropbox `sl.`, Intercom `dG9rOj`); PEM PKCS#8 EC and
OpenSSH Ed25519 private keys; TOTP seeds in `otpauth://` URIs (Google Authenticator key-uri format, RFC 4648
base32) and as grouped setup keys; recovery codes (GitHub's `xxxxx-xxxxx`, Google's 8 digits, Microsoft's
25-character code); Slack `xoxb-`/`xoxp-`/`xapp-` tokens; Twilio auth tokens beside their `AC` account SIDs;
SendGrid `SG.` keys; HubSpot private-app `pat-` tokens; Shopify `shpat_`/`shpca_`/`shppa_` tokens; vendors' API
keys after labels (Freshdesk, Zendesk, Pipedrive, Mailchimp with its data-centre suffix, Aircall); national ids
(outside the target): Spanish DNI (mod 23 letter), Brazilian CPF (two mod 11 digits), Polish PESEL (weights
1-3-7-9), Dutch BSN (11-proof), Indian Aadhaar (Verhoeff), French NIR (97 - n mod 97 key), Finnish HETU (mod 31
character), Canadian SIN (Luhn), Swedish personnummer (Luhn).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, Twilio's auth token and not its account SID, a TOTP URI's `secret=` value). Spoken
numbers are secrets as spoken: a voice bot's transcript that reads a card out in words holds the card. A disguised
value is the disguised string as written (zero-width characters, full-width forms, %-encoding, or `\\uXXXX`
escapes as literal text, which only text carriers hold). Carriers hold no personal data of their own beyond first
names; their addresses are on reserved `.example` domains. Near misses are what a support desk holds that is
neither secret nor personal: ticket, case, conversation and record ids, Stripe object ids, Slack ids and `ts`,
Message-IDs and DKIM body hashes, element ids and selectors, coordinates and sizes, timestamps, request ids,
cache-busting hashes, CSRF field names, placeholders and template variables, masked values, versions, businesses'
published service numbers, Luhn-invalid numbers, order and tracking numbers, product codes, amounts, and the AWS
docs' EXAMPLE keys: none of them identifies a person or opens anything.
"""

from __future__ import annotations

import base64
import json
import quopri
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
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 28
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "pl_pesel", "nl_bsn", "in_aadhaar", "fr_nir", "fi_hetu", "ca_sin",
                            "se_personnummer"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
"""Digits as a voice bot's ASR writes them out; `oh` is also read as 0."""


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


def digits_of(text: str) -> str:
    """The digits a value holds, whether written as numerals or spoken as words (`WORDS`, `oh`)."""
    spoken = {word: str(n) for n, word in enumerate(WORDS)} | {"oh": "0"}
    tokens = text.replace(",", " ").replace("-", " ").split()
    if tokens and all(t.lower() in spoken for t in tokens):
        return "".join(spoken[t.lower()] for t in tokens)
    return "".join(ch for ch in text if ch.isdigit())


def spoken(number: str, rng: random.Random, oh: bool = False) -> str:
    """`number`'s digits read out one by one as words, in runs as a caller pauses (`oh` for 0 where British)."""
    words = [("oh" if oh and d == "0" else WORDS[int(d)]) for d in number if d.isdigit()]
    sep = rng.choice([" ", ", "])
    runs = [" ".join(words[i:i + 4]) for i in range(0, len(words), 4)]
    return sep.join(runs)


# ---- languages ------------------------------------------------------------------------------------------------

LANGS: dict[str, tuple[str, ...]] = {
    # code: (hello, password, phone, e-mail, card number, account/IBAN, API key, regards)
    "en": ("Hi", "password", "phone", "email", "card number", "IBAN", "API key", "Kind regards"),
    "de": ("Hallo", "Passwort", "Telefon", "E-Mail", "Kartennummer", "IBAN", "API-Schlüssel", "Viele Grüße"),
    "fr": ("Bonjour", "mot de passe", "téléphone", "e-mail", "numéro de carte", "IBAN", "clé API", "Cordialement"),
    "es": ("Hola", "contraseña", "teléfono", "correo electrónico", "número de tarjeta", "IBAN", "clave de API",
           "Saludos cordiales"),
    "it": ("Ciao", "password", "telefono", "e-mail", "numero della carta", "IBAN", "chiave API", "Cordiali saluti"),
    "pt": ("Olá", "senha", "telefone", "e-mail", "número do cartão", "IBAN", "chave de API", "Atenciosamente"),
    "nl": ("Hallo", "wachtwoord", "telefoon", "e-mail", "kaartnummer", "IBAN", "API-sleutel",
           "Met vriendelijke groet"),
    "pl": ("Dzień dobry", "hasło", "telefon", "e-mail", "numer karty", "IBAN", "klucz API", "Pozdrawiam"),
    "sv": ("Hej", "lösenord", "telefon", "e-post", "kortnummer", "IBAN", "API-nyckel", "Vänliga hälsningar"),
    "da": ("Hej", "adgangskode", "telefon", "e-mail", "kortnummer", "IBAN", "API-nøgle", "Venlig hilsen"),
    "no": ("Hei", "passord", "telefon", "e-post", "kortnummer", "IBAN", "API-nøkkel", "Vennlig hilsen"),
    "fi": ("Hei", "salasana", "puhelin", "sähköposti", "kortin numero", "IBAN", "API-avain",
           "Ystävällisin terveisin"),
    "cs": ("Dobrý den", "heslo", "telefon", "e-mail", "číslo karty", "IBAN", "klíč API", "S pozdravem"),
    "sk": ("Dobrý deň", "heslo", "telefón", "e-mail", "číslo karty", "IBAN", "kľúč API", "S pozdravom"),
    "hu": ("Jó napot", "jelszó", "telefon", "e-mail", "kártyaszám", "IBAN", "API-kulcs", "Üdvözlettel"),
    "ro": ("Bună ziua", "parolă", "telefon", "e-mail", "numărul cardului", "IBAN", "cheie API", "Cu stimă"),
    "tr": ("Merhaba", "şifre", "telefon", "e-posta", "kart numarası", "IBAN", "API anahtarı", "Saygılarımızla"),
    "el": ("Γεια σας", "κωδικός πρόσβασης", "τηλέφωνο", "email", "αριθμός κάρτας", "IBAN", "κλειδί API",
           "Με εκτίμηση"),
    "ru": ("Здравствуйте", "пароль", "телефон", "эл. почта", "номер карты", "IBAN", "API-ключ", "С уважением"),
    "uk": ("Вітаю", "пароль", "телефон", "ел. пошта", "номер картки", "IBAN", "ключ API", "З повагою"),
    "ja": ("こんにちは", "パスワード", "電話番号", "メールアドレス", "カード番号", "IBAN", "APIキー",
           "よろしくお願いいたします"),
    "zh": ("您好", "密码", "电话", "电子邮件", "卡号", "IBAN", "API 密钥", "此致"),
    "ko": ("안녕하세요", "비밀번호", "전화번호", "이메일", "카드 번호", "IBAN", "API 키", "감사합니다"),
    "ar": ("مرحباً", "كلمة المرور", "الهاتف", "البريد الإلكتروني", "رقم البطاقة", "IBAN", "مفتاح API",
           "مع أطيب التحيات"),
    "he": ("שלום", "סיסמה", "טלפון", 'דוא"ל', "מספר כרטיס", "IBAN", "מפתח API", "בברכה"),
    "hi": ("नमस्ते", "पासवर्ड", "फ़ोन", "ईमेल", "कार्ड नंबर", "IBAN", "API कुंजी", "सादर"),
    "id": ("Halo", "kata sandi", "telepon", "email", "nomor kartu", "IBAN", "kunci API", "Salam hangat"),
    "vi": ("Xin chào", "mật khẩu", "điện thoại", "email", "số thẻ", "IBAN", "khóa API", "Trân trọng"),
    "th": ("สวัสดีครับ", "รหัสผ่าน", "โทรศัพท์", "อีเมล", "หมายเลขบัตร", "IBAN", "คีย์ API", "ขอแสดงความนับถือ"),
    "ms": ("Helo", "kata laluan", "telefon", "e-mel", "nombor kad", "IBAN", "kunci API", "Salam hormat"),
}
HELLO, PASSWORD, PHONE, EMAIL, CARD, IBAN, APIKEY, REGARDS = range(8)


def lang(i: int) -> tuple[str, ...]:
    """The labels of case `i`'s language, cycling all of them so each kind meets every language."""
    return list(LANGS.values())[i * 7 % len(LANGS)]


def labelled(i: int, field: int, value: str) -> str:
    """An agent's reply in case `i`'s language: greeting, the field's label, the value, the sign-off."""
    words = lang(i)
    colon = " :" if words is LANGS["fr"] else ":"
    return f"{words[HELLO]},\n\n{words[field]}{colon} {value}\n\n{words[REGARDS]}\nBrightlane Support"


# ---- carriers -------------------------------------------------------------------------------------------------

FIRST = ("Maya", "Jonas", "Aarav", "Chloé", "Lucía", "Giulia", "Sven", "Aiko", "Oren", "Fatima", "Mateus", "Noor",
         "Piotr", "Eleni", "Kofi", "Linh")


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _stamp(rng: random.Random) -> str:
    month, day, hour, minute = rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59)
    return f"2024-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:00Z"


def _sfid(rng: random.Random, prefix: str) -> str:
    """A Salesforce 18-character record id: key prefix, pod, zeros, random, case-safe suffix."""
    return prefix + "5g" + "0000" + pick(rng, ALNUM, 6) + pick(rng, UPPER, 3)


def c_zendesk_ticket(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"ticket": {"id": rng.randint(100000, 999999), "subject": "Cannot log in after reset",
                             "description": snip, "status": "open", "priority": "high",
                             "requester_id": rng.randint(10 ** 11, 10 ** 12), "tags": ["login", "tier2"],
                             "created_at": _stamp(rng)}})


def c_zendesk_comments(rng: random.Random, snip: str, _s: str) -> str:
    first = {"id": rng.randint(10 ** 12, 10 ** 13), "type": "Comment", "public": True,
             "body": "Thanks for reaching out, we are looking into it.", "author_id": rng.randint(10 ** 11, 10 ** 12)}
    note = {"id": rng.randint(10 ** 12, 10 ** 13), "type": "Comment", "public": False, "body": snip,
            "author_id": rng.randint(10 ** 11, 10 ** 12), "via": {"channel": "web"}}
    return _dump({"comments": [first, note], "next_page": None, "count": 2})


def c_freshdesk(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": rng.randint(1000, 99999), "subject": "Refund request", "description_text": snip,
                  "status": 2, "priority": 1, "source": rng.choice([1, 2, 3, 7]), "type": "Question",
                  "custom_fields": {"cf_order_channel": "web"}, "updated_at": _stamp(rng)})


def c_intercom(rng: random.Random, snip: str, _s: str) -> str:
    part = {"type": "conversation_part", "id": str(rng.randint(10 ** 9, 10 ** 10)), "part_type": "comment",
            "body": f"<p>{snip}</p>", "author": {"type": "user", "name": rng.choice(FIRST)}}
    return _dump({"type": "conversation", "id": str(rng.randint(10 ** 11, 10 ** 12)), "state": "open",
                  "conversation_parts": {"type": "conversation_part.list", "conversation_parts": [part],
                                         "total_count": 1}})


def c_helpscout(rng: random.Random, snip: str, _s: str) -> str:
    thread = {"id": rng.randint(10 ** 9, 10 ** 10), "type": rng.choice(["customer", "note", "reply"]),
              "status": "active", "body": snip, "createdAt": _stamp(rng)}
    return _dump({"_embedded": {"threads": [thread]}, "page": {"size": 25, "totalElements": 1}})


def c_salesforce(rng: random.Random, snip: str, _s: str) -> str:
    cid = _sfid(rng, "500")
    record = {"attributes": {"type": "Case", "url": f"/services/data/v60.0/sobjects/Case/{cid}"}, "Id": cid,
              "CaseNumber": f"{rng.randint(1, 99999):08d}", "Subject": "Payment issue", "Description": snip}
    return _dump({"totalSize": 1, "done": True, "records": [record]})


def c_hubspot(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": str(rng.randint(10 ** 10, 10 ** 11)), "properties": {
        "firstname": rng.choice(FIRST), "lifecyclestage": "customer", "hs_lead_status": "OPEN_DEAL",
        "notes_last_updated": _stamp(rng), "message": snip}, "archived": False})


def c_dynamics(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"@odata.context": "https://brightlane.crm4.dynamics.com/api/data/v9.2/$metadata#incidents",
                  "value": [{"@odata.etag": f'W/"{rng.randint(10 ** 6, 10 ** 7)}"', "incidentid": _uid(rng),
                             "title": "Address change", "ticketnumber": f"CAS-{rng.randint(10000, 99999)}-"
                             f"{pick(rng, 'BCDFGHJKLMNPQRSTVWXZ', 6)}", "description": snip}]})


def c_slack_export(rng: random.Random, snip: str, _s: str) -> str:
    ts = f"{rng.randint(1704067200, 1735689599)}.{digits(rng, 6)}"
    return _dump([{"type": "message", "user": "U0" + pick(rng, UPPER + string.digits, 9), "text": snip, "ts": ts,
                   "team": "T0" + pick(rng, UPPER + string.digits, 8), "user_profile": {"first_name":
                   rng.choice(FIRST)}}])


def c_teams(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"@odata.type": "#microsoft.graph.chatMessage", "id": str(rng.randint(10 ** 12, 10 ** 13)),
                  "messageType": "message", "createdDateTime": _stamp(rng),
                  "from": {"user": {"id": _uid(rng), "displayName": rng.choice(FIRST)}},
                  "body": {"contentType": "text", "content": snip}})


def c_stripe_event(rng: random.Random, snip: str, _s: str) -> str:
    refund = {"id": "re_3" + pick(rng, ALNUM, 23), "object": "refund", "amount": rng.randint(500, 50000),
              "currency": rng.choice(["eur", "usd", "gbp"]), "status": "pending", "metadata": {"agent_note": snip}}
    return _dump({"id": "evt_3" + pick(rng, ALNUM, 23), "object": "event", "type": "charge.refund.updated",
                  "data": {"object": refund}, "livemode": True})


def c_tool_use(rng: random.Random, snip: str, _s: str) -> str:
    tool = rng.choice(["zendesk_add_comment", "crm_update_contact", "send_customer_reply"])
    return _dump({"type": "tool_use", "id": "toolu_01" + pick(rng, ALNUM, 22), "name": tool,
                  "input": {"ticket_id": rng.randint(100000, 999999), "body": snip, "public": False}})


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "zendesk_ticket": c_zendesk_ticket, "zendesk_comments": c_zendesk_comments, "freshdesk": c_freshdesk,
    "intercom": c_intercom, "helpscout": c_helpscout, "salesforce_rest": c_salesforce, "hubspot": c_hubspot,
    "dynamics": c_dynamics, "slack_export": c_slack_export, "teams_graph": c_teams, "stripe_event": c_stripe_event,
    "tool_use": c_tool_use,
}


def _date(rng: random.Random) -> str:
    day = rng.choice(["Mon", "Tue", "Wed", "Thu", "Fri"])
    month = rng.choice(["Jan", "Mar", "May", "Jun", "Sep", "Nov"])
    return f"{day}, {rng.randint(1, 28)} {month} 2024 {rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}:00 +0000"


def _msgid(rng: random.Random) -> str:
    return f"<{pick(rng, HEX, 16)}.{rng.randint(10 ** 5, 10 ** 6)}@mail.brightlane.example>"


def c_rfc5322(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Return-Path: <bounce+{pick(rng, HEX, 8)}@mail.brightlane.example>\nMessage-ID: {_msgid(rng)}\n"
            f"Date: {_date(rng)}\nFrom: Brightlane Support <support@brightlane.example>\n"
            f"To: undisclosed-recipients:;\nSubject: Re: [#{rng.randint(100000, 999999)}] Your request\n"
            f"MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n{snip}\n")


def c_mime(rng: random.Random, snip: str, secret: str) -> str:
    """multipart/alternative: the text part quoted-printable when that leaves the value whole, else 8bit; the HTML
    part base64 of a neutral body."""
    boundary = "00000000000" + pick(rng, HEX, 17)
    qp = quopri.encodestring(snip.encode()).decode("ascii", "replace")
    use_qp = secret in qp and snip.isascii()
    body, cte = (qp, "quoted-printable") if use_qp else (snip, "8bit")
    html = base64.encodebytes(b"<div dir=\"ltr\">Please see the plain-text part of this message.</div>").decode()
    return (f"Message-ID: {_msgid(rng)}\nDate: {_date(rng)}\nMIME-Version: 1.0\n"
            f"Content-Type: multipart/alternative; boundary=\"{boundary}\"\n\n--{boundary}\n"
            f"Content-Type: text/plain; charset=\"UTF-8\"\nContent-Transfer-Encoding: {cte}\n\n{body}\n--{boundary}\n"
            f"Content-Type: text/html; charset=\"UTF-8\"\nContent-Transfer-Encoding: base64\n\n{html}--{boundary}--\n")


def c_forwarded(rng: random.Random, snip: str, _s: str) -> str:
    return (f"FYI, see below.\n\n---------- Forwarded message ---------\nFrom: Billing <billing@brightlane.example>\n"
            f"Date: {_date(rng)}\nSubject: Fwd: account update\nTo: Tier 2 <tier2@brightlane.example>\n\n{snip}\n")


def c_quoted(rng: random.Random, snip: str, secret: str) -> str:
    """An `On ... wrote:` reply quoting the earlier message line by line (unquoted when the value spans lines)."""
    quoted = snip if "\n" in secret else "\n".join("> " + line for line in snip.split("\n"))
    return (f"Thanks, that worked!\n\nOn {_date(rng)}, {rng.choice(FIRST)} via Brightlane Support "
            f"<support@brightlane.example> wrote:\n{quoted}\n")


def c_thread(rng: random.Random, snip: str, _s: str) -> str:
    return (f"##- Please type your reply above this line -##\n\nYour request ({rng.randint(100000, 999999)}) has been "
            f"updated.\n\n{rng.choice(FIRST)} (Brightlane)\n{_date(rng)}\n\n{snip}\n\n{'-' * 32}\n"
            f"This email is a service from Brightlane Support. [{pick(rng, 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789', 6)}"
            f"-{pick(rng, 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789', 5)}]\n")


def c_internal_note(rng: random.Random, snip: str, _s: str) -> str:
    return f"[Internal note] {rng.choice(FIRST)} (Tier 2) - {_stamp(rng)}\n{snip}\n(not visible to the customer)\n"


def c_macro(rng: random.Random, snip: str, _s: str) -> str:
    name = rng.choice(["Account recovery - manual", "Billing: refund issued", "Verify identity", "Escalate to eng"])
    return f"Macro applied: \"{name}\" (id {rng.randint(10 ** 11, 10 ** 12)})\n---\n{snip}\n---\n"


def c_soql_cli(rng: random.Random, snip: str, _s: str) -> str:
    cid = _sfid(rng, "500")
    return (f"$ sf data query --query \"SELECT Id, CaseNumber, Description FROM Case WHERE Id = '{cid}'\"\n"
            f" ID                 CASENUMBER DESCRIPTION\n ────────────────── ────────── ───────────\n"
            f" {cid} {rng.randint(1, 99999):08d}   {snip}\nTotal number of records retrieved: 1.\n")


def c_whatsapp(rng: random.Random, snip: str, _s: str) -> str:
    day = f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2024"
    name = rng.choice(FIRST)
    return (f"[{day}, 14:{rng.randint(10, 59)}:07] Brightlane: Hi {name}, how can we help?\n"
            f"[{day}, 14:{rng.randint(10, 59)}:41] {name}: {snip}\n")


def c_telegram(rng: random.Random, snip: str, _s: str) -> str:
    day, month, hour = rng.randint(1, 28), rng.randint(1, 12), rng.randint(8, 22)
    return f"{rng.choice(FIRST)}, [{day:02d}.{month:02d}.24 {hour}:07]\n{snip}\n"


def c_sms(rng: random.Random, snip: str, _s: str) -> str:
    return (f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(8, 22):02d}:14:00\toutbound\t"
            f"Brightlane: your code is on its way.\n2024-06-11 09:15:32\tinbound\t{snip}\n")


def c_call(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Call {_uid(rng)[:8]} (queue: billing, {rng.randint(3, 19)} min)\n[00:0{rng.randint(1, 9)}:12] Agent: "
            f"Thanks for holding, could you confirm that for me?\n[00:0{rng.randint(1, 9)}:31] Caller: {snip}\n")


def c_asr(rng: random.Random, snip: str, _s: str) -> str:
    return (f"voicebot turn={rng.randint(3, 30)} lang=auto asr_confidence=0.{rng.randint(70, 99)} "
            f"intent=collect_details\nuser: {snip}\nbot: Thank you, one moment please.\n")


def _ics_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def c_ics(rng: random.Random, snip: str, secret: str) -> str:
    """An RFC 5545 invite; DESCRIPTION escaped as the RFC says unless escaping would split the value."""
    desc = _ics_escape(snip) if secret in _ics_escape(snip) else snip
    return (f"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//Brightlane//Support Scheduler//EN\nBEGIN:VEVENT\n"
            f"UID:{_uid(rng)}\nDTSTAMP:20240611T090000Z\nDTSTART:202406{rng.randint(12, 28)}T1{rng.randint(0, 6)}"
            f"0000Z\nSUMMARY:Onboarding call\nDESCRIPTION:{desc}\nEND:VEVENT\nEND:VCALENDAR\n")


def c_vcard(rng: random.Random, snip: str, secret: str) -> str:
    note = _ics_escape(snip) if secret in _ics_escape(snip) else snip
    return f"BEGIN:VCARD\nVERSION:3.0\nFN:{rng.choice(FIRST)}\nORG:Brightlane customer\nNOTE:{note}\nEND:VCARD\n"


def c_dashboard(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Payments › pi_3{pick(rng, ALNUM, 23)}\n€{rng.randint(5, 400)}.{rng.randint(10, 99)} EUR  Refunded\n"
            f"Timeline\n  Payment succeeded\n  Refund initiated by agent\n  Note: {snip}\n")


def c_idv(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Identity verification - case {rng.randint(10 ** 5, 10 ** 6)}\n [x] Name matches account\n"
            f" [x] Postcode matches\n [ ] Security question\n Caller stated: {snip}\n Outcome: pending review\n")


def c_slack_copy(rng: random.Random, snip: str, _s: str) -> str:
    return (f"#support-escalations\n{rng.choice(FIRST)}  {rng.randint(1, 12)}:{rng.randint(10, 59)} PM\n{snip}\n"
            f"  {rng.randint(1, 4)} replies  Last reply today\n")


def c_signature(rng: random.Random, snip: str, _s: str) -> str:
    return f"{snip}\n\n--\n{rng.choice(FIRST)}\nCustomer Success, Brightlane\nSent from my phone\n"


TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "rfc5322": c_rfc5322, "mime": c_mime, "forwarded": c_forwarded, "on_wrote": c_quoted, "ticket_thread": c_thread,
    "internal_note": c_internal_note, "macro": c_macro, "soql_cli": c_soql_cli, "whatsapp": c_whatsapp,
    "telegram": c_telegram, "sms_backup": c_sms, "call_transcript": c_call, "voicebot_asr": c_asr, "ics": c_ics,
    "vcard": c_vcard, "psp_dashboard": c_dashboard, "idv_checklist": c_idv, "signature": c_signature,
    "slack_copy": c_slack_copy,
}


# ---- values: credentials --------------------------------------------------------------------------------------

PW_WORDS = ("Lighthouse", "Sonnenblume", "Papillon", "Mariposa", "Girassol", "Zonnebloem", "Niebieski", "Kirsikka",
            "Sakura", "Oceano", "Tormenta", "Vindmølle", "Brightside", "Kastanie", "Kolibri", "Citronnier")
SYMBOLS = "!@#$%&*?-_+"


def password_value(rng: random.Random) -> str:
    """A password as customers and agents set them: random, word + digits + symbol, passphrase, or temporary."""
    form = rng.randrange(4)
    if form == 0:
        core = pick(rng, ALNUM, rng.randint(9, 14))
        return core[:4] + rng.choice(SYMBOLS) + core[4:] + rng.choice(SYMBOLS)
    if form == 1:
        return rng.choice(PW_WORDS) + digits(rng, rng.randint(2, 4)) + rng.choice(SYMBOLS)
    if form == 2:
        words = rng.sample(["copper", "violet", "harbor", "maple", "quartz", "lantern", "meadow", "cobalt", "ember"], 3)
        return "-".join(words) + "-" + digits(rng, 2)
    return "Tmp-" + pick(rng, ALNUM, 4) + "-" + digits(rng, 4) + rng.choice(SYMBOLS)


def v_password(rng: random.Random, i: int) -> Value:
    pw = password_value(rng)
    user = rng.choice(FIRST).lower() + digits(rng, 2)
    forms = [
        ("reply_label", labelled(i, PASSWORD, pw)),
        ("customer_chat", f"i already tried resetting it, my password is {pw} and it still says invalid"),
        ("temp_reset", f"I've reset your account. Temporary password: {pw}\nYou'll be asked to change it on login."),
        ("vendor_login", f"Vendor portal (carrier claims) login: {user} / {pw}"),
        ("macro_filled", f"Hi {rng.choice(FIRST)},\nYour new password is: {pw}\nFor your security, please change it."),
        ("pwd_short", f"pwd {pw} (customer gave it over the phone, do not reuse)"),
        ("form_post", f"POST /account/login HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\n"
                      f"username={user}&password={pw}&remember_me=1"),
        ("wifi", f"Store wifi for the pop-up event: SSID Brightlane-Guest, WPA2 passphrase {pw}"),
    ]
    style, snip = forms[i % len(forms)]
    if style == "form_post" and any(c in pw for c in "&+%#"):
        style, snip = "pwd_short", f"pwd {pw} (customer gave it over the phone, do not reuse)"
    return style, pw, snip, False


def aws_secret_value(rng: random.Random) -> str:
    return pick(rng, B64, 40)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    secret = aws_secret_value(rng)
    kid = rng.choice(["AKIA", "AKIA", "ASIA"]) + pick(rng, BASE32, 16)
    forms = [
        ("credentials_file", f"[support-export]\naws_access_key_id = {kid}\naws_secret_access_key = {secret}\n"
                             f"region = eu-west-1"),
        ("env_export", f"export AWS_ACCESS_KEY_ID={kid}\nexport AWS_SECRET_ACCESS_KEY={secret}"),
        ("console_csv", f"Access key ID,Secret access key\n{kid},{secret}"),
        ("cli_json", f'{{"AccessKey": {{"UserName": "helpdesk-attachments", "AccessKeyId": "{kid}", '
                     f'"Status": "Active", "SecretAccessKey": "{secret}", "CreateDate": "2024-06-11T09:14:02Z"}}}}'),
        ("aws_configure", f"AWS Access Key ID [None]: {kid}\nAWS Secret Access Key [None]: {secret}\n"
                          f"Default region name [None]: us-east-1"),
        ("boto3", f'client = boto3.client("s3", aws_access_key_id="{kid}", aws_secret_access_key="{secret}")'),
        ("customer_paste", f"our integration keys are {kid} and {secret}, can you check why uploads fail?"),
        ("labelled_only", f"AWS secret key: {secret}"),
    ]
    style, snip = forms[i % len(forms)]
    return style, secret, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    style = ["slack", "discord", "teams", "power_automate", "google_chat", "mattermost", "make", "rocketchat"][i % 8]
    if style == "slack":
        token = pick(rng, ALNUM, 24)
        team, hook = pick(rng, UPPER + string.digits, 8), pick(rng, UPPER + string.digits, 10)
        url = f"https://hooks.slack.com/services/T{team}/B{hook}/{token}"
    elif style == "discord":
        token = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19 - 1)}/{token}"
    elif style == "teams":
        token = pick(rng, HEX, 32)
        url = (f"https://brightlane.webhook.office.com/webhookb2/{_uid(rng)}@{_uid(rng)}/IncomingWebhook/"
               f"{token}/{_uid(rng)}")
    elif style == "power_automate":
        token = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={token}")
    elif style == "google_chat":
        token = pick(rng, URLSAFE, 43)
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages"
               f"?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={token}")
    elif style == "mattermost":
        token = pick(rng, LOWNUM, 26)
        url = f"https://chat.brightlane.example/hooks/{token}"
    elif style == "make":
        token = pick(rng, LOWNUM, 32)
        url = f"https://hook.eu1.make.com/{token}"
    else:
        token = pick(rng, ALNUM, 48)
        url = f"https://rocket.brightlane.example/hooks/{pick(rng, ALNUM, 17)}/{token}"
    wrap = [f"Escalation alerts go to {url}",
            f"curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"New P1 ticket\"}}' {url}",
            f"Trigger target \"Notify #vip-customers\"\nEndpoint URL: {url}\nMethod: POST",
            f"webhook_url: \"{url}\""][i // 8 % 4]
    return style, token, wrap, False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = "whsec_" + (pick(rng, HEX, 64) if i % 3 == 0 else pick(rng, ALNUM, 32))
    forms = [
        ("stripe_listen", f"> Ready! You are using Stripe API Version [2024-04-10]. Your webhook signing secret is "
                          f"{secret} (^C to quit)"),
        ("env", f"STRIPE_WEBHOOK_SECRET={secret}"),
        ("dashboard", f"Webhooks › we_1{pick(rng, ALNUM, 23)}\nSigning secret\n{secret}\nEvents: charge.refunded"),
        ("code", f"event = stripe.Webhook.construct_event(payload, sig_header, \"{secret}\")"),
        ("chat", f"refund webhook keeps failing signature checks, the endpoint secret we use is {secret}"),
    ]
    style, snip = forms[i % len(forms)]
    return style, secret, snip, False


def _pw_url(rng: random.Random) -> str:
    return pick(rng, ALNUM, rng.randint(14, 22)) + rng.choice(["", "-", "_", "."]) + pick(rng, ALNUM, 3)


def v_connection_string(rng: random.Random, i: int) -> Value:
    style = ["postgres", "mysql", "mongodb_srv", "redis", "amqp", "smtp", "imaps", "adonet", "jdbc",
             "azure_storage", "service_bus"][i % 11]
    pw = _pw_url(rng)
    host = rng.choice(["crm-db", "tickets-replica", "helpdesk", "support-prod"])
    if style == "postgres":
        text = (f"DATABASE_URL=postgres://crm_app:{pw}@{host}.cluster-c{pick(rng, LOWNUM, 11)}"
                ".eu-west-1.rds.amazonaws.com:5432/crm")
    elif style == "mysql":
        text = f"mysql://zammad:{pw}@{host}.internal:3306/zammad_production"
    elif style == "mongodb_srv":
        text = (f"mongodb+srv://chatbot:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/transcripts"
                "?retryWrites=true&w=majority")
    elif style == "redis":
        text = f"REDIS_URL=redis://:{pw}@{host}.cache.internal:6379/2"
    elif style == "amqp":
        text = f"amqp://ticket_events:{pw}@rabbit.{host}.internal:5672/helpdesk"
    elif style == "smtp":
        text = f"EMAIL_URL=smtp://postmaster%40mg.brightlane.example:{pw}@smtp.eu.mailgun.org:587"
    elif style == "imaps":
        text = f"Inbound mailbox: imaps://support%40brightlane.example:{pw}@outlook.office365.com:993/INBOX"
    elif style == "adonet":
        text = (f"Server=tcp:{host}.database.windows.net,1433;Initial Catalog=Dynamics_Staging;Persist Security Info="
                f"False;User ID=crm_sync;Password={pw};Encrypt=True;Connection Timeout=30;")
    elif style == "jdbc":
        text = f"jdbc:postgresql://{host}.internal:5432/crm?user=report_ro&password={pw}&ssl=true"
    elif style == "azure_storage":
        pw = base64.b64encode(rng.randbytes(64)).decode()
        text = (f"DefaultEndpointsProtocol=https;AccountName=bltickets{digits(rng, 3)};AccountKey={pw};"
                f"EndpointSuffix=core.windows.net")
    else:
        pw = base64.b64encode(rng.randbytes(32)).decode()
        text = (f"Endpoint=sb://brightlane-{host}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
                f"SharedAccessKey={pw}")
    lead = ["", "connection string from the old CRM export job: ", "Customer's self-hosted install uses ",
            "App setting (Configuration > Connection strings): "][i // 11 % 4]
    return style, pw, lead + text, False


VENDOR_KEYS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("freshdesk", lambda r: pick(r, ALNUM, 20)),
    ("zendesk_token", lambda r: pick(r, ALNUM, 40)),
    ("pipedrive", lambda r: pick(r, HEX, 40)),
    ("mailchimp", lambda r: pick(r, HEX, 32) + f"-us{r.randint(1, 21)}"),
    ("aircall", lambda r: pick(r, HEX, 32)),
    ("generic_uuid", lambda r: _uid(r)),
]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    vendor, make = VENDOR_KEYS[i % len(VENDOR_KEYS)]
    key = make(rng)
    forms = [
        ("reply_label", labelled(i, APIKEY, key)),
        ("api_key_colon", f"API key: {key}"),
        ("header", f"GET /api/v2/tickets.json HTTP/1.1\nHost: brightlane.example\nX-API-Key: {key}"),
        ("query", f"https://api.brightlane.example/v1/contacts?api_key={key}&page=2"),
        ("api_token", f"{vendor} API token: {key} (generated by the customer's admin)"),
        ("yaml", f"integrations:\n  {vendor}:\n    api_key: {key}"),
        ("chat", f"here is our apikey {key} so you can check the sync on your side"),
    ]
    style, snip = forms[i % len(forms)]
    return f"{vendor}/{style}", key, snip, False


ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


def _disguise_base(rng: random.Random, i: int) -> str:
    return [password_value(rng), "sk_live_" + pick(rng, ALNUM, 24), pick(rng, ALNUM, 32)][i % 3]


def v_disguised(rng: random.Random, i: int) -> Value:
    base = _disguise_base(rng, i)
    style = ["zero_width", "fullwidth", "percent", "json_unicode"][i % 4]
    if style == "zero_width":
        at = sorted(rng.sample(range(1, len(base)), 2))
        value = base[:at[0]] + rng.choice(ZERO_WIDTH) + base[at[0]:at[1]] + rng.choice(ZERO_WIDTH) + base[at[1]:]
    elif style == "fullwidth":
        value = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in base)
    elif style == "percent":
        value = "".join(f"%{b:02X}" for b in base.encode())
    else:
        value = "".join(f"\\u{ord(c):04x}" for c in base)
    label = [lang(i)[PASSWORD], "secret", "token", lang(i)[APIKEY]][i // 4 % 4]
    lead = ["(copied from the customer's PDF) ", "", "pasted from Word: ", "as typed on the phone keyboard: "][i % 4]
    return style, value, f"{lead}{label}: {value}", style == "json_unicode"


# ---- values: personal data ------------------------------------------------------------------------------------

SURNAMES = ("okafor", "lindqvist", "moreau", "garcia", "rossi", "kowalski", "tanaka", "sharma", "nguyen", "schmidt",
            "haddad", "silva", "obrien", "petrov", "kaya", "dubois", "jensen", "murphy")
PERSONAL_DOMAINS = ("gmail.com", "outlook.com", "hotmail.co.uk", "yahoo.fr", "web.de", "gmx.net", "orange.fr",
                    "libero.it", "icloud.com", "proton.me", "rediffmail.com", "yandex.ru", "naver.com", "wp.pl",
                    "t-online.de", "live.nl", "bol.com.br", "seznam.cz")


def email_value(rng: random.Random) -> str:
    first, last = rng.choice(FIRST).lower().replace("é", "e").replace("í", "i"), rng.choice(SURNAMES)
    local = rng.choice([f"{first}.{last}", f"{first}{last}", f"{first[0]}.{last}", f"{first}_{last}{digits(rng, 2)}",
                        f"{first}+support", f"{last}.{first}{digits(rng, 4)}"])
    business = f"{last}-{rng.choice(['legal', 'bakery', 'dental'])}.co.uk"
    domain = rng.choice(PERSONAL_DOMAINS) if rng.random() < 0.8 else business
    return f"{local}@{domain}"


def v_email(rng: random.Random, i: int) -> Value:
    addr = email_value(rng)
    name = rng.choice(FIRST)
    forms = [
        ("from_header", f"From: {name} <{addr}>\nSubject: order never arrived"),
        ("reply_to", f"Reply-To: {addr}\nX-Mailer: iPhone Mail (21F90)"),
        ("cc", f"Cc: {name} <{addr}>, Billing <billing@brightlane.example>"),
        ("reply_label", labelled(i, EMAIL, addr)),
        ("crm_field", f"Contact\n  Name: {name}\n  Email: {addr}\n  Lifecycle: Customer"),
        ("vcard_email", f"EMAIL;TYPE=INTERNET,HOME:{addr}"),
        ("ics_attendee", f"ATTENDEE;CN={name};ROLE=REQ-PARTICIPANT;RSVP=TRUE:mailto:{addr}"),
        ("chat", f"can you update my email to {addr} please, the old one is closed"),
        ("mailto", f'<a href="mailto:{addr}">{addr}</a>'),
        ("on_wrote", f"On {_date(rng)}, {name} <{addr}> wrote:"),
    ]
    style, snip = forms[i % len(forms)]
    return style, addr, snip, False


def phone_case(rng: random.Random, i: int, forms: list[tuple[str, Callable[[random.Random], str]]],
               contexts: list[str]) -> Value:
    """A phone of one country: a print form of its numbering plan inside a context in the country's language."""
    style, make = forms[i % len(forms)]
    number = make(rng)
    return style, number, contexts[i // len(forms) % len(contexts)].format(n=number), False


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """NPA-NXX-XXXX: NPA and NXX start 2-9 and are no N11; 555 left out (its 01xx lines are fictional)."""
    def three() -> str:
        while True:
            n = str(rng.randint(2, 9)) + digits(rng, 2)
            if n[1:] != "11" and n != "555":
                return n
    return three(), three(), digits(rng, 4)


NANP_FORMS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("parens", lambda r: "({}) {}-{}".format(*_nanp(r))),
    ("dashes", lambda r: "{}-{}-{}".format(*_nanp(r))),
    ("dots", lambda r: "{}.{}.{}".format(*_nanp(r))),
    ("plus1", lambda r: "+1 {} {} {}".format(*_nanp(r))),
    ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r))),
    ("e164", lambda r: "+1{}{}{}".format(*_nanp(r))),
    ("spoken", lambda r: spoken("".join(_nanp(r)), r)),
]
NANP_CONTEXTS = ["cell: {n}", "Call me back at {n} after 5pm", "Phone: {n}", "Mobile {n} (texts ok)",
                 "Tél. cellulaire : {n}", "mi celular es {n}", "best callback number {n}"]


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, NANP_FORMS, NANP_CONTEXTS)


def _uk_mobile(r: random.Random) -> str:
    return "07" + str(r.choice([4, 5, 7, 8, 9])) + digits(r, 8)


def _uk_geo(r: random.Random) -> str:
    """11 digits: a 3-digit code then 8 (020, 029), or a 4-digit code then 7 (0161, 0113, 0131, 0117)."""
    area = r.choice(["020 3", "020 8", "0161 4", "0113 2", "0131 3", "029 2", "0117 9"])
    return area + digits(r, 3 if area.startswith("02") else 2) + " " + digits(r, 4)


UK_FORMS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("mobile_5_6", lambda r: (lambda m: f"{m[:5]} {m[5:]}")(_uk_mobile(r))),
    ("mobile_compact", _uk_mobile),
    ("geographic", _uk_geo),
    ("plus44_mobile", lambda r: (lambda m: f"+44 {m[1:5]} {m[5:]}")(_uk_mobile(r))),
    ("plus44_zero", lambda r: (lambda m: f"+44 (0){m[1:5]} {m[5:]}")(_uk_mobile(r))),
    ("mobile_4_3_4", lambda r: (lambda m: f"{m[:4]} {m[4:7]} {m[7:]}")(_uk_mobile(r))),
    ("spoken", lambda r: spoken(_uk_mobile(r), r, oh=True)),
]
UK_CONTEXTS = ["Mobile: {n}", "ring me on {n} any time", "Tel: {n}", "my number is {n}", "Daytime phone {n}",
               "best to call {n}", "Contact number: {n}"]


def v_phone_uk(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, UK_FORMS, UK_CONTEXTS)


def _fr(r: random.Random) -> str:
    return "0" + str(r.choice([1, 2, 3, 4, 5, 6, 7, 7, 6])) + digits(r, 8)


FR_FORMS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("pairs", lambda r: group(_fr(r), 2, " ")),
    ("dots", lambda r: group(_fr(r), 2, ".")),
    ("compact", _fr),
    ("plus33", lambda r: (lambda n: f"+33 {n[1]} {group(n[2:], 2, ' ')}")(_fr(r))),
    ("plus33_zero", lambda r: (lambda n: f"+33 (0){n[1]} {group(n[2:], 2, ' ')}")(_fr(r))),
    ("dashes", lambda r: group(_fr(r), 2, "-")),
]
FR_CONTEXTS = ["Portable : {n}", "Tél. : {n}", "vous pouvez me joindre au {n}", "rappelez-moi au {n} svp",
               "Fixe : {n}", "mon numéro est le {n}"]


def v_phone_fr(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, FR_FORMS, FR_CONTEXTS)


def _de_mobile(r: random.Random) -> tuple[str, str]:
    prefix = r.choice(["0151", "0152", "0157", "0160", "0162", "0170", "0171", "0176", "0178"])
    return prefix, digits(r, 8 if prefix.startswith("015") else 7)


def _de_geo(r: random.Random) -> tuple[str, str]:
    area = r.choice(["030", "040", "089", "0221", "069", "0711", "0341"])
    return area, str(r.randint(2, 9)) + digits(r, 6 if len(area) == 3 else 5)


DE_FORMS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("mobile", lambda r: "{} {}".format(*_de_mobile(r))),
    ("geo_slash", lambda r: "{} / {}".format(*_de_geo(r))),
    ("geo_dash", lambda r: "{}-{}".format(*_de_geo(r))),
    ("plus49_mobile", lambda r: (lambda p, s: f"+49 {p[1:]} {s}")(*_de_mobile(r))),
    ("plus49_zero", lambda r: (lambda p, s: f"+49 (0){p[1:]} {s}")(*_de_geo(r))),
    ("din5008", lambda r: (lambda p, s: f"+49 {p[1:]} {s[:4]} {s[4:]}")(*_de_geo(r))),
    ("0049", lambda r: (lambda p, s: f"0049 {p[1:]} {s}")(*_de_mobile(r))),
]
DE_CONTEXTS = ["Tel.: {n}", "Handy: {n}", "Mobil {n}", "Rückruf bitte unter {n}", "erreichbar unter {n}",
               "Fax: {n}", "meine Nummer ist {n}"]


def v_phone_de(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, DE_FORMS, DE_CONTEXTS)


def _in_mobile(r: random.Random) -> str:
    return str(r.randint(6, 9)) + digits(r, 9)


IN_FORMS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("mobile_5_5", lambda r: (lambda m: f"{m[:5]} {m[5:]}")(_in_mobile(r))),
    ("plus91", lambda r: (lambda m: f"+91 {m[:5]} {m[5:]}")(_in_mobile(r))),
    ("plus91_dash", lambda r: f"+91-{_in_mobile(r)}"),
    ("zero_prefix", lambda r: "0" + _in_mobile(r)),
    ("landline", lambda r: r.choice(["022", "011", "080", "044", "033"]) + " " + str(r.randint(2, 6)) + digits(r, 3)
     + " " + digits(r, 4)),
    ("compact", _in_mobile),
]
IN_CONTEXTS = ["Mobile No.: {n}", "Contact: {n}", "please WhatsApp me on {n}", "मोबाइल नंबर: {n}", "call me on {n}",
               "Ph: {n}"]


def v_phone_in(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, IN_FORMS, IN_CONTEXTS)


def ssn_parts(rng: random.Random) -> tuple[str, str, str]:
    """Area 001-899 but 666, group 01-99, serial 0001-9999 (SSA)."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = ssn_parts(rng)
    forms = [
        ("dashed", f"{a}-{g}-{s}", "SSN: {v}"),
        ("spaced", f"{a} {g} {s}", "social security number {v}"),
        ("compact", f"{a}{g}{s}", "ssn={v} dob_verified=true"),
        ("spoken", spoken(a + g + s, rng), "my social is {v}"),
        ("idv", f"{a}-{g}-{s}", "Caller read out SSN {v}, matches file"),
        ("spanish", f"{a}-{g}-{s}", "número de Seguro Social: {v}"),
        ("crm", f"{a}-{g}-{s}", "Contact.SSN__c = '{v}'"),
    ]
    style, value, template = forms[i % len(forms)]
    return style, value, template.format(v=value), False


CARD_BRANDS: list[tuple[str, Callable[[random.Random], str], int]] = [
    ("visa", lambda r: "4", 16),
    ("mastercard", lambda r: str(r.randint(51, 55)), 16),
    ("mastercard_2", lambda r: str(r.randint(2221, 2720)), 16),
    ("amex", lambda r: r.choice(["34", "37"]), 15),
    ("discover", lambda r: r.choice(["6011", str(r.randint(644, 649)), "65"]), 16),
    ("jcb", lambda r: str(r.randint(3528, 3589)), 16),
    ("diners", lambda r: "36", 14),
    ("unionpay", lambda r: "62", 16),
]


def card_number(rng: random.Random, i: int) -> str:
    _brand, prefix, length = CARD_BRANDS[i % len(CARD_BRANDS)]
    body = prefix(rng)
    body += digits(rng, length - 1 - len(body))
    return body + luhn_digit(body)


def v_card(rng: random.Random, i: int) -> Value:
    number = card_number(rng, i)
    style = ["spaced", "dashed", "compact", "spoken", "reply_label", "refund_note"][i // 8 % 6]
    if style == "spoken":
        value = spoken(number, rng)
        return style, value, f"my card number is {value}", False
    value = {"spaced": group_card(number, " "), "dashed": group_card(number, "-")}.get(style, number)
    if style == "reply_label":
        return style, value, labelled(i, CARD, value), False
    if style == "refund_note":
        note = f"Refund could not go back to source; customer gave card {value} exp {rng.randint(1, 12):02d}/27"
        return style, value, note, False
    return style, value, f"card: {value}" if style == "compact" else f"Please charge {value} for the replacement", False


IBAN_STRUCTURES = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
                   "NL": "4a10n", "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "PT": "4n4n11n2n",
                   "IE": "4a6n8n", "SE": "3n16n1n", "DK": "4n9n1n", "FI": "3n11n", "NO": "4n6n1n"}


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_STRUCTURES)[i % len(IBAN_STRUCTURES)]
    body = bban(rng, IBAN_STRUCTURES[country])
    compact = country + iban_check(country, body) + body
    style = ["grouped", "compact", "reply_label", "refund"][i // 16 % 4]
    value = group(compact, 4, " ") if style in ("grouped", "reply_label") else compact
    if style == "reply_label":
        return style, value, labelled(i, IBAN, value), False
    if style == "refund":
        return style, value, f"Refund by bank transfer requested. IBAN {value}, BIC on file.", False
    return style, value, f"please send the refund to {value}" if style == "compact" else f"IBAN: {value}", False


# ---- values: tokens and keys ----------------------------------------------------------------------------------

def jwt_value(rng: random.Random) -> str:
    """An HS256 JWS (RFC 7515 compact form) whose claims a help-desk widget's identity verification sends."""
    header = b64url(b'{"alg":"HS256","typ":"JWT"}')
    claims = {"external_id": str(rng.randint(10 ** 6, 10 ** 7)), "name": rng.choice(FIRST), "scope": "user",
              "iat": rng.randint(1704067200, 1735689599), "jti": _uid(rng)}
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{header}.{payload}.{b64url(rng.randbytes(32))}"


def v_jwt(rng: random.Random, i: int) -> Value:
    token = jwt_value(rng)
    forms = [("bearer", f"Authorization: Bearer {token}"),
             ("widget", f"zE('messenger', 'loginUser', function(callback) {{ callback('{token}'); }});"),
             ("chat", f"the app shows this token when it fails: {token}"),
             ("query", f"https://help.brightlane.example/access/jwt?jwt={token}&return_to=%2Fhc")]
    style, snip = forms[i % len(forms)]
    return style, token, snip, False


COOKIES: list[tuple[str, Callable[[random.Random], str]]] = [
    ("_helpdesk_session", lambda r: pick(r, ALNUM, 140) + "%3D%3D--" + pick(r, HEX, 40)),
    ("sessionid", lambda r: pick(r, LOWNUM, 32)),
    ("PHPSESSID", lambda r: pick(r, LOWNUM, 26)),
    ("connect.sid", lambda r: "s%3A" + pick(r, URLSAFE, 32) + "." + pick(r, ALNUM, 43)),
    ("JSESSIONID", lambda r: pick(r, HEX.upper(), 32)),
    ("laravel_session", lambda r: "eyJpdiI6" + pick(r, ALNUM, 180) + "%3D%3D"),
]


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, make = COOKIES[i % len(COOKIES)]
    value = make(rng)
    forms = [f"Cookie: {name}={value}; locale=en",
             f"Set-Cookie: {name}={value}; Path=/; Secure; HttpOnly; SameSite=Lax",
             f"customer pasted the cookie from devtools: {name}={value}",
             f"document.cookie => \"theme=dark; {name}={value}\""]
    return name, value, forms[i // len(COOKIES) % len(forms)], False


def oauth_value(rng: random.Random, i: int) -> tuple[str, str]:
    kind = ["salesforce", "google_access", "google_refresh", "dropbox", "intercom", "zendesk"][i % 6]
    if kind == "salesforce":
        org = "00D" + pick(rng, ALNUM, 12)
        return kind, f"{org}!AQ{pick(rng, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 1)}AQ" + pick(rng, ALNUM + "._", 92)
    if kind == "google_access":
        return kind, "ya29.a0" + pick(rng, URLSAFE, 150)
    if kind == "google_refresh":
        return kind, "1//0" + pick(rng, URLSAFE, 99)
    if kind == "dropbox":
        return kind, "sl." + pick(rng, URLSAFE, 136)
    if kind == "intercom":
        raw = f"tok:{_uid(rng)}:1:0".encode()
        return kind, base64.b64encode(raw).decode().rstrip("=")
    return kind, pick(rng, HEX, 64)


def v_oauth_token(rng: random.Random, i: int) -> Value:
    kind, token = oauth_value(rng, i)
    forms = [f"Authorization: Bearer {token}",
             f'{{"access_token": "{token}", "token_type": "Bearer", "expires_in": 3599}}',
             f"instance_url=https://brightlane.my.salesforce.com\naccess_token={token}",
             f"refresh token for the CRM connector: {token}"]
    return kind, token, forms[i // 6 % len(forms)], False


def v_private_key(rng: random.Random, i: int) -> Value:
    if i % 2:
        key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode().strip()
        style = "pkcs8_ec"
    else:
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"support-bot@brightlane")
        body = base64.b64encode(blob).decode()
        pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(body, 70, "\n") + "\n-----END OPENSSH PRIVATE KEY-----"
        style = "openssh_ed25519"
    lead = ["DKIM signing key for mail.brightlane.example (selector s2024):\n",
            "customer attached their SFTP key for the order export:\n",
            "", "key used by the CRM sync job:\n"][i // 2 % 4]
    return style, pem, lead + pem, False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, BASE32, rng.choice([16, 26, 32]))
    style = ["otpauth", "setup_key", "labelled", "qr_decoded"][i % 4]
    if style == "otpauth":
        return style, seed, (f"otpauth://totp/Brightlane:{rng.choice(FIRST).lower()}?secret={seed}"
                             f"&issuer=Brightlane&algorithm=SHA1&digits=6&period=30"), False
    if style == "setup_key":
        value = group(seed.lower(), 4, " ")
        return style, value, f"Can't scan the QR code? Enter this setup key: {value}", False
    if style == "labelled":
        return style, seed, f"2FA secret (from the old phone's authenticator export): {seed}", False
    return style, seed, f"decoded QR: otpauth://totp/Helpdesk%20Admin?issuer=Zendesk&secret={seed}", False


def v_recovery_code(rng: random.Random, i: int) -> Value:
    style = ["github", "google", "microsoft"][i % 3]
    if style == "github":
        code = pick(rng, HEX, 5) + "-" + pick(rng, HEX, 5)
    elif style == "google":
        code = digits(rng, 4) + " " + digits(rng, 4)
    else:
        code = group(pick(rng, "ABCDEFGHJKLMNPQRSTUVWXYZ23456789", 25), 5, "-")
    context = [f"I lost my phone, here is one of my recovery codes: {code}",
               f"backup code {code} didn't work either",
               f"Recovery code: {code}",
               f"Customer read out recovery code {code} - escalate for 2FA reset"][i // 3 % 4]
    return style, code, context, False


def v_slack_token(rng: random.Random, i: int) -> Value:
    style = ["xoxb", "xoxp", "xapp"][i % 3]
    if style == "xoxb":
        token = f"xoxb-{rng.randint(1, 9)}{digits(rng, 11)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    elif style == "xoxp":
        token = f"xoxp-{rng.randint(1, 9)}{digits(rng, 11)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}"
    else:
        token = f"xapp-1-A0{pick(rng, UPPER + string.digits, 9)}-{digits(rng, 13)}-{pick(rng, HEX, 64)}"
    snip = [f"SLACK_BOT_TOKEN={token}", f"the support bot's token is {token}",
            f"curl -H 'Authorization: Bearer {token}' https://slack.com/api/conversations.history?channel=C0"
            f"{pick(rng, UPPER + string.digits, 9)}"][i // 3 % 3]
    return style, token, snip, False


def v_stripe_key(rng: random.Random, i: int) -> Value:
    prefix = ["sk_live_", "rk_live_", "sk_test_"][i % 3]
    key = prefix + pick(rng, ALNUM, rng.choice([24, 99]))
    snip = [f"STRIPE_SECRET_KEY={key}", f"stripe refunds create --charge ch_3{pick(rng, ALNUM, 23)} --api-key {key}",
            f"Stripe key (restricted, refunds only): {key}", f"Stripe::API.key = '{key}'"][i // 3 % 4]
    return prefix.rstrip("_"), key, snip, False


def v_twilio_token(rng: random.Random, i: int) -> Value:
    sid = "AC" + pick(rng, HEX, 32)
    token = pick(rng, HEX, 32)
    snip = [f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={token}",
            f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json -u {sid}:{token}",
            f"Account SID {sid}\nAuth Token {token}",
            f"client = Client(\"{sid}\", \"{token}\")"][i % 4]
    return ["env", "curl", "console", "sdk"][i % 4], token, snip, False


def v_sendgrid_key(rng: random.Random, i: int) -> Value:
    key = f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}"
    snip = [f"SENDGRID_API_KEY={key}", f"Authorization: Bearer {key}",
            f"the notification mails stopped, we rotated the key to {key}"][i % 3]
    return ["env", "header", "chat"][i % 3], key, snip, False


def v_hubspot_token(rng: random.Random, i: int) -> Value:
    token = f"pat-{rng.choice(['na1', 'eu1', 'na2'])}-{_uid(rng)}"
    snip = [f"HUBSPOT_ACCESS_TOKEN={token}", f"Authorization: Bearer {token}",
            f"Private app \"Support sync\" access token: {token}"][i % 3]
    return ["env", "header", "labelled"][i % 3], token, snip, False


def v_shopify_token(rng: random.Random, i: int) -> Value:
    token = rng.choice(["shpat_", "shpca_", "shppa_"]) + pick(rng, HEX, 32)
    snip = [f"X-Shopify-Access-Token: {token}", f"SHOPIFY_ADMIN_TOKEN={token}",
            f"the store's admin API token is {token}, orders app can't see refunds"][i % 3]
    return ["header", "env", "chat"][i % 3], token, snip, False


def v_basic_auth(rng: random.Random, i: int) -> Value:
    cred = base64.b64encode(f"{rng.choice(FIRST).lower()}:{password_value(rng)}".encode()).decode()
    snip = [f"Authorization: Basic {cred}", f"curl -H \"Authorization: Basic {cred}\" https://api.brightlane.example/v2/tickets",
            f"headers: {{\"authorization\": \"Basic {cred}\"}}"][i % 3]
    return ["header", "curl", "js"][i % 3], cred, snip, False


# ---- values: national ids (outside the target) ----------------------------------------------------------------

def es_dni(rng: random.Random) -> str:
    """Eight digits and the letter of their remainder mod 23 (Real Decreto 1553/2005)."""
    n = rng.randint(10 ** 7, 10 ** 8 - 1)
    return f"{n}{'TRWAGMYFPDXBNJZSQVHLCKE'[n % 23]}"


def br_cpf(rng: random.Random) -> str:
    """Nine digits and two mod 11 check digits (weights 10..2, then 11..2), printed 000.000.000-00."""
    d = [int(c) for c in digits(rng, 9)]
    for weight in (10, 11):
        d.append(sum(x * (weight - k) for k, x in enumerate(d)) * 10 % 11 % 10)
    s = "".join(map(str, d))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


def pl_pesel(rng: random.Random) -> str:
    """YYMMDD (month + 20 after 2000), serial, check (10 - weighted sum mod 10) with weights 1-3-7-9."""
    year, month, day = rng.randint(1950, 2009), rng.randint(1, 12), rng.randint(1, 28)
    head = f"{year % 100:02d}{month + (20 if year >= 2000 else 0):02d}{day:02d}{digits(rng, 4)}"
    total = sum(int(c) * w for c, w in zip(head, [1, 3, 7, 9] * 3, strict=False))
    return head + str((10 - total % 10) % 10)


def nl_bsn(rng: random.Random) -> str:
    """Nine digits passing the 11-proof: 9*d1 + 8*d2 + ... + 2*d8 - d9 divisible by 11."""
    while True:
        head = str(rng.randint(1, 6)) + digits(rng, 7)
        check = sum(int(c) * (9 - k) for k, c in enumerate(head)) % 11
        if check < 10:
            return head + str(check)


_D = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
      [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
      [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
      [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
_P = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4]]
for _k in range(2, 8):
    _P.append([_P[1][x] for x in _P[_k - 1]])
_INV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def verhoeff_digit(num: str) -> str:
    """Verhoeff's check digit (dihedral group D5), as UIDAI's Aadhaar uses it."""
    c = 0
    for k, ch in enumerate(reversed(num)):
        c = _D[c][_P[(k + 1) % 8][int(ch)]]
    return str(_INV[c])


def in_aadhaar(rng: random.Random) -> str:
    head = str(rng.randint(2, 9)) + digits(rng, 10)
    return group(head + verhoeff_digit(head), 4, " ")


def fr_nir(rng: random.Random) -> str:
    """Sex, YY, MM, department, commune, order, then the key 97 - (13 digits mod 97) (INSEE)."""
    dept = rng.choice([d for d in range(1, 96) if d != 20])
    head = f"{rng.randint(1, 2)}{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{dept:02d}{rng.randint(1, 990):03d}" \
           f"{rng.randint(1, 999):03d}"
    key = 97 - int(head) % 97
    return f"{head[0]} {head[1:3]} {head[3:5]} {head[5:7]} {head[7:10]} {head[10:]} {key:02d}"


def fi_hetu(rng: random.Random) -> str:
    """DDMMYY, century sign, individual number 002-899, and the mod 31 control character (DVV)."""
    year = rng.randint(1950, 2010)
    birth = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{year % 100:02d}"
    serial = f"{rng.randint(2, 899):03d}"
    return birth + ("-" if year < 2000 else "A") + serial + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(birth + serial) % 31]


def ca_sin(rng: random.Random) -> str:
    """Nine digits, first 1-7, the last the Luhn digit (Employment and Social Development Canada)."""
    head = str(rng.randint(1, 7)) + digits(rng, 7)
    n = head + luhn_digit(head)
    return f"{n[:3]} {n[3:6]} {n[6:]}"


def se_personnummer(rng: random.Random) -> str:
    """YYMMDD-NNNC: C the Luhn digit of the nine digits before it (Skatteverket)."""
    head = f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    return f"{head[:6]}-{head[6:]}{luhn_digit(head)}"


NATIONAL_IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "es_dni": (es_dni, ["DNI: {v}", "mi DNI es el {v}", "Documento (DNI) {v} verificado"]),
    "br_cpf": (br_cpf, ["CPF: {v}", "meu CPF é {v}", "CPF do titular {v}"]),
    "pl_pesel": (pl_pesel, ["PESEL: {v}", "mój numer PESEL to {v}", "PESEL klienta {v}"]),
    "nl_bsn": (nl_bsn, ["BSN: {v}", "mijn burgerservicenummer is {v}", "BSN klant {v}"]),
    "in_aadhaar": (in_aadhaar, ["Aadhaar No.: {v}", "my Aadhaar number is {v}", "आधार संख्या {v}"]),
    "fr_nir": (fr_nir, ["N° de sécurité sociale : {v}", "mon numéro de sécu est le {v}", "NIR {v}"]),
    "fi_hetu": (fi_hetu, ["Henkilötunnus: {v}", "hetu {v}", "asiakkaan henkilötunnus on {v}"]),
    "ca_sin": (ca_sin, ["SIN: {v}", "my social insurance number is {v}", "NAS : {v}"]),
    "se_personnummer": (se_personnummer, ["Personnummer: {v}", "mitt personnummer är {v}", "pnr {v}"]),
}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    make, contexts = NATIONAL_IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        context = contexts[i % len(contexts)]
        return f"context{i % len(contexts)}", value, "Identity check: " + context.format(v=value), False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "session_cookie": v_session_cookie, "oauth_token": v_oauth_token, "private_key": v_private_key,
    "totp_seed": v_totp_seed, "recovery_code": v_recovery_code, "slack_token": v_slack_token,
    "stripe_key": v_stripe_key, "twilio_auth_token": v_twilio_token, "sendgrid_key": v_sendgrid_key,
    "hubspot_token": v_hubspot_token, "shopify_token": v_shopify_token, "basic_auth": v_basic_auth,
    **{kind: national_id(kind) for kind in NATIONAL_IDS},
}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists."""
    _style, secret, snip, raw_only = value
    if i % 3 == 0 and not raw_only:
        name = list(JSON_CARRIERS)[i // 3 % len(JSON_CARRIERS)]
        return name, JSON_CARRIERS[name](rng, snip, secret), True
    name = list(TEXT_CARRIERS)[i % len(TEXT_CARRIERS)]
    return name, TEXT_CARRIERS[name](rng, snip, secret), False


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
    """A 16-digit number of a card IIN whose last digit is anything but its Luhn digit."""
    body = rng.choice(["4", "51", "52", "55", "6011"])
    body += digits(rng, 15 - len(body))
    return body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)


def _s10(rng: random.Random) -> str:
    """A UPU S10 item id (Royal Mail, La Poste): service letters, 8 digits, the weighted mod 11 digit, country."""
    serial = digits(rng, 8)
    check = 11 - sum(int(c) * w for c, w in zip(serial, [8, 6, 4, 2, 3, 5, 9, 7], strict=True)) % 11
    check = {10: 0, 11: 5}.get(check, check)
    return f"{rng.choice(['RR', 'LX', 'CP', 'EE'])}{serial}{check}{rng.choice(['GB', 'FR', 'DE'])}"


def _ean13(rng: random.Random) -> str:
    head = rng.choice(["400", "300", "500", "890"]) + digits(rng, 9)
    total = sum(int(c) * (3 if k % 2 else 1) for k, c in enumerate(head))
    return head + str((10 - total % 10) % 10)


def _n_ticket(r: random.Random) -> str:
    return r.choice([f"Ticket #{r.randint(100000, 9999999)} was merged into #{r.randint(100000, 9999999)}",
                     f"Freshdesk ticket #{r.randint(1000, 99999)} reopened by customer reply",
                     f"Help Scout conversation {r.randint(10 ** 9, 10 ** 10)} assigned to Tier 2",
                     f"Intercom conversation {r.randint(10 ** 14, 10 ** 15)} snoozed until Monday",
                     f"Case {r.randint(1, 99999):08d} escalated, see CAS-{r.randint(10000, 99999)}-"
                     f"{pick(r, 'BCDFGHJKLMNPQRSTVWXZ', 6)}"])


def _n_salesforce(r: random.Random) -> str:
    prefix = r.choice(["001", "003", "005", "00Q", "500", "006"])
    return r.choice([f"Record Id: {_sfid(r, prefix)}", f"/lightning/r/Case/{_sfid(r, '500')}/view",
                     f"WhoId = '{_sfid(r, '003')[:15]}' AND OwnerId = '{_sfid(r, '005')}'"])


def _n_stripe(r: random.Random) -> str:
    prefix = r.choice(["pi_3", "ch_3", "re_3", "cus_", "in_1", "evt_3", "acct_1", "txn_3", "pm_1"])
    rest = pick(r, ALNUM, 14 if prefix == "cus_" else 23)
    return r.choice([f"Payment {prefix}{rest} refunded in full", f"object id {prefix}{rest}",
                     f"see https://dashboard.stripe.com/payments/{prefix}{rest}"])


def _n_slack(r: random.Random) -> str:
    cid, ts = "C0" + pick(r, UPPER + string.digits, 9), f"{r.randint(1704067200, 1735689599)}.{digits(r, 6)}"
    return r.choice([f'{{"channel": "{cid}", "thread_ts": "{ts}", "user": "U0{pick(r, UPPER + string.digits, 9)}"}}',
                     f"https://brightlane.slack.com/archives/{cid}/p{ts.replace('.', '')}",
                     f"team T0{pick(r, UPPER + string.digits, 8)} app A0{pick(r, UPPER + string.digits, 9)}"])


def _n_mail_header(r: random.Random) -> str:
    return r.choice([f"Message-ID: <CA+{pick(r, URLSAFE, 40)}@mail.gmail.com>",
                     f"In-Reply-To: {_msgid(r)}\nReferences: {_msgid(r)} {_msgid(r)}",
                     f"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=brightlane.example; s=s2024;\n"
                     f" bh={base64.b64encode(r.randbytes(32)).decode()};\n h=from:to:subject:date:message-id",
                     f"X-Zendesk-From-Account-Id: {pick(r, HEX, 7)}\nX-Zendesk-Email-Id: {pick(r, ALNUM, 26)}"])


def _n_selector(r: random.Random) -> str:
    return r.choice([f"#ticket-comment-{r.randint(10 ** 6, 10 ** 7)} > div.zd-comment p:nth-child({r.randint(1, 9)})",
                     f"//div[@data-test-id='omnicomposer-rich-text-ckeditor']/p[{r.randint(1, 5)}]",
                     f"button[data-garden-id='buttons.button'][aria-label='Submit as {r.choice(['Open', 'Solved'])}']",
                     f"document.querySelector('#ember{r.randint(100, 9999)}')"])


def _n_coords(r: random.Random) -> str:
    return r.choice([f"click(x={r.randint(0, 1920)}, y={r.randint(0, 1080)})",
                     f"viewport {r.choice(['1440x900', '1920x1080', '390x844'])}",
                     f"bbox [{r.randint(0, 99)}, {r.randint(0, 999)}, {r.randint(100, 1400)}, {r.randint(20, 99)}]",
                     f"widget offset {{\"horizontal\": {r.randint(0, 80)}px, \"vertical\": {r.randint(0, 120)}px}}"])


def _n_timestamp(r: random.Random) -> str:
    return r.choice([f"created_at: {_stamp(r)}", f"last_seen_at={r.randint(1704067200000, 1735689599000)}",
                     f"[{r.randint(10, 28)}/{r.randint(10, 12)}/2024, {r.randint(10, 23)}:{r.randint(10, 59)}:07]",
                     f"Date: {_date(r)}", f"SLA: first reply due in {r.randint(10, 23)}:{r.randint(10, 59)}:00"])


def _n_request_id(r: random.Random) -> str:
    return r.choice([f"X-Request-Id: {_uid(r)}", f"x-amzn-RequestId: {_uid(r)}",
                     f"cf-ray: {pick(r, HEX, 16)}-{r.choice(['FRA', 'LHR', 'IAD', 'BOM'])}",
                     f"{{\"type\": \"error.list\", \"request_id\": \"{pick(r, LOWNUM, 20)}\"}}"])


def _n_cache(r: random.Random) -> str:
    return r.choice([f"/assets/application-{pick(r, HEX, 64)}.css", f"static/js/main.{pick(r, HEX, 8)}.chunk.js",
                     f"widget.js?v={r.randint(1704067200, 1735689599)}",
                     f"styles.css?ver={r.randint(5, 6)}.{r.randint(0, 9)}.{r.randint(0, 9)}",
                     f"logo.{pick(r, HEX, 20)}.svg"])


def _n_csrf_name(r: random.Random) -> str:
    name = r.choice(["authenticity_token", "csrfmiddlewaretoken", "_token", "__RequestVerificationToken", "csrf_token"])
    return r.choice([f'<input type="hidden" name="{name}" value="">',
                     f"422: the {name} field is missing from the form post",
                     f"header X-CSRF-Token is required when {name} is absent"])


def _n_placeholder(r: random.Random) -> str:
    return r.choice(["Password: ********", "{{ticket.requester.email}}", "Email: you@example.com",
                     "api_key: <your API key>", "STRIPE_WEBHOOK_SECRET=whsec_...", "token: [REDACTED]",
                     "Hi {{ticket.requester.first_name}}, your password reset link: {{dc.reset_link}}",
                     "Card number: XXXX XXXX XXXX XXXX", "SSN: ___-__-____", "phone: +1 (___) ___-____"])


def _n_masked(r: random.Random) -> str:
    last = digits(r, 4)
    return r.choice([f"Visa •••• {last}", f"card **** **** **** {last}", f"SSN on file: XXX-XX-{last}",
                     f"{r.choice(FIRST)[0].lower()}***@gmail.com", f"+44 7*** ***{last[:3]}",
                     f"IBAN DE** **** **** **** **{last[:2]} {last[2:]}", f"mobile ending {last}"])


def _n_version(r: random.Random) -> str:
    return r.choice([f"Zendesk Web Widget {r.randint(1, 3)}.{r.randint(0, 20)}.{r.randint(0, 30)}",
                     f"iOS {r.randint(15, 17)}.{r.randint(0, 6)}.{r.randint(0, 2)} (21F{r.randint(10, 99)})",
                     f"Android 14; SM-S918B Build/UP1A.{r.randint(230000, 240000)}.{r.randint(1, 99):03d}",
                     f"Mozilla/5.0 Chrome/{r.randint(120, 127)}.0.{r.randint(6000, 6500)}.{r.randint(10, 200)}",
                     f"app_version=4.{r.randint(0, 30)}.{r.randint(0, 9)}+build.{r.randint(1000, 9999)}"])


def _n_service_number(r: random.Random) -> str:
    return r.choice([f"Call Brightlane Billing toll-free at 1-800-{r.randint(200, 999)}-{digits(r, 4)} (Mon-Fri)",
                     f"UK customers: freephone 0800 {r.randint(100, 999)} {digits(r, 4)}",
                     f"Service client : 0 800 {digits(r, 2)} {digits(r, 2)} {digits(r, 2)} (service & appel gratuits)",
                     f"Kundenservice kostenlos unter 0800 {digits(r, 3)} {digits(r, 4)}",
                     f"Customer care toll free 1800-{r.randint(100, 999)}-{digits(r, 4)}",
                     f"press {r.randint(1, 9)} for billing, extension {r.randint(100, 9999)}"])


def _n_luhn_invalid(r: random.Random) -> str:
    number = _luhn_bad(r)
    return r.choice([f"Claim reference {number}", f"Reference: {group(number, 4, ' ')}",
                     f"loyalty member no. {group(number, 4, '-')}"])


def _n_order(r: random.Random) -> str:
    return r.choice([f"Order #{r.randint(100, 999)}-{digits(r, 7)}-{digits(r, 7)}",
                     f"Shopify order #BL{r.randint(1000, 99999)}",
                     f"PO-2024-{r.randint(1, 99999):05d}", f"Invoice INV-{r.randint(1, 999999):06d}",
                     f"RMA {r.randint(10 ** 7, 10 ** 8)} approved"])


def _n_tracking(r: random.Random) -> str:
    return r.choice([f"UPS 1Z{pick(r, UPPER + string.digits, 6)}{r.choice(['01', '02', '03'])}{digits(r, 8)}",
                     f"Royal Mail tracking {_s10(r)}",
                     f"USPS 9400 {' '.join(digits(r, 4) for _ in range(4))} {digits(r, 2)}",
                     f"DHL Express waybill {digits(r, 10)}", f"FedEx tracking number {digits(r, 12)}"])


def _n_product(r: random.Random) -> str:
    return r.choice([f"EAN {_ean13(r)}", f"SKU BL-{r.choice(['TSH', 'MUG', 'BAG'])}-{r.choice(['RED', 'NVY'])}-"
                     f"{r.choice(['S', 'M', 'L'])}", f"ASIN B0{pick(r, UPPER + string.digits, 8)}",
                     f"model {pick(r, UPPER, 2)}-{r.randint(100, 9999)}"])


def _n_amount(r: random.Random) -> str:
    return r.choice([f"Refund of €{r.randint(5, 999)},{digits(r, 2)} issued",
                     f"amount_refunded: {r.randint(100, 99999)}",
                     f"${r.randint(1, 9)},{digits(r, 3)}.{digits(r, 2)} credited",
                     f"₹ {r.randint(1, 99)},{digits(r, 3)}",
                     f"£{r.randint(1, 200)}.{digits(r, 2)} goodwill gesture"])


def _n_aws_example(r: random.Random) -> str:
    return r.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                     "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                     "The docs' example: AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"])


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "ticket_ids": _n_ticket, "salesforce_ids": _n_salesforce, "stripe_object_ids": _n_stripe,
    "slack_ids": _n_slack, "mail_headers": _n_mail_header, "selectors": _n_selector, "coordinates": _n_coords,
    "timestamps": _n_timestamp, "request_ids": _n_request_id, "cache_busting": _n_cache,
    "csrf_field_names": _n_csrf_name, "placeholders": _n_placeholder, "masked": _n_masked,
    "versions": _n_version, "service_numbers": _n_service_number, "luhn_invalid": _n_luhn_invalid,
    "order_numbers": _n_order, "tracking_numbers": _n_tracking, "product_codes": _n_product,
    "amounts": _n_amount, "aws_example_keys": _n_aws_example,
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), some inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                name = list(JSON_CARRIERS)[i % len(JSON_CARRIERS)]
                text = JSON_CARRIERS[name](rng, text, "")
            yield sort, text
