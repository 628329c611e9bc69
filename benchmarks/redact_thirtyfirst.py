"""The thirty-first blind redaction corpus: mobile, IoT and consumer-app agents, what an agent that debugs or operates
apps and devices reads and writes. Written from the formats' public specifications by someone who read neither the
detection rules nor the other corpora.

Carriers (the `form` head): Android `adb logcat` lines, Flutter and React Native (Metro) console lines, Xcode and
Console.app (os_log) lines, Java crash traces, Crashlytics log tabs, SharedPreferences XML and NSUserDefaults
plists (CDATA where the value needs it), `sqlite3` rows, `adb shell run-as` file dumps, mitmproxy flows, MQTT
(`mosquitto_sub -v`, Mosquitto and EMQX broker logs, Zigbee2MQTT and Tasmota consoles), Home Assistant YAML and
logs, ESP-IDF serial monitors and nRF Connect BLE logs, fastlane output, `local.properties`/Expo `.env` files,
Unity `Player.log` and Unreal logs, bug reports in Markdown and the agent's messages to users in 30 languages; as
JSON: FCM HTTP v1 and APNs payloads, Sentry mobile events, Crashlytics BigQuery rows, Apple `.ips` bodies, Firebase
Realtime Database and Supabase (PostgREST) replies, AppSync GraphQL replies, Home Assistant websocket events,
Zigbee2MQTT payloads, AWS IoT device shadows, `az iot hub monitor-events` output, Google Play and App Store
Connect reviews, PlayFab replies, zap-style game-server log lines and MCP tool results. About a third is JSON.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62, RuPay 60/65) with the Luhn digit, also as an EMV tag 5A
(Application PAN, EMVCo Book 3); IBANs, ISO 13616 and the SWIFT IBAN registry's BBAN structures (MOD 97-10); SSNs,
the SSA's rules (area not 000/666/9xx, group not 00, serial not 0000, no advertised numbers); phones, the NANP (no
N11, no 555), Ofcom (no drama ranges), ARCEP (no fiction ranges), BNetzA and TRAI plans with each country's
context words; AWS, IAM's AKIA/ASIA ids (base32 alphabet) and 40-character secrets, also in a Cognito
`GetCredentialsForIdentity` reply; webhooks as Slack, Discord, Teams Workflows, Google Chat, Mattermost, Zapier,
IFTTT Maker and Home Assistant (`/api/webhook/<id>`) document them (the secret is the token segment or value);
Stripe `whsec_` secrets (Dashboard: 32 base62, `stripe listen`: 64 hex); connection strings of Azure IoT Hub
(device and service), Event Hubs, Storage, ADO.NET and MQTT/Postgres/MongoDB/Redis/AMQP/RTSP URIs (the secret is
the key or password only); JWTs (RFC 7519/7515) as Supabase `service_role` keys (HS256), Firebase ID tokens and
Sign in with Apple identity tokens (RS256) and App Store Connect API tokens (ES256); private keys, PEM SEC1 and
PKCS#8 P-256 (App Store Connect and APNs `.p8`, AWS IoT device keys) and OpenSSH Ed25519 (the secret is the body);
cookies (Express signed, Django, PHP, Rails, ASP.NET Core, Steam `steamLoginSecure`); OAuth tokens (Google
`ya29.`/`1//`, GitHub `gho_` with its CRC32, Slack `xoxp-`, Dropbox `sl.`, opaque) in headers, AppAuth dumps and
deep-link fragments (RFC 6749 4.2.2); HTTP Basic (RFC 7617, also fastlane match's `MATCH_GIT_BASIC_AUTHORIZATION`);
TOTP seeds (RFC 4648 base32, Google Authenticator's Key Uri Format); Azure SAS `sig` (IoT Hub MQTT passwords, Blob
OTA links); presigned download signatures (SigV4 `X-Amz-Signature`, GCS V4 `X-Goog-Signature`); the legacy FCM
server key (`AAAA...:APA91b...`); Google API keys (`AIza` + 35) used server-side; Steam Web API keys (32 hex);
GitHub `ghp_` (CRC32) and `github_pat_` tokens; pairing codes, Matter manual codes (Core spec 5.1.4: discriminator
and passcode chunks, Verhoeff digit; no disallowed passcodes) and HomeKit setup codes (XXX-XX-XXX); national ids
(outside the target): French NIR (97 - n mod 97), Italian codice fiscale (odd/even tables, mod 26), Chinese
resident id (ISO 7064 MOD 11-2), Swedish personnummer (Luhn), Finnish HETU (mod 31), Belgian national number (97 -
n mod 97, with the 2000s prefix 2).

Judgements: a case's `secret` is only what must not survive (a webhook's token, a connection string's password, a
cookie's value, a PEM's body, a signed URL's signature). A Wi-Fi passphrase, an MQTT password or a keystore
password is a password. Push device tokens, Firebase web `apiKey`s and Supabase `anon` keys are published to every
client by design, so the corpus holds them neither as values nor as near misses; Google API keys are planted only
where a server holds them. A Matter or HomeKit setup code opens the device to whoever holds it, so it is a kind.
Near misses are what this domain holds that is neither secret nor personal: view ids and selectors, screen
coordinates and display metrics, timestamps, request and event ids, build ids and versions, field names and
placeholders (`!secret` references too), masked values, businesses' published service numbers and emergency
numbers, Luhn-invalid numbers, store order ids, parcel tracking numbers, asset hashes and published signing-cert
fingerprints, GATT UUIDs, MQTT topics, public app identifiers, the AWS docs' EXAMPLE keys, sensor readings and
error codes: none of them identifies a person or opens anything.
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

SEED = 31
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"fr_nir", "it_codice_fiscale", "cn_resident_id", "se_personnummer", "fi_hetu",
                            "be_national_number"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


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


# ---- languages: the agent's messages to users -----------------------------------------------------------------

LANGS: dict[str, tuple[str, str, str, str, str, str]] = {
    # code: (intro, email, phone, password, card number, pairing code)
    "en": ("Here is what I found in the device log", "Email", "Phone", "Password", "Card number", "Setup code"),
    "fr": ("Voici ce que j'ai trouvé dans le journal de l'appareil", "Adresse e-mail", "Téléphone", "Mot de passe",
           "Numéro de carte", "Code d'appairage"),
    "de": ("Das habe ich im Geräteprotokoll gefunden", "E-Mail-Adresse", "Telefon", "Passwort", "Kartennummer",
           "Kopplungscode"),
    "es": ("Esto es lo que encontré en el registro del dispositivo", "Correo electrónico", "Teléfono", "Contraseña",
           "Número de tarjeta", "Código de emparejamiento"),
    "it": ("Ecco cosa ho trovato nel registro del dispositivo", "Indirizzo email", "Telefono", "Password",
           "Numero della carta", "Codice di abbinamento"),
    "pt": ("Eis o que encontrei no registo do dispositivo", "E-mail", "Telefone", "Senha", "Número do cartão",
           "Código de emparelhamento"),
    "nl": ("Dit vond ik in het apparaatlogboek", "E-mailadres", "Telefoonnummer", "Wachtwoord", "Kaartnummer",
           "Koppelcode"),
    "pl": ("Oto, co znalazłem w dzienniku urządzenia", "Adres e-mail", "Numer telefonu", "Hasło", "Numer karty",
           "Kod parowania"),
    "sv": ("Det här hittade jag i enhetens logg", "E-postadress", "Telefonnummer", "Lösenord", "Kortnummer",
           "Parkopplingskod"),
    "da": ("Dette fandt jeg i enhedens log", "E-mailadresse", "Telefonnummer", "Adgangskode", "Kortnummer",
           "Parringskode"),
    "fi": ("Löysin tämän laitteen lokista", "Sähköpostiosoite", "Puhelinnumero", "Salasana", "Kortin numero",
           "Pariliitoskoodi"),
    "no": ("Dette fant jeg i enhetsloggen", "E-postadresse", "Telefonnummer", "Passord", "Kortnummer",
           "Paringskode"),
    "cs": ("Toto jsem našel v protokolu zařízení", "E-mailová adresa", "Telefonní číslo", "Heslo", "Číslo karty",
           "Párovací kód"),
    "tr": ("Cihaz günlüğünde bunu buldum", "E-posta adresi", "Telefon numarası", "Şifre", "Kart numarası",
           "Eşleştirme kodu"),
    "ru": ("Вот что я нашёл в журнале устройства", "Электронная почта", "Номер телефона", "Пароль", "Номер карты",
           "Код сопряжения"),
    "uk": ("Ось що я знайшов у журналі пристрою", "Електронна пошта", "Номер телефону", "Пароль", "Номер картки",
           "Код сполучення"),
    "el": ("Αυτό βρήκα στο αρχείο καταγραφής της συσκευής", "Διεύθυνση email", "Αριθμός τηλεφώνου",
           "Κωδικός πρόσβασης", "Αριθμός κάρτας", "Κωδικός σύζευξης"),
    "ar": ("هذا ما وجدته في سجل الجهاز", "البريد الإلكتروني", "رقم الهاتف", "كلمة المرور", "رقم البطاقة",
           "رمز الإقران"),
    "he": ("זה מה שמצאתי ביומן המכשיר", "דואר אלקטרוני", "מספר טלפון", "סיסמה", "מספר כרטיס", "קוד צימוד"),
    "hi": ("डिवाइस लॉग में मुझे यह मिला", "ईमेल पता", "फ़ोन नंबर", "पासवर्ड", "कार्ड नंबर", "पेयरिंग कोड"),
    "bn": ("ডিভাইসের লগে আমি এটি পেয়েছি", "ইমেল ঠিকানা", "ফোন নম্বর", "পাসওয়ার্ড", "কার্ড নম্বর", "পেয়ারিং কোড"),
    "ta": ("சாதனப் பதிவில் நான் கண்டது இது", "மின்னஞ்சல் முகவரி", "தொலைபேசி எண்", "கடவுச்சொல்", "அட்டை எண்",
           "இணைப்புக் குறியீடு"),
    "ja": ("デバイスのログで見つかった内容です", "メールアドレス", "電話番号", "パスワード", "カード番号",
           "セットアップコード"),
    "zh": ("这是我在设备日志中找到的内容", "电子邮箱", "电话号码", "密码", "卡号", "配对码"),
    "ko": ("기기 로그에서 찾은 내용입니다", "이메일 주소", "전화번호", "비밀번호", "카드 번호", "페어링 코드"),
    "vi": ("Đây là những gì tôi tìm thấy trong nhật ký thiết bị", "Địa chỉ email", "Số điện thoại", "Mật khẩu",
           "Số thẻ", "Mã ghép nối"),
    "th": ("นี่คือสิ่งที่ฉันพบในบันทึกของอุปกรณ์", "อีเมล", "หมายเลขโทรศัพท์", "รหัสผ่าน", "หมายเลขบัตร", "รหัสจับคู่"),
    "id": ("Ini yang saya temukan di log perangkat", "Alamat email", "Nomor telepon", "Kata sandi", "Nomor kartu",
           "Kode pemasangan"),
    "ro": ("Iată ce am găsit în jurnalul dispozitivului", "Adresă de e-mail", "Număr de telefon", "Parolă",
           "Numărul cardului", "Cod de asociere"),
    "hu": ("Ezt találtam az eszköz naplójában", "E-mail-cím", "Telefonszám", "Jelszó", "Kártyaszám",
           "Párosítási kód"),
}
LABEL = {"email": 1, "phone": 2, "password": 3, "card": 4, "pairing": 5}


def agent_msg(rng: random.Random, what: str, value: str, lang: str = "") -> str:
    """The agent telling a user, in the user's language, what a log holds."""
    lang = lang or rng.choice(list(LANGS))
    words = LANGS[lang]
    return f"[{lang}] {words[0]}:\n{words[LABEL[what]]}: {value}"


# ---- carriers -------------------------------------------------------------------------------------------------

APPS = ["com.acme.fitpulse", "io.hearthome.app", "app.ridelane.driver", "com.tidewater.wallet", "net.plantpal",
        "com.kitebyte.game", "de.stadtwerk.meter", "fr.velocite.velo"]
TAGS = ["OkHttp", "AuthRepository", "MqttService", "ProvisioningVM", "FirebaseMessaging", "PaymentSheet",
        "SyncWorker", "BleManager"]


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _fid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _clock(rng: random.Random) -> str:
    return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}"


def _iso(rng: random.Random) -> str:
    return f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{_clock(rng)}Z"


def _epoch(rng: random.Random) -> int:
    return rng.randint(1_700_000_000, 1_740_000_000)


def _lines(prefix: str, snip: str, secret: str) -> str:
    """Each line of `snip` behind a log prefix; a secret spanning lines keeps its lines whole (printed as one
    multi-line message)."""
    if "\n" in secret:
        return prefix + snip
    return "\n".join(prefix + line for line in snip.split("\n"))


def _xml_text(snip: str) -> str:
    return f"<![CDATA[{snip}]]>" if any(ch in snip for ch in "<&>") else snip


def c_logcat(rng: random.Random, snip: str, secret: str) -> str:
    pid = rng.randint(2000, 32000)
    head = f"{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {_clock(rng)} {pid:5d} {pid + rng.randint(1, 90):5d}"
    return _lines(f"{head} {rng.choice('DIWE')} {rng.choice(TAGS):<16}: ", snip, secret)


def c_flutter(rng: random.Random, snip: str, secret: str) -> str:
    return _lines(f"I/flutter ({rng.randint(2000, 32000):5d}): ", snip, secret)


def c_metro(rng: random.Random, snip: str, secret: str) -> str:
    return f" BUNDLE  ./index.js\n\n{_lines(' LOG  ', snip, secret)}"


def c_xcode(rng: random.Random, snip: str, _s: str) -> str:
    app = rng.choice(["FitPulse", "HearthHome", "Ridelane", "Tidewater"])
    return f"2024-03-{rng.randint(1, 28):02d} {_clock(rng)}412+0100 {app}[{rng.randint(300, 9000)}:" \
           f"{rng.randint(100000, 999999)}] {snip}"


def c_oslog(rng: random.Random, snip: str, secret: str) -> str:
    return _lines(f"default\t{_clock(rng)}512+0100\t{rng.choice(['HearthHome', 'FitPulse'])}\t", snip, secret)


def c_crash(rng: random.Random, snip: str, _s: str) -> str:
    app = rng.choice(APPS)
    return (f"FATAL EXCEPTION: main\nProcess: {app}, PID: {rng.randint(2000, 32000)}\n"
            f"java.lang.IllegalStateException: {snip}\n\tat {app}.data.SessionStore.load(SessionStore.kt:"
            f"{rng.randint(20, 400)})\n\tat android.os.Handler.dispatchMessage(Handler.java:106)")


def c_crashlytics(rng: random.Random, snip: str, _s: str) -> str:
    return f"Logs (custom log keys and breadcrumbs)\n{rng.randint(100, 9000)} ms: app_open\n" \
           f"{rng.randint(9001, 20000)} ms: {snip}"


def c_shared_prefs(rng: random.Random, snip: str, _s: str) -> str:
    return ("<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n"
            f"    <boolean name=\"onboarding_done\" value=\"true\" />\n    <string name=\"debug_note\">"
            f"{_xml_text(snip)}</string>\n</map>")


def c_plist(rng: random.Random, snip: str, _s: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n\t<key>lastSyncNote</key>\n'
            f"\t<string>{_xml_text(snip)}</string>\n\t<key>launchCount</key>\n\t<integer>{rng.randint(1, 400)}"
            "</integer>\n</dict>\n</plist>")


def c_sqlite(rng: random.Random, snip: str, _s: str) -> str:
    table = rng.choice(["sync_log", "pending_requests", "device_notes", "kv_store"])
    return f"sqlite> .mode line\nsqlite> SELECT * FROM {table} WHERE id = {rng.randint(1, 900)};\n" \
           f"   id = {rng.randint(1, 900)}\n value = {snip}"


def c_run_as(rng: random.Random, snip: str, _s: str) -> str:
    app = rng.choice(APPS)
    return f"$ adb shell run-as {app} cat files/{rng.choice(['config.txt', 'session.log', 'diag.txt'])}\n{snip}"


def c_mitm(rng: random.Random, snip: str, _s: str) -> str:
    host = rng.choice(["api.fitpulse.app", "cloud.hearthome.io", "backend.kitebyte.gg"])
    return f"POST https://{host}/v2/{rng.choice(['sync', 'devices', 'session'])} HTTP/2.0\n    {snip}\n" \
           f" << 200 OK {rng.randint(1, 9)}.{rng.randint(0, 9)}k"


def c_mosquitto_sub(rng: random.Random, snip: str, _s: str) -> str:
    topic = rng.choice(["home/garage/diag", "devices/thermo-07/log", "tele/plug_3/INFO"])
    return f"$ mosquitto_sub -h 192.168.1.20 -v -t '{topic}'\n{topic} {snip}"


def c_mosquitto_log(rng: random.Random, snip: str, _s: str) -> str:
    t = _epoch(rng)
    return f"{t}: New client connected from 10.0.4.{rng.randint(2, 250)}:{rng.randint(30000, 60000)} as " \
           f"esp32-{pick(rng, HEX, 6)} (p2, c1, k60).\n{t + 1}: {snip}"


def c_emqx(rng: random.Random, snip: str, _s: str) -> str:
    return f"{_iso(rng)} [warning] clientid: gw-{pick(rng, HEX, 8)}, line: 312, mfa: emqx_rule_runtime:eval/2, " \
           f"msg: rule_debug, payload: {snip}"


def c_z2m(rng: random.Random, snip: str, _s: str) -> str:
    return f"[2024-03-{rng.randint(1, 28):02d} {_clock(rng)[:8]}] info: \tz2m: {snip}"


def c_tasmota(rng: random.Random, snip: str, _s: str) -> str:
    return f"{_clock(rng)} CMD: Backlog\n{_clock(rng)} RSL: RESULT = {snip}"


def c_ha_log(rng: random.Random, snip: str, _s: str) -> str:
    comp = rng.choice(["mqtt", "rest", "esphome", "matter", "homekit_controller"])
    return f"2024-03-{rng.randint(1, 28):02d} {_clock(rng)} ERROR (MainThread) " \
           f"[homeassistant.components.{comp}] {snip}"


def c_ha_yaml(rng: random.Random, snip: str, _s: str) -> str:
    path = rng.choice(["secrets.yaml", "configuration.yaml", "packages/garage.yaml"])
    return f"# /config/{path} (pasted by the user)\nhomeassistant:\n  unit_system: metric\n{snip}\n"


def c_serial(rng: random.Random, snip: str, secret: str) -> str:
    ms = rng.randint(300, 9000)
    return f"I ({ms}) boot: ESP-IDF v5.2.1 2nd stage bootloader\n" + _lines(f"I ({ms + 412}) app_main: ", snip, secret)


def c_ble(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_clock(rng)}\tI\tNotification received from 6e400003-b5a3-f393-e0a9-e50e24dcca9e\n"
            f"{_clock(rng)}\tA\t\"{snip}\" received")


def c_fastlane(rng: random.Random, snip: str, secret: str) -> str:
    return f"[{_clock(rng)[:8]}]: ------------------------------\n" + _lines(f"[{_clock(rng)[:8]}]: ", snip, secret)


def c_properties(rng: random.Random, snip: str, _s: str) -> str:
    return f"# local.properties\nsdk.dir=/Users/dev/Library/Android/sdk\n{snip}\n"


def c_dotenv(rng: random.Random, snip: str, _s: str) -> str:
    return f"# .env.production (Expo)\nEXPO_PUBLIC_API_URL=https://api.{rng.choice(['fitpulse', 'ridelane'])}" \
           f".app\n{snip}\n"


def c_unity(rng: random.Random, snip: str, _s: str) -> str:
    return f"{snip}\nUnityEngine.Debug:Log (object)\n(Filename: Assets/Scripts/Net/Backend.cs Line: " \
           f"{rng.randint(20, 300)})"


def c_unreal(rng: random.Random, snip: str, secret: str) -> str:
    return _lines(f"[2024.03.{rng.randint(1, 28):02d}-{_clock(rng).replace(':', '.')}][{rng.randint(0, 999):3d}]"
                  "LogOnline: ", snip, secret)


def c_issue(rng: random.Random, snip: str, _s: str) -> str:
    return f"### Steps to reproduce\n1. Open the app on a Pixel {rng.randint(6, 9)}\n2. Tap *Sync*\n\n" \
           f"### Logs\n```\n{snip}\n```"


def c_agent(rng: random.Random, snip: str, _s: str) -> str:
    return f"assistant: {LANGS[rng.choice(list(LANGS))][0]}:\n\n{snip}"


TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "logcat": c_logcat, "flutter": c_flutter, "metro": c_metro, "xcode": c_xcode, "oslog": c_oslog,
    "crash": c_crash, "crashlytics": c_crashlytics, "shared_prefs": c_shared_prefs, "plist": c_plist,
    "sqlite": c_sqlite, "run_as": c_run_as, "mitm": c_mitm, "mosquitto_sub": c_mosquitto_sub,
    "mosquitto_log": c_mosquitto_log, "emqx": c_emqx, "z2m": c_z2m, "tasmota": c_tasmota, "ha_log": c_ha_log,
    "ha_yaml": c_ha_yaml, "serial": c_serial, "ble": c_ble, "fastlane": c_fastlane, "properties": c_properties,
    "dotenv": c_dotenv, "unity": c_unity, "unreal": c_unreal, "issue": c_issue, "agent": c_agent,
}


def j_fcm(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"message": {"topic": "ops-alerts", "data": {"kind": "diag", "detail": snip},
                              "android": {"priority": "high", "ttl": "3600s"}}})


def j_apns(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"aps": {"alert": {"title": "Device report", "body": snip}, "sound": "default",
                          "thread-id": "diag"}, "screen": "settings/devices"})


def j_sentry(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"event_id": pick(rng, HEX, 32), "platform": rng.choice(["cocoa", "java"]), "level": "error",
                  "breadcrumbs": {"values": [{"timestamp": _epoch(rng), "category": "console", "message": snip}]},
                  "contexts": {"os": {"name": "iOS", "version": "17.4.1"}}})


def j_crashlytics(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"platform": "ANDROID", "issue_id": pick(rng, HEX, 32), "event_id": pick(rng, HEX, 32),
                  "logs": [{"timestamp": _iso(rng), "message": snip}], "device": {"model": "Pixel 8"}})


def j_ips(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"procName": rng.choice(["HearthHome", "FitPulse"]), "exception": {"type": "EXC_CRASH",
                  "signal": "SIGABRT"}, "asi": {"libsystem_c.dylib": ["abort() called", snip]},
                  "osVersion": {"train": "iPhone OS 17.4.1", "build": "21E236"}})


def j_rtdb(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"devices": {"-N" + pick(rng, URLSAFE, 18): {"room": "hall", "last_log": snip,
                                                              "updated": _epoch(rng) * 1000}}})


def j_supabase(rng: random.Random, snip: str, _s: str) -> str:
    return _dump([{"id": rng.randint(1, 90000), "created_at": _iso(rng), "device_id": _fid(rng), "payload": snip}])


def j_appsync(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"data": {"getDeviceLog": {"id": _fid(rng), "message": snip, "__typename": "DeviceLog"}}})


def j_ha_ws(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": rng.randint(1, 500), "type": "event", "event": {"event_type": "system_log_event", "data": {
        "name": "homeassistant.components.mqtt", "message": [snip], "level": "ERROR"}}})


def j_z2m(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"battery": rng.randint(10, 100), "linkquality": rng.randint(20, 255), "last_error": snip})


def j_shadow(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"state": {"reported": {"fw": "2.4.17", "diag": snip}}, "version": rng.randint(1, 9000),
                  "timestamp": _epoch(rng)})


def j_iothub(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"event": {"origin": f"thermo-{rng.randint(1, 99):02d}", "module": "", "interface": "",
                            "component": "", "payload": snip}})


def j_play_review(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"reviewId": "gp:AOqpTO" + pick(rng, URLSAFE, 40), "authorName": "A Google user", "comments": [
        {"userComment": {"text": snip, "starRating": rng.randint(1, 3), "lastModified": {"seconds": _epoch(rng)}}}]})


def j_asc_review(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"data": [{"type": "customerReviews", "id": digits(rng, 11), "attributes": {
        "rating": rng.randint(1, 3), "title": "Cannot log in", "body": snip, "territory": "FRA"}}]})


def j_playfab(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"code": 200, "status": "OK", "data": {"Data": {"support_note": {
        "Value": snip, "LastUpdated": _iso(rng), "Permission": "Private"}}}})


def j_zap(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"level": "error", "ts": _epoch(rng) + 0.25, "caller": "matchmaker/session.go:212", "msg": snip})


def j_mcp(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"jsonrpc": "2.0", "id": rng.randint(1, 99), "result": {
        "content": [{"type": "text", "text": snip}], "isError": False}})


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "fcm": j_fcm, "apns": j_apns, "sentry": j_sentry, "crashlytics_bq": j_crashlytics, "ips": j_ips,
    "rtdb": j_rtdb, "supabase": j_supabase, "appsync": j_appsync, "ha_ws": j_ha_ws, "z2m_json": j_z2m,
    "shadow": j_shadow, "iothub": j_iothub, "play_review": j_play_review, "asc_review": j_asc_review,
    "playfab": j_playfab, "zap": j_zap, "mcp": j_mcp,
}


# ---- values: secrets ------------------------------------------------------------------------------------------

WORDS = ["sunflower", "maple", "harbor", "kiwi", "tiger", "orbit", "falcon", "nebula", "cobalt", "pixel", "meadow",
         "rocket", "lantern", "quartz", "willow", "zephyr", "gecko", "saffron"]
SYMS = "!#$%*-_.@?+="
USERS = ["homeassistant", "z2m", "esp_gateway", "builduser", "ops", "mqtt_bridge", "kiosk", "ci"]


def password_value(rng: random.Random) -> str:
    """A passphrase as people choose them (two words, digits, a symbol) or a generated one."""
    if rng.random() < 0.5:
        return rng.choice(WORDS).capitalize() + rng.choice(WORDS) + digits(rng, rng.randint(2, 4)) + rng.choice(SYMS)
    return pick(rng, ALNUM, 2) + pick(rng, ALNUM + SYMS, rng.randint(10, 20)) + pick(rng, ALNUM, 1)


PASSWORD_FORMS: list[tuple[str, str]] = [
    ("wpa_supplicant", 'network={{\n    ssid="HomeNet-5G"\n    psk="{v}"\n    key_mgmt=WPA-PSK\n}}'),
    ("wifi_prov", "wifi_prov_mgr: Received Wi-Fi credentials SSID: Garage-IoT Password: {v}"),
    ("ha_secrets", "mqtt_password: {v}"),
    ("mosquitto_pub", "mosquitto_pub -h 192.168.1.20 -u {u} -P '{v}' -t 'home/door/cmd' -m open"),
    ("login_body", '--> POST /v1/auth/login\n{{"username":"runner_{n}","password":"{v}"}}'),
    ("gradle_signing", "storeFile=upload.jks\nstorePassword={v}\nkeyAlias=upload"),
    ("fastlane_env", "FASTLANE_PASSWORD={v}"),
    ("match_env", "MATCH_PASSWORD={v}"),
    ("prefs", '<string name="router_admin_password">{v}</string>'),
    ("at_command", 'AT+CWJAP="Office-2G","{v}"\r\nWIFI CONNECTED'),
    ("sqlite_psk", "ssid = Cafe-Guest\n  psk = {v}"),
    ("camera_yaml", "camera:\n  - platform: generic\n    username: admin\n    password: {v}"),
    ("steamcmd", "steamcmd +login {u} {v} +run_app_build ../scripts/app_build_1000.vdf +quit"),
    ("keytool", "keytool -list -v -keystore release.keystore -alias upload -storepass {v}"),
    ("z2m_yaml", "mqtt:\n  server: mqtt://localhost:1883\n  user: {u}\n  password: {v}"),
]


def v_password(rng: random.Random, i: int) -> Value:
    v = password_value(rng)
    if i % 7 == 6:
        return "agent_msg", v, agent_msg(rng, "password", v), False
    style, tpl = PASSWORD_FORMS[i % len(PASSWORD_FORMS)]
    return style, v, tpl.format(v=v, u=rng.choice(USERS), n=rng.randint(10, 999)), False


def aws_key_id(rng: random.Random, temporary: bool = False) -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (temporary) and 16 characters of the base32 alphabet."""
    return ("ASIA" if temporary else "AKIA") + pick(rng, B32, 16)


AWS_FORMS: list[tuple[str, str]] = [
    ("credentials", "[amplify-dev]\naws_access_key_id = {k}\naws_secret_access_key = {v}\nregion = eu-west-1"),
    ("cognito", '{{"Credentials":{{"AccessKeyId":"{t}","SecretKey":"{v}","Expiration":1710411164}},'
                '"IdentityId":"eu-west-1:{g}"}}'),
    ("sdk_log", "AWSMobileClient: credentials refreshed accessKey={t} secretKey={v}"),
    ("env", "AWS_ACCESS_KEY_ID={k}\nAWS_SECRET_ACCESS_KEY={v}"),
    ("fastlane_s3", 'aws_s3(access_key: "{k}", secret_access_key: "{v}", bucket: "beta-builds")'),
    ("boto3", 'boto3.client("iot", aws_access_key_id="{k}", aws_secret_access_key="{v}")'),
    ("csv", "Access key ID,Secret access key\n{k},{v}"),
    ("unreal_ini", "[/Script/AWSCore.Settings]\nAccessKey={k}\nSecretKey={v}"),
    ("beside", "iot provisioning creds {k} {v}"),
]


def v_aws_secret(rng: random.Random, i: int) -> Value:
    v = pick(rng, B64, 40)
    style, tpl = AWS_FORMS[i % len(AWS_FORMS)]
    return style, v, tpl.format(k=aws_key_id(rng), t=aws_key_id(rng, True), v=v, g=_fid(rng)), False


def _webhook(rng: random.Random, style: str) -> tuple[str, str]:
    """(url, token): each provider's documented webhook URL shape; the token is what opens it."""
    if style == "slack":
        tok = pick(rng, ALNUM, 24)
        return f"https://hooks.slack.com/services/T{pick(rng, UPPER + string.digits, 8)}/" \
               f"B{pick(rng, UPPER + string.digits, 10)}/{tok}", tok
    if style == "discord":
        tok = pick(rng, URLSAFE, 68)
        return f"https://discord.com/api/webhooks/1{digits(rng, 18)}/{tok}", tok
    if style == "teams":
        tok = pick(rng, URLSAFE, 43)
        return (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
                f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}",
                tok)
    if style == "google_chat":
        tok = pick(rng, URLSAFE, 43)
        return (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?"
                f"key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={tok}", tok)
    if style == "mattermost":
        tok = pick(rng, LOWNUM, 26)
        return f"https://chat.hearthome.io/hooks/{tok}", tok
    if style == "zapier":
        tok = pick(rng, LOWNUM, 7)
        return f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{tok}/", tok
    if style == "ifttt":
        tok = pick(rng, URLSAFE, 22)
        return f"https://maker.ifttt.com/trigger/door_opened/with/key/{tok}", tok
    tok = pick(rng, HEX, 64)
    return f"https://{pick(rng, LOWNUM, 16)}.ui.nabu.casa/api/webhook/{tok}", tok


WEBHOOK_FORMS = ["SLACK_WEBHOOK_URL={u}", 'slack(slack_url: "{u}", message: "Build uploaded to TestFlight")',
                 "curl -X POST -H 'Content-Type: application/json' -d '{{\"text\":\"OTA done\"}}' {u}",
                 "alert target: {u}", "notify:\n  - platform: rest\n    resource: {u}"]


def v_webhook(rng: random.Random, i: int) -> Value:
    style = ["slack", "discord", "teams", "google_chat", "mattermost", "zapier", "ifttt", "ha"][i % 8]
    url, tok = _webhook(rng, style)
    return style, tok, rng.choice(WEBHOOK_FORMS).format(u=url), False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    v = "whsec_" + (pick(rng, HEX, 64) if i % 2 else pick(rng, ALNUM, 32))
    forms = [("stripe_listen", "> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret "
                               "is {v} (^C to quit)"),
             ("functions_config", "firebase functions:config:set stripe.webhook_secret=\"{v}\""),
             ("supabase_secrets", "supabase secrets set STRIPE_WEBHOOK_SECRET={v}"),
             ("env", "STRIPE_WEBHOOK_SECRET={v}"),
             ("log", "webhook verify failed with endpointSecret={v}: No signatures found matching the payload")]
    style, tpl = forms[i % len(forms)]
    return style, v, tpl.format(v=v), False


def _b64key(rng: random.Random, n: int) -> str:
    return base64.b64encode(rng.randbytes(n)).decode()


def _uri_password(rng: random.Random) -> str:
    return pick(rng, ALNUM, 3) + pick(rng, ALNUM + "-_.~", rng.randint(12, 24)) + pick(rng, ALNUM, 1)


def v_connection_string(rng: random.Random, i: int) -> Value:
    style = ["iothub_device", "iothub_service", "eventhub", "storage", "mqtt_uri", "supabase_pg", "mongodb",
             "redis", "amqp", "rtsp", "adonet"][i % 11]
    hub = rng.choice(["hh-prod-hub", "thermo-fleet", "plantpal-iot"])
    if style in ("iothub_device", "iothub_service", "eventhub", "storage"):
        key = _b64key(rng, 64 if style == "storage" else 32)
        text = {"iothub_device": f"HostName={hub}.azure-devices.net;DeviceId=thermo-{rng.randint(1, 99):02d};"
                                 f"SharedAccessKey={key}",
                "iothub_service": f"HostName={hub}.azure-devices.net;SharedAccessKeyName=iothubowner;"
                                  f"SharedAccessKey={key}",
                "eventhub": f"Endpoint=sb://ihsuprodamres{digits(rng, 3)}dednamespace.servicebus.windows.net/;"
                            f"SharedAccessKeyName=iothubowner;SharedAccessKey={key};EntityPath={hub}",
                "storage": f"DefaultEndpointsProtocol=https;AccountName=otafirmware{digits(rng, 2)};AccountKey={key};"
                           "EndpointSuffix=core.windows.net"}[style]
        return style, key, f"IOTHUB_CONNECTION_STRING=\"{text}\"" if i % 2 else text, False
    pw = _uri_password(rng)
    text = {"mqtt_uri": f"mqtts://{rng.choice(USERS)}:{pw}@broker.hearthome.io:8883",
            "supabase_pg": f"postgresql://postgres.{pick(rng, LOWER, 20)}:{pw}@aws-0-eu-central-1.pooler.supabase.com"
                           ":6543/postgres",
            "mongodb": f"mongodb+srv://gameadmin:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/players",
            "redis": f"rediss://default:{pw}@eu1-{pick(rng, LOWER, 8)}.upstash.io:6379",
            "amqp": f"amqps://{pick(rng, LOWER, 8)}:{pw}@goose.rmq2.cloudamqp.com/{pick(rng, LOWER, 8)}",
            "rtsp": f"rtsp://admin:{pw}@192.168.1.{rng.randint(20, 250)}:554/Streaming/Channels/101",
            "adonet": f"Server=tcp:kite-{pick(rng, LOWER, 6)}.database.windows.net,1433;Initial Catalog=playerdb;"
                      f"User ID=gameadmin;Password={pw};Encrypt=True;"}[style]
    return style, pw, text, False


KEY_LABELS = ["API key: {v}", "api_key={v}", "X-API-Key: {v}", "apiKey: \"{v}\"", "X-SecretKey: {v}",
              "openweathermap:\n  api_key: {v}", "Pushover API token: {v}", "Access Secret: {v}", "Clé API : {v}",
              "API-Schlüssel: {v}", "Clave de API: {v}", "Chiave API: {v}", "Chave de API: {v}", "APIキー: {v}",
              "API 密钥：{v}", "API 키: {v}", "Klucz API: {v}", "API-sleutel: {v}"]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    v = [pick(rng, ALNUM, 32), pick(rng, HEX, 32), pick(rng, UPPER + string.digits, 52), pick(rng, LOWNUM, 30),
         pick(rng, HEX, 40)][i % 5]
    tpl = KEY_LABELS[i % len(KEY_LABELS)]
    return f"label{i % len(KEY_LABELS)}", v, tpl.format(v=v), False


def fullwidth(text: str) -> str:
    """ASCII printable characters as their Unicode full-width forms (U+FF01-FF5E)."""
    return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in text)


def _disguise_base(rng: random.Random, i: int) -> tuple[str, str]:
    which = i // 4 % 5
    if which == 0:
        return "GITHUB_TOKEN=", crc_token(rng, "ghp_")
    if which == 1:
        return "STRIPE_SECRET_KEY=", "sk_live_" + pick(rng, ALNUM, 24)
    if which == 2:
        return "SLACK_BOT_TOKEN=", f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    if which == 3:
        return "aws_secret_access_key = ", pick(rng, B64, 40)
    return "password: ", password_value(rng)


def v_disguised(rng: random.Random, i: int) -> Value:
    label, raw = _disguise_base(rng, i)
    how = ["zero_width", "fullwidth", "percent", "json_u"][i % 4]
    if how == "zero_width":
        at = rng.randint(4, len(raw) - 2)
        v = raw[:at] + rng.choice("\u200b\u200c\u200d\u2060") + raw[at:]
    elif how == "fullwidth":
        v = fullwidth(raw)
    elif how == "percent":
        v = "".join(f"%{ord(ch):02X}" if ch in "%+/=@#?&" or rng.random() < 0.3 else ch for ch in raw)
    else:
        v = "".join(f"\\u{ord(ch):04x}" if rng.random() < 0.3 else ch for ch in raw)
    return how, v, f"{label}{v}", how == "json_u"


# ---- values: personal data ------------------------------------------------------------------------------------

FIRST = ["amelie", "jonas", "priya", "kenji", "sofia", "mateus", "olga", "tariq", "ines", "lukas", "mei", "arjun",
         "chloe", "emre", "hanna", "diego", "yuki", "nadia", "oskar", "leila"]
LAST = ["durand", "schneider", "iyer", "tanaka", "rossi", "oliveira", "petrova", "haddad", "moreau", "weber",
        "chen", "nair", "dubois", "yilmaz", "lindqvist", "garcia", "sato", "kowalska", "nielsen", "farouk"]
MAIL_DOMAINS = ["gmail.com", "outlook.fr", "web.de", "yahoo.co.in", "icloud.com", "proton.me", "gmx.de",
                "orange.fr", "hotmail.co.uk", "naver.com", "libero.it", "seznam.cz", "wp.pl", "mail.ru",
                "fitpulse-team.io", "hearthome.io"]


def email_value(rng: random.Random) -> str:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = rng.choice([f"{first}.{last}", f"{first}{last}{digits(rng, 2)}", f"{first[0]}.{last}",
                        f"{first}_{last}", f"{first}+{rng.choice(['app', 'beta', 'iot'])}", f"{last}.{first}"])
    return f"{local}@{rng.choice(MAIL_DOMAINS)}"


EMAIL_FORMS: list[tuple[str, str]] = [
    ("auth_log", "signInWithEmail:success user={v}"),
    ("sentry_user", "user: {{id: {n}, email: {v}}}"),
    ("prefs", '<string name="last_login_email">{v}</string>'),
    ("sqlite_row", "{n}|{v}|2024-03-14 09:12:44|1"),
    ("testflight", "Invited beta tester {v} to group External QA"),
    ("cognito", "AdminGetUser -> UserAttributes: [sub, email_verified=true, email={v}]"),
    ("smtp_notify", "notify:\n  - name: family\n    platform: smtp\n    recipient: {v}"),
    ("support", "Zendesk SDK: ticket created by requester {v}"),
    ("supabase_auth", "auth.users row: email = {v}, confirmed_at = 2024-03-14"),
]


def v_email(rng: random.Random, i: int) -> Value:
    v = email_value(rng)
    if i % 4 == 3:
        return "agent_msg", v, agent_msg(rng, "email", v), False
    style, tpl = EMAIL_FORMS[i % len(EMAIL_FORMS)]
    return style, v, tpl.format(v=v, n=rng.randint(1000, 99999)), False


PhoneForm = Callable[[random.Random], str]


def phone_kind(forms: list[tuple[str, PhoneForm]], contexts: list[str], lang: str) -> Callable[[random.Random, int],
                                                                                                Value]:
    """A phone kind: form `i` of the national plan, inside one of the country's context phrases or the agent's
    message in the user's language."""
    def gen(rng: random.Random, i: int) -> Value:
        style, make = forms[i % len(forms)]
        v = make(rng)
        if i % 5 == 4:
            return style, v, agent_msg(rng, "phone", v, lang if i % 10 == 4 else ""), False
        return style, v, rng.choice(contexts).format(v=v), False
    return gen


NANP_AREAS = ["212", "213", "305", "312", "404", "415", "503", "512", "617", "646", "702", "713", "206", "303",
              "416", "514", "604", "613", "403", "902"]


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """Area, exchange, line: no N11 exchange and no 555 (its 01XX block is for fiction)."""
    while True:
        ex = str(rng.randint(2, 9)) + digits(rng, 2)
        if ex[1:] != "11" and ex != "555":
            return rng.choice(NANP_AREAS), ex, digits(rng, 4)


def _f(fmt: str, split: Callable[[random.Random], tuple[str, ...]]) -> PhoneForm:
    return lambda rng: fmt.format(*split(rng))


US_FORMS: list[tuple[str, PhoneForm]] = [
    ("paren", _f("({}) {}-{}", _nanp)), ("dash", _f("{}-{}-{}", _nanp)), ("dot", _f("{}.{}.{}", _nanp)),
    ("e164_spaced", _f("+1 {} {} {}", _nanp)), ("e164_dash", _f("+1-{}-{}-{}", _nanp)),
    ("one_paren", _f("1 ({}) {}-{}", _nanp)), ("e164", _f("+1{}{}{}", _nanp)),
]
US_CONTEXT = ["Call me at {v}", "cell: {v}", "Phone: {v}", "text me on {v} if the hub goes offline",
              "Mobile number on the account: {v}", "Cellulaire : {v}", "Teléfono: {v}", "phoneNumber={v}",
              "Twilio Verify: sending SMS code to {v}"]

UK_DRAMA = ("07700900", "02079460", "01614960", "01214960", "01134960", "01174960", "01314960", "01414960")


def _uk(rng: random.Random, mobile: bool) -> tuple[str, str]:
    """(trunk prefix with its 0, rest): a mobile 07xxx or a geographic number, never an Ofcom drama number."""
    while True:
        if mobile:
            head, rest = "07" + rng.choice("345789") + digits(rng, 2), digits(rng, 6)
        else:
            head = rng.choice(["020", "0161", "0121", "0131", "0141", "0113", "0117"])
            rest = (rng.choice("378") + digits(rng, 7)) if head == "020" else (str(rng.randint(2, 9)) + digits(rng, 6))
        if not (head + rest).startswith(UK_DRAMA):
            return head, rest


def _uk_print(head: str, rest: str) -> str:
    return f"{head} {rest[:4]} {rest[4:]}" if head == "020" else f"{head} {rest[:3]} {rest[3:]}"


UK_FORMS: list[tuple[str, PhoneForm]] = [
    ("mobile", lambda r: "{} {}".format(*_uk(r, True))),
    ("mobile_compact", lambda r: "".join(_uk(r, True))),
    ("geo", lambda r: _uk_print(*_uk(r, False))),
    ("plus44_mobile", lambda r: "+44 {} {}".format(*((lambda h, s: (h[1:], s))(*_uk(r, True))))),
    ("plus44_trunk", lambda r: "+44 (0)" + _uk_print(*_uk(r, False))[1:]),
    ("plus44_compact", lambda r: "+44" + "".join(_uk(r, True))[1:]),
]
UK_CONTEXT = ["Mobile: {v}", "Tel: {v}", "ring me on {v}", "mob. {v}", "Contact number: {v}",
              "please call the installer on {v}", "Emergency contact (flat 3): {v}"]

FR_FICTION = ("0199", "026191", "035301", "046571", "053649", "063998")


def _fr_digits(rng: random.Random, mobile: bool) -> str:
    """Ten digits: 06/07 mobiles or 01-05 geographic numbers, outside ARCEP's ranges for fiction."""
    while True:
        first = rng.choice(["06", "07"]) if mobile else "0" + str(rng.randint(1, 5))
        num = first + (str(rng.randint(3, 9)) if first == "07" else str(rng.randint(1, 9))) + digits(rng, 7)
        if not num.startswith(FR_FICTION):
            return num


FR_FORMS: list[tuple[str, PhoneForm]] = [
    ("pairs", lambda r: group(_fr_digits(r, True), 2, " ")),
    ("dots", lambda r: group(_fr_digits(r, True), 2, ".")),
    ("compact", lambda r: _fr_digits(r, True)),
    ("fixe", lambda r: group(_fr_digits(r, False), 2, " ")),
    ("plus33", lambda r: (lambda n: f"+33 {n[1]} {group(n[2:], 2, ' ')}")(_fr_digits(r, True))),
    ("plus33_trunk", lambda r: (lambda n: f"+33 (0){n[1]} {group(n[2:], 2, ' ')}")(_fr_digits(r, True))),
]
FR_CONTEXT = ["portable : {v}", "Tél. : {v}", "téléphone : {v}", "joignable au {v}", "mon numéro est le {v}",
              "Rappelez le client au {v}", "numéro de contact du livreur : {v}"]

DE_MOBILE = ["0151", "0152", "0157", "0159", "0160", "0162", "0163", "0170", "0171", "0172", "0173", "0174", "0175",
             "0176", "0177", "0178", "0179"]


def _de_mobile(rng: random.Random) -> tuple[str, str]:
    prefix = rng.choice(DE_MOBILE)
    return prefix, digits(rng, 8 if prefix in ("0151", "0152", "0157", "0159") else rng.choice((7, 8)))


def _de_geo(rng: random.Random) -> tuple[str, str]:
    area = rng.choice(["030", "040", "089", "069", "0221", "0711"])
    return area, str(rng.randint(2, 9)) + digits(rng, 7 if len(area) == 3 else 6)


DE_FORMS: list[tuple[str, PhoneForm]] = [
    ("mobile", lambda r: "{} {}".format(*_de_mobile(r))),
    ("slash", lambda r: "{}/{}".format(*_de_mobile(r))),
    ("dash", lambda r: "{}-{}".format(*_de_mobile(r))),
    ("plus49", lambda r: (lambda p, s: f"+49 {p[1:]} {s}")(*_de_mobile(r))),
    ("plus49_trunk", lambda r: (lambda p, s: f"+49 (0){p[1:]} {s}")(*_de_mobile(r))),
    ("geo", lambda r: "{} {}".format(*_de_geo(r))),
    ("geo_paren", lambda r: "({}) {}".format(*_de_geo(r))),
    ("plus49_geo", lambda r: (lambda p, s: f"+49 {p[1:]} {s}")(*_de_geo(r))),
]
DE_CONTEXT = ["Handy: {v}", "Mobil: {v}", "Telefon: {v}", "Tel.: {v}", "erreichbar unter {v}",
              "Rückrufnummer: {v}", "Bitte den Monteur unter {v} anrufen"]


def _in_mobile(rng: random.Random) -> str:
    return str(rng.randint(6, 9)) + digits(rng, 9)


def _in_geo(rng: random.Random) -> tuple[str, str]:
    return rng.choice(["011", "022", "080", "044", "033", "040"]), str(rng.randint(2, 6)) + digits(rng, 7)


IN_FORMS: list[tuple[str, PhoneForm]] = [
    ("five_five", lambda r: (lambda m: f"{m[:5]} {m[5:]}")(_in_mobile(r))),
    ("plus91", lambda r: (lambda m: f"+91 {m[:5]} {m[5:]}")(_in_mobile(r))),
    ("plus91_dash", lambda r: (lambda m: f"+91-{m}")(_in_mobile(r))),
    ("plus91_compact", lambda r: "+91" + _in_mobile(r)),
    ("trunk0", lambda r: "0" + _in_mobile(r)),
    ("ten", _in_mobile),
    ("std", lambda r: (lambda a, s: f"{a}-{s[:4]} {s[4:]}")(*_in_geo(r))),
]
IN_CONTEXT = ["Mobile No.: {v}", "Mob: {v}", "मोबाइल नंबर: {v}", "फ़ोन: {v}", "கைபேசி: {v}", "মোবাইল: {v}",
              "WhatsApp: {v}", "contact no. {v}", "delivery partner contact: {v}"]

v_phone_us_ca = phone_kind(US_FORMS, US_CONTEXT, "en")
v_phone_uk = phone_kind(UK_FORMS, UK_CONTEXT, "en")
v_phone_fr = phone_kind(FR_FORMS, FR_CONTEXT, "fr")
v_phone_de = phone_kind(DE_FORMS, DE_CONTEXT, "de")
v_phone_in = phone_kind(IN_FORMS, IN_CONTEXT, "hi")


def ssn_digits(rng: random.Random) -> str:
    """Nine digits under the SSA's rules, never the Woolworth or advertised numbers."""
    while True:
        area = rng.randint(1, 899)
        if area == 666:
            continue
        num = f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
        if num not in ("078051120", "219099999", "123456789"):
            return num


SSN_CONTEXT = ["SSN: {v}", "Social Security number: {v}", "KycRepository: submitting ssn={v}",
               "Número de Seguro Social: {v}", "SS# {v}", "identity.ssn = {v}", "tax id (SSN) on file: {v}"]


def v_ssn(rng: random.Random, i: int) -> Value:
    n = ssn_digits(rng)
    style = ["dashed", "spaced", "compact"][i % 3]
    v = {"dashed": f"{n[:3]}-{n[3:5]}-{n[5:]}", "spaced": f"{n[:3]} {n[3:5]} {n[5:]}", "compact": n}[style]
    return style, v, SSN_CONTEXT[i % len(SSN_CONTEXT)].format(v=v), False


def card_number(rng: random.Random, brand: str) -> str:
    """A number in the brand's IIN range and length, with its Luhn digit."""
    prefix, length = {
        "visa": ("4", 16), "mastercard": (str(rng.randint(51, 55)), 16),
        "mastercard2": (str(rng.randint(2221, 2720)), 16), "amex": (rng.choice(["34", "37"]), 15),
        "discover": (rng.choice(["6011", "65"]), 16), "jcb": (str(rng.randint(3528, 3589)), 16),
        "diners": ("36", 14), "unionpay": ("62", rng.choice((16, 19))), "rupay": (rng.choice(["60", "65"]), 16),
    }[brand]
    partial = prefix + digits(rng, length - len(prefix) - 1)
    return partial + luhn_digit(partial)


CARD_FORMS: list[tuple[str, str]] = [
    ("stripe_form", "card[number]={v}&card[exp_month]=11&card[exp_year]=2027"),
    ("braintree", '"creditCard":{{"number":"{v}","expirationDate":"11/27"}}'),
    ("prefs", '<string name="saved_card_number">{v}</string>'),
    ("sqlite", "{n}|{v}|11/27|visa"),
    ("emv_5a", "EMV TLV 5A (Application PAN): {v}"),
    ("breadcrumb", "PaymentSheet: confirm tapped, card={v}"),
    ("support", "the customer read out card {v} over chat"),
]


def v_card(rng: random.Random, i: int) -> Value:
    brand = ["visa", "mastercard", "mastercard2", "amex", "discover", "jcb", "diners", "unionpay", "rupay"][i % 9]
    number = card_number(rng, brand)
    sep = ["", " ", "-"][i // 9 % 3]
    v = group_card(number, sep) if sep and len(number) <= 16 else number
    if i % 6 == 5:
        return f"{brand}/agent_msg", v, agent_msg(rng, "card", v), False
    style, tpl = CARD_FORMS[i % len(CARD_FORMS)]
    return f"{brand}/{style}", v, tpl.format(v=v, n=rng.randint(1, 500)), False


IBAN_STRUCTURES = {"DE": "18n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
                   "NL": "4a10n", "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "PT": "4n4n11n2n",
                   "IE": "4a6n8n", "SE": "3n16n1n", "FI": "3n11n", "NO": "4n6n1n", "BR": "8n5n10n1a1c",
                   "TR": "5n1n16c", "AE": "3n16n"}
IBAN_CONTEXT = ["IBAN: {v}", "payout_iban={v}", "sepa_debit[iban]={v}", "Bankverbindung (IBAN): {v}",
                "RIB / IBAN : {v}", "IBAN per l'accredito: {v}", "creator payout account {v}", "IBAN del titular: {v}"]


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_STRUCTURES)[i % len(IBAN_STRUCTURES)]
    b = bban(rng, IBAN_STRUCTURES[country])
    compact = country + iban_check(country, b) + b
    v = group(compact, 4, " ") if i % 2 else compact
    return country, v, IBAN_CONTEXT[i % len(IBAN_CONTEXT)].format(v=v), False


# ---- values: tokens, keys and codes ---------------------------------------------------------------------------

def jwt(header: dict[str, str], payload: dict[str, object], sig: bytes) -> str:
    """A JWS compact serialization (RFC 7515): base64url header, payload and signature."""
    compact = (",", ":")
    return ".".join((b64url(json.dumps(header, separators=compact).encode()),
                     b64url(json.dumps(payload, separators=compact).encode()), b64url(sig)))


def jwt_value(rng: random.Random, i: int) -> tuple[str, str]:
    """(style, token): Supabase service_role key, Firebase ID token, Apple identity token or App Store Connect
    API token, each with its algorithm's signature length."""
    iat = _epoch(rng)
    style = ["supabase_service_role", "firebase_id", "apple_identity", "asc_api"][i % 4]
    if style == "supabase_service_role":
        return style, jwt({"alg": "HS256", "typ": "JWT"}, {"iss": "supabase", "ref": pick(rng, LOWER, 20),
                                                            "role": "service_role", "iat": iat, "exp": iat + 10 ** 9},
                          rng.randbytes(32))
    if style == "firebase_id":
        project = rng.choice(["hearthome-prod", "fitpulse-7c1e2", "ridelane-app"])
        uid = pick(rng, ALNUM, 28)
        return style, jwt({"alg": "RS256", "kid": pick(rng, HEX, 40), "typ": "JWT"},
                          {"iss": f"https://securetoken.google.com/{project}", "aud": project, "auth_time": iat,
                           "user_id": uid, "sub": uid, "iat": iat, "exp": iat + 3600,
                           "firebase": {"sign_in_provider": "password"}}, rng.randbytes(256))
    if style == "apple_identity":
        return style, jwt({"kid": pick(rng, ALNUM, 10), "alg": "RS256"},
                          {"iss": "https://appleid.apple.com", "aud": rng.choice(APPS), "exp": iat + 86400, "iat": iat,
                           "sub": f"00{digits(rng, 4)}.{pick(rng, HEX, 32)}.{digits(rng, 4)}",
                           "c_hash": b64url(rng.randbytes(16))}, rng.randbytes(256))
    return style, jwt({"alg": "ES256", "kid": pick(rng, UPPER + string.digits, 10), "typ": "JWT"},
                      {"iss": _fid(rng), "iat": iat, "exp": iat + 1200, "aud": "appstoreconnect-v1"},
                      rng.randbytes(64))


JWT_FORMS = ["Authorization: Bearer {v}", "SUPABASE_SERVICE_ROLE_KEY={v}", "FirebaseAuth: getIdToken -> {v}",
             "ASAuthorizationAppleIDCredential identityToken={v}", "token = {v}"]


def v_jwt(rng: random.Random, i: int) -> Value:
    style, v = jwt_value(rng, i)
    return style, v, JWT_FORMS[i % len(JWT_FORMS)].format(v=v), False


P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def _pem_body(pem: str) -> str:
    return "\n".join(line for line in pem.strip().split("\n") if not line.startswith("-----"))


def private_key_value(rng: random.Random, style: str) -> tuple[str, str]:
    """(pem, body): a P-256 key as SEC1 or PKCS#8 PEM, or an OpenSSH Ed25519 key, from the seeded generator."""
    if style == "openssh":
        seed, check = rng.randbytes(32), rng.randbytes(4)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = base64.b64encode(openssh_ed25519_blob(seed, public, check, b"ci@build-mac")).decode()
        body = group(blob, 70, "\n")
        return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n", body
    key = ec.derive_private_key(rng.randrange(1, P256_ORDER), ec.SECP256R1())
    fmt = serialization.PrivateFormat.TraditionalOpenSSL if style == "sec1" else serialization.PrivateFormat.PKCS8
    pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
    return pem, _pem_body(pem)


KEY_FILES = [("p8", "$ cat ~/Downloads/AuthKey_{k}.p8\n{pem}"), ("sec1", "$ cat certs/{t}.private.pem.key\n{pem}"),
             ("p8", "APNs auth key (Key ID {k}):\n{pem}"), ("openssh", "$ cat ~/.ssh/id_ed25519\n{pem}"),
             ("sec1", "const char AWS_IOT_PRIVATE_KEY[] = R\"KEY(\n{pem})KEY\";")]


def v_private_key(rng: random.Random, i: int) -> Value:
    style, tpl = KEY_FILES[i % len(KEY_FILES)]
    pem, body = private_key_value(rng, style)
    return style, body, tpl.format(pem=pem, k=pick(rng, UPPER + string.digits, 10),
                                   t=f"thermo-{rng.randint(1, 99):02d}"), False


def cookie_value(rng: random.Random, style: str) -> tuple[str, str]:
    """(name, value) of a session cookie as each framework writes it."""
    if style == "express":
        return "connect.sid", f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, B64, 43)}"
    if style == "django":
        return "sessionid", pick(rng, LOWNUM, 32)
    if style == "php":
        return "PHPSESSID", pick(rng, "0123456789abcdefghijklmnopqrstuv", 26)
    if style == "rails":
        return "_hearthome_session", f"{pick(rng, B64, 120)}--{pick(rng, B64, 22)}--{pick(rng, B64, 22)}%3D%3D"
    if style == "aspnet":
        return ".AspNetCore.Cookies", "CfDJ8" + pick(rng, URLSAFE, 180)
    steamid = "7656119" + digits(rng, 10)
    return "steamLoginSecure", f"{steamid}%7C%7C" + jwt({"typ": "JWT", "alg": "EdDSA"}, {
        "iss": "r:" + pick(rng, HEX, 16).upper(), "sub": steamid, "aud": ["web"], "exp": _epoch(rng)},
        rng.randbytes(64))


COOKIE_FORMS = ["Set-Cookie: {n}={v}; Path=/; HttpOnly; Secure; SameSite=Lax", "Cookie: theme=dark; {n}={v}",
                "CookieManager.getCookie(https://account.hearthome.io) = {n}={v}",
                "host_key = .kitebyte.gg\n name = {n}\nvalue = {v}", "<-- 200 OK\nset-cookie: {n}={v}; path=/"]


def v_session_cookie(rng: random.Random, i: int) -> Value:
    style = ["express", "django", "php", "rails", "aspnet", "steam"][i % 6]
    name, v = cookie_value(rng, style)
    return style, v, COOKIE_FORMS[i % len(COOKIE_FORMS)].format(n=name, v=v), False


def oauth_value(rng: random.Random, style: str) -> str:
    return {"google_access": lambda: "ya29." + pick(rng, URLSAFE, 150),
            "google_refresh": lambda: "1//0" + pick(rng, URLSAFE, 99),
            "github_oauth": lambda: crc_token(rng, "gho_"),
            "slack_user": lambda: f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}",
            "dropbox": lambda: "sl." + pick(rng, URLSAFE, 136),
            "opaque": lambda: pick(rng, ALNUM, 40)}[style]()


OAUTH_FORMS = ["Authorization: Bearer {v}", "hearthome://oauth/callback#access_token={v}&token_type=Bearer"
               "&expires_in=3600&state=af0ifjsldkj", "AppAuth: TokenResponse{{accessToken={v}, tokenType=Bearer}}",
               '<string name="auth_token">{v}</string>', "refresh_token={v}&grant_type=refresh_token",
               "KeychainItem(account: oauth, value: {v})"]


def v_oauth_token(rng: random.Random, i: int) -> Value:
    style = ["google_access", "google_refresh", "github_oauth", "slack_user", "dropbox", "opaque"][i % 6]
    v = oauth_value(rng, style)
    return style, v, OAUTH_FORMS[i % len(OAUTH_FORMS)].format(v=v), False


def v_basic_auth(rng: random.Random, i: int) -> Value:
    user = rng.choice(USERS + ["x-access-token"])
    secret = crc_token(rng, "ghp_") if user == "x-access-token" else password_value(rng)
    v = base64.b64encode(f"{user}:{secret}".encode()).decode()
    forms = [("header", "Authorization: Basic {v}"), ("match", "MATCH_GIT_BASIC_AUTHORIZATION={v}"),
             ("curl", "curl -H 'Authorization: Basic {v}' http://192.168.1.40/api/status"),
             ("ha_rest", "rest:\n  - resource: http://inverter.local/status\n    headers:\n"
                         "      Authorization: Basic {v}")]
    style, tpl = forms[i % len(forms)]
    return style, v, tpl.format(v=v), False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    raw = base64.b32encode(rng.randbytes(rng.choice((10, 20, 16)))).decode().rstrip("=")
    style = ["otpauth", "setup_key", "aegis", "ha_otp"][i % 4]
    if style == "otpauth":
        account = rng.choice(USERS)
        return style, raw, f"otpauth://totp/HearthHome:{account}?secret={raw}&issuer=HearthHome&algorithm=SHA1" \
                           "&digits=6&period=30", False
    if style == "setup_key":
        v = group(raw.lower(), 4, " ")
        return style, v, f"Can't scan the QR code? Enter this setup key: {v}", False
    if style == "aegis":
        return style, raw, f'{{"type":"totp","name":"ops","issuer":"Steam","info":{{"secret":"{raw}",' \
                           '"algo":"SHA1","digits":6,"period":30}}', False
    return style, raw, f"sensor:\n  - platform: otp\n    name: garage_otp\n    token: {raw}", False


def v_sas_token(rng: random.Random, i: int) -> Value:
    sig = quote(_b64key(rng, 32), safe="")
    hub, dev, se = rng.choice(["hh-prod-hub", "thermo-fleet"]), f"thermo-{rng.randint(1, 99):02d}", _epoch(rng)
    if i % 2:
        url = (f"https://otafirmware{digits(rng, 2)}.blob.core.windows.net/firmware/esp32-v2.4.{rng.randint(1, 30)}"
               f".bin?sv=2022-11-02&ss=b&srt=o&sp=r&se=2024-04-01T00:00:00Z&spr=https&sig={sig}")
        return "blob_sas", sig, f"I (5123) esp_https_ota: Starting OTA from {url}", False
    sas = f"SharedAccessSignature sr={hub}.azure-devices.net%2Fdevices%2F{dev}&sig={sig}&se={se}"
    text = f"MQTT CONNECT username={hub}.azure-devices.net/{dev}/?api-version=2021-04-12 password={sas}" \
        if i % 4 == 0 else f'{{"sas": "{sas}"}}'
    return "iothub_sas", sig, text, False


def v_presigned_url(rng: random.Random, i: int) -> Value:
    if i % 3 == 2:
        sig = pick(rng, HEX, 512)
        url = (f"https://storage.googleapis.com/kitebyte-patches/win64/patch-{rng.randint(100, 999)}.pak?"
               "X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=cdn-signer%40kitebyte.iam.gserviceaccount.com"
               f"%2F20240314%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20240314T091244Z&X-Goog-Expires=900"
               f"&X-Goog-SignedHeaders=host&X-Goog-Signature={sig}")
        return "gcs_v4", sig, f"LogOnline: downloading patch from {url}", False
    sig = pick(rng, HEX, 64)
    url = (f"https://hh-ota.s3.eu-west-1.amazonaws.com/fw/thermo-{rng.randint(1, 9)}.bin?X-Amz-Algorithm="
           f"AWS4-HMAC-SHA256&X-Amz-Credential={aws_key_id(rng)}%2F20240314%2Feu-west-1%2Fs3%2Faws4_request"
           f"&X-Amz-Date=20240314T091244Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature={sig}")
    text = f'{{"operation":"ota","url":"{url}"}}' if i % 3 else f"DownloadManager: enqueue {url}"
    return "s3_sigv4", sig, text, False


def v_fcm_server_key(rng: random.Random, i: int) -> Value:
    v = "AAAA" + pick(rng, URLSAFE, 7) + ":APA91b" + pick(rng, URLSAFE, 134)
    forms = ["curl -X POST -H 'Authorization: key={v}' -H 'Content-Type: application/json' "
             "https://fcm.googleapis.com/fcm/send", "FCM_SERVER_KEY={v}", "Firebase Server Key: {v}",
             "push.android.serverKey = \"{v}\""]
    return f"legacy{i % 4}", v, forms[i % 4].format(v=v), False


def v_google_api_key(rng: random.Random, i: int) -> Value:
    v = "AIza" + pick(rng, URLSAFE, 35)
    forms = [("env", "GOOGLE_MAPS_SERVER_KEY={v}"), ("geocode", "curl 'https://maps.googleapis.com/maps/api/geocode/"
                                                                "json?address=Depot+4&key={v}'"),
             ("places_header", "X-Goog-Api-Key: {v}"), ("ha_yaml", "google_travel_time:\n  api_key: {v}"),
             ("gemini", "GEMINI_API_KEY={v}"), ("youtube", "GET https://www.googleapis.com/youtube/v3/videos?"
                                                           "part=snippet&id=trailer&key={v}")]
    style, tpl = forms[i % len(forms)]
    return style, v, tpl.format(v=v), False


def v_steam_api_key(rng: random.Random, i: int) -> Value:
    v = pick(rng, "0123456789ABCDEF", 32)
    forms = [("url", "GET https://api.steampowered.com/ISteamUser/GetPlayerSummaries/v2/?key={v}&steamids=7656119"
                     + digits(rng, 10)), ("env", "STEAM_WEB_API_KEY={v}"),
             ("playfab", "PlayFab Steam add-on: Steam Web API Key = {v}"),
             ("publisher", "ISteamUserAuth/AuthenticateUserTicket/v1/?key={v}&appid=480")]
    style, tpl = forms[i % len(forms)]
    return style, v, tpl.format(v=v), False


def v_github_token(rng: random.Random, i: int) -> Value:
    v = crc_token(rng, "ghp_") if i % 2 else f"github_pat_{pick(rng, ALNUM, 22)}_{pick(rng, ALNUM, 59)}"
    forms = ['git_url("https://x-access-token:{v}@github.com/hearthome/certificates.git")', "GH_TOKEN={v}",
             "machine github.com login ci password {v}", "git clone https://{v}@github.com/kitebyte/build-scripts"]
    return ("classic" if i % 2 else "fine_grained"), v, forms[i % 4].format(v=v), False


VERHOEFF_D = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
              [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
              [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
              [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
VERHOEFF_P = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
              [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
              [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]
VERHOEFF_INV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def verhoeff_digit(num: str) -> str:
    """The Verhoeff check digit that completes `num` (dihedral group D5)."""
    c = 0
    for i, ch in enumerate(reversed(num)):
        c = VERHOEFF_D[c][VERHOEFF_P[(i + 1) % 8][int(ch)]]
    return str(VERHOEFF_INV[c])


BAD_PASSCODES = {int(str(d) * 8) for d in range(10)} | {12345678, 87654321}


def setup_passcode(rng: random.Random) -> int:
    """A Matter/HomeKit setup passcode: 1..99999998, none of the disallowed trivial ones."""
    while True:
        code = rng.randint(1, 99999998)
        if code not in BAD_PASSCODES:
            return code


def matter_manual_code(rng: random.Random) -> str:
    """An 11-digit Matter manual pairing code: short discriminator and passcode chunks, then a Verhoeff digit."""
    disc, pin = rng.randint(0, 15), setup_passcode(rng)
    body = f"{disc >> 2}{((disc & 3) << 14) | (pin & 0x3FFF):05d}{pin >> 14:04d}"
    return body + verhoeff_digit(body)


def v_pairing_code(rng: random.Random, i: int) -> Value:
    style = ["matter_dashed", "matter_compact", "homekit"][i % 3]
    if style == "homekit":
        n = f"{setup_passcode(rng):08d}"
        v = f"{n[:3]}-{n[3:5]}-{n[5:]}"
        forms = ["HomeKit Setup Code: {v}", "homekit_controller: pairing with setup code {v}", "pair {v}"]
    else:
        n = matter_manual_code(rng)
        v = f"{n[:4]}-{n[4:7]}-{n[7:]}" if style == "matter_dashed" else n
        forms = ["I (1843) chip[SVR]: Manual pairing code: [{v}]", "chip-tool pairing code 1 {v}",
                 "Commissioning Matter device with code {v}"]
    if i % 4 == 3:
        return style, v, agent_msg(rng, "pairing", v), False
    return style, v, forms[i % 3].format(v=v), False


# ---- values: national ids (outside the target) ----------------------------------------------------------------

def fr_nir(rng: random.Random) -> str:
    """A French NIR: sex, year, month, department (not Corsica), commune, order, key 97 - n mod 97."""
    dept = rng.choice([d for d in range(1, 96) if d != 20])
    n = f"{rng.choice('12')}{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{dept:02d}{rng.randint(1, 999):03d}" \
        f"{rng.randint(1, 999):03d}"
    key = f"{97 - int(n) % 97:02d}"
    return f"{n[0]} {n[1:3]} {n[3:5]} {n[5:7]} {n[7:10]} {n[10:]} {key}"


CF_ODD = dict(zip("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                  [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8,
                   12, 14, 16, 10, 22, 25, 24, 23], strict=True))


def it_codice_fiscale(rng: random.Random) -> str:
    """An Italian codice fiscale: name letters, birth year, month letter, day (+40 for women), Belfiore code and
    the check letter (odd/even position tables, mod 26)."""
    consonants = "BCDFGHLMNPRSTVZ"
    day = rng.randint(1, 28) + rng.choice((0, 40))
    body = (pick(rng, consonants, 3) + pick(rng, consonants, 2) + rng.choice("AEIO") + f"{rng.randint(50, 99):02d}"
            + rng.choice("ABCDEHLMPRST") + f"{day:02d}"
            + rng.choice(["H501", "F205", "L219", "F839", "G273", "A662", "D612", "C351", "L736", "A944"]))
    total = sum(CF_ODD[ch] if k % 2 == 0 else (int(ch) if ch.isdigit() else ord(ch) - 65) for k, ch in enumerate(body))
    return body + chr(65 + total % 26)


def cn_resident_id(rng: random.Random) -> str:
    """A Chinese resident identity number: region, birth date, sequence, ISO 7064 MOD 11-2 check."""
    region = rng.choice(["110101", "310104", "440305", "440106", "510107", "330106", "320102", "420106"])
    body = f"{region}{rng.randint(1960, 2005)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    return body + "10X98765432"[sum(int(d) * w for d, w in zip(body, weights, strict=True)) % 11]


def se_personnummer(rng: random.Random) -> str:
    """A Swedish personnummer YYMMDD-NNNC, C the Luhn digit of the nine before it."""
    body = f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    return f"{body[:6]}-{body[6:]}{luhn_digit(body)}"


def fi_hetu(rng: random.Random) -> str:
    """A Finnish HETU DDMMYY, century sign, individual number 002-899, mod 31 check character."""
    date = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{rng.randint(0, 99):02d}"
    ind = f"{rng.randint(2, 899):03d}"
    sign = "-" if int(date[4:]) > 20 else "A"
    return f"{date}{sign}{ind}" + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(date + ind) % 31]


def be_national_number(rng: random.Random) -> str:
    """A Belgian national number YY.MM.DD-NNN.CC, CC 97 - n mod 97 (with a leading 2 for births from 2000)."""
    yy, mm, dd, seq = rng.randint(0, 99), rng.randint(1, 12), rng.randint(1, 28), rng.randint(1, 997)
    n = f"{yy:02d}{mm:02d}{dd:02d}{seq:03d}"
    check = 97 - int(("2" + n) if yy < 24 else n) % 97
    return f"{n[:2]}.{n[2:4]}.{n[4:6]}-{n[6:]}.{check:02d}"


NATIONAL_LABELS = {"fr_nir": "Numéro de sécurité sociale (carte Vitale)", "it_codice_fiscale": "Codice fiscale",
                   "cn_resident_id": "实名认证 身份证号", "se_personnummer": "BankID personnummer",
                   "fi_hetu": "Henkilötunnus", "be_national_number": "Rijksregisternummer"}


def national_id(kind: str, make: Callable[[random.Random], str]) -> Callable[[random.Random, int], Value]:
    def gen(rng: random.Random, i: int) -> Value:
        v = make(rng)
        forms = ["{l}: {v}", "KycRepository: verifying {k}={v}", '"national_id": "{v}"']
        return f"kyc{i % 3}", v, forms[i % 3].format(l=NATIONAL_LABELS[kind], k=kind, v=v), False
    return gen


# ---- the corpus -----------------------------------------------------------------------------------------------

KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "private_key": v_private_key, "session_cookie": v_session_cookie, "oauth_token": v_oauth_token,
    "basic_auth": v_basic_auth, "totp_seed": v_totp_seed, "sas_token": v_sas_token,
    "presigned_url": v_presigned_url, "fcm_server_key": v_fcm_server_key, "google_api_key": v_google_api_key,
    "steam_api_key": v_steam_api_key, "github_token": v_github_token, "pairing_code": v_pairing_code,
    "fr_nir": national_id("fr_nir", fr_nir),
    "it_codice_fiscale": national_id("it_codice_fiscale", it_codice_fiscale),
    "cn_resident_id": national_id("cn_resident_id", cn_resident_id),
    "se_personnummer": national_id("se_personnummer", se_personnummer),
    "fi_hetu": national_id("fi_hetu", fi_hetu),
    "be_national_number": national_id("be_national_number", be_national_number),
}


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

def n_view_ids(rng: random.Random) -> str:
    app = rng.choice(APPS)
    name = rng.choice(["btn_login", "password_field", "et_email", "card_number_input", "tv_api_key_hint",
                       "switch_wifi", "otp_code_box"])
    return rng.choice([f"{app}:id/{name}", f"findViewById(R.id.{name})", f"accessibilityIdentifier = \"{name}\"",
                       f"View not found: resource-id {app}:id/{name} (bounds unknown)"])


def n_selectors(rng: random.Random) -> str:
    field = rng.choice(["password", "email", "apiKey", "token", "cardNumber", "ssid"])
    return rng.choice([f'//android.widget.EditText[@resource-id="{rng.choice(APPS)}:id/{field}"]',
                       f'XCUIApplication().secureTextFields["{field}"].tap()',
                       f"onView(withId(R.id.{field})).perform(typeText(BuildConfig.TEST_INPUT))",
                       f"input[name=\"{field}\"]:focus-visible", f'$("~{field}Input").setValue(process.env.E2E)'])


def n_coordinates(rng: random.Random) -> str:
    x, y = rng.randint(0, 1440), rng.randint(0, 3120)
    return rng.choice([f"adb shell input tap {x} {y}", f"bounds=[{x},{y}][{x + 120},{y + 96}]",
                       f"adb shell input swipe {x} {y} {x} {max(0, y - 900)} 300",
                       f"touch began at ({x}.0, {y}.5) in UIWindow"])


def n_display(rng: random.Random) -> str:
    w, h = rng.choice([(1080, 2400), (1179, 2556), (1440, 3120), (1290, 2796), (720, 1600)])
    return rng.choice([f"Physical size: {w}x{h}\nPhysical density: {rng.choice([420, 440, 480, 560])}",
                       f"@3x {w}×{h} px, scale 3.0", f"splash_{w}x{h}.png (PNG {w} x {h}, 8-bit/color RGBA)",
                       f"textSize={rng.randint(12, 34)}sp padding={rng.randint(4, 32)}dp"])


def n_timestamps(rng: random.Random) -> str:
    t = _epoch(rng)
    return rng.choice([f"lastSeen={t * 1000 + rng.randint(0, 999)}", f"updated_at: {_iso(rng)}",
                       f"{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {_clock(rng)} boot completed",
                       f"{t}: mosquitto version 2.0.18 running", f"expires {t + 3600} (unix)"])


def n_request_ids(rng: random.Random) -> str:
    return rng.choice([f"X-Request-Id: {_fid(rng)}", f"Sentry event_id {pick(rng, HEX, 32)}",
                       f"traceparent: 00-{pick(rng, HEX, 32)}-{pick(rng, HEX, 16)}-01",
                       f"x-amz-request-id: {pick(rng, UPPER + string.digits, 16)}",
                       f"Crashlytics issue {pick(rng, HEX, 32)}"])


def n_build_ids(rng: random.Random) -> str:
    return rng.choice([f"dSYM UUID: {str(uuid.UUID(int=rng.getrandbits(128))).upper()} (arm64)",
                       f"commit {pick(rng, HEX, 40)}", f"versionCode {rng.randint(10000, 99999)}",
                       f"CFBundleVersion = {rng.randint(100, 9999)}", f"Build ID: {pick(rng, HEX, 40)}",
                       f"Gradle build scan: https://gradle.com/s/{pick(rng, LOWNUM, 13)}"])


def n_versions(rng: random.Random) -> str:
    return rng.choice([f"Android {rng.randint(10, 14)} (API {rng.randint(29, 34)})", "iOS 17.4.1 (21E236)",
                       f"okhttp/4.{rng.randint(9, 12)}.0", f"firmware v2.{rng.randint(0, 9)}.{rng.randint(0, 30)}-rc.3",
                       f"ESP-IDF v5.{rng.randint(0, 3)}.{rng.randint(0, 4)}",
                       f"Home Assistant 2024.{rng.randint(1, 12)}.1",
                       f"fastlane 2.{rng.randint(200, 220)}.0", f"Unity 2022.3.{rng.randint(10, 40)}f1"])


def n_field_names(rng: random.Random) -> str:
    return rng.choice(['android:inputType="textPassword"', '<input type="hidden" name="csrfmiddlewaretoken">',
                       "X-CSRF-Token header missing", '"password": ""', "client_secret is required",
                       "SharedAccessKey segment missing from connection string",
                       f"field {rng.choice(['api_key', 'webhook_url', 'ssid_psk'])} is empty",
                       '<string name="hint_password">Password</string>', "keychain item 'refresh_token' not found"])


def n_placeholders(rng: random.Random) -> str:
    return rng.choice(["password: ********", "email hint: you@example.com", "API_KEY=YOUR_API_KEY",
                       "mqtt_password: !secret mqtt_password", "Authorization: Bearer <token>",
                       "SUPABASE_SERVICE_ROLE_KEY=${SUPABASE_SERVICE_ROLE_KEY}", "MATCH_PASSWORD=$(MATCH_PASSWORD)",
                       "wifi_password: !secret wifi_password", "AWS_SECRET_ACCESS_KEY=<your-secret-key>",
                       f"setup code: XXX-XX-XXX (printed on the {rng.choice(['bulb', 'plug', 'sensor'])})"])


def n_masked(rng: random.Random) -> str:
    last4 = digits(rng, 4)
    return rng.choice([f"Visa •••• {last4}", f"**** **** **** {last4}", f"+33 6 •• •• •• {digits(rng, 2)}",
                       f"{rng.choice(FIRST)[0]}***@g***.com", f"Phone ending in {last4}",
                       f"IBAN DE•• •••• •••• •••• ••{digits(rng, 2)} {digits(rng, 2)}", "token: ghp_****",
                       f"SSN ***-**-{last4}"])


SERVICE_NUMBERS = [("Apple Support", "1-800-275-2273"), ("Apple Store", "1-800-MY-APPLE (1-800-692-7753)"),
                   ("Microsoft Support", "1-800-642-7676"), ("Samsung Support", "1-800-SAMSUNG (1-800-726-7864)"),
                   ("Amazon Customer Service", "1-888-280-4331"), ("emergency services", "911"),
                   ("EU emergency number", "112"), ("UK emergency services", "999"), ("NHS non-emergency", "111"),
                   ("Samaritans", "116 123"), ("SAMU", "15"), ("Polizei", "110")]


def n_service_numbers(rng: random.Random) -> str:
    name, number = rng.choice(SERVICE_NUMBERS)
    return rng.choice([f"If the device keeps failing, call {name} at {number}.", f"{name}: {number}",
                       f"Rufen Sie {name} unter {number} an.", f"support line ({name}) {number}"])


def n_luhn_invalid(rng: random.Random) -> str:
    while True:
        partial = rng.choice("4536") + digits(rng, 14)
        last = str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)
        if last != luhn_digit(partial):
            break
    n = partial + last
    return rng.choice([f"Loyalty ref {group(n, 4, ' ')}", f"batch {n}", f"Invoice no. {group(n, 4, '-')}",
                       f"meter serial {n}"])


def n_order_numbers(rng: random.Random) -> str:
    return rng.choice([f"GPA.{digits(rng, 4)}-{digits(rng, 4)}-{digits(rng, 4)}-{digits(rng, 5)}",
                       f"Apple order ID: M{pick(rng, UPPER + string.digits, 9)}",
                       f"originalTransactionId 2000000{digits(rng, 9)}", f"Steam order #{digits(rng, 19)}",
                       f"Order #{rng.randint(1000, 99999)} shipped"])


def s10_check(serial: str) -> str:
    """The UPU S10 check digit of an 8-digit serial (weights 8 6 4 2 3 5 9 7, 11 - sum mod 11)."""
    c = 11 - sum(int(d) * w for d, w in zip(serial, (8, 6, 4, 2, 3, 5, 9, 7), strict=True)) % 11
    return {10: "0", 11: "5"}.get(c, str(c))


def n_tracking(rng: random.Random) -> str:
    serial = digits(rng, 8)
    return rng.choice([f"UPS 1Z{pick(rng, UPPER + string.digits, 6)}03{digits(rng, 8)}",
                       f"USPS {group('9400' + digits(rng, 18), 4, ' ')}", f"FedEx tracking {digits(rng, 12)}",
                       f"Royal Mail {pick(rng, UPPER, 2)}{serial}{s10_check(serial)}GB",
                       f"DHL Express waybill {digits(rng, 10)}"])


def n_asset_hashes(rng: random.Random) -> str:
    fp = ":".join(pick(rng, "0123456789ABCDEF", 2) for _ in range(32))
    return rng.choice([f"main.{pick(rng, HEX, 8)}.chunk.js", f"sha256_cert_fingerprints: [\"{fp}\"]",
                       f"app-release.aab sha256 {hashlib.sha256(rng.randbytes(8)).hexdigest()}",
                       f"/static/css/app.{pick(rng, HEX, 20)}.css?v={pick(rng, HEX, 8)}",
                       f"Etag: W/\"{pick(rng, HEX, 32)}\""])


GATT = [("Heart Rate", "180d"), ("Battery Service", "180f"), ("Device Information", "180a"),
        ("Environmental Sensing", "181a"), ("Battery Level", "2a19"), ("Temperature", "2a6e")]


def n_ble_uuids(rng: random.Random) -> str:
    name, short = rng.choice(GATT)
    return rng.choice([f"{name}: 0000{short}-0000-1000-8000-00805f9b34fb", f"discovered service 0x{short.upper()}"
                       f" ({name})", "Nordic UART RX 6e400002-b5a3-f393-e0a9-e50e24dcca9e",
                       f"CBUUID(string: \"{short.upper()}\") // {name}"])


def n_mqtt_topics(rng: random.Random) -> str:
    dev = rng.choice(["living_room_lamp", "thermo-07", "plug_3", "garage_door"])
    return rng.choice([f"zigbee2mqtt/{dev}/set", f"$aws/things/{dev}/shadow/update/accepted",
                       f"homeassistant/sensor/{dev}/config", f"cmnd/tasmota_{pick(rng, HEX, 6).upper()}/POWER",
                       f"devices/{dev}/messages/events/"])


def n_app_ids(rng: random.Random) -> str:
    return rng.choice([f"bundle id {rng.choice(APPS)}", f"https://apps.apple.com/app/id{digits(rng, 10)}",
                       f"appID: {pick(rng, UPPER + string.digits, 10)}.{rng.choice(APPS)}",
                       f"gcm_defaultSenderId = {digits(rng, 12)}", f"steam appid={rng.choice([480, 730, 570])}",
                       f"project_id: {rng.choice(['hearthome-prod', 'fitpulse-7c1e2'])}"])


def n_aws_examples(rng: random.Random) -> str:
    return rng.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                       "AWS docs sample: AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                       "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE"])


def n_readings(rng: random.Random) -> str:
    return rng.choice([f"temperature {rng.uniform(15, 28):.1f} °C, humidity {rng.randint(30, 70)} %",
                       f"RSSI -{rng.randint(40, 95)} dBm", f"battery {rng.randint(5, 100)}%",
                       f"power {rng.randint(0, 3000)} W, energy {rng.uniform(0, 900):.3f} kWh",
                       f"price €{rng.randint(1, 19)}.99 per month"])


def n_error_codes(rng: random.Random) -> str:
    return rng.choice(["NSURLErrorDomain Code=-1009 \"The Internet connection appears to be offline.\"",
                       f"HTTP {rng.choice([401, 403, 429, 503])} from /v1/session", "errno -111 (ECONNREFUSED)",
                       "MQTT CONNACK rc=5 (not authorized)",
                       f"E (4123) wifi:Association refused, reason {rng.randint(1, 210)}",
                       "FirebaseAuthInvalidCredentialsException: ERROR_WRONG_PASSWORD"])


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "view_ids": n_view_ids, "selectors": n_selectors, "coordinates": n_coordinates, "display": n_display,
    "timestamps": n_timestamps, "request_ids": n_request_ids, "build_ids": n_build_ids, "versions": n_versions,
    "field_names": n_field_names, "placeholders": n_placeholders, "masked": n_masked,
    "service_numbers": n_service_numbers, "luhn_invalid": n_luhn_invalid, "order_numbers": n_order_numbers,
    "tracking": n_tracking, "asset_hashes": n_asset_hashes, "ble_uuids": n_ble_uuids, "mqtt_topics": n_mqtt_topics,
    "app_ids": n_app_ids, "aws_examples": n_aws_examples, "readings": n_readings, "error_codes": n_error_codes,
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
