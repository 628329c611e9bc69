"""The fifty-third blind redaction corpus: field service, construction and facilities management in Southeast Asia
and Oceania, what an agent that dispatches technicians, runs building-management systems and construction
projects sees. Written from the formats' public specifications by someone who read neither the detection rules nor
the other corpora.

Carriers (the `form` head): field-service and construction platform records (ServiceTitan-style jobs, Procore
RFIs, Fieldwire tasks, SafetyCulture inspections), building-management and IoT traffic (MQTT messages, device
shadows, BMS alarms, BACnet/Modbus gateway INI and YAML configs), messaging (LINE Messaging API and Zalo OA
webhooks, WhatsApp Cloud API webhooks, SMS gateway reports, LINE/Zalo/WhatsApp chat exports, SMS threads), back
office (payroll records, dispatch events and logs, permit-to-work applications and printouts, supplier invoices as
JSON and as e-mail text, site access lists as JSON and CSV), site paperwork (work orders, daily site diaries,
shift handover notes) and the agent's own tool results and replies. About a third is JSON carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10), Timor-Leste's among them; SSNs, the SSA's rules (area not 000/666/9xx,
group not 00, serial not 0000); phones, the national numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT, and
this corpus's own: NBTC Thailand, IMDA Singapore, MCMC Malaysia, Indonesia's KOMINFO plan, NTC Philippines, MIC
Vietnam, ACMA Australia, New Zealand's NNAC plan) with context words in each country's languages; Australian
BSB + account numbers (APCA's BSB: 3-3 digits, accounts 6-9 digits); AWS keys, IAM's documented AKIA/ASIA ids and
40-character secrets; Slack, Discord, Teams (Power Automate workflows `sig=`), Google Chat, Zapier, Mattermost,
Lark/Feishu, DingTalk and WeCom webhook URLs as their docs print them (the secret is the token segment or query
value only); Stripe `whsec_` signing secrets (dashboard and CLI forms); MQTT/AMQP/Redis/PostgreSQL/MongoDB URIs,
ADO.NET, JDBC, Azure IoT Hub and Service Bus connection strings (the secret is the password or key only); Azure IoT
SAS tokens (the `sig=` value); JWT (RFC 7519/7515); OAuth 2.0 bearer and refresh tokens (RFC 6749/6750); session
cookies (PHPSESSID, JSESSIONID, ASP.NET_SessionId, connect.sid, Rails and Laravel sessions); PEM SEC1/PKCS#8 and
OpenSSH private keys (AWS IoT device keys); TOTP seeds (RFC 6238, Google Authenticator Key URI format, RFC 4648
base32); provider tokens as their docs show them: GitHub `ghp_` (CRC32 checksum)/`github_pat_`, Slack
`xoxb-`/`xoxp-`/`xapp-`, SendGrid `SG.`, Google API keys `AIza`, Tailscale `tskey-auth-`. Field-service platforms
(Procore, ServiceTitan, Fieldwire, SafetyCulture) publish no key prefix, so their keys are `labelled_key` cases.
National ids (outside the target): Thai citizen id (13 digits, mod 11 over weights 13..2), Singapore NRIC/FIN
(S/T/F/G, weights 2-7-6-5-4-3-2, the ST and FG letter tables), Malaysian MyKad (YYMMDD, place-of-birth code, odd
or even last digit; no check digit), Indonesian NIK (region code, birth date with day + 40 for women, serial; no
check digit) and NPWP (Luhn over its first nine digits), Vietnamese CCCD (province code, century/sex digit, birth
year; no check digit) and tax code MST (weights 31-29-23-19-17-13-7-5-3), Australian TFN (weights
1-4-3-7-5-8-6-9-10, mod 11) and Medicare card (weights 1-3-7-9, mod 10), New Zealand IRD number (primary and
secondary weights, mod 11). Philippine ids (SSS, TIN, PhilSys) publish no check algorithm and are left out.

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a SAS token's signature, an account number beside its public BSB). Languages: Thai,
Vietnamese, Indonesian, Javanese, Malay, Tagalog, Cebuano, Khmer, Lao, Burmese, Chinese (simplified and
traditional), Tamil, Hindi, Maori, Samoan, Tongan, Fijian, Tetum, Tok Pisin, Japanese, Korean, French, German and
Australian, New Zealand, British and American English. Near misses are what field operations hold that is
neither secret nor personal: work-order, PO and invoice numbers, BACnet object ids and Modbus registers, MQTT
topics, site coordinates, drawing and grid references, dimensions and pixel sizes, timestamps, request and trace
ids, CSS selectors and XPath, cache-busting hashes, CSRF field names, placeholders, masked values, firmware
versions, businesses' published toll-free and short service numbers, Luhn-invalid numbers, UPU S10 tracking
numbers (with their check digit), company ABNs (mod 89) and NZBNs (GS1), private LAN addresses and the AWS docs'
EXAMPLE keys: none of them identifies a person or opens anything.
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
    B62,
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

SEED = 53
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"th_id", "sg_nric", "my_mykad", "id_nik", "id_npwp", "vn_cccd", "vn_mst", "au_tfn",
                            "au_medicare", "nz_ird"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
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


# ---- carriers -------------------------------------------------------------------------------------------------

SITES = ["BKK Sathorn Tower", "SGP Jurong Depot", "KUL Mont Kiara Residences", "JKT Sudirman Plaza",
         "MNL BGC Tower 3", "SGN Thu Duc Warehouse", "HAN Cau Giay Office", "PNH Chroy Changvar Hotel",
         "VTE Sisattanak Clinic", "RGN Hlaing Tharyar Plant", "SYD Parramatta Sq", "AKL Wynyard Quarter",
         "DIL Comoro Substation", "CEB IT Park Block B", "PEN Bayan Lepas Fab", "MEL Docklands L12"]
TECHS = ["Somchai", "Anh Tuấn", "Budi", "Aisyah", "Jun", "Sokha", "Khamphone", "Ko Aung", "Wei Ling", "Arul",
         "Aroha", "Jack", "Mere", "Siosaia", "Nilda", "Liam"]


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _fid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    return (f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}+07:00")


def _epoch(rng: random.Random) -> int:
    return rng.randint(1_735_000_000, 1_767_000_000)


def c_servicetitan(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": rng.randint(10_000, 99_999_999), "jobNumber": f"J-{rng.randint(10000, 99999)}",
                  "jobStatus": rng.choice(["Scheduled", "Dispatched", "Working", "Hold"]),
                  "summary": snip, "businessUnitId": rng.randint(100, 999), "createdOn": _ts(rng)})


def c_procore_rfi(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": rng.randint(100_000, 9_999_999), "number": f"{rng.randint(1, 400):03d}",
                  "subject": rng.choice(["Slab penetration L4", "AHU-2 access panel", "Fire damper schedule"]),
                  "status": "open", "questions": [{"plain_text_body": snip, "created_at": _ts(rng)}]})


def c_fieldwire(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"task": {"id": _fid(rng), "name": f"Punch {rng.randint(1, 300)}", "status_id": _fid(rng),
                           "floorplan_id": _fid(rng), "pos_x": rng.randint(0, 4000), "pos_y": rng.randint(0, 3000)},
                  "bubble": {"kind": "comment", "comment": snip}})


def c_safetyculture(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"audit_id": f"audit_{pick(rng, HEX, 32)}", "template_id": f"template_{pick(rng, HEX, 32)}",
                  "items": [{"label": "Inspector notes", "type": "textsingle", "responses": {"text": snip}},
                            {"label": "Site", "type": "text", "responses": {"text": rng.choice(SITES)}}]})


def c_mqtt(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"topic": f"sites/{rng.randint(1, 90):03d}/gw/log", "qos": rng.randint(0, 2), "retain": False,
                  "payload": snip, "receivedAt": _ts(rng)})


def c_shadow(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"state": {"reported": {"fw": f"4.{rng.randint(0, 9)}.{rng.randint(0, 20)}",
                                         "supply_temp_c": round(rng.uniform(11, 16), 1), "note": snip}},
                  "version": rng.randint(1, 9000), "timestamp": _epoch(rng)})


def c_bms_alarm(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"alarmId": rng.randint(1000, 99999), "object": f"analog-input,{rng.randint(1, 99)}",
                  "priority": rng.randint(1, 4), "state": "offnormal", "message": snip, "raisedAt": _ts(rng)})


def c_line_event(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"destination": f"U{pick(rng, HEX, 32)}", "events": [
        {"type": "message", "mode": "active", "timestamp": _epoch(rng) * 1000,
         "source": {"type": "group", "groupId": f"C{pick(rng, HEX, 32)}"},
         "message": {"type": "text", "id": digits(rng, 12), "text": snip}}]})


def c_zalo_oa(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"event_name": "user_send_text", "timestamp": str(_epoch(rng) * 1000),
                  "message": {"msg_id": pick(rng, HEX, 32), "text": snip}})


def c_whatsapp(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages", "value": {
        "messaging_product": "whatsapp",
        "messages": [{"id": f"wamid.{pick(rng, ALNUM, 24)}", "timestamp": str(_epoch(rng)), "type": "text",
                      "text": {"body": snip}}]}}]}]})


def c_payroll(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"employeeNumber": f"EMP-{rng.randint(1000, 9999)}", "site": rng.choice(SITES),
                  "payPeriod": f"2025-{rng.randint(1, 12):02d}", "onboardingNotes": snip, "status": "active"})


def c_dispatch(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"event": "technician.dispatched", "job": f"WO-{rng.randint(100000, 999999)}",
                  "etaMinutes": rng.randint(10, 120), "dispatcherNote": snip, "at": _ts(rng)})


def c_permit(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"permitType": rng.choice(["Hot Work", "Work at Height", "Confined Space", "Electrical Isolation"]),
                  "applicationNo": f"PTW-{rng.randint(1000, 9999)}", "site": rng.choice(SITES),
                  "applicant": {"remarks": snip}, "validFrom": _ts(rng)})


def c_invoice(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"invoiceNumber": f"INV-{rng.randint(10000, 99999)}",
                  "currency": rng.choice(["THB", "SGD", "MYR", "IDR", "PHP", "VND", "AUD", "NZD", "USD"]),
                  "total": round(rng.uniform(100, 90000), 2), "paymentInstructions": snip})


def c_access(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"site": rng.choice(SITES), "entries": [
        {"badge": f"B-{rng.randint(1000, 9999)}", "zones": ["L1", f"L{rng.randint(2, 30)}"], "note": snip}]})


def c_tool(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"type": "function_call_output", "call_id": f"call_{pick(rng, ALNUM, 12)}",
                  "name": rng.choice(["read_work_order", "get_gateway_config", "search_messages"]), "output": snip})


def c_sms_report(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"messageId": _fid(rng), "status": "delivered", "segments": rng.randint(1, 3), "body": snip})


def c_work_order(rng: random.Random, snip: str, _s: str) -> str:
    return (f"WORK ORDER WO-{rng.randint(100000, 999999)}\nSite: {rng.choice(SITES)}\nPriority: "
            f"P{rng.randint(1, 4)}\nAsset: AHU-{rng.randint(1, 12)}\n\nDescription:\n{snip}\n")


def c_dispatch_log(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_ts(rng)} INFO dispatch job=WO-{rng.randint(100000, 999999)} tech=T-{rng.randint(100, 999)} "
            f"status=en_route\n{_ts(rng)} INFO dispatch note: {snip}\n")


def c_gateway_ini(rng: random.Random, snip: str, _s: str) -> str:
    return (f"[bacnet]\ndevice_instance = {rng.randint(1000, 400000)}\nport = 47808\n\n[modbus]\nbaud = 9600\n"
            f"slave_id = {rng.randint(1, 247)}\n\n[uplink]\n{snip}\n")


def c_gateway_yaml(rng: random.Random, snip: str, _s: str) -> str:
    return (f"gateway:\n  name: gw-{rng.randint(1, 99):02d}\n  poll_ms: {rng.choice([500, 1000, 5000])}\n"
            f"---\n# uplink (pasted by the installer)\n{snip}\n")


def c_access_csv(rng: random.Random, snip: str, _s: str) -> str:
    return (f"badge;company;zone;note\nB-{rng.randint(1000, 9999)};Contractor {rng.randint(1, 40)};"
            f"L{rng.randint(1, 30)};{snip}\n")


def c_permit_txt(rng: random.Random, snip: str, _s: str) -> str:
    return (f"PERMIT TO WORK PTW-{rng.randint(1000, 9999)}\nType: Work at Height\nLocation: {rng.choice(SITES)}\n"
            f"----\n{snip}\n----\nIsolation verified by: supervisor on duty\n")


def c_invoice_mail(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Subject: Invoice INV-{rng.randint(10000, 99999)} / PO-{rng.randint(1000, 9999)}\n\n"
            f"Dear Accounts team,\n\n{snip}\n\nKind regards,\nAccounts receivable\n")


def c_sms_thread(rng: random.Random, snip: str, _s: str) -> str:
    return f"[SMS {rng.randint(6, 22):02d}:{rng.randint(0, 59):02d}] Dispatch: job accepted?\n[SMS] {snip}\n"


def c_line_chat(rng: random.Random, snip: str, _s: str) -> str:
    return (f"[LINE] Chat history with ทีมช่าง {rng.choice(SITES)}\nSaved on: 2025/{rng.randint(1, 12):02d}/"
            f"{rng.randint(1, 28):02d} 18:00\n\n{rng.randint(7, 17):02d}:{rng.randint(0, 59):02d}\t"
            f"{rng.choice(TECHS)}\t{snip}\n")


def c_zalo_chat(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Zalo — Nhóm kỹ thuật {rng.choice(SITES)}\n[{rng.randint(7, 20):02d}:{rng.randint(0, 59):02d}] "
            f"{rng.choice(TECHS)}: {snip}\n")


def c_whatsapp_export(rng: random.Random, snip: str, _s: str) -> str:
    return (f"[{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2025, {rng.randint(7, 20):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}] {rng.choice(TECHS)}: {snip}\n")


def c_agent_reply(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Assistant: I checked WO-{rng.randint(100000, 999999)} and the site records. Here is what I found:\n"
            f"{snip}\n")


def c_handover(rng: random.Random, snip: str, _s: str) -> str:
    return (f"## Shift handover — {rng.choice(SITES)}\n\n- Chiller {rng.randint(1, 4)} back online\n- {snip}\n"
            f"- Next PPM due in {rng.randint(2, 30)} days\n")


def c_site_diary(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Daily site diary {_ts(rng)[:10]}\nWeather: {rng.choice(['rain', 'fine', 'humid', 'storm'])}\n"
            f"Manpower: {rng.randint(4, 80)}\nNotes: {snip}\n")


Carrier = Callable[[random.Random, str, str], str]
JSON_CARRIERS: dict[str, Carrier] = {
    "servicetitan_job": c_servicetitan, "procore_rfi": c_procore_rfi, "fieldwire_task": c_fieldwire,
    "safetyculture_audit": c_safetyculture, "mqtt_message": c_mqtt, "iot_shadow": c_shadow, "bms_alarm": c_bms_alarm,
    "line_webhook": c_line_event, "zalo_oa_webhook": c_zalo_oa, "whatsapp_webhook": c_whatsapp,
    "payroll_record": c_payroll, "dispatch_event": c_dispatch, "permit_json": c_permit, "invoice_json": c_invoice,
    "access_list": c_access, "tool_result": c_tool, "sms_report": c_sms_report}
TEXT_CARRIERS: dict[str, Carrier] = {
    "work_order": c_work_order, "dispatch_log": c_dispatch_log, "gateway_ini": c_gateway_ini,
    "gateway_yaml": c_gateway_yaml, "access_csv": c_access_csv, "permit_txt": c_permit_txt,
    "invoice_mail": c_invoice_mail, "sms_thread": c_sms_thread, "line_chat": c_line_chat, "zalo_chat": c_zalo_chat,
    "whatsapp_export": c_whatsapp_export, "agent_reply": c_agent_reply, "handover_md": c_handover,
    "site_diary": c_site_diary}


# ---- the kinds ----------------------------------------------------------------------------------------

PW_LABELS = [("Password: {v}", "en"), ("รหัสผ่าน: {v}", "th"), ("รหัสผ่านเครื่อง BMS คือ {v} นะครับ", "th"),
             ("Mật khẩu: {v}", "vi"), ("mật khẩu wifi công trường là {v}", "vi"), ("Kata sandi: {v}", "id"),
             ("kata sandine {v}", "jv"), ("Kata laluan: {v}", "ms"), ("ang password ng panel ay {v}", "tl"),
             ("ពាក្យសម្ងាត់៖ {v}", "km"), ("ລະຫັດຜ່ານ: {v}", "lo"), ("စကားဝှက် - {v}", "my"), ("密码：{v}", "zh"),
             ("密碼：{v}", "zh-Hant"), ("கடவுச்சொல்: {v}", "ta"), ("Ko te kupuhipa: {v}", "mi"),
             ("パスワード: {v}", "ja"), ("비밀번호: {v}", "ko"), ("पासवर्ड: {v}", "hi"), ("mot de passe : {v}", "fr"),
             ("Passwort: {v}", "de"), ("pw for the BMS head-end is {v}, mate", "en-AU")]
PW_FORMS = [("bms_login", "BMS web UI http://10.{a}.{b}.20 user: admin\n{l}"), ("labelled", "{l}"),
            ("wifi", "Site Wi-Fi SSID: SITE-{a} / WPA2 key: {v}"),
            ("mqtt_conf", "connection mqtt-uplink\naddress 10.{a}.{b}.5:8883\nremote_username gw{a}\n"
                          "remote_password {v}"),
            ("env", "BMS_ADMIN_PASSWORD={v}"),
            ("cli", "mosquitto_pub -h 10.{a}.{b}.5 -u gw{a} -P '{v}' -t sites/x -m ok"),
            ("snmp", "snmp:\n  version: 2c\n  community: {v}"),
            ("json_field", '{{"user": "tech{a}", "password": "{v}"}}')]
PW_WORDS = ["Chiller", "Sathorn", "Mekong", "Harbour", "Kiwi", "Durian", "Monsoon", "Jurong", "Borobudur", "Angkor",
            "Tasman", "Rata", "Sampaguita", "Lotus", "Pohutukawa", "Merlion"]


def password_value(rng: random.Random) -> str:
    """Passwords as people and admins set them: a word, digits and a symbol, or a random run."""
    if rng.random() < 0.5:
        return f"{rng.choice(PW_WORDS)}{rng.choice('#@!$%&*')}{rng.randint(10, 9999)}{pick(rng, LOWER, 2)}"
    return pick(rng, ALNUM + "!#$%&*+-=?@^_~", rng.randint(12, 20))


def v_password(rng: random.Random, i: int) -> Value:
    v = password_value(rng)
    style, tpl = PW_FORMS[i % len(PW_FORMS)]
    label, _lang = PW_LABELS[i % len(PW_LABELS)]
    return style, v, tpl.format(l=label.format(v=v), v=v, a=rng.randint(1, 99), b=rng.randint(1, 250)), False


def aws_secret_value(rng: random.Random) -> str:
    return pick(rng, B64, 40)


def akid(rng: random.Random) -> str:
    return rng.choice(["AKIA", "ASIA"]) + pick(rng, UPPER + "234567", 16)


AWS_FORMS = [
    ("credentials", "[greengrass-gw]\naws_access_key_id = {k}\naws_secret_access_key = {v}\nregion = ap-southeast-1"),
    ("env", "export AWS_ACCESS_KEY_ID={k}\nexport AWS_SECRET_ACCESS_KEY={v}\nexport AWS_DEFAULT_REGION=ap-southeast-2"),
    ("csv", "Access key ID,Secret access key\n{k},{v}"),
    ("json", '{{"accessKeyId": "{k}", "secretAccessKey": "{v}", "region": "ap-southeast-3"}}'),
    ("boto3", 's3 = boto3.client("s3", aws_access_key_id="{k}", aws_secret_access_key="{v}")'),
    ("chat_th", "คีย์ AWS ของเกตเวย์: {k} / secret: {v}"),
    ("chat_vi", "Khóa truy cập {k}, khóa bí mật {v}"),
    ("chat_id", "AWS key gateway: {k} rahasianya {v}"),
    ("labelled", "AWS secret access key: {v}"),
    ("terraform", 'provider "aws" {{\n  access_key = "{k}"\n  secret_key = "{v}"\n}}')]


def v_aws_secret(rng: random.Random, i: int) -> Value:
    v = aws_secret_value(rng)
    style, tpl = AWS_FORMS[i % len(AWS_FORMS)]
    return style, v, tpl.format(k=akid(rng), v=v), False


def _webhook(rng: random.Random, which: str) -> tuple[str, str]:
    """(URL, its secret part) for one provider's documented incoming-webhook URL shape."""
    if which == "slack":
        tok = pick(rng, ALNUM, 24)
        ids = f"T{pick(rng, UPPER + string.digits, 9)}/B{pick(rng, UPPER + string.digits, 10)}"
        return f"https://hooks.slack.com/services/{ids}/{tok}", tok
    if which == "discord":
        tok = pick(rng, URLSAFE, 68)
        return f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{tok}", tok
    if which == "teams":
        tok = pick(rng, URLSAFE, 43)
        return (f"https://prod-{rng.randint(1, 60):02d}.southeastasia.logic.azure.com:443/workflows/"
                f"{pick(rng, HEX, 32)}"
                f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}",
                tok)
    if which == "gchat":
        tok = pick(rng, URLSAFE, 43)
        return (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key="
                f"AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={tok}%3D", tok)
    if which == "zapier":
        tok = pick(rng, LOWER + string.digits, 7)
        return f"https://hooks.zapier.com/hooks/catch/{rng.randint(1000000, 99999999)}/{tok}/", tok
    if which == "mattermost":
        tok = pick(rng, LOWER + string.digits, 26)
        return f"https://chat.{rng.choice(['sitecrew.com.au', 'bkk-fm.co.th'])}/hooks/{tok}", tok
    if which == "lark":
        tok = _fid(rng)
        return f"https://open.larksuite.com/open-apis/bot/v2/hook/{tok}", tok
    if which == "dingtalk":
        tok = pick(rng, HEX, 64)
        return f"https://oapi.dingtalk.com/robot/send?access_token={tok}", tok
    tok = _fid(rng)
    return f"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={tok}", tok


WEBHOOKS = ["slack", "discord", "teams", "gchat", "zapier", "mattermost", "lark", "dingtalk", "wecom"]
WEBHOOK_LEADS = ["ALERT_WEBHOOK_URL={u}", "Post chiller alarms to {u}", "แจ้งเตือนงานซ่อมส่งไปที่ {u}",
                 "webhook báo động: {u}", "notify:\n  url: {u}", "curl -X POST -H 'Content-Type: application/json' "
                 "-d '{{\"text\":\"WO closed\"}}' {u}", "告警机器人地址：{u}", "URL webhook untuk notifikasi: {u}",
                 "Ang webhook ng dispatch: {u}"]


def v_webhook(rng: random.Random, i: int) -> Value:
    which = WEBHOOKS[i % len(WEBHOOKS)]
    url, tok = _webhook(rng, which)
    return which, tok, WEBHOOK_LEADS[i % len(WEBHOOK_LEADS)].format(u=url), False


WHSEC_LEADS = ["STRIPE_WEBHOOK_SECRET={v}", "endpoint_secret = '{v}'", "> Ready! Your webhook signing secret is {v} "
               "(^C to quit)", "event = stripe.Webhook.construct_event(payload, sig_header, \"{v}\")",
               "Signing secret for the invoice-paid endpoint: {v}", "คีย์ลงนาม webhook ของ Stripe: {v}",
               "Khóa ký webhook Stripe: {v}", "stripe:\n  webhook_secret: {v}"]


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    cli = i % 4 == 2
    v = "whsec_" + (pick(rng, HEX, 64) if cli else pick(rng, ALNUM, 32))
    lead = WHSEC_LEADS[2] if cli else WHSEC_LEADS[i % len(WHSEC_LEADS)]
    return ("cli" if cli else "dashboard"), v, lead.format(v=v), False


def _uri_pw(rng: random.Random) -> str:
    return pick(rng, ALNUM, rng.randint(10, 18)) + rng.choice(["", "-", "_", "."]) + pick(rng, ALNUM, 4)


def v_connection_string(rng: random.Random, i: int) -> Value:
    pw = _uri_pw(rng)
    host = rng.choice(["broker.bkk-fm.co.th", "mq.sitecrew.com.au", "10.20.1.15", "iot.kl-facilities.com.my"])
    forms = [
        ("mqtt_uri", f"MQTT_URL=mqtts://gw{rng.randint(1, 99)}:{pw}@{host}:8883"),
        ("amqp_uri", f"amqps://dispatch:{pw}@{host}:5671/field"),
        ("redis_uri", f"REDIS_URL=rediss://:{pw}@cache.{host}:6380/0"),
        ("postgres_uri", f"DATABASE_URL=postgresql://cmms_app:{pw}@db.{host}:5432/cmms?sslmode=require"),
        ("mongodb_srv", f"mongodb+srv://fieldapp:{pw}@cluster0.ab1cd.mongodb.net/workorders?retryWrites=true"),
        ("adonet", f"Server=tcp:sql-fm-{rng.randint(1, 9)}.database.windows.net,1433;Database=CMMS;User ID=cmms;"
                   f"Password={pw};Encrypt=True;"),
        ("jdbc", f"jdbc:mysql://{host}:3306/bms_history?user=historian&password={pw}&useSSL=true"),
        ("iothub", None), ("servicebus", None)]
    style, text = forms[i % len(forms)]
    if text is None:
        key = base64.b64encode(rng.randbytes(32)).decode()
        if style == "iothub":
            text = (f"HostName=fm-hub-{rng.randint(1, 99)}.azure-devices.net;DeviceId=bacnet-gw-{rng.randint(1, 400)};"
                    f"SharedAccessKey={key}")
        else:
            text = (f"Endpoint=sb://fm-events-{rng.randint(1, 99)}.servicebus.windows.net/;SharedAccessKeyName="
                    f"RootManageSharedAccessKey;SharedAccessKey={key}")
        pw = key
    lead = rng.choice(["", "Connection string (prod): ", "สตริงเชื่อมต่อ: ", "Chuỗi kết nối: ", "连接字符串："])
    return style, pw, lead + text, False


KEY_LABELS = ["Procore API key: {v}", "ServiceTitan ST-App-Key: {v}", "Fieldwire API token: {v}",
              "SafetyCulture API token = {v}", "x-api-key: {v}", "คีย์ API: {v}", "Khóa API: {v}", "Kunci API: {v}",
              "Kunci API portal penyelenggaraan: {v}", "Susi ng API: {v}", "API 密钥：{v}", "API ကီး - {v}",
              "កូនសោ API៖ {v}", "ລະຫັດ API: {v}", "API விசை: {v}", "Te kī API: {v}", "apiKey={v}",
              "API key for the BMS cloud connector: {v}"]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    style = ["hex32", "hex64", "b62_40", "urlsafe43", "b62_32"][i % 5]
    v = {"hex32": lambda: pick(rng, HEX, 32), "hex64": lambda: pick(rng, HEX, 64), "b62_40": lambda: pick(rng, B62, 40),
         "urlsafe43": lambda: pick(rng, URLSAFE, 43), "b62_32": lambda: pick(rng, B62, 32)}[style]()
    return style, v, KEY_LABELS[i % len(KEY_LABELS)].format(v=v), False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]


def _disguise_base(rng: random.Random, i: int) -> tuple[str, str]:
    which = i % 5
    if which == 0:
        return "GitHub token", crc_token(rng, "ghp_")
    if which == 1:
        return "Slack bot token", f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    if which == 2:
        return "Stripe key", "sk_live_" + pick(rng, ALNUM, 24)
    if which == 3:
        return "AWS secret", aws_secret_value(rng)
    return "รหัสผ่าน", password_value(rng)


def v_disguised(rng: random.Random, i: int) -> Value:
    """A key or password with zero-width characters inside, in full-width forms, %-encoded or as JSON \\u escapes
    (those only raw: escaping them again would change what they decode to)."""
    label, base = _disguise_base(rng, i)
    how = ["zero_width", "fullwidth", "percent", "json_u"][i // 5 % 4]
    if how == "zero_width":
        pos = sorted(rng.sample(range(1, len(base) - 1), 2))
        v = base[:pos[0]] + rng.choice(ZW) + base[pos[0]:pos[1]] + rng.choice(ZW) + base[pos[1]:]
    elif how == "fullwidth":
        v = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in base)
    elif how == "percent":
        v = "".join(f"%{ord(c):02X}" for c in base)
    else:
        v = "".join(f"\\u{ord(c):04x}" for c in base)
        return how, v, f'{{"name": "{label}", "value": "{v}"}}', True
    return how, v, f"{label}: {v}", False


EMAIL_CTX = ["Email: {v}", "อีเมล: {v}", "thư điện tử: {v}", "surel: {v}", "e-mel: {v}", "email ni {v}",
             "អ៊ីមែល៖ {v}", "ອີເມວ: {v}", "အီးမေးလ် - {v}", "邮箱：{v}", "電郵：{v}", "மின்னஞ்சல்: {v}",
             "īmēra: {v}", "imeli: {v}", "メール: {v}", "이메일: {v}", "ईमेल: {v}", "send the timesheet to {v}",
             "Tech onboarding — contact {v}"]
LOCALS = ["somchai.k", "nguyen.van.an", "budi.santoso", "aisyah.rahman", "juan.delacruz", "sokha.chan", "khamphone.s",
          "aung.ko.ko", "wei.ling", "arul.murugan", "aroha.tane", "jack.wilson", "mere.henare", "siosaia.f",
          "nilda.reyes", "liam.oconnor", "tran.thi.mai", "putu.ayu"]
MAIL_DOMAINS = ["gmail.com", "yahoo.co.th", "hotmail.com", "outlook.co.id", "yahoo.com.sg", "bigpond.com",
                "xtra.co.nz", "sitecrew.com.au", "bkk-fm.co.th", "hanoi-mep.vn", "kl-facilities.com.my",
                "jktbuild.co.id", "mnl-hvac.ph", "akl-electrical.co.nz", "pnh-construct.com.kh", "icloud.com"]
IDN_LOCALS = ["สมชาย", "อนันต์.ช่าง", "王伟", "李娜", "ஆனந்த்", "nguyễn.an", "ສົມພອນ", "សុខា", "ကိုအောင်"]
IDN_DOMAINS = ["ตัวอย่าง.ไทย", "บริษัท.ไทย", "例子.中国", "工程.中国", "உதாரணம்.இந்தியா", "côngtrình.vn"]


def v_email(rng: random.Random, i: int) -> Value:
    style = ["plain", "plus", "idn", "upper", "obfuscated"][i % 5]
    local, dom = rng.choice(LOCALS) + rng.choice(["", "", str(rng.randint(1, 99))]), rng.choice(MAIL_DOMAINS)
    if style == "plain":
        v = f"{local}@{dom}"
    elif style == "plus":
        v = f"{local}+{rng.choice(['roster', 'payslip', 'wo'])}@{dom}"
    elif style == "idn":
        v = f"{rng.choice(IDN_LOCALS)}{rng.choice(['', str(rng.randint(1, 9))])}@{rng.choice(IDN_DOMAINS)}"
    elif style == "upper":
        v = f"{local.title()}@{dom.upper()}"
    else:
        v = f"{local} [at] {dom.replace('.', ' [dot] ')}"
    return style, v, EMAIL_CTX[i % len(EMAIL_CTX)].format(v=v), False


PHONE_CTX: dict[str, list[str]] = {
    "en": ["phone", "call", "mobile", "cell"], "en-AU": ["mob", "ph", "give us a bell on"],
    "en-NZ": ["cell", "ph", "text me on"], "en-GB": ["mobile", "tel", "ring"], "fr": ["tél.", "portable", "appelez le"],
    "de": ["Tel.", "Handy", "Mobil"], "hi": ["फ़ोन", "मोबाइल"], "ta": ["தொலைபேசி", "கைபேசி"],
    "th": ["โทร", "เบอร์โทร", "มือถือ", "ติดต่อ"], "vi": ["SĐT", "số điện thoại", "gọi", "Zalo"],
    "id": ["telp", "HP", "nomor WA", "hubungi"], "jv": ["nomer HP", "telpon"],
    "ms": ["no. tel", "telefon bimbit", "H/P"],
    "tl": ["numero", "cellphone", "tawagan sa"], "ceb": ["numero sa telepono", "tawagi sa"],
    "zh": ["电话", "手机", "联系电话"], "zh-Hant": ["電話", "手機"], "mi": ["waea", "nama waea", "waea pūkoro"],
    "sm": ["telefoni", "numera telefoni"], "to": ["telefoni", "fika telefoni"], "fj": ["talevoni", "naba ni talevoni"],
    "tet": ["telefone", "númeru telefone"], "tpi": ["namba bilong fon"], "km": ["ទូរស័ព្ទ", "លេខទូរស័ព្ទ"],
    "lo": ["ໂທລະສັບ", "ເບີໂທ"], "my": ["ဖုန်း", "ဖုန်းနံပါတ်"], "ja": ["電話番号"], "ko": ["전화번호"]}
PHONE_TEMPLATES = ["{c}: {n}", "{c} {n}", "Tech on site — {c} {n} (after 5pm)", "{c} {n} / WO-{w}",
                   "Site contact ({c}): {n}", "| Name | {c} |\n|---|---|\n| {t} | {n} |", "{t} {c} {n}"]


def phone_case(rng: random.Random, i: int, forms: list[tuple[str, Callable[[random.Random], str]]],
               langs: list[str]) -> Value:
    """One phone case: a national form drawn in turn, a context word of one of the country's languages."""
    style, make = forms[i % len(forms)]
    n = make(rng)
    c = rng.choice(PHONE_CTX[langs[i % len(langs)]])
    text = PHONE_TEMPLATES[i % len(PHONE_TEMPLATES)].format(c=c, n=n, w=rng.randint(100000, 999999),
                                                            t=rng.choice(TECHS))
    return style, n, text, False


def _nanp(r: random.Random) -> tuple[str, str, str]:
    area = f"{r.randint(2, 9)}{r.randint(0, 8)}{r.randint(0, 9)}"
    while area[1:] == "11":
        area = f"{r.randint(2, 9)}{r.randint(0, 8)}{r.randint(0, 9)}"
    exch = f"{r.randint(2, 9)}{digits(r, 2)}"
    while exch[1:] == "11" or exch == "555":
        exch = f"{r.randint(2, 9)}{digits(r, 2)}"
    return area, exch, digits(r, 4)


US_FORMS = [("paren", lambda r: "({}) {}-{}".format(*_nanp(r))), ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
            ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))), ("intl", lambda r: "+1 {} {} {}".format(*_nanp(r))),
            ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r)))]
UK_FORMS = [("mobile", lambda r: f"07{r.choice('1234579')}{digits(r, 2)} {digits(r, 6)}"),
            ("london", lambda r: f"020 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}"),
            ("manchester", lambda r: f"0161 {r.randint(2, 9)}{digits(r, 2)} {digits(r, 4)}"),
            ("intl_mobile", lambda r: f"+44 7{r.choice('1234579')}{digits(r, 2)} {digits(r, 6)}"),
            ("intl_paren", lambda r: f"+44 (0)20 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}")]


def _fr_pairs(r: random.Random, first: str) -> list[str]:
    return [first] + [digits(r, 2) for _ in range(4)]


FR_FORMS = [("mobile", lambda r: "0" + " ".join(_fr_pairs(r, r.choice("67")))),
            ("paris", lambda r: "01 " + " ".join(_fr_pairs(r, str(r.randint(40, 89)))[:4])),
            ("dots", lambda r: "0" + ".".join(_fr_pairs(r, r.choice("2345")))),
            ("intl", lambda r: "+33 " + " ".join(_fr_pairs(r, r.choice("67")))),
            ("compact", lambda r: "0" + r.choice("67") + digits(r, 8))]
DE_FORMS = [("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
            ("munich_slash", lambda r: f"089/{r.randint(2, 9)}{digits(r, 6)}"),
            ("mobile", lambda r: f"01{r.choice(['51', '52', '60', '62', '70', '71', '76'])} {digits(r, 8)}"),
            ("intl_mobile", lambda r: f"+49 1{r.choice(['51', '57', '60', '72', '76'])} {digits(r, 7)}"),
            ("hamburg_dash", lambda r: f"040-{r.randint(2, 9)}{digits(r, 7)}")]
IN_FORMS = [("intl_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
            ("mobile_zero", lambda r: f"0{r.choice('6789')}{digits(r, 9)}"),
            ("chennai", lambda r: f"044-2{digits(r, 3)} {digits(r, 4)}"),
            ("delhi", lambda r: f"011-2{digits(r, 3)}-{digits(r, 4)}"),
            ("intl_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}")]


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, US_FORMS, ["en", "fr"])


def v_phone_uk(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, UK_FORMS, ["en-GB", "en"])


def v_phone_fr(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, FR_FORMS, ["fr"])


def v_phone_de(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, DE_FORMS, ["de"])


def v_phone_in(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, IN_FORMS, ["hi", "ta", "en"])


def ssn_value(rng: random.Random) -> tuple[str, str, str]:
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


SSN_LEADS = ["SSN: {v}", "US payroll (W-4) — Social Security No. {v}", "SSN ของช่างจากสหรัฐ: {v}",
             "Số an sinh xã hội Mỹ (SSN): {v}", "ssn={v}", "Social Security number {v} for the 1099 contractor",
             "SSN (Amerika) {v}"]


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = ssn_value(rng)
    style = ["dash", "space", "compact"][i % 3]
    v = {"dash": f"{a}-{g}-{s}", "space": f"{a} {g} {s}", "compact": f"{a}{g}{s}"}[style]
    return style, v, SSN_LEADS[i % len(SSN_LEADS)].format(v=v), False


CARD_BRANDS = ["visa", "mc", "mc2", "amex", "jcb", "unionpay", "discover", "diners"]


def card_number(rng: random.Random, brand: str) -> str:
    """A card number in the brand's IIN range and length, with its Luhn digit."""
    lead, length = {"visa": ("4", 16), "mc": (str(rng.randint(51, 55)), 16), "mc2": (str(rng.randint(2221, 2720)), 16),
                    "amex": (rng.choice(["34", "37"]), 15), "jcb": (str(rng.randint(3528, 3589)), 16),
                    "unionpay": ("62" + str(rng.randint(0, 9)), 16), "discover": (rng.choice(["6011", "65"]), 16),
                    "diners": ("36", 14)}[brand]
    body = lead + digits(rng, length - len(lead) - 1)
    return body + luhn_digit(body)


CARD_CTX = ["Corporate card: {v}", "บัตรเครดิตบริษัท {v} exp {e}", "Số thẻ tín dụng: {v}", "Nomor kartu kredit {v}",
            "No. kad kredit: {v}", "信用卡号：{v}", "Fuel and parts card {v} (exp {e})", "கடன் அட்டை எண்: {v}",
            "Pay supplier by card {v}, CVC on file", "card_number={v}", "Card no. {v} — exp {e}"]


def v_card(rng: random.Random, i: int) -> Value:
    brand = CARD_BRANDS[i % len(CARD_BRANDS)]
    num = card_number(rng, brand)
    sep = ["", " ", "-"][i // len(CARD_BRANDS) % 3]
    v = group_card(num, sep) if sep else num
    text = CARD_CTX[i % len(CARD_CTX)].format(v=v, e=f"{rng.randint(1, 12):02d}/{rng.randint(26, 31)}")
    return f"{brand}_{['compact', 'space', 'dash'][i // len(CARD_BRANDS) % 3]}", v, text, False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "NL": "4a10n", "IT": "1a5n5n12c", "ES": "4n4n1n1n10n",
             "DK": "4n9n1n", "AE": "3n16n", "SA": "2n18c", "TL": "3n14n2n", "CH": "5n12c", "BE": "3n7n2n",
             "AT": "5n11n", "SE": "3n16n1n", "NO": "4n6n1n", "QA": "4a21c"}
IBAN_CTX = ["IBAN: {v}", "Beneficiary IBAN {v} (SWIFT/BIC on the letterhead)", "IBAN ผู้รับเงิน: {v}",
            "Số IBAN người thụ hưởng: {v}", "IBAN penerima: {v}", "Númeru IBAN: {v}", "收款人 IBAN：{v}",
            "Pay the chiller OEM to {v}", "iban={v}", "IBAN ng supplier: {v}"]


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    b = bban(rng, IBAN_BBAN[country])
    compact = country + iban_check(country, b) + b
    style = ["print", "compact", "lower"][i // len(IBAN_BBAN) % 3]
    v = {"print": group(compact, 4, " "), "compact": compact, "lower": group(compact, 4, " ").lower()}[style]
    return f"{country}_{style}", v, IBAN_CTX[i % len(IBAN_CTX)].format(v=v), False


# ---- this corpus's further kinds ----------------------------------------------------------------------------

def jwt_value(rng: random.Random) -> str:
    """A compact JWS (RFC 7515) of a CMMS login: header, claims, and a signature of the algorithm's length."""
    alg, sig_len = rng.choice([("HS256", 32), ("RS256", 256), ("ES256", 64)])
    t = _epoch(rng)
    head = {"alg": alg, "typ": "JWT"}
    body = {"sub": _fid(rng), "iss": rng.choice(["https://auth.fieldops.example", "https://login.cmms.example"]),
            "aud": "dispatch-api", "iat": t, "exp": t + 3600, "scope": "workorders:write"}
    parts = [json.dumps(part, separators=(",", ":")).encode() for part in (head, body)] + [rng.randbytes(sig_len)]
    return ".".join(b64url(part) for part in parts)


JWT_LEADS = ["Authorization: Bearer {v}", "curl -H 'Authorization: Bearer {v}' https://api.cmms.example/v2/jobs",
             "access_token={v}", 'localStorage["fw.auth"] = "{v}"', "token ของแอปช่าง: {v}", "mã truy cập: {v}",
             "Cookie: id_token={v}"]


def v_jwt(rng: random.Random, i: int) -> Value:
    v = jwt_value(rng)
    style = ["header", "curl", "query", "storage", "chat_th", "chat_vi", "cookie"][i % 7]
    return style, v, JWT_LEADS[i % 7].format(v=v), False


def v_oauth_token(rng: random.Random, i: int) -> Value:
    style = ["bearer", "token_response_access", "token_response_refresh", "refresh_env", "query"][i % 5]
    access, refresh = pick(rng, URLSAFE, 43), pick(rng, URLSAFE, 64)
    if style == "bearer":
        return style, access, f"GET /rest/v1.0/projects HTTP/1.1\nAuthorization: Bearer {access}", False
    if style.startswith("token_response"):
        text = (f'{{"access_token": "{access}", "token_type": "Bearer", "expires_in": 7200, '
                f'"refresh_token": "{refresh}", "scope": "jobs.read"}}')
        return style, access if style.endswith("access") else refresh, text, False
    if style == "refresh_env":
        return style, refresh, f"FIELDWIRE_REFRESH_TOKEN={refresh}", False
    return style, access, f"https://api.fieldops.example/v1/jobs?access_token={access}&page=2", False


COOKIES = [("PHPSESSID", lambda r: pick(r, LOWER + string.digits, 26)),
           ("JSESSIONID", lambda r: pick(r, "0123456789ABCDEF", 32)),
           ("ASP.NET_SessionId", lambda r: pick(r, LOWER + "012345", 24)),
           ("connect.sid", lambda r: "s%3A" + pick(r, URLSAFE, 32) + "." + pick(r, B64.replace("/", ""), 43)),
           ("_cmms_session", lambda r: pick(r, HEX, 32)), ("laravel_session", lambda r: pick(r, B64, 40) + "%3D%3D")]


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, make = COOKIES[i % len(COOKIES)]
    v = make(rng)
    text = rng.choice([f"Cookie: {name}={v}; lang=th", f"Set-Cookie: {name}={v}; Path=/; Secure; HttpOnly",
                       f"document.cookie → \"{name}={v}\"", f"{name}\t{v}\t.portal.cmms.example\t/\tTRUE"])
    return name, v, text, False


def v_private_key(rng: random.Random, i: int) -> Value:
    """A device or SSH key as its file holds it: SEC1 EC, PKCS#8 Ed25519 or openssh-key-v1; the whole block."""
    style = ["sec1_ec", "pkcs8_ed25519", "openssh_ed25519"][i % 3]
    if style == "sec1_ec":
        key = ec.derive_private_key(rng.randrange(1, 2**255), ec.SECP256R1())
        v = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                              serialization.NoEncryption()).decode().strip()
    elif style == "pkcs8_ed25519":
        edkey = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        v = edkey.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()).decode().strip()
    else:
        seed = rng.randbytes(32)
        pub = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, pub, rng.randbytes(4), f"gw{rng.randint(1, 99)}@site".encode())
        v = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(base64.b64encode(blob).decode(), 70, "\n") + \
            "\n-----END OPENSSH PRIVATE KEY-----"
    lead = rng.choice(["# /greengrass/v2/certs/gw.private.pem.key\n", "AWS IoT device key (thing bms-gw-07):\n",
                       "คีย์ส่วนตัวของเกตเวย์:\n", "$ cat ~/.ssh/id_ed25519\n", ""])
    return style, v, lead + v, False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = base64.b32encode(rng.randbytes(20 if i % 2 else 10)).decode().rstrip("=")
    style = ["otpauth", "setup_key", "labelled"][i % 3]
    if style == "otpauth":
        issuer = rng.choice(["Procore", "ServiceTitan", "SafetyCulture", "AWS"])
        return style, seed, f"otpauth://totp/{issuer}:tech{rng.randint(1, 400)}?secret={seed}&issuer={issuer}", False
    if style == "setup_key":
        v = group(seed.lower(), 4, " ")
        return style, v, f"Can't scan the QR code? Enter this setup key: {v}", False
    lead = rng.choice(["MFA seed: {v}", "รหัสลับ 2FA: {v}", "Mã bí mật 2FA: {v}", "TOTP secret for the BMS admin: {v}"])
    return style, seed, lead.format(v=seed), False


def _provider(make: Callable[[random.Random], tuple[str, str]],
              leads: list[str]) -> Callable[[random.Random, int], Value]:
    """A provider-token kind: `make` draws (style, token), the leads cycle."""
    def gen(rng: random.Random, i: int) -> Value:
        style, v = make(rng)
        return style, v, leads[i % len(leads)].format(v=v), False
    return gen


def _github(r: random.Random) -> tuple[str, str]:
    if r.random() < 0.6:
        return "ghp", crc_token(r, "ghp_")
    return "github_pat", f"github_pat_{pick(r, B62, 22)}_{pick(r, B62, 59)}"


def _slack(r: random.Random) -> tuple[str, str]:
    kind = r.choice(["xoxb", "xoxp", "xapp"])
    if kind == "xoxb":
        return kind, f"xoxb-{digits(r, 12)}-{digits(r, 13)}-{pick(r, ALNUM, 24)}"
    if kind == "xoxp":
        return kind, f"xoxp-{digits(r, 12)}-{digits(r, 12)}-{digits(r, 13)}-{pick(r, HEX, 32)}"
    return kind, f"xapp-1-A{pick(r, UPPER + string.digits, 10)}-{digits(r, 13)}-{pick(r, HEX, 64)}"


def _tailscale(r: random.Random) -> tuple[str, str]:
    return "auth", f"tskey-auth-k{pick(r, ALNUM, r.randint(7, 11))}CNTRL-{pick(r, ALNUM, 33)}"


PROVIDERS: dict[str, Callable[[random.Random, int], Value]] = {
    "github_token": _provider(_github, ["GITHUB_TOKEN={v}", "git clone https://x-access-token:{v}@github.com/fm/bms-scripts",
                                        "token: {v}", "โทเค็น GitHub: {v}"]),
    "slack_token": _provider(_slack, ["SLACK_BOT_TOKEN={v}", "slack:\n  token: {v}", "Token bot Slack: {v}",
                                      "client = WebClient(token=\"{v}\")"]),
    "sendgrid_key": _provider(lambda r: ("sg", f"SG.{pick(r, URLSAFE, 22)}.{pick(r, URLSAFE, 43)}"),
                              ["SENDGRID_API_KEY={v}", "Authorization: Bearer {v}", "Khóa SendGrid: {v}",
                               "sg = SendGridAPIClient(\"{v}\")"]),
    "google_api_key": _provider(lambda r: ("aiza", "AIzaSy" + pick(r, URLSAFE, 33)),
                                ["GOOGLE_MAPS_KEY={v}", "https://maps.googleapis.com/maps/api/directions/json?"
                                 "origin=13.72,100.52&destination=13.75,100.50&key={v}", "คีย์ Google Maps: {v}",
                                 "<script src=\"https://maps.googleapis.com/maps/api/js?key={v}\"></script>"]),
    "tailscale_key": _provider(_tailscale, ["TS_AUTHKEY={v}", "tailscale up --authkey={v} --advertise-tags=tag:bms",
                                            "Auth key cho gateway: {v}", "kunci auth Tailscale: {v}"]),
}


def v_azure_iot_sas(rng: random.Random, i: int) -> Value:
    sig = quote(base64.b64encode(rng.randbytes(32)).decode(), safe="")
    hub, dev = f"fm-hub-{rng.randint(1, 99)}", f"bacnet-gw-{rng.randint(1, 400)}"
    sas = f"SharedAccessSignature sr={hub}.azure-devices.net%2Fdevices%2F{dev}&sig={sig}&se={_epoch(rng)}"
    style = ["mqtt_password", "header", "labelled"][i % 3]
    text = {"mqtt_password": f"username: {hub}.azure-devices.net/{dev}/?api-version=2021-04-12\npassword: {sas}",
            "header": f"Authorization: {sas}", "labelled": f"SAS token ของอุปกรณ์: {sas}"}[style]
    return style, sig, text, False


AU_BSB_LEADS = ["BSB: {b}  Account: {v}", "Bank details — BSB {b}, acc no. {v}", "BSB {b} / Acct {v} (ANZ)",
                "Pay into BSB {b} account {v}, ref INV-{n}", "Payroll: BSB {b} · Account number {v}",
                "Số tài khoản Úc: BSB {b}, tài khoản {v}"]


def v_au_bank_account(rng: random.Random, i: int) -> Value:
    bsb = f"{rng.choice(['01', '03', '06', '08', '73'])}{rng.randint(0, 9)}-{digits(rng, 3)}"
    acc = str(rng.randint(1, 9)) + digits(rng, rng.randint(5, 8))
    v = acc if i % 2 else group(acc, 4, " ")
    return ("spaced" if i % 2 == 0 else "compact"), v, AU_BSB_LEADS[i % len(AU_BSB_LEADS)].format(
        b=bsb, v=v, n=rng.randint(1000, 9999)), False


# ---- the region's phones (national numbering plans) ------------------------------------------------------------

TH_FORMS = [("mobile_dash", lambda r: f"0{r.choice('689')}{r.randint(0, 9)}-{digits(r, 3)}-{digits(r, 4)}"),
            ("bangkok", lambda r: f"02-{r.randint(1, 9)}{digits(r, 2)}-{digits(r, 4)}"),
            ("intl", lambda r: f"+66 {r.choice('689')}{r.randint(0, 9)} {digits(r, 3)} {digits(r, 4)}"),
            ("compact", lambda r: f"0{r.choice('689')}{digits(r, 8)}")]
SG_FORMS = [("mobile", lambda r: f"{r.choice('89')}{digits(r, 3)} {digits(r, 4)}"),
            ("intl", lambda r: f"+65 {r.choice('689')}{digits(r, 3)} {digits(r, 4)}"),
            ("fixed", lambda r: f"6{digits(r, 3)} {digits(r, 4)}"),
            ("intl_compact", lambda r: f"+65{r.choice('89')}{digits(r, 7)}")]
MY_FORMS = [("mobile", lambda r: f"01{r.choice('2346789')}-{digits(r, 3)} {digits(r, 4)}"),
            ("mobile_011", lambda r: f"011-{digits(r, 4)} {digits(r, 4)}"),
            ("kl", lambda r: f"03-{r.randint(2, 9)}{digits(r, 3)} {digits(r, 4)}"),
            ("intl", lambda r: f"+60 1{r.choice('2346789')}-{digits(r, 3)} {digits(r, 4)}")]
ID_FORMS = [("mobile", lambda r: f"08{r.choice(['11', '12', '13', '21', '52', '56', '57', '77', '78', '95', '96'])}-"
                                 f"{digits(r, 4)}-{digits(r, 4)}"),
            ("jakarta", lambda r: f"(021) {r.randint(2, 8)}{digits(r, 3)} {digits(r, 4)}"),
            ("intl", lambda r: f"+62 8{r.choice(['11', '12', '13', '21', '52', '57', '77'])}-{digits(r, 4)}-"
                               f"{digits(r, 4)}"),
            ("wa_compact", lambda r: f"628{r.choice(['11', '12', '13', '21', '57'])}{digits(r, 8)}")]
PH_FORMS = [("mobile", lambda r: f"09{r.choice(['17', '18', '27', '95', '98', '66', '77'])} {digits(r, 3)} "
                                 f"{digits(r, 4)}"),
            ("intl", lambda r: f"+63 9{r.choice(['17', '18', '27', '95', '98'])} {digits(r, 3)} {digits(r, 4)}"),
            ("manila", lambda r: f"(02) 8{digits(r, 3)} {digits(r, 4)}"),
            ("compact", lambda r: f"09{r.choice(['17', '27', '95'])}{digits(r, 7)}")]
VN_FORMS = [("mobile", lambda r: f"0{r.choice(['90', '91', '98', '97', '86', '88', '70', '77', '32', '35', '56'])} "
                                 f"{digits(r, 3)} {digits(r, 4)}"),
            ("intl", lambda r: f"+84 {r.choice(['90', '91', '98', '93', '86'])} {digits(r, 3)} {digits(r, 4)}"),
            ("hanoi", lambda r: f"024 {r.randint(3, 7)}{digits(r, 3)} {digits(r, 4)}"),
            ("hcmc_dots", lambda r: f"028.{r.randint(3, 7)}{digits(r, 3)}.{digits(r, 4)}")]
AU_FORMS = [("mobile", lambda r: f"04{r.randint(0, 8)}{digits(r, 1)} {digits(r, 3)} {digits(r, 3)}"),
            ("intl", lambda r: f"+61 4{r.randint(0, 8)}{digits(r, 1)} {digits(r, 3)} {digits(r, 3)}"),
            ("landline", lambda r: f"({r.choice(['02', '03', '07', '08'])}) {r.choice('3456789')}{digits(r, 3)} "
                                   f"{digits(r, 4)}"),
            ("compact", lambda r: f"04{r.randint(0, 8)}{digits(r, 7)}")]
NZ_FORMS = [("mobile", lambda r: f"02{r.choice('127')} {digits(r, 3)} {digits(r, 4)}"),
            ("intl", lambda r: f"+64 2{r.choice('127')} {digits(r, 3)} {digits(r, 4)}"),
            ("auckland", lambda r: f"(09) {r.randint(2, 9)}{digits(r, 2)} {digits(r, 4)}"),
            ("wellington", lambda r: f"04-{r.randint(2, 9)}{digits(r, 2)} {digits(r, 4)}")]
REGION_PHONES: dict[str, tuple[list[tuple[str, Callable[[random.Random], str]]], list[str]]] = {
    "phone_th": (TH_FORMS, ["th", "en"]), "phone_sg": (SG_FORMS, ["en", "zh", "ms", "ta"]),
    "phone_my": (MY_FORMS, ["ms", "zh-Hant", "ta", "en"]), "phone_id": (ID_FORMS, ["id", "jv", "en"]),
    "phone_ph": (PH_FORMS, ["tl", "ceb", "en"]), "phone_vn": (VN_FORMS, ["vi", "en", "km", "lo"]),
    "phone_au": (AU_FORMS, ["en-AU", "zh", "vi", "tet", "tpi"]),
    "phone_nz": (NZ_FORMS, ["mi", "en-NZ", "sm", "to", "fj"]),
}


def region_phone(kind: str) -> Callable[[random.Random, int], Value]:
    forms, langs = REGION_PHONES[kind]
    return lambda rng, i: phone_case(rng, i, forms, langs)


# ---- national ids (outside the target) -------------------------------------------------------------------------

def th_id(rng: random.Random) -> str:
    """Thai citizen id: 13 digits, the last (11 - sum(d_i * (13 - i)) mod 11) mod 10; printed 1-4-5-2-1."""
    body = str(rng.randint(1, 8)) + digits(rng, 11)
    n = body + str((11 - sum(int(d) * (13 - k) for k, d in enumerate(body)) % 11) % 10)
    return f"{n[0]}-{n[1:5]}-{n[5:10]}-{n[10:12]}-{n[12]}" if rng.random() < 0.6 else n


def sg_nric(rng: random.Random) -> str:
    """Singapore NRIC/FIN: S/T (citizens and PRs), F/G (foreigners), 7 digits, a letter from the weighted sum."""
    prefix, body = rng.choice("STFG"), digits(rng, 7)
    total = sum(int(d) * w for d, w in zip(body, (2, 7, 6, 5, 4, 3, 2), strict=True)) + (4 if prefix in "TG" else 0)
    table = "JZIHGFEDCBA" if prefix in "ST" else "XWUTRQPNMLK"
    return prefix + body + table[total % 11]


def _birth(rng: random.Random) -> tuple[int, int, int]:
    return rng.randint(1960, 2005), rng.randint(1, 12), rng.randint(1, 28)


def my_mykad(rng: random.Random) -> str:
    """MyKad: YYMMDD, a place-of-birth code (01-16 states, 21-59 too), 4 digits, odd for men and even for women."""
    y, m, d = _birth(rng)
    pb = f"{rng.choice([rng.randint(1, 16), rng.randint(21, 59)]):02d}"
    n = f"{y % 100:02d}{m:02d}{d:02d}", pb, digits(rng, 4)
    return "-".join(n) if rng.random() < 0.7 else "".join(n)


NIK_PROVINCES = ["11", "12", "13", "14", "16", "18", "31", "32", "33", "34", "35", "36", "51", "52", "61", "64", "71",
                 "73", "81", "91"]


def id_nik(rng: random.Random) -> str:
    """Indonesian NIK: province, regency and district codes, DDMMYY (day + 40 for women), a 4-digit serial."""
    y, m, d = _birth(rng)
    d += 40 if rng.random() < 0.5 else 0
    return (f"{rng.choice(NIK_PROVINCES)}{rng.randint(1, 79):02d}{rng.randint(1, 40):02d}{d:02d}{m:02d}{y % 100:02d}"
            f"{rng.randint(1, 9999):04d}")


def id_npwp(rng: random.Random) -> str:
    """Indonesian NPWP: 2-digit taxpayer type, 6-digit serial, a Luhn digit over those 8, 3-digit tax office, 3-digit
    branch; printed 99.999.999.9-999.999."""
    head = f"{rng.choice(['05', '07', '08', '09'])}{digits(rng, 6)}"
    n = head + luhn_digit(head) + digits(rng, 3) + "000"
    return f"{n[:2]}.{n[2:5]}.{n[5:8]}.{n[8]}-{n[9:12]}.{n[12:]}" if rng.random() < 0.7 else n


VN_PROVINCES = ["001", "002", "004", "008", "015", "019", "022", "024", "026", "030", "031", "033", "034", "036",
                "038", "040", "042", "044", "046", "048", "049", "051", "052", "056", "058", "060", "064", "066", "068",
                "072", "074", "075", "077", "079", "080", "082", "086", "087", "089", "091", "092", "094", "096"]


def vn_cccd(rng: random.Random) -> str:
    """Vietnamese CCCD: province code, century-and-sex digit (0/1 for 1900s, 2/3 for 2000s), birth year, 6 digits."""
    y = _birth(rng)[0]
    century = (0 if y < 2000 else 2) + rng.randint(0, 1)
    return f"{rng.choice(VN_PROVINCES)}{century}{y % 100:02d}{digits(rng, 6)}"


def vn_mst(rng: random.Random) -> str:
    """Vietnamese tax code (MST): 9 digits and 10 - (weighted sum mod 11), weights 31-29-23-19-17-13-7-5-3; a
    remainder of 0 would need 10 and is drawn again."""
    while True:
        body = f"{rng.randint(0, 8)}{digits(rng, 8)}"
        rem = sum(int(d) * w for d, w in zip(body, (31, 29, 23, 19, 17, 13, 7, 5, 3), strict=True)) % 11
        if rem:
            return body + str(10 - rem)


def au_tfn(rng: random.Random) -> str:
    """Australian TFN: 9 digits whose sum under weights 1-4-3-7-5-8-6-9-10 is a multiple of 11."""
    while True:
        body = str(rng.randint(1, 9)) + digits(rng, 7)
        rem = sum(int(d) * w for d, w in zip(body, (1, 4, 3, 7, 5, 8, 6, 9), strict=True)) % 11
        if rem != 10:
            n = body + str(rem)
            return group(n, 3, " ") if rng.random() < 0.7 else n


def au_medicare(rng: random.Random) -> str:
    """Australian Medicare card: first digit 2-6, 7 digits, check (weights 1-3-7-9-1-3-7-9) mod 10, issue number;
    printed 4-5-1."""
    body = str(rng.randint(2, 6)) + digits(rng, 7)
    n = body + str(sum(int(d) * w for d, w in zip(body, (1, 3, 7, 9, 1, 3, 7, 9), strict=True)) % 10)
    n += str(rng.randint(1, 9))
    return f"{n[:4]} {n[4:9]} {n[9]}" if rng.random() < 0.7 else n


def nz_ird(rng: random.Random) -> str:
    """New Zealand IRD number (10,000,000-150,000,000): weights 3-2-7-6-5-4-3-2 over the 8-digit base, check
    11 - (sum mod 11); a 10 retries with 7-4-3-2-5-2-7-6, and a second 10 is drawn again."""
    while True:
        base = f"{rng.randint(1_000_000, 14_999_999):08d}"
        for weights in ((3, 2, 7, 6, 5, 4, 3, 2), (7, 4, 3, 2, 5, 2, 7, 6)):
            rem = sum(int(d) * w for d, w in zip(base, weights, strict=True)) % 11
            check = 0 if rem == 0 else 11 - rem
            if check != 10:
                break
        if check != 10:
            n = (base + str(check)).lstrip("0")
            return f"{n[:-6]}-{n[-6:-3]}-{n[-3:]}" if rng.random() < 0.7 else n


IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "th_id": (th_id, ["เลขประจำตัวประชาชน", "เลขบัตรประชาชน", "Thai ID no."]),
    "sg_nric": (sg_nric, ["NRIC", "FIN", "NRIC/FIN", "身份证号"]),
    "my_mykad": (my_mykad, ["No. MyKad", "No. K/P", "IC no.", "身份证"]),
    "id_nik": (id_nik, ["NIK", "No. KTP", "Nomor Induk Kependudukan"]),
    "id_npwp": (id_npwp, ["NPWP", "No. NPWP pribadi"]),
    "vn_cccd": (vn_cccd, ["Số CCCD", "Căn cước công dân", "CCCD"]),
    "vn_mst": (vn_mst, ["Mã số thuế cá nhân", "MST", "MST cá nhân"]),
    "au_tfn": (au_tfn, ["TFN", "Tax file number"]),
    "au_medicare": (au_medicare, ["Medicare no.", "Medicare card"]),
    "nz_ird": (nz_ird, ["IRD number", "IRD no.", "Tau IRD"]),
}
ID_TEMPLATES = ["{c}: {v}", "Onboarding — {c} {v}", "| Technician | {c} |\n|---|---|\n| {t} | {v} |",
                "{t}, {c} {v}, induction done", "{c}={v}"]


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    make, labels = IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        v = make(rng)
        text = ID_TEMPLATES[i % len(ID_TEMPLATES)].format(c=labels[i % len(labels)], v=v, t=rng.choice(TECHS))
        return ("printed" if not v.isalnum() else "compact"), v, text, False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "oauth_token": v_oauth_token, "session_cookie": v_session_cookie, "private_key": v_private_key,
    "totp_seed": v_totp_seed, **PROVIDERS, "azure_iot_sas": v_azure_iot_sas, "au_bank_account": v_au_bank_account,
    **{kind: region_phone(kind) for kind in REGION_PHONES}, **{kind: national_id(kind) for kind in IDS}}

LANGUAGES = ("th", "vi", "id", "jv", "ms", "tl", "ceb", "km", "lo", "my", "zh", "zh-Hant", "ta", "hi", "mi", "sm",
             "to", "fj", "tet", "tpi", "ja", "ko", "fr", "de", "en", "en-AU", "en-NZ", "en-GB")
"""The languages whose context words the cases carry (PW_LABELS and PHONE_CTX name them)."""


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

def _luhn_bad(rng: random.Random) -> str:
    body = rng.choice(["4", "5" + str(rng.randint(1, 5))]) + digits(rng, 13 if rng.random() < 0.5 else 12)
    body = body.ljust(15, "0")
    return group(body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10), 4, " ")


def s10_tracking(rng: random.Random) -> str:
    """A UPU S10 item id: service letters, 8 digits, the check digit (weights 8-6-4-2-3-5-9-7, 11 - sum mod 11,
    10 -> 0, 11 -> 5), the country code."""
    serial = digits(rng, 8)
    check = 11 - sum(int(d) * w for d, w in zip(serial, (8, 6, 4, 2, 3, 5, 9, 7), strict=True)) % 11
    check = {10: 0, 11: 5}.get(check, check)
    country = rng.choice(["TH", "VN", "MY", "SG", "AU", "NZ"])
    return f"{rng.choice(['EE', 'EF', 'RR', 'CP', 'LX'])}{serial}{check}{country}"


def company_abn(rng: random.Random) -> str:
    """An ABN (ATO): 11 digits, subtract 1 from the first, weights 10-1-3-5-7-9-11-13-15-17-19, sum mod 89 = 0."""
    weights = (10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19)
    while True:
        rest = digits(rng, 9)
        for lead in range(10, 100):
            n = f"{lead}{rest}"
            if sum((int(d) - (k == 0)) * w for k, (d, w) in enumerate(zip(n, weights, strict=True))) % 89 == 0:
                return f"{n[:2]} {n[2:5]} {n[5:8]} {n[8:]}"


def nzbn(rng: random.Random) -> str:
    """An NZBN: GS1 GLN prefix 94, 10 digits, the GS1 mod 10 check digit (weights 1-3 from the left for 13 digits)."""
    body = "94" + digits(rng, 10)
    total = sum(int(d) * (1 if k % 2 == 0 else 3) for k, d in enumerate(body))
    return body + str((10 - total % 10) % 10)


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "work_order_ids": lambda r: f"WO-{r.randint(2023, 2025)}-{r.randint(1, 999999):06d} reassigned to crew "
                                f"{r.choice('ABCDEF')}{r.randint(1, 9)}, SLA {r.randint(2, 48)}h",
    "po_invoice_numbers": lambda r: f"PO-{r.choice(['TH', 'SG', 'MY', 'AU'])}-{r.randint(2023, 2025)}-"
                                    f"{r.randint(1, 99999):05d} matched to INV-{r.randint(10000, 999999)} "
                                    f"({r.randint(1, 40)} lines)",
    "bacnet_modbus": lambda r: f"device {r.randint(1000, 4194302)} analog-input:{r.randint(0, 200)} present-value; "
                               f"modbus holding register 4{r.randint(0, 9999):04d} x{r.choice(['0.1', '0.01', '1'])}",
    "mqtt_topics": lambda r: f"sites/{r.randint(1, 90):03d}/ahu-{r.randint(1, 12)}/supply_temp qos={r.randint(0, 2)}",
    "coordinates": lambda r: f"site pin {r.uniform(-45, 20):.6f}, {r.uniform(95, 178):.6f} "
                             f"(geofence {r.randint(50, 500)} m)",
    "drawing_refs": lambda r: f"Drawing {r.choice('AMESH')}-{r.randint(100, 599)} Rev {r.choice('ABCDE')}, grid "
                              f"{r.choice('ABCDEFGH')}/{r.randint(1, 20)}, Level {r.randint(1, 40)}",
    "dimensions": lambda r: f"duct {r.choice([300, 400, 600, 800])} x {r.choice([200, 250, 300])} mm, panel "
                            f"{r.choice([1920, 1280, 1024])}x{r.choice([1080, 720, 768])} px, M{r.choice([8, 10, 12])}"
                            f" x {r.choice(['1.25', '1.5', '1.75'])}",
    "timestamps": lambda r: f"{_ts(r)} alarm cleared; epoch {_epoch(r)}; duration {r.randint(1, 3600)} s",
    "request_trace_ids": lambda r: f"X-Request-Id: {_fid(r)}\ntraceparent: 00-{pick(r, HEX, 32)}-"
                                   f"{pick(r, HEX, 16)}-01",
    "selectors_xpath": lambda r: r.choice([f"#wo-table > tbody > tr:nth-child({r.randint(1, 40)}) > td.status",
                                           f"//div[@data-testid='job-card-{r.randint(1, 99)}']//button[2]",
                                           f".tech-badge--{r.choice(['on-site', 'en-route', 'idle'])}"]),
    "cache_busting": lambda r: f"/static/js/dispatch.{pick(r, HEX, 8)}.chunk.js?v={pick(r, HEX, 10)}",
    "csrf_field_names": lambda r: r.choice(['<input type="hidden" name="csrf_token" value="">',
                                            'X-CSRF-Token header required', 'name="authenticity_token"',
                                            'csrfmiddlewaretoken missing', '__RequestVerificationToken (empty)']) +
                                  f" on form #{r.randint(1, 30)}",
    "placeholders": lambda r: r.choice(["Password: ********", "API key: <your-api-key>", "email: you@example.com",
                                        "รหัสผ่าน: ••••••••", "Mật khẩu: ******", "token=YOUR_TOKEN_HERE",
                                        "AWS_SECRET_ACCESS_KEY=changeme"]) + f" (step {r.randint(1, 9)})",
    "masked_values": lambda r: r.choice([f"card ending •••• {digits(r, 4)}", f"acct ***{digits(r, 3)}",
                                         f"0{r.choice('689')}x-xxx-{digits(r, 4)}",
                                         f"IBAN DE** **** **** {digits(r, 4)}",
                                         f"NRIC S****{digits(r, 3)}{r.choice(UPPER)}"]),
    "firmware_versions": lambda r: f"firmware v{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 99)}-"
                                   f"{r.choice(['rc1', 'lts', 'build' + str(r.randint(100, 999))])}, BACnet rev "
                                   f"{r.randint(14, 24)}",
    "service_numbers": lambda r: r.choice([f"Faults hotline 1300 {digits(r, 3)} {digits(r, 3)}",
                                           f"Freecall 1800 {digits(r, 3)} {digits(r, 3)}",
                                           f"NZ 0800 {digits(r, 3)} {digits(r, 3)}",
                                           f"Call centre 13 {digits(r, 2)} {digits(r, 2)}",
                                           f"SG toll-free 1800 {digits(r, 3)} {digits(r, 4)}",
                                           f"สายด่วน 1{digits(r, 3)}"]),
    "luhn_invalid": lambda r: f"ref {_luhn_bad(r)}",
    "tracking_numbers": lambda r: f"Parts shipped, tracking {s10_tracking(r)}",
    "business_numbers": lambda r: r.choice([f"ABN {company_abn(r)}", f"NZBN {nzbn(r)}"]) + " (supplier, Pty Ltd)",
    "lan_addresses": lambda r: f"BACnet/IP 192.168.{r.randint(0, 254)}.{r.randint(1, 254)}:47808, Modbus TCP "
                               f"10.{r.randint(0, 254)}.{r.randint(0, 254)}.{r.randint(1, 254)}:502",
    "aws_doc_examples": lambda r: r.choice(["AKIAIOSFODNN7EXAMPLE",
                                            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"]) + " (from the AWS docs)",
    "file_hashes": lambda r: f"gw-fw-{r.randint(1, 9)}.{r.randint(0, 9)}.bin sha256 "
                             f"{hashlib.sha256(r.randbytes(16)).hexdigest()}",
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
