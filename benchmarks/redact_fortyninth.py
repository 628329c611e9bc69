"""The forty-ninth blind redaction corpus: mobile money, remittance and micro-lending agents in South Asia, the
Middle East and Africa -- what an agent that runs a wallet, a remittance corridor or a lending app sees. Written from
the formats' public specifications by someone who read neither the detection rules nor the other corpora.

Carriers (the `form` head): JSON -- an M-Pesa Daraja STK callback with the agent's note, an MTN MoMo request-to-pay
body, Flutterwave and Paystack webhook events, a Razorpay `payment.captured` event, a KYC onboarding record, an SMS
gateway delivery log, a WhatsApp Cloud API message webhook, an agent tool result, a loan-collection CRM entry, an
agent-network (cash-in/cash-out) ledger row, a customer chat part and a USSD session callback; text -- SMPP
`submit_sm` log lines, USSD session logs, the agent's own message to a user (greeting in the user's language), a
ledger CSV row, a collection call note, an HTTP request dump, an application log line, a `.env` excerpt, a Markdown
support ticket, a chat transcript, a partner bank's e-mail, a YAML values file, OCR text of a document and a
WhatsApp chat export line. About a third is JSON carried (`is_json`).

Languages: labels and sentences in English, French, German, Portuguese, Spanish, Hindi, Marathi, Nepali, Bengali,
Tamil, Telugu, Gujarati, Punjabi (Gurmukhi), Urdu, Arabic, Persian, Pashto, Turkish, Hebrew, Swahili, Amharic
(Ethiopic), Hausa, Yoruba, Igbo, Somali, Zulu and Kinyarwanda (27). A share of the phones, PINs, Indian, Iranian,
Saudi and Emirati ids and Iranian card numbers is written in the digits their users write: Devanagari (Hindi,
Marathi, Nepali), Bengali, Arabic-Indic (Arabic) and Extended Arabic-Indic (Persian, Urdu, Pashto).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37, Discover
6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62, NPCI RuPay 508500-508999/606985-607984/
608001-608500/652150-653149, Interswitch Verve 506099-506198/650002-650027, Iranian Shetab banks' BINs) with the Luhn
digit; IBANs, ISO 13616 and the SWIFT IBAN registry's BBAN structures (PK, AE, SA, TR, IL, EG, JO, QA, KW, BH, LB, TN,
MR, GB, DE, FR) and Iran's Sheba number (ISO 13616 form, IR + 24 digits), MOD 97-10; SSNs, the SSA's rules (area not
000/666/9xx, group not 00, serial not 0000); phones, the national numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT,
Kenya CA, Nigeria NCC, PTA Pakistan, BTRC Bangladesh) avoiding the ranges Ofcom and ARCEP reserve for fiction; AWS,
IAM's AKIA/ASIA ids and 40-character secrets; webhooks as Slack, Discord, Teams, Power Automate, Google Chat, Mattermost
and Zapier print them (the secret is the token segment or `sig`/`token` value only); Stripe `whsec_`; URI, ADO.NET, JDBC
and Azure Storage/Service Bus connection strings (the secret is the password or key only); mobile-money and payment keys
as the providers' developer docs show them: Safaricom Daraja consumer secret, Lipa na M-Pesa passkey (64 hex), STK push
`Password` (base64 of shortcode + passkey + timestamp), B2C `SecurityCredential` (base64 of an RSA-2048 ciphertext, 344
characters); MTN MoMo `Ocp-Apim-Subscription-Key` and API key (32 hex); Paystack `sk_live_`/`sk_test_` (40 hex);
Flutterwave `FLWSECK-`/`FLWSECK_TEST-` (32 hex and `-X`); Razorpay key secrets (24 alphanumerics) beside their
`rzp_live_`/`rzp_test_` key ids; Twilio auth tokens (32 hex) beside `AC` account SIDs and API key secrets beside `SK`
SIDs (the SMS gateways); Telegram Bot API tokens (bot id `:` 35 characters, the secret the part after the colon); JWT
(RFC 7519/7515), HTTP Basic (RFC 7617) and Bearer (RFC 6750); PEM SEC1/PKCS#8 and OpenSSH keys, also inside a GCP
service-account JSON; TOTP seeds in Google Authenticator's `otpauth://` key URI and as its grouped setup key (RFC 4648
base32); session cookies as their frameworks set them; wallet PINs (M-Pesa, UPI, bKash, JazzCash, telebirr: 4-6 digits
after their label; an Iranian card's second PIN, 5-12). National ids (outside the target): Indian Aadhaar (Verhoeff),
Turkish TC Kimlik (its two digits), South African ID (date, gender, citizenship, Luhn), Israeli Teudat Zehut (1-2
weights), Emirates ID (784, birth year, Luhn), Saudi national id / iqama (1 or 2, Luhn) and Iranian national code (mod
11).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's password,
a cookie's value, a header's credential, a bot token's secret part, a PEM key's base64 body). A wallet PIN shared in a
chat is a credential like a password. Key ids (Razorpay key ids and Flutterwave public keys, which the providers put in
browsers; AWS access key ids, Twilio SIDs, MoMo API users, bot ids) are context, not the secret. Near misses are what
this domain holds that is neither secret nor personal: businesses' Paybill/Till numbers and USSD codes, M-Pesa receipt
codes, UPI RRNs (12 digits that fail Verhoeff), request and checkout ids, Daraja timestamps, amounts, masked values,
placeholders and the docs' X-filled keys, toll-free service lines, Luhn-invalid loan accounts, versions, element ids,
CSS/XPath selectors, CSRF field names, agent shops' coordinates, screen sizes, cache-busting hashes, order and loan
numbers, tracking numbers, bank BIC/IFSC codes, SMS sender ids and network codes: none identifies a person or opens
anything.
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
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 49
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"in_aadhaar", "tr_tckn", "za_id", "il_id", "ae_eid", "sa_nid", "ir_melli"})
"""National ids: written and reported, not held to the recall target."""

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
UPNUM = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
BASE32 = UPPER + "234567"
SCRIPT_DIGITS = {"deva": "०१२३४५६७८९", "beng": "০১২৩৪৫৬৭৮৯", "arab": "٠١٢٣٤٥٦٧٨٩", "pers": "۰۱۲۳۴۵۶۷۸۹"}
LANG_SCRIPT = {"hi": "deva", "mr": "deva", "ne": "deva", "bn": "beng", "ar": "arab", "fa": "pers", "ur": "pers",
               "ps": "pers"}


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


def native(text: str, lang: str) -> str:
    """`text` with its ASCII digits in the digits `lang`'s writers use (unchanged for Latin-digit languages)."""
    table = SCRIPT_DIGITS.get(LANG_SCRIPT.get(lang, ""), string.digits)
    return "".join(table[int(ch)] if ch in string.digits else ch for ch in text)


# ---- carrier helpers ------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _iso(rng: random.Random) -> str:
    return (f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z")


def _stamp(rng: random.Random) -> str:
    """A Daraja `Timestamp` (YYYYMMDDHHmmss)."""
    return _iso(rng).replace("-", "").replace("T", "").replace(":", "").rstrip("Z")


def _receipt(rng: random.Random) -> str:
    """An M-Pesa transaction code: ten upper-case letters and digits, a letter first."""
    return rng.choice(UPPER) + pick(rng, UPNUM, 9)


def _amount(rng: random.Random) -> int:
    return rng.choice([50, 100, 250, 500, 1000, 1500, 2000, 5000]) * rng.randint(1, 9)


# ---- JSON carriers --------------------------------------------------------------------------------------------

def c_daraja(rng: random.Random, snip: str, _s: str) -> str:
    cb = {"MerchantRequestID": f"{rng.randint(10000, 99999)}-{rng.randint(10**7, 10**8 - 1)}-1",
          "CheckoutRequestID": f"ws_CO_{_stamp(rng)}{digits(rng, 4)}", "ResultCode": 0,
          "ResultDesc": "The service request is processed successfully.",
          "CallbackMetadata": {"Item": [{"Name": "Amount", "Value": _amount(rng)},
                                        {"Name": "MpesaReceiptNumber", "Value": _receipt(rng)}]}}
    return _dump({"Body": {"stkCallback": cb}, "agent_note": snip})


def c_momo(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"amount": str(_amount(rng)), "currency": rng.choice(["UGX", "GHS", "XAF", "RWF", "ZMW"]),
                  "externalId": digits(rng, 9), "payer": {"partyIdType": "MSISDN", "partyId": "2567*****21"},
                  "payerMessage": snip, "payeeNote": "loan repayment"})


def c_flutterwave(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"event": "charge.completed", "data": {
        "id": rng.randint(10**6, 10**7), "tx_ref": f"rem-{pick(rng, HEX, 10)}", "flw_ref": f"FLW{digits(rng, 12)}",
        "amount": _amount(rng), "currency": rng.choice(["NGN", "GHS", "KES", "XOF"]), "status": "successful",
        "narration": snip}})


def c_paystack(rng: random.Random, snip: str, _s: str) -> str:
    field = {"display_name": "Note", "variable_name": "note", "value": snip}
    return _dump({"event": "charge.success", "data": {
        "reference": pick(rng, LOWNUM, 12), "amount": _amount(rng) * 100, "currency": rng.choice(["NGN", "GHS", "ZAR"]),
        "channel": "card", "metadata": {"custom_fields": [field]}}})


def c_razorpay(rng: random.Random, snip: str, _s: str) -> str:
    payment = {"id": "pay_" + pick(rng, ALNUM, 14), "amount": _amount(rng) * 100, "currency": "INR", "method": "upi",
               "notes": {"remark": snip}}
    return _dump({"entity": "event", "event": "payment.captured", "payload": {"payment": {"entity": payment}}})


def c_kyc(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"application_id": f"KYC-{digits(rng, 8)}", "step": rng.choice(["identity", "selfie", "address"]),
                  "status": "manual_review", "submitted_at": _iso(rng), "reviewer_note": snip})


def c_sms_log(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"gateway": "smpp", "message_id": pick(rng, HEX, 16), "dlr": "DELIVRD",
                  "network_code": rng.choice(["63902", "62130", "41001", "47001"]), "body": snip})


def c_whatsapp(rng: random.Random, snip: str, _s: str) -> str:
    msg = {"id": "wamid." + pick(rng, URLSAFE, 32), "timestamp": str(rng.randint(1_700_000_000, 1_730_000_000)),
           "type": "text", "text": {"body": snip}}
    return _dump({"object": "whatsapp_business_account", "entry": [{"id": digits(rng, 15), "changes": [
        {"value": {"messaging_product": "whatsapp", "messages": [msg]}, "field": "messages"}]}]})


def c_tool(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"role": "tool", "tool_call_id": "call_" + pick(rng, ALNUM, 24),
                  "name": rng.choice(["wallet_lookup", "kyc_fetch", "loan_status", "agent_float"]), "content": snip})


def c_collection(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"loan_id": f"LN{digits(rng, 10)}", "dpd": rng.randint(1, 90),
                  "outcome": rng.choice(["PTP", "RTP", "NO_CONTACT"]), "collector": f"col-{digits(rng, 3)}",
                  "note": snip})


def c_ledger(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"agent_till": digits(rng, 6), "txn_id": _receipt(rng), "type": rng.choice(["CASH_IN", "CASH_OUT"]),
                  "amount": _amount(rng), "float_after": _amount(rng) * 10, "memo": snip})


def c_chat(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"conversation_id": _uuid(rng), "parts": [
        {"author": "user", "created_at": _iso(rng), "body": snip}]})


def c_ussd(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"sessionId": "ATUid_" + pick(rng, HEX, 32), "serviceCode": f"*384*{rng.randint(10, 9999)}#",
                  "networkCode": rng.choice(["63902", "63903", "64110"]), "text": snip})


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "daraja_callback": c_daraja, "momo_request": c_momo, "flutterwave_event": c_flutterwave,
    "paystack_event": c_paystack, "razorpay_event": c_razorpay, "kyc_record": c_kyc, "sms_gateway_json": c_sms_log,
    "whatsapp_webhook": c_whatsapp, "tool_result": c_tool, "collection_crm": c_collection, "ledger_row": c_ledger,
    "chat_part": c_chat, "ussd_callback": c_ussd}


# ---- text carriers --------------------------------------------------------------------------------------------

GREETINGS = {"hi": "नमस्ते! आपके खाते की जानकारी:", "bn": "নমস্কার! আপনার অ্যাকাউন্টের তথ্য:",
             "ur": "السلام علیکم! آپ کے اکاؤنٹ کی تفصیل:", "ar": "مرحباً، هذه تفاصيل حسابك:",
             "fa": "سلام، جزئیات حساب شما:", "tr": "Merhaba, hesap bilgileriniz:", "he": "שלום, פרטי החשבון שלך:",
             "sw": "Habari! Maelezo ya akaunti yako:", "am": "ሰላም! የመለያዎ ዝርዝር፦", "ha": "Sannu! Bayanan asusunka:",
             "yo": "Ẹ n lẹ! Àlàyé àkọọ́lẹ̀ rẹ:", "ne": "नमस्ते! तपाईंको खाताको विवरण:",
             "fr": "Bonjour, voici les détails de votre compte :", "en": "Hi! Here are your account details:"}


def t_smpp(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_iso(rng)} INFO smpp.submit_sm seq={rng.randint(1, 99999)} src=INFOSMS dcs=8 "
            f'short_message="{snip}"')


def t_ussd(rng: random.Random, snip: str, _s: str) -> str:
    return f"[{_iso(rng)}] ussd session={pick(rng, HEX, 12)} code=*{rng.randint(100, 999)}# step=4 input={snip}"


def t_agent_message(rng: random.Random, snip: str, _s: str) -> str:
    lang = rng.choice(list(GREETINGS))
    return f"{GREETINGS[lang]}\n{snip}\n— {rng.choice(['PesaLend', 'RemitHub', 'TakaPay', 'SafiCash'])}"


def t_ledger_csv(rng: random.Random, snip: str, _s: str) -> str:
    memo = snip.replace('"', '""')
    return f'date,till,type,amount,memo\n{_iso(rng)[:10]},{digits(rng, 6)},CASH_OUT,{_amount(rng)},"{memo}"\n'


def t_call_note(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Collection call — loan LN{digits(rng, 10)}, DPD {rng.randint(1, 90)}\n"
            f"Outcome: promise to pay by {_iso(rng)[:10]}\nNotes: {snip}\n")


def t_http(rng: random.Random, snip: str, _s: str) -> str:
    host = rng.choice(["api.wallet-gw.example", "lend-core.internal", "remit-api.example.net"])
    return (f"POST /v1/{rng.choice(['disburse', 'collect', 'kyc/verify'])} HTTP/1.1\nHost: {host}\n"
            f"Content-Type: application/json\nX-Request-ID: {_uuid(rng)}\n{snip}\n")


def t_app_log(rng: random.Random, snip: str, _s: str) -> str:
    mod = rng.choice(["kyc", "disburse", "collect", "float"])
    return f"{_iso(rng)} ERROR [lending.{mod}:{rng.randint(20, 400)}] upstream rejected; context: {snip}"


def t_env(rng: random.Random, snip: str, _s: str) -> str:
    return f"# {rng.choice(['wallet gateway', 'sms', 'remittance'])} — copied from the ops vault\n{snip}\n"


def t_ticket(rng: random.Random, snip: str, _s: str) -> str:
    return (f"### Ticket #{rng.randint(1000, 99999)} — {rng.choice(['failed cash-out', 'KYC stuck', 'loan top-up'])}"
            f"\n\n**Channel:** WhatsApp  \n**Priority:** P{rng.randint(1, 3)}\n\n> {snip}\n")


def t_transcript(rng: random.Random, snip: str, _s: str) -> str:
    h, m = rng.randint(7, 21), rng.randint(0, 58)
    return f"[{h:02d}:{m:02d}] customer: {snip}\n[{h:02d}:{m + 1:02d}] agent: Thank you, checking now."


def t_email(rng: random.Random, snip: str, _s: str) -> str:
    subject = rng.choice(["settlement file", "corridor onboarding", "float top-up"])
    return f"From: ops@partner-bank.example\nSubject: Re: {subject}\n\n{snip}\n\n-- \nSettlement operations\n"


def t_yaml(rng: random.Random, snip: str, _s: str) -> str:
    return (f"wallet:\n  provider: {rng.choice(['mpesa', 'momo', 'bkash', 'upi'])}\n  sandbox: false\n---\n"
            f"{snip}\n")


def t_ocr(rng: random.Random, snip: str, _s: str) -> str:
    return f"--- OCR page {rng.randint(1, 4)} (confidence 0.{rng.randint(80, 99)}) ---\n{snip}\n--- end of page ---"


def t_wa_export(rng: random.Random, snip: str, _s: str) -> str:
    day, month, hour, minute = rng.randint(1, 28), rng.randint(1, 12), rng.randint(7, 21), rng.randint(10, 59)
    return f"{day:02d}/{month:02d}/2024, {hour}:{minute} - Customer: {snip}"


TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "smpp_log": t_smpp, "ussd_log": t_ussd, "agent_message": t_agent_message, "ledger_csv": t_ledger_csv,
    "call_note": t_call_note, "http_dump": t_http, "app_log": t_app_log, "env_file": t_env, "ticket_md": t_ticket,
    "chat_transcript": t_transcript, "partner_email": t_email, "values_yaml": t_yaml, "ocr_text": t_ocr,
    "whatsapp_export": t_wa_export}


# ---- passwords ------------------------------------------------------------------------------------------------

PW_LABELS = [("Password", "en"), ("mot de passe", "fr"), ("Passwort", "de"), ("senha", "pt"), ("contraseña", "es"),
             ("पासवर्ड", "hi"), ("पासवर्ड", "ne"), ("पासवर्ड", "mr"), ("পাসওয়ার্ড", "bn"), ("கடவுச்சொல்", "ta"),
             ("పాస్‌వర్డ్", "te"), ("પાસવર્ડ", "gu"), ("ਪਾਸਵਰਡ", "pa"), ("پاس ورڈ", "ur"), ("كلمة المرور", "ar"),
             ("رمز عبور", "fa"), ("پټنوم", "ps"), ("şifre", "tr"), ("parola", "tr"), ("סיסמה", "he"),
             ("nenosiri", "sw"), ("የይለፍ ቃል", "am"), ("kalmar sirri", "ha"), ("ọ̀rọ̀ aṣínà", "yo"),
             ("okwuntughe", "ig"), ("furaha sirta", "so"), ("iphasiwedi", "zu"), ("ijambo ry'ibanga", "rw")]
PW_SENTENCES = ["आपका अस्थायी पासवर्ड {v} है", "Nenosiri lako la muda ni {v}", "Votre mot de passe temporaire est {v}",
                "كلمة المرور المؤقتة: {v}", "Geçici şifreniz: {v}", "آپ کا عارضی پاس ورڈ {v} ہے",
                "আপনার অস্থায়ী পাসওয়ার্ড {v}", "رمز عبور موقت شما: {v}", "הסיסמה הזמנית שלך: {v}",
                "ጊዜያዊ የይለፍ ቃልዎ: {v}", "Kalmar sirrinku ta wucin gadi ita ce {v}", "तपाईंको अस्थायी पासवर्ड {v} हो",
                "agent portal login: user agent_{n} / pass {v}", "Your temporary password is {v}"]
PLACES = ["Nairobi", "Karachi", "Lagos", "Dhaka", "Kampala", "Lahore", "Addis", "Kano", "Mombasa", "Chittagong",
          "Izmir", "Haifa", "Tabriz", "Pokhara", "Accra", "Ibadan"]


def password_value(rng: random.Random) -> str:
    """A strong random password or a human one (place, year, symbol), no quotes or backslashes."""
    if rng.random() < 0.5:
        return pick(rng, ALNUM + "!#$%&*+-=?@^_~", rng.randint(12, 20))
    return f"{rng.choice(PLACES)}{rng.choice('@#!$')}{rng.randint(1970, 2024)}{pick(rng, '!?*', rng.randint(0, 2))}"


def v_password(rng: random.Random, i: int) -> Value:
    v = password_value(rng)
    if i % 4 == 3:
        return "sentence", v, rng.choice(PW_SENTENCES).format(v=v, n=digits(rng, 4)), False
    label, lang = PW_LABELS[i % len(PW_LABELS)]
    tpl = rng.choice(["{l}: {v}", "{l} = {v}", "{l} — {v}", "{l}：{v}"])
    return f"label_{lang}", v, tpl.format(l=label, v=v), False


# ---- AWS ------------------------------------------------------------------------------------------------------

AWS_FORMS = ["[kyc-uploader]\naws_access_key_id = {k}\naws_secret_access_key = {s}",
             "AWS_ACCESS_KEY_ID={k}\nAWS_SECRET_ACCESS_KEY={s}",
             '{{"AccessKey": {{"UserName": "kyc-s3-writer", "AccessKeyId": "{k}", "Status": "Active", '
             '"SecretAccessKey": "{s}"}}}}',
             '{{"Credentials": {{"AccessKeyId": "{k}", "SecretAccessKey": "{s}", '
             '"Expiration": "2024-06-01T00:00:00Z"}}}}',
             "s3 = boto3.client('s3', aws_access_key_id='{k}', aws_secret_access_key='{s}')",
             "creds for the selfie bucket: {k} / {s}", "مفتاح الوصول السري لـ AWS: {s}",
             "AWS gizli erişim anahtarı: {s}", "AWS सीक्रेट एक्सेस की: {s}", "aws secret (id {k}): {s}"]


def v_aws_secret(rng: random.Random, i: int) -> Value:
    form = AWS_FORMS[i % len(AWS_FORMS)]
    key_id = ("ASIA" if "Credentials" in form else "AKIA") + pick(rng, BASE32, 16)
    secret = pick(rng, B64, 40)
    return f"aws_{i % len(AWS_FORMS)}", secret, form.format(k=key_id, s=secret), False


# ---- webhooks -------------------------------------------------------------------------------------------------

GCHAT_KEY = "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"
"""The API key Google Chat's incoming-webhook docs print for every space: public, not the secret."""


def webhook_url(rng: random.Random, n: int) -> tuple[str, str, str]:
    """(style, token, url) for the `n`th webhook service."""
    if n == 0:
        tok = pick(rng, ALNUM, 24)
        ids = f"T{pick(rng, UPNUM, rng.randint(8, 10))}/B{pick(rng, UPNUM, rng.randint(8, 10))}"
        return "slack", tok, f"https://hooks.slack.com/services/{ids}/{tok}"
    if n == 1:
        tok = pick(rng, URLSAFE, 68)
        host = rng.choice(["discord.com", "discordapp.com"])
        return "discord", tok, f"https://{host}/api/webhooks/{digits(rng, 19)}/{tok}"
    if n == 2:
        tok = pick(rng, HEX, 32)
        return "teams", tok, (f"https://{rng.choice(['remithub', 'pesalend'])}.webhook.office.com/webhookb2/"
                              f"{_uuid(rng)}@{_uuid(rng)}/IncomingWebhook/{tok}/{_uuid(rng)}")
    if n == 3:
        tok = pick(rng, URLSAFE, 43)
        return "power_automate", tok, (
            f"https://prod-{rng.randint(10, 99)}.{rng.choice(['westeurope', 'centralindia', 'uaenorth'])}"
            f".logic.azure.com:443/workflows/{pick(rng, HEX, 32)}/triggers/manual/paths/invoke?api-version=2016-06-01"
            f"&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}")
    if n == 4:
        tok = pick(rng, URLSAFE, 43)
        return "google_chat", tok, (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages"
                                    f"?key={GCHAT_KEY}&token={tok}")
    if n == 5:
        tok = pick(rng, LOWNUM, 26)
        return "mattermost", tok, f"https://chat.{rng.choice(['takapay', 'safiops'])}.example/hooks/{tok}"
    tok = pick(rng, LOWNUM, 7)
    return "zapier", tok, f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{tok}/"


WEBHOOK_LEADS = ["alerts go to {u}", "SLACK_WEBHOOK_URL={u}", "notify: {u}", "POST {u}", "webhook → {u}",
                 "ہیڈ آفس الرٹس: {u}", "إشعارات التسوية: {u}", "अलर्ट वेबहुक: {u}", "arifa za float: {u}"]


def v_webhook(rng: random.Random, i: int) -> Value:
    style, tok, url = webhook_url(rng, i % 7)
    return style, tok, rng.choice(WEBHOOK_LEADS).format(u=url), False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    v = "whsec_" + (pick(rng, HEX, 64) if i % 3 == 0 else pick(rng, ALNUM, 32))
    tpl = rng.choice(["STRIPE_WEBHOOK_SECRET={v}", "Signing secret: {v}", "endpoint_secret = '{v}'",
                      "> Ready! Your webhook signing secret is {v} (^C to quit)", "card funding webhook secret {v}",
                      "stripe.Webhook.construct_event(payload, sig_header, \"{v}\")", "سر توقيع الويب هوك: {v}"])
    return "cli" if i % 3 == 0 else "dashboard", v, tpl.format(v=v), False


# ---- connection strings ---------------------------------------------------------------------------------------

def _dbpw(rng: random.Random) -> str:
    return pick(rng, ALNUM + "-_.", rng.randint(14, 28))


def v_connection_string(rng: random.Random, i: int) -> Value:
    n = i % 8
    host = rng.choice(["ledger-db", "kyc-db.internal", "float-pg.prod", "loans-db.cluster-x1.eu-west-1.rds"])
    user = rng.choice(["ledger_rw", "kyc_app", "lending", "remit_svc"])
    if n == 6:
        key = base64.b64encode(rng.randbytes(64)).decode()
        return "azure_storage", key, (f"DefaultEndpointsProtocol=https;AccountName=kycdocs{digits(rng, 3)};"
                                      f"AccountKey={key};EndpointSuffix=core.windows.net"), False
    if n == 7:
        key = base64.b64encode(rng.randbytes(32)).decode()
        return "service_bus", key, (f"Endpoint=sb://remit-{digits(rng, 3)}.servicebus.windows.net/;"
                                    f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key}"), False
    pw = _dbpw(rng)
    forms = [f"postgresql://{user}:{pw}@{host}:5432/ledger", f"mysql://{user}:{pw}@{host}:3306/loans",
             f"mongodb+srv://{user}:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/kyc?retryWrites=true",
             f"rediss://default:{pw}@{host}:6380/0", f"Server={host};Database=Remit;User Id={user};Password={pw};",
             f"jdbc:postgresql://{host}:5432/loans?user={user}&password={pw}"]
    return ["postgres", "mysql", "mongodb", "redis", "adonet", "jdbc"][n], pw, rng.choice(
        ["DATABASE_URL={c}", "conn: {c}", "{c}", "ڈیٹا بیس: {c}", "connection string ni {c}"]).format(c=forms[n]), False


# ---- labelled keys, disguised secrets -------------------------------------------------------------------------

KEY_LABELS = ["API key: {v}", "Secret key = {v}", "app_secret: {v}", "Integrity Salt: {v}", "hashKey={v}",
              "X-API-Key: {v}", "مفتاح API: {v}", "API कुंजी: {v}", "API anahtarı: {v}", "کلید API: {v}",
              "ufunguo wa API: {v}", "clé API : {v}", "מפתח API: {v}", "API কী: {v}", "API کی: {v}",
              "የAPI ቁልፍ: {v}", "makullin API: {v}", "appKey: {v}", "api_secret = \"{v}\""]


def labelled_key_value(rng: random.Random) -> str:
    return rng.choice([pick(rng, ALNUM, 32), pick(rng, HEX, 40), pick(rng, ALNUM, 48), pick(rng, UPNUM, 24),
                       pick(rng, ALNUM, 50)])


def v_labelled_key(rng: random.Random, i: int) -> Value:
    v = labelled_key_value(rng)
    return f"label_{i % len(KEY_LABELS)}", v, KEY_LABELS[i % len(KEY_LABELS)].format(v=v), False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def _disguise_base(rng: random.Random) -> tuple[str, str]:
    """(label, plain secret) for a disguised case: a payment key, a passkey or a password."""
    return rng.choice([("Paystack secret", "sk_live_" + pick(rng, HEX, 40)),
                       ("Flutterwave key", f"FLWSECK-{pick(rng, HEX, 32)}-X"),
                       ("passkey", pick(rng, HEX, 64)), ("API key", pick(rng, ALNUM, 32)),
                       ("password", password_value(rng))])


def v_disguised(rng: random.Random, i: int) -> Value:
    label, plain = _disguise_base(rng)
    n = i % 4
    if n == 0:
        at = rng.randint(3, len(plain) - 3)
        v = plain[:at] + rng.choice(ZW) + plain[at:]
        return "zero_width", v, f"{label}: {v}", False
    if n == 1:
        v = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in plain)
        return "fullwidth", v, f"{label}：{v}", False
    if n == 2:
        v = "".join(f"%{ord(c):02X}" if rng.random() < 0.6 else c for c in plain)
        v = v if "%" in v else f"%{ord(plain[0]):02X}" + plain[1:]
        return "percent", v, f"callback?{label.replace(' ', '_')}={v}&ok=1", False
    v = "".join(f"\\u{ord(c):04x}" if k % 2 == 0 else c for k, c in enumerate(plain))
    return "json_u_escape", v, f'payload={{"{label}": "{v}"}}', True


# ---- e-mail ---------------------------------------------------------------------------------------------------

LOCALS = ["wanjiku.kamau", "rahim.uddin", "ayesha.khan", "chinedu.okafor", "tigist.alemu", "aminu.bello",
          "fatma.yilmaz", "yossi.cohen", "reza.ahmadi", "sita.sharma", "priya.nair", "otieno.j", "farhana_akter",
          "bilal.qureshi", "adebayo.o", "hiwot.t", "mehmet.kaya", "noa.levi", "sanjay.k", "halima.musa"]
MAIL_DOMAINS = ["gmail.com", "yahoo.com", "outlook.com", "yahoo.co.in", "rediffmail.com", "hotmail.co.uk",
                "ymail.com", "icloud.com", "walla.co.il", "safaricom.co.ke", "proton.me", "yandex.com"]
IDN_MAILS = ["सीता@डाटामेल.भारत", "राम.शर्मा@डाटामेल.भारत", "مستخدم@مثال.مصر", "rené.diallo@exemple.sn",
             "çağrı.öztürk@örnek.com.tr", "ብርሃኑ@example.et"]
MAIL_CTX = [("email", "en"), ("courriel", "fr"), ("ईमेल", "hi"), ("ইমেইল", "bn"), ("ای میل", "ur"),
            ("البريد الإلكتروني", "ar"), ("ایمیل", "fa"), ("e-posta", "tr"), ('דוא"ל', "he"), ("barua pepe", "sw"),
            ("ኢሜይል", "am"), ("imel", "ha"), ("imeeli", "yo"), ("इमेल", "ne"), ("E-Mail", "de"), ("e-mail", "pt")]


def v_email(rng: random.Random, i: int) -> Value:
    if i % 10 == 9:
        v = IDN_MAILS[i // 10 % len(IDN_MAILS)]
    else:
        sep = rng.choice(["", str(rng.randint(1, 99)), "+remit"])
        v = f"{rng.choice(LOCALS)}{sep}@{rng.choice(MAIL_DOMAINS)}"
    ctx, lang = MAIL_CTX[i % len(MAIL_CTX)]
    tpl = rng.choice(["{c}: {v}", "{c} {v}", "KYC {c} — {v}", "<{v}>", "mailto:{v}", "{c} = {v}"])
    return f"{lang}_{'idn' if i % 10 == 9 else 'ascii'}", v, tpl.format(c=ctx, v=v), False


# ---- phones ---------------------------------------------------------------------------------------------------

PhoneForm = tuple[str, Callable[[random.Random], str]]


def phone_case(rng: random.Random, i: int, forms: list[PhoneForm], ctx: list[tuple[str, str]],
               native_share: bool = False) -> Value:
    """A phone of the `i`th form after a context word; every fourth one in the context language's digits when
    `native_share` (and the language has its own)."""
    style, make = forms[i % len(forms)]
    word, lang = ctx[i // len(forms) % len(ctx)] if len(ctx) > 1 else ctx[0]
    number = make(rng)
    if native_share and i % 4 == 1 and lang in LANG_SCRIPT:
        number, style = native(number, lang), f"{style}_native"
    tpl = rng.choice(["{c}: {n}", "{c} {n}", "{c} — {n}", "{n} ({c})", "{c}：{n}"])
    return f"{style}_{lang}", number, tpl.format(c=word, n=number), False


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """NANP area code and exchange (NXX: not N11; the area not N00, 37X, 96X or a toll-free 8XX; the exchange not
    555) and line."""
    while True:
        area = f"{rng.randint(2, 9)}{rng.randint(0, 8)}{rng.randint(0, 9)}"
        exch = f"{rng.randint(2, 9)}{digits(rng, 2)}"
        special = area[1:] in ("11", "00") or area[:2] in ("37", "96") or (area[0] == "8" and area[1] == area[2])
        if not special and exch[1:] != "11" and exch != "555":
            return area, exch, digits(rng, 4)


US_FORMS: list[PhoneForm] = [("paren", lambda r: "({}) {}-{}".format(*_nanp(r))),
                             ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
                             ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))),
                             ("intl", lambda r: "+1 {} {} {}".format(*_nanp(r))),
                             ("intl_dash", lambda r: "+1-{}-{}-{}".format(*_nanp(r))),
                             ("one_paren", lambda r: "1 ({}) {}-{}".format(*_nanp(r)))]
US_CTX = [("cell", "en"), ("sender phone", "en"), ("call me at", "en"), ("celular", "es"), ("teléfono", "es"),
          ("cellulaire", "fr"), ("phone (US)", "en")]


def _uk_mobile(r: random.Random) -> str:
    while True:
        n = f"07{r.choice('1234579')}{digits(r, 2)} {digits(r, 6)}"
        if not n.startswith("07700 900"):
            return n


def _uk_geo(r: random.Random, code: str, first: str, reserved: str) -> str:
    while True:
        n = f"{code} {r.choice(first)}{digits(r, 2 if code == '0161' else 3)} {digits(r, 4)}"
        if not n.startswith(reserved):
            return n


UK_FORMS: list[PhoneForm] = [("mobile", _uk_mobile),
                             ("intl_mobile", lambda r: "+44 " + _uk_mobile(r)[1:]),
                             ("london", lambda r: _uk_geo(r, "020", "378", "020 7946 0")),
                             ("manchester", lambda r: _uk_geo(r, "0161", "2345789", "0161 496 0")),
                             ("intl_zero", lambda r: "+44 (0)" + _uk_geo(r, "020", "378", "020 7946 0")[1:]),
                             ("compact", lambda r: _uk_mobile(r).replace(" ", ""))]
UK_CTX = [("mobile", "en"), ("tel", "en"), ("ring me on", "en"), ("UK number", "en"), ("sender's mobile", "en"),
          ("Tel.", "en")]

FR_FICTION = ("019900", "026191", "035301", "046571", "053649", "063998", "097742")
"""ARCEP's numbers for fiction (01 99 00, 02 61 91, 03 53 01, 04 65 71, 05 36 49, 06 39 98, 09 77 42)."""


def _fr(r: random.Random, first: str) -> str:
    while True:
        n = "0" + r.choice(first) + digits(r, 8)
        if n[:6] not in FR_FICTION:
            return n


def _pairs(n: str, sep: str) -> str:
    return sep.join(n[k:k + 2] for k in range(0, 10, 2))


FR_FORMS: list[PhoneForm] = [("mobile", lambda r: _pairs(_fr(r, "67"), " ")),
                             ("dots", lambda r: _pairs(_fr(r, "67"), ".")),
                             ("geo", lambda r: _pairs(_fr(r, "12345"), " ")),
                             ("intl", lambda r: "+33 " + _pairs(_fr(r, "67"), " ")[1:]),
                             ("intl_zero", lambda r: "+33 (0)" + _pairs(_fr(r, "679"), " ")[1:]),
                             ("compact", lambda r: _fr(r, "67"))]
FR_CTX = [("portable", "fr"), ("tél.", "fr"), ("téléphone", "fr"), ("numéro de mobile", "fr"),
          ("joignable au", "fr"), ("WhatsApp", "fr")]

DE_FORMS: list[PhoneForm] = [("mobile_015", lambda r: f"015{r.choice('1279')} {digits(r, 4)} {digits(r, 4)}"),
                             ("mobile_017", lambda r: f"017{r.randint(0, 9)} {digits(r, 7)}"),
                             ("mobile_016", lambda r: f"016{r.choice('023')} {digits(r, 7)}"),
                             ("intl", lambda r: f"+49 15{r.choice('1279')} {digits(r, 8)}"),
                             ("intl_zero", lambda r: f"+49 (0)17{r.randint(0, 9)} {digits(r, 7)}"),
                             ("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
                             ("munich", lambda r: f"089 {r.randint(2, 9)}{digits(r, 6)}")]
DE_CTX = [("Handy", "de"), ("Mobil", "de"), ("Tel.", "de"), ("Telefon", "de"), ("erreichbar unter", "de"),
          ("Rufnummer", "de")]


def _in_mobile(r: random.Random) -> str:
    return r.choice("6789") + digits(r, 9)


IN_FORMS: list[PhoneForm] = [("intl_space", lambda r: "+91 " + (lambda n: f"{n[:5]} {n[5:]}")(_in_mobile(r))),
                             ("zero", lambda r: "0" + (lambda n: f"{n[:5]} {n[5:]}")(_in_mobile(r))),
                             ("dash", lambda r: (lambda n: f"{n[:5]}-{n[5:]}")(_in_mobile(r))),
                             ("intl_dash", lambda r: "+91-" + _in_mobile(r)),
                             ("bare", _in_mobile),
                             ("delhi", lambda r: f"011-{r.choice('2346')}{digits(r, 3)} {digits(r, 4)}"),
                             ("mumbai", lambda r: f"022 {r.choice('2346')}{digits(r, 3)} {digits(r, 4)}")]
IN_CTX = [("मोबाइल नंबर", "hi"), ("फ़ोन", "hi"), ("मोबाईल क्रमांक", "mr"), ("মোবাইল নম্বর", "bn"),
          ("கைபேசி எண்", "ta"), ("మొబైల్ నంబర్", "te"), ("મોબાઇલ નંબર", "gu"), ("ਮੋਬਾਈਲ ਨੰਬਰ", "pa"),
          ("mobile no.", "en"), ("UPI linked mobile", "en")]

KE_PREFIX = ["70", "71", "72", "74", "757", "758", "759", "768", "769", "79", "73", "750", "78", "10", "11"]


def _ke(r: random.Random) -> str:
    p = r.choice(KE_PREFIX)
    return p + digits(r, 9 - len(p))


KE_FORMS: list[PhoneForm] = [("zero", lambda r: (lambda n: f"0{n[:3]} {n[3:6]} {n[6:]}")(_ke(r))),
                             ("intl", lambda r: (lambda n: f"+254 {n[:3]} {n[3:6]} {n[6:]}")(_ke(r))),
                             ("msisdn", lambda r: "254" + _ke(r)),
                             ("compact", lambda r: "0" + _ke(r)),
                             ("intl_compact", lambda r: "+254" + _ke(r))]
KE_CTX = [("nambari ya simu", "sw"), ("simu", "sw"), ("nipigie kwa", "sw"), ("M-PESA number", "en"),
          ("namba ya M-PESA", "sw"), ("phone", "en")]

NG_PREFIX = ["703", "706", "803", "806", "810", "813", "814", "816", "903", "906", "805", "807", "811", "815", "905",
             "802", "808", "812", "701", "902", "907", "901", "809", "817", "818", "909", "908"]


def _ng(r: random.Random) -> str:
    return r.choice(NG_PREFIX) + digits(r, 7)


NG_FORMS: list[PhoneForm] = [("zero", lambda r: (lambda n: f"0{n[:3]} {n[3:6]} {n[6:]}")(_ng(r))),
                             ("intl", lambda r: (lambda n: f"+234 {n[:3]} {n[3:6]} {n[6:]}")(_ng(r))),
                             ("intl_compact", lambda r: "+234" + _ng(r)),
                             ("compact", lambda r: "0" + _ng(r)),
                             ("dash", lambda r: (lambda n: f"0{n[:3]}-{n[3:6]}-{n[6:]}")(_ng(r)))]
NG_CTX = [("lambar waya", "ha"), ("nọ́mbà fóònù", "yo"), ("nọmba ekwentị", "ig"), ("phone", "en"),
          ("lambar wayar", "ha"), ("GSM", "en")]


def _pk(r: random.Random) -> str:
    return f"3{r.randint(0, 4)}{r.randint(0, 9)}" + digits(r, 7)


PK_FORMS: list[PhoneForm] = [("zero", lambda r: (lambda n: f"0{n[:3]} {n[3:]}")(_pk(r))),
                             ("dash", lambda r: (lambda n: f"0{n[:3]}-{n[3:]}")(_pk(r))),
                             ("intl", lambda r: (lambda n: f"+92 {n[:3]} {n[3:]}")(_pk(r))),
                             ("intl_dash", lambda r: (lambda n: f"+92-{n[:3]}-{n[3:]}")(_pk(r))),
                             ("msisdn", lambda r: "92" + _pk(r))]
PK_CTX = [("موبائل نمبر", "ur"), ("فون نمبر", "ur"), ("JazzCash نمبر", "ur"), ("Easypaisa account", "en"),
          ("د موبایل شمېره", "ps"), ("mobile", "en")]


def _bd(r: random.Random) -> str:
    return f"1{r.randint(3, 9)}" + digits(r, 8)


BD_FORMS: list[PhoneForm] = [("dash", lambda r: (lambda n: f"0{n[:4]}-{n[4:]}")(_bd(r))),
                             ("compact", lambda r: "0" + _bd(r)),
                             ("intl", lambda r: (lambda n: f"+880 {n[:4]}-{n[4:]}")(_bd(r))),
                             ("intl_compact", lambda r: "+880" + _bd(r)),
                             ("space", lambda r: (lambda n: f"0{n[:4]} {n[4:7]} {n[7:]}")(_bd(r)))]
BD_CTX = [("মোবাইল নম্বর", "bn"), ("বিকাশ নম্বর", "bn"), ("ফোন", "bn"), ("bKash number", "en"),
          ("নগদ নম্বর", "bn"), ("mobile", "en")]


def phone_kind(forms: list[PhoneForm], ctx: list[tuple[str, str]], native_share: bool) -> Callable[
        [random.Random, int], Value]:
    """The value maker of one country's phones."""
    return lambda rng, i: phone_case(rng, i, forms, ctx, native_share)


# ---- SSN, cards, IBANs ----------------------------------------------------------------------------------------

def ssn_value(rng: random.Random) -> tuple[str, str, str]:
    """Area 001-899 but not 666, group 01-99, serial 0001-9999 (the SSA's rules); not the famous misused ones."""
    while True:
        area = f"{rng.randint(1, 899):03d}"
        ssn = (area, f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}")
        if area != "666" and "".join(ssn) not in ("078051120", "219099999", "123456789"):
            return ssn


SSN_CTX = ["SSN", "Social Security No.", "sender SSN", "Número de Seguro Social", "SSN (US sender KYC)",
           "social security number", "numéro de sécurité sociale (US)", "SSN/ITIN field"]


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = ssn_value(rng)
    style = ["dash", "space", "compact"][i % 3]
    v = {"dash": f"{a}-{g}-{s}", "space": f"{a} {g} {s}", "compact": f"{a}{g}{s}"}[style]
    tpl = rng.choice(["{c}: {v}", "{c} {v}", "{c} — {v}", "| {c} | {v} |", "{c}={v}"])
    return style, v, tpl.format(c=SSN_CTX[i % len(SSN_CTX)], v=v), False


RUPAY = [(508500, 508999), (606985, 607984), (608001, 608500), (652150, 653149)]
VERVE = [(506099, 506198), (650002, 650027)]
SHETAB = ["603799", "589210", "610433", "621986", "603769", "627353", "502229"]


def _iin(rng: random.Random, brand: str) -> tuple[str, int]:
    """(IIN prefix, length) of `brand` (ISO/IEC 7812 ranges as the networks publish them)."""
    if brand in ("rupay", "verve"):
        lo, hi = rng.choice(RUPAY if brand == "rupay" else VERVE)
        return str(rng.randint(lo, hi)), 16 if brand == "rupay" else rng.choice([16, 19])
    return {"visa": ("4", 16), "mc": (str(rng.randint(51, 55)), 16), "mc2": (str(rng.randint(2221, 2720)), 16),
            "amex": (rng.choice(["34", "37"]), 15), "discover": (rng.choice(["6011", "65", "644", "649"]), 16),
            "jcb": (str(rng.randint(3528, 3589)), 16), "diners": ("36", 14), "unionpay": ("62", 16),
            "shetab": (rng.choice(SHETAB), 16)}[brand]


CARD_BRANDS = ["visa", "mc", "mc2", "amex", "discover", "jcb", "diners", "unionpay", "rupay", "verve", "shetab"]
CARD_CTX = [("Card number", "en"), ("कार्ड नंबर", "hi"), ("কার্ড নম্বর", "bn"), ("رقم البطاقة", "ar"),
            ("کارڈ نمبر", "ur"), ("kart numarası", "tr"), ("מספר כרטיס", "he"), ("nambari ya kadi", "sw"),
            ("numéro de carte", "fr"), ("lambar katin", "ha"), ("የካርድ ቁጥር", "am"), ("virtual card", "en")]


def card_number(rng: random.Random, brand: str) -> str:
    prefix, length = _iin(rng, brand)
    partial = prefix + digits(rng, length - len(prefix) - 1)
    return partial + luhn_digit(partial)


def v_card(rng: random.Random, i: int) -> Value:
    brand = CARD_BRANDS[i % len(CARD_BRANDS)]
    number = card_number(rng, brand)
    v = group_card(number, rng.choice([" ", "-", ""])) if len(number) <= 16 else group(number, 4, " ")
    if brand == "shetab":
        v = group(number, 4, rng.choice(["-", " "]))
        v = native(v, "fa") if i % 2 else v
        return brand, v, rng.choice(["شماره کارت: {v}", "کارت به کارت به {v}"]).format(v=v), False
    label = CARD_CTX[i // len(CARD_BRANDS) % len(CARD_CTX)][0]
    tpl = rng.choice(["{c}: {v}", "{c} {v}", "{c} — {v} exp {m:02d}/{y}", "{c} (for the payout): {v}"])
    return brand, v, tpl.format(c=label, v=v, m=rng.randint(1, 12), y=rng.randint(25, 30)), False


IBAN_BBAN = {"PK": "4a16c", "AE": "3n16n", "SA": "2n18c", "TR": "5n1n16c", "IL": "3n3n13n", "EG": "4n4n17n",
             "JO": "4a4n18c", "QA": "4a21c", "KW": "4a22c", "BH": "4a14c", "LB": "4n20c", "TN": "2n3n13n2n",
             "MR": "5n5n11n2n", "GB": "4a6n8n", "DE": "8n10n", "FR": "5n5n11c2n", "IR": "24n"}
IBAN_CTX = ["IBAN", "رقم الآيبان", "آئی بین نمبر", "IBAN numarası", "מספר IBAN", "beneficiary IBAN",
            "IBAN du bénéficiaire", "Bankverbindung", "IBAN ya mpokeaji", "حساب المستفيد"]


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    body = bban(rng, IBAN_BBAN[country])
    compact = country + iban_check(country, body) + body
    v = group(compact, 4, " ") if i % 2 else compact
    ctx = "شماره شبا" if country == "IR" else IBAN_CTX[i // len(IBAN_BBAN) % len(IBAN_CTX)]
    tpl = rng.choice(["{c}: {v}", "{c} {v}", "{c} — {v}", "{c}={v}"])
    return f"{country}_{'print' if i % 2 else 'compact'}", v, tpl.format(c=ctx, v=v), False


# ---- tokens: JWT, HTTP auth, provider keys --------------------------------------------------------------------

def jwt_value(rng: random.Random) -> str:
    """A JWS compact JWT (RFC 7515): MoMo-style RS256 access tokens or HS256 app sessions."""
    if rng.random() < 0.5:
        header, claims = {"alg": "RS256", "typ": "JWT"}, {
            "clientId": _uuid(rng), "expires": _iso(rng), "sessionId": _uuid(rng)}
        sig = rng.randbytes(256)
    else:
        header, claims = {"alg": "HS256", "typ": "JWT"}, {
            "sub": f"agent-{digits(rng, 4)}", "iss": "https://auth.pesalend.example", "scope": "loans:write",
            "exp": rng.randint(1_700_000_000, 1_800_000_000)}
        sig = rng.randbytes(32)
    parts = [json.dumps(header, separators=(",", ":")).encode(), json.dumps(claims, separators=(",", ":")).encode()]
    return ".".join(b64url(p) for p in parts) + "." + b64url(sig)


def v_jwt(rng: random.Random, i: int) -> Value:
    v = jwt_value(rng)
    tpl = ["Authorization: Bearer {v}", '{{"access_token": "{v}", "token_type": "access_token", "expires_in": 3600}}',
           "token={v}", "X-Auth-Token: {v}", "app session (copied from the phone): {v}", "ٹوکن: {v}"][i % 6]
    return f"jwt_{i % 6}", v, tpl.format(v=v), False


def v_auth_header(rng: random.Random, i: int) -> Value:
    n = i % 4
    if n == 0:
        v = base64.b64encode(f"{pick(rng, ALNUM, 48)}:{pick(rng, ALNUM, 64)}".encode()).decode()
        lead = "GET /oauth/v1/generate?grant_type=client_credentials"
        return "daraja_basic", v, f"{lead}\nAuthorization: Basic {v}", False
    if n == 1:
        v = base64.b64encode(f"{_uuid(rng)}:{pick(rng, HEX, 32)}".encode()).decode()
        return "momo_basic", v, f"POST /collection/token/\nAuthorization: Basic {v}", False
    if n == 2:
        v = pick(rng, ALNUM, 28)
        return "daraja_bearer", v, f"Authorization: Bearer {v}", False
    v = base64.b64encode(f"{rng.choice(['agent', 'ops', 'b2c_api'])}:{password_value(rng)}".encode()).decode()
    return "basic", v, rng.choice(["Authorization: Basic {v}", "curl -H 'Authorization: Basic {v}'"]).format(v=v), False


def v_daraja(rng: random.Random, i: int) -> Value:
    """Safaricom Daraja credentials: passkey, consumer secret, STK `Password`, B2C `SecurityCredential`."""
    n = i % 4
    if n == 0:
        v = pick(rng, HEX, 64)
        return "passkey", v, rng.choice(["MPESA_PASSKEY={v}", "Lipa Na M-Pesa Online Passkey: {v}",
                                         "passkey = \"{v}\""]).format(v=v), False
    if n == 1:
        v = pick(rng, ALNUM, rng.choice([32, 64]))
        return "consumer_secret", v, rng.choice(["MPESA_CONSUMER_SECRET={v}", "Consumer Secret: {v}",
                                                 "consumer_key={k}\nconsumer_secret={v}"]).format(
            v=v, k=pick(rng, ALNUM, 48)), False
    if n == 2:
        shortcode, stamp = str(rng.randint(100000, 999999)), _stamp(rng)
        v = base64.b64encode(f"{shortcode}{pick(rng, HEX, 64)}{stamp}".encode()).decode()
        return "stk_password", v, _dump({"BusinessShortCode": shortcode, "Password": v, "Timestamp": stamp,
                                         "TransactionType": "CustomerPayBillOnline", "Amount": _amount(rng)}), False
    v = base64.b64encode(rng.randbytes(256)).decode()
    return "security_credential", v, _dump({"InitiatorName": "apiop_b2c", "SecurityCredential": v,
                                            "CommandID": "BusinessPayment", "Amount": _amount(rng)}), False


def v_momo(rng: random.Random, i: int) -> Value:
    v = pick(rng, HEX, 32)
    tpl = ["Ocp-Apim-Subscription-Key: {v}", '{{"apiKey": "{v}"}}', "MOMO_COLLECTION_PRIMARY_KEY={v}",
           "X-Reference-Id: {u}\nOcp-Apim-Subscription-Key: {v}", "api user {u} / api key {v}"][i % 5]
    return f"momo_{i % 5}", v, tpl.format(v=v, u=_uuid(rng)), False


def v_paystack(rng: random.Random, i: int) -> Value:
    v = rng.choice(["sk_live_", "sk_test_"]) + pick(rng, HEX, 40)
    tpl = ["Authorization: Bearer {v}", "PAYSTACK_SECRET_KEY={v}", "const paystack = require('paystack')('{v}');",
           "our live key is {v}", "المفتاح السري: {v}", "secret_key: {v}"][i % 6]
    return f"paystack_{i % 6}", v, tpl.format(v=v), False


def v_flutterwave(rng: random.Random, i: int) -> Value:
    v = f"{rng.choice(['FLWSECK-', 'FLWSECK_TEST-'])}{pick(rng, HEX, 32)}-X"
    tpl = ["Authorization: Bearer {v}", "FLW_SECRET_KEY={v}", "flw = Rave('FLWPUBK-{p}-X', '{v}')",
           "secret key: {v}", "makullin sirri: {v}", '"seckey": "{v}"'][i % 6]
    return f"flutterwave_{i % 6}", v, tpl.format(v=v, p=pick(rng, HEX, 32)), False


def v_razorpay(rng: random.Random, i: int) -> Value:
    key_id, v = rng.choice(["rzp_live_", "rzp_test_"]) + pick(rng, ALNUM, 14), pick(rng, ALNUM, 24)
    tpl = ["curl -u {k}:{v} https://api.razorpay.com/v1/payments", "RAZORPAY_KEY_ID={k}\nRAZORPAY_KEY_SECRET={v}",
           "client = razorpay.Client(auth=(\"{k}\", \"{v}\"))", "Key Id: {k}\nKey Secret: {v}",
           "की आईडी {k}, सीक्रेट {v}"][i % 5]
    return f"razorpay_{i % 5}", v, tpl.format(k=key_id, v=v), False


def v_twilio(rng: random.Random, i: int) -> Value:
    if i % 3 == 2:
        sid, v = "SK" + pick(rng, HEX, 32), pick(rng, ALNUM, 32)
        return "api_key_secret", v, f"TWILIO_API_KEY={sid}\nTWILIO_API_SECRET={v}", False
    sid, v = "AC" + pick(rng, HEX, 32), pick(rng, HEX, 32)
    tpl = rng.choice(["TWILIO_ACCOUNT_SID={s}\nTWILIO_AUTH_TOKEN={v}", "client = Client(\"{s}\", \"{v}\")",
                      "curl -u {s}:{v} https://api.twilio.com/2010-04-01/Accounts/{s}/Messages.json"])
    return "auth_token", v, tpl.format(s=sid, v=v), False


def v_telegram(rng: random.Random, i: int) -> Value:
    bot_id, v = str(rng.randint(10**8, 10**10 - 1)), "AA" + pick(rng, URLSAFE, 33)
    tpl = ["https://api.telegram.org/bot{b}:{v}/sendMessage", "TELEGRAM_BOT_TOKEN={b}:{v}",
           "Use this token to access the HTTP API:\n{b}:{v}", "የቦት ቶከን: {b}:{v}", "bot token {b}:{v}"][i % 5]
    return f"telegram_{i % 5}", v, tpl.format(b=bot_id, v=v), False


# ---- private keys, TOTP seeds, cookies, PINs ------------------------------------------------------------------

def _pem_body(pem: str) -> str:
    """The base64 lines of a PEM block (RFC 7468), what must not survive."""
    return "\n".join(line for line in pem.strip().splitlines() if not line.startswith("-----"))


def private_key_pem(rng: random.Random, n: int) -> str:
    """An EC P-256 key as SEC1 or PKCS#8 PEM, or an Ed25519 key as OpenSSH writes it (70-character lines)."""
    if n == 2:
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = base64.b64encode(openssh_ed25519_blob(seed, public, rng.randbytes(4), b"telebirr-signer")).decode()
        return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(blob, 70, "\n") + "\n-----END OPENSSH PRIVATE KEY-----"
    key = ec.derive_private_key(rng.randrange(1, 2**255), ec.SECP256R1())
    fmt = serialization.PrivateFormat.TraditionalOpenSSL if n == 0 else serialization.PrivateFormat.PKCS8
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()


def v_private_key(rng: random.Random, i: int) -> Value:
    n = i % 4
    pem = private_key_pem(rng, min(n, 2))
    body = _pem_body(pem)
    if n == 3:
        sa = {"type": "service_account", "project_id": f"kyc-ocr-{digits(rng, 5)}",
              "private_key_id": pick(rng, HEX, 40), "private_key": pem + "\n",
              "client_email": f"ocr@kyc-ocr-{digits(rng, 5)}.iam.gserviceaccount.com"}
        return "gcp_service_account", body.replace("\n", "\\n"), _dump(sa), True
    lead = rng.choice(["merchant signing key:", "telebirr app private key", "# keys/agent_ssh", "PRIVATE_KEY=|"])
    return ["sec1", "pkcs8", "openssh"][n], body, f"{lead}\n{pem}", False


def v_totp(rng: random.Random, i: int) -> Value:
    seed = pick(rng, BASE32, rng.choice([16, 32]))
    issuer = rng.choice(["AgentPortal", "PesaLend%20Admin", "RemitHub", "TakaPay-Ops"])
    if i % 3 == 2:
        v = group(seed.lower(), 4, " ")
        return "setup_key", v, rng.choice(["Your key: {v}", "2FA setup key — {v}", "مفتاح الإعداد: {v}"]).format(
            v=v), False
    uri = (f"otpauth://totp/{issuer}:agent{digits(rng, 4)}?secret={seed}&issuer={issuer}"
           + ("&algorithm=SHA1&digits=6&period=30" if i % 3 else ""))
    return "otpauth_uri", seed, rng.choice(["QR payload: {u}", "{u}", "2FA: {u}"]).format(u=uri), False


def cookie_value(rng: random.Random, n: int) -> tuple[str, str]:
    """(cookie name, value) as the frameworks set them."""
    if n == 0:
        return "sessionid", pick(rng, LOWNUM, 32)
    if n == 1:
        payload = json.dumps({"iv": pick(rng, B64, 24), "value": pick(rng, B64, 120), "mac": pick(rng, HEX, 64),
                              "tag": ""}, separators=(",", ":"))
        return "laravel_session", base64.b64encode(payload.encode()).decode().replace("=", "%3D")
    if n == 2:
        return "connect.sid", f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, B64, 43)}"
    if n == 3:
        return "PHPSESSID", pick(rng, "abcdefghijklmnopqrstuv0123456789", 26)
    if n == 4:
        return "JSESSIONID", pick(rng, "0123456789ABCDEF", 32)
    return "ASP.NET_SessionId", pick(rng, "abcdefghijklmnopqrstuvwxyz012345", 24)


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, v = cookie_value(rng, i % 6)
    tpl = rng.choice(["Set-Cookie: {n}={v}; Path=/; HttpOnly; Secure", "Cookie: {n}={v}", "-b '{n}={v}'",
                      "document.cookie → {n}={v}"])
    return name, v, tpl.format(n=name, v=v), False


PIN_LABELS = [("M-PESA PIN", "en"), ("PIN ya M-PESA", "sw"), ("namba ya siri", "sw"), ("UPI PIN", "en"),
              ("यूपीआई पिन", "hi"), ("एमपिन", "mr"), ("বিকাশ পিন", "bn"), ("পিন নম্বর", "bn"), ("MPIN", "ur"),
              ("پن کوڈ", "ur"), ("الرقم السري", "ar"), ("رمز دوم", "fa"), ("telebirr PIN", "am"),
              ("የሚስጥር ቁጥር", "am"), ("lambar sirri", "ha"), ("MoMo PIN", "en"), ("code secret", "fr"),
              ("पिन", "ne"), ("şifre (PIN)", "tr"), ("קוד סודי", "he")]
PIN_LENGTH = {"UPI PIN": (4, 6), "यूपीआई पिन": (4, 6), "বিকাশ পিন": (5, 5), "رمز دوم": (5, 12)}


def v_wallet_pin(rng: random.Random, i: int) -> Value:
    label, lang = PIN_LABELS[i % len(PIN_LABELS)]
    v = digits(rng, rng.choice(PIN_LENGTH.get(label, (4, 4))))
    if i % 4 == 1:
        v = native(v, lang)
    tpl = rng.choice(["{l}: {v}", "{l} {v}", "({l}) {v}", "{l} — {v}"])
    return f"{lang}{'_native' if v[0] not in string.digits else ''}", v, tpl.format(l=label, v=v), False


# ---- national ids (outside the target) ------------------------------------------------------------------------

VERHOEFF_D = ["0123456789", "1234067895", "2340178956", "3401289567", "4012395678", "5987604321", "6598710432",
              "7659821043", "8765932104", "9876543210"]
VERHOEFF_P = ["0123456789", "1576283094", "5803796142", "8916043527", "9453126870", "4286573901", "2793806415",
              "7046913258"]
VERHOEFF_INV = "0432156789"


def verhoeff_digit(num: str) -> str:
    """The Verhoeff check digit (dihedral group D5) that completes `num`."""
    c = 0
    for k, ch in enumerate(reversed(num)):
        c = int(VERHOEFF_D[c][int(VERHOEFF_P[(k + 1) % 8][int(ch)])])
    return VERHOEFF_INV[c]


def verhoeff_ok(num: str) -> bool:
    c = 0
    for k, ch in enumerate(reversed(num)):
        c = int(VERHOEFF_D[c][int(VERHOEFF_P[k % 8][int(ch)])])
    return c == 0


def in_aadhaar(rng: random.Random) -> str:
    partial = str(rng.randint(2, 9)) + digits(rng, 10)
    return group(partial + verhoeff_digit(partial), 4, " ")


def tr_tckn(rng: random.Random) -> str:
    d = [rng.randint(1, 9)] + [int(c) for c in digits(rng, 8)]
    d.append((sum(d[0:9:2]) * 7 - sum(d[1:8:2])) % 10)
    d.append(sum(d) % 10)
    return "".join(map(str, d))


def za_id(rng: random.Random) -> str:
    """YYMMDD, gender (0000-4999 female, 5000-9999 male), citizenship 0/1, 8, Luhn."""
    partial = (f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 4)}"
               f"{rng.choice('01')}8")
    return partial + luhn_digit(partial)


def il_id(rng: random.Random) -> str:
    """Nine digits whose 1-2-1-2 weighted digit sum ends in 0 (Luhn over nine digits)."""
    partial = digits(rng, 8)
    return partial + luhn_digit(partial)


def ae_eid(rng: random.Random) -> str:
    partial = f"784{rng.randint(1960, 2005)}{digits(rng, 7)}"
    number = partial + luhn_digit(partial)
    return f"{number[:3]}-{number[3:7]}-{number[7:14]}-{number[14]}" if rng.random() < 0.6 else number


def sa_nid(rng: random.Random) -> str:
    partial = rng.choice("12") + digits(rng, 8)
    return partial + luhn_digit(partial)


def ir_melli(rng: random.Random) -> str:
    """Ten digits, the last the mod 11 check of the first nine weighted 10..2 (not all one digit)."""
    while True:
        partial = digits(rng, 9)
        r = sum(int(c) * (10 - k) for k, c in enumerate(partial)) % 11
        number = partial + str(r if r < 2 else 11 - r)
        if len(set(number)) > 1:
            return number


NATIONAL_IDS: dict[str, tuple[Callable[[random.Random], str], list[tuple[str, str]]]] = {
    "in_aadhaar": (in_aadhaar, [("आधार संख्या", "hi"), ("আধার নম্বর", "bn"), ("Aadhaar No.", "en"),
                                ("ஆதார் எண்", "ta"), ("आधार क्रमांक", "mr")]),
    "tr_tckn": (tr_tckn, [("T.C. Kimlik No", "tr"), ("TCKN", "tr"), ("kimlik numarası", "tr")]),
    "za_id": (za_id, [("ID number", "en"), ("ID-nommer", "af"), ("inombolo kamazisi", "zu")]),
    "il_id": (il_id, [("מספר זהות", "he"), ('ת"ז', "he"), ("Teudat Zehut", "en")]),
    "ae_eid": (ae_eid, [("Emirates ID", "en"), ("رقم الهوية الإماراتية", "ar")]),
    "sa_nid": (sa_nid, [("رقم الهوية الوطنية", "ar"), ("Saudi ID / Iqama No.", "en"), ("رقم الهوية / الإقامة", "ar")]),
    "ir_melli": (ir_melli, [("کد ملی", "fa"), ("شماره ملی", "fa"), ("national code", "en")]),
}
ID_TEMPLATES = ["{c}: {v}", "{c} {v}", "KYC — {c}: {v}", "| {c} | {v} |", "{c} = {v}"]


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    make, labels = NATIONAL_IDS[kind]

    def value(rng: random.Random, i: int) -> Value:
        label, lang = labels[i % len(labels)]
        v = make(rng)
        if i % 4 == 1 and lang in LANG_SCRIPT:
            v, lang = native(v, lang), f"{lang}_native"
        return lang, v, rng.choice(ID_TEMPLATES).format(c=label, v=v), False
    return value


# ---- the kinds and their carriers -----------------------------------------------------------------------------

KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": phone_kind(US_FORMS, US_CTX, False),
    "phone_uk": phone_kind(UK_FORMS, UK_CTX, False), "phone_fr": phone_kind(FR_FORMS, FR_CTX, False),
    "phone_de": phone_kind(DE_FORMS, DE_CTX, False), "phone_in": phone_kind(IN_FORMS, IN_CTX, True),
    "ssn": v_ssn, "card": v_card, "iban": v_iban, "jwt": v_jwt, "auth_header": v_auth_header,
    "daraja_credential": v_daraja, "momo_key": v_momo, "paystack_key": v_paystack, "flutterwave_key": v_flutterwave,
    "razorpay_secret": v_razorpay, "twilio_secret": v_twilio, "telegram_bot_token": v_telegram,
    "private_key": v_private_key, "totp_seed": v_totp, "session_cookie": v_session_cookie,
    "wallet_pin": v_wallet_pin, "phone_ke": phone_kind(KE_FORMS, KE_CTX, False),
    "phone_ng": phone_kind(NG_FORMS, NG_CTX, False), "phone_pk": phone_kind(PK_FORMS, PK_CTX, True),
    "phone_bd": phone_kind(BD_FORMS, BD_CTX, True),
    **{kind: national_id(kind) for kind in NATIONAL_IDS},
}


def occurrences(text: str, secret: str) -> int:
    """How often `secret` is in `text`, as written or JSON-escaped."""
    escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
    return text.count(secret) + (text.count(escaped) if escaped != secret else 0)


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists; drawn
    again while the carrier's own ids happen to repeat the secret (short PINs), so it is in the text once."""
    style, secret, snip, raw_only = value
    for _ in range(20):
        if i % 3 == 0 and not raw_only:
            name = list(JSON_CARRIERS)[i // 3 % len(JSON_CARRIERS)]
            text, is_json = JSON_CARRIERS[name](rng, snip, secret), True
        else:
            name = list(TEXT_CARRIERS)[i % len(TEXT_CARRIERS)]
            text, is_json = TEXT_CARRIERS[name](rng, snip, secret), False
        if occurrences(text, secret) == 1:
            break
    return name, text, is_json


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, deterministic."""
    rng = random.Random(SEED)
    for kind, gen in KINDS.items():
        for i in range(PER_KIND):
            value = gen(rng, i)
            carrier, text, is_json = carry(rng, i, value)
            yield Case(kind, f"{carrier}/{value[0]}", value[1], text, is_json)


# ---- near misses ----------------------------------------------------------------------------------------------

BUSINESSES = ["KPLC PREPAID", "NAIVAS LTD", "JUMIA KENYA", "ZUKU FIBER", "QUICKMART", "NAIROBI WATER"]


def _paybill(rng: random.Random) -> str:
    return rng.choice(["Lipa na M-PESA: Paybill {p}, Account No. INV-{a}", "Buy Goods Till {t} ({b})",
                       "Lipa kwa Till namba {t}", "Pay bill {p}, akaunti LN{a}"]).format(
        p=rng.randint(100000, 999999), t=rng.randint(10000, 9999999), a=digits(rng, 6), b=rng.choice(BUSINESSES))


def _ussd(rng: random.Random) -> str:
    code = rng.choice(["*334#", "*247#", "*322#", "*150*00#", "*126#", "*99#", "*182#", "*144#", "*786#", "*127#"])
    return rng.choice(["Dial {c} to check your loan limit", "ڈائل کریں {c}", "{c} ডায়াল করুন", "Piga {c} kisha chagua 6",
                       "USSD menu {c} → option {n}", "{c} डायल करें"]).format(c=code, n=rng.randint(1, 9))


def _receipt_sms(rng: random.Random) -> str:
    amount = _amount(rng)
    return (f"{_receipt(rng)} Confirmed. Ksh{amount:,}.00 paid to {rng.choice(BUSINESSES)}. on "
            f"{rng.randint(1, 28)}/{rng.randint(1, 12)}/24 at {rng.randint(1, 12)}:{rng.randint(10, 59)} PM. "
            f"New M-PESA balance is Ksh{amount * 3:,}.00. Transaction cost, Ksh0.00.")


def _rrn(rng: random.Random) -> str:
    """A UPI RRN: year digit, day of year, hour, six-digit STAN; one that fails Verhoeff (not an Aadhaar)."""
    while True:
        rrn = f"4{rng.randint(1, 366):03d}{rng.randint(0, 23):02d}{digits(rng, 6)}"
        if not verhoeff_ok(rrn):
            tpl = rng.choice(["UPI Ref No. {r}", "UTR: {r}", "यूपीआई संदर्भ संख्या {r}", "RRN {r} (credited)"])
            return tpl.format(r=rrn)


def _request_id(rng: random.Random) -> str:
    return rng.choice([f"CheckoutRequestID: ws_CO_{_stamp(rng)}{digits(rng, 4)}",
                       f"MerchantRequestID {rng.randint(10000, 99999)}-{rng.randint(10**7, 10**8 - 1)}-1",
                       f"X-Reference-Id: {_uuid(rng)}", f"payment pay_{pick(rng, ALNUM, 14)} captured",
                       f"order_{pick(rng, ALNUM, 14)}", f"flw_ref FLW-MOCK-{pick(rng, HEX, 32)}",
                       f"messageId ATXid_{pick(rng, HEX, 32)}", f"trace {pick(rng, HEX, 32)}"])


def _timestamp(rng: random.Random) -> str:
    return rng.choice([f'"Timestamp": "{_stamp(rng)}"', f"TransactionDate {_stamp(rng)}", f"at {_iso(rng)}",
                       f"ts_ms={rng.randint(1_700_000_000_000, 1_730_000_000_000)}", f"تاریخ: {_iso(rng)[:10]}"])


def _money(rng: random.Random) -> str:
    a = _amount(rng)
    return rng.choice([f"KES {a:,}.00", f"₦{a:,}", "৳ " + native(f"{a:,}", "bn"), f"Rs. {a:,}",
                       native(str(a), "ar") + " ر.س", "₹ " + native(f"{a:,}", "hi"), f"ETB {a:,}", f"GH₵ {a}.50",
                       "PKR " + native(str(a), "ur"), f"TRY {a:,}.00", f"{a:,} FCFA"]) + " " + rng.choice(
        ["float top-up", "loan disbursed", "cash-out fee", "remittance received", "installment due"])


def _masked(rng: random.Random) -> str:
    return rng.choice([f"07** *** {digits(rng, 3)}", f"+91 98XXX XX{digits(rng, 3)}",
                       f"**** **** **** {digits(rng, 4)}", f"XXXX-XXXX-{digits(rng, 4)}",
                       f"sk_live_••••••••{pick(rng, HEX, 4)}", f"{rng.choice(LOWER)}***@gmail.com",
                       f"PK** SCBL **** **** **** {digits(rng, 4)}",
                       "PIN: ****", f"2547*****{digits(rng, 3)}", f"card ending {digits(rng, 4)}"])


def _placeholder(rng: random.Random) -> str:
    return rng.choice(["MPESA_CONSUMER_SECRET=<CONSUMER_SECRET>", "passkey: YOUR_PASSKEY_HERE",
                       "FLWSECK_TEST-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX-X", "sk_test_" + "x" * 40,
                       "email: you@example.com", "Password: ********", "api_key=${PAYSTACK_SECRET_KEY}",
                       "Authorization: Bearer <ACCESS_TOKEN>", "phone: +254 7XX XXX XXX", "{{password}}",
                       "Ocp-Apim-Subscription-Key: {subscription-key}", "कृपया अपना पासवर्ड यहाँ लिखें: ______"])


def _service_line(rng: random.Random) -> str:
    number = rng.choice([f"1800 {digits(rng, 3)} {digits(rng, 4)}", f"0800 {digits(rng, 3)} {digits(rng, 4)}",
                         f"1-800-{rng.randint(2, 9)}{digits(rng, 2)}-{digits(rng, 4)}",
                         f"0800 7{digits(rng, 2)} {digits(rng, 3)}",
                         f"0700-{digits(rng, 3)}-{digits(rng, 4)}", f"111-{digits(rng, 3)}-{digits(rng, 3)} (UAN)"])
    return rng.choice(["customer care (toll-free): {n}", "helpline {n}", "huduma kwa wateja {n}", "হেল্পলাইন {n}",
                       "ہیلپ لائن {n}", "Kundenservice (gebührenfrei) {n}", "service client : {n}"]).format(n=number)


def _luhn_bad(rng: random.Random) -> str:
    partial = rng.choice("4567") + digits(rng, 14)
    number = partial + str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)
    return rng.choice(["Loan account {n}", "meter no. {n}", "wallet ref {n}", "ऋण खाता {n}"]).format(n=number)


def _version(rng: random.Random) -> str:
    return rng.choice([
        f"PesaLend/{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)} (Android {rng.randint(9, 14)}; "
        f"SM-A{rng.randint(100, 599)}F)", f"okhttp/4.{rng.randint(9, 12)}.{rng.randint(0, 3)}", "Daraja API v1",
        f"flutterwave-node-v3 1.1.{rng.randint(0, 15)}", f"bKash tokenized checkout v1.2.0-beta.{rng.randint(1, 9)}",
        f"razorpay-python 1.4.{rng.randint(0, 3)}", f"app build {rng.randint(4000000, 4999999)}"])


def _element_id(rng: random.Random) -> str:
    return rng.choice([f"#otp-input-{rng.randint(0, 5)}", f'id="kyc-step-{rng.randint(1, 6)}"', "btn-confirm-loan",
                       'data-testid="cashout-submit"', f"msisdn-field-{rng.randint(1, 3)}", "#pin-pad-key-7"])


def _selector(rng: random.Random) -> str:
    return rng.choice(["//input[@name='msisdn']", f"div.kyc-step[data-step='{rng.randint(1, 6)}'] > button.primary",
                       "//*[@id='amount']/following-sibling::span", "form#loan-apply input[type=tel]",
                       "input[name=password]:focus", "//button[contains(., 'ادفع')]"])


def _csrf_name(rng: random.Random) -> str:
    return rng.choice(['<input type="hidden" name="csrfmiddlewaretoken">', "_token field missing",
                       "__RequestVerificationToken", "authenticity_token is required", "X-CSRF-Token header absent",
                       'name="csrf_token" (empty)'])


def _coords(rng: random.Random) -> str:
    lat, lon = rng.choice([(-1.28, 36.82), (6.52, 3.37), (23.81, 90.41), (24.86, 67.01), (9.03, 38.74), (12.0, 8.52)])
    return rng.choice(["agent shop @ {a:.6f}, {o:.6f}", "geo: {a:.5f},{o:.5f}", "موقع الوكيل {a:.6f} {o:.6f}"]).format(
        a=lat + rng.uniform(-0.05, 0.05), o=lon + rng.uniform(-0.05, 0.05))


def _screen(rng: random.Random) -> str:
    w, h = rng.choice([(1080, 2400), (720, 1600), (1080, 2340), (360, 800), (412, 915)])
    return rng.choice([f"{w}x{h}", f"viewport={w}x{h}", f"width: {w}px; height: {h}px", f"{w}×{h} dp"])


def _asset_hash(rng: random.Random) -> str:
    return rng.choice([f"main.{pick(rng, HEX, 8)}.chunk.js", f"app.{pick(rng, HEX, 8)}.css?v={pick(rng, HEX, 6)}",
                       f"APK SHA-256: {pick(rng, HEX, 64)}", f"commit {pick(rng, HEX, 40)}",
                       f'ETag: W/"{pick(rng, HEX, 16)}"', f"logo.png?cb={rng.randint(10**9, 10**10)}"])


def _order(rng: random.Random) -> str:
    return rng.choice([f"Order #KE-2024-{digits(rng, 6)}", f"loan LN{digits(rng, 10)}", f"INV-{digits(rng, 6)}",
                       f"application LA-{digits(rng, 8)}", f"طلب رقم {digits(rng, 7)}", f"sipariş no {digits(rng, 9)}"])


def _tracking(rng: random.Random) -> str:
    return rng.choice([f"DHL waybill {digits(rng, 10)}", f"UPS 1Z{pick(rng, UPNUM, 6)}{digits(rng, 10)}",
                       f"Aramex AWB {digits(rng, 11)}", f"EMS EE{digits(rng, 9)}KE",
                       f"card courier ref CR{digits(rng, 8)}"])


def _bank_code(rng: random.Random) -> str:
    country = rng.choice(["KE", "NG", "PK", "BD", "AE", "TR", "IN", "SA", "EG"])
    return rng.choice([f"BIC {pick(rng, UPPER, 4)}{country}{pick(rng, UPNUM, 2)}",
                       f"SWIFT: {pick(rng, UPPER, 4)}{country}{pick(rng, UPNUM, 2)}XXX",
                       f"IFSC {pick(rng, UPPER, 4)}0{pick(rng, UPNUM, 6)}",
                       f"sort code {digits(rng, 2)}-{digits(rng, 2)}-{digits(rng, 2)}",
                       f"bank code {digits(rng, 2)}, branch {digits(rng, 3)}"])


def _sender_id(rng: random.Random) -> str:
    sid = rng.choice(["MPESA", "AD-HDFCBK", "VM-PAYTMB", "bKash", "JazzCash", "MTN MoMo", "AirtelMoney", "telebirr"])
    return rng.choice([f"From: {sid}", f"sender {sid}, DLT template {digits(rng, 19)}", f"SMS header {sid}"])


def _network_code(rng: random.Random) -> str:
    mccmnc = rng.choice(["639-02", "639-03", "621-30", "470-01", "410-01", "404-45", "636-01", "286-01"])
    return rng.choice([f"MCC-MNC {mccmnc}", f'"networkCode": "{mccmnc.replace("-", "")}"',
                       f"currency {rng.choice(['KES', 'NGN', 'BDT', 'PKR', 'INR', 'ETB'])}, country code +"
                       f"{rng.choice(['254', '234', '880', '92', '91', '251'])}"])


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "paybill_till": _paybill, "ussd_code": _ussd, "mpesa_receipt": _receipt_sms, "upi_rrn": _rrn,
    "request_id": _request_id, "timestamp": _timestamp, "amount": _money, "masked_value": _masked,
    "placeholder": _placeholder, "service_line": _service_line, "luhn_invalid": _luhn_bad, "version": _version,
    "element_id": _element_id, "css_xpath": _selector, "csrf_field_name": _csrf_name, "coordinates": _coords,
    "screen_size": _screen, "asset_hash": _asset_hash, "order_number": _order, "tracking_number": _tracking,
    "bank_code": _bank_code, "sender_id": _sender_id, "network_code": _network_code}


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
