"""The forty-fifth blind redaction corpus: insurance claims and underwriting agents, what an agent that handles
claims and policies reads and writes. Written from the formats' public specifications by someone who read neither
the detection rules nor the other corpora (only the twenty-first's interface).

Carriers (the `form` head): JSON ones -- Guidewire Cloud API (ClaimCenter) note resources (`data.attributes`),
Duck Creek style policy transactions, a policy admin API's underwriting answers, first-notice-of-loss web chat
sessions, an agent's tool results, AWS Textract blocks of an OCR'd claim form, payout records, fraud (SIU)
investigation events, repair-shop estimates (CCC/Mitchell style lines) and HAR captures of a broker portal; text
ones -- FNOL call transcripts with timestamps, adjuster notes, claims-system CSV exports (RFC 4180 quoting), e-mails
with claimants (RFC 5322 headers), underwriting questionnaires, medical bills attached to injury claims (CMS-1500
style boxes), repair estimates, subrogation demand letters, broker integration runbooks (shell heredocs), fraud
investigation logs, OCR plain text of claim forms, ACORD XML with CDATA remarks, claims tickets in Markdown, SFTP
integration logs and agent/user transcripts. About a third is JSON carried (`is_json`); the agent's own messages
to users come in 28 languages with the labels in the user's language.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not
0000); phones, the national numbering plans (NANP with real geographic area codes and N11/555 exchanges left out,
Ofcom's 07/01/02 ranges without the drama range 07700 900, ARCEP's 01-07/09 ten digits, BNetzA's area codes and
015x/016x/017x mobiles, TRAI/DoT's 6-9 mobiles and STD codes) with context words in each country's language(s);
AWS keys, IAM's documented AKIA/ASIA ids and 40-character secrets; Slack, Discord, Teams (Office 365 connector),
Power Automate, Google Chat, Mattermost and Zapier webhook URLs as their docs print them (the secret is the
token-bearing segment or query value only); Stripe `whsec_` signing secrets and `sk_live_`/`rk_live_` keys;
PostgreSQL/MongoDB/Redis/SFTP URIs (RFC 3986 userinfo), ADO.NET, JDBC, Azure Storage and Service Bus connection
strings (the secret is the password or key only); JWT (RFC 7519/7515), HTTP Basic (RFC 7617) and Bearer (RFC 6750)
credentials; session cookies as the servers name and shape them (Java `JSESSIONID`, ASP.NET `ASP.NET_SessionId`,
Express `connect.sid` signed `s:` values, PHP, Django, Rails); PEM PKCS#8/SEC1 and OpenSSH Ed25519 keys (RFC 5208,
RFC 5915, OpenSSH PROTOCOL.key), also inside a GCP service-account JSON; TOTP seeds, RFC 4648 base32 in Google
Authenticator's Key Uri Format (`otpauth://totp/...?secret=`) or as the grouped setup key; recovery codes as
GitHub (5-5 hex) and Google (8 digits) print them; provider keys as their docs show them: GitHub `ghp_`/`gho_`/
`ghs_` (CRC32 checksum) and `github_pat_`, OpenAI `sk-`/`sk-proj-`, Anthropic `sk-ant-api03-`, Slack `xoxb-`/
`xoxp-`, SendGrid `SG.<22>.<43>`, Google `AIza` + 35; national ids (outside the target): French NIR (97 - n mod
97), Italian codice fiscale (odd/even table, mod 26), Belgian national number (97 - n mod 97, 2 prefixed after
2000), Finnish henkilotunnus (mod 31), Swedish personnummer (Luhn), Norwegian fodselsnummer (two mod 11 digits),
Brazilian CPF (two mod 11 digits), and the US Medicare Beneficiary Identifier (CMS's 11-position format).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, a `disguised` value as written with its disguise). Other text
around a value holds no second secret: AWS cases carry no session token, card cases no CVV. Providers' published
test numbers and the numbering plans' fiction ranges are neither values nor near misses. Near misses are what a
claims desk holds that is not secret or personal in itself: claim, policy, repair-order and invoice numbers, VINs
(ISO 3779 with the North American check digit), ICD-10/CPT codes, element ids, CSS selectors, XPath, coordinates
of a loss location, pixel sizes and OCR boxes, timestamps, request and trace ids, cache-busting file hashes,
attachment checksums, CSRF field names without values, placeholders (`********`, `you@example.com`, the AWS docs'
EXAMPLE keys), masked values, versions, insurers' toll-free claims lines, Luhn-invalid payment references, parcel
tracking numbers and amounts: none of them identifies a person or opens anything.
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

SEED = 45
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"fr_nir", "it_cf", "be_nrn", "fi_hetu", "se_pnr", "no_fnr", "br_cpf", "us_mbi"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"


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


# ---- small domain values --------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _claim(rng: random.Random) -> str:
    return f"CLM-{rng.randint(2021, 2025)}-{digits(rng, 6)}"


def _policy(rng: random.Random) -> str:
    return f"{rng.choice(['PA', 'HO', 'CA', 'WC', 'BOP', 'UMB'])}-{digits(rng, 7)}-{digits(rng, 2)}"


def _date(rng: random.Random) -> str:
    return f"{rng.randint(2021, 2025)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _ts(rng: random.Random) -> str:
    return f"{_date(rng)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"


def _money(rng: random.Random) -> str:
    return f"{rng.randint(150, 48000)}.{rng.randint(0, 99):02d}"


BROKERS = ["harborline", "northgate-brokers", "alpenrisk", "meridian-mga", "cobaltre", "lakeshore-agency",
           "vantagepoint-ins", "tidewater-mga", "brightpath-brokers", "ostsee-makler"]
VEHICLES = [("2019", "Toyota", "Corolla"), ("2021", "Ford", "F-150"), ("2017", "Volkswagen", "Golf"),
            ("2022", "Tesla", "Model 3"), ("2018", "Renault", "Clio"), ("2020", "Honda", "CR-V")]


# ---- carriers: JSON -------------------------------------------------------------------------------------------

def j_guidewire(rng: random.Random, snip: str, _s: str) -> str:
    """A Guidewire Cloud API note resource: `data.attributes.body` holds the note."""
    cid = f"cc:{rng.randint(100, 99999)}"
    return _dump({"data": {"attributes": {"id": cid, "body": snip, "subject": "FNOL follow-up",
                                          "topic": {"code": "general", "name": "General"},
                                          "createdDate": _ts(rng)},
                           "checksum": pick(rng, HEX, 8),
                           "links": {"self": {"href": f"/claim/v1/claims/{cid}/notes"}}}})


def j_duckcreek(rng: random.Random, snip: str, _s: str) -> str:
    """A Duck Creek style policy transaction with free-text remarks."""
    kind = rng.choice(["Endorsement", "Renewal", "NewBusiness"])
    return _dump({"PolicyNumber": _policy(rng), "TransactionType": kind,
                  "EffectiveDate": _date(rng), "Premium": {"Written": _money(rng), "Currency": "USD"},
                  "Remarks": [{"Seq": 1, "Text": snip}]})


def j_policy_api(rng: random.Random, snip: str, _s: str) -> str:
    """A policy admin API answer set from an underwriting questionnaire."""
    return _dump({"policy": {"id": _policy(rng), "status": "in_force", "product": rng.choice(["auto", "home", "pet"]),
                             "underwriting": {"answers": [{"q": "prior_losses_5y", "a": str(rng.randint(0, 3))},
                                                          {"q": "uw_notes", "a": snip}]}}})


def j_fnol_chat(rng: random.Random, snip: str, _s: str) -> str:
    """A first-notice-of-loss web chat session, the claimant's turn holding the value."""
    return _dump({"session": _uuid(rng), "channel": "web_chat", "claim": _claim(rng),
                  "messages": [{"role": "assistant", "content": "I'm sorry to hear about the loss. Let's get the "
                                                                "claim started."},
                               {"role": "user", "content": snip}]})


def j_tool_result(rng: random.Random, snip: str, _s: str) -> str:
    """An agent's tool result message (chat-completions shape)."""
    return _dump({"role": "tool", "tool_call_id": f"call_{pick(rng, ALNUM, 24)}",
                  "name": rng.choice(["claims_lookup", "policy_get", "broker_config_read", "payout_status"]),
                  "content": snip})


def j_textract(rng: random.Random, snip: str, _s: str) -> str:
    """AWS Textract LINE blocks of an OCR'd claim form."""
    box = {"Width": round(rng.uniform(0.2, 0.7), 4), "Height": 0.0183, "Left": round(rng.uniform(0.05, 0.3), 4),
           "Top": round(rng.uniform(0.1, 0.9), 4)}
    return _dump({"DocumentMetadata": {"Pages": 1},
                  "Blocks": [{"BlockType": "LINE", "Confidence": round(rng.uniform(88, 99.9), 3), "Text": snip,
                              "Geometry": {"BoundingBox": box}, "Id": _uuid(rng)}]})


def j_payout(rng: random.Random, snip: str, _s: str) -> str:
    """A claim payment (payout or subrogation recovery) record."""
    return _dump({"payment": {"id": f"PAY-{digits(rng, 8)}", "claim": _claim(rng),
                              "amount": {"value": _money(rng), "currency": rng.choice(["EUR", "GBP", "USD", "INR"])},
                              "method": rng.choice(["sepa_credit", "ach", "card_push", "cheque"]), "memo": snip}})


def j_siu_event(rng: random.Random, snip: str, _s: str) -> str:
    """A fraud (SIU) investigation log event."""
    return _dump({"event": "siu.note", "ts": _ts(rng), "case": f"SIU-{digits(rng, 5)}",
                  "analyst": f"analyst_{rng.randint(1, 40)}", "score": round(rng.random(), 3), "detail": snip})


def j_estimate(rng: random.Random, snip: str, _s: str) -> str:
    """A repair-shop estimate with operation lines and shop notes."""
    year, make, model = rng.choice(VEHICLES)
    return _dump({"estimate": {"ro": f"RO-{digits(rng, 6)}", "vehicle": {"year": year, "make": make, "model": model},
                               "lines": [{"op": "R&I", "desc": "Front bumper cover", "hours": 1.2},
                                         {"op": "Refinish", "desc": "Quarter panel LT", "hours": 2.4}],
                               "notes": snip}})


def j_har(rng: random.Random, snip: str, _s: str) -> str:
    """A HAR entry captured on a broker portal, the value in the entry's comment."""
    broker = rng.choice(BROKERS)
    return _dump({"log": {"version": "1.2", "entries": [{
        "startedDateTime": _ts(rng), "time": rng.randint(40, 900),
        "request": {"method": "POST", "url": f"https://portal.{broker}.com/api/v2/claims", "httpVersion": "HTTP/2"},
        "response": {"status": rng.choice([200, 201, 401]), "content": {"mimeType": "application/json"}},
        "comment": snip}]}})


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "guidewire": j_guidewire, "duckcreek": j_duckcreek, "policy_api": j_policy_api, "fnol_chat": j_fnol_chat,
    "tool_result": j_tool_result, "textract": j_textract, "payout": j_payout, "siu_event": j_siu_event,
    "estimate_json": j_estimate, "har": j_har}


# ---- carriers: text -------------------------------------------------------------------------------------------

def t_fnol_call(rng: random.Random, snip: str, _s: str) -> str:
    """A first-notice-of-loss call transcript."""
    m = rng.randint(0, 9)
    return (f"[00:0{m}:12] Agent: Thank you for calling, I'll open a claim for you.\n"
            f"[00:0{m}:31] Caller: {snip}\n[00:0{m}:48] Agent: Got it, one moment.")


def t_adjuster_note(rng: random.Random, snip: str, _s: str) -> str:
    """A field adjuster's note."""
    return (f"ADJUSTER NOTE {_date(rng)} | {_claim(rng)} | reserve ${_money(rng)}\n"
            f"Inspected damage on site. {snip}\nNext: request photos, schedule re-inspection.")


def t_csv_export(rng: random.Random, snip: str, _s: str) -> str:
    """A claims-system CSV export, the value in a quoted notes field (RFC 4180)."""
    notes = '"' + snip.replace('"', '""') + '"'
    return (f"claim_number,loss_date,status,line,notes\n"
            f"{_claim(rng)},{_date(rng)},{rng.choice(['open', 'reopened', 'closed'])},auto,{notes}\n")


def t_email(rng: random.Random, snip: str, _s: str) -> str:
    """An e-mail with a claimant (RFC 5322 headers, plain body)."""
    claim = _claim(rng)
    return (f"Subject: Re: Your claim {claim}\nDate: Mon, {rng.randint(1, 28)} Apr 2024 09:14:02 +0000\n"
            f"Message-ID: <{pick(rng, HEX, 16)}@claims.mail>\n\nHello,\n\n{snip}\n\nKind regards,\nClaims team")


def t_underwriting(rng: random.Random, snip: str, _s: str) -> str:
    """An underwriting questionnaire, the value in an answer."""
    return (f"UNDERWRITING QUESTIONNAIRE — {_policy(rng)}\nQ3. Any losses in the past five years? "
            f"A: {rng.randint(0, 2)}\nQ7. Additional information: {snip}\nQ8. Smoke detectors fitted? A: yes")


def t_medical_bill(rng: random.Random, snip: str, _s: str) -> str:
    """A medical bill attached to an injury claim (CMS-1500 style boxes)."""
    return (f"HEALTH INSURANCE CLAIM FORM\n21. DIAGNOSIS: S13.4XXA\n24A. DOS {_date(rng)} 24D. CPT 97110 "
            f"24F. ${_money(rng)}\n19. ADDITIONAL CLAIM INFORMATION: {snip}\n28. TOTAL CHARGE ${_money(rng)}")


def t_repair_estimate(rng: random.Random, snip: str, _s: str) -> str:
    """A body-shop repair estimate in print form."""
    year, make, model = rng.choice(VEHICLES)
    return (f"PRELIMINARY ESTIMATE  RO#{digits(rng, 6)}\nVehicle: {year} {make} {model}\n"
            f"1  R&I  Rear bumper assy      1.8 hrs\n2  Refinish  Liftgate     2.1 hrs\nShop remarks: {snip}")


def t_subrogation(rng: random.Random, snip: str, _s: str) -> str:
    """A subrogation demand letter."""
    return (f"SUBROGATION DEMAND\nOur insured: file {_claim(rng)}\nAmount demanded: ${_money(rng)}\n"
            f"Please remit within 30 days. {snip}\nSincerely, Recovery Unit")


def t_runbook(rng: random.Random, snip: str, _s: str) -> str:
    """A broker integration runbook step writing a notes file through a shell heredoc."""
    broker = rng.choice(BROKERS)
    return (f"# {broker} feed setup, step {rng.randint(2, 9)}\n"
            f"cat > /etc/claims-feed/{broker}.notes <<'EOF'\n{snip}\nEOF")


def t_siu_log(rng: random.Random, snip: str, _s: str) -> str:
    """A fraud investigation application log line."""
    return f"{_ts(rng)} INFO siu.case=SIU-{digits(rng, 5)} analyst=a{rng.randint(1, 40)} msg=\"note added\" {snip}"


def t_ocr_text(rng: random.Random, snip: str, _s: str) -> str:
    """OCR plain text of a scanned claim form."""
    return (f"CLAIM FORM — PAGE {rng.randint(1, 3)}\nPolicy No. {_policy(rng)}   Date of loss {_date(rng)}\n"
            f"Describe what happened: rear-ended at a red light\n{snip}\nSignature ____________")


def t_acord_xml(rng: random.Random, snip: str, _s: str) -> str:
    """ACORD XML of a loss notice, the value in a CDATA remark."""
    return (f"<ClaimsSvcRq><ClaimsNotificationAddRq><RqUID>{_uuid(rng)}</RqUID>"
            f"<ClaimsOccurrence><LossDt>{_date(rng)}</LossDt></ClaimsOccurrence>"
            f"<RemarkText><![CDATA[{snip}]]></RemarkText></ClaimsNotificationAddRq></ClaimsSvcRq>")


def t_ticket_md(rng: random.Random, snip: str, _s: str) -> str:
    """A claims operations ticket in Markdown."""
    return (f"## {rng.choice(['OPS', 'CLAIMS', 'INT'])}-{rng.randint(100, 9999)}: broker feed failing\n\n"
            f"**Priority:** P{rng.randint(1, 3)}\n\n{snip}\n\n- [ ] rotate after the fix")


def t_sftp_log(rng: random.Random, snip: str, _s: str) -> str:
    """An SFTP integration log of a broker bordereau drop."""
    broker = rng.choice(BROKERS)
    return (f"{_ts(rng)} sftp-sync[{rng.randint(100, 9999)}]: connecting to sftp.{broker}.com:22\n"
            f"{_ts(rng)} sftp-sync: {snip}\n{_ts(rng)} sftp-sync: uploaded bordereau_{_date(rng)}.csv")


def t_transcript(rng: random.Random, snip: str, _s: str) -> str:
    """An agent/user transcript, the value in the agent's turn."""
    return f"user: can you check where my claim {_claim(rng)} stands?\nassistant: {snip}"


TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "fnol_call": t_fnol_call, "adjuster_note": t_adjuster_note, "csv_export": t_csv_export, "email_thread": t_email,
    "underwriting": t_underwriting, "medical_bill": t_medical_bill, "repair_estimate": t_repair_estimate,
    "subrogation": t_subrogation, "runbook": t_runbook, "siu_log": t_siu_log, "ocr_text": t_ocr_text,
    "acord_xml": t_acord_xml, "ticket_md": t_ticket_md, "sftp_log": t_sftp_log, "transcript": t_transcript}


# ---- the agent's messages in the user's language --------------------------------------------------------------

LANG_ROWS = [
    ("en", "Thanks, I've added this to your claim file. {label}: {v}",
     "Password", "Email", "Payout IBAN", "Card number", "API key"),
    ("de", "Danke, ich habe es zu Ihrer Schadenakte hinzugefügt. {label}: {v}",
     "Passwort", "E-Mail", "IBAN für die Auszahlung", "Kartennummer", "API-Schlüssel"),
    ("fr", "Merci, je l'ai ajouté à votre dossier de sinistre. {label} : {v}",
     "Mot de passe", "Adresse e-mail", "IBAN pour le règlement", "Numéro de carte", "Clé API"),
    ("es", "Gracias, lo he añadido a su expediente de siniestro. {label}: {v}",
     "Contraseña", "Correo electrónico", "IBAN para el pago", "Número de tarjeta", "Clave de API"),
    ("it", "Grazie, l'ho aggiunto alla sua pratica di sinistro. {label}: {v}",
     "Password", "Indirizzo e-mail", "IBAN per il rimborso", "Numero della carta", "Chiave API"),
    ("pt", "Obrigado, adicionei ao seu processo de sinistro. {label}: {v}",
     "Senha", "E-mail", "IBAN para a indemnização", "Número do cartão", "Chave de API"),
    ("nl", "Bedankt, ik heb dit aan uw schadedossier toegevoegd. {label}: {v}",
     "Wachtwoord", "E-mailadres", "IBAN voor de uitkering", "Kaartnummer", "API-sleutel"),
    ("pl", "Dziękuję, dodałem to do akt szkody. {label}: {v}",
     "Hasło", "Adres e-mail", "IBAN do wypłaty", "Numer karty", "Klucz API"),
    ("sv", "Tack, jag har lagt till det i ditt skadeärende. {label}: {v}",
     "Lösenord", "E-postadress", "IBAN för utbetalningen", "Kortnummer", "API-nyckel"),
    ("da", "Tak, jeg har tilføjet det til din skadesag. {label}: {v}",
     "Adgangskode", "E-mailadresse", "IBAN til udbetalingen", "Kortnummer", "API-nøgle"),
    ("nb", "Takk, jeg har lagt det til i skadesaken din. {label}: {v}",
     "Passord", "E-postadresse", "IBAN for utbetalingen", "Kortnummer", "API-nøkkel"),
    ("fi", "Kiitos, lisäsin tämän vahinkoasiaasi. {label}: {v}",
     "Salasana", "Sähköpostiosoite", "IBAN korvauksen maksuun", "Kortin numero", "API-avain"),
    ("cs", "Děkuji, přidal jsem to k vaší pojistné události. {label}: {v}",
     "Heslo", "E-mailová adresa", "IBAN pro výplatu", "Číslo karty", "Klíč API"),
    ("tr", "Teşekkürler, bunu hasar dosyanıza ekledim. {label}: {v}",
     "Şifre", "E-posta adresi", "Ödeme için IBAN", "Kart numarası", "API anahtarı"),
    ("ru", "Спасибо, я добавил это в ваше страховое дело. {label}: {v}",
     "Пароль", "Электронная почта", "IBAN для выплаты", "Номер карты", "Ключ API"),
    ("uk", "Дякую, я додав це до вашої страхової справи. {label}: {v}",
     "Пароль", "Електронна пошта", "IBAN для виплати", "Номер картки", "Ключ API"),
    ("el", "Ευχαριστώ, το πρόσθεσα στον φάκελο της ζημιάς σας. {label}: {v}",
     "Κωδικός πρόσβασης", "Email", "IBAN για την αποζημίωση", "Αριθμός κάρτας", "Κλειδί API"),
    ("ja", "ありがとうございます。保険金請求のファイルに追加しました。{label}：{v}",
     "パスワード", "メールアドレス", "支払先IBAN", "カード番号", "APIキー"),
    ("ko", "감사합니다. 보험금 청구 건에 추가했습니다. {label}: {v}",
     "비밀번호", "이메일", "지급 계좌 IBAN", "카드 번호", "API 키"),
    ("zh", "谢谢，我已将其添加到您的理赔档案中。{label}：{v}",
     "密码", "电子邮箱", "赔付账户IBAN", "卡号", "API密钥"),
    ("hi", "धन्यवाद, मैंने इसे आपकी दावा फ़ाइल में जोड़ दिया है। {label}: {v}",
     "पासवर्ड", "ईमेल", "भुगतान के लिए IBAN", "कार्ड नंबर", "API कुंजी"),
    ("ar", "شكرًا، أضفت ذلك إلى ملف مطالبتك. {label}: {v}",
     "كلمة المرور", "البريد الإلكتروني", "رقم IBAN للتعويض", "رقم البطاقة", "مفتاح API"),
    ("he", "תודה, הוספתי את זה לתיק התביעה שלך. {label}: {v}",
     "סיסמה", "אימייל", "IBAN לתשלום", "מספר כרטיס", "מפתח API"),
    ("id", "Terima kasih, saya sudah menambahkannya ke berkas klaim Anda. {label}: {v}",
     "Kata sandi", "Email", "IBAN untuk pembayaran", "Nomor kartu", "Kunci API"),
    ("vi", "Cảm ơn, tôi đã thêm thông tin này vào hồ sơ bồi thường của bạn. {label}: {v}",
     "Mật khẩu", "Email", "IBAN nhận bồi thường", "Số thẻ", "Khóa API"),
    ("th", "ขอบคุณครับ ผมได้เพิ่มข้อมูลนี้ในแฟ้มเคลมของคุณแล้ว {label}: {v}",
     "รหัสผ่าน", "อีเมล", "IBAN สำหรับรับค่าสินไหม", "หมายเลขบัตร", "คีย์ API"),
    ("ro", "Mulțumesc, am adăugat asta la dosarul dumneavoastră de daună. {label}: {v}",
     "Parolă", "Adresă de e-mail", "IBAN pentru despăgubire", "Numărul cardului", "Cheie API"),
    ("hu", "Köszönöm, hozzáadtam a kárügyéhez. {label}: {v}",
     "Jelszó", "E-mail-cím", "IBAN a kifizetéshez", "Kártyaszám", "API-kulcs"),
]
CONCEPTS = ("password", "email", "iban", "card", "key")


def agent_says(i: int, concept: str, value: str) -> tuple[str, str]:
    """The agent's message for case `i` in the (i // 4)-th language, the label in that language."""
    row = LANG_ROWS[i // 4 % len(LANG_ROWS)]
    label = row[2 + CONCEPTS.index(concept)]
    return f"agent_{row[0]}", row[1].format(label=label, v=value)


# ---- secrets --------------------------------------------------------------------------------------------------

WORDS = ["Harbor", "tulpe", "Granite", "soleil", "Mistral", "fjord", "Kiwi", "lantern", "Orchid", "brisa",
         "Falke", "cobalt", "Juniper", "nebbia", "Saffron", "otter"]
SYMBOLS = "!#$%&*+-=?^_~"
URI_SAFE = ALNUM + "-._~"


def password_value(rng: random.Random) -> str:
    """A human-chosen password (word, digits, a symbol) or a generated one; never a quote, space or backslash."""
    if rng.random() < 0.5:
        return f"{rng.choice(WORDS)}{rng.choice(SYMBOLS)}{digits(rng, rng.randint(2, 4))}{rng.choice(WORDS)}"
    return pick(rng, ALNUM + SYMBOLS, rng.randint(12, 20))


def v_password(rng: random.Random, i: int) -> Value:
    pw = password_value(rng)
    user = f"{rng.choice(['svc', 'claims', 'feed', 'uw'])}_{rng.choice(BROKERS).split('-')[0]}"
    if i % 4 == 1:
        style, snip = agent_says(i, "password", pw)
        return style, pw, snip, False
    forms = [
        ("sftp", f"SFTP drop for bordereaux: host sftp.{rng.choice(BROKERS)}.com, user {user}, password: {pw}"),
        ("portal_temp", f"Temporary password for the claimant portal: {pw} (expires in 24h, must be changed)"),
        ("caller", f"my login for the app is {user} and the password is {pw} if that helps"),
        ("json_cfg", f'{{"sftp": {{"host": "sftp.{rng.choice(BROKERS)}.com", "username": "{user}", '
                     f'"password": "{pw}"}}}}'),
        ("env", f"GW_INTEGRATION_USER={user}\nGW_INTEGRATION_PASSWORD={pw}"),
        ("lftp", f"lftp -u {user},{pw} sftp://sftp.{rng.choice(BROKERS)}.com"),
        ("de_note", f"Zugang Maklerportal: Benutzer {user}, Kennwort {pw}"),
        ("fr_note", f"Accès extranet courtier — identifiant {user}, mot de passe : {pw}"),
        ("es_note", f"Acceso al portal del perito: usuario {user}, contraseña {pw}"),
        ("netuse", f"net use \\\\fs01\\claims-scans /user:CORP\\{user} {pw}"),
    ]
    style, snip = forms[i % len(forms)]
    return style, pw, snip, False


def aws_pair(rng: random.Random) -> tuple[str, str]:
    """An IAM access key id (AKIA long-term, ASIA temporary; base32 body) and its 40-character secret."""
    return rng.choice(["AKIA", "ASIA"]) + pick(rng, BASE32, 16), pick(rng, B64, 40)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    kid, sec = aws_pair(rng)
    forms = [
        ("credentials_file", f"[claims-docs]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}"),
        ("env", f"export AWS_ACCESS_KEY_ID={kid}\nexport AWS_SECRET_ACCESS_KEY={sec}"),
        ("boto3", f'boto3.client("s3", aws_access_key_id="{kid}", aws_secret_access_key="{sec}")'),
        ("note", f"photos bucket creds for the desk adjusters: {kid} / {sec}"),
        ("terraform", f'provider "aws" {{\n  access_key = "{kid}"\n  secret_key = "{sec}"\n}}'),
        ("iam_csv", f"Access key ID,Secret access key\n{kid},{sec}"),
        ("json", f'{{"AccessKeyId": "{kid}", "SecretAccessKey": "{sec}"}}'),
        ("labelled", f"AWS secret key for the Textract OCR job: {sec}"),
        ("de_note", f"Zugangsschlüssel {kid}, geheimer Schlüssel {sec} (Schadenfotos-Bucket)"),
    ]
    style, snip = forms[i % len(forms)]
    return style, sec, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    provider = ["slack", "discord", "teams", "power_automate", "google_chat", "mattermost", "zapier"][i % 7]
    if provider == "slack":
        tok = pick(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, UPPER + string.digits, 8)}/" \
              f"B{pick(rng, UPPER + string.digits, 10)}/{tok}"
    elif provider == "discord":
        tok = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{tok}"
    elif provider == "teams":
        tok = pick(rng, HEX, 32)
        url = (f"https://{rng.choice(BROKERS).replace('-', '')}.webhook.office.com/webhookb2/{_uuid(rng)}@"
               f"{_uuid(rng)}/IncomingWebhook/{tok}/{_uuid(rng)}")
    elif provider == "power_automate":
        tok = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}")
    elif provider == "google_chat":
        tok = pick(rng, URLSAFE, 43)
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages"
               f"?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={tok}")
    elif provider == "mattermost":
        tok = pick(rng, LOWNUM, 26)
        url = f"https://chat.{rng.choice(BROKERS)}.com/hooks/{tok}"
    else:
        tok = pick(rng, LOWNUM, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{rng.randint(1000000, 19999999)}/{tok}/"
    leads = [f"FNOL alerts go to #claims-intake via {url}",
             f'{{"notify": {{"type": "{provider}", "url": "{url}"}}}}',
             f"CLAIMS_WEBHOOK_URL={url}",
             f"curl -X POST -H 'Content-Type: application/json' -d '{{\"text\":\"new FNOL\"}}' {url}",
             f"Webhook für Großschäden: {url}",
             f"webhook des sinistres graves : {url}"]
    return f"{provider}_{i // 7 % len(leads)}", tok, leads[i // 7 % len(leads)], False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    sec = "whsec_" + pick(rng, ALNUM, 32)
    forms = [
        ("env", f"STRIPE_WEBHOOK_SECRET={sec}"),
        ("cli", f"> Ready! You are using Stripe API Version [2024-04-10]. Your webhook signing secret is {sec} "
                f"(^C to quit)"),
        ("code", f'event = stripe.Webhook.construct_event(payload, sig_header, "{sec}")'),
        ("dashboard", f"Endpoint https://payouts.{rng.choice(BROKERS)}.com/stripe/events — Signing secret {sec}"),
        ("json", f'{{"stripe": {{"endpoint_secret": "{sec}"}}}}'),
        ("note", f"premium-refund webhook: signing secret is {sec}, do not share"),
    ]
    style, snip = forms[i % len(forms)]
    return style, sec, snip, False


def v_connection_string(rng: random.Random, i: int) -> Value:
    broker = rng.choice(BROKERS)
    user = f"claims_{rng.choice(['app', 'ro', 'etl', 'svc'])}"
    pw = pick(rng, URI_SAFE, rng.randint(14, 24))
    form = i % 9
    if form == 0:
        return "postgres_uri", pw, f"DATABASE_URL=postgresql://{user}:{pw}@db.{broker}.internal:5432/claims", False
    if form == 1:
        key = base64.b64encode(rng.randbytes(64)).decode()
        return "azure_storage", key, (f"DefaultEndpointsProtocol=https;AccountName={broker.replace('-', '')}docs;"
                                      f"AccountKey={key};EndpointSuffix=core.windows.net"), False
    if form == 2:
        return "adonet", pw, (f"Server=tcp:sql-{broker}.database.windows.net,1433;Database=ClaimCenter;"
                              f"User Id={user};Password={pw};Encrypt=True;"), False
    if form == 3:
        return "jdbc", pw, (f"jdbc:sqlserver://gwdb01:1433;databaseName=PolicyCenter;user={user};password={pw};"
                            f"encrypt=true"), False
    if form == 4:
        return "mongodb", pw, f"mongodb+srv://{user}:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/fnol", False
    if form == 5:
        key = base64.b64encode(rng.randbytes(32)).decode()
        return "servicebus", key, (f"Endpoint=sb://{broker}-events.servicebus.windows.net/;"
                                   f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key}"), False
    if form == 6:
        return "redis", pw, f"REDIS_URL=rediss://:{pw}@cache-{broker}.redis.cache.windows.net:6380/0", False
    if form == 7:
        return "sftp_uri", pw, f"bordereau target: sftp://{user}:{pw}@sftp.{broker}.com:22/inbound", False
    raw = pw[:6] + "@" + pw[6:]
    enc = quote(raw, safe="")
    return "pct_password", enc, f"postgres://{user}:{enc}@pg-{broker}:5432/uw_scoring", False


def generic_key(rng: random.Random) -> str:
    """An unprefixed vendor key as vendors print them: hex, base62 or base64url of a fixed length."""
    return rng.choice([lambda: pick(rng, HEX, 32), lambda: pick(rng, ALNUM, 40), lambda: pick(rng, URLSAFE, 48),
                       lambda: pick(rng, ALNUM, 32)])()


def v_labelled_key(rng: random.Random, i: int) -> Value:
    key = generic_key(rng)
    if i % 4 == 1:
        style, snip = agent_says(i, "key", key)
        return style, key, snip, False
    vendor = rng.choice(["CCC ONE", "Mitchell", "LexisNexis CLUE", "Verisk ISO ClaimSearch", "Solera Audatex",
                         "the telematics vendor", "the medical bill review service"])
    forms = [("api_key", f"API key for {vendor}: {key}"), ("header", f"x-api-key: {key}"),
             ("secret_key", f"Secret key = {key}"), ("yaml", f"vendors:\n  rating:\n    api_key: {key}"),
             ("de", f"API-Schlüssel ({vendor}): {key}"), ("fr", f"Clé d'API du prestataire : {key}"),
             ("access_token", f"access token is {key}")]
    style, snip = forms[i % len(forms)]
    return style, key, snip, False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def _disguise_base(rng: random.Random) -> str:
    return rng.choice([lambda: aws_pair(rng)[1], lambda: crc_token(rng, "ghp_"),
                       lambda: "sk_live_" + pick(rng, ALNUM, 24), lambda: "whsec_" + pick(rng, ALNUM, 32),
                       lambda: "SG." + pick(rng, URLSAFE, 22) + "." + pick(rng, URLSAFE, 43)])()


def v_disguised(rng: random.Random, i: int) -> Value:
    base = _disguise_base(rng)
    how = ["zero_width", "fullwidth", "pct", "json_u"][i % 4]
    if how == "zero_width":
        pos = rng.randint(4, len(base) - 4)
        sec = base[:pos] + rng.choice(ZW) + base[pos:]
    elif how == "fullwidth":
        sec = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in base)
    elif how == "pct":
        sec = "".join(f"%{ord(c):02X}" if (not c.isalnum() or rng.random() < 0.4) else c for c in base)
    else:
        sec = "".join(f"\\u{ord(c):04x}" if rng.random() < 0.4 else c for c in base)
        return how, sec, f'tool output: {{"integration": "broker-sync", "token": "{sec}"}}', True
    leads = [f"token: {sec}", f"api key {sec}", f"https://api.claims-hub.io/v1/ingest?api_key={sec}",
             f"Schlüssel: {sec}", f"the vendor key is {sec}"]
    return how, sec, leads[i // 4 % len(leads)], False


# ---- personal data --------------------------------------------------------------------------------------------

FIRST = ["maria.keller", "j.okafor", "anil.sharma", "sofia.rossi", "lukas.weber", "chloe.martin", "ahmed.hassan",
         "yuki.sato", "olga.nowak", "priya.nair", "tom.becker", "ines.moreau", "diego.fernandez", "emma.lindqvist",
         "kwame.mensah", "li.wei"]
DOMAINS = ["gmail.com", "outlook.com", "yahoo.co.uk", "web.de", "orange.fr", "libero.it", "hotmail.es",
           "rediffmail.com", "icloud.com", "gmx.de", "btinternet.com", "free.fr", "proton.me", "northgate-brokers.com",
           "harborline-autobody.com"]
IDN = ["josé.garcía@correo.es", "müller.jürgen@gmx.de", "δημήτρης@παράδειγμα.ελ", "用户@例子.公司",
       "юлия@почта.рф", "françois@société.fr"]


def v_email(rng: random.Random, i: int) -> Value:
    local = rng.choice(FIRST)
    mail = f"{local}{rng.choice(['', str(rng.randint(1, 99)), '+claims'])}@{rng.choice(DOMAINS)}"
    if i % 20 == 7:
        mail = rng.choice(IDN)
    if i % 4 == 1:
        style, snip = agent_says(i, "email", mail)
        return style, mail, snip, False
    forms = [("claimant", f"Claimant email: {mail}"), ("reply_to", f"Reply-To: {mail}"),
             ("mailto", f"<a href=\"mailto:{mail}\">contact the insured</a>"),
             ("caller", f"you can email me the forms at {mail}"), ("de", f"E-Mail des Versicherungsnehmers: {mail}"),
             ("fr", f"Courriel de l'assuré : {mail}"), ("es", f"correo del asegurado: {mail}"),
             ("cc", f"cc: {mail}; adjuster desk")]
    style, snip = forms[i % len(forms)]
    return style, mail, snip, False


PhoneForm = tuple[str, Callable[[random.Random], str]]


def phone_case(rng: random.Random, i: int, forms: list[PhoneForm], contexts: list[str]) -> Value:
    """Form `i` of the country's print forms in one of its context sentences."""
    style, make = forms[i % len(forms)]
    number = make(rng)
    return style, number, rng.choice(contexts).format(n=number), False


NANP_AREAS = ["212", "312", "415", "617", "713", "305", "404", "206", "303", "602", "514", "416", "604", "403",
              "613", "214", "702", "503", "919", "813", "720", "647", "778", "438"]


def _nanp(r: random.Random) -> tuple[str, str, str]:
    exchange = f"{r.randint(2, 9)}{digits(r, 2)}"
    while exchange[1:] == "11" or exchange == "555":
        exchange = f"{r.randint(2, 9)}{digits(r, 2)}"
    return r.choice(NANP_AREAS), exchange, digits(r, 4)


US_FORMS: list[PhoneForm] = [
    ("paren", lambda r: "({}) {}-{}".format(*_nanp(r))), ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
    ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))), ("plus1", lambda r: "+1 {} {} {}".format(*_nanp(r))),
    ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r))),
    ("plus1_paren", lambda r: "+1 ({}) {}-{}".format(*_nanp(r)))]
US_CTX = ["Cell: {n}", "Phone {n}", "Call back number: {n}", "Insured's mobile is {n}",
          "Claimant: reach at {n} after 5pm", "Número de celular: {n}", "Cellulaire : {n}",
          "tow driver called from {n}"]

UK_AREAS = ["0161", "0121", "0113", "0141", "0131", "0117", "0151"]
UK_FORMS: list[PhoneForm] = [
    ("mobile", lambda r: f"07{r.choice('1234589')}{digits(r, 2)} {digits(r, 6)}"),
    ("london", lambda r: f"020 {r.choice('38')}{digits(r, 3)} {digits(r, 4)}"),
    ("city", lambda r: f"{r.choice(UK_AREAS)} {r.randint(2, 9)}{digits(r, 2)} {digits(r, 4)}"),
    ("plus44_mobile", lambda r: f"+44 7{r.choice('1234589')}{digits(r, 2)} {digits(r, 6)}"),
    ("plus44_zero", lambda r: f"+44 (0)20 {r.choice('38')}{digits(r, 3)} {digits(r, 4)}"),
    ("cardiff", lambda r: f"029 20{digits(r, 2)} {digits(r, 4)}"),
    ("mobile_compact", lambda r: f"07{r.choice('1234589')}{digits(r, 8)}")]
UK_CTX = ["Mobile: {n}", "Tel: {n}", "Policyholder can be reached on {n}", "Call me back on {n}",
          "Home phone {n}", "Contact number — {n}", "Third party driver's number: {n}"]


def _fr(r: random.Random, head: str) -> list[str]:
    return [head] + [digits(r, 2) for _ in range(4)]


FR_FORMS: list[PhoneForm] = [
    ("mobile_space", lambda r: " ".join(_fr(r, "0" + r.choice("67")))),
    ("geo_space", lambda r: " ".join(_fr(r, "0" + r.choice("12345")))),
    ("dots", lambda r: ".".join(_fr(r, "06"))),
    ("plus33", lambda r: "+33 " + r.choice("67") + " " + " ".join(digits(r, 2) for _ in range(4))),
    ("plus33_zero", lambda r: "+33 (0)1 " + " ".join(digits(r, 2) for _ in range(4))),
    ("compact", lambda r: "0" + r.choice("679") + digits(r, 8)),
    ("box", lambda r: "0033 " + r.choice("12345") + " " + " ".join(digits(r, 2) for _ in range(4)))]
FR_CTX = ["Portable : {n}", "Tél. {n}", "Joignable au {n}", "Numéro de téléphone de l'assuré : {n}",
          "Rappeler le sinistré au {n}", "Mobile {n}", "tél : {n} (après 18h)"]

DE_AREAS = [("030", 8), ("089", 7), ("040", 8), ("0221", 7), ("069", 8), ("0711", 7), ("0211", 7), ("0341", 7)]
DE_MOBILE = [("0151", 8), ("0152", 8), ("0160", 7), ("0170", 7), ("0171", 7), ("0172", 7), ("0176", 8), ("0179", 7)]


def _de(r: random.Random, table: list[tuple[str, int]]) -> tuple[str, str]:
    code, n = r.choice(table)
    return code, f"{r.randint(2, 9)}{digits(r, n - 1)}"


DE_FORMS: list[PhoneForm] = [
    ("geo_space", lambda r: "{} {}".format(*_de(r, DE_AREAS))),
    ("geo_slash", lambda r: "{}/{}".format(*_de(r, DE_AREAS))),
    ("mobile", lambda r: "{} {}".format(*_de(r, DE_MOBILE))),
    ("plus49_mobile", lambda r: "+49 {} {}".format(*(lambda c, s: (c[1:], s))(*_de(r, DE_MOBILE)))),
    ("plus49_zero", lambda r: "+49 (0){} {}".format(*(lambda c, s: (c[1:], s))(*_de(r, DE_AREAS)))),
    ("paren", lambda r: "({}) {}".format(*_de(r, DE_AREAS))),
    ("mobile_dash", lambda r: "{}-{}".format(*_de(r, DE_MOBILE))),
    ("zero049", lambda r: "0049 {} {}".format(*(lambda c, s: (c[1:], s))(*_de(r, DE_MOBILE))))]
DE_CTX = ["Telefon: {n}", "Rückruf bitte unter {n}", "Versicherungsnehmer erreichbar unter {n}", "Handy {n}",
          "Tel. {n} (ab 17 Uhr)", "Mobil: {n}", "Der Geschädigte ist unter {n} zu erreichen."]

IN_FORMS: list[PhoneForm] = [
    ("plus91_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
    ("plus91_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}"),
    ("zero_mobile", lambda r: f"0{r.choice('6789')}{digits(r, 9)}"),
    ("mobile", lambda r: f"{r.choice('6789')}{digits(r, 9)}"),
    ("mumbai", lambda r: f"022 2{digits(r, 3)} {digits(r, 4)}"),
    ("delhi", lambda r: f"011-2{digits(r, 7)}"),
    ("plus91_geo", lambda r: f"+91 80 4{digits(r, 3)} {digits(r, 4)}"),
    ("chennai", lambda r: f"044-2{digits(r, 3)} {digits(r, 4)}")]
IN_CTX = ["Mobile No.: {n}", "Contact no. {n}", "Insured's mobile {n}", "मोबाइल नंबर: {n}", "फ़ोन {n}",
          "WhatsApp on {n}", "Kindly call on {n}", "दावेदार का नंबर {n}"]


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


def ssn_parts(rng: random.Random) -> tuple[str, str, str]:
    """Area 001-899 but 666, group 01-99, serial 0001-9999 (the SSA's rules)."""
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = ssn_parts(rng)
    forms = [("dash", f"{a}-{g}-{s}"), ("space", f"{a} {g} {s}"), ("compact", f"{a}{g}{s}"), ("dash", f"{a}-{g}-{s}")]
    style, ssn = forms[i % len(forms)]
    ctx = ["SSN: {v}", "Social Security Number {v}", "1a. INSURED'S I.D. NUMBER {v}", "SS# {v} (for the 1099)",
           "Número de Seguro Social: {v}", "claimant gave her social as {v}", "W-9 TIN (SSN) {v}",
           "Injured worker — SSN {v}"]
    return style, ssn, ctx[i // 4 % len(ctx)].format(v=ssn), False


CARD_BRANDS = ["visa", "mc", "mc2", "amex", "discover", "discover65", "jcb", "diners", "unionpay"]


def card_number(rng: random.Random, brand: str) -> str:
    """A number in the brand's IIN range and length (ISO/IEC 7812), completed with the Luhn digit."""
    if brand == "visa":
        head, length = "4", 16
    elif brand == "mc":
        head, length = str(rng.randint(51, 55)), 16
    elif brand == "mc2":
        head, length = str(rng.randint(2221, 2720)), 16
    elif brand == "amex":
        head, length = rng.choice(["34", "37"]), 15
    elif brand == "discover":
        head, length = "6011", 16
    elif brand == "discover65":
        head, length = "65", 16
    elif brand == "jcb":
        head, length = str(rng.randint(3528, 3589)), 16
    elif brand == "diners":
        head, length = "36", 14
    else:
        head, length = "62", 16
    partial = head + digits(rng, length - len(head) - 1)
    return partial + luhn_digit(partial)


def v_card(rng: random.Random, i: int) -> Value:
    brand = CARD_BRANDS[i % len(CARD_BRANDS)]
    number = card_number(rng, brand)
    shown = [group_card(number, " "), group_card(number, "-"), number][i // 9 % 3]
    if i % 4 == 1:
        style, snip = agent_says(i, "card", shown)
        return f"{brand}_{style}", shown, snip, False
    ctx = ["Refund to card {v}", "Premium paid by card {v}, exp 09/27", "the card number is {v}",
           "Kartennummer für die Rückerstattung: {v}", "carte bancaire n° {v}", "card_on_file={v}",
           "Payout (push to debit) — card {v}", "número de tarjeta {v}"]
    return brand, shown, rng.choice(ctx).format(v=shown), False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
             "NL": "4a10n", "BE": "3n7n2n", "CH": "5n12c", "AT": "5n11n", "PL": "8n16n", "PT": "4n4n11n2n",
             "IE": "4a6n8n", "SE": "3n16n1n", "DK": "4n9n1n", "NO": "4n6n1n", "FI": "3n11n", "LU": "3n13c"}
IBAN_CTX = ["IBAN: {v}", "Please pay the settlement to IBAN {v}", "Bankverbindung für die Regulierung: {v}",
            "IBAN du bénéficiaire : {v}", "cuenta IBAN {v}", "conto IBAN per il risarcimento {v}",
            "subrogation recovery to our account {v}", "rekeningnummer (IBAN) {v}"]


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    body = bban(rng, IBAN_BBAN[country])
    compact = country + iban_check(country, body) + body
    shown = group(compact, 4, " ") if i % 3 != 2 else compact
    if i % 4 == 1:
        style, snip = agent_says(i, "iban", shown)
        return f"{country}_{style}", shown, snip, False
    return country, shown, rng.choice(IBAN_CTX).format(v=shown), False


# ---- further secrets ------------------------------------------------------------------------------------------

def jwt_value(rng: random.Random) -> str:
    """A signed JWT (RFC 7519): base64url header, claims of a policy API, and an HS256 or RS256 signature."""
    alg = rng.choice(["HS256", "RS256"])
    head = {"alg": alg, "typ": "JWT"} | ({"kid": pick(rng, HEX, 16)} if alg == "RS256" else {})
    claims = {"iss": f"https://auth.{rng.choice(BROKERS)}.com", "sub": _uuid(rng), "aud": "policy-api",
              "scope": rng.choice(["claims:read claims:write", "policy:read", "payouts:approve"]),
              "iat": 1710000000 + rng.randint(0, 10**7)}
    claims["exp"] = claims["iat"] + 3600
    sig = rng.randbytes(32 if alg == "HS256" else 256)
    return ".".join([b64url(_dump(head).encode()), b64url(_dump(claims).encode()), b64url(sig)])


def v_jwt(rng: random.Random, i: int) -> Value:
    tok = jwt_value(rng)
    forms = [("oauth_json", f'{{"access_token": "{tok}", "token_type": "Bearer", "expires_in": 3600}}'),
             ("id_token", f"redirect: https://portal.claims.app/callback#id_token={tok}&state=af0ifjsldkj"),
             ("cookie", f"Cookie: broker_jwt={tok}"), ("env", f"POLICY_API_TOKEN={tok}"),
             ("note", f"token I used for the policy API test: {tok}")]
    style, snip = forms[i % len(forms)]
    return style, tok, snip, False


def v_auth_header(rng: random.Random, i: int) -> Value:
    kind = i % 3
    if kind == 0:
        cred = base64.b64encode(f"{rng.choice(['svc_fnol', 'broker_api', 'uw_batch'])}:{password_value(rng)}"
                                .encode()).decode()
        scheme = "Basic"
    elif kind == 1:
        cred = pick(rng, URLSAFE, rng.choice([32, 40, 64]))
        scheme = "Bearer"
    else:
        cred = base64.b64encode(f"{rng.choice(FIRST)}:{password_value(rng)}".encode()).decode()
        scheme = "Basic"
    leads = [f"Authorization: {scheme} {cred}", f"curl -H 'Authorization: {scheme} {cred}' https://api.policy.io/v3",
             f'"headers": {{"Authorization": "{scheme} {cred}"}}', f"Proxy-Authorization: {scheme} {cred}",
             f"> GET /claims/v1/claims HTTP/1.1\n> Authorization: {scheme} {cred}"]
    return f"{scheme.lower()}_{i // 3 % len(leads)}", cred, leads[i // 3 % len(leads)], False


def v_session_cookie(rng: random.Random, i: int) -> Value:
    forms = [("JSESSIONID", lambda: pick(rng, "0123456789ABCDEF", 32) + rng.choice(["", ".node1", ".gw-cc-02"])),
             ("ASP.NET_SessionId", lambda: pick(rng, "abcdefghijklmnopqrstuvwxyz012345", 24)),
             ("connect.sid", lambda: "s%3A" + pick(rng, URLSAFE, 32) + "." + pick(rng, ALNUM, 43)),
             ("PHPSESSID", lambda: pick(rng, "0123456789abcdefghijklmnopqrstuv", 26)),
             ("sessionid", lambda: pick(rng, LOWNUM, 32)), ("_claims_portal_session", lambda: pick(rng, HEX, 32))]
    name, make = forms[i % len(forms)]
    val = make()
    leads = [f"Set-Cookie: {name}={val}; Path=/; Secure; HttpOnly", f"Cookie: {name}={val}",
             f"curl -b '{name}={val}' https://portal.claims.app/fnol", f'{{"name": "{name}", "value": "{val}"}}']
    return f"{name}_{i // 6 % 4}", val, leads[i // 6 % 4], False


def v_private_key(rng: random.Random, i: int) -> Value:
    form = i % 4
    if form == 0:
        key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode().strip()
        return "pkcs8", pem, f"sftp_key.pem for the broker drop:\n{pem}", False
    if form == 1:
        key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption()).decode().strip()
        return "sec1", pem, f"$ cat signing.key\n{pem}", False
    if form == 2:
        seed = rng.randbytes(32)
        pub = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        check = rng.randbytes(4)
        blob = openssh_ed25519_blob(seed, pub, check, b"claims-feed@sftp")
        body = group(base64.b64encode(blob).decode(), 70, "\n")
        pem = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
        return "openssh", pem, f"~/.ssh/id_ed25519 on the sync host:\n{pem}", False
    key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    sa = {"type": "service_account", "project_id": f"claims-ocr-{rng.randint(100, 999)}",
          "private_key_id": pick(rng, HEX, 40), "private_key": pem,
          "client_email": f"ocr-runner@claims-ocr-{rng.randint(100, 999)}.iam.gserviceaccount.com"}
    return "gcp_sa", pem, _dump(sa), True


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, BASE32, rng.choice([16, 32]))
    issuer = rng.choice(["BrokerPortal", "ClaimCenter", "Northgate", "UW-Workbench"])
    user = rng.choice(["adjuster17", "uw.desk", "siu.analyst", "broker.ops"])
    if i % 3 == 0:
        uri = f"otpauth://totp/{issuer}:{user}?secret={seed}&issuer={issuer}&algorithm=SHA1&digits=6&period=30"
        return "otpauth", seed, f"MFA enrolment QR decodes to {uri}", False
    if i % 3 == 1:
        shown = group(seed.lower(), 4, " ")
        return "setup_key", shown, f"Can't scan the code? Enter this setup key: {shown}", False
    return "labelled", seed, f"{issuer} TOTP secret for the shared desk account: {seed}", False


def v_recovery_code(rng: random.Random, i: int) -> Value:
    form = i % 3
    if form == 0:
        code = f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}"
    elif form == 1:
        code = f"{digits(rng, 4)} {digits(rng, 4)}"
    else:
        code = "-".join(pick(rng, UPPER + string.digits, 4) for _ in range(3))
    ctx = ["recovery code: {v}", "Backup code {v} (one-time use)", "Wiederherstellungscode: {v}",
           "code de récupération : {v}", "código de recuperación {v}", "use recovery code {v} if the phone is lost"]
    return ["hex55", "digits8", "alnum12"][form], code, ctx[i // 3 % len(ctx)].format(v=code), False


PROVIDER_LEADS = ["{e}={v}", "key: {v}", '"api_key": "{v}"', "export {e}={v}", "found in the broker config: {v}",
                  "client = Client(api_key=\"{v}\")", "secret {v}"]


def provider(env: str, make: Callable[[random.Random], str]) -> Callable[[random.Random, int], Value]:
    """A provider key kind: its documented shape in one of the usual leads."""
    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        lead = PROVIDER_LEADS[i % len(PROVIDER_LEADS)]
        return f"lead{i % len(PROVIDER_LEADS)}", value, lead.format(e=env, v=value), False
    return gen


def github_token(rng: random.Random) -> str:
    if rng.random() < 0.25:
        return f"github_pat_{pick(rng, ALNUM, 22)}_{pick(rng, ALNUM, 59)}"
    return crc_token(rng, rng.choice(["ghp_", "gho_", "ghs_", "ghu_"]))


def openai_key(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"sk-{pick(rng, ALNUM, 20)}T3BlbkFJ{pick(rng, ALNUM, 20)}"
    return f"sk-proj-{pick(rng, URLSAFE, 74)}T3BlbkFJ{pick(rng, URLSAFE, 74)}"


def slack_token(rng: random.Random) -> str:
    if rng.random() < 0.6:
        return f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    return f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}"


PROVIDERS = {
    "github_token": provider("GITHUB_TOKEN", github_token),
    "openai_key": provider("OPENAI_API_KEY", openai_key),
    "anthropic_key": provider("ANTHROPIC_API_KEY", lambda r: f"sk-ant-api03-{pick(r, URLSAFE, 93)}AA"),
    "stripe_secret_key": provider("STRIPE_SECRET_KEY", lambda r: r.choice(["sk_live_", "rk_live_"])
                                  + pick(r, ALNUM, r.choice([24, 99]))),
    "slack_token": provider("SLACK_BOT_TOKEN", slack_token),
    "sendgrid_key": provider("SENDGRID_API_KEY", lambda r: f"SG.{pick(r, URLSAFE, 22)}.{pick(r, URLSAFE, 43)}"),
    "google_api_key": provider("GOOGLE_MAPS_API_KEY", lambda r: "AIza" + pick(r, URLSAFE, 35)),
}


# ---- national ids (outside the target) ------------------------------------------------------------------------

def fr_nir(rng: random.Random) -> str:
    """French NIR: sex, year, month, department, commune, order, then the key 97 - (13 digits mod 97)."""
    body = (f"{rng.choice('12')}{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 95):02d}"
            f"{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}")
    if body[5:7] == "20":
        body = body[:5] + "21" + body[7:]
    key = 97 - int(body) % 97
    return f"{body[0]} {body[1:3]} {body[3:5]} {body[5:7]} {body[7:10]} {body[10:13]} {key:02d}"


CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23]


def cf_check(partial: str) -> str:
    """The codice fiscale check letter (DM 23/12/1976): odd positions by the table, even by value, mod 26."""
    total = 0
    for pos, ch in enumerate(partial):
        idx = int(ch) if ch.isdigit() else ord(ch) - 65
        total += CF_ODD[idx] if pos % 2 == 0 else idx
    return chr(65 + total % 26)


def it_cf(rng: random.Random) -> str:
    day = rng.randint(1, 28) + rng.choice([0, 40])
    partial = (pick(rng, "BCDFGLMNPRSTVZ", 3) + pick(rng, "BCDFGLMNPRSTVZ", 3) + f"{rng.randint(50, 99):02d}"
               + rng.choice("ABCDEHLMPRST") + f"{day:02d}" + rng.choice("ABCDEFGHL") + f"{rng.randint(1, 999):03d}")
    return partial + cf_check(partial)


def be_nrn(rng: random.Random) -> str:
    """Belgian national number: YY.MM.DD-SSS.CC, CC = 97 - (number mod 97), with 2 prefixed for births after
    1999."""
    yy, mm, dd, seq = rng.randint(0, 99), rng.randint(1, 12), rng.randint(1, 28), rng.randint(1, 997)
    body = f"{yy:02d}{mm:02d}{dd:02d}{seq:03d}"
    after_2000 = yy < 24
    check = 97 - int(("2" if after_2000 else "") + body) % 97
    return f"{body[:2]}.{body[2:4]}.{body[4:6]}-{body[6:]}.{check:02d}"


def fi_hetu(rng: random.Random) -> str:
    """Finnish henkilotunnus: DDMMYY, century sign, individual number 002-899, check char (mod 31)."""
    dd, mm, yy, ind = rng.randint(1, 28), rng.randint(1, 12), rng.randint(0, 99), rng.randint(2, 899)
    sign = "A" if yy < 20 else "-"
    base = f"{dd:02d}{mm:02d}{yy:02d}"
    return f"{base}{sign}{ind:03d}" + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(f"{base}{ind:03d}") % 31]


def se_pnr(rng: random.Random) -> str:
    """Swedish personnummer: YYMMDD-NNNC, C the Luhn digit of the nine before it."""
    body = f"{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    return f"{body[:6]}-{body[6:]}{luhn_digit(body)}"


def no_fnr(rng: random.Random) -> str:
    """Norwegian fodselsnummer: DDMMYY, individual number, two mod 11 control digits (10 is not issued)."""
    while True:
        body = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{rng.randint(40, 99):02d}{rng.randint(0, 499):03d}"
        k1 = 11 - sum(int(d) * w for d, w in zip(body, [3, 7, 6, 1, 8, 9, 4, 5, 2], strict=True)) % 11
        k1 = 0 if k1 == 11 else k1
        if k1 == 10:
            continue
        k2 = 11 - sum(int(d) * w for d, w in zip(body + str(k1), [5, 4, 3, 2, 7, 6, 5, 4, 3, 2], strict=True)) % 11
        k2 = 0 if k2 == 11 else k2
        if k2 != 10:
            return f"{body}{k1}{k2}"


def br_cpf(rng: random.Random) -> str:
    """Brazilian CPF: nine digits and two mod 11 check digits, printed 000.000.000-00."""
    nums = [rng.randint(0, 9) for _ in range(9)]
    for n in (10, 11):
        total = sum(d * w for d, w in zip(nums, range(n, 1, -1), strict=True))
        nums.append(total * 10 % 11 % 10)
    s = "".join(map(str, nums))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


MBI_ALPHA = "ACDEFGHJKMNPQRTUVWXY"


def us_mbi(rng: random.Random) -> str:
    """A Medicare Beneficiary Identifier in CMS's 11 positions (no S, L, O, I, B, Z), printed 4-3-4."""
    an = MBI_ALPHA + string.digits
    raw = (str(rng.randint(1, 9)) + rng.choice(MBI_ALPHA) + rng.choice(an) + digits(rng, 1) + rng.choice(MBI_ALPHA)
           + rng.choice(an) + digits(rng, 1) + rng.choice(MBI_ALPHA) + rng.choice(MBI_ALPHA) + digits(rng, 2))
    return raw if rng.random() < 0.5 else f"{raw[:4]}-{raw[4:7]}-{raw[7:]}"


IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "fr_nir": (fr_nir, ["N° de sécurité sociale : {v}", "numéro de carte Vitale {v}", "NIR de la victime {v}"]),
    "it_cf": (it_cf, ["Codice fiscale: {v}", "C.F. del danneggiato {v}", "codice fiscale dell'assicurato {v}"]),
    "be_nrn": (be_nrn, ["Numéro de registre national : {v}", "Rijksregisternummer {v}", "INSZ {v}"]),
    "fi_hetu": (fi_hetu, ["Henkilötunnus: {v}", "hetu {v}", "vahingonkärsijän henkilötunnus {v}"]),
    "se_pnr": (se_pnr, ["Personnummer: {v}", "försäkringstagarens personnummer {v}", "pnr {v}"]),
    "no_fnr": (no_fnr, ["Fødselsnummer: {v}", "fnr. {v}", "skadelidtes fødselsnummer {v}"]),
    "br_cpf": (br_cpf, ["CPF: {v}", "CPF do segurado {v}", "inscrito no CPF sob o nº {v}"]),
    "us_mbi": (us_mbi, ["Medicare Beneficiary Identifier (MBI): {v}", "Medicare number {v}", "MBI {v} — Part B"]),
}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    make, contexts = IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        return f"ctx{i % len(contexts)}", value, contexts[i % len(contexts)].format(v=value), False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "auth_header": v_auth_header, "session_cookie": v_session_cookie, "private_key": v_private_key,
    "totp_seed": v_totp_seed, "recovery_code": v_recovery_code,
    **PROVIDERS, **{k: national_id(k) for k in IDS}}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists; the
    text list is indexed by the count of text cases so far, so its length may be a multiple of three."""
    _style, secret, snip, raw_only = value
    if i % 3 == 0 and not raw_only:
        name = list(JSON_CARRIERS)[i // 3 % len(JSON_CARRIERS)]
        return name, JSON_CARRIERS[name](rng, snip, secret), True
    name = list(TEXT_CARRIERS)[(i - i // 3) % len(TEXT_CARRIERS)]
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

VIN_VALUES = {**{str(d): d for d in range(10)}, **dict(zip("ABCDEFGH", range(1, 9), strict=True)),
              **dict(zip("JKLMN", range(1, 6), strict=True)), "P": 7, "R": 9,
              **dict(zip("STUVWXYZ", range(2, 10), strict=True))}
VIN_WEIGHTS = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2]
VIN_CHARS = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"


def vin(rng: random.Random) -> str:
    """A VIN (ISO 3779) with the North American check digit in position 9 (49 CFR 565)."""
    raw = pick(rng, VIN_CHARS, 8) + "0" + pick(rng, VIN_CHARS, 8)
    total = sum(VIN_VALUES[c] * w for c, w in zip(raw, VIN_WEIGHTS, strict=True))
    check = "X" if total % 11 == 10 else str(total % 11)
    return raw[:8] + check + raw[9:]


def _luhn_bad(rng: random.Random) -> str:
    partial = rng.choice("4535") + digits(rng, 14)
    good = luhn_digit(partial)
    return partial + rng.choice([d for d in string.digits if d != good])


def nm_claim_number(rng: random.Random) -> str:
    return rng.choice([f"Claim {_claim(rng)} moved to the total-loss queue",
                       f"ClaimCenter claim {rng.randint(200, 899)}-{rng.randint(10, 99)}-{digits(rng, 6)} assigned",
                       f"Schadennummer SN-{rng.randint(2021, 2025)}/{digits(rng, 6)} angelegt"])


def nm_policy_number(rng: random.Random) -> str:
    return rng.choice([f"Policy {_policy(rng)} renewed", f"policy_number: {_policy(rng)}",
                       f"N° de police {rng.choice(['AUTO', 'MRH'])}{digits(rng, 8)} — avenant 2"])


def nm_element_id(rng: random.Random) -> str:
    return rng.choice([f'<input id="lossDate-{rng.randint(1, 9)}" data-testid="fnol-step-{rng.randint(1, 6)}">',
                       "document.getElementById('policyHolderPhone').focus()",
                       f'<div id="claimant-email-{pick(rng, HEX, 6)}" class="field">',
                       f"aria-labelledby=\"iban-label-{rng.randint(10, 99)}\""])


def nm_css_selector(rng: random.Random) -> str:
    return rng.choice([f"#fnol-step-{rng.randint(1, 6)} .loss-location input#lossZip",
                       "form.claim-form > fieldset:nth-child(3) input[name='cardNumber']",
                       f".payout-panel__iban--{rng.choice(['error', 'valid'])} span.hint",
                       "button[data-action='submit-claim']:not([disabled])"])


def nm_xpath(rng: random.Random) -> str:
    return rng.choice([f"//form[@id='fnol']/fieldset[{rng.randint(1, 5)}]/input[@name='policyNumber']",
                       "//div[@id='claimant']//input[@name='email']",
                       f"/html/body/div[{rng.randint(1, 4)}]/table/tbody/tr[{rng.randint(1, 30)}]/td[3]",
                       "//label[text()='Password']/following-sibling::input"])


def nm_coordinates(rng: random.Random) -> str:
    lat, lon = round(rng.uniform(-40, 60), 6), round(rng.uniform(-120, 80), 6)
    return rng.choice([f"loss location: {lat}, {lon}", f"https://maps.example.org/?lat={lat}&lon={lon}&z=17",
                       f'"geo": {{"lat": {lat}, "lng": {lon}}}'])


def nm_pixels(rng: random.Random) -> str:
    x, y = rng.randint(40, 1200), rng.randint(40, 3000)
    return rng.choice([f"bbox=[{x}, {y}, {x + rng.randint(80, 900)}, {y + rng.randint(12, 40)}]",
                       "page 2480x3508 px @300dpi", f"photo_{rng.randint(1, 40):02d}.jpg 4032x3024, 3.1 MB",
                       f"width: {rng.randint(200, 1600)}px; height: {rng.randint(100, 900)}px"])


def nm_timestamp(rng: random.Random) -> str:
    return rng.choice([f"received {_ts(rng)}", f"created_at={1700000000000 + rng.randint(0, 10**11)}",
                       f"loss reported {rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2024 "
                       f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"])


def nm_request_id(rng: random.Random) -> str:
    return rng.choice([f"x-request-id: {_uuid(rng)}", f"traceparent: 00-{pick(rng, HEX, 32)}-{pick(rng, HEX, 16)}-01",
                       f"X-Amzn-Trace-Id: Root=1-{pick(rng, HEX, 8)}-{pick(rng, HEX, 24)}",
                       f"correlationId={_uuid(rng)}"])


def nm_cache_busting(rng: random.Random) -> str:
    return rng.choice([f"/static/js/fnol.{pick(rng, HEX, 8)}.chunk.js", f"styles.css?v={pick(rng, HEX, 10)}",
                       f"main.{pick(rng, HEX, 20)}.bundle.js", f"<script src=\"/app.js?h={pick(rng, HEX, 12)}\">"])


def nm_checksum(rng: random.Random) -> str:
    return rng.choice([f"attachment police_report.pdf sha256={pick(rng, HEX, 64)}",
                       f"ETag: \"{pick(rng, HEX, 32)}\"", f"md5 of estimate.xml: {pick(rng, HEX, 32)}"])


def nm_csrf_name(rng: random.Random) -> str:
    return rng.choice(['<input type="hidden" name="__RequestVerificationToken" value="">',
                       "CSRF_COOKIE_NAME = 'csrftoken'", "csrf_header_name: X-XSRF-TOKEN",
                       "the form field `authenticity_token` is required on POST /claims",
                       '<meta name="csrf-token" content="">'])


def nm_placeholder(rng: random.Random) -> str:
    return rng.choice(["password: ********", "Email: you@example.com", "API key: <YOUR_API_KEY>",
                       "sftp_password: ${SFTP_PASSWORD}", "token: {{ vault.claims_webhook }}",
                       "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "Card number: XXXX XXXX XXXX XXXX",
                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "Passwort: <leer>"])


def nm_masked(rng: random.Random) -> str:
    d4 = digits(rng, 4)
    return rng.choice([f"card ending {d4}", f"**** **** **** {d4}", f"SSN ***-**-{d4}",
                       f"IBAN DE** **** **** **** **{d4[:2]} {d4[2:]}", "Passwort: ••••••••",
                       f"phone (***) ***-{d4}", "email j***@g***.com"])


def nm_version(rng: random.Random) -> str:
    return rng.choice([f"ClaimCenter {rng.randint(9, 10)}.{rng.randint(0, 2)}.{rng.randint(0, 9)}",
                       f"Duck Creek Policy v{rng.randint(10, 12)}.{rng.randint(0, 9)}.0.{rng.randint(1, 9)}",
                       f"tesseract 5.{rng.randint(0, 4)}.{rng.randint(0, 9)}", "PolicyCenter 2023.06 (Garmisch)",
                       f"build 2024.{rng.randint(1, 12):02d}.{rng.randint(1, 9)}+sha.{pick(rng, HEX, 7)}"])


def nm_service_number(rng: random.Random) -> str:
    return rng.choice([f"24/7 claims hotline 1-800-{rng.randint(2, 9)}{digits(rng, 2)}-{digits(rng, 4)} (toll-free)",
                       f"Free claims line 0800 {digits(rng, 3)} {digits(rng, 4)}",
                       f"Numéro vert sinistres : 0 800 {digits(rng, 2)} {digits(rng, 2)} {digits(rng, 2)}",
                       f"Kostenlose Schadenhotline 0800 {digits(rng, 3)} {digits(rng, 4)}",
                       f"Toll-free helpline 1800-{digits(rng, 3)}-{digits(rng, 4)}"])


def nm_luhn_invalid(rng: random.Random) -> str:
    return rng.choice([f"payment reference {group(_luhn_bad(rng), 4, ' ')}", f"batch ref {_luhn_bad(rng)}",
                       f"Zahlungsreferenz {group(_luhn_bad(rng), 4, '-')}"])


def nm_order_number(rng: random.Random) -> str:
    return rng.choice([f"Repair order RO-{rng.randint(2021, 2025)}-{digits(rng, 5)}", f"PO 45{digits(rng, 8)}",
                       f"Invoice INV-{digits(rng, 9)}", f"parts order #{digits(rng, 7)}"])


def nm_tracking(rng: random.Random) -> str:
    return rng.choice([f"UPS 1Z{pick(rng, UPPER + string.digits, 6)}03{digits(rng, 8)}",
                       f"FedEx tracking {digits(rng, 4)} {digits(rng, 4)} {digits(rng, 4)}",
                       f"DHL waybill {digits(rng, 10)}", f"USPS 9400 {' '.join(digits(rng, 4) for _ in range(4))} "
                       f"{digits(rng, 2)}"])


def nm_vin(rng: random.Random) -> str:
    return rng.choice([f"VIN {vin(rng)}", f"vehicle_vin: {vin(rng)}", f"Fahrgestellnummer {vin(rng)}"])


def nm_medical_code(rng: random.Random) -> str:
    return rng.choice([f"ICD-10 S{rng.randint(10, 99)}.{rng.randint(100, 599)}A", f"CPT {rng.randint(99202, 99215)}",
                       f"HCPCS E0{rng.randint(100, 999)}", f"DRG {rng.randint(100, 999)} — LOS 3"])


def nm_amount(rng: random.Random) -> str:
    return rng.choice([f"reserve ${rng.randint(1, 99)},{digits(rng, 3)}.{digits(rng, 2)}",
                       f"deductible €{rng.randint(1, 20) * 50}", f"Selbstbeteiligung {rng.randint(1, 9) * 150},00 EUR",
                       f"₹{rng.randint(1, 9)},{digits(rng, 2)},{digits(rng, 3)} sum insured"])


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "claim_number": nm_claim_number, "policy_number": nm_policy_number, "element_id": nm_element_id,
    "css_selector": nm_css_selector, "xpath": nm_xpath, "coordinates": nm_coordinates, "pixel_size": nm_pixels,
    "timestamp": nm_timestamp, "request_id": nm_request_id, "cache_busting": nm_cache_busting,
    "checksum": nm_checksum, "csrf_field_name": nm_csrf_name, "placeholder": nm_placeholder, "masked": nm_masked,
    "version": nm_version, "service_number": nm_service_number, "luhn_invalid": nm_luhn_invalid,
    "order_number": nm_order_number, "tracking_number": nm_tracking, "vin": nm_vin, "medical_code": nm_medical_code,
    "amount": nm_amount}


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
