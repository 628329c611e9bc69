"""The twenty-sixth blind redaction corpus: coding agents' changes and the CI around them, what an agent's
trajectory and a repository's automation hold. Written from the formats' public specifications by someone who read
neither the detection rules nor the other corpora's values.

Carriers (the `form` head): unified diffs (`git diff`, with the value on `+` lines of .env, YAML, JSON, TOML,
properties, Terraform, Helm values, docker-compose, Kubernetes and notebook hunks), `git log -p` output (the value on
`-` lines, removed but still in history), commit messages with trailers, pull request descriptions, review
comments quoting code, GitHub Actions logs (a timestamp before every line, `##[group]` markers, ANSI colours), GitLab
CI logs (`section_start` markers), CircleCI, Jenkins (timestamper prefixes) and Buildkite (`_bk;t=` prefixes) logs,
`terraform plan` output, pytest and jest failure output, secret scanners' and linters' reports (gitleaks,
trufflehog, ruff S105), SWE-agent trajectories (THOUGHT/ACTION/OBSERVATION), issue threads and the agent's messages
to its user in 27 languages besides English (labels in the user's language). JSON carriers: GitHub review-comment
and issue-comment API payloads, OpenHands event streams, SWE-agent `.traj` files, Jupyter notebooks, check-run
outputs, SARIF 2.1.0 reports, chat-completion tool messages, `terraform show -json` plans and assistant replies.
About a third is JSON carried (`is_json`); a value spread over lines that a carrier prefixes (diff `+`, log
timestamps, quotes) is recorded as the span the carrier wrote, prefixes included.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT
IBAN registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not
0000; the publicised 078-05-1120 and 123-45-6789 left out); phones, the national numbering plans (NANP, Ofcom,
ARCEP, BNetzA, TRAI/DoT) with each country's context words, the plans' drama/fiction ranges left out; AWS keys,
IAM's documented AKIA/ASIA ids (base32) and 40-character secrets; webhooks as their docs print them (Slack,
Discord, Teams, Power Automate `sig=`, Google Chat `token=`, Mattermost, Zapier, Feishu, DingTalk, WeCom: the secret
is the token-bearing segment or query value); Stripe `whsec_` signing secrets (dashboard base62 and the CLI's 64
hex); connection strings as URI, JDBC, ADO.NET, ODBC, Azure Storage and Service Bus (the secret is the password or
key only); JWT (RFC 7519/7515), HTTP Basic (RFC 7617), `.netrc`, Docker `config.json` `auth`; PEM PKCS#8/SEC1
(RFC 5958/5915) and OpenSSH (PROTOCOL.key) private keys; GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` (CRC32) and
`github_pat_` tokens; GitLab `glpat-`, `gldt-`, `glrt-`, `glptt-`; npm `npm_` (CRC32); PyPI `pypi-` macaroons;
Slack `xoxb-`/`xoxp-`/`xapp-`; provider keys by their documented prefixes (OpenAI, Anthropic, Hugging Face, Groq,
Docker Hub, Stripe `sk_live_`/`rk_live_`, Shopify, Databricks, SendGrid, Linear, Google `AIza`, DigitalOcean,
Sentry, Vault); session cookies (Django, Rails, Express, PHP, Flask, ASP.NET Core, Laravel); TOTP seeds (RFC
4226/6238 base32, Google Authenticator `otpauth://` URIs); recovery codes (GitHub, GitLab, Google, Microsoft,
PyPI, Discord); national ids (outside the target): Finnish HETU (mod 31), Swedish personnummer (Luhn), Norwegian
fodselsnummer (two mod 11), Belgian national number (mod 97), Chinese resident id (ISO 7064 MOD 11-2), Polish
PESEL (weights 1-3-7-9), Brazilian CPF (two mod 11).

Judgements: a case's `secret` is only what must not survive (a webhook's token, a connection string's password, a
cookie's value, a header's credential, a whole PEM block). A personal email in a `Co-authored-by:` trailer is
personal data, a bot's role address is not planted at all. Providers' published test card numbers and the
numbering plans' fiction ranges are kept out of both values and near misses. Near misses are what this domain holds
that is neither secret nor personal: commit and blob hashes, CSS selectors and element ids, XPath, click
coordinates and viewport sizes, CI timestamps, request and trace ids, cache-busting file hashes, CSRF field and
header names, placeholders and secret references (`${{ secrets.X }}`, `secretKeyRef`), masked values (`***`),
versions, lockfile integrity hashes and image digests, businesses' published service numbers, Luhn-invalid
numbers, order and tracking numbers, public keys, AWS resource ids, test statistics, linter positions, the AWS
docs' EXAMPLE keys and CI run ids: none of them identifies a person or opens anything.
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
    luhn_ok,
    openssh_ed25519_blob,
    pick,
    ssh_string,
)

SEED = 26
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"fi_hetu", "se_pnr", "no_fnr", "be_nrn", "cn_rid", "pl_pesel", "br_cpf"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
UPNUM = string.ascii_uppercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
PW_SYMBOLS = "!#%*+-.?@^_~"


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
"""(style, secret, snippet holding the secret, raw_only: the snippet goes into JSON text as written, unescaped)."""

# ---- the user's languages -------------------------------------------------------------------------------------

CONCEPTS = ("password", "api_key", "token", "email", "phone", "card", "iban", "ssn", "recovery", "setup_key", "id")
LABELS: dict[str, tuple[str, ...]] = {
    "de": ("Passwort", "API-Schlüssel", "Token", "E-Mail", "Telefon", "Kartennummer", "IBAN",
           "US-Sozialversicherungsnummer", "Wiederherstellungscode", "Einrichtungsschlüssel", "Ausweisnummer"),
    "fr": ("Mot de passe", "Clé API", "Jeton", "E-mail", "Téléphone", "Numéro de carte", "IBAN",
           "Numéro de sécurité sociale américain", "Code de récupération", "Clé de configuration",
           "Numéro d'identité"),
    "es": ("Contraseña", "Clave de API", "Token", "Correo electrónico", "Teléfono", "Número de tarjeta", "IBAN",
           "Número de Seguro Social", "Código de recuperación", "Clave de configuración", "Número de identificación"),
    "it": ("Password", "Chiave API", "Token", "E-mail", "Telefono", "Numero della carta", "IBAN",
           "Numero di previdenza sociale USA", "Codice di recupero", "Chiave di configurazione", "Numero di documento"),
    "pt": ("Senha", "Chave de API", "Token", "E-mail", "Telefone", "Número do cartão", "IBAN",
           "Número do Seguro Social", "Código de recuperação", "Chave de configuração", "Número de identificação"),
    "nl": ("Wachtwoord", "API-sleutel", "Token", "E-mailadres", "Telefoon", "Kaartnummer", "IBAN",
           "Social Security-nummer", "Herstelcode", "Instellingssleutel", "Identiteitsnummer"),
    "pl": ("Hasło", "Klucz API", "Token", "E-mail", "Telefon", "Numer karty", "IBAN",
           "Numer ubezpieczenia społecznego (SSN)", "Kod odzyskiwania", "Klucz konfiguracji",
           "Numer identyfikacyjny"),
    "sv": ("Lösenord", "API-nyckel", "Token", "E-post", "Telefon", "Kortnummer", "IBAN",
           "Amerikanskt socialförsäkringsnummer", "Återställningskod", "Konfigurationsnyckel", "ID-nummer"),
    "da": ("Adgangskode", "API-nøgle", "Token", "E-mail", "Telefon", "Kortnummer", "IBAN",
           "Amerikansk socialsikringsnummer", "Gendannelseskode", "Opsætningsnøgle", "ID-nummer"),
    "nb": ("Passord", "API-nøkkel", "Token", "E-post", "Telefon", "Kortnummer", "IBAN",
           "Amerikansk trygdenummer (SSN)", "Gjenopprettingskode", "Oppsettnøkkel", "ID-nummer"),
    "fi": ("Salasana", "API-avain", "Tunniste", "Sähköposti", "Puhelin", "Kortin numero", "IBAN",
           "Yhdysvaltain sosiaaliturvatunnus", "Palautuskoodi", "Määritysavain", "Henkilötunnus"),
    "cs": ("Heslo", "Klíč API", "Token", "E-mail", "Telefon", "Číslo karty", "IBAN",
           "Americké číslo sociálního zabezpečení", "Kód pro obnovení", "Konfigurační klíč", "Číslo dokladu"),
    "hu": ("Jelszó", "API-kulcs", "Token", "E-mail", "Telefon", "Kártyaszám", "IBAN",
           "Amerikai társadalombiztosítási szám", "Helyreállítási kód", "Beállítási kulcs", "Azonosítószám"),
    "ro": ("Parolă", "Cheie API", "Token", "E-mail", "Telefon", "Numărul cardului", "IBAN",
           "Număr de asigurare socială (SUA)", "Cod de recuperare", "Cheie de configurare", "Număr de identificare"),
    "tr": ("Şifre", "API anahtarı", "Belirteç", "E-posta", "Telefon", "Kart numarası", "IBAN",
           "ABD Sosyal Güvenlik Numarası", "Kurtarma kodu", "Kurulum anahtarı", "Kimlik numarası"),
    "ru": ("Пароль", "API-ключ", "Токен", "Эл. почта", "Телефон", "Номер карты", "IBAN",
           "Номер социального страхования США", "Код восстановления", "Ключ настройки", "Номер документа"),
    "uk": ("Пароль", "API-ключ", "Токен", "Ел. пошта", "Телефон", "Номер картки", "IBAN",
           "Номер соціального страхування США", "Код відновлення", "Ключ налаштування", "Номер документа"),
    "el": ("Κωδικός πρόσβασης", "Κλειδί API", "Διακριτικό", "Email", "Τηλέφωνο", "Αριθμός κάρτας", "IBAN",
           "Αριθμός κοινωνικής ασφάλισης ΗΠΑ", "Κωδικός ανάκτησης", "Κλειδί ρύθμισης", "Αριθμός ταυτότητας"),
    "ja": ("パスワード", "APIキー", "トークン", "メールアドレス", "電話番号", "カード番号", "IBAN",
           "米国社会保障番号", "リカバリーコード", "セットアップキー", "身分証番号"),
    "zh": ("密码", "API 密钥", "令牌", "电子邮件", "电话", "卡号", "IBAN", "美国社会安全号码", "恢复码", "设置密钥",
           "证件号码"),
    "ko": ("비밀번호", "API 키", "토큰", "이메일", "전화번호", "카드 번호", "IBAN", "미국 사회보장번호",
           "복구 코드", "설정 키", "신분증 번호"),
    "hi": ("पासवर्ड", "API कुंजी", "टोकन", "ईमेल", "फ़ोन", "कार्ड नंबर", "IBAN", "अमेरिकी सामाजिक सुरक्षा नंबर",
           "रिकवरी कोड", "सेटअप कुंजी", "पहचान संख्या"),
    "ar": ("كلمة المرور", "مفتاح API", "الرمز المميز", "البريد الإلكتروني", "الهاتف", "رقم البطاقة", "IBAN",
           "رقم الضمان الاجتماعي الأمريكي", "رمز الاسترداد", "مفتاح الإعداد", "رقم الهوية"),
    "he": ("סיסמה", "מפתח API", "אסימון", "דוא״ל", "טלפון", "מספר כרטיס", "IBAN", "מספר ביטוח לאומי אמריקאי",
           "קוד שחזור", "מפתח הגדרה", "מספר זהות"),
    "id": ("Kata sandi", "Kunci API", "Token", "Email", "Telepon", "Nomor kartu", "IBAN",
           "Nomor Jaminan Sosial AS", "Kode pemulihan", "Kunci penyiapan", "Nomor identitas"),
    "vi": ("Mật khẩu", "Khóa API", "Token", "Email", "Điện thoại", "Số thẻ", "IBAN", "Số an sinh xã hội Hoa Kỳ",
           "Mã khôi phục", "Khóa thiết lập", "Số định danh"),
    "th": ("รหัสผ่าน", "คีย์ API", "โทเคน", "อีเมล", "โทรศัพท์", "หมายเลขบัตร", "IBAN", "หมายเลขประกันสังคมสหรัฐฯ",
           "รหัสกู้คืน", "คีย์ตั้งค่า", "เลขประจำตัว"),
}
FRAMES: dict[str, tuple[str, str]] = {
    "de": ("Erledigt – ich habe die Konfiguration angepasst und die Tests laufen grün. Zur Info:",
           "Bitte nach dem Testlauf austauschen."),
    "fr": ("C'est fait : j'ai mis à jour la configuration et les tests passent. Pour mémoire :",
           "Pensez à le renouveler après les tests."),
    "es": ("Listo: actualicé la configuración y las pruebas pasan. Para referencia:",
           "Por favor, cámbialo después de las pruebas."),
    "it": ("Fatto: ho aggiornato la configurazione e i test passano. Per riferimento:",
           "Ricordati di cambiarlo dopo i test."),
    "pt": ("Pronto: atualizei a configuração e os testes passaram. Para referência:",
           "Por favor, troque depois dos testes."),
    "nl": ("Klaar: ik heb de configuratie bijgewerkt en de tests slagen. Ter referentie:",
           "Vervang dit na de testrun."),
    "pl": ("Gotowe: zaktualizowałem konfigurację i testy przechodzą. Dla przypomnienia:", "Zmień to po testach."),
    "sv": ("Klart: jag har uppdaterat konfigurationen och testerna går igenom. För referens:",
           "Byt ut det efter testkörningen."),
    "da": ("Færdig: jeg har opdateret konfigurationen, og testene består. Til reference:",
           "Skift det efter testkørslen."),
    "nb": ("Ferdig: jeg har oppdatert konfigurasjonen, og testene går gjennom. Til referanse:",
           "Bytt det etter testkjøringen."),
    "fi": ("Valmis: päivitin asetukset ja testit menevät läpi. Tiedoksi:", "Vaihda se testiajon jälkeen."),
    "cs": ("Hotovo: aktualizoval jsem konfiguraci a testy procházejí. Pro informaci:", "Po testech to prosím změňte."),
    "hu": ("Kész: frissítettem a konfigurációt, a tesztek lefutnak. Tájékoztatásul:", "A tesztek után cseréld le."),
    "ro": ("Gata: am actualizat configurația și testele trec. Pentru referință:", "Te rog să-l schimbi după teste."),
    "tr": ("Tamam: yapılandırmayı güncelledim ve testler geçiyor. Bilginize:", "Testlerden sonra lütfen değiştirin."),
    "ru": ("Готово: я обновил конфигурацию, тесты проходят. Для справки:", "Пожалуйста, смените его после тестов."),
    "uk": ("Готово: я оновив конфігурацію, тести проходять. Для довідки:", "Будь ласка, змініть його після тестів."),
    "el": ("Έτοιμο: ενημέρωσα τις ρυθμίσεις και τα τεστ περνούν. Για αναφορά:", "Αλλάξτε το μετά τις δοκιμές."),
    "ja": ("対応しました。設定を更新し、テストも通っています。参考までに：", "テスト後に必ず変更してください。"),
    "zh": ("已完成：配置已更新，测试全部通过。供参考：", "测试结束后请及时更换。"),
    "ko": ("완료했습니다. 설정을 업데이트했고 테스트도 통과했어요. 참고로:", "테스트 후에는 꼭 교체해 주세요."),
    "hi": ("हो गया: मैंने कॉन्फ़िगरेशन अपडेट कर दिया है और टेस्ट पास हो रहे हैं। संदर्भ के लिए:",
           "टेस्ट के बाद इसे बदल दें।"),
    "ar": ("تم: حدّثت الإعدادات ونجحت الاختبارات. للعلم:", "يرجى تغييره بعد الاختبار."),
    "he": ("בוצע: עדכנתי את ההגדרות והבדיקות עוברות. לידיעתך:", "נא להחליף אחרי הבדיקות."),
    "id": ("Selesai: konfigurasi sudah saya perbarui dan tes lulus. Sebagai referensi:",
           "Tolong ganti setelah pengujian."),
    "vi": ("Xong rồi: tôi đã cập nhật cấu hình và các bài test đều qua. Để tham khảo:",
           "Vui lòng đổi sau khi chạy thử."),
    "th": ("เรียบร้อยแล้ว: อัปเดตการตั้งค่าและเทสต์ผ่านหมดแล้ว ข้อมูลอ้างอิง:", "กรุณาเปลี่ยนหลังการทดสอบ"),
}
LANGS = tuple(LABELS)
SEPARATORS = {"fr": " : ", "ja": "：", "zh": "："}


def _said(lang: str, concept: str, text: str) -> str:
    """`text` after the concept's label in `lang`, with that language's label separator."""
    return f"{LABELS[lang][CONCEPTS.index(concept)]}{SEPARATORS.get(lang, ': ')}{text}"


# ---- shared pieces --------------------------------------------------------------------------------------------

FIRST = ("Amelia", "Lukas", "Chloe", "Mateo", "Aiko", "Priya", "Oluwaseun", "Sofia", "Jakub", "Ingrid", "Tomasz",
         "Mehmet", "Nadia", "Joao", "Hanna", "Rahul", "Camille", "Erik", "Yuna", "Diego", "Fatima", "Liam", "Anja",
         "Kwame")
LAST = ("Hughes", "Becker", "Lefebvre", "Garcia", "Tanaka", "Raman", "Adeyemi", "Rossi", "Nowak", "Lindqvist",
        "Kowalski", "Yilmaz", "Haddad", "Pereira", "Virtanen", "Sharma", "Moreau", "Johansen", "Park", "Torres",
        "Benali", "Murphy", "Horvat", "Mensah")
MAIL_DOMAINS = ("gmail.com", "outlook.com", "hotmail.co.uk", "yahoo.fr", "web.de", "gmx.net", "icloud.com",
                "proton.me", "t-online.de", "orange.fr", "naver.com", "yandex.ru", "rediffmail.com", "wp.pl",
                "libero.it", "fastmail.com", "northwind-labs.io", "acme-robotics.de")
WORDS = ("harbor", "copper", "violet", "meadow", "falcon", "pickle", "orbit", "tundra", "maple", "quartz", "sable",
         "ember", "lagoon", "rocket", "walnut", "zephyr")
ORGS = ("northwind", "acme-robotics", "bluefin", "tidepool", "quarry-labs", "helix")
REPOS = ("api-gateway", "billing-service", "web-frontend", "infra", "data-pipeline", "mobile-app")


def _hex(rng: random.Random, n: int) -> str:
    return pick(rng, HEX, n)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _name(rng: random.Random) -> tuple[str, str]:
    return rng.choice(FIRST), rng.choice(LAST)


def _pw(rng: random.Random) -> str:
    """A password as people and generators make them: two words, a symbol and digits, or 16-28 random characters."""
    if rng.random() < 0.4:
        return f"{rng.choice(WORDS).capitalize()}{rng.choice(PW_SYMBOLS)}{rng.choice(WORDS)}{digits(rng, 3)}"
    return pick(rng, ALNUM, 4) + pick(rng, ALNUM + PW_SYMBOLS, rng.randint(12, 24))


def _url_pw(rng: random.Random) -> str:
    """A password that needs no percent-encoding in a URI's userinfo (RFC 3986 unreserved characters)."""
    return pick(rng, ALNUM, 6) + pick(rng, ALNUM + "-_.~", rng.randint(12, 22))


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _yaml(value: str) -> str:
    """A YAML scalar, double-quoted where a plain one could not start with this character."""
    return f'"{value}"' if value[0] in "!&*%@`'{[|>#?-:,~" else value


CONFIG_STYLES = ("env", "yaml", "json", "toml", "properties", "terraform", "helm", "compose", "k8s", "notebook")


def _config(style: str, key: str, value: str) -> str:
    """`key` set to `value` as a line (or a small block) of one of the files agents edit and commit."""
    snake, upper = key.lower(), key.upper()
    return {
        "env": f"{upper}={value}",
        "yaml": f"{snake}: {_yaml(value)}",
        "json": f'"{_camel(snake)}": "{value}",',
        "toml": f'{snake} = "{value}"',
        "properties": f"app.{snake.replace('_', '.')}={value}",
        "terraform": f'  {snake} = "{value}"',
        "helm": f"secrets:\n  {_camel(snake)}: \"{value}\"",
        "compose": f"    environment:\n      {upper}: {_yaml(value)}",
        "k8s": f"stringData:\n  {snake.replace('_', '-')}: {_yaml(value)}",
        "notebook": f'os.environ["{upper}"] = "{value}"',
    }[style]


def _choose(i: int, lang: str | None, secret: str, key: str, forms: list[tuple[str, str]], *, concept: str = "token",
            value: str | None = None, bare: str | None = None, raw: bool = False) -> Value:
    """The i-th of a kind's forms: its own contexts, then two slots of config files (rotating through
    CONFIG_STYLES with `key`); in an agent's message to a user of `lang`, the value after that language's label."""
    value = secret if value is None else value
    if lang:
        return f"said-{lang}", secret, _said(lang, concept, value if bare is None else bare), False
    n = len(forms) + 2
    k = i % n
    if k >= len(forms):
        style = CONFIG_STYLES[(i // n * 2 + k - len(forms)) % len(CONFIG_STYLES)]
        return f"config-{style}", secret, _config(style, key, value), False
    style, snippet = forms[k]
    return style, secret, snippet, raw


Gen = Callable[[random.Random, int, "str | None"], Value]
"""(rng, index, the user's language in an agent message or None) -> Value."""


# ---- target kinds: credentials --------------------------------------------------------------------------------

def _password(rng: random.Random, i: int, lang: str | None) -> Value:
    pw = _pw(rng)
    forms = [
        ("mysql-cli", f"+ mysql -h db.internal -u app -p'{pw}' app_production < migrations/0042.sql"),
        ("pgpassword", f"PGPASSWORD={pw} psql -h 10.20.3.12 -U app -c 'select 1'"),
        ("docker-login", f"$ docker login -u deploy -p {pw} registry.internal:5000\n"
                         "WARNING! Using --password via the CLI is insecure. Use --password-stdin."),
        ("label", f"Password: {pw}"),
        ("python-call", f'client.login(username="svc-e2e", password="{pw}")'),
        ("redis-cli", f"redis-cli -h cache.internal -a {pw} --no-auth-warning PING"),
        ("ansible", f"ansible_become_password: {_yaml(pw)}"),
        ("prose", f"I set the staging admin password to {pw} so the Playwright suite can sign in."),
        ("spring", f"spring.datasource.password={pw}"),
    ]
    return _choose(i, lang, pw, "db_password", forms, concept="password")


def _aws_secret(rng: random.Random, i: int, lang: str | None) -> Value:
    akid = rng.choice(("AKIA", "ASIA")) + pick(rng, BASE32, 16)
    sk = pick(rng, B64, 40)
    sts = json.dumps({"Credentials": {"AccessKeyId": "ASIA" + akid[4:], "SecretAccessKey": sk,
                                      "Expiration": f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T10:00:00+00:00"}},
                     indent=4)
    forms = [
        ("credentials-file", f"[default]\naws_access_key_id = {akid}\naws_secret_access_key = {sk}"),
        ("env-pair", f"AWS_ACCESS_KEY_ID={akid}\nAWS_SECRET_ACCESS_KEY={sk}"),
        ("sts-json", sts),
        ("terraform-provider", f'provider "aws" {{\n  region     = "eu-west-1"\n  access_key = "{akid}"\n'
                               f'  secret_key = "{sk}"\n}}'),
        ("aws-configure", f"$ aws configure set aws_secret_access_key {sk} --profile ci"),
        ("iam-csv", f"User name,Password,Access key ID,Secret access key\nci-deployer,,{akid},{sk}"),
        ("boto3", f'boto3.client("s3", aws_access_key_id="{akid}", aws_secret_access_key="{sk}")'),
        ("beside-id", f"key {akid} / {sk}"),
    ]
    return _choose(i, lang, sk, "aws_secret_access_key", forms, bare=f"{akid} {sk}")


def _webhook_url(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(provider, token, URL) as each provider's docs print its incoming-webhook URL."""
    provider = ("slack", "discord", "teams", "power_automate", "google_chat", "mattermost", "zapier", "feishu",
                "dingtalk", "wecom")[i % 10]
    if provider == "slack":
        token = pick(rng, ALNUM, 24)
        team, hook = pick(rng, UPNUM, 10), pick(rng, UPNUM, 10)
        return provider, token, f"https://hooks.slack.com/services/T{team}/B{hook}/{token}"
    if provider == "discord":
        token = pick(rng, URLSAFE, 68)
        return provider, token, f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19 - 1)}/{token}"
    if provider == "teams":
        token = _hex(rng, 32)
        return provider, token, (f"https://{rng.choice(ORGS).replace('-', '')}.webhook.office.com/webhookb2/"
                                 f"{_uuid(rng)}@{_uuid(rng)}/IncomingWebhook/{token}/{_uuid(rng)}")
    if provider == "power_automate":
        token = pick(rng, URLSAFE, 43)
        return provider, token, (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/"
                                 f"{_hex(rng, 32)}/triggers/manual/paths/invoke?api-version=2016-06-01"
                                 f"&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={token}")
    if provider == "google_chat":
        token = pick(rng, URLSAFE, 43)
        return provider, token, (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages"
                                 f"?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={token}")
    if provider == "mattermost":
        token = pick(rng, LOWNUM, 26)
        return provider, token, f"https://chat.{rng.choice(ORGS)}.io/hooks/{token}"
    if provider == "zapier":
        token = pick(rng, LOWNUM, 7)
        return provider, token, f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{token}/"
    if provider == "feishu":
        token = _uuid(rng)
        return provider, token, f"https://open.feishu.cn/open-apis/bot/v2/hook/{token}"
    if provider == "dingtalk":
        token = _hex(rng, 64)
        return provider, token, f"https://oapi.dingtalk.com/robot/send?access_token={token}"
    token = _uuid(rng)
    return provider, token, f"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={token}"


def _webhook(rng: random.Random, i: int, lang: str | None) -> Value:
    provider, token, url = _webhook_url(rng, i)
    var = f"{provider.upper()}_WEBHOOK_URL"
    forms = [
        (f"{provider}-gha-env", f"    env:\n      {var}: {url}"),
        (f"{provider}-curl", f"curl -sS -X POST -H 'Content-Type: application/json' -d '{{\"text\":\"deploy ok\"}}' "
                             f"{url}"),
        (f"{provider}-label", f"Webhook: {url}"),
        (f"{provider}-python", f'requests.post("{url}", json={{"text": summary}}, timeout=10)'),
    ]
    return _choose(i // 10, lang, token, var, forms, value=url)


def _stripe_whsec(rng: random.Random, i: int, lang: str | None) -> Value:
    secret = "whsec_" + (_hex(rng, 64) if i % 3 == 0 else pick(rng, ALNUM, 32))
    forms = [
        ("stripe-listen", "> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is "
                          f"{secret} (^C to quit)"),
        ("construct-event", f"event = stripe.Webhook.construct_event(payload, sig_header, \"{secret}\")"),
        ("label", f"Signing secret: {secret}"),
        ("node", f"const event = stripe.webhooks.constructEvent(req.body, sig, '{secret}');"),
        ("gh-secret", f"$ gh secret set STRIPE_WEBHOOK_SECRET --body {secret}"),
    ]
    return _choose(i, lang, secret, "stripe_webhook_secret", forms)


def _connection_string(rng: random.Random, i: int, lang: str | None) -> Value:
    user = rng.choice(("app", "svc_billing", "readonly", "admin", "etl"))
    db = rng.choice(("orders", "billing", "analytics", "app_prod"))
    host = f"{rng.choice(REPOS)}-db.{rng.choice(ORGS)}.internal"
    pw = _url_pw(rng)
    m = i % 10
    if m == 7:
        pw = base64.b64encode(rng.randbytes(64)).decode()
        conn = (f"DefaultEndpointsProtocol=https;AccountName={rng.choice(ORGS).replace('-', '')}st;AccountKey={pw};"
                "EndpointSuffix=core.windows.net")
    elif m == 8:
        pw = base64.b64encode(rng.randbytes(32)).decode()
        conn = (f"Endpoint=sb://{rng.choice(ORGS)}-bus.servicebus.windows.net/;"
                f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={pw}")
    else:
        conn = (
            f"postgresql://{user}:{pw}@{host}:5432/{db}?sslmode=require",
            f"mongodb+srv://{user}:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/{db}?retryWrites=true&w=majority",
            f"rediss://default:{pw}@{host}:6380/0",
            f"amqps://{user}:{pw}@{host}:5671/%2F",
            f"mysql://{user}:{pw}@{host}:3306/{db}",
            f"jdbc:postgresql://{host}:5432/{db}?user={user}&password={pw}&ssl=true",
            f"Server=tcp:{rng.choice(ORGS)}-sql.database.windows.net,1433;Initial Catalog={db};User ID={user};"
            f"Password={pw};Encrypt=True;",
            "", "",
            f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database={db};Uid={user};Pwd={pw};",
        )[m]
    forms = [
        ("label", f"Connection string: {conn}"),
        ("cli", f"+ alembic -x dburl='{conn}' upgrade head"),
        ("helm-set", f"helm upgrade --install api ./chart --set database.url='{conn}'"),
    ]
    return _choose(i // 10, lang, pw, "database_url", forms, value=conn)


def _labelled_key(rng: random.Random, i: int, lang: str | None) -> Value:
    key = (_hex(rng, 32), pick(rng, ALNUM, 40), _uuid(rng), _hex(rng, 40), pick(rng, ALNUM, 32))[i % 5]
    forms = [
        ("label", f"API key: {key}"),
        ("header", f"curl -H 'X-API-Key: {key}' https://api.{rng.choice(ORGS)}.io/v2/status"),
        ("query", f"GET https://api.openweathermap.org/data/2.5/weather?q=Berlin&appid={key}"),
        ("dd-header", f'-H "DD-API-KEY: {key}"'),
        ("js-object", f"const client = new SearchClient({{ appId: 'HQ7Z2', apiKey: '{key}' }});"),
        ("apikey-colon", f"apikey: {key}"),
        ("license", f"NEW_RELIC_LICENSE_KEY: {key}"),
    ]
    return _choose(i // 5, lang, key, "api_key", forms, concept="api_key")


def _plain_secret(rng: random.Random, i: int) -> tuple[str, str]:
    """A credential to disguise, with the variable it is usually set in."""
    return (
        ("GITHUB_TOKEN", crc_token(rng, "ghp_")),
        ("OPENAI_API_KEY", f"sk-proj-{pick(rng, URLSAFE, 40)}T3BlbkFJ{pick(rng, URLSAFE, 40)}"),
        ("SLACK_BOT_TOKEN", f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"),
        ("DB_PASSWORD", _pw(rng)),
        ("AWS_SECRET_ACCESS_KEY", pick(rng, B64, 40)),
        ("NPM_TOKEN", crc_token(rng, "npm_")),
    )[i % 6]


ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


def _disguised(rng: random.Random, i: int, lang: str | None) -> Value:
    var, plain = _plain_secret(rng, i)
    how = ("zero-width", "full-width", "percent", "json-u", "zero-width-twice", "percent-partial")[i // 6 % 6]
    if how.startswith("zero-width"):
        cuts = sorted(rng.sample(range(2, len(plain) - 1), 2 if how.endswith("twice") else 1), reverse=True)
        secret = plain
        for cut in cuts:
            secret = secret[:cut] + rng.choice(ZERO_WIDTH) + secret[cut:]
    elif how == "full-width":
        secret = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in plain)
    elif how == "percent":
        secret = "".join(f"%{ord(c):02X}" for c in plain)
    elif how == "percent-partial":
        secret = "".join(f"%{ord(c):02X}" if not c.isalnum() or k % 5 == 2 else c for k, c in enumerate(plain))
    else:
        secret = "".join(f"\\u{ord(c):04x}" for c in plain)
    if lang:
        return f"said-{lang}-{how}", secret, _said(lang, "token", secret), False
    context = (f"{var}={secret}", f"Authorization: Bearer {secret}", f"token={secret}",
               f"export {var}={secret}")[i % 4]
    return how, secret, context, how == "json-u"


def _email(rng: random.Random, i: int, lang: str | None) -> Value:
    first, last = _name(rng)
    local = (f"{first}.{last}", f"{first[0]}{last}", f"{first}{last}{digits(rng, 2)}", f"{first}_{last}",
             f"{first}.{last}+github", f"{last}.{first[0]}")[i % 6].lower()
    email = f"{local}@{rng.choice(MAIL_DOMAINS)}"
    name = f"{first} {last}"
    forms = [
        ("co-authored-by", f"Co-authored-by: {name} <{email}>"),
        ("signed-off-by", f"Signed-off-by: {name} <{email}>"),
        ("git-author", f"Author: {name} <{email}>"),
        ("git-config", f'git config user.email "{email}"'),
        ("package-json", f'"author": "{name} <{email}>",'),
        ("pyproject", f'authors = [{{ name = "{name}", email = "{email}" }}]'),
        ("label", f"Email: {email}"),
        ("dockerfile", f'LABEL maintainer="{email}"'),
        ("mailto", f"Questions about the rollout: [{name}](mailto:{email})"),
        ("fixture", f'user = User.objects.create(name="{name}", email="{email}")'),
    ]
    return _choose(i, lang, email, "notify_email", forms, concept="email")


# ---- target kinds: phones (national numbering plans) ----------------------------------------------------------

NANP_AREAS = ("201", "206", "212", "213", "303", "305", "312", "404", "415", "503", "512", "617", "646", "702",
              "713", "718", "773", "801", "917", "416", "437", "514", "604", "613", "647", "778", "403", "905")


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """(area, exchange, line): exchange NXX not N11 and not 555 (NANPA)."""
    while True:
        exchange = str(rng.randint(2, 9)) + digits(rng, 2)
        if exchange[1:] != "11" and exchange != "555":
            return rng.choice(NANP_AREAS), exchange, digits(rng, 4)


def _phone_us_ca(rng: random.Random, i: int, lang: str | None) -> Value:
    a, x, n = _nanp(rng)
    number = (f"({a}) {x}-{n}", f"{a}-{x}-{n}", f"{a}.{x}.{n}", f"+1 {a} {x} {n}", f"+1-{a}-{x}-{n}",
              f"1 ({a}) {x}-{n}")[i % 6]
    forms = [
        ("oncall", f"On-call this week: call my cell at {number} if the deploy pages."),
        ("fixture", f'customer = Customer(name="Dana R.", phone="{number}")'),
        ("label", f"Phone: {number}"),
        ("sql-seed", f"INSERT INTO contacts (name, mobile) VALUES ('J. Ortiz', '{number}');"),
        ("assert", f"E       AssertionError: expected format_phone('{a}{x}{n}') to equal 'Tel: {number}'"),
        ("quebec", f"Téléphone (cellulaire) : {number}"),
        ("text-me", f"text me at {number} when the release is out"),
    ]
    said = f"+1 {a} {x} {n}"
    return _choose(i, lang, said if lang else number, "support_phone", forms, concept="phone", bare=said)


def _phone_uk(rng: random.Random, i: int, lang: str | None) -> Value:
    m = i % 5
    if m in (0, 1):
        while True:
            sub = rng.choice("1234789") + digits(rng, 8)
            if not sub.startswith("700900"):
                break
        number = (f"07{sub[:3]} {sub[3:]}", f"+44 7{sub[:3]} {sub[3:]}")[m]
    elif m == 2:
        while True:
            sub = rng.choice("378") + digits(rng, 7)
            if not sub.startswith("79460"):
                break
        number = f"020 {sub[:4]} {sub[4:]}"
    elif m == 3:
        area = rng.choice(("0161", "0121", "0131", "0141", "0113", "0117"))
        number = f"{area} {rng.randint(2, 9)}{digits(rng, 2)} {digits(rng, 4)}"
    else:
        number = f"+44 (0)20 {rng.choice('378')}{digits(rng, 3)} {digits(rng, 4)}"
    forms = [
        ("label", f"Mobile: {number}"),
        ("ring", f"Ring me on {number} if the nightly job fails again."),
        ("fixture", f'"contact_number": "{number}"'),
        ("tel", f"tel. {number} (escalations, office hours)"),
        ("vcard", f"TEL;TYPE=cell:{number}"),
        ("assert", f"E       assert normalise('{number}') == '+44...'"),
    ]
    digits_only = "".join(c for c in number if c.isdigit())
    intl = number if number.startswith("+") else f"+44 {digits_only[1:]}"
    return _choose(i // 5, lang, intl if lang else number, "contact_phone", forms, concept="phone", bare=intl)


FR_FICTION = ("019900", "026191", "035301", "046571", "053535", "063998")
"""ARCEP's ranges reserved for fiction (audiovisual works), left out."""


def _phone_fr(rng: random.Random, i: int, lang: str | None) -> Value:
    while True:
        nsn = rng.choice("123456679") + digits(rng, 8)
        if not ("0" + nsn).startswith(FR_FICTION):
            break
    pairs = group(nsn[1:], 2, " ")
    number = (f"0{nsn[0]} {pairs}", f"0{nsn[0]}.{pairs.replace(' ', '.')}", f"+33 {nsn[0]} {pairs}",
              f"+33 (0){nsn[0]} {pairs}", f"0{nsn}")[i % 5]
    forms = [
        ("label", f"Tél. : {number}"),
        ("portable", f"Portable : {number}"),
        ("joignable", f"Le client est joignable au {number} pour la recette."),
        ("fixture", f'"telephone": "{number}",'),
        ("numero", f"numéro de téléphone du contact : {number}"),
    ]
    said = f"+33 {nsn[0]} {pairs}"
    return _choose(i // 5, lang, said if lang else number, "telephone", forms, concept="phone", bare=said)


DE_FICTION = ("03023125", "06990009", "04066969", "02214710", "08999998", "015228817386", "017139200")
"""BNetzA's numbers for films and broadcasts, left out."""


def _phone_de(rng: random.Random, i: int, lang: str | None) -> Value:
    while True:
        if i % 2 == 0:
            prefix = rng.choice(("151", "152", "157", "160", "162", "170", "171", "172", "175", "176", "178"))
            sub = digits(rng, 7 if prefix in ("160", "170", "171", "175") else 8)
        else:
            prefix = rng.choice(("30", "89", "40", "69", "221", "711"))
            sub = str(rng.randint(2, 9)) + digits(rng, 6 if len(prefix) == 3 else 7)
        if not ("0" + prefix + sub).startswith(DE_FICTION):
            break
    number = (f"0{prefix} {sub}", f"0{prefix}/{sub}", f"+49 {prefix} {sub}", f"+49 (0){prefix} {sub}",
              f"(0{prefix}) {sub[:4]} {sub[4:]}", f"0{prefix}-{sub}")[i // 2 % 6]
    forms = [
        ("label", f"Telefon: {number}"),
        ("handy", f"Handy: {number}"),
        ("rueckruf", f"Bitte Rückruf unter {number}, Ansprechpartnerin Frau Krüger."),
        ("fixture", f'"telefonnummer": "{number}",'),
        ("tel", f"Tel. {number} (Bereitschaft)"),
        ("mobil", f"Mobil erreichbar unter {number}"),
    ]
    said = f"+49 {prefix} {sub}"
    return _choose(i // 12, lang, said if lang else number, "telefon", forms, concept="phone", bare=said)


def _phone_in(rng: random.Random, i: int, lang: str | None) -> Value:
    if i % 3 == 2:
        std = rng.choice(("11", "22", "80", "44", "40", "33"))
        sub = "2" + digits(rng, 7)
        number = (f"0{std}-{sub}", f"+91 {std} {sub}", f"0{std} {sub[:4]} {sub[4:]}")[i // 3 % 3]
        bare = f"+91 {std} {sub}"
    else:
        mob = rng.choice("6789") + digits(rng, 9)
        number = (f"+91 {mob[:5]} {mob[5:]}", f"+91-{mob}", f"0{mob}", f"{mob[:5]}-{mob[5:]}",
                  f"{mob[:5]} {mob[5:]}")[i % 5]
        bare = f"+91 {mob[:5]} {mob[5:]}"
    forms = [
        ("mobile", f"Mobile: {number}"),
        ("mob", f"Mob. {number} (vendor SPOC)"),
        ("hindi-phone", f"फ़ोन: {number}"),
        ("hindi-contact", f"संपर्क नंबर: {number}"),
        ("fixture", f'"mobile_no": "{number}",'),
        ("contact", f"contact no. {number} for the UAT sign-off"),
    ]
    return _choose(i // 3, lang, bare if lang else number, "mobile_no", forms, concept="phone", bare=bare)


# ---- target kinds: personal numbers ---------------------------------------------------------------------------

def _ssn_parts(rng: random.Random) -> tuple[str, str, str]:
    """Area 001-899 but 666, group 01-99, serial 0001-9999 (SSA); not the publicised 078-05-1120 or 123-45-6789."""
    while True:
        area, grp, serial = rng.randint(1, 899), rng.randint(1, 99), rng.randint(1, 9999)
        parts = (f"{area:03d}", f"{grp:02d}", f"{serial:04d}")
        if area != 666 and "".join(parts) not in ("078051120", "123456789"):
            return parts


def _ssn(rng: random.Random, i: int, lang: str | None) -> Value:
    a, g, s = _ssn_parts(rng)
    ssn = (f"{a}-{g}-{s}", f"{a} {g} {s}", f"{a}{g}{s}")[i % 3]
    forms = [
        ("label", f"SSN: {ssn}"),
        ("fixture", f'"ssn": "{ssn}",'),
        ("w2", f"Employee's social security number: {ssn}"),
        ("assert", f"E       AssertionError: assert mask_ssn('{ssn}') == '***-**-{s}'"),
        ("sql-seed", f"INSERT INTO employees (name, ssn) VALUES ('R. Okafor', '{ssn}');"),
        ("prose", f"the applicant's social security number is {ssn}, see the failing onboarding test"),
        ("form-log", f"POST /api/onboarding tax_id_type=ssn tax_id={ssn} status=422"),
    ]
    return _choose(i // 3, lang, ssn, "ssn", forms, concept="ssn")


CARD_BRANDS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("4",), 16), (("51", "52", "53", "54", "55", "2221", "2367", "2500", "2720"), 16), (("34", "37"), 15),
    (("6011", "644", "649", "65"), 16), (("3528", "3545", "3589"), 16), (("36",), 14), (("62",), 16), (("62",), 19),
)
PUBLISHED_TEST_CARDS = frozenset({"4242424242424242", "4111111111111111", "5555555555554444", "378282246310005",
                                  "371449635398431", "6011111111111117", "3530111333300000", "5105105105105100",
                                  "4012888888881881", "30569309025904", "6200000000000005"})


def _card_number(rng: random.Random, i: int) -> str:
    """A number of an ISO/IEC 7812 IIN range with its Luhn digit, not a provider's published test number."""
    prefixes, length = CARD_BRANDS[i % len(CARD_BRANDS)]
    while True:
        prefix = rng.choice(prefixes)
        body = prefix + digits(rng, length - 1 - len(prefix))
        number = body + luhn_digit(body)
        if number not in PUBLISHED_TEST_CARDS:
            return number


def _card(rng: random.Random, i: int, lang: str | None) -> Value:
    number = _card_number(rng, i)
    card = (group_card(number, " "), number, group_card(number, "-"))[i // 8 % 3]
    forms = [
        ("fixture", f'"card_number": "{card}",'),
        ("label", f"Card number: {card}"),
        ("assert", f"E       AssertionError: assert tokenize('{card}') == 'tok_visa'"),
        ("log", f"charge failed: card={card} exp=0{rng.randint(1, 9)}/2{rng.randint(7, 9)} reason=do_not_honor"),
        ("pan", f"pan: {card}"),
        ("prose", f"The customer paid with the card {card}; the refund test replays that charge."),
    ]
    return _choose(i // 3, lang, card, "card_number", forms, concept="card")


IBAN_STRUCTURES = (("DE", "8n10n"), ("GB", "4a6n8n"), ("FR", "5n5n11c2n"), ("ES", "4n4n1n1n10n"), ("IT", "1a5n5n12c"),
                   ("NL", "4a10n"), ("BE", "3n7n2n"), ("CH", "5n12c"), ("AT", "5n11n"), ("PL", "8n16n"),
                   ("PT", "4n4n11n2n"), ("IE", "4a6n8n"), ("SE", "3n16n1n"), ("DK", "4n9n1n"), ("NO", "4n6n1n"),
                   ("FI", "3n11n"), ("LU", "3n13c"), ("SA", "2n18c"), ("AE", "3n16n"), ("TR", "5n1n16c"))


def _iban(rng: random.Random, i: int, lang: str | None) -> Value:
    country, structure = IBAN_STRUCTURES[i % len(IBAN_STRUCTURES)]
    body = bban(rng, structure)
    compact = country + iban_check(country, body) + body
    iban = (group(compact, 4, " "), compact)[i // 20 % 2]
    forms = [
        ("label", f"IBAN: {iban}"),
        ("fixture", f'"iban": "{iban}",'),
        ("pain001", f"<DbtrAcct><Id><IBAN>{compact}</IBAN></Id></DbtrAcct>"),
        ("kontoinhaber", f"Kontoinhaber: M. Schulz, IBAN {iban}"),
        ("assert", f"E       AssertionError: IBAN {iban} rejected by validate_sepa()"),
        ("sql-seed", f"INSERT INTO payees (holder, iban) VALUES ('L. Moreau', '{iban}');"),
    ]
    value = compact if i // 3 % 8 == 2 and not lang else iban
    return _choose(i // 3, lang, value, "payout_iban", forms, concept="iban")


# ---- target kinds: tokens and keys ----------------------------------------------------------------------------

def _jwt_token(rng: random.Random, i: int) -> str:
    """A JWS compact serialisation (RFC 7515) of a JWT (RFC 7519): HS256, RS256 or ES256 signature bytes."""
    alg, sig_len = (("HS256", 32), ("RS256", 256), ("ES256", 64))[i % 3]
    header = {"alg": alg, "typ": "JWT"} if alg == "HS256" else {"alg": alg, "kid": _hex(rng, 16), "typ": "JWT"}
    iat = rng.randint(1_760_000_000, 1_790_000_000)
    claims = ({"sub": _uuid(rng), "role": "service_role", "iss": "supabase", "iat": iat, "exp": iat + 315_360_000},
              {"sub": f"repo:{rng.choice(ORGS)}/{rng.choice(REPOS)}:ref:refs/heads/main", "aud": "sts.amazonaws.com",
               "iss": "https://token.actions.githubusercontent.com", "iat": iat, "exp": iat + 300},
              {"sub": str(rng.randint(10 ** 5, 10 ** 7)), "scope": "openid profile", "iat": iat, "exp": iat + 3600,
               "iss": f"https://auth.{rng.choice(ORGS)}.dev/"})[i // 3 % 3]
    head = b64url(json.dumps(header, separators=(",", ":")).encode())
    body = b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{head}.{body}.{b64url(rng.randbytes(sig_len))}"


def _jwt(rng: random.Random, i: int, lang: str | None) -> Value:
    token = _jwt_token(rng, i)
    forms = [
        ("bearer", f"Authorization: Bearer {token}"),
        ("curl", f"curl -s https://api.{rng.choice(ORGS)}.dev/v1/me -H \"Authorization: Bearer {token}\""),
        ("cookie", f"Cookie: access_token={token}; theme=dark"),
        ("supabase-env", f"SUPABASE_SERVICE_ROLE_KEY={token}"),
        ("id-token", f"id_token: {token}"),
    ]
    return _choose(i, lang, token, "service_role_key", forms)


def _github_token(rng: random.Random, i: int, lang: str | None) -> Value:
    if i % 6 == 5:
        token = f"github_pat_{pick(rng, ALNUM, 22)}_{pick(rng, ALNUM, 59)}"
    else:
        token = crc_token(rng, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")[i % 6])
    forms = [
        ("gh-token-env", f"GH_TOKEN={token}"),
        ("remote-url", f"git remote set-url origin https://x-access-token:{token}@github.com/{rng.choice(ORGS)}/"
                       f"{rng.choice(REPOS)}.git"),
        ("auth-header", f"Authorization: token {token}"),
        ("gh-auth", f"echo {token} | gh auth login --with-token"),
        ("npmrc", f"//npm.pkg.github.com/:_authToken={token}"),
        ("label", f"Personal access token: {token}"),
    ]
    return _choose(i // 6, lang, token, "github_token", forms)


def _gitlab_token(rng: random.Random, i: int, lang: str | None) -> Value:
    project = rng.randint(100, 60_000_000)
    sort = i % 4
    if sort == 0:
        token = "glpat-" + pick(rng, URLSAFE, 20)
        own = [("private-token", f"curl --header \"PRIVATE-TOKEN: {token}\" https://gitlab.com/api/v4/projects/{project}"),
               ("clone-url", f"git clone https://oauth2:{token}@gitlab.com/{rng.choice(ORGS)}/{rng.choice(REPOS)}.git")]
    elif sort == 1:
        token = "gldt-" + pick(rng, URLSAFE, 20)
        own = [("deploy-token", f"docker login registry.gitlab.com -u gitlab+deploy-token-{project % 9999} -p {token}"),
               ("deploy-token-url",
                f"https://gitlab+deploy-token-{project % 9999}:{token}@gitlab.com/infra/charts.git")]
    elif sort == 2:
        token = "glrt-" + pick(rng, URLSAFE, 20)
        own = [("runner-register", f"gitlab-runner register -n --url https://gitlab.com --token {token}"),
               ("runner-toml", f'[[runners]]\n  name = "k8s"\n  url = "https://gitlab.com"\n  token = "{token}"')]
    else:
        token = "glptt-" + _hex(rng, 40)
        own = [("trigger", f"curl -X POST --fail -F token={token} -F ref=main "
                           f"https://gitlab.com/api/v4/projects/{project}/trigger/pipeline"),
               ("trigger-label", f"Pipeline trigger token: {token}")]
    forms = [*own, ("label", f"GitLab token: {token}")]
    return _choose(i // 4, lang, token, "gitlab_token", forms)


def _npm_token(rng: random.Random, i: int, lang: str | None) -> Value:
    token = crc_token(rng, "npm_")
    forms = [
        ("npmrc", f"//registry.npmjs.org/:_authToken={token}"),
        ("npm-config", f"$ npm config set //registry.npmjs.org/:_authToken {token}"),
        ("yarnrc", f'npmAuthToken: "{token}"'),
        ("label", f"npm token: {token}"),
        ("gh-secret", f"gh secret set NPM_TOKEN -b {token}"),
    ]
    return _choose(i, lang, token, "npm_token", forms)


def _pypi_token(rng: random.Random, i: int, lang: str | None) -> Value:
    """A PyPI API token: `pypi-` and a base64url macaroon (v2 binary) whose location is pypi.org or test.pypi.org."""
    location = b"pypi.org" if i % 4 else b"test.pypi.org"
    ident = _uuid(rng).encode()
    caveat = json.dumps([1, ["project", rng.choice(REPOS)]] if i % 2 else {"version": 1, "permissions": "user"},
                        separators=(",", ":")).encode()
    macaroon = (b"\x02\x01" + bytes([len(location)]) + location + b"\x02" + bytes([len(ident)]) + ident + b"\x00"
                + b"\x02" + bytes([len(caveat)]) + caveat + b"\x00\x00\x06\x20" + rng.randbytes(32))
    token = "pypi-" + b64url(macaroon)
    forms = [
        ("pypirc", f"[pypi]\n  username = __token__\n  password = {token}"),
        ("twine-env", f"TWINE_USERNAME=__token__ TWINE_PASSWORD={token} twine upload dist/*"),
        ("uv-publish", f"$ uv publish --token {token}"),
        ("poetry", f"poetry config pypi-token.pypi {token}"),
        ("label", f"PyPI API token: {token}"),
    ]
    return _choose(i, lang, token, "uv_publish_token", forms)


def _slack_token(rng: random.Random, i: int, lang: str | None) -> Value:
    token = (f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}",
             f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{_hex(rng, 32)}",
             f"xapp-1-A{pick(rng, UPNUM, 10)}-{digits(rng, 13)}-{_hex(rng, 64)}")[i % 3]
    forms = [
        ("bearer", f"Authorization: Bearer {token}"),
        ("form", f"curl -d 'token={token}' -d channel=C0DEPLOYS https://slack.com/api/chat.postMessage"),
        ("python", f'client = WebClient(token="{token}")'),
        ("label", f"Slack bot token: {token}"),
    ]
    return _choose(i // 3, lang, token, "slack_bot_token", forms)


def _provider_key(rng: random.Random, i: int, lang: str | None) -> Value:
    """A provider's API key by its documented prefix, with the variable its docs set it in."""
    var, key = (
        ("OPENAI_API_KEY", f"sk-proj-{pick(rng, URLSAFE, 74)}T3BlbkFJ{pick(rng, URLSAFE, 74)}"),
        ("ANTHROPIC_API_KEY", f"sk-ant-api03-{pick(rng, URLSAFE, 93)}AA"),
        ("HF_TOKEN", "hf_" + pick(rng, string.ascii_letters, 34)),
        ("GROQ_API_KEY", "gsk_" + pick(rng, ALNUM, 52)),
        ("DOCKERHUB_TOKEN", "dckr_pat_" + pick(rng, URLSAFE, 27)),
        ("STRIPE_SECRET_KEY", rng.choice(("sk_live_", "rk_live_")) + "51" + pick(rng, ALNUM, 97)),
        ("SHOPIFY_ACCESS_TOKEN", "shpat_" + _hex(rng, 32)),
        ("DATABRICKS_TOKEN", "dapi" + _hex(rng, 32)),
        ("SENDGRID_API_KEY", f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}"),
        ("LINEAR_API_KEY", "lin_api_" + pick(rng, ALNUM, 40)),
        ("GOOGLE_API_KEY", "AIza" + pick(rng, URLSAFE, 35)),
        ("DIGITALOCEAN_TOKEN", "dop_v1_" + _hex(rng, 64)),
        ("SENTRY_AUTH_TOKEN", "sntryu_" + _hex(rng, 64)),
        ("VAULT_TOKEN", "hvs." + pick(rng, URLSAFE, 24)),
    )[i % 14]
    forms = [
        ("export", f"export {var}={key}"),
        ("bearer", f"-H 'Authorization: Bearer {key}'"),
        ("gha-env", f"      {var}: {key}"),
        ("python", f'os.environ.setdefault("{var}", "{key}")'),
        ("label", f"{var.split('_')[0].title()} key: {key}"),
    ]
    return _choose(i // 14 + i, lang, key, var, forms, concept="api_key")


def _pem(rng: random.Random, i: int) -> str:
    """A private key derived from the corpus's generator: EC P-256 as SEC1 or PKCS#8, Ed25519 as PKCS#8, or an
    OpenSSH Ed25519 key."""
    sort = i % 4
    if sort == 3:
        key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        seed = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                 serialization.NoEncryption())
        blob = base64.b64encode(openssh_ed25519_blob(seed, public, rng.randbytes(4), b"deploy@ci-runner")).decode()
        return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + group(blob, 70, "\n") + "\n-----END OPENSSH PRIVATE KEY-----"
    if sort == 2:
        private: ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey = (
            ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32)))
    else:
        private = ec.derive_private_key(rng.randrange(1, 2 ** 255), ec.SECP256R1())
    fmt = serialization.PrivateFormat.TraditionalOpenSSL if sort == 0 else serialization.PrivateFormat.PKCS8
    pem = private.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption())
    return pem.decode().strip()


def _private_key(rng: random.Random, i: int, lang: str | None) -> Value:
    pem = _pem(rng, i)
    escaped = pem.replace("\n", "\\n")
    tls_key = base64.b64encode(pem.encode() + b"\n").decode()
    forms = [
        ("pem-file", pem),
        ("env-escaped", f'GITHUB_APP_PRIVATE_KEY="{escaped}"'),
        ("k8s-tls", f"type: kubernetes.io/tls\ndata:\n  tls.key: {tls_key}"),
        ("heredoc", f"cat > ~/.ssh/id_deploy <<'EOF'\n{pem}\nEOF"),
    ]
    k = i // 4 % 4
    secret = (pem, escaped, tls_key, pem)[k]
    if lang:
        return f"said-{lang}", pem, _said(lang, "token", "\n" + pem), False
    return forms[k][0], secret, forms[k][1], False


def _session_cookie(rng: random.Random, i: int, lang: str | None) -> Value:
    name, value = (
        ("sessionid", pick(rng, LOWNUM, 32)),
        (f"_{rng.choice(REPOS).replace('-', '_')}_session",
         f"{quote(base64.b64encode(rng.randbytes(48)).decode(), safe='')}--{_hex(rng, 40)}"),
        ("connect.sid", f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, B64, 43)}"),
        ("PHPSESSID", pick(rng, "0123456789abcdefghijklmnopqrstuv", 26)),
        ("session", f"{b64url(json.dumps({'_user_id': str(rng.randint(1, 99999))}).encode())}."
                    f"{pick(rng, URLSAFE, 6)}.{pick(rng, URLSAFE, 27)}"),
        (".AspNetCore.Session", "CfDJ8" + pick(rng, URLSAFE, 150)),
        ("laravel_session", "eyJpdiI6" + pick(rng, ALNUM, 180) + "%3D"),
    )[i % 7]
    forms = [
        ("cookie-header", f"Cookie: {name}={value}; lang=en"),
        ("set-cookie", f"< set-cookie: {name}={value}; Path=/; HttpOnly; Secure; SameSite=Lax"),
        ("curl-b", f"curl -b '{name}={value}' https://staging.{rng.choice(ORGS)}.dev/admin/"),
        ("storage-state", f'{{"name": "{name}", "value": "{value}", "domain": ".staging.{rng.choice(ORGS)}.dev"}}'),
        ("requests", f'requests.get(url, cookies={{"{name}": "{value}"}})'),
    ]
    return _choose(i // 7 + i, lang, value, "session_cookie", forms, bare=f"{name}={value}")


def _totp_seed(rng: random.Random, i: int, lang: str | None) -> Value:
    seed = pick(rng, BASE32, (16, 32, 26)[i % 3])
    issuer = rng.choice(("GitHub", "AWS", "npm", "PyPI", "GitLab", "Okta"))
    grouped = group(seed.lower(), 4, " ")
    forms = [
        ("otpauth", f"otpauth://totp/{issuer}:ci-bot?secret={seed}&issuer={issuer}&algorithm=SHA1&digits=6&period=30"),
        ("env", f"E2E_TOTP_SECRET={seed}"),
        ("pyotp", f'code = pyotp.TOTP("{seed}").now()'),
        ("setup-key", f"Setup key: {grouped}"),
        ("oathtool", f"$ oathtool --totp -b {seed}"),
    ]
    secret = grouped if not lang and i // 3 % 7 == 3 else seed
    return _choose(i // 3, lang, secret, "mfa_seed", forms, concept="setup_key")


def _recovery_code(rng: random.Random, i: int, lang: str | None) -> Value:
    code = (f"{_hex(rng, 5)}-{_hex(rng, 5)}", _hex(rng, 16), f"{digits(rng, 4)} {digits(rng, 4)}",
            "-".join(pick(rng, "BCDFGHJKMPQRTVWXY2346789", 5) for _ in range(5)), _hex(rng, 16),
            f"{pick(rng, LOWNUM, 4)}-{pick(rng, LOWNUM, 4)}")[i % 6]
    service = ("GitHub", "GitLab", "Google", "Microsoft", "PyPI", "Discord")[i % 6]
    path = f"docs/{service.lower()}-recovery-codes.txt"
    forms = [
        ("codes-file", f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
                       f"@@ -0,0 +1 @@\n+{code}"),
        ("label", f"{service} recovery code: {code}"),
        ("ssh-2fa", f"Your two-factor authentication recovery codes are:\n\n{code}\n\nDuring sign in, use one of the "
                    "codes above when prompted for your two-factor code."),
        ("backup", f"backup code {code} (used to unlock the shared CI account)"),
    ]
    return _choose(i // 6, lang, code, "recovery_code", forms, concept="recovery")


def _basic_auth(rng: random.Random, i: int, lang: str | None) -> Value:
    user = rng.choice(("deploy", "ci", "jenkins", "admin", "svc-artifacts"))
    pw = _pw(rng)
    b64 = base64.b64encode(f"{user}:{pw}".encode()).decode()
    forms = [
        ("basic-header", b64, f"Authorization: Basic {b64}"),
        ("curl-u", pw, f"curl -fsSL -u {user}:{pw} https://nexus.{rng.choice(ORGS)}.internal/repository/raw/app.tgz"),
        ("netrc", pw, f"machine artifactory.{rng.choice(ORGS)}.internal login {user} password {pw}"),
        ("docker-auth", b64, f'"auths": {{"registry.{rng.choice(ORGS)}.io": {{"auth": "{b64}"}}}}'),
        ("npmrc-auth", b64, f"_auth={b64}"),
        ("wget", pw, f"wget --http-user={user} --http-password={pw} https://ci.{rng.choice(ORGS)}.internal/artifact"),
    ]
    style, secret, snippet = forms[i % 6]
    if lang:
        return f"said-{lang}", b64, _said(lang, "token", f"Authorization: Basic {b64}"), False
    return style, secret, snippet, False


# ---- national ids (outside the target) ------------------------------------------------------------------------

def _birth(rng: random.Random, first: int = 1950, last: int = 2008) -> tuple[int, int, int]:
    return rng.randint(first, last), rng.randint(1, 12), rng.randint(1, 28)


def _fi_hetu(rng: random.Random) -> str:
    """DDMMYY, century sign (- 1900s, A 2000s), individual number 002-899, check character of the nine digits mod
    31 (Digital and Population Data Services Agency)."""
    y, m, d = _birth(rng)
    core = f"{d:02d}{m:02d}{y % 100:02d}{rng.randint(2, 899):03d}"
    return f"{core[:6]}{'-' if y < 2000 else 'A'}{core[6:]}{'0123456789ABCDEFHJKLMNPRSTUVWXY'[int(core) % 31]}"


def _se_pnr(rng: random.Random) -> str:
    """YYMMDD-NNNC, C the Luhn digit of the nine digits before it (Skatteverket)."""
    y, m, d = _birth(rng)
    core = f"{y % 100:02d}{m:02d}{d:02d}{digits(rng, 3)}"
    return f"{core[:6]}-{core[6:]}{luhn_digit(core)}"


def _no_fnr(rng: random.Random) -> str:
    """DDMMYY, individual number, two mod 11 check digits (Skatteetaten); draws again where a check would be 10."""
    while True:
        y, m, d = _birth(rng)
        individual = rng.randint(0, 499) if y < 2000 else rng.randint(500, 999)
        base = [int(c) for c in f"{d:02d}{m:02d}{y % 100:02d}{individual:03d}"]
        k1 = 11 - sum(w * v for w, v in zip((3, 7, 6, 1, 8, 9, 4, 5, 2), base, strict=True)) % 11
        k1 = 0 if k1 == 11 else k1
        k2 = 11 - sum(w * v for w, v in zip((5, 4, 3, 2, 7, 6, 5, 4, 3, 2), [*base, k1], strict=True)) % 11
        k2 = 0 if k2 == 11 else k2
        if k1 < 10 and k2 < 10:
            return "".join(map(str, base)) + f"{k1}{k2}"


def _be_nrn(rng: random.Random) -> str:
    """YY.MM.DD-XXX.CC, CC = 97 - (YYMMDDXXX mod 97), with a 2 in front for births from 2000 (BOSA)."""
    y, m, d = _birth(rng)
    core = f"{y % 100:02d}{m:02d}{d:02d}{rng.randint(1, 997):03d}"
    check = 97 - int(("2" if y >= 2000 else "") + core) % 97
    return f"{core[:2]}.{core[2:4]}.{core[4:6]}-{core[6:]}.{check:02d}"


def _cn_rid(rng: random.Random) -> str:
    """GB 11643-1999: six-digit area code, birth date, three-digit sequence, ISO 7064 MOD 11-2 check character."""
    y, m, d = _birth(rng)
    area = rng.choice(("110101", "310104", "440305", "510107", "330106", "420102"))
    body = f"{area}{y}{m:02d}{d:02d}{digits(rng, 3)}"
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return body + "10X98765432"[sum(w * int(c) for w, c in zip(weights, body, strict=True)) % 11]


def _pl_pesel(rng: random.Random) -> str:
    """YYMMDD (month +20 for 2000s), serial, check digit by weights 1-3-7-9 (Ministry of Digital Affairs)."""
    y, m, d = _birth(rng)
    body = f"{y % 100:02d}{m + (20 if y >= 2000 else 0):02d}{d:02d}{digits(rng, 4)}"
    return body + str((10 - sum(w * int(c) for w, c in zip((1, 3, 7, 9) * 3, body, strict=False)) % 10) % 10)


def _br_cpf(rng: random.Random) -> str:
    """Nine digits and two mod 11 check digits (Receita Federal), printed 000.000.000-00."""
    nums = [int(c) for c in digits(rng, 9)]
    for start in (10, 11):
        nums.append(sum(w * v for w, v in zip(range(start, 1, -1), nums, strict=True)) * 10 % 11 % 10)
    s = "".join(map(str, nums))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


NATIONAL_IDS: dict[str, tuple[Callable[[random.Random], str], str, str]] = {
    "fi_hetu": (_fi_hetu, "Henkilötunnus", "henkilotunnus"),
    "se_pnr": (_se_pnr, "Personnummer", "personnummer"),
    "no_fnr": (_no_fnr, "Fødselsnummer", "fodselsnummer"),
    "be_nrn": (_be_nrn, "Rijksregisternummer", "rijksregisternummer"),
    "cn_rid": (_cn_rid, "身份证号码", "id_card_no"),
    "pl_pesel": (_pl_pesel, "PESEL", "pesel"),
    "br_cpf": (_br_cpf, "CPF", "cpf"),
}


def _national(kind: str) -> Gen:
    make, label, key = NATIONAL_IDS[kind]

    def gen(rng: random.Random, i: int, lang: str | None) -> Value:
        value = make(rng)
        forms = [
            ("label", f"{label}: {value}"),
            ("fixture", f'"{key}": "{value}",'),
            ("assert", f"E       AssertionError: assert mask_{key}('{value}') == '***'"),
            ("sql-seed", f"INSERT INTO customers (full_name, {key}) VALUES ('A. Test', '{value}');"),
        ]
        return _choose(i, lang, value, key, forms, concept="id")

    return gen


# ---- carriers -------------------------------------------------------------------------------------------------

FILES = (".env", "config/settings.yaml", "deploy/values.yaml", "docker-compose.yml", "k8s/secret.yaml",
         "infra/main.tf", "config/app.json", "src/main/resources/application.properties", "pyproject.toml",
         "notebooks/explore.ipynb")


def _lines(snip: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in snip.split("\n"))


def _stamp(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"


def _hunk(rng: random.Random, snip: str, sign: str) -> str:
    path = rng.choice(FILES)
    start = rng.randint(1, 80)
    return (f"diff --git a/{path} b/{path}\nindex {_hex(rng, 7)}..{_hex(rng, 7)} 100644\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -{start},3 +{start},{3 + snip.count(chr(10)) + 1} @@\n LOG_LEVEL=info\n{_lines(snip, sign)}\n"
            " FEATURE_FLAGS=checkout_v2")


def _git_diff(rng: random.Random, snip: str) -> str:
    return _hunk(rng, snip, "+")


def _git_log_p(rng: random.Random, snip: str) -> str:
    return (f"commit {_hex(rng, 40)}\nDate:   Tue Mar {rng.randint(1, 28)} 1{rng.randint(0, 9)}:0{rng.randint(0, 9)}:11"
            f" 2026 +0100\n\n    chore: move credentials to the secret manager\n\n{_hunk(rng, snip, '-')}")


def _commit_message(rng: random.Random, snip: str) -> str:
    return (f"fix(ci): unblock the deploy job on main\n\nThe smoke test needs staging values, for now:\n\n{snip}\n\n"
            f"Refs: #{rng.randint(100, 9999)}\nChange-Id: I{_hex(rng, 40)}\nReviewed-on: https://review.internal/c/infra/"
            f"+/{rng.randint(10000, 99999)}")


def _pr_description(rng: random.Random, snip: str) -> str:
    return (f"## Summary\n\n- Add a retry around the payment webhook handler (#{rng.randint(100, 9999)})\n"
            f"- Update the staging config\n\n## How to test\n\n```bash\n{snip}\n```\n\n## Checklist\n\n"
            "- [x] Tests added\n- [ ] Docs updated\n\n🤖 Generated with a coding agent")


def _review_comment(rng: random.Random, snip: str) -> str:
    return (f"**{rng.choice(FILES)}**, line {rng.randint(3, 200)}:\n\n{_lines(snip, '> ')}\n\nThis looks like a real "
            "credential, please move it to the secret store.\n\n```suggestion\nAPI_TIMEOUT_SECONDS=30\n```")


def _gha_log(rng: random.Random, snip: str) -> str:
    lines = ["##[group]Run ./scripts/smoke.sh", "\x1b[36;1m./scripts/smoke.sh\x1b[0m", "shell: /usr/bin/bash -e {0}",
             "##[endgroup]", *snip.split("\n"), "\x1b[32m✓\x1b[0m smoke checks passed", "##[group]Post job cleanup.",
             "##[endgroup]"]
    base = _stamp(rng)
    return "\n".join(f"{base}:{k + 10:02d}.{digits(rng, 7)}Z {line}" for k, line in enumerate(lines))


def _gitlab_ci(rng: random.Random, snip: str) -> str:
    t = rng.randint(1_770_000_000, 1_790_000_000)
    return (f"\x1b[0Ksection_start:{t}:step_script\r\x1b[0K\x1b[0K\x1b[36;1mExecuting \"step_script\" stage of the job "
            f"script\x1b[0;m\n\x1b[32;1m$ ./ci/migrate.sh --env staging\x1b[0;m\n{snip}\n\x1b[0Ksection_end:{t + 41}:"
            "step_script\r\x1b[0K\n\x1b[32;1mJob succeeded\x1b[0;m")


def _circleci(rng: random.Random, snip: str) -> str:
    return (f"#!/bin/bash -eo pipefail\nnpm run test:e2e -- --shard={rng.randint(1, 4)}/4\n\n{snip}\n\n"
            "Exited with code exit status 1\nCircleCI received exit code 1")


def _jenkins(rng: random.Random, snip: str) -> str:
    base = _stamp(rng)
    lines = ["[Pipeline] stage", "[Pipeline] { (Deploy)", "[Pipeline] sh", "+ ./deploy.sh staging",
             *snip.split("\n"), "[Pipeline] }", f"Finished: {rng.choice(('SUCCESS', 'FAILURE'))}"]
    return "\n".join(f"[{base}:{k + 10:02d}.{digits(rng, 3)}Z] {line}" for k, line in enumerate(lines))


def _buildkite(rng: random.Random, snip: str) -> str:
    t = rng.randint(1_770_000_000_000, 1_790_000_000_000)
    lines = ["~~~ Preparing working directory", "--- :pytest: Running tests", *snip.split("\n"),
             "^^^ +++", "🚨 Error: The command exited with status 1"]
    return "\n".join(f"\x1b_bk;t={t + 137 * k}\x07{line}" for k, line in enumerate(lines))


def _terraform_plan(rng: random.Random, snip: str) -> str:
    return ("Terraform will perform the following actions:\n\n  # aws_instance.runner will be updated in-place\n"
            f"  ~ resource \"aws_instance\" \"runner\" {{\n        id        = \"i-0{_hex(rng, 16)}\"\n"
            f"      ~ user_data = <<-EOT\n            #!/bin/bash\n{_lines(snip, '            ')}\n        EOT\n"
            "        # (27 unchanged attributes hidden)\n    }\n\nPlan: 0 to add, 1 to change, 0 to destroy.")


def _pytest_failure(rng: random.Random, snip: str) -> str:
    return (f"________________________ test_settings_load[{rng.choice(('staging', 'prod'))}] ________________________\n"
            "\n    def test_settings_load(env):\n>       assert load_settings(env).ok\nE       assert False\n\n"
            f"tests/test_settings.py:{rng.randint(10, 300)}: AssertionError\n"
            f"----------------------------- Captured stdout call -----------------------------\n{snip}\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_settings.py::test_settings_load - assert False")


def _jest_failure(rng: random.Random, snip: str) -> str:
    return (" FAIL  src/config.test.ts\n  ● config › loads credentials from the environment\n\n"
            "    expect(received).toEqual(expected) // deep equality\n\n    - Expected  - 1\n    + Received  + 1\n\n"
            f"{_lines(snip, '    + ')}\n\n      at Object.<anonymous> (src/config.test.ts:{rng.randint(5, 90)}:27)")


def _scanner_report(rng: random.Random, snip: str) -> str:
    path, line = rng.choice(FILES), rng.randint(1, 200)
    sort = rng.randrange(3)
    if sort == 0:
        return (f"Finding:     {snip}\nRuleID:      generic-api-key\nEntropy:     {rng.uniform(3.5, 5.5):.6f}\n"
                f"File:        {path}\nLine:        {line}\nCommit:      {_hex(rng, 40)}\n")
    if sort == 1:
        return (f"Found unverified result 🐷🔑❓\nDetector Type: Generic\nRaw result: {snip}\nFile: {path}\n"
                f"Line: {line}\n")
    return (f"{path}:{line}:12: S105 Possible hardcoded password assigned to: \"password\"\n   |\n"
            f"{_lines(snip, f'{line} | ')}\n   |            ^^^^^^^^ S105\n\nFound 1 error.")


def _swe_agent(rng: random.Random, snip: str) -> str:
    path = rng.choice(FILES)
    return (f"THOUGHT: The failing test reads its settings from {path}; let me look at it.\nACTION: cat {path}\n"
            f"OBSERVATION:\n{snip}\n(Open file: /repo/{path})\n(Current directory: /repo)\nbash-$")


def _issue_thread(rng: random.Random, snip: str) -> str:
    return (f"#{rng.randint(100, 9999)} Deploy job fails on main after the refactor\n\nci-maintainer commented:\n"
            f"The job prints this and then exits 1:\n\n```\n{snip}\n```\n\ncoding-agent[bot] commented:\n"
            "I can reproduce this; opening a fix now.")


TEXT_CARRIERS: dict[str, Callable[[random.Random, str], str]] = {
    "git_diff": _git_diff, "git_log_p": _git_log_p, "commit_message": _commit_message,
    "pr_description": _pr_description, "review_comment": _review_comment, "gha_log": _gha_log,
    "gitlab_ci": _gitlab_ci, "circleci": _circleci, "jenkins": _jenkins, "buildkite": _buildkite,
    "terraform_plan": _terraform_plan, "pytest_failure": _pytest_failure, "jest_failure": _jest_failure,
    "scanner_report": _scanner_report, "swe_agent": _swe_agent, "issue_thread": _issue_thread,
}


def _agent_message(snip: str, lang: str) -> str:
    """The agent's closing message to its user, in the user's language."""
    intro, outro = FRAMES[lang]
    return f"{intro}\n\n{snip}\n\n{outro}"


def _gh_review_api(rng: random.Random, snip: str) -> object:
    return {"id": rng.randint(10 ** 9, 2 * 10 ** 9), "path": rng.choice(FILES), "commit_id": _hex(rng, 40),
            "diff_hunk": "@@ -1,3 +1,4 @@\n LOG_LEVEL=info\n+RETRIES=3", "user": {"login": "coding-agent[bot]",
                                                                               "type": "Bot"},
            "body": snip, "created_at": f"{_stamp(rng)}:00Z", "line": rng.randint(1, 120), "side": "RIGHT"}


def _gh_issue_webhook(rng: random.Random, snip: str) -> object:
    return {"action": "created", "issue": {"number": rng.randint(100, 9999), "title": "Nightly e2e fails on staging",
                                           "state": "open"},
            "comment": {"id": rng.randint(10 ** 9, 3 * 10 ** 9), "body": snip, "author_association": "CONTRIBUTOR"},
            "repository": {"full_name": f"{rng.choice(ORGS)}/{rng.choice(REPOS)}", "private": True}}


def _openhands_events(rng: random.Random, snip: str) -> object:
    path = rng.choice(FILES)
    return [{"id": 7, "source": "agent", "action": "run", "args": {"command": f"cat {path}", "thought": ""}},
            {"id": 8, "source": "environment", "observation": "run", "content": snip, "cause": 7,
             "extras": {"command": f"cat {path}", "metadata": {"exit_code": 0, "pid": rng.randint(100, 9999)}}}]


def _swe_traj(rng: random.Random, snip: str) -> object:
    path = rng.choice(FILES)
    return {"trajectory": [{"thought": "Check how the settings are loaded.", "action": f"open {path}",
                            "observation": snip, "state": json.dumps({"open_file": f"/repo/{path}"}),
                            "execution_time": round(rng.uniform(0.05, 2.0), 3)}],
            "info": {"exit_status": "submitted", "model_stats": {"api_calls": rng.randint(5, 60)}}}


def _notebook(rng: random.Random, snip: str) -> object:
    cell: dict[str, object] = {"cell_type": "code", "execution_count": rng.randint(1, 40), "metadata": {},
                               "source": ["import os\n", snip], "outputs": []}
    if rng.random() < 0.5:
        cell["source"] = ["print(open('.env').read())"]
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": [snip]}]
    return {"cells": [cell], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
            "nbformat": 4, "nbformat_minor": 5}


def _check_run(rng: random.Random, snip: str) -> object:
    return {"id": rng.randint(10 ** 10, 3 * 10 ** 10), "name": "smoke-tests", "status": "completed",
            "conclusion": "failure", "head_sha": _hex(rng, 40),
            "output": {"title": "1 check failed", "summary": snip, "annotations_count": 1}}


def _sarif(rng: random.Random, snip: str) -> object:
    region = {"startLine": rng.randint(1, 300), "startColumn": 1, "snippet": {"text": snip}}
    result = {"ruleId": "generic-api-key", "message": {"text": "generic-api-key has detected a secret"},
              "locations": [{"physicalLocation": {"artifactLocation": {"uri": rng.choice(FILES)}, "region": region}}],
              "partialFingerprints": {"commitSha": _hex(rng, 40)}}
    return {"version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "runs": [{"tool": {"driver": {"name": "gitleaks", "version": "8.21.2"}}, "results": [result]}]}


def _tool_message(rng: random.Random, snip: str) -> object:
    call = f"call_{pick(rng, ALNUM, 24)}"
    args = json.dumps({"command": f"cat {rng.choice(FILES)}"})
    return {"messages": [{"role": "assistant", "content": None, "tool_calls": [
        {"id": call, "type": "function", "function": {"name": "bash", "arguments": args}}]},
        {"role": "tool", "tool_call_id": call, "content": snip}]}


def _tf_plan_json(rng: random.Random, snip: str) -> object:
    return {"format_version": "1.2", "terraform_version": f"1.{rng.randint(5, 9)}.{rng.randint(0, 5)}",
            "resource_changes": [{"address": "aws_instance.runner", "type": "aws_instance",
                                  "change": {"actions": ["update"], "after": {"user_data": snip}}}]}


JSON_CARRIERS: dict[str, Callable[[random.Random, str], object]] = {
    "gh_review_api": _gh_review_api, "gh_issue_webhook": _gh_issue_webhook, "openhands_events": _openhands_events,
    "swe_traj": _swe_traj, "notebook": _notebook, "check_run": _check_run, "sarif": _sarif,
    "tool_message": _tool_message, "tf_plan_json": _tf_plan_json,
}
TEXT_ORDER = (*TEXT_CARRIERS, "agent_message")
JSON_ORDER = (*JSON_CARRIERS, "agent_reply")
MARK = "@@SNIPPET@@"


def _json_text(rng: random.Random, carrier: str, snip: str, raw: bool, lang: str | None) -> str:
    """The carrier's JSON with the snippet in it; a raw snippet (already JSON string content) goes in unescaped."""
    placed = MARK if raw else snip
    if carrier == "agent_reply":
        intro, outro = FRAMES[lang or "de"]
        obj: object = {"role": "assistant", "content": f"{intro}\n\n{placed}\n\n{outro}", "metadata": {"locale": lang}}
    else:
        obj = JSON_CARRIERS[carrier](rng, placed)
    text = json.dumps(obj, ensure_ascii=False)
    return text.replace(MARK, snip) if raw else text


def _span(text: str, secret: str) -> str:
    """The secret as the carrier wrote it: itself, or, where the carrier prefixed its lines, from its first line to
    its last with the prefixes between."""
    if secret in text or "\n" not in secret:
        return secret
    lines = secret.split("\n")
    start = text.index(lines[0])
    return text[start:text.index(lines[-1], start) + len(lines[-1])]


def _slots(kind_index: int) -> list[int]:
    """The carrier slot of each case index: a shuffle per kind, so a kind's styles do not follow its carriers."""
    slots = list(range(PER_KIND))
    random.Random(SEED * 1000 + kind_index).shuffle(slots)
    return slots


def _carrier(slot: int) -> tuple[str, bool]:
    """Every third slot is JSON carried; each list is walked in turn, so every kind meets every carrier."""
    if slot % 3 == 0:
        return JSON_ORDER[slot // 3 % len(JSON_ORDER)], True
    return TEXT_ORDER[(slot - slot // 3 - 1) % len(TEXT_ORDER)], False


KINDS: dict[str, Gen] = {
    "password": _password, "aws_secret": _aws_secret, "webhook": _webhook, "stripe_whsec": _stripe_whsec,
    "connection_string": _connection_string, "labelled_key": _labelled_key, "disguised": _disguised,
    "email": _email, "phone_us_ca": _phone_us_ca, "phone_uk": _phone_uk, "phone_fr": _phone_fr,
    "phone_de": _phone_de, "phone_in": _phone_in, "ssn": _ssn, "card": _card, "iban": _iban,
    "jwt": _jwt, "github_token": _github_token, "gitlab_token": _gitlab_token, "npm_token": _npm_token,
    "pypi_token": _pypi_token, "slack_token": _slack_token, "provider_key": _provider_key,
    "private_key": _private_key, "session_cookie": _session_cookie, "totp_seed": _totp_seed,
    "recovery_code": _recovery_code, "basic_auth": _basic_auth,
    **{kind: _national(kind) for kind in NATIONAL_IDS},
}


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, deterministic; agent messages walk through the users' languages."""
    rng = random.Random(SEED)
    said = 0
    for kind_index, (kind, gen) in enumerate(KINDS.items()):
        slots = _slots(kind_index)
        for i in range(PER_KIND):
            carrier, is_json = _carrier(slots[i])
            lang = None
            if carrier.startswith("agent_"):
                lang, said = LANGS[said % len(LANGS)], said + 1
            style, secret, snip, raw = gen(rng, i, lang)
            if is_json:
                text = _json_text(rng, carrier, snip, raw, lang)
            elif carrier == "agent_message":
                text = _agent_message(snip, lang or "de")
            else:
                text = TEXT_CARRIERS[carrier](rng, snip)
            yield Case(kind, f"{carrier}/{style}", secret if is_json else _span(text, secret), text, is_json)


# ---- near misses ----------------------------------------------------------------------------------------------

def _luhn_bad(rng: random.Random) -> str:
    """Sixteen digits that fail the Luhn check (the right digit plus 1-9)."""
    body = "4" + digits(rng, 14)
    number = body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)
    assert not luhn_ok(number)
    return number


def _public_key(rng: random.Random) -> str:
    """A public key as deploy-key settings and `authorized_keys` hold it: OpenSSH Ed25519 (RFC 8709) or a P-256
    SubjectPublicKeyInfo PEM (RFC 5480)."""
    if rng.random() < 0.5:
        blob = ssh_string(b"ssh-ed25519") + ssh_string(rng.randbytes(32))
        return f"ssh-ed25519 {base64.b64encode(blob).decode()} deploy-key-{rng.randint(1, 99)}"
    key = ec.derive_private_key(rng.randrange(1, 2 ** 255), ec.SECP256R1()).public_key()
    pem = key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return pem.decode().strip()


def _ups(rng: random.Random) -> str:
    return f"1Z{pick(rng, UPNUM, 6)}{digits(rng, 10)}"


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "commit_sha": lambda r: f"commit {_hex(r, 40)}\nMerge: {_hex(r, 7)} {_hex(r, 7)}\nindex {_hex(r, 7)}..{_hex(r, 7)} "
                            "100644",
    "css_selector": lambda r: f"page.click('#{r.choice(('btn', 'submit', 'nav'))}-{_hex(r, 6)} > "
                              f"button.css-{pick(r, LOWNUM, 7)}[data-testid=\"checkout-{r.randint(1, 9)}\"]')",
    "xpath": lambda r: f"locator: //*[@id=\"root\"]/div[{r.randint(1, 9)}]/form/div[{r.randint(1, 9)}]/"
                       f"input[{r.randint(1, 5)}]",
    "coordinates": lambda r: f"computer.click(x={r.randint(0, 1919)}, y={r.randint(0, 1079)}); viewport "
                             f"{r.choice(('1280x720', '1920x1080', '1440x900'))}; bbox=[{r.randint(0, 99)}, "
                             f"{r.randint(0, 99)}, {r.randint(100, 900)}, {r.randint(100, 900)}]",
    "ci_timestamp": lambda r: f"{_stamp(r)}:{r.randint(10, 59)}.{digits(r, 7)}Z ##[group]Run actions/checkout@v4 "
                              f"(took {r.randint(1, 90)}s)",
    "request_id": lambda r: f"x-request-id: {_uuid(r)}\nX-GitHub-Request-Id: {pick(r, HEX.upper(), 4)}:"
                            f"{pick(r, HEX.upper(), 4)}:{pick(r, HEX.upper(), 6)}:{pick(r, HEX.upper(), 6)}\n"
                            f"traceparent: 00-{_hex(r, 32)}-{_hex(r, 16)}-01",
    "cache_bust": lambda r: f"<script src=\"/static/js/main.{_hex(r, 8)}.chunk.js\"></script> <link href=\"/app.css?v="
                            f"{_hex(r, 10)}\" rel=\"stylesheet\">",
    "csrf_field_name": lambda r: r.choice((
        '<input type="hidden" name="csrfmiddlewaretoken" value="{{ csrf_token }}">',
        "X-CSRF-Token header missing on POST /api/session", "CSRF_COOKIE_NAME = 'csrftoken'",
        "authenticity_token param is required (ActionController::InvalidAuthenticityToken)",
        "app.use(csrf({ cookie: { key: '_csrf' } }))", "<meta name=\"csrf-param\" content=\"authenticity_token\">")),
    "placeholder": lambda r: r.choice(("DB_PASSWORD=********", "email: you@example.com", "API_KEY=<your-api-key>",
                                       "NPM_TOKEN=${{ secrets.NPM_TOKEN }}", "password: \"${DB_PASSWORD}\"",
                                       "token: $CI_JOB_TOKEN", "STRIPE_WEBHOOK_SECRET=whsec_xxxxxxxxxxxxxxxx",
                                       "Passwort: <bitte eintragen>", "phone: +1 (555) 010-XXXX")),
    "secret_ref": lambda r: r.choice((
        f"valueFrom:\n  secretKeyRef:\n    name: {r.choice(REPOS)}-db\n    key: password",
        f"arn:aws:secretsmanager:eu-west-1:{digits(r, 12)}:secret:prod/db-{pick(r, ALNUM, 6)}",
        f"vault kv get -field=password secret/{r.choice(REPOS)}/db", "password: ${{ secrets.DB_PASSWORD }}",
        "password_wo = ephemeral.aws_secretsmanager_secret_version.db.secret_string")),
    "masked": lambda r: r.choice(("AWS_SECRET_ACCESS_KEY: ***", f"card ending {digits(r, 4)} (**** **** **** "
                                  f"{digits(r, 4)})", f"glpat-****{pick(r, ALNUM, 4)}", f"sk-...{pick(r, ALNUM, 4)}",
                                  f"+44 **** ***{digits(r, 3)}", f"SSN ***-**-{digits(r, 4)}", "password=[REDACTED]")),
    "version": lambda r: f"node v{r.randint(18, 22)}.{r.randint(0, 20)}.{r.randint(0, 9)}, actions/setup-python@v5, "
                         f"go{r.randint(1, 1)}.{r.randint(20, 23)}.{r.randint(0, 9)}, image ubuntu-24.04 "
                         f"2026{r.randint(1, 12):02d}{r.randint(1, 28):02d}.{r.randint(1, 9)}.0",
    "lock_hash": lambda r: r.choice((
        f'"integrity": "sha512-{base64.b64encode(r.randbytes(64)).decode()}"',
        f"golang.org/x/net v0.{r.randint(20, 40)}.0 h1:{base64.b64encode(r.randbytes(32)).decode()}",
        f"python:3.12-slim@sha256:{_hex(r, 64)}", f'hash = "sha256:{_hex(r, 64)}"')),
    "service_number": lambda r: r.choice((f"Support (toll-free): 1-800-{r.randint(200, 999)}-{digits(r, 4)}",
                                          f"Freephone 0800 {digits(r, 3)} {digits(r, 4)} (Mon-Fri)",
                                          f"Service client : 0 800 {digits(r, 2)} {digits(r, 2)} {digits(r, 2)}",
                                          f"Kostenlose Hotline: 0800 {digits(r, 7)}",
                                          f"Toll free 1800-{digits(r, 3)}-{digits(r, 4)}")),
    "luhn_invalid": lambda r: f"build artifact number {_luhn_bad(r)} (nightly)",
    "order_number": lambda r: f"order_id=ORD-2026-{digits(r, 6)} invoice INV-{digits(r, 8)} PO {digits(r, 10)}",
    "tracking_number": lambda r: f"shipped: UPS {_ups(r)}, FedEx {digits(r, 12)}, DHL {digits(r, 10)}",
    "public_key": lambda r: _public_key(r),
    "aws_resource": lambda r: f"arn:aws:iam::{digits(r, 12)}:role/gha-deploy instance i-0{_hex(r, 16)} "
                              f"ami-0{_hex(r, 16)} sg-0{_hex(r, 16)}",
    "test_stats": lambda r: f"=== {r.randint(100, 4000)} passed, {r.randint(0, 9)} skipped, {r.randint(0, 3)} xfailed "
                            f"in {r.uniform(5, 900):.2f}s ===\nTOTAL {r.randint(1000, 90000)} {r.randint(10, 900)} "
                            f"{r.randint(60, 99)}%",
    "lint_position": lambda r: r.choice((f"src/app/settings.py:{r.randint(1, 400)}:{r.randint(1, 120)}: E501 Line too "
                                         f"long ({r.randint(121, 180)} > 120)",
                                         f"  {r.randint(1, 300)}:{r.randint(1, 80)}  error  'token' is assigned a "
                                         "value but never used  @typescript-eslint/no-unused-vars")),
    "doc_example": lambda r: r.choice(("aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                       "export OPENAI_API_KEY=\"sk-...\"", "curl -u username:password https://example.com",
                                       "GH_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")),
    "run_id": lambda r: f"https://github.com/{r.choice(ORGS)}/{r.choice(REPOS)}/actions/runs/{digits(r, 11)}/job/"
                        f"{digits(r, 11)} (attempt {r.randint(1, 3)}), Jenkins build #{r.randint(100, 9999)}",
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), every third inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                text = _json_text(rng, list(JSON_CARRIERS)[i // 3 % len(JSON_CARRIERS)], text, False, None)
            elif i % 3 == 1:
                text = TEXT_CARRIERS[list(TEXT_CARRIERS)[i % len(TEXT_CARRIERS)]](rng, text)
            yield sort, text
