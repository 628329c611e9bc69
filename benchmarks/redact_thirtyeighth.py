"""The thirty-eighth blind redaction corpus: media, gaming and creator platforms, what an agent that runs a studio's,
a publisher's or a creator's operations reads and writes. Written from the formats' public specifications by someone
who read neither the detection rules nor the other corpora.

Carriers (the `form` head): game server configs and consoles (Minecraft `server.properties`, Source RCON/`server.cfg`
sessions, Unity Editor/Cloud Build logs, Unreal `Saved/Logs` lines, PlayFab and Epic Online Services configs and
responses), streaming platforms (Twitch Helix responses, YouTube Data API `liveStream` resources, OBS `service.json`
and OBS logs, ffmpeg RTMP push logs), Discord and Telegram bots (discord.py logs, gateway MESSAGE_CREATE events,
Bot API updates), creator business (sponsorship contracts, payout CSV exports, esports registrations), CMS and
newsroom tools (`wp-config.php`, Ghost exports, Contentful entries), video pipelines (MediaConvert jobs, Mux webhooks),
player support tickets and moderation queues, dotenv/compose/CI files and shell sessions, and the agent's own replies
to users in 29 languages (intros and labels in the user's language). About a third is JSON carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37, Discover
6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN registry's
BBAN structures (MOD 97-10; national BBAN check digits are not computed); SSNs, the SSA's rules (area not 000/666/
9xx, group not 00, serial not 0000; the SSA's voided examples left out); phones, the numbering plans (NANP with real
area codes, no 555 and no N11; Ofcom, avoiding its drama ranges; ARCEP, avoiding its fiction ranges; BNetzA; TRAI/DoT
ten-digit mobiles 6-9 and STD landlines) with context words in each country's language; AWS keys, IAM's documented
AKIA/ASIA ids and 40-character secrets; Slack, Discord, Teams (Office 365 connector and Workflows), Google Chat,
Mattermost, Rocket.Chat and Zapier webhook URLs as their docs print them (the secret is the token-bearing segment or
query value only); Stripe `whsec_` signing secrets (dashboard and `stripe listen` forms) and `sk_live_`/`rk_live_`
keys; URI, ADO.NET, JDBC, ODBC and Azure Storage/Service Bus connection strings (the secret is the password or key
only); JWT (RFC 7519/7515, HS256 and RS256 with `kid` as EOS issues them); HTTP Basic (RFC 7617) and Bearer (RFC
6750); PEM PKCS#8 EC keys (App Store Connect `.p8`, Google Play service-account JSON) and OpenSSH Ed25519 keys (the
secret is the base64 body, not the armour); Twitch OAuth tokens (30 lower-case alphanumerics, IRC `oauth:` form),
stream keys (Twitch `live_<user id>_<30>`, YouTube `xxxx-xxxx-xxxx-xxxx-xxxx`, Amazon IVS/Kick `sk_<region>_`, Mux
UUIDs); Discord bot tokens (base64 snowflake, timestamp, HMAC); Telegram Bot API tokens (`<bot id>:<35>`); Google API
keys (`AIza` + 35); TOTP seeds (RFC 4226/6238 base32, Google Authenticator Key URI format); recovery codes (GitHub
`xxxxx-xxxxx`, Discord eight-character, Google eight-digit); GitHub tokens (`ghp_`/`gho_`/`ghs_`, CRC32 checksum);
national ids (outside the target): Spanish DNI/NIE (mod 23 letter), Brazilian CPF (two mod 11 digits), Polish PESEL
(weights 1-3-7-9), Dutch BSN (11-proof), Indian Aadhaar (Verhoeff), Turkish TC Kimlik (its two digits), Swedish
personnummer (Luhn over nine digits).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, an OAuth token without its `oauth:` prefix). A stream key is a
secret: whoever holds it broadcasts on the channel. A bot token or webhook URL posted in a moderation queue is still
one. Providers' published test card numbers are left out both as values and as near misses. Near misses are what this
domain holds that is neither secret nor personal: DOM ids, CSS selectors and XPaths of dashboards, in-game coordinates,
resolutions and bitrates, VOD timestamps, request ids, cache-busting hashes, CSRF field names without values,
placeholders and masked values, engine and tool versions, public OAuth client ids, channel and message snowflakes,
public playback ids, ingest server URLs without a key, ISRC/UPC codes, businesses' toll-free service lines,
Luhn-invalid references, order and tracking numbers, asset GUIDs and build hashes: none identifies a person or opens
anything.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
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

SEED = 38
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "pl_pesel", "nl_bsn", "in_aadhaar", "tr_tckn", "se_personnummer"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
LOWNUM = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"
PW_SYMBOLS = "!#$%&*+-.=?@^_~"
URL_PW = string.ascii_letters + string.digits + "-_.~!*"


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


# ---- shared pools -----------------------------------------------------------------------------------------------

WORDS = ["creeper", "nether", "respawn", "lobby", "speedrun", "headshot", "loot", "guild", "raid", "clutch", "emote",
         "frag", "quest", "pixel", "arcade", "combo", "dungeon", "glitch", "rocket", "shader", "sprite", "voxel",
         "zephyr", "falcon", "mango", "violet", "harbor", "tundra", "ember", "citadel"]
FIRST = ["maya", "lucas", "aiko", "mateo", "priya", "jonas", "chloe", "tomasz", "fatima", "kenji", "ines", "oskar",
         "leila", "diego", "hana", "arjun", "elif", "noah", "camille", "sven", "yuna", "rafael", "zoe", "dmitri"]
LAST = ["okafor", "lindqvist", "tanaka", "moreau", "kowalski", "haddad", "silva", "nguyen", "becker", "sharma",
        "yilmaz", "oconnell", "rossi", "park", "delacroix", "novak", "ferreira", "ivanova", "mendez", "schulz"]
MAIL_DOMAINS = ["gmail.com", "outlook.com", "yahoo.co.jp", "gmx.de", "web.de", "orange.fr", "hotmail.co.uk",
                "icloud.com", "proton.me", "naver.com", "qq.com", "yandex.ru", "libero.it", "rediffmail.com",
                "uol.com.br", "t-online.de", "free.fr", "wp.pl", "seznam.cz", "laposte.net"]
GAMES = ["Skyforge Arena", "Pixel Drift", "Hollow Crown", "Neon Rally", "Starfall Tactics", "Brick & Mortar"]
TEST_CARDS = {"4242424242424242", "4111111111111111", "5555555555554444", "378282246310005", "6011111111111117",
              "4000056655665556", "5105105105105100", "371449635398431", "3530111333300000", "30569309025904",
              "6200000000000005", "4012888888881881", "5200828282828210", "3566002020360505", "36227206271667"}

LANGS: dict[str, tuple[str, str, str, str]] = {
    # code: (intro, password label, e-mail label, API key label)
    "en": ("Here is what I found in the studio's settings:", "Password", "Email", "API key"),
    "de": ("Das habe ich in den Einstellungen des Studios gefunden:", "Passwort", "E-Mail", "API-Schlüssel"),
    "fr": ("Voici ce que j'ai trouvé dans les paramètres du studio :", "Mot de passe", "Courriel", "Clé API"),
    "es": ("Esto es lo que encontré en la configuración del estudio:", "Contraseña", "Correo electrónico",
           "Clave de API"),
    "it": ("Ecco cosa ho trovato nelle impostazioni dello studio:", "Password", "E-mail", "Chiave API"),
    "pt": ("Aqui está o que encontrei nas configurações do estúdio:", "Senha", "E-mail", "Chave de API"),
    "nl": ("Dit heb ik gevonden in de instellingen van de studio:", "Wachtwoord", "E-mailadres", "API-sleutel"),
    "pl": ("Oto co znalazłem w ustawieniach studia:", "Hasło", "Adres e-mail", "Klucz API"),
    "sv": ("Det här hittade jag i studions inställningar:", "Lösenord", "E-postadress", "API-nyckel"),
    "da": ("Her er, hvad jeg fandt i studiets indstillinger:", "Adgangskode", "E-mail", "API-nøgle"),
    "no": ("Her er det jeg fant i studioets innstillinger:", "Passord", "E-post", "API-nøkkel"),
    "fi": ("Löysin tämän studion asetuksista:", "Salasana", "Sähköposti", "API-avain"),
    "cs": ("Tohle jsem našel v nastavení studia:", "Heslo", "E-mail", "Klíč API"),
    "hu": ("Ezt találtam a stúdió beállításaiban:", "Jelszó", "E-mail-cím", "API-kulcs"),
    "ro": ("Iată ce am găsit în setările studioului:", "Parolă", "E-mail", "Cheie API"),
    "tr": ("Stüdyonun ayarlarında bunu buldum:", "Şifre", "E-posta", "API anahtarı"),
    "ru": ("Вот что я нашёл в настройках студии:", "Пароль", "Эл. почта", "Ключ API"),
    "uk": ("Ось що я знайшов у налаштуваннях студії:", "Пароль", "Ел. пошта", "Ключ API"),
    "el": ("Αυτό βρήκα στις ρυθμίσεις του στούντιο:", "Κωδικός πρόσβασης", "Email", "Κλειδί API"),
    "ar": ("هذا ما وجدته في إعدادات الاستوديو:", "كلمة المرور", "البريد الإلكتروني", "مفتاح API"),
    "he": ("זה מה שמצאתי בהגדרות האולפן:", "סיסמה", "דוא\"ל", "מפתח API"),
    "hi": ("स्टूडियो की सेटिंग्स में मुझे यह मिला:", "पासवर्ड", "ईमेल", "API कुंजी"),
    "ja": ("スタジオの設定で見つけた内容です：", "パスワード", "メールアドレス", "APIキー"),
    "ko": ("스튜디오 설정에서 찾은 내용입니다:", "비밀번호", "이메일", "API 키"),
    "zh": ("这是我在工作室设置中找到的内容：", "密码", "电子邮箱", "API 密钥"),
    "zh_tw": ("這是我在工作室設定中找到的內容：", "密碼", "電子郵件", "API 金鑰"),
    "vi": ("Đây là những gì tôi tìm thấy trong cài đặt của studio:", "Mật khẩu", "Email", "Khóa API"),
    "th": ("นี่คือสิ่งที่ฉันพบในการตั้งค่าของสตูดิโอ:", "รหัสผ่าน", "อีเมล", "คีย์ API"),
    "id": ("Ini yang saya temukan di pengaturan studio:", "Kata sandi", "Email", "Kunci API"),
}
LANG_CODES = list(LANGS)


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:" \
           f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"


def _clock(rng: random.Random) -> str:
    return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


def _snowflake(rng: random.Random) -> str:
    return str(rng.randint(10 ** 17, 13 * 10 ** 17))


def _name(rng: random.Random) -> tuple[str, str]:
    return rng.choice(FIRST), rng.choice(LAST)


def _as_property(snip: str) -> str:
    """`snip` as a `key=value` line when it is one, else as a `#` comment (properties and dotenv files)."""
    return snip if re.match(r"[\w.-]+=", snip) else _lines(snip, "# ")


def _lines(snip: str, prefix: str) -> str:
    """`snip` with `prefix` before its first line: a log or comment prefix; a multi-line value (a PEM body) goes on
    unprefixed, as loggers print a multi-line message, so the value stays whole."""
    return prefix + snip


# ---- text carriers ----------------------------------------------------------------------------------------------

def c_server_properties(rng: random.Random, snip: str, secret: str) -> str:
    """Minecraft `server.properties` as the server writes it: a date comment, then key=value lines."""
    body = _as_property(snip)
    return (f"#Minecraft server properties\n#Sat Mar {rng.randint(1, 28)} {_clock(rng)} UTC 2026\n"
            f"enable-rcon=true\nrcon.port=25575\nmotd=\\u00a7b{rng.choice(GAMES)} SMP\n{body}\n"
            f"max-players={rng.choice([20, 50, 100])}\nview-distance=10\nonline-mode=true")


def c_rcon_console(rng: random.Random, snip: str, secret: str) -> str:
    """A Source dedicated server console: `rcon` commands and `L` log lines."""
    day = f"03/{rng.randint(10, 28)}/2026"
    return (f"] rcon_address 10.20.{rng.randint(0, 255)}.{rng.randint(1, 254)}:27015\n"
            f"L {day} - {_clock(rng)}: server cvars start\n{_lines(snip, f'L {day} - {_clock(rng)}: ')}\n"
            f"L {day} - {_clock(rng)}: server cvars end\n] rcon status\nhostname: {rng.choice(GAMES)} EU #"
            f"{rng.randint(1, 9)}\nmap     : de_{rng.choice(WORDS)}")


def c_unity_log(rng: random.Random, snip: str, secret: str) -> str:
    """A Unity Cloud Build log: `[Unity]`-prefixed editor lines around the value."""
    return (f"{rng.randint(1, 9)}: [Unity] Initialize engine version: 2022.3.{rng.randint(10, 40)}f1\n"
            f"{rng.randint(10, 90)}: [Unity] Loading BuildPipeline settings from ProjectSettings/BuildConfig.asset\n"
            f"{_lines(snip, f'{rng.randint(100, 200)}: [Unity] ')}\n"
            f"{rng.randint(200, 900)}: [Unity] Build completed with a result of 'Succeeded' in "
            f"{rng.randint(60, 900)} seconds")


def c_unreal_log(rng: random.Random, snip: str, secret: str) -> str:
    """Unreal Engine `Saved/Logs/*.log` lines: `[date-time:ms][frame]Category: message`."""
    stamp = f"[2026.03.{rng.randint(10, 28)}-{rng.randint(10, 23)}.{rng.randint(10, 59)}.{rng.randint(10, 59)}:" \
            f"{rng.randint(100, 999)}][{rng.randint(0, 400):3d}]"
    return (f"{stamp}LogInit: Build: ++UE5+Release-5.{rng.randint(2, 4)}-CL-{rng.randint(28000000, 33000000)}\n"
            f"{_lines(snip, stamp + 'LogOnline: Verbose: ')}\n{stamp}LogEOSSDK: Display: LogEOS: Updating Platform SDK "
            "Config, Time: 0.000000")


def c_discord_bot_log(rng: random.Random, snip: str, secret: str) -> str:
    """discord.py's default logging format."""
    when = f"2026-0{rng.randint(1, 9)}-{rng.randint(10, 28)} {_clock(rng)}"
    return (f"[{when}] [INFO    ] discord.client: logging in using static token\n"
            f"[{when}] [INFO    ] discord.gateway: Shard ID None has connected to Gateway (Session ID: "
            f"{pick(rng, HEX, 32)}).\n{_lines(snip, f'[{when}] [WARNING ] bot.modlog: ')}")


def c_obs_log(rng: random.Random, snip: str, secret: str) -> str:
    """An OBS Studio log excerpt around starting a stream."""
    clock = f"{_clock(rng)}.{rng.randint(100, 999)}"
    return (f"{clock}: [rtmp stream: 'adv_stream'] Connecting to RTMP URL rtmps://live.example-cdn.net/app...\n"
            f"{_lines(snip, clock + ': ')}\n{clock}: [rtmp stream: 'adv_stream'] Connection to "
            f"rtmps://live.example-cdn.net/app ({rng.randint(10, 99)}.{rng.randint(0, 255)}.0.1) successful")


def c_ffmpeg_log(rng: random.Random, snip: str, secret: str) -> str:
    """ffmpeg's stderr for an RTMP push: the banner, the command echoed by the wrapper, the stream map."""
    return (f"ffmpeg version 6.1.{rng.randint(0, 2)} Copyright (c) 2000-2023 the FFmpeg developers\n"
            f"{snip}\nInput #0, mov,mp4,m4a,3gp,3g2,mj2, from 'vod_{rng.randint(1000, 9999)}.mp4':\n"
            f"  Duration: 01:{rng.randint(10, 59)}:{rng.randint(10, 59)}.{rng.randint(10, 99)}, start: 0.000000\n"
            "Stream mapping:\n  Stream #0:0 -> #0:0 (h264 (native) -> h264 (libx264))")


def c_support_ticket(rng: random.Random, snip: str, secret: str) -> str:
    """A player support ticket as the help desk prints it."""
    first, _last = _name(rng)
    return (f"Ticket #{rng.randint(100000, 999999)} | {rng.choice(GAMES)} | Priority: normal\n"
            f"Subject: can't log in after the patch\nFrom: {first.title()}\n\n"
            f"Hi, I keep getting error EOS-{rng.randint(1000, 9999)} when I launch.\n{snip}\nThanks!")


def c_moderation_queue(rng: random.Random, snip: str, secret: str) -> str:
    """A community moderation queue entry: a reported message quoted in full."""
    return (f"Report {rng.randint(10000, 99999)} | reason: {rng.choice(['doxxing', 'spam', 'scam link', 'other'])} | "
            f"channel #{rng.choice(['general', 'lfg', 'clips', 'trading'])}\nReported message:\n> "
            f"{snip}\nAction: pending review")


def c_sponsorship_contract(rng: random.Random, snip: str, secret: str) -> str:
    """A sponsorship agreement's schedule, as pasted from the signed PDF."""
    return (f"SCHEDULE B - PAYMENT AND NOTICES\nCampaign: {rng.choice(GAMES)} launch, "
            f"{rng.randint(2, 6)} integrated videos\nFee: USD {rng.randint(2, 90) * 500:,} net 30\n{snip}\n"
            "Signed electronically; both parties keep a copy.")


def c_wp_config(rng: random.Random, snip: str, secret: str) -> str:
    """WordPress `wp-config.php`: `define` lines, the value as its own line or a PHP comment."""
    body = snip if snip.startswith(("define", "$")) else _lines(snip, "// ")
    return (f"<?php\ndefine( 'DB_NAME', 'newsroom_{rng.choice(WORDS)}' );\ndefine( 'DB_USER', 'wp_app' );\n{body}\n"
            f"define( 'DB_HOST', 'db-{rng.randint(1, 9)}.internal' );\n$table_prefix = 'wp_';")


def c_dotenv(rng: random.Random, snip: str, secret: str) -> str:
    """A bot's `.env` file."""
    body = _as_property(snip)
    return (f"NODE_ENV=production\nGUILD_ID={_snowflake(rng)}\n{body}\nLOG_LEVEL=info\n"
            f"PORT={rng.choice([3000, 8080, 8787])}")


def c_compose(rng: random.Random, snip: str, secret: str) -> str:
    """A docker-compose service for a game backend."""
    return (f"services:\n  leaderboard:\n    image: studio/leaderboard:{rng.randint(1, 3)}.{rng.randint(0, 20)}\n"
            f"    environment:\n{_lines(snip, '      ')}\n    ports:\n      - \"{rng.choice([8080, 7350])}:8080\"")


def c_agent_reply(rng: random.Random, snip: str, secret: str) -> str:
    """The agent's message to the user, its intro in the user's language."""
    lang = rng.choice(LANG_CODES)
    return f"{LANGS[lang][0]}\n\n{snip}\n"


def c_runbook(rng: random.Random, snip: str, secret: str) -> str:
    """A newsroom or live-ops runbook page in Markdown."""
    return (f"## {rng.choice(['Go-live checklist', 'Stream failover', 'Patch day', 'Election night desk'])}\n\n"
            f"1. Check the ingest health dashboard.\n2. Confirm the backup encoder.\n\n```\n{snip}\n```\n\n"
            f"_Last edited {_ts(rng)[:10]}_")


def c_shell(rng: random.Random, snip: str, secret: str) -> str:
    """A terminal session on a build or encoder box."""
    host = f"{rng.choice(['encoder', 'build', 'vod', 'bot'])}-{rng.randint(1, 20):02d}"
    first = snip.split("\n")[0]
    body = f"$ {snip}" if not first.startswith(("$", "[", "#", "{")) and "=" not in first[:12] else snip
    return f"ops@{host}:~$ uptime\n {_clock(rng)} up {rng.randint(1, 90)} days\nops@{host}:~$ cat notes.txt\n{body}"


def c_ci_yaml(rng: random.Random, snip: str, secret: str) -> str:
    """A GitHub Actions workflow that builds and uploads a game client."""
    return (f"name: build-{rng.choice(['win64', 'linux', 'android', 'switch'])}\non: [push]\njobs:\n  build:\n"
            f"    runs-on: ubuntu-22.04\n    env:\n{_lines(snip, '      ')}\n    steps:\n"
            "      - uses: actions/checkout@v4\n      - run: ./ci/build.sh")


def c_esports_registration(rng: random.Random, snip: str, secret: str) -> str:
    """An esports tournament registration as the organiser's form exports it."""
    return (f"Tournament: {rng.choice(GAMES)} Open S{rng.randint(1, 9)} - Registration #{rng.randint(1000, 9999)}\n"
            f"Team name: {rng.choice(WORDS).title()} {rng.choice(WORDS).title()}\nRegion: "
            f"{rng.choice(['EU West', 'NA East', 'SEA', 'LATAM'])}\n{snip}\nRoster lock: {_ts(rng)[:10]}")


def c_payout_csv(rng: random.Random, snip: str, secret: str) -> str:
    """A creator payout export: CSV, the value in its quoted note field (RFC 4180 quote doubling)."""
    first, last = _name(rng)
    note = snip.replace('"', '""')
    return (f"payout_id,creator,period,amount,currency,note\n"
            f"po_{pick(rng, LOWNUM, 12)},{first.title()} {last.title()},2026-{rng.randint(1, 12):02d},"
            f"{rng.randint(50, 9000)}.{rng.randint(0, 99):02d},{rng.choice(['USD', 'EUR', 'GBP', 'INR'])},\"{note}\"")


def c_newsroom_chat(rng: random.Random, snip: str, secret: str) -> str:
    """A newsroom Slack channel export in plain text."""
    first, _last = _name(rng)
    return (f"#desk-video  {_clock(rng)[:5]}  {first}: publishing the explainer at 18:00\n"
            f"#desk-video  {_clock(rng)[:5]}  {first}: {snip}\n#desk-video  {_clock(rng)[:5]}  bot: :white_check_mark:")


TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "server_properties": c_server_properties, "rcon_console": c_rcon_console, "unity_log": c_unity_log,
    "unreal_log": c_unreal_log, "discord_bot_log": c_discord_bot_log, "obs_log": c_obs_log,
    "ffmpeg_log": c_ffmpeg_log, "support_ticket": c_support_ticket, "moderation_queue": c_moderation_queue,
    "sponsorship_contract": c_sponsorship_contract, "wp_config": c_wp_config, "dotenv": c_dotenv,
    "compose": c_compose, "agent_reply": c_agent_reply, "runbook": c_runbook, "shell": c_shell, "ci_yaml": c_ci_yaml,
    "esports_registration": c_esports_registration, "payout_csv": c_payout_csv, "newsroom_chat": c_newsroom_chat,
}


# ---- JSON carriers ----------------------------------------------------------------------------------------------

def j_playfab(rng: random.Random, snip: str, secret: str) -> str:
    """A PlayFab Admin API response: the value in a title data entry."""
    return _dump({"code": 200, "status": "OK", "data": {"Data": {"ops_note": snip, "season": rng.randint(1, 12)},
                                                        "TitleId": pick(rng, HEX.upper(), 5)}})


def j_eos_config(rng: random.Random, snip: str, secret: str) -> str:
    """An Epic Online Services platform config as a launcher or tool stores it."""
    return _dump({"ProductId": pick(rng, HEX, 32), "SandboxId": pick(rng, HEX, 32),
                  "DeploymentId": pick(rng, HEX, 32), "ClientId": "xyza" + pick(rng, ALNUM, 28), "Notes": snip})


def j_obs_service(rng: random.Random, snip: str, secret: str) -> str:
    """OBS `service.json` (profile directory): the value in the custom service settings."""
    return _dump({"settings": {"bwtest": False, "server": "auto", "service": "Custom", "key_note": snip,
                               "use_auth": False}, "type": "rtmp_custom"})


def j_twitch_helix(rng: random.Random, snip: str, secret: str) -> str:
    """A Twitch Helix `GET /channels` response with the value in a field the agent echoed."""
    return _dump({"data": [{"broadcaster_id": str(rng.randint(10 ** 7, 10 ** 9)), "broadcaster_language": "en",
                            "game_name": rng.choice(GAMES), "title": snip, "delay": 0}], "pagination": {}})


def j_youtube(rng: random.Random, snip: str, secret: str) -> str:
    """A YouTube Data API `liveStream` resource with the value in its description."""
    return _dump({"kind": "youtube#liveStream", "etag": pick(rng, URLSAFE, 27), "id": pick(rng, URLSAFE, 24),
                  "snippet": {"title": "Main encoder", "description": snip, "publishedAt": _ts(rng)},
                  "cdn": {"resolution": "1080p", "frameRate": "60fps", "ingestionType": "rtmp"}})


def j_discord_event(rng: random.Random, snip: str, secret: str) -> str:
    """A Discord gateway MESSAGE_CREATE dispatch."""
    return _dump({"t": "MESSAGE_CREATE", "s": rng.randint(1, 9999), "op": 0,
                  "d": {"id": _snowflake(rng), "channel_id": _snowflake(rng), "guild_id": _snowflake(rng),
                        "content": snip, "timestamp": _ts(rng), "type": 0}})


def j_telegram_update(rng: random.Random, snip: str, secret: str) -> str:
    """A Telegram Bot API `getUpdates` result."""
    return _dump({"ok": True, "result": [{"update_id": rng.randint(10 ** 8, 10 ** 9), "message": {
        "message_id": rng.randint(1, 99999), "chat": {"id": -rng.randint(10 ** 12, 10 ** 13), "type": "supergroup"},
        "date": rng.randint(1767225600, 1798761600), "text": snip}}]})


def j_contentful(rng: random.Random, snip: str, secret: str) -> str:
    """A Contentful entry as the export tool writes it."""
    return _dump({"sys": {"id": pick(rng, ALNUM, 22), "type": "Entry", "space": {"sys": {"id": pick(rng, LOWNUM, 12)}},
                          "contentType": {"sys": {"id": "article"}}},
                  "fields": {"title": {"en-US": "Behind the scenes"}, "body": {"en-US": snip}}})


def j_ghost_export(rng: random.Random, snip: str, secret: str) -> str:
    """A Ghost site export (`db[0].data.posts`)."""
    return _dump({"db": [{"meta": {"exported_on": rng.randint(1767225600000, 1798761600000), "version": "5.82.0"},
                          "data": {"posts": [{"id": pick(rng, HEX, 24), "title": "Creator update",
                                              "plaintext": snip, "status": "draft"}]}}]})


def j_mediaconvert(rng: random.Random, snip: str, secret: str) -> str:
    """An AWS Elemental MediaConvert `GetJob` response: the value in its user metadata."""
    return _dump({"Job": {"Id": f"{rng.randint(10 ** 12, 10 ** 13)}-{pick(rng, LOWNUM, 6)}", "Status": "COMPLETE",
                          "Queue": "arn:aws:mediaconvert:us-west-2:123456789012:queues/Default",
                          "UserMetadata": {"note": snip}}})


def j_mux_webhook(rng: random.Random, snip: str, secret: str) -> str:
    """A Mux `video.asset.ready` webhook body with the value in `passthrough`."""
    return _dump({"type": "video.asset.ready", "id": _uuid(rng), "created_at": _ts(rng),
                  "data": {"status": "ready", "passthrough": snip, "duration": round(rng.uniform(30, 4000), 3)}})


def j_tool_result(rng: random.Random, snip: str, secret: str) -> str:
    """A chat-completions tool message the agent received."""
    return _dump({"role": "tool", "tool_call_id": "call_" + pick(rng, ALNUM, 24), "content": snip})


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "playfab": j_playfab, "eos_config": j_eos_config, "obs_service": j_obs_service, "twitch_helix": j_twitch_helix,
    "youtube": j_youtube, "discord_event": j_discord_event, "telegram_update": j_telegram_update,
    "contentful": j_contentful, "ghost_export": j_ghost_export, "mediaconvert": j_mediaconvert,
    "mux_webhook": j_mux_webhook, "tool_result": j_tool_result,
}


# ---- value makers -----------------------------------------------------------------------------------------------

def _password(rng: random.Random) -> str:
    """A password as people and generators make them: words with digits and a symbol, a generated string, a
    passphrase; never a quote, backslash or space, so that every carrier writes it unchanged."""
    style = rng.randrange(3)
    if style == 0:
        return f"{rng.choice(WORDS).title()}{rng.choice(PW_SYMBOLS)}{digits(rng, rng.randint(2, 4))}" \
               f"{rng.choice(WORDS)}"
    if style == 1:
        return pick(rng, ALNUM, rng.randint(10, 18)) + rng.choice(PW_SYMBOLS) + digits(rng, 2)
    return "-".join(rng.choice(WORDS) for _ in range(4)) + str(rng.randint(1, 99))


def _url_password(rng: random.Random) -> str:
    """A password that a URI carries without percent-encoding (RFC 3986 unreserved and a few sub-delims)."""
    return pick(rng, ALNUM, rng.randint(8, 14)) + pick(rng, "-_.~!*", 1) + pick(rng, URL_PW, rng.randint(4, 10))


def _akid(rng: random.Random, prefix: str = "AKIA") -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (STS) and 16 of base32's upper-case alphabet."""
    return prefix + pick(rng, UPPER + "234567", 16)


def _email(rng: random.Random) -> tuple[str, str]:
    """(display name, personal address) on a consumer mail domain."""
    first, last = _name(rng)
    local = rng.choice([f"{first}.{last}", f"{first}{last[0]}{rng.randint(1, 99)}", f"{first[0]}{last}",
                        f"{first}_{last}{rng.randint(80, 99)}", f"{last}.{first}"])
    return f"{first.title()} {last.title()}", f"{local}@{rng.choice(MAIL_DOMAINS)}"


Style = Callable[[random.Random, int], tuple[str, str, str]]
"""(rng, case index) -> (style, secret, snippet)."""


def _styled(styles: list[Style]) -> Callable[[random.Random, int], Value]:
    """A value maker cycling `styles` by case index."""
    def make(rng: random.Random, i: int) -> Value:
        style, secret, snip = styles[i % len(styles)](rng, i)
        return style, secret, snip, False
    return make


def _pw(style: str, template: str, url_safe: bool = False) -> Style:
    def make(rng: random.Random, i: int) -> tuple[str, str, str]:
        pw = _url_password(rng) if url_safe else _password(rng)
        return style, pw, template.format(pw=pw, user=rng.choice(FIRST), n=rng.randint(1, 9))
    return make


def _pw_i18n(rng: random.Random, i: int) -> tuple[str, str, str]:
    pw = _password(rng)
    lang = LANG_CODES[i % len(LANG_CODES)]
    return f"i18n_{lang}", pw, f"{LANGS[lang][1]}: {pw}"


v_password = _styled([
    _pw("mc_rcon", "rcon.password={pw}"),
    _pw("source_rcon", 'rcon_password "{pw}"'),
    _pw("sv_password", 'sv_password "{pw}"  // scrim server'),
    _pw("obs_websocket", "OBS WebSocket: Server Password {pw} (port 4455)"),
    _pw("wp_define", "define( 'DB_PASSWORD', '{pw}' );"),
    _pw("compose_env", "MYSQL_ROOT_PASSWORD: {pw}"),
    _pw("ticket_plain", "I changed my password to {pw} and it still says wrong credentials"),
    _pw_i18n,
    _pw("mysql_cli", "mysql -u leaderboard -p'{pw}' -h db-{n}.internal ranked"),
    _pw("steamcmd", "steamcmd +login buildbot_{user} {pw} +run_app_build ../scripts/app_build.vdf +quit"),
    _pw("account_share", "selling acc!! user: {user}_{n} pass: {pw} dm me"),
    _pw("ghost_smtp", "mail__options__auth__pass={pw}"),
    _pw("obs_ws_url", "obsws://127.0.0.1:4455/{pw}", url_safe=True),
    _pw_i18n,
])


def _aws(style: str, template: str, prefix: str = "AKIA") -> Style:
    def make(rng: random.Random, i: int) -> tuple[str, str, str]:
        secret = pick(rng, B64, 40)
        token = pick(rng, B64, 300)
        return style, secret, template.format(akid=_akid(rng, prefix), s=secret, tok=token)
    return make


v_aws_secret = _styled([
    _aws("credentials", "[vod-pipeline]\naws_access_key_id = {akid}\naws_secret_access_key = {s}"),
    _aws("export", "export AWS_ACCESS_KEY_ID={akid}\nexport AWS_SECRET_ACCESS_KEY={s}"),
    _aws("boto3", 'boto3.client("mediaconvert", region_name="us-west-2", aws_access_key_id="{akid}", '
                  'aws_secret_access_key="{s}")'),
    _aws("sts", '"AccessKeyId": "{akid}", "SecretAccessKey": "{s}", "SessionToken": "{tok}"', "ASIA"),
    _aws("unreal_ini", "[/Script/BuildPatchTool.S3]\nAccessKey={akid}\nSecretKey={s}\nBucket=patches-cdn"),
    _aws("beside_id", "key id {akid} and the secret {s} - rotate after the jam"),
    _aws("terraform", 'provider "aws" {{\n  access_key = "{akid}"\n  secret_key = "{s}"\n}}'),
    _aws("rclone", "[s3vod]\ntype = s3\nprovider = AWS\naccess_key_id = {akid}\nsecret_access_key = {s}"),
    _aws("iam_csv", "Access key ID,Secret access key\n{akid},{s}"),
    _aws("slash", "{akid}/{s}"),
    _aws("sts_env", "AWS_ACCESS_KEY_ID={akid} AWS_SECRET_ACCESS_KEY={s} AWS_SESSION_TOKEN={tok}", "ASIA"),
])


def _webhook(rng: random.Random, i: int) -> Value:
    k = i % 9
    if k == 0:
        token = pick(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, UPPER + string.digits, 10)}/" \
              f"B{pick(rng, UPPER + string.digits, 10)}/{token}"
        style = "slack"
    elif k in (1, 2):
        token = pick(rng, URLSAFE, 68)
        host = "discord.com" if k == 1 else "discordapp.com"
        url = f"https://{host}/api/webhooks/{_snowflake(rng)}/{token}"
        style = "discord"
    elif k == 3:
        token = pick(rng, HEX, 32)
        url = f"https://{rng.choice(WORDS)}studio.webhook.office.com/webhookb2/{_uuid(rng)}@{_uuid(rng)}/" \
              f"IncomingWebhook/{token}/{_uuid(rng)}"
        style = "teams_connector"
    elif k == 4:
        token = pick(rng, URLSAFE, 43)
        url = f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}/" \
              f"triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={token}"
        style = "teams_workflow"
    elif k == 5:
        token = quote(base64.urlsafe_b64encode(rng.randbytes(32)).decode(), safe="")
        url = f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?" \
              f"key=AIzaSy{pick(rng, URLSAFE, 33)}&token={token}"
        style = "google_chat"
    elif k == 6:
        token = pick(rng, LOWNUM, 26)
        url = f"https://chat.{rng.choice(WORDS)}games.io/hooks/{token}"
        style = "mattermost"
    elif k == 7:
        token = pick(rng, LOWNUM, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{rng.randint(10 ** 6, 10 ** 8)}/{token}/"
        style = "zapier"
    else:
        token = pick(rng, ALNUM, 48)
        url = f"https://rocket.{rng.choice(WORDS)}.gg/hooks/{pick(rng, ALNUM, 24)}/{token}"
        style = "rocketchat"
    frame = rng.choice(["{u}", "WEBHOOK_URL={u}", "curl -X POST -H 'Content-Type: application/json' "
                        "-d '{{\"content\":\"VOD is live\"}}' {u}", "post clip alerts to {u}",
                        "webhook: \"{u}\""])
    return style, token, frame.format(u=url), False


def _whsec(style: str, template: str, hex_form: bool = False) -> Style:
    def make(rng: random.Random, i: int) -> tuple[str, str, str]:
        secret = "whsec_" + (pick(rng, HEX, 64) if hex_form else pick(rng, ALNUM, 32))
        return style, secret, template.format(s=secret)
    return make


v_stripe_whsec = _styled([
    _whsec("env", "STRIPE_WEBHOOK_SECRET={s}"),
    _whsec("stripe_listen", "> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is "
                            "{s} (^C to quit)", hex_form=True),
    _whsec("python", "endpoint_secret = '{s}'\nevent = stripe.Webhook.construct_event(payload, sig_header, "
                     "endpoint_secret)"),
    _whsec("node", "const endpointSecret = \"{s}\";"),
    _whsec("dashboard_copy", "Signing secret (merch store endpoint): {s}"),
    _whsec("yaml", "stripe:\n  webhook_secret: {s}"),
    _whsec("ghost_members", "members_stripe_webhook_secret = {s}", hex_form=True),
])


def _conn(rng: random.Random, i: int) -> Value:
    k = i % 11
    pw = _url_password(rng)
    user = rng.choice(["gameadmin", "leaderboard", "cms", "bot", "matchmaker", "wp_app"])
    host = f"{rng.choice(WORDS)}-{rng.randint(1, 9)}"
    if k == 0:
        return "postgres_uri", pw, f"DATABASE_URL=postgres://{user}:{pw}@{host}.internal:5432/ranked", False
    if k == 1:
        return "mongodb_srv", pw, f"mongodb+srv://{user}:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/" \
                                  "players?retryWrites=true&w=majority", False
    if k == 2:
        return "redis", pw, f"REDIS_URL=rediss://default:{pw}@{host}.cache.example-cloud.net:6380/0", False
    if k == 3:
        return "mysql_uri", pw, f"mysql://{user}:{pw}@{host}:3306/wordpress", False
    if k == 4:
        return "amqp", pw, f"amqp://{user}:{pw}@rabbit.{host}.internal:5672/transcode", False
    if k == 5:
        key = base64.b64encode(rng.randbytes(64)).decode()
        return "azure_storage", key, f"DefaultEndpointsProtocol=https;AccountName={rng.choice(WORDS)}vods;" \
                                     f"AccountKey={key};EndpointSuffix=core.windows.net", False
    if k == 6:
        key = base64.b64encode(rng.randbytes(32)).decode()
        return "service_bus", key, f"Endpoint=sb://{rng.choice(WORDS)}-events.servicebus.windows.net/;" \
                                   f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key}", False
    if k == 7:
        return "ado_net", pw, f"Server=tcp:{host}.database.windows.net,1433;Initial Catalog=telemetry;" \
                              f"User ID={user};Password={pw};Encrypt=True;Connection Timeout=30;", False
    if k == 8:
        return "jdbc", pw, f"jdbc:postgresql://{host}:5432/ranked?user={user}&password={pw}&ssl=true", False
    if k == 9:
        return "odbc", pw, f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=payouts;Uid={user};" \
                           f"Pwd={pw};", False
    return "sqlalchemy", pw, f"SQLALCHEMY_DATABASE_URI = \"postgresql+psycopg://{user}:{pw}@{host}/cms\"", False


def _lkey(style: str, template: str, draw: Callable[[random.Random], str]
          ) -> Style:
    def make(rng: random.Random, i: int) -> tuple[str, str, str]:
        key = draw(rng)
        return style, key, template.format(k=key, id=pick(rng, HEX, 24))
    return make


def _lkey_i18n(rng: random.Random, i: int) -> tuple[str, str, str]:
    key = pick(rng, HEX, 32)
    lang = LANG_CODES[i % len(LANG_CODES)]
    return f"i18n_{lang}", key, f"{LANGS[lang][3]}: {key}"


v_labelled_key = _styled([
    _lkey("api_key_colon", "API key: {k}", lambda r: pick(r, HEX, 32)),
    _lkey("playfab_secret", "X-SecretKey: {k}", lambda r: pick(r, UPPER + string.digits, 52)),
    _lkey("mux_secret", "MUX_TOKEN_SECRET={k}", lambda r: pick(r, B64, 75)),
    _lkey("ghost_admin", "Admin API key: {id}:{k}", lambda r: pick(r, HEX, 64)),
    _lkey("contentful_cda", "Content Delivery API - access token: {k}", lambda r: pick(r, URLSAFE, 43)),
    _lkey("eos_client_secret", "ClientSecret={k}", lambda r: pick(r, URLSAFE, 43)),
    _lkey("twitch_client_secret", "client_secret: {k}", lambda r: pick(r, LOWNUM, 30)),
    _lkey_i18n,
    _lkey("unity_cloud", "Cloud Build API Key: {k}", lambda r: pick(r, HEX, 32)),
    _lkey("agora_cert", "App Certificate: {k}", lambda r: pick(r, HEX, 32)),
    _lkey("x_api_key", "X-API-Key: {k}", lambda r: pick(r, ALNUM, 40)),
    _lkey("api_secret_json", "\"apiSecret\": \"{k}\"", lambda r: pick(r, ALNUM, 48)),
    _lkey_i18n,
])


FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F))}


def _disguise_base(rng: random.Random) -> tuple[str, str]:
    """(label, plain secret) that a disguise is applied to."""
    k = rng.randrange(5)
    if k == 0:
        return "password: ", _password(rng)
    if k == 1:
        return "GITHUB_TOKEN=", crc_token(rng, "ghp_")
    if k == 2:
        return "stream key ", f"live_{rng.randint(10 ** 8, 10 ** 9)}_{pick(rng, ALNUM, 30)}"
    if k == 3:
        return "webhook secret ", "whsec_" + pick(rng, ALNUM, 32)
    return "bot token: ", f"{b64url(_snowflake(rng).encode())}.{pick(rng, URLSAFE, 6)}.{pick(rng, URLSAFE, 38)}"


def _disguised(rng: random.Random, i: int) -> Value:
    label, plain = _disguise_base(rng)
    k = i % 5
    if k == 0:
        cut = sorted(rng.sample(range(2, len(plain) - 1), 2))
        zw = rng.choice(["\u200b", "\u200c", "\u2060", "\ufeff"])
        secret = plain[:cut[0]] + zw + plain[cut[0]:cut[1]] + zw + plain[cut[1]:]
        return "zero_width", secret, label + secret, False
    if k == 1:
        secret = "".join(FULLWIDTH.get(c, c) for c in plain)
        return "fullwidth", secret, label + secret, False
    if k == 2:
        secret = "".join(f"%{ord(c):02X}" for c in plain)
        return "percent_all", secret, label + secret, False
    if k == 3:
        chosen = set(rng.sample(range(len(plain)), max(3, len(plain) // 4)))
        secret = "".join(f"%{ord(c):02X}" if j in chosen else c for j, c in enumerate(plain))
        return "percent_some", secret, label + secret, False
    secret = "".join(f"\\u{ord(c):04x}" for c in plain)
    return "json_u", secret, f"{{\"{label.strip(' :=')}\": \"{secret}\"}}", True


def _mail(style: str, template: str) -> Style:
    def make(rng: random.Random, i: int) -> tuple[str, str, str]:
        name, addr = _email(rng)
        return style, addr, template.format(e=addr, name=name, n=rng.randint(1000, 9999))
    return make


def _mail_i18n(rng: random.Random, i: int) -> tuple[str, str, str]:
    _name_, addr = _email(rng)
    lang = LANG_CODES[i % len(LANG_CODES)]
    return f"i18n_{lang}", addr, f"{LANGS[lang][2]}: {addr}"


v_email = _styled([
    _mail("plain", "Contact the creator at {e} for the brief."),
    _mail("from_header", "From: {name} <{e}>"),
    _mail("mailto_html", "<p>Booking enquiries: <a href=\"mailto:{e}\">{name}</a></p>"),
    _mail("contract_notice", "Notices to Creator: {name}, {e}"),
    _mail("paypal", "PayPal payout email: {e}"),
    _mail_i18n,
    _mail("git_author", "Author: {name} <{e}>\nDate:   Thu Mar 12 14:02:11 2026 +0100\n\n    fix shader cache"),
    _mail("captain", "Captain email: {e} (Discord: {name})"),
    _mail("wp_user", "user_login=editor{n} user_email={e} role=editor"),
    _mail("ticket_reply", "please reply to {e} not the address on my account"),
    _mail_i18n,
])


# ---- phones -----------------------------------------------------------------------------------------------------

NANP_AREAS = ["212", "312", "415", "206", "512", "617", "305", "702", "323", "818", "646", "404", "713", "303",
              "604", "416", "514", "403", "613", "778", "647", "438"]
UK_GEO = [("020", 4, 4), ("0161", 3, 4), ("0113", 3, 4), ("0131", 3, 4), ("0117", 3, 4), ("0141", 3, 4)]
FR_FICTION = ("063998", "019900", "026191", "035301", "046571", "053549")
DE_MOBILE = ["0151", "0152", "0157", "0159", "0160", "0162", "0163", "0170", "0171", "0172", "0173", "0174", "0175",
             "0176", "0177", "0178", "0179"]
DE_GEO = [("030", 8), ("089", 7), ("040", 8), ("069", 7), ("0221", 7), ("0711", 7), ("0341", 7)]
IN_STD = [("011", 8), ("022", 8), ("080", 8), ("044", 8), ("033", 8), ("040", 8)]


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """(NPA, NXX, line): a real area code, an exchange 2-9xx that is neither N11 nor 555."""
    nxx = "555"
    while nxx == "555" or nxx[1:] == "11":
        nxx = str(rng.randint(2, 9)) + digits(rng, 2)
    return rng.choice(NANP_AREAS), nxx, digits(rng, 4)


def _phone_us_ca(rng: random.Random, i: int) -> Value:
    a, x, line = _nanp(rng)
    forms = [f"({a}) {x}-{line}", f"{a}-{x}-{line}", f"{a}.{x}.{line}", f"+1 {a} {x} {line}", f"+1-{a}-{x}-{line}",
             f"1 ({a}) {x}-{line}"]
    number = forms[i % len(forms)]
    ctx = rng.choice(["cell: {p}", "Mobile: {p}", "call or text {p} before the shoot", "Phone (W-9 contact): {p}",
                      "Tel. {p}", "cellulaire : {p}", "text me at {p} when the payout lands", "Emergency contact: {p}"])
    return f"form{i % len(forms)}", number, ctx.format(p=number), False


def _phone_uk(rng: random.Random, i: int) -> Value:
    k = i % 6
    if k < 3:
        body = "700900"
        while body.startswith("700900"):
            body = rng.choice("345789") + digits(rng, 8)
        number = [f"07{body[:3]} {body[3:]}", f"+44 7{body[:3]} {body[3:]}", f"+44 (0)7{body[:3]} {body[3:6]} "
                  f"{body[6:]}"][k]
    else:
        code, a, b = rng.choice(UK_GEO)
        first = rng.choice("378" if code == "020" else "2345678") + digits(rng, a - 1)
        while (code, first[:3]) in (("020", "794"), ("0161", "496"), ("0113", "496"), ("0131", "496"),
                                    ("0117", "496"), ("0141", "496")):
            first = rng.choice("378" if code == "020" else "2345678") + digits(rng, a - 1)
        rest = digits(rng, b)
        number = [f"{code} {first} {rest}", f"+44 {code[1:]} {first} {rest}", f"({code}) {first} {rest}"][k - 3]
    ctx = rng.choice(["mobile: {p}", "Tel: {p}", "ring me on {p}", "Phone number {p}", "You can reach me on {p}",
                      "Contact (UK): {p}"])
    return f"form{k}", number, ctx.format(p=number), False


def _phone_fr(rng: random.Random, i: int) -> Value:
    k = i % 6
    n = ""
    while not n or ("0" + n).startswith(FR_FICTION):
        first = rng.choice("67") if k < 3 else rng.choice("12345")
        n = first + (rng.choice("3456789") + digits(rng, 7) if first == "7" else digits(rng, 8))
    pairs = [n[1:3], n[3:5], n[5:7], n[7:9]]
    number = [f"0{n[0]} {' '.join(pairs)}", f"+33 {n[0]} {' '.join(pairs)}", f"0{n[0]}.{'.'.join(pairs)}",
              f"0{n[0]} {' '.join(pairs)}", f"+33 (0){n[0]} {' '.join(pairs)}", f"+33{n}"][k]
    ctx = rng.choice(["portable : {p}", "Tél. : {p}", "téléphone {p}", "joignable au {p}", "Numéro de portable : {p}",
                      "Contact presse : {p}"])
    return f"form{k}", number, ctx.format(p=number), False


def _phone_de(rng: random.Random, i: int) -> Value:
    k = i % 6
    if k < 4:
        pre = rng.choice(DE_MOBILE)
        sub = digits(rng, 8 if pre.startswith("015") or pre == "0176" else 7)
        number = [f"{pre} {sub}", f"{pre}/{sub}", f"+49 {pre[1:]} {sub}", f"+49 (0) {pre[1:]} {sub}"][k]
    else:
        code, n = rng.choice(DE_GEO)
        sub = rng.choice("23456789") + digits(rng, n - 1)
        number = [f"{code} {sub}", f"+49 {code[1:]} {sub}"][k - 4]
    ctx = rng.choice(["Handy: {p}", "Mobil: {p}", "Tel.: {p}", "Telefon {p}", "Rufnummer: {p}",
                      "erreichbar unter {p}"])
    return f"form{k}", number, ctx.format(p=number), False


def _phone_in(rng: random.Random, i: int) -> Value:
    k = i % 6
    if k < 5:
        m = rng.choice("6789") + digits(rng, 9)
        number = [f"{m[:5]} {m[5:]}", f"+91 {m[:5]} {m[5:]}", f"+91-{m}", f"0{m}", f"+91 {m}"][k]
    else:
        code, n = rng.choice(IN_STD)
        number = f"{code}-{rng.choice('2345679')}{digits(rng, n - 1)}"
    ctx = rng.choice(["Mobile No.: {p}", "मोबाइल नंबर: {p}", "WhatsApp {p}", "contact no. {p}", "Ph: {p}",
                      "फ़ोन: {p}"])
    return f"form{k}", number, ctx.format(p=number), False


# ---- ids, cards, IBANs ------------------------------------------------------------------------------------------

def _ssn(rng: random.Random, i: int) -> Value:
    area = 0
    while area in (0, 666) or area >= 900:
        area = rng.randint(1, 899)
    grp, serial = rng.randint(1, 99), rng.randint(1, 9999)
    compact = f"{area:03d}{grp:02d}{serial:04d}"
    if compact in ("078051120", "219099999", "123456789"):
        serial = serial % 9998 + 1
        compact = f"{area:03d}{grp:02d}{serial:04d}"
    forms = [f"{compact[:3]}-{compact[3:5]}-{compact[5:]}", f"{compact[:3]} {compact[3:5]} {compact[5:]}", compact]
    number = forms[i % 3]
    ctx = ["SSN: {s}", "Social security number {s} (Form W-9, Part I)", "TIN (SSN): {s}", "tax_id_type=SSN tax_id={s}",
           "Soc. Sec. # {s}", "my social is {s}, the tax interview keeps rejecting it"][i % 6]
    return f"form{i % 3}", number, ctx.format(s=number), False


CARD_BRANDS: list[tuple[str, Callable[[random.Random], str], int]] = [
    ("visa", lambda r: "4", 16), ("mastercard", lambda r: str(r.randint(51, 55)), 16),
    ("mastercard2", lambda r: str(r.randint(2221, 2720)), 16), ("amex", lambda r: r.choice(["34", "37"]), 15),
    ("discover", lambda r: r.choice(["6011", "65"]), 16), ("jcb", lambda r: str(r.randint(3528, 3589)), 16),
    ("diners", lambda r: "36", 14), ("unionpay", lambda r: "62", 16),
]


def _card_number(rng: random.Random, brand: int) -> str:
    _name_, prefix_of, length = CARD_BRANDS[brand]
    number = "4242424242424242"
    while number in TEST_CARDS:
        partial = prefix_of(rng)
        partial += digits(rng, length - 1 - len(partial))
        number = partial + luhn_digit(partial)
    return number


def _card(rng: random.Random, i: int) -> Value:
    brand = i % len(CARD_BRANDS)
    number = _card_number(rng, brand)
    sep = ["", " ", "-", " "][i % 4]
    written = group_card(number, sep) if sep else number
    ctx = rng.choice(["Card number: {c}", "card on file {c} exp {m}/{y}", "charged twice on my card {c}",
                      "cc={c}&exp={m}{y}", "Numéro de carte : {c}", "Kartennummer: {c}", "Número de tarjeta: {c}",
                      "カード番号: {c}", "Billing card for the sponsorship retainer: {c}"])
    return CARD_BRANDS[brand][0], written, ctx.format(c=written, m=f"{rng.randint(1, 12):02d}",
                                                      y=rng.randint(27, 31)), False


IBAN_STRUCTURES = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
                   "NL": "4a10n", "BE": "3n7n2n", "PL": "8n16n", "SE": "3n16n1n", "PT": "4n4n11n2n", "CH": "5n12c",
                   "AT": "5n11n", "IE": "4a6n8n", "FI": "3n11n", "DK": "4n9n1n", "NO": "4n6n1n", "CZ": "4n6n10n",
                   "TR": "5n1n16c", "BR": "8n5n10n1a1c", "SA": "2n18c", "AE": "3n16n", "LU": "3n13c",
                   "HU": "3n4n1n15n1n", "RO": "4a16c", "GR": "3n4n16c"}


def _iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_STRUCTURES)[i % len(IBAN_STRUCTURES)]
    body = bban(rng, IBAN_STRUCTURES[country])
    compact = country + iban_check(country, body) + body
    written = group(compact, 4, " ") if i % 3 else compact
    ctx = rng.choice(["IBAN: {b}", "IBAN : {b}", "Bankverbindung: IBAN {b}", "IBAN/BIC: {b} / {bic}",
                      "payout_iban={b}", "Cuenta (IBAN): {b}", "Rekeningnummer: {b}", "Coordonnées bancaires - IBAN "
                      "{b}", "Please wire the prize money to {b}"])
    bic = pick(rng, UPPER, 4) + country + pick(rng, UPPER + string.digits, 2)
    return f"{country}_{'print' if i % 3 else 'compact'}", written, ctx.format(b=written, bic=bic), False


def _verhoeff_digit(number: str) -> str:
    """The Verhoeff check digit (dihedral group D5), as Aadhaar uses it."""
    d = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
         [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
         [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
         [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
    p = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
         [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
         [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]
    inv = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]
    c = 0
    for j, ch in enumerate(reversed(number)):
        c = d[c][p[(j + 1) % 8][int(ch)]]
    return str(inv[c])


def _es_dni(rng: random.Random, i: int) -> str:
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if i % 4 == 3:
        lead = rng.choice("XYZ")
        body = digits(rng, 7)
        return f"{lead}{body}{letters[int(str('XYZ'.index(lead)) + body) % 23]}"
    body = digits(rng, 8)
    letter = letters[int(body) % 23]
    return f"{body}{letter}" if i % 2 else f"{body[:2]}.{body[2:5]}.{body[5:]}-{letter}"


def _br_cpf(rng: random.Random, i: int) -> str:
    body = "000000000"
    while len(set(body)) == 1:
        body = digits(rng, 9)
    for weight in (10, 11):
        total = sum(int(c) * (weight - j) for j, c in enumerate(body))
        body += str(total * 10 % 11 % 10)
    return f"{body[:3]}.{body[3:6]}.{body[6:9]}-{body[9:]}" if i % 2 else body


def _pl_pesel(rng: random.Random, i: int) -> str:
    year = rng.randint(1960, 2008)
    month = rng.randint(1, 12) + (20 if year >= 2000 else 0)
    body = f"{year % 100:02d}{month:02d}{rng.randint(1, 28):02d}{digits(rng, 4)}"
    total = sum(int(c) * w for c, w in zip(body, [1, 3, 7, 9, 1, 3, 7, 9, 1, 3], strict=True))
    return body + str((10 - total % 10) % 10)


def _nl_bsn(rng: random.Random, i: int) -> str:
    while True:
        body = rng.choice("123456789") + digits(rng, 7)
        last = sum(int(c) * (9 - j) for j, c in enumerate(body)) % 11
        if last < 10:
            number = body + str(last)
            return f"{number[:4]}.{number[4:6]}.{number[6:]}" if i % 3 == 2 else number


def _in_aadhaar(rng: random.Random, i: int) -> str:
    body = rng.choice("23456789") + digits(rng, 10)
    number = body + _verhoeff_digit(body)
    return group(number, 4, " ") if i % 2 else number


def _tr_tckn(rng: random.Random, i: int) -> str:
    d = [rng.randint(1, 9)] + [rng.randint(0, 9) for _ in range(8)]
    d.append(((d[0] + d[2] + d[4] + d[6] + d[8]) * 7 - (d[1] + d[3] + d[5] + d[7])) % 10)
    d.append(sum(d) % 10)
    return "".join(map(str, d))


def _se_personnummer(rng: random.Random, i: int) -> str:
    body = f"{rng.randint(60, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    number = body + luhn_digit(body)
    return f"{number[:6]}-{number[6:]}" if i % 2 else number


IDS: dict[str, tuple[Callable[[random.Random, int], str], list[str]]] = {
    "es_dni": (_es_dni, ["DNI: {n}", "NIE/DNI del jugador: {n}", "Documento de identidad {n}"]),
    "br_cpf": (_br_cpf, ["CPF: {n}", "CPF do criador para o pagamento: {n}", "Informe seu CPF: {n}"]),
    "pl_pesel": (_pl_pesel, ["PESEL: {n}", "Numer PESEL zawodnika: {n}", "PESEL {n} (weryfikacja wieku)"]),
    "nl_bsn": (_nl_bsn, ["BSN: {n}", "Burgerservicenummer: {n}", "BSN van de speler {n}"]),
    "in_aadhaar": (_in_aadhaar, ["Aadhaar No.: {n}", "आधार संख्या: {n}", "Aadhaar {n} for payout KYC"]),
    "tr_tckn": (_tr_tckn, ["TC Kimlik No: {n}", "T.C. kimlik numarası {n}", "TCKN: {n}"]),
    "se_personnummer": (_se_personnummer, ["Personnummer: {n}", "personnr {n}", "Personnummer (för utbetalning): {n}"]),
}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    """The value maker of a national id kind: the number in a labelled line in its country's language."""
    make, contexts = IDS[kind]

    def value(rng: random.Random, i: int) -> Value:
        number = make(rng, i)
        return f"ctx{i % len(contexts)}", number, contexts[i % len(contexts)].format(n=number), False
    return value


# ---- tokens, keys and the domain's own credentials --------------------------------------------------------------

def _tok(style: str, template: str, draw: Callable[[random.Random], str]
         ) -> Style:
    """A style whose secret is `draw`n and written into `template` ({t}; {u} a user name, {c} a public id)."""
    def make(rng: random.Random, i: int) -> tuple[str, str, str]:
        token = draw(rng)
        return style, token, template.format(t=token, u=rng.choice(FIRST) + str(rng.randint(1, 99)),
                                             c=pick(rng, LOWNUM, 30), n=rng.randint(1, 9))
    return make


def _jwt(rng: random.Random) -> str:
    """A JWS compact serialisation (RFC 7515): HS256, or RS256 with a `kid` as EOS and PlayFab-style issuers sign."""
    now = rng.randint(1767225600, 1798761600)
    if rng.random() < 0.5:
        header = {"alg": "HS256", "typ": "JWT"}
        payload = {"sub": _uuid(rng), "iat": now, "exp": now + 3600, "scope": "publish"}
        sig = rng.randbytes(32)
    else:
        header = {"alg": "RS256", "typ": "JWT", "kid": pick(rng, URLSAFE, 43)}
        payload = {"sub": pick(rng, HEX, 32), "iss": "https://api.epicgames.dev/auth/v1/oauth",
                   "aud": "xyza" + pick(rng, ALNUM, 28), "iat": now, "exp": now + 7200, "pfpid": pick(rng, HEX, 32)}
        sig = rng.randbytes(256)
    enc = [b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, payload)]
    return ".".join(enc + [b64url(sig)])


v_jwt = _styled([
    _tok("bearer", "Authorization: Bearer {t}", _jwt),
    _tok("eos_env", "EOS_ACCESS_TOKEN={t}", _jwt),
    _tok("cookie", "Cookie: theme=dark; jwt={t}", _jwt),
    _tok("json_field", "\"access_token\": \"{t}\", \"token_type\": \"bearer\"", _jwt),
    _tok("ghost_admin", "curl -H \"Authorization: Ghost {t}\" https://news.example-press.org/ghost/api/admin/posts/",
         _jwt),
    _tok("local_storage", "localStorage['auth.session'] = '{t}'", _jwt),
])


def _cookie(name: str, draw: Callable[[random.Random], str]) -> Style:
    def make(rng: random.Random, i: int) -> tuple[str, str, str]:
        value = draw(rng)
        frame = rng.choice(["Cookie: _ga=GA1.1.{ga}; {k}={v}; theme=dark", "Set-Cookie: {k}={v}; Path=/; Secure; "
                            "HttpOnly; SameSite=Lax", "curl -b '{k}={v}' https://dashboard.example-stream.tv/api/me",
                            "document.cookie: {k}={v}"])
        ga = f"{rng.randint(10 ** 8, 10 ** 9)}.{rng.randint(10 ** 9, 2 * 10 ** 9)}"
        return name, value, frame.format(k=name, v=value, ga=ga)
    return make


def _wp_cookie(rng: random.Random, i: int) -> tuple[str, str, str]:
    """WordPress's `wordpress_logged_in_<hash>`: user|expiration|token|hmac, the pipes %-encoded."""
    value = f"{rng.choice(FIRST)}%7C{rng.randint(1767225600, 1798761600)}%7C{pick(rng, ALNUM, 43)}%7C" \
            f"{pick(rng, HEX, 64)}"
    return "wordpress_logged_in", value, f"Cookie: wordpress_logged_in_{pick(rng, HEX, 32)}={value}; wp-settings-1=" \
                                         "libraryContent%3Dbrowse"


v_session_cookie = _styled([
    _wp_cookie,
    _cookie("PHPSESSID", lambda r: pick(r, LOWNUM, 26)),
    _cookie("sessionid", lambda r: pick(r, LOWNUM, 32)),
    _cookie("connect.sid", lambda r: f"s%3A{pick(r, URLSAFE, 32)}.{pick(r, B64, 43)}"),
    _cookie("ghost-admin-api-session", lambda r: f"s%3A{pick(r, URLSAFE, 32)}.{pick(r, B64, 43)}"),
    _cookie("laravel_session", lambda r: pick(r, ALNUM, 180) + "%3D%3D"),
    _cookie("auth-token", lambda r: pick(r, LOWNUM, 30)),
    _cookie("_session_id", lambda r: pick(r, HEX, 32)),
])


def _basic(rng: random.Random) -> str:
    return base64.b64encode(f"{rng.choice(FIRST)}:{_password(rng)}".encode()).decode()


def _playfab_ticket(rng: random.Random) -> str:
    return f"{pick(rng, HEX.upper(), 16)}-{pick(rng, HEX.upper(), 16)}-{pick(rng, HEX.upper(), 16)}-" \
           f"{pick(rng, HEX.upper(), 5)}-{pick(rng, HEX.upper(), 15)}-{pick(rng, B64, 43)}="


v_auth_header = _styled([
    _tok("basic", "Authorization: Basic {t}", _basic),
    _tok("bearer_opaque", "Authorization: Bearer {t}", lambda r: pick(r, URLSAFE, r.randint(40, 64))),
    _tok("playfab_ticket", "X-Authorization: {t}", _playfab_ticket),
    _tok("curl_basic", "curl -H 'Authorization: Basic {t}' https://cms.example-press.org/wp-json/wp/v2/posts", _basic),
    _tok("har", "{{\"name\": \"authorization\", \"value\": \"Bearer {t}\"}}", lambda r: pick(r, URLSAFE, 48)),
    _tok("entity_token", "X-EntityToken: {t}", lambda r: pick(r, B64, 180)),
])


def _pem_body(der_bytes: bytes, width: int = 64) -> str:
    """Base64 lines of `width` (RFC 7468 writes 64; OpenSSH writes 70)."""
    return group(base64.b64encode(der_bytes).decode(), width, "\n")


def _private_key(rng: random.Random, i: int) -> Value:
    k = i % 4
    if k in (0, 1):
        key = ec.derive_private_key(rng.randrange(1, 2 ** 255), ec.SECP256R1())
        der_bytes = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption())
        body = _pem_body(der_bytes)
        pem = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----"
        if k == 0:
            return "appstore_p8", body, f"$ cat AuthKey_{pick(rng, UPPER + string.digits, 10)}.p8\n{pem}", False
        escaped = json.dumps(pem + "\n")[1:-1]
        return "play_service_account", body, (
            f"\"type\": \"service_account\", \"project_id\": \"pc-api-{rng.randint(10 ** 9, 10 ** 10)}\", "
            f"\"private_key_id\": \"{pick(rng, HEX, 40)}\", \"private_key\": \"{escaped}\""), True
    if k == 2:
        key = ec.derive_private_key(rng.randrange(1, 2 ** 255), ec.SECP256R1())
        der_bytes = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.TraditionalOpenSSL,
                                      serialization.NoEncryption())
        body = _pem_body(der_bytes)
        return "sec1", body, f"-----BEGIN EC PRIVATE KEY-----\n{body}\n-----END EC PRIVATE KEY-----", False
    seed = rng.randbytes(32)
    public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"buildbot@ci")
    body = _pem_body(blob, 70)
    return "openssh", body, f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----", False


v_twitch_token = _styled([
    _tok("irc_pass", "PASS oauth:{t}\nNICK {u}\nJOIN #{u}", lambda r: pick(r, LOWNUM, 30)),
    _tok("tmi_js", "identity: {{ username: '{u}', password: 'oauth:{t}' }}", lambda r: pick(r, LOWNUM, 30)),
    _tok("env", "TWITCH_ACCESS_TOKEN={t}", lambda r: pick(r, LOWNUM, 30)),
    _tok("helix_curl", "curl -H 'Authorization: Bearer {t}' -H 'Client-Id: {c}' https://api.twitch.tv/helix/users",
         lambda r: pick(r, LOWNUM, 30)),
    _tok("token_response", "\"access_token\": \"{t}\", \"expires_in\": 14124, \"token_type\": \"bearer\"",
         lambda r: pick(r, LOWNUM, 30)),
    _tok("refresh", "refresh_token={t}", lambda r: pick(r, LOWNUM, 50)),
    _tok("chatbot", "Bot OAuth: oauth:{t} (generated for {u})", lambda r: pick(r, LOWNUM, 30)),
])


def _twitch_key(rng: random.Random) -> str:
    return f"live_{rng.randint(10 ** 7, 10 ** 9)}_{pick(rng, ALNUM, 30)}"


def _youtube_key(rng: random.Random) -> str:
    return "-".join(pick(rng, LOWNUM, 4) for _ in range(5))


def _ivs_key(rng: random.Random) -> str:
    return f"sk_{rng.choice(['us-west-2', 'us-east-1', 'eu-central-1'])}_{pick(rng, ALNUM, 36)}"


v_stream_key = _styled([
    _tok("twitch_rtmp", "rtmp://live.twitch.tv/app/{t}", _twitch_key),
    _tok("youtube_rtmps", "rtmps://a.rtmp.youtube.com/live2/{t}", _youtube_key),
    _tok("ffmpeg_push", "ffmpeg -re -i program.ts -c copy -f flv \"rtmps://ingest.global-contribute.live-video.net:443"
                        "/app/{t}\"", _ivs_key),
    _tok("obs_key", "\"key\": \"{t}\", \"server\": \"auto\"", _twitch_key),
    _tok("stream_key_label", "Stream key: {t}", _youtube_key),
    _tok("mux", "Mux live stream {c}: stream_key {t}", lambda r: _uuid(r)),
    _tok("kick", "Kick stream key {t} (server rtmps://fa723fc1b171.global-contribute.live-video.net)", _ivs_key),
    _tok("facebook", "Persistent stream key: FB-{t}", lambda r: f"{digits(r, 15)}-0-{pick(r, URLSAFE, 24)}"),
    _tok("cle_fr", "Clé de stream : {t}", _twitch_key),
])


def _discord_token(rng: random.Random) -> str:
    return f"{b64url(_snowflake(rng).encode())}.{pick(rng, URLSAFE, 6)}.{pick(rng, URLSAFE, 38)}"


v_discord_bot_token = _styled([
    _tok("client_run", "client.run(\"{t}\")", _discord_token),
    _tok("env", "DISCORD_TOKEN={t}", _discord_token),
    _tok("bot_header", "Authorization: Bot {t}", _discord_token),
    _tok("config_json", "\"token\": \"{t}\", \"prefix\": \"!\"", _discord_token),
    _tok("pasted", "why does my bot not start?? token is {t}", _discord_token),
])


def _telegram_token(rng: random.Random) -> str:
    return f"{rng.randint(10 ** 7, 8 * 10 ** 9)}:AA{pick(rng, URLSAFE, 33)}"


v_telegram_bot_token = _styled([
    _tok("botfather", "Use this token to access the HTTP API:\n{t}\nKeep your token secure and store it safely",
         _telegram_token),
    _tok("api_url", "https://api.telegram.org/bot{t}/sendMessage?chat_id=-100{n}&text=stream+is+live",
         _telegram_token),
    _tok("env", "TELEGRAM_BOT_TOKEN={t}", _telegram_token),
    _tok("ptb", "app = Application.builder().token(\"{t}\").build()", _telegram_token),
])


def _google_key(rng: random.Random) -> str:
    return "AIza" + pick(rng, URLSAFE, 35)


v_google_api_key = _styled([
    _tok("youtube_search", "https://www.googleapis.com/youtube/v3/search?part=snippet&channelId=UC{c}&key={t}",
         _google_key),
    _tok("env", "YOUTUBE_API_KEY={t}", _google_key),
    _tok("python", "youtube = build(\"youtube\", \"v3\", developerKey=\"{t}\")", _google_key),
    _tok("note", "server key {t} (restricted to YouTube Data API v3)", _google_key),
])


def _totp(rng: random.Random, i: int) -> Value:
    seed = pick(rng, B32, 32 if i % 2 else 16)
    k = i % 4
    if k == 0:
        issuer = rng.choice(["Twitch", "Epic%20Games", "Discord", "Studio%20CMS"])
        return "otpauth", seed, f"otpauth://totp/{issuer}:{rng.choice(FIRST)}?secret={seed}&issuer={issuer}", False
    if k == 1:
        written = group(seed.lower(), 4, " ")
        return "setup_key", written, f"Can't scan? Enter this setup key: {written}", False
    if k == 2:
        return "totp_secret", seed, f"TOTP secret: {seed}", False
    return "mfa_seed_env", seed, f"STEAM_SHARED_SECRET_BACKUP_SEED={seed}", False


def _recovery(rng: random.Random, i: int) -> Value:
    k = i % 4
    if k == 0:
        code = f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}"
        return "github", code, f"GitHub recovery codes (keep safe):\n{code}", False
    if k == 1:
        code = pick(rng, LOWNUM, 8)
        return "discord", code, f"Discord backup code: {code}", False
    if k == 2:
        code = f"{digits(rng, 4)} {digits(rng, 4)}"
        return "google", code, f"Backup verification code {code} (YouTube channel owner)", False
    code = pick(rng, UPPER + string.digits, 8)
    return "support_paste", code, f"I lost my phone, here is my recovery code {code} pls restore my account", False


v_github_token = _styled([
    _tok("clone_url", "git clone https://x-access-token:{t}@github.com/studio/game-client.git",
         lambda r: crc_token(r, "ghs_")),
    _tok("env", "GH_TOKEN={t}", lambda r: crc_token(r, "ghp_")),
    _tok("npmrc", "//npm.pkg.github.com/:_authToken={t}", lambda r: crc_token(r, "ghp_")),
    _tok("header", "Authorization: token {t}", lambda r: crc_token(r, "gho_")),
    _tok("refresh", "refresh_token={t}", lambda r: crc_token(r, "ghr_")),
])


def _stripe_key(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(["sk_live_", "rk_live_"]) + pick(rng, ALNUM, 24)
    return "sk_live_51" + pick(rng, ALNUM, 97)


v_stripe_secret = _styled([
    _tok("env", "STRIPE_SECRET_KEY={t}", _stripe_key),
    _tok("python", "stripe.api_key = \"{t}\"", _stripe_key),
    _tok("curl", "curl https://api.stripe.com/v1/payouts -u {t}:", _stripe_key),
    _tok("ghost_label", "Stripe secret key: {t}", _stripe_key),
])


# ---- the kinds --------------------------------------------------------------------------------------------------

KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": _webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": _conn, "labelled_key": v_labelled_key, "disguised": _disguised, "email": v_email,
    "phone_us_ca": _phone_us_ca, "phone_uk": _phone_uk, "phone_fr": _phone_fr, "phone_de": _phone_de,
    "phone_in": _phone_in, "ssn": _ssn, "card": _card, "iban": _iban,
    "jwt": v_jwt, "session_cookie": v_session_cookie, "auth_header": v_auth_header, "private_key": _private_key,
    "twitch_token": v_twitch_token, "stream_key": v_stream_key, "discord_bot_token": v_discord_bot_token,
    "telegram_bot_token": v_telegram_bot_token, "google_api_key": v_google_api_key, "totp_seed": _totp,
    "recovery_code": _recovery, "github_token": v_github_token, "stripe_secret": v_stripe_secret,
    **{k: national_id(k) for k in IDS},
}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), else the text carriers in
    turn (counting the text cases alone, so that every text carrier gets each kind)."""
    style, secret, snip, raw_only = value
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


# ---- near misses ------------------------------------------------------------------------------------------------

def _luhn_bad(rng: random.Random) -> str:
    body = rng.choice("3456") + digits(rng, 14)
    return body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)


def _ups(rng: random.Random) -> str:
    return f"1Z{pick(rng, UPPER + string.digits, 6)}{rng.choice(['01', '02', '03'])}{digits(rng, 8)}"


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "element_id": lambda r: f"<div id=\"player-container-{pick(r, HEX, 8)}\" class=\"video-player__overlay\" "
                            f"data-a-target=\"player-overlay-{r.randint(1, 99)}\"></div>",
    "css_selector": lambda r: f"document.querySelector('#live-channel-stream-information > "
                              f"div.tw-{pick(r, LOWER, 5)}:nth-child({r.randint(1, 9)}) span[data-test-selector="
                              "\"stream-info-card-component__subtitle\"]')",
    "xpath": lambda r: f"//div[@id='contents']/ytd-rich-item-renderer[{r.randint(1, 40)}]//a[@id='video-title-link']",
    "coordinates": lambda r: f"/tp @s {r.randint(-30000, 30000)} {r.randint(-64, 320)} {r.randint(-30000, 30000)}"
                             f"  # spawn x={r.randint(-500, 500)} y=64 z={r.randint(-500, 500)}",
    "resolution": lambda r: f"Output: {r.choice(['1920x1080', '2560x1440', '1280x720', '3840x2160'])} @ "
                            f"{r.choice([30, 60, 120])} fps, {r.randint(2500, 9000)} Kbps CBR, keyint "
                            f"{r.choice([60, 120])}, audio {r.choice([128, 160, 320])} kbps 48000 Hz",
    "vod_timestamp": lambda r: f"Chapters: 00:00 intro, {r.randint(0, 2):02d}:{r.randint(0, 59):02d}:"
                               f"{r.randint(0, 59):02d} boss fight, pts_time={r.uniform(0, 9999):.6f}, "
                               f"epoch {r.randint(1767225600, 1798761600)}",
    "request_id": lambda r: f"x-request-id: {_uuid(r)}; cf-ray: {pick(r, HEX, 16)}-{r.choice(['FRA', 'IAD', 'SIN'])}"
                            f"; x-amzn-RequestId: {_uuid(r)}",
    "cache_bust": lambda r: f"<script src=\"/static/js/main.{pick(r, HEX, 8)}.chunk.js\"></script> "
                            f"<link href=\"/wp-content/themes/press/style.css?ver={r.randint(5, 6)}.{r.randint(0, 9)}."
                            f"{r.randint(0, 9)}\">",
    "csrf_field_name": lambda r: r.choice(["<input type=\"hidden\" name=\"csrfmiddlewaretoken\">",
                                           "headers: { 'X-CSRF-Token': csrfToken }", "name=\"_wpnonce\" (nonce field)",
                                           "<meta name=\"csrf-token\" content=\"\">",
                                           "form field authenticity_token is required"]),
    "placeholder": lambda r: r.choice(["Stream key: ********", "Email: you@example.com", "rcon.password=",
                                       "DISCORD_TOKEN=your-bot-token-here", "rtmp://live.twitch.tv/app/{stream_key}",
                                       "STRIPE_SECRET_KEY=sk_live_...", "Passwort: <hier eintragen>",
                                       "TELEGRAM_BOT_TOKEN=<token from @BotFather>", "api_key: ${YOUTUBE_API_KEY}"]),
    "masked": lambda r: r.choice([f"live_{r.randint(10 ** 7, 10 ** 9)}_****************************",
                                  f"Visa •••• {digits(r, 4)}", f"**** **** **** {digits(r, 4)}",
                                  f"sk_live_...{pick(r, ALNUM, 4)}", f"IBAN DE** **** **** **** **{digits(r, 2)}",
                                  f"+1 (***) ***-{digits(r, 4)}", f"{r.choice(FIRST)[0]}***@***.com",
                                  f"SSN ending {digits(r, 4)}"]),
    "version": lambda r: f"Unity {r.randint(2021, 2023)}.{r.randint(1, 3)}.{r.randint(1, 40)}f1, Unreal Engine "
                         f"5.{r.randint(1, 4)}.{r.randint(0, 3)}-{r.randint(28000000, 33000000)}+++UE5+Release-5."
                         f"{r.randint(1, 4)}, OBS {r.randint(29, 31)}.{r.randint(0, 2)}.{r.randint(0, 3)}, "
                         f"Minecraft 1.{r.randint(19, 21)}.{r.randint(1, 4)} (protocol {r.randint(760, 770)})",
    "client_id": lambda r: f"Client-Id: {pick(r, LOWNUM, 30)} (public; the secret stays server-side), "
                           f"Discord application id {_snowflake(r)}",
    "snowflake": lambda r: f"channel_id={_snowflake(r)} message_id={_snowflake(r)} guild_id={_snowflake(r)}",
    "playback_id": lambda r: f"https://stream.mux.com/{pick(r, ALNUM, 40)}.m3u8 and "
                             f"https://www.youtube.com/watch?v={pick(r, URLSAFE, 11)}&t={r.randint(1, 9999)}s",
    "ingest_server": lambda r: r.choice(["rtmp://live.twitch.tv/app/", "rtmps://a.rtmp.youtube.com/live2",
                                         f"rtmp://{r.choice(['fra', 'sin', 'iad'])}{r.randint(1, 9):02d}."
                                         "contribute.live-video.net/app/",
                                         "rtmps://live-api-s.facebook.com:443/rtmp/", "srt://ingest.example-cdn.net:9000"]),
    "isrc_upc": lambda r: f"ISRC {r.choice(['US', 'GB', 'DE', 'FR'])}-{pick(r, UPPER + string.digits, 3)}-"
                          f"{r.randint(20, 26)}-{digits(r, 5)}, UPC {digits(r, 12)}",
    "service_number": lambda r: r.choice([f"Player support: 1-800-{r.randint(200, 999)}-{digits(r, 4)} (toll-free)",
                                          f"Freephone 0800 {digits(r, 3)} {digits(r, 4)}",
                                          f"Service client : 0 800 {digits(r, 2)} {digits(r, 2)} {digits(r, 2)} "
                                          "(appel gratuit)", f"Hotline (kostenlos): 0800 {digits(r, 7)}",
                                          f"Toll free 1800-{digits(r, 3)}-{digits(r, 4)}"]),
    "luhn_invalid": lambda r: f"Transaction reference {_luhn_bad(r)} (not a card)",
    "order_number": lambda r: f"Order #{r.choice(['PS', 'XB', 'NS', 'ST'])}-{digits(r, 9)}, App Store order "
                              f"M{pick(r, UPPER + string.digits, 9)}, invoice INV-{r.randint(2024, 2026)}-"
                              f"{digits(r, 5)}",
    "tracking_number": lambda r: f"Merch shipped: UPS {_ups(r)}, DHL {digits(r, 10)}, FedEx {digits(r, 12)}",
    "asset_guid": lambda r: f"guid: {pick(r, HEX, 32)}\nfileFormatVersion: 2  # Assets/Maps/{r.choice(WORDS).title()}"
                            f".unity.meta, /Game/Maps/Arena_{r.randint(1, 20):02d}.Arena_{r.randint(1, 20):02d}",
    "build_hash": lambda r: f"commit {pick(r, HEX, 40)} image sha256:{hashlib.sha256(r.randbytes(8)).hexdigest()} "
                            f"build #{r.randint(100, 9999)}",
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
