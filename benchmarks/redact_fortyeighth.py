"""The forty-eighth blind redaction corpus: legal practice, e-discovery and real-estate closing agents, what an agent
in a law firm, a title/escrow company or a property manager reads and writes. Written from the formats' public
specifications by someone who read neither the detection rules nor the other corpora's values.

Carriers (the `form` head): document-management records (iManage Work API document profiles, NetDocuments audit
entries, server log lines), matter management (Clio API v4 matters with custom fields), e-discovery processing and
review (Concordance DAT load-file rows with their þ qualifier, DC4 separator and ® newline, extracted email text
named by Bates number, Relativity review exports, privilege-log tables), e-signature (DocuSign Connect JSON events
and legacy Connect XML with CDATA), court e-filing (EFM session JSON, CM/ECF Notices of Electronic Filing, portal
HTTP exchanges), closings (escrow wire instructions, payoff statements, title commitment Schedule B requirements,
notary journal entries), property management (tenant-screening applications as JSON, portal exports as TSV, lease
applications), client contact (intake chats, the agent's e-mails and texts to clients with greetings in 32
languages, tool results an agent receives) and IT tickets. About a third is JSON carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the
SWIFT IBAN registry's BBAN structures for 26 countries (MOD 97-10); US bank accounts beside ABA routing numbers
(the ABA 3-7-1 check digit, Federal Reserve routing symbol prefixes); SSNs, the SSA's rules (area not 000/666/9xx,
group not 00, serial not 0000); phones, the national numbering plans (NANP without N11/555/toll-free codes, Ofcom
without its drama ranges, ARCEP, BNetzA, TRAI/DoT) with context words in each country's languages and +CC forms;
AWS, IAM's documented AKIA/ASIA ids and 40-character secrets (credentials file, CSV download, STS JSON, rclone);
Slack, Discord, Teams, Power Automate, Google Chat, Zapier, Make and Mattermost webhook URLs as their docs print
them (the secret is the token segment or `sig`/`token` value only); Stripe `whsec_` signing secrets and
`sk_live_`/`rk_live_` keys; SendGrid `SG.` keys; Slack `xoxb-`/`xoxp-`/`xapp-` tokens; GitHub `ghp_` (CRC32)
and `github_pat_`; Twilio auth tokens beside `AC` account SIDs; OpenAI `sk-proj-` and Anthropic `sk-ant-api03-`;
connection strings (ADO.NET, Azure Storage and Service Bus, JDBC, ODBC, URI; the secret is the password or key);
JWT (RFC 7519/7515, DocuSign's JWT grant claims), Basic (RFC 7617), Bearer (RFC 6750), Digest `response=`
(RFC 7616), SigV4 `Signature=`; session cookies (JSESSIONID, ASP.NET_SessionId, .ASPXAUTH, PHPSESSID, Express
`connect.sid`); TOTP seeds (RFC 4648 base32, the Key URI format `otpauth://`); recovery codes (GitHub, Microsoft,
Google, 1Password Secret Key layout); PEM SEC1/PKCS#8 and OpenSSH keys; national ids (outside the target):
Canadian SIN (Luhn), French NIR (key 97), Belgian national number (mod 97), Finnish HETU (mod 31), Swedish
personnummer (Luhn), Norwegian fødselsnummer (two mod 11), Chinese resident id (ISO 7064 MOD 11-2), Chilean RUT
(mod 11).

Judgements: a case's `secret` is only what must not survive (a webhook's token, a connection string's password, a
cookie's value, a header's credential, a PEM body without its armour lines, the account number beside a routing
number). Near misses are what this domain holds that is neither secret nor personal: Bates ranges, docket numbers,
DMS document ids, dedup hashes, envelope ids (DocuSign prints them on every page), request ids, timestamps,
selectors and XPath, CSRF field names, placeholders, masked values, versions, businesses' toll-free service lines,
Luhn-invalid references, tracking and order numbers, coordinates and tab positions, statute citations, parcel
numbers, amounts, banks' routing numbers and BICs (they name a bank, not a person), the AWS docs' EXAMPLE keys and
cache-busting asset names.
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

SEED = 48
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"ca_sin", "fr_nir", "be_nrn", "fi_hetu", "se_pnr", "no_fnr", "cn_rid", "cl_rut"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
UPALNUM = UPPER + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
B32 = UPPER + "234567"


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

Carrier = Callable[[random.Random, str, str], str]


# ---- languages ------------------------------------------------------------------------------------------------

LANGS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    # greeting, password, email, phone, card number, IBAN, account number
    "en": ("Hi, as discussed —", "Password", "Email", "Phone", "Card number", "IBAN", "Account number"),
    "de": ("Guten Tag, wie besprochen:", "Passwort", "E-Mail", "Telefon", "Kartennummer", "IBAN", "Kontonummer"),
    "fr": ("Bonjour, comme convenu :", "Mot de passe", "Courriel", "Téléphone", "Numéro de carte", "IBAN",
           "Numéro de compte"),
    "es": ("Hola, como acordamos:", "Contraseña", "Correo electrónico", "Teléfono", "Número de tarjeta", "IBAN",
           "Número de cuenta"),
    "it": ("Buongiorno, come concordato:", "Password", "Indirizzo e-mail", "Telefono", "Numero della carta", "IBAN",
           "Numero di conto"),
    "pt": ("Olá, conforme combinado:", "Senha", "E-mail", "Telefone", "Número do cartão", "IBAN", "Número da conta"),
    "nl": ("Goedendag, zoals besproken:", "Wachtwoord", "E-mailadres", "Telefoonnummer", "Kaartnummer", "IBAN",
           "Rekeningnummer"),
    "pl": ("Dzień dobry, zgodnie z ustaleniami:", "Hasło", "Adres e-mail", "Telefon", "Numer karty", "IBAN",
           "Numer rachunku"),
    "sv": ("Hej, som vi pratade om:", "Lösenord", "E-post", "Telefon", "Kortnummer", "IBAN", "Kontonummer"),
    "da": ("Hej, som aftalt:", "Adgangskode", "E-mail", "Telefon", "Kortnummer", "IBAN", "Kontonummer"),
    "no": ("Hei, som avtalt:", "Passord", "E-post", "Telefon", "Kortnummer", "IBAN", "Kontonummer"),
    "fi": ("Hei, kuten sovimme:", "Salasana", "Sähköposti", "Puhelin", "Kortin numero", "IBAN", "Tilinumero"),
    "cs": ("Dobrý den, jak jsme se domluvili:", "Heslo", "E-mail", "Telefon", "Číslo karty", "IBAN", "Číslo účtu"),
    "hu": ("Jó napot, ahogy megbeszéltük:", "Jelszó", "E-mail-cím", "Telefonszám", "Kártyaszám", "IBAN",
           "Számlaszám"),
    "ro": ("Bună ziua, după cum am discutat:", "Parolă", "Adresă de e-mail", "Telefon", "Numărul cardului", "IBAN",
           "Număr de cont"),
    "el": ("Καλημέρα, όπως συζητήσαμε:", "Κωδικός πρόσβασης", "Ηλεκτρονικό ταχυδρομείο", "Τηλέφωνο",
           "Αριθμός κάρτας", "IBAN", "Αριθμός λογαριασμού"),
    "tr": ("Merhaba, konuştuğumuz gibi:", "Şifre", "E-posta", "Telefon", "Kart numarası", "IBAN", "Hesap numarası"),
    "ru": ("Здравствуйте, как договаривались:", "Пароль", "Электронная почта", "Телефон", "Номер карты", "IBAN",
           "Номер счёта"),
    "uk": ("Добрий день, як домовлялися:", "Пароль", "Електронна пошта", "Телефон", "Номер картки", "IBAN",
           "Номер рахунку"),
    "ar": ("مرحبًا، كما اتفقنا:", "كلمة المرور", "البريد الإلكتروني", "الهاتف", "رقم البطاقة", "IBAN", "رقم الحساب"),
    "he": ("שלום, כפי שסיכמנו:", "סיסמה", "אימייל", "טלפון", "מספר כרטיס", "IBAN", "מספר חשבון"),
    "hi": ("नमस्ते, जैसा कि हमने बात की थी:", "पासवर्ड", "ईमेल", "फ़ोन", "कार्ड नंबर", "IBAN", "खाता संख्या"),
    "bn": ("নমস্কার, যেমন কথা হয়েছিল:", "পাসওয়ার্ড", "ইমেইল", "ফোন", "কার্ড নম্বর", "IBAN", "অ্যাকাউন্ট নম্বর"),
    "ta": ("வணக்கம், பேசியபடி:", "கடவுச்சொல்", "மின்னஞ்சல்", "தொலைபேசி", "அட்டை எண்", "IBAN", "கணக்கு எண்"),
    "zh": ("您好，如前所述：", "密码", "电子邮件", "电话", "卡号", "IBAN", "账号"),
    "ja": ("お世話になっております。ご依頼の件です：", "パスワード", "メールアドレス", "電話番号", "カード番号", "IBAN",
           "口座番号"),
    "ko": ("안녕하세요, 말씀드린 대로:", "비밀번호", "이메일", "전화번호", "카드 번호", "IBAN", "계좌번호"),
    "vi": ("Xin chào, như đã trao đổi:", "Mật khẩu", "Email", "Số điện thoại", "Số thẻ", "IBAN", "Số tài khoản"),
    "th": ("สวัสดีครับ ตามที่ตกลงกัน:", "รหัสผ่าน", "อีเมล", "โทรศัพท์", "หมายเลขบัตร", "IBAN", "เลขที่บัญชี"),
    "id": ("Halo, sesuai pembicaraan kita:", "Kata sandi", "Surel", "Telepon", "Nomor kartu", "IBAN",
           "Nomor rekening"),
    "tl": ("Magandang araw, gaya ng napag-usapan:", "Password", "Email", "Telepono", "Numero ng card", "IBAN",
           "Numero ng account"),
    "sw": ("Habari, kama tulivyokubaliana:", "Nenosiri", "Barua pepe", "Simu", "Nambari ya kadi", "IBAN",
           "Nambari ya akaunti"),
}
GREET, PW, MAIL, TEL, CARD, IBAN_L, ACCT = range(7)


def labelled(rng: random.Random, field: int, value: str, lang: str | None = None) -> tuple[str, str]:
    """(lang, snippet): `value` after the field's label in `lang` (or a random language), sometimes after the
    greeting an agent opens a client message with."""
    lang = lang or rng.choice(list(LANGS))
    words = LANGS[lang]
    layout = rng.choice(["{l}: {v}", "{l} — {v}", "{l}:\n{v}", "**{l}:** {v}", "• {l}: {v}", "{g} {l}: {v}"])
    return lang, layout.format(g=words[GREET], l=words[field], v=value)


# ---- carriers -------------------------------------------------------------------------------------------------

PEOPLE = ["R. Okafor", "M. Lindqvist", "A. Deshpande", "C. Moreau", "J. Whitfield", "S. Nakamura", "L. Brandt",
          "E. Castillo", "T. Kowalczyk", "H. Al-Sayed", "P. Ferreira", "D. O'Connell", "N. Thao", "K. Yılmaz"]
MATTERS = ["Estate of Whitfield", "Okafor v. Northgate Props.", "Purchase of 14 Birch Ln", "Lindqvist Refinance",
           "In re Kestrel Eng'g", "Moreau Lease Dispute", "Castillo Trust Admin.", "Harbor Point Condo Closing"]
COURTS = ["Superior Court of California, County of Alameda", "U.S. District Court, N.D. Ill.",
          "Circuit Court of Cook County", "Harris County District Court", "U.S. Bankruptcy Court, D. Del."]


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _guid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    return (f"202{rng.randint(4, 5)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            f"T{rng.randint(7, 19):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z")


def c_imanage(rng: random.Random, snip: str, _s: str) -> str:
    num = rng.randint(1_000_000, 99_999_999)
    return _dump({"data": {"id": f"ACTIVE!{num}.1", "database": "ACTIVE", "document_number": num, "version": 1,
                           "name": rng.choice(MATTERS) + " - correspondence", "class": rng.choice(["CORR", "AGMT"]),
                           "author": "JWHITFIELD", "comment": snip, "edit_date": _ts(rng)}})


def c_netdocuments(rng: random.Random, snip: str, _s: str) -> str:
    doc = f"{digits(rng, 4)}-{digits(rng, 4)}-{digits(rng, 4)}"
    return _dump({"auditLog": [{"docId": doc, "version": rng.randint(1, 6), "action": "Modified Profile",
                                "cabinet": "Litigation", "user": rng.choice(PEOPLE), "ts": _ts(rng),
                                "details": snip}]})


def c_clio(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"data": {"id": rng.randint(10**9, 2 * 10**9), "display_number": f"{rng.randint(100, 9999):05d}",
                           "description": rng.choice(MATTERS), "status": "Open",
                           "custom_field_values": [{"field_name": "Intake notes", "value": snip}]}})


def c_docusign_connect(rng: random.Random, snip: str, _s: str) -> str:
    account, envelope = _guid(rng), _guid(rng)
    return _dump({"event": "envelope-completed", "apiVersion": "v2.1", "retryCount": 0,
                  "uri": f"/restapi/v2.1/accounts/{account}/envelopes/{envelope}", "generatedDateTime": _ts(rng),
                  "data": {"accountId": account, "envelopeId": envelope,
                           "envelopeSummary": {"status": "completed", "emailSubject": "Please DocuSign: Lease",
                                               "customFields": {"textCustomFields": [{"name": "Notes",
                                                                                      "value": snip}]}}}})


def c_relativity(rng: random.Random, snip: str, _s: str) -> str:
    control = f"HWP{rng.randint(1, 99999):07d}"
    return _dump({"ArtifactID": rng.randint(1_000_000, 9_999_999), "Control Number": control,
                  "Custodian": rng.choice(PEOPLE), "Responsive": "Yes", "Privilege": "Not Privileged",
                  "Extracted Text": snip, "MD5 Hash": pick(rng, HEX, 32)})


def c_efiling(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"filingId": _guid(rng), "court": rng.choice(COURTS), "filingCode": "Motion",
                  "status": "Submitted", "submittedAt": _ts(rng), "filerComments": snip})


def c_screening(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"applicationId": f"APP-{rng.randint(100000, 999999)}",
                  "property": {"unit": f"{rng.randint(1, 30)}{rng.choice('ABCD')}", "rent": rng.randint(14, 48) * 100},
                  "applicant": {"name": rng.choice(PEOPLE), "notes": snip}, "status": "pending_review"})


def c_intake_chat(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"conversation_id": _guid(rng), "channel": "web-intake",
                  "messages": [{"role": "assistant", "content": "Thank you for contacting the firm. How can we help?"},
                               {"role": "user", "content": snip}]})


def c_tool_result(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"type": "tool_result", "tool_use_id": "toolu_" + pick(rng, ALNUM, 24),
                  "content": [{"type": "text", "text": snip}]})


def c_dat(rng: random.Random, snip: str, secret: str) -> str:
    field = snip if "\n" in secret else snip.replace("\n", "®")
    beg = rng.randint(1, 99999)
    head = "\x14".join(f"þ{name}þ" for name in ("BEGDOC", "ENDDOC", "CUSTODIAN", "DATESENT", "TEXT"))
    row = "\x14".join(f"þ{v}þ" for v in (f"ACME{beg:07d}", f"ACME{beg + 2:07d}", rng.choice(PEOPLE),
                                          f"0{rng.randint(1, 9)}/1{rng.randint(0, 9)}/2024", field))
    return head + "\n" + row


def c_extracted(rng: random.Random, snip: str, _s: str) -> str:
    bates = f"SMITH{rng.randint(1, 99999):07d}"
    return (f"===== {bates}.txt =====\nFrom: {rng.choice(PEOPLE)}\nSent: Tuesday, March 4, 2025 9:12 AM\n"
            f"Subject: RE: {rng.choice(MATTERS)}\n\n{snip}\n\n[Page 1 of 1 — {bates}]")


def c_wire(rng: random.Random, snip: str, _s: str) -> str:
    return (f"ESCROW WIRE INSTRUCTIONS — File No. {rng.randint(10, 25)}-{rng.randint(100000, 999999)}\n"
            f"Property: {rng.randint(10, 9999)} {rng.choice(['Birch Ln', 'Harbor Way', 'Elm St'])}\n{snip}\n"
            "Always call our office at a number you already know to confirm these instructions.")


def c_payoff(rng: random.Random, snip: str, _s: str) -> str:
    return (f"PAYOFF STATEMENT\nLoan No. {digits(rng, 10)}\nGood through: 0{rng.randint(1, 9)}/28/2025\n"
            f"Principal balance: ${rng.randint(90, 900)},{digits(rng, 3)}.{digits(rng, 2)}\n{snip}")


def c_notary(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Journal entry {rng.randint(1, 9999):04d} | {_ts(rng)[:10]} | Act: Acknowledgment | "
            f"Signer: {rng.choice(PEOPLE)} | Fee: $15.00 | Notes: {snip}")


def c_pm_export(rng: random.Random, snip: str, _s: str) -> str:
    return ("Unit\tTenant\tLease start\tBalance\tNotes\n"
            f"{rng.randint(1, 30)}{rng.choice('ABCD')}\t{rng.choice(PEOPLE)}\t2025-0{rng.randint(1, 9)}-01\t"
            f"${rng.randint(0, 3000)}.00\t{snip}")


def c_dms_log(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_ts(rng).replace('T', ' ')[:-1]},{rng.randint(100, 999)} INFO [imWorkSvc-{rng.randint(1, 32)}] "
            f"DocumentProfileUpdate doc=ACTIVE!{rng.randint(10**6, 10**8)}.1 comment={snip}")


def c_client_email(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Subject: {rng.choice(MATTERS)} — next steps\nDate: {_ts(rng)}\nMIME-Version: 1.0\n"
            f"Content-Type: text/plain; charset=UTF-8\n\n{snip}\n\n— {rng.choice(PEOPLE)}, paralegal")


def c_privlog(rng: random.Random, snip: str, _s: str) -> str:
    doc = f"PRIV{rng.randint(1, 9999):05d}"
    return ("| Doc ID | Date | Author | Privilege | Description |\n|---|---|---|---|---|\n"
            f"| {doc} | {_ts(rng)[:10]} | {rng.choice(PEOPLE)} | AC/WP | {snip} |")


def c_ecf(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Notice of Electronic Filing\nThe following transaction was entered on {_ts(rng)[:10]}\n"
            f"Case Name: {rng.choice(MATTERS)}\nCase Number: 1:2{rng.randint(3, 5)}-cv-{rng.randint(1, 9999):05d}\n"
            f"Filer: {rng.choice(PEOPLE)}\nDocket Text:\n{snip}")


def c_lease_app(rng: random.Random, snip: str, _s: str) -> str:
    return (f"RESIDENTIAL LEASE APPLICATION (page {rng.randint(1, 3)} of 4)\nApplicant: {rng.choice(PEOPLE)}\n"
            f"{snip}\nI authorize the landlord to obtain a consumer report.")


def c_title(rng: random.Random, snip: str, _s: str) -> str:
    return (f"SCHEDULE B — PART I — REQUIREMENTS\nCommitment No. {rng.randint(10**6, 10**7)}\n"
            f"{rng.randint(3, 12)}. {snip}")


def c_sms(rng: random.Random, snip: str, _s: str) -> str:
    return f"[SMS {_ts(rng)}] Closing desk → client: {snip}"


def c_docusign_xml(rng: random.Random, snip: str, _s: str) -> str:
    return ("<DocuSignEnvelopeInformation><EnvelopeStatus>"
            f"<EnvelopeID>{_guid(rng)}</EnvelopeID><Status>Completed</Status><CustomFields><CustomField>"
            f"<Name>Notes</Name><Value><![CDATA[{snip}]]></Value></CustomField></CustomFields>"
            "</EnvelopeStatus></DocuSignEnvelopeInformation>")


def c_ticket(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Ticket INC{rng.randint(10**6, 10**7)} — Litigation support\nReported by: {rng.choice(PEOPLE)}\n"
            f"Priority: P3\n\n{snip}")


def c_http(rng: random.Random, snip: str, _s: str) -> str:
    host = rng.choice(["efile.courts.example.gov", "portal.titleco.example", "api.clio.example"])
    return f"POST /api/v1/filings/{rng.randint(10**5, 10**6)} HTTP/1.1\nHost: {host}\n{snip}\n\n{{\"draft\": true}}"


def c_portal_msg(rng: random.Random, snip: str, _s: str) -> str:
    return f"Client portal — message from {rng.choice(PEOPLE)} ({_ts(rng)[:16]}):\n{snip}"


CARRIERS: list[tuple[str, Carrier, bool]] = [
    ("imanage", c_imanage, True), ("dat", c_dat, False), ("wire", c_wire, False),
    ("netdocuments", c_netdocuments, True), ("extracted", c_extracted, False), ("payoff", c_payoff, False),
    ("clio", c_clio, True), ("notary", c_notary, False), ("pm_export", c_pm_export, False),
    ("docusign_connect", c_docusign_connect, True), ("dms_log", c_dms_log, False),
    ("client_email", c_client_email, False), ("relativity", c_relativity, True), ("privlog", c_privlog, False),
    ("ecf", c_ecf, False), ("efiling", c_efiling, True), ("lease_app", c_lease_app, False),
    ("title", c_title, False), ("screening", c_screening, True), ("sms", c_sms, False),
    ("docusign_xml", c_docusign_xml, False), ("intake_chat", c_intake_chat, True), ("ticket", c_ticket, False),
    ("http", c_http, False), ("tool_result", c_tool_result, True), ("portal_msg", c_portal_msg, False),
]
JSON_CARRIERS = {name: make for name, make, is_json in CARRIERS if is_json}


# ---- secrets --------------------------------------------------------------------------------------------------

WORDS = ["Lindenbaum", "harbor", "Escritura", "closing", "Notaire", "fjord", "Maple", "granit", "Kestrel", "dune",
         "Olivo", "tundra", "Quartz", "saffron", "Birch", "lantern"]
SYMBOLS = "!#$%*?@+-_."


def password_value(rng: random.Random) -> str:
    """A password as people and portals make them (no quotes, backslashes, blanks or `;`)."""
    style = rng.randrange(4)
    if style == 0:
        return rng.choice(WORDS) + digits(rng, rng.randint(2, 4)) + rng.choice(SYMBOLS)
    if style == 1:
        return pick(rng, ALNUM + SYMBOLS, rng.randint(12, 20))
    if style == 2:
        return "-".join(rng.choice(WORDS).lower() for _ in range(4)) + digits(rng, 1)
    return pick(rng, UPPER, 1) + pick(rng, LOWER, 5) + rng.choice(SYMBOLS) + digits(rng, 4) + pick(rng, UPPER, 2)


PORTALS = ["tenant portal", "client portal", "e-filing account", "data room", "Qualia closing portal",
           "NetDocuments guest access", "review platform (Relativity)"]


def v_password(rng: random.Random, i: int) -> Value:
    pw = password_value(rng)
    style = ["lang", "portal", "cli", "env", "yaml", "form", "wifi", "lang", "json", "login_pair"][i % 10]
    if style == "lang":
        lang, snip = labelled(rng, PW, pw)
        return f"label_{lang}", pw, snip, False
    alnum = pick(rng, ALNUM, 14)
    snip = {"portal": f"Temporary password for the {rng.choice(PORTALS)}: {pw} (you will be asked to change it)",
            "cli": f"imcli login --server dms.firm.local --user jwhitfield --password '{pw}'",
            "env": f"NETDOCS_SERVICE_PASSWORD={pw}",
            "yaml": f"efiling:\n  username: filer-0042\n  password: \"{pw}\"",
            "form": f"username=escrow.officer&password={alnum}&remember=1",
            "wifi": f"Conference room B guest Wi-Fi — network HWP-Guest, password {pw}",
            "json": _dump({"username": "closing-desk", "password": pw}),
            "login_pair": f"Login: escrow.officer / {pw}"}[style]
    return style, alnum if style == "form" else pw, snip, False


def aws_pair(rng: random.Random, prefix: str = "AKIA") -> tuple[str, str]:
    """An IAM access key id (prefix + 16 base32 characters) and its 40-character secret."""
    return prefix + pick(rng, B32, 16), pick(rng, B64, 40)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    style = ["credentials", "env", "csv", "sts_json", "beside_id", "rclone", "configure", "labelled"][i % 8]
    key_id, secret = aws_pair(rng, "ASIA" if style == "sts_json" else "AKIA")
    snip = {"credentials": f"[ediscovery-ingest]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}",
            "env": f"AWS_ACCESS_KEY_ID={key_id}\nAWS_SECRET_ACCESS_KEY={secret}\nAWS_DEFAULT_REGION=us-east-2",
            "csv": f"Access key ID,Secret access key\n{key_id},{secret}",
            "sts_json": _dump({"Credentials": {"AccessKeyId": key_id, "SecretAccessKey": secret,
                                               "Expiration": _ts(rng)}}),
            "beside_id": f"Upload the production set to the vault bucket with {key_id} / {secret}",
            "rclone": f"[s3-vault]\ntype = s3\nprovider = AWS\naccess_key_id = {key_id}\n"
                      f"secret_access_key = {secret}\nregion = us-east-1",
            "configure": f"$ aws configure\nAWS Access Key ID [None]: {key_id}\n"
                         f"AWS Secret Access Key [None]: {secret}\nDefault region name [None]: us-east-2",
            "labelled": f"AWS secret access key: {secret}"}[style]
    return style, secret, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    style = ["slack", "discord", "teams", "power_automate", "google_chat", "zapier", "make", "mattermost"][i % 8]
    if style == "slack":
        token = pick(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, UPALNUM, 8)}/B{pick(rng, UPALNUM, 10)}/{token}"
    elif style == "discord":
        token = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{token}"
    elif style == "teams":
        token = pick(rng, HEX, 32)
        url = (f"https://hwplaw.webhook.office.com/webhookb2/{_guid(rng)}@{_guid(rng)}/IncomingWebhook/{token}/"
               f"{_guid(rng)}")
    elif style == "power_automate":
        token = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westus.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0"
               f"&sig={token}")
    elif style == "google_chat":
        token = pick(rng, URLSAFE, 43)
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages"
               f"?key=AIzaSy{pick(rng, URLSAFE, 33)}&token={token}")
    elif style == "zapier":
        token = pick(rng, LOWER + string.digits, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{rng.randint(10**6, 10**8)}/{token}/"
    elif style == "make":
        token = pick(rng, LOWER + string.digits, 32)
        url = f"https://hook.us1.make.com/{token}"
    else:
        token = pick(rng, LOWER + string.digits, 26)
        url = f"https://chat.hwplaw.com/hooks/{token}"
    lead = rng.choice(["Closing alerts go to {u}", "WEBHOOK_URL={u}", "curl -X POST -d @payload.json {u}",
                       "notify:\n  url: {u}", "New envelope completed → posting to {u}"])
    return style, token, lead.format(u=url), False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = "whsec_" + (pick(rng, ALNUM, 32) if i % 2 else pick(rng, HEX, 64))
    lead = ["STRIPE_WEBHOOK_SECRET={v}", "Signing secret: {v}", "event = stripe.Webhook.construct_event(payload, "
            "sig_header, \"{v}\")", "stripe:\n  webhook_secret: {v}", "Ready! Your webhook signing secret is {v} "
            "(^C to quit)"][i % 5]
    return ["env", "dashboard", "code", "yaml", "cli"][i % 5], secret, lead.format(v=secret), False


def db_password(rng: random.Random) -> str:
    """A password that stays as written in a URI userinfo and between ADO.NET `;`s."""
    return pick(rng, ALNUM, rng.randint(12, 22)) + rng.choice("-_.~") + digits(rng, 2)


def v_connection_string(rng: random.Random, i: int) -> Value:
    style = ["adonet", "azure_storage", "service_bus", "jdbc", "odbc", "postgres", "mongodb", "redis", "amqp",
             "mysql"][i % 10]
    pw = db_password(rng)
    if style == "azure_storage":
        pw = base64.b64encode(rng.randbytes(64)).decode()
    elif style == "service_bus":
        pw = base64.b64encode(rng.randbytes(32)).decode()
    host = rng.choice(["sql-3e-prod", "imanage-db01", "escrow-ledger", "pm-reporting"])
    snip = {
        "adonet": f"Server=tcp:{host}.database.windows.net,1433;Initial Catalog=Elite3E;User ID=svc_billing;"
                  f"Password={pw};Encrypt=True;",
        "azure_storage": f"DefaultEndpointsProtocol=https;AccountName=ediscoveryvault;AccountKey={pw};"
                         "EndpointSuffix=core.windows.net",
        "service_bus": f"Endpoint=sb://hwp-intake.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
                       f"SharedAccessKey={pw}",
        "jdbc": f"jdbc:sqlserver://{host}:1433;databaseName=IMANAGE;user=wsadmin;password={pw};encrypt=true",
        "odbc": f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=TrustLedger;Uid=recon;Pwd={pw};",
        "postgres": f"postgresql://closing_app:{pw}@{host}.internal:5432/closings",
        "mongodb": f"mongodb+srv://intake:{pw}@cluster0.{pick(rng, LOWER, 5)}.mongodb.net/intake?retryWrites=true",
        "redis": f"redis://:{pw}@{host}:6379/0",
        "amqp": f"amqps://docassembly:{pw}@{host}.mq.local:5671/%2F",
        "mysql": f"mysql://pm_export:{pw}@{host}:3306/rentroll",
    }[style]
    return style, pw, snip, False


KEY_LABELS = ["API key: {v}", "Clio API key: {v}", "NetDocuments client_secret = {v}", "DocuSign secret key: {v}",
              "Connect HMAC key: {v}", "X-API-Key: {v}", "API-Schlüssel: {v}", "Clé API : {v}", "Clave de API: {v}",
              "Chiave API: {v}", "Chave de API: {v}", "API-sleutel: {v}", "Klucz API: {v}", "APIキー：{v}",
              "API 키: {v}", "API 密钥：{v}", "Ключ API: {v}", "e-filing EFM api_key={v}", "\"client_secret\": \"{v}\""]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    style = ["hex32", "alnum40", "base64", "guid", "hex64"][i % 5]
    value = {"hex32": pick(rng, HEX, 32), "alnum40": pick(rng, ALNUM, 40),
             "base64": base64.b64encode(rng.randbytes(32)).decode(), "guid": _guid(rng),
             "hex64": pick(rng, HEX, 64)}[style]
    return style, value, KEY_LABELS[i % len(KEY_LABELS)].format(v=value), False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def _disguise_base(rng: random.Random, i: int) -> tuple[str, str]:
    """(lead, token): a secret of another kind as a client or script would paste it."""
    return [("STRIPE_SECRET_KEY=", "sk_live_" + pick(rng, ALNUM, 24)), ("token: ", crc_token(rng, "ghp_")),
            ("aws_secret_access_key = ", pick(rng, B64, 40)), ("Passwort: ", password_value(rng)),
            ("SLACK_BOT_TOKEN=", f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"),
            ("api_key=", pick(rng, HEX, 32))][i % 6]


def v_disguised(rng: random.Random, i: int) -> Value:
    lead, token = _disguise_base(rng, i)
    style = ["zero_width", "fullwidth", "percent", "json_u", "zero_width2"][i % 5]
    if style in ("zero_width", "zero_width2"):
        for _ in range(1 if style == "zero_width" else 2):
            at = rng.randint(3, len(token) - 3)
            token = token[:at] + rng.choice(ZW) + token[at:]
        return style, token, lead + token, False
    if style == "fullwidth":
        token = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in token)
        return style, token, lead + token, False
    if style == "percent":
        token = "".join(f"%{ord(c):02X}" if rng.random() < 0.6 else c for c in token)
        return style, token, f"https://portal.example-title.com/callback?{lead.strip(' :=')}={token}", False
    token = "".join(f"\\u{ord(c):04x}" if k % 2 == 0 else c for k, c in enumerate(token))
    return style, token, f'{{"{lead.strip(" :=")}": "{token}"}}', True


FIRST = ["rokafor", "m.lindqvist", "anika.deshpande", "claire.moreau", "jwhitfield", "sakura.n", "lena.brandt",
         "eduardo.castillo", "tomasz.kowalczyk", "hala.alsayed", "pedro.ferreira", "dermot.oconnell", "thao.nguyen",
         "kemal.yilmaz", "ingrid.solberg", "aarav.mehta", "wei.zhang", "minji.park", "olena.koval", "sipho.dlamini"]
DOMAINS = ["gmail.com", "outlook.com", "hotmail.co.uk", "yahoo.com", "icloud.com", "proton.me", "gmx.de", "web.de",
           "t-online.de", "orange.fr", "free.fr", "laposte.net", "libero.it", "hotmail.es", "uol.com.br", "wp.pl",
           "seznam.cz", "yandex.ru", "ukr.net", "qq.com", "163.com", "naver.com", "yahoo.co.jp", "rediffmail.com",
           "northwind-holdings.com", "blueharbor-capital.com", "kestrel-eng.co.uk"]
IDN = ["françois.dupré@orange.fr", "jürgen.weiß@web.de", "søren.østergaard@mail.dk", "анна.иванова@почта.рф",
       "李明@邮件.中国", "ramón.ibáñez@correo.es", "çağla.öztürk@posta.com.tr", "θεόδωρος@αλληλογραφία.ελ"]


def email_value(rng: random.Random, i: int) -> str:
    if i % 12 == 11:
        return rng.choice(IDN)
    local = rng.choice(FIRST)
    if rng.random() < 0.3:
        local += digits(rng, 2)
    if rng.random() < 0.15:
        local += "+closing"
    return f"{local}@{rng.choice(DOMAINS)}"


def v_email(rng: random.Random, i: int) -> Value:
    mail = email_value(rng, i)
    style = ["lang", "from", "mailto", "dat_field", "sentence", "docusign", "notary", "upper", "lang",
             "reply_to"][i % 10]
    if style == "lang":
        lang, snip = labelled(rng, MAIL, mail, list(LANGS)[(25 + i // 5) % len(LANGS)])
        return f"label_{lang}", mail, snip, False
    if style == "upper":
        mail = mail.upper()
    snip = {"from": f"From: {rng.choice(PEOPLE)} <{mail}>",
            "mailto": f'<a href="mailto:{mail}">{mail}</a>',
            "dat_field": f"EMAIL_FROM: {mail}; CUSTODIAN: {rng.choice(PEOPLE)}",
            "sentence": f"Please send the signing package to the buyer at {mail} before Friday.",
            "docusign": _dump({"email": mail, "name": rng.choice(PEOPLE), "recipientId": "1", "routingOrder": "1"}),
            "notary": f"Signer e-mail (for the e-notary session link): {mail}",
            "upper": f"TENANT EMAIL: {mail}",
            "reply_to": f"Reply-To: {mail}"}[style]
    return style, mail, snip, False


def phone_case(rng: random.Random, i: int, forms: list[tuple[str, Callable[[random.Random], str]]],
               contexts: list[str]) -> Value:
    """A national number in one of its print `forms` after a context word in the country's languages."""
    style, make = forms[i % len(forms)]
    number = make(rng)
    layout = rng.choice(["{c}: {n}", "{c} {n}", "{c} — {n} (after 5pm)", "{c}: {n}, or e-mail the office",
                         "Updated contact — {c} {n}"])
    return style, number, layout.format(c=rng.choice(contexts), n=number), False


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """NPA-NXX-XXXX with NANP's rules: N = 2-9, no N11, no 555 exchange, no toll-free or 900 area codes."""
    while True:
        npa = f"{rng.randint(2, 9)}{rng.randint(0, 8)}{rng.randint(0, 9)}"
        nxx = f"{rng.randint(2, 9)}{digits(rng, 2)}"
        if npa[1:] != "11" and nxx[1:] != "11" and nxx != "555" and npa not in TOLL_FREE_NPA + ("900", "555"):
            return npa, nxx, digits(rng, 4)


TOLL_FREE_NPA = ("800", "833", "844", "855", "866", "877", "888")
US_FORMS = [("paren", lambda r: "({}) {}-{}".format(*_nanp(r))), ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
            ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))), ("intl", lambda r: "+1 {} {} {}".format(*_nanp(r))),
            ("one_paren", lambda r: "1 ({}) {}-{}".format(*_nanp(r))), ("e164", lambda r: "+1{}{}{}".format(*_nanp(r)))]
US_CTX = ["phone", "cell", "mobile", "tel.", "call me at", "best number to reach me", "home phone", "text me at",
          "teléfono", "celular", "téléphone (cellulaire)"]


def _uk_local(rng: random.Random, n: int) -> str:
    """n local digits starting 2-8 without 4, so Ofcom's drama ranges (…496…, 7946…, 2018…, 9018…) never occur."""
    return rng.choice("235678") + digits(rng, n - 1)


UK_FORMS = [("mobile", lambda r: f"07{r.choice('1234589')}{digits(r, 2)} {digits(r, 6)}"),
            ("mobile_intl", lambda r: f"+44 7{r.choice('1234589')}{digits(r, 2)} {digits(r, 6)}"),
            ("london", lambda r: f"020 {r.choice('38')}{digits(r, 3)} {digits(r, 4)}"),
            ("london_intl", lambda r: f"+44 (0)20 {r.choice('38')}{digits(r, 3)} {digits(r, 4)}"),
            ("manchester", lambda r: f"0161 {_uk_local(r, 3)} {digits(r, 4)}"),
            ("five_digit", lambda r: f"{r.choice(['01223', '01865', '01273', '01904'])} {_uk_local(r, 6)}"),
            ("belfast", lambda r: f"028 95{digits(r, 2)} {digits(r, 4)}")]
UK_CTX = ["mobile", "mob.", "tel", "phone", "ring me on", "daytime number", "landline", "contact number"]


def _fr_pairs(rng: random.Random, first: str) -> list[str]:
    """0X then four pairs; the second pair avoids the ARCEP fiction ranges' heads (01 99, 06 39, ...)."""
    second = rng.choice([f"{n:02d}" for n in range(10, 99) if f"{n:02d}" not in ("99", "39", "61", "53", "65", "35")])
    return [f"0{first}", second] + [digits(rng, 2) for _ in range(3)]


FR_FORMS = [("mobile", lambda r: " ".join(_fr_pairs(r, r.choice("67")))),
            ("landline", lambda r: " ".join(_fr_pairs(r, r.choice("12345")))),
            ("dots", lambda r: ".".join(_fr_pairs(r, r.choice("167")))),
            ("intl", lambda r: "+33 " + " ".join(_fr_pairs(r, r.choice("67")))[1:]),
            ("intl_zero", lambda r: "+33 (0)" + " ".join(_fr_pairs(r, r.choice("1234")))[1:]),
            ("compact", lambda r: "".join(_fr_pairs(r, r.choice("679"))))]
FR_CTX = ["portable", "tél.", "téléphone", "numéro de mobile", "me joindre au", "fixe", "Tél. du notaire"]

DE_FORMS = [("mobile15", lambda r: f"015{r.choice('1279')} {digits(r, 8)}"),
            ("mobile17", lambda r: f"017{r.randint(0, 9)} {digits(r, 7)}"),
            ("mobile_intl", lambda r: f"+49 1{r.choice(['51', '60', '62', '70', '76'])} {digits(r, 7)}"),
            ("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
            ("munich_slash", lambda r: f"089/{r.randint(2, 9)}{digits(r, 3)} {digits(r, 4)}"),
            ("din_intl", lambda r: f"+49 40 {r.randint(2, 9)}{digits(r, 7)}"),
            ("cologne_paren", lambda r: f"(0221) {r.randint(2, 9)}{digits(r, 6)}")]
DE_CTX = ["Telefon", "Tel.", "Handy", "Mobil", "Rückruf unter", "erreichbar unter", "Festnetz", "Mobilnummer"]

IN_FORMS = [("intl_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
            ("intl_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}"),
            ("zero", lambda r: f"0{r.choice('6789')}{digits(r, 9)}"),
            ("split", lambda r: f"{r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
            ("delhi", lambda r: f"011-2{digits(r, 3)}-{digits(r, 4)}"),
            ("mumbai", lambda r: f"022 2{digits(r, 3)} {digits(r, 4)}"),
            ("bengaluru", lambda r: f"080-{r.choice('2346')}{digits(r, 7)}")]
IN_CTX = ["mobile", "mob. no.", "phone", "मोबाइल नंबर", "फ़ोन", "संपर्क नंबर", "ফোন নম্বর", "கைபேசி எண்", "WhatsApp"]


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, US_FORMS, US_CTX)


def v_phone_uk(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, UK_FORMS, UK_CTX)


def v_phone_fr(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, FR_FORMS, FR_CTX)


def v_phone_de(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, DE_FORMS, DE_CTX)


def v_phone_in(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, IN_FORMS, IN_CTX)


def ssn_value(rng: random.Random) -> tuple[str, str, str]:
    """Area 001-899 but 666, group 01-99, serial 0001-9999 (SSA)."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


SSN_CTX = ["SSN", "Social Security Number", "SS#", "Soc. Sec. No.", "Número de Seguro Social", "TIN (SSN)",
           "Seller's SSN for the 1099-S"]


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = ssn_value(rng)
    style = ["dash", "space", "compact", "json", "dash", "form_line"][i % 6]
    ssn = {"dash": f"{a}-{g}-{s}", "space": f"{a} {g} {s}", "compact": a + g + s, "json": f"{a}-{g}-{s}",
           "form_line": f"{a}-{g}-{s}"}[style]
    if style == "json":
        return style, ssn, _dump({"applicant": {"ssn": ssn, "dob": "1987-04-12"}}), False
    if style == "form_line":
        return style, ssn, f"Applicant's Social Security No. |{ssn}|  Driver's license state: IL", False
    return style, ssn, f"{rng.choice(SSN_CTX)}: {ssn}", False


CARD_BRANDS = ["visa", "mc", "mc2", "amex", "discover", "discover64", "discover65", "jcb", "diners", "unionpay"]


def card_number(rng: random.Random, brand: str) -> str:
    """An ISO/IEC 7812 number in the brand's IIN range and length, Luhn-completed."""
    head, length = {"visa": ("4", 16), "mc": (str(rng.randint(51, 55)), 16), "mc2": (str(rng.randint(2221, 2720)), 16),
                    "amex": (rng.choice(["34", "37"]), 15), "discover": ("6011", 16),
                    "discover64": (str(rng.randint(644, 649)), 16), "discover65": ("65", 16),
                    "jcb": (str(rng.randint(3528, 3589)), 16), "diners": ("36", 14),
                    "unionpay": ("62", rng.choice([16, 19]))}[brand]
    partial = head + digits(rng, length - len(head) - 1)
    return partial + luhn_digit(partial)


def v_card(rng: random.Random, i: int) -> Value:
    brand = CARD_BRANDS[i % len(CARD_BRANDS)]
    number = card_number(rng, brand)
    shown = group_card(number, rng.choice([" ", "-", ""])) if len(number) <= 16 else number
    how = i % 4
    if how == 0:
        lang, snip = labelled(rng, CARD, shown, list(LANGS)[i // 4 % len(LANGS)])
        return f"{brand}_{lang}", shown, snip, False
    snip = [f"Application fee ($45) — card {shown}, exp 0{rng.randint(1, 9)}/2{rng.randint(6, 9)}",
            _dump({"payment": {"method": "card", "number": shown, "holder": rng.choice(PEOPLE)}}),
            f"Earnest money deposit paid by card ending … no, full number: {shown}"][how - 1]
    return brand, shown, snip, False


IBAN_BBAN = {"DE": ("8n10n", "de"), "FR": ("5n5n11c2n", "fr"), "GB": ("4a6n8n", "en"), "ES": ("4n4n1n1n10n", "es"),
             "IT": ("1a5n5n12c", "it"), "NL": ("4a10n", "nl"), "BE": ("3n7n2n", "fr"), "CH": ("5n12c", "de"),
             "AT": ("5n11n", "de"), "PL": ("8n16n", "pl"), "PT": ("4n4n11n2n", "pt"), "IE": ("4a6n8n", "en"),
             "LU": ("3n13c", "fr"), "SE": ("3n16n1n", "sv"), "DK": ("4n9n1n", "da"), "NO": ("4n6n1n", "no"),
             "FI": ("3n11n", "fi"), "GR": ("3n4n16c", "el"), "CZ": ("4n6n10n", "cs"), "HU": ("3n4n1n15n1n", "hu"),
             "RO": ("4a16c", "ro"), "TR": ("5n1n16c", "tr"), "AE": ("3n16n", "ar"), "SA": ("2n18c", "ar"),
             "IL": ("3n3n13n", "he"), "BR": ("8n5n10n1a1c", "pt")}


def _es_ccc(num: str) -> str:
    """A Spanish CCC control digit: weights 1,2,4,8,5,10,9,7,3,6 mod 11 (11 is 0, 10 is 1)."""
    d = 11 - sum(int(c) * w for c, w in zip(num, (1, 2, 4, 8, 5, 10, 9, 7, 3, 6), strict=True)) % 11
    return str({11: 0, 10: 1}.get(d, d))


def national_bban(rng: random.Random, country: str, structure: str) -> str:
    """A BBAN with the national check digits where the country has them in this corpus (BE: mod 97 of the first
    ten digits; ES: the CCC's two digits; NO: mod 11 weights 5,4,3,2,7,6,5,4,3,2), else `bban`'s drawing."""
    while True:
        body = bban(rng, structure)
        if country == "BE":
            return body[:10] + f"{int(body[:10]) % 97 or 97:02d}"
        if country == "ES":
            return body[:8] + _es_ccc("00" + body[:8]) + _es_ccc(body[10:]) + body[10:]
        if country != "NO":
            return body
        k = (11 - sum(int(c) * w for c, w in zip(body[:10], (5, 4, 3, 2, 7, 6, 5, 4, 3, 2), strict=True)) % 11) % 11
        if k < 10:
            return body[:10] + str(k)


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    structure, lang = IBAN_BBAN[country]
    body = national_bban(rng, country, structure)
    iban = country + iban_check(country, body) + body
    shown = group(iban, 4, " ") if i % 3 else iban
    if i % 2:
        lang, snip = labelled(rng, IBAN_L, shown, lang)
        return f"{country}_{lang}", shown, snip, False
    snip = rng.choice([f"Beneficiary: {rng.choice(PEOPLE)}\nIBAN: {shown}\nBIC: {pick(rng, UPPER, 6)}2X",
                       f"Seller proceeds to IBAN {shown} per the signed disbursement authorization",
                       _dump({"beneficiary": {"iban": shown, "currency": "EUR"}})])
    return country, shown, snip, False


def aba_routing(rng: random.Random) -> str:
    """An ABA routing number: a Federal Reserve prefix (01-12, 21-32, 61-72, 80) and the 3-7-1 check digit."""
    prefix = f"{rng.choice(list(range(1, 13)) + list(range(21, 33)) + list(range(61, 73)) + [80]):02d}"
    partial = prefix + digits(rng, 6)
    weights = (3, 7, 1, 3, 7, 1, 3, 7)
    return partial + str((10 - sum(int(d) * w for d, w in zip(partial, weights, strict=True)) % 10) % 10)


def v_bank_account(rng: random.Random, i: int) -> Value:
    account = digits(rng, rng.randint(8, 14))
    routing = aba_routing(rng)
    style = ["wire", "ach", "short", "spanish", "json", "payoff"][i % 6]
    snip = {"wire": f"Bank: First Lakeside Bank\nABA/Routing: {routing}\nAccount No.: {account}\n"
                    f"For further credit to: {rng.choice(PEOPLE)}",
            "ach": f"ACH authorization — routing {routing}, checking account {account}",
            "short": f"RTN {routing} / Acct {account}",
            "spanish": f"Número de ruta: {routing} — Número de cuenta: {account}",
            "json": _dump({"refund": {"routing_number": routing, "account_number": account, "type": "checking"}}),
            "payoff": f"Wire payoff funds to ABA {routing}, account {account}, ref loan {digits(rng, 10)}"}[style]
    return style, account, snip, False


def jwt_value(rng: random.Random, i: int) -> str:
    """A signed JWT (RFC 7519): DocuSign's JWT-grant claims under RS256, or a session claim set under HS256."""
    if i % 2:
        head = {"alg": "RS256", "typ": "JWT"}
        t = rng.randint(1_700_000_000, 1_760_000_000)
        body: dict[str, object] = {"iss": _guid(rng), "sub": _guid(rng), "aud": "account-d.docusign.com", "iat": t,
                                   "exp": t + 3600, "scope": "signature impersonation"}
        sig = rng.randbytes(256)
    else:
        head = {"alg": "HS256", "typ": "JWT"}
        body = {"sub": str(rng.randint(10**5, 10**7)), "matter": f"{rng.randint(100, 9999):05d}",
                "exp": rng.randint(1_700_000_000, 1_760_000_000)}
        sig = rng.randbytes(32)
    parts = [b64url(json.dumps(p, separators=(",", ":")).encode()) for p in (head, body)]
    return ".".join(parts + [b64url(sig)])


def v_jwt(rng: random.Random, i: int) -> Value:
    token = jwt_value(rng, i)
    style = ["bearer", "assertion", "token_json", "cookie", "query"][i % 5]
    snip = {"bearer": f"Authorization: Bearer {token}",
            "assertion": f"grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion={token}",
            "token_json": _dump({"access_token": token, "token_type": "Bearer", "expires_in": 28800}),
            "cookie": f"Cookie: id_token={token}; lang=en",
            "query": f"GET /review/launch?session={token} HTTP/1.1"}[style]
    return style, token, snip, False


def v_auth_header(rng: random.Random, i: int) -> Value:
    style = ["basic", "bearer", "digest", "sigv4", "curl_bearer", "oauth_json", "presigned"][i % 7]
    if style == "basic":
        cred = base64.b64encode(f"filer{rng.randint(10, 99)}:{password_value(rng)}".encode()).decode()
        return style, cred, f"Authorization: Basic {cred}", False
    if style in ("bearer", "curl_bearer", "oauth_json"):
        token = pick(rng, ALNUM, rng.choice([40, 48, 64]))
        snip = {"bearer": f"Authorization: Bearer {token}",
                "curl_bearer": f"curl -H 'Authorization: Bearer {token}' https://app.clio.com/api/v4/matters.json",
                "oauth_json": _dump({"token_type": "bearer", "access_token": token, "expires_in": 2592000})}[style]
        return style, token, snip, False
    if style == "digest":
        resp = pick(rng, HEX, 32)
        return style, resp, (f'Authorization: Digest username="escrow", realm="efile", nonce="{pick(rng, HEX, 32)}", '
                             f'uri="/api/filings", qop=auth, nc=00000001, cnonce="{pick(rng, HEX, 16)}", '
                             f'response="{resp}"'), False
    sig = pick(rng, HEX, 64)
    key_id = "AKIA" + pick(rng, B32, 16)
    if style == "sigv4":
        return style, sig, (f"Authorization: AWS4-HMAC-SHA256 Credential={key_id}/20250301/us-east-1/s3/aws4_request, "
                            f"SignedHeaders=host;x-amz-date, Signature={sig}"), False
    return style, sig, (f"https://prod-vault.s3.amazonaws.com/ACME0001234.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                        f"&X-Amz-Credential={key_id}%2F20250301%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Expires=3600"
                        f"&X-Amz-SignedHeaders=host&X-Amz-Signature={sig}"), False


COOKIES: list[tuple[str, Callable[[random.Random], str]]] = [
    ("JSESSIONID", lambda r: pick(r, HEX.upper(), 32) + r.choice(["", ".efile-node3"])),
    ("ASP.NET_SessionId", lambda r: pick(r, LOWER[:26] + "012345", 24)),
    (".ASPXAUTH", lambda r: pick(r, HEX.upper(), r.choice([192, 256, 320]))),
    ("PHPSESSID", lambda r: pick(r, string.digits + LOWER[:22], 26)),
    ("connect.sid", lambda r: "s%3A" + pick(r, URLSAFE, 32) + "." + pick(r, ALNUM, 43))]


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, make = COOKIES[i % len(COOKIES)]
    value = make(rng)
    style = ["cookie", "set_cookie", "har", "curl", "devtools"][(i // len(COOKIES)) % 5]
    snip = {"cookie": f"Cookie: {name}={value}; culture=en-US",
            "set_cookie": f"Set-Cookie: {name}={value}; Path=/; Secure; HttpOnly; SameSite=Lax",
            "har": _dump({"name": name, "value": value, "domain": "efile.courts.example.gov", "httpOnly": True}),
            "curl": f"curl -b '{name}={value}' https://efile.courts.example.gov/EnvelopeStatus",
            "devtools": f"Name\tValue\tDomain\n{name}\t{value}\tportal.titleco.example"}[style]
    return f"{name.strip('.').lower()}_{style}", value, snip, False


def v_private_key(rng: random.Random, i: int) -> Value:
    style = ["sec1", "pkcs8_ec", "openssh", "pkcs8_ed25519", "sa_json"][i % 5]
    none = serialization.NoEncryption()
    if style == "openssh":
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = base64.b64encode(openssh_ed25519_blob(seed, public, rng.randbytes(4), b"closing@titleco")).decode()
        pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(blob, 70, "\n") + "\n-----END OPENSSH PRIVATE KEY-----\n"
    elif style == "pkcs8_ed25519":
        key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, none).decode()
    else:
        key_ec = ec.derive_private_key(rng.randrange(1, 2**255), ec.SECP256R1())
        fmt = serialization.PrivateFormat.TraditionalOpenSSL if style == "sec1" else serialization.PrivateFormat.PKCS8
        pem = key_ec.private_bytes(serialization.Encoding.PEM, fmt, none).decode()
    body = "\n".join(line for line in pem.splitlines() if not line.startswith("-----"))
    if style == "sa_json":
        doc = _dump({"type": "service_account", "project_id": "hwp-docassembly", "private_key_id": pick(rng, HEX, 40),
                     "private_key": pem, "client_email": "docassembly@hwp-docassembly.iam.gserviceaccount.com"})
        return style, body.replace("\n", "\\n"), doc, False
    lead = rng.choice(["DocuSign JWT-grant key (keep out of the repo):\n", "e-notary signing key:\n", ""])
    return style, body, lead + pem, False


ISSUERS = ["Tyler%20eFile", "Clio", "NetDocuments", "DocuSign", "Qualia", "AppFolio", "Relativity"]


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, B32, 32 if i % 3 else 16)
    style = ["uri", "setup_key", "labelled", "json"][i % 4]
    issuer = rng.choice(ISSUERS)
    if style == "setup_key":
        seed = group(seed.lower(), 4, " ")
    snip = {"uri": f"otpauth://totp/{issuer}:escrow.officer?secret={seed}&issuer={issuer}&digits=6&period=30",
            "setup_key": f"Can't scan the QR code? Enter this setup key: {seed}",
            "labelled": f"MFA seed for the shared {issuer.replace('%20', ' ')} filing account: {seed}",
            "json": _dump({"account": "closing-desk", "issuer": issuer, "totp_secret": seed})}[style]
    return style, seed, snip, False


SK_ALPHA = "23456789ABCDEFGHJKLMNPQRSTVWXYZ"


def v_recovery_code(rng: random.Random, i: int) -> Value:
    style = ["github", "microsoft", "google", "onepassword"][i % 4]
    code = {"github": f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}",
            "microsoft": group(pick(rng, SK_ALPHA, 25), 5, "-"),
            "google": f"{digits(rng, 4)} {digits(rng, 4)}",
            "onepassword": f"A3-{pick(rng, SK_ALPHA, 6)}-{pick(rng, SK_ALPHA, 6)}-"
                           + "-".join(pick(rng, SK_ALPHA, 5) for _ in range(4))}[style]
    lead = {"github": "GitHub recovery code for the firm's docs repo: {c}",
            "microsoft": "Microsoft account recovery code (paralegal laptop): {c}",
            "google": "Backup code for the shared Google Workspace intake account: {c}",
            "onepassword": "1Password Secret Key for the escrow vault: {c}"}[style]
    return style, code, lead.format(c=code), False


def provider(leads: list[str], make: Callable[[random.Random, int], str]) -> Callable[[random.Random, int], Value]:
    """A provider token kind: `make` draws the token, `leads` are how it is written down."""
    def gen(rng: random.Random, i: int) -> Value:
        token = make(rng, i)
        return f"lead{i % len(leads)}", token, leads[i % len(leads)].format(v=token), False
    return gen


def stripe_key(rng: random.Random, i: int) -> str:
    head = ("sk_live_", "rk_live_")[i % 2]
    return head + ("51" + pick(rng, ALNUM, 97) if i % 3 else pick(rng, ALNUM, 24))


def slack_token(rng: random.Random, i: int) -> str:
    if i % 3 == 0:
        return f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    if i % 3 == 1:
        return f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}"
    return f"xapp-1-A{pick(rng, UPALNUM, 10)}-{digits(rng, 13)}-{pick(rng, HEX, 64)}"


def github_token(rng: random.Random, i: int) -> str:
    return crc_token(rng, "ghp_") if i % 2 else f"github_pat_11{pick(rng, UPALNUM, 20)}_{pick(rng, ALNUM, 59)}"


def llm_key(rng: random.Random, i: int) -> str:
    if i % 2:
        return f"sk-ant-api03-{pick(rng, URLSAFE, 93)}AA"
    return f"sk-proj-{pick(rng, URLSAFE, 74)}T3BlbkFJ{pick(rng, URLSAFE, 74)}"


def v_twilio_auth_token(rng: random.Random, i: int) -> Value:
    """A Twilio auth token (32 hex) beside its account SID (AC + 32 hex), which names the account only."""
    sid, token = "AC" + pick(rng, HEX, 32), pick(rng, HEX, 32)
    style = ["env", "labelled", "curl", "yaml"][i % 4]
    snip = {"env": f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={token}",
            "labelled": f"Account SID {sid}, Auth Token: {token}",
            "curl": f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json -u {sid}:{token}",
            "yaml": f"twilio:\n  account_sid: {sid}\n  auth_token: {token}"}[style]
    return style, token, snip, False


PROVIDERS: dict[str, Callable[[random.Random, int], Value]] = {
    "stripe_key": provider(["STRIPE_SECRET_KEY={v}", 'stripe.api_key = "{v}"', "curl https://api.stripe.com/v1/charges"
                            " -u {v}:", "Secret key: {v}", '"stripe_secret": "{v}"', "{v}"], stripe_key),
    "sendgrid_key": provider(["SENDGRID_API_KEY={v}", "Authorization: Bearer {v}", "SMTP relay smtp.sendgrid.net, "
                              "user apikey, password {v}", "sg = SendGridAPIClient('{v}')", "{v}"],
                             lambda r, _i: f"SG.{pick(r, URLSAFE, 22)}.{pick(r, URLSAFE, 43)}"),
    "slack_token": provider(["SLACK_BOT_TOKEN={v}", "Authorization: Bearer {v}", "token: {v}",
                             "client = WebClient(token=\"{v}\")", "{v}"], slack_token),
    "github_token": provider(["GITHUB_TOKEN={v}", "git clone https://{v}@github.com/hwp-law/docassembly.git",
                              "Authorization: token {v}", "gh auth login --with-token <<< {v}", "{v}"], github_token),
    "llm_api_key": provider(["OPENAI_API_KEY={v}", "ANTHROPIC_API_KEY={v}", "x-api-key: {v}",
                             "client = Client(api_key=\"{v}\")", "{v}"], llm_key),
}


# ---- national ids (outside the target) ------------------------------------------------------------------------

def _birth(rng: random.Random, first: int = 1950, last: int = 2004) -> tuple[int, int, int]:
    return rng.randint(first, last), rng.randint(1, 12), rng.randint(1, 28)


def ca_sin(rng: random.Random) -> str:
    """Canadian SIN: first digit 1-7 or 9, Luhn over nine digits, printed 3-3-3."""
    partial = rng.choice("12345679") + digits(rng, 7)
    return group(partial + luhn_digit(partial), 3, rng.choice([" ", "-"]))


def fr_nir(rng: random.Random) -> str:
    """French NIR: sex, year, month, département (01-95 but 20), commune, order, key 97 - n mod 97."""
    y, m, _d = _birth(rng)
    dept = rng.choice([d for d in range(1, 96) if d != 20])
    parts = [rng.choice("12"), f"{y % 100:02d}", f"{m:02d}", f"{dept:02d}", f"{rng.randint(1, 990):03d}",
             f"{rng.randint(1, 999):03d}"]
    key = 97 - int("".join(parts)) % 97
    return " ".join(parts + [f"{key:02d}"])


def be_nrn(rng: random.Random) -> str:
    """Belgian national number: yymmdd, serial 001-997, check 97 - mod 97 (a 2 prefixed from 2000 on)."""
    y, m, d = _birth(rng, 1950, 2005)
    base = f"{y % 100:02d}{m:02d}{d:02d}{rng.randint(1, 997):03d}"
    check = 97 - int(("2" if y >= 2000 else "") + base) % 97
    return f"{base[:2]}.{base[2:4]}.{base[4:6]}-{base[6:]}.{check:02d}"


def fi_hetu(rng: random.Random) -> str:
    """Finnish HETU: ddmmyy, century sign, 002-899, check character of the nine digits mod 31."""
    y, m, d = _birth(rng)
    core = f"{d:02d}{m:02d}{y % 100:02d}"
    num = f"{rng.randint(2, 899):03d}"
    return core + ("A" if y >= 2000 else "-") + num + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(core + num) % 31]


def se_pnr(rng: random.Random) -> str:
    """Swedish personnummer: yymmdd-nnn and the Luhn digit of those nine digits, sometimes with the century."""
    y, m, d = _birth(rng)
    core = f"{y % 100:02d}{m:02d}{d:02d}{digits(rng, 3)}"
    full = core + luhn_digit(core)
    return (str(y // 100) if rng.random() < 0.4 else "") + f"{full[:6]}-{full[6:]}"


def no_fnr(rng: random.Random) -> str:
    """Norwegian fødselsnummer: ddmmyy, individual number, two mod-11 check digits (10 is never issued)."""
    while True:
        y, m, d = _birth(rng, 1950, 1999)
        base = [int(c) for c in f"{d:02d}{m:02d}{y % 100:02d}{rng.randint(0, 499):03d}"]
        k1 = (11 - sum(w * v for w, v in zip((3, 7, 6, 1, 8, 9, 4, 5, 2), base, strict=True)) % 11) % 11
        k2 = (11 - sum(w * v for w, v in zip((5, 4, 3, 2, 7, 6, 5, 4, 3, 2), base + [k1], strict=True)) % 11) % 11
        if k1 < 10 and k2 < 10:
            return "".join(map(str, base)) + f"{k1}{k2}"


def cn_rid(rng: random.Random) -> str:
    """Chinese resident id: area code, yyyymmdd, sequence, ISO 7064 MOD 11-2 check character."""
    y, m, d = _birth(rng)
    body = rng.choice(["110101", "110102", "110105", "310101", "310104"]) + f"{y}{m:02d}{d:02d}"
    body += digits(rng, 3)
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return body + "10X98765432"[sum(int(c) * w for c, w in zip(body, weights, strict=True)) % 11]


def cl_rut(rng: random.Random) -> str:
    """Chilean RUT: the number and its mod-11 verifier (weights 2-7 from the right; 10 is K, 11 is 0)."""
    n = rng.randint(5_000_000, 26_000_000)
    total = sum(int(c) * (2 + k % 6) for k, c in enumerate(reversed(str(n))))
    dv = {10: "K", 11: "0"}.get(11 - total % 11, str(11 - total % 11))
    return f"{n:,}".replace(",", ".") + f"-{dv}" if rng.random() < 0.7 else f"{n}-{dv}"


ID_CTX = {"ca_sin": ["SIN", "Social Insurance Number", "NAS"], "fr_nir": ["N° de sécurité sociale", "NIR"],
          "be_nrn": ["Numéro de registre national", "Rijksregisternummer"], "fi_hetu": ["Henkilötunnus", "HETU"],
          "se_pnr": ["Personnummer", "Pers.nr"], "no_fnr": ["Fødselsnummer", "F.nr."],
          "cn_rid": ["身份证号", "居民身份证号码", "PRC ID card no."], "cl_rut": ["RUT", "Rol Único Tributario"]}
ID_MAKERS: dict[str, Callable[[random.Random], str]] = {"ca_sin": ca_sin, "fr_nir": fr_nir, "be_nrn": be_nrn,
                                                        "fi_hetu": fi_hetu, "se_pnr": se_pnr, "no_fnr": no_fnr,
                                                        "cn_rid": cn_rid, "cl_rut": cl_rut}
ID_TEMPLATES = ["{c}: {v}", "Buyer (foreign national) — {c} {v}", "ID presented to the notary: {c} {v}",
                "Co-applicant {c}: {v} (copy of card attached)"]


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    def gen(rng: random.Random, i: int) -> Value:
        value = ID_MAKERS[kind](rng)
        text = ID_TEMPLATES[i % len(ID_TEMPLATES)].format(c=rng.choice(ID_CTX[kind]), v=value)
        return f"t{i % len(ID_TEMPLATES)}", value, text, False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "bank_account": v_bank_account, "jwt": v_jwt, "auth_header": v_auth_header, "session_cookie": v_session_cookie,
    "private_key": v_private_key, "totp_seed": v_totp_seed, "recovery_code": v_recovery_code,
    "twilio_auth_token": v_twilio_auth_token, **PROVIDERS, **{kind: national_id(kind) for kind in ID_MAKERS},
}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """(carrier, text, is_json): the i-th carrier in turn, the next plain-text one for a raw-only snippet."""
    _style, secret, snip, raw_only = value
    k = i % len(CARRIERS)
    while raw_only and CARRIERS[k][2]:
        k = (k + 1) % len(CARRIERS)
    name, make, is_json = CARRIERS[k]
    return name, make(rng, snip, secret), is_json


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
    """Sixteen digits whose last digit is not the Luhn digit."""
    partial = rng.choice("3456") + digits(rng, 14)
    return partial + str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)


def _toll_free(rng: random.Random) -> str:
    """A business's published freephone line: NANP toll-free codes, Ofcom 0800/0808, ARCEP 0 800, BNetzA 0800,
    India's 1800."""
    return rng.choice([f"1-{rng.choice(TOLL_FREE_NPA)}-{rng.randint(200, 999)}-{digits(rng, 4)}",
                       f"0800 {digits(rng, 3)} {digits(rng, 4)}", f"0808 {digits(rng, 3)} {digits(rng, 4)}",
                       f"0 800 {digits(rng, 2)} {digits(rng, 2)} {digits(rng, 2)}", f"1800-{digits(rng, 3)}-"
                       f"{digits(rng, 4)}"])


def _tracking(rng: random.Random) -> str:
    return rng.choice([f"1Z{pick(rng, UPALNUM, 6)}{digits(rng, 10)}", digits(rng, 12),
                       f"9400 {digits(rng, 4)} {digits(rng, 4)} {digits(rng, 4)} {digits(rng, 4)} {digits(rng, 2)}"])


def _bates(rng: random.Random) -> str:
    """A produced range: one prefix, a start and an end Bates number."""
    prefix, start = rng.choice(["HWP", "ACME", "SMITH", "DEF-"]), rng.randint(1, 10**6)
    return f"Produced at {prefix}{start:07d} – {prefix}{start + rng.randint(1, 400):07d}"


SERVICE_LINES = ["Customer service", "Title support line", "Kundenservice", "Service client", "Servicio al cliente"]
NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "bates_range": _bates,
    "docket_number": lambda r: r.choice([f"Case No. {r.randint(1, 4)}:{r.randint(20, 25)}-cv-{r.randint(1, 9999):05d}"
                                         f"-{pick(r, UPPER, 3)}", f"Case No. 2025-L-{r.randint(1, 99999):06d}",
                                         f"Adv. Proc. No. {r.randint(23, 25)}-{r.randint(50000, 59999)} (KBO)"]),
    "dms_document_id": lambda r: r.choice([f"ACTIVE!{r.randint(10**6, 10**8)}.{r.randint(1, 9)}",
                                           f"ND doc {digits(r, 4)}-{digits(r, 4)}-{digits(r, 4)}, v.{r.randint(1, 5)}",
                                           f"\\\\dms\\docs\\{r.randint(10000, 99999)}\\0001\\{digits(r, 8)}.DOCX"]),
    "document_hash": lambda r: r.choice([f"MD5 Hash: {pick(r, HEX, 32)}", f"SHA1: {pick(r, HEX, 40)}",
                                         f"dedup SHA-256 {pick(r, HEX, 64)} (duplicate of "
                                         f"ACME{r.randint(1, 10**6):07d})"]),
    "envelope_id": lambda r: r.choice([f"DocuSign Envelope ID: {_guid(r).upper()}",
                                       _dump({"envelopeId": _guid(r), "status": "sent"})]),
    "request_id": lambda r: r.choice([f"X-Request-Id: {_guid(r)}", f"traceparent: 00-{pick(r, HEX, 32)}-"
                                      f"{pick(r, HEX, 16)}-01", f"CorrelationId={_guid(r)}"]),
    "timestamp": lambda r: r.choice([_ts(r), f"Filed {r.randint(1, 12):02d}/{r.randint(1, 28):02d}/2025 "
                                     f"{r.randint(1, 12)}:{r.randint(0, 59):02d} PM CDT",
                                     f"lastModified={r.randint(1_700_000_000_000, 1_760_000_000_000)}"]),
    "selector_xpath": lambda r: r.choice([f"#signHereTab_{r.randint(1, 40)} > .tab-handle",
                                          "//input[@name='ssn']", "div[data-qa='fee-card-number'] input",
                                          f"//table[@id='payoff']/tr[{r.randint(2, 30)}]/td[3]",
                                          "input[autocomplete='current-password']"]),
    "csrf_field_name": lambda r: r.choice(['<input type="hidden" name="__RequestVerificationToken" value="">',
                                           "csrfmiddlewaretoken missing or incorrect",
                                           "403: authenticity_token is required", "X-CSRF-Token header not sent",
                                           f"form field _csrf absent on step {r.randint(1, 5)}"]),
    "placeholder": lambda r: r.choice(["Password: ********", "Email: you@example.com", "SSN: XXX-XX-XXXX",
                                       "API key: <YOUR_API_KEY>", "Phone: (555) 555-0123", "{{client_email}}",
                                       "IBAN: DE__ ____ ____ ____ ____ __", f"Secret: {'•' * r.randint(8, 16)}"]),
    "masked_value": lambda r: r.choice([f"SSN ***-**-{digits(r, 4)}", f"card ending in {digits(r, 4)}",
                                        f"Acct ****{digits(r, 4)}", f"IBAN GB** **** **** **** {digits(r, 2)}"
                                        f"{digits(r, 2)}", f"Phone (•••) •••-{digits(r, 4)}"]),
    "version_string": lambda r: r.choice([f"iManage Work {r.randint(10, 11)}.{r.randint(0, 9)}.{r.randint(0, 9)}."
                                          f"{r.randint(100, 9999)}", f"ndOffice {r.randint(2, 4)}.{r.randint(0, 9)}"
                                          f".{r.randint(0, 99)}.{r.randint(0, 999)}",
                                          "DocuSign eSignature REST API v2.1",
                                          f"Relativity Server 2024 (14.{r.randint(0, 4)}.{r.randint(1, 400)}.4)"]),
    "service_number": lambda r: f"{r.choice(SERVICE_LINES)} (toll-free): {_toll_free(r)}",
    "luhn_invalid": lambda r: f"{r.choice(['Wire confirmation', 'Transaction ref', 'Receipt no.'])} {_luhn_bad(r)}",
    "tracking_number": lambda r: f"Original deed shipped to the county recorder, tracking {_tracking(r)}",
    "order_number": lambda r: r.choice([f"Title Order No. LTE-2025-{r.randint(1, 99999):06d}",
                                        f"Escrow No. {r.randint(20, 25)}-{r.randint(100000, 999999)}-RC",
                                        f"Invoice INV-2025-{r.randint(1, 9999):04d}"]),
    "coordinates": lambda r: r.choice([f"lat {r.uniform(25, 48):.6f}, lng {r.uniform(-123, -70):.6f}",
                                       _dump({"tabType": "signHere", "xPosition": str(r.randint(50, 550)),
                                              "yPosition": str(r.randint(50, 750)), "pageNumber": "3"}),
                                       f"width: {r.randint(80, 400)}px; height: {r.randint(20, 60)}px"]),
    "statute_citation": lambda r: r.choice(["Cal. Civ. Code § 1950.5(b)", "28 U.S.C. § 1332(a)(1)",
                                            "Fed. R. Civ. P. 26(b)(5)(A)", "Tex. Prop. Code § 92.0081",
                                            "12 C.F.R. § 1024.41(b)", "765 ILCS 705/1", "N.Y. Real Prop. Law § 291"]),
    "parcel_number": lambda r: r.choice([f"APN {r.randint(100, 999)}-{r.randint(100, 999)}-{r.randint(10, 99)}",
                                         f"PIN {r.randint(10, 33)}-{r.randint(1, 36):02d}-{r.randint(100, 499)}-"
                                         f"{r.randint(1, 99):03d}-0000",
                                         f"Lot {r.randint(1, 60)}, Block {r.randint(1, 9)}, "
                                         f"Tract {r.randint(1000, 9999)}"]),
    "amount": lambda r: r.choice([f"Purchase price ${r.randint(200, 2000)},{digits(r, 3)}.00",
                                  f"Per diem interest ${r.randint(10, 99)}.{digits(r, 2)}",
                                  f"Earnest money €{r.randint(5, 90)}.{digits(r, 3)},00"]),
    "bank_identifier": lambda r: r.choice([f"First Lakeside Bank, routing (ABA) {aba_routing(r)}",
                                           f"SWIFT/BIC: {pick(r, UPPER, 4)}{r.choice(['DE', 'FR', 'GB', 'US'])}"
                                           f"{pick(r, UPALNUM, 2)}{r.choice(['', 'XXX'])}"]),
    "aws_docs_example": lambda r: r.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                                            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                            f"See the AWS docs sample (AKIAIOSFODNN7EXAMPLE), step {r.randint(1, 9)}"]),
    "cache_busting": lambda r: r.choice([f"/static/js/envelope.{pick(r, HEX, 8)}.js",
                                         f"styles.min.css?v=2025{r.randint(1, 12):02d}{r.randint(1, 28):02d}",
                                         f"/assets/app-{pick(r, HEX, 20)}.css"]),
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

