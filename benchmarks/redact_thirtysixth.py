"""The thirty-sixth blind redaction corpus: trading, crypto, lending and insurance agents, what an agent on a
finance desk reads and writes. Written from the formats' public specifications by someone who read neither the
detection rules nor the other corpora.

Carriers (the `form` head): FIX 4.4 session logs (tag=value, SOH or `|`, with real BodyLength and CheckSum), `.env`
files, ccxt/python-binance config code, exchange REST request logs, bitcoind-style node and wallet logs, ACORD-like
claim XML, adjusters' notes, FNOL call transcripts, OFX statements, ISO 20022 CAMT.053 XML, SWIFT MT940 (`:86:`),
collections and dunning e-mails, compliance case notes, the agent's chat replies, loan applications (URLA/1003
extracts) and credit-bureau report extracts as text; Onfido, Jumio, Persona and Sumsub webhooks, Guidewire
ClaimCenter JSON, QuickBooks, Xero and NetSuite API records, Alpaca and Coinbase tool results, Plaid income
reports, MCP tool results and chat-completion messages as JSON. About a third is JSON carried (`is_json`).
Labels of personal values come in 28 languages (`LANGS`), phones with their own country's words.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10), in electronic and paper form; SSNs, the SSA's rules (area not 000/666/9xx,
group not 00, serial not 0000); phones, the national numbering plans (NANP with real geographic NPAs, Ofcom
avoiding its drama ranges, ARCEP avoiding its fiction ranges, BNetzA mobile blocks 015x/016x/017x and city codes,
TRAI/DoT mobiles 6-9 and STD codes); AWS keys, IAM's documented AKIA/ASIA ids (base32 alphabet) and 40-character
secrets; Slack, Discord, Teams (webhookb2 and Power Automate `sig=`), Google Chat (`token=`), Mattermost, Zapier
and Telegram (bot token after the colon) webhook URLs as their docs print them, the secret being the token part
only; Stripe `whsec_` signing secrets and `sk_live_`/`rk_live_` keys; PostgreSQL/MongoDB/Redis/AMQP URIs,
ADO.NET, ODBC, JDBC and Azure Storage/Service Bus connection strings (the secret is the password or key only);
JWT (RFC 7519/7515), HTTP Basic (RFC 7617), Bearer (RFC 6750) and the exchanges' key headers (Binance
`X-MBX-APIKEY`, Kraken `API-Key`, Coinbase `CB-ACCESS-KEY`); exchange secrets in the lengths their docs give
(Binance 64, Kraken 64 bytes base64, Alpaca 40, OKX 32 hex); PEM SEC1/PKCS#8 EC keys (Coinbase CDP key JSON) and
OpenSSH Ed25519 keys (the secret is the base64 body); Bitcoin WIF and BIP32 `xprv` (Base58Check) and Ethereum
hex private keys; TOTP seeds (RFC 4226/6238, Google Authenticator Key URI Format, base32); recovery codes;
Twilio auth tokens (32 hex); national ids (outside the target): Spanish DNI/NIE (mod 23 letter), Brazilian CPF
(two mod 11 digits), Swedish personnummer (Luhn), Finnish henkilötunnus (mod 31), Norwegian fødselsnummer (two
mod 11 digits), Chinese resident id (ISO 7064 MOD 11-2), Indian Aadhaar (Verhoeff), Belgian national number
(mod 97).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, a PEM key's body). A request signature (HMAC of one request)
is neither a value nor a near miss: it opens nothing past its `recvWindow`, yet hiding it is no harm. Providers'
published test card numbers are held neither as values nor as near misses. Near misses are what this desk holds
that is not secret or personal in itself: FIX session fields, ISINs, CUSIPs and LEIs (valid check digits, public
identifiers of securities and firms), BICs and ABA routing numbers (banks'), transaction and block hashes (public
ledgers), request and order ids, timestamps, amounts and rates, masked values, placeholders, version strings,
businesses' published service numbers, Luhn-invalid references, tracking numbers, UI selectors and sizes, asset
hashes, CSRF and config field NAMES, coordinates, statement references: none identifies a person or opens anything.
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
from xml.sax.saxutils import escape

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

SEED = 36
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "se_personnummer", "fi_hetu", "no_fnr", "cn_ric", "in_aadhaar",
                            "be_nrn"})
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
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

LANGS: tuple[tuple[str, ...], ...] = (
    # code, intro, password, email, phone, account, card, API key
    ("en", "Here are the details you asked for.", "Password", "Email", "Phone", "Account (IBAN)", "Card number",
     "API key"),
    ("de", "Hier sind die gewünschten Angaben.", "Passwort", "E-Mail", "Telefon", "Konto (IBAN)", "Kartennummer",
     "API-Schlüssel"),
    ("fr", "Voici les informations demandées.", "Mot de passe", "Courriel", "Téléphone", "Compte (IBAN)",
     "Numéro de carte", "Clé API"),
    ("es", "Aquí tiene los datos que pidió.", "Contraseña", "Correo electrónico", "Teléfono", "Cuenta (IBAN)",
     "Número de tarjeta", "Clave de API"),
    ("it", "Ecco i dati richiesti.", "Password", "E-mail", "Telefono", "Conto (IBAN)", "Numero di carta",
     "Chiave API"),
    ("pt", "Seguem os dados solicitados.", "Senha", "E-mail", "Telefone", "Conta (IBAN)", "Número do cartão",
     "Chave de API"),
    ("nl", "Hier zijn de gevraagde gegevens.", "Wachtwoord", "E-mail", "Telefoon", "Rekening (IBAN)", "Kaartnummer",
     "API-sleutel"),
    ("pl", "Oto dane, o które Pan prosił.", "Hasło", "E-mail", "Telefon", "Konto (IBAN)", "Numer karty",
     "Klucz API"),
    ("sv", "Här är uppgifterna du bad om.", "Lösenord", "E-post", "Telefon", "Konto (IBAN)", "Kortnummer",
     "API-nyckel"),
    ("da", "Her er de oplysninger, du bad om.", "Adgangskode", "E-mail", "Telefon", "Konto (IBAN)", "Kortnummer",
     "API-nøgle"),
    ("nb", "Her er opplysningene du ba om.", "Passord", "E-post", "Telefon", "Konto (IBAN)", "Kortnummer",
     "API-nøkkel"),
    ("fi", "Tässä pyytämäsi tiedot.", "Salasana", "Sähköposti", "Puhelin", "Tili (IBAN)", "Kortin numero",
     "API-avain"),
    ("cs", "Zde jsou požadované údaje.", "Heslo", "E-mail", "Telefon", "Účet (IBAN)", "Číslo karty", "Klíč API"),
    ("ro", "Iată datele solicitate.", "Parolă", "E-mail", "Telefon", "Cont (IBAN)", "Numărul cardului",
     "Cheie API"),
    ("hu", "Íme a kért adatok.", "Jelszó", "E-mail", "Telefon", "Számla (IBAN)", "Kártyaszám", "API-kulcs"),
    ("el", "Ορίστε τα στοιχεία που ζητήσατε.", "Κωδικός πρόσβασης", "Email", "Τηλέφωνο", "Λογαριασμός (IBAN)",
     "Αριθμός κάρτας", "Κλειδί API"),
    ("tr", "İstediğiniz bilgiler aşağıda.", "Şifre", "E-posta", "Telefon", "Hesap (IBAN)", "Kart numarası",
     "API anahtarı"),
    ("ru", "Вот запрошенные данные.", "Пароль", "Эл. почта", "Телефон", "Счёт (IBAN)", "Номер карты", "API-ключ"),
    ("uk", "Ось запитані дані.", "Пароль", "Ел. пошта", "Телефон", "Рахунок (IBAN)", "Номер картки", "Ключ API"),
    ("ar", "إليك البيانات التي طلبتها.", "كلمة المرور", "البريد الإلكتروني", "الهاتف", "الحساب (IBAN)",
     "رقم البطاقة", "مفتاح API"),
    ("he", "הנה הפרטים שביקשת.", "סיסמה", "אימייל", "טלפון", "חשבון (IBAN)", "מספר כרטיס", "מפתח API"),
    ("hi", "आपके द्वारा माँगा गया विवरण यह है।", "पासवर्ड", "ईमेल", "फ़ोन", "खाता (IBAN)", "कार्ड नंबर", "API कुंजी"),
    ("ja", "ご依頼の情報は次のとおりです。", "パスワード", "メール", "電話", "口座 (IBAN)", "カード番号", "APIキー"),
    ("zh", "以下是您要的信息。", "密码", "电子邮件", "电话", "账户 (IBAN)", "卡号", "API 密钥"),
    ("ko", "요청하신 정보입니다.", "비밀번호", "이메일", "전화", "계좌 (IBAN)", "카드 번호", "API 키"),
    ("id", "Berikut data yang Anda minta.", "Kata sandi", "Email", "Telepon", "Rekening (IBAN)", "Nomor kartu",
     "Kunci API"),
    ("vi", "Đây là thông tin bạn yêu cầu.", "Mật khẩu", "Email", "Điện thoại", "Tài khoản (IBAN)", "Số thẻ",
     "Khóa API"),
    ("th", "นี่คือข้อมูลที่คุณขอ", "รหัสผ่าน", "อีเมล", "โทรศัพท์", "บัญชี (IBAN)", "หมายเลขบัตร", "คีย์ API"),
)
"""The agent's replies to users: (code, intro, then the labels for password, email, phone, account, card, key)."""

LABEL = {"password": 2, "email": 3, "phone": 4, "account": 5, "card": 6, "key": 7}


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


def localized(n: int, label: str, value: str) -> str:
    """An agent reply in the `n`-th language of `LANGS` (mod its length): its intro, then the value under its own
    label. Each kind's localized style starts at its own offset so that the kinds together cover every language."""
    lang = LANGS[n % len(LANGS)]
    return f"{lang[1]}\n{lang[LABEL[label]]}: {value}"


# ---- carrier helpers ------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    """An ISO 8601 UTC timestamp in 2024-2025."""
    return (f"{rng.choice((2024, 2025))}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z")


def _fix_time(rng: random.Random) -> str:
    """FIX UTCTimestamp (YYYYMMDD-HH:MM:SS.sss)."""
    return f"2025{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}-{rng.randint(0, 23):02d}:" \
           f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}"


def _amount(rng: random.Random) -> str:
    return f"{rng.randint(10, 99999)}.{rng.randint(0, 99):02d}"


COMPANIES = ("Northwind Capital", "Harbor Lane Lending", "Bluecrest Mutual", "Kestrel Insurance", "Aurum Trading",
             "Lindqvist Kredit", "Meridian Assurance", "Ostrava Leasing", "Pacifica Underwriters", "Delta Ridge Bank")
EXCHANGES = ("binance", "kraken", "coinbase", "okx", "kucoin", "bitstamp", "bybit", "gemini")
SYMBOLS = ("AAPL", "MSFT", "BTC/USDT", "ETH/USD", "EUR/USD", "SPY", "TSLA", "SOL/USDC", "ES=F", "GBP/JPY")


# ---- text carriers --------------------------------------------------------------------------------------------

def c_fix(rng: random.Random, snip: str, _s: str) -> str:
    """A FIX 4.4 message with the snippet in Text (58); BodyLength (9) and CheckSum (10) computed as the spec says."""
    soh = "\x01"
    body = soh.join((f"35={rng.choice('A5BD8')}", f"49={rng.choice(('NWCAP', 'AURUMFX', 'HLLEND'))}",
                     f"56={rng.choice(('BROKERX', 'ECNPRIME', 'IBKRFIX'))}", f"34={rng.randint(1, 99999)}",
                     f"52={_fix_time(rng)}", f"58={snip}")) + soh
    head = f"8=FIX.4.4{soh}9={len(body.encode())}{soh}"
    msg = head + body
    msg += f"10={sum(msg.encode()) % 256:03d}{soh}"
    if rng.random() < 0.5:
        msg = msg.replace(soh, "|")
    return f"{_fix_time(rng)} : {rng.choice(('OUT', 'IN'))} : {msg}"


def c_dotenv(rng: random.Random, snip: str, _s: str) -> str:
    return "\n".join(("# desk agent settings, read by python-dotenv", "APCA_API_BASE_URL=https://paper-api.alpaca.markets",
                      f"CCXT_EXCHANGE={rng.choice(EXCHANGES)}", f"RISK_MAX_NOTIONAL_USD={rng.randint(1, 90) * 1000}",
                      snip, "LOG_LEVEL=INFO"))


def c_ccxt(rng: random.Random, snip: str, _s: str) -> str:
    ex = rng.choice(EXCHANGES)
    return (f"import ccxt\n\nexchange = ccxt.{ex}({{\"enableRateLimit\": True, \"timeout\": 30000}})\n"
            f"NOTES = \"\"\"\n{snip}\n\"\"\"\nmarkets = exchange.load_markets()\n"
            f"print(exchange.fetch_ticker(\"{rng.choice(SYMBOLS)}\"))\n")


def c_restlog(rng: random.Random, snip: str, _s: str) -> str:
    path = rng.choice(("/api/v3/order", "/0/private/Balance", "/v2/orders", "/api/v3/brokerage/orders"))
    return (f"{_ts(rng)} INFO  rest.client POST {path} status=200 latency_ms={rng.randint(8, 900)}\n"
            f"{_ts(rng)} DEBUG rest.client {snip}\n"
            f"{_ts(rng)} INFO  rest.client GET /api/v3/time status=200 latency_ms={rng.randint(3, 90)}")


def c_nodelog(rng: random.Random, snip: str, _s: str) -> str:
    best = "0" * 19 + pick(rng, HEX, 45)
    return (f"{_ts(rng)} UpdateTip: new best={best} height={rng.randint(820000, 900000)} version=0x2000e000 "
            f"log2_work=95.{rng.randint(10, 99)} tx={rng.randint(10**9, 2 * 10**9)} progress=1.000000\n"
            f"{_ts(rng)} [wallet] {snip}\n"
            f"{_ts(rng)} Saw new header hash={'0' * 19 + pick(rng, HEX, 45)} height={rng.randint(820000, 900000)}")


def c_acord(rng: random.Random, snip: str, _s: str) -> str:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<ACORD><InsuranceSvcRq><RqUID>{_uuid(rng)}</RqUID>'
            f"<ClaimsNotificationAddRq><ClaimsOccurrence><LossDt>2025-{rng.randint(1, 12):02d}-"
            f"{rng.randint(1, 28):02d}</LossDt><IncidentDesc>{escape(snip)}</IncidentDesc></ClaimsOccurrence>"
            "</ClaimsNotificationAddRq></InsuranceSvcRq></ACORD>")


def c_adjuster(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Claim {rng.randint(10, 99)}-{rng.randint(100000, 999999)} -- adjuster notes\n"
            f"{_ts(rng)[:10]} Inspected vehicle, estimate ${_amount(rng)} pending supplement.\n"
            f"{_ts(rng)[:10]} {snip}\nReserve unchanged. Next diary in 7 days.")


def c_fnol(rng: random.Random, snip: str, _s: str) -> str:
    return (f"FNOL call {_uuid(rng)[:8]} (recorded, {rng.randint(4, 19)} min)\n"
            "Agent: Thank you for calling, I'm sorry to hear about the loss. Can you confirm a few details?\n"
            f"Caller: Sure. {snip}\nAgent: Thank you, I have noted that on the claim.")


def c_ofx(rng: random.Random, snip: str, _s: str) -> str:
    return ("OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><BANKTRANLIST>\n"
            f"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>2025{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
            f"<TRNAMT>-{_amount(rng)}<FITID>{digits(rng, 12)}<NAME>TRANSFER<MEMO>{escape(snip)}\n"
            "</STMTTRN></BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>")


def c_camt(rng: random.Random, snip: str, _s: str) -> str:
    return ('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt><Stmt>'
            f"<Id>STMT{digits(rng, 10)}</Id><Ntry><Amt Ccy=\"EUR\">{_amount(rng)}</Amt><CdtDbtInd>CRDT</CdtDbtInd>"
            f"<AddtlNtryInf>{escape(snip)}</AddtlNtryInf></Ntry></Stmt></BkToCstmrStmt></Document>")


def c_mt940(rng: random.Random, snip: str, _s: str) -> str:
    return (f":20:STMT{digits(rng, 8)}\n:25:{pick(rng, UPPER, 4)}DEFF/{digits(rng, 10)}\n:28C:{rng.randint(1, 300)}/1\n"
            f":60F:C2503{rng.randint(10, 28)}EUR{rng.randint(100, 99999)},{rng.randint(0, 99):02d}\n"
            f":61:2503{rng.randint(10, 28)}D{rng.randint(10, 9999)},00NTRFNONREF\n:86:{snip}\n"
            f":62F:C2503{rng.randint(10, 28)}EUR{rng.randint(100, 99999)},00")


def c_dunning(rng: random.Random, snip: str, _s: str) -> str:
    company = rng.choice(COMPANIES)
    return (f"From: collections@{company.split()[0].lower()}.example\nSubject: Reminder: payment of "
            f"${_amount(rng)} is {rng.randint(5, 90)} days past due\n\nDear customer,\n\n"
            f"our records show an open balance on loan {rng.randint(10**7, 10**8)}. {snip}\n\nKind regards,\n"
            f"{company} Collections")


def c_compliance(rng: random.Random, snip: str, _s: str) -> str:
    alert = rng.choice(("structuring", "rapid movement", "sanctions hit", "PEP screening"))
    return (f"CASE AML-{rng.randint(2024, 2025)}-{rng.randint(1000, 99999)} | status: under review | "
            f"analyst: {pick(rng, LOWER, 2)}{rng.randint(10, 99)}\nAlert: {alert}\nNote: {snip}\n"
            "Disposition pending second review.")


def c_chat(rng: random.Random, snip: str, _s: str) -> str:
    return (f"[{_ts(rng)}] assistant -> customer #{rng.randint(10000, 999999)} (conversation {_uuid(rng)[:13]})\n"
            f"{snip}\n[{_ts(rng)}] customer: thanks")


def c_urla(rng: random.Random, snip: str, _s: str) -> str:
    return (f"UNIFORM RESIDENTIAL LOAN APPLICATION -- extract, loan {rng.randint(10**9, 10**10)}\n"
            f"Loan amount: ${rng.randint(100, 900) * 1000}  Term: {rng.choice((180, 360))} months\n"
            f"Section 1a. Personal information\n{snip}\nDTI: {rng.randint(18, 45)}.{rng.randint(0, 9)}%")


def c_bureau(rng: random.Random, snip: str, _s: str) -> str:
    return (f"CREDIT REPORT EXTRACT  (pulled {_ts(rng)[:10]}, score model FICO 8: {rng.randint(540, 840)})\n"
            f"{snip}\nTRADELINES  {rng.choice(('AUTO', 'REVOLVING', 'MORTGAGE'))}  bal ${_amount(rng)}  "
            f"status CURRENT  opened {rng.randint(2010, 2024)}")


TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "fix": c_fix, "dotenv": c_dotenv, "ccxt": c_ccxt, "restlog": c_restlog, "nodelog": c_nodelog,
    "acord": c_acord, "adjuster": c_adjuster, "fnol": c_fnol, "ofx": c_ofx, "camt": c_camt, "mt940": c_mt940,
    "dunning": c_dunning, "compliance": c_compliance, "chat": c_chat, "urla": c_urla, "bureau": c_bureau,
}


# ---- JSON carriers --------------------------------------------------------------------------------------------

def j_onfido(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"payload": {"resource_type": "check", "action": "check.completed",
                              "object": {"id": _uuid(rng), "status": "complete", "completed_at_iso8601": _ts(rng),
                                         "href": f"/v3.6/checks/{_uuid(rng)}"}}, "applicant_note": snip})


def j_jumio(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"callbackSentAt": _ts(rng), "userReference": f"user-{rng.randint(1000, 99999)}",
                  "workflowExecution": {"id": _uuid(rng), "status": "PROCESSED", "definitionKey": "10013"},
                  "account": {"id": _uuid(rng)}, "reviewerComment": snip})


def j_persona(rng: random.Random, snip: str, _s: str) -> str:
    inquiry = {"type": "inquiry", "id": f"inq_{pick(rng, ALNUM, 24)}",
               "attributes": {"status": "completed", "reference-id": f"cust-{rng.randint(100, 99999)}", "note": snip}}
    return _dump({"data": {"type": "event", "id": f"evt_{pick(rng, ALNUM, 24)}",
                           "attributes": {"name": "inquiry.completed", "payload": {"data": inquiry}}}})


def j_sumsub(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"applicantId": pick(rng, HEX, 24), "inspectionId": pick(rng, HEX, 24),
                  "correlationId": pick(rng, HEX, 32), "levelName": "basic-kyc-level", "type": "applicantReviewed",
                  "reviewResult": {"reviewAnswer": rng.choice(("GREEN", "RED")), "moderationComment": snip},
                  "createdAtMs": _ts(rng).replace("T", " ").rstrip("Z")})


def j_guidewire(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"data": {"attributes": {"claimNumber": f"{rng.randint(100, 999)}-{rng.randint(10, 99)}-"
                                                         f"{rng.randint(100000, 999999)}",
                                          "lossDate": _ts(rng), "lossType": {"code": rng.choice(("AUTO", "PR"))},
                                          "description": snip}, "checksum": str(rng.randint(1, 99))}})


def j_quickbooks(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"Invoice": {"Id": str(rng.randint(100, 9999)), "DocNumber": str(rng.randint(1000, 99999)),
                              "TotalAmt": float(_amount(rng)), "CustomerMemo": {"value": snip},
                              "SyncToken": "0"}, "time": _ts(rng)})


def j_xero(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"BankTransactions": [{"BankTransactionID": _uuid(rng), "Type": "RECEIVE", "Status": "AUTHORISED",
                                        "Reference": snip, "Total": float(_amount(rng)), "CurrencyCode": "GBP"}]})


def j_netsuite(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"links": [{"rel": "self", "href": f"/services/rest/record/v1/vendorBill/{rng.randint(100, 99999)}"}],
                  "id": str(rng.randint(100, 99999)), "tranId": f"VB{rng.randint(1000, 9999)}", "memo": snip})


def j_alpaca(rng: random.Random, snip: str, _s: str) -> str:
    order = {"id": _uuid(rng), "client_order_id": _uuid(rng), "symbol": rng.choice(SYMBOLS[:2]), "qty": "10",
             "side": "buy", "status": "filled"}
    return _dump({"tool": "alpaca.get_order", "result": order, "agent_log": snip})


def j_coinbase(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"success": True, "order_id": _uuid(rng), "product_id": rng.choice(("BTC-USD", "ETH-EUR")),
                  "debug": {"request_id": _uuid(rng), "message": snip}})


def j_plaid(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"bank_income": [{"bank_income_id": _uuid(rng), "days_requested": 90,
                                   "bank_income_summary": {"total_amount": float(_amount(rng)),
                                                           "iso_currency_code": "USD"},
                                   "underwriter_note": snip}], "request_id": pick(rng, ALNUM, 15)})


def j_mcp(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"jsonrpc": "2.0", "id": rng.randint(1, 500),
                  "result": {"content": [{"type": "text", "text": snip}], "isError": False}})


def j_messages(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"model": "desk-agent", "messages": [
        {"role": "user", "content": rng.choice(("Can you pull that up?", "What did you store for me?"))},
        {"role": "assistant", "content": snip}]})


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "onfido": j_onfido, "jumio": j_jumio, "persona": j_persona, "sumsub": j_sumsub, "guidewire": j_guidewire,
    "quickbooks": j_quickbooks, "xero": j_xero, "netsuite": j_netsuite, "alpaca": j_alpaca, "coinbase": j_coinbase,
    "plaid": j_plaid, "mcp": j_mcp, "messages": j_messages,
}


# ---- secrets --------------------------------------------------------------------------------------------------

PW_SYMBOLS = "!#$%*-_.@?+=~^"
WORDS = ("amber", "harbor", "quartz", "falcon", "meadow", "copper", "violet", "tundra", "lantern", "saffron",
         "glacier", "orchid", "ember", "walnut", "cobalt", "juniper")


def password_value(rng: random.Random) -> str:
    """A user-chosen password: mixed characters with a letter, a digit and a symbol, or a dashed passphrase. No
    `& < > " ' \\ |`, which the XML and FIX carriers would escape or split."""
    if rng.random() < 0.3:
        words = [rng.choice(WORDS) for _ in range(3)]
        words[rng.randrange(3)] = words[0].capitalize()
        return "-".join(words) + str(rng.randint(10, 999))
    body = pick(rng, ALNUM + PW_SYMBOLS, rng.randint(9, 18))
    return rng.choice(UPPER) + body + rng.choice(string.digits) + rng.choice(PW_SYMBOLS)


def v_password(rng: random.Random, i: int) -> Value:
    pw = password_value(rng)
    user = f"{rng.choice(('trader', 'desk', 'uw', 'claims'))}{rng.randint(1, 99):02d}"
    styles = [
        ("fix_logon", f"Logon 553={user} 554={pw} 98=0 108=30"),
        ("fix_newpw", f"password change requested: 553={user} 925={pw}"),
        ("ibc_ini", f"IbLoginId={user}\nIbPassword={pw}\nTradingMode=paper"),
        ("bitcoin_conf", f"server=1\nrpcuser={user}\nrpcpassword={pw}"),
        ("ccxt_passphrase", f"'apiKey': os.environ['OKX_KEY'], 'password': '{pw}'"),
        ("env_passphrase", f"KUCOIN_API_PASSPHRASE={pw}"),
        ("chat", f"my password for the broker portal is {pw} if you need to log in"),
        ("localized", localized(i // 11, "password", pw)),
        ("portal", f"Carrier portal login -- user: {user} / pass: {pw}"),
        ("sftp", f"SFTP for the bureau drop: sftp.{rng.choice(('equifax', 'experian', 'transunion'))}-drop.example, "
                 f"login {user}, pwd {pw}"),
        ("yaml", f"broker:\n  username: {user}\n  password: \"{pw}\""),
    ]
    style, snip = styles[i % len(styles)]
    return style, pw, snip, False


def akia(rng: random.Random, head: str = "AKIA") -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (temporary) and 16 characters of the base32 alphabet."""
    return head + pick(rng, BASE32, 16)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    sec = pick(rng, B64, 40)
    kid, tmp = akia(rng), akia(rng, "ASIA")
    styles = [
        ("credentials", f"[default]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}\nregion = us-east-1"),
        ("env", f"AWS_ACCESS_KEY_ID={kid}\nAWS_SECRET_ACCESS_KEY={sec}"),
        ("boto3", f"boto3.client('s3', aws_access_key_id='{kid}', aws_secret_access_key='{sec}')"),
        ("beside_id", f"statements bucket creds {kid} {sec}"),
        ("sts", f"AccessKeyId: {tmp}  SecretAccessKey: {sec}  Expiration: {_ts(rng)}"),
        ("slash_pair", f"use {kid}/{sec} for the archive role"),
        ("labelled", f"AWS secret key: {sec}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, sec, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    styles = ("slack", "discord", "teams", "power_automate", "google_chat", "mattermost", "zapier", "telegram")
    style = styles[i % len(styles)]
    if style == "slack":
        token = pick(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, UPNUM, 10)}/B{pick(rng, UPNUM, 10)}/{token}"
    elif style == "discord":
        token = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{token}"
    elif style == "teams":
        token = pick(rng, HEX, 32)
        url = (f"https://{rng.choice(('northwind', 'kestrel', 'aurum'))}.webhook.office.com/webhookb2/{_uuid(rng)}@"
               f"{_uuid(rng)}/IncomingWebhook/{token}/{_uuid(rng)}")
    elif style == "power_automate":
        token = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={token}")
    elif style == "google_chat":
        token = pick(rng, URLSAFE, 43) + "%3D"
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
               f"{pick(rng, URLSAFE, 33)}&token={token}")
    elif style == "mattermost":
        token = pick(rng, LOWNUM, 26)
        url = f"https://chat.{rng.choice(('deskops', 'riskteam'))}.example/hooks/{token}"
    elif style == "zapier":
        token = pick(rng, LOWNUM, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{rng.randint(10**6, 10**7)}/{token}/"
    else:
        token = pick(rng, URLSAFE, 35)
        url = f"https://api.telegram.org/bot{rng.randint(10**8, 10**10)}:{token}/sendMessage"
    contexts = (f"FILL_ALERT_WEBHOOK={url}", f"posting fills to {url}", f"alerts:\n  webhook_url: {url}",
                f"requests.post(\"{url}\", json=payload)", f"margin-call notifications -> {url}")
    return style, token, contexts[i % len(contexts)], False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    sec = "whsec_" + pick(rng, ALNUM, 32)
    styles = [
        ("env", f"STRIPE_WEBHOOK_SECRET={sec}"),
        ("code", f"endpoint_secret = '{sec}'\nevent = stripe.Webhook.construct_event(payload, sig_header, "
                 "endpoint_secret)"),
        ("cli", f"> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is {sec} "
                "(^C to quit)"),
        ("chat", f"the signing secret for the loan-payments endpoint is {sec}"),
        ("yaml", f"stripe:\n  webhook_secret: {sec}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, sec, snip, False


def uri_password(rng: random.Random) -> str:
    """A password that needs no percent-encoding in a URI's userinfo (RFC 3986 unreserved characters)."""
    return pick(rng, ALNUM, rng.randint(10, 20)) + rng.choice("-._~") + pick(rng, ALNUM, 3)


def v_connection_string(rng: random.Random, i: int) -> Value:
    styles = ("postgres", "mongodb", "redis", "amqp", "adonet", "odbc", "jdbc", "azure_storage", "service_bus",
              "mysql")
    style = styles[i % len(styles)]
    user = rng.choice(("ledger", "uw_app", "claims_svc", "risk_ro"))
    host = f"{rng.choice(('db', 'ledger', 'uw'))}-{rng.randint(1, 9)}.{rng.choice(('internal', 'corp'))}.example"
    pw = uri_password(rng)
    if style == "postgres":
        snip = f"DATABASE_URL=postgresql://{user}:{pw}@{host}:5432/loans?sslmode=require"
    elif style == "mongodb":
        snip = f"MONGO_URI=mongodb+srv://{user}:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/kyc?retryWrites=true"
    elif style == "redis":
        snip = f"celery broker: redis://:{pw}@{host}:6379/0"
    elif style == "amqp":
        snip = f"amqp://{user}:{pw}@{host}:5672/orders"
    elif style == "adonet":
        snip = f"Server=tcp:{host},1433;Database=Claims;User Id={user};Password={pw};Encrypt=True;"
    elif style == "odbc":
        snip = f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=GL;Uid={user};Pwd={pw};"
    elif style == "jdbc":
        snip = f"jdbc:postgresql://{host}:5432/underwriting?user={user}&password={pw}&ssl=true"
    elif style == "azure_storage":
        pw = base64.b64encode(rng.randbytes(64)).decode()
        snip = (f"DefaultEndpointsProtocol=https;AccountName=stmt{pick(rng, LOWNUM, 8)};AccountKey={pw};"
                "EndpointSuffix=core.windows.net")
    elif style == "service_bus":
        pw = base64.b64encode(rng.randbytes(32)).decode()
        snip = (f"Endpoint=sb://trades-{pick(rng, LOWNUM, 6)}.servicebus.windows.net/;"
                f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={pw}")
    else:
        snip = f"mysql://{user}:{pw}@{host}:3306/policies"
    return style, pw, snip, False


def v_labelled_key(rng: random.Random, i: int) -> Value:
    makers = (("polygon", lambda: pick(rng, ALNUM, 32)), ("alpha_vantage", lambda: pick(rng, UPNUM, 16)),
              ("plaid_secret", lambda: pick(rng, HEX, 30)), ("finnhub", lambda: pick(rng, LOWNUM, 20)),
              ("tiingo", lambda: pick(rng, HEX, 40)), ("fmp", lambda: pick(rng, ALNUM, 32)))
    vendor, make = makers[i % len(makers)]
    key = make()
    labels = (f"API key: {key}", f"X-API-Key: {key}", f"apikey={key}", f"Clé API : {key}",
              f"API-Schlüssel: {key}", f"APIキー：{key}", localized(i // 10 + 14, "key", key),
              f"{vendor} api_key = \"{key}\"",
              f"PLAID_SECRET={key}", f"Your API key is {key}")
    return vendor, key, labels[i % len(labels)], False


ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


def _disguise_base(rng: random.Random, i: int) -> str:
    bases = (lambda: "sk_live_" + pick(rng, ALNUM, 24), lambda: "whsec_" + pick(rng, ALNUM, 32),
             lambda: pick(rng, B64, 40), password_value, lambda: pick(rng, ALNUM, 64))
    make = bases[i % len(bases)]
    return make(rng) if make is password_value else make()


def v_disguised(rng: random.Random, i: int) -> Value:
    base = _disguise_base(rng, i // 4)
    style = ("zero_width", "fullwidth", "percent", "json_u")[i % 4]
    if style == "zero_width":
        cut = rng.randint(4, len(base) - 4)
        value = base[:cut] + rng.choice(ZERO_WIDTH) + base[cut:]
    elif style == "fullwidth":
        value = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in base)
    elif style == "percent":
        value = "".join(f"%{ord(c):02X}" if rng.random() < 0.5 or not c.isalnum() else c for c in base)
    else:
        value = "".join(f"\\u{ord(c):04x}" if rng.random() < 0.4 else c for c in base)
    labels = (f"secret: {value}", f"api_secret={value}", f"the key they pasted: {value}", f"token {value}")
    return style, value, labels[i // 4 % len(labels)], style == "json_u"


# ---- personal data --------------------------------------------------------------------------------------------

FIRST = ("maria", "jonas", "aisha", "wei", "priya", "lukas", "camille", "mateo", "sofia", "kenji", "olga", "ahmed",
         "ingrid", "rahul", "chloe", "tomasz", "ana", "noah", "fatima", "elif", "pierre", "hannah", "arjun", "yuki")
LAST = ("novak", "schmidt", "dubois", "garcia", "rossi", "kowalski", "nilsson", "patel", "tanaka", "okafor",
        "murphy", "yilmaz", "jensen", "silva", "moreau", "weber", "sharma", "kim", "virtanen", "haddad")
MAIL_DOMAINS = ("gmail.com", "outlook.com", "yahoo.com", "icloud.com", "gmx.de", "web.de", "orange.fr", "free.fr",
                "laposte.net", "btinternet.com", "yahoo.co.uk", "rediffmail.com", "yahoo.co.in", "proton.me",
                "hotmail.fr", "libero.it", "seznam.cz", "wp.pl", "mail.ru", "naver.com", "t-online.de")


def email_value(rng: random.Random) -> str:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = rng.choice((f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}{rng.randint(1, 99)}",
                        f"{first}+{rng.choice(('kyc', 'loans', 'trading'))}", f"{last}.{first}{rng.randint(70, 99)}"))
    return f"{local}@{rng.choice(MAIL_DOMAINS)}"


def v_email(rng: random.Random, i: int) -> Value:
    mail = email_value(rng)
    styles = [
        ("applicant", f"Applicant e-mail: {mail}"),
        ("reply_to", f"Reply-To: {mail}"),
        ("localized", localized(i // 9 + 9, "email", mail)),
        ("fnol", f"you can reach me at {mail}"),
        ("kyc", f"email_address={mail} verification=passed"),
        ("bracketed", f"Borrower <{mail}> signed the disclosure"),
        ("courriel", f"Courriel de l'assuré : {mail}"),
        ("account", f"exchange account registered to {mail}, tier 2"),
        ("dunning", f"statement sent to {mail} on {_ts(rng)[:10]}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, mail, snip, False


def phone_case(i: int, forms: list[tuple[str, str]], contexts: tuple[str, ...]) -> Value:
    """A phone case: the `i`-th print form under the `i`-th context word."""
    style, number = forms[i % len(forms)]
    return style, number, f"{contexts[i % len(contexts)]} {number}", False


NPAS = ("212", "312", "415", "617", "713", "206", "303", "404", "305", "416", "514", "604", "403", "613", "972",
        "480", "702", "919", "646", "347", "718", "215")


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    """NANP: a real geographic NPA, an NXX of 2-9 that is neither N11 nor 555, four line digits."""
    a = rng.choice(NPAS)
    b = str(rng.randint(2, 9)) + digits(rng, 2)
    while b[1:] == "11" or b == "555":
        b = str(rng.randint(2, 9)) + digits(rng, 2)
    c = digits(rng, 4)
    forms = [("paren", f"({a}) {b}-{c}"), ("dashed", f"{a}-{b}-{c}"), ("dotted", f"{a}.{b}.{c}"),
             ("intl", f"+1 {a} {b} {c}"), ("intl_dashed", f"+1-{a}-{b}-{c}"), ("one_paren", f"1 ({a}) {b}-{c}")]
    contexts = ("Cell:", "Mobile phone:", "Home phone:", "Borrower cell phone", "callback number",
                "Cellulaire :", "Work phone:", "Co-applicant phone")
    return phone_case(i, forms, contexts)


UK_AREAS = (("020", 8, "378"), ("0161", 7, "2345789"), ("0121", 7, "2345789"), ("0113", 7, "2345789"),
            ("0131", 7, "2345789"), ("0141", 7, "2345789"), ("0117", 7, "2345789"))


def v_phone_uk(rng: random.Random, i: int) -> Value:
    """Ofcom: 07 mobiles (not 07700 900, the drama range) and geographic numbers (not the 496 0 / 7946 0 drama
    ranges)."""
    mob = "07" + rng.choice("1234579") + digits(rng, 8)
    while mob.startswith("07700900"):
        mob = "07" + rng.choice("1234579") + digits(rng, 8)
    code, n, first = rng.choice(UK_AREAS)
    sub = rng.choice(first) + digits(rng, n - 1)
    while sub.startswith(("4960", "79460")):
        sub = rng.choice(first) + digits(rng, n - 1)
    split = 4 if n == 8 else 3
    forms = [("mobile", f"{mob[:5]} {mob[5:]}"), ("mobile_intl", f"+44 {mob[1:5]} {mob[5:]}"),
             ("geo", f"{code} {sub[:split]} {sub[split:]}"),
             ("geo_intl", f"+44 {code[1:]} {sub[:split]} {sub[split:]}"),
             ("mobile_compact", mob), ("mobile_zero", f"+44 (0){mob[1:5]} {mob[5:]}")]
    contexts = ("Mobile:", "Tel:", "Daytime phone:", "Contact number", "Landline:", "policyholder mobile",
                "ring me on")
    return phone_case(i, forms, contexts)


FR_FICTION = ("0199", "026191", "035301", "046571", "053649", "063998")


def v_phone_fr(rng: random.Random, i: int) -> Value:
    """ARCEP: 06/07 mobiles and 01-05 geographic numbers, none in the ranges kept for fiction."""
    while True:
        head = rng.choice(("06", "07", "01", "02", "03", "04", "05"))
        num = head + (rng.choice("3456789") if head == "07" else str(rng.randint(1, 9))) + digits(rng, 7)
        if not num.startswith(FR_FICTION):
            break
    pairs = group(num, 2, " ")
    forms = [("spaced", pairs), ("dotted", group(num, 2, ".")), ("compact", num),
             ("intl", f"+33 {num[1]} {group(num[2:], 2, ' ')}"),
             ("intl_zero", f"+33 (0){num[1]} {group(num[2:], 2, ' ')}"),
             ("intl_compact", f"+33{num[1:]}")]
    contexts = ("Portable :", "Tél. :", "Téléphone fixe :", "joignable au", "Numéro de mobile :",
                "Téléphone de l'assuré :", "rappeler au")
    return phone_case(i, forms, contexts)


DE_MOBILE = ("0151", "0152", "0157", "0159", "0160", "0162", "0163", "0170", "0171", "0172", "0173", "0174", "0175",
             "0176", "0177", "0178", "0179")
DE_CITY = ("030", "040", "089", "069", "0221", "0211", "0711")


def v_phone_de(rng: random.Random, i: int) -> Value:
    """BNetzA: mobile blocks (015x with 8 subscriber digits, 016x/017x with 7) and city codes with 7 digits."""
    pre = rng.choice(DE_MOBILE)
    sub = str(rng.randint(1, 9)) + digits(rng, 7 if pre.startswith("015") else 6)
    city = rng.choice(DE_CITY)
    line = str(rng.randint(2, 9)) + digits(rng, 6)
    forms = [("mobile", f"{pre} {sub}"), ("mobile_slash", f"{pre}/{sub}"), ("mobile_intl", f"+49 {pre[1:]} {sub}"),
             ("city", f"{city} {line}"), ("city_intl", f"+49 (0){city[1:]} {line}"), ("city_dash", f"{city}-{line}"),
             ("mobile_00", f"0049 {pre[1:]} {sub}")]
    contexts = ("Handy:", "Mobil:", "Tel.:", "Telefon (Festnetz):", "Rückrufnummer:", "erreichbar unter",
                "Mobilnummer des Antragstellers:")
    return phone_case(i, forms, contexts)


IN_STD = (("022", "2"), ("011", "2"), ("080", "2"), ("044", "2"), ("033", "2"))


def v_phone_in(rng: random.Random, i: int) -> Value:
    """TRAI/DoT: ten-digit mobiles starting 6-9, and metro landlines (STD code and eight digits)."""
    mob = str(rng.randint(6, 9)) + digits(rng, 9)
    std, first = rng.choice(IN_STD)
    line = first + digits(rng, 7)
    forms = [("mobile", f"{mob[:5]} {mob[5:]}"), ("mobile_intl", f"+91 {mob[:5]} {mob[5:]}"),
             ("mobile_dash", f"+91-{mob}"), ("mobile_zero", f"0{mob}"), ("landline", f"{std} {line[:4]} {line[4:]}"),
             ("landline_dash", f"{std}-{line}"), ("mobile_compact", mob)]
    contexts = ("Mobile No.:", "मोबाइल नंबर:", "Contact no.", "Phone (R):", "registered mobile", "फ़ोन:",
                "alternate number")
    return phone_case(i, forms, contexts)


def ssn_value(rng: random.Random) -> str:
    """An SSN by the SSA's rules: area 001-899 but not 666, group 01-99, serial 0001-9999."""
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    return f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int) -> Value:
    n = ssn_value(rng)
    dashed, spaced = f"{n[:3]}-{n[3:5]}-{n[5:]}", f"{n[:3]} {n[3:5]} {n[5:]}"
    styles = [
        ("urla", "dashed", f"Social Security Number: {dashed}"),
        ("bureau", "dashed", f"SSN {dashed}  DOB 19{rng.randint(50, 99)}-{rng.randint(1, 12):02d}"),
        ("compact", "compact", f"ssn={n}"),
        ("spaced", "spaced", f"SSN: {spaced}"),
        ("w2", "dashed", f"Employee's social security number  {dashed}"),
        ("form_4506c", "dashed", f"4506-C line 1b: {dashed}"),
        ("chat", "dashed", f"my social is {dashed}"),
        ("tin", "compact", f"Taxpayer ID (SSN): {n}"),
    ]
    style, shape, snip = styles[i % len(styles)]
    return style, {"dashed": dashed, "spaced": spaced, "compact": n}[shape], snip, False


CARD_BRANDS: dict[str, tuple[Callable[[random.Random], str], int]] = {
    "visa": (lambda r: "4", 16),
    "mastercard": (lambda r: str(r.randint(51, 55)), 16),
    "mastercard_2": (lambda r: str(r.randint(2221, 2720)), 16),
    "amex": (lambda r: r.choice(("34", "37")), 15),
    "discover": (lambda r: r.choice(("6011", "65")), 16),
    "jcb": (lambda r: str(r.randint(3528, 3589)), 16),
    "diners": (lambda r: "36", 14),
    "unionpay": (lambda r: "62", 16),
}


def card_number(rng: random.Random, brand: str) -> str:
    """A PAN of `brand`'s IIN range and length, completed with its Luhn digit."""
    iin, length = CARD_BRANDS[brand]
    head = iin(rng)
    partial = head + digits(rng, length - len(head) - 1)
    return partial + luhn_digit(partial)


def v_card(rng: random.Random, i: int) -> Value:
    brand = list(CARD_BRANDS)[i % len(CARD_BRANDS)]
    pan = card_number(rng, brand)
    shown = (pan, group_card(pan, " "), group_card(pan, "-"))[i % 3]
    contexts = (f"Card on file: {shown}", f"refund the deductible to card {shown}",
                localized(i // 7 + 20, "card", shown),
                f"PAN={shown} exp {rng.randint(1, 12):02d}/{rng.randint(26, 31)}",
                f"card number is {shown}, expiry {rng.randint(1, 12):02d}/{rng.randint(26, 31)}",
                f"autopay card: {shown}", f"Kreditkarte: {shown}")
    return brand, shown, contexts[i % len(contexts)], False


IBAN_BBANS = {"DE": "8n10n", "GB": "4a6n8n", "FR": "5n5n11c2n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
              "NL": "4a10n", "BE": "3n7n2n", "CH": "5n12c", "AT": "5n11n", "PL": "8n16n", "PT": "4n4n11n2n",
              "IE": "4a6n8n", "LU": "3n13c", "SE": "3n16n1n", "DK": "4n9n1n", "NO": "4n6n1n", "FI": "3n11n",
              "SA": "2n18c", "AE": "3n16n", "TR": "5n1n16c", "BR": "8n5n10n1a1c"}


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBANS)[i % len(IBAN_BBANS)]
    b = bban(rng, IBAN_BBANS[country])
    compact = country + iban_check(country, b) + b
    shown = group(compact, 4, " ") if i % 2 else compact
    contexts = (f"IBAN: {shown}", localized(i // 7 + 6, "account", shown), f"/IBAN/{shown}", f"payout to IBAN {shown}",
                f"Kontoinhaber-IBAN {shown}", f"RIB / IBAN : {shown}", f"creditor_account.iban={shown}")
    return f"{country}_{'paper' if i % 2 else 'electronic'}", shown, contexts[i % len(contexts)], False


# ---- tokens, keys and seeds -----------------------------------------------------------------------------------

def jwt_value(rng: random.Random) -> str:
    """A JWS compact JWT (RFC 7515/7519) as an identity provider or accounting API issues it."""
    alg, sig_len = rng.choice((("HS256", 32), ("RS256", 256), ("ES256", 64)))
    header = {"alg": alg, "typ": "JWT", "kid": pick(rng, HEX, 16)}
    claims = {"iss": rng.choice(("https://identity.xero.com", "https://oauth.platform.intuit.com",
                                 "https://auth.desk.example")), "sub": _uuid(rng),
              "iat": 1735689600 + rng.randint(0, 10**7), "scope": "accounting.transactions offline_access"}
    claims["exp"] = claims["iat"] + 1800
    return ".".join((b64url(_dump(header).encode()), b64url(_dump(claims).encode()), b64url(rng.randbytes(sig_len))))


def v_jwt(rng: random.Random, i: int) -> Value:
    tok = jwt_value(rng)
    contexts = (f"Authorization: Bearer {tok}", f"access_token={tok}", f"id_token: {tok}",
                f"xero token refreshed: {tok}", f"curl -H 'Authorization: Bearer {tok}' https://api.xero.com/")
    return "jws", tok, contexts[i % len(contexts)], False


def _pem_body(pem: str) -> str:
    """A PEM block's base64 body: the lines between BEGIN and END, joined by newlines."""
    return "\n".join(line for line in pem.strip().splitlines() if not line.startswith("-----"))


def v_private_key(rng: random.Random, i: int) -> Value:
    style = ("sec1", "pkcs8", "openssh", "cdp_json")[i % 4]
    if style == "openssh":
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"sftp@bureau-drop")
        body = group(base64.b64encode(blob).decode(), 70, "\n")
        pem = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n"
        return style, body, f"~/.ssh/bureau_drop:\n{pem}", False
    key = ec.derive_private_key(rng.randrange(1, 2**255), ec.SECP256R1())
    fmt = serialization.PrivateFormat.PKCS8 if style == "pkcs8" else serialization.PrivateFormat.TraditionalOpenSSL
    pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
    body = _pem_body(pem)
    if style == "cdp_json":
        name = f"organizations/{_uuid(rng)}/apiKeys/{_uuid(rng)}"
        return style, body, f"cdp_api_key.json: {_dump({'name': name, 'privateKey': pem})}", True
    return style, body, f"signing key for the exchange client:\n{pem}", False


def b58(data: bytes) -> str:
    """Bitcoin's Base58: the big-endian number in `BASE58`, one '1' per leading zero byte."""
    n, out = int.from_bytes(data, "big"), ""
    while n:
        n, r = divmod(n, 58)
        out = BASE58[r] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def b58check(payload: bytes) -> str:
    """Base58Check: the payload and the first 4 bytes of its double SHA-256."""
    return b58(payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4])


def v_wallet_key(rng: random.Random, i: int) -> Value:
    style = ("wif", "xprv", "eth_hex")[i % 3]
    key = rng.randbytes(32)
    if style == "wif":
        value = b58check(b"\x80" + key + b"\x01")
        contexts = (f"bitcoin-cli importprivkey {value} \"cold-1\" false", f"WIF: {value}", f"sweep key {value}")
    elif style == "xprv":
        value = b58check(bytes.fromhex("0488ade4") + b"\0" * 9 + rng.randbytes(32) + b"\0" + key)
        contexts = (f"Master private key: {value}", f"xprv for the treasury wallet: {value}",
                    f"descriptor wpkh({value}/84h/0h/0h/0/*)")
    else:
        value = key.hex()
        contexts = (f"PRIVATE_KEY=0x{value}", f"deployer private key 0x{value}", f"wallet.privateKey: {value}")
    return style, value, contexts[i // 3 % len(contexts)], False


def v_session_cookie(rng: random.Random, i: int) -> Value:
    makers = (("connect.sid", lambda: "s%3A" + pick(rng, URLSAFE, 32) + "." + pick(rng, ALNUM, 43)),
              ("sessionid", lambda: pick(rng, LOWNUM, 32)), ("JSESSIONID", lambda: pick(rng, HEX.upper(), 32)),
              ("__Secure-next-auth.session-token", lambda: pick(rng, URLSAFE, 120)),
              ("laravel_session", lambda: pick(rng, ALNUM, 40)), ("PHPSESSID", lambda: pick(rng, LOWNUM, 26)))
    name, make = makers[i % len(makers)]
    value = make()
    contexts = (f"Cookie: {name}={value}; theme=dark", f"Set-Cookie: {name}={value}; Path=/; HttpOnly; Secure",
                f"document.cookie -> {name}={value}", f"replay with --cookie '{name}={value}'")
    return name, value, contexts[i % len(contexts)], False


def v_auth_header(rng: random.Random, i: int) -> Value:
    style = ("bearer", "basic", "binance", "kraken", "coinbase", "refresh")[i % 6]
    if style == "bearer":
        cred = pick(rng, URLSAFE, rng.randint(40, 64))
        snip = f"Authorization: Bearer {cred}"
    elif style == "basic":
        cred = base64.b64encode(f"{rng.choice(FIRST)}:{password_value(rng)}".encode()).decode()
        snip = f"Authorization: Basic {cred}"
    elif style == "binance":
        cred = pick(rng, ALNUM, 64)
        snip = f"X-MBX-APIKEY: {cred}"
    elif style == "kraken":
        cred = base64.b64encode(rng.randbytes(42)).decode()
        snip = f"API-Key: {cred}"
    elif style == "coinbase":
        cred = pick(rng, HEX, 32)
        snip = f"CB-ACCESS-KEY: {cred}"
    else:
        cred = pick(rng, URLSAFE, 50)
        snip = f"grant_type=refresh_token&refresh_token={cred}&client_id={pick(rng, ALNUM, 20)}"
    return style, cred, snip, False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    """RFC 4226/6238 shared secrets in base32: 80 or 160 bits, bare, grouped or in an otpauth:// URI."""
    raw = base64.b32encode(rng.randbytes(rng.choice((10, 20)))).decode().rstrip("=")
    issuer = rng.choice(("Kraken", "Binance", "Coinbase", "IBKR", "Guidewire"))
    style = ("uri", "grouped", "bare", "localized")[i % 4]
    if style == "uri":
        return style, raw, f"otpauth://totp/{issuer}:{rng.choice(FIRST)}?secret={raw}&issuer={issuer}&digits=6", False
    if style == "grouped":
        shown = group(raw.lower(), 4, " ")
        return style, shown, f"{issuer} 2FA setup key: {shown}", False
    if style == "bare":
        return style, raw, f"Backup Key (save it, it restores your authenticator): {raw}", False
    return style, raw, f"{rng.choice(('Clé de secours 2FA', '2FA-Schlüssel', 'Clave 2FA'))}: {raw}", False


def v_recovery_code(rng: random.Random, i: int) -> Value:
    style = ("hex_5_5", "digits_4_4", "alnum_10")[i % 3]
    code = {"hex_5_5": lambda: f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}",
            "digits_4_4": lambda: f"{digits(rng, 4)} {digits(rng, 4)}",
            "alnum_10": lambda: pick(rng, LOWNUM, 10)}[style]()
    contexts = (f"use recovery code {code} to get back into the exchange account",
                f"2FA backup code: {code}", f"Wiederherstellungscode: {code}", f"code de récupération {code}")
    return style, code, contexts[i % len(contexts)], False


def v_stripe_key(rng: random.Random, i: int) -> Value:
    prefix = ("sk_live_", "rk_live_")[i % 2]
    key = prefix + (pick(rng, ALNUM, 24) if i % 4 < 2 else "51" + pick(rng, ALNUM, 97))
    contexts = (f"STRIPE_SECRET_KEY={key}", f"stripe.api_key = \"{key}\"",
                f"curl https://api.stripe.com/v1/charges -u {key}:",
                f"Authorization: Bearer {key}", f"restricted key for the payouts job: {key}")
    return prefix.rstrip("_"), key, contexts[i % len(contexts)], False


def v_exchange_secret(rng: random.Random, i: int) -> Value:
    style = ("binance", "kraken", "alpaca", "okx", "coinbase_legacy")[i % 5]
    sec = {"binance": lambda: pick(rng, ALNUM, 64), "kraken": lambda: base64.b64encode(rng.randbytes(64)).decode(),
           "alpaca": lambda: pick(rng, ALNUM, 40), "okx": lambda: pick(rng, HEX.upper(), 32),
           "coinbase_legacy": lambda: base64.b64encode(rng.randbytes(64)).decode()}[style]()
    contexts = {"binance": (f"client = Client(api_key, '{sec}')", f"BINANCE_API_SECRET={sec}"),
                "kraken": (f"kraken.key:\n{pick(rng, B64, 56)}\n{sec}", f"'secret': '{sec}',"),
                "alpaca": (f"APCA_API_SECRET_KEY={sec}", f"TradingClient(key_id, secret_key='{sec}', paper=False)"),
                "okx": (f"OKX_SECRET_KEY={sec}", f"'secret': '{sec}', 'password': os.environ['OKX_PASS']"),
                "coinbase_legacy": (f"api_secret: {sec}", f"CB-ACCESS-SIGN is HMAC'd with secret {sec}")}[style]
    return style, sec, contexts[i // 5 % 2], False


def v_twilio_token(rng: random.Random, i: int) -> Value:
    sid, tok = "AC" + pick(rng, HEX, 32), pick(rng, HEX, 32)
    contexts = (f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={tok}", f"client = Client('{sid}', '{tok}')",
                f"twilio auth token {tok} (OTP sender)", f"curl -u {sid}:{tok} https://api.twilio.com/2010-04-01/")
    return "auth_token", tok, contexts[i % len(contexts)], False


# ---- national ids (outside the target) ------------------------------------------------------------------------

def _birth(rng: random.Random, lo: int = 1950, hi: int = 2004) -> tuple[int, int, int]:
    return rng.randint(lo, hi), rng.randint(1, 12), rng.randint(1, 28)


def es_dni(rng: random.Random) -> str:
    """DNI: 8 digits and the mod 23 letter; NIE: X/Y/Z (0/1/2 for the check) and 7 digits."""
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if rng.random() < 0.3:
        head, num = rng.randrange(3), digits(rng, 7)
        return "XYZ"[head] + num + letters[int(f"{head}{num}") % 23]
    num = digits(rng, 8)
    return num + letters[int(num) % 23]


def br_cpf(rng: random.Random) -> str:
    """CPF: nine digits and two mod 11 check digits, printed 000.000.000-00."""
    base = [int(d) for d in digits(rng, 9)]
    for weights in (range(10, 1, -1), range(11, 1, -1)):
        r = sum(d * w for d, w in zip(base, weights, strict=False)) * 10 % 11
        base.append(0 if r == 10 else r)
    s = "".join(map(str, base))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


def se_personnummer(rng: random.Random) -> str:
    """Personnummer: YYMMDD-NNNC, C the Luhn digit of the nine digits before it."""
    y, m, d = _birth(rng)
    head = f"{y % 100:02d}{m:02d}{d:02d}{digits(rng, 3)}"
    return f"{head[:6]}-{head[6:]}{luhn_digit(head)}"


def fi_hetu(rng: random.Random) -> str:
    """Henkilötunnus: DDMMYY, century sign, individual number 002-899, mod 31 control character."""
    y, m, d = _birth(rng)
    num = f"{rng.randint(2, 899):03d}"
    control = "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(f"{d:02d}{m:02d}{y % 100:02d}{num}") % 31]
    return f"{d:02d}{m:02d}{y % 100:02d}{'-' if y < 2000 else 'A'}{num}{control}"


def no_fnr(rng: random.Random) -> str:
    """Fødselsnummer: DDMMYY, individual number (000-499 for 1900-1999), two mod 11 check digits."""
    while True:
        y, m, d = _birth(rng, 1950, 1999)
        ds = [int(c) for c in f"{d:02d}{m:02d}{y % 100:02d}{rng.randint(0, 499):03d}"]
        k1 = (11 - sum(a * b for a, b in zip(ds, (3, 7, 6, 1, 8, 9, 4, 5, 2), strict=True)) % 11) % 11
        k2 = (11 - sum(a * b for a, b in zip(ds + [k1], (5, 4, 3, 2, 7, 6, 5, 4, 3, 2), strict=True)) % 11) % 11
        if k1 != 10 and k2 != 10:
            return "".join(map(str, ds)) + f"{k1}{k2}"


def cn_ric(rng: random.Random) -> str:
    """Resident identity card: area code, YYYYMMDD, sequence, ISO 7064 MOD 11-2 check character."""
    y, m, d = _birth(rng)
    body = rng.choice(("110101", "310104", "440305", "510107", "330106")) + f"{y}{m:02d}{d:02d}{digits(rng, 3)}"
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return body + "10X98765432"[sum(int(c) * w for c, w in zip(body, weights, strict=True)) % 11]


VERHOEFF_D = ((0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 0, 6, 7, 8, 9, 5), (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
              (3, 4, 0, 1, 2, 8, 9, 5, 6, 7), (4, 0, 1, 2, 3, 9, 5, 6, 7, 8), (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
              (6, 5, 9, 8, 7, 1, 0, 4, 3, 2), (7, 6, 5, 9, 8, 2, 1, 0, 4, 3), (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
              (9, 8, 7, 6, 5, 4, 3, 2, 1, 0))
VERHOEFF_P = ((0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 5, 7, 6, 2, 8, 3, 0, 9, 4), (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
              (8, 9, 1, 6, 0, 4, 3, 5, 2, 7), (9, 4, 5, 3, 1, 2, 6, 8, 7, 0), (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
              (2, 7, 9, 3, 8, 0, 6, 4, 1, 5), (7, 0, 4, 6, 9, 1, 3, 2, 5, 8))
VERHOEFF_INV = (0, 4, 3, 2, 1, 5, 6, 7, 8, 9)


def verhoeff_digit(num: str) -> str:
    """The Verhoeff check digit (dihedral group D5) that completes `num`."""
    c = 0
    for i, ch in enumerate(reversed(num)):
        c = VERHOEFF_D[c][VERHOEFF_P[(i + 1) % 8][int(ch)]]
    return str(VERHOEFF_INV[c])


def in_aadhaar(rng: random.Random) -> str:
    """Aadhaar: twelve digits, the first 2-9, the last a Verhoeff digit, printed in fours."""
    num = str(rng.randint(2, 9)) + digits(rng, 10)
    return group(num + verhoeff_digit(num), 4, " ")


def be_nrn(rng: random.Random) -> str:
    """Belgian national number: YYMMDD, serial 001-997, 97 - (number mod 97), a leading 2 for births from 2000."""
    y, m, d = _birth(rng)
    base = f"{y % 100:02d}{m:02d}{d:02d}{rng.randint(1, 997):03d}"
    check = 97 - int(("2" if y >= 2000 else "") + base) % 97
    return f"{base[:2]}.{base[2:4]}.{base[4:6]}-{base[6:]}.{check:02d}"


IDS: dict[str, tuple[Callable[[random.Random], str], tuple[str, ...]]] = {
    "es_dni": (es_dni, ("DNI/NIE:", "document_number", "número de documento")),
    "br_cpf": (br_cpf, ("CPF:", "cpf do titular", "tax_id")),
    "se_personnummer": (se_personnummer, ("Personnummer:", "personal_number", "personnr")),
    "fi_hetu": (fi_hetu, ("Henkilötunnus:", "HETU", "personal identity code")),
    "no_fnr": (no_fnr, ("Fødselsnummer:", "fnr", "national_id")),
    "cn_ric": (cn_ric, ("身份证号:", "id_card_no", "resident id")),
    "in_aadhaar": (in_aadhaar, ("Aadhaar:", "आधार संख्या:", "UID")),
    "be_nrn": (be_nrn, ("Rijksregisternummer:", "Numéro de registre national :", "NISS")),
}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    """A KYC-style case of `kind`: the id after one of its labels."""
    make, labels = IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        return "kyc", value, f"{labels[i % len(labels)]} {value}", False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "private_key": v_private_key, "wallet_key": v_wallet_key, "session_cookie": v_session_cookie,
    "auth_header": v_auth_header, "totp_seed": v_totp_seed, "recovery_code": v_recovery_code,
    "stripe_key": v_stripe_key, "exchange_secret": v_exchange_secret, "twilio_token": v_twilio_token,
    **{k: national_id(k) for k in IDS},
}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists."""
    style, secret, snip, raw_only = value
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

def _expand(code: str) -> str:
    """Letters to 10-35 (ISIN's and LEI's first step), digits kept."""
    return "".join(str(int(c, 36)) for c in code)


def isin(rng: random.Random) -> str:
    """ISO 6166: country, nine alphanumerics, the Luhn digit of the expanded string."""
    body = rng.choice(("US", "DE", "GB", "FR", "JP", "IE")) + pick(rng, UPNUM, 9)
    return body + luhn_digit(_expand(body))


def cusip(rng: random.Random) -> str:
    """A CUSIP: eight characters and the modulus 10 double-add-double digit."""
    body, total = pick(rng, UPNUM, 8), 0
    for i, ch in enumerate(body):
        v = int(ch, 36) * (2 if i % 2 else 1)
        total += v // 10 + v % 10
    return body + str((10 - total % 10) % 10)


def lei(rng: random.Random) -> str:
    """ISO 17442: a four-character LOU prefix, 00, twelve alphanumerics, MOD 97-10 check digits."""
    base = pick(rng, UPNUM, 4) + "00" + pick(rng, UPNUM, 12)
    return base + f"{98 - int(_expand(base + '00')) % 97:02d}"


def aba_routing(rng: random.Random) -> str:
    """An ABA routing number: Fed district prefix 01-12, then digits with the 3-7-1 check."""
    head = f"{rng.randint(1, 12):02d}" + digits(rng, 6)
    w = (3, 7, 1, 3, 7, 1, 3, 7)
    return head + str((10 - sum(int(c) * k for c, k in zip(head, w, strict=True)) % 10) % 10)


def _luhn_bad(rng: random.Random) -> str:
    partial = rng.choice("456") + digits(rng, 14)
    return partial + str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)


def _service_number(r: random.Random) -> str:
    company = r.choice(COMPANIES)
    return r.choice((f"{company} customer service: 1-800-{r.randint(200, 999)}-{digits(r, 4)}",
                     f"Claims hotline 0800 {r.randint(100, 999)} {digits(r, 4)} (free from UK landlines)",
                     f"Service client : 0 800 {r.randint(10, 99)} {r.randint(10, 99)} {r.randint(10, 99)} "
                     "(service & appel gratuits)",
                     f"Kundenservice: 0800 {r.randint(100, 999)} {digits(r, 4)} (gebührenfrei)",
                     f"Toll-free helpline 1800-{r.randint(100, 999)}-{digits(r, 4)}",
                     f"{company} dealing desk, toll free 1-888-{r.randint(200, 999)}-{digits(r, 4)}"))


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "fix_session_fields": lambda r: (f"8=FIX.4.4|35=8|34={r.randint(1, 99999)}|49=BROKERX|56=NWCAP|"
                                     f"52={_fix_time(r)}|11={r.randint(10**9, 10**10)}|37=ORD{digits(r, 10)}|"
                                     f"17=EXE{digits(r, 12)}|150=F|39=2|55={r.choice(SYMBOLS[:2])}|"
                                     f"10={r.randint(0, 255):03d}|"),
    "isin": lambda r: f"Instrument {isin(r)} ({r.choice(('equity', 'bond', 'ETF'))}), lot {r.randint(1, 500)}",
    "cusip": lambda r: f"CUSIP {cusip(r)} matured {_ts(r)[:10]}, par ${r.randint(1, 100) * 1000}",
    "lei": lambda r: f"Counterparty LEI {lei(r)} (EMIR report, UTI {pick(r, UPNUM, 20)})",
    "bank_codes": lambda r: r.choice((f"ABA routing number {aba_routing(r)} ({r.choice(COMPANIES)})",
                                      f"BIC {pick(r, UPPER, 4)}{r.choice(('DE', 'FR', 'GB', 'NL'))}"
                                      f"{pick(r, UPNUM, 2)}{r.choice(('', 'XXX'))}")),
    "ledger_hashes": lambda r: r.choice((f"txid {pick(r, HEX, 64)} confirmed in block {r.randint(820000, 900000)}",
                                         f"tx hash 0x{pick(r, HEX, 64)} (status: success, "
                                         f"gas {r.randint(21000, 90000)})",
                                         f"block hash {'0' * 19}{pick(r, HEX, 45)}")),
    "request_ids": lambda r: r.choice((f"X-Request-Id: {_uuid(r)}", f"orderId={r.randint(10**9, 10**11)}",
                                       f"client_order_id {_uuid(r)}", f"correlationId={pick(r, HEX, 32)}")),
    "timestamps": lambda r: r.choice((f"timestamp={1735689600000 + r.randint(0, 10**10)}&recvWindow=5000",
                                      f"SendingTime {_fix_time(r)}", f"settled_at {_ts(r)}", f"as of {_ts(r)[:10]}")),
    "amounts_rates": lambda r: r.choice((f"filled {r.randint(1, 900)} @ {_amount(r)} USD, fee {r.randint(1, 99)} bps",
                                         f"APR {r.randint(3, 29)}.{r.randint(0, 99):02d}%, principal ${_amount(r)}",
                                         f"premium EUR {_amount(r)} / year, deductible {r.randint(1, 20) * 100}")),
    "masked": lambda r: r.choice((f"card ending **** **** **** {digits(r, 4)}", f"SSN XXX-XX-{digits(r, 4)}",
                                  f"IBAN DE** **** **** **** **{digits(r, 2)} {digits(r, 2)}",
                                  f"phone (***) ***-{digits(r, 4)}", f"account ••••{digits(r, 4)}")),
    "placeholders": lambda r: r.choice(("password: ********", "email: you@example.com", "api_key=<YOUR_API_KEY>",
                                        "STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
                                        "secret: ${BINANCE_API_SECRET}", "Enter your 6-digit code: ______",
                                        "IBAN: DE00 0000 0000 0000 0000 00", "phone: +1 (XXX) XXX-XXXX")),
    "versions": lambda r: r.choice((f"ccxt {r.randint(3, 4)}.{r.randint(0, 5)}.{r.randint(0, 99)}",
                                    f"BeginString FIX.4.{r.randint(2, 4)}", f"OFX VERSION:{r.choice((102, 220))}",
                                    f"camt.053.001.{r.randint(2, 12):02d}",
                                    f"alpaca-py=={r.randint(0, 1)}.{r.randint(0, 40)}.{r.randint(0, 9)}",
                                    f"bitcoind v{r.randint(25, 28)}.{r.randint(0, 2)}.0")),
    "service_numbers": _service_number,
    "luhn_invalid": lambda r: f"{r.choice(('Loan ref', 'Policy ref', 'Batch', 'Settlement id'))} {_luhn_bad(r)}",
    "order_tracking": lambda r: r.choice((f"Invoice INV-{r.randint(2024, 2025)}-{r.randint(1, 99999):05d}",
                                          f"UPS tracking 1Z{pick(r, UPNUM, 6)}{digits(r, 10)}",
                                          f"PO #{r.randint(10**5, 10**7)}", f"Confirmation {pick(r, UPNUM, 8)}")),
    "ui_selectors": lambda r: r.choice((f"#order-ticket > .qty-input[data-row='{r.randint(1, 40)}']",
                                        f"//table[@id='positions']/tbody/tr[{r.randint(1, 30)}]/td[{r.randint(1, 9)}]",
                                        f"viewport {r.choice((1280, 1440, 1920))}x{r.choice((720, 900, 1080))}px",
                                        f"button#btn-submit-claim-{r.randint(1, 99)} width: {r.randint(80, 320)}px")),
    "asset_hashes": lambda r: r.choice((f"/static/js/main.{pick(r, HEX, 8)}.chunk.js",
                                        f'ETag: "{pick(r, HEX, 32)}"', f"statement.pdf sha256={pick(r, HEX, 64)}",
                                        f"app.css?v={pick(r, HEX, 10)}")),
    "field_names": lambda r: r.choice(("<input type=\"hidden\" name=\"csrfmiddlewaretoken\">",
                                       "authenticity_token", "X-CSRF-Token header required",
                                       "required env: BINANCE_API_KEY, BINANCE_API_SECRET",
                                       "set STRIPE_WEBHOOK_SECRET before starting", "field: aws_secret_access_key",
                                       "TWILIO_AUTH_TOKEN is not set")),
    "coordinates": lambda r: r.choice((f"branch at {r.uniform(-60, 60):.5f}, {r.uniform(-120, 120):.5f}",
                                       f"loss location lat={r.uniform(25, 49):.6f} lon={r.uniform(-124, -67):.6f}",
                                       f"map tile z={r.randint(3, 18)}/x={r.randint(0, 9999)}/y={r.randint(0, 9999)}")),
    "statement_refs": lambda r: r.choice((f":20:STMT{digits(r, 8)}", f":28C:{r.randint(1, 365)}/1",
                                          f"<MsgId>CAMT053-{digits(r, 12)}</MsgId>", f"<FITID>{digits(r, 14)}",
                                          f"EndToEndId NOTPROVIDED, InstrId {pick(r, UPNUM, 16)}")),
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
