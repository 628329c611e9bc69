"""The thirty-second blind redaction corpus: people-process agents, what an agent that handles people's records in
recruiting, education, legal and public services sees. Written from the formats' public specifications by someone
who read neither the detection rules nor the other corpora's values.

Carriers (the `form` head): applicant tracking systems (Greenhouse Harvest candidate JSON, Lever opportunities,
Workday Recruiting SOAP-to-JSON job applications, scorecards and recruiter notes), résumés and CVs as extracted
text (PDF text with hyphenation, page footers and broken columns; DOCX text with tabs and bullets), background-check
reports (Checkr-style report JSON) and reference reports, student information systems and LMS exports (Canvas
submission comments, Moodle web-service results and CSV gradebooks, PowerSchool CSV), school enrolment forms,
court filings with pleading line numbers, e-discovery load files (Concordance DAT with þ text qualifiers and the
DC4 field delimiter, ® for line breaks; Relativity field exports; privilege logs), contracts and real-estate
closing documents, government and benefits forms (visa and residence applications, unemployment claims, tax
authority letters), notary journals, e-signature envelopes (DocuSign envelope/tab JSON, Adobe Sign events,
certificates of completion), scanned-form OCR (Textract-style key/value blocks and flat OCR text) and the agent's
own messages to users in 28 languages with labels in the user's language. About a third is JSON carried
(`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit, printed 4-6-5/4-6-4 or in
fours; IBANs, ISO 13616 and the SWIFT IBAN registry's BBAN structures for 22 countries (MOD 97-10), in electronic
and paper (fours) form; SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not 0000); phones, the
national numbering plans (NANP: NPA/NXX 2-9, no N11, no 555; Ofcom: 07 mobiles, 020/029/01xx geographic, outside
the drama ranges; ARCEP: 01-05 geographic and 06/07 mobile, outside the fiction ranges; BNetzA: 015x/016x/017x
mobiles and area codes, DIN 5008 print forms; TRAI/DoT: 6-9 mobiles and STD codes) with each country's context
words, some in the +CC forms; AWS keys, IAM's AKIA/ASIA ids
and 40-character secrets; Slack, Discord, Teams (webhookb2), Power Automate (`sig=`), Google Chat (`token=`),
Zapier and Mattermost webhook URLs as their docs print them (the secret is the token segment or query value only);
Stripe `whsec_` signing secrets and `sk_live_`/`sk_test_`/`rk_live_` keys; ADO.NET, ODBC, JDBC, Azure Storage
(`AccountKey=`), Azure Service Bus (`SharedAccessKey=`) and URI connection strings (the secret is the password or
key only); JWT (RFC 7519/7515) as LTI 1.3 `id_token`s, DocuSign JWT-grant assertions and Bearer tokens; HTTP Basic
(RFC 7617, Greenhouse Harvest's key-as-username form) and Bearer (RFC 6750); session cookies (Moodle, PHP, Java,
ASP.NET, Express `connect.sid`, Rails); PEM PKCS#8/SEC1 and OpenSSH Ed25519 keys (the secret is the base64 body);
TOTP seeds (RFC 4648 base32 in Google Authenticator's Key Uri Format, RFC 6238) and printed setup keys; recovery
codes (GitHub's 5-5 hex, BitLocker's 48-digit key with each group divisible by 11, 1Password's A3 Secret Key,
Login.gov personal keys, Microsoft 5x5 codes); provider tokens by their documented prefixes: GitHub `ghp_`/`gho_`/
`ghs_` (CRC32 checksum) and `github_pat_`, Slack `xoxb-`/`xoxp-`/`xapp-`, OpenAI `sk-proj-`/`sk-svcacct-`, SendGrid
`SG.` (22.43), Google `AIza` (39 characters); disguised secrets (zero-width and soft-hyphen characters inside,
full-width forms, %-encoding, JSON `\\u` escapes written raw). National ids (outside the target): Spanish DNI/NIE
(mod 23 letter), Brazilian CPF (two mod 11 digits), French NIR (97 - n mod 97 key), Italian codice fiscale (the
odd/even check letter, DM 23/12/1976), Swedish personnummer (Luhn over ten digits), Finnish henkilötunnus (mod 31
character), Norwegian fødselsnummer (two mod 11 digits), Canadian SIN (Luhn).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, a key's base64 body, one recovery code). Disguised values are
the secret as written, disguise included. Near misses are what people-process records hold that is neither secret
nor personal: element ids, CSS selectors and XPath of form fields, OCR bounding boxes and page pixel sizes,
timestamps (epoch milliseconds included), request and trace ids, cache-busting and SRI hashes, CSRF field names
without values, placeholders and format hints, masked values, product versions, public bodies' and businesses'
published service numbers, Luhn-invalid reference numbers, order and receipt numbers, parcel tracking numbers (UPU
S10 with its check digit), court case, docket and Bates numbers, course codes, statute and form references,
envelope ids, ISBNs of set texts: none of them identifies a person or opens anything.
"""

from __future__ import annotations

import base64
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

SEED = 32
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "fr_nir", "it_codice_fiscale", "se_personnummer", "fi_hetu",
                            "no_fodselsnummer", "ca_sin"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
UPNUM = string.ascii_uppercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"
PW_SYMBOLS = "!#$%&*+-.=?@^_~"


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


# ---- people, places and the user's language -------------------------------------------------------------------

FIRST = ["Amara", "Lukas", "Sofía", "Chen", "Priya", "Jonas", "Fatima", "Mateo", "Aiko", "Olu", "Ingrid", "Rahul",
         "Zeynep", "Tomás", "Élodie", "Kwame", "Anja", "Diego", "Mei", "Aleksander", "Noor", "Sven", "Camille", "Ivan"]
LAST = ["Okafor", "Schneider", "García", "Wang", "Iyer", "Lindqvist", "Haddad", "Rossi", "Tanaka", "Adeyemi",
        "Novak", "Dubois", "Kowalski", "Yılmaz", "Fernandes", "Nguyen", "Murphy", "Virtanen", "Berg", "Sharma"]
ORGS = ["Northgate Unified School District", "Lakeview Community College", "Harrow & Finch LLP", "Cityworks Staffing",
        "Riverside County Workforce Board", "Maple Leaf Academy", "Brightpath Charter Schools",
        "Kessler Title & Escrow",
        "Oakridge University", "Department of Labor Claims Unit", "Meridian Talent Partners", "St. Brendan's College"]
ROLES = ["Senior Data Analyst", "Paralegal", "Grade 5 Teacher", "Registrar", "Benefits Caseworker", "Recruiter",
         "Escrow Officer", "Software Engineer II", "Admissions Counselor", "Court Clerk", "HR Business Partner"]

LANGS: dict[str, tuple[str, dict[str, str]]] = {
    "en": ("I found this in the applicant's file:", {
        "password": "Password", "email": "Email", "phone": "Phone", "card": "Card number", "iban": "IBAN",
        "key": "API key", "code": "Code"}),
    "fr": ("Voici ce que j'ai trouvé dans le dossier du candidat :", {
        "password": "Mot de passe", "email": "Courriel", "phone": "Téléphone", "card": "Numéro de carte",
        "iban": "IBAN", "key": "Clé API", "code": "Code"}),
    "de": ("Das habe ich in der Bewerbungsakte gefunden:", {
        "password": "Passwort", "email": "E-Mail", "phone": "Telefon", "card": "Kartennummer", "iban": "IBAN",
        "key": "API-Schlüssel", "code": "Code"}),
    "es": ("Esto es lo que encontré en el expediente del solicitante:", {
        "password": "Contraseña", "email": "Correo electrónico", "phone": "Teléfono", "card": "Número de tarjeta",
        "iban": "IBAN", "key": "Clave de API", "code": "Código"}),
    "it": ("Ecco cosa ho trovato nel fascicolo del candidato:", {
        "password": "Password", "email": "E-mail", "phone": "Telefono", "card": "Numero di carta", "iban": "IBAN",
        "key": "Chiave API", "code": "Codice"}),
    "pt": ("Encontrei isto no processo do candidato:", {
        "password": "Senha", "email": "E-mail", "phone": "Telefone", "card": "Número do cartão", "iban": "IBAN",
        "key": "Chave de API", "code": "Código"}),
    "nl": ("Dit vond ik in het dossier van de sollicitant:", {
        "password": "Wachtwoord", "email": "E-mail", "phone": "Telefoon", "card": "Kaartnummer", "iban": "IBAN",
        "key": "API-sleutel", "code": "Code"}),
    "pl": ("Oto, co znalazłem w aktach kandydata:", {
        "password": "Hasło", "email": "E-mail", "phone": "Telefon", "card": "Numer karty", "iban": "IBAN",
        "key": "Klucz API", "code": "Kod"}),
    "sv": ("Det här hittade jag i den sökandes akt:", {
        "password": "Lösenord", "email": "E-post", "phone": "Telefon", "card": "Kortnummer", "iban": "IBAN",
        "key": "API-nyckel", "code": "Kod"}),
    "da": ("Dette fandt jeg i ansøgerens sag:", {
        "password": "Adgangskode", "email": "E-mail", "phone": "Telefon", "card": "Kortnummer", "iban": "IBAN",
        "key": "API-nøgle", "code": "Kode"}),
    "nb": ("Dette fant jeg i søkerens mappe:", {
        "password": "Passord", "email": "E-post", "phone": "Telefon", "card": "Kortnummer", "iban": "IBAN",
        "key": "API-nøkkel", "code": "Kode"}),
    "fi": ("Löysin tämän hakijan asiakirjoista:", {
        "password": "Salasana", "email": "Sähköposti", "phone": "Puhelin", "card": "Kortin numero", "iban": "IBAN",
        "key": "API-avain", "code": "Koodi"}),
    "cs": ("Toto jsem našel ve spisu uchazeče:", {
        "password": "Heslo", "email": "E-mail", "phone": "Telefon", "card": "Číslo karty", "iban": "IBAN",
        "key": "Klíč API", "code": "Kód"}),
    "ro": ("Iată ce am găsit în dosarul candidatului:", {
        "password": "Parolă", "email": "E-mail", "phone": "Telefon", "card": "Numărul cardului", "iban": "IBAN",
        "key": "Cheie API", "code": "Cod"}),
    "hu": ("Ezt találtam a jelentkező aktájában:", {
        "password": "Jelszó", "email": "E-mail", "phone": "Telefon", "card": "Kártyaszám", "iban": "IBAN",
        "key": "API-kulcs", "code": "Kód"}),
    "tr": ("Başvuru sahibinin dosyasında bunu buldum:", {
        "password": "Şifre", "email": "E-posta", "phone": "Telefon", "card": "Kart numarası", "iban": "IBAN",
        "key": "API anahtarı", "code": "Kod"}),
    "el": ("Αυτό βρήκα στον φάκελο του υποψηφίου:", {
        "password": "Κωδικός πρόσβασης", "email": "Email", "phone": "Τηλέφωνο", "card": "Αριθμός κάρτας",
        "iban": "IBAN", "key": "Κλειδί API", "code": "Κωδικός"}),
    "ru": ("Вот что я нашёл в деле кандидата:", {
        "password": "Пароль", "email": "Эл. почта", "phone": "Телефон", "card": "Номер карты", "iban": "IBAN",
        "key": "API-ключ", "code": "Код"}),
    "uk": ("Ось що я знайшов у справі кандидата:", {
        "password": "Пароль", "email": "Ел. пошта", "phone": "Телефон", "card": "Номер картки", "iban": "IBAN",
        "key": "Ключ API", "code": "Код"}),
    "ar": ("هذا ما وجدته في ملف المتقدم:", {
        "password": "كلمة المرور", "email": "البريد الإلكتروني", "phone": "الهاتف", "card": "رقم البطاقة",
        "iban": "رقم الآيبان", "key": "مفتاح API", "code": "الرمز"}),
    "he": ("זה מה שמצאתי בתיק המועמד:", {
        "password": "סיסמה", "email": "דואר אלקטרוני", "phone": "טלפון", "card": "מספר כרטיס", "iban": "IBAN",
        "key": "מפתח API", "code": "קוד"}),
    "hi": ("आवेदक की फ़ाइल में मुझे यह मिला:", {
        "password": "पासवर्ड", "email": "ईमेल", "phone": "फ़ोन", "card": "कार्ड नंबर", "iban": "IBAN",
        "key": "API कुंजी", "code": "कोड"}),
    "ja": ("応募者のファイルにこれがありました：", {
        "password": "パスワード", "email": "メール", "phone": "電話番号", "card": "カード番号", "iban": "IBAN",
        "key": "APIキー", "code": "コード"}),
    "zh": ("我在申请人的档案中找到了以下内容：", {
        "password": "密码", "email": "电子邮件", "phone": "电话", "card": "卡号", "iban": "IBAN", "key": "API 密钥",
        "code": "代码"}),
    "ko": ("지원자 파일에서 다음을 찾았습니다:", {
        "password": "비밀번호", "email": "이메일", "phone": "전화번호", "card": "카드 번호", "iban": "IBAN",
        "key": "API 키", "code": "코드"}),
    "vi": ("Tôi tìm thấy thông tin này trong hồ sơ ứng viên:", {
        "password": "Mật khẩu", "email": "Email", "phone": "Điện thoại", "card": "Số thẻ", "iban": "IBAN",
        "key": "Khóa API", "code": "Mã"}),
    "id": ("Saya menemukan ini di berkas pelamar:", {
        "password": "Kata sandi", "email": "Email", "phone": "Telepon", "card": "Nomor kartu", "iban": "IBAN",
        "key": "Kunci API", "code": "Kode"}),
    "th": ("ฉันพบข้อมูลนี้ในแฟ้มของผู้สมัคร:", {
        "password": "รหัสผ่าน", "email": "อีเมล", "phone": "โทรศัพท์", "card": "หมายเลขบัตร", "iban": "IBAN",
        "key": "คีย์ API", "code": "รหัส"}),
}
"""Language code -> (the agent's lead-in sentence, field labels in that language)."""


def _lang(i: int) -> str:
    """The user's language for case `i`, cycling all of LANGS."""
    return list(LANGS)[i % len(LANGS)]


def _label(i: int, field: str) -> str:
    """`field`'s label in case `i`'s language, with that language's colon."""
    code = _lang(i)
    colon = "：" if code in ("ja", "zh") else " : " if code == "fr" else ": "
    return LANGS[code][1][field] + colon


def _lead(rng: random.Random, snip: str) -> str:
    """The agent's lead-in in the language whose distinctive labels the snippet uses, else in a random one."""
    shared = {"IBAN", "Email", "E-mail", "Code", "Telefon", "Password", "Kod", "Kode", "Код", "Пароль"}
    for lead, labels in LANGS.values():
        if any(label in snip for label in labels.values() if label not in shared):
            return lead
    return rng.choice(list(LANGS.values()))[0]


def _name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _ascii(text: str) -> str:
    """A name folded to the ASCII an email local part uses."""
    table = str.maketrans("áéíóúñçıİşğüöåäøÉ", "aeiounciisguoaaoE")
    return text.translate(table).lower()


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _gid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _date(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _ts(rng: random.Random) -> str:
    return f"{_date(rng)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"


# ---- text carriers --------------------------------------------------------------------------------------------

def t_resume_pdf(rng: random.Random, snip: str, _secret: str) -> str:
    """CV text as a PDF extractor gives it: hyphenated breaks, a two-column header run together, a page footer."""
    name = _name(rng)
    return (f"{name.upper()}    {rng.choice(ROLES)}\nPROFESSIONAL EXPERI-\nENCE\n{rng.choice(ORGS)}\t"
            f"{rng.randint(2014, 2020)} – present\n• Reduced time-to-hire by {rng.randint(10, 40)}% through struc-\n"
            f"tured interviews\nCONTACT\n{snip}\nLinkedIn: linkedin.com/in/{_ascii(name).replace(' ', '-')}\n"
            f"\x0c— {rng.randint(1, 2)} / 2 —")


def t_resume_docx(rng: random.Random, snip: str, _secret: str) -> str:
    """CV text from a DOCX: tabs between columns, bullet glyphs, a references section."""
    return (f"{_name(rng)}\n{rng.choice(ROLES)}\n\nSKILLS\t\tExcel · SQL · Workday · Spanish (C1)\n\nEDUCATION\n"
            f"\tB.A., {rng.choice(ORGS)}, {rng.randint(2005, 2019)}\n\nREFERENCES AND CONTACT DETAILS\n\t{snip}\n")


def t_scorecard(rng: random.Random, snip: str, _secret: str) -> str:
    """An ATS interview scorecard as the interviewer typed it."""
    return (f"Scorecard — {rng.choice(ROLES)} (req #{rng.randint(1000, 9999)})\nInterviewer: {_name(rng)}\n"
            f"Overall: {rng.choice(['Strong Yes', 'Yes', 'Mixed', 'No'])}\nKey take-aways: clear communicator, "
            f"asked good questions.\nPrivate note: {snip}\n")


def t_recruiter_email(rng: random.Random, snip: str, _secret: str) -> str:
    """A recruiter's email thread with a quoted reply."""
    return (f"From: {_name(rng)} <talent@{rng.choice(['cityworks.example', 'meridian.example'])}>\n"
            f"Subject: Re: Next steps for the {rng.choice(ROLES)} role\n\nHi, thanks for sending this over.\n\n"
            f"> On {_date(rng)}, the candidate wrote:\n> {snip}\n> Best regards\n")


def t_reference_report(rng: random.Random, snip: str, _secret: str) -> str:
    """A background-check or reference report, section by section."""
    return (f"BACKGROUND SCREENING REPORT\nOrder: BG-{rng.randint(100000, 999999)}    Package: Standard + MVR\n"
            f"Subject: {_name(rng)}\nCounty criminal search: CLEAR\nEmployment verification: VERIFIED\n"
            f"Reference ({_name(rng)}, former manager): \"Reliable, would rehire.\"\nSubject details: {snip}\n")


def t_moodle_csv(rng: random.Random, snip: str, _secret: str) -> str:
    """A Moodle gradebook/user CSV export with the value in a quoted free-text column."""
    cell = snip.replace('"', '""')
    return (f"First name,Last name,ID number,Institution,Quiz 1 (Real),Notes\n{rng.choice(FIRST)},{rng.choice(LAST)},"
            f"{rng.randint(10000, 99999)},{rng.choice(ORGS)},{rng.randint(40, 100)}.00,\"{cell}\"\n")


def t_powerschool_csv(rng: random.Random, snip: str, _secret: str) -> str:
    """A PowerSchool student export, tab separated, with the guardian contact column."""
    return (f"Student_Number\tLastFirst\tGrade_Level\tSchoolID\tGuardian_Contact\n{rng.randint(100000, 999999)}\t"
            f"{rng.choice(LAST)}, {rng.choice(FIRST)}\t{rng.randint(0, 12)}\t{rng.randint(100, 999)}\t{snip}\n")


def t_enrolment_form(rng: random.Random, snip: str, _secret: str) -> str:
    """A school enrolment form as filled, field lines with underscores."""
    return (f"{rng.choice(ORGS)} — STUDENT ENROLMENT FORM {rng.randint(2026, 2027)}/{rng.randint(27, 28)}\n"
            f"Child's legal name: {_name(rng)}____________ Date of birth: __/__/____\n"
            f"Parent/guardian 1: {_name(rng)}\n{snip}\nMedical conditions / allergies: none known\n"
            f"☐ I consent to photographs being used in the school newsletter\n")


def t_ediscovery_dat(rng: random.Random, snip: str, secret: str) -> str:
    """A Concordance DAT load file: þ text qualifiers, DC4 (0x14) delimiters, ® for the text's line breaks."""
    body = snip if "\n" in secret else snip.replace("\n", "®")
    bates = f"ACME{rng.randint(1, 99999):07d}"
    row = ["BEGBATES", "ENDBATES", "CUSTODIAN", "DATESENT", "EXTRACTEDTEXT"]
    val = [bates, bates, _name(rng), _date(rng), body]
    return "\x14".join(f"þ{c}þ" for c in row) + "\r\n" + "\x14".join(f"þ{c}þ" for c in val) + "\r\n"


def t_privilege_log(rng: random.Random, snip: str, _secret: str) -> str:
    """A privilege log table, pipe separated, with the description column."""
    return (f"| Priv ID | Date | Author | Privilege | Description |\n|---|---|---|---|---|\n"
            f"| PRIV-{rng.randint(1, 999):04d} | {_date(rng)} | {_name(rng)} | AC/WP | Email forwarding: {snip} |\n")


def t_court_filing(rng: random.Random, snip: str, _secret: str) -> str:
    """Pleading-paper text with line numbers down the margin, an exhibit quoted."""
    return (f"1  UNITED STATES DISTRICT COURT\n2  {rng.choice(['NORTHERN', 'CENTRAL', 'EASTERN'])} DISTRICT OF "
            f"CALIFORNIA\n3  Case No. {rng.randint(2, 5)}:25-cv-{rng.randint(1000, 9999):05d}\n4  DECLARATION OF "
            f"{_name(rng).upper()}\n5  I, the undersigned, declare: Exhibit {rng.randint(1, 30)} is a true copy "
            f"of the message,\n6  which reads in relevant part: {snip}\n7  I declare under penalty of perjury.\n")


def t_closing_doc(rng: random.Random, snip: str, _secret: str) -> str:
    """Real-estate closing instructions from the title company."""
    return (f"{rng.choice(ORGS)}\nCLOSING / WIRING INSTRUCTIONS — File No. "
            f"{rng.randint(20, 26)}-{rng.randint(10000, 99999)}\nProperty: {rng.randint(10, 9999)} "
            f"{rng.choice(['Elm', 'Harbor', 'Ridge', 'Quarry'])} St.\n"
            f"Buyer: {_name(rng)}\n{snip}\nCall to verify before wiring. We never change instructions by email.\n")


def t_contract(rng: random.Random, snip: str, _secret: str) -> str:
    """An employment contract clause with a notice provision."""
    return (f"EMPLOYMENT AGREEMENT\n{rng.randint(10, 14)}. NOTICES. Notices under this Agreement shall be given in "
            f"writing to the Employee, {_name(rng)}, at: {snip}\n{rng.randint(15, 19)}. GOVERNING LAW. This Agreement"
            f" is governed by the laws of the State of {rng.choice(['New York', 'Illinois', 'Texas'])}.\n")


def t_visa_application(rng: random.Random, snip: str, _secret: str) -> str:
    """A visa / residence permit application, part by part."""
    return (f"APPLICATION FOR A RESIDENCE PERMIT\nPart 2. Information about you\n2.1 Family name: "
            f"{rng.choice(LAST).upper()}\n2.2 Given name(s): {rng.choice(FIRST)}\n2.3 Nationality: "
            f"{rng.choice(['NGA', 'IND', 'BRA', 'TUR', 'PHL'])}\nPart 3. Contact details\n{snip}\n"
            f"Part 4. Sponsor: {rng.choice(ORGS)}\n")


def t_unemployment_claim(rng: random.Random, snip: str, _secret: str) -> str:
    """An unemployment insurance claim summary from the state workforce agency."""
    return (f"UNEMPLOYMENT INSURANCE — INITIAL CLAIM\nClaim effective date: {_date(rng)}\nLast employer: "
            f"{rng.choice(ORGS)}\nReason for separation: lack of work\nWeekly benefit amount: "
            f"${rng.randint(200, 700)}.00\nClaimant information\n{snip}\n")


def t_tax_letter(rng: random.Random, snip: str, _secret: str) -> str:
    """A tax authority letter about a return, with the taxpayer's details block."""
    return (f"Notice CP{rng.randint(10, 99)}{rng.choice(['', 'A'])}  Tax year {rng.randint(2022, 2025)}\n"
            f"We changed your return. You owe ${rng.randint(100, 9000)}.{rng.randint(10, 99)}.\n"
            f"Taxpayer: {_name(rng)}\n{snip}\nIf you agree, you don't need to reply.\n")


def t_notary_journal(rng: random.Random, snip: str, _secret: str) -> str:
    """A notary journal entry."""
    return (f"NOTARY JOURNAL — Entry {rng.randint(1, 500)}\nDate/time: {_ts(rng)}\nDocument: "
            f"{rng.choice(['Power of Attorney', 'Affidavit', 'Deed of Trust', 'I-9 authorized representative'])}\n"
            f"Signer: {_name(rng)}; ID: driver licence, examined\nSigner contact: {snip}\nFee: $15.00\n")


def t_esign_certificate(rng: random.Random, snip: str, _secret: str) -> str:
    """An e-signature certificate of completion / audit trail."""
    return (f"Certificate Of Completion\nEnvelope Id: {_gid(rng).upper()}\nStatus: Completed\n"
            f"Signer Events\t{_name(rng)}\tSent: {_ts(rng)}\tViewed: {_ts(rng)}\n"
            f"Signature Adoption: Pre-selected Style\tUsing IP Address: 203.0.113.{rng.randint(1, 254)}\n"
            f"Envelope custom field: {snip}\n")


def t_ocr_scan(rng: random.Random, snip: str, _secret: str) -> str:
    """Flat OCR text of a scanned form: stray marks, broken boxes."""
    return (f"|| FORM {rng.choice(['DS-160', 'I-9', 'W-4', 'SF-86', 'UC-1'])} (Rev. {rng.randint(1, 12):02d}/2025) ||"
            f"\n[ ] Yes [X] No    Page {rng.randint(1, 6)}\n_ _ _ _ _ _ _ _\n{snip}\n"
            f"S1gnature: ~~~~~~~~   Date: {rng.randint(1, 12)}/{rng.randint(1, 28)}/2026\n")


def t_agent_message(rng: random.Random, snip: str, _secret: str) -> str:
    """The agent's message to the user in the user's language (the labels' language when the snippet has some)."""
    return f"{_lead(rng, snip)}\n\n{snip}\n"


def t_lms_comment(rng: random.Random, snip: str, _secret: str) -> str:
    """A Canvas/Moodle discussion or submission comment as plain text."""
    return (f"{_name(rng)} commented on \"Assignment {rng.randint(1, 12)}: Reflective essay\" "
            f"({rng.randint(1, 9)} hours ago):\n{snip}\nReply · Mark as read\n")


TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "resume_pdf": t_resume_pdf, "resume_docx": t_resume_docx, "scorecard": t_scorecard,
    "recruiter_email": t_recruiter_email, "reference_report": t_reference_report, "moodle_csv": t_moodle_csv,
    "powerschool_csv": t_powerschool_csv, "enrolment_form": t_enrolment_form, "ediscovery_dat": t_ediscovery_dat,
    "privilege_log": t_privilege_log, "court_filing": t_court_filing, "closing_doc": t_closing_doc,
    "contract": t_contract, "visa_application": t_visa_application, "unemployment_claim": t_unemployment_claim,
    "tax_letter": t_tax_letter, "notary_journal": t_notary_journal, "esign_certificate": t_esign_certificate,
    "ocr_scan": t_ocr_scan, "agent_message": t_agent_message, "lms_comment": t_lms_comment,
}


# ---- JSON carriers --------------------------------------------------------------------------------------------

def j_greenhouse(rng: random.Random, snip: str, _secret: str) -> str:
    """A Greenhouse Harvest candidate object with the value in a note."""
    return _dump({"id": rng.randint(10 ** 7, 10 ** 8), "first_name": rng.choice(FIRST), "last_name": rng.choice(LAST),
                  "company": rng.choice(ORGS), "title": rng.choice(ROLES), "created_at": _ts(rng),
                  "applications": [{"id": rng.randint(10 ** 7, 10 ** 8), "status": "active"}],
                  "notes": [{"body": snip, "visibility": "private"}], "tags": ["referral"]})


def j_lever(rng: random.Random, snip: str, _secret: str) -> str:
    """A Lever opportunity with the value in the candidate's headline field."""
    return _dump({"data": {"id": _gid(rng), "name": _name(rng), "headline": snip, "stage": "phone-screen",
                           "origin": "sourced", "createdAt": rng.randint(1_700_000_000_000, 1_800_000_000_000),
                           "archived": None}})


def j_workday(rng: random.Random, snip: str, _secret: str) -> str:
    """A Workday Recruiting job application (SOAP response rendered as JSON)."""
    return _dump({"Job_Application_Data": {"Job_Requisition_Reference": {"ID": f"R-{rng.randint(10000, 99999)}"},
                                           "Personal_Data": {"Name_Detail": _name(rng), "Additional_Info": snip},
                                           "Application_Date": _date(rng)}})


def j_checkr(rng: random.Random, snip: str, _secret: str) -> str:
    """A background-check report object."""
    return _dump({"object": "report", "id": pick(rng, HEX, 24), "status": "clear", "package": "driver_pro",
                  "candidate_id": pick(rng, HEX, 24), "adjudication": None, "comment": snip,
                  "completed_at": _ts(rng)})


def j_canvas(rng: random.Random, snip: str, _secret: str) -> str:
    """A Canvas submission with a comment."""
    return _dump({"id": rng.randint(10 ** 5, 10 ** 7), "assignment_id": rng.randint(1000, 99999), "grade": "B+",
                  "workflow_state": "graded", "submission_comments": [{"author_name": _name(rng), "comment": snip,
                                                                       "created_at": _ts(rng)}]})


def j_moodle_ws(rng: random.Random, snip: str, _secret: str) -> str:
    """A Moodle web-service result (core_user_get_users) with a custom profile field."""
    return _dump({"users": [{"id": rng.randint(2, 90000), "fullname": _name(rng), "idnumber": str(rng.randint(1, 9999)),
                             "customfields": [{"shortname": "notes", "value": snip}]}], "warnings": []})


def j_powerschool(rng: random.Random, snip: str, _secret: str) -> str:
    """A PowerSchool API student record with a contact note."""
    return _dump({"student": {"id": rng.randint(1000, 99999), "local_id": rng.randint(100000, 999999),
                              "name": {"first_name": rng.choice(FIRST), "last_name": rng.choice(LAST)},
                              "contact_info": {"note": snip},
                              "school_enrollment": {"grade_level": rng.randint(0, 12)}}})


def j_docusign(rng: random.Random, snip: str, _secret: str) -> str:
    """A DocuSign envelope with the value in a text tab."""
    return _dump({"envelopeId": _gid(rng), "status": "completed", "emailSubject": "Please sign: Offer letter",
                  "recipients": {"signers": [{"name": _name(rng), "recipientId": "1", "tabs": {"textTabs": [
                      {"tabLabel": "applicant_details", "value": snip}]}}]}})


def j_adobe_sign(rng: random.Random, snip: str, _secret: str) -> str:
    """An Adobe Acrobat Sign agreement event."""
    return _dump({"events": [{"type": "ESIGNED", "date": _ts(rng), "participantEmail": None,
                              "description": snip, "agreementId": pick(rng, URLSAFE, 44)}]})


def j_relativity(rng: random.Random, snip: str, _secret: str) -> str:
    """A Relativity document export with fields."""
    fields = {"Control Number": f"REL{rng.randint(1, 99999):08d}", "Custodian": _name(rng), "Extracted Text": snip}
    return _dump({"ArtifactID": rng.randint(10 ** 6, 10 ** 7), "Fields": fields})


def j_benefits_api(rng: random.Random, snip: str, _secret: str) -> str:
    """A benefits or unemployment claim record from an agency API."""
    return _dump({"claimId": f"UI-{rng.randint(10 ** 6, 10 ** 7)}", "status": "pending_adjudication",
                  "claimant": {"name": _name(rng), "remarks": snip}, "filedAt": _ts(rng)})


def j_tool_result(rng: random.Random, snip: str, _secret: str) -> str:
    """An MCP tools/call result the agent received."""
    return _dump({"jsonrpc": "2.0", "id": rng.randint(1, 999), "result": {"content": [{"type": "text", "text": snip}],
                                                                           "isError": False}})


def j_chat(rng: random.Random, snip: str, _secret: str) -> str:
    """A chat transcript where the agent answers the user in their language."""
    answer = f"{_lead(rng, snip)} {snip}"
    return _dump({"messages": [{"role": "user", "content": "?"}, {"role": "assistant", "content": answer}]})


def j_textract(rng: random.Random, snip: str, _secret: str) -> str:
    """Textract-style key/value blocks of a scanned form."""
    return _dump({"Blocks": [{"BlockType": "KEY_VALUE_SET", "EntityTypes": ["VALUE"], "Text": snip,
                              "Confidence": round(rng.uniform(80, 99.9), 3),
                              "Geometry": {"BoundingBox": {"Left": round(rng.random(), 4),
                                                           "Top": round(rng.random(), 4)}}}]})


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "greenhouse": j_greenhouse, "lever": j_lever, "workday": j_workday, "checkr": j_checkr, "canvas": j_canvas,
    "moodle_ws": j_moodle_ws, "powerschool": j_powerschool, "docusign": j_docusign, "adobe_sign": j_adobe_sign,
    "relativity": j_relativity, "benefits_api": j_benefits_api, "tool_result": j_tool_result, "chat": j_chat,
    "textract": j_textract,
}


# ---- values: credentials --------------------------------------------------------------------------------------

WORDS = ["harbor", "violet", "granite", "pelican", "meadow", "cobalt", "lantern", "thistle", "orbit", "saffron",
         "quartz", "willow", "ember", "falcon", "juniper", "tundra", "marble", "cactus", "nimbus", "walnut"]


def _password(rng: random.Random, i: int) -> str:
    """A password as people and generators make them: random, word+year+symbol, or a passphrase."""
    if i % 3 == 0:
        return pick(rng, ALNUM, 3) + pick(rng, ALNUM + PW_SYMBOLS, rng.randint(8, 16)) + rng.choice(PW_SYMBOLS)
    if i % 3 == 1:
        word = rng.choice(WORDS).capitalize()
        return f"{word}{rng.randint(1970, 2026)}{rng.choice(PW_SYMBOLS)}{pick(rng, ALNUM, rng.randint(0, 3))}"
    return "-".join(rng.choice(WORDS) for _ in range(rng.randint(3, 5))) + str(rng.randint(1, 99))


def _user(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)[0].lower()}{_ascii(rng.choice(LAST))}{rng.randint(1, 99)}"


def v_password(rng: random.Random, i: int) -> Value:
    pw = _password(rng, i)
    user = _user(rng)
    styles = [
        ("candidate_portal", f"Temporary password for the candidate portal: {pw}"),
        ("lang_label", f"{_label(i, 'password')}{pw}"),
        ("sis_reset", f"SIS account reset for student {rng.randint(100000, 999999)}. New password: {pw} "
                      "(change it at first login)"),
        ("pdf_open", f"The transcript PDF is encrypted; the document password is {pw}"),
        ("kv", f"login={user}  password={pw}"),
        ("wifi", f"Exam hall Wi-Fi — network Campus-Exams, passphrase: {pw}"),
        ("efiling", f"Court e-filing account {user}@efile — pass: {pw}"),
        ("portal_creds", f"Username: {user} / Pwd: {pw}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, pw, snip, False


def _akid(rng: random.Random, prefix: str = "AKIA") -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (temporary) and 16 base32 capitals."""
    return prefix + pick(rng, BASE32, 16)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    secret = pick(rng, B64, 40)
    akid = _akid(rng, "ASIA" if i % 5 == 3 else "AKIA")
    styles = [
        ("credentials_file", f"[ediscovery-upload]\naws_access_key_id = {akid}\naws_secret_access_key = {secret}\n"),
        ("env", f"export AWS_ACCESS_KEY_ID={akid}\nexport AWS_SECRET_ACCESS_KEY={secret}"),
        ("beside_id", f"Vendor S3 drop for the production set: key {akid} / {secret}"),
        ("sts", f"AccessKeyId: {akid}\nSecretAccessKey: {secret}\nSessionToken: (omitted)"),
        ("cli_prompt", f"AWS Access Key ID [None]: {akid}\nAWS Secret Access Key [None]: {secret}\n"
                       "Default region name [None]: us-east-1"),
        ("boto3", f"s3 = boto3.client('s3', aws_access_key_id='{akid}', aws_secret_access_key='{secret}')"),
        ("labelled", f"AWS secret access key: {secret}"),
        ("csv_download", f"Access key ID,Secret access key\n{akid},{secret}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, secret, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    """Webhook URLs as their providers print them; the secret is the token part only."""
    kinds = i % 7
    if kinds == 0:
        token = pick(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, UPNUM, 8)}/B{pick(rng, UPNUM, 10)}/{token}"
        style = "slack"
    elif kinds == 1:
        token = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19 - 1)}/{token}"
        style = "discord"
    elif kinds == 2:
        token = pick(rng, HEX, 32)
        url = (f"https://{rng.choice(['northgateusd', 'harrowfinch', 'oakridgeu'])}.webhook.office.com/webhookb2/"
               f"{_gid(rng)}@{_gid(rng)}/IncomingWebhook/{token}/{_gid(rng)}")
        style = "teams"
    elif kinds == 3:
        token = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={token}")
        style = "power_automate"
    elif kinds == 4:
        token = pick(rng, URLSAFE, 43)
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
               f"{pick(rng, URLSAFE, 33)}&token={quote(token, safe='')}")
        style = "google_chat"
    elif kinds == 5:
        token = pick(rng, LOWNUM, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{rng.randint(10 ** 6, 10 ** 8)}/{token}/"
        style = "zapier"
    else:
        token = pick(rng, LOWNUM, 26)
        url = f"https://chat.{rng.choice(['oakridge.edu', 'harrowfinch.law', 'cityworks.io'])}/hooks/{token}"
        style = "mattermost"
    lead = rng.choice(["New-applicant alerts post to", "Integration URL:", "Webhook for the hiring channel →",
                       "Notify the registrar's channel via", "WEBHOOK_URL="])
    return style, token, f"{lead} {url}", False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = "whsec_" + pick(rng, ALNUM, 32)
    styles = [
        ("env", f"STRIPE_WEBHOOK_SECRET={secret}"),
        ("cli", f"> Ready! Your webhook signing secret is {secret} (^C to quit)"),
        ("labelled", f"Signing secret for the application-fee endpoint: {secret}"),
        ("yaml", f"stripe:\n  endpoint_secret: \"{secret}\"\n  tolerance: 300"),
        ("code", f"event = stripe.Webhook.construct_event(payload, sig_header, '{secret}')"),
    ]
    style, snip = styles[i % len(styles)]
    return style, secret, snip, False


def _db_password(rng: random.Random) -> str:
    """A password that URIs carry without percent-encoding (RFC 3986 unreserved characters)."""
    return pick(rng, ALNUM, 4) + pick(rng, ALNUM + "-._~", rng.randint(8, 20))


def v_connection_string(rng: random.Random, i: int) -> Value:
    """Connection strings of the SIS, ATS and e-discovery stacks; the secret is the password or key only."""
    pw = _db_password(rng)
    host = rng.choice(["sis-db.internal", "ats-prod.cluster-c9x.eu-west-1.rds.amazonaws.com", "10.20.4.17",
                       "relativity-sql01", "lms-replica.school.local"])
    user = rng.choice(["sis_app", "greenhouse_sync", "moodle", "reviewer", "ps_reporting"])
    styles = [
        ("postgres_uri", f"DATABASE_URL=postgresql://{user}:{pw}@{host}:5432/sis"),
        ("mysql_uri", f"mysql://{user}:{pw}@{host}:3306/moodle?charset=utf8mb4"),
        ("mongodb_srv", f"mongodb+srv://{user}:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/ats"),
        ("adonet", f"Server={host};Database=EDDS;User Id={user};Password={pw};TrustServerCertificate=True;"),
        ("jdbc", f"jdbc:sqlserver://{host}:1433;databaseName=PowerSchool;user={user};password={pw};encrypt=true"),
        ("odbc", f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:{host},1433;Uid={user};Pwd={pw};"),
        ("redis", f"REDIS_URL=redis://:{pw}@{host}:6379/0"),
        ("amqp", f"amqps://{user}:{pw}@{host}:5671/claims"),
    ]
    if i % 10 == 8:
        pw = base64.b64encode(rng.randbytes(64)).decode()
        return "azure_storage", pw, (f"DefaultEndpointsProtocol=https;AccountName=scansarchive{rng.randint(1, 99)};"
                                     f"AccountKey={pw};EndpointSuffix=core.windows.net"), False
    if i % 10 == 9:
        pw = base64.b64encode(rng.randbytes(32)).decode()
        return "service_bus", pw, (f"Endpoint=sb://claims-{pick(rng, LOWER, 5)}.servicebus.windows.net/;"
                                   f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={pw}"), False
    style, snip = styles[i % len(styles)]
    return style, pw, snip, False


def _generic_key(rng: random.Random, i: int) -> tuple[str, str]:
    """(provider, key) for keys that carry no documented prefix and are known only by their label."""
    options = [
        ("greenhouse_harvest", pick(rng, HEX, 32)),
        ("lever", pick(rng, ALNUM, 48)),
        ("checkr", pick(rng, HEX, 40)),
        ("canvas", f"{rng.randint(1, 25000)}~{pick(rng, ALNUM, 64)}"),
        ("docusign_secret", _gid(rng)),
        ("powerschool_client_secret", _gid(rng)),
        ("workday_client_secret", pick(rng, LOWNUM, 56)),
        ("generic", pick(rng, ALNUM, rng.randint(28, 44))),
    ]
    return options[i % len(options)]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    provider, key = _generic_key(rng, i)
    labels = {
        "greenhouse_harvest": "Harvest API key: ", "lever": "Lever API key = ", "checkr": "Checkr secret key: ",
        "canvas": "Canvas access token: ", "docusign_secret": "DocuSign secret key: ",
        "powerschool_client_secret": "Client Secret: ", "workday_client_secret": "Workday API client secret: ",
        "generic": "X-Api-Key: "}
    label = _label(i, "key") if i % 2 else labels[provider]
    return provider, key, f"{label}{key}", False


def v_jwt(rng: random.Random, i: int) -> Value:
    """JWTs (RFC 7519): LTI 1.3 launches, DocuSign JWT-grant assertions, API bearer tokens."""
    now = rng.randint(1_767_000_000, 1_790_000_000)
    if i % 3 == 0:
        header = {"alg": "RS256", "typ": "JWT", "kid": pick(rng, ALNUM, 12)}
        claims = {"iss": "https://canvas.instructure.com", "sub": _gid(rng),
                  "aud": str(rng.randint(10 ** 13, 10 ** 14)), "exp": now + 300, "iat": now,
                  "nonce": pick(rng, HEX, 16),
                  "https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiResourceLinkRequest"}
        sig = rng.randbytes(256)
    elif i % 3 == 1:
        header = {"alg": "RS256", "typ": "JWT"}
        claims = {"iss": _gid(rng), "sub": _gid(rng), "aud": "account-d.docusign.com", "iat": now, "exp": now + 3600,
                  "scope": "signature impersonation"}
        sig = rng.randbytes(256)
    else:
        header = {"alg": "HS256", "typ": "JWT"}
        claims = {"sub": str(rng.randint(1, 10 ** 6)), "role": "caseworker", "iat": now, "exp": now + 900}
        sig = rng.randbytes(32)
    token = ".".join([b64url(json.dumps(header, separators=(",", ":")).encode()),
                      b64url(json.dumps(claims, separators=(",", ":")).encode()), b64url(sig)])
    styles = [
        ("lti_form_post", f"POST /lti/launch\nContent-Type: application/x-www-form-urlencoded\n\nid_token={token}"
                          f"&state={pick(rng, HEX, 16)}"),
        ("jwt_grant", f"grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion={token}"),
        ("bearer", f"Authorization: Bearer {token}"),
        ("labelled", f"session token: {token}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, token, snip, False


def v_auth_header(rng: random.Random, i: int) -> Value:
    """HTTP credentials (RFC 7617 Basic, RFC 6750 Bearer); the secret is the credential after the scheme."""
    if i % 3 == 0:
        cred = base64.b64encode(f"{pick(rng, HEX, 32)}:".encode()).decode()
        snip = f"curl -H 'Authorization: Basic {cred}' https://harvest.greenhouse.io/v1/candidates"
        return "harvest_basic", cred, snip, False
    if i % 3 == 1:
        cred = base64.b64encode(f"{_user(rng)}:{_db_password(rng)}".encode()).decode()
        return "basic", cred, f"GET /ws/v1/district/student HTTP/1.1\nAuthorization: Basic {cred}", False
    cred = pick(rng, URLSAFE, rng.choice([40, 43, 64]))
    return "bearer_opaque", cred, f"-H \"Authorization: Bearer {cred}\" -H \"Accept: application/json\"", False


COOKIES: list[tuple[str, Callable[[random.Random], str]]] = [
    ("MoodleSession", lambda r: pick(r, LOWNUM, 26)),
    ("PHPSESSID", lambda r: pick(r, LOWNUM, 32)),
    ("JSESSIONID", lambda r: pick(r, "0123456789ABCDEF", 32)),
    ("ASP.NET_SessionId", lambda r: pick(r, "abcdefghijklmnopqrstuvwxyz012345", 24)),
    ("connect.sid", lambda r: "s%3A" + pick(r, URLSAFE, 32) + "." + pick(r, B64, 43)),
    ("_greenhouse_session", lambda r: pick(r, ALNUM, 48) + "--" + pick(r, HEX, 40)),
    ("canvas_session", lambda r: pick(r, URLSAFE, 90)),
]


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, make = COOKIES[i % len(COOKIES)]
    value = make(rng)
    if i % 2:
        return name, value, f"Set-Cookie: {name}={value}; path=/; Secure; HttpOnly; SameSite=Lax", False
    return name, value, f"Cookie: lang=en; {name}={value}; _ga=GA1.2.{rng.randint(10 ** 8, 10 ** 9)}.1767225600", False


def _pem_body(pem: str) -> str:
    """The base64 lines between a PEM block's BEGIN and END lines (RFC 7468): the part that is the key."""
    return "\n".join(line for line in pem.strip().splitlines() if not line.startswith("-----"))


def _private_pem(rng: random.Random, i: int) -> tuple[str, str]:
    """(style, PEM text) of a private key drawn from `rng`: PKCS#8 P-256, SEC1 P-256, PKCS#8 or OpenSSH Ed25519."""
    if i % 4 in (0, 1):
        key = ec.derive_private_key(rng.getrandbits(255) + 1, ec.SECP256R1())
        fmt = serialization.PrivateFormat.PKCS8 if i % 4 == 0 else serialization.PrivateFormat.TraditionalOpenSSL
        pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
        return ("pkcs8_ec" if i % 4 == 0 else "sec1_ec"), pem
    seed = rng.randbytes(32)
    key = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
    if i % 4 == 2:
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
        return "pkcs8_ed25519", pem
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), f"sftp@{rng.choice(['checkr', 'relativity'])}".encode())
    text = base64.b64encode(blob).decode()
    lines = "\n".join(text[k:k + 70] for k in range(0, len(text), 70))
    return "openssh", f"-----BEGIN OPENSSH PRIVATE KEY-----\n{lines}\n-----END OPENSSH PRIVATE KEY-----\n"


def v_private_key(rng: random.Random, i: int) -> Value:
    style, pem = _private_pem(rng, i)
    lead = rng.choice(["SFTP key for the background-check vendor drop:", "SAML signing key for the SIS SSO:",
                       "Key for the DocuSign JWT grant (do not share):", "Production-set delivery key:"])
    return style, _pem_body(pem), f"{lead}\n{pem}", False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    """TOTP seeds (RFC 6238) in base32 (RFC 4648): Key Uri Format, setup keys in fours, labelled."""
    seed = base64.b32encode(rng.randbytes(rng.choice([10, 20]))).decode().rstrip("=")
    issuer = rng.choice(["Workday", "Greenhouse", "Canvas", "Login.gov", "DocuSign", "PowerSchool"])
    who = f"{_ascii(rng.choice(FIRST))}@{rng.choice(['oakridge.edu', 'harrowfinch.law'])}"
    if i % 3 == 0:
        return "otpauth", seed, f"otpauth://totp/{issuer}:{quote(who)}?secret={seed}&issuer={issuer}&digits=6", False
    if i % 3 == 1:
        shown = group(seed.lower(), 4, " ")
        return "setup_key", shown, f"Can't scan? Enter this setup key in your authenticator app: {shown}", False
    return "labelled", seed, f"{issuer} 2FA secret (TOTP): {seed}", False


def _bitlocker(rng: random.Random) -> str:
    """A BitLocker recovery password: eight groups of six digits, each a multiple of 11 below 720896."""
    return "-".join(f"{rng.randint(0, 65535) * 11:06d}" for _ in range(8))


def v_recovery_code(rng: random.Random, i: int) -> Value:
    """Account recovery secrets; the secret is one code."""
    kind = i % 5
    if kind == 0:
        code = f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}"
        snip = f"GitHub recovery codes (keep safe):\n{code}\n{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}"
        return "github", code, snip, False
    if kind == 1:
        code = _bitlocker(rng)
        return "bitlocker", code, f"Student laptop {pick(rng, UPNUM, 7)} — BitLocker recovery key: {code}", False
    if kind == 2:
        alpha = "23456789ABCDEFGHJKLMNPQRSTVWXYZ"
        code = "-".join(["A3", pick(rng, alpha, 6), pick(rng, alpha, 6)] + [pick(rng, alpha, 5) for _ in range(4)])
        return "onepassword", code, f"Emergency Kit — Secret Key: {code}", False
    if kind == 3:
        crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
        code = "-".join(pick(rng, crockford, 4) for _ in range(4))
        return "logingov", code, f"Your Login.gov personal key is {code}. Store it somewhere safe.", False
    code = "-".join(pick(rng, "BCDFGHJKMPQRTVWXY2346789", 5) for _ in range(5))
    return "microsoft", code, f"{_label(i, 'code')}{code} (Microsoft account recovery code)", False


# ---- values: provider tokens by documented prefix -------------------------------------------------------------

def _github(rng: random.Random, i: int) -> str:
    if i % 4 == 3:
        return f"github_pat_{pick(rng, UPNUM, 22)}_{pick(rng, ALNUM, 59)}"
    return crc_token(rng, ["ghp_", "gho_", "ghs_"][i % 4])


def _slack(rng: random.Random, i: int) -> str:
    if i % 3 == 0:
        return f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    if i % 3 == 1:
        return f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}"
    return f"xapp-1-A{pick(rng, UPNUM, 10)}-{digits(rng, 13)}-{pick(rng, HEX, 64)}"


def _openai(rng: random.Random, i: int) -> str:
    prefix = "sk-svcacct-" if i % 4 == 3 else "sk-proj-"
    return prefix + pick(rng, URLSAFE, rng.choice([48, 74, 120, 156]))


def _stripe(rng: random.Random, i: int) -> str:
    prefix = ["sk_live_", "rk_live_", "sk_test_"][i % 3]
    return prefix + pick(rng, ALNUM, rng.choice([24, 99]))


PROVIDER_MAKERS: dict[str, Callable[[random.Random, int], str]] = {
    "github_token": _github,
    "slack_token": _slack,
    "openai_key": _openai,
    "sendgrid_key": lambda r, _i: f"SG.{pick(r, URLSAFE, 22)}.{pick(r, URLSAFE, 43)}",
    "google_api_key": lambda r, _i: "AIza" + pick(r, URLSAFE, 35),
    "stripe_key": _stripe,
}
PROVIDER_ENV = {"github_token": "GITHUB_TOKEN", "slack_token": "SLACK_BOT_TOKEN", "openai_key": "OPENAI_API_KEY",
                "sendgrid_key": "SENDGRID_API_KEY", "google_api_key": "GOOGLE_MAPS_API_KEY",
                "stripe_key": "STRIPE_SECRET_KEY"}


def provider(kind: str) -> Callable[[random.Random, int], Value]:
    """The value maker of a prefixed provider token, in five contexts of this domain."""
    def make(rng: random.Random, i: int) -> Value:
        token = PROVIDER_MAKERS[kind](rng, i)
        styles = [
            ("env", f"{PROVIDER_ENV[kind]}={token}"),
            ("bare_in_note", f"the resume-screening script still has {token} hard-coded, please rotate"),
            ("lang_label", f"{_label(i, 'key')}{token}"),
            ("config", f"integrations:\n  {kind.split('_')[0]}:\n    token: {token}\n    enabled: true"),
            ("header", f"curl -H 'Authorization: Bearer {token}' https://api.example.org/v1/applicants"),
        ]
        style, snip = styles[i % len(styles)]
        return style, token, snip, False
    return make


# ---- values: disguised secrets --------------------------------------------------------------------------------

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def _fullwidth(text: str) -> str:
    """ASCII 0x21-0x7E as their full-width forms (U+FF01-U+FF5E)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _u_escape(rng: random.Random, text: str) -> str:
    """Some characters as JSON `\\uXXXX` escapes, written raw (as a log of a JSON body shows them)."""
    return "".join(f"\\u{ord(c):04x}" if rng.random() < 0.4 else c for c in text)


def v_disguised(rng: random.Random, i: int) -> Value:
    """A password or token with a disguise inside; the secret is the disguised string as written."""
    base = [_password(rng, 0), crc_token(rng, "ghp_"), "sk_live_" + pick(rng, ALNUM, 24), pick(rng, B64, 40)][i % 4]
    how = i % 4 if i % 8 < 4 else (i + 1) % 4
    label = _label(i, "password" if i % 4 == 0 else "key")
    if how == 0:
        cut = rng.randint(3, len(base) - 3)
        secret = base[:cut] + rng.choice(INVISIBLE) + base[cut:]
        return "zero_width", secret, f"{label}{secret}", False
    if how == 1:
        secret = _fullwidth(base)
        return "fullwidth", secret, f"{label}{secret}", False
    if how == 2:
        secret = quote(base[:3], safe="") + "".join(f"%{ord(c):02X}" for c in base[3:6]) + quote(base[6:], safe="")
        return "percent", secret, f"https://portal.example.org/sso?user=intake&password={secret}&next=%2F", False
    secret = _u_escape(rng, base)
    if "\\u" not in secret:
        secret = f"\\u{ord(base[0]):04x}" + secret[1:]
    return "json_u", secret, f'{{"credential": "{secret}", "scope": "records.read"}}', True


# ---- values: personal data ------------------------------------------------------------------------------------

MAIL_DOMAINS = ["gmail.com", "outlook.com", "yahoo.co.uk", "web.de", "orange.fr", "gmx.de", "rediffmail.com",
                "icloud.com", "proton.me", "laposte.net", "hotmail.it", "student.uva.nl", "etu.unistra.fr",
                "alumni.ubc.ca", "mail.utoronto.ca", "uni-heidelberg.de"]


def v_email(rng: random.Random, i: int) -> Value:
    first, last = _ascii(rng.choice(FIRST)), _ascii(rng.choice(LAST))
    local = [f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}{rng.randint(1, 99)}",
             f"{first}.{last}+jobs", f"{last}.{first}{rng.randint(1980, 2008)}"][i % 5]
    addr = f"{local}@{rng.choice(MAIL_DOMAINS)}"
    if i % 11 == 10:
        addr = addr.upper()
    styles = [
        ("lang_label", f"{_label(i, 'email')}{addr}"),
        ("angle", f"{first.title()} {last.title()} <{addr}>"),
        ("mailto", f"Contact the applicant: mailto:{addr}?subject=Interview"),
        ("cv_header", f"{addr}  |  {rng.choice(['Lisbon', 'Pune', 'Leeds', 'Lyon', 'Toronto'])}  |  relocation ok"),
        ("guardian", f"Guardian email (primary): {addr}"),
        ("cc", f"cc: {addr}; records@{rng.choice(['oakridge.edu', 'northgate.k12.ca.us'])}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, addr, snip, False


NPAS = ["212", "312", "415", "617", "206", "303", "404", "512", "602", "713", "416", "604", "514", "403", "613", "902"]


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """(NPA, NXX, line) of the NANP: NXX 2-9 first, not N11, not 555."""
    while True:
        nxx = f"{rng.randint(2, 9)}{digits(rng, 2)}"
        if nxx[1:] != "11" and nxx != "555":
            return rng.choice(NPAS), nxx, digits(rng, 4)


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    npa, nxx, line = _nanp(rng)
    forms = [f"({npa}) {nxx}-{line}", f"{npa}-{nxx}-{line}", f"{npa}.{nxx}.{line}", f"+1 {npa} {nxx} {line}",
             f"1-{npa}-{nxx}-{line}", f"+1 ({npa}) {nxx}-{line}"]
    number = forms[i % len(forms)]
    context = rng.choice(["Cell:", "Mobile:", "Home phone", "Best number to reach me:", "Tél. cellulaire :",
                          "Emergency contact —", "Daytime phone:", _label(i, "phone").strip()])
    return f"form{i % len(forms)}", number, f"{context} {number}", False


def v_phone_uk(rng: random.Random, i: int) -> Value:
    """Ofcom's plan: 07 mobiles (not the 07700 900 drama range), 020 and 01xx geographic numbers."""
    if i % 2 == 0:
        while True:
            national = "07" + rng.choice("1234579") + digits(rng, 8)
            if not national.startswith("07700900"):
                break
        forms = [f"{national[:5]} {national[5:]}", f"+44 {national[1:5]} {national[5:]}", national,
                 f"+44 (0){national[1:5]} {national[5:8]} {national[8:]}"]
    else:
        code, size = rng.choice([("020", 8), ("0161", 7), ("0121", 7), ("0131", 7), ("0113", 7), ("01865", 6),
                                 ("01223", 6), ("029", 8)])
        sub = rng.choice("3456789" if code != "020" else "378") + digits(rng, size - 1)
        if code in ("020", "029"):
            forms = [f"{code} {sub[:4]} {sub[4:]}", f"+44 {code[1:]} {sub[:4]} {sub[4:]}", f"({code}) {sub}"]
        else:
            forms = [f"{code} {sub}", f"+44 {code[1:]} {sub}", f"({code}) {sub[:3]} {sub[3:]}"]
    number = forms[i // 2 % len(forms)]
    context = rng.choice(["Mobile:", "Tel:", "Home tel.", "Daytime telephone number:", "Mob", "Contact number:"])
    return ("mobile" if i % 2 == 0 else "geographic"), number, f"{context} {number}", False


ARCEP_FICTION = ("019900", "026191", "035301", "046571", "053649", "063998")


def v_phone_fr(rng: random.Random, i: int) -> Value:
    """ARCEP's plan: 01-05 geographic, 06/07 mobile; outside the ranges kept for fiction."""
    while True:
        national = "0" + rng.choice("1234567667") + digits(rng, 8)
        if not national.startswith(ARCEP_FICTION):
            break
    pairs = group(national, 2, " ")
    forms = [pairs, group(national, 2, "."), national, f"+33 {national[1]} {group(national[2:], 2, ' ')}",
             f"+33 (0){national[1]} {group(national[2:], 2, ' ')}", f"0033 {national[1:]}"]
    number = forms[i % len(forms)]
    context = rng.choice(["Tél. :", "Portable :", "Téléphone", "Mobile :", "Joignable au", "Tél. domicile :"])
    return f"form{i % len(forms)}", number, f"{context} {number}", False


DE_MOBILE = ["0151", "0152", "0157", "0159", "0160", "0162", "0163", "0170", "0171", "0172", "0173", "0175", "0176",
             "0177", "0178", "0179"]
DE_AREA = [("030", 8), ("040", 8), ("089", 8), ("069", 7), ("0221", 7), ("0211", 7), ("0711", 7), ("0341", 7),
           ("0351", 7), ("0511", 6)]


def v_phone_de(rng: random.Random, i: int) -> Value:
    """BNetzA's plan: 015x/016x/017x mobiles, area codes; DIN 5008 and older print forms."""
    if i % 2 == 0:
        prefix = rng.choice(DE_MOBILE)
        sub = str(rng.randint(2, 9)) + digits(rng, (8 if prefix.startswith("015") else rng.choice([7, 8])) - 1)
    else:
        prefix, size = rng.choice(DE_AREA)
        sub = str(rng.randint(2, 9)) + digits(rng, size - 1)
    forms = [f"{prefix} {sub}", f"+49 {prefix[1:]} {sub}", f"({prefix}) {sub}", f"{prefix}/{sub}",
             f"+49 (0){prefix[1:]} {sub}", f"{prefix} {sub[:-2]}-{sub[-2:]}"]
    number = forms[i // 2 % len(forms)]
    context = rng.choice(["Telefon:", "Tel.:", "Mobil:", "Handy:", "Rufnummer", "Erreichbar unter", "Mobilnummer:"])
    return ("mobile" if i % 2 == 0 else "landline"), number, f"{context} {number}", False


def v_phone_in(rng: random.Random, i: int) -> Value:
    """TRAI/DoT's plan: 10-digit mobiles from 6-9; STD code + subscriber landlines."""
    if i % 3 != 2:
        mob = str(rng.randint(6, 9)) + digits(rng, 9)
        forms = [f"{mob[:5]} {mob[5:]}", f"+91 {mob[:5]} {mob[5:]}", f"+91-{mob}", f"0{mob}", f"+91{mob}",
                 f"(+91) {mob}"]
        number, style = forms[i % len(forms)], "mobile"
    else:
        std = rng.choice(["11", "22", "80", "44", "33", "40", "20"])
        sub = str(rng.randint(2, 6)) + digits(rng, 7)
        number = [f"0{std}-{sub[:4]} {sub[4:]}", f"+91 {std} {sub[:4]} {sub[4:]}", f"0{std} {sub}"][i % 3]
        style = "landline"
    context = rng.choice(["Mobile No.:", "Mob:", "Contact No.", "मोबाइल:", "फ़ोन नंबर:", "Ph.", "Alternate number:"])
    return style, number, f"{context} {number}", False


def v_ssn(rng: random.Random, i: int) -> Value:
    """SSA rules: area 001-899 but 666, group 01-99, serial 0001-9999."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    compact = f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
    forms = [f"{compact[:3]}-{compact[3:5]}-{compact[5:]}", f"{compact[:3]} {compact[3:5]} {compact[5:]}", compact]
    number = forms[i % 3]
    context = rng.choice(["SSN:", "Social Security No.", "SS#", "Social Security number (for E-Verify):",
                          "Claimant SSN", "TIN/SSN:", "Applicant's SSN —"])
    return f"form{i % 3}", number, f"{context} {number}", False


TEST_CARDS = {"4242424242424242", "4111111111111111", "5555555555554444", "378282246310005", "6011111111111117",
              "4000056655665556", "5105105105105100", "371449635398431", "3566002020360505", "30569309025904"}


def _card(rng: random.Random, i: int) -> str:
    """A card number of ISO/IEC 7812 IIN ranges with its Luhn digit, never a published test number."""
    brands = [("4", 16), (str(rng.randint(51, 55)), 16), (str(rng.randint(2221, 2720)), 16),
              (rng.choice(["34", "37"]), 15), (rng.choice(["6011", "65", str(rng.randint(644, 649))]), 16),
              (str(rng.randint(3528, 3589)), 16), ("36", 14), ("62", 16)]
    prefix, length = brands[i % len(brands)]
    while True:
        body = prefix + digits(rng, length - len(prefix) - 1)
        number = body + luhn_digit(body)
        if number not in TEST_CARDS:
            return number


def v_card(rng: random.Random, i: int) -> Value:
    number = _card(rng, i)
    printed = [group_card(number, " "), group_card(number, "-"), number][i // 8 % 3]
    styles = [
        ("lang_label", f"{_label(i, 'card')}{printed}"),
        ("fee", f"Application fee paid by card {printed}, exp {rng.randint(1, 12):02d}/{rng.randint(27, 31)}"),
        ("ocr", f"CARD NUMBER {printed}   CVV ***"),
        ("background_fee", f"Charged the $45 screening fee to {printed}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, printed, snip, False


IBAN_STRUCTURES = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
                   "NL": "4a10n", "BE": "3n7n2n", "CH": "5n12c", "AT": "5n11n", "PL": "8n16n", "PT": "4n4n11n2n",
                   "IE": "4a6n8n", "SE": "3n16n1n", "DK": "4n9n1n", "NO": "4n6n1n", "FI": "3n11n", "LU": "3n13c",
                   "CZ": "4n6n10n", "HU": "3n4n1n15n1n", "RO": "4a16c", "TR": "5n1n16c", "AE": "3n16n"}


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_STRUCTURES)[i % len(IBAN_STRUCTURES)]
    body = bban(rng, IBAN_STRUCTURES[country])
    iban = country + iban_check(country, body) + body
    printed = group(iban, 4, " ") if i % 3 else iban
    context = rng.choice([_label(i, "iban"), "Salary account (IBAN): ", "Refund of tuition deposit to ",
                          "Benefit payments to account ", "Bankverbindung: IBAN ", "RIB / IBAN : ",
                          "Escrow refund — beneficiary IBAN: "])
    return country, printed, f"{context}{printed}", False


# ---- values: national ids (outside the target) ----------------------------------------------------------------

def _dob(rng: random.Random) -> tuple[int, int, int]:
    """(day, month, year) of a birth date between 1950 and 2008."""
    return rng.randint(1, 28), rng.randint(1, 12), rng.randint(1950, 2008)


def _es_dni(rng: random.Random, i: int) -> tuple[str, str]:
    """DNI: 8 digits and the mod 23 letter; NIE: X/Y/Z (0/1/2), 7 digits, the same letter."""
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if i % 3 == 2:
        head = rng.choice("XYZ")
        body = digits(rng, 7)
        return f"{head}{body}{letters[int(str('XYZ'.index(head)) + body) % 23]}", "NIE:"
    body = f"{rng.randint(1, 99999999):08d}"
    return f"{body}{letters[int(body) % 23]}", rng.choice(["DNI:", "DNI n.º", "Documento de identidad:"])


def _br_cpf(rng: random.Random, _i: int) -> tuple[str, str]:
    """CPF: nine digits and two mod 11 check digits (weights 10..2, then 11..2)."""
    while True:
        d = [int(c) for c in digits(rng, 9)]
        if len(set(d)) > 1:
            break
    for weight in (10, 11):
        d.append(sum(x * (weight - k) for k, x in enumerate(d)) * 10 % 11 % 10)
    s = "".join(map(str, d))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}", rng.choice(["CPF:", "CPF nº", "Cadastro de Pessoa Física:"])


def _fr_nir(rng: random.Random, _i: int) -> tuple[str, str]:
    """NIR: sex, year, month, département, commune, order, and the key 97 - (number mod 97)."""
    _day, month, year = _dob(rng)
    dept = rng.choice([d for d in range(1, 96) if d != 20])
    body = f"{rng.randint(1, 2)}{year % 100:02d}{month:02d}{dept:02d}{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}"
    key = 97 - int(body) % 97
    printed = f"{body[0]} {body[1:3]} {body[3:5]} {body[5:7]} {body[7:10]} {body[10:]} {key:02d}"
    return printed, rng.choice(["N° de sécurité sociale :", "NIR :", "Numéro INSEE :"])


CF_ODD = dict(zip("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                  [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12,
                   14, 16, 10, 22, 25, 24, 23], strict=True))


def _it_cf(rng: random.Random, _i: int) -> tuple[str, str]:
    """Codice fiscale: surname and name consonants, year, month letter, day (+40 for women), Belfiore code, and the
    check letter (odd positions by the DM 23/12/1976 table, even positions by value, sum mod 26)."""
    cons = "BCDFGLMNPRSTVZ"
    day, month, year = _dob(rng)
    day += 40 * rng.randint(0, 1)
    body = (pick(rng, cons, 3) + pick(rng, cons, 3) + f"{year % 100:02d}" + "ABCDEHLMPRST"[month - 1] + f"{day:02d}"
            + rng.choice(["H501", "F205", "L219", "F839", "A944", "G273"]))
    total = sum(CF_ODD[c] if k % 2 == 0 else (int(c) if c.isdigit() else ord(c) - 65) for k, c in enumerate(body))
    return body + chr(65 + total % 26), rng.choice(["Codice fiscale:", "C.F.", "Cod. fiscale:"])


def _se_pnr(rng: random.Random, i: int) -> tuple[str, str]:
    """Personnummer: YYMMDD, three digits, Luhn over the nine."""
    day, month, year = _dob(rng)
    nine = f"{year % 100:02d}{month:02d}{day:02d}{digits(rng, 3)}"
    number = nine + luhn_digit(nine)
    printed = f"{number[:6]}-{number[6:]}" if i % 2 else f"{year // 100}{number[:6]}-{number[6:]}"
    return printed, rng.choice(["Personnummer:", "Pers.nr", "Personnr:"])


def _fi_hetu(rng: random.Random, _i: int) -> tuple[str, str]:
    """Henkilötunnus: DDMMYY, century sign, 002-899, the mod 31 character."""
    day, month, year = _dob(rng)
    serial = rng.randint(2, 899)
    n = int(f"{day:02d}{month:02d}{year % 100:02d}{serial:03d}")
    sign = "-" if year < 2000 else "A"
    check = "0123456789ABCDEFHJKLMNPRSTUVWXY"[n % 31]
    return f"{day:02d}{month:02d}{year % 100:02d}{sign}{serial:03d}{check}", rng.choice(["Henkilötunnus:", "Hetu:"])


def _no_fnr(rng: random.Random, _i: int) -> tuple[str, str]:
    """Fødselsnummer: DDMMYY, three individual digits, two mod 11 check digits (redrawn when one would be 10)."""
    while True:
        day, month, year = _dob(rng)
        d = [int(c) for c in f"{day:02d}{month:02d}{year % 100:02d}{digits(rng, 3)}"]
        k1 = (11 - sum(w * x for w, x in zip([3, 7, 6, 1, 8, 9, 4, 5, 2], d, strict=True)) % 11) % 11
        k2 = (11 - sum(w * x for w, x in zip([5, 4, 3, 2, 7, 6, 5, 4, 3, 2], d + [k1], strict=True)) % 11) % 11
        if k1 < 10 and k2 < 10:
            return "".join(map(str, d)) + f"{k1}{k2}", rng.choice(["Fødselsnummer:", "Fødselsnr.", "F.nr:"])


def _ca_sin(rng: random.Random, i: int) -> tuple[str, str]:
    """SIN: nine digits with the Luhn digit; first digit 1-7 (9 is for temporary residents, also drawn)."""
    body = str(rng.choice([1, 2, 3, 4, 5, 6, 7, 9])) + digits(rng, 7)
    number = body + luhn_digit(body)
    printed = [f"{number[:3]} {number[3:6]} {number[6:]}", f"{number[:3]}-{number[3:6]}-{number[6:]}", number][i % 3]
    return printed, rng.choice(["SIN:", "Social Insurance Number:", "NAS :"])


IDS: dict[str, Callable[[random.Random, int], tuple[str, str]]] = {
    "es_dni": _es_dni, "br_cpf": _br_cpf, "fr_nir": _fr_nir, "it_codice_fiscale": _it_cf,
    "se_personnummer": _se_pnr, "fi_hetu": _fi_hetu, "no_fodselsnummer": _no_fnr, "ca_sin": _ca_sin,
}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    """The value maker of a national id, labelled in its country's words on a public-services form."""
    def make(rng: random.Random, i: int) -> Value:
        number, label = IDS[kind](rng, i)
        if i % 2:
            return "labelled", number, f"{label} {number}", False
        return "form_field", number, f"{label.rstrip(':')}\n[ {number} ]", False
    return make


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "auth_header": v_auth_header, "session_cookie": v_session_cookie, "private_key": v_private_key,
    "totp_seed": v_totp_seed, "recovery_code": v_recovery_code,
    **{k: provider(k) for k in PROVIDER_MAKERS}, **{k: national_id(k) for k in IDS}}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw); text carriers are cycled by
    their own count so that every one of them is used."""
    _style, secret, snip, raw_only = value
    if i % 3 == 0 and not raw_only:
        name = list(JSON_CARRIERS)[i // 3 % len(JSON_CARRIERS)]
        return name, JSON_CARRIERS[name](rng, snip, secret), True
    name = list(TEXT_CARRIERS)[(i - (i + 2) // 3) % len(TEXT_CARRIERS)]
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
    body = rng.choice("3456") + digits(rng, 14)
    return body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)


def _s10(rng: random.Random) -> str:
    """A UPU S10 parcel number: two letters, eight digits, the check digit (weights 8 6 4 2 3 5 9 7), country."""
    serial = digits(rng, 8)
    check = 11 - sum(w * int(c) for w, c in zip([8, 6, 4, 2, 3, 5, 9, 7], serial, strict=True)) % 11
    check = {10: 0, 11: 5}.get(check, check)
    return f"{rng.choice(['RR', 'CP', 'LX', 'EE'])}{serial}{check}{rng.choice(['GB', 'DE', 'FR', 'US', 'IN'])}"


def _isbn13(rng: random.Random) -> str:
    body = "978" + digits(rng, 9)
    check = (10 - sum(int(c) * (3 if k % 2 else 1) for k, c in enumerate(body)) % 10) % 10
    return f"{body[:3]}-{body[3]}-{body[4:8]}-{body[8:]}-{check}"


FIELDS = ["applicant_email", "phone_number", "ssn_last4", "guardian_phone", "password_confirm", "card_number",
          "iban_field", "api_key_input", "student_id", "date_of_birth"]
PUBLISHED_LINES = ["Social Security Administration: 1-800-772-1213", "IRS individual helpline: 800-829-1040",
                   "USCIS Contact Center: 800-375-5283", "HMRC income tax helpline: 0300 200 3300",
                   "Jobcentre Plus new claims: 0800 055 6688", "France Travail : 3949 (service gratuit + prix d'appel)",
                   "Bundesagentur für Arbeit (gebührenfrei): 0800 4 5555 00",
                   "Service Canada, Employment Insurance: 1-800-206-7218", "EPFO toll-free helpline: 1800-118-005"]

NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "element_id": lambda r: f'<input id="{r.choice(FIELDS)}-{r.randint(1, 40)}" name="candidate[{r.choice(FIELDS)}]"'
                            f' type="text" autocomplete="off" maxlength="{r.randint(4, 64)}">',
    "css_selector": lambda r: f"form#apply-{pick(r, HEX, 6)} .field--{r.choice(FIELDS).replace('_', '-')} > "
                              f"input:nth-child({r.randint(1, 9)}), div[data-testid=\"{r.choice(FIELDS)}\"]",
    "xpath": lambda r: f"//table[@id='gradebook']/tbody/tr[{r.randint(1, 400)}]/td[{r.randint(1, 20)}]"
                       f" | //input[@name='{r.choice(FIELDS)}']",
    "ocr_bbox": lambda r: f"word \"{r.choice(['Signature', 'Date', 'Telephone', 'Password'])}\" "
                          f"bbox=({r.randint(0, 2480)},{r.randint(0, 3508)},{r.randint(0, 2480)},"
                          f"{r.randint(0, 3508)}) conf={r.uniform(60, 99):.2f}",
    "page_size": lambda r: f"page {r.randint(1, 40)}: {r.choice(['2480x3508', '2550x3300', '1654x2339'])} px, "
                           f"{r.choice([150, 200, 300])} dpi, rotation {r.choice([0, 90, 180, 270])}, "
                           f"{r.randint(100000, 9999999)} bytes",
    "timestamp": lambda r: f"submitted_at={_ts(r)} epoch_ms={r.randint(1_767_000_000_000, 1_790_000_000_000)} "
                           f"tz=UTC{r.choice(['+05:30', '-08:00', '+01:00'])}",
    "request_id": lambda r: f"X-Request-Id: {_gid(r)}  traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01",
    "asset_hash": lambda r: f'<script src="/assets/apply.{pick(r, HEX, 8)}.js?v={r.randint(10 ** 9, 10 ** 10)}" '
                            f'integrity="sha384-{base64.b64encode(r.randbytes(48)).decode()}" crossorigin></script>',
    "csrf_field_name": lambda r: r.choice(['<input type="hidden" name="authenticity_token" value="">',
                                           '<input type="hidden" name="csrfmiddlewaretoken" value="{{ csrf_token }}">',
                                           'Form field "__RequestVerificationToken" is required',
                                           "X-CSRF-Token header missing (expected meta[name=csrf-token])",
                                           '<input type="hidden" name="sesskey" value="{{sesskey}}">']),
    "placeholder": lambda r: r.choice(["Password: ********", "Email: you@example.com", "SSN: XXX-XX-XXXX",
                                       "Enter your 16-digit card number", "IBAN: DE00 0000 0000 0000 0000 00",
                                       "API key: <paste your key here>", "Phone: (___) ___-____",
                                       "token: ${GREENHOUSE_API_KEY}", "Mot de passe : ••••••••"]),
    "masked": lambda r: r.choice([f"card ending •••• {digits(r, 4)}", f"SSN ***-**-{digits(r, 4)}",
                                  f"IBAN FR76 **** **** **** **** ***{digits(r, 1)} {digits(r, 2)}",
                                  f"phone +1 (***) ***-{digits(r, 4)}", f"a****@{r.choice(MAIL_DOMAINS)}",
                                  f"key sk_live_****{pick(r, ALNUM, 4)}"]),
    "version": lambda r: r.choice([f"Moodle {r.randint(3, 4)}.{r.randint(0, 5)}.{r.randint(0, 9)}+ (Build: "
                                   f"2025{r.randint(1, 12):02d}{r.randint(1, 28):02d})",
                                   f"Relativity Server 2024 ({r.randint(13, 14)}.{r.randint(0, 3)}."
                                   f"{r.randint(100, 999)}.1)",
                                   f"PowerSchool SIS {r.randint(23, 25)}.{r.randint(1, 12)}.0.0.{r.randint(100, 999)}",
                                   f"DocuSign eSignature REST API v2.1, SDK {r.randint(3, 6)}.{r.randint(0, 20)}.0"]),
    "service_number": lambda r: f"{r.choice(PUBLISHED_LINES)} (published helpline, {r.choice(['Mon-Fri', '8am-8pm'])})",
    "luhn_invalid": lambda r: f"Application reference {_luhn_bad(r)} — quote it in all correspondence",
    "order_number": lambda r: f"Order #{r.randint(10 ** 6, 10 ** 7)}-{r.randint(10, 99)}: transcript fee "
                              f"${r.randint(5, 30)}.00, receipt R{r.randint(10 ** 8, 10 ** 9)}",
    "tracking_number": lambda r: r.choice([f"Shipped via Royal Mail Tracked: {_s10(r)}",
                                           f"UPS 1Z{pick(r, UPNUM, 6)}{digits(r, 10)}",
                                           f"FedEx tracking {digits(r, 12)} (diploma mailing)"]),
    "case_number": lambda r: f"Case No. {r.randint(1, 5)}:{r.randint(20, 26)}-cv-{r.randint(100, 99999):05d}-"
                             f"{pick(r, UPPER, 3)}; Dkt. {r.randint(1, 300)}; Bates ACME{r.randint(1, 10 ** 6):07d}",
    "course_code": lambda r: f"CRN {r.randint(10000, 99999)} — {r.choice(['MATH', 'HIST', 'CHEM', 'LAW'])} "
                             f"{r.randint(100, 499)}-{r.randint(1, 9):03d}, Room B-{r.randint(100, 399)}, "
                             f"{r.choice(['3.0', '4.0'])} credits, GPA {r.uniform(2, 4):.2f}",
    "statute_form": lambda r: r.choice(["8 U.S.C. § 1101(a)(15)(H)(i)(b)", "Form I-129, Form DS-160, Form W-4 (2026)",
                                        "Art. L. 1232-2 du Code du travail", "§ 626 BGB; § 15 KSchG",
                                        "20 U.S.C. § 1232g (FERPA); 34 CFR Part 99", "Fed. R. Civ. P. 26(b)(5)(A)"])
                              + f", page {r.randint(1, 30)}",
    "envelope_id": lambda r: f"envelopeId {_gid(r)} documentId {r.randint(1, 9)} recipientId {r.randint(1, 9)}",
    "isbn": lambda r: f"Set text: ISBN {_isbn13(r)}, {r.randint(2, 9)}th edition, {r.randint(200, 900)} pp.",
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), every third inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                name = list(JSON_CARRIERS)[i // 3 % len(JSON_CARRIERS)]
                text = JSON_CARRIERS[name](rng, text, "")
            yield sort, text
