"""The forty-seventh blind redaction corpus: energy, utilities and commodity trading, what an agent that runs a
utility's operations, its customer service or a trading desk sees. Written from the formats' public
specifications by someone who read neither the detection rules nor the other corpora.

Carriers (the `form` head): smart-meter head-end events, SCADA/OT gateway syslog, DNP3 outstation INI files,
IEC 61850 SCL (XML) files, Modbus poller YAML, MQTT/Sparkplug payloads, historian journal lines, customer billing
records and CSV exports, PDF-extracted bills, SEPA mandate exports, outage and field-service tickets (JSON and
text), Jira comments, trading-platform request logs, QuickFIX event logs, market-data feed configs, trading-bot
.env files, Helm values, solar and battery installer portal records, home-energy app storage, customer chats
(JSON and text), SMS threads, call-centre transcripts, notification e-mails, runbooks, jump-host terminals,
agent tool calls and the agent's messages to users in 32 languages (labels in the user's language). About a
third is JSON carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the
SWIFT IBAN registry's BBAN structures (MOD 97-10), printed in fours or compact, also in ISO 20022 pain.008
direct-debit XML; SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not 0000); phones, the
national numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT) with context words in each country's language
and +CC forms; AWS keys, IAM's AKIA/ASIA ids and 40-character secrets (credentials CSV, ini, env, `aws
configure`); Slack, Discord, Teams (webhook.office.com), Power Automate (`sig=`), Google Chat (`token=`),
Mattermost, Rocket.Chat, Zapier and IFTTT webhook URLs as their docs print them (the secret is the token
segment or query value only); Stripe `whsec_` signing secrets and `sk_live_`/`rk_live_` keys; Azure Storage,
Event Hubs and IoT Hub (`SharedAccessKey`), ADO.NET, ODBC, JDBC and URI (PostgreSQL, MongoDB, AMQP, MQTT, Redis)
connection strings (the secret is the password or key only); FIX 4.4 Logon `554=Password` with its CheckSum
(tag 10); net-snmp `createUser` and mosquitto `-P` passwords; JWT (RFC 7519/7515), HTTP Basic (RFC 7617), Bearer
(RFC 6750), DRF `Token`, Elasticsearch `ApiKey`, Okta `SSWS`; OAuth 2.0 (RFC 6749) client secrets and refresh
tokens; PEM SEC1/PKCS#8 EC keys and OpenSSH Ed25519 keys, also inside Coinbase CDP key JSON; TOTP seeds (RFC
4648 base32, Google Authenticator's `otpauth://` key URI); recovery codes as GitHub, Google and Microsoft print
them; meter keys: LoRaWAN 1.0 AppKey (ChirpStack `nwkKey`), wM-Bus/OMS AES-128 keys (wmbusmeters `key=`),
DLMS/COSEM GUEK/GAK (IEC 62056-5-3) and DNP3 Secure Authentication v5 update keys (IEEE 1815-2012), 128 or 256
bits in hex; session cookies (PHPSESSID, Tomcat JSESSIONID, ASP.NET_SessionId, express `connect.sid`, Django
`sessionid`); provider tokens as their docs show them: SendGrid `SG.x.y`, Google `AIza`, Slack `xoxb-`/`xoxp-`,
OpenAI `sk-proj-`, Anthropic `sk-ant-api03-`, InfluxDB 2 API tokens (88 characters, `Token` scheme), Grafana
service-account `glsa_`, Databento `db-`, Tailscale `tskey-auth-`; national ids (outside the target): French
NIR (97 - mod 97 key), Italian codice fiscale (odd/even table check letter), Belgian national register number
(97 - mod 97, 2 prefixed after 2000), Finnish henkilötunnus (mod 31 letter), Swedish personnummer (Luhn),
Norwegian fødselsnummer (two mod 11 digits), Portuguese NIF (mod 11).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, a key's PEM body). Disguised secrets are held as written (a
zero-width space or full-width forms inside, %-encoded, or JSON `\\u` escapes in raw JSON, which only text
carriers hold so the escapes stay as written). Near misses are what this domain holds that is neither secret nor
personal: meter-point ids (MPAN cores and GS1 GSRNs with their check digits: they name a supply point, not a
person), LoRaWAN DevEUI/JoinEUI (public by the spec), OBIS codes and readings, Modbus registers, IEC 61850
references and GOOSE multicast MACs, substation coordinates, timestamps, request and trace ids, FIX Logons
without a password, market quotes, order/invoice/work-order numbers, SEPA creditor identifiers (a business's
published id), placeholders, masked values, firmware and protocol versions, utilities' published emergency and
service numbers, Luhn-invalid numbers, firmware digests, CSS selectors/XPath/pixel sizes, CSRF field names,
parcel tracking numbers and the AWS docs' EXAMPLE keys: none of them identifies a person or opens anything.
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

SEED = 47
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"fr_nir", "it_cf", "be_nrn", "fi_hetu", "se_pnr", "no_fnr", "pt_nif"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
HEXU = "0123456789ABCDEF"
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

# ---- languages: the agent's messages and the labels users see -------------------------------------------------

LANGS: dict[str, tuple[str, str, str, str]] = {
    "en": ("Here is what you asked for", "Password", "Phone", "Email"),
    "fr": ("Voici les informations demandées", "Mot de passe", "Téléphone", "E-mail"),
    "de": ("Hier sind die gewünschten Angaben", "Passwort", "Telefon", "E-Mail"),
    "es": ("Aquí tiene los datos solicitados", "Contraseña", "Teléfono", "Correo electrónico"),
    "it": ("Ecco i dati richiesti", "Password", "Telefono", "E-mail"),
    "pt": ("Aqui estão os dados solicitados", "Palavra-passe", "Telefone", "E-mail"),
    "nl": ("Hier zijn de gevraagde gegevens", "Wachtwoord", "Telefoon", "E-mail"),
    "pl": ("Oto żądane dane", "Hasło", "Telefon", "E-mail"),
    "sv": ("Här är uppgifterna du bad om", "Lösenord", "Telefon", "E-post"),
    "da": ("Her er de oplysninger, du bad om", "Adgangskode", "Telefon", "E-mail"),
    "nb": ("Her er opplysningene du ba om", "Passord", "Telefon", "E-post"),
    "fi": ("Tässä pyytämäsi tiedot", "Salasana", "Puhelin", "Sähköposti"),
    "cs": ("Zde jsou požadované údaje", "Heslo", "Telefon", "E-mail"),
    "sk": ("Tu sú požadované údaje", "Heslo", "Telefón", "E-mail"),
    "hu": ("Íme a kért adatok", "Jelszó", "Telefon", "E-mail"),
    "ro": ("Iată datele solicitate", "Parolă", "Telefon", "E-mail"),
    "el": ("Ορίστε τα στοιχεία που ζητήσατε", "Κωδικός πρόσβασης", "Τηλέφωνο", "Email"),
    "tr": ("İstediğiniz bilgiler aşağıdadır", "Şifre", "Telefon", "E-posta"),
    "ru": ("Вот запрошенные данные", "Пароль", "Телефон", "Эл. почта"),
    "uk": ("Ось запитані дані", "Пароль", "Телефон", "Ел. пошта"),
    "bg": ("Ето исканите данни", "Парола", "Телефон", "Имейл"),
    "hr": ("Evo traženih podataka", "Lozinka", "Telefon", "E-pošta"),
    "lt": ("Štai prašyti duomenys", "Slaptažodis", "Telefonas", "El. paštas"),
    "ar": ("إليك البيانات المطلوبة", "كلمة المرور", "الهاتف", "البريد الإلكتروني"),
    "he": ("הנה הפרטים שביקשת", "סיסמה", "טלפון", "דואר אלקטרוני"),
    "hi": ("आपके द्वारा माँगी गई जानकारी", "पासवर्ड", "फ़ोन", "ईमेल"),
    "ja": ("ご依頼の情報です", "パスワード", "電話番号", "メールアドレス"),
    "zh": ("以下是您要的信息", "密码", "电话", "电子邮箱"),
    "ko": ("요청하신 정보입니다", "비밀번호", "전화번호", "이메일"),
    "vi": ("Đây là thông tin bạn yêu cầu", "Mật khẩu", "Điện thoại", "Email"),
    "id": ("Berikut data yang Anda minta", "Kata sandi", "Telepon", "Email"),
    "th": ("นี่คือข้อมูลที่คุณขอ", "รหัสผ่าน", "โทรศัพท์", "อีเมล"),
}
"""code -> (the agent's lead-in, the label for a password, a phone number, an e-mail address)."""

FIRST = ["olivia", "liam", "amelie", "jonas", "chloe", "mateo", "priya", "arjun", "sofia", "lukas", "ines", "noah",
         "fatima", "oskar", "elena", "tomasz", "aoife", "ciaran", "margaux", "hugo", "ananya", "rohan", "greta",
         "emil", "zoe", "malik", "hannah", "diego", "yuki", "leonie"]
LAST = ["walsh", "muller", "dubois", "kowalski", "sharma", "patel", "rossi", "garcia", "schmidt", "lefebvre", "byrne",
        "okafor", "nielsen", "fischer", "moreau", "iyer", "brennan", "novak", "santos", "weber", "thompson", "reddy",
        "jansen", "bauer", "laurent", "osei", "kelly", "menon", "hoffmann", "girard"]


# ---- carriers -------------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    return f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:" \
           f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"


def _site(rng: random.Random) -> str:
    return rng.choice(["SUB-NORTHFIELD", "PV-ALDER-FARM", "BESS-KESTREL-2", "WF-HARROW-RIDGE", "SUB-LINDEN-33KV",
                       "GSP-MARSH-LANE", "CHP-RIVERSIDE"])


def c_headend(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"meterId": f"MTR-{digits(rng, 8)}", "event": rng.choice(["TAMPER_ALERT", "LAST_GASP", "FW_UPDATE"]),
                  "obis": "0-0:96.11.0", "receivedAt": _ts(rng), "operatorNote": snip})


def c_gateway_config(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"device": f"RTU-{rng.randint(1, 99):02d}", "site": _site(rng),
                  "protocol": rng.choice(["DNP3", "Modbus/TCP", "IEC 60870-5-104"]), "pollMs": 1000,
                  "comment": snip})


def c_billing_record(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"account": f"ACC-{digits(rng, 9)}", "period": f"2024-{rng.randint(1, 12):02d}",
                  "consumptionKwh": round(rng.uniform(80, 900), 1), "tariff": rng.choice(["E7", "FLEX", "STD"]),
                  "notes": snip})


def c_ticket_json(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"number": f"INC{digits(rng, 7)}", "short_description": rng.choice(
        ["Feeder trip F12", "Smart meter offline", "Customer move-out", "Voltage complaint"]),
                  "state": "In Progress", "work_notes": snip})


def c_trading_log(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"ts": _ts(rng), "venue": rng.choice(["EEX", "ICE Endex", "Nord Pool", "EPEX SPOT"]),
                  "method": "POST", "path": "/api/v2/orders", "status": rng.choice([200, 401, 429]),
                  "debug": snip})


def c_feed_config(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"feed": rng.choice(["TTF_FRONT", "NBP_DA", "DE_BASE_CAL", "ENTSOE_A44"]),
                  "reconnectSec": 5, "params": {"region": rng.choice(["NWE", "DE-LU", "GB"]), "note": snip}})


def c_installer_portal(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"siteId": int(digits(rng, 7)), "inverter": rng.choice(["SE7600H", "SYMO 8.2-3-M", "IQ8PLUS"]),
                  "battery": rng.choice(["Powerwall 3", "RESU10H", "BYD HVS 10.2"]), "installerNotes": snip})


def c_home_app(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"app": "home-energy", "version": f"3.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
                  "debugLog": [f"{_ts(rng)} sync ok", snip, f"{_ts(rng)} tariff refreshed"]})


def c_chat_json(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"conversation": _uid(rng), "messages": [
        {"role": "assistant", "content": "How can I help with your energy account today?"},
        {"role": "user", "content": snip}]})


def c_tool_call(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"type": "tool_use", "id": f"toolu_{pick(rng, ALNUM, 20)}", "name": rng.choice(
        ["update_customer_record", "create_field_ticket", "save_integration"]), "input": {"details": snip}})


def c_mqtt(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"topic": f"spBv1.0/{_site(rng)}/DDATA/edge-{rng.randint(1, 9)}", "qos": 1,
                  "payload": {"timestamp": rng.randint(1_700_000_000_000, 1_740_000_000_000), "msg": snip}})


def c_sepa_json(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"mandateId": f"MND-{digits(rng, 10)}", "sequence": rng.choice(["FRST", "RCUR"]),
                  "signedOn": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", "remarks": snip})


def c_syslog(rng: random.Random, snip: str, _s: str) -> str:
    return f"<134>Mar {rng.randint(1, 28):2d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:07 " \
           f"rtu-gw-{rng.randint(1, 40):02d} gwd[{rng.randint(300, 9000)}]: config applied: {snip}"


def c_dnp3_ini(rng: random.Random, snip: str, _s: str) -> str:
    return f"[outstation]\naddress = {rng.randint(1, 65519)}\nmaster = 1\nunsolicited = true\n\n" \
           f"[notes]\n{snip}\n"


def c_scl(rng: random.Random, snip: str, _s: str) -> str:
    return f'<IED name="IED{rng.randint(1, 30)}" manufacturer="generic">\n  <Private type="commissioning">' \
           f"{snip}</Private>\n</IED>"


def c_modbus_yaml(rng: random.Random, snip: str, _s: str) -> str:
    body = "\n".join("      " + line for line in snip.splitlines())
    return f"devices:\n  - name: inverter-{rng.randint(1, 12)}\n    unit_id: {rng.randint(1, 247)}\n" \
           f"    notes: |\n{body}\n"


def c_fix_log(rng: random.Random, snip: str, _s: str) -> str:
    return f"20240{rng.randint(1, 9)}{rng.randint(10, 28)}-{rng.randint(10, 23)}:14:05.{digits(rng, 3)} : " \
           f"FIX.4.4:DESK{rng.randint(1, 9)}->ICE: {snip}"


def c_billing_csv(rng: random.Random, snip: str, _s: str) -> str:
    cell = '"' + snip.replace('"', '""') + '"'
    return f"account,period,kwh,amount_eur,remarks\nACC-{digits(rng, 9)},2024-{rng.randint(1, 12):02d}," \
           f"{rng.randint(50, 900)},{rng.randint(20, 400)}.{digits(rng, 2)},{cell}"


def c_ticket_text(rng: random.Random, snip: str, _s: str) -> str:
    return f"Work order WO-{digits(rng, 7)} | Crew {rng.choice(['N3', 'S1', 'E7'])} | {_site(rng)}\n" \
           f"Fault: {rng.choice(['LV fuse blown', 'meter comms lost', 'transformer oil alarm'])}\n" \
           f"Notes: {snip}"


def c_chat_text(rng: random.Random, snip: str, _s: str) -> str:
    return f"[{rng.randint(8, 20):02d}:{rng.randint(0, 59):02d}] Customer: {snip}\n" \
           f"[{rng.randint(8, 20):02d}:{rng.randint(0, 59):02d}] Agent: Thanks, I've noted that on your account."


def c_agent_msg(rng: random.Random, snip: str, _s: str) -> str:
    lead = LANGS[rng.choice(list(LANGS))][0]
    return f"{lead}:\n\n{snip}\n"


def c_env(rng: random.Random, snip: str, _s: str) -> str:
    return f"# trading-bot {rng.choice(['prod', 'uat'])} env, exported {_ts(rng)}\nDESK=power-de\n{snip}\n" \
           "LOG_LEVEL=info\n"


def c_email(rng: random.Random, snip: str, _s: str) -> str:
    return f"Subject: Re: your {rng.choice(['smart meter', 'direct debit', 'solar export'])} enquiry\n" \
           f"Message-ID: <{pick(rng, HEX, 16)}@mail.utility.example>\n\nHello,\n\n{snip}\n\nKind regards"


def c_bill_text(rng: random.Random, snip: str, _s: str) -> str:
    return f"Statement {rng.randint(1, 12):02d}/2024   Page 1 of 2\nPrevious reading 0{digits(rng, 5)} kWh\n" \
           f"{snip}\nTotal due: EUR {rng.randint(30, 500)}.{digits(rng, 2)}"


def c_helm(rng: random.Random, snip: str, _s: str) -> str:
    body = "\n".join("    " + line for line in snip.splitlines())
    return f"replicaCount: {rng.randint(1, 4)}\nimage:\n  tag: \"{rng.randint(1, 9)}.{rng.randint(0, 30)}.0\"\n" \
           f"extraConfig: |\n{body}\n"


def c_terminal(rng: random.Random, snip: str, _s: str) -> str:
    return f"ops@scada-jump-{rng.randint(1, 4)}:~$ cat handover.txt\n{snip}\nops@scada-jump-1:~$"


def c_journal(rng: random.Random, snip: str, _s: str) -> str:
    return f"Mar {rng.randint(1, 28):02d} 0{rng.randint(0, 9)}:{rng.randint(10, 59)}:3{rng.randint(0, 9)} " \
           f"historian-{rng.randint(1, 3)} pi-connector[{rng.randint(900, 9999)}]: {snip}"


def c_runbook(rng: random.Random, snip: str, _s: str) -> str:
    return f"## {rng.choice(['Failover to standby SCADA', 'Feed reconnect', 'Billing batch rerun'])}\n\n" \
           f"1. Stop the service.\n2. Use:\n\n```\n{snip}\n```\n"


def c_sms(rng: random.Random, snip: str, _s: str) -> str:
    return f"Power cut in your area (ref PC{digits(rng, 6)}). Est. restore {rng.randint(13, 22)}:00.\n" \
           f"> Reply: {snip}"


def c_jira(rng: random.Random, snip: str, _s: str) -> str:
    return f"OTSEC-{rng.randint(100, 999)} comment by field.eng:\nSee config below.\n{{code}}\n{snip}\n{{code}}"


def c_transcript(rng: random.Random, snip: str, _s: str) -> str:
    return f"[00:{rng.randint(1, 20):02d}:{rng.randint(0, 59):02d}] Agent: Could you confirm the details?\n" \
           f"[00:{rng.randint(21, 40):02d}:{rng.randint(0, 59):02d}] Caller: {snip}"


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "headend_event": c_headend, "gateway_config": c_gateway_config, "billing_record": c_billing_record,
    "ticket_json": c_ticket_json, "trading_log": c_trading_log, "feed_config": c_feed_config,
    "installer_portal": c_installer_portal, "home_app": c_home_app, "chat_json": c_chat_json,
    "tool_call": c_tool_call, "mqtt": c_mqtt, "sepa_json": c_sepa_json,
}
TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "syslog": c_syslog, "dnp3_ini": c_dnp3_ini, "scl_xml": c_scl, "modbus_yaml": c_modbus_yaml,
    "fix_log": c_fix_log, "billing_csv": c_billing_csv, "ticket_text": c_ticket_text, "chat_text": c_chat_text,
    "agent_msg": c_agent_msg, "env_file": c_env, "email": c_email, "bill_text": c_bill_text, "helm": c_helm,
    "terminal": c_terminal, "journal": c_journal, "runbook": c_runbook, "sms": c_sms, "jira": c_jira,
    "transcript": c_transcript,
}
CARRIERS = {**JSON_CARRIERS, **TEXT_CARRIERS}
INDENTING = frozenset({"modbus_yaml", "helm"})
"""Carriers that indent the snippet's lines (YAML block scalars): a multi-line secret would not stay as written."""


# ---- secrets --------------------------------------------------------------------------------------------------

PW_CHARS = ALNUM + "!#$%&*+-.=?@^_~"
WORDS = ["Turbine", "Feeder", "Kestrel", "Harbour", "Sunflower", "Granite", "Meadow", "Voltaire", "Copper", "Aurora",
         "Saffron", "Lantern", "Thistle", "Orchard", "Falcon", "Juniper"]


def password_value(rng: random.Random) -> str:
    """A password as people and installers choose them: a random 12-20 from a password manager, or two words,
    digits and a symbol."""
    if rng.random() < 0.5:
        while True:
            pw = pick(rng, PW_CHARS, rng.randint(12, 20))
            if any(c.isdigit() for c in pw) and any(c.isalpha() for c in pw):
                return pw
    return f"{rng.choice(WORDS)}{rng.choice('-_.')}{rng.choice(WORDS)}{digits(rng, 2)}{rng.choice('!#?%')}"


def fix_message(fields: list[tuple[int, str]], sep: str = "|") -> str:
    """A FIX 4.4 message: BeginString, BodyLength (9) over the body, the fields, CheckSum (10) as the sum of the
    bytes mod 256 (FIX Transport spec, SOH between fields; `sep` how a log prints SOH)."""
    body = "".join(f"{tag}={val}\x01" for tag, val in fields)
    head = f"8=FIX.4.4\x019={len(body.encode())}\x01"
    msg = head + body
    return (msg + f"10={sum(msg.encode()) % 256:03d}\x01").replace("\x01", sep)


def _fix_logon(rng: random.Random, password: str | None) -> str:
    fields = [(35, "A"), (49, f"DESK{rng.randint(1, 9)}_{rng.choice(['PWR', 'GAS', 'EUA'])}"),
              (56, rng.choice(["ICE", "EEXTRADE", "NASDAQCOMMOD"])), (34, "1"),
              (52, f"2024{rng.randint(1, 12):02d}{rng.randint(10, 28)}-0{rng.randint(6, 9)}:00:0{rng.randint(0, 9)}"
                   f".{digits(rng, 3)}"), (98, "0"), (108, "30"), (553, f"trader{rng.randint(1, 40):02d}")]
    if password is not None:
        fields.append((554, password))
    return fix_message(fields, rng.choice(["|", "^A", " "]) if password is None else rng.choice(["|", "^A"]))


def v_password(rng: random.Random, i: int) -> Value:
    pw = password_value(rng)
    user = f"{rng.choice(FIRST)}.{rng.choice(LAST)}"
    lang = list(LANGS)[i % len(LANGS)]
    forms = [
        ("fix_logon", _fix_logon(rng, pw)),
        ("snmpv3", f'createUser opsmon SHA-256 "{pw}" AES'),
        ("gateway_ini", f"[web]\nadmin_user = admin\nadmin_password = {pw}"),
        ("localized", f"{LANGS[lang][1]}: {pw}"),
        ("portal_login", f"Installer portal login -> username: {user} / password: {pw}"),
        ("yaml", f"historian:\n  user: svc_pi\n  password: '{pw}'"),
        ("mosquitto", f"mosquitto_sub -h mqtt.grid.internal -p 8883 -u meter-gw -P '{pw}' -t 'meters/#'"),
        ("chat", f"my online account password is {pw} if you need to log in and fix the tariff"),
        ("localized_msg", f"{LANGS[lang][0]} -- {LANGS[lang][1]} ({user}): {pw}"),
        ("rtu_cli", f"rtu# set user engineer password {pw}"),
    ]
    style, snip = forms[i % len(forms)]
    return style, pw, snip, False


def aws_secret_value(rng: random.Random) -> str:
    """IAM's 40-character secret access key (base64 alphabet)."""
    return pick(rng, B64, 40)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    secret = aws_secret_value(rng)
    key_id = rng.choice(["AKIA", "ASIA"]) + pick(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    forms = [
        ("env", f"AWS_ACCESS_KEY_ID={key_id}\nAWS_SECRET_ACCESS_KEY={secret}"),
        ("ini", f"[meter-ingest]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}"),
        ("csv", f"User name,Access key ID,Secret access key\niot-ingest,{key_id},{secret}"),
        ("configure", f"AWS Access Key ID [None]: {key_id}\nAWS Secret Access Key [None]: {secret}\n"
                      "Default region name [None]: eu-west-1"),
        ("boto3", f'boto3.client("timestream-write", aws_access_key_id="{key_id}", aws_secret_access_key="{secret}")'),
        ("beside", f"keys for the meter data lake: {key_id} {secret}"),
        ("terraform", f'provider "aws" {{\n  access_key = "{key_id}"\n  secret_key = "{secret}"\n}}'),
    ]
    style, snip = forms[i % len(forms)]
    return style, secret, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    forms = ["slack", "discord", "teams", "power_automate", "google_chat", "mattermost", "rocketchat", "zapier",
             "ifttt"]
    style = forms[i % len(forms)]
    if style == "slack":
        token = pick(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, UPPER + string.digits, 10)}/" \
              f"B{pick(rng, UPPER + string.digits, 10)}/{token}"
    elif style == "discord":
        token = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{token}"
    elif style == "teams":
        token = pick(rng, HEX, 32)
        url = f"https://{rng.choice(['gridco', 'northpower', 'solarline'])}.webhook.office.com/webhookb2/" \
              f"{_uid(rng)}@{_uid(rng)}/IncomingWebhook/{token}/{_uid(rng)}"
    elif style == "power_automate":
        token = pick(rng, URLSAFE, 43)
        url = f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}" \
              f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={token}"
    elif style == "google_chat":
        token = pick(rng, URLSAFE, 43)
        url = f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy" \
              f"{pick(rng, URLSAFE, 33)}&token={token}"
    elif style == "mattermost":
        token = pick(rng, LOWER + string.digits, 26)
        url = f"https://chat.gridops.example/hooks/{token}"
    elif style == "rocketchat":
        token = pick(rng, ALNUM, 48)
        url = f"https://rocket.fieldcrew.example/hooks/{pick(rng, ALNUM, 24)}/{token}"
    elif style == "zapier":
        token = pick(rng, LOWER + string.digits, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{token}/"
    else:
        token = pick(rng, URLSAFE, 22)
        url = f"https://maker.ifttt.com/trigger/battery_low/with/key/{token}"
    label = rng.choice(["OUTAGE_ALERT_WEBHOOK=", "alerts.url: ", "Notify the on-call channel via ", "webhook: "])
    return style, token, f"{label}{url}", False


def whsec_value(rng: random.Random) -> str:
    """A Stripe webhook signing secret: `whsec_` and 32 base62 characters, as the dashboard shows it."""
    return "whsec_" + pick(rng, ALNUM, 32)


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = whsec_value(rng)
    forms = [
        ("env", f"STRIPE_WEBHOOK_SECRET={secret}"),
        ("code", f'stripe.Webhook.construct_event(payload, sig_header, "{secret}")'),
        ("cli", f"> Ready! Your webhook signing secret is {secret} (^C to quit)"),
        ("yaml", f"billing:\n  stripe:\n    endpoint_secret: {secret}"),
        ("prose", f"signing secret for the prepay top-up endpoint is {secret}"),
    ]
    style, snip = forms[i % len(forms)]
    return style, secret, snip, False


def v_connection_string(rng: random.Random, i: int) -> Value:
    # the password in characters that URI userinfo and key=value strings take unescaped (RFC 3986 unreserved, !*)
    pw = "".join(c if c in ALNUM + "!*-._~" else "-" for c in password_value(rng))
    host = rng.choice(["billing-db", "mdm-prod", "scada-hist", "trading-risk", "crm-sql"])
    forms = ["azure_storage", "event_hubs", "iot_hub", "adonet", "odbc", "jdbc", "postgres_uri", "mongodb",
             "amqp", "mqtt", "redis"]
    style = forms[i % len(forms)]
    if style == "azure_storage":
        secret = base64.b64encode(rng.randbytes(64)).decode()
        snip = f"DefaultEndpointsProtocol=https;AccountName=meterreads{rng.randint(1, 9)};AccountKey={secret};" \
               "EndpointSuffix=core.windows.net"
    elif style in ("event_hubs", "iot_hub"):
        secret = base64.b64encode(rng.randbytes(32)).decode()
        snip = f"Endpoint=sb://telemetry-{rng.randint(1, 9)}.servicebus.windows.net/;SharedAccessKeyName=" \
               f"RootManageSharedAccessKey;SharedAccessKey={secret};EntityPath=meter-events" \
            if style == "event_hubs" else \
            f"HostName=smartgrid-hub.azure-devices.net;DeviceId=meter-{digits(rng, 6)};SharedAccessKey={secret}"
    else:
        secret = pw
        snip = {
            "adonet": f"Server=tcp:{host}.database.windows.net,1433;Database=billing;User Id=svc_bill;"
                      f"Password={pw};Encrypt=True;",
            "odbc": f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=mdm;Uid=etl;Pwd={pw};",
            "jdbc": f"jdbc:postgresql://{host}:5432/settlement?user=settle&password={pw}&ssl=true",
            "postgres_uri": f"postgresql://readings:{pw}@{host}.internal:5432/ami",
            "mongodb": f"mongodb+srv://app_crm:{pw}@cluster0.{pick(rng, LOWER, 5)}.mongodb.net/customers",
            "amqp": f"amqps://outage_bus:{pw}@mq.{host}.internal:5671/outages",
            "mqtt": f"mqtts://gw_{digits(rng, 4)}:{pw}@broker.ami.internal:8883",
            "redis": f"rediss://:{pw}@{host}-cache.internal:6380/0",
        }[style]
    return style, secret, snip, False


def v_labelled_key(rng: random.Random, i: int) -> Value:
    forms = [
        ("eia", "EIA API key: ", lambda: pick(rng, ALNUM, 40)),
        ("entsoe", "ENTSO-E securityToken=", lambda: _uid(rng)),
        ("binance", "X-MBX-APIKEY: ", lambda: pick(rng, ALNUM, 64)),
        ("kraken", "API-Key: ", lambda: base64.b64encode(rng.randbytes(42)).decode()),
        ("solaredge", "SolarEdge API key: ", lambda: pick(rng, UPPER + string.digits, 32)),
        ("enphase", "api_key = ", lambda: pick(rng, HEX, 32)),
        ("pvoutput", "X-Pvoutput-Apikey: ", lambda: pick(rng, HEX, 40)),
        ("fr", "Clé API : ", lambda: pick(rng, ALNUM, 32)),
        ("de", "API-Schlüssel: ", lambda: pick(rng, ALNUM, 36)),
        ("es", "Clave de API: ", lambda: pick(rng, HEX, 48)),
        ("ja", "APIキー: ", lambda: pick(rng, ALNUM, 40)),
        ("pagerduty", "routing_key: ", lambda: pick(rng, HEX, 32)),
    ]
    style, label, make = forms[i % len(forms)]
    key = make()
    return style, key, f"{label}{key}", False


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _json_u(text: str, n: int) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text[:n]) + text[n:]


def v_disguised(rng: random.Random, i: int) -> Value:
    base_forms = [
        lambda: "sk_live_" + pick(rng, ALNUM, 24),
        lambda: aws_secret_value(rng),
        lambda: password_value(rng),
        lambda: f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}",
        lambda: "glsa_" + pick(rng, ALNUM, 32) + "_" + pick(rng, HEX, 8),
    ]
    plain = base_forms[i % len(base_forms)]()
    style = ["zwsp", "fullwidth", "percent", "json_u"][(i // len(base_forms)) % 4]
    if style == "zwsp":
        cut = rng.randint(4, len(plain) - 4)
        secret = plain[:cut] + "\u200b" + plain[cut:]
        return style, secret, f"token (copied from the portal): {secret}", False
    if style == "fullwidth":
        secret = _fullwidth(plain)
        return style, secret, f"{rng.choice(['鍵', 'key', 'パスワード'])}：{secret}", False
    if style == "percent":
        secret = "".join(f"%{b:02X}" for b in plain.encode())
        return style, secret, f"GET /api/export?format=csv&auth={secret} HTTP/1.1", False
    secret = _json_u(plain, rng.randint(2, 6))
    return style, secret, f'{{"integration": "billing", "secret": "{secret}"}}', True


EMAIL_DOMAINS = ["gmail.com", "outlook.com", "web.de", "orange.fr", "btinternet.com", "gmx.de", "yahoo.co.in",
                 "rediffmail.com", "free.fr", "t-online.de", "icloud.com", "proton.me", "hotmail.co.uk", "libero.it"]


def v_email(rng: random.Random, i: int) -> Value:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = [f"{first}.{last}", f"{first}{last}{rng.randint(1, 99)}", f"{first[0]}.{last}", f"{first}_{last}",
             f"{first}.{last}+energy"][i % 5]
    addr = f"{local}@{rng.choice(EMAIL_DOMAINS)}"
    lang = list(LANGS)[i % len(LANGS)]
    forms = [
        ("billing", f"E-bill recipient: {addr}"),
        ("move", f"moving out on the 14th, send the final bill to {addr}"),
        ("localized", f"{LANGS[lang][3]}: {addr}"),
        ("mime", f"To: {first.title()} {last.title()} <{addr}>"),
        ("portal", f"installer account owner {addr} (homeowner)"),
    ]
    style, snip = forms[i % len(forms)]
    return style, addr, snip, False


def phone_case(rng: random.Random, i: int, forms: list[tuple[str, str]], contexts: list[str]) -> Value:
    """A number in one of its national forms with the country's context words; every third +CC number in the
    agent's message to the user, under the phone label of the user's language."""
    style, number = forms[i % len(forms)]
    if style.startswith("plus") and i % 3 == 0:
        lead, _pw, phone, _mail = LANGS[rng.choice(list(LANGS))]
        return f"{style}_agent", number, f"{lead}. {phone}: {number}", False
    ctx = contexts[(i // len(forms)) % len(contexts)]
    return style, number, ctx.format(number), False


def _sub(rng: random.Random, n: int) -> str:
    return str(rng.randint(2, 9)) + digits(rng, n - 1)


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    npa = rng.choice(["212", "312", "415", "617", "713", "214", "305", "404", "503", "602", "720", "206", "512",
                      "416", "604", "403", "514", "613", "780", "902"])
    nxx = rng.choice([n for n in (f"{rng.randint(2, 9)}{digits(rng, 2)}" for _ in range(3))
                      if n[1:] != "11" and n != "555"] or ["234"])
    line = digits(rng, 4)
    forms = [("paren", f"({npa}) {nxx}-{line}"), ("dash", f"{npa}-{nxx}-{line}"), ("dot", f"{npa}.{nxx}.{line}"),
             ("plus1", f"+1 {npa} {nxx} {line}"), ("one_dash", f"1-{npa}-{nxx}-{line}")]
    return phone_case(rng, i, forms, ["call me at {}", "Cell: {}", "callback number {} for the outage crew",
                                      "cellulaire : {}", "Phone {} (landlord)"])


def v_phone_uk(rng: random.Random, i: int) -> Value:
    mob = "7" + rng.choice("12345789") + digits(rng, 8)
    city = rng.choice([("20", "7"), ("20", "8"), ("121", ""), ("161", ""), ("113", ""), ("131", ""), ("117", "")])
    rest = city[1] + _sub(rng, 8 - len(city[1])) if city[0] == "20" else _sub(rng, 7)
    geo = f"0{city[0]} {rest[:4]} {rest[4:]}" if city[0] == "20" else f"0{city[0]} {rest[:3]} {rest[3:]}"
    forms = [("mobile", f"0{mob[:4]} {mob[4:]}"), ("plus44", f"+44 {mob[:4]} {mob[4:]}"),
             ("plus44_0", f"+44 (0){mob[:4]} {mob[4:]}"), ("geographic", geo), ("compact", f"0{mob}")]
    return phone_case(rng, i, forms, ["ring me on {}", "Mobile: {}", "contact number {} for the engineer visit",
                                      "tel {} (evenings)"])


def v_phone_fr(rng: random.Random, i: int) -> Value:
    first = rng.choice(["6", "7", "1", "2", "3", "4", "5"])
    rest = (rng.choice("345678") if first == "7" else str(rng.randint(1, 9))) + digits(rng, 7)
    pairs = [first.rjust(2, "0")] + [rest[k:k + 2] for k in range(0, 8, 2)]
    forms = [("pairs", " ".join(pairs)), ("dots", ".".join(pairs)), ("compact", "".join(pairs)),
             ("plus33", "+33 " + first + " " + " ".join(pairs[1:])), ("plus33_0", "+33 (0)" + first + " "
                                                                       + " ".join(pairs[1:]))]
    return phone_case(rng, i, forms, ["portable : {}", "Tél. {}", "vous pouvez me joindre au {}",
                                      "mon numéro de téléphone : {}"])


DE_MOBILE = {"0151": 8, "0152": 8, "0157": 8, "0159": 8, "0160": 7, "0162": 7, "0170": 7, "0171": 7, "0172": 7,
             "0175": 7, "0176": 8, "0177": 7, "0179": 7}


def v_phone_de(rng: random.Random, i: int) -> Value:
    prefix = rng.choice(list(DE_MOBILE))
    sub = _sub(rng, DE_MOBILE[prefix])
    area, size = rng.choice([("30", 8), ("40", 8), ("89", 7), ("221", 7), ("69", 8), ("711", 7)])
    land = _sub(rng, size)
    forms = [("mobile", f"{prefix} {sub}"), ("slash", f"{prefix}/{sub}"), ("plus49", f"+49 {prefix[1:]} {sub}"),
             ("plus49_0", f"+49 (0){area} {land}"), ("landline", f"0{area} {land}")]
    return phone_case(rng, i, forms, ["Handy: {}", "Rückruf bitte unter {}", "Telefonnummer {} (Vermieter)",
                                      "mobil erreichbar unter {}"])


def v_phone_in(rng: random.Random, i: int) -> Value:
    mob = str(rng.randint(6, 9)) + digits(rng, 9)
    std, first = rng.choice([("11", "2"), ("22", "2"), ("80", "4"), ("44", "2"), ("33", "2")])
    land = first + digits(rng, 7)
    forms = [("split", f"{mob[:5]} {mob[5:]}"), ("plus91", f"+91 {mob[:5]} {mob[5:]}"), ("plus91_dash", f"+91-{mob}"),
             ("zero", f"0{mob}"), ("landline", f"0{std}-{land[:4]} {land[4:]}")]
    return phone_case(rng, i, forms, ["mobile no. {}", "मोबाइल नंबर: {}", "contact no {} for meter reading",
                                      "WhatsApp {} regarding the bill"])


def ssn_value(rng: random.Random) -> tuple[str, str, str]:
    """An SSN by the SSA's rules: area 001-899 but 666, group 01-99, serial 0001-9999."""
    area = rng.choice([a for a in (rng.randint(1, 899) for _ in range(3)) if a != 666] or [123])
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int) -> Value:
    area, grp, serial = ssn_value(rng)
    forms = [("dash", f"{area}-{grp}-{serial}"), ("space", f"{area} {grp} {serial}"), ("compact", area + grp + serial)]
    style, ssn = forms[i % 3]
    ctx = ["SSN: {}", "Social Security Number {} for the LIHEAP application",
           "credit check to start service, SS# {}", "applicant ssn={}"][(i // 3) % 4]
    return style, ssn, ctx.format(ssn), False


CARD_BRANDS: dict[str, tuple[list[str], int]] = {
    "visa": (["4"], 16), "mastercard": (["51", "52", "53", "54", "55", "2221", "2500", "2720"], 16),
    "amex": (["34", "37"], 15), "discover": (["6011", "644", "649", "65"], 16),
    "jcb": (["3528", "3550", "3589"], 16), "diners": (["36"], 14), "unionpay": (["62"], 16),
}


def card_number(rng: random.Random, brand: str) -> str:
    """An IIN of the brand, random digits, the Luhn digit."""
    prefixes, length = CARD_BRANDS[brand]
    partial = rng.choice(prefixes)
    partial += digits(rng, length - 1 - len(partial))
    return partial + luhn_digit(partial)


def v_card(rng: random.Random, i: int) -> Value:
    brand = list(CARD_BRANDS)[i % len(CARD_BRANDS)]
    number = card_number(rng, brand)
    sep = ["", " ", "-"][(i // len(CARD_BRANDS)) % 3]
    printed = group_card(number, sep) if sep else number
    ctx = ["pay the arrears with card {}", "Card number: {}", "Kartennummer {}", "numéro de carte : {}",
           "autopay card {} exp 09/27"][i % 5]
    return f"{brand}_{'compact' if not sep else 'grouped'}", printed, ctx.format(printed), False


IBAN_STRUCTURES = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "NL": "4a10n", "ES": "4n4n1n1n10n",
                   "IT": "1a5n5n12c", "BE": "3n7n2n", "AT": "5n11n", "IE": "4a6n8n", "PT": "4n4n11n2n",
                   "PL": "8n16n", "SE": "3n16n1n", "DK": "4n9n1n", "FI": "3n11n", "LU": "3n13c", "NO": "4n6n1n"}
BANK_CODES = {"NL": ["ABNA", "INGB", "RABO", "TRIO"], "GB": ["NWBK", "BARC", "LOYD", "HBUK"],
              "IE": ["AIBK", "BOFI", "IPBS"]}


def iban_value(rng: random.Random, country: str) -> str:
    """A compact IBAN: country, MOD 97-10 check digits, a BBAN of the registry's structure (real bank codes where
    the BBAN starts with four letters)."""
    structure = IBAN_STRUCTURES[country]
    if country in BANK_CODES:
        body = rng.choice(BANK_CODES[country]) + bban(rng, structure[2:])
    else:
        body = bban(rng, structure)
    return country + iban_check(country, body) + body


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_STRUCTURES)[i % len(IBAN_STRUCTURES)]
    iban = iban_value(rng, country)
    style = ["grouped", "compact", "pain008", "mandate"][(i // len(IBAN_STRUCTURES)) % 4]
    printed = group(iban, 4, " ") if style in ("grouped", "mandate") else iban
    snip = {
        "grouped": f"IBAN: {printed}",
        "compact": f"please switch my direct debit to {printed}",
        "pain008": f"<DrctDbtTxInf><DbtrAcct><Id><IBAN>{printed}</IBAN></Id></DbtrAcct></DrctDbtTxInf>",
        "mandate": f"SEPA-Lastschriftmandat, Mandatsreferenz M{digits(rng, 8)}, IBAN des Kontoinhabers {printed}",
    }[style]
    return style, printed, snip, False


def basic_credential(rng: random.Random) -> str:
    """HTTP Basic (RFC 7617): base64 of `user:password`."""
    user = rng.choice(["ami-export", "installer", "svc_scada", f"meter{digits(rng, 4)}"])
    return base64.b64encode(f"{user}:{password_value(rng)}".encode()).decode()


def v_auth_header(rng: random.Random, i: int) -> Value:
    forms = [
        ("basic", "Basic", lambda: basic_credential(rng)),
        ("bearer", "Bearer", lambda: pick(rng, URLSAFE, rng.randint(40, 64))),
        ("drf_token", "Token", lambda: pick(rng, HEX, 40)),
        ("es_apikey", "ApiKey", lambda: base64.b64encode(f"{pick(rng, URLSAFE, 20)}:{pick(rng, URLSAFE, 22)}"
                                                          .encode()).decode()),
        ("okta_ssws", "SSWS", lambda: "00" + pick(rng, URLSAFE, 40)),
    ]
    style, scheme, make = forms[i % len(forms)]
    cred = make()
    ctx = ["Authorization: {} {}", "curl -H 'Authorization: {} {}' https://api.dso.example/v1/outages",
           '"authorization": "{} {}"'][(i // len(forms)) % 3]
    return style, cred, ctx.format(scheme, cred), False


def jwt_value(rng: random.Random, alg: str) -> str:
    """A signed JWT (RFC 7519, JWS compact RFC 7515): header and claims base64url JSON, a signature of the
    algorithm's size (RS256 256 bytes, ES256 64, HS256 32)."""
    header = {"alg": alg, "typ": "JWT", "kid": pick(rng, HEX, 8)}
    claims = {"iss": rng.choice(["https://auth.homeenergy.example", "https://login.installer-portal.example",
                                 "https://id.dso.example/realms/field"]),
              "sub": _uid(rng), "aud": "energy-api", "scope": rng.choice(["meter:read", "battery:control", "openid"]),
              "iat": 1_735_000_000 + rng.randint(0, 10**6)}
    claims["exp"] = claims["iat"] + 3600
    size = {"RS256": 256, "ES256": 64, "HS256": 32}[alg]
    return ".".join((b64url(json.dumps(header, separators=(",", ":")).encode()),
                     b64url(json.dumps(claims, separators=(",", ":")).encode()), b64url(rng.randbytes(size))))


def v_jwt(rng: random.Random, i: int) -> Value:
    alg = ["RS256", "ES256", "HS256"][i % 3]
    token = jwt_value(rng, alg)
    ctx = ["access_token={}", "Authorization: Bearer {}", "home assistant long-lived token: {}",
           '{{"id_token": "{}"}}', "set-cookie: auth={}; HttpOnly; Secure"][(i // 3) % 5]
    return alg.lower(), token, ctx.format(token), False


def _pem_body(pem: str) -> str:
    return "\n".join(line for line in pem.strip().splitlines() if not line.startswith("-----"))


def v_private_key(rng: random.Random, i: int) -> Value:
    style = ["sec1", "pkcs8", "openssh", "cdp_json"][i % 4]
    if style == "openssh":
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"field-laptop@substation")
        body = "\n".join(group(base64.b64encode(blob).decode(), 70, "\n").splitlines())
        pem = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
        return style, body, pem, False
    key = ec.derive_private_key(rng.getrandbits(255) + 1, ec.SECP256R1())
    fmt = serialization.PrivateFormat.PKCS8 if style == "pkcs8" else serialization.PrivateFormat.TraditionalOpenSSL
    pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()
    body = _pem_body(pem)
    if style == "cdp_json":
        name = f"organizations/{_uid(rng)}/apiKeys/{_uid(rng)}"
        return style, body.replace("\n", "\\n"), _dump({"name": name, "privateKey": pem + "\n"}), True
    lead = "# IEC 62351 client key for the RTU TLS tunnel\n" if style == "sec1" else "tls.key: |\n"
    return style, body, lead + pem, False


def v_session_cookie(rng: random.Random, i: int) -> Value:
    forms = [
        ("phpsessid", "PHPSESSID", lambda: pick(rng, HEX, 32)),
        ("jsessionid", "JSESSIONID", lambda: pick(rng, HEXU, 32) + rng.choice(["", ".node0", ".worker1"])),
        ("aspnet", "ASP.NET_SessionId", lambda: pick(rng, LOWER[:22] + "012345", 24)),
        ("connect_sid", "connect.sid", lambda: f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, B64, 43)}"),
        ("django", "sessionid", lambda: pick(rng, LOWER + string.digits, 32)),
    ]
    style, name, make = forms[i % len(forms)]
    value = make()
    ctx = ["Cookie: {}={}; theme=dark", "Set-Cookie: {}={}; Path=/; Secure; HttpOnly",
           "curl -b '{}={}' https://portal.solar-installer.example/sites"][(i // len(forms)) % 3]
    return style, value, ctx.format(name, value), False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, B32, [16, 32][i % 2])
    style = ["otpauth", "manual_grouped", "labelled"][i % 3]
    if style == "otpauth":
        account = quote(f"{rng.choice(FIRST)}@{rng.choice(EMAIL_DOMAINS)}")
        return style, seed, f"otpauth://totp/GridPortal:{account}?secret={seed}&issuer=GridPortal&digits=6", False
    if style == "manual_grouped":
        printed = group(seed.lower(), 4, " ")
        return style, printed, f"Can't scan? Enter this key in your authenticator app: {printed}", False
    return style, seed, f"mfa_totp_secret = {seed}", False


def v_recovery_code(rng: random.Random, i: int) -> Value:
    forms = [
        ("github", lambda: f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}"),
        ("google", lambda: f"{digits(rng, 4)} {digits(rng, 4)}"),
        ("microsoft", lambda: "-".join(pick(rng, UPPER + string.digits, 5) for _ in range(5))),
        ("portal", lambda: "-".join(pick(rng, UPPER + string.digits, 4) for _ in range(4))),
    ]
    style, make = forms[i % len(forms)]
    code = make()
    ctx = ["Recovery code: {}", "one of my backup codes is {}", "Wiederherstellungscode: {}",
           "code de récupération : {}", "emergency access code for the trading portal {}"][(i // 4) % 5]
    return style, code, ctx.format(code), False


def v_oauth_secret(rng: random.Random, i: int) -> Value:
    style = ["client_secret_form", "refresh_form", "ha_config", "curl", "yaml"][i % 5]
    client_id = rng.choice(["ownerapi", "enlighten-home", f"app-{pick(rng, HEX, 12)}"])
    if style in ("refresh_form", "ha_config"):
        secret = pick(rng, URLSAFE, rng.randint(40, 86))
    else:
        secret = pick(rng, ALNUM + "~._-", rng.randint(32, 48))
    snip = {
        "client_secret_form": f"grant_type=client_credentials&client_id={client_id}&client_secret={secret}",
        "refresh_form": f"grant_type=refresh_token&client_id={client_id}&refresh_token={secret}",
        "ha_config": _dump({"domain": "tesla_fleet",
                            "data": {"token": {"refresh_token": secret, "expires_in": 28800}}}),
        "curl": f"curl -u {client_id}:{secret} -d grant_type=client_credentials https://auth.battery.example/token",
        "yaml": f"oauth:\n  client_id: {client_id}\n  client_secret: {secret}",
    }[style]
    return style, secret, snip, False


def v_meter_key(rng: random.Random, i: int) -> Value:
    style = ["lorawan_appkey", "chirpstack", "wmbus", "dlms_guek", "dlms_gak", "dnp3_update"][i % 6]
    key = pick(rng, HEXU, 32) if style != "dnp3_update" else pick(rng, HEXU, rng.choice([32, 64]))
    if style in ("wmbus", "chirpstack"):
        key = key.lower() if style == "chirpstack" else key
    snip = {
        "lorawan_appkey": f"DevEUI 70B3D5{pick(rng, HEXU, 10)}  AppKey {key}",
        "chirpstack": _dump({"deviceKeys": {"nwkKey": key, "appKey": "00000000000000000000000000000000"}}),
        "wmbus": f"name=flat{rng.randint(1, 40)}_heat\ndriver=auto\nid={digits(rng, 8)}\nkey={key}",
        "dlms_guek": f"Global unicast encryption key (GUEK): {key}",
        "dlms_gak": f"gurux director -S COM3 -c 16 -T 4D4D4D00{pick(rng, HEXU, 8)} -A {key}",
        "dnp3_update": f"[secure_auth]\nuser = 1\nupdate_key = {key}",
    }[style]
    return style, key, snip, False


def provider(contexts: list[str], make: Callable[[random.Random], str]) -> Callable[[random.Random, int], Value]:
    """A provider token kind: the token as its docs print it, in one of the contexts (`{}` the token); the style
    names the context: an env line, inline (a header, a call, a command) or prose."""
    def gen(rng: random.Random, i: int) -> Value:
        token = make(rng)
        context = contexts[i % len(contexts)]
        return ["env", "inline", "prose"][i % len(contexts)], token, context.format(token), False
    return gen


def stripe_key(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(["sk_live_", "rk_live_"]) + pick(rng, ALNUM, 24)
    return "sk_live_51" + pick(rng, ALNUM, 97)


def llm_key(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "sk-proj-" + pick(rng, URLSAFE, 156)
    return "sk-ant-api03-" + pick(rng, URLSAFE, 93) + "AA"


def influx_token(rng: random.Random) -> str:
    return base64.urlsafe_b64encode(rng.randbytes(64)).decode()


def tailscale_key(rng: random.Random) -> str:
    return f"tskey-auth-k{pick(rng, ALNUM, rng.randint(8, 11))}CNTRL-{pick(rng, ALNUM, 33)}"


# ---- national ids (outside the target) -------------------------------------------------------------------------

def fr_nir(rng: random.Random) -> str:
    """NIR: sex, year, month, département, commune, order, key 97 - (13 digits mod 97)."""
    dept = f"{rng.choice([d for d in range(1, 96) if d != 20]):02d}"
    core = f"{rng.randint(1, 2)}{digits(rng, 2)}{rng.randint(1, 12):02d}{dept}{rng.randint(1, 990):03d}" \
           f"{rng.randint(1, 999):03d}"
    key = f"{97 - int(core) % 97:02d}"
    return " ".join((core[0], core[1:3], core[3:5], core[5:7], core[7:10], core[10:13], key))


CF_ODD = dict(zip(string.digits + UPPER, [1, 0, 5, 7, 9, 13, 15, 17, 19, 21] * 2 + [
    2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23], strict=True))
CF_EVEN = {**{d: int(d) for d in string.digits}, **{c: k for k, c in enumerate(UPPER)}}


def it_cf(rng: random.Random) -> str:
    """Codice fiscale: surname and name consonants, year, month letter, day (+40 women), Belfiore code, and the
    check letter from the odd/even tables mod 26."""
    cons = "BCDFGHJKLMNPRSTVZ"
    day = rng.randint(1, 28) + rng.choice([0, 40])
    body = pick(rng, cons, 6) + digits(rng, 2) + rng.choice("ABCDEHLMPRST") + f"{day:02d}" + rng.choice(
        ["H501", "F205", "F839", "L219", "G273", "A944", "D612"])
    total = sum(CF_ODD[c] if k % 2 == 0 else CF_EVEN[c] for k, c in enumerate(body))
    return body + chr(65 + total % 26)


def be_nrn(rng: random.Random) -> str:
    """Belgian national register number: YYMMDD, serial 001-997, 97 - mod 97 (a 2 before the nine digits for
    births from 2000)."""
    year = rng.randint(1940, 2006)
    nine = f"{year % 100:02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(1, 997):03d}"
    check = 97 - int(("2" if year >= 2000 else "") + nine) % 97
    return f"{nine[:2]}.{nine[2:4]}.{nine[4:6]}-{nine[6:]}.{check:02d}"


def fi_hetu(rng: random.Random) -> str:
    """Henkilötunnus: DDMMYY, century sign, individual number 002-899, check character (mod 31)."""
    year = rng.randint(1940, 2006)
    date = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{year % 100:02d}"
    ind = f"{rng.randint(2, 899):03d}"
    return date + ("A" if year >= 2000 else "-") + ind + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(date + ind) % 31]


def se_pnr(rng: random.Random) -> str:
    """Personnummer: YYMMDD-NNN and a Luhn digit over the nine digits."""
    nine = f"{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    return f"{nine[:6]}-{nine[6:]}{luhn_digit(nine)}"


def no_fnr(rng: random.Random) -> str:
    """Fødselsnummer: DDMMYY, individual number 000-499 (born 1900-1999), two mod 11 check digits."""
    while True:
        base = [int(c) for c in f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{rng.randint(40, 99):02d}"
                                f"{rng.randint(0, 499):03d}"]
        k1 = 11 - sum(w * d for w, d in zip([3, 7, 6, 1, 8, 9, 4, 5, 2], base, strict=True)) % 11
        k1 = 0 if k1 == 11 else k1
        k2 = 11 - sum(w * d for w, d in zip([5, 4, 3, 2, 7, 6, 5, 4, 3, 2], base + [k1], strict=True)) % 11
        k2 = 0 if k2 == 11 else k2
        if k1 < 10 and k2 < 10:
            return "".join(map(str, base)) + f"{k1}{k2}"


def pt_nif(rng: random.Random) -> str:
    """NIF of a person: first digit 1-3, seven digits, check 11 - (weights 9..2 mod 11), 10 and 11 as 0."""
    eight = str(rng.randint(1, 3)) + digits(rng, 7)
    check = 11 - sum(int(d) * (9 - k) for k, d in enumerate(eight)) % 11
    return eight + str(0 if check >= 10 else check)


NATIONAL_IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "fr_nir": (fr_nir, ["numéro de sécurité sociale : {}", "NIR {} (dossier chèque énergie)"]),
    "it_cf": (it_cf, ["codice fiscale: {}", "intestatario della fornitura, C.F. {}"]),
    "be_nrn": (be_nrn, ["rijksregisternummer {}", "numéro de registre national : {}"]),
    "fi_hetu": (fi_hetu, ["henkilötunnus {}", "hetu: {} (sähkösopimus)"]),
    "se_pnr": (se_pnr, ["personnummer {}", "elavtal, pnr: {}"]),
    "no_fnr": (no_fnr, ["fødselsnummer {}", "strømavtale, fnr. {}"]),
    "pt_nif": (pt_nif, ["NIF {}", "número de contribuinte: {} (contrato de eletricidade)"]),
}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    make, contexts = NATIONAL_IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        return f"ctx{i % len(contexts)}", value, contexts[i % len(contexts)].format(value), False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "auth_header": v_auth_header, "jwt": v_jwt, "private_key": v_private_key, "session_cookie": v_session_cookie,
    "totp_seed": v_totp_seed, "recovery_code": v_recovery_code, "oauth_secret": v_oauth_secret,
    "meter_key": v_meter_key,
    "stripe_key": provider(["STRIPE_SECRET_KEY={}", "stripe.api_key = \"{}\"", "prepay billing key: {}"], stripe_key),
    "sendgrid_key": provider(["SENDGRID_API_KEY={}", 'smtp.login("apikey", "{}")', "sg key {}"],
                             lambda r: f"SG.{pick(r, URLSAFE, 22)}.{pick(r, URLSAFE, 43)}"),
    "google_api_key": provider(["GOOGLE_MAPS_KEY={}", "<script src=\"https://maps.googleapis.com/maps/api/js?key={}"
                                "\"></script>", "outage map key {}"], lambda r: "AIza" + pick(r, URLSAFE, 35)),
    "slack_token": provider(["SLACK_BOT_TOKEN={}", "Authorization: Bearer {}", "bot token for #grid-ops: {}"],
                            lambda r: f"xoxb-{digits(r, 12)}-{digits(r, 13)}-{pick(r, ALNUM, 24)}"
                            if r.random() < 0.6 else f"xoxp-{digits(r, 12)}-{digits(r, 12)}-{digits(r, 13)}-"
                                                     f"{pick(r, HEX, 32)}"),
    "llm_key": provider(["LLM_API_KEY={}", 'client = Client(api_key="{}")', "the agent's model key is {}"], llm_key),
    "influx_token": provider(["INFLUX_TOKEN={}", "Authorization: Token {}", "influx bucket list -t {}"],
                             influx_token),
    "grafana_token": provider(["GF_SA_TOKEN={}", "Authorization: Bearer {}", "grafana service account token {}"],
                              lambda r: "glsa_" + pick(r, ALNUM, 32) + "_" + pick(r, HEX, 8)),
    "databento_key": provider(["DATABENTO_API_KEY={}", "db.Historical(\"{}\")", "market data key {}"],
                              lambda r: "db-" + pick(r, ALNUM, 29)),
    "tailscale_key": provider(["TS_AUTHKEY={}", "tailscale up --authkey={}", "auth key for the RTU jump box: {}"],
                              tailscale_key),
    **{kind: national_id(kind) for kind in NATIONAL_IDS},
}


def carry(rng: random.Random, value: Value) -> tuple[str, str, bool]:
    """The value's snippet inside a carrier: a JSON one a third of the time, a text one otherwise and always for raw
    snippets, never an indenting one for a multi-line secret."""
    style, secret, snip, raw_only = value
    in_json = not raw_only and rng.random() < 0.34
    names = list(JSON_CARRIERS) if in_json else [n for n in TEXT_CARRIERS if "\n" not in secret or n not in INDENTING]
    name = rng.choice(names)
    return name, CARRIERS[name](rng, snip, secret), in_json


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, deterministic."""
    rng = random.Random(SEED)
    for kind, gen in KINDS.items():
        for i in range(PER_KIND):
            value = gen(rng, i)
            carrier, text, is_json = carry(rng, value)
            yield Case(kind, f"{carrier}/{value[0]}", value[1], text, is_json)


# ---- near misses ----------------------------------------------------------------------------------------------

MPAN_PRIMES = [3, 5, 7, 13, 17, 19, 23, 29, 31, 37, 41, 43]


def n_meter_point(rng: random.Random) -> str:
    """A supply point: an MPAN core (distributor 10-23, ten digits, the check digit: the first twelve by the primes,
    mod 11, mod 10) or a GS1 GSRN (17 digits, the GS1 mod 10 digit with weights 3 and 1 from the right)."""
    if rng.random() < 0.5:
        twelve = f"{rng.randint(10, 23)}{digits(rng, 10)}"
        core = twelve + str(sum(p * int(d) for p, d in zip(MPAN_PRIMES, twelve, strict=True)) % 11 % 10)
        return f"MPAN core {core[:2]} {core[2:6]} {core[6:10]} {core[10:]} (profile class 01)"
    seventeen = rng.choice(["8716", "5414"]) + digits(rng, 13)
    total = sum(int(d) * (3 if k % 2 == 0 else 1) for k, d in enumerate(reversed(seventeen)))
    return f"EAN-code aansluiting {seventeen}{(10 - total % 10) % 10}"


def n_lorawan_eui(rng: random.Random) -> str:
    oui = rng.choice(["70B3D57ED0", "A840410000", "0004A30B00", "24E124FFFE"])
    return f"DevEUI {oui}{pick(rng, HEXU, 16 - len(oui))}, JoinEUI 0000000000000000, class A, " \
           f"SF{rng.randint(7, 12)}"


def n_obis(rng: random.Random) -> str:
    code, unit = rng.choice([("1-0:1.8.0", "kWh"), ("1-0:2.8.0", "kWh"), ("1-0:32.7.0", "V"), ("1-0:31.7.0", "A"),
                             ("1-0:1.7.0", "kW"), ("0-1:24.2.1", "m3")])
    return f"{code}*255 = {rng.randint(0, 99999):06d}.{digits(rng, 3)} {unit}"


def n_modbus(rng: random.Random) -> str:
    return f"holding register {rng.randint(40001, 49999)} (FC03) unit {rng.randint(1, 247)}, " \
           f"{rng.choice(['int16', 'uint32', 'float32'])}, scale 0.{rng.randint(1, 9)}, poll {rng.randint(1, 60)}s"


def n_iec61850(rng: random.Random) -> str:
    ln = rng.choice(["MMXU1.TotW.mag.f", "XCBR1.Pos.stVal", "PTOC1.Str.general", "MMXU2.PhV.phsA.cVal.mag.f"])
    return f"IED{rng.randint(1, 40)}LD0/{ln}; GOOSE APPID 0x{rng.randint(0, 0x3FFF):04X}, dst " \
           f"01-0C-CD-01-{rng.randint(0, 1):02X}-{rng.randint(0, 255):02X}, VLAN {rng.randint(0, 4094)}"


def n_coordinates(rng: random.Random) -> str:
    return f"{_site(rng)} at {rng.uniform(43, 58):.5f}, {rng.uniform(-6, 16):.5f} (pole {rng.randint(1, 999)})"


def n_timestamp(rng: random.Random) -> str:
    return rng.choice([_ts(rng), f"52=2024{rng.randint(1, 12):02d}{rng.randint(10, 28)}-1{rng.randint(0, 9)}:"
                       f"{rng.randint(10, 59)}:{rng.randint(10, 59)}.{digits(rng, 3)}",
                       f"epoch_ms={rng.randint(1_700_000_000_000, 1_740_000_000_000)}",
                       f"settlement period {rng.randint(1, 48)} of 2024-{rng.randint(1, 12):02d}-"
                       f"{rng.randint(1, 28):02d}"])


def n_request_id(rng: random.Random) -> str:
    return rng.choice([f"X-Request-Id: {_uid(rng)}", f"traceparent: 00-{pick(rng, HEX, 32)}-{pick(rng, HEX, 16)}-01",
                       f"correlationId={_uid(rng)}"])


def n_fix_logon(rng: random.Random) -> str:
    return _fix_logon(rng, None)


def n_market_quote(rng: random.Random) -> str:
    product, unit, low = rng.choice([("TTF Q1-25", "EUR/MWh", 25), ("DE Base Cal-26", "EUR/MWh", 70),
                                     ("EUA Dec-25", "EUR/t", 60), ("Brent H25", "USD/bbl", 65),
                                     ("NBP Win-25", "p/th", 80), ("Henry Hub F25", "USD/MMBtu", 2)])
    bid = rng.uniform(low, low * 1.4)
    return f"{product} bid {bid:.3f} / ask {bid + 0.05:.3f} {unit}, vol {rng.randint(5, 500)} lots"


def n_order_number(rng: random.Random) -> str:
    return rng.choice([f"11=ORD-2024{rng.randint(1, 12):02d}{rng.randint(10, 28)}-{digits(rng, 6)}",
                       f"Invoice INV-2024-{digits(rng, 6)}", f"Rechnungsnummer 2024/{digits(rng, 6)}",
                       f"work order WO-{digits(rng, 7)}", f"trade id T{digits(rng, 10)}"])


def n_creditor_id(rng: random.Random) -> str:
    """A SEPA creditor identifier (EPC262): country, check digits over the national id (MOD 97-10, the business
    code left out), business code ZZZ, the national id: the utility's published id on every mandate."""
    country, national = rng.choice([("DE", digits(rng, 11)), ("FR", pick(rng, UPPER + string.digits, 6)),
                                    ("NL", digits(rng, 12)), ("ES", digits(rng, 9))])
    return f"Gläubiger-ID {country}{iban_check(country, national)}ZZZ{national}"


def n_placeholder(rng: random.Random) -> str:
    return rng.choice(["password: ********", "API key: <your-api-key>", "email: you@example.com",
                       "DB_PASSWORD=${DB_PASSWORD}", "token: {{ secrets.FEED_TOKEN }}", "IBAN: DEXX XXXX XXXX XXXX XX",
                       "client_secret=YOUR_CLIENT_SECRET", "sk_live_...", "AppKey: <from the device label>"]) \
        + f" # field {rng.randint(1, 40)}"


def n_masked(rng: random.Random) -> str:
    return rng.choice([f"IBAN DE** **** **** **** **{digits(rng, 2)} {digits(rng, 2)}",
                       f"card ending •••• {digits(rng, 4)}", f"+44 7*** ***{digits(rng, 3)}",
                       f"{rng.choice(FIRST)[0]}***@{rng.choice(EMAIL_DOMAINS)}", f"SSN ***-**-{digits(rng, 4)}",
                       f"Konto ****{digits(rng, 4)}"])


def n_version(rng: random.Random) -> str:
    return rng.choice([f"firmware {rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}-r{rng.randint(1, 9)}",
                       "IEC 61850 Ed. 2.1", "DNP3 (IEEE 1815-2012) level 3", "DLMS UA 1000-1 Ed. 15",
                       f"SunSpec model {rng.choice([1, 101, 103, 160, 802])}",
                       f"v{rng.randint(1, 5)}.{rng.randint(0, 40)}.0"])


SERVICE_NUMBERS = ["power cut? call 105", "gas emergency 0800 111 999", "Urgence sécurité gaz 0 800 47 33 33",
                   "ESB Networks emergency 1800 372 999", "Gas Networks Ireland 1800 20 50 50",
                   "call 811 before you dig", "electricity complaint helpline 1912", "Notruf 112",
                   "PG&E customer service 1-800-743-5000"]


def n_service_number(rng: random.Random) -> str:
    return f"{rng.choice(SERVICE_NUMBERS)} (ticket {rng.randint(100, 999)})"


def n_luhn_invalid(rng: random.Random) -> str:
    prefix, length = rng.choice([("4", 16), ("53", 16), ("37", 15), ("6011", 16)])
    partial = prefix + digits(rng, length - 1 - len(prefix))
    bad = str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)
    return f"payment reference {partial}{bad}"


def n_digest(rng: random.Random) -> str:
    return rng.choice([f"firmware image sha256:{pick(rng, HEX, 64)}", f"commit {pick(rng, HEX, 40)}",
                       f"/static/js/portal.{pick(rng, HEX, 8)}.js", f"ETag: \"{pick(rng, HEX, 32)}\""])


def n_css_xpath(rng: random.Random) -> str:
    return rng.choice([f"#meter-reading-input-{rng.randint(1, 9)}",
                       f"//table[@id='tariffs']/tr[{rng.randint(1, 30)}]/td[2]",
                       f".outage-map {{ width: {rng.randint(200, 1600)}px; height: {rng.randint(100, 900)}px; }}",
                       f"div.bill-summary > span:nth-child({rng.randint(1, 9)})"])


def n_csrf_name(rng: random.Random) -> str:
    return rng.choice(['<input type="hidden" name="csrfmiddlewaretoken">', "missing X-CSRF-Token header",
                       'form field "authenticity_token" not found', "_csrf parameter required"]) \
        + f" on /account/{rng.choice(['move', 'direct-debit', 'readings'])}"


def s10_number(rng: random.Random) -> str:
    """A UPU S10 item id: two letters, eight digits, the check digit (weights 8 6 4 2 3 5 9 7; 11 - sum mod 11,
    10 as 0, 11 as 5), the country."""
    eight = digits(rng, 8)
    check = 11 - sum(w * int(d) for w, d in zip([8, 6, 4, 2, 3, 5, 9, 7], eight, strict=True)) % 11
    return f"{rng.choice(['RR', 'CP', 'EE'])}{eight}{ {10: 0, 11: 5}.get(check, check)}{rng.choice(['GB', 'DE', 'FR'])}"


def n_tracking(rng: random.Random) -> str:
    return rng.choice([f"spare meter shipped, tracking {s10_number(rng)}",
                       f"UPS 1Z{pick(rng, UPPER + string.digits, 6)}{digits(rng, 10)}"])


def n_aws_example(rng: random.Random) -> str:
    return rng.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"]) \
        + f"  # from the AWS docs, step {rng.randint(1, 30)}"


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "meter_point": n_meter_point, "lorawan_eui": n_lorawan_eui, "obis": n_obis, "modbus": n_modbus,
    "iec61850": n_iec61850, "coordinates": n_coordinates, "timestamp": n_timestamp, "request_id": n_request_id,
    "fix_logon": n_fix_logon, "market_quote": n_market_quote, "order_number": n_order_number,
    "creditor_id": n_creditor_id, "placeholder": n_placeholder, "masked": n_masked, "version": n_version,
    "service_number": n_service_number, "luhn_invalid": n_luhn_invalid, "digest": n_digest,
    "css_xpath": n_css_xpath, "csrf_name": n_csrf_name, "tracking": n_tracking, "aws_example": n_aws_example,
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), every third inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                name = list(JSON_CARRIERS)[(i // 3 + len(sort)) % len(JSON_CARRIERS)]
                text = JSON_CARRIERS[name](rng, text, "")
            yield sort, text
