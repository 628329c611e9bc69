"""The twenty-ninth blind redaction corpus: infrastructure and cloud operations, what an SRE/DevOps agent's traces
hold. Written from the formats' public specifications by someone who read neither the detection rules nor the
other corpora (only the twenty-first's interface).

Carriers (the `form` head): terminal transcripts and logs -- `kubectl exec`/`logs`/`describe`, `helm install` NOTES,
Terraform errors and `terraform output`, systemd journal and RFC 5424 syslog lines, `ansible-playbook -vvv` and
`ansible-vault view`, SSH sessions through a bastion, `aws logs tail`, `gcloud logging read` YAML, Alertmanager
mails, ChatOps threads, the agent's own messages to users (28 languages, the frame and the labels in the user's
language), `nginx -T`, `haproxy.cfg`, `vault kv get`, `docker exec env`, GitHub Actions logs and incident
timelines; and, JSON carried (`is_json`, about a third), `docker inspect`, CloudTrail records, CloudWatch
`filter-log-events`, Stackdriver/Cloud Logging entries, `terraform.tfstate`, PagerDuty Events v2 and Opsgenie alert
payloads, Kubernetes Event objects, Ansible's json callback, Vault KV v2 API responses, MCP `tools/call` results,
SSM `list-command-invocations --details` and Fluent Bit records.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN registry's
BBAN structures (MOD 97-10; national check digits left random); SSNs, the SSA's rules (area not 000/666/9xx, group
not 00, serial not 0000); phones, the national numbering plans (NANP geographic NPAs with N11 and 555 avoided,
Ofcom 07xxx mobiles and 01/02 geographic numbers outside the drama ranges, ARCEP 01-07 ten-digit numbers, BNetzA
015x/016x/017x mobiles and area codes, TRAI ten-digit mobiles starting 6-9) with each country's context words;
AWS, IAM's AKIA/ASIA key ids (16 base32 characters) with 40-character secrets and STS session tokens as the CLI
prints them (their `IQoJb3JpZ2luX2Vj`/`FwoGZXIvYXdz` base64 openings, URL-encoded in presigned URLs); webhooks as
Slack, Discord, Teams, Power Automate, Google Chat, Mattermost, Zapier and Rocket.Chat document them (the secret is
the token segment or `sig`/`token` value only); Stripe `whsec_` (dashboard: 32 base62, `stripe listen`: 64 hex);
connection strings, RFC 3986 URIs (PostgreSQL, MySQL, MongoDB SRV, Redis, AMQP, Elasticsearch), Azure Storage and
Service Bus/Event Hubs, ADO.NET, JDBC, ODBC and Kafka JAAS (the secret is the password or key only); JWT (RFC
7519/7515) as Kubernetes service-account, Entra ID, GitHub OIDC, Argo CD and Keycloak issue them; HTTP Basic (RFC
7617), Bearer (RFC 6750), Keystone Fernet tokens and `~/.docker/config.json` `auth`; PEM (RFC 7468) PKCS#8
Ed25519, SEC1 P-256, PKCS#8 RSA-2048-shaped (a well-formed DER RSAPrivateKey of random integers, as GCP
service-account keys hold it) and `openssh-key-v1` Ed25519 keys; HashiCorp Vault `hvs.`/`hvb.`/`s.` tokens and
Shamir unseal/recovery keys (33 bytes, base64 or hex); GCP `ya29.` access tokens; GitHub `ghp_`/`gho_`/`ghs_`/
`ghu_` (CRC32 checksum) and `github_pat_`; GitLab `glpat-`/`glrt-`, Docker Hub `dckr_pat_`, npm `npm_` (CRC32),
PyPI `pypi-AgEIcHlwaS5vcmc` macaroons; Slack `xoxb-`/`xoxp-`/`xapp-`; New Relic `NRAK-`, Grafana `glsa_`, Sentry
`sntryu_`, DigitalOcean `dop_v1_`, Terraform Cloud `.atlasv1.` and Doppler `dp.st.` tokens; TOTP seeds (RFC 4226
/ 6238 base32, Google's otpauth Key URI format); recovery codes (GitHub, GitLab, Google backup codes, 1Password's
`A3-` Secret Key); national ids (outside the target): Spanish DNI/NIE (mod 23 letter), Brazilian CPF (two mod 11
digits), Polish PESEL (weights 1-3-7-9), Dutch BSN (11-proof), Indian Aadhaar (Verhoeff), Turkish TC Kimlik (its two
digits), French NIR (97 - n mod 97 key).

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential, a PEM key's base64 body -- the armour lines name a format and
stay). Kubernetes Secret `data:` values (and kubeconfig `client-key-data`, `.dockerconfigjson`) are base64 of the
secret: base64 is an encoding, not a protection, so the base64 string as the text holds it is the secret
(`k8s_secret_b64`); `stringData:` values are plain and belong to their own kinds. Output that also holds a second
credential (an STS response's session token beside its secret key) keeps it as the tool prints it; the case holds
one secret. Near misses are what operations traces hold that is neither secret nor personal: object uids and
resource versions, image digests, pod names, ARNs and resource ids, AWS request ids (`x-amz-id-2` included), trace
ids, SSH host-key fingerprints and public keys, public certificates and their fingerprints, lock-file hashes,
ciphertext made to be committed (ansible-vault, SOPS, SealedSecrets), references to secrets by name, Terraform's
`(sensitive value)` markers, masked values, placeholders with RFC 2606 domains, the providers' documented example
keys, versions, timestamps, private addresses, resource quantities, businesses' published toll-free lines,
Luhn-invalid numbers, ticket and tracking numbers, and credential field names without values.
"""

from __future__ import annotations

import base64
import datetime
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import quote

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.x509.oid import NameOID

from benchmarks.corpus_formats import (
    b64url,
    bban,
    crc_token,
    der,
    der_int,
    der_seq,
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
    ssh_string,
)

SEED = 29
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "pl_pesel", "nl_bsn", "in_aadhaar", "tr_tckn", "fr_nir"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
K8S_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"
"""The alphabet Kubernetes draws generated name suffixes from (apimachinery util/rand)."""


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


# ---- shared pieces --------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _pretty(obj: object) -> str:
    """JSON as the AWS CLI and kubectl print it (indented)."""
    return json.dumps(obj, indent=4, ensure_ascii=False)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    return (f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z")


def _epoch(rng: random.Random) -> int:
    return rng.randint(1_767_225_600, 1_798_761_599)


def _syslog_ts(rng: random.Random) -> str:
    month = rng.choice(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"])
    return f"{month} {rng.randint(1, 28):2d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


def _ns(rng: random.Random) -> str:
    return rng.choice(["prod", "payments", "platform", "observability", "default", "staging", "data", "edge"])


def _app(rng: random.Random) -> str:
    return rng.choice(["api", "checkout", "billing-worker", "gateway", "ledger", "notifier", "search", "auth"])


def _pod(rng: random.Random) -> str:
    return f"{_app(rng)}-{pick(rng, K8S_SUFFIX, 10)}-{pick(rng, K8S_SUFFIX, 5)}"


def _host(rng: random.Random) -> str:
    return rng.choice([f"ip-10-0-{rng.randint(0, 255)}-{rng.randint(1, 254)}.ec2.internal",
                       f"gke-prod-pool-1-{pick(rng, HEX, 8)}-{pick(rng, LOWER, 4)}",
                       f"aks-nodepool1-{digits(rng, 8)}-vmss00000{rng.randint(0, 9)}",
                       f"bastion-{rng.randint(1, 3):02d}", f"db-{rng.randint(1, 9):02d}.prod.internal"])


def _ip(rng: random.Random) -> str:
    return f"10.{rng.randint(0, 63)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


USERS = ["app", "svc_orders", "deploy", "grafana", "airflow", "keycloak", "backup", "etl_reader", "admin", "root"]
DBS = ["orders", "billing", "inventory", "keycloak", "airflow", "ledger", "metrics"]
WORDS = ["orbit", "falcon", "granite", "harbor", "lantern", "meadow", "nickel", "prism", "quartz", "saffron",
         "tundra", "willow", "ember", "cobalt", "juniper", "marble", "cinder", "delta"]


def _password(rng: random.Random) -> str:
    """A password as operators set them: generated (pwgen -s, openssl rand -base64), human-made or a passphrase."""
    style = rng.randrange(5)
    if style == 0:
        return pick(rng, ALNUM, rng.randint(16, 24))
    if style == 1:
        return _b64(rng.randbytes(rng.choice([18, 24])))
    if style == 2:
        return (f"{rng.choice(WORDS).capitalize()}{rng.randint(1990, 2026)}{rng.choice('!$%*?@')}"
                f"{rng.choice(WORDS)}")
    if style == 3:
        return "-".join(rng.sample(WORDS, 3)) + f"-{digits(rng, 2)}"
    return pick(rng, ALNUM + "!$%*+-.=?@^_~", rng.randint(14, 22))


def _uri_password(rng: random.Random) -> str:
    """A password fit for a URI's userinfo (RFC 3986): unreserved characters, or percent-encoded when not."""
    if rng.random() < 0.25:
        return quote(pick(rng, ALNUM + "!$*@:/", rng.randint(16, 22)), safe="")
    return pick(rng, ALNUM + "-_.~", rng.randint(16, 28))


# ---- languages --------------------------------------------------------------------------------------------------

LANG_ROWS = """\
en|Here is what I found in the output:|: |Password|API key|Email|Phone|Please rotate it right away.
fr|Voici ce que j'ai trouvé dans la sortie :| : |Mot de passe|Clé API|E-mail|Téléphone|Renouvelez-le immédiatement.
de|Das habe ich in der Ausgabe gefunden:|: |Passwort|API-Schlüssel|E-Mail|Telefon|Bitte sofort rotieren.
es|Esto es lo que encontré en la salida:|: |Contraseña|Clave de API|Correo electrónico|Teléfono|Rótelo de inmediato.
it|Ecco cosa ho trovato nell'output:|: |Password|Chiave API|E-mail|Telefono|Ti consiglio di ruotarlo subito.
pt|Veja o que encontrei na saída:|: |Senha|Chave de API|E-mail|Telefone|Recomendo rotacioná-lo imediatamente.
nl|Dit heb ik in de uitvoer gevonden:|: |Wachtwoord|API-sleutel|E-mail|Telefoon|Roteer dit direct.
pl|Oto, co znalazłem w wyniku:|: |Hasło|Klucz API|E-mail|Telefon|Proszę natychmiast go zmienić.
sv|Det här hittade jag i utdata:|: |Lösenord|API-nyckel|E-post|Telefon|Byt ut det omedelbart.
da|Her er, hvad jeg fandt i outputtet:|: |Adgangskode|API-nøgle|E-mail|Telefon|Udskift det med det samme.
nb|Dette fant jeg i utdataene:|: |Passord|API-nøkkel|E-post|Telefon|Bytt det ut med en gang.
fi|Löysin tulosteesta tämän:|: |Salasana|API-avain|Sähköposti|Puhelin|Vaihda se heti.
cs|Tohle jsem našel ve výstupu:|: |Heslo|Klíč API|E-mail|Telefon|Okamžitě ho prosím změňte.
tr|Çıktıda bunu buldum:|: |Şifre|API anahtarı|E-posta|Telefon|Lütfen hemen değiştirin.
ru|Вот что я нашёл в выводе:|: |Пароль|API-ключ|Эл. почта|Телефон|Пожалуйста, немедленно смените его.
uk|Ось що я знайшов у виводі:|: |Пароль|API-ключ|Ел. пошта|Телефон|Будь ласка, негайно змініть його.
el|Αυτό βρήκα στην έξοδο:|: |Κωδικός πρόσβασης|Κλειδί API|Email|Τηλέφωνο|Αλλάξτε το αμέσως.
ar|هذا ما وجدته في المخرجات:|: |كلمة المرور|مفتاح API|البريد الإلكتروني|الهاتف|يرجى تغييره فورًا.
he|זה מה שמצאתי בפלט:|: |סיסמה|מפתח API|דוא״ל|טלפון|נא להחליף אותו מיד.
hi|आउटपुट में मुझे यह मिला:|: |पासवर्ड|API कुंजी|ईमेल|फ़ोन|कृपया इसे तुरंत बदलें।
ja|出力に次の値が含まれていました：|：|パスワード|APIキー|メール|電話番号|至急ローテーションしてください。
zh|我在输出中发现了以下内容：|：|密码|API 密钥|电子邮件|电话|请立即轮换。
ko|출력에서 다음을 찾았습니다:|: |비밀번호|API 키|이메일|전화번호|즉시 교체해 주세요.
vi|Đây là những gì tôi tìm thấy trong đầu ra:|: |Mật khẩu|Khóa API|Email|Điện thoại|Vui lòng thay đổi ngay.
th|นี่คือสิ่งที่พบในผลลัพธ์:|: |รหัสผ่าน|คีย์ API|อีเมล|โทรศัพท์|โปรดเปลี่ยนทันที
id|Ini yang saya temukan di keluaran:|: |Kata sandi|Kunci API|Email|Telepon|Segera ganti nilainya.
ro|Iată ce am găsit în rezultat:|: |Parolă|Cheie API|E-mail|Telefon|Vă rog să îl schimbați imediat.
hu|Ezt találtam a kimenetben:|: |Jelszó|API-kulcs|E-mail|Telefon|Kérem, azonnal cserélje le.
"""
"""Per language: code|lead|separator|password|API key|e-mail|phone|rotate (the agent's words to its user)."""
LANGS: dict[str, list[str]] = {row.split("|")[0]: row.split("|")[1:] for row in LANG_ROWS.splitlines()}
FIELD = {"password": 2, "key": 3, "email": 4, "phone": 5}


def _msg(rng: random.Random, field: str, value: str, lang: str = "", rotate: bool = True) -> str:
    """The agent telling the user a value under a label in the user's language (drawn when `lang` is empty)."""
    words = LANGS[lang or rng.choice(list(LANGS))]
    tail = f"\n{words[6]}" if rotate else ""
    return f"{words[0]}\n{words[FIELD[field]]}{words[1]}{value}{tail}"


# ---- carriers -------------------------------------------------------------------------------------------------

def t_kubectl_exec(r: random.Random, snip: str, _s: str) -> str:
    return f"$ kubectl exec -n {_ns(r)} {_pod(r)} -c app -- cat /var/run/config/app.env\n{snip}\n"


def t_kubectl_logs(r: random.Random, snip: str, _s: str) -> str:
    return (f"$ kubectl logs -n {_ns(r)} {_pod(r)} --tail=3\n{_ts(r)} INFO  server listening on :8080\n"
            f"{_ts(r)} DEBUG effective configuration follows\n{snip}\n")


def t_kubectl_describe(r: random.Random, snip: str, _s: str) -> str:
    pod = _pod(r)
    return (f"$ kubectl describe pod {pod} -n {_ns(r)}\nName:         {pod}\nNode:         {_host(r)}/{_ip(r)}\n"
            f"Status:       Running\nLast State:   Terminated\n  Reason:     Error\n  Exit Code:  1\n"
            f"Events:\n  Type     Reason   Age   From     Message\n  ----     ------   ----  ----     -------\n"
            f"  Warning  BackOff  {r.randint(2, 59)}s   kubelet  Back-off restarting failed container; last output:\n"
            f"{snip}\n")


def t_helm_notes(r: random.Random, snip: str, _s: str) -> str:
    app = _app(r)
    return (f"$ helm upgrade --install {app} ./charts/{app} -n {_ns(r)}\nRelease \"{app}\" has been upgraded. "
            f"Happy Helming!\nNAME: {app}\nLAST DEPLOYED: {_syslog_ts(r)} 2026\nSTATUS: deployed\n"
            f"REVISION: {r.randint(2, 80)}\nNOTES:\n1. Get the application URL by running the commands below.\n"
            f"2. Initial settings:\n{snip}\n")


def t_terraform_error(r: random.Random, snip: str, _s: str) -> str:
    return (f"module.{_app(r).replace('-', '_')}.aws_db_instance.main: Modifying... [id=db-{pick(r, UPPER, 26)}]\n"
            f"╷\n│ Error: updating RDS DB Instance: api error InvalidParameterValue\n│\n"
            f"│   with module.db.aws_db_instance.main,\n│   on modules/db/main.tf line {r.randint(10, 200)}:\n"
            f"│ request body:\n{snip}\n╵\n")


def t_terraform_output(r: random.Random, snip: str, _s: str) -> str:
    return (f"$ terraform -chdir=envs/{_ns(r)} output -raw bootstrap_notes\n{snip}\n"
            f"$ echo $?\n0\n")


def t_journald(r: random.Random, snip: str, _s: str) -> str:
    unit = r.choice(["app.service", "node-exporter.service", "vault.service", "kubelet.service", "backup.service"])
    return (f"$ journalctl -u {unit} --since '1 hour ago' --no-pager\n{_syslog_ts(r)} {_host(r)} "
            f"{unit.split('.')[0]}[{r.randint(300, 65000)}]: {snip}\n")


def t_syslog(r: random.Random, snip: str, _s: str) -> str:
    return (f"<{r.choice([131, 134, 38, 86])}>1 {_ts(r)} {_host(r)} {_app(r)} {r.randint(300, 65000)} "
            f"ID{r.randint(10, 99)} - {snip}\n")


def t_ansible_vvv(r: random.Random, snip: str, _s: str) -> str:
    return (f"TASK [{_app(r)} : render configuration] ******************************\n"
            f"task path: /srv/ansible/roles/app/tasks/main.yml:{r.randint(3, 80)}\n"
            f"<{_ip(r)}> ESTABLISH SSH CONNECTION FOR USER: ubuntu\nok: [{_host(r)}] => \n  MSG:\n\n{snip}\n")


def t_ansible_vault_view(r: random.Random, snip: str, _s: str) -> str:
    return (f"$ ansible-vault view group_vars/{_ns(r)}/vault.yml --vault-id prod@prompt\nVault password (prod): \n"
            f"{snip}\n")


def t_ssh_session(r: random.Random, snip: str, _s: str) -> str:
    host = _host(r)
    return (f"$ ssh -A -J bastion-01 ubuntu@{host}\nLast login: {_syslog_ts(r)} 2026 from {_ip(r)}\n"
            f"ubuntu@{host}:~$ sudo cat /etc/{_app(r)}/config.env\n{snip}\nubuntu@{host}:~$ exit\n"
            f"Connection to {host} closed.\n")


def t_aws_logs_tail(r: random.Random, snip: str, _s: str) -> str:
    fn = _app(r)
    stream = f"2026/03/{r.randint(1, 28):02d}/[$LATEST]{pick(r, HEX, 32)}"
    return (f"$ aws logs tail /aws/lambda/{fn} --since 1h\n{_ts(r)} {stream} START RequestId: {_uid(r)} "
            f"Version: $LATEST\n{_ts(r)} {stream} {snip}\n")


def t_gcloud_logging(r: random.Random, snip: str, secret: str) -> str:
    text = snip if "\n" in secret else snip.replace("\n", "\n  ")
    return (f"$ gcloud logging read 'severity>=WARNING' --limit 1\n---\n"
            f"insertId: {pick(r, LOWER + string.digits, 14)}\n"
            f"logName: projects/ops-{digits(r, 6)}/logs/stdout\nreceiveTimestamp: '{_ts(r)}'\nseverity: ERROR\n"
            f"textPayload: |\n  {text}\n")


def t_alertmanager_mail(r: random.Random, snip: str, _s: str) -> str:
    return (f"Subject: [FIRING:1] {r.choice(['KubePodCrashLooping', 'TargetDown', 'HighErrorRate'])} "
            f"({_ns(r)} {_pod(r)} critical)\n\nLabels:\n - alertname = KubePodCrashLooping\n - severity = critical\n"
            f"Annotations:\n - description = container log tail:\n{snip}\n\nSource: http://prometheus.{_ns(r)}"
            f".svc:9090/graph?g0.expr=up\n")


def t_chatops(r: random.Random, snip: str, _s: str) -> str:
    return (f"#inc-{r.randint(1000, 9999)}-{_app(r)}\n[{r.randint(0, 23):02d}:{r.randint(0, 59):02d}] "
            f"oncall-bot: paging primary\n[{r.randint(0, 23):02d}:{r.randint(0, 59):02d}] sre-agent: "
            f"pulled this from the pod:\n{snip}\n")


def t_agent_message(r: random.Random, snip: str, _s: str) -> str:
    words = LANGS[r.choice(list(LANGS))]
    return f"assistant → user\n{words[0]}\n\n```\n{snip}\n```\n{words[6]}\n"


def t_nginx_t(r: random.Random, snip: str, _s: str) -> str:
    return (f"$ sudo nginx -T 2>/dev/null | sed -n '/upstream.conf/,$p'\n# configuration file "
            f"/etc/nginx/conf.d/upstream.conf:\nupstream {_app(r)} {{\n    server {_ip(r)}:8080 max_fails=3;\n}}\n"
            f"# configuration file /etc/nginx/snippets/{_app(r)}-auth.conf:\n{snip}\n")


def t_haproxy_cfg(r: random.Random, snip: str, _s: str) -> str:
    return (f"$ sudo cat /etc/haproxy/haproxy.cfg\nglobal\n    log /dev/log local0\n    maxconn {r.randint(2, 50)}000\n"
            f"defaults\n    mode http\n    timeout connect 5s\n{snip}\nbackend {_app(r)}\n"
            f"    server s1 {_ip(r)}:8080 check\n")


def t_vault_kv_get(r: random.Random, snip: str, _s: str) -> str:
    return (f"$ vault kv get -mount=secret {_ns(r)}/{_app(r)}\n====== Secret Path ======\nsecret/data/{_ns(r)}/"
            f"{_app(r)}\n\n======= Metadata =======\nKey                Value\n---                -----\n"
            f"created_time       {_ts(r)}\nversion            {r.randint(1, 40)}\n\n====== Data ======\n"
            f"Key        Value\n---        -----\n{snip}\n")


def t_env_dump(r: random.Random, snip: str, _s: str) -> str:
    return (f"$ docker exec {_app(r)}-{r.randint(1, 3)} env | sort\nHOME=/root\nHOSTNAME={pick(r, HEX, 12)}\n"
            f"LANG=C.UTF-8\n{snip}\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin\n")


def t_ci_log(r: random.Random, snip: str, secret: str) -> str:
    ts = _ts(r)
    body = snip if "\n" in secret else "\n".join(f"{ts} {line}" for line in snip.split("\n"))
    return (f"{ts} ##[group]Run ./scripts/deploy.sh {_ns(r)}\n{ts} ./scripts/deploy.sh {_ns(r)}\n{ts} ##[endgroup]\n"
            f"{ts} + set -x\n{body}\n{ts} ##[error]Process completed with exit code 1.\n")


def t_incident_timeline(r: random.Random, snip: str, _s: str) -> str:
    return (f"## Incident INC-{r.randint(1000, 9999)}: {_app(r)} 5xx spike\n\n| Time (UTC) | Event |\n|---|---|\n"
            f"| {r.randint(0, 23):02d}:{r.randint(0, 59):02d} | Alert fired |\n"
            f"| {r.randint(0, 23):02d}:{r.randint(0, 59):02d} | Agent captured the failing config below |\n\n"
            f"```\n{snip}\n```\n")


TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "kubectl_exec": t_kubectl_exec, "kubectl_logs": t_kubectl_logs, "kubectl_describe": t_kubectl_describe,
    "helm_notes": t_helm_notes, "terraform_error": t_terraform_error, "terraform_output": t_terraform_output,
    "journald": t_journald, "syslog": t_syslog, "ansible_vvv": t_ansible_vvv,
    "ansible_vault_view": t_ansible_vault_view,
    "ssh_session": t_ssh_session, "aws_logs_tail": t_aws_logs_tail, "gcloud_logging": t_gcloud_logging,
    "alertmanager_mail": t_alertmanager_mail, "chatops": t_chatops, "agent_message": t_agent_message,
    "nginx_t": t_nginx_t, "haproxy_cfg": t_haproxy_cfg, "vault_kv_get": t_vault_kv_get, "env_dump": t_env_dump,
    "ci_log": t_ci_log, "incident_timeline": t_incident_timeline,
}
"""22 of them: not a multiple of 3, so the two text cases in every three reach every carrier."""


def j_docker_inspect(r: random.Random, snip: str, _s: str) -> str:
    return _dump([{"Id": pick(r, HEX, 64), "Created": _ts(r), "Name": f"/{_app(r)}-1",
                   "State": {"Status": "running", "Pid": r.randint(300, 65000)},
                   "Config": {"Image": f"registry.internal/{_app(r)}:1.{r.randint(0, 40)}.{r.randint(0, 9)}",
                              "Env": ["PATH=/usr/local/bin:/usr/bin", snip, "TZ=UTC"]}}])


def j_cloudtrail(r: random.Random, snip: str, _s: str) -> str:
    return _dump({"eventVersion": "1.09", "eventTime": _ts(r)[:19] + "Z", "eventSource": "ssm.amazonaws.com",
                  "eventName": "PutParameter", "awsRegion": r.choice(["us-east-1", "eu-west-1", "ap-south-1"]),
                  "sourceIPAddress": "cloudformation.amazonaws.com", "errorCode": "ValidationException",
                  "errorMessage": snip, "requestID": _uid(r), "eventID": _uid(r), "readOnly": False,
                  "eventType": "AwsApiCall", "recipientAccountId": digits(r, 12)})


def j_cloudwatch_events(r: random.Random, snip: str, _s: str) -> str:
    return _dump({"events": [{"logStreamName": f"ecs/{_app(r)}/{pick(r, HEX, 32)}", "timestamp": _epoch(r) * 1000,
                              "message": snip, "ingestionTime": _epoch(r) * 1000,
                              "eventId": digits(r, 56)}], "searchedLogStreams": []})


def j_stackdriver(r: random.Random, snip: str, _s: str) -> str:
    return _dump({"insertId": pick(r, LOWER + string.digits, 14), "jsonPayload": {"message": snip},
                  "resource": {"type": "k8s_container", "labels": {"namespace_name": _ns(r), "pod_name": _pod(r),
                                                                   "cluster_name": "prod-eu"}},
                  "severity": "ERROR", "timestamp": _ts(r), "logName": f"projects/ops-{digits(r, 6)}/logs/stderr"})


def j_tfstate(r: random.Random, snip: str, _s: str) -> str:
    return _dump({"version": 4, "terraform_version": f"1.{r.randint(5, 9)}.{r.randint(0, 5)}",
                  "serial": r.randint(1, 900), "lineage": _uid(r), "outputs": {},
                  "resources": [{"mode": "managed", "type": "terraform_data", "name": "bootstrap",
                                 "provider": "provider[\"terraform.io/builtin/terraform\"]",
                                 "instances": [{"schema_version": 0, "attributes": {
                                     "id": _uid(r), "input": snip, "output": snip, "triggers_replace": None},
                                     "sensitive_attributes": []}]}]})


def j_pagerduty_event(r: random.Random, snip: str, _s: str) -> str:
    return _dump({"event_action": "trigger", "dedup_key": pick(r, HEX, 32),
                  "payload": {"summary": f"{_app(r)} crash looping in {_ns(r)}", "source": _host(r),
                              "severity": "critical", "timestamp": _ts(r), "custom_details": {"log_tail": snip}}})


def j_opsgenie_alert(r: random.Random, snip: str, _s: str) -> str:
    return _dump({"message": f"{_app(r)}: readiness probe failing", "alias": pick(r, HEX, 16),
                  "description": snip, "tags": ["k8s", _ns(r)], "priority": r.choice(["P1", "P2", "P3"]),
                  "entity": _pod(r), "source": "alertmanager"})


def j_k8s_event(r: random.Random, snip: str, _s: str) -> str:
    pod = _pod(r)
    return _dump({"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{pod}.{pick(r, HEX, 16)}",
                                                                    "namespace": _ns(r), "uid": _uid(r)},
                  "involvedObject": {"kind": "Pod", "name": pod, "fieldPath": "spec.containers{app}"},
                  "reason": "Failed", "message": snip, "type": "Warning", "count": r.randint(1, 40),
                  "lastTimestamp": _ts(r)[:19] + "Z"})


def j_ansible_json(r: random.Random, snip: str, _s: str) -> str:
    return _dump({"plays": [{"play": {"name": "configure app", "id": _uid(r)}, "tasks": [{
        "task": {"name": "show rendered env", "id": _uid(r)},
        "hosts": {_host(r): {"changed": False, "msg": snip, "_ansible_no_log": False}}}]}],
        "stats": {"web": {"ok": r.randint(3, 40), "failed": 0}}})


def j_vault_api(r: random.Random, snip: str, _s: str) -> str:
    return _dump({"request_id": _uid(r), "lease_id": "", "renewable": False, "lease_duration": 0,
                  "data": {"data": {"notes": snip}, "metadata": {"created_time": _ts(r), "version": r.randint(1, 9),
                                                                 "destroyed": False}},
                  "wrap_info": None, "warnings": None, "auth": None})


def j_mcp_result(r: random.Random, snip: str, _s: str) -> str:
    return _dump({"jsonrpc": "2.0", "id": r.randint(1, 400),
                  "result": {"content": [{"type": "text", "text": snip}], "isError": False}})


def j_ssm_invocation(r: random.Random, snip: str, _s: str) -> str:
    return _dump({"CommandInvocations": [{"CommandId": _uid(r), "InstanceId": f"i-0{pick(r, HEX, 16)}",
                                          "Status": "Success", "CommandPlugins": [{
                                              "Name": "aws:runShellScript", "ResponseCode": 0, "Output": snip}]}]})


def j_fluentbit(r: random.Random, snip: str, _s: str) -> str:
    return _dump({"date": _epoch(r) + r.random(), "log": snip, "stream": "stderr", "time": _ts(r),
                  "kubernetes": {"pod_name": _pod(r), "namespace_name": _ns(r), "container_name": "app",
                                 "host": _host(r)}})


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "docker_inspect": j_docker_inspect, "cloudtrail": j_cloudtrail, "cloudwatch_events": j_cloudwatch_events,
    "stackdriver": j_stackdriver, "tfstate": j_tfstate, "pagerduty_event": j_pagerduty_event,
    "opsgenie_alert": j_opsgenie_alert, "k8s_event": j_k8s_event, "ansible_json": j_ansible_json,
    "vault_api": j_vault_api, "mcp_result": j_mcp_result, "ssm_invocation": j_ssm_invocation,
    "fluentbit": j_fluentbit,
}


# ---- the issue kinds ------------------------------------------------------------------------------------------

def _style(i: int, styles: list[tuple[str, str]]) -> tuple[str, str]:
    return styles[i % len(styles)]


def v_password(r: random.Random, i: int) -> Value:
    """Passwords where operators put them: Vault, Helm, env, Ansible, keystores, proxies, databases, messages."""
    pw, user = _password(r), r.choice(USERS)
    if i % 20 == 9:
        pw = pick(r, HEX, 32)
        return "jenkins_initial", pw, f"$ sudo cat /var/lib/jenkins/secrets/initialAdminPassword\n{pw}", False
    styles = [
        ("vault_table", f"password   {pw}\nusername   {user}"),
        ("helm_values", f"postgresql:\n  auth:\n    username: {user}\n    password: \"{pw}\"\n    database: app"),
        ("docker_env", f"POSTGRES_PASSWORD={pw}"),
        ("ansible_extra_vars", f"$ ansible-playbook site.yml -i inventory/prod -e 'ansible_become_password={pw}' -vvv"),
        ("ansible_vault_var", f"vault_db_user: {user}\nvault_db_password: \"{pw}\""),
        ("pkcs12_export", f"openssl pkcs12 -export -in tls.crt -inkey tls.key -out keystore.p12 -passout pass:{pw}"),
        ("keytool", f"keytool -importkeystore -srckeystore keystore.p12 -srcstoretype PKCS12 -destkeystore app.jks "
                    f"-deststorepass {pw}"),
        ("haproxy_userlist", f"userlist ops\n    user admin insecure-password {pw}"),
        ("haproxy_stats", f"listen stats\n    bind :8404\n    stats enable\n    stats auth admin:{pw}"),
        ("redis_conf", f"bind 0.0.0.0\nport 6379\nrequirepass {pw}"),
        ("argocd_initial", f"$ argocd admin initial-password -n argocd\n{pw}\n\n This password must be only used for "
                           "first time login. We strongly recommend you update the password using `argocd account "
                           "update-password`."),
        ("grafana_ini", f"[security]\nadmin_user = admin\nadmin_password = {pw}"),
        ("k8s_stringdata", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\nstringData:\n"
                           f"  username: {user}\n  password: {pw}"),
        ("tfstate_random_password", _pretty({"type": "random_password", "name": "db", "instances": [
            {"attributes": {"length": len(pw), "special": True, "result": pw}}]})),
        ("mysql_cli", f"$ mysql -h db.prod.internal -u {user} -p'{pw}' -e 'SHOW PROCESSLIST'\n"
                      "mysql: [Warning] Using a password on the command line interface can be insecure."),
        ("msg", _msg(r, "password", pw)),
        ("compose_config", f"services:\n  db:\n    environment:\n      MYSQL_ROOT_PASSWORD: {pw}"),
        ("htpasswd_cmd", f"$ htpasswd -b -c /etc/nginx/.htpasswd ops {pw}\nAdding password for user ops"),
        ("alertmanager_smtp", f"global:\n  smtp_smarthost: smtp.internal:587\n  smtp_auth_username: alerts\n"
                              f"  smtp_auth_password: '{pw}'"),
        ("rabbitmqctl", f"$ rabbitmqctl add_user svc_orders '{pw}'\nAdding user \"svc_orders\" ..."),
    ]
    style, snip = _style(i, styles)
    return style, pw, snip, False


AWS_REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "ca-central-1"]


def _aws_secret(r: random.Random) -> str:
    return pick(r, ALNUM + "/+", 40)


def _aws_id(r: random.Random, prefix: str = "AKIA") -> str:
    return prefix + pick(r, B32, 16)


def _session_token(r: random.Random) -> str:
    """An STS session token as the CLI prints it: base64 of a binary blob, its first bytes fixed by the service."""
    head = r.choice(["IQoJb3JpZ2luX2VjE", "IQoJb3JpZ2luX2VjEJ", "FwoGZXIvYXdzE"])
    return head + pick(r, B64, 4 * r.randint(70, 150) - len(head) - 2) + r.choice(["==", "Ag", "w="])


def v_aws_secret(r: random.Random, i: int) -> Value:
    """The 40-character secret access key, labelled or beside its AKIA/ASIA id."""
    sec, akia, asia = _aws_secret(r), _aws_id(r), _aws_id(r, "ASIA")
    styles = [
        ("iam_create_access_key", _pretty({"AccessKey": {"UserName": "ci-deployer", "AccessKeyId": akia,
                                                         "Status": "Active", "SecretAccessKey": sec,
                                                         "CreateDate": _ts(r)[:19] + "+00:00"}})),
        ("sts_assume_role", _pretty({"Credentials": {"AccessKeyId": asia, "SecretAccessKey": sec,
                                                     "SessionToken": _session_token(r),
                                                     "Expiration": _ts(r)[:19] + "+00:00"},
                                     "AssumedRoleUser": {"AssumedRoleId": f"AROA{pick(r, B32, 17)}:deploy",
                                                         "Arn": f"arn:aws:sts::{digits(r, 12)}:assumed-role/"
                                                                "deploy/deploy"}})),
        ("credentials_file", f"[prod]\naws_access_key_id = {akia}\naws_secret_access_key = {sec}\n"
                             f"region = {r.choice(AWS_REGIONS)}"),
        ("env", f"AWS_ACCESS_KEY_ID={akia}\nAWS_SECRET_ACCESS_KEY={sec}\nAWS_DEFAULT_REGION={r.choice(AWS_REGIONS)}"),
        ("tfstate_access_key", _pretty({"type": "aws_iam_access_key", "name": "ci", "instances": [
            {"attributes": {"id": akia, "user": "ci-deployer", "status": "Active", "secret": sec}}]})),
        ("k8s_stringdata", f"stringData:\n  AWS_ACCESS_KEY_ID: {akia}\n  AWS_SECRET_ACCESS_KEY: {sec}"),
        ("aws_configure", f"$ aws configure --profile ops\nAWS Access Key ID [None]: {akia}\n"
                          f"AWS Secret Access Key [None]: {sec}\nDefault region name [None]: {r.choice(AWS_REGIONS)}"),
        ("credentials_csv", f"User name,Password,Access key ID,Secret access key,Console login link\n"
                            f"ci-deployer,,{akia},{sec},https://{digits(r, 12)}.signin.aws.amazon.com/console"),
        ("docker_run", f"docker run --rm -e AWS_ACCESS_KEY_ID={akia} -e AWS_SECRET_ACCESS_KEY={sec} "
                       "amazon/aws-cli s3 ls"),
        ("helm_set", f"helm upgrade velero vmware-tanzu/velero --set credentials.secretContents.cloud="
                     f"'[default]\\naws_access_key_id={akia}\\naws_secret_access_key={sec}'"),
        ("beside_id", f"rotated key pair for ci-deployer: {akia} / {sec}"),
        ("imds_response", _pretty({"Code": "Success", "LastUpdated": _ts(r)[:19] + "Z", "Type": "AWS-HMAC",
                                   "AccessKeyId": asia, "SecretAccessKey": sec, "Token": _session_token(r),
                                   "Expiration": _ts(r)[:19] + "Z"})),
    ]
    style, snip = _style(i, styles)
    return style, sec, snip, False


def v_webhook(r: random.Random, i: int) -> Value:
    """Chat and automation webhook URLs; the secret is the token-bearing segment or query value."""
    kind = i % 8
    if kind == 0:
        token = pick(r, ALNUM, 24)
        ids = f"T{pick(r, UPPER + string.digits, 10)}/B{pick(r, UPPER + string.digits, 10)}"
        url = f"https://hooks.slack.com/services/{ids}/{token}"
        snip = f"receivers:\n- name: slack-oncall\n  slack_configs:\n  - api_url: {url}\n    channel: '#alerts'"
        return "slack_alertmanager", token, snip, False
    if kind == 1:
        token = pick(r, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{r.randint(10 ** 17, 10 ** 19 - 1)}/{token}"
        return "discord", token, f"DISCORD_WEBHOOK_URL={url}", False
    if kind == 2:
        token = pick(r, HEX, 32)
        url = (f"https://contoso.webhook.office.com/webhookb2/{_uid(r)}@{_uid(r)}/IncomingWebhook/{token}/"
               f"{_uid(r)}")
        return "teams", token, f"  msteams_configs:\n  - webhook_url: '{url}'", False
    if kind == 3:
        token = pick(r, URLSAFE, 43)
        url = (f"https://prod-{r.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(r, HEX, 32)}/"
               f"triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={token}")
        return "power_automate", token, f"curl -sS -H 'Content-Type: application/json' '{url}' -d @card.json", False
    if kind == 4:
        token = pick(r, URLSAFE, 43) + "%3D"
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(r, URLSAFE, 7)}/messages?key="
               f"AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={token}")
        return "google_chat", token, f"notify:\n  google_chat:\n    url: \"{url}\"", False
    if kind == 5:
        token = pick(r, LOWER + string.digits, 26)
        return "mattermost", token, f"MATTERMOST_HOOK=https://chat.ops.internal/hooks/{token}", False
    if kind == 6:
        token = pick(r, LOWER + string.digits, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{r.randint(100000, 99999999)}/{token}/"
        return "zapier", token, f"[notify] zapier_url = {url}", False
    token = pick(r, ALNUM, 48)
    url = f"https://rocket.ops.internal/hooks/{pick(r, ALNUM, 24)}/{token}"
    return "rocketchat", token, f"grafana contact point 'rocket' -> POST {url}", False


def v_stripe_whsec(r: random.Random, i: int) -> Value:
    """Stripe webhook signing secrets: the dashboard's and `stripe listen`'s."""
    sec = "whsec_" + (pick(r, HEX, 64) if i % 4 == 0 else pick(r, ALNUM, 32))
    styles = [
        ("stripe_listen", f"$ stripe listen --forward-to localhost:8080/webhooks/stripe\n> Ready! You are using Stripe "
                          f"API Version [2024-06-20]. Your webhook signing secret is {sec} (^C to quit)"),
        ("env", f"STRIPE_WEBHOOK_SECRET={sec}"),
        ("helm_values", f"payments:\n  stripe:\n    webhookSecret: {sec}"),
        ("k8s_stringdata", f"stringData:\n  STRIPE_WEBHOOK_SECRET: \"{sec}\""),
        ("tfstate_endpoint", _pretty({"type": "stripe_webhook_endpoint", "name": "prod", "instances": [
            {"attributes": {"url": "https://pay.internal/webhooks/stripe", "secret": sec}}]})),
        ("vault_table", f"signing_secret    {sec}"),
        ("compose_config", f"    environment:\n      - STRIPE_WEBHOOK_SECRET={sec}"),
        ("msg", _msg(r, "key", sec)),
    ]
    style, snip = _style(i, styles)
    return style, sec, snip, False


def v_connection_string(r: random.Random, i: int) -> Value:
    """Connection strings; the secret is the password or the account/shared-access key only."""
    pw, user, db = _uri_password(r), r.choice(USERS), r.choice(DBS)
    rds = f"{db}.{pick(r, LOWER + string.digits, 12)}.{r.choice(AWS_REGIONS)}.rds.amazonaws.com"
    kind = i % 16
    if kind == 13:
        key = _b64(r.randbytes(64))
        return "azure_storage", key, (f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName="
                                      f"st{pick(r, LOWER, 10)};AccountKey={key};EndpointSuffix=core.windows.net"), False
    if kind in (14, 15):
        key = _b64(r.randbytes(32))
        extra = ";EntityPath=events" if kind == 15 else ""
        return ("service_bus" if kind == 14 else "event_hubs"), key, (
            f"Endpoint=sb://{pick(r, LOWER, 8)}.servicebus.windows.net/;SharedAccessKeyName="
            f"RootManageSharedAccessKey;SharedAccessKey={key}{extra}"), False
    pw = pw if kind not in (5, 7, 8) else pick(r, ALNUM + "-_.~!", r.randint(16, 24))
    styles = [
        ("postgres_uri", f"DATABASE_URL=postgresql://{user}:{pw}@{rds}:5432/{db}?sslmode=require"),
        ("mysql_uri", f"mysql://{user}:{pw}@{rds}:3306/{db}"),
        ("mongodb_srv", f"mongodb+srv://{user}:{pw}@cluster0.{pick(r, LOWER + string.digits, 5)}.mongodb.net/"
                        f"{db}?retryWrites=true&w=majority"),
        ("redis_uri", f"REDIS_URL=rediss://default:{pw}@{pick(r, LOWER, 8)}.cache.amazonaws.com:6379/0"),
        ("amqp_uri", f"CELERY_BROKER_URL=amqp://{user}:{pw}@rabbitmq.{_ns(r)}.svc.cluster.local:5672/%2F"),
        ("ado_net", f"Server=tcp:{pick(r, LOWER, 8)}.database.windows.net,1433;Initial Catalog={db};Persist Security "
                    f"Info=False;User ID={user};Password={pw};MultipleActiveResultSets=False;Encrypt=True;"),
        ("jdbc_postgres", f"spring.datasource.url=jdbc:postgresql://{rds}:5432/{db}?user={user}&password={pw}"),
        ("jdbc_sqlserver", f"jdbc:sqlserver://{pick(r, LOWER, 8)}.database.windows.net:1433;database={db};"
                           f"user={user};password={pw};encrypt=true;loginTimeout=30;"),
        ("odbc", f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:sql-{pick(r, LOWER, 6)}.internal,1433;"
                 f"Database={db};Uid={user};Pwd={pw};Encrypt=yes;"),
        ("elasticsearch_uri", f"output.elasticsearch:\n  hosts: [\"https://elastic:{pw}@es.{_ns(r)}.svc:9200\"]"),
        ("terraform_output_json", _pretty({"primary_connection_string": {
            "sensitive": True, "type": "string",
            "value": f"postgresql://{user}:{pw}@{rds}:5432/{db}"}})),
        ("sqlalchemy_ini", f"[alembic]\nsqlalchemy.url = postgresql+psycopg2://{user}:{pw}@{rds}/{db}"),
        ("kafka_jaas", f"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                       f"username=\"{user}\" password=\"{pw}\";"),
    ]
    style, snip = styles[kind]
    return style, pw, snip, False


def v_labelled_key(r: random.Random, i: int) -> Value:
    """API keys without a provider prefix, known by their label (several languages)."""
    kind = i % 12
    hex32, key40 = pick(r, HEX, 32), pick(r, URLSAFE, 40)
    styles = [
        ("datadog_env", hex32, f"DD_API_KEY={hex32}\nDD_SITE=datadoghq.eu"),
        ("datadog_yaml", hex32, f"# /etc/datadog-agent/datadog.yaml\napi_key: {hex32}\nsite: datadoghq.com"),
        ("pagerduty_routing", hex32, f"  pagerduty_configs:\n  - routing_key: {hex32}\n    severity: critical"),
        ("opsgenie_key", (k := _uid(r)), f"  opsgenie_configs:\n  - api_key: {k}\n    priority: P2"),
        ("cloudflare_env", key40, f"export CLOUDFLARE_API_TOKEN={key40}"),
        ("hcloud_token", (k := pick(r, ALNUM, 64)), f"$ hcloud context create prod\nToken: {k}\n"
                                                    "Context prod created and activated"),
        ("x_api_key_header", (k := pick(r, ALNUM, 32)), f"> GET /api/v1/status HTTP/1.1\n> Host: status.internal\n"
                                                      f"> X-API-Key: {k}\n> Accept: */*"),
        ("helm_values", hex32, f"datadog:\n  apiKey: {hex32}\n  appKey: \"\"\n  clusterName: prod-eu"),
        ("cli_flag", key40, f"$ statuspage-cli incidents list --api-key {key40} --page-id {pick(r, LOWER, 12)}"),
        ("msg", key40, _msg(r, "key", key40)),
        ("linode_env", (k := pick(r, HEX, 64)), f"LINODE_TOKEN={k}"),
        ("msg_plain", hex32, _msg(r, "key", hex32, rotate=False)),
    ]
    style, key, snip = styles[kind]
    return style, key, snip, False


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def v_disguised(r: random.Random, i: int) -> Value:
    """A secret with a zero-width character, full-width forms, %-encoding or JSON \\u escapes inside."""
    base = [crc_token(r, "ghp_"), _aws_secret(r), f"xoxb-{digits(r, 12)}-{digits(r, 13)}-{pick(r, ALNUM, 24)}",
            "glpat-" + pick(r, URLSAFE, 20), _password(r), "hvs." + pick(r, ALNUM, 24)][i % 6]
    label = ["GITHUB_TOKEN", "aws_secret_access_key", "SLACK_BOT_TOKEN", "GITLAB_TOKEN", "DB_PASSWORD",
             "VAULT_TOKEN"][i % 6]
    method = i // 6 % 4
    if method == 0:
        chars = list(base)
        for _ in range(r.randint(1, 3)):
            chars.insert(r.randint(4, len(chars) - 1), r.choice(["\u200b", "\u200c", "\u200d", "\u2060"]))
        sec, style = "".join(chars), "zero_width"
    elif method == 1:
        cut = r.randint(0, len(base) // 2)
        sec, style = base[:cut] + _fullwidth(base[cut:]), "fullwidth"
    elif method == 2:
        sec, style = "".join(f"%{ord(c):02X}" if r.random() < 0.5 else c for c in base), "percent"
        sec = sec if "%" in sec else f"%{ord(base[0]):02X}" + base[1:]
    else:
        sec = "".join(f"\\u{ord(c):04x}" if r.random() < 0.4 or n == 0 else c for n, c in enumerate(base))
        return "json_u_escapes", sec, f'{{"{label}": "{sec}", "source": "env"}}', True
    return style, sec, f"{label}={sec}", False


FIRST = ["jana", "lucas", "priya", "mehmet", "sofia", "kenji", "amelie", "oluwaseun", "marta", "ravi", "chloe",
         "thomas", "aisha", "diego", "hannah", "wei", "fatima", "niklas", "camille", "arjun"]
LAST = ["novak", "moreau", "sharma", "yilmaz", "rossi", "tanaka", "dubois", "adeyemi", "kowalska", "iyer",
        "martin", "schneider", "khan", "garcia", "becker", "chen", "haddad", "lindqvist", "bernard", "menon"]
DOMAINS = ["northwind-logistics.com", "helio-systems.io", "bergmann-bau.de", "lumiere-conseil.fr",
           "tatvam-tech.in", "mapleridge.ca", "kestrel-health.co.uk", "fjordline-data.no", "gmail.com",
           "outlook.com", "proton.me", "web.de", "orange.fr", "yahoo.co.in"]


def _person(r: random.Random) -> tuple[str, str]:
    """A person's display name and e-mail address (local parts as mail systems form them)."""
    first, last, dom = r.choice(FIRST), r.choice(LAST), r.choice(DOMAINS)
    local = r.choice([f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}{r.randint(1, 99)}",
                      f"{first}+oncall", f"{last}.{first[0]}"])
    return f"{first.title()} {last.title()}", f"{local}@{dom}"


def v_email(r: random.Random, i: int) -> Value:
    """People's e-mail addresses where operations output names them."""
    name, em = _person(r)
    styles = [
        ("pagerduty_assignee", f"Assigned to: {name} ({em}) via escalation policy SRE-Primary"),
        ("git_log", f"commit {pick(r, HEX, 40)}\nAuthor: {name} <{em}>\n"
                    f"Date:   {_syslog_ts(r)} 2026 +0000\n\n    fix(helm): bump memory limits"),
        ("cloudtrail_principal", f"userIdentity.principalId: AROA{pick(r, B32, 17)}:{em}"),
        ("gcloud_config", f"$ gcloud config list\n[core]\naccount = {em}\nproject = ops-{digits(r, 6)}"),
        ("kubeconfig_oidc", f"users:\n- name: {em}\n  user:\n    exec:\n      command: kubectl\n"
                            "      args: [oidc-login, get-token]"),
        ("cert_subject", f"subject=C = DE, O = Ops, CN = vpn-client, emailAddress = {em}"),
        ("certbot", f"$ certbot certonly --nginx -d status.internal --agree-tos -m {em} -n"),
        ("acme_account", _pretty({"contact": [f"mailto:{em}"], "status": "valid"})),
        ("signed_off", f"Signed-off-by: {name} <{em}>"),
        ("crontab", f"MAILTO={em}\n0 3 * * * /usr/local/bin/backup.sh"),
        ("alertmanager_email", f"  email_configs:\n  - to: '{em}'\n    send_resolved: true"),
        ("msg", _msg(r, "email", em, rotate=False)),
        ("opsgenie_oncall", f"On call now (SRE schedule): {em} until 09:00 UTC"),
        ("iam_tag", f"Tags: [{{Key: owner, Value: {em}}}, {{Key: cost-center, Value: '4100'}}]"),
    ]
    style, snip = _style(i, styles)
    return style, em, snip, False


# ---- phones ---------------------------------------------------------------------------------------------------

NANP = [212, 312, 415, 617, 206, 303, 404, 512, 602, 713, 720, 919, 416, 514, 604, 403, 647, 778, 613, 902]


def v_phone_us_ca(r: random.Random, i: int) -> Value:
    """NANP numbers (geographic NPAs, exchange 2-9 not N11 nor 555) as US and Canadian rosters write them."""
    npa, nxx, line = r.choice(NANP), r.choice([n for n in range(201, 1000) if n % 100 != 11 and n != 555]), digits(r, 4)
    form = [f"({npa}) {nxx}-{line}", f"{npa}-{nxx}-{line}", f"+1 {npa} {nxx} {line}", f"{npa}.{nxx}.{line}",
            f"+1-{npa}-{nxx}-{line}", f"1 ({npa}) {nxx}-{line}"][i % 6]
    styles = [
        ("pagerduty_contact", f"Contact methods: phone {form} (SMS + voice)"),
        ("runbook_escalation", f"Escalation: call the DBA on-call cell {form} if replication lag > 300s"),
        ("opsgenie_notify", f"notification sent via voice to mobile {form}"),
        ("msg", _msg(r, "phone", form, "en", rotate=False)),
        ("msg_fr_ca", f"Joindre l'astreinte au cellulaire : {form}"),
        ("twilio_log", f"sms.send status=queued to_label='on-call mobile' to={form} from_service=alerts"),
    ]
    style, snip = _style(i // 6 + i, styles)
    return style, form, snip, False


def v_phone_uk(r: random.Random, i: int) -> Value:
    """Ofcom: 07xxx mobiles (07700 900 drama range avoided) and 020/0161/0131/0117 geographic numbers."""
    kind = i % 6
    if kind < 3:
        body = f"7{r.choice('123456789')}{digits(r, 2)}{digits(r, 6)}"
        body = body if not body.startswith("7700900") else "7911" + body[4:]
        form = [f"0{body[:4]} {body[4:]}", f"+44 {body[:4]} {body[4:]}",
                f"+44 (0){body[:4]} {body[4:7]} {body[7:]}"][kind]
        label = r.choice(["mobile", "Mob:", "mobile no."])
    else:
        area, sub = r.choice([("20", f"{r.choice('378')}{digits(r, 7)}"), ("161", f"{r.randint(2, 9)}{digits(r, 6)}"),
                              ("131", f"{r.randint(2, 6)}{digits(r, 6)}"), ("117", f"{r.randint(2, 9)}{digits(r, 6)}")])
        sub = sub if not sub.startswith("7946") else "7123" + sub[4:]
        split = 4 if area == "20" else 3
        form = [f"0{area} {sub[:split]} {sub[split:]}", f"+44 {area} {sub[:split]} {sub[split:]}",
                f"(0{area}) {sub}"][kind - 3]
        label = r.choice(["Tel:", "office", "NOC landline"])
    styles = [("pagerduty_contact", f"UK on-call {label} {form}"),
              ("runbook", f"Datacentre remote hands (London): {label} {form}"),
              ("msg", _msg(r, "phone", form, "en", rotate=False)),
              ("opsgenie_user", f"Opsgenie user phone ({label}): {form}")]
    style, snip = _style(i // 6 + i, styles)
    return style, form, snip, False


def v_phone_fr(r: random.Random, i: int) -> Value:
    """ARCEP: ten digits, 06/07 mobiles and 01-05 geographic (the 01 99 00 fiction range avoided)."""
    lead = r.choice(["6", "7"]) if i % 2 == 0 else r.choice("12345")
    rest = f"{r.randint(10, 98):02d}{digits(r, 6)}"
    rest = rest if not (lead == "6" and rest.startswith("3998")) else "12" + rest[2:]
    pairs = " ".join(rest[k:k + 2] for k in range(0, 8, 2))
    form = [f"0{lead} {pairs}", f"+33 {lead} {pairs}", f"0{lead}.{pairs.replace(' ', '.')}",
            f"+33 (0){lead} {pairs}", f"0{lead}{rest}"][i % 5]
    word = "portable" if lead in "67" else "fixe"
    styles = [("astreinte", f"Astreinte N2 — tél. {word} : {form}"),
              ("msg", _msg(r, "phone", form, "fr", rotate=False)),
              ("contact_hebergeur", f"Contact exploitation (Tél. : {form}), joignable 24/7"),
              ("pagerduty_contact", f"Moyen de contact : téléphone {word} {form}"),
              ("signature", f"Cordialement,\nÉquipe SRE\nTél. {word} : {form}")]
    style, snip = _style(i // 5 + i, styles)
    return style, form, snip, False


def v_phone_de(r: random.Random, i: int) -> Value:
    """BNetzA: 015x/016x/017x mobiles and the 030/040/069/089/0221 area codes."""
    if i % 2 == 0:
        pre = r.choice(["151", "152", "157", "160", "162", "170", "171", "172", "176", "178"])
        sub = digits(r, 8 if pre.startswith("15") else r.choice([7, 8]))
        form = [f"0{pre} {sub}", f"+49 {pre} {sub}", f"0{pre}/{sub}", f"+49 (0){pre} {sub[:4]} {sub[4:]}"][i // 2 % 4]
        word = r.choice(["Handy", "Mobil", "Mobilnummer"])
    else:
        pre = r.choice(["30", "40", "69", "89", "221"])
        sub = f"{r.randint(2, 9)}{digits(r, 7 if len(pre) == 2 else 6)}"
        form = [f"0{pre} {sub}", f"+49 {pre} {sub}", f"(0{pre}) {sub[:3]} {sub[3:]}", f"0{pre}-{sub}"][i // 2 % 4]
        word = r.choice(["Tel.", "Telefon", "Festnetz"])
    styles = [("bereitschaft", f"Rufbereitschaft Plattform-Team — {word}: {form}"),
              ("msg", _msg(r, "phone", form, "de", rotate=False)),
              ("rz_kontakt", f"Ansprechpartner Rechenzentrum, {word} {form}"),
              ("signatur", f"Mit freundlichen Grüßen\nSRE-Team\n{word}: {form}"),
              ("pagerduty_contact", f"Kontaktmethode {word}: {form}")]
    style, snip = _style(i // 5 + i, styles)
    return style, form, snip, False


def v_phone_in(r: random.Random, i: int) -> Value:
    """TRAI: ten-digit mobiles starting 6-9, and Delhi/Mumbai/Bengaluru landlines."""
    if i % 4 != 3:
        num = r.choice("6789") + digits(r, 9)
        form = [f"+91 {num[:5]} {num[5:]}", f"0{num[:5]} {num[5:]}", f"{num[:5]}-{num[5:]}", f"+91-{num}",
                f"+91{num}", f"{num[:5]} {num[5:]}"][i % 6]
        word = r.choice(["Mobile", "Mob. No.", "मोबाइल", "WhatsApp"])
    else:
        std, sub = r.choice([("11", 8), ("22", 8), ("80", 8)])
        num = f"{r.randint(2, 6)}{digits(r, sub - 1)}"
        form = r.choice([f"0{std} {num[:4]} {num[4:]}", f"+91 {std} {num}", f"0{std}-{num}"])
        word = r.choice(["Ph", "Landline", "फ़ोन"])
    styles = [("oncall_roster", f"NOC Bengaluru on-call — {word}: {form}"),
              ("msg", _msg(r, "phone", form, r.choice(["en", "hi"]), rotate=False)),
              ("vendor_contact", f"ISP escalation contact ({word}) {form}"),
              ("pagerduty_contact", f"Contact method {word} {form} (SMS)")]
    style, snip = _style(i // 4 + i, styles)
    return style, form, snip, False


# ---- ssn, card, iban ------------------------------------------------------------------------------------------

def v_ssn(r: random.Random, i: int) -> Value:
    """SSNs (SSA rules) leaked by applications into logs and dumps."""
    area = r.choice([a for a in range(1, 900) if a != 666])
    ssn = f"{area:03d}{r.randint(1, 99):02d}{r.randint(1, 9999):04d}"
    form = [f"{ssn[:3]}-{ssn[3:5]}-{ssn[5:]}", f"{ssn[:3]} {ssn[3:5]} {ssn[5:]}", ssn][i % 3]
    styles = [("app_log", f"WARN payroll-sync employee record rejected: ssn={form} reason=duplicate"),
              ("sql_log", f"LOG:  statement: UPDATE employees SET ssn = '{form}' WHERE id = {r.randint(100, 99999)}"),
              ("json_log", _dump({"level": "error", "msg": "kyc check failed", "applicant": {"ssn": form}})),
              ("msg", f"The failed job logged this Social Security number: {form}. I purged the log stream."),
              ("msg_es", f"El registro contiene un número de Seguro Social (SSN): {form}"),
              ("csv_dump", f"employee_id,name,SSN,state\n{r.randint(1000, 9999)},{r.choice(LAST).title()},{form},CA")]
    style, snip = _style(i // 3 + i, styles)
    return style, form, snip, False


CARD_IINS: list[tuple[Callable[[random.Random], str], int]] = [
    (lambda r: "4", 16), (lambda r: str(r.randint(51, 55)), 16), (lambda r: str(r.randint(2221, 2720)), 16),
    (lambda r: r.choice(["34", "37"]), 15), (lambda r: r.choice(["6011", "65"]), 16),
    (lambda r: str(r.randint(3528, 3589)), 16), (lambda r: "36", 14)]


def v_card(r: random.Random, i: int) -> Value:
    """Card numbers (IIN ranges, Luhn) that a payment service logged."""
    prefix, length = CARD_IINS[i % len(CARD_IINS)]
    head = prefix(r)
    body = head + digits(r, length - len(head) - 1)
    number = body + luhn_digit(body)
    form = [group_card(number, " "), number, group_card(number, "-")][i // 7 % 3]
    exp = f"{r.randint(1, 12):02d}/{r.randint(27, 31)}"
    styles = [("payment_debug", f"DEBUG charge request pan={form} exp={exp} amount=4999 currency=EUR"),
              ("stacktrace", f"ValidationError: card_number '{form}' failed issuer check\n  at Charge.create"),
              ("json_log", _dump({"level": "warn", "event": "authorize", "card": {"number": form, "exp": exp}})),
              ("msg", f"I found a full card number in the checkout logs: {form} (exp {exp}). I've opened a PCI "
                      "incident."),
              ("sql_row", f" id | card_number | status\n----+-------------+--------\n {r.randint(1, 999)} | {form} | "
                          "declined"),
              ("nginx_access", f"{_ip(r)} - - [02/Mar/2026:10:11:12 +0000] \"POST /pay?card={form.replace(' ', '')}"
                               f" HTTP/1.1\" 302 0")]
    style, snip = _style(i // 7 + i, styles)
    if style == "nginx_access":
        form = form.replace(" ", "")
    return style, form, snip, False


IBAN_BBANS = {"DE": "18n", "GB": "4a14n", "FR": "10n11c2n", "ES": "20n", "IT": "1a10n12c", "NL": "4a10n",
              "BE": "12n", "CH": "5n12c", "AT": "16n", "PL": "24n", "PT": "21n", "IE": "4a14n", "SE": "20n",
              "NO": "11n", "DK": "14n", "FI": "14n"}


def v_iban(r: random.Random, i: int) -> Value:
    """IBANs (ISO 13616, registry BBAN structures, MOD 97-10) from payroll and payout services."""
    country = list(IBAN_BBANS)[i % len(IBAN_BBANS)]
    account = bban(r, IBAN_BBANS[country])
    compact = country + iban_check(country, account) + account
    form = group(compact, 4, " ") if i % 3 else compact
    words = {"DE": "Bankverbindung", "FR": "Coordonnées bancaires (RIB)", "ES": "Cuenta", "IT": "Coordinate",
             "NL": "Rekeningnummer", "PL": "Numer rachunku", "PT": "Conta", "SE": "Konto", "NO": "Kontonummer",
             "DK": "Kontonummer", "FI": "Tilinumero", "AT": "Bankverbindung", "CH": "Bankverbindung"}
    label = words.get(country, "Bank details")
    styles = [("payout_log", f"INFO sepa-payout batch {r.randint(100, 999)} creditor iban={form} status=rejected"),
              ("msg", f"{label}: IBAN {form}"),
              ("json_log", _dump({"event": "mandate.created", "debtor": {"iban": form}, "scheme": "SEPA_CORE"})),
              ("pain001", f"<CdtrAcct><Id><IBAN>{compact}</IBAN></Id></CdtrAcct>"),
              ("sql_row", f"INSERT INTO payees (id, iban) VALUES ({r.randint(1, 9999)}, '{form}');")]
    style, snip = _style(i // 5 + i, styles)
    return style, (compact if style == "pain001" else form), snip, False


# ---- tokens, keys and the other extra kinds ---------------------------------------------------------------------

def _jwt(r: random.Random, claims: dict[str, object], alg: str) -> str:
    header = {"alg": alg, "kid": pick(r, URLSAFE, 43) if alg == "RS256" else pick(r, HEX, 16), "typ": "JWT"}
    sig = r.randbytes(256 if alg == "RS256" else 64)
    parts = (json.dumps(part, separators=(",", ":")).encode() for part in (header, claims))
    return ".".join([*(b64url(part) for part in parts), b64url(sig)])


def v_jwt(r: random.Random, i: int) -> Value:
    """JWTs as Kubernetes, Entra ID, GitHub Actions OIDC, Argo CD and Keycloak issue them."""
    now, ns = _epoch(r), _ns(r)
    kind = i % 5
    if kind == 0:
        claims: dict[str, object] = {"aud": ["https://kubernetes.default.svc.cluster.local"], "exp": now + 3600,
                                     "iat": now, "iss": "https://kubernetes.default.svc.cluster.local",
                                     "kubernetes.io": {"namespace": ns, "serviceaccount": {"name": "deployer",
                                                                                           "uid": _uid(r)}},
                                     "sub": f"system:serviceaccount:{ns}:deployer"}
        tok = _jwt(r, claims, "RS256")
        snip = r.choice([f"$ kubectl create token deployer -n {ns} --duration=1h\n{tok}",
                         f"users:\n- name: deployer\n  user:\n    token: {tok}"])
        return "k8s_sa_token", tok, snip, False
    if kind == 1:
        tenant = _uid(r)
        tok = _jwt(r, {"aud": "https://management.azure.com/", "iss": f"https://sts.windows.net/{tenant}/",
                       "iat": now, "nbf": now, "exp": now + 4200, "oid": _uid(r), "tid": tenant, "ver": "1.0"}, "RS256")
        snip = _pretty({"accessToken": tok, "expiresOn": "2026-03-02 11:12:13.000000", "subscription": _uid(r),
                        "tenant": tenant, "tokenType": "Bearer"})
        return "az_get_access_token", tok, "$ az account get-access-token\n" + snip, False
    if kind == 2:
        tok = _jwt(r, {"iss": "https://token.actions.githubusercontent.com", "aud": "sts.amazonaws.com",
                       "sub": "repo:ops/platform:ref:refs/heads/main", "iat": now, "exp": now + 300}, "RS256")
        return "github_oidc", tok, f"ACTIONS_ID_TOKEN={tok}", False
    if kind == 3:
        tok = _jwt(r, {"iss": "argocd", "sub": "ci:apiKey", "nbf": now, "iat": now, "jti": _uid(r)}, "HS256")
        return "argocd_token", tok, f"$ argocd account generate-token --account ci\n{tok}", False
    tok = _jwt(r, {"iss": "https://sso.internal/realms/ops", "typ": "Bearer", "azp": "grafana", "iat": now,
                   "exp": now + 300, "scope": "openid profile"}, "ES256")
    return "keycloak_bearer", tok, f"> GET /api/dashboards HTTP/2\n> authorization: Bearer {tok}", False


def _pem_body(pem: str) -> tuple[str, list[str]]:
    lines = pem.strip().split("\n")
    return lines[0], lines[1:-1]


def _rsa_pkcs8(r: random.Random) -> str:
    """A PKCS#8 PEM of RSA-2048 shape: the DER structure of RFC 8017's RSAPrivateKey filled with random integers."""
    sizes = [2048, 17, 2048, 1024, 1024, 1024, 1024, 1024]
    ints = [r.getrandbits(n) | (1 << (n - 1)) for n in sizes]
    ints[1] = 65537
    rsa = der_seq(der_int(0), *(der_int(n) for n in ints))
    algo = der_seq(bytes.fromhex("06092a864886f70d010101"), b"\x05\x00")
    body = _b64(der_seq(der_int(0), algo, der(0x04, rsa)))
    return "-----BEGIN PRIVATE KEY-----\n" + group(body, 64, "\n") + "\n-----END PRIVATE KEY-----\n"


def _key_pem(r: random.Random, kind: int) -> str:
    if kind == 0:
        key = ed25519.Ed25519PrivateKey.from_private_bytes(r.randbytes(32))
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption()).decode()
    if kind == 1:
        key_ec = ec.derive_private_key(r.randrange(1, 2 ** 255), ec.SECP256R1())
        return key_ec.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                    serialization.NoEncryption()).decode()
    if kind == 2:
        seed = r.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
        blob = openssh_ed25519_blob(seed, public, r.randbytes(4), b"deploy@ci")
        return ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(_b64(blob), 70, "\n")
                + "\n-----END OPENSSH PRIVATE KEY-----\n")
    return _rsa_pkcs8(r)


def v_private_key(r: random.Random, i: int) -> Value:
    """PEM private keys; the secret is the base64 body as the text holds it (newlines, escapes or indentation)."""
    style_no = i % 8
    pem = _key_pem(r, [2, 0, 3, 1, 0, 3, 1, 2][style_no])
    head, body = _pem_body(pem)
    foot = head.replace("BEGIN", "END")
    if style_no == 2:
        sec = "\\n".join(body)
        sa = {"type": "service_account", "project_id": f"ops-{digits(r, 6)}", "private_key_id": pick(r, HEX, 40),
              "private_key": pem, "client_email": f"deployer@ops-{digits(r, 6)}.iam.gserviceaccount.com",
              "client_id": digits(r, 21), "token_uri": "https://oauth2.googleapis.com/token"}
        return "gcp_sa_key_json", sec, "$ cat sa-key.json\n" + _pretty(sa), False
    if style_no == 3:
        sec = "\\n".join(body)
        out = {"type": "tls_private_key", "name": "ingress", "instances": [{"attributes": {
            "algorithm": "ECDSA", "ecdsa_curve": "P256", "private_key_pem": pem}}]}
        return "tfstate_tls_private_key", sec, _pretty(out), False
    if style_no in (4, 6):
        sec = "\n    ".join(body)
        return "helm_values_block", sec, f"tls:\n  key: |\n    {head}\n    {sec}\n    {foot}", False
    sec = "\n".join(body)
    style, command = {0: ("ssh_cat", "cat ~/.ssh/id_ed25519"),
                      1: ("k8s_tls_key", "kubectl get secret ingress-tls -n edge -o jsonpath='{.data.tls\\.key}' | "
                                         "base64 -d"),
                      5: ("vault_pki_issue", "vault write -field=private_key pki_int/issue/internal "
                                             "common_name=api.internal"),
                      7: ("ansible_vault_file", "ansible-vault view files/backup-key.pem")}[style_no]
    return style, sec, f"$ {command}\n{pem.rstrip()}", False


def v_auth_header(r: random.Random, i: int) -> Value:
    """HTTP credentials: Basic (RFC 7617), opaque Bearer (RFC 6750), Keystone tokens, Docker's `auth`."""
    kind = i % 8
    if kind in (0, 3, 6):
        cred = _b64(f"{r.choice(USERS)}:{_password(r)}".encode())
    elif kind == 5:
        cred = "gAAAAAB" + pick(r, URLSAFE, r.randint(170, 200))
    else:
        cred = pick(r, ALNUM + "-._~", r.randint(40, 64))
    styles = [("curl_basic", f"> GET /api/v1/query HTTP/1.1\n> Host: prometheus.internal\n"
                             f"> Authorization: Basic {cred}"),
              ("curl_bearer", f"> POST /v2/deploy HTTP/2\n> authorization: Bearer {cred}\n> content-type: "
                              "application/json"),
              ("nginx_proxy_header", f"location /upstream/ {{\n    proxy_set_header Authorization "
                                     f"\"Bearer {cred}\";\n}}"),
              ("docker_config", _pretty({"auths": {"registry.internal:5000": {"auth": cred}}})),
              ("prometheus_scrape", f"- job_name: vendor\n  authorization:\n    type: Bearer\n    credentials: {cred}"),
              ("keystone_token", f"$ openstack token issue -f value -c id\n{cred}\n$ export OS_TOKEN={cred}"),
              ("haproxy_set_header", f"    http-request set-header Authorization \"Basic {cred}\""),
              ("grafana_datasource", f"jsonData:\n  httpHeaderName1: Authorization\nsecureJsonData:\n"
                                     f"  httpHeaderValue1: Bearer {cred}")]
    style, snip = styles[kind]
    return style, cred, snip, False


def v_session_cookie(r: random.Random, i: int) -> Value:
    """Session cookies of the ops tools (Grafana, Jenkins, Rancher, Kibana, oauth2-proxy, Django, Express)."""
    kind = i % 8
    name, val = [
        ("grafana_session", pick(r, HEX, 32)),
        (f"JSESSIONID.{pick(r, HEX, 8)}", f"node0{pick(r, LOWER + string.digits, 26)}{r.randint(1, 999)}.node0"),
        ("R_SESS", f"token-{pick(r, LOWER + string.digits, 5)}:{pick(r, LOWER + string.digits, 54)}"),
        ("sid", f"Fe26.2**{pick(r, HEX, 64)}*{b64url(r.randbytes(16))}*{b64url(r.randbytes(96))}**"
                f"{pick(r, HEX, 64)}*{b64url(r.randbytes(32))}"),
        ("_oauth2_proxy", f"{b64url(r.randbytes(120))}|{_epoch(r)}|{b64url(r.randbytes(32))}="),
        ("sessionid", pick(r, LOWER + string.digits, 32)),
        ("connect.sid", f"s%3A{pick(r, URLSAFE, 32)}.{pick(r, B64, 43)}"),
        ("PHPSESSID", pick(r, LOWER + string.digits, 26)),
    ][kind]
    styles = [("curl_set_cookie", f"< HTTP/2 302\n< location: /\n< set-cookie: {name}={val}; Path=/; HttpOnly; "
                                  "Secure; SameSite=Lax"),
              ("curl_cookie", f"> GET /api/user HTTP/1.1\n> Cookie: {name}={val}"),
              ("curl_b", f"$ curl -sk -b '{name}={val}' https://ops.internal/api/health"),
              ("har_entry", _pretty({"request": {"method": "GET", "url": "https://ops.internal/",
                                                 "cookies": [{"name": name, "value": val}]}})),
              ("nginx_log_cookie", f"{_ip(r)} - - [02/Mar/2026:10:11:12 +0000] \"GET / HTTP/1.1\" 200 512 "
                                   f"cookie=\"{name}={val}\"")]
    style, snip = _style(i // 8 + i, styles)
    return style, val, snip, False


def _vault_token(r: random.Random, i: int) -> str:
    return ["hvs." + pick(r, ALNUM, 24), "hvs.CAESI" + pick(r, URLSAFE, 86), "s." + pick(r, ALNUM, 24),
            "hvb.AAAAAQ" + pick(r, URLSAFE, 130)][i % 4]


def v_vault_token(r: random.Random, i: int) -> Value:
    """Vault tokens (service `hvs.`, batch `hvb.`, legacy `s.`) where Vault's CLI, API and agents show them."""
    tok = _vault_token(r, i)
    styles = [("operator_init", f"Initial Root Token: {tok}\n\nVault initialized with 5 key shares and a key "
                                "threshold of 3."),
              ("vault_login", f"Success! You are now authenticated.\n\nKey                  Value\n"
                              "---                  "
                              f"-----\ntoken                {tok}\ntoken_accessor       {pick(r, ALNUM, 24)}\n"
                              "token_duration       768h"),
              ("env", f"export VAULT_ADDR=https://vault.internal:8200\nexport VAULT_TOKEN={tok}"),
              ("x_vault_token", f"$ curl -s -H \"X-Vault-Token: {tok}\" https://vault.internal:8200/v1/secret/data/app"),
              ("token_create_json", _pretty({"request_id": _uid(r), "auth": {"client_token": tok,
                                                                            "accessor": pick(r, ALNUM, 24),
                                                                            "policies": ["default", "deploy"],
                                                                            "lease_duration": 2764800}})),
              ("vault_token_file", f"$ cat ~/.vault-token\n{tok}"),
              ("agent_sink", f"[INFO]  agent.sink.file: token written: path=/home/vault/.token token={tok}")]
    style, snip = _style(i // 4 + i, styles)
    return style, tok, snip, False


def v_vault_unseal_key(r: random.Random, i: int) -> Value:
    """Shamir unseal and recovery key shares (33 bytes) as `vault operator init` prints them."""
    share = r.randbytes(33)
    key = share.hex() if i % 4 == 3 else _b64(share)
    styles = [("operator_init", f"Unseal Key {r.randint(1, 5)}: {key}"),
              ("unseal_cmd", f"$ vault operator unseal {key}\nKey             Value\n---             -----\n"
                             "Sealed          true\nUnseal Progress 1/3"),
              ("init_json", _pretty({"unseal_threshold": 3, "unseal_shares": 5, "unseal_keys_b64": [key]})),
              ("recovery_key", f"Recovery Key {r.randint(1, 5)}: {key}"),
              ("sys_unseal_api", f"$ curl -X PUT --data '{{\"key\": \"{key}\"}}' https://vault.internal:8200/v1/sys/unseal")]
    style, snip = _style(i // 4 + i, styles)
    if i % 4 == 3 and style == "init_json":
        snip = _pretty({"unseal_threshold": 3, "unseal_shares": 5, "unseal_keys_hex": [key]})
    return style, key, snip, False


def v_aws_session_token(r: random.Random, i: int) -> Value:
    """STS session tokens: in CLI output, env, credential files, and URL-encoded in presigned URLs."""
    tok = _session_token(r)
    kind = i % 6
    if kind == 5:
        enc = quote(tok, safe="")
        url = (f"https://ops-artifacts.s3.{r.choice(AWS_REGIONS)}.amazonaws.com/build.tgz?X-Amz-Algorithm="
               f"AWS4-HMAC-SHA256&X-Amz-Credential={_aws_id(r, 'ASIA')}%2F20260302%2Fus-east-1%2Fs3%2Faws4_request"
               f"&X-Amz-Date=20260302T101112Z&X-Amz-Expires=3600&X-Amz-Security-Token={enc}&X-Amz-SignedHeaders=host")
        return "presigned_url", enc, url, False
    styles = [("credentials_file", f"[assumed]\naws_access_key_id = {_aws_id(r, 'ASIA')}\naws_session_token = {tok}"),
              ("env", f"AWS_SESSION_TOKEN={tok}"),
              ("ecs_credentials", _pretty({"RoleArn": f"arn:aws:iam::{digits(r, 12)}:role/task", "Token": tok,
                                           "Expiration": _ts(r)[:19] + "Z"})),
              ("sts_get_session_token", f"$ aws sts get-session-token --query Credentials.SessionToken "
                                        f"--output text\n{tok}"),
              ("x_amz_security_token", f"> x-amz-security-token: {tok}")]
    style, snip = styles[kind]
    return style, tok, snip, False


def v_gcp_access_token(r: random.Random, i: int) -> Value:
    """Google OAuth access tokens (`ya29.`) from gcloud, the metadata server and request logs."""
    tok = "ya29.a0" + pick(r, URLSAFE, r.randint(170, 230)) + digits(r, 4)
    styles = [("print_access_token", f"$ gcloud auth print-access-token\n{tok}"),
              ("metadata_server", _pretty({"access_token": tok, "expires_in": 3599, "token_type": "Bearer"})),
              ("curl_bearer", f"curl -H \"Authorization: Bearer {tok}\" https://compute.googleapis.com/compute/v1/"
                              f"projects/ops-{digits(r, 6)}/zones"),
              ("env", f"CLOUDSDK_AUTH_ACCESS_TOKEN={tok}"),
              ("adc_print", f"$ gcloud auth application-default print-access-token\n{tok}"),
              ("terraform_provider", f"provider \"google\" {{\n  access_token = \"{tok}\"\n}}")]
    style, snip = _style(i, styles)
    return style, tok, snip, False


def v_github_token(r: random.Random, i: int) -> Value:
    """GitHub tokens: `ghp_`/`gho_`/`ghs_`/`ghu_` with their CRC32 and fine-grained `github_pat_`."""
    kind = i % 5
    tok = (crc_token(r, ["ghp_", "gho_", "ghs_", "ghu_"][kind]) if kind < 4
           else f"github_pat_11{pick(r, UPPER + string.digits, 20)}_{pick(r, ALNUM, 59)}")
    styles = [("git_remote", f"$ git remote -v\norigin  https://x-access-token:{tok}@github.com/ops/platform.git "
                             "(fetch)"),
              ("gh_auth_status", f"$ gh auth status --show-token\ngithub.com\n  ✓ Logged in to github.com account "
                                 f"ops-bot (keyring)\n  - Token: {tok}"),
              ("env", f"GITHUB_TOKEN={tok}"),
              ("helm_values", f"argocd:\n  repositories:\n    platform:\n      password: {tok}"),
              ("curl_header", f"curl -H 'Authorization: token {tok}' https://api.github.com/repos/ops/platform"),
              ("npmrc", f"//npm.pkg.github.com/:_authToken={tok}")]
    style, snip = _style(i // 5 + i, styles)
    return style, tok, snip, False


def v_registry_token(r: random.Random, i: int) -> Value:
    """Registry and forge tokens: GitLab `glpat-`/`glrt-`, Docker Hub `dckr_pat_`, npm `npm_`, PyPI `pypi-`."""
    kind = i % 5
    tok = ["glpat-" + pick(r, URLSAFE, 20), "glrt-" + pick(r, URLSAFE, 20), "dckr_pat_" + pick(r, URLSAFE, 27),
           crc_token(r, "npm_"), "pypi-AgEIcHlwaS5vcmc" + pick(r, URLSAFE, r.randint(140, 180))][kind]
    frames = [[f"PRIVATE-TOKEN: {tok}", f"GITLAB_TOKEN={tok}", f"glab auth login --token {tok}"],
              [f"$ gitlab-runner register --url https://gitlab.internal --token {tok}", f"  token = \"{tok}\""],
              [f"$ echo {tok} | docker login -u opsbot --password-stdin", f"DOCKERHUB_TOKEN={tok}"],
              [f"//registry.npmjs.org/:_authToken={tok}", f"NPM_TOKEN={tok}"],
              [f"[pypi]\n  username = __token__\n  password = {tok}", f"TWINE_PASSWORD={tok}"]][kind]
    style = ["gitlab_pat", "gitlab_runner", "docker_hub", "npm", "pypi"][kind]
    return style, tok, frames[i // 5 % len(frames)], False


def v_slack_token(r: random.Random, i: int) -> Value:
    """Slack bot, user and app-level tokens of ChatOps bots."""
    tok = [f"xoxb-{digits(r, 12)}-{digits(r, 13)}-{pick(r, ALNUM, 24)}",
           f"xoxp-{digits(r, 12)}-{digits(r, 12)}-{digits(r, 13)}-{pick(r, HEX, 32)}",
           f"xapp-1-A{pick(r, UPPER + string.digits, 10)}-{digits(r, 13)}-{pick(r, HEX, 64)}"][i % 3]
    styles = [("env", f"SLACK_BOT_TOKEN={tok}"), ("helm_values", f"chatops:\n  slack:\n    token: {tok}"),
              ("k8s_stringdata", f"stringData:\n  slack-token: {tok}"),
              ("errbot_config", f"BOT_IDENTITY = {{\n    'token': '{tok}',\n}}"),
              ("curl_auth", f"curl -H 'Authorization: Bearer {tok}' https://slack.com/api/auth.test")]
    style, snip = _style(i // 3 + i, styles)
    return style, tok, snip, False


def v_ops_api_token(r: random.Random, i: int) -> Value:
    """Observability and cloud tokens by their documented prefixes."""
    kind = i % 6
    tok = [f"NRAK-{pick(r, UPPER + string.digits, 27)}", f"glsa_{pick(r, ALNUM, 32)}_{pick(r, HEX, 8)}",
           f"sntryu_{pick(r, HEX, 64)}", f"dop_v1_{pick(r, HEX, 64)}",
           f"{pick(r, ALNUM, 14)}.atlasv1.{pick(r, ALNUM, 67)}", f"dp.st.prd.{pick(r, ALNUM, 43)}"][kind]
    label = ["NEW_RELIC_API_KEY", "GRAFANA_SA_TOKEN", "SENTRY_AUTH_TOKEN", "DIGITALOCEAN_TOKEN",
             "TF_TOKEN_app_terraform_io", "DOPPLER_TOKEN"][kind]
    styles = [("env", f"{label}={tok}"), ("ci_secret_echo", f"+ export {label}={tok}"),
              ("credentials_tfrc", f"credentials \"app.terraform.io\" {{\n  token = \"{tok}\"\n}}"),
              ("helm_set", f"helm upgrade agent ./charts/agent --set auth.token={tok}"),
              ("msg", _msg(r, "key", tok))]
    style, snip = _style(i // 6 + i, styles)
    return style, tok, snip, False


def v_totp_seed(r: random.Random, i: int) -> Value:
    """TOTP seeds (RFC 6238, base32): otpauth URIs, Vault's TOTP engine, AWS virtual MFA seeds, grouped display."""
    seed = base64.b32encode(r.randbytes(r.choice([10, 20]))).decode().rstrip("=")
    kind = i % 6
    if kind == 5:
        shown = " ".join(group(seed.lower(), 4, " ").split())
        return "grouped_display", shown, f"Can't scan the QR code? Enter this key instead:\n{shown}\nTime based", False
    styles = [("otpauth_uri", f"otpauth://totp/Ops%20VPN:oncall?secret={seed}&issuer=Ops%20VPN&algorithm=SHA1&digits=6"),
              ("vault_totp", f"$ vault write totp/keys/oncall generate=true issuer=Vault account_name=oncall\n"
                             "Key        "
                             f"Value\n---        -----\nurl        otpauth://totp/Vault:oncall?algorithm=SHA1&digits=6"
                             f"&issuer=Vault&period=30&secret={seed}"),
              ("aws_mfa_seed", f"$ aws iam create-virtual-mfa-device --virtual-mfa-device-name root-mfa "
                               f"--outfile seed.txt --bootstrap-method Base32StringSeed && cat seed.txt\n{seed}"),
              ("oathtool", f"$ oathtool --totp -b {seed}\n{digits(r, 6)}"),
              ("ansible_var", f"vault_mfa_totp_secret: {seed}")]
    style, snip = styles[kind]
    return style, seed, snip, False


def v_recovery_code(r: random.Random, i: int) -> Value:
    """Account recovery material: GitHub and GitLab codes, Google backup codes, 1Password's Secret Key."""
    kind = i % 4
    code = [f"{pick(r, HEX, 5)}-{pick(r, HEX, 5)}", pick(r, HEX, 16), f"{digits(r, 4)} {digits(r, 4)}",
            "A3-" + "-".join(pick(r, UPPER + string.digits, n) for n in (6, 6, 5, 5, 5, 5))][kind]
    label = ["GitHub recovery code", "GitLab recovery code", "Google backup code", "1Password Secret Key"][kind]
    styles = [("vault_breakglass", f"breakglass_{kind}    {label}: {code}"),
              ("runbook", f"Break-glass: if the SSO admin loses their device, use the {label} {code} (stored in the "
                          "safe copy too)."),
              ("msg", f"{label}: {code}"),
              ("emergency_kit", f"Emergency Kit — {label}\n{code}"),
              ("recovery_file", f"$ head -n 3 ~/Downloads/recovery-codes.txt\n# {label}s (one use each)\n{code}")]
    style, snip = _style(i // 4 + i, styles)
    return style, code, snip, False


def v_k8s_secret_b64(r: random.Random, i: int) -> Value:
    """Kubernetes Secret `data:` values: base64 of the secret, the base64 string being what must not survive."""
    raw = [_password(r), f"postgresql://{r.choice(USERS)}:{_uri_password(r)}@db.{_ns(r)}.svc:5432/app",
           crc_token(r, "ghp_"), pick(r, HEX, 32), _aws_secret(r)][i % 5]
    key = ["password", "DATABASE_URL", "GITHUB_TOKEN", "api-key", "AWS_SECRET_ACCESS_KEY"][i % 5]
    kind = i % 7
    if kind == 5:
        cfg = _dump({"auths": {"registry.internal:5000": {"username": "ci", "password": raw,
                                                         "auth": _b64(f"ci:{raw}".encode())}}})
        enc = _b64(cfg.encode())
        return "dockerconfigjson", enc, (f"apiVersion: v1\ndata:\n  .dockerconfigjson: {enc}\nkind: Secret\n"
                                         "type: kubernetes.io/dockerconfigjson"), False
    if kind == 6:
        enc = _b64(_key_pem(r, 1).encode())
        return "kubeconfig_client_key", enc, (f"users:\n- name: admin@prod\n  user:\n    client-certificate-data: "
                                              f"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n    client-key-data: {enc}"),\
            False
    enc = _b64(raw.encode())
    styles = [("get_secret_yaml", f"$ kubectl get secret app -n {_ns(r)} -o yaml\napiVersion: v1\ndata:\n"
                                  f"  {key}: {enc}\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque"),
              ("get_secret_json", _pretty({"apiVersion": "v1", "kind": "Secret", "data": {key: enc},
                                           "type": "Opaque"})),
              ("jsonpath", f"$ kubectl get secret app -o jsonpath='{{.data.{key}}}'\n{enc}"),
              ("helm_manifest", f"$ helm get manifest app\n---\n# Source: app/templates/secret.yaml\napiVersion: v1\n"
                                f"kind: Secret\ndata:\n  {key}: \"{enc}\""),
              ("kustomize_build", f"$ kustomize build overlays/prod | grep -A2 '^data:'\ndata:\n  {key}: {enc}")]
    style, snip = styles[kind]
    return style, enc, snip, False


# ---- national ids (outside the target) --------------------------------------------------------------------------

VERHOEFF_D = [[(j + k) % 5 + 5 * ((j >= 5) != (k >= 5)) if j < 5 else (j - k) % 5 + 5 * (k < 5) for k in range(10)]
              for j in range(10)]
"""The dihedral group D5's multiplication table, numbered as Verhoeff (1969) numbers its elements."""
VERHOEFF_P = [list(range(10))]
for _ in range(7):
    VERHOEFF_P.append([[1, 5, 7, 6, 2, 8, 3, 0, 9, 4][d] for d in VERHOEFF_P[-1]])
"""The position permutations: the powers of (0 1 5 8 9 4 2 7)(3 6)."""
VERHOEFF_INV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def verhoeff_digit(partial: str) -> str:
    """The Verhoeff check digit (dihedral group D5) that completes `partial`, as UIDAI uses for Aadhaar."""
    c = 0
    for k, ch in enumerate(reversed(partial)):
        c = VERHOEFF_D[c][VERHOEFF_P[(k + 1) % 8][int(ch)]]
    return str(VERHOEFF_INV[c])


def _es_dni(r: random.Random) -> str:
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if r.random() < 0.3:
        lead, num = r.choice("XYZ"), digits(r, 7)
        return f"{lead}{num}{letters[int(str('XYZ'.index(lead)) + num) % 23]}"
    num = f"{r.randint(1, 99999999):08d}"
    return f"{num}{letters[int(num) % 23]}"


def _br_cpf(r: random.Random) -> str:
    d = [r.randint(0, 9) for _ in range(9)]
    for n in (10, 11):
        d.append((sum(x * w for x, w in zip(d, range(n, 1, -1), strict=True)) * 10) % 11 % 10)
    s = "".join(map(str, d))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


def _pl_pesel(r: random.Random) -> str:
    year, month, day = r.randint(1950, 2009), r.randint(1, 12), r.randint(1, 28)
    s = f"{year % 100:02d}{month + (20 if year >= 2000 else 0):02d}{day:02d}{digits(r, 4)}"
    return s + str((10 - sum(int(c) * w for c, w in zip(s, [1, 3, 7, 9] * 3, strict=False)) % 10) % 10)


def _nl_bsn(r: random.Random) -> str:
    while True:
        s = str(r.randint(1, 9)) + digits(r, 7)
        for last in range(10):
            if (sum(int(c) * w for c, w in zip(s, range(9, 1, -1), strict=True)) - last) % 11 == 0:
                return s + str(last)


def _in_aadhaar(r: random.Random) -> str:
    s = str(r.randint(2, 9)) + digits(r, 10)
    s += verhoeff_digit(s)
    return group(s, 4, " ")


def _tr_tckn(r: random.Random) -> str:
    d = [r.randint(1, 9)] + [r.randint(0, 9) for _ in range(8)]
    d.append(((d[0] + d[2] + d[4] + d[6] + d[8]) * 7 - (d[1] + d[3] + d[5] + d[7])) % 10)
    d.append(sum(d) % 10)
    return "".join(map(str, d))


def _fr_nir(r: random.Random) -> str:
    s = f"{r.randint(1, 2)}{r.randint(50, 99):02d}{r.randint(1, 12):02d}{r.randint(1, 95):02d}{r.randint(1, 990):03d}" \
        f"{r.randint(1, 999):03d}"
    key = 97 - int(s) % 97
    return f"{s[0]} {s[1:3]} {s[3:5]} {s[5:7]} {s[7:10]} {s[10:13]} {key:02d}"


IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "es_dni": (_es_dni, ["DNI/NIE del empleado", "NIF"]),
    "br_cpf": (_br_cpf, ["CPF do titular", "CPF"]),
    "pl_pesel": (_pl_pesel, ["PESEL pracownika", "nr PESEL"]),
    "nl_bsn": (_nl_bsn, ["BSN medewerker", "burgerservicenummer"]),
    "in_aadhaar": (_in_aadhaar, ["Aadhaar", "आधार संख्या"]),
    "tr_tckn": (_tr_tckn, ["T.C. Kimlik No", "TCKN"]),
    "fr_nir": (_fr_nir, ["N° de sécurité sociale", "NIR"]),
}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    """A value function for one national id: leaked by HR, payroll and KYC services into logs."""
    make, labels = IDS[kind]

    def gen(r: random.Random, i: int) -> Value:
        num, label = make(r), labels[i % len(labels)]
        styles = [("app_log", f"WARN hr-sync validation failed {label}={num} employee={r.randint(1000, 99999)}"),
                  ("json_log", _dump({"level": "error", "service": "kyc", "fields": {label: num}})),
                  ("msg", f"{label}: {num}"),
                  ("sql_log", f"LOG:  execute <unnamed>: SELECT * FROM people WHERE national_id = '{num}'")]
        style, snip = _style(i // len(labels) + i, styles)
        return style, num, snip, False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "private_key": v_private_key, "auth_header": v_auth_header, "session_cookie": v_session_cookie,
    "vault_token": v_vault_token, "vault_unseal_key": v_vault_unseal_key, "aws_session_token": v_aws_session_token,
    "gcp_access_token": v_gcp_access_token, "github_token": v_github_token, "registry_token": v_registry_token,
    "slack_token": v_slack_token, "ops_api_token": v_ops_api_token, "totp_seed": v_totp_seed,
    "recovery_code": v_recovery_code, "k8s_secret_b64": v_k8s_secret_b64,
    **{k: national_id(k) for k in IDS}}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists."""
    _style_name, secret, snip, raw_only = value
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

def _certificate(r: random.Random) -> x509.Certificate:
    """A self-signed Ed25519 certificate (public material: what TLS servers hand every client)."""
    key = ed25519.Ed25519PrivateKey.from_private_bytes(r.randbytes(32))
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{_app(r)}.{_ns(r)}.svc.cluster.local")])
    start = datetime.datetime(2026, r.randint(1, 12), r.randint(1, 28), tzinfo=datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(r.getrandbits(120) + 1).not_valid_before(start)
            .not_valid_after(start + datetime.timedelta(days=90)).sign(key, None))


def _luhn_bad(r: random.Random) -> str:
    body = r.choice(["4", "5", "37"]) + digits(r, 13)
    return body + str((int(luhn_digit(body)) + r.randint(1, 9)) % 10)


def _ssh_public(r: random.Random) -> str:
    public = ed25519.Ed25519PrivateKey.from_private_bytes(r.randbytes(32)).public_key().public_bytes_raw()
    return _b64(ssh_string(b"ssh-ed25519") + ssh_string(public))


def _vault_ciphertext(r: random.Random) -> str:
    body = pick(r, HEX, 80 * r.randint(3, 6))
    return "$ANSIBLE_VAULT;1.1;AES256\n" + group(body, 80, "\n")


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "k8s_uid": lambda r: f"metadata:\n  uid: {_uid(r)}\n  resourceVersion: \"{r.randint(10 ** 5, 10 ** 9)}\"\n"
                         f"  generation: {r.randint(1, 90)}\n  creationTimestamp: \"{_ts(r)[:19]}Z\"",
    "image_digest": lambda r: f"Image ID: registry.internal/{_app(r)}@sha256:{pick(r, HEX, 64)}\n"
                              f"Container ID: containerd://{pick(r, HEX, 64)}",
    "pod_name": lambda r: f"pod/{_pod(r)}   1/1   Running   {r.randint(0, 9)}   {r.randint(1, 72)}h   {_ip(r)}   "
                          f"{_host(r)}",
    "aws_resource_id": lambda r: f"arn:aws:iam::{digits(r, 12)}:role/eks-node-{_ns(r)} instance i-0{pick(r, HEX, 16)} "
                                 f"sg-0{pick(r, HEX, 16)} subnet-0{pick(r, HEX, 16)} ami-0{pick(r, HEX, 16)}",
    "aws_request_id": lambda r: f"< x-amz-request-id: {pick(r, UPPER[:6] + string.digits, 16)}\n< x-amz-id-2: "
                                f"{_b64(r.randbytes(57))}\nRequestId: {_uid(r)}",
    "trace_id": lambda r: f"traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01 x-request-id={_uid(r)} "
                          f"span_id={pick(r, HEX, 16)}",
    "ssh_fingerprint": lambda r: r.choice([
        f"ED25519 key fingerprint is SHA256:{_b64(r.randbytes(32)).rstrip('=')}.",
        f"{_host(r)},{_ip(r)} ssh-ed25519 {_ssh_public(r)}",
        f"Authenticated to bastion-01 using \"publickey\" (ssh-ed25519 SHA256:{_b64(r.randbytes(32)).rstrip('=')})"]),
    "certificate_pem": lambda r: _certificate(r).public_bytes(serialization.Encoding.PEM).decode().rstrip(),
    "cert_fingerprint": lambda r: "sha256 Fingerprint=" + ":".join(
        f"{b:02X}" for b in _certificate(r).fingerprint(hashes.SHA256())),
    "lock_hash": lambda r: f'provider "registry.terraform.io/hashicorp/aws" {{\n  version = "5.{r.randint(30, 90)}.0"'
                           f'\n  hashes = [\n    "h1:{_b64(r.randbytes(32))}",\n    "zh:{pick(r, HEX, 64)}",\n  ]\n}}',
    "committed_ciphertext": lambda r: r.choice([
        f"db_password: !vault |\n  {_vault_ciphertext(r)}",
        f"password: ENC[AES256_GCM,data:{_b64(r.randbytes(18))},iv:{_b64(r.randbytes(32))},"
        f"tag:{_b64(r.randbytes(16))},type:str]",
        f"spec:\n  encryptedData:\n    password: AgB{pick(r, B64, 681)}="]),
    "secret_reference": lambda r: r.choice([
        "env:\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db-credentials\n      key: password",
        "aws-access-key-id: ${{ secrets.AWS_ACCESS_KEY_ID }}",
        f"arn:aws:secretsmanager:eu-west-1:{digits(r, 12)}:secret:prod/db-{pick(r, ALNUM, 6)}",
        f"vault kv get -field=password secret/{_ns(r)}/db", "password: \"{{ .Values.postgresql.auth.password }}\"",
        "token: \"{{ lookup('community.hashi_vault.vault_kv2_get', 'app').secret.token }}\""]),
    "sensitive_marker": lambda r: r.choice([
        "  ~ password = (sensitive value)", "db_password = <sensitive>",
        f'"sensitive_attributes": [[{{"type": "get_attr", "value": "password"}}]], "serial": {r.randint(1, 900)}',
        "Changes to Outputs:\n  + connection_string = (sensitive value)",
        "# (1 unchanged attribute hidden)\n      # Warning: this attribute value will be marked as sensitive"]),
    "masked": lambda r: r.choice([
        f"token    hvs.{'*' * 24}", f"AWS_SECRET_ACCESS_KEY=****************{pick(r, ALNUM, 4)}",
        "password: ********", f"Authorization: Bearer [REDACTED] (len={r.randint(40, 900)})",
        f"card **** **** **** {digits(r, 4)}", f"xoxb-{'*' * 10}", "DATABASE_URL=postgresql://app:***@db:5432/app"]),
    "placeholder": lambda r: r.choice([
        "export VAULT_TOKEN=<your-vault-token>", "STRIPE_WEBHOOK_SECRET=whsec_REPLACE_ME",
        "email: you@example.com", "contact: ops-team@example.org (replace before deploying)",
        "password: ${DB_PASSWORD:?must be set}", "slack_api_url: <slack-webhook-url>",
        "GITHUB_TOKEN=${{ github.token }}"]),
    "doc_example": lambda r: r.choice([
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "whsec_... (copy it from the Dashboard)", "curl -u username:password https://example.com",
        "Example: export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]),
    "version_string": lambda r: f"Client Version: v1.{r.randint(27, 32)}.{r.randint(0, 9)}\nKustomize Version: "
                                f"v5.0.4-0.2023{digits(r, 10)}-{pick(r, HEX, 12)}\nServer Version: "
                                f"v1.{r.randint(27, 31)}.{r.randint(0, 9)}-eks-{pick(r, HEX, 7)}",
    "timestamp": lambda r: f"__REALTIME_TIMESTAMP={_epoch(r)}{digits(r, 6)} _BOOT_ID={pick(r, HEX, 32)} "
                           f"_SOURCE_MONOTONIC_TIMESTAMP={r.randint(10 ** 6, 10 ** 11)} at {_ts(r)}",
    "network": lambda r: f"podCIDR 10.{r.randint(0, 255)}.{r.randint(0, 255)}.0/24, service {_ip(r)}:"
                         f"{r.choice([443, 8080, 9090, 5432])}, node 172.{r.randint(16, 31)}.{r.randint(0, 255)}."
                         f"{r.randint(1, 254)}, fd00:{pick(r, HEX, 4)}::{r.randint(1, 99)}/64",
    "resource_quantity": lambda r: f"resources:\n  requests:\n    cpu: {r.randint(1, 20) * 50}m\n    memory: "
                                   f"{r.choice([128, 256, 512, 1024])}Mi\n  limits:\n    memory: "
                                   f"{r.randint(1, 16)}Gi\nreplicas: {r.randint(1, 12)}",
    "service_number": lambda r: r.choice([
        f"Carrier NOC (toll-free): 1-800-{r.randint(200, 999)}-{digits(r, 4)}",
        f"Freephone support 0800 {digits(r, 3)} {digits(r, 4)}", f"Support : 0 800 {digits(r, 2)} {digits(r, 2)} "
        f"{digits(r, 2)} (service & appel gratuits)", f"Kostenlose Hotline 0800 {digits(r, 7)}",
        f"Toll free 1800-{digits(r, 3)}-{digits(r, 4)}"]),
    "luhn_invalid": lambda r: f"Order {_luhn_bad(r)} shipped; invoice ref {_luhn_bad(r)[:12]}",
    "ticket_id": lambda r: f"INC-{r.randint(1000, 99999)} / PD #{r.randint(10 ** 4, 10 ** 6)} / "
                           f"CHG00{digits(r, 5)} / OPS-{r.randint(10, 9999)}, fixed in {pick(r, HEX, 40)}",
    "tracking_number": lambda r: f"RMA-{digits(r, 6)}: replacement NVMe shipped, UPS 1Z"
                                 f"{pick(r, UPPER + string.digits, 6)}"
                                 f"{digits(r, 10)}, FedEx {digits(r, 12)}",
    "field_name": lambda r: r.choice([
        "required: [client_id, client_secret, refresh_token]", "X-CSRF-Token header missing",
        "<input type=\"hidden\" name=\"authenticity_token\">", "unknown field \"aws_secret_access_key\" in "
        "provider block", "Please set VAULT_TOKEN or run vault login", "missing key 'password' in secret db-creds"]),
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
