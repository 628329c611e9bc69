"""The thirtieth blind redaction corpus: back-office and personal-assistant agents, what an agent acting for a
person or a back office reads and writes. Written from the formats' public specifications by someone who read
neither the detection rules nor the other corpora.

Carriers (the `form` head): travel (an Amadeus-style PNR display with RM/SSR lines, an e-ticket receipt, a hotel
folio, an Amadeus Self-Service flight-order JSON with remarks), commerce (Shopify Admin REST order JSON, a
WooCommerce REST order with `meta_data`, a shipping label, a returns/RMA e-mail), banking (a Plaid transactions
response, a bank statement as PDF text, a SEPA credit-transfer form, a SWIFT MT103 with `:70:` remittance text, an
ACH direct-deposit form, a KYC onboarding payload), HR and payroll (a Workday worker JSON, a payslip, a W-2/P60
text, an offer letter), healthcare (a FHIR R4 Communication resource, an HL7 v2 ADT message with NTE notes, a
pharmacy refill SMS), an insurance claim form, tax forms (W-9/1099/VAT return), a Bitwarden JSON export, a Chrome
password CSV export, an iCalendar VEVENT, an RFC 5322 e-mail, a Gmail API message, an assistant `tool_use` block
and the agent's own reply to its user in one of 31 languages (labels in that language). About a third of the
cases are JSON carried (`is_json`); values whose snippet must stay raw (JSON `\\u` escapes) go to text carriers.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit, also in an Amadeus `FP CC`
form of payment; IBANs, ISO 13616 and the SWIFT IBAN registry's BBAN structures (MOD 97-10; Belgian and French
BBANs also carry their national keys); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not 0000);
phones, NANP (N11 and 555 exchanges left out), Ofcom (drama ranges left out), ARCEP, BNetzA and TRAI/DoT plans with
each country's context words; AWS IAM AKIA/ASIA ids with 40-character secrets (IAM's credentials CSV, the CLI's
INI file, STS JSON); Slack, Discord, Teams, Power Automate, Google Chat, Zapier, IFTTT, Make and Mattermost
webhook URLs as their docs print them (the secret is the token segment or `sig`/`token` value only); Stripe
`whsec_` secrets (dashboard and CLI lengths); ADO.NET, ODBC, JDBC, Azure Storage/Service Bus and URI connection
strings (the secret is the password or key only); JWT (RFC 7519), HTTP Basic (RFC 7617), Bearer (RFC 6750); PEM
PKCS#8 EC (Apple `.p8` keys, GCP service-account JSON) and OpenSSH Ed25519 keys (the secret is the base64 body);
provider tokens as their docs show them: Google `ya29.`/`1//`, Slack `xoxp-`, Dropbox `sl.`, Shopify
`shpat_`/`shpss_`/`shpca_`, WooCommerce `cs_`, Amazon LWA `Atzr|` and `amzn1.oa2-cs.v1.`, Stripe `sk_live_`/
`rk_live_`, Square `EAAA`, Plaid `access-production-`/`processor-production-`, GoCardless `live_`, SendGrid `SG.`,
Mailgun `key-`, Mailchimp `-usNN`; TOTP seeds (RFC 4648 base32, Google Authenticator's Key Uri Format); recovery
codes (GitHub, Google, Microsoft, Apple, 1Password Secret Key print forms); cookies (express-session `s%3A`,
WordPress `wordpress_logged_in_`, NextAuth JWE, Shopify, Django). National ids (outside the target): French NIR
(97 - n mod 97 key), Canadian SIN (Luhn), Australian TFN (weights 1-4-3-7-5-8-6-9-10 mod 11), Italian codice
fiscale (odd/even tables mod 26), Swedish personnummer (Luhn), German Steuer-ID (ISO 7064 MOD 11,10), UK NINO
(HMRC prefix rules) and passport numbers with their ICAO 9303 check digit (7-3-1), as APIS `SSR DOCS` and MRZ.

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a PEM key's body, the account-key half beside an AKIA id). An e-mail written in a
PNR's IATA `SSR CTCE` coding (`//` for @, `..` for _) is still an e-mail address. A disguised secret (zero-width
characters, full-width forms, %-encoding, JSON `\\u` escapes) is the disguised string as written. Near misses are
what this domain holds that is neither secret nor personal: fare bases and flight legs, order and tracking numbers
(UPS 1Z, UPU S10 with their check digits), masked cards/IBANs/phones, placeholders and form hints, published
customer-service lines, timestamps and epochs, request and object ids, cache-busting hashes and SRI digests, CSS
selectors and XPaths, CSRF field names, API and schema versions, coordinates and pixel sizes, Luhn-invalid numbers,
IBANs failing mod 97, amounts, clinical and product codes (ICD-10, NDC, GTIN), bank routing codes (ABA, BIC, sort
codes) and tax-form box references: none of them identifies a person or opens anything.
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
from cryptography.hazmat.primitives.asymmetric import ec

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

SEED = 30
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"fr_nir", "ca_sin", "au_tfn", "it_codice_fiscale", "se_personnummer", "de_steuer_id",
                            "uk_nino", "passport"})
"""National ids and passport numbers: written and reported, not held to the recall target."""

UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
UPNUM = string.ascii_uppercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"


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


# ---- languages ------------------------------------------------------------------------------------------------

LANGS: dict[str, tuple[str, ...]] = {
    # code: (lead, password, card number, IBAN, e-mail, phone, API key)
    "en": ("Here are the details you asked me to keep:", "Password", "Card number", "IBAN", "Email", "Phone",
           "API key"),
    "fr": ("Voici les informations demandées :", "Mot de passe", "Numéro de carte", "IBAN", "E-mail",
           "Téléphone", "Clé API"),
    "de": ("Hier sind die gewünschten Angaben:", "Passwort", "Kartennummer", "IBAN", "E-Mail", "Telefon",
           "API-Schlüssel"),
    "es": ("Aquí tienes los datos que pediste:", "Contraseña", "Número de tarjeta", "IBAN", "Correo electrónico",
           "Teléfono", "Clave de API"),
    "it": ("Ecco i dati richiesti:", "Password", "Numero della carta", "IBAN", "E-mail", "Telefono", "Chiave API"),
    "pt": ("Aqui estão os dados que você pediu:", "Senha", "Número do cartão", "IBAN", "E-mail", "Telefone",
           "Chave de API"),
    "nl": ("Hier zijn de gevraagde gegevens:", "Wachtwoord", "Kaartnummer", "IBAN", "E-mailadres", "Telefoon",
           "API-sleutel"),
    "pl": ("Oto dane, o które prosiłeś:", "Hasło", "Numer karty", "IBAN", "E-mail", "Telefon", "Klucz API"),
    "sv": ("Här är uppgifterna du bad om:", "Lösenord", "Kortnummer", "IBAN", "E-post", "Telefon", "API-nyckel"),
    "da": ("Her er de oplysninger, du bad om:", "Adgangskode", "Kortnummer", "IBAN", "E-mail", "Telefon",
           "API-nøgle"),
    "nb": ("Her er opplysningene du ba om:", "Passord", "Kortnummer", "IBAN", "E-post", "Telefon", "API-nøkkel"),
    "fi": ("Tässä pyytämäsi tiedot:", "Salasana", "Kortin numero", "IBAN", "Sähköposti", "Puhelin", "API-avain"),
    "cs": ("Zde jsou údaje, o které jste žádali:", "Heslo", "Číslo karty", "IBAN", "E-mail", "Telefon",
           "Klíč API"),
    "hu": ("Íme a kért adatok:", "Jelszó", "Kártyaszám", "IBAN", "E-mail", "Telefon", "API-kulcs"),
    "ro": ("Iată datele solicitate:", "Parolă", "Numărul cardului", "IBAN", "E-mail", "Telefon", "Cheie API"),
    "el": ("Ορίστε τα στοιχεία που ζητήσατε:", "Κωδικός πρόσβασης", "Αριθμός κάρτας", "IBAN", "Email",
           "Τηλέφωνο", "Κλειδί API"),
    "tr": ("İstediğiniz bilgiler şunlar:", "Şifre", "Kart numarası", "IBAN", "E-posta", "Telefon",
           "API anahtarı"),
    "ru": ("Вот запрошенные данные:", "Пароль", "Номер карты", "IBAN", "Эл. почта", "Телефон", "API-ключ"),
    "uk": ("Ось дані, які ви просили:", "Пароль", "Номер картки", "IBAN", "Ел. пошта", "Телефон", "API-ключ"),
    "ar": ("إليك البيانات التي طلبتها:", "كلمة المرور", "رقم البطاقة", "رقم الآيبان", "البريد الإلكتروني",
           "الهاتف", "مفتاح API"),
    "he": ("הנה הפרטים שביקשת:", "סיסמה", "מספר כרטיס", "IBAN", "אימייל", "טלפון", "מפתח API"),
    "hi": ("आपके माँगे गए विवरण ये हैं:", "पासवर्ड", "कार्ड नंबर", "IBAN", "ईमेल", "फ़ोन", "API कुंजी"),
    "ja": ("ご依頼の情報です：", "パスワード", "カード番号", "IBAN", "メールアドレス", "電話番号", "APIキー"),
    "zh": ("这是您要的信息：", "密码", "卡号", "IBAN", "电子邮箱", "电话", "API 密钥"),
    "ko": ("요청하신 정보입니다:", "비밀번호", "카드 번호", "IBAN", "이메일", "전화번호", "API 키"),
    "vi": ("Đây là thông tin bạn yêu cầu:", "Mật khẩu", "Số thẻ", "IBAN", "Email", "Điện thoại", "Khóa API"),
    "th": ("นี่คือข้อมูลที่คุณขอ:", "รหัสผ่าน", "หมายเลขบัตร", "IBAN", "อีเมล", "โทรศัพท์", "คีย์ API"),
    "id": ("Berikut data yang Anda minta:", "Kata sandi", "Nomor kartu", "IBAN", "Email", "Telepon", "Kunci API"),
    "ms": ("Berikut ialah butiran yang anda minta:", "Kata laluan", "Nombor kad", "IBAN", "E-mel", "Telefon",
           "Kunci API"),
    "sw": ("Haya ni maelezo uliyoomba:", "Nenosiri", "Nambari ya kadi", "IBAN", "Barua pepe", "Simu",
           "Ufunguo wa API"),
    "fil": ("Narito ang mga detalyeng hiniling mo:", "Password", "Numero ng card", "IBAN", "Email", "Telepono",
            "API key"),
}
FIELD = {"password": 1, "card": 2, "iban": 3, "email": 4, "phone": 5, "key": 6}


def labelled(rng: random.Random, field: str, value: str, lang: str | None = None) -> tuple[str, str]:
    """(language, `label: value`) with the label in a language of `LANGS` (French puts a space before the colon,
    Chinese and Japanese write a full-width colon)."""
    lang = lang or rng.choice(list(LANGS))
    label = LANGS[lang][FIELD[field]]
    colon = {"fr": " : ", "ja": "：", "zh": "："}.get(lang, ": ")
    return lang, f"{label}{colon}{value}"


# ---- carriers -------------------------------------------------------------------------------------------------

def _dump(obj: object, rng: random.Random) -> str:
    """JSON as tools return it: pretty-printed half the time (API explorers), compact otherwise (wire bodies)."""
    return json.dumps(obj, ensure_ascii=False, indent=2 if rng.random() < 0.5 else None)


def _gid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _date(rng: random.Random) -> str:
    return f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _stamp(rng: random.Random) -> str:
    return f"{_date(rng)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"


def _amount(rng: random.Random) -> str:
    return f"{rng.randint(5, 2400)}.{rng.randint(0, 99):02d}"


def c_shopify(rng: random.Random, snip: str, _s: str) -> str:
    order = {"order": {"id": int("5" + digits(rng, 12)), "name": f"#{rng.randint(1001, 9999)}",
                       "created_at": _stamp(rng), "currency": "USD", "total_price": _amount(rng),
                       "financial_status": "paid", "note": snip,
                       "line_items": [{"sku": f"TEE-{rng.choice('SMLX')}-BLK", "quantity": rng.randint(1, 3)}]}}
    return _dump(order, rng)


def c_woo(rng: random.Random, snip: str, _s: str) -> str:
    order = {"id": rng.randint(1000, 90000), "status": "processing", "currency": "EUR", "total": _amount(rng),
             "payment_method": "stripe", "customer_note": "",
             "meta_data": [{"id": rng.randint(100, 9999), "key": "_assistant_note", "value": snip}]}
    return _dump(order, rng)


def c_amadeus(rng: random.Random, snip: str, _s: str) -> str:
    order = {"data": {"type": "flight-order", "id": b64url(rng.randbytes(24)),
                      "associatedRecords": [{"reference": pick(rng, UPNUM, 6), "originSystemCode": "GDS"}],
                      "remarks": {"general": [{"subType": "GENERAL_MISCELLANEOUS", "text": snip}]}}}
    return _dump(order, rng)


def c_plaid(rng: random.Random, snip: str, _s: str) -> str:
    body = {"transactions": [{"account_id": pick(rng, ALNUM, 37), "amount": float(_amount(rng)),
                              "iso_currency_code": "GBP", "date": _date(rng), "original_description": snip,
                              "pending": False, "transaction_id": pick(rng, ALNUM, 37)}],
            "total_transactions": 1, "request_id": pick(rng, ALNUM, 15)}
    return _dump(body, rng)


def c_fhir(rng: random.Random, snip: str, _s: str) -> str:
    res = {"resourceType": "Communication", "id": _gid(rng), "status": "completed",
           "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/communication-category",
                                     "code": "reminder"}]}],
           "sent": _stamp(rng), "payload": [{"contentString": snip}]}
    return _dump(res, rng)


def c_workday(rng: random.Random, snip: str, _s: str) -> str:
    worker = {"id": HEX[rng.randrange(16)] + pick(rng, HEX, 31), "descriptor": "Onboarding task",
              "businessProcess": "Hire", "effectiveDate": _date(rng), "comment": snip,
              "supervisoryOrganization": {"descriptor": f"Finance Ops ({rng.randint(10, 99)})"}}
    return _dump(worker, rng)


def c_bitwarden(rng: random.Random, snip: str, _s: str) -> str:
    export = {"encrypted": False, "folders": [{"id": _gid(rng), "name": "Travel"}],
              "items": [{"id": _gid(rng), "type": 2, "name": "Back-office notes", "notes": snip,
                         "secureNote": {"type": 0}, "favorite": False, "revisionDate": _stamp(rng)}]}
    return _dump(export, rng)


def c_gmail(rng: random.Random, snip: str, _s: str) -> str:
    msg = {"id": pick(rng, HEX, 16), "threadId": pick(rng, HEX, 16), "labelIds": ["INBOX", "CATEGORY_UPDATES"],
           "snippet": snip, "sizeEstimate": rng.randint(2000, 90000), "internalDate": str(rng.randint(17 * 10**11,
                                                                                                      18 * 10**11))}
    return _dump(msg, rng)


def c_tool_use(rng: random.Random, snip: str, _s: str) -> str:
    block = {"type": "tool_use", "id": "toolu_01" + pick(rng, ALNUM, 22),
             "name": rng.choice(["create_calendar_event", "send_email", "save_note", "update_ticket"]),
             "input": {"thread": pick(rng, HEX, 16), "body": snip}}
    return _dump(block, rng)


def c_kyc(rng: random.Random, snip: str, _s: str) -> str:
    payload = {"applicant_id": _gid(rng), "level": "basic-kyc-level", "country": rng.choice(["GBR", "DEU", "FRA"]),
               "review": {"status": "pending", "submitted_at": _stamp(rng)}, "free_text": snip}
    return _dump(payload, rng)


def c_pnr(rng: random.Random, snip: str, _s: str) -> str:
    loc = pick(rng, UPNUM, 6)
    return (f"RP/LON1S2{rng.randint(100, 999)}/LON1S2{rng.randint(100, 999)}  AA/SU  {rng.randint(1, 28)}MAY24/"
            f"{rng.randint(0, 23):02d}{rng.randint(0, 59):02d}Z   {loc}\n  1.TRAVELLER/A MR\n"
            f"  2  BA 283 Y 14JUN 5 LHRLAX HK1  1025 1340  14JUN  E  BA/{loc}\n"
            f"  3 AP LON 020 TRAVEL DESK\n  4 TK OK{rng.randint(10, 28)}MAY/LON1S2{rng.randint(100, 999)}\n"
            f"  5 RM {snip}\n")


def c_eticket(rng: random.Random, snip: str, _s: str) -> str:
    return (f"ELECTRONIC TICKET PASSENGER ITINERARY/RECEIPT\nBOOKING REF: {pick(rng, UPNUM, 6)}\n"
            f"ISSUING AIRLINE: LUFTHANSA   DATE: {_date(rng)}\nFARE CALCULATION: FRA LH NYC {_amount(rng)}NUC\n"
            f"ENDORSEMENTS: NONREF/CHG FEE\nREMARKS: {snip}\n")


def c_folio(rng: random.Random, snip: str, _s: str) -> str:
    return (f"GUEST FOLIO  Room {rng.randint(101, 1820)}  Arrival {_date(rng)}  Nights {rng.randint(1, 9)}\n"
            f"Room charge ......... {_amount(rng)} EUR\nCity tax ............ {rng.randint(2, 9)}.50 EUR\n"
            f"Guest comments: {snip}\nBalance due ......... 0.00 EUR\n")


def c_label(rng: random.Random, snip: str, _s: str) -> str:
    return (f"SHIP FROM: ACME FULFILMENT, UNIT {rng.randint(1, 40)}, DOCK {rng.choice('ABCD')}\n"
            f"SERVICE: UPS GROUND   WEIGHT: {rng.randint(1, 30)} LBS   PKG 1 OF 1\n"
            f"DELIVERY INSTRUCTIONS: {snip}\nREF 1: ORDER {rng.randint(10000, 99999)}\n")


def c_rma(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Subject: Your return RMA-{rng.randint(100000, 999999)} is approved\n\n"
            f"Reason: {rng.choice(['wrong size', 'damaged in transit', 'no longer needed'])}\n"
            f"Refund method: original payment\nNotes from our team: {snip}\n")


def c_statement(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Statement period  01/{rng.randint(1, 12):02d}/2024 - 28/{rng.randint(1, 12):02d}/2024      Page 1 of 3\n"
            f"Date        Description                                   Paid out     Paid in\n"
            f"{rng.randint(1, 28):02d} Mar     CARD PAYMENT TESCO STORES                     {_amount(rng)}\n"
            f"{rng.randint(1, 28):02d} Mar     {snip}        {_amount(rng)}\n")


def c_sepa(rng: random.Random, snip: str, _s: str) -> str:
    return (f"SEPA credit transfer  /  Überweisung\nAmount: EUR {_amount(rng)}\nExecution date: {_date(rng)}\n"
            f"Remittance information: {snip}\nCharges: SHA\n")


def c_mt103(rng: random.Random, snip: str, _s: str) -> str:
    return ("{1:F01DEUTDEFFAXXX0000000000}{2:I103CHASUS33XXXXN}{4:\n"
            f":20:REF{digits(rng, 10)}\n:23B:CRED\n:32A:24{rng.randint(1, 12):02d}{rng.randint(10, 28)}USD"
            f"{rng.randint(100, 99999)},00\n:70:{snip}\n:71A:SHA\n-}}")


def c_ach(rng: random.Random, snip: str, _s: str) -> str:
    return (f"DIRECT DEPOSIT AUTHORIZATION\nDeposit type: [x] Full net pay  [ ] Partial\n"
            f"Account type: {rng.choice(['Checking', 'Savings'])}\nAdditional details: {snip}\n"
            f"Signature on file   Date {_date(rng)}\n")


def c_payslip(rng: random.Random, snip: str, _s: str) -> str:
    return (f"PAYSLIP  Pay period {rng.randint(1, 12):02d}/2024   Pay date {_date(rng)}\n"
            f"Basic salary        {_amount(rng)}\nTax                 -{_amount(rng)}\nNI / Social security "
            f"-{_amount(rng)}\nNet pay             {_amount(rng)}\nEmployee details: {snip}\n")


def c_w2(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Form W-2 Wage and Tax Statement 2023   OMB No. 1545-0008\n"
            f"1 Wages, tips, other compensation {_amount(rng)}   2 Federal income tax withheld {_amount(rng)}\n"
            f"{snip}\n12a D {_amount(rng)}   15 State CA\n")


def c_offer(rng: random.Random, snip: str, _s: str) -> str:
    role = rng.choice(["Accounts Payable Analyst", "Travel Coordinator", "Payroll Specialist"])
    return (f"We are delighted to offer you the position of {role}, starting {_date(rng)}, at an annual base "
            f"salary of ${rng.randint(48, 140)},000.\n"
            f"For your first-day setup: {snip}\nPlease sign and return by {_date(rng)}.\n")


def c_hl7(rng: random.Random, snip: str, _s: str) -> str:
    ctl = digits(rng, 10)
    return (f"MSH|^~\\&|EPIC|CLINIC|PHARM|RX|2024{rng.randint(1, 12):02d}{rng.randint(10, 28)}0912||ADT^A08|"
            f"{ctl}|P|2.5.1\rEVN|A08|20240314091233\rPV1|1|O|CLINIC^^^MAIN||||{rng.randint(1000, 9999)}\r"
            f"NTE|1||{snip}\r")


def c_refill(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Rx #{rng.randint(1000000, 9999999)} is ready for pickup at your pharmacy. Refills left: "
            f"{rng.randint(0, 5)}. {snip} Reply STOP to opt out.")


def c_claim(rng: random.Random, snip: str, _s: str) -> str:
    return (f"CLAIM FORM  Policy type: Travel   Claim no. CLM-{rng.randint(10**7, 10**8 - 1)}\n"
            f"Date of loss: {_date(rng)}   Amount claimed: GBP {_amount(rng)}\nSection E - Claimant details\n"
            f"{snip}\nI declare the information given is true.\n")


def c_taxform(rng: random.Random, snip: str, _s: str) -> str:
    head = rng.choice(["Form W-9 (Rev. March 2024) Request for Taxpayer Identification Number",
                       "Form 1099-NEC Nonemployee Compensation 2023", "VAT Return - period 03/24 (Box 1-9)"])
    return f"{head}\n{snip}\nUnder penalties of perjury, I certify that the information above is correct.\n"


def c_chrome_csv(rng: random.Random, snip: str, _s: str) -> str:
    note = snip.replace('"', '""')
    return (f"name,url,username,password,note\n"
            f"portal.example-payroll.com,https://portal.example-payroll.com/login,emp-{rng.randint(1000, 9999)},"
            f"\"{note}\",\"imported {_date(rng)}\"\n")


def c_ics(rng: random.Random, snip: str, _s: str) -> str:
    return (f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:{_gid(rng)}@assistant\r\n"
            f"DTSTART:2024{rng.randint(1, 12):02d}{rng.randint(10, 28)}T090000Z\r\nSUMMARY:Follow-up\r\n"
            f"DESCRIPTION:{snip}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


def c_email(rng: random.Random, snip: str, _s: str) -> str:
    subject = rng.choice(["Re: your booking", "Payroll setup", "Order update"])
    return (f"Message-ID: <{pick(rng, HEX, 24)}@mail.assistant.local>\nDate: Tue, {rng.randint(1, 28)} May 2024 "
            f"09:{rng.randint(10, 59)}:00 +0000\nSubject: {subject}"
            f"\nContent-Type: text/plain; charset=utf-8\n\n{snip}\n\n-- \nSent by your assistant\n")


def c_reply(rng: random.Random, snip: str, _s: str) -> str:
    lead = LANGS[rng.choice(list(LANGS))][0]
    return f"{lead}\n\n{snip}\n"


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "shopify": c_shopify, "woo": c_woo, "amadeus": c_amadeus, "plaid": c_plaid, "fhir": c_fhir,
    "workday": c_workday, "bitwarden": c_bitwarden, "gmail": c_gmail, "tool_use": c_tool_use, "kyc": c_kyc,
}
TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "pnr": c_pnr, "eticket": c_eticket, "folio": c_folio, "label": c_label, "rma": c_rma,
    "statement": c_statement, "sepa": c_sepa, "mt103": c_mt103, "ach": c_ach, "payslip": c_payslip, "w2": c_w2,
    "offer": c_offer, "hl7": c_hl7, "refill": c_refill, "claim": c_claim, "taxform": c_taxform,
    "chrome_csv": c_chrome_csv, "ics": c_ics, "email": c_email, "reply": c_reply,
}


# ---- secrets --------------------------------------------------------------------------------------------------

WORDS = ("harbor", "velvet", "quartz", "meadow", "lantern", "copper", "orchid", "glacier", "tundra", "saffron",
         "pebble", "falcon", "juniper", "canyon", "ember", "walnut", "cobalt", "thistle", "marble", "zephyr")
SYMBOLS = "!#$%&*+-=?@^_~"


def password_value(rng: random.Random) -> str:
    """A password as people and generators make them: random mixed (password managers' 16-24), a diceware-style
    passphrase, or a word with digits and a symbol."""
    style = rng.randrange(3)
    if style == 0:
        return pick(rng, ALNUM + SYMBOLS, rng.randint(16, 24))
    if style == 1:
        words = [rng.choice(WORDS).capitalize() for _ in range(4)]
        return rng.choice("-.").join(words) + str(rng.randint(1, 99))
    return rng.choice(WORDS).capitalize() + str(rng.randint(1950, 2024)) + rng.choice(SYMBOLS) + pick(rng, UPPER, 2)


def url_password(rng: random.Random) -> str:
    """A password of URL-unreserved characters (RFC 3986), as it sits in userinfo or a form body unencoded."""
    return pick(rng, ALNUM + "-._~", rng.randint(14, 22))


def v_password(rng: random.Random, i: int) -> Value:
    pw = password_value(rng)
    forms: list[tuple[str, str]] = [
        ("label_lang", labelled(rng, "password", pw)[1]),
        ("keepass_xml", f'<String><Key>Password</Key><Value ProtectInMemory="True">{pw}</Value></String>'),
        ("bitwarden_login", json.dumps({"username": f"emp-{rng.randint(1000, 9999)}", "password": pw,
                                        "totp": None})),
        ("temporary", f"Your temporary password is {pw} - you will be asked to change it at first sign-in."),
        ("netrc", f"machine sftp.h2h-bank.net login acme_h2h password {pw}"),
        ("sftp_note", f"SFTP host: sftp.payroll-files.net  user: acme_payroll  pass: {pw}"),
        ("wifi_folio", f"Guest Wi-Fi network: Lobby-Guest / personal access password for room: {pw}"),
        ("portal", f"Supplier portal login for the travel desk -> user ACME-TRV, pwd: {pw}"),
    ]
    style, snip = forms[i % len(forms)]
    if i % 9 == 4:
        pw = url_password(rng)
        style, snip = "form_body", f"username=acme-ops&password={pw}&remember_me=1"
    return style, pw, snip, False


def aws_key_id(rng: random.Random, prefix: str = "AKIA") -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (STS) and 16 base32 characters."""
    return prefix + pick(rng, B32, 16)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    secret = pick(rng, B64, 40)
    kid = aws_key_id(rng)
    forms = [
        ("iam_csv", f"Access key ID,Secret access key\n{kid},{secret}"),
        ("cli_ini", f"[sp-api]\naws_access_key_id = {kid}\naws_secret_access_key = {secret}\nregion = eu-west-1"),
        ("env", f"AWS_ACCESS_KEY_ID={kid}\nAWS_SECRET_ACCESS_KEY={secret}"),
        ("sts_json", json.dumps({"Credentials": {"AccessKeyId": aws_key_id(rng, "ASIA"), "SecretAccessKey": secret,
                                                 "Expiration": "2024-06-14T12:00:00Z"}})),
        ("beside_colon", f"S3 drop for the bank files: {kid}:{secret}"),
        ("beside_slash", f"keys {kid} / {secret}"),
        ("labelled", f"Secret access key: {secret}"),
        ("boto", f"boto3.client('s3', aws_access_key_id='{kid}', aws_secret_access_key='{secret}')"),
    ]
    style, snip = forms[i % len(forms)]
    return style, secret, snip, False


def _webhook(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(style, token, url) for the chat and automation services' incoming-webhook URLs."""
    which = i % 9
    if which == 0:
        tok = pick(rng, ALNUM, 24)
        return "slack", tok, (f"https://hooks.slack.com/services/T{pick(rng, UPNUM, rng.randint(8, 10))}/"
                              f"B{pick(rng, UPNUM, rng.randint(8, 10))}/{tok}")
    if which == 1:
        tok = pick(rng, URLSAFE, 68)
        return "discord", tok, f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{tok}"
    if which == 2:
        tok = pick(rng, HEX, 32)
        return "teams", tok, (f"https://acmetravel.webhook.office.com/webhookb2/{_gid(rng)}@{_gid(rng)}/"
                              f"IncomingWebhook/{tok}/{_gid(rng)}")
    if which == 3:
        tok = pick(rng, URLSAFE, 43)
        return "power_automate", tok, (
            f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}/"
            f"triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}")
    if which == 4:
        tok = pick(rng, URLSAFE, 43) + "%3D"
        return "google_chat", tok, (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages"
                                    f"?key=AIzaSy{pick(rng, URLSAFE, 33)}&token={tok}")
    if which == 5:
        tok = pick(rng, LOWNUM, 7)
        return "zapier", tok, f"https://hooks.zapier.com/hooks/catch/{rng.randint(10**6, 10**8)}/{tok}/"
    if which == 6:
        tok = pick(rng, URLSAFE, 22)
        return "ifttt", tok, f"https://maker.ifttt.com/trigger/refund_issued/with/key/{tok}"
    if which == 7:
        tok = pick(rng, LOWNUM, 32)
        return "make", tok, f"https://hook.eu1.make.com/{tok}"
    tok = pick(rng, LOWNUM, 26)
    return "mattermost", tok, f"https://chat.acme-backoffice.io/hooks/{tok}"


def v_webhook(rng: random.Random, i: int) -> Value:
    service, tok, url = _webhook(rng, i)
    wraps = [f"Webhook URL: {url}", f"curl -X POST -H 'Content-Type: application/json' --data '{{\"text\":\"Refund "
             f"approved\"}}' {url}", json.dumps({"notify": {"on": "order.refunded", "url": url}}),
             f"Post booking changes to {url} please", f"NOTIFY_WEBHOOK={url}"]
    k = (i // 9) % len(wraps)
    return f"{service}_{k}", tok, wraps[k], False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    sec = "whsec_" + (pick(rng, ALNUM, 32) if i % 3 else pick(rng, HEX, 64))
    forms = [
        ("env", f"STRIPE_WEBHOOK_SECRET={sec}"),
        ("cli", f"> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is {sec} "
                "(^C to quit)"),
        ("dashboard", f"Signing secret\n{sec}\nReveal  Roll secret"),
        ("code", f"endpoint_secret = '{sec}'\nevent = stripe.Webhook.construct_event(payload, sig_header, "
                 "endpoint_secret)"),
        ("woo_settings", f"WooCommerce > Payments > Stripe > Webhook secret: {sec}"),
    ]
    style, snip = forms[i % len(forms)]
    return style, sec, snip, False


def v_connection_string(rng: random.Random, i: int) -> Value:
    pw = url_password(rng)
    host = rng.choice(["erp-db.internal", "10.20.4.17", "payroll-sql.acme.local", "sap-b1.corp.acme.net"])
    which = i % 10
    if which == 0:
        return "postgres_uri", pw, f"postgresql://erp_reader:{pw}@{host}:5432/ledger?sslmode=require", False
    if which == 1:
        return "adonet", pw, f"Server={host},1433;Database=Payroll;User Id=payroll_svc;Password={pw};", False
    if which == 2:
        key = base64.b64encode(rng.randbytes(64)).decode()
        return "azure_storage", key, ("DefaultEndpointsProtocol=https;AccountName=acmeinvoices;"
                                      f"AccountKey={key};EndpointSuffix=core.windows.net"), False
    if which == 3:
        return "sftp_uri", pw, f"sftp://acme_h2h:{pw}@sftp.h2h-bank.net:22/outbound/pain001", False
    if which == 4:
        return "jdbc", pw, f"jdbc:mysql://{host}:3306/woocommerce?user=wc_app&password={pw}&useSSL=true", False
    if which == 5:
        return "mongodb_srv", pw, (f"mongodb+srv://bookings:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/"
                                   "travel?retryWrites=true&w=majority"), False
    if which == 6:
        return "redis", pw, f"rediss://default:{pw}@cache.acme-shop.io:6380/0", False
    if which == 7:
        key = base64.b64encode(rng.randbytes(32)).decode()
        return "service_bus", key, (f"Endpoint=sb://acme-orders.servicebus.windows.net/;SharedAccessKeyName="
                                    f"RootManageSharedAccessKey;SharedAccessKey={key}"), False
    if which == 8:
        return "odbc", pw, ("Driver={ODBC Driver 18 for SQL Server};Server=tcp:" + host + ",1433;Database=HR;"
                            f"Uid=hr_export;Pwd={pw};Encrypt=yes;"), False
    return "amqp", pw, f"amqps://orders:{pw}@rabbit.acme-shop.io:5671/fulfilment", False


def _generic_key(rng: random.Random, i: int) -> str:
    """An opaque API key in one of the common shapes: 32 alnum, 40 hex, a UUID, 24 base64url, 48 alnum."""
    return [pick(rng, ALNUM, 32), pick(rng, HEX, 40), _gid(rng), pick(rng, URLSAFE, 24),
            pick(rng, ALNUM, 48)][i % 5]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    key = _generic_key(rng, i)
    service = rng.choice(["AfterShip", "ShipStation", "Aviationstack", "Expensify", "BambooHR", "Duffel sandbox",
                          "OpenExchangeRates", "Sabre Dev Studio"])
    forms = [
        ("api_key_colon", f"{service} API key: {key}"),
        ("api_key_eq", f"api_key={key}"),
        ("x_api_key", f"X-API-Key: {key}"),
        ("json_field", json.dumps({"service": service, "apiKey": key})),
        ("lang", labelled(rng, "key", key)[1]),
        ("yaml", f"integrations:\n  {service.split()[0].lower()}:\n    api_key: \"{key}\""),
        ("access_key_query", f"GET https://api.aviationstack.com/v1/flights?access_key={key}&flight_iata=BA283"),
    ]
    style, snip = forms[i % len(forms)]
    return style, key, snip, False


ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


def _disguise_base(rng: random.Random, i: int) -> tuple[str, str]:
    """(label, secret) to be disguised: a Stripe secret key, a GitHub token, a Slack bot token or a password."""
    which = i % 4
    if which == 0:
        return "STRIPE_SECRET_KEY=", "sk_live_" + pick(rng, ALNUM, 24)
    if which == 1:
        return "token: ", crc_token(rng, "ghp_")
    if which == 2:
        return "SLACK_BOT_TOKEN=", f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    return "password: ", pick(rng, ALNUM, 18)


def v_disguised(rng: random.Random, i: int) -> Value:
    label, base = _disguise_base(rng, i)
    how = (i // 4) % 5
    if how == 0:
        cut = rng.randint(4, len(base) - 4)
        sec = base[:cut] + rng.choice(ZERO_WIDTH) + base[cut:]
        return "zero_width", sec, label + sec, False
    if how == 1:
        sec = "".join(chr(ord(c) + 0xFEE0) for c in base)
        return "fullwidth", sec, label + sec, False
    if how == 2:
        sec = "".join(f"%{ord(c):02X}" for c in base)
        return "percent_all", sec, f"https://api.example-crm.io/v2/sync?{label.strip(':= ').lower()}={sec}", False
    if how == 3:
        sec = "".join(f"%{ord(c):02X}" if rng.random() < 0.35 else c for c in base)
        if "%" not in sec:
            sec = f"%{ord(base[0]):02X}" + sec[1:]
        return "percent_some", sec, label + sec, False
    sec = "".join(f"\\u{ord(c):04x}" for c in base)
    return "json_u", sec, f"{label}{sec}", True


# ---- personal data --------------------------------------------------------------------------------------------

FIRST = ("amelia", "noah", "priya", "lucas", "chloe", "mateo", "hannah", "yusuf", "ines", "kenji", "olga", "rahul",
         "sofia", "tomasz", "leila", "finn", "camille", "arjun", "greta", "diego")
LAST = ("hartley", "okafor", "raman", "dubois", "schneider", "novak", "fernandes", "lindqvist", "moreau", "tanaka",
        "kowalski", "mehta", "oconnor", "bianchi", "weber", "haddad", "petrov", "garcia", "nakamura", "brennan")
MAIL_DOMAINS = ("gmail.com", "outlook.com", "yahoo.co.uk", "web.de", "gmx.de", "orange.fr", "free.fr", "icloud.com",
                "proton.me", "hotmail.fr", "rediffmail.com", "yahoo.co.in", "btinternet.com", "t-online.de",
                "fastmail.com", "hey.com")


def email_value(rng: random.Random) -> str:
    """A personal mailbox: name-based local parts (dots, underscores, digits, plus tags) at a public provider."""
    f, last = rng.choice(FIRST), rng.choice(LAST)
    local = rng.choice([f"{f}.{last}", f"{f}_{last}{rng.randint(1, 99)}", f"{f[0]}{last}",
                        f"{f}.{last}+travel", f"{last}.{f}{rng.randint(70, 99)}", f"{f}-{last}"])
    return f"{local}@{rng.choice(MAIL_DOMAINS)}"


def ctce(addr: str) -> str:
    """An address in IATA's SSR CTCE coding (upper case, `@` as `//`, `_` as `..`, `-` as `./`)."""
    return addr.upper().replace("_", "..").replace("-", "./").replace("@", "//")


def v_email(rng: random.Random, i: int) -> Value:
    addr = email_value(rng)
    if i % 10 == 3:
        coded = ctce(addr)
        return "ssr_ctce", coded, f"SSR CTCE BA HK1/{coded}", False
    forms = [
        ("label_lang", labelled(rng, "email", addr)[1]),
        ("display_name", f"Reply-To: \"{rng.choice(FIRST).title()} {rng.choice(LAST).title()}\" <{addr}>"),
        ("mailto", f"Questions about the refund? Write to mailto:{addr}"),
        ("vcard", f"BEGIN:VCARD\nVERSION:4.0\nEMAIL;TYPE=home:{addr}\nEND:VCARD"),
        ("hl7_xtn", f"PID|1||{rng.randint(10**6, 10**7)}^^^MRN||DOE^JANE||19800101|F|||||^NET^Internet^{addr}"),
        ("fhir_telecom", json.dumps({"system": "email", "value": addr, "use": "home"})),
        ("send_to", f"Please send the signed offer letter to {addr} by Friday."),
        ("autofill", f"Autofill profile 2 - email field: {addr}"),
        ("kyc_field", f"contact.email = {addr}"),
    ]
    style, snip = forms[i % len(forms)]
    return style, addr, snip, False


def phone_value(rng: random.Random, i: int, forms: list[tuple[str, Callable[[random.Random], str]]],
                labels: tuple[str, ...]) -> Value:
    """A phone in the form `forms[i % n]`, after one of the country's context labels."""
    style, make = forms[i % len(forms)]
    number = make(rng)
    label = labels[(i // len(forms)) % len(labels)]
    return style, number, f"{label} {number}", False


NANP_AREAS = ("212", "415", "312", "617", "206", "303", "404", "512", "720", "646", "702", "808", "604", "416",
              "514", "403", "613", "905", "778", "902")


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """(NPA, NXX, line): a real area code, an exchange 2-9XX that is neither N11 nor 555."""
    while True:
        nxx = str(rng.randint(2, 9)) + digits(rng, 2)
        if nxx[1:] != "11" and nxx != "555":
            return rng.choice(NANP_AREAS), nxx, digits(rng, 4)


def _fmt_nanp(pattern: str) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        a, b, c = _nanp(rng)
        return pattern.format(a=a, b=b, c=c)
    return make


NANP_FORMS = [("paren", _fmt_nanp("({a}) {b}-{c}")), ("dash", _fmt_nanp("{a}-{b}-{c}")),
              ("dot", _fmt_nanp("{a}.{b}.{c}")), ("plus1", _fmt_nanp("+1 {a} {b} {c}")),
              ("one_dash", _fmt_nanp("1-{a}-{b}-{c}")), ("e164", _fmt_nanp("+1{a}{b}{c}")),
              ("plus1_paren", _fmt_nanp("+1 ({a}) {b}-{c}"))]
NANP_LABELS = ("Mobile:", "Cell:", "Phone:", "Home phone:", "Contact number:", "Call me at", "Cellulaire :",
               "Emergency contact phone:", "Tel:", "Best number to reach you:")


def _uk_mobile(rng: random.Random) -> str:
    """07 mobiles (7100-7999 ranges, 07624 Isle of Man and the 07700 900 drama block left out)."""
    while True:
        n = "7" + str(rng.choice([1, 2, 3, 4, 5, 7, 8, 9])) + digits(rng, 8)
        if not n.startswith(("7700900", "7624")):
            return n


def _uk_geo(rng: random.Random) -> tuple[str, str]:
    """(area code, subscriber): London 20 (7/8 + 7 digits, not 7946 0), or a big city's 1x1 code (not 496 0)."""
    if rng.random() < 0.5:
        while True:
            sub = rng.choice("378") + digits(rng, 7)
            if not sub.startswith("79460"):
                return "20", sub
    while True:
        sub = str(rng.randint(2, 9)) + digits(rng, 6)
        if not sub.startswith("4960"):
            return rng.choice(["121", "161", "113", "131", "141", "117", "151"]), sub


def _uk(kind: str) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        if kind.startswith("mob"):
            n = _uk_mobile(rng)
            return {"mob_space": f"0{n[:4]} {n[4:]}", "mob_3": f"0{n[:4]} {n[4:7]} {n[7:]}",
                    "mob_plus": f"+44 {n[:4]} {n[4:]}", "mob_plus0": f"+44 (0){n[:4]} {n[4:]}",
                    "mob_compact": f"0{n}"}[kind]
        area, sub = _uk_geo(rng)
        if area == "20":
            return {"geo": f"020 {sub[:4]} {sub[4:]}", "geo_plus": f"+44 20 {sub[:4]} {sub[4:]}",
                    "geo_paren": f"(020) {sub[:4]} {sub[4:]}"}[kind]
        return {"geo": f"0{area} {sub[:3]} {sub[3:]}", "geo_plus": f"+44 {area} {sub[:3]} {sub[3:]}",
                "geo_paren": f"(0{area}) {sub[:3]} {sub[3:]}"}[kind]
    return make


UK_FORMS = [(k, _uk(k)) for k in ("mob_space", "mob_3", "mob_plus", "mob_plus0", "mob_compact", "geo", "geo_plus",
                                   "geo_paren")]
UK_LABELS = ("Mobile:", "Mobile no.", "Tel:", "Telephone:", "Home tel:", "Contact no.", "Daytime phone:",
             "Ring me on", "Next of kin phone:")


def _fr_pairs(rng: random.Random) -> list[str]:
    """The five pairs of a French number: 06/07 mobiles (07 3-9), 01-05 geographic or 09, fiction blocks avoided."""
    first = rng.choice(["06", "06", "07", "01", "02", "03", "04", "05", "09"])
    while True:
        second = str(rng.randint(3, 9)) + digits(rng, 1) if first == "07" else digits(rng, 2)
        if second not in ("39", "99", "98", "61", "53", "65", "36", "74"):
            break
    return [first, second, digits(rng, 2), digits(rng, 2), digits(rng, 2)]


def _fr(kind: str) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        p = _fr_pairs(rng)
        nat = p[0][1] + " " + " ".join(p[1:])
        return {"space": " ".join(p), "dot": ".".join(p), "compact": "".join(p), "plus33": f"+33 {nat}",
                "plus33_0": f"+33 (0){nat}", "0033": f"0033 {nat}", "dash": "-".join(p)}[kind]
    return make


FR_FORMS = [(k, _fr(k)) for k in ("space", "dot", "compact", "plus33", "plus33_0", "0033", "dash")]
FR_LABELS = ("Tél. :", "Portable :", "Mobile :", "Téléphone :", "Numéro de portable :", "Tél. domicile :",
             "Joignable au", "N° de téléphone :")

DE_MOBILE = ("151", "152", "157", "159", "160", "162", "163", "170", "171", "172", "173", "174", "175", "176",
             "177", "178", "179")
DE_CITY = (("30", 8), ("40", 8), ("89", 8), ("69", 8), ("221", 7), ("211", 7), ("711", 7), ("351", 7))


def _de(kind: str) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        if kind.startswith("mob"):
            pre = rng.choice(DE_MOBILE)
            sub = str(rng.randint(1, 9)) + digits(rng, 7 if pre[1] in "57" else 6)
            return {"mob_space": f"0{pre} {sub}", "mob_slash": f"0{pre}/{sub}", "mob_plus": f"+49 {pre} {sub}",
                    "mob_plus0": f"+49 (0){pre} {sub}", "mob_dash": f"0{pre}-{sub}"}[kind]
        area, n = rng.choice(DE_CITY)
        sub = str(rng.randint(2, 9)) + digits(rng, n - 1)
        return {"geo_space": f"0{area} {sub}", "geo_paren": f"(0{area}) {sub}",
                "geo_plus": f"+49 {area} {sub}", "geo_din": f"0{area} {sub[:-1]}-{sub[-1]}"}[kind]
    return make


DE_FORMS = [(k, _de(k)) for k in ("mob_space", "mob_slash", "mob_plus", "mob_plus0", "mob_dash", "geo_space",
                                   "geo_paren", "geo_plus", "geo_din")]
DE_LABELS = ("Tel.:", "Telefon:", "Handy:", "Mobil:", "Mobilnummer:", "Rufnummer:", "Erreichbar unter",
             "Telefon (privat):")


def _in(kind: str) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        if kind.startswith("mob"):
            n = str(rng.randint(6, 9)) + digits(rng, 9)
            return {"mob_plus": f"+91 {n[:5]} {n[5:]}", "mob_plus_dash": f"+91-{n}", "mob_zero": f"0{n}",
                    "mob_split": f"{n[:5]} {n[5:]}", "mob_plus_compact": f"+91{n}"}[kind]
        area, length = rng.choice([("11", 8), ("22", 8), ("80", 8), ("44", 8), ("33", 8), ("40", 8), ("20", 8)])
        sub = str(rng.choice([2, 4, 6])) + digits(rng, length - 1)
        return {"geo_dash": f"0{area}-{sub}", "geo_space": f"0{area} {sub[:4]} {sub[4:]}",
                "geo_plus": f"+91 {area} {sub}"}[kind]
    return make


IN_FORMS = [(k, _in(k)) for k in ("mob_plus", "mob_plus_dash", "mob_zero", "mob_split", "mob_plus_compact",
                                   "geo_dash", "geo_space", "geo_plus")]
IN_LABELS = ("Mobile No.:", "Mob:", "Ph:", "Contact:", "मोबाइल नंबर:", "फ़ोन:", "Alternate mobile:",
             "WhatsApp:", "கைபேசி:")


def phones(forms: list[tuple[str, Callable[[random.Random], str]]],
           labels: tuple[str, ...]) -> Callable[[random.Random, int], Value]:
    """A phone kind: `phone_value` over one country's forms and context labels."""
    return lambda rng, i: phone_value(rng, i, forms, labels)


def ssn_parts(rng: random.Random) -> tuple[str, str, str]:
    """(area, group, serial) by the SSA's rules, the advertised 078-05-1120 and 123-45-6789 left out."""
    while True:
        area = rng.randint(1, 899)
        if area == 666:
            continue
        parts = (f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}")
        if "".join(parts) not in ("078051120", "123456789", "219099999"):
            return parts


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = ssn_parts(rng)
    ssn = [f"{a}-{g}-{s}", f"{a} {g} {s}", f"{a}{g}{s}"][i % 3]
    forms = [
        ("w2_box_a", f"a Employee's social security number  {ssn}"),
        ("w9", f"Part I  Taxpayer Identification Number (TIN)\nSocial security number: {ssn}"),
        ("fhir_identifier", json.dumps({"system": "http://hl7.org/fhir/sid/us-ssn", "value": ssn})),
        ("hl7_pid19", "PID|1||" + str(rng.randint(10**6, 10**7)) + "^^^MRN||DOE^JANE||19800101|F" + "|" * 11 + ssn),
        ("label", f"SSN: {ssn}"),
        ("gusto_csv", f"first_name,last_name,ssn,start_date\nJane,Doe,{ssn},{_date(rng)}"),
        ("recipient_tin", f"RECIPIENT'S TIN  {ssn}"),
        ("i9", f"Section 1. U.S. Social Security Number {ssn}"),
        ("insurance", f"Subscriber SSN (for claims only): {ssn}"),
    ]
    style, snip = forms[i % len(forms)]
    return style, ssn, snip, False


BRANDS = {"VI": ("4", 16), "CA": ("5", 16), "C2": ("2", 16), "AX": ("3", 15), "DS": ("6", 16), "JC": ("35", 16),
          "DC": ("36", 14), "UP": ("62", 16)}


def card_number(rng: random.Random, brand: str) -> str:
    """A number in `brand`'s IIN range (ISO/IEC 7812) of its length, completed with the Luhn digit."""
    _, length = BRANDS[brand]
    prefix = {"VI": "4", "CA": str(rng.randint(51, 55)), "C2": str(rng.randint(2221, 2720)),
              "AX": rng.choice(["34", "37"]), "DS": rng.choice(["6011", str(rng.randint(644, 649)), "65"]),
              "JC": str(rng.randint(3528, 3589)), "DC": "36", "UP": "62"}[brand]
    body = prefix + digits(rng, length - 1 - len(prefix))
    return body + luhn_digit(body)


def v_card(rng: random.Random, i: int) -> Value:
    brand = list(BRANDS)[i % len(BRANDS)]
    num = card_number(rng, brand)
    exp = f"{rng.randint(1, 12):02d}{rng.randint(25, 31)}"
    code = "CA" if brand == "C2" else brand
    shown = [group_card(num, " "), group_card(num, "-"), num][(i // len(BRANDS)) % 3]
    forms = [
        ("amadeus_fp", f"FP CC{code}{num}/{exp}", num),
        ("label_lang", labelled(rng, "card", shown)[1], shown),
        ("folio_guarantee", f"Guarantee: {code} {shown} exp {exp[:2]}/{exp[2:]}", shown),
        ("bitwarden_card", json.dumps({"brand": code, "number": num, "expMonth": exp[:2], "expYear": "20" + exp[2:]}),
         num),
        ("autofill", f"cc-number: {shown}  cc-exp: {exp[:2]}/{exp[2:]}", shown),
        ("claim_payment", f"Refund to card {shown}", shown),
        ("order_note", f"Customer asked to re-charge on {shown} instead", shown),
    ]
    style, snip, sec = forms[i % len(forms)]
    return style, sec, snip, False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11n2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
             "NL": "4a10n", "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "IE": "4a6n8n", "PT": "4n4n11n2n",
             "PL": "8n16n", "SE": "3n16n1n", "DK": "4n9n1n", "FI": "3n11n", "LU": "3n13c", "AE": "3n16n",
             "SA": "2n18c", "TR": "5n1n16c", "NO": "4n6n1n"}


def national_bban(rng: random.Random, country: str) -> str:
    """A BBAN; Belgian ones end with their mod 97 key (97 for 0), French ones with their RIB key."""
    b = bban(rng, IBAN_BBAN[country])
    if country == "BE":
        key = int(b[:10]) % 97 or 97
        return b[:10] + f"{key:02d}"
    if country == "FR":
        key = 97 - (89 * int(b[:5]) + 15 * int(b[5:10]) + 3 * int(b[10:21])) % 97
        return b[:21] + f"{key:02d}"
    return b


def iban_value(rng: random.Random, country: str) -> str:
    b = national_bban(rng, country)
    return country + iban_check(country, b) + b


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    compact = iban_value(rng, country)
    shown = group(compact, 4, " ") if (i // len(IBAN_BBAN)) % 2 == 0 else compact
    forms = [
        ("sepa_field", f"IBAN (beneficiary): {shown}\nBIC: {pick(rng, UPPER, 4)}{country}{pick(rng, UPNUM, 2)}"),
        ("obie_account", json.dumps({"SchemeName": "UK.OBIE.IBAN", "Identification": compact, "Name": "Current"}),
         compact),
        ("payslip", f"Paid into account {shown}"),
        ("label_lang", labelled(rng, "iban", shown)[1]),
        ("mt103_59", f":59:/{compact}\nJANE DOE", compact),
        ("bankverbindung", f"Bankverbindung für die Gehaltszahlung: IBAN {shown}"),
        ("plaid_numbers", json.dumps({"international": [{"account_id": pick(rng, ALNUM, 37), "iban": compact}]}),
         compact),
        ("rib", f"Coordonnées bancaires (RIB) - IBAN : {shown}"),
    ]
    entry = forms[i % len(forms)]
    style, snip = entry[0], entry[1]
    sec = entry[2] if len(entry) == 3 else shown
    return style, sec, snip, False


# ---- more secrets ---------------------------------------------------------------------------------------------

def jwt_value(rng: random.Random) -> str:
    """A signed JWT (RFC 7519/7515): RS256 with a 256-byte or HS256 with a 32-byte signature."""
    rs = rng.random() < 0.6
    head = {"alg": "RS256" if rs else "HS256", "typ": "JWT"} | ({"kid": pick(rng, URLSAFE, 27)} if rs else {})
    body = {"iss": rng.choice(["https://login.microsoftonline.com/" + _gid(rng) + "/v2.0",
                               "https://accounts.google.com", "https://auth.acme-travel.io/"]),
            "sub": pick(rng, URLSAFE, 22), "aud": pick(rng, LOWNUM, 24), "iat": 1717000000 + rng.randint(0, 10**6),
            "exp": 1718000000 + rng.randint(0, 10**6), "scope": "openid email offline_access"}
    seg = [b64url(json.dumps(x, separators=(",", ":")).encode()) for x in (head, body)]
    return ".".join(seg + [b64url(rng.randbytes(256 if rs else 32))])


def v_jwt(rng: random.Random, i: int) -> Value:
    tok = jwt_value(rng)
    forms = [("bearer", f"Authorization: Bearer {tok}"), ("id_token", json.dumps({"id_token": tok,
                                                                                   "token_type": "Bearer"})),
             ("cookie", f"Cookie: access_token={tok}; theme=light"), ("query", f"GET /sso/callback#id_token={tok}"),
             ("env", f"WORKDAY_BEARER={tok}")]
    style, snip = forms[i % len(forms)]
    return style, tok, snip, False


def v_auth_header(rng: random.Random, i: int) -> Value:
    which = i % 4
    if which == 0:
        cred = base64.b64encode(f"acme_h2h:{password_value(rng)}".encode()).decode()
        return "basic", cred, f"Authorization: Basic {cred}", False
    if which == 1:
        tok = pick(rng, URLSAFE, 40)
        return "bearer_opaque", tok, f"-H 'Authorization: Bearer {tok}'", False
    if which == 2:
        tok = pick(rng, HEX, 40)
        return "drf_token", tok, f"Authorization: Token {tok}", False
    cred = base64.b64encode(f"{pick(rng, LOWNUM, 12)}:{pick(rng, ALNUM, 32)}".encode()).decode()
    return "basic_har", cred, json.dumps({"name": "Authorization", "value": f"Basic {cred}"}), False


def provider(make: Callable[[random.Random, int], tuple[str, str, str]]) -> Callable[[random.Random, int], Value]:
    """A kind whose `make` gives (style, token, label) placed in one of five settings."""
    def gen(rng: random.Random, i: int) -> Value:
        style, tok, label = make(rng, i)
        wraps = [f"{label}={tok}", f"{label.lower()}: \"{tok}\"", json.dumps({label.lower(): tok}),
                 f"export {label}='{tok}'", f"Use this for the integration: {tok}"]
        k = (i // 5) % len(wraps)
        return f"{style}_{k}", tok, wraps[k], False
    return gen


def oauth_token(rng: random.Random, i: int) -> tuple[str, str, str]:
    which = i % 4
    if which == 0:
        return "google_access", "ya29.a0" + pick(rng, URLSAFE, 160), "GOOGLE_ACCESS_TOKEN"
    if which == 1:
        return "google_refresh", f"1//0{pick(rng, URLSAFE, 2)}-{pick(rng, URLSAFE, 96)}", "GOOGLE_REFRESH_TOKEN"
    if which == 2:
        return "slack_user", (f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}"),\
            "SLACK_USER_TOKEN"
    return "dropbox", "sl." + pick(rng, URLSAFE, 138), "DROPBOX_ACCESS_TOKEN"


def commerce_token(rng: random.Random, i: int) -> tuple[str, str, str]:
    which = i % 5
    if which < 3:
        prefix = ("shpat_", "shpss_", "shpca_")[which]
        return prefix.rstrip("_"), prefix + pick(rng, HEX, 32), "SHOPIFY_" + ("ACCESS_TOKEN", "API_SECRET",
                                                                              "CUSTOM_APP_TOKEN")[which]
    if which == 3:
        return "woo_cs", "cs_" + pick(rng, HEX, 40), "WC_CONSUMER_SECRET"
    if rng.random() < 0.5:
        return "lwa_refresh", "Atzr|IwEB" + pick(rng, URLSAFE, 340), "LWA_REFRESH_TOKEN"
    return "lwa_secret", "amzn1.oa2-cs.v1." + pick(rng, HEX, 64), "LWA_CLIENT_SECRET"


def payment_key(rng: random.Random, i: int) -> tuple[str, str, str]:
    which = i % 4
    if which == 0:
        return "stripe_sk", "sk_live_51" + pick(rng, ALNUM, 97), "STRIPE_SECRET_KEY"
    if which == 1:
        return "stripe_rk", "rk_live_" + pick(rng, ALNUM, 24), "STRIPE_RESTRICTED_KEY"
    if which == 2:
        return "square", "EAAA" + pick(rng, URLSAFE, 60), "SQUARE_ACCESS_TOKEN"
    return "razorpay", pick(rng, ALNUM, 24), "RAZORPAY_KEY_SECRET"


def fintech_token(rng: random.Random, i: int) -> tuple[str, str, str]:
    which = i % 4
    if which == 0:
        return "plaid_access", "access-production-" + _gid(rng), "PLAID_ACCESS_TOKEN"
    if which == 1:
        return "plaid_processor", "processor-production-" + _gid(rng), "PLAID_PROCESSOR_TOKEN"
    if which == 2:
        return "plaid_secret", pick(rng, HEX, 30), "PLAID_SECRET"
    return "gocardless", "live_" + pick(rng, URLSAFE, 40), "GOCARDLESS_ACCESS_TOKEN"


def messaging_key(rng: random.Random, i: int) -> tuple[str, str, str]:
    which = i % 4
    if which == 0:
        return "sendgrid", f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}", "SENDGRID_API_KEY"
    if which == 1:
        return "mailgun", "key-" + pick(rng, HEX, 32), "MAILGUN_API_KEY"
    if which == 2:
        return "mailchimp", f"{pick(rng, HEX, 32)}-us{rng.randint(1, 21)}", "MAILCHIMP_API_KEY"
    return "twilio", pick(rng, HEX, 32), "TWILIO_AUTH_TOKEN"


ISSUERS = ("Amazon", "Booking.com", "Expensify", "Gusto", "Shopify", "Stripe", "Xero", "Workday", "Coinbase")


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, B32, 32 if i % 3 else 16)
    issuer = rng.choice(ISSUERS)
    which = i % 5
    if which == 0:
        return "otpauth", seed, (f"otpauth://totp/{issuer}:acme-ops?secret={seed}&issuer={issuer}&algorithm=SHA1"
                                 "&digits=6&period=30"), False
    if which == 1:
        shown = group(seed.lower(), 4, " ")
        return "setup_key", shown, f"Can't scan the code? Enter this setup key: {shown}", False
    if which == 2:
        return "bitwarden_totp", seed, json.dumps({"uri": f"https://{issuer.lower()}.com", "totp": seed}), False
    if which == 3:
        return "labelled", seed, f"2FA secret for the {issuer} admin account: {seed}", False
    return "otpauth_hotp", seed, f"otpauth://hotp/{issuer}?secret={seed}&counter=0", False


RECOVERY_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTVWXYZ"


def v_recovery_code(rng: random.Random, i: int) -> Value:
    which = i % 5
    if which == 0:
        code = f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}"
        return "github", code, f"GitHub recovery codes (store safely):\n{code}", False
    if which == 1:
        code = f"{digits(rng, 4)} {digits(rng, 4)}"
        return "google_backup", code, f"Google backup code: {code}", False
    if which == 2:
        code = "-".join(pick(rng, UPNUM, 5) for _ in range(5))
        return "microsoft", code, f"Your Microsoft account recovery code is {code}", False
    if which == 3:
        code = "-".join(pick(rng, UPNUM, 4) for _ in range(7))
        return "apple", code, f"Apple ID recovery key: {code}", False
    code = "A3-" + "-".join(pick(rng, RECOVERY_ALPHABET, n) for n in (6, 6, 5, 5, 5, 5))
    return "onepassword", code, f"1Password Emergency Kit - Secret Key: {code}", False


def _pem_lines(der: bytes) -> list[str]:
    return group(base64.b64encode(der).decode(), 64, "\n").split("\n")


def v_private_key(rng: random.Random, i: int) -> Value:
    which = i % 3
    if which == 2:
        seed = rng.randbytes(32)
        public = hashlib.sha512(seed).digest()[:32]
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"acme-h2h@bank")
        body = group(base64.b64encode(blob).decode(), 70, "\n")
        return "openssh", body, f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----", False
    key = ec.derive_private_key(rng.randrange(1, 2**255), ec.SECP256R1())
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    lines = _pem_lines(der)
    if which == 0:
        body = "\n".join(lines)
        name = f"AuthKey_{pick(rng, UPNUM, 10)}.p8"
        return "apple_p8", body, f"{name}\n-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----", False
    body = "\\n".join(lines)
    sa = ('{"type": "service_account", "project_id": "acme-bookings", "private_key": "-----BEGIN PRIVATE KEY-----'
          f'\\n{body}\\n-----END PRIVATE KEY-----\\n", "client_email": "sync@acme-bookings.iam.gserviceaccount.com"}}')
    return "gcp_sa", body, sa, False


def v_session_cookie(rng: random.Random, i: int) -> Value:
    which = i % 5
    if which == 0:
        val = f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, B64, 43)}"
        return "express", val, f"Cookie: connect.sid={val}; lang=en", False
    if which == 1:
        val = f"acme-ops%7C{1718000000 + rng.randint(0, 10**6)}%7C{pick(rng, ALNUM, 43)}%7C{pick(rng, HEX, 64)}"
        return "wordpress", val, f"Cookie: wordpress_logged_in_{pick(rng, HEX, 32)}={val}", False
    if which == 2:
        val = ".".join([b64url(b'{"alg":"dir","enc":"A256GCM"}'), "", b64url(rng.randbytes(12)),
                        b64url(rng.randbytes(rng.randint(180, 260))), b64url(rng.randbytes(16))])
        return "nextauth", val, f"Set-Cookie: __Secure-next-auth.session-token={val}; Path=/; HttpOnly; Secure", False
    if which == 3:
        val = pick(rng, HEX, 32)
        return "shopify", val, f"Set-Cookie: _secure_session_id={val}; path=/; secure; HttpOnly; SameSite=Lax", False
    val = pick(rng, LOWNUM, 32)
    return "django_har", val, json.dumps({"name": "sessionid", "value": val, "httpOnly": True}), False


# ---- national ids and passports (outside the target) ----------------------------------------------------------

def fr_nir(rng: random.Random) -> str:
    """INSEE NIR: sex, year, month, department (01-95 but 20), commune, order; key 97 - (13 digits mod 97)."""
    dept = rng.choice([d for d in range(1, 96) if d != 20])
    body = (f"{rng.randint(1, 2)}{rng.randint(0, 99):02d}{rng.randint(1, 12):02d}{dept:02d}"
            f"{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}")
    key = 97 - int(body) % 97
    return f"{body[0]} {body[1:3]} {body[3:5]} {body[5:7]} {body[7:10]} {body[10:13]} {key:02d}"


def ca_sin(rng: random.Random) -> str:
    """A Social Insurance Number: first digit 1-7 (regions), Luhn-valid, printed 3-3-3."""
    body = str(rng.randint(1, 7)) + digits(rng, 7)
    return group(body + luhn_digit(body), 3, rng.choice(" -"))


def au_tfn(rng: random.Random) -> str:
    """A Tax File Number: 9 digits whose weighted sum (1,4,3,7,5,8,6,9,10) is 0 mod 11."""
    weights = (1, 4, 3, 7, 5, 8, 6, 9)
    while True:
        body = str(rng.randint(1, 9)) + digits(rng, 7)
        last = sum(int(d) * w for d, w in zip(body, weights, strict=True)) % 11
        if last < 10:
            return group(body + str(last), 3, " ")


CF_ODD = dict(zip("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                  (1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8,
                   12, 14, 16, 10, 22, 25, 24, 23), strict=True))


def _cf_part(name: str, is_first: bool) -> str:
    cons = [c for c in name.upper() if c.isalpha() and c not in "AEIOU"]
    vows = [c for c in name.upper() if c in "AEIOU"]
    if is_first and len(cons) >= 4:
        cons = [cons[0], cons[2], cons[3]]
    return "".join(cons + vows + ["X"] * 3)[:3]


def it_codice_fiscale(rng: random.Random) -> str:
    """Surname and name letters, year, month letter, day (+40 for women), Belfiore code, the mod 26 check letter
    (odd positions by the odd table, even by value)."""
    body = (_cf_part(rng.choice(LAST), False) + _cf_part(rng.choice(FIRST), True) + f"{rng.randint(40, 99)}"
            + rng.choice("ABCDEHLMPRST") + f"{rng.randint(1, 28) + rng.choice([0, 40]):02d}"
            + rng.choice(["H501", "F205", "F839", "L219", "G273", "A944", "D612"]))
    total = sum(CF_ODD[c] if k % 2 == 0 else int(c, 36) % 10 if c.isdigit() else ord(c) - 65
                for k, c in enumerate(body))
    return body + chr(65 + total % 26)


def se_personnummer(rng: random.Random) -> str:
    """YYMMDD-NNNC with C the Luhn digit of the nine before it."""
    body = f"{rng.randint(40, 99)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    return f"{body[:6]}-{body[6:]}{luhn_digit(body)}"


def de_steuer_id(rng: random.Random) -> str:
    """Steuer-ID: ten digits (no leading 0, one digit twice, one missing) and the ISO 7064 MOD 11,10 digit."""
    while True:
        pool = rng.sample(range(10), 9)
        ten = pool + [rng.choice(pool)]
        rng.shuffle(ten)
        if ten[0] != 0:
            break
    product = 10
    for d in ten:
        total = (d + product) % 10 or 10
        product = total * 2 % 11
    check = (11 - product) % 10
    s = "".join(map(str, ten)) + str(check)
    return f"{s[:2]} {s[2:5]} {s[5:8]} {s[8:]}" if rng.random() < 0.5 else s


def uk_nino(rng: random.Random) -> str:
    """HMRC NINO: a prefix whose letters avoid D F I Q U V (and O second) and the barred pairs, 6 digits, A-D."""
    while True:
        pre = rng.choice("ABCEGHJKLMNOPRSTWXYZ") + rng.choice("ABCEGHJKLMNPRSTWXYZ")
        if pre not in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ"):
            break
    d = digits(rng, 6)
    suffix = rng.choice("ABCD")
    return f"{pre} {d[:2]} {d[2:4]} {d[4:]} {suffix}" if rng.random() < 0.5 else f"{pre}{d}{suffix}"


def mrz_digit(text: str) -> str:
    """ICAO 9303 check digit: weights 7-3-1, digits as themselves, A-Z as 10-35, `<` as 0, mod 10."""
    val = {c: int(c, 36) for c in string.digits + UPPER} | {"<": 0}
    return str(sum(val[c] * (7, 3, 1)[k % 3] for k, c in enumerate(text)) % 10)


def passport_number(rng: random.Random) -> tuple[str, str]:
    """(ICAO country code, document number): GBR/USA 9 digits, DEU C + 8 of its alphabet, FRA 2n2a5n, IND 1a7n."""
    country = rng.choice(["GBR", "USA", "DEU", "FRA", "IND"])
    if country in ("GBR", "USA"):
        return country, str(rng.randint(1, 9)) + digits(rng, 8)
    if country == "DEU":
        return country, "C" + pick(rng, "CFGHJKLMNPRTVWXYZ0123456789", 8)
    if country == "FRA":
        return country, digits(rng, 2) + pick(rng, UPPER, 2) + digits(rng, 5)
    return country, rng.choice("JKLMNPRSTUVWZ") + digits(rng, 7)


def mrz_line2(number: str, country: str) -> str:
    """TD3 line 2 (ICAO 9303-4): number, nationality, birth date, sex, expiry, empty personal number, each with
    its check digit, and the composite digit."""
    doc = number.ljust(9, "<") + mrz_digit(number.ljust(9, "<"))
    born, expires, personal = "820712", "300115", "<" * 14
    born += mrz_digit(born)
    expires += mrz_digit(expires)
    personal += "0"
    return f"{doc}{country}{born}F{expires}{personal}{mrz_digit(doc + born + expires + personal)}"


def v_passport(rng: random.Random, i: int) -> Value:
    country, num = passport_number(rng)
    which = i % 3
    if which == 0:
        return "ssr_docs", num, f"SSR DOCS BA HK1 P/{country}/{num}/{country}/12JUL82/F/15JAN30/DOE/JANE", False
    if which == 1:
        return "mrz", num, f"P<{country}DOE<<JANE{'<' * 30}\n{mrz_line2(num, country)}", False
    return "label", num, f"Passport No. {num}  Nationality {country}  Expiry 15 JAN 2030", False


NATIONAL_LABELS = {"fr_nir": ("N° de sécurité sociale :", "NIR :"), "ca_sin": ("SIN:", "NAS :"),
                   "au_tfn": ("TFN:", "Tax file number:"), "it_codice_fiscale": ("Codice fiscale:", "C.F.:"),
                   "se_personnummer": ("Personnummer:", "Pers.nr"), "de_steuer_id": ("Steuer-ID:", "IdNr:"),
                   "uk_nino": ("NI number:", "National Insurance No.")}
NATIONAL_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "fr_nir": fr_nir, "ca_sin": ca_sin, "au_tfn": au_tfn, "it_codice_fiscale": it_codice_fiscale,
    "se_personnummer": se_personnummer, "de_steuer_id": de_steuer_id, "uk_nino": uk_nino}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    """A payroll or tax document's national id after one of its labels."""
    def gen(rng: random.Random, i: int) -> Value:
        value = NATIONAL_MAKERS[kind](rng)
        label = NATIONAL_LABELS[kind][i % 2]
        return f"label_{i % 2}", value, f"{label} {value}", False
    return gen


# ---- corpus ---------------------------------------------------------------------------------------------------

KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": phones(NANP_FORMS, NANP_LABELS), "phone_uk": phones(UK_FORMS, UK_LABELS),
    "phone_fr": phones(FR_FORMS, FR_LABELS), "phone_de": phones(DE_FORMS, DE_LABELS),
    "phone_in": phones(IN_FORMS, IN_LABELS), "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "auth_header": v_auth_header, "oauth_token": provider(oauth_token),
    "commerce_token": provider(commerce_token), "payment_key": provider(payment_key),
    "fintech_token": provider(fintech_token), "messaging_key": provider(messaging_key),
    "totp_seed": v_totp_seed, "recovery_code": v_recovery_code, "private_key": v_private_key,
    "session_cookie": v_session_cookie,
    **{kind: national_id(kind) for kind in NATIONAL_MAKERS}, "passport": v_passport,
}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """(carrier, text, is_json): the i-th carrier in turn, shifted each round so styles meet many carriers; raw
    snippets only in text carriers."""
    _style, secret, snip, raw_only = value
    names = list(TEXT_CARRIERS) if raw_only else list(JSON_CARRIERS) + list(TEXT_CARRIERS)
    name = names[(i + i // len(names)) % len(names)]
    if name in JSON_CARRIERS:
        return name, JSON_CARRIERS[name](rng, snip, secret), True
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
    """A 16-digit number in Visa's or Mastercard's IIN range whose last digit is not its Luhn digit."""
    body = rng.choice(["4", "5" + str(rng.randint(1, 5))])
    body += digits(rng, 15 - len(body))
    good = int(luhn_digit(body))
    return body + str((good + rng.randint(1, 9)) % 10)


def n_fare(rng: random.Random) -> str:
    fare = rng.choice(["YLOWUS", "QNC7EUR", "KLX14GB", "VH3MSUK", "TSAVER", "WPROMO2"])
    return (f"{rng.choice(['BA', 'LH', 'AF', 'AI', 'UA'])} {rng.randint(10, 2999)} {rng.choice('YQKVTW')} "
            f"{rng.randint(1, 28)}JUN LHRJFK {rng.randint(600, 1159):04d} {rng.randint(1200, 2359)}  FARE BASIS {fare}"
            f"  BAG 1PC  SEAT {rng.randint(1, 60)}{rng.choice('ABCDEFK')}")


def n_order(rng: random.Random) -> str:
    return rng.choice([f"Order #{rng.randint(1001, 99999)} has shipped",
                       f"Amazon order {digits(rng, 3)}-{digits(rng, 7)}-{digits(rng, 7)} - arriving Thursday",
                       f"WooCommerce order {rng.randint(1000, 90000)} status changed to completed",
                       f"gid://shopify/Order/{rng.randint(5 * 10**12, 6 * 10**12)}"])


def ups_check(body: str) -> str:
    """The 1Z check digit: letters as (ord - 63) mod 10, odd positions once, even positions twice, mod 10."""
    vals = [int(c) if c.isdigit() else (ord(c) - 63) % 10 for c in body]
    total = sum(vals[0::2]) + 2 * sum(vals[1::2])
    return str((10 - total % 10) % 10)


def s10_check(serial: str) -> str:
    """The UPU S10 check digit: weights 8,6,4,2,3,5,9,7; 11 - sum mod 11, 10 as 0 and 11 as 5."""
    c = 11 - sum(int(d) * w for d, w in zip(serial, (8, 6, 4, 2, 3, 5, 9, 7), strict=True)) % 11
    return {10: "0", 11: "5"}.get(c, str(c))


def n_tracking(rng: random.Random) -> str:
    which = rng.randrange(3)
    if which == 0:
        body = pick(rng, UPNUM, 6) + rng.choice(["01", "02", "03", "12", "13"]) + digits(rng, 7)
        return f"UPS tracking 1Z{body}{ups_check(body)}"
    if which == 1:
        serial = digits(rng, 8)
        return f"Royal Mail Tracked 24: {rng.choice(['RB', 'LX', 'CP'])}{serial}{s10_check(serial)}GB"
    return f"FedEx tracking number {rng.randint(2, 7)}{digits(rng, 11)} - out for delivery"


def n_masked(rng: random.Random) -> str:
    return rng.choice([f"Visa ending in {digits(rng, 4)}", f"•••• •••• •••• {digits(rng, 4)}",
                       f"XXXX-XXXX-XXXX-{digits(rng, 4)}", f"Account ****{digits(rng, 4)} (mask \"{digits(rng, 4)}\")",
                       f"IBAN DE** **** **** **** **{digits(rng, 2)} {digits(rng, 2)}",
                       f"Code sent to +44 ••• ••• {digits(rng, 3)}", f"SSN ***-**-{digits(rng, 4)}",
                       f"{rng.choice(FIRST)[0]}***@{rng.choice(['g***.com', 'o*****k.com'])}"])


def n_placeholder(rng: random.Random) -> str:
    return rng.choice(["Password: ********", 'placeholder="you@example.com"', "Enter your card number",
                       "IBAN: DE00 0000 0000 0000 0000 00", "Phone: (555) 555-5555", "api_key=<YOUR_API_KEY>",
                       "STRIPE_WEBHOOK_SECRET=${STRIPE_WEBHOOK_SECRET}", "password: {{ vault_password }}",
                       "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "token: REDACTED", "SSN: XXX-XX-XXXX",
                       "Authorization: Bearer <token>", f"hint: min {rng.randint(8, 14)} characters, one symbol"])


SERVICE_LINES = ("American Airlines reservations 1-800-433-7300", "Delta reservations 1-800-221-1212",
                 "United Airlines 1-800-864-8331", "UPS customer service 1-800-742-5877",
                 "FedEx 1-800-463-3339", "USPS 1-800-275-8777", "IRS help line 800-829-1040",
                 "Social Security Administration 1-800-772-1213", "HMRC income tax helpline 0300 200 3300",
                 "SNCF Connect 3635", "Deutsche Bahn Service-Nummer 030 2970", "Indian Railways enquiry 139",
                 "Marriott Bonvoy 1-800-627-7468", "Apple Support 1-800-275-2273", "Medicare 1-800-633-4227",
                 "PayPal customer service 1-888-221-1161", "Chase customer service 1-800-935-9935",
                 "Lufthansa Service Center +49 69 86 799 799", "1-800-FLOWERS")


def n_service(rng: random.Random) -> str:
    return f"If anything changes, call {rng.choice(SERVICE_LINES)} (published customer line)."


def n_time(rng: random.Random) -> str:
    return rng.choice([_stamp(rng), f"epoch_ms {1700000000000 + rng.randint(0, 10**11)}",
                       f"EVN|A08|2024{rng.randint(1, 12):02d}{rng.randint(10, 28)}{rng.randint(100000, 235959)}",
                       f"Check-in 15:00, check-out 11:00 on {_date(rng)}", f"exp={1718000000 + rng.randint(0, 10**6)}"])


def n_request(rng: random.Random) -> str:
    return rng.choice([f"Request-Id: req_{pick(rng, ALNUM, 14)}", f"request_id: {pick(rng, ALNUM, 15)}",
                       f"x-amzn-RequestId: {_gid(rng)}", f"X-Shopify-Request-Id: {_gid(rng)}",
                       f"trace {pick(rng, HEX, 32)}-{pick(rng, HEX, 16)}"])


def n_asset(rng: random.Random) -> str:
    sri = base64.b64encode(hashlib.sha384(rng.randbytes(16)).digest()).decode()
    return rng.choice([f"/static/js/checkout.{pick(rng, HEX, 8)}.js", f"styles.css?v={pick(rng, HEX, 10)}",
                       f'<script src="/app.{pick(rng, HEX, 20)}.js" integrity="sha384-{sri}"></script>',
                       f"ETag: W/\"{pick(rng, HEX, 32)}\""])


def n_selector(rng: random.Random) -> str:
    field = rng.choice(["password", "card_number", "iban", "email", "phone", "ssn", "api_key"])
    return rng.choice([f"#checkout-{field.replace('_', '-')}", f"input[name='{field}']",
                       f"//input[@id='{field}']/following-sibling::span", f"document.querySelector('#{field}-field')",
                       f'<label for="{field}">{field.replace("_", " ").title()}</label>'])


def n_csrf(rng: random.Random) -> str:
    name = rng.choice(["csrfmiddlewaretoken", "__RequestVerificationToken", "_csrf", "authenticity_token",
                       "woocommerce-process-checkout-nonce"])
    return rng.choice([f'<input type="hidden" name="{name}" value="">', f"header X-CSRF-Token, form field {name}",
                       f"missing {name} in POST /checkout (403)"])


def n_version(rng: random.Random) -> str:
    return rng.choice([f"X-Shopify-API-Version: 2024-{rng.choice(['01', '04', '07', '10'])}",
                       "Stripe-Version: 2024-06-20", "FHIR R4 (4.0.1)", "MSH-12 2.5.1",
                       f"WooCommerce {rng.randint(7, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 5)}",
                       f"plaid-python=={rng.randint(14, 24)}.{rng.randint(0, 3)}.0", "Amadeus Self-Service v2"])


def n_coord(rng: random.Random) -> str:
    return rng.choice([f"Hotel location lat {rng.uniform(-60, 60):.6f}, lng {rng.uniform(-120, 120):.6f}",
                       f"viewport {rng.choice(['1440x900', '390x844', '1920x1080'])}",
                       f"click at x={rng.randint(0, 1900)} y={rng.randint(0, 1000)}",
                       f"label size 4x6 in, {rng.randint(200, 300)} dpi"])


def n_luhn(rng: random.Random) -> str:
    return f"{rng.choice(['Booking ref', 'Voucher', 'Ref', 'Batch'])} {_luhn_bad(rng)}"


def n_iban_bad(rng: random.Random) -> str:
    country = rng.choice(["DE", "FR", "GB", "NL"])
    b = bban(rng, IBAN_BBAN[country])
    good = int(iban_check(country, b))
    bad = f"{(good + rng.randint(1, 90)) % 97 + 2:02d}"
    if bad == f"{good:02d}":
        bad = f"{(good % 90) + 3:02d}"
    return f"Test vector (invalid on purpose): {country}{bad}{b}"


def n_amount(rng: random.Random) -> str:
    return rng.choice([f"Total: ${rng.randint(1, 9)},{rng.randint(100, 999)}.{rng.randint(10, 99)}",
                       f"EUR {rng.randint(10, 9999)},{rng.randint(10, 99)}",
                       f"₹{rng.randint(1, 99)},{rng.randint(100, 999)}.00",
                       f"Net pay £{rng.randint(1, 9)},{rng.randint(100, 999)}.{rng.randint(10, 99)}"])


def n_clinical(rng: random.Random) -> str:
    return rng.choice([f"ICD-10 {rng.choice(['E11.9', 'J45.909', 'I10', 'M54.5'])}",
                       f"NDC {digits(rng, 5)}-{digits(rng, 4)}-{digits(rng, 2)}", f"CPT {rng.randint(99202, 99215)}",
                       f"LOINC {rng.randint(1000, 99999)}-{rng.randint(0, 9)}", f"RxNorm {rng.randint(10000, 999999)}"])


def gtin13(rng: random.Random) -> str:
    """A GTIN-13: 12 digits and the GS1 check digit (weights 1,3 from the left)."""
    body = digits(rng, 12)
    return body + str((10 - sum(int(d) * (3 if k % 2 else 1) for k, d in enumerate(body)) % 10) % 10)


def n_product(rng: random.Random) -> str:
    return rng.choice([f"GTIN {gtin13(rng)}", f"SKU TEE-{rng.choice('SMLX')}-{rng.choice(['BLK', 'WHT'])}",
                       f"ASIN B0{pick(rng, UPNUM, 8)}", f"HS code {digits(rng, 4)}.{digits(rng, 2)}"])


def aba_routing(rng: random.Random) -> str:
    """An ABA routing number: Federal Reserve prefix 01-12, 7 digits, the 3-7-1 check digit."""
    body = f"{rng.randint(1, 12):02d}" + digits(rng, 6)
    total = sum(int(d) * (3, 7, 1)[k % 3] for k, d in enumerate(body))
    return body + str((10 - total % 10) % 10)


def n_bank(rng: random.Random) -> str:
    bic = rng.choice(["DEUTDEFF", "BNPAFRPP", "NWBKGB2L", "HDFCINBB"])
    return rng.choice([f"Routing number (ABA) {aba_routing(rng)}", f"BIC {bic}",
                       f"Sort code {rng.randint(10, 99)}-{rng.randint(10, 99)}-{rng.randint(10, 99)}",
                       f"IFSC HDFC0{digits(rng, 6)}"])


def n_form(rng: random.Random) -> str:
    return rng.choice(["Form W-2, Box 12a code D", "OMB No. 1545-0008", "Form 1099-NEC box 1",
                       f"VAT return Box {rng.randint(1, 9)}", "P60 End of Year Certificate, tax year to 5 April 2024",
                       "Schedule C line 31", "IRS Publication 15-T"])


def n_object_id(rng: random.Random) -> str:
    return rng.choice([f"ObjectId(\"{pick(rng, HEX, 24)}\")", f"account_id {pick(rng, ALNUM, 37)}",
                       f"toolu_01{pick(rng, ALNUM, 22)}", f"evt_{pick(rng, ALNUM, 24)}", f"pi_{pick(rng, ALNUM, 24)}"])


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "fare_and_legs": n_fare, "order_number": n_order, "tracking_number": n_tracking, "masked_value": n_masked,
    "placeholder": n_placeholder, "service_line": n_service, "timestamp": n_time, "request_id": n_request,
    "asset_hash": n_asset, "selector": n_selector, "csrf_field_name": n_csrf, "version": n_version,
    "coordinate_pixel": n_coord, "luhn_invalid": n_luhn, "iban_bad_check": n_iban_bad, "amount": n_amount,
    "clinical_code": n_clinical, "product_code": n_product, "bank_code": n_bank, "form_ref": n_form,
    "object_id": n_object_id,
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
