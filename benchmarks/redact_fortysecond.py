"""The forty-second blind redaction corpus: retail, e-commerce and point of sale, what an agent that runs an online
shop or a chain of stores reads and writes. Written from the formats' public specifications by someone who read
neither the detection rules nor the other corpora.

Carriers (the `form` head): Shopify `orders/create` webhooks, WooCommerce REST orders, BigCommerce v2/v3 order
responses, refund exports, fraud review queue items, Amazon SP-API notifications, Shopify theme `settings_data.json`
and an agent's tool results (those eight JSON, about a third of the cases, `is_json`); Magento `system.log` lines,
payment gateway logs (Adyen, Braintree, Square, PayPal, Klarna, Mollie), POS terminal logs, receipt printer jobs,
loyalty and order exports (CSV, RFC 4180 quoting), warehouse and returns emails, abandoned-cart and review-request
messages, storefront `.env` files, customer chats about deliveries and refunds, helpdesk tickets, store-ops Slack
posts, eBay Trading API member messages (XML, CDATA) and the agent's replies to users in 28 languages, each value's
label in the user's language.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/644-649/65, JCB 3528-3589, Diners 36/300-305, UnionPay 62, Maestro 5018/5020/5038/6304/6759, Mir
2200-2204) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN registry's BBAN structures (MOD 97-10); SSNs,
the SSA's rules (area not 000/666/9xx, group not 00, serial not 0000); phones, the national numbering plans (NANP,
Ofcom with its drama ranges left out, ARCEP, BNetzA, TRAI/DoT) with context words in each country's language;
AWS keys, IAM's documented AKIA/ASIA ids and 40-character secrets; Slack, Discord, Teams, Power Automate, Google
Chat, Zapier, Make, IFTTT and Mattermost webhook URLs as their docs print them (the secret is the token-bearing
segment or query value only); Stripe `whsec_` signing secrets (dashboard and `stripe listen` forms) and
`sk_live_`/`rk_live_`/`sk_test_` keys; Shopify `shpat_`/`shpca_`/`shppa_`/`shpss_` tokens (32 hex); WooCommerce
REST `ck_`/`cs_` keys (40 hex); Square `EAAA` access tokens, `sq0csp-` application secrets and legacy `sq0atp-`
tokens; Braintree `access_token$production$...` tokens and private keys; Mollie `live_`/`test_` keys and
`access_` organisation tokens; Login with Amazon (SP-API) `Atzr|`/`Atza|` tokens and `amzn1.oa2-cs.v1.` client
secrets; SendGrid `SG.` keys, Mailchimp `-usNN` keys and Postmark server tokens; PayPal `A21AA` and eBay `v^1.1#`
OAuth tokens, HTTP Basic (RFC 7617) and Bearer (RFC 6750); JWT (RFC 7519/7515, Shopify session token claims);
session cookies (PHP, WordPress/WooCommerce, Express, Rails, Magento, Shopify admin) in `Cookie`, `Set-Cookie`
(RFC 6265) and Netscape jar lines; TOTP seeds (RFC 6238, base32 of RFC 4648, `otpauth://` URIs); private keys,
PEM PKCS#8/SEC1 (RFC 5208/5915) and OpenSSH `openssh-key-v1`; national ids (outside the target): French NIR
(97 - n mod 97 key), Spanish DNI/NIE (mod 23 letter), Brazilian CPF (two mod 11 digits), Polish PESEL (weights
1-3-7-9), Swedish personnummer (Luhn), Finnish henkilötunnus (mod 31 character), Dutch BSN (11-proof).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password or key, a cookie's value, a header's credential, a PEM key's base64 body without its armour lines).
Providers' published test card numbers are valid cards by format, so the corpus holds them neither as values nor
as near misses. Near misses are what a shop's systems hold that is neither secret nor personal: element ids, CSS
selectors, XPath, store coordinates, image sizes, timestamps, request ids, cache-busting hashes, CSRF field names
with no value, placeholders (`********`, `you@example.com`, the Slack docs' `T00000000/B00000000/XXXX` URL),
masked values, versions, businesses' published toll-free service lines (they name a business, not a person),
Luhn-invalid numbers, order numbers, carrier tracking numbers (UPS, USPS, Royal Mail S10 with its check digit),
GTINs with their GS1 digit, amounts, payment references (Adyen pspReference, PayPal transaction ids, Stripe
`pi_`/`ch_` object ids: they name a payment, open nothing), file and content hashes, the AWS docs' EXAMPLE keys and
public promotion codes printed in adverts.
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
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    luhn_ok,
    openssh_ed25519_blob,
    pick,
)

SEED = 42
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"fr_nir", "es_dni", "br_cpf", "pl_pesel", "se_pnr", "fi_hetu", "nl_bsn"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
UPNUM = string.ascii_uppercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
SLOT = "@@SNIP@@"
"""Where a carrier's frame takes the snippet; `carry` fills it, escaped for the carrier's syntax."""


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

# ---- languages: the user's language gives the labels and the agent's reply -----------------------------------

LANGS: dict[str, tuple[str, str, str, str, str, str]] = {
    # lang: (password, API key, card number, IBAN, email, agent's reply frame)
    "en": ("Password", "API key", "Card number", "IBAN", "Email", "Here are the details you asked for: {v}"),
    "de": ("Passwort", "API-Schlüssel", "Kartennummer", "IBAN", "E-Mail", "Hier sind die gewünschten Angaben: {v}"),
    "fr": ("Mot de passe", "Clé API", "Numéro de carte", "IBAN", "Courriel",
           "Voici les informations demandées : {v}"),
    "es": ("Contraseña", "Clave de API", "Número de tarjeta", "IBAN", "Correo electrónico",
           "Estos son los datos que pidió: {v}"),
    "it": ("Password", "Chiave API", "Numero della carta", "IBAN", "E-mail", "Ecco i dati richiesti: {v}"),
    "pt": ("Senha", "Chave de API", "Número do cartão", "IBAN", "E-mail", "Seguem os dados solicitados: {v}"),
    "nl": ("Wachtwoord", "API-sleutel", "Kaartnummer", "IBAN", "E-mailadres", "Hier zijn de gevraagde gegevens: {v}"),
    "pl": ("Hasło", "Klucz API", "Numer karty", "IBAN", "Adres e-mail", "Oto dane, o które Pan prosił: {v}"),
    "sv": ("Lösenord", "API-nyckel", "Kortnummer", "IBAN", "E-post", "Här är uppgifterna du bad om: {v}"),
    "fi": ("Salasana", "API-avain", "Kortin numero", "IBAN", "Sähköposti", "Tässä pyytämäsi tiedot: {v}"),
    "da": ("Adgangskode", "API-nøgle", "Kortnummer", "IBAN", "E-mail", "Her er de oplysninger, du bad om: {v}"),
    "no": ("Passord", "API-nøkkel", "Kortnummer", "IBAN", "E-post", "Her er opplysningene du ba om: {v}"),
    "cs": ("Heslo", "API klíč", "Číslo karty", "IBAN", "E-mail", "Zde jsou požadované údaje: {v}"),
    "hu": ("Jelszó", "API-kulcs", "Kártyaszám", "IBAN", "E-mail-cím", "Íme a kért adatok: {v}"),
    "ro": ("Parolă", "Cheie API", "Numărul cardului", "IBAN", "E-mail", "Iată datele solicitate: {v}"),
    "tr": ("Şifre", "API anahtarı", "Kart numarası", "IBAN", "E-posta", "İstediğiniz bilgiler şunlar: {v}"),
    "ru": ("Пароль", "API-ключ", "Номер карты", "IBAN", "Эл. почта", "Вот запрошенные данные: {v}"),
    "uk": ("Пароль", "Ключ API", "Номер картки", "IBAN", "Електронна пошта", "Ось дані, які ви просили: {v}"),
    "el": ("Κωδικός πρόσβασης", "Κλειδί API", "Αριθμός κάρτας", "IBAN", "Email",
           "Ορίστε τα στοιχεία που ζητήσατε: {v}"),
    "ar": ("كلمة المرور", "مفتاح API", "رقم البطاقة", "رقم الآيبان", "البريد الإلكتروني",
           "إليك البيانات التي طلبتها: {v}"),
    "he": ("סיסמה", "מפתח API", "מספר כרטיס", "IBAN", "אימייל", "הנה הפרטים שביקשת: {v}"),
    "hi": ("पासवर्ड", "API कुंजी", "कार्ड नंबर", "IBAN", "ईमेल", "आपके माँगे गए विवरण ये हैं: {v}"),
    "ja": ("パスワード", "APIキー", "カード番号", "IBAN", "メールアドレス", "ご依頼の情報は次のとおりです：{v}"),
    "ko": ("비밀번호", "API 키", "카드 번호", "IBAN", "이메일", "요청하신 정보입니다: {v}"),
    "zh": ("密码", "API 密钥", "卡号", "IBAN", "邮箱", "以下是您需要的信息：{v}"),
    "th": ("รหัสผ่าน", "คีย์ API", "หมายเลขบัตร", "IBAN", "อีเมล", "นี่คือข้อมูลที่คุณขอ: {v}"),
    "vi": ("Mật khẩu", "Khóa API", "Số thẻ", "IBAN", "Email", "Đây là thông tin bạn yêu cầu: {v}"),
    "id": ("Kata sandi", "Kunci API", "Nomor kartu", "IBAN", "Email", "Berikut data yang Anda minta: {v}"),
}
ALL_LANGS = list(LANGS)


def label(lang: str, field: int) -> str:
    """The user's-language label of `field` (0 password, 1 API key, 2 card, 3 IBAN, 4 email)."""
    return LANGS[lang][field]


# ---- carriers: each returns a frame holding SLOT once ---------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    return (f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}")


def _price(rng: random.Random) -> str:
    return f"{rng.randint(5, 480)}.{rng.choice(['00', '50', '90', '95', '99'])}"


def c_shopify_webhook(rng: random.Random, _lang: str) -> str:
    n = rng.randint(5_000_000_000_000, 5_999_999_999_999)
    return _dump({"id": n, "admin_graphql_api_id": f"gid://shopify/Order/{n}", "name": f"#{rng.randint(1001, 9999)}",
                  "created_at": _ts(rng) + "-04:00", "currency": rng.choice(["USD", "EUR", "GBP", "CAD"]),
                  "financial_status": "paid", "total_price": _price(rng), "note": SLOT,
                  "line_items": [{"sku": f"TS-{rng.choice(['BLK', 'WHT', 'NVY'])}-{rng.choice('SML')}",
                                  "quantity": rng.randint(1, 3)}]})


def c_woo_order(rng: random.Random, _lang: str) -> str:
    return _dump({"id": rng.randint(1000, 99999), "status": "processing", "currency": "EUR",
                  "date_created": _ts(rng), "total": _price(rng), "customer_note": SLOT,
                  "meta_data": [{"id": rng.randint(100, 9999), "key": "_wc_order_attribution_source_type",
                                 "value": "typein"}]})


def c_bigcommerce(rng: random.Random, _lang: str) -> str:
    return _dump({"data": {"id": rng.randint(100, 99999), "status_id": rng.choice([1, 9, 11]),
                           "date_created": "Tue, 07 May 2024 14:02:11 +0000", "staff_notes": SLOT,
                           "payment_method": "Credit Card"}, "meta": {}})


def c_refund_export(rng: random.Random, _lang: str) -> str:
    return _dump({"refund": {"id": rng.randint(10**11, 10**12), "order_id": rng.randint(10**11, 10**12),
                             "created_at": _ts(rng) + "Z", "note": SLOT, "restock": rng.random() < 0.5,
                             "transactions": [{"kind": "refund", "gateway": "shopify_payments",
                                               "amount": _price(rng), "status": "success"}]}})


def c_fraud_queue(rng: random.Random, _lang: str) -> str:
    return _dump({"review_id": _uid(rng), "risk_score": rng.randint(40, 99),
                  "signals": rng.sample(["billing_shipping_mismatch", "high_velocity", "proxy_ip", "new_account",
                                         "avs_no_match", "cvc_retry"], 3),
                  "evidence": SLOT, "decision": "pending", "queue": "manual-review-eu"})


def c_sp_api(rng: random.Random, _lang: str) -> str:
    order = f"{rng.randint(111, 114)}-{digits(rng, 7)}-{digits(rng, 7)}"
    return _dump({"NotificationVersion": "1.0", "NotificationType": "ORDER_CHANGE", "EventTime": _ts(rng) + "Z",
                  "Payload": {"OrderChangeNotification": {"AmazonOrderId": order,
                                                          "Summary": {"OrderStatus": "Unshipped",
                                                                      "BuyerNote": SLOT}}},
                  "NotificationMetadata": {"NotificationId": _uid(rng)}})


def c_theme_settings(rng: random.Random, _lang: str) -> str:
    return _dump({"current": {"colors_accent_1": "#121212", "sections": {"header": {
        "type": "header", "settings": {"sticky": True, "custom_liquid": SLOT}}}},
        "presets": {"Dawn": {"type_body_font": "assistant_n4"}}, "theme_version": f"15.{rng.randint(0, 2)}.0"})


def c_tool_result(rng: random.Random, _lang: str) -> str:
    tool = rng.choice(["shopify_admin_graphql", "magento_rest", "woocommerce_orders", "stripe_search",
                       "returns_portal", "pos_sync"])
    return _dump({"type": "tool_result", "call_id": _uid(rng), "name": tool, "is_error": False,
                  "content": [{"type": "text", "text": SLOT}]})


def c_magento_log(rng: random.Random, _lang: str) -> str:
    level = rng.choice(["main.INFO", "main.ERROR", "main.DEBUG", "main.WARNING"])
    return f"[{_ts(rng)}.{digits(rng, 6)}+00:00] {level}: {SLOT} [] []"


def c_gateway_log(rng: random.Random, _lang: str) -> str:
    gw = rng.choice(["adyen", "braintree", "square", "paypal", "klarna", "mollie"])
    return (f"{_ts(rng)}Z INFO  [{gw}-client] merchantAccount=StoreEU_ECOM attempt={rng.randint(1, 3)} "
            f"request body: {SLOT}")


def c_pos_terminal(rng: random.Random, _lang: str) -> str:
    return (f"{_ts(rng)} POS-{rng.randint(1, 240):03d} lane={rng.randint(1, 12)} DEBUG tender.capture "
            f"{SLOT}\n{_ts(rng)} POS-{rng.randint(1, 240):03d} INFO  drawer closed")


def c_receipt_printer(rng: random.Random, _lang: str) -> str:
    return (f"ESC @\nSTORE #{rng.randint(100, 999):04d}  HIGH ST\n{_ts(rng).replace('T', ' ')}\n"
            f"1 x SOCKS 3PK        {_price(rng)}\n{SLOT}\nTHANK YOU FOR SHOPPING\nGS V 1")


def c_loyalty_csv(rng: random.Random, _lang: str) -> str:
    return ("member_id,tier,points,last_visit,notes\n"
            f"LM{digits(rng, 8)},{rng.choice(['gold', 'silver', 'bronze'])},{rng.randint(0, 9000)},"
            f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d},{SLOT}\n")


def c_order_csv(rng: random.Random, _lang: str) -> str:
    return ("Name,Financial Status,Paid at,Subtotal,Notes,Tags\n"
            f"#{rng.randint(1001, 9999)},paid,{_ts(rng).replace('T', ' ')} +0100,{_price(rng)},{SLOT},"
            f"{rng.choice(['wholesale', 'vip', 'gift'])}\n")


def c_warehouse_email(rng: random.Random, _lang: str) -> str:
    return (f"Subject: Pick exception - order #{rng.randint(1001, 9999)}\nDate: Tue, 07 May 2024 09:14:02 +0100\n\n"
            f"Hi team,\n\nBin {rng.choice('ABCD')}-{rng.randint(1, 40):02d}-{rng.randint(1, 9)} was short. "
            f"Notes from the packer:\n{SLOT}\n\nWarehouse ops, dock {rng.randint(1, 8)}")


def c_returns_email(rng: random.Random, _lang: str) -> str:
    return (f"Subject: Return request RMA-{digits(rng, 6)}\n\nReason: {rng.choice(['too small', 'damaged', 'late'])}"
            f"\n\n{SLOT}\n\nYour prepaid return label is attached.")


def c_abandoned_cart(rng: random.Random, _lang: str) -> str:
    return (f"Subject: You left something in your cart\n\nYour cart ({rng.randint(1, 4)} items) is waiting. "
            f"Internal note from the flow editor:\n{SLOT}\n\nComplete your order")


def c_review_request(rng: random.Random, _lang: str) -> str:
    return (f"How did we do? Rate your order #{rng.randint(1001, 9999)} from 1 to 5.\n"
            f"--- merge fields rendered ---\n{SLOT}")


def c_env_file(rng: random.Random, _lang: str) -> str:
    return (f"# storefront .env (deployed {_ts(rng)})\nNODE_ENV=production\nSHOP_CURRENCY=EUR\n{SLOT}\n"
            f"LOG_LEVEL={rng.choice(['info', 'warn', 'debug'])}\n")


def c_customer_chat(rng: random.Random, _lang: str) -> str:
    t = f"{rng.randint(8, 21):02d}:{rng.randint(0, 59):02d}"
    return (f"[{t}] Agent: Happy to help with your delivery. What can I check?\n[{t}] Customer: {SLOT}\n"
            f"[{t}] Agent: Thanks, I've updated the order and started the refund.")


def c_agent_reply(_rng: random.Random, lang: str) -> str:
    return LANGS[lang][5].replace("{v}", SLOT)


def c_helpdesk(rng: random.Random, _lang: str) -> str:
    return (f"Ticket #{rng.randint(10000, 99999)} | channel: {rng.choice(['email', 'chat', 'instagram'])} | "
            f"status: open | tags: refund, delivery\n---\n{SLOT}")


def c_slack_ops(rng: random.Random, _lang: str) -> str:
    return f"#store-ops  StoreBot  APP  {rng.randint(8, 20)}:{rng.randint(10, 59)}\n:rotating_light: {SLOT}"


def c_ebay_xml(rng: random.Random, _lang: str) -> str:
    return ('<?xml version="1.0" encoding="utf-8"?>\n<AddMemberMessageAAQToPartnerRequest '
            'xmlns="urn:ebay:apis:eBLBaseComponents">\n'
            f"  <ItemID>{digits(rng, 12)}</ItemID>\n  <MemberMessage>\n    <Subject>Question about your order"
            f"</Subject>\n    <Body><![CDATA[{SLOT}]]></Body>\n  </MemberMessage>\n"
            "</AddMemberMessageAAQToPartnerRequest>")


Carrier = Callable[[random.Random, str], str]
CARRIERS: list[tuple[str, str, Carrier]] = [
    ("shopify_webhook", "json", c_shopify_webhook), ("magento_log", "text", c_magento_log),
    ("gateway_log", "text", c_gateway_log), ("woo_order", "json", c_woo_order),
    ("pos_terminal", "text", c_pos_terminal), ("receipt", "text", c_receipt_printer),
    ("bigcommerce", "json", c_bigcommerce), ("loyalty_csv", "csv", c_loyalty_csv),
    ("order_csv", "csv", c_order_csv), ("refund_export", "json", c_refund_export),
    ("warehouse_email", "text", c_warehouse_email), ("returns_email", "text", c_returns_email),
    ("fraud_queue", "json", c_fraud_queue), ("abandoned_cart", "text", c_abandoned_cart),
    ("review_request", "text", c_review_request), ("sp_api", "json", c_sp_api),
    ("env_file", "text", c_env_file), ("customer_chat", "text", c_customer_chat),
    ("theme_settings", "json", c_theme_settings), ("agent_reply", "text", c_agent_reply),
    ("helpdesk", "text", c_helpdesk), ("tool_result", "json", c_tool_result),
    ("slack_ops", "text", c_slack_ops), ("ebay_xml", "text", c_ebay_xml),
]
JSON_CARRIERS = [entry for entry in CARRIERS if entry[1] == "json"]


def fill(mode: str, frame: str, snip: str, raw: bool) -> str:
    """`frame` with SLOT replaced by `snip` in the carrier's syntax: JSON string content (unless raw), an RFC 4180
    quoted CSV field, or as is."""
    if mode == "json":
        return frame.replace(SLOT, snip if raw else _dump(snip)[1:-1])
    if mode == "csv":
        return frame.replace(SLOT, '"' + snip.replace('"', '""') + '"')
    return frame.replace(SLOT, snip)


# ---- values: passwords and cloud/webhook secrets --------------------------------------------------------------

PW_SYMBOLS = "!#$%&*+-=?@^_~"
WORDS = ["Sommer", "harbor", "Lluvia", "soleil", "Tavolo", "fjord", "Mango", "granit", "Vinter", "kiwi", "Zebra",
         "Kasse", "tienda", "Boutique", "lojinha", "sklep", "Regal", "checkout", "Paprika", "Marmor"]


def password_value(rng: random.Random) -> str:
    """A human password (word, digits, symbol) or a generated one (16-24 characters of a manager's alphabet);
    no quotes or backslashes, which the carriers would escape."""
    if rng.random() < 0.5:
        return rng.choice(WORDS) + rng.choice(PW_SYMBOLS) + digits(rng, rng.randint(2, 4)) + rng.choice(WORDS)
    return pick(rng, ALNUM + PW_SYMBOLS, rng.randint(16, 24))


def v_password(rng: random.Random, i: int, lang: str) -> Value:
    """Passwords a shop's systems and people write down, labelled in the user's language or by their config key."""
    pw = password_value(rng)
    forms = [("label", f"{label(lang, 0)}: {pw}"),
             ("label_new", f"{label(lang, 0)} (POS staff login, till {rng.randint(1, 12)}): {pw}"),
             ("env_db", f"DB_PASSWORD={pw}"), ("env_smtp", f"SMTP_PASSWORD={pw}"),
             ("wp_config", f"define( 'DB_PASSWORD', '{pw}' );"),
             ("wifi", f"Store Wi-Fi (StoreGuest-{rng.randint(1, 99)}) {label(lang, 0).lower()}: {pw}"),
             ("chat", f"my {label(lang, 0).lower()} is {pw} if you need to log in and check the order"),
             ("yaml", f"sftp:\n  host: edi.3pl-partner.net\n  user: shop_{rng.randint(10, 99)}\n  password: {pw}"),
             ("magento_cli", f"bin/magento admin:user:create --admin-user=ops --admin-password='{pw}'"),
             ("mysql_cli", f"mysql -u magento -p'{pw}' magento2")]
    style, snip = forms[i % len(forms)]
    return style, pw, snip, False


def aws_id(rng: random.Random) -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (temporary) and 16 upper-case letters and digits."""
    return rng.choice(["AKIA", "AKIA", "ASIA"]) + pick(rng, UPNUM, 16)


def v_aws_secret(rng: random.Random, i: int, lang: str) -> Value:
    """A 40-character secret access key labelled as the AWS tools write it or beside its key id (product image
    buckets, feeds exports)."""
    kid, sec = aws_id(rng), pick(rng, B64, 40)
    forms = [("credentials", f"[shop-media]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}"),
             ("env", f"AWS_ACCESS_KEY_ID={kid}\nAWS_SECRET_ACCESS_KEY={sec}"),
             ("export", f"export AWS_SECRET_ACCESS_KEY={sec}"),
             ("boto3", f'boto3.client("s3", aws_access_key_id="{kid}", aws_secret_access_key="{sec}")'),
             ("iam_csv", f"Access key ID,Secret access key\n{kid},{sec}"),
             ("pair", f"S3 for product images: {kid} / {sec}"),
             ("wp_offload", f"define( 'AS3CF_SETTINGS', serialize( array( 'provider' => 'aws', "
                            f"'access-key-id' => '{kid}', 'secret-access-key' => '{sec}' ) ) );"),
             ("json", f'"accessKeyId": "{kid}", "secretAccessKey": "{sec}"')]
    style, snip = forms[i % len(forms)]
    return style, sec, snip, False


def webhook_url(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(style, token, URL) for the providers' incoming webhooks as their docs print them."""
    n = i % 10
    if n in (0, 1):
        tok = pick(rng, ALNUM, 24)
        return "slack", tok, (f"https://hooks.slack.com/services/T{pick(rng, UPNUM, rng.randint(8, 10))}/"
                              f"B{pick(rng, UPNUM, rng.randint(8, 10))}/{tok}")
    if n == 2:
        tok = pick(rng, URLSAFE, 68)
        host = rng.choice(["discord.com", "discordapp.com"])
        return "discord", tok, f"https://{host}/api/webhooks/{digits(rng, 1)}{digits(rng, 18)}/{tok}"
    if n == 3:
        tok = pick(rng, HEX, 32)
        return "teams", tok, (f"https://{rng.choice(['retailco', 'shopgroup', 'contoso'])}.webhook.office.com/"
                              f"webhookb2/{_uid(rng)}@{_uid(rng)}/IncomingWebhook/{tok}/{_uid(rng)}")
    if n == 4:
        tok = pick(rng, URLSAFE, 43)
        return "power_automate", tok, (
            f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
            f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}")
    if n == 5:
        tok = pick(rng, URLSAFE, 43) + "%3D"
        return "google_chat", tok, (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages"
                                    f"?key=AIzaSy{pick(rng, URLSAFE, 33)}&token={tok}")
    if n == 6:
        tok = pick(rng, LOWNUM, 7)
        return "zapier", tok, f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{tok}/"
    if n == 7:
        tok = pick(rng, LOWNUM, 32)
        return "make", tok, f"https://hook.{rng.choice(['eu1', 'eu2', 'us1'])}.make.com/{tok}"
    if n == 8:
        tok = pick(rng, URLSAFE, 22)
        return "ifttt", tok, f"https://maker.ifttt.com/trigger/low_stock/with/key/{tok}"
    tok = pick(rng, LOWNUM, 26)
    return "mattermost", tok, f"https://chat.{rng.choice(['retailco', 'shopgroup'])}.io/hooks/{tok}"


def v_webhook(rng: random.Random, i: int, lang: str) -> Value:
    """An incoming webhook URL where the store's alerts go; the secret is its token part."""
    style, tok, url = webhook_url(rng, i)
    leads = ["SLACK_WEBHOOK_URL={u}", "curl -X POST -H 'Content-type: application/json' "
             "--data '{{\"text\":\"Low stock: SKU TS-BLK-M\"}}' {u}", "alerts.low_stock.url: {u}",
             "[order alerts]({u})", "Webhook: {u}", '"webhook_url": "{u}"']
    return style, tok, rng.choice(leads).format(u=url), False


def v_stripe_whsec(rng: random.Random, i: int, lang: str) -> Value:
    """Stripe webhook signing secrets: the dashboard's `whsec_` + 32 characters and `stripe listen`'s + 64 hex."""
    sec = "whsec_" + (pick(rng, ALNUM, 32) if i % 2 else pick(rng, HEX, 64))
    forms = [("env", f"STRIPE_WEBHOOK_SECRET={sec}"),
             ("cli", f"> Ready! You are using Stripe API Version [2024-04-10]. Your webhook signing secret is {sec} "
                     "(^C to quit)"),
             ("code", f"event = stripe.Webhook.construct_event(payload, sig_header, '{sec}')"),
             ("json", f'"stripe": {{"endpoint_secret": "{sec}"}}'),
             ("label", f"Signing secret: {sec}"),
             ("yaml", f"stripe:\n  webhook_secret: {sec}")]
    style, snip = forms[i % len(forms)]
    return style, sec, snip, False


def conn_password(rng: random.Random) -> str:
    """A password of RFC 3986's unreserved characters, so a URI carries it unescaped."""
    return pick(rng, ALNUM + "-._~", rng.randint(14, 28))


def v_connection_string(rng: random.Random, i: int, lang: str) -> Value:
    """A connection string of the shop's stores and queues; the secret is the password or key only."""
    pw = conn_password(rng)
    n = i % 10
    if n == 6:
        key = base64.b64encode(rng.randbytes(64)).decode()
        return "azure_storage", key, (f"DefaultEndpointsProtocol=https;AccountName=shopmedia{rng.randint(1, 99)};"
                                      f"AccountKey={key};EndpointSuffix=core.windows.net"), False
    if n == 7:
        key = base64.b64encode(rng.randbytes(32)).decode()
        return "service_bus", key, (f"Endpoint=sb://orders-{rng.randint(1, 9)}.servicebus.windows.net/;"
                                    f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key}"), False
    forms = [("postgres", f"DATABASE_URL=postgresql://shop_app:{pw}@db.internal:5432/storefront"),
             ("mysql", f"mysql://magento:{pw}@10.0.{rng.randint(0, 9)}.{rng.randint(2, 250)}:3306/magento2"),
             ("redis", f"REDIS_URL=rediss://default:{pw}@redis-{digits(rng, 5)}.c1.eu-west-1-1.ec2.cloud.redislabs"
                       f".com:{digits(rng, 5)}"),
             ("mongodb", f"mongodb+srv://orders:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/shop?"
                         "retryWrites=true&w=majority"),
             ("amqp", f"amqps://fulfilment:{pw}@rabbit.internal:5671/%2f"),
             ("adonet", f"Server=tcp:pos-{rng.randint(1, 9)}.database.windows.net,1433;Initial Catalog=pos;"
                        f"User ID=posadmin;Password={pw};Encrypt=True;"),
             ("jdbc", f"jdbc:mysql://db:3306/shop?user=shop&password={pw}&useSSL=true"),
             ("odbc", f"Driver={{ODBC Driver 18 for SQL Server}};Server=erp-sql;Database=ERP;Uid=sync;Pwd={pw};")]
    style, snip = forms[i % len(forms)]
    return style, pw, snip, False


KEY_VALUES: list[Callable[[random.Random], str]] = [
    lambda r: pick(r, HEX, 32), lambda r: pick(r, ALNUM, 40), lambda r: _uid(r),
    lambda r: base64.b64encode(r.randbytes(33)).decode(), lambda r: pick(r, UPNUM, 32)]
KEY_SERVICES = ["ShipStation", "Yotpo", "Klaviyo", "Algolia (admin)", "AfterShip", "Gorgias", "Judge.me",
                "Loop Returns", "Recharge", "Avalara"]


def v_labelled_key(rng: random.Random, i: int, lang: str) -> Value:
    """A service's API key with no prefix of its own, after a label in the user's language or a config key."""
    key = KEY_VALUES[i % len(KEY_VALUES)](rng)
    svc = rng.choice(KEY_SERVICES)
    forms = [("label", f"{label(lang, 1)}: {key}"), ("label_svc", f"{svc} {label(lang, 1)}: {key}"),
             ("header", f"X-Api-Key: {key}"), ("query", f"GET /v2/shipments?api_key={key}&page=2"),
             ("yaml", f"{svc.split()[0].lower()}:\n  api_key: {key}"), ("prose", f"the {svc} API key is {key}")]
    style, snip = forms[i % len(forms)]
    return style, key, snip, False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def disguise_base(rng: random.Random, i: int) -> tuple[str, str]:
    """(lead with its separator, secret) a disguise is applied to: provider tokens and a password."""
    n = i % 5
    if n == 0:
        return "X-Shopify-Access-Token: ", "shpat_" + pick(rng, HEX, 32)
    if n == 1:
        return "STRIPE_SECRET_KEY=", "sk_live_" + pick(rng, ALNUM, 24)
    if n == 2:
        return "aws_secret_access_key = ", pick(rng, B64, 40)
    if n == 3:
        return "STRIPE_WEBHOOK_SECRET=", "whsec_" + pick(rng, ALNUM, 32)
    return "admin password: ", password_value(rng)


def v_disguised(rng: random.Random, i: int, lang: str) -> Value:
    """A secret with a zero-width or soft-hyphen character inside, in full-width forms, %-encoded or written
    as JSON \\u escapes (raw: the escapes are the text)."""
    lead, sec = disguise_base(rng, i)
    how = (i // 5) % 4
    if how == 0:
        at = rng.randint(3, len(sec) - 3)
        out, style = sec[:at] + rng.choice(ZW) + sec[at:], "zero_width"
    elif how == 1:
        out, style = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in sec), "fullwidth"
    elif how == 2:
        out = "".join(f"%{ord(c):02X}" for c in sec) if i % 2 else quote(sec, safe="")
        style = "percent"
    else:
        out = "".join(f"\\u{ord(c):04x}" if rng.random() < 0.5 else c for c in sec)
        out, style = (out if "\\u" in out else "\\u%04x" % ord(sec[0]) + out[1:]), "u_escape"
    return style, out, lead + out, style == "u_escape"


# ---- values: personal data ------------------------------------------------------------------------------------

LOCALS = ["maria.lopez", "j.smith", "anil.kumar", "sofia", "lukas.meier", "chloe.martin", "ahmed.h", "yuki.tanaka",
          "olga", "priya.r", "tom_baker", "femke", "kasia.nowak", "elif", "mateus.silva", "noah88", "ingrid.dahl"]
MAIL_DOMAINS = ["gmail.com", "yahoo.com", "outlook.com", "hotmail.co.uk", "web.de", "gmx.de", "orange.fr",
                "free.fr", "libero.it", "wp.pl", "seznam.cz", "mail.ru", "naver.com", "qq.com", "icloud.com",
                "proton.me", "rediffmail.com", "t-online.de", "uol.com.br", "ziggo.nl"]
IDN_MAILS = ["josé.garcía@correo.es", "joão@provedor.com.br", "δοκιμή@πελάτης.gr", "用户@邮件.中国",
             "покупатель@почта.рф", "müller@bücher.de", "ユーザー@メール.jp", "ç.yılmaz@posta.com.tr"]


def email_value(rng: random.Random, i: int) -> str:
    """A customer's address (RFC 5322 addr-spec), some plus-addressed, some internationalised (RFC 6531)."""
    if i % 9 == 8:
        return rng.choice(IDN_MAILS)
    local = rng.choice(LOCALS) + (str(rng.randint(1, 99)) if rng.random() < 0.4 else "")
    if rng.random() < 0.2:
        local += "+" + rng.choice(["orders", "shop", "returns"])
    return f"{local}@{rng.choice(MAIL_DOMAINS)}"


def v_email(rng: random.Random, i: int, lang: str) -> Value:
    """A customer's email in orders, chats and messages, labelled in the user's language or as a field."""
    mail = email_value(rng, i)
    name = rng.choice(["Maria Lopez", "Lukas Meier", "Priya R.", "Tom Baker", "Yuki Tanaka"])
    forms = [("label", f"{label(lang, 4)}: {mail}"), ("to", f"To: {name} <{mail}>"),
             ("field", f"customer_email={mail}"), ("json", f'"contact_email": "{mail}"'),
             ("chat", f"please send the return label to {mail}"), ("mailto", f"<a href=\"mailto:{mail}\">{name}</a>"),
             ("reply_to", f"Reply-To: {mail}"), ("change", f"{label(lang, 4)} → {mail}")]
    style, snip = forms[i % len(forms)]
    return style, mail, snip, False


PhoneForm = tuple[str, Callable[[random.Random], str]]
PHONE_CTX = {
    "us": ["phone", "call me at", "cell", "mobile", "text me at", "delivery contact", "teléfono", "best number"],
    "uk": ["phone", "mobile", "mob", "tel", "ring me on", "contact number", "landline"],
    "fr": ["téléphone", "tél.", "portable", "mobile", "joignable au", "numéro", "appelez-moi au"],
    "de": ["Telefon", "Tel.", "Handy", "Mobil", "Rufnummer", "erreichbar unter", "Festnetz"],
    "in": ["phone", "mobile", "mob.", "contact no.", "फ़ोन", "मोबाइल", "WhatsApp", "call on"],
}
PHONE_TEMPLATES = ["{c}: {n}", "{c} {n}", "Delivery note - {c} {n} (after 5pm)", "{c}: {n}, leave at the door",
                   "Kunde/customer {c} {n}", "{c} - {n}"]


def phone_case(rng: random.Random, i: int, country: str, forms: list[PhoneForm]) -> Value:
    """A phone number of `forms` after one of the country's context words."""
    style, make = forms[i % len(forms)]
    num = make(rng)
    ctx = PHONE_CTX[country][i % len(PHONE_CTX[country])]
    return style, num, rng.choice(PHONE_TEMPLATES).format(c=ctx, n=num), False


NANP_AREAS = ["212", "310", "312", "415", "617", "646", "702", "713", "206", "303", "404", "305", "503", "512",
              "602", "604", "416", "514", "403", "613", "902", "778"]


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """NANP: area code, central office code (NXX, not N11, not 555) and line number."""
    while True:
        office = f"{rng.randint(2, 9)}{digits(rng, 2)}"
        if office[1:] != "11" and office != "555":
            return rng.choice(NANP_AREAS), office, digits(rng, 4)


US_FORMS: list[PhoneForm] = [
    ("paren", lambda r: "({}) {}-{}".format(*_nanp(r))), ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
    ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))), ("intl", lambda r: "+1 {} {} {}".format(*_nanp(r))),
    ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r))), ("intl_paren", lambda r: "+1 ({}) {}-{}".format(*_nanp(r)))]


def _uk_geo(r: random.Random) -> str:
    """A geographic number outside Ofcom's drama ranges (496 0xxx, 020 7946 0xxx)."""
    code = r.choice(["0161", "0121", "0113", "0131", "0141", "0117"])
    local = f"{r.randint(2, 8)}{digits(r, 2)}"
    while local == "496":
        local = f"{r.randint(2, 8)}{digits(r, 2)}"
    return f"{code} {local} {digits(r, 4)}"


def _uk_mobile(r: random.Random) -> str:
    """07 mobile (071-075, 077-079) outside the drama range 07700 900xxx."""
    body = f"7{r.choice('1234579')}{digits(r, 8)}"
    return body if not body.startswith("7700900") else "78" + body[2:]


UK_FORMS: list[PhoneForm] = [
    ("mobile", lambda r: (lambda b: f"0{b[:4]} {b[4:]}")(_uk_mobile(r))),
    ("mobile_intl", lambda r: (lambda b: f"+44 {b[:4]} {b[4:]}")(_uk_mobile(r))),
    ("london", lambda r: f"020 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}".replace("020 7946", "020 7947")),
    ("geo", _uk_geo), ("london_intl", lambda r: f"+44 (0)20 {r.choice('38')}{digits(r, 3)} {digits(r, 4)}"),
    ("mobile_compact", lambda r: "0" + _uk_mobile(r))]


def _fr_pairs(r: random.Random, first: str) -> list[str]:
    """ARCEP ten-digit number as pairs after the leading 0, avoiding the 06 39 98 fiction block."""
    body = first + digits(r, 8)
    if body.startswith("63998"):
        body = "64" + body[2:]
    return [body[0]] + [body[k:k + 2] for k in range(1, 9, 2)]


FR_FORMS: list[PhoneForm] = [
    ("mobile_space", lambda r: (lambda p: "0" + p[0] + " " + " ".join(p[1:]))(_fr_pairs(r, r.choice("67")))),
    ("mobile_dot", lambda r: (lambda p: "0" + p[0] + "." + ".".join(p[1:]))(_fr_pairs(r, r.choice("67")))),
    ("geo", lambda r: (lambda p: "0" + p[0] + " " + " ".join(p[1:]))(_fr_pairs(r, r.choice("12345")))),
    ("intl", lambda r: (lambda p: "+33 " + p[0] + " " + " ".join(p[1:]))(_fr_pairs(r, r.choice("67")))),
    ("intl_zero", lambda r: (lambda p: "+33 (0)" + p[0] + " " + " ".join(p[1:]))(_fr_pairs(r, "6"))),
    ("compact", lambda r: "0" + "".join(_fr_pairs(r, r.choice("679"))))]

DE_MOBILE = ["151", "152", "157", "160", "162", "163", "170", "171", "172", "173", "174", "175", "176", "177", "178",
             "179"]


def _de_mobile(r: random.Random) -> tuple[str, str]:
    """A BNetzA mobile prefix and its subscriber number: eight digits after 015x, seven after 016x/017x."""
    code = r.choice(DE_MOBILE)
    return code, digits(r, 8 if code.startswith("15") else 7)


DE_FORMS: list[PhoneForm] = [
    ("mobile", lambda r: "0{} {}".format(*_de_mobile(r))),
    ("mobile_intl", lambda r: "+49 {} {}".format(*_de_mobile(r))),
    ("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
    ("muenchen", lambda r: f"(089) {r.randint(2, 9)}{digits(r, 6)}"),
    ("slash", lambda r: f"0{r.choice(['221', '69', '40', '711'])}/{r.randint(2, 9)}{digits(r, 6)}"),
    ("intl_zero", lambda r: f"+49 (0){r.choice(['30', '89', '40'])} {r.randint(2, 9)}{digits(r, 7)}")]

IN_FORMS: list[PhoneForm] = [
    ("intl_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
    ("intl_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}"),
    ("zero", lambda r: f"0{r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
    ("plain", lambda r: f"{r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
    ("landline", lambda r: f"0{r.choice(['22', '11', '80', '44', '33'])} {r.randint(2, 6)}{digits(r, 3)} "
                           f"{digits(r, 4)}"),
    ("landline_intl", lambda r: f"+91 {r.choice(['22', '11', '80'])} {r.randint(2, 6)}{digits(r, 3)} {digits(r, 4)}")]


def v_phone_us_ca(rng: random.Random, i: int, lang: str) -> Value:
    return phone_case(rng, i, "us", US_FORMS)


def v_phone_uk(rng: random.Random, i: int, lang: str) -> Value:
    return phone_case(rng, i, "uk", UK_FORMS)


def v_phone_fr(rng: random.Random, i: int, lang: str) -> Value:
    return phone_case(rng, i, "fr", FR_FORMS)


def v_phone_de(rng: random.Random, i: int, lang: str) -> Value:
    return phone_case(rng, i, "de", DE_FORMS)


def v_phone_in(rng: random.Random, i: int, lang: str) -> Value:
    return phone_case(rng, i, "in", IN_FORMS)


def ssn_parts(rng: random.Random) -> tuple[str, str, str]:
    """An SSN by the SSA's rules: area 001-899 but 666, group 01-99, serial 0001-9999."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int, lang: str) -> Value:
    """A seller's or applicant's SSN: marketplace tax interviews (W-9, 1099-K), store credit, staff onboarding."""
    a, g, s = ssn_parts(rng)
    ssn = [f"{a}-{g}-{s}", f"{a} {g} {s}", f"{a}{g}{s}"][i % 3]
    ctx = ["SSN", "Social Security number", "SSN/TIN (W-9)", "Número de Seguro Social", "soc. sec. no.",
           "SSN for the 1099-K", "applicant SSN"][i % 7]
    lead = ["{c}: {v}", "{c} {v}", "Store card application - {c}: {v}", "tax interview: {c} = {v}"]
    return ["dash", "space", "compact"][i % 3], ssn, rng.choice(lead).format(c=ctx, v=ssn), False


CARD_BRANDS: dict[str, tuple[Callable[[random.Random], str], tuple[int, ...]]] = {
    "visa": (lambda r: "4", (16,)), "mc": (lambda r: str(r.randint(51, 55)), (16,)),
    "mc2": (lambda r: str(r.randint(2221, 2720)), (16,)), "amex": (lambda r: r.choice(["34", "37"]), (15,)),
    "discover": (lambda r: r.choice(["6011", str(r.randint(644, 649)), "65"]), (16,)),
    "jcb": (lambda r: str(r.randint(3528, 3589)), (16,)),
    "diners": (lambda r: r.choice(["36", str(r.randint(300, 305))]), (14,)),
    "unionpay": (lambda r: "62", (16, 19)),
    "maestro": (lambda r: r.choice(["5018", "5020", "5038", "6304", "6759"]), (16, 19)),
    "mir": (lambda r: str(r.randint(2200, 2204)), (16,))}


def card_number(rng: random.Random, brand: str) -> str:
    """A PAN of `brand`'s IIN range and length, completed by its Luhn digit."""
    prefix, lengths = CARD_BRANDS[brand]
    head, length = prefix(rng), rng.choice(lengths)
    partial = head + digits(rng, length - len(head) - 1)
    return partial + luhn_digit(partial)


def v_card(rng: random.Random, i: int, lang: str) -> Value:
    """A card number as people and raw gateway requests write it: grouped by spaces or dashes, or compact."""
    brand = list(CARD_BRANDS)[i % len(CARD_BRANDS)]
    pan = card_number(rng, brand)
    sep = ["", " ", "-", " "][(i // 10) % 4]
    shown = group_card(pan, sep) if sep else pan
    exp = f"{rng.randint(1, 12):02d}/{rng.randint(25, 31)}"
    forms = [f"{label(lang, 2)}: {shown}", f"{label(lang, 2)} {shown} exp {exp}",
             f"card[number]={shown}&card[exp]={exp}", f'"number": "{shown}", "expiry": "{exp}"',
             f"customer read the card out: {shown}", f"PAN={shown} EXP={exp.replace('/', '')}"]
    return f"{brand}_{['compact', 'space', 'dash', 'space'][(i // 10) % 4]}", shown, forms[i % len(forms)], False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "NL": "4a10n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
             "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "SE": "3n16n1n", "IE": "4a6n8n",
             "PT": "4n4n11n2n", "DK": "4n9n1n", "FI": "3n11n", "NO": "4n6n1n"}


def v_iban(rng: random.Random, i: int, lang: str) -> Value:
    """An IBAN (refund to account, supplier payout, SEPA mandate) in print form (fours) or electronic form."""
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    body = bban(rng, IBAN_BBAN[country])
    iban = country + iban_check(country, body) + body
    shown = group(iban, 4, " ") if i % 3 else iban
    forms = [f"{label(lang, 3)}: {shown}", f"refund to {label(lang, 3)} {shown} please",
             f"SEPA mandate MD-{digits(rng, 6)}, {label(lang, 3)} {shown}", f'"iban": "{shown}"',
             f"payout account ({label(lang, 3)}): {shown}"]
    return ("print" if i % 3 else "electronic"), shown, forms[i % len(forms)], False


# ---- values: commerce providers' tokens -----------------------------------------------------------------------

TOKEN_LEADS = ["{e}={v}", "export {e}={v}", '"{j}": "{v}"', "{j}: {v}", "{v}", "token for the sync job: {v}"]


def provider_case(rng: random.Random, i: int, env: str, jkey: str, style: str, tok: str,
                  extra: list[str] | None = None) -> Value:
    """A provider token after a lead a shop's config, code or notes would give it."""
    leads = TOKEN_LEADS + (extra or [])
    return style, tok, leads[i % len(leads)].format(e=env, j=jkey, v=tok), False


def v_shopify_token(rng: random.Random, i: int, lang: str) -> Value:
    """Shopify's prefixed tokens (2021): admin API `shpat_`, custom app `shpca_`, private app `shppa_`, shared
    secret `shpss_`, each with 32 hex characters."""
    prefix = ["shpat_", "shpca_", "shppa_", "shpss_"][i % 4]
    tok = prefix + pick(rng, HEX, 32)
    return provider_case(rng, i, "SHOPIFY_ADMIN_ACCESS_TOKEN", "accessToken", prefix[:-1], tok,
                         ["X-Shopify-Access-Token: {v}", "curl -H 'X-Shopify-Access-Token: {v}' "
                          "https://store-eu.myshopify.com/admin/api/2024-04/orders.json"])


def v_stripe_key(rng: random.Random, i: int, lang: str) -> Value:
    """Stripe secret and restricted keys: `sk_live_`/`rk_live_`/`sk_test_`, the older 24 characters or the
    account-scoped `51...` form."""
    prefix = ["sk_live_", "rk_live_", "sk_test_"][i % 3]
    tok = prefix + (pick(rng, ALNUM, 24) if i % 2 else "51" + pick(rng, ALNUM, 97))
    return provider_case(rng, i, "STRIPE_SECRET_KEY", "secretKey", prefix[:-1], tok,
                         ["Authorization: Bearer {v}", "curl https://api.stripe.com/v1/refunds -u {v}: -d charge=ch_1"])


def v_woocommerce_key(rng: random.Random, i: int, lang: str) -> Value:
    """WooCommerce REST API keys: consumer key `ck_` and consumer secret `cs_`, 40 hex characters each."""
    field, prefix = [("consumer_secret", "cs_"), ("consumer_key", "ck_")][i % 2]
    tok = prefix + pick(rng, HEX, 40)
    return provider_case(rng, i, "WC_" + field.upper(), field, tok[:2], tok,
                         ["GET /wp-json/wc/v3/orders?" + field + "={v}"])


def v_square_token(rng: random.Random, i: int, lang: str) -> Value:
    """Square credentials: `EAAA` access tokens (64 characters), `sq0csp-` application secrets, legacy `sq0atp-`
    personal access tokens."""
    n = i % 3
    tok = ["EAAA" + pick(rng, URLSAFE, 60), "sq0csp-" + pick(rng, URLSAFE, 43), "sq0atp-" + pick(rng, URLSAFE, 22)][n]
    return provider_case(rng, i, "SQUARE_ACCESS_TOKEN", "accessToken", ["eaaa", "sq0csp", "sq0atp"][n], tok,
                         ["Square-Version: 2024-04-17\nAuthorization: Bearer {v}"])


def v_braintree_token(rng: random.Random, i: int, lang: str) -> Value:
    """Braintree credentials: `access_token$production$<merchant>$<32 hex>` and a private key (32 hex)."""
    if i % 2:
        key = pick(rng, HEX, 32)
        code = (f"braintree.Configuration(braintree.Environment.Production, merchant_id='{pick(rng, LOWNUM, 16)}', "
                f"public_key='{pick(rng, LOWNUM, 16)}', private_key='{key}')")
        return "private_key", key, rng.choice([f"BRAINTREE_PRIVATE_KEY={key}", f"braintree private key: {key}",
                                               code]), False
    tok = f"access_token${rng.choice(['production', 'sandbox'])}${pick(rng, LOWNUM, 16)}${pick(rng, HEX, 32)}"
    return provider_case(rng, i, "BRAINTREE_ACCESS_TOKEN", "accessToken", "access_token", tok)


def v_mollie_key(rng: random.Random, i: int, lang: str) -> Value:
    """Mollie API keys (`live_`/`test_` and 30 characters) and organisation access tokens (`access_` + 40)."""
    n = i % 3
    tok = ["live_" + pick(rng, ALNUM, 30), "test_" + pick(rng, ALNUM, 30), "access_" + pick(rng, ALNUM, 40)][n]
    return provider_case(rng, i, "MOLLIE_API_KEY", "apiKey", ["live", "test", "access"][n], tok,
                         ["Authorization: Bearer {v}", "$mollie->setApiKey(\"{v}\");"])


def v_amazon_lwa(rng: random.Random, i: int, lang: str) -> Value:
    """Login with Amazon (SP-API) credentials: `Atzr|` refresh and `Atza|` access tokens, `amzn1.oa2-cs.v1.`
    client secrets (64 hex)."""
    n = i % 3
    if n == 2:
        sec = "amzn1.oa2-cs.v1." + pick(rng, HEX, 64)
        cid = "amzn1.application-oa2-client." + pick(rng, HEX, 32)
        return "client_secret", sec, rng.choice([f"LWA_CLIENT_SECRET={sec}", f"client_id={cid}&client_secret={sec}",
                                                 f'"clientSecret": "{sec}"']), False
    tok = ("Atzr|IwEB" if n == 0 else "Atza|IwEB") + pick(rng, URLSAFE, rng.randint(280, 360))
    snip = [f"grant_type=refresh_token&refresh_token={tok}", f"x-amz-access-token: {tok}",
            f'"refresh_token": "{tok}"', f"LWA_REFRESH_TOKEN={tok}"][(i // 3) % 4]
    return ("refresh" if n == 0 else "access"), tok, snip, False


def v_email_platform_key(rng: random.Random, i: int, lang: str) -> Value:
    """Transactional and marketing email keys: SendGrid `SG.<22>.<43>`, Mailchimp `<32 hex>-usNN`, Postmark
    server tokens (UUID) in their header."""
    n = i % 3
    if n == 0:
        tok = f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}"
        return provider_case(rng, i, "SENDGRID_API_KEY", "apiKey", "sendgrid", tok)
    if n == 1:
        tok = f"{pick(rng, HEX, 32)}-us{rng.randint(1, 21)}"
        return provider_case(rng, i, "MAILCHIMP_API_KEY", "apikey", "mailchimp", tok,
                             ["curl -u anystring:{v} https://us6.api.mailchimp.com/3.0/lists"])
    tok = _uid(rng)
    return "postmark", tok, rng.choice([f"X-Postmark-Server-Token: {tok}", f"POSTMARK_SERVER_TOKEN={tok}"]), False


def v_auth_header(rng: random.Random, i: int, lang: str) -> Value:
    """HTTP credentials: Basic (RFC 7617) of WooCommerce/Klarna key pairs, Bearer (RFC 6750) of PayPal `A21AA`,
    eBay `v^1.1#` user tokens and Magento integration tokens; the secret is the credential."""
    n = i % 4
    if n == 0:
        user = rng.choice(["ck_" + pick(rng, HEX, 40), f"K{digits(rng, 6)}_{pick(rng, HEX, 12)}"])
        cred = base64.b64encode(f"{user}:{pick(rng, ALNUM, 24)}".encode()).decode()
        scheme = "Basic"
    elif n == 1:
        cred, scheme = "A21AA" + pick(rng, URLSAFE, 92), "Bearer"
    elif n == 2:
        cred, scheme = "v^1.1#i^1#p^3#r^1#I^3#f^0#t^H4sIAAAAAAAA" + pick(rng, B64, 180), "Bearer"
    else:
        cred, scheme = pick(rng, LOWNUM, 32), "Bearer"
    forms = [f"Authorization: {scheme} {cred}", f"curl -H 'Authorization: {scheme} {cred}' https://api.shop.io/v1",
             f'headers = {{"Authorization": "{scheme} {cred}"}}', f"> Authorization: {scheme} {cred}"]
    return ["basic", "paypal", "ebay", "magento"][n], cred, forms[(i // 4) % 4], False


def jwt_value(rng: random.Random, i: int) -> str:
    """A JWS compact JWT (RFC 7515/7519) with Shopify session token claims; HS256 or RS256 signature bytes."""
    alg = "HS256" if i % 2 else "RS256"
    shop = rng.choice(["store-eu", "outdoor-gear", "kaffee-haus", "lojinha-br"])
    t = 1_714_000_000 + rng.randint(0, 9_000_000)
    head = {"alg": alg, "typ": "JWT"}
    claims = {"iss": f"https://{shop}.myshopify.com/admin", "dest": f"https://{shop}.myshopify.com",
              "aud": pick(rng, HEX, 32), "sub": digits(rng, 11), "exp": t + 60, "nbf": t, "iat": t,
              "jti": _uid(rng), "sid": pick(rng, HEX, 64)}
    sig = rng.randbytes(32 if alg == "HS256" else 256)
    return ".".join([b64url(json.dumps(head, separators=(",", ":")).encode()),
                     b64url(json.dumps(claims, separators=(",", ":")).encode()), b64url(sig)])


def v_jwt(rng: random.Random, i: int, lang: str) -> Value:
    """An embedded app's session token or an admin JWT as headers, query strings and stored fields carry it."""
    tok = jwt_value(rng, i)
    forms = [f"Authorization: Bearer {tok}", f"GET /app/orders?id_token={tok}", f'"sessionToken": "{tok}"',
             f"jwt={tok}", f"session token: {tok}"]
    return ["rs256", "hs256"][i % 2], tok, forms[i % len(forms)], False


def cookie_value(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(style, name, value) of a storefront or admin session cookie."""
    n = i % 7
    site = pick(rng, HEX, 32)
    exp = 1_714_000_000 + rng.randint(0, 9_000_000)
    if n == 0:
        return "php", "PHPSESSID", pick(rng, "0123456789abcdefghijklmnopqrstuv", 26)
    if n == 1:
        return "wp_logged_in", f"wordpress_logged_in_{site}", (f"shopmanager%7C{exp}%7C{pick(rng, ALNUM, 43)}"
                                                              f"%7C{pick(rng, HEX, 64)}")
    if n == 2:
        return "woo_session", f"wp_woocommerce_session_{site}", (f"{rng.randint(2, 9999)}%7C%7C{exp}%7C%7C"
                                                                f"{exp - 3600}%7C%7C{pick(rng, HEX, 32)}")
    if n == 3:
        return "express", "connect.sid", f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, ALNUM + '+/', 43)}"
    if n == 4:
        return "rails", "_session_id", pick(rng, HEX, 32)
    if n == 5:
        return "magento_admin", "admin", pick(rng, LOWNUM, 32)
    return "shopify_admin", "_secure_admin_session_id", pick(rng, HEX, 32)


def v_session_cookie(rng: random.Random, i: int, lang: str) -> Value:
    """A session cookie's value in a request's Cookie header, a Set-Cookie (RFC 6265) or a Netscape jar line."""
    style, name, val = cookie_value(rng, i)
    forms = [f"Cookie: _ga=GA1.2.{digits(rng, 9)}.{digits(rng, 10)}; {name}={val}; cart_currency=EUR",
             f"Set-Cookie: {name}={val}; path=/; secure; HttpOnly; SameSite=Lax",
             f"#HttpOnly_.store-eu.com\tTRUE\t/\tTRUE\t{1_760_000_000 + i}\t{name}\t{val}",
             f"document.cookie = \"{name}={val}\"", f"session cookie {name}={val}"]
    return style, val, forms[(i // 7) % len(forms)], False


def v_totp_seed(rng: random.Random, i: int, lang: str) -> Value:
    """A TOTP seed (RFC 6238; base32, RFC 4648) in an `otpauth://` URI, as an app's grouped setup key or labelled."""
    seed = pick(rng, BASE32, rng.choice([16, 32]))
    issuer = rng.choice(["Shopify", "Magento%20Admin", "Stripe", "Amazon%20Seller%20Central", "POS%20Backoffice"])
    n = i % 4
    if n == 0:
        return "uri", seed, (f"otpauth://totp/{issuer}:ops-{rng.randint(1, 40)}?secret={seed}&issuer={issuer}"
                             "&algorithm=SHA1&digits=6&period=30"), False
    if n == 1:
        shown = group(seed.lower(), 4, " ")
        return "grouped", shown, f"Can't scan the QR code? Enter this setup key: {shown}", False
    if n == 2:
        return "label", seed, f"2FA secret for the shared seller account: {seed}", False
    return "yaml", seed, f"mfa:\n  issuer: Seller Central\n  totp_secret: {seed}", False


def pem_body(der: bytes, width: int = 64) -> str:
    """The base64 lines of a PEM block (RFC 7468), without the armour."""
    return group(base64.b64encode(der).decode(), width, "\n")


def private_key_parts(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(style, armour label, base64 body) of an EC key (PKCS#8 or SEC1) or an OpenSSH Ed25519 key."""
    n = i % 3
    if n == 2:
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"edi-feed@3pl")
        return "openssh", "OPENSSH PRIVATE KEY", pem_body(blob, 70)
    key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
    fmt = serialization.PrivateFormat.PKCS8 if n == 0 else serialization.PrivateFormat.TraditionalOpenSSL
    der = key.private_bytes(serialization.Encoding.DER, fmt, serialization.NoEncryption())
    return ("pkcs8", "PRIVATE KEY", pem_body(der)) if n == 0 else ("sec1", "EC PRIVATE KEY", pem_body(der))


def v_private_key(rng: random.Random, i: int, lang: str) -> Value:
    """A private key (Apple Pay merchant identity, Amazon Pay, a 3PL's SFTP feed) as a PEM block or an env value
    with literal `\\n`; the secret is the base64 body."""
    style, armour, body = private_key_parts(rng, i)
    if (i // 3) % 3 == 2:
        flat = body.replace("\n", "\\n")
        return style + "_env", flat, (f'AMAZON_PAY_PRIVATE_KEY="-----BEGIN {armour}-----\\n{flat}\\n'
                                      f'-----END {armour}-----\\n"'), False
    lead = ["apple_pay/merchant_id.key:\n", "SFTP key for the warehouse feed:\n"][(i // 3) % 2]
    return style, body, f"{lead}-----BEGIN {armour}-----\n{body}\n-----END {armour}-----", False


# ---- national ids (outside the target) ------------------------------------------------------------------------

def fr_nir(rng: random.Random) -> str:
    """A French NIR: sex, year, month, département (01-95), commune, order, and the key 97 - (13 digits mod 97)."""
    base = (f"{rng.choice('12')}{digits(rng, 2)}{rng.randint(1, 12):02d}{rng.randint(1, 95):02d}"
            f"{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}")
    key = f"{97 - int(base) % 97:02d}"
    return f"{base[0]} {base[1:3]} {base[3:5]} {base[5:7]} {base[7:10]} {base[10:]} {key}"


def es_dni(rng: random.Random) -> str:
    """A Spanish DNI (8 digits) or NIE (X/Y/Z counted as 0/1/2, 7 digits) with its mod 23 letter."""
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if rng.random() < 0.3:
        lead, num = rng.choice("XYZ"), digits(rng, 7)
        return f"{lead}{num}{letters[int(str('XYZ'.index(lead)) + num) % 23]}"
    num = digits(rng, 8)
    return num + letters[int(num) % 23]


def br_cpf(rng: random.Random) -> str:
    """A Brazilian CPF: nine digits and two mod 11 check digits, printed 000.000.000-00."""
    d = [int(c) for c in digits(rng, 9)]
    for n in (10, 11):
        d.append(sum(x * w for x, w in zip(d, range(n, 1, -1), strict=True)) * 10 % 11 % 10)
    s = "".join(map(str, d))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


def pl_pesel(rng: random.Random) -> str:
    """A Polish PESEL: birth date (month + 20 after 2000), serial, and the 1-3-7-9 weighted check digit."""
    year = rng.randint(1950, 2005)
    month = rng.randint(1, 12) + (20 if year >= 2000 else 0)
    body = f"{year % 100:02d}{month:02d}{rng.randint(1, 28):02d}{digits(rng, 4)}"
    total = sum(int(c) * w for c, w in zip(body, [1, 3, 7, 9, 1, 3, 7, 9, 1, 3], strict=True))
    return body + str((10 - total % 10) % 10)


def se_pnr(rng: random.Random) -> str:
    """A Swedish personnummer YYMMDD-NNNC, C the Luhn digit of the nine before it."""
    body = f"{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    return f"{body[:6]}-{body[6:]}{luhn_digit(body)}"


def fi_hetu(rng: random.Random) -> str:
    """A Finnish henkilötunnus DDMMYY, century sign, individual number 002-899 and the mod 31 check character."""
    year = rng.randint(1950, 2005)
    date = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{year % 100:02d}"
    num = f"{rng.randint(2, 899):03d}"
    return date + ("A" if year >= 2000 else "-") + num + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(date + num) % 31]


def nl_bsn(rng: random.Random) -> str:
    """A Dutch BSN: nine digits passing the 11-proof (weights 9..2 and -1)."""
    while True:
        head = str(rng.randint(1, 9)) + digits(rng, 7)
        last = sum(int(c) * w for c, w in zip(head, range(9, 1, -1), strict=True)) % 11
        if last < 10:
            return head + str(last)


NATIONAL = {"fr_nir": (fr_nir, ["numéro de sécurité sociale", "NIR", "n° de sécu"]),
            "es_dni": (es_dni, ["DNI/NIE", "documento (DNI/NIE)", "DNI/NIE del cliente"]),
            "br_cpf": (br_cpf, ["CPF", "CPF na nota", "CPF do comprador"]),
            "pl_pesel": (pl_pesel, ["PESEL", "numer PESEL", "PESEL klienta"]),
            "se_pnr": (se_pnr, ["personnummer", "personnr", "Personnummer (Klarna)"]),
            "fi_hetu": (fi_hetu, ["henkilötunnus", "hetu", "HETU"]),
            "nl_bsn": (nl_bsn, ["BSN", "burgerservicenummer", "BSN-nummer"])}
ID_TEMPLATES = ["{c}: {v}", "ID check — {c} {v}", "pay-later check, {c} {v}, approved", "{c} = {v}"]


def national_id(kind: str) -> Callable[[random.Random, int, str], Value]:
    """A value generator for one country's id, after a context word in its language."""
    make, ctx = NATIONAL[kind]

    def gen(rng: random.Random, i: int, _lang: str) -> Value:
        val = make(rng)
        return "labelled", val, rng.choice(ID_TEMPLATES).format(c=ctx[i % len(ctx)], v=val), False
    return gen


# ---- the corpus -----------------------------------------------------------------------------------------------

ValueGen = Callable[[random.Random, int, str], Value]
KINDS: dict[str, ValueGen] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "shopify_token": v_shopify_token, "stripe_key": v_stripe_key, "woocommerce_key": v_woocommerce_key,
    "square_token": v_square_token, "braintree_token": v_braintree_token, "mollie_key": v_mollie_key,
    "amazon_lwa": v_amazon_lwa, "email_platform_key": v_email_platform_key, "auth_header": v_auth_header,
    "jwt": v_jwt, "session_cookie": v_session_cookie, "totp_seed": v_totp_seed, "private_key": v_private_key,
    **{kind: national_id(kind) for kind in NATIONAL},
}
KIND_LANGS = {"phone_us_ca": ["en", "es", "fr"], "phone_uk": ["en"], "phone_fr": ["fr"], "phone_de": ["de"],
              "phone_in": ["hi", "en"], "ssn": ["en", "es"], "fr_nir": ["fr"], "es_dni": ["es"], "br_cpf": ["pt"],
              "pl_pesel": ["pl"], "se_pnr": ["sv"], "fi_hetu": ["fi"], "nl_bsn": ["nl"]}
"""The languages a kind's cases are written in where the value belongs to a country; the rest take all 28."""


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, deterministic; carriers rotate so each kind meets all of them, and languages
    shift at each turn of the carriers so the agent's replies come in all of them."""
    rng = random.Random(SEED)
    for k, (kind, gen) in enumerate(KINDS.items()):
        langs = KIND_LANGS.get(kind, ALL_LANGS)
        for i in range(PER_KIND):
            lang = langs[(i * 5 + k + i // len(CARRIERS)) % len(langs)]
            style, secret, snip, raw = gen(rng, i, lang)
            name, mode, frame = CARRIERS[(i + 7 * k) % len(CARRIERS)]
            text = fill(mode, frame(rng, lang), snip, raw)
            yield Case(kind, f"{name}/{style}", secret, text, mode == "json")


# ---- near misses ----------------------------------------------------------------------------------------------

def n_element_id(rng: random.Random) -> str:
    return (f'<button id="{rng.choice(["add-to-cart", "checkout-btn", "ProductSubmitButton"])}-'
            f'{pick(rng, HEX, 4)}" class="btn btn--{rng.choice(["primary", "secondary"])}" '
            f'data-testid="pdp-{rng.randint(1, 999)}" data-variant-id="{digits(rng, 14)}">Add to cart</button>')


def n_css_selector(rng: random.Random) -> str:
    return rng.choice([f"#shopify-section-template--{digits(rng, 14)}__main .product__title h1",
                       f".product-card__price--sale > span:nth-child({rng.randint(1, 4)})",
                       f"div.woocommerce-product-gallery__image:nth-of-type({rng.randint(1, 9)}) img",
                       f"#product-{rng.randint(100, 99999)} .price ins .amount"])


def n_xpath(rng: random.Random) -> str:
    return rng.choice([f"//div[@data-product-id='{digits(rng, 13)}']/span[{rng.randint(1, 5)}]",
                       "//*[@id='checkout_shipping_address_zip']",
                       f"(//li[contains(@class,'order-row')])[{rng.randint(1, 50)}]/a/@href",
                       f"//table[@id='sales_order_grid']//tr[{rng.randint(1, 20)}]/td[3]"])


def n_coordinates(rng: random.Random) -> str:
    lat, lng = rng.uniform(-40, 60), rng.uniform(-120, 140)
    return rng.choice([f'store #{rng.randint(1, 400)} "lat": {lat:.6f}, "lng": {lng:.6f}',
                       f"geo:{lat:.6f},{lng:.6f} (flagship store)", f"warehouse DC-{rng.randint(1, 9)} at "
                                                                      f"{lat:.5f}, {lng:.5f}"])


def n_pixel_sizes(rng: random.Random) -> str:
    s = rng.choice([360, 720, 1080, 1200, 2048])
    return rng.choice([f"products/tee-black_{s}x{s}.jpg?v={rng.randint(1_600_000_000, 1_720_000_000)}",
                       f'srcset="hero_{s}x.jpg {s}w, hero_{s * 2}x.jpg {s * 2}w"', f"max-width: {s}px; gap: 24px",
                       f"width={s}&height={s}&crop=center"])


def n_timestamps(rng: random.Random) -> str:
    ms = rng.randint(1_700_000_000_000, 1_730_000_000_000)
    return rng.choice([f"processed_at: {_ts(rng)}.{digits(rng, 3)}Z", f"created_ms={ms}",
                       f"Date: Tue, 07 May 2024 {rng.randint(10, 23)}:{rng.randint(10, 59)}:05 GMT",
                       f"shipped {_ts(rng).replace('T', ' ')}.{digits(rng, 6)}+00"])


def n_request_ids(rng: random.Random) -> str:
    return rng.choice([f"X-Request-Id: {_uid(rng)}", f"x-amzn-RequestId: {_uid(rng)}",
                       f"Request-Id: req_{pick(rng, ALNUM, 14)}",
                       f"cf-ray: {pick(rng, HEX, 16)}-{rng.choice(['FRA', 'LHR', 'IAD', 'BOM'])}",
                       f"X-Shopify-Webhook-Id: {_uid(rng)}"])


def n_cache_busting(rng: random.Random) -> str:
    return rng.choice([f"//store-eu.com/cdn/shop/t/{rng.randint(1, 40)}/assets/base.css?v="
                       f"{rng.randint(1_600_000_000, 1_720_000_000)}",
                       f"/static/version{rng.randint(1_600_000_000, 1_720_000_000)}/frontend/Magento/luma/en_US/"
                       "mage/calendar.css", f"main.{pick(rng, HEX, 20)}.js", f"app-{pick(rng, HEX, 8)}.min.css"])


def n_csrf_names(rng: random.Random) -> str:
    name = rng.choice(["authenticity_token", "form_key", "_wpnonce", "csrfmiddlewaretoken",
                       "__RequestVerificationToken", "woocommerce-process-checkout-nonce"])
    return rng.choice([f'<input type="hidden" name="{name}" value="">', f"missing field: {name}",
                       f'<input type="hidden" name="{name}" value="{{{{ {name} }}}}">'])


def n_placeholders(rng: random.Random) -> str:
    return rng.choice(["Password: ********", "Email: you@example.com", "API key: <your-api-key>",
                       "Card number: XXXX XXXX XXXX XXXX", "{{ customer.email }}", "SHOPIFY_ADMIN_ACCESS_TOKEN=",
                       "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
                       "Phone: +1 (XXX) XXX-XXXX", "STRIPE_SECRET_KEY=sk_live_...", "IBAN: ____ ____ ____ ____",
                       f"{rng.choice(list(LANGS.values()))[0]}: ••••••••"])


def n_masked(rng: random.Random) -> str:
    return rng.choice([f"Visa •••• {digits(rng, 4)}", f"**** **** **** {digits(rng, 4)}",
                       f"card ending in {digits(rng, 4)}",
                       f"IBAN DE** **** **** **** **{digits(rng, 2)} {digits(rng, 2)}",
                       f"{rng.choice(LOWER)}***@g****.com", f"+44 7*** ***{digits(rng, 3)}",
                       f"SSN ***-**-{digits(rng, 4)}",
                       f"sk_live_••••••••••••{pick(rng, ALNUM, 4)}"])


def n_versions(rng: random.Random) -> str:
    return rng.choice([f"Magento 2.4.{rng.randint(4, 7)}-p{rng.randint(1, 9)}",
                       f"WooCommerce {rng.randint(7, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 5)}",
                       f"X-Shopify-API-Version: 202{rng.randint(3, 5)}-{rng.choice(['01', '04', '07', '10'])}",
                       f"@shopify/polaris@{rng.randint(10, 13)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
                       f"PHP {rng.randint(7, 8)}.{rng.randint(0, 3)}.{rng.randint(1, 30)}",
                       f"Adyen Web {rng.randint(4, 5)}.{rng.randint(10, 70)}.0",
                       f"Stripe-Version: 2024-0{rng.randint(1, 9)}-10"])


def n_service_numbers(rng: random.Random) -> str:
    return rng.choice([f"Customer service (toll-free): 1-800-{rng.randint(200, 999)}-{digits(rng, 4)}",
                       f"Call our store support line (888) {rng.randint(200, 999)}-{digits(rng, 4)}",
                       f"Freephone 0800 {digits(rng, 3)} {digits(rng, 4)}, Mon-Sat",
                       f"Kundenservice (kostenfrei): 0800 {digits(rng, 3)} {digits(rng, 4)}",
                       f"Service client, numéro vert 0 800 {digits(rng, 2)} {digits(rng, 2)} {digits(rng, 2)}",
                       f"Customer care toll free 1800 {digits(rng, 3)} {digits(rng, 4)}"])


def _luhn_bad(rng: random.Random) -> str:
    """A 16-digit number of a card IIN whose last digit is not its Luhn digit."""
    partial = rng.choice(["4", "51", "6011"])
    partial += digits(rng, 15 - len(partial))
    good = int(luhn_digit(partial))
    bad = partial + str((good + rng.randint(1, 9)) % 10)
    assert not luhn_ok(bad)
    return bad


def n_luhn_invalid(rng: random.Random) -> str:
    num = _luhn_bad(rng)
    return rng.choice([f"declined: card number {group(num, 4, ' ')} failed the check digit",
                       f"terminal serial {num}", f"loyalty scan {num} (unknown member)", f"batch {num}"])


def n_order_numbers(rng: random.Random) -> str:
    return rng.choice([f"Order #{rng.randint(1001, 99999)}", f"Amazon order {rng.randint(111, 114)}-{digits(rng, 7)}-"
                       f"{digits(rng, 7)}", f"eBay order {digits(rng, 2)}-{digits(rng, 5)}-{digits(rng, 5)}",
                       f"Magento increment id {rng.randint(1, 99999):09d}", f"WC-{rng.randint(1000, 99999)}",
                       f"PO-{rng.randint(2023, 2024)}-{digits(rng, 5)}"])


def _s10(rng: random.Random) -> str:
    """A UPU S10 item id (Royal Mail): two letters, eight digits, the weighted mod 11 check digit, GB."""
    body = digits(rng, 8)
    c = 11 - sum(int(d) * w for d, w in zip(body, [8, 6, 4, 2, 3, 5, 9, 7], strict=True)) % 11
    return f"{rng.choice(['RR', 'JD', 'LX', 'AB'])}{body}{ {10: 0, 11: 5}.get(c, c)}GB"


def n_tracking(rng: random.Random) -> str:
    return rng.choice([f"UPS 1Z{pick(rng, UPNUM, 6)}03{digits(rng, 8)}", f"USPS 9400 1{digits(rng, 3)} "
                       f"{digits(rng, 4)} {digits(rng, 4)} {digits(rng, 4)} {digits(rng, 2)}",
                       f"Royal Mail {_s10(rng)}",
                       f"DHL Express {digits(rng, 10)}", f"FedEx tracking {digits(rng, 12)}"])


def _gtin(rng: random.Random, n: int, prefix: str = "") -> str:
    """A GTIN of n digits (after `prefix`, e.g. ISBN's 978) with its GS1 check digit (weights 3, 1 from the right)."""
    body = prefix + digits(rng, n - 1 - len(prefix))
    total = sum(int(d) * (3 if k % 2 == 0 else 1) for k, d in enumerate(reversed(body)))
    return body + str((10 - total % 10) % 10)


def n_gtin_sku(rng: random.Random) -> str:
    return rng.choice([f"EAN {_gtin(rng, 13)}", f"UPC {_gtin(rng, 12)}", f"barcode: {_gtin(rng, 13)}",
                       f"SKU TS-{rng.choice(['BLK', 'WHT'])}-{rng.choice(['S', 'M', 'XL'])}-{rng.randint(1, 99):02d}",
                       f"ISBN {_gtin(rng, 13, '978')}"])


def n_amounts(rng: random.Random) -> str:
    return rng.choice([f"total €{rng.randint(1, 9)}.{rng.randint(100, 999)},00", f"${_price(rng)} USD",
                       f"₹{rng.randint(1, 99)},{rng.randint(100, 999)}", f"£{_price(rng)} incl. VAT",
                       f'"total_price": "{_price(rng)}", "currency": "CAD"', f"{rng.randint(5, 99)},99 €"])


def n_payment_refs(rng: random.Random) -> str:
    return rng.choice([f"pspReference={pick(rng, UPNUM, 16)}", f"PayPal transaction {pick(rng, UPNUM, 17)}",
                       f"payment_intent pi_{pick(rng, ALNUM, 24)}", f"charge ch_{pick(rng, ALNUM, 24)}",
                       f"Braintree transaction {pick(rng, LOWNUM, 8)}", f"Mollie payment tr_{pick(rng, ALNUM, 10)}",
                       f"gid://shopify/Transaction/{digits(rng, 13)}"])


def n_hashes(rng: random.Random) -> str:
    data = rng.randbytes(16)
    return rng.choice([f"sha256 of feed.csv: {hashlib.sha256(data).hexdigest()}",
                       f'ETag: W/"{hashlib.md5(data).hexdigest()}"', f"theme commit {hashlib.sha1(data).hexdigest()}",
                       f"Content-MD5: {base64.b64encode(hashlib.md5(data).digest()).decode()}"])


def n_aws_example(rng: random.Random) -> str:
    kid, sec = rng.choice([("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
                           ("AKIAI44QH8DHBEXAMPLE", "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY")])
    return rng.choice([f"aws_access_key_id = {kid}", f"e.g. AWS_SECRET_ACCESS_KEY={sec} (from the AWS docs)",
                       f"[default]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}"])


def n_promo_codes(rng: random.Random) -> str:
    code = rng.choice(["WELCOME10", "SUMMER24", "FREESHIP", "BLACKFRIDAY", "SOMMER-SALE", "RENTREE15", "VIP20"])
    return rng.choice([f"Use code {code} at checkout", f"Discount code: {code} (printed in the flyer)",
                       f'"discount_codes": [{{"code": "{code}", "amount": "10.00", "type": "percentage"}}]'])


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "element_id": n_element_id, "css_selector": n_css_selector, "xpath": n_xpath, "coordinates": n_coordinates,
    "pixel_sizes": n_pixel_sizes, "timestamps": n_timestamps, "request_ids": n_request_ids,
    "cache_busting": n_cache_busting, "csrf_names": n_csrf_names, "placeholders": n_placeholders,
    "masked": n_masked, "versions": n_versions, "service_numbers": n_service_numbers,
    "luhn_invalid": n_luhn_invalid, "order_numbers": n_order_numbers, "tracking": n_tracking,
    "gtin_sku": n_gtin_sku, "amounts": n_amounts, "payment_refs": n_payment_refs, "hashes": n_hashes,
    "aws_example": n_aws_example, "promo_codes": n_promo_codes,
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), every third inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                _name, mode, frame = JSON_CARRIERS[(i // 3) % len(JSON_CARRIERS)]
                text = fill(mode, frame(rng, "en"), text, False)
            yield sort, text
