"""The thirty-seventh blind redaction corpus: telecom operators, utilities and industrial operations, what an
agent in a network operations or field-service centre reads and writes. Written from the formats' public
specifications by someone who read neither the detection rules nor the other corpora.

Carriers (the `form` head): text: CDRs as CSV (the value in a quoted remark column, quotes doubled as RFC 4180
writes them), Juniper Junos `display set` output, Nokia SR OS `admin display-config`, Huawei VRP `display
current-configuration`, MikroTik RouterOS `/export`, SSH/CLI sessions on a jump host, SMPP 3.4 gateway logs,
Diameter (RFC 6733) proxy logs, Modbus/OPC UA gateway logs, historian CSV exports, Mosquitto configs, utility
outage tickets, field work orders, dispatch notes, BMC Remedy incident exports, FreeRADIUS/tac_plus configs,
number porting requests, chat transcripts and e-mails from the agent to customers; JSON (about a third of the
cases): BSS subscriber profiles, GSMA SGP.22 ES2+ download orders, ServiceNow Table API records, OPC UA gateway
configs, Sparkplug-style MQTT payloads, GeoJSON features from GIS, IBM Maximo work orders, chat-completion
messages, billing payment plans, NetBox devices with config contexts and MCP `tools/call` results. The agent's
replies to users come in 30 languages, labels in the user's language.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not
0000); phones, the national numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT), avoiding the ranges the
regulators reserve for drama, with context words in the country's languages; AWS keys, IAM's documented
AKIA/ASIA ids (16 base32 characters) and 40-character secrets; Slack, Discord, Teams, Power Automate, Google Chat,
Mattermost, Zapier, Rocket.Chat and Webex incoming webhook URLs as their docs print them (the secret is the token
segment or `sig`/`token` value only; Google Chat's `key=` is the one key its docs print in every URL); Stripe
`whsec_` signing secrets (dashboard and `stripe listen` forms); Azure IoT Hub/Event Hubs/Storage, ADO.NET, Oracle
JDBC and URI (PostgreSQL, MongoDB, AMQP, MQTT, Redis) connection strings (the secret is the password or key);
JWT (RFC 7519/7515), HTTP Basic (RFC 7617), Bearer (RFC 6750), Digest `response=` (RFC 7616), OpenStack Keystone
Fernet tokens (Fernet spec: 0x80, timestamp, IV, ciphertext, HMAC); PEM SEC1/PKCS#8 and OpenSSH keys; OAuth 2.0
(RFC 6749) refresh tokens and Google (`ya29.`, `1//`) and Salesforce (`00D...!`) tokens; TOTP seeds (RFC 4648
base32, Google Authenticator's `otpauth://` key URI format); provider tokens by their documented prefixes
(SendGrid `SG.`, GitLab `glpat-`, GitHub `ghp_` and npm `npm_` with CRC32, Slack `xoxb-`, OpenAI `sk-`/`sk-proj-`,
Anthropic `sk-ant-api03-`, Hugging Face `hf_`, Google `AIza`, Tailscale `tskey-auth-`, Vault `hvs.`,
DigitalOcean `dop_v1_`, Postman `PMAK-`); SNMP community strings and SNMPv3 USM passphrases (RFC 3414, 8 or more
characters); RADIUS (RFC 2865) and TACACS+ (RFC 8907) shared secrets, BGP TCP-MD5 keys (RFC 2385) and Junos
`$9$` secrets (its published reversible obfuscation); WPA2 passphrases (IEEE 802.11i: 8-63 printable characters
or 64 hex digits, ZXing's `WIFI:` QR form); SIM Ki (3GPP TS 35.206, 128 bits), LoRaWAN AppKeys (LoRaWAN 1.0.x),
SGP.22 activation codes (`LPA:1$SM-DP+ address$Matching ID`, the secret is the matching id) and SIM PUKs; ICCIDs
(ITU-T E.118, Luhn) and IMSIs (ITU-T E.212) of the test network 001-01 appear only as carrier text. National
ids (outside the target): French NIR (97 - n mod 97), Swedish personnummer (Luhn), Finnish henkilötunnus
(mod 31), Norwegian fødselsnummer (two mod 11 digits), Chinese resident id (ISO 7064 MOD 11-2), South African
id (Luhn), Brazilian CPF (two mod 11 digits), Polish PESEL (weights 1-3-7-9).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, an activation code's matching id). A community string or a
RADIUS secret is a password to the network, so it is a secret whatever its shape; a Junos `$9$` string decodes
back to its secret, so it is one too, while `$6$` crypt hashes are left out. Carriers hold no second unplanted
secret: where a real format would carry one (an STS SessionToken, an OPc beside a Ki) it is shown omitted. Near
misses are what an operations centre holds that is neither secret nor personal: cell ids, charging ids, SNMP OIDs,
interface names and ASNs, documentation-range addresses, Modbus registers, OPC UA node ids, OBIS readings,
historian tags, MQTT topics, coordinates, firmware hashes, versions, ticket and order numbers, tracking numbers,
W3C trace ids, cache-busting file names, UI selectors and pixel sizes, CSRF field names, masked values,
placeholders, the AWS docs' EXAMPLE keys, Luhn-invalid lot numbers and businesses' published toll-free lines:
none of them identifies a person or opens anything.
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

SEED = 37
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"fr_nir", "se_pnr", "fi_hetu", "no_fnr", "cn_rid", "za_id", "br_cpf", "pl_pesel"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
PW_SYMBOLS = "!#$%&*+-=?@^_.~"


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
"""(style, secret, snippet holding the secret, raw_only: the snippet goes in a text carrier only)."""


# ---- carrier helpers ------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    return (f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z")


def _log_ts(rng: random.Random) -> str:
    return _ts(rng).replace("T", " ").rstrip("Z") + f".{rng.randint(0, 999):03d}"


def _ip(rng: random.Random) -> str:
    return f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


SITES = ["SUB-NORTH-12", "PE-FRA-03", "AGG-LYS-07", "BNG-MUM-02", "RTU-OAK-44", "CORE-LHR-01", "OLT-CGN-19",
         "WTP-DEL-05", "MSC-TOR-02", "GIS-ZH-11", "PUMP-ST-08", "CELL-4G-2231"]


def _site(rng: random.Random) -> str:
    return rng.choice(SITES)


def _csv_field(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


# ---- text carriers --------------------------------------------------------------------------------------------

def c_cdr_csv(rng: random.Random, snip: str, _s: str) -> str:
    head = "record_id,start_time,duration_s,cell_id,charging_id,msisdn_sha256_prefix,rated_units,remark"
    row = (f"{rng.randint(10 ** 9, 10 ** 10)},{_ts(rng)},{rng.randint(1, 3600)},{rng.randint(10 ** 6, 10 ** 7)},"
           f"0x{rng.getrandbits(32):08X},{pick(rng, HEX, 12)},{rng.randint(1, 900)},{_csv_field(snip)}")
    return f"{head}\n{row}\n"


def c_junos(rng: random.Random, snip: str, _s: str) -> str:
    return (f"noc@{_site(rng).lower()}> show configuration | display set | no-more\n"
            f"## Last commit: {_log_ts(rng)} UTC by netops\nset version 23.4R1.9\n"
            f"set system host-name {_site(rng).lower()}\n{snip}\nset system services netconf ssh\n")


def c_nokia(rng: random.Random, snip: str, _s: str) -> str:
    return (f"A:{_site(rng)}# admin display-config\n# TiMOS-C-24.3.R1 cpm/x86_64 Nokia 7750 SR\n"
            f"configure\n    system\n        name \"{_site(rng)}\"\n        {snip}\n    exit\nexit all\n")


def c_huawei(rng: random.Random, snip: str, _s: str) -> str:
    return (f"<{_site(rng)}>display current-configuration\n!Software Version V800R021C10SPC100\n#\n"
            f" sysname {_site(rng)}\n#\n {snip}\n#\nreturn\n")


def c_routeros(rng: random.Random, snip: str, _s: str) -> str:
    return (f"# {_log_ts(rng)[:19]} by RouterOS 7.14.3\n# software id = {pick(rng, UPPER + '0123456789', 4)}-"
            f"{pick(rng, UPPER + '0123456789', 4)}\n/system identity set name={_site(rng)}\n{snip}\n")


def c_cli_session(rng: random.Random, snip: str, _s: str) -> str:
    return (f"noc@jump01:~$ ssh admin@{_ip(rng)}\nLast login: {_log_ts(rng)} from {_ip(rng)}\n"
            f"admin@{_site(rng).lower()}:~$ {snip}\nadmin@{_site(rng).lower()}:~$ exit\nConnection closed.\n")


def c_smpp_log(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_log_ts(rng)} INFO  smsc-gw[{rng.randint(100, 9999)}] bind_transceiver system_id=ops_alerts "
            f"seq={rng.randint(1, 99999)} status=ESME_ROK\n{_log_ts(rng)} DEBUG smsc-gw submit_sm "
            f"seq={rng.randint(1, 99999)} data_coding=0x08 note={snip}\n")


def c_diameter_log(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_log_ts(rng)} dra01 CCR-I Session-Id=pgw{rng.randint(1, 9)}.epc.mnc001.mcc001.3gppnetwork.org;"
            f"{rng.randint(1, 10 ** 9)};{rng.randint(1, 10 ** 6)} Result-Code=2001\n"
            f"{_log_ts(rng)} dra01 peer-config: {snip}\n")


def c_scada_log(rng: random.Random, snip: str, _s: str) -> str:
    return (f"[{_log_ts(rng)}] opcua-gw INFO  connected opc.tcp://{_ip(rng)}:4840 policy=Basic256Sha256\n"
            f"[{_log_ts(rng)}] modbus-bridge WARN unit={rng.randint(1, 247)} timeout after 500 ms, retry 2/3\n"
            f"[{_log_ts(rng)}] gateway DEBUG {snip}\n")


def c_historian_csv(rng: random.Random, snip: str, _s: str) -> str:
    tag = f"{_site(rng)}.FIC-{rng.randint(1000, 9999)}.PV"
    return (f"Tag,Timestamp,Value,Quality,Annotation\n{tag},{_ts(rng)},{rng.uniform(0, 500):.3f},Good,\n"
            f"{tag},{_ts(rng)},{rng.uniform(0, 500):.3f},Good,{_csv_field(snip)}\n")


def c_mosquitto(rng: random.Random, snip: str, _s: str) -> str:
    return (f"# /etc/mosquitto/conf.d/bridge-{_site(rng).lower()}.conf\nlistener 8883\n"
            f"cafile /etc/mosquitto/ca.crt\nconnection scada-bridge\naddress {_ip(rng)}:8883\n{snip}\n"
            "topic spBv1.0/# both 1\n")


def c_outage_ticket(rng: random.Random, snip: str, _s: str) -> str:
    return (f"OUTAGE TICKET OT-2026-{rng.randint(10000, 99999)}\nFeeder: F-{rng.randint(1, 60)}  Substation: "
            f"{_site(rng)}\nCustomers affected: {rng.randint(1, 4000)}  ETR: {_ts(rng)}\nCause: "
            f"{rng.choice(['vegetation', 'lightning', 'cable fault', 'vehicle hit pole'])}\nNotes: {snip}\n")


def c_work_order(rng: random.Random, snip: str, _s: str) -> str:
    return (f"WORK ORDER WO-{rng.randint(100000, 999999)}\nSite: {_site(rng)}\nTask: "
            f"{rng.choice(['replace RTU battery', 'swap SFP on uplink', 'meter exchange', 'inspect recloser'])}\n"
            f"Priority: P{rng.randint(1, 4)}\nAccess / notes:\n{snip}\n")


def c_dispatch(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Dispatch {_log_ts(rng)[:16]} tech T-{rng.randint(100, 999)} en route to {_site(rng)} "
            f"(ETA {rng.randint(10, 90)} min). {snip}\n")


def c_remedy(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Incident ID*+: INC{rng.randint(10 ** 11, 10 ** 12):012d}\nStatus: In Progress\nImpact: "
            f"3-Moderate/Limited\nSummary: {_site(rng)} link flap\nWork Info Notes:\n{snip}\n")


def c_radius_conf(rng: random.Random, snip: str, _s: str) -> str:
    return (f"# /etc/freeradius/3.0/clients.conf -- managed by netops, do not edit by hand\n"
            f"client {_site(rng).lower()} {{\n    ipaddr = {_ip(rng)}\n    nas_type = other\n}}\n# change note: "
            f"{snip}\n")


def c_porting(rng: random.Random, snip: str, _s: str) -> str:
    return (f"PORT-IN REQUEST PRQ-{rng.randint(10 ** 6, 10 ** 7)}\nLosing carrier: SPID {rng.randint(1000, 9999)}"
            f"\nRequested due date: {_ts(rng)[:10]}\nStatus: pending LOA\nComments: {snip}\n")


def c_chat_text(rng: random.Random, snip: str, _s: str) -> str:
    return (f"[{_log_ts(rng)[:16]}] customer: {rng.choice(['any update?', 'my internet is down', 'still no power'])}"
            f"\n[{_log_ts(rng)[:16]}] agent: {snip}\n")


def c_email_msg(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Subject: Your service request SR-{rng.randint(100000, 999999)}\nDate: {_ts(rng)}\n\n"
            f"{snip}\n\n-- \nNetwork Operations Centre\n")


# ---- JSON carriers --------------------------------------------------------------------------------------------

def j_subscriber(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"subscriberId": _uuid(rng), "status": "ACTIVE", "plan": rng.choice(["FTTH-500", "5G-UL"]),
                  "imsi": f"00101{digits(rng, 10)}", "notes": snip})


def j_esim(rng: random.Random, snip: str, _s: str) -> str:
    body = "8988211" + digits(rng, 11)
    return _dump({"header": {"functionRequesterIdentifier": "opsportal", "functionCallIdentifier": _uuid(rng)},
                  "iccid": body + luhn_digit(body), "profileType": "CONSUMER-5G", "remark": snip})


def j_servicenow(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"result": {"number": f"INC{rng.randint(10 ** 6, 10 ** 7):07d}", "sys_id": pick(rng, HEX, 32),
                             "short_description": f"{_site(rng)} alarm", "work_notes": snip}})


def j_opcua(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"endpointUrl": f"opc.tcp://{_ip(rng)}:4840", "securityPolicy": "Basic256Sha256",
                  "nodes": [f"ns=2;s={_site(rng)}.Pump{rng.randint(1, 9)}.Flow"], "comment": snip})


def j_mqtt(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"timestamp": rng.randint(17 * 10 ** 11, 18 * 10 ** 11), "seq": rng.randint(0, 255),
                  "metrics": [{"name": "Voltage/L1", "value": round(rng.uniform(220, 240), 1)},
                              {"name": "Maintenance/Note", "value": snip}]})


def j_geojson(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"type": "Feature", "geometry": {"type": "Point", "coordinates": [
        round(rng.uniform(-120, 30), 6), round(rng.uniform(20, 60), 6)]},
        "properties": {"asset_id": f"POLE-{rng.randint(10000, 99999)}", "comment": snip}})


def j_maximo(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"wonum": str(rng.randint(10 ** 6, 10 ** 7)), "status": "WAPPR", "siteid": _site(rng),
                  "description": "Field inspection", "description_longdescription": snip})


def j_chat(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"messages": [{"role": "user", "content": "can you send me the details?"},
                               {"role": "assistant", "content": snip}], "conversation_id": _uuid(rng)})


def j_billing(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"accountRef": pick(rng, HEX, 16), "paymentPlan": {"installments": rng.randint(2, 12),
                  "amount": round(rng.uniform(20, 400), 2), "currency": "EUR"}, "agentNote": snip})


def j_netbox(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": rng.randint(1, 9999), "name": _site(rng).lower(), "platform": {"slug": "junos"},
                  "config_context": {"notes": snip}})


def j_mcp(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"jsonrpc": "2.0", "id": rng.randint(1, 999), "result": {"content": [{"type": "text",
                  "text": snip}], "isError": False}})


Carrier = Callable[[random.Random, str, str], str]
TEXT_CARRIERS: dict[str, Carrier] = {
    "cdr_csv": c_cdr_csv, "junos": c_junos, "nokia_sros": c_nokia, "huawei_vrp": c_huawei, "routeros": c_routeros,
    "cli_session": c_cli_session, "smpp_log": c_smpp_log, "diameter_log": c_diameter_log, "scada_log": c_scada_log,
    "historian_csv": c_historian_csv, "mosquitto_conf": c_mosquitto, "outage_ticket": c_outage_ticket,
    "work_order": c_work_order, "dispatch": c_dispatch, "remedy": c_remedy, "radius_conf": c_radius_conf,
    "porting": c_porting, "chat_text": c_chat_text, "email_msg": c_email_msg,
}
JSON_CARRIERS: dict[str, Carrier] = {
    "subscriber": j_subscriber, "esim_es2": j_esim, "servicenow": j_servicenow, "opcua_json": j_opcua,
    "mqtt_payload": j_mqtt, "geojson": j_geojson, "maximo": j_maximo, "chat_json": j_chat, "billing": j_billing,
    "netbox": j_netbox, "mcp": j_mcp,
}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """Put a value's snippet in a carrier: every third case in JSON unless the snippet must stay raw."""
    _style, secret, snip, raw_only = value
    as_json = i % 3 == 0 and not raw_only
    pool = JSON_CARRIERS if as_json else TEXT_CARRIERS
    name = rng.choice(list(pool))
    return name, pool[name](rng, snip, secret), as_json


# ---- languages ------------------------------------------------------------------------------------------------

LANGS: dict[str, tuple[str, ...]] = {
    # intro, password, phone, email, IBAN, card, API key, Wi-Fi key, secret/code
    "en": ("Here are the details you asked for", "password", "phone", "email", "IBAN", "card number", "API key",
           "Wi-Fi key", "secret"),
    "de": ("Hier sind die gewünschten Angaben", "Passwort", "Telefon", "E-Mail", "IBAN", "Kartennummer",
           "API-Schlüssel", "WLAN-Schlüssel", "Geheimnis"),
    "fr": ("Voici les informations demandées", "mot de passe", "téléphone", "courriel", "IBAN", "numéro de carte",
           "clé API", "clé Wi-Fi", "secret"),
    "es": ("Aquí tiene los datos que pidió", "contraseña", "teléfono", "correo", "IBAN", "número de tarjeta",
           "clave de API", "clave wifi", "secreto"),
    "it": ("Ecco i dati richiesti", "password", "telefono", "e-mail", "IBAN", "numero della carta", "chiave API",
           "chiave Wi-Fi", "segreto"),
    "pt": ("Seguem os dados solicitados", "senha", "telefone", "e-mail", "IBAN", "número do cartão",
           "chave de API", "senha do Wi-Fi", "segredo"),
    "nl": ("Hier zijn de gevraagde gegevens", "wachtwoord", "telefoon", "e-mail", "IBAN", "kaartnummer",
           "API-sleutel", "wifi-sleutel", "geheim"),
    "pl": ("Oto dane, o które Pan prosił", "hasło", "telefon", "e-mail", "IBAN", "numer karty", "klucz API",
           "hasło Wi-Fi", "sekret"),
    "sv": ("Här är uppgifterna du bad om", "lösenord", "telefon", "e-post", "IBAN", "kortnummer", "API-nyckel",
           "wifi-lösenord", "hemlighet"),
    "nb": ("Her er opplysningene du ba om", "passord", "telefon", "e-post", "IBAN", "kortnummer", "API-nøkkel",
           "wifi-passord", "hemmelighet"),
    "da": ("Her er de oplysninger, du bad om", "adgangskode", "telefon", "e-mail", "IBAN", "kortnummer",
           "API-nøgle", "wifi-kode", "hemmelighed"),
    "fi": ("Tässä pyytämäsi tiedot", "salasana", "puhelin", "sähköposti", "IBAN", "kortin numero", "API-avain",
           "Wi-Fi-avain", "salaisuus"),
    "cs": ("Zde jsou požadované údaje", "heslo", "telefon", "e-mail", "IBAN", "číslo karty", "klíč API",
           "heslo k Wi-Fi", "tajný klíč"),
    "tr": ("İstediğiniz bilgiler aşağıda", "şifre", "telefon", "e-posta", "IBAN", "kart numarası",
           "API anahtarı", "Wi-Fi şifresi", "gizli anahtar"),
    "ru": ("Вот запрошенные данные", "пароль", "телефон", "эл. почта", "IBAN", "номер карты", "API-ключ",
           "пароль Wi-Fi", "секрет"),
    "uk": ("Ось дані, які ви просили", "пароль", "телефон", "ел. пошта", "IBAN", "номер картки", "ключ API",
           "пароль Wi-Fi", "секрет"),
    "ar": ("إليك البيانات التي طلبتها", "كلمة المرور", "الهاتف", "البريد الإلكتروني", "الآيبان", "رقم البطاقة",
           "مفتاح API", "كلمة مرور الواي فاي", "المفتاح السري"),
    "he": ("הנה הפרטים שביקשת", "סיסמה", "טלפון", "אימייל", "IBAN", "מספר כרטיס", "מפתח API", "סיסמת Wi-Fi",
           "סוד"),
    "hi": ("आपके माँगे गए विवरण ये हैं", "पासवर्ड", "फ़ोन", "ईमेल", "IBAN", "कार्ड नंबर", "API कुंजी",
           "वाई-फ़ाई पासवर्ड", "गुप्त कुंजी"),
    "ja": ("ご依頼の情報は以下のとおりです", "パスワード", "電話番号", "メール", "IBAN", "カード番号", "APIキー",
           "Wi-Fiキー", "シークレット"),
    "ko": ("요청하신 정보입니다", "비밀번호", "전화번호", "이메일", "IBAN", "카드 번호", "API 키", "와이파이 비밀번호",
           "시크릿"),
    "zh": ("以下是您要的信息", "密码", "电话", "邮箱", "IBAN", "卡号", "API 密钥", "Wi-Fi 密码", "密钥"),
    "vi": ("Đây là thông tin bạn yêu cầu", "mật khẩu", "điện thoại", "email", "IBAN", "số thẻ", "khóa API",
           "mật khẩu Wi-Fi", "khóa bí mật"),
    "th": ("นี่คือข้อมูลที่คุณขอ", "รหัสผ่าน", "โทรศัพท์", "อีเมล", "IBAN", "หมายเลขบัตร", "คีย์ API", "รหัส Wi-Fi",
           "ความลับ"),
    "id": ("Berikut data yang Anda minta", "kata sandi", "telepon", "email", "IBAN", "nomor kartu", "kunci API",
           "kata sandi Wi-Fi", "rahasia"),
    "ro": ("Iată datele cerute", "parolă", "telefon", "e-mail", "IBAN", "numărul cardului", "cheie API",
           "parolă Wi-Fi", "secret"),
    "hu": ("Íme a kért adatok", "jelszó", "telefon", "e-mail", "IBAN", "kártyaszám", "API-kulcs", "Wi-Fi-jelszó",
           "titkos kulcs"),
    "el": ("Ορίστε τα στοιχεία που ζητήσατε", "κωδικός πρόσβασης", "τηλέφωνο", "email", "IBAN", "αριθμός κάρτας",
           "κλειδί API", "κωδικός Wi-Fi", "μυστικό"),
    "sw": ("Haya ni maelezo uliyoomba", "nenosiri", "simu", "barua pepe", "IBAN", "namba ya kadi",
           "ufunguo wa API", "nenosiri la Wi-Fi", "siri"),
    "tl": ("Narito ang mga detalyeng hiniling mo", "password", "telepono", "email", "IBAN", "numero ng card",
           "API key", "password ng Wi-Fi", "sikreto"),
}
L_PW, L_PHONE, L_MAIL, L_IBAN, L_CARD, L_KEY, L_WIFI, L_SECRET = range(1, 9)
REPLY_FRAMES = ["{intro}:\n{label}: {v}", "{intro} — {label}: {v}", "{intro}.\n\n• {label}: {v}\n",
                "{intro}. {label} = {v}"]


def reply(rng: random.Random, label: int, v: str, langs: list[str] | None = None) -> tuple[str, str]:
    """The agent's message to a user in one of `langs` (all by default), the value under its label there."""
    code = rng.choice(langs or list(LANGS))
    row = LANGS[code]
    return code, rng.choice(REPLY_FRAMES).format(intro=row[0], label=row[label], v=v)


# ---- password -------------------------------------------------------------------------------------------------

WORDS = ["Feeder", "Trafo", "Umspann", "Poteau", "Fibra", "Antena", "Mast", "Turbine", "Valve", "Pumpe", "Relay",
         "Kabel", "Ligne", "Torre", "Canal", "Granit", "Harbor", "Lantern", "Nordlys", "Sakura", "Monsun", "Ferry"]


def password_value(rng: random.Random) -> str:
    """A password as people and generators make them: word-digits-symbol, random, passphrase or alphanumeric."""
    style = rng.randrange(4)
    if style == 0:
        return f"{rng.choice(WORDS)}{rng.choice(PW_SYMBOLS)}{digits(rng, rng.randint(2, 4))}{rng.choice(WORDS)}"
    if style == 1:
        return pick(rng, ALNUM + PW_SYMBOLS, rng.randint(12, 20))
    if style == 2:
        words = [rng.choice(WORDS).lower() for _ in range(3)] + [digits(rng, 2)]
        return rng.choice("-_.").join(words)
    return pick(rng, ALNUM, 16)


PW_FORMS = [
    ("routeros_user", "/user add name=fieldtech group=full password={v}"),
    ("routeros_ppp", "/ppp secret add name=cpe-{n} password={v} service=pppoe profile=res-100M"),
    ("mosquitto_bridge", "remote_username scada-gw\nremote_password {v}"),
    ("mosquitto_pub", "mosquitto_pub -h broker.ops.lan -p 8883 -u meter-gw -P '{v}' -t spBv1.0/grid/NCMD/gw{n}"),
    ("sros_user", "user \"noc{n}\" password \"{v}\" access console ftp"),
    ("vrp_local_user", "local-user admin{n} password irreversible-cipher {v}"),
    ("sshpass", "sshpass -p '{v}' ssh admin@10.20.{o}.1"),
    ("curl_basic", "curl -sk -u noc-api:{v} https://oss.ops.lan/api/v1/alarms"),
    ("pppoe_profile", "PPPoE username: cust{n}@fibre.isp, password: {v}"),
    ("pjsip", "[{n}]\ntype=auth\nauth_type=userpass\nusername={n}\npassword={v}"),
    ("hmi_login", "HMI login at the RTU cabinet: operator / {v}"),
    ("opcua_user", "opcua user token: UserName=opc_reader; Password={v}"),
]


def v_password(rng: random.Random, i: int) -> Value:
    pw = password_value(rng)
    if i % 4 == 3:
        code, text = reply(rng, L_PW, pw)
        return f"reply_{code}", pw, text, False
    style, tmpl = rng.choice(PW_FORMS)
    return style, pw, tmpl.format(v=pw, n=rng.randint(100, 9999), o=rng.randint(1, 254)), False


# ---- AWS ------------------------------------------------------------------------------------------------------

def aws_id(rng: random.Random, prefix: str = "AKIA") -> str:
    return prefix + pick(rng, B32, 16)


AWS_FORMS = [
    ("credentials", "[historian-export]\naws_access_key_id = {k}\naws_secret_access_key = {v}"),
    ("env", "export AWS_ACCESS_KEY_ID={k}\nexport AWS_SECRET_ACCESS_KEY={v}"),
    ("sts", '"Credentials": {{"AccessKeyId": "{a}", "SecretAccessKey": "{v}", "SessionToken": "<omitted>", '
            '"Expiration": "2026-04-01T12:00:00Z"}}'),
    ("console_csv", "Access key ID,Secret access key\n{k},{v}"),
    ("greengrass_yaml", "aws:\n  region: eu-central-1\n  aws_access_key_id: {k}\n  aws_secret_access_key: {v}"),
    ("boto3", 'boto3.client("s3", aws_access_key_id="{k}", aws_secret_access_key="{v}")'),
    ("rclone", "[s3-meterdata]\ntype = s3\nprovider = AWS\naccess_key_id = {k}\nsecret_access_key = {v}"),
    ("terraform", 'provider "aws" {{\n  access_key = "{k}"\n  secret_key = "{v}"\n}}'),
    ("beside", "keys for the meter-data bucket: {k} {v}"),
    ("beside_slash", "IAM user field-sync → {k} / {v}"),
    ("labelled_fr", "clé secrète AWS : {v}"),
    ("labelled_de", "AWS Secret Access Key (Zählerdaten-Export): {v}"),
    ("labelled_es", "clave secreta de AWS: {v}"),
    ("labelled_ja", "AWSシークレットアクセスキー: {v}"),
]


def v_aws_secret(rng: random.Random, i: int) -> Value:
    secret = pick(rng, B64, 40)
    style, tmpl = AWS_FORMS[i % len(AWS_FORMS)]
    return style, secret, tmpl.format(k=aws_id(rng), a=aws_id(rng, "ASIA"), v=secret), False


# ---- webhooks -------------------------------------------------------------------------------------------------

GCHAT_KEY = "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"
"""The one `key=` Google Chat's docs print in every incoming webhook URL; the per-space secret is `token=`."""


def webhook_url(rng: random.Random, sort: str) -> tuple[str, str]:
    """(url, token part) of one provider's incoming webhook."""
    up = UPPER + string.digits
    if sort == "slack":
        token = pick(rng, ALNUM, 24)
        return f"https://hooks.slack.com/services/T{pick(rng, up, 10)}/B{pick(rng, up, 10)}/{token}", token
    if sort == "discord":
        token = pick(rng, URLSAFE, 68)
        return f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19 - 1)}/{token}", token
    if sort == "teams":
        token = pick(rng, HEX, 32)
        tenant, group_id = _uuid(rng), _uuid(rng)
        return (f"https://gridops.webhook.office.com/webhookb2/{group_id}@{tenant}/IncomingWebhook/{token}/"
                f"{_uuid(rng)}"), token
    if sort == "power_automate":
        token = pick(rng, URLSAFE, 43)
        return (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
                f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0"
                f"&sig={token}"), token
    if sort == "google_chat":
        token = pick(rng, URLSAFE, 43) + "%3D"
        return (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key={GCHAT_KEY}"
                f"&token={token}"), token
    if sort == "mattermost":
        token = pick(rng, LOWER + string.digits, 26)
        return f"https://chat.noc.example-utility.net/hooks/{token}", token
    if sort == "zapier":
        token = pick(rng, LOWER + string.digits, 7)
        return f"https://hooks.zapier.com/hooks/catch/{digits(rng, 7)}/{token}/", token
    if sort == "rocketchat":
        token = pick(rng, ALNUM, 48)
        return f"https://rocket.field-ops.net/hooks/{pick(rng, ALNUM, 17)}/{token}", token
    token = base64.b64encode(f"ciscospark://us/WEBHOOK/{_uuid(rng)}".encode()).decode().rstrip("=")
    return f"https://webexapis.com/v1/webhooks/incoming/{token}", token


WEBHOOK_SORTS = ["slack", "discord", "teams", "power_automate", "google_chat", "mattermost", "zapier", "rocketchat",
                 "webex"]
WEBHOOK_FORMS = [
    "receivers:\n- name: noc-critical\n  slack_configs:\n  - api_url: {u}\n    channel: '#noc'",
    "curl -X POST -H 'Content-Type: application/json' -d '{{\"text\":\"BGP down\"}}' {u}",
    "LibreNMS alert transport URL = {u}",
    "Zabbix media type 'NOC chat', webhook URL: {u}",
    "webhook_url: {u}",
    "post outage updates here → {u}",
    "Grafana contact point (webhook): {u}",
]


def v_webhook(rng: random.Random, i: int) -> Value:
    sort = WEBHOOK_SORTS[i % len(WEBHOOK_SORTS)]
    url, token = webhook_url(rng, sort)
    return sort, token, rng.choice(WEBHOOK_FORMS).format(u=url), False


# ---- Stripe ---------------------------------------------------------------------------------------------------

def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = "whsec_" + (pick(rng, HEX, 64) if i % 3 == 0 else pick(rng, ALNUM, 32))
    forms = [("env", f"STRIPE_WEBHOOK_SECRET={secret}"),
             ("cli", f"> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is "
                     f"{secret} (^C to quit)"),
             ("yaml", f"billing_portal:\n  stripe:\n    webhook_secret: {secret}"),
             ("code", f'event = stripe.Webhook.construct_event(payload, sig_header, "{secret}")'),
             ("labelled", f"Signing secret for the utility payments endpoint: {secret}")]
    if i % 5 == 4:
        code, text = reply(rng, L_SECRET, secret)
        return f"reply_{code}", secret, f"Stripe webhook — {text}", False
    style, text = rng.choice(forms)
    return style, secret, text, False


# ---- connection strings ---------------------------------------------------------------------------------------

def _uri_password(rng: random.Random) -> str:
    return pick(rng, ALNUM + "-_.~", rng.randint(14, 24))


def _sas_key(rng: random.Random, n: int = 32) -> str:
    return base64.b64encode(rng.randbytes(n)).decode()


def v_connection_string(rng: random.Random, i: int) -> Value:
    pw = _uri_password(rng)
    host = rng.choice(["hist01.ops.lan", "bss-db.internal", "10.40.2.15", "timescale.grid.local"])
    sort = i % 12
    if sort == 0:
        key = _sas_key(rng)
        return "iothub_device", key, (f"HostName=grid-meters.azure-devices.net;DeviceId=meter-gw-"
                                      f"{rng.randint(1, 999):03d};SharedAccessKey={key}"), False
    if sort == 1:
        key = _sas_key(rng)
        return "iothub_owner", key, (f"HostName=scada-hub.azure-devices.net;SharedAccessKeyName=iothubowner;"
                                     f"SharedAccessKey={key}"), False
    if sort == 2:
        key = _sas_key(rng)
        return "eventhubs", key, (f"Endpoint=sb://telemetry-ns.servicebus.windows.net/;SharedAccessKeyName="
                                  f"RootManageSharedAccessKey;SharedAccessKey={key};EntityPath=meter-readings"), False
    if sort == 3:
        key = _sas_key(rng, 64)
        return "storage", key, (f"DefaultEndpointsProtocol=https;AccountName=gisexports{rng.randint(1, 99)};"
                                f"AccountKey={key};EndpointSuffix=core.windows.net"), False
    if sort == 4:
        return "postgres_uri", pw, f"postgresql://historian:{pw}@{host}:5432/timeseries?sslmode=require", False
    if sort == 5:
        return "mongodb_srv", pw, f"mongodb+srv://oss_app:{pw}@cluster0.ab1cd.mongodb.net/inventory", False
    if sort == 6:
        return "adonet", pw, (f"Server=tcp:{host},1433;Database=PIArchive;User ID=pi_reader;Password={pw};"
                              f"Encrypt=True;"), False
    if sort == 7:
        return "oracle_jdbc", pw, f"jdbc:oracle:thin:bss_ro/{pw}@//{host}:1521/BSSPROD", False
    if sort == 8:
        return "amqp", pw, f"amqps://alarm-feed:{pw}@{host}:5671/%2Fnoc", False
    if sort == 9:
        return "mqtt_uri", pw, f"mqtts://meter-gw:{pw}@{host}:8883", False
    if sort == 10:
        return "redis", pw, f"redis://:{pw}@{host}:6379/0", False
    enc = quote(pw[:6] + "@" + pw[6:], safe="")
    return "uri_pct", enc, f"DATABASE_URL=postgres://gis_editor:{enc}@{host}/postgis", False


# ---- labelled keys --------------------------------------------------------------------------------------------

KEY_LABELS = [("pagerduty", "PagerDuty integration key: {v}", HEX, 32),
              ("datadog", "DD_API_KEY={v}", HEX, 32),
              ("opsgenie", "Opsgenie API key: {v}", "", 0),
              ("thingsboard", "ThingsBoard device access token: {v}", ALNUM, 20),
              ("here", "HERE Maps apiKey={v}", URLSAFE, 43),
              ("x_api_key", "X-API-Key: {v}", ALNUM, 40),
              ("openweather", "OpenWeather appid (outage forecast): {v}", HEX, 32),
              ("generic", "API key: {v}", ALNUM, 32),
              ("api_token", "api_token = {v}", URLSAFE, 40),
              ("de", "API-Schlüssel für das Störungsportal: {v}", ALNUM, 32),
              ("fr", "Clé API du portail fournisseur : {v}", HEX, 40),
              ("es", "clave de API del SCADA: {v}", ALNUM, 36)]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    style, tmpl, alphabet, n = KEY_LABELS[i % len(KEY_LABELS)]
    key = pick(rng, alphabet, n) if n else _uuid(rng)
    if i % 6 == 5:
        code, text = reply(rng, L_KEY, key)
        return f"reply_{code}", key, text, False
    return style, key, tmpl.format(v=key), False


# ---- disguised ------------------------------------------------------------------------------------------------

ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def _base_secret(rng: random.Random) -> str:
    return rng.choice([
        lambda: crc_token(rng, "ghp_"),
        lambda: f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}",
        lambda: "SG." + pick(rng, URLSAFE, 22) + "." + pick(rng, URLSAFE, 43),
        lambda: password_value(rng),
        lambda: pick(rng, B64, 40),
    ])()


def v_disguised(rng: random.Random, i: int) -> Value:
    base = _base_secret(rng)
    how = i % 4
    if how == 0:
        at = rng.randint(2, len(base) - 2)
        secret = base[:at] + rng.choice(ZW) + base[at:]
        return "zero_width", secret, f"token (copied from the vault UI): {secret}", False
    if how == 1:
        if rng.random() < 0.5:
            secret = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in base)
        else:
            cut = len(base) // 2
            secret = base[:cut] + "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in base[cut:])
        return "fullwidth", secret, f"パスワード／トークン：{secret}", False
    if how == 2:
        secret = "".join(f"%{ord(c):02X}" if rng.random() < 0.6 else c for c in base)
        return "percent", secret, f"GET /api/login?user=ops&secret={secret} HTTP/1.1", False
    secret = "".join(f"\\u{ord(c):04x}" if rng.random() < 0.5 else c for c in base)
    return "json_u", secret, f'request body={{"user":"noc","credential":"{secret}"}}', True


# ---- email ----------------------------------------------------------------------------------------------------

NAMES = ["maria.lopez", "j.okafor", "anil.sharma", "sophie.martin", "lukas.becker", "chloe.evans", "ahmed.saleh",
         "yuki.sato", "olga.ivanova", "priya.nair", "tom.whitfield", "fatima.zahra", "ines.moreau", "k.nowak",
         "mehmet.yilmaz", "nguyen.van.an", "sven.lindqvist", "giulia.rossi", "dmitri.k", "aisha.bello"]
MAIL_DOMAINS = ["gmail.com", "outlook.com", "yahoo.co.uk", "web.de", "gmx.de", "orange.fr", "free.fr",
                "rediffmail.com", "hotmail.com", "icloud.com", "proton.me", "t-online.de", "libero.it",
                "btinternet.com", "sky.com", "wanadoo.fr", "yahoo.co.in", "bigpond.com", "shaw.ca", "comcast.net"]
IDN_MAILS = ["josé.garcía@correo.es", "müller.jürgen@gmx.de", "δημήτρης@παράδειγμα.ελ", "用户.王@邮件.中国",
             "сергей@почта.рф", "राहुल@डाकघर.भारत", "françois.lefèvre@orange.fr"]
MAIL_FORMS = ["customer e-mail: {v}", "Kunden-E-Mail: {v}", "courriel du client : {v}", "correo del titular: {v}",
              "send the outage confirmation to {v}", "billing contact <{v}>", "Reply-To: {v}",
              "requester: {v} (site manager)", "notify_email={v}", "メール: {v}"]


def v_email(rng: random.Random, i: int) -> Value:
    if i % 10 == 9:
        addr = rng.choice(IDN_MAILS)
    else:
        name = rng.choice(NAMES)
        addr = f"{name}{rng.choice(['', str(rng.randint(1, 99))])}@{rng.choice(MAIL_DOMAINS)}"
    if i % 5 == 2:
        code, text = reply(rng, L_MAIL, addr)
        return f"reply_{code}", addr, text, False
    return "labelled", addr, rng.choice(MAIL_FORMS).format(v=addr), False


# ---- phones ---------------------------------------------------------------------------------------------------

PHONE_FRAMES = ["{c}: {n}", "{c} {n}", "{c}: {n} (after 17:00)", "on-site contact, {c} {n}", "{n} — {c}"]


def phone_case(rng: random.Random, forms: list[tuple[str, Callable[[random.Random], str]]],
               ctx: list[str]) -> Value:
    style, make = rng.choice(forms)
    number = make(rng)
    return style, number, rng.choice(PHONE_FRAMES).format(c=rng.choice(ctx), n=number), False


NPAS = ["212", "312", "415", "617", "713", "206", "303", "404", "503", "602", "702", "720", "813", "416", "604",
        "514", "403", "905", "613", "780"]


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    nxx = f"{rng.randint(2, 9)}{digits(rng, 2)}"
    while nxx[1:] == "11" or nxx == "555":
        nxx = f"{rng.randint(2, 9)}{digits(rng, 2)}"
    return rng.choice(NPAS), nxx, digits(rng, 4)


US_FORMS = [("paren", lambda r: "({}) {}-{}".format(*_nanp(r))),
            ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
            ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))),
            ("intl", lambda r: "+1 {} {} {}".format(*_nanp(r))),
            ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r)))]
US_CTX = ["callback number", "cell", "mobile", "phone", "best number to reach me", "text me at", "teléfono",
          "celular", "cellulaire", "téléphone"]


def _uk_block(rng: random.Random) -> str:
    block = rng.randint(200, 899)
    return str(497 if block == 496 else block)


def _uk_mobile(rng: random.Random) -> str:
    prefix = f"07{rng.choice('1234579')}{digits(rng, 2)}"
    return "07701" if prefix == "07700" else prefix


UK_FORMS = [("mobile", lambda r: f"{_uk_mobile(r)} {digits(r, 6)}"),
            ("london", lambda r: f"020 {r.choice('78')}{digits(r, 3)} {digits(r, 4)}"),
            ("manchester", lambda r: f"0161 {_uk_block(r)} {digits(r, 4)}"),
            ("birmingham", lambda r: f"0121 {_uk_block(r)} {digits(r, 4)}"),
            ("edinburgh", lambda r: f"0131 {_uk_block(r)} {digits(r, 4)}"),
            ("intl_mobile", lambda r: f"+44 {_uk_mobile(r)[1:]} {digits(r, 6)}"),
            ("intl_london", lambda r: f"+44 (0)20 {r.choice('78')}{digits(r, 3)} {digits(r, 4)}")]
UK_CTX = ["mobile", "phone", "contact number", "ring me on", "customer tel", "tel", "ffôn symudol", "rhif ffôn"]


def _fr_pairs(rng: random.Random, first: str) -> list[str]:
    """A French number after its 0 in pairs, off ARCEP's 06 39 98 block kept for fiction."""
    pairs = [first] + [digits(rng, 2) for _ in range(4)]
    if pairs[:3] == ["6", "39", "98"]:
        pairs[1] = "40"
    return pairs


def _fr(rng: random.Random, first: str, sep: str) -> str:
    pairs = _fr_pairs(rng, first)
    return "0" + pairs[0] + sep + sep.join(pairs[1:])


FR_FORMS = [("mobile_space", lambda r: _fr(r, r.choice("67"), " ")),
            ("mobile_dot", lambda r: _fr(r, r.choice("67"), ".")),
            ("geo_space", lambda r: _fr(r, r.choice("12345"), " ")),
            ("compact", lambda r: _fr(r, r.choice("1234567"), "")),
            ("intl", lambda r: "+33 " + " ".join(_fr_pairs(r, r.choice("67")))),
            ("intl_zero", lambda r: "+33 (0)" + " ".join(_fr_pairs(r, r.choice("12345"))))]
FR_CTX = ["portable", "téléphone", "tél.", "numéro de rappel", "joignable au", "contact sur site", "n° du client"]

DE_MOBILE = {"0151": 8, "0152": 8, "0157": 8, "0160": 7, "0170": 7, "0171": 7, "0172": 7, "0175": 7, "0176": 8,
             "0177": 7, "0179": 7}


def _de_mobile(rng: random.Random) -> tuple[str, str]:
    prefix = rng.choice(list(DE_MOBILE))
    return prefix, digits(rng, DE_MOBILE[prefix])


DE_FORMS = [("mobile", lambda r: "{} {}".format(*_de_mobile(r))),
            ("mobile_slash", lambda r: "{}/{}".format(*_de_mobile(r))),
            ("intl_mobile", lambda r: "+49 {} {}".format(*_de_mobile(r)).replace("+49 0", "+49 ")),
            ("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
            ("munich", lambda r: f"089 {r.randint(2, 9)}{digits(r, 6)}"),
            ("cologne", lambda r: f"(0221) {r.randint(2, 9)}{digits(r, 6)}"),
            ("intl_geo", lambda r: f"+49 (0)40 {r.randint(2, 9)}{digits(r, 7)}")]
DE_CTX = ["Handy", "Mobilnummer", "Telefon", "Rückrufnummer", "Tel.", "Kontakt vor Ort", "erreichbar unter"]

IN_FORMS = [("intl_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
            ("intl_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}"),
            ("zero", lambda r: f"0{r.choice('6789')}{digits(r, 9)}"),
            ("plain", lambda r: f"{r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
            ("delhi", lambda r: f"011-2{digits(r, 7)}"),
            ("mumbai", lambda r: f"022-2{digits(r, 7)}"),
            ("bengaluru", lambda r: f"080-2{digits(r, 7)}")]
IN_CTX = ["mobile no.", "contact number", "phone", "WhatsApp", "मोबाइल नंबर", "फ़ोन नंबर", "தொலைபேசி", "ফোন নম্বর",
          "మొబైల్ నంబర్"]


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    return phone_case(rng, US_FORMS, US_CTX)


def v_phone_uk(rng: random.Random, i: int) -> Value:
    return phone_case(rng, UK_FORMS, UK_CTX)


def v_phone_fr(rng: random.Random, i: int) -> Value:
    return phone_case(rng, FR_FORMS, FR_CTX)


def v_phone_de(rng: random.Random, i: int) -> Value:
    return phone_case(rng, DE_FORMS, DE_CTX)


def v_phone_in(rng: random.Random, i: int) -> Value:
    return phone_case(rng, IN_FORMS, IN_CTX)


# ---- SSN, cards, IBANs ----------------------------------------------------------------------------------------

def ssn_value(rng: random.Random) -> tuple[str, str, str]:
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


SSN_FORMS = ["SSN: {v}", "Social Security number {v} (credit check for deposit waiver)", "SS# {v}",
             "número de Seguro Social: {v}", "applicant SSN={v}", "verify identity — SSN {v}, DOB on file"]


def v_ssn(rng: random.Random, i: int) -> Value:
    parts = ssn_value(rng)
    style = ["dashed", "spaced", "compact"][i % 3]
    value = {"dashed": "-".join(parts), "spaced": " ".join(parts), "compact": "".join(parts)}[style]
    return style, value, rng.choice(SSN_FORMS).format(v=value), False


CARD_BRANDS = ["visa", "mc", "mc2", "amex", "discover", "discover65", "jcb", "diners", "unionpay"]


def card_number(rng: random.Random, brand: str) -> str:
    """A number in the brand's IIN range and length, completed with its Luhn digit."""
    head, length = {
        "visa": ("4", 16), "mc": (str(rng.randint(51, 55)), 16), "mc2": (str(rng.randint(2221, 2720)), 16),
        "amex": (rng.choice(["34", "37"]), 15), "discover": ("6011", 16), "discover65": ("65", 16),
        "jcb": (str(rng.randint(3528, 3589)), 16), "diners": ("36", 14), "unionpay": ("62", 16)}[brand]
    body = head + digits(rng, length - len(head) - 1)
    return body + luhn_digit(body)


CARD_CTX = ["Card number", "card on file for the payment plan", "Kartennummer", "numéro de carte",
            "número de tarjeta", "cartão", "carta di credito", "pay by card:"]


def v_card(rng: random.Random, i: int) -> Value:
    brand = CARD_BRANDS[i % len(CARD_BRANDS)]
    number = card_number(rng, brand)
    shown = group_card(number, rng.choice([" ", "-", ""]))
    if i % 7 == 6:
        code, text = reply(rng, L_CARD, shown)
        return f"reply_{code}", shown, text, False
    return brand, shown, f"{rng.choice(CARD_CTX)} {shown} exp {rng.randint(1, 12):02d}/{rng.randint(27, 31)}", False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
             "NL": "4a10n", "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "PT": "4n4n11n2n",
             "IE": "4a6n8n", "SE": "3n16n1n", "NO": "4n6n1n", "DK": "4n9n1n", "FI": "3n11n", "SA": "2n18c",
             "AE": "3n16n", "TR": "5n1n16c", "BR": "8n5n10n1a1c"}
IBAN_CTX = ["IBAN", "Bankverbindung für die Lastschrift", "IBAN pour le prélèvement", "cuenta IBAN",
            "conto IBAN per l'addebito", "rekeningnummer (IBAN)", "SEPA mandate, debtor IBAN", "IBAN:"]


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    body = bban(rng, IBAN_BBAN[country])
    compact = country + iban_check(country, body) + body
    shown = group(compact, 4, " ") if i % 2 == 0 else compact
    if i % 6 == 5:
        code, text = reply(rng, L_IBAN, shown)
        return f"reply_{code}", shown, text, False
    return country, shown, f"{rng.choice(IBAN_CTX)} {shown}", False


# ---- tokens: JWT, headers, cookies, OAuth ---------------------------------------------------------------------

def jwt_value(rng: random.Random) -> str:
    """A JWS compact JWT (RFC 7515/7519): b64url header and claims, a signature of the algorithm's length."""
    alg, sig_len = rng.choice([("RS256", 256), ("ES256", 64), ("HS256", 32), ("PS256", 256)])
    header = {"alg": alg, "typ": "JWT", "kid": pick(rng, URLSAFE, 22)}
    iat = rng.randint(1_760_000_000, 1_790_000_000)
    claims = {"iss": "https://sso.ops.lan/realms/noc", "sub": _uuid(rng), "aud": rng.choice(["oss-api", "onap"]),
              "iat": iat, "exp": iat + 3600, "scope": "alarms:read workorders:write"}
    return ".".join([b64url(_dump(header).encode()), b64url(_dump(claims).encode()), b64url(rng.randbytes(sig_len))])


def v_jwt(rng: random.Random, i: int) -> Value:
    token = jwt_value(rng)
    forms = [("bearer", f"Authorization: Bearer {token}"), ("json", f'"access_token": "{token}"'),
             ("cookie", f"Cookie: kc_access={token}"), ("kubectl", f"kubectl --token={token} get pods -n oss"),
             ("curl", f"curl -H 'Authorization: Bearer {token}' https://onap.ops.lan/aai/v24/network/pnfs"),
             ("labelled", f"JWT for the ORAN SMO API: {token}")]
    style, text = forms[i % len(forms)]
    return style, token, text, False


def fernet_token(rng: random.Random) -> str:
    """A Keystone Fernet token: version 0x80, 8-byte timestamp, 16-byte IV, AES-CBC blocks, 32-byte HMAC, base64url
    with the padding stripped as Keystone strips it."""
    raw = (b"\x80" + rng.randint(1_760_000_000, 1_790_000_000).to_bytes(8, "big") + rng.randbytes(16)
           + rng.randbytes(16 * rng.randint(4, 8)) + rng.randbytes(32))
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def v_auth_header(rng: random.Random, i: int) -> Value:
    sort = i % 4
    if sort == 0:
        cred = base64.b64encode(f"{rng.choice(['noc', 'oss_api', 'meterread'])}:{password_value(rng)}".encode())
        value = cred.decode()
        return "basic", value, f"Authorization: Basic {value}", False
    if sort == 1:
        value = pick(rng, URLSAFE, rng.randint(32, 48))
        return "bearer", value, f"GET /api/v2/outages HTTP/1.1\nAuthorization: Bearer {value}", False
    if sort == 2:
        value = pick(rng, HEX, 32)
        return "digest", value, (f'Authorization: Digest username="ems", realm="NE40E", nonce="{pick(rng, HEX, 16)}",'
                                 f' uri="/restconf/data", qop=auth, nc=00000001, cnonce="{pick(rng, HEX, 8)}", '
                                 f'response="{value}"'), False
    value = fernet_token(rng)
    return "keystone", value, f"X-Auth-Token: {value}", False


def v_session_cookie(rng: random.Random, i: int) -> Value:
    sort = i % 6
    if sort == 0:
        value = pick(rng, HEX.upper(), 32)
        return "jsessionid", value, f"Set-Cookie: JSESSIONID={value}; Path=/arsys; Secure; HttpOnly", False
    if sort == 1:
        value = pick(rng, HEX, 32)
        return "glide", value, f"Cookie: glide_session_store={value}; glide_user_route=glide.{pick(rng, HEX, 8)}", False
    if sort == 2:
        value = pick(rng, HEX, 32)
        return "grafana", value, f"Cookie: grafana_session={value}", False
    if sort == 3:
        value = pick(rng, LOWER + string.digits, 26)
        return "phpsessid", value, f"Set-Cookie: PHPSESSID={value}; path=/; HttpOnly", False
    if sort == 4:
        value = pick(rng, "abcdefghijklmnopqrstuvwxyz012345", 24)
        return "aspnet", value, f"Cookie: ASP.NET_SessionId={value}", False
    value = "s%3A" + pick(rng, URLSAFE, 32) + "." + pick(rng, ALNUM + "%", 43)
    return "connect_sid", value, f"set-cookie: connect.sid={value}; Path=/; HttpOnly; SameSite=Lax", False


def v_oauth_token(rng: random.Random, i: int) -> Value:
    sort = i % 4
    if sort == 0:
        value = "1//0" + pick(rng, URLSAFE, 99)
        return "google_refresh", value, (f"POST /token body: grant_type=refresh_token&refresh_token={value}"
                                         f"&client_id={digits(rng, 12)}-gis.apps.googleusercontent.com"), False
    if sort == 1:
        value = "ya29." + pick(rng, URLSAFE, 150)
        body = _dump({"access_token": value, "expires_in": 3599, "token_type": "Bearer"})
        return "google_access", value, body, False
    if sort == 2:
        value = f"00D{pick(rng, ALNUM, 12)}!AQ{pick(rng, ALNUM, 4)}.{pick(rng, ALNUM + '._', 90)}"
        return "salesforce", value, f"Field Service sync: sf access token {value}", False
    value = pick(rng, URLSAFE, 64)
    return "refresh", value, f"refresh_token: {value}", False


# ---- keys: private, TOTP, providers ---------------------------------------------------------------------------

def _pem_wrap(label: str, blob: bytes) -> str:
    body = base64.b64encode(blob).decode()
    return f"-----BEGIN {label}-----\n" + "\n".join(body[i:i + 70] for i in range(0, len(body), 70)) + \
        f"\n-----END {label}-----"


def private_key_pem(rng: random.Random, sort: int) -> str:
    """A real key drawn from the generator: EC SEC1, EC PKCS#8 or an OpenSSH Ed25519 key."""
    if sort == 2:
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
        check = rng.randbytes(4)
        return _pem_wrap("OPENSSH PRIVATE KEY", openssh_ed25519_blob(seed, public, check, b"fieldtech@laptop"))
    curve = rng.choice([ec.SECP256R1(), ec.SECP384R1()])
    key = ec.derive_private_key(rng.getrandbits(curve.key_size - 1) + 1, curve)
    fmt = serialization.PrivateFormat.TraditionalOpenSSL if sort == 0 else serialization.PrivateFormat.PKCS8
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()


def v_private_key(rng: random.Random, i: int) -> Value:
    pem = private_key_pem(rng, i % 3)
    forms = [("opcua_pki", f"$ cat pki/own/private/opcua-client.pem\n{pem}"),
             ("netconf", f"netconf client key (ncclient, key_filename replaced by inline):\n{pem}"),
             ("ssh_cat", f"$ cat ~/.ssh/id_ed25519\n{pem}"), ("gnmi_tls", f"tls_key: |\n{pem}"),
             ("pasted", f"here is the device cert key you asked for:\n{pem}")]
    style, text = forms[i % len(forms)]
    return style, pem, text, False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = base64.b32encode(rng.randbytes(rng.choice([10, 20]))).decode().rstrip("=")
    sort = i % 4
    if sort == 0:
        return "otpauth", seed, (f"otpauth://totp/GridOps%20VPN:fieldtech{rng.randint(1, 99)}?secret={seed}"
                                 f"&issuer=GridOps%20VPN&algorithm=SHA1&digits=6&period=30"), False
    if sort == 1:
        shown = group(seed, 4, " ")
        return "grouped", shown, f"Can't scan the QR code? Enter this key manually: {shown}", False
    if sort == 2:
        return "labelled", seed, f"MFA seed for the SCADA jump host: {seed}", False
    code, text = reply(rng, L_SECRET, seed)
    return f"reply_{code}", seed, f"2FA/TOTP — {text}", False


PROVIDERS: dict[str, Callable[[random.Random], str]] = {
    "sendgrid": lambda r: "SG." + pick(r, URLSAFE, 22) + "." + pick(r, URLSAFE, 43),
    "gitlab": lambda r: "glpat-" + pick(r, URLSAFE, 20),
    "github": lambda r: crc_token(r, "ghp_"),
    "npm": lambda r: crc_token(r, "npm_"),
    "slack_bot": lambda r: f"xoxb-{digits(r, 12)}-{digits(r, 13)}-{pick(r, ALNUM, 24)}",
    "openai": lambda r: "sk-" + pick(r, ALNUM, 20) + "T3BlbkFJ" + pick(r, ALNUM, 20),
    "openai_proj": lambda r: "sk-proj-" + pick(r, URLSAFE, 74) + "T3BlbkFJ" + pick(r, URLSAFE, 74),
    "anthropic": lambda r: "sk-ant-api03-" + pick(r, URLSAFE, 93) + "AA",
    "huggingface": lambda r: "hf_" + pick(r, string.ascii_letters, 34),
    "google_api": lambda r: "AIza" + pick(r, URLSAFE, 35),
    "tailscale": lambda r: f"tskey-auth-{pick(r, ALNUM, 12)}CNTRL-{pick(r, ALNUM, 33)}",
    "vault": lambda r: "hvs." + pick(r, URLSAFE, 91),
    "digitalocean": lambda r: "dop_v1_" + pick(r, HEX, 64),
    "postman": lambda r: f"PMAK-{pick(r, HEX, 24)}-{pick(r, HEX, 34)}",
}
PROVIDER_LEADS = ["{e}={v}", "export {e}={v}", '"{l}": "{v}"', "token: {v}", "{v}", "use {v} for the alert bot",
                  "--auth-key={v}"]
PROVIDER_ENV = {"sendgrid": "SENDGRID_API_KEY", "gitlab": "GITLAB_TOKEN", "github": "GITHUB_TOKEN",
                "npm": "NPM_TOKEN", "slack_bot": "SLACK_BOT_TOKEN", "openai": "OPENAI_API_KEY",
                "openai_proj": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "huggingface": "HF_TOKEN",
                "google_api": "GOOGLE_MAPS_API_KEY", "tailscale": "TS_AUTHKEY", "vault": "VAULT_TOKEN",
                "digitalocean": "DIGITALOCEAN_TOKEN", "postman": "POSTMAN_API_KEY"}


def v_provider_key(rng: random.Random, i: int) -> Value:
    sort = list(PROVIDERS)[i % len(PROVIDERS)]
    token = PROVIDERS[sort](rng)
    env = PROVIDER_ENV[sort]
    lead = rng.choice(PROVIDER_LEADS)
    return sort, token, lead.format(e=env, l=env.lower(), v=token), False


# ---- network and device secrets -------------------------------------------------------------------------------

J9_FAMILY = ["QzF3n6/9CAtpu0O", "B1IREhcSyrleKvMW8LXx", "7N-dVbwsY2g4oaJZGUDj", "iHkq.mPf5T"]
J9_ALPHA = "".join(J9_FAMILY)
J9_EXTRA = {ch: 3 - n for n, fam in enumerate(J9_FAMILY) for ch in fam}
J9_ENCODING = [[1, 4, 32], [1, 16, 32], [1, 8, 32], [1, 64], [1, 32], [1, 4, 16, 128], [1, 32, 64]]


def junos9(rng: random.Random, plain: str) -> str:
    """Junos's reversible `$9$` form of `plain`: a salt, its filler characters, then each character as gaps
    along the 65-character alphabet (the published junos decoder run backwards)."""
    salt = rng.choice(J9_ALPHA)
    out, prev = "$9$" + salt + pick(rng, J9_ALPHA, J9_EXTRA[salt]), salt
    for pos, ch in enumerate(plain):
        code, gaps = ord(ch), []
        for mod in reversed(J9_ENCODING[pos % len(J9_ENCODING)]):
            gaps.insert(0, code // mod)
            code %= mod
        for gap in gaps:
            prev = J9_ALPHA[(gap + J9_ALPHA.index(prev) + 1) % len(J9_ALPHA)]
            out += prev
    return out


def _net_secret(rng: random.Random) -> str:
    return rng.choice([
        lambda: f"{rng.choice(WORDS)}{rng.choice('-_!#')}{digits(rng, 4)}{pick(rng, UPPER, 2)}",
        lambda: pick(rng, ALNUM, rng.randint(12, 24)),
        lambda: pick(rng, ALNUM + "!#%&*+-=?@^_", rng.randint(10, 20)),
    ])()


def v_snmp_secret(rng: random.Random, i: int) -> Value:
    s = _net_secret(rng)
    forms = [("junos", f'set snmp community "{s}" authorization read-only'),
             ("junos_v3", f'set snmp v3 usm local-engine user nms authentication-sha256 authentication-password "{s}"'),
             ("vrp", f"snmp-agent community read {s} acl 2001"),
             ("sros", f'community "{s}" access-permissions r version both'),
             ("routeros", f"/snmp community add name={s} addresses=10.0.0.0/8 read-access=yes"),
             ("snmpd_conf", f"rocommunity {s} 10.0.0.0/8"),
             ("snmpd_v3", f'createUser nms SHA-256 "{s}" AES'),
             ("snmpwalk", f"snmpwalk -v2c -c {s} 10.30.1.1 1.3.6.1.2.1.2.2.1.8"),
             ("snmpget_v3", f"snmpget -v3 -l authNoPriv -u nms -a SHA -A '{s}' 10.30.1.1 sysUpTime.0"),
             ("labelled", f"SNMP community (RO) for the substation RTUs: {s}")]
    style, text = forms[i % len(forms)]
    return style, s, text, False


def v_shared_secret(rng: random.Random, i: int) -> Value:
    s = _net_secret(rng)
    ip = _ip(rng)
    forms = [("freeradius", f"client bng-{rng.randint(1, 9)} {{\n    ipaddr = {ip}\n    secret = {s}\n}}"),
             ("tac_plus", f'key = "{s}"'),
             ("junos_radius", f'set system radius-server {ip} secret "{s}"'),
             ("vrp_radius", f"radius-server shared-key cipher {s}"),
             ("vrp_hwtacacs", f"hwtacacs-server shared-key cipher {s}"),
             ("routeros", f"/radius add address={ip} secret={s} service=ppp,login"),
             ("sros_radius", f'radius server 1 address {ip} secret "{s}"'),
             ("bgp_md5", f'set protocols bgp group transit neighbor 198.51.100.{rng.randint(1, 254)} '
                         f'authentication-key "{s}"'),
             ("labelled", f"RADIUS shared secret for the new NAS: {s}")]
    if i % 5 == 4:
        enc = junos9(rng, s)
        return "junos_9", enc, f'set system tacplus-server {ip} secret "{enc}"; ## SECRET-DATA', False
    style, text = rng.choice(forms)
    return style, s, text, False


def wifi_psk_value(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return pick(rng, HEX, 64)
    return rng.choice([lambda: pick(rng, ALNUM + "!#%&*+-=?@^_", rng.randint(10, 24)),
                       lambda: f"{rng.choice(WORDS)}{digits(rng, 4)}{rng.choice(WORDS)}{rng.choice('!#-_')}"])()


def v_wifi_psk(rng: random.Random, i: int) -> Value:
    psk = wifi_psk_value(rng)
    ssid = f"{_site(rng)}-MAINT"
    forms = [("routeros", f"/interface wireless security-profiles add name=maint mode=dynamic-keys "
                          f"authentication-types=wpa2-psk wpa2-pre-shared-key={psk}"),
             ("hostapd", f"ssid={ssid}\nwpa=2\nwpa_key_mgmt=WPA-PSK\nwpa_passphrase={psk}"),
             ("wpa_supplicant", f'network={{\n    ssid="{ssid}"\n    psk="{psk}"\n}}'),
             ("work_order", f"Site Wi-Fi {ssid}, WPA2 key {psk}"),
             ("qr", f"WIFI:T:WPA;S:{ssid};P:{psk};;")]
    if len(psk) == 64:
        return "wpa_supplicant_hex", psk, f'network={{\n    ssid="{ssid}"\n    psk={psk}\n}}', False
    if i % 4 == 3:
        code, text = reply(rng, L_WIFI, psk)
        return f"reply_{code}", psk, text, False
    style, text = rng.choice(forms)
    return style, psk, text, False


def _iccid(rng: random.Random) -> str:
    body = "8988211" + digits(rng, 11)
    return body + luhn_digit(body)


def v_device_key(rng: random.Random, i: int) -> Value:
    sort = i % 6
    imsi = f"00101{digits(rng, 10)}"
    if sort in (0, 1, 2):
        ki = pick(rng, HEX.upper() if sort == 0 else HEX, 32)
        forms = [("sim_batch", f"ICCID,IMSI,KI,ACC\n{_iccid(rng)},{imsi},{ki},{rng.randint(1, 512):04X}"),
                 ("osmo_hlr", f"subscriber imsi {imsi} update aud2g comp128v1 ki {ki}"),
                 ("open5gs", f'"security": {{"k": "{ki}", "amf": "8000", "opc": "<kept in HSM>"}}')]
        style, text = forms[sort]
        return style, ki, text, False
    if sort == 3:
        key = pick(rng, HEX.upper(), 32)
        return "lorawan_appkey", key, (f"ttn-lw-cli end-devices create meters m-{rng.randint(1, 9999)} --dev-eui "
                                       f"70B3D57ED00{pick(rng, HEX.upper(), 5)} --join-eui 0000000000000000 "
                                       f"--root-keys.app-key.key {key}"), False
    if sort == 4:
        mid = "-".join(pick(rng, UPPER + string.digits, 5) for _ in range(4))
        return "esim_activation", mid, f"eSIM activation code: LPA:1$smdp.ops-mno.example${mid}", False
    puk = digits(rng, 8)
    return "sim_puk", puk, f"SIM {_iccid(rng)} blocked; PUK1: {puk}", False


# ---- national ids (outside the target) ------------------------------------------------------------------------

def fr_nir(rng: random.Random) -> str:
    """French NIR: sex, year, month, department, commune, order, key = 97 - (13 digits mod 97)."""
    body = (f"{rng.randint(1, 2)}{rng.randint(0, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 95):02d}"
            f"{rng.randint(1, 999):03d}{rng.randint(1, 999):03d}")
    key = 97 - int(body) % 97
    return f"{body[0]} {body[1:3]} {body[3:5]} {body[5:7]} {body[7:10]} {body[10:]} {key:02d}"


def _birth(rng: random.Random) -> tuple[int, int, int]:
    return rng.randint(1940, 2005), rng.randint(1, 12), rng.randint(1, 28)


def se_pnr(rng: random.Random) -> str:
    """Swedish personnummer YYMMDD-NNNC, C the Luhn digit of the nine before it."""
    y, m, d = _birth(rng)
    body = f"{y % 100:02d}{m:02d}{d:02d}{rng.randint(0, 999):03d}"
    return f"{body[:6]}-{body[6:]}{luhn_digit(body)}"


def fi_hetu(rng: random.Random) -> str:
    """Finnish henkilötunnus DDMMYY, century sign, individual number 002-899, mod 31 check character."""
    y, m, d = _birth(rng)
    ind = rng.randint(2, 899)
    check = "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(f"{d:02d}{m:02d}{y % 100:02d}{ind:03d}") % 31]
    return f"{d:02d}{m:02d}{y % 100:02d}{'-' if y < 2000 else 'A'}{ind:03d}{check}"


def no_fnr(rng: random.Random) -> str:
    """Norwegian fødselsnummer: DDMMYY, individual number, two mod 11 check digits (redrawn when one is 10)."""
    while True:
        y, m, d = _birth(rng)
        ind = rng.randint(0, 499) if y < 2000 else rng.randint(500, 999)
        base = [int(c) for c in f"{d:02d}{m:02d}{y % 100:02d}{ind:03d}"]
        k1 = (11 - sum(w * x for w, x in zip([3, 7, 6, 1, 8, 9, 4, 5, 2], base, strict=True)) % 11) % 11
        k2 = (11 - sum(w * x for w, x in zip([5, 4, 3, 2, 7, 6, 5, 4, 3, 2], base + [k1], strict=True)) % 11) % 11
        if k1 < 10 and k2 < 10:
            return "".join(map(str, base + [k1, k2]))


def cn_rid(rng: random.Random) -> str:
    """Chinese resident id: region, YYYYMMDD, sequence, ISO 7064 MOD 11-2 check (X for 10)."""
    y, m, d = _birth(rng)
    body = f"{rng.choice(['110101', '310104', '440305', '510107'])}{y}{m:02d}{d:02d}{rng.randint(1, 999):03d}"
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    return body + "10X98765432"[sum(w * int(c) for w, c in zip(weights, body, strict=True)) % 11]


def za_id(rng: random.Random) -> str:
    """South African id: YYMMDD, gender sequence, citizenship, 8, Luhn digit."""
    y, m, d = _birth(rng)
    body = f"{y % 100:02d}{m:02d}{d:02d}{rng.randint(0, 9999):04d}{rng.randint(0, 1)}8"
    return body + luhn_digit(body)


def br_cpf(rng: random.Random) -> str:
    """Brazilian CPF: nine digits and two mod 11 check digits, printed 000.000.000-00."""
    nums = [rng.randint(0, 9) for _ in range(9)]
    for n in (10, 11):
        total = sum(w * x for w, x in zip(range(n, 1, -1), nums, strict=True))
        nums.append(total * 10 % 11 % 10)
    s = "".join(map(str, nums))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


def pl_pesel(rng: random.Random) -> str:
    """Polish PESEL: YYMMDD (month + 20 after 2000), serial, check digit by weights 1-3-7-9."""
    y, m, d = _birth(rng)
    body = f"{y % 100:02d}{m + (20 if y >= 2000 else 0):02d}{d:02d}{rng.randint(0, 9999):04d}"
    total = sum(w * int(c) for w, c in zip([1, 3, 7, 9, 1, 3, 7, 9, 1, 3], body, strict=True))
    return body + str((10 - total % 10) % 10)


NATIONAL: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "fr_nir": (fr_nir, ["numéro de sécurité sociale", "NIR", "n° SS du titulaire"]),
    "se_pnr": (se_pnr, ["personnummer", "pnr", "kundens personnummer"]),
    "fi_hetu": (fi_hetu, ["henkilötunnus", "hetu", "asiakkaan henkilötunnus"]),
    "no_fnr": (no_fnr, ["fødselsnummer", "fnr", "kundens fødselsnummer"]),
    "cn_rid": (cn_rid, ["身份证号", "居民身份证", "证件号码"]),
    "za_id": (za_id, ["ID number", "SA ID no.", "RSA identity number"]),
    "br_cpf": (br_cpf, ["CPF", "CPF do titular", "nº do CPF"]),
    "pl_pesel": (pl_pesel, ["PESEL", "nr PESEL", "PESEL klienta"]),
}


def national(kind: str) -> Callable[[random.Random, int], Value]:
    make, labels = NATIONAL[kind]

    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        text = rng.choice(["{l}: {v}", "{l} {v} (verified for account opening)", "new connection — {l} {v}"])
        return "labelled", value, text.format(l=rng.choice(labels), v=value), False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "auth_header": v_auth_header, "session_cookie": v_session_cookie, "oauth_token": v_oauth_token,
    "private_key": v_private_key, "totp_seed": v_totp_seed, "provider_key": v_provider_key,
    "snmp_secret": v_snmp_secret, "shared_secret": v_shared_secret, "wifi_psk": v_wifi_psk,
    "device_key": v_device_key,
    **{kind: national(kind) for kind in NATIONAL},
}


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, deterministic."""
    rng = random.Random(SEED)
    for kind, gen in KINDS.items():
        for i in range(PER_KIND):
            value = gen(rng, i)
            carrier, text, is_json = carry(rng, i, value)
            yield Case(kind, f"{carrier}/{value[0]}", value[1], text, is_json)


# ---- near misses ----------------------------------------------------------------------------------------------

def _luhn_invalid(rng: random.Random) -> str:
    body = "4" + digits(rng, 14)
    return body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)


def _toll_free(rng: random.Random) -> str:
    return rng.choice([
        lambda: f"1-800-{rng.randint(200, 999)}-{digits(rng, 4)}",
        lambda: f"1-888-{rng.randint(200, 999)}-{digits(rng, 4)}",
        lambda: f"0800 {digits(rng, 3)} {digits(rng, 4)}",
        lambda: f"0 800 {digits(rng, 2)} {digits(rng, 2)} {digits(rng, 2)}",
        lambda: f"1800-{digits(rng, 3)}-{digits(rng, 4)}",
    ])()


FIRMWARE = ["junos-vmhost-install-mx-x86-64-23.4R1.9.tgz", "TiMOS-SR-24.3.R1.zip", "routeros-7.14.3-arm64.npk",
            "NE40E-V800R021C10SPC100.cc", "rtu560-fw-13.5.2.bin"]

SERVICE_LINES = ["Gas emergency line", "Power outage hotline", "Fibre support", "Water leak line"]

NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "cell_ids": lambda r: (f"ECGI 001-01-{r.getrandbits(28):07X} TAC 0x{r.getrandbits(16):04X} PCI "
                           f"{r.randint(0, 503)} EARFCN {r.randint(0, 65535)} RSRP -{r.randint(70, 120)} dBm"),
    "charging_ids": lambda r: (f"Charging-ID 0x{r.getrandbits(32):08X} CC-Request-Number {r.randint(0, 40)} "
                               f"Rating-Group {r.randint(1, 999)} Result-Code 2001"),
    "snmp_oids": lambda r: (f"IF-MIB::ifHCInOctets.{r.randint(1, 600)} = Counter64: {r.randint(0, 10 ** 15)} "
                            f"(1.3.6.1.2.1.31.1.1.1.6.{r.randint(1, 600)})"),
    "interfaces_asn": lambda r: (f"ge-{r.randint(0, 5)}/{r.randint(0, 3)}/{r.randint(0, 47)}.{r.randint(1, 4094)} "
                                 f"in ae{r.randint(0, 31)}, AS{r.randint(64512, 65534)} RD "
                                 f"{r.randint(64512, 65534)}:{r.randint(1, 9999)}"),
    "doc_addresses": lambda r: (f"neighbor 198.51.100.{r.randint(1, 254)} peer-as {r.randint(64512, 65534)}; "
                                f"loopback 192.0.2.{r.randint(1, 254)}/32; v6 2001:db8:{r.randint(0, 65535):x}::1/128"),
    "modbus_registers": lambda r: (f"modbus unit={r.randint(1, 247)} fc=0x03 addr={r.randint(40001, 49999)} "
                                   f"qty={r.randint(1, 20)} -> {[r.randint(0, 65535) for _ in range(4)]} "
                                   f"crc=0x{r.getrandbits(16):04X}"),
    "opcua_nodeids": lambda r: (f"ns={r.randint(1, 6)};s=Plant{r.randint(1, 9)}.Line{r.randint(1, 9)}.Pump"
                                f"{r.randint(1, 40):02d}.FlowRate StatusCode=Good (0x00000000) ns=3;i="
                                f"{r.randint(1000, 99999)}"),
    "obis_readings": lambda r: (f"1-0:1.8.0*255({r.randint(0, 999999):06d}.{r.randint(0, 999):03d}*kWh) "
                                f"1-0:32.7.0({r.uniform(215, 245):.1f}*V) 0-0:1.0.0({r.randint(10, 28)}0304101500W)"),
    "historian_tags": lambda r: (f"FIC-{r.randint(1000, 9999)}.PV,{_ts(r)},{r.uniform(0, 900):.3f},Good,"
                                 f"Interpolated,step={r.choice([1, 5, 60])}s"),
    "mqtt_topics": lambda r: (f"spBv1.0/Grid{r.randint(1, 9)}/DDATA/RTU-{r.randint(1, 99):02d}/Breaker"
                              f"{r.randint(1, 12)} qos=1 retain=false"),
    "coordinates": lambda r: (f"POINT({r.uniform(-120, 30):.6f} {r.uniform(20, 60):.6f}) EPSG:4326; UTM 32N "
                              f"E {r.randint(300000, 700000)} N {r.randint(5000000, 6000000)}"),
    "firmware_hashes": lambda r: (f"SHA256 ({r.choice(FIRMWARE)}) = {hashlib.sha256(r.randbytes(16)).hexdigest()}"),
    "versions": lambda r: (f"JUNOS {r.randint(21, 24)}.{r.randint(1, 4)}R{r.randint(1, 3)}.{r.randint(1, 12)}, "
                           f"SR OS {r.randint(22, 25)}.{r.choice([3, 7, 10])}.R{r.randint(1, 4)}, RouterOS 7."
                           f"{r.randint(10, 16)}.{r.randint(0, 3)}, VRP V800R0{r.randint(19, 23)}C10SPC"
                           f"{r.randint(1, 9)}00"),
    "ticket_numbers": lambda r: (f"INC{r.randint(10 ** 6, 10 ** 7):07d} / CHG{r.randint(10 ** 6, 10 ** 7):07d} / "
                                 f"WO-{r.randint(100000, 999999)} / Remedy INC{r.randint(10 ** 11, 10 ** 12):012d} / "
                                 f"sys_id {pick(r, HEX, 32)}"),
    "order_tracking": lambda r: (f"PO {r.choice(['45', '46'])}{digits(r, 8)}, RMA-{r.randint(10000, 99999)}, UPS 1Z"
                                 f"{pick(r, UPPER + string.digits, 6)}{digits(r, 10)}, FedEx {digits(r, 12)}"),
    "trace_ids": lambda r: (f"traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01 X-Request-ID: {_uuid(r)}"),
    "cache_busting": lambda r: (f"/static/js/outage-map.{pick(r, HEX, 8)}.js?v={r.randint(10 ** 9, 2 * 10 ** 9)} "
                                f"main.{pick(r, HEX, 20)}.css"),
    "ui_selectors": lambda r: (r.choice(["#sys_display\\.incident\\.assigned_to", "div.map-canvas",
                                         "//table[@id='outage_list']/tbody/tr"]) + f"[{r.randint(1, 30)}] "
                               f"width: {r.randint(200, 1920)}px; height: {r.randint(100, 1080)}px; tile 256px"),
    "csrf_field_names": lambda r: r.choice(['<input type="hidden" name="sysparm_ck" value="">',
                                            "header name X-CSRF-Token (sent by the portal)",
                                            'form field "__RequestVerificationToken" is missing',
                                            "csrf_token cookie name configured as csrftoken"]) +
                                  f" (form {r.randint(1, 99)})",
    "masked_values": lambda r: r.choice([f"password ******** (len {r.randint(8, 20)})",
                                         f"community <redacted> on RTU-{r.randint(1, 99)}",
                                         f"card **** **** **** {digits(r, 4)}", f"SSN ***-**-{digits(r, 4)}",
                                         f"IBAN DE** **** **** **** **{digits(r, 2)} {digits(r, 2)}",
                                         "Ki: " + "*" * 32]),
    "placeholders": lambda r: r.choice(["{{ vault_snmp_community }}", "${RADIUS_SECRET}", "<YOUR_API_KEY>",
                                        "password: CHANGE_ME_BEFORE_DEPLOY", "e-mail hint: you@example.com",
                                        "secret=********", "AppKey: <from LNS console>"]) + f" #{r.randint(1, 99)}",
    "aws_example_keys": lambda r: r.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                                            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                            "e.g. AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"]) +
                                  f" (docs sample {r.randint(1, 9)})",
    "service_numbers": lambda r: (f"{r.choice(SERVICE_LINES)} (24/7, free): {_toll_free(r)}"),
    "luhn_invalid_lots": lambda r: f"Lot {_luhn_invalid(r)} — cable drum batch, QC passed",
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
