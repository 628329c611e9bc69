"""The seventh redaction corpus: values written from their kinds' public formats in the shapes a healthcare team,
a bank/payments team, a mobile/telecom team and an enterprise SaaS/cloud team hold, by someone who read neither the
rules nor the six earlier corpora. Labels and prose in Portuguese (PT), Romanian, Hungarian, Finnish, Danish,
Norwegian, Ukrainian, Thai, Malay, Swahili, Tagalog, Bengali, Farsi (Latin digits) and Catalan.

Shapes (carriers): HL7 v2 segments (`|`/`^` fields, `\\r` between segments), FHIR R4 JSON (Patient.telecom,
Patient.identifier, extensions), DICOM tag dumps (dcmdump style), clinic appointment SMS; SWIFT MT103 blocks
(`:50K:`, `:59:`, `:70:`, `:72:`), ISO 20022 pain.001 / camt.053 XML, NACHA-like 94-character fixed-width lines,
Stripe and Adyen webhook events, chargeback e-mails; Android logcat, iOS `os_log` and crash reports, Firebase
Crashlytics JSON, CDR CSV rows, USSD/SMS gateway logs; Salesforce/HubSpot CSV exports, SAP IDoc flat text, AWS
CloudTrail events (requestParameters), GCP audit logs (protoPayload), Azure activity logs (a JSON request body held
as a string), Vault API responses, Jenkins console and GitHub Actions logs, Terraform plan output, Airflow task logs,
browser devtools copy-as-fetch and copy-as-PowerShell.

Kinds and the public format each is written from (the sixth corpus's kind names where the kind is the same):
- email: RFC 5322 addr-spec, RFC 6531 internationalised (UTF-8 local part and IDN domain), RFC 3986
  percent-encoding (`%40`), JSON `\\u0040` escapes (RFC 8259), upper case, `+` sub-addresses, `mailto:` (RFC 6068).
- email_obfuscated (outside target, as in the sixth): `name [at] host [dot] tld` in the corpus's languages.
- phone_XX, 25 plans: ITU-T E.164 with each country's national numbering plan as the regulators publish it (ANACOM
  PT, ANCOM RO, NMHH HU, Traficom FI, Energistyrelsen DK, Nkom NO, NCEC UA, NBTC TH, MCMC MY, NTC PH, NCC NG, CA KE,
  NTRA EG, CST SA, TDRA AE, ENACOM AR, Subtel CL, CRC CO, OSIPTEL PE, NZ NNAC, ComReg IE, RTR AT, BAKOM CH, BIPT BE,
  IMDA SG): mobile ranges, national significant number lengths, trunk prefixes (`0`, HU `06`, none for PT, DK, NO,
  CL, CO, PE, SG; AR mobiles `+54 9` internationally, `0 area 15` nationally). Always beside a context word.
- card: ISO/IEC 7812 IIN ranges and lengths of Visa, Mastercard (51-55, 2221-2720), Amex, Discover, JCB, Diners,
  UnionPay (16-19), Maestro, Mir, RuPay, Elo, Troy; Luhn check digit; separators space, `-`, `.`, `_`, none.
- iban: ISO 13616 with the SWIFT IBAN registry's BBAN structures, 33 countries; MOD 97-10; any grouping and case.
- ssn: US SSN (SSA: area 001-899 except 666, group 01-99, serial 0001-9999), in HL7 PID-19, FHIR identifier
  system `http://hl7.org/fhir/sid/us-ssn`, CSV exports and prose.
- password, secret: labelled values in env, JSON, YAML-ish, CLI, properties, PowerShell and prose forms, labels in the
  corpus's 14 languages and in camelCase/prefixed names.
- aws_key_id, aws_secret: AWS IAM docs (access key ids `AKIA`/`ASIA` + 16 of A-Z2-7; 40-character secret keys).
- connection_string: RFC 3986 userinfo URIs (postgresql, mysql, mongodb+srv, redis, amqp), JDBC URLs in
  `.properties` (SQL Server `;password=`), ODBC DSN `Pwd=`, Kafka JAAS `PlainLoginModule ... password="..."`,
  Airflow `AIRFLOW_CONN_*` URIs. The secret is the password.
- http_auth: RFC 7617 Basic, RFC 6750 Bearer, `Token`, Okta `SSWS`, RFC 7616 Digest `response=`, AWS SigV4
  `Signature=`, Kong/draft-cavage HMAC `signature=`, Elastic `ApiKey` base64(`id:key`). The secret is the credential.
- cookie: RFC 6265 `Cookie:`/`Set-Cookie:` session values, in curl, fetch and PowerShell `System.Net.Cookie` forms.
- webhook: Slack incoming webhooks (`hooks.slack.com/services/T../B../24`), Discord (`/api/webhooks/<id>/<68>`),
  Microsoft Teams/Power Automate (`webhook.office.com/webhookb2/...`), Google Chat (`?key=..&token=..`), Zapier
  (`hooks.zapier.com/hooks/catch/<n>/<id>/`). The secret is the part after the host.
- pem: RFC 7468 armour; PKCS#8 and SEC1 EC keys (cryptography, seeded), PKCS#1-shaped RSA DER (random integers),
  OpenSSH `openssh-key-v1` (PROTOCOL.key). The secret is the base64 body.
- gcp_service_account: Google's service-account key file JSON; the secret is the private key's body.
- jwt: RFC 7519/7515 HS256 tokens signed with a random key.
- Provider tokens (documented format, or where none is documented, the shape the provider's own docs show):
  github (2021 token format: `ghp_`/`gho_`/`ghs_` + 30 base62 + CRC32; `github_pat_` 22_59), gitlab (`glpat-` 20,
  GitLab docs "token prefixes"), slack_token (`xoxb-`/`xoxp-`/`xapp-1-`, Slack docs), stripe (`sk_live_`/`rk_live_`
  /`whsec_`, Stripe API keys docs), openai (`sk-proj-`, `sk-svcacct-`), anthropic (`sk-ant-api03-` ... `AA`),
  google (`AIza` + 35), twilio (API key `SK` + 32 hex, auth token 32 hex labelled), sendgrid (`SG.`22`.`43),
  npm (`npm_` 36 with CRC32), pypi (`pypi-AgEIcHlwaS5vcmc` macaroon), huggingface (`hf_` 34), datadog (API key 32
  hex, app key 40 hex, labelled), azure_storage (`AccountKey=` 88 base64; SAS `sig=`), shopify (`shpat_`/`shpss_`/
  `shpca_` + 32 hex), adyen (`AQE...` keys: no public spec, shape of Adyen docs' examples), plaid (`access-
  production-<uuid>`, secret 30 hex labelled: Plaid docs), square (`EAAA` + 60, `sq0csp-` 43: Square docs), paypal
  (Braintree `access_token$production$<16>$<32 hex>`: Braintree docs), okta (`00` + 40: Okta API token docs),
  auth0 (client secret 64: shape of Auth0 dashboard), twitch (`oauth:` 30 lower alnum: Twitch IRC docs), telegram
  (bot token `<8-10 digits>:<35>`, Bot API docs), discord (bot token base64(snowflake).6.38: Discord docs' shape),
  contentful (`CFPAT-` 43: Contentful CMA docs), algolia (admin key 32 hex, labelled), segment (write key 32
  alnum, labelled), mixpanel (project secret 32 hex, labelled), launchdarkly (`sdk-`/`api-`/`mob-` + UUID:
  LaunchDarkly docs), snyk (UUID, labelled `SNYK_TOKEN`), sonarqube (`sqp_`/`squ_`/`sqa_` + 40 hex: SonarQube 9.5+
  docs), circleci (`CCIPAT_<22>_<40 hex>`: CircleCI docs), buildkite (`bkua_` + 40 hex: Buildkite docs),
  terraform_cloud (14 `.atlasv1.` 67: no spec, the shape Terraform Cloud prints), vault (`hvs.` 90+, `hvb.` batch:
  Vault 1.10 token docs), age (`AGE-SECRET-KEY-1` + 58 bech32 upper: age spec), tailscale (`tskey-auth-`/`tskey-api-`
  `<id>-<32>`: Tailscale docs), linode (64 hex labelled), scaleway (access key `SCW` + 17, secret key UUID
  labelled: Scaleway IAM docs), hetzner (`HCLOUD_TOKEN` 64 alnum), confluent (key 16 upper alnum + secret 64,
  labelled), elastic (`ApiKey` base64 of `id:api_key`, Elasticsearch security API docs).
- disguised: values of the kinds above with zero-width characters (U+200B/C/D, U+2060, U+FEFF), full-width forms
  (U+FF01-FF5E), bidi controls (U+202A-202E, U+2066-2069), soft hyphens (U+00AD) or NBSP (U+00A0) separators.

Near misses (`generate_negatives`, 20 per sort, 18 sorts): HL7 control ids, FHIR resource ids, SWIFT BICs, UETRs
(UUID v4), MT103 `:20:` references, cards failing Luhn, IBANs failing MOD 97, IMEIs, ICCIDs, MSISDN-like numbers with
no context word, version and build strings, git SHAs, OCI digests, ARNs, request and W3C trace ids, timestamps and
amounts, placeholders and masked values, public and publishable keys, base64 of plain text.
Decisions: an IMEI is 15 digits with a Luhn digit, but its TAC (35..., 86..., 01...) is not an IIN of any 15-digit
scheme (Amex is 34/37), so a card detector that checks scheme and length must not flag it: it is a near miss. A
`noreply@` system address IS an e-mail address (the format does not know who reads it), so flagging one is correct:
none is a near miss.
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

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from benchmarks.corpus_formats import (
    b64url,
    bban,
    crc_token,
    der_int,
    der_seq,
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 7070
PER_KIND = 104
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"email_obfuscated"})
"""Kinds printed but not held to the recall target (as in the sixth corpus)."""

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
LOWER_AN = string.ascii_lowercase + string.digits
UPPER_AN = string.ascii_uppercase + string.digits
PW_CHARS = ALNUM + "!#$%&*+-.:;=?@^_~"
"""Password characters: printable, no quote, backslash or space, so every carrier holds the value verbatim."""

LANGS = ("pt", "ro", "hu", "fi", "da", "no", "uk", "th", "ms", "sw", "tl", "bn", "fa", "ca")

WORDS: dict[str, dict[str, str]] = {
    "password": {"pt": "senha", "ro": "parolă", "hu": "jelszó", "fi": "salasana", "da": "adgangskode",
                 "no": "passord", "uk": "пароль", "th": "รหัสผ่าน", "ms": "kata laluan", "sw": "nenosiri",
                 "tl": "kontrasenya", "bn": "পাসওয়ার্ড", "fa": "رمز عبور", "ca": "contrasenya"},
    "key": {"pt": "chave de API", "ro": "cheie API", "hu": "API-kulcs", "fi": "API-avain", "da": "API-nøgle",
            "no": "API-nøkkel", "uk": "ключ API", "th": "คีย์ API", "ms": "kunci API", "sw": "ufunguo wa API",
            "tl": "API key", "bn": "API কী", "fa": "کلید API", "ca": "clau d'API"},
    "secret": {"pt": "segredo", "ro": "secret", "hu": "titkos kulcs", "fi": "salainen avain", "da": "hemmelighed",
               "no": "hemmelighet", "uk": "секрет", "th": "ความลับ", "ms": "rahsia", "sw": "siri",
               "tl": "lihim na susi", "bn": "গোপন কী", "fa": "کلید مخفی", "ca": "secret"},
    "token": {"pt": "token de acesso", "ro": "token de acces", "hu": "hozzáférési token", "fi": "käyttötunnus",
              "da": "adgangstoken", "no": "tilgangstoken", "uk": "токен доступу", "th": "โทเค็น", "ms": "token akses",
              "sw": "tokeni ya ufikiaji", "tl": "access token", "bn": "অ্যাক্সেস টোকেন", "fa": "توکن دسترسی",
              "ca": "testimoni d'accés"},
    "phone": {"pt": "telemóvel", "ro": "telefon", "hu": "telefonszám", "fi": "puhelin", "da": "mobilnummer",
              "no": "mobilnummer", "uk": "телефон", "th": "เบอร์โทร", "ms": "no. telefon", "sw": "namba ya simu",
              "tl": "numero ng telepono", "bn": "ফোন নম্বর", "fa": "شماره تلفن", "ca": "telèfon"},
    "email": {"pt": "e-mail", "ro": "e-mail", "hu": "e-mail cím", "fi": "sähköposti", "da": "e-mail",
              "no": "e-post", "uk": "ел. пошта", "th": "อีเมล", "ms": "e-mel", "sw": "barua pepe", "tl": "email",
              "bn": "ইমেইল", "fa": "ایمیل", "ca": "correu electrònic"},
    "card": {"pt": "cartão", "ro": "card", "hu": "kártyaszám", "fi": "kortin numero", "da": "kortnummer",
             "no": "kortnummer", "uk": "номер картки", "th": "หมายเลขบัตร", "ms": "nombor kad", "sw": "namba ya kadi",
             "tl": "numero ng card", "bn": "কার্ড নম্বর", "fa": "شماره کارت", "ca": "targeta"},
    "iban": {"pt": "IBAN", "ro": "cont IBAN", "hu": "IBAN számlaszám", "fi": "tilinumero (IBAN)",
             "da": "IBAN-kontonummer", "no": "kontonummer (IBAN)", "uk": "рахунок IBAN", "th": "เลขบัญชี IBAN",
             "ms": "nombor akaun IBAN", "sw": "akaunti IBAN", "tl": "IBAN", "bn": "IBAN অ্যাকাউন্ট",
             "fa": "شماره شبا IBAN", "ca": "compte IBAN"},
    "ssn": {lang: "SSN" for lang in LANGS},
    "conn": {"pt": "cadeia de ligação", "ro": "șir de conexiune", "hu": "kapcsolati karakterlánc",
             "fi": "yhteysmerkkijono", "da": "forbindelsesstreng", "no": "tilkoblingsstreng",
             "uk": "рядок підключення", "th": "สตริงเชื่อมต่อ", "ms": "rentetan sambungan", "sw": "kiungo cha hifadhidata",
             "tl": "connection string", "bn": "সংযোগ স্ট্রিং", "fa": "رشته اتصال", "ca": "cadena de connexió"},
    "webhook": {lang: "webhook" for lang in LANGS},
}

SENTENCES = {
    "pt": "Olá, segue o {label} pedido: {value} — obrigado.",
    "ro": "Bună ziua, {label} este {value}, vă rog verificați.",
    "hu": "Szia! A {label}: {value} (kérlek ne oszd meg).",
    "fi": "Hei, {label} on {value}, tarkista se.",
    "da": "Hej, her er {label}: {value} tak.",
    "no": "Hei, {label} er {value} – gi beskjed.",
    "uk": "Добрий день, {label}: {value}, дякую.",
    "th": "สวัสดีครับ {label}: {value} ขอบคุณครับ",
    "ms": "Hai, {label} saya ialah {value}, terima kasih.",
    "sw": "Habari, {label} ni {value}, asante.",
    "tl": "Kumusta, ang {label} ko ay {value}, salamat po.",
    "bn": "নমস্কার, {label}: {value} ধন্যবাদ।",
    "fa": "سلام، {label} من {value} است، ممنون.",
    "ca": "Hola, el {label} és {value}, gràcies.",
}

FIRST = ("João", "Inês", "Ioana", "Mihai", "Zsófia", "Bence", "Aino", "Jukka", "Søren", "Ingrid", "Olena", "Taras",
         "Somchai", "Nurul", "Amani", "Jose", "Rahim", "Parisa", "Jordi", "Leilani")
ASCII_FIRST = ("joao", "ines", "ioana", "mihai", "zsofia", "bence", "aino", "jukka", "soren", "ingrid", "olena",
               "taras", "somchai", "nurul", "amani", "jose", "rahim", "parisa", "jordi", "maricel")
LAST = ("silva", "popescu", "nagy", "korhonen", "jensen", "hansen", "shevchenko", "srisuk", "abdullah", "mwangi",
        "dela.cruz", "chowdhury", "rahimi", "puig", "ferreira", "ionescu", "kovacs", "virtanen", "berg", "kowalenko")
DOMAINS = ("clinica-lisboa.pt", "spital-cluj.ro", "klinika.hu", "terveystalo-demo.fi", "sundhed.dk", "legekontor.no",
           "likarnia.com.ua", "rama-hosp.co.th", "klinik.com.my", "afya.co.ke", "ospital.ph", "hasp.com.bd",
           "darman.ir", "cap-gracia.cat", "banco-norte.pt", "otpdemo.hu", "nordpay.fi", "mpesa-demo.co.ke",
           "payflow.ae", "telco.ng")
IDN = ("józsef@példa.hu", "søren@kødbyen.dk", "ærlig@bedrift.no", "joão@exemplo.pt", "ştefan@exemplu.ro",
       "käyttäjä@esimerkki.fi", "олена@приклад.укр", "สมชาย@ตัวอย่าง.ไทย", "jordi@exemple.cat", "rahim@উদাহরণ.বাংলা")


@dataclass(frozen=True)
class Case:
    """One planted value: its kind, the value that must not survive (`secret`), the text it is written in, the
    text as carried into a store (message text, or a JSON document when `is_json`), and its form
    (`carrier/style`)."""

    kind: str
    secret: str
    text: str
    carried: str
    form: str
    is_json: bool


@dataclass(frozen=True)
class Value:
    """A value as written (`shown`), the part of it that must not survive (`secret`), and its style."""

    shown: str
    secret: str
    style: str


ValueGen = Callable[[random.Random], Value]
Carrier = Callable[[random.Random, str, str, str, str], str]
"""(rng, env name, human label, value as shown, language) -> text."""


def same(shown: str, style: str) -> Value:
    return Value(shown, shown, style)


def ts(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:" \
           f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


# ---- carriers: labelled values -----------------------------------------------------------------------------------

def c_hl7_nte(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    ctl = digits(r, 10)
    return (f"MSH|^~\\&|EPIC|CLIN{r.randint(1, 9)}|LAB|HOSP|{ts(r).replace('-', '').replace(':', '')[:12]}||"
            f"ORU^R01|{ctl}|P|2.5.1\rPID|1||{digits(r, 8)}^^^MRN||DOE^ANA\r"
            f"NTE|1|L|{human}: {v}")


def c_fhir_ext(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return json.dumps({"resourceType": "Basic", "id": str(uuid.UUID(int=r.getrandbits(128), version=4)),
                       "extension": [{"url": f"https://fhir.clinic.example/StructureDefinition/{env.lower()}",
                                      "valueString": v}], "text": {"status": "generated", "div": human}},
                      ensure_ascii=False)


def c_dicom(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f"(0008,0018) UI [1.2.840.{digits(r, 6)}.{digits(r, 4)}]  # SOPInstanceUID\n"
            f"(0032,4000) LT [{human}: {v}]  # StudyComments\n(0040,0280) ST [ok]  # CommentsOnPerformedProcedure")


def c_mt103(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f"{{1:F01BANKPTPLAXXX{digits(r, 10)}}}{{2:I103BANKROBUXXXXN}}{{4:\n:20:REF{digits(r, 8)}\n"
            f":23B:CRED\n:32A:261205EUR{r.randint(100, 9999)},00\n:70:{human} {v}\n:71A:SHA\n-}}")


def c_pain001(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"><CstmrCdtTrfInitn><PmtInf>'
            f"<PmtInfId>PMT-{digits(r, 6)}</PmtInfId><CdtTrfTxInf><RmtInf><Ustrd>{human}: {v}</Ustrd></RmtInf>"
            f"</CdtTrfTxInf></PmtInf></CstmrCdtTrfInitn></Document>")


def c_logcat(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f"12-{r.randint(1, 28):02d} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}."
            f"{r.randint(0, 999):03d}  {r.randint(1000, 9999)}  {r.randint(1000, 9999)} D ConfigRepo: "
            f"loaded {env}={v}")


def c_oslog(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f"{ts(r).replace('T', ' ')}.{r.randint(0, 999999):06d}+0200 Clinica[{r.randint(100, 999)}:"
            f"{r.randint(1000, 99999):x}] [com.clinica.app:Auth] {env}: {v}")


def c_crashlytics(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return json.dumps({"event_id": uuid.UUID(int=r.getrandbits(128)).hex, "platform": "android",
                       "custom_keys": {env.lower(): v, "build": f"4.{r.randint(1, 30)}.0"},
                       "logs": [f"{human} set"]}, ensure_ascii=False)


def c_cloudtrail(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return json.dumps({"eventVersion": "1.08", "eventSource": "ssm.amazonaws.com", "eventName": "PutParameter",
                       "awsRegion": "eu-south-2", "requestParameters": {"name": f"/prod/{env.lower()}",
                                                                        "value": v, "type": "String"},
                       "requestID": str(uuid.UUID(int=r.getrandbits(128)))}, ensure_ascii=False)


def c_gcp_audit(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return json.dumps({"protoPayload": {"@type": "type.googleapis.com/google.cloud.audit.AuditLog",
                                        "methodName": "google.cloud.run.v1.Services.ReplaceService",
                                        "request": {"spec": {"containers": [{"env": [{"name": env, "value": v}]}]}}},
                       "severity": "NOTICE", "timestamp": ts(r) + "Z"}, ensure_ascii=False)


def c_azure_activity(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    body = json.dumps({"properties": {"siteConfig": {"appSettings": [{"name": env, "value": v}]}}},
                      ensure_ascii=False)
    return json.dumps({"operationName": {"value": "Microsoft.Web/sites/write"}, "status": {"value": "Succeeded"},
                       "properties": {"requestbody": body}, "correlationId": str(uuid.UUID(int=r.getrandbits(128)))})


def c_vault(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return json.dumps({"request_id": str(uuid.UUID(int=r.getrandbits(128))), "lease_id": "", "renewable": False,
                       "data": {"data": {env.lower(): v}, "metadata": {"version": r.randint(1, 9)}}})


def c_jenkins(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f"[Pipeline] withEnv\n[Pipeline] {{\n[Pipeline] sh\n+ export {env}={v}\n"
            f"+ ./gradlew publish -Pbuild={r.randint(100, 999)}\n> Task :app:publish")


def c_gha(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    t = ts(r)
    return (f"{t}.{digits(r, 7)}Z ##[group]Run ./deploy.sh\n{t}.{digits(r, 7)}Z env:\n"
            f"{t}.{digits(r, 7)}Z   {env}: {v}\n{t}.{digits(r, 7)}Z ##[endgroup]")


def c_terraform(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f"  # aws_lambda_function.sync will be updated in-place\n  ~ resource \"aws_lambda_function\" \"sync\" {{\n"
            f"      ~ environment {{\n          ~ variables = {{\n              + \"{env}\" = \"{v}\"\n"
            f"            }}\n        }}\n    }}\n\nPlan: 0 to add, 1 to change, 0 to destroy.")


def c_airflow(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f"[{ts(r).replace('T', ', ')} UTC] {{taskinstance.py:1138}} INFO - Exporting env vars: "
            f"AIRFLOW_CTX_DAG_ID='billing_sync' {env}='{v}'")


def c_fetch(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    name = env.lower().replace("_", "-")
    return (f'fetch("https://api.example.net/v{r.randint(1, 3)}/sync", {{\n  "headers": {{\n'
            f'    "accept": "application/json",\n    "x-{name}": "{v}"\n  }},\n  "body": null,\n'
            f'  "method": "GET",\n  "mode": "cors"\n}});')


def c_powershell(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f"$session = New-Object Microsoft.PowerShell.Commands.WebRequestSession\n"
            f"Invoke-WebRequest -UseBasicParsing -Uri \"https://api.example.net/sync\" `\n-WebSession $session `\n"
            f"-Headers @{{\n\"accept\"=\"application/json\"\n  \"{env}\"=\"{v}\"\n}}")


def c_salesforce(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f'"Id","Name","Description","{human}"\n"0015g{pick(r, ALNUM, 13)}","Acme Lda",'
            f'"imported {r.randint(1, 28)}/12","{v}"')


def c_idoc(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f"EDI_DC40  800{digits(r, 16)}740 53  ORDERS05\n"
            f"E2EDKA1003{digits(r, 20)}AG {env[:19]:<20}{v}\n")


def c_ussd(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f"{ts(r).replace('T', ' ')} INFO  [smpp-gw-{r.randint(1, 4)}] submit_sm id={digits(r, 10)} "
            f"dcs=8 text=\"{human}: {v}\"")


def c_chargeback(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return (f"From: disputes@acquirer.example\nSubject: Chargeback {digits(r, 8)} – reason 10.4\n\n"
            f"{SENTENCES[lang].format(label=human, value=v)}\n--\nDisputes team")


def c_prose(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return SENTENCES[lang].format(label=human, value=v)


def c_dotenv(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    return f"# {human}\nNODE_ENV=production\n{env}=\"{v}\"\nPORT={r.randint(3000, 9000)}"


def c_cli(r: random.Random, env: str, human: str, v: str, lang: str) -> str:
    flag = env.lower().replace("_", "-")
    return f"$ ./sync-tool --region eu-west-1 --{flag} {v} --dry-run"


LABELLED: tuple[Carrier, ...] = (c_hl7_nte, c_fhir_ext, c_dicom, c_mt103, c_pain001, c_logcat, c_oslog,
                                 c_crashlytics, c_cloudtrail, c_gcp_audit, c_azure_activity, c_vault, c_jenkins,
                                 c_gha, c_terraform, c_airflow, c_fetch, c_powershell, c_salesforce, c_idoc, c_ussd,
                                 c_chargeback, c_prose, c_dotenv, c_cli)
"""25 carriers for labelled values: each holds the value verbatim beside its env name or its human label."""


# ---- carriers: personal data --------------------------------------------------------------------------------------

def p_hl7_pid(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    mrn = digits(r, 8)
    pid13 = f"^NET^Internet^{v}" if field == "email" else f"{v}^PRN^PH" if field == "phone" else ""
    pid19 = v if field == "ssn" else ""
    note = "" if field in ("email", "phone", "ssn") else f"\rNTE|1||{human}: {v}"
    return (f"MSH|^~\\&|HIS|CLIN|||{digits(r, 12)}||ADT^A04|{digits(r, 9)}|P|2.5\r"
            f"PID|1||{mrn}^^^HOSP^MR||SILVA^ANA^M||1980{digits(r, 4)}|F|||RUA A^^LISBOA^^1000-001^PT||{pid13}"
            f"|||||{r.randint(100, 999)}|{pid19}{note}")


def p_fhir(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    res: dict[str, object] = {"resourceType": "Patient", "id": f"pat-{pick(r, LOWER_AN, 8)}"}
    if field in ("phone", "email"):
        res["telecom"] = [{"system": field, "value": v, "use": "mobile" if field == "phone" else "home"}]
    elif field == "ssn":
        res["identifier"] = [{"system": "http://hl7.org/fhir/sid/us-ssn", "value": v}]
    else:
        res["extension"] = [{"url": f"https://fhir.clinic.example/{field}", "valueString": f"{human}: {v}"}]
    return json.dumps(res, ensure_ascii=False)


def p_dicom(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    tag = {"phone": "(0010,2154) SH", "ssn": "(0010,1000) LO"}.get(field, "(0010,4000) LT")
    return f"(0010,0010) PN [Silva^Ana]  # PatientName\n{tag} [{human} {v}]  # patient contact"


def p_sms(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    return (f"[SMS→clinic] Consulta {r.randint(1, 28)}/12 às {r.randint(8, 18)}h. "
            f"{SENTENCES[lang].format(label=human, value=v)} Resp. SIM/NAO")


def p_mt103(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    tag = ":59:" if field in ("iban", "card") else ":50K:"
    line = f"/{v}" if field == "iban" else f"{human} {v}"
    return f"{{4:\n:20:TRF{digits(r, 10)}\n{tag}{line}\nANA SILVA\nRUA DO OURO 12 LISBOA\n:71A:OUR\n-}}"


def p_camt(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    if field == "iban":
        acct = f"<Acct><Id><IBAN>{v}</IBAN></Id></Acct>"
    else:
        acct = f"<AddtlNtryInf>{human}: {v}</AddtlNtryInf>"
    return (f'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt><Stmt>'
            f"<Id>STMT{digits(r, 8)}</Id>{acct}<Ntry><Amt Ccy=\"EUR\">{r.randint(1, 999)}.00</Amt></Ntry>"
            f"</Stmt></BkToCstmrStmt></Document>")


def p_nacha(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    return (f"622{digits(r, 9)}{v.ljust(17)}{digits(r, 10)}{'ANA SILVA'.ljust(22)}  0{digits(r, 15)}\n"
            f"705{(human + ' ' + v)[:80].ljust(80)}0001{digits(r, 7)}")


def p_webhook_event(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    if r.random() < 0.5:
        return json.dumps({"id": f"evt_{pick(r, ALNUM, 24)}", "object": "event", "type": "customer.updated",
                           "data": {"object": {"id": f"cus_{pick(r, ALNUM, 14)}", field: v,
                                               "metadata": {"label": human}}}}, ensure_ascii=False)
    return json.dumps({"live": "true", "notificationItems": [{"NotificationRequestItem": {
        "eventCode": "AUTHORISATION", "pspReference": digits(r, 16),
        "additionalData": {f"shopper{field.capitalize()}": v}}}]}, ensure_ascii=False)


def p_chargeback(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    return (f"Subject: Chargeback notice {digits(r, 9)}\nDear merchant,\nthe cardholder disputes a payment of "
            f"EUR {r.randint(10, 900)},00.\n{human}: {v}\nPlease respond within 20 days.")


def p_logcat(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    return (f"12-05 10:{r.randint(10, 59)}:{r.randint(10, 59)}.{r.randint(100, 999)}  {r.randint(1000, 9999)}  "
            f"{r.randint(1000, 9999)} I ProfileVM: form submitted {field}={v}")


def p_cdr(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    return (f"record_id,start_time,{field},duration_s,cell_id\n{digits(r, 12)},{ts(r)},{v},{r.randint(1, 900)},"
            f"{r.randint(10000, 99999)}")


def p_hubspot(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    return (f"Record ID,First Name,Last Name,{human},Lifecycle Stage\n{digits(r, 11)},{r.choice(FIRST)},"
            f"{r.choice(LAST)},{v},customer")


def p_idoc(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    return f"E2EDKA1003 {digits(r, 16)}AG  {human[:12].ljust(12)} {v}\nE2EDK02   {digits(r, 20)}"


def p_ussd(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    return (f"{ts(r).replace('T', ' ')} USSD session={digits(r, 9)} code=*{r.randint(100, 999)}# "
            f"input=\"{human} {v}\" state=CONFIRM")


def p_oslog(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    return (f"Thread 3 name:  Dispatch queue: com.bank.profile\nLast Exception Backtrace:\n"
            f"0   CoreFoundation  0x1a2b3c4d5 __exceptionPreprocess + 164\n"
            f"NSInvalidArgumentException: invalid {field} '{v}' ({human})")


def p_prose(r: random.Random, field: str, human: str, v: str, lang: str) -> str:
    return SENTENCES[lang].format(label=human, value=v)


PII: tuple[Carrier, ...] = (p_hl7_pid, p_fhir, p_dicom, p_sms, p_mt103, p_camt, p_nacha, p_webhook_event,
                            p_chargeback, p_logcat, p_cdr, p_hubspot, p_idoc, p_ussd, p_oslog, p_prose)
"""16 carriers for personal data: the value in the field its shape gives it, with the human label beside."""


# ---- carriers: headers, cookies and multiline values --------------------------------------------------------------

def h_curl(r: random.Random, name: str, v: str) -> str:
    return f"curl 'https://api.example.net/v1/accounts' -H '{name}: {v}' --compressed"


def h_fetch(r: random.Random, name: str, v: str) -> str:
    return f'fetch("https://app.example.net/api/me", {{"headers": {{"{name.lower()}": "{v}"}}, "method": "GET"}});'


def h_powershell(r: random.Random, name: str, v: str) -> str:
    return f'Invoke-WebRequest -Uri "https://app.example.net/api/me" -Headers @{{"{name}"="{v}"}}'


def h_okhttp(r: random.Random, name: str, v: str) -> str:
    return f"12-05 09:1{r.randint(0, 9)}:02.{r.randint(100, 999)}  8123  8190 I okhttp.OkHttpClient: {name}: {v}"


def h_oslog(r: random.Random, name: str, v: str) -> str:
    return (f"default 09:12:44.{r.randint(100, 999)} Bank[311:1a2b] [URLSession] request headers: "
            f"{{\"{name}\" = \"{v}\";}}")


def h_jenkins(r: random.Random, name: str, v: str) -> str:
    return f"+ curl -sf -X POST -H '{name}: {v}' https://nexus.example.net/service/rest/v1/components\n"


def h_gha(r: random.Random, name: str, v: str) -> str:
    return f"{ts(r)}.{digits(r, 7)}Z > {name}: {v}"


def h_airflow(r: random.Random, name: str, v: str) -> str:
    return f"[{ts(r).replace('T', ', ')} UTC] {{http.py:174}} DEBUG - Sending headers {{'{name}': '{v}'}}"


def h_har(r: random.Random, name: str, v: str) -> str:
    return json.dumps({"request": {"method": "GET", "url": "https://app.example.net/api/me",
                                   "headers": [{"name": name, "value": v}]}})


def h_cloudtrail(r: random.Random, name: str, v: str) -> str:
    return json.dumps({"eventSource": "apigateway.amazonaws.com", "requestParameters": {"headers": {name: v}}})


HEADERS = (h_curl, h_fetch, h_powershell, h_okhttp, h_oslog, h_jenkins, h_gha, h_airflow, h_har, h_cloudtrail)
"""10 carriers for HTTP headers (name, value)."""


def m_vault(r: random.Random, v: str) -> str:
    return json.dumps({"data": {"private_key": v, "private_key_type": "rsa", "serial_number": "3a:1f"}})


def m_terraform(r: random.Random, v: str) -> str:
    return f'  + resource "tls_private_key" "deploy" {{\n      + private_key_pem = <<-EOT\n{v}\n        EOT\n    }}'


def m_paste(r: random.Random, v: str) -> str:
    return f"Aqui está a chave do servidor, não partilhes:\n{v}\nobrigado"


def m_env(r: random.Random, v: str) -> str:
    return "SSH_PRIVATE_KEY=\"" + v.replace("\n", "\\n") + "\""


def m_cloudtrail(r: random.Random, v: str) -> str:
    return json.dumps({"eventName": "CreateSecret", "requestParameters": {"name": "deploy-key", "secretString": v}})


def m_jenkins(r: random.Random, v: str) -> str:
    return f"[Pipeline] sh\n+ cat /var/lib/jenkins/.ssh/id_deploy\n{v}\n[Pipeline] }}"


def m_gcp_secret(r: random.Random, v: str) -> str:
    return json.dumps({"protoPayload": {"methodName": "AddSecretVersion",
                                        "request": {"payload": {"data": v}}}})


def m_airflow(r: random.Random, v: str) -> str:
    return f"[2026-12-05, 10:00:00 UTC] {{ssh.py:88}} INFO - using key:\n{v}"


def m_crash(r: random.Random, v: str) -> str:
    return f"Incident Identifier: {uuid.UUID(int=r.getrandbits(128))}\nApplication Specific Information:\n{v}"


MULTILINE = (m_vault, m_terraform, m_paste, m_env, m_cloudtrail, m_jenkins, m_gcp_secret, m_airflow, m_crash)
"""9 carriers for PEM keys."""


def m_keyfile(r: random.Random, v: str) -> str:
    return v


def m_gha_line(r: random.Random, v: str) -> str:
    return f"{ts(r)}.{digits(r, 7)}Z   GOOGLE_CREDENTIALS: {json.dumps(json.loads(v))}"


def m_k8s(r: random.Random, v: str) -> str:
    return f"$ kubectl create secret generic gcp-sa --from-literal=key.json='{json.dumps(json.loads(v))}'"


KEY_FILE = (m_keyfile, m_terraform, m_paste, m_env, m_jenkins, m_airflow, m_crash, m_gha_line, m_k8s)
"""9 carriers for a service-account key file (its JSON text; held in a JSON string it would be escaped twice)."""


# ---- values: personal data ----------------------------------------------------------------------------------------

PhonePlan = tuple[str, str, Callable[[random.Random], str], tuple[int, ...]]
PLANS: dict[str, PhonePlan] = {
    "pt": ("351", "", lambda r: r.choice(["91", "92", "93", "96"]) + digits(r, 7), (3, 3, 3)),
    "ro": ("40", "0", lambda r: "7" + r.choice("2345678") + digits(r, 7), (3, 3, 3)),
    "hu": ("36", "06", lambda r: r.choice(["20", "30", "31", "50", "70"]) + digits(r, 7), (2, 3, 4)),
    "fi": ("358", "0", lambda r: r.choice(["40", "41", "44", "45", "50"]) + digits(r, 7), (2, 3, 4)),
    "dk": ("45", "", lambda r: r.choice("2345") + digits(r, 7), (2, 2, 2, 2)),
    "no": ("47", "", lambda r: r.choice("49") + digits(r, 7), (3, 2, 3)),
    "ua": ("380", "0", lambda r: r.choice(["50", "63", "66", "67", "68", "73", "93", "95", "96", "97", "98", "99"])
           + digits(r, 7), (2, 3, 2, 2)),
    "th": ("66", "0", lambda r: r.choice("689") + digits(r, 8), (2, 3, 4)),
    "my": ("60", "0", lambda r: "1" + r.choice("2346789") + digits(r, 7), (2, 3, 4)),
    "ph": ("63", "0", lambda r: "9" + digits(r, 9), (3, 3, 4)),
    "ng": ("234", "0", lambda r: r.choice(["70", "80", "81", "90", "91"]) + digits(r, 8), (3, 3, 4)),
    "ke": ("254", "0", lambda r: r.choice(["7", "1"]) + digits(r, 8), (3, 3, 3)),
    "eg": ("20", "0", lambda r: "1" + r.choice("0125") + digits(r, 8), (2, 4, 4)),
    "sa": ("966", "0", lambda r: "5" + digits(r, 8), (2, 3, 4)),
    "ae": ("971", "0", lambda r: "5" + r.choice("024568") + digits(r, 7), (2, 3, 4)),
    "cl": ("56", "", lambda r: "9" + digits(r, 8), (1, 4, 4)),
    "co": ("57", "", lambda r: "3" + r.choice("0125") + digits(r, 8), (3, 3, 4)),
    "pe": ("51", "", lambda r: "9" + digits(r, 8), (3, 3, 3)),
    "nz": ("64", "0", lambda r: "2" + r.choice("0127") + digits(r, 7), (2, 3, 4)),
    "ie": ("353", "0", lambda r: "8" + r.choice("35679") + digits(r, 7), (2, 3, 4)),
    "at": ("43", "0", lambda r: "6" + r.choice(["64", "50", "60", "76", "99"]) + digits(r, 7), (3, 7)),
    "ch": ("41", "0", lambda r: "7" + r.choice("56789") + digits(r, 7), (2, 3, 2, 2)),
    "be": ("32", "0", lambda r: "4" + r.choice("56789") + digits(r, 7), (3, 2, 2, 2)),
    "sg": ("65", "", lambda r: r.choice("89") + digits(r, 7), (4, 4)),
}
"""Country -> (country code, trunk prefix, a mobile national significant number, its print grouping)."""


def split(nsn: str, sizes: tuple[int, ...]) -> list[str]:
    out, at = [], 0
    for size in sizes:
        out.append(nsn[at:at + size])
        at += size
    return out


def phone(country: str) -> ValueGen:
    def gen(r: random.Random) -> Value:
        if country == "ar":
            area, rest = "11", digits(r, 8)
            styles = {"intl": f"+54 9 {area} {rest[:4]}-{rest[4:]}", "intl_compact": f"+549{area}{rest}",
                      "national": f"011 15-{rest[:4]}-{rest[4:]}", "national_paren": f"(011) 15 {rest[:4]} {rest[4:]}",
                      "intl00": f"0054 9 {area} {rest[:4]} {rest[4:]}", "dash": f"+54-9-{area}-{rest[:4]}-{rest[4:]}"}
        else:
            cc, trunk, nsn_gen, sizes = PLANS[country]
            nsn = nsn_gen(r)
            parts = split(nsn, sizes)
            national = trunk + parts[0]
            styles = {"intl": f"+{cc} {' '.join(parts)}", "intl_compact": f"+{cc}{nsn}",
                      "intl00": f"00{cc} {' '.join(parts)}", "dash": f"+{cc}-{'-'.join(parts)}",
                      "national": " ".join([national, *parts[1:]]), "national_compact": trunk + nsn,
                      "dots": ".".join([national, *parts[1:]]),
                      "national_paren": f"({national}) {' '.join(parts[1:])}" if trunk else f"+{cc} ({parts[0]}) "
                                                                                            f"{' '.join(parts[1:])}"}
        style = r.choice(sorted(styles))
        return same(styles[style], style)
    return gen


def email(r: random.Random) -> Value:
    user = f"{r.choice(ASCII_FIRST)}{r.choice(['.', '_', ''])}{r.choice(LAST).replace('.', '')}"
    dom = r.choice(DOMAINS)
    style = r.choice(["plain", "upper", "plus", "digits", "idn", "url", "json_u", "mailto", "angle"])
    if style == "idn":
        return same(r.choice(IDN).replace("@", f"{r.randint(1, 99)}@", 1), style)
    addr = {"upper": f"{user.upper()}@{dom.upper()}", "plus": f"{user}+{r.choice(['exames', 'fatura', 'ussd'])}@{dom}",
            "digits": f"{user}{r.randint(70, 2005)}@{dom}"}.get(style, f"{user}@{dom}")
    if style == "url":
        return same(addr.replace("@", "%40"), style)
    if style == "json_u":
        return same(addr.replace("@", "\\u0040"), style)
    if style == "mailto":
        return Value(f"mailto:{addr}?subject=consulta", addr, style)
    if style == "angle":
        return Value(f"{r.choice(FIRST)} {r.choice(LAST).title()} <{addr}>", addr, style)
    return same(addr, style)


def email_obfuscated(r: random.Random) -> Value:
    at, dot = r.choice([(" [at] ", " [dot] "), (" (arroba) ", " (ponto) "), (" kukac ", " pont "),
                        (" (at) ", " piste "), (" snabel-a ", " punktum "), (" собака ", " крапка ")])
    host, tld = r.choice(DOMAINS).rsplit(".", 1)
    return same(f"{r.choice(ASCII_FIRST)}.{r.choice(LAST).replace('.', '')}{at}{host}{dot}{tld}", at.strip())


CARD_SCHEMES: dict[str, tuple[Callable[[random.Random], str], int]] = {
    "visa": (lambda r: "4", 16), "mastercard": (lambda r: str(r.randint(51, 55)), 16),
    "mastercard2": (lambda r: str(r.randint(2221, 2720)), 16), "amex": (lambda r: r.choice(["34", "37"]), 15),
    "discover": (lambda r: r.choice(["6011", "65"]), 16), "jcb": (lambda r: str(r.randint(3528, 3589)), 16),
    "diners": (lambda r: "36", 14), "unionpay": (lambda r: "62", 19), "maestro": (lambda r: "6759", 16),
    "mir": (lambda r: str(r.randint(2200, 2204)), 16), "rupay": (lambda r: "6521", 16),
    "elo": (lambda r: "636368", 16), "troy": (lambda r: "9792", 16),
}


def card_number(r: random.Random) -> tuple[str, str]:
    scheme = r.choice(sorted(CARD_SCHEMES))
    prefix_gen, length = CARD_SCHEMES[scheme]
    partial = prefix_gen(r)
    partial += digits(r, length - 1 - len(partial))
    return scheme, partial + luhn_digit(partial)


def card(r: random.Random) -> Value:
    scheme, number = card_number(r)
    sep = r.choice([" ", "-", ".", "_", "", " "])
    shown = group_card(number, sep) if sep else number
    return same(shown, f"{scheme}_{ {' ': 'space', '-': 'dash', '.': 'dot', '_': 'underscore', '': 'compact'}[sep]}")


IBAN_BBAN = {"PT": "21n", "RO": "4a16c", "HU": "24n", "FI": "14n", "DK": "14n", "NO": "11n", "UA": "6n19c",
             "AT": "16n", "CH": "5n12c", "BE": "12n", "IE": "4a14n", "SA": "2n18c", "AE": "3n16n", "EG": "25n",
             "DE": "18n", "NL": "4a10n", "PL": "24n", "SE": "20n", "GB": "4a14n", "TR": "5n1n16c", "BR": "23n1a1c",
             "GR": "7n16c", "HR": "17n", "BG": "4a6n8c", "LT": "16n", "EE": "16n", "IS": "22n", "IL": "19n",
             "QA": "4a21c", "KW": "4a22c", "CY": "8n16c", "MT": "4a5n18c", "LU": "3n13c"}
"""SWIFT IBAN registry BBAN structures (release 99)."""


def iban_number(r: random.Random) -> tuple[str, str]:
    country = r.choice(sorted(IBAN_BBAN))
    b = bban(r, IBAN_BBAN[country])
    return country, country + iban_check(country, b) + b


def iban(r: random.Random) -> Value:
    country, number = iban_number(r)
    style = r.choice(["grouped", "compact", "lower_compact", "lower_grouped", "dash", "prefixed"])
    shown = {"grouped": group(number, 4, " "), "compact": number, "lower_compact": number.lower(),
             "lower_grouped": group(number.lower(), 4, " "), "dash": group(number, 4, "-"),
             "prefixed": "IBAN " + group(number, 4, " ")}[style]
    return Value(shown, shown.removeprefix("IBAN "), f"{country}_{style}")


def ssn(r: random.Random) -> Value:
    area = r.choice([a for a in range(1, 900) if a != 666])
    g, s = r.randint(1, 99), r.randint(1, 9999)
    style = r.choice(["dash", "space", "compact"])
    sep = {"dash": "-", "space": " ", "compact": ""}[style]
    return same(f"{area:03d}{sep}{g:02d}{sep}{s:04d}", style)


# ---- values: secrets ----------------------------------------------------------------------------------------------

def password(r: random.Random) -> Value:
    style = r.choice(["random", "passphrase", "word_digits", "hex"])
    if style == "passphrase":
        words = ["saudade", "pădure", "pálinka", "sauna", "hygge", "fjell", "вишня", "สยาม", "durian", "simba",
                 "bayanihan", "ilish", "anar", "castell"]
        return same("-".join(r.sample(words, 3)) + str(r.randint(10, 99)), style)
    if style == "word_digits":
        return same(r.choice(["Lisboa", "Bucuresti", "Budapest", "Helsinki", "Aarhus", "Bergen", "Kyiv", "Bangkok",
                              "Penang", "Mombasa", "Cebu", "Dhaka", "Tabriz", "Girona"])
                    + r.choice("!#@$%*") + str(r.randint(1000, 99999)), style)
    if style == "hex":
        return same(pick(r, HEX, 24), style)
    return same(pick(r, PW_CHARS, r.randint(10, 22)), style)


def secret_value(r: random.Random) -> Value:
    style = r.choice(["hex32", "hex64", "b64_32", "urlsafe43", "alnum40"])
    raw = r.getrandbits(256).to_bytes(32, "big")
    return same({"hex32": raw[:16].hex(), "hex64": raw.hex(), "b64_32": base64.b64encode(raw).decode(),
                 "urlsafe43": b64url(raw), "alnum40": pick(r, ALNUM, 40)}[style], style)


def gen_uuid(r: random.Random) -> str:
    return str(uuid.UUID(int=r.getrandbits(128), version=4))


AWS_B32 = string.ascii_uppercase + "234567"


def aws_key_id(r: random.Random) -> Value:
    prefix = r.choice(["AKIA", "ASIA"])
    return same(prefix + pick(r, AWS_B32, 16), prefix.lower())


def aws_secret(r: random.Random) -> Value:
    return same(pick(r, B64, 40), "b64_40")


def tok(prefix: str, alphabet: str, n: int, suffix: str = "") -> Callable[[random.Random], str]:
    return lambda r: prefix + pick(r, alphabet, n) + suffix


def either(*gens: tuple[str, Callable[[random.Random], str]]) -> ValueGen:
    def gen(r: random.Random) -> Value:
        style, g = r.choice(gens)
        return same(g(r), style)
    return gen


def slack(r: random.Random) -> str:
    return r.choice([f"xoxb-{digits(r, 12)}-{digits(r, 13)}-{pick(r, ALNUM, 24)}",
                     f"xoxp-{digits(r, 12)}-{digits(r, 12)}-{digits(r, 13)}-{pick(r, HEX, 32)}",
                     f"xapp-1-A{pick(r, UPPER_AN, 10)}-{digits(r, 13)}-{pick(r, HEX, 64)}"])


def pypi(r: random.Random) -> str:
    """A PyPI API token: `pypi-` and a base64url macaroon whose location is `pypi.org` (so every token starts
    `pypi-AgEIcHlwaS5vcmc`), then random caveat and signature bytes."""
    return "pypi-" + b64url(b"\x02\x01\x08pypi.org\x02\x26" + r.getrandbits(8 * 120).to_bytes(120, "big"))


def discord_bot(r: random.Random) -> str:
    snowflake = str(r.randint(10**17, 2 * 10**18))
    return b64url(snowflake.encode()) + "." + pick(r, URLSAFE, 6) + "." + pick(r, URLSAFE, 38)


def elastic_key(r: random.Random) -> str:
    return base64.b64encode(f"{pick(r, URLSAFE, 20)}:{pick(r, URLSAFE, 22)}".encode()).decode()


def adyen(r: random.Random) -> str:
    return ("AQE" + pick(r, B64, 57) + "==-" + pick(r, B64, 43) + "=-" + pick(r, ALNUM, 4) + pick(r, "*$#!", 1)
            + pick(r, ALNUM, 9))


def azure_storage(r: random.Random) -> Value:
    """A storage account key (64 random bytes, base64: 88 characters) in a connection string, or a SAS `sig=`
    (an HMAC-SHA256, base64 then percent-encoded) in a blob URL: Azure Storage docs."""
    if r.random() < 0.6:
        key = base64.b64encode(r.getrandbits(512).to_bytes(64, "big")).decode()
        return Value(f"DefaultEndpointsProtocol=https;AccountName=st{pick(r, LOWER_AN, 10)};AccountKey={key};"
                     "EndpointSuffix=core.windows.net", key, "account_key")
    sig = base64.b64encode(r.getrandbits(256).to_bytes(32, "big")).decode()
    sig = sig.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    return Value(f"https://st{pick(r, LOWER_AN, 10)}.blob.core.windows.net/exports/cdr.csv?sv=2022-11-02&ss=b&srt=o"
                 f"&sp=r&se=2026-12-31T00:00:00Z&spr=https&sig={sig}", sig, "sas_sig")


BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()

TOKENS: dict[str, tuple[str, ValueGen]] = {
    "github": ("GITHUB_TOKEN", either(("ghp", lambda r: crc_token(r, "ghp_")), ("gho", lambda r: crc_token(r, "gho_")),
                                      ("ghs", lambda r: crc_token(r, "ghs_")),
                                      ("fine", lambda r: f"github_pat_{pick(r, UPPER_AN, 22)}_{pick(r, ALNUM, 59)}"))),
    "gitlab": ("GITLAB_TOKEN", either(("glpat", tok("glpat-", URLSAFE, 20)), ("gldt", tok("gldt-", URLSAFE, 20)),
                                      ("glrt", tok("glrt-", URLSAFE, 20)))),
    "slack_token": ("SLACK_BOT_TOKEN", either(("xox", slack))),
    "stripe": ("STRIPE_SECRET_KEY", either(("sk_live", tok("sk_live_", ALNUM, 99)),
                                           ("rk_live", tok("rk_live_", ALNUM, 99)),
                                           ("whsec", tok("whsec_", ALNUM, 32)),
                                           ("sk_test", tok("sk_test_", ALNUM, 24)))),
    "openai": ("OPENAI_API_KEY", either(("proj", tok("sk-proj-", URLSAFE, 156)),
                                        ("svcacct", tok("sk-svcacct-", URLSAFE, 156)),
                                        ("legacy", lambda r: f"sk-{pick(r, ALNUM, 20)}T3BlbkFJ{pick(r, ALNUM, 20)}"))),
    "anthropic": ("ANTHROPIC_API_KEY", either(("api03", tok("sk-ant-api03-", URLSAFE, 93, "AA")),
                                              ("admin01", tok("sk-ant-admin01-", URLSAFE, 93, "AA")))),
    "google": ("GOOGLE_API_KEY", either(("aiza", tok("AIza", URLSAFE, 35)),
                                        ("oauth_secret", tok("GOCSPX-", URLSAFE, 28)))),
    "twilio": ("TWILIO_API_KEY", either(("sk", tok("SK", HEX, 32)), ("auth_token", tok("", HEX, 32)))),
    "sendgrid": ("SENDGRID_API_KEY", either(("sg", lambda r: f"SG.{pick(r, URLSAFE, 22)}.{pick(r, URLSAFE, 43)}"))),
    "npm": ("NPM_TOKEN", either(("npm", lambda r: crc_token(r, "npm_")))),
    "pypi": ("PYPI_API_TOKEN", either(("macaroon", pypi))),
    "huggingface": ("HF_TOKEN", either(("hf", tok("hf_", string.ascii_letters, 34)),
                                       ("api_org", tok("api_org_", string.ascii_letters, 34)))),
    "datadog": ("DD_API_KEY", either(("api", tok("", HEX, 32)), ("app", tok("", HEX, 40)))),
    "shopify": ("SHOPIFY_ACCESS_TOKEN", either(("shpat", tok("shpat_", HEX, 32)), ("shpss", tok("shpss_", HEX, 32)),
                                               ("shpca", tok("shpca_", HEX, 32)), ("shppa", tok("shppa_", HEX, 32)))),
    "azure_storage": ("AZURE_STORAGE_CONNECTION_STRING", azure_storage),
    "adyen": ("ADYEN_API_KEY", either(("aqe", adyen))),
    "plaid": ("PLAID_SECRET", either(("secret", tok("", HEX, 30)),
                                     ("access", lambda r: f"access-production-{gen_uuid(r)}"))),
    "square": ("SQUARE_ACCESS_TOKEN", either(("eaaa", tok("EAAA", URLSAFE, 60)),
                                             ("sq0csp", tok("sq0csp-", URLSAFE, 43)),
                                             ("sq0atp", tok("sq0atp-", URLSAFE, 22)))),
    "paypal": ("BRAINTREE_ACCESS_TOKEN", either(("braintree", lambda r: f"access_token$production$"
                                                                        f"{pick(r, LOWER_AN, 16)}${pick(r, HEX, 32)}"),
                                                ("client_secret", tok("E", URLSAFE, 79)))),
    "okta": ("OKTA_API_TOKEN", either(("ssws", tok("00", URLSAFE, 40)))),
    "auth0": ("AUTH0_CLIENT_SECRET", either(("client_secret", tok("", URLSAFE, 64)))),
    "twitch": ("TWITCH_OAUTH", either(("oauth", tok("oauth:", LOWER_AN, 30)),
                                      ("client_secret", tok("", LOWER_AN, 30)))),
    "telegram": ("TELEGRAM_BOT_TOKEN", either(("bot", lambda r: f"{r.randint(10**7, 10**10 - 1)}:AA"
                                                               f"{pick(r, URLSAFE, 33)}"))),
    "discord": ("DISCORD_BOT_TOKEN", either(("bot", discord_bot))),
    "contentful": ("CONTENTFUL_MANAGEMENT_TOKEN", either(("cfpat", tok("CFPAT-", URLSAFE, 43)))),
    "algolia": ("ALGOLIA_ADMIN_API_KEY", either(("admin", tok("", HEX, 32)))),
    "segment": ("SEGMENT_WRITE_KEY", either(("write_key", tok("", ALNUM, 32)))),
    "mixpanel": ("MIXPANEL_API_SECRET", either(("secret", tok("", HEX, 32)))),
    "launchdarkly": ("LAUNCHDARKLY_SDK_KEY", either(("sdk", lambda r: "sdk-" + gen_uuid(r)),
                                                    ("api", lambda r: "api-" + gen_uuid(r)),
                                                    ("mob", lambda r: "mob-" + gen_uuid(r)))),
    "snyk": ("SNYK_TOKEN", either(("uuid", gen_uuid))),
    "sonarqube": ("SONAR_TOKEN", either(("sqp", tok("sqp_", HEX, 40)), ("squ", tok("squ_", HEX, 40)),
                                        ("sqa", tok("sqa_", HEX, 40)))),
    "circleci": ("CIRCLE_TOKEN", either(("ccipat", lambda r: f"CCIPAT_{pick(r, ALNUM, 22)}_{pick(r, HEX, 40)}"),
                                        ("legacy", tok("", HEX, 40)))),
    "buildkite": ("BUILDKITE_API_TOKEN", either(("bkua", tok("bkua_", HEX, 40)))),
    "terraform_cloud": ("TFE_TOKEN", either(("atlasv1", lambda r: f"{pick(r, ALNUM, 14)}.atlasv1."
                                                                  f"{pick(r, ALNUM, 67)}"))),
    "vault": ("VAULT_TOKEN", either(("hvs", tok("hvs.", URLSAFE, 91)), ("hvb", tok("hvb.", URLSAFE, 134)),
                                    ("hvr", tok("hvr.", URLSAFE, 24)))),
    "age": ("AGE_SECRET_KEY", either(("bech32", tok("AGE-SECRET-KEY-1", BECH32, 58)))),
    "tailscale": ("TS_AUTHKEY", either(("auth", lambda r: f"tskey-auth-k{pick(r, ALNUM, 10)}CNTRL-"
                                                          f"{pick(r, ALNUM, 33)}"),
                                       ("api", lambda r: f"tskey-api-k{pick(r, ALNUM, 10)}CNTRL-"
                                                         f"{pick(r, ALNUM, 33)}"))),
    "linode": ("LINODE_TOKEN", either(("hex64", tok("", HEX, 64)))),
    "scaleway": ("SCW_SECRET_KEY", either(("secret_uuid", gen_uuid), ("access", tok("SCW", UPPER_AN, 17)))),
    "hetzner": ("HCLOUD_TOKEN", either(("alnum64", tok("", ALNUM, 64)))),
    "confluent": ("CONFLUENT_API_SECRET", either(("secret", tok("", B64, 64)), ("key", tok("", UPPER_AN, 16)))),
    "elastic": ("ELASTIC_API_KEY", either(("encoded", elastic_key))),
}
"""Provider kind -> (its env name, a value generator): formats in the module docstring."""

HUMAN_KEY = {"password": "password", "secret": "secret", "aws_key_id": "key", "aws_secret": "secret",
             "connection_string": "conn", "webhook": "webhook"}


# ---- values: connection strings, webhooks, auth headers, cookies, keys ---------------------------------------------

def conn_password(r: random.Random) -> str:
    return pick(r, ALNUM + "!*-_~", r.randint(12, 24))


def connection(r: random.Random) -> Value:
    pw, user, host = conn_password(r), r.choice(ASCII_FIRST), f"db{r.randint(1, 9)}.internal.example"
    forms = {
        "postgres": f"postgresql://{user}:{pw}@{host}:5432/clinic?sslmode=require",
        "mysql": f"mysql://{user}:{pw}@{host}:3306/payments",
        "mongo_env": f"MONGODB_URI=mongodb+srv://{user}:{pw}@cluster0.{pick(r, LOWER_AN, 5)}.mongodb.net/app",
        "redis": f"redis://:{pw}@{host}:6379/0",
        "amqp": f"amqps://{user}:{pw}@mq.example.net/vhost",
        "jdbc_props": f"spring.datasource.url=jdbc:sqlserver://{host}:1433;databaseName=sap;user={user};password={pw};"
                      "encrypt=true",
        "odbc": f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:{host},1433;Uid={user};Pwd={pw};Encrypt=yes;",
        "jaas": f"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                f"username=\"{pick(r, UPPER_AN, 16)}\" password=\"{pw}\";",
        "airflow": f"AIRFLOW_CONN_WAREHOUSE=postgresql://{user}:{pw}@{host}:5432/dwh",
    }
    style = r.choice(sorted(forms))
    return Value(forms[style], pw, style)


def webhook(r: random.Random) -> Value:
    forms = {
        "slack": ("https://hooks.slack.com/services/",
                  f"T{pick(r, UPPER_AN, 10)}/B{pick(r, UPPER_AN, 10)}/{pick(r, ALNUM, 24)}"),
        "discord": ("https://discord.com/api/webhooks/", f"{digits(r, 19)}/{pick(r, URLSAFE, 68)}"),
        "teams": ("https://contoso.webhook.office.com/webhookb2/",
                  f"{gen_uuid(r)}@{gen_uuid(r)}/IncomingWebhook/{pick(r, HEX, 32)}/{gen_uuid(r)}"),
        "gchat": ("https://chat.googleapis.com/v1/spaces/",
                  f"AAAA{pick(r, URLSAFE, 7)}/messages?key=AIza{pick(r, URLSAFE, 35)}&token={pick(r, URLSAFE, 43)}"),
        "zapier": ("https://hooks.zapier.com/hooks/catch/", f"{digits(r, 7)}/{pick(r, LOWER_AN, 6)}/"),
    }
    style = r.choice(sorted(forms))
    head, tail = forms[style]
    if style == "zapier":
        tail = f"{digits(r, 8)}/{pick(r, LOWER_AN, 7)}/"
    return Value(head + tail, tail, style)


def http_auth(r: random.Random) -> tuple[str, Value]:
    """(header name, value): the secret is the credential."""
    style = r.choice(["basic", "bearer", "token", "ssws", "digest", "sigv4", "hmac", "apikey"])
    if style == "basic":
        cred = base64.b64encode(f"{r.choice(ASCII_FIRST)}:{conn_password(r)}".encode()).decode()
        return "Authorization", Value(f"Basic {cred}", cred, style)
    if style in ("bearer", "token", "ssws"):
        cred = pick(r, URLSAFE, 40) if style != "ssws" else "00" + pick(r, URLSAFE, 40)
        return "Authorization", Value(f"{style.capitalize() if style != 'ssws' else 'SSWS'} {cred}", cred, style)
    if style == "digest":
        resp = pick(r, HEX, 32)
        return "Authorization", Value(f'Digest username="{r.choice(ASCII_FIRST)}", realm="api", nonce="'
                                      f'{pick(r, HEX, 16)}", uri="/v1/x", response="{resp}"', resp, style)
    if style == "sigv4":
        sig = pick(r, HEX, 64)
        return "Authorization", Value(f"AWS4-HMAC-SHA256 Credential=AKIA{pick(r, AWS_B32, 16)}/20261205/eu-west-1/"
                                      f"s3/aws4_request, SignedHeaders=host;x-amz-date, Signature={sig}", sig, style)
    if style == "hmac":
        sig = base64.b64encode(r.getrandbits(256).to_bytes(32, "big")).decode()
        return "Authorization", Value(f'hmac username="{r.choice(ASCII_FIRST)}", algorithm="hmac-sha256", '
                                      f'headers="date request-line", signature="{sig}"', sig, style)
    cred = elastic_key(r)
    return "Authorization", Value(f"ApiKey {cred}", cred, style)


def cookie(r: random.Random) -> tuple[str, Value]:
    name = r.choice(["JSESSIONID", "sessionid", "connect.sid", "_session_id", "PHPSESSID", "__Secure-next-auth"
                     ".session-token", "ASP.NET_SessionId", "laravel_session"])
    val = pick(r, ALNUM, 32) if name != "connect.sid" else "s%3A" + pick(r, URLSAFE, 32) + "." + pick(r, ALNUM, 43)
    if r.random() < 0.5:
        return "Cookie", Value(f"{name}={val}; lang=pt-PT; theme=dark", val, "cookie")
    return "Set-Cookie", Value(f"{name}={val}; Path=/; HttpOnly; Secure; SameSite=Lax", val, "set_cookie")


def armour(label: str, der_bytes: bytes) -> tuple[str, str]:
    body = base64.b64encode(der_bytes).decode()
    lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----", lines


def pem(r: random.Random) -> Value:
    style = r.choice(["pkcs8_ed25519", "sec1_ec", "pkcs8_ec", "rsa_pkcs1", "openssh"])
    if style == "openssh":
        seed = r.getrandbits(256).to_bytes(32, "big")
        key = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
        public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, r.getrandbits(32).to_bytes(4, "big"), b"deploy@ci")
        body = base64.b64encode(blob).decode()
        lines = "\n".join(body[i:i + 70] for i in range(0, len(body), 70))
        return Value(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{lines}\n-----END OPENSSH PRIVATE KEY-----", lines, style)
    if style == "rsa_pkcs1":
        ints = [0] + [r.getrandbits(bits) | (1 << (bits - 1)) for bits in (2048, 17, 2048, 1024, 1024, 1024, 1024,
                                                                            1024)]
        text, lines = armour("RSA PRIVATE KEY", der_seq(*(der_int(n) for n in ints)))
        return Value(text, lines, style)
    if style == "pkcs8_ed25519":
        key = ed25519.Ed25519PrivateKey.from_private_bytes(r.getrandbits(256).to_bytes(32, "big"))
        der_bytes = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption())
        text, lines = armour("PRIVATE KEY", der_bytes)
        return Value(text, lines, style)
    eck = ec.derive_private_key(r.getrandbits(255) + 1, ec.SECP256R1())
    fmt = serialization.PrivateFormat.TraditionalOpenSSL if style == "sec1_ec" else serialization.PrivateFormat.PKCS8
    der_bytes = eck.private_bytes(serialization.Encoding.DER, fmt, serialization.NoEncryption())
    text, lines = armour("EC PRIVATE KEY" if style == "sec1_ec" else "PRIVATE KEY", der_bytes)
    return Value(text, lines, style)


def gcp_key_file(r: random.Random) -> tuple[dict[str, str], str]:
    """A service-account key file (as `gcloud iam service-accounts keys create` writes it) and its key body."""
    eck = ec.derive_private_key(r.getrandbits(255) + 1, ec.SECP256R1())
    der_bytes = eck.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption())
    text, lines = armour("PRIVATE KEY", der_bytes)
    project = f"{r.choice(['clinica', 'banco', 'telco', 'saas'])}-{pick(r, LOWER_AN, 6)}"
    return {"type": "service_account", "project_id": project, "private_key_id": pick(r, HEX, 40),
            "private_key": text + "\n", "client_email": f"etl@{project}.iam.gserviceaccount.com",
            "client_id": digits(r, 21), "token_uri": "https://oauth2.googleapis.com/token"}, lines


def jwt(r: random.Random) -> Value:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    payload = b64url(json.dumps({"sub": gen_uuid(r), "iss": r.choice(["https://auth.clinica.pt", "okta", "auth0"]),
                                 "exp": 1796000000 + r.randint(0, 10**7), "scope": "read write"},
                                separators=(",", ":")).encode())
    sig = b64url(hmac.new(r.getrandbits(256).to_bytes(32, "big"), f"{header}.{payload}".encode(),
                          hashlib.sha256).digest())
    return same(f"{header}.{payload}.{sig}", "hs256")


# ---- disguises ----------------------------------------------------------------------------------------------------

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def insert(r: random.Random, text: str, chars: str, n: int) -> str:
    out = list(text)
    for _ in range(n):
        out.insert(r.randint(1, len(out) - 1), r.choice(chars))
    return "".join(out)


def disguised(r: random.Random) -> Value:
    base_kind = r.choice(["github", "stripe", "aws_key_id", "email", "card", "iban", "openai", "slack_token"])
    if base_kind == "aws_key_id":
        base = aws_key_id(r).shown
    elif base_kind == "email":
        base = f"{r.choice(ASCII_FIRST)}.{r.choice(LAST).replace('.', '')}@{r.choice(DOMAINS)}"
    elif base_kind == "card":
        base = card_number(r)[1]
    elif base_kind == "iban":
        base = iban_number(r)[1]
    else:
        base = TOKENS[base_kind][1](r).shown
    how = r.choice(["zero_width", "fullwidth", "bidi", "soft_hyphen", "nbsp"])
    if how == "zero_width":
        shown = insert(r, base, ZERO_WIDTH, r.randint(1, 3))
    elif how == "fullwidth":
        shown = fullwidth(base)
    elif how == "bidi":
        shown = r.choice("\u2066\u202a\u202d") + insert(r, base, BIDI, 1) + "\u2069"
    elif how == "soft_hyphen":
        shown = insert(r, base, "\u00ad", r.randint(1, 3))
    else:
        shown = group(base, 4, "\u00a0")
    return same(shown, f"{base_kind}_{how}")


# ---- cases --------------------------------------------------------------------------------------------------------

def is_json_text(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def carry(r: random.Random, text: str, secret: str, i: int) -> tuple[str, bool]:
    """The text as a store holds it: message text, a JSON document as such when the text is one, or inside a JSON
    tool-call argument (only when the secret stays findable as written or JSON-escaped once)."""
    if i % 2 == 0 and is_json_text(text):
        return text, True
    if i % 3 == 1:
        wrapped = json.dumps({"tool": r.choice(["lookup_patient", "create_transfer", "search_logs"]),
                              "input": text}, ensure_ascii=r.random() < 0.5)
        if secret in wrapped or json.dumps(secret)[1:-1] in wrapped:
            return wrapped, True
    return text, False


def labelled_cases(kind: str, env: str, human_key: str, gen: ValueGen, r: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        lang = LANGS[(i + r.randint(0, 13)) % len(LANGS)]
        carrier = LABELLED[i % len(LABELLED)]
        v = gen(r)
        human = f"{WORDS[human_key][lang]} {kind.replace('_', ' ').title()}" if human_key in ("key", "token") \
            else WORDS[human_key][lang]
        text = carrier(r, env, human, v.shown, lang)
        carried, is_json = carry(r, text, v.secret, i)
        yield Case(kind, v.secret, text, carried, f"{carrier.__name__[2:]}/{v.style}", is_json)


def pii_cases(kind: str, field: str, gen: ValueGen, r: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        lang = LANGS[(i + r.randint(0, 13)) % len(LANGS)]
        carrier = PII[i % len(PII)]
        v = gen(r)
        text = carrier(r, field, WORDS[field][lang], v.shown, lang)
        carried, is_json = carry(r, text, v.secret, i)
        yield Case(kind, v.secret, text, carried, f"{carrier.__name__[2:]}/{v.style}", is_json)


def header_cases(kind: str, gen: Callable[[random.Random], tuple[str, Value]], r: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        carrier = HEADERS[i % len(HEADERS)]
        name, v = gen(r)
        text = carrier(r, name, v.shown)
        carried, is_json = carry(r, text, v.secret, i)
        yield Case(kind, v.secret, text, carried, f"{carrier.__name__[2:]}/{v.style}", is_json)


def multiline_cases(kind: str, r: random.Random) -> Iterator[Case]:
    carriers = MULTILINE if kind == "pem" else KEY_FILE
    for i in range(PER_KIND):
        carrier = carriers[i % len(carriers)]
        if kind == "pem":
            v = pem(r)
        else:
            keyfile, lines = gcp_key_file(r)
            v = Value(json.dumps(keyfile, indent=2), lines, "keyfile")
        text = carrier(r, v.shown)
        carried, is_json = carry(r, text, v.secret, i)
        yield Case(kind, v.secret, text, carried, f"{carrier.__name__[2:]}/{v.style}", is_json)


def generate() -> Iterator[Case]:
    """Every planted value, in a fixed order from a fixed seed: 104 of each kind."""
    r = random.Random(SEED)
    yield from pii_cases("email", "email", email, r)
    yield from pii_cases("email_obfuscated", "email", email_obfuscated, r)
    for country in sorted([*PLANS, "ar"]):
        yield from pii_cases(f"phone_{country}", "phone", phone(country), r)
    yield from pii_cases("card", "card", card, r)
    yield from pii_cases("iban", "iban", iban, r)
    yield from pii_cases("ssn", "ssn", ssn, r)
    yield from labelled_cases("password", "DB_PASSWORD", "password", password, r)
    yield from labelled_cases("secret", "CLIENT_SECRET", "secret", secret_value, r)
    yield from labelled_cases("aws_key_id", "AWS_ACCESS_KEY_ID", "key", aws_key_id, r)
    yield from labelled_cases("aws_secret", "AWS_SECRET_ACCESS_KEY", "secret", aws_secret, r)
    yield from labelled_cases("connection_string", "DATABASE_URL", "conn", connection, r)
    yield from labelled_cases("webhook", "WEBHOOK_URL", "webhook", webhook, r)
    yield from labelled_cases("jwt", "ID_TOKEN", "token", jwt, r)
    yield from labelled_cases("disguised", "API_TOKEN", "token", disguised, r)
    for kind, (env, gen) in TOKENS.items():
        yield from labelled_cases(kind, env, "key", gen, r)
    yield from header_cases("http_auth", http_auth, r)
    yield from header_cases("cookie", cookie, r)
    yield from multiline_cases("pem", r)
    yield from multiline_cases("gcp_service_account", r)


# ---- near misses --------------------------------------------------------------------------------------------------

NegGen = Callable[[random.Random], str]


def bad_luhn(r: random.Random) -> str:
    _, number = card_number(r)
    wrong = str((int(number[-1]) + r.randint(1, 9)) % 10)
    return f"ref {group_card(number[:-1] + wrong, ' ')} (ordem de compra)"


def bad_iban(r: random.Random) -> str:
    _, number = iban_number(r)
    check = int(number[2:4])
    bad = f"{(check + r.randint(1, 90)) % 97 + 2:02d}"
    if bad == number[2:4]:
        bad = f"{(check + 1) % 97 + 2:02d}"
    return f"<Ref>{number[:2]}{bad}{number[4:]}</Ref> rejected: invalid checksum"


def imei(r: random.Random) -> str:
    partial = r.choice(["35", "86", "01", "99"]) + digits(r, 12)
    return f"12-05 10:11:12.123  1200  1250 I TelephonyMgr: deviceId={partial}{luhn_digit(partial)} slot=0"


def iccid(r: random.Random) -> str:
    partial = "89" + r.choice(["351", "40", "36", "358"]) + digits(r, 13)
    return f"SIM swap ok iccid={partial}{luhn_digit(partial)} profile=esim"


NEGATIVES: dict[str, NegGen] = {
    "hl7_control_id": lambda r: f"MSH|^~\\&|LAB|HOSP|||20261205{digits(r, 6)}||ORU^R01|{digits(r, 10)}|P|2.5.1",
    "fhir_id": lambda r: json.dumps({"resourceType": "Observation", "id": gen_uuid(r),
                                     "subject": {"reference": f"Patient/{pick(r, LOWER_AN, 16)}"}}),
    "swift_bic": lambda r: f":57A:{pick(r, string.ascii_uppercase, 4)}{r.choice(['PT', 'RO', 'HU', 'FI'])}"
                           f"{pick(r, UPPER_AN, 2)}XXX",
    "uetr": lambda r: f"{{3:{{121:{gen_uuid(r)}}}}}",
    "mt_reference": lambda r: f":20:{pick(r, UPPER_AN, 16)}\n:21:NONREF",
    "bad_luhn": bad_luhn,
    "bad_iban": bad_iban,
    "imei": imei,
    "iccid": iccid,
    "msisdn_no_context": lambda r: f"batch {r.choice(['351', '40', '36'])}{digits(r, 9)} rows={r.randint(1, 999)}",
    "version_build": lambda r: f"app v{r.randint(1, 9)}.{r.randint(0, 40)}.{r.randint(0, 99)} "
                               f"(build {digits(r, 8)}) Android 14 API 34",
    "git_sha": lambda r: f"HEAD is now at {pick(r, HEX, 40)} Merge pull request #{r.randint(1, 9999)}",
    "oci_digest": lambda r: f"image: ghcr.io/acme/api@sha256:{pick(r, HEX, 64)}",
    "arn": lambda r: f"arn:aws:iam::{digits(r, 12)}:role/{r.choice(['etl', 'lambda-sync', 'ci'])}-role",
    "trace_ids": lambda r: f"traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01 x-request-id: {gen_uuid(r)}",
    "timestamp_amount": lambda r: f"{ts(r)}.{digits(r, 3)}Z amount=EUR {r.randint(1, 99999)}.{digits(r, 2)} "
                                  f"fee={r.randint(0, 99)}.{digits(r, 2)}",
    "placeholder_masked": lambda r: r.choice([f"password=******** card=**** **** **** {digits(r, 4)}",
                                              "DB_PASSWORD=<your-password> API_KEY=${API_KEY}",
                                              f"iban: PT50 **** **** **** {digits(r, 4)} 5 token=[REDACTED]",
                                              "secret: changeme-placeholder client_secret={{ secrets.CLIENT }}"]),
    "public_key": lambda r: r.choice([f"pk_live_{pick(r, ALNUM, 24)}",
                                      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + pick(r, B64, 43) + " ci@build",
                                      f"publishableKey: pk_test_{pick(r, ALNUM, 24)}",
                                      f"adyen clientKey=live_{pick(r, UPPER_AN, 32)}"]),
    "b64_plain_text": lambda r: "payload=" + base64.b64encode(
        r.choice(["Consulta marcada para segunda-feira", "Programare confirmată pentru luni",
                  "Időpont visszaigazolva", "Ajanvaraus vahvistettu", "Miadi imethibitishwa kesho",
                  "Kumpirmado ang appointment bukas"]).encode()).decode(),
}
"""Near-miss sort -> a generator of a text that must give no finding."""


def generate_negatives() -> Iterator[tuple[str, str]]:
    """(sort, text) near misses: 20 of each sort, fixed seed."""
    r = random.Random(SEED + 1)
    for sort, gen in NEGATIVES.items():
        for _ in range(NEGATIVES_PER_SORT):
            yield sort, gen(r)
