"""The sixteenth redaction corpus: small-business and home IT, devices and consumer services, as an agent that
administers or supports them meets them (router and firewall configs, Wi-Fi profiles, NAS and cameras, printers and
POS terminals, smart home YAML and flows, game servers, exchange apps, shops and marketplaces, travel, telecom
care, property, school and clinic front desks, remote-support tools and scripts), written blind to the rules.

Each kind's format, from its public specification or the provider's published format:
- password, labelled_key, wifi_psk, snmp_community, remote_support_password: free text under the labels the
  products print (OpenWrt UCI, RouterOS `/export`, Cisco IOS, pfSense `config.xml`, Home Assistant, ESPHome,
  Zigbee2MQTT, Tasmota, Minecraft `server.properties`, Source `server.cfg`); WPA2 passphrases 8-63 printable
  characters or a 64-hex PSK (IEEE 802.11i); TeamViewer/AnyDesk unattended passwords of 8+ characters.
- aws_secret: 40 characters of base64's alphabet beside an `AKIA`/`ASIA` key id (AWS IAM user guide).
- webhook: Slack `hooks.slack.com/services/T…/B…/<24>`, Discord `api/webhooks/<id>/<68>`, Teams
  `webhook.office.com/webhookb2/…/IncomingWebhook/<32 hex>/<guid>`, Google Chat `token=`, Zapier, IFTTT Maker,
  Make, Mattermost, Home Assistant cloudhooks, Logic Apps `sig=`; the secret is the token part alone.
- stripe_whsec: `whsec_` and 32 base62 (Stripe webhook signing secrets). connection_string: Azure Storage
  `AccountKey=` (64 bytes base64), Service Bus/IoT Hub `SharedAccessKey=`, ADO.NET `Password=`, ODBC `Pwd=`, JDBC
  `password=`, RFC 3986 userinfo (rtsp, mysql, postgresql, mqtt, smb, ftp, redis, amqp); the secret is the
  password or key.
- disguised: provider keys (Shopify, Stripe, GitHub CRC32 tokens, Slack, Telegram, SendGrid) with U+200B/C/D,
  U+2060, U+FEFF, U+00AD, U+200E/F, U+202A-E inside or in full-width forms (U+FF01-FF5E).
- email: RFC 5322 and RFC 6531 (UTF-8 local parts and IDN domains), `%40` (RFC 3986), `\\u0040` (RFC 8259),
  `&#64;` (HTML), `mailto:` (RFC 6068).
- phones: NANP (NPA/NXX 2-9, no N11), Ofcom's UK plan, ARCEP's French plan, BNetzA's German plan, TRAI's Indian
  plan (mobiles 6-9), and the national plans of ES, MX, BR, PT, IT, NL, PL, TR, JP, KR, ID, PH (ITU-T E.164
  country codes), always beside a context word in the text's language.
- ssn: SSA rules (area 001-899 but 666, group 01-99, serial 0001-9999). card: ISO/IEC 7812 IIN ranges and Luhn.
  iban: ISO 13616 with the SWIFT registry's BBAN structures, MOD 97-10.
- shopify_token `shpat_`/`shpss_`/`shpca_`/`shppa_` + 32 hex; woocommerce_secret `cs_` + 40 hex (beside its
  `ck_`); twilio_auth_token 32 hex beside an `AC` SID; telegram_bot_token `<bot id>:AA<33>`; home_assistant_token
  (a HS256 JWT with `iss`, `iat`, `exp`); esphome_api_key (32 bytes base64); tuya_secret (32-character access
  secret, 16-character local key); exchange_secret (Binance 64 alphanumerics, Coinbase 32, Kraken 64 bytes base64);
  cisco_type7 (the reversible Vigenère of IOS `password 7`); private_key (PKCS#8/SEC1 PEM, OpenSSH, inside GCP
  service-account JSON, WireGuard base64); jwt (RFC 7519); http_auth (RFC 7617 Basic, RFC 6750 Bearer, RFC 7616
  Digest `response=`, SigV4 `Signature=`); session_cookie (LuCI `sysauth`, UniFi `unifises`, `PHPSESSID`, Synology
  `id`, WordPress `logged_in`).
- National ids with public checksums, held outside the target: Spanish DNI (mod 23 letter), Brazilian CPF (two mod
  11 digits), Polish PESEL (weights 1-3-7-9), Turkish TC Kimlik (its two check digits).

Published test card numbers (4242 4242 4242 4242, 4111 1111 1111 1111, ...) are card numbers by format (valid IIN,
valid Luhn) and a trace cannot tell a test-mode context for sure, so they are neither planted nor held as near
misses: a redactor may take or leave them. Cisco type 8/9 and bcrypt strings are one-way hashes, not secrets, and are
near misses; a type 7 string is reversible, so it is a secret. Seed phrases are not planted.

`generate()` yields PER_KIND cases of each kind; `generate_negatives()` yields (sort, text) near misses.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from string import Template
from typing import NamedTuple

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from benchmarks.corpus_formats import (
    B62,
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

PER_KIND = 100
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "pl_pesel", "tr_tckn"})
HEX = "0123456789abcdef"
LOWER = string.ascii_lowercase + string.digits
URLSAFE = B62 + "-_"
B64 = B62 + "+/"


@dataclass(frozen=True)
class Case:
    """One planted value: `secret` must not survive redaction of `carried`."""

    kind: str
    secret: str
    text: str
    form: str
    envelope: str = ""

    @property
    def is_json(self) -> bool:
        """Whether `carried` is a JSON document (the text itself, or the text inside an envelope)."""
        return bool(self.envelope)

    @property
    def carried(self) -> str:
        """The text as a trace holds it: alone, or as a string inside a helpdesk/RMM/smart-home JSON envelope."""
        if self.envelope in ("", "native"):
            return self.text
        return ENVELOPES[self.envelope](self.text)


ENVELOPES: dict[str, Callable[[str], str]] = {
    "rmm_note": lambda t: json.dumps({"ticketId": 48213, "type": "internal_note", "device": "FRONTDESK-PC",
                                      "body": t}, ensure_ascii=False),
    "ha_log": lambda t: json.dumps({"event_type": "system_log_event", "data": {"level": "WARNING",
                                    "message": [t], "source": ["homeassistant/core.py", 1]}}, ensure_ascii=False),
    "chat": lambda t: json.dumps({"conversation": "c_7781", "messages": [{"from": "customer", "text": t}]},
                                 ensure_ascii=False),
}


class T(NamedTuple):
    """A carrier: its name, a `string.Template` with `$v` for the value, a hint the value generator reads (a
    provider, a URL scheme, an e-mail style, a country), and whether the text is JSON itself."""

    carrier: str
    text: str
    hint: str = ""
    native: bool = False


def J(carrier: str, text: str, hint: str = "") -> T:
    """A carrier whose text is JSON itself (values are JSON-escaped into it)."""
    return T(carrier, text, hint, True)


Value = tuple[str, str, dict[str, str]]
"""(secret, style, template fields: `v` at least)."""

USERS = ("admin", "tecnico", "support", "kasia", "joao", "mehmet", "priya", "yuki", "fatima", "luca", "nguyen")
HOSTS = ("nas01", "gw-casa", "pos-02", "nvr", "printer-3f", "ha", "fw-clinic", "srv-school", "cam-door")


def fields(rng: random.Random) -> dict[str, str]:
    """The filler around a value: a user, a host, a private IP, a small number."""
    return {"user": rng.choice(USERS), "host": rng.choice(HOSTS), "n": str(rng.randint(2, 98)),
            "ip": f"192.168.{rng.choice((0, 1, 10, 88))}.{rng.randint(2, 250)}"}


def build(kind: str, rng: random.Random, carriers: list[T], value: Callable[[random.Random, T], Value]
          ) -> Iterator[Case]:
    """PER_KIND cases of `kind`, the carriers in turn; a fifth of the plain texts carried in a JSON envelope."""
    for i in range(PER_KIND):
        t = carriers[i % len(carriers)]
        secret, style, vals = value(rng, t)
        fill = fields(rng) | vals
        if t.native:
            fill = {k: json.dumps(v, ensure_ascii=False)[1:-1] for k, v in fill.items()}
        text = Template(t.text).substitute(fill)
        envelope = "native" if t.native else (rng.choice(list(ENVELOPES)) if rng.random() < 0.22 else "")
        yield Case(kind, secret, text, f"{t.carrier}/{style}", envelope)


def plain(make: Callable[[random.Random], tuple[str, str]]) -> Callable[[random.Random, T], Value]:
    """A value generator that ignores the carrier: `make` gives (value, style), written as is."""
    def value(rng: random.Random, _t: T) -> Value:
        v, style = make(rng)
        return v, style, {"v": v}
    return value


# ---- passwords ------------------------------------------------------------------------------------------------

WORDS = ("Garden", "Falcon", "Sol", "Luna", "Kasza", "Tulipa", "Mare", "Berg", "Pomidor", "Ceviche", "Sakura",
         "Bosque", "Lavanda", "Kedi", "Orzo", "Vento", "Sneeuw", "Raiz", "Tigre", "Chmura")
SYMBOLS = "!@#%*_-+?"


def password(rng: random.Random) -> tuple[str, str]:
    """A password in one of the styles people and generators use."""
    style = rng.choice(("words", "random", "leet", "pin_word", "generated"))
    if style == "words":
        return f"{rng.choice(WORDS)}{rng.choice('-_.')}{rng.choice(WORDS)}{digits(rng, rng.randint(2, 4))}", style
    if style == "random":
        return pick(rng, string.ascii_letters + string.digits + SYMBOLS, rng.randint(12, 20)), style
    if style == "leet":
        word = rng.choice(WORDS).replace("a", "4").replace("e", "3").replace("o", "0")
        return f"{word}{rng.randint(1990, 2025)}{rng.choice(SYMBOLS)}", style
    if style == "pin_word":
        return f"{rng.choice(WORDS).lower()}{digits(rng, 6)}{rng.choice(SYMBOLS)}", style
    return "".join(pick(rng, string.ascii_letters + string.digits, 5) + "-" for _ in range(3))[:-1], style


PASSWORD_CARRIERS = [
    T("uci_pppoe", "config interface 'wan'\n\toption device 'eth1'\n\toption proto 'pppoe'\n"
                   "\toption username 'cliente$n@fibra'\n\toption password '$v'\n\toption ipv6 'auto'"),
    T("routeros_export", "# dec/06/2026 10:12:01 by RouterOS 7.14.2\n/interface pppoe-client\n"
                         "add add-default-route=yes disabled=no interface=ether1 name=pppoe-out1 user=$user "
                         "password=$v"),
    T("ios_username", "hostname SHOP-RTR\n!\nusername $user privilege 15 password 0 $v\n!\nline vty 0 4\n"
                      " login local"),
    T("pfsense_ldap", "<authserver>\n\t<type>ldap</type>\n\t<name>Office AD</name>\n"
                      "\t<ldap_binddn>CN=svc-pfsense,CN=Users,DC=office,DC=lan</ldap_binddn>\n"
                      "\t<ldap_bindpw>$v</ldap_bindpw>\n</authserver>"),
    T("ha_secrets", "# secrets.yaml\nmqtt_user: $user\nmqtt_password: $v\nlatitude_home: 40.4\n"),
    T("esphome_ota", "ota:\n  - platform: esphome\n    password: \"$v\"\n\nlogger:\n  level: DEBUG"),
    T("mosquitto_pub", "mosquitto_pub -h $ip -p 1883 -u $user -P '$v' -t home/garage/door -m OPEN"),
    T("mc_properties", "#Minecraft server properties\nenable-rcon=true\nrcon.port=25575\nrcon.password=$v\n"
                       "server-port=25565"),
    T("srcds_cfg", "hostname \"LAN Party $n\"\nrcon_password \"$v\"\nsv_lan 1"),
    T("compose_mariadb", "services:\n  nextcloud-db:\n    image: mariadb:10.11\n    environment:\n"
                         "      MYSQL_ROOT_PASSWORD: $v\n      MYSQL_DATABASE: nextcloud"),
    T("woo_env", "DB_NAME=tienda\nDB_USER=$user\nDB_PASSWORD=$v\nDB_HOST=localhost"),
    J("nvr_api_json", '{"meta":{"rc":"ok"},"data":[{"userName":"$user","userPassword":"$v","role":"admin"}]}'),
    J("nodered_cred", '{"a1b2c3d4.e5f6a7":{"user":"$user","password":"$v"}}'),
    T("z2m_yaml", "mqtt:\n  base_topic: zigbee2mqtt\n  server: mqtt://$ip:1883\n  user: $user\n  password: $v\n"
                  "serial:\n  port: /dev/ttyUSB0"),
    T("tasmota_console", "12:01:33.512 CMD: MqttPassword $v\n12:01:33.520 MQT: stat/tasmota_$n/RESULT = "
                         "{\"MqttPassword\":\"****\"}"),
    T("batch_net_user", "@echo off\nnet user $user $v /add\nnet localgroup administrators $user /add"),
    T("ps_securestring", "$$pw = ConvertTo-SecureString \"$v\" -AsPlainText -Force\n"
                         "New-LocalUser -Name \"$user\" -Password $$pw -FullName \"Recepcion\""),
    T("pgpassword_cron", "0 2 * * * PGPASSWORD=$v pg_dump -h $ip -U $user clinic > /volume1/backup/clinic.sql"),
    T("redis_env", "REDIS_HOST=$ip\nREDIS_PASS=$v\nPAPERLESS_URL=https://docs.casa.lan"),
    T("smbclient_flag", "smbclient //$host/scans -U $user --password $v -c 'ls'"),
    T("mysql_p", "mysql -u root -p$v tienda < pedidos_2026.sql"),
    T("js_camel", "const printerConfig = { host: '$ip', adminPassword: '$v', snmp: false };"),
    T("chat_es", "Hola, la contraseña del router es $v, ¿la puedes cambiar desde remoto?"),
    T("chat_de", "Zugang zur Fritzbox: Benutzer $user, Passwort: $v"),
    T("chat_pt_br", "a senha do painel do NVR é $v, pode entrar pra ver as câmeras"),
    T("chat_tr", "modem arayüzü kullanıcı $user şifre: $v"),
    T("chat_ja", "管理画面のパスワードは $v です。変更をお願いします。"),
    T("prefixed_env", "NEXTCLOUD_ADMIN_USER=$user\nNEXTCLOUD_ADMIN_PASSWORD=$v"),
]


# ---- AWS, webhooks, Stripe, connection strings, labelled keys --------------------------------------------------

def aws(rng: random.Random, _t: T) -> Value:
    """An AWS secret access key with its key id (`AKIA` long-term, `ASIA` temporary)."""
    prefix = rng.choice(("AKIA", "AKIA", "ASIA"))
    key_id = prefix + pick(rng, string.ascii_uppercase + "234567", 16)
    secret = pick(rng, B64, 40)
    while "/" not in secret and "+" not in secret:
        secret = pick(rng, B64, 40)
    return secret, prefix.lower(), {"v": secret, "kid": key_id}


AWS_CARRIERS = [
    T("aws_credentials", "[hyperbackup]\naws_access_key_id = $kid\naws_secret_access_key = $v\nregion = eu-west-1"),
    T("accesskeys_csv", "Access key ID,Secret access key\n$kid,$v\n"),
    J("synology_hb_json", '{"target_type":"s3","bucket":"clinic-backup-$n","access_key":"$kid",'
                          '"secret_key":"$v","region":"eu-central-1"}'),
    T("rclone_conf", "[s3-nas]\ntype = s3\nprovider = AWS\naccess_key_id = $kid\nsecret_access_key = $v\n"),
    T("restic_env", "export AWS_ACCESS_KEY_ID=$kid\nexport AWS_SECRET_ACCESS_KEY=$v\n"
                    "restic -r s3:s3.amazonaws.com/fotos-casa backup /volume1/photos"),
    T("ps_awscred", "Set-AWSCredential -AccessKey $kid -SecretKey $v -StoreAs backup-pos"),
    T("aws_configure", "aws configure set aws_access_key_id $kid --profile nas\n"
                       "aws configure set aws_secret_access_key $v --profile nas"),
    T("chat_unlabelled", "here are the keys for the camera cloud upload: $kid / $v"),
    T("chat_unlabelled_es", "las llaves del bucket: $kid $v (no las compartas)"),
    J("qnap_hbs3_json", '{"cloudType":"AmazonS3","accessKeyId":"$kid","secretAccessKey":"$v","useSSL":true}'),
    T("wp_offload", "define( 'AS3CF_SETTINGS', serialize( array(\n    'provider' => 'aws',\n"
                    "    'access-key-id' => '$kid',\n    'secret-access-key' => '$v',\n) ) );"),
    T("duplicati_export", "--aws-access-key-id=$kid\n--aws-secret-access-key=$v\n--s3-server-name=s3.amazonaws.com"),
    J("ha_s3_json", '{"domain":"aws_s3","data":{"bucket":"ha-backups","access_key_id":"$kid",'
                    '"secret_access_key":"$v"}}'),
    T("rmm_script", "# RMM: nightly POS backup\n$$env:AWS_ACCESS_KEY_ID=\"$kid\"\n$$env:AWS_SECRET_ACCESS_KEY=\"$v\"\n"
                    "aws s3 sync C:\\POS\\Backup s3://tienda-pos-backup"),
    T("tfvars_home", "aws_access_key = \"$kid\"\naws_secret_key = \"$v\""),
    T("env_plain", "AWS_ACCESS_KEY_ID=$kid\nAWS_SECRET_ACCESS_KEY=$v\nAWS_DEFAULT_REGION=sa-east-1"),
    T("ticket_de", "Zugangsdaten für den S3-Export der Kassendaten: $kid und $v"),
]


def webhook(rng: random.Random, t: T) -> Value:
    """A webhook URL of the carrier's provider (`t.hint`, else drawn); the secret is its token part."""
    kind = t.hint or rng.choice(("slack", "discord", "teams", "gchat", "zapier", "ifttt", "make", "mattermost",
                                 "ha", "logic"))
    if kind == "slack":
        tok = pick(rng, B62, 24)
        url = (f"https://hooks.slack.com/services/T{pick(rng, string.ascii_uppercase + string.digits, 8)}"
               f"/B{pick(rng, string.ascii_uppercase + string.digits, 10)}/{tok}")
    elif kind == "discord":
        tok = pick(rng, URLSAFE, 68)
        url = f"https://{rng.choice(('discord.com', 'discordapp.com'))}/api/webhooks/{digits(rng, 19)}/{tok}"
    elif kind == "teams":
        tok = f"{pick(rng, HEX, 32)}/{uuid.UUID(int=rng.getrandbits(128), version=4)}"
        url = (f"https://contoso{rng.randint(1, 99)}.webhook.office.com/webhookb2/{uuid.UUID(int=rng.getrandbits(128))}"
               f"@{uuid.UUID(int=rng.getrandbits(128))}/IncomingWebhook/{tok}")
    elif kind == "gchat":
        tok = pick(rng, URLSAFE, 43)
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
               f"{pick(rng, URLSAFE, 33)}&token={tok}")
    elif kind == "zapier":
        tok = f"{digits(rng, 7)}/{pick(rng, LOWER, 7)}"
        url = f"https://hooks.zapier.com/hooks/catch/{tok}/"
    elif kind == "ifttt":
        tok = pick(rng, URLSAFE, 22)
        url = f"https://maker.ifttt.com/trigger/door_open/with/key/{tok}"
    elif kind == "make":
        tok = pick(rng, LOWER, 32)
        url = f"https://hook.eu{rng.randint(1, 2)}.make.com/{tok}"
    elif kind == "mattermost":
        tok = pick(rng, LOWER, 26)
        url = f"https://chat.tienda.mx/hooks/{tok}"
    elif kind == "ha":
        tok = pick(rng, HEX, 64)
        url = f"https://hooks.nabu.casa/{tok}"
    else:
        tok = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-10-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}")
    return tok, kind, {"v": url}


WEBHOOK_CARRIERS = [
    J("nodered_http", '[{"id":"f1e2d3c4.b5a6","type":"http request","method":"POST","url":"$v",'
                      '"name":"avisar puerta"}]'),
    T("ha_rest_command", "rest_command:\n  notify_chat:\n    url: \"$v\"\n    method: post\n"
                         "    payload: '{\"text\": \"Alarm armed\"}'"),
    J("uptime_kuma", '{"name":"NAS down","type":"discord","discordWebhookUrl":"$v","isDefault":true}', "discord"),
    T("dsm_notification", "Control Panel > Notification > Webhooks\nProvider: Custom\nWebhook URL: $v\n"
                          "HTTP method: POST"),
    T("curl_cron", "*/5 * * * * curl -fsS -X POST -H 'Content-Type: application/json' "
                   "-d '{\"text\":\"UPS on battery\"}' $v"),
    T("ps_invoke", "Invoke-RestMethod -Uri \"$v\" -Method Post -Body (@{text=\"Backup OK on $$env:COMPUTERNAME\"} "
                   "| ConvertTo-Json) -ContentType 'application/json'"),
    T("esphome_http", "http_request:\n  useragent: esphome/door\non_press:\n  - http_request.post:\n      url: $v"),
    T("discordsrv_yml", "# DiscordSRV config.yml\nDiscordConsoleChannelId: \"000000000000000000\"\n"
                        "Experiment_WebhookChatMessageDelivery: true\nWebhookUrl: $v", "discord"),
    J("bot_config_json", '{"prefix":"!","guild":"Servidor de Minecraft","logWebhook":"$v"}', "discord"),
    J("sonarr_connect", '{"name":"Slack","implementation":"Slack","fields":[{"name":"webHookUrl","value":"$v"}]}',
      "slack"),
    T("octoprint_yaml", "plugins:\n  octorelay:\n    notify_url: $v\n  slackapi:\n    enabled: false"),
    T("unifi_alarm", "Alarm Manager > Action: Webhook (POST)\nDelivery URL: $v\nTrigger: Person detected, Door cam"),
    T("grafana_contact", "apiVersion: 1\ncontactPoints:\n  - name: home\n    receivers:\n      - uid: teams1\n"
                         "        type: teams\n        settings:\n          url: $v", "teams"),
    T("rmm_ps_alert", "# Alert when disk < 10%\n$$hook = '$v'\n"
                      "if ($$free -lt 10) { Invoke-WebRequest $$hook -Method POST }"),
    T("chat_fr", "Voici l'URL du webhook pour les alertes de la caisse : $v"),
    T("chat_it", "ti passo il webhook per le notifiche della stampante: $v"),
    T("frigate_yaml", "notifications:\n  enabled: true\n  webhook: $v\ncameras:\n  ingresso:\n    enabled: true"),
    J("zabbix_media", '{"mediatypeid":"14","name":"Teams","parameters":[{"name":"teams_endpoint","value":"$v"}]}',
      "teams"),
]


def whsec(rng: random.Random) -> tuple[str, str]:
    """A Stripe webhook signing secret."""
    return "whsec_" + pick(rng, B62, 32), "whsec"


WHSEC_CARRIERS = [
    T("dotenv", "STRIPE_KEY=pk_live_...\nSTRIPE_WEBHOOK_SECRET=$v\nAPP_URL=https://reservas.example"),
    J("woo_stripe_option", '{"option_name":"woocommerce_stripe_settings","enabled":"yes","testmode":"no",'
                           '"webhook_secret":"$v"}'),
    T("wp_cli", "wp option patch update woocommerce_stripe_settings webhook_secret $v"),
    T("compose_env", "services:\n  booking:\n    environment:\n      - STRIPE_ENDPOINT_SECRET=$v"),
    T("laravel_cashier", "CASHIER_CURRENCY=eur\nSTRIPE_WEBHOOK_SECRET=$v"),
    J("vercel_env_pull", '{"key":"STRIPE_SIGNING_SECRET","value":"$v","target":["production"]}'),
    T("php_config", "<?php\nreturn [\n    'stripe' => [\n        'webhook_secret' => '$v',\n    ],\n];"),
    T("python_settings", "STRIPE_WEBHOOK_SIGNING_SECRET = \"$v\"  # school fees portal"),
    T("chat_en", "Signing secret for the new endpoint is $v, paste it into the plugin"),
    T("chat_es_mx", "el secreto de firma del webhook quedó así: $v"),
    T("chat_nl", "Webhook-ondertekeningsgeheim voor de kassa: $v"),
    T("ghost_config", "\"stripe\": {\n  \"webhookSecret\": \"$v\"\n}"),
    T("ini_pos", "[stripe_terminal]\nlocation=tml_FxS2\nwebhook_secret=$v"),
    J("n8n_credential", '{"name":"Stripe account","type":"stripeApi","data":{"signatureSecret":"$v"}}'),
    T("k8s_secret_home", "kubectl create secret generic stripe --from-literal=webhook-secret=$v -n shop"),
    T("log_line", "2026-12-06 09:14:02 WARN stripe: signature mismatch using secret $v for evt_1QX"),
    T("yaml_config", "payments:\n  stripe:\n    signing_secret: $v"),
]


def conn_password(rng: random.Random) -> str:
    """A password that needs no escaping in URIs or `;` strings."""
    return rng.choice((pick(rng, string.ascii_letters + string.digits, rng.randint(10, 18)),
                       f"{rng.choice(WORDS)}{digits(rng, 4)}{rng.choice('!*_-')}{rng.choice(WORDS)}"))


def connection(rng: random.Random, t: T) -> Value:
    """A connection string of the carrier's type (`t.hint`); the secret is its password or key."""
    pw, user, ip = conn_password(rng), rng.choice(USERS), f"192.168.1.{rng.randint(2, 250)}"
    hint = t.hint or rng.choice(("mysql", "postgresql", "mqtt", "ado", "odbc", "jdbc"))
    if hint == "azure":
        pw = base64.b64encode(rng.randbytes(64)).decode()
        s = (f"DefaultEndpointsProtocol=https;AccountName=nvrarchive{rng.randint(1, 99)};AccountKey={pw};"
             "EndpointSuffix=core.windows.net")
    elif hint == "sas":
        pw = base64.b64encode(rng.randbytes(32)).decode()
        s = rng.choice((f"Endpoint=sb://tienda-bus.servicebus.windows.net/;SharedAccessKeyName="
                        f"RootManageSharedAccessKey;SharedAccessKey={pw}",
                        f"HostName=casa-hub.azure-devices.net;DeviceId=termostato;SharedAccessKey={pw}"))
    elif hint == "ado":
        s = f"Server={ip}\\SQLEXPRESS;Database=Clinica;User Id={user};Password={pw};TrustServerCertificate=True;"
    elif hint == "odbc":
        s = f"Driver={{ODBC Driver 18 for SQL Server}};Server={ip};Database=SIS;Uid={user};Pwd={pw};Encrypt=no;"
    elif hint == "jdbc":
        s = f"jdbc:mysql://{ip}:3306/pos?user={user}&password={pw}&useSSL=false"
    elif hint == "rtsp":
        s = f"rtsp://{user}:{pw}@{ip}:554/Streaming/Channels/{rng.choice((101, 102, 201))}"
    else:
        port = {"mysql": 3306, "postgresql": 5432, "mqtt": 1883, "smb": 445, "ftp": 21, "redis": 6379,
                "amqp": 5672}.get(hint, 0)
        who = "" if hint == "redis" else user
        s = f"{hint}://{who}:{pw}@{ip}:{port}/" + {"mysql": "homeassistant", "postgresql": "pms"}.get(hint, "")
    return pw, hint, {"v": s}


CONNECTION_CARRIERS = [
    J("appsettings", '{"ConnectionStrings":{"Clinica":"$v"},"Logging":{"LogLevel":{"Default":"Warning"}}}', "ado"),
    T("frigate_cameras", "cameras:\n  puerta:\n    ffmpeg:\n      inputs:\n        - path: $v\n"
                         "          roles: [detect, record]", "rtsp"),
    T("ha_recorder", "recorder:\n  db_url: $v\n  purge_keep_days: 30", "mysql"),
    T("nvr_export_csv", "Channel,Name,URL\n$n,Entrada,$v", "rtsp"),
    T("vlc_log", "main debug: processing request item: $v, node: Playlist", "rtsp"),
    T("pos_config_xml", "<add name=\"POS\" connectionString=\"$v\" providerName=\"System.Data.SqlClient\" />", "ado"),
    T("sis_odbc_ini", "[SchoolSIS]\nDriver=ODBC Driver 18 for SQL Server\nConnectionString=$v", "odbc"),
    T("pms_env", "DATABASE_URL=$v", "postgresql"),
    J("nodered_mqtt_broker", '{"id":"b1","type":"mqtt-broker","name":"casa","url":"$v","port":"1883"}', "mqtt"),
    T("nvr_azure_archive", "Archive target: Azure Blob\nConnection string: $v", "azure"),
    T("iot_device_cfg", "[azure]\nconnection_string = $v", "sas"),
    J("logicapp_params", '{"parameters":{"serviceBus":{"value":"$v"}}}', "sas"),
    T("jdbc_properties", "pos.datasource.url=$v\npos.datasource.driver=com.mysql.cj.jdbc.Driver", "jdbc"),
    T("fstab_smb", "# mapped by RMM\nnet use Z: \\\\nas\\escaneos /persistent:yes  # source $v", "smb"),
    T("ftp_scan_cfg", "Scan to FTP destination: $v/scans (passive)", "ftp"),
    T("redis_url", "CELERY_BROKER_URL=$v\nCELERY_RESULT_BACKEND=$v", "redis"),
    T("amqp_chat_pt", "a fila da loja liga em $v, confirma se está a correr?", "amqp"),
    J("dbeaver_json", '{"connections":{"mysql-tienda":{"configuration":{"url":"$v"}}}}', "jdbc"),
    T("access_odbc_fr", "Chaîne de connexion du logiciel de gestion locative : $v", "odbc"),
    T("azure_chat_de", "Der Storage-Account für die Kamera-Archive: $v", "azure"),
]


LABELS = ("API Key: {}", "API key = {}", "Secret key = {}", "access token is {}", "Clave API: {}",
          "Chave de API: {}", "Clé API : {}", "API-Schlüssel: {}", "Chiave API: {}", "API-sleutel: {}",
          "Klucz API: {}", "APIキー: {}", "API 키: {}", "API密钥：{}", "Secret Key: {}", "Access Token: {}",
          "Khóa API: {}", "Kunci API: {}", "API anahtarı: {}", "Ключ API: {}")


def labelled(rng: random.Random, _t: T) -> Value:
    """A key without a provider prefix behind a spaced label in one of 20 languages' wording."""
    style = rng.choice(("hex32", "b62_40", "b62_24", "upper_dash"))
    v = {"hex32": lambda: pick(rng, HEX, 32), "b62_40": lambda: pick(rng, B62, 40),
         "b62_24": lambda: pick(rng, B62, 24),
         "upper_dash": lambda: group(pick(rng, string.ascii_uppercase + string.digits, 24), 6, "-")}[style]()
    label = rng.choice(LABELS)
    return v, style, {"v": label.format(v)}


LABELLED_CARRIERS = [
    T("printnode_setup", "PrintNode client setup\n$v\nComputer: $host"),
    T("octoprint_about", "OctoPrint settings > API\nGlobal $v"),
    T("pos_terminal_screen", "TERMINAL CONFIG\nMerchant ID 000$n\n$v\n[OK] [CANCEL]"),
    T("weather_station", "Weather Underground station IBARCE$n\nStation $v"),
    T("seller_message", "Hi! For the inventory sync app use this $v thanks"),
    T("rmm_script_comment", "# vendor portal\n# $v\nInvoke-WebRequest -Uri https://portal.vendor.example/sync"),
    J("ticket_json", '{"subject":"Integración con la tienda","description":"$v"}'),
    T("email_fr", "Bonjour,\nvoici vos identifiants d'intégration.\n$v\nCordialement"),
    T("pdf_setup_sheet", "Installation sheet - Access control panel\nSite: Clinic $n\n$v\nInstaller: $user"),
    T("sms_de", "Ihr Zugang für die Heizungs-App: $v"),
    J("nodered_comment", '[{"id":"aa11","type":"comment","name":"cloud","info":"$v"}]'),
    T("chat_ja", "クラウド連携の設定です。$v"),
    T("chat_ko", "스마트홈 연동 설정 $v 입니다"),
    T("chat_zh", "门禁系统对接信息 $v"),
    T("chat_vi", "Thông tin kết nối camera: $v"),
    T("chat_id", "Data integrasi kasir: $v"),
    T("chat_ru", "Данные для интеграции склада: $v"),
    T("notes_md", "## Thermostat cloud\n- $v\n- Region: EU"),
]


# ---- disguised keys -------------------------------------------------------------------------------------------

INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u200f", "\u202a", "\u202c")


def provider_key(rng: random.Random) -> str:
    """A key of a known provider, as issued."""
    from benchmarks.corpus_formats import crc_token
    return rng.choice((
        lambda: "shpat_" + pick(rng, HEX, 32),
        lambda: "sk_live_" + pick(rng, B62, 24),
        lambda: crc_token(rng, "ghp_"),
        lambda: f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, B62, 24)}",
        lambda: f"{digits(rng, 10)}:AA{pick(rng, URLSAFE, 33)}",
        lambda: f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}",
    ))()


def disguised(rng: random.Random) -> tuple[str, str]:
    """A provider key with invisible characters inside, or in full-width forms."""
    key = provider_key(rng)
    style = rng.choice(("zero_width", "soft_hyphen", "bidi", "mixed", "fullwidth"))
    if style == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key), style
    marks = {"zero_width": INVISIBLE[:5], "soft_hyphen": ("\u00ad",), "bidi": INVISIBLE[6:], "mixed": INVISIBLE}
    chars = list(key)
    for _ in range(rng.randint(2, 5)):
        chars.insert(rng.randint(2, len(chars) - 2), rng.choice(marks[style]))
    return "".join(chars), style


DISGUISED_CARRIERS = [
    T("whatsapp_paste", "[06/12/26 10:41] Dueño: te paso la clave de la tienda $v"),
    T("pdf_copy", "Setup guide (copied from PDF)\nAccess token\n$v\nDo not share."),
    T("teams_msg", "Mike: use $v for the shop sync, it's the live one"),
    J("helpdesk_json", '{"ticket":4821,"comment":"token que me mandó el cliente: $v"}'),
    T("env_from_notes", "SHOP_TOKEN=$v"),
    T("yaml_from_word", "integration:\n  token: $v"),
    T("telegram_export", "Bot token from BotFather: $v"),
    T("email_html_text", "Hallo Herr Weber,\nder Schlüssel lautet $v\nMit freundlichen Grüßen"),
    J("nodered_env", '{"env":[{"name":"API","value":"$v","type":"str"}]}'),
    T("rmm_var", "$$Token = \"$v\"  # pasted from chat"),
    T("ocr_screenshot", "Settings  >  Developer\n$v\nRegenerate"),
    T("chat_ar", "هذا هو المفتاح: $v"),
    T("chat_he", "המפתח של החנות: $v"),
    T("chat_fa", "کلید فروشگاه: $v"),
    T("chat_hi", "दुकान की कुंजी: $v"),
    T("chat_th", "คีย์ของร้าน: $v"),
    J("discord_export", '{"messages":[{"author":{"name":"owner"},"content":"new key $v"}]}'),
    T("sms_ro", "Cheia pentru magazin: $v"),
]


# ---- e-mail addresses -----------------------------------------------------------------------------------------

LOCALS = ("maria.lopez", "j.silva", "kowalski.adam", "info", "recepcion", "ahmet.yilmaz", "priya.nair", "tanaka",
          "nguyen.van.an", "dr.papadopoulos", "petrova", "horvath.anna", "contabilidade", "kasse", "s.rossi")
DOMAINS = ("gmail.com", "outlook.com", "gmx.de", "orange.fr", "libero.it", "wp.pl", "seznam.cz", "abv.bg",
           "mail.ru", "ukr.net", "naver.com", "qq.com", "rediffmail.com", "uol.com.br", "sapo.pt", "ziggo.nl",
           "clinica-sol.es", "kwiaciarnia-roza.pl", "yahoo.co.jp", "freemail.hu")
IDN = ("josé.garcía@correo.es", "müller@bäckerei-müller.de", "θοδωρής@παράδειγμα.ελ", "почта@магазин.рф",
       "用户@例子.中国", "उपयोगकर्ता@उदाहरण.भारत", "ayşe@örnek.com.tr", "lê.thị@ví-dụ.vn", "도움@예시.한국",
       "müşteri@kargo.com.tr")


def email(rng: random.Random, t: T) -> Value:
    """An address in the style the carrier hints (`pct` in URLs, `json_u` in raw JSON logs, `html` in markup, `pnr`
    in GDS SSR CTCE elements, where IATA writes `@` as `//`), else drawn among plain, upper case, IDN and mailto."""
    addr = f"{rng.choice(LOCALS)}{rng.choice(('', str(rng.randint(1, 99))))}@{rng.choice(DOMAINS)}"
    style = t.hint or rng.choice(("plain", "plain", "upper", "idn", "mailto"))
    if style == "idn":
        addr = rng.choice(IDN).replace("@", f"{rng.randint(1, 999)}@", 1)
    if style == "upper":
        addr = addr.upper()
    written = {"pct": addr.replace("@", "%40"), "json_u": addr.replace("@", "\\u0040"),
               "html": addr.replace("@", "&#64;"), "pnr": addr.upper().replace("@", "//")}.get(style, addr)
    secret = written
    if style == "mailto":
        written = "mailto:" + addr
    return secret, style, {"v": written}


EMAIL_CARRIERS = [
    T("shopify_orders_csv", "Name,Email,Financial Status,Total\n#10$n,$v,paid,59.90"),
    T("etsy_message", "Message from buyer: please send the invoice to $v, thanks!"),
    T("shipping_label", "SHIP TO: Anna Horváth\nVáci út 12, 1132 Budapest\nE-mail: $v\nTRACKING 1Z999AA10123456784"),
    T("booking_confirm_es", "Confirmación de reserva\nHuésped: titular\nCorreo electrónico: $v\nLocalizador: QX7B2M"),
    J("unifi_admin", '{"data":[{"name":"$user","email":"$v","role":"admin","email_alert_enabled":true}]}'),
    T("ha_smtp", "notify:\n  - name: correo\n    platform: smtp\n    sender: alarma@casa.lan\n    recipient: $v"),
    T("printer_scan_to_email", "Address Book #$n\nName: Reception\nE-mail Address: $v\nScan size: A4"),
    T("unsubscribe_url", "GET /newsletter/unsubscribe?email=$v&list=promos HTTP/1.1", "pct"),
    T("wc_webhook_log", "[wc-webhook] payload={\"billing\":{\"email\":\"$v\",\"phone\":\"\"}}", "json_u"),
    T("html_footer", "<p>Contacto: <span>$v</span></p>", "html"),
    T("html_mailto", "<a href=\"$v\">Escríbenos</a>", "mailto"),
    J("woo_order_json", '{"id":72$n,"status":"processing","billing":{"first_name":"Lucía","email":"$v"}}'),
    T("amazon_seller_msg", "Buyer-Seller Messaging: reply to $v regarding order 114-3941689-8772232"),
    T("pms_tenant_pt", "Inquilino: Fração B\nEmail: $v\nRenda: 750,00 €"),
    T("school_frontdesk_pl", "Rodzic ucznia kl. 3b, e-mail: $v"),
    T("clinic_intake_ro", "Pacient nou, adresă de e-mail: $v"),
    T("telecom_care_tr", "Fatura e-posta adresi: $v olarak güncellendi."),
    T("loyalty_ja", "会員登録メールアドレス：$v"),
    T("dsm_notification_cs", "Oznámení e-mailem: příjemce $v"),
    T("customs_cn23", "CN23 Sender e-mail $v  Contents: gift  Value 25.00 EUR"),
    T("gds_pnr", "RM *SSR CTCE YY HK1/$v", "pnr"),
]


# ---- the phone plans ----------------------------------------------------------------------------------

def nanp(rng: random.Random) -> str:
    """An NPA-NXX-XXXX: NPA and NXX start 2-9, neither is N11, no 555."""
    def block() -> str:
        while True:
            b = str(rng.randint(2, 9)) + digits(rng, 2)
            if b[1:] != "11" and b != "555":
                return b
    return block() + block() + digits(rng, 4)


def phone_us_ca(rng: random.Random) -> tuple[str, str]:
    """A NANP number in its common prints."""
    n = nanp(rng)
    a, b, c = n[:3], n[3:6], n[6:]
    style = rng.choice(("paren", "dash", "dot", "intl", "intl_compact", "one_dash", "space"))
    return {"paren": f"({a}) {b}-{c}", "dash": f"{a}-{b}-{c}", "dot": f"{a}.{b}.{c}", "intl": f"+1 {a}-{b}-{c}",
            "intl_compact": f"+1{n}", "one_dash": f"1-{a}-{b}-{c}", "space": f"{a} {b} {c}"}[style], style


def phone_uk(rng: random.Random) -> tuple[str, str]:
    """A UK number: mobile 07[1-57-9], London 020, or a 01xx/0161 area."""
    style = rng.choice(("mobile", "mobile_intl", "london", "london_intl_0", "area", "mobile_compact"))
    mob = "7" + rng.choice("1234579") + digits(rng, 8)
    lon = "20" + rng.choice("378") + digits(rng, 7)
    area = rng.choice(("161", "113", "121", "131", "141")) + rng.choice("2345678") + digits(rng, 6)
    return {"mobile": f"0{mob[:4]} {mob[4:]}", "mobile_intl": f"+44 {mob[:4]} {mob[4:]}",
            "london": f"020 {lon[2:6]} {lon[6:]}", "london_intl_0": f"+44 (0)20 {lon[2:6]} {lon[6:]}",
            "area": f"0{area[:3]} {area[3:6]} {area[6:]}", "mobile_compact": f"0{mob}"}[style], style


def phone_fr(rng: random.Random) -> tuple[str, str]:
    """A French number: 0[1-79] and eight digits, in pairs."""
    nsn = rng.choice("1234567679") + digits(rng, 8)
    pairs = [nsn[1:3], nsn[3:5], nsn[5:7], nsn[7:9]]
    style = rng.choice(("space", "dot", "compact", "intl", "intl_0", "dash"))
    return {"space": f"0{nsn[0]} " + " ".join(pairs), "dot": f"0{nsn[0]}." + ".".join(pairs),
            "compact": "0" + nsn, "intl": f"+33 {nsn[0]} " + " ".join(pairs),
            "intl_0": f"+33 (0){nsn[0]} " + " ".join(pairs), "dash": f"0{nsn[0]}-" + "-".join(pairs)}[style], style


def phone_de(rng: random.Random) -> tuple[str, str]:
    """A German number: mobile 015x/016x/017x, or Berlin/Hamburg/München/Köln."""
    style = rng.choice(("mobile", "mobile_slash", "mobile_intl", "city", "city_intl_0", "city_dash", "0049"))
    mob = rng.choice(("151", "152", "157", "160", "162", "170", "171", "172", "173", "176", "177", "179"))
    sub = digits(rng, rng.choice((7, 8)))
    city = rng.choice(("30", "40", "89", "221"))
    local = str(rng.randint(2, 9)) + digits(rng, 10 - len(city) - 1)
    return {"mobile": f"0{mob} {sub}", "mobile_slash": f"0{mob}/{sub}", "mobile_intl": f"+49 {mob} {sub}",
            "city": f"0{city} {local}", "city_intl_0": f"+49 (0){city} {local}", "city_dash": f"0{city}-{local}",
            "0049": f"0049 {mob} {sub}"}[style], style


def phone_in(rng: random.Random) -> tuple[str, str]:
    """An Indian number: mobiles 6-9 and nine digits, or a metro STD code and landline."""
    mob = str(rng.randint(6, 9)) + digits(rng, 9)
    style = rng.choice(("intl_split", "intl_dash", "zero_split", "compact", "landline", "intl_compact"))
    std = rng.choice(("11", "22", "80", "44", "33"))
    line = str(rng.randint(2, 6)) + digits(rng, 7)
    return {"intl_split": f"+91 {mob[:5]} {mob[5:]}", "intl_dash": f"+91-{mob}", "zero_split": f"0{mob[:5]} {mob[5:]}",
            "compact": mob, "landline": f"0{std}-{line[:4]} {line[4:]}", "intl_compact": f"+91{mob}"}[style], style


PHONE_US_CARRIERS = [
    T("tenant_app", "Rental application\nApplicant phone: $v\nCurrent landlord: on file"),
    T("clinic_frontdesk", "New patient check-in. Cell phone $v, prefers text reminders."),
    T("ring_support", "Call me at $v if the doorbell goes offline again"),
    T("shopify_customer_csv", "First Name,Last Name,Phone,Accepts SMS\nJordan,Reyes,$v,yes"),
    T("sim_activation", "eSIM activation request - contact number: $v, IMEI on file"),
    T("porting_request", "Port-in request: number to port $v, account PIN provided separately"),
    T("qc_tel_fr", "Téléphone du client (cellulaire) : $v"),
    T("mx_us_es", "mi celular en Texas es el $v, mándame mensaje"),
    J("sms_optout_json", '{"customer":{"phone":"$v"},"channel":"sms","body":"STOP"}'),
    T("voicemail_transcript", "Voicemail from phone $v: hi, it's about the router install tomorrow"),
    T("school_emergency", "Emergency contact (mother) - phone $v"),
    T("pos_receipt_footer", "Questions? Call us at $v  Thank you!"),
    J("hubspot_contact", '{"properties":{"phone":"$v","lifecyclestage":"customer"}}'),
    T("airbnb_msg", "Host: you can reach me on my mobile $v for the door code"),
    T("vcard", "BEGIN:VCARD\nVERSION:3.0\nFN:Front Desk\nTEL;TYPE=CELL:$v\nEND:VCARD"),
    T("rmm_asset_note", "Site contact: office manager, tel $v"),
]
PHONE_UK_CARRIERS = [
    T("letting_agent", "Tenant mobile: $v (prefers WhatsApp)"),
    T("gp_reception", "Patient rang from $v, please call back re: repeat prescription. Phone number confirmed."),
    T("broadband_care", "Contact number for the engineer visit: $v"),
    T("sim_swap", "SIM replacement - mobile number $v, PAC requested"),
    T("ebay_msg", "Ring me on $v if the courier can't find the house"),
    J("deliveroo_order", '{"customer":{"phone_number":"$v"},"notes":"ring the bell"}'),
    T("school_office", "Parent contact tel: $v (dad)"),
    T("vcard", "BEGIN:VCARD\nVERSION:4.0\nTEL;TYPE=voice:$v\nEND:VCARD"),
    T("csv_customers", "name,phone,postcode\nOwen Hughes,$v,CF10 1AA"),
    T("booking_confirm", "Your table is booked. We'll call you on $v if anything changes."),
    T("alarm_monitoring", "Keyholder 1: mobile $v\nKeyholder 2: on file"),
    J("zendesk_user", '{"user":{"name":"Siobhan","phone":"$v","role":"end-user"}}'),
    T("welsh_bilingual", "Ffôn / Phone: $v"),
    T("cctv_install", "Installer: call me on $v when you're on site"),
    T("porting_uk", "Port request: please keep my number $v, telephone account ref attached"),
    T("voicemail", "New voicemail from $v (mobile): about the printer lease"),
]
PHONE_FR_CARRIERS = [
    T("agence_immo", "Locataire : Mme Lefèvre, portable $v"),
    T("cabinet_medical", "Patient rappelé au $v (tél. fixe) pour confirmer le RDV"),
    T("box_internet", "Contact technicien : appelez-moi au $v"),
    T("portabilite", "Demande de portabilité : numéro $v, code RIO fourni"),
    J("leboncoin_msg", '{"message":"Bonjour, mon téléphone est le $v","adId":24571}'),
    T("ecole_secretariat", "Responsable légal 1 - Téléphone : $v"),
    T("commande_csv", "nom;telephone;ville\nDupont;$v;Lyon"),
    T("vcard", "BEGIN:VCARD\nTEL;TYPE=CELL:$v\nEND:VCARD"),
    T("livraison", "Livreur : merci de me joindre sur mon mobile au $v"),
    T("hotel_confirm", "Réservation confirmée. Tél. du client : $v"),
    J("crm_contact", '{"contact":{"nom":"Girard","telephone":"$v"}}'),
    T("sav_ticket", "Le client demande à être rappelé sur son portable : $v"),
    T("alarme", "Numéro d'astreinte (tél) : $v"),
    T("ticket_caisse", "Boulangerie du Port - Tél $v - SIRET sur demande"),
    T("whatsapp_fr", "[10:02] Julie: tu peux m'appeler au $v ?"),
    T("be_fr", "Contact du syndic, téléphone : $v"),
]
PHONE_DE_CARRIERS = [
    T("hausverwaltung", "Mieter: Herr Schäfer, Handy $v"),
    T("arztpraxis", "Rückruf erbeten unter Tel. $v"),
    T("router_ticket", "Kunde erreichbar unter $v (Telefon), Fritzbox startet neu"),
    T("rufnummernmitnahme", "Rufnummernmitnahme: Rufnummer $v, Kundenkennwort liegt vor"),
    J("kleinanzeigen", '{"nachricht":"Meine Handynummer ist $v","anzeige":2231}'),
    T("schule_sekretariat", "Erziehungsberechtigte/r, Telefon: $v"),
    T("bestellung_csv", "Name;Telefon;PLZ\nKrüger;$v;10115"),
    T("vcard", "BEGIN:VCARD\nTEL;TYPE=work:$v\nEND:VCARD"),
    T("lieferung", "Bitte vor Lieferung anrufen: Mobil $v"),
    T("hotel", "Buchungsbestätigung – Telefonnummer des Gastes: $v"),
    J("crm_kontakt", '{"kontakt":{"name":"Lehmann","telefon":"$v"}}'),
    T("impressum", "Impressum\nTel.: $v\nUSt-IdNr. auf Anfrage"),
    T("ch_de", "Kontakt Hauswart, Natel: $v"),
    T("whatsapp_de", "[09:15] Jonas: ruf mich kurz an, $v, Telefon liegt neben mir"),
    T("alarmanlage", "Notfallkontakt 1 (Handy): $v"),
    T("kassenbon", "Bäckerei Schmidt · Tel. $v · Vielen Dank!"),
]
PHONE_IN_CARRIERS = [
    T("clinic_reg", "Patient registration - Mobile No.: $v"),
    T("flat_rent", "Tenant contact number $v, rent due on 5th"),
    T("sim_kyc", "New SIM activation, alternate mobile number: $v"),
    T("mnp_request", "MNP porting request, mobile $v, UPC code received by SMS"),
    J("swiggy_order", '{"customer":{"phone":"$v"},"instructions":"call on arrival"}'),
    T("school_office", "Parent phone: $v (father)"),
    T("hindi_chat", "मेरा मोबाइल नंबर $v है, कृपया कॉल करें"),
    T("hindi_form", "फ़ोन: $v"),
    T("marathi_chat", "माझा मोबाईल क्रमांक $v आहे"),
    T("tamil_chat", "என் கைபேசி எண் $v"),
    T("tamil_form", "தொலைபேசி: $v"),
    T("vcard", "BEGIN:VCARD\nTEL;TYPE=CELL:$v\nEND:VCARD"),
    J("crm_lead", '{"lead":{"name":"Ravi","mobile":"$v","city":"Pune"}}'),
    T("irctc_sms", "Call the helpdesk from registered mobile $v for PNR status"),
    T("csv_orders", "order_id,name,phone\n4412,Ananya,$v"),
    T("whatsapp_in", "[11:20] Suresh: call me at $v after 6 pm"),
]


# ---- SSN, cards, IBANs ----------------------------------------------------------------------------------------

def ssn(rng: random.Random) -> tuple[str, str]:
    """An SSN by the SSA's rules, dashed, spaced or compact."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    g, s = rng.randint(1, 99), rng.randint(1, 9999)
    style = rng.choice(("dash", "dash", "space", "compact"))
    sep = {"dash": "-", "space": " ", "compact": ""}[style]
    return f"{area:03d}{sep}{g:02d}{sep}{s:04d}", style


SSN_CARRIERS = [
    T("clinic_intake", "Patient intake form\nSSN: $v\nInsurance: Aetna PPO"),
    T("tenant_screening", "Rental application - Social Security Number $v - consent to credit check: yes"),
    T("school_enroll", "Student enrollment (guardian) SSN $v"),
    T("payroll_csv", "employee,ssn,rate\nM. Ortiz,$v,18.50"),
    J("quickbooks_employee", '{"Employee":{"GivenName":"Dana","SSN":"$v","PrimaryAddr":{"City":"Tucson"}}}'),
    T("tax_chat", "here's my social security number for the 1099: $v"),
    T("telecom_credit", "Postpaid credit check - SSN# $v"),
    T("spanish_form", "Número de Seguro Social (SSN): $v"),
    T("w9_ocr", "Part I Taxpayer Identification Number\nSocial security number\n$v"),
    T("pos_loyalty_note", "Customer asked to store SSN $v for layaway. DO NOT."),
    J("ehr_export", '{"patient":{"name":"R. Lee","ssn":"$v","dob":"1984-02-11"}}'),
    T("property_mgmt", "Co-signer SSN: $v"),
    T("daycare_form", "Child care subsidy - parent's SS# $v"),
    T("email_hr", "Hi, my SSN is $v for the direct deposit form."),
    T("bank_chat_es", "mi número de seguro social es $v"),
    T("vi_chat", "Số an sinh xã hội (SSN) của tôi: $v"),
]


CARD_IINS = (("4", 16), ("51", 16), ("53", 16), ("55", 16), ("2221", 16), ("27200", 16), ("34", 15), ("37", 15),
             ("6011", 16), ("644", 16), ("65", 16), ("3528", 16), ("3589", 16), ("36", 14), ("62", 16),
             ("62", 19), ("4", 13))


def card(rng: random.Random) -> tuple[str, str]:
    """A card number of a real IIN range with its Luhn digit, in one of five separators."""
    prefix, length = rng.choice(CARD_IINS)
    partial = prefix + digits(rng, length - len(prefix) - 1)
    number = partial + luhn_digit(partial)
    style = rng.choice(("space", "dash", "dot", "underscore", "none"))
    sep = {"space": " ", "dash": "-", "dot": ".", "underscore": "_", "none": ""}[style]
    return (group_card(number, sep) if len(number) in (14, 15, 16) else group(number, 4, sep)), style


CARD_CARRIERS = [
    T("pos_debug_log", "2026-12-06 12:40:11 DEBUG EMV fallback PAN=$v exp=2811 entry=swipe"),
    T("woo_order_note", "Order note: customer phoned in card $v exp 09/28, charge manually"),
    T("phone_order_es", "Pedido telefónico: tarjeta $v, caduca 03/29"),
    T("hotel_folio", "Guarantee: card number $v (guest called front desk)"),
    J("booking_json", '{"reservation":"HX$n","guarantee":{"cardNumber":"$v","holder":"M SANTOS"}}'),
    T("rent_payment_pt", "Pagamento da renda com cartão $v"),
    T("school_fees", "Fee payment - card $v - Term 2"),
    T("clinic_copay_fr", "Règlement franchise : carte $v"),
    T("telecom_autopay_de", "Lastschrift abgelehnt, neue Kreditkarte $v hinterlegt"),
    T("chat_it", "ecco il numero della carta $v, grazie"),
    T("chat_nl", "mijn creditcardnummer is $v"),
    J("wallet_support", '{"ticket":"W-$n","message":"cartão vinculado $v não aparece"}'),
    T("csv_import", "name,card_number,exp\nK. Nowak,$v,12/27"),
    T("chat_tr", "kart numaram $v, ödeme geçmedi"),
    T("chat_ja", "カード番号は $v です"),
    T("chat_ko", "카드번호 $v 로 결제해주세요"),
    T("receipt_ocr", "MERCHANT COPY\nCARD $v\nAUTH 004512 APPROVED"),
    T("chat_ru", "номер карты $v, оплата не проходит"),
]

IBAN_STRUCTURES = {"DE": "8n10n", "FR": "5n5n11c2n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c", "NL": "4a10n",
                   "PT": "4n4n11n2n", "PL": "8n16n", "CZ": "4n6n10n", "SK": "4n6n10n", "HU": "3n4n1n15n1n",
                   "RO": "4a16c", "BG": "4a4n2n8c", "RS": "3n13n2n", "HR": "7n10n", "GR": "3n4n16c", "TR": "5n1n16c",
                   "UA": "6n19c", "GB": "4a6n8n", "BE": "3n7n2n", "AT": "5n11n", "SA": "2n18c", "AE": "3n16n",
                   "IL": "3n3n13n"}


def iban(rng: random.Random, t: T) -> Value:
    """An IBAN of the carrier's country (`t.hint`) or a drawn one, grouped, compact or lower case."""
    country = t.hint or rng.choice(list(IBAN_STRUCTURES))
    b = bban(rng, IBAN_STRUCTURES[country])
    compact = country + iban_check(country, b) + b
    style = rng.choice(("grouped", "grouped", "compact", "lower_compact", "lower_grouped"))
    v = {"grouped": group(compact, 4, " "), "compact": compact, "lower_compact": compact.lower(),
         "lower_grouped": group(compact.lower(), 4, " ")}[style]
    return v, f"{country}_{style}", {"v": v}


IBAN_CARRIERS = [
    T("sepa_mandate_de", "SEPA-Lastschriftmandat\nKontoinhaber: Mieter Whg. 4\nIBAN: $v", "DE"),
    T("rent_fr", "Loyer à virer sur le compte IBAN $v (agence)", "FR"),
    T("school_fees_es", "Cuota del comedor escolar - domiciliación IBAN $v", "ES"),
    T("condominio_it", "Bonifico spese condominiali, IBAN $v", "IT"),
    T("vve_nl", "Servicekosten graag overmaken naar $v t.n.v. VvE", "NL"),
    T("clinic_pt", "Reembolso da consulta para o IBAN $v", "PT"),
    T("marketplace_payout_pl", "Konto do wypłat (Allegro): $v", "PL"),
    T("eshop_cz", "Platba převodem na účet IBAN: $v", "CZ"),
    T("eshop_sk", "Číslo účtu (IBAN): $v", "SK"),
    T("invoice_hu", "Számlaszám (IBAN): $v", "HU"),
    T("invoice_ro", "Cont IBAN furnizor: $v", "RO"),
    T("invoice_bg", "Банкова сметка IBAN: $v", "BG"),
    T("invoice_rs", "Račun IBAN: $v", "RS"),
    T("invoice_hr", "IBAN primatelja: $v", "HR"),
    T("rent_gr", "Ενοίκιο: κατάθεση στο IBAN $v", "GR"),
    T("seller_tr", "Satıcı ödeme hesabı IBAN: $v", "TR"),
    T("payout_ua", "Рахунок для виплат IBAN: $v", "UA"),
    J("stripe_payout_json", '{"object":"bank_account","account_holder_name":"Tienda Sol","iban":"$v"}'),
    J("woo_bacs", '{"woocommerce_bacs_accounts":[{"account_name":"Shop","iban":"$v","bic":"DEUTDEFF"}]}'),
    T("payroll_ae", "Salary transfer to IBAN $v", "AE"),
    T("invoice_sa", "رقم الآيبان IBAN: $v", "SA"),
    T("invoice_il", "מספר IBAN לתשלום: $v", "IL"),
    T("uk_supplier", "Supplier bank details - IBAN $v", "GB"),
]


# ---- the providers and devices of this world ------------------------------------------------------------------

def hmac_jwt(rng: random.Random, payload: dict[str, object]) -> str:
    """A HS256 JWS compact serialisation (RFC 7515) of `payload` under a random key."""
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = b64url(json.dumps(payload, separators=(",", ":")).encode())
    sig = hmac.new(rng.randbytes(32), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64url(sig)}"


def shopify(rng: random.Random) -> tuple[str, str]:
    """A Shopify admin, shared-secret, custom-app or partner token."""
    prefix = rng.choice(("shpat_", "shpss_", "shpca_", "shppa_"))
    return prefix + pick(rng, HEX, 32), prefix[:-1]


SHOPIFY_CARRIERS = [
    T("dotenv", "SHOPIFY_STORE=tienda-sol.myshopify.com\nSHOPIFY_ACCESS_TOKEN=$v"),
    T("curl_header", "curl -H 'X-Shopify-Access-Token: $v' https://tienda-sol.myshopify.com/admin/api/2024-10/orders.json"),
    T("python_session", "session = shopify.Session('casa-verde.myshopify.com', '2024-10', '$v')"),
    J("n8n_credential", '{"name":"Shopify","type":"shopifyAccessTokenApi","data":{"accessToken":"$v"}}'),
    T("chat_pt", "o token do app da loja é $v"),
    T("matrixify_cfg", "[store]\nshop = bazar-ana\napi_secret = $v"),
    J("zapier_auth", '{"auth":{"shop":"moda-ro","token":"$v"}}'),
    T("ps_rmm", "$$headers = @{ 'X-Shopify-Access-Token' = '$v' }"),
]


def woo(rng: random.Random, _t: T) -> Value:
    """A WooCommerce REST consumer secret beside its consumer key."""
    secret = "cs_" + pick(rng, HEX, 40)
    return secret, "cs", {"v": secret, "ck": "ck_" + pick(rng, HEX, 40)}


WOO_CARRIERS = [
    T("curl_basic", "curl https://tienda.example/wp-json/wc/v3/orders -u $ck:$v"),
    T("query_string", "GET /wp-json/wc/v3/products?consumer_key=$ck&consumer_secret=$v HTTP/1.1"),
    T("dotenv", "WC_CONSUMER_KEY=$ck\nWC_CONSUMER_SECRET=$v"),
    T("python_api", "wcapi = API(url='https://loja.example', consumer_key='$ck', consumer_secret='$v',\n"
                    "            version='wc/v3')"),
    J("n8n_credential", '{"type":"wooCommerceApi","data":{"consumerKey":"$ck","consumerSecret":"$v"}}'),
    T("chat_es", "Clave del cliente $ck y secreto $v, ya lo generé en WooCommerce"),
    T("wp_cli_table", "+----+-------------+--------------------------------------------+\n| id | description | "
                      "consumer_secret |\n| $n | ERP sync    | $v |"),
    J("erp_connector", '{"woocommerce":{"url":"https://sklep.example","key":"$ck","secret":"$v"}}'),
]


def twilio(rng: random.Random, _t: T) -> Value:
    """A Twilio auth token (32 hex) beside its `AC` account SID, or an API key secret beside its `SK` id."""
    if rng.random() < 0.75:
        secret, sid, style = pick(rng, HEX, 32), "AC" + pick(rng, HEX, 32), "auth_token"
    else:
        secret, sid, style = pick(rng, B62, 32), "SK" + pick(rng, HEX, 32), "api_key_secret"
    return secret, style, {"v": secret, "sid": sid}


TWILIO_CARRIERS = [
    T("ha_twilio_yaml", "twilio:\n  account_sid: $sid\n  auth_token: $v"),
    T("dotenv", "TWILIO_ACCOUNT_SID=$sid\nTWILIO_AUTH_TOKEN=$v\nTWILIO_FROM=+15005550006"),
    T("curl_u", "curl -X POST https://api.twilio.com/2010-04-01/Accounts/$sid/Messages.json -u $sid:$v"),
    J("nodered_twilio", '{"id":"tw1","type":"twilio-api","sid":"$sid","credentials":{"token":"$v"}}'),
    T("python_client", "client = Client('$sid', '$v')  # clinic SMS reminders"),
    T("chat_en", "Twilio for the salon reminders: SID $sid, token $v"),
    T("ps_cred", "$$cred = New-Object PSCredential('$sid', (ConvertTo-SecureString '$v' -AsPlainText -Force))"),
    J("n8n_twilio", '{"type":"twilioApi","data":{"accountSid":"$sid","authToken":"$v"}}'),
]


def telegram(rng: random.Random) -> tuple[str, str]:
    """A Telegram bot token: the bot's id, a colon, 35 URL-safe characters (BotFather's format)."""
    return f"{digits(rng, rng.choice((9, 10)))}:AA{pick(rng, URLSAFE, 33)}", "bot"


TELEGRAM_CARRIERS = [
    T("ha_telegram_yaml", "telegram_bot:\n  - platform: polling\n    api_key: $v\n    allowed_chat_ids:\n"
                          "      - 123456789"),
    J("nodered_bot", '{"id":"tg1","type":"telegram bot","botname":"CasaBot","credentials":{"token":"$v"}}'),
    T("dotenv", "TELEGRAM_BOT_TOKEN=$v\nCHAT_ID=-1001234567890"),
    T("curl_send", "curl -s \"https://api.telegram.org/bot$v/sendMessage?chat_id=42&text=Motion\""),
    J("uptime_kuma", '{"type":"telegram","telegramBotToken":"$v","telegramChatID":"42"}'),
    T("python_bot", "app = ApplicationBuilder().token(\"$v\").build()"),
    T("chat_ru", "токен бота для сигнализации: $v"),
    T("zabbix_macro", "{$$TELEGRAM.TOKEN} = $v"),
    T("frigate_notify", "notify:\n  telegram:\n    token: $v"),
]


def ha_token(rng: random.Random) -> tuple[str, str]:
    """A Home Assistant long-lived access token: a HS256 JWT with `iss` (32 hex), `iat`, `exp` ten years on."""
    iat = rng.randint(1_700_000_000, 1_760_000_000)
    return hmac_jwt(rng, {"iss": pick(rng, HEX, 32), "iat": iat, "exp": iat + 315_360_000}), "long_lived"


HA_TOKEN_CARRIERS = [
    T("curl_bearer", "curl -H \"Authorization: Bearer $v\" http://homeassistant.local:8123/api/states"),
    T("secrets_yaml", "ha_token: $v\nwifi_ssid: Casa"),
    J("nodered_server", '{"id":"ha1","type":"server","name":"Home Assistant","credentials":{"access_token":"$v"}}'),
    T("appdaemon_yaml", "appdaemon:\n  plugins:\n    HASS:\n      type: hass\n      ha_url: http://ha:8123\n"
                        "      token: $v"),
    J("ws_auth", '{"type":"auth","access_token":"$v"}'),
    T("dotenv", "HASS_URL=http://192.168.1.20:8123\nHASS_TOKEN=$v"),
    T("python_client", "client = Client('http://ha.local:8123/api', '$v')"),
    T("chat_nl", "hier is de token voor Home Assistant: $v"),
    T("grafana_ds", "datasources:\n  - name: HA\n    jsonData:\n      httpHeaderName1: Authorization\n"
                    "    secureJsonData:\n      httpHeaderValue1: Bearer $v"),
]


def esphome_key(rng: random.Random) -> tuple[str, str]:
    """An ESPHome native API encryption key: 32 random bytes in base64."""
    return base64.b64encode(rng.randbytes(32)).decode(), "noise_psk"


ESPHOME_CARRIERS = [
    T("esphome_yaml", "api:\n  encryption:\n    key: \"$v\"\n\nwifi:\n  ssid: !secret wifi_ssid"),
    T("secrets_yaml", "api_key_garage: \"$v\"\nota_password_garage: !secret ota"),
    J("ha_config_entry", '{"domain":"esphome","data":{"host":"garage.local","port":6053,"noise_psk":"$v"}}'),
    T("aioesphomeapi", "cli = APIClient('garage.local', 6053, None, noise_psk='$v')"),
    T("chat_es", "la clave de cifrado de la API del ESP es $v"),
    T("esphome_log", "INFO Reading configuration /config/puerta.yaml...\napi:\n  encryption:\n    key: $v"),
    T("dashboard_note", "# sensor-cocina\nencryption key: $v"),
]


def tuya(rng: random.Random, _t: T) -> Value:
    """A Tuya IoT cloud access secret (32) beside its access id (20), or a device's local key (16)."""
    if rng.random() < 0.5:
        secret = pick(rng, LOWER, 32)
        return secret, "access_secret", {"v": secret, "id": pick(rng, LOWER, 20)}
    secret = pick(rng, string.ascii_letters + string.digits + "<>[]{}|~^`'#", 16)
    while not any(c in "<>[]{}|~^`'#" for c in secret):
        secret = pick(rng, string.ascii_letters + string.digits + "<>[]{}|~^`'#", 16)
    return secret, "local_key", {"v": secret, "id": "bf" + pick(rng, LOWER, 20)}


TUYA_CARRIERS = [
    J("tinytuya_devices", '[{"name":"Enchufe salón","id":"$id","key":"$v","mac":"a4:c1:38:0d:22:1f"}]'),
    T("tinytuya_wizard", "Enter API Key from tuya.com: $id\nEnter API Secret from tuya.com: $v"),
    J("localtuya_entry", '{"domain":"localtuya","data":{"device_id":"$id","local_key":"$v","protocol_version":"3.3"}}'),
    T("dotenv", "TUYA_ACCESS_ID=$id\nTUYA_ACCESS_SECRET=$v"),
    J("nodered_tuya", '[{"type":"tuya-smart-device","deviceId":"$id","deviceKey":"$v"}]'),
    T("chat_id", "device id $id, local key $v, lampunya mati terus"),
    T("python_device", "d = tinytuya.OutletDevice('$id', '192.168.1.44', '$v')"),
]


def exchange(rng: random.Random, t: T) -> Value:
    """An exchange API secret beside its key: Binance 64 alphanumerics, Coinbase 32, Kraken 64 bytes base64."""
    venue = t.hint or rng.choice(("binance", "coinbase", "kraken"))
    if venue == "binance":
        secret, key = pick(rng, B62, 64), pick(rng, B62, 64)
    elif venue == "coinbase":
        secret, key = pick(rng, B62, 32), pick(rng, B62, 16)
    else:
        secret, key = base64.b64encode(rng.randbytes(64)).decode(), pick(rng, B64, 56)
    return secret, venue, {"v": secret, "key": key}


EXCHANGE_CARRIERS = [
    J("freqtrade_config", '{"exchange":{"name":"binance","key":"$key","secret":"$v","ccxt_config":{}}}', "binance"),
    T("ccxt_python", "ex = ccxt.kraken({'apiKey': '$key', 'secret': '$v'})", "kraken"),
    T("hummingbot_yml", "binance_api_key: $key\nbinance_api_secret: $v", "binance"),
    T("dotenv", "COINBASE_API_KEY=$key\nCOINBASE_API_SECRET=$v", "coinbase"),
    T("keys_export_csv", "API Key,Secret Key,Permissions\n$key,$v,Enable Reading", "binance"),
    T("kraken_screen", "API Key: $key\nPrivate Key: $v\nNonce window: 0", "kraken"),
    T("support_chat_tr", "Binance API anahtarım $key gizli anahtar $v, bot işlem yapmıyor", "binance"),
    T("support_chat_vi", "API key $key, secret $v, sao bot không đặt lệnh được?"),
    T("support_chat_ru", "ключ $key, секрет $v, помогите с ботом"),
    J("tax_app_import", '{"exchange":"coinbase","apiKey":"$key","apiSecret":"$v"}', "coinbase"),
]


def remote_password(rng: random.Random, _t: T) -> Value:
    """A TeamViewer/AnyDesk/RustDesk password beside the machine's ID."""
    secret = rng.choice((pick(rng, LOWER, rng.randint(8, 10)), password(rng)[0]))
    rid = f"{rng.randint(100_000_000, 1_999_999_999):,}".replace(",", " ")
    return secret, "unattended", {"v": secret, "rid": rid}


REMOTE_CARRIERS = [
    T("chat_en", "TeamViewer ID: $rid / Password: $v"),
    T("chat_es", "ID de AnyDesk $rid, contraseña $v"),
    T("chat_pt", "ID do TeamViewer $rid senha $v"),
    T("anydesk_cli", "echo $v | \"C:\\Program Files (x86)\\AnyDesk\\AnyDesk.exe\" --set-password"),
    T("teamviewer_cli", "sudo teamviewer passwd $v"),
    T("rustdesk_cli", "rustdesk.exe --password $v  # ID $rid"),
    J("ticket_json", '{"ticket":"RMM-$n","remote":{"tool":"TeamViewer","id":"$rid","password":"$v"}}'),
    T("rmm_script", "$$pw = '$v'\n& \"$$env:ProgramFiles\\AnyDesk\\AnyDesk.exe\" --set-password $$pw"),
    T("chat_de", "TeamViewer-ID $rid, Kennwort $v"),
    T("chat_fil", "TeamViewer ID $rid, password ay $v po"),
]


def psk(rng: random.Random, t: T) -> Value:
    """A WPA2/WPA3 passphrase (8-63 characters), or a 64-hex PSK where the carrier holds one (`t.hint`)."""
    if t.hint == "hex" and rng.random() < 0.5:
        v = pick(rng, HEX, 64)
        return v, "hex64", {"v": v}
    style = rng.choice(("words", "isp_default", "random"))
    v = {"words": lambda: f"{rng.choice(WORDS)}{rng.choice(WORDS).lower()}{digits(rng, 3)}",
         "isp_default": lambda: pick(rng, "abcdefghjkmnpqrstuvwxyz23456789", rng.choice((10, 12, 16))),
         "random": lambda: pick(rng, string.ascii_letters + string.digits + "!#%*+-_?", rng.randint(12, 24))}[style]()
    return v, style, {"v": v}


PSK_CARRIERS = [
    T("wpa_supplicant", "network={\n    ssid=\"Casa-$n\"\n    psk=\"$v\"\n    key_mgmt=WPA-PSK\n}"),
    T("wpa_supplicant_hex", "network={\n\tssid=\"Tienda\"\n\tpsk=$v\n}", "hex"),
    T("nm_keyfile", "[wifi]\nmode=infrastructure\nssid=Oficina\n\n[wifi-security]\nkey-mgmt=wpa-psk\npsk=$v"),
    T("netsh_profile", "Security settings\n-----------------\n    Authentication         : WPA2-Personal\n"
                       "    Cipher                 : CCMP\n    Security key           : Present\n"
                       "    Key Content            : $v"),
    T("wifi_qr", "WIFI:T:WPA;S:Clinica-Invitados;P:$v;;"),
    T("uci_wireless", "config wifi-iface 'default_radio0'\n\toption ssid 'Casa'\n\toption encryption 'psk2'\n"
                      "\toption key '$v'"),
    T("routeros_wifi", "/interface wifi security\nadd authentication-types=wpa2-psk name=casa passphrase=$v"),
    J("unifi_wlanconf", '{"data":[{"name":"Guest","security":"wpapsk","x_passphrase":"$v","enabled":true}]}'),
    T("esphome_wifi", "wifi:\n  ssid: \"Taller\"\n  password: \"$v\""),
    T("tasmota_console", "CMD: Backlog SSID1 Casa; Password1 $v"),
    T("hostapd_conf", "interface=wlan0\nssid=Escola\nwpa=2\nwpa_passphrase=$v", "hex"),
    T("chat_es_mx", "la clave del wifi de invitados es $v"),
    T("chat_it", "password del Wi-Fi: $v"),
    T("chat_hu", "A wifi jelszó: $v"),
    T("sticker_ocr", "SSID: Vodafone-$n\nWPA key: $v\nWPS PIN: see label"),
    T("chat_ar", "كلمة مرور الواي فاي: $v"),
]


def community(rng: random.Random) -> tuple[str, str]:
    """An SNMP v1/v2c community that is not a default."""
    return rng.choice((
        lambda: f"{rng.choice(('noc', 'mon', 'tienda', 'clinic', 'ro', 'zabbix'))}-{pick(rng, LOWER, 6)}"
                f"{rng.choice('_-')}{digits(rng, 2)}",
        lambda: pick(rng, string.ascii_letters + string.digits, rng.randint(10, 16)),
    ))(), "community"


SNMP_CARRIERS = [
    T("ios_snmp", "snmp-server community $v RO 10\nsnmp-server location Back office"),
    T("routeros_snmp", "/snmp community\nadd addresses=192.168.88.0/24 name=$v"),
    T("snmpd_conf", "rocommunity $v 192.168.1.0/24\nsyslocation Rack"),
    T("pfsense_xml", "<snmpd>\n\t<rocommunity>$v</rocommunity>\n\t<pollport>161</pollport>\n</snmpd>"),
    T("snmpwalk", "snmpwalk -v2c -c $v $ip 1.3.6.1.2.1.1"),
    J("unifi_setting", '{"key":"snmp","community":"$v","enabled":true}'),
    T("printer_web", "SNMP v1/v2c\nGet Community Name: $v\nSet Community Name: (disabled)"),
    T("zabbix_macro", "{$$SNMP_COMMUNITY} = $v"),
    T("uci_snmpd", "config com2sec 'ro'\n\toption secname 'ro'\n\toption source 'default'\n\toption community '$v'"),
]


XLAT = "dsfd;kfoA,.iyewrkldJKDHSUBsgvca69834ncxv9873254k;fg87"


def type7(rng: random.Random) -> tuple[str, str]:
    """A Cisco type 7 string: a seed 0-15, then each character XORed with the published XLAT table, in hex."""
    plain_pw, _ = password(rng)
    seed = rng.randint(0, 15)
    return f"{seed:02d}" + "".join(f"{ord(c) ^ ord(XLAT[(seed + i) % 53]):02X}" for i, c in enumerate(plain_pw)), "7"


TYPE7_CARRIERS = [
    T("ios_enable", "enable password 7 $v\n!\nno ip domain lookup"),
    T("ios_username", "username $user privilege 15 password 7 $v"),
    T("ios_line", "line vty 0 4\n password 7 $v\n login"),
    T("ios_ppp", "interface Dialer1\n ppp chap password 7 $v"),
    T("ios_wlan", "dot11 ssid Tienda\n wpa-psk ascii 7 $v"),
    T("chat_cs", "heslo v konfiguraci routeru: password 7 $v"),
    J("config_backup_json", '{"device":"rtr-shop","lines":["username $user password 7 $v"]}'),
]


def pem_body(pem: bytes) -> str:
    """The base64 lines of a PEM block, without its BEGIN and END lines."""
    return "\n".join(line for line in pem.decode().strip().splitlines() if not line.startswith("-----"))


def private_key(rng: random.Random, t: T) -> Value:
    """A private key: EC P-256 PKCS#8 or SEC1 PEM, Ed25519 PKCS#8 or OpenSSH, or a WireGuard key."""
    style = t.hint or rng.choice(("pkcs8_ec", "sec1", "pkcs8_ed25519", "openssh"))
    seed = rng.randbytes(32)
    if style == "wireguard":
        v = base64.b64encode(seed).decode()
        return v, style, {"v": v}
    if style == "openssh":
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = base64.b64encode(openssh_ed25519_blob(seed, public, rng.randbytes(4), b"admin@nas")).decode()
        pem = ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(blob, 70, "\n")
               + "\n-----END OPENSSH PRIVATE KEY-----\n").encode()
    elif style == "pkcs8_ed25519":
        pem = ed25519.Ed25519PrivateKey.from_private_bytes(seed).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    else:
        key = ec.derive_private_key(int.from_bytes(seed, "big") % (2**255) + 1, ec.SECP256R1())
        fmt = serialization.PrivateFormat.TraditionalOpenSSL if style == "sec1" else serialization.PrivateFormat.PKCS8
        pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption())
    return pem_body(pem), style, {"v": pem.decode()}


PRIVATE_KEY_CARRIERS = [
    J("gcp_service_account", '{"type":"service_account","project_id":"casa-backup","private_key_id":"4f1c2a",'
                             '"private_key":"$v","client_email":"ha@casa-backup.iam.gserviceaccount.com"}', "pkcs8_ec"),
    J("coinbase_cdp_key", '{"name":"organizations/9f2c/apiKeys/41aa","privateKey":"$v"}', "sec1"),
    T("ovpn_inline", "client\ndev tun\nremote vpn.tienda.example 1194\n<key>\n$v</key>"),
    T("wireguard_conf", "[Interface]\nAddress = 10.8.0.2/24\nPrivateKey = $v\nDNS = 10.8.0.1", "wireguard"),
    T("cat_id_ed25519", "admin@nas:~$$ cat ~/.ssh/id_ed25519\n$v", "openssh"),
    T("ha_ssl_key", "# /ssl/privkey.pem (copied for the reverse proxy)\n$v", "pkcs8_ec"),
    T("synology_cert_export", "Archive: cert.zip\n  inflating: privkey.pem\n$v", "pkcs8_ed25519"),
    J("wg_easy_json", '{"clients":{"c1":{"name":"phone-ana","privateKey":"$v","address":"10.8.0.3"}}}', "wireguard"),
    T("mikrotik_wg", "/interface wireguard\nadd listen-port=13231 name=wg-home private-key=\"$v\"", "wireguard"),
    T("chat_pl", "klucz prywatny do VPN w sklepie:\n$v"),
]


def jwt(rng: random.Random) -> tuple[str, str]:
    """A JWT a consumer app or device cloud issues, HS256 or with a 256-byte RS256 signature."""
    iat = rng.randint(1_700_000_000, 1_760_000_000)
    payload = {"sub": str(uuid.UUID(int=rng.getrandbits(128))), "iat": iat, "exp": iat + 3600,
               "aud": rng.choice(("mobile-app", "pos", "camera-cloud", "booking"))}
    if rng.random() < 0.5:
        return hmac_jwt(rng, payload), "hs256"
    head = b64url(json.dumps({"alg": "RS256", "kid": pick(rng, HEX, 8), "typ": "JWT"}).encode())
    return f"{head}.{b64url(json.dumps(payload).encode())}.{b64url(rng.randbytes(256))}", "rs256"


JWT_CARRIERS = [
    T("app_logcat", "12-06 10:22:41.118  4412  4470 D OkHttp: x-access-token: $v"),
    J("localstorage_dump", '{"auth":{"token":"$v","user":"recepcion"}}'),
    J("postman_env", '{"values":[{"key":"jwt","value":"$v","enabled":true}]}'),
    T("curl_header", "curl -H 'x-auth-token: $v' https://cloud.camara.example/api/devices"),
    T("ticket_es", "El cliente pegó su token de sesión: $v"),
    T("python_var", "TOKEN = \"$v\"  # from the vendor portal"),
    T("pos_log", "[POS] 2026-12-06 08:00:02 refreshed token=$v"),
    T("chat_fr", "voici le jeton : $v"),
]


def http_auth(rng: random.Random, _t: T) -> Value:
    """An HTTP credential: Basic, Bearer, Digest `response=` or SigV4 `Signature=`; the secret is its credential."""
    style = rng.choice(("basic", "bearer", "digest", "sigv4"))
    if style == "basic":
        secret = base64.b64encode(f"{rng.choice(USERS)}:{password(rng)[0]}".encode()).decode()
        return secret, style, {"v": f"Basic {secret}"}
    if style == "bearer":
        secret = pick(rng, URLSAFE, rng.choice((32, 40, 64)))
        return secret, style, {"v": f"Bearer {secret}"}
    if style == "digest":
        secret = pick(rng, HEX, 32)
        return secret, style, {"v": f'Digest username="admin", realm="IP Camera", nonce="{pick(rng, HEX, 16)}", '
                                    f'uri="/onvif/device_service", qop=auth, nc=00000001, '
                                    f'cnonce="{pick(rng, HEX, 8)}", '
                                    f'response="{secret}"'}
    secret = pick(rng, HEX, 64)
    return secret, style, {"v": f"AWS4-HMAC-SHA256 Credential=AKIA{pick(rng, string.ascii_uppercase, 16)}/20261206/"
                                f"eu-west-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature={secret}"}


HTTP_AUTH_CARRIERS = [
    T("curl_verbose", "> GET /api/v1/status HTTP/1.1\n> Host: $ip\n> Authorization: $v\n> Accept: */*"),
    T("onvif_debug", "DEBUG onvif: POST /onvif/device_service\nAuthorization: $v"),
    T("ha_rest_sensor", "sensor:\n  - platform: rest\n    resource: http://$ip/status\n    headers:\n"
                        "      Authorization: \"$v\""),
    J("har_entry", '{"request":{"method":"GET","url":"http://$ip/cgi-bin/","headers":[{"name":"Authorization",'
                   '"value":"$v"}]}}'),
    T("ps_headers", "Invoke-WebRequest -Uri http://$ip/api -Headers @{Authorization = '$v'}"),
    T("nginx_debug", "2026/12/06 10:01:02 [debug] 31#31: *9 http header: \"Authorization: $v\""),
    T("mitmproxy", "GET http://$ip/ISAPI/System/deviceInfo\n    Authorization: $v"),
    T("printer_ipp_dump", "POST /ipp/print HTTP/1.1\r\nAuthorization: $v\r\nContent-Type: application/ipp"),
]


def cookie(rng: random.Random, _t: T) -> Value:
    """A session cookie of a router, NAS, controller or shop; the secret is its value."""
    style = rng.choice(("luci", "unifi", "php", "synology", "wordpress", "qnap"))
    name, secret = {
        "luci": lambda: ("sysauth_https", pick(rng, HEX, 32)),
        "unifi": lambda: ("unifises", pick(rng, B62, 32)),
        "php": lambda: ("PHPSESSID", pick(rng, LOWER, 26)),
        "synology": lambda: ("id", pick(rng, URLSAFE, 86)),
        "wordpress": lambda: (f"wordpress_logged_in_{pick(rng, HEX, 32)}",
                              f"admin%7C{rng.randint(1765000000, 1766000000)}%7C{pick(rng, B62, 43)}%7C"
                              f"{pick(rng, HEX, 64)}"),
        "qnap": lambda: ("NAS_SID", pick(rng, LOWER, 16)),
    }[style]()
    return secret, style, {"v": f"{name}={secret}", "name": name, "val": secret}


COOKIE_CARRIERS = [
    T("curl_cookie", "curl -b '$v' http://$ip/cgi-bin/luci/admin/status"),
    T("set_cookie", "< HTTP/1.1 200 OK\n< Set-Cookie: $v; path=/; HttpOnly; SameSite=Strict"),
    J("har_cookie", '{"request":{"cookies":[{"name":"$name","value":"$val","httpOnly":true}]}}'),
    T("netscape_cookies", "# Netscape HTTP Cookie File\n$ip\tFALSE\t/\tFALSE\t0\t$name\t$val"),
    T("devtools_copy", "document.cookie\n'$v; lang=es'"),
    T("python_requests", "s.cookies.set('$name', '$val', domain='$ip')"),
    T("ticket_note", "Customer pasted request headers: Cookie: $v; theme=dark"),
    T("browser_export", "Name: $name\nValue: $val\nDomain: $ip\nHttpOnly: ✓"),
]


# ---- more phone plans -----------------------------------------------------------------------------------------

class Plan(NamedTuple):
    """A national plan: its E.164 country code, a drawn national significant number in groups, its national print,
    and carriers with context words in the country's language."""

    cc: str
    groups: Callable[[random.Random], list[str]]
    national: Callable[[list[str]], str]
    carriers: list[T]


def ctx(code: str, *lines: str) -> list[T]:
    """Plain carriers `code_1`, `code_2`, ... and a JSON contact record."""
    return [T(f"{code}_{i}", line) for i, line in enumerate(lines, 1)] + [
        J(f"{code}_json", '{"contact":{"name":"cliente","phone":"$v","note":"' + lines[0].split("$v")[0].strip()
          + '"}}')]


def d(n: int) -> Callable[[random.Random], str]:
    """n digits, drawn when called."""
    return lambda rng: digits(rng, n)


PLANS: dict[str, Plan] = {
    "phone_es": Plan("34", lambda r: [r.choice("679") + d(2)(r), d(2)(r), d(2)(r), d(2)(r)], " ".join, ctx(
        "es", "Teléfono de contacto: $v", "mi móvil es el $v", "Llámame al $v cuando llegue el técnico",
        "Portabilidad: número de móvil $v, el PIN va aparte", "Tel. de la clínica: $v")),
    "phone_mx": Plan("52", lambda r: [r.choice(("55", "33", "81")), d(4)(r), d(4)(r)], " ".join, ctx(
        "mx", "Mi celular es $v", "Teléfono: $v", "Márcame al $v, porfa", "WhatsApp / cel: $v",
        "Número de contacto (celular) para la entrega: $v")),
    "phone_br": Plan("55", lambda r: [r.choice(("11", "21", "31", "41", "51", "61", "71", "81")), "9" + d(4)(r),
                                      d(4)(r)], lambda g: f"({g[0]}) {g[1]}-{g[2]}", ctx(
        "br", "Meu celular: $v", "Telefone para contato: $v", "me liga no $v", "Portabilidade do número (celular) $v",
        "WhatsApp (celular): $v")),
    "phone_pt": Plan("351", lambda r: ["9" + r.choice("1236") + d(1)(r), d(3)(r), d(3)(r)], " ".join, ctx(
        "pt", "Telemóvel: $v", "Contacto telefónico $v", "ligue-me para o telemóvel $v",
        "N.º de telemóvel do hóspede: $v", "Telefone da receção: $v")),
    "phone_it": Plan("39", lambda r: ["3" + r.choice("2345") + d(1)(r), d(3)(r), d(4)(r)], " ".join, ctx(
        "it", "Cellulare: $v", "Telefono: $v", "chiamami al $v", "Recapito telefonico del paziente $v",
        "numero di cellulare per la portabilità: $v")),
    "phone_nl": Plan("31", lambda r: ["6", d(8)(r)], lambda g: f"06-{g[1]}", ctx(
        "nl", "Mobiel: $v", "Telefoonnummer: $v", "bel me op $v", "Telefoon huurder $v",
        "Nummerbehoud, mobiel nummer $v")),
    "phone_pl": Plan("48", lambda r: [r.choice("5678") + d(2)(r), d(3)(r), d(3)(r)], " ".join, ctx(
        "pl", "Telefon: $v", "Tel. kom. $v", "proszę dzwonić pod numer $v", "Numer telefonu do przeniesienia: $v",
        "komórka: $v")),
    "phone_tr": Plan("90", lambda r: ["5" + r.choice("0345") + d(1)(r), d(3)(r), d(2)(r), d(2)(r)],
                     lambda g: "0" + " ".join(g), ctx(
        "tr", "Cep telefonu: $v", "Telefon: $v", "beni $v numaralı telefondan arayın", "Numara taşıma: cep no $v",
        "İletişim tel: $v")),
    "phone_jp": Plan("81", lambda r: [r.choice(("90", "80", "70")), d(4)(r), d(4)(r)], lambda g: "0" + "-".join(g),
                     ctx("jp", "電話番号: $v", "携帯: $v", "TEL $v", "折り返しのお電話は $v までお願いします",
                         "連絡先電話 $v")),
    "phone_kr": Plan("82", lambda r: ["10", d(4)(r), d(4)(r)], lambda g: "0" + "-".join(g), ctx(
        "kr", "전화번호: $v", "휴대폰 $v", "연락처(핸드폰): $v", "전화번호 $v 로 전화 주세요",
        "번호이동 휴대폰 번호 $v")),
    "phone_id": Plan("62", lambda r: ["8" + r.choice("1257") + d(1)(r), d(4)(r), d(r.choice((3, 4)))(r)],
                     lambda g: "0" + "-".join(g), ctx(
        "id", "No. HP: $v", "Telepon: $v", "hubungi saya di nomor telepon $v", "Nomor WhatsApp/telepon $v",
        "No. telp pelanggan $v")),
    "phone_ph": Plan("63", lambda r: ["9" + d(2)(r), d(3)(r), d(4)(r)], lambda g: "0" + " ".join(g), ctx(
        "ph", "Cellphone no.: $v", "Mobile: $v", "pakitawagan po ako sa telepono $v", "Contact number ng tenant: $v",
        "Tel. no. $v")),
}


def plan_value(plan: Plan) -> Callable[[random.Random], tuple[str, str]]:
    """A number of `plan` in its national print or an international one (`+cc`, compact, `00cc`)."""
    def make(rng: random.Random) -> tuple[str, str]:
        g = plan.groups(rng)
        style = rng.choice(("national", "national", "intl", "intl_compact", "intl_00"))
        return {"national": plan.national(g), "intl": f"+{plan.cc} " + " ".join(g),
                "intl_compact": f"+{plan.cc}" + "".join(g), "intl_00": f"00{plan.cc} " + " ".join(g)}[style], style
    return make


# ---- national ids (outside the target) ------------------------------------------------------------------------

def es_dni(rng: random.Random) -> tuple[str, str]:
    """A Spanish DNI (8 digits, mod 23 letter) or NIE (X/Y/Z for 0/1/2)."""
    if rng.random() < 0.7:
        n = digits(rng, 8)
        return n + "TRWAGMYFPDXBNJZSQVHLCKE"[int(n) % 23], "dni"
    lead, n = rng.choice("XYZ"), digits(rng, 7)
    return lead + n + "TRWAGMYFPDXBNJZSQVHLCKE"[int(str("XYZ".index(lead)) + n) % 23], "nie"


def br_cpf(rng: random.Random) -> tuple[str, str]:
    """A Brazilian CPF: nine digits and two mod 11 check digits, dotted or compact."""
    n = [int(c) for c in digits(rng, 9)]
    for size in (9, 10):
        n.append(sum(x * w for x, w in zip(n, range(size + 1, 1, -1), strict=True)) * 10 % 11 % 10)
    s = "".join(map(str, n))
    return (f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}", "dotted") if rng.random() < 0.7 else (s, "compact")


def pl_pesel(rng: random.Random) -> tuple[str, str]:
    """A Polish PESEL: birth date (months +20 after 2000), serial, check digit by weights 1-3-7-9."""
    year, month, day = rng.randint(1950, 2015), rng.randint(1, 12), rng.randint(1, 28)
    body = f"{year % 100:02d}{month + (20 if year >= 2000 else 0):02d}{day:02d}{digits(rng, 4)}"
    check = (10 - sum(int(c) * w for c, w in zip(body, (1, 3, 7, 9, 1, 3, 7, 9, 1, 3), strict=True)) % 10) % 10
    return body + str(check), "pesel"


def tr_tckn(rng: random.Random) -> tuple[str, str]:
    """A Turkish TC Kimlik No: 9 digits (no leading 0) and its two check digits."""
    n = [rng.randint(1, 9)] + [int(c) for c in digits(rng, 8)]
    n.append((sum(n[0:9:2]) * 7 - sum(n[1:8:2])) % 10)
    n.append(sum(n) % 10)
    return "".join(map(str, n)), "tckn"


ID_CARRIERS = {
    "es_dni": [T("hotel_checkin", "Parte de viajeros - DNI/NIE: $v"), T("factura", "NIF del cliente: $v"),
               T("colegio", "Documento del tutor (DNI): $v"), J("crm", '{"cliente":{"nif":"$v"}}'),
               T("portabilidad", "Titular de la línea, DNI $v")],
    "br_cpf": [T("nfe", "CPF do destinatário: $v"), T("cadastro", "Cadastro do cliente - CPF $v"),
               J("loja", '{"cliente":{"cpf":"$v","nome":"Ana"}}'), T("chat", "meu CPF é $v"),
               T("clinica", "Paciente CPF: $v")],
    "pl_pesel": [T("przychodnia", "PESEL pacjenta: $v"), T("szkola", "Uczeń, PESEL $v"),
                 J("crm", '{"klient":{"pesel":"$v"}}'), T("umowa", "Najemca, nr PESEL: $v"),
                 T("operator", "Przeniesienie numeru - PESEL abonenta $v")],
    "tr_tckn": [T("fatura", "TC Kimlik No: $v"), T("kargo", "Alıcı T.C. kimlik numarası $v"),
                J("crm", '{"musteri":{"tckn":"$v"}}'), T("hastane", "Hasta TC No $v"),
                T("hat", "Hat sahibi kimlik no: $v")],
}


# ---- near misses ----------------------------------------------------------------------------------------------

CRYPT64 = "./" + string.digits + string.ascii_uppercase + string.ascii_lowercase


def ean13(rng: random.Random) -> str:
    """An EAN-13 with its GS1 check digit."""
    body = rng.choice(("84", "40", "30", "80", "50", "590", "560", "789")) + digits(rng, 0)
    body += digits(rng, 12 - len(body))
    check = (10 - sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(body)) % 10) % 10
    return body + str(check)


def imei(rng: random.Random) -> str:
    """An IMEI: an 8-digit TAC, a 6-digit serial, the Luhn digit."""
    partial = rng.choice(("35", "86", "01")) + digits(rng, 12)
    return partial + luhn_digit(partial)


def luhn_bad(rng: random.Random) -> str:
    """A 16-digit number of a card IIN whose last digit fails Luhn."""
    partial = rng.choice(("4", "51", "55", "6011")) + digits(rng, 0)
    partial += digits(rng, 15 - len(partial))
    good = int(luhn_digit(partial))
    return group(partial + str((good + rng.randint(1, 9)) % 10), 4, " ")


def mac(rng: random.Random) -> str:
    """A MAC address in the colon, dash or Cisco dotted print."""
    b = pick(rng, HEX, 12)
    return rng.choice((":".join(b[i:i + 2] for i in range(0, 12, 2)).upper(), "-".join(b[i:i + 2] for i in
                       range(0, 12, 2)), f"{b[:4]}.{b[4:8]}.{b[8:]}"))


NEGATIVES: dict[str, Callable[[random.Random], str]] = {
    "mac": lambda r: r.choice((f"/interface ethernet set [ find default-name=ether1 ] mac-address={mac(r)}",
                                    f"Wireless client {mac(r)} associated (signal -61 dBm)",
                                    f"option macaddr '{mac(r)}'")),
    "serial": lambda r: r.choice((f"Serial Number: {r.randint(18, 24)}{r.randint(10, 99)}"
                                       f"PDN{digits(r, 6)}", f"Processor board ID FTX{digits(r, 4)}"
                                       f"{pick(r, string.ascii_uppercase, 1)}{digits(r, 1)}"
                                       f"{pick(r, string.ascii_uppercase, 2)}",
                                       f"S/N: Q{pick(r, string.ascii_uppercase + string.digits, 10)}")),
    "firmware": lambda r: r.choice((f"DSM 7.2.{r.randint(0, 2)}-{r.randint(64000, 69999)} Update {r.randint(1, 6)}",
                                         f"RouterOS 7.{r.randint(10, 16)}.{r.randint(0, 3)} (stable)",
                                         f"ESPHome version 2024.{r.randint(1, 12)}.{r.randint(0, 4)} compiled",
                                         f"Firmware {r.randint(1, 9)}.{r.randint(0, 99)}.{r.randint(0, 999)} "
                                         f"build {digits(r, 6)}")),
    "device_id": lambda r: r.choice((f"device_id: {uuid.UUID(int=r.getrandbits(128), version=4)}",
                                          f"ieee_address: '0x00158d000{pick(r, HEX, 7)}'",
                                          f"\"unique_id\": \"{pick(r, HEX, 32)}\"")),
    "ssid": lambda r: r.choice((f"SSID: Casa-{r.choice(WORDS)}-5G", f"ssid=\"MOVISTAR_{pick(r, HEX, 4).upper()}\"",
                                     f"Connected to network \"FRITZ!Box 7590 {pick(r, string.ascii_uppercase, 2)}\"")),
    "order_number": lambda r: r.choice((f"Order #{r.randint(1001, 99999)} fulfilled",
                                             f"Amazon order {digits(r, 3)}-{digits(r, 7)}-{digits(r, 7)} shipped",
                                             f"Pedido n.º {r.randint(10000, 99999)} pagado")),
    "tracking": lambda r: r.choice((f"Tracking: 1Z{pick(r, string.ascii_uppercase + string.digits, 16)}",
                                         f"Sendungsnummer {digits(r, 12)} (DHL)",
                                         f"Colissimo suivi 6A{digits(r, 11)}")),
    "pnr": lambda r: r.choice((f"Booking reference: {pick(r, string.ascii_uppercase + '23456789', 6)}",
                                    f"Localizador {pick(r, string.ascii_uppercase, 6)} - vuelo IB3{digits(r, 3)}",
                                    f"RP/MAD1A0980/ {pick(r, string.ascii_uppercase + '23456789', 6)}")),
    "sku_ean": lambda r: r.choice((f"EAN {ean13(r)}  SKU TSH-{r.choice(('BLU', 'RED'))}-M  qty 2",
                                        f"GTIN: {ean13(r)}", f"Código de barras {ean13(r)}")),
    "price": lambda r: r.choice((f"Total: {r.randint(1, 9)}.{digits(r, 3)},{digits(r, 2)} €",
                                      f"Subtotal ${r.randint(10, 999)}.{digits(r, 2)} + tax",
                                      f"Итого {r.randint(100, 99999)} ₽")),
    "timestamp": lambda r: r.choice((f"2026-12-0{r.randint(1, 6)}T{r.randint(10, 23)}:{digits(r, 2)[0]}1:22Z",
                                          f"last_seen={r.randint(1_700_000_000, 1_770_000_000)}",
                                          f"uptime 1{digits(r, 1)}d {r.randint(0, 23)}h")),
    "masked": lambda r: r.choice((f"Visa ****{digits(r, 4)}",
                                  f"IBAN DE** **** **** **** **{digits(r, 2)} {digits(r, 2)}",
                                       "Password: ********", f"Tarjeta terminada en {digits(r, 4)}",
                                       f"phone: +34 6** *** {digits(r, 3)}")),
    "cisco_hash": lambda r: r.choice((f"enable secret 9 $9${pick(r, CRYPT64, 14)}${pick(r, CRYPT64, 43)}",
                                           f"username admin secret 8 $8${pick(r, CRYPT64, 14)}${pick(r, CRYPT64, 43)}",
                                           f"enable secret 5 $1${pick(r, CRYPT64, 4)}${pick(r, CRYPT64, 22)}")),
    "bcrypt": lambda r: r.choice((f"admin:$2y$05${pick(r, CRYPT64, 53)}",
                                       f"\"password_hash\": \"$2b$12${pick(r, CRYPT64, 53)}\"",
                                       f"{r.choice(USERS)}:$7$101${pick(r, B64, 16)}${pick(r, B64, 86)}==")),
    "placeholder": lambda r: r.choice(("password: <your-password>", "WIFI_PASSWORD=${WIFI_PASSWORD}",
                                            "api_key: YOUR_API_KEY_HERE", "psk=\"********\"", "rcon.password=",
                                            "DB_PASSWORD=<set-me>", "Contraseña: (la de siempre)")),
    "ha_secret_ref": lambda r: r.choice(("password: !secret mqtt_password",
                                              "api:\n  encryption:\n    key: !secret api_key",
                                              "wifi:\n  ssid: !secret wifi_ssid\n  password: !secret wifi_password",
                                              "api_key: !secret telegram_token")),
    "luhn_invalid": lambda r: r.choice((f"card {luhn_bad(r)} declined", f"Tarjeta {luhn_bad(r)} rechazada",
                                             f"Karte {luhn_bad(r)} abgelehnt")),
    "imei": lambda r: r.choice((f"IMEI: {imei(r)}", f"IMEI {imei(r)} added to eSIM profile",
                                     f"*#06# → {imei(r)}")),
    "remote_id": lambda r: r.choice((f"TeamViewer ID: {r.randint(100, 999)} {digits(r, 3)} {digits(r, 3)}",
                                          f"AnyDesk-ID {r.randint(100, 999)} {digits(r, 3)} {digits(r, 3)}",
                                          f"RustDesk ID {r.randint(100_000_000, 999_999_999)}")),
    "fw_sha256": lambda r: r.choice((f"{pick(r, HEX, 64)}  openwrt-23.05.5-x86-64-generic-squashfs.img.gz",
                                          f"SHA256 checksum: {pick(r, HEX, 64)}",
                                          f"esphome: firmware md5 {pick(r, HEX, 32)} uploaded")),
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """20 near misses of each of the 20 sorts: what this world's text holds that is neither secret nor personal."""
    for sort, make in NEGATIVES.items():
        rng = random.Random(f"sixteenth/negative/{sort}")
        for _ in range(20):
            yield sort, make(rng)


# ---- the corpus -----------------------------------------------------------------------------------------------

KINDS: list[tuple[str, list[T], Callable[[random.Random, T], Value]]] = [
    ("password", PASSWORD_CARRIERS, plain(password)),
    ("aws_secret", AWS_CARRIERS, aws),
    ("webhook", WEBHOOK_CARRIERS, webhook),
    ("stripe_whsec", WHSEC_CARRIERS, plain(whsec)),
    ("connection_string", CONNECTION_CARRIERS, connection),
    ("labelled_key", LABELLED_CARRIERS, labelled),
    ("disguised", DISGUISED_CARRIERS, plain(disguised)),
    ("email", EMAIL_CARRIERS, email),
    ("phone_us_ca", PHONE_US_CARRIERS, plain(phone_us_ca)),
    ("phone_uk", PHONE_UK_CARRIERS, plain(phone_uk)),
    ("phone_fr", PHONE_FR_CARRIERS, plain(phone_fr)),
    ("phone_de", PHONE_DE_CARRIERS, plain(phone_de)),
    ("phone_in", PHONE_IN_CARRIERS, plain(phone_in)),
    ("ssn", SSN_CARRIERS, plain(ssn)),
    ("card", CARD_CARRIERS, plain(card)),
    ("iban", IBAN_CARRIERS, iban),
    ("shopify_token", SHOPIFY_CARRIERS, plain(shopify)),
    ("woocommerce_secret", WOO_CARRIERS, woo),
    ("twilio_auth_token", TWILIO_CARRIERS, twilio),
    ("telegram_bot_token", TELEGRAM_CARRIERS, plain(telegram)),
    ("home_assistant_token", HA_TOKEN_CARRIERS, plain(ha_token)),
    ("esphome_api_key", ESPHOME_CARRIERS, plain(esphome_key)),
    ("tuya_secret", TUYA_CARRIERS, tuya),
    ("exchange_secret", EXCHANGE_CARRIERS, exchange),
    ("remote_support_password", REMOTE_CARRIERS, remote_password),
    ("wifi_psk", PSK_CARRIERS, psk),
    ("snmp_community", SNMP_CARRIERS, plain(community)),
    ("cisco_type7", TYPE7_CARRIERS, plain(type7)),
    ("private_key", PRIVATE_KEY_CARRIERS, private_key),
    ("jwt", JWT_CARRIERS, plain(jwt)),
    ("http_auth", HTTP_AUTH_CARRIERS, http_auth),
    ("session_cookie", COOKIE_CARRIERS, cookie),
    *((kind, plan.carriers, plain(plan_value(plan))) for kind, plan in PLANS.items()),
    ("es_dni", ID_CARRIERS["es_dni"], plain(es_dni)),
    ("br_cpf", ID_CARRIERS["br_cpf"], plain(br_cpf)),
    ("pl_pesel", ID_CARRIERS["pl_pesel"], plain(pl_pesel)),
    ("tr_tckn", ID_CARRIERS["tr_tckn"], plain(tr_tckn)),
]
"""Each kind: its carriers and its value generator."""


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, each kind from its own seeded generator."""
    for kind, carriers, value in KINDS:
        yield from build(kind, random.Random(f"sixteenth/{kind}"), carriers, value)
