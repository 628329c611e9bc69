"""The forty-third blind redaction corpus: automotive, fleet, EV charging and mobility agents, what an agent that
runs connected vehicles, a fleet or a charging network reads and writes. Written from the formats' public
specifications by someone who read neither the detection rules nor the other corpora (only the twenty-first's
interface).

Carriers (the `form` head): telematics unit logs, OBD-II scan-tool sessions (ELM327 transcripts), candump traces
with DBC notes, charge-point OCPP logs, CSMS YAML configs, OEM connected-car API calls (curl -v traces), fleet CSV
exports, ride-hailing trip receipts, car-sharing booking mails, parking-app and toll-gantry logs, dealer DMS repair
orders, Mosquitto bridge configs, OTA update-agent configs, insurance FNOL notes, roadside-assistance chats, the
agent's replies to users in 28 languages (its values' label lines also give the agent's sentence and the label in
one language), systemd journals of charger and TCU Linux, .env files of fleet back ends and issue-tracker tickets;
in JSON: OCPP 1.6-J DataTransfer and OCPP 2.0.1 NotifyEvent frames (the `[2, uniqueId, action, payload]` CALL
array), OEM vehicle-data responses, trip records, OTA campaign manifests, insurance telematics scores, fleet-
management driver records, agent tool calls, stored MQTT messages and parking sessions. About a third is JSON
carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; fleet fuel cards, ISO/IEC 7812-1
major industry identifier 7 (petroleum) with the Luhn digit, 16-19 digits; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not
0000); phones, the national numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT) with context words in each
country's language, avoiding the ranges the regulators reserve for drama; AWS keys, IAM's documented AKIA/ASIA ids
and 40-character secrets (also the IAM console's key CSV); Slack, Discord, Teams (webhookb2), Power Automate
(`sig=`), Google Chat (`token=`) and Mattermost webhook URLs as their docs print them (the secret is the token
segment or query value only); Stripe `whsec_` signing secrets (dashboard and `stripe listen` forms) and
`sk_live_`/`rk_live_` keys; Azure IoT Hub device, Service Bus and Storage, PostgreSQL/MongoDB/AMQP/MQTT/Redis URI,
JDBC and ODBC connection strings (the secret is the password or key only); the OCPP 1.6 security whitepaper's
`AuthorizationKey` (hexBinary, 16-20 bytes) and OCPP 2.0.1's `SecurityCtrlr.BasicAuthPassword` (passwordString,
16-40 characters); HTTP Basic (RFC 7617, OCPP security profiles 1-2), Bearer (RFC 6750) and OCPI 2.2's
`Authorization: Token` (base64); JWT (RFC 7519/7515); PEM SEC1/PKCS#8 P-256 keys (RFC 5915, RFC 5208) and
OpenSSH Ed25519 keys (PROTOCOL.key); session cookies (RFC 6265, express-session `s:` signatures, Netscape jar
lines, PHPSESSID/JSESSIONID); TOTP seeds, RFC 4648 base32 in the Key Uri Format (`otpauth://totp/...`); provider
tokens as their docs show them: Google `AIza` API keys, Mapbox `sk.` secret tokens, SendGrid `SG.` keys, GitHub
`ghp_`/`gho_`/`ghs_` (CRC32 checksum), GitLab `glpat-`, Slack `xoxb-`/`xoxp-`. National ids (outside the
target): French NIR (97 - n mod 97 key), Swedish personnummer (Luhn), Finnish henkilötunnus (mod 31 letter),
Norwegian fødselsnummer (two mod 11 digits), Belgian national register number (97 - n mod 97, `2` prefix from
2000), Chinese resident id (ISO 7064 MOD 11-2), Chilean RUT (mod 11, K); and the VIN (ISO 3779, the 49 CFR 565
check digit), outside the target too: the EDPB's guidelines 01/2020 on connected vehicles count it personal data
once it is tied to a keeper, but it is not a secret and no identifier of a person by itself.

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, a PEM key's base64 body inside its armour). A disguised secret
is its text as written (zero-width or bidi characters, full-width forms, %-escapes, JSON `\\u` escapes inside).
Near misses are what this domain holds that is not secret or personal in itself: OBD-II trouble codes (SAE J2012),
CAN frames and DBC lines, OCPP message and transaction ids, EVSE ids (ISO 15118 / eMI3), public charging-hub
coordinates, timestamps, request and trace ids (W3C traceparent), OTA image digests and commit hashes, firmware
and protocol versions, meter values and tariffs, masked values, placeholders, form-field names, CSS selectors and
XPath, pixel sizes, repair/parts order numbers, parcel tracking numbers, roadside clubs' and emergency services'
published numbers, Luhn-invalid numbers, the AWS docs' EXAMPLE keys, OCPP configuration key names, MQTT topics and
tyre DOT codes (49 CFR 574.5): none of them identifies a person or opens anything. Vehicle positions are personal
(a driver's whereabouts), so the only coordinates here are public charging hubs'.
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
    luhn_ok,
    openssh_ed25519_blob,
    pick,
)

SEED = 43
PER_KIND = 100
NEGATIVES_PER_SORT = 24
OUTSIDE_TARGET = frozenset({"fr_nir", "se_personnummer", "fi_hetu", "no_fnr", "be_rrn", "cn_ric", "cl_rut", "vin"})
"""National ids and the VIN: written and reported, not held to the recall target."""

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


# ---- languages ------------------------------------------------------------------------------------------------

LANGS: dict[str, tuple[str, str, str, str, str, str]] = {
    # lang: (agent's opening line, password, email, card number, IBAN, phone)
    "en": ("Your charging account is set up.", "Password", "Email", "Card number", "IBAN", "Phone"),
    "de": ("Ihr Ladekonto ist eingerichtet.", "Passwort", "E-Mail", "Kartennummer", "IBAN", "Telefon"),
    "fr": ("Votre compte de recharge est prêt.", "Mot de passe", "Courriel", "Numéro de carte", "IBAN",
           "Téléphone"),
    "es": ("Su cuenta de recarga está lista.", "Contraseña", "Correo electrónico", "Número de tarjeta", "IBAN",
           "Teléfono"),
    "it": ("Il tuo account di ricarica è pronto.", "Password", "E-mail", "Numero della carta", "IBAN", "Telefono"),
    "pt": ("Sua conta de recarga está pronta.", "Senha", "E-mail", "Número do cartão", "IBAN", "Telefone"),
    "nl": ("Je laadaccount is klaar.", "Wachtwoord", "E-mailadres", "Kaartnummer", "IBAN", "Telefoon"),
    "pl": ("Twoje konto ładowania jest gotowe.", "Hasło", "Adres e-mail", "Numer karty", "IBAN", "Telefon"),
    "sv": ("Ditt laddkonto är klart.", "Lösenord", "E-post", "Kortnummer", "IBAN", "Telefon"),
    "nb": ("Ladekontoen din er klar.", "Passord", "E-post", "Kortnummer", "IBAN", "Telefon"),
    "da": ("Din opladningskonto er klar.", "Adgangskode", "E-mail", "Kortnummer", "IBAN", "Telefon"),
    "fi": ("Lataustilisi on valmis.", "Salasana", "Sähköposti", "Kortin numero", "IBAN", "Puhelin"),
    "cs": ("Váš nabíjecí účet je připraven.", "Heslo", "E-mail", "Číslo karty", "IBAN", "Telefon"),
    "hu": ("A töltési fiókja elkészült.", "Jelszó", "E-mail-cím", "Kártyaszám", "IBAN", "Telefon"),
    "ro": ("Contul dvs. de încărcare este gata.", "Parolă", "E-mail", "Numărul cardului", "IBAN", "Telefon"),
    "tr": ("Şarj hesabınız hazır.", "Şifre", "E-posta", "Kart numarası", "IBAN", "Telefon"),
    "el": ("Ο λογαριασμός φόρτισής σας είναι έτοιμος.", "Κωδικός πρόσβασης", "Email", "Αριθμός κάρτας", "IBAN",
           "Τηλέφωνο"),
    "ru": ("Ваш аккаунт для зарядки готов.", "Пароль", "Эл. почта", "Номер карты", "IBAN", "Телефон"),
    "uk": ("Ваш обліковий запис для заряджання готовий.", "Пароль", "Ел. пошта", "Номер картки", "IBAN",
           "Телефон"),
    "ar": ("حساب الشحن الخاص بك جاهز.", "كلمة المرور", "البريد الإلكتروني", "رقم البطاقة", "رقم الآيبان", "الهاتف"),
    "he": ("חשבון הטעינה שלך מוכן.", "סיסמה", "דואר אלקטרוני", "מספר כרטיס", "IBAN", "טלפון"),
    "hi": ("आपका चार्जिंग खाता तैयार है।", "पासवर्ड", "ईमेल", "कार्ड नंबर", "IBAN", "फ़ोन"),
    "ja": ("充電アカウントの準備ができました。", "パスワード", "メールアドレス", "カード番号", "IBAN", "電話番号"),
    "ko": ("충전 계정이 준비되었습니다.", "비밀번호", "이메일", "카드 번호", "IBAN", "전화번호"),
    "zh": ("您的充电账户已设置好。", "密码", "电子邮件", "卡号", "IBAN", "电话"),
    "vi": ("Tài khoản sạc của bạn đã sẵn sàng.", "Mật khẩu", "Email", "Số thẻ", "IBAN", "Điện thoại"),
    "th": ("บัญชีชาร์จของคุณพร้อมแล้ว", "รหัสผ่าน", "อีเมล", "หมายเลขบัตร", "IBAN", "โทรศัพท์"),
    "id": ("Akun pengisian daya Anda sudah siap.", "Kata sandi", "Email", "Nomor kartu", "IBAN", "Telepon"),
}
PASSWORD, EMAIL, CARD, IBAN = 1, 2, 3, 4


def labelled(rng: random.Random, field: int, value: str) -> str:
    """The agent's line to a user in a language drawn from LANGS, then `value` under the label of `field` (PASSWORD,
    EMAIL, CARD, IBAN) in that same language."""
    lang = LANGS[rng.choice(list(LANGS))]
    return f"{lang[0]}\n{lang[field]}: {value}"


# ---- carriers -------------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    return (f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z")


def _veh(rng: random.Random) -> str:
    return f"veh-{rng.randint(100, 9999):04d}"


def _cp(rng: random.Random) -> str:
    return f"CP{rng.randint(10000, 99999)}"


DEPOTS = ["Depot Nord", "Hub Lyon-Est", "Yard 3 Newark", "Depot Ost", "Centro Logístico Getafe", "Depot Zuid",
          "Hub Pune MIDC", "Terminal Malmö", "Depot Linz", "Hub Milano Linate"]


def c_telematics(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_ts(rng)} tcu[{rng.randint(300, 4000)}]: uplink {_veh(rng)} soc={rng.randint(5, 100)}% "
            f"odo={rng.randint(1000, 240000)}km rssi=-{rng.randint(60, 110)}dBm\n{_ts(rng)} tcu[bridge]: {snip}")


def c_obd(rng: random.Random, snip: str, _s: str) -> str:
    pairs = " ".join(pick(rng, "0123456789ABCDEF", 2) for _ in range(4))
    return (f"ELM327 v1.5\n>ATSP0\nOK\n>0105\n41 05 {rng.randint(60, 120):02X}\n>0110\n41 10 {pairs}\n>03\n"
            f"43 01 {rng.randint(1, 3):02X} 00 00 00 00\n# tech note ({rng.choice(DEPOTS)}): {snip}")


def c_candump(rng: random.Random, snip: str, _s: str) -> str:
    base = rng.uniform(1.7e9, 1.75e9)
    lines = [f"({base + k * 0.01:.6f}) can0 {rng.randint(0x100, 0x7FF):03X}#{pick(rng, '0123456789ABCDEF', 16)}"
             for k in range(3)]
    return "\n".join(lines) + f"\n// {snip}"


def c_ocpp_log(rng: random.Random, snip: str, _s: str) -> str:
    cp = _cp(rng)
    return (f"[{_ts(rng)}] INFO  ocpp.j16 {cp} connector={rng.randint(1, 2)} StatusNotification Charging\n"
            f"[{_ts(rng)}] DEBUG ocpp.j16 {cp} {snip}\n[{_ts(rng)}] INFO  ocpp.j16 {cp} Heartbeat accepted")


def c_csms_yaml(rng: random.Random, snip: str, _s: str) -> str:
    return (f"# csms.yaml ({rng.choice(['staging', 'prod-eu', 'prod-us'])})\ncsms:\n"
            f"  listen: 0.0.0.0:{rng.choice([9000, 8887, 443])}\n"
            f"  heartbeat_interval: {rng.choice([300, 600, 900])}\n  meter_sample_interval: 60\n"
            f"# pasted from the runbook:\n{snip}\n")


def c_oem_curl(rng: random.Random, snip: str, _s: str) -> str:
    host = rng.choice(["api.connected-car.io", "fleet-api.oem-cloud.net", "owner-api.vehicle-data.com"])
    vid = rng.randint(10**13, 10**14)
    return (f"$ curl -sv https://{host}/api/1/vehicles/{vid}/vehicle_data\n> GET /api/1/vehicles/{vid}/vehicle_data "
            f"HTTP/2\n> Host: {host}\n> user-agent: fleet-agent/{rng.randint(1, 4)}.{rng.randint(0, 19)}\n{snip}\n"
            f"< HTTP/2 200\n< content-type: application/json")


def c_fleet_csv(rng: random.Random, snip: str, _s: str) -> str:
    return (f"vehicle_id,driver_ref,depot,last_service,notes\n{_veh(rng)},drv-{rng.randint(1, 999):03d},"
            f"{rng.choice(DEPOTS)},2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d},\"{snip}\"")


def c_trip_receipt(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Trip {pick(rng, UPPER + string.digits, 8)} — {rng.randint(3, 48)} min, {rng.uniform(1, 40):.1f} km, "
            f"fare €{rng.uniform(6, 90):.2f}\nRider note: {snip}\nRate your driver ★★★★★")


def c_carsharing(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Subject: Your booking {pick(rng, UPPER, 3)}-{digits(rng, 5)} is confirmed\n\nPick-up: "
            f"{rng.choice(DEPOTS)}, bay {rng.randint(1, 40)}\nUnlock with the app within 15 minutes.\n\n{snip}\n\n"
            f"-- Car sharing support")


def c_parking(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_ts(rng)} parkapp zone={rng.randint(1000, 9999)} duration={rng.randint(15, 480)}m "
            f"amount={rng.uniform(0.5, 30):.2f} EUR status=PAID\n{_ts(rng)} parkapp support: {snip}")


def c_toll(rng: random.Random, snip: str, _s: str) -> str:
    return (f"GANTRY {rng.choice(['A8', 'M6', 'I-95', 'E20', 'A1'])}-{rng.randint(10, 99)} lane {rng.randint(1, 6)} "
            f"class {rng.randint(1, 5)} {_ts(rng)} OBU={rng.choice(['OK', 'NO_READ'])} toll={rng.uniform(1, 25):.2f}\n"
            f"dispute text: {snip}")


def c_dms(rng: random.Random, snip: str, _s: str) -> str:
    return (f"REPAIR ORDER RO-{rng.randint(100000, 999999)}  advisor: SA{rng.randint(10, 99)}\n"
            f"Op 01  {rng.choice(['Brake pads front', 'HV battery coolant', 'Wiper blades', 'Software update'])}"
            f"  {rng.uniform(0.3, 4):.1f} h\nCustomer remarks: {snip}\nPromised: 17:00")


def c_mosquitto(rng: random.Random, snip: str, _s: str) -> str:
    return (f"# /etc/mosquitto/conf.d/bridge.conf\nconnection cloud-{rng.randint(1, 9)}\naddress "
            f"mqtt.fleet-cloud.net:8883\ntopic fleet/# out 1\nbridge_protocol_version mqttv311\n{snip}\n")


def c_ota_config(rng: random.Random, snip: str, _s: str) -> str:
    return (f"[ota]\nchannel = {rng.choice(['stable', 'beta', 'pilot'])}\n"
            f"poll_interval_s = {rng.choice([3600, 21600])}\n"
            f"max_download_mbps = {rng.randint(2, 50)}\n\n[upstream]\n{snip}\n")


def c_fnol(rng: random.Random, snip: str, _s: str) -> str:
    return (f"FNOL #{rng.randint(10**7, 10**8)} — rear-end collision, low speed, crash pulse "
            f"{rng.uniform(2, 9):.1f} g, airbags not deployed\nAdjuster notes: {snip}")


def c_roadside_chat(rng: random.Random, snip: str, _s: str) -> str:
    return (f"[{_ts(rng)}] Agent: Roadside assistance here, what happened?\n[{_ts(rng)}] Customer: flat tyre on "
            f"the ring road, no spare\n[{_ts(rng)}] Customer: {snip}\n[{_ts(rng)}] Agent: A truck is on its way.")


def c_agent_reply(rng: random.Random, snip: str, _s: str) -> str:
    return f"{LANGS[rng.choice(list(LANGS))][0]}\n\n{snip}\n\n— EV charging assistant"


def c_journal(rng: random.Random, snip: str, _s: str) -> str:
    host = rng.choice(["wallbox-fw", "tcu-imx8", "cpo-gw"])
    return (f"Mar {rng.randint(1, 28):2d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:12 {host} "
            f"systemd[1]: Started ocpp-client.service.\nMar {rng.randint(1, 28):2d} 08:00:13 {host} "
            f"ocpp-client[{rng.randint(200, 9000)}]: {snip}")


def c_dotenv(rng: random.Random, snip: str, _s: str) -> str:
    return (f"# fleet-backend .env ({rng.choice(['dev', 'staging', 'prod'])})\nNODE_ENV=production\n"
            f"PORT={rng.choice([3000, 8080])}\nMAP_TILE_CACHE=/var/cache/tiles\n{snip}\nLOG_LEVEL=info\n")


def c_ticket(rng: random.Random, snip: str, _s: str) -> str:
    return (f"## EVSE-{rng.randint(100, 9999)}: charger drops session after {rng.randint(2, 30)} min\n\n"
            f"Steps: plug in, start via app, wait.\n\n```\n{snip}\n```\n\n/label ~charging ~p{rng.randint(1, 4)}")


def j_ocpp16(rng: random.Random, snip: str, _s: str) -> str:
    return _dump([2, _uid(rng), "DataTransfer", {"vendorId": rng.choice(["com.wallbox", "org.cpo.ops", "de.evse"]),
                                                 "messageId": "Diagnostics", "data": snip}])


def j_ocpp201(rng: random.Random, snip: str, _s: str) -> str:
    return _dump([2, _uid(rng), "NotifyEvent", {
        "generatedAt": _ts(rng), "seqNo": rng.randint(0, 50),
        "eventData": [{"eventId": rng.randint(1, 9999), "timestamp": _ts(rng), "trigger": "Delta",
                       "actualValue": snip, "component": {"name": "SecurityCtrlr"},
                       "variable": {"name": "Notes"}, "eventNotificationType": "CustomMonitor"}]}])


def j_oem_response(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"response": {"id": rng.randint(10**13, 10**14), "state": "online",
                               "charge_state": {"battery_level": rng.randint(5, 100), "charging_state": "Stopped"},
                               "display_name": snip}})


def j_trip(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"trip_id": _uid(rng), "status": "completed", "distance_km": round(rng.uniform(1, 40), 1),
                  "fare": {"amount": round(rng.uniform(6, 90), 2), "currency": "EUR"}, "rider_note": snip})


def j_ota_manifest(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"campaign": f"OTA-{rng.randint(2024, 2025)}-{rng.randint(1, 99):02d}", "ecu": "TCU",
                  "artifacts": [{"name": "tcu-rootfs.swu", "size": rng.randint(10**7, 10**9)}], "notes": snip})


def j_insurance(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"policy_ref": f"UBI-{rng.randint(10**5, 10**6)}", "trip_score": rng.randint(40, 100),
                  "events": [{"type": rng.choice(["harsh_brake", "speeding", "phone_use"]),
                              "count": rng.randint(0, 9)}],
                  "remarks": snip})


def j_fleet_driver(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"driver": {"id": f"drv-{rng.randint(1, 999):03d}", "depot": rng.choice(DEPOTS),
                             "licence_classes": ["B", rng.choice(["C1", "C", "CE"])], "notes": snip}})


def j_tool_call(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"type": "tool_use", "id": f"toolu_{pick(rng, ALNUM, 24)}", "name": "send_user_message",
                  "input": {"channel": rng.choice(["app", "sms", "email"]), "text": snip}})


def j_mqtt_message(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"topic": f"fleet/{_veh(rng)}/events", "qos": 1, "retain": False, "received_at": _ts(rng),
                  "payload": {"kind": "operator_note", "body": snip}})


def j_parking(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"session_id": _uid(rng), "zone": rng.randint(1000, 9999), "minutes": rng.randint(15, 480),
                  "price": {"value": round(rng.uniform(0.5, 30), 2), "currency": "EUR"}, "support_message": snip})


TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "telematics_log": c_telematics, "obd_session": c_obd, "candump": c_candump, "ocpp_log": c_ocpp_log,
    "csms_yaml": c_csms_yaml, "oem_curl": c_oem_curl, "fleet_csv": c_fleet_csv, "trip_receipt": c_trip_receipt,
    "carsharing_mail": c_carsharing, "parking_log": c_parking, "toll_log": c_toll, "dms_repair_order": c_dms,
    "mosquitto_conf": c_mosquitto, "ota_config": c_ota_config, "insurance_fnol": c_fnol,
    "roadside_chat": c_roadside_chat, "agent_reply": c_agent_reply, "journal": c_journal, "dotenv": c_dotenv,
    "ticket": c_ticket}
JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "ocpp16_datatransfer": j_ocpp16, "ocpp201_notifyevent": j_ocpp201, "oem_vehicle_data": j_oem_response,
    "trip_record": j_trip, "ota_manifest": j_ota_manifest, "insurance_score": j_insurance,
    "fleet_driver": j_fleet_driver, "agent_tool_call": j_tool_call, "mqtt_message": j_mqtt_message,
    "parking_session": j_parking}


# ---- secrets --------------------------------------------------------------------------------------------------

PW_WORDS = ["Ladesäule", "Wallbox", "Garage", "Kilometer", "Voiture", "Coche", "Autobahn", "Depot", "Bujía",
            "Turbo", "Volant", "Pedal", "Kardan", "Frizione", "Motorway", "Dieselross", "Reifen", "Carretera"]
PW_SYMBOLS = "!#$%&*+-=?@^_~"


def password_value(rng: random.Random) -> str:
    """A password as people and admins set them: word-digits-symbol-word, a random string, or a passphrase."""
    shape = rng.randrange(3)
    if shape == 0:
        return f"{rng.choice(PW_WORDS)}{digits(rng, rng.randint(2, 4))}{rng.choice(PW_SYMBOLS)}{rng.choice(PW_WORDS)}"
    if shape == 1:
        return pick(rng, ALNUM, rng.randint(8, 14)) + rng.choice(PW_SYMBOLS) + pick(rng, ALNUM, rng.randint(2, 5))
    return "-".join(rng.choice(PW_WORDS).lower() for _ in range(3)) + f"-{rng.randint(10, 99)}"


def v_password(rng: random.Random, i: int) -> Value:
    pw = password_value(rng)
    styles = [
        ("mqtt_bridge", f"remote_username fleet-bridge-{rng.randint(1, 9)}\nremote_password {pw}"),
        ("yaml", f"database:\n  host: csms-db.internal\n  user: csms\n  password: {pw}"),
        ("env", f"FLEET_PORTAL_PASSWORD={pw}"),
        ("label_lang", labelled(rng, PASSWORD, pw)),
        ("hotspot", f"In-car Wi-Fi hotspot: SSID CAR-{pick(rng, '0123456789ABCDEF', 4)}, password {pw}"),
        ("cli", f"dms-sync --user service{rng.randint(1, 40):02d} --password '{pw}' --since yesterday"),
        ("wallbox_admin", f"Wallbox web UI http://192.168.0.{rng.randint(2, 250)} login admin / {pw}"),
        ("chat", f"I reset it, the new password for the fleet portal is {pw} — can you log in now?"),
        ("json_field", f'{{"username": "dispatch{rng.randint(1, 9)}", "password": "{pw}"}}'),
        ("ocpp_cli", f"ocpp-sim --cp {_cp(rng)} --basic-user {_cp(rng)} --basic-pass {pw}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, pw, snip, False


def akia(rng: random.Random, head: str = "AKIA") -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (STS), then 16 base32 characters."""
    return head + pick(rng, B32, 16)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    s = pick(rng, B64, 40)
    styles = [
        ("credentials_file", f"[fleet-ota]\naws_access_key_id = {akia(rng)}\naws_secret_access_key = {s}"),
        ("env_pair", f"AWS_ACCESS_KEY_ID={akia(rng)}\nAWS_SECRET_ACCESS_KEY={s}"),
        ("sts_json", f'{{"AccessKeyId": "{akia(rng, "ASIA")}", "SecretAccessKey": "{s}", '
                     f'"Expiration": "2025-06-01T12:00:00Z"}}'),
        ("console_csv", f"Access key ID,Secret access key\n{akia(rng)},{s}"),
        ("boto3", f'boto3.client("iot-data", aws_access_key_id="{akia(rng)}", aws_secret_access_key="{s}")'),
        ("beside_id", f"keys for the OTA bucket: {akia(rng)} {s}"),
        ("greengrass_yaml", f"aws:\n  accessKeyId: {akia(rng)}\n  secretAccessKey: {s}\n  region: eu-central-1"),
    ]
    style, snip = styles[i % len(styles)]
    return style, s, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    sort = i % 6
    if sort == 0:
        secret = pick(rng, ALNUM, 24)
        url = (f"https://hooks.slack.com/services/T{pick(rng, UPPER + string.digits, 8)}/"
               f"B{pick(rng, UPPER + string.digits, 10)}/{secret}")
        style = "slack"
    elif sort == 1:
        secret = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{secret}"
        style = "discord"
    elif sort == 2:
        secret = pick(rng, HEX, 32)
        url = (f"https://{rng.choice(['fleetco', 'cpo-ops', 'autohaus'])}.webhook.office.com/webhookb2/{_uid(rng)}@"
               f"{_uid(rng)}/IncomingWebhook/{secret}/{_uid(rng)}")
        style = "teams"
    elif sort == 3:
        secret = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0"
               f"&sig={secret}")
        style = "power_automate"
    elif sort == 4:
        secret = pick(rng, URLSAFE, 43)
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
               f"{pick(rng, URLSAFE, 33)}&token={secret}")
        style = "google_chat"
    else:
        secret = pick(rng, LOWER + string.digits, 26)
        url = f"https://chat.{rng.choice(['fleetops.io', 'cpo-net.eu', 'dealer-group.com'])}/hooks/{secret}"
        style = "mattermost"
    lead = rng.choice(["ALERT_WEBHOOK_URL={u}", "charger fault alerts go to {u}", "notify:\n  url: {u}",
                       "curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"CP offline\"}}' {u}",
                       "webhook: {u}"])
    return style, secret, lead.format(u=url), False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    cli = i % 4 == 1
    s = "whsec_" + (pick(rng, HEX, 64) if cli else pick(rng, ALNUM, 32))
    styles = [
        ("env", f"STRIPE_WEBHOOK_SECRET={s}"),
        ("stripe_listen", f"> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is {s} "
                          f"(^C to quit)"),
        ("python", f'event = stripe.Webhook.construct_event(payload, sig_header, "{s}")'),
        ("yaml", f"payments:\n  provider: stripe\n  endpoint_secret: {s}"),
        ("chat", f"signing secret for the charging-payments endpoint: {s}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, s, snip, False


def v_connection_string(rng: random.Random, i: int) -> Value:
    pw = pick(rng, ALNUM, rng.randint(12, 24))
    key44 = base64.b64encode(rng.randbytes(32)).decode()
    key88 = base64.b64encode(rng.randbytes(64)).decode()
    styles = [
        ("postgres", pw, f"DATABASE_URL=postgresql://csms:{pw}@csms-db.internal:5432/csms?sslmode=require"),
        ("mqtt_uri", pw, f"broker: mqtts://tcu-{rng.randint(1, 999)}:{pw}@mqtt.fleet-cloud.net:8883"),
        ("amqp", pw, f"AMQP_URL=amqps://telemetry:{pw}@rabbit.fleet.internal:5671/%2Fvehicles"),
        ("redis", pw, f"REDIS_URL=redis://:{pw}@sessions-cache:6379/0"),
        ("iot_hub", key44, f"HostName=fleet-hub-{rng.randint(1, 9)}.azure-devices.net;"
                           f"DeviceId=tcu-{rng.randint(1, 9999)};"
                           f"SharedAccessKey={key44}"),
        ("service_bus", key44, f"Endpoint=sb://charging-events.servicebus.windows.net/;SharedAccessKeyName="
                               f"RootManageSharedAccessKey;SharedAccessKey={key44}"),
        ("azure_storage", key88, f"DefaultEndpointsProtocol=https;AccountName=otaimages{rng.randint(1, 99)};"
                                 f"AccountKey={key88};EndpointSuffix=core.windows.net"),
        ("jdbc", pw, f"jdbc:sqlserver://dms-sql:1433;databaseName=DMS;user=dms_app;password={pw};encrypt=true"),
        ("mongodb", pw, f"mongodb+srv://trips:{pw}@cluster0.{pick(rng, LOWER + string.digits, 5)}.mongodb.net/rides"),
        ("odbc", pw, f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:dealer-dms,1433;Uid=reports;Pwd={pw};"),
    ]
    style, secret, snip = styles[i % len(styles)]
    return style, secret, snip, False


KEY_LABELS = ["API key: {v}", "x-api-key: {v}", "apiKey={v}", "API-Schlüssel: {v}", "Clé API : {v}",
              "Clave de API: {v}", "Chiave API: {v}", "APIキー: {v}", "API 키: {v}", "API密钥：{v}", "Ключ API: {v}",
              "Klucz API: {v}", "API-sleutel: {v}", "Chave de API: {v}", "telematics API key = {v}",
              "API key for the charger map: {v}", "API-nyckel: {v}", "API anahtarı: {v}"]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    shape = i % 4
    if shape == 0:
        v = pick(rng, HEX, 32)
    elif shape == 1:
        v = pick(rng, ALNUM, rng.randint(32, 48))
    elif shape == 2:
        v = base64.b64encode(rng.randbytes(rng.choice([24, 30, 33]))).decode()
    else:
        v = _uid(rng)
    tmpl = KEY_LABELS[i % len(KEY_LABELS)]
    return f"label{i % len(KEY_LABELS)}/{['hex', 'alnum', 'b64', 'uuid'][shape]}", v, tmpl.format(v=v), False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066"]


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def v_disguised(rng: random.Random, i: int) -> Value:
    base = [password_value(rng), "sk_live_" + pick(rng, ALNUM, 24), crc_token(rng, "ghp_"), pick(rng, B64, 40),
            "glpat-" + pick(rng, URLSAFE, 20)][i % 5]
    how = i % 4
    if how == 0:
        cut = rng.randint(1, len(base) - 1)
        secret, raw = base[:cut] + rng.choice(ZW) + base[cut:], False
    elif how == 1:
        secret, raw = _fullwidth(base), False
    elif how == 2:
        secret, raw = "".join(f"%{ord(c):02X}" if rng.random() < 0.6 else c for c in base), False
        if "%" not in secret:
            secret = f"%{ord(base[0]):02X}" + secret[1:]
    else:
        secret = "".join(f"\\u{ord(c):04x}" if rng.random() < 0.5 else c for c in base)
        secret, raw = (secret if "\\u" in secret else f"\\u{ord(base[0]):04x}" + secret[1:]), True
    lead = rng.choice(["token: {v}", "the key is {v}", "pass={v}", '"secret": "{v}"', "credential → {v}",
                       "Passwort: {v}", "mot de passe : {v}", "キー: {v}"])
    kind = ["zero_width", "fullwidth", "percent", "json_u"][how]
    return f"{kind}/{['password', 'stripe', 'github', 'aws', 'gitlab'][i % 5]}", secret, lead.format(v=secret), raw


# ---- personal data --------------------------------------------------------------------------------------------

GIVEN = ["lena", "marco", "aisha", "j.kowalski", "sven", "priya.nair", "tomas", "yuki", "carlos.ruiz", "ingrid",
         "mehmet", "olivia", "arjun", "chloe.martin", "dmitri", "fatima", "niklas", "sofia", "kenji", "grace"]
SURN = ["bauer", "rossi", "khan", "nowak", "lindqvist", "sharma", "novak", "tanaka", "garcia", "hansen", "yilmaz",
        "smith", "patel", "dubois", "ivanov", "haddad", "schmidt", "costa", "sato", "obrien"]
MAIL_DOMAINS = ["gmail.com", "outlook.com", "web.de", "gmx.net", "t-online.de", "orange.fr", "free.fr", "libero.it",
                "yahoo.co.jp", "naver.com", "qq.com", "rediffmail.com", "yandex.ru", "seznam.cz", "wp.pl",
                "icloud.com", "hotmail.co.uk", "logistik-bauer.de", "transports-morel.fr", "fleetpartner.nl"]
IDN_MAILS = ["jürgen.weiß@müller-logistik.de", "josé.núñez@transportes.es", "δημήτρης@οδηγός.gr",
             "司机@车队.中国", "водитель@автопарк.рф", "ड्राइवर@उदाहरण.भारत", "çağrı@taşımacılık.com.tr"]


def email_value(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return rng.choice(IDN_MAILS)
    local = rng.choice([f"{rng.choice(GIVEN)}.{rng.choice(SURN)}", f"{rng.choice(GIVEN)}{rng.randint(1, 99)}",
                        f"{rng.choice(GIVEN)}_{rng.choice(SURN)}{rng.randint(70, 99)}",
                        f"{rng.choice(SURN)}+fleet"])
    return f"{local}@{rng.choice(MAIL_DOMAINS)}"


def v_email(rng: random.Random, i: int) -> Value:
    v = email_value(rng)
    name = f"{rng.choice(GIVEN).split('.')[0].title()} {rng.choice(SURN).title()}"
    styles = [
        ("label_lang", labelled(rng, EMAIL, v)),
        ("mailto", f"send the charging invoice to mailto:{v}"),
        ("name_addr", f"To: {name} <{v}>"),
        ("driver_csv", f"drv-{rng.randint(1, 999):03d};{name};{v};B"),
        ("handover", f"keys handed over, contact {v} for the return inspection"),
        ("json_field", f'{{"customer_email": "{v}"}}'),
        ("receipt", f"Receipt sent to {v}"),
        ("chat", f"you can reach me at {v}, I'm on the road till 6"),
    ]
    style, snip = styles[i % len(styles)]
    return style, v, snip, False


PHONE_CTX = {
    "us": ["cell", "call me at", "phone", "mobile", "text me at", "callback number", "tel", "cellulaire"],
    "uk": ["mobile", "ring me on", "tel", "phone", "contact number", "call back on"],
    "fr": ["téléphone", "portable", "tél.", "joignable au", "mon numéro", "rappelez-moi au"],
    "de": ["Telefon", "Tel.", "Handy", "Mobil", "Rückruf unter", "erreichbar unter", "Handynummer"],
    "in": ["mobile", "mobile no.", "ph", "contact", "फ़ोन", "मोबाइल नंबर", "WhatsApp"],
}
PHONE_TEMPLATES = ["{c}: {n}", "{c} {n}", "Driver — {c} {n} (after 5pm)", "roadside callback: {c} {n}",
                   "Customer remarks: {c} {n}", "{n} ({c})"]


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """NANP: area code NXX from a list of real ones, exchange NXX not N11 and not 555, line XXXX."""
    area = rng.choice(["212", "415", "313", "312", "604", "416", "514", "303", "617", "206", "737", "248", "418"])
    while True:
        exch = f"{rng.randint(2, 9)}{digits(rng, 2)}"
        if exch[1:] != "11" and exch != "555":
            return area, exch, digits(rng, 4)


def _uk_mobile(rng: random.Random) -> str:
    """07 then [1-5,7-9] (not 070 personal numbers or 076 pagers), avoiding Ofcom's 07700 900xxx drama range."""
    while True:
        n = f"07{rng.choice('1234579')}{digits(rng, 8)}"
        if not n.startswith("077009"):
            return n


def _fr_pairs(rng: random.Random, first: str) -> list[str]:
    """0 + first digit + 8 digits in pairs, avoiding ARCEP's fiction blocks (01 99 00, 06 39 98, ...)."""
    while True:
        pairs = [digits(rng, 2) for _ in range(4)]
        if (first + pairs[0] + pairs[1]) not in ("19900", "26191", "35301", "46571", "53555", "63998"):
            return [f"0{first}", *pairs]


def _de_mobile(rng: random.Random) -> str:
    prefix = rng.choice(["151", "152", "160", "170", "171", "172", "175", "176", "157", "163"])
    return prefix + f"{rng.randint(2, 9)}{digits(rng, 6 if prefix in ('171', '170') else 7)}"


US_FORMS = [("paren", lambda r: "({}) {}-{}".format(*_nanp(r))), ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
            ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))), ("plus1", lambda r: "+1 {} {} {}".format(*_nanp(r))),
            ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r))), ("e164", lambda r: "+1{}{}{}".format(*_nanp(r)))]
UK_FORMS = [("mobile", lambda r: (lambda n: f"{n[:5]} {n[5:]}")(_uk_mobile(r))),
            ("mobile_compact", _uk_mobile),
            ("plus44_mobile", lambda r: (lambda n: f"+44 {n[1:5]} {n[5:]}")(_uk_mobile(r))),
            ("plus44_zero", lambda r: (lambda n: f"+44 (0){n[1:5]} {n[5:8]} {n[8:]}")(_uk_mobile(r))),
            ("london", lambda r: f"020 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}"),
            ("manchester", lambda r: f"0161 {r.randint(2, 9)}{digits(r, 2)} {digits(r, 4)}"),
            ("plus44_london", lambda r: f"+44 20 {r.choice('38')}{digits(r, 3)} {digits(r, 4)}"),
            ("cardiff", lambda r: f"029 20{digits(r, 2)} {digits(r, 4)}")]
FR_FORMS = [("mobile_space", lambda r: " ".join(_fr_pairs(r, r.choice("67")))),
            ("mobile_dot", lambda r: ".".join(_fr_pairs(r, r.choice("67")))),
            ("compact", lambda r: "".join(_fr_pairs(r, r.choice("67")))),
            ("plus33", lambda r: "+33 " + " ".join(_fr_pairs(r, r.choice("67")))[1:]),
            ("plus33_zero", lambda r: "+33 (0)" + " ".join(_fr_pairs(r, r.choice("67")))[1:]),
            ("geographic", lambda r: " ".join(_fr_pairs(r, r.choice("12345"))))]
DE_FORMS = [("mobile", lambda r: (lambda n: f"0{n[:3]} {n[3:]}")(_de_mobile(r))),
            ("mobile_slash", lambda r: (lambda n: f"0{n[:3]}/{n[3:]}")(_de_mobile(r))),
            ("plus49", lambda r: (lambda n: f"+49 {n[:3]} {n[3:]}")(_de_mobile(r))),
            ("plus49_zero", lambda r: (lambda n: f"+49 (0){n[:3]} {n[3:]}")(_de_mobile(r))),
            ("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
            ("stuttgart", lambda r: f"0711 {r.randint(2, 9)}{digits(r, 6)}"),
            ("wolfsburg", lambda r: f"05361 {r.randint(2, 9)}{digits(r, 5)}"),
            ("munich_dash", lambda r: f"089-{r.randint(2, 9)}{digits(r, 6)}")]
IN_FORMS = [("plus91_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
            ("plus91_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}"),
            ("zero_mobile", lambda r: f"0{r.choice('6789')}{digits(r, 9)}"),
            ("mobile_split", lambda r: f"{r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
            ("mobile_compact", lambda r: f"{r.choice('6789')}{digits(r, 9)}"),
            ("delhi", lambda r: f"011-2{digits(r, 3)} {digits(r, 4)}"),
            ("bengaluru", lambda r: f"080 4{digits(r, 3)} {digits(r, 4)}"),
            ("plus91_mumbai", lambda r: f"+91 22 2{digits(r, 3)} {digits(r, 4)}")]


def phone_case(country: str, forms: list[tuple[str, Callable[[random.Random], str]]]
               ) -> Callable[[random.Random, int], Value]:
    """A kind's generator: its country's forms in turn, with a context word of that country."""
    def gen(rng: random.Random, i: int) -> Value:
        style, make = forms[i % len(forms)]
        n = make(rng)
        tmpl = PHONE_TEMPLATES[i // len(forms) % len(PHONE_TEMPLATES)]
        return style, n, tmpl.format(c=rng.choice(PHONE_CTX[country]), n=n), False
    return gen


def ssn_value(rng: random.Random) -> str:
    """SSA: area 001-899 except 666, group 01-99, serial 0001-9999."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int) -> Value:
    n = ssn_value(rng)
    shape = i % 5
    v = n if shape == 4 else (f"{n[:3]} {n[3:5]} {n[5:]}" if shape == 3 else f"{n[:3]}-{n[3:5]}-{n[5:]}")
    tmpl = ["SSN: {v}", "Social Security number {v} (for the MVR check)", "driver onboarding — SSN {v}",
            "TIN/SSN: {v}", "social {v}", "Applicant SSN {v}, CDL class A"][i % 6]
    return ["dash", "dash", "dash", "space", "compact"][shape], v, tmpl.format(v=v), False


CARD_BRANDS = ["visa", "mc", "mc2", "amex", "discover", "discover65", "jcb", "diners", "unionpay"]


def card_number(rng: random.Random, brand: str) -> str:
    """A number in the brand's IIN range and length, completed by its Luhn digit."""
    head, length = {"visa": ("4", 16), "mc": (str(rng.randint(51, 55)), 16),
                    "mc2": (str(rng.randint(2221, 2720)), 16), "amex": (rng.choice(["34", "37"]), 15),
                    "discover": ("6011", 16), "discover65": ("65", 16), "jcb": (str(rng.randint(3528, 3589)), 16),
                    "diners": ("36", 14), "unionpay": ("62", 16)}[brand]
    partial = head + digits(rng, length - len(head) - 1)
    return partial + luhn_digit(partial)


CARD_LEADS = ["{l}", "Paid parking with card {v}", "charging session billed to {v} exp {m}/{y}",
              "toll account top-up card {v}", "rental deposit held on {v}", "card {v}, CVC on the back"]


def v_card(rng: random.Random, i: int) -> Value:
    brand = CARD_BRANDS[i % len(CARD_BRANDS)]
    n = card_number(rng, brand)
    v = [group_card(n, " "), group_card(n, "-"), n][i // len(CARD_BRANDS) % 3]
    lead = CARD_LEADS[i % len(CARD_LEADS)]
    text = lead.format(l=labelled(rng, CARD, v), v=v, m=f"{rng.randint(1, 12):02d}", y=rng.randint(26, 31))
    return brand, v, text, False


def v_fuel_card(rng: random.Random, i: int) -> Value:
    length = [16, 18, 19][i % 3]
    partial = "7" + digits(rng, length - 2)
    n = partial + luhn_digit(partial)
    v = n if i % 4 == 3 else group(n, 4, " ")
    lead = ["Fuel card: {v}", "Tankkarte {v}, PIN im Handschuhfach-Umschlag", "carte carburant n° {v}",
            "tarjeta de combustible {v}", "carta carburante {v}", "tankpas {v} geblokkeerd?", "karta paliwowa {v}",
            "fleet card {v} declined at pump 4"][i % 8]
    return f"len{length}", v, lead.format(v=v), False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
             "NL": "4a10n", "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "SE": "3n16n1n",
             "NO": "4n6n1n", "DK": "4n9n1n", "FI": "3n11n", "PT": "4n4n11n2n", "IE": "4a6n8n", "CZ": "4n6n10n"}
IBAN_LEADS = ["{l}", "SEPA mandate for the charging subscription, IBAN {v}", "driver payroll account {v}",
              "Leasingrate per Lastschrift von {v}", "virement sur {v}", "refund the toll overcharge to {v}"]


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    b = bban(rng, IBAN_BBAN[country])
    compact = country + iban_check(country, b) + b
    v = group(compact, 4, " ") if i % 3 else compact
    lead = IBAN_LEADS[i % len(IBAN_LEADS)]
    return country, v, lead.format(l=labelled(rng, IBAN, v), v=v), False


# ---- tokens, headers, keys ------------------------------------------------------------------------------------

OCPP201_PASSWORD = ALNUM + "*-_=:+|@."
"""OCPP 2.0.1's passwordString characters (its identifierString set)."""


def v_ocpp_auth_key(rng: random.Random, i: int) -> Value:
    hexkey = pick(rng, "0123456789ABCDEF" if i % 2 else HEX, 2 * rng.randint(16, 20))
    pw201 = pick(rng, OCPP201_PASSWORD, rng.randint(16, 40))
    msg_id = _uid(rng)
    styles = [
        ("change_configuration", hexkey, f'[2,"{msg_id}","ChangeConfiguration",{{"key":"AuthorizationKey",'
                                         f'"value":"{hexkey}"}}]'),
        ("set_variables", pw201, f'[2,"{msg_id}","SetVariables",{{"setVariableData":[{{"attributeValue":"{pw201}",'
                                 f'"component":{{"name":"SecurityCtrlr"}},"variable":{{"name":"BasicAuthPassword"}}}}]}}]'),
        ("csms_yaml", hexkey, f"charge_points:\n  - id: {_cp(rng)}\n    security_profile: 2\n"
                              f"    authorization_key: {hexkey}"),
        ("log", hexkey, f"ChangeConfiguration AuthorizationKey={hexkey} -> Accepted, reconnecting with profile 1"),
        ("provisioning_sheet", pw201, f"Charge point {_cp(rng)}: BasicAuthPassword {pw201} (rotate after install)"),
    ]
    style, secret, snip = styles[i % len(styles)]
    return style, secret, snip, False


def v_auth_header(rng: random.Random, i: int) -> Value:
    sort = i % 5
    if sort in (0, 1):
        cp = _cp(rng)
        secret = base64.b64encode(f"{cp}:{pick(rng, HEX, 40)}".encode()).decode()
        head = "Authorization" if sort == 0 else "authorization"
        return "basic_ocpp", secret, f"GET /ocpp/{cp} HTTP/1.1\nUpgrade: websocket\n{head}: Basic {secret}", False
    if sort == 2:
        secret = pick(rng, URLSAFE, rng.randint(40, 64))
        return "bearer", secret, f"> Authorization: Bearer {secret}", False
    if sort == 3:
        secret = base64.b64encode(_uid(rng).encode()).decode()
        return "ocpi_token", secret, f"GET /ocpi/2.2/sessions?limit=50\nAuthorization: Token {secret}", False
    secret = base64.b64encode(f"dealer{rng.randint(100, 999)}:{password_value(rng)}".encode()).decode()
    return "proxy_basic", secret, f"Proxy-Authorization: Basic {secret}", False


def jwt_value(rng: random.Random) -> str:
    """A JWS compact JWT (RFC 7519/7515): base64url header, claims, RS256 or ES256 signature bytes."""
    alg = rng.choice(["RS256", "ES256"])
    header = {"alg": alg, "typ": "JWT", "kid": pick(rng, HEX, 8)}
    now = rng.randint(1_735_000_000, 1_760_000_000)
    claims = {"iss": rng.choice(["https://auth.connected-car.io", "https://login.oem-cloud.net/oauth2"]),
              "sub": _uid(rng), "aud": rng.choice(["fleet-api", "vehicle-commands", "charging"]),
              "scp": rng.sample(["vehicle_device_data", "vehicle_cmds", "vehicle_charging_cmds", "energy_device_data",
                                 "offline_access"], 2), "iat": now, "exp": now + 28800}
    sig = rng.randbytes(256 if alg == "RS256" else 64)
    return ".".join(b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)) + \
        "." + b64url(sig)


def v_jwt(rng: random.Random, i: int) -> Value:
    t = jwt_value(rng)
    styles = [("bearer", f"Authorization: Bearer {t}"), ("token_response", f'{{"access_token":"{t}","token_type":'
                                                                             f'"Bearer","expires_in":28800}}'),
              ("env", f"OEM_ACCESS_TOKEN={t}"), ("query", f"wss://streaming.connected-car.io/v1/stream?token={t}"),
              ("cli", f"fleetctl --token {t} vehicles list"), ("chat", f"here's the token from the app: {t}")]
    style, snip = styles[i % len(styles)]
    return style, t, snip, False


P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def _armour_body(pem: str) -> str:
    """The base64 lines between a PEM's BEGIN and END lines (RFC 7468): the key itself."""
    return "\n".join(pem.strip().splitlines()[1:-1])


def v_private_key(rng: random.Random, i: int) -> Value:
    sort = i % 3
    if sort < 2:
        key = ec.derive_private_key(rng.randrange(1, P256_ORDER), ec.SECP256R1())
        fmt = serialization.PrivateFormat.TraditionalOpenSSL if sort == 0 else serialization.PrivateFormat.PKCS8
        pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
        style = "sec1_p256" if sort == 0 else "pkcs8_p256"
    else:
        blob = openssh_ed25519_blob(rng.randbytes(32), rng.randbytes(32), rng.randbytes(4),
                                    f"ota-signer@build{rng.randint(1, 9)}".encode())
        body = base64.b64encode(blob).decode()
        pem = ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(body, 70, "\n")
               + "\n-----END OPENSSH PRIVATE KEY-----\n")
        style = "openssh_ed25519"
    lead = rng.choice(["# /etc/tcu/certs/device.key (AWS IoT thing tcu-{n})\n", "keyfile for mosquitto bridge:\n",
                       "OTA signing key, do not commit:\n", "$ cat /data/secrets/tcu-{n}/tls.key\n",
                       ""]).format(n=rng.randint(1, 9999))
    return style, _armour_body(pem), lead + pem.strip(), False


def v_session_cookie(rng: random.Random, i: int) -> Value:
    sort = i % 6
    if sort == 0:
        v = b64url(rng.randbytes(32))
        return "cookie_header", v, f"Cookie: theme=dark; sid={v}; lang=de", False
    if sort == 1:
        v = b64url(rng.randbytes(rng.choice([24, 32])))
        return "set_cookie_host", v, f"Set-Cookie: __Host-session={v}; Path=/; Secure; HttpOnly; SameSite=Lax", False
    if sort == 2:
        v = f"s%3A{pick(rng, URLSAFE, 32)}.{base64.b64encode(rng.randbytes(32)).decode().rstrip('=')}"
        return "express_signed", v, f"Cookie: connect.sid={v}", False
    if sort == 3:
        v = pick(rng, LOWER + string.digits, 26)
        return "phpsessid", v, f"parking portal request: Cookie: PHPSESSID={v}", False
    if sort == 4:
        v = pick(rng, "0123456789ABCDEF", 32)
        return "jsessionid", v, f"GET /dms/ro/list;jsessionid={v} HTTP/1.1", False
    v = b64url(rng.randbytes(32))
    expires = rng.randint(1_760_000_000, 1_790_000_000)
    return "cookie_jar", v, f".carshare-portal.eu\tTRUE\t/\tTRUE\t{expires}\tsession\t{v}", False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, B32, rng.choice([16, 32]))
    sort = i % 5
    if sort == 0:
        account = quote(f"{rng.choice(GIVEN)}@{rng.choice(['fleetops.io', 'cpo-net.eu'])}")
        return "otpauth_uri", seed, (f"otpauth://totp/FleetPortal:{account}?secret={seed}&issuer=FleetPortal"
                                     f"&algorithm=SHA1&digits=6&period=30"), False
    if sort == 1:
        v = " ".join(group(seed.lower(), 4, " ").split())
        return "grouped_lower", v, f"Can't scan the QR code? Enter this setup key: {v}", False
    if sort == 2:
        return "env", seed, f"DMS_TOTP_SECRET={seed}", False
    if sort == 3:
        return "label_de", seed, f"2FA-Schlüssel für das Händlerportal: {seed}", False
    return "json", seed, f'{{"mfa": {{"type": "totp", "secret": "{seed}"}}}}', False


PROVIDER_LEADS = ["{e}={v}", "export {e}={v}", '"{e}": "{v}"', "{e}: {v}", "key for prod is {v}", "{v}"]


def provider(env: str, make: Callable[[random.Random, int], tuple[str, str]]) -> Callable[[random.Random, int], Value]:
    """A provider kind: `make` writes (style, token); leads give it an env name, JSON field or nothing."""
    def gen(rng: random.Random, i: int) -> Value:
        style, token = make(rng, i)
        lead = PROVIDER_LEADS[i % len(PROVIDER_LEADS)]
        return style, token, lead.format(e=env, v=token), False
    return gen


def stripe_key(rng: random.Random, i: int) -> tuple[str, str]:
    head = "rk_live_" if i % 4 == 3 else "sk_live_"
    body = pick(rng, ALNUM, 24) if i % 2 else "51" + pick(rng, ALNUM, 97)
    return head[:2] + ("_short" if i % 2 else "_long"), head + body


def google_key(rng: random.Random, _i: int) -> tuple[str, str]:
    return "aiza", "AIza" + pick(rng, URLSAFE, 35)


def mapbox_secret(rng: random.Random, _i: int) -> tuple[str, str]:
    payload = json.dumps({"u": f"{rng.choice(['fleetops', 'cpo-maps', 'ride-eu'])}{rng.randint(1, 99)}",
                          "a": pick(rng, LOWER + string.digits, 25)}, separators=(",", ":"))
    return "sk", f"sk.{b64url(payload.encode())}.{pick(rng, URLSAFE, 22)}"


def sendgrid_key(rng: random.Random, _i: int) -> tuple[str, str]:
    return "sg", f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}"


def github_token(rng: random.Random, i: int) -> tuple[str, str]:
    prefix = ["ghp_", "gho_", "ghs_"][i % 3]
    return prefix.rstrip("_"), crc_token(rng, prefix)


def gitlab_pat(rng: random.Random, _i: int) -> tuple[str, str]:
    return "glpat", "glpat-" + pick(rng, URLSAFE, 20)


def slack_token(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 == 2:
        return "xoxp", (f"xoxp-{rng.randint(10**10, 10**13)}-{rng.randint(10**10, 10**13)}-"
                        f"{rng.randint(10**10, 10**13)}-{pick(rng, HEX, 32)}")
    return "xoxb", f"xoxb-{rng.randint(10**10, 10**13)}-{rng.randint(10**11, 10**14)}-{pick(rng, ALNUM, 24)}"


PROVIDERS = {
    "stripe_secret_key": provider("STRIPE_SECRET_KEY", stripe_key),
    "google_api_key": provider("GOOGLE_MAPS_API_KEY", google_key),
    "mapbox_secret_token": provider("MAPBOX_ACCESS_TOKEN", mapbox_secret),
    "sendgrid_key": provider("SENDGRID_API_KEY", sendgrid_key),
    "github_token": provider("GITHUB_TOKEN", github_token),
    "gitlab_pat": provider("GITLAB_TOKEN", gitlab_pat),
    "slack_bot_token": provider("SLACK_BOT_TOKEN", slack_token),
}


# ---- national ids and the VIN (outside the target) ------------------------------------------------------------

def _birth(rng: random.Random, first: int = 1950, last: int = 2005) -> tuple[int, int, int]:
    return rng.randint(first, last), rng.randint(1, 12), rng.randint(1, 28)


def fr_nir(rng: random.Random) -> str:
    """INSEE NIR: sex, YY, MM, department (not 20, Corsica is 2A/2B), commune, order; key 97 - n mod 97."""
    y, m, _d = _birth(rng)
    dept = rng.choice([d for d in range(1, 96) if d != 20])
    n = f"{rng.randint(1, 2)}{y % 100:02d}{m:02d}{dept:02d}{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}"
    key = 97 - int(n) % 97
    return f"{n[0]} {n[1:3]} {n[3:5]} {n[5:7]} {n[7:10]} {n[10:13]} {key:02d}"


def se_personnummer(rng: random.Random) -> str:
    """Skatteverket: YYMMDD, a separator (- under 100 years), three digits and the Luhn digit of the nine."""
    y, m, d = _birth(rng)
    body = f"{y % 100:02d}{m:02d}{d:02d}{digits(rng, 3)}"
    return f"{body[:6]}-{body[6:]}{luhn_digit(body)}"


def fi_hetu(rng: random.Random) -> str:
    """DVV henkilötunnus: DDMMYY, century sign (- 1900s, A 2000s), individual number 002-899, mod 31 letter."""
    y, m, d = _birth(rng)
    ind = rng.randint(2, 899)
    num = int(f"{d:02d}{m:02d}{y % 100:02d}{ind:03d}")
    check = "0123456789ABCDEFHJKLMNPRSTUVWXY"[num % 31]
    return f"{d:02d}{m:02d}{y % 100:02d}{'-' if y < 2000 else 'A'}{ind:03d}{check}"


def _mod11(ds: str, weights: list[int]) -> int:
    r = 11 - sum(int(c) * w for c, w in zip(ds, weights, strict=True)) % 11
    return 0 if r == 11 else r


def no_fnr(rng: random.Random) -> str:
    """Skatteetaten fødselsnummer: DDMMYY, individual number (000-499 for 1900s, 500-999 from 2000), K1, K2."""
    while True:
        y, m, d = _birth(rng)
        ind = rng.randint(0, 499) if y < 2000 else rng.randint(500, 999)
        base = f"{d:02d}{m:02d}{y % 100:02d}{ind:03d}"
        k1 = _mod11(base, [3, 7, 6, 1, 8, 9, 4, 5, 2])
        k2 = _mod11(base + str(k1), [5, 4, 3, 2, 7, 6, 5, 4, 3, 2]) if k1 != 10 else 10
        if k1 != 10 and k2 != 10:
            return f"{base}{k1}{k2}"


def be_rrn(rng: random.Random) -> str:
    """Belgian national register number: YYMMDD, serial (odd men, even women), 97 - n mod 97 ('2' prefix from
    2000)."""
    y, m, d = _birth(rng)
    base = f"{y % 100:02d}{m:02d}{d:02d}{rng.randint(1, 997):03d}"
    check = 97 - int(("2" if y >= 2000 else "") + base) % 97
    return f"{base[:2]}.{base[2:4]}.{base[4:6]}-{base[6:]}.{check:02d}"


CN_AREAS = ["110101", "310104", "440305", "330106", "510107", "420106", "320102", "610113"]


def cn_ric(rng: random.Random) -> str:
    """GB 11643 resident id: area, YYYYMMDD, sequence, ISO 7064 MOD 11-2 check character."""
    y, m, d = _birth(rng)
    body = f"{rng.choice(CN_AREAS)}{y}{m:02d}{d:02d}{digits(rng, 3)}"
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    return body + "10X98765432"[sum(int(c) * w for c, w in zip(body, weights, strict=True)) % 11]


def cl_rut(rng: random.Random) -> str:
    """SII RUT: body, mod 11 with weights 2-7 from the right, 11 -> 0, 10 -> K."""
    body = rng.randint(5_000_000, 25_999_999)
    total = sum(int(c) * (2 + k % 6) for k, c in enumerate(reversed(str(body))))
    dv = {11: "0", 10: "K"}.get(11 - total % 11, str(11 - total % 11))
    return f"{body:,}".replace(",", ".") + f"-{dv}"


VIN_CHARS = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
VIN_VALUE = {**{str(n): n for n in range(10)}, **dict(zip("ABCDEFGH", range(1, 9), strict=True)),
             **dict(zip("JKLMN", range(1, 6), strict=True)), "P": 7, "R": 9,
             **dict(zip("STUVWXYZ", range(2, 10), strict=True))}
VIN_WEIGHTS = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2]


def vin(rng: random.Random) -> str:
    """ISO 3779 VIN: WMI, VDS, the 49 CFR 565.15 check digit (weighted sum mod 11, 10 -> X), model year (not U, Z,
    0), plant, serial."""
    partial = (rng.choice(["WBA", "WVW", "5YJ", "1HG", "JTD", "VF1", "YV1", "KMH", "SAL", "ZFA", "3FA", "WDD"])
               + pick(rng, VIN_CHARS, 5) + "0" + rng.choice("ABCDEFGHJKLMNPRSTVWXY123456789")
               + pick(rng, VIN_CHARS, 1) + digits(rng, 6))
    total = sum(VIN_VALUE[c] * w for c, w in zip(partial, VIN_WEIGHTS, strict=True))
    return partial[:8] + ("X" if total % 11 == 10 else str(total % 11)) + partial[9:]


IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "fr_nir": (fr_nir, ["N° de sécurité sociale", "NIR du conducteur", "numéro de sécu"]),
    "se_personnummer": (se_personnummer, ["personnummer", "förarens personnummer", "pnr"]),
    "fi_hetu": (fi_hetu, ["henkilötunnus", "hetu", "kuljettajan henkilötunnus"]),
    "no_fnr": (no_fnr, ["fødselsnummer", "fnr", "sjåførens fødselsnummer"]),
    "be_rrn": (be_rrn, ["numéro de registre national", "rijksregisternummer", "INSZ"]),
    "cn_ric": (cn_ric, ["身份证号", "司机身份证号码", "居民身份证"]),
    "cl_rut": (cl_rut, ["RUT", "RUT del conductor", "Rol Único Tributario"]),
    "vin": (vin, ["VIN", "Fahrgestellnummer", "numéro de série (VIN)"]),
}
ID_TEMPLATES = ["{c}: {v}", "driver onboarding — {c} {v}", "{c} {v} (copie du permis jointe)",
                "| conducteur | {c} |\n|---|---|\n| A. Lind | {v} |", "{c}={v}"]


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    make, contexts = IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        v = make(rng)
        tmpl = ID_TEMPLATES[i % len(ID_TEMPLATES)]
        return f"t{i % len(ID_TEMPLATES)}", v, tmpl.format(c=rng.choice(contexts), v=v), False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": phone_case("us", US_FORMS), "phone_uk": phone_case("uk", UK_FORMS),
    "phone_fr": phone_case("fr", FR_FORMS), "phone_de": phone_case("de", DE_FORMS),
    "phone_in": phone_case("in", IN_FORMS), "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "fuel_card": v_fuel_card, "ocpp_auth_key": v_ocpp_auth_key, "auth_header": v_auth_header, "jwt": v_jwt,
    "private_key": v_private_key, "session_cookie": v_session_cookie, "totp_seed": v_totp_seed,
    **PROVIDERS, **{k: national_id(k) for k in IDS}}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists."""
    _style, secret, snip, raw_only = value
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

DTCS = [("P0301", "Cylinder 1 Misfire Detected"), ("P0420", "Catalyst System Efficiency Below Threshold (Bank 1)"),
        ("P0171", "System Too Lean (Bank 1)"), ("U0100", "Lost Communication With ECM/PCM 'A'"),
        ("P0A80", "Replace Hybrid Battery Pack"), ("C0035", "Left Front Wheel Speed Sensor Circuit"),
        ("P0128", "Coolant Thermostat Below Regulating Temperature"), ("B1318", "Battery Voltage Low"),
        ("P0442", "EVAP System Small Leak Detected"), ("U0401", "Invalid Data Received From ECM/PCM A")]


def nm_obd_dtc(rng: random.Random) -> str:
    code, text = rng.choice(DTCS)
    return (f"DTC {code} {text} — status 0x{rng.randint(8, 0xEF):02X}, freeze frame: RPM {rng.randint(700, 4500)}, "
            f"ECT {rng.randint(70, 105)}°C, load {rng.randint(10, 90)}%")


def nm_can_frames(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "\n".join(f"  can1  {rng.randint(0x100, 0x7FF):03X}   [8]  "
                         + " ".join(pick(rng, "0123456789ABCDEF", 2) for _ in range(8)) for _ in range(3))
    sig = rng.choice([("SoC", "%", 0.5), ("PackVoltage", "V", 0.1), ("MotorSpeed", "rpm", 0.125)])
    return (f"BO_ {rng.randint(256, 2047)} BMS_Status: 8 BMS\n SG_ {sig[0]} : {rng.randint(0, 48)}|16@1+ "
            f"({sig[2]},0) [0|{rng.randint(100, 9000)}] \"{sig[1]}\" VCU")


def nm_ocpp_ids(rng: random.Random) -> str:
    return (f'[3,"{_uid(rng)}",{{"transactionId":{rng.randint(1, 10**7)},"idTagInfo":{{"status":"Accepted"}}}}] '
            f"connectorId={rng.randint(1, 2)} reservationId={rng.randint(1, 9999)}")


def nm_evse_ids(rng: random.Random) -> str:
    country = rng.choice(["DE", "NL", "FR", "AT", "BE", "SE"])
    op = pick(rng, UPPER + string.digits, 3)
    return (f"EVSE ID {country}*{op}*E{digits(rng, rng.randint(4, 8))}*{rng.randint(1, 4)} "
            f"(OCPI location LOC-{rng.randint(1000, 99999)}, operator {country}*{op})")


HUBS = [("Ionity Aichstetten", 47.89, 9.96), ("Fastned Amsterdam A10", 52.34, 4.87), ("Hub Lyon-Est", 45.73, 4.95),
        ("Supercharger Kettleman City", 35.99, -119.96), ("Depot Linz Hafen", 48.31, 14.31),
        ("Mumbai BKC charging plaza", 19.07, 72.87), ("Gothenburg Torslanda hub", 57.72, 11.77)]


def nm_station_coordinates(rng: random.Random) -> str:
    name, lat, lon = rng.choice(HUBS)
    return (f"{name} (public charging hub): {lat + rng.uniform(-0.01, 0.01):.5f}, {lon + rng.uniform(-0.01, 0.01):.5f}"
            f", {rng.randint(4, 24)} stalls, {rng.choice([150, 300, 350])} kW")


def nm_timestamps(rng: random.Random) -> str:
    epoch = rng.randint(1_735_000_000, 1_760_000_000)
    return rng.choice([f"session started {_ts(rng)}, ended after PT{rng.randint(1, 5)}H{rng.randint(0, 59)}M",
                       f"ts_ms={epoch * 1000 + rng.randint(0, 999)} gps_fix=3D sats={rng.randint(4, 14)}",
                       f"Mar {rng.randint(1, 28)} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:05 heartbeat ok",
                       f"next maintenance window 2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
                       "02:00-04:00 CET"])


def nm_trace_ids(rng: random.Random) -> str:
    return rng.choice([f"traceparent: 00-{pick(rng, HEX, 32)}-{pick(rng, HEX, 16)}-01",
                       f"X-Request-Id: {_uid(rng)}", f"x-amzn-RequestId: {_uid(rng)}",
                       f"correlation_id={pick(rng, HEX, 24)} span={pick(rng, HEX, 16)}"])


def nm_ota_digests(rng: random.Random) -> str:
    blob = rng.randbytes(16)
    return rng.choice([f"tcu-rootfs-{rng.randint(1, 9)}.{rng.randint(0, 30)}.swu "
                       f"sha256:{hashlib.sha256(blob).hexdigest()}",
                       f"built from commit {hashlib.sha1(blob).hexdigest()} (main)",
                       f"<script src=\"/static/js/fleet-map.{hashlib.md5(blob).hexdigest()[:8]}.js\"></script>",
                       f"ETag: \"{hashlib.md5(blob).hexdigest()}\""])


def nm_versions(rng: random.Random) -> str:
    return rng.choice([f"firmware v{rng.randint(1, 6)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}-rc.{rng.randint(1, 5)}"
                       f"+build.{rng.randint(1000, 9999)}",
                       "protocols: OCPP 1.6J, OCPP 2.0.1, ISO 15118-20, OCPI 2.2.1",
                       f"AUTOSAR R{rng.choice(['19-11', '20-11', '22-11'])}, Android Automotive {rng.randint(11, 14)}",
                       f"EVCC stack {rng.randint(1, 3)}.{rng.randint(0, 9)}.{rng.randint(0, 9)} / SECC "
                       f"{rng.randint(1, 3)}.{rng.randint(0, 9)}"])


def nm_meter_values(rng: random.Random) -> str:
    return (f"MeterValues connector {rng.randint(1, 2)}: "
            f"Energy.Active.Import.Register={rng.uniform(1000, 90000):.1f} Wh, "
            f"Power.Active.Import={rng.randint(3000, 350000)} W, SoC={rng.randint(5, 100)}%, tariff "
            f"€{rng.uniform(0.29, 0.79):.2f}/kWh + €{rng.uniform(0, 0.5):.2f}/min idle")


def nm_masked(rng: random.Random) -> str:
    return rng.choice([f"Visa •••• {digits(rng, 4)}", f"card ending in {digits(rng, 4)}",
                       f"DE{digits(rng, 2)} **** **** **** **{digits(rng, 2)} {digits(rng, 2)}",
                       f"{rng.choice(GIVEN)[0]}•••@•••.com", f"+49 151 •••• ••{digits(rng, 2)}",
                       f"sk_live_••••••••{pick(rng, ALNUM, 4)}", "password: ••••••••",
                       f"SSN ***-**-{rng.randint(1, 9999):04d}"])


def nm_placeholders(rng: random.Random) -> str:
    return rng.choice(["password: ********", "API key: <YOUR_API_KEY>", "email: you@example.com",
                       "MQTT_PASSWORD=${MQTT_PASSWORD}", "authorization_key: {{ secrets.OCPP_AUTH_KEY }}",
                       "STRIPE_SECRET_KEY=sk_live_...", "aws_secret_access_key = REPLACE_ME",
                       "Authorization: Bearer <token>", "IBAN: DEkk bbbb bbbb cccc cccc cc",
                       "phone: +1 (XXX) XXX-XXXX", "user@domain.tld", "token=xxxxxxxxxxxxxxxx"])


def nm_form_fields(rng: random.Random) -> str:
    return rng.choice(['<input type="password" name="password" autocomplete="current-password" placeholder="Passwort">',
                       '<input type="hidden" name="csrfmiddlewaretoken">', 'form fields: ["email", "password", "iban"]',
                       '<meta name="csrf-token" content="">', "header name X-CSRF-Token is required on POST",
                       '<input name="authenticity_token" type="hidden">', 'label for="card-number"',
                       f'<input id="otp-{rng.randint(1, 6)}" inputmode="numeric" maxlength="1">'])


def nm_ui_selectors(rng: random.Random) -> str:
    return rng.choice([f"#vehicle-list > li:nth-child({rng.randint(1, 30)}) .soc-badge",
                       f"//div[@data-testid='charge-session-row'][{rng.randint(1, 20)}]/span[2]",
                       f"button[aria-label='Start charging'][data-connector='{rng.randint(1, 2)}']",
                       f"#cp-{rng.randint(1000, 99999)}-status", ".trip-card__fare > strong",
                       f"[data-vin-row='{rng.randint(0, 400)}'] td:last-child"])


def nm_layout(rng: random.Random) -> str:
    w, h = rng.choice([(1920, 1080), (1440, 900), (2560, 1600), (390, 844), (1280, 720)])
    return rng.choice([f"viewport {w}x{h}, deviceScaleFactor {rng.choice([1, 2, 3])}",
                       f"map tile {rng.choice([256, 512])}×{rng.choice([256, 512])} px at zoom {rng.randint(3, 18)}",
                       f".dashboard-tile {{ width: {rng.randint(200, 480)}px; height: {rng.randint(120, 320)}px; }}",
                       f"instrument cluster {w}x{h} @ {rng.choice([30, 60])} Hz"])


def nm_order_numbers(rng: random.Random) -> str:
    return rng.choice([f"repair order RO-{rng.randint(100000, 999999)}",
                       f"parts order PO-2025-{rng.randint(1, 99999):06d}",
                       f"booking ref {pick(rng, UPPER + string.digits, 6)}",
                       f"invoice INV-DE-2025-{rng.randint(1, 999999):06d}",
                       f"toll trip TRX-2025{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}-"
                       f"{rng.randint(1, 999999):06d}",
                       f"recall campaign {rng.randint(20, 25)}V-{rng.randint(100, 899)}"])


def nm_tracking(rng: random.Random) -> str:
    return rng.choice([f"UPS 1Z{pick(rng, UPPER + string.digits, 6)}{digits(rng, 10)}",
                       f"DHL Express waybill {digits(rng, 10)}", f"FedEx tracking {digits(rng, 12)}",
                       f"DPD parcel {digits(rng, 14)}"]) + f" — {rng.choice(['brake discs', 'wallbox', 'TCU module'])}"


SERVICE_LINES = ["AAA roadside assistance 1-800-AAA-HELP (1-800-222-4357)", "AA breakdown 0800 88 77 66",
                 "RAC breakdown 0333 2000 999", "ADAC Pannenhilfe +49 89 20 20 4000",
                 "Emergency: 112 (EU), 911 (US/CA), 999 (UK)", "eCall triggers 112 automatically",
                 "ADAC Pannenhilfe vom Handy: 22 22 22", "Police non-emergency UK: 101",
                 "India highway helpline 1033", "NHS 111 for non-urgent medical help"]


def nm_service_lines(rng: random.Random) -> str:
    return f"{rng.choice(SERVICE_LINES)} (published line)"


def _luhn_bad(rng: random.Random) -> str:
    partial = rng.choice("3456") + digits(rng, 14)
    good = luhn_digit(partial)
    n = partial + str((int(good) + rng.randint(1, 9)) % 10)
    assert not luhn_ok(n)
    return n


def nm_luhn_invalid(rng: random.Random) -> str:
    n = _luhn_bad(rng)
    return rng.choice([f"meter serial {n}", f"session ref {group(n, 4, ' ')}", f"batch {n} exported",
                       f"charger asset tag {group(n, 4, '-')}"])


def nm_aws_example(rng: random.Random) -> str:
    return rng.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                       "docs: AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY (AWS example keys)",
                       "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE"]) + f"  # sample {rng.randint(1, 99)}"


def nm_config_keys(rng: random.Random) -> str:
    return rng.choice(["GetConfiguration: AuthorizationKey is WriteOnly and not reported",
                       f"HeartbeatInterval={rng.choice([300, 600])}, MeterValueSampleInterval=60, "
                       "AuthorizeRemoteTxRequests=true", "set SecurityCtrlr.BasicAuthPassword via SetVariables",
                       "MQTT_PASSWORD and STRIPE_SECRET_KEY are read from Vault at boot",
                       f"SecurityProfile={rng.randint(0, 3)}, CpoName=FleetCharge", "unknownConfigurationKey: FooBar"])


def nm_mqtt_topics(rng: random.Random) -> str:
    return rng.choice([f"fleet/{_veh(rng)}/telemetry/soc",
                       f"$aws/things/tcu-{rng.randint(1, 9999)}/shadow/update/accepted",
                       f"ocpp/{_cp(rng)}/StatusNotification", f"vehicles/+/alerts/#  (qos {rng.randint(0, 2)})"])


def nm_tire_dot(rng: random.Random) -> str:
    return (f"DOT {pick(rng, UPPER + string.digits, 3)} {pick(rng, UPPER + string.digits, 2)} "
            f"{pick(rng, UPPER + string.digits, 4)} {rng.randint(1, 52):02d}{rng.randint(19, 25)} "
            f"— {rng.choice(['205/55 R16', '235/45 R18', '255/40 R20'])}, tread {rng.uniform(1.6, 8):.1f} mm")


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "obd_dtc": nm_obd_dtc, "can_frames": nm_can_frames, "ocpp_ids": nm_ocpp_ids, "evse_ids": nm_evse_ids,
    "station_coordinates": nm_station_coordinates, "timestamps": nm_timestamps, "trace_ids": nm_trace_ids,
    "ota_digests": nm_ota_digests, "versions": nm_versions, "meter_values": nm_meter_values,
    "masked_values": nm_masked, "placeholders": nm_placeholders, "form_field_names": nm_form_fields,
    "ui_selectors": nm_ui_selectors, "layout_sizes": nm_layout, "order_numbers": nm_order_numbers,
    "tracking_numbers": nm_tracking, "service_lines": nm_service_lines, "luhn_invalid": nm_luhn_invalid,
    "aws_example_keys": nm_aws_example, "config_key_names": nm_config_keys, "mqtt_topics": nm_mqtt_topics,
    "tire_dot_codes": nm_tire_dot}


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
