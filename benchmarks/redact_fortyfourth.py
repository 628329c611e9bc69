"""The forty-fourth blind redaction corpus: government, tax and public-benefits agents, what an agent that helps
citizens, a tax office or a benefits agency sees. Written from the formats' public specifications by someone who
read neither the detection rules nor the other corpora (the twenty-first only for its interface).

Carriers (the `form` head): IRS MeF acknowledgements and e-file transmission logs, W-2 and 1099 text, HMRC Making
Tax Digital API logs and Self Assessment preparer notes, ELSTER/ERiC returns and protocols, impots.gouv.fr
journals, e-government identity configs (login.gov, GOV.UK One Login and FranceConnect OpenID Connect clients,
eIDAS SAML traces, DigiD settings), benefits case records and caseworker notes, raw portal HTTP requests,
municipal permit records, court e-filing envelopes and docket exports, public-records (FOIA) requests and
letters, identity-verification events and logs, payroll exports (JSON and CSV), citizen chat transcripts (JSON
and text), the agent's tool calls and its messages to users, GOV.UK Notify sends, deployment env files and
council e-mail threads. About a third is JSON carried (`is_json`). The agent's messages to users come in 31
languages, with the labels in the user's language.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37, Discover
6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10), with the national check digits of Belgian, Spanish and French BBANs; SSNs,
the SSA's rules (area not 000/666/9xx, group not 00, serial not 0000); ITINs, the IRS's (9, then a group of 50-65,
70-88, 90-92 or 94-99); phones, the national numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT) with context
words in each country's languages, avoiding the NANP's 555 exchange and Ofcom's and BNetzA's drama ranges; AWS keys,
IAM's documented AKIA/ASIA ids and 40-character secrets; Slack, Discord, Teams, Power Automate, Google Chat,
Mattermost, Rocket.Chat and Zapier webhook URLs as their docs print them (the secret is the token-bearing segment or
query value only); Stripe `whsec_` signing secrets (the dashboard's and the CLI's) and `sk_live_`/`rk_live_` keys;
PostgreSQL/MySQL/MongoDB/Redis URIs, ADO.NET, JDBC, ODBC, Azure Storage and Service Bus connection strings (the
secret is the password or key only); JWT (RFC 7519, 7515) as login.gov, One Login and FranceConnect ID tokens; HTTP
Basic (RFC 7617) and Bearer (RFC 6750); OAuth token responses (RFC 6749, 5.1); PEM PKCS#8/SEC1 and OpenSSH private
keys (the secret is the base64 body, the armour lines are not); TOTP seeds in Google Authenticator's Key Uri Format
(RFC 4648 base32) and as setup keys; recovery codes (login.gov's personal key in Crockford base32, Microsoft's 5x5,
GitHub's, Google's backup codes); GOV.UK Notify API keys (`name-serviceid-secret`, the secret the last UUID);
SendGrid `SG.` keys; Twilio auth tokens beside their `AC` account SID. National ids (outside the target): German
Steuer-IdNr (ISO 7064 MOD 11,10), French NIR (97 - n mod 97 key, Corsica 2A/2B as 19/18), Italian codice fiscale
(odd/even tables, mod 26), Belgian national register number (97 - mod 97, 2 prefixed after 2000), Swedish
personnummer (Luhn), Finnish henkilötunnus (mod 31), Canadian SIN (Luhn), Dutch BSN (11-proof), UK National
Insurance number (HMRC's prefix rules, suffix A-D; no check digit).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, the secret UUID of a Notify key, a key's body). Disguised
secrets are written as they appear (a zero-width character inside, full-width forms, %-encoding, JSON \\u
escapes kept raw). Near misses are what this domain holds that is neither secret nor personal: element ids, CSS
selectors, XPath, coordinates of public sites, pixel sizes, timestamps, request and correlation ids,
cache-busting asset hashes, CSRF field names, placeholders and example hints, masked values, version strings,
agencies' published service lines, Luhn-invalid reference numbers, case/permit/order numbers, parcel tracking
numbers, form and line references, OMB and catalogue numbers, bank routing numbers (ABA 3-7-1, they name a bank),
businesses' EINs (they name an employer, not a person), amounts, document digests and the AWS docs' EXAMPLE keys:
none of them identifies a person or opens anything.
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
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 44
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"de_steuer_id", "fr_nir", "it_codice_fiscale", "be_nrn", "se_personnummer", "fi_hetu",
                            "ca_sin", "nl_bsn", "uk_nino"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
BASE32 = UPPER + "234567"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


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
Gen = Callable[[random.Random, int], Value]


# ---- small helpers --------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _date(rng: random.Random, year: int = 2024) -> str:
    return f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _stamp(rng: random.Random) -> str:
    return f"{_date(rng, 2025)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"


def _ref(rng: random.Random, head: str, n: int = 5) -> str:
    return f"{head}-{rng.choice(['2024', '2025'])}-{digits(rng, n)}"


CITIES = ["springfield", "riverton", "lakewood", "fairview", "greenville", "oakridge", "milton", "ashford"]


# ---- carriers: JSON -------------------------------------------------------------------------------------------

def c_mef_ack(rng: random.Random, snip: str, _s: str) -> str:
    """An IRS MeF acknowledgement as tax software logs it: the 20-character submission id (EFIN, year, day, 7)."""
    sid = f"{digits(rng, 6)}2025{rng.randint(1, 105):03d}{pick(rng, LOWER + string.digits, 7)}"
    return _dump({"SubmissionId": sid, "TaxYr": "2024", "ReturnTypeCd": rng.choice(["1040", "1040-SR", "1040-NR"]),
                  "AcceptanceStatusTxt": rng.choice(["Accepted", "Rejected"]), "PreparerNote": snip})


def c_hmrc_mtd(rng: random.Random, snip: str, _s: str) -> str:
    """A Making Tax Digital call as an agent's integration logs it: route template, fraud-prevention header."""
    return _dump({"request": {"method": "POST", "route": "/individuals/calculations/{nino}/self-assessment/2024-25",
                              "headers": {"Accept": "application/vnd.hmrc.7.0+json",
                                          "Gov-Client-Connection-Method": "WEB_APP_VIA_SERVER"}},
                  "correlationId": _uuid(rng), "status": rng.choice([202, 400, 403]), "agentLog": snip})


def c_elster(rng: random.Random, snip: str, _s: str) -> str:
    """An ERiC (ELSTER) submission result as a tax program stores it."""
    return _dump({"Verfahren": "ElsterErklaerung", "DatenArt": rng.choice(["ESt", "USt", "LStB"]),
                  "TransferTicket": pick(rng, LOWER + string.digits, 20), "Rueckgabe": {"Code": 0, "Text": snip}})


def c_impots(rng: random.Random, snip: str, _s: str) -> str:
    """A step of an impots.gouv.fr return as an assistant logs it."""
    return _dump({"service": "impots.gouv.fr", "demarche": rng.choice(["declaration_en_ligne", "gerer_prelevement"]),
                  "millesime": 2025, "etape": rng.randint(1, 6), "commentaire": snip})


OIDC_ISSUERS = ["https://secure.login.gov/", "https://oidc.account.gov.uk/", "https://idp.int.identitysandbox.gov/",
                "https://oidc.integration.account.gov.uk/", "https://app.franceconnect.gouv.fr/api/v1"]


def c_oidc(rng: random.Random, snip: str, _s: str) -> str:
    """An OpenID Connect relying-party config for a government IdP."""
    return _dump({"issuer": rng.choice(OIDC_ISSUERS), "scope": "openid email",
                  "client_id": f"urn:gov:gsa:openidconnect.profiles:sp:sso:{rng.choice(CITIES)}:permits",
                  "redirect_uri": f"https://permits.{rng.choice(CITIES)}.gov/auth/callback", "notes": snip})


def c_eidas(rng: random.Random, snip: str, _s: str) -> str:
    """An eIDAS connector trace: level of assurance, NameID format, a debug line."""
    cc = rng.choice(["de", "fr", "nl", "es", "it", "at", "be"])
    return _dump({"Issuer": f"https://eidas.{cc}.example-node.eu/EidasNode/ConnectorMetadata",
                  "LoA": "http://eidas.europa.eu/LoA/substantial",
                  "NameIDFormat": "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent", "trace": snip})


def c_digid(rng: random.Random, snip: str, _s: str) -> str:
    """A DigiD connection's settings as a municipality's portal keeps them."""
    return _dump({"digid": {"omgeving": rng.choice(["preprod", "productie"]),
                            "betrouwbaarheidsniveau": rng.choice(["Midden", "Substantieel", "Hoog"]),
                            "entityID": f"urn:nl-gemeente-{rng.choice(CITIES)}:portaal", "logregel": snip}})


def c_benefits(rng: random.Random, snip: str, _s: str) -> str:
    """A benefits case record with a caseworker's note."""
    return _dump({"caseId": _ref(rng, rng.choice(["UC", "SNAP", "MEDI", "CAF"]), 6),
                  "programme": rng.choice(["Universal Credit", "SNAP", "Medicaid", "Allocations familiales"]),
                  "notes": [{"author": f"worker-{rng.randint(100, 999)}", "at": _stamp(rng), "text": snip}]})


def c_permit(rng: random.Random, snip: str, _s: str) -> str:
    """A municipal permit from a licensing API."""
    return _dump({"permitNumber": _ref(rng, rng.choice(["BLD", "ELE", "FOOD", "SIGN"])),
                  "status": rng.choice(["Issued", "Under review", "Expired"]), "fee": f"{rng.randint(50, 900)}.00",
                  "remarks": snip})


def c_court(rng: random.Random, snip: str, _s: str) -> str:
    """A court e-filing envelope."""
    return _dump({"caseNumber": f"{rng.randint(1, 9)}:{rng.choice(['24', '25'])}-cv-{digits(rng, 5)}",
                  "envelopeId": int(digits(rng, 8)) + 10_000_000, "filingCode": rng.choice(["MOT", "ANS", "EXH"]),
                  "filerComments": snip})


def c_foia(rng: random.Random, snip: str, _s: str) -> str:
    """A public-records request in a tracking system."""
    return _dump({"requestId": _ref(rng, "FOIA"), "track": rng.choice(["simple", "complex"]),
                  "agency": rng.choice(["DOT", "County Clerk", "Planning Dept."]), "correspondence": snip})


def c_idv(rng: random.Random, snip: str, _s: str) -> str:
    """An identity-verification workflow event."""
    return _dump({"event": "idv.step", "step": rng.choice(["document_capture", "selfie_match", "phone_otp"]),
                  "session": _uuid(rng), "result": rng.choice(["pass", "retry"]), "detail": snip})


def c_payroll_json(rng: random.Random, snip: str, _s: str) -> str:
    """A payroll/withholding export row."""
    return _dump({"payPeriod": {"start": _date(rng), "end": _date(rng)}, "federalWithholding": rng.randint(80, 900),
                  "employee": {"number": f"E{digits(rng, 5)}", "memo": snip}})


def c_chat_json(rng: random.Random, snip: str, _s: str) -> str:
    """A citizen chat about refunds or appointments, as the helpdesk exports it."""
    ask = rng.choice(["When will my refund arrive?", "I need to move my appointment.", "Can you fill this for me?"])
    return _dump({"conversation": _uuid(rng), "channel": "web",
                  "messages": [{"role": "user", "text": ask}, {"role": rng.choice(["user", "assistant"]),
                                                               "text": snip}]})


def c_tool_call(rng: random.Random, snip: str, _s: str) -> str:
    """The agent's form-filling tool call."""
    return _dump({"type": "tool_use", "id": f"toolu_{pick(rng, ALNUM, 12)}", "name": "fill_form",
                  "input": {"form": rng.choice(["SA100", "1040", "W-4", "2042", "Antrag"]), "notes": snip}})


def c_notify(rng: random.Random, snip: str, _s: str) -> str:
    """A GOV.UK Notify send request with personalisation."""
    return _dump({"template_id": _uuid(rng), "reference": _ref(rng, "appt"),
                  "personalisation": {"details": snip}})


# ---- carriers: text -------------------------------------------------------------------------------------------

def c_efile_log(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_stamp(rng)} INFO mef.transmit batch={digits(rng, 6)} returns=1\n{_stamp(rng)} DEBUG {snip}\n"
            f"{_stamp(rng)} INFO mef.ack status=A")


def c_w2(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Form W-2 Wage and Tax Statement 2024\n1 Wages, tips, other compensation  {rng.randint(20, 180)},"
            f"{digits(rng, 3)}.00\n{snip}\n2 Federal income tax withheld  {rng.randint(1, 30)},{digits(rng, 3)}.00")


def c_1099(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Form 1099-{rng.choice(['NEC', 'INT', 'MISC'])} (Rev. January 2024)\nPAYER'S name: {rng.choice(CITIES)}"
            f" consulting LLC\n{snip}\n1 Nonemployee compensation ${rng.randint(600, 9000)}.00")


def c_sa_notes(rng: random.Random, snip: str, _s: str) -> str:
    return (f"HMRC Self Assessment - preparer notes (tax year 2024-25)\n- SA100 box {rng.randint(1, 20)} reviewed\n"
            f"- {snip}\n- payment on account due 31 July")


def c_elster_txt(rng: random.Random, snip: str, _s: str) -> str:
    return (f"ELSTER-Protokoll Einkommensteuererklärung 2024\nTransferticket: {pick(rng, LOWER + string.digits, 20)}"
            f"\n{snip}\nÜbermittlung erfolgreich.")


def c_impots_txt(rng: random.Random, snip: str, _s: str) -> str:
    return (f"impots.gouv.fr - journal de l'assistant - {_date(rng, 2025)}\nDéclaration 2042, case "
            f"{rng.choice(['1AJ', '1BJ', '7DB', '2TR'])} vérifiée\n{snip}")


def c_case_note(rng: random.Random, snip: str, _s: str) -> str:
    return (f"CASE NOTE - {rng.choice(['SNAP recertification', 'UC change of circumstances', 'Medicaid renewal'])}\n"
            f"Date: {_date(rng, 2025)}   Worker #{rng.randint(1000, 9999)}\n{snip}\nNext action: await documents.")


def c_http_raw(rng: random.Random, snip: str, _s: str) -> str:
    return (f"POST /api/v2/applications HTTP/1.1\nHost: portal.{rng.choice(CITIES)}.gov\nX-Request-Id: {_uuid(rng)}\n"
            f"{snip}\n")


def c_permit_txt(rng: random.Random, snip: str, _s: str) -> str:
    return (f"PERMIT RECORD | {_ref(rng, 'BLD')} | Status: Issued | Parcel {digits(rng, 3)}-{digits(rng, 2)}-"
            f"{digits(rng, 3)}\nApplicant remarks:\n{snip}")


def c_docket(rng: random.Random, snip: str, _s: str) -> str:
    return (f"| Date | Event | Text |\n|---|---|---|\n| {_date(rng)} | NOTE | {snip} |\n"
            f"| {_date(rng)} | ORDER | Hearing set |")


def c_foia_letter(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Re: Public records request {_ref(rng, 'PRR')}\n\nDear requester,\n\nThe responsive record reads:\n"
            f"\"{snip}\"\n\nSincerely,\nRecords Unit")


def c_idv_log(rng: random.Random, snip: str, _s: str) -> str:
    return f"[idv] session={_uuid(rng)} step=document_capture result=pass\n[idv] {snip}\n[idv] step=selfie_match"


def c_payroll_csv(rng: random.Random, snip: str, _s: str) -> str:
    return (f"# payroll export, period ending {_date(rng)}\nemp_no,gross,fed_wh,note\nE{digits(rng, 5)},"
            f"{rng.randint(900, 6000)}.00,{rng.randint(50, 900)}.00,{snip}")


def c_chat_txt(rng: random.Random, snip: str, _s: str) -> str:
    topic = rng.choice(["refund", "appointment", "permit"])
    return f"Citizen: hi, it's about my {topic}\nAgent: noted.\nCitizen: {snip}"


def c_agent_msg(rng: random.Random, snip: str, _s: str) -> str:
    return f"assistant -> user ({_stamp(rng)}):\n{snip}"


def c_env(rng: random.Random, snip: str, _s: str) -> str:
    return f"# {rng.choice(CITIES)} citizen portal\nAPP_ENV=production\nLOG_LEVEL=info\n{snip}\nFEATURE_APPTS=1"


def c_email(rng: random.Random, snip: str, _s: str) -> str:
    return (f"From: Licensing Team\nSubject: RE: your application {_ref(rng, 'LIC')}\n\nHello,\n\n{snip}\n\n"
            f"> On {_date(rng)} you wrote:\n> thanks")


Carrier = Callable[[random.Random, str, str], str]
JSON_CARRIERS: dict[str, Carrier] = {
    "mef_ack": c_mef_ack, "hmrc_mtd": c_hmrc_mtd, "elster_eric": c_elster, "impots_api": c_impots,
    "oidc_config": c_oidc, "eidas_trace": c_eidas, "digid_config": c_digid, "benefits_case": c_benefits,
    "permit_api": c_permit, "court_efile": c_court, "foia_api": c_foia, "idv_event": c_idv,
    "payroll_json": c_payroll_json, "chat_json": c_chat_json, "tool_call": c_tool_call, "notify_send": c_notify}
TEXT_CARRIERS: dict[str, Carrier] = {
    "efile_log": c_efile_log, "w2_text": c_w2, "form_1099": c_1099, "sa_notes": c_sa_notes,
    "elster_protokoll": c_elster_txt, "impots_journal": c_impots_txt, "case_note": c_case_note,
    "http_raw": c_http_raw, "permit_record": c_permit_txt, "court_docket": c_docket, "foia_letter": c_foia_letter,
    "idv_log": c_idv_log, "payroll_csv": c_payroll_csv, "chat_txt": c_chat_txt, "agent_msg": c_agent_msg,
    "env_file": c_env, "email_thread": c_email}


# ---- the agent's messages in the user's language --------------------------------------------------------------

MSG: dict[str, tuple[str, str, str, str, str, str]] = {
    # lang: (intro, password, API key, e-mail, card number, IBAN)
    "en": ("Here is what I entered on the form for you:", "Password", "API key", "Email", "Card number", "IBAN"),
    "de": ("Folgendes habe ich für Sie im Formular eingetragen:", "Passwort", "API-Schlüssel", "E-Mail",
           "Kartennummer", "IBAN"),
    "fr": ("Voici ce que j'ai saisi pour vous dans le formulaire :", "Mot de passe", "Clé API", "Courriel",
           "Numéro de carte", "IBAN"),
    "es": ("Esto es lo que introduje en el formulario por usted:", "Contraseña", "Clave de API",
           "Correo electrónico", "Número de tarjeta", "IBAN"),
    "it": ("Ecco cosa ho inserito nel modulo per lei:", "Password", "Chiave API", "E-mail", "Numero della carta",
           "IBAN"),
    "pt": ("Eis o que preenchi no formulário por si:", "Palavra-passe", "Chave de API", "E-mail",
           "Número do cartão", "IBAN"),
    "nl": ("Dit heb ik voor u op het formulier ingevuld:", "Wachtwoord", "API-sleutel", "E-mailadres",
           "Kaartnummer", "IBAN"),
    "pl": ("Oto dane, które wpisałem w formularzu:", "Hasło", "Klucz API", "E-mail", "Numer karty", "IBAN"),
    "sv": ("Det här fyllde jag i på blanketten åt dig:", "Lösenord", "API-nyckel", "E-post", "Kortnummer", "IBAN"),
    "da": ("Her er, hvad jeg udfyldte i formularen for dig:", "Adgangskode", "API-nøgle", "E-mail", "Kortnummer",
           "IBAN"),
    "nb": ("Dette fylte jeg inn i skjemaet for deg:", "Passord", "API-nøkkel", "E-post", "Kortnummer", "IBAN"),
    "fi": ("Täytin lomakkeeseen puolestasi seuraavat tiedot:", "Salasana", "API-avain", "Sähköposti",
           "Kortin numero", "IBAN"),
    "cs": ("Toto jsem za vás vyplnil do formuláře:", "Heslo", "Klíč API", "E-mail", "Číslo karty", "IBAN"),
    "hu": ("Ezt töltöttem ki Ön helyett az űrlapon:", "Jelszó", "API-kulcs", "E-mail", "Kártyaszám", "IBAN"),
    "ro": ("Iată ce am completat în formular pentru dumneavoastră:", "Parolă", "Cheie API", "E-mail",
           "Numărul cardului", "IBAN"),
    "el": ("Αυτά συμπλήρωσα για εσάς στη φόρμα:", "Κωδικός πρόσβασης", "Κλειδί API", "Email", "Αριθμός κάρτας",
           "IBAN"),
    "tr": ("Formda sizin için şunları doldurdum:", "Şifre", "API anahtarı", "E-posta", "Kart numarası", "IBAN"),
    "ru": ("Вот что я указал в форме за вас:", "Пароль", "Ключ API", "Эл. почта", "Номер карты", "IBAN"),
    "uk": ("Ось що я заповнив у формі за вас:", "Пароль", "Ключ API", "Ел. пошта", "Номер картки", "IBAN"),
    "ar": ("إليك ما أدخلته في النموذج نيابةً عنك:", "كلمة المرور", "مفتاح API", "البريد الإلكتروني", "رقم البطاقة",
           "رقم الآيبان"),
    "he": ("הנה מה שמילאתי עבורך בטופס:", "סיסמה", "מפתח API", "אימייל", "מספר כרטיס", "IBAN"),
    "hi": ("मैंने आपके लिए फ़ॉर्म में यह भरा है:", "पासवर्ड", "API कुंजी", "ईमेल", "कार्ड नंबर", "IBAN"),
    "bn": ("আপনার হয়ে ফর্মে আমি এগুলো পূরণ করেছি:", "পাসওয়ার্ড", "API কী", "ইমেল", "কার্ড নম্বর", "IBAN"),
    "ja": ("フォームに以下の内容を入力しました：", "パスワード", "APIキー", "メールアドレス", "カード番号", "IBAN"),
    "ko": ("양식에 다음 내용을 입력했습니다:", "비밀번호", "API 키", "이메일", "카드 번호", "IBAN"),
    "zh": ("我已为您在表格中填写以下内容：", "密码", "API 密钥", "电子邮箱", "卡号", "IBAN"),
    "vi": ("Đây là những gì tôi đã điền vào biểu mẫu cho bạn:", "Mật khẩu", "Khóa API", "Email", "Số thẻ", "IBAN"),
    "th": ("นี่คือข้อมูลที่ฉันกรอกในแบบฟอร์มให้คุณ:", "รหัสผ่าน", "คีย์ API", "อีเมล", "หมายเลขบัตร", "IBAN"),
    "id": ("Berikut yang saya isi di formulir untuk Anda:", "Kata sandi", "Kunci API", "Email", "Nomor kartu", "IBAN"),
    "tl": ("Ito ang inilagay ko sa form para sa iyo:", "Password", "API key", "Email", "Numero ng card", "IBAN"),
    "sw": ("Haya ndiyo niliyojaza kwenye fomu kwa niaba yako:", "Nenosiri", "Ufunguo wa API", "Barua pepe",
           "Namba ya kadi", "IBAN"),
}
MSG_FIELD = {"password": 1, "key": 2, "email": 3, "card": 4, "iban": 5}


def message(rng: random.Random, i: int, field: str, value: str) -> tuple[str, str]:
    """The agent's message to a user in the language of case `i` (each field starts the cycle through `MSG` at
    its own place, so that all languages come): (style, text)."""
    lang = list(MSG)[(i + 7 * MSG_FIELD[field]) % len(MSG)]
    row = MSG[lang]
    sep = "：" if lang in ("ja", "zh") else ":"
    return f"msg_{lang}", f"{row[0]}\n- {row[MSG_FIELD[field]]}{sep} {value}"


# ---- the issue's kinds ----------------------------------------------------------------------------------------

PW_LABELS = ["Password", "password", "Government Gateway password", "login.gov password", "Passwort",
             "ELSTER-Zertifikat Passwort", "Kennwort", "mot de passe", "mot de passe impots.gouv", "contraseña",
             "DigiD wachtwoord", "senha", "Passwort für Mein ELSTER", "pwd", "clave de acceso", "parola d'ordine"]
PW_WORDS = ["Harbor", "maple", "Lantern", "river", "Quokka", "saffron", "Tundra", "velvet", "Walnut", "ember",
            "Granite", "orchid", "Pelican", "cobalt", "Thistle", "meadow"]
PW_SYMBOLS = "!#$%&*+-.=?@^_~"
URL_PW = ALNUM + "-_.~"


def password_value(rng: random.Random, alphabet: str = "") -> str:
    """A password: two words, digits and a symbol, or 12-20 random characters of `alphabet`."""
    if alphabet:
        return pick(rng, alphabet, rng.randint(12, 20))
    if rng.random() < 0.5:
        return (rng.choice(PW_WORDS) + rng.choice(PW_SYMBOLS + "-") + rng.choice(PW_WORDS) + digits(rng, 2)
                + rng.choice(PW_SYMBOLS))
    return pick(rng, ALNUM + PW_SYMBOLS, rng.randint(12, 20))


def v_password(rng: random.Random, i: int) -> Value:
    if i % 4 == 0:
        pw = password_value(rng)
        style, snip = message(rng, i // 4, "password", pw)
        return style, pw, snip, False
    style = rng.choice(["label", "kv", "form_body", "cli", "yaml", "chat", "ssh_sftp", "reset"])
    pw = password_value(rng, URL_PW if style in ("form_body", "kv") else "")
    user = rng.choice(["jdoe", "m.garcia", "preparer01", "svc_payroll", "k.schmidt", "agent.ops"])
    snip = {"label": f"{rng.choice(PW_LABELS)}: {pw}",
            "kv": f"username={user}\npassword={pw}",
            "form_body": f"username={user}&password={pw}&remember=1",
            "cli": f"efile-cli login --user {user} --password '{pw}'",
            "yaml": f"gateway:\n  user: {user}\n  password: \"{pw}\"",
            "chat": f"ok my {rng.choice(['gateway', 'login.gov', 'ELSTER', 'DigiD'])} password is {pw} can you log in",
            "ssh_sftp": f"sftp to state payroll drop: user {user}, password {pw}",
            "reset": f"Temporary password for {user}: {pw} (change at first sign-in)"}[style]
    return style, pw, snip, False


def akia(rng: random.Random, head: str = "AKIA") -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (temporary) and 16 base32 characters."""
    return head + pick(rng, BASE32, 16)


def aws_secret_value(rng: random.Random) -> str:
    return pick(rng, B64, 40)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    s, kid = aws_secret_value(rng), akia(rng, rng.choice(["AKIA", "AKIA", "ASIA"]))
    style = rng.choice(["creds_file", "env", "csv", "pair", "sts_json", "boto", "cli_config"])
    snip = {"creds_file": f"[efile-archive]\naws_access_key_id = {kid}\naws_secret_access_key = {s}",
            "env": f"AWS_ACCESS_KEY_ID={kid}\nAWS_SECRET_ACCESS_KEY={s}",
            "csv": f"Access key ID,Secret access key\n{kid},{s}",
            "pair": f"key {kid} / {s}",
            "sts_json": f'"AccessKeyId": "{kid}", "SecretAccessKey": "{s}", "Expiration": "{_stamp(rng)}"',
            "boto": f"boto3.client('s3', aws_access_key_id='{kid}', aws_secret_access_key='{s}')",
            "cli_config": f"aws configure set aws_secret_access_key {s} --profile records"}[style]
    return style, s, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    style = ["slack", "discord", "teams", "power_automate", "google_chat", "mattermost", "rocketchat", "zapier"][i % 8]
    if style == "slack":
        tok = pick(rng, ALNUM, 24)
        team, hook = pick(rng, UPPER + string.digits, 8), pick(rng, UPPER + string.digits, 10)
        url = f"https://hooks.slack.com/services/T{team}/B{hook}/{tok}"
    elif style == "discord":
        tok = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{tok}"
    elif style == "teams":
        tok = pick(rng, HEX, 32)
        url = (f"https://{rng.choice(CITIES)}gov.webhook.office.com/webhookb2/{_uuid(rng)}@{_uuid(rng)}"
               f"/IncomingWebhook/{tok}/{_uuid(rng)}")
    elif style == "power_automate":
        tok = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.usgovtexas.logic.azure.us:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}")
    elif style == "google_chat":
        tok = pick(rng, URLSAFE, 43) + "%3D"
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages"
               f"?key=AIzaSy{pick(rng, URLSAFE, 33)}&token={tok}")
    elif style == "mattermost":
        tok = pick(rng, LOWER + string.digits, 26)
        url = f"https://chat.{rng.choice(CITIES)}.gov/hooks/{tok}"
    elif style == "rocketchat":
        tok = pick(rng, ALNUM, 48)
        url = f"https://rocket.{rng.choice(CITIES)}-county.org/hooks/{pick(rng, ALNUM, 17)}/{tok}"
    else:
        tok = pick(rng, LOWER + string.digits, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{rng.randint(1000000, 9999999)}/{tok}/"
    lead = rng.choice(["ALERT_WEBHOOK_URL={u}", "webhook: {u}", "curl -X POST -d @refund_alert.json {u}",
                       "Posting case-queue alerts to {u}", "notify_url = \"{u}\""])
    return style, tok, lead.format(u=url), False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    s = "whsec_" + (pick(rng, HEX, 64) if i % 3 == 0 else pick(rng, ALNUM, 32))
    style = rng.choice(["env", "cli", "yaml", "code", "note"])
    snip = {"env": f"STRIPE_WEBHOOK_SECRET={s}",
            "cli": f"> Ready! Your webhook signing secret is {s} (^C to quit)",
            "yaml": f"payments:\n  permit_fees:\n    webhook_secret: {s}",
            "code": f"event = stripe.Webhook.construct_event(payload, sig_header, '{s}')",
            "note": f"signing secret for the parking-permit endpoint: {s}"}[style]
    return style, s, snip, False


def v_connection_string(rng: random.Random, i: int) -> Value:
    style = ["postgres", "mysql", "mongodb", "redis", "adonet", "jdbc_oracle", "odbc", "azure_storage",
             "service_bus", "amqp"][i % 10]
    pw = password_value(rng, URL_PW)
    host = f"{rng.choice(['casedb', 'benefits-db', 'permits', 'taxrec'])}.{rng.choice(CITIES)}.internal"
    user = rng.choice(["app_rw", "etl", "caseworker_svc", "sa"])
    if style == "postgres":
        snip = f"DATABASE_URL=postgresql://{user}:{pw}@{host}:5432/cases"
    elif style == "mysql":
        snip = f"mysql://{user}:{pw}@{host}:3306/permits?ssl-mode=REQUIRED"
    elif style == "mongodb":
        snip = f"mongodb+srv://{user}:{pw}@{rng.choice(CITIES)}.ab{digits(rng, 3)}.mongodb.net/foia"
    elif style == "redis":
        snip = f"REDIS_URL=rediss://:{pw}@{host}:6380/0"
    elif style == "adonet":
        snip = f"Server=tcp:{host},1433;Database=Benefits;User Id={user};Password={pw};Encrypt=True;"
    elif style == "jdbc_oracle":
        snip = f"jdbc:oracle:thin:{user}/{pw}@//{host}:1521/COURTS"
    elif style == "odbc":
        snip = f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Uid={user};Pwd={pw};"
    elif style == "azure_storage":
        pw = pick(rng, B64, 86) + "=="
        snip = (f"DefaultEndpointsProtocol=https;AccountName=permitscans{digits(rng, 2)};AccountKey={pw};"
                "EndpointSuffix=core.usgovcloudapi.net")
    elif style == "service_bus":
        pw = pick(rng, B64, 43) + "="
        snip = (f"Endpoint=sb://{rng.choice(CITIES)}-cases.servicebus.usgovcloudapi.net/;"
                f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={pw}")
    else:
        snip = f"AMQP_URL=amqps://{user}:{pw}@{host}:5671/benefits"
    return style, pw, snip, False


KEY_LABELS = ["API key: {v}", "API-Key: {v}", "X-API-Key: {v}", "api_key = \"{v}\"", "Clé API : {v}",
              "clave API: {v}", "API-Schlüssel: {v}", "Companies House API key: {v}", "OS Places API key: {v}",
              "api.data.gov key: {v}", "address lookup key = {v}", "ключ API: {v}", "Chiave API: {v}",
              "apikey={v}", "API-sleutel: {v}", "Klucz API: {v}"]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    shape = rng.choice(["alnum40", "alnum32", "uuid", "hex40"])
    key = {"alnum40": pick(rng, ALNUM, 40), "alnum32": pick(rng, ALNUM, 32), "uuid": _uuid(rng),
           "hex40": pick(rng, HEX, 40)}[shape]
    if i % 4 == 1:
        style, snip = message(rng, i // 4, "key", key)
        return f"{style}_{shape}", key, snip, False
    return shape, key, rng.choice(KEY_LABELS).format(v=key), False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]


def fullwidth(text: str) -> str:
    """ASCII printable characters as their Unicode full-width forms (U+FF01-FF5E)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def v_disguised(rng: random.Random, i: int) -> Value:
    base = rng.choice([password_value(rng), "sk_live_" + pick(rng, ALNUM, 24), "SG." + pick(rng, URLSAFE, 22) + "."
                       + pick(rng, URLSAFE, 43), pick(rng, ALNUM, 40)])
    style = ["zero_width", "fullwidth", "percent", "json_u"][i % 4]
    label = rng.choice(["password", "api key", "Passwort", "mot de passe", "secret"])
    if style == "zero_width":
        at = rng.randint(2, len(base) - 2)
        s = base[:at] + rng.choice(ZW) + base[at:]
        return style, s, f"{label}: {s}", False
    if style == "fullwidth":
        s = fullwidth(base)
        return style, s, f"{label}：{s}", False
    if style == "percent":
        s = quote(base, safe="")
        if s == base or rng.random() < 0.5:
            s = "".join(f"%{ord(c):02X}" for c in base)
        return style, s, f"POST /login body: user=jdoe&{rng.choice(['password', 'pwd', 'secret'])}={s}", False
    s = "".join(f"\\u{ord(c):04x}" for c in base)
    return style, s, f'{{"field": "{label}", "value": "{s}"}}', True


MAIL_USERS = ["maria.lopez", "j.okafor", "anil.kumar84", "sophie.martin", "lukas.meier", "chloe.dubois",
              "ahmed.hassan", "yuki.tanaka", "olga.ivanova", "priya.n", "tom.obrien", "fatima.z", "kwame.mensah",
              "ingrid.larsen", "wei.zhang", "nguyen.thi.lan"]
MAIL_DOMAINS = ["gmail.com", "outlook.com", "web.de", "gmx.de", "orange.fr", "laposte.net", "btinternet.com",
                "yahoo.co.uk", "rediffmail.com", "free.fr", "t-online.de", "hotmail.co.uk", "proton.me", "icloud.com",
                "comcast.net", "ziggo.nl"]
IDN_MAILS = ["josé.garcía@correo.es", "müller.jürgen@gmx.de", "δημήτρης@παράδειγμα.ελ", "李明@例子.公司",
             "иван.петров@почта.рф", "françois.lefèvre@orange.fr", "सुरेश@डाकघर.भारत", "zoë.ahmed@outlook.com"]
MAIL_CTX = ["email", "E-Mail", "correo", "courriel", "adresse e-mail", "contact email", "メール", "이메일", "邮箱",
            "эл. почта", "ईमेल", "e-posta", "email address on file"]
STAFF_DOMAINS = ["hmrc.gov.uk", "ssa.gov", "irs.gov", "dgfip.finances.gouv.fr", "finanzamt.bayern.de",
                 "springfield.gov"]


def v_email(rng: random.Random, i: int) -> Value:
    user, dom = rng.choice(MAIL_USERS), rng.choice(MAIL_DOMAINS)
    style = rng.choice(["label", "mailto", "angle", "sentence", "plus", "idn", "staff", "csv"])
    mail = f"{user}@{dom}"
    if i % 4 == 2:
        style, snip = message(rng, i // 4, "email", mail)
        return style, mail, snip, False
    if style == "plus":
        mail = f"{user}+{rng.choice(['refund', 'benefits', 'permits'])}@{dom}"
    elif style == "idn":
        mail = rng.choice(IDN_MAILS)
    elif style == "staff":
        mail = f"{user}@{rng.choice(STAFF_DOMAINS)}"
    snip = {"label": f"{rng.choice(MAIL_CTX)}: {mail}", "mailto": f"<a href=\"mailto:{mail}\">contact</a>",
            "angle": f"To: {user.replace('.', ' ').title()} <{mail}>",
            "sentence": f"please send the refund confirmation to {mail} thanks",
            "plus": f"{rng.choice(MAIL_CTX)}: {mail}", "idn": f"{rng.choice(MAIL_CTX)} {mail}",
            "staff": f"assigned caseworker: {mail}", "csv": f"applicant_email,{mail}"}[style]
    return style, mail, snip, False


PhoneForm = tuple[str, Callable[[random.Random], str]]
PHONE_TEMPLATES = ["{c}: {n}", "{c} {n}", "{c} - {n}", "{n} ({c})", "callback requested, {c} {n}"]


def phone_case(rng: random.Random, forms: list[PhoneForm], ctx: list[str],
               bad: tuple[str, ...] = ()) -> Value:
    """A phone of one of `forms` with a context word of `ctx`, redrawn while it holds a reserved (drama) run."""
    style, make = rng.choice(forms)
    number = make(rng)
    while any(b in number.replace(" ", "") for b in bad):
        number = make(rng)
    return style, number, rng.choice(PHONE_TEMPLATES).format(c=rng.choice(ctx), n=number), False


NANP_AREAS = ["202", "212", "213", "305", "312", "404", "415", "503", "512", "602", "617", "702", "713", "808",
              "919", "971", "416", "604", "514", "613", "403", "780", "902", "306"]


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """Area code, exchange (NXX: 2-9 first, not N11, not 555) and line."""
    ex = f"{rng.randint(2, 9)}{digits(rng, 2)}"
    while ex[1:] == "11" or ex == "555":
        ex = f"{rng.randint(2, 9)}{digits(rng, 2)}"
    return rng.choice(NANP_AREAS), ex, digits(rng, 4)


US_FORMS: list[PhoneForm] = [
    ("paren", lambda r: "({}) {}-{}".format(*_nanp(r))), ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
    ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))), ("intl", lambda r: "+1 {} {} {}".format(*_nanp(r))),
    ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r))), ("e164", lambda r: "+1{}{}{}".format(*_nanp(r)))]
US_CTX = ["phone", "daytime phone", "cell", "callback number", "contact phone", "téléphone", "cellulaire",
          "teléfono", "celular", "Phone no."]
UK_FORMS: list[PhoneForm] = [
    ("mobile", lambda r: f"07{r.choice('1234579')}{digits(r, 2)} {digits(r, 6)}"),
    ("mobile_intl", lambda r: f"+44 7{r.choice('1234579')}{digits(r, 2)} {digits(r, 6)}"),
    ("london", lambda r: f"020 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}"),
    ("manchester", lambda r: f"0161 {r.randint(2, 9)}{digits(r, 2)} {digits(r, 4)}"),
    ("birmingham", lambda r: f"0121 {r.randint(2, 9)}{digits(r, 2)} {digits(r, 4)}"),
    ("cardiff", lambda r: f"029 2{digits(r, 3)} {digits(r, 4)}"),
    ("london_intl", lambda r: f"+44 (0)20 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}")]
UK_CTX = ["mobile", "tel", "phone number", "contact number", "mob.", "rhif ffôn", "ffôn symudol", "daytime tel"]
UK_DRAMA = ("07700900", "0207946", "+4420794", "01614960", "01214960", "02920180", "+447700900", "(0)207946")


def _fr_pairs(r: random.Random, first: str) -> list[str]:
    second = digits(r, 2)
    while second == "99":
        second = digits(r, 2)
    return ["0" + first, second] + [digits(r, 2) for _ in range(3)]


FR_FORMS: list[PhoneForm] = [
    ("mobile", lambda r: " ".join(_fr_pairs(r, r.choice("67")))),
    ("geo", lambda r: " ".join(_fr_pairs(r, r.choice("12345")))),
    ("dots", lambda r: ".".join(_fr_pairs(r, r.choice("1679")))),
    ("compact", lambda r: "".join(_fr_pairs(r, r.choice("67")))),
    ("intl", lambda r: "+33 " + " ".join([p.lstrip("0") if k == 0 else p
                                           for k, p in enumerate(_fr_pairs(r, r.choice("67")))])),
    ("intl_paren", lambda r: "+33 (0)" + " ".join(_fr_pairs(r, r.choice("12345")))[1:])]
FR_CTX = ["téléphone", "portable", "tél.", "numéro de mobile", "joignable au", "tel fixe"]
DE_MOBILE = ["151", "152", "157", "159", "160", "162", "163", "170", "171", "172", "173", "174", "175", "176", "177",
             "178", "179"]
DE_FORMS: list[PhoneForm] = [
    ("mobile", lambda r: f"0{r.choice(DE_MOBILE)} {r.randint(1, 9)}{digits(r, 6)}"),
    ("mobile_slash", lambda r: f"0{r.choice(DE_MOBILE)}/{r.randint(1, 9)}{digits(r, 6)}"),
    ("mobile_intl", lambda r: f"+49 {r.choice(DE_MOBILE)} {r.randint(1, 9)}{digits(r, 7)}"),
    ("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
    ("muenchen", lambda r: f"(089) {r.randint(2, 9)}{digits(r, 6)}"),
    ("hamburg_dash", lambda r: f"040-{r.randint(2, 9)}{digits(r, 7)}"),
    ("intl_paren", lambda r: f"+49 (0)69 {r.randint(2, 9)}{digits(r, 6)}")]
DE_CTX = ["Telefon", "Tel.", "Handy", "Mobilnummer", "Rückrufnummer", "telefonisch erreichbar unter", "Festnetz"]
DE_DRAMA = ("03023125", "015228817", "017139200")
IN_FORMS: list[PhoneForm] = [
    ("intl_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
    ("intl_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}"),
    ("zero", lambda r: f"0{r.choice('6789')}{digits(r, 9)}"),
    ("bare", lambda r: f"{r.choice('6789')}{digits(r, 9)}"),
    ("delhi", lambda r: f"011-2{digits(r, 3)} {digits(r, 4)}"),
    ("mumbai", lambda r: f"022 2{digits(r, 3)} {digits(r, 4)}"),
    ("bengaluru", lambda r: f"080-2{digits(r, 7)}")]
IN_CTX = ["mobile", "mobile no.", "contact no.", "मोबाइल नंबर", "फ़ोन", "ph", "Aadhaar-linked mobile", "दूरभाष"]


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    return phone_case(rng, US_FORMS, US_CTX)


def v_phone_uk(rng: random.Random, i: int) -> Value:
    return phone_case(rng, UK_FORMS, UK_CTX, UK_DRAMA)


def v_phone_fr(rng: random.Random, i: int) -> Value:
    return phone_case(rng, FR_FORMS, FR_CTX)


def v_phone_de(rng: random.Random, i: int) -> Value:
    return phone_case(rng, DE_FORMS, DE_CTX, DE_DRAMA)


def v_phone_in(rng: random.Random, i: int) -> Value:
    return phone_case(rng, IN_FORMS, IN_CTX)


SSN_FAMOUS = {"078051120", "219099999", "457555462", "123456789"}


def ssn_digits(rng: random.Random) -> str:
    """Nine digits by the SSA's rules, none of the famously misused ones."""
    while True:
        area = rng.randint(1, 899)
        value = f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
        if area != 666 and value not in SSN_FAMOUS:
            return value


SSN_CTX = ["SSN", "Social Security number", "a Employee's social security number", "Recipient's TIN",
           "SSN (primary taxpayer)", "número de Seguro Social", "Soc. Sec. No.", "spouse SSN"]


def v_ssn(rng: random.Random, i: int) -> Value:
    d = ssn_digits(rng)
    style = rng.choice(["dash", "dash", "space", "compact"])
    s = {"dash": f"{d[:3]}-{d[3:5]}-{d[5:]}", "space": f"{d[:3]} {d[3:5]} {d[5:]}", "compact": d}[style]
    snip = rng.choice(["{c}: {v}", "{c} {v}", "{c} = {v}", "verified {c} {v} against the SSA record"])
    return style, s, snip.format(c=rng.choice(SSN_CTX), v=s), False


def itin_digits(rng: random.Random) -> str:
    """An ITIN: 9, two digits, a group in 50-65, 70-88, 90-92 or 94-99, four digits."""
    grp = rng.choice(list(range(50, 66)) + list(range(70, 89)) + [90, 91, 92] + list(range(94, 100)))
    return f"9{digits(rng, 2)}{grp}{rng.randint(1, 9999):04d}"


def v_itin(rng: random.Random, i: int) -> Value:
    d = itin_digits(rng)
    style = rng.choice(["dash", "compact"])
    s = f"{d[:3]}-{d[3:5]}-{d[5:]}" if style == "dash" else d
    ctx = rng.choice(["ITIN", "Individual Taxpayer Identification Number", "número ITIN", "TIN (ITIN)",
                      "W-7 approved, ITIN"])
    return style, s, f"{ctx}: {s}", False


CARD_IIN: dict[str, tuple[Callable[[random.Random], str], int]] = {
    "visa": (lambda r: "4", 16), "mc": (lambda r: str(r.randint(51, 55)), 16),
    "mc2": (lambda r: str(r.randint(2221, 2720)), 16), "amex": (lambda r: r.choice(["34", "37"]), 15),
    "discover": (lambda r: r.choice(["6011", str(r.randint(644, 649)), "65"]), 16),
    "jcb": (lambda r: str(r.randint(3528, 3589)), 16), "diners": (lambda r: "36", 14),
    "unionpay": (lambda r: "62", 16)}
CARD_CTX = ["Card number", "card no.", "Kartennummer", "numéro de carte", "número de tarjeta",
            "paid permit fee with card", "Pay1040 card", "PAN"]


def card_number(rng: random.Random, brand: str) -> str:
    prefix, length = CARD_IIN[brand]
    body = prefix(rng)
    body += digits(rng, length - 1 - len(body))
    return body + luhn_digit(body)


def v_card(rng: random.Random, i: int) -> Value:
    brand = list(CARD_IIN)[i % len(CARD_IIN)]
    num = card_number(rng, brand)
    shown = rng.choice([group_card(num, " "), group_card(num, "-"), num])
    if i % 5 == 3:
        style, snip = message(rng, i // 5, "card", shown)
        return f"{brand}_{style}", shown, snip, False
    exp = f"{rng.randint(1, 12):02d}/{rng.randint(26, 30)}"
    snip = rng.choice(["{c}: {v}", "{c} {v} exp {e}", "charge {v} ({e}) for the permit fee", "{c} = {v}"])
    return brand, shown, snip.format(c=rng.choice(CARD_CTX), v=shown, e=exp), False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
             "NL": "4a10n", "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "PT": "4n4n11n2n",
             "IE": "4a6n8n", "SE": "3n16n1n", "FI": "3n11n", "DK": "4n9n1n", "LU": "3n13c"}
IBAN_CTX = ["IBAN", "Bankverbindung für die Erstattung", "IBAN pour le remboursement", "RIB / IBAN",
            "IBAN voor toeslagen", "cuenta IBAN", "conto per il rimborso", "refund account (IBAN)",
            "IBAN do reembolso", "rachunek IBAN"]


ES_WEIGHTS = [1, 2, 4, 8, 5, 10, 9, 7, 3, 6]


def _es_dc(ten: str) -> str:
    """A Spanish CCC control digit: weights 1 2 4 8 5 10 9 7 3 6, 11 - sum mod 11 (11 -> 0, 10 -> 1)."""
    d = 11 - sum(int(c) * w for c, w in zip(ten, ES_WEIGHTS, strict=True)) % 11
    return str({11: 0, 10: 1}.get(d, d))


def national_bban(rng: random.Random, cc: str) -> str:
    """A BBAN of the registry's structure, with the national check digits real Belgian (mod 97), Spanish (CCC)
    and French (clé RIB, all-digit account) BBANs carry."""
    if cc == "BE":
        first = digits(rng, 10)
        return first + f"{int(first) % 97 or 97:02d}"
    if cc == "ES":
        bank, account = digits(rng, 8), digits(rng, 10)
        return bank + _es_dc("00" + bank) + _es_dc(account) + account
    if cc == "FR":
        bank, desk, account = digits(rng, 5), digits(rng, 5), digits(rng, 11)
        return bank + desk + account + f"{97 - (89 * int(bank) + 15 * int(desk) + 3 * int(account)) % 97:02d}"
    return bban(rng, IBAN_BBAN[cc])


def v_iban(rng: random.Random, i: int) -> Value:
    cc = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    b = national_bban(rng, cc)
    compact = cc + iban_check(cc, b) + b
    shown = group(compact, 4, " ") if rng.random() < 0.6 else compact
    if i % 5 == 4:
        style, snip = message(rng, i // 5, "iban", shown)
        return f"{cc}_{style}", shown, snip, False
    return cc, shown, f"{rng.choice(IBAN_CTX)}: {shown}", False


# ---- more kinds this domain holds -----------------------------------------------------------------------------

JWT_ISSUERS = [("https://secure.login.gov/", "http://idmanagement.gov/ns/assurance/ial/1"),
               ("https://oidc.account.gov.uk/", "Cl.Cm"), ("https://app.franceconnect.gouv.fr/api/v1", "eidas1"),
               ("https://idp.int.identitysandbox.gov/", "urn:acr.login.gov:auth-only")]


def jwt_value(rng: random.Random) -> str:
    """A signed JWT (RFC 7519/7515): base64url header and claims of an ID token, a signature of the alg's size."""
    iss, acr = rng.choice(JWT_ISSUERS)
    alg, size = rng.choice([("RS256", 256), ("ES256", 64), ("HS256", 32)])
    iat = rng.randint(1_735_000_000, 1_760_000_000)
    header = {"alg": alg, "typ": "JWT", "kid": pick(rng, HEX, 16)}
    claims = {"iss": iss, "sub": _uuid(rng), "aud": pick(rng, URLSAFE, 27), "iat": iat, "exp": iat + 900,
              "acr": acr, "nonce": pick(rng, URLSAFE, 22)}
    parts = [b64url(json.dumps(x, separators=(",", ":")).encode()) for x in (header, claims)]
    return ".".join(parts + [b64url(rng.randbytes(size))])


def v_jwt(rng: random.Random, i: int) -> Value:
    tok = jwt_value(rng)
    style = rng.choice(["id_token", "bearer", "cookie", "logout_hint", "client_assertion", "log"])
    snip = {"id_token": f'"id_token": "{tok}"', "bearer": f"Authorization: Bearer {tok}",
            "cookie": f"Cookie: lang=en; id_token={tok}",
            "logout_hint": f"GET /logout?id_token_hint={tok}&state={pick(rng, URLSAFE, 22)}",
            "client_assertion": f"client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-"
                                f"bearer&client_assertion={tok}",
            "log": f"oidc callback ok, token={tok}"}[style]
    return style, tok, snip, False


COOKIES: list[tuple[str, Callable[[random.Random], str]]] = [
    ("JSESSIONID", lambda r: pick(r, HEX.upper(), 32)),
    ("ASP.NET_SessionId", lambda r: pick(r, LOWER + "012345", 24)),
    ("PHPSESSID", lambda r: pick(r, string.digits + LOWER[:22], 26)),
    ("sessionid", lambda r: pick(r, LOWER + string.digits, 32)),
    ("connect.sid", lambda r: "s%3A" + pick(r, URLSAFE, 32) + "." + pick(r, ALNUM, 43)),
    ("_portal_session", lambda r: pick(r, HEX, 32)),
    ("__Host-session", lambda r: pick(r, URLSAFE, 43)),
    ("laravel_session", lambda r: "eyJpdiI6" + pick(r, ALNUM, 180) + "%3D")]


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, make = COOKIES[i % len(COOKIES)]
    val = make(rng)
    host = f"{rng.choice(['permits', 'benefits', 'appointments', 'records'])}.{rng.choice(CITIES)}.gov"
    style = rng.choice(["cookie", "set_cookie", "curl", "devtools", "har"])
    snip = {"cookie": f"Cookie: cookie_consent=accepted; {name}={val}; lang=en",
            "set_cookie": f"Set-Cookie: {name}={val}; Path=/; Secure; HttpOnly; SameSite=Lax",
            "curl": f"curl -b '{name}={val}' https://{host}/api/case/status",
            "devtools": f"{name}\t{val}\t{host}\t/\tSession",
            "har": f'{{"name": "{name}", "value": "{val}", "domain": "{host}"}}'}[style]
    return f"{name}_{style}", val, snip, False


def v_bearer_token(rng: random.Random, i: int) -> Value:
    shape = rng.choice(["hex32", "opaque40", "ya29"])
    tok = {"hex32": pick(rng, HEX, 32), "opaque40": pick(rng, ALNUM, 40),
           "ya29": "ya29.a0" + pick(rng, URLSAFE, 150)}[shape]
    style = rng.choice(["header", "curl", "token_response", "requests", "log"])
    snip = {"header": f"Authorization: Bearer {tok}",
            "curl": f"curl -H 'Authorization: Bearer {tok}' https://test-api.service.hmrc.gov.uk/hello/user",
            "token_response": f'{{"access_token":"{tok}","token_type":"bearer","expires_in":14400,'
                              f'"scope":"read:self-assessment"}}',
            "requests": f"headers = {{'Authorization': 'Bearer {tok}', 'Accept': 'application/json'}}",
            "log": f"refreshed access token {tok} for agent session"}[style]
    return f"{shape}_{style}", tok, snip, False


def v_basic_auth(rng: random.Random, i: int) -> Value:
    user = rng.choice(["efile", "payroll-sftp", "records_api", "permit-kiosk", "courtfeed"])
    cred = base64.b64encode(f"{user}:{password_value(rng)}".encode()).decode()
    style = rng.choice(["header", "proxy", "curl", "log"])
    snip = {"header": f"Authorization: Basic {cred}", "proxy": f"Proxy-Authorization: Basic {cred}",
            "curl": f"curl -H \"Authorization: Basic {cred}\" https://feeds.courts.example-state.us/dockets",
            "log": f"upstream 401, retried with basic {cred}"}[style]
    return style, cred, snip, False


P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
NO_ENC = serialization.NoEncryption()
PEM = serialization.Encoding.PEM


def _armoured(text: str) -> tuple[str, str, str]:
    """A PEM/OpenSSH block split into (BEGIN line, base64 body, END line)."""
    lines = text.strip().split("\n")
    return lines[0], "\n".join(lines[1:-1]), lines[-1]


def private_key_block(rng: random.Random, shape: str) -> str:
    """An EC P-256 (PKCS#8 or SEC1), Ed25519 PKCS#8 or OpenSSH Ed25519 private key, derived from the generator."""
    if shape in ("pkcs8_ec", "sec1_ec"):
        key = ec.derive_private_key(rng.randrange(1, P256_ORDER), ec.SECP256R1())
        fmt = (serialization.PrivateFormat.PKCS8 if shape == "pkcs8_ec"
               else serialization.PrivateFormat.TraditionalOpenSSL)
        return key.private_bytes(PEM, fmt, NO_ENC).decode()
    seed = rng.randbytes(32)
    ed = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
    if shape == "pkcs8_ed25519":
        return ed.private_bytes(PEM, serialization.PrivateFormat.PKCS8, NO_ENC).decode()
    raw = serialization.Encoding.Raw
    public = ed.public_key().public_bytes(raw, serialization.PublicFormat.Raw)
    blob = base64.b64encode(openssh_ed25519_blob(seed, public, rng.randbytes(4), b"payroll-sftp")).decode()
    return ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(blob, 70, "\n")
            + "\n-----END OPENSSH PRIVATE KEY-----\n")


PK_CTX = ["login.gov private_key_jwt client key:", "eIDAS connector signing key", "FranceConnect client key",
          "SFTP key for the state payroll drop", "One Login client private key (keep safe!)"]


def v_private_key(rng: random.Random, i: int) -> Value:
    shape = ["pkcs8_ec", "sec1_ec", "pkcs8_ed25519", "openssh"][i % 4]
    begin, body, end = _armoured(private_key_block(rng, shape))
    if i % 5 == 2:
        secret = body.replace("\n", "\\n")
        return f"{shape}_env_escaped", secret, f'PRIVATE_KEY="{begin}\\n{secret}\\n{end}\\n"', True
    return shape, body, f"{rng.choice(PK_CTX)}\n{begin}\n{body}\n{end}", False


TOTP_ISSUERS = ["Login.gov", "GOV.UK One Login", "ID.me", "Springfield Permits", "Benefits Portal"]


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, BASE32, rng.choice([32, 32, 16, 26]))
    issuer = rng.choice(TOTP_ISSUERS)
    style = rng.choice(["uri", "setup_key", "env", "json"])
    if style == "setup_key":
        shown = group(seed.lower(), 4, " ")
        return style, shown, f"Can't scan the QR code? Enter this setup key: {shown}", False
    label = quote(f"{issuer}:staff-{digits(rng, 4)}")
    snip = {"uri": f"otpauth://totp/{label}?secret={seed}&issuer={quote(issuer)}&algorithm=SHA1&digits=6&period=30",
            "env": f"MFA_TOTP_SEED={seed}", "json": f'"totp_secret": "{seed}"'}[style]
    return style, seed, snip, False


def v_recovery_code(rng: random.Random, i: int) -> Value:
    style = ["logingov_personal_key", "microsoft", "github", "google_backup"][i % 4]
    code = {"logingov_personal_key": "-".join(pick(rng, CROCKFORD, 4) for _ in range(4)),
            "microsoft": "-".join(pick(rng, UPPER + string.digits, 5) for _ in range(5)),
            "github": f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}",
            "google_backup": f"{digits(rng, 4)} {digits(rng, 4)}"}[style]
    lead = rng.choice(["Your personal key: {c}", "recovery code {c}", "Backup code: {c} (each works once)",
                       "user read me their recovery code: {c}", "Code de récupération : {c}"])
    return style, code, lead.format(c=code), False


def v_notify_key(rng: random.Random, i: int) -> Value:
    secret = _uuid(rng)
    key = f"{rng.choice(['live_permits', 'appt_reminders', 'benefits_live', 'team_key'])}-{_uuid(rng)}-{secret}"
    style = rng.choice(["env", "python", "yaml", "note"])
    snip = {"env": f"NOTIFY_API_KEY={key}", "python": f'client = NotificationsAPIClient("{key}")',
            "yaml": f"notify:\n  api_key: {key}", "note": f"GOV.UK Notify key for reminders: {key}"}[style]
    return style, secret, snip, False


def v_sendgrid_key(rng: random.Random, i: int) -> Value:
    key = f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}"
    style = rng.choice(["env", "python", "header", "yaml"])
    snip = {"env": f"SENDGRID_API_KEY={key}", "python": f"sg = SendGridAPIClient('{key}')",
            "header": f"Authorization: Bearer {key}", "yaml": f"mail:\n  sendgrid_key: {key}"}[style]
    return style, key, snip, False


def v_twilio_token(rng: random.Random, i: int) -> Value:
    sid, tok = "AC" + pick(rng, HEX, 32), pick(rng, HEX, 32)
    style = rng.choice(["env", "client", "curl", "note"])
    snip = {"env": f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={tok}", "client": f"Client('{sid}', '{tok}')",
            "curl": f"curl -u {sid}:{tok} https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json",
            "note": f"SMS appointment reminders - account {sid}, auth token {tok}"}[style]
    return style, tok, snip, False


def v_stripe_secret_key(rng: random.Random, i: int) -> Value:
    shape = ["sk_live", "sk_live_51", "rk_live"][i % 3]
    key = {"sk_live": "sk_live_" + pick(rng, ALNUM, 24), "sk_live_51": "sk_live_51" + pick(rng, ALNUM, 97),
           "rk_live": "rk_live_" + pick(rng, ALNUM, 24)}[shape]
    style = rng.choice(["env", "code", "curl", "header"])
    snip = {"env": f"STRIPE_SECRET_KEY={key}", "code": f"stripe.api_key = \"{key}\"",
            "curl": f"curl https://api.stripe.com/v1/charges -u {key}:",
            "header": f"Authorization: Bearer {key}"}[style]
    return f"{shape}_{style}", key, snip, False


# ---- national ids (outside the target) ------------------------------------------------------------------------

def iso7064_11_10(number: str) -> str:
    """The ISO 7064 MOD 11,10 check digit (German Steuer-IdNr)."""
    product = 10
    for ch in number:
        total = (int(ch) + product) % 10 or 10
        product = total * 2 % 11
    return str((11 - product) % 10)


def de_steuer_id(rng: random.Random) -> str:
    """11 digits: the first 10 hold one digit twice and one not at all, no leading 0; MOD 11,10."""
    while True:
        body = rng.sample(range(10), 9)
        body.append(rng.choice(body))
        rng.shuffle(body)
        if body[0]:
            first = "".join(map(str, body))
            return first + iso7064_11_10(first)


def fr_nir(rng: random.Random) -> str:
    """Sex, year, month, department (2A/2B count as 19/18 for the key), commune, order, key 97 - n mod 97."""
    dept = rng.choice([f"{d:02d}" for d in range(1, 96) if d != 20] + ["2A", "2B"])
    head = f"{rng.choice('12')}{digits(rng, 2)}{rng.randint(1, 12):02d}"
    tail = f"{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}"
    number = int(head + dept.replace("2A", "19").replace("2B", "18") + tail)
    key = f"{97 - number % 97:02d}"
    return " ".join([head[0], head[1:3], head[3:5], dept, tail[:3], tail[3:], key])


CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23]
CF_MONTHS = "ABCDEHLMPRST"
CONSONANTS = "BCDFGHJKLMNPQRSTVWXZ"


def _cf_value(ch: str, odd: bool) -> int:
    index = int(ch) if ch.isdigit() else ord(ch) - 65
    return CF_ODD[index] if odd else index


def it_codice_fiscale(rng: random.Random) -> str:
    """Surname and name letters, year, month letter, day (+40 for women), Belfiore code, odd/even check letter."""
    day = rng.randint(1, 28) + rng.choice([0, 40])
    body = (pick(rng, CONSONANTS, 3) + pick(rng, CONSONANTS, 2) + rng.choice("AEIOU") + digits(rng, 2)
            + rng.choice(CF_MONTHS) + f"{day:02d}"
            + rng.choice(["H501", "F205", "L219", "G273", "F839", "A662", "D612", "L736"]))
    total = sum(_cf_value(ch, k % 2 == 0) for k, ch in enumerate(body))
    return body + chr(65 + total % 26)


def be_nrn(rng: random.Random) -> str:
    """YY.MM.DD-SSS.CC: birth date, serial 001-997, check 97 - n mod 97 (2 prefixed for births from 2000)."""
    year = rng.randint(1940, 2012)
    first = f"{year % 100:02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(1, 997):03d}"
    number = int(first) + (2_000_000_000 if year >= 2000 else 0)
    check = f"{97 - number % 97:02d}"
    return f"{first[:2]}.{first[2:4]}.{first[4:6]}-{first[6:]}.{check}"


def se_personnummer(rng: random.Random) -> str:
    """YYMMDD-NNNC, C the Luhn digit of the nine before it."""
    first = f"{rng.randint(0, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    return f"{first[:6]}-{first[6:]}{luhn_digit(first)}"


HETU_CHECK = "0123456789ABCDEFHJKLMNPRSTUVWXY"


def fi_hetu(rng: random.Random) -> str:
    """DDMMYY, century sign (- 1900s, A 2000s), individual number 002-899, mod 31 check character."""
    year = rng.randint(1940, 2012)
    date = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{year % 100:02d}"
    ind = f"{rng.randint(2, 899):03d}"
    return f"{date}{'A' if year >= 2000 else '-'}{ind}{HETU_CHECK[int(date + ind) % 31]}"


def ca_sin(rng: random.Random) -> str:
    """Nine digits, the last Luhn; the first not 0 or 8 (8 is for business numbers)."""
    first = rng.choice("12345679") + digits(rng, 7)
    full = first + luhn_digit(first)
    return f"{full[:3]} {full[3:6]} {full[6:]}"


def nl_bsn(rng: random.Random) -> str:
    """Nine digits passing the 11-proof: 9*d1 + 8*d2 + ... + 2*d8 - d9 divisible by 11."""
    while True:
        first = str(rng.randint(1, 9)) + digits(rng, 7)
        rest = sum(int(d) * (9 - k) for k, d in enumerate(first)) % 11
        if rest < 10:
            return first + str(rest)


NINO_BAD_PREFIX = {"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"}


def uk_nino(rng: random.Random) -> str:
    """HMRC's rules: first letter not D F I Q U V, second not D F I O Q U V, some pairs unused; suffix A-D."""
    while True:
        prefix = rng.choice("ABCEGHJKLMNOPRSTWXYZ") + rng.choice("ABCEGHJKLMNPRSTWXYZ")
        if prefix not in NINO_BAD_PREFIX:
            break
    d, suffix = digits(rng, 6), rng.choice("ABCD")
    return rng.choice([f"{prefix} {d[:2]} {d[2:4]} {d[4:]} {suffix}", f"{prefix}{d}{suffix}"])


IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "de_steuer_id": (de_steuer_id, ["Steuer-ID", "Steuerliche Identifikationsnummer", "IdNr.", "Steuer-IdNr"]),
    "fr_nir": (fr_nir, ["NIR", "numéro de sécurité sociale", "N° SS", "n° de sécu"]),
    "it_codice_fiscale": (it_codice_fiscale, ["codice fiscale", "C.F.", "cod. fiscale"]),
    "be_nrn": (be_nrn, ["numéro de registre national", "rijksregisternummer", "NN", "INSZ"]),
    "se_personnummer": (se_personnummer, ["personnummer", "pers.nr", "personnr"]),
    "fi_hetu": (fi_hetu, ["henkilötunnus", "hetu", "personbeteckning"]),
    "ca_sin": (ca_sin, ["SIN", "Social Insurance Number", "NAS", "numéro d'assurance sociale"]),
    "nl_bsn": (nl_bsn, ["BSN", "burgerservicenummer", "sofinummer"]),
    "uk_nino": (uk_nino, ["National Insurance number", "NI number", "NINO", "rhif Yswiriant Gwladol"]),
}
ID_TEMPLATES = ["{c}: {v}", "{c} {v}", "| {c} | {v} |", "identity verified, {c} {v}", "{c} = {v}"]


def national_id(kind: str) -> Gen:
    make, ctx = IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        return "labelled", value, rng.choice(ID_TEMPLATES).format(c=rng.choice(ctx), v=value), False
    return gen


KINDS: dict[str, Gen] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "itin": v_itin, "jwt": v_jwt, "session_cookie": v_session_cookie, "bearer_token": v_bearer_token,
    "basic_auth": v_basic_auth, "private_key": v_private_key, "totp_seed": v_totp_seed,
    "recovery_code": v_recovery_code, "notify_key": v_notify_key, "sendgrid_key": v_sendgrid_key,
    "twilio_token": v_twilio_token, "stripe_secret_key": v_stripe_secret_key,
    **{kind: national_id(kind) for kind in IDS}}


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

FIELDS = ["ssn", "itin", "iban", "phone", "email", "password", "nino", "routing", "card", "steuer-id"]


def _luhn_bad(rng: random.Random) -> str:
    """16 digits whose last is not the Luhn digit."""
    body = rng.choice("3456") + digits(rng, 14)
    return body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)


def _aba(rng: random.Random) -> str:
    """An ABA routing number: Federal Reserve prefix 01-12 or 21-32, then the 3-7-1 weighted check digit."""
    first = f"{rng.choice(list(range(1, 13)) + list(range(21, 33))):02d}{digits(rng, 6)}"
    total = sum(int(d) * w for d, w in zip(first, [3, 7, 1, 3, 7, 1, 3, 7], strict=True))
    return first + str(-total % 10)


def _s10(rng: random.Random) -> str:
    """A UPU S10 item id (Royal Mail): two letters, eight digits, the weighted mod-11 check digit, GB."""
    serial = digits(rng, 8)
    check = 11 - sum(int(d) * w for d, w in zip(serial, [8, 6, 4, 2, 3, 5, 9, 7], strict=True)) % 11
    return f"{pick(rng, UPPER, 2)}{serial}{ {10: 0, 11: 5}.get(check, check)}GB"


EIN_PREFIXES = ["10", "12", "20", "26", "27", "30", "35", "38", "41", "46", "52", "56", "61", "65", "74", "81", "84",
                "88", "91", "94", "98"]
SERVICE_LINES = ["IRS individual help line 800-829-1040", "Social Security 1-800-772-1213",
                 "HMRC Self Assessment helpline 0300 200 3310", "impots.gouv : 0 809 401 401 (service gratuit)",
                 "USCIS Contact Center 800-375-5283", "Medicare 1-800-633-4227",
                 "CRA individual enquiries 1-800-959-8281",
                 "UIDAI helpline 1947", "CAF : 3230", "DVLA driver licensing 0300 790 6801"]

NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "element_id": lambda r: (f'<input id="{r.choice(FIELDS)}-field-{r.randint(1, 9)}" name="{r.choice(FIELDS)}" '
                             f'class="govuk-input govuk-input--width-{r.choice([10, 20, 30])}" autocomplete="off">'),
    "css_selector": lambda r: r.choice([f"#{r.choice(FIELDS)}-input > .govuk-input",
                                        f"form#w2-upload input[name='box_{r.choice('abcdef')}']",
                                        f".usa-form .{r.choice(FIELDS)}-group:nth-child({r.randint(1, 9)})"]),
    "xpath": lambda r: r.choice([f"//form[@id='sa100']//input[@name='box{r.randint(1, 40)}']",
                                 f"/html/body/div[{r.randint(1, 4)}]/main/form/fieldset[{r.randint(1, 6)}]/input[1]",
                                 f"//label[text()='{r.choice(FIELDS)}']/following-sibling::input"]),
    "coordinates": lambda r: (f"site inspection at {r.uniform(25, 49):.6f}, {r.uniform(-124, -67):.6f} "
                              f"(city hall annex)"),
    "pixel_size": lambda r: r.choice([f"scan {r.choice([2480, 2550])}x{r.choice([3508, 3300])} px at 300 dpi",
                                      f"viewport {r.choice([1366, 1440, 1920])}x{r.choice([768, 900, 1080])}",
                                      f"width: {r.randint(200, 1200)}px; height: {r.randint(40, 800)}px"]),
    "timestamp": lambda r: r.choice([_stamp(r), f"submitted at {r.randint(1_700_000_000_000, 1_760_000_000_000)} ms",
                                     f"Tue, {r.randint(10, 28)} May 2025 {r.randint(10, 23)}:04:11 GMT"]),
    "request_id": lambda r: r.choice([f"X-Request-Id: {_uuid(r)}", f"x-amzn-RequestId: {_uuid(r)}",
                                      f"X-CorrelationId: {_uuid(r)}", f"trace {pick(r, HEX, 32)}"]),
    "asset_hash": lambda r: r.choice([f"/assets/application-{pick(r, HEX, 64)}.css",
                                      f"/static/js/main.{pick(r, HEX, 8)}.js?v={_date(r).replace('-', '')}",
                                      f"govuk-frontend-5.{r.randint(0, 9)}.0.min.js?{pick(r, HEX, 20)}"]),
    "csrf_field_name": lambda r: r.choice(['<input type="hidden" name="authenticity_token" value="">',
                                           "form field csrfmiddlewaretoken missing", "__RequestVerificationToken",
                                           "send the X-CSRF-Token header", "name='_csrf' required",
                                           f"csrf_token field {r.randint(1, 9)} of form"]),
    "placeholder": lambda r: r.choice(["Password: ********", "Email: you@example.com", "API key: YOUR_API_KEY",
                                       "SSN: XXX-XX-XXXX", "NOTIFY_API_KEY={{ notify_api_key }}",
                                       "password=<your-password>", "IBAN: DE00 0000 0000 0000 0000 00",
                                       f"Phone: (555) 555-{r.choice(['0100', '0199'])}"]),
    "masked": lambda r: r.choice([f"SSN ***-**-{digits(r, 4)}", f"card ending {digits(r, 4)}",
                                  f"IBAN FR76 **** **** **** **** **** {digits(r, 3)}",
                                  f"phone (***) ***-{digits(r, 4)}", f"email {r.choice(LOWER)}***@g***.com",
                                  f"NI number QQ ** ** ** {r.choice('ABCD')}"]),
    "version": lambda r: r.choice([f"ERiC {r.randint(38, 41)}.{r.randint(1, 9)}.{r.randint(0, 9)}.0",
                                   f"MeF schema 2024v5.{r.randint(0, 3)}", f"GOV.UK Frontend v5.{r.randint(0, 9)}.0",
                                   f"Python 3.11.{r.randint(1, 9)}", f"OpenSSL 3.0.{r.randint(2, 15)}"]),
    "service_line": lambda r: r.choice(SERVICE_LINES),
    "luhn_invalid": lambda r: f"payment reference {group(_luhn_bad(r), 4, ' ')}",
    "case_number": lambda r: r.choice([f"Case No. {r.choice(['2024', '2025'])}-CV-{digits(r, 5)}", _ref(r, "BLD"),
                                       _ref(r, "FOIA"), f"claim ref UC-{digits(r, 6)}",
                                       f"order #{r.randint(100000, 999999)}"]),
    "tracking_number": lambda r: r.choice([f"1Z{pick(r, UPPER + string.digits, 6)}{digits(r, 10)}", _s10(r),
                                           f"USPS 9400 1{digits(r, 3)} {digits(r, 4)} {digits(r, 4)} "
                                           f"{digits(r, 4)} {digits(r, 2)}"]),
    "form_reference": lambda r: r.choice([f"Form 1040, line {r.randint(1, 38)}{r.choice(['', 'a', 'b'])}",
                                          f"SA100 box {r.randint(1, 20)}", f"Anlage N Zeile {r.randint(5, 90)}",
                                          f"2042 case {r.choice(['1AJ', '1BJ', '7DB', '2TR'])}",
                                          f"W-2 box 12{r.choice('abcd')} code {r.choice(['D', 'DD', 'W'])}"]),
    "omb_number": lambda r: r.choice(["OMB No. 1545-0074", "OMB No. 1545-0008", "Cat. No. 11320B",
                                      f"OMB No. 1545-{r.randint(1000, 2999)}", f"Cerfa n°10330*{r.randint(20, 35)}"]),
    "routing_number": lambda r: f"bank routing number (ABA) {_aba(r)}",
    "employer_ein": lambda r: f"Employer identification number (EIN) {r.choice(EIN_PREFIXES)}-{digits(r, 7)}",
    "amount": lambda r: r.choice([f"refund ${r.randint(1, 99)},{digits(r, 3)}.{digits(r, 2)}",
                                  f"£{r.randint(1, 9)},{digits(r, 3)}.00 owed",
                                  f"{r.randint(1, 9)}.{digits(r, 3)},56 €",
                                  f"₹ {r.randint(10, 99)},000"]),
    "document_digest": lambda r: r.choice([f"sha256:{pick(r, HEX, 64)}", f"MD5 of return.pdf {pick(r, HEX, 32)}"]),
    "aws_docs_example": lambda r: r.choice(["AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"]),
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
