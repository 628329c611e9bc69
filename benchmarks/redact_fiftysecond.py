"""The fifty-second blind redaction corpus: trust & safety, content moderation and dating/social apps, what an agent
that triages user reports and runs a platform's safety desk sees. Written from the formats' public specifications
by someone who read neither the detection rules nor the other corpora (only the twenty-first's interface).

Carriers (the `form` head): moderation queue items quoting the reported message, Hive-style classification
responses, Perspective `comments:analyze` requests, Sift `$create_content` events, Persona inquiry webhooks, Onfido
check webhooks, Jumio callbacks, Twilio message resources, SendGrid inbound-parse posts, Stripe
`charge.dispute.created` events, chat exports between matches (JSON and WhatsApp text), appeal records, law-
enforcement and data-subject requests, MCP `tools/call` requests of a moderation tool and chat-completion
transcripts (JSON); moderator notes in Markdown, ban notices and appeal e-mails, the agent's replies to users in 26
languages (labels in the user's language), a T&S Slack thread, worker log lines, curl calls to moderation APIs,
`.env` files, psql rows, CSV queue exports, Zendesk internal notes, Jira issues, legal-request letters, weekly
incident reports and Python tool code (text). About a third is JSON carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not
0000); phones, the national numbering plans (NANP geographic NPAs with N11/555 exchanges left out, Ofcom mobile
07 and geographic 01/02 ranges outside the drama ranges, ARCEP 01-07 ten digits, BNetzA 015x/016x/017x mobiles
and city area codes, TRAI/DoT ten-digit mobiles 6-9 and STD landlines) with context words in each country's
language; AWS, IAM's AKIA/ASIA key ids and 40-character secrets; webhooks as Slack, Discord, Teams, Power
Automate, Google Chat, Mattermost and Zapier print them (the secret is the token-bearing segment or query value);
Stripe `whsec_` signing secrets and `sk_live_`/`rk_live_`/`sk_test_` keys; SendGrid `SG.<22>.<43>`; Twilio
`AC` account SIDs with 32-hex auth tokens and `SK` API keys with their secrets (the secret is the token only);
Google API keys `AIza` + 35 (Perspective, Vision SafeSearch); Onfido `api_live.`/`api_sandbox.` tokens (`Token
token=`); Persona `persona_production_`/`persona_sandbox_` keys; Discord bot tokens (base64 snowflake, timestamp,
HMAC); Slack `xoxb-`/`xoxp-`/`xapp-` tokens; JWT (RFC 7519/7515), Basic (RFC 7617), Bearer (RFC 6750); PEM
PKCS#8/SEC1 and OpenSSH keys (an APNs `.p8` key among them); TOTP seeds, RFC 4648 base32 in `otpauth://` URIs
(Google Authenticator's key-uri format) or set-up keys in fours; 2FA recovery codes as GitHub, Google, Discord,
Instagram and X print them; connection strings (URI, ADO.NET, JDBC, Azure Storage/Service Bus; the secret is the
password or key only). National and travel ids (outside the target): Spanish DNI/NIE (mod 23 letter), Brazilian
CPF (two mod 11 digits), Italian codice fiscale (odd/even tables, mod 26 letter), Chilean RUT (mod 11, K),
Belgian national register number (97 - mod 97, the 2 prefix after 2000), Finnish HETU (mod 31 character),
Swedish personnummer (Luhn), Indian Aadhaar (Verhoeff) and ICAO 9303 passport numbers with their MRZ check digits
(7-3-1).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, the auth token beside its public account SID). A contact
detail a user spelt to evade a chat filter (`name at gmail dot com`) is still the user's e-mail. A passport's
MRZ is personal as a whole, but the value held is its document number. Near misses are what a safety desk holds
that is neither secret nor personal: DOM element ids, CSS selectors, XPaths, city-centroid coordinates, pixel
sizes, timestamps and epoch milliseconds, request and trace ids, cache-busting hashes, CSRF and password field
NAMES, placeholders, masked values, app and OS versions, published crisis and support lines, Luhn-invalid
references, order and Stripe object ids, parcel tracking numbers, classifier scores, PDQ/perceptual hashes, case
and appeal numbers, the AWS docs' EXAMPLE keys and hex colours: none of them identifies a person or opens anything.
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

SEED = 52
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "it_cf", "cl_rut", "be_nrn", "fi_hetu", "se_pnr", "in_aadhaar",
                            "passport"})
"""National and travel ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
UPNUM = string.ascii_uppercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"
PLACEHOLDER = "\u0000SNIPPET\u0000"


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


# ---- carriers -------------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    day = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return f"{day}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"


def _handle(rng: random.Random) -> str:
    return rng.choice(["moonchild", "runner_k", "ana.b", "drift99", "kofi_a", "lea.m", "tariq", "hana_s", "ivo",
                       "priya.r", "mateus", "yuki"]) + digits(rng, 2)


def j_report(rng: random.Random, snip: str) -> str:
    return _dump({"report_id": f"rpt_{pick(rng, LOWNUM, 12)}", "created_at": _ts(rng),
                  "reason": rng.choice(["harassment", "scam", "off_platform_contact", "impersonation", "spam"]),
                  "reported_user": _handle(rng), "evidence": [{"type": "message", "text": snip}], "status": "open"})


def j_hive(rng: random.Random, snip: str) -> str:
    classes = [{"class": c, "score": round(rng.random(), 4)} for c in ("hate", "sexual", "violence", "spam")]
    return _dump({"id": _uid(rng), "code": 200, "status": [{"status": {"code": "0", "message": "SUCCESS"},
                                                           "response": {"input": {"text": snip},
                                                                        "output": [{"classes": classes}]}}]})


def j_perspective(rng: random.Random, snip: str) -> str:
    return _dump({"comment": {"text": snip}, "languages": [rng.choice(["en", "es", "de", "fr", "pt", "ru"])],
                  "requestedAttributes": {"TOXICITY": {}, "INSULT": {}, "THREAT": {}}, "doNotStore": True})


def j_sift(rng: random.Random, snip: str) -> str:
    return _dump({"$type": "$create_content", "$user_id": _handle(rng), "$content_id": f"msg-{digits(rng, 9)}",
                  "$message": {"$body": snip, "$contact_email": None}, "$time": rng.randint(1700000000, 1720000000)})


def j_persona(rng: random.Random, snip: str) -> str:
    return _dump({"data": {"type": "event", "id": f"evt_{pick(rng, ALNUM, 24)}", "attributes": {
        "name": "inquiry.completed", "payload": {"data": {"type": "inquiry", "id": f"inq_{pick(rng, ALNUM, 24)}",
                                                          "attributes": {"status": "completed", "notes": snip}}}}}})


def j_onfido(rng: random.Random, snip: str) -> str:
    return _dump({"payload": {"resource_type": "check", "action": "check.completed", "object": {
        "id": _uid(rng), "status": "complete", "completed_at_iso8601": _ts(rng), "reviewer_comment": snip}}})


def j_jumio(rng: random.Random, snip: str) -> str:
    return _dump({"callbackSentAt": _ts(rng), "workflowExecution": {"id": _uid(rng), "status": "PROCESSED"},
                  "decision": {"type": rng.choice(["PASSED", "REJECTED", "WARNING"])}, "agentComment": snip})


def j_twilio(rng: random.Random, snip: str) -> str:
    return _dump({"sid": "SM" + pick(rng, HEX, 32), "direction": "inbound", "status": "received", "body": snip,
                  "num_segments": "1", "api_version": "2010-04-01"})


def j_sendgrid(rng: random.Random, snip: str) -> str:
    return _dump({"headers": "Received: by mx.sendgrid.net", "subject": "Re: your account was restricted",
                  "text": snip, "spam_score": round(rng.random() * 3, 3), "attachments": 0})


def j_stripe_dispute(rng: random.Random, snip: str) -> str:
    return _dump({"id": f"evt_{pick(rng, ALNUM, 24)}", "object": "event", "type": "charge.dispute.created",
                  "data": {"object": {"id": f"dp_{pick(rng, ALNUM, 24)}", "amount": rng.choice([999, 1999, 2999]),
                                      "reason": "fraudulent", "evidence": {"uncategorized_text": snip}}}})


def j_chat_export(rng: random.Random, snip: str) -> str:
    return _dump({"match_id": f"m_{pick(rng, LOWNUM, 10)}", "messages": [
        {"from": _handle(rng), "sent_at": _ts(rng), "body": rng.choice(["hey :)", "hi! how's your week?", "haha"])},
        {"from": _handle(rng), "sent_at": _ts(rng), "body": snip}]})


def j_appeal(rng: random.Random, snip: str) -> str:
    return _dump({"appeal_id": f"APL-{digits(rng, 7)}", "enforcement": rng.choice(["suspension", "ban", "strike"]),
                  "user_statement": snip, "reviewer": None, "sla_hours": 48})


def j_le_request(rng: random.Random, snip: str) -> str:
    return _dump({"request_id": f"LER-{digits(rng, 6)}", "type": rng.choice(["preservation", "emergency",
                                                                             "subpoena"]),
                  "agency": rng.choice(["Metropolitan Police", "Policía Nacional", "BKA", "FBI"]),
                  "details": snip, "due": _ts(rng)})


def j_dsar(rng: random.Random, snip: str) -> str:
    return _dump({"request": {"kind": "access", "regulation": rng.choice(["GDPR art. 15", "CCPA", "LGPD"])},
                  "export": {"profile": {"bio": "", "saved_notes": snip}, "matches": rng.randint(0, 80)}})


def j_mcp(rng: random.Random, snip: str) -> str:
    return _dump({"jsonrpc": "2.0", "id": rng.randint(1, 999), "method": "tools/call", "params": {
        "name": rng.choice(["restrict_account", "escalate_report", "send_user_notice"]), "arguments": {
            "user": _handle(rng), "note": snip}}})


def j_transcript(rng: random.Random, snip: str) -> str:
    return _dump({"model": "safety-desk", "messages": [
        {"role": "system", "content": "You triage user reports for the safety team."},
        {"role": "user", "content": snip},
        {"role": "assistant", "content": "Thanks, I've escalated this report."}]})


def t_whatsapp(rng: random.Random, snip: str) -> str:
    day = f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2024"
    return f"[{day}, 21:{rng.randint(10, 59)}] {_handle(rng)}: hey\n[{day}, 21:{rng.randint(10, 59)}] " \
           f"{_handle(rng)}: {snip}\n"


def t_mod_note(rng: random.Random, snip: str) -> str:
    return f"### Report {pick(rng, LOWNUM, 8)}\n\n**Queue:** {rng.choice(['dating-eu', 'social-us', 'minors'])}\n" \
           f"**Evidence:**\n\n> {snip}\n\n- [ ] verify\n- [x] screenshot saved\n"


def t_ban_email(rng: random.Random, snip: str) -> str:
    return f"From: Safety Team <safety@notify.{rng.choice(['lumo.app', 'kindred.social', 'spark.date'])}>\n" \
           f"Subject: Your account has been suspended\n\nHello,\n\nWe removed content that broke our rules:\n\n" \
           f"{snip}\n\nYou can appeal within 30 days.\n"


def t_appeal_email(rng: random.Random, snip: str) -> str:
    return f"Subject: Appeal - case {digits(rng, 8)}\n\nHi, I think my ban was a mistake. {snip}\n\nThanks\n"


AGENT_LANGS = [("en", "Hi", "Regards"), ("es", "Hola", "Saludos"), ("pt", "Olá", "Atenciosamente"),
               ("fr", "Bonjour", "Cordialement"), ("de", "Hallo", "Viele Grüße"), ("it", "Ciao", "Cordiali saluti"),
               ("pl", "Dzień dobry", "Pozdrawiamy"), ("ru", "Здравствуйте", "С уважением"),
               ("uk", "Вітаємо", "З повагою"), ("tr", "Merhaba", "Saygılarımızla"), ("ar", "مرحبًا", "مع التحية"),
               ("hi", "नमस्ते", "सादर"), ("bn", "নমস্কার", "শুভেচ্ছা"), ("id", "Halo", "Salam"),
               ("tl", "Kumusta", "Lubos na gumagalang"), ("vi", "Xin chào", "Trân trọng"),
               ("ja", "こんにちは", "よろしくお願いいたします"), ("ko", "안녕하세요", "감사합니다"),
               ("zh", "您好", "此致"), ("sw", "Habari", "Wako"), ("nl", "Hallo", "Met vriendelijke groet"),
               ("th", "สวัสดีค่ะ", "ขอแสดงความนับถือ"),
               ("fa", "سلام", "با احترام"), ("he", "שלום", "בברכה"), ("ro", "Bună ziua", "Cu stimă"),
               ("el", "Γεια σας", "Με εκτίμηση")]
"""26 languages the agent writes to users in: (code, greeting, sign-off)."""


def t_agent_reply(rng: random.Random, snip: str) -> str:
    _code, hello, bye = rng.choice(AGENT_LANGS)
    return f"{hello},\n\n{snip}\n\n{bye},\nTrust & Safety\n"


def t_slack(rng: random.Random, snip: str) -> str:
    return f"#ts-escalations\n{rng.choice(['maya', 'jonas', 'fatima', 'wei'])}  10:{rng.randint(10, 59)} AM\n" \
           f"flagging this one from the queue :eyes:\n{snip}\n"


def t_log(rng: random.Random, snip: str) -> str:
    return f"{_ts(rng)} level=info svc=moderation-worker report={pick(rng, LOWNUM, 10)} action=review " \
           f"excerpt=\"{snip}\"\n"


def t_curl(rng: random.Random, snip: str) -> str:
    host = rng.choice(["api.thehive.ai/api/v2/task/sync", "api.sift.com/v205/events", "api.safety.internal/v1/notes"])
    return f"curl -sS -X POST https://{host} \\\n  -H 'Content-Type: text/plain' \\\n  --data-raw '{snip}'\n"


def t_env(rng: random.Random, snip: str) -> str:
    return f"# safety-desk service ({rng.choice(['staging', 'prod', 'eu-west'])})\nLOG_LEVEL=info\n" \
           f"QUEUE=reports-{rng.randint(1, 9)}\n# {snip}\n"


def t_psql(rng: random.Random, snip: str) -> str:
    return f" report_id | category | excerpt\n-----------+----------+--------\n {rng.randint(10000, 99999)} | " \
           f"{rng.choice(['scam', 'abuse', 'doxxing'])} | {snip}\n(1 row)\n"


def t_csv(rng: random.Random, snip: str) -> str:
    return f"report_id,created_at,category,excerpt\n{rng.randint(100000, 999999)},{_ts(rng)}," \
           f"{rng.choice(['scam', 'spam', 'doxxing'])},\"{snip}\"\n"


def t_zendesk(rng: random.Random, snip: str) -> str:
    return f"Ticket #{rng.randint(100000, 999999)} · Internal note by Safety Agent\n{snip}\nTags: t_and_s, " \
           f"{rng.choice(['romance_scam', 'sextortion', 'account_takeover'])}\n"


def t_jira(rng: random.Random, snip: str) -> str:
    return f"TNS-{rng.randint(100, 9999)}: {rng.choice(['Leaked credential', 'Doxxing report', 'Payment dispute'])}" \
           f"\nPriority: High\n\nDescription:\n{snip}\n"


def t_legal(rng: random.Random, snip: str) -> str:
    return f"RE: Request for subscriber information (ref. {pick(rng, UPNUM, 6)})\n\nPursuant to the attached " \
           f"order, please preserve all records for the account below.\n{snip}\n\nDetective Sergeant\n"


def t_weekly(rng: random.Random, snip: str) -> str:
    return f"## T&S weekly, week {rng.randint(1, 52)}\n\n| metric | value |\n|---|---|\n| reports | " \
           f"{rng.randint(1000, 9000)} |\n\nNotable incident:\n\n{snip}\n"


def t_python(rng: random.Random, snip: str) -> str:
    return f"# {rng.choice(['triage.py', 'notify.py', 'replay.py'])}\nfrom safety import desk\n\n" \
           f"desk.annotate(report_id={rng.randint(1, 99999)}, note=\"\"\"{snip}\"\"\")\n"


JSON_CARRIERS: dict[str, Carrier] = {
    "report": j_report, "hive": j_hive, "perspective": j_perspective, "sift": j_sift, "persona": j_persona,
    "onfido": j_onfido, "jumio": j_jumio, "twilio": j_twilio, "sendgrid": j_sendgrid, "stripe_dispute":
        j_stripe_dispute, "chat_json": j_chat_export, "appeal": j_appeal, "le_request": j_le_request, "dsar": j_dsar,
    "mcp": j_mcp, "transcript": j_transcript}
TEXT_CARRIERS: dict[str, Carrier] = {
    "whatsapp": t_whatsapp, "mod_note": t_mod_note, "ban_email": t_ban_email, "appeal_email": t_appeal_email,
    "agent_reply": t_agent_reply, "slack": t_slack, "log": t_log, "curl": t_curl, "env": t_env, "psql": t_psql,
    "csv": t_csv, "zendesk": t_zendesk, "jira": t_jira, "legal": t_legal, "weekly": t_weekly, "python": t_python}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """Every third case goes into a JSON carrier (a raw-only snippet is set in unescaped), the rest into text; the
    carriers rotate so each kind meets all of them."""
    _style, _secret, snip, raw_only = value
    if i % 3 == 0:
        name = list(JSON_CARRIERS)[(i // 3) % len(JSON_CARRIERS)]
        if raw_only:
            text = JSON_CARRIERS[name](rng, PLACEHOLDER)
            return name, text.replace(_dump(PLACEHOLDER)[1:-1], snip), True
        return name, JSON_CARRIERS[name](rng, snip), True
    name = list(TEXT_CARRIERS)[(i - i // 3 - 1) % len(TEXT_CARRIERS)]
    return name, TEXT_CARRIERS[name](rng, snip), False


# ---- credentials ----------------------------------------------------------------------------------------------

PW_LABELS = ["Password: {v}", "password = {v}", "Passwort: {v}", "Kennwort lautet {v}", "contraseña: {v}",
             "mi contraseña es {v}", "senha: {v}", "minha senha é {v}", "mot de passe : {v}", "mdp: {v}",
             "la password è {v}", "hasło: {v}", "пароль: {v}", "мой пароль {v}", "пароль від акаунта: {v}",
             "şifre: {v}", "كلمة المرور: {v}", "पासवर्ड: {v}", "পাসওয়ার্ড: {v}", "kata sandi: {v}",
             "password ko ay {v}", "mật khẩu: {v}", "パスワード：{v}", "비밀번호: {v}", "密码：{v}", "nenosiri: {v}",
             "wachtwoord: {v}", "parola: {v}", "temporary password: {v}", "login: {u} / {v}"]
PW_WORDS = ["Sunflower", "Mariposa", "Sommer", "Lune", "Tigre", "Kirschblüte", "Ocean", "gatito", "Paris", "Bambu",
            "Nieve", "Drache", "mango", "Raposa", "Sakura", "Volga", "Koala", "Cielo"]


def password_value(rng: random.Random) -> str:
    """A user-chosen password: word + digits + symbol, a random string, or a passphrase joined by symbols."""
    form = rng.randrange(3)
    if form == 0:
        return rng.choice(PW_WORDS) + digits(rng, rng.randint(2, 4)) + rng.choice("!@#$%&*?")
    if form == 1:
        return pick(rng, ALNUM + "!#$%&*+-=?@^_", rng.randint(12, 20))
    return rng.choice("-.+").join(rng.sample(PW_WORDS, 3)) + str(rng.randint(1, 99))


def v_password(rng: random.Random, i: int) -> Value:
    pw = password_value(rng)
    tpl = PW_LABELS[i % len(PW_LABELS)]
    snip = tpl.format(v=pw, u=_handle(rng))
    if i % 7 == 3:
        return "account_takeover", pw, f"he asked for my login and I gave it: {snip} and now I'm locked out", False
    return "labelled", pw, snip, False


def aws_key_id(rng: random.Random) -> str:
    return rng.choice(["AKIA", "ASIA"]) + pick(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    kid, secret = aws_key_id(rng), pick(rng, B64, 40)
    styles = [
        ("credfile", f"[moderation-exports]\naws_access_key_id = {kid}\naws_secret_access_key = {secret}"),
        ("env", f"export AWS_ACCESS_KEY_ID={kid}\nexport AWS_SECRET_ACCESS_KEY={secret}"),
        ("beside_id", f"{kid} / {secret}"),
        ("boto3", f'boto3.client("rekognition", aws_access_key_id="{kid}", aws_secret_access_key="{secret}")'),
        ("labelled_es", f"clave secreta de AWS: {secret}"),
        ("labelled_de", f"AWS-Secret-Key: {secret} (Key-ID {kid})"),
        ("table", f"| {kid} | {secret} | rekognition-moderation |"),
    ]
    style, snip = styles[i % len(styles)]
    return style, secret, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    sort = i % 7
    if sort == 0:
        token = pick(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, UPNUM, 9)}/B{pick(rng, UPNUM, 10)}/{token}"
        return "slack", token, f"post new high-severity reports to {url}", False
    if sort == 1:
        token = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{token}"
        return "discord", token, f"mod-log webhook: {url}", False
    if sort == 2:
        token = pick(rng, HEX, 32)
        url = f"https://{rng.choice(['contoso', 'kindred', 'lumoapp'])}.webhook.office.com/webhookb2/{_uid(rng)}@" \
              f"{_uid(rng)}/IncomingWebhook/{token}/{_uid(rng)}"
        return "teams", token, f"Teams channel connector {url}", False
    if sort == 3:
        sig = pick(rng, URLSAFE, 43)
        url = f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}/" \
              f"triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={sig}"
        return "power_automate", sig, f"flow for appeals: {url}", False
    if sort == 4:
        token = pick(rng, URLSAFE, 43)
        url = f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=" \
              f"AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={token}"
        return "google_chat", token, f"Google Chat space for T&S on-call: {url}", False
    if sort == 5:
        token = pick(rng, LOWNUM, 26)
        return "mattermost", token, f"mattermost hook https://chat.{rng.choice(['corp', 'ops'])}.spark.date/hooks/" \
                                    f"{token}", False
    token = pick(rng, LOWNUM, 6)
    return "zapier", token, f"zap url https://hooks.zapier.com/hooks/catch/{digits(rng, 7)}/{token}/", False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = "whsec_" + pick(rng, ALNUM, 32)
    styles = [("env", f"STRIPE_WEBHOOK_SECRET={secret}"),
              ("cli", f"> Ready! Your webhook signing secret is {secret} (^C to quit)"),
              ("code", f'event = stripe.Webhook.construct_event(payload, sig_header, "{secret}")'),
              ("labelled", f"signing secret for the refunds endpoint: {secret}"),
              ("yaml", f"stripe:\n  webhook_secret: {secret}")]
    style, snip = styles[i % len(styles)]
    return style, secret, snip, False


def v_connection_string(rng: random.Random, i: int) -> Value:
    pw = pick(rng, ALNUM, rng.randint(14, 24))
    user = rng.choice(["moderation", "ts_reader", "reports_app", "appeals"])
    host = rng.choice(["db-reports.internal", "10.4.2.17", "pg-ts.eu-west-1.rds.amazonaws.com"])
    sort = i % 8
    if sort == 0:
        return "postgres", pw, f"postgresql://{user}:{pw}@{host}:5432/reports", False
    if sort == 1:
        return "mongodb", pw, f"mongodb+srv://{user}:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/chats", False
    if sort == 2:
        return "redis", pw, f"REDIS_URL=redis://:{pw}@{host}:6379/0", False
    if sort == 3:
        return "adonet", pw, f"Server={host};Database=Safety;User Id={user};Password={pw};Encrypt=true;", False
    if sort == 4:
        return "jdbc", pw, f"jdbc:mysql://{host}:3306/appeals?user={user}&password={pw}&useSSL=true", False
    if sort == 5:
        key = base64.b64encode(rng.randbytes(64)).decode()
        return "azure_storage", key, f"DefaultEndpointsProtocol=https;AccountName=tsevidence;AccountKey={key};" \
                                     "EndpointSuffix=core.windows.net", False
    if sort == 6:
        key = base64.b64encode(rng.randbytes(32)).decode()
        return "service_bus", key, f"Endpoint=sb://ts-queue.servicebus.windows.net/;SharedAccessKeyName=" \
                                   f"RootManageSharedAccessKey;SharedAccessKey={key}", False
    return "amqp", pw, f"amqp://{user}:{pw}@rabbit.internal:5672/moderation", False


KEY_LABELS = ["API key: {v}", "Clave API: {v}", "Chave de API: {v}", "Clé API : {v}", "API-Schlüssel: {v}",
              "Chiave API: {v}", "Klucz API: {v}", "API-ключ: {v}", "API ключ: {v}", "API anahtarı: {v}",
              "مفتاح API: {v}", "API कुंजी: {v}", "API কী: {v}", "Kunci API: {v}", "Khóa API: {v}", "APIキー: {v}",
              "API 키: {v}", "API 密钥：{v}", "Ufunguo wa API: {v}", "API-sleutel: {v}", "hive api key = {v}",
              "Sift API key: {v}", "x-api-key: {v}", "apiKey={v}"]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    key = rng.choice([pick(rng, HEX, 32), pick(rng, ALNUM, 40), pick(rng, URLSAFE, 48), pick(rng, HEX, 16)])
    return "labelled", key, KEY_LABELS[i % len(KEY_LABELS)].format(v=key), False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def v_disguised(rng: random.Random, i: int) -> Value:
    base = rng.choice([lambda: "sk_live_" + pick(rng, ALNUM, 24), lambda: "SG." + pick(rng, URLSAFE, 22) + "." +
                       pick(rng, URLSAFE, 43), lambda: "xoxb-" + digits(rng, 11) + "-" + digits(rng, 12) + "-" +
                       pick(rng, ALNUM, 24), lambda: password_value(rng).replace("%", "!")])()
    sort = i % 4
    lead = rng.choice(["key: ", "pw ", "token => ", "ключ: ", "clave: ", ""])
    if sort == 0:
        cut = sorted(rng.sample(range(3, len(base) - 2), 2))
        secret = base[:cut[0]] + rng.choice(ZW) + base[cut[0]:cut[1]] + rng.choice(ZW) + base[cut[1]:]
        return "zero_width", secret, lead + secret, False
    if sort == 1:
        secret = _fullwidth(base)
        return "fullwidth", secret, lead + secret, False
    if sort == 2:
        secret = "".join(c if c.isalnum() and rng.random() > 0.25 else f"%{ord(c):02X}" for c in base)
        return "percent", secret, lead + secret, False
    cut = sorted(rng.sample(range(3, len(base) - 2), 2))
    secret = "".join(f"\\u{ord(c):04x}" if k in cut or not c.isalnum() else c for k, c in enumerate(base))
    return "json_escape", secret, lead + secret, True


def _compact(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def jwt_value(rng: random.Random) -> str:
    header = {"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    payload = {"sub": f"usr_{pick(rng, LOWNUM, 12)}", "role": rng.choice(["moderator", "member", "admin"]),
               "iat": rng.randint(1700000000, 1720000000)}
    payload["exp"] = payload["iat"] + 3600
    sig = rng.randbytes(64 if header["alg"] == "ES256" else 32 if header["alg"] == "HS256" else 256)
    return ".".join((b64url(_compact(header)), b64url(_compact(payload)), b64url(sig)))


def v_jwt(rng: random.Random, i: int) -> Value:
    token = jwt_value(rng)
    styles = [("header", f"Authorization: Bearer {token}"), ("cookie", f"Cookie: ts_jwt={token}"),
              ("query", f"GET /moderation/queue?access_token={token}"), ("bare", f"mod console token {token}"),
              ("localstorage", f'localStorage.setItem("authToken", "{token}")')]
    style, snip = styles[i % len(styles)]
    return style, token, snip, False


def v_session_cookie(rng: random.Random, i: int) -> Value:
    sort = i % 6
    if sort == 0:
        v = pick(rng, LOWNUM, 32)
        return "django", v, f"Cookie: lang=en; theme=dark; sessionid={v}", False
    if sort == 1:
        v = "s%3A" + pick(rng, URLSAFE, 32) + "." + pick(rng, ALNUM + "%", 43)
        return "express", v, f"Set-Cookie: connect.sid={v}; Path=/; HttpOnly; Secure", False
    if sort == 2:
        v = pick(rng, LOWNUM, 26)
        return "php", v, f"PHPSESSID={v}", False
    if sort == 3:
        v = "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0.." + pick(rng, URLSAFE, 16) + "." + pick(rng, URLSAFE, 180) + \
            "." + pick(rng, URLSAFE, 22)
        return "nextauth", v, f"__Secure-next-auth.session-token={v}", False
    if sort == 4:
        v = pick(rng, HEX, 32)
        return "rails", v, f"curl -b '_session_id={v}' https://admin.spark.date/reports", False
    v = base64.b64encode(rng.randbytes(48)).decode()
    return "laravel", v, f"laravel_session={v}; expires=Fri, 31-May-2024 10:00:00 GMT", False


def v_auth_header(rng: random.Random, i: int) -> Value:
    sort = i % 4
    if sort == 0:
        cred = base64.b64encode(f"{_handle(rng)}:{password_value(rng)}".encode()).decode()
        return "basic", cred, f"Authorization: Basic {cred}", False
    if sort == 1:
        cred = pick(rng, URLSAFE, 43)
        return "bearer", cred, f"Authorization: Bearer {cred}", False
    if sort == 2:
        cred = pick(rng, HEX, 40)
        return "drf_token", cred, f"-H \"Authorization: Token {cred}\"", False
    cred = pick(rng, ALNUM, 32)
    return "hive_token", cred, f"headers={{'authorization': 'token {cred}'}}", False


def _wrap(b64: str, width: int) -> str:
    return "\n".join(b64[k:k + width] for k in range(0, len(b64), width))


def v_private_key(rng: random.Random, i: int) -> Value:
    sort = i % 3
    if sort == 2:
        seed = rng.randbytes(32)
        key = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
        public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"ts-bot@deploy")
        pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + _wrap(base64.b64encode(blob).decode(), 70) + \
              "\n-----END OPENSSH PRIVATE KEY-----"
        return "openssh", pem, f"deploy key for the moderation bot:\n{pem}", False
    key = ec.derive_private_key(rng.getrandbits(255) + 1, ec.SECP256R1())
    fmt = serialization.PrivateFormat.PKCS8 if sort == 0 else serialization.PrivateFormat.TraditionalOpenSSL
    pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()
    if sort == 0:
        return "apns_p8", pem, f"AuthKey_{pick(rng, UPNUM, 10)}.p8 (push notifications):\n{pem}", False
    return "sec1", pem, f"signing key for ban notices\n{pem}", False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, B32, rng.choice([16, 32]))
    sort = i % 4
    if sort == 0:
        uri = f"otpauth://totp/Spark:{_handle(rng)}?secret={seed}&issuer=Spark&algorithm=SHA1&digits=6&period=30"
        return "otpauth", seed, uri, False
    if sort == 1:
        shown = group(seed.lower(), 4, " ")
        label = rng.choice(["setup key", "clave de configuración", "Einrichtungsschlüssel", "clé de configuration",
                            "chave de configuração", "ключ настройки", "設定キー", "설정 키"])
        return "setup_key", shown, f"{label}: {shown}", False
    if sort == 2:
        return "json_field", seed, f'"totp_secret": "{seed}"', False
    return "labelled", seed, f"2FA seed for the mod account: {seed}", False


RECOVERY_LABELS = ["recovery code", "backup code", "código de recuperación", "código de backup",
                   "Wiederherstellungscode", "code de secours", "kod zapasowy", "резервный код", "yedek kod",
                   "バックアップコード", "백업 코드", "备用验证码", "kode cadangan", "mã dự phòng"]


def v_recovery_code(rng: random.Random, i: int) -> Value:
    sort = i % 5
    if sort == 0:
        code = pick(rng, HEX, 5) + "-" + pick(rng, HEX, 5)
    elif sort == 1:
        code = digits(rng, 4) + " " + digits(rng, 4)
    elif sort == 2:
        code = pick(rng, LOWNUM, 4) + "-" + pick(rng, LOWNUM, 4)
    elif sort == 3:
        code = pick(rng, LOWNUM, 12)
    else:
        code = "-".join(pick(rng, UPNUM, 4) for _ in range(3))
    label = RECOVERY_LABELS[i % len(RECOVERY_LABELS)]
    style = ["github", "google", "discord", "x", "generic"][sort]
    return style, code, f"the scammer asked for my {label}, I sent {code}" if i % 2 else f"{label}: {code}", False


def provider(leads: list[str], make: Callable[[random.Random], str]) -> Callable[[random.Random, int], Value]:
    """A provider token kind: the token from `make`, in one of `leads` by turn."""
    def gen(rng: random.Random, i: int) -> Value:
        token = make(rng)
        lead = leads[i % len(leads)]
        return f"lead{i % len(leads)}", token, lead.format(v=token, h=_handle(rng)), False
    return gen


def stripe_key(rng: random.Random) -> str:
    head = rng.choice(["sk_live_", "sk_live_", "rk_live_", "sk_test_"])
    return head + (pick(rng, ALNUM, 24) if rng.random() < 0.4 else "51" + pick(rng, ALNUM, 97))


def twilio_pair(rng: random.Random) -> tuple[str, str]:
    return "AC" + pick(rng, HEX, 32), pick(rng, HEX, 32)


def v_twilio_token(rng: random.Random, i: int) -> Value:
    sid, token = twilio_pair(rng)
    sort = i % 4
    if sort == 0:
        return "env", token, f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={token}", False
    if sort == 1:
        return "curl_u", token, f"curl -u {sid}:{token} https://api.twilio.com/2010-04-01/Accounts/{sid}/" \
                                "Messages.json", False
    if sort == 2:
        return "client", token, f'client = Client("{sid}", "{token}")', False
    key, secret = "SK" + pick(rng, HEX, 32), pick(rng, ALNUM, 32)
    return "api_key", secret, f"Twilio API key {key}, secret {secret}", False


def discord_bot_token(rng: random.Random) -> str:
    snowflake = str(rng.randint(10**17, 10**19 - 1))
    first = base64.b64encode(snowflake.encode()).decode().rstrip("=")
    return f"{first}.{pick(rng, URLSAFE, 6)}.{pick(rng, URLSAFE, rng.choice([27, 38]))}"


def slack_token(rng: random.Random) -> str:
    kind = rng.randrange(3)
    if kind == 0:
        return f"xoxb-{digits(rng, 11)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    if kind == 1:
        return f"xoxp-{digits(rng, 11)}-{digits(rng, 11)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}"
    return f"xapp-1-A{pick(rng, UPNUM, 10)}-{digits(rng, 13)}-{pick(rng, HEX, 64)}"


def onfido_token(rng: random.Random) -> str:
    """An Onfido API token: environment (and region) prefix, then two dot-separated random parts."""
    head = rng.choice(["api_live", "api_sandbox", "api_live_us", "api_live_ca"])
    return f"{head}.{pick(rng, URLSAFE, 11)}.{pick(rng, URLSAFE, 32)}"


PROVIDERS: dict[str, Callable[[random.Random, int], Value]] = {
    "stripe_key": provider(["STRIPE_SECRET_KEY={v}", "stripe.api_key = \"{v}\"", "curl https://api.stripe.com/v1/"
                            "refunds -u {v}: -d charge=ch_x", "refund tool key: {v}"], stripe_key),
    "sendgrid_key": provider(["SENDGRID_API_KEY={v}", "Authorization: Bearer {v}", "sg = SendGridAPIClient(\"{v}\")",
                              "ban-notice mailer key {v}"],
                             lambda r: f"SG.{pick(r, URLSAFE, 22)}.{pick(r, URLSAFE, 43)}"),
    "twilio_token": v_twilio_token,
    "google_api_key": provider(["https://commentanalyzer.googleapis.com/v1alpha1/comments:analyze?key={v}",
                                "PERSPECTIVE_API_KEY={v}", "https://vision.googleapis.com/v1/images:annotate?key={v}",
                                "discovery.build('commentanalyzer', 'v1alpha1', developerKey='{v}')"],
                               lambda r: "AIza" + pick(r, URLSAFE, 35)),
    "onfido_token": provider(["Authorization: Token token={v}", "ONFIDO_API_TOKEN={v}",
                              "onfido.Api(api_token=\"{v}\", region=Region.EU)", "Onfido token for {h}'s check: {v}"],
                             onfido_token),
    "persona_key": provider(["Authorization: Bearer {v}", "PERSONA_API_KEY={v}", "persona key = {v}",
                             "-H 'Authorization: Bearer {v}' https://withpersona.com/api/v1/inquiries"],
                            lambda r: f"persona_{r.choice(['production', 'sandbox'])}_{_uid(r)}"),
    "discord_bot_token": provider(["Authorization: Bot {v}", "DISCORD_TOKEN={v}", "client.run(\"{v}\")",
                                   "automod bot token {v}"], discord_bot_token),
    "slack_token": provider(["SLACK_BOT_TOKEN={v}", "Authorization: Bearer {v}", "app = App(token=\"{v}\")",
                             "slack token for #ts-escalations: {v}"], slack_token),
}


# ---- personal data --------------------------------------------------------------------------------------------

NAMES = ["maria.lopez", "jmiller", "anil.k", "sofia_r", "lukas.becker", "chloe.martin", "ahmed.hassan",
         "yuki.tanaka", "olga.ivanova", "priya.sharma", "kwame", "ngozi.okafor", "thanh.nguyen", "emre.yilmaz",
         "agnieszka.nowak", "rafael.souza", "minji.kim", "li.wei", "fatima.zahra", "juan.perez", "aisha", "tomasz"]
MAIL_DOMAINS = ["gmail.com", "yahoo.com", "outlook.com", "hotmail.fr", "web.de", "gmx.de", "mail.ru", "yandex.ru",
                "ukr.net", "rediffmail.com", "naver.com", "qq.com", "163.com", "icloud.com", "proton.me", "libero.it",
                "wp.pl", "uol.com.br", "yahoo.co.jp", "hotmail.com"]
IDN_MAILS = ["jörg.müller@gmx.de", "josé.garcía@correo.es", "çağla@hotmail.com.tr", "пользователь@mail.ru",
             "用户123@qq.com", "ユーザー@docomo.ne.jp", "अनिल@rediffmail.com", "ngọc.anh@gmail.com"]
MAIL_CTX = ["add me: {v}", "my email is {v}", "escríbeme a {v}", "meu e-mail: {v}", "mon mail : {v}",
            "meine E-Mail: {v}", "scrivimi a {v}", "mój e-mail: {v}", "моя почта {v}", "пишіть на {v}",
            "e-postam {v}", "بريدي الإلكتروني {v}", "मेरा ईमेल {v}", "আমার ইমেইল {v}", "email aku {v}",
            "email ko ay {v}", "email của mình là {v}", "メールは{v}です", "이메일 {v}", "我的邮箱 {v}",
            "barua pepe yangu ni {v}", "From: Reporter <{v}>", "mailto:{v}"]


def v_email(rng: random.Random, i: int) -> Value:
    sort = i % 6
    if sort == 4:
        addr = IDN_MAILS[(i // 6) % len(IDN_MAILS)]
        style = "idn"
    elif sort == 5:
        name, domain = rng.choice(NAMES), rng.choice(MAIL_DOMAINS)
        addr = f"{name} at {domain.replace('.', ' dot ')}" if i % 4 else f"{name}[at]{domain.replace('.', '[dot]')}"
        return "spelt_out", addr, f"the filter blocks it so: {addr}", False
    else:
        name = rng.choice(NAMES) + (str(rng.randint(1, 99)) if sort == 1 else "")
        addr = f"{name}{'+dating' if sort == 2 else ''}@{rng.choice(MAIL_DOMAINS)}"
        style = ["plain", "digits", "plus", "plain"][sort]
    return style, addr, MAIL_CTX[i % len(MAIL_CTX)].format(v=addr), False


US_AREAS = ["212", "213", "312", "415", "646", "718", "202", "305", "404", "617", "713", "206", "503", "702", "214",
            "416", "604", "514", "403", "613", "647", "778", "438"]
PHONE_CTX = {
    "us": ["text me at {v}", "my number is {v}", "call me {v}", "cell: {v}", "mi número es {v}", "mon cell {v}",
           "hit me up on {v}", "phone: {v}", "WhatsApp {v}"],
    "uk": ["ring me on {v}", "my mobile is {v}", "text me {v}", "mob: {v}", "tel. {v}", "WhatsApp me on {v}"],
    "fr": ["mon numéro : {v}", "appelle-moi au {v}", "portable {v}", "tél. {v}", "écris-moi sur WhatsApp {v}",
           "joignable au {v}"],
    "de": ["meine Handynummer: {v}", "ruf mich an unter {v}", "Tel.: {v}", "erreichbar unter {v}", "Mobil {v}",
           "schreib mir auf WhatsApp {v}"],
    "in": ["mobile no. {v}", "मेरा नंबर {v}", "मोबाइल: {v}", "মোবাইল নম্বর {v}", "call me on {v}", "whatsapp {v}",
           "contact no: {v}", "phone {v}"],
}


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    exchange = str(rng.randint(2, 9)) + digits(rng, 2)
    while exchange[1:] == "11" or exchange == "555":
        exchange = str(rng.randint(2, 9)) + digits(rng, 2)
    return rng.choice(US_AREAS), exchange, digits(rng, 4)


US_FORMS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("paren", lambda r: "({}) {}-{}".format(*_nanp(r))), ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
    ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))), ("intl", lambda r: "+1 {} {} {}".format(*_nanp(r))),
    ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r)))]


def _uk_mobile(r: random.Random) -> str:
    body = r.choice("123457789") + digits(r, 2)
    return f"07{body} {digits(r, 6)}" if body != "700" else f"07{body} 1{digits(r, 5)}"


UK_FORMS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("mobile", _uk_mobile), ("mobile_intl", lambda r: f"+44 7{r.choice('1234589')}{digits(r, 2)} {digits(r, 6)}"),
    ("london", lambda r: f"020 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}"),
    ("manchester", lambda r: f"0161 {r.randint(2, 9)}{digits(r, 2)} {digits(r, 4)}"),
    ("birmingham", lambda r: f"0121 {r.randint(2, 8)}{digits(r, 2)} {digits(r, 4)}"),
    ("edinburgh", lambda r: f"0131 {r.randint(2, 6)}{digits(r, 2)} {digits(r, 4)}")]


def _fr_pairs(r: random.Random, first: str) -> list[str]:
    """ARCEP's ten digits in pairs: 0 and the zone or mobile digit, then four pairs."""
    return ["0" + first] + [digits(r, 2) for _ in range(4)]


FR_FORMS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("mobile", lambda r: " ".join(_fr_pairs(r, r.choice("67")))),
    ("mobile_dots", lambda r: ".".join(_fr_pairs(r, r.choice("67")))),
    ("intl", lambda r: "+33 " + r.choice("67") + " " + " ".join(digits(r, 2) for _ in range(4))),
    ("intl_zero", lambda r: "+33 (0)" + r.choice("67") + " " + " ".join(digits(r, 2) for _ in range(4))),
    ("paris", lambda r: "01 " + " ".join([str(r.randint(4, 8)) + digits(r, 1)] + [digits(r, 2) for _ in range(3)])),
    ("geo", lambda r: " ".join(_fr_pairs(r, r.choice("2345"))))]
DE_FORMS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("mobile_15x", lambda r: f"0{r.choice(['151', '152', '157', '159'])} {digits(r, 4)} {digits(r, 4)}"),
    ("mobile_17x", lambda r: f"017{r.randint(0, 9)} {digits(r, 7)}"),
    ("mobile_16x", lambda r: f"016{r.choice('023')} {digits(r, 7)}"),
    ("intl", lambda r: f"+49 {r.choice(['151', '160', '170', '176'])} {digits(r, 8)}"),
    ("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
    ("muenchen", lambda r: f"089 / {r.randint(2, 9)}{digits(r, 6)}"),
    ("koeln", lambda r: f"0221 {r.randint(2, 9)}{digits(r, 6)}")]
IN_FORMS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("intl_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
    ("intl_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}"),
    ("plain", lambda r: f"{r.choice('6789')}{digits(r, 9)}"),
    ("zero", lambda r: f"0{r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
    ("delhi", lambda r: f"011-{r.choice('24')}{digits(r, 3)} {digits(r, 4)}"),
    ("mumbai", lambda r: f"022-{r.choice('26')}{digits(r, 7)}"),
    ("bengaluru", lambda r: f"080-{r.choice('24')}{digits(r, 7)}")]


def phone_case(rng: random.Random, i: int, forms: list[tuple[str, Callable[[random.Random], str]]],
               ctx: list[str]) -> Value:
    """A number in one of the country's print forms, in a context sentence of the country's language."""
    style, make = forms[i % len(forms)]
    number = make(rng)
    return style, number, ctx[(i // len(forms) + i) % len(ctx)].format(v=number), False


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, US_FORMS, PHONE_CTX["us"])


def v_phone_uk(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, UK_FORMS, PHONE_CTX["uk"])


def v_phone_fr(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, FR_FORMS, PHONE_CTX["fr"])


def v_phone_de(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, DE_FORMS, PHONE_CTX["de"])


def v_phone_in(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, IN_FORMS, PHONE_CTX["in"])


def ssn_value(rng: random.Random) -> tuple[str, str, str]:
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


SSN_CTX = ["SSN: {v}", "Social Security number {v}", "subscriber SSN {v}", "SSN# {v}", "soc sec no. {v}",
           "número de Seguro Social: {v}", "the scammer made me send my SSN {v}", "TIN/SSN {v}"]


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = ssn_value(rng)
    style, ssn = [("dash", f"{a}-{g}-{s}"), ("space", f"{a} {g} {s}"), ("compact", f"{a}{g}{s}")][i % 3]
    return style, ssn, SSN_CTX[i % len(SSN_CTX)].format(v=ssn), False


CARD_IIN: dict[str, Callable[[random.Random], str]] = {
    "visa": lambda r: "4" + digits(r, 14), "mc": lambda r: f"5{r.randint(1, 5)}" + digits(r, 13),
    "mc2": lambda r: str(r.randint(2221, 2720)) + digits(r, 11),
    "amex": lambda r: r.choice(["34", "37"]) + digits(r, 12),
    "discover": lambda r: "6011" + digits(r, 11), "discover65": lambda r: "65" + digits(r, 13),
    "jcb": lambda r: str(r.randint(3528, 3589)) + digits(r, 11), "diners": lambda r: "36" + digits(r, 11),
    "unionpay": lambda r: "62" + digits(r, 13)}
CARD_CTX = ["card number {v}", "charged to {v}", "Kartennummer: {v}", "numéro de carte {v}", "número de tarjeta {v}",
            "cartão {v}", "carta {v}", "numer karty {v}", "номер карты {v}", "kart numarası {v}", "カード番号 {v}",
            "카드 번호 {v}", "卡号 {v}", "the refund should go to {v}", "dispute on card {v}"]


def v_card(rng: random.Random, i: int) -> Value:
    brand = list(CARD_IIN)[i % len(CARD_IIN)]
    body = CARD_IIN[brand](rng)
    number = body + luhn_digit(body)
    sep = ["", " ", "-"][i % 3]
    shown = group_card(number, sep) if sep else number
    return brand, shown, CARD_CTX[i % len(CARD_CTX)].format(v=shown), False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c", "NL": "4a10n",
             "BE": "3n7n2n", "PL": "8n16n", "PT": "4n4n11n2n", "AT": "5n11n", "CH": "5n12c", "IE": "4a6n8n",
             "SE": "3n16n1n", "TR": "5n1n16c", "SA": "2n18c", "AE": "3n16n", "BR": "8n5n10n1a1c", "RO": "4a16c",
             "UA": "6n19c", "NO": "4n6n1n"}
IBAN_CTX = ["IBAN: {v}", "please refund to {v}", "Bankverbindung {v}", "IBAN du titulaire : {v}", "cuenta {v}",
            "conto corrente {v}", "numer rachunku {v}", "IBAN hesabım {v}", "رقم الآيبان {v}", "rekening {v}"]


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    b = bban(rng, IBAN_BBAN[country])
    compact = country + iban_check(country, b) + b
    shown = group(compact, 4, " ") if i % 2 else compact
    return country, shown, IBAN_CTX[i % len(IBAN_CTX)].format(v=shown), False


# ---- national and travel ids (outside the target) -------------------------------------------------------------

def es_dni(rng: random.Random) -> str:
    """DNI: 8 digits and the mod 23 letter; NIE: X/Y/Z (0/1/2 in the check) and 7 digits."""
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if rng.random() < 0.3:
        lead = rng.choice("XYZ")
        body = digits(rng, 7)
        return lead + body + letters[int(str("XYZ".index(lead)) + body) % 23]
    body = digits(rng, 8)
    return body + letters[int(body) % 23]


def br_cpf(rng: random.Random) -> str:
    """CPF: 9 digits and two mod 11 check digits (weights 10..2, then 11..2), printed 000.000.000-00."""
    d = [int(c) for c in digits(rng, 9)]
    for n in (10, 11):
        d.append(sum(x * w for x, w in zip(d, range(n, 1, -1), strict=True)) * 10 % 11 % 10)
    s = "".join(map(str, d))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


CF_ODD = dict(zip("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                  [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8,
                   12, 14, 16, 10, 22, 25, 24, 23], strict=True))


def it_cf(rng: random.Random) -> str:
    """Codice fiscale: surname/name consonants, year, month letter, day (+40 for women), Belfiore code, and the
    check letter (odd positions by the decree's table, even ones by their value, sum mod 26)."""
    day = rng.randint(1, 28) + (40 if rng.random() < 0.5 else 0)
    body = pick(rng, "BCDFGLMNPRSTVZ", 6) + digits(rng, 2) + rng.choice("ABCDEHLMPRST") + f"{day:02d}" + \
        rng.choice("ABCDEFGHLM") + digits(rng, 3)
    total = sum(CF_ODD[c] if k % 2 == 0 else (int(c) if c.isdigit() else ord(c) - 65) for k, c in enumerate(body))
    return body + chr(65 + total % 26)


def cl_rut(rng: random.Random) -> str:
    """RUT: body, and the mod 11 digit (weights 2-7 from the right; 11 is 0, 10 is K), printed 12.345.678-K."""
    n = rng.randint(5_000_000, 26_000_000)
    total = sum(int(c) * (2 + k % 6) for k, c in enumerate(reversed(str(n))))
    dv = {11: "0", 10: "K"}.get(11 - total % 11, str(11 - total % 11))
    return f"{n:,}".replace(",", ".") + "-" + dv


def be_nrn(rng: random.Random) -> str:
    """Belgian national number: YYMMDD, serial, 97 - (the nine digits, prefixed 2 after 2000) mod 97."""
    year = rng.randint(1950, 2006)
    body = f"{year % 100:02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(1, 997):03d}"
    check = 97 - int(("2" if year >= 2000 else "") + body) % 97
    return f"{body[:2]}.{body[2:4]}.{body[4:6]}-{body[6:]}.{check:02d}"


def fi_hetu(rng: random.Random) -> str:
    """HETU: DDMMYY, century sign, individual number 002-899, the mod 31 character."""
    year = rng.randint(1950, 2006)
    ddmmyy = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{year % 100:02d}"
    nnn = f"{rng.randint(2, 899):03d}"
    return ddmmyy + ("-" if year < 2000 else "A") + nnn + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(ddmmyy + nnn) % 31]


def se_pnr(rng: random.Random) -> str:
    """Personnummer: YYMMDD-NNN and the Luhn digit of the nine."""
    body = f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}" + digits(rng, 3)
    return f"{body[:6]}-{body[6:]}{luhn_digit(body)}"


VERHOEFF_D = ["0123456789", "1234067895", "2340178956", "3401289567", "4012395678", "5987604321", "6598710432",
              "7659821043", "8765932104", "9876543210"]
VERHOEFF_P = ["0123456789", "1576283094", "5803796142", "8916043527", "9453126870", "4286573901", "2793806415",
              "7046913258"]
VERHOEFF_INV = "0432156789"


def in_aadhaar(rng: random.Random) -> str:
    """Aadhaar: 11 digits (first 2-9) and the Verhoeff check digit, printed in fours."""
    body = str(rng.randint(2, 9)) + digits(rng, 10)
    c = 0
    for k, ch in enumerate(reversed(body)):
        c = int(VERHOEFF_D[c][int(VERHOEFF_P[(k + 1) % 8][int(ch)])])
    return group(body + VERHOEFF_INV[c], 4, " ")


def mrz_digit(field: str) -> str:
    """ICAO 9303 check digit: weights 7, 3, 1; digits their value, A-Z 10-35, < 0; sum mod 10."""
    return str(sum((0 if c == "<" else int(c, 36)) * (7, 3, 1)[k % 3] for k, c in enumerate(field)) % 10)


def passport(rng: random.Random) -> tuple[str, str]:
    """A passport number and the TD3 MRZ second line holding it with its check digits."""
    number = pick(rng, UPPER, 2) + digits(rng, 7)
    nat = rng.choice(["GBR", "DEU", "FRA", "ESP", "ITA", "IND", "BRA", "TUR", "POL", "NGA"])
    dob = f"{rng.randint(60, 99)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    exp = f"{rng.randint(25, 34)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    personal = "<" * 14
    parts = number + mrz_digit(number) + dob + mrz_digit(dob) + exp + mrz_digit(exp) + personal + mrz_digit(personal)
    line = number + mrz_digit(number) + nat + dob + mrz_digit(dob) + rng.choice("MF") + exp + mrz_digit(exp) + \
        personal + mrz_digit(personal) + mrz_digit(parts)
    return number, line


ID_CTX = {"es_dni": ["DNI: {v}", "DNI/NIE {v}", "documento de identidad {v}"],
          "br_cpf": ["CPF: {v}", "meu CPF é {v}", "CPF do titular {v}"],
          "it_cf": ["codice fiscale: {v}", "C.F. {v}", "il mio codice fiscale {v}"],
          "cl_rut": ["RUT: {v}", "mi RUT es {v}", "RUN {v}"],
          "be_nrn": ["numéro de registre national {v}", "rijksregisternummer {v}", "NN {v}"],
          "fi_hetu": ["henkilötunnus {v}", "hetu: {v}", "HETU {v}"],
          "se_pnr": ["personnummer {v}", "pnr: {v}", "mitt personnummer är {v}"],
          "in_aadhaar": ["Aadhaar: {v}", "आधार संख्या {v}", "Aadhaar no. {v}"]}


def national(name: str, make: Callable[[random.Random], str]) -> Callable[[random.Random, int], Value]:
    """An age/identity-verification record holding a national id in its language's label."""
    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        ctx = ID_CTX[name][i % len(ID_CTX[name])]
        lead = rng.choice(["age check: ", "ID verification — ", "user uploaded ID, ", ""])
        return f"ctx{i % len(ID_CTX[name])}", value, lead + ctx.format(v=value), False
    return gen


def v_passport(rng: random.Random, i: int) -> Value:
    number, line = passport(rng)
    if i % 2:
        return "mrz", number, f"document scan MRZ:\n{line}", False
    label = rng.choice(["Passport No.", "N° de passeport", "Reisepassnummer", "número de pasaporte", "pasaport no"])
    return "labelled", number, f"{label} {number} (verified by IDV)", False


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban, "jwt": v_jwt,
    "session_cookie": v_session_cookie, "auth_header": v_auth_header, "private_key": v_private_key,
    "totp_seed": v_totp_seed, "recovery_code": v_recovery_code, **PROVIDERS,
    "es_dni": national("es_dni", es_dni), "br_cpf": national("br_cpf", br_cpf), "it_cf": national("it_cf", it_cf),
    "cl_rut": national("cl_rut", cl_rut), "be_nrn": national("be_nrn", be_nrn),
    "fi_hetu": national("fi_hetu", fi_hetu), "se_pnr": national("se_pnr", se_pnr),
    "in_aadhaar": national("in_aadhaar", in_aadhaar), "passport": v_passport}


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, deterministic."""
    rng = random.Random(SEED)
    for kind, gen in KINDS.items():
        for i in range(PER_KIND):
            value = gen(rng, i)
            carrier, text, is_json = carry(rng, i, value)
            yield Case(kind, f"{carrier}/{value[0]}", value[1], text, is_json)


# ---- near misses ----------------------------------------------------------------------------------------------

CITY_CENTROIDS = [("New York", 40.71, -74.01), ("London", 51.51, -0.13), ("Paris", 48.86, 2.35),
                  ("Berlin", 52.52, 13.40), ("Mumbai", 19.08, 72.88), ("São Paulo", -23.55, -46.63),
                  ("Lagos", 6.52, 3.38), ("Tokyo", 35.68, 139.69), ("Jakarta", -6.21, 106.85),
                  ("Istanbul", 41.01, 28.98), ("Mexico City", 19.43, -99.13), ("Seoul", 37.57, 126.98)]
CRISIS_LINES = ["988 Suicide & Crisis Lifeline: call or text 988", "Samaritans (UK): 116 123",
                "NCMEC CyberTipline: 1-800-843-5678", "Numéro national de prévention du suicide : 3114",
                "TelefonSeelsorge: 0800 111 0 111", "Tele-MANAS: 14416", "Childline (UK): 0800 1111",
                "Crisis Text Line: text HOME to 741741", "Kids Help Phone (Canada): 1-800-668-6868",
                "Teléfono de la Esperanza: 717 003 717", "Telefono Azzurro: 19696", "Lifeline Australia: 13 11 14"]
MODEL_CLASSES = ["toxicity", "severe_toxicity", "identity_attack", "insult", "threat", "sexual_explicit", "spam",
                 "self_harm", "minor_present", "weapon", "nudity", "hate"]


def _luhn_bad(rng: random.Random) -> str:
    body = rng.choice(["4", "51", "37"]) + digits(rng, 13)
    return body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)


def _epoch_ms(rng: random.Random) -> str:
    return str(rng.randint(1_700_000_000_000, 1_720_000_000_000))


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "element_id": lambda r: f'<button id="report-btn-{digits(r, 4)}" data-testid="match-card-{r.randint(1, 99)}">'
                            "Report</button>",
    "css_selector": lambda r: f"div.chat-bubble[data-msg-id='{digits(r, 6)}'] > span.msg-text:nth-child("
                              f"{r.randint(1, 9)})",
    "xpath": lambda r: f"//div[@id='mod-queue']/ul/li[{r.randint(1, 40)}]/button[@aria-label='Dismiss']",
    "coordinates": lambda r: "search centre {0} ({1}, {2}), radius {3} km".format(*r.choice(CITY_CENTROIDS),
                                                                                   r.choice([5, 10, 25, 50])),
    "pixel_size": lambda r: f"avatar {r.choice([128, 256, 512, 1024])}x{r.choice([128, 256, 512, 1024])}px, "
                            f"viewport {r.choice(['1920×1080', '390×844', '1366×768'])}",
    "timestamp": lambda r: f"reported_at={_ts(r)} first_seen_ms={_epoch_ms(r)}",
    "request_id": lambda r: f"X-Request-Id: {_uid(r)} traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01",
    "cache_hash": lambda r: f"<script src=\"/static/js/moderation.{pick(r, HEX, 8)}.chunk.js?v={pick(r, HEX, 20)}\">",
    "field_names": lambda r: r.choice(['<input type="hidden" name="csrfmiddlewaretoken">',
                                       '<input type="password" name="password" autocomplete="current-password">',
                                       "send the X-CSRF-Token header with every POST",
                                       '<meta name="csrf-token" content="">', "form fields: email, password, otp_code",
                                       "authenticity_token is required"]) + f" (form v{r.randint(1, 9)})",
    "placeholder": lambda r: r.choice(["Password: ********", "email: you@example.com", "API key: <your-api-key>",
                                       "phone: +1 (XXX) XXX-XXXX", "token: {{ user.api_token }}", "IBAN: DEXX XXXX",
                                       "sk_live_... (ask #payments for the key)", "card: •••• •••• •••• ••••"])
                             + f" #{r.randint(1, 999)}",
    "masked": lambda r: r.choice([f"card ending {digits(r, 4)}", f"***-**-{digits(r, 4)}",
                                  f"+33 6 •• •• •• {digits(r, 2)}", f"{r.choice(LOWER)}***@gmail.com",
                                  f"IBAN DE** **** **** **** **{digits(r, 2)} {digits(r, 2)}",
                                  f"+91 XXXXX X{digits(r, 4)}"]),
    "version": lambda r: f"app {r.randint(1, 9)}.{r.randint(0, 40)}.{r.randint(0, 20)} (build {digits(r, 6)}), "
                         f"iOS {r.randint(15, 18)}.{r.randint(0, 6)}.{r.randint(0, 3)}",
    "service_line": lambda r: r.choice(CRISIS_LINES),
    "luhn_invalid": lambda r: f"case reference {_luhn_bad(r)}",
    "order_number": lambda r: f"Order #{digits(r, 3)}-{digits(r, 7)}-{digits(r, 7)} · refund {r.randint(1, 60)}.99",
    "stripe_object_id": lambda r: f"{r.choice(['ch', 'pi', 'dp', 'in', 'sub', 'cus', 're'])}_{pick(r, ALNUM, 24)}",
    "tracking_number": lambda r: r.choice([f"1Z{pick(r, UPNUM, 6)}{digits(r, 10)}", f"9400 1{digits(r, 3)} "
                                           f"{digits(r, 4)} {digits(r, 4)} {digits(r, 4)} {digits(r, 2)}",
                                           f"JD{digits(r, 18)}"]),
    "classifier_score": lambda r: ", ".join(f"{c}: {r.random():.4f}" for c in r.sample(MODEL_CLASSES, 3)),
    "perceptual_hash": lambda r: f"PDQ {pick(r, HEX, 64)} quality {r.randint(50, 100)}",
    "case_number": lambda r: r.choice([f"Case TS-2024-{digits(r, 6)}", f"Appeal #A-{digits(r, 5)}",
                                       f"LER-{digits(r, 6)}", f"DSAR-{digits(r, 4)}-{pick(r, UPPER, 2)}"]),
    "aws_example": lambda r: r.choice(["AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"])
                             + " (from the AWS docs)",
    "hex_colour": lambda r: f"--brand-primary: #{pick(r, 'ABCDEF0123456789', 6)}; --danger: #{pick(r, HEX, 6)};",
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), every third inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    names = list(JSON_CARRIERS)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                text = JSON_CARRIERS[names[i % len(names)]](rng, text)
            yield sort, text
