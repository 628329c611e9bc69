"""The forty-first blind redaction corpus: enterprise identity and IT administration, what an agent that runs a
company's directory, SSO and endpoint estate reads and writes. Written from the formats' public specifications by
someone who read neither the detection rules nor the other corpora.

Carriers (the `form` head): JSON ones are Okta System Log events, Microsoft Graph directoryAudits, Google Workspace
Admin SDK Reports activities, SCIM 2.0 User resources and PatchOp requests (RFC 7643/7644), OIDC dynamic client
registration responses (RFC 7591), Intune managedDevice and Jamf Pro computer inventory records, ServiceNow incident
and Jira Service Management comment payloads, MCP `tools/call` results, HR-to-directory sync change records,
`gcloud --format=json` and `az ad app` output, Keycloak admin events, chat-completion messages to the user and Slack
`chat.postMessage` bodies. Text ones are LDIF exports (RFC 2849) and ldapsearch output, `Get-ADUser` listings and
PowerShell transcripts, krb5.conf dumps, SAML 2.0 Responses, Apple configuration profiles (mobileconfig plists),
helpdesk e-mails, OpenVPN client configs, FreeRADIUS clients.conf, az and gcloud shell sessions, HR sync logs,
the agent's replies to users, Jamf policy logs and SSO app catalogues in Markdown. About a third is JSON carried
(`is_json`); the agent speaks 28 languages, each with its own labels (`LANGS`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/644-649/65, JCB 3528-3589, Diners 36/300-305, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and
the SWIFT IBAN registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00,
serial not 0000); phones, the national numbering plans (NANP with Canadian area codes, Ofcom, ARCEP, BNetzA,
TRAI/DoT) with context words in the country's languages, never the ranges the plans reserve for drama; AWS keys,
IAM's documented AKIA/ASIA ids and 40-character secrets; webhooks as Slack, Discord, Teams (Office 365 connector
and Power Automate workflow), Google Chat, Mattermost, Rocket.Chat, Zapier, Webex and Okta Workflows print them
(the secret is the token segment or query value only); Stripe `whsec_` signing secrets; ADO.NET, JDBC, ODBC, URI,
Azure Storage, Service Bus and StackExchange.Redis connection strings (the secret is the password or key only);
JWT (RFC 7519/7515) as OIDC ID and access tokens; OAuth client secrets as Entra ID (`Q~` marker), Google
(`GOCSPX-`), Okta, Auth0 and Keycloak issue them; OAuth tokens, Google `ya29.`/`1//`, GitHub `gho_` (CRC32
checksum), opaque refresh tokens; Okta API tokens (`SSWS 00...`); session cookies (RFC 6265) as Okta, Entra,
Google, Java, Express and PHP name them; TOTP seeds (RFC 6238/4648 base32, the Key Uri Format's `otpauth://`);
recovery codes as Google, GitHub, Microsoft and Duo print them; BitLocker recovery passwords (eight blocks of six
digits, each a multiple of 11 under 720896) and FileVault personal recovery keys; PEM PKCS#8/SEC1 and OpenSSH keys,
WireGuard private keys (RFC 7748 clamped, base64); Kerberos keys as `klist -k -K` and `ktutil` print them and NT
hashes in secretsdump lines; provider keys by documented prefixes (GitHub `ghp_`/`github_pat_`, GitLab `glpat-`,
Slack `xoxb-`/`xoxp-`, npm `npm_`, SendGrid `SG.`, Google `AIza`, Vault `hvs.`, Terraform `.atlasv1.`, Tailscale
`tskey-auth-`, Linear `lin_api_`). National ids (outside the target): Spanish DNI/NIE (mod 23 letter), Brazilian
CPF (two mod 11 digits), Polish PESEL (weights 1-3-7-9), Dutch BSN (11-proof), Indian Aadhaar (Verhoeff), Turkish
TC Kimlik (its two digits), Finnish henkilötunnus (mod 31 character), Swedish personnummer (Luhn).

Judgements: a case's `secret` is only what must not survive (a webhook's token, a connection string's password, a
cookie's value, a klist line's key, one recovery code). A disguised secret is written as it stands in the text: a
zero-width character inside it, full-width forms, %-encoded bytes or JSON `\\u` escapes (those only in raw text,
where the escapes are what the reader sees). Near misses are what identity estates hold that is neither secret nor
personal: tenant, app and correlation ids, well-known SIDs, LDAP filters and group DNs, CSS selectors and XPaths of
sign-in pages, form field names, placeholders and masked values, timestamps (FILETIME and GeneralizedTime
included), request ids, versions and builds, device serials and asset tags, certificate thumbprints, cache-busting
asset hashes, private networks and ports, businesses' toll-free service lines, numbers the plans reserve for
fiction, Luhn-invalid references, ticket numbers, parcel tracking numbers, screen geometry, public OAuth client ids
and Kerberos principal metadata.
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

SEED = 41
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "pl_pesel", "nl_bsn", "in_aadhaar", "tr_tckn", "fi_hetu",
                            "se_personnummer"})
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

# ---- shared pieces ----------------------------------------------------------------------------------------------

USERS = ["jdoe", "m.keller", "a.kumar", "sofia.r", "l.meier", "c.dubois", "a.hassan", "y.tanaka", "o.ivanova",
         "p.sharma", "t.nguyen", "k.nowak", "e.rossi", "b.santos", "f.yilmaz", "s.lindqvist"]
APPS = ["Salesforce", "Zoom", "Workday", "Atlassian Cloud", "ServiceNow", "Slack", "GitHub Enterprise", "Box",
        "AWS IAM Identity Center", "Tableau", "Coupa", "DocuSign", "Miro", "Zendesk"]
REALMS = ["CORP.NORDWIND.LAN", "AD.KESTREL-HEALTH.ORG", "EU.BRIGHTWAVE.IO", "HQ.LUMEN-FREIGHT.COM"]
HOSTS = ["dc01.corp.nordwind.lan", "ldap.kestrel-health.org", "dc-fra-02.eu.brightwave.io", "ad1.lumen-freight.com"]
BASES = ["DC=corp,DC=nordwind,DC=lan", "DC=kestrel-health,DC=org", "DC=eu,DC=brightwave,DC=io",
         "DC=lumen-freight,DC=com"]

# The agent's labels per language: (temporary password, e-mail address, API key, backup code, card number, bank
# account, greeting).
LANGS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "en": ("Temporary password", "Email address", "API key", "Backup code", "Card number", "Bank account (IBAN)",
           "Hi, your account is ready."),
    "de": ("Temporäres Passwort", "E-Mail-Adresse", "API-Schlüssel", "Backup-Code", "Kartennummer",
           "Bankverbindung (IBAN)", "Hallo, Ihr Konto ist eingerichtet."),
    "fr": ("Mot de passe temporaire", "Adresse e-mail", "Clé API", "Code de secours", "Numéro de carte",
           "Coordonnées bancaires (IBAN)", "Bonjour, votre compte est prêt."),
    "es": ("Contraseña temporal", "Correo electrónico", "Clave de API", "Código de respaldo", "Número de tarjeta",
           "Cuenta bancaria (IBAN)", "Hola, tu cuenta ya está lista."),
    "it": ("Password temporanea", "Indirizzo email", "Chiave API", "Codice di backup", "Numero della carta",
           "Conto bancario (IBAN)", "Ciao, il tuo account è pronto."),
    "pt": ("Senha temporária", "Endereço de e-mail", "Chave de API", "Código de backup", "Número do cartão",
           "Conta bancária (IBAN)", "Olá, sua conta está pronta."),
    "nl": ("Tijdelijk wachtwoord", "E-mailadres", "API-sleutel", "Back-upcode", "Kaartnummer", "Bankrekening (IBAN)",
           "Hallo, je account is klaar."),
    "sv": ("Tillfälligt lösenord", "E-postadress", "API-nyckel", "Reservkod", "Kortnummer", "Bankkonto (IBAN)",
           "Hej, ditt konto är klart."),
    "da": ("Midlertidig adgangskode", "E-mailadresse", "API-nøgle", "Backupkode", "Kortnummer", "Bankkonto (IBAN)",
           "Hej, din konto er klar."),
    "nb": ("Midlertidig passord", "E-postadresse", "API-nøkkel", "Reservekode", "Kortnummer", "Bankkonto (IBAN)",
           "Hei, kontoen din er klar."),
    "fi": ("Väliaikainen salasana", "Sähköpostiosoite", "API-avain", "Varakoodi", "Kortin numero",
           "Pankkitili (IBAN)", "Hei, tilisi on valmis."),
    "pl": ("Hasło tymczasowe", "Adres e-mail", "Klucz API", "Kod zapasowy", "Numer karty", "Konto bankowe (IBAN)",
           "Dzień dobry, Twoje konto jest gotowe."),
    "cs": ("Dočasné heslo", "E-mailová adresa", "Klíč API", "Záložní kód", "Číslo karty", "Bankovní účet (IBAN)",
           "Dobrý den, váš účet je připraven."),
    "hu": ("Ideiglenes jelszó", "E-mail-cím", "API-kulcs", "Tartalékkód", "Kártyaszám", "Bankszámla (IBAN)",
           "Szia, a fiókod elkészült."),
    "ro": ("Parolă temporară", "Adresă de e-mail", "Cheie API", "Cod de rezervă", "Numărul cardului",
           "Cont bancar (IBAN)", "Bună, contul tău este gata."),
    "tr": ("Geçici şifre", "E-posta adresi", "API anahtarı", "Yedek kod", "Kart numarası", "Banka hesabı (IBAN)",
           "Merhaba, hesabınız hazır."),
    "el": ("Προσωρινός κωδικός", "Διεύθυνση email", "Κλειδί API", "Εφεδρικός κωδικός", "Αριθμός κάρτας",
           "Τραπεζικός λογαριασμός (IBAN)", "Γεια σας, ο λογαριασμός σας είναι έτοιμος."),
    "ru": ("Временный пароль", "Адрес электронной почты", "API-ключ", "Резервный код", "Номер карты",
           "Банковский счёт (IBAN)", "Здравствуйте, ваша учётная запись готова."),
    "uk": ("Тимчасовий пароль", "Адреса електронної пошти", "API-ключ", "Резервний код", "Номер картки",
           "Банківський рахунок (IBAN)", "Вітаємо, ваш обліковий запис готовий."),
    "ar": ("كلمة المرور المؤقتة", "البريد الإلكتروني", "مفتاح API", "رمز احتياطي", "رقم البطاقة",
           "الحساب المصرفي (IBAN)", "مرحبًا، حسابك جاهز."),
    "he": ("סיסמה זמנית", "כתובת אימייל", "מפתח API", "קוד גיבוי", "מספר כרטיס", "חשבון בנק (IBAN)",
           "שלום, החשבון שלך מוכן."),
    "hi": ("अस्थायी पासवर्ड", "ईमेल पता", "API कुंजी", "बैकअप कोड", "कार्ड नंबर", "बैंक खाता (IBAN)",
           "नमस्ते, आपका खाता तैयार है।"),
    "ja": ("仮パスワード", "メールアドレス", "APIキー", "バックアップコード", "カード番号", "銀行口座 (IBAN)",
           "アカウントの準備ができました。"),
    "zh": ("临时密码", "电子邮箱", "API 密钥", "备用验证码", "卡号", "银行账户 (IBAN)", "您好，您的账户已开通。"),
    "ko": ("임시 비밀번호", "이메일 주소", "API 키", "백업 코드", "카드 번호", "은행 계좌 (IBAN)",
           "안녕하세요, 계정이 준비되었습니다."),
    "vi": ("Mật khẩu tạm thời", "Địa chỉ email", "Khóa API", "Mã dự phòng", "Số thẻ", "Tài khoản ngân hàng (IBAN)",
           "Xin chào, tài khoản của bạn đã sẵn sàng."),
    "id": ("Kata sandi sementara", "Alamat email", "Kunci API", "Kode cadangan", "Nomor kartu",
           "Rekening bank (IBAN)", "Halo, akun Anda sudah siap."),
    "th": ("รหัสผ่านชั่วคราว", "ที่อยู่อีเมล", "คีย์ API", "รหัสสำรอง", "หมายเลขบัตร", "บัญชีธนาคาร (IBAN)",
           "สวัสดีค่ะ บัญชีของคุณพร้อมใช้งานแล้ว"),
}
PW, MAIL, KEY, CODE, CARD, BANK, HELLO = range(7)


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _fid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    return (f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z")


def _ip(rng: random.Random) -> str:
    return f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


def agent_says(rng: random.Random, i: int, field: int, value: str) -> tuple[str, str]:
    """The agent's message to a user in the i-th language: (language, greeting and labelled value)."""
    lang = list(LANGS)[i % len(LANGS)]
    labels = LANGS[lang]
    sep = rng.choice([": ", " : ", " — ", "：", "\n"])
    return lang, f"{labels[HELLO]}\n{labels[field]}{sep}{value}"


# ---- carriers ---------------------------------------------------------------------------------------------------

def c_okta_log(rng: random.Random, snip: str, _s: str) -> str:
    event = rng.choice(["user.account.reset_password", "user.lifecycle.activate", "application.user_membership.add",
                        "system.api_token.create", "user.mfa.factor.reset_all"])
    return _dump({"uuid": _fid(rng), "published": _ts(rng), "eventType": event, "severity": "INFO",
                  "actor": {"id": "00u" + pick(rng, ALNUM, 17), "type": "User", "displayName": "IdM Agent"},
                  "client": {"ipAddress": _ip(rng), "userAgent": {"rawUserAgent": "okta-sdk-python/2.9.0"}},
                  "outcome": {"result": "SUCCESS"},
                  "debugContext": {"debugData": {"requestId": pick(rng, ALNUM + "-", 27), "agentNote": snip}}})


def c_entra_audit(rng: random.Random, snip: str, _s: str) -> str:
    activity = rng.choice(["Reset user password", "Update user", "Add service principal credentials",
                           "Update application", "Add member to group"])
    return _dump({"@odata.context": "https://graph.microsoft.com/v1.0/$metadata#auditLogs/directoryAudits",
                  "value": [{"id": f"Directory_{_fid(rng)}", "category": "UserManagement", "result": "success",
                             "correlationId": _fid(rng), "activityDisplayName": activity,
                             "activityDateTime": _ts(rng), "loggedByService": "Core Directory",
                             "additionalDetails": [{"key": "AgentNote", "value": snip}]}]})


def c_gws_report(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"kind": "admin#reports#activity",
                  "id": {"time": _ts(rng), "uniqueQualifier": str(rng.getrandbits(62)), "applicationName": "admin",
                         "customerId": "C0" + pick(rng, UPPER + string.digits, 7)},
                  "events": [{"type": "USER_SETTINGS", "name": rng.choice(["CHANGE_PASSWORD", "CREATE_USER"]),
                              "parameters": [{"name": "ORG_UNIT_NAME", "value": "/Staff"},
                                             {"name": "NOTE", "value": snip}]}]})


def c_scim_user(rng: random.Random, snip: str, _s: str) -> str:
    ext = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
    return _dump({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", ext, "urn:acme:scim:ext:1.0:User"],
                  "id": _fid(rng), "externalId": "W" + digits(rng, 6), "userName": rng.choice(USERS), "active": True,
                  ext: {"employeeNumber": digits(rng, 6), "costCenter": "CC-" + digits(rng, 4)},
                  "urn:acme:scim:ext:1.0:User": {"provisioningNote": snip},
                  "meta": {"resourceType": "User", "created": _ts(rng), "version": f'W/"{pick(rng, HEX, 8)}"'}})


def c_scim_patch(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                  "Operations": [{"op": "replace", "path": "active", "value": True},
                                 {"op": "add", "path": "urn:acme:scim:ext:1.0:User:notes", "value": snip}]})


def c_oidc_client(rng: random.Random, snip: str, _s: str) -> str:
    app = rng.choice(APPS)
    return _dump({"client_id": "0oa" + pick(rng, ALNUM, 17),
                  "client_id_issued_at": rng.randint(1_700_000_000, 1_760_000_000), "client_name": app,
                  "redirect_uris": [f"https://{app.split()[0].lower()}.example/sso/callback"],
                  "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                  "token_endpoint_auth_method": "client_secret_basic", "x_admin_note": snip})


def c_intune_device(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"@odata.type": "#microsoft.graph.managedDevice", "id": _fid(rng),
                  "deviceName": f"LT-{digits(rng, 5)}", "operatingSystem": "Windows",
                  "osVersion": f"10.0.22631.{rng.randint(2000, 4500)}", "complianceState": "compliant",
                  "managementAgent": "mdm", "serialNumber": pick(rng, UPPER + string.digits, 10),
                  "enrolledDateTime": _ts(rng), "notes": snip})


def c_jamf_inventory(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": str(rng.randint(10, 9999)),
                  "general": {"name": f"MBP-{digits(rng, 4)}", "assetTag": f"IT-{digits(rng, 6)}",
                              "lastContactTime": _ts(rng),
                              "extensionAttributes": [{"definitionId": str(rng.randint(1, 80)),
                                                       "name": "Helpdesk note", "values": [snip]}]},
                  "hardware": {"model": rng.choice(["MacBook Pro (14-inch, 2023)", "MacBook Air (M2, 2022)"])}})


def c_servicenow(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"result": {"number": "INC00" + digits(rng, 5), "sys_id": pick(rng, HEX, 32),
                             "short_description": rng.choice(["Password reset", "New joiner access", "MFA reset"]),
                             "description": snip, "state": "2",
                             "assignment_group": {"display_value": "Identity & Access Management"}}})


def c_jira_sm(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"issueKey": f"ITSD-{rng.randint(100, 9999)}", "requestType": {"name": "Access request"},
                  "comment": {"body": snip, "public": rng.random() < 0.5}, "created": {"iso8601": _ts(rng)}})


def c_mcp_result(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"jsonrpc": "2.0", "id": rng.randint(1, 500),
                  "result": {"content": [{"type": "text", "text": snip}], "isError": False}})


def c_hr_sync(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"runId": _fid(rng), "source": "Workday", "target": rng.choice(["Entra ID", "Active Directory"]),
                  "action": rng.choice(["Create", "Update"]), "workerId": "W" + digits(rng, 6),
                  "changes": [{"attribute": "extensionAttribute7", "old": None, "new": snip}]})


def c_gcloud_json(rng: random.Random, snip: str, _s: str) -> str:
    project = rng.choice(["idm-prod-4821", "workspace-admin-tools", "corp-sso-eu"])
    return _dump([{"name": f"projects/{project}/secrets/sync-{pick(rng, LOWER, 5)}", "createTime": _ts(rng),
                   "labels": {"owner": "iam-team"}, "annotations": {"note": snip},
                   "replication": {"automatic": {}}}])


def c_az_app(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"appId": _fid(rng), "displayName": rng.choice(APPS) + " SSO", "signInAudience": "AzureADMyOrg",
                  "publisherDomain": "nordwind.onmicrosoft.com", "notes": snip})


def c_keycloak_event(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"time": rng.randint(1_700_000_000_000, 1_760_000_000_000), "realmId": "corp",
                  "operationType": "UPDATE", "resourceType": "USER", "resourcePath": f"users/{_fid(rng)}",
                  "authDetails": {"realmId": "master", "clientId": _fid(rng), "ipAddress": _ip(rng)},
                  "representation": snip})


def c_chat_message(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": "msg_" + pick(rng, ALNUM, 24), "role": "assistant", "content": snip,
                  "metadata": {"ticket": f"RITM00{digits(rng, 5)}", "channel": "helpdesk"}})


def c_slack_post(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"channel": "D0" + pick(rng, UPPER + string.digits, 9), "text": snip, "unfurl_links": False,
                  "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": snip}}]})


def c_ldif(rng: random.Random, snip: str, _s: str) -> str:
    user = rng.choice(USERS)
    return (f"dn: uid={user},ou=People,{rng.choice(BASES)}\nobjectClass: inetOrgPerson\nuid: {user}\n"
            f"employeeType: {rng.choice(['FTE', 'Contractor'])}\ndescription: {snip}\n")


def c_ldapsearch(rng: random.Random, snip: str, _s: str) -> str:
    return (f"# extended LDIF\n#\n# LDAPv3\n# base <{rng.choice(BASES)}> with scope subtree\n"
            f"# filter: (sAMAccountName={rng.choice(USERS)})\n#\n\n# {rng.choice(USERS)}\n"
            f"info: {snip}\n\n# search result\nsearch: 2\nresult: 0 Success\n")


def c_get_aduser(rng: random.Random, snip: str, _s: str) -> str:
    user = rng.choice(USERS)
    return (f"PS C:\\> Get-ADUser -Identity {user} -Properties Info\n\nDistinguishedName : CN={user},"
            f"OU=Staff,{rng.choice(BASES)}\nEnabled           : True\nInfo              : {snip}\n"
            f"SamAccountName    : {user}\n")


def c_ps_transcript(rng: random.Random, snip: str, _s: str) -> str:
    return ("**********************\nWindows PowerShell transcript start\n"
            f"Start time: 2025{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 6)}\n"
            f"Username: CORP\\svc-idm\nMachine: ADM-{digits(rng, 3)} (Microsoft Windows NT 10.0.20348.0)\n"
            f"**********************\nPS C:\\Admin> {snip}\n")


def c_krb5_conf(rng: random.Random, snip: str, _s: str) -> str:
    realm = rng.choice(REALMS)
    return (f"[libdefaults]\n    default_realm = {realm}\n    dns_lookup_kdc = true\n\n[realms]\n    {realm} = {{\n"
            f"        kdc = {rng.choice(HOSTS)}\n    }}\n# agent note: {snip}\n")


def c_saml_response(rng: random.Random, snip: str, _s: str) -> str:
    return ('<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" '
            f'ID="_{pick(rng, HEX, 32)}" Version="2.0" IssueInstant="{_ts(rng)}">\n'
            '  <saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">\n'
            '    <saml:AttributeStatement>\n      <saml:Attribute Name="note">\n'
            f'        <saml:AttributeValue>{snip}</saml:AttributeValue>\n'
            '      </saml:Attribute>\n    </saml:AttributeStatement>\n  </saml:Assertion>\n</samlp:Response>\n')


def c_mobileconfig(rng: random.Random, snip: str, _s: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n'
            f'  <key>PayloadIdentifier</key>\n  <string>com.nordwind.mdm.{pick(rng, LOWER, 6)}</string>\n'
            f'  <key>PayloadUUID</key>\n  <string>{_fid(rng).upper()}</string>\n'
            f'  <key>PayloadDescription</key>\n  <string>{snip}</string>\n</dict>\n</plist>\n')


def c_helpdesk_mail(rng: random.Random, snip: str, _s: str) -> str:
    return (f"From: IT Service Desk <servicedesk@nordwind.example>\nSubject: [INC00{digits(rng, 5)}] "
            f"{rng.choice(['Password reset', 'Onboarding', 'Laptop enrolment', 'Access to ' + rng.choice(APPS)])}"
            f"\nDate: {_ts(rng)}\n\n{snip}\n\n-- \nIT Service Desk\n")


def c_openvpn(rng: random.Random, snip: str, _s: str) -> str:
    return (f"client\ndev tun\nproto udp\nremote vpn-{pick(rng, LOWER, 3)}.nordwind.example 1194\n"
            f"auth-user-pass\nremote-cert-tls server\ncipher AES-256-GCM\n# {snip}\n")


def c_radius_clients(rng: random.Random, snip: str, _s: str) -> str:
    return (f"client wlc-{pick(rng, LOWER, 4)} {{\n    ipaddr = 10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.0/24\n"
            f"    nas_type = other\n    # {snip}\n}}\n")


def c_az_session(rng: random.Random, snip: str, _s: str) -> str:
    return (f"$ az login --tenant {_fid(rng)} --allow-no-subscriptions\n[ ... ]\n$ {snip}\n"
            f"$ az ad user show --id {rng.choice(USERS)}@nordwind.onmicrosoft.com --query accountEnabled\ntrue\n")


def c_gcloud_session(rng: random.Random, snip: str, _s: str) -> str:
    return (f"$ gcloud config set project idm-prod-{digits(rng, 4)}\nUpdated property [core/project].\n"
            f"$ {snip}\n")


def c_hr_sync_log(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_ts(rng)} INFO  sync.workday run={pick(rng, HEX, 8)} worker=W{digits(rng, 6)} "
            f"target=AD action=update\n{_ts(rng)} DEBUG sync.workday mapped: {snip}\n")


def c_agent_reply(rng: random.Random, snip: str, _s: str) -> str:
    return f"[assistant → {rng.choice(USERS)} · ticket RITM00{digits(rng, 5)}]\n{snip}\n"


def c_jamf_policy(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Executing Policy {rng.choice(['Enrolment', 'Local admin rotation', 'FileVault escrow'])}...\n"
            f"Running script {pick(rng, LOWER, 7)}.sh...\nScript exit code: 0\nScript result: {snip}\n")


def c_sso_catalog(rng: random.Random, snip: str, _s: str) -> str:
    return (f"| App | Protocol | Owner | Notes |\n|---|---|---|---|\n"
            f"| {rng.choice(APPS)} | {rng.choice(['SAML 2.0', 'OIDC', 'SCIM + SAML'])} | "
            f"{rng.choice(USERS)} | {snip} |\n")


Carrier = Callable[[random.Random, str, str], str]
JSON_CARRIERS: dict[str, Carrier] = {
    "okta_syslog": c_okta_log, "entra_audit": c_entra_audit, "gws_report": c_gws_report, "scim_user": c_scim_user,
    "scim_patch": c_scim_patch, "oidc_client": c_oidc_client, "intune_device": c_intune_device,
    "jamf_inventory": c_jamf_inventory, "servicenow": c_servicenow, "jira_sm": c_jira_sm, "mcp_result": c_mcp_result,
    "hr_sync_json": c_hr_sync, "gcloud_json": c_gcloud_json, "az_app": c_az_app, "keycloak_event": c_keycloak_event,
    "chat_message": c_chat_message, "slack_post": c_slack_post}
TEXT_CARRIERS: dict[str, Carrier] = {
    "ldif": c_ldif, "ldapsearch": c_ldapsearch, "get_aduser": c_get_aduser, "ps_transcript": c_ps_transcript,
    "krb5_conf": c_krb5_conf, "saml_response": c_saml_response, "mobileconfig": c_mobileconfig,
    "helpdesk_mail": c_helpdesk_mail, "openvpn": c_openvpn, "radius_clients": c_radius_clients,
    "az_session": c_az_session, "gcloud_session": c_gcloud_session, "hr_sync_log": c_hr_sync_log,
    "agent_reply": c_agent_reply, "jamf_policy": c_jamf_policy, "sso_catalog": c_sso_catalog}


# ---- the issue's kinds ------------------------------------------------------------------------------------------

PW_SYMBOLS = "!#%*+-.:=?@^_~"
PW_WORDS = ["Harbor", "Tulpe", "Soleil", "Lluvia", "Fjord", "Kiwi", "Granit", "Mango", "Nebel", "Orage", "Cedro",
            "Birke", "Zephyr", "Polar", "Kestrel", "Lantern", "Sakura", "Baobab"]


def password_value(rng: random.Random, symbols: str = PW_SYMBOLS) -> str:
    """A password as admins and reset tools make them: random, word-digits-word, passphrase or short temporary."""
    shape = rng.randrange(4)
    if shape == 0:
        return pick(rng, ALNUM, rng.randint(9, 16)) + rng.choice(symbols) + digits(rng, 2)
    if shape == 1:
        return rng.choice(PW_WORDS) + rng.choice(symbols) + digits(rng, 4) + rng.choice(PW_WORDS)
    if shape == 2:
        return "-".join(w.lower() for w in rng.sample(PW_WORDS, 3)) + "-" + digits(rng, 2)
    return pick(rng, UPPER, 1) + pick(rng, LOWER, 3) + digits(rng, 5) + rng.choice(symbols)


def v_password(rng: random.Random, i: int) -> Value:
    pw, user, base = password_value(rng), rng.choice(USERS), rng.choice(BASES)
    plain = password_value(rng, "-._")
    styles = [
        ("agent_reply", agent_says(rng, i, PW, pw)[1]),
        ("set_adaccountpassword", f'Set-ADAccountPassword -Identity {user} -Reset -NewPassword '
                                  f'(ConvertTo-SecureString "{pw}" -AsPlainText -Force)'),
        ("net_user", f"net user {user} {plain} /domain"),
        ("ldif_userpassword", f"dn: uid={user},ou=People,{base}\nchangetype: modify\nreplace: userPassword\n"
                              f"userPassword: {pw}"),
        ("ldapsearch_bind", f"ldapsearch -x -H ldaps://{rng.choice(HOSTS)} -D \"CN=svc-ldap,OU=Service,{base}\" "
                            f"-w '{pw}' -b \"{base}\" \"(mail=*)\""),
        ("radius_secret", f"client vpn-gw {{\n    ipaddr = {_ip(rng)}\n    secret = {plain}\n}}"),
        ("ipsec_psk", f'{_ip(rng)} %any : PSK "{pw}"'),
        ("wifi_payload", f"<key>SSID_STR</key>\n<string>NW-Staff</string>\n<key>Password</key>\n<string>{pw}</string>"),
        ("okta_create_user", f'{{"profile": {{"login": "{user}"}}, '
                             f'"credentials": {{"password": {{"value": "{pw}"}}}}}}'),
        ("scim_password", f'PATCH /scim/v2/Users/{_fid(rng)} {{"op": "replace", "path": "password", "value": "{pw}"}}'),
        ("kadmin", f'kadmin -q "addprinc -pw {plain} {user}@{rng.choice(REALMS)}"'),
        ("laps", f"Get-LapsADPassword -Identity LT-{digits(rng, 5)} -AsPlainText\n\nComputerName        : "
                 f"LT-{digits(rng, 5)}\nAccount             : Administrator\nPassword            : {pw}"),
        ("ticket_note", f"Reset done for {user}; new password {pw} (must change at next sign-in)."),
        ("az_user_update", f"az ad user update --id {user}@nordwind.onmicrosoft.com --password '{pw}' "
                           f"--force-change-password-next-sign-in true"),
        ("gam", f"gam update user {user} password '{pw}' changepassword on"),
        ("dscl", f"sudo dscl . -passwd /Users/ladmin '{pw}'"),
    ]
    style, snip = styles[i % len(styles)]
    secret = plain if style in ("net_user", "radius_secret", "kadmin") else pw
    return style, secret, snip, False


def aws_secret_value(rng: random.Random) -> str:
    return pick(rng, B64, 40)


def aws_key_id(rng: random.Random, prefix: str = "AKIA") -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (temporary), then 16 of base32's alphabet."""
    return prefix + pick(rng, BASE32, 16)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    sec, akia, asia = aws_secret_value(rng), aws_key_id(rng), aws_key_id(rng, "ASIA")
    session = "IQoJb3JpZ2luX2VjE" + pick(rng, B64, 200)
    styles = [
        ("credentials_file", f"[idm-automation]\naws_access_key_id = {akia}\naws_secret_access_key = {sec}"),
        ("saml2aws", f"[saml]\naws_access_key_id     = {asia}\naws_secret_access_key = {sec}\n"
                     f"aws_session_token     = {session}\nx_principal_arn       = arn:aws:sts::{digits(rng, 12)}:"
                     "assumed-role/OktaAdmins/okta"),
        ("create_access_key", _dump({"AccessKey": {"UserName": "svc-scim", "AccessKeyId": akia, "Status": "Active",
                                                   "SecretAccessKey": sec, "CreateDate": _ts(rng)}})),
        ("aws_configure", f"$ aws configure --profile idm\nAWS Access Key ID [None]: {akia}\n"
                          f"AWS Secret Access Key [None]: {sec}\nDefault region name [None]: eu-central-1"),
        ("env_export", f"export AWS_ACCESS_KEY_ID={asia}\nexport AWS_SECRET_ACCESS_KEY={sec}\n"
                       f"export AWS_SESSION_TOKEN={session}"),
        ("set_awscredential", f"Set-AWSCredential -AccessKey {akia} -SecretKey {sec} -StoreAs idm-admin"),
        ("labelled_only", f"aws_secret_access_key: {sec}"),
        ("terraform", f'provider "aws" {{\n  region     = "eu-west-1"\n  access_key = "{akia}"\n'
                      f'  secret_key = "{sec}"\n}}'),
        ("okta_aws_app", f"AWS Account Federation → Provisioning: Access Key {akia}, Secret Key {sec}"),
        ("ticket_pair", f"Key for the SCIM bridge: {akia} / {sec}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, sec, snip, False


def _webhook(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(style, token, URL): the token is the segment or query value that authorises the post."""
    kind = i % 10
    if kind == 0:
        token = pick(rng, ALNUM, 24)
        return ("slack", token, f"https://hooks.slack.com/services/T0{pick(rng, UPPER + string.digits, 8)}/"
                                f"B0{pick(rng, UPPER + string.digits, 9)}/{token}")
    if kind == 1:
        token = pick(rng, URLSAFE, 68)
        return "discord", token, f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{token}"
    if kind == 2:
        token = pick(rng, HEX, 32)
        return ("teams_connector", token, f"https://nordwind.webhook.office.com/webhookb2/{_fid(rng)}@{_fid(rng)}/"
                                          f"IncomingWebhook/{token}/{_fid(rng)}")
    if kind == 3:
        token = pick(rng, URLSAFE, 43)
        return ("power_automate", token, f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/"
                                         f"workflows/{pick(rng, HEX, 32)}/triggers/manual/paths/invoke?"
                                         f"api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={token}")
    if kind == 4:
        token = pick(rng, URLSAFE, 43) + "%3D"
        return ("google_chat", token, f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages"
                                      f"?key=AIza{pick(rng, URLSAFE, 35)}&token={token}")
    if kind == 5:
        token = pick(rng, LOWNUM, 26)
        return "mattermost", token, f"https://chat.nordwind.example/hooks/{token}"
    if kind == 6:
        token = pick(rng, ALNUM, 48)
        return "rocketchat", token, f"https://rc.kestrel-health.org/hooks/{pick(rng, ALNUM, 17)}/{token}"
    if kind == 7:
        token = pick(rng, LOWNUM, 7)
        return "zapier", token, f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{token}/"
    if kind == 8:
        token = pick(rng, URLSAFE, 96)
        return "webex", token, f"https://webexapis.com/v1/webhooks/incoming/{token}"
    token = pick(rng, HEX, 64)
    return ("okta_workflows", token, f"https://nordwind.workflows.okta.com/api/flo/{pick(rng, HEX, 32)}/invoke?"
                                     f"clientToken={token}")


def v_webhook(rng: random.Random, i: int) -> Value:
    style, token, url = _webhook(rng, i)
    leads = [f"ALERT_WEBHOOK_URL={url}", f"Okta System Log anomalies are posted to {url}", f'"webhook_url": "{url}"',
             f"curl -X POST -H 'Content-Type: application/json' "
             f"-d '{{\"text\":\"MFA reset for {rng.choice(USERS)}\"}}' {url}",
             f"Incoming webhook (lifecycle alerts): {url}", f"notify:\n  on_failure: {url}"]
    return style, token, leads[i // 10 % len(leads)], False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    sec = "whsec_" + pick(rng, ALNUM, 32)
    styles = [
        ("env", f"STRIPE_WEBHOOK_SECRET={sec}"),
        ("stripe_listen", f"> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is "
                          f"{sec} (^C to quit)"),
        ("endpoint_json", _dump({"id": "we_" + pick(rng, ALNUM, 24), "object": "webhook_endpoint",
                                 "url": "https://billing-sso.nordwind.example/stripe", "secret": sec})),
        ("catalogue", f"Billing portal (Stripe) — signing secret {sec}, rotate with the SSO cert"),
        ("agent_reply", agent_says(rng, i, KEY, sec)[1]),
        ("k8s_secret", f"stringData:\n  STRIPE_SIGNING_SECRET: {sec}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, sec, snip, False


def v_connection_string(rng: random.Random, i: int) -> Value:
    pw = password_value(rng, "-._~!*")
    uri_pw = quote(password_value(rng), safe="")
    host, user = rng.choice(HOSTS), rng.choice(["svc_idsync", "keycloak", "midpoint", "scim_bridge"])
    account_key = pick(rng, B64, 86) + "=="
    sas_key = pick(rng, B64, 43) + "="
    styles = [
        ("adonet", pw, f"Server=sql01.nordwind.lan;Database=IdentitySync;User Id={user};Password={pw};Encrypt=True;"),
        ("jdbc_postgres", uri_pw, f"jdbc:postgresql://db.{host}:5432/keycloak?user={user}&password={uri_pw}"),
        ("uri_postgres", uri_pw, f"KC_DB_URL=postgresql://{user}:{uri_pw}@pg-iam.internal:5432/keycloak"),
        ("uri_mysql", uri_pw, f"mysql://{user}:{uri_pw}@mysql-hr.internal:3306/hr_sync"),
        ("mongodb_srv", uri_pw, f"mongodb+srv://{user}:{uri_pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/audit"),
        ("azure_storage", account_key, f"DefaultEndpointsProtocol=https;AccountName=idmlogs{digits(rng, 3)};"
                                       f"AccountKey={account_key};EndpointSuffix=core.windows.net"),
        ("service_bus", sas_key, f"Endpoint=sb://nw-hr-events.servicebus.windows.net/;SharedAccessKeyName="
                                 f"RootManageSharedAccessKey;SharedAccessKey={sas_key}"),
        ("redis_stackexchange", pw, f"idm-cache.redis.cache.windows.net:6380,password={pw},ssl=True,"
                                    "abortConnect=False"),
        ("odbc", pw, f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:sql-hr.nordwind.lan,1433;Uid={user};"
                     f"Pwd={pw};"),
        ("amqps", uri_pw, f"amqps://{user}:{uri_pw}@mq.nordwind.lan:5671/hr"),
        ("ldap_url_bind", pw, f"bindDN=CN={user},OU=Service,{rng.choice(BASES)};bindPassword={pw};url=ldaps://{host}"),
    ]
    style, secret, snip = styles[i % len(styles)]
    return style, secret, snip, False


KEY_LABELS = ["API key: {v}", "X-API-Key: {v}", "api_token = \"{v}\"", "Jamf Pro API client secret: {v}",
              "Freshservice API key → {v}", "SCIM secret token: {v}", "Zendesk API token {v}", "BambooHR API key: {v}",
              "Snipe-IT API key={v}", "Duo secret key (skey): {v}", "{lang}"]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    shape = i % 4
    key = [pick(rng, HEX, 40), pick(rng, ALNUM, 32), pick(rng, B64, 43) + "=", pick(rng, HEX, 32)][shape]
    template = KEY_LABELS[i % len(KEY_LABELS)]
    snip = agent_says(rng, i, KEY, key)[1] if template == "{lang}" else template.format(v=key)
    return f"label{i % len(KEY_LABELS)}", key, snip, False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def _disguise_base(rng: random.Random, i: int) -> tuple[str, str]:
    """(label, a secret worth disguising)."""
    bases = [("client_secret", "GOCSPX-" + pick(rng, URLSAFE, 28)), ("token", crc_token(rng, "ghp_")),
             ("SSWS", "00" + pick(rng, URLSAFE, 40)), ("aws_secret_access_key", aws_secret_value(rng)),
             ("password", password_value(rng)), ("slack_token", f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-"
                                                                f"{pick(rng, ALNUM, 24)}")]
    return bases[i % len(bases)]


def v_disguised(rng: random.Random, i: int) -> Value:
    label, raw = _disguise_base(rng, i)
    how = i // 6 % 4
    if how == 0:
        at = rng.randint(4, len(raw) - 2)
        value = raw[:at] + rng.choice(ZW) + raw[at:]
        return "zero_width", value, f"{label}: {value}", False
    if how == 1:
        value = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in raw)
        return "full_width", value, f"{label}：{value}", False
    if how == 2:
        value = "".join(f"%{b:02X}" for b in raw.encode())
        return "percent", value, f"POST /oauth2/v1/token body: grant_type=client_credentials&{label}={value}", False
    value = "".join(f"\\u{ord(c):04x}" for c in raw)
    return "json_u", value, f'raw request body: {{"{label}": "{value}"}}', True


EMAIL_NAMES = ["maria.gonzalez", "j.smith", "anil.kumar", "sofia.rossi", "lukas.meier", "chloe.martin", "ahmed.ali",
               "yuki.tanaka", "olga.petrova", "priya.nair", "tomasz.nowak", "emma.jansen", "fatma.yilmaz",
               "oskar.lindqvist", "nguyen.van.an", "kwame.mensah"]
EMAIL_DOMAINS = ["nordwind-logistik.de", "kestrel-health.org", "brightwave.io", "lumen-freight.com", "gmail.com",
                 "outlook.com", "web.de", "orange.fr", "yahoo.co.in", "btinternet.com", "t-online.de",
                 "rediffmail.com", "hotmail.co.uk", "mail.ru", "naver.com", "nordwind.onmicrosoft.com"]
EMAIL_UNICODE = ["józef.wiśniewski@poczta-nordwind.pl", "müller.jürgen@bücherstube-köln.de", "françois@côté-sud.fr",
                 "δημήτρης@εταιρεία.gr", "андрей@почта-компании.рф", "田中@会社.jp", "राहुल@कंपनी.भारत",
                 "김민수@회사.kr", "josé.núñez@compañía.es", "ayşe@şirket.com.tr"]


def email_value(rng: random.Random, i: int) -> str:
    if i % 10 == 9:
        return EMAIL_UNICODE[i // 10 % len(EMAIL_UNICODE)]
    local = rng.choice(EMAIL_NAMES)
    if rng.random() < 0.2:
        local += "+" + rng.choice(["okta", "sso", "hr"])
    return f"{local}@{rng.choice(EMAIL_DOMAINS)}"


def v_email(rng: random.Random, i: int) -> Value:
    mail = email_value(rng, i)
    styles = [
        ("agent_reply", agent_says(rng, i, MAIL, mail)[1]),
        ("ldif_mail", f"mail: {mail}"),
        ("scim_emails", f'"emails": [{{"value": "{mail}", "type": "work", "primary": true}}]'),
        ("upn", f"userPrincipalName : {mail}"),
        ("display_name", f"Owner: {rng.choice(['Maria González', 'Lukas Meier', 'Priya Nair'])} <{mail}>"),
        ("mailto", f"Contact the app owner: mailto:{mail}?subject=Access%20request"),
        ("okta_login", f"login={mail} status=PROVISIONED"),
        ("gam", f"gam create user {mail} firstname Neu lastname Mitarbeiter password random"),
        ("csv_row", f"employee_id,display_name,email\n{digits(rng, 6)},Joiner,{mail}"),
        ("proxy_addresses", f"proxyAddresses: smtp:{mail}"),
        ("graph_filter", f"GET /v1.0/users?$filter=otherMails/any(m:m eq '{mail}')"),
        ("notify", f"Sent the onboarding pack to {mail}."),
    ]
    style, snip = styles[i % len(styles)]
    return style, mail, snip, False


PHONE_TEMPLATES = ["{c}: {n}", "{c} {n}", "telephoneNumber: {n}", '"phoneNumbers": [{{"value": "{n}", "type": '
                   '"mobile"}}]', "{c} (after 5pm) {n}", "MFA fallback — {c} {n}", "mobile: {n}  # {c}",
                   "Callback requested, {c}: {n}"]


def phone_case(rng: random.Random, i: int, forms: list[tuple[str, Callable[[random.Random], str]]],
               words: list[str]) -> Value:
    style, make = forms[i % len(forms)]
    number = make(rng)
    template = PHONE_TEMPLATES[i // len(forms) % len(PHONE_TEMPLATES)]
    return style, number, template.format(c=rng.choice(words), n=number), False


TOLL_FREE_NPA = {"800", "833", "844", "855", "866", "877", "888"}


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """NPA-NXX-XXXX (NANP): neither part N11, no toll-free or 555 exchange; some Canadian area codes."""
    while True:
        npa = rng.choice(["416", "514", "604", "613", "403", "902"]) if rng.random() < 0.3 else \
            f"{rng.randint(2, 9)}{rng.randint(0, 8)}{rng.randint(0, 9)}"
        nxx = f"{rng.randint(2, 9)}{digits(rng, 2)}"
        if npa[1:] != "11" and nxx[1:] != "11" and nxx != "555" and npa not in TOLL_FREE_NPA:
            return npa, nxx, digits(rng, 4)


US_FORMS = [("paren", lambda r: "({}) {}-{}".format(*_nanp(r))), ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
            ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))), ("plus1", lambda r: "+1 {} {} {}".format(*_nanp(r))),
            ("plus1_dash", lambda r: "+1-{}-{}-{}".format(*_nanp(r))),
            ("one_paren", lambda r: "1 ({}) {}-{}".format(*_nanp(r)))]
US_WORDS = ["mobile", "cell", "Work phone", "phone", "téléphone cellulaire", "office", "Tel."]


def _uk_mobile(r: random.Random) -> tuple[str, str]:
    """A mobile (071-075, 077-079) outside Ofcom's drama range 07700 900xxx."""
    while True:
        head = f"7{r.choice('1234579')}{digits(r, 2)}"
        rest = digits(r, 6)
        if not (head == "7700" and rest.startswith("900")):
            return head, rest


def _uk_london(r: random.Random) -> str:
    """A London 020 block (3, 7 or 8 first) other than the drama block 7946."""
    while True:
        block = f"{r.choice('378')}{digits(r, 3)}"
        if block != "7946":
            return block


UK_FORMS = [("mobile", lambda r: "0{} {}".format(*_uk_mobile(r))),
            ("mobile_intl", lambda r: "+44 {} {}".format(*_uk_mobile(r))),
            ("london", lambda r: f"020 {_uk_london(r)} {digits(r, 4)}"),
            ("london_intl", lambda r: f"+44 (0)20 {_uk_london(r)} {digits(r, 4)}"),
            ("manchester", lambda r: f"0161 {r.randint(2, 9)}{digits(r, 2)} {digits(r, 4)}"),
            ("edinburgh", lambda r: f"0131 {r.randint(2, 6)}{digits(r, 2)} {digits(r, 4)}"),
            ("cardiff", lambda r: f"029 20{digits(r, 2)} {digits(r, 4)}"),
            ("mobile_compact", lambda r: "0{}{}".format(*_uk_mobile(r)))]
UK_WORDS = ["mobile", "mob", "tel", "phone", "direct line", "ring me on", "work number"]


def _fr_pairs(r: random.Random, first: str) -> list[str]:
    return [first] + [digits(r, 2) for _ in range(4)]


FR_FORMS = [("mobile_space", lambda r: "0" + " ".join(_fr_pairs(r, r.choice("67")))),
            ("mobile_dot", lambda r: "0" + ".".join(_fr_pairs(r, r.choice("67")))),
            ("plus33", lambda r: "+33 " + " ".join(_fr_pairs(r, r.choice("67")))),
            ("plus33_zero", lambda r: "+33 (0)" + " ".join(_fr_pairs(r, r.choice("12345")))),
            ("geo_space", lambda r: "0" + " ".join(_fr_pairs(r, r.choice("12345")))),
            ("compact", lambda r: "0" + "".join(_fr_pairs(r, r.choice("679"))))]
FR_WORDS = ["portable", "tél.", "téléphone", "numéro de portable", "joignable au", "ligne directe", "mobile"]
DE_MOBILE = ["151", "152", "157", "160", "162", "170", "171", "172", "176"]
DE_FORMS = [("mobile", lambda r: f"0{r.choice(DE_MOBILE)} {digits(r, 8)}"),
            ("mobile_dash", lambda r: f"017{r.choice('0125')}-{digits(r, 7)}"),
            ("mobile_intl", lambda r: f"+49 (0)15{r.choice('1279')} {digits(r, 8)}"),
            ("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
            ("munich_paren", lambda r: f"(089) {r.randint(2, 9)}{digits(r, 6)}"),
            ("hamburg_slash", lambda r: f"040/{r.randint(2, 9)}{digits(r, 6)}"),
            ("koeln_intl", lambda r: f"+49 221 {r.randint(2, 9)}{digits(r, 6)}"),
            ("frankfurt_durchwahl", lambda r: f"069 {r.randint(2, 9)}{digits(r, 4)}-{digits(r, 3)}")]
DE_WORDS = ["Telefon", "Handy", "Mobil", "Tel.", "Rufnummer", "Durchwahl", "erreichbar unter", "Mobilnummer"]
IN_FORMS = [("intl_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
            ("intl_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}"),
            ("zero", lambda r: f"0{r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
            ("bare", lambda r: f"{r.choice('6789')}{digits(r, 9)}"),
            ("delhi", lambda r: f"011-{r.randint(2, 6)}{digits(r, 3)} {digits(r, 4)}"),
            ("mumbai", lambda r: f"022 {r.randint(2, 6)}{digits(r, 3)} {digits(r, 4)}"),
            ("bengaluru", lambda r: f"080-{r.randint(2, 6)}{digits(r, 3)}-{digits(r, 4)}"),
            ("plus91_paren", lambda r: f"+91 (80) {r.randint(2, 6)}{digits(r, 3)} {digits(r, 4)}")]
IN_WORDS = ["mobile", "Mob:", "contact no.", "phone", "मोबाइल", "फ़ोन नंबर", "WhatsApp", "alternate number"]


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, US_FORMS, US_WORDS)


def v_phone_uk(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, UK_FORMS, UK_WORDS)


def v_phone_fr(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, FR_FORMS, FR_WORDS)


def v_phone_de(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, DE_FORMS, DE_WORDS)


def v_phone_in(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, IN_FORMS, IN_WORDS)


def ssn_value(rng: random.Random) -> tuple[str, str, str]:
    """Area 001-899 but 666, group 01-99, serial 0001-9999 (the SSA's rules)."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int) -> Value:
    area, grp, serial = ssn_value(rng)
    written = [f"{area}-{grp}-{serial}", f"{area} {grp} {serial}", f"{area}{grp}{serial}"][i // 6 % 3]
    styles = [("workday_field", f"National ID (USA-SSN): {written}"), ("hr_json", f'"ssn": "{written}"'),
              ("ticket", f"I-9 done, SSN {written} verified in E-Verify."),
              ("csv", f"ssn,hire_date\n{written},2025-04-01"),
              ("ldif_attr", f"employeeSSN: {written}"), ("agent", f"Your SSN on file is {written} — please confirm.")]
    style, snip = styles[i % len(styles)]
    return style, written, snip, False


def card_number(rng: random.Random, brand: str) -> str:
    """A number in the brand's IIN range and length, completed by its Luhn digit."""
    prefix, length = {
        "visa": ("4", 16), "mc": (str(rng.randint(51, 55)), 16), "mc2": (str(rng.randint(2221, 2720)), 16),
        "amex": (rng.choice(["34", "37"]), 15), "discover": ("6011", 16),
        "discover64": (str(rng.randint(644, 649)), 16),
        "discover65": ("65", 16), "jcb": (str(rng.randint(3528, 3589)), 16), "diners": ("36", 14),
        "diners300": (str(rng.randint(300, 305)), 14), "unionpay": ("62", rng.choice([16, 19])),
    }[brand]
    body = prefix + digits(rng, length - len(prefix) - 1)
    return body + luhn_digit(body)


CARD_BRANDS = ["visa", "mc", "mc2", "amex", "discover", "discover64", "discover65", "jcb", "diners", "diners300",
               "unionpay"]


def v_card(rng: random.Random, i: int) -> Value:
    brand = CARD_BRANDS[i % len(CARD_BRANDS)]
    number = card_number(rng, brand)
    written = [group_card(number, " "), group_card(number, "-"), number][i // len(CARD_BRANDS) % 3]
    styles = [lambda v: agent_says(rng, i, CARD, v)[1], lambda v: f"Corporate card for the {rng.choice(APPS)} "
              f"renewal: {v} exp {rng.randint(1, 12):02d}/{rng.randint(26, 31)}",
              lambda v: f'"billing": {{"card_number": "{v}", "holder": "IT Procurement"}}',
              lambda v: f"Expense card replaced, new number {v}", lambda v: f"Kreditkarte: {v}"]
    return brand, written, styles[i % len(styles)](written), False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c", "NL": "4a10n",
             "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "SE": "3n16n1n", "IE": "4a6n8n",
             "PT": "4n4n11n2n", "DK": "4n9n1n", "FI": "3n11n", "NO": "4n6n1n", "LU": "3n13c", "CZ": "4n6n10n"}


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    body = bban(rng, IBAN_BBAN[country])
    compact = country + iban_check(country, body) + body
    written = group(compact, 4, " ") if i % 3 else compact
    styles = [lambda v: agent_says(rng, i, BANK, v)[1], lambda v: f'"bankAccount": {{"iban": "{v}"}}',
              lambda v: f"Payroll bank details changed: IBAN {v}", lambda v: f"IBAN: {v}",
              lambda v: f"Neue Bankverbindung laut HR-Ticket — IBAN {v}"]
    return country, written, styles[i % len(styles)](written), False


# ---- the domain's further kinds ---------------------------------------------------------------------------------

def jwt_value(rng: random.Random) -> str:
    """A signed JWT (RFC 7519): base64url header, claims, and an RS256-sized signature."""
    tenant = _fid(rng)
    iss = rng.choice([f"https://login.microsoftonline.com/{tenant}/v2.0", "https://nordwind.okta.com/oauth2/default",
                      "https://accounts.google.com", "https://sso.kestrel-health.org/realms/corp"])
    iat = rng.randint(1_735_000_000, 1_760_000_000)
    header = {"alg": "RS256", "kid": pick(rng, URLSAFE, 43), "typ": "JWT"}
    claims = {"iss": iss, "sub": pick(rng, URLSAFE, 22), "aud": _fid(rng), "iat": iat, "exp": iat + 3600,
              "nonce": pick(rng, HEX, 16)}
    parts = [b64url(json.dumps(p, separators=(",", ":")).encode()) for p in (header, claims)]
    return ".".join(parts + [b64url(rng.randbytes(256))])


def v_jwt(rng: random.Random, i: int) -> Value:
    token = jwt_value(rng)
    styles = [("bearer", f"Authorization: Bearer {token}"),
              ("fragment", f"https://app.nordwind.example/callback#id_token={token}&state={pick(rng, HEX, 16)}"),
              ("token_response", f'{{"token_type": "Bearer", "expires_in": 3600, "id_token": "{token}"}}'),
              ("az_access_token", f'{{"accessToken": "{token}", "expiresOn": "2025-06-01 10:00:00.000000", '
                                  f'"tokenType": "Bearer"}}'),
              ("gcloud_identity", f"$ gcloud auth print-identity-token\n{token}"),
              ("cookie", f"Cookie: KEYCLOAK_IDENTITY={token}")]
    style, snip = styles[i % len(styles)]
    return style, token, snip, False


def client_secret_value(rng: random.Random, i: int) -> tuple[str, str]:
    kind = i % 5
    if kind == 0:
        return "entra", pick(rng, URLSAFE, 3) + "8Q~" + pick(rng, URLSAFE + "~.", 34)
    if kind == 1:
        return "google", "GOCSPX-" + pick(rng, URLSAFE, 28)
    if kind == 2:
        return "okta", pick(rng, URLSAFE, 64)
    if kind == 3:
        return "auth0", pick(rng, URLSAFE, 64)
    return "keycloak", pick(rng, ALNUM, 32)


def v_oauth_client_secret(rng: random.Random, i: int) -> Value:
    issuer, sec = client_secret_value(rng, i)
    cid = _fid(rng)
    first = (f'{{"appId": "{cid}", "password": "{sec}", "tenant": "{_fid(rng)}"}}' if issuer == "entra"
             else f"Client secret (copy it now, it is shown once): {sec}")
    styles = [first,
              f"client_secret={sec}", f'"client_secret": "{sec}", "client_secret_expires_at": 0',
              f"OIDC_CLIENT_ID={cid}\nOIDC_CLIENT_SECRET={sec}",
              f"grant_type=client_credentials&client_id={cid}&client_secret={sec}&scope=okta.users.read",
              f"SSO app {rng.choice(APPS)}: client secret {sec}"]
    return f"{issuer}{i // 5 % len(styles)}", sec, styles[i // 5 % len(styles)], False


def oauth_token_value(rng: random.Random, i: int) -> tuple[str, str]:
    kind = i % 4
    if kind == 0:
        return "google_access", "ya29." + pick(rng, URLSAFE, rng.randint(150, 210))
    if kind == 1:
        return "google_refresh", "1//0" + pick(rng, URLSAFE, 2) + pick(rng, URLSAFE, 98)
    if kind == 2:
        return "github_oauth", crc_token(rng, "gho_")
    return "opaque_refresh", pick(rng, URLSAFE, 43)


def v_oauth_token(rng: random.Random, i: int) -> Value:
    style, token = oauth_token_value(rng, i)
    if "refresh" in style:
        leads = [f'{{"access_token": "<elided>", "expires_in": 3599, "refresh_token": "{token}"}}',
                 f"grant_type=refresh_token&refresh_token={token}&client_id=0oa{pick(rng, ALNUM, 17)}",
                 f"refresh_token: {token}", f"GOOGLE_REFRESH_TOKEN={token}"]
    elif style == "github_oauth":
        leads = [f"curl -H 'Authorization: token {token}' https://api.github.com/orgs/nordwind/members",
                 f"Authorization: Bearer {token}", f"access_token={token}&scope=read%3Aorg&token_type=bearer",
                 f"GITHUB_TOKEN={token}"]
    else:
        leads = [f"Authorization: Bearer {token}", f"$ gcloud auth print-access-token\n{token}",
                 f'{{"access_token": "{token}", "expires_in": 3599, "token_type": "Bearer"}}',
                 f"https://admin.googleapis.com/admin/directory/v1/users?access_token={token}"]
    return style, token, leads[i // 4 % len(leads)], False


def v_okta_api_token(rng: random.Random, i: int) -> Value:
    token = "00" + pick(rng, URLSAFE, 40)
    styles = [("ssws_header", f"Authorization: SSWS {token}"),
              ("okta_yaml", f"okta:\n  client:\n    orgUrl: https://nordwind.okta.com\n    token: {token}"),
              ("terraform", f'provider "okta" {{\n  org_name  = "nordwind"\n  api_token = "{token}"\n}}'),
              ("env", f"OKTA_API_TOKEN={token}"),
              ("console", f"Token created: svc-scim-bridge — Token value {token} (shown once)"),
              ("curl", f'curl -H "Authorization: SSWS {token}" https://nordwind.okta.com/api/v1/users?limit=200')]
    style, snip = styles[i % len(styles)]
    return style, token, snip, False


def cookie_value(rng: random.Random, i: int) -> tuple[str, str]:
    names = [("sid", lambda: "102" + pick(rng, URLSAFE, 22)),
             ("ESTSAUTHPERSISTENT", lambda: "0.A" + pick(rng, URLSAFE, 220)),
             ("__Secure-3PSID", lambda: "g.a000" + pick(rng, URLSAFE, 70)),
             ("JSESSIONID", lambda: pick(rng, "0123456789ABCDEF", 32)),
             ("connect.sid", lambda: "s%3A" + pick(rng, URLSAFE, 32) + "." + pick(rng, B64, 43)),
             ("PHPSESSID", lambda: pick(rng, LOWNUM, 26))]
    name, make = names[i % len(names)]
    return name, make()


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, value = cookie_value(rng, i)
    host = rng.choice(["nordwind.okta.com", "login.microsoftonline.com", "accounts.google.com", "jamf.nordwind.lan"])
    leads = [f"Cookie: {name}={value}; theme=dark", f"Set-Cookie: {name}={value}; Path=/; Secure; HttpOnly; "
             "SameSite=Lax", f"{host}\tFALSE\t/\tTRUE\t{rng.randint(1_760_000_000, 1_800_000_000)}\t{name}\t{value}",
             f'{{"name": "{name}", "value": "{value}", "domain": "{host}"}}', f"curl -b '{name}={value}' https://{host}/"]
    return name, value, leads[i // 6 % len(leads)], False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = base64.b32encode(rng.randbytes(rng.choice([10, 20]))).decode().rstrip("=")
    user = rng.choice(USERS)
    styles = [("otpauth", seed, f"otpauth://totp/Nordwind:{user}?secret={seed}&issuer=Nordwind&algorithm=SHA1&digits=6"
                                "&period=30"),
              ("grouped_lower", group(seed.lower(), 4, " "), f"Setup key: {group(seed.lower(), 4, ' ')}"),
              ("okta_factor", seed, f'"_embedded": {{"activation": {{"sharedSecret": "{seed}", "timeStep": 30}}}}'),
              ("oathtool", seed, f"oathtool --totp -b {seed}"),
              ("entra_oath_csv", seed, f"upn,serial number,secret key,time interval,manufacturer,model\n"
                                       f"{user}@nordwind.onmicrosoft.com,{digits(rng, 10)},{seed},30,Contoso,HW1"),
              ("agent_reply", seed, agent_says(rng, i, CODE, seed)[1])]
    style, secret, snip = styles[i % len(styles)]
    return style, secret, snip, False


def recovery_code_value(rng: random.Random, i: int) -> tuple[str, str]:
    kind = i % 4
    if kind == 0:
        return "google", f"{digits(rng, 4)} {digits(rng, 4)}"
    if kind == 1:
        return "github", f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}"
    if kind == 2:
        return "microsoft", "-".join(pick(rng, UPPER + string.digits, 5) for _ in range(5))
    return "duo_bypass", f"{rng.randint(1, 9)}{digits(rng, 8)}"


def v_recovery_code(rng: random.Random, i: int) -> Value:
    style, code = recovery_code_value(rng, i)
    leads = [agent_says(rng, i, CODE, code)[1], f"Backup verification code: {code}", f"recovery code {code} used",
             f"Duo bypass code for {rng.choice(USERS)}: {code} (valid for 1 use)", f"codes[3] = \"{code}\""]
    return style, code, leads[i // 4 % len(leads)], False


def disk_key_value(rng: random.Random, i: int) -> tuple[str, str]:
    """BitLocker: eight blocks of six digits, each a multiple of 11 below 720896; FileVault: six groups of four."""
    if i % 3 == 2:
        return "filevault", "-".join(pick(rng, UPPER + string.digits, 4) for _ in range(6))
    return "bitlocker", "-".join(f"{rng.randrange(65536) * 11:06d}" for _ in range(8))


def v_disk_recovery_key(rng: random.Random, i: int) -> Value:
    style, key = disk_key_value(rng, i)
    key_id = _fid(rng).upper()
    if style == "filevault":
        leads = [f"Personal Recovery Key: {key}", f'"personalRecoveryKey": "{key}"',
                 f"FileVault escrowed for MBP-{digits(rng, 4)}, PRK {key}", f"Clé de secours FileVault : {key}"]
    else:
        leads = [f'{{"id": "{key_id.lower()}", "volumeType": "1", "deviceId": "{_fid(rng)}", "key": "{key}"}}',
                 f"msFVE-RecoveryPassword: {key}",
                 f"Numerical Password:\n  ID: {{{key_id}}}\n  Password:\n    {key}",
                 f"Recovery key for LT-{digits(rng, 5)}: {key}", f"BitLocker-Wiederherstellungsschlüssel: {key}",
                 f"Clé de récupération BitLocker : {key}"]
    return style, key, leads[i // 3 % len(leads)], False


def _ec_pem(rng: random.Random, fmt: serialization.PrivateFormat) -> str:
    key = ec.derive_private_key(rng.randrange(1, 2**255), ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()


def _openssh(rng: random.Random) -> str:
    seed = rng.randbytes(32)
    public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
    blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"jump@nordwind")
    body = base64.b64encode(blob).decode()
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(body, 70, "\n") + "\n-----END OPENSSH PRIVATE KEY-----"


def _wireguard(rng: random.Random) -> str:
    """A Curve25519 private key as wg(8) prints it: 32 bytes clamped (RFC 7748), base64."""
    raw = bytearray(rng.randbytes(32))
    raw[0] &= 248
    raw[31] = (raw[31] & 127) | 64
    return base64.b64encode(bytes(raw)).decode()


def v_private_key(rng: random.Random, i: int) -> Value:
    kind = i % 5
    if kind == 0:
        pem = _ec_pem(rng, serialization.PrivateFormat.PKCS8)
        return "apns_p8", pem, f"AuthKey_{pick(rng, UPPER + string.digits, 10)}.p8 (ABM push):\n{pem}", False
    if kind == 1:
        pem = _ec_pem(rng, serialization.PrivateFormat.TraditionalOpenSSL)
        return "sec1_private_key_jwt", pem, f"Okta private_key_jwt signing key:\n{pem}", False
    if kind == 2:
        pem = _openssh(rng)
        return "openssh", pem, f"~/.ssh/id_ed25519 on the jump host:\n{pem}", False
    if kind == 3:
        seed = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        pem = seed.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption()).decode().strip()
        return "ed25519_pkcs8", pem, f"SAML signing key (IdP metadata export):\n{pem}", False
    key = _wireguard(rng)
    return "wireguard", key, (f"[Interface]\nPrivateKey = {key}\nAddress = 10.66.{rng.randint(0, 255)}.2/32\n"
                              f"[Peer]\nPublicKey = {base64.b64encode(rng.randbytes(32)).decode()}"), False


def v_kerberos_key(rng: random.Random, i: int) -> Value:
    site = rng.randrange(len(REALMS))
    realm, host = REALMS[site], HOSTS[site].replace("dc01.corp.nordwind.lan", "web01.corp.nordwind.lan")
    kind = i % 4
    enctype, key = [("aes256-cts-hmac-sha1-96", pick(rng, HEX, 64)), ("aes128-cts-hmac-sha1-96", pick(rng, HEX, 32)),
                    ("arcfour-hmac", pick(rng, HEX, 32)), ("nt_hash", pick(rng, HEX, 32))][kind]
    if kind == 3:
        user = rng.choice(USERS)
        snip = f"{realm.split('.')[0]}\\{user}:{rng.randint(1100, 9999)}:aad3b435b51404eeaad3b435b51404ee:{key}:::"
        return "secretsdump", key, snip, False
    if i // 4 % 2:
        snip = (f"ktutil:  addent -key -p HTTP/{host}@{realm} -k 3 -e {enctype}\n"
                f"Key for HTTP/{host}@{realm} (hex): {key}")
        return f"ktutil_{kind}", key, snip, False
    snip = (f"$ klist -k -K -e /etc/krb5.keytab\nKeytab name: FILE:/etc/krb5.keytab\nKVNO Principal\n---- ----\n"
            f"   3 host/{host}@{realm} ({enctype})  (0x{key})")
    return f"klist_{kind}", key, snip, False


PROVIDERS: list[tuple[str, str, Callable[[random.Random], str]]] = [
    ("github_pat", "GITHUB_TOKEN", lambda r: crc_token(r, "ghp_")),
    ("github_fine", "GH_TOKEN", lambda r: "github_pat_" + pick(r, ALNUM, 22) + "_" + pick(r, ALNUM, 59)),
    ("gitlab", "GITLAB_TOKEN", lambda r: "glpat-" + pick(r, URLSAFE, 20)),
    ("slack_bot", "SLACK_BOT_TOKEN", lambda r: f"xoxb-{digits(r, 12)}-{digits(r, 13)}-{pick(r, ALNUM, 24)}"),
    ("slack_user", "SLACK_USER_TOKEN", lambda r: f"xoxp-{digits(r, 12)}-{digits(r, 12)}-{digits(r, 13)}-"
                                                 f"{pick(r, HEX, 32)}"),
    ("npm", "NPM_TOKEN", lambda r: crc_token(r, "npm_")),
    ("sendgrid", "SENDGRID_API_KEY", lambda r: "SG." + pick(r, URLSAFE, 22) + "." + pick(r, URLSAFE, 43)),
    ("google_api", "GOOGLE_API_KEY", lambda r: "AIza" + pick(r, URLSAFE, 35)),
    ("vault", "VAULT_TOKEN", lambda r: "hvs.CAESI" + pick(r, URLSAFE, 86)),
    ("terraform", "TFE_TOKEN", lambda r: pick(r, ALNUM, 14) + ".atlasv1." + pick(r, ALNUM, 67)),
    ("tailscale", "TS_AUTHKEY", lambda r: "tskey-auth-k" + pick(r, ALNUM, 10) + "CNTRL-" + pick(r, ALNUM, 33)),
    ("linear", "LINEAR_API_KEY", lambda r: "lin_api_" + pick(r, ALNUM, 40)),
]
PROVIDER_LEADS = ["{e}={v}", "export {e}=\"{v}\"", "token: {v}", '"{e}": "{v}"', "{v}", "Rotated {e}: new value {v}"]


def v_provider_key(rng: random.Random, i: int) -> Value:
    name, env, make = PROVIDERS[i % len(PROVIDERS)]
    token = make(rng)
    lead = PROVIDER_LEADS[i // len(PROVIDERS) % len(PROVIDER_LEADS)]
    return name, token, lead.format(e=env, v=token), False


# ---- national ids (outside the target) --------------------------------------------------------------------------

def es_dni(rng: random.Random) -> str:
    """DNI: 8 digits and the letter of their value mod 23; NIE: X/Y/Z standing for 0/1/2 in that sum."""
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if rng.random() < 0.3:
        lead, body = rng.choice("XYZ"), digits(rng, 7)
        return lead + body + letters[int(str("XYZ".index(lead)) + body) % 23]
    body = digits(rng, 8)
    return body + letters[int(body) % 23]


def br_cpf(rng: random.Random) -> str:
    """Nine digits and two mod-11 check digits (weights 10..2, then 11..2)."""
    nums = [int(c) for c in digits(rng, 9)]
    for weight in (10, 11):
        total = sum(d * (weight - k) for k, d in enumerate(nums))
        nums.append(0 if total % 11 < 2 else 11 - total % 11)
    s = "".join(map(str, nums))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


def pl_pesel(rng: random.Random) -> str:
    """YYMMDD (month + 20 after 1999), four serial digits, and the weighted 1-3-7-9 check digit."""
    year, month, day = rng.randint(1960, 2005), rng.randint(1, 12), rng.randint(1, 28)
    body = f"{year % 100:02d}{month + (20 if year >= 2000 else 0):02d}{day:02d}{digits(rng, 4)}"
    total = sum(int(c) * w for c, w in zip(body, [1, 3, 7, 9, 1, 3, 7, 9, 1, 3], strict=True))
    return body + str((10 - total % 10) % 10)


def nl_bsn(rng: random.Random) -> str:
    """Nine digits passing the 11-proof: 9*d1 + 8*d2 + ... + 2*d8 - d9 divisible by 11."""
    while True:
        body = str(rng.randint(1, 9)) + digits(rng, 7)
        last = sum(int(c) * w for c, w in zip(body, range(9, 1, -1), strict=True)) % 11
        if last < 10:
            return body + str(last)


VERHOEFF_D = ["0123456789", "1234067895", "2340178956", "3401289567", "4012395678", "5987604321", "6598710432",
              "7659821043", "8765932104", "9876543210"]
VERHOEFF_P = ["0123456789", "1576283094", "5803796142", "8916043527", "9453126870", "4286573901", "2793806415",
              "7046913258"]
VERHOEFF_INV = "0432156789"


def verhoeff_digit(num: str) -> str:
    """The Verhoeff check digit (dihedral group D5) that completes `num`."""
    check = 0
    for k, ch in enumerate(reversed(num)):
        check = int(VERHOEFF_D[check][int(VERHOEFF_P[(k + 1) % 8][int(ch)])])
    return VERHOEFF_INV[check]


def verhoeff_ok(num: str) -> bool:
    """Whether `num` ends with its Verhoeff check digit."""
    check = 0
    for k, ch in enumerate(reversed(num)):
        check = int(VERHOEFF_D[check][int(VERHOEFF_P[k % 8][int(ch)])])
    return check == 0


def in_aadhaar(rng: random.Random) -> str:
    """Twelve digits, the first 2-9, the last Verhoeff's; printed in fours."""
    body = str(rng.randint(2, 9)) + digits(rng, 10)
    return group(body + verhoeff_digit(body), 4, " ")


def tr_tckn(rng: random.Random) -> str:
    """Eleven digits, no leading 0: d10 = (7 * odd sum - even sum) mod 10, d11 = sum of d1-d10 mod 10."""
    nums = [rng.randint(1, 9)] + [int(c) for c in digits(rng, 8)]
    nums.append((7 * sum(nums[0:9:2]) - sum(nums[1:8:2])) % 10)
    nums.append(sum(nums) % 10)
    return "".join(map(str, nums))


def fi_hetu(rng: random.Random) -> str:
    """DDMMYY, the century sign (- 1900s, A 2000s), a 3-digit individual number and its mod 31 character."""
    year, month, day = rng.randint(1950, 2006), rng.randint(1, 12), rng.randint(1, 28)
    ddmmyy, individual = f"{day:02d}{month:02d}{year % 100:02d}", f"{rng.randint(2, 899):03d}"
    mark = "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(ddmmyy + individual) % 31]
    return f"{ddmmyy}{'A' if year >= 2000 else '-'}{individual}{mark}"


def se_personnummer(rng: random.Random) -> str:
    """YYMMDD-NNNC: C the Luhn digit over the nine digits before it."""
    body = f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    return f"{body[:6]}-{body[6:]}{luhn_digit(body)}"


IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "es_dni": (es_dni, ["DNI", "NIE", "Documento de identidad", "DNI/NIE del empleado"]),
    "br_cpf": (br_cpf, ["CPF", "CPF do colaborador", "Cadastro de Pessoas Físicas"]),
    "pl_pesel": (pl_pesel, ["PESEL", "numer PESEL", "PESEL pracownika"]),
    "nl_bsn": (nl_bsn, ["BSN", "burgerservicenummer", "BSN medewerker"]),
    "in_aadhaar": (in_aadhaar, ["Aadhaar", "Aadhaar no.", "आधार संख्या"]),
    "tr_tckn": (tr_tckn, ["T.C. Kimlik No", "TCKN", "kimlik numarası"]),
    "fi_hetu": (fi_hetu, ["henkilötunnus", "HETU", "henkilötunnus (HR)"]),
    "se_personnummer": (se_personnummer, ["personnummer", "Personnr", "personnummer (HR)"]),
}
ID_TEMPLATES = ["{c}: {v}", "HR sync — {c} {v}", '"nationalId": {{"type": "{c}", "value": "{v}"}}',
                "employeeNationalId: {v}  # {c}", "Onboarding checklist: {c} = {v}"]


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    make, words = IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        template = ID_TEMPLATES[i % len(ID_TEMPLATES)]
        return f"t{i % len(ID_TEMPLATES)}", value, template.format(c=rng.choice(words), v=value), False

    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "oauth_client_secret": v_oauth_client_secret, "oauth_token": v_oauth_token,
    "okta_api_token": v_okta_api_token, "session_cookie": v_session_cookie, "totp_seed": v_totp_seed,
    "recovery_code": v_recovery_code, "disk_recovery_key": v_disk_recovery_key, "private_key": v_private_key,
    "kerberos_key": v_kerberos_key, "provider_key": v_provider_key,
    **{kind: national_id(kind) for kind in IDS},
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


# ---- near misses ------------------------------------------------------------------------------------------------

def _luhn_bad(rng: random.Random, length: int = 16) -> str:
    """A number of `length` digits whose last digit is not its Luhn digit."""
    body = str(rng.randint(1, 9)) + digits(rng, length - 2)
    return body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)


def _filetime(rng: random.Random) -> str:
    """A Windows FILETIME (100 ns since 1601) in 2025, as lastLogonTimestamp and pwdLastSet hold it."""
    return str((rng.randint(1_735_689_600, 1_767_225_599) + 11_644_473_600) * 10_000_000 + rng.randint(0, 9_999_999))


def rng_pick(rng: random.Random, options: list[str]) -> str:
    """One of the already written options (each call draws them all, so the stream stays fixed)."""
    return rng.choice(options)


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "directory_ids": lambda r: rng_pick(r, [f"tenantId: {_fid(r)}", f"appId={_fid(r)}",
                                            f"client-request-id: {_fid(r)}", f"BitLocker key ID: {_fid(r).upper()}",
                                            f"x-ms-correlation-id {_fid(r)}"]),
    "well_known_sid": lambda r: rng_pick(r, ["S-1-5-32-544 (BUILTIN\\Administrators)", "S-1-5-18 (LocalSystem)",
                                             "S-1-1-0 (Everyone)", "S-1-5-32-555 (Remote Desktop Users)",
                                             f"RID {r.choice([500, 512, 513, 519])} of the domain"]),
    "ldap_filter": lambda r: rng_pick(r, [f"(&(objectClass=user)(memberOf=CN=VPN-Users,OU=Groups,{r.choice(BASES)}))",
                                          "(&(objectCategory=person)(!(userAccountControl:1.2.840.113556.1.4.803:=2)))",
                                          f"CN=Domain Admins,CN=Users,{r.choice(BASES)}",
                                          f"OU=Laptops,OU=Devices,{r.choice(BASES)}"]),
    "selector": lambda r: rng_pick(r, ["#okta-signin-password", "input[name=\"passwd\"]", "//input[@id='i0118']",
                                       "button[data-type=\"save\"]", "div.o-form-input > input[type=password]",
                                       f"#identifierId + div:nth-child({r.randint(2, 9)})"]),
    "field_name": lambda r: rng_pick(r, ["<input type=\"hidden\" name=\"__RequestVerificationToken\">",
                                         "form fields: username, password, _csrf, rememberMe",
                                         "<input name=\"SAMLResponse\" type=\"hidden\">",
                                         "autocomplete=\"current-password\" name=\"credentials.passcode\"",
                                         "param names: client_id, client_secret, code_verifier"]),
    "placeholder": lambda r: rng_pick(r, ["Password: ********", "client_secret: <YOUR_CLIENT_SECRET>",
                                          "Email: you@example.com", "api_token = \"{{ okta_api_token }}\"",
                                          "AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}", "SSWS <token>",
                                          "secret = changeme-in-vault", "Phone: +1 (XXX) XXX-XXXX"]),
    "masked": lambda r: rng_pick(r, [f"**** **** **** {digits(r, 4)}", f"SSN ***-**-{digits(r, 4)}",
                                     "j***@n***.de", f"+49 *** ***{digits(r, 2)}",
                                     f"DE** **** **** **** **{digits(r, 2)} {digits(r, 2)}",
                                     f"client secret ends in …{pick(r, ALNUM, 4)}"]),
    "timestamp": lambda r: rng_pick(r, [f"lastLogonTimestamp: {_filetime(r)}", f"pwdLastSet={_filetime(r)}",
                                        f"whenChanged: 2025{r.randint(1, 12):02d}{r.randint(1, 28):02d}"
                                        f"{digits(r, 6)}.0Z", f"published {_ts(r)}",
                                        f"iat {r.randint(1_735_000_000, 1_760_000_000)}"]),
    "request_id": lambda r: rng_pick(r, [f"X-Okta-Request-Id: {pick(r, ALNUM, 27)}",
                                         f"request-id: {_fid(r)}", f"x-amzn-RequestId: {_fid(r)}",
                                         f"traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01"]),
    "version": lambda r: rng_pick(r, [f"Okta Verify {r.randint(7, 9)}.{r.randint(0, 40)}.{r.randint(0, 9)}",
                                      f"macOS 14.{r.randint(0, 7)} (23{r.choice('ABCDEFGH')}{r.randint(100, 999)})",
                                      f"Windows 11 23H2 build 22631.{r.randint(2000, 4500)}",
                                      f"Jamf Pro 11.{r.randint(0, 12)}.{r.randint(0, 3)}-t{digits(r, 13)}",
                                      f"krb5-1.{r.randint(18, 21)}.{r.randint(0, 4)}",
                                      f"OpenSSL 3.{r.randint(0, 3)}.{r.randint(0, 15)}"]),
    "device_serial": lambda r: rng_pick(r, [f"Serial Number: C02{pick(r, UPPER + string.digits, 9)}",
                                            f"Service Tag: {pick(r, UPPER + string.digits, 7)}",
                                            f"Asset tag IT-{digits(r, 6)}", f"Model identifier: Mac{r.randint(13, 15)}"
                                            f",{r.randint(1, 12)}"]),
    "cert_thumbprint": lambda r: rng_pick(r, [f"Thumbprint: {pick(r, '0123456789ABCDEF', 40)}",
                                              "SHA-256 Fingerprint: " + ":".join(pick(r, "0123456789ABCDEF", 2)
                                                                                 for _ in range(32)),
                                              f"x5t#S256 {b64url(r.randbytes(32))}",
                                              f"keyId {pick(r, HEX, 40)} (SAML signing cert, public)"]),
    "asset_hash": lambda r: rng_pick(r, [f"/assets/js/okta-sign-in.min.js?v={pick(r, HEX, 8)}",
                                         f"app.{pick(r, HEX, 8)}.chunk.js", f"styles.{pick(r, HEX, 20)}.css",
                                         f"integrity=\"sha384-{base64.b64encode(r.randbytes(48)).decode()}\""]),
    "network": lambda r: rng_pick(r, [f"RADIUS auth port 1812, accounting 1813, NAS {_ip(r)}",
                                      f"allowed range 10.{r.randint(0, 255)}.0.0/16", f"LDAPS {_ip(r)}:636",
                                      f"Kerberos 88/udp and 464/tcp to {_ip(r)}"]),
    "service_line": lambda r: rng_pick(r, [f"IT Service Desk (toll-free): 1-800-{r.randint(200, 999)}-"
                                           f"{digits(r, 4)}", f"Freephone support 0800 {digits(r, 3)} {digits(r, 4)}",
                                           f"Numéro vert 0 800 {digits(r, 2)} {digits(r, 2)} {digits(r, 2)}",
                                           f"Kostenlose Hotline 0800 {digits(r, 7)}",
                                           f"Toll-free helpline 1800-{digits(r, 3)}-{digits(r, 4)}"]),
    "fictional_number": lambda r: rng_pick(r, [f"Example: 020 7946 0{digits(r, 3)}",
                                               f"e.g. 07700 900{digits(r, 3)}",
                                               f"Demo user ({r.randint(2, 9)}{digits(r, 2)}) 555-01{digits(r, 2)}",
                                               f"Test MSISDN 01632 960{digits(r, 3)}"]),
    "luhn_invalid": lambda r: rng_pick(r, [f"PO {_luhn_bad(r)}", f"Batch {_luhn_bad(r, 15)}",
                                           f"Import job {group(_luhn_bad(r), 4, ' ')}",
                                           f"ref {_luhn_bad(r, 19)}"]),
    "ticket_number": lambda r: rng_pick(r, [f"INC00{digits(r, 5)}", f"RITM00{digits(r, 5)}",
                                            f"ITSD-{r.randint(100, 9999)}", f"REQ-2025-{digits(r, 6)}",
                                            f"CHG00{digits(r, 5)}"]),
    "tracking_number": lambda r: rng_pick(r, [f"UPS 1Z{pick(r, UPPER + string.digits, 6)}{digits(r, 10)}",
                                              f"FedEx {digits(r, 12)}", f"DHL Express {digits(r, 10)}",
                                              f"Laptop shipped, tracking {digits(r, 12)} (FedEx)"]),
    "geometry": lambda r: rng_pick(r, [f"viewport {r.choice([1280, 1440, 1920])}x{r.choice([720, 900, 1080])}",
                                       f"click at x={r.randint(0, 1920)}, y={r.randint(0, 1080)}",
                                       f"office lat {r.uniform(48, 55):.4f}, lon {r.uniform(2, 14):.4f}",
                                       f"logo {r.choice([64, 128, 256])}px × {r.choice([64, 128, 256])}px"]),
    "client_id": lambda r: rng_pick(r, [f"client_id=0oa{pick(r, ALNUM, 17)}",
                                        f"{digits(r, 12)}-{pick(r, LOWNUM, 32)}.apps.googleusercontent.com",
                                        f"entityID=\"https://sso.{r.choice(APPS).split()[0].lower()}.example/saml\"",
                                        f"Duo integration key DI{pick(r, UPPER + string.digits, 18)}"]),
    "kerberos_meta": lambda r: rng_pick(r, [f"HTTP/{r.choice(HOSTS)}@{r.choice(REALMS)} kvno {r.randint(2, 9)}",
                                            "permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96",
                                            f"ticket_lifetime = {r.choice([10, 24])}h", "renew_lifetime = 7d",
                                            f"Valid starting {_ts(r)}  Service principal krbtgt/{r.choice(REALMS)}"]),
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
